//! The MCP endpoint mounted in an axum application on tokio, next to routes of its own.

use std::net::SocketAddr;

use axum::extract::{ConnectInfo, Request};
use axum::middleware::Next;
use axum::response::Response;
use axum::routing::get;
use axum::Router;
use talaria::http::{HttpServerOptions, McpService};
use talaria::server::Server;

/// An axum application: `GET /health` answers `ok`, and `/mcp` is `server`'s MCP endpoint
/// (its SSE streams run as tokio tasks). Serve it with
/// `into_make_service_with_connect_info::<SocketAddr>()` so that the endpoint knows each
/// peer's address.
///
/// # Examples
///
/// ```no_run
/// # async fn run() -> std::io::Result<()> {
/// let app = talaria_examples::mounted::app(&talaria_examples::everything::server(), Default::default());
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
/// let service = app.into_make_service_with_connect_info::<std::net::SocketAddr>();
/// axum::serve(listener, service).await
/// # }
/// ```
pub fn app<S: Send + 'static>(server: &Server<S>, options: HttpServerOptions) -> Router {
    let path = options.path.clone();
    let mcp = McpService::with_spawn(server, options, |task| drop(tokio::spawn(task)));
    Router::new()
        .route("/health", get(|| async { "ok" }))
        .route_service(&path, mcp)
        .layer(axum::middleware::from_fn(with_peer))
}

/// Copies the peer's address from axum's `ConnectInfo` to the plain `SocketAddr` extension the
/// MCP endpoint reads.
async fn with_peer(mut request: Request, next: Next) -> Response {
    if let Some(ConnectInfo(peer)) = request.extensions().get::<ConnectInfo<SocketAddr>>().copied() {
        request.extensions_mut().insert(peer);
    }
    next.run(request).await
}
