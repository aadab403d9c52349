//! How an HTTP server serves (both flavours, blocking and smol): paths, eras and limits,
//! reply mode, authorization hook, stores, SSE timings.

use std::sync::Arc;
use std::time::Duration;

use talaria_core::auth::resource::{ProtectedResource, TokenInfo};
use talaria_core::http::exchange::EndpointConfig;
use talaria_core::http::exchange::Refusal;
use talaria_core::http::reply::ReplyMode;

use super::session_store::SharedSessionStore;
use super::store_pool::SharedEventStore;
#[cfg(doc)]
use talaria_core::http::event_log::Retention;
use talaria_core::server::Headers;
#[cfg(doc)]
use talaria_core::server::TransportInfo;

/// An authorization hook: sees the request headers; refuses (typically
/// [`Refusal::unauthorized`], `401` with a `WWW-Authenticate` challenge), or names the caller
/// (the identity handlers see in [`TransportInfo::identity`]).
pub type Authorize = Arc<dyn Fn(&Headers) -> Result<Option<String>, Refusal> + Send + Sync>;

/// The verifier of a protected resource's bearer tokens: who a token speaks for and its
/// scopes, or why it is no good (see [`HttpServerOptions::protected_resource`]).
pub type VerifyToken = Arc<dyn Fn(&str) -> Result<TokenInfo, String> + Send + Sync>;

/// How the HTTP server serves.
///
/// # Examples
///
/// ```
/// use talaria::core::http::reply::ReplyMode;
/// use talaria::http::HttpServerOptions;
///
/// let options = HttpServerOptions::default().reply_mode(ReplyMode::Sse).path("/mcp");
/// assert_eq!(options.path, "/mcp");
/// ```
#[derive(Clone)]
#[non_exhaustive]
#[must_use]
pub struct HttpServerOptions {
    /// The MCP endpoint's path (default `/mcp`).
    pub path: String,
    /// Eras, limits, origins and session expiry.
    pub endpoint: EndpointConfig,
    /// JSON replies where possible, or always SSE.
    pub reply_mode: ReplyMode,
    /// The authorization hook, if any.
    pub authorize: Option<Authorize>,
    /// The Protected Resource Metadata served (its path and document), if the server is an
    /// OAuth protected resource (see [`HttpServerOptions::protected_resource`]).
    pub resource_metadata: Option<(String, Arc<[u8]>)>,
    /// The legacy HTTP+SSE transport (2024-11-05): the stream path and the messages path
    /// (default `/sse` and `/messages`); `None` turns it off.
    pub legacy_sse: Option<(String, String)>,
    /// Where session records go, so that a session another process (or this one before a
    /// restart) initialized goes on here; `None`: sessions live in this process only.
    pub session_store: Option<SharedSessionStore>,
    /// Where SSE events are logged for resumption; `None`: an in-memory log with the default
    /// [`Retention`].
    pub event_store: Option<SharedEventStore>,
    /// Carries a client's answers to another process's server-to-client requests there (with
    /// a session store shared between processes); `None`: answers are taken in here only.
    pub relay: Option<Arc<dyn talaria_core::http::relay::Relay>>,
    /// With a relay: how long this process's lease lasts (renewed three times as often). A
    /// client resuming a response stream on another process is followed there while the
    /// writing process's lease holds; once it lapses (the process died), the requests the
    /// stream was answering end with an error. Default 3 s.
    pub lease: Duration,
    /// The reconnection delay sent with each stream's priming event (2025-11-25), the `retry`
    /// a client waits before resuming a stream the server ended early; `None` leaves it to the
    /// client.
    pub sse_retry: Option<Duration>,
    /// How long an SSE stream may stay silent before the server writes a keep-alive comment
    /// (default 15 s). Besides keeping proxies from timing the stream out, the write is how the
    /// server notices a client that closed the stream: in 2026-07-28 that cancels the stream's
    /// request, and a gone GET stream is freed.
    pub sse_keepalive: Duration,
    /// How long a client has to send a request's head, from when the server starts waiting
    /// for it (an idle keep-alive connection waits too), and then its body: past it the
    /// connection is closed, or, for a body, answered `408` (default 30 s). Each is one
    /// deadline, not a timeout per read, so a client trickling bytes is cut off as well.
    pub read_timeout: Duration,
    /// The most connections held open at once (default 10,000); one past it is answered
    /// `503` and closed.
    pub max_connections: usize,
    /// The most connections held open at once from one IP address (default 2,500), so that
    /// one peer cannot take every connection; past it, `503`. Behind a reverse proxy every
    /// client has the proxy's address: raise it to `max_connections` there.
    pub max_connections_per_peer: usize,
    /// The largest request head, in bytes (default 64 KiB, at least 8 KiB); past it, `431`.
    pub max_head: usize,
    /// The most header fields in a request (default 100); past it, `431`.
    pub max_headers: usize,
    /// TLS, for a server that faces clients itself (`https://`); `None` (the default) serves
    /// plain HTTP/1.1, as behind a reverse proxy that terminates TLS (nginx, a load balancer),
    /// the more common deployment. The handshake must end within `read_timeout`. See
    /// [`crate::tls::server_config`] for a configuration from PEM files.
    ///
    /// HTTP/2 is negotiated by ALPN: a connection whose handshake settles on `h2` is served
    /// HTTP/2, any other HTTP/1.1. The configuration is used as it is given, so its
    /// `alpn_protocols` decide: [`crate::tls::server_config`] offers `h2` and `http/1.1`
    /// ([`crate::tls::SERVER_ALPN`]); one built with rustls's builder offers nothing, and its
    /// clients speak HTTP/1.1 until you set the list (HTTP/1.1 only: `vec![b"http/1.1".to_vec()]`).
    #[cfg(feature = "tls")]
    pub tls: Option<Arc<rustls::ServerConfig>>,
}

/// The default of [`HttpServerOptions::lease`].
const DEFAULT_LEASE: Duration = Duration::from_secs(3);

/// The default of [`HttpServerOptions::sse_keepalive`].
const DEFAULT_SSE_KEEPALIVE: Duration = Duration::from_secs(15);

impl std::fmt::Debug for HttpServerOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpServerOptions")
            .field("path", &self.path)
            .field("endpoint", &self.endpoint)
            .field("reply_mode", &self.reply_mode)
            .field("authorize", &self.authorize.is_some())
            .field("resource_metadata", &self.resource_metadata.as_ref().map(|(path, _)| path))
            .field("legacy_sse", &self.legacy_sse)
            .field("session_store", &self.session_store.is_some())
            .field("event_store", &self.event_store.is_some())
            .field("relay", &self.relay.is_some())
            .field("lease", &self.lease)
            .field("sse_retry", &self.sse_retry)
            .field("sse_keepalive", &self.sse_keepalive)
            .field("read_timeout", &self.read_timeout)
            .field("max_connections", &self.max_connections)
            .field("max_connections_per_peer", &self.max_connections_per_peer)
            .field("max_head", &self.max_head)
            .field("max_headers", &self.max_headers)
            .field("tls", &self.tls_enabled())
            .finish()
    }
}

impl Default for HttpServerOptions {
    fn default() -> Self {
        Self {
            path: "/mcp".into(),
            endpoint: EndpointConfig::default(),
            reply_mode: ReplyMode::Json,
            authorize: None,
            resource_metadata: None,
            legacy_sse: Some(("/sse".into(), "/messages".into())),
            session_store: None,
            event_store: None,
            relay: None,
            lease: DEFAULT_LEASE,
            sse_retry: None,
            sse_keepalive: DEFAULT_SSE_KEEPALIVE,
            read_timeout: Duration::from_secs(30),
            max_connections: 10_000,
            max_connections_per_peer: 2_500,
            max_head: 64 * 1024,
            max_headers: 100,
            #[cfg(feature = "tls")]
            tls: None,
        }
    }
}

impl HttpServerOptions {
    /// Whether the server speaks TLS itself.
    #[must_use]
    pub const fn tls_enabled(&self) -> bool {
        #[cfg(feature = "tls")]
        return self.tls.is_some();
        #[cfg(not(feature = "tls"))]
        false
    }

    /// Serves `https://` with `config` (see [`HttpServerOptions::tls`]).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use talaria::http::HttpServerOptions;
    ///
    /// let config = talaria::tls::server_config(&std::fs::read("cert.pem")?, &std::fs::read("key.pem")?)?;
    /// let options = HttpServerOptions::default().tls(config);
    /// assert!(options.tls_enabled());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[cfg(feature = "tls")]
    pub fn tls(mut self, config: Arc<rustls::ServerConfig>) -> Self {
        self.tls = Some(config);
        self
    }

    /// Serves the endpoint at `path`.
    pub fn path(mut self, path: impl Into<String>) -> Self {
        self.path = path.into();
        self
    }

    /// Chooses JSON or SSE replies.
    pub const fn reply_mode(mut self, mode: ReplyMode) -> Self {
        self.reply_mode = mode;
        self
    }

    /// Sets the endpoint configuration (eras, limits, origins, expiry).
    pub fn endpoint(mut self, endpoint: EndpointConfig) -> Self {
        self.endpoint = endpoint;
        self
    }

    /// Keeps session records in `store` (see [`HttpServerOptions::session_store`]).
    pub fn session_store(mut self, store: SharedSessionStore) -> Self {
        self.session_store = Some(store);
        self
    }

    /// Carries answers between the processes sharing sessions (see
    /// [`HttpServerOptions::relay`]).
    pub fn relay(mut self, relay: Arc<dyn talaria_core::http::relay::Relay>) -> Self {
        self.relay = Some(relay);
        self
    }

    /// Sets how long this process's lease lasts (see [`HttpServerOptions::lease`]; at least
    /// 30 ms).
    pub fn lease(mut self, lease: Duration) -> Self {
        self.lease = lease.max(Duration::from_millis(30));
        self
    }

    /// Logs SSE events in `store` (see [`HttpServerOptions::event_store`]).
    pub fn event_store(mut self, store: SharedEventStore) -> Self {
        self.event_store = Some(store);
        self
    }

    /// Sends `retry` with each stream's priming event: how long a client waits before resuming
    /// a stream the server ended early (see `Job::close_sse_stream`).
    pub const fn sse_retry(mut self, retry: Duration) -> Self {
        self.sse_retry = Some(retry);
        self
    }

    /// Writes a keep-alive comment on SSE streams silent for `every` (see
    /// [`HttpServerOptions::sse_keepalive`]).
    pub const fn sse_keepalive(mut self, every: Duration) -> Self {
        self.sse_keepalive = every;
        self
    }

    /// Disconnects clients silent or slow for `timeout` while sending a request (see
    /// [`HttpServerOptions::read_timeout`]).
    pub const fn read_timeout(mut self, timeout: Duration) -> Self {
        self.read_timeout = timeout;
        self
    }

    /// Caps the connections held open at once (see [`HttpServerOptions::max_connections`]).
    pub const fn max_connections(mut self, most: usize) -> Self {
        self.max_connections = most;
        self
    }

    /// Caps the connections held open at once from one IP address (see
    /// [`HttpServerOptions::max_connections_per_peer`]).
    pub const fn max_connections_per_peer(mut self, most: usize) -> Self {
        self.max_connections_per_peer = most;
        self
    }

    /// Caps a request's head: `bytes` in all and `fields` header fields (see
    /// [`HttpServerOptions::max_head`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria::http::HttpServerOptions;
    ///
    /// let options = HttpServerOptions::default().max_head(16 * 1024, 50);
    /// assert_eq!((options.max_head, options.max_headers), (16 * 1024, 50));
    /// ```
    pub const fn max_head(mut self, bytes: usize, fields: usize) -> Self {
        self.max_head = bytes;
        self.max_headers = fields;
        self
    }

    /// Installs an authorization hook.
    pub fn authorize(
        mut self,
        hook: impl Fn(&Headers) -> Result<Option<String>, Refusal> + Send + Sync + 'static,
    ) -> Self {
        self.authorize = Some(Arc::new(hook));
        self
    }

    /// Makes the server an OAuth protected resource (2025-06-18 authorization onward): it
    /// serves `resource`'s metadata at its well-known path, and each request's bearer token
    /// goes to `verify` (the application checks signatures, audience and expiry, or asks its
    /// authorization server). A missing or rejected token gets `401`, one without the
    /// required scopes `403`, each with the challenge that leads a client to the metadata;
    /// a valid token's subject is the handlers' [`TransportInfo::identity`]. Replaces any
    /// [`authorize`](Self::authorize) hook.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria::core::auth::resource::{ProtectedResource, TokenInfo};
    /// use talaria::http::HttpServerOptions;
    ///
    /// let resource = ProtectedResource::new("http://127.0.0.1:8080/mcp", &["https://auth.example.com"]).unwrap();
    /// let options = HttpServerOptions::default().protected_resource(resource, |token| match token {
    ///     "secret-token" => Ok(TokenInfo::new("alice", &[])),
    ///     _ => Err("unknown token".into()),
    /// });
    /// assert_eq!(options.resource_metadata.unwrap().0, "/.well-known/oauth-protected-resource/mcp");
    /// ```
    pub fn protected_resource(
        mut self,
        resource: ProtectedResource,
        verify: impl Fn(&str) -> Result<TokenInfo, String> + Send + Sync + 'static,
    ) -> Self {
        self.resource_metadata = Some((resource.metadata_path().to_owned(), resource.metadata_document().into()));
        let verify: VerifyToken = Arc::new(verify);
        self.authorize = Some(Arc::new(move |headers: &Headers| {
            resource.check(headers.get("Authorization"), |token| verify(token)).map(|info| Some(info.subject))
        }));
        self
    }
}
