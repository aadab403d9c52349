//! The shape of a POST's reply: `202 Accepted`, one JSON body, or an SSE stream, decided from
//! the frames the session routes to the POST's stream.
//!
//! In JSON mode the reply waits for the first frame: a lone response becomes the body; a
//! notification first (progress, logs, a server request) switches the reply to SSE, since a
//! JSON body cannot carry them. In SSE mode every reply with frames is a stream.

use crate::codec::{encode_event, SseEvent};

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
    /// One SSE event (already encoded) to write and flush.
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
/// let mut reply = Reply::new(ReplyMode::Json);
/// assert!(reply.frame(br#"{"jsonrpc":"2.0","id":1,"result":{}}"#.to_vec()).is_empty());
/// assert_eq!(reply.done(), vec![ReplyStep::Json { status: 200, body: br#"{"jsonrpc":"2.0","id":1,"result":{}}"#.to_vec() }]);
///
/// let mut reply = Reply::new(ReplyMode::Json);
/// let progress = br#"{"jsonrpc":"2.0","method":"notifications/progress","params":{}}"#.to_vec();
/// let steps = reply.frame(progress);
/// assert_eq!(steps[0], ReplyStep::StartSse);
/// assert!(matches!(steps[1], ReplyStep::Event(_)));
/// ```
#[derive(Debug)]
pub struct Reply {
    mode: ReplyMode,
    state: State,
    /// Event ids (`<prefix><n>`) for resumable streams, if the adapter asked for them.
    ids: Option<(String, u64)>,
}

#[derive(Debug)]
enum State {
    /// Nothing written yet; a JSON-mode response held back.
    Waiting(Option<Vec<u8>>),
    /// Streaming SSE.
    Streaming,
    /// Over.
    Finished,
}

impl Reply {
    /// A reply in `mode`.
    #[must_use]
    pub const fn new(mode: ReplyMode) -> Self {
        Self { mode, state: State::Waiting(None), ids: None }
    }

    /// Gives SSE events ids `<prefix>1`, `<prefix>2`, ... (for an event log).
    #[must_use]
    pub fn with_event_ids(mut self, prefix: impl Into<String>) -> Self {
        self.ids = Some((prefix.into(), 0));
        self
    }

    fn event(&mut self, payload: &[u8]) -> ReplyStep {
        let text = String::from_utf8_lossy(payload);
        let id = self.ids.as_mut().map(|(prefix, n)| {
            *n += 1;
            format!("{prefix}{n}")
        });
        let mut event = SseEvent::message(text);
        event.id = id;
        let mut out = Vec::with_capacity(payload.len() + 16);
        encode_event(&event, &mut out);
        ReplyStep::Event(out)
    }

    /// A frame the session routed to this POST's stream.
    pub fn frame(&mut self, payload: Vec<u8>) -> Vec<ReplyStep> {
        match std::mem::replace(&mut self.state, State::Finished) {
            State::Waiting(None) if self.mode == ReplyMode::Json && is_response(&payload) => {
                self.state = State::Waiting(Some(payload));
                Vec::new()
            }
            State::Waiting(held) => {
                self.state = State::Streaming;
                let mut steps = vec![ReplyStep::StartSse];
                if let Some(held) = held {
                    steps.push(self.event(&held));
                }
                steps.push(self.event(&payload));
                steps
            }
            State::Streaming => {
                self.state = State::Streaming;
                vec![self.event(&payload)]
            }
            State::Finished => Vec::new(),
        }
    }

    /// The session is done with this stream (`Output::StreamDone`).
    pub fn done(&mut self) -> Vec<ReplyStep> {
        match std::mem::replace(&mut self.state, State::Finished) {
            State::Waiting(None) => vec![ReplyStep::Accepted],
            State::Waiting(Some(body)) => {
                let status = if is_undecodable_error(&body) { 400 } else { 200 };
                vec![ReplyStep::Json { status, body }]
            }
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

#[derive(serde::Deserialize)]
struct Shape<'a> {
    #[serde(borrow, default)]
    method: Option<&'a serde_json::value::RawValue>,
    #[serde(borrow, default)]
    id: Option<&'a serde_json::value::RawValue>,
    #[serde(borrow, default)]
    error: Option<&'a serde_json::value::RawValue>,
}

/// Whether `payload` is a response (or a batch of them), not a notification or request.
fn is_response(payload: &[u8]) -> bool {
    if payload.first() == Some(&b'[') {
        return true;
    }
    serde_json::from_slice::<Shape<'_>>(payload).is_ok_and(|s| s.method.is_none())
}

/// Whether `payload` is an error about a message that had no usable id (parse error,
/// invalid request): the POST itself was bad.
fn is_undecodable_error(payload: &[u8]) -> bool {
    serde_json::from_slice::<Shape<'_>>(payload)
        .is_ok_and(|s| s.error.is_some() && s.id.is_none_or(|id| id.get() == "null"))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)]
    use super::*;

    const RESULT: &[u8] = br#"{"jsonrpc":"2.0","id":1,"result":{}}"#;
    const PROGRESS: &[u8] = br#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}"#;

    fn run(mode: ReplyMode, frames: &[&[u8]]) -> Vec<ReplyStep> {
        let mut reply = Reply::new(mode);
        let mut steps: Vec<ReplyStep> = frames.iter().flat_map(|f| reply.frame(f.to_vec())).collect();
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
        assert_eq!(sse[1], ReplyStep::Event(b"data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n".to_vec()));
    }

    #[test]
    fn events_carry_ids_when_asked() {
        let mut reply = Reply::new(ReplyMode::Sse).with_event_ids("7-");
        let steps = reply.frame(PROGRESS.to_vec());
        let ReplyStep::Event(first) = &steps[1] else { panic!("{steps:?}") };
        assert!(String::from_utf8_lossy(first).starts_with("id: 7-1\n"), "{}", String::from_utf8_lossy(first));
        let ReplyStep::Event(second) = &reply.frame(RESULT.to_vec())[0] else { panic!() };
        assert!(String::from_utf8_lossy(second).starts_with("id: 7-2\n"));
    }

    #[test]
    fn a_held_response_comes_out_first_when_the_reply_turns_into_a_stream() {
        let steps = run(ReplyMode::Json, &[RESULT, PROGRESS]);
        let ReplyStep::Event(first) = &steps[1] else { panic!("{steps:?}") };
        assert!(String::from_utf8_lossy(first).contains("\"result\""));
    }
}
