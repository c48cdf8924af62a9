//! [`CatchPanic`]: runs a request's future so that a panic in it becomes an error for
//! that request alone (`dispatch` answers 500 `InternalError` and logs the panic with
//! the request id) instead of tearing down the connection's task.

use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::task::{Context, Poll};

pin_project_lite::pin_project! {
    /// A future that resolves to its inner future's output, or to the panic message.
    /// The inner future is pinned in place (no allocation per request).
    pub struct CatchPanic<F> {
        #[pin]
        inner: F,
    }
}

impl<F: Future> CatchPanic<F> {
    pub fn new(inner: F) -> Self {
        CatchPanic { inner }
    }
}

impl<F: Future> Future for CatchPanic<F> {
    type Output = Result<F::Output, String>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let inner = self.project().inner;
        // A panicked future is never polled again: `dispatch` drops it and answers.
        match catch_unwind(AssertUnwindSafe(|| inner.poll(cx))) {
            Ok(Poll::Pending) => Poll::Pending,
            Ok(Poll::Ready(out)) => Poll::Ready(Ok(out)),
            Err(payload) => Poll::Ready(Err(panic_message(payload.as_ref()))),
        }
    }
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
        assert_eq!(CatchPanic::new(async { 7 }).await, Ok(7));
        let n = 3;
        let caught = CatchPanic::new(async move {
            tokio::task::yield_now().await;
            if n == 3 {
                panic!("boom {n}");
            }
            0
        })
        .await;
        assert_eq!(caught, Err("boom 3".to_owned()));
    }
}
