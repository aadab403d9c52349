//! A bare newline-delimited JSON-RPC echo with `serde_json` and no SDK: the floor the stdio
//! benchmark (`cargo bench -p talaria-examples --bench stdio`) measures Talaria against.
//!
//! ```text
//! json-echo
//! ```
//!
//! Each line on stdin is parsed as a JSON-RPC request; a request with an id gets
//! `{"jsonrpc":"2.0","id":<id>,"result":{"content":[{"type":"text","text":<params.arguments.text>}]}}`
//! on stdout, one line. Lines without an id (notifications) get nothing, lines that are not JSON
//! get a parse error; `initialize` gets a minimal result (its revision back, the tools
//! capability), so that an SDK client can be measured against it. Output is flushed when the input buffer holds no further complete line,
//! that is just before reading would block, so a burst of requests is answered with one write.
//! It exits when stdin ends.

use std::io::{self, BufRead, BufReader, BufWriter, Write};
use std::process::ExitCode;

use serde_json::{json, Value};

/// The same buffer sizes as the SDK's stdio transport.
const BUFFER: usize = 64 * 1024;

fn main() -> ExitCode {
    match run(io::stdin().lock(), io::stdout().lock()) {
        Ok(()) => ExitCode::SUCCESS,
        // The other end went away: nothing left to answer.
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("json-echo: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Echoes requests from `input` to `output` until `input` ends.
fn run(input: impl io::Read, output: impl Write) -> io::Result<()> {
    let mut input = BufReader::with_capacity(BUFFER, input);
    let mut output = BufWriter::with_capacity(BUFFER, output);
    let mut line = String::new();
    loop {
        line.clear();
        if input.read_line(&mut line)? == 0 {
            break;
        }
        if let Some(answer) = answer(line.trim_end()) {
            serde_json::to_writer(&mut output, &answer)?;
            output.write_all(b"\n")?;
        }
        // The next read_line would block: send what we have first.
        if !input.buffer().contains(&b'\n') {
            output.flush()?;
        }
    }
    output.flush()
}

/// The answer to one line, if it wants one.
fn answer(line: &str) -> Option<Value> {
    if line.is_empty() {
        return None;
    }
    let Ok(mut request) = serde_json::from_str::<Value>(line) else {
        return Some(json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "parse error"}}));
    };
    let id = request.get_mut("id").map(Value::take)?;
    if request["method"] == "initialize" {
        // Just enough of a handshake for an SDK client to talk to it (the stdio bench's
        // `TALARIA_BENCH_SERVER=json-echo`): its revision back, the tools capability.
        let version = request.pointer_mut("/params/protocolVersion").map_or(Value::Null, Value::take);
        return Some(json!({"jsonrpc": "2.0", "id": id, "result": {"protocolVersion": version,
            "capabilities": {"tools": {}}, "serverInfo": {"name": "json-echo", "version": "1"}}}));
    }
    let text = request.pointer_mut("/params/arguments/text").map_or(Value::Null, Value::take);
    Some(json!({"jsonrpc": "2.0", "id": id, "result": {"content": [{"type": "text", "text": text}]}}))
}
