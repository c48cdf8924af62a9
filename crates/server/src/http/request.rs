//! What a handler receives: the request once its head was understood ([`Req`]), the
//! readers of request headers shared by dispatch and the handlers, and the names of the
//! headers read on every request.

use super::query::QueryParams;
use bytes::Bytes;
use http::header::{AsHeaderName, HeaderName};
use http::{HeaderMap, HeaderValue};

/// A request after its head was understood: what handlers receive.
pub(super) struct Req {
    pub headers: http::HeaderMap,
    pub query: QueryParams,
    pub body: Bytes,
}

// Header names built when compiled: a lookup by `&str` parses and lower-cases the name
// on every call (a quarter of a point read's head checks).
/// `x-ms-version`.
pub(super) static X_MS_VERSION: HeaderName = HeaderName::from_static("x-ms-version");
/// `x-ms-date`.
pub(super) static X_MS_DATE: HeaderName = HeaderName::from_static("x-ms-date");
/// `x-ms-client-request-id`.
pub(super) static X_MS_CLIENT_REQUEST_ID: HeaderName = HeaderName::from_static("x-ms-client-request-id");
/// `x-http-method` (method tunnelling).
pub(super) static X_HTTP_METHOD: HeaderName = HeaderName::from_static("x-http-method");

/// Returns a header's value as text, if present and valid. `name` is best a
/// [`HeaderName`] (an `http::header` constant or one of the statics above): a `&str`
/// is parsed on every call.
pub(super) fn header<K: AsHeaderName>(headers: &HeaderMap, name: K) -> Option<&str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// Returns `x-ms-client-request-id` if it may be echoed (≤ 1024 visible ASCII chars):
/// the request's own value, shared, so echoing it copies nothing.
pub(super) fn client_request_id(headers: &HeaderMap) -> Option<HeaderValue> {
    let v = headers.get(&X_MS_CLIENT_REQUEST_ID)?;
    (v.len() <= 1024 && v.as_bytes().iter().all(|b| (0x20..0x7f).contains(b))).then(|| v.clone())
}
