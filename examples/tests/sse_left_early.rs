//! A client without priming events (2025-06-18) that leaves an SSE response before its first
//! event: the request goes on to its end, not cancelled (before the stateless era a
//! disconnection is not a cancellation), though the stream's log, which was to open with that
//! first event, never opens. One test per process: the `slow` tool's counters are
//! process-wide.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use talaria::core::http::reply::ReplyMode;
use talaria::http::{HttpServer, HttpServerOptions};

/// Posts `body` in `session` (if any) and reads the head: the status line and the session id
/// it names; the connection, for reading on or dropping.
fn post(addr: SocketAddr, session: Option<&str>, body: &Value) -> (String, Option<String>, BufReader<TcpStream>) {
    let body = body.to_string();
    let mut stream = TcpStream::connect(addr).unwrap();
    let session = session.map(|id| format!("Mcp-Session-Id: {id}\r\n")).unwrap_or_default();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\n{session}Mcp-Protocol-Version: 2025-06-18\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).unwrap();
    stream.write_all(body.as_bytes()).unwrap();
    let mut reader = BufReader::new(stream);
    let (mut status, mut id, mut line) = (String::new(), None, String::new());
    reader.read_line(&mut status).unwrap();
    while reader.read_line(&mut line).unwrap() > 2 {
        if let Some(value) = line.to_ascii_lowercase().strip_prefix("mcp-session-id:") {
            id = Some(value.trim().to_owned());
        }
        line.clear();
    }
    (status.trim().to_owned(), id, reader)
}

#[test]
fn a_request_whose_client_leaves_before_the_first_event_goes_on() {
    let options = HttpServerOptions::default().reply_mode(ReplyMode::Sse).sse_keepalive(Duration::from_millis(20));
    let listening = HttpServer::bind(&talaria_examples::everything::server(), "127.0.0.1:0", options).unwrap();
    let addr = listening.local_addr();
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18",
        "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}});
    let (status, session, mut rest) = post(addr, None, &init);
    assert!(status.ends_with("200 OK"), "{status}");
    rest.read_to_string(&mut String::new()).unwrap();
    let session = session.expect("a legacy session");
    let (status, _, _) = post(addr, Some(&session), &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    assert!(status.ends_with("202 Accepted"), "{status}");

    // No progress token: no event before the answer, 300 ms on. The stream opens (a keep-alive
    // is due first), and the client leaves at once.
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "slow", "arguments": {"steps": 3, "step_ms": 100}}});
    let (status, _, left) = post(addr, Some(&session), &call);
    assert!(status.ends_with("200 OK"), "{status}");
    drop(left);

    let waited = Instant::now();
    let mut ended = talaria_cli::demo_tools::slow_calls();
    while ended.completed + ended.cancelled == 0 && waited.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(20));
        ended = talaria_cli::demo_tools::slow_calls();
    }
    assert_eq!((ended.started, ended.completed, ended.cancelled), (1, 1, 0), "{ended:?}");
}
