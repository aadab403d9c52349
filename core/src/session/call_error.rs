//! How a request this side sent failed: the peer's error, or a failure on this side.

use super::SendError;
use crate::alloc_prelude::*;
use crate::jsonrpc::ErrorObject;
use crate::schema::Capability;

/// Why a request was never sent ([`LocalError::NotSent`]).
///
/// # Examples
///
/// ```
/// use talaria_core::session::{LocalError, NotSentReason, SendError};
///
/// let e = LocalError::from(SendError::NotReady);
/// assert!(matches!(e, LocalError::NotSent(NotSentReason::Refused(SendError::NotReady))));
/// assert_eq!(e.to_string(), "request not sent: the session is not initialized yet");
/// ```
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum NotSentReason {
    /// The session refused to send it: closed, not in the negotiated revision, the peer did
    /// not advertise the capability, too many pending, not initialized yet.
    #[error(transparent)]
    Refused(#[from] SendError),
    /// The client did not declare the capability the request needs (2026-07-28 rounds: the
    /// call is answered with -32021).
    #[error("the client did not declare the capability {method} needs ({capability:?})")]
    CapabilityUndeclared {
        /// The method.
        method: String,
        /// The capability it needs.
        capability: Capability,
    },
    /// Its params could not be encoded as the method's params.
    #[error("cannot encode {method}: {detail}")]
    Unencodable {
        /// The method.
        method: String,
        /// What the encoder said.
        detail: String,
    },
    /// It cannot be asked as an input request (2026-07-28 rounds, or a task's question): the
    /// method or its params are not those of a request a server may ask the client.
    #[error("{method} cannot be asked as an input request: {detail}")]
    NotAskable {
        /// The method.
        method: String,
        /// Why not.
        detail: String,
    },
    /// There is no connection to send it through (a job run inline, with no adapter).
    #[error("no connection to ask through")]
    NoConnection,
    /// There is no request it could be about (a job without a deferred request).
    #[error("no request to ask about")]
    NoRequest,
    /// The task it asks for is gone, or is not running in this process.
    #[error("the task is gone or not running here")]
    TaskNotRunning,
}

impl From<SendError> for LocalError {
    fn from(e: SendError) -> Self {
        Self::NotSent(NotSentReason::Refused(e))
    }
}

/// A failure that happened on this side of the connection, not an error the peer sent.
///
/// # Examples
///
/// ```
/// use talaria_core::session::LocalError;
///
/// assert_eq!(LocalError::TimedOut.to_string(), "request timed out");
/// ```
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum LocalError {
    /// No response arrived before the request's deadline.
    #[error("request timed out")]
    TimedOut,
    /// The request was cancelled on this side.
    #[error("request cancelled{}", reason.as_deref().map(|r| format!(": {r}")).unwrap_or_default())]
    Cancelled {
        /// The reason given to `cancel`, if any.
        reason: Option<String>,
    },
    /// The session or transport closed before a response arrived.
    #[error("connection closed{}", reason.as_deref().map(|r| format!(": {r}")).unwrap_or_default())]
    Closed {
        /// Why it closed, when known (an exit status, an I/O error).
        reason: Option<String>,
    },
    /// The transport could not reach the peer at all.
    #[error("connection refused: {0}")]
    ConnectionRefused(String),
    /// Another transport failure (I/O error, HTTP status, broken pipe).
    #[error("transport error: {0}")]
    Transport(String),
    /// The request was never sent: the session refused it, the peer lacks what it needs, or
    /// there was nothing to send it through.
    #[error("request not sent: {0}")]
    NotSent(NotSentReason),
    /// The peer's answer could not be understood (malformed response or result).
    #[error("malformed response: {0}")]
    MalformedResponse(String),
    /// The request (the method named) goes to the client as an input request of the call's
    /// `input_required` answer, and its answer comes with the client's retry (2026-07-28, see
    /// `Job::ask`): return from the work now.
    #[error("{0} is asked in the client's next round (input_required)")]
    InputRequired(String),
    /// The server asked for input this client refused (2026-07-28: an input request of an
    /// `input_required` answer or of a task; a method it does not offer, or a URL
    /// elicitation to a form-only client): the call ends, with the refusal's error.
    #[error("input request {key:?} refused: {error}")]
    InputRefused {
        /// The input request's key.
        key: String,
        /// The client's refusal (its JSON-RPC code says why).
        error: ErrorObject,
    },
    /// A tool's result breaks the output schema its tool declared: `why`, with the result
    /// (JSON text) kept for the caller to show or use anyway.
    #[error("the result does not match the tool's output schema: {why}")]
    OutputMismatch {
        /// What does not match.
        why: String,
        /// The result as received (JSON text).
        result: String,
    },
}

/// How a request failed: the peer answered with an error, or it failed locally.
///
/// # Examples
///
/// ```
/// use talaria_core::jsonrpc::ErrorObject;
/// use talaria_core::session::{CallError, LocalError};
///
/// let remote = CallError::from(ErrorObject::invalid_params("Unknown tool: x"));
/// assert!(remote.remote().is_some());
/// let local = CallError::from(LocalError::TimedOut);
/// assert!(local.remote().is_none());
/// ```
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum CallError {
    /// The peer answered with a JSON-RPC error.
    #[error("peer returned an error: {0}")]
    Remote(ErrorObject),
    /// The request failed on this side.
    #[error(transparent)]
    Local(#[from] LocalError),
}

impl CallError {
    /// The peer's error object, if the peer sent one.
    #[must_use]
    pub const fn remote(&self) -> Option<&ErrorObject> {
        match self {
            Self::Remote(e) => Some(e),
            Self::Local(_) => None,
        }
    }
}

impl From<ErrorObject> for CallError {
    fn from(e: ErrorObject) -> Self {
        Self::Remote(e)
    }
}
