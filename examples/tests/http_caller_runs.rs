//! The blocking HTTP client's calls run their own POST on the calling thread (caller-runs):
//! no worker thread per call, and a call that ends otherwise (its timeout, the client closed)
//! still returns when it ends, although its thread was reading the reply.
//!
//! The server is an `everything-server` child on 127.0.0.1, so that this process's threads
//! are the client's only; the tests take turns, as they count this process's threads.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::mpsc::{channel, Sender};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use serde_json::json;
use talaria::client::{Client, ClientError, ClientOptions};
use talaria::core::client::CallOptions;
use talaria::core::session::ClientMode;
use talaria::core::version::ProtocolVersion;
use talaria_examples::child::ServerChild;

const SERVER: &str = env!("CARGO_BIN_EXE_everything-server");

/// The tests count this process's threads: one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

/// An `everything-server --transport http` child on 127.0.0.1.
fn everything_server() -> ServerChild {
    let server = ServerChild::start(SERVER, &["--transport", "http", "--port", "0"]).unwrap();
    assert!(server.url.starts_with("http://127.0.0.1:"), "{}", server.url);
    server
}

/// This process's threads named `name`.
fn threads_named(name: &str) -> usize {
    std::fs::read_dir("/proc/self/task")
        .unwrap()
        .filter_map(Result::ok)
        .filter(|task| std::fs::read_to_string(task.path().join("comm")).is_ok_and(|comm| comm.trim() == name))
        .count()
}

/// How many `slow` calls the server has started.
fn slow_started(client: &Client) -> u64 {
    let result = client.call_tool("slow-stats", json!({})).unwrap();
    let text: String = result.content.iter().filter_map(|c| c.as_text()).collect();
    let stats: serde_json::Value = serde_json::from_str(&text).unwrap();
    stats["started"].as_u64().unwrap()
}

fn options(mode: ClientMode) -> ClientOptions {
    ClientOptions::new("caller-runs", "1").mode(mode)
}

#[test]
fn concurrent_blocking_calls_start_no_worker_threads() {
    let _serial = SERIAL.lock().unwrap_or_else(PoisonError::into_inner);
    let server = everything_server();
    for mode in [ClientMode::Legacy, ClientMode::Stateless] {
        let client = Client::http(&server.url, &[], options(mode)).unwrap();
        // The handshake's requests may have started workers (nothing waits for them on the
        // connecting thread); the calls below must add none.
        let before = threads_named("talaria-worker");
        std::thread::scope(|scope| {
            for t in 0..8 {
                let client = &client;
                scope.spawn(move || {
                    for i in 0..50 {
                        let text = format!("{t}-{i}");
                        let result = client.call_tool("echo", json!({ "text": text })).unwrap();
                        let echoed: String = result.content.iter().filter_map(|c| c.as_text()).collect();
                        assert!(echoed.contains(&text), "{mode:?}: {echoed:?}");
                    }
                });
            }
        });
        // At most as many: an earlier client's idle workers may be ending meanwhile.
        let after = threads_named("talaria-worker");
        assert!(after <= before, "{mode:?}: 400 calls on 8 threads started workers ({before} before, {after} after)");
        client.close();
    }
}

#[test]
fn a_call_that_times_out_returns_at_its_timeout_while_the_server_still_works() {
    let _serial = SERIAL.lock().unwrap_or_else(PoisonError::into_inner);
    let server = everything_server();
    for mode in [ClientMode::Legacy, ClientMode::Stateless] {
        let client = Client::http(&server.url, &[], options(mode)).unwrap();
        let options = CallOptions::default().with_timeout(Duration::from_millis(300));
        let began = Instant::now();
        // Five seconds of work: the reply is far off when the call gives up.
        let outcome = client.call_tool_with("slow", json!({"steps": 1000, "step_ms": 5}), options);
        let took = began.elapsed();
        assert!(matches!(outcome, Err(ClientError::Call(ref e)) if e.to_string().contains("timed out")), "{outcome:?}");
        assert!(took < Duration::from_secs(2), "{mode:?}: the call returned after {took:?}, not at its timeout");
        // The client goes on: the connection it gave up was its own.
        let result = client.call_tool("echo", json!({"text": "after"})).unwrap();
        assert!(result.content.iter().filter_map(|c| c.as_text()).any(|t| t.contains("after")));
        client.close();
    }
}

#[test]
fn closing_the_client_releases_a_thread_waiting_in_its_call() {
    let _serial = SERIAL.lock().unwrap_or_else(PoisonError::into_inner);
    let server = everything_server();
    for mode in [ClientMode::Legacy, ClientMode::Stateless] {
        let client = Client::http(&server.url, &[], options(mode)).unwrap();
        let started = slow_started(&client);
        std::thread::scope(|scope| {
            let waiting = scope.spawn(|| {
                let began = Instant::now();
                // No timeout of its own: only the close ends it before the work does (5 s).
                let outcome = client.call_tool("slow", json!({"steps": 1000, "step_ms": 5}));
                (outcome, began.elapsed())
            });
            // Closed once the server works on the call (its reader is in the reply by then).
            let deadline = Instant::now() + Duration::from_secs(5);
            while slow_started(&client) == started && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(5));
            }
            client.close();
            let (outcome, took) = waiting.join().unwrap();
            assert!(outcome.is_err(), "{mode:?}: {outcome:?}");
            assert!(took < Duration::from_secs(2), "{mode:?}: the call returned {took:?} after it began");
        });
    }
}

/// A legacy server that never answers a call, nor ends its reply, nor heeds a cancellation:
/// it opens an SSE reply to each `tools/call` and holds it (telling `calls`). Its URL.
fn silent_server(calls: Sender<()>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { return };
            let calls = calls.clone();
            std::thread::spawn(move || serve_silently(stream, &calls));
        }
    });
    url
}

fn serve_silently(stream: TcpStream, calls: &Sender<()>) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut writer = stream;
    loop {
        let (mut method, mut length) = (String::new(), 0usize);
        loop {
            let mut line = String::new();
            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                return;
            }
            if method.is_empty() {
                method = line.split(' ').next().unwrap_or_default().to_owned();
            }
            if let Some((name, value)) = line.split_once(':') {
                if name.eq_ignore_ascii_case("content-length") {
                    length = value.trim().parse().unwrap();
                }
            }
            if line == "\r\n" {
                break;
            }
        }
        let mut body = vec![0; length];
        reader.read_exact(&mut body).unwrap();
        let message: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
        let reply = match (method.as_str(), message["method"].as_str()) {
            ("POST", Some("initialize")) => {
                let result = json!({"jsonrpc": "2.0", "id": message["id"], "result": {
                    "protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                    "serverInfo": {"name": "silent", "version": "1"}}});
                let result = result.to_string();
                format!("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nMcp-Session-Id: s1\r\nContent-Length: {}\r\n\r\n{result}", result.len())
            }
            ("POST", Some("tools/call")) => {
                writer.write_all(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n").unwrap();
                let _ = calls.send(());
                // Held: read until the client closes the connection.
                let _ = reader.read_to_end(&mut Vec::new());
                return;
            }
            ("POST", _) => "HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n".to_owned(),
            _ => "HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n".to_owned(),
        };
        writer.write_all(reply.as_bytes()).unwrap();
    }
}

fn silent_client(url: &str) -> Client {
    let options = options(ClientMode::Legacy).versions(vec![ProtocolVersion::V2025_06_18]);
    Client::http(url, &[], options).unwrap()
}

#[test]
fn a_call_to_a_server_that_never_answers_returns_at_its_timeout() {
    let _serial = SERIAL.lock().unwrap_or_else(PoisonError::into_inner);
    let (calls, called) = channel();
    let client = silent_client(&silent_server(calls));
    let began = Instant::now();
    let outcome =
        client.call_tool_with("anything", json!({}), CallOptions::default().with_timeout(Duration::from_millis(300)));
    let took = began.elapsed();
    assert!(matches!(outcome, Err(ClientError::Call(ref e)) if e.to_string().contains("timed out")), "{outcome:?}");
    assert!(called.try_recv().is_ok(), "the server held the call");
    assert!(took < Duration::from_secs(2), "the call returned after {took:?}, not at its timeout");
    client.close();
}

#[test]
fn closing_the_client_releases_a_call_to_a_server_that_never_answers() {
    let _serial = SERIAL.lock().unwrap_or_else(PoisonError::into_inner);
    let (calls, called) = channel();
    let client = silent_client(&silent_server(calls));
    std::thread::scope(|scope| {
        let waiting = scope.spawn(|| client.call_tool("anything", json!({})));
        called.recv_timeout(Duration::from_secs(10)).expect("the call reached the server");
        let closed = Instant::now();
        client.close();
        let outcome = waiting.join().unwrap();
        assert!(outcome.is_err(), "{outcome:?}");
        assert!(closed.elapsed() < Duration::from_secs(2), "the call returned {:?} after the close", closed.elapsed());
    });
}

#[test]
fn past_64_calling_threads_the_rest_of_the_calls_go_to_workers_and_all_are_answered() {
    let _serial = SERIAL.lock().unwrap_or_else(PoisonError::into_inner);
    let server = everything_server();
    let client = Client::http(&server.url, &[], options(ClientMode::Legacy)).unwrap();
    let before = threads_named("talaria-worker");
    let most_workers = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|scope| {
        let calls: Vec<_> = (0..100)
            .map(|_| {
                // Each call lasts 300 ms: all 100 are in flight at once.
                scope.spawn(|| client.call_tool("slow", json!({"steps": 3, "step_ms": 100})))
            })
            .collect();
        let deadline = Instant::now() + Duration::from_millis(250);
        while Instant::now() < deadline {
            most_workers.fetch_max(threads_named("talaria-worker"), std::sync::atomic::Ordering::Relaxed);
            std::thread::sleep(Duration::from_millis(20));
        }
        for call in calls {
            let result = call.join().unwrap().unwrap();
            assert_ne!(result.is_error, Some(true), "{result:?}");
        }
    });
    let most = most_workers.into_inner();
    assert!(most > before, "the calls past 64 went to workers ({before} before, at most {most} during)");
    assert!(most <= before + 64, "the pool stays within its cap ({most})");
    client.close();
}
