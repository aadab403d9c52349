//! Many sessions at once over Streamable HTTP, from every host: the blocking server, the smol
//! server and the endpoint mounted in axum on tokio. Each session is a keep-alive connection
//! of its own (a raw HTTP/1.1 client, so the load is the server's), driven by a few threads;
//! every call has an id of its own and its answer is checked by that id and by its text.
//!
//! The defaults are a smoke run; `scripts/load.sh` runs 1,000 sessions x 100 calls in release
//! (`TALARIA_LOAD_SESSIONS`, `TALARIA_LOAD_CALLS`, `TALARIA_LOAD_THREADS`).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use talaria::http::{HttpServer, HttpServerOptions, SmolHttpServer};

fn knob(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// One session on its own keep-alive connection.
struct Session {
    writer: TcpStream,
    reader: BufReader<TcpStream>,
    id: String,
    addr: String,
}

impl Session {
    fn open(addr: &str) -> Self {
        let stream = TcpStream::connect(addr).unwrap();
        stream.set_nodelay(true).unwrap();
        stream.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
        let reader = BufReader::new(stream.try_clone().unwrap());
        let mut session = Self { writer: stream, reader, id: String::new(), addr: addr.to_owned() };
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "load", "version": "1"}}});
        let (status, headers, body) = session.post(&init);
        assert_eq!(status, 200, "{body}");
        session.id = headers.iter().find(|(n, _)| n == "mcp-session-id").map(|(_, v)| v.clone()).expect("a session id");
        let (status, _, _) = session.post(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        assert_eq!(status, 202);
        session
    }

    /// POSTs `message`; the status, the headers (names in lower case) and the body.
    fn post(&mut self, message: &Value) -> (u16, Vec<(String, String)>, String) {
        let body = message.to_string();
        let mut request = format!(
            "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\n",
            self.addr,
            body.len()
        );
        if !self.id.is_empty() {
            request.push_str(&format!("Mcp-Session-Id: {}\r\nMCP-Protocol-Version: 2025-06-18\r\n", self.id));
        }
        request.push_str("\r\n");
        request.push_str(&body);
        self.writer.write_all(request.as_bytes()).unwrap();
        let mut line = String::new();
        self.reader.read_line(&mut line).unwrap();
        let status = line.split(' ').nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
        let mut headers = Vec::new();
        let mut length = 0;
        loop {
            let mut field = String::new();
            self.reader.read_line(&mut field).unwrap();
            let field = field.trim_end();
            if field.is_empty() {
                break;
            }
            let (name, value) = field.split_once(':').unwrap();
            let (name, value) = (name.to_ascii_lowercase(), value.trim().to_owned());
            if name == "content-length" {
                length = value.parse().unwrap();
            }
            headers.push((name, value));
        }
        let mut body = vec![0; length];
        self.reader.read_exact(&mut body).unwrap();
        (status, headers, String::from_utf8(body).unwrap())
    }

    /// Calls `echo` with request id `id`; checks the answer is that call's.
    fn echo(&mut self, id: u64) {
        let text = format!("call {id}");
        let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": text}}});
        let (status, _, body) = self.post(&call);
        assert_eq!(status, 200, "{body}");
        let answer: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(answer["id"], id, "the answer to another call: {answer}");
        assert_eq!(answer["result"]["content"][0]["text"], text.as_str(), "{answer}");
    }
}

/// Opens `sessions` sessions at `addr`, spread over threads, and makes `calls` calls in each,
/// the sessions of a thread taking turns; returns calls per second.
fn load(addr: &str, sessions: usize, calls: usize, threads: usize) -> f64 {
    let started = Instant::now();
    let workers: Vec<_> = (0..threads)
        .map(|t| {
            let addr = addr.to_owned();
            let mine: Vec<usize> = (0..sessions).filter(|s| s % threads == t).collect();
            std::thread::spawn(move || {
                let mut open: Vec<(usize, Session)> = mine.iter().map(|&s| (s, Session::open(&addr))).collect();
                for call in 0..calls {
                    for (s, session) in &mut open {
                        session.echo((*s * calls + call) as u64 + 1);
                    }
                }
                open.len() * calls
            })
        })
        .collect();
    let done: usize = workers.into_iter().map(|w| w.join().unwrap()).sum();
    assert_eq!(done, sessions * calls);
    done as f64 / started.elapsed().as_secs_f64()
}

fn sizes() -> (usize, usize, usize) {
    (knob("TALARIA_LOAD_SESSIONS", 100), knob("TALARIA_LOAD_CALLS", 20), knob("TALARIA_LOAD_THREADS", 16))
}

fn options(sessions: usize) -> HttpServerOptions {
    let mut endpoint = talaria::core::http::exchange::EndpointConfig::default();
    endpoint.max_sessions_per_peer = endpoint.max_sessions_per_peer.max(sessions);
    HttpServerOptions::default().endpoint(endpoint)
}

#[test]
fn the_blocking_server_answers_every_call_of_every_session() {
    let (sessions, calls, threads) = sizes();
    let listening =
        HttpServer::bind(&talaria_examples::everything::server(), "127.0.0.1:0", options(sessions)).unwrap();
    let rate = load(&listening.local_addr().to_string(), sessions, calls, threads);
    eprintln!("blocking server: {sessions} sessions x {calls} calls, {rate:.0} calls/s");
    assert_eq!(listening.sessions(), sessions);
}

#[test]
fn the_smol_server_answers_every_call_of_every_session() {
    let (sessions, calls, threads) = sizes();
    let executor = talaria::smol::executor(2);
    let server = talaria_examples::everything::server();
    let listening = SmolHttpServer::bind_on(&executor, &server, "127.0.0.1:0", options(sessions)).unwrap();
    let rate = load(&listening.local_addr().to_string(), sessions, calls, threads);
    eprintln!("smol server: {sessions} sessions x {calls} calls, {rate:.0} calls/s");
    assert_eq!(listening.sessions(), sessions);
}

#[test]
fn the_endpoint_in_axum_on_tokio_answers_every_call_of_every_session() {
    let (sessions, calls, threads) = sizes();
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let addr = runtime.block_on(async {
        let app = talaria_examples::mounted::app(&talaria_examples::everything::server(), options(sessions));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(
            async move { axum::serve(listener, app.into_make_service_with_connect_info::<SocketAddr>()).await },
        );
        addr
    });
    let rate = load(&addr.to_string(), sessions, calls, threads);
    eprintln!("axum on tokio: {sessions} sessions x {calls} calls, {rate:.0} calls/s");
}
