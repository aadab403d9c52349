//! A Talaria client and a Talaria server under load: thousands of calls in flight at once over
//! stdio, WebSocket and the in-memory pair, from blocking threads, smol and tokio; every
//! answer checked exactly once. Also how long a call holds an executor's thread, and what a
//! server that stops reading does to the client (nothing blocks; closing is bounded).
//!
//! The counts are tunable; `scripts/stress.sh` runs the long version in release:
//!
//! | variable                         | default | what                                            |
//! |----------------------------------|---------|-------------------------------------------------|
//! | `TALARIA_STRESS_CALLS`           | 10,000  | 2 KiB calls in flight, every transport and host |
//! | `TALARIA_STRESS_BIG_CALLS`       | 10,000  | 64 KiB calls in flight, stdio from threads      |
//! | `TALARIA_STRESS_BIG_CALLS_OTHER` | 500     | 64 KiB calls in flight, every other case        |
//! | `TALARIA_STRESS_ROUNDS`          | 1       | how often each case runs, on a new connection   |
//! | `TALARIA_STRESS_TIMEOUT_SECS`    | 120     | a case still running after this has hung        |
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use serde_json::json;
use talaria::client::{AsyncClient, CallFuture, Client, ClientError, ClientOptions};
use talaria::core::schema::tools::CallToolResult;
use talaria::core::session::ClientMode;
use talaria::core::version::ProtocolVersion;
use talaria::stdio::{StderrMode, StdioCommand};

mod stress;

use stress::{
    case_timeout, env_count, options_for, payload, serial, watchdog, Host, Peer, Tally, Transport, BIG, SERVER, SMALL,
};

const TOKIO_CLIENT: &str = env!("CARGO_BIN_EXE_tokio-client");

// ---------------------------------------------------------------------------------------------
// Load: every transport from every host.

#[test]
fn stdio_from_blocking_threads() {
    load(Transport::Stdio, Host::Blocking);
}

#[test]
fn stdio_from_smol() {
    load(Transport::Stdio, Host::Smol);
}

#[test]
fn stdio_from_tokio() {
    load(Transport::Stdio, Host::Tokio);
}

#[test]
fn websocket_from_blocking_threads() {
    load(Transport::WebSocket, Host::Blocking);
}

#[test]
fn websocket_from_smol() {
    load(Transport::WebSocket, Host::Smol);
}

#[test]
fn websocket_from_tokio() {
    load(Transport::WebSocket, Host::Tokio);
}

#[test]
fn memory_from_blocking_threads() {
    load(Transport::Memory, Host::Blocking);
}

#[test]
fn memory_from_smol() {
    load(Transport::Memory, Host::Smol);
}

#[test]
fn memory_from_tokio() {
    load(Transport::Memory, Host::Tokio);
}

/// Runs `TALARIA_STRESS_ROUNDS` rounds of the 2 KiB and the 64 KiB load, each round on a new
/// connection.
fn load(transport: Transport, host: Host) {
    let _serial = serial();
    let small = env_count("TALARIA_STRESS_CALLS", 10_000);
    let big = if (transport, host) == (Transport::Stdio, Host::Blocking) {
        env_count("TALARIA_STRESS_BIG_CALLS", 10_000)
    } else {
        env_count("TALARIA_STRESS_BIG_CALLS_OTHER", 500)
    };
    let rounds = env_count("TALARIA_STRESS_ROUNDS", 1);
    for round in 1..=rounds {
        let label = format!("{transport:?}/{host:?} round {round}/{rounds}");
        let loads = [(small, SMALL), (big, BIG)];
        let name = label.clone();
        watchdog(&label, case_timeout() + Duration::from_secs(30), move || match host {
            Host::Blocking => blocking_load(transport, &loads, &name),
            Host::Smol => smol_load(transport, &loads, &name),
            Host::Tokio => tokio_load(transport, &loads, &name),
        });
    }
}

/// Connects with a blocking client, sends every call with `to_async`, and waits for them from
/// four threads.
fn blocking_load(transport: Transport, loads: &[(usize, usize)], label: &str) {
    let peer = Peer::start(transport);
    let client = peer.connect_blocking(options_for(loads));
    let calls = client.to_async();
    for &(n, size) in loads {
        let tally = Tally::new(label.to_owned(), n, size);
        let start = Instant::now();
        let sent: Vec<(usize, CallFuture<CallToolResult>)> =
            (0..n).map(|i| (i, calls.call_tool("echo", json!({"text": payload(i, size)})))).collect();
        let send = start.elapsed();
        let waiters = 4;
        let mut shares: Vec<Vec<_>> = (0..waiters).map(|_| Vec::with_capacity(n / waiters + 1)).collect();
        for (k, call) in sent.into_iter().enumerate() {
            shares[k % waiters].push(call);
        }
        std::thread::scope(|scope| {
            for share in shares {
                let tally = &tally;
                scope.spawn(move || {
                    for (i, call) in share {
                        tally.record(i, call.wait());
                    }
                });
            }
        });
        tally.verdict("all sent", send, start.elapsed());
    }
    client.close();
    if transport == Transport::Stdio {
        let status = client.exit_status().expect("the server was reaped by close");
        assert!(status.success(), "{label}: the server exited with {status:?} on stdin EOF");
    }
    peer.stop();
}

/// Connects under `smol::block_on` and runs every call as a task of a local executor.
fn smol_load(transport: Transport, loads: &[(usize, usize)], label: &str) {
    let peer = Peer::start(transport);
    let options = options_for(loads);
    smol::block_on(async {
        let client = peer.connect_async(options).await;
        let executor = smol::LocalExecutor::new();
        executor
            .run(async {
                for &(n, size) in loads {
                    let tally = Arc::new(Tally::new(label.to_owned(), n, size));
                    let start = Instant::now();
                    let tasks: Vec<_> = (0..n)
                        .map(|i| {
                            let (client, tally) = (client.clone(), Arc::clone(&tally));
                            executor.spawn(async move {
                                tally.record(i, client.call_tool("echo", json!({"text": payload(i, size)})).await);
                            })
                        })
                        .collect();
                    let send = start.elapsed();
                    for task in tasks {
                        task.await;
                    }
                    tally.verdict("all tasks spawned", send, start.elapsed());
                }
            })
            .await;
    });
    peer.stop();
}

/// Connects under a multi-thread tokio runtime (no `spawn_blocking`) and runs every call as a
/// tokio task.
fn tokio_load(transport: Transport, loads: &[(usize, usize)], label: &str) {
    let peer = Peer::start(transport);
    let options = options_for(loads);
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).build().unwrap();
    runtime.block_on(async {
        let client = peer.connect_async(options).await;
        for &(n, size) in loads {
            let tally = Arc::new(Tally::new(label.to_owned(), n, size));
            let start = Instant::now();
            let tasks: Vec<_> = (0..n)
                .map(|i| {
                    let (client, tally) = (client.clone(), Arc::clone(&tally));
                    tokio::spawn(async move {
                        tally.record(i, client.call_tool("echo", json!({"text": payload(i, size)})).await);
                    })
                })
                .collect();
            let send = start.elapsed();
            for (i, task) in tasks.into_iter().enumerate() {
                if let Err(e) = task.await {
                    tally.fail(format!("call {i}: its task failed: {e}"));
                }
            }
            tally.verdict("all tasks spawned", send, start.elapsed());
        }
    });
    drop(runtime);
    peer.stop();
}

// ---------------------------------------------------------------------------------------------
// Executor hold time: creating a call and polling its future are short.

#[test]
fn calls_hold_a_tokio_worker_briefly() {
    let _serial = serial();
    for transport in [Transport::Stdio, Transport::WebSocket, Transport::Memory] {
        let peer = Peer::start(transport);
        let label = format!("hold {transport:?}/Tokio");
        let tally_label = label.clone();
        let holds = watchdog(&label, case_timeout(), move || {
            let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).build().unwrap();
            let holds = runtime.block_on(async {
                let client = peer.connect_async(options_for(&[(HOLD_CALLS, SMALL)])).await;
                // On a worker thread: create every call there, then await each as a task.
                tokio::spawn(async move {
                    let tally = Arc::new(Tally::new(tally_label, HOLD_CALLS, SMALL));
                    let (timed, creates) = create_timed(&client, &tally);
                    let tasks: Vec<_> = timed.into_iter().map(tokio::spawn).collect();
                    let mut polls = Vec::new();
                    for task in tasks {
                        polls.extend(task.await.unwrap());
                    }
                    tally.check();
                    Holds { creates, polls }
                })
                .await
                .unwrap()
            });
            drop(runtime);
            peer.stop();
            holds
        });
        holds.check(&label);
    }
}

#[test]
fn calls_hold_a_smol_thread_briefly() {
    let _serial = serial();
    for transport in [Transport::Stdio, Transport::WebSocket, Transport::Memory] {
        let peer = Peer::start(transport);
        let label = format!("hold {transport:?}/Smol");
        let tally_label = label.clone();
        let holds = watchdog(&label, case_timeout(), move || {
            let holds = smol::block_on(async {
                let client = peer.connect_async(options_for(&[(HOLD_CALLS, SMALL)])).await;
                let tally = Arc::new(Tally::new(tally_label, HOLD_CALLS, SMALL));
                let executor = smol::LocalExecutor::new();
                executor
                    .run(async {
                        let (timed, creates) = create_timed(&client, &tally);
                        let tasks: Vec<_> = timed.into_iter().map(|call| executor.spawn(call)).collect();
                        let mut polls = Vec::new();
                        for task in tasks {
                            polls.extend(task.await);
                        }
                        tally.check();
                        Holds { creates, polls }
                    })
                    .await
            });
            peer.stop();
            holds
        });
        holds.check(&label);
    }
}

/// Calls in flight while hold times are measured.
const HOLD_CALLS: usize = 1_000;

/// The longest any single creation or poll may hold the thread.
const HOLD_MAX: Duration = Duration::from_millis(20);

/// How long creating a call may hold the thread, 99th percentile. Creating a call serializes
/// it under the connection's engine lock, which the connection's reader also takes while it
/// handles one read of answers (up to 64 KiB, some 30 answers here). Optimized, both take
/// tens of microseconds and p99 stays far below 1 ms; unoptimized (a debug build, as
/// `cargo test` runs), JSON is about ten times slower and the wait behind one read reaches a
/// millisecond: the debug build gets 5 ms.
const CREATE_P99: Duration = if cfg!(debug_assertions) { Duration::from_millis(5) } else { Duration::from_millis(1) };

/// Creates `HOLD_CALLS` echo calls, timing each creation; each comes back wrapped in a future
/// that records its answer in `tally` and resolves to how long each of its polls held.
fn create_timed(
    client: &AsyncClient,
    tally: &Arc<Tally>,
) -> (Vec<impl Future<Output = Vec<Hold>> + Send + 'static>, Vec<Hold>) {
    let mut creates = Vec::with_capacity(HOLD_CALLS);
    let mut timed = Vec::with_capacity(HOLD_CALLS);
    for i in 0..HOLD_CALLS {
        let text = payload(i, SMALL);
        let (call, hold) = Hold::measure(|| client.call_tool("echo", json!({"text": text})));
        creates.push(hold);
        let tally = Arc::clone(tally);
        timed.push(async move {
            let (outcome, polls) = Timed::new(call).await;
            tally.record(i, outcome);
            polls
        });
    }
    (timed, creates)
}

/// How long one step held its thread.
#[derive(Clone, Copy)]
struct Hold {
    /// Wall-clock time from start to end.
    wall: Duration,
    /// The wall-clock time less what the thread spent runnable but waiting for a CPU (the
    /// kernel's run-queue delay, Linux only): time on a CPU or blocked (on a lock, say), which
    /// is what the code costs its executor; preemption by other processes is not.
    held: Duration,
}

impl Hold {
    fn measure<T>(step: impl FnOnce() -> T) -> (T, Self) {
        let waited_before = run_queue_delay();
        let start = Instant::now();
        let out = step();
        let wall = start.elapsed();
        let preempted = run_queue_delay().saturating_sub(waited_before);
        (out, Self { wall, held: wall.saturating_sub(preempted) })
    }
}

/// How long this thread has waited for a CPU while runnable, in all (the second field of
/// `/proc/thread-self/schedstat`); zero where that is not to be had.
fn run_queue_delay() -> Duration {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|stat| stat.split_whitespace().nth(1)?.parse().ok())
        .map_or(Duration::ZERO, Duration::from_nanos)
}

/// A future that measures how long each poll of the future inside it holds the thread.
struct Timed<F> {
    inner: F,
    polls: Vec<Hold>,
}

impl<F> Timed<F> {
    const fn new(inner: F) -> Self {
        Self { inner, polls: Vec::new() }
    }
}

impl<F: Future + Unpin> Future for Timed<F> {
    type Output = (F::Output, Vec<Hold>);

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let (outcome, hold) = Hold::measure(|| Pin::new(&mut self.inner).poll(cx));
        self.polls.push(hold);
        outcome.map(|output| (output, std::mem::take(&mut self.polls)))
    }
}

/// Hold times: each call's creation, each poll of each call's future.
struct Holds {
    creates: Vec<Hold>,
    polls: Vec<Hold>,
}

impl Holds {
    /// Prints p50/p99/max of both, by the wall clock and without preemption; asserts, on the
    /// latter, p99 < 1 ms (see [`CREATE_P99`] for creating a call in a debug build) and max
    /// < 20 ms.
    fn check(self, label: &str) {
        let spreads = |holds: &[Hold]| {
            let (mut wall, mut held): (Vec<_>, Vec<_>) = holds.iter().map(|h| (h.wall, h.held)).unzip();
            (Spread::of(&mut wall), Spread::of(&mut held))
        };
        let (creates_wall, creates) = spreads(&self.creates);
        let (polls_wall, polls) = spreads(&self.polls);
        println!(
            "{label}: {HOLD_CALLS} calls of {SMALL} B in flight:\n  create {creates}\n  poll   {polls}\n  \
             (wall clock, preemption included: create {creates_wall}; poll {polls_wall})"
        );
        for (what, spread, p99) in
            [("creating a call", creates, CREATE_P99), ("a poll", polls, Duration::from_millis(1))]
        {
            assert!(spread.p99 < p99, "{label}: {what} held the thread too long: {spread}, want p99 < {p99:?}");
            assert!(
                spread.max < HOLD_MAX,
                "{label}: {what} held the thread too long: {spread}, want max < {HOLD_MAX:?}"
            );
        }
    }
}

/// The median, 99th percentile and maximum of some durations.
#[derive(Clone, Copy)]
struct Spread {
    count: usize,
    p50: Duration,
    p99: Duration,
    max: Duration,
}

impl Spread {
    fn of(samples: &mut [Duration]) -> Self {
        assert!(!samples.is_empty(), "no samples");
        samples.sort_unstable();
        let at = |q: usize| samples[(samples.len() * q / 100).min(samples.len() - 1)];
        Self { count: samples.len(), p50: at(50), p99: at(99), max: samples[samples.len() - 1] }
    }
}

impl std::fmt::Display for Spread {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "p50 {:?} p99 {:?} max {:?} (n={})", self.p50, self.p99, self.max, self.count)
    }
}

// ---------------------------------------------------------------------------------------------
// Backpressure: a server that stops reading.

/// Answers `initialize` (whatever its id), prints its pid on stderr, then never reads again.
const STALLED: &str = r#"IFS= read -r line
id=$(printf '%s\n' "$line" | sed -n 's/.*"id":\([0-9][0-9]*\).*/\1/p')
printf '{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"stalled","version":"1"}}}\n' "$id"
echo $$ >&2
exec sleep 1000"#;

/// The outbox limit the backpressure tests set.
const SMALL_OUTBOX: usize = 1 << 20;

/// The stalled server and where its pid arrives.
fn stalled() -> (StdioCommand, Arc<Mutex<Option<u32>>>) {
    let pid = Arc::new(Mutex::new(None));
    let seen = Arc::clone(&pid);
    let command = StdioCommand::new("sh").args(["-c", STALLED]).grace_period(Duration::from_millis(200)).stderr(
        StderrMode::Capture(Arc::new(move |line: &str| {
            if let Ok(pid) = line.trim().parse::<u32>() {
                seen.lock().unwrap().get_or_insert(pid);
            }
        })),
    );
    (command, pid)
}

fn stalled_options() -> ClientOptions {
    ClientOptions::new("stress", "1")
        .mode(ClientMode::Legacy)
        .versions(vec![ProtocolVersion::V2025_06_18])
        .outbox_limit(SMALL_OUTBOX)
}

/// Waits (up to 5 s) for the pid the stalled server printed.
fn stalled_pid(pid: &Mutex<Option<u32>>) -> u32 {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        if let Some(pid) = *pid.lock().unwrap() {
            return pid;
        }
        assert!(Instant::now() < deadline, "the stalled server never printed its pid");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Sends 64 KiB calls until one fails with `OutboxFull`; returns the calls sent before it.
/// Fails the test if none does within 256 calls, or if sending any call blocks.
fn fill_outbox(client: &AsyncClient, label: &str) -> Vec<CallFuture<CallToolResult>> {
    let text = payload(0, BIG);
    let mut sent = Vec::new();
    let mut slowest = Duration::ZERO;
    for i in 0..256 {
        let start = Instant::now();
        let call = client.call_tool("echo", json!({"text": text}));
        slowest = slowest.max(start.elapsed());
        if call.id().is_some() {
            sent.push(call);
            continue;
        }
        match call.wait() {
            Err(ClientError::OutboxFull { limit }) => {
                assert_eq!(limit, SMALL_OUTBOX, "{label}");
                println!("{label}: OutboxFull after {i} calls of {BIG} B; slowest send {slowest:?}");
                assert!(slowest < Duration::from_millis(100), "{label}: a send blocked for {slowest:?}");
                return sent;
            }
            other => panic!("{label}: call {i} was refused with {other:?}, expected OutboxFull"),
        }
    }
    panic!("{label}: 256 calls of {BIG} B to a server that does not read, and no OutboxFull")
}

fn alive(pid: u32) -> bool {
    // A zombie counts as gone: it has exited and only waits to be reaped by its parent.
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rsplit(')').next().and_then(|rest| rest.split_whitespace().next()).is_some_and(|state| state != "Z")
    })
}

/// Waits up to `limit` for `pid` to be gone.
fn gone_within(pid: u32, limit: Duration) -> bool {
    let deadline = Instant::now() + limit;
    while alive(pid) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    !alive(pid)
}

#[test]
fn a_server_that_stops_reading_fills_the_outbox_and_close_is_bounded() {
    let _serial = serial();
    let label = "stalled/Blocking";
    watchdog(label, Duration::from_secs(60), move || {
        let (command, pid) = stalled();
        let client = Client::stdio(command, stalled_options()).unwrap();
        let pid = stalled_pid(&pid);
        let sent = fill_outbox(&client.to_async(), label);
        // A blocking call fails at once too, rather than waiting behind the full outbox.
        let start = Instant::now();
        let refused = client.call_tool("echo", json!({"text": "one more"}));
        assert!(matches!(refused, Err(ClientError::OutboxFull { .. })), "{label}: {refused:?}");
        assert!(start.elapsed() < Duration::from_millis(100), "{label}: refused after {:?}", start.elapsed());

        let start = Instant::now();
        client.close();
        let took = start.elapsed();
        println!("{label}: close took {took:?} ({} calls were in flight)", sent.len());
        // Up to 2 s for the last frames to leave, then 200 ms after stdin EOF, 200 ms after
        // SIGTERM.
        assert!(took < Duration::from_secs(5), "{label}: close took {took:?}");
        let status = client.exit_status();
        assert!(status.is_some_and(|s| !s.success()), "{label}: the child was not reaped: {status:?}");
        assert!(!alive(pid), "{label}: the stalled server {pid} survived close");
        for call in sent {
            let outcome = call.wait();
            assert!(outcome.is_err(), "{label}: a call to a closed server succeeded: {outcome:?}");
        }
    });
}

#[test]
fn dropping_a_stalled_client_does_not_block_smol() {
    let _serial = serial();
    let label = "stalled/Smol";
    watchdog(label, Duration::from_secs(60), move || {
        let (command, pid) = stalled();
        let pid_now = smol::block_on(async move {
            let client = AsyncClient::stdio(command, stalled_options()).await.unwrap();
            let sent = fill_outbox(&client, label);
            let start = Instant::now();
            drop(sent);
            drop(client);
            let took = start.elapsed();
            println!("{label}: dropping the client and its calls took {took:?}");
            assert!(took < Duration::from_millis(100), "{label}: dropping blocked for {took:?}");
            stalled_pid(&pid)
        });
        assert!(
            gone_within(pid_now, Duration::from_secs(5)),
            "{label}: the stalled server {pid_now} outlived the drop"
        );
    });
}

#[test]
fn dropping_a_stalled_client_does_not_block_tokio() {
    let _serial = serial();
    let label = "stalled/Tokio";
    watchdog(label, Duration::from_secs(60), move || {
        let (command, pid) = stalled();
        let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).build().unwrap();
        let took = runtime.block_on(async move {
            let client = AsyncClient::stdio(command, stalled_options()).await.unwrap();
            tokio::spawn(async move {
                let sent = fill_outbox(&client, label);
                let start = Instant::now();
                drop(sent);
                drop(client);
                start.elapsed()
            })
            .await
            .unwrap()
        });
        println!("{label}: dropping the client and its calls on a worker took {took:?}");
        assert!(took < Duration::from_millis(100), "{label}: dropping blocked a worker for {took:?}");
        drop(runtime);
        let pid = stalled_pid(&pid);
        assert!(gone_within(pid, Duration::from_secs(5)), "{label}: the stalled server {pid} outlived the drop");
    });
}

// ---------------------------------------------------------------------------------------------
// The tokio-client example.

#[test]
fn the_tokio_client_example_makes_a_hundred_concurrent_calls() {
    let _serial = serial();
    let default = std::process::Command::new(TOKIO_CLIENT).output().unwrap();
    let explicit = std::process::Command::new(TOKIO_CLIENT)
        .args([SERVER, "--transport", "stdio", "--runtime", "smol"])
        .output()
        .unwrap();
    for (how, output) in [("next to it", default), ("given", explicit)] {
        let stdout = String::from_utf8_lossy(&output.stdout);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "server {how}: {:?}\n{stdout}\n{stderr}", output.status);
        assert!(stdout.contains("connected to everything-server"), "server {how}: {stdout}");
        assert!(stdout.contains("tools: echo, add"), "server {how}: {stdout}");
        assert!(stdout.contains("echo: 100 concurrent calls, 100 answers correct"), "server {how}: {stdout}");
        if cfg!(target_os = "linux") {
            // Talaria started its own threads only: no smol executor, no async-io reactor.
            let threads = stdout.lines().find_map(|l| l.strip_prefix("threads: ")).expect("a thread list");
            assert!(threads.contains("talaria-write") && threads.contains("talaria-stdio"), "{threads}");
            assert!(!threads.contains("async-io") && !threads.contains("smol"), "another runtime started: {threads}");
        }
    }
    let failed = std::process::Command::new(TOKIO_CLIENT).arg("/nonexistent/server").output().unwrap();
    assert!(!failed.status.success());
    assert!(String::from_utf8_lossy(&failed.stderr).starts_with("tokio-client: "));
}
