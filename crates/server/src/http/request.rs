//! What a handler receives: the request once its head was understood ([`Req`]), the
//! readers of request headers shared by dispatch and the handlers, and the names of the
//! headers read on every request.

use super::query::QueryParams;
use aztable_wire::auth::SignedHeaders;
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
// on every call (about 240 instructions a lookup).
/// `x-ms-version`.
pub(super) static X_MS_VERSION: HeaderName = HeaderName::from_static("x-ms-version");
/// `x-ms-client-request-id`.
pub(super) static X_MS_CLIENT_REQUEST_ID: HeaderName = HeaderName::from_static("x-ms-client-request-id");
/// `x-http-method` (method tunnelling).
pub(super) static X_HTTP_METHOD: HeaderName = HeaderName::from_static("x-http-method");

/// The request headers the head checks read (`dispatch::check_head`) and those
/// `dispatch` keeps for the answer ([`Kept`]), found in one pass over the headers, which
/// also sums their size for the limits: a dozen lookups by name cost several times that.
/// Each is the header's first value, as `HeaderMap::get` gives.
#[derive(Debug, Default)]
pub(super) struct Head<'h> {
    pub host: Option<&'h HeaderValue>,
    pub accept: Option<&'h HeaderValue>,
    pub x_ms_version: Option<&'h HeaderValue>,
    /// Whether `x-http-method` is present (its values are read only then).
    pub x_http_method: bool,
    /// `Authorization` and the headers SharedKey signs.
    pub signed: SignedHeaders<'h>,
    /// `Origin` (CORS).
    pub origin: Option<&'h HeaderValue>,
    /// `x-ms-client-request-id` (echoed when it may be: [`Head::echoed_client_request_id`]).
    pub client_request_id: Option<&'h HeaderValue>,
    /// Whether a `Connection` header is there (its values are read only then).
    pub connection: bool,
    /// Names, values and separators of every header, as [`super::limits::check_head`]
    /// counts them.
    pub bytes: usize,
}

impl<'h> Head<'h> {
    /// Reads the head's headers in one pass.
    pub(super) fn read(headers: &'h HeaderMap) -> Head<'h> {
        let mut head = Head::default();
        for (name, value) in headers {
            head.bytes += name.as_str().len() + value.len() + 4;
            let slot = match name.as_str() {
                "host" => &mut head.host,
                "accept" => &mut head.accept,
                "x-ms-version" => &mut head.x_ms_version,
                "origin" => &mut head.origin,
                "x-ms-client-request-id" => &mut head.client_request_id,
                "x-http-method" => {
                    head.x_http_method = true;
                    continue;
                }
                "connection" => {
                    head.connection = true;
                    continue;
                }
                _ => {
                    head.signed.note(name, value);
                    continue;
                }
            };
            slot.get_or_insert(value);
        }
        head
    }

    /// `x-ms-client-request-id`'s value if it may be echoed ([`echoable_client_request_id`]).
    pub(super) fn echoed_client_request_id(&self) -> Option<HeaderValue> {
        self.client_request_id.and_then(echoable_client_request_id)
    }
}

/// A header value as text, if present and valid (what [`header`] gives).
pub(super) fn text(value: Option<&HeaderValue>) -> Option<&str> {
    value.and_then(|v| v.to_str().ok())
}

/// Returns a header's value as text, if present and valid. `name` is best a
/// [`HeaderName`] (an `http::header` constant or one of the statics above): a `&str`
/// is parsed on every call.
pub(super) fn header<K: AsHeaderName>(headers: &HeaderMap, name: K) -> Option<&str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// What `dispatch` keeps of the request's head for the answer once the handler has
/// taken the headers (the client request id to echo goes to the request's context).
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct Kept {
    /// `Origin`, when it is text (CORS).
    pub origin: Option<String>,
    /// Whether the client lets the connection stay open after this request
    /// (`dispatch::client_keeps_connection`).
    pub client_keeps: bool,
}

/// `x-ms-client-request-id`'s value if it may be echoed (≤ 1024 visible ASCII chars):
/// the request's own value, shared, so echoing it copies nothing.
fn echoable_client_request_id(v: &HeaderValue) -> Option<HeaderValue> {
    (v.len() <= 1024 && v.as_bytes().iter().all(|b| (0x20..0x7f).contains(b))).then(|| v.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the head checks read, looked up one by one: the reference for [`Head::read`].
    fn looked_up(
        headers: &HeaderMap,
    ) -> (Option<&HeaderValue>, Option<&HeaderValue>, Option<&HeaderValue>, bool) {
        (
            headers.get(http::header::HOST),
            headers.get(http::header::ACCEPT),
            headers.get("x-ms-version"),
            headers.contains_key("x-http-method"),
        )
    }

    proptest::proptest! {
        /// One pass finds each header's first value, as lookups do, and sums the head's
        /// size as the limit counts it, whatever names repeat and whatever bytes values hold.
        #[test]
        fn one_pass_reads_what_lookups_read(
            pairs in proptest::collection::vec(
                (
                    proptest::sample::select(vec![
                        "Host", "host", "Accept", "x-ms-version", "X-MS-Version", "x-http-method",
                        "authorization", "x-ms-date", "date", "content-md5", "content-type", "origin",
                        "Origin", "x-ms-client-request-id", "connection", "x-other",
                    ]),
                    proptest::collection::vec(proptest::prelude::any::<u8>(), 0..8),
                ),
                0..16,
            )
        ) {
            let mut headers = HeaderMap::new();
            for (name, value) in &pairs {
                let Ok(value) = HeaderValue::from_bytes(value) else { continue };
                headers.append(HeaderName::from_bytes(name.as_bytes()).unwrap(), value);
            }
            let head = Head::read(&headers);
            proptest::prop_assert_eq!(
                (head.host, head.accept, head.x_ms_version, head.x_http_method),
                looked_up(&headers)
            );
            proptest::prop_assert_eq!(head.signed, SignedHeaders::of(&headers));
            let bytes: usize = headers.iter().map(|(k, v)| k.as_str().len() + v.len() + 4).sum();
            proptest::prop_assert_eq!(head.bytes, bytes);
            proptest::prop_assert_eq!(text(head.accept), header(&headers, http::header::ACCEPT));
            proptest::prop_assert_eq!(head.origin, headers.get(http::header::ORIGIN));
            proptest::prop_assert_eq!(
                head.echoed_client_request_id(),
                headers.get("x-ms-client-request-id").and_then(echoable_client_request_id)
            );
            proptest::prop_assert_eq!(head.connection, headers.contains_key(http::header::CONNECTION));
        }
    }
}
