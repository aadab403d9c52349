//! Two HTTP servers (two processes' worth) sharing sessions through Redis: a legacy session
//! made on one is served on the other. With the `smol` feature, the servers of each test
//! alternate the async session store and the blocking one (the first async), which keep the
//! same records.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod common;
mod http_common;

use std::sync::Arc;

use common::{unique_prefix, RedisServer};
use http_common::{first_event_id, legacy_client, open_stream, open_stream_within, post, post_streaming, sessions};
use serde_json::{json, Value};
use std::time::{Duration, Instant};
use talaria::client::{Client, ClientOptions};
use talaria::core::http::event_log::{Refresh, SessionRecord, SessionStore, SessionStoreError, StoreIf};
use talaria::core::schema::tools::{CallToolResult, Tool};
use talaria::core::server::Router;
use talaria::core::session::ClientMode;
use talaria::http::{HttpServer, HttpServerOptions, SharedEventStore, SharedSessionStore};
use talaria_redis::RedisOptions;

fn server(redis: &RedisServer, prefix: &str) -> HttpServer {
    let options = HttpServerOptions::default().session_store(sessions(redis, prefix));
    let schema = json!({"type": "object"}).as_object().cloned().unwrap();
    let router = Router::<()>::builder()
        .tool(Tool::new("echo", schema), |_ctx, args: Value| Ok(CallToolResult::text(args.to_string())))
        .build();
    HttpServer::bind(&talaria::server::Server::new("shared", "1", router), "127.0.0.1:0", options).unwrap()
}

#[test]
fn a_session_made_on_one_server_is_served_by_another() {
    let redis = RedisServer::start();
    let prefix = unique_prefix();
    let (first, second) = (server(&redis, &prefix), server(&redis, &prefix));
    let (_client, session) = legacy_client(first.local_addr());
    let call =
        json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "echo", "arguments": {"x": 1}}});
    let (status, body) = post(second.local_addr(), &session, &call);
    assert_eq!(status, 200, "{body}");
    assert!(body.contains(r#"\"x\":1"#) || body.contains(r#"{\"x\":1}"#), "{body}");
}

fn delete(addr: std::net::SocketAddr, session: &str) -> u16 {
    ureq::delete(&format!("http://{addr}/mcp"))
        .header("Mcp-Session-Id", session)
        .header("Mcp-Protocol-Version", "2025-11-25")
        .config()
        .http_status_as_error(false)
        .build()
        .call()
        .unwrap()
        .status()
        .as_u16()
}

#[test]
fn a_delete_on_one_server_ends_the_session_on_every_server() {
    let redis = RedisServer::start();
    let prefix = unique_prefix();
    let (first, second) = (server(&redis, &prefix), server(&redis, &prefix));
    let (_client, session) = legacy_client(first.local_addr());
    let call = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "echo", "arguments": {}}});
    assert_eq!(post(second.local_addr(), &session, &call).0, 200, "both servers hold the session now");
    assert!((200..300).contains(&delete(second.local_addr(), &session)));
    // The first server, which still had it in memory, must not serve it (or write it back).
    let (status, body) = post(first.local_addr(), &session, &call);
    assert_eq!(status, 404, "deleted elsewhere: {body}");
    assert_eq!(post(second.local_addr(), &session, &call).0, 404);
}

#[test]
fn a_redis_outage_is_a_503_within_a_second_and_service_resumes_when_it_is_back() {
    let redis = RedisServer::start();
    let prefix = unique_prefix();
    let (first, second) = (server(&redis, &prefix), server(&redis, &prefix));
    let (_client, session) = legacy_client(first.local_addr());
    let call = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "echo", "arguments": {}}});
    let port = redis.stop();
    let started = Instant::now();
    let (status, body) = post(first.local_addr(), &session, &call);
    assert_eq!(status, 503, "{body}");
    assert!(started.elapsed() < Duration::from_secs(1), "refused within {:?}", started.elapsed());
    // A process that does not hold the session cannot say it is gone: 503, not 404.
    let (status, body) = post(second.local_addr(), &session, &call);
    assert_eq!(status, 503, "{body}");
    // Redis comes back (empty here: no persistence, so the session is gone and a client starts
    // a new one); service resumes at once.
    let _back = RedisServer::start_on(port);
    let resumed = Instant::now();
    let (_again, fresh) = legacy_client(first.local_addr());
    let (status, body) = post(first.local_addr(), &fresh, &call);
    assert_eq!(status, 200, "{body}");
    assert!(resumed.elapsed() < Duration::from_secs(2), "resumed within {:?}", resumed.elapsed());
}

#[test]
fn a_get_stream_opens_on_a_server_that_did_not_make_the_session() {
    let redis = RedisServer::start();
    let prefix = unique_prefix();
    let (first, second) = (server(&redis, &prefix), server(&redis, &prefix));
    let (_client, session) = legacy_client(first.local_addr());
    let response = open_stream(second.local_addr(), &session, None);
    assert_eq!(response.status().as_u16(), 200);
    let kind = response.headers().get("content-type").and_then(|v| v.to_str().ok()).unwrap_or_default().to_owned();
    assert!(kind.starts_with("text/event-stream"), "{kind}");
}

/// A server counting calls per session (its application state, kept in the record through
/// the session-state hook) and offering two subscribable resources; with `relay`, its event
/// logs are in Redis too, and it relays through Redis.
fn counting_server(redis: &RedisServer, prefix: &str, relay: bool) -> (HttpServer, talaria::server::Server<u64>) {
    let options = HttpServerOptions::default().session_store(sessions(redis, prefix));
    serve_counting(if relay { relayed(options, redis, prefix) } else { options })
}

/// `options` with event logs in Redis and a Redis relay, under `prefix`.
fn relayed(options: HttpServerOptions, redis: &RedisServer, prefix: &str) -> HttpServerOptions {
    let relay = talaria_redis::RedisRelay::connect(&redis.url(), RedisOptions::default().prefix(prefix)).unwrap();
    let retention = talaria_core::http::event_log::Retention::default();
    let events =
        talaria_redis::RedisEventStore::connect(&redis.url(), RedisOptions::default().prefix(prefix), retention)
            .unwrap();
    options.relay(Arc::new(relay)).event_store(SharedEventStore::new(events))
}

/// The server of [`counting_server`], with `options`.
fn serve_counting(options: HttpServerOptions) -> (HttpServer, talaria::server::Server<u64>) {
    use talaria::core::schema::resources::Resource;
    use talaria::core::schema::TextResourceContents;
    let schema = json!({"type": "object"}).as_object().cloned().unwrap();
    let router = Router::<u64>::builder()
        .tool(Tool::new("count", schema), |ctx, _: Value| {
            *ctx.state() += 1;
            Ok(CallToolResult::text(ctx.state().to_string()))
        })
        .resource(Resource::new("file:///a.txt", "a"), |_ctx, uri, _| {
            Ok(vec![TextResourceContents::new(uri, "a").into()])
        })
        .resource(Resource::new("file:///b.txt", "b"), |_ctx, uri, _| {
            Ok(vec![TextResourceContents::new(uri, "b").into()])
        })
        .subscriptions(|_ctx, _uri| Ok(()), |_ctx, _uri| Ok(()))
        .build();
    let server = talaria::server::Server::new("counting", "1", router)
        .session_state(|count: &u64| Some(json!(count)), |saved| saved.as_u64());
    (HttpServer::bind(&server, "127.0.0.1:0", options).unwrap(), server)
}

#[test]
fn application_state_and_subscriptions_go_on_in_another_process() {
    let redis = RedisServer::start();
    let prefix = unique_prefix();
    let ((first, _), (second, second_server)) =
        (counting_server(&redis, &prefix, false), counting_server(&redis, &prefix, false));
    let options = ClientOptions::new("c", "1").mode(ClientMode::Legacy);
    let client = Client::http(&format!("http://{}/mcp", first.local_addr()), &[], options).unwrap();
    assert_eq!(client.call_tool("count", json!({})).unwrap().content[0].as_text(), Some("1"));
    assert_eq!(client.call_tool("count", json!({})).unwrap().content[0].as_text(), Some("2"));
    client.subscribe("file:///a.txt").unwrap();
    let session = client.session_id().unwrap();
    // The other process goes on from the record: the count, restored through the hook.
    let call = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "count", "arguments": {}}});
    let (status, body) = post(second.local_addr(), &session, &call);
    assert_eq!(status, 200, "{body}");
    assert!(body.contains(r#""text":"3""#), "the count went on: {body}");
    // Back on the first process, whose copy is now stale: it goes on from the newer record.
    assert_eq!(client.call_tool("count", json!({})).unwrap().content[0].as_text(), Some("4"));
    // ... and the subscription: an update there reaches the client's stream there.
    let stream = open_stream(second.local_addr(), &session, None);
    assert_eq!(stream.status().as_u16(), 200);
    let notifier = std::thread::spawn(move || {
        for _ in 0..20 {
            second_server.resource_updated("file:///a.txt");
            std::thread::sleep(Duration::from_millis(50));
        }
    });
    let mut reader = std::io::BufReader::new(stream.into_body().into_reader());
    let mut line = String::new();
    let mut heard = false;
    while std::io::BufRead::read_line(&mut reader, &mut line).unwrap_or(0) > 0 {
        if line.contains("notifications/resources/updated") && line.contains("file:///a.txt") {
            heard = true;
            break;
        }
        line.clear();
    }
    notifier.join().unwrap();
    assert!(heard, "the restored session kept its subscription");
}

#[test]
fn a_response_stream_resumes_with_last_event_id_on_another_process() {
    use std::io::BufRead as _;
    use talaria::core::http::reply::ReplyMode;
    use talaria_core::http::event_log::Retention;
    let redis = RedisServer::start();
    let prefix = unique_prefix();
    let serve = || {
        let shared_sessions = sessions(&redis, &prefix);
        let events = talaria_redis::RedisEventStore::connect(
            &redis.url(),
            RedisOptions::default().prefix(&prefix),
            Retention::default(),
        )
        .unwrap();
        let options = HttpServerOptions::default()
            .reply_mode(ReplyMode::Sse)
            .session_store(shared_sessions)
            .event_store(SharedEventStore::new(events));
        let schema = json!({"type": "object"}).as_object().cloned().unwrap();
        let router = Router::<()>::builder()
            .blocking_tool(Tool::new("steps", schema), |job, _: Value| {
                for step in 1..=3 {
                    job.progress(f64::from(step), Some(3.0), None);
                    std::thread::sleep(Duration::from_millis(30));
                }
                Ok(CallToolResult::text("all steps done"))
            })
            .build();
        HttpServer::bind(&talaria::server::Server::new("resumable", "1", router), "127.0.0.1:0", options).unwrap()
    };
    let (first, second) = (serve(), serve());
    let (_client, session) = legacy_client(first.local_addr());
    // The call's response stream on the first process: read its first event, then leave.
    let call = json!({"jsonrpc": "2.0", "id": 42, "method": "tools/call",
        "params": {"name": "steps", "arguments": {}, "_meta": {"progressToken": "p"}}});
    let response = ureq::post(&format!("http://{}/mcp", first.local_addr()))
        .header("Content-Type", "application/json")
        .header("Accept", "application/json, text/event-stream")
        .header("Mcp-Session-Id", &session)
        .header("Mcp-Protocol-Version", "2025-11-25")
        .send(call.to_string())
        .unwrap();
    let mut reader = std::io::BufReader::new(response.into_body().into_reader());
    let mut first_id = None;
    let mut line = String::new();
    while first_id.is_none() && reader.read_line(&mut line).unwrap() > 0 {
        first_id = line.strip_prefix("id:").map(|id| id.trim().to_owned());
        line.clear();
    }
    drop(reader);
    let first_id = first_id.expect("an event id on the stream");
    std::thread::sleep(Duration::from_millis(300)); // the call ends meanwhile
                                                    // Resumed on the other process: the rest of the stream, the answer included, from Redis.
    let resumed = open_stream(second.local_addr(), &session, Some(&first_id));
    assert_eq!(resumed.status().as_u16(), 200);
    let text = resumed.into_body().read_to_string().unwrap_or_default();
    assert!(text.contains(r#""id":42"#) && text.contains("all steps done"), "{text}");
    assert!(!text.contains(&format!("id: {first_id}\n")), "events up to Last-Event-ID are not sent again: {text}");
}

#[test]
fn an_answer_posted_to_another_process_reaches_the_process_that_asked() {
    use std::io::BufRead as _;
    use talaria::core::schema::sampling::{CreateMessage, CreateMessageRequestParams};
    let redis = RedisServer::start();
    let prefix = unique_prefix();
    let serve = || {
        let store = sessions(&redis, &prefix);
        let relay = talaria_redis::RedisRelay::connect(&redis.url(), RedisOptions::default().prefix(&prefix)).unwrap();
        let options = HttpServerOptions::default().session_store(store).relay(Arc::new(relay));
        let schema = json!({"type": "object"}).as_object().cloned().unwrap();
        let router = Router::<()>::builder()
            .blocking_tool(Tool::new("ask", schema), |job, _: Value| {
                let params: CreateMessageRequestParams = serde_json::from_value(json!({
                    "messages": [{"role": "user", "content": {"type": "text", "text": "the answer?"}}], "maxTokens": 5
                }))
                .unwrap();
                let answer = job
                    .ask::<CreateMessage>(&params)
                    .map_err(|e| talaria::core::server::ToolError::execution(e.to_string()))?;
                Ok(CallToolResult::text(format!("the model said {}", serde_json::to_value(&answer.content).unwrap())))
            })
            .build();
        HttpServer::bind(&talaria::server::Server::new("asking", "1", router), "127.0.0.1:0", options).unwrap()
    };
    let (first, second) = (serve(), serve());
    // A client that can sample, on the first process.
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25",
        "capabilities": {"sampling": {}}, "clientInfo": {"name": "c", "version": "1"}}});
    let response = post_streaming(first.local_addr(), None, &init);
    let session = response.headers().get("mcp-session-id").unwrap().to_str().unwrap().to_owned();
    drop(response.into_body().read_to_string());
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(post_streaming(first.local_addr(), Some(&session), &initialized).status().as_u16(), 202);
    // The call runs on the first process; its stream carries the server's question.
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "ask", "arguments": {}}});
    let stream = post_streaming(first.local_addr(), Some(&session), &call);
    let mut events = std::io::BufReader::new(stream.into_body().into_reader());
    let mut line = String::new();
    let question = loop {
        line.clear();
        assert!(events.read_line(&mut line).unwrap() > 0, "the stream ended before the question");
        if let Some(frame) = line.strip_prefix("data:").and_then(|d| serde_json::from_str::<Value>(d.trim()).ok()) {
            if frame["method"] == "sampling/createMessage" {
                break frame;
            }
        }
    };
    // The answer goes to the second process, which relays it to the first.
    let answer = json!({"jsonrpc": "2.0", "id": question["id"],
        "result": {"role": "assistant", "content": {"type": "text", "text": "42"}, "model": "m"}});
    assert_eq!(post_streaming(second.local_addr(), Some(&session), &answer).status().as_u16(), 202);
    let result = loop {
        line.clear();
        assert!(events.read_line(&mut line).unwrap() > 0, "the stream ended before the result");
        if let Some(frame) = line.strip_prefix("data:").and_then(|d| serde_json::from_str::<Value>(d.trim()).ok()) {
            if frame["id"] == 2 {
                break frame;
            }
        }
    };
    let text = result["result"]["content"][0]["text"].as_str().unwrap_or_default().to_owned();
    assert!(text.contains("42"), "{result}");
}

#[test]
fn a_resource_update_seen_by_one_process_reaches_each_subscriber_once_through_the_process_holding_its_stream() {
    use std::io::BufRead as _;
    use std::sync::atomic::{AtomicUsize, Ordering};

    let redis = RedisServer::start();
    let prefix = unique_prefix();
    let ((first, first_server), (second, second_server)) =
        (counting_server(&redis, &prefix, true), counting_server(&redis, &prefix, true));
    // A session made on the first process; its GET stream opens on the second.
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25",
        "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}});
    let response = post_streaming(first.local_addr(), None, &init);
    let session = response.headers().get("mcp-session-id").unwrap().to_str().unwrap().to_owned();
    drop(response.into_body().read_to_string());
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(post(first.local_addr(), &session, &initialized).0, 202);
    let stream = open_stream(second.local_addr(), &session, None);
    assert_eq!(stream.status().as_u16(), 200);
    let heard = Arc::new((AtomicUsize::new(0), AtomicUsize::new(0)));
    let reader = {
        let heard = Arc::clone(&heard);
        std::thread::spawn(move || {
            let mut lines = std::io::BufReader::new(stream.into_body().into_reader());
            let mut line = String::new();
            while lines.read_line(&mut line).unwrap_or(0) > 0 {
                if line.contains("notifications/resources/updated") {
                    let counter = if line.contains("file:///a.txt") { &heard.0 } else { &heard.1 };
                    counter.fetch_add(1, Ordering::SeqCst);
                }
                line.clear();
            }
        })
    };
    // Subscribed on the first process after the stream opened on the second (which learns of
    // it from the store when the update comes).
    let subscribe =
        json!({"jsonrpc": "2.0", "id": 2, "method": "resources/subscribe", "params": {"uri": "file:///a.txt"}});
    assert_eq!(post(first.local_addr(), &session, &subscribe).0, 200);
    // The first process sees both changes; only the subscribed one is told, once, by the
    // process holding the stream.
    first_server.resource_updated("file:///b.txt");
    first_server.resource_updated("file:///a.txt");
    let waited = Instant::now();
    while heard.0.load(Ordering::SeqCst) == 0 && waited.elapsed() < Duration::from_secs(3) {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(heard.0.load(Ordering::SeqCst), 1, "the update reached the stream on the other process");
    // The second process seeing the same change tells the session once more: one per update.
    second_server.resource_updated("file:///a.txt");
    let waited = Instant::now();
    while heard.0.load(Ordering::SeqCst) < 2 && waited.elapsed() < Duration::from_secs(3) {
        std::thread::sleep(Duration::from_millis(10));
    }
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(heard.0.load(Ordering::SeqCst), 2, "each update heard exactly once");
    assert_eq!(heard.1.load(Ordering::SeqCst), 0, "no update of a resource it did not subscribe to");
    drop((first, second));
    reader.join().unwrap();
}

/// Reads `stream` to its end, counting in `heard` the resource updates it carries.
fn count_updates(stream: ureq::http::Response<ureq::Body>, heard: &std::sync::atomic::AtomicUsize) {
    use std::io::BufRead as _;
    let mut lines = std::io::BufReader::new(stream.into_body().into_reader());
    let mut line = String::new();
    while lines.read_line(&mut line).unwrap_or(0) > 0 {
        if line.contains("notifications/resources/updated") {
            heard.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
        line.clear();
    }
}

/// A Redis session store whose refreshes take [`SLOW_REFRESH`] longer once `slow` is set: a
/// store far away, to see whether a process checks its sessions one after another.
struct SlowRefresh {
    inner: talaria_redis::RedisSessionStore,
    slow: Arc<std::sync::atomic::AtomicBool>,
}

const SLOW_REFRESH: Duration = Duration::from_millis(100);

impl SessionStore for SlowRefresh {
    fn load(&mut self, session: &str) -> Result<Option<SessionRecord>, SessionStoreError> {
        self.inner.load(session)
    }
    fn store(&mut self, session: &str, data: Vec<u8>, now: Instant) -> Result<(), SessionStoreError> {
        self.inner.store(session, data, now)
    }
    fn touch(&mut self, session: &str, now: Instant) -> Result<bool, SessionStoreError> {
        self.inner.touch(session, now)
    }
    fn delete(&mut self, session: &str) -> Result<bool, SessionStoreError> {
        self.inner.delete(session)
    }
    fn expired(&mut self, now: Instant, idle: Duration) -> Result<Vec<String>, SessionStoreError> {
        self.inner.expired(now, idle)
    }
    fn refresh(&mut self, session: &str, now: Instant, known: &[u8]) -> Result<Refresh, SessionStoreError> {
        if self.slow.load(std::sync::atomic::Ordering::SeqCst) {
            std::thread::sleep(SLOW_REFRESH);
        }
        self.inner.refresh(session, now, known)
    }
    fn store_if(
        &mut self,
        session: &str,
        data: Vec<u8>,
        expected: &[u8],
        now: Instant,
    ) -> Result<StoreIf, SessionStoreError> {
        self.inner.store_if(session, data, expected, now)
    }
}

#[test]
fn a_resource_update_checks_the_sessions_it_reaches_side_by_side() {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    const SESSIONS: usize = 24;
    let redis = RedisServer::start();
    let prefix = unique_prefix();
    let slow = Arc::new(AtomicBool::new(false));
    let stores = (0..SESSIONS).map(|_| SlowRefresh {
        inner: talaria_redis::RedisSessionStore::connect(&redis.url(), RedisOptions::default().prefix(&prefix))
            .unwrap(),
        slow: Arc::clone(&slow),
    });
    let options = HttpServerOptions::default().session_store(SharedSessionStore::pool(stores));
    let (listening, server) = serve_counting(relayed(options, &redis, &prefix));
    let addr = listening.local_addr();
    let heard = Arc::new(AtomicUsize::new(0));
    let readers: Vec<_> = (0..SESSIONS)
        .map(|_| {
            let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}});
            let response = post_streaming(addr, None, &init);
            let session = response.headers().get("mcp-session-id").unwrap().to_str().unwrap().to_owned();
            drop(response.into_body().read_to_string());
            assert_eq!(post(addr, &session, &json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).0, 202);
            let subscribe =
                json!({"jsonrpc": "2.0", "id": 2, "method": "resources/subscribe", "params": {"uri": "file:///a.txt"}});
            assert_eq!(post(addr, &session, &subscribe).0, 200);
            let stream = open_stream_within(addr, &session, None, 60);
            assert_eq!(stream.status().as_u16(), 200);
            let heard = Arc::clone(&heard);
            std::thread::spawn(move || count_updates(stream, &heard))
        })
        .collect();
    slow.store(true, Ordering::SeqCst);
    let started = Instant::now();
    server.resource_updated("file:///a.txt");
    while heard.load(Ordering::SeqCst) < SESSIONS && started.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(5));
    }
    let took = started.elapsed();
    assert_eq!(heard.load(Ordering::SeqCst), SESSIONS, "every subscriber heard the update");
    // One after another, the checks alone would take SESSIONS x SLOW_REFRESH (2.4 s).
    assert!(took < SLOW_REFRESH * 8, "{SESSIONS} sessions told in {took:?}");
    drop(listening);
    for reader in readers {
        reader.join().unwrap();
    }
}

/// A server of sessions, event logs and relay in Redis (a lease of 600 ms), whose `wait` tool
/// reports progress every 50 ms until `release` is set, then answers `released`.
fn waiting_server(redis: &RedisServer, prefix: &str, release: &Arc<std::sync::atomic::AtomicBool>) -> HttpServer {
    use talaria::core::http::reply::ReplyMode;
    use talaria_core::http::event_log::Retention;
    let options = || RedisOptions::default().prefix(prefix);
    let events = talaria_redis::RedisEventStore::connect(&redis.url(), options(), Retention::default()).unwrap();
    let relay = talaria_redis::RedisRelay::connect(&redis.url(), options()).unwrap();
    let options = HttpServerOptions::default()
        .reply_mode(ReplyMode::Sse)
        .session_store(sessions(redis, prefix))
        .event_store(SharedEventStore::new(events))
        .relay(Arc::new(relay))
        .lease(Duration::from_millis(600));
    let release = Arc::clone(release);
    let schema = json!({"type": "object"}).as_object().cloned().unwrap();
    let router = Router::<()>::builder()
        .blocking_tool(Tool::new("wait", schema), move |job, _: Value| {
            let mut step = 0.0;
            while !release.load(std::sync::atomic::Ordering::SeqCst) {
                step += 1.0;
                job.progress(step, None, None);
                std::thread::sleep(Duration::from_millis(50));
            }
            Ok(CallToolResult::text("released"))
        })
        .build();
    HttpServer::bind(&talaria::server::Server::new("waiting", "1", router), "127.0.0.1:0", options).unwrap()
}

/// Calls `wait` (request id 2) in a new session on `addr`, reads the response stream's first
/// event id and leaves: the session and the id to resume after.
fn call_and_leave(addr: std::net::SocketAddr) -> (String, String) {
    use std::io::BufRead as _;
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25",
        "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}});
    let response = post_streaming(addr, None, &init);
    let session = response.headers().get("mcp-session-id").unwrap().to_str().unwrap().to_owned();
    drop(response.into_body().read_to_string());
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(post(addr, &session, &initialized).0, 202);
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "wait", "arguments": {}, "_meta": {"progressToken": "p"}}});
    let response = post_streaming(addr, Some(&session), &call);
    let mut reader = std::io::BufReader::new(response.into_body().into_reader());
    let mut line = String::new();
    let first_id = loop {
        line.clear();
        assert!(reader.read_line(&mut line).unwrap() > 0, "the stream ended before its first event");
        if let Some(id) = line.strip_prefix("id:") {
            break id.trim().to_owned();
        }
    };
    (session, first_id)
}

#[test]
fn a_stream_resumed_on_another_process_is_followed_there_until_its_answer() {
    use std::sync::atomic::{AtomicBool, Ordering};
    let redis = RedisServer::start();
    let prefix = unique_prefix();
    let release = Arc::new(AtomicBool::new(false));
    let (first, second) = (waiting_server(&redis, &prefix, &release), waiting_server(&redis, &prefix, &release));
    let (session, first_id) = call_and_leave(first.local_addr());
    // The call goes on in the first process; the client resumes on the second, which follows
    // the stream in Redis: the answer comes well after the resumption began.
    let releaser = {
        let release = Arc::clone(&release);
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(1500));
            release.store(true, Ordering::SeqCst);
        })
    };
    let resumed = open_stream(second.local_addr(), &session, Some(&first_id));
    assert_eq!(resumed.status().as_u16(), 200);
    let text = resumed.into_body().read_to_string().unwrap_or_default();
    releaser.join().unwrap();
    assert!(text.contains(r#""id":2"#) && text.contains("released"), "the answer, through the second process: {text}");
    assert_eq!(text.matches(r#""id":2"#).count(), 1, "one answer: {text}");
    assert!(text.contains("notifications/progress"), "the progress on the way: {text}");
    drop(first);
}

#[test]
fn a_stream_whose_process_died_ends_with_an_error_within_the_lease() {
    use std::sync::atomic::AtomicBool;

    let redis = RedisServer::start();
    let prefix = unique_prefix();
    let never = Arc::new(AtomicBool::new(false));
    let (first, second) = (waiting_server(&redis, &prefix, &never), waiting_server(&redis, &prefix, &never));
    let (session, first_id) = call_and_leave(first.local_addr());
    // The first process goes (its lease is no longer renewed); its call never answers.
    first.shutdown();
    let started = Instant::now();
    let resumed = open_stream(second.local_addr(), &session, Some(&first_id));
    assert_eq!(resumed.status().as_u16(), 200);
    let text = resumed.into_body().read_to_string().unwrap_or_default();
    let took = started.elapsed();
    let error = text
        .lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .filter_map(|data| serde_json::from_str::<Value>(data.trim()).ok())
        .find(|frame| frame["id"] == 2)
        .unwrap_or_else(|| panic!("an answer to request 2: {text}"));
    assert_eq!(error["error"]["code"], -32603, "{error}");
    assert!(took < Duration::from_secs(3), "ended within the 600 ms lease and a look or two: {took:?}");
    // Resumed again (on either process): the same ending, from the log.
    let again = open_stream(second.local_addr(), &session, Some(&first_id)).into_body().read_to_string().unwrap();
    assert_eq!(again.matches(r#""id":2"#).count(), 1, "{again}");
    assert!(again.contains("-32603"), "{again}");
}

#[test]
fn a_listen_stream_hears_updates_seen_by_any_process() {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use talaria::core::client::CallOptions;
    use talaria::core::schema::resources::Resource;
    use talaria::core::schema::subscriptions::{
        SubscriptionFilter, SubscriptionsListen, SubscriptionsListenRequestParams,
    };
    use talaria::core::schema::TextResourceContents;
    let redis = RedisServer::start();
    let prefix = unique_prefix();
    // The stateless era needs no session store: the relay alone.
    let serve = || {
        let relay = talaria_redis::RedisRelay::connect(&redis.url(), RedisOptions::default().prefix(&prefix)).unwrap();
        let router = Router::<()>::builder()
            .resource(Resource::new("file:///a.txt", "a"), |_ctx, uri, _| {
                Ok(vec![TextResourceContents::new(uri, "a").into()])
            })
            .subscriptions(|_ctx, _uri| Ok(()), |_ctx, _uri| Ok(()))
            .build();
        let server = talaria::server::Server::new("listening", "1", router);
        let http =
            HttpServer::bind(&server, "127.0.0.1:0", HttpServerOptions::default().relay(Arc::new(relay))).unwrap();
        (http, server)
    };
    let ((_first, first_server), (second, second_server)) = (serve(), serve());
    let heard = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&heard);
    let options = ClientOptions::new("c", "1").mode(ClientMode::Stateless).on_notification(move |method, params| {
        if method == "notifications/resources/updated" && params.is_some_and(|p| p.get().contains("file:///a.txt")) {
            counter.fetch_add(1, Ordering::SeqCst);
        }
    });
    let client = Client::http(&format!("http://{}/mcp", second.local_addr()), &[], options).unwrap();
    let filter =
        SubscriptionFilter { resource_subscriptions: Some(vec!["file:///a.txt".into()]), ..Default::default() };
    let _listen = client
        .to_async()
        .call::<SubscriptionsListen>(&SubscriptionsListenRequestParams::new(filter), CallOptions::default());
    // Seen by the first process, heard on the stream the second holds (once the stream is open).
    let waited = Instant::now();
    while heard.load(Ordering::SeqCst) == 0 {
        assert!(waited.elapsed() < Duration::from_secs(5), "no update reached the listen stream");
        first_server.resource_updated("file:///a.txt");
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_millis(300));
    let before = heard.load(Ordering::SeqCst);
    second_server.resource_updated("file:///a.txt");
    first_server.resource_updated("file:///other.txt");
    let waited = Instant::now();
    while heard.load(Ordering::SeqCst) == before && waited.elapsed() < Duration::from_secs(3) {
        std::thread::sleep(Duration::from_millis(10));
    }
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(heard.load(Ordering::SeqCst), before + 1, "one update, heard once");
}

#[test]
fn a_get_stream_opened_on_another_process_replaces_the_first_and_updates_arrive_once() {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

    let redis = RedisServer::start();
    let prefix = unique_prefix();
    let ((first, first_server), (second, _second_server)) =
        (counting_server(&redis, &prefix, true), counting_server(&redis, &prefix, true));
    let options = ClientOptions::new("c", "1").mode(ClientMode::Legacy);
    let client = Client::http(&format!("http://{}/mcp", first.local_addr()), &[], options).unwrap();
    client.subscribe("file:///a.txt").unwrap();
    let session = client.session_id().unwrap();
    // Each stream counts the updates it hears and notes when it ends.
    let listen = |stream: ureq::http::Response<ureq::Body>| {
        assert_eq!(stream.status().as_u16(), 200);
        let (heard, ended) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicBool::new(false)));
        let (h, e) = (Arc::clone(&heard), Arc::clone(&ended));
        std::thread::spawn(move || {
            count_updates(stream, &h);
            e.store(true, Ordering::SeqCst);
        });
        (heard, ended)
    };
    let (heard_first, ended_first) = listen(open_stream(first.local_addr(), &session, None));
    // The client opens its GET stream again, on the second process (it reconnected through
    // the balancer): the first process's stream ends.
    let (heard_second, ended_second) = listen(open_stream(second.local_addr(), &session, None));
    let waited = Instant::now();
    while !ended_first.load(Ordering::SeqCst) && waited.elapsed() < Duration::from_secs(3) {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(ended_first.load(Ordering::SeqCst), "the older stream ended when the newer opened elsewhere");
    assert!(!ended_second.load(Ordering::SeqCst), "the newer stream goes on");
    // An update seen on the first process reaches the client once, on the newer stream.
    first_server.resource_updated("file:///a.txt");
    let waited = Instant::now();
    while heard_second.load(Ordering::SeqCst) == 0 && waited.elapsed() < Duration::from_secs(3) {
        std::thread::sleep(Duration::from_millis(10));
    }
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(heard_second.load(Ordering::SeqCst), 1, "heard once, on the stream that is open");
    assert_eq!(heard_first.load(Ordering::SeqCst), 0, "never on the stream that ended");
    // And back: a GET on the first process again replaces the second's.
    let (heard_third, _) = listen(open_stream(first.local_addr(), &session, None));
    let waited = Instant::now();
    while !ended_second.load(Ordering::SeqCst) && waited.elapsed() < Duration::from_secs(3) {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(ended_second.load(Ordering::SeqCst), "the second stream ended in turn");
    first_server.resource_updated("file:///a.txt");
    let waited = Instant::now();
    while heard_third.load(Ordering::SeqCst) == 0 && waited.elapsed() < Duration::from_secs(3) {
        std::thread::sleep(Duration::from_millis(10));
    }
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(heard_third.load(Ordering::SeqCst), 1);
    assert_eq!(heard_second.load(Ordering::SeqCst), 1, "the ended stream heard nothing more");
    drop((first, second));
}

#[test]
fn a_get_stream_resumed_on_another_process_goes_on_live_there() {
    use std::io::BufRead as _;

    let redis = RedisServer::start();
    let prefix = unique_prefix();
    let ((first, first_server), (second, second_server)) =
        (counting_server(&redis, &prefix, true), counting_server(&redis, &prefix, true));
    let options = ClientOptions::new("c", "1").mode(ClientMode::Legacy);
    let client = Client::http(&format!("http://{}/mcp", first.local_addr()), &[], options).unwrap();
    client.subscribe("file:///a.txt").unwrap();
    let session = client.session_id().unwrap();
    // The GET stream opens on the first process; the client keeps its priming event's id.
    // Then the process stops.
    let stream = open_stream(first.local_addr(), &session, None);
    let primed = first_event_id(&mut std::io::BufReader::new(stream.into_body().into_reader()));
    drop((first, first_server));
    // Resumed on the second process, the GET stream goes on there: it hears updates.
    let resumed = open_stream(second.local_addr(), &session, Some(&primed));
    assert_eq!(resumed.status().as_u16(), 200);
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut lines = std::io::BufReader::new(resumed.into_body().into_reader());
        let mut line = String::new();
        while lines.read_line(&mut line).unwrap_or(0) > 0 {
            if line.contains("notifications/resources/updated") {
                let _ = tx.send(());
            }
            line.clear();
        }
    });
    let waited = Instant::now();
    let mut heard = false;
    while !heard && waited.elapsed() < Duration::from_secs(3) {
        second_server.resource_updated("file:///a.txt");
        heard = rx.recv_timeout(Duration::from_millis(200)).is_ok();
    }
    assert!(heard, "the resumed GET stream is live on the process it was resumed on");
    drop((client, second));
}
