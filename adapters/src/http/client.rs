//! The Streamable HTTP client (ureq): each message its own POST, replies read as JSON or as
//! an SSE stream (decoded incrementally by the core), the session id and protocol version
//! carried on every request, and (legacy era) a GET stream for server messages.

use std::io::Read;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError, Weak};

use talaria_core::client::Endpoint;
use talaria_core::http::client::{
    get_refused, ClientLink, GetRefused, Outgoing as Message, ResponseHead, SseReading, AUTH_RETRIES,
    DEFAULT_GET_RETRY, GET_OPEN_WAIT,
};
use talaria_core::http::headers::SESSION_ID;
use talaria_core::http::post::{BodyLimits, PostExchange, PostStep};
use talaria_core::jsonrpc::RequestId;
use talaria_core::session::Route;

use crate::client::{connect, Authenticator, Client, ClientError, ClientOptions, Teardown, TraceFn};
use crate::conn::{Conn, FrameSink, Outgoing};
use crate::server::Pool;

use super::inflight::{agent_config, Closed, Inflight};
use super::traced::{self, Response};
use super::{MAX_DRAIN, MAX_REPLY};
use crate::caller_runs;

/// How the server first refused a request with an HTTP error status.
#[derive(Debug, Clone)]
pub(super) struct FirstRefusal {
    /// The status.
    pub(super) status: u16,
    /// Whether the body was a modern MCP error (see [`Refused::modern`](talaria_core::http::client::Refused::modern)).
    pub(super) modern: bool,
    /// The `WWW-Authenticate` header.
    pub(super) www_authenticate: Option<String>,
    /// The body's JSON-RPC error message, if it had one.
    pub(super) detail: Option<String>,
}

/// A message whose credentials could not be had after the server refused it with `status`:
/// the refusal the connect error reports (for a request), and the transport error each call
/// owed an answer fails with.
pub(super) fn authorization_failed(
    url: &str,
    message: &Message,
    status: u16,
    www_authenticate: Option<String>,
    reason: String,
) -> (Option<FirstRefusal>, String) {
    let why = format!("HTTP {status} from {url}: {reason}");
    let refusal =
        message.is_request().then_some(FirstRefusal { status, modern: false, www_authenticate, detail: Some(reason) });
    (refusal, why)
}

/// Each of the calls `ids` fails with a transport error giving `why`: the exchange failed, the
/// server said nothing ([`LocalError::Transport`](talaria_core::session::LocalError::Transport)).
pub(super) fn fail_calls(conn: &OnceLock<Weak<Conn<Endpoint>>>, ids: &[RequestId], why: &str) {
    if let Some(conn) = conn.get().and_then(Weak::upgrade) {
        conn.with(|endpoint, now| {
            for id in ids {
                endpoint.transport_failed(now, id, why);
            }
        });
    }
}

/// The server forgot the session (expired, restarted): calls in flight fail with a
/// closed-session error giving `why`, and the session starts a new handshake that later
/// calls wait for.
pub(super) fn session_lost(conn: &OnceLock<Weak<Conn<Endpoint>>>, why: &str) {
    if let Some(conn) = conn.get().and_then(Weak::upgrade) {
        conn.with(|endpoint, now| endpoint.session_lost(now, why));
    }
}

impl FirstRefusal {
    /// The connect error a refused handshake becomes.
    pub(super) fn into_error(self, url: &str) -> ClientError {
        ClientError::HttpStatus {
            url: url.to_owned(),
            status: self.status,
            www_authenticate: self.www_authenticate,
            detail: self.detail,
        }
    }
}

/// How long closing waits for the server to answer the session's DELETE.
const DELETE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// What every request of one client shares.
struct Link {
    agent: ureq::Agent,
    url: String,
    headers: Vec<(String, String)>,
    /// The session id, the negotiated revision, whether the GET stream is open.
    state: Mutex<ClientLink>,
    conn: OnceLock<Weak<Conn<Endpoint>>>,
    pool: Pool,
    /// Stateless-era requests in flight, each cancellable by closing its stream.
    inflight: Inflight,
    closed: AtomicBool,
    /// Requests' jobs counted against `MAX_POSTS_HERE`: each job offered to a waiting caller,
    /// from the offer until it ends, on that caller's thread or, if no caller took it, on a
    /// worker (so the count is an upper bound on those running on callers' threads).
    posts_here: AtomicUsize,
    /// The first refusal, for the backwards-compatibility probe and the connect error.
    first_refusal: Mutex<Option<FirstRefusal>>,
    /// Where HTTP heads and SSE fields are traced, if anywhere.
    trace: Option<TraceFn>,
    /// Supplies and renews the `Authorization` header, if the client has one.
    authenticator: Option<Arc<dyn Authenticator>>,
}

impl Link {
    fn feed(&self, frame: &[u8]) {
        if let Some(conn) = self.conn.get().and_then(Weak::upgrade) {
            conn.with(|endpoint, now| endpoint.handle_frame(now, Route::Connection, frame));
        }
    }

    fn state(&self) -> MutexGuard<'_, ClientLink> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn session_id(&self) -> Option<String> {
        self.state().session_id().map(str::to_owned)
    }

    /// Sends a request without a body, tracing both heads.
    fn call(&self, builder: ureq::RequestBuilder<ureq::typestate::WithoutBody>) -> Result<Response, ureq::Error> {
        traced::call(self.trace.as_ref(), builder)
    }

    /// The authenticator's `Authorization` header for this server, if any.
    fn authorization(&self) -> Option<String> {
        self.authenticator.as_ref().and_then(|a| a.authorization(&self.url))
    }

    /// `builder` with the application's headers, `authorization` and the protocol's `headers`.
    fn request_as<B, N: AsRef<str>>(
        &self,
        builder: ureq::RequestBuilder<B>,
        authorization: Option<&str>,
        headers: Vec<(N, String)>,
    ) -> ureq::RequestBuilder<B> {
        let mut builder = builder;
        for (name, value) in &self.headers {
            builder = builder.header(name, value);
        }
        if let Some(authorization) = authorization {
            builder = builder.header("Authorization", authorization);
        }
        for (name, value) in headers {
            builder = builder.header(name.as_ref(), value);
        }
        builder
    }

    fn note_refusal(&self, refusal: FirstRefusal) {
        self.first_refusal.lock().unwrap_or_else(PoisonError::into_inner).get_or_insert(refusal);
    }
}

/// How many requests at most are carried out by their own calling threads at once; past it
/// they go to the worker pool, which has as many threads: what one client connects at most
/// is bounded by this and the pool, not by how many threads call it.
const MAX_POSTS_HERE: usize = 64;

/// What a POST's answer may hold in memory: a JSON reply, an error answer's body.
const LIMITS: BodyLimits = BodyLimits { reply: MAX_REPLY, refusal: MAX_DRAIN };

/// POSTs one message and carries out the core's [`PostExchange`]: reads the answer as it
/// says, feeds the session, resumes a cut SSE reply.
fn post(link: &Link, message: &Message, payload: &[u8]) {
    // A request gets a connection of its own, closed if its call ends otherwise (in the
    // stateless era, closing it is the cancellation).
    let running = message.request_id().map(|id| link.inflight.start(id.clone(), message.is_stateless()));
    let cancelled = || running.as_ref().is_some_and(super::inflight::Running::cancelled);
    let agent = running.as_ref().map_or(&link.agent, super::inflight::Running::agent);
    let send = |authorization: Option<&str>| {
        let headers = link.state().post_headers(message);
        let builder = link.request_as(agent.post(&link.url), authorization, headers);
        traced::send(link.trace.as_ref(), builder, payload)
    };
    let mut exchange = PostExchange::new(message, &link.url, LIMITS);
    let (mut body, mut www_authenticate): (Box<dyn Read>, _) = (Box::new(std::io::empty()), None);
    match send_authorized(link, send) {
        Ok(response) => {
            www_authenticate = header(&response, "WWW-Authenticate").map(str::to_owned);
            body = answered(link, &mut exchange, response);
        }
        Err(_) if cancelled() => return,
        Err(AuthorizedError::Refused { status, www_authenticate, reason }) => {
            let (refusal, why) = authorization_failed(&link.url, message, status, www_authenticate, reason);
            if let Some(refusal) = refusal {
                link.note_refusal(refusal);
            }
            exchange.failed(&link.state(), why);
        }
        Err(e) => exchange.failed(&link.state(), format!("HTTP transport: {e}")),
    }
    // Whether the request's call is settled otherwise: nothing to resume or give up.
    let moot =
        || link.closed.load(Ordering::Acquire) || !message.request_id().is_some_and(|id| still_pending(&link.conn, id));
    let mut buf = Vec::new();
    while let Some(step) = exchange.poll_step() {
        match step {
            PostStep::Drain => {
                drain(&mut body);
                exchange.body_end(&link.state());
            }
            PostStep::ReadWhole { limit } => {
                let read = read_at_most(&mut body, limit);
                // A cancelled request's connection was closed: what it read means nothing.
                if cancelled() {
                    return;
                }
                match read {
                    Ok(bytes) => exchange.body(&mut link.state(), bytes),
                    Err(e) => exchange.failed(&link.state(), format!("HTTP transport: {e}")),
                }
            }
            PostStep::ReadSse => {
                buf.resize(16 * 1024, 0);
                match body.read(&mut buf) {
                    Ok(n) if n > 0 => exchange.sse(&mut link.state(), &buf[..n]),
                    _ if cancelled() => return,
                    _ => exchange.body_end(&link.state()),
                }
            }
            PostStep::Resume { after, last_event_id } => {
                body = Box::new(std::io::empty());
                if moot() {
                    return;
                }
                std::thread::sleep(after);
                let headers = link.state().stream_headers(Some(&last_event_id));
                match link.call(link.request_as(link.agent.get(&link.url), link.authorization().as_deref(), headers)) {
                    Ok(response) => body = answered(link, &mut exchange, response),
                    Err(e) => exchange.failed(&link.state(), e.to_string()),
                }
            }
            other => settle(other, &link.conn, link.trace.as_ref(), &link.first_refusal, &mut www_authenticate, moot),
        }
    }
}

/// Carries out a step of a POST's [`PostExchange`] that needs no I/O, the same in both
/// clients: traces and feeds what arrived, fails calls, forgets the session, notes a refusal
/// (with the answer's `WWW-Authenticate`). A `moot` call (settled otherwise) is not fed its
/// `Unanswered` error. The steps that read or resume are the caller's, and ignored here.
pub(super) fn settle(
    step: PostStep,
    conn: &OnceLock<Weak<Conn<Endpoint>>>,
    trace: Option<&TraceFn>,
    first_refusal: &Mutex<Option<FirstRefusal>>,
    www_authenticate: &mut Option<String>,
    moot: impl Fn() -> bool,
) {
    let feed = |frame: &[u8]| {
        if let Some(conn) = conn.get().and_then(Weak::upgrade) {
            conn.with(|endpoint, now| endpoint.handle_frame(now, Route::Connection, frame));
        }
    };
    match step {
        PostStep::Event(event) => {
            traced::sse_fields(trace, &event);
            if !event.data.is_empty() {
                feed(event.data.as_bytes());
            }
        }
        PostStep::Feed(frame) => feed(&frame),
        PostStep::Reject { id, error } => {
            if let Some(conn) = conn.get().and_then(Weak::upgrade) {
                conn.with(|endpoint, now| endpoint.refused(now, &id, error));
            }
        }
        PostStep::Unanswered(id) if !moot() => fail_calls(conn, &[id], talaria_core::http::client::UNANSWERED),
        PostStep::FailCalls { ids, why } => fail_calls(conn, &ids, &why),
        PostStep::SessionLost { why } => session_lost(conn, why),
        PostStep::Refused { status, refusal } => {
            let refusal = FirstRefusal {
                status,
                modern: refusal.modern,
                www_authenticate: www_authenticate.take(),
                detail: refusal.detail,
            };
            first_refusal.lock().unwrap_or_else(PoisonError::into_inner).get_or_insert(refusal);
        }
        _ => {}
    }
}

/// A header of `response`.
fn header<'a>(response: &'a Response, name: &str) -> Option<&'a str> {
    response.headers().get(name).and_then(|v| v.to_str().ok())
}

/// Hands `response`'s head to `exchange`; gives back its body, to read as the exchange says.
fn answered(link: &Link, exchange: &mut PostExchange<'_>, response: Response) -> Box<dyn Read> {
    let head = ResponseHead {
        status: response.status().as_u16(),
        content_type: header(&response, "Content-Type"),
        session_id: header(&response, SESSION_ID),
    };
    exchange.head(&mut link.state(), &head);
    Box::new(response.into_body().into_reader())
}

/// Reads an unwanted body's first [`MAX_DRAIN`] bytes and throws them away (the rest is left,
/// and the connection with it).
fn drain(body: &mut impl Read) {
    let _ = std::io::copy(&mut body.take(MAX_DRAIN as u64), &mut std::io::sink());
}

/// The whole body, unless it holds more than `limit` bytes (an error: the server sends more
/// than any answer needs).
fn read_at_most(body: &mut impl Read, limit: usize) -> std::io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    body.take(limit as u64 + 1).read_to_end(&mut bytes)?;
    if bytes.len() > limit {
        let message = format!("the response is larger than {limit} bytes");
        return Err(std::io::Error::new(std::io::ErrorKind::InvalidData, message));
    }
    Ok(bytes)
}

/// Sends with the authenticator's credentials; a `401`, or a `403` the authenticator can
/// answer (`insufficient_scope`), is sent again once it has new ones, at most
/// [`AUTH_RETRIES`] times. A failed authorization is the refused response, its reason in the
/// refusal's detail.
fn send_authorized(
    link: &Link,
    send: impl Fn(Option<&str>) -> Result<Response, ureq::Error>,
) -> Result<Response, AuthorizedError> {
    let Some(authenticator) = &link.authenticator else {
        return send(None).map_err(AuthorizedError::Transport);
    };
    let mut attempts = 0;
    loop {
        let authorization = authenticator.authorization(&link.url);
        let response = send(authorization.as_deref()).map_err(AuthorizedError::Transport)?;
        let status = response.status().as_u16();
        if !matches!(status, 401 | 403) || attempts == AUTH_RETRIES {
            return Ok(response);
        }
        attempts += 1;
        let header = response.headers().get("WWW-Authenticate").and_then(|v| v.to_str().ok()).map(str::to_owned);
        match authenticator.challenged(&link.url, authorization.as_deref(), status, header.as_deref()) {
            // New credentials: drain this answer (its connection is reused) and send again.
            Ok(true) => {
                let _ = std::io::copy(&mut response.into_body().into_reader(), &mut std::io::sink());
            }
            // Not an authorization matter, or nothing new to try: the refusal as it came.
            Ok(false) => return Ok(response),
            Err(e) => {
                return Err(AuthorizedError::Refused { status, www_authenticate: header, reason: e.to_string() });
            }
        }
    }
}

/// Why [`send_authorized`] has no response to hand on.
#[derive(Debug)]
enum AuthorizedError {
    /// The request could not be made.
    Transport(ureq::Error),
    /// The server refused it and new credentials could not be had.
    Refused { status: u16, www_authenticate: Option<String>, reason: String },
}

impl std::fmt::Display for AuthorizedError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Transport(e) => write!(f, "{e}"),
            Self::Refused { status, reason, .. } => write!(f, "HTTP {status}: {reason}"),
        }
    }
}

/// Reads an SSE body into `reading` to its end, feeding each event's data.
fn read_sse(link: &Link, body: &mut dyn Read, reading: &mut SseReading) {
    let mut buf = vec![0u8; 16 * 1024];
    while let Ok(n @ 1..) = body.read(&mut buf) {
        reading.feed(&buf[..n], |event| {
            traced::sse_fields(link.trace.as_ref(), event);
            if !event.data.is_empty() {
                link.state().learn_version(event.data.as_bytes());
                link.feed(event.data.as_bytes());
            }
        });
    }
}

/// Whether the session (if it is still there) waits for the response to `id`.
pub(super) fn still_pending(conn: &OnceLock<Weak<Conn<Endpoint>>>, id: &RequestId) -> bool {
    conn.get()
        .and_then(Weak::upgrade)
        .is_some_and(|conn| conn.with(|endpoint, _| endpoint.session().pending_method(id).is_some()))
}

/// The legacy GET stream: server requests and notifications, reconnecting (after the server's
/// `retry`, if it gave one) until closed.
fn get_stream(link: &Link, opened: std::sync::mpsc::Sender<()>) {
    let mut opened = Some(opened);
    let mut last_event_id: Option<String> = None;
    let mut retry = DEFAULT_GET_RETRY;
    while !link.closed.load(Ordering::Acquire) {
        let headers = link.state().stream_headers(last_event_id.as_deref());
        let called = link.call(link.request_as(link.agent.get(&link.url), link.authorization().as_deref(), headers));
        // The server has answered the GET (or refused it): the client may go on.
        if let Some(opened) = opened.take() {
            let _ = opened.send(());
        }
        match called {
            Ok(response) if response.status().as_u16() == 200 => {
                let mut reading = SseReading::new(None);
                read_sse(link, &mut response.into_body().into_reader(), &mut reading);
                if let Some(id) = reading.last_event_id() {
                    last_event_id = Some(id.to_owned());
                }
                retry = reading.retry().unwrap_or(retry);
            }
            Ok(response) => match get_refused(response.status().as_u16(), last_event_id.is_some()) {
                GetRefused::Retry => {}
                GetRefused::Fresh => last_event_id = None,
                GetRefused::Stop => return,
            },
            Err(_) => {}
        }
        std::thread::sleep(retry);
    }
}

/// Sends the client's frames: each request on a job of its own (its reply may take long),
/// notifications and responses in order, at once.
///
/// Producers try it first: a request's job goes, with no trip through the outbox's writer
/// thread, to the blocking caller that waits for it (`caller_runs`: the caller POSTs and
/// reads the reply itself), or else to a worker; a notification or a response (and whatever
/// follows it) waits for the writer, which POSTs it.
struct HttpSink {
    link: Arc<Link>,
    /// What a tried send left for the writer, in order.
    kept: Vec<(Message, Vec<u8>)>,
}

impl FrameSink for HttpSink {
    fn send(&mut self, frames: Vec<Outgoing>) -> std::io::Result<()> {
        let kept = std::mem::take(&mut self.kept);
        for (message, payload) in kept.into_iter().chain(frames.into_iter().filter_map(message_of)) {
            if let Some((message, payload)) = self.hand_off(message, payload) {
                post(&self.link, &message, &payload);
                self.start_get_stream();
            }
        }
        Ok(())
    }

    fn tries(&self) -> bool {
        true
    }

    fn batches(&self) -> bool {
        false
    }

    fn sends_apart(&self) -> bool {
        true
    }

    fn try_send(&mut self, frames: Vec<Outgoing>) -> std::io::Result<bool> {
        for (message, payload) in frames.into_iter().filter_map(message_of) {
            if !self.kept.is_empty() {
                self.kept.push((message, payload));
            } else if let Some(left) = self.hand_off(message, payload) {
                self.kept.push(left);
            }
        }
        Ok(self.kept.is_empty())
    }

    fn close(&mut self) {
        self.link.closed.store(true, Ordering::Release);
        // Every call has ended: the threads still reading replies (callers among them) go.
        self.link.inflight.cancel_all();
    }
}

/// A frame's message and payload (the client's sink gets nothing else).
fn message_of(frame: Outgoing) -> Option<(Message, Vec<u8>)> {
    let Outgoing::Frame(_, payload, carries) = frame else { return None };
    Some((Message::new(&carries, &payload), payload))
}

impl HttpSink {
    /// Hands a request to a worker, or a cancellation to its stateless request's stream
    /// (2026-07-28: closing it is the cancellation); gives back what must be sent in order.
    fn hand_off(&self, message: Message, payload: Vec<u8>) -> Option<(Message, Vec<u8>)> {
        if message.is_request() {
            let id = message.request_id().cloned();
            let link = Arc::clone(&self.link);
            let job: caller_runs::Job = Box::new(move || post(&link, &message, &payload));
            // The caller's own thread runs it if it waits for this request, and if fewer than
            // `MAX_POSTS_HERE` run so already; a worker otherwise (a batch among them), so that
            // a thousand calling threads do not open a thousand connections.
            let conn = self.link.conn.get().map(|conn| conn.as_ptr().addr());
            let job = match (conn, &id) {
                (Some(conn), Some(id)) if self.link.posts_here.fetch_add(1, Ordering::AcqRel) < MAX_POSTS_HERE => {
                    let counted = Arc::clone(&self.link);
                    let job: caller_runs::Job = Box::new(move || {
                        job();
                        counted.posts_here.fetch_sub(1, Ordering::AcqRel);
                    });
                    caller_runs::offer(conn, id, job)
                }
                (Some(_), Some(_)) => {
                    self.link.posts_here.fetch_sub(1, Ordering::AcqRel);
                    Some(job)
                }
                _ => Some(job),
            };
            if let Some(job) = job {
                self.link.pool.run(job);
            }
            None
        } else if message.cancels().and_then(|id| self.link.inflight.cancel(id)) == Some(Closed::Cancelled) {
            None
        } else {
            Some((message, payload))
        }
    }

    /// After `notifications/initialized` (legacy era), opens the GET stream once.
    fn start_get_stream(&self) {
        if !self.link.state().take_get_stream() {
            return;
        }
        let link = Arc::clone(&self.link);
        let (opened, waiting) = std::sync::mpsc::channel();
        let spawned =
            std::thread::Builder::new().name("talaria-http-get".into()).spawn(move || get_stream(&link, opened));
        // Wait (briefly) until the stream is open, so that what the server sends on it right
        // after the handshake (an answer it parks there, a server request) is not missed.
        if spawned.is_ok() {
            let _ = waiting.recv_timeout(GET_OPEN_WAIT);
        }
    }
}

/// Ends the session with DELETE.
struct HttpTeardown(Arc<Link>);

impl Teardown for HttpTeardown {
    fn session_id(&self) -> Option<String> {
        self.0.session_id()
    }

    fn shutdown(&mut self) {
        self.0.closed.store(true, Ordering::Release);
        let Some(headers) = self.0.state().delete_headers() else { return };
        let link = &self.0;
        // A server that never answers the DELETE cannot hold `close` up.
        let delete = link.agent.delete(&link.url).config().timeout_global(Some(DELETE_TIMEOUT)).build();
        let _ = link.call(link.request_as(delete, link.authorization().as_deref(), headers));
    }
}

impl Client {
    /// Connects to the Streamable HTTP endpoint at `url` (e.g. `http://127.0.0.1:8080/mcp`),
    /// sending `headers` (e.g. `Authorization`) with every request.
    ///
    /// # Errors
    ///
    /// [`ClientError::Connect`] if the handshake fails.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use talaria::client::{Client, ClientOptions};
    ///
    /// let client = Client::http("http://127.0.0.1:8080/mcp", &[], ClientOptions::new("me", "1"))?;
    /// client.list_all_tools()?;
    /// # Ok::<(), talaria::client::ClientError>(())
    /// ```
    pub fn http(url: &str, headers: &[(&str, &str)], options: ClientOptions) -> Result<Self, ClientError> {
        connect_http(url, headers, options).map_err(|(e, _)| e)
    }
}

/// [`Client::http`], telling on failure how the server first refused (for the probe): its
/// status, and whether the body was a modern MCP error.
pub(super) fn connect_http(
    url: &str,
    headers: &[(&str, &str)],
    options: ClientOptions,
) -> Result<Client, (ClientError, Option<(u16, bool)>)> {
    {
        let link = Arc::new(Link {
            inflight: Inflight::new(agent_config(1, &options)),
            agent: super::one_write::agent(agent_config(64, &options)),
            url: url.to_owned(),
            headers: headers.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect(),
            state: Mutex::new(ClientLink::new()),
            conn: OnceLock::new(),
            pool: Pool::new(64),
            closed: AtomicBool::new(false),
            posts_here: AtomicUsize::new(0),
            first_refusal: Mutex::new(None),
            trace: options.trace.clone(),
            authenticator: options.authenticator.clone(),
        });
        let registering = Arc::clone(&link);
        let probe = Arc::clone(&link);
        connect(
            options,
            Box::new(HttpSink { link: Arc::clone(&link), kept: Vec::new() }),
            Box::new(HttpTeardown(link)),
            move |conn| {
                let _ = registering.conn.set(Arc::downgrade(&conn));
                Ok(())
            },
        )
        .map_err(|e| {
            let refusal = probe.first_refusal.lock().unwrap_or_else(PoisonError::into_inner).clone();
            // A handshake the server refused with an HTTP status says so, WWW-Authenticate and all.
            let e = match (e, &refusal) {
                (ClientError::Connect(_), Some(r)) => r.clone().into_error(url),
                (e, _) => e,
            };
            (e, refusal.map(|r| (r.status, r.modern)))
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// An endless body, counting what was read of it.
    struct Endless(u64);

    impl Read for Endless {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            buf.fill(b' ');
            self.0 += buf.len() as u64;
            Ok(buf.len())
        }
    }

    #[test]
    fn a_body_past_the_limit_is_an_error_and_reading_stops_there() {
        let mut endless = Endless(0);
        let error = read_at_most(&mut endless, 1000).unwrap_err();
        assert!(error.to_string().contains("larger than 1000 bytes"), "{error}");
        assert!(endless.0 < 1_000_000, "read {} bytes of an endless body", endless.0);
        assert_eq!(read_at_most(&mut &b"{}"[..], 1000).unwrap(), b"{}");
        assert_eq!(read_at_most(&mut &[b'x'; 1000][..], 1000).unwrap().len(), 1000, "exactly the limit is fine");
    }

    #[test]
    fn draining_an_endless_body_stops() {
        let mut endless = Endless(0);
        drain(&mut endless);
        assert!(endless.0 >= MAX_DRAIN as u64 && endless.0 < 2 * MAX_DRAIN as u64, "{}", endless.0);
    }
}
