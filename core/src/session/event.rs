//! What a session hands back: outputs to transmit, and events for the application.

use crate::alloc_prelude::*;
use serde_json::value::RawValue;

use super::carries::Carries;
use super::error::{CloseReason, ProtocolError};
use crate::jsonrpc::RequestId;
use crate::schema::lifecycle::{ClientCapabilities, RequestMeta, ServerCapabilities};
use crate::schema::logging::LoggingMessageNotificationParams;
use crate::schema::{Implementation, LoggingLevel, ProgressToken};
use crate::session::CallError;
use crate::version::ProtocolVersion;

/// An HTTP response stream, numbered by the adapter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct StreamId(pub u64);

/// Where a frame came from or goes to.
///
/// `Connection` is the long-lived channel (stdio, WebSocket, legacy SSE, the HTTP GET stream).
/// `Stream` is one request-scoped HTTP response stream (a POST): replies and notifications
/// about a request go back on the stream it arrived on.
///
/// # Examples
///
/// ```
/// use talaria_core::session::{Route, StreamId};
///
/// assert_ne!(Route::Connection, Route::Stream(StreamId(1)));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Route {
    /// The long-lived channel.
    Connection,
    /// A request-scoped HTTP response stream.
    Stream(StreamId),
}

/// One thing for the adapter to do. Drain with `poll_output` after every input or command.
#[derive(Debug)]
#[non_exhaustive]
pub enum Output {
    /// Send `payload` (one JSON text, no framing) on `route`.
    Transmit {
        /// Where to send it.
        route: Route,
        /// The JSON text.
        payload: Vec<u8>,
        /// What it is: kind, id, method (read this, not the payload).
        carries: Carries,
    },
    /// Every reply due on this HTTP stream has been sent: the adapter may end it.
    StreamDone(StreamId),
    /// End this HTTP response stream now, though its request is still in flight (2025-11-25
    /// SSE polling, asked for with `Session::close_sse_stream`). What the session still routes
    /// to the stream goes to the stream's event log, and the client gets it by reconnecting
    /// with `Last-Event-ID`. A `StreamDone` for the same stream follows later.
    StreamDisconnect(StreamId),
    /// Something for the application.
    Event(Event),
}

/// The right, and the duty, to answer one incoming request: pass it to `respond`.
///
/// Not `Clone`: a request is answered once.
#[derive(Debug, PartialEq, Eq)]
#[must_use = "an incoming request must be answered with `respond`"]
pub struct ReplyToken {
    pub(super) id: RequestId,
    pub(super) route: Route,
}

impl ReplyToken {
    /// A token for work answered elsewhere than on the wire (a tool call run as a task: its
    /// outcome goes to the task, not to a request). The session knows no request with `id`,
    /// so answering it sends nothing.
    pub(crate) const fn detached(id: RequestId) -> Self {
        Self { id, route: Route::Connection }
    }

    /// The id of the request this answers.
    #[must_use]
    pub const fn id(&self) -> &RequestId {
        &self.id
    }

    /// Where the request came from.
    #[must_use]
    pub const fn route(&self) -> Route {
        self.route
    }
}

/// What the session learned when it became ready.
#[derive(Debug, Clone, PartialEq)]
pub struct ReadyInfo {
    /// The negotiated revision.
    pub version: ProtocolVersion,
    /// The peer's implementation info (empty name and version if it sent none).
    pub peer: Implementation,
    /// The server's capabilities (on a client).
    pub server_capabilities: Option<ServerCapabilities>,
    /// The client's capabilities (on a server, legacy era).
    pub client_capabilities: Option<ClientCapabilities>,
    /// The server's instructions (on a client).
    pub instructions: Option<String>,
}

/// A request from the peer, for the application to answer.
#[derive(Debug)]
pub struct IncomingRequest {
    /// Answer with this.
    pub reply: ReplyToken,
    /// The method.
    pub method: String,
    /// The raw params.
    pub params: Option<Box<RawValue>>,
    /// The progress token, if the peer asked for progress.
    pub progress_token: Option<ProgressToken>,
    /// Stateless era: the request's own version, capabilities, client info and log level.
    pub meta: Option<Box<RequestMeta>>,
}

/// Something the application should know about.
#[derive(Debug)]
#[non_exhaustive]
pub enum Event {
    /// The handshake completed (or, stateless, discovery did).
    Ready(Box<ReadyInfo>),
    /// The peer sent a request; answer it with `respond`.
    Request(IncomingRequest),
    /// The peer sent a notification the session does not handle itself (list changes,
    /// resource updates, roots changes, ...).
    Notification {
        /// The method.
        method: String,
        /// The raw params.
        params: Option<Box<RawValue>>,
    },
    /// A request sent by this side ended. Exactly once per request.
    Response {
        /// Its id.
        id: RequestId,
        /// The result, or how it failed.
        outcome: Result<Box<RawValue>, CallError>,
    },
    /// Progress on a request sent by this side.
    Progress {
        /// The request.
        id: RequestId,
        /// Progress so far.
        progress: f64,
        /// The total, if known.
        total: Option<f64>,
        /// A message, if any.
        message: Option<String>,
    },
    /// The peer cancelled a request it had sent; the handler should stop. A later `respond`
    /// for it is dropped.
    PeerCancelled {
        /// The cancelled request.
        id: RequestId,
        /// Why, if said.
        reason: Option<String>,
    },
    /// A log message from the server (on a client).
    Log(Box<LoggingMessageNotificationParams>),
    /// The client set the log level (on a server).
    LogLevelChanged(LoggingLevel),
    /// The peer broke the protocol; the session answered where an answer was due.
    PeerMisbehaved(ProtocolError),
    /// The session closed. Always the last event.
    Closed {
        /// Why.
        reason: CloseReason,
    },
}

/// Which way a frame went, for a [`FrameObserver`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameDirection {
    /// To the peer.
    Sent,
    /// From the peer.
    Received,
}

/// Sees each frame a session receives or transmits, as it is (see
/// [`Session::observe_frames`](super::Session::observe_frames)).
pub type FrameObserver = Box<dyn FnMut(FrameDirection, &[u8]) + Send>;

/// The installed [`FrameObserver`], if any.
#[derive(Default)]
pub(super) struct Observer(pub(super) Option<FrameObserver>);

impl core::fmt::Debug for Observer {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(if self.0.is_some() { "Observer(installed)" } else { "Observer(none)" })
    }
}

impl Observer {
    /// Shows the observer a frame, if there is one.
    pub(super) fn see(&mut self, direction: FrameDirection, frame: &[u8]) {
        if let Some(observe) = &mut self.0 {
            observe(direction, frame);
        }
    }
}
