//! The stores behind resumable Streamable HTTP: the SSE event log ([`EventStore`]) and session
//! records ([`SessionStore`]), each a small synchronous trait with an in-memory default.
//!
//! A server that supports resumption (2025-03-26 .. 2025-11-25) gives every SSE event it sends an
//! `id:`. A client whose stream dropped reconnects with a GET carrying `Last-Event-ID`, and the
//! server replays what came after that id on the same stream, and only that stream.
//!
//! # Event ids
//!
//! An [`EventId`] is `<stream>-<seq>`, two decimal `u64`s in canonical form (no sign, no leading
//! zeros): stream `3`, third event is `3-3`. The stream part makes ids unique across all the
//! streams of a session and lets a `Last-Event-ID` alone name the stream to resume. Stream ids
//! are minted by the store ([`EventStore::open_stream`], from 1 up, never reused in a session)
//! rather than by the adapter, so that several server processes sharing one store never hand out
//! the same stream twice, and a resumed stream (a new HTTP response) keeps its identity. Sequence
//! numbers start at 1 in each stream; `<stream>-0` ([`EventId::start`]) is the position before
//! the first event, the id of the 2025-11-25 priming event (an `id:` with empty data).
//!
//! # Order of calls
//!
//! ```text
//! open_stream(session)                    -> stream          a response turns into SSE
//! append(session, stream, payload)        -> EventId         BEFORE writing the event
//! close_stream(session, stream)                              the response is complete
//! replay_after(session, EventId)          -> Replay          GET with Last-Event-ID
//! drop_session(session)                                      DELETE, idle expiry
//! ```
//!
//! Appending before sending is what makes a replay exact: an event whose write failed halfway is
//! in the log, so the resuming client gets it once.
//!
//! # Sharing and blocking
//!
//! Methods take `&mut self` and the traits are synchronous. An adapter that serves sessions on
//! several threads keeps one store behind a `Mutex` and holds the lock for one call; a networked
//! store (Redis, say, for several server processes behind a load balancer) implements the trait
//! on a cheap handle (a connection or a pool handle) and gives each thread its own, so no lock is
//! needed at all. A networked store may block on I/O: adapters call the stores off the hot path
//! where possible (on the handler pool, not the socket reader; through `blocking::unblock` in an
//! async adapter). Any implementation must pass [`conformance`](super::conformance).
//!
//! # Examples
//!
//! ```
//! use talaria_core::http::event_log::{EventId, EventStore, MemoryEventStore, Retention};
//!
//! let mut log = MemoryEventStore::new(Retention::default());
//! let stream = log.open_stream("session-a").unwrap();
//! let first = log.append("session-a", stream, b"{\"jsonrpc\":\"2.0\",\"method\":\"a\"}").unwrap();
//! log.append("session-a", stream, b"{\"jsonrpc\":\"2.0\",\"method\":\"b\"}").unwrap();
//!
//! // The client saw `first`, then its connection dropped.
//! let last_event_id: EventId = first.to_string().parse().unwrap();
//! let replay = log.replay_after("session-a", last_event_id).unwrap();
//! assert!(replay.is_exact());
//! assert_eq!(replay.events.len(), 1);
//! assert_eq!(replay.events[0].data, b"{\"jsonrpc\":\"2.0\",\"method\":\"b\"}");
//! ```

use crate::alloc_prelude::*;
mod async_session_store;
mod forwarding;
mod memory;
mod session_store;
mod stand_in;

use core::fmt;
use core::str::FromStr;

pub use async_session_store::{AsyncSessionStore, BlockingSessionStore, StoreFuture};
pub use memory::MemoryEventStore;
pub use session_store::{MemorySessionStore, Refresh, SessionRecord, SessionStore, SessionStoreError, StoreIf};
pub use stand_in::stand_in;

/// The id of one SSE event: its stream and its position in that stream, written `<stream>-<seq>`.
///
/// The format is part of the wire contract between a server and its store: every store hands out
/// and accepts these ids, so stores can be swapped behind a running fleet. Parsing accepts only
/// the canonical form [`Display`](fmt::Display) writes (decimal, no sign, no leading zeros), so a
/// `Last-Event-ID` maps to at most one event.
///
/// # Examples
///
/// ```
/// use talaria_core::http::event_log::EventId;
///
/// let id = EventId::new(3, 17);
/// assert_eq!(id.to_string(), "3-17");
/// assert_eq!("3-17".parse::<EventId>(), Ok(id));
/// assert!("3-017".parse::<EventId>().is_err());
/// assert_eq!(EventId::start(3).to_string(), "3-0");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct EventId {
    /// The stream the event belongs to, as minted by [`EventStore::open_stream`].
    pub stream: u64,
    /// The event's position in its stream: 1 for the first event, 0 for "before the first".
    pub seq: u64,
}

impl EventId {
    /// The id of event `seq` of `stream`.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::http::event_log::EventId;
    ///
    /// assert_eq!(EventId::new(1, 2).seq, 2);
    /// ```
    #[must_use]
    pub const fn new(stream: u64, seq: u64) -> Self {
        Self { stream, seq }
    }

    /// The position before the first event of `stream`: the id of a priming event, and the id to
    /// replay a whole stream from.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::http::event_log::EventId;
    ///
    /// assert!(EventId::start(5).is_start());
    /// assert!(!EventId::new(5, 1).is_start());
    /// ```
    #[must_use]
    pub const fn start(stream: u64) -> Self {
        Self { stream, seq: 0 }
    }

    /// Whether this is the position before the first event of its stream.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::http::event_log::EventId;
    ///
    /// assert!("7-0".parse::<EventId>().unwrap().is_start());
    /// ```
    #[must_use]
    pub const fn is_start(self) -> bool {
        self.seq == 0
    }
}

impl fmt::Display for EventId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}", self.stream, self.seq)
    }
}

impl FromStr for EventId {
    type Err = ParseEventIdError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let (stream, seq) = s.split_once('-').ok_or(ParseEventIdError)?;
        Ok(Self { stream: canonical_u64(stream)?, seq: canonical_u64(seq)? })
    }
}

/// A decimal `u64` with no sign and no leading zero.
fn canonical_u64(s: &str) -> Result<u64, ParseEventIdError> {
    let canonical = !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) && (s == "0" || !s.starts_with('0'));
    if !canonical {
        return Err(ParseEventIdError);
    }
    s.parse().map_err(|_| ParseEventIdError)
}

/// A `Last-Event-ID` that is not an [`EventId`] of ours: the peer sent something we never issued.
///
/// # Examples
///
/// ```
/// use talaria_core::http::event_log::{EventId, ParseEventIdError};
///
/// assert_eq!("abc".parse::<EventId>(), Err(ParseEventIdError));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("not an event id of the form <stream>-<seq>")]
pub struct ParseEventIdError;

/// One retained event: its id and the bytes of its SSE `data` (one JSON text, or empty).
///
/// # Examples
///
/// ```
/// use talaria_core::http::event_log::{EventId, StoredEvent};
///
/// let event = StoredEvent::new(EventId::new(1, 1), b"{}".to_vec());
/// assert_eq!(event.id.to_string(), "1-1");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct StoredEvent {
    /// The id to send as the event's `id:` field.
    pub id: EventId,
    /// The payload, as appended.
    pub data: Vec<u8>,
}

impl StoredEvent {
    /// An event with id `id` and payload `data` (for store implementations).
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::http::event_log::{EventId, StoredEvent};
    ///
    /// assert!(StoredEvent::new(EventId::new(2, 9), Vec::new()).data.is_empty());
    /// ```
    #[must_use]
    pub const fn new(id: EventId, data: Vec<u8>) -> Self {
        Self { id, data }
    }
}

/// What a resuming client is owed: the retained events after its `Last-Event-ID`, how many
/// retention dropped, and whether the stream has ended.
///
/// `missed` counts the events after the given id that were appended but are no longer retained;
/// they came before every event in `events`. A replay with `missed > 0` cannot resume exactly:
/// the adapter decides whether to send what is left or refuse the resumption. When `closed` is
/// set, the stream ended after its last event: the adapter sends `events` and ends the response.
///
/// # Examples
///
/// ```
/// use talaria_core::http::event_log::{EventStore, MemoryEventStore, Retention};
///
/// let mut log = MemoryEventStore::new(Retention::default().with_max_events(2));
/// let stream = log.open_stream("s").unwrap();
/// let first = log.append("s", stream, b"1").unwrap();
/// log.append("s", stream, b"2").unwrap();
/// log.append("s", stream, b"3").unwrap();
/// log.append("s", stream, b"4").unwrap();
/// log.close_stream("s", stream).unwrap();
///
/// let replay = log.replay_after("s", first).unwrap();
/// assert_eq!(replay.missed, 1); // "2" was dropped
/// assert!(!replay.is_exact());
/// assert_eq!(replay.events.iter().map(|e| &e.data[..]).collect::<Vec<_>>(), [b"3", b"4"]);
/// assert!(replay.closed);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Replay {
    /// The retained events after the given id, oldest first.
    pub events: Vec<StoredEvent>,
    /// How many events after the given id retention dropped (all older than `events`).
    pub missed: u64,
    /// Whether the stream was closed: nothing will follow `events`.
    pub closed: bool,
}

impl Replay {
    /// A replay of `events`, after `missed` dropped ones, of a stream that is `closed` or not (for
    /// store implementations).
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::http::event_log::Replay;
    ///
    /// assert!(Replay::new(Vec::new(), 0, false).is_exact());
    /// ```
    #[must_use]
    pub const fn new(events: Vec<StoredEvent>, missed: u64, closed: bool) -> Self {
        Self { events, missed, closed }
    }

    /// Whether every event after the given id is in `events`.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::http::event_log::Replay;
    ///
    /// assert!(!Replay::new(Vec::new(), 3, true).is_exact());
    /// ```
    #[must_use]
    pub const fn is_exact(&self) -> bool {
        self.missed == 0
    }
}

/// Why an [`EventStore`] call failed.
///
/// The `Unknown*` variants and [`StreamEvicted`](Self::StreamEvicted) on a replay mean the
/// client's `Last-Event-ID` names nothing this session can resume; [`Backend`](Self::Backend) is
/// the store itself failing.
///
/// # Examples
///
/// ```
/// use talaria_core::http::event_log::{EventId, EventStore, EventStoreError, MemoryEventStore, Retention};
///
/// let mut log = MemoryEventStore::new(Retention::default());
/// let err = log.replay_after("s", EventId::new(1, 0)).unwrap_err();
/// assert!(matches!(err, EventStoreError::UnknownStream { stream: 1 }));
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EventStoreError {
    /// The session has no such stream: it was never opened in this session, or the session was
    /// dropped.
    #[error("the session has no stream {stream}")]
    UnknownStream {
        /// The stream asked for.
        stream: u64,
    },
    /// The stream existed, but retention evicted it whole to make room for newer streams of the
    /// session.
    #[error("stream {stream} was evicted")]
    StreamEvicted {
        /// The stream asked for.
        stream: u64,
    },
    /// The id is past the last event appended to its stream: it was never issued.
    #[error("event {id} was never appended")]
    UnknownEvent {
        /// The id asked for.
        id: EventId,
    },
    /// An append to a stream that was closed.
    #[error("stream {stream} is closed")]
    StreamClosed {
        /// The stream appended to.
        stream: u64,
    },
    /// The backing store failed (a network error, a corrupt record).
    #[error("event store backend: {0}")]
    Backend(#[source] Box<dyn core::error::Error + Send + Sync + 'static>),
}

/// The SSE event log behind resumable streams, keyed by session id and stream.
///
/// The contract, which [`conformance::check_event_store`](super::conformance::check_event_store)
/// checks:
///
/// - [`open_stream`](Self::open_stream) mints a stream id unused so far in the session (from 1
///   up); streams of different sessions are independent.
/// - [`append`](Self::append) gives the event the next sequence number of its stream (from 1) and
///   returns its id; call it before sending the event.
/// - [`replay_after`](Self::replay_after) returns the retained events of `after.stream` with a
///   greater sequence number, oldest first, with the count of those retention dropped.
/// - Retention is per stream: at most [`Retention::max_events`] events and
///   [`Retention::max_bytes`] payload bytes, dropping the oldest; an event larger than
///   `max_bytes` gets its id but is not kept. At most [`Retention::max_streams`] streams per
///   session: opening one more evicts the oldest closed stream, or else the oldest open one.
/// - [`close_stream`](Self::close_stream) marks the stream ended (idempotent); replays report
///   it and appends fail.
/// - [`drop_session`](Self::drop_session) forgets every stream of the session (idempotent).
///   Session ids are never reused, so a store need not remember dropped ones.
///
/// See the [module docs](self) for the call order and for sharing a store between threads.
///
/// # Examples
///
/// ```
/// use talaria_core::http::event_log::{EventId, EventStore, MemoryEventStore, Retention};
///
/// fn resume(log: &mut dyn EventStore, session: &str, last_event_id: &str) -> Option<Vec<Vec<u8>>> {
///     let after: EventId = last_event_id.parse().ok()?;
///     let replay = log.replay_after(session, after).ok()?;
///     replay.is_exact().then(|| replay.events.into_iter().map(|e| e.data).collect())
/// }
///
/// let mut log = MemoryEventStore::new(Retention::default());
/// let stream = log.open_stream("s").unwrap();
/// log.append("s", stream, b"a").unwrap();
/// assert_eq!(resume(&mut log, "s", "1-0"), Some(vec![b"a".to_vec()]));
/// assert_eq!(resume(&mut log, "s", "1-9"), None); // never issued
/// ```
pub trait EventStore {
    /// Starts a new stream in `session` and returns its id, never used before in the session.
    ///
    /// # Errors
    ///
    /// [`EventStoreError::Backend`] if the store failed.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::http::event_log::{EventStore, MemoryEventStore, Retention};
    ///
    /// let mut log = MemoryEventStore::new(Retention::default());
    /// assert_ne!(log.open_stream("s").unwrap(), log.open_stream("s").unwrap());
    /// ```
    fn open_stream(&mut self, session: &str) -> Result<u64, EventStoreError>;

    /// Appends `data` to `stream` of `session` and returns the new event's id. Call it before
    /// sending the event, and send the event with this id.
    ///
    /// # Errors
    ///
    /// [`EventStoreError::UnknownStream`] or [`EventStoreError::StreamEvicted`] if the stream is
    /// not there, [`EventStoreError::StreamClosed`] if it was closed,
    /// [`EventStoreError::Backend`] if the store failed.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::http::event_log::{EventId, EventStore, MemoryEventStore, Retention};
    ///
    /// let mut log = MemoryEventStore::new(Retention::default());
    /// let stream = log.open_stream("s").unwrap();
    /// assert_eq!(log.append("s", stream, b"{}").unwrap(), EventId::new(stream, 1));
    /// ```
    fn append(&mut self, session: &str, stream: u64, data: &[u8]) -> Result<EventId, EventStoreError>;

    /// The retained events of stream `after.stream` of `session` that came after `after`.
    ///
    /// # Errors
    ///
    /// [`EventStoreError::UnknownStream`] or [`EventStoreError::StreamEvicted`] if the stream is
    /// not there, [`EventStoreError::UnknownEvent`] if `after` was never issued,
    /// [`EventStoreError::Backend`] if the store failed.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::http::event_log::{EventId, EventStore, MemoryEventStore, Retention};
    ///
    /// let mut log = MemoryEventStore::new(Retention::default());
    /// let stream = log.open_stream("s").unwrap();
    /// let last = log.append("s", stream, b"{}").unwrap();
    /// assert!(log.replay_after("s", last).unwrap().events.is_empty());
    /// assert_eq!(log.replay_after("s", EventId::start(stream)).unwrap().events.len(), 1);
    /// ```
    fn replay_after(&mut self, session: &str, after: EventId) -> Result<Replay, EventStoreError>;

    /// Marks `stream` of `session` ended. Closing a closed stream does nothing.
    ///
    /// # Errors
    ///
    /// [`EventStoreError::UnknownStream`] or [`EventStoreError::StreamEvicted`] if the stream is
    /// not there, [`EventStoreError::Backend`] if the store failed.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::http::event_log::{EventId, EventStore, MemoryEventStore, Retention};
    ///
    /// let mut log = MemoryEventStore::new(Retention::default());
    /// let stream = log.open_stream("s").unwrap();
    /// log.close_stream("s", stream).unwrap();
    /// assert!(log.replay_after("s", EventId::start(stream)).unwrap().closed);
    /// assert!(log.append("s", stream, b"{}").is_err());
    /// ```
    fn close_stream(&mut self, session: &str, stream: u64) -> Result<(), EventStoreError>;

    /// Forgets every stream of `session` (deleted or expired). Dropping an unknown session does
    /// nothing.
    ///
    /// # Errors
    ///
    /// [`EventStoreError::Backend`] if the store failed.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::http::event_log::{EventStore, MemoryEventStore, Retention};
    ///
    /// let mut log = MemoryEventStore::new(Retention::default());
    /// let stream = log.open_stream("s").unwrap();
    /// log.append("s", stream, b"{}").unwrap();
    /// log.drop_session("s").unwrap();
    /// assert!(log.is_empty());
    /// ```
    fn drop_session(&mut self, session: &str) -> Result<(), EventStoreError>;

    /// [`EventStore::open_stream`], noting `claim` with the stream where the store keeps
    /// claims: who writes it and for which requests (an encoded
    /// [`Claim`](super::relay::Claim)), so that a process the client resumes the stream on
    /// can end those requests if the writer dies. The default keeps no claim.
    ///
    /// # Errors
    ///
    /// As [`EventStore::open_stream`].
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::http::event_log::{EventStore, MemoryEventStore, Retention};
    ///
    /// // The in-memory store serves one process: it keeps no claims.
    /// let mut log = MemoryEventStore::new(Retention::default());
    /// let stream = log.open_claimed_stream("s", b"{}").unwrap();
    /// assert_eq!(log.claim_of("s", stream).unwrap(), None);
    /// ```
    fn open_claimed_stream(&mut self, session: &str, claim: &[u8]) -> Result<u64, EventStoreError> {
        let _ = claim;
        self.open_stream(session)
    }

    /// The claim noted when `stream` was opened ([`EventStore::open_claimed_stream`]), if the
    /// store keeps claims and the stream is still there.
    ///
    /// # Errors
    ///
    /// [`EventStoreError::Backend`] if the store failed.
    fn claim_of(&mut self, session: &str, stream: u64) -> Result<Option<Vec<u8>>, EventStoreError> {
        let _ = (session, stream);
        Ok(None)
    }

    /// Appends `data` to `stream` as its last event and closes the stream, in one step: a
    /// stream closed meanwhile (by another process) takes nothing. This is how a process that
    /// resumed another's stream ends it when that process died: the stream ends with exactly
    /// one last word.
    ///
    /// The default appends and then closes; a store shared between processes overrides it to
    /// do both at once.
    ///
    /// # Errors
    ///
    /// As [`EventStore::append`]: [`EventStoreError::StreamClosed`] if the stream was closed.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::http::event_log::{EventId, EventStore, MemoryEventStore, Retention};
    ///
    /// let mut log = MemoryEventStore::new(Retention::default());
    /// let stream = log.open_stream("s").unwrap();
    /// let last = log.append_last("s", stream, b"{}").unwrap();
    /// assert!(log.replay_after("s", EventId::start(stream)).unwrap().closed);
    /// assert!(log.append_last("s", stream, b"{}").is_err(), "one last word");
    /// # let _ = last;
    /// ```
    fn append_last(&mut self, session: &str, stream: u64, data: &[u8]) -> Result<EventId, EventStoreError> {
        let id = self.append(session, stream, data)?;
        self.close_stream(session, stream)?;
        Ok(id)
    }

    /// Opens a stream (noting `claim` if given, as [`EventStore::open_claimed_stream`]) with
    /// `data` as its first event, closed after it if `last`: the first event's id. For a
    /// stream whose client needs no id before its first event (no priming event), so that
    /// opening it costs a store shared between processes no round trip of its own.
    ///
    /// The default opens, then appends; a store shared between processes overrides it to do
    /// both at once.
    ///
    /// # Errors
    ///
    /// As [`EventStore::open_stream`] and [`EventStore::append`].
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::http::event_log::{EventId, EventStore, MemoryEventStore, Retention};
    ///
    /// let mut log = MemoryEventStore::new(Retention::default());
    /// let first = log.open_with_event("s", None, b"{}", true).unwrap();
    /// assert_eq!(first.seq, 1);
    /// let replay = log.replay_after("s", EventId::start(first.stream)).unwrap();
    /// assert_eq!((replay.events.len(), replay.closed), (1, true));
    /// ```
    fn open_with_event(
        &mut self,
        session: &str,
        claim: Option<&[u8]>,
        data: &[u8],
        last: bool,
    ) -> Result<EventId, EventStoreError> {
        let stream = match claim {
            Some(claim) => self.open_claimed_stream(session, claim)?,
            None => self.open_stream(session)?,
        };
        if last {
            self.append_last(session, stream, data)
        } else {
            self.append(session, stream, data)
        }
    }

    /// The size of the largest event this store keeps for replay (`None`: no limit). A larger
    /// event gets its id but is not kept; the HTTP server logs an answer that large as its
    /// [`stand_in`] instead, so that a client resuming after it still gets an answer.
    ///
    /// The default says `None`; a store with a retention limit says it.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::http::event_log::{EventStore, MemoryEventStore, Retention};
    ///
    /// let log = MemoryEventStore::new(Retention::default().with_max_bytes(4096));
    /// assert_eq!(log.max_event_bytes(), Some(4096));
    /// ```
    fn max_event_bytes(&self) -> Option<usize> {
        None
    }
}

/// How much of each stream an [`EventStore`] keeps for replay.
///
/// Defaults: 256 events and 1 MiB of payload per stream, 16 streams per session. Byte counts are
/// payload bytes. An event larger than `max_bytes` is never kept (a replay that needs it reports
/// it missed); `max_events` of 0 keeps nothing, which turns resumption off without changing ids.
///
/// # Examples
///
/// ```
/// use talaria_core::http::event_log::Retention;
///
/// let retention = Retention::default().with_max_events(64).with_max_bytes(64 * 1024).with_max_streams(4);
/// assert_eq!((retention.max_events(), retention.max_bytes(), retention.max_streams()), (64, 65536, 4));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retention {
    max_events: usize,
    max_bytes: usize,
    max_streams: usize,
}

impl Retention {
    /// Default events kept per stream.
    pub const DEFAULT_MAX_EVENTS: usize = 256;
    /// Default payload bytes kept per stream.
    pub const DEFAULT_MAX_BYTES: usize = 1024 * 1024;
    /// Default streams kept per session.
    pub const DEFAULT_MAX_STREAMS: usize = 16;

    /// The default retention.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::http::event_log::Retention;
    ///
    /// assert_eq!(Retention::new().max_events(), Retention::DEFAULT_MAX_EVENTS);
    /// ```
    #[must_use]
    pub const fn new() -> Self {
        Self {
            max_events: Self::DEFAULT_MAX_EVENTS,
            max_bytes: Self::DEFAULT_MAX_BYTES,
            max_streams: Self::DEFAULT_MAX_STREAMS,
        }
    }

    /// Keeps at most `max` events per stream.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::http::event_log::Retention;
    ///
    /// assert_eq!(Retention::new().with_max_events(8).max_events(), 8);
    /// ```
    #[must_use]
    pub const fn with_max_events(mut self, max: usize) -> Self {
        self.max_events = max;
        self
    }

    /// Keeps at most `max` payload bytes per stream.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::http::event_log::Retention;
    ///
    /// assert_eq!(Retention::new().with_max_bytes(4096).max_bytes(), 4096);
    /// ```
    #[must_use]
    pub const fn with_max_bytes(mut self, max: usize) -> Self {
        self.max_bytes = max;
        self
    }

    /// Keeps at most `max` streams per session (at least 1: 0 is taken as 1).
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::http::event_log::Retention;
    ///
    /// assert_eq!(Retention::new().with_max_streams(0).max_streams(), 1);
    /// ```
    #[must_use]
    pub const fn with_max_streams(mut self, max: usize) -> Self {
        self.max_streams = if max == 0 { 1 } else { max };
        self
    }

    /// Events kept per stream.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::http::event_log::Retention;
    ///
    /// assert_eq!(Retention::default().max_events(), 256);
    /// ```
    #[must_use]
    pub const fn max_events(&self) -> usize {
        self.max_events
    }

    /// Payload bytes kept per stream.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::http::event_log::Retention;
    ///
    /// assert_eq!(Retention::default().max_bytes(), 1024 * 1024);
    /// ```
    #[must_use]
    pub const fn max_bytes(&self) -> usize {
        self.max_bytes
    }

    /// Streams kept per session.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::http::event_log::Retention;
    ///
    /// assert_eq!(Retention::default().max_streams(), 16);
    /// ```
    #[must_use]
    pub const fn max_streams(&self) -> usize {
        self.max_streams
    }
}

impl Default for Retention {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests;
