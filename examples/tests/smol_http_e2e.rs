//! End to end over Streamable HTTP on 127.0.0.1 against the smol server: our client in both
//! eras and reply modes, the legacy transport, many sessions at once, and its own HTTP/1.1
//! layer (keep-alive, read timeouts, limits, chunked bodies). The official conformance suite
//! runs against it too (`tests/interop/conformance.sh`, `server-smol` rows).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod cancel;
mod raw_http;

use std::io::{BufReader, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use serde_json::json;
use talaria::client::{Client, ClientOptions};
use talaria::core::client::CallOptions;
use talaria::core::http::exchange::EndpointConfig;
use talaria::core::http::reply::ReplyMode;
use talaria::core::schema::tools::CallToolResult;
use talaria::core::session::ClientMode;
use talaria::core::version::ProtocolVersion;
use talaria::http::{HttpServerOptions, SmolHttpServer};

fn text_of(result: &CallToolResult) -> String {
    result.content.iter().filter_map(|c| c.as_text()).collect::<Vec<_>>().join("")
}

fn serve(options: HttpServerOptions) -> (SmolHttpServer, String) {
    let server = talaria_examples::everything::server();
    let listening = SmolHttpServer::bind(&server, "127.0.0.1:0", options).unwrap();
    let url = format!("http://{}/mcp", listening.local_addr());
    (listening, url)
}

fn legacy(version: ProtocolVersion) -> ClientOptions {
    ClientOptions::new("smol-e2e", "1").mode(ClientMode::Legacy).versions(vec![version])
}

fn wait_for_no_sessions(listening: &SmolHttpServer) {
    let deadline = Instant::now() + Duration::from_secs(2);
    while listening.sessions() > 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(listening.sessions(), 0);
}

#[test]
fn sessions_in_both_eras_and_reply_modes() {
    for mode in [ReplyMode::Json, ReplyMode::Sse] {
        let (listening, url) = serve(HttpServerOptions::default().reply_mode(mode));
        for version in [ProtocolVersion::V2025_03_26, ProtocolVersion::V2025_06_18, ProtocolVersion::V2025_11_25] {
            let client = Client::http(&url, &[], legacy(version)).unwrap();
            assert_eq!(client.session_id().map(|id| id.len()), Some(32));
            let reports = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
            let seen = std::sync::Arc::clone(&reports);
            let options = CallOptions::default().with_progress(move |p| seen.lock().unwrap().push(p.progress));
            let slow = client.call_tool_with("slow", json!({"steps": 3, "step_ms": 1}), options).unwrap();
            assert_eq!(text_of(&slow), "done after 3 steps");
            assert_eq!(*reports.lock().unwrap(), vec![1.0, 2.0, 3.0], "{mode:?} {version}");
            assert_eq!(text_of(&client.call_tool("echo", json!({"text": "hi"})).unwrap()), "hi");
            assert_eq!(text_of(&client.call_tool("calls", json!({})).unwrap()), "1", "per-session state");
            client.close();
        }
        wait_for_no_sessions(&listening);
        let client = Client::http(&url, &[], ClientOptions::new("stateless", "1").mode(ClientMode::Stateless)).unwrap();
        assert_eq!(client.protocol_version(), ProtocolVersion::V2026_07_28);
        assert_eq!(text_of(&client.call_tool("echo", json!({"text": "no session"})).unwrap()), "no session");
        assert_eq!(listening.sessions(), 0);
    }
}

#[test]
fn the_legacy_transport_and_many_sessions_at_once() {
    let (listening, url) = serve(HttpServerOptions::default());
    let sse = Client::sse(&url.replace("/mcp", "/sse"), &[], ClientOptions::new("sse", "1")).unwrap();
    assert_eq!(text_of(&sse.call_tool("echo", json!({"text": "legacy"})).unwrap()), "legacy");
    sse.close();
    let workers: Vec<_> = (0..64)
        .map(|c| {
            let url = url.clone();
            std::thread::spawn(move || {
                let client = Client::http(&url, &[], legacy(ProtocolVersion::V2025_06_18)).unwrap();
                for i in 0..50 {
                    let text = format!("{c}:{i}");
                    assert_eq!(text_of(&client.call_tool("echo", json!({"text": text})).unwrap()), text);
                }
                text_of(&client.call_tool("calls", json!({})).unwrap())
            })
        })
        .collect();
    for worker in workers {
        assert_eq!(worker.join().unwrap(), "50", "every answer once, to its own session");
    }
    wait_for_no_sessions(&listening);
}

#[test]
fn a_stateless_call_whose_stream_the_client_closes_is_cancelled_at_once() {
    let (_listening, url) = serve(HttpServerOptions::default());
    let latencies = cancel::cancel_latencies(&url, 5);
    eprintln!("smol server: cancel noticed after {latencies:?}");
    assert!(latencies[2] < cancel::CANCEL_NOTICED_WITHIN, "median {:?}", latencies[2]);
    // The client goes on, on a fresh connection.
    let client = Client::http(&url, &[], ClientOptions::new("stateless", "1").mode(ClientMode::Stateless)).unwrap();
    assert_eq!(text_of(&client.call_tool("echo", json!({"text": "still here"})).unwrap()), "still here");
}

/// Sends `requests` on one connection and reads `count` responses: (status line, body) each.
fn exchange(addr: &str, requests: &str, count: usize) -> Vec<(String, String)> {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    stream.write_all(requests.as_bytes()).unwrap();
    let mut reader = BufReader::new(stream);
    (0..count).map(|_| raw_http::read_response(&mut reader)).collect()
}

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;

fn post(addr: &str, body: &str) -> String {
    format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
}

#[test]
fn its_http_layer_keeps_connections_alive_and_enforces_limits() {
    let mut endpoint = EndpointConfig::default();
    endpoint.max_body = 1024;
    let options = HttpServerOptions::default().endpoint(endpoint).read_timeout(Duration::from_millis(200));
    let (listening, _) = serve(options);
    let addr = listening.local_addr().to_string();

    // Two requests on one connection, the second chunked: both answered.
    let chunked = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n{:x}\r\n{INIT}\r\n0\r\n\r\n",
        INIT.len()
    );
    let answers = exchange(&addr, &format!("{}{chunked}", post(&addr, INIT)), 2);
    for (status, body) in &answers {
        assert_eq!(status, "HTTP/1.1 200 OK");
        assert!(body.contains(r#""protocolVersion":"2025-06-18""#), "{body}");
    }

    // Limits: a body past max_body, a head past 64 KiB, a broken head.
    let big = "x".repeat(2000);
    assert_eq!(exchange(&addr, &post(&addr, &big), 1)[0].0, "HTTP/1.1 413 Payload Too Large");
    let huge = format!("GET /mcp HTTP/1.1\r\nX-Filler: {}\r\n\r\n", "y".repeat(70 * 1024));
    assert_eq!(exchange(&addr, &huge, 1)[0].0, "HTTP/1.1 431 Request Header Fields Too Large");
    assert_eq!(exchange(&addr, "NOT HTTP\r\n\r\n", 1)[0].0, "HTTP/1.1 400 Bad Request");
    assert_eq!(
        exchange(&addr, &format!("GET /elsewhere HTTP/1.1\r\nHost: {addr}\r\n\r\n"), 1)[0].0,
        "HTTP/1.1 404 Not Found"
    );

    // A client that starts a request and goes silent is disconnected after the read timeout.
    let mut slow = TcpStream::connect(&addr).unwrap();
    slow.write_all(b"POST /mcp HTTP/1.1\r\nHost: x\r\n").unwrap();
    slow.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let started = Instant::now();
    let mut rest = Vec::new();
    let _ = slow.read_to_end(&mut rest);
    assert!(started.elapsed() < Duration::from_secs(3), "disconnected, not kept waiting");
    // (A head not sent in time gets no answer, as with nginx: the connection is closed.)
    assert!(rest.is_empty(), "{}", String::from_utf8_lossy(&rest));
    // An idle keep-alive connection is closed quietly.
    let mut idle = TcpStream::connect(&addr).unwrap();
    idle.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut nothing = Vec::new();
    assert_eq!(idle.read_to_end(&mut nothing).unwrap(), 0);
}

#[test]
fn connections_past_the_cap_are_turned_away_with_503_until_one_closes() {
    let (_listening, url) = serve(HttpServerOptions::default().max_connections(2));
    let addr = url.trim_start_matches("http://").trim_end_matches("/mcp").to_owned();
    let first = TcpStream::connect(&addr).unwrap();
    let _second = TcpStream::connect(&addr).unwrap();
    let mut third = TcpStream::connect(&addr).unwrap();
    third.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut answer = String::new();
    let _ = third.read_to_string(&mut answer);
    assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
    // A held connection closes: there is room again.
    drop(first);
    let deadline = Instant::now() + Duration::from_secs(3);
    loop {
        let mut next = TcpStream::connect(&addr).unwrap();
        next.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        next.write_all(format!("GET /elsewhere HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n").as_bytes())
            .unwrap();
        let mut answer = String::new();
        let _ = next.read_to_string(&mut answer);
        if answer.starts_with("HTTP/1.1 404") {
            break;
        }
        assert!(answer.starts_with("HTTP/1.1 503") && Instant::now() < deadline, "{answer}");
        std::thread::sleep(Duration::from_millis(20));
    }
}
