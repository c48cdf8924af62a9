//! Black-box: answers the real service gives as the SDKs recorded them, over raw HTTP:
//! Get Table ACL of identifiers without a policy, `x-ms-version` newer than the server
//! knows (and `--strictApiVersion`), `Preference-Applied` on a Create Table conflict,
//! paged queries that end with their range, no `Keep-Alive` on a closing answer, and an
//! X.509 version 1 certificate served over HTTPS.

use crate::common::*;
use serde_json::{json, Value};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// The newest version the server knows (served for newer ones).
const NEWEST: &str = "2026-06-06";

fn assert_error(r: &Resp, status: u16, code: &str, message: &str) {
    assert_eq!(r.status, status, "{}", r.body);
    assert_eq!(r.header("x-ms-error-code").as_deref(), Some(code), "{}", r.body);
    let text = r.json()["odata.error"]["message"]["value"].as_str().unwrap_or_default().to_owned();
    assert!(text.starts_with(message), "{text:?} should start with {message:?}");
}

// ---------------------------------------------------------------------------------------
// Get Table ACL: an identifier without Start, Expiry or Permission has no <AccessPolicy>
// ---------------------------------------------------------------------------------------

/// The Python SDK's recording of the real service
/// (`test_set_table_acl_with_empty_signed_identifier`): the body it sent, and the
/// identifiers the service answered with.
#[tokio::test]
async fn an_identifier_without_a_policy_is_answered_without_access_policy() {
    let server = TestServer::start_with(&["--inMemoryPersistence"], &[]);
    let c = server.client();
    assert_eq!(c.create_table("aclEmpty").await.status, 201);
    let sent = "<?xml version='1.0' encoding='utf-8'?>\n<SignedIdentifiers>\
                <SignedIdentifier><Id>null</Id></SignedIdentifier>\
                <SignedIdentifier><Id>empty</Id><AccessPolicy /></SignedIdentifier>\
                <SignedIdentifier><Id>partial</Id><AccessPolicy><Permission>r</Permission></AccessPolicy></SignedIdentifier>\
                <SignedIdentifier><Id>full</Id><AccessPolicy><Start>2021-06-08T02:10:09Z</Start>\
                <Expiry>2021-06-08T02:10:09Z</Expiry><Permission>r</Permission></AccessPolicy></SignedIdentifier>\
                </SignedIdentifiers>";
    let r = c.send("PUT", "/aclEmpty?comp=acl", &[("Content-Type", "application/xml")], Some(sent)).await;
    assert_eq!(r.status, 204, "{}", r.body);
    let r = c.send("GET", "/aclEmpty?comp=acl", &[], None).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(r.header("content-type").unwrap_or_default().starts_with("application/xml"));
    let answered = "<SignedIdentifiers>\
                    <SignedIdentifier><Id>null</Id></SignedIdentifier>\
                    <SignedIdentifier><Id>empty</Id></SignedIdentifier>\
                    <SignedIdentifier><Id>partial</Id><AccessPolicy><Permission>r</Permission></AccessPolicy></SignedIdentifier>\
                    <SignedIdentifier><Id>full</Id><AccessPolicy><Start>2021-06-08T02:10:09.0000000Z</Start>\
                    <Expiry>2021-06-08T02:10:09.0000000Z</Expiry><Permission>r</Permission></AccessPolicy></SignedIdentifier>\
                    </SignedIdentifiers>";
    assert!(r.body.ends_with(answered), "{}", r.body);
}

// ---------------------------------------------------------------------------------------
// x-ms-version newer than the server knows
// ---------------------------------------------------------------------------------------

async fn list_with_version(c: &Client, version: &str) -> Resp {
    c.send("GET", "/Tables", &[("x-ms-version", version)], None).await
}

/// A well-formed newer version is served as the newest known one (and says so in
/// `x-ms-version`), logged once per version; malformed and too old versions are still
/// refused.
#[tokio::test]
async fn a_newer_version_is_served_as_the_newest_known() {
    let server = TestServer::start_with(&["--inMemoryPersistence"], &[]);
    let c = server.client();
    for _ in 0..3 {
        let r = list_with_version(&c, "2027-01-01").await;
        assert_eq!(r.status, 200, "{}", r.body);
        assert_eq!(r.header("x-ms-version").as_deref(), Some(NEWEST));
        assert!(r.json()["value"].is_array(), "{}", r.body);
    }
    let r =
        c.send("POST", "/Tables", &[("x-ms-version", "2099-12-31")], Some(r#"{"TableName":"newer"}"#)).await;
    assert_eq!(r.status, 201, "{}", r.body);
    // the logged line of the second version comes after every line of the first
    assert_eq!(server.log_lines_at_least("x-ms-version 2099-12-31", 1).len(), 1);
    assert_eq!(server.log_lines("x-ms-version 2027-01-01").len(), 1, "logged once per version");

    let bad_format = "The value for one of the HTTP headers is not in the correct format.";
    for bad in ["2027-1-01", "2027-01-01x", "latest", "2009-04-13", "1999-01-01"] {
        let r = list_with_version(&c, bad).await;
        assert_error(&r, 400, "InvalidHeaderValue", bad_format);
    }
    // the version a request asks for, when the server knows it, is served and echoed
    let r = list_with_version(&c, "2019-02-02").await;
    assert_eq!((r.status, r.header("x-ms-version").as_deref()), (200, Some("2019-02-02")));
}

/// `--strictApiVersion` (or `AZTABLE_STRICT_API_VERSION`) refuses newer versions as
/// Azurite does; `--skipApiVersionCheck` still serves anything, echoed as sent.
#[tokio::test]
async fn strict_api_version_refuses_newer_versions() {
    let strict = TestServer::start_with(&["--inMemoryPersistence", "--strictApiVersion"], &[]);
    let r = list_with_version(&strict.client(), "2027-01-01").await;
    assert_error(&r, 400, "InvalidHeaderValue", "The API version 2027-01-01 is not supported by aztable");
    assert!(r.json()["odata.error"]["message"]["value"]
        .as_str()
        .unwrap_or_default()
        .contains("--strictApiVersion"));
    assert_eq!(list_with_version(&strict.client(), NEWEST).await.status, 200);

    let by_env = TestServer::start_with(&["--inMemoryPersistence"], &[("AZTABLE_STRICT_API_VERSION", "1")]);
    let r = list_with_version(&by_env.client(), "2027-01-01").await;
    assert_error(&r, 400, "InvalidHeaderValue", "The API version 2027-01-01 is not supported by aztable");

    let skip = TestServer::start_with(
        &["--inMemoryPersistence", "--skipApiVersionCheck", "--strictApiVersion"],
        &[],
    );
    let r = list_with_version(&skip.client(), "2027-01-01").await;
    assert_eq!((r.status, r.header("x-ms-version").as_deref()), (200, Some("2027-01-01")));
}

#[test]
fn help_names_strict_api_version() {
    let (ok, out, _) = run_to_exit(&["--help".as_ref()]);
    assert!(ok);
    assert!(out.contains("--strictApiVersion") && out.contains("AZTABLE_STRICT_API_VERSION"), "{out}");
}

// ---------------------------------------------------------------------------------------
// Create Table conflict with Prefer
// ---------------------------------------------------------------------------------------

/// The Java SDK's recording of the real service (`createTableDuplicateNameImpl`): the 409
/// of a second Create Table with `Prefer: return-no-content` says `Preference-Applied`;
/// without `Prefer` it does not; other conflicts are unchanged.
#[tokio::test]
async fn a_create_table_conflict_says_which_preference_applied() {
    let server = TestServer::start_with(&["--inMemoryPersistence"], &[]);
    let c = server.client();
    let prefer = [("Prefer", "return-no-content")];
    let body = Some(r#"{"TableName":"dupPrefer"}"#);
    let r = c.send("POST", "/Tables", &prefer, body).await;
    assert_eq!(r.status, 204, "{}", r.body);
    assert_eq!(r.header("preference-applied").as_deref(), Some("return-no-content"));
    let r = c.send("POST", "/Tables", &prefer, body).await;
    assert_error(&r, 409, "TableAlreadyExists", "The table specified already exists.");
    assert_eq!(r.header("preference-applied").as_deref(), Some("return-no-content"));
    assert!(r.header("content-type").unwrap_or_default().starts_with("application/json"));

    let r = c.send("POST", "/Tables", &[], body).await;
    assert_error(&r, 409, "TableAlreadyExists", "The table specified already exists.");
    assert_eq!(r.header("preference-applied"), None);
    // a refused name is not a conflict: no Preference-Applied
    let r = c.send("POST", "/Tables", &prefer, Some(r#"{"TableName":"a"}"#)).await;
    r.assert_refused(400, ErrorCode::InvalidResourceName);
    assert_eq!(r.header("preference-applied"), None);

    // Insert Entity's conflict: as before
    let entity = json!({"PartitionKey": "p", "RowKey": "r"}).to_string();
    assert_eq!(c.send("POST", "/dupPrefer", &prefer, Some(&entity)).await.status, 204);
    let r = c.send("POST", "/dupPrefer", &prefer, Some(&entity)).await;
    assert_eq!(r.status, 409, "{}", r.body);
    assert_eq!(r.header("x-ms-error-code").as_deref(), Some("EntityAlreadyExists"));
    assert_eq!(r.header("preference-applied"), None);
}

// ---------------------------------------------------------------------------------------
// Paged queries end with their range
// ---------------------------------------------------------------------------------------

fn names(r: &Resp) -> Vec<String> {
    let v: Value = r.json();
    v["value"]
        .as_array()
        .map_or(Vec::new(), |a| a.iter().filter_map(|t| t["TableName"].as_str().map(str::to_owned)).collect())
}

fn encode(s: &str) -> String {
    percent_encoding::utf8_percent_encode(s, percent_encoding::NON_ALPHANUMERIC).to_string()
}

/// The Go SDK's recording of the real service (`TestQueryTable_storage`): over zzza0…zzza3
/// and zzzb4, `TableName ge 'zzza' and TableName lt 'zzzb'` two at a time ends with a full
/// page and no continuation.
#[tokio::test]
async fn a_filtered_table_listing_ends_without_a_continuation() {
    let server = TestServer::start_with(&["--inMemoryPersistence"], &[]);
    let c = server.client();
    for t in ["zzza0", "zzza1", "zzza2", "zzza3", "zzzb4"] {
        assert_eq!(c.create_table(t).await.status, 201);
    }
    let filter = encode("TableName ge 'zzza' and TableName lt 'zzzb'");
    let r = c.send("GET", &format!("/Tables?$filter={filter}"), &[], None).await;
    assert_eq!(
        (names(&r), r.header("x-ms-continuation-nexttablename")),
        (vec!["zzza0".into(), "zzza1".into(), "zzza2".into(), "zzza3".into()], None)
    );
    let r = c.send("GET", &format!("/Tables?$filter={filter}&$top=2"), &[], None).await;
    assert_eq!(names(&r), ["zzza0", "zzza1"]);
    let next = r.header("x-ms-continuation-nexttablename").expect("a continuation after the first page");
    let r = c
        .send("GET", &format!("/Tables?$filter={filter}&$top=2&NextTableName={}", encode(&next)), &[], None)
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(names(&r), ["zzza2", "zzza3"]);
    assert_eq!(r.header("x-ms-continuation-nexttablename"), None, "zzzb4 is past the filter");

    // unfiltered, zzzb4 is still to come
    let r = c.send("GET", &format!("/Tables?$top=4&NextTableName={}", encode(&next)), &[], None).await;
    assert_eq!(names(&r), ["zzza2", "zzza3", "zzzb4"]);
    let r = c.send("GET", &format!("/Tables?$top=2&NextTableName={}", encode(&next)), &[], None).await;
    assert_eq!(names(&r), ["zzza2", "zzza3"]);
    assert!(r.header("x-ms-continuation-nexttablename").is_some());
}

/// The Python SDK's recording of the real service (`test_query_entities_each_page`): six
/// rows in `pk`, four in partitions after it; `PartitionKey eq 'pk'` two at a time ends
/// with a full page and no continuation.
#[tokio::test]
async fn an_entity_query_ends_with_its_key_range() {
    let server = TestServer::start_with(&["--inMemoryPersistence"], &[]);
    let c = server.client();
    assert_eq!(c.create_table("pages").await.status, 201);
    for rk in ["10", "101", "1012", "10123", "101234", "1012345"] {
        assert_eq!(c.insert("pages", json!({"PartitionKey": "pk", "RowKey": rk})).await.status, 201);
    }
    for pk in ["pk6", "pk67", "pk678", "pk6789"] {
        assert_eq!(c.insert("pages", json!({"PartitionKey": pk, "RowKey": "r"})).await.status, 201);
    }
    let filter = encode("PartitionKey eq 'pk'");
    let mut query = format!("/pages()?$top=2&$filter={filter}");
    let mut pages = Vec::new();
    loop {
        let r = c.send("GET", &query, &[], None).await;
        assert_eq!(r.status, 200, "{}", r.body);
        let v: Value = r.json();
        let rows: Vec<String> = v["value"].as_array().map_or(Vec::new(), |a| {
            a.iter().filter_map(|e| e["RowKey"].as_str().map(str::to_owned)).collect()
        });
        pages.push(rows);
        let (pk, rk) =
            (r.header("x-ms-continuation-nextpartitionkey"), r.header("x-ms-continuation-nextrowkey"));
        let (Some(pk), Some(rk)) = (pk.clone(), rk.clone()) else {
            assert_eq!((pk, rk), (None, None), "both continuation headers or none");
            break;
        };
        assert!(pages.len() < 5, "{pages:?}");
        query = format!(
            "/pages()?$top=2&$filter={filter}&NextPartitionKey={}&NextRowKey={}",
            encode(&pk),
            encode(&rk)
        );
    }
    assert_eq!(pages, [vec!["10", "101"], vec!["1012", "10123"], vec!["101234", "1012345"]]);
}

// ---------------------------------------------------------------------------------------
// Keep-Alive only on a connection that stays open
// ---------------------------------------------------------------------------------------

/// Sends a raw request and reads its answer: the head and a body of its Content-Length
/// (the connection may stay open), lower-cased.
async fn raw_exchange(port: u16, request: &str) -> String {
    let mut s = tokio::net::TcpStream::connect(("127.0.0.1", port)).await.expect("connect");
    s.write_all(request.as_bytes()).await.expect("write");
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        let n = tokio::time::timeout(Duration::from_secs(10), s.read(&mut chunk))
            .await
            .expect("an answer")
            .expect("read");
        buf.extend_from_slice(&chunk[..n]);
        let text = String::from_utf8_lossy(&buf).to_ascii_lowercase();
        let Some(end) = text.find("\r\n\r\n") else {
            assert!(n > 0, "closed before the head: {text}");
            continue;
        };
        let len = text[..end]
            .lines()
            .find_map(|l| l.strip_prefix("content-length:").and_then(|v| v.trim().parse::<usize>().ok()))
            .unwrap_or(0);
        if n == 0 || buf.len() >= end + 4 + len {
            return text;
        }
    }
}

#[tokio::test]
async fn a_closing_answer_announces_no_keep_alive() {
    let server = TestServer::start_with(&["--inMemoryPersistence"], &[]);
    let port = server.port;
    let head = |extra: &str, version: &str| {
        format!(
            "GET /{ACCOUNT}/Tables {version}\r\nHost: 127.0.0.1:{port}\r\nx-ms-version: 2019-02-02\r\n{extra}\r\n"
        )
    };
    let closing = raw_exchange(port, &head("Connection: close\r\n", "HTTP/1.1")).await;
    assert!(closing.starts_with("http/1.1 401"), "{closing}");
    assert!(closing.contains("\r\nconnection: close\r\n"), "{closing}");
    assert!(!closing.contains("\r\nkeep-alive:"), "{closing}");
    let http10 = raw_exchange(port, &head("", "HTTP/1.0")).await;
    assert!(http10.contains(" 401 "), "{http10}");
    assert!(!http10.contains("\r\nkeep-alive:"), "{http10}");
    // a connection that stays open still announces its idle timeout
    let kept = raw_exchange(port, &head("", "HTTP/1.1")).await;
    assert!(kept.contains("\r\nkeep-alive: timeout=5\r\n"), "{kept}");
    let kept10 = raw_exchange(port, &head("Connection: keep-alive\r\n", "HTTP/1.0")).await;
    assert!(kept10.contains("\r\nkeep-alive: timeout=5\r\n"), "{kept10}");
    // the server closes by itself: a refused request whose large body it will not read
    let refused = raw_exchange(
        port,
        &format!(
            "POST /{ACCOUNT}/Tables HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nx-ms-version: 2019-02-02\r\n\
             Content-Type: application/json\r\nContent-Length: 10000000\r\n\r\n"
        ),
    )
    .await;
    assert!(refused.contains(" 401 ") && refused.contains("\r\nconnection: close\r\n"), "{refused}");
    assert!(!refused.contains("\r\nkeep-alive:"), "{refused}");
}

// ---------------------------------------------------------------------------------------
// HTTPS with an X.509 version 1 certificate
// ---------------------------------------------------------------------------------------

fn fixture(name: &str) -> String {
    format!("{}/tests/fixtures/tls/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// The DER of the one certificate in a PEM file.
fn pem_der(path: &str) -> Vec<u8> {
    use base64::Engine;
    let text = std::fs::read_to_string(path).expect("read PEM");
    let b64: String = text.lines().filter(|l| !l.starts_with("-----")).collect();
    base64::engine::general_purpose::STANDARD.decode(b64).expect("base64")
}

/// A version 1 certificate (the kind `openssl x509 -req` makes without extensions, and
/// Azurite's own test certificate) is served: the server starts and presents it.
#[tokio::test]
async fn a_version_1_certificate_is_served() {
    let (v1, key) = (fixture("cert-v1.pem"), fixture("key.pem"));
    let server = TestServer::start_with(&["--inMemoryPersistence", "--cert", &v1, "--key", &key], &[]);
    // webpki (reqwest's verifier) refuses version 1 certificates; OpenSSL's, .NET's and
    // Node's trust them: what matters here is what the server presents
    let http = reqwest::Client::builder().danger_accept_invalid_certs(true).tls_info(true).build().unwrap();
    let c = Client {
        http,
        endpoint: format!("https://127.0.0.1:{}/{ACCOUNT}", server.port),
        account: ACCOUNT.into(),
        key: KEY.into(),
    };
    let r = c.create_table("overTls").await;
    assert_eq!(r.status, 201, "{}", r.body);
    let resp =
        c.http.get(format!("https://127.0.0.1:{}/{ACCOUNT}/Tables", server.port)).send().await.unwrap();
    let info = resp.extensions().get::<reqwest::tls::TlsInfo>().expect("TLS info");
    assert_eq!(info.peer_certificate(), Some(pem_der(&v1).as_slice()));
}
