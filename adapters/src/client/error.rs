//! How a client call or connection fails.

use std::time::Duration;

use talaria_core::session::CallError;
use talaria_core::session::SendError;

/// Why a client call failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// The call could not be sent (the server lacks the capability, the revision lacks the
    /// method, the connection is closed, ...).
    #[error("not sent: {0}")]
    Send(#[from] SendError),
    /// The server answered with an error, or the call failed locally (timed out, cancelled,
    /// connection closed, malformed result).
    #[error(transparent)]
    Call(#[from] CallError),
    /// The connection could not be set up.
    #[error("cannot connect: {0}")]
    Connect(String),
    /// The server process ended before the handshake finished (it crashed, or refused to
    /// start): how it ended.
    #[error("cannot connect: the server exited: {0}")]
    ServerExited(std::process::ExitStatus),
    /// The transport connected but the handshake did not finish in time
    /// ([`ClientOptions::connect_timeout`](super::ClientOptions::connect_timeout)).
    #[error("cannot connect: no handshake within {after:?}")]
    HandshakeTimedOut {
        /// How long the client waited.
        after: Duration,
    },
    /// The server refused the connection with an HTTP status (the Streamable HTTP handshake,
    /// the legacy SSE stream, the WebSocket upgrade): 401 and 403 mean the credentials, and
    /// `www_authenticate` says what the server wants (see the MCP authorization spec).
    #[error("cannot connect: {url}: HTTP {status}{}", detail.as_deref().map(|d| format!(": {d}")).unwrap_or_default())]
    HttpStatus {
        /// The URL refused.
        url: String,
        /// The status code.
        status: u16,
        /// The `WWW-Authenticate` header, if any.
        www_authenticate: Option<String>,
        /// What the body said, if it said anything useful (a JSON-RPC error's message).
        detail: Option<String>,
    },
    /// An I/O error setting up the transport.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// The call was not sent: the connection's outbox already holds
    /// [`ClientOptions::outbox_limit`](super::ClientOptions::outbox_limit) bytes that the server has not read yet. Nothing is
    /// lost; try again once calls in flight finish, or raise the limit.
    #[error("not sent: the outbox is full ({limit} bytes wait for the server to read them)")]
    OutboxFull {
        /// The configured limit, in bytes.
        limit: usize,
    },
}

impl From<crate::conn::OutboxFull> for ClientError {
    fn from(full: crate::conn::OutboxFull) -> Self {
        Self::OutboxFull { limit: full.limit }
    }
}
