//! Heap allocations per `tools/call` inside each HTTP server, counted (dhat), beside the
//! floor's: what a request costs the allocator, a figure the timed bench (`--bench http`)
//! cannot see in its server children.
//!
//! ```text
//! cargo bench -p talaria-examples --bench http_allocs
//! TALARIA_BENCH_CALLS=2000 cargo bench -p talaria-examples --bench http_allocs   # smoke
//! ```
//!
//! Each server runs in this process, on 127.0.0.1: the smol server (on an executor with one
//! thread), the blocking server (`tiny_http`), and the floor (the timed bench's bare echo on
//! `std::net`, a thread per connection). One client thread opens a legacy session (protocol
//! 2025-06-18, JSON replies) on one keep-alive connection and calls `echo` in a loop. The
//! client allocates nothing in the loop (its requests are written beforehand, its reads reuse
//! one buffer, and a reply is checked by its bytes), so what the counter sees between the
//! first and the last call is the server's: the HTTP layer, the session, the router and the
//! tool.
// A bench stops loudly if a server misbehaves.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::cast_precision_loss)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};

use talaria::http::{HttpServer, HttpServerOptions, SmolHttpServer};

#[path = "common/http_floor.rs"]
#[allow(dead_code)]
mod floor;
#[path = "common/util.rs"]
#[allow(dead_code)]
mod util;

#[global_allocator]
static ALLOC: dhat::Alloc = dhat::Alloc;

/// What every call echoes.
const TEXT: &str = "hello, world";
/// Calls before the counted ones (the connection's and the session's buffers settle).
const WARM: usize = 200;

fn main() {
    let calls = util::env_usize("TALARIA_BENCH_CALLS", 10_000).max(100);
    println!("talaria http allocations: heap allocations per echo tools/call inside each server, counted with dhat");
    println!("  one client thread, one keep-alive connection, one legacy session (2025-06-18, JSON replies);");
    println!("  {WARM} warm-up calls, then {calls} counted; the client allocates nothing in the loop");
    println!();
    println!("  {:<50} {:>12} {:>12}", "server", "allocs/call", "bytes/call");
    let server = talaria_examples::everything::server();

    let executor = talaria::smol::executor(1);
    let smol = SmolHttpServer::bind_on(&executor, &server, "127.0.0.1:0", HttpServerOptions::default()).unwrap();
    report("smol server (one executor thread)", count(smol.local_addr(), true, calls));
    smol.shutdown();

    let blocking = HttpServer::bind(&server, "127.0.0.1:0", HttpServerOptions::default()).unwrap();
    report("blocking server (tiny_http)", count(blocking.local_addr(), true, calls));
    blocking.shutdown();

    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { continue };
            std::thread::spawn(move || floor::serve_blocking(stream));
        }
    });
    report("floor (bare echo on std::net, serde_json::Value)", count(addr, false, calls));
}

fn report(label: &str, (allocs, bytes): (f64, f64)) {
    println!("  {label:<50} {allocs:>12.1} {bytes:>12.0}");
}

/// Allocations and bytes allocated per call, `calls` calls against the server at `addr`
/// (`session`: open a legacy session first; the floor has none).
fn count(addr: SocketAddr, session: bool, calls: usize) -> (f64, f64) {
    let mut client = Client::connect(addr);
    let id = if session { client.open_session() } else { "0".repeat(32) };
    let requests: Vec<Vec<u8>> = (0..WARM + calls).map(|i| call_request(addr, &id, i)).collect();
    for request in &requests[..WARM] {
        client.call(request);
    }
    let profiler = dhat::Profiler::builder().testing().build();
    let before = dhat::HeapStats::get();
    for request in &requests[WARM..] {
        client.call(request);
    }
    let after = dhat::HeapStats::get();
    drop(profiler);
    let per_call = |n: u64| n as f64 / calls as f64;
    (per_call(after.total_blocks - before.total_blocks), per_call(after.total_bytes - before.total_bytes))
}

/// Call `i`, whole: head and body.
fn call_request(addr: SocketAddr, session: &str, i: usize) -> Vec<u8> {
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":{i},"method":"tools/call","params":{{"name":"echo","arguments":{{"text":"{TEXT}"}}}}}}"#
    );
    format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nMcp-Session-Id: {session}\r\nMCP-Protocol-Version: 2025-06-18\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// A keep-alive connection whose reads reuse one line and one body buffer.
struct Client {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
    addr: SocketAddr,
    line: String,
    body: Vec<u8>,
}

impl Client {
    fn connect(addr: SocketAddr) -> Self {
        let stream = TcpStream::connect(addr).unwrap();
        stream.set_nodelay(true).unwrap();
        let reader = BufReader::with_capacity(16 * 1024, stream.try_clone().unwrap());
        Self { reader, writer: stream, addr, line: String::with_capacity(256), body: Vec::with_capacity(4096) }
    }

    /// `initialize` and `notifications/initialized`: the session's id.
    fn open_session(&mut self) -> String {
        let initialize = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}"#;
        let (status, session) = self.post("", initialize);
        assert_eq!(status, 200, "{}", String::from_utf8_lossy(&self.body));
        let session = session.expect("initialize answered with no Mcp-Session-Id");
        let headers = format!("Mcp-Session-Id: {session}\r\nMCP-Protocol-Version: 2025-06-18\r\n");
        let (status, _) = self.post(&headers, r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        assert_eq!(status, 202);
        session
    }

    fn post(&mut self, headers: &str, body: &str) -> (u16, Option<String>) {
        let head = format!(
            "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\n{headers}\r\n",
            self.addr,
            body.len()
        );
        self.writer.write_all(head.as_bytes()).unwrap();
        self.writer.write_all(body.as_bytes()).unwrap();
        self.read_reply(true)
    }

    /// One echo call; its reply must carry the text.
    fn call(&mut self, request: &[u8]) {
        self.writer.write_all(request).unwrap();
        let (status, _) = self.read_reply(false);
        assert_eq!(status, 200);
        let text = br#""text":"hello, world""#;
        assert!(self.body.windows(text.len()).any(|w| w == text), "{}", String::from_utf8_lossy(&self.body));
    }

    /// The reply's status, its session id (only if `want_session`: reading it allocates), and
    /// its body into `self.body`.
    fn read_reply(&mut self, want_session: bool) -> (u16, Option<String>) {
        self.read_line();
        let status = self.line.split(' ').nth(1).and_then(|s| s.parse().ok()).expect("a status line");
        let (mut length, mut session) = (0, None);
        loop {
            self.read_line();
            let line = self.line.trim_end();
            if line.is_empty() {
                break;
            }
            let Some((name, value)) = line.split_once(':') else { continue };
            if name.eq_ignore_ascii_case("content-length") {
                length = value.trim().parse().unwrap();
            } else if want_session && name.eq_ignore_ascii_case("mcp-session-id") {
                session = Some(value.trim().to_owned());
            }
        }
        self.body.resize(length, 0);
        self.reader.read_exact(&mut self.body).unwrap();
        (status, session)
    }

    fn read_line(&mut self) {
        self.line.clear();
        assert!(self.reader.read_line(&mut self.line).unwrap() > 0, "the server closed the connection");
    }
}
