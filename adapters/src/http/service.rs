//! The MCP endpoint as a `tower` service, to mount in an application that has its own HTTP
//! server (axum, or hyper on tokio): the same exchanges as [`HttpServer`](super::HttpServer),
//! with the connection (its limits, TLS, timeouts) left to the host.

use std::convert::Infallible;
use std::future::Future;
use std::net::{Ipv4Addr, SocketAddr};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context as TaskContext, Poll};

use hyper::{Request, Response};

use super::body::Body;
use super::exchange::{handle, BoxedTask, Context, Spawner};
use super::options::HttpServerOptions;
use super::processes::listen_to_relay;
use super::shared::{expire_due, Shared};
use crate::server::Server;

/// The body of the service's responses: a whole JSON body, or an SSE stream written as the
/// session's messages come. It is an [`http_body::Body`](hyper::body::Body) of [`bytes::Bytes`]
/// that never fails, so any host takes it (`axum::body::Body::new`, for one).
pub struct ResponseBody(Body);

impl std::fmt::Debug for ResponseBody {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResponseBody").finish_non_exhaustive()
    }
}

impl hyper::body::Body for ResponseBody {
    type Data = bytes::Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut TaskContext<'_>,
    ) -> Poll<Option<Result<hyper::body::Frame<bytes::Bytes>, Infallible>>> {
        Pin::new(&mut self.0).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.0.is_end_stream()
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        self.0.size_hint()
    }
}

/// The MCP endpoint (both eras, the legacy HTTP+SSE paths, the Protected Resource Metadata if
/// configured) as a [`tower_service::Service`]: mount it on the options' paths. The peer's
/// address, for per-peer session caps and [`TransportInfo`](talaria_core::server::TransportInfo),
/// is read from a [`SocketAddr`] in the request's extensions if the host puts one there.
///
/// The host owns the connections, so the options' connection limits (`read_timeout`,
/// `max_connections`, `max_head`) are the host's to set; the body limit
/// ([`EndpointConfig::max_body`](talaria_core::http::exchange::EndpointConfig::max_body)) and
/// everything MCP still hold. There is no bind address to tell a local server from a public
/// one, so `Host` is checked only against
/// [`EndpointConfig::allowed_hosts`](talaria_core::http::exchange::EndpointConfig::allowed_hosts)
/// if set: set it for a server on localhost.
///
/// # Examples
///
/// ```
/// use talaria::core::server::Router;
/// use talaria::http::{HttpServerOptions, McpService};
/// use talaria::server::Server;
///
/// let server = Server::new("mounted", "1.0", Router::<()>::builder().build());
/// // SSE streams run as tasks on smol's global executor; under tokio, give `tokio::spawn`:
/// // McpService::with_spawn(&server, options, |task| drop(tokio::spawn(task)))
/// let service = McpService::new(&server, HttpServerOptions::default());
/// assert_eq!(service.sessions(), 0);
/// ```
pub struct McpService<S> {
    context: Arc<Context<S>>,
}

impl<S> Clone for McpService<S> {
    fn clone(&self) -> Self {
        Self { context: Arc::clone(&self.context) }
    }
}

impl<S> std::fmt::Debug for McpService<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpService").field("path", &self.context.shared.options.path).finish_non_exhaustive()
    }
}

impl<S: Send + 'static> McpService<S> {
    /// The endpoint for `server`, its streams and session expiry run on smol's global executor.
    #[must_use]
    pub fn new(server: &Server<S>, options: HttpServerOptions) -> Self {
        Self::start(server, options, Spawner::Global)
    }

    /// The endpoint for `server`, its streams and session expiry run by `spawn` (under tokio:
    /// `|task| drop(tokio::spawn(task))`).
    #[must_use]
    pub fn with_spawn(
        server: &Server<S>,
        options: HttpServerOptions,
        spawn: impl Fn(Pin<Box<dyn Future<Output = ()> + Send>>) + Send + Sync + 'static,
    ) -> Self {
        let spawn: Arc<dyn Fn(BoxedTask) + Send + Sync> = Arc::new(spawn);
        Self::start(server, options, Spawner::With(spawn))
    }

    fn start(server: &Server<S>, options: HttpServerOptions, spawner: Spawner) -> Self {
        let anywhere = SocketAddr::from((Ipv4Addr::UNSPECIFIED, 0));
        let shared = Arc::new(Shared::new(server, anywhere, options));
        listen_to_relay(&shared, &spawner);
        // Session expiry, for as long as the service (any clone of it) lives; off the
        // executor's threads with stores that may be remote (expiry drops logs).
        let expiring = Arc::downgrade(&shared);
        let remote = shared.options.session_store.is_some() || shared.options.event_store.is_some();
        spawner.detach(async move {
            while let Some(shared) = expiring.upgrade() {
                // Either way the service is not held while the task sleeps.
                let pause = if remote {
                    smol::unblock(move || expire_due(&shared)).await
                } else {
                    let pause = expire_due(&shared);
                    drop(shared);
                    pause
                };
                smol::Timer::after(pause).await;
            }
        });
        Self { context: Arc::new(Context { shared, spawner }) }
    }

    /// How many legacy sessions are live.
    #[must_use]
    pub fn sessions(&self) -> usize {
        self.context.shared.session_count()
    }
}

impl<S, B> tower_service::Service<Request<B>> for McpService<S>
where
    S: Send + 'static,
    B: hyper::body::Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    type Response = Response<ResponseBody>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response<ResponseBody>, Infallible>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut TaskContext<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        let peer = request.extensions().get::<SocketAddr>().copied();
        let context = Arc::clone(&self.context);
        Box::pin(async move {
            let response = handle(context, request, peer).await?;
            Ok(response.map(ResponseBody))
        })
    }
}
