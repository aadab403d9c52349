//! The smol HTTP client's connections: hyper's HTTP/1.1 client on async-io sockets (and
//! rustls for `https://`), one request at a time per connection, idle connections kept for
//! reuse, `TCP_NODELAY` on every socket. Each connection is driven by a task on smol's global
//! executor.

use std::io;
use std::net::{TcpStream, ToSocketAddrs};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::client::conn::http1::SendRequest;
use hyper::header::{HeaderName, HeaderValue, HOST};
use smol::Async;
use smol_hyper::rt::FuturesIo;
use talaria_core::auth::url::HttpUrl;

use crate::client::ClientOptions;

/// How long connecting (and a TLS handshake) may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// A connection's way to send requests.
type Sender = SendRequest<Full<Bytes>>;

/// Where requests go: one origin, and the connections kept open to it.
pub(crate) struct Agent {
    host: String,
    port: u16,
    /// The `Host` header.
    authority: String,
    /// For `https://`: the TLS client's configuration.
    #[cfg(feature = "tls")]
    tls: Option<Arc<rustls::ClientConfig>>,
    idle: Mutex<Vec<Sender>>,
    max_idle: usize,
}

impl std::fmt::Debug for Agent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Agent").field("authority", &self.authority).finish_non_exhaustive()
    }
}

/// A request's target: its agent's origin, and its path and query.
pub(crate) fn split_url(url: &str) -> Result<(String, String), String> {
    let parsed = HttpUrl::parse(url).map_err(|e| e.to_string())?;
    let target = parsed.query().map_or_else(|| parsed.path().to_owned(), |q| format!("{}?{q}", parsed.path()));
    let target = if target.is_empty() { "/".to_owned() } else { target };
    Ok((parsed.origin(), target))
}

impl Agent {
    /// An agent for `origin` (`http://host[:port]` or `https://...`), keeping at most
    /// `max_idle` idle connections, trusting the roots `options` name for `https://`.
    pub(crate) fn new(origin: &str, max_idle: usize, options: &ClientOptions) -> Result<Self, String> {
        let parsed = HttpUrl::parse(origin).map_err(|e| e.to_string())?;
        let secure = parsed.scheme() == "https";
        let host = parsed.host().trim_start_matches('[').trim_end_matches(']').to_owned();
        let authority = parsed.origin().split_once("://").map_or_else(String::new, |(_, a)| a.to_owned());
        let port = match authority.rsplit_once(':') {
            Some((_, port)) if !port.ends_with(']') => port.parse().map_err(|_| format!("bad port in {origin}"))?,
            _ if secure => 443,
            _ => 80,
        };
        #[cfg(feature = "tls")]
        let tls = secure.then(|| options.tls.client_config());
        #[cfg(not(feature = "tls"))]
        if secure {
            let _ = options;
            return Err(format!("{origin}: https:// needs talaria's `tls` feature"));
        }
        Ok(Self {
            host,
            port,
            authority,
            #[cfg(feature = "tls")]
            tls,
            idle: Mutex::new(Vec::new()),
            max_idle,
        })
    }

    /// Opens a connection (TLS for `https://`) and starts its driver.
    async fn connect(&self) -> io::Result<Sender> {
        let connecting = async {
            let stream = self.tcp().await?;
            #[cfg(feature = "tls")]
            if let Some(config) = &self.tls {
                let name = rustls::pki_types::ServerName::try_from(self.host.clone())
                    .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
                let tls = futures_rustls::TlsConnector::from(Arc::clone(config)).connect(name, stream).await?;
                return handshake(FuturesIo::new(tls)).await;
            }
            handshake(FuturesIo::new(stream)).await
        };
        smol::future::or(connecting, async {
            smol::Timer::after(CONNECT_TIMEOUT).await;
            Err(io::ErrorKind::TimedOut.into())
        })
        .await
    }

    async fn tcp(&self) -> io::Result<Async<TcpStream>> {
        let (host, port) = (self.host.clone(), self.port);
        let addrs: Vec<_> = smol::unblock(move || (host.as_str(), port).to_socket_addrs().map(Vec::from_iter)).await?;
        let mut last = io::Error::new(io::ErrorKind::NotFound, "no address");
        for addr in addrs {
            match Async::<TcpStream>::connect(addr).await {
                Ok(stream) => {
                    stream.get_ref().set_nodelay(true)?;
                    return Ok(stream);
                }
                Err(e) => last = e,
            }
        }
        Err(last)
    }

    fn take_idle(&self) -> Option<Sender> {
        self.idle.lock().unwrap_or_else(PoisonError::into_inner).pop()
    }

    fn put_idle(&self, sender: Sender) {
        let mut idle = self.idle.lock().unwrap_or_else(PoisonError::into_inner);
        if idle.len() < self.max_idle && !sender.is_closed() {
            idle.push(sender);
        }
    }

    /// The request, its headers checked (a line break in a value is refused, not sent).
    fn request(
        &self,
        method: &str,
        target: &str,
        headers: &[(String, String)],
        body: &[u8],
    ) -> io::Result<hyper::Request<Full<Bytes>>> {
        let invalid = |what: String| io::Error::new(io::ErrorKind::InvalidInput, what);
        let method = hyper::Method::from_bytes(method.as_bytes()).map_err(|e| invalid(e.to_string()))?;
        let mut request = hyper::Request::new(Full::new(Bytes::copy_from_slice(body)));
        *request.method_mut() = method;
        *request.uri_mut() = target.parse().map_err(|e: hyper::http::uri::InvalidUri| invalid(e.to_string()))?;
        let fields = request.headers_mut();
        fields.insert(HOST, HeaderValue::from_str(&self.authority).map_err(|e| invalid(e.to_string()))?);
        for (name, value) in headers {
            let name = HeaderName::from_bytes(name.as_bytes()).map_err(|e| invalid(format!("header {name}: {e}")))?;
            let value = HeaderValue::from_str(value).map_err(|e| invalid(format!("header {name}: {e}")))?;
            fields.append(name, value);
        }
        Ok(request)
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
        while let Some(mut sender) = self.take_idle() {
            if sender.ready().await.is_err() {
                continue; // closed while idle
            }
            match sender.send_request(self.request(method, target, headers, body)?).await {
                Ok(response) => return Ok(self.response(response, sender)),
                // The server closed the kept connection before answering this request.
                Err(e) if e.is_canceled() || e.is_incomplete_message() => break,
                Err(e) => return Err(io_error(&e)),
            }
        }
        let mut sender = self.connect().await?;
        let response =
            sender.send_request(self.request(method, target, headers, body)?).await.map_err(|e| io_error(&e))?;
        Ok(self.response(response, sender))
    }

    fn response(self: &Arc<Self>, response: hyper::Response<Incoming>, sender: Sender) -> Response {
        let (parts, incoming) = response.into_parts();
        let headers = parts
            .headers
            .iter()
            .map(|(name, value)| {
                (name.as_str().to_owned(), String::from_utf8_lossy(value.as_bytes()).trim().to_owned())
            })
            .collect();
        let body = Body { agent: Arc::clone(self), incoming: Some(incoming), sender: Some(sender) };
        Response { status: parts.status.as_u16(), headers, body }
    }
}

/// Starts hyper's client on `io`, its driver a task on smol's global executor.
async fn handshake<T>(io: T) -> io::Result<Sender>
where
    T: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
{
    let (sender, connection) = hyper::client::conn::http1::handshake(io).await.map_err(|e| io_error(&e))?;
    smol::spawn(async move {
        let _ = connection.await;
    })
    .detach();
    Ok(sender)
}

/// An I/O error for what hyper reported: a connection that ended early is `UnexpectedEof`.
fn io_error(error: &hyper::Error) -> io::Error {
    if error.is_incomplete_message() {
        return io::Error::new(io::ErrorKind::UnexpectedEof, error.to_string());
    }
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        if let Some(io) = cause.downcast_ref::<io::Error>() {
            return io::Error::new(io.kind(), error.to_string());
        }
        source = cause.source();
    }
    io::Error::new(io::ErrorKind::InvalidData, error.to_string())
}

fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
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
pub(crate) struct Body {
    agent: Arc<Agent>,
    incoming: Option<Incoming>,
    sender: Option<Sender>,
}

impl std::fmt::Debug for Body {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Body").field("done", &self.incoming.is_none()).finish_non_exhaustive()
    }
}

impl Body {
    /// Appends the next bytes of the body to `out`; `false` once the body has ended.
    pub(crate) async fn read(&mut self, out: &mut Vec<u8>) -> io::Result<bool> {
        loop {
            let Some(incoming) = self.incoming.as_mut() else { return Ok(false) };
            match incoming.frame().await {
                Some(Ok(frame)) => {
                    // (Trailers are skipped.)
                    if let Ok(data) = frame.into_data() {
                        if !data.is_empty() {
                            out.extend_from_slice(&data);
                            return Ok(true);
                        }
                    }
                }
                Some(Err(e)) => {
                    self.close();
                    return Err(io_error(&e));
                }
                None => {
                    self.incoming = None;
                    if let Some(sender) = self.sender.take() {
                        self.agent.put_idle(sender);
                    }
                    return Ok(false);
                }
            }
        }
    }

    /// Gives the connection up.
    fn close(&mut self) {
        self.incoming = None;
        self.sender = None;
    }

    /// Reads the whole body, up to `limit` bytes (more is an error).
    pub(crate) async fn read_all(&mut self, limit: usize) -> io::Result<Vec<u8>> {
        let mut out = Vec::new();
        while self.read(&mut out).await? {
            if out.len() > limit {
                self.close();
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
                self.close();
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

    fn options() -> ClientOptions {
        ClientOptions::new("wire", "1")
    }

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
            let agent = Arc::new(Agent::new(&url, 4, &options()).unwrap());
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
        let lower = requests.to_ascii_lowercase();
        assert!(lower.starts_with("post /mcp http/1.1\r\nhost: 127.0.0.1:"), "{requests}");
        assert!(lower.contains("x-a: 1\r\n") && lower.contains("content-length: 2\r\n\r\n{}"), "{requests}");
    }

    #[test]
    fn a_kept_connection_the_server_closed_is_replaced_once() {
        // The first connection answers once, then closes at the next request.
        let (url, _seen) =
            serve(vec![b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", b"", b"HTTP/1.1 204 No Content\r\n\r\n"]);
        smol::block_on(async {
            let agent = Arc::new(Agent::new(&url, 4, &options()).unwrap());
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
            let agent = Arc::new(Agent::new(&url, 4, &options()).unwrap());
            let mut response = agent.send("POST", "/", &[], b"").await.unwrap();
            let error = response.body.read_all(100).await.unwrap_err();
            assert_eq!(error.kind(), io::ErrorKind::UnexpectedEof);
            let bad = agent.send("POST", "/", &[("X".into(), "a\r\nInjected: 1".into())], b"").await.unwrap_err();
            assert_eq!(bad.kind(), io::ErrorKind::InvalidInput);
        });
        let (url, _seen) = serve(vec![b"NOT HTTP AT ALL\r\n\r\n"]);
        smol::block_on(async {
            let agent = Arc::new(Agent::new(&url, 4, &options()).unwrap());
            assert!(agent.send("GET", "/", &[], b"").await.is_err());
        });
        assert_eq!(split_url("https://example.com/mcp").unwrap().0, "https://example.com");
        assert!(split_url("ftp://example.com/mcp").is_err());
        assert_eq!(split_url("http://h:1/a?b=c").unwrap(), ("http://h:1".to_owned(), "/a?b=c".to_owned()));
        assert_eq!(split_url("http://h").unwrap().1, "/");
    }
}
