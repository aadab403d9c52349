//! Two HTTP servers sharing sessions through Redis, pushed: both serving one session at once
//! (each one's changes kept in the record the other stores after it), and an SSE answer past
//! a socket's buffer resumed on the other process.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod common;
mod http_common;

use std::sync::Arc;

use common::{unique_prefix, RedisServer};
use http_common::{first_event_id, legacy_client, open_stream_within, post, post_streaming, sessions};
use serde_json::{json, Value};
use talaria::core::schema::tools::{CallToolResult, Tool};
use talaria::core::server::Router;
use talaria::http::{HttpServer, HttpServerOptions, SharedEventStore};
use talaria_redis::{RedisOptions, RedisSessionStore};

/// A server whose `hold` tool counts the call in the session's state, then holds its answer
/// until `release`; its `count` tool counts and answers at once. Counts merge by adding what
/// each process counted ([`talaria::server::Server::merge_session_state`]).
fn holding_server(
    store: talaria::http::SharedSessionStore,
    entered: &Arc<std::sync::atomic::AtomicBool>,
    release: &Arc<std::sync::atomic::AtomicBool>,
) -> HttpServer {
    use std::sync::atomic::Ordering;
    use talaria::core::schema::resources::Resource;
    use talaria::core::schema::TextResourceContents;
    let options = HttpServerOptions::default().session_store(store);
    let schema = json!({"type": "object"}).as_object().cloned().unwrap();
    let (entered, release) = (Arc::clone(entered), Arc::clone(release));
    let router = Router::<u64>::builder()
        .tool(Tool::new("hold", schema.clone()), move |ctx, _: Value| {
            *ctx.state() += 1;
            entered.store(true, Ordering::SeqCst);
            while !release.load(Ordering::SeqCst) {
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            Ok(CallToolResult::text(ctx.state().to_string()))
        })
        .tool(Tool::new("count", schema), |ctx, _: Value| {
            *ctx.state() += 1;
            Ok(CallToolResult::text(ctx.state().to_string()))
        })
        .resource(Resource::new("file:///a.txt", "a"), |_ctx, uri, _| {
            Ok(vec![TextResourceContents::new(uri, "a").into()])
        })
        .subscriptions(|_ctx, _uri| Ok(()), |_ctx, _uri| Ok(()))
        .logging()
        .build();
    let server = talaria::server::Server::new("holding", "1", router)
        .session_state(|count: &u64| Some(json!(count)), |saved| saved.as_u64())
        .merge_session_state(|base, ours, theirs| {
            let n = |v: Option<&Value>| v.and_then(Value::as_u64).unwrap_or(0);
            Some(json!(n(ours.as_ref()) + n(theirs.as_ref()) - n(base)))
        });
    HttpServer::bind(&server, "127.0.0.1:0", options).unwrap()
}

#[test]
fn changes_two_processes_make_to_one_session_at_once_are_all_kept() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use talaria::core::session::SessionSnapshot;
    use talaria_core::http::event_log::SessionStore as _;
    let redis = RedisServer::start();
    let prefix = unique_prefix();
    let (entered, release) = (Arc::new(AtomicBool::new(false)), Arc::new(AtomicBool::new(false)));
    let first = holding_server(sessions(&redis, &prefix), &entered, &release);
    let second = holding_server(sessions(&redis, &prefix), &entered, &release);
    let (client, session) = legacy_client(first.local_addr());
    assert_eq!(client.call_tool("count", json!({})).unwrap().content[0].as_text(), Some("1"));
    // The first process serves `hold` from the record it read (count 1) ...
    let held = {
        let session = session.clone();
        let addr = first.local_addr();
        std::thread::spawn(move || {
            let call = json!({"jsonrpc": "2.0", "id": 20, "method": "tools/call", "params": {"name": "hold", "arguments": {}}});
            post(addr, &session, &call)
        })
    };
    while !entered.load(Ordering::SeqCst) {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    // ... while the second subscribes, sets the level and counts, and stores its record.
    let subscribe =
        json!({"jsonrpc": "2.0", "id": 21, "method": "resources/subscribe", "params": {"uri": "file:///a.txt"}});
    assert_eq!(post(second.local_addr(), &session, &subscribe).0, 200);
    let level = json!({"jsonrpc": "2.0", "id": 22, "method": "logging/setLevel", "params": {"level": "error"}});
    let (status, body) = post(second.local_addr(), &session, &level);
    assert!(status == 200 && body.contains(r#""result":{}"#), "{status} {body}");
    let count =
        json!({"jsonrpc": "2.0", "id": 23, "method": "tools/call", "params": {"name": "count", "arguments": {}}});
    let (status, body) = post(second.local_addr(), &session, &count);
    assert!(status == 200 && body.contains(r#""text":"2""#), "{status} {body}");
    // The first stores after it: its record merges the second's, which it did not start from.
    release.store(true, Ordering::SeqCst);
    let (status, body) = held.join().unwrap();
    assert!(status == 200 && body.contains(r#""text":"2""#), "{status} {body}");
    let mut store = RedisSessionStore::connect(&redis.url(), RedisOptions::default().prefix(&prefix)).unwrap();
    let record = store.load(&session).unwrap().expect("the session's record");
    let snapshot: SessionSnapshot = serde_json::from_slice(&record.data).unwrap();
    assert_eq!(snapshot.subscriptions, ["file:///a.txt"], "the second process's subscription is kept");
    assert_eq!(snapshot.log_level, Some(talaria::core::schema::LoggingLevel::Error), "and its level");
    assert_eq!(snapshot.app, Some(json!(3)), "one count on each process since the record both read (1)");
    // Either process goes on from the merged record.
    assert_eq!(client.call_tool("count", json!({})).unwrap().content[0].as_text(), Some("4"));
    let (status, body) = post(second.local_addr(), &session, &count);
    assert!(status == 200 && body.contains(r#""text":"5""#), "{status} {body}");
}

/// Three processes counting in one session at once, from eight clients, while Redis stalls
/// (`SIGSTOP`) past the stores' timeout again and again: refreshes fail (503, nothing counted),
/// and writes time out in doubt, to run when Redis goes on (landing, or finding the record
/// moved on). No request finds its session gone. Once each process has stored again, every
/// count that was answered is in the record exactly once: none lost with a write that failed,
/// none counted twice from a write in doubt merged again.
#[test]
fn counts_answered_while_redis_stalls_past_its_timeout_are_each_kept_once() {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::time::Duration;
    const CLIENTS: usize = 8;
    const CALLS: usize = 60;
    let redis = RedisServer::start();
    let prefix = unique_prefix();
    let options = || RedisOptions::default().prefix(&prefix).io_timeout(Duration::from_millis(50));
    let blocking =
        || talaria::http::SharedSessionStore::new(RedisSessionStore::connect(&redis.url(), options()).unwrap());
    #[cfg(feature = "smol")]
    let last = talaria::http::SharedSessionStore::from_async(
        smol::block_on(talaria_redis::AsyncRedisSessionStore::connect(&redis.url(), options())).unwrap(),
    );
    #[cfg(not(feature = "smol"))]
    let last = blocking();
    let go = Arc::new(AtomicBool::new(true));
    let servers = [blocking(), blocking(), last].map(|store| holding_server(store, &go, &go));
    let addrs: Vec<_> = servers.iter().map(HttpServer::local_addr).collect();
    // Kept open: a client that closes ends its session.
    let (_client, session) = legacy_client(addrs[0]);
    let count =
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "count", "arguments": {}}});
    let (answered, refused) = (AtomicUsize::new(0), AtomicUsize::new(0));
    let running = AtomicBool::new(true);
    std::thread::scope(|scope| {
        scope.spawn(|| {
            while running.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(40));
                redis.pause();
                std::thread::sleep(Duration::from_millis(120));
                redis.resume();
            }
        });
        let clients: Vec<_> = (0..CLIENTS)
            .map(|c| {
                let (addrs, session, count, answered, refused) = (&addrs, &session, &count, &answered, &refused);
                scope.spawn(move || {
                    for n in 0..CALLS {
                        let (status, body) = post(addrs[(c + n) % addrs.len()], session, count);
                        match status {
                            200 if body.contains(r#""text":""#) => answered.fetch_add(1, Ordering::SeqCst),
                            503 => refused.fetch_add(1, Ordering::SeqCst),
                            _ => panic!("{status} {body}"),
                        };
                    }
                })
            })
            .collect();
        for client in clients {
            client.join().unwrap();
        }
        running.store(false, Ordering::SeqCst);
    });
    // Writes that timed out run once Redis goes on.
    std::thread::sleep(Duration::from_millis(300));
    let (answered, refused) = (answered.into_inner(), refused.into_inner());
    assert!(refused > 0 && answered > CLIENTS * CALLS / 4, "answered {answered}, refused {refused}");
    // Each process stores what it holds; the last one's answer has every count.
    let settled: Vec<String> = addrs
        .iter()
        .map(|addr| {
            let (status, body) = post(*addr, &session, &count);
            assert_eq!(status, 200, "{body}");
            let body: Value = serde_json::from_str(&body).unwrap();
            body["result"]["content"][0]["text"].as_str().unwrap().to_owned()
        })
        .collect();
    let total = answered + addrs.len();
    println!("while Redis stalled: {answered} counts answered, {refused} refused (503); settled at {settled:?}");
    assert_eq!(settled[2], total.to_string(), "answered {answered}, refused {refused}, settled {settled:?}");
}

/// An SSE answer larger than any socket buffer, logged in Redis with a retention that keeps
/// it, read whole on the process that wrote it, and again whole when the client resumes on
/// another process after its first event.
#[test]
fn an_answer_past_a_socket_buffer_resumes_whole_on_another_process() {
    use talaria::core::http::reply::ReplyMode;
    use talaria_core::http::event_log::Retention;
    const BIG: usize = 4 << 20;
    let redis = RedisServer::start();
    let prefix = unique_prefix();
    let serve = || {
        let retention = Retention::default().with_max_bytes(16 << 20);
        let events =
            talaria_redis::RedisEventStore::connect(&redis.url(), RedisOptions::default().prefix(&prefix), retention)
                .unwrap();
        let options = HttpServerOptions::default()
            .reply_mode(ReplyMode::Sse)
            .session_store(sessions(&redis, &prefix))
            .event_store(SharedEventStore::new(events));
        let schema = json!({"type": "object"}).as_object().cloned().unwrap();
        let router = Router::<()>::builder()
            .blocking_tool(Tool::new("big", schema), |job, _: Value| {
                job.progress(1.0, Some(2.0), None);
                let text: String = (0..BIG).map(|i| char::from(b'a' + u8::try_from(i % 26).unwrap())).collect();
                Ok(CallToolResult::text(text))
            })
            .build();
        HttpServer::bind(&talaria::server::Server::new("big", "1", router), "127.0.0.1:0", options).unwrap()
    };
    let (first, second) = (serve(), serve());
    let (client, session) = legacy_client(first.local_addr());
    // Read whole where it is written (the client's own SSE parsing).
    let result = client.call_tool("big", json!({})).unwrap();
    let text = result.content[0].as_text().unwrap();
    assert_eq!(text.len(), BIG);
    assert!(text.bytes().enumerate().all(|(i, b)| b == b'a' + u8::try_from(i % 26).unwrap()));
    // Again, leaving after the progress event; resumed on the other process from Redis.
    let call = json!({"jsonrpc": "2.0", "id": 77, "method": "tools/call",
        "params": {"name": "big", "arguments": {}, "_meta": {"progressToken": "p"}}});
    let response = post_streaming(first.local_addr(), Some(&session), &call);
    let first_id = first_event_id(&mut std::io::BufReader::new(response.into_body().into_reader()));
    let resumed = {
        let started = std::time::Instant::now();
        loop {
            let response = open_stream_within(second.local_addr(), &session, Some(&first_id), 30);
            assert_eq!(response.status().as_u16(), 200);
            let body = response.into_body().with_config().limit(64 << 20).read_to_string().unwrap();
            if body.contains(r#""id":77"#) || started.elapsed() > std::time::Duration::from_secs(20) {
                break body;
            }
        }
    };
    let data = resumed
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .find(|d| d.contains(r#""id":77"#))
        .expect("the answer in the resumed stream");
    let answer: Value = serde_json::from_str(data.trim()).unwrap();
    let text = answer["result"]["content"][0]["text"].as_str().unwrap();
    assert_eq!(text.len(), BIG, "the answer resumed whole");
    assert!(text.bytes().enumerate().all(|(i, b)| b == b'a' + u8::try_from(i % 26).unwrap()));
}
