//! How often the HTTP server calls its session store: never for a stateless (2026-07-28)
//! request, once per legacy request (a refresh: was the session deleted or changed by another
//! process?), plus one write when the session's record changed. The same for a blocking store
//! and an async one, whose calls run on the server's executor threads. And what a session's
//! count comes to when the store's writes fail, landing or not, with several processes
//! counting in it at once.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod raw_http;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use std::sync::Mutex;
use talaria::client::{Client, ClientOptions};
use talaria::core::http::event_log::{
    AsyncSessionStore, MemorySessionStore, Refresh, SessionRecord, SessionStore, SessionStoreError, StoreFuture,
    StoreIf,
};
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
    /// One write, as a shared store answers it (the memory store's own load, then store).
    fn store_if(
        &mut self,
        session: &str,
        data: Vec<u8>,
        expected: &[u8],
        now: Instant,
    ) -> Result<StoreIf, SessionStoreError> {
        self.writes.fetch_add(1, Ordering::SeqCst);
        self.inner.store_if(session, data, expected, now)
    }
    /// One write, as a shared store answers it (the memory store's own load, then store).
    fn store_new(&mut self, session: &str, data: Vec<u8>, now: Instant) -> Result<StoreIf, SessionStoreError> {
        self.writes.fetch_add(1, Ordering::SeqCst);
        self.inner.store_new(session, data, now)
    }
}

/// [`Counting`] behind the async contract, noting the threads its calls run on.
struct AsyncCounting {
    inner: Mutex<Counting>,
    threads: Arc<Mutex<Vec<String>>>,
}

impl AsyncCounting {
    fn call<T: Send + 'static>(&self, f: impl FnOnce(&mut Counting) -> T) -> StoreFuture<'_, T> {
        let name = std::thread::current().name().unwrap_or("unnamed").to_owned();
        self.threads.lock().unwrap().push(name);
        let answer = f(&mut self.inner.lock().unwrap());
        // Answered later, as a network store would: the request waits without a thread.
        Box::pin(async move {
            smol::Timer::after(Duration::from_micros(100)).await;
            Ok(answer)
        })
    }
}

impl AsyncSessionStore for AsyncCounting {
    fn load<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Option<SessionRecord>> {
        let got = self.call(|s| s.load(id));
        Box::pin(async move { got.await? })
    }
    fn store<'a>(&'a self, id: &'a str, data: Vec<u8>, now: Instant) -> StoreFuture<'a, ()> {
        let got = self.call(|s| s.store(id, data, now));
        Box::pin(async move { got.await? })
    }
    fn touch<'a>(&'a self, id: &'a str, now: Instant) -> StoreFuture<'a, bool> {
        let got = self.call(|s| s.touch(id, now));
        Box::pin(async move { got.await? })
    }
    fn delete<'a>(&'a self, id: &'a str) -> StoreFuture<'a, bool> {
        let got = self.call(|s| s.delete(id));
        Box::pin(async move { got.await? })
    }
    fn expired(&self, now: Instant, idle: Duration) -> StoreFuture<'_, Vec<String>> {
        let got = self.call(|s| s.expired(now, idle));
        Box::pin(async move { got.await? })
    }
    fn refresh<'a>(&'a self, id: &'a str, now: Instant, known: &'a [u8]) -> StoreFuture<'a, Refresh> {
        let got = self.call(|s| s.refresh(id, now, known));
        Box::pin(async move { got.await? })
    }
    fn store_if<'a>(
        &'a self,
        id: &'a str,
        data: Vec<u8>,
        expected: &'a [u8],
        now: Instant,
    ) -> StoreFuture<'a, StoreIf> {
        let got = self.call(|s| s.store_if(id, data, expected, now));
        Box::pin(async move { got.await? })
    }
    fn store_new<'a>(&'a self, id: &'a str, data: Vec<u8>, now: Instant) -> StoreFuture<'a, StoreIf> {
        let got = self.call(|s| s.store_new(id, data, now));
        Box::pin(async move { got.await? })
    }
}

/// Counters of a served store: (reads and touches, writes), and the threads an async store's
/// calls ran on.
struct Served {
    server: HttpServer,
    calls: Arc<AtomicUsize>,
    writes: Arc<AtomicUsize>,
    threads: Arc<Mutex<Vec<String>>>,
}

fn serve(is_async: bool) -> Served {
    let (calls, writes) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let threads = Arc::new(Mutex::new(Vec::new()));
    let store = Counting { inner: MemorySessionStore::new(), calls: Arc::clone(&calls), writes: Arc::clone(&writes) };
    let store = if is_async {
        SharedSessionStore::from_async(AsyncCounting { inner: Mutex::new(store), threads: Arc::clone(&threads) })
    } else {
        SharedSessionStore::new(store)
    };
    let options = HttpServerOptions::default().session_store(store);
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
    Served { server, calls, writes, threads }
}

#[test]
fn stateless_requests_make_no_store_calls() {
    for is_async in [false, true] {
        let Served { server, calls, writes, .. } = serve(is_async);
        let options = ClientOptions::new("c", "1").mode(ClientMode::Stateless);
        let client = Client::http(&format!("http://{}/mcp", server.local_addr()), &[], options).unwrap();
        for _ in 0..10 {
            client.call_tool("echo", json!({})).unwrap();
        }
        assert_eq!((calls.load(Ordering::SeqCst), writes.load(Ordering::SeqCst)), (0, 0), "async: {is_async}");
    }
}

#[test]
fn a_legacy_request_makes_one_store_call_and_writes_only_changes() {
    for is_async in [false, true] {
        let Served { server, calls, writes, threads } = serve(is_async);
        let options = ClientOptions::new("c", "1").mode(ClientMode::Legacy);
        let client = Client::http(&format!("http://{}/mcp", server.local_addr()), &[], options).unwrap();
        client.call_tool("echo", json!({})).unwrap();
        let (calls_before, writes_before) = (calls.load(Ordering::SeqCst), writes.load(Ordering::SeqCst));
        assert_eq!(writes_before, 2, "the record is written at initialize, and once the handshake has ended");
        for _ in 0..10 {
            client.call_tool("echo", json!({})).unwrap();
        }
        assert_eq!(calls.load(Ordering::SeqCst) - calls_before, 10, "one check per request (async: {is_async})");
        assert_eq!(writes.load(Ordering::SeqCst), writes_before, "nothing changed: nothing written");
        client.set_log_level(talaria::core::schema::LoggingLevel::Error).unwrap();
        assert_eq!(writes.load(Ordering::SeqCst), writes_before + 1, "a changed record is written");
        client.close();
        let threads = threads.lock().unwrap();
        if is_async {
            // Every call the counters saw went through the async store, on an executor thread.
            let counted = calls.load(Ordering::SeqCst) + writes.load(Ordering::SeqCst);
            assert_eq!(threads.len(), counted, "{threads:?}");
            assert!(threads.iter().all(|name| name.starts_with("talaria-http-")), "{threads:?}");
        }
    }
}

/// Which write a [`Flaky`] store was asked for.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Write {
    StoreNew,
    StoreIf,
}

/// What a [`Flaky`] store does with a write.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Fate {
    /// Writes, and says so.
    Done,
    /// Writes, then reports a failure, as a store whose answer timed out after its script ran.
    LandsButFails,
    /// Fails without writing.
    Lost,
    /// Answers that the session was deleted (a tombstone), without writing.
    Deleted,
    /// Fails without writing yet: the write is made when [`Late::land`] is called, as a
    /// command that timed out and ran later.
    Late,
}

/// A write a [`Flaky`] store reported failed and has not made yet.
type LateWrite = Box<dyn FnOnce(&mut MemorySessionStore) + Send>;

/// The writes a [`Flaky`] store held back ([`Fate::Late`]), and the store they land in.
#[derive(Clone)]
struct Late {
    store: Arc<Mutex<MemorySessionStore>>,
    writes: Arc<Mutex<Vec<LateWrite>>>,
}

impl Late {
    /// Makes the writes held back, in order.
    fn land(&self) {
        let writes = std::mem::take(&mut *self.writes.lock().unwrap());
        let mut store = self.store.lock().unwrap();
        for write in writes {
            write(&mut store);
        }
    }
}

/// A memory store whose writes fail as `fate` decides (reads never fail).
struct Flaky {
    inner: Arc<Mutex<MemorySessionStore>>,
    fate: Box<dyn FnMut(Write) -> Fate + Send>,
    late: Late,
}

impl Flaky {
    fn shared(fate: impl FnMut(Write) -> Fate + Send + 'static) -> SharedSessionStore {
        Self::with_late(fate).0
    }

    /// The store, and what lands its writes held back.
    fn with_late(fate: impl FnMut(Write) -> Fate + Send + 'static) -> (SharedSessionStore, Late) {
        let inner = Arc::new(Mutex::new(MemorySessionStore::new()));
        let late = Late { store: Arc::clone(&inner), writes: Arc::default() };
        (SharedSessionStore::new(Self { inner, fate: Box::new(fate), late: late.clone() }), late)
    }

    /// Makes `write` as `fate` decides: its answer, or the failure reported.
    fn write(
        &mut self,
        which: Write,
        write: impl FnOnce(&mut MemorySessionStore) -> Result<StoreIf, SessionStoreError> + Send + 'static,
    ) -> Result<StoreIf, SessionStoreError> {
        let fate = (self.fate)(which);
        match fate {
            Fate::Lost => return Err(failed(fate)),
            Fate::Deleted => return Ok(StoreIf::Gone),
            Fate::Late => {
                self.late.writes.lock().unwrap().push(Box::new(move |store| drop(write(store))));
                return Err(failed(fate));
            }
            Fate::Done | Fate::LandsButFails => {}
        }
        let done = write(&mut self.inner.lock().unwrap())?;
        if fate == Fate::LandsButFails {
            return Err(failed(fate));
        }
        Ok(done)
    }
}

fn failed(fate: Fate) -> SessionStoreError {
    SessionStoreError::Backend(if fate == Fate::Lost { "refused" } else { "timed out after the write" }.into())
}

impl SessionStore for Flaky {
    fn load(&mut self, session: &str) -> Result<Option<SessionRecord>, SessionStoreError> {
        self.inner.lock().unwrap().load(session)
    }
    /// The HTTP server writes with `store_new` and `store_if` only.
    fn store(&mut self, _: &str, _: Vec<u8>, _: Instant) -> Result<(), SessionStoreError> {
        unreachable!("a plain store")
    }
    fn touch(&mut self, session: &str, now: Instant) -> Result<bool, SessionStoreError> {
        self.inner.lock().unwrap().touch(session, now)
    }
    fn delete(&mut self, session: &str) -> Result<bool, SessionStoreError> {
        self.inner.lock().unwrap().delete(session)
    }
    fn expired(&mut self, now: Instant, idle: Duration) -> Result<Vec<String>, SessionStoreError> {
        self.inner.lock().unwrap().expired(now, idle)
    }
    fn store_if(
        &mut self,
        session: &str,
        data: Vec<u8>,
        expected: &[u8],
        now: Instant,
    ) -> Result<StoreIf, SessionStoreError> {
        let (session, expected) = (session.to_owned(), expected.to_owned());
        self.write(Write::StoreIf, move |store| store.store_if(&session, data, &expected, now))
    }
    fn store_new(&mut self, session: &str, data: Vec<u8>, now: Instant) -> Result<StoreIf, SessionStoreError> {
        let session = session.to_owned();
        self.write(Write::StoreNew, move |store| store.store_new(&session, data, now))
    }
}

/// A flag that the next write of `which` takes: that write meets `fate`.
fn next(flag: &Arc<AtomicBool>, which: Write, fate: Fate) -> impl FnMut(Write) -> Fate + Send + 'static {
    let flag = Arc::clone(flag);
    move |write| if write == which && flag.swap(false, Ordering::SeqCst) { fate } else { Fate::Done }
}

/// A counting server on `store`: its `count` tool adds one to the session's count, merged
/// across processes as a counter.
fn counting_server(store: SharedSessionStore) -> HttpServer {
    let options = HttpServerOptions::default().session_store(store);
    let schema = json!({"type": "object"}).as_object().cloned().unwrap();
    let router = Router::<u64>::builder()
        .tool(Tool::new("count", schema), |ctx, _: Value| {
            *ctx.state() += 1;
            Ok(CallToolResult::text(ctx.state().to_string()))
        })
        .build();
    let server = talaria::server::Server::new("s", "1", router)
        .session_state(|n: &u64| Some(json!(n)), |saved| saved.as_u64())
        .merge_session_state(|base, ours, theirs| {
            let n = |v: Option<&Value>| v.and_then(Value::as_u64).unwrap_or(0);
            Some(json!(n(theirs.as_ref()) + n(ours.as_ref()).saturating_sub(n(base))))
        });
    HttpServer::bind(&server, "127.0.0.1:0", options).unwrap()
}

/// A write that seemed to fail but landed is this process's own when the next request finds
/// it: taken as it is, not merged as another process's (which would count its change twice).
#[test]
fn a_write_that_seemed_to_fail_but_landed_is_not_merged_again() {
    let fail_next = Arc::new(AtomicBool::new(false));
    let server = counting_server(Flaky::shared(next(&fail_next, Write::StoreIf, Fate::LandsButFails)));
    let client = legacy_client(&server.local_addr().to_string());
    assert_eq!(count(&client), "1");
    assert_eq!(count(&client), "2");
    fail_next.store(true, Ordering::SeqCst);
    assert_eq!(count(&client), "3", "the answer goes out; the record of 3 landed, though its write failed");
    assert_eq!(count(&client), "4", "3 was this process's own record, not another's change to add");
    assert_eq!(count(&client), "5");
}

/// A legacy client of the server at `addr`.
fn legacy_client(addr: &str) -> Client {
    let options = ClientOptions::new("c", "1").mode(ClientMode::Legacy);
    Client::http(&format!("http://{addr}/mcp"), &[], options).unwrap()
}

/// Calls `count` through `client`: its text.
fn count(client: &Client) -> String {
    client.call_tool("count", json!({})).unwrap().content[0].as_text().unwrap().to_owned()
}

/// A session whose first write failed without landing is written by its next save, and
/// goes on (a write in doubt is not taken for a record the store holds).
#[test]
fn a_first_write_that_failed_is_made_by_the_next_save() {
    let lose_next_store = Arc::new(AtomicBool::new(true));
    let server = counting_server(Flaky::shared(next(&lose_next_store, Write::StoreNew, Fate::Lost)));
    let client = legacy_client(&server.local_addr().to_string());
    assert!(!lose_next_store.load(Ordering::SeqCst), "the initialize's write was refused");
    for n in 1..=3 {
        assert_eq!(count(&client), n.to_string());
    }
}

/// A session deleted elsewhere before its first record was written (the store answers the
/// first write with a tombstone) ends here: no refresh would notice, as it has no record to
/// check.
#[test]
fn a_session_whose_first_write_finds_it_deleted_ends() {
    let first = Arc::new(AtomicBool::new(true));
    let server = counting_server(Flaky::shared(next(&first, Write::StoreNew, Fate::Deleted)));
    let options = ClientOptions::new("c", "1").mode(ClientMode::Legacy);
    let client = Client::http(&format!("http://{}/mcp", server.local_addr()), &[], options);
    assert!(!first.load(Ordering::SeqCst), "the initialize's write found a tombstone");
    // Ended before or after the handshake's end: either way, not served any longer.
    let counted = client.map(|client| client.call_tool("count", json!({})));
    assert!(!matches!(counted, Ok(Ok(_))), "{counted:?}");
}

/// A session's first write whose answer was lost, landing only after later writes (a command
/// that timed out and ran late), does not replace the record written since: a first record is
/// written only where the store has none.
#[test]
fn a_first_write_landing_late_does_not_replace_a_later_record() {
    let first = Arc::new(AtomicBool::new(true));
    let (store, late) = Flaky::with_late(next(&first, Write::StoreNew, Fate::Late));
    let (a, b) = (counting_server(store.clone()), counting_server(store));
    let client = legacy_client(&a.local_addr().to_string());
    assert!(!first.load(Ordering::SeqCst), "the initialize's write was held back");
    assert_eq!(count(&client), "1");
    let (session, version) = (client.session_id().unwrap(), client.protocol_version());
    assert_eq!(count_on(&b.local_addr().to_string(), &session, version.as_str()), "2");
    // The initialize's record (no count yet) lands now, over the record of 2.
    late.land();
    assert_eq!(count_on(&b.local_addr().to_string(), &session, version.as_str()), "3");
    assert_eq!(count(&client), "4");
}

/// A write in doubt that landed, which another process then wrote over (so the store no longer
/// holds it as it was), is still found to have landed: its change is not counted twice.
#[test]
fn a_write_in_doubt_that_landed_under_another_processs_write_is_not_counted_twice() {
    let fail_next = Arc::new(AtomicBool::new(false));
    let store = Flaky::shared(next(&fail_next, Write::StoreIf, Fate::LandsButFails));
    let (a, b) = (counting_server(store.clone()), counting_server(store));
    let client = legacy_client(&a.local_addr().to_string());
    assert_eq!(count(&client), "1");
    assert_eq!(count(&client), "2");
    fail_next.store(true, Ordering::SeqCst);
    assert_eq!(count(&client), "3", "the record of 3 landed, though its write failed");
    // The same session on the other process: it reads 3, counts 4 and stores it over 3.
    let session = client.session_id().unwrap();
    let version = client.protocol_version();
    assert_eq!(count_on(&b.local_addr().to_string(), &session, version.as_str()), "4");
    assert_eq!(count(&client), "5", "3 is in the record of 4: only what was counted since 3 is merged (nothing)");
    assert_eq!(count_on(&b.local_addr().to_string(), &session, version.as_str()), "6");
    assert_eq!(count(&client), "7");
}

/// Calls `count` in `session` on the server at `addr` by hand (another process's client),
/// answered as JSON: its text.
fn count_on(addr: &str, session: &str, version: &str) -> String {
    use std::io::{BufReader, Write};
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "count", "arguments": {}}})
        .to_string();
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    write!(
        stream,
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMcp-Session-Id: {session}\r\nMCP-Protocol-Version: {version}\r\n\
         Content-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let (status, answer) = raw_http::read_response(&mut BufReader::new(stream));
    assert!(status.contains(" 200 "), "{status}: {answer}");
    let answer: Value = serde_json::from_str(&answer).unwrap_or_else(|e| panic!("{e}: {answer}"));
    answer["result"]["content"][0]["text"].as_str().unwrap().to_owned()
}

/// Three processes counting in one session at once, from several clients, while a fifth of
/// the writes land but report a failure and a tenth fail without landing: once each process
/// has stored again, every count that was answered is in the session's count exactly once
/// (none lost to a failed write, none counted twice from a write in doubt merged again).
#[test]
fn counts_from_three_processes_with_writes_in_doubt_are_each_kept_once() {
    const CLIENTS: usize = 8;
    const CALLS: usize = 50;
    for seed in [1_u64, 7, 42, 99] {
        let flaky = Arc::new(AtomicBool::new(false));
        let mut state = seed;
        let fates = {
            let flaky = Arc::clone(&flaky);
            move |_: Write| {
                if !flaky.load(Ordering::SeqCst) {
                    return Fate::Done;
                }
                // xorshift64: a fixed sequence per seed.
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                match state % 10 {
                    0 | 1 => Fate::LandsButFails,
                    2 => Fate::Lost,
                    _ => Fate::Done,
                }
            }
        };
        let store = Flaky::shared(fates);
        let servers: Vec<HttpServer> = (0..3).map(|_| counting_server(store.clone())).collect();
        let addrs: Vec<String> = servers.iter().map(|s| s.local_addr().to_string()).collect();
        let client = legacy_client(&addrs[0]);
        let session = client.session_id().unwrap();
        let version = client.protocol_version().as_str();
        flaky.store(true, Ordering::SeqCst);
        std::thread::scope(|scope| {
            for c in 0..CLIENTS {
                let (addrs, session) = (&addrs, &session);
                scope.spawn(move || {
                    for n in 0..CALLS {
                        count_on(&addrs[(c + n) % addrs.len()], session, version);
                    }
                });
            }
        });
        flaky.store(false, Ordering::SeqCst);
        // Each process stores what it holds; the last one's answer has every count.
        let settled: Vec<String> = addrs.iter().map(|addr| count_on(addr, &session, version)).collect();
        let total = CLIENTS * CALLS + addrs.len();
        assert_eq!(settled[2], total.to_string(), "seed {seed}: settled answers {settled:?}");
        assert_eq!(count_on(&addrs[0], &session, version), (total + 1).to_string(), "seed {seed}");
    }
}
