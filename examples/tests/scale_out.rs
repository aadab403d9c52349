//! Scale-out end to end: three `everything-server --redis` processes behind nginx (round
//! robin, no stickiness, deploy/nginx.conf) sharing sessions, event logs and tasks through a
//! real `redis-server`, while a seeded killer sends `kill -9` to a random process and starts it
//! again, over and over. Legacy clients go on through it all:
//!
//! - a mix of exchanges: `echo` (a JSON answer that changes the session's state), `log` (an
//!   SSE answer with the log messages the session's level lets through) and `slow` (an SSE
//!   answer after progress notifications);
//! - each call ends exactly once: the answer, or an error for a call whose process died under
//!   it (at most one per kill and client: the proxy's 502, or, for a stream the client resumed
//!   on another process, that process's JSON-RPC error once the dead one's lease lapsed); no
//!   request id is answered twice on the wire;
//! - every answered call brought exactly its notifications (none lost, none repeated), and a
//!   failed one no more than its own;
//! - the log level set once goes with the session to every process, and so does the
//!   subscription made once: after the storm, a resource update reaches every client exactly
//!   once, on the GET stream it reopened on whichever process after each kill;
//! - no session is lost: no client ever re-initializes (no 404), whichever process it reaches;
//! - the per-session state (a call count, kept through the session-state hook) goes on;
//! - in the stateless era, the second round of a multi-round request (`input_required`)
//!   reaches another process and succeeds;
//! - past the comfortable: 1 MiB payloads each way, and 1,000 calls in flight on one session
//!   (`TALARIA_SCALE_IN_FLIGHT`; 10,000 passes too), each answered once with its own text and
//!   counted once in the session's state, though the three processes store its record at once.
//!
//! CI runs a short version; `TALARIA_SCALE_KILLS=40 TALARIA_SCALE_CLIENTS=8 cargo test -p
//! talaria-examples --test scale_out -- --nocapture` (or `scripts/scale-out.sh`) the long one.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

#[path = "../../redis-store/tests/common/mod.rs"]
mod redis_common;
mod scale;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use redis_common::RedisServer;
use scale::{free_port, Nginx, Process};
use serde_json::{json, Value};
use talaria::client::{Client, ClientOptions, TraceEvent};
use talaria::core::client::CallOptions;
use talaria::core::schema::LoggingLevel;
use talaria::core::session::ClientMode;

/// A small seeded generator (the run is reproducible from its seed).
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) % n
    }
}

fn setting(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// What one client's wire showed: answers per request id, and the log and progress
/// notifications received.
#[derive(Debug, Default)]
struct Wire {
    answers: HashMap<String, u32>,
    logs: u64,
    progress: u64,
    updates: u64,
}

impl Wire {
    /// Counts a frame received from the server.
    fn received(&mut self, frame: &[u8]) {
        let Ok(value) = serde_json::from_slice::<Value>(frame) else { return };
        let items = match value {
            Value::Array(items) => items,
            one => vec![one],
        };
        for item in items {
            match item.get("method").and_then(Value::as_str) {
                Some("notifications/message") => self.logs += 1,
                Some("notifications/progress") => self.progress += 1,
                Some("notifications/resources/updated") => self.updates += 1,
                Some(_) => {}
                None => *self.answers.entry(item.get("id").map(Value::to_string).unwrap_or_default()).or_default() += 1,
            }
        }
    }
}

/// What one client saw.
#[derive(Debug, Default)]
struct Tally {
    answered: u64,
    failed: u64,
    /// Calls of `echo`, which counts itself in the session's state: answered and failed.
    echoes: (u64, u64),
    /// Notifications of answered calls that were not exactly the ones the call makes.
    events_off: u64,
    /// Notifications received for the calls that failed (at most what they would make).
    events_of_failed: u64,
    /// The longest a failed call took to fail.
    slowest_failure: Duration,
    /// Failed calls the server ended with an error (their process died while a client was
    /// following their stream on another one), rather than the transport.
    ended_by_server: u64,
    reinitialized: bool,
    counted: u64,
    /// Resource updates heard after the storm (one was sent).
    updates: u64,
}

/// The log messages `log` sends at level warning and above (warning, error), and the
/// progress notifications of a three-step `slow`.
const LOGS_PER_CALL: u64 = 2;

/// The resource every client subscribes to.
const UPDATED: &str = "file:///readme.md";
const STEPS: u64 = 3;

/// One call of the mixed workload (`i` picks it): `echo` (a JSON answer that changes the
/// session's state), `log` (an SSE answer with the log messages the session's level lets
/// through), or `slow` (an SSE answer after three progress notifications). Tallied: its own
/// answer with exactly its notifications, or an error with no more than them.
fn call(client: &Client, wire: &Mutex<Wire>, tally: &mut Tally, n: u64, i: u64) {
    let seen = |wire: &Mutex<Wire>| {
        let wire = wire.lock().unwrap();
        (wire.logs, wire.progress)
    };
    let before = seen(wire);
    let started = Instant::now();
    let (outcome, logs, progress) = match i % 3 {
        0 => {
            let text = format!("{n}-{i}");
            let outcome = client.call_tool("echo", json!({ "text": text }));
            if let Ok(result) = &outcome {
                assert_eq!(result.content[0].as_text(), Some(text.as_str()), "its own answer");
            }
            match outcome {
                Ok(_) => tally.echoes.0 += 1,
                Err(_) => tally.echoes.1 += 1,
            }
            (outcome.map(drop), 0, 0)
        }
        1 => (client.call_tool("log", json!({})).map(drop), LOGS_PER_CALL, 0),
        _ => {
            let options = CallOptions::default().with_progress(|_| {});
            (client.call_tool_with("slow", json!({"steps": STEPS, "step_ms": 10}), options).map(drop), 0, STEPS)
        }
    };
    let after = seen(wire);
    let got = (after.0 - before.0, after.1 - before.1);
    match outcome {
        Ok(()) => {
            tally.answered += 1;
            if got != (logs, progress) {
                println!("client {n}, call {i}: notifications {got:?}, want {:?}", (logs, progress));
                tally.events_off += 1;
            }
        }
        Err(error) => {
            tally.failed += 1;
            tally.slowest_failure = tally.slowest_failure.max(started.elapsed());
            if let talaria::client::ClientError::Call(call) = &error {
                tally.ended_by_server += u64::from(call.remote().is_some());
            }
            assert!(got.0 <= logs && got.1 <= progress, "client {n}, call {i}: duplicated notifications {got:?}");
            tally.events_of_failed += got.0 + got.1;
        }
    }
}

/// The session store of process `i`: the processes mix the async store and the blocking one,
/// which share their records.
fn store_of(i: usize) -> &'static str {
    if i % 2 == 0 {
        "async"
    } else {
        "blocking"
    }
}

#[test]
fn sessions_survive_processes_killed_behind_a_load_balancer() {
    let (kills, clients, seed) =
        (setting("TALARIA_SCALE_KILLS", 6), setting("TALARIA_SCALE_CLIENTS", 3), setting("TALARIA_SCALE_SEED", 7));
    let redis = RedisServer::start();
    let url = redis.url();
    let ports = [free_port(), free_port(), free_port()];
    let processes: Arc<Mutex<Vec<Process>>> = Arc::new(Mutex::new(
        ports.iter().enumerate().map(|(i, port)| Process::start_with(*port, Some(&url), store_of(i))).collect(),
    ));
    let front = free_port();
    let _nginx = Nginx::start(front, &ports);
    let endpoint = format!("http://127.0.0.1:{front}/mcp");

    let killing = Arc::new(AtomicBool::new(true));
    // Every client, done calling, waits for the resource update; then listens for it.
    let settled = Arc::new(std::sync::Barrier::new(usize::try_from(clients).unwrap() + 1));
    let killed = Arc::new(AtomicUsize::new(0));
    let killer = {
        let (processes, killing, killed) = (Arc::clone(&processes), Arc::clone(&killing), Arc::clone(&killed));
        std::thread::spawn(move || {
            let mut rng = Lcg(seed);
            for _ in 0..kills {
                std::thread::sleep(Duration::from_millis(100 + rng.below(200)));
                let victim = usize::try_from(rng.below(3)).unwrap();
                let mut all = processes.lock().unwrap();
                all[victim].kill();
                killed.fetch_add(1, Ordering::SeqCst);
                all[victim] = Process::start_with(ports[victim], Some(&url), store_of(victim));
            }
            killing.store(false, Ordering::SeqCst);
        })
    };
    let runs: Vec<_> = (0..clients)
        .map(|n| {
            let (endpoint, killing, settled) = (endpoint.clone(), Arc::clone(&killing), Arc::clone(&settled));
            std::thread::spawn(move || {
                let wire = Arc::new(Mutex::new(Wire::default()));
                let recorder = Arc::clone(&wire);
                let options = ClientOptions::new("scale", "1")
                    .mode(ClientMode::Legacy)
                    .request_timeout(Duration::from_secs(10))
                    .trace(move |event| {
                        if let TraceEvent::Received(frame) = event {
                            recorder.lock().unwrap().received(frame);
                        }
                    });
                let client = Client::http(&endpoint, &[], options).unwrap();
                let session = client.session_id();
                // The level goes with the session to every process: `log` sends two.
                client.set_log_level(LoggingLevel::Warning).unwrap();
                // So does the subscription.
                client.subscribe(UPDATED).unwrap();
                let mut tally = Tally::default();
                let mut i = 0;
                while killing.load(Ordering::SeqCst) {
                    call(&client, &wire, &mut tally, n, i);
                    i += 1;
                }
                // After the storm, every call is answered.
                let failed_before = tally.failed;
                for _ in 0..21 {
                    call(&client, &wire, &mut tally, n, i);
                    i += 1;
                }
                assert_eq!(tally.failed, failed_before, "client {n}: calls failed with every process up");
                tally.reinitialized = client.session_id() != session;
                settled.wait();
                settled.wait();
                let waited = Instant::now();
                while wire.lock().unwrap().updates == 0 && waited.elapsed() < Duration::from_secs(5) {
                    std::thread::sleep(Duration::from_millis(10));
                }
                // Time for a second one to arrive, were it sent twice.
                std::thread::sleep(Duration::from_millis(500));
                tally.updates = wire.lock().unwrap().updates;
                tally.counted =
                    client.call_tool("calls", json!({})).unwrap().content[0].as_text().unwrap().parse().unwrap();
                let wire = wire.lock().unwrap();
                let twice: Vec<_> = wire.answers.iter().filter(|(_, count)| **count > 1).collect();
                assert!(twice.is_empty(), "client {n}: requests answered more than once: {twice:?}");
                tally
            })
        })
        .collect();
    killer.join().unwrap();
    // The storm is over and every client has made its last calls; their GET streams, reopened
    // after the last kill, have had time to open. One update, as any process would publish it.
    settled.wait();
    std::thread::sleep(Duration::from_secs(1));
    let relay = talaria_redis::RedisRelay::connect(&redis.url(), talaria_redis::RedisOptions::default()).unwrap();
    talaria::core::http::relay::Relay::publish(
        &relay,
        talaria::core::http::relay::NOTICES,
        &talaria::core::http::relay::Notice::ResourceUpdated { uri: UPDATED.into() }.encode(),
    );
    settled.wait();
    let kills_done = u64::try_from(killed.load(Ordering::SeqCst)).unwrap();
    for (n, run) in runs.into_iter().enumerate() {
        let tally = run.join().unwrap();
        println!("client {n}: {tally:?} ({kills_done} kills)");
        assert!(!tally.reinitialized, "client {n}: its session was lost (a 404 made it start again)");
        assert_eq!(tally.updates, 1, "client {n}: its subscription did not hear the update exactly once: {tally:?}");
        assert!(tally.failed <= kills_done, "client {n}: more failed calls than kills: {tally:?}");
        assert!(tally.answered >= 21, "client {n}: {tally:?}");
        assert_eq!(tally.events_off, 0, "client {n}: answered calls lost or repeated notifications: {tally:?}");
        // A call whose process died ends at once (the proxy's 502) or, when the client resumes
        // its stream on another process, with that process's error once the dead process's
        // lease (3 s) lapses: well before the call's 10 s timeout. Nothing hangs.
        assert!(tally.slowest_failure < Duration::from_secs(6), "client {n}: a call hung: {tally:?}");
        // The count goes on across processes; an echo whose process died under it may or may
        // not have been counted.
        let (answered, failed) = tally.echoes;
        assert!(
            tally.counted >= answered.saturating_sub(kills_done) && tally.counted <= answered + failed,
            "client {n}: counted {} for {tally:?}",
            tally.counted
        );
    }
}

#[test]
fn a_multi_round_request_goes_on_on_another_process() {
    use talaria::core::client::Handlers;
    use talaria::core::schema::roots::Root;
    let redis = RedisServer::start();
    let ports = [free_port(), free_port(), free_port()];
    let _processes: Vec<Process> = ports.iter().map(|port| Process::start(*port, Some(&redis.url()))).collect();
    let front = free_port();
    let _nginx = Nginx::start(front, &ports);
    // 2026-07-28: `roots` asks the client for its roots (input_required); the client's second
    // round is a new request, which round robin sends to another process.
    let mut handlers = Handlers::default();
    handlers.add_root(Root::new("file:///work"));
    let options = ClientOptions::new("mrtr", "1").mode(ClientMode::Stateless).handlers(handlers);
    let client = Client::http(&format!("http://127.0.0.1:{front}/mcp"), &[], options).unwrap();
    for _ in 0..10 {
        let result = client.call_tool("roots", json!({})).unwrap();
        assert_eq!(result.content[0].as_text(), Some("file:///work"));
    }
}

/// Past the comfortable, through the shared store: one legacy session behind nginx, its calls
/// round-robined over three processes (async and blocking stores mixed), with payloads larger
/// than a socket's buffer each way, then `TALARIA_SCALE_IN_FLIGHT` calls (default 1,000) in
/// flight at once. Every call is answered exactly once, with its own text, and the session's
/// state (the count of `echo` calls, kept through the session-state hook) counts them all.
#[test]
fn big_payloads_and_a_thousand_calls_in_flight_go_through_three_processes() {
    let in_flight = usize::try_from(setting("TALARIA_SCALE_IN_FLIGHT", 1_000)).unwrap();
    let redis = RedisServer::start();
    let ports = [free_port(), free_port(), free_port()];
    let _processes: Vec<Process> =
        ports.iter().enumerate().map(|(i, port)| Process::start_with(*port, Some(&redis.url()), store_of(i))).collect();
    let front = free_port();
    let _nginx = Nginx::start(front, &ports);
    let options = ClientOptions::new("big", "1")
        .mode(ClientMode::Legacy)
        .request_timeout(Duration::from_secs(60))
        .max_pending(in_flight + 16);
    let client = Client::http(&format!("http://127.0.0.1:{front}/mcp"), &[], options).unwrap();

    // 1 MiB each way, past any loopback socket buffer; each text differs from the others.
    for i in 0..6_u8 {
        let text: String =
            (0..1 << 20).map(|n: usize| char::from(b'a' + u8::try_from((n + usize::from(i)) % 26).unwrap())).collect();
        let result = client.call_tool("echo", json!({"text": text})).unwrap();
        let echoed = result.content.first().and_then(|c| c.as_text()).unwrap_or_default();
        assert!(echoed == text, "call {i}: echoed {} bytes, not the {} sent", echoed.len(), text.len());
    }

    let started = Instant::now();
    let nonblocking = client.to_async();
    let calls: Vec<_> =
        (0..in_flight).map(|i| (i, nonblocking.call_tool("echo", json!({"text": format!("call {i}")})))).collect();
    for (i, call) in calls {
        let result = call.wait().unwrap_or_else(|e| panic!("call {i} of {in_flight} in flight: {e}"));
        assert_eq!(result.content.first().and_then(|c| c.as_text()), Some(format!("call {i}").as_str()));
    }
    eprintln!("{in_flight} calls in flight over three processes: {:?}", started.elapsed());
    // Every echo counted once in the session's state, whichever process served it.
    let count = client.call_tool("calls", json!({})).unwrap();
    assert_eq!(count.content[0].as_text(), Some((in_flight + 6).to_string().as_str()));
}
