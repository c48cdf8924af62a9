//! The server's body and response types, on hyper's own: a request body is hyper's
//! `Incoming` as the connection produced it, a response body is the bytes a handler
//! rendered. Neither is boxed; only the tests' hand-made streams are.
//!
//! The server is hyper with one service function (`server.rs`) that calls
//! [`super::dispatch::dispatch`]; no web framework sits in between, so nothing else
//! supplies these types.

use bytes::Bytes;
use http_body::{Frame, SizeHint};
#[cfg(test)]
use http_body_util::combinators::UnsyncBoxBody;
#[cfg(test)]
use http_body_util::BodyExt as _;
use std::pin::Pin;
use std::task::{Context, Poll};

/// An error of a body's stream (the connection's, or a test stream's).
pub(crate) type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// An answer as handlers build it.
pub(crate) type Response = http::Response<Body>;

/// A request or response body.
#[derive(Debug)]
pub(crate) struct Body(Kind);

#[derive(Debug)]
enum Kind {
    /// Bytes known in full (answers; requests in tests); `None` once sent.
    Full(Option<Bytes>),
    /// A request body as hyper reads it from the connection.
    Incoming(hyper::body::Incoming),
    /// Any other stream (tests that send a body in pieces or stall).
    #[cfg(test)]
    Boxed(UnsyncBoxBody<Bytes, BoxError>),
}

impl Body {
    /// No bytes.
    #[cfg(test)]
    pub(crate) fn empty() -> Body {
        Body(Kind::Full(None))
    }

    /// A request body read from a connection.
    pub(crate) fn incoming(body: hyper::body::Incoming) -> Body {
        Body(Kind::Incoming(body))
    }

    /// Any other body, boxed.
    #[cfg(test)]
    pub(crate) fn new<B>(body: B) -> Body
    where
        B: http_body::Body<Data = Bytes> + Send + 'static,
        B::Error: Into<BoxError>,
    {
        Body(Kind::Boxed(body.map_err(Into::into).boxed_unsync()))
    }

    /// Reads the whole body (tests).
    #[cfg(test)]
    pub(crate) async fn collect_bytes(self) -> Result<Bytes, BoxError> {
        Ok(self.collect().await?.to_bytes())
    }
}

impl From<Bytes> for Body {
    fn from(bytes: Bytes) -> Body {
        Body(Kind::Full((!bytes.is_empty()).then_some(bytes)))
    }
}

impl From<Vec<u8>> for Body {
    fn from(bytes: Vec<u8>) -> Body {
        Body::from(Bytes::from(bytes))
    }
}

impl From<String> for Body {
    fn from(text: String) -> Body {
        Body::from(Bytes::from(text))
    }
}

impl From<&'static str> for Body {
    fn from(text: &'static str) -> Body {
        Body::from(Bytes::from_static(text.as_bytes()))
    }
}

impl http_body::Body for Body {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        match &mut self.get_mut().0 {
            Kind::Full(bytes) => Poll::Ready(bytes.take().map(|b| Ok(Frame::data(b)))),
            Kind::Incoming(body) => Pin::new(body).poll_frame(cx).map_err(Into::into),
            #[cfg(test)]
            Kind::Boxed(body) => Pin::new(body).poll_frame(cx),
        }
    }

    fn is_end_stream(&self) -> bool {
        match &self.0 {
            Kind::Full(bytes) => bytes.is_none(),
            Kind::Incoming(body) => body.is_end_stream(),
            #[cfg(test)]
            Kind::Boxed(body) => body.is_end_stream(),
        }
    }

    fn size_hint(&self) -> SizeHint {
        match &self.0 {
            Kind::Full(bytes) => SizeHint::with_exact(bytes.as_ref().map_or(0, |b| b.len() as u64)),
            Kind::Incoming(body) => body.size_hint(),
            #[cfg(test)]
            Kind::Boxed(body) => body.size_hint(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body::Body as _;

    #[tokio::test]
    async fn full_bodies_say_their_size_and_end() {
        let body = Body::from("abc");
        assert_eq!(body.size_hint().exact(), Some(3));
        assert!(!body.is_end_stream());
        assert_eq!(body.collect_bytes().await.unwrap(), "abc");
        let empty = Body::from(String::new());
        assert!(empty.is_end_stream());
        assert_eq!(empty.size_hint().exact(), Some(0));
        assert!(Body::empty().collect_bytes().await.unwrap().is_empty());
    }
}
