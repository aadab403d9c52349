//! What an idle legacy session costs in Redis (issue 21's figure: at most 1 KiB): 500 sessions
//! made through a server keeping its sessions, event logs and relay in Redis, each after its
//! handshake, then left idle. Counted as the `MEMORY USAGE` of every key under the server's
//! prefix, and as Redis's own `used_memory`, each divided by the sessions.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod common;
mod http_common;
mod stats;

use std::sync::Arc;

use common::{unique_prefix, RedisServer};
use http_common::{post, post_streaming, sessions};
use serde_json::{json, Value};
use stats::inspect;
use talaria::core::http::event_log::Retention;
use talaria::core::schema::tools::{CallToolResult, Tool};
use talaria::core::server::Router;
use talaria::http::{HttpServer, HttpServerOptions, SharedEventStore};
use talaria_redis::{RedisEventStore, RedisOptions, RedisRelay};

const SESSIONS: u64 = 500;

fn used_memory(connection: &mut redis::Connection) -> u64 {
    let info: String = redis::cmd("INFO").arg("memory").query(connection).unwrap();
    info.lines().find_map(|line| line.strip_prefix("used_memory:")).unwrap().trim().parse().unwrap()
}

/// The bytes of every key under `prefix`, by `MEMORY USAGE`, and how many keys there are.
fn bytes_under(connection: &mut redis::Connection, prefix: &str) -> (u64, u64) {
    let keys: Vec<String> = redis::cmd("KEYS").arg(format!("{prefix}*")).query(connection).unwrap();
    let bytes = keys
        .iter()
        .map(|key| redis::cmd("MEMORY").arg("USAGE").arg(key).arg("SAMPLES").arg(0).query::<u64>(connection).unwrap())
        .sum();
    (bytes, keys.len() as u64)
}

#[test]
fn an_idle_session_takes_at_most_a_kibibyte_in_redis() {
    let redis = RedisServer::start();
    let prefix = unique_prefix();
    let with_prefix = || RedisOptions::default().prefix(&prefix);
    let events = RedisEventStore::connect(&redis.url(), with_prefix(), Retention::default()).unwrap();
    let options = HttpServerOptions::default()
        .session_store(sessions(&redis, &prefix))
        .event_store(SharedEventStore::new(events))
        .relay(Arc::new(RedisRelay::connect(&redis.url(), with_prefix()).unwrap()));
    let schema = json!({"type": "object"}).as_object().cloned().unwrap();
    let router = Router::<()>::builder()
        .tool(Tool::new("echo", schema), |_ctx, args: Value| Ok(CallToolResult::text(args.to_string())))
        .build();
    let server = HttpServer::bind(&talaria::server::Server::new("idle", "1", router), "127.0.0.1:0", options).unwrap();
    let addr = server.local_addr();
    let open_session = || {
        let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25",
            "capabilities": {}, "clientInfo": {"name": "a-client", "version": "1.0.0"}}});
        let response = post_streaming(addr, None, &init);
        let session = response.headers().get("mcp-session-id").unwrap().to_str().unwrap().to_owned();
        drop(response.into_body().read_to_string());
        assert_eq!(post(addr, &session, &json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).0, 202);
    };
    // The first sessions load the store's scripts and make the shared keys: not what one
    // more session costs.
    open_session();
    let mut look = inspect(&redis);
    let (bytes_before, keys_before) = bytes_under(&mut look, &prefix);
    let memory_before = used_memory(&mut look);
    for _ in 0..SESSIONS {
        open_session();
    }
    std::thread::sleep(std::time::Duration::from_millis(200));
    let (bytes, keys) = bytes_under(&mut look, &prefix);
    let (bytes, keys) = (bytes - bytes_before, keys - keys_before);
    let memory = used_memory(&mut look).saturating_sub(memory_before);
    println!(
        "idle sessions in Redis: {} B each by MEMORY USAGE ({keys} keys for {SESSIONS} sessions), {} B each by used_memory",
        bytes / SESSIONS,
        memory / SESSIONS
    );
    assert!(bytes / SESSIONS <= 1024, "{} B per idle session", bytes / SESSIONS);
    assert!(memory / SESSIONS <= 1024, "{} B per idle session by used_memory", memory / SESSIONS);
}
