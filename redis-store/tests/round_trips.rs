//! Redis round trips of an SSE response (a server replying with SSE, its sessions and event
//! logs in Redis): the answer's event opens its log stream and closes it in one script when
//! the client needs no priming event (before 2025-11-25), and the priming event's open plus
//! the answer's append-and-close otherwise. The session's own check is one pipeline, no
//! script, and an unchanged record is not written.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod common;
mod stats;

use common::{unique_prefix, RedisServer};
use serde_json::{json, Value};
use stats::{calls, inspect};
use talaria::client::{Client, ClientOptions};
use talaria::core::http::event_log::Retention;
use talaria::core::http::reply::ReplyMode;
use talaria::core::schema::tools::{CallToolResult, Tool};
use talaria::core::server::Router;
use talaria::core::session::ClientMode;
use talaria::core::version::ProtocolVersion;
use talaria::http::{HttpServer, HttpServerOptions, SharedEventStore, SharedSessionStore};
use talaria_redis::{RedisEventStore, RedisOptions, RedisSessionStore};

fn sse_server(redis: &RedisServer) -> HttpServer {
    let options = || RedisOptions::default().prefix(unique_prefix());
    let sessions = RedisSessionStore::connect(&redis.url(), options()).unwrap();
    let events = RedisEventStore::connect(&redis.url(), options(), Retention::default()).unwrap();
    let options = HttpServerOptions::default()
        .reply_mode(ReplyMode::Sse)
        .session_store(SharedSessionStore::new(sessions))
        .event_store(SharedEventStore::new(events));
    let schema = json!({"type": "object"}).as_object().cloned().unwrap();
    let router = Router::<()>::builder()
        .tool(Tool::new("echo", schema), |_ctx, args: Value| Ok(CallToolResult::text(args.to_string())))
        .build();
    HttpServer::bind(&talaria::server::Server::new("sse", "1", router), "127.0.0.1:0", options).unwrap()
}

/// The scripts Redis ran for each of 5 calls answered over SSE to a client of `version`,
/// after a first call (which loads the scripts and settles the session's record).
fn scripts_per_call(version: ProtocolVersion) -> f64 {
    let redis = RedisServer::start();
    let server = sse_server(&redis);
    let options = ClientOptions::new("c", "1").mode(ClientMode::Legacy).versions(vec![version]);
    let client = Client::http(&format!("http://{}/mcp", server.local_addr()), &[], options).unwrap();
    client.call_tool("echo", json!({"n": 0})).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(100));
    let mut look = inspect(&redis);
    let () = redis::cmd("CONFIG").arg("RESETSTAT").query(&mut look).unwrap();
    for n in 1..=5 {
        client.call_tool("echo", json!({ "n": n })).unwrap();
    }
    let scripts = calls(&mut look, "evalsha") + calls(&mut look, "eval");
    #[allow(clippy::cast_precision_loss)]
    let per_call = scripts as f64 / 5.0;
    per_call
}

#[test]
fn an_sse_answer_without_a_priming_event_costs_one_script() {
    let got = scripts_per_call(ProtocolVersion::V2025_06_18);
    assert!((got - 1.0).abs() < f64::EPSILON, "{got} scripts per call");
}

#[test]
fn an_sse_answer_after_a_priming_event_costs_two_scripts() {
    let got = scripts_per_call(ProtocolVersion::V2025_11_25);
    assert!((got - 2.0).abs() < f64::EPSILON, "{got} scripts per call");
}
