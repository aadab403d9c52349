//! The Streamable HTTP server on smol: the same endpoint as [`HttpServer`](super::HttpServer)
//! (both eras, JSON or SSE replies, resumable streams, the legacy HTTP+SSE transport), served
//! by one task per connection instead of threads. A small HTTP/1.1 layer (`httparse` for the
//! head, bodies by `Content-Length` or chunked) reads each request with a timeout and keeps
//! connections alive; a waiting stream costs a task, not a thread.

use std::io;
use std::net::{SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use smol::io::{AsyncReadExt, AsyncWriteExt};
use smol::{Async, Timer};
use talaria_core::http::event_log::EventId;
use talaria_core::http::exchange::{HttpMethod, Refusal};
use talaria_core::http::headers::SESSION_ID;
use talaria_core::http::reply::{Reply, ReplyStep};
use talaria_core::server::Headers;

use super::chan::Receiver;
use super::options::HttpServerOptions;
use super::shared::{
    detach_or_close, expire_due, feed_post, finish_post, legacy_closed, legacy_message, legacy_session, plan,
    supports_polling, target, Plan, Session, Shared, Target, Visit,
};
use super::sse_out::{chunk, keepalive_interval, Ending, SseBytes, END};
use super::streams::StreamMsg;
use super::watchdog::{Watch, Watchdog};
use crate::server::Server;

/// The largest request head accepted (431 past it).
const MAX_HEAD: usize = 64 * 1024;

/// How much a connection reads at a time.
const READ_CHUNK: usize = 8 * 1024;

thread_local! {
    /// Where each executor thread reads sockets into (see `Connection::fill`).
    static SCRATCH: std::cell::RefCell<Vec<u8>> = std::cell::RefCell::new(vec![0; READ_CHUNK]);
}

/// A Streamable HTTP server whose connections are smol tasks: on smol's global executor
/// ([`bind`](Self::bind), as many threads as `SMOL_THREADS` says, one by default), or on an
/// executor of yours ([`bind_on`](Self::bind_on); [`crate::smol::executor`] starts one run by
/// every core, which is what a busy server wants).
///
/// # Examples
///
/// ```
/// use talaria::core::server::Router;
/// use talaria::http::{HttpServerOptions, SmolHttpServer};
/// use talaria::server::Server;
///
/// let server = Server::new("http-demo", "1.0", Router::<()>::builder().build());
/// let listening = SmolHttpServer::bind(&server, "127.0.0.1:0", HttpServerOptions::default())?;
/// println!("serving http://{}/mcp", listening.local_addr());
/// listening.shutdown();
/// # Ok::<(), std::io::Error>(())
/// ```
pub struct SmolHttpServer {
    addr: SocketAddr,
    accept: Option<smol::Task<()>>,
    expiry: Option<smol::Task<()>>,
    /// Ends reads silent past the read timeout.
    sweeper: Option<smol::Task<()>>,
    sessions: Arc<dyn Fn() -> usize + Send + Sync>,
}

impl std::fmt::Debug for SmolHttpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SmolHttpServer").field("addr", &self.addr).finish_non_exhaustive()
    }
}

impl SmolHttpServer {
    /// Listens on `addr` (with `TCP_NODELAY` on each connection) and serves `server` at the
    /// options' path, accepting on smol's global executor.
    ///
    /// # Errors
    ///
    /// If the address cannot be bound.
    pub fn bind<S: Send + 'static>(
        server: &Server<S>,
        addr: impl ToSocketAddrs,
        options: HttpServerOptions,
    ) -> io::Result<Self> {
        Self::serve(&Spawner::Global, server, addr, options)
    }

    /// [`bind`](Self::bind), with the accept loop and every connection a task on `executor`
    /// (whichever threads run it).
    ///
    /// # Errors
    ///
    /// If the address cannot be bound.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria::core::server::Router;
    /// use talaria::http::{HttpServerOptions, SmolHttpServer};
    /// use talaria::server::Server;
    ///
    /// let server = Server::new("http-demo", "1.0", Router::<()>::builder().build());
    /// let executor = talaria::smol::executor(2);
    /// let listening = SmolHttpServer::bind_on(&executor, &server, "127.0.0.1:0", HttpServerOptions::default())?;
    /// # listening.shutdown();
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn bind_on<S: Send + 'static>(
        executor: &Arc<smol::Executor<'static>>,
        server: &Server<S>,
        addr: impl ToSocketAddrs,
        options: HttpServerOptions,
    ) -> io::Result<Self> {
        Self::serve(&Spawner::On(Arc::clone(executor)), server, addr, options)
    }

    fn serve<S: Send + 'static>(
        spawner: &Spawner,
        server: &Server<S>,
        addr: impl ToSocketAddrs,
        options: HttpServerOptions,
    ) -> io::Result<Self> {
        let listener = Async::new(TcpListener::bind(addr)?)?;
        let addr = listener.get_ref().local_addr()?;
        let watchdog = Arc::new(Watchdog::new(options.read_timeout));
        let max_connections = options.max_connections;
        let open = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let sweeping = Arc::clone(&watchdog);
        let shared = Arc::new(Shared::new(server, addr, options));
        let accepting = Arc::clone(&shared);
        let spawning = spawner.clone();
        let accept = spawner.spawn(async move {
            loop {
                let Ok((stream, peer)) = listener.accept().await else {
                    // Out of descriptors, say: wait a little rather than spin.
                    Timer::after(Duration::from_millis(10)).await;
                    continue;
                };
                let _ = stream.get_ref().set_nodelay(true);
                if open.fetch_add(1, Ordering::AcqRel) >= max_connections {
                    open.fetch_sub(1, Ordering::AcqRel);
                    spawning.spawn(turn_away(stream)).detach();
                    continue;
                }
                let (watched, counted) = (Arc::clone(&watchdog), Arc::clone(&open));
                let serving = serve_connection(Arc::clone(&accepting), watched, stream, peer);
                spawning
                    .spawn(async move {
                        serving.await;
                        counted.fetch_sub(1, Ordering::AcqRel);
                    })
                    .detach();
            }
        });
        let expiring = Arc::clone(&shared);
        let expiry = spawner.spawn(async move {
            while !expiring.stop.load(Ordering::Acquire) {
                Timer::after(expire_due(&expiring)).await;
            }
        });
        let sweeper = spawner.spawn(async move {
            loop {
                Timer::after(sweeping.tick()).await;
                sweeping.sweep();
            }
        });
        let sessions = Arc::new(move || shared.session_count());
        Ok(Self { addr, accept: Some(accept), expiry: Some(expiry), sweeper: Some(sweeper), sessions })
    }

    /// The address it listens on.
    #[must_use]
    pub const fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// How many legacy sessions are live.
    #[must_use]
    pub fn sessions(&self) -> usize {
        (self.sessions)()
    }

    /// Serves until the task awaiting this is dropped.
    pub async fn wait(mut self) {
        if let Some(accept) = self.accept.take() {
            accept.await;
        }
    }

    /// Stops accepting connections; connections and sessions under way go on until they end.
    pub fn shutdown(mut self) {
        self.stop_now();
    }

    fn stop_now(&mut self) {
        drop(self.accept.take());
        drop(self.expiry.take());
        drop(self.sweeper.take());
    }
}

impl Drop for SmolHttpServer {
    fn drop(&mut self) {
        self.stop_now();
    }
}

/// Answers a connection past [`HttpServerOptions::max_connections`] with `503` and closes it.
async fn turn_away(stream: Async<TcpStream>) {
    let answer =
        b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\nRetry-After: 1\r\n\r\n";
    let _ = (&stream).write_all(answer).await;
}

/// Where the server's tasks run.
#[derive(Clone)]
enum Spawner {
    /// smol's global executor.
    Global,
    /// An executor of the application's.
    On(Arc<smol::Executor<'static>>),
}

impl Spawner {
    fn spawn<T: Send + 'static>(&self, future: impl std::future::Future<Output = T> + Send + 'static) -> smol::Task<T> {
        match self {
            Self::Global => smol::spawn(future),
            Self::On(executor) => executor.spawn(future),
        }
    }
}

/// One request as read off a connection.
struct Request {
    method: String,
    target: String,
    headers: Headers,
    body: Vec<u8>,
    /// The client may send another request on this connection.
    keep_alive: bool,
}

/// Why a request could not be read.
enum ReadError {
    /// The client closed the connection (or was silent past the timeout) between requests.
    Closed,
    /// Answer with this status, then close.
    Status(u16),
}

/// A connection: its socket and what was read past the last request.
struct Connection {
    stream: Arc<Async<TcpStream>>,
    buf: Vec<u8>,
    /// How the read timeout is kept.
    watch: Arc<Watch>,
}

impl Connection {
    /// Reads more bytes into the buffer, within the read timeout (the [`Watchdog`] ends a
    /// read silent past it); `false` at the end. The socket is read into the thread's scratch
    /// buffer and only what came is kept: a waiting connection holds no read buffer, and a
    /// request costs no buffer of its own.
    async fn fill(&mut self) -> io::Result<bool> {
        self.watch.reading();
        let read = loop {
            let attempt = SCRATCH.with_borrow_mut(|scratch| {
                let n = io::Read::read(&mut self.stream.get_ref(), scratch)?;
                self.buf.extend_from_slice(&scratch[..n]);
                Ok::<_, io::Error>(n)
            });
            match attempt {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    if let Err(e) = self.stream.readable().await {
                        break Err(e);
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                other => break other,
            }
        };
        self.watch.done_reading();
        match read {
            Ok(0) if self.watch.timed_out() => Err(io::ErrorKind::TimedOut.into()),
            Ok(n) => Ok(n > 0),
            Err(e) => Err(e),
        }
    }

    /// Reads the next request: its head, then its body (at most `max_body` bytes).
    async fn read_request(&mut self, max_body: usize) -> Result<Request, ReadError> {
        let (head_len, mut request, length, chunked) = loop {
            if let Some(parsed) = parse_head(&self.buf)? {
                break parsed;
            }
            if self.buf.len() > MAX_HEAD {
                return Err(ReadError::Status(431));
            }
            let idle = self.buf.is_empty();
            match self.fill().await {
                Ok(true) => {}
                _ if idle => return Err(ReadError::Closed),
                _ => return Err(ReadError::Status(400)),
            }
        };
        self.buf.drain(..head_len);
        if chunked {
            request.body = self.read_chunked(max_body).await?;
        } else if length > 0 {
            if length > max_body {
                return Err(ReadError::Status(413));
            }
            while self.buf.len() < length {
                if !matches!(self.fill().await, Ok(true)) {
                    return Err(ReadError::Status(400));
                }
            }
            request.body = self.buf.drain(..length).collect();
        }
        Ok(request)
    }

    /// Reads a chunked body (trailers ignored).
    async fn read_chunked(&mut self, max_body: usize) -> Result<Vec<u8>, ReadError> {
        let mut body = Vec::new();
        loop {
            let line = self.read_line().await?;
            let size = line.split(';').next().unwrap_or("").trim();
            let size = usize::from_str_radix(size, 16).map_err(|_| ReadError::Status(400))?;
            if size == 0 {
                while !self.read_line().await?.is_empty() {}
                return Ok(body);
            }
            if body.len() + size > max_body {
                return Err(ReadError::Status(413));
            }
            while self.buf.len() < size + 2 {
                if !matches!(self.fill().await, Ok(true)) {
                    return Err(ReadError::Status(400));
                }
            }
            body.extend(self.buf.drain(..size));
            self.buf.drain(..2);
        }
    }

    /// Reads one CRLF-ended line (without its ending).
    async fn read_line(&mut self) -> Result<String, ReadError> {
        loop {
            if let Some(end) = self.buf.windows(2).position(|w| w == b"\r\n") {
                let line = String::from_utf8_lossy(&self.buf[..end]).into_owned();
                self.buf.drain(..end + 2);
                return Ok(line);
            }
            if self.buf.len() > MAX_HEAD || !matches!(self.fill().await, Ok(true)) {
                return Err(ReadError::Status(400));
            }
        }
    }

    async fn write(&mut self, bytes: &[u8]) -> io::Result<()> {
        (&*self.stream).write_all(bytes).await
    }

    /// Writes a complete response with a `Content-Length` body.
    async fn respond(&mut self, status: u16, headers: &[(&str, &str)], body: &[u8]) -> io::Result<()> {
        use std::io::Write as _;
        let mut bytes = Vec::with_capacity(128 + body.len());
        let _ = write!(bytes, "HTTP/1.1 {status} {}\r\nContent-Length: {}\r\n", reason(status), body.len());
        for (name, value) in headers {
            let _ = write!(bytes, "{name}: {value}\r\n");
        }
        bytes.extend_from_slice(b"\r\n");
        bytes.extend_from_slice(body);
        self.write(&bytes).await
    }

    async fn refuse(&mut self, refusal: Refusal) -> io::Result<()> {
        let mut headers: Vec<(&str, &str)> = refusal.headers.iter().map(|(n, v)| (*n, v.as_str())).collect();
        if refusal.body.is_some() {
            headers.push(("Content-Type", "application/json"));
        }
        self.respond(refusal.status, &headers, refusal.body.as_deref().unwrap_or_default()).await
    }

    /// Writes frames as SSE events as they come (see `SseOut::pump`). Unlike a blocking
    /// writer, it also watches the connection: a client that closes it is noticed at once.
    async fn pump(&mut self, bytes: &SseBytes, frames: &Receiver<StreamMsg>, keepalive: Duration) -> Ending {
        let keepalive = keepalive_interval(keepalive);
        loop {
            let stream: &Async<TcpStream> = &self.stream;
            let mut byte = [0u8; 1];
            let next = smol::future::or(async { Wake::Frame(frames.recv_async().await) }, async {
                smol::future::or(
                    async {
                        Timer::after(keepalive).await;
                        Wake::Quiet
                    },
                    async {
                        match (&*stream).read(&mut byte).await {
                            Ok(0) | Err(_) => Wake::Closed,
                            Ok(_) => Wake::Data(byte[0]),
                        }
                    },
                )
                .await
            })
            .await;
            let written = match next {
                Wake::Frame(Ok(StreamMsg::Frame(payload))) if payload.is_empty() => Ok(()),
                Wake::Frame(Ok(StreamMsg::Frame(payload))) => self.write(&bytes.event(&payload)).await,
                Wake::Quiet => self.write(&SseBytes::keepalive()).await,
                Wake::Frame(Ok(StreamMsg::Done) | Err(_)) => return Ending::Finished,
                Wake::Frame(Ok(StreamMsg::Disconnect)) => return Ending::Disconnected,
                Wake::Closed => return Ending::Gone,
                // A request sent while the stream is open is read once the stream ends.
                Wake::Data(first) => {
                    self.buf.push(first);
                    Ok(())
                }
            };
            if written.is_err() {
                return Ending::Gone;
            }
        }
    }
}

/// What ended a wait in [`Connection::pump`].
enum Wake {
    Frame(Result<StreamMsg, std::sync::mpsc::RecvError>),
    Quiet,
    Closed,
    Data(u8),
}

/// The request head at the start of `buf`, if complete: its length, the request without its
/// body, the body's `Content-Length`, and whether the body is chunked.
fn parse_head(buf: &[u8]) -> Result<Option<(usize, Request, usize, bool)>, ReadError> {
    let mut slots = [httparse::EMPTY_HEADER; 64];
    let mut parsed = httparse::Request::new(&mut slots);
    let head_len = match parsed.parse(buf) {
        Ok(httparse::Status::Complete(len)) if len > MAX_HEAD => return Err(ReadError::Status(431)),
        Ok(httparse::Status::Complete(len)) => len,
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(httparse::Error::TooManyHeaders) => return Err(ReadError::Status(431)),
        Err(_) => return Err(ReadError::Status(400)),
    };
    let text: usize = parsed.headers.iter().map(|h| h.name.len() + h.value.len()).sum();
    let mut headers = Headers::with_capacity(parsed.headers.len(), text);
    for field in parsed.headers.iter() {
        headers.push(field.name, String::from_utf8_lossy(field.value).trim());
    }
    let chunked = headers.get("Transfer-Encoding").is_some_and(|v| v.to_ascii_lowercase().contains("chunked"));
    let length = match headers.get("Content-Length") {
        Some(value) => value.parse::<usize>().map_err(|_| ReadError::Status(400))?,
        None => 0,
    };
    let connection = headers.get("Connection").map(str::to_ascii_lowercase);
    let keep_alive = match parsed.version {
        Some(1) => !connection.as_deref().is_some_and(|c| c.contains("close")),
        _ => connection.as_deref().is_some_and(|c| c.contains("keep-alive")),
    };
    let request = Request {
        method: parsed.method.unwrap_or("").to_owned(),
        target: parsed.path.unwrap_or("").to_owned(),
        headers,
        body: Vec::new(),
        keep_alive,
    };
    Ok(Some((head_len, request, length, chunked)))
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        202 => "Accepted",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        406 => "Not Acceptable",
        413 => "Payload Too Large",
        415 => "Unsupported Media Type",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "",
    }
}

/// Serves one connection's requests until it closes, is silent too long, or a response ends it.
async fn serve_connection<S: Send + 'static>(
    shared: Arc<Shared<S>>,
    watchdog: Arc<Watchdog>,
    stream: Async<TcpStream>,
    peer: SocketAddr,
) {
    let stream = Arc::new(stream);
    let watch = watchdog.watch(Arc::clone(&stream));
    let mut connection = Connection { stream, buf: Vec::new(), watch };
    loop {
        let request = match connection.read_request(shared.options.endpoint.max_body).await {
            Ok(request) => request,
            Err(ReadError::Closed) => return,
            Err(ReadError::Status(status)) => {
                let _ = connection.respond(status, &[("Connection", "close")], b"").await;
                return;
            }
        };
        let keep_alive = request.keep_alive;
        if connection.buf.is_empty() {
            // Nothing pipelined: a connection that waits (for its reply, its stream, or its
            // next request) holds no read buffer.
            connection.buf = Vec::new();
        }
        let handled = handle(&shared, &mut connection, request, peer).await;
        if !(handled && keep_alive) {
            return;
        }
    }
}

/// Answers one request; whether the connection can carry another.
async fn handle<S: Send + 'static>(
    shared: &Shared<S>,
    connection: &mut Connection,
    request: Request,
    peer: SocketAddr,
) -> bool {
    let Request { method, target: path, headers, body, .. } = request;
    let target = target(&shared.options, &path);
    if target == Target::Elsewhere {
        return connection.respond(404, &[], b"").await.is_ok();
    }
    if target == Target::ResourceMetadata {
        let document = shared.options.resource_metadata.as_ref().map(|(_, d)| d.clone()).unwrap_or_default();
        let head = [("Content-Type", "application/json"), ("Access-Control-Allow-Origin", "*")];
        return connection.respond(200, &head, &document).await.is_ok();
    }
    let mut identity = None;
    if let Some(authorize) = &shared.options.authorize {
        match authorize(&headers) {
            Ok(who) => identity = who,
            Err(refusal) => return connection.refuse(refusal).await.is_ok(),
        }
    }
    match target {
        Target::LegacyOpen => {
            let origin = headers.get("Origin");
            return legacy_open(shared, connection, (&method, origin), identity, peer).await;
        }
        Target::LegacyPost => {
            if method != "POST" {
                return connection.refuse(Refusal::bad_request("send legacy messages with POST")).await.is_ok();
            }
            return match legacy_message(shared, &path, &body) {
                Ok(()) => connection.respond(202, &[], b"").await.is_ok(),
                Err(refusal) => connection.refuse(refusal).await.is_ok(),
            };
        }
        _ => {}
    }
    let method = HttpMethod::parse(&method);
    match plan(shared, method, headers, &body, identity, Some(peer)) {
        Plan::Refuse(refusal) => connection.refuse(refusal).await.is_ok(),
        Plan::Ended => connection.respond(200, &[], b"").await.is_ok(),
        Plan::Post { session, session_id, visit } => {
            post(shared, connection, &session, visit, &body, session_id.as_deref()).await
        }
        Plan::OpenStream { session, last_event_id } => {
            open_stream(shared, connection, &session, last_event_id.as_deref()).await
        }
    }
}

/// Feeds one POST body to the session and writes its reply, the session finished before the
/// reply's last bytes (see the blocking server's `post`); whether the connection can carry
/// another request.
async fn post<S: Send + 'static>(
    shared: &Shared<S>,
    connection: &mut Connection,
    session: &Session<S>,
    visit: Option<Visit>,
    body: &[u8],
    session_id: Option<&str>,
) -> bool {
    let (stream, frames) = feed_post(shared, session, visit, body);
    let mut reply = Reply::new(shared.options.reply_mode);
    let keepalive = keepalive_interval(shared.options.sse_keepalive);
    let with_id: Vec<(&str, &str)> = session_id.map(|id| (SESSION_ID, id)).into_iter().collect();
    let (first, disconnect) = loop {
        let next = smol::future::or(async { Some(frames.recv_async().await) }, async {
            Timer::after(keepalive).await;
            None
        })
        .await;
        let (steps, disconnect) = match next {
            Some(Ok(StreamMsg::Frame(payload))) => (reply.frame(payload), false),
            Some(Ok(StreamMsg::Done) | Err(_)) => (reply.done(), false),
            None => (reply.idle(), false),
            Some(Ok(StreamMsg::Disconnect)) => (reply.start_stream(), true),
        };
        match steps.first() {
            None => {}
            Some(ReplyStep::Accepted) => {
                finish_post(shared, session, session_id);
                return connection.respond(202, &with_id, b"").await.is_ok();
            }
            Some(ReplyStep::Json { status, body }) => {
                let mut headers = with_id.clone();
                headers.push(("Content-Type", "application/json"));
                finish_post(shared, session, session_id);
                return connection.respond(*status, &headers, body).await.is_ok();
            }
            Some(_) => break (steps, disconnect),
        }
    };
    let log = session.streams.log_post(stream).and_then(|id| Some((session.streams.log()?.clone(), id)));
    let log_stream = log.as_ref().map(|(_, id)| *id);
    let bytes = SseBytes::new(log);
    let mut ok = connection.write(&SseBytes::head(session_id, false)).await.is_ok();
    if ok && supports_polling(session) {
        if let Some(priming) = bytes.prime(shared.options.sse_retry) {
            ok = connection.write(&priming).await.is_ok();
        }
    }
    for step in first {
        if let ReplyStep::Event(payload) = step {
            ok = ok && connection.write(&bytes.event(&payload)).await.is_ok();
        }
    }
    let ending = if !ok {
        Ending::Gone
    } else if disconnect {
        Ending::Disconnected
    } else {
        connection.pump(&bytes, &frames, shared.options.sse_keepalive).await
    };
    match ending {
        Ending::Finished => {
            finish_post(shared, session, session_id);
            bytes.close_log();
            connection.write(END).await.is_ok()
        }
        Ending::Disconnected => {
            let ended = connection.write(END).await.is_ok();
            detach_or_close(session, stream, &frames, log_stream);
            finish_post(shared, session, session_id);
            ended
        }
        Ending::Gone => {
            detach_or_close(session, stream, &frames, log_stream);
            finish_post(shared, session, session_id);
            false
        }
    }
}

/// GET with `Mcp-Session-Id`: the session's stream, or the resumption of a stream after
/// `Last-Event-ID` (see the blocking server's `open_stream`).
async fn open_stream<S: Send + 'static>(
    shared: &Shared<S>,
    connection: &mut Connection,
    session: &Session<S>,
    last_event_id: Option<&str>,
) -> bool {
    let keepalive = shared.options.sse_keepalive;
    if let Some(last) = last_event_id {
        let resumed = last.trim().parse::<EventId>().ok().and_then(|after| session.streams.resume(after));
        let Some(resumed) = resumed else {
            let refusal = Refusal::bad_request(&format!("Last-Event-ID {last} is not an event of this session"));
            return connection.refuse(refusal).await.is_ok();
        };
        let bytes = SseBytes::new(session.streams.log().map(|log| (log.clone(), resumed.log)));
        let mut ok = connection.write(&SseBytes::head(None, true)).await.is_ok();
        for event in &resumed.events {
            ok = ok && connection.write(&SseBytes::replayed(event)).await.is_ok();
        }
        let Some(frames) = resumed.frames else {
            return ok && connection.write(END).await.is_ok();
        };
        let ending = if ok { connection.pump(&bytes, &frames, keepalive).await } else { Ending::Gone };
        return match (ending, resumed.post) {
            (Ending::Finished, Some(_)) => {
                bytes.close_log();
                connection.write(END).await.is_ok()
            }
            (Ending::Gone, Some(stream)) => {
                detach_or_close(session, stream, &frames, Some(resumed.log));
                false
            }
            (_, Some(stream)) => {
                detach_or_close(session, stream, &frames, Some(resumed.log));
                connection.write(END).await.is_ok()
            }
            (Ending::Gone, None) => false,
            (_, None) => connection.write(END).await.is_ok(),
        };
    }
    let frames = session.streams.open_get();
    let bytes = SseBytes::new(session.streams.get_log().and_then(|id| Some((session.streams.log()?.clone(), id))));
    let mut ok = connection.write(&SseBytes::head(None, true)).await.is_ok();
    if ok && supports_polling(session) {
        if let Some(priming) = bytes.prime(shared.options.sse_retry) {
            ok = connection.write(&priming).await.is_ok();
        }
    }
    ok && connection.pump(&bytes, &frames, keepalive).await == Ending::Finished && connection.write(END).await.is_ok()
}

/// GET on the legacy stream path: a new session whose stream opens with the `endpoint` event;
/// the session ends with the stream. The connection is not reused.
async fn legacy_open<S: Send + 'static>(
    shared: &Shared<S>,
    connection: &mut Connection,
    request: (&str, Option<&str>),
    identity: Option<String>,
    peer: SocketAddr,
) -> bool {
    let (method, origin) = request;
    let (id, session, endpoint) = match legacy_session(shared, method, origin, identity, Some(peer.to_string())) {
        Ok(opened) => opened,
        Err(refusal) => return connection.refuse(refusal).await.is_ok(),
    };
    let frames = session.streams.open_get();
    let mut opening = SseBytes::head(None, true);
    opening.extend_from_slice(&chunk(&endpoint));
    if connection.write(&opening).await.is_ok()
        && connection.pump(&SseBytes::new(None), &frames, shared.options.sse_keepalive).await == Ending::Finished
    {
        let _ = connection.write(END).await;
    }
    legacy_closed(shared, &id);
    false
}
