//! End to end over Streamable HTTP on 127.0.0.1: our client <-> our server, both eras, JSON and
//! SSE replies, and the transport's refusals.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod cancel;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use serde_json::json;
use talaria::client::{Client, ClientError, ClientOptions};
use talaria::core::client::CallOptions;
use talaria::core::http::exchange::EndpointConfig;
use talaria::core::http::exchange::Refusal;
use talaria::core::http::reply::ReplyMode;
use talaria::core::schema::tools::CallToolResult;
use talaria::core::server::Headers;
use talaria::core::session::ClientMode;
use talaria::core::version::ProtocolVersion;
use talaria::http::{HttpServer, HttpServerOptions};

fn text_of(result: &CallToolResult) -> String {
    result.content.iter().filter_map(|c| c.as_text()).collect::<Vec<_>>().join("")
}

fn serve(options: HttpServerOptions) -> (HttpServer, String) {
    let server = talaria_examples::everything::server();
    let listening = HttpServer::bind(&server, "127.0.0.1:0", options).unwrap();
    let url = format!("http://{}/mcp", listening.local_addr());
    (listening, url)
}

fn legacy(version: ProtocolVersion) -> ClientOptions {
    ClientOptions::new("http-e2e", "1").mode(ClientMode::Legacy).versions(vec![version])
}

#[test]
fn legacy_sessions_in_json_and_sse_modes() {
    for mode in [ReplyMode::Json, ReplyMode::Sse] {
        for version in [ProtocolVersion::V2025_03_26, ProtocolVersion::V2025_06_18, ProtocolVersion::V2025_11_25] {
            let (listening, url) = serve(HttpServerOptions::default().reply_mode(mode));
            let client = Client::http(&url, &[], legacy(version)).unwrap();
            assert_eq!(client.session_id().map(|id| id.len()), Some(32), "a minted 128-bit session id");
            assert_eq!(client.protocol_version(), version);
            assert_eq!(listening.sessions(), 1);
            client.ping().unwrap();
            assert_eq!(text_of(&client.call_tool("echo", json!({"text": "over http"})).unwrap()), "over http");
            assert_eq!(client.list_all_tools().unwrap().len(), 12);
            let reports = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
            let seen = std::sync::Arc::clone(&reports);
            let options = CallOptions::default().with_progress(move |p| seen.lock().unwrap().push(p.progress));
            let slow = client.call_tool_with("slow", json!({"steps": 3, "step_ms": 1}), options).unwrap();
            assert_eq!(text_of(&slow), "done after 3 steps");
            assert_eq!(
                *reports.lock().unwrap(),
                vec![1.0, 2.0, 3.0],
                "{mode:?} {version}: progress on the POST's stream"
            );
            assert_eq!(text_of(&client.call_tool("calls", json!({})).unwrap()), "1", "per-session state");
            client.close();
            let deadline = Instant::now() + Duration::from_secs(2);
            while listening.sessions() > 0 && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(5));
            }
            assert_eq!(listening.sessions(), 0, "DELETE ended the session");
            listening.shutdown();
        }
    }
}

#[test]
fn the_stateless_era_posts_every_message_on_its_own() {
    let (listening, url) = serve(HttpServerOptions::default());
    let client = Client::http(&url, &[], ClientOptions::new("stateless", "1").mode(ClientMode::Stateless)).unwrap();
    assert_eq!(client.session_id(), None, "no sessions in the stateless era");
    assert_eq!(client.protocol_version(), ProtocolVersion::V2026_07_28);
    assert_eq!(text_of(&client.call_tool("echo", json!({"text": "no session"})).unwrap()), "no session");
    let note = client.read_resource("notes://9").unwrap();
    assert!(serde_json::to_string(&note).unwrap().contains("note 9"));
    assert_eq!(listening.sessions(), 0, "no sessions in the stateless era");
}

#[test]
fn an_auto_client_finds_the_era_the_server_speaks() {
    let (_listening, url) = serve(HttpServerOptions::default());
    let client = Client::http(&url, &[], ClientOptions::new("auto", "1")).unwrap();
    assert_eq!(client.protocol_version(), ProtocolVersion::V2026_07_28);
    let mut legacy_only = EndpointConfig::default();
    legacy_only.stateless = false;
    let (_old, url) = serve(HttpServerOptions::default().endpoint(legacy_only));
    let client = Client::http(&url, &[], ClientOptions::new("auto", "1")).unwrap();
    assert!(client.protocol_version() < ProtocolVersion::V2026_07_28, "{}", client.protocol_version());
    assert_eq!(text_of(&client.call_tool("echo", json!({"text": "fell back"})).unwrap()), "fell back");
}

#[test]
fn many_sessions_in_parallel_each_get_every_answer_once() {
    let (listening, url) = serve(HttpServerOptions::default());
    let workers: Vec<_> = (0..200)
        .map(|c| {
            let url = url.clone();
            std::thread::spawn(move || {
                let client = Client::http(&url, &[], legacy(ProtocolVersion::V2025_06_18)).unwrap();
                for i in 0..100 {
                    let text = format!("{c}:{i}");
                    assert_eq!(text_of(&client.call_tool("echo", json!({"text": text})).unwrap()), text);
                }
                text_of(&client.call_tool("calls", json!({})).unwrap())
            })
        })
        .collect();
    for worker in workers {
        assert_eq!(worker.join().unwrap(), "100");
    }
    let deadline = Instant::now() + Duration::from_secs(2);
    while listening.sessions() > 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(listening.sessions(), 0);
}

#[test]
fn an_expired_session_fails_the_call_in_flight_and_the_client_starts_a_new_one() {
    let mut endpoint = EndpointConfig::default();
    endpoint.idle_timeout = Duration::from_millis(150);
    let (listening, url) = serve(HttpServerOptions::default().endpoint(endpoint));
    let client = Client::http(&url, &[], legacy(ProtocolVersion::V2025_06_18)).unwrap();
    client.ping().unwrap();
    std::thread::sleep(Duration::from_millis(400));
    assert_eq!(listening.sessions(), 0, "expired");
    let start = Instant::now();
    let outcome = client.ping();
    assert!(matches!(outcome, Err(ClientError::Call(_))), "the call on the lost session is reported: {outcome:?}");
    assert!(start.elapsed() < Duration::from_secs(2), "no hang");
    // The client initialized a new session on the 404; the next call goes through.
    client.ping().unwrap();
    assert_eq!(text_of(&client.call_tool("echo", json!({"text": "again"})).unwrap()), "again");
    assert_eq!(listening.sessions(), 1, "a fresh session");
}

fn raw(addr: &str, request: &str) -> String {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    stream.write_all(request.as_bytes()).unwrap();
    let mut out = String::new();
    let _ = stream.read_to_string(&mut out);
    out
}

/// A POST whose body stops halfway, the client then hanging up its sending side.
fn truncated(addr: &str, headers: &str, body: &str) -> String {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let half = &body[..body.len() / 2];
    write!(
        stream,
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n{headers}Content-Length: {}\r\n\r\n{half}",
        body.len()
    )
    .unwrap();
    stream.shutdown(std::net::Shutdown::Write).unwrap();
    let mut out = String::new();
    let _ = stream.read_to_string(&mut out);
    out
}

/// A POST with `headers`, plus the `Content-Type` and `Accept` every MCP client sends unless
/// `headers` has its own.
fn post(addr: &str, headers: &str, body: &str) -> String {
    let mut headers = headers.to_owned();
    for (name, value) in [("Content-Type", "application/json"), ("Accept", "application/json, text/event-stream")] {
        if !headers.to_ascii_lowercase().contains(&format!("{}:", name.to_ascii_lowercase())) {
            headers.push_str(&format!("{name}: {value}\r\n"));
        }
    }
    raw(
        addr,
        &format!(
            "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Length: {}\r\n{headers}\r\n{body}",
            body.len()
        ),
    )
}

/// An authorization hook letting `Bearer let-me-in` in (as `tester`) and refusing anything
/// else with `www_authenticate`.
fn bearer_hook(
    www_authenticate: &'static str,
) -> impl Fn(&Headers) -> Result<Option<String>, Refusal> + Send + Sync + 'static {
    move |headers| match headers.get("authorization") {
        Some("Bearer let-me-in") => Ok(Some("tester".to_owned())),
        _ => Err(Refusal::unauthorized(www_authenticate)),
    }
}

#[test]
fn malformed_exchanges_get_their_documented_status() {
    let hook = bearer_hook("Bearer realm=\"mcp\"");
    let mut endpoint = EndpointConfig::default();
    endpoint.max_body = 1024;
    let (listening, _) = serve(HttpServerOptions::default().endpoint(endpoint).authorize(hook));
    let addr = listening.local_addr().to_string();
    let auth = "Authorization: Bearer let-me-in\r\n";
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;
    let list = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;
    // A body cut short by a client that hangs up: the exchange is dropped (no status can reach
    // a client that is gone, or a 400 if it still listens); the server serves on.
    let cut = truncated(&addr, auth, init);
    assert!(cut.is_empty() || cut.starts_with("HTTP/1.1 400"), "{cut}");
    let cases = [
        ("no credentials", post(&addr, "", init), "401", Some("WWW-Authenticate: Bearer realm=\"mcp\"")),
        ("initialize", post(&addr, auth, init), "200", Some("Mcp-Session-Id: ")),
        ("no session id", post(&addr, auth, list), "400", None),
        (
            "unknown session",
            post(&addr, &format!("{auth}Mcp-Session-Id: 0123456789abcdef0123456789abcdef\r\n"), list),
            "404",
            None,
        ),
        ("foreign origin", post(&addr, &format!("{auth}Origin: https://evil.example\r\n"), init), "403", None),
        (
            "rebinding host",
            raw(
                &addr,
                &format!(
                    "POST /mcp HTTP/1.1\r\nHost: attacker.example:80\r\nConnection: close\r\n{auth}Content-Length: {}\r\n\r\n{init}",
                    init.len()
                ),
            ),
            "403",
            Some("attacker.example"),
        ),
        (
            "a batch outside 2025-03-26",
            post(&addr, &format!("{auth}MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: ping\r\n"), &format!("[{list}]")),
            "400",
            None,
        ),
        (
            "a repeated session id",
            post(
                &addr,
                &format!(
                    "{auth}Mcp-Session-Id: 0123456789abcdef0123456789abcdef\r\nMcp-Session-Id: fedcba9876543210fedcba9876543210\r\n"
                ),
                list,
            ),
            "400",
            Some("repeated"),
        ),
        ("too big", post(&addr, auth, &" ".repeat(2000)), "413", None),
        ("not json", post(&addr, &format!("{auth}Content-Type: text/plain\r\n"), init), "415", None),
        (
            "accepts no event stream",
            post(&addr, &format!("{auth}Accept: application/json\r\n"), init),
            "406",
            Some("Not Acceptable"),
        ),
        (
            "a GET that accepts no event stream",
            raw(
                &addr,
                &format!("GET /mcp HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n{auth}Mcp-Session-Id: 0123456789abcdef0123456789abcdef\r\n\r\n"),
            ),
            "406",
            None,
        ),
        ("bad json", post(&addr, auth, "{nope"), "400", Some("-32700")),
        ("wrong path", raw(&addr, &format!("GET /elsewhere HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n{auth}\r\n")), "404", None),
        (
            "stateless GET",
            raw(&addr, &format!("GET /mcp HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nMCP-Protocol-Version: 2026-07-28\r\n{auth}\r\n")),
            "405",
            None,
        ),
    ];
    for (what, response, status, needle) in cases {
        let status_line = response.lines().next().unwrap_or_default();
        assert!(status_line.contains(status), "{what}: {status_line}\n{response}");
        if let Some(needle) = needle {
            // Header names are case-insensitive (hyper writes them in lower case).
            assert!(response.to_ascii_lowercase().contains(&needle.to_ascii_lowercase()), "{what}: {response}");
        }
    }
}

/// Reads from `stream` until `count` SSE event ids have arrived (or 5 s pass); returns them
/// and everything read.
fn read_ids(stream: &mut TcpStream, count: usize) -> (Vec<String>, String) {
    let mut text = String::new();
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut buf = [0u8; 4096];
    stream.set_read_timeout(Some(Duration::from_millis(100))).unwrap();
    loop {
        let ids: Vec<String> =
            text.lines().filter_map(|l| l.strip_prefix("id: ")).map(|id| id.trim().to_owned()).collect();
        if ids.len() >= count || Instant::now() > deadline {
            return (ids, text);
        }
        if let Ok(n) = stream.read(&mut buf) {
            if n == 0 {
                return (ids, text);
            }
            text.push_str(&String::from_utf8_lossy(&buf[..n]));
        }
    }
}

#[test]
fn a_dropped_get_stream_resumes_after_its_last_event_exactly_once() {
    let server = talaria_examples::everything::server();
    let listening = HttpServer::bind(&server, "127.0.0.1:0", HttpServerOptions::default()).unwrap();
    let addr = listening.local_addr().to_string();
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;
    let response = post(&addr, "", init);
    let session = session_of(&response);
    let headers = format!("Mcp-Session-Id: {session}\r\nMCP-Protocol-Version: 2025-06-18\r\n");
    assert!(post(&addr, &headers, r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).contains("202"));
    let open = |last: Option<&str>| {
        let mut stream = TcpStream::connect(&addr).unwrap();
        let last = last.map(|id| format!("Last-Event-ID: {id}\r\n")).unwrap_or_default();
        write!(stream, "GET /mcp HTTP/1.1\r\nHost: {addr}\r\nAccept: text/event-stream\r\n{headers}{last}\r\n")
            .unwrap();
        stream
    };
    let announce = |name: &str| {
        let tool = talaria::core::schema::tools::Tool::new(name, Default::default());
        server.add_tool(tool, |_ctx, _: serde_json::Value| Ok(CallToolResult::text("late")));
    };
    let mut first = open(None);
    let (_, head) = read_ids(&mut first, 0);
    assert!(head.is_empty() || head.contains("200"), "{head}");
    std::thread::sleep(Duration::from_millis(50));
    announce("one");
    announce("two");
    let (ids, text) = read_ids(&mut first, 2);
    assert_eq!(ids.len(), 2, "{text}");
    assert!(text.contains("notifications/tools/list_changed"));
    drop(first);
    // The client saw only the first event before the connection dropped.
    let mut second = open(Some(&ids[0]));
    let (replayed, text) = read_ids(&mut second, 1);
    assert_eq!(replayed, vec![ids[1].clone()], "exactly the missed event: {text}");
    announce("three");
    let (more, text) = read_ids(&mut second, 1);
    assert_eq!(more.len(), 1, "{text}");
    assert!(!ids.contains(&more[0]), "new events get new ids: {more:?} after {ids:?}");
    assert!(!text.contains(&format!("id: {}", ids[1])), "the replayed event is not sent twice");
    let bad = raw(
        &addr,
        &format!(
            "GET /mcp HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nAccept: text/event-stream\r\n{headers}Last-Event-ID: 99-1\r\n\r\n"
        ),
    );
    assert!(bad.starts_with("HTTP/1.1 400"), "{bad}");
}

#[test]
fn the_legacy_http_sse_transport_carries_a_whole_session() {
    let (listening, _) = serve(HttpServerOptions::default());
    let url = format!("http://{}/sse", listening.local_addr());
    let client = Client::sse(&url, &[], legacy(ProtocolVersion::V2024_11_05)).unwrap();
    assert_eq!(client.protocol_version(), ProtocolVersion::V2024_11_05);
    assert_eq!(listening.sessions(), 1);
    assert_eq!(client.session_id().map(|id| id.len()), Some(32), "the endpoint's sessionId");
    for i in 0..20 {
        let text = format!("legacy {i}");
        assert_eq!(text_of(&client.call_tool("echo", json!({"text": text})).unwrap()), text);
    }
    let reports = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = std::sync::Arc::clone(&reports);
    let options = CallOptions::default().with_progress(move |p| seen.lock().unwrap().push(p.progress));
    let slow = client.call_tool_with("slow", json!({"steps": 2, "step_ms": 1}), options).unwrap();
    assert_eq!(text_of(&slow), "done after 2 steps");
    assert_eq!(*reports.lock().unwrap(), vec![1.0, 2.0], "progress travels on the stream");
    assert_eq!(text_of(&client.call_tool("calls", json!({})).unwrap()), "20");
    drop(client);
}

#[test]
fn the_probe_falls_back_to_the_legacy_transport() {
    let (listening, url) = serve(HttpServerOptions::default());
    // A Streamable HTTP endpoint: the probe stays there.
    let modern = Client::http_or_sse(&url, &[], legacy(ProtocolVersion::V2025_06_18)).unwrap();
    assert_eq!(text_of(&modern.call_tool("echo", json!({"text": "modern"})).unwrap()), "modern");
    assert_eq!(listening.sessions(), 1, "one Streamable HTTP session");
    // The legacy stream's URL refuses a POST with 400 and no modern error: fall back.
    let sse = format!("http://{}/sse", listening.local_addr());
    let old = Client::http_or_sse(&sse, &[], legacy(ProtocolVersion::V2024_11_05)).unwrap();
    assert_eq!(text_of(&old.call_tool("echo", json!({"text": "old"})).unwrap()), "old");
    assert_eq!(listening.sessions(), 2);
}

#[test]
fn legacy_posts_need_a_live_session() {
    let (listening, _) = serve(HttpServerOptions::default());
    let addr = listening.local_addr().to_string();
    let ping = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    let send = |path: &str| {
        raw(
            &addr,
            &format!(
                "POST {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{ping}",
                ping.len()
            ),
        )
    };
    assert!(send("/messages").starts_with("HTTP/1.1 400"), "no session named");
    assert!(send("/messages?sessionId=0123456789abcdef0123456789abcdef").starts_with("HTTP/1.1 404"));
}

#[test]
fn a_stateless_listen_stream_carries_list_changes() {
    use talaria::core::schema::subscriptions::{
        SubscriptionFilter, SubscriptionsListen, SubscriptionsListenRequestParams,
    };
    let server = talaria_examples::everything::server();
    let listening = HttpServer::bind(&server, "127.0.0.1:0", HttpServerOptions::default()).unwrap();
    let url = format!("http://{}/mcp", listening.local_addr());
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    let tx = std::sync::Mutex::new(tx);
    let options = ClientOptions::new("listener", "1")
        .mode(ClientMode::Stateless)
        .on_notification(move |method, _| drop(tx.lock().unwrap().send(method.to_owned())));
    let client = Client::http(&url, &[], options).unwrap().to_async();
    let filter = SubscriptionFilter { tools_list_changed: Some(true), ..Default::default() };
    let listen =
        client.call::<SubscriptionsListen>(&SubscriptionsListenRequestParams::new(filter), CallOptions::default());
    assert_eq!(
        rx.recv_timeout(Duration::from_secs(5)).unwrap(),
        "notifications/subscriptions/acknowledged",
        "the stream opens with the acknowledgement"
    );
    let tool = talaria::core::schema::tools::Tool::new("late", Default::default());
    server.add_tool(tool, |_ctx, _: serde_json::Value| Ok(CallToolResult::text("late")));
    assert_eq!(rx.recv_timeout(Duration::from_secs(5)).unwrap(), "notifications/tools/list_changed");
    drop(listen);
}

#[test]
fn a_2025_11_25_get_stream_starts_with_a_priming_event() {
    let (listening, _) = serve(HttpServerOptions::default());
    let addr = listening.local_addr().to_string();
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;
    let response = post(&addr, "", init);
    let session = session_of(&response);
    let headers = format!("Mcp-Session-Id: {session}\r\nMCP-Protocol-Version: 2025-11-25\r\n");
    assert!(post(&addr, &headers, r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).contains("202"));
    let mut stream = TcpStream::connect(&addr).unwrap();
    write!(stream, "GET /mcp HTTP/1.1\r\nHost: {addr}\r\nAccept: text/event-stream\r\n{headers}\r\n").unwrap();
    let (ids, text) = read_ids(&mut stream, 1);
    assert_eq!(ids.len(), 1, "{text}");
    let after_id = text.split(&format!("id: {}", ids[0])).nth(1).unwrap();
    assert!(after_id.trim_start().starts_with("data:"), "an empty event: {text}");
    assert!(!after_id.contains("jsonrpc"), "no message, just the id: {text}");
}

#[test]
fn a_session_goes_on_in_another_server_sharing_the_store() {
    use talaria::core::http::event_log::MemorySessionStore;
    let store = talaria::http::SharedSessionStore::new(MemorySessionStore::new());
    let (first, _) = serve(HttpServerOptions::default().session_store(store.clone()));
    let (second, _) = serve(HttpServerOptions::default().session_store(store));
    let a = first.local_addr().to_string();
    let b = second.local_addr().to_string();
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"roaming","version":"1"}}}"#;
    let response = post(&a, "", init);
    let session = session_of(&response);
    let headers = format!("Mcp-Session-Id: {session}\r\nMCP-Protocol-Version: 2025-06-18\r\n");
    assert!(post(&a, &headers, r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).contains("202"));
    // The second server never saw this session: it restores it from the store, no new
    // handshake, and answers.
    let call =
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"roamed"}}}"#;
    let answer = post(&b, &headers, call);
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(answer.contains("roamed"), "{answer}");
    assert_eq!(second.sessions(), 1);
    // DELETE on either ends it everywhere the store is consulted.
    let deleted = raw(&b, &format!("DELETE /mcp HTTP/1.1\r\nHost: {b}\r\nConnection: close\r\n{headers}\r\n"));
    assert!(deleted.starts_with("HTTP/1.1 200"), "{deleted}");
    let third_party = post(&b, &headers, call);
    assert!(third_party.starts_with("HTTP/1.1 404"), "{third_party}");
}

/// The session id from a raw response's headers.
fn session_of(response: &str) -> String {
    response
        .lines()
        .find_map(|l| l.strip_prefix("Mcp-Session-Id: ").or_else(|| l.strip_prefix("mcp-session-id: ")))
        .unwrap()
        .trim()
        .to_owned()
}

#[test]
fn a_tool_ends_its_stream_early_and_the_client_resumes_it_with_get() {
    use talaria::core::schema::tools::Tool;
    use talaria::core::server::{Router, ToolError};
    let (closed_tx, closed_rx) = std::sync::mpsc::channel();
    let router = Router::<()>::builder()
        .blocking_tool(Tool::new("poll_me", Default::default()), move |job, _: serde_json::Value| {
            let _ = closed_tx.send(job.close_sse_stream());
            std::thread::sleep(Duration::from_millis(100));
            job.log(talaria::core::schema::LoggingLevel::Info, json!("while away"));
            Ok::<_, ToolError>(CallToolResult::text("polled"))
        })
        .logging()
        .build();
    let server = talaria::server::Server::new("polling", "1", router);
    let options = HttpServerOptions::default().reply_mode(ReplyMode::Json).sse_retry(Duration::from_millis(250));
    let listening = HttpServer::bind(&server, "127.0.0.1:0", options).unwrap();
    let addr = listening.local_addr().to_string();
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;
    let session = session_of(&post(&addr, "", init));
    let headers = format!("Mcp-Session-Id: {session}\r\nMCP-Protocol-Version: 2025-11-25\r\n");
    assert!(post(&addr, &headers, r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).contains("202"));

    // The call's stream: a priming event with the retry delay, then the end of the response.
    let call = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"poll_me","arguments":{}}}"#;
    let first = post(
        &addr,
        &format!("{headers}Accept: application/json, text/event-stream\r\nContent-Type: application/json\r\n"),
        call,
    );
    assert!(closed_rx.recv_timeout(Duration::from_secs(5)).unwrap(), "the stream could be ended");
    assert!(first.contains("text/event-stream"), "{first}");
    assert!(first.contains("retry: 250"), "{first}");
    assert!(!first.contains("polled"), "the result is not on the first stream: {first}");
    let primed = first.lines().find_map(|l| l.strip_prefix("id: ")).unwrap().trim().to_owned();
    assert!(primed.ends_with("-0"), "{primed}");

    // Resuming after the priming event gets what the call sent meanwhile, then the stream ends.
    let resumed = raw(
        &addr,
        &format!("GET /mcp HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nAccept: text/event-stream\r\n{headers}Last-Event-ID: {primed}\r\n\r\n"),
    );
    assert!(resumed.starts_with("HTTP/1.1 200"), "{resumed}");
    let log = resumed.find("while away").unwrap_or_else(|| panic!("the log sent while away: {resumed}"));
    let result = resumed.find("polled").expect("the result");
    assert!(log < result, "in order: {resumed}");
    assert!(resumed.trim_end().ends_with('0'), "the resumed stream ends with the call: {resumed}");

    // The stream is over: resuming it again replays the rest and ends at once.
    let again = raw(
        &addr,
        &format!(
            "GET /mcp HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nAccept: text/event-stream\r\n{headers}Last-Event-ID: {primed}\r\n\r\n"
        ),
    );
    assert_eq!(again.matches("polled").count(), 1, "{again}");
}

#[test]
fn before_2025_11_25_a_tool_cannot_end_its_stream() {
    use talaria::core::schema::tools::Tool;
    use talaria::core::server::{Router, ToolError};
    let router = Router::<()>::builder()
        .blocking_tool(Tool::new("poll_me", Default::default()), |job, _: serde_json::Value| {
            let ended = job.close_sse_stream();
            Ok::<_, ToolError>(CallToolResult::text(format!("ended={ended}")))
        })
        .build();
    let server = talaria::server::Server::new("polling", "1", router);
    let listening = HttpServer::bind(&server, "127.0.0.1:0", HttpServerOptions::default()).unwrap();
    let url = format!("http://{}/mcp", listening.local_addr());
    let client = Client::http(&url, &[], legacy(ProtocolVersion::V2025_06_18)).unwrap();
    let result = client.call_tool("poll_me", json!({})).unwrap();
    assert_eq!(text_of(&result), "ended=false");
}

#[test]
fn our_client_resumes_a_stream_the_server_ended_early_after_its_retry_delay() {
    use talaria::core::schema::tools::Tool;
    use talaria::core::server::{Router, ToolError};
    let router = Router::<()>::builder()
        .blocking_tool(Tool::new("poll_me", Default::default()), |job, _: serde_json::Value| {
            assert!(job.close_sse_stream());
            std::thread::sleep(Duration::from_millis(20));
            Ok::<_, ToolError>(CallToolResult::text("polled"))
        })
        .build();
    let server = talaria::server::Server::new("polling", "1", router);
    for mode in [ReplyMode::Json, ReplyMode::Sse] {
        let options = HttpServerOptions::default().reply_mode(mode).sse_retry(Duration::from_millis(300));
        let listening = HttpServer::bind(&server, "127.0.0.1:0", options).unwrap();
        let url = format!("http://{}/mcp", listening.local_addr());
        let client = Client::http(&url, &[], legacy(ProtocolVersion::V2025_11_25)).unwrap();
        let started = Instant::now();
        let result = client.call_tool("poll_me", json!({})).unwrap();
        assert_eq!(text_of(&result), "polled", "{mode:?}");
        assert!(started.elapsed() >= Duration::from_millis(300), "waited for retry: {:?}", started.elapsed());
        client.ping().unwrap();
    }
}

#[test]
fn a_2025_03_26_batch_gets_every_answer_in_json_and_sse_replies() {
    use talaria::core::session::BatchItem;
    let request = |method: &str, params: serde_json::Value| BatchItem::Request {
        method: method.into(),
        params: Some(serde_json::value::to_raw_value(&params).unwrap()),
        options: Default::default(),
    };
    for mode in [ReplyMode::Json, ReplyMode::Sse] {
        let (_listening, url) = serve(HttpServerOptions::default().reply_mode(mode));
        let client = Client::http(&url, &[], legacy(ProtocolVersion::V2025_03_26)).unwrap();
        let items = vec![
            request("tools/call", json!({"name": "echo", "arguments": {"text": "first"}})),
            BatchItem::Notification { method: "notifications/roots/list_changed".into(), params: None },
            request("tools/call", json!({"name": "echo", "arguments": {"text": "second"}})),
            request("no/such/method", json!({})),
        ];
        let answers = client.batch(items).unwrap();
        assert_eq!(answers.len(), 3, "{mode:?}");
        for (answer, text) in answers.iter().zip(["first", "second"]) {
            let result: CallToolResult = serde_json::from_str(answer.as_ref().unwrap().get()).unwrap();
            assert_eq!(text_of(&result), text);
        }
        assert!(answers[2].is_err(), "{mode:?}: {:?}", answers[2]);
        client.ping().unwrap();
    }
    let (_listening, url) = serve(HttpServerOptions::default());
    let client = Client::http(&url, &[], legacy(ProtocolVersion::V2025_06_18)).unwrap();
    assert!(client.batch(vec![request("ping", json!({}))]).is_err(), "no batches after 2025-03-26");
}

#[test]
fn a_stateless_call_whose_stream_the_client_closes_is_cancelled_at_once() {
    let (_listening, url) = serve(HttpServerOptions::default());
    let latencies = cancel::cancel_latencies(&url, 5);
    eprintln!("blocking server: cancel noticed after {latencies:?}");
    assert!(latencies[2] < cancel::CANCEL_NOTICED_WITHIN, "median {:?}", latencies[2]);
    // The client goes on, on a fresh connection.
    let client = Client::http(&url, &[], ClientOptions::new("stateless", "1").mode(ClientMode::Stateless)).unwrap();
    assert_eq!(text_of(&client.call_tool("echo", json!({"text": "still here"})).unwrap()), "still here");
}

#[test]
fn a_long_running_tool_asks_a_stateless_client_in_rounds() {
    use talaria::core::client::Handlers;
    use talaria::core::schema::sampling::CreateMessageResult;

    let (_listening, url) = serve(HttpServerOptions::default());
    let handlers = Handlers::default().with_sampling(|params| {
        let asked = serde_json::to_value(&params.messages).unwrap();
        let text = format!("echo of {}", asked[0]["content"]["text"].as_str().unwrap_or_default());
        Ok(serde_json::from_value::<CreateMessageResult>(json!({
            "role": "assistant", "content": {"type": "text", "text": text}, "model": "test"
        }))
        .unwrap())
    });
    let options = ClientOptions::new("stateless", "1").mode(ClientMode::Stateless).handlers(handlers);
    let client = Client::http(&url, &[], options).unwrap();
    let answer = client.call_tool("sample", json!({"question": "why"})).unwrap();
    assert!(text_of(&answer).contains("echo of why"), "{}", text_of(&answer));
}

#[test]
fn a_refused_handshake_reports_its_status_and_www_authenticate() {
    let hook = bearer_hook("Bearer resource_metadata=\"http://x/.well-known\"");
    let (_listening, url) = serve(HttpServerOptions::default().authorize(hook));
    for mode in [ClientMode::Auto, ClientMode::Legacy, ClientMode::Stateless] {
        let refused = Client::http(&url, &[], ClientOptions::new("no-credentials", "1").mode(mode)).unwrap_err();
        match refused {
            ClientError::HttpStatus { status, www_authenticate, url: refused_url, .. } => {
                assert_eq!(status, 401, "{mode:?}");
                assert_eq!(www_authenticate.as_deref(), Some("Bearer resource_metadata=\"http://x/.well-known\""));
                assert_eq!(refused_url, url);
            }
            other => panic!("{mode:?}: {other:?}"),
        }
    }
    let client = Client::http(&url, &[("Authorization", "Bearer let-me-in")], ClientOptions::new("ok", "1")).unwrap();
    assert_eq!(client.list_all_tools().unwrap().len(), 12);
    let sse = url.replace("/mcp", "/sse");
    let refused = Client::sse(&sse, &[], ClientOptions::new("no-credentials", "1")).unwrap_err();
    assert!(matches!(refused, ClientError::HttpStatus { status: 401, www_authenticate: Some(_), .. }), "{refused:?}");
}

#[test]
fn a_trace_sees_frames_heads_and_sse_fields() {
    use std::sync::{Arc, Mutex};
    use talaria::client::TraceEvent;

    let (_listening, url) = serve(HttpServerOptions::default().reply_mode(ReplyMode::Sse));
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&seen);
    let options = legacy(ProtocolVersion::V2025_11_25).trace(move |event| {
        let line = match event {
            TraceEvent::Sent(frame) => format!("sent {}", String::from_utf8_lossy(frame)),
            TraceEvent::Received(frame) => format!("received {}", String::from_utf8_lossy(frame)),
            TraceEvent::HttpRequest { method, headers, .. } => {
                format!("{method} {}", headers.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(" "))
            }
            TraceEvent::HttpResponse { status, .. } => format!("status {status}"),
            TraceEvent::SseEvent { id, .. } => format!("sse id {}", id.unwrap_or("-")),
            _ => "other".into(),
        };
        log.lock().unwrap().push(line);
    });
    let client = Client::http(&url, &[("Authorization", "Bearer t")], options).unwrap();
    client.ping().unwrap();
    client.close();
    let seen = seen.lock().unwrap().clone();
    let has = |prefix: &str| seen.iter().any(|line| line.starts_with(prefix));
    assert!(has("sent {\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\""), "{seen:#?}");
    assert!(has("received {\"jsonrpc\":\"2.0\",\"id\":0,\"result\""), "{seen:#?}");
    assert!(seen.iter().any(|l| l.starts_with("POST ") && l.contains("authorization=Bearer t")), "{seen:#?}");
    assert!(has("status 200") && has("status 202"), "{seen:#?}");
    assert!(has("sse id "), "2025-11-25 SSE replies carry event ids: {seen:#?}");
    assert!(has("DELETE "), "{seen:#?}");
}

#[test]
fn a_peers_protocol_violations_reach_the_servers_hook() {
    use std::sync::{Arc, Mutex};
    let seen = Arc::new(Mutex::new(Vec::new()));
    let heard = Arc::clone(&seen);
    let server = talaria_examples::everything::server()
        .on_peer_error(move |transport, problem| heard.lock().unwrap().push(format!("{transport}: {problem}")));
    let listening = HttpServer::bind(&server, "127.0.0.1:0", HttpServerOptions::default()).unwrap();
    let addr = listening.local_addr().to_string();
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#;
    let session = session_of(&post(&addr, "", init));
    let headers = format!("Mcp-Session-Id: {session}\r\nMCP-Protocol-Version: 2025-06-18\r\n");
    assert!(post(&addr, &headers, r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).contains("202"));
    // An answer to a request the server never sent.
    let stray = post(&addr, &headers, r#"{"jsonrpc":"2.0","id":"never-asked","result":{}}"#);
    assert!(stray.starts_with("HTTP/1.1 202"), "{stray}");
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert!(seen[0].starts_with("http: ") && seen[0].contains("never-asked"), "{seen:?}");
}
