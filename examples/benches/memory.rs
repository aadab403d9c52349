//! `tools/call` round trips between a client and a server in one process, through the
//! `memory` transport (`talaria::memory::connect`: frames through channels, one reader thread
//! per direction, the full client and server stacks with their threads), next to a floor
//! measured in the same run.
//!
//! ```text
//! cargo bench -p talaria-examples --bench memory
//! TALARIA_BENCH_DEPTHS=1,16,64 TALARIA_BENCH_PAYLOADS=32 cargo bench -p talaria-examples --bench memory
//! ```
//!
//! The floor is a `serde_json` echo over an in-process duplex of the same shape: a server
//! thread takes request frames from a bounded channel (as many in transit as the memory
//! transport allows), parses each into a `Value` and sends the echo back on another; the
//! hand-written client encodes requests and parses answers, one thread for one call in flight,
//! a writer and a reader thread deeper. No SDK on either side. The matrix, the runs and the
//! report are those of the `stdio` and `ws` benches (`common/mod.rs`); the server is the
//! `everything` router, in this process.
// A bench measures wall-clock time and stops loudly if a peer misbehaves.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::cast_precision_loss)]

mod common;

use std::sync::mpsc::{self, Receiver, SyncSender};
use std::thread::JoinHandle;
use std::time::Instant;

use common::{read_answers, Bench, Sample, Window};
use serde_json::{json, Value};

/// Frames in transit each way before a sender waits: the memory transport's own bound.
const IN_TRANSIT: usize = 256;

fn main() {
    let bench = Bench::start("memory", "an in-process duplex (channels of frames)", "serde_json echo thread");
    let mut floor = Floor::start();
    let server = talaria_examples::everything::server();
    let client = talaria::memory::connect(&server, bench.options()).unwrap();
    let results = bench.measure(&mut floor, &client);
    client.close();
    floor.stop();
    bench.report(&results, &[("this process", common::peak_rss_kib(std::process::id()))]);
}

/// The echo thread and the client's ends of its two channels.
struct Floor {
    requests: SyncSender<Vec<u8>>,
    answers: Receiver<Vec<u8>>,
    server: JoinHandle<()>,
    next_id: u64,
}

impl Floor {
    fn start() -> Self {
        let (requests, incoming) = mpsc::sync_channel::<Vec<u8>>(IN_TRANSIT);
        let (outgoing, answers) = mpsc::sync_channel::<Vec<u8>>(IN_TRANSIT);
        let server = std::thread::spawn(move || {
            for frame in incoming {
                let mut request: Value = serde_json::from_slice(&frame).unwrap();
                let id = request["id"].take();
                let text = request.pointer_mut("/params/arguments/text").map_or(Value::Null, Value::take);
                let answer =
                    json!({"jsonrpc": "2.0", "id": id, "result": {"content": [{"type": "text", "text": text}]}});
                if outgoing.send(serde_json::to_vec(&answer).unwrap()).is_err() {
                    return;
                }
            }
        });
        Self { requests, answers, server, next_id: 1 }
    }

    fn stop(self) {
        drop(self.requests);
        self.server.join().unwrap();
    }
}

impl common::Floor for Floor {
    const LABEL: &'static str = "floor (serde_json echo)";

    fn one(&mut self, text: &str, calls: usize) -> Sample {
        let mut latencies = Vec::with_capacity(calls);
        let start = Instant::now();
        for _ in 0..calls {
            let id = self.next_id;
            self.next_id += 1;
            let sent = Instant::now();
            self.requests.send(request(id, text)).unwrap();
            let answer = self.answers.recv().unwrap();
            assert_eq!(answer_id(&answer, text), id);
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
        let (requests, answers) = (&self.requests, &mut self.answers);
        let start = Instant::now();
        let latencies = std::thread::scope(|scope| {
            scope.spawn(move || {
                let mut window = Window::new(start, depth, room_rx);
                for id in base..base + calls as u64 {
                    let (sent, frame) = window.send(|| {}, || request(id, text));
                    sent_tx.send((id, sent)).unwrap();
                    requests.send(frame).unwrap();
                }
            });
            let reader = scope.spawn(move || {
                read_answers(calls, base, &sent_rx, &room_tx, || answer_id(&answers.recv().unwrap(), text))
            });
            reader.join().unwrap()
        });
        Sample::new(start.elapsed(), latencies)
    }
}

fn request(id: u64, text: &str) -> Vec<u8> {
    serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": "echo", "arguments": {"text": text}}}))
    .unwrap()
}

/// The id of an answer, after checking it echoes `text`.
fn answer_id(frame: &[u8], text: &str) -> u64 {
    let answer: Value = serde_json::from_slice(frame).unwrap();
    assert!(answer["result"]["content"][0]["text"] == text, "not an echo of the {} bytes sent", text.len());
    answer["id"].as_u64().unwrap()
}
