//! Black-box: HTTPS (`--cert`/`--key`) and OAuth bearer tokens (`--oauth basic`) against the
//! real server, with the test certificate in `tests/fixtures/tls` (self-signed for
//! 127.0.0.1, for tests only). Tokens are unsigned JWTs: basic mode checks structure,
//! issuer, audience and lifetime only.

use crate::common::*;
use serde_json::{json, Value};

fn fixture(name: &str) -> String {
    format!("{}/tests/fixtures/tls/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn start(oauth: bool) -> TestServer {
    let (cert, key) = (fixture("cert.pem"), fixture("key.pem"));
    let mut args = vec!["--inMemoryPersistence", "--cert", &cert, "--key", &key];
    if oauth {
        args.extend(["--oauth", "basic"]);
    }
    TestServer::start_with(&args, &[])
}

fn https_client() -> reqwest::Client {
    let ca = reqwest::Certificate::from_pem(&std::fs::read(fixture("cert.pem")).unwrap()).unwrap();
    reqwest::Client::builder().add_root_certificate(ca).build().unwrap()
}

fn jwt(claims: Value) -> String {
    use base64::Engine;
    let b64 = |s: &str| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(s);
    format!("{}.{}.bm90LXZlcmlmaWVk", b64(r#"{"typ":"JWT","alg":"RS256"}"#), b64(&claims.to_string()))
}

fn token(aud: &str, iss: &str, from_now: (i64, i64)) -> String {
    let now = chrono::Utc::now().timestamp();
    jwt(
        json!({"aud": aud, "iss": iss, "iat": now + from_now.0, "nbf": now + from_now.0, "exp": now + from_now.1}),
    )
}

const ISS: &str = "https://sts.windows.net/72f988bf-86f1-41af-91ab-2d7cd011db47/";
const AUD: &str = "https://storage.azure.com";

async fn send(
    c: &reqwest::Client,
    port: u16,
    method: &str,
    path: &str,
    bearer: Option<&str>,
    body: Option<&str>,
) -> (u16, String) {
    let url = format!("https://127.0.0.1:{port}/{ACCOUNT}{path}");
    let mut req = c
        .request(reqwest::Method::from_bytes(method.as_bytes()).unwrap(), url)
        .header("Accept", "application/json;odata=minimalmetadata")
        .header("x-ms-version", "2021-12-02");
    if let Some(t) = bearer {
        req = req.header("Authorization", format!("Bearer {t}"));
    }
    if let Some(b) = body {
        req = req.header("Content-Type", "application/json").body(b.to_owned());
    }
    let resp = req.send().await.expect("request failed");
    (resp.status().as_u16(), resp.text().await.unwrap())
}

fn code(body: &str) -> String {
    serde_json::from_str::<Value>(body)
        .ok()
        .and_then(|v| v["odata.error"]["code"].as_str().map(str::to_owned))
        .unwrap_or_default()
}

#[tokio::test]
async fn bearer_tokens_over_https() {
    let server = start(true);
    let (c, port) = (https_client(), server.port);
    let good = token(AUD, ISS, (-60, 3600));

    let (s, body) = send(&c, port, "POST", "/Tables", Some(&good), Some(r#"{"TableName":"oauthT"}"#)).await;
    assert_eq!(s, 201, "{body}");
    assert!(body.contains("https://127.0.0.1:"), "URLs in answers say https: {body}");
    let ins = r#"{"PartitionKey":"p","RowKey":"r","v":1}"#;
    assert_eq!(send(&c, port, "POST", "/oauthT", Some(&good), Some(ins)).await.0, 201);
    let (s, body) = send(&c, port, "GET", "/oauthT(PartitionKey='p',RowKey='r')", Some(&good), None).await;
    assert_eq!(s, 200, "{body}");
    // The account's own Table audience works; another account's does not.
    let own = token(&format!("https://{ACCOUNT}.table.core.windows.net/"), ISS, (-60, 60));
    assert_eq!(send(&c, port, "GET", "/Tables", Some(&own), None).await.0, 200);

    for (bad, what) in [
        (token(AUD, ISS, (-3600, -60)), "expired"),
        (token(AUD, ISS, (600, 3600)), "not yet valid"),
        (token(AUD, "https://login.example.com/x/", (-60, 60)), "foreign issuer"),
        (token("https://other.table.core.windows.net", ISS, (-60, 60)), "another account"),
        (token("https://vault.azure.net", ISS, (-60, 60)), "not storage"),
        ("not-a-jwt".to_owned(), "not a JWT"),
    ] {
        let (s, body) = send(&c, port, "GET", "/Tables", Some(&bad), None).await;
        assert_eq!((s, code(&body).as_str()), (403, "AuthenticationFailed"), "{what}: {body}");
    }
    // Table ACLs are not available with OAuth (the service answers 404 ResourceNotFound).
    let (s, body) = send(&c, port, "GET", "/oauthT?comp=acl", Some(&good), None).await;
    assert_eq!((s, code(&body).as_str()), (404, "ResourceNotFound"), "{body}");
    // No credential at all is still refused.
    let (s, body) = send(&c, port, "GET", "/Tables", None, None).await;
    assert_eq!((s, code(&body).as_str()), (401, "NoAuthenticationInformation"), "{body}");
}

#[tokio::test]
async fn https_without_oauth_serves_shared_key_and_refuses_bearer() {
    let server = start(false);
    let (c, port) = (https_client(), server.port);
    // SharedKey over TLS (the common signer targets http://; sign by hand).
    let date = now_rfc1123();
    let sts = format!("GET\n\n\n{date}\n/{ACCOUNT}/{ACCOUNT}/Tables");
    let auth = format!("SharedKey {ACCOUNT}:{}", sign(KEY, &sts));
    let resp = c
        .get(format!("https://127.0.0.1:{port}/{ACCOUNT}/Tables"))
        .header("x-ms-date", date)
        .header("Authorization", auth)
        .header("Accept", "application/json;odata=nometadata")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 200);
    let (s, body) = send(&c, port, "GET", "/Tables", Some(&token(AUD, ISS, (-60, 60))), None).await;
    assert_eq!(
        (s, code(&body).as_str()),
        (401, "InvalidAuthenticationInfo"),
        "bearer without --oauth: {body}"
    );
    // Plain HTTP on the TLS port fails (no silent downgrade).
    let plain = reqwest::Client::new().get(format!("http://127.0.0.1:{port}/{ACCOUNT}/Tables")).send().await;
    assert!(plain.is_err() || plain.is_ok_and(|r| !r.status().is_success()));
}

#[test]
fn oauth_without_https_does_not_start() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_aztable"))
        .args(["--inMemoryPersistence", "--tablePort", "0", "--oauth", "basic"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--oauth needs HTTPS"), "{out:?}");
}

/// `--cert file.pfx --pwd …` serves HTTPS with the PFX's certificate, for the encryption
/// of current OpenSSL and the legacy one alike.
#[tokio::test]
async fn https_with_a_pfx_certificate_and_its_password() {
    for pfx in ["cert.pfx", "cert-legacy.pfx"] {
        let file = fixture(pfx);
        let server =
            TestServer::start_with(&["--inMemoryPersistence", "--cert", &file, "--pwd", "aztable"], &[]);
        let c = https_client();
        let token = token(AUD, ISS, (-60, 3600));
        let (status, body) = send(&c, server.port, "GET", "/Tables", Some(&token), None).await;
        // the handshake worked and the request reached the service (no --oauth: refused there)
        assert_eq!(status, 401, "{pfx}: {body}");
        let code = serde_json::from_str::<serde_json::Value>(&body).expect("a JSON error")["odata.error"]
            ["code"]
            .clone();
        assert_eq!(code, ErrorCode::InvalidAuthenticationInfo.as_str(), "{pfx}: {body}");
    }
}

/// What the server prints and exits with when it cannot use the certificate it is given.
fn refused_start(args: &[&str]) -> String {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_aztable"))
        .args(["--tableHost", "127.0.0.1", "--tablePort", "0", "--inMemoryPersistence"])
        .args(args)
        .output()
        .expect("run aztable");
    assert!(!out.status.success(), "{args:?} started");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A certificate the server cannot use stops it at start with a message that names the
/// cause and what to do: a key that is not the certificate's (version 3 or 1), a wrong
/// PFX password, a PFX given with --key. (A version 1 certificate with its key is
/// served: tests/it/wire_misc.rs.)
#[test]
fn unusable_certificates_are_refused_with_the_cause_and_a_remedy() {
    let (v1, key, pfx) = (fixture("cert-v1.pem"), fixture("key.pem"), fixture("cert.pfx"));
    let (cert, other) = (fixture("cert.pem"), fixture("key-other.pem"));
    for c in [&cert, &v1] {
        let err = refused_start(&["--cert", c, "--key", &other]);
        assert!(err.contains("do not fit together") && err.contains("rustls"), "{err}");
    }
    let err = refused_start(&["--cert", &pfx, "--pwd", "wrong"]);
    assert!(err.contains("check --pwd"), "{err}");
    let err = refused_start(&["--cert", &pfx, "--key", &key]);
    assert!(err.contains("give --pwd"), "{err}");
}
