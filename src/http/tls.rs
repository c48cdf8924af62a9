//! HTTPS: a TLS listener for `axum::serve`, with the certificate and key of `--cert`
//! (PEM with `--key`, or PFX with `--pwd`).
//!
//! A background task accepts TCP connections and runs each TLS handshake in its own task
//! (bounded by [`HANDSHAKE_TIMEOUT`]), so a client that connects and stalls cannot hold up
//! the others; finished handshakes are handed to `axum::serve` through a channel. The task
//! stops when the listener is dropped (at shutdown).

use crate::config::TlsSource;
use axum::serve::Listener;
use p12_keystore::{KeyStore, KeyStoreEntry, Pkcs12ImportPolicy};
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::rustls::{self, ServerConfig};
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
    let mut config = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .map_err(|e| certificate_error(cert_file, &e))?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(config))
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
    let text = e.to_string();
    if text.contains("UnsupportedCertVersion") {
        return format!(
            "{}: the certificate is X.509 version 1, which TLS libraries refuse for a server. \
             Make a version 3 certificate: `openssl req -x509 -newkey rsa:2048 -nodes -keyout key.pem \
             -out cert.pem -days 365 -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1` \
             (or mkcert 127.0.0.1), then --cert cert.pem --key key.pem.",
            file.display()
        );
    }
    format!("{}: the certificate and the private key do not fit together: {text}", file.display())
}

/// A listener yielding TLS connections that completed their handshake.
pub struct TlsListener {
    ready: mpsc::Receiver<(TlsStream<TcpStream>, SocketAddr)>,
    local: SocketAddr,
    acceptor_task: tokio::task::JoinHandle<()>,
}

impl TlsListener {
    pub fn new(tcp: TcpListener, config: Arc<ServerConfig>) -> std::io::Result<TlsListener> {
        let local = tcp.local_addr()?;
        let acceptor = TlsAcceptor::from(config);
        let (tx, ready) = mpsc::channel(64);
        let acceptor_task = tokio::spawn(async move {
            loop {
                let (stream, peer) = match tcp.accept().await {
                    Ok(accepted) => accepted,
                    Err(e) => {
                        tracing::warn!(error = %e, "accept failed");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                };
                let (acceptor, tx) = (acceptor.clone(), tx.clone());
                tokio::spawn(async move {
                    match tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(stream)).await {
                        Ok(Ok(tls)) => {
                            let _ = tx.send((tls, peer)).await;
                        }
                        Ok(Err(e)) => tracing::debug!(%peer, error = %e, "TLS handshake failed"),
                        Err(_) => tracing::debug!(%peer, "TLS handshake timed out"),
                    }
                });
            }
        });
        Ok(TlsListener { ready, local, acceptor_task })
    }
}

impl Drop for TlsListener {
    fn drop(&mut self) {
        self.acceptor_task.abort();
    }
}

impl Listener for TlsListener {
    type Io = TlsStream<TcpStream>;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        match self.ready.recv().await {
            Some(conn) => conn,
            // The acceptor task never ends on its own (it only stops when this is dropped).
            None => std::future::pending().await,
        }
    }

    fn local_addr(&self) -> std::io::Result<Self::Addr> {
        Ok(self.local)
    }
}
