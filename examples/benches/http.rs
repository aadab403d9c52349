//! `tools/call` round trips over Streamable HTTP on 127.0.0.1: Talaria's blocking server (and
//! client) next to a floor measured in the same run, and the server's memory per idle session.
//!
//! ```text
//! cargo bench -p talaria-examples --bench http
//! TALARIA_BENCH_ROUNDS=1 TALARIA_BENCH_CALLS=2000 cargo bench -p talaria-examples --bench http   # smoke
//! TALARIA_BENCH_RUNS=raw-smol,raw cargo bench -p talaria-examples --bench http   # some runs (and the floors)
//! ```
//!
//! Every server is a child process of its own, so its CPU time (`utime + stime` from
//! `/proc/<pid>/stat`, threads that have exited included) can be read before and after each run
//! and divided by the run's calls:
//!
//! - `everything-server --transport http`: the blocking server (hyper on its own smol threads) with JSON replies,
//!   serving both eras on one endpoint;
//! - the same server with SSE replies (`HttpServerOptions::reply_mode(ReplyMode::Sse)`): the
//!   binary has no flag for it, so this bench runs itself again as that child
//!   (`TALARIA_BENCH_HTTP_SERVE=sse`);
//! - the floor, a minimal keep-alive HTTP/1.1 JSON echo written by hand on `std::net` with no
//!   SDK, on the socket stack the blocking server uses (blocking sockets, a thread per
//!   connection, `TCP_NODELAY`): it parses the request line, the headers and the
//!   `Content-Length` body, parses the JSON-RPC request as a `serde_json::Value` and answers
//!   `200 OK` with `Content-Length` and the echo's result (this bench again, as a child:
//!   `TALARIA_BENCH_HTTP_SERVE=floor`).
//!
//! "N clients" are N threads, each with a client of its own calling `echo` in a loop, the run's
//! calls shared among them, released together. The SDK runs use Talaria's blocking `Client`
//! (`ureq` underneath): in the legacy era each one its own session (`initialize` with protocol
//! 2025-06-18, so each also holds the GET stream the client opens), in the stateless era
//! (2026-07-28) each message its own POST. The floor runs use a hand-written keep-alive HTTP/1.1
//! client on `std::net` (`ureq` is not a dependency this crate's benches can use); the same
//! client also drives the SDK server in legacy JSON mode (its own session per thread, set up
//! with raw `initialize` and `notifications/initialized` POSTs), sending the same requests as
//! to the floor, so between those two rows only the server differs.
//!
//! Latency is per call: from before the request is built to after its answer is decoded (raw
//! client: parsed as a `serde_json::Value` and checked). Calls/s is calls over the round's wall
//! time. Each figure is the median over `TALARIA_BENCH_ROUNDS` rounds (default 3) of
//! `TALARIA_BENCH_CALLS` calls per run (default 3000), the runs taking turns within a round,
//! after one untimed warm-up round; `spread` is half the calls/s range over the rounds against
//! the median. Server and client CPU per call come from `USER_HZ` ticks (10 ms): over a short
//! run they are coarse. The client column is this process's CPU (all the client threads).
//!
//! Idle sessions: a fresh `everything-server --transport http` child, a few warm-up sessions,
//! then `VmRSS` before and after 1,000 more legacy sessions opened with raw `initialize` and
//! `notifications/initialized` POSTs over one keep-alive connection (so no client state and no
//! extra connection lives in the server); then a GET stream is opened on each of them (what
//! Talaria's client does after `initialized`) and `VmRSS` is read again.
//!
//! The smol server (`everything-server --transport http --runtime smol`, a task per connection)
//! is measured beside it: the raw client and the SDK client (legacy and stateless, JSON
//! replies, and SSE replies from this bench as a child, `TALARIA_BENCH_HTTP_SERVE=sse-smol`),
//! and its idle sessions the same way.
//! It runs on an executor with a thread per core (`talaria::smol::executor`). Its floor is the
//! same echo on its own socket stack (`TALARIA_BENCH_HTTP_SERVE=floor-smol`: async-io, the
//! accept loop and a task per connection on such an executor, as the smol server runs them);
//! its rows are read against both floors.
//!
//! The target: the faster server at 64 clients (by calls/s with the raw client, so that only
//! the server differs) at least 0.8x the floor on its own socket stack (the blocking server's
//! is the `std::net` floor, the smol server's the smol floor); it is shown against the
//! `std::net` floor too, and every run against both floors. `TALARIA_BENCH_RUNS` measures
//! some runs only (the floors always), and then skips the idle sessions.
// A bench measures wall-clock time and stops loudly if a peer misbehaves.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::cast_precision_loss)]

use std::fmt::Write as _;
use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::sync::Barrier;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use talaria::client::{Client, ClientOptions};
use talaria::core::http::reply::ReplyMode;
use talaria::core::schema::tools::CallToolResult;
use talaria::core::session::ClientMode;
use talaria::core::version::ProtocolVersion;
use talaria::http::{HttpServer, HttpServerOptions, SmolHttpServer};

#[path = "common/http_floor.rs"]
mod floor;
#[path = "common/http_idle.rs"]
mod idle;
#[path = "common/http_raw.rs"]
mod raw;
#[path = "common/util.rs"]
mod util;
use raw::{open_session, session_headers, Http, SESSION_VERSION};
use util::{env_usize, percentile, show, status_kib, verdict};

const SERVER: &str = env!("CARGO_BIN_EXE_everything-server");
/// Set on this bench's own children: which server to be (`sse`, `sse-smol`, `floor` or
/// `floor-smol`).
const CHILD: &str = "TALARIA_BENCH_HTTP_SERVE";
/// The legacy runs' protocol revision.
const VERSION: ProtocolVersion = ProtocolVersion::V2025_06_18;
/// What every call echoes.
const TEXT: &str = "hello, world";
/// The client counts of each kind of run.
const CLIENTS: [usize; 3] = [1, 16, 64];
/// The most clients of any run.
const MOST: usize = 64;
/// The issue's targets: calls/s at 64 clients against the floor's ...
const TARGET_RATIO: f64 = 0.8;
/// ... and the server's RSS growth per idle session.
const TARGET_IDLE_BYTES: f64 = 4096.0;
/// The idle sessions opened.
const IDLE: usize = 1000;
/// Sessions opened before the idle measurement's first reading.
const IDLE_WARM: usize = 16;

fn main() {
    if let Ok(role) = std::env::var(CHILD) {
        serve(&role);
        return;
    }
    let calls = env_usize("TALARIA_BENCH_CALLS", 3000).max(MOST);
    let rounds = env_usize("TALARIA_BENCH_ROUNDS", 3).max(1);
    let warm = (calls / 10).max(MOST);
    let began = Instant::now();
    let cores = std::thread::available_parallelism().map_or(0, std::num::NonZeroUsize::get);
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let load = load.split_whitespace().take(3).collect::<Vec<_>>().join(" ");
    println!("talaria http bench: echo tools/call round trips over Streamable HTTP on 127.0.0.1 ({cores} cores, load average {load})");
    println!("  {calls} calls per run per round, shared by the run's clients; median of {rounds} rounds, after a warm-up round of {warm} calls");
    println!(
        "  servers, each a child process: everything-server --transport http (blocking façade over hyper, JSON replies);"
    );
    println!("    the same server with SSE replies (this bench as a child); floor: hand-written keep-alive HTTP/1.1 JSON echo");
    println!("    on std::net (thread per connection, TCP_NODELAY, serde_json::Value), no SDK");
    println!(
        "  clients: N threads, each its own handle: talaria Client (ureq; legacy: a session each, protocol {VERSION};"
    );
    println!(
        "    stateless: {}), or a hand-written keep-alive HTTP/1.1 client on std::net (raw), sending the same",
        ProtocolVersion::V2026_07_28
    );
    println!(
        "    requests to the floor and to the SDK server: between the floor and the raw rows only the server differs"
    );
    println!(
        "  smol server: everything-server --transport http --runtime smol (a task per connection on an executor with a"
    );
    println!(
        "    thread per core, JSON replies; with SSE replies, this bench as a child); smol floor: the floor's echo on"
    );
    println!("    that stack (async-io, same executor)");

    let kinds = Kind::chosen();
    let mut rig = Rig::start();
    let mut runs = Vec::new();
    for clients in CLIENTS {
        for &kind in &kinds {
            runs.push((kind, clients));
        }
    }
    for &(kind, clients) in &runs {
        rig.measure(kind, clients, warm);
    }
    let mut samples: Vec<Vec<Sample>> = vec![Vec::with_capacity(rounds); runs.len()];
    for _ in 0..rounds {
        for (i, &(kind, clients)) in runs.iter().enumerate() {
            samples[i].push(rig.measure(kind, clients, calls));
        }
    }
    let peaks = rig.peaks();
    rig.stop();
    let summaries: Vec<Summary> = samples.iter().map(|s| Summary::of(s)).collect();
    // The idle sessions are measured in a full run only.
    let idle = (kinds.len() == Kind::ALL.len()).then(|| [idle::idle_sessions("blocking"), idle::idle_sessions("smol")]);

    let of =
        |kind: Kind, clients: usize| runs.iter().position(|&r| r == (kind, clients)).map(|i| &summaries[i]).unwrap();
    let chose = |kind: &Kind| kinds.contains(kind);
    println!();
    println!(
        "  {:<30} {:>7} {:>9} {:>7} {:>8} {:>8} {:>8} {:>11} {:>11}",
        "run", "clients", "calls/s", "spread", "x floor", "p50 us", "p99 us", "srv us/call", "cli us/call"
    );
    for clients in CLIENTS {
        let floor = of(Kind::Floor, clients);
        for &kind in &kinds {
            let s = of(kind, clients);
            println!(
                "  {:<30} {:>7} {:>9.0} {:>6.1}% {:>7.2}x {:>8.1} {:>8.1} {:>11.1} {:>11.1}",
                kind.label(),
                clients,
                s.calls_per_sec,
                s.spread * 100.0,
                s.calls_per_sec / floor.calls_per_sec,
                s.p50_us,
                s.p99_us,
                s.server_us,
                s.client_us,
            );
        }
        println!();
    }
    // The faster server (by calls/s, both with the raw client so that only the server
    // differs) against the floor on its own socket stack, and against the other floor too.
    println!("  target (issue: the faster of the two servers at >= {TARGET_RATIO:.2}x the floor, {MOST} clients, raw client):");
    let floor = of(Kind::Floor, MOST);
    let floor_smol = of(Kind::FloorSmol, MOST);
    let servers = [(Kind::Raw, "std::net", floor), (Kind::RawSmol, "smol", floor_smol)];
    let faster = servers
        .into_iter()
        .filter(|(kind, _, _)| chose(kind))
        .max_by(|a, b| of(a.0, MOST).calls_per_sec.total_cmp(&of(b.0, MOST).calls_per_sec));
    if let Some((kind, stack, own)) = faster {
        let rate = of(kind, MOST).calls_per_sec;
        println!("    the faster server: {} at {rate:.0} calls/s", kind.label());
        for (which, against) in
            [(format!("its own stack's ({stack}) floor"), own), ("the std::net floor".to_owned(), floor)]
        {
            let ratio = rate / against.calls_per_sec;
            println!(
                "    calls/s at {MOST} clients >= {TARGET_RATIO:.2}x {which:<28} {ratio:>5.2}x  {}",
                verdict(ratio >= TARGET_RATIO)
            );
        }
    }
    println!("  every run at {MOST} clients against both floors (SDK client runs include the client's own cost):");
    for kind in kinds.iter().copied().filter(|&k| !matches!(k, Kind::Floor | Kind::FloorSmol)) {
        let run = of(kind, MOST).calls_per_sec;
        println!(
            "    {:<32} {:>5.2}x std::net floor  {:>5.2}x smol floor",
            kind.label(),
            run / floor.calls_per_sec,
            run / floor_smol.calls_per_sec
        );
    }
    if let Some([idle, idle_smol]) = &idle {
        idle.report("blocking");
        idle_smol.report("smol");
    }
    println!();
    let peaks: Vec<String> = peaks.iter().map(|(name, kib)| format!("{name} {} KiB", show(*kib))).collect();
    println!("  peak RSS (VmHWM) after the timed rounds: {}", peaks.join(", "));
    println!("  took {:.1} s", began.elapsed().as_secs_f64());
}

// ---- the runs ---------------------------------------------------------------------------

/// What a run's clients are and which server they talk to.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// The raw client against the floor.
    Floor,
    /// The raw client against the SDK server, legacy sessions, JSON replies.
    Raw,
    LegacyJson,
    LegacySse,
    StatelessJson,
    StatelessSse,
    /// The raw client against the floor on the smol server's stack (async-io, a task per
    /// connection on smol's executor).
    FloorSmol,
    /// The raw client against the smol server, legacy sessions, JSON replies.
    RawSmol,
    LegacyJsonSmol,
    StatelessJsonSmol,
    LegacySseSmol,
    StatelessSseSmol,
}

impl Kind {
    const ALL: [Self; 12] = [
        Self::Floor,
        Self::Raw,
        Self::LegacyJson,
        Self::LegacySse,
        Self::StatelessJson,
        Self::StatelessSse,
        Self::FloorSmol,
        Self::RawSmol,
        Self::LegacyJsonSmol,
        Self::StatelessJsonSmol,
        Self::LegacySseSmol,
        Self::StatelessSseSmol,
    ];

    /// The runs `TALARIA_BENCH_RUNS` names (comma-separated [`Kind::key`]s; every run when it
    /// is unset), the two floors always among them since every ratio is read against them.
    fn chosen() -> Vec<Self> {
        let Ok(wanted) = std::env::var("TALARIA_BENCH_RUNS") else { return Self::ALL.to_vec() };
        let wanted: Vec<&str> = wanted.split(',').map(str::trim).collect();
        for key in &wanted {
            assert!(
                Self::ALL.iter().any(|k| k.key() == *key),
                "TALARIA_BENCH_RUNS: unknown run {key:?}; the runs are {}",
                Self::ALL.map(Self::key).join(",")
            );
        }
        let floor = |k: &Self| matches!(k, Self::Floor | Self::FloorSmol);
        Self::ALL.into_iter().filter(|k| floor(k) || wanted.contains(&k.key())).collect()
    }

    /// The run's name in `TALARIA_BENCH_RUNS`.
    const fn key(self) -> &'static str {
        match self {
            Self::Floor => "floor",
            Self::Raw => "raw",
            Self::LegacyJson => "legacy-json",
            Self::LegacySse => "legacy-sse",
            Self::StatelessJson => "stateless-json",
            Self::StatelessSse => "stateless-sse",
            Self::FloorSmol => "floor-smol",
            Self::RawSmol => "raw-smol",
            Self::LegacyJsonSmol => "legacy-json-smol",
            Self::StatelessJsonSmol => "stateless-json-smol",
            Self::LegacySseSmol => "legacy-sse-smol",
            Self::StatelessSseSmol => "stateless-sse-smol",
        }
    }

    const fn label(self) -> &'static str {
        match self {
            Self::Floor => "floor (raw client, bare echo)",
            Self::Raw => "raw client, legacy JSON",
            Self::LegacyJson => "Client, legacy JSON",
            Self::LegacySse => "Client, legacy SSE",
            Self::StatelessJson => "Client, stateless JSON",
            Self::StatelessSse => "Client, stateless SSE",
            Self::FloorSmol => "smol floor (raw client, echo)",
            Self::RawSmol => "smol: raw client, legacy JSON",
            Self::LegacyJsonSmol => "smol: Client, legacy JSON",
            Self::StatelessJsonSmol => "smol: Client, stateless JSON",
            Self::LegacySseSmol => "smol: Client, legacy SSE",
            Self::StatelessSseSmol => "smol: Client, stateless SSE",
        }
    }
}

/// The server children and every run's clients, [`MOST`] of each kind.
struct Rig {
    json: Server,
    sse: Server,
    floor: Server,
    floor_smol: Server,
    smol: Server,
    sse_smol: Server,
    raw_smol: Vec<RawClient>,
    legacy_smol: Vec<Client>,
    stateless_smol: Vec<Client>,
    legacy_sse_smol: Vec<Client>,
    stateless_sse_smol: Vec<Client>,
    floor_clients: Vec<RawClient>,
    floor_smol_clients: Vec<RawClient>,
    raw_clients: Vec<RawClient>,
    legacy_json: Vec<Client>,
    legacy_sse: Vec<Client>,
    stateless_json: Vec<Client>,
    stateless_sse: Vec<Client>,
}

impl Rig {
    fn start() -> Self {
        let json = Server::start(Command::new(SERVER).args(["--transport", "http", "--port", "0"]));
        let this = std::env::current_exe().unwrap();
        let sse = Server::start(Command::new(&this).env(CHILD, "sse"));
        let floor = Server::start(Command::new(&this).env(CHILD, "floor"));
        let floor_smol = Server::start(Command::new(&this).env(CHILD, "floor-smol"));
        let smol =
            Server::start(Command::new(SERVER).args(["--transport", "http", "--port", "0", "--runtime", "smol"]));
        let sse_smol = Server::start(Command::new(&this).env(CHILD, "sse-smol"));
        let clients = |server: &Server, mode: ClientMode| -> Vec<Client> {
            (0..MOST)
                .map(|_| {
                    let mut options = ClientOptions::new("bench", "1").mode(mode);
                    if mode == ClientMode::Legacy {
                        options = options.versions(vec![VERSION]);
                    }
                    Client::http(&server.url, &[], options).unwrap()
                })
                .collect()
        };
        let legacy_json = clients(&json, ClientMode::Legacy);
        assert_eq!(legacy_json[0].protocol_version(), VERSION);
        assert_eq!(VERSION.as_str(), SESSION_VERSION, "the raw client's sessions speak the SDK runs' revision");
        let stateless_json = clients(&json, ClientMode::Stateless);
        assert_eq!(stateless_json[0].protocol_version(), ProtocolVersion::V2026_07_28);
        let legacy_sse = clients(&sse, ClientMode::Legacy);
        let stateless_sse = clients(&sse, ClientMode::Stateless);
        let floor_clients = (0..MOST).map(|_| RawClient::open(&floor.addr, false)).collect();
        let floor_smol_clients = (0..MOST).map(|_| RawClient::open(&floor_smol.addr, false)).collect();
        let raw_clients = (0..MOST).map(|_| RawClient::open(&json.addr, true)).collect();
        let raw_smol = (0..MOST).map(|_| RawClient::open(&smol.addr, true)).collect();
        let legacy_smol = clients(&smol, ClientMode::Legacy);
        let stateless_smol = clients(&smol, ClientMode::Stateless);
        let legacy_sse_smol = clients(&sse_smol, ClientMode::Legacy);
        let stateless_sse_smol = clients(&sse_smol, ClientMode::Stateless);
        Self {
            json,
            sse,
            floor,
            floor_smol,
            smol,
            sse_smol,
            raw_smol,
            legacy_smol,
            stateless_smol,
            legacy_sse_smol,
            stateless_sse_smol,
            floor_clients,
            floor_smol_clients,
            raw_clients,
            legacy_json,
            legacy_sse,
            stateless_json,
            stateless_sse,
        }
    }

    /// One run: `calls` calls shared by `clients` threads.
    fn measure(&mut self, kind: Kind, clients: usize, calls: usize) -> Sample {
        let (json, sse, floor, smol) = (self.json.pid, self.sse.pid, self.floor.pid, self.smol.pid);
        let (floor_smol, sse_smol) = (self.floor_smol.pid, self.sse_smol.pid);
        match kind {
            Kind::Floor => drive_raw(&mut self.floor_clients[..clients], calls, floor),
            Kind::Raw => drive_raw(&mut self.raw_clients[..clients], calls, json),
            Kind::LegacyJson => drive_sdk(&self.legacy_json[..clients], calls, json),
            Kind::LegacySse => drive_sdk(&self.legacy_sse[..clients], calls, sse),
            Kind::StatelessJson => drive_sdk(&self.stateless_json[..clients], calls, json),
            Kind::StatelessSse => drive_sdk(&self.stateless_sse[..clients], calls, sse),
            Kind::FloorSmol => drive_raw(&mut self.floor_smol_clients[..clients], calls, floor_smol),
            Kind::RawSmol => drive_raw(&mut self.raw_smol[..clients], calls, smol),
            Kind::LegacyJsonSmol => drive_sdk(&self.legacy_smol[..clients], calls, smol),
            Kind::StatelessJsonSmol => drive_sdk(&self.stateless_smol[..clients], calls, smol),
            Kind::LegacySseSmol => drive_sdk(&self.legacy_sse_smol[..clients], calls, sse_smol),
            Kind::StatelessSseSmol => drive_sdk(&self.stateless_sse_smol[..clients], calls, sse_smol),
        }
    }

    fn peaks(&self) -> [(&'static str, Option<u64>); 6] {
        [
            ("everything-server (JSON)", status_kib(self.json.pid, "VmHWM:")),
            ("smol everything-server", status_kib(self.smol.pid, "VmHWM:")),
            ("SSE server child", status_kib(self.sse.pid, "VmHWM:")),
            ("smol SSE server child", status_kib(self.sse_smol.pid, "VmHWM:")),
            ("floor child", status_kib(self.floor.pid, "VmHWM:")),
            ("smol floor child", status_kib(self.floor_smol.pid, "VmHWM:")),
        ]
    }

    /// Closes the SDK clients (legacy ones end their sessions), then ends the servers.
    fn stop(self) {
        let Self {
            json,
            sse,
            floor,
            floor_smol,
            smol,
            sse_smol,
            raw_smol,
            legacy_smol,
            stateless_smol,
            legacy_sse_smol,
            stateless_sse_smol,
            floor_clients,
            floor_smol_clients,
            raw_clients,
            legacy_json,
            legacy_sse,
            stateless_json,
            stateless_sse,
        } = self;
        let sdk = legacy_json.iter().chain(&legacy_sse).chain(&stateless_json).chain(&stateless_sse);
        let smol_sdk = legacy_smol.iter().chain(&stateless_smol).chain(&legacy_sse_smol).chain(&stateless_sse_smol);
        for client in sdk.chain(smol_sdk) {
            client.close();
        }
        drop((floor_clients, floor_smol_clients, raw_clients, raw_smol));
        for server in [json, sse, floor, floor_smol, smol, sse_smol] {
            server.stop();
        }
    }
}

fn drive_raw(clients: &mut [RawClient], calls: usize, server: u32) -> Sample {
    drive(clients.iter_mut(), calls, server, |client: &mut &mut RawClient| client.call())
}

fn drive_sdk(clients: &[Client], calls: usize, server: u32) -> Sample {
    drive(clients.iter(), calls, server, |client: &mut &Client| {
        check(&client.call_tool("echo", json!({"text": TEXT})).unwrap());
    })
}

/// `calls` calls shared by one thread per worker, released together; latency per call, and
/// `server`'s and this process's CPU over the run.
fn drive<W: Send>(
    workers: impl ExactSizeIterator<Item = W>,
    calls: usize,
    server: u32,
    call: impl Fn(&mut W) + Sync,
) -> Sample {
    let count = workers.len();
    let gate = Barrier::new(count + 1);
    let (gate, call) = (&gate, &call);
    std::thread::scope(|scope| {
        let threads: Vec<_> = workers
            .enumerate()
            .map(|(i, mut worker)| {
                scope.spawn(move || {
                    let n = calls / count + usize::from(i < calls % count);
                    let mut latencies = Vec::with_capacity(n);
                    gate.wait();
                    for _ in 0..n {
                        let sent = Instant::now();
                        call(&mut worker);
                        latencies.push(sent.elapsed());
                    }
                    latencies
                })
            })
            .collect();
        gate.wait();
        let (server_before, client_before) = (cpu_ticks(&server.to_string()), cpu_ticks("self"));
        let start = Instant::now();
        let latencies: Vec<Duration> = threads.into_iter().flat_map(|t| t.join().unwrap()).collect();
        let wall = start.elapsed();
        let (server_after, client_after) = (cpu_ticks(&server.to_string()), cpu_ticks("self"));
        let per_call = |ticks: u64| ticks as f64 * 1e6 / ticks_per_sec() / calls as f64;
        Sample::new(wall, latencies, per_call(server_after - server_before), per_call(client_after - client_before))
    })
}

fn check(result: &CallToolResult) {
    assert_eq!(result.content.first().and_then(|c| c.as_text()), Some(TEXT));
}

// ---- figures ----------------------------------------------------------------------------

/// One run's round.
#[derive(Clone, Copy)]
struct Sample {
    calls_per_sec: f64,
    p50: Duration,
    p99: Duration,
    server_us: f64,
    client_us: f64,
}

impl Sample {
    fn new(wall: Duration, mut latencies: Vec<Duration>, server_us: f64, client_us: f64) -> Self {
        latencies.sort_unstable();
        Self {
            calls_per_sec: latencies.len() as f64 / wall.as_secs_f64(),
            p50: percentile(&latencies, 0.50),
            p99: percentile(&latencies, 0.99),
            server_us,
            client_us,
        }
    }
}

/// Medians over the rounds of each figure.
struct Summary {
    calls_per_sec: f64,
    p50_us: f64,
    p99_us: f64,
    server_us: f64,
    client_us: f64,
    /// Half the min-max range of calls/s over the rounds, as a fraction of the median.
    spread: f64,
}

impl Summary {
    fn of(samples: &[Sample]) -> Self {
        let median = |f: &dyn Fn(&Sample) -> f64| {
            let mut xs: Vec<f64> = samples.iter().map(f).collect();
            xs.sort_by(f64::total_cmp);
            xs[xs.len() / 2]
        };
        let rates = samples.iter().map(|s| s.calls_per_sec);
        let (lo, hi) = rates.fold((f64::MAX, 0.0_f64), |(lo, hi), r| (lo.min(r), hi.max(r)));
        let calls_per_sec = median(&|s| s.calls_per_sec);
        Self {
            calls_per_sec,
            p50_us: median(&|s| s.p50.as_secs_f64() * 1e6),
            p99_us: median(&|s| s.p99.as_secs_f64() * 1e6),
            server_us: median(&|s| s.server_us),
            client_us: median(&|s| s.client_us),
            spread: (hi - lo) / 2.0 / calls_per_sec,
        }
    }
}

/// `utime + stime` of process `pid` (or `self`), threads that have exited included, in ticks.
fn cpu_ticks(pid: &str) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // After the command name (which may hold spaces): state is field 3, utime 14, stime 15.
    let fields: Vec<&str> = stat[stat.rfind(')').unwrap() + 1..].split_whitespace().collect();
    fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap()
}

/// `USER_HZ`, the unit of [`cpu_ticks`].
fn ticks_per_sec() -> f64 {
    static HZ: std::sync::OnceLock<f64> = std::sync::OnceLock::new();
    *HZ.get_or_init(|| {
        Command::new("getconf")
            .arg("CLK_TCK")
            .output()
            .ok()
            .and_then(|out| String::from_utf8(out.stdout).ok()?.trim().parse().ok())
            .unwrap_or(100.0)
    })
}

// ---- the server children ----------------------------------------------------------------

/// A server child and where it listens.
struct Server {
    child: Child,
    pid: u32,
    /// `127.0.0.1:PORT`.
    addr: String,
    /// `http://127.0.0.1:PORT/mcp`.
    url: String,
}

impl Server {
    /// Starts `command`, reads its URL from its first stderr line (forwarding the rest).
    fn start(command: &mut Command) -> Self {
        let mut child = command.stdin(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
        let mut stderr = BufReader::new(child.stderr.take().unwrap());
        let mut line = String::new();
        stderr.read_line(&mut line).unwrap();
        let url = line.trim().rsplit(' ').next().unwrap().to_owned();
        let addr = url.strip_prefix("http://").and_then(|u| u.strip_suffix("/mcp"));
        let addr = addr.unwrap_or_else(|| panic!("a server child said {line:?}")).to_owned();
        std::thread::spawn(move || {
            for line in stderr.lines() {
                let Ok(line) = line else { break };
                eprintln!("{line}");
            }
        });
        let pid = child.id();
        Self { child, pid, addr, url }
    }

    /// Ends the server (it serves until killed).
    fn stop(mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }
}

/// This bench as a child: the SDK server with SSE replies, or the floor.
fn serve(role: &str) {
    match role {
        "sse" => {
            let options = HttpServerOptions::default().reply_mode(ReplyMode::Sse);
            let server = talaria_examples::everything::server();
            let listening = HttpServer::bind(&server, "127.0.0.1:0", options).unwrap();
            eprintln!("http bench SSE server: listening on http://{}/mcp", listening.local_addr());
            listening.wait();
        }
        "sse-smol" => {
            let options = HttpServerOptions::default().reply_mode(ReplyMode::Sse);
            let server = talaria_examples::everything::server();
            let cores = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
            let executor = talaria::smol::executor(cores);
            let listening = SmolHttpServer::bind_on(&executor, &server, "127.0.0.1:0", options).unwrap();
            eprintln!("http bench smol SSE server: listening on http://{}/mcp", listening.local_addr());
            smol::block_on(listening.wait());
        }
        "floor" => {
            let listener = TcpListener::bind("127.0.0.1:0").unwrap();
            eprintln!("http bench floor: listening on http://{}/mcp", listener.local_addr().unwrap());
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                std::thread::spawn(move || floor::serve_blocking(stream));
            }
        }
        "floor-smol" => {
            let listener = smol::Async::<TcpListener>::bind(([127, 0, 0, 1], 0)).unwrap();
            eprintln!("http bench smol floor: listening on http://{}/mcp", listener.get_ref().local_addr().unwrap());
            // As the smol everything-server: the accept loop and every connection are tasks on
            // an executor run by every core; this thread only waits.
            let cores = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
            let executor = talaria::smol::executor(cores);
            let spawning = std::sync::Arc::clone(&executor);
            smol::block_on(executor.spawn(async move {
                loop {
                    if let Ok((stream, _)) = listener.accept().await {
                        spawning.spawn(floor::serve_async(stream)).detach();
                    }
                }
            }));
        }
        other => panic!("{CHILD}={other:?}: expected sse, sse-smol, floor or floor-smol"),
    }
}

// ---- the raw client ---------------------------------------------------------------------

/// A raw client: one connection, one legacy session (a made-up id against the floor), its
/// request ids.
struct RawClient {
    http: Http,
    /// The session's headers, sent with every call.
    headers: String,
    next_id: u64,
    body: String,
}

impl RawClient {
    /// Connects; `handshake`: opens a legacy session with raw POSTs (the floor has none, so it
    /// is sent the same headers with a made-up id of the same length).
    fn open(addr: &str, handshake: bool) -> Self {
        let mut http = Http::connect(addr);
        let session = if handshake { open_session(&mut http) } else { "0".repeat(32) };
        let headers = session_headers(&session);
        Self { http, headers, next_id: 1, body: String::with_capacity(256) }
    }

    /// One echo call, its answer parsed and checked.
    fn call(&mut self) {
        let id = self.next_id;
        self.next_id += 1;
        self.body.clear();
        write!(
            self.body,
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"echo","arguments":{{"text":"{TEXT}"}}}}}}"#
        )
        .unwrap();
        let status = self.http.post(&self.headers, self.body.as_bytes());
        assert_eq!(status, 200, "{}", String::from_utf8_lossy(&self.http.body));
        let answer: Value = serde_json::from_slice(&self.http.body).unwrap();
        assert_eq!(answer["id"], id, "{answer}");
        assert_eq!(answer["result"]["content"][0]["text"], TEXT, "{answer}");
    }
}
