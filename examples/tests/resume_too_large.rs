//! An answer larger than the event log keeps: the client that reads the stream live gets it
//! whole; one that resumes after it gets an error answer for its request (the log's stand-in),
//! where it used to get a closed stream with nothing in it, and waited.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};

use serde_json::{json, Value};
use talaria::core::http::event_log::{MemoryEventStore, Retention};
use talaria::core::http::reply::ReplyMode;
use talaria::http::{HttpServer, HttpServerOptions, SharedEventStore};

const VERSION: &str = "2025-11-25";

/// Sends `head` (and `body`) on a connection of its own, closed after the response; the
/// response's session id, if it names one, and its body, de-chunked.
fn exchange(addr: SocketAddr, head: &str, body: &str) -> (Option<String>, String) {
    let mut stream = TcpStream::connect(addr).unwrap();
    write!(stream, "{head}Host: 127.0.0.1\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{body}", body.len())
        .unwrap();
    let mut reader = BufReader::new(stream);
    let (mut line, mut session, mut chunked) = (String::new(), None, false);
    reader.read_line(&mut line).unwrap();
    assert!(line.contains(" 200 ") || line.contains(" 202 "), "{line}");
    loop {
        line.clear();
        reader.read_line(&mut line).unwrap();
        let lower = line.to_ascii_lowercase();
        if let Some(id) = lower.strip_prefix("mcp-session-id:") {
            session = Some(line[line.len() - id.len()..].trim().to_owned());
        }
        chunked |= lower.starts_with("transfer-encoding:") && lower.contains("chunked");
        if line == "\r\n" {
            break;
        }
    }
    let mut body = Vec::new();
    if chunked {
        loop {
            line.clear();
            reader.read_line(&mut line).unwrap();
            let size = usize::from_str_radix(line.trim(), 16).unwrap();
            let mut chunk = vec![0; size + 2];
            reader.read_exact(&mut chunk).unwrap();
            if size == 0 {
                break;
            }
            body.extend_from_slice(&chunk[..size]);
        }
    } else {
        reader.read_to_end(&mut body).unwrap();
    }
    (session, String::from_utf8(body).unwrap())
}

/// The SSE events of `body` that carry data: (id, data).
fn events(body: &str) -> Vec<(Option<String>, String)> {
    body.split("\n\n")
        .filter_map(|event| {
            let id = event.lines().find_map(|l| l.strip_prefix("id:")).map(|id| id.trim().to_owned());
            let data: Vec<&str> = event.lines().filter_map(|l| l.strip_prefix("data:")).map(str::trim_start).collect();
            Some((id, data.join("\n"))).filter(|(_, data)| !data.is_empty())
        })
        .collect()
}

/// The id of the stream's priming event (an id, no data).
fn priming_id(body: &str) -> String {
    body.split("\n\n")
        .find(|event| {
            event.lines().any(|l| l.starts_with("id:")) && !event.lines().any(|l| l.starts_with("data:") && l.len() > 6)
        })
        .and_then(|event| event.lines().find_map(|l| l.strip_prefix("id:")))
        .expect("a priming event")
        .trim()
        .to_owned()
}

#[test]
fn a_stream_resumed_after_an_answer_too_large_to_keep_ends_with_an_error_answer() {
    let store = SharedEventStore::new(MemoryEventStore::new(Retention::default().with_max_bytes(4096)));
    let options = HttpServerOptions::default().reply_mode(ReplyMode::Sse).event_store(store);
    let listening = HttpServer::bind(&talaria_examples::everything::server(), "127.0.0.1:0", options).unwrap();
    let addr = listening.local_addr();
    let post = |session: Option<&str>| {
        let session = session.map(|id| format!("Mcp-Session-Id: {id}\r\nMcp-Protocol-Version: {VERSION}\r\n"));
        format!(
            "POST /mcp HTTP/1.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n{}",
            session.unwrap_or_default()
        )
    };
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": VERSION,
        "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}});
    let (session, _) = exchange(addr, &post(None), &init.to_string());
    let session = session.expect("a legacy session");
    exchange(
        addr,
        &post(Some(&session)),
        &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string(),
    );

    let text = "x".repeat(64 * 1024);
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": text}}});
    let (_, live) = exchange(addr, &post(Some(&session)), &call.to_string());
    let primed = priming_id(&live);
    let live = events(&live);
    let [(Some(answer_id), answer)] = &live[..] else { panic!("{live:?}") };
    let answer: Value = serde_json::from_str(answer).unwrap();
    assert_eq!(answer["result"]["content"][0]["text"], text.as_str(), "the live reader gets the answer whole");

    // A client that lost the connection after the priming event resumes from it.
    let resume = format!(
        "GET /mcp HTTP/1.1\r\nAccept: text/event-stream\r\nMcp-Session-Id: {session}\r\n\
         Mcp-Protocol-Version: {VERSION}\r\nLast-Event-ID: {primed}\r\n"
    );
    let (_, replayed) = exchange(addr, &resume, "");
    let replayed = events(&replayed);
    let [(Some(id), stand_in)] = &replayed[..] else { panic!("{replayed:?}") };
    assert_eq!(id, answer_id, "in the answer's place");
    let stand_in: Value = serde_json::from_str(stand_in).unwrap();
    assert_eq!(stand_in["id"], 2);
    assert_eq!(stand_in["error"]["code"], -32603);
    assert!(stand_in["error"]["message"].as_str().unwrap().contains("larger than"), "{stand_in}");
}
