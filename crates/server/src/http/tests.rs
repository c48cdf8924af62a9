//! Tests with no socket: [`send`] hands a request to `dispatch` as the connection's
//! service does, over the in-memory store, for headers, negotiation and error bodies.

use super::message::{Body, Response};
use super::*;
use aztable_store::mem::MemStore;
use base64::Engine;
use hmac::{Hmac, Mac};

const KEY: &str = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

/// The server's state, as the connection's service holds it.
pub(super) type App = Arc<AppState>;

/// Serves one request as a connection does (no client address).
pub(super) async fn send(app: &App, req: http::Request<Body>) -> Response {
    dispatch::dispatch(app, None, req).await
}

pub(super) fn app() -> App {
    app_with(HttpOptions::default())
}

pub(super) fn app_with(options: HttpOptions) -> App {
    Arc::new(AppState {
        service: TableService::new(Arc::new(MemStore::new())),
        accounts: Accounts::with_dev_account(),
        options,
    })
}

/// `Base64(HMAC-SHA256(dev key, sts))`: a SharedKey(Lite) or SAS signature.
pub(super) fn sign(sts: &str) -> String {
    let key = base64::engine::general_purpose::STANDARD.decode(KEY).unwrap();
    let mut mac = Hmac::<sha2::Sha256>::new_from_slice(&key).unwrap();
    mac.update(sts.as_bytes());
    base64::engine::general_purpose::STANDARD.encode(mac.finalize().into_bytes())
}

/// A SharedKeyLite-signed host-style request (`devstoreaccount1.table.localhost`).
fn signed_host_style(path: &str) -> http::Request<Body> {
    let date = chrono::Utc::now().format("%a, %d %b %Y %H:%M:%S GMT").to_string();
    let sig = sign(&format!("{date}\n/devstoreaccount1{path}"));
    http::Request::get(path)
        .header("host", "devstoreaccount1.table.localhost:10002")
        .header("x-ms-date", date)
        .header("authorization", format!("SharedKeyLite devstoreaccount1:{sig}"))
        .body(Body::empty())
        .unwrap()
}

/// Builds a SharedKeyLite-signed request (path-style URL).
pub(super) fn signed(method: &str, path: &str, headers: &[(&str, &str)], body: &str) -> http::Request<Body> {
    signed_at("/devstoreaccount1", method, path, headers, body)
}

/// [`signed`] under another path prefix (e.g. `/devstoreaccount1-secondary`).
pub(super) fn signed_at(
    prefix: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> http::Request<Body> {
    let date = chrono::Utc::now().format("%a, %d %b %Y %H:%M:%S GMT").to_string();
    let uri: http::Uri = format!("{prefix}{path}").parse().unwrap();
    let comp = uri.query().and_then(|q| q.split('&').find_map(|kv| kv.strip_prefix("comp=")));
    let comp = comp.map(|c| format!("?comp={c}")).unwrap_or_default();
    let sig = sign(&format!("{date}\n/devstoreaccount1{}{comp}", uri.path()));
    let mut b = http::Request::builder()
        .method(method)
        .uri(uri)
        .header("host", "127.0.0.1:10002")
        .header("x-ms-date", date)
        .header("authorization", format!("SharedKeyLite devstoreaccount1:{sig}"));
    for (k, v) in headers {
        b = b.header(*k, *v);
    }
    b.body(Body::from(body.to_owned())).unwrap()
}

pub(super) async fn call(app: &App, req: http::Request<Body>) -> (u16, http::HeaderMap, serde_json::Value) {
    let resp = send(app, req).await;
    let status = resp.status().as_u16();
    let headers = resp.headers().clone();
    let bytes = resp.into_body().collect_bytes().await.unwrap();
    let json =
        if bytes.is_empty() { serde_json::Value::Null } else { serde_json::from_slice(&bytes).unwrap() };
    (status, headers, json)
}

#[tokio::test]
async fn error_body_shape_and_common_headers() {
    let app = app();
    let req = signed("GET", "/nosuch()", &[("x-ms-client-request-id", "abc-123")], "");
    let (status, h, body) = call(&app, req).await;
    assert_eq!(status, 404);
    assert_eq!(body["odata.error"]["code"], "TableNotFound");
    assert_eq!(body["odata.error"]["message"]["lang"], "en-US");
    let msg = body["odata.error"]["message"]["value"].as_str().unwrap();
    let request_id = h["x-ms-request-id"].to_str().unwrap();
    assert!(msg.contains(&format!("RequestId:{request_id}")), "{msg}");
    assert!(msg.contains("\nTime:"));
    assert_eq!(h["x-ms-client-request-id"], "abc-123");
    assert_eq!(h["x-ms-error-code"], "TableNotFound");
    // (Date: hyper writes the host clock's into answers without one; only a moved clock
    // sets it here, and no unit test moves it)
    assert!(!h.contains_key("date"));
    assert!(h["content-type"].to_str().unwrap().starts_with("application/json"));
}

#[tokio::test]
async fn unauthenticated_requests_are_refused_but_preflight_is_anonymous() {
    let app = app();
    let req = http::Request::get("/devstoreaccount1/Tables").body(Body::empty()).unwrap();
    let (status, _, body) = call(&app, req).await;
    assert_eq!(status, 401);
    assert_eq!(body["odata.error"]["code"], "NoAuthenticationInformation");
    let req = http::Request::builder()
        .method("OPTIONS")
        .uri("/devstoreaccount1/Tables")
        .header("origin", "http://example.com")
        .header("access-control-request-method", "GET")
        .body(Body::empty())
        .unwrap();
    let (status, _, body) = call(&app, req).await;
    assert_eq!(status, 403);
    assert_eq!(body["odata.error"]["code"], "CorsPreflightFailure");
}

#[tokio::test]
async fn insert_prefer_and_point_query() {
    let app = app();
    let (s, _, _) = call(&app, signed("POST", "/Tables", &[], r#"{"TableName":"tbl1"}"#)).await;
    assert_eq!(s, 201);
    let body = r#"{"PartitionKey":"a","RowKey":"b","V":1}"#;
    let req = signed("POST", "/tbl1", &[("prefer", "return-no-content")], body);
    let (s, h, _) = call(&app, req).await;
    assert_eq!(s, 204);
    assert_eq!(h["preference-applied"], "return-no-content");
    let etag = h["etag"].to_str().unwrap().to_owned();
    let (s, h, body) = call(&app, signed("GET", "/tbl1(PartitionKey='a',RowKey='b')", &[], "")).await;
    assert_eq!(s, 200);
    assert_eq!(h["etag"].to_str().unwrap(), etag);
    assert_eq!(body["V"], 1);
    assert!(body["odata.metadata"]
        .as_str()
        .unwrap()
        .starts_with("http://127.0.0.1:10002/devstoreaccount1/$metadata#tbl1"));
}

#[tokio::test]
async fn batch_with_bad_content_type_is_refused_before_anything_runs() {
    let app = app();
    let (s, _, body) =
        call(&app, signed("POST", "/$batch", &[("content-type", "application/json")], "{}")).await;
    assert_eq!(s, 400, "{body}");
    assert_eq!(body["odata.error"]["code"], "InvalidInput");
}

#[tokio::test]
async fn host_style_urls_unless_disabled() {
    let (s, _, body) = call(&app(), signed_host_style("/Tables")).await;
    assert_eq!(s, 200, "{body}");
    assert!(body["odata.metadata"]
        .as_str()
        .unwrap()
        .starts_with("http://devstoreaccount1.table.localhost:10002/$metadata"));
    let opts = HttpOptions { disable_product_style_url: true, ..HttpOptions::default() };
    // with product-style URLs off, the first path segment ("Tables") is taken as the
    // account, and nothing is left to address
    let (s, _, body) = call(&app_with(opts), signed_host_style("/Tables")).await;
    assert_eq!(s, 400, "{body}");
    assert_eq!(body["odata.error"]["code"], "InvalidUri");
}

#[tokio::test]
async fn api_version_check_can_be_strict_or_skipped() {
    use super::ctx::{VersionCheck, LATEST_VERSION};
    let req = || signed("GET", "/Tables", &[("x-ms-version", "2099-01-01")], "");
    let (s, h, _) = call(&app(), req()).await;
    assert_eq!(s, 200, "a newer version is served as the newest known");
    assert_eq!(h["x-ms-version"], LATEST_VERSION);
    let opts = HttpOptions { version_check: VersionCheck::Strict, ..HttpOptions::default() };
    let (s, _, body) = call(&app_with(opts), req()).await;
    assert_eq!(s, 400);
    assert_eq!(body["odata.error"]["code"], "InvalidHeaderValue");
    let opts = HttpOptions { version_check: VersionCheck::Skip, ..HttpOptions::default() };
    let (s, h, _) = call(&app_with(opts), req()).await;
    assert_eq!(s, 200);
    assert_eq!(h["x-ms-version"], "2099-01-01");
}

/// A store that works until `failing` is set, then fails every write, read and scan
/// with an engine error whose text must never reach a client.
struct FailingStore {
    inner: MemStore,
    failing: std::sync::atomic::AtomicBool,
}

const ENGINE_TEXT: &str = "IO error: /secret/path/000042.log: No space left on device";

impl FailingStore {
    fn check(&self) -> Result<(), aztable_store::StoreError> {
        match self.failing.load(std::sync::atomic::Ordering::Relaxed) {
            true => Err(aztable_store::StoreError::Engine(ENGINE_TEXT.into())),
            false => Ok(()),
        }
    }
}

impl aztable_store::Store for FailingStore {
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, aztable_store::StoreError> {
        self.check()?;
        self.inner.get(key)
    }
    fn write(&self, batch: aztable_store::WriteBatch) -> Result<(), aztable_store::StoreError> {
        self.check()?;
        self.inner.write(batch)
    }
    fn scan<'a>(
        &'a self,
        start: &[u8],
        end: &[u8],
    ) -> Box<dyn Iterator<Item = Result<aztable_store::KvPair, aztable_store::StoreError>> + 'a> {
        match self.check() {
            Ok(()) => self.inner.scan(start, end),
            Err(e) => Box::new(std::iter::once(Err(e))),
        }
    }
    fn flush(&self) -> Result<(), aztable_store::StoreError> {
        self.inner.flush()
    }
}

/// When the store fails, every kind of request (write, point read, query, batch) answers
/// 500 `InternalError` in the usual error shape, and the engine's text stays in the log.
#[tokio::test]
async fn a_failing_store_is_internal_error_without_engine_text() {
    let store = Arc::new(FailingStore { inner: MemStore::new(), failing: false.into() });
    let app = Arc::new(AppState {
        service: TableService::new(store.clone()),
        accounts: Accounts::with_dev_account(),
        options: HttpOptions::default(),
    });
    let json = [("content-type", "application/json")];
    let (status, _, _) = call(&app, signed("POST", "/Tables", &json, r#"{"TableName":"tfail"}"#)).await;
    assert_eq!(status, 201);
    let (status, _, _) =
        call(&app, signed("POST", "/tfail", &json, r#"{"PartitionKey":"p","RowKey":"cached"}"#)).await;
    assert_eq!(status, 201);
    store.failing.store(true, std::sync::atomic::Ordering::Relaxed);

    let batch_ct = "multipart/mixed; boundary=batch_1";
    let batch = "--batch_1\r\nContent-Type: multipart/mixed; boundary=cs_1\r\n\r\n--cs_1\r\n\
                 Content-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n\
                 POST http://127.0.0.1:10002/devstoreaccount1/tfail HTTP/1.1\r\nContent-Type: application/json\r\n\r\n\
                 {\"PartitionKey\":\"p\",\"RowKey\":\"b\"}\r\n--cs_1--\r\n--batch_1--\r\n";
    let requests = [
        signed("POST", "/tfail", &json, r#"{"PartitionKey":"p","RowKey":"r"}"#),
        signed("GET", "/tfail(PartitionKey='p',RowKey='r')", &[], ""),
        signed("GET", "/tfail()", &[], ""),
        signed("GET", "/Tables", &[], ""),
        signed("DELETE", "/Tables('tfail')", &[], ""),
    ];
    for req in requests {
        let what = format!("{} {}", req.method(), req.uri());
        let (status, h, body) = call(&app, req).await;
        assert_eq!(status, 500, "{what}: {body}");
        assert_eq!(body["odata.error"]["code"], "InternalError", "{what}");
        assert_eq!(h["x-ms-error-code"], "InternalError", "{what}");
        assert!(
            !body.to_string().contains("secret") && !body.to_string().contains("IO error"),
            "{what}: {body}"
        );
    }
    let resp = send(&app, signed("POST", "/$batch", &[("content-type", batch_ct)], batch)).await;
    let status = resp.status().as_u16();
    let text = String::from_utf8(resp.into_body().collect_bytes().await.unwrap().to_vec()).unwrap();
    // a batch whose change set fails answers 202 with the failing operation's part
    assert_eq!(status, 202, "{text}");
    assert!(text.contains("HTTP/1.1 500") && text.contains("\"InternalError\""), "{text}");
    assert!(!text.contains("secret") && !text.contains("IO error"), "{text}");
}

#[tokio::test]
async fn a_panicking_handler_answers_500_internal_error_and_the_server_serves_on() {
    let app = app();
    let mut req = signed("GET", "/Tables", &[], "");
    req.headers_mut().insert("x-aztable-test-panic", http::HeaderValue::from_static("1"));
    let resp = send(&app, req).await;
    assert_eq!(resp.status(), 500);
    assert_eq!(resp.headers()["x-ms-error-code"], "InternalError");
    assert_eq!(resp.headers()["connection"], "close");
    assert!(resp.headers().contains_key("x-ms-request-id"));
    let body = resp.into_body().collect_bytes().await.unwrap();
    let json: serde_json::Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(json["odata.error"]["code"], "InternalError");
    // the next request is served as usual
    let resp = send(&app, signed("GET", "/Tables", &[], "")).await;
    assert_eq!(resp.status(), 200);
}
