//! The shape of a POST's reply: `202 Accepted`, one JSON body, or an SSE stream, decided from
//! the frames the session routes to the POST's stream.
//!
//! In JSON mode the reply waits for the first frame: a lone response becomes the body; a
//! notification first (progress, logs, a server request) switches the reply to SSE, since a
//! JSON body cannot carry them. In SSE mode every reply with frames is a stream.

use crate::alloc_prelude::*;
use crate::jsonrpc::ErrorCode;
use crate::session::Carries;

/// How the server prefers to answer requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum ReplyMode {
    /// `application/json` when the reply is one response, SSE when it needs more.
    #[default]
    Json,
    /// Always `text/event-stream`.
    Sse,
}

/// What the adapter writes on the POST's HTTP response.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ReplyStep {
    /// `202 Accepted`, no body; the exchange is over.
    Accepted,
    /// A complete `application/json` body with this status; the exchange is over.
    Json {
        /// 200, or 400 for a reply that is only an error about an undecodable message.
        status: u16,
        /// The body.
        body: Vec<u8>,
    },
    /// Start a `200` `text/event-stream` response (send `Cache-Control: no-cache`,
    /// `X-Accel-Buffering: no`), then what follows.
    StartSse,
    /// One JSON text to send as an SSE event (with the adapter's event id, if it logs the
    /// stream) and flush.
    Event(Vec<u8>),
    /// End the SSE stream.
    End,
}

/// Shapes one POST's reply.
///
/// # Examples
///
/// ```
/// use talaria_core::http::reply::{Reply, ReplyMode, ReplyStep};
///
/// use talaria_core::jsonrpc::RequestId;
/// use talaria_core::session::Carries;
///
/// let answer = br#"{"jsonrpc":"2.0","id":1,"result":{}}"#.to_vec();
/// let mut reply = Reply::new(ReplyMode::Json);
/// assert!(reply.frame(&Carries::Result { id: RequestId::Number(1) }, answer.clone()).is_empty());
/// assert_eq!(reply.done(), vec![ReplyStep::Json { status: 200, body: answer }]);
///
/// let mut reply = Reply::new(ReplyMode::Json);
/// let progress = br#"{"jsonrpc":"2.0","method":"notifications/progress","params":{}}"#.to_vec();
/// let steps = reply.frame(&Carries::Notification { method: "notifications/progress".into(), cancels: None }, progress);
/// assert_eq!(steps[0], ReplyStep::StartSse);
/// assert!(matches!(steps[1], ReplyStep::Event(_)));
/// ```
#[derive(Debug)]
pub struct Reply {
    mode: ReplyMode,
    /// Whether the exchange is of the stateless era, where some error answers have their own
    /// HTTP status.
    stateless: bool,
    state: State,
}

/// A response held back for a JSON body.
#[derive(Debug)]
struct Held {
    body: Vec<u8>,
    /// 400 for an error about an undecodable message (the POST itself was bad), the status
    /// of a stateless-era error that has one, else 200.
    status: u16,
}

#[derive(Debug)]
enum State {
    /// Nothing written yet; a JSON-mode response held back.
    Waiting(Option<Held>),
    /// Streaming SSE.
    Streaming,
    /// Over.
    Finished,
}

impl Reply {
    /// A reply in `mode`.
    #[must_use]
    pub const fn new(mode: ReplyMode) -> Self {
        Self { mode, stateless: false, state: State::Waiting(None) }
    }

    /// A reply to a request of the stateless era (2026-07-28), where an error answer that
    /// comes first goes as a JSON body with its own status, in either mode: 404 for an unknown
    /// method (-32601), 400 for a header mismatch, a missing client capability or an
    /// unsupported revision (-32020, -32021, -32022).
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::http::reply::{Reply, ReplyMode, ReplyStep};
    /// use talaria_core::jsonrpc::{ErrorCode, RequestId};
    /// use talaria_core::session::Carries;
    ///
    /// let mut reply = Reply::stateless(ReplyMode::Sse);
    /// let unknown = Carries::Error { id: Some(RequestId::Number(1)), code: ErrorCode::METHOD_NOT_FOUND };
    /// assert!(reply.frame(&unknown, b"{}".to_vec()).is_empty(), "held for its status");
    /// assert_eq!(reply.done(), vec![ReplyStep::Json { status: 404, body: b"{}".to_vec() }]);
    /// ```
    #[must_use]
    pub const fn stateless(mode: ReplyMode) -> Self {
        Self { mode, stateless: true, state: State::Waiting(None) }
    }

    /// The HTTP status a response answers with when it is the whole reply.
    fn status_of(&self, carries: &Carries) -> u16 {
        if carries.is_undecodable_error() {
            return 400;
        }
        match carries.error_code() {
            Some(ErrorCode::METHOD_NOT_FOUND) if self.stateless => 404,
            Some(
                ErrorCode::HEADER_MISMATCH
                | ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY
                | ErrorCode::UNSUPPORTED_PROTOCOL_VERSION,
            ) if self.stateless => 400,
            _ => 200,
        }
    }

    /// Turns the reply into an SSE stream now, if nothing was written yet (the server ends the
    /// stream early for SSE polling, and the client needs a stream to resume): the steps to
    /// start it, with a held response first. Empty if it streams already or is over.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::http::reply::{Reply, ReplyMode, ReplyStep};
    ///
    /// let mut reply = Reply::new(ReplyMode::Json);
    /// assert_eq!(reply.start_stream(), vec![ReplyStep::StartSse]);
    /// assert!(reply.is_streaming());
    /// assert!(reply.start_stream().is_empty());
    /// ```
    pub fn start_stream(&mut self) -> Vec<ReplyStep> {
        match core::mem::replace(&mut self.state, State::Finished) {
            State::Waiting(held) => {
                self.state = State::Streaming;
                let mut steps = vec![ReplyStep::StartSse];
                steps.extend(held.map(|h| ReplyStep::Event(h.body)));
                steps
            }
            other => {
                self.state = other;
                Vec::new()
            }
        }
    }

    /// Nothing came for the adapter's keep-alive interval: a reply with nothing written yet
    /// turns into an SSE stream now (steps as [`Reply::start_stream`]), so that the adapter can
    /// keep it alive and notice a client that closes it (in 2026-07-28, the request's
    /// cancellation). Empty otherwise: a held JSON response goes out as soon as the stream is
    /// done, and a stream is kept alive by the adapter.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::http::reply::{Reply, ReplyMode, ReplyStep};
    ///
    /// let mut reply = Reply::new(ReplyMode::Json);
    /// assert_eq!(reply.idle(), vec![ReplyStep::StartSse]);
    /// assert!(reply.idle().is_empty(), "already streaming");
    ///
    /// use talaria_core::jsonrpc::RequestId;
    /// use talaria_core::session::Carries;
    ///
    /// let mut reply = Reply::new(ReplyMode::Json);
    /// let answer = br#"{"jsonrpc":"2.0","id":1,"result":{}}"#.to_vec();
    /// assert!(reply.frame(&Carries::Result { id: RequestId::Number(1) }, answer).is_empty());
    /// assert!(reply.idle().is_empty(), "the response is held for its JSON body");
    /// ```
    pub fn idle(&mut self) -> Vec<ReplyStep> {
        match self.state {
            State::Waiting(None) => self.start_stream(),
            _ => Vec::new(),
        }
    }

    /// A frame the session routed to this POST's stream: `payload`, which carries `carries`
    /// (from [`Output::Transmit`](crate::session::Output::Transmit)).
    pub fn frame(&mut self, carries: &Carries, payload: Vec<u8>) -> Vec<ReplyStep> {
        match core::mem::replace(&mut self.state, State::Finished) {
            State::Waiting(None)
                if carries.is_response() && (self.mode == ReplyMode::Json || self.status_of(carries) != 200) =>
            {
                let status = self.status_of(carries);
                self.state = State::Waiting(Some(Held { body: payload, status }));
                Vec::new()
            }
            State::Waiting(held) => {
                self.state = State::Streaming;
                let mut steps = vec![ReplyStep::StartSse];
                steps.extend(held.map(|h| ReplyStep::Event(h.body)));
                steps.push(ReplyStep::Event(payload));
                steps
            }
            State::Streaming => {
                self.state = State::Streaming;
                vec![ReplyStep::Event(payload)]
            }
            State::Finished => Vec::new(),
        }
    }

    /// The session is done with this stream (`Output::StreamDone`).
    pub fn done(&mut self) -> Vec<ReplyStep> {
        match core::mem::replace(&mut self.state, State::Finished) {
            State::Waiting(None) => vec![ReplyStep::Accepted],
            State::Waiting(Some(Held { body, status })) => vec![ReplyStep::Json { status, body }],
            State::Streaming => vec![ReplyStep::End],
            State::Finished => Vec::new(),
        }
    }

    /// Whether the reply has started streaming (the client may cancel by closing it).
    #[must_use]
    pub const fn is_streaming(&self) -> bool {
        matches!(self.state, State::Streaming)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)]
    use super::*;
    use crate::jsonrpc::Packet;

    const RESULT: &[u8] = br#"{"jsonrpc":"2.0","id":1,"result":{}}"#;
    const PROGRESS: &[u8] = br#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}"#;

    /// What `frame` carries, as the session would have said.
    fn carries(frame: &[u8]) -> Carries {
        match Packet::from_slice(frame).unwrap() {
            Packet::Single(message) => message.into(),
            Packet::Batch(items) => Carries::from(items.into_iter().map(Result::unwrap).collect::<Vec<_>>().as_slice()),
        }
    }

    fn feed(reply: &mut Reply, frame: &[u8]) -> Vec<ReplyStep> {
        reply.frame(&carries(frame), frame.to_vec())
    }

    fn run(mode: ReplyMode, frames: &[&[u8]]) -> Vec<ReplyStep> {
        let mut reply = Reply::new(mode);
        let mut steps: Vec<ReplyStep> = frames.iter().flat_map(|f| feed(&mut reply, f)).collect();
        steps.extend(reply.done());
        steps.extend(reply.done());
        steps
    }

    #[test]
    fn the_shape_follows_the_frames() {
        assert_eq!(run(ReplyMode::Json, &[]), vec![ReplyStep::Accepted]);
        assert_eq!(run(ReplyMode::Json, &[RESULT]), vec![ReplyStep::Json { status: 200, body: RESULT.to_vec() }]);
        let parse_error = br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#;
        assert_eq!(
            run(ReplyMode::Json, &[parse_error])[0],
            ReplyStep::Json { status: 400, body: parse_error.to_vec() }
        );
        let streamed = run(ReplyMode::Json, &[PROGRESS, RESULT]);
        assert_eq!(streamed.len(), 4, "{streamed:?}");
        assert_eq!((&streamed[0], &streamed[3]), (&ReplyStep::StartSse, &ReplyStep::End));
        let sse = run(ReplyMode::Sse, &[RESULT]);
        assert_eq!(sse.len(), 3);
        assert_eq!(sse[1], ReplyStep::Event(RESULT.to_vec()));
    }

    #[test]
    fn a_reply_can_be_made_a_stream_early() {
        let mut reply = Reply::new(ReplyMode::Sse);
        assert_eq!(reply.start_stream(), vec![ReplyStep::StartSse]);
        assert_eq!(feed(&mut reply, RESULT), vec![ReplyStep::Event(RESULT.to_vec())]);
        assert_eq!(reply.done(), vec![ReplyStep::End]);
        let mut held = Reply::new(ReplyMode::Json);
        assert!(feed(&mut held, RESULT).is_empty());
        assert_eq!(held.start_stream(), vec![ReplyStep::StartSse, ReplyStep::Event(RESULT.to_vec())]);
        let mut over = Reply::new(ReplyMode::Json);
        let _ = over.done();
        assert!(over.start_stream().is_empty());
        assert!(over.done().is_empty());
    }

    #[test]
    fn a_held_response_comes_out_first_when_the_reply_turns_into_a_stream() {
        let steps = run(ReplyMode::Json, &[RESULT, PROGRESS]);
        assert_eq!(steps[1], ReplyStep::Event(RESULT.to_vec()));
    }
}
