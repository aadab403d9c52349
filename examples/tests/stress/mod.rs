//! The stress suite's harness: the peers (an everything server over stdio, WebSocket or in
//! memory), the hosts, the exactly-once tally, and the watchdog that turns a hang into a
//! failure with a stack dump's worth of hints.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock, PoisonError};
use std::time::Duration;

use talaria::client::{AsyncClient, Client, ClientError, ClientOptions};
use talaria::core::schema::tools::CallToolResult;
use talaria::server::Server;
use talaria::stdio::StdioCommand;
use talaria::ws::{WsServer, WsServerOptions};
use talaria_examples::everything::Calls;

/// The everything server binary (the stdio peer).
pub(super) const SERVER: &str = env!("CARGO_BIN_EXE_everything-server");
/// The small payload: 2 KiB of text per call.
pub(super) const SMALL: usize = 2 * 1024;
/// The large payload, past a pipe's or socket's buffer: 64 KiB of text per call.
pub(super) const BIG: usize = 64 * 1024;

/// Which transport a case uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Transport {
    /// An everything-server child over its stdin/stdout.
    Stdio,
    /// The everything server on an in-process `WsServer` at 127.0.0.1.
    WebSocket,
    /// The everything server in memory.
    Memory,
}

/// Which code drives the client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Host {
    /// Threads: every call sent with `to_async`, then `CallFuture::wait` from four threads.
    Blocking,
    /// `smol::block_on`, a task per call.
    Smol,
    /// A multi-thread tokio runtime, a task per call.
    Tokio,
}

/// The server side of a case.
pub(super) struct Peer {
    transport: Transport,
    server: Server<Calls>,
    ws: Option<WsServer>,
}

impl Peer {
    pub(super) fn start(transport: Transport) -> Self {
        let server = talaria_examples::everything::server();
        let ws = (transport == Transport::WebSocket)
            .then(|| WsServer::bind(&server, "127.0.0.1:0", WsServerOptions::default()).unwrap());
        Self { transport, server, ws }
    }

    pub(super) fn url(&self) -> String {
        format!("ws://{}/ws", self.ws.as_ref().expect("a WebSocket peer").local_addr())
    }

    pub(super) fn command() -> StdioCommand {
        StdioCommand::new(SERVER).args(["--transport", "stdio"]).grace_period(Duration::from_millis(500))
    }

    pub(super) fn connect_blocking(&self, options: ClientOptions) -> Client {
        match self.transport {
            Transport::Stdio => Client::stdio(Self::command(), options),
            Transport::WebSocket => Client::websocket(&self.url(), &[], options),
            Transport::Memory => talaria::memory::connect(&self.server, options),
        }
        .unwrap_or_else(|e| panic!("{:?}: cannot connect: {e}", self.transport))
    }

    pub(super) async fn connect_async(&self, options: ClientOptions) -> AsyncClient {
        match self.transport {
            Transport::Stdio => AsyncClient::stdio(Self::command(), options).await,
            Transport::WebSocket => AsyncClient::websocket(&self.url(), &[], options).await,
            Transport::Memory => AsyncClient::memory(&self.server, options).await,
        }
        .unwrap_or_else(|e| panic!("{:?}: cannot connect: {e}", self.transport))
    }

    pub(super) fn stop(self) {
        if let Some(ws) = self.ws {
            ws.shutdown();
        }
    }
}

/// Client options with room for every call of `loads` in flight at once.
pub(super) fn options_for(loads: &[(usize, usize)]) -> ClientOptions {
    let calls = loads.iter().map(|&(n, _)| n).max().unwrap_or(0);
    let bytes = loads.iter().map(|&(n, size)| n * (size + 512)).max().unwrap_or(0);
    ClientOptions::new("stress", "1")
        .max_pending(calls + 16)
        .outbox_limit(bytes.max(talaria::DEFAULT_OUTBOX_LIMIT))
        .request_timeout(case_timeout())
}

/// The text of call `i`: its marker `#i:`, then filler up to `size` bytes.
pub(super) fn payload(i: usize, size: usize) -> String {
    static FILLER: OnceLock<String> = OnceLock::new();
    let filler = FILLER.get_or_init(|| {
        let alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
        alphabet.repeat((BIG + 2 * alphabet.len()) / alphabet.len() + 1)
    });
    let mut text = format!("#{i}:");
    let from = i % 61;
    text.push_str(&filler[from..from + size.saturating_sub(text.len())]);
    text
}

/// Every answer of one load, checked exactly once.
pub(super) struct Tally {
    label: String,
    size: usize,
    seen: Vec<AtomicBool>,
    answered: AtomicUsize,
    failed: AtomicUsize,
    failures: Mutex<Vec<String>>,
}

impl Tally {
    pub(super) fn new(label: String, n: usize, size: usize) -> Self {
        Self {
            label,
            size,
            seen: (0..n).map(|_| AtomicBool::new(false)).collect(),
            answered: AtomicUsize::new(0),
            failed: AtomicUsize::new(0),
            failures: Mutex::new(Vec::new()),
        }
    }

    /// Checks call `i`'s outcome: an answer carrying its own marker and payload, seen once.
    pub(super) fn record(&self, i: usize, outcome: Result<CallToolResult, ClientError>) {
        let result = match outcome {
            Ok(result) => result,
            Err(e) => return self.fail(format!("call {i} failed: {e}")),
        };
        let text: String = result.content.iter().filter_map(|c| c.as_text()).collect();
        let marker = text.strip_prefix('#').and_then(|t| t.split_once(':')).and_then(|(n, _)| n.parse::<usize>().ok());
        let Some(j) = marker.filter(|&j| j < self.seen.len()) else {
            return self.fail(format!("call {i}: an answer without a valid marker: {:?}", head(&text)));
        };
        if j != i {
            return self.fail(format!("call {i} got the answer of call {j}"));
        }
        if self.seen[j].swap(true, Ordering::AcqRel) {
            return self.fail(format!("call {i} was answered twice"));
        }
        if text != payload(i, self.size) {
            return self.fail(format!("call {i}: payload corrupted ({} bytes, expected {})", text.len(), self.size));
        }
        self.answered.fetch_add(1, Ordering::AcqRel);
    }

    pub(super) fn fail(&self, why: String) {
        self.failed.fetch_add(1, Ordering::AcqRel);
        let mut failures = self.failures.lock().unwrap_or_else(PoisonError::into_inner);
        if failures.len() < 10 {
            failures.push(why);
        }
    }

    /// Fails the test unless every call was answered once, correctly.
    pub(super) fn check(&self) {
        let n = self.seen.len();
        let answered = self.answered.load(Ordering::Acquire);
        let failed = self.failed.load(Ordering::Acquire);
        let failures = self.failures.lock().unwrap_or_else(PoisonError::into_inner);
        assert!(
            failed == 0 && answered == n,
            "{}: {answered} of {n} calls of {} B answered correctly, {failed} failed; first failures:\n  {}",
            self.label,
            self.size,
            failures.join("\n  ")
        );
        let missing = self.seen.iter().filter(|s| !s.load(Ordering::Acquire)).count();
        assert_eq!(missing, 0, "{}: {missing} calls never answered", self.label);
    }

    /// [`Tally::check`], then prints the throughput: `started` is how long the calls took to
    /// be `what` (sent, their tasks spawned), `total` until the last answer was checked.
    pub(super) fn verdict(&self, what: &str, started: Duration, total: Duration) {
        self.check();
        let (n, secs) = (self.seen.len(), total.as_secs_f64());
        println!(
            "{}: {n} calls x {} B in flight: {what} in {started:.2?}, all answered in {total:.2?}: \
             {:.0} calls/s, {:.1} MiB/s each way",
            self.label,
            self.size,
            n as f64 / secs,
            (n * self.size) as f64 / secs / (1024.0 * 1024.0)
        );
    }
}

/// The start of `text`, for messages.
pub(super) fn head(text: &str) -> &str {
    text.get(..40).unwrap_or(text)
}

/// Runs `case` on a thread of its own and fails the test if it has not finished after
/// `limit`: a hang gets a clear message rather than a stuck test run. A panic inside goes on.
pub(super) fn watchdog<T: Send + 'static>(
    label: &str,
    limit: Duration,
    case: impl FnOnce() -> T + Send + 'static,
) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    let worker = std::thread::Builder::new()
        .name(format!("stress {label}"))
        .spawn(move || {
            let _ = tx.send(case());
        })
        .unwrap();
    match rx.recv_timeout(limit) {
        Ok(outcome) => outcome,
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => panic!(
            "{label}: still running after {limit:?}: hung (inspect with `gdb -p {} -batch -ex 'thread apply all bt'`)",
            std::process::id()
        ),
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => match worker.join() {
            Err(panic) => std::panic::resume_unwind(panic),
            Ok(()) => panic!("{label}: the case ended without an outcome"),
        },
    }
}

/// One case at a time: the cases measure throughput and hold times, and each wants the
/// machine's cores to itself.
pub(super) fn serial() -> MutexGuard<'static, ()> {
    static SERIAL: Mutex<()> = Mutex::new(());
    SERIAL.lock().unwrap_or_else(PoisonError::into_inner)
}

/// How long a case may run before it counts as hung (also every call's timeout).
pub(super) fn case_timeout() -> Duration {
    Duration::from_secs(env_count("TALARIA_STRESS_TIMEOUT_SECS", 120) as u64)
}

/// A count from the environment, or `default`.
pub(super) fn env_count(name: &str, default: usize) -> usize {
    match std::env::var(name) {
        Ok(value) => value.trim().replace('_', "").parse().unwrap_or_else(|_| panic!("{name}={value:?}: not a count")),
        Err(_) => default,
    }
}
