//! In-memory round trips through a client and a server session, against a `serde_json` floor.
//!
//! ```text
//! cargo bench -p talaria-core --bench session
//! TALARIA_BENCH_CALLS=20000 TALARIA_BENCH_ROUNDS=3 cargo bench -p talaria-core --bench session   # smoke
//! ```
//!
//! One call is a `tools/call`-shaped exchange: the client encodes a request, the server decodes
//! it and hands it to the application, the application answers, the client decodes the
//! response and ends the request. No I/O: frames move between the sessions in memory. The floor
//! does the same four encode/decode steps with `serde_json` alone (no session), on the same
//! messages. Figures are medians of the rounds; allocations and peak heap come from a separate
//! counted run (dhat), so counting does not slow the timed runs.
// A bench measures wall-clock time and stops loudly if the sessions misbehave.
#![allow(
    missing_docs,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::disallowed_methods,
    clippy::cast_precision_loss
)]

use std::hint::black_box;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use talaria_core::client::Call;
use talaria_core::schema::lifecycle::{ListChangedCapability, ServerCapabilities};
use talaria_core::schema::tools::{CallTool, CallToolRequestParams, CallToolResult, Tool};
use talaria_core::schema::Implementation;
use talaria_core::server::Router;
use talaria_core::session::{
    Client, ClientConfig, ClientMode, Event, Output, ReplyToken, RequestOptions, Route, Server, ServerConfig, Session,
};

#[global_allocator]
static ALLOC: dhat::Alloc = dhat::Alloc;

#[derive(Serialize, Deserialize)]
struct CallParams<'a> {
    name: &'a str,
    arguments: Args<'a>,
}

#[derive(Serialize, Deserialize)]
struct Args<'a> {
    text: &'a str,
    count: u32,
}

#[derive(Serialize)]
struct CallResult<'a> {
    content: [Text<'a>; 1],
    #[serde(rename = "isError")]
    is_error: bool,
}

#[derive(Serialize)]
struct Text<'a> {
    #[serde(rename = "type")]
    kind: &'a str,
    text: &'a str,
}

const PARAMS: CallParams<'static> = CallParams { name: "echo", arguments: Args { text: "hello, world", count: 3 } };
const RESULT: CallResult<'static> =
    CallResult { content: [Text { kind: "text", text: "hello, world hello, world hello, world" }], is_error: false };

struct Pair {
    client: Session<Client>,
    server: Session<Server>,
    now: Instant,
    replies: Vec<ReplyToken>,
    frames: Vec<Vec<u8>>,
    done: usize,
}

impl Pair {
    fn new() -> Self {
        let now = Instant::now();
        let caps = ServerCapabilities { tools: Some(ListChangedCapability::default()), ..Default::default() };
        let server =
            Session::<Server>::new(ServerConfig::new(Implementation::new("bench-server", "1")).with_capabilities(caps));
        let client_config = ClientConfig::new(Implementation::new("bench-client", "1")).with_mode(ClientMode::Legacy);
        let client = Session::<Client>::new(client_config, now);
        let mut pair = Self { client, server, now, replies: Vec::new(), frames: Vec::new(), done: 0 };
        pair.deliver_to_server();
        pair.deliver_to_client();
        pair.deliver_to_server();
        assert!(pair.client.phase().is_ready() && pair.server.phase().is_ready());
        pair
    }

    fn deliver_to_server(&mut self) {
        while let Some(out) = self.client.poll_output() {
            match out {
                Output::Transmit { payload, .. } => self.frames.push(payload),
                Output::Event(Event::Response { outcome, .. }) => {
                    black_box(outcome.unwrap());
                    self.done += 1;
                }
                _ => {}
            }
        }
        for frame in self.frames.drain(..) {
            self.server.handle_frame(self.now, Route::Connection, &frame);
        }
        while let Some(out) = self.server.poll_output() {
            match out {
                Output::Transmit { payload, .. } => self.frames.push(payload),
                Output::Event(Event::Request(req)) => self.replies.push(req.reply),
                _ => {}
            }
        }
    }

    fn deliver_to_client(&mut self) {
        for frame in self.frames.drain(..) {
            self.client.handle_frame(self.now, Route::Connection, &frame);
        }
        while let Some(out) = self.client.poll_output() {
            match out {
                Output::Transmit { payload, .. } => self.frames.push(payload),
                Output::Event(Event::Response { outcome, .. }) => {
                    black_box(outcome.unwrap());
                    self.done += 1;
                }
                _ => {}
            }
        }
    }

    /// `calls` round trips, `inflight` at a time.
    fn run(&mut self, calls: usize, inflight: usize) {
        self.done = 0;
        let mut sent = 0;
        while self.done < calls {
            let batch = inflight.min(calls - sent);
            for _ in 0..batch {
                let params = serde_json::value::to_raw_value(&PARAMS).unwrap();
                self.client.send_request(self.now, "tools/call", Some(params), RequestOptions::default()).unwrap();
            }
            sent += batch;
            self.deliver_to_server();
            for reply in std::mem::take(&mut self.replies) {
                self.server.respond_with(reply, &RESULT).unwrap();
            }
            self.collect_server_outputs();
            self.deliver_to_client();
        }
    }

    /// Moves what the server produced after answering.
    fn collect_server_outputs(&mut self) {
        while let Some(out) = self.server.poll_output() {
            if let Output::Transmit { payload, .. } = out {
                self.frames.push(payload);
            }
        }
    }
}

/// The typed handler's arguments.
#[derive(Deserialize)]
struct EchoArgs {
    text: String,
    #[allow(dead_code)] // decoded as a real handler would, not used
    count: u32,
}

/// The full typed stack: typed params in (`Session::call::<CallTool>`), the router validating
/// the arguments against the tool's schema and calling a typed handler, a typed result out
/// (`Call::outcome`).
struct Typed {
    pair: Pair,
    router: Router<()>,
    calls: Vec<Call<CallTool>>,
}

impl Typed {
    fn new() -> Self {
        let schema = serde_json::json!({"type": "object", "properties": {"text": {"type": "string"}, "count": {"type": "integer"}},
            "required": ["text"]});
        let router = Router::<()>::builder()
            .tool(Tool::new("echo", serde_json::from_value(schema).unwrap()), |_ctx, args: EchoArgs| {
                Ok(CallToolResult::text(args.text.repeat(3)))
            })
            .build();
        Self { pair: Pair::new(), router, calls: Vec::new() }
    }

    fn run(&mut self, calls: usize, inflight: usize) {
        let mut done = 0;
        let params = CallToolRequestParams::new("echo")
            .with_arguments(serde_json::from_value(serde_json::json!({"text": "hello, world", "count": 3})).unwrap());
        while done < calls {
            let batch = inflight.min(calls - done);
            for _ in 0..batch {
                let call =
                    self.pair.client.call::<CallTool>(self.pair.now, &params, RequestOptions::default()).unwrap();
                self.calls.push(call);
            }
            let p = &mut self.pair;
            while let Some(out) = p.client.poll_output() {
                if let Output::Transmit { payload, .. } = out {
                    p.server.handle_frame(p.now, Route::Connection, &payload);
                }
            }
            while let Some(out) = p.server.poll_output() {
                match out {
                    Output::Transmit { payload, .. } => p.frames.push(payload),
                    Output::Event(Event::Request(req)) => self.router.dispatch(&mut p.server, &mut (), req).unwrap(),
                    _ => {}
                }
            }
            while let Some(out) = p.server.poll_output() {
                if let Output::Transmit { payload, .. } = out {
                    p.frames.push(payload);
                }
            }
            for frame in p.frames.drain(..) {
                p.client.handle_frame(p.now, Route::Connection, &frame);
            }
            let calls = std::mem::take(&mut self.calls);
            while let Some(out) = p.client.poll_output() {
                if let Output::Event(Event::Response { id, outcome }) = out {
                    let call = calls.iter().find(|c| *c.id() == id).unwrap();
                    let result: CallToolResult = call.outcome(outcome).unwrap();
                    black_box(result);
                    done += 1;
                }
            }
        }
    }
}

/// The floor: the same four encode/decode steps with `serde_json` alone.
fn floor(calls: usize, inflight: usize) -> usize {
    #[derive(Serialize)]
    struct Req<'a> {
        jsonrpc: &'a str,
        id: u64,
        method: &'a str,
        params: &'a CallParams<'a>,
    }
    #[derive(Serialize)]
    struct Resp<'a> {
        jsonrpc: &'a str,
        id: u64,
        result: &'a CallResult<'a>,
    }
    let mut done = 0;
    let mut id = 0;
    while done < calls {
        let batch = inflight.min(calls - done);
        let mut wire = Vec::with_capacity(batch);
        for _ in 0..batch {
            id += 1;
            wire.push(serde_json::to_vec(&Req { jsonrpc: "2.0", id, method: "tools/call", params: &PARAMS }).unwrap());
        }
        let mut answers = Vec::with_capacity(batch);
        for frame in &wire {
            let request: Value = serde_json::from_slice(frame).unwrap();
            let id = request["id"].as_u64().unwrap();
            answers.push(serde_json::to_vec(&Resp { jsonrpc: "2.0", id, result: &RESULT }).unwrap());
        }
        for frame in &answers {
            let response: Value = serde_json::from_slice(frame).unwrap();
            black_box(response);
            done += 1;
        }
    }
    done
}

fn median(mut xs: Vec<Duration>) -> Duration {
    xs.sort();
    xs[xs.len() / 2]
}

fn time(rounds: usize, mut f: impl FnMut()) -> Duration {
    f();
    median(
        (0..rounds)
            .map(|_| {
                let t = Instant::now();
                f();
                t.elapsed()
            })
            .collect(),
    )
}

fn main() {
    let calls: usize = std::env::var("TALARIA_BENCH_CALLS").ok().and_then(|v| v.parse().ok()).unwrap_or(200_000);
    let rounds: usize = std::env::var("TALARIA_BENCH_ROUNDS").ok().and_then(|v| v.parse().ok()).unwrap_or(7);
    println!("talaria session round-trip bench: {calls} tools/call round trips per round, median of {rounds} rounds");
    println!(
        "  {:<14} {:>16} {:>16} {:>9} {:>12}",
        "in flight", "session calls/s", "floor calls/s", "ratio", "us per call"
    );
    for inflight in [1, 64] {
        let mut pair = Pair::new();
        let ours = time(rounds, || pair.run(calls, inflight));
        let base = time(rounds, || {
            black_box(floor(calls, inflight));
        });
        let (o, f) = (calls as f64 / ours.as_secs_f64(), calls as f64 / base.as_secs_f64());
        println!("  {inflight:<14} {o:>16.0} {f:>16.0} {:>8.2}x {:>12.2}", o / f, 1e6 / o);
    }

    println!("\nfull typed stack (typed params -> router with schema validation -> typed handler -> typed result)");
    println!("  {:<14} {:>16} {:>16} {:>9}", "in flight", "typed calls/s", "session calls/s", "ratio");
    for inflight in [1, 64] {
        let mut typed = Typed::new();
        let mut pair = Pair::new();
        let t = time(rounds, || typed.run(calls, inflight));
        let bare = time(rounds, || pair.run(calls, inflight));
        let (a, b) = (calls as f64 / t.as_secs_f64(), calls as f64 / bare.as_secs_f64());
        println!("  {inflight:<14} {a:>16.0} {b:>16.0} {:>8.2}x", a / b);
        let profiler = dhat::Profiler::builder().testing().build();
        let before = dhat::HeapStats::get();
        typed.run(10_000, inflight);
        let after = dhat::HeapStats::get();
        drop(profiler);
        println!(
            "  allocations per typed call at {inflight:>2} in flight: {:.1}",
            (after.total_blocks - before.total_blocks) as f64 / 10_000.0
        );
    }

    // Allocations and peak heap, counted in a separate run.
    let counted = 10_000;
    for inflight in [1, 64] {
        let mut pair = Pair::new();
        pair.run(1000, inflight);
        let profiler = dhat::Profiler::builder().testing().build();
        let before = dhat::HeapStats::get();
        pair.run(counted, inflight);
        let after = dhat::HeapStats::get();
        drop(profiler);
        let profiler = dhat::Profiler::builder().testing().build();
        let f0 = dhat::HeapStats::get();
        black_box(floor(counted, inflight));
        let f1 = dhat::HeapStats::get();
        drop(profiler);
        println!(
            "  allocations per call at {inflight:>2} in flight: session {:.1}, floor {:.1}; session heap peak {} B, live after {} B",
            (after.total_blocks - before.total_blocks) as f64 / counted as f64,
            (f1.total_blocks - f0.total_blocks) as f64 / counted as f64,
            after.max_bytes,
            after.curr_bytes,
        );
    }
}
