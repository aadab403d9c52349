//! Answers that reach the wrong process: behind a load balancer, a client's response to a
//! server-to-client request (sampling, elicitation, roots) may be posted to a process other
//! than the one whose session asked. That process hands the frames to a [`Relay`], which
//! carries them to every process sharing the sessions; the one whose session waits for them
//! takes them in.
//!
//! It also carries [`Notice`]s, news every process acts on: a resource changed, so each
//! process tells the sessions subscribed to it whose GET stream it holds; a client opened its
//! GET stream on one process, so every other process ends the one it held for that session
//! (one process holds a client's stream, so each session hears once); a server-to-client
//! request meant for a GET stream held elsewhere, sent there. A notice travels under the
//! session key [`NOTICES`]: session ids are never empty.
//!
//! The core decides what is relayed ([`answers_only`], [`Notice`]); the relay (Redis pub/sub,
//! say) only carries bytes.

use crate::alloc_prelude::*;
use core::time::Duration;

use crate::jsonrpc::{ErrorObject, ErrorResponse, Message, RequestId};
use crate::session::Carries;

/// Carries frames between the server processes that share sessions.
///
/// # Examples
///
/// ```
/// use std::sync::{Arc, Mutex};
/// use talaria_core::http::relay::{Deliver, Relay};
///
/// /// Every process in one address space (tests): delivered at once.
/// #[derive(Default)]
/// struct Local(Mutex<Vec<Deliver>>);
///
/// impl Relay for Local {
///     fn publish(&self, session: &str, frames: &[u8]) {
///         for deliver in self.0.lock().unwrap().iter() {
///             deliver(session, frames);
///         }
///     }
///     fn subscribe(&self, deliver: Deliver) {
///         self.0.lock().unwrap().push(deliver);
///     }
/// }
/// ```
pub trait Relay: Send + Sync {
    /// Sends `frames` (one POST body) meant for `session` to every process, this one
    /// included. Best effort: frames that cannot be sent are lost, as a dropped connection
    /// would lose them.
    fn publish(&self, session: &str, frames: &[u8]);

    /// Delivers every process's published frames to `deliver` (session, frames), from a
    /// thread of the relay's own.
    fn subscribe(&self, deliver: Deliver);

    /// Says `process` lives for `ttl` from now: its lease, renewed several times per `ttl`
    /// while the process runs (best effort). The default does nothing.
    fn renew(&self, process: &str, ttl: Duration) {
        let _ = (process, ttl);
    }

    /// Whether `process`'s lease holds: `false` once it went `ttl` without renewing (it died,
    /// or stalled that long). The default says `true`.
    ///
    /// # Errors
    ///
    /// [`RelayError::Unreachable`] if the relay cannot say.
    fn alive(&self, process: &str) -> Result<bool, RelayError> {
        let _ = process;
        Ok(true)
    }
}

/// Why a [`Relay`] could not answer.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RelayError {
    /// The relay's backend (Redis, say) could not be reached.
    #[error("the relay cannot be reached: {0}")]
    Unreachable(String),
}

/// Who writes a resumable stream, kept with it in the event log
/// ([`EventStore::open_claimed_stream`](super::event_log::EventStore::open_claimed_stream)):
/// for a response stream, the process (its lease, see [`Relay::renew`]) and the requests whose
/// answers it carries; or the process holding the session's GET stream.
///
/// A client resuming a response stream on another process is *followed* there until the
/// stream ends ([`follow`]). One resuming the GET stream on another process *takes it over*:
/// after the events it missed, the GET stream goes on there (the process it left ends its own
/// when it hears, see [`Notice::GetStreamOpened`]).
///
/// # Examples
///
/// ```
/// use talaria_core::http::relay::Claim;
/// use talaria_core::jsonrpc::RequestId;
///
/// let claim = Claim::answering("a1b2c3-", vec![RequestId::Number(7)]);
/// assert_eq!(Claim::decode(&claim.encode()), Some(claim));
/// let get = Claim::get_stream("a1b2c3-");
/// assert!(get.get && get.requests.is_empty());
/// assert_eq!(Claim::decode(&get.encode()), Some(get));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Claim {
    /// The process writing the stream.
    pub process: String,
    /// The requests the stream answers.
    pub requests: Vec<RequestId>,
    /// Whether the stream is the session's GET stream (taken over, not followed).
    #[serde(default, skip_serializing_if = "core::ops::Not::not")]
    pub get: bool,
}

impl Claim {
    /// The claim of `process` on a response stream answering `requests`.
    #[must_use]
    pub fn answering(process: impl Into<String>, requests: Vec<RequestId>) -> Self {
        Self { process: process.into(), requests, get: false }
    }

    /// The claim of `process` on the session's GET stream.
    #[must_use]
    pub fn get_stream(process: impl Into<String>) -> Self {
        Self { process: process.into(), requests: Vec::new(), get: true }
    }

    /// The claim as stored.
    #[must_use]
    pub fn encode(&self) -> Vec<u8> {
        serde_json::to_vec(self).unwrap_or_default()
    }

    /// A stored claim; `None` for bytes that are none.
    #[must_use]
    pub fn decode(bytes: &[u8]) -> Option<Self> {
        serde_json::from_slice(bytes).ok()
    }
}

/// What a process that resumed another process's stream does after a look at the log and at
/// the writer's lease ([`follow`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Follow {
    /// Wait for more: the writer lives (or the relay cannot tell).
    Wait,
    /// Send what was logged and end: the stream is complete, or nobody claimed it.
    End,
    /// The writer died: end the stream with these last words, one error per request it was
    /// answering (see [`abandoned`]).
    Abandon(Vec<Vec<u8>>),
}

/// The next step of a process following a stream another process writes: the log says it is
/// `closed` or not; `claim` is whose it is (if known); `alive` is what the relay says of that
/// process's lease.
///
/// # Examples
///
/// ```
/// use talaria_core::http::relay::{follow, Claim, Follow};
/// use talaria_core::jsonrpc::RequestId;
///
/// let claim = Claim::answering("p1-", vec![RequestId::Number(3)]);
/// assert_eq!(follow(true, Some(&claim), Ok(false)), Follow::End, "complete: nothing to add");
/// assert_eq!(follow(false, None, Ok(true)), Follow::End, "nobody's: as before");
/// assert_eq!(follow(false, Some(&claim), Ok(true)), Follow::Wait);
/// let Follow::Abandon(last) = follow(false, Some(&claim), Ok(false)) else { panic!() };
/// assert_eq!(last.len(), 1);
/// assert_eq!(follow(false, Some(&Claim::get_stream("p1-")), Ok(false)), Follow::End, "nothing owed");
/// ```
#[must_use]
pub fn follow(closed: bool, claim: Option<&Claim>, alive: Result<bool, RelayError>) -> Follow {
    match (closed, claim, alive) {
        (true, _, _) | (false, None, _) => Follow::End,
        // A dead writer with nothing to answer: nothing more will come.
        (false, Some(claim), Ok(false)) if claim.requests.is_empty() => Follow::End,
        (false, Some(claim), Ok(false)) => Follow::Abandon(abandoned(&claim.requests)),
        (false, Some(_), _) => Follow::Wait,
    }
}

/// What a request whose process died while answering it ends with: a JSON-RPC internal error
/// (`-32603`) for each of `requests`, saying so.
///
/// # Examples
///
/// ```
/// use talaria_core::http::relay::abandoned;
/// use talaria_core::jsonrpc::RequestId;
///
/// let frames = abandoned(&[RequestId::Number(3)]);
/// let text = String::from_utf8(frames[0].clone()).unwrap();
/// assert!(text.starts_with(r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32603"#), "{text}");
/// ```
#[must_use]
pub fn abandoned(requests: &[RequestId]) -> Vec<Vec<u8>> {
    requests
        .iter()
        .map(|id| {
            let error = ErrorObject::internal("the server process answering this request stopped");
            Message::Error(ErrorResponse { id: Some(id.clone()), error }).to_vec()
        })
        .collect()
}

/// Takes in frames published for a session (see [`Relay::subscribe`]).
pub type Deliver = alloc::sync::Arc<dyn Fn(&str, &[u8]) + Send + Sync>;

/// The session key under which a [`Notice`] is published: no session has it.
pub const NOTICES: &str = "";

/// News for every process sharing sessions, published under [`NOTICES`].
///
/// # Examples
///
/// ```
/// use talaria_core::http::relay::Notice;
///
/// let notice = Notice::ResourceUpdated { uri: "file:///a.txt".into() };
/// assert_eq!(Notice::decode(&notice.encode()), Some(notice));
/// assert_eq!(Notice::decode(b"{\"somethingNew\":1}"), None);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum Notice {
    /// The resource at `uri` changed: sessions subscribed to it are told
    /// (`notifications/resources/updated`).
    ResourceUpdated {
        /// The resource.
        uri: String,
    },
    /// The client of `session` opened its GET stream on `process`: a GET stream of that
    /// session open on any other process ends, as the older of two GET streams does within
    /// one process, so that no message reaches the client twice.
    GetStreamOpened {
        /// The session.
        session: String,
        /// The process holding the new stream (its request-id prefix).
        process: String,
    },
    /// A message meant for the GET stream of `session`, from a process that does not hold it
    /// (see [`Notice::for_get_stream`]): the process that holds it sends it.
    ForGetStream {
        /// The session.
        session: String,
        /// The message's JSON text.
        frame: String,
    },
}

impl Notice {
    /// The notice that carries `frame` (what `carries` says it is) to the process holding the
    /// GET stream of `session`, when this process does not: only this process's own
    /// server-to-client requests, and their cancellations, travel. Their answers come back
    /// through the relay to the process that asked. Anything else a copy of the session sends
    /// on its own (a `list_changed` notification every process sends alike, say) would reach
    /// the client once per process, and stays here.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::http::relay::Notice;
    /// use talaria_core::jsonrpc::RequestId;
    /// use talaria_core::session::Carries;
    ///
    /// let ping = br#"{"jsonrpc":"2.0","id":"p1-1","method":"ping"}"#;
    /// let request = Carries::Request { id: RequestId::String("p1-1".into()), method: "ping".into() };
    /// assert!(matches!(Notice::for_get_stream("s", ping, &request), Some(Notice::ForGetStream { .. })));
    ///
    /// let changed = br#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#;
    /// let note = Carries::Notification { method: "notifications/tools/list_changed".into(), cancels: None };
    /// assert_eq!(Notice::for_get_stream("s", changed, &note), None);
    /// ```
    #[must_use]
    pub fn for_get_stream(session: &str, frame: &[u8], carries: &Carries) -> Option<Self> {
        let travels = matches!(carries, Carries::Request { .. }) || carries.cancels().is_some();
        let frame = core::str::from_utf8(frame).ok().filter(|_| travels)?;
        Some(Self::ForGetStream { session: session.to_owned(), frame: frame.to_owned() })
    }

    /// The notice as published.
    #[must_use]
    pub fn encode(&self) -> Vec<u8> {
        serde_json::to_vec(self).unwrap_or_default()
    }

    /// A published notice; `None` for bytes that are none (or a kind this version does not
    /// know, from a newer process: ignored).
    #[must_use]
    pub fn decode(bytes: &[u8]) -> Option<Self> {
        serde_json::from_slice(bytes).ok()
    }
}

/// The ids answered by `body` if it holds only responses (a JSON-RPC response, or a batch of
/// them); `None` for anything else, which is not relayed.
///
/// # Examples
///
/// ```
/// use talaria_core::http::relay::answers_only;
/// use talaria_core::jsonrpc::RequestId;
///
/// let ids = answers_only(br#"{"jsonrpc":"2.0","id":"p1-4","result":{}}"#).unwrap();
/// assert_eq!(ids, [RequestId::String("p1-4".into())]);
/// assert!(answers_only(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#).is_none());
/// assert!(answers_only(b"not json").is_none());
/// ```
#[must_use]
pub fn answers_only(body: &[u8]) -> Option<Vec<RequestId>> {
    let value: serde_json::Value = serde_json::from_slice(body).ok()?;
    let items = match value {
        serde_json::Value::Array(items) if !items.is_empty() => items,
        serde_json::Value::Object(_) => vec![value],
        _ => return None,
    };
    items
        .into_iter()
        .map(|item| {
            let answer = item.get("method").is_none() && (item.get("result").is_some() || item.get("error").is_some());
            answer.then(|| serde_json::from_value::<RequestId>(item.get("id")?.clone()).ok()).flatten()
        })
        .collect()
}

/// Which of two GET streams of one shared session is the newer, seen from one process: the
/// rule by which a process hearing [`Notice::GetStreamOpened`] from another ends the GET
/// stream it holds, or keeps it.
///
/// The relay delivers notices in the order they were published, to every process, the
/// publisher included. So while this process's own announcement is on its way (published, or
/// about to be, and not yet heard back), any other process's announcement heard was published
/// before it: that stream is the older one, and the stream here stays. Once its own has come
/// back, an announcement heard from elsewhere is newer, and the stream here ends.
///
/// The count of announcements expected and not yet heard back is kept here; the adapter
/// holds one per shared session with a GET stream, beside its relay.
///
/// # Examples
///
/// ```
/// use talaria_core::http::relay::GetStreamOrder;
///
/// let mut order = GetStreamOrder::default();
/// // A GET stream opens here: its announcement is expected before the stream starts.
/// order.expect_announcement();
/// assert!(!order.ends_on_opened_elsewhere(), "published before ours: older than the stream here");
/// order.heard_own_announcement();
/// assert!(order.ends_on_opened_elsewhere(), "published after ours: the stream here ends");
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GetStreamOrder {
    /// This process's announcements expected or published, not yet heard back.
    unheard: usize,
}

impl GetStreamOrder {
    /// A GET stream is about to open here: its announcement will be published. Followed by
    /// [`GetStreamOrder::heard_own_announcement`] once the relay delivers it back, or by
    /// [`GetStreamOrder::withdraw`] if no stream opened after all.
    pub const fn expect_announcement(&mut self) {
        self.unheard += 1;
    }

    /// No GET stream opened after all: the announcement expected will not come.
    pub const fn withdraw(&mut self) {
        self.unheard = self.unheard.saturating_sub(1);
    }

    /// The relay delivered one of this process's own announcements back.
    pub const fn heard_own_announcement(&mut self) {
        self.unheard = self.unheard.saturating_sub(1);
    }

    /// Another process announced the session's GET stream: whether the one held here (if
    /// any) is the older, and ends.
    #[must_use]
    pub const fn ends_on_opened_elsewhere(&self) -> bool {
        self.unheard == 0
    }
}

#[cfg(test)]
mod get_stream_order_tests {
    use super::GetStreamOrder;

    #[test]
    fn two_streams_opened_back_to_back_here_wait_for_both_announcements() {
        let mut order = GetStreamOrder::default();
        assert!(order.ends_on_opened_elsewhere(), "nothing expected: any announcement heard is newer");
        order.expect_announcement();
        order.expect_announcement();
        order.heard_own_announcement();
        assert!(!order.ends_on_opened_elsewhere(), "the second is still on its way");
        order.heard_own_announcement();
        assert!(order.ends_on_opened_elsewhere());
    }

    #[test]
    fn a_withdrawn_announcement_is_not_waited_for_and_the_count_never_goes_below_zero() {
        let mut order = GetStreamOrder::default();
        order.expect_announcement();
        order.withdraw();
        assert!(order.ends_on_opened_elsewhere());
        order.withdraw();
        order.heard_own_announcement();
        assert_eq!(order, GetStreamOrder::default());
        order.expect_announcement();
        assert!(!order.ends_on_opened_elsewhere(), "a stray extra decrement did not hide a real expectation");
    }
}
