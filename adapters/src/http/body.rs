//! The server's response bodies: a whole one, or a stream (SSE) that a task fills as frames
//! come, with a way for that task to learn at once that the client is gone.

use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use hyper::body::{Frame, SizeHint};
use smol::channel::{bounded, Receiver, Sender};
use smol::stream::Stream;

/// How many pieces a streamed body holds before its writer waits for the connection.
const STREAM_DEPTH: usize = 16;

/// A response body.
pub(super) enum Body {
    /// All of it (`None` once sent).
    Whole(Option<Bytes>),
    /// Pieces from a [`BodyWriter`], until it is dropped.
    Streamed {
        pieces: Pin<Box<Receiver<Bytes>>>,
        /// Dropped with the body: tells the writer that nobody reads any more.
        _alive: Sender<()>,
    },
}

impl Body {
    /// A whole body.
    pub(super) fn whole(bytes: impl Into<Bytes>) -> Self {
        Self::Whole(Some(bytes.into()))
    }

    /// An empty body.
    pub(super) const fn empty() -> Self {
        Self::Whole(None)
    }

    /// A streamed body and its writer.
    pub(super) fn streamed() -> (Self, BodyWriter) {
        let (send, pieces) = bounded(STREAM_DEPTH);
        let (alive, gone) = bounded(1);
        (Self::Streamed { pieces: Box::pin(pieces), _alive: alive }, BodyWriter { send, gone })
    }
}

impl hyper::body::Body for Body {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        match self.get_mut() {
            Self::Whole(bytes) => Poll::Ready(bytes.take().map(|b| Ok(Frame::data(b)))),
            Self::Streamed { pieces, .. } => {
                pieces.as_mut().poll_next(cx).map(|piece| piece.map(|b| Ok(Frame::data(b))))
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        matches!(self, Self::Whole(None))
    }

    fn size_hint(&self) -> SizeHint {
        match self {
            Self::Whole(bytes) => SizeHint::with_exact(bytes.as_ref().map_or(0, |b| b.len() as u64)),
            Self::Streamed { .. } => SizeHint::default(),
        }
    }
}

/// Writes a streamed [`Body`]; the body ends when the writer is dropped.
pub(super) struct BodyWriter {
    send: Sender<Bytes>,
    gone: Receiver<()>,
}

impl BodyWriter {
    /// Sends `bytes` (waiting while the connection is behind); `false` if the client is gone.
    pub(super) async fn write(&self, bytes: impl Into<Bytes>) -> bool {
        self.send.send(bytes.into()).await.is_ok()
    }

    /// Resolves once the body is dropped: the connection closed (or failed) under it.
    pub(super) async fn gone(&self) {
        // Nothing is ever sent on it: this ends when the body's end of it is dropped.
        let _ = self.gone.recv().await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hyper::body::Body as _;

    fn next(body: &mut Body) -> Poll<Option<Bytes>> {
        let waker = std::task::Waker::noop();
        let mut cx = Context::from_waker(waker);
        Pin::new(body)
            .poll_frame(&mut cx)
            .map(|f| f.map(|f| f.ok().and_then(|f| f.into_data().ok()).unwrap_or_default()))
    }

    #[test]
    fn a_whole_body_is_one_piece_of_known_length() {
        let mut body = Body::whole(&b"{}"[..]);
        assert_eq!(body.size_hint().exact(), Some(2));
        assert_eq!(next(&mut body), Poll::Ready(Some(Bytes::from_static(b"{}"))));
        assert!(body.is_end_stream());
        assert_eq!(next(&mut body), Poll::Ready(None));
    }

    #[test]
    fn a_streamed_body_carries_what_is_written_and_ends_with_its_writer() {
        let (mut body, writer) = Body::streamed();
        assert_eq!(body.size_hint().exact(), None);
        assert_eq!(next(&mut body), Poll::Pending);
        assert!(smol::block_on(writer.write(&b"data: 1\n\n"[..])));
        assert_eq!(next(&mut body), Poll::Ready(Some(Bytes::from_static(b"data: 1\n\n"))));
        drop(writer);
        assert_eq!(next(&mut body), Poll::Ready(None));
    }

    #[test]
    fn the_writer_learns_when_the_body_is_dropped() {
        let (body, writer) = Body::streamed();
        assert!(smol::block_on(smol::future::poll_once(writer.gone())).is_none(), "gone too soon");
        drop(body);
        smol::block_on(writer.gone());
        assert!(!smol::block_on(writer.write(&b"late"[..])));
    }
}
