//! [`Peer`]: one side of a pair, what it reported and transmitted, and the invariants checked
//! on its outputs.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::fmt;
use std::time::Duration;

use serde_json::value::RawValue;
use serde_json::Value;
use talaria_core::jsonrpc::{ErrorObject, Message, Packet, RequestId};
use talaria_core::schema::logging::LoggingMessageNotificationParams;
use talaria_core::session::CallError;
use talaria_core::session::{
    CloseReason, Event, IncomingRequest, Output, ProtocolError, ReadyInfo, Role, SendError, Session,
};

use super::pipe::{Fate, Pipe, SimConfig};
use super::raw;

/// One side of a [`Pair`](super::Pair): its session and what it reported.
pub struct Peer<R> {
    /// The session. Commands may be called on it directly; the pair collects the outputs.
    pub session: Session<R>,
    /// Every event, in order, with the virtual time it was collected at.
    pub log: Vec<Logged>,
    /// Peer requests waiting for an answer, oldest first.
    pub requests: VecDeque<IncomingRequest>,
    /// Every payload this side transmitted, in order.
    pub wire: Vec<Sent>,
    name: &'static str,
    closed: bool,
    responses: BTreeMap<RequestId, usize>,
    request_ids: BTreeSet<RequestId>,
}

impl<R> fmt::Debug for Peer<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Peer")
            .field("name", &self.name)
            .field("log", &self.log)
            .field("requests", &self.requests)
            .finish_non_exhaustive()
    }
}

impl<R: Role> Peer<R> {
    pub(crate) fn new(session: Session<R>, name: &'static str) -> Self {
        Self {
            session,
            log: Vec::new(),
            requests: VecDeque::new(),
            wire: Vec::new(),
            name,
            closed: false,
            responses: BTreeMap::new(),
            request_ids: BTreeSet::new(),
        }
    }

    /// The events, without their times (peer requests appear as [`Seen::Request`]).
    pub fn seen(&self) -> impl Iterator<Item = &Seen> {
        self.log.iter().map(|l| &l.seen)
    }

    /// The events other than peer requests.
    pub fn events(&self) -> impl Iterator<Item = &Event> {
        self.seen().filter_map(|s| match s {
            Seen::Event(e) => Some(e),
            Seen::Request { .. } | Seen::Other(_) => None,
        })
    }

    /// What the session reported when it became ready.
    #[must_use]
    pub fn ready(&self) -> Option<&ReadyInfo> {
        self.events().find_map(|e| match e {
            Event::Ready(info) => Some(&**info),
            _ => None,
        })
    }

    /// When `Event::Ready` was collected (virtual offset).
    #[must_use]
    pub fn ready_at(&self) -> Option<Duration> {
        self.log.iter().find(|l| matches!(l.seen, Seen::Event(Event::Ready(_)))).map(|l| l.at)
    }

    /// How many `Event::Ready` were reported.
    #[must_use]
    pub fn ready_count(&self) -> usize {
        self.events().filter(|e| matches!(e, Event::Ready(_))).count()
    }

    /// Every `Event::Response`: id, outcome and when it was collected.
    pub fn responses(&self) -> impl Iterator<Item = (&RequestId, &Result<Box<RawValue>, CallError>, Duration)> {
        self.log.iter().filter_map(|l| match &l.seen {
            Seen::Event(Event::Response { id, outcome }) => Some((id, outcome, l.at)),
            _ => None,
        })
    }

    /// The outcome of request `id`, if it has ended.
    #[must_use]
    pub fn outcome(&self, id: &RequestId) -> Option<&Result<Box<RawValue>, CallError>> {
        self.responses().find(|(i, _, _)| *i == id).map(|(_, o, _)| o)
    }

    /// When request `id` ended (virtual offset), if it has.
    #[must_use]
    pub fn ended_at(&self, id: &RequestId) -> Option<Duration> {
        self.responses().find(|(i, _, _)| *i == id).map(|(_, _, at)| at)
    }

    /// How many `Event::Response` were reported for `id`.
    #[must_use]
    pub fn response_count(&self, id: &RequestId) -> usize {
        self.responses.get(id).copied().unwrap_or(0)
    }

    /// The decoded result of request `id`, if it ended with one.
    #[must_use]
    pub fn result(&self, id: &RequestId) -> Option<Value> {
        match self.outcome(id)? {
            Ok(raw) => serde_json::from_str(raw.get()).ok(),
            Err(_) => None,
        }
    }

    /// The error of request `id`, if it ended with one.
    #[must_use]
    pub fn error(&self, id: &RequestId) -> Option<&CallError> {
        self.outcome(id)?.as_ref().err()
    }

    /// Whether `Event::Closed` was reported.
    #[must_use]
    pub const fn is_closed(&self) -> bool {
        self.closed
    }

    /// Why the session closed, if `Event::Closed` was reported.
    #[must_use]
    pub fn closed_with(&self) -> Option<&CloseReason> {
        self.events().find_map(|e| match e {
            Event::Closed { reason } => Some(reason),
            _ => None,
        })
    }

    /// [`Peer::closed_with`] as text.
    #[must_use]
    pub fn closed_reason(&self) -> Option<String> {
        self.closed_with().map(ToString::to_string)
    }

    /// Whether the last event is `Event::Closed`.
    #[must_use]
    pub fn closed_last(&self) -> bool {
        matches!(self.log.last(), Some(Logged { seen: Seen::Event(Event::Closed { .. }), .. }))
    }

    /// Every `Event::PeerMisbehaved`.
    pub fn misbehaviours(&self) -> impl Iterator<Item = &ProtocolError> {
        self.events().filter_map(|e| match e {
            Event::PeerMisbehaved(p) => Some(p),
            _ => None,
        })
    }

    /// Every `Event::Log` (on a client).
    pub fn logs(&self) -> impl Iterator<Item = &LoggingMessageNotificationParams> {
        self.events().filter_map(|e| match e {
            Event::Log(p) => Some(&**p),
            _ => None,
        })
    }

    /// Every `Event::PeerCancelled`: id and reason.
    pub fn peer_cancellations(&self) -> impl Iterator<Item = (&RequestId, Option<&str>)> {
        self.events().filter_map(|e| match e {
            Event::PeerCancelled { id, reason } => Some((id, reason.as_deref())),
            _ => None,
        })
    }

    /// Every `Event::Progress`: id, progress, total, message, and when.
    pub fn progress(&self) -> impl Iterator<Item = (&RequestId, f64, Option<f64>, Option<&str>, Duration)> {
        self.log.iter().filter_map(|l| match &l.seen {
            Seen::Event(Event::Progress { id, progress, total, message }) => {
                Some((id, *progress, *total, message.as_deref(), l.at))
            }
            _ => None,
        })
    }

    /// Every payload this side transmitted, decoded (each is checked valid when sent).
    #[must_use]
    pub fn sent_messages(&self) -> Vec<Message> {
        self.wire.iter().filter_map(|s| Message::from_slice(&s.payload).ok()).collect()
    }

    /// The params of every notification named `method` this side transmitted.
    #[must_use]
    pub fn sent_notifications(&self, method: &str) -> Vec<Value> {
        self.sent_messages()
            .into_iter()
            .filter_map(|m| match m {
                Message::Notification(n) if n.method == method => {
                    Some(n.params.and_then(|p| serde_json::from_str(p.get()).ok()).unwrap_or(Value::Null))
                }
                _ => None,
            })
            .collect()
    }

    /// The answers (result or error) this side transmitted to request `id`.
    #[must_use]
    pub fn sent_answers(&self, id: &RequestId) -> Vec<Message> {
        self.sent_messages()
            .into_iter()
            .filter(|m| match m {
                Message::Response(r) => r.id == *id,
                Message::Error(e) => e.id.as_ref() == Some(id),
                _ => false,
            })
            .collect()
    }

    /// The error objects this side transmitted to request `id`.
    #[must_use]
    pub fn sent_errors(&self, id: &RequestId) -> Vec<ErrorObject> {
        self.sent_answers(id)
            .into_iter()
            .filter_map(|m| match m {
                Message::Error(e) => Some(e.error),
                _ => None,
            })
            .collect()
    }

    /// The methods of the requests this side transmitted, in order.
    #[must_use]
    pub fn sent_methods(&self) -> Vec<String> {
        self.sent_messages()
            .into_iter()
            .filter_map(|m| match m {
                Message::Request(r) => Some(r.method),
                _ => None,
            })
            .collect()
    }

    /// Takes the oldest waiting peer request named `method`.
    pub fn take_request(&mut self, method: &str) -> Option<IncomingRequest> {
        let i = self.requests.iter().position(|r| r.method == method)?;
        self.requests.remove(i)
    }

    /// Answers one peer request with a JSON result or an error.
    ///
    /// # Errors
    ///
    /// Whatever `Session::respond` refuses.
    #[allow(clippy::needless_pass_by_value, reason = "call sites pass `json!` temporaries")]
    pub fn respond(&mut self, request: IncomingRequest, result: Result<Value, ErrorObject>) -> Result<(), SendError> {
        self.session.respond(request.reply, result.map(|v| raw(&v)))
    }

    /// Answers every waiting peer request with what `answer` returns for it; returns how
    /// many were answered.
    ///
    /// # Errors
    ///
    /// The first refusal of `Session::respond` (the requests after it stay waiting).
    pub fn answer_all(
        &mut self,
        mut answer: impl FnMut(&IncomingRequest) -> Result<Value, ErrorObject>,
    ) -> Result<usize, SendError> {
        let mut n = 0;
        while let Some(request) = self.requests.pop_front() {
            let result = answer(&request);
            self.respond(request, result)?;
            n += 1;
        }
        Ok(n)
    }

    /// Collects the outputs: transmits into `pipe`, events into the log. Checks invariants.
    pub(crate) fn drain(&mut self, at: Duration, pipe: &mut Pipe, config: &SimConfig, killed: bool) -> bool {
        let mut any = false;
        while let Some(output) = self.session.poll_output() {
            any = true;
            if config.check_invariants && self.closed {
                panic!("{} output after Event::Closed (seed {}): {output:?}", self.name, config.seed);
            }
            match output {
                Output::Transmit { payload, .. } => {
                    if config.check_invariants {
                        self.check_payload(&payload, config.seed);
                    }
                    if !killed {
                        let (extra, dropped) = match pipe.tap.as_mut().map_or(Fate::Deliver, |tap| tap(&payload)) {
                            Fate::Deliver => (Duration::ZERO, false),
                            Fate::Drop => (Duration::ZERO, true),
                            Fate::Delay(d) => (d, false),
                        };
                        if !dropped {
                            pipe.push(at, &payload, extra, extra > Duration::ZERO, config);
                        }
                    }
                    self.wire.push(Sent { at, payload });
                }
                Output::Event(Event::Request(request)) => {
                    let seen = Seen::Request { id: request.reply.id().clone(), method: request.method.clone() };
                    self.log.push(Logged { at, seen });
                    self.requests.push_back(request);
                }
                Output::Event(event) => {
                    if let Event::Response { id, .. } = &event {
                        let n = self.responses.entry(id.clone()).or_default();
                        *n += 1;
                        if config.check_invariants && *n > 1 {
                            panic!("{}: request {id} ended twice (seed {}): {event:?}", self.name, config.seed);
                        }
                    }
                    if matches!(event, Event::Closed { .. }) {
                        self.closed = true;
                        if config.eof_on_close {
                            pipe.eof = true;
                        }
                        self.requests.clear();
                    }
                    self.log.push(Logged { at, seen: Seen::Event(event) });
                }
                other => self.log.push(Logged { at, seen: Seen::Other(format!("{other:?}")) }),
            }
        }
        any
    }

    fn check_payload(&mut self, payload: &[u8], seed: u64) {
        let requests = match Packet::from_slice(payload) {
            Ok(Packet::Single(Message::Request(req))) => vec![req.id],
            Ok(Packet::Batch(items)) => items
                .into_iter()
                .map(|item| {
                    item.unwrap_or_else(|e| panic!("{} sent an invalid batch element (seed {seed}): {e}", self.name))
                })
                .filter_map(|m| match m {
                    Message::Request(req) => Some(req.id),
                    _ => None,
                })
                .collect(),
            Ok(Packet::Single(_)) => Vec::new(),
            Err(e) => panic!(
                "{} transmitted an invalid JSON-RPC payload (seed {seed}): {e}: {}",
                self.name,
                String::from_utf8_lossy(payload)
            ),
        };
        for id in requests {
            if !self.request_ids.insert(id.clone()) {
                panic!("{} sent request id {id} twice (seed {seed})", self.name);
            }
        }
    }
}

/// One event a side reported, with the virtual time it was collected at.
#[derive(Debug)]
pub struct Logged {
    /// When (offset from the pair's start).
    pub at: Duration,
    /// What.
    pub seen: Seen,
}

/// An event as the pair records it.
#[derive(Debug)]
pub enum Seen {
    /// `Event::Request`; the request itself waits in [`Peer::requests`] for its answer.
    Request {
        /// Its id.
        id: RequestId,
        /// Its method.
        method: String,
    },
    /// Any other event.
    Event(Event),
    /// An output that is neither a transmit nor an event (e.g. `StreamDone`), as text.
    Other(String),
}

/// A payload one side transmitted.
#[derive(Debug, Clone)]
pub struct Sent {
    /// When (offset from the pair's start).
    pub at: Duration,
    /// The JSON text, without framing.
    pub payload: Vec<u8>,
}
