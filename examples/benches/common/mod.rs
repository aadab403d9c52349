//! What the `stdio` and `ws` benches share: the matrix of runs, how they are timed, and the report.
//!
//! Each bench brings a [`Floor`] (the same echo calls over the same transport, with no SDK on
//! either side) and a [`Client`] connected with [`Bench::options`] (legacy handshake, protocol
//! 2025-06-18, room for the deepest cell's calls) to one `everything-server` child.
//!
//! The runs form a matrix of cells: each in-flight depth of `TALARIA_BENCH_DEPTHS` (default
//! `1,64,1024,10000`) with each payload of `TALARIA_BENCH_PAYLOADS` (default `32,65536`: the
//! bytes of the `echo` tool's `text`, ASCII letters, in each request and again in each answer).
//! [`Bench::measure`] makes, in each cell, the floor's run and the SDK's runs on the one
//! connection:
//!
//! - `floor`: one call in flight on one thread, or deeper the bench's writer and reader keeping
//!   `depth` calls in flight;
//! - `blocking`: the blocking [`Client`]: at depth 1 a loop; deeper, one thread per call in
//!   flight, each with a clone of the client calling in a loop (only up to 64 in flight: a thread
//!   per call is not how anyone keeps a thousand in flight);
//! - `pipelined` (depths above 1): one thread keeping `depth` calls in flight with the async
//!   handle's futures and the blocking `CallFuture::wait`, waited for in order;
//! - `async`: the async client (`to_async`): at depth 1 `smol::block_on` over a loop; deeper,
//!   `depth` tasks on one `smol::LocalExecutor` thread, each calling in a loop.
//!
//! Each run makes `TALARIA_BENCH_CALLS` calls per round (default 20,000) for payloads up to
//! 8 KiB; above that the count shrinks in proportion to the payload (64 KiB: an eighth), but
//! never below the cell's depth, so every cell fills its window at least once.
//!
//! Latency is per call: from an `Instant` taken before the request is built to one taken after
//! its answer is decoded (for the floor: after the answer is parsed; deeper than one, from when
//! [`Window`] says the request counts as sent), so deep in flight it is mostly time spent
//! queued. Calls/s is calls over the round's wall time, MiB/s that times the
//! payload (each way). Each figure is the median over `TALARIA_BENCH_ROUNDS` rounds (default 5);
//! all the runs take turns within a round so drifting machine load reaches all of them alike,
//! after one untimed warm-up round (a tenth of each run's calls, but at least its depth);
//! `spread` is half the calls/s range over the rounds, against the median; `x floor` and
//! `p50-floor` compare with the floor of the same cell. Peak RSS is `VmHWM` from
//! `/proc/<pid>/status` ([`peak_rss_kib`]) for the processes each bench names, read after the
//! last round.
//!
//! On a small VM, one-in-flight latency swings with whether a wake-up lands on an idle core (tens
//! of microseconds there): the header prints the load average, and `taskset -c 0 cargo bench ...`
//! pins the whole run to one core for steadier figures. `TALARIA_BENCH_ONLY=blocking64,async`
//! keeps only those SDK runs (a kind at one depth, `blocking1` `blocking64` `pipelined1024`
//! `async10000` ..., or a kind at every depth, `blocking` `pipelined` `async`; the floors always
//! run), for profiling one of them.

mod util;
use util::{env_usize, percentile, show, verdict};

use std::collections::VecDeque;
use std::sync::{mpsc, Barrier};
use std::time::{Duration, Instant};

use serde_json::json;
use talaria::client::{AsyncClient, Client, ClientOptions};
use talaria::core::schema::tools::CallToolResult;
use talaria::core::session::ClientMode;
use talaria::core::version::ProtocolVersion;

/// The protocol revision the SDK runs pin (legacy handshake).
pub(crate) const VERSION: ProtocolVersion = ProtocolVersion::V2025_06_18;
/// The default in-flight depths.
const DEPTHS: [usize; 4] = [1, 64, 1024, 10_000];
/// The default payloads, in bytes.
const PAYLOADS: [usize; 2] = [32, 64 * 1024];
/// Payloads up to this many bytes make `TALARIA_BENCH_CALLS` calls a run; larger ones fewer,
/// in proportion.
const FULL_CALLS_UP_TO: usize = 8 * 1024;
/// The most threads the blocking client's runs use: one per call in flight.
const MAX_THREADS: usize = 64;
/// The SDK client's `max_pending`, or the deepest cell's depth if that is more.
const MAX_PENDING: usize = 20_000;
/// The SDK client's `outbox_limit`, or twice the deepest cell's bytes if that is more.
const OUTBOX_LIMIT: usize = 1 << 30;
/// The targets, for the smallest payload: calls/s at 64 in flight against the floor's ...
const TARGET_RATIO: f64 = 0.5;
/// ... and p50 at one call in flight above the floor's.
const TARGET_P50_US: f64 = 10.0;

/// A bench's floor: its hand-written client for the echo calls, no SDK on either side.
pub(crate) trait Floor {
    /// Its runs' label in the table.
    const LABEL: &'static str;

    /// `calls` calls echoing `text`, one in flight, on this thread.
    fn one(&mut self, text: &str, calls: usize) -> Sample;

    /// `calls` calls echoing `text`, `depth` in flight.
    fn wide(&mut self, text: &str, depth: usize, calls: usize) -> Sample;
}

/// The writer's side of a floor's deep run: when each request counts as sent.
///
/// The floor's writer puts each request on the transport itself, and that blocks while the pipe
/// or socket is full, where the SDK's calls wait in its outbox with their latency running. So a
/// request counts as sent when a client that never blocked would have sent it: once its slot in
/// the window is free (at the start, or when the reader's answer made room) and the requests
/// before it are built.
pub(crate) struct Window {
    /// When each free slot was freed, oldest first.
    free: VecDeque<Instant>,
    /// When the requests so far were all built.
    ready: Instant,
    /// When the reader made room, one a slot.
    room: mpsc::Receiver<Instant>,
}

impl Window {
    /// `depth` slots free at `start`; the reader sends on `room` when it frees one.
    pub(crate) fn new(start: Instant, depth: usize, room: mpsc::Receiver<Instant>) -> Self {
        Self { free: vec![start; depth].into(), ready: start, room }
    }

    /// The next request, built with `build` once there is room (after calling `flush` to send
    /// what was written, if it has to wait), and when it counts as sent.
    pub(crate) fn send<T>(&mut self, flush: impl FnOnce(), build: impl FnOnce() -> T) -> (Instant, T) {
        if self.free.is_empty() {
            flush();
            self.free.push_back(self.room.recv().unwrap());
            self.free.extend(self.room.try_iter());
        }
        let sent = self.free.pop_front().unwrap().max(self.ready);
        let building = Instant::now();
        let request = build();
        self.ready = sent + building.elapsed();
        (sent, request)
    }
}

/// The `echo` text of a `payload`-byte cell: that many ASCII letters (nothing JSON escapes).
fn text(payload: usize) -> String {
    (b'a'..=b'z').cycle().take(payload).map(char::from).collect()
}

/// One cell of the matrix.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Cell {
    /// The bytes of each call's `text`.
    payload: usize,
    /// The calls in flight.
    depth: usize,
}

/// What makes a run's calls, in the order each cell makes them.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Floor,
    Blocking,
    Pipelined,
    Async,
}

impl Kind {
    const ALL: [Self; 4] = [Self::Floor, Self::Blocking, Self::Pipelined, Self::Async];

    /// The name `TALARIA_BENCH_ONLY` knows it by (followed by a depth, or not).
    const fn key(self) -> &'static str {
        match self {
            Self::Floor => "floor",
            Self::Blocking => "blocking",
            Self::Pipelined => "pipelined",
            Self::Async => "async",
        }
    }

    /// Whether it runs at `depth` calls in flight.
    const fn runs_at(self, depth: usize) -> bool {
        match self {
            Self::Floor | Self::Async => true,
            Self::Blocking => depth <= MAX_THREADS,
            Self::Pipelined => depth > 1,
        }
    }

    /// Its label in the table at `depth`; the floor's runs are labelled `floor`.
    fn label(self, depth: usize, floor: &str) -> String {
        match (self, depth) {
            (Self::Floor, _) => floor.to_owned(),
            (Self::Blocking, 1) => "blocking Client, loop".to_owned(),
            (Self::Blocking, _) => format!("blocking Client, {depth} threads"),
            (Self::Pipelined, _) => "blocking, 1 thread pipelined".to_owned(),
            (Self::Async, 1) => "async, smol::block_on".to_owned(),
            (Self::Async, _) => format!("async, {depth} smol tasks"),
        }
    }
}

/// The reader's side of a floor's deep run: takes `calls` answers (`next_id` reads one and
/// returns its id; ids run from `base`), matches each with when its request counted as sent
/// (`sent`, from the writer's [`Window`]), tells the writer each answer made room (`room`), and
/// returns the latencies.
pub(crate) fn read_answers(
    calls: usize,
    base: u64,
    sent: &mpsc::Receiver<(u64, Instant)>,
    room: &mpsc::Sender<Instant>,
    mut next_id: impl FnMut() -> u64,
) -> Vec<Duration> {
    let slot = |id: u64| usize::try_from(id - base).unwrap();
    let mut sent_at: Vec<Option<Instant>> = vec![None; calls];
    let mut latencies = Vec::with_capacity(calls);
    for _ in 0..calls {
        let id = next_id();
        let done = Instant::now();
        while sent_at[slot(id)].is_none() {
            let (id, at) = sent.recv().unwrap();
            sent_at[slot(id)] = Some(at);
        }
        latencies.push(done - sent_at[slot(id)].unwrap());
        let _ = room.send(done);
    }
    latencies
}

/// One run's round: throughput and latency percentiles.
#[derive(Clone, Copy)]
pub(crate) struct Sample {
    calls_per_sec: f64,
    p50: Duration,
    p99: Duration,
}

impl Sample {
    /// The round of a run that made `latencies.len()` calls in `wall`.
    pub(crate) fn new(wall: Duration, mut latencies: Vec<Duration>) -> Self {
        latencies.sort_unstable();
        Self {
            calls_per_sec: latencies.len() as f64 / wall.as_secs_f64(),
            p50: percentile(&latencies, 0.50),
            p99: percentile(&latencies, 0.99),
        }
    }
}

/// Medians over the rounds of each figure.
struct Summary {
    calls_per_sec: f64,
    p50_us: f64,
    p99_us: f64,
    /// Half the min-max range of calls/s over the rounds, as a fraction of the median.
    spread: f64,
}

impl Summary {
    fn of(samples: &[Sample]) -> Self {
        let median = |mut xs: Vec<f64>| {
            xs.sort_by(f64::total_cmp);
            xs[xs.len() / 2]
        };
        let rates: Vec<f64> = samples.iter().map(|s| s.calls_per_sec).collect();
        let (lo, hi) = rates.iter().fold((f64::MAX, 0.0_f64), |(lo, hi), &r| (lo.min(r), hi.max(r)));
        let calls_per_sec = median(rates);
        Self {
            calls_per_sec,
            p50_us: median(samples.iter().map(|s| s.p50.as_secs_f64() * 1e6).collect()),
            p99_us: median(samples.iter().map(|s| s.p99.as_secs_f64() * 1e6).collect()),
            spread: (hi - lo) / 2.0 / calls_per_sec,
        }
    }
}

/// One run of the matrix: a kind of caller in a cell, and how many calls it makes a round.
struct Run {
    cell: Cell,
    kind: Kind,
    calls: usize,
}

/// One bench: its settings from the environment and when it began.
pub(crate) struct Bench {
    /// The bench's name in the rows file: the transport, or `TALARIA_BENCH_TAG` if set.
    tag: String,
    calls: usize,
    rounds: usize,
    depths: Vec<usize>,
    payloads: Vec<usize>,
    began: Instant,
}

/// What [`Bench::measure`] found: each run kept, with its summary.
pub(crate) struct Results {
    /// The floor's label.
    floor: &'static str,
    runs: Vec<Run>,
    summaries: Vec<Summary>,
}

impl Bench {
    /// Reads the settings and prints the header: the server's `--transport`, what the calls
    /// travel `over`, and what the `floor` is.
    pub(crate) fn start(transport: &str, over: &str, floor: &str) -> Self {
        let calls = env_usize("TALARIA_BENCH_CALLS", 20_000).max(1);
        let rounds = env_usize("TALARIA_BENCH_ROUNDS", 5).max(1);
        let depths = env_list("TALARIA_BENCH_DEPTHS", &DEPTHS);
        let payloads = env_list("TALARIA_BENCH_PAYLOADS", &PAYLOADS);
        let began = Instant::now();
        let cores = std::thread::available_parallelism().map_or(0, std::num::NonZeroUsize::get);
        // Wake-ups across cores dominate one-in-flight latency: say how busy the machine was.
        let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
        let load = load.split_whitespace().take(3).collect::<Vec<_>>().join(" ");
        let list = |xs: &[usize]| xs.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ");
        println!(
            "talaria {transport} bench: echo tools/call round trips over {over} ({cores} cores, load average {load})"
        );
        println!(
            "  in flight {}; payloads {} B; {calls} calls per run per round (fewer above {FULL_CALLS_UP_TO} B, never \
             fewer than in flight), median of {rounds} rounds, after a warm-up round",
            list(&depths),
            list(&payloads),
        );
        println!(
            "  SDK: everything-server --transport {transport}, legacy handshake, protocol {VERSION}; floor: {floor}"
        );
        let tag = std::env::var("TALARIA_BENCH_TAG").unwrap_or_else(|_| transport.to_owned());
        Self { tag, calls, rounds, depths, payloads, began }
    }

    /// The SDK client's options: legacy handshake at [`VERSION`], and room for the deepest
    /// cell's calls and their bytes.
    pub(crate) fn options(&self) -> ClientOptions {
        let depth = self.depths.iter().copied().max().unwrap_or(1);
        let payload = self.payloads.iter().copied().max().unwrap_or(0);
        ClientOptions::new("bench", "1")
            .mode(ClientMode::Legacy)
            .versions(vec![VERSION])
            .max_pending(MAX_PENDING.max(depth))
            .outbox_limit(OUTBOX_LIMIT.max(depth.saturating_mul(payload).saturating_mul(2)))
    }

    /// How many calls a run in `cell` makes each round.
    fn calls(&self, cell: Cell) -> usize {
        let calls = if cell.payload <= FULL_CALLS_UP_TO {
            self.calls
        } else {
            self.calls.saturating_mul(FULL_CALLS_UP_TO) / cell.payload
        };
        calls.max(cell.depth).max(1)
    }

    /// The warm-up round, then the timed rounds, of the floor's runs and the SDK's on `client`.
    pub(crate) fn measure<F: Floor>(&self, floor: &mut F, client: &Client) -> Results {
        let nonblocking = client.to_async();
        let texts: Vec<String> = self.payloads.iter().map(|&p| text(p)).collect();
        let mut measure = |run: &Run, calls: usize| {
            let Cell { payload, depth } = run.cell;
            let text = &texts[self.payloads.iter().position(|&p| p == payload).unwrap()];
            match (run.kind, depth) {
                (Kind::Floor, 1) => floor.one(text, calls),
                (Kind::Floor, _) => floor.wide(text, depth, calls),
                (Kind::Blocking, 1) => blocking_one(client, text, calls),
                (Kind::Blocking, _) => blocking_wide(client, text, depth, calls),
                (Kind::Pipelined, _) => pipelined(&nonblocking, text, depth, calls),
                (Kind::Async, 1) => async_one(&nonblocking, text, calls),
                (Kind::Async, _) => async_wide(&nonblocking, text, depth, calls),
            }
        };
        // For profiling one SDK run: `TALARIA_BENCH_ONLY=async64` (the floors always run).
        let only = std::env::var("TALARIA_BENCH_ONLY").unwrap_or_default();
        let kept = |kind: Kind, depth: usize| {
            kind == Kind::Floor
                || only.is_empty()
                || only.split(',').map(str::trim).any(|k| {
                    k.strip_prefix(kind.key()).is_some_and(|d| d.is_empty() || d.parse::<usize>() == Ok(depth))
                })
        };
        let mut runs = Vec::new();
        for &payload in &self.payloads {
            for &depth in &self.depths {
                let cell = Cell { payload, depth };
                let calls = self.calls(cell);
                runs.extend(
                    Kind::ALL.into_iter().filter(|&kind| kind.runs_at(depth) && kept(kind, depth)).map(|kind| Run {
                        cell,
                        kind,
                        calls,
                    }),
                );
            }
        }
        for run in &runs {
            measure(run, (run.calls / 10).max(run.cell.depth).min(run.calls));
        }
        let mut samples: Vec<Vec<Sample>> = runs.iter().map(|_| Vec::with_capacity(self.rounds)).collect();
        for _ in 0..self.rounds {
            for (i, run) in runs.iter().enumerate() {
                samples[i].push(measure(run, run.calls));
            }
        }
        let summaries = samples.iter().map(|s| Summary::of(s)).collect();
        Results { floor: F::LABEL, runs, summaries }
    }

    /// Prints the table, the targets, the `peaks` (each process's name and peak RSS in KiB), and
    /// the time taken since [`Bench::start`].
    pub(crate) fn report(&self, results: &Results, peaks: &[(&str, Option<u64>)]) {
        let Results { floor, runs, summaries } = results;
        let of =
            |cell: Cell, kind: Kind| runs.iter().position(|r| r.cell == cell && r.kind == kind).map(|i| &summaries[i]);
        for &payload in &self.payloads {
            println!();
            println!("  payload {} ({payload} B of text each way)", bytes(payload));
            println!(
                "  {:<28} {:>9} {:>7} {:>10} {:>8} {:>7} {:>8} {:>10} {:>10} {:>10}",
                "run", "in flight", "calls", "calls/s", "MiB/s", "spread", "x floor", "p50 us", "p99 us", "p50-floor"
            );
            for (run, s) in runs.iter().zip(summaries).filter(|(r, _)| r.cell.payload == payload) {
                let Some(f) = of(run.cell, Kind::Floor) else { continue };
                println!(
                    "  {:<28} {:>9} {:>7} {:>10.0} {:>8.1} {:>6.1}% {:>7.2}x {:>10} {:>10} {:>10}",
                    run.kind.label(run.cell.depth, floor),
                    run.cell.depth,
                    run.calls,
                    s.calls_per_sec,
                    s.calls_per_sec * payload as f64 / f64::from(1 << 20),
                    s.spread * 100.0,
                    s.calls_per_sec / f.calls_per_sec,
                    micros(s.p50_us, false),
                    micros(s.p99_us, false),
                    micros(s.p50_us - f.p50_us, true),
                );
            }
        }
        self.append_rows(results);
        println!();
        let Some(&small) = self.payloads.iter().min() else { return };
        println!("  targets (issue), at payload {}:", bytes(small));
        let pairs = |depth: usize, kinds: &'static [Kind]| {
            let cell = Cell { payload: small, depth };
            kinds.iter().filter_map(move |&kind| Some((kind, of(cell, kind)?, of(cell, Kind::Floor)?)))
        };
        for (kind, s, f) in pairs(64, &[Kind::Blocking, Kind::Pipelined, Kind::Async]) {
            let ratio = s.calls_per_sec / f.calls_per_sec;
            println!(
                "    calls/s at 64 in flight >= {TARGET_RATIO:.2}x floor  {:<28} {ratio:>6.2}x  {}",
                kind.label(64, floor),
                verdict(ratio >= TARGET_RATIO)
            );
        }
        for (kind, s, f) in pairs(1, &[Kind::Blocking, Kind::Async]) {
            let gap = s.p50_us - f.p50_us;
            println!(
                "    p50 at 1 in flight <= floor + {TARGET_P50_US:.0} us    {:<28} {gap:>+6.1} us  {}",
                kind.label(1, floor),
                verdict(gap <= TARGET_P50_US)
            );
        }
        println!();
        let peaks: Vec<String> = peaks.iter().map(|(name, kib)| format!("{name} {} KiB", show(*kib))).collect();
        println!("  peak RSS (VmHWM): {}", peaks.join(", "));
        println!("  took {:.1} s", self.began.elapsed().as_secs_f64());
    }
}

impl Bench {
    /// With `TALARIA_BENCH_ROWS=<file>` (as `scripts/bench-all.sh` sets it), appends one
    /// tab-separated line per SDK run to the file: bench, payload, run, in flight, calls/s,
    /// the floor's calls/s, the ratio, p50 and the floor's p50 (us).
    fn append_rows(&self, results: &Results) {
        use std::io::Write as _;
        let Ok(path) = std::env::var("TALARIA_BENCH_ROWS") else { return };
        let Results { runs, summaries, .. } = results;
        let floor_of =
            |cell: Cell| runs.iter().position(|r| r.cell == cell && r.kind == Kind::Floor).map(|i| &summaries[i]);
        let mut file = std::fs::OpenOptions::new().create(true).append(true).open(&path).unwrap();
        for (run, s) in runs.iter().zip(summaries).filter(|(r, _)| r.kind != Kind::Floor) {
            let Some(f) = floor_of(run.cell) else { continue };
            writeln!(
                file,
                "{}\t{}\t{}\t{}\t{:.0}\t{:.0}\t{:.2}\t{:.1}\t{:.1}",
                self.tag,
                run.cell.payload,
                run.kind.key(),
                run.cell.depth,
                s.calls_per_sec,
                f.calls_per_sec,
                s.calls_per_sec / f.calls_per_sec,
                s.p50_us,
                f.p50_us
            )
            .unwrap();
        }
    }
}

/// The peak resident set of process `pid` in KiB (`VmHWM`), if it can be read.
pub(crate) fn peak_rss_kib(pid: u32) -> Option<u64> {
    util::status_kib(pid, "VmHWM:")
}

/// A list of numbers from the environment (`1,64,10_000`), or `default` if unset or empty.
///
/// # Panics
///
/// If it is set to something else: a mistyped matrix should not silently run the default one.
fn env_list(name: &str, default: &[usize]) -> Vec<usize> {
    let value = std::env::var(name).unwrap_or_default();
    if value.trim().is_empty() {
        return default.to_vec();
    }
    let parse = |item: &str| item.trim().replace('_', "").parse::<usize>().ok().filter(|&n| n > 0);
    let mut list: Vec<usize> = value
        .split(',')
        .map(|item| parse(item).unwrap_or_else(|| panic!("{name}={value}: {item:?} is not a positive number")))
        .collect();
    list.dedup();
    list
}

/// A byte count as the table's headings say it: `32 B`, `64 KiB`, `1 MiB`.
fn bytes(n: usize) -> String {
    match n {
        n if n >= 1 << 20 && n % (1 << 20) == 0 => format!("{} MiB", n >> 20),
        n if n >= 1 << 10 && n % (1 << 10) == 0 => format!("{} KiB", n >> 10),
        n => format!("{n} B"),
    }
}

/// Microseconds for the table: a decimal place below 10,000, a sign if `signed`.
fn micros(us: f64, signed: bool) -> String {
    match (us.abs() < 10_000.0, signed) {
        (true, true) => format!("{us:+.1}"),
        (true, false) => format!("{us:.1}"),
        (false, true) => format!("{us:+.0}"),
        (false, false) => format!("{us:.0}"),
    }
}

/// How `calls` calls split among `workers` (the first ones take the remainder).
fn share(calls: usize, workers: usize, worker: usize) -> usize {
    calls / workers + usize::from(worker < calls % workers)
}

// ---- the SDK runs -----------------------------------------------------------------------

fn check(result: &CallToolResult, text: &str) {
    let echoed = result.content.first().and_then(|c| c.as_text());
    assert!(echoed == Some(text), "echoed {} bytes, not the {} sent", echoed.map_or(0, str::len), text.len());
}

fn blocking_one(client: &Client, text: &str, calls: usize) -> Sample {
    let mut latencies = Vec::with_capacity(calls);
    let start = Instant::now();
    for _ in 0..calls {
        let sent = Instant::now();
        let result = client.call_tool("echo", json!({"text": text})).unwrap();
        latencies.push(sent.elapsed());
        check(&result, text);
    }
    Sample::new(start.elapsed(), latencies)
}

/// `depth` threads, each with its own clone of the client, released together.
fn blocking_wide(client: &Client, text: &str, depth: usize, calls: usize) -> Sample {
    let gate = Barrier::new(depth + 1);
    let (latencies, wall) = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..depth)
            .map(|worker| {
                let (client, gate) = (client.clone(), &gate);
                scope.spawn(move || {
                    let n = share(calls, depth, worker);
                    let mut latencies = Vec::with_capacity(n);
                    gate.wait();
                    for _ in 0..n {
                        let sent = Instant::now();
                        let result = client.call_tool("echo", json!({"text": text})).unwrap();
                        latencies.push(sent.elapsed());
                        check(&result, text);
                    }
                    latencies
                })
            })
            .collect();
        gate.wait();
        let start = Instant::now();
        let latencies: Vec<Duration> = workers.into_iter().flat_map(|w| w.join().unwrap()).collect();
        (latencies, start.elapsed())
    });
    Sample::new(wall, latencies)
}

/// One thread keeping `depth` calls in flight: sent at once, waited for in order with the
/// blocking `CallFuture::wait`.
fn pipelined(client: &AsyncClient, text: &str, depth: usize, calls: usize) -> Sample {
    let mut latencies = Vec::with_capacity(calls);
    let mut window = VecDeque::with_capacity(depth.min(calls));
    let start = Instant::now();
    let mut sent_calls = 0;
    while sent_calls < calls || !window.is_empty() {
        while sent_calls < calls && window.len() < depth {
            window.push_back((Instant::now(), client.call_tool("echo", json!({"text": text}))));
            sent_calls += 1;
        }
        if let Some((sent, call)) = window.pop_front() {
            let result = call.wait().unwrap();
            latencies.push(sent.elapsed());
            check(&result, text);
        }
    }
    Sample::new(start.elapsed(), latencies)
}

fn async_one(client: &AsyncClient, text: &str, calls: usize) -> Sample {
    let mut latencies = Vec::with_capacity(calls);
    let start = Instant::now();
    smol::block_on(async {
        for _ in 0..calls {
            let sent = Instant::now();
            let result = client.call_tool("echo", json!({"text": text})).await.unwrap();
            latencies.push(sent.elapsed());
            check(&result, text);
        }
    });
    Sample::new(start.elapsed(), latencies)
}

/// `depth` tasks on one executor thread, each calling in a loop on a clone of the client.
fn async_wide(client: &AsyncClient, text: &str, depth: usize, calls: usize) -> Sample {
    let executor = smol::LocalExecutor::new();
    let tasks: Vec<_> = (0..depth)
        .map(|worker| {
            let client = client.clone();
            executor.spawn(async move {
                let n = share(calls, depth, worker);
                let mut latencies = Vec::with_capacity(n);
                for _ in 0..n {
                    let sent = Instant::now();
                    let result = client.call_tool("echo", json!({"text": text})).await.unwrap();
                    latencies.push(sent.elapsed());
                    check(&result, text);
                }
                latencies
            })
        })
        .collect();
    let start = Instant::now();
    let latencies = smol::block_on(executor.run(async {
        let mut all = Vec::with_capacity(calls);
        for task in tasks {
            all.extend(task.await);
        }
        all
    }));
    Sample::new(start.elapsed(), latencies)
}
