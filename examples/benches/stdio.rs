//! `tools/call` round trips over stdio pipes: Talaria's client against a child
//! `everything-server --transport stdio`, next to a floor measured in the same run.
//!
//! ```text
//! cargo bench -p talaria-examples --bench stdio
//! TALARIA_BENCH_ROUNDS=1 TALARIA_BENCH_CALLS=2000 cargo bench -p talaria-examples --bench stdio   # smoke
//! TALARIA_BENCH_DEPTHS=1,64 TALARIA_BENCH_PAYLOADS=32 cargo bench -p talaria-examples --bench stdio
//! ```
//!
//! Every in-flight depth runs with every payload, each cell with its floor beside it. The
//! environment variables that tune the run:
//!
//! - `TALARIA_BENCH_DEPTHS`: the calls in flight, comma-separated (default `1,64,1024,10000`);
//! - `TALARIA_BENCH_PAYLOADS`: the bytes of the `echo` tool's `text` (default `32,65536`);
//! - `TALARIA_BENCH_CALLS`: calls per run per round (default 20,000) for payloads up to 8 KiB;
//!   larger payloads make proportionally fewer (64 KiB: 2,500), and no cell fewer than its depth;
//! - `TALARIA_BENCH_ROUNDS`: timed rounds, whose medians are quoted (default 5);
//! - `TALARIA_BENCH_ONLY`: the SDK runs to keep, e.g. `async10000,pipelined` (the floors always
//!   run).
//!
//! The runs in each cell, how they are timed and summed up, are the same as the `ws` bench's:
//! see `common/mod.rs`.
//!
//! The floor is `json-echo` (`src/bin/json_echo.rs`): a child process that parses each request
//! line with `serde_json` and writes the echo back, no SDK on either side. Its client is written
//! by hand: one thread for one call in flight; deeper, a writer thread that keeps `depth`
//! requests outstanding (flushing before it waits for room) and a reader thread that parses the
//! answers and matches them to their requests by id. Its latency ends when the answer line is
//! parsed; deeper than one it starts when a client that never blocked on the pipe would have
//! sent the request (`common::Window`), as the SDK's calls queue in its outbox.
//!
//! The SDK's [`Client`] starts its server child through `sh`, which prints its own pid and then
//! `exec`s the server, so the peak RSS of both children (the server's and `json-echo`'s) can be
//! read after the last round. The client allows 20,000 calls pending and 1 GiB of frames waiting
//! for the server (more if the matrix needs it), so the deepest cell never hits a limit.
// A bench measures wall-clock time and stops loudly if a peer misbehaves.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::cast_precision_loss)]

mod common;

use std::io::{BufRead, BufReader, BufWriter, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

use common::{peak_rss_kib, read_answers, Bench, Sample, Window, VERSION};
use serde_json::{json, Value};
use talaria::client::{Client, ClientOptions};
use talaria::stdio::{StderrMode, StdioCommand};

const SERVER: &str = env!("CARGO_BIN_EXE_everything-server");
const FLOOR: &str = env!("CARGO_BIN_EXE_json-echo");
/// The floor client's pipe buffers, as large as the SDK's.
const BUFFER: usize = 64 * 1024;

fn main() {
    // `TALARIA_BENCH_SERVER=json-echo`: the SDK's client talks to the floor's server, so the
    // ratio is the client's own cost.
    let server = match std::env::var("TALARIA_BENCH_SERVER").as_deref() {
        Ok("json-echo") => FLOOR,
        Ok("everything-server") | Err(_) => SERVER,
        Ok(other) => panic!("TALARIA_BENCH_SERVER={other}: everything-server or json-echo"),
    };
    let bench = Bench::start("stdio", "pipes", "json-echo");
    let mut floor = Floor::start();
    let sdk = Sdk::connect(server, bench.options());
    let results = bench.measure(&mut floor, &sdk.client);
    let peaks = [("SDK's server", peak_rss_kib(sdk.pid)), ("json-echo", peak_rss_kib(floor.child.id()))];
    sdk.client.close();
    floor.stop();
    bench.report(&results, &peaks);
}

// ---- the floor --------------------------------------------------------------------------

/// A `json-echo` child and the hand-written client's ends of its pipes.
struct Floor {
    child: Child,
    input: BufWriter<ChildStdin>,
    output: BufReader<ChildStdout>,
    next_id: u64,
}

impl Floor {
    fn start() -> Self {
        let mut child = Command::new(FLOOR).stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
        let input = BufWriter::with_capacity(BUFFER, child.stdin.take().unwrap());
        let output = BufReader::with_capacity(BUFFER, child.stdout.take().unwrap());
        Self { child, input, output, next_id: 1 }
    }

    /// Closes its stdin and reaps it.
    fn stop(self) {
        let Self { mut child, input, .. } = self;
        drop(input);
        let status = child.wait().unwrap();
        assert!(status.success(), "json-echo: {status}");
    }
}

impl common::Floor for Floor {
    const LABEL: &'static str = "floor (json-echo)";

    fn one(&mut self, text: &str, calls: usize) -> Sample {
        let mut latencies = Vec::with_capacity(calls);
        let mut line = String::new();
        let start = Instant::now();
        for _ in 0..calls {
            let id = self.next_id;
            self.next_id += 1;
            let sent = Instant::now();
            write_request(&mut self.input, id, text);
            self.input.flush().unwrap();
            line.clear();
            self.output.read_line(&mut line).unwrap();
            assert_eq!(answer_id(&line, text), id);
            latencies.push(sent.elapsed());
        }
        Sample::new(start.elapsed(), latencies)
    }

    /// A writer thread and a reader thread.
    fn wide(&mut self, text: &str, depth: usize, calls: usize) -> Sample {
        let base = self.next_id;
        self.next_id += calls as u64;
        let (sent_tx, sent_rx) = mpsc::channel::<(u64, Instant)>();
        let (room_tx, room_rx) = mpsc::channel::<Instant>();
        let (input, output) = (&mut self.input, &mut self.output);
        let start = Instant::now();
        let latencies = std::thread::scope(|scope| {
            scope.spawn(move || {
                let mut window = Window::new(start, depth, room_rx);
                let mut frame = Vec::new();
                for id in base..base + calls as u64 {
                    // Sends the batch before waiting for the reader to make room.
                    let (sent, ()) = window.send(
                        || input.flush().unwrap(),
                        || {
                            frame.clear();
                            write_request(&mut frame, id, text);
                        },
                    );
                    sent_tx.send((id, sent)).unwrap();
                    input.write_all(&frame).unwrap();
                }
                input.flush().unwrap();
            });
            let reader = scope.spawn(move || {
                let mut line = String::new();
                read_answers(calls, base, &sent_rx, &room_tx, || {
                    line.clear();
                    output.read_line(&mut line).unwrap();
                    answer_id(&line, text)
                })
            });
            reader.join().unwrap()
        });
        Sample::new(start.elapsed(), latencies)
    }
}

fn write_request(out: &mut impl Write, id: u64, text: &str) {
    let request = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": "echo", "arguments": {"text": text}}});
    serde_json::to_writer(&mut *out, &request).unwrap();
    out.write_all(b"\n").unwrap();
}

/// The id of an answer line, after checking it echoes `text`.
fn answer_id(line: &str, text: &str) -> u64 {
    let answer: Value = serde_json::from_str(line).unwrap();
    assert!(
        answer["result"]["content"][0]["text"] == text,
        "not an echo of the {} bytes sent: {line:.200}",
        text.len()
    );
    answer["id"].as_u64().unwrap()
}

// ---- the SDK ----------------------------------------------------------------------------

/// A client connected to a server child (`everything-server`, or `json-echo`), and its pid.
struct Sdk {
    client: Client,
    pid: u32,
}

impl Sdk {
    /// Starts the server through `sh`, which prints its own pid and then `exec`s the server
    /// (so the pid is the server's), and checks `/proc/<pid>/exe` is the server.
    fn connect(server: &str, options: ClientOptions) -> Self {
        let pid = Arc::new(Mutex::new(None));
        let seen = Arc::clone(&pid);
        let stderr = StderrMode::Capture(Arc::new(move |line: &str| {
            let mut pid = seen.lock().unwrap();
            match line.trim().parse::<u32>() {
                Ok(n) if pid.is_none() => *pid = Some(n),
                _ => eprintln!("server: {line}"),
            }
        }));
        let args = if server == SERVER { " --transport stdio" } else { "" };
        let script = format!("echo $$ >&2; exec '{server}'{args}");
        let command = StdioCommand::new("sh").args(["-c", &script]).stderr(stderr);
        let client = Client::stdio(command, options).unwrap();
        assert_eq!(client.protocol_version(), VERSION);
        // The pid line came before the handshake's answer, but its reader thread may lag.
        let deadline = Instant::now() + Duration::from_secs(5);
        let pid = loop {
            if let Some(pid) = *pid.lock().unwrap() {
                break pid;
            }
            assert!(Instant::now() < deadline, "the shell did not print its pid");
            std::thread::sleep(Duration::from_millis(1));
        };
        let exe = std::fs::read_link(format!("/proc/{pid}/exe")).unwrap();
        assert_eq!(exe, std::fs::canonicalize(server).unwrap(), "pid {pid} is the server");
        Self { client, pid }
    }
}
