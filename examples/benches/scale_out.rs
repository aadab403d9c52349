//! Scale-out bench: `tools/call` round trips through nginx (deploy/nginx.conf) against
//! `everything-server --runtime smol` (whose executor the async store's connection shares:
//! `AsyncRedisSessionStore::connect_on`; each process's executor run by its share of the
//! cores, at least one thread) with its sessions in memory (one process, the baseline), with its
//! sessions in Redis (one process: what the store costs), and three processes sharing Redis
//! (round robin, no stickiness), each with the async session store and then the blocking one,
//! all in the same run. Legacy sessions, JSON replies.
//!
//! Two calls: `add`, which leaves the session's record as it was (one Redis round trip: the
//! refresh), and `echo`, which counts itself in the session's application state (two: the
//! refresh, and the changed record stored).
//!
//! Prints, for each: p50 and p99 of one client's sequential calls, and calls/s with
//! `TALARIA_SCALE_BENCH_CLIENTS` (default 16) clients; then the p50 the Redis store adds and the
//! throughput ratios against the in-memory baseline (issue 21's targets: at most 0.3 ms added
//! p50, at least 0.5x the throughput). Medians of `TALARIA_SCALE_BENCH_ROUNDS` rounds (default
//! 3); `TALARIA_SCALE_BENCH_CALLS` calls per client per round (default 2000).
//!
//! `TALARIA_SCALE_RUNTIME=blocking` runs the blocking-host server (`HttpServer::bind_with`,
//! the async store's connection on its executor) in place of the smol one.
//!
//! `TALARIA_SCALE_BENCH_ONLY=N` runs only the Nth setup (from 0: in memory; 1 and 2 the async
//! store, one and three processes; 3 and 4 the blocking store), for a profiler.
//!
//! `cargo bench -p talaria-examples --bench scale_out` (needs redis-server and nginx:
//! `scripts/redis.sh --install`, `scripts/nginx.sh --install`; a debug build of the example
//! server is used unless `cargo build --release -p talaria-examples` made one).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs, unreachable_pub)]

#[path = "../../redis-store/tests/common/mod.rs"]
mod redis_common;
#[path = "../tests/scale/mod.rs"]
mod scale;

use std::time::{Duration, Instant};

use redis_common::RedisServer;
use scale::{free_port, Nginx, Process};
use serde_json::json;
use talaria::client::{Client, ClientOptions};
use talaria::core::session::ClientMode;

fn setting(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// One topology's figures.
#[derive(Debug, Clone, Copy, Default)]
struct Figures {
    p50_us: f64,
    p99_us: f64,
    calls_per_s: f64,
}

fn client(endpoint: &str) -> Client {
    Client::http(endpoint, &[], ClientOptions::new("bench", "1").mode(ClientMode::Legacy)).unwrap()
}

/// A tool to call: its name and arguments.
#[derive(Clone, Copy)]
struct Call {
    /// What the figures are of.
    what: &'static str,
    tool: &'static str,
    arguments: fn() -> serde_json::Value,
}

/// `add` leaves the session's record as it was; `echo` counts itself in the session's
/// application state, so the record is stored again after each call.
const CALLS: [Call; 2] = [
    Call { what: "record unchanged (add)", tool: "add", arguments: || json!({"a": 1, "b": 2}) },
    Call { what: "record changed (echo)", tool: "echo", arguments: || json!({"text": "x"}) },
];

/// Latency of one client's sequential calls, then throughput with `clients` clients.
fn measure(endpoint: &str, call: Call, calls: usize, clients: usize) -> Figures {
    let one = client(endpoint);
    for _ in 0..100 {
        one.call_tool(call.tool, (call.arguments)()).unwrap();
    }
    let mut times: Vec<Duration> = (0..calls)
        .map(|_| {
            let started = Instant::now();
            one.call_tool(call.tool, (call.arguments)()).unwrap();
            started.elapsed()
        })
        .collect();
    times.sort();
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    let (p50, p99) = (us(times[times.len() / 2]), us(times[times.len() * 99 / 100]));
    let all: Vec<Client> = (0..clients).map(|_| client(endpoint)).collect();
    let started = Instant::now();
    std::thread::scope(|scope| {
        for each in &all {
            scope.spawn(move || {
                for _ in 0..calls / 4 {
                    each.call_tool(call.tool, (call.arguments)()).unwrap();
                }
            });
        }
    });
    let total = (calls / 4 * clients) as f64;
    Figures { p50_us: p50, p99_us: p99, calls_per_s: total / started.elapsed().as_secs_f64() }
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn main() {
    let (rounds, calls, clients) = (
        setting("TALARIA_SCALE_BENCH_ROUNDS", 3),
        setting("TALARIA_SCALE_BENCH_CALLS", 2000),
        setting("TALARIA_SCALE_BENCH_CLIENTS", 16),
    );
    let cores = std::thread::available_parallelism().map_or(0, std::num::NonZeroUsize::get);
    println!("talaria scale-out bench: tools/call through nginx, legacy sessions, JSON replies ({cores} cores)");
    println!(
        "  {calls} calls per round for p50/p99 (one client), {clients} clients for calls/s, median of {rounds} rounds"
    );
    let redis = RedisServer::start();
    let url = redis.url();
    // (name, processes, the Redis session store if any)
    let setups: [(&str, usize, Option<&str>); 5] = [
        ("1 process, sessions in memory", 1, None),
        ("1 process, Redis (async store)", 1, Some("async")),
        ("3 processes, Redis (async store)", 3, Some("async")),
        ("1 process, Redis (blocking store)", 1, Some("blocking")),
        ("3 processes, Redis (blocking store)", 3, Some("blocking")),
    ];
    // For profiling one setup: `TALARIA_SCALE_BENCH_ONLY=0` (say) runs only the first, and
    // prints no targets.
    let only: Option<usize> = std::env::var("TALARIA_SCALE_BENCH_ONLY").ok().and_then(|v| v.parse().ok());
    // results[setup][call]
    let mut results: Vec<Vec<Figures>> = Vec::new();
    for (index, (name, count, store)) in setups.into_iter().enumerate() {
        if only.is_some_and(|only| only != index) {
            continue;
        }
        let ports: Vec<u16> = (0..count).map(|_| free_port()).collect();
        // The processes share the machine's cores: each runs its executor on its share of
        // them (at least one thread), as a deployment sized to its machine would.
        let threads = (cores / count).max(1);
        let _processes: Vec<Process> = ports
            .iter()
            .map(|port| {
                Process::start_sized(*port, store.map(|_| url.as_str()), store.unwrap_or("async"), Some(threads))
            })
            .collect();
        let front = free_port();
        // nginx's template names three upstreams: a single process stands for all of them.
        let upstreams: Vec<u16> = (0..3).map(|i| ports[i % ports.len()]).collect();
        let _nginx = Nginx::start(front, &upstreams);
        let endpoint = format!("http://127.0.0.1:{front}/mcp");
        let mut per_call = Vec::new();
        for call in CALLS {
            let runs: Vec<Figures> = (0..rounds).map(|_| measure(&endpoint, call, calls, clients)).collect();
            let figures = Figures {
                p50_us: median(runs.iter().map(|f| f.p50_us).collect()),
                p99_us: median(runs.iter().map(|f| f.p99_us).collect()),
                calls_per_s: median(runs.iter().map(|f| f.calls_per_s).collect()),
            };
            println!(
                "  {name:<36} {:<24} p50 {:>6.0} us   p99 {:>6.0} us   {:>7.0} calls/s",
                call.what, figures.p50_us, figures.p99_us, figures.calls_per_s
            );
            per_call.push(figures);
        }
        results.push(per_call);
    }
    if only.is_some() {
        return;
    }
    println!("  targets (issue 21), against the in-memory baseline in this run:");
    let verdict = |ok: bool| if ok { "met" } else { "MISSED" };
    for (i, call) in CALLS.iter().enumerate() {
        let memory = results[0][i];
        for (kind, first) in [("async store", 1), ("blocking store", 3)] {
            let (redis_one, redis_three) = (results[first][i], results[first + 1][i]);
            let added = redis_one.p50_us - memory.p50_us;
            println!(
                "    {}, {kind}: p50 the Redis store adds: {added:.0} us (target at most 300 us): {}",
                call.what,
                verdict(added <= 300.0)
            );
            for (what, figures) in [("1 process", redis_one), ("3 processes", redis_three)] {
                let ratio = figures.calls_per_s / memory.calls_per_s;
                println!(
                    "    {}, {kind}: throughput, {what} on Redis: {ratio:.2}x (target at least 0.5x): {}",
                    call.what,
                    verdict(ratio >= 0.5)
                );
            }
        }
    }
}
