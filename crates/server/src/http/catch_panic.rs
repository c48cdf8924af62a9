//! [`caught`]: runs a request's future so that a panic in it becomes an error for that
//! request alone (`dispatch` answers 500 `InternalError` and logs the panic with the
//! request id) instead of tearing down the connection's task. The unwinding is
//! futures-util's `catch_unwind`; this module only turns the payload into text.

use futures_util::FutureExt;
use std::future::Future;
use std::panic::AssertUnwindSafe;

/// The future's output, or the text of its panic. A panicked future is never polled
/// again: `dispatch` drops it and answers.
/// (A combinator rather than an `async fn`, whose state would hold `inner` twice: as its
/// argument and inside `catch_unwind`'s future.)
pub(super) fn caught<F: Future>(inner: F) -> impl Future<Output = Result<F::Output, String>> {
    AssertUnwindSafe(inner).catch_unwind().map(|r| r.map_err(|payload| panic_message(payload.as_ref())))
}

/// The text of a panic payload (`panic!("...")` gives a `&str` or a `String`).
fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_panic_is_caught_and_a_value_passes_through() {
        assert_eq!(caught(async { 7 }).await, Ok(7));
        let n = 3;
        let result = caught(async move {
            tokio::task::yield_now().await;
            if n == 3 {
                panic!("boom {n}");
            }
            0
        })
        .await;
        assert_eq!(result, Err("boom 3".to_owned()));
    }
}
