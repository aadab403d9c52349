//! Scale-out end to end: three `everything-server --redis` processes behind nginx (round
//! robin, no stickiness, deploy/nginx.conf) sharing sessions, event logs and tasks through a
//! real `redis-server`, while a seeded killer sends `kill -9` to a random process and starts it
//! again, over and over. Legacy clients go on through it all:
//!
//! - each call ends exactly once: the answer, or an error for a call whose process died under
//!   it (at most one per kill and client);
//! - no session is lost: no client ever re-initializes (no 404), whichever process it reaches;
//! - the per-session state (a call count, kept through the session-state hook) goes on;
//! - in the stateless era, the second round of a multi-round request (`input_required`)
//!   reaches another process and succeeds.
//!
//! CI runs a short version; `TALARIA_SCALE_KILLS=40 TALARIA_SCALE_CLIENTS=8 cargo test -p
//! talaria-examples --test scale_out -- --nocapture` (or `scripts/scale-out.sh`) the long one.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

#[path = "../../redis-store/tests/common/mod.rs"]
mod redis_common;
mod scale;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use redis_common::RedisServer;
use scale::{free_port, Nginx, Process};
use serde_json::json;
use talaria::client::{Client, ClientOptions};
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

/// What one client saw.
#[derive(Debug, Default)]
struct Tally {
    answered: u64,
    failed: u64,
    reinitialized: bool,
    counted: u64,
}

/// One echo call, tallied: its own answer, or an error.
fn echo(client: &Client, tally: &mut Tally, text: &str) {
    match client.call_tool("echo", json!({ "text": text })) {
        Ok(result) => {
            assert_eq!(result.content[0].as_text(), Some(text), "its own answer");
            tally.answered += 1;
        }
        Err(_) => tally.failed += 1,
    }
}

#[test]
fn sessions_survive_processes_killed_behind_a_load_balancer() {
    let (kills, clients, seed) =
        (setting("TALARIA_SCALE_KILLS", 6), setting("TALARIA_SCALE_CLIENTS", 3), setting("TALARIA_SCALE_SEED", 7));
    let redis = RedisServer::start();
    let url = redis.url();
    let ports = [free_port(), free_port(), free_port()];
    let processes: Arc<Mutex<Vec<Process>>> =
        Arc::new(Mutex::new(ports.iter().map(|port| Process::start(*port, Some(&url))).collect()));
    let front = free_port();
    let _nginx = Nginx::start(front, &ports);
    let endpoint = format!("http://127.0.0.1:{front}/mcp");

    let killing = Arc::new(AtomicBool::new(true));
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
                all[victim] = Process::start(ports[victim], Some(&url));
            }
            killing.store(false, Ordering::SeqCst);
        })
    };
    let runs: Vec<_> = (0..clients)
        .map(|n| {
            let (endpoint, killing) = (endpoint.clone(), Arc::clone(&killing));
            std::thread::spawn(move || {
                let options =
                    ClientOptions::new("scale", "1").mode(ClientMode::Legacy).request_timeout(Duration::from_secs(10));
                let client = Client::http(&endpoint, &[], options).unwrap();
                let session = client.session_id();
                let mut tally = Tally::default();
                let mut i = 0;
                while killing.load(Ordering::SeqCst) {
                    echo(&client, &mut tally, &format!("{n}-{i}"));
                    i += 1;
                }
                // After the storm, every call is answered.
                let failed_before = tally.failed;
                for _ in 0..20 {
                    echo(&client, &mut tally, &format!("{n}-{i}"));
                    i += 1;
                }
                assert_eq!(tally.failed, failed_before, "client {n}: calls failed with every process up");
                tally.reinitialized = client.session_id() != session;
                tally.counted =
                    client.call_tool("calls", json!({})).unwrap().content[0].as_text().unwrap().parse().unwrap();
                tally
            })
        })
        .collect();
    killer.join().unwrap();
    let kills_done = u64::try_from(killed.load(Ordering::SeqCst)).unwrap();
    for (n, run) in runs.into_iter().enumerate() {
        let tally = run.join().unwrap();
        println!("client {n}: {tally:?} ({kills_done} kills)");
        assert!(!tally.reinitialized, "client {n}: its session was lost (a 404 made it start again)");
        assert!(tally.failed <= kills_done, "client {n}: more failed calls than kills: {tally:?}");
        assert!(tally.answered >= 20, "client {n}: {tally:?}");
        // The count goes on across processes; a call whose process died under it may or may
        // not have been counted.
        assert!(
            tally.counted >= tally.answered.saturating_sub(kills_done)
                && tally.counted <= tally.answered + tally.failed,
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
