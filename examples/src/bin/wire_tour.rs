//! A tour of Talaria's wire layer: frames in, typed MCP messages and JSON-RPC error replies out.
//!
//! ```text
//! cargo run -p talaria-examples --bin wire-tour
//! ```
//!
//! It feeds a stdio-style byte stream (newline-delimited JSON, split into awkward chunks, with
//! some hostile lines in it) through the line decoder and the JSON-RPC decoder, prints what
//! each frame turned into, decodes a `tools/call` into its typed parameters, and shows how one
//! typed result is encoded for the legacy and the stateless revisions.

use talaria::core::codec::LineDecoder;
use talaria::core::jsonrpc::{DecodeError, Message, Packet};
use talaria::core::schema::tools::{CallTool, CallToolRequestParams, CallToolResult};
use talaria::core::schema::{method_info, ForRevision, RequestMethod};
use talaria::core::version::{negotiate_initialize, ProtocolVersion};

const STREAM: &[u8] = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"tour\",\"version\":\"1\"}}}\r\n\
{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n\
\n\
{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{\"text\":\"h\xc3\xa9llo\"},\"_meta\":{\"progressToken\":\"p-2\"}}}\n\
{\"jsonrpc\":\"1.0\",\"id\":3,\"method\":\"ping\"}\n\
{not json at all\n\
[]\n\
[{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"ping\"},{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":2}},42]\n\
{\"jsonrpc\":\"2.0\",\"id\":18446744073709551616,\"method\":\"tools/list\"}\n";

fn main() {
    println!("Talaria wire tour: {} bytes of stdio traffic, fed in 7-byte chunks\n", STREAM.len());
    let mut lines = LineDecoder::new();
    let mut frames = Vec::new();
    for chunk in STREAM.chunks(7) {
        lines.decode(chunk, |frame| match frame {
            Ok(bytes) => frames.push(bytes.to_vec()),
            Err(e) => println!("framing error: {e}"),
        });
    }
    for (i, frame) in frames.iter().enumerate() {
        print!("frame {}: ", i + 1);
        match Packet::from_slice(frame) {
            Ok(Packet::Single(msg)) => describe(&msg),
            Ok(Packet::Batch(items)) => {
                println!("a batch of {} (accepted only under 2025-03-26)", items.len());
                for item in items {
                    print!("    ");
                    match item {
                        Ok(msg) => describe(&msg),
                        Err(e) => reply(&e),
                    }
                }
            }
            Err(e) => reply(&e),
        }
    }

    println!(
        "\nNegotiation: a client asking for 2025-06-18 gets {:?}; one asking for 2030-01-01 gets {:?}",
        negotiate_initialize("2025-06-18", &ProtocolVersion::ALL).map(ProtocolVersion::as_str),
        negotiate_initialize("2030-01-01", &ProtocolVersion::ALL).map(ProtocolVersion::as_str)
    );

    if let Some(Ok(Packet::Single(Message::Request(req)))) = frames.get(2).map(|f| Packet::from_slice(f)) {
        match req.params_as::<CallToolRequestParams>() {
            Ok(params) => println!(
                "\nTyped {}: tool {:?}, arguments {}",
                CallTool::INFO.name,
                params.name,
                serde_json::Value::Object(params.arguments.clone().unwrap_or_default())
            ),
            Err(e) => println!("\nTyped {} failed: {e}", CallTool::INFO.name),
        }
    }

    let result = CallToolResult::structured(serde_json::json!({"echo": "héllo"}));
    for version in [ProtocolVersion::V2025_03_26, ProtocolVersion::V2025_06_18, ProtocolVersion::V2026_07_28] {
        let mut r = result.clone();
        r.adapt_to(version);
        println!("tools/call result for {version}: {}", serde_json::to_string(&r).unwrap_or_default());
    }
}

fn describe(msg: &Message) {
    match msg {
        Message::Request(r) => {
            let known = method_info(&r.method)
                .map_or("unknown method".to_owned(), |m| format!("{:?}, exists {}..={}", m.sent_by, m.since, m.until));
            println!("request {} {} ({known})", r.id, r.method);
        }
        Message::Notification(n) => println!("notification {}", n.method),
        Message::Response(r) => println!("response to {}", r.id),
        Message::Error(e) => println!("error response {:?}: {}", e.id, e.error),
    }
}

fn reply(err: &DecodeError) {
    match err.to_response() {
        Some(resp) => println!("refused, reply: {}", String::from_utf8_lossy(&Message::Error(resp).to_vec())),
        None => println!("refused without reply: {err}"),
    }
}
