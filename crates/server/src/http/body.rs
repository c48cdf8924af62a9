//! Reading request bodies under the [`RequestLimits`]: the buffer grows with the bytes
//! that arrive (never sized from `Content-Length`, which a client need not back), each
//! byte counts against the server-wide [`BodyBudget`](super::limits::BodyBudget), and a
//! body that arrives slower than `--minBodyRate` after the `--bodyReadTimeout` grace,
//! or not before `--requestTimeout`, is cut off with 408 and `Connection: close`.
//!
//! A request refused before its body is read ([`settle_refused`]) keeps its connection
//! only when the body is small enough to drain ([`DRAIN_REFUSED`]); otherwise the
//! answer says `Connection: close`, since a client still sending would find the next
//! response out of step.

use super::limits::{RequestLimits, Share};
use super::message::Body;
use aztable_model::error::{ApiError, ErrorCode};
use bytes::Bytes;
use http_body::Body as _;
use http_body_util::BodyExt;
use tokio::time::{Duration, Instant};

/// Largest request body read, for batches and single entities alike (an entity holds at
/// most 1 MiB of data, more as JSON: a body under this size whose entity is over that
/// is 400 `EntityTooLarge`, a larger body 413 `RequestBodyTooLarge`).
pub(super) const MAX_BODY: usize = 4 * 1024 * 1024;
/// How much of an oversized body is read and discarded so the client, still sending,
/// gets the 413 on a connection it can keep; beyond this the connection is closed.
pub(super) const DRAIN_LIMIT: usize = 64 * 1024 * 1024;
/// Largest declared body of a refused request (bad signature, unknown resource, ...)
/// that is read and discarded to keep the connection; a larger one is not awaited.
pub(super) const DRAIN_REFUSED: u64 = 64 * 1024;

/// What the parsed form of a body (entities, a change set's operations and their
/// encoded writes) is charged, as a multiple of the body's bytes: with bodies counted as
/// bytes only, concurrent 2.1 MB change sets of 100 inserts grew the server by about
/// twice the budget (`tests/it/body_budget.rs`); charged so, by about the budget.
pub(super) const PARSED_FORM_FACTOR: usize = 5;

/// Charges the parsed form of `body` ([`PARSED_FORM_FACTOR`] times its bytes) to the
/// share that holds it, for as long as the share is held (until the handler has answered
/// and dropped what it parsed); 503 `ServerBusy` when the budget has no room for it.
pub(super) fn charge_parsed_form(share: &mut Share<'_>, body: &Bytes) -> Result<(), ApiError> {
    if share.grow_at_most_all(body.len().saturating_mul(PARSED_FORM_FACTOR)) {
        Ok(())
    } else {
        Err(ApiError::with_message(ErrorCode::ServerBusy, BUSY_MESSAGE))
    }
}

/// The message of a request refused for the budget.
const BUSY_MESSAGE: &str =
    "The server is holding too many request bodies (--maxInflightBodyBytes). Please retry your request.";

/// Reads the whole body, refusing one over [`MAX_BODY`] with 413 `RequestBodyTooLarge`
/// only after draining it (up to [`DRAIN_LIMIT`]). A body that arrives in one frame is
/// kept as it came, uncopied. `started` is when the request's head was read. The
/// returned share holds the body's bytes in the budget until dropped.
pub(super) async fn read_body<'a>(
    mut body: Body,
    limits: &'a RequestLimits,
    started: Instant,
) -> Result<(Bytes, Share<'a>), ApiError> {
    let mut share = limits.body_budget.share();
    let mut clock = Pace::new(limits, started);
    // the frames as they came, joined once at the end: copying into a buffer grown by
    // doubling would hold up to three times the bytes at each copy, and a buffer sized by
    // the declared length would hold what was declared rather than what arrived
    let mut frames: Vec<Bytes> = Vec::new();
    let mut total = 0usize;
    while let Some(data) = clock.next(&mut body, total).await? {
        total = total.saturating_add(data.len());
        if total > DRAIN_LIMIT {
            return Err(closing(ApiError::new(ErrorCode::RequestBodyTooLarge)));
        }
        if total > MAX_BODY {
            frames.clear();
            continue;
        }
        if !share.grow(data.len()) {
            return Err(closing(ApiError::with_message(ErrorCode::ServerBusy, BUSY_MESSAGE)));
        }
        frames.push(data);
    }
    if total > MAX_BODY {
        return Err(ApiError::new(ErrorCode::RequestBodyTooLarge));
    }
    let body = match frames.len() {
        0 => Bytes::new(),
        1 => frames.swap_remove(0),
        _ => {
            let mut joined = Vec::with_capacity(total);
            for f in &frames {
                joined.extend_from_slice(f);
            }
            Bytes::from(joined)
        }
    };
    Ok((body, share))
}

/// For a request refused before its body was read: drains a body of at most
/// [`DRAIN_REFUSED`] declared bytes (under the same deadlines), so the connection can
/// serve the next request; otherwise, or if draining fails, marks `e` to close it.
pub(super) async fn settle_refused(
    mut body: Body,
    e: &mut ApiError,
    limits: &RequestLimits,
    started: Instant,
) {
    if body.is_end_stream() {
        return;
    }
    let small = body.size_hint().exact().is_some_and(|n| n <= DRAIN_REFUSED);
    if !small {
        e.close_connection = true;
        return;
    }
    let mut clock = Pace::new(limits, started);
    let mut total = 0usize;
    loop {
        match clock.next(&mut body, total).await {
            Ok(Some(data)) => total = total.saturating_add(data.len()),
            Ok(None) => return,
            Err(_) => {
                e.close_connection = true;
                return;
            }
        }
    }
}

fn closing(mut e: ApiError) -> ApiError {
    e.close_connection = true;
    e
}

/// The deadlines of a body's frames: the next byte after `n` must arrive by
/// `start + grace + n / rate`, and all of them by the request's deadline.
struct Pace {
    start: Instant,
    grace: Duration,
    rate: u64,
    request_deadline: Instant,
}

impl Pace {
    fn new(limits: &RequestLimits, started: Instant) -> Self {
        Pace {
            start: Instant::now(),
            grace: limits.body_grace,
            rate: limits.min_body_rate.max(1),
            request_deadline: started + limits.request_timeout,
        }
    }

    /// The next data frame (`None` at the end), or 408 `RequestTimeout` (closing the
    /// connection) when it is late; 400 `InvalidInput` when the body cannot be read.
    async fn next(&mut self, body: &mut Body, received: usize) -> Result<Option<Bytes>, ApiError> {
        let earned = Duration::from_millis((received as u64).saturating_mul(1000) / self.rate);
        let deadline = (self.start + self.grace + earned).min(self.request_deadline);
        loop {
            let frame = match tokio::time::timeout_at(deadline, body.frame()).await {
                Err(_) => return Err(closing(ApiError::new(ErrorCode::RequestTimeout))),
                Ok(None) => return Ok(None),
                Ok(Some(Err(_))) => {
                    return Err(closing(ApiError::with_message(
                        ErrorCode::InvalidInput,
                        "The request body could not be read.",
                    )))
                }
                Ok(Some(Ok(frame))) => frame,
            };
            if let Ok(data) = frame.into_data() {
                return Ok(Some(data));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::limits::BodyBudget;
    use std::collections::VecDeque;
    use std::convert::Infallible;
    use std::pin::Pin;
    use std::sync::Arc;
    use std::task::{Context, Poll};

    /// A body that arrives in the given frames, then (if `stall`) never ends.
    struct Frames(VecDeque<Bytes>, bool);

    impl http_body::Body for Frames {
        type Data = Bytes;
        type Error = Infallible;
        fn poll_frame(
            self: Pin<&mut Self>,
            _: &mut Context<'_>,
        ) -> Poll<Option<Result<http_body::Frame<Bytes>, Infallible>>> {
            let this = self.get_mut();
            match this.0.pop_front() {
                Some(b) => Poll::Ready(Some(Ok(http_body::Frame::data(b)))),
                None if this.1 => Poll::Pending,
                None => Poll::Ready(None),
            }
        }
    }

    fn body(frames: &[&Bytes]) -> Body {
        Body::new(Frames(frames.iter().map(|&b| b.clone()).collect(), false))
    }

    async fn read(b: Body, limits: &RequestLimits) -> Result<Bytes, ApiError> {
        read_body(b, limits, Instant::now()).await.map(|(bytes, _)| bytes)
    }

    #[tokio::test]
    async fn one_frame_is_kept_and_several_are_joined() {
        let limits = RequestLimits::default();
        let whole = Bytes::from_static(b"{\"PartitionKey\":\"p\",\"RowKey\":\"r\"}");
        let got = read(body(&[&whole]), &limits).await.expect("read");
        assert_eq!(got, whole);
        assert_eq!(got.as_ptr(), whole.as_ptr(), "a body in one frame is not copied");
        let parts = [whole.slice(..5), whole.slice(5..5), whole.slice(5..20), whole.slice(20..)];
        let got = read(body(&parts.iter().collect::<Vec<_>>()), &limits).await.expect("read");
        assert_eq!(got, whole);
        assert!(read(body(&[]), &limits).await.expect("empty").is_empty());
        assert_eq!(limits.body_budget.used(), 0, "given back");
    }

    #[tokio::test]
    async fn too_large_bodies_are_refused_after_draining_or_cut_off() {
        let limits = RequestLimits::default();
        let mib = Bytes::from(vec![b'x'; 1 << 20]);
        let five: Vec<&Bytes> = std::iter::repeat_n(&mib, 5).collect();
        let e = read(body(&five), &limits).await.expect_err("over MAX_BODY");
        assert_eq!((e.code, e.close_connection), (ErrorCode::RequestBodyTooLarge, false));
        let many: Vec<&Bytes> = std::iter::repeat_n(&mib, 65).collect();
        let e = read(body(&many), &limits).await.expect_err("over DRAIN_LIMIT");
        assert_eq!((e.code, e.close_connection), (ErrorCode::RequestBodyTooLarge, true));
        let four: Vec<&Bytes> = std::iter::repeat_n(&mib, 4).collect();
        assert_eq!(read(body(&four), &limits).await.expect("4 MiB").len(), 4 << 20);
    }

    #[tokio::test]
    async fn bodies_count_against_the_budget_while_held() {
        let limits =
            RequestLimits { body_budget: Arc::new(BodyBudget::new(100)), ..RequestLimits::default() };
        let sixty = Bytes::from(vec![b'x'; 60]);
        let (_, held) = read_body(body(&[&sixty]), &limits, Instant::now()).await.expect("fits");
        assert_eq!(limits.body_budget.used(), 60);
        let e = read(body(&[&sixty]), &limits).await.expect_err("over the budget");
        assert_eq!((e.code, e.close_connection), (ErrorCode::ServerBusy, true));
        drop(held);
        assert!(read(body(&[&sixty]), &limits).await.is_ok());
        assert_eq!(limits.body_budget.used(), 0);
    }

    /// On tokio's paused clock: the runtime moves time on when every task waits, so the
    /// cut-off is measured exactly, however loaded the machine.
    #[tokio::test(start_paused = true)]
    async fn a_stalled_body_is_cut_off_after_the_grace_and_its_earned_time() {
        let limits = RequestLimits {
            body_grace: Duration::from_millis(300),
            min_body_rate: 10_000,
            ..RequestLimits::default()
        };
        let kib = Bytes::from(vec![b'x'; 3000]);
        let started = Instant::now();
        let stalled = Body::new(Frames(VecDeque::from([kib]), true));
        let e = read(stalled, &limits).await.expect_err("stalled");
        assert_eq!((e.code, e.close_connection), (ErrorCode::RequestTimeout, true));
        // 0.3 s of grace plus the 0.3 s its 3,000 bytes earned at 10,000 bytes/s
        let waited = started.elapsed();
        assert!(waited.abs_diff(Duration::from_millis(600)) <= Duration::from_millis(2), "{waited:?}");
    }
}
