//! The two kinds of session errors: local misuse and peer misbehaviour.

use crate::alloc_prelude::*;
use crate::jsonrpc::{DecodeError, ErrorObject, RequestId};
use crate::schema::Capability;
use crate::version::ProtocolVersion;

/// A command was called wrongly or at the wrong time. Never caused by peer data.
///
/// # Examples
///
/// ```
/// use talaria_core::session::SendError;
///
/// assert_eq!(SendError::Closed.to_string(), "the session is closed");
/// ```
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum SendError {
    /// The session has closed; nothing more can be sent.
    #[error("the session is closed")]
    Closed,
    /// The method does not exist in the negotiated revision.
    #[error("{method} does not exist in protocol revision {version}")]
    NotInRevision {
        /// The method.
        method: String,
        /// The negotiated revision.
        version: ProtocolVersion,
    },
    /// This side may not send the method (e.g. a client sending `sampling/createMessage`).
    #[error("{method} is not sent by this side")]
    WrongDirection {
        /// The method.
        method: String,
    },
    /// The peer did not advertise the capability the method needs.
    #[error("the peer did not advertise the {capability:?} capability needed by {method}")]
    MissingCapability {
        /// The method.
        method: String,
        /// The capability it needs.
        capability: Capability,
    },
    /// Too many requests are waiting for a response.
    #[error("too many pending requests (limit {limit})")]
    TooManyPending {
        /// The configured limit.
        limit: usize,
    },
    /// No pending request has this id.
    #[error("no pending request {0}")]
    UnknownRequest(RequestId),
    /// The handshake (`initialize`, or the `server/discover` probe) cannot be cancelled.
    #[error("the handshake cannot be cancelled")]
    CannotCancelInitialize,
    /// Nothing may be sent before the session is initialized.
    #[error("the session is not initialized yet")]
    NotReady,
    /// A batch needs at least one message.
    #[error("a batch needs at least one message")]
    EmptyBatch,
    /// Progress must be a finite number.
    #[error("progress must be a finite number, not {0}")]
    InvalidProgress(f64),
    /// The request answered by this reply asked for no progress.
    #[error("request {0} did not ask for progress")]
    NoProgressToken(RequestId),
    /// Progress must increase with every notification.
    #[error("progress must increase: {previous} then {next}")]
    ProgressNotIncreasing {
        /// The last progress sent.
        previous: f64,
        /// The refused value.
        next: f64,
    },
    /// Parameters or a result could not be serialized.
    #[error("could not encode: {0}")]
    Encode(String),
    /// The session sends this method itself (the handshake); the application may not.
    #[error("{0} is sent by the session itself")]
    Reserved(String),
    /// Batches can be sent only in a ready 2025-03-26 session.
    #[error("batches can be sent only once a 2025-03-26 session is ready")]
    BatchNotSupported,
    /// A parameter object was expected (params must be a JSON object to carry `_meta`).
    #[error("params must be a JSON object")]
    ParamsNotAnObject,
}

/// The peer broke the protocol. Reported as an event; the session answers with a JSON-RPC
/// error where one is due, and closes only when it cannot go on.
///
/// # Examples
///
/// ```
/// use talaria_core::session::ProtocolError;
///
/// let e = ProtocolError::UnexpectedResponse { id: 7.into() };
/// assert!(e.to_string().contains("7"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ProtocolError {
    /// A frame could not be decoded as JSON-RPC (the session answered it where it could).
    #[error("undecodable frame: {0}")]
    Decode(DecodeError),
    /// The peer sent an error response with no id: it could not read something this side
    /// sent, and no request can be told.
    #[error("the peer reported an error for no request: {0}")]
    PeerError(ErrorObject),
    /// A frame exceeded the configured size limit.
    #[error("frame of {len} bytes exceeds the limit of {max}")]
    FrameTooLong {
        /// Bytes seen.
        len: usize,
        /// The limit.
        max: usize,
    },
    /// A response to a request this side never sent (or no longer waits for).
    #[error("response to unknown request {id}")]
    UnexpectedResponse {
        /// Its id.
        id: RequestId,
    },
    /// A request reused the id of one still in flight.
    #[error("request id {id} reused while in flight")]
    DuplicateId {
        /// The id.
        id: RequestId,
    },
    /// A message the peer may not send, or not now.
    #[error("unexpected {method}: {why}")]
    Unexpected {
        /// The method.
        method: String,
        /// Why it was refused.
        why: String,
    },
    /// The server chose a protocol revision this client does not support.
    #[error("server chose unsupported protocol version {0:?}")]
    UnsupportedVersion(String),
    /// The handshake failed (an error answer to `initialize`, or a malformed result).
    #[error("handshake failed: {0}")]
    Handshake(String),
    /// The handshake did not finish within the client's `handshake_timeout`.
    #[error("no handshake within {after:?}")]
    HandshakeTimedOut {
        /// How long the client waited.
        after: core::time::Duration,
    },
    /// A batch arrived outside 2025-03-26.
    #[error("batch refused: batches exist only in 2025-03-26")]
    BatchNotAllowed,
}

/// Why a session closed (the reason of [`Event::Closed`](super::Event::Closed)).
///
/// # Examples
///
/// ```
/// use talaria_core::session::{CloseReason, ProtocolError};
///
/// assert_eq!(CloseReason::TransportClosed.to_string(), "transport closed");
/// let refused = CloseReason::Handshake(ProtocolError::Handshake("no common revision".into()));
/// assert!(refused.to_string().contains("no common revision"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CloseReason {
    /// This side closed it (`close`).
    #[error("closed by this side")]
    Local,
    /// The transport ended: end of stream, a dropped connection.
    #[error("transport closed")]
    TransportClosed,
    /// The handshake failed: what the peer did, or did not do in time.
    #[error("{0}")]
    Handshake(ProtocolError),
    /// This side's configuration cannot start the handshake it was asked for.
    #[error("{0}")]
    Misconfigured(String),
    /// A message this side built could not be encoded.
    #[error("{0}")]
    Encode(String),
    /// The session's own state went wrong (a lifecycle step from the wrong phase).
    #[error("{0}")]
    Internal(String),
}
