//! What the adapter knows about a request beyond its JSON: the transport it came over, and
//! whether the client has cancelled it.

use crate::alloc_prelude::*;
use alloc::sync::Arc;

use super::cancel::CancelFlag;
use super::task::Spawn;
use super::Headers;

/// What the transport knows about the peer, for handlers to see through
/// [`Context::transport`](super::Context::transport): the HTTP session id, the remote
/// address, the request's headers, the identity an authorization hook attached.
///
/// # Examples
///
/// ```
/// use talaria_core::server::TransportInfo;
///
/// let info = TransportInfo::new("stdio").with_header("Authorization", "Bearer x");
/// assert_eq!(info.header("authorization"), Some("Bearer x"));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct TransportInfo {
    /// The transport's name: `stdio`, `websocket`, `http`, `sse`, `memory`.
    pub kind: String,
    /// The session id the transport assigned (`Mcp-Session-Id` over HTTP), if any.
    pub session_id: Option<String>,
    /// The peer's address, if the transport has one.
    pub remote_addr: Option<String>,
    /// Request or handshake headers, as received.
    pub headers: Headers,
    /// Who the caller is, as an authorization hook decided.
    pub identity: Option<String>,
}

impl TransportInfo {
    /// Information about a transport of this kind, with nothing else known yet.
    #[must_use]
    pub fn new(kind: impl Into<String>) -> Self {
        Self { kind: kind.into(), ..Self::default() }
    }

    /// With the session id.
    #[must_use]
    pub fn with_session_id(mut self, id: impl Into<String>) -> Self {
        self.session_id = Some(id.into());
        self
    }

    /// With the peer's address.
    #[must_use]
    pub fn with_remote_addr(mut self, addr: impl Into<String>) -> Self {
        self.remote_addr = Some(addr.into());
        self
    }

    /// With one more header.
    #[must_use]
    pub fn with_header(mut self, name: impl AsRef<str>, value: impl AsRef<str>) -> Self {
        self.headers.push(name.as_ref(), value.as_ref());
        self
    }

    /// With the caller's identity.
    #[must_use]
    pub fn with_identity(mut self, identity: impl Into<String>) -> Self {
        self.identity = Some(identity.into());
        self
    }

    /// The first header named `name`, compared case-insensitively.
    #[must_use]
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name)
    }
}

/// The adapter's additions to one dispatched request.
#[derive(Clone, Default)]
pub(crate) struct Extras {
    pub(crate) cancel: CancelFlag,
    pub(crate) transport: Option<Arc<TransportInfo>>,
    pub(crate) spawner: Option<Arc<dyn Spawn>>,
    /// The extension task (2026-07-28) the request runs as, if any.
    pub(crate) task_run: Option<super::task_board::TaskRun>,
}

impl core::fmt::Debug for Extras {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Extras")
            .field("cancel", &self.cancel)
            .field("transport", &self.transport)
            .field("spawner", &self.spawner.is_some())
            .field("task_run", &self.task_run)
            .finish()
    }
}
