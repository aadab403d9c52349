//! `tools/call` round trips over a loopback WebSocket: Talaria's client against a child
//! `everything-server --transport ws`, next to a floor measured in the same run.
//!
//! ```text
//! cargo bench -p talaria-examples --bench ws
//! TALARIA_BENCH_ROUNDS=1 TALARIA_BENCH_CALLS=2000 cargo bench -p talaria-examples --bench ws   # smoke
//! ```
//!
//! The floor is a bare WebSocket echo over 127.0.0.1 with `tungstenite` and `serde_json` and no
//! SDK on either side. Its server is a thread of this process: it parses each text message as a
//! `serde_json::Value` and answers with the result `json-echo` gives, one text message, written
//! to the socket just before it would read again (so a burst of requests is answered with one
//! write, as `json-echo` does). Its client is written by hand over one socket: one thread for one
//! call in flight; for 64, the socket's two halves (`TcpStream::try_clone`, as the SDK's transport
//! splits it) with a writer thread that keeps 64 requests outstanding (flushing before it waits
//! for room) and a reader thread that parses the answers and matches them to their requests by id.
//! Both ends set `TCP_NODELAY`, as the SDK's do.
//!
//! The SDK runs share one connection (legacy handshake, protocol 2025-06-18) to one server child:
//! the blocking [`Client`] with one call in flight (a loop) and with 64 (64 threads, each with a
//! clone of the client, each calling in a loop), one thread keeping 64 calls in flight with the
//! async handle's futures and the blocking `CallFuture::wait`, and the async client (`to_async`)
//! with one call in flight (`smol::block_on` over a loop) and with 64 (64 tasks on one
//! `smol::LocalExecutor` thread, each calling in a loop). Every run makes `TALARIA_BENCH_CALLS`
//! calls per round.
//!
//! Latency is per call: from an `Instant` taken before the request is built to one taken after
//! its answer is decoded (for the floor: after the answer message is parsed). Calls/s is calls
//! over the round's wall time. Each figure is the median over `TALARIA_BENCH_ROUNDS` rounds; the
//! runs take turns within a round so drifting machine load reaches all of them alike, after one
//! untimed warm-up round; `spread` is half the calls/s range over the rounds, against the median.
//! Peak RSS is the server child's `VmHWM` from `/proc/<pid>/status`, read after the last round.
//!
//! On a small VM, one-in-flight latency swings with whether a wake-up lands on an idle core (tens
//! of microseconds there): the header prints the load average, and `taskset -c 0 cargo bench ...`
//! pins the whole run to one core for steadier figures. `TALARIA_BENCH_ONLY=blocking64,async1`
//! keeps only those SDK runs (the floors always run), for profiling one of them.
// A bench measures wall-clock time and stops loudly if a peer misbehaves.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::cast_precision_loss)]

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::{mpsc, Barrier};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use talaria::client::{AsyncClient, Client, ClientOptions};
use talaria::core::schema::tools::CallToolResult;
use talaria::core::session::ClientMode;
use talaria::core::version::ProtocolVersion;
use tungstenite::protocol::{Role, WebSocketConfig};
use tungstenite::{Message, WebSocket};

const SERVER: &str = env!("CARGO_BIN_EXE_everything-server");
/// The protocol revision the SDK runs pin (legacy handshake).
const VERSION: ProtocolVersion = ProtocolVersion::V2025_06_18;
/// What every call echoes.
const TEXT: &str = "hello, world";
/// The wide runs' calls in flight.
const WIDE: usize = 64;
/// The issue's targets: calls/s at 64 in flight against the floor's ...
const TARGET_RATIO: f64 = 0.5;
/// ... and p50 at one call in flight above the floor's.
const TARGET_P50_US: f64 = 10.0;

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

    const fn label(self) -> &'static str {
        match self {
            Self::Floor1 | Self::Floor64 => "floor (tungstenite echo)",
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
struct Sample {
    calls_per_sec: f64,
    p50: Duration,
    p99: Duration,
}

impl Sample {
    fn new(wall: Duration, mut latencies: Vec<Duration>) -> Self {
        latencies.sort_unstable();
        Self {
            calls_per_sec: latencies.len() as f64 / wall.as_secs_f64(),
            p50: percentile(&latencies, 0.50),
            p99: percentile(&latencies, 0.99),
        }
    }
}

/// Nearest rank.
fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let rank = (p * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
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

fn main() {
    let calls = env_usize("TALARIA_BENCH_CALLS", 20_000).max(WIDE);
    let rounds = env_usize("TALARIA_BENCH_ROUNDS", 5).max(1);
    let warm = (calls / 10).max(WIDE);
    let began = Instant::now();
    let cores = std::thread::available_parallelism().map_or(0, std::num::NonZeroUsize::get);
    // Wake-ups across cores dominate one-in-flight latency: say how busy the machine was.
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let load = load.split_whitespace().take(3).collect::<Vec<_>>().join(" ");
    println!(
        "talaria ws bench: echo tools/call round trips over a loopback WebSocket ({cores} cores, load average {load})"
    );
    println!("  {calls} calls per run per round, median of {rounds} rounds, after a warm-up round of {warm} calls");
    println!(
        "  SDK: everything-server --transport ws, legacy handshake, protocol {VERSION}; floor: tungstenite echo thread"
    );

    let mut floor = Floor::start();
    let sdk = Sdk::connect();
    let nonblocking = sdk.client.to_async();
    let mut measure = |run: Run, calls: usize| match run {
        Run::Floor1 => floor.one(calls),
        Run::Floor64 => floor.wide(calls),
        Run::Blocking1 => blocking_one(&sdk.client, calls),
        Run::Blocking64 => blocking_wide(&sdk.client, calls),
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
        measure(run, warm);
    }
    let mut samples: Vec<Vec<Sample>> = vec![Vec::with_capacity(rounds); runs.len()];
    for _ in 0..rounds {
        for (i, &run) in runs.iter().enumerate() {
            samples[i].push(measure(run, calls));
        }
    }
    let server_rss = peak_rss_kib(sdk.child.id());
    drop(nonblocking);
    sdk.stop();
    floor.stop();

    let summaries: Vec<Summary> = samples.iter().map(|s| Summary::of(s)).collect();
    let of = |run: Run| runs.iter().position(|&r| r == run).map(|i| &summaries[i]);
    println!();
    println!(
        "  {:<28} {:>9} {:>10} {:>7} {:>8} {:>8} {:>9} {:>9}",
        "run", "in flight", "calls/s", "spread", "x floor", "p50 us", "p99 us", "p50-floor"
    );
    for &run in &runs {
        let (Some(s), Some(f)) = (of(run), of(run.floor())) else { continue };
        println!(
            "  {:<28} {:>9} {:>10.0} {:>6.1}% {:>7.2}x {:>8.1} {:>8.1} {:>+9.1}",
            run.label(),
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
    let pairs = |runs: [Run; 2]| runs.into_iter().filter_map(|run| Some((run, of(run)?, of(run.floor())?)));
    for (run, s, f) in [Run::Blocking64, Run::Pipelined64, Run::Async64]
        .into_iter()
        .filter_map(|run| Some((run, of(run)?, of(run.floor())?)))
    {
        let ratio = s.calls_per_sec / f.calls_per_sec;
        println!(
            "    calls/s at 64 in flight >= {TARGET_RATIO:.2}x floor  {:<28} {ratio:>6.2}x  {}",
            run.label(),
            verdict(ratio >= TARGET_RATIO)
        );
    }
    for (run, s, f) in pairs([Run::Blocking1, Run::Async1]) {
        let gap = s.p50_us - f.p50_us;
        println!(
            "    p50 at 1 in flight <= floor + {TARGET_P50_US:.0} us    {:<28} {gap:>+6.1} us  {}",
            run.label(),
            verdict(gap <= TARGET_P50_US)
        );
    }
    println!();
    println!("  peak RSS (VmHWM): everything-server {} KiB", show(server_rss));
    println!("  took {:.1} s", began.elapsed().as_secs_f64());
}

const fn verdict(met: bool) -> &'static str {
    if met {
        "met"
    } else {
        "MISSED"
    }
}

fn show(kib: Option<u64>) -> String {
    kib.map_or_else(|| "?".to_owned(), |k| k.to_string())
}

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// The peak resident set of process `pid` in KiB (`VmHWM`), if it can be read.
fn peak_rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// How `calls` calls split among `workers` (the first ones take the remainder).
fn share(calls: usize, workers: usize, worker: usize) -> usize {
    calls / workers + usize::from(worker < calls % workers)
}

// ---- the floor --------------------------------------------------------------------------

/// The floor server's socket: what tungstenite writes is held until it next reads, which it
/// does only when its buffer holds no further complete message (so, like `json-echo`'s flush
/// before a read that would block, a burst of requests is answered with one write).
struct FlushBeforeRead {
    stream: TcpStream,
    out: Vec<u8>,
}

impl FlushBeforeRead {
    fn send_held(&mut self) -> io::Result<()> {
        if !self.out.is_empty() {
            self.stream.write_all(&self.out)?;
            self.out.clear();
        }
        Ok(())
    }
}

impl Read for FlushBeforeRead {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.send_held()?;
        self.stream.read(buf)
    }
}

impl Write for FlushBeforeRead {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.out.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.send_held()
    }
}

/// Serves one connection on `listener`: a bare WebSocket JSON-RPC echo.
fn floor_server(listener: &TcpListener) {
    let (stream, _) = listener.accept().unwrap();
    stream.set_nodelay(true).unwrap();
    // Each message goes to `FlushBeforeRead` as soon as it is written, to be held there.
    let config = WebSocketConfig::default().write_buffer_size(0);
    let socket = FlushBeforeRead { stream, out: Vec::with_capacity(64 * 1024) };
    let mut socket = tungstenite::accept_with_config(socket, Some(config)).unwrap();
    loop {
        match socket.read() {
            Ok(Message::Text(text)) => {
                if let Some(answer) = floor_answer(text.as_str()) {
                    socket.write(Message::text(serde_json::to_string(&answer).unwrap())).unwrap();
                }
            }
            Ok(Message::Close(_)) => {
                let _ = socket.flush();
                break;
            }
            Ok(_) => {}
            // The client shut its socket.
            Err(_) => break,
        }
    }
}

/// `json-echo`'s answer to one request.
fn floor_answer(message: &str) -> Option<Value> {
    let Ok(mut request) = serde_json::from_str::<Value>(message) else {
        return Some(json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "parse error"}}));
    };
    let id = request.get_mut("id").map(Value::take)?;
    let text = request.pointer_mut("/params/arguments/text").map_or(Value::Null, Value::take);
    Some(json!({"jsonrpc": "2.0", "id": id, "result": {"content": [{"type": "text", "text": text}]}}))
}

/// The floor server thread and the hand-written client's two halves of its one socket.
struct Floor {
    server: JoinHandle<()>,
    /// The handshake's socket: only ever read (the server never pings, so it never writes).
    reader: WebSocket<TcpStream>,
    /// The same connection's other half (`try_clone`): only ever written.
    writer: WebSocket<TcpStream>,
    next_id: u64,
}

impl Floor {
    fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let server =
            std::thread::Builder::new().name("floor-ws-server".into()).spawn(move || floor_server(&listener)).unwrap();
        let stream = TcpStream::connect(addr).unwrap();
        stream.set_nodelay(true).unwrap();
        let writer = WebSocket::from_raw_socket(stream.try_clone().unwrap(), Role::Client, None);
        let (reader, _) = tungstenite::client::client(format!("ws://{addr}/ws"), stream).unwrap();
        Self { server, reader, writer, next_id: 1 }
    }

    /// `calls` calls, one in flight, on this thread.
    fn one(&mut self, calls: usize) -> Sample {
        let mut latencies = Vec::with_capacity(calls);
        let start = Instant::now();
        for _ in 0..calls {
            let id = self.next_id;
            self.next_id += 1;
            let sent = Instant::now();
            self.writer.send(request(id)).unwrap();
            assert_eq!(answer_id(&self.reader.read().unwrap()), id);
            latencies.push(sent.elapsed());
        }
        Sample::new(start.elapsed(), latencies)
    }

    /// `calls` calls, [`WIDE`] in flight: a writer thread and a reader thread.
    fn wide(&mut self, calls: usize) -> Sample {
        let base = self.next_id;
        self.next_id += calls as u64;
        let (sent_tx, sent_rx) = mpsc::channel::<(u64, Instant)>();
        let (room_tx, room_rx) = mpsc::channel::<()>();
        let (writer, reader) = (&mut self.writer, &mut self.reader);
        let start = Instant::now();
        let latencies = std::thread::scope(|scope| {
            scope.spawn(move || {
                let mut room = WIDE;
                for id in base..base + calls as u64 {
                    if room == 0 {
                        // Send the batch before waiting for the reader to make room.
                        writer.flush().unwrap();
                        room_rx.recv().unwrap();
                        room = 1 + room_rx.try_iter().count();
                    }
                    sent_tx.send((id, Instant::now())).unwrap();
                    writer.write(request(id)).unwrap();
                    room -= 1;
                }
                writer.flush().unwrap();
            });
            let reader = scope.spawn(move || {
                let mut sent: Vec<Option<Instant>> = vec![None; calls];
                let mut latencies = Vec::with_capacity(calls);
                for _ in 0..calls {
                    let id = answer_id(&reader.read().unwrap());
                    let done = Instant::now();
                    let slot = usize::try_from(id - base).unwrap();
                    while sent[slot].is_none() {
                        let (id, at) = sent_rx.recv().unwrap();
                        sent[usize::try_from(id - base).unwrap()] = Some(at);
                    }
                    latencies.push(done - sent[slot].unwrap());
                    let _ = room_tx.send(());
                }
                latencies
            });
            reader.join().unwrap()
        });
        Sample::new(start.elapsed(), latencies)
    }

    /// Closes the connection and joins the server thread.
    fn stop(self) {
        let Self { server, reader, mut writer, .. } = self;
        let _ = writer.close(None);
        let _ = writer.flush();
        let _ = reader.get_ref().shutdown(Shutdown::Both);
        server.join().unwrap();
    }
}

fn request(id: u64) -> Message {
    let request = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": "echo", "arguments": {"text": TEXT}}});
    Message::text(serde_json::to_string(&request).unwrap())
}

/// The id of an answer, after checking it echoes [`TEXT`].
fn answer_id(message: &Message) -> u64 {
    let Message::Text(text) = message else { panic!("not a text message: {message:?}") };
    let answer: Value = serde_json::from_str(text.as_str()).unwrap();
    assert_eq!(answer["result"]["content"][0]["text"], TEXT, "{text}");
    answer["id"].as_u64().unwrap()
}

// ---- the SDK ----------------------------------------------------------------------------

/// A client connected to an `everything-server --transport ws` child.
struct Sdk {
    client: Client,
    child: Child,
}

impl Sdk {
    /// Starts the server on a free port, reads its URL from its first stderr line (forwarding
    /// the rest), and connects.
    fn connect() -> Self {
        let mut child = Command::new(SERVER)
            .args(["--transport", "ws", "--port", "0"])
            .stdin(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stderr = BufReader::new(child.stderr.take().unwrap());
        let mut line = String::new();
        stderr.read_line(&mut line).unwrap();
        let url = line.trim().rsplit(' ').next().unwrap().to_owned();
        assert!(url.starts_with("ws://127.0.0.1:"), "everything-server said {line:?}");
        std::thread::spawn(move || {
            for line in stderr.lines() {
                let Ok(line) = line else { break };
                eprintln!("{line}");
            }
        });
        let options = ClientOptions::new("bench", "1").mode(ClientMode::Legacy).versions(vec![VERSION]);
        let client = Client::websocket(&url, &[], options).unwrap();
        assert_eq!(client.protocol_version(), VERSION);
        Self { client, child }
    }

    /// Closes the client, then ends the server (it serves until killed).
    fn stop(self) {
        let Self { client, mut child } = self;
        client.close();
        child.kill().unwrap();
        child.wait().unwrap();
    }
}

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
