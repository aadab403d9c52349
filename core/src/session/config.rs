//! Session configuration, with documented defaults.

use crate::alloc_prelude::*;
use core::time::Duration;

use crate::codec::DEFAULT_MAX_FRAME_LEN;
use crate::schema::lifecycle::{ClientCapabilities, ServerCapabilities};
use crate::schema::{Implementation, LoggingLevel};
use crate::version::ProtocolVersion;

/// Settings shared by clients and servers.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use talaria_core::session::SessionConfig;
/// use talaria_core::schema::Implementation;
///
/// let c = SessionConfig::new(Implementation::new("me", "1.0"));
/// assert_eq!(c.request_timeout, Duration::from_secs(30));
/// assert_eq!(c.max_frame_len, 8 * 1024 * 1024);
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct SessionConfig {
    /// This side's implementation info.
    pub info: Implementation,
    /// The revisions this side speaks (default: all).
    pub versions: Vec<ProtocolVersion>,
    /// How long a sent request waits for its response (default 30 s).
    pub request_timeout: Duration,
    /// Whether a progress notification restarts that wait (default true).
    pub reset_timeout_on_progress: bool,
    /// The longest a request may take, progress or not (default 10 min; `None`: no cap).
    pub max_request_time: Option<Duration>,
    /// The largest frame accepted (default 8 MiB).
    pub max_frame_len: usize,
    /// The most requests this side may have waiting for a response (default 1024).
    pub max_pending: usize,
    /// The most peer requests in flight at once; more are refused with -32603 (default 1024).
    pub max_inflight: usize,
    /// The most messages in one batch (2025-03-26); a longer batch is refused (default 256).
    pub max_batch_len: usize,
}

impl SessionConfig {
    /// Defaults for an implementation named `info`.
    #[must_use]
    pub fn new(info: Implementation) -> Self {
        Self {
            info,
            versions: ProtocolVersion::ALL.to_vec(),
            request_timeout: Duration::from_secs(30),
            reset_timeout_on_progress: true,
            max_request_time: Some(Duration::from_secs(600)),
            max_frame_len: DEFAULT_MAX_FRAME_LEN,
            max_pending: 1024,
            max_inflight: 1024,
            max_batch_len: 256,
        }
    }
}

/// How a client opens a session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ClientMode {
    /// `initialize` handshake, newest legacy revision (2025-11-25 and before).
    Legacy,
    /// Stateless (2026-07-28): `server/discover`, then `_meta` on every request.
    Stateless,
    /// Probe with `server/discover`; fall back to `initialize` on a legacy answer or after
    /// `discover_timeout` (the default).
    #[default]
    Auto,
}

/// Client settings.
///
/// # Examples
///
/// ```
/// use talaria_core::session::{ClientConfig, ClientMode};
/// use talaria_core::schema::Implementation;
///
/// let c = ClientConfig::new(Implementation::new("app", "1")).with_mode(ClientMode::Legacy);
/// assert_eq!(c.mode, ClientMode::Legacy);
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ClientConfig {
    /// Shared settings.
    pub session: SessionConfig,
    /// What this client supports.
    pub capabilities: ClientCapabilities,
    /// How to open the session (default Auto).
    pub mode: ClientMode,
    /// How long the Auto probe waits before falling back (default 5 s).
    pub discover_timeout: Duration,
    /// How long the whole handshake may take, probe and fallback included (default 30 s):
    /// past it the session closes with [`ProtocolError::HandshakeTimedOut`]. In Auto mode the
    /// fallback `initialize` gets what the probe left. The one clock of the handshake;
    /// adapters wait for its outcome and keep none of their own.
    ///
    /// [`ProtocolError::HandshakeTimedOut`]: super::ProtocolError::HandshakeTimedOut
    pub handshake_timeout: Duration,
    /// Stateless era: the log level asked for on every request (default none: no logs).
    pub log_level: Option<LoggingLevel>,
}

impl ClientConfig {
    /// Defaults for a client named `info`.
    #[must_use]
    pub fn new(info: Implementation) -> Self {
        Self {
            session: SessionConfig::new(info),
            capabilities: ClientCapabilities::default(),
            mode: ClientMode::Auto,
            discover_timeout: Duration::from_secs(5),
            handshake_timeout: Duration::from_secs(30),
            log_level: None,
        }
    }

    /// Sets the mode.
    #[must_use]
    pub const fn with_mode(mut self, mode: ClientMode) -> Self {
        self.mode = mode;
        self
    }

    /// Sets how long the whole handshake may take.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use talaria_core::schema::Implementation;
    /// use talaria_core::session::ClientConfig;
    ///
    /// let c = ClientConfig::new(Implementation::new("app", "1")).with_handshake_timeout(Duration::from_secs(3));
    /// assert_eq!(c.handshake_timeout, Duration::from_secs(3));
    /// ```
    #[must_use]
    pub const fn with_handshake_timeout(mut self, timeout: Duration) -> Self {
        self.handshake_timeout = timeout;
        self
    }

    /// Sets the capabilities.
    #[must_use]
    pub fn with_capabilities(mut self, capabilities: ClientCapabilities) -> Self {
        self.capabilities = capabilities;
        self
    }
}

/// Server settings.
///
/// # Examples
///
/// ```
/// use talaria_core::session::ServerConfig;
/// use talaria_core::schema::Implementation;
///
/// let s = ServerConfig::new(Implementation::new("srv", "1")).with_instructions("Be brief.");
/// assert_eq!(s.instructions.as_deref(), Some("Be brief."));
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ServerConfig {
    /// Shared settings; `versions` decides which eras are served (both by default).
    pub session: SessionConfig,
    /// What this server offers.
    pub capabilities: ServerCapabilities,
    /// Guidance for the model, sent in the `initialize` and `server/discover` results.
    pub instructions: Option<String>,
    /// Legacy era: the least severe level sent before `logging/setLevel` (default: all).
    pub default_log_level: Option<LoggingLevel>,
    /// Stateless era: whether every result names this server in its `_meta`
    /// (`io.modelcontextprotocol/serverInfo`, as the spec says a server should; default true).
    pub server_info_in_results: bool,
}

impl ServerConfig {
    /// Defaults for a server named `info`.
    #[must_use]
    pub fn new(info: Implementation) -> Self {
        Self {
            session: SessionConfig::new(info),
            capabilities: ServerCapabilities::default(),
            instructions: None,
            default_log_level: None,
            server_info_in_results: true,
        }
    }

    /// Sets the capabilities.
    #[must_use]
    pub fn with_capabilities(mut self, capabilities: ServerCapabilities) -> Self {
        self.capabilities = capabilities;
        self
    }

    /// Sets the instructions.
    #[must_use]
    pub fn with_instructions(mut self, instructions: impl Into<String>) -> Self {
        self.instructions = Some(instructions.into());
        self
    }
}
