//! `tools/call` round trips over Streamable HTTP on 127.0.0.1: Talaria's HTTP server, run
//! both ways (its own threads, a smol executor), driven by a hand-written client and by the
//! SDK's blocking `Client`, next to a hyper-bare floor measured in the same run; and the
//! server's memory per idle session.
//!
//! ```text
//! cargo bench -p talaria-examples --bench http
//! TALARIA_BENCH_ROUNDS=1 TALARIA_BENCH_CALLS=500 cargo bench -p talaria-examples --bench http   # CI's smoke
//! TALARIA_BENCH_RUNS=raw-smol,raw cargo bench -p talaria-examples --bench http   # some runs (and the floor)
//! ```
//!
//! Every server is a child process of its own, so its CPU time can be read before and after
//! each run and divided by the run's calls. Both Talaria servers are the same code, hyper 1.x
//! HTTP/1.1 on smol (`adapters/src/http/server.rs`: `smol_hyper`'s `FuturesIo` and
//! `SmolTimer`, an accept loop on async-io, a task per connection, `TCP_NODELAY`); they differ
//! in what runs the tasks:
//!
//! - `everything-server --transport http`: `HttpServer`, an executor of its own run by as many
//!   threads as the machine has cores (2 to 8); JSON replies, both eras on one endpoint;
//! - `everything-server --transport http --runtime smol`: `SmolHttpServer` on
//!   `talaria::smol::executor` (a thread per core); JSON replies;
//! - each with SSE replies (`HttpServerOptions::reply_mode(ReplyMode::Sse)`): the binary has no
//!   flag for it, so this bench runs itself again as that child (`TALARIA_BENCH_HTTP_SERVE=sse`
//!   and `sse-smol`);
//! - the floor, hyper-bare (`TALARIA_BENCH_HTTP_SERVE=floor`, `common/http_hyper_floor.rs`):
//!   hyper's `http1` server on smol run the way `HttpServer` runs it (same thread count, accept
//!   loop, task per connection, `FuturesIo`, `SmolTimer`, `TCP_NODELAY`), whose service
//!   collects the body, parses the JSON-RPC request as a `serde_json::Value` and answers `200`
//!   `application/json` with what `everything-server`'s `echo` answers; no MCP, no sessions;
//! - a reference row, not a target's floor: the same echo hand-written on `std::net`, no HTTP
//!   library, a thread per connection (`TALARIA_BENCH_HTTP_SERVE=floor-std`,
//!   `common/http_floor.rs`), which shows what hyper itself costs.
//!
//! "N clients" are N threads, each with a client of its own calling `echo` in a loop, the run's
//! calls shared among them, released together. The SDK runs use Talaria's blocking `Client`
//! (`ureq` underneath): in the legacy era each one its own session (`initialize` with protocol
//! 2025-06-18, so each also holds the GET stream the client opens), in the stateless era
//! (2026-07-28) each message its own POST. The `raw` runs and the floor rows use a hand-written
//! keep-alive HTTP/1.1 client on `std::net` (`common/http_raw.rs`): against a Talaria server,
//! a legacy session per thread, opened with raw `initialize` and `notifications/initialized`
//! POSTs; against the floors, the same headers with a made-up session id. It sends the same
//! requests to all and checks every answer the same way (status 200, the id, the echoed
//! text), so between a floor row and a `raw` row only the server differs.
//!
//! Latency is per call: from before the request is built to after its answer is decoded (raw
//! client: parsed as a `serde_json::Value` and checked). Calls/s is calls over the round's wall
//! time. Each figure is the median over `TALARIA_BENCH_ROUNDS` rounds (default 3) of
//! `TALARIA_BENCH_CALLS` calls per run (default 3000), the runs taking turns within a round,
//! after one untimed warm-up round; `spread` is half the calls/s range over the rounds against
//! the median, `x floor` the run's calls/s over the hyper floor's at the same client count.
//! Server CPU per call is the CPU time of the server child's threads over the run, summed from
//! `/proc/<pid>/task/*/schedstat` (nanoseconds; the servers' threads live across the runs),
//! or, where the kernel keeps no schedstat or a thread ended during the run, `utime + stime`
//! from `/proc/<pid>/stat` (`USER_HZ` ticks, 10 ms: coarse over a short run). The client
//! column is this process's `utime + stime` (all the client threads, which end with each run),
//! so it is coarse in short runs.
//!
//! Idle sessions: for each server, a fresh `everything-server` child, a few warm-up sessions,
//! then `VmRSS` before and after 1,000 more legacy sessions opened with raw `initialize` and
//! `notifications/initialized` POSTs over one keep-alive connection (so no client state and no
//! extra connection lives in the server); then a GET stream is opened on each of them (what
//! Talaria's client does after `initialized`) and `VmRSS` is read again.
//!
//! The targets (issue 19), all at 64 clients, ratios of medians from the same run:
//!
//! - the faster of the two servers (by calls/s with the raw client, legacy JSON replies) at
//!   least 0.85x the hyper floor;
//! - that same run's server CPU per call at most 15 us;
//! - the server's RSS growth per idle session at most 4 KiB;
//! - the blocking SDK `Client` (legacy, JSON replies, `HttpServer`) at least 0.5x the raw client
//!   against the same server.
//!
//! `TALARIA_BENCH_RUNS` measures some runs only (the hyper floor always), and then skips the
//! idle sessions; a target whose runs were not measured says so.
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
#[path = "common/http_hyper_floor.rs"]
mod hyper_floor;
#[path = "common/http_idle.rs"]
mod idle;
#[path = "common/proc_cpu.rs"]
mod proc_cpu;
#[path = "common/http_raw.rs"]
mod raw;
#[path = "common/util.rs"]
mod util;
use proc_cpu::{cpu_ticks, ticks_ns, ServerCpu};
use raw::{open_session, session_headers, Http, SESSION_VERSION};
use util::{env_usize, percentile, show, status_kib, verdict};

const SERVER: &str = env!("CARGO_BIN_EXE_everything-server");
/// Set on this bench's own children: which server to be (`sse`, `sse-smol`, `floor` or
/// `floor-std`).
const CHILD: &str = "TALARIA_BENCH_HTTP_SERVE";
/// The legacy runs' protocol revision.
const VERSION: ProtocolVersion = ProtocolVersion::V2025_06_18;
/// What every call echoes.
const TEXT: &str = "hello, world";
/// The client counts of each kind of run.
const CLIENTS: [usize; 3] = [1, 16, 64];
/// The most clients of any run.
const MOST: usize = 64;
/// The issue's targets, at [`MOST`] clients: the faster server's calls/s against the hyper
/// floor's (both with the raw client) ...
const TARGET_RATIO: f64 = 0.85;
/// ... that run's server CPU per call, in microseconds ...
const TARGET_SERVER_US: f64 = 15.0;
/// ... the server's RSS growth per idle session ...
const TARGET_IDLE_BYTES: f64 = 4096.0;
/// ... and the blocking SDK `Client`'s calls/s against the raw client's (legacy JSON, the
/// blocking server).
const TARGET_CLIENT_RATIO: f64 = 0.5;
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
    println!("  servers, each a child process, all hyper 1.x HTTP/1.1 on smol (TCP_NODELAY, a task per connection):");
    println!(
        "    everything-server --transport http (HttpServer: its own executor on 2..8 threads, here {}),",
        cores.clamp(2, 8)
    );
    println!("    everything-server --transport http --runtime smol (SmolHttpServer on talaria::smol::executor, a thread per core),");
    println!(
        "    each also with SSE replies (this bench as a child); JSON replies otherwise, both eras on one endpoint"
    );
    println!("  floor: hyper-bare, hyper's http1 server run as HttpServer runs it, echoing with serde_json::Value; no MCP, no");
    println!("    sessions (this bench as a child); reference row: the same echo hand-written on std::net, thread per connection");
    println!(
        "  clients: N threads, each its own handle: talaria Client (ureq; legacy: a session each, protocol {VERSION};"
    );
    println!(
        "    stateless: {}), or a hand-written keep-alive HTTP/1.1 client on std::net (raw), sending the same",
        ProtocolVersion::V2026_07_28
    );
    println!("    requests to the floors and to Talaria's servers: between the floor and the raw rows only the server differs");

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

    let of = |kind: Kind, clients: usize| runs.iter().position(|&r| r == (kind, clients)).map(|i| &summaries[i]);
    println!();
    println!(
        "  {:<34} {:>7} {:>9} {:>7} {:>8} {:>8} {:>8} {:>11} {:>11}",
        "run", "clients", "calls/s", "spread", "x floor", "p50 us", "p99 us", "srv us/call", "cli us/call"
    );
    for clients in CLIENTS {
        let floor = of(Kind::Floor, clients).unwrap();
        for &kind in &kinds {
            let s = of(kind, clients).unwrap();
            println!(
                "  {:<34} {:>7} {:>9.0} {:>6.1}% {:>7.2}x {:>8.1} {:>8.1} {:>11.1} {:>11.1}",
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
    let coarse = samples.iter().flatten().filter(|s| !s.server_precise).count();
    if coarse > 0 {
        println!("  (server CPU from USER_HZ ticks in {coarse} of the timed runs: schedstat could not be read, or a thread ended)");
    }
    targets(&of);
    if let Some([idle, idle_smol]) = &idle {
        idle.report("blocking");
        idle_smol.report("smol");
    } else {
        println!("    RSS per idle session <= {TARGET_IDLE_BYTES:.0} B: not measured (TALARIA_BENCH_RUNS picks some runs only)");
    }
    println!();
    let peaks: Vec<String> = peaks.iter().map(|(name, kib)| format!("{name} {} KiB", show(*kib))).collect();
    println!("  peak RSS (VmHWM) after the timed rounds: {}", peaks.join(", "));
    println!("  took {:.1} s", began.elapsed().as_secs_f64());
}

/// The issue's targets at [`MOST`] clients, each with its figure and verdict (all but the idle
/// sessions', which [`idle::Idle::report`] prints), from the runs' summaries (`of`: `None` for
/// a run not measured).
fn targets<'a>(of: &dyn Fn(Kind, usize) -> Option<&'a Summary>) {
    let line = |what: &str, figure: String, met: bool| println!("    {what:<63}{figure:>9}  {}", verdict(met));
    let missing = |what: &str, needs: &[Kind]| {
        let unmeasured: Vec<&str> = needs.iter().filter(|&&k| of(k, MOST).is_none()).map(|k| k.key()).collect();
        println!("    {what}: not measured (TALARIA_BENCH_RUNS leaves out {})", unmeasured.join(" and "));
    };
    println!("  targets at {MOST} clients (issue 19; ratios of medians over the rounds of this run):");
    let floor = of(Kind::Floor, MOST).unwrap();
    // The faster server, both driven by the raw client with legacy JSON replies, so that
    // between it and the floor only the server differs.
    let faster = [Kind::Raw, Kind::RawSmol]
        .into_iter()
        .filter_map(|kind| Some((kind, of(kind, MOST)?)))
        .max_by(|a, b| a.1.calls_per_sec.total_cmp(&b.1.calls_per_sec));
    if let Some((kind, server)) = faster {
        let ratio = server.calls_per_sec / floor.calls_per_sec;
        let what = format!("server calls/s >= {TARGET_RATIO:.2}x the hyper floor's (the faster server)");
        line(&what, format!("{ratio:.2}x"), ratio >= TARGET_RATIO);
        let what = format!("server CPU per call <= {TARGET_SERVER_US:.0} us (the same run)");
        line(&what, format!("{:.1} us", server.server_us), server.server_us <= TARGET_SERVER_US);
        println!(
            "      (the faster server: {}, {:.0} calls/s; the floor {:.0} calls/s, {:.1} us server CPU per call)",
            kind.label(),
            server.calls_per_sec,
            floor.calls_per_sec,
            floor.server_us
        );
    } else {
        missing("the server against the floor, and its CPU per call", &[Kind::Raw, Kind::RawSmol]);
    }
    if let (Some(client), Some(raw)) = (of(Kind::LegacyJson, MOST), of(Kind::Raw, MOST)) {
        let ratio = client.calls_per_sec / raw.calls_per_sec;
        let what = format!("blocking Client calls/s >= {TARGET_CLIENT_RATIO:.2}x the raw client's");
        line(&what, format!("{ratio:.2}x"), ratio >= TARGET_CLIENT_RATIO);
        println!(
            "      (blocking server, legacy JSON: {} {:.0} calls/s, {} {:.0}; client CPU {:.1} against {:.1} us per call)",
            Kind::LegacyJson.label(),
            client.calls_per_sec,
            Kind::Raw.label(),
            raw.calls_per_sec,
            client.client_us,
            raw.client_us
        );
    } else {
        missing("the blocking Client against the raw client", &[Kind::LegacyJson, Kind::Raw]);
    }
    if let Some(std) = of(Kind::FloorStd, MOST) {
        println!(
            "    reference (no target): the hyper floor at {:.2}x the hand-written std::net echo's calls/s, {:.1} against {:.1} us server CPU per call",
            floor.calls_per_sec / std.calls_per_sec,
            floor.server_us,
            std.server_us
        );
    }
}

// ---- the runs ---------------------------------------------------------------------------

/// What a run's clients are and which server they talk to.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// The raw client against the hyper-bare floor.
    Floor,
    /// The raw client against the hand-written `std::net` echo (a reference, no target).
    FloorStd,
    /// The raw client against the blocking server, legacy sessions, JSON replies.
    Raw,
    LegacyJson,
    LegacySse,
    StatelessJson,
    StatelessSse,
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
        Self::FloorStd,
        Self::Raw,
        Self::LegacyJson,
        Self::LegacySse,
        Self::StatelessJson,
        Self::StatelessSse,
        Self::RawSmol,
        Self::LegacyJsonSmol,
        Self::StatelessJsonSmol,
        Self::LegacySseSmol,
        Self::StatelessSseSmol,
    ];

    /// The runs `TALARIA_BENCH_RUNS` names (comma-separated [`Kind::key`]s; every run when it
    /// is unset), the floor always among them since every ratio is read against it.
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
        Self::ALL.into_iter().filter(|k| *k == Self::Floor || wanted.contains(&k.key())).collect()
    }

    /// The run's name in `TALARIA_BENCH_RUNS`.
    const fn key(self) -> &'static str {
        match self {
            Self::Floor => "floor",
            Self::FloorStd => "floor-std",
            Self::Raw => "raw",
            Self::LegacyJson => "legacy-json",
            Self::LegacySse => "legacy-sse",
            Self::StatelessJson => "stateless-json",
            Self::StatelessSse => "stateless-sse",
            Self::RawSmol => "raw-smol",
            Self::LegacyJsonSmol => "legacy-json-smol",
            Self::StatelessJsonSmol => "stateless-json-smol",
            Self::LegacySseSmol => "legacy-sse-smol",
            Self::StatelessSseSmol => "stateless-sse-smol",
        }
    }

    const fn label(self) -> &'static str {
        match self {
            Self::Floor => "floor: hyper-bare echo, raw client",
            Self::FloorStd => "ref: std::net echo, raw client",
            Self::Raw => "raw client, legacy JSON",
            Self::LegacyJson => "Client, legacy JSON",
            Self::LegacySse => "Client, legacy SSE",
            Self::StatelessJson => "Client, stateless JSON",
            Self::StatelessSse => "Client, stateless SSE",
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
    floor_std: Server,
    smol: Server,
    sse_smol: Server,
    raw_smol: Vec<RawClient>,
    legacy_smol: Vec<Client>,
    stateless_smol: Vec<Client>,
    legacy_sse_smol: Vec<Client>,
    stateless_sse_smol: Vec<Client>,
    floor_clients: Vec<RawClient>,
    floor_std_clients: Vec<RawClient>,
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
        let floor_std = Server::start(Command::new(&this).env(CHILD, "floor-std"));
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
        let floor_std_clients = (0..MOST).map(|_| RawClient::open(&floor_std.addr, false)).collect();
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
            floor_std,
            smol,
            sse_smol,
            raw_smol,
            legacy_smol,
            stateless_smol,
            legacy_sse_smol,
            stateless_sse_smol,
            floor_clients,
            floor_std_clients,
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
        let (floor_std, sse_smol) = (self.floor_std.pid, self.sse_smol.pid);
        match kind {
            Kind::Floor => drive_raw(&mut self.floor_clients[..clients], calls, floor),
            Kind::FloorStd => drive_raw(&mut self.floor_std_clients[..clients], calls, floor_std),
            Kind::Raw => drive_raw(&mut self.raw_clients[..clients], calls, json),
            Kind::LegacyJson => drive_sdk(&self.legacy_json[..clients], calls, json),
            Kind::LegacySse => drive_sdk(&self.legacy_sse[..clients], calls, sse),
            Kind::StatelessJson => drive_sdk(&self.stateless_json[..clients], calls, json),
            Kind::StatelessSse => drive_sdk(&self.stateless_sse[..clients], calls, sse),
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
            ("hyper floor child", status_kib(self.floor.pid, "VmHWM:")),
            ("std::net echo child", status_kib(self.floor_std.pid, "VmHWM:")),
        ]
    }

    /// Closes the SDK clients (legacy ones end their sessions), then ends the servers.
    fn stop(self) {
        let Self {
            json,
            sse,
            floor,
            floor_std,
            smol,
            sse_smol,
            raw_smol,
            legacy_smol,
            stateless_smol,
            legacy_sse_smol,
            stateless_sse_smol,
            floor_clients,
            floor_std_clients,
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
        drop((floor_clients, floor_std_clients, raw_clients, raw_smol));
        for server in [json, sse, floor, floor_std, smol, sse_smol] {
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

/// `calls` calls shared by one thread per worker, released together (the clock and the CPU
/// readings taken before the release); latency per call, and `server`'s and this process's CPU
/// over the run.
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
        // Read before the release: a fast server would otherwise be well into the run
        // before the clock starts.
        let (server_before, client_before) = (ServerCpu::read(server), cpu_ticks("self"));
        let start = Instant::now();
        gate.wait();
        let latencies: Vec<Duration> = threads.into_iter().flat_map(|t| t.join().unwrap()).collect();
        let wall = start.elapsed();
        let (server_after, client_after) = (ServerCpu::read(server), cpu_ticks("self"));
        let (server_ns, server_precise) = server_before.until(&server_after);
        let client_ns = ticks_ns(client_after - client_before);
        let per_call = |ns: f64| ns / 1e3 / calls as f64;
        let mut sample = Sample::new(wall, latencies, per_call(server_ns), per_call(client_ns));
        sample.server_precise = server_precise;
        sample
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
    /// Whether `server_us` comes from schedstat (nanoseconds), not `USER_HZ` ticks.
    server_precise: bool,
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
            server_precise: false,
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

/// This bench as a child: a Talaria server with SSE replies, the hyper floor or the `std::net`
/// echo.
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
        "floor" => hyper_floor::serve(),
        "floor-std" => {
            let listener = TcpListener::bind("127.0.0.1:0").unwrap();
            eprintln!("http bench std::net echo: listening on http://{}/mcp", listener.local_addr().unwrap());
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                std::thread::spawn(move || floor::serve_blocking(stream));
            }
        }
        other => panic!("{CHILD}={other:?}: expected sse, sse-smol, floor or floor-std"),
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
