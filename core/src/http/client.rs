//! The Streamable HTTP client's decisions, for any HTTP stack: what an outgoing message needs
//! (which headers, whether a reply is owed), what an answer's status and type mean (a JSON
//! body, an SSE stream, a lost session, a refusal), how an SSE reply is followed, and when a
//! broken reply stream is resumed. [`post`](super::post) puts them in order for one POST; the
//! blocking and the smol clients carry that out, and only move bytes.
//!
//! # Examples
//!
//! ```
//! use talaria_core::http::client::{Answer, ClientLink, Outgoing, ResponseHead};
//! use talaria_core::jsonrpc::{Message, Request};
//! use talaria_core::session::Carries;
//!
//! let mut link = ClientLink::new();
//! // What the session's `Output::Transmit` hands over: the payload and what it carries.
//! let message: Message = Request::new(0, "initialize", Some(serde_json::json!({}))).unwrap().into();
//! let init = Outgoing::new(&Carries::from(&message), &message.to_vec());
//! assert!(init.is_request());
//! let headers = link.post_headers(&init);
//! assert!(headers.iter().any(|(name, value)| name == "Accept" && value == "application/json, text/event-stream"));
//!
//! let head = ResponseHead { status: 200, content_type: Some("application/json"), session_id: Some("s1") };
//! assert_eq!(link.answer(&init, &head), Answer::Json);
//! assert_eq!(link.session_id(), Some("s1"));
//! ```

use crate::alloc_prelude::*;
use alloc::borrow::Cow;
use core::time::Duration;

use crate::codec::{SseDecoder, SseEvent};
use crate::jsonrpc::{ErrorObject, RequestId};
use crate::session::Carries;

use super::headers::{mirror_call, MirroredCall, LAST_EVENT_ID, PROTOCOL_VERSION, SESSION_ID};
use super::param_headers::MirroredTools;

pub use super::get_stream::{get_refused, GetRefused};

/// The `Accept` header of every POST: either kind of answer will do.
pub const POST_ACCEPT: &str = "application/json, text/event-stream";

/// How long to wait before resuming a reply stream whose server gave no `retry`.
pub const DEFAULT_RESUME_DELAY: Duration = Duration::from_millis(1000);

/// How long to wait before reopening the GET stream whose server gave no `retry`.
pub const DEFAULT_GET_RETRY: Duration = Duration::from_millis(250);

/// How long the handshake waits for the GET stream to open (so that what the server sends on
/// it right after the handshake is not missed).
pub const GET_OPEN_WAIT: Duration = Duration::from_secs(2);

/// The most resumptions in a row that bring nothing new before a call is given up.
pub const MAX_FRUITLESS_RESUMES: u32 = 3;

/// How many times a request refused with `401`/`403` is sent again with renewed credentials.
pub const AUTH_RETRIES: usize = 2;

/// The parts of an incoming SSE message the client reads to notice its awaited response.
#[derive(serde::Deserialize)]
struct Shape<'a> {
    #[serde(borrow, default)]
    method: Option<&'a str>,
    #[serde(default)]
    id: Option<RequestId>,
}

/// One outgoing message as the transport sees it: what the session said it carries, and the
/// headers it mirrors.
///
/// # Examples
///
/// ```
/// use talaria_core::http::client::Outgoing;
/// use talaria_core::jsonrpc::RequestId;
/// use talaria_core::session::Carries;
///
/// let payload = br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}"#;
/// let carries = Carries::Notification { method: "notifications/cancelled".into(), cancels: Some(RequestId::Number(7)) };
/// let cancel = Outgoing::new(&carries, payload);
/// assert!(!cancel.is_request());
/// assert_eq!(cancel.cancels(), Some(&RequestId::Number(7)));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outgoing {
    /// The id of a lone request.
    request_id: Option<RequestId>,
    /// The requests a reply must answer: this one, or those of a batch (2025-03-26).
    answers_due: Vec<RequestId>,
    /// The `Mcp-Method`/`Mcp-Name`/... headers the body's method calls for.
    mirrored: Vec<(&'static str, String)>,
    /// Whether this is a 2026-07-28 message (its `_meta` names the protocol version).
    stateless: bool,
    /// A stateless `tools/call`'s tool and arguments, for its `Mcp-Param-*` headers.
    call: Option<MirroredCall>,
    /// Whether this is a stateless `tools/list` (its answer says which arguments each tool
    /// mirrors).
    lists_tools: bool,
    initialize: bool,
    /// The request a `notifications/cancelled` cancels.
    cancels: Option<RequestId>,
}

impl Outgoing {
    /// The message in `payload`, which carries `carries` (both from the session's
    /// [`Output::Transmit`](crate::session::Output::Transmit)). Only a lone request or
    /// notification is read, for the headers it mirrors.
    #[must_use]
    pub fn new(carries: &Carries, payload: &[u8]) -> Self {
        let (mirrored, call) = if carries.method().is_some() { mirror_call(payload) } else { (Vec::new(), None) };
        let stateless = mirrored.iter().any(|(name, _)| *name == PROTOCOL_VERSION);
        Self {
            request_id: carries.request_id().cloned(),
            answers_due: carries.answers_due(),
            stateless,
            call,
            lists_tools: stateless && carries.request_id().is_some() && carries.method() == Some("tools/list"),
            mirrored,
            initialize: carries.request_id().is_some() && carries.method() == Some("initialize"),
            cancels: carries.cancels().cloned(),
        }
    }

    /// Whether a reply is owed (a request, or a batch holding one): such a POST may take as
    /// long as the server's handler, so the client sends it on its own worker or task.
    #[must_use]
    pub fn is_request(&self) -> bool {
        !self.answers_due.is_empty()
    }

    /// The id of a lone request (what an SSE reply is read for).
    #[must_use]
    pub const fn request_id(&self) -> Option<&RequestId> {
        self.request_id.as_ref()
    }

    /// The requests a reply must answer.
    #[must_use]
    pub fn answers_due(&self) -> &[RequestId] {
        &self.answers_due
    }

    /// Whether this is a stateless (2026-07-28) request, which gets a connection of its own:
    /// closing it cancels the request.
    #[must_use]
    pub const fn is_stateless(&self) -> bool {
        self.stateless
    }

    /// The request a `notifications/cancelled` cancels.
    #[must_use]
    pub const fn cancels(&self) -> Option<&RequestId> {
        self.cancels.as_ref()
    }
}

/// What the client reads of an answer's head.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResponseHead<'a> {
    /// The status code.
    pub status: u16,
    /// The `Content-Type` header.
    pub content_type: Option<&'a str>,
    /// The `Mcp-Session-Id` header.
    pub session_id: Option<&'a str>,
}

impl ResponseHead<'_> {
    fn is_sse(&self) -> bool {
        self.content_type.is_some_and(|t| t.trim_start().starts_with("text/event-stream"))
    }

    fn is_success(&self) -> bool {
        (200..300).contains(&self.status)
    }
}

/// What to do with an answer to a POST.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    /// Nothing owed in it (`202`, or a success for a notification): drain the body, so the
    /// connection is reused.
    Drain,
    /// An SSE stream: follow it with an [`SseReading`], feeding each event's data, and
    /// [resume](Resumption) it if it ends before the awaited response.
    Stream,
    /// A JSON body: feed it whole ([`ClientLink::learn_version`] first).
    Json,
    /// The server forgot the session (`404` on an established one): drain the body and tell
    /// the session it is lost; calls in flight fail, the next ones wait for a new handshake.
    SessionLost,
    /// An error status: read the body and hand it to [`refused`].
    Refused,
}

/// What one Streamable HTTP client knows across its requests: the session id and the
/// negotiated revision (sent on each request), and whether its GET stream is due.
///
/// # Examples
///
/// ```
/// use talaria_core::http::client::{Answer, ClientLink, Outgoing, ResponseHead};
///
/// let mut link = ClientLink::new();
/// let message: talaria_core::jsonrpc::Message =
///     talaria_core::jsonrpc::Request::new(3, "tools/list", None::<()>).unwrap().into();
/// let call = Outgoing::new(&talaria_core::session::Carries::from(&message), &message.to_vec());
/// link.answer(&call, &ResponseHead { status: 200, content_type: Some("application/json"), session_id: Some("s") });
/// let lost = ResponseHead { status: 404, content_type: None, session_id: None };
/// assert_eq!(link.answer(&call, &lost), Answer::SessionLost);
/// assert_eq!(link.session_id(), None);
/// ```
#[derive(Debug, Clone, Default)]
pub struct ClientLink {
    session_id: Option<String>,
    version: Option<String>,
    get_started: bool,
    /// Stateless era: the arguments each tool mirrors into `Mcp-Param-*` headers, by tool.
    mirrored_tools: MirroredTools,
}

impl ClientLink {
    /// A link with no session yet.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// The session id the server gave, if any.
    #[must_use]
    pub fn session_id(&self) -> Option<&str> {
        self.session_id.as_deref()
    }

    /// The headers of the POST carrying `message` (besides the application's own and
    /// `Authorization`): content type, accept, session, protocol version (legacy era), and
    /// the mirrored method headers (requests, and every stateless message).
    ///
    /// A stateless `tools/call` also gets the `Mcp-Param-*` headers its tool's schema calls
    /// for, as learnt from the `tools/list` answers this link saw
    /// ([`ClientLink::learn_tools`]).
    #[must_use]
    pub fn post_headers(&self, message: &Outgoing) -> Vec<(Cow<'static, str>, String)> {
        let mut headers: Vec<(Cow<'static, str>, String)> = vec![
            (Cow::Borrowed("Content-Type"), "application/json".to_owned()),
            (Cow::Borrowed("Accept"), POST_ACCEPT.to_owned()),
        ];
        if let Some(id) = &self.session_id {
            headers.push((Cow::Borrowed(SESSION_ID), id.clone()));
        }
        if !message.stateless {
            if let Some(version) = &self.version {
                headers.push((Cow::Borrowed(PROTOCOL_VERSION), version.clone()));
            }
        }
        if message.stateless || message.request_id.is_some() {
            headers.extend(message.mirrored.iter().map(|(name, value)| (Cow::Borrowed(*name), value.clone())));
        }
        if let Some((tool, arguments)) = &message.call {
            let params = self.mirrored_tools.headers(tool, arguments);
            headers.extend(params.into_iter().map(|(name, value)| (Cow::Owned(name), value)));
        }
        headers
    }

    /// Learns, from the answer `reply` to a stateless `tools/list` (`message`), which
    /// arguments each listed tool mirrors into `Mcp-Param-*` headers. Other messages are
    /// ignored, as are pages with no `x-mcp-header` when nothing was learnt before.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::http::client::{ClientLink, Outgoing};
    /// use talaria_core::jsonrpc::{Message, Request};
    /// use talaria_core::session::Carries;
    /// use serde_json::json;
    ///
    /// let meta = json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}});
    /// let outgoing = |message: Message| Outgoing::new(&Carries::from(&message), &message.to_vec());
    /// let list = outgoing(Request::new(1, "tools/list", Some(meta.clone())).unwrap().into());
    /// let mut link = ClientLink::new();
    /// let page = json!({"jsonrpc": "2.0", "id": 1, "result": {"tools": [{"name": "weather", "inputSchema":
    ///     {"type": "object", "properties": {"region": {"type": "string", "x-mcp-header": "Region"}}}}]}});
    /// link.learn_tools(&list, page.to_string().as_bytes());
    ///
    /// let params = json!({"name": "weather", "arguments": {"region": "us-west1"}, "_meta": meta["_meta"]});
    /// let call = outgoing(Request::new(2, "tools/call", Some(params)).unwrap().into());
    /// let headers = link.post_headers(&call);
    /// assert!(headers.iter().any(|(name, value)| name == "Mcp-Param-Region" && value == "us-west1"));
    /// ```
    pub fn learn_tools(&mut self, message: &Outgoing, reply: &[u8]) {
        if message.lists_tools {
            self.mirrored_tools.learn(reply);
        }
    }

    /// The headers of a GET opening (or resuming, after `last_event_id`) an event stream.
    #[must_use]
    pub fn stream_headers(&self, last_event_id: Option<&str>) -> Vec<(&'static str, String)> {
        let mut headers = vec![("Accept", "text/event-stream".to_owned())];
        if let Some(id) = &self.session_id {
            headers.push((SESSION_ID, id.clone()));
        }
        if let Some(version) = &self.version {
            headers.push((PROTOCOL_VERSION, version.clone()));
        }
        if let Some(last) = last_event_id {
            headers.push((LAST_EVENT_ID, last.to_owned()));
        }
        headers
    }

    /// The headers of the DELETE that ends the session, if there is one to end.
    #[must_use]
    pub fn delete_headers(&self) -> Option<Vec<(&'static str, String)>> {
        let id = self.session_id.as_ref()?;
        let mut headers = vec![(SESSION_ID, id.clone())];
        if let Some(version) = &self.version {
            headers.push((PROTOCOL_VERSION, version.clone()));
        }
        Some(headers)
    }

    /// Reads the head of the answer to `message`: notes the session id it gives, forgets a
    /// session the server has lost, and says what to do with the body.
    pub fn answer(&mut self, message: &Outgoing, head: &ResponseHead<'_>) -> Answer {
        if head.status == 404 && self.session_id.is_some() && !message.initialize {
            self.session_id = None;
            self.get_started = false;
            return Answer::SessionLost;
        }
        if let Some(id) = head.session_id {
            self.session_id = Some(id.to_owned());
        }
        match (head.is_success(), head.is_sse()) {
            (false, _) => Answer::Refused,
            (true, _) if head.status == 202 => Answer::Drain,
            (true, true) => Answer::Stream,
            (true, false) if !message.is_request() => Answer::Drain,
            (true, false) => Answer::Json,
        }
    }

    /// Remembers the negotiated revision if `reply` is an `initialize` result (legacy era: it
    /// goes in the `MCP-Protocol-Version` header from then on).
    pub fn learn_version(&mut self, reply: &[u8]) {
        #[derive(serde::Deserialize)]
        struct Negotiated {
            result: Option<NegotiatedResult>,
        }
        #[derive(serde::Deserialize)]
        struct NegotiatedResult {
            #[serde(rename = "protocolVersion")]
            protocol_version: Option<String>,
        }
        static PROTOCOL_VERSION_KEY: crate::jsonrpc::scan::Word = crate::jsonrpc::scan::Word::new("protocolVersion");
        if !PROTOCOL_VERSION_KEY.may_be_in(reply) {
            return;
        }
        let version =
            serde_json::from_slice::<Negotiated>(reply).ok().and_then(|n| n.result).and_then(|r| r.protocol_version);
        if version.is_some() {
            self.version = version;
        }
    }

    /// Whether to open the session's GET stream now (legacy era, once per session, after the
    /// handshake's notification). Says yes once.
    pub fn take_get_stream(&mut self) -> bool {
        if self.session_id.is_none() || self.get_started {
            return false;
        }
        self.get_started = true;
        true
    }
}

/// A POST refused with an error status: what to tell the waiting calls and the connect error.
#[derive(Debug, Clone, PartialEq)]
pub struct Refused {
    /// The error each call owed an answer gets.
    pub error: ErrorObject,
    /// Whether the body was a JSON-RPC error with a code MCP reserves (a modern server
    /// refusing, not a legacy one that does not know the method).
    pub modern: bool,
    /// The body's JSON-RPC error message, if it had one.
    pub detail: Option<String>,
    /// Whether the body was a JSON-RPC error (the server's own answer, a remote error);
    /// otherwise `error` only names the status and quotes the body (a transport failure).
    pub jsonrpc: bool,
}

/// How much of a refusal's body that is not JSON-RPC is kept, in characters.
const REFUSAL_DETAIL_CHARS: usize = 300;

/// Reads an error answer's body: its JSON-RPC error if there is one, else an internal error
/// naming the status and `url` and quoting the body (whitespace folded, at most 300
/// characters).
///
/// # Examples
///
/// ```
/// use talaria_core::http::client::refused;
///
/// let old = refused(405, b"Method Not Allowed", "http://h/mcp");
/// assert!(!old.modern);
/// assert!(old.error.message.contains("HTTP 405"));
/// let new = refused(400, br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32020,"message":"bad"}}"#, "http://h/mcp");
/// assert!(new.modern);
/// assert_eq!(new.detail.as_deref(), Some("bad"));
/// let plain = refused(400, b"Bad Request: No valid session ID provided\n", "http://h/mcp");
/// assert_eq!(plain.detail.as_deref(), Some("Bad Request: No valid session ID provided"));
/// ```
#[must_use]
pub fn refused(status: u16, body: &[u8], url: &str) -> Refused {
    #[derive(serde::Deserialize)]
    struct ErrorBody {
        error: ErrorObject,
    }
    let decoded = serde_json::from_slice::<ErrorBody>(body).ok().map(|body| body.error);
    let modern = decoded.as_ref().is_some_and(|e| e.code.is_mcp_reserved());
    if let Some(error) = decoded {
        return Refused { detail: Some(error.message.clone()), error, modern, jsonrpc: true };
    }
    // Not a JSON-RPC error: what the body says (a legacy server's "Bad Request: ..."), shown
    // as sent, up to a line's worth.
    let text = String::from_utf8_lossy(body);
    let said: String =
        text.split_whitespace().collect::<Vec<_>>().join(" ").chars().take(REFUSAL_DETAIL_CHARS).collect();
    let detail = (!said.is_empty()).then_some(said);
    let message = match &detail {
        Some(said) => format!("HTTP {status} from {url}: {said}"),
        None => format!("HTTP {status} from {url}"),
    };
    Refused { error: ErrorObject::internal(message), modern, detail, jsonrpc: false }
}

/// The transport error a call fails with when its stream ended for good without its
/// response.
pub const UNANSWERED: &str = "the server ended the response stream without answering";

/// Whether the backwards-compatibility probe falls back to the legacy HTTP+SSE transport: the
/// Streamable HTTP handshake was refused with `400`, `404` or `405`, and not with a modern
/// MCP error.
///
/// # Examples
///
/// ```
/// use talaria_core::http::client::falls_back_to_legacy;
///
/// assert!(falls_back_to_legacy(405, false));
/// assert!(!falls_back_to_legacy(400, true));
/// assert!(!falls_back_to_legacy(401, false));
/// ```
#[must_use]
pub const fn falls_back_to_legacy(status: u16, modern: bool) -> bool {
    matches!(status, 400 | 404 | 405) && !modern
}

/// Following one SSE body: decodes it, and notes its last event id, the server's `retry`, and
/// whether the awaited response came.
///
/// # Examples
///
/// ```
/// use talaria_core::http::client::SseReading;
/// use talaria_core::jsonrpc::RequestId;
///
/// let mut reading = SseReading::new(Some(RequestId::Number(1)));
/// let mut data = Vec::new();
/// reading.feed(b"id: e1\nretry: 50\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n", |event| {
///     data.push(event.data.clone());
/// });
/// assert!(reading.answered());
/// assert_eq!(reading.last_event_id(), Some("e1"));
/// assert_eq!(data.len(), 1);
/// ```
#[derive(Debug, Default)]
pub struct SseReading {
    decoder: SseDecoder,
    awaited: Option<RequestId>,
    last_id: Option<String>,
    retry: Option<Duration>,
    answered: bool,
}

impl SseReading {
    /// Starts following a body that may carry the response to `awaited`.
    #[must_use]
    pub fn new(awaited: Option<RequestId>) -> Self {
        Self { awaited, ..Self::default() }
    }

    /// Decodes `bytes`, calling `on_event` with every well-formed event (its data, if any, is
    /// a message for the session).
    pub fn feed(&mut self, bytes: &[u8], mut on_event: impl FnMut(&SseEvent)) {
        self.feed_owned(bytes, |event| on_event(&event));
    }

    /// [`feed`](Self::feed), handing each event over.
    pub(super) fn feed_owned(&mut self, bytes: &[u8], mut on_event: impl FnMut(SseEvent)) {
        let Self { decoder, awaited, last_id, retry, answered } = self;
        decoder.decode(bytes, |event| {
            let Ok(event) = event else { return };
            if event.id.is_some() {
                last_id.clone_from(&event.id);
            }
            if let Some(ms) = event.retry {
                *retry = Some(Duration::from_millis(ms));
            }
            if let Some(awaited) = awaited.as_ref().filter(|_| !event.data.is_empty()) {
                let shape = serde_json::from_str::<Shape<'_>>(&event.data).ok();
                *answered |= shape.is_some_and(|s| s.method.is_none() && s.id.as_ref() == Some(awaited));
            }
            on_event(event);
        });
    }

    /// Whether the awaited response came.
    #[must_use]
    pub const fn answered(&self) -> bool {
        self.answered
    }

    /// The last event id seen.
    #[must_use]
    pub fn last_event_id(&self) -> Option<&str> {
        self.last_id.as_deref()
    }

    /// The reconnection delay the server asked for, if it did.
    #[must_use]
    pub const fn retry(&self) -> Option<Duration> {
        self.retry
    }
}

/// Resuming a request's reply stream that ended before its response: GET with `Last-Event-ID`
/// after the server's `retry`, until the response comes, the stream cannot be resumed, or
/// [`MAX_FRUITLESS_RESUMES`] attempts in a row bring nothing new.
///
/// # Examples
///
/// ```
/// use talaria_core::http::client::{Resumption, SseReading};
///
/// let mut first = SseReading::new(None);
/// first.feed(b"id: a\ndata:\n\n", |_| {});
/// let mut resumption = Resumption::after(&first);
/// let (_, last) = resumption.next().unwrap();
/// assert_eq!(last, "a");
/// for _ in 0..3 {
///     resumption.failed();
/// }
/// assert!(resumption.next().is_none());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resumption {
    last_id: Option<String>,
    retry: Option<Duration>,
    answered: bool,
    fruitless: u32,
}

impl Resumption {
    /// The resumption of the stream `first` followed.
    #[must_use]
    pub fn after(first: &SseReading) -> Self {
        Self { last_id: first.last_id.clone(), retry: first.retry, answered: first.answered, fruitless: 0 }
    }

    /// The next attempt: how long to wait first, and the `Last-Event-ID` to send. `None`:
    /// answered, or give up (no event id to resume from, too many fruitless attempts).
    #[must_use]
    pub fn next(&self) -> Option<(Duration, &str)> {
        if self.answered || self.fruitless >= MAX_FRUITLESS_RESUMES {
            return None;
        }
        let last = self.last_id.as_deref()?;
        Some((self.retry.unwrap_or(DEFAULT_RESUME_DELAY), last))
    }

    /// An attempt that could not connect.
    pub fn failed(&mut self) {
        self.fruitless += 1;
    }

    /// An attempt that followed a resumed stream to its end.
    pub fn resumed(&mut self, reading: &SseReading) {
        let progressed = reading.last_id.is_some() && reading.last_id != self.last_id;
        self.fruitless = if progressed { 0 } else { self.fruitless + 1 };
        if reading.last_id.is_some() {
            self.last_id.clone_from(&reading.last_id);
        }
        self.retry = reading.retry.or(self.retry);
        self.answered = reading.answered;
    }

    /// Whether the response came.
    #[must_use]
    pub const fn answered(&self) -> bool {
        self.answered
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use crate::jsonrpc::Packet;

    impl Outgoing {
        /// As the session would have handed `payload` over.
        fn parse(payload: &[u8]) -> Self {
            let carries = match Packet::from_slice(payload).unwrap() {
                Packet::Single(message) => Carries::from(message),
                Packet::Batch(items) => {
                    Carries::from(items.into_iter().map(Result::unwrap).collect::<Vec<_>>().as_slice())
                }
            };
            Self::new(&carries, payload)
        }
    }

    fn head(status: u16, content_type: Option<&'static str>) -> ResponseHead<'static> {
        ResponseHead { status, content_type, session_id: None }
    }

    #[test]
    fn outgoing_messages_are_told_apart() {
        let call = Outgoing::parse(br#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"echo"}}"#);
        assert!(call.is_request());
        assert_eq!(call.request_id(), Some(&RequestId::String("a".into())));
        assert!(!call.is_stateless());
        let response = Outgoing::parse(br#"{"jsonrpc":"2.0","id":4,"result":{}}"#);
        assert!(!response.is_request());
        assert_eq!(response.request_id(), None);
        let note = Outgoing::parse(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        assert!(!note.is_request());
        assert_eq!(note.cancels(), None);
        let batch = Outgoing::parse(
            br#"[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/x"},{"jsonrpc":"2.0","id":2,"result":{}}]"#,
        );
        assert_eq!(batch.answers_due(), &[RequestId::Number(1)]);
        assert_eq!(batch.request_id(), None);
        let cancel =
            Outgoing::parse(br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"a"}}"#);
        assert_eq!(cancel.cancels(), Some(&RequestId::String("a".into())));
    }

    #[test]
    fn stateless_requests_mirror_their_method_and_send_no_version_header() {
        let mut link = ClientLink::new();
        link.learn_version(br#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18"}}"#);
        let stateless = Outgoing::parse(
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#,
        );
        let headers = link.post_headers(&stateless);
        let names: Vec<&str> = headers.iter().map(|(n, _)| n.as_ref()).collect();
        assert!(stateless.is_stateless(), "{names:?}");
        assert!(names.contains(&"Mcp-Method") && names.contains(&"Mcp-Name"), "{names:?}");
        assert_eq!(
            headers.iter().filter(|(n, _)| *n == PROTOCOL_VERSION).count(),
            1,
            "only the mirrored one: {headers:?}"
        );
        let legacy = Outgoing::parse(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        let headers = link.post_headers(&legacy);
        assert!(headers.iter().any(|(n, v)| n == PROTOCOL_VERSION && v == "2025-06-18"), "{headers:?}");
        assert!(!headers.iter().any(|(n, _)| *n == "Mcp-Method"), "notifications carry no mirror: {headers:?}");
    }

    #[test]
    fn answers_are_classified_by_status_and_type() {
        let mut link = ClientLink::new();
        let call = Outgoing::parse(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#);
        let note = Outgoing::parse(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        assert_eq!(link.answer(&call, &head(200, Some("application/json"))), Answer::Json);
        assert_eq!(link.answer(&call, &head(200, Some(" text/event-stream; charset=utf-8"))), Answer::Stream);
        assert_eq!(link.answer(&call, &head(202, None)), Answer::Drain);
        assert_eq!(link.answer(&call, &head(202, Some("text/event-stream"))), Answer::Drain);
        assert_eq!(link.answer(&note, &head(200, Some("application/json"))), Answer::Drain);
        assert_eq!(link.answer(&note, &head(200, Some("text/event-stream"))), Answer::Stream);
        assert_eq!(link.answer(&call, &head(500, Some("application/json"))), Answer::Refused);
        // 404 without a session is a refusal (the probe falls back on it), not a lost session.
        assert_eq!(link.answer(&call, &head(404, None)), Answer::Refused);
    }

    #[test]
    fn a_lost_session_is_forgotten_and_its_get_stream_is_due_again() {
        let mut link = ClientLink::new();
        let init = Outgoing::parse(br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}"#);
        let ok = ResponseHead { status: 200, content_type: Some("application/json"), session_id: Some("s1") };
        assert_eq!(link.answer(&init, &ok), Answer::Json);
        assert!(link.take_get_stream());
        assert!(!link.take_get_stream(), "once per session");
        assert_eq!(link.delete_headers().expect("a session to end")[0], (SESSION_ID, "s1".to_owned()));
        // A 404 to a re-initialize is the server's refusal, not a lost session.
        assert_eq!(link.answer(&init, &head(404, None)), Answer::Refused);
        assert_eq!(link.session_id(), Some("s1"));
        let call = Outgoing::parse(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#);
        assert_eq!(link.answer(&call, &head(404, None)), Answer::SessionLost);
        assert_eq!(link.session_id(), None);
        assert!(link.delete_headers().is_none());
        assert!(!link.take_get_stream(), "no session, no stream");
        link.answer(&init, &ResponseHead { session_id: Some("s2"), ..ok });
        assert!(link.take_get_stream(), "due again for the new session");
    }

    #[test]
    fn stream_headers_carry_the_resume_point() {
        let mut link = ClientLink::new();
        let init = Outgoing::parse(br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}"#);
        link.answer(&init, &ResponseHead { status: 200, content_type: None, session_id: Some("s") });
        link.learn_version(br#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25"}}"#);
        let headers = link.stream_headers(Some("e9"));
        assert_eq!(
            headers,
            vec![
                ("Accept", "text/event-stream".to_owned()),
                (SESSION_ID, "s".to_owned()),
                (PROTOCOL_VERSION, "2025-11-25".to_owned()),
                (LAST_EVENT_ID, "e9".to_owned()),
            ]
        );
        // A message that merely mentions the field does not change the version.
        link.learn_version(br#"{"jsonrpc":"2.0","method":"x","params":{"protocolVersion":"1999"}}"#);
        assert_eq!(link.stream_headers(None)[2], (PROTOCOL_VERSION, "2025-11-25".to_owned()));
        // The key spelled with an escape is still the key.
        link.learn_version(br#"{"jsonrpc":"2.0","id":1,"result":{"\u0070rotocolVersion":"2025-06-18"}}"#);
        assert_eq!(link.stream_headers(None)[2], (PROTOCOL_VERSION, "2025-06-18".to_owned()));
    }

    #[test]
    fn a_refusal_owes_every_request_of_the_message() {
        let batch =
            Outgoing::parse(br#"[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}]"#);
        assert_eq!(batch.answers_due(), [RequestId::Number(1), RequestId::Number(2)]);
        let refusal = refused(503, b"busy", "http://h/mcp");
        assert_eq!(refusal.error.message, "HTTP 503 from http://h/mcp: busy");
    }

    #[test]
    fn an_sse_reading_is_chunking_invariant() {
        let body = b"id: 1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n\nretry: 20\nid: 2\ndata: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}\n\n";
        for split in 0..body.len() {
            let mut reading = SseReading::new(Some(RequestId::Number(7)));
            let mut seen = 0;
            reading.feed(&body[..split], |_| seen += 1);
            reading.feed(&body[split..], |_| seen += 1);
            assert_eq!(seen, 2);
            assert!(reading.answered());
            assert_eq!(reading.last_event_id(), Some("2"));
            assert_eq!(reading.retry(), Some(Duration::from_millis(20)));
        }
        // A notification or a request with the awaited id is not the answer.
        let mut reading = SseReading::new(Some(RequestId::Number(7)));
        reading.feed(b"data: {\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"sampling/createMessage\"}\n\n", |_| {});
        assert!(!reading.answered());
    }

    #[test]
    fn resumption_gives_up_after_fruitless_attempts_and_resets_on_progress() {
        let mut first = SseReading::new(Some(RequestId::Number(1)));
        first.feed(b"id: a\nretry: 5\ndata:\n\n", |_| {});
        let mut resumption = Resumption::after(&first);
        assert_eq!(resumption.next(), Some((Duration::from_millis(5), "a")));
        let mut nothing = SseReading::new(Some(RequestId::Number(1)));
        nothing.feed(b"", |_| {});
        resumption.resumed(&nothing);
        resumption.failed();
        assert!(resumption.next().is_some());
        let mut progress = SseReading::new(Some(RequestId::Number(1)));
        progress.feed(b"id: b\ndata:\n\n", |_| {});
        resumption.resumed(&progress);
        assert_eq!(resumption.next(), Some((Duration::from_millis(5), "b")), "progress resets the count");
        for _ in 0..MAX_FRUITLESS_RESUMES {
            assert!(resumption.next().is_some());
            resumption.failed();
        }
        assert!(resumption.next().is_none());
        // A stream without event ids cannot be resumed.
        assert!(Resumption::after(&SseReading::new(None)).next().is_none());
        let mut answered = SseReading::new(Some(RequestId::Number(1)));
        answered.feed(b"id: z\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n", |_| {});
        let mut resumption = Resumption::after(&first);
        resumption.resumed(&answered);
        assert!(resumption.answered() && resumption.next().is_none());
    }
}
