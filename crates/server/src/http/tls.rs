//! HTTPS: the certificate and key of `--cert` (PEM with `--key`, or PFX with `--pwd`),
//! and the handshake of each accepted connection.
//!
//! The chain and key are handed to rustls as they are (a [`ResolvesServerCert`] that
//! always answers with them) after checking that the key is the certificate's. That
//! check parses the certificate with rustls (webpki), which refuses an X.509 version 1
//! certificate, the kind `openssl x509 -req` makes without extensions and Azurite's own
//! test certificate is; such a certificate is parsed with `x509-parser` instead. rustls
//! itself checks a certificate's version only when it verifies a peer's, so it serves a
//! version 1 certificate, and a client that trusts it (OpenSSL's, .NET's, Node's do;
//! webpki-based ones refuse it) connects.
//!
//! Each handshake runs in its connection's own task (see `server.rs`), within
//! [`HANDSHAKE_TIMEOUT`] and holding one of the `--maxConnections` places, so a client
//! that connects and stalls neither holds up the others nor goes uncounted.

use crate::config::TlsSource;
use p12_keystore::{KeyStore, KeyStoreEntry, Pkcs12ImportPolicy};
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpStream;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::rustls::server::{ClientHello, ResolvesServerCert};
use tokio_rustls::rustls::sign::CertifiedKey;
use tokio_rustls::rustls::{self, InconsistentKeys, ServerConfig};
use tokio_rustls::server::TlsStream;
use tokio_rustls::TlsAcceptor;

/// Longest a client may take to complete the TLS handshake.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// Loads the certificate chain and private key of `source` into a server configuration
/// (TLS 1.2 and 1.3, HTTP/1.1). Errors name the file and what to do.
pub fn load_config(source: &TlsSource) -> Result<Arc<ServerConfig>, String> {
    let (certs, key) = match source {
        TlsSource::Pem { cert, key } => load_pem(cert, key)?,
        TlsSource::Pfx { file, password } => load_pfx(file, password)?,
    };
    let cert_file = match source {
        TlsSource::Pem { cert, .. } => cert,
        TlsSource::Pfx { file, .. } => file,
    };
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let signing_key =
        provider.key_provider.load_private_key(key).map_err(|e| certificate_error(cert_file, &e))?;
    let certified = CertifiedKey::new(certs, signing_key);
    check_key_fits(&certified).map_err(|e| certificate_error(cert_file, &e))?;
    let mut config = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_no_client_auth()
        .with_cert_resolver(Arc::new(OneCertificate(Arc::new(certified))));
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

/// The certificate chain and key served on every connection.
#[derive(Debug)]
struct OneCertificate(Arc<CertifiedKey>);

impl ResolvesServerCert for OneCertificate {
    fn resolve(&self, _hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        Some(Arc::clone(&self.0))
    }
}

/// Checks that the private key is the end-entity certificate's, as rustls's
/// `with_single_cert` does (a key whose public half rustls cannot tell passes, as
/// there), with `x509-parser` for a version 1 certificate, which rustls cannot parse.
fn check_key_fits(certified: &CertifiedKey) -> Result<(), rustls::Error> {
    match certified.keys_match() {
        Ok(()) | Err(rustls::Error::InconsistentKeys(InconsistentKeys::Unknown)) => Ok(()),
        Err(e) if e.to_string().contains("UnsupportedCertVersion") => {
            let Some(key_spki) = certified.key.public_key() else { return Ok(()) };
            let der = certified.end_entity_cert()?;
            let (_, cert) = x509_parser::parse_x509_certificate(der.as_ref()).map_err(|_| e.clone())?;
            if cert.version() != x509_parser::x509::X509Version::V1 {
                return Err(e);
            }
            match cert.public_key().raw == key_spki.as_ref() {
                true => Ok(()),
                false => Err(InconsistentKeys::KeyMismatch.into()),
            }
        }
        Err(e) => Err(e),
    }
}

type CertAndKey = (Vec<CertificateDer<'static>>, PrivateKeyDer<'static>);

fn read(p: &Path) -> Result<Vec<u8>, String> {
    std::fs::read(p).map_err(|e| format!("cannot read {}: {e}", p.display()))
}

/// A PEM certificate chain and a PEM private key.
fn load_pem(cert: &Path, key: &Path) -> Result<CertAndKey, String> {
    let cert_bytes = read(cert)?;
    let certs: Vec<CertificateDer<'static>> = rustls_pemfile::certs(&mut cert_bytes.as_slice())
        .collect::<Result<_, _>>()
        .map_err(|e| format!("{}: not a PEM certificate chain: {e}", cert.display()))?;
    if certs.is_empty() {
        let pfx = if cert_bytes.first() == Some(&0x30) {
            " (it looks like a PFX file: give --pwd, not --key)"
        } else {
            ""
        };
        return Err(format!("{}: no PEM certificate found{pfx}", cert.display()));
    }
    let key: PrivateKeyDer<'static> = rustls_pemfile::private_key(&mut read(key)?.as_slice())
        .map_err(|e| format!("{}: not a PEM private key: {e}", key.display()))?
        .ok_or_else(|| format!("{}: no private key found", key.display()))?;
    Ok((certs, key))
}

/// The first private key of a PFX (PKCS #12) file, with its certificate chain; modern
/// (AES, PBKDF2) and legacy (3DES, RC2) encryption alike.
fn load_pfx(file: &Path, password: &str) -> Result<CertAndKey, String> {
    let keystore = KeyStore::from_pkcs12(&read(file)?, password, Pkcs12ImportPolicy::Relaxed)
        .map_err(|e| format!("{}: not a PFX file this password opens ({e}); check --pwd", file.display()))?;
    let chain = keystore.entries().find_map(|(_, entry)| match entry {
        KeyStoreEntry::PrivateKeyChain(chain) if !chain.certs().is_empty() => Some(chain),
        _ => None,
    });
    let Some(chain) = chain else {
        return Err(format!("{}: the PFX file holds no private key with its certificate", file.display()));
    };
    let certs = chain.certs().iter().map(|c| CertificateDer::from(c.as_der().to_vec())).collect();
    let key = PrivateKeyDer::Pkcs8(chain.key().as_der().to_vec().into());
    Ok((certs, key))
}

/// Explains why a certificate was refused, and what to do about it.
fn certificate_error(file: &Path, e: &rustls::Error) -> String {
    format!("{}: the certificate and the private key do not fit together (rustls: {e})", file.display())
}

/// The TLS side of a new connection: plain HTTP is answered (see [`refuse_plain_http`]);
/// otherwise the handshake. Both within [`HANDSHAKE_TIMEOUT`] in all; `None` when the
/// connection ends here (answered, failed or timed out; logged at debug level).
pub(super) async fn handshake(
    acceptor: &TlsAcceptor,
    stream: TcpStream,
    peer: SocketAddr,
) -> Option<TlsStream<TcpStream>> {
    let shake = async {
        let stream = refuse_plain_http(stream, peer).await?;
        acceptor
            .accept(stream)
            .await
            .inspect_err(|e| tracing::debug!(%peer, error = %e, "TLS handshake failed"))
            .ok()
    };
    let shaken = tokio::time::timeout(HANDSHAKE_TIMEOUT, shake).await;
    shaken.unwrap_or_else(|_| {
        tracing::debug!(%peer, "TLS handshake timed out");
        None
    })
}

/// The answer to plain HTTP on the HTTPS port.
const PLAIN_HTTP_ANSWER: &[u8] = b"HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain\r\n\
Connection: close\r\nContent-Length: 63\r\n\r\nThis port serves HTTPS (--cert): use https:// in the endpoint.\n";

/// Looks at a new connection's first bytes: a TLS handshake goes on to the handshake;
/// plain HTTP (a client given `http://` for an HTTPS server) is answered 400 in plain
/// HTTP saying so, and logged in one line, instead of failing as a handshake error that
/// only the debug log would show. (Bounded by the caller's [`HANDSHAKE_TIMEOUT`].)
async fn refuse_plain_http(stream: TcpStream, peer: SocketAddr) -> Option<TcpStream> {
    // every HTTP method starts with three capital letters; a TLS record with 0x16
    let mut first = [0u8; 3];
    let Ok(n) = stream.peek(&mut first).await else { return Some(stream) };
    if n == 0 || !first[..n].iter().all(u8::is_ascii_uppercase) {
        return Some(stream);
    }
    tracing::warn!(%peer, "plain HTTP on the HTTPS port: answered 400; the client should use https://");
    let mut stream = stream;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    // the request head is read (and dropped) first, so closing does not reset the answer
    let mut scratch = [0u8; 4096];
    let _ = stream.read(&mut scratch).await;
    let _ = stream.write_all(PLAIN_HTTP_ANSWER).await;
    let _ = stream.shutdown().await;
    None
}
