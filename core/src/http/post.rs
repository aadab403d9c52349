//! One POST of the Streamable HTTP client, as a step machine: what to read of the answer, what
//! to feed the session, when the calls fail, when a cut SSE reply is resumed. The blocking and
//! the smol clients each carry it out with a short loop; they send, read, wait and feed, and
//! decide nothing.
//!
//! ```text
//! POST --- failed -------------------------> FailCalls
//!  |
//! head --- 202, or nothing owed -----------> Drain
//!  |------ 404 on a session ---------------> Drain --> SessionLost
//!  |------ JSON ---------------------------> ReadWhole --> Feed | FailCalls (too big, cut)
//!  |------ error status -------------------> ReadWhole --> Refused, then a Feed per request
//!  '------ SSE --> ReadSse --> Event... to the body's end
//!                    ^            |
//!                    |            |-- answered, not a lone request, or no session left --> over
//!                    |            v
//!                    |          Resume: wait the `retry`, GET with Last-Event-ID
//!                    |            |-- failed, or nothing new: Resume again, at most
//!                    |            |   MAX_FRUITLESS_RESUMES in a row
//!                    |            |-- given up, or not 200 --> Unanswered
//!                    '- head 200 -'   (a resumed stream is read up to the response)
//! ```

use crate::alloc_prelude::*;
use alloc::collections::VecDeque;
use core::time::Duration;

use crate::codec::SseEvent;
use crate::jsonrpc::{ErrorObject, RequestId};

use super::client::{refused, Answer, ClientLink, Outgoing, Refused, ResponseHead, Resumption, SseReading};

/// Why the session is told it was lost.
const SESSION_LOST: &str = "the server forgot the session (HTTP 404)";

/// How much of an answer's body a client reads into memory.
///
/// # Examples
///
/// ```
/// use talaria_core::http::post::BodyLimits;
///
/// let limits = BodyLimits { reply: 64 << 20, refusal: 1 << 20 };
/// assert!(limits.reply > limits.refusal);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BodyLimits {
    /// The largest JSON reply; a larger one fails its calls (the client adapters use 64 MiB).
    pub reply: usize,
    /// The most of an error answer's body read for its JSON-RPC error (the adapters use 1 MiB).
    pub refusal: usize,
}

/// What the adapter does next for a [`PostExchange`].
///
/// The I/O steps ([`Drain`](Self::Drain), [`ReadWhole`](Self::ReadWhole),
/// [`ReadSse`](Self::ReadSse), [`Resume`](Self::Resume)) each come last and wait for the input
/// they name; the others are done at once.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum PostStep {
    /// Read the body and throw it away, so the connection is reused (an adapter reads at most
    /// a limit of its own); then [`PostExchange::body_end`].
    Drain,
    /// Read the whole body, at most `limit` bytes: hand it to [`PostExchange::body`], or a
    /// failure (a larger body, a broken one) to [`PostExchange::failed`].
    ReadWhole {
        /// The most the body may hold.
        limit: usize,
    },
    /// Read the next bytes of the SSE body: hand them to [`PostExchange::sse`], or its end
    /// (or a broken read) to [`PostExchange::body_end`].
    ReadSse,
    /// The reply stream was cut before its response. Unless the exchange is moot (the client
    /// is closing, or the session no longer awaits the request: then drop it), wait `after`,
    /// then GET the stream with [`ClientLink::stream_headers`]`(Some(&last_event_id))` and
    /// hand its head to [`PostExchange::head`], or a failure to [`PostExchange::failed`].
    Resume {
        /// How long to wait first (the server's `retry`, else a default).
        after: Duration,
        /// Where the stream resumes.
        last_event_id: String,
    },
    /// An event of an SSE body: trace it if the adapter traces; its data, if not empty, is a
    /// frame for the session (`handle_frame`).
    Event(SseEvent),
    /// A frame the server sent, for the session (`handle_frame`): a JSON reply.
    Feed(Vec<u8>),
    /// The server refused the request `id` with an HTTP error: it fails with `error` (the
    /// body's JSON-RPC error, or one naming the status) through `Session::refused`, which
    /// feeds no frame (a wire trace shows only what the server sent).
    Reject {
        /// The request.
        id: RequestId,
        /// The error it fails with.
        error: ErrorObject,
    },
    /// The exchange failed: each of these calls fails with a transport error giving `why`
    /// (`Session::transport_failed`).
    FailCalls {
        /// The requests the message owed answers to.
        ids: Vec<RequestId>,
        /// What went wrong.
        why: String,
    },
    /// The server forgot the session (`404`): tell the session (`Session::session_lost`), so
    /// that calls in flight fail and a new handshake starts.
    SessionLost {
        /// The reason to give.
        why: &'static str,
    },
    /// The server refused a request with an error `status`: note the refusal (the connect
    /// error and the backwards-compatibility probe report the first). One
    /// [`Reject`](Self::Reject) per request follows (a JSON-RPC error body), or one
    /// [`FailCalls`](Self::FailCalls) (a bare HTTP error).
    Refused {
        /// The status.
        status: u16,
        /// What the body said.
        refusal: Refused,
    },
    /// The reply stream ended for good without the response to request `id`: unless the
    /// exchange is moot (as for [`Resume`](Self::Resume)), the call fails with a transport
    /// error ([`UNANSWERED`](super::client::UNANSWERED), `Session::transport_failed`), so it does not hang.
    Unanswered(RequestId),
}

/// One POST of a Streamable HTTP client, from its answer's head to the last frame it owes the
/// session: the steps the adapter takes, and the inputs it hands back.
///
/// Call order: send the POST; hand its head to [`head`](Self::head) (or a failure to
/// [`failed`](Self::failed)); then poll [`poll_step`](Self::poll_step) until `None`, doing
/// each step, and answering each I/O step with the input it names before polling again. The
/// [`ClientLink`] is borrowed per input, since it is shared by all of a client's requests. An
/// input out of turn is ignored.
///
/// # Examples
///
/// ```
/// use talaria_core::http::client::{ClientLink, Outgoing, ResponseHead};
/// use talaria_core::http::post::{BodyLimits, PostExchange, PostStep};
/// use talaria_core::jsonrpc::{Message, Request};
/// use talaria_core::session::Carries;
///
/// let message: Message = Request::new(1, "tools/list", None::<()>).unwrap().into();
/// let call = Outgoing::new(&Carries::from(&message), &message.to_vec());
/// let mut link = ClientLink::new();
/// let limits = BodyLimits { reply: 1 << 20, refusal: 1 << 10 };
/// let mut post = PostExchange::new(&call, "http://h/mcp", limits);
///
/// // The answer is an SSE stream, cut after a progress event with an id.
/// post.head(&mut link, &ResponseHead { status: 200, content_type: Some("text/event-stream"), session_id: Some("s") });
/// assert_eq!(post.poll_step(), Some(PostStep::ReadSse));
/// post.sse(&mut link, b"id: e1\nretry: 10\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n\n");
/// assert!(matches!(post.poll_step(), Some(PostStep::Event(_))));
/// assert_eq!(post.poll_step(), Some(PostStep::ReadSse));
/// post.body_end(&link);
/// let Some(PostStep::Resume { after, last_event_id }) = post.poll_step() else { panic!() };
/// assert_eq!((after.as_millis(), last_event_id.as_str()), (10, "e1"));
///
/// // The resumed stream brings the response: the exchange is over.
/// post.head(&mut link, &ResponseHead { status: 200, content_type: Some("text/event-stream"), session_id: None });
/// assert_eq!(post.poll_step(), Some(PostStep::ReadSse));
/// post.sse(&mut link, b"id: e2\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n");
/// assert!(matches!(post.poll_step(), Some(PostStep::Event(_))));
/// assert_eq!(post.poll_step(), None);
/// ```
#[derive(Debug)]
pub struct PostExchange<'a> {
    message: &'a Outgoing,
    /// The endpoint, named in refusals without a JSON-RPC error.
    url: &'a str,
    limits: BodyLimits,
    state: State,
    steps: VecDeque<PostStep>,
}

/// Where the exchange is, and what input it waits for.
#[derive(Debug)]
enum State {
    /// The POST's head, or its failure.
    Sent,
    /// The end of a drained body; then, if the server lost the session, say so.
    Draining { lost: bool },
    /// A JSON reply.
    Reading,
    /// An error answer's body.
    ReadingRefusal { status: u16 },
    /// The POST's SSE reply.
    Following(SseReading),
    /// A resumed GET's head, or its failure.
    Resuming(Resumption),
    /// A resumed stream.
    Resumed(Resumption, SseReading),
    /// Over.
    Done,
}

impl<'a> PostExchange<'a> {
    /// The exchange of the POST carrying `message` to `url`, reading bodies up to `limits`.
    #[must_use]
    pub const fn new(message: &'a Outgoing, url: &'a str, limits: BodyLimits) -> Self {
        Self { message, url, limits, state: State::Sent, steps: VecDeque::new() }
    }

    /// The next step, in order. `None` with no input owed: the exchange is over.
    #[must_use]
    pub fn poll_step(&mut self) -> Option<PostStep> {
        self.steps.pop_front()
    }

    /// The head of the POST's answer (the link notes its session id, or forgets a lost
    /// session), or of a resumed GET ([`PostStep::Resume`]).
    pub fn head(&mut self, link: &mut ClientLink, head: &ResponseHead<'_>) {
        match core::mem::replace(&mut self.state, State::Done) {
            State::Sent => {
                let answer = link.answer(self.message, head);
                let (state, step) = match answer {
                    Answer::Drain => (State::Draining { lost: false }, PostStep::Drain),
                    Answer::SessionLost => (State::Draining { lost: true }, PostStep::Drain),
                    Answer::Json => (State::Reading, PostStep::ReadWhole { limit: self.limits.reply }),
                    Answer::Refused => (
                        State::ReadingRefusal { status: head.status },
                        PostStep::ReadWhole { limit: self.limits.refusal },
                    ),
                    Answer::Stream => {
                        (State::Following(SseReading::new(self.message.request_id().cloned())), PostStep::ReadSse)
                    }
                };
                self.state = state;
                self.steps.push_back(step);
            }
            State::Resuming(resumption) if head.status == 200 => {
                let reading = SseReading::new(self.message.request_id().cloned());
                self.state = State::Resumed(resumption, reading);
                self.steps.push_back(PostStep::ReadSse);
            }
            // The stream cannot be resumed.
            State::Resuming(_) => self.unanswered(),
            other => self.state = other,
        }
    }

    /// The whole body a [`PostStep::ReadWhole`] read.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::http::client::{ClientLink, Outgoing, ResponseHead};
    /// use talaria_core::http::post::{BodyLimits, PostExchange, PostStep};
    /// use talaria_core::jsonrpc::{Message, Request};
    /// use talaria_core::session::Carries;
    ///
    /// let message: Message = Request::new(1, "ping", None::<()>).unwrap().into();
    /// let call = Outgoing::new(&Carries::from(&message), &message.to_vec());
    /// let mut link = ClientLink::new();
    /// let mut post = PostExchange::new(&call, "http://h/mcp", BodyLimits { reply: 1 << 20, refusal: 1 << 10 });
    /// post.head(&mut link, &ResponseHead { status: 200, content_type: Some("application/json"), session_id: None });
    /// assert_eq!(post.poll_step(), Some(PostStep::ReadWhole { limit: 1 << 20 }));
    /// let reply = br#"{"jsonrpc":"2.0","id":1,"result":{}}"#.to_vec();
    /// post.body(&mut link, reply.clone());
    /// assert_eq!(post.poll_step(), Some(PostStep::Feed(reply)));
    /// assert_eq!(post.poll_step(), None);
    /// ```
    pub fn body(&mut self, link: &mut ClientLink, body: Vec<u8>) {
        match core::mem::replace(&mut self.state, State::Done) {
            State::Reading => {
                link.learn_version(&body);
                link.learn_tools(self.message, &body);
                self.steps.push_back(PostStep::Feed(body));
            }
            State::ReadingRefusal { status } => self.refused(status, &body),
            other => self.state = other,
        }
    }

    /// The next bytes of the SSE body a [`PostStep::ReadSse`] read. A resumed stream is read
    /// up to the response (the server may keep it open); the POST's own, to its end.
    pub fn sse(&mut self, link: &mut ClientLink, bytes: &[u8]) {
        let (State::Following(reading) | State::Resumed(_, reading)) = &mut self.state else { return };
        let (steps, message) = (&mut self.steps, self.message);
        reading.feed_owned(bytes, |event| {
            if !event.data.is_empty() {
                link.learn_version(event.data.as_bytes());
                link.learn_tools(message, event.data.as_bytes());
            }
            steps.push_back(PostStep::Event(event));
        });
        match core::mem::replace(&mut self.state, State::Done) {
            State::Resumed(_, reading) if reading.answered() => {}
            other => {
                self.state = other;
                self.steps.push_back(PostStep::ReadSse);
            }
        }
    }

    /// The body a [`PostStep::Drain`] or a [`PostStep::ReadSse`] was reading ended, or broke
    /// off.
    pub fn body_end(&mut self, link: &ClientLink) {
        match core::mem::replace(&mut self.state, State::Done) {
            State::Draining { lost } => {
                if lost {
                    self.steps.push_back(PostStep::SessionLost { why: SESSION_LOST });
                }
            }
            State::Following(reading) => {
                // Only a lone request's stream is resumed (a batch's, or a notification's, is
                // over when it ends).
                if self.message.request_id().is_some() {
                    self.attempt(link, Resumption::after(&reading));
                }
            }
            State::Resumed(mut resumption, reading) => {
                resumption.resumed(&reading);
                self.attempt(link, resumption);
            }
            other => self.state = other,
        }
    }

    /// The POST, or a resumed GET, could not be made, or a body could not be read
    /// ([`PostStep::ReadWhole`]): `why`. A POST's calls fail with it; a refusal's body is
    /// taken for empty; a resumption is tried again, as far as [`Resumption`] allows.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::http::client::{ClientLink, Outgoing};
    /// use talaria_core::http::post::{BodyLimits, PostExchange, PostStep};
    /// use talaria_core::jsonrpc::{Message, Request, RequestId};
    /// use talaria_core::session::Carries;
    ///
    /// let message: Message = Request::new(1, "ping", None::<()>).unwrap().into();
    /// let call = Outgoing::new(&Carries::from(&message), &message.to_vec());
    /// let mut post = PostExchange::new(&call, "http://h/mcp", BodyLimits { reply: 1 << 20, refusal: 1 << 10 });
    /// post.failed(&ClientLink::new(), "HTTP transport: connection refused".to_owned());
    /// let ids = vec![RequestId::Number(1)];
    /// let why = "HTTP transport: connection refused".to_owned();
    /// assert_eq!(post.poll_step(), Some(PostStep::FailCalls { ids, why }));
    /// ```
    pub fn failed(&mut self, link: &ClientLink, why: String) {
        match core::mem::replace(&mut self.state, State::Done) {
            State::Sent | State::Reading => {
                let ids = self.message.answers_due().to_vec();
                if !ids.is_empty() {
                    self.steps.push_back(PostStep::FailCalls { ids, why });
                }
            }
            // A refusal's body is read for its JSON-RPC error only: a cut one still says 4xx.
            State::ReadingRefusal { status } => self.refused(status, &[]),
            State::Resuming(mut resumption) => {
                resumption.failed();
                self.attempt(link, resumption);
            }
            other => {
                self.state = other;
                self.body_end(link);
            }
        }
    }

    /// An error answer's `body`: each request of the message gets its JSON-RPC error (or one
    /// naming the status).
    fn refused(&mut self, status: u16, body: &[u8]) {
        if !self.message.is_request() {
            return;
        }
        let refusal = refused(status, body, self.url);
        let ids = self.message.answers_due().to_vec();
        // The server's JSON-RPC error is its answer; a bare HTTP error is a transport failure.
        let outcome: Vec<PostStep> = if refusal.jsonrpc {
            ids.into_iter().map(|id| PostStep::Reject { id, error: refusal.error.clone() }).collect()
        } else {
            vec![PostStep::FailCalls { ids, why: refusal.error.message.clone() }]
        };
        self.steps.push_back(PostStep::Refused { status, refusal });
        self.steps.extend(outcome);
    }

    /// The reply stream ended without its response, or with it: resume it if [`Resumption`]
    /// says so and the session is still there, give the call up if it cannot be resumed.
    fn attempt(&mut self, link: &ClientLink, resumption: Resumption) {
        match resumption.next() {
            // The server forgot the session: the calls are failed as that is handled.
            Some(_) if link.session_id().is_none() => {}
            Some((after, last_event_id)) => {
                let last_event_id = last_event_id.to_owned();
                self.steps.push_back(PostStep::Resume { after, last_event_id });
                self.state = State::Resuming(resumption);
            }
            None if resumption.answered() => {}
            None => self.unanswered(),
        }
    }

    /// Gives the awaited response up.
    fn unanswered(&mut self) {
        if let Some(id) = self.message.request_id() {
            self.steps.push_back(PostStep::Unanswered(id.clone()));
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use crate::http::client::MAX_FRUITLESS_RESUMES;
    use crate::jsonrpc::{Message, Packet};
    use crate::session::Carries;

    const URL: &str = "http://h/mcp";
    const LIMITS: BodyLimits = BodyLimits { reply: 1000, refusal: 100 };
    const CALL: &[u8] = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}"#;
    const NOTE: &[u8] = br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    const ANSWER: &[u8] = br#"{"jsonrpc":"2.0","id":1,"result":{}}"#;
    const PROGRESS: &str = r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}"#;

    fn outgoing(payload: &[u8]) -> Outgoing {
        let carries = match Packet::from_slice(payload).unwrap() {
            Packet::Single(message) => Carries::from(message),
            Packet::Batch(items) => {
                Carries::from(items.into_iter().map(Result::unwrap).collect::<Vec<Message>>().as_slice())
            }
        };
        Outgoing::new(&carries, payload)
    }

    fn head(status: u16, content_type: Option<&'static str>) -> ResponseHead<'static> {
        ResponseHead { status, content_type, session_id: None }
    }

    const SSE: Option<&str> = Some("text/event-stream");
    const JSON: Option<&str> = Some("application/json");

    /// A link in a session, as after the handshake.
    fn in_session() -> ClientLink {
        let mut link = ClientLink::new();
        let init = outgoing(br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}"#);
        link.answer(&init, &ResponseHead { status: 200, content_type: JSON, session_id: Some("s") });
        link
    }

    fn steps(post: &mut PostExchange<'_>) -> Vec<PostStep> {
        core::iter::from_fn(|| post.poll_step()).collect()
    }

    fn event(id: &str, data: &str) -> Vec<u8> {
        format!("id: {id}\ndata: {data}\n\n").into_bytes()
    }

    /// The data of the events among `steps`, and the steps that are not events.
    fn split(steps: Vec<PostStep>) -> (Vec<String>, Vec<PostStep>) {
        let mut data = Vec::new();
        let mut rest = Vec::new();
        for step in steps {
            match step {
                PostStep::Event(event) => data.push(event.data),
                other => rest.push(other),
            }
        }
        (data, rest)
    }

    fn resume_after_7ms(last_event_id: &str) -> PostStep {
        PostStep::Resume { after: Duration::from_millis(7), last_event_id: last_event_id.to_owned() }
    }

    fn unanswered_call() -> PostStep {
        PostStep::Unanswered(RequestId::Number(1))
    }

    #[test]
    fn nothing_owed_is_drained() {
        for (message, answer) in [(CALL, head(202, None)), (NOTE, head(200, JSON)), (NOTE, head(202, SSE))] {
            let message = outgoing(message);
            let mut link = in_session();
            let mut post = PostExchange::new(&message, URL, LIMITS);
            assert!(steps(&mut post).is_empty(), "nothing before the head");
            post.head(&mut link, &answer);
            assert_eq!(steps(&mut post), vec![PostStep::Drain]);
            post.body_end(&link);
            assert!(steps(&mut post).is_empty());
        }
    }

    #[test]
    fn a_json_reply_is_fed_whole_and_its_version_learned() {
        let init = outgoing(br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}"#);
        let mut link = ClientLink::new();
        let mut post = PostExchange::new(&init, URL, LIMITS);
        post.head(&mut link, &ResponseHead { status: 200, content_type: JSON, session_id: Some("s9") });
        assert_eq!(steps(&mut post), vec![PostStep::ReadWhole { limit: 1000 }]);
        let reply = br#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25"}}"#.to_vec();
        post.body(&mut link, reply.clone());
        assert_eq!(steps(&mut post), vec![PostStep::Feed(reply)]);
        assert_eq!(link.session_id(), Some("s9"));
        assert!(link.stream_headers(None).contains(&("MCP-Protocol-Version", "2025-11-25".to_owned())));
        // Over: later inputs are out of turn.
        post.body(&mut link, ANSWER.to_vec());
        post.body_end(&link);
        post.failed(&link, "late".into());
        assert!(steps(&mut post).is_empty());
    }

    #[test]
    fn a_reply_that_cannot_be_read_fails_the_calls() {
        let batch = outgoing(br#"[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}]"#);
        let mut link = in_session();
        let mut post = PostExchange::new(&batch, URL, LIMITS);
        post.head(&mut link, &head(200, JSON));
        assert_eq!(steps(&mut post), vec![PostStep::ReadWhole { limit: 1000 }]);
        post.failed(&link, "HTTP transport: the response is larger than 1000 bytes".into());
        let ids = vec![RequestId::Number(1), RequestId::Number(2)];
        let why = "HTTP transport: the response is larger than 1000 bytes".to_owned();
        assert_eq!(steps(&mut post), vec![PostStep::FailCalls { ids, why }]);
    }

    #[test]
    fn a_post_that_cannot_be_made_fails_its_calls_only() {
        let call = outgoing(CALL);
        let mut post = PostExchange::new(&call, URL, LIMITS);
        post.failed(&ClientLink::new(), "HTTP transport: refused".into());
        let fail = PostStep::FailCalls { ids: vec![RequestId::Number(1)], why: "HTTP transport: refused".into() };
        assert_eq!(steps(&mut post), vec![fail]);
        post.head(&mut ClientLink::new(), &head(200, JSON));
        assert!(steps(&mut post).is_empty(), "over");
        let note = outgoing(NOTE);
        let mut post = PostExchange::new(&note, URL, LIMITS);
        post.failed(&ClientLink::new(), "HTTP transport: refused".into());
        assert!(steps(&mut post).is_empty(), "no call to fail");
    }

    #[test]
    fn a_lost_session_is_drained_then_told() {
        let call = outgoing(CALL);
        let mut link = in_session();
        let mut post = PostExchange::new(&call, URL, LIMITS);
        post.head(&mut link, &head(404, None));
        assert_eq!(steps(&mut post), vec![PostStep::Drain]);
        assert_eq!(link.session_id(), None);
        post.body_end(&link);
        assert_eq!(steps(&mut post), vec![PostStep::SessionLost { why: SESSION_LOST }]);
    }

    #[test]
    fn refusals_answer_each_request_with_the_body_error() {
        let call = outgoing(CALL);
        let mut link = ClientLink::new();
        let mut post = PostExchange::new(&call, URL, LIMITS);
        post.head(&mut link, &head(400, JSON));
        assert_eq!(steps(&mut post), vec![PostStep::ReadWhole { limit: 100 }]);
        post.body(&mut link, br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32020,"message":"bad header"}}"#.to_vec());
        let steps = steps(&mut post);
        let [PostStep::Refused { status: 400, refusal }, PostStep::Reject { id, error }] = steps.as_slice() else {
            panic!("{steps:?}")
        };
        assert!(refusal.modern);
        assert_eq!(refusal.detail.as_deref(), Some("bad header"));
        assert_eq!((id, error.code.0), (&RequestId::Number(1), -32020), "the call fails with the body's error");
    }

    #[test]
    fn a_refusal_whose_body_breaks_names_the_status_and_a_notification_is_not_answered() {
        let call = outgoing(CALL);
        let mut link = ClientLink::new();
        let mut post = PostExchange::new(&call, URL, LIMITS);
        post.head(&mut link, &head(503, None));
        let _ = steps(&mut post);
        post.failed(&link, "HTTP transport: reset".into());
        let steps = steps(&mut post);
        let [PostStep::Refused { status: 503, refusal }, PostStep::FailCalls { .. }] = steps.as_slice() else {
            panic!("{steps:?}")
        };
        assert!(!refusal.modern && refusal.error.message.contains("HTTP 503 from http://h/mcp"), "{refusal:?}");
        let note = outgoing(NOTE);
        let mut post = PostExchange::new(&note, URL, LIMITS);
        post.head(&mut link, &head(500, None));
        assert_eq!(post.poll_step(), Some(PostStep::ReadWhole { limit: 100 }));
        post.body(&mut link, b"oops".to_vec());
        assert!(post.poll_step().is_none());
    }

    #[test]
    fn an_sse_reply_is_followed_to_its_end_and_then_over() {
        let call = outgoing(CALL);
        let mut link = in_session();
        let mut post = PostExchange::new(&call, URL, LIMITS);
        post.head(&mut link, &head(200, SSE));
        assert_eq!(steps(&mut post), vec![PostStep::ReadSse]);
        let mut body = event("1", PROGRESS);
        body.extend(b": keep-alive\n\n");
        body.extend(event("3", core::str::from_utf8(ANSWER).unwrap()));
        let (first, rest) = body.split_at(10);
        post.sse(&mut link, first);
        assert_eq!(steps(&mut post), vec![PostStep::ReadSse], "nothing whole yet");
        post.sse(&mut link, rest);
        let (data, rest) = split(steps(&mut post));
        assert_eq!(data, vec![PROGRESS, core::str::from_utf8(ANSWER).unwrap()]);
        assert_eq!(rest, vec![PostStep::ReadSse], "the POST's stream is read to its end");
        post.body_end(&link);
        assert!(steps(&mut post).is_empty());
    }

    #[test]
    fn a_cut_reply_is_resumed_until_answered() {
        let call = outgoing(CALL);
        let mut link = in_session();
        let mut post = PostExchange::new(&call, URL, LIMITS);
        post.head(&mut link, &head(200, SSE));
        let _ = steps(&mut post);
        post.sse(&mut link, b"retry: 7\n");
        post.sse(&mut link, &event("e1", PROGRESS));
        let _ = steps(&mut post);
        post.failed(&link, "reset".into());
        assert_eq!(steps(&mut post), vec![resume_after_7ms("e1")]);
        // The first attempt cannot connect; the second resumes, brings progress, and is cut.
        post.failed(&link, "refused".into());
        assert_eq!(steps(&mut post), vec![resume_after_7ms("e1")]);
        post.head(&mut link, &head(200, SSE));
        assert_eq!(steps(&mut post), vec![PostStep::ReadSse]);
        post.sse(&mut link, &event("e2", PROGRESS));
        let _ = steps(&mut post);
        post.body_end(&link);
        assert_eq!(steps(&mut post), vec![resume_after_7ms("e2")]);
        // The third brings the response: reading stops there, though the stream may go on.
        post.head(&mut link, &head(200, SSE));
        let _ = steps(&mut post);
        let mut body = event("e3", core::str::from_utf8(ANSWER).unwrap());
        body.extend(event("e4", PROGRESS));
        post.sse(&mut link, &body);
        let (data, rest) = split(steps(&mut post));
        assert_eq!(data.len(), 2, "the whole chunk is fed");
        assert!(rest.is_empty(), "{rest:?}");
        post.body_end(&link);
        assert!(steps(&mut post).is_empty());
    }

    #[test]
    fn fruitless_resumptions_give_the_call_up() {
        let call = outgoing(CALL);
        let mut link = in_session();
        let mut post = PostExchange::new(&call, URL, LIMITS);
        post.head(&mut link, &head(200, SSE));
        assert_eq!(steps(&mut post), vec![PostStep::ReadSse]);
        post.sse(&mut link, &event("e1", PROGRESS));
        post.body_end(&link);
        let _ = steps(&mut post);
        for attempt in 0..MAX_FRUITLESS_RESUMES {
            // Alternately: cannot connect, and a stream with nothing new.
            if attempt % 2 == 0 {
                post.failed(&link, "refused".into());
            } else {
                post.head(&mut link, &head(200, SSE));
                assert_eq!(steps(&mut post), vec![PostStep::ReadSse]);
                post.sse(&mut link, b": nothing\n\n");
                let _ = steps(&mut post);
                post.body_end(&link);
            }
            let steps = steps(&mut post);
            if attempt + 1 < MAX_FRUITLESS_RESUMES {
                assert!(matches!(steps.as_slice(), [PostStep::Resume { .. }]), "{steps:?}");
            } else {
                assert_eq!(steps, vec![unanswered_call()]);
            }
        }
    }

    #[test]
    fn a_stream_that_cannot_be_resumed_gives_the_call_up() {
        let call = outgoing(CALL);
        // No event id to resume from.
        let mut link = in_session();
        let mut post = PostExchange::new(&call, URL, LIMITS);
        post.head(&mut link, &head(200, SSE));
        assert_eq!(steps(&mut post), vec![PostStep::ReadSse]);
        post.sse(&mut link, format!("data: {PROGRESS}\n\n").as_bytes());
        post.body_end(&link);
        let (_, rest) = split(steps(&mut post));
        assert_eq!(rest, vec![PostStep::ReadSse, unanswered_call()]);
        // The server will not resume it.
        let mut post = PostExchange::new(&call, URL, LIMITS);
        post.head(&mut link, &head(200, SSE));
        assert_eq!(steps(&mut post), vec![PostStep::ReadSse]);
        post.sse(&mut link, &event("e1", PROGRESS));
        post.body_end(&link);
        let _ = steps(&mut post);
        post.head(&mut link, &head(405, None));
        assert_eq!(steps(&mut post), vec![unanswered_call()]);
    }

    #[test]
    fn without_a_session_or_a_lone_request_nothing_is_resumed() {
        let call = outgoing(CALL);
        let mut link = ClientLink::new();
        let mut post = PostExchange::new(&call, URL, LIMITS);
        post.head(&mut link, &head(200, SSE));
        assert_eq!(steps(&mut post), vec![PostStep::ReadSse]);
        post.sse(&mut link, &event("e1", PROGRESS));
        post.body_end(&link);
        let (_, rest) = split(steps(&mut post));
        assert_eq!(rest, vec![PostStep::ReadSse], "the session is gone: its loss fails the call");
        let batch = outgoing(br#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#);
        let mut link = in_session();
        let mut post = PostExchange::new(&batch, URL, LIMITS);
        post.head(&mut link, &head(200, SSE));
        assert_eq!(steps(&mut post), vec![PostStep::ReadSse]);
        post.sse(&mut link, &event("e1", PROGRESS));
        post.body_end(&link);
        let (_, rest) = split(steps(&mut post));
        assert_eq!(rest, vec![PostStep::ReadSse], "a batch's stream is not resumed");
    }

    #[test]
    fn sse_events_teach_the_version() {
        let init = outgoing(br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}"#);
        let mut link = ClientLink::new();
        let mut post = PostExchange::new(&init, URL, LIMITS);
        post.head(&mut link, &ResponseHead { status: 200, content_type: SSE, session_id: Some("s") });
        post.sse(&mut link, &event("1", r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18"}}"#));
        assert!(link.stream_headers(None).contains(&("MCP-Protocol-Version", "2025-06-18".to_owned())));
    }
}
