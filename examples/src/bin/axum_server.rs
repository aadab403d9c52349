//! The everything server's MCP endpoint mounted in an axum application on tokio, beside a
//! `/health` route: `cargo run -p talaria-examples --bin axum-server -- 127.0.0.1:8080`.

use std::net::SocketAddr;

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let addr = std::env::args().nth(1).unwrap_or_else(|| "127.0.0.1:8080".into());
    let app = talaria_examples::mounted::app(&talaria_examples::everything::server(), Default::default());
    let listener = tokio::net::TcpListener::bind(&addr).await?;
    // On stderr, as everything-server says it: the URL last on the first line.
    eprintln!("axum-server: /health, and MCP at http://{}/mcp", listener.local_addr()?);
    axum::serve(listener, app.into_make_service_with_connect_info::<SocketAddr>()).await
}
