//! What the HTTP tests against Redis share: session stores, and requests to a server as a
//! client would make them.
#![allow(dead_code, unreachable_pub, clippy::unwrap_used, clippy::expect_used)]

use serde_json::Value;
use talaria::client::{Client, ClientOptions};
use talaria::core::session::ClientMode;
use talaria::http::SharedSessionStore;
use talaria_redis::{RedisOptions, RedisSessionStore};

use crate::common::RedisServer;

/// A session store in `redis` under `prefix`: async and blocking in turn on this thread (one
/// test), with the `smol` feature; blocking without it.
pub fn sessions(redis: &RedisServer, prefix: &str) -> SharedSessionStore {
    thread_local!(static MADE: std::cell::Cell<usize> = const { std::cell::Cell::new(0) });
    let options = RedisOptions::default().prefix(prefix);
    let made = MADE.with(|made| made.replace(made.get() + 1));
    #[cfg(feature = "smol")]
    if made % 2 == 0 {
        let store = smol::block_on(talaria_redis::AsyncRedisSessionStore::connect(&redis.url(), options)).unwrap();
        return SharedSessionStore::from_async(store);
    }
    let _ = made;
    SharedSessionStore::new(RedisSessionStore::connect(&redis.url(), options).unwrap())
}

/// A POST of `body` to session `session` at `addr`, JSON or SSE accepted: the status and the
/// whole body.
pub fn post(addr: std::net::SocketAddr, session: &str, body: &Value) -> (u16, String) {
    let response = ureq::post(&format!("http://{addr}/mcp"))
        .header("Content-Type", "application/json")
        .header("Accept", "application/json, text/event-stream")
        .header("Mcp-Session-Id", session)
        .header("Mcp-Protocol-Version", "2025-11-25")
        .config()
        .http_status_as_error(false)
        .build()
        .send(body.to_string())
        .unwrap();
    let status = response.status().as_u16();
    (status, response.into_body().read_to_string().unwrap())
}

/// An HTTP agent answering every status (reads time out after `seconds`).
pub fn agent(seconds: u64) -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(std::time::Duration::from_secs(seconds)))
        .build()
        .into()
}

/// A legacy client of the server at `addr`, its handshake handled there (a call went through
/// after it), and its session id.
pub fn legacy_client(addr: std::net::SocketAddr) -> (Client, String) {
    let options = ClientOptions::new("c", "1").mode(ClientMode::Legacy);
    let client = Client::http(&format!("http://{addr}/mcp"), &[], options).unwrap();
    client.list_all_tools().unwrap();
    let session = client.session_id().expect("a legacy session");
    (client, session)
}

/// A GET stream of `session` at `addr`, resuming after `last_event_id` if given (reads time
/// out after 5 s).
pub fn open_stream(
    addr: std::net::SocketAddr,
    session: &str,
    last_event_id: Option<&str>,
) -> ureq::http::Response<ureq::Body> {
    open_stream_within(addr, session, last_event_id, 5)
}

/// [`open_stream`] whose reads time out after `seconds`.
pub fn open_stream_within(
    addr: std::net::SocketAddr,
    session: &str,
    last_event_id: Option<&str>,
    seconds: u64,
) -> ureq::http::Response<ureq::Body> {
    let agent = agent(seconds);
    let mut request = agent
        .get(&format!("http://{addr}/mcp"))
        .header("Accept", "text/event-stream")
        .header("Mcp-Session-Id", session)
        .header("Mcp-Protocol-Version", "2025-11-25");
    if let Some(id) = last_event_id {
        request = request.header("Last-Event-ID", id);
    }
    request.call().unwrap()
}

/// A POST of `body` to session `session` at `addr`, with SSE accepted; the response.
pub fn post_streaming(
    addr: std::net::SocketAddr,
    session: Option<&str>,
    body: &Value,
) -> ureq::http::Response<ureq::Body> {
    let agent = agent(10);
    let mut request = agent
        .post(&format!("http://{addr}/mcp"))
        .header("Content-Type", "application/json")
        .header("Accept", "application/json, text/event-stream")
        .header("Mcp-Protocol-Version", "2025-11-25");
    if let Some(session) = session {
        request = request.header("Mcp-Session-Id", session);
    }
    request.send(body.to_string()).unwrap()
}

/// Reads SSE lines from `reader` up to the first event id (a priming event's, or the first
/// event's), and returns it.
///
/// # Panics
///
/// If the stream ends first.
pub fn first_event_id(reader: &mut impl std::io::BufRead) -> String {
    let mut line = String::new();
    loop {
        line.clear();
        assert!(reader.read_line(&mut line).unwrap() > 0, "the stream ended before its first event id");
        if let Some(id) = line.strip_prefix("id:") {
            return id.trim().to_owned();
        }
    }
}
