//! A small HTTP/1.1 client on async-io sockets: one request at a time per connection, bodies
//! framed by `Content-Length`, chunked or the connection's end, idle connections kept for
//! reuse, `TCP_NODELAY` on every socket. Enough for MCP's POST/GET/DELETE exchanges; plain
//! `http` only (as the blocking client).

use std::io;
use std::net::{TcpStream, ToSocketAddrs};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use smol::io::{AsyncReadExt, AsyncWriteExt};
use smol::Async;
use talaria_core::auth::url::HttpUrl;

use super::chunked::ChunkedDecoder;

/// The longest response head accepted.
const MAX_HEAD: usize = 64 * 1024;

/// How much is read from the socket at a time.
const READ_CHUNK: usize = 16 * 1024;

/// How long connecting may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// Where requests go: one origin, and the connections kept open to it.
#[derive(Debug)]
pub(crate) struct Agent {
    host: String,
    port: u16,
    /// The `Host` header.
    authority: String,
    idle: Mutex<Vec<Connection>>,
    max_idle: usize,
}

/// A request's target: its agent (one per origin) and its path and query.
pub(crate) fn split_url(url: &str) -> Result<(String, String), String> {
    let parsed = HttpUrl::parse(url).map_err(|e| e.to_string())?;
    if parsed.scheme() != "http" {
        return Err(format!("{url}: the smol client speaks http:// only; for https:// use AsyncClient::http"));
    }
    let target = parsed.query().map_or_else(|| parsed.path().to_owned(), |q| format!("{}?{q}", parsed.path()));
    let target = if target.is_empty() { "/".to_owned() } else { target };
    Ok((parsed.origin(), target))
}

impl Agent {
    /// An agent for `origin` (`http://host[:port]`), keeping at most `max_idle` idle
    /// connections.
    pub(crate) fn new(origin: &str, max_idle: usize) -> Result<Self, String> {
        let parsed = HttpUrl::parse(origin).map_err(|e| e.to_string())?;
        let host = parsed.host().trim_start_matches('[').trim_end_matches(']').to_owned();
        let authority = parsed.origin().trim_start_matches("http://").to_owned();
        let port = match authority.rsplit_once(':') {
            Some((_, port)) if !port.ends_with(']') => port.parse().map_err(|_| format!("bad port in {origin}"))?,
            _ => 80,
        };
        Ok(Self { host, port, authority, idle: Mutex::new(Vec::new()), max_idle })
    }

    async fn connect(&self) -> io::Result<Connection> {
        let (host, port) = (self.host.clone(), self.port);
        let addrs: Vec<_> = smol::unblock(move || (host.as_str(), port).to_socket_addrs().map(Vec::from_iter)).await?;
        let mut last = io::Error::new(io::ErrorKind::NotFound, "no address");
        for addr in addrs {
            let connecting = smol::future::or(async { Some(Async::<TcpStream>::connect(addr).await) }, async {
                smol::Timer::after(CONNECT_TIMEOUT).await;
                None
            });
            match connecting.await {
                Some(Ok(stream)) => {
                    stream.get_ref().set_nodelay(true)?;
                    return Ok(Connection { stream, buf: Vec::new() });
                }
                Some(Err(e)) => last = e,
                None => last = io::ErrorKind::TimedOut.into(),
            }
        }
        Err(last)
    }

    fn take_idle(&self) -> Option<Connection> {
        self.idle.lock().unwrap_or_else(PoisonError::into_inner).pop()
    }

    fn put_idle(&self, connection: Connection) {
        let mut idle = self.idle.lock().unwrap_or_else(PoisonError::into_inner);
        if idle.len() < self.max_idle {
            idle.push(connection);
        }
    }

    /// Sends a request and reads the response's head. A kept connection the server closed
    /// meanwhile is replaced by a new one, once.
    pub(crate) async fn send(
        self: &Arc<Self>,
        method: &str,
        target: &str,
        headers: &[(String, String)],
        body: &[u8],
    ) -> io::Result<Response> {
        let mut request = format!("{method} {target} HTTP/1.1\r\nHost: {}\r\n", self.authority);
        for (name, value) in headers {
            if value.contains(['\r', '\n']) {
                return Err(io::Error::new(io::ErrorKind::InvalidInput, format!("header {name} holds a line break")));
            }
            request.push_str(&format!("{name}: {value}\r\n"));
        }
        if !body.is_empty() || method == "POST" {
            request.push_str(&format!("Content-Length: {}\r\n", body.len()));
        }
        request.push_str("\r\n");
        let mut bytes = request.into_bytes();
        bytes.extend_from_slice(body);
        if let Some(connection) = self.take_idle() {
            match self.exchange(connection, &bytes).await {
                Ok(response) => return Ok(response),
                // The server closed the kept connection before reading this request.
                Err(Exchange::Stale(_)) => {}
                Err(Exchange::Failed(e)) => return Err(e),
            }
        }
        let connection = self.connect().await?;
        self.exchange(connection, &bytes).await.map_err(Exchange::into_error)
    }

    async fn exchange(self: &Arc<Self>, mut connection: Connection, request: &[u8]) -> Result<Response, Exchange> {
        connection.stream.write_all(request).await.map_err(Exchange::Stale)?;
        let mut first = true;
        loop {
            if let Some((len, head)) = parse_head(&connection.buf).map_err(Exchange::Failed)? {
                connection.buf.drain(..len);
                // An interim answer (100 Continue, 103 Early Hints): the real one follows.
                if (100..200).contains(&head.status) && head.status != 101 {
                    continue;
                }
                let framing = head.framing(method_has_no_body(request));
                let mut body = Body { agent: Arc::clone(self), connection: Some(connection), framing, done: false };
                body.settle();
                return Ok(Response { status: head.status, headers: head.headers, body });
            }
            if connection.buf.len() > MAX_HEAD {
                return Err(Exchange::Failed(io::Error::new(io::ErrorKind::InvalidData, "response head too large")));
            }
            match connection.fill().await {
                Ok(true) => first = false,
                Ok(false) if first => return Err(Exchange::Stale(io::ErrorKind::UnexpectedEof.into())),
                Ok(false) => return Err(Exchange::Failed(io::ErrorKind::UnexpectedEof.into())),
                Err(e) if first => return Err(Exchange::Stale(e)),
                Err(e) => return Err(Exchange::Failed(e)),
            }
        }
    }
}

/// Whether the request was a `HEAD` (whose answer has no body whatever its head says).
fn method_has_no_body(request: &[u8]) -> bool {
    request.starts_with(b"HEAD ")
}

/// How an exchange failed.
enum Exchange {
    /// Before the server sent a byte: a kept connection may have been closed meanwhile.
    Stale(io::Error),
    /// After (or on a fresh connection).
    Failed(io::Error),
}

impl Exchange {
    fn into_error(self) -> io::Error {
        match self {
            Self::Stale(e) | Self::Failed(e) => e,
        }
    }
}

/// A connection: its socket and what was read past the last response.
#[derive(Debug)]
struct Connection {
    stream: Async<TcpStream>,
    buf: Vec<u8>,
}

impl Connection {
    /// Reads more bytes into the buffer; `false` at the end.
    async fn fill(&mut self) -> io::Result<bool> {
        let filled = self.buf.len();
        self.buf.resize(filled + READ_CHUNK, 0);
        let read = self.stream.read(&mut self.buf[filled..]).await;
        self.buf.truncate(filled + *read.as_ref().unwrap_or(&0));
        read.map(|n| n > 0)
    }
}

/// A response head.
struct Head {
    status: u16,
    headers: Vec<(String, String)>,
    keep_alive: bool,
}

impl Head {
    fn header(&self, name: &str) -> Option<&str> {
        header(&self.headers, name)
    }

    fn framing(&self, no_body: bool) -> Framing {
        if no_body || matches!(self.status, 204 | 304) {
            return Framing::Length { left: 0, keep_alive: self.keep_alive };
        }
        if self.header("Transfer-Encoding").is_some_and(|v| v.to_ascii_lowercase().contains("chunked")) {
            return Framing::Chunked { decoder: ChunkedDecoder::new(), keep_alive: self.keep_alive };
        }
        match self.header("Content-Length").map(str::parse::<u64>) {
            Some(Ok(left)) => Framing::Length { left, keep_alive: self.keep_alive },
            _ => Framing::UntilClose,
        }
    }
}

fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
}

/// The response head at the start of `buf`, if complete, and its length.
fn parse_head(buf: &[u8]) -> io::Result<Option<(usize, Head)>> {
    let mut slots = [httparse::EMPTY_HEADER; 64];
    let mut parsed = httparse::Response::new(&mut slots);
    let len = match parsed.parse(buf) {
        Ok(httparse::Status::Complete(len)) => len,
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(e) => return Err(io::Error::new(io::ErrorKind::InvalidData, format!("bad response head: {e}"))),
    };
    let headers: Vec<(String, String)> = parsed
        .headers
        .iter()
        .map(|h| (h.name.to_owned(), String::from_utf8_lossy(h.value).trim().to_owned()))
        .collect();
    let connection = header(&headers, "Connection").map(str::to_ascii_lowercase);
    let keep_alive = match parsed.version {
        Some(1) => !connection.as_deref().is_some_and(|c| c.contains("close")),
        _ => connection.as_deref().is_some_and(|c| c.contains("keep-alive")),
    };
    Ok(Some((len, Head { status: parsed.code.unwrap_or(0), headers, keep_alive })))
}

/// How a body ends.
#[derive(Debug)]
enum Framing {
    Length { left: u64, keep_alive: bool },
    Chunked { decoder: ChunkedDecoder, keep_alive: bool },
    UntilClose,
}

/// A response: its status, headers and body.
#[derive(Debug)]
pub(crate) struct Response {
    pub(crate) status: u16,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) body: Body,
}

impl Response {
    /// A header's value (the first, by case-insensitive name).
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        header(&self.headers, name)
    }
}

/// A response body, read as it arrives. Read to its end, its connection goes back to the
/// agent for reuse; dropped before, the connection is closed.
#[derive(Debug)]
pub(crate) struct Body {
    agent: Arc<Agent>,
    connection: Option<Connection>,
    framing: Framing,
    done: bool,
}

impl Body {
    /// Appends the next bytes of the body to `out`; `false` once the body has ended.
    pub(crate) async fn read(&mut self, out: &mut Vec<u8>) -> io::Result<bool> {
        loop {
            if self.done {
                return Ok(false);
            }
            let Some(connection) = self.connection.as_mut() else { return Ok(false) };
            if connection.buf.is_empty() && !connection.fill().await? {
                self.connection = None;
                return match self.framing {
                    Framing::UntilClose => {
                        self.done = true;
                        Ok(false)
                    }
                    _ => Err(io::ErrorKind::UnexpectedEof.into()),
                };
            }
            let before = out.len();
            self.take_buffered(out)?;
            self.settle();
            if out.len() > before {
                return Ok(true);
            }
        }
    }

    /// Moves what the connection's buffer holds of the body to `out`.
    fn take_buffered(&mut self, out: &mut Vec<u8>) -> io::Result<()> {
        let Some(connection) = self.connection.as_mut() else { return Ok(()) };
        match &mut self.framing {
            Framing::Length { left, .. } => {
                let take = usize::try_from(*left).unwrap_or(usize::MAX).min(connection.buf.len());
                out.extend(connection.buf.drain(..take));
                *left -= take as u64;
            }
            Framing::Chunked { decoder, .. } => {
                let used = decoder
                    .decode(&connection.buf, out)
                    .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e.to_string()))?;
                connection.buf.drain(..used);
            }
            Framing::UntilClose => out.append(&mut connection.buf),
        }
        Ok(())
    }

    /// Once the body is complete, hands its connection back for reuse (or closes it).
    fn settle(&mut self) {
        let keep = match &self.framing {
            Framing::Length { left: 0, keep_alive } => *keep_alive,
            Framing::Chunked { decoder, keep_alive } if decoder.is_done() => *keep_alive,
            _ => return,
        };
        self.done = true;
        if let Some(connection) = self.connection.take().filter(|c| keep && c.buf.is_empty()) {
            self.agent.put_idle(connection);
        }
    }

    /// Reads the whole body, up to `limit` bytes (more is an error).
    pub(crate) async fn read_all(&mut self, limit: usize) -> io::Result<Vec<u8>> {
        let mut out = Vec::new();
        while self.read(&mut out).await? {
            if out.len() > limit {
                return Err(io::Error::new(io::ErrorKind::InvalidData, "response body too large"));
            }
        }
        Ok(out)
    }

    /// Reads the body to its end and drops it, so the connection is reused (a body longer
    /// than `limit` closes the connection instead).
    pub(crate) async fn drain(&mut self, limit: usize) {
        let mut seen = 0;
        let mut out = Vec::new();
        while let Ok(true) = self.read(&mut out).await {
            seen += out.len();
            out.clear();
            if seen > limit {
                self.connection = None;
                return;
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use std::io::{Read, Write};
    use std::net::TcpListener;

    use super::*;

    /// A server that answers each connection's requests with `answers` in turn, and tells how
    /// many connections it accepted.
    fn serve(answers: Vec<&'static [u8]>) -> (String, std::sync::mpsc::Receiver<Vec<u8>>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut answers = answers.into_iter();
            while let Ok((mut socket, _)) = listener.accept() {
                let mut seen = Vec::new();
                let mut buf = [0u8; 4096];
                // One request per answer: read a head (these tests send small bodies).
                while let Ok(n @ 1..) = socket.read(&mut buf) {
                    seen.extend_from_slice(&buf[..n]);
                    let Some(answer) = answers.next() else { break };
                    if answer.is_empty() {
                        break; // close without answering
                    }
                    socket.write_all(answer).unwrap();
                    if answer.windows(17).any(|w| w == b"Connection: close") {
                        break;
                    }
                }
                let _ = tx.send(seen);
            }
        });
        (url, rx)
    }

    #[test]
    fn bodies_of_every_framing_are_read_and_the_connection_is_reused() {
        let (url, seen) = serve(vec![
            b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello",
            b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
            b"HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n",
            b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nuntil close",
        ]);
        smol::block_on(async {
            let agent = Arc::new(Agent::new(&url, 4).unwrap());
            let mut first = agent.send("POST", "/mcp", &[("X-A".into(), "1".into())], b"{}").await.unwrap();
            assert_eq!(first.status, 200);
            assert_eq!(first.body.read_all(100).await.unwrap(), b"hello");
            let mut second = agent.send("GET", "/mcp", &[], b"").await.unwrap();
            assert_eq!(second.body.read_all(100).await.unwrap(), b"abc");
            let mut third = agent.send("POST", "/mcp", &[], b"x").await.unwrap();
            assert_eq!(third.status, 202);
            third.body.drain(100).await;
            let mut fourth = agent.send("DELETE", "/mcp", &[], b"").await.unwrap();
            assert_eq!(fourth.body.read_all(100).await.unwrap(), b"until close");
        });
        let requests = String::from_utf8(seen.recv().unwrap()).unwrap();
        assert_eq!(requests.matches("HTTP/1.1\r\n").count(), 4, "all on one connection: {requests}");
        assert!(requests.starts_with("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:"), "{requests}");
        assert!(requests.contains("X-A: 1\r\nContent-Length: 2\r\n\r\n{}"), "{requests}");
    }

    #[test]
    fn a_kept_connection_the_server_closed_is_replaced_once() {
        // The first connection answers once, then closes at the next request.
        let (url, _seen) =
            serve(vec![b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", b"", b"HTTP/1.1 204 No Content\r\n\r\n"]);
        smol::block_on(async {
            let agent = Arc::new(Agent::new(&url, 4).unwrap());
            let mut first = agent.send("POST", "/", &[], b"1").await.unwrap();
            first.body.drain(10).await;
            let second = agent.send("POST", "/", &[], b"2").await.unwrap();
            assert_eq!(second.status, 204);
        });
    }

    #[test]
    fn malformed_answers_are_errors_not_hangs() {
        let (url, _seen) = serve(vec![b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\nConnection: close\r\n\r\nshort"]);
        smol::block_on(async {
            let agent = Arc::new(Agent::new(&url, 4).unwrap());
            let mut response = agent.send("POST", "/", &[], b"").await.unwrap();
            let error = response.body.read_all(100).await.unwrap_err();
            assert_eq!(error.kind(), io::ErrorKind::UnexpectedEof);
            let bad = agent.send("POST", "/", &[("X".into(), "a\r\nInjected: 1".into())], b"").await.unwrap_err();
            assert_eq!(bad.kind(), io::ErrorKind::InvalidInput);
        });
        let (url, _seen) = serve(vec![b"NOT HTTP AT ALL\r\n\r\n"]);
        smol::block_on(async {
            let agent = Arc::new(Agent::new(&url, 4).unwrap());
            assert!(agent.send("GET", "/", &[], b"").await.is_err());
        });
        assert!(split_url("https://example.com/mcp").is_err());
        assert_eq!(split_url("http://h:1/a?b=c").unwrap(), ("http://h:1".to_owned(), "/a?b=c".to_owned()));
        assert_eq!(split_url("http://h").unwrap().1, "/");
    }
}
