//! The sans-IO MCP session: lifecycle, correlation, timeouts, cancellation, progress, logging.
//!
//! [`Session<Client>`] and [`Session<Server>`] are one state machine behind `&mut self`: no
//! locks, channels, threads or clock reads. An adapter drives it:
//!
//! ```text
//! inputs    handle_bytes(now, &[u8])            stream framing: stdio, WebSocket, legacy SSE
//!           handle_frame(now, route, &[u8])     one complete JSON text: HTTP body, SSE data
//!           handle_stream_closed(now, stream)   an HTTP response stream ended or dropped
//!           handle_closed(now)                  EOF / transport gone
//!           handle_timeout(now)                 spurious calls are no-ops
//! commands  send_request / notify / respond / cancel / close  -> Result<_, SendError>
//! drains    poll_output() -> Option<Output>     call until None after EVERY input or command
//!           poll_timeout() -> Option<Instant>   then wait for one thing: bytes, a command, or this
//! ```
//!
//! Every request this side sends ends exactly once, as an [`Event::Response`]: a result, the
//! peer's error, or a local failure (timed out, cancelled, closed). [`Event::Closed`] is always
//! the last event. Misuse by the caller is a [`SendError`]; misbehaviour of the peer never is:
//! the session answers it on the wire and reports [`Event::PeerMisbehaved`].
//!
//! # Examples
//!
//! A client and a server wired back to back in memory:
//!
//! ```
//! use std::time::Instant;
//! use talaria_core::schema::Implementation;
//! use talaria_core::session::{
//!     Client, ClientConfig, ClientMode, Event, Output, RequestOptions, Server, ServerConfig, Session,
//! };
//!
//! let now = Instant::now();
//! let mut client = Session::<Client>::new(ClientConfig::new(Implementation::new("c", "1")).with_mode(ClientMode::Legacy), now);
//! let mut server = Session::<Server>::new(ServerConfig::new(Implementation::new("s", "1")));
//! let id = client.send_request(now, "ping", None, RequestOptions::default()).unwrap();
//!
//! // The run loop: move every transmitted frame to the other side until both are quiet.
//! let mut answered = false;
//! loop {
//!     let mut moved = false;
//!     while let Some(out) = client.poll_output() {
//!         if let Output::Transmit { payload, .. } = out {
//!             let mut line = payload;
//!             line.push(b'\n');
//!             server.handle_bytes(now, &line);
//!             moved = true;
//!         } else if let Output::Event(Event::Response { id: got, outcome }) = out {
//!             assert_eq!(got, id);
//!             assert!(outcome.is_ok());
//!             answered = true;
//!         }
//!     }
//!     while let Some(out) = server.poll_output() {
//!         if let Output::Transmit { payload, .. } = out {
//!             let mut line = payload;
//!             line.push(b'\n');
//!             client.handle_bytes(now, &line);
//!             moved = true;
//!         }
//!     }
//!     if !moved {
//!         break;
//!     }
//! }
//! assert!(answered);
//! ```

use crate::alloc_prelude::*;
mod batch;
mod call_error;
mod carries;
mod client_commands;
mod commands;
mod config;
mod error;
mod event;
mod handshake;
mod inbound;
mod incoming;
mod lifecycle;
mod meta;
mod outbound;
mod snapshot;
mod snapshot_merge;

use crate::time::Instant;
use alloc::collections::VecDeque;
use core::marker::PhantomData;

pub use batch::BatchItem;
pub use call_error::{CallError, LocalError, NotSentReason};
pub use carries::Carries;
pub(crate) use commands::required_capabilities;
pub use config::{ClientConfig, ClientMode, ServerConfig, SessionConfig};
pub use error::{CloseReason, ProtocolError, SendError};
pub use event::{
    Event, FrameDirection, FrameObserver, IncomingRequest, Output, ReadyInfo, ReplyToken, Route, StreamId,
};
pub use lifecycle::{Phase, Transition};
pub use snapshot::SessionSnapshot;
pub use snapshot_merge::AppMerge;

use self::inbound::Inbound;
use self::outbound::Outbound;
use crate::codec::LineDecoder;
use crate::jsonrpc::RequestId;
use crate::schema::lifecycle::{ClientCapabilities, ServerCapabilities};
use crate::schema::{Implementation, LoggingLevel, Side};
use crate::version::ProtocolVersion;

/// The client role.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Client;

/// The server role.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Server;

/// A side of the protocol: [`Client`] or [`Server`].
pub trait Role: private::Sealed {
    /// Which side.
    const SIDE: Side;
}

impl Role for Client {
    const SIDE: Side = Side::Client;
}

impl Role for Server {
    const SIDE: Side = Side::Server;
}

mod private {
    pub trait Sealed {}
    impl Sealed for super::Client {}
    impl Sealed for super::Server {}
}

/// Per-call settings for [`Session::send_request`].
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use talaria_core::session::RequestOptions;
///
/// let o = RequestOptions::default().with_timeout(Duration::from_secs(5)).with_progress();
/// assert!(o.progress);
/// assert_eq!(o.timeout, Some(Duration::from_secs(5)));
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct RequestOptions {
    /// Overrides the configured request timeout.
    pub timeout: Option<core::time::Duration>,
    /// Overrides the configured cap on total time.
    pub max_time: Option<core::time::Duration>,
    /// Ask the peer for progress (a token goes into `_meta.progressToken`).
    pub progress: bool,
}

impl RequestOptions {
    /// Overrides the request timeout.
    #[must_use]
    pub const fn with_timeout(mut self, timeout: core::time::Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Overrides the cap on total time.
    #[must_use]
    pub const fn with_max_time(mut self, max_time: core::time::Duration) -> Self {
        self.max_time = Some(max_time);
        self
    }

    /// Asks the peer for progress notifications.
    #[must_use]
    pub const fn with_progress(mut self) -> Self {
        self.progress = true;
        self
    }
}

/// What the peer declared in the handshake: a server's capabilities and instructions (seen
/// by a client) or a client's capabilities (seen by a server).
#[derive(Debug, Clone, Default)]
enum PeerCaps {
    #[default]
    Unknown,
    Server(ServerCapabilities, Option<String>),
    Client(ClientCapabilities),
}

impl PeerCaps {
    const fn server(&self) -> Option<&ServerCapabilities> {
        match self {
            Self::Server(caps, _) => Some(caps),
            _ => None,
        }
    }

    fn instructions(&self) -> Option<&str> {
        match self {
            Self::Server(_, instructions) => instructions.as_deref(),
            _ => None,
        }
    }

    const fn client(&self) -> Option<&ClientCapabilities> {
        match self {
            Self::Client(caps) => Some(caps),
            _ => None,
        }
    }
}

/// What the local side is configured with.
#[derive(Debug, Clone)]
enum Local {
    Client(Box<ClientConfig>),
    /// Shared: every session of a server reads the same configuration.
    Server(alloc::sync::Arc<ServerConfig>),
}

/// An MCP session, one per connection (or per stateless exchange), for role `R`.
///
/// Methods by role: getters (`&self`), inputs (`handle_*`), commands (`send_request`,
/// `notify`, `respond`, `cancel`, `close`, ...) and drains (`poll_*`). After every input or
/// command, drain `poll_output` until it returns `None`, then wait for the next input or for
/// `poll_timeout`.
#[derive(Debug)]
pub struct Session<R> {
    local: Local,
    phase: Phase,
    version: Option<ProtocolVersion>,
    peer: Option<Implementation>,
    /// What the peer declared: one kind or the other, never both (a server session keeps no
    /// room for server capabilities and instructions).
    peer_caps: PeerCaps,
    /// Legacy server: the level set by `logging/setLevel`.
    log_level: Option<LoggingLevel>,
    outbound: Outbound,
    inbound: Inbound,
    batches: batch::Batches,
    /// Application requests made before the session was ready, sent when it is.
    queued: VecDeque<(RequestId, String, Option<Box<serde_json::value::RawValue>>)>,
    out: VecDeque<Output>,
    lines: LineDecoder,
    late_responses: u64,
    /// Sees every frame both ways (wire traces).
    observer: event::Observer,
    /// Client: when the handshake must be over (its one clock: probe and fallback included).
    handshake_deadline: Option<Instant>,
    role: PhantomData<R>,
}

impl<R: Role> Session<R> {
    fn with_local(local: Local) -> Self {
        let max_frame = match &local {
            Local::Client(c) => c.session.max_frame_len,
            Local::Server(s) => s.session.max_frame_len,
        };
        Self {
            local,
            phase: Phase::AwaitingPeer,
            version: None,
            peer: None,
            peer_caps: PeerCaps::Unknown,
            log_level: None,
            outbound: Outbound::default(),
            inbound: Inbound::default(),
            batches: batch::Batches::default(),
            queued: VecDeque::new(),
            out: VecDeque::new(),
            lines: LineDecoder::with_max_frame_len(max_frame),
            late_responses: 0,
            observer: event::Observer::default(),
            handshake_deadline: None,
            role: PhantomData,
        }
    }

    /// The session's configuration (timeouts, limits).
    pub(crate) fn config(&self) -> &SessionConfig {
        match &self.local {
            Local::Client(c) => &c.session,
            Local::Server(s) => &s.session,
        }
    }

    /// Where the session is in its life.
    #[must_use]
    pub const fn phase(&self) -> Phase {
        self.phase
    }

    /// The negotiated revision, once known.
    #[must_use]
    pub const fn version(&self) -> Option<ProtocolVersion> {
        self.version
    }

    /// The peer's implementation info, once known.
    #[must_use]
    pub const fn peer_info(&self) -> Option<&Implementation> {
        self.peer.as_ref()
    }

    /// The server's capabilities (on a client, once ready).
    #[must_use]
    pub const fn server_capabilities(&self) -> Option<&ServerCapabilities> {
        self.peer_caps.server()
    }

    /// The client's capabilities (on a legacy server, once initialized).
    #[must_use]
    pub const fn client_capabilities(&self) -> Option<&ClientCapabilities> {
        self.peer_caps.client()
    }

    /// The server's instructions (on a client, once ready).
    #[must_use]
    pub fn instructions(&self) -> Option<&str> {
        self.peer_caps.instructions()
    }

    /// How many sent requests wait for a response.
    #[must_use]
    pub fn pending_requests(&self) -> usize {
        self.outbound.len()
    }

    /// The method of a request this side sent that still waits for its response (what a
    /// typed layer needs to decode the result, e.g. through `schema::McpPayloads`).
    #[must_use]
    pub fn pending_method(&self, id: &RequestId) -> Option<&str> {
        self.outbound.get(id).map(|p| p.method.as_str())
    }

    /// Numbers this side's later requests `{prefix}{n}` (strings) instead of `n`: for a
    /// session that several processes may hold at once (sessions shared through a store), so
    /// that the ids they mint never collide and a response can be routed to the process that
    /// waits for it.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Instant;
    /// use talaria_core::schema::Implementation;
    /// use talaria_core::session::{ClientConfig, RequestOptions, Session, Client};
    ///
    /// let mut session = Session::<Client>::new(ClientConfig::new(Implementation::new("c", "1")), Instant::now());
    /// session.number_requests_with("p7-");
    /// # let _ = session;
    /// ```
    pub fn number_requests_with(&mut self, prefix: &str) {
        self.outbound.set_prefix(prefix);
    }

    /// Whether the peer request `id` still waits for `respond` (it was neither answered nor
    /// cancelled).
    #[must_use]
    pub fn awaits_answer(&self, id: &RequestId) -> bool {
        self.inbound.contains(id)
    }

    /// How many peer requests wait for `respond`.
    #[must_use]
    pub fn inflight_requests(&self) -> usize {
        self.inbound.len()
    }

    /// How many responses arrived after their request had timed out or been cancelled
    /// (dropped).
    #[must_use]
    pub const fn late_responses(&self) -> u64 {
        self.late_responses
    }

    /// Bytes held for an incomplete line.
    #[must_use]
    pub fn buffered_bytes(&self) -> usize {
        self.lines.buffered_len()
    }

    /// The next output, if any. Call until `None` after every input or command.
    #[must_use]
    pub fn poll_output(&mut self) -> Option<Output> {
        let output = self.out.pop_front();
        match &output {
            Some(Output::Transmit { payload, .. }) => self.observer.see(FrameDirection::Sent, payload),
            Some(_) => {}
            // Drained: an idle session keeps no queue (a few hundred bytes for each of
            // thousands of idle HTTP sessions), at the price of one allocation per busy spell.
            None => self.out = VecDeque::new(),
        }
        output
    }

    /// Shows `observer` every frame: each one received (from `handle_frame`, or split from
    /// `handle_bytes`) before it is handled, and each one to transmit as `poll_output` hands it
    /// out. The seam for wire traces; replaces any earlier observer.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Instant;
    /// use talaria_core::schema::Implementation;
    /// use talaria_core::session::{ClientConfig, FrameDirection, Server, ServerConfig, Session};
    ///
    /// let (tx, rx) = std::sync::mpsc::channel();
    /// let mut server = Session::<Server>::new(ServerConfig::new(Implementation::new("s", "1")));
    /// server.observe_frames(Box::new(move |direction, frame| tx.send((direction, frame.to_vec())).unwrap()));
    /// server.handle_bytes(Instant::now(), b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n");
    /// while server.poll_output().is_some() {}
    /// let seen: Vec<_> = rx.try_iter().collect();
    /// assert_eq!(seen[0].0, FrameDirection::Received);
    /// assert!(seen.iter().any(|(d, _)| *d == FrameDirection::Sent), "the answer (an error: not initialized)");
    /// ```
    pub fn observe_frames(&mut self, observer: FrameObserver) {
        self.observer = event::Observer(Some(observer));
    }

    /// When `handle_timeout` must next be called, if ever.
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Instant> {
        if self.phase == Phase::Closed {
            return None;
        }
        self.outbound.next_deadline()
    }
}

impl Session<Client> {
    /// A client session. It starts the handshake at once: `initialize` (Legacy) or a
    /// `server/discover` probe (Auto, Stateless); drain `poll_output` to send it.
    #[must_use]
    pub fn new(config: ClientConfig, now: Instant) -> Self {
        let mode = config.mode;
        let deadline = now.checked_add(config.handshake_timeout);
        let mut session = Self::with_local(Local::Client(Box::new(config)));
        session.handshake_deadline = deadline;
        match mode {
            ClientMode::Legacy => session.start_initialize(now),
            ClientMode::Stateless | ClientMode::Auto => session.start_discover(now),
        }
        session
    }
}

impl Session<Server> {
    /// A server session, waiting for its client. A server with many sessions passes one
    /// `Arc<ServerConfig>` to them all, so that each does not hold a copy.
    #[must_use]
    pub fn new(config: impl Into<alloc::sync::Arc<ServerConfig>>) -> Self {
        Self::with_local(Local::Server(config.into()))
    }
}

#[cfg(test)]
mod tests;
