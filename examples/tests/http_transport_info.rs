//! What a handler sees of the HTTP transport (`Context::transport`), request by request, on
//! both servers: the session's id, the request's own headers (never an earlier request's),
//! the peer address of the connection the request came on, and the identity the
//! authorization hook named.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use serde_json::{json, Value};
use talaria::core::schema::tools::{CallToolResult, Tool};
use talaria::core::server::Router;
use talaria::http::{HttpServer, HttpServerOptions, SmolHttpServer};
use talaria::server::Server;

/// A server whose `seen` tool answers with what it sees of the transport, as JSON.
fn seeing_server() -> Server<()> {
    let schema = serde_json::from_value(json!({"type": "object"})).unwrap();
    let router = Router::<()>::builder()
        .tool(Tool::new("seen", schema), |ctx, _: Value| {
            let info = ctx.transport().unwrap();
            let seen = json!({
                "kind": info.kind,
                "session": info.session_id,
                "peer": info.remote_addr,
                "caller": info.header("X-Caller"),
                "identity": info.identity,
                "headers": info.headers.len(),
            });
            Ok(CallToolResult::text(seen.to_string()))
        })
        .build();
    Server::new("seeing", "1", router)
}

/// An authorization hook naming the caller after `X-Who`, if sent.
fn options() -> HttpServerOptions {
    HttpServerOptions::default().authorize(|headers| Ok(headers.get("X-Who").map(|who| format!("user {who}"))))
}

/// One keep-alive connection to the server.
struct Connection {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
    addr: String,
}

impl Connection {
    fn open(addr: SocketAddr) -> Self {
        let stream = TcpStream::connect(addr).unwrap();
        stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        Self { reader: BufReader::new(stream.try_clone().unwrap()), writer: stream, addr: addr.to_string() }
    }

    fn local(&self) -> String {
        self.writer.local_addr().unwrap().to_string()
    }

    /// POSTs `body` with `headers` (each ending in CRLF); the status, the session id header,
    /// and the body.
    fn post(&mut self, headers: &str, body: &Value) -> (u16, Option<String>, String) {
        let body = body.to_string();
        write!(
            self.writer,
            "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\n{headers}\r\n{body}",
            self.addr,
            body.len()
        )
        .unwrap();
        let mut line = String::new();
        self.reader.read_line(&mut line).unwrap();
        let status = line.split(' ').nth(1).unwrap().parse().unwrap();
        let (mut length, mut session) = (0, None);
        loop {
            line.clear();
            self.reader.read_line(&mut line).unwrap();
            let Some((name, value)) = line.trim_end().split_once(':') else { break };
            if name.eq_ignore_ascii_case("content-length") {
                length = value.trim().parse().unwrap();
            } else if name.eq_ignore_ascii_case("mcp-session-id") {
                session = Some(value.trim().to_owned());
            }
        }
        let mut body = vec![0; length];
        self.reader.read_exact(&mut body).unwrap();
        (status, session, String::from_utf8(body).unwrap())
    }
}

/// Opens a 2025-06-18 session on `connection` (sending `headers` with `initialize`).
fn open_session(connection: &mut Connection, headers: &str) -> String {
    let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    let (status, session, body) = connection.post(headers, &initialize);
    assert_eq!(status, 200, "{body}");
    let session = session.unwrap();
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let (status, _, _) = connection.post(&session_headers(&session, ""), &initialized);
    assert_eq!(status, 202);
    session
}

fn session_headers(session: &str, more: &str) -> String {
    format!("Mcp-Session-Id: {session}\r\nMCP-Protocol-Version: 2025-06-18\r\n{more}")
}

/// Calls `seen` on `session` over `connection` with `more` headers: what the tool saw.
fn seen(connection: &mut Connection, session: &str, id: u64, more: &str) -> Value {
    let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "seen", "arguments": {}}});
    let (status, _, body) = connection.post(&session_headers(session, more), &call);
    assert_eq!(status, 200, "{body}");
    let answer: Value = serde_json::from_str(&body).unwrap();
    serde_json::from_str(answer["result"]["content"][0]["text"].as_str().unwrap()).unwrap()
}

/// Every request's own headers, peer and identity reach the handler; the session's kind and
/// id stay.
fn check(addr: SocketAddr, server: &str) {
    let mut first = Connection::open(addr);
    let session = open_session(&mut first, "X-Caller: at-initialize\r\n");

    let saw = seen(&mut first, &session, 1, "X-Caller: one\r\nX-Who: ann\r\n");
    assert_eq!(saw["kind"], "http", "{server}");
    assert_eq!(saw["session"], session.as_str(), "{server}");
    assert_eq!(saw["caller"], "one", "{server}: this request's header");
    assert_eq!(saw["identity"], "user ann", "{server}");
    assert_eq!(saw["peer"], first.local(), "{server}: the connection's peer");

    let mut second = Connection::open(addr);
    let saw = seen(&mut second, &session, 2, "X-Caller: two\r\n");
    assert_eq!(saw["caller"], "two", "{server}");
    assert_eq!(saw["identity"], Value::Null, "{server}: no X-Who this time, so no identity");
    assert_eq!(saw["peer"], second.local(), "{server}: the new connection's peer");
    assert_ne!(first.local(), second.local());

    let saw = seen(&mut first, &session, 3, "");
    assert_eq!(saw["caller"], Value::Null, "{server}: no header carried over from an earlier request");
    assert_eq!(saw["headers"], 6, "{server}: Host, Content-Type, Accept, Content-Length and the two MCP headers");
    assert_eq!(saw["peer"], first.local(), "{server}");
    assert_eq!(saw["session"], session.as_str(), "{server}");
}

#[test]
fn a_handler_sees_each_requests_headers_peer_and_identity_on_both_servers() {
    let server = seeing_server();
    let blocking = HttpServer::bind(&server, "127.0.0.1:0", options()).unwrap();
    check(blocking.local_addr(), "blocking");
    blocking.shutdown();
    let smol = SmolHttpServer::bind(&server, "127.0.0.1:0", options()).unwrap();
    check(smol.local_addr(), "smol");
    smol.shutdown();
}
