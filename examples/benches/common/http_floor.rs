//! A hand-written keep-alive HTTP/1.1 JSON echo with no SDK and no HTTP library, on blocking
//! `std::net` sockets with a thread per connection (`TCP_NODELAY`): it reads the request line,
//! the headers and the `Content-Length` body, parses the JSON-RPC request as a
//! `serde_json::Value` and answers `200 OK` with `Content-Length` and the echo's result (`202`
//! to a notification), until the client closes. The http bench shows it as a reference row
//! beside its floor (`http_hyper_floor.rs`, which answers with [`answer`] too); `http_allocs`
//! counts its allocations.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;

use serde_json::{json, Value};

/// One connection of the `std::net` echo.
pub(crate) fn serve_blocking(stream: TcpStream) {
    stream.set_nodelay(true).unwrap();
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut writer = stream;
    let (mut line, mut body, mut out) = (String::new(), Vec::new(), Vec::new());
    loop {
        // The request line; none: the client closed.
        let mut length = 0;
        let mut first = true;
        loop {
            line.clear();
            if !matches!(reader.read_line(&mut line), Ok(n) if n > 0) {
                return;
            }
            match head_line(&line, &mut first, &mut length) {
                Line::More => {}
                Line::End => break,
            }
        }
        body.resize(length, 0);
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        respond(&body, &mut out);
        if writer.write_all(&out).is_err() {
            return;
        }
    }
}

/// Where a line leaves the request head.
enum Line {
    More,
    /// The empty line: the body follows.
    End,
}

/// Reads one line of a request head (`first`: the request line), noting `Content-Length`.
fn head_line(line: &str, first: &mut bool, length: &mut usize) -> Line {
    if std::mem::take(first) {
        return Line::More;
    }
    let header = line.trim_end();
    if header.is_empty() {
        return Line::End;
    }
    if let Some((name, value)) = header.split_once(':') {
        if name.eq_ignore_ascii_case("content-length") {
            *length = value.trim().parse().unwrap();
        }
    }
    Line::More
}

/// The whole HTTP response to one request body, into `out`.
fn respond(body: &[u8], out: &mut Vec<u8>) {
    out.clear();
    match answer(body) {
        Some(answer) => {
            let answer = serde_json::to_vec(&answer).unwrap();
            write!(
                out,
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
                answer.len()
            )
            .unwrap();
            out.extend_from_slice(&answer);
        }
        None => out.extend_from_slice(b"HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n"),
    }
}

/// `json-echo`'s answer to one request (none to a notification): what `everything-server`'s
/// `echo` answers, `{"content": [{"type": "text", "text": ...}]}`.
pub(crate) fn answer(body: &[u8]) -> Option<Value> {
    let Ok(mut request) = serde_json::from_slice::<Value>(body) else {
        return Some(json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "parse error"}}));
    };
    let id = request.get_mut("id").map(Value::take)?;
    let text = request.pointer_mut("/params/arguments/text").map_or(Value::Null, Value::take);
    Some(json!({"jsonrpc": "2.0", "id": id, "result": {"content": [{"type": "text", "text": text}]}}))
}
