//! The HTTP benches' hand-written client: one keep-alive HTTP/1.1 connection on `std::net`,
//! whose reads reuse its buffers (a call allocates nothing once they have grown), and the raw
//! `initialize` handshake that opens a legacy session with it.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;

/// The protocol revision of the sessions [`open_session`] opens.
pub(crate) const SESSION_VERSION: &str = "2025-06-18";

/// One keep-alive HTTP/1.1 connection, written by hand.
pub(crate) struct Http {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
    addr: String,
    out: Vec<u8>,
    line: String,
    /// The last reply's body.
    pub(crate) body: Vec<u8>,
}

impl Http {
    pub(crate) fn connect(addr: &str) -> Self {
        let stream = TcpStream::connect(addr).unwrap();
        stream.set_nodelay(true).unwrap();
        let reader = BufReader::with_capacity(16 * 1024, stream.try_clone().unwrap());
        Self {
            reader,
            writer: stream,
            addr: addr.to_owned(),
            out: Vec::with_capacity(1024),
            line: String::with_capacity(256),
            body: Vec::with_capacity(4096),
        }
    }

    /// POSTs `body` to `/mcp` with `headers` (each line ending in CRLF): the reply's status,
    /// its body in [`Http::body`].
    pub(crate) fn post(&mut self, headers: &str, body: &[u8]) -> u16 {
        self.send(headers, body);
        self.read_reply(false).0
    }

    /// [`Http::post`], also reading the reply's `Mcp-Session-Id` (which allocates).
    pub(crate) fn post_for_session(&mut self, headers: &str, body: &[u8]) -> (u16, Option<String>) {
        self.send(headers, body);
        self.read_reply(true)
    }

    fn send(&mut self, headers: &str, body: &[u8]) {
        self.out.clear();
        write!(
            self.out,
            "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\n{headers}\r\n",
            self.addr,
            body.len()
        )
        .unwrap();
        self.out.extend_from_slice(body);
        self.writer.write_all(&self.out).unwrap();
    }

    /// The reply's status line and headers (its session id if `want_session`), and its body
    /// (`Content-Length` or chunked) into [`Http::body`].
    fn read_reply(&mut self, want_session: bool) -> (u16, Option<String>) {
        self.read_line();
        let status = self.line.split(' ').nth(1).and_then(|s| s.parse().ok());
        let status = status.unwrap_or_else(|| panic!("status line {:?}", self.line));
        let (mut length, mut chunked, mut session) = (None, false, None);
        loop {
            self.read_line();
            let line = self.line.trim_end();
            if line.is_empty() {
                break;
            }
            let Some((name, value)) = line.split_once(':') else { continue };
            let value = value.trim();
            if name.eq_ignore_ascii_case("content-length") {
                length = value.parse().ok();
            } else if name.eq_ignore_ascii_case("transfer-encoding") {
                chunked = value.eq_ignore_ascii_case("chunked");
            } else if want_session && name.eq_ignore_ascii_case("mcp-session-id") {
                session = Some(value.to_owned());
            }
        }
        self.body.clear();
        if chunked {
            loop {
                self.read_line();
                let size = self.line.trim_end().split(';').next().unwrap_or("");
                let size = usize::from_str_radix(size, 16).unwrap();
                let start = self.body.len();
                self.body.resize(start + size, 0);
                self.reader.read_exact(&mut self.body[start..]).unwrap();
                // The CRLF after the chunk (after the last one: the end of the trailers).
                self.read_line();
                if size == 0 {
                    break;
                }
            }
        } else {
            let length = length.unwrap_or_else(|| panic!("a {status} reply with no length on a keep-alive connection"));
            self.body.resize(length, 0);
            self.reader.read_exact(&mut self.body).unwrap();
        }
        (status, session)
    }

    fn read_line(&mut self) {
        self.line.clear();
        let n = self.reader.read_line(&mut self.line).unwrap();
        assert!(n > 0, "the server closed the connection");
    }
}

/// `initialize` and `notifications/initialized` on `http`: a new legacy session's id.
pub(crate) fn open_session(http: &mut Http) -> String {
    let initialize = format!(
        r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"{SESSION_VERSION}","capabilities":{{}},"clientInfo":{{"name":"bench","version":"1"}}}}}}"#
    );
    let (status, session) = http.post_for_session("", initialize.as_bytes());
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&http.body));
    let session = session.expect("initialize answered with no Mcp-Session-Id");
    let headers = session_headers(&session);
    let status = http.post(&headers, br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    assert_eq!(status, 202, "{}", String::from_utf8_lossy(&http.body));
    session
}

/// The headers every request of session `id` carries.
pub(crate) fn session_headers(id: &str) -> String {
    format!("Mcp-Session-Id: {id}\r\nMCP-Protocol-Version: {SESSION_VERSION}\r\n")
}
