//! The Streamable HTTP client (ureq): each message its own POST, replies read as JSON or as
//! an SSE stream (decoded incrementally by the core), the session id and protocol version
//! carried on every request, and (legacy era) a GET stream for server messages.

use std::io::Read;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError, Weak};
use std::time::Duration;

use talaria_core::client::Endpoint;
use talaria_core::codec::SseDecoder;
use talaria_core::http::headers::{mirror, PROTOCOL_VERSION, SESSION_ID};
use talaria_core::jsonrpc::{ErrorObject, RequestId};
use talaria_core::session::Route;

use crate::client::{connect, Authenticator, Client, ClientError, ClientOptions, Teardown, TraceFn};
use crate::conn::{Conn, FrameSink, Outgoing};
use crate::server::Pool;

use super::inflight::{agent_config, Inflight};
use super::traced::{self, Response};

/// How the server first refused a request with an HTTP error status.
#[derive(Debug, Clone)]
struct Refusal {
    /// The status.
    status: u16,
    /// Whether the body was a JSON-RPC error with a code MCP reserves (a modern server
    /// refusing, not a legacy one that does not know the method).
    modern: bool,
    /// The `WWW-Authenticate` header.
    www_authenticate: Option<String>,
    /// The body's JSON-RPC error message, if it had one.
    detail: Option<String>,
}

/// What every request of one client shares.
struct Link {
    agent: ureq::Agent,
    url: String,
    headers: Vec<(String, String)>,
    session_id: Mutex<Option<String>>,
    version: Mutex<Option<String>>,
    conn: OnceLock<Weak<Conn<Endpoint>>>,
    pool: Pool,
    /// Stateless-era requests in flight, each cancellable by closing its stream.
    inflight: Inflight,
    get_started: AtomicBool,
    closed: AtomicBool,
    /// The first refusal, for the backwards-compatibility probe and the connect error.
    first_refusal: Mutex<Option<Refusal>>,
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

    fn session_id(&self) -> Option<String> {
        self.session_id.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// Sends a request without a body, tracing both heads.
    fn call(&self, builder: ureq::RequestBuilder<ureq::typestate::WithoutBody>) -> Result<Response, ureq::Error> {
        traced::call(self.trace.as_ref(), builder)
    }

    fn request<B>(&self, builder: ureq::RequestBuilder<B>) -> ureq::RequestBuilder<B> {
        self.request_as(builder, self.authorization().as_deref())
    }

    /// The authenticator's `Authorization` header for this server, if any.
    fn authorization(&self) -> Option<String> {
        self.authenticator.as_ref().and_then(|a| a.authorization(&self.url))
    }

    /// [`request`](Self::request) with the given `Authorization` header.
    fn request_as<B>(&self, builder: ureq::RequestBuilder<B>, authorization: Option<&str>) -> ureq::RequestBuilder<B> {
        let mut builder = builder;
        for (name, value) in &self.headers {
            builder = builder.header(name, value);
        }
        if let Some(authorization) = authorization {
            builder = builder.header("Authorization", authorization);
        }
        if let Some(id) = self.session_id() {
            builder = builder.header(SESSION_ID, id);
        }
        builder
    }
}

/// The parts of a message the client needs to route its POST.
#[derive(serde::Deserialize)]
struct Shape<'a> {
    #[serde(borrow, default)]
    method: Option<&'a str>,
    #[serde(default)]
    id: Option<RequestId>,
    #[serde(default)]
    result: Option<serde::de::IgnoredAny>,
}

#[derive(serde::Deserialize)]
struct Negotiated {
    result: Option<NegotiatedResult>,
}

#[derive(serde::Deserialize)]
struct NegotiatedResult {
    #[serde(rename = "protocolVersion")]
    protocol_version: Option<String>,
}

/// A JSON-RPC error reply for request `id`, for failures of the HTTP exchange itself.
fn error_reply(id: &RequestId, error: &ErrorObject) -> Vec<u8> {
    talaria_core::http::exchange::error_body(Some(id), error)
}

/// POSTs one message and feeds whatever comes back.
fn post(link: &Link, payload: &[u8]) {
    let shape = serde_json::from_slice::<Shape<'_>>(payload).ok();
    let request_id = shape.as_ref().filter(|s| s.method.is_some()).and_then(|s| s.id.clone());
    // The requests a reply must answer: this one, or those of a batch (2025-03-26).
    let answers_due = request_id.clone().map_or_else(|| batch_requests(payload), |id| vec![id]);
    let mirrored = mirror(payload);
    let stateless = mirrored.iter().any(|(name, _)| *name == PROTOCOL_VERSION);
    // A stateless request gets a connection of its own, closed if the request is cancelled.
    let running = request_id.clone().filter(|_| stateless).map(|id| link.inflight.start(id));
    let cancelled = || running.as_ref().is_some_and(super::inflight::Running::cancelled);
    let agent = running.as_ref().map_or(&link.agent, super::inflight::Running::agent);
    let send = |authorization: Option<&str>| {
        let mut builder = link
            .request_as(agent.post(&link.url), authorization)
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream");
        if !stateless {
            if let Some(version) = link.version.lock().unwrap_or_else(PoisonError::into_inner).clone() {
                builder = builder.header(PROTOCOL_VERSION, version);
            }
        }
        if stateless || request_id.is_some() {
            for (name, value) in &mirrored {
                builder = builder.header(*name, value);
            }
        }
        traced::send(link.trace.as_ref(), builder, payload)
    };
    let response = match send_authorized(link, send) {
        Ok(response) => response,
        Err(_) if cancelled() => return,
        Err(AuthorizedError::Refused { status, www_authenticate, reason }) => {
            let error = ErrorObject::internal(format!("HTTP {status} from {}: {reason}", link.url));
            if !answers_due.is_empty() {
                link.first_refusal.lock().unwrap_or_else(PoisonError::into_inner).get_or_insert(Refusal {
                    status,
                    modern: false,
                    www_authenticate,
                    detail: Some(reason),
                });
            }
            for id in &answers_due {
                link.feed(&error_reply(id, &error));
            }
            return;
        }
        Err(e) => {
            for id in &answers_due {
                link.feed(&error_reply(id, &ErrorObject::internal(format!("HTTP transport: {e}"))));
            }
            return;
        }
    };
    let status = response.status().as_u16();
    if status == 404 && link.session_id().is_some() && shape.as_ref().is_none_or(|s| s.method != Some("initialize")) {
        // The server forgot the session (expired, restarted): start a new one. Calls in
        // flight, this one included, fail with a closed-session error; later calls wait for
        // the new handshake.
        *link.session_id.lock().unwrap_or_else(PoisonError::into_inner) = None;
        link.get_started.store(false, Ordering::Release);
        let _ = std::io::copy(&mut response.into_body().into_reader(), &mut std::io::sink());
        if let Some(conn) = link.conn.get().and_then(Weak::upgrade) {
            conn.with(|endpoint, now| {
                endpoint.session_mut().session_lost(now, "the server forgot the session (HTTP 404)");
            });
        }
        return;
    }
    if let Some(id) = response.headers().get(SESSION_ID).and_then(|v| v.to_str().ok()) {
        *link.session_id.lock().unwrap_or_else(PoisonError::into_inner) = Some(id.to_owned());
    }
    let www_authenticate = response.headers().get("WWW-Authenticate").and_then(|v| v.to_str().ok()).map(str::to_owned);
    let is_sse = response
        .headers()
        .get("Content-Type")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| t.trim_start().starts_with("text/event-stream"));
    let mut body = response.into_body().into_reader();
    if status == 202 || (200..300).contains(&status) && answers_due.is_empty() && !is_sse {
        let _ = std::io::copy(&mut body, &mut std::io::sink());
        return;
    }
    if (200..300).contains(&status) && is_sse {
        let outcome = read_sse(link, &mut body, request_id.as_ref(), false);
        drop(body);
        if cancelled() {
            return;
        }
        if let Some(id) = &request_id {
            resume_until_answered(link, id, outcome);
        }
        return;
    }
    let mut bytes = Vec::new();
    let _ = body.read_to_end(&mut bytes);
    if cancelled() {
        return;
    }
    if (200..300).contains(&status) {
        learn_version(link, &bytes);
        link.feed(&bytes);
        return;
    }
    // An error status: the body's JSON-RPC error if there is one, under each request's id.
    #[derive(serde::Deserialize)]
    struct ErrorBody {
        error: ErrorObject,
    }
    let decoded = serde_json::from_slice::<ErrorBody>(&bytes).ok().map(|body| body.error);
    let detail = decoded.as_ref().map(|e| e.message.clone());
    let error = decoded.unwrap_or_else(|| ErrorObject::internal(format!("HTTP {status} from {}", link.url)));
    if answers_due.is_empty() {
        return;
    }
    let modern = error.code.is_mcp_reserved();
    link.first_refusal.lock().unwrap_or_else(PoisonError::into_inner).get_or_insert(Refusal {
        status,
        modern,
        www_authenticate,
        detail,
    });
    for id in &answers_due {
        link.feed(&error_reply(id, &error));
    }
}

/// How many times a refused request is sent again with renewed credentials.
const AUTH_RETRIES: usize = 2;

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

/// The request a `notifications/cancelled` payload cancels.
fn cancelled_request(payload: &[u8]) -> Option<RequestId> {
    #[derive(serde::Deserialize)]
    struct Cancelled {
        method: String,
        params: CancelledParams,
    }
    #[derive(serde::Deserialize)]
    struct CancelledParams {
        #[serde(rename = "requestId")]
        request_id: RequestId,
    }
    let cancelled = serde_json::from_slice::<Cancelled>(payload).ok()?;
    (cancelled.method == "notifications/cancelled").then_some(cancelled.params.request_id)
}

/// The ids of the requests in a batch payload (none for anything else).
fn batch_requests(payload: &[u8]) -> Vec<RequestId> {
    if payload.first() != Some(&b'[') {
        return Vec::new();
    }
    serde_json::from_slice::<Vec<Shape<'_>>>(payload)
        .map(|items| items.into_iter().filter(|s| s.method.is_some()).filter_map(|s| s.id).collect())
        .unwrap_or_default()
}

/// Remembers the negotiated revision from an `initialize` result, and opens the GET stream.
fn learn_version(link: &Link, bytes: &[u8]) {
    let version =
        serde_json::from_slice::<Negotiated>(bytes).ok().and_then(|n| n.result).and_then(|r| r.protocol_version);
    if let Some(version) = version {
        *link.version.lock().unwrap_or_else(PoisonError::into_inner) = Some(version);
    }
}

/// How an SSE body ended: where to resume it, how long the server asked us to wait first, and
/// whether the awaited response came.
#[derive(Debug, Default)]
struct SseOutcome {
    last_id: Option<String>,
    retry: Option<Duration>,
    answered: bool,
}

/// Reads an SSE body, feeding each event's data, until it ends, noting whether the response
/// to `awaited` came. With `stop_at_answer`, stops reading at that response (a resumed GET
/// stream may go on); otherwise reads to the end, so the connection can be reused.
fn read_sse(link: &Link, body: &mut dyn Read, awaited: Option<&RequestId>, stop_at_answer: bool) -> SseOutcome {
    let mut decoder = SseDecoder::new();
    let mut buf = vec![0u8; 16 * 1024];
    let mut outcome = SseOutcome::default();
    while !(stop_at_answer && outcome.answered) {
        let n = match body.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        decoder.decode(&buf[..n], |event| {
            let Ok(event) = event else { return };
            traced::sse_fields(link.trace.as_ref(), &event);
            if event.id.is_some() {
                outcome.last_id.clone_from(&event.id);
            }
            if let Some(ms) = event.retry {
                outcome.retry = Some(Duration::from_millis(ms));
            }
            if event.data.is_empty() {
                return;
            }
            learn_version(link, event.data.as_bytes());
            if awaited.is_some() {
                let shape = serde_json::from_str::<Shape<'_>>(&event.data).ok();
                outcome.answered |= shape.is_some_and(|s| s.method.is_none() && s.id.as_ref() == awaited);
            }
            link.feed(event.data.as_bytes());
        });
    }
    outcome
}

/// How long the handshake waits for the GET stream to open.
const GET_OPEN_WAIT: Duration = Duration::from_secs(2);

/// How long to wait before resuming a stream whose server gave no `retry`.
const DEFAULT_RETRY: Duration = Duration::from_millis(1000);

/// The most resumptions in a row that bring nothing new before the call is given up.
const MAX_FRUITLESS_RESUMES: u32 = 3;

/// A request's SSE stream ended before its response (the server freed the connection, or it
/// dropped): resume it with GET and `Last-Event-ID` after the server's `retry` delay, until
/// the response comes. A stream that cannot be resumed fails the call rather than leave it
/// hanging.
fn resume_until_answered(link: &Link, id: &RequestId, first: SseOutcome) {
    let mut outcome = first;
    let mut fruitless = 0;
    let still_waiting = || {
        link.conn
            .get()
            .and_then(Weak::upgrade)
            .is_some_and(|conn| conn.with(|endpoint, _| endpoint.session().pending_method(id).is_some()))
    };
    while !outcome.answered && fruitless < MAX_FRUITLESS_RESUMES {
        let Some(last_id) = outcome.last_id.clone() else { break };
        if !still_waiting() || link.closed.load(Ordering::Acquire) || link.session_id().is_none() {
            return;
        }
        std::thread::sleep(outcome.retry.unwrap_or(DEFAULT_RETRY));
        let mut builder = link
            .request(link.agent.get(&link.url))
            .header("Accept", "text/event-stream")
            .header("Last-Event-ID", &last_id);
        if let Some(version) = link.version.lock().unwrap_or_else(PoisonError::into_inner).clone() {
            builder = builder.header(PROTOCOL_VERSION, version);
        }
        let Ok(response) = link.call(builder) else {
            fruitless += 1;
            continue;
        };
        if response.status().as_u16() != 200 {
            break;
        }
        let next = read_sse(link, &mut response.into_body().into_reader(), Some(id), true);
        fruitless = if next.last_id.is_some() && next.last_id != outcome.last_id { 0 } else { fruitless + 1 };
        outcome = SseOutcome {
            last_id: next.last_id.or(outcome.last_id),
            retry: next.retry.or(outcome.retry),
            answered: next.answered,
        };
    }
    if outcome.answered || link.closed.load(Ordering::Acquire) {
        return;
    }
    if still_waiting() {
        let error = ErrorObject::internal("the server ended the response stream without answering");
        link.feed(&error_reply(id, &error));
    }
}

/// The legacy GET stream: server requests and notifications, reconnecting (after the server's
/// `retry`, if it gave one) until closed.
fn get_stream(link: &Link, opened: std::sync::mpsc::Sender<()>) {
    let mut opened = Some(opened);
    let mut last_event_id: Option<String> = None;
    let mut retry = Duration::from_millis(250);
    while !link.closed.load(Ordering::Acquire) {
        let mut builder = link.request(link.agent.get(&link.url)).header("Accept", "text/event-stream");
        if let Some(version) = link.version.lock().unwrap_or_else(PoisonError::into_inner).clone() {
            builder = builder.header(PROTOCOL_VERSION, version);
        }
        if let Some(id) = &last_event_id {
            builder = builder.header("Last-Event-ID", id);
        }
        let called = link.call(builder);
        // The server has answered the GET (or refused it): the client may go on.
        if let Some(opened) = opened.take() {
            let _ = opened.send(());
        }
        match called {
            Ok(response) if response.status().as_u16() == 200 => {
                let mut body = response.into_body().into_reader();
                let outcome = read_sse(link, &mut body, None, false);
                if outcome.last_id.is_some() {
                    last_event_id = outcome.last_id;
                }
                if let Some(delay) = outcome.retry {
                    retry = delay;
                }
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
struct HttpSink(Arc<Link>);

impl FrameSink for HttpSink {
    fn send(&mut self, frames: Vec<Outgoing>) -> std::io::Result<()> {
        for frame in frames {
            let Outgoing::Frame(_, payload) = frame else { continue };
            let is_request = serde_json::from_slice::<Shape<'_>>(&payload)
                .is_ok_and(|s| s.method.is_some() && s.id.is_some() && s.result.is_none())
                || !batch_requests(&payload).is_empty();
            if is_request {
                let link = Arc::clone(&self.0);
                self.0.pool.run(Box::new(move || post(&link, &payload)));
            } else if cancelled_request(&payload).is_some_and(|id| self.0.inflight.cancel(&id)) {
                // 2026-07-28: the request's stream is closed; that is the cancellation.
            } else {
                post(&self.0, &payload);
                self.start_get_stream();
            }
        }
        Ok(())
    }

    fn close(&mut self) {
        self.0.closed.store(true, Ordering::Release);
    }
}

impl HttpSink {
    /// After `notifications/initialized` (legacy era), opens the GET stream once.
    fn start_get_stream(&self) {
        if self.0.session_id().is_none() || self.0.get_started.swap(true, Ordering::AcqRel) {
            return;
        }
        let link = Arc::clone(&self.0);
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
        if self.0.session_id().is_some() {
            let _ = self.0.call(self.0.request(self.0.agent.delete(&self.0.url)));
        }
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
            inflight: Inflight::new(),
            agent: ureq::Agent::new_with_config(agent_config(64)),
            url: url.to_owned(),
            headers: headers.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect(),
            session_id: Mutex::new(None),
            version: Mutex::new(None),
            conn: OnceLock::new(),
            pool: Pool::new(64),
            get_started: AtomicBool::new(false),
            closed: AtomicBool::new(false),
            first_refusal: Mutex::new(None),
            trace: options.trace.clone(),
            authenticator: options.authenticator.clone(),
        });
        let registering = Arc::clone(&link);
        let probe = Arc::clone(&link);
        connect(options, Box::new(HttpSink(Arc::clone(&link))), Box::new(HttpTeardown(link)), move |conn| {
            let _ = registering.conn.set(Arc::downgrade(&conn));
            Ok(())
        })
        .map_err(|e| {
            let refusal = probe.first_refusal.lock().unwrap_or_else(PoisonError::into_inner).clone();
            // A handshake the server refused with an HTTP status says so, WWW-Authenticate and all.
            let e = match (e, &refusal) {
                (ClientError::Connect(_), Some(r)) => ClientError::HttpStatus {
                    url: url.to_owned(),
                    status: r.status,
                    www_authenticate: r.www_authenticate.clone(),
                    detail: r.detail.clone(),
                },
                (e, _) => e,
            };
            (e, refusal.map(|r| (r.status, r.modern)))
        })
    }
}
