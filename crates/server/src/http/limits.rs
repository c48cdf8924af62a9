//! What a client can make the server hold, and for how long: the request limits
//! `dispatch` enforces (body read deadlines, the server-wide budget of buffered body
//! bytes, the request's total time) and the checks on a request head (URI length,
//! header size and count, well-formed percent-escapes in the path). The connection
//! limits (count, keep-alive, shutdown grace) are `server`'s. docs/security.md lists
//! them with their defaults.

use aztable_model::error::{ApiError, ErrorCode};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Longest request URI (path and query) served; a longer one is 414 `RequestUriTooLong`.
pub const MAX_URI_LEN: usize = 32 * 1024;
/// Most header bytes (names, values and their separators) in a request; more is 431.
pub const MAX_HEADER_BYTES: usize = 32 * 1024;
/// Most headers in a request; more is 431 `RequestHeaderFieldsTooLarge`.
pub const MAX_HEADER_COUNT: usize = 80;
/// hyper's own limits sit above ours, so a head a little over ours reaches `dispatch`
/// and gets a service-shaped error; only a head over these gets hyper's bare 414/431.
pub const HYPER_MAX_BUF: usize = 2 * (MAX_URI_LEN + MAX_HEADER_BYTES);
/// hyper's header count limit is left at its default, 100: within it, the arrays hyper
/// parses a head into live on the stack; set higher, it allocates two arrays of that
/// many entries for every request (at 200, 4 % of a point read's CPU).
pub const HYPER_MAX_HEADERS: usize = 100;
const _: () = assert!(MAX_HEADER_COUNT < HYPER_MAX_HEADERS);

/// Per-request limits (`--bodyReadTimeout`, `--minBodyRate`, `--requestTimeout`,
/// `--maxInflightBodyBytes`); shared by every request of the server.
#[derive(Debug, Clone)]
pub struct RequestLimits {
    /// After this long, a body must keep arriving at [`Self::min_body_rate`]: a body
    /// with `n` bytes read must have its next byte by `start + grace + n / rate`.
    pub body_grace: Duration,
    /// Bytes per second a body must average after the grace (at least 1).
    pub min_body_rate: u64,
    /// From the request head to the answer: a body still arriving then is cut off
    /// (408), a handler still running is answered 500 `OperationTimedOut`.
    pub request_timeout: Duration,
    /// Request body bytes buffered at once, over all requests.
    pub body_budget: Arc<BodyBudget>,
}

pub const DEFAULT_BODY_GRACE: Duration = Duration::from_secs(10);
pub const DEFAULT_MIN_BODY_RATE: u64 = 4096;
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(60);
pub const DEFAULT_MAX_INFLIGHT_BODY_BYTES: usize = 256 * 1024 * 1024;

impl Default for RequestLimits {
    fn default() -> Self {
        RequestLimits {
            body_grace: DEFAULT_BODY_GRACE,
            min_body_rate: DEFAULT_MIN_BODY_RATE,
            request_timeout: DEFAULT_REQUEST_TIMEOUT,
            body_budget: Arc::new(BodyBudget::new(DEFAULT_MAX_INFLIGHT_BODY_BYTES)),
        }
    }
}

/// The server-wide count of buffered request body bytes, against a cap.
#[derive(Debug)]
pub struct BodyBudget {
    used: AtomicUsize,
    cap: usize,
}

impl BodyBudget {
    pub fn new(cap: usize) -> Self {
        BodyBudget { used: AtomicUsize::new(0), cap }
    }

    /// Bytes buffered now (for tests and logs).
    pub fn used(&self) -> usize {
        self.used.load(Ordering::Relaxed)
    }

    /// An empty share of the budget, given back when dropped.
    pub fn share(&self) -> Share<'_> {
        Share { budget: self, bytes: 0 }
    }
}

/// Bytes one request holds of the [`BodyBudget`]; released on drop.
#[derive(Debug)]
pub struct Share<'a> {
    budget: &'a BodyBudget,
    bytes: usize,
}

impl Share<'_> {
    /// Takes `n` more bytes; false (and nothing taken) when that would pass the cap.
    pub fn grow(&mut self, n: usize) -> bool {
        let cap = self.budget.cap;
        let taken = self
            .budget
            .used
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |used| {
                used.checked_add(n).filter(|&total| total <= cap)
            })
            .is_ok();
        if taken {
            self.bytes += n;
        }
        taken
    }
}

impl Share<'_> {
    /// Takes `n` more bytes, or, when `n` would not fit even in an otherwise empty budget,
    /// the rest of the whole budget (so a request that fits alone is never refused for
    /// good); false (and nothing taken) when that does not fit now.
    pub fn grow_at_most_all(&mut self, n: usize) -> bool {
        let room = self.budget.cap.saturating_sub(self.bytes);
        self.grow(n.min(room))
    }
}

impl Drop for Share<'_> {
    fn drop(&mut self) {
        self.budget.used.fetch_sub(self.bytes, Ordering::AcqRel);
    }
}

/// Checks a request head against [`MAX_URI_LEN`], [`MAX_HEADER_BYTES`] and
/// [`MAX_HEADER_COUNT`], and the path's percent-escapes (`%` and two hex digits; `%G1`
/// is 400 `InvalidUri`). `header_count` is the number of header values, `header_bytes` their size: names, values and 4 bytes of
/// separators (`: ` and CRLF) for each (summed by the caller's pass over them,
/// `request::Head`).
pub fn check_head(uri: &http::Uri, header_count: usize, header_bytes: usize) -> Result<(), ApiError> {
    let uri_len = uri.path_and_query().map_or(0, |p| p.as_str().len());
    if uri_len > MAX_URI_LEN {
        return Err(ApiError::with_message(
            ErrorCode::RequestUriTooLong,
            format!(
                "The request URI is {uri_len} bytes long; the most this server accepts is {MAX_URI_LEN}."
            ),
        ));
    }
    if header_count > MAX_HEADER_COUNT || header_bytes > MAX_HEADER_BYTES {
        return Err(ApiError::with_message(
            ErrorCode::RequestHeaderFieldsTooLarge,
            format!(
                "The request has {header_count} headers of {header_bytes} bytes; the most this server \
                 accepts is {MAX_HEADER_COUNT} headers of {MAX_HEADER_BYTES} bytes."
            ),
        ));
    }
    if !escapes_well_formed(uri.path()) {
        return Err(ApiError::with_message(
            ErrorCode::InvalidUri,
            "The request URI contains an invalid percent-escape ('%' must be followed by two hex digits).",
        ));
    }
    Ok(())
}

/// Whether every `%` in `path` starts a `%XX` escape of two hex digits.
fn escapes_well_formed(path: &str) -> bool {
    let bytes = path.as_bytes();
    let mut i = 0;
    while let Some(at) = memchr::memchr(b'%', &bytes[i..]) {
        let escape = bytes.get(i + at + 1..i + at + 3);
        if !escape.is_some_and(|hex| hex.iter().all(u8::is_ascii_hexdigit)) {
            return false;
        }
        i += at + 3;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percent_escapes() {
        for ok in ["/a/b", "/a%20b", "/t(PartitionKey='%C3%A9')", "%41", ""] {
            assert!(escapes_well_formed(ok), "{ok}");
        }
        for bad in ["/a%G1", "/a%", "/a%4", "/%%41", "/a%4g"] {
            assert!(!escapes_well_formed(bad), "{bad}");
        }
    }

    #[test]
    fn the_budget_is_shared_and_given_back() {
        let budget = BodyBudget::new(100);
        let mut a = budget.share();
        assert!(a.grow(60));
        let mut b = budget.share();
        assert!(!b.grow(41), "over the cap");
        assert!(b.grow(40));
        assert_eq!(budget.used(), 100);
        drop(a);
        assert_eq!(budget.used(), 40);
        drop(b);
        assert_eq!(budget.used(), 0);
    }

    #[test]
    fn a_charge_over_the_whole_budget_takes_all_of_it_only_when_alone() {
        let budget = BodyBudget::new(100);
        let mut a = budget.share();
        assert!(a.grow(30));
        assert!(a.grow_at_most_all(90), "alone: the rest of the budget");
        assert_eq!(budget.used(), 100);
        drop(a);
        let mut a = budget.share();
        assert!(a.grow(30));
        let mut other = budget.share();
        assert!(other.grow(1));
        assert!(!a.grow_at_most_all(90), "not alone: no room for it");
        assert_eq!(budget.used(), 31, "nothing taken by the refused charge");
        assert!(a.grow_at_most_all(69));
        assert_eq!(budget.used(), 100);
    }
}
