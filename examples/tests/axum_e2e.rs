//! The MCP endpoint mounted in an axum application on tokio (`talaria_examples::mounted`):
//! served next to the application's own route, to our blocking and async clients, both eras,
//! with a closed stream still cancelling its call.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod cancel;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};

use serde_json::json;
use talaria::client::{AsyncClient, Client, ClientOptions};
use talaria::core::schema::tools::CallToolResult;
use talaria::core::session::ClientMode;
use talaria::core::version::ProtocolVersion;

fn text_of(result: &CallToolResult) -> String {
    result.content.iter().filter_map(|c| c.as_text()).collect::<Vec<_>>().join("")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_endpoint_serves_beside_the_application_routes() {
    let app = talaria_examples::mounted::app(&talaria_examples::everything::server(), Default::default());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app.into_make_service_with_connect_info::<SocketAddr>()).await });
    let url = format!("http://{addr}/mcp");

    // The application's own route.
    let health = tokio::task::spawn_blocking(move || {
        let mut stream = TcpStream::connect(addr).unwrap();
        stream.write_all(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n").unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).unwrap();
        answer
    });
    let health = health.await.unwrap();
    assert!(health.starts_with("HTTP/1.1 200") && health.ends_with("ok"), "{health}");

    // The async client, on tokio's own threads: the stateless era.
    let client = AsyncClient::http(&url, &[], ClientOptions::new("tokio", "1")).await.unwrap();
    assert_eq!(client.protocol_version(), ProtocolVersion::V2026_07_28);
    let result = client.call_tool_with("echo", json!({"text": "mounted"}), Default::default()).await.unwrap();
    assert_eq!(text_of(&result), "mounted");

    // The blocking client in a legacy session (with its GET stream), and a closed stream
    // cancelling a stateless call.
    let blocking = tokio::task::spawn_blocking(move || {
        let options =
            ClientOptions::new("blocking", "1").mode(ClientMode::Legacy).versions(vec![ProtocolVersion::V2025_06_18]);
        let client = Client::http(&url, &[], options).unwrap();
        for n in 0..20 {
            let text = format!("call {n}");
            assert_eq!(text_of(&client.call_tool("echo", json!({"text": text})).unwrap()), text);
        }
        assert_eq!(text_of(&client.call_tool("calls", json!({})).unwrap()), "20", "one session throughout");
        let latencies = cancel::cancel_latencies(&url, 3);
        assert!(latencies[1] < cancel::CANCEL_NOTICED_WITHIN, "median {:?}", latencies[1]);
    });
    blocking.await.unwrap();
}
