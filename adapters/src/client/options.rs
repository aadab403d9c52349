//! How a client connects: who it is, which era it speaks, what it answers, what it listens to.

use std::sync::Arc;
use std::time::Duration;

use serde_json::value::RawValue;
use talaria_core::client::Handlers;
use talaria_core::schema::logging::LoggingMessageNotificationParams;
use talaria_core::schema::Implementation;
use talaria_core::session::{ClientConfig, ClientMode};
use talaria_core::version::ProtocolVersion;

use super::trace::{TraceEvent, TraceFn};
use super::Authenticator;

/// A log callback.
pub(crate) type LogFn = Arc<dyn Fn(&LoggingMessageNotificationParams) + Send + Sync>;
/// A notification callback: method and raw params.
pub(crate) type NotificationFn = Arc<dyn Fn(&str, Option<&RawValue>) + Send + Sync>;

/// How a client connects.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use talaria::client::ClientOptions;
/// use talaria::core::client::Handlers;
/// use talaria::core::schema::roots::Root;
///
/// let mut handlers = Handlers::default();
/// handlers.add_root(Root::new("file:///work"));
/// let options = ClientOptions::new("my-app", "1.0")
///     .request_timeout(Duration::from_secs(10))
///     .handlers(handlers)
///     .on_log(|log| eprintln!("server log: {:?}", log.data))
///     .on_notification(|method, _| eprintln!("server says {method}"));
/// # let _ = options;
/// ```
#[derive(Clone)]
#[must_use]
pub struct ClientOptions {
    pub(crate) config: ClientConfig,
    pub(crate) handlers: Handlers,
    pub(crate) on_log: Option<LogFn>,
    pub(crate) on_notification: Option<NotificationFn>,
    pub(crate) trace: Option<TraceFn>,
    pub(crate) outbox_limit: usize,
    /// The certificate authorities `https://` and `wss://` trust.
    #[cfg(feature = "tls")]
    pub(crate) tls: crate::tls::TlsRoots,
    pub(crate) authenticator: Option<Arc<dyn Authenticator>>,
}

impl std::fmt::Debug for ClientOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientOptions")
            .field("config", &self.config)
            .field("handlers", &self.handlers)
            .field("trace", &self.trace.is_some())
            .field("outbox_limit", &self.outbox_limit)
            .field("authenticator", &self.authenticator.is_some())
            .finish_non_exhaustive()
    }
}

impl ClientOptions {
    /// A client named `name` at `version`, in [`ClientMode::Auto`] (probe for the stateless
    /// era, fall back to `initialize`).
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        Self::with_config(ClientConfig::new(Implementation::new(name, version)))
    }

    /// Options around a full session configuration.
    pub fn with_config(config: ClientConfig) -> Self {
        Self {
            config,
            handlers: Handlers::default(),
            on_log: None,
            on_notification: None,
            trace: None,
            outbox_limit: crate::DEFAULT_OUTBOX_LIMIT,
            #[cfg(feature = "tls")]
            tls: crate::tls::TlsRoots::default(),
            authenticator: None,
        }
    }

    /// Chooses the era: legacy handshake, stateless, or probe.
    pub const fn mode(mut self, mode: ClientMode) -> Self {
        self.config.mode = mode;
        self
    }

    /// Offers only these revisions, most preferred first.
    pub fn versions(mut self, versions: Vec<ProtocolVersion>) -> Self {
        self.config.session.versions = versions;
        self
    }

    /// The default timeout of every request (reset by progress).
    pub const fn request_timeout(mut self, timeout: Duration) -> Self {
        self.config.session.request_timeout = timeout;
        self
    }

    /// How many calls may wait for an answer at once (default 1,024); one more fails with
    /// [`SendError::TooManyPending`](talaria_core::session::SendError::TooManyPending).
    pub const fn max_pending(mut self, limit: usize) -> Self {
        self.config.session.max_pending = limit;
        self
    }

    /// How many bytes of frames may wait for the server to read them (default
    /// [`DEFAULT_OUTBOX_LIMIT`](crate::DEFAULT_OUTBOX_LIMIT), 32 MiB). While that much waits,
    /// new calls fail at once with [`ClientError::OutboxFull`](super::ClientError::OutboxFull)
    /// instead of queueing without bound; nothing ever blocks on a slow server. If the server
    /// sends requests and stops reading altogether, the connection is closed once four times
    /// this much is queued.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria::client::ClientOptions;
    ///
    /// // Room for 10,000 calls of 64 KiB in flight at once.
    /// let options = ClientOptions::new("bulk", "1").max_pending(10_000).outbox_limit(1 << 30);
    /// # let _ = options;
    /// ```
    pub const fn outbox_limit(mut self, bytes: usize) -> Self {
        self.outbox_limit = bytes;
        self
    }

    /// The certificate authorities `https://` and `wss://` connections trust (default:
    /// Mozilla's roots and the operating system's store).
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria::client::ClientOptions;
    /// use talaria::tls::TlsRoots;
    ///
    /// let ca = std::fs::read("/etc/my-company/ca.pem").unwrap_or_default();
    /// let roots = TlsRoots::new().add_pem(&ca).unwrap_or_default();
    /// let options = ClientOptions::new("me", "1").tls_roots(roots);
    /// # let _ = options;
    /// ```
    #[cfg(feature = "tls")]
    pub fn tls_roots(mut self, roots: crate::tls::TlsRoots) -> Self {
        self.tls = roots;
        self
    }

    /// How long connecting may take: the transport's own connect (TCP, the WebSocket upgrade,
    /// the legacy SSE stream's first answer) and then the MCP handshake, whose one clock is
    /// the core's ([`ClientConfig::handshake_timeout`]).
    pub const fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.config.handshake_timeout = timeout;
        self
    }

    /// How long connecting may take (see [`ClientOptions::connect_timeout`]).
    #[cfg(any(feature = "ws", feature = "http"))]
    pub(crate) const fn handshake_timeout(&self) -> Duration {
        self.config.handshake_timeout
    }

    /// What the client answers to the server: roots, sampling, elicitation. Their
    /// capabilities are advertised.
    pub fn handlers(mut self, handlers: Handlers) -> Self {
        self.handlers = handlers;
        self
    }

    /// Called with every log message the server sends.
    pub fn on_log(mut self, on_log: impl Fn(&LoggingMessageNotificationParams) + Send + Sync + 'static) -> Self {
        self.on_log = Some(Arc::new(on_log));
        self
    }

    /// Called with every other notification the server sends (list changes, resource
    /// updates, ...).
    pub fn on_notification(
        mut self,
        on_notification: impl Fn(&str, Option<&RawValue>) + Send + Sync + 'static,
    ) -> Self {
        self.on_notification = Some(Arc::new(on_notification));
        self
    }

    /// Hands `trace` everything on the wire as it happens: each JSON-RPC frame both ways and,
    /// over HTTP and WebSocket, the HTTP heads and SSE event fields. Values are as sent:
    /// redact secrets before printing them.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria::client::{ClientOptions, TraceEvent};
    ///
    /// let options = ClientOptions::new("me", "1").trace(|event| {
    ///     if let TraceEvent::Sent(frame) = event {
    ///         eprintln!("> {}", String::from_utf8_lossy(frame));
    ///     }
    /// });
    /// # let _ = options;
    /// ```
    pub fn trace(mut self, trace: impl Fn(&TraceEvent<'_>) + Send + Sync + 'static) -> Self {
        self.trace = Some(Arc::new(trace));
        self
    }

    /// Authorizes the client's HTTP requests (Streamable HTTP and legacy SSE): each carries
    /// the authenticator's `Authorization` header, and a request refused with `401` (or `403`
    /// `insufficient_scope`) is sent again, at most twice, once the authenticator has new
    /// credentials. See [`OAuthClient`](crate::auth::OAuthClient).
    pub fn authenticator(mut self, authenticator: Arc<dyn Authenticator>) -> Self {
        self.authenticator = Some(authenticator);
        self
    }

    /// Declares the extension `id` (2026-07-28) with `settings` (an empty object for none) in
    /// the client's capabilities. Whether the server declared it too:
    /// `client.server_capabilities().and_then(|c| c.extension(id))`. Revisions with a
    /// handshake have no extensions: they are not sent there.
    ///
    /// # Errors
    ///
    /// [`ExtensionIdError`](talaria_core::schema::lifecycle::ExtensionIdError) if `id` breaks
    /// the naming rule.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria::client::ClientOptions;
    ///
    /// let options = ClientOptions::new("me", "1").extension("com.example/verbose", Default::default())?;
    /// # let _ = options;
    /// # Ok::<(), talaria::core::schema::lifecycle::ExtensionIdError>(())
    /// ```
    pub fn extension(
        mut self,
        id: &str,
        settings: talaria_core::schema::JsonObject,
    ) -> Result<Self, talaria_core::schema::lifecycle::ExtensionIdError> {
        let capabilities = std::mem::take(&mut self.config.capabilities);
        self.config.capabilities = capabilities.with_extension(id, settings)?;
        Ok(self)
    }

    /// The session configuration, for settings without a method here.
    pub const fn config_mut(&mut self) -> &mut ClientConfig {
        &mut self.config
    }
}

/// The legacy mode's shorthand.
impl From<ClientConfig> for ClientOptions {
    fn from(config: ClientConfig) -> Self {
        Self::with_config(config)
    }
}
