//! Two MCP endpoints mounted in axum applications on tokio (two processes' worth), sharing
//! legacy sessions through `AsyncRedisSessionStore` on tokio: a session made on one goes on
//! on the other, with its application state; and, with a relay, a resource update seen by one
//! reaches the subscriber whose GET stream the other holds (taken in on tokio, whose `spawn`
//! the relay's own thread could not call).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

#[path = "../../redis-store/tests/common/mod.rs"]
mod redis_common;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};

use redis_common::{unique_prefix, RedisServer};
use serde_json::json;
use talaria::client::{Client, ClientOptions};
use talaria::core::session::ClientMode;
use talaria::http::{HttpServerOptions, SharedSessionStore};
use talaria_redis::{AsyncRedisSessionStore, RedisOptions};

/// An axum application serving the everything server (its per-session call count kept in the
/// session's record), with sessions in the Redis at `url` under `prefix`; its address.
async fn mounted(url: &str, prefix: &str) -> SocketAddr {
    let store = AsyncRedisSessionStore::connect(url, RedisOptions::default().prefix(prefix)).await.unwrap();
    let options = HttpServerOptions::default().session_store(SharedSessionStore::from_async(store));
    let server = talaria_examples::everything::server_on_redis(url).unwrap();
    let app = talaria_examples::mounted::app(&server, options);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app.into_make_service_with_connect_info::<SocketAddr>()).await });
    addr
}

/// One `tools/call` of `tool` posted to `addr` in `session`: the status line and the body.
fn post_call(addr: SocketAddr, session: &str, tool: &str) -> (String, String) {
    let body = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": tool, "arguments": {}}});
    post(addr, Some(session), &body)
}

/// `body` posted to `addr` (in `session`, if any), read to its end: the status line and the
/// rest (head and body).
fn post(addr: SocketAddr, session: Option<&str>, body: &serde_json::Value) -> (String, String) {
    let body = body.to_string();
    let mut stream = TcpStream::connect(addr).unwrap();
    let session = session.map(|id| format!("Mcp-Session-Id: {id}\r\n")).unwrap_or_default();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\n{session}\
         Mcp-Protocol-Version: 2025-06-18\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).unwrap();
    stream.write_all(body.as_bytes()).unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    let (status, rest) = answer.split_once("\r\n").unwrap();
    (status.to_owned(), rest.to_owned())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_made_on_one_mounted_endpoint_goes_on_on_another_through_the_async_store() {
    let redis = RedisServer::start();
    let (url, prefix) = (redis.url(), unique_prefix());
    let (first, second) = (mounted(&url, &prefix).await, mounted(&url, &prefix).await);

    let calls_here = tokio::task::spawn_blocking(move || {
        let options = ClientOptions::new("c", "1").mode(ClientMode::Legacy);
        let client = Client::http(&format!("http://{first}/mcp"), &[], options).unwrap();
        for n in 0..3 {
            client.call_tool("echo", json!({"text": format!("call {n}")})).unwrap();
        }
        let session = client.session_id().expect("a legacy session");
        // The other endpoint takes the session from Redis, its three calls counted there.
        let (status, body) = post_call(second, &session, "calls");
        (status, body, client)
    });
    let (status, body, client) = calls_here.await.unwrap();
    assert!(status.ends_with("200 OK"), "{status}: {body}");
    assert!(body.contains(r#""text":"3""#), "{body}");
    // A session Redis never saw is unknown to both.
    let unknown = tokio::task::spawn_blocking(move || post_call(first, "no-such-session", "calls")).await.unwrap();
    assert!(unknown.0.ends_with("404 Not Found"), "{unknown:?}");
    drop(client);
}

/// A server of one subscribable resource, `file:///a.txt`, mounted in axum on tokio with
/// sessions (async store), event logs and a relay in the Redis at `url` under `prefix`.
async fn mounted_with_relay(url: &str, prefix: &str) -> (SocketAddr, talaria::server::Server<()>) {
    use talaria::core::schema::resources::Resource;
    use talaria::core::schema::TextResourceContents;
    let redis = || RedisOptions::default().prefix(prefix);
    let sessions = AsyncRedisSessionStore::connect(url, redis()).await.unwrap();
    let events = talaria_redis::RedisEventStore::connect(url, redis(), Default::default()).unwrap();
    let relay = talaria_redis::RedisRelay::connect(url, redis()).unwrap();
    let options = HttpServerOptions::default()
        .session_store(SharedSessionStore::from_async(sessions))
        .event_store(talaria::http::SharedEventStore::new(events))
        .relay(std::sync::Arc::new(relay));
    let router = talaria::core::server::Router::<()>::builder()
        .resource(Resource::new("file:///a.txt", "a"), |_ctx, uri, _| {
            Ok(vec![TextResourceContents::new(uri, "a").into()])
        })
        .subscriptions(|_ctx, _uri| Ok(()), |_ctx, _uri| Ok(()))
        .build();
    let server = talaria::server::Server::new("relayed", "1", router);
    let app = talaria_examples::mounted::app(&server, options);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app.into_make_service_with_connect_info::<SocketAddr>()).await });
    (addr, server)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resource_update_seen_on_one_mounted_endpoint_reaches_a_subscriber_streaming_from_the_other() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::{Duration, Instant};
    let redis = RedisServer::start();
    let (url, prefix) = (redis.url(), unique_prefix());
    let ((first, first_server), (second, _second_server)) =
        (mounted_with_relay(&url, &prefix).await, mounted_with_relay(&url, &prefix).await);
    let heard = std::sync::Arc::new(AtomicUsize::new(0));
    let counting = std::sync::Arc::clone(&heard);
    let session = tokio::task::spawn_blocking(move || {
        let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18",
            "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}});
        let (status, rest) = post(first, None, &init);
        assert!(status.ends_with("200 OK"), "{status}: {rest}");
        let session = rest
            .lines()
            .find_map(|line| line.to_ascii_lowercase().strip_prefix("mcp-session-id:").map(|v| v.trim().to_owned()))
            .expect("a legacy session");
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        assert!(post(first, Some(&session), &initialized).0.ends_with("202 Accepted"));
        // The session's GET stream, on the second endpoint.
        let mut stream = TcpStream::connect(second).unwrap();
        let head = format!(
            "GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\nMcp-Session-Id: {session}\r\n\
             Mcp-Protocol-Version: 2025-06-18\r\n\r\n"
        );
        stream.write_all(head.as_bytes()).unwrap();
        stream.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        std::thread::spawn(move || {
            let mut buffer = [0_u8; 4096];
            let mut seen = String::new();
            while let Ok(n @ 1..) = stream.read(&mut buffer) {
                seen.push_str(&String::from_utf8_lossy(&buffer[..n]));
                counting.store(seen.matches("notifications/resources/updated").count(), Ordering::SeqCst);
            }
        });
        std::thread::sleep(Duration::from_millis(200));
        let subscribe =
            json!({"jsonrpc": "2.0", "id": 2, "method": "resources/subscribe", "params": {"uri": "file:///a.txt"}});
        let (status, rest) = post(first, Some(&session), &subscribe);
        assert!(status.ends_with("200 OK"), "{status}: {rest}");
        session
    })
    .await
    .unwrap();
    // Seen on the first endpoint; told by the second, which holds the stream.
    first_server.resource_updated("file:///a.txt");
    let waited = Instant::now();
    while heard.load(Ordering::SeqCst) == 0 && waited.elapsed() < Duration::from_secs(3) {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(heard.load(Ordering::SeqCst), 1, "session {session}: the update reached the GET stream once");
}
