//! The Streamable HTTP client (ureq): each message its own POST, replies read as JSON or as
//! an SSE stream (decoded incrementally by the core), the session id and protocol version
//! carried on every request, and (legacy era) a GET stream for server messages.

use std::io::Read;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError, Weak};

use talaria_core::client::Endpoint;
use talaria_core::http::client::{
    self as plan, Answer, ClientLink, Outgoing as Message, ResponseHead, Resumption, SseReading, AUTH_RETRIES,
    DEFAULT_GET_RETRY, GET_OPEN_WAIT,
};
use talaria_core::http::headers::SESSION_ID;
use talaria_core::session::Route;

use crate::client::{connect, Authenticator, Client, ClientError, ClientOptions, Teardown, TraceFn};
use crate::conn::{Conn, FrameSink, Outgoing};
use crate::server::Pool;

use super::inflight::{agent_config, Inflight};
use super::traced::{self, Response};
use super::{MAX_DRAIN, MAX_REPLY};

/// How the server first refused a request with an HTTP error status.
#[derive(Debug, Clone)]
pub(super) struct FirstRefusal {
    /// The status.
    pub(super) status: u16,
    /// Whether the body was a modern MCP error (see [`plan::Refused::modern`]).
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

/// Every call `message` owed an answer fails with a transport error giving `why`: the
/// exchange failed, the server said nothing ([`LocalError::Transport`](talaria_core::jsonrpc::LocalError::Transport)).
pub(super) fn fail_calls(conn: &OnceLock<Weak<Conn<Endpoint>>>, message: &Message, why: &str) {
    if let Some(conn) = conn.get().and_then(Weak::upgrade) {
        conn.with(|endpoint, now| {
            for id in message.answers_due() {
                endpoint.session_mut().transport_failed(now, id, why);
            }
        });
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
    fn request_as<B>(
        &self,
        builder: ureq::RequestBuilder<B>,
        authorization: Option<&str>,
        headers: Vec<(&'static str, String)>,
    ) -> ureq::RequestBuilder<B> {
        let mut builder = builder;
        for (name, value) in &self.headers {
            builder = builder.header(name, value);
        }
        if let Some(authorization) = authorization {
            builder = builder.header("Authorization", authorization);
        }
        for (name, value) in headers {
            builder = builder.header(name, value);
        }
        builder
    }

    fn note_refusal(&self, refusal: FirstRefusal) {
        self.first_refusal.lock().unwrap_or_else(PoisonError::into_inner).get_or_insert(refusal);
    }
}

/// POSTs one message and feeds whatever comes back.
fn post(link: &Link, message: &Message, payload: &[u8]) {
    // A stateless request gets a connection of its own, closed if the request is cancelled.
    let running = message.request_id().filter(|_| message.is_stateless()).map(|id| link.inflight.start(id.clone()));
    let cancelled = || running.as_ref().is_some_and(super::inflight::Running::cancelled);
    let agent = running.as_ref().map_or(&link.agent, super::inflight::Running::agent);
    let send = |authorization: Option<&str>| {
        let headers = link.state().post_headers(message);
        let builder = link.request_as(agent.post(&link.url), authorization, headers);
        traced::send(link.trace.as_ref(), builder, payload)
    };
    let response = match send_authorized(link, send) {
        Ok(response) => response,
        Err(_) if cancelled() => return,
        Err(AuthorizedError::Refused { status, www_authenticate, reason }) => {
            let (refusal, why) = authorization_failed(&link.url, message, status, www_authenticate, reason);
            if let Some(refusal) = refusal {
                link.note_refusal(refusal);
            }
            return fail_calls(&link.conn, message, &why);
        }
        Err(e) => return fail_calls(&link.conn, message, &format!("HTTP transport: {e}")),
    };
    let status = response.status().as_u16();
    let header = |name: &str| response.headers().get(name).and_then(|v| v.to_str().ok()).map(str::to_owned);
    let (content_type, session_id, www_authenticate) =
        (header("Content-Type"), header(SESSION_ID), header("WWW-Authenticate"));
    let head = ResponseHead { status, content_type: content_type.as_deref(), session_id: session_id.as_deref() };
    let answer = link.state().answer(message, &head);
    let mut body = response.into_body().into_reader();
    match answer {
        Answer::Drain => drain(&mut body),
        Answer::SessionLost => {
            // The server forgot the session (expired, restarted): start a new one. Calls in
            // flight, this one included, fail with a closed-session error; later calls wait
            // for the new handshake.
            drain(&mut body);
            if let Some(conn) = link.conn.get().and_then(Weak::upgrade) {
                conn.with(|endpoint, now| {
                    endpoint.session_mut().session_lost(now, "the server forgot the session (HTTP 404)");
                });
            }
        }
        Answer::Stream => {
            let mut reading = SseReading::new(message.request_id().cloned());
            read_sse(link, &mut body, &mut reading, false);
            drop(body);
            if cancelled() {
                return;
            }
            if let Some(id) = message.request_id() {
                resume_until_answered(link, id, Resumption::after(&reading));
            }
        }
        Answer::Json | Answer::Refused => {
            let limit = if answer == Answer::Json { MAX_REPLY } else { MAX_DRAIN };
            let read = read_at_most(&mut body, limit);
            if cancelled() {
                return;
            }
            let bytes = match (read, answer) {
                (Ok(bytes), _) => bytes,
                (Err(e), Answer::Json) => return fail_calls(&link.conn, message, &format!("HTTP transport: {e}")),
                // A refusal's body is read for its JSON-RPC error only: a cut one still says 4xx.
                (Err(_), _) => Vec::new(),
            };
            if answer == Answer::Json {
                link.state().learn_version(&bytes);
                link.feed(&bytes);
                return;
            }
            // An error status: the body's JSON-RPC error if there is one, under each request's id.
            if !message.is_request() {
                return;
            }
            let refused = plan::refused(status, &bytes, &link.url);
            link.note_refusal(FirstRefusal {
                status,
                modern: refused.modern,
                www_authenticate,
                detail: refused.detail.clone(),
            });
            for reply in refused.replies(message) {
                link.feed(&reply);
            }
        }
    }
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

/// Reads an SSE body into `reading`, feeding each event's data, until it ends. With
/// `stop_at_answer`, stops reading at the awaited response (a resumed GET stream may go on);
/// otherwise reads to the end, so the connection can be reused.
fn read_sse(link: &Link, body: &mut dyn Read, reading: &mut SseReading, stop_at_answer: bool) {
    let mut buf = vec![0u8; 16 * 1024];
    while !(stop_at_answer && reading.answered()) {
        let n = match body.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        reading.feed(&buf[..n], |event| {
            traced::sse_fields(link.trace.as_ref(), event);
            if !event.data.is_empty() {
                link.state().learn_version(event.data.as_bytes());
                link.feed(event.data.as_bytes());
            }
        });
    }
}

/// A request's SSE stream ended before its response (the server freed the connection, or it
/// dropped): resume it with GET and `Last-Event-ID` as [`Resumption`] says, until the response
/// comes. A stream that cannot be resumed fails the call rather than leave it hanging.
fn resume_until_answered(link: &Link, id: &talaria_core::jsonrpc::RequestId, mut resumption: Resumption) {
    let still_waiting = || still_pending(&link.conn, id);
    while let Some((delay, last_id)) = resumption.next() {
        let last_id = last_id.to_owned();
        if !still_waiting() || link.closed.load(Ordering::Acquire) || link.session_id().is_none() {
            return;
        }
        std::thread::sleep(delay);
        let headers = link.state().stream_headers(Some(&last_id));
        let Ok(response) =
            link.call(link.request_as(link.agent.get(&link.url), link.authorization().as_deref(), headers))
        else {
            resumption.failed();
            continue;
        };
        if response.status().as_u16() != 200 {
            break;
        }
        let mut reading = SseReading::new(Some(id.clone()));
        read_sse(link, &mut response.into_body().into_reader(), &mut reading, true);
        resumption.resumed(&reading);
    }
    if resumption.answered() || link.closed.load(Ordering::Acquire) {
        return;
    }
    if still_waiting() {
        link.feed(&plan::unanswered(id));
    }
}

/// Whether the session (if it is still there) waits for the response to `id`.
pub(super) fn still_pending(conn: &OnceLock<Weak<Conn<Endpoint>>>, id: &talaria_core::jsonrpc::RequestId) -> bool {
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
                read_sse(link, &mut response.into_body().into_reader(), &mut reading, false);
                if let Some(id) = reading.last_event_id() {
                    last_event_id = Some(id.to_owned());
                }
                retry = reading.retry().unwrap_or(retry);
            }
            // No GET stream offered (405), or the session is gone: stop.
            Ok(_) => return,
            Err(_) => {}
        }
        std::thread::sleep(retry);
    }
}

/// Sends the client's frames: requests each on a worker (their replies may take long),
/// notifications and responses in order, at once.
///
/// Producers try it first: a request is handed to a worker on the caller's thread, with no
/// trip through the outbox's writer thread; a notification or a response (and whatever
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
            let link = Arc::clone(&self.link);
            self.link.pool.run(Box::new(move || post(&link, &message, &payload)));
            None
        } else if message.cancels().is_some_and(|id| self.link.inflight.cancel(id)) {
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
