//! Response building: the headers every response carries (`x-ms-request-id`,
//! `x-ms-version`, `Date`, client request id echo, ...) and small constructors.

use super::ctx::RequestCtx;
use super::message::Body;
use super::message::Response;
use super::request::{X_MS_CLIENT_REQUEST_ID, X_MS_VERSION};
use aztable_wire::odata::Prefer;
use bytes::Bytes;
use http::header::{HeaderName, HeaderValue};
use http::StatusCode;
use std::borrow::Cow;

/// Adds the headers common to every response.
pub(super) fn finish(resp: &mut Response, ctx: &RequestCtx) {
    // names and values built when compiled
    static X_MS_REQUEST_ID: HeaderName = HeaderName::from_static("x-ms-request-id");
    const SERVER: HeaderValue = HeaderValue::from_static("aztable/0.1 Windows-Azure-Table/1.0");
    const NO_CACHE: HeaderValue = HeaderValue::from_static("no-cache");
    const NOSNIFF: HeaderValue = HeaderValue::from_static("nosniff");
    let h = resp.headers_mut();
    if let Ok(v) = HeaderValue::from_bytes(ctx.request_id.as_bytes()) {
        h.insert(&X_MS_REQUEST_ID, v);
    }
    h.insert(&X_MS_VERSION, ctx.version.clone());
    if let Some(v) = &ctx.client_request_id {
        h.insert(&X_MS_CLIENT_REQUEST_ID, v.clone());
    }
    // hyper writes the host clock's date (cached per second) into any answer without
    // one: only a moved clock (`--clockSkew`) needs the server's own
    if aztable_model::time::clock_skew() != 0 {
        h.insert(http::header::DATE, http_date_now());
    }
    h.insert(http::header::SERVER, SERVER);
    h.insert(http::header::CACHE_CONTROL, NO_CACHE);
    h.insert(http::header::X_CONTENT_TYPE_OPTIONS, NOSNIFF);
}

/// The `Date` header value for now (IMF-fixdate), formatted once per second per thread.
fn http_date_now() -> HeaderValue {
    use std::time::{Duration, SystemTime, UNIX_EPOCH};
    // 9999-12-31T23:59:59Z: `httpdate` panics past year 9999 (and before 1970), so a
    // clock outside that range is clamped into it.
    const LAST_SECOND: u64 = 253_402_300_799;
    thread_local! {
        static CACHED: std::cell::RefCell<Option<(u64, HeaderValue)>> = const { std::cell::RefCell::new(None) };
    }
    // the server's clock (`--clockSkew` moves it off the host's)
    let host = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let moved = i64::try_from(host).unwrap_or(i64::MAX).saturating_add(aztable_model::time::clock_skew());
    let second = u64::try_from(moved).unwrap_or(0).min(LAST_SECOND);
    CACHED.with(|c| {
        let mut c = c.borrow_mut();
        match &*c {
            Some((s, v)) if *s == second => v.clone(),
            _ => {
                let date = httpdate::fmt_http_date(UNIX_EPOCH + Duration::from_secs(second));
                let v = HeaderValue::from_str(&date)
                    .unwrap_or_else(|_| HeaderValue::from_static("Thu, 01 Jan 1970 00:00:00 GMT"));
                *c = Some((second, v.clone()));
                v
            }
        }
    })
}

/// A response with a status, headers and body.
pub(super) fn build(status: StatusCode, headers: &[(&'static str, String)], body: Vec<u8>) -> Response {
    let mut resp = Response::new(Body::from(body));
    *resp.status_mut() = status;
    let h = resp.headers_mut();
    for (name, value) in headers {
        if let Ok(v) = HeaderValue::from_str(value) {
            h.append(HeaderName::from_static(name), v);
        }
    }
    resp
}

/// A header value for [`respond`]: static text is used in place and owned text moved
/// in, so neither is copied.
pub(super) type Text = Cow<'static, str>;

/// A response with a status, headers and body, the header values taken over without a
/// copy (the hot paths' [`build`]); invalid values are skipped.
pub(super) fn respond<const N: usize>(
    status: StatusCode,
    headers: [(HeaderName, Text); N],
    body: impl Into<Body>,
) -> Response {
    let mut resp = Response::new(body.into());
    *resp.status_mut() = status;
    let h = resp.headers_mut();
    h.reserve(N + 8);
    for (name, value) in headers {
        let value = match value {
            Cow::Borrowed(s) => static_value(s),
            Cow::Owned(s) => HeaderValue::from_maybe_shared(Bytes::from(s)).ok(),
        };
        if let Some(v) = value {
            h.append(name, v);
        }
    }
    resp
}

/// The header value of a static text (content types, `DataServiceVersion`), checked once
/// per thread and remembered by the text's address and length (the same `'static` bytes,
/// so the same check): checking a 60-byte content type on every answer cost more than
/// the lookup.
fn static_value(s: &'static str) -> Option<HeaderValue> {
    /// Texts remembered per thread at most (the handlers answer with a handful).
    const REMEMBERED: usize = 32;
    thread_local! {
        static CHECKED: std::cell::RefCell<Vec<(usize, usize, HeaderValue)>> =
            const { std::cell::RefCell::new(Vec::new()) };
    }
    let key = (s.as_ptr() as usize, s.len());
    CHECKED.with(|checked| {
        let mut checked = checked.borrow_mut();
        if let Some((_, _, v)) = checked.iter().find(|(at, len, _)| (*at, *len) == key) {
            return Some(v.clone());
        }
        let v = HeaderValue::from_maybe_shared(Bytes::from_static(s.as_bytes())).ok()?;
        if checked.len() < REMEMBERED {
            checked.push((key.0, key.1, v.clone()));
        }
        Some(v)
    })
}

/// `DataServiceVersion` (not among `http::header`'s names), built when compiled: the
/// handlers name their headers ready-made, as `from_static` checks a name's characters
/// on every call.
pub(super) static DATASERVICEVERSION: HeaderName = HeaderName::from_static("dataserviceversion");
/// `DataServiceId`.
pub(super) static DATASERVICEID: HeaderName = HeaderName::from_static("dataserviceid");

/// Appends headers whose names may be in any letter case (e.g. the CORS headers of
/// `settings::cors`); invalid names or values are skipped.
pub(super) fn append_headers(resp: &mut Response, headers: &[(&str, String)]) {
    let h = resp.headers_mut();
    for (name, value) in headers {
        if let (Ok(n), Ok(v)) = (HeaderName::from_bytes(name.as_bytes()), HeaderValue::from_str(value)) {
            h.append(n, v);
        }
    }
}

/// `204 No Content` with the given headers.
pub(super) fn no_content(headers: &[(&'static str, String)]) -> Response {
    build(StatusCode::NO_CONTENT, headers, Vec::new())
}

/// The answer to an insert or a table creation: `201` with the body, or `204` when the
/// client sent `Prefer: return-no-content`; `Preference-Applied` only when it sent
/// `Prefer` at all.
pub(super) fn created<const N: usize>(
    prefer: Option<Prefer>,
    headers: [(HeaderName, Text); N],
    content_type: &'static str,
    body: impl FnOnce() -> Vec<u8>,
) -> Response {
    let no_content = prefer == Some(Prefer::ReturnNoContent);
    let (status, body) =
        if no_content { (StatusCode::NO_CONTENT, Vec::new()) } else { (StatusCode::CREATED, body()) };
    let mut resp = respond(status, headers, body);
    let h = resp.headers_mut();
    if let Some(v) = prefer.and_then(|p| static_value(p.applied())) {
        h.append(HeaderName::from_static("preference-applied"), v);
    }
    if let Some(v) = static_value(content_type).filter(|_| !no_content) {
        h.append(http::header::CONTENT_TYPE, v);
    }
    resp
}

#[cfg(test)]
mod tests {
    use super::{http_date_now, static_value};
    use http::HeaderName;

    /// A remembered static value is the checked text itself, for every text asked for
    /// (distinct texts, and the same text again), and an invalid one is refused each time.
    #[test]
    fn static_values_are_the_checked_texts() {
        let texts: Vec<&'static str> = (0..40).map(|i| &*format!("text/plain; v={i}").leak()).collect();
        for round in 0..3 {
            for text in &texts {
                assert_eq!(static_value(text).expect("valid").to_str().ok(), Some(*text), "round {round}");
            }
            assert_eq!(static_value("line\nbreak"), None);
        }
    }

    #[test]
    fn ready_made_names_are_the_checked_ones() {
        assert_eq!(super::DATASERVICEVERSION, HeaderName::from_static("dataserviceversion"));
        assert_eq!(super::DATASERVICEID, HeaderName::from_static("dataserviceid"));
    }
    use std::time::{Duration, SystemTime};

    #[test]
    fn date_header_is_now_as_an_imf_fixdate() {
        // the whole second before the call, and the time after it: the date lies between
        let before = SystemTime::UNIX_EPOCH
            + Duration::from_secs(
                SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).unwrap().as_secs(),
            );
        let v = http_date_now();
        let after = SystemTime::now();
        let text = v.to_str().unwrap();
        assert_eq!(text.len(), "Sun, 06 Nov 1994 08:49:37 GMT".len(), "{text}");
        assert!(text.ends_with(" GMT"), "{text}");
        let sent = httpdate::parse_http_date(text).unwrap();
        assert!(before <= sent && sent <= after, "{text}");
    }
}
