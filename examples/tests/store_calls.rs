//! How often the HTTP server calls its session store: never for a stateless (2026-07-28)
//! request, once per legacy request (a refresh: was the session deleted or changed by another
//! process?), plus one write when the session's record changed.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use talaria::client::{Client, ClientOptions};
use talaria::core::http::event_log::{MemorySessionStore, Refresh, SessionRecord, SessionStore, SessionStoreError};
use talaria::core::schema::tools::{CallToolResult, Tool};
use talaria::core::server::Router;
use talaria::core::session::ClientMode;
use talaria::http::{HttpServer, HttpServerOptions, SharedSessionStore};

/// A memory store counting its calls: (reads and touches, writes).
struct Counting {
    inner: MemorySessionStore,
    calls: Arc<AtomicUsize>,
    writes: Arc<AtomicUsize>,
}

impl SessionStore for Counting {
    fn load(&mut self, session: &str) -> Result<Option<SessionRecord>, SessionStoreError> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        self.inner.load(session)
    }
    fn store(&mut self, session: &str, data: Vec<u8>, now: Instant) -> Result<(), SessionStoreError> {
        self.writes.fetch_add(1, Ordering::SeqCst);
        self.inner.store(session, data, now)
    }
    fn touch(&mut self, session: &str, now: Instant) -> Result<bool, SessionStoreError> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        self.inner.touch(session, now)
    }
    fn delete(&mut self, session: &str) -> Result<bool, SessionStoreError> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        self.inner.delete(session)
    }
    fn expired(&mut self, now: Instant, idle: Duration) -> Result<Vec<String>, SessionStoreError> {
        self.inner.expired(now, idle)
    }
    /// One call, as a shared store answers it (the memory store's own touches, then loads).
    fn refresh(&mut self, session: &str, now: Instant, known: &[u8]) -> Result<Refresh, SessionStoreError> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        self.inner.refresh(session, now, known)
    }
}

fn serve() -> (HttpServer, Arc<AtomicUsize>, Arc<AtomicUsize>) {
    let (calls, writes) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let store = Counting { inner: MemorySessionStore::new(), calls: Arc::clone(&calls), writes: Arc::clone(&writes) };
    let options = HttpServerOptions::default().session_store(SharedSessionStore::new(store));
    let schema = json!({"type": "object"}).as_object().cloned().unwrap();
    let router = Router::<()>::builder()
        .tool(Tool::new("echo", schema), |_ctx, args: Value| Ok(CallToolResult::text(args.to_string())))
        .build();
    let mut capabilities = router.capabilities();
    capabilities.logging = Some(Default::default());
    let config = talaria::core::session::ServerConfig::new(talaria::core::schema::Implementation::new("s", "1"))
        .with_capabilities(capabilities);
    let server = talaria::server::Server::with_config(config, router, || ());
    let server = HttpServer::bind(&server, "127.0.0.1:0", options).unwrap();
    (server, calls, writes)
}

#[test]
fn stateless_requests_make_no_store_calls() {
    let (server, calls, writes) = serve();
    let options = ClientOptions::new("c", "1").mode(ClientMode::Stateless);
    let client = Client::http(&format!("http://{}/mcp", server.local_addr()), &[], options).unwrap();
    for _ in 0..10 {
        client.call_tool("echo", json!({})).unwrap();
    }
    assert_eq!((calls.load(Ordering::SeqCst), writes.load(Ordering::SeqCst)), (0, 0));
}

#[test]
fn a_legacy_request_makes_one_store_call_and_writes_only_changes() {
    let (server, calls, writes) = serve();
    let options = ClientOptions::new("c", "1").mode(ClientMode::Legacy);
    let client = Client::http(&format!("http://{}/mcp", server.local_addr()), &[], options).unwrap();
    client.call_tool("echo", json!({})).unwrap();
    let (calls_before, writes_before) = (calls.load(Ordering::SeqCst), writes.load(Ordering::SeqCst));
    assert_eq!(writes_before, 2, "the record is written at initialize, and once the handshake has ended");
    for _ in 0..10 {
        client.call_tool("echo", json!({})).unwrap();
    }
    assert_eq!(calls.load(Ordering::SeqCst) - calls_before, 10, "one check per request");
    assert_eq!(writes.load(Ordering::SeqCst), writes_before, "nothing changed: nothing written");
    client.set_log_level(talaria::core::schema::LoggingLevel::Error).unwrap();
    assert_eq!(writes.load(Ordering::SeqCst), writes_before + 1, "a changed record is written");
}
