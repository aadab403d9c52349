//! What the `stdio` and `ws` benches share: the runs, how they are timed, and the report.
//!
//! Each bench brings a [`Floor`] (the same echo calls over the same transport, with no SDK on
//! either side) and a [`Client`] connected (legacy handshake, protocol 2025-06-18) to one
//! `everything-server` child. [`Bench::measure`] makes the SDK runs on that one connection: the
//! blocking [`Client`] with one call in flight (a loop) and with 64 (64 threads, each with a
//! clone of the client, each calling in a loop), one thread keeping 64 calls in flight with the
//! async handle's futures and the blocking `CallFuture::wait`, and the async client (`to_async`)
//! with one call in flight (`smol::block_on` over a loop) and with 64 (64 tasks on one
//! `smol::LocalExecutor` thread, each calling in a loop); the floor runs with one call in flight
//! and with 64. Every run makes `TALARIA_BENCH_CALLS` calls per round.
//!
//! Latency is per call: from an `Instant` taken before the request is built to one taken after
//! its answer is decoded (for the floor: after the answer is parsed). Calls/s is calls over the
//! round's wall time. Each figure is the median over `TALARIA_BENCH_ROUNDS` rounds; the runs take
//! turns within a round so drifting machine load reaches all of them alike, after one untimed
//! warm-up round; `spread` is half the calls/s range over the rounds, against the median. Peak
//! RSS is `VmHWM` from `/proc/<pid>/status` ([`peak_rss_kib`]) for the processes each bench
//! names, read after the last round.
//!
//! On a small VM, one-in-flight latency swings with whether a wake-up lands on an idle core (tens
//! of microseconds there): the header prints the load average, and `taskset -c 0 cargo bench ...`
//! pins the whole run to one core for steadier figures. `TALARIA_BENCH_ONLY=blocking64,async1`
//! keeps only those SDK runs (the floors always run), for profiling one of them.

mod util;
use util::{env_usize, percentile, show, verdict};

use std::sync::Barrier;
use std::time::{Duration, Instant};

use serde_json::json;
use talaria::client::{AsyncClient, Client};
use talaria::core::schema::tools::CallToolResult;
use talaria::core::version::ProtocolVersion;

/// The protocol revision the SDK runs pin (legacy handshake).
pub(crate) const VERSION: ProtocolVersion = ProtocolVersion::V2025_06_18;
/// What every call echoes.
pub(crate) const TEXT: &str = "hello, world";
/// The wide runs' calls in flight.
pub(crate) const WIDE: usize = 64;
/// The targets: calls/s at 64 in flight against the floor's ...
const TARGET_RATIO: f64 = 0.5;
/// ... and p50 at one call in flight above the floor's.
const TARGET_P50_US: f64 = 10.0;

/// A bench's floor: its hand-written client for the echo calls, no SDK on either side.
pub(crate) trait Floor {
    /// Its runs' label in the table.
    const LABEL: &'static str;

    /// `calls` calls, one in flight, on this thread.
    fn one(&mut self, calls: usize) -> Sample;

    /// `calls` calls, [`WIDE`] in flight.
    fn wide(&mut self, calls: usize) -> Sample;
}

/// The runs, in the order each round makes them.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Run {
    Floor1,
    Blocking1,
    Async1,
    Floor64,
    Blocking64,
    Pipelined64,
    Async64,
}

impl Run {
    const ALL: [Self; 7] = [
        Self::Floor1,
        Self::Blocking1,
        Self::Async1,
        Self::Floor64,
        Self::Blocking64,
        Self::Pipelined64,
        Self::Async64,
    ];

    /// The name `TALARIA_BENCH_ONLY` knows it by.
    const fn key(self) -> &'static str {
        match self {
            Self::Floor1 => "floor1",
            Self::Blocking1 => "blocking1",
            Self::Async1 => "async1",
            Self::Floor64 => "floor64",
            Self::Blocking64 => "blocking64",
            Self::Pipelined64 => "pipelined64",
            Self::Async64 => "async64",
        }
    }

    /// Its label in the table; the floor's runs are labelled `floor`.
    const fn label(self, floor: &'static str) -> &'static str {
        match self {
            Self::Floor1 | Self::Floor64 => floor,
            Self::Blocking1 => "blocking Client, loop",
            Self::Async1 => "async, smol::block_on",
            Self::Blocking64 => "blocking Client, 64 threads",
            Self::Pipelined64 => "blocking, 1 thread pipelined",
            Self::Async64 => "async, 64 smol tasks",
        }
    }

    const fn in_flight(self) -> usize {
        match self {
            Self::Floor1 | Self::Blocking1 | Self::Async1 => 1,
            Self::Floor64 | Self::Blocking64 | Self::Pipelined64 | Self::Async64 => WIDE,
        }
    }

    const fn floor(self) -> Self {
        if self.in_flight() == 1 {
            Self::Floor1
        } else {
            Self::Floor64
        }
    }
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

/// One bench: its settings from the environment and when it began.
pub(crate) struct Bench {
    calls: usize,
    rounds: usize,
    warm: usize,
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
        let calls = env_usize("TALARIA_BENCH_CALLS", 20_000).max(WIDE);
        let rounds = env_usize("TALARIA_BENCH_ROUNDS", 5).max(1);
        let warm = (calls / 10).max(WIDE);
        let began = Instant::now();
        let cores = std::thread::available_parallelism().map_or(0, std::num::NonZeroUsize::get);
        // Wake-ups across cores dominate one-in-flight latency: say how busy the machine was.
        let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
        let load = load.split_whitespace().take(3).collect::<Vec<_>>().join(" ");
        println!(
            "talaria {transport} bench: echo tools/call round trips over {over} ({cores} cores, load average {load})"
        );
        println!("  {calls} calls per run per round, median of {rounds} rounds, after a warm-up round of {warm} calls");
        println!(
            "  SDK: everything-server --transport {transport}, legacy handshake, protocol {VERSION}; floor: {floor}"
        );
        Self { calls, rounds, warm, began }
    }

    /// The warm-up round, then the timed rounds, of the floor's runs and the SDK's on `client`.
    pub(crate) fn measure<F: Floor>(&self, floor: &mut F, client: &Client) -> Results {
        let nonblocking = client.to_async();
        let mut measure = |run: Run, calls: usize| match run {
            Run::Floor1 => floor.one(calls),
            Run::Floor64 => floor.wide(calls),
            Run::Blocking1 => blocking_one(client, calls),
            Run::Blocking64 => blocking_wide(client, calls),
            Run::Pipelined64 => blocking_pipelined(&nonblocking, calls),
            Run::Async1 => async_one(&nonblocking, calls),
            Run::Async64 => async_wide(&nonblocking, calls),
        };
        // For profiling one SDK run: `TALARIA_BENCH_ONLY=async64` (the floors always run).
        let only = std::env::var("TALARIA_BENCH_ONLY").unwrap_or_default();
        let runs: Vec<Run> = Run::ALL
            .into_iter()
            .filter(|&run| only.is_empty() || run.floor() == run || only.split(',').any(|k| k.trim() == run.key()))
            .collect();
        for &run in &runs {
            measure(run, self.warm);
        }
        let mut samples: Vec<Vec<Sample>> = vec![Vec::with_capacity(self.rounds); runs.len()];
        for _ in 0..self.rounds {
            for (i, &run) in runs.iter().enumerate() {
                samples[i].push(measure(run, self.calls));
            }
        }
        let summaries = samples.iter().map(|s| Summary::of(s)).collect();
        Results { floor: F::LABEL, runs, summaries }
    }

    /// Prints the table, the targets, the `peaks` (each process's name and peak RSS in KiB), and
    /// the time taken since [`Bench::start`].
    pub(crate) fn report(&self, results: &Results, peaks: &[(&str, Option<u64>)]) {
        let Results { floor, runs, summaries } = results;
        let of = |run: Run| runs.iter().position(|&r| r == run).map(|i| &summaries[i]);
        println!();
        println!(
            "  {:<28} {:>9} {:>10} {:>7} {:>8} {:>8} {:>9} {:>9}",
            "run", "in flight", "calls/s", "spread", "x floor", "p50 us", "p99 us", "p50-floor"
        );
        for &run in runs {
            let (Some(s), Some(f)) = (of(run), of(run.floor())) else { continue };
            println!(
                "  {:<28} {:>9} {:>10.0} {:>6.1}% {:>7.2}x {:>8.1} {:>8.1} {:>+9.1}",
                run.label(floor),
                run.in_flight(),
                s.calls_per_sec,
                s.spread * 100.0,
                s.calls_per_sec / f.calls_per_sec,
                s.p50_us,
                s.p99_us,
                s.p50_us - f.p50_us,
            );
        }
        println!();
        println!("  targets (issue):");
        let pairs = |runs: &'static [Run]| runs.iter().filter_map(|&run| Some((run, of(run)?, of(run.floor())?)));
        for (run, s, f) in pairs(&[Run::Blocking64, Run::Pipelined64, Run::Async64]) {
            let ratio = s.calls_per_sec / f.calls_per_sec;
            println!(
                "    calls/s at 64 in flight >= {TARGET_RATIO:.2}x floor  {:<28} {ratio:>6.2}x  {}",
                run.label(floor),
                verdict(ratio >= TARGET_RATIO)
            );
        }
        for (run, s, f) in pairs(&[Run::Blocking1, Run::Async1]) {
            let gap = s.p50_us - f.p50_us;
            println!(
                "    p50 at 1 in flight <= floor + {TARGET_P50_US:.0} us    {:<28} {gap:>+6.1} us  {}",
                run.label(floor),
                verdict(gap <= TARGET_P50_US)
            );
        }
        println!();
        let peaks: Vec<String> = peaks.iter().map(|(name, kib)| format!("{name} {} KiB", show(*kib))).collect();
        println!("  peak RSS (VmHWM): {}", peaks.join(", "));
        println!("  took {:.1} s", self.began.elapsed().as_secs_f64());
    }
}

/// The peak resident set of process `pid` in KiB (`VmHWM`), if it can be read.
pub(crate) fn peak_rss_kib(pid: u32) -> Option<u64> {
    util::status_kib(pid, "VmHWM:")
}

/// How `calls` calls split among `workers` (the first ones take the remainder).
fn share(calls: usize, workers: usize, worker: usize) -> usize {
    calls / workers + usize::from(worker < calls % workers)
}

// ---- the SDK runs -----------------------------------------------------------------------

fn check(result: &CallToolResult) {
    assert_eq!(result.content.first().and_then(|c| c.as_text()), Some(TEXT));
}

fn blocking_one(client: &Client, calls: usize) -> Sample {
    let mut latencies = Vec::with_capacity(calls);
    let start = Instant::now();
    for _ in 0..calls {
        let sent = Instant::now();
        let result = client.call_tool("echo", json!({"text": TEXT})).unwrap();
        latencies.push(sent.elapsed());
        check(&result);
    }
    Sample::new(start.elapsed(), latencies)
}

/// [`WIDE`] threads, each with its own clone of the client, released together.
fn blocking_wide(client: &Client, calls: usize) -> Sample {
    let gate = Barrier::new(WIDE + 1);
    let (latencies, wall) = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..WIDE)
            .map(|worker| {
                let (client, gate) = (client.clone(), &gate);
                scope.spawn(move || {
                    let n = share(calls, WIDE, worker);
                    let mut latencies = Vec::with_capacity(n);
                    gate.wait();
                    for _ in 0..n {
                        let sent = Instant::now();
                        let result = client.call_tool("echo", json!({"text": TEXT})).unwrap();
                        latencies.push(sent.elapsed());
                        check(&result);
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

/// One thread keeping [`WIDE`] calls in flight: sent at once, waited for in order with the
/// blocking `CallFuture::wait`.
fn blocking_pipelined(client: &AsyncClient, calls: usize) -> Sample {
    let mut latencies = Vec::with_capacity(calls);
    let mut window = std::collections::VecDeque::with_capacity(WIDE);
    let start = Instant::now();
    let mut sent_calls = 0;
    while sent_calls < calls || !window.is_empty() {
        while sent_calls < calls && window.len() < WIDE {
            window.push_back((Instant::now(), client.call_tool("echo", json!({"text": TEXT}))));
            sent_calls += 1;
        }
        if let Some((sent, call)) = window.pop_front() {
            let result = call.wait().unwrap();
            latencies.push(sent.elapsed());
            check(&result);
        }
    }
    Sample::new(start.elapsed(), latencies)
}

fn async_one(client: &AsyncClient, calls: usize) -> Sample {
    let mut latencies = Vec::with_capacity(calls);
    let start = Instant::now();
    smol::block_on(async {
        for _ in 0..calls {
            let sent = Instant::now();
            let result = client.call_tool("echo", json!({"text": TEXT})).await.unwrap();
            latencies.push(sent.elapsed());
            check(&result);
        }
    });
    Sample::new(start.elapsed(), latencies)
}

/// [`WIDE`] tasks on one executor thread, each calling in a loop on a clone of the client.
fn async_wide(client: &AsyncClient, calls: usize) -> Sample {
    let executor = smol::LocalExecutor::new();
    let tasks: Vec<_> = (0..WIDE)
        .map(|worker| {
            let client = client.clone();
            executor.spawn(async move {
                let n = share(calls, WIDE, worker);
                let mut latencies = Vec::with_capacity(n);
                for _ in 0..n {
                    let sent = Instant::now();
                    let result = client.call_tool("echo", json!({"text": TEXT})).await.unwrap();
                    latencies.push(sent.elapsed());
                    check(&result);
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
