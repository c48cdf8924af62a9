//! The Blob and Queue ports of Azurite's command line (`--blobHost`, `--queuePort`, ...,
//! and by default under the name `azurite`). Tools written for Azurite wait until all
//! three ports listen, and clients configured with the full connection string may send
//! there: each request is answered 501 `NotImplemented` in the Blob and Queue services'
//! XML error shape, saying that this emulator serves the Table service only, so the cause
//! is plain instead of a refused connection.
//!
//! Plain HTTP/1.1 only (no TLS); no state; one log line per request in the access log.

use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use std::convert::Infallible;
use std::time::Duration;
use tokio::net::TcpListener;

/// How long a client may take to send a request's head; an idle connection closes after it.
const HEAD_TIMEOUT: Duration = Duration::from_secs(5);

/// The error code and status: the service's answer to an operation it does not implement.
const CODE: &str = "NotImplemented";
const STATUS: http::StatusCode = http::StatusCode::NOT_IMPLEMENTED;

/// Answers every request on `listener` with the "Table service only" error, for ever (the
/// task is dropped with the runtime at shutdown). `service` names the port's service
/// (`Blob`, `Queue`).
pub async fn serve_other_service(listener: TcpListener, service: &'static str) {
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new()).keep_alive(true).header_read_timeout(HEAD_TIMEOUT);
    loop {
        let (io, peer) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(e) => {
                tracing::warn!(error = %e, "{service} port: accept failed");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let answer = service_fn(move |req: http::Request<Incoming>| async move {
            let resp = not_table(service, req.method() == http::Method::HEAD);
            tracing::info!(
                target: "aztable::access",
                client = %peer,
                status = STATUS.as_u16(),
                error_code = CODE,
                "{service} port: {} {} (this emulator serves the Table service only)",
                req.method(),
                req.uri().path(),
            );
            Ok::<_, Infallible>(resp)
        });
        let conn = http.serve_connection(TokioIo::new(io), answer);
        tokio::spawn(async move {
            if let Err(e) = conn.await {
                tracing::debug!(%peer, error = %e, "{service} port: connection ended with an error");
            }
        });
    }
}

/// The answer to any request on the `service` port (`head`: without a body, as HEAD
/// answers are).
pub(super) fn not_table(service: &str, head: bool) -> http::Response<http_body_util::Full<bytes::Bytes>> {
    let request_id = super::ctx::new_request_id();
    let time = aztable_model::time::wall_now().to_rfc3339_7();
    let body = format!(
        "<?xml version=\"1.0\" encoding=\"utf-8\"?><Error><Code>{CODE}</Code><Message>This emulator \
         (aztable) serves the Table service only: the {service} service is not emulated. Send {service} \
         requests to Azurite or to Azure Storage; use this emulator's TableEndpoint for tables.\n\
         RequestId:{request_id}\nTime:{time}</Message></Error>"
    );
    let len = body.len();
    let body = if head { bytes::Bytes::new() } else { bytes::Bytes::from(body) };
    let mut resp = http::Response::new(http_body_util::Full::new(body));
    *resp.status_mut() = STATUS;
    let headers = resp.headers_mut();
    headers.insert(http::header::CONTENT_TYPE, http::HeaderValue::from_static("application/xml"));
    headers.insert(http::header::CONTENT_LENGTH, http::HeaderValue::from(len));
    headers.insert("x-ms-error-code", http::HeaderValue::from_static(CODE));
    if let Ok(id) = http::HeaderValue::from_str(&request_id) {
        headers.insert("x-ms-request-id", id);
    }
    headers.insert(http::header::SERVER, http::HeaderValue::from_static("aztable"));
    resp
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::BodyExt;

    #[tokio::test]
    async fn answers_in_the_xml_error_shape() {
        let resp = not_table("Blob", false);
        assert_eq!(resp.status(), 501);
        assert_eq!(resp.headers()["x-ms-error-code"], "NotImplemented");
        assert_eq!(resp.headers()["content-type"], "application/xml");
        let len: usize = resp.headers()["content-length"].to_str().unwrap().parse().unwrap();
        let body = resp.into_body().collect().await.unwrap().to_bytes();
        assert_eq!(body.len(), len);
        let text = std::str::from_utf8(&body).unwrap();
        assert!(
            text.starts_with("<?xml version=\"1.0\" encoding=\"utf-8\"?><Error><Code>NotImplemented</Code>")
        );
        assert!(text.contains("serves the Table service only: the Blob service is not emulated"), "{text}");
        assert!(text.contains("\nRequestId:") && text.ends_with("</Message></Error>"));
        // HEAD: the headers without the body
        let resp = not_table("Queue", true);
        assert_ne!(resp.headers()["content-length"], "0");
        assert!(resp.into_body().collect().await.unwrap().to_bytes().is_empty());
    }
}
