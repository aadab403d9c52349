//! The HTTP server against hostile and broken peers, over real sockets on 127.0.0.1: each
//! malformed exchange gets its documented status (or its connection closed), slow peers are cut
//! off at the deadline while others are served, one peer cannot fill the session table, and
//! the server stays healthy throughout. A client that stops reading a flood is cut, and
//! resumes the rest from the log, with the log in memory and in Redis.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod raw_http;
#[path = "../../redis-store/tests/common/mod.rs"]
mod redis_common;

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use talaria::client::{Client, ClientOptions};
use talaria::core::http::exchange::EndpointConfig;
use talaria::core::schema::tools::CallToolResult;
use talaria::core::session::ClientMode;
use talaria::core::version::ProtocolVersion;
use talaria::http::{HttpServer, HttpServerOptions};

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;

/// What every MCP POST carries besides its body framing.
const POST_HEAD: &str =
    "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n";

/// [`POST_HEAD`] for a request alone on its connection.
const LONE_POST_HEAD: &str = "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n";

fn serve(options: HttpServerOptions) -> (HttpServer, String) {
    let listening = HttpServer::bind(&talaria_examples::everything::server(), "127.0.0.1:0", options).unwrap();
    let addr = listening.local_addr().to_string();
    (listening, addr)
}

fn text_of(result: &CallToolResult) -> String {
    result.content.iter().filter_map(|c| c.as_text()).collect::<Vec<_>>().join("")
}

/// Sends `request` on a fresh connection and reads until the server closes it (or 5 s pass).
fn raw(addr: &str, request: &[u8]) -> String {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    // The server may answer and close before all of a large request is written.
    let _ = stream.write_all(request);
    let mut out = Vec::new();
    let _ = stream.read_to_end(&mut out);
    String::from_utf8_lossy(&out).into_owned()
}

fn status(response: &str) -> &str {
    response.lines().next().unwrap_or("(nothing)")
}

/// The server answers a well-formed request: it is healthy.
fn healthy(addr: &str) {
    let request = format!("{LONE_POST_HEAD}Content-Length: {}\r\n\r\n{INIT}", INIT.len());
    let response = raw(addr, request.as_bytes());
    assert!(status(&response).starts_with("HTTP/1.1 200"), "the server still serves: {response}");
}

#[test]
fn malformed_exchanges_get_their_documented_status_and_the_server_stays_healthy() {
    let mut endpoint = EndpointConfig::default();
    endpoint.max_body = 1024;
    let options = HttpServerOptions::default().endpoint(endpoint).max_head(8 * 1024, 50);
    let (_listening, addr) = serve(options);
    let chunked = format!("{POST_HEAD}Transfer-Encoding: chunked\r\n");
    let rows: Vec<(&str, Vec<u8>, &[&str])> = vec![
        (
            "a chunk size past 64 bits",
            format!("{chunked}\r\n1\r\n[\r\nfffffffffffffffff\r\n{}", "x".repeat(64)).into_bytes(),
            &["400"],
        ),
        (
            "a chunk size of 2^64 - 1",
            format!("{chunked}\r\n1\r\n[\r\nffffffffffffffff\r\n{}", "x".repeat(2048)).into_bytes(),
            &["400", "413"],
        ),
        (
            "a chunked body past max_body",
            format!("{chunked}\r\n400\r\n{}\r\n400\r\n{}\r\n0\r\n\r\n", "x".repeat(1024), "x".repeat(1024)).into_bytes(),
            &["413"],
        ),
        ("a Content-Length of 2^63", format!("{POST_HEAD}Content-Length: 9223372036854775808\r\n\r\n{{").into_bytes(), &["413"]),
        ("a Content-Length past 64 bits", format!("{POST_HEAD}Content-Length: 99999999999999999999999\r\n\r\n").into_bytes(), &["400"]),
        ("two Content-Lengths that differ", format!("{POST_HEAD}Content-Length: 5\r\nContent-Length: 6\r\n\r\n{{}}").into_bytes(), &["400"]),
        ("a head past max_head", format!("{POST_HEAD}X-Filler: {}\r\n\r\n", "y".repeat(9 * 1024)).into_bytes(), &["431"]),
        (
            "more header fields than max_headers",
            format!("{POST_HEAD}{}\r\n", (0..60).map(|n| format!("X-{n}: v\r\n")).collect::<String>()).into_bytes(),
            &["431"],
        ),
        ("not HTTP", b"NOT HTTP AT ALL\r\n\r\n".to_vec(), &["400"]),
        ("a request line with no version", b"GET /mcp\r\n\r\n".to_vec(), &["400"]),
        ("a header line with no colon", format!("{POST_HEAD}Broken header\r\n\r\n").into_bytes(), &["400"]),
        ("a NUL in a header value", format!("{POST_HEAD}X-Bad: a\0b\r\n\r\n").into_bytes(), &["400"]),
        (
            "a repeated Mcp-Method",
            format!(
                "{LONE_POST_HEAD}MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: ping\r\nMcp-Method: tools/list\r\nContent-Length: 40\r\n\r\n{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}}"
            )
            .into_bytes(),
            &["400"],
        ),
        (
            "no Content-Type",
            format!("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\n\r\n{INIT}", INIT.len()).into_bytes(),
            &["415"],
        ),
        (
            "an Accept without text/event-stream",
            format!("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Type: application/json\r\nAccept: application/json\r\nContent-Length: {}\r\n\r\n{INIT}", INIT.len()).into_bytes(),
            &["406"],
        ),
    ];
    for (what, request, statuses) in &rows {
        let started = Instant::now();
        let response = raw(&addr, request);
        let line = status(&response);
        assert!(statuses.iter().any(|s| line.starts_with(&format!("HTTP/1.1 {s}"))), "{what}: {line}\n{response}");
        assert!(started.elapsed() < Duration::from_secs(3), "{what}: answered at once, not held");
        healthy(&addr);
    }
}

#[test]
fn transfer_encoding_with_content_length_is_read_as_chunked_and_the_connection_closed() {
    let (_listening, addr) = serve(HttpServerOptions::default());
    // The Content-Length claims the chunked framing is the body; a smuggled request follows.
    let body = format!("{:x}\r\n{INIT}\r\n0\r\n\r\n", INIT.len());
    let smuggled = "GET /elsewhere HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
    let request =
        format!("{POST_HEAD}Transfer-Encoding: chunked\r\nContent-Length: {}\r\n\r\n{body}{smuggled}", body.len());
    let response = raw(&addr, request.as_bytes());
    assert!(status(&response).starts_with("HTTP/1.1 200"), "{response}");
    assert_eq!(response.matches("HTTP/1.1 ").count(), 1, "nothing after it is read as a request: {response}");
}

#[test]
fn a_thousand_broken_chunked_requests_leak_no_connection_slot() {
    let (_listening, addr) = serve(HttpServerOptions::default().max_connections(16));
    let broken = format!("{POST_HEAD}Transfer-Encoding: chunked\r\n\r\n1\r\n[\r\nfffffffffffffffff\r\n");
    for n in 0..1000 {
        let response = raw(&addr, broken.as_bytes());
        assert!(status(&response).starts_with("HTTP/1.1 400"), "request {n}: {response}");
    }
    healthy(&addr);
}

#[test]
fn a_trickled_head_is_cut_at_the_deadline_and_a_trickled_body_gets_408() {
    let timeout = Duration::from_millis(400);
    let (_listening, addr) = serve(HttpServerOptions::default().read_timeout(timeout));
    let head = format!("{POST_HEAD}Content-Length: {}\r\n\r\n", INIT.len());
    for (what, prefix, expected) in [("head", "", ""), ("body", head.as_str(), "HTTP/1.1 408")] {
        let mut stream = TcpStream::connect(&addr).unwrap();
        stream.write_all(prefix.as_bytes()).unwrap();
        stream.set_read_timeout(Some(Duration::from_millis(100))).unwrap();
        let started = Instant::now();
        let trickle = if prefix.is_empty() { head.as_bytes() } else { INIT.as_bytes() };
        let mut answer = Vec::new();
        // A byte every 100 ms: each read is well inside the timeout, the whole is not.
        for byte in trickle.iter().cycle() {
            if stream.write_all(&[*byte]).is_err() {
                break;
            }
            let mut buf = [0u8; 256];
            match stream.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => answer.extend_from_slice(&buf[..n]),
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
                Err(_) => break,
            }
            assert!(started.elapsed() < Duration::from_secs(5), "{what}: never cut off");
        }
        let took = started.elapsed();
        assert!(took >= timeout - Duration::from_millis(50), "{what}: cut at the deadline, not before: {took:?}");
        assert!(took < timeout * 4, "{what}: cut at the deadline: {took:?}");
        let answer = String::from_utf8_lossy(&answer);
        assert!(answer.starts_with(expected), "{what}: {answer}");
    }
    healthy(&addr);
}

#[test]
fn five_hundred_slow_connections_are_cut_while_other_clients_are_served() {
    let timeout = Duration::from_secs(1);
    let (_listening, addr) = serve(HttpServerOptions::default().read_timeout(timeout));
    // Each with when it connected: the server's deadline runs from there.
    let mut slow: Vec<Option<(TcpStream, Instant)>> = (0..500)
        .map(|_| {
            let stream = TcpStream::connect(&addr).unwrap();
            stream.set_nonblocking(true).unwrap();
            Some((stream, Instant::now()))
        })
        .collect();
    let url = format!("http://{addr}/mcp");
    let served = std::thread::spawn(move || {
        let options =
            ClientOptions::new("patient", "1").mode(ClientMode::Legacy).versions(vec![ProtocolVersion::V2025_06_18]);
        let client = Client::http(&url, &[], options).unwrap();
        for n in 0..20 {
            let text = format!("call {n}");
            assert_eq!(text_of(&client.call_tool("echo", json!({"text": text})).unwrap()), text);
        }
    });
    let started = Instant::now();
    // A head that never ends, a byte per connection every 50 ms.
    let head = b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ";
    let mut cut = Vec::new();
    let mut sent = 0;
    while cut.len() < slow.len() && started.elapsed() < Duration::from_secs(10) {
        for connection in &mut slow {
            let Some((stream, connected)) = connection else { continue };
            let mut buf = [0u8; 64];
            let closed = match stream.read(&mut buf) {
                Ok(n) => {
                    assert_eq!(n, 0, "no answer to a head never sent: {:?}", String::from_utf8_lossy(&buf[..n]));
                    true
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => {
                    stream.write_all(&[head[sent.min(head.len() - 1)]]).is_err()
                }
                Err(_) => true,
            };
            if closed {
                cut.push(connected.elapsed());
                *connection = None;
            }
        }
        sent += 1;
        std::thread::sleep(Duration::from_millis(50));
    }
    served.join().unwrap();
    assert_eq!(cut.len(), 500, "every slow connection is cut");
    cut.sort();
    assert!(cut[0] >= timeout - Duration::from_millis(100), "none before the deadline: {:?}", cut[0]);
    assert!(cut[499] < timeout * 4, "all soon after it: {:?}", cut[499]);
    healthy(&addr);
}

#[test]
fn one_peer_opening_sessions_by_the_thousand_pushes_out_only_its_unused_ones() {
    let mut endpoint = EndpointConfig::default();
    endpoint.max_sessions = 300;
    endpoint.max_sessions_per_peer = 200;
    let (listening, addr) = serve(HttpServerOptions::default().endpoint(endpoint));
    let url = format!("http://{addr}/mcp");
    let legacy =
        || ClientOptions::new("user", "1").mode(ClientMode::Legacy).versions(vec![ProtocolVersion::V2025_06_18]);
    let before = Client::http(&url, &[], legacy()).unwrap();
    before.ping().unwrap();
    // 2,000 initializes on one keep-alive connection, never used after.
    let mut flood = TcpStream::connect(&addr).unwrap();
    flood.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let request = format!("{POST_HEAD}Content-Length: {}\r\n\r\n{INIT}", INIT.len());
    let mut reader = std::io::BufReader::new(flood.try_clone().unwrap());
    for n in 0..2000 {
        flood.write_all(request.as_bytes()).unwrap();
        let (line, body) = raw_http::read_response(&mut reader);
        assert!(line.starts_with("HTTP/1.1 200"), "initialize {n}: {line} {body}");
    }
    assert!(listening.sessions() <= 200, "one peer holds at most its share: {}", listening.sessions());
    // The session in use before the flood goes on; a newcomer gets a session too.
    assert_eq!(text_of(&before.call_tool("echo", json!({"text": "still here"})).unwrap()), "still here");
    let after = Client::http(&url, &[], legacy()).unwrap();
    assert_eq!(text_of(&after.call_tool("echo", json!({"text": "welcome"})).unwrap()), "welcome");
}

#[test]
fn a_server_that_goes_away_fails_calls_with_a_transport_error_in_both_clients() {
    use talaria::client::ClientError;
    use talaria::core::session::{CallError, LocalError};
    let is_transport = |outcome: &Result<CallToolResult, ClientError>| {
        matches!(outcome, Err(ClientError::Call(CallError::Local(LocalError::Transport(_)))))
    };
    let stateless = || ClientOptions::new("left", "1").mode(ClientMode::Stateless);
    let (listening, addr) = serve(HttpServerOptions::default());
    let url = format!("http://{addr}/mcp");
    let blocking = Client::http(&url, &[], stateless()).unwrap();
    let smol_client = smol::block_on(talaria::smol::http(&url, &[], stateless())).unwrap();
    assert_eq!(text_of(&blocking.call_tool("echo", json!({"text": "here"})).unwrap()), "here");
    listening.shutdown();
    let outcome = blocking.call_tool("echo", json!({"text": "gone"}));
    assert!(is_transport(&outcome), "the blocking client: {outcome:?}");
    let outcome = smol::block_on(smol_client.call_tool("echo", json!({"text": "gone"})));
    assert!(is_transport(&outcome), "the smol client: {outcome:?}");
}

/// What a flooding tool and its test tell each other.
#[derive(Default, Clone)]
struct Flags {
    /// The client saw the first notification (set by the test).
    first_seen: Arc<AtomicBool>,
    /// The tool sent everything.
    done: Arc<AtomicBool>,
}

/// A server whose `flood` tool sends `count` progress notifications of `size` bytes (all in one
/// step, before its result), with response streams held to 64 KiB. `flood_off_loop` sends the
/// same from the server's pool, once the client has seen its first notification.
fn flooding_server(count: u32, size: usize, flags: Flags) -> talaria::server::Server<()> {
    use talaria::core::schema::tools::Tool;
    use talaria::core::server::Router;
    let schema = json!({"type": "object"}).as_object().cloned().unwrap_or_default();
    let Flags { first_seen, done } = flags;
    let done_off_loop = Arc::clone(&done);
    let router = Router::<()>::builder()
        .tool(Tool::new("flood", schema.clone()), move |ctx, _: serde_json::Value| {
            for i in 0..count {
                let _ =
                    ctx.progress(f64::from(i + 1), Some(f64::from(count)), Some(format!("{i:04}{}", "x".repeat(size))));
            }
            done.store(true, Ordering::SeqCst);
            Ok(CallToolResult::text("flooded"))
        })
        // The same off the I/O loop, its first notification on its own: the reply is already
        // an SSE stream, written to the client, when the flood comes.
        .blocking_tool(Tool::new("flood_off_loop", schema), move |job, _: serde_json::Value| {
            job.progress(0.0, None, Some("first".into()));
            while !first_seen.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(1));
            }
            for i in 0..count {
                job.progress(f64::from(i + 1), Some(f64::from(count)), Some(format!("{i:04}{}", "x".repeat(size))));
            }
            done_off_loop.store(true, Ordering::SeqCst);
            Ok(CallToolResult::text("flooded"))
        })
        .build();
    talaria::server::Server::new("flood", "1", router).outbox_limit(64 * 1024)
}

#[test]
fn a_stream_past_its_limit_is_cut_and_resumed_from_the_log_with_nothing_lost() {
    let server = flooding_server(200, 2048, Flags::default());
    let listening = HttpServer::bind(&server, "127.0.0.1:0", HttpServerOptions::default()).unwrap();
    let url = format!("http://{}/mcp", listening.local_addr());
    let legacy =
        ClientOptions::new("hostile", "1").mode(ClientMode::Legacy).versions(vec![ProtocolVersion::V2025_06_18]);
    let client = Client::http(&url, &[], legacy).unwrap();
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let progress = Arc::clone(&seen);
    let options = talaria::core::client::CallOptions::default().with_progress(move |p| {
        progress.lock().unwrap().push(p.message.unwrap_or_default()[..4].to_owned());
    });
    // The writer holds at most 64 KiB: the stream is cut after about 30 notifications, and the
    // client resumes it with Last-Event-ID from the server's event log.
    let result = client.call_tool_with("flood", json!({}), options).unwrap();
    assert_eq!(text_of(&result), "flooded");
    let seen = seen.lock().unwrap().clone();
    let expected: Vec<String> = (0..200).map(|i| format!("{i:04}")).collect();
    assert_eq!(seen, expected, "every notification once, in order");
    // And the server serves on.
    assert_eq!(text_of(&client.call_tool("flood", json!({})).unwrap()), "flooded");
}

#[test]
fn a_stateless_stream_past_its_limit_is_cut_and_its_call_fails_rather_than_hang() {
    let server = flooding_server(200, 2048, Flags::default());
    let listening = HttpServer::bind(&server, "127.0.0.1:0", HttpServerOptions::default()).unwrap();
    let url = format!("http://{}/mcp", listening.local_addr());
    let client = Client::http(&url, &[], ClientOptions::new("hostile", "1")).unwrap();
    let started = Instant::now();
    let outcome =
        client.call_tool_with("flood", json!({}), talaria::core::client::CallOptions::default().with_progress(|_| {}));
    assert!(outcome.is_err(), "an unlogged stream cannot be resumed: {outcome:?}");
    assert!(started.elapsed() < Duration::from_secs(10), "it failed at once, not at a timeout");
}

/// The value of the header `name` in a raw response.
fn header<'a>(response: &'a str, name: &str) -> Option<&'a str> {
    response.lines().take_while(|line| !line.is_empty()).find_map(|line| {
        let (field, value) = line.split_once(':')?;
        field.eq_ignore_ascii_case(name).then(|| value.trim())
    })
}

/// Calls `tool` on a new session and stops reading its SSE response once it has seen
/// `seen_first` (if given); then, once the tool has sent everything, reads what the server
/// still sends. The response must have been cut, and the rest (the result last) be in the
/// event log for a GET with `Last-Event-ID`.
fn stop_reading_then_resume(tool: &str, seen_first: Option<&str>) {
    stop_reading_then_resume_with(tool, seen_first, HttpServerOptions::default(), None);
}

/// [`stop_reading_then_resume`] against a server with `options`, with `paused` (the Redis
/// behind them, if given) stopped while the tool floods.
fn stop_reading_then_resume_with(
    tool: &str,
    seen_first: Option<&str>,
    options: HttpServerOptions,
    paused: Option<&redis_common::RedisServer>,
) {
    // 32 MB of notifications: far more than the 64 KiB limit plus what the kernel's socket
    // buffers on both ends can hold.
    let flags = Flags::default();
    let server = flooding_server(8_000, 4_096, flags.clone());
    let listening = HttpServer::bind(&server, "127.0.0.1:0", options).unwrap();
    let addr = listening.local_addr().to_string();
    let init = raw(&addr, format!("{LONE_POST_HEAD}Content-Length: {}\r\n\r\n{INIT}", INIT.len()).as_bytes());
    let session = header(&init, "mcp-session-id").expect("a session id").to_owned();
    let with_session = format!("{LONE_POST_HEAD}Mcp-Session-Id: {session}\r\nMcp-Protocol-Version: 2025-06-18\r\n");
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    let ack =
        raw(&addr, format!("{with_session}Content-Length: {}\r\n\r\n{initialized}", initialized.len()).as_bytes());
    assert!(status(&ack).starts_with("HTTP/1.1 202"), "{ack}");

    let call = format!(
        r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"{tool}","arguments":{{}},"_meta":{{"progressToken":"p"}}}}}}"#
    );
    let mut slow = TcpStream::connect(&addr).unwrap();
    slow.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    slow.write_all(format!("{with_session}Content-Length: {}\r\n\r\n{call}", call.len()).as_bytes()).unwrap();
    let mut got = Vec::new();
    if let Some(first) = seen_first {
        let mut buf = [0; 4096];
        while !String::from_utf8_lossy(&got).contains(first) {
            let n = slow.read(&mut buf).unwrap();
            assert!(n > 0, "the stream ended before {first}");
            got.extend_from_slice(&buf[..n]);
        }
    }
    if let Some(redis) = paused {
        redis.pause();
    }
    flags.first_seen.store(true, Ordering::SeqCst);
    // The client reads nothing more until the tool has sent everything.
    let waiting = Instant::now();
    while !flags.done.load(Ordering::SeqCst) {
        assert!(
            waiting.elapsed() < Duration::from_secs(30),
            "the tool never finished: the server blocked on the reader"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    let read = slow.read_to_end(&mut got);
    assert!(read.is_ok(), "the server ended the response, not the read timeout: {read:?}");
    let got = String::from_utf8_lossy(&got).into_owned();
    assert!(got.len() < 16 << 20, "the stream was cut, not sent whole: {} bytes", got.len());
    assert!(!got.contains("flooded"), "the result is past the cut");
    let last_id = got.lines().filter_map(|line| line.strip_prefix("id: ")).next_back().expect("events with ids");
    if let Some(redis) = paused {
        redis.resume();
    }

    // The rest waits in the event log (its retention keeps the newest), the result last.
    let resume = format!(
        "GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nAccept: text/event-stream\r\nMcp-Session-Id: {session}\r\nMcp-Protocol-Version: 2025-06-18\r\nLast-Event-ID: {last_id}\r\n\r\n"
    );
    let rest = raw(&addr, resume.as_bytes());
    assert!(status(&rest).starts_with("HTTP/1.1 200"), "{}", status(&rest));
    let data: Vec<&str> = rest.lines().filter_map(|line| line.strip_prefix("data: ")).collect();
    assert!(
        data.last().is_some_and(|last| last.contains("flooded") && last.contains(r#""id":2"#)),
        "{:?}",
        data.last()
    );
    healthy(&addr);
}

#[test]
fn a_client_that_stops_reading_before_the_first_event_is_cut_and_can_resume_the_rest() {
    // The inline tool floods before the reply's writer takes its first frame.
    stop_reading_then_resume("flood", None);
}

#[test]
fn a_client_that_stops_reading_mid_stream_is_cut_and_can_resume_the_rest() {
    stop_reading_then_resume("flood_off_loop", Some("first"));
}

fn on_redis(redis: &redis_common::RedisServer) -> HttpServerOptions {
    let async_store = talaria_examples::everything::StoreOn::Async(None);
    talaria_examples::everything::shared_through_redis(HttpServerOptions::default(), &redis.url(), async_store).unwrap()
}

/// The same with sessions and logs in Redis: what the cut stream had not taken, and the rest
/// of the flood, are logged off the server's threads, and the answer is the log's last event.
#[test]
fn with_its_log_in_redis_a_client_that_stops_reading_is_cut_and_can_resume_the_rest() {
    let redis = redis_common::RedisServer::start();
    stop_reading_then_resume_with("flood_off_loop", Some("first"), on_redis(&redis), None);
}

/// And with Redis stopped while the tool floods: the 32 MB wait for it, past the 16 MiB
/// bound, so the oldest are dropped to make room; the answer, the newest, is kept, and is the
/// last event of the log a client resumes once Redis is back.
#[test]
fn with_its_log_in_a_stalled_redis_the_cut_streams_answer_is_kept() {
    let redis = redis_common::RedisServer::start();
    stop_reading_then_resume_with("flood_off_loop", Some("first"), on_redis(&redis), Some(&redis));
}
