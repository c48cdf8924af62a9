//! What a handler receives: the request once its head was understood ([`Req`]), and
//! the readers of request headers shared by dispatch and the handlers.

use super::query::QueryParams;
use bytes::Bytes;
use http::HeaderMap;

/// A request after its head was understood: what handlers receive.
pub(super) struct Req {
    pub headers: http::HeaderMap,
    pub query: QueryParams,
    pub body: Bytes,
}

/// Returns a header's value as text, if present and valid.
pub(super) fn header<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// Returns `x-ms-client-request-id` if it may be echoed (≤ 1024 visible ASCII chars).
pub(super) fn client_request_id(headers: &HeaderMap) -> Option<String> {
    let v = header(headers, "x-ms-client-request-id")?;
    (v.len() <= 1024 && v.bytes().all(|b| (0x20..0x7f).contains(&b))).then(|| v.to_owned())
}
