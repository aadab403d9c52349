//! Decode throughput of the wire and schema layers against `serde_json` floors, in one run.
//!
//! ```text
//! cargo bench -p talaria-core --bench decode            # ~50 MB corpus, 9 rounds
//! TALARIA_BENCH_MB=2 TALARIA_BENCH_ROUNDS=3 cargo bench -p talaria-core --bench decode   # smoke
//! ```
//!
//! The corpus is newline-delimited MCP traffic generated deterministically: initialize request
//! and result, `tools/list` results with 50 tools and schemas, `tools/call` requests with small
//! and 64 KiB arguments, tool results, progress and log notifications, resource contents, and
//! tiny `{"jsonrpc":"2.0","id":1,"result":{}}` responses. Every figure is the median of the
//! rounds. Each round times every step of a table once, one after the other, and a ratio is
//! the median of the rounds' own ratios (paired): a load that comes and goes on a shared
//! machine then moves both sides of a ratio rather than one.
// A bench measures wall-clock time and stops loudly on a corpus it cannot decode.
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

use serde::de::IgnoredAny;
use serde_json::{json, Value};
use talaria_core::codec::LineDecoder;
use talaria_core::jsonrpc::{decode_with, Envelope, Message, RequestId, Response};
use talaria_core::schema::{
    lifecycle::{InitializeRequestParams, InitializeResult},
    logging::LoggingMessageNotificationParams,
    resources::ReadResourceResult,
    tools::{CallToolRequestParams, CallToolResult, ListToolsResult},
    utilities::ProgressNotificationParams,
    AnyParams, AnyResult, ContentBlock, EmptyResult, McpPayloads,
};
use talaria_core::version::ProtocolVersion;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    InitializeRequest,
    InitializeResult,
    ToolsList,
    CallSmall,
    CallLarge,
    CallResult,
    Progress,
    Log,
    ReadResult,
    Tiny,
}

const KINDS: [Kind; 10] = [
    Kind::InitializeRequest,
    Kind::InitializeResult,
    Kind::ToolsList,
    Kind::CallSmall,
    Kind::CallLarge,
    Kind::CallResult,
    Kind::Progress,
    Kind::Log,
    Kind::ReadResult,
    Kind::Tiny,
];

/// How many of each kind in every block of 100 messages.
const MIX: [(Kind, usize); 10] = [
    (Kind::InitializeRequest, 1),
    (Kind::InitializeResult, 1),
    (Kind::ToolsList, 2),
    (Kind::CallSmall, 20),
    (Kind::CallLarge, 1),
    (Kind::CallResult, 20),
    (Kind::Progress, 20),
    (Kind::Log, 15),
    (Kind::ReadResult, 5),
    (Kind::Tiny, 15),
];

/// A small deterministic generator (xorshift), so every run sees the same corpus.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn words(&mut self, n: usize) -> String {
        const W: [&str; 12] = [
            "alpha",
            "weather",
            "résumé",
            "fetch",
            "the",
            "data",
            "\"quoted\"",
            "file",
            "tab\there",
            "line\nbreak",
            "ünïcode",
            "value",
        ];
        (0..n).map(|_| W[self.below(W.len() as u64) as usize]).collect::<Vec<_>>().join(" ")
    }
}

fn tool(rng: &mut Rng, i: usize) -> Value {
    let mut props = serde_json::Map::new();
    for p in 0..3 + rng.below(4) {
        let ty = ["string", "number", "boolean", "integer"][rng.below(4) as usize];
        props.insert(format!("param_{p}"), json!({"type": ty, "description": rng.words(8)}));
    }
    let mut t = json!({
        "name": format!("tool_{i}"),
        "title": format!("Tool number {i}"),
        "description": rng.words(16),
        "inputSchema": {"type": "object", "properties": props, "required": ["param_0"]},
        "annotations": {"readOnlyHint": rng.below(2) == 0, "openWorldHint": false}
    });
    if i % 3 == 0 {
        t["outputSchema"] = json!({"type": "object", "properties": {"result": {"type": "string"}}});
    }
    t
}

fn message(kind: Kind, rng: &mut Rng, id: u64) -> Value {
    match kind {
        Kind::InitializeRequest => json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {"roots": {"listChanged": true}, "sampling": {}, "elicitation": {}},
            "clientInfo": {"name": "bench-client", "title": "Bench", "version": "1.0.0"}}}),
        Kind::InitializeResult => json!({"jsonrpc": "2.0", "id": id, "result": {
            "protocolVersion": "2025-06-18",
            "capabilities": {"tools": {"listChanged": true}, "resources": {"subscribe": true}, "logging": {}},
            "serverInfo": {"name": "bench-server", "version": "1.0.0"},
            "instructions": rng.words(20)}}),
        Kind::ToolsList => {
            let tools: Vec<Value> = (0..50).map(|i| tool(rng, i)).collect();
            json!({"jsonrpc": "2.0", "id": id, "result": {"tools": tools, "nextCursor": "c2"}})
        }
        Kind::CallSmall => json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
            "name": "echo", "arguments": {"text": rng.words(6), "count": rng.below(100), "loud": true},
            "_meta": {"progressToken": id}}}),
        Kind::CallLarge => {
            let mut text = String::with_capacity(64 * 1024);
            while text.len() < 64 * 1024 {
                text.push_str(&rng.words(8));
            }
            json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                   "params": {"name": "summarize", "arguments": {"document": text, "maxWords": 100}}})
        }
        Kind::CallResult => json!({"jsonrpc": "2.0", "id": id, "result": {
            "content": [{"type": "text", "text": rng.words(12)}, {"type": "text", "text": rng.words(4)}],
            "structuredContent": {"result": rng.words(3), "score": rng.below(1000)}, "isError": false}}),
        Kind::Progress => json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {
            "progressToken": id, "progress": rng.below(100), "total": 100, "message": rng.words(3)}}),
        Kind::Log => json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {
            "level": "info", "logger": "bench", "data": {"event": rng.words(4), "n": rng.below(1_000_000)}}}),
        Kind::ReadResult => json!({"jsonrpc": "2.0", "id": id, "result": {"contents": [{
            "uri": format!("file:///docs/{id}.md"), "mimeType": "text/markdown", "text": rng.words(300)}]}}),
        Kind::Tiny => json!({"jsonrpc": "2.0", "id": id, "result": {}}),
    }
}

/// Appends one message. Tool results are built from the typed schema and written by our
/// encoder, so their content blocks carry `"type"` first, as SDKs write them (`json!` objects
/// sort their keys, which would put `"text"` first).
fn write_message(out: &mut Vec<u8>, kind: Kind, rng: &mut Rng, id: u64) {
    if kind == Kind::CallResult {
        let mut result = CallToolResult::text(rng.words(12));
        result.content.push(ContentBlock::text(rng.words(4)));
        result.structured_content = Some(json!({"result": rng.words(3), "score": rng.below(1000)}));
        result.is_error = Some(false);
        let id = i64::try_from(id).unwrap();
        Message::from(Response::new(id, &result).unwrap()).write_to(out);
    } else {
        serde_json::to_writer(out, &message(kind, rng, id)).unwrap();
    }
}

struct Corpus {
    bytes: Vec<u8>,
    /// (start, end, kind) of every line, newline excluded.
    lines: Vec<(usize, usize, Kind)>,
}

fn corpus(target_bytes: usize) -> Corpus {
    let mut rng = Rng(0x5eed_1234_abcd_ef01);
    let mut bytes = Vec::with_capacity(target_bytes + (1 << 20));
    let mut lines = Vec::new();
    let mut id = 0;
    while bytes.len() < target_bytes {
        for (kind, count) in MIX {
            for _ in 0..count {
                id += 1;
                let start = bytes.len();
                write_message(&mut bytes, kind, &mut rng, id);
                lines.push((start, bytes.len(), kind));
                bytes.push(b'\n');
            }
        }
    }
    Corpus { bytes, lines }
}

/// The method whose result a response line of this kind carries.
const fn answered_method(kind: Kind) -> Option<&'static str> {
    match kind {
        Kind::InitializeResult => Some("initialize"),
        Kind::ToolsList => Some("tools/list"),
        Kind::CallResult => Some("tools/call"),
        Kind::ReadResult => Some("resources/read"),
        Kind::Tiny => Some("ping"),
        _ => None,
    }
}

/// Decodes all the way into the typed schema in one pass: `McpPayloads` picks the params type
/// by method and the result type by the (simulated) pending request's method.
fn typed(line: &[u8], kind: Kind) -> Envelope<AnyParams, AnyResult> {
    let mut payloads = McpPayloads::new(Some(ProtocolVersion::V2025_06_18), |_: &RequestId| answered_method(kind));
    let envelope = decode_with(line, &mut payloads).unwrap();
    if let Envelope::Request { params: AnyParams::Other(_), .. }
    | Envelope::Response { result: AnyResult::Other(_), .. } = &envelope
    {
        panic!("{kind:?} decoded untyped")
    }
    envelope
}

fn typed_one_pass(line: &[u8], kind: Kind) -> usize {
    match typed(line, kind) {
        Envelope::Request { method, .. } | Envelope::Notification { method, .. } => method.len(),
        Envelope::Response { .. } => 1,
        Envelope::Error(_) => 0,
    }
}

/// Like [`typed_one_pass`], then reads every member the typed schema keeps as text until looked
/// at (tool schemas): the cost when the caller does look.
fn typed_one_pass_all_read(line: &[u8], kind: Kind) -> usize {
    match typed(line, kind) {
        Envelope::Response { result: AnyResult::ListTools(list), .. } => {
            list.tools.iter().map(|t| t.input_schema.len() + t.output_schema.as_ref().map_or(0, |o| o.len())).sum()
        }
        Envelope::Request { method, .. } | Envelope::Notification { method, .. } => method.len(),
        Envelope::Response { .. } => 1,
        Envelope::Error(_) => 0,
    }
}

/// Decodes all the way into the typed schema in two passes: the raw envelope, then params or
/// result from their raw text.
fn typed_two_pass(line: &[u8], kind: Kind) -> usize {
    let msg = Message::from_slice(line).unwrap();
    match (&msg, kind) {
        (Message::Request(r), Kind::InitializeRequest) => r.params_as::<InitializeRequestParams>().map(|_| 1),
        (Message::Response(r), Kind::InitializeResult) => r.result_as::<InitializeResult>().map(|_| 2),
        (Message::Response(r), Kind::ToolsList) => r.result_as::<ListToolsResult>().map(|l| l.tools.len()),
        (Message::Request(r), Kind::CallSmall | Kind::CallLarge) => {
            r.params_as::<CallToolRequestParams>().map(|p| p.name.len())
        }
        (Message::Response(r), Kind::CallResult) => r.result_as::<CallToolResult>().map(|c| c.content.len()),
        (Message::Notification(n), Kind::Progress) => n.params_as::<ProgressNotificationParams>().map(|_| 3),
        (Message::Notification(n), Kind::Log) => n.params_as::<LoggingMessageNotificationParams>().map(|_| 4),
        (Message::Response(r), Kind::ReadResult) => r.result_as::<ReadResourceResult>().map(|c| c.contents.len()),
        (Message::Response(r), Kind::Tiny) => r.result_as::<EmptyResult>().map(|_| 5),
        _ => panic!("corpus line of kind {kind:?} decoded as {msg:?}"),
    }
    .unwrap()
}

fn median(mut xs: Vec<Duration>) -> Duration {
    xs.sort();
    xs[xs.len() / 2]
}

fn time(rounds: usize, mut f: impl FnMut() -> usize) -> Duration {
    black_box(f()); // warm up
    median(
        (0..rounds)
            .map(|_| {
                let t = Instant::now();
                black_box(f());
                t.elapsed()
            })
            .collect(),
    )
}

struct Row {
    name: &'static str,
    /// The median of the rounds' times.
    time: Duration,
    /// The median of the rounds' ratios of `serde_json -> Value`'s time to this step's, each
    /// timed in the same round.
    vs_value: f64,
}

/// One step of a table: its name and the work it times.
type Step<'a> = (&'static str, Box<dyn FnMut() -> usize + 'a>);

/// Times every step once per round, in turn (after one warm-up run of each), and pairs each
/// step's ratio against the step named `base` round by round.
fn time_rows(rounds: usize, base: &str, mut steps: Vec<Step<'_>>) -> Vec<Row> {
    for (_, f) in &mut steps {
        black_box(f());
    }
    let mut times = vec![Vec::with_capacity(rounds); steps.len()];
    for _ in 0..rounds {
        for ((_, f), times) in steps.iter_mut().zip(&mut times) {
            let t = Instant::now();
            black_box(f());
            times.push(t.elapsed());
        }
    }
    let base_i = steps.iter().position(|(name, _)| *name == base).unwrap();
    let base_times = times[base_i].clone();
    steps
        .iter()
        .zip(times)
        .map(|((name, _), times)| {
            let mut ratios: Vec<f64> =
                base_times.iter().zip(&times).map(|(b, t)| b.as_secs_f64() / t.as_secs_f64()).collect();
            ratios.sort_by(f64::total_cmp);
            Row { name, vs_value: ratios[ratios.len() / 2], time: median(times) }
        })
        .collect()
}

fn report(title: &str, bytes: usize, msgs: usize, rows: &[Row]) {
    println!("\n{title}: {msgs} messages, {:.1} MB", bytes as f64 / 1e6);
    println!("  {:<40} {:>10} {:>14} {:>9}", "step", "MB/s", "messages/s", "vs Value");
    for r in rows {
        let s = r.time.as_secs_f64();
        println!("  {:<40} {:>10.0} {:>14.0} {:>8.2}x", r.name, bytes as f64 / 1e6 / s, msgs as f64 / s, r.vs_value);
    }
}

/// The name of the step every ratio is against.
const VALUE: &str = "serde_json -> Value";

fn parse_rows(c: &Corpus, lines: &[(usize, usize, Kind)], rounds: usize) -> Vec<Row> {
    let b = &c.bytes;
    let steps: Vec<Step<'_>> = vec![
        (
            "serde_json -> IgnoredAny (floor)",
            Box::new(|| {
                lines
                    .iter()
                    .map(|&(s, e, _)| {
                        serde_json::from_slice::<IgnoredAny>(&b[s..e]).unwrap();
                        1
                    })
                    .sum()
            }),
        ),
        (
            VALUE,
            Box::new(|| {
                lines
                    .iter()
                    .map(|&(s, e, _)| usize::from(serde_json::from_slice::<Value>(&b[s..e]).unwrap().is_object()))
                    .sum()
            }),
        ),
        (
            "talaria Message (envelope)",
            Box::new(|| {
                lines
                    .iter()
                    .map(|&(s, e, _)| usize::from(Message::from_slice(&b[s..e]).unwrap().method().is_some()))
                    .sum()
            }),
        ),
        (
            "talaria typed schema (one pass)",
            Box::new(|| lines.iter().map(|&(s, e, k)| typed_one_pass(&b[s..e], k)).sum()),
        ),
        (
            "talaria typed, every kept member read",
            Box::new(|| lines.iter().map(|&(s, e, k)| typed_one_pass_all_read(&b[s..e], k)).sum()),
        ),
        (
            "talaria Message, then typed (2 passes)",
            Box::new(|| lines.iter().map(|&(s, e, k)| typed_two_pass(&b[s..e], k)).sum()),
        ),
    ];
    time_rows(rounds, VALUE, steps)
}

fn main() {
    let mb: usize = std::env::var("TALARIA_BENCH_MB").ok().and_then(|v| v.parse().ok()).unwrap_or(50);
    let rounds: usize = std::env::var("TALARIA_BENCH_ROUNDS").ok().and_then(|v| v.parse().ok()).unwrap_or(9);
    let c = corpus(mb * 1_000_000);
    let total = c.bytes.len();
    println!(
        "talaria decode bench: {} messages, {:.1} MB, median of {rounds} rounds",
        c.lines.len(),
        total as f64 / 1e6
    );

    // Framing.
    let memchr_t = time(rounds, || memchr::memchr_iter(b'\n', &c.bytes).count());
    let line_t = time(rounds, || {
        let mut decoder = LineDecoder::new();
        let mut n = 0;
        for chunk in c.bytes.chunks(64 * 1024) {
            decoder.decode(chunk, |f| n += f.map_or(0, <[u8]>::len));
        }
        n
    });
    println!("\nline splitting ({} lines, 64 KiB reads)", c.lines.len());
    println!("  bare memchr scan                         {:>10.0} MB/s", total as f64 / 1e6 / memchr_t.as_secs_f64());
    println!("  LineDecoder                              {:>10.0} MB/s", total as f64 / 1e6 / line_t.as_secs_f64());
    println!(
        "  LineDecoder / memchr time                {:>10.2}x  (target <= 2.0x)",
        line_t.as_secs_f64() / memchr_t.as_secs_f64()
    );

    // Whole corpus.
    let rows = parse_rows(&c, &c.lines, rounds);
    report("whole corpus", total, c.lines.len(), &rows);

    // Per kind.
    let mut summary = Vec::new();
    for kind in KINDS {
        let lines: Vec<_> = c.lines.iter().copied().filter(|l| l.2 == kind).collect();
        let bytes: usize = lines.iter().map(|l| l.1 - l.0).sum();
        let rows = parse_rows(&c, &lines, rounds);
        report(&format!("{kind:?}"), bytes, lines.len(), &rows);
        summary.push((kind, rows[2].vs_value, rows[3].vs_value, rows[5].vs_value, rows[4].vs_value));
    }

    println!(
        "\nsummary (speed relative to serde_json::Value on the same bytes; targets: Message >= 1.5x, typed >= 1.0x)"
    );
    println!(
        "  {:<20} {:>9} {:>14} {:>14} {:>14}",
        "kind", "Message", "typed 1 pass", "typed 2 passes", "typed, all read"
    );
    let whole = |i: usize| rows[i].vs_value;
    println!("  {:<20} {:>8.2}x {:>13.2}x {:>13.2}x {:>13.2}x", "whole corpus", whole(2), whole(3), whole(5), whole(4));
    // `TALARIA_BENCH_ROWS=<file>` (scripts/bench-all.sh): the typed ratios, one tab-separated
    // line each: bench, what, one pass and two passes against `Value`.
    let mut rows_file = std::env::var("TALARIA_BENCH_ROWS")
        .ok()
        .map(|path| std::fs::OpenOptions::new().create(true).append(true).open(path).unwrap());
    if let Some(file) = rows_file.as_mut() {
        use std::io::Write as _;
        writeln!(file, "decode\twhole corpus\t{:.2}\t{:.2}\t{:.2}", whole(3), whole(5), whole(4)).unwrap();
    }
    for (kind, m, t1, t2, all) in summary {
        println!("  {:<20} {:>8.2}x {:>13.2}x {:>13.2}x {:>13.2}x", format!("{kind:?}"), m, t1, t2, all);
        if let Some(file) = rows_file.as_mut() {
            use std::io::Write as _;
            writeln!(file, "decode\t{kind:?}\t{t1:.2}\t{t2:.2}\t{all:.2}").unwrap();
        }
    }
}
