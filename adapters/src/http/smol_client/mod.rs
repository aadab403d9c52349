//! The smol HTTP clients: Streamable HTTP ([`http`]), the legacy HTTP+SSE transport ([`sse`])
//! and the backwards-compatibility probe ([`http_or_sse`]), on async-io sockets with no thread
//! per request. Every protocol decision is the core's ([`talaria_core::http::client`]); this
//! module moves bytes: each request sent by a task of its own, notifications and responses
//! in order, SSE replies decoded as they arrive, the legacy era's GET stream by a task.

mod legacy;
mod wire;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError, Weak};

use smol::channel::{Receiver, Sender};
use talaria_core::client::Endpoint;
use talaria_core::http::client::{
    get_refused, ClientLink, GetRefused, Outgoing as Message, ResponseHead, SseReading, AUTH_RETRIES,
    DEFAULT_GET_RETRY, GET_OPEN_WAIT,
};
use talaria_core::http::headers::SESSION_ID;
use talaria_core::http::post::{BodyLimits, PostExchange, PostStep};
use talaria_core::jsonrpc::RequestId;
use talaria_core::session::{Carries, Route};

pub use legacy::{http_or_sse, probe_http, sse};

use super::client::{authorization_failed, settle, still_pending, FirstRefusal};
use super::{MAX_DRAIN, MAX_REPLY};
use crate::client::{
    start_connecting, AsyncClient, Authenticator, ClientError, ClientOptions, Teardown, TraceEvent, TraceFn,
};
use crate::conn::{Conn, FrameSink, Outgoing};
use wire::{Agent, Body, Response};

/// How long the session's DELETE may take before it is given up.
const DELETE_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

/// What every request of one client shares.
struct Link {
    agent: Arc<Agent>,
    url: String,
    /// The path and query requests go to.
    target: String,
    headers: Vec<(String, String)>,
    /// The session id, the negotiated revision, whether the GET stream is open.
    state: Mutex<ClientLink>,
    conn: OnceLock<Weak<Conn<Endpoint>>>,
    /// Stateless-era requests in flight: dropping one's sender cancels it (its connection is
    /// closed, the revision's only cancellation over HTTP).
    running: Mutex<HashMap<RequestId, Sender<()>>>,
    closed: AtomicBool,
    /// The first refusal, for the backwards-compatibility probe and the connect error.
    first_refusal: Mutex<Option<FirstRefusal>>,
    trace: Option<TraceFn>,
    authenticator: Option<Arc<dyn Authenticator>>,
    /// The legacy era's GET stream, stopped when the client closes.
    get_task: Mutex<Option<smol::Task<()>>>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Link {
    fn feed(&self, frame: &[u8]) {
        if let Some(conn) = self.conn.get().and_then(Weak::upgrade) {
            conn.with(|endpoint, now| endpoint.handle_frame(now, Route::Connection, frame));
        }
    }

    fn state(&self) -> MutexGuard<'_, ClientLink> {
        lock(&self.state)
    }

    /// The authenticator's `Authorization` header (asked off the executor: it may refresh).
    async fn authorization(&self) -> Option<String> {
        let authenticator = Arc::clone(self.authenticator.as_ref()?);
        let url = self.url.clone();
        smol::unblock(move || authenticator.authorization(&url)).await
    }

    /// Sends one request with the application's headers, `authorization` and the protocol's
    /// `headers`, tracing both heads.
    async fn request<N: AsRef<str>>(
        &self,
        method: &str,
        headers: Vec<(N, String)>,
        authorization: Option<&str>,
        body: &[u8],
    ) -> std::io::Result<Response> {
        let mut all = self.headers.clone();
        if let Some(authorization) = authorization {
            all.push(("Authorization".to_owned(), authorization.to_owned()));
        }
        all.extend(headers.into_iter().map(|(name, value)| (name.as_ref().to_owned(), value)));
        if let Some(trace) = &self.trace {
            trace(&TraceEvent::HttpRequest { method, url: &self.url, headers: &all });
        }
        let response = self.agent.send(method, &self.target, &all, body).await?;
        if let Some(trace) = &self.trace {
            trace(&TraceEvent::HttpResponse { status: response.status, headers: &response.headers });
        }
        Ok(response)
    }

    /// [`request`](Self::request) with the authenticator's credentials, renewed and sent
    /// again on a `401` or a `403` it can answer, at most [`AUTH_RETRIES`] times.
    async fn request_authorized<N: AsRef<str>>(
        &self,
        method: &str,
        headers: impl Fn() -> Vec<(N, String)>,
        body: &[u8],
    ) -> Result<Response, AuthorizedError> {
        let mut attempts = 0;
        loop {
            let authorization = self.authorization().await;
            let mut response = self
                .request(method, headers(), authorization.as_deref(), body)
                .await
                .map_err(AuthorizedError::Transport)?;
            let Some(authenticator) = self.authenticator.clone() else { return Ok(response) };
            if !matches!(response.status, 401 | 403) || attempts == AUTH_RETRIES {
                return Ok(response);
            }
            attempts += 1;
            let status = response.status;
            let challenge = response.header("WWW-Authenticate").map(str::to_owned);
            let (url, sent, header) = (self.url.clone(), authorization.clone(), challenge.clone());
            let renewed =
                smol::unblock(move || authenticator.challenged(&url, sent.as_deref(), status, header.as_deref())).await;
            match renewed {
                Ok(true) => response.body.drain(MAX_DRAIN).await,
                Ok(false) => return Ok(response),
                Err(e) => {
                    return Err(AuthorizedError::Refused { status, www_authenticate: challenge, reason: e.to_string() })
                }
            }
        }
    }

    fn note_refusal(&self, refusal: FirstRefusal) {
        lock(&self.first_refusal).get_or_insert(refusal);
    }

    fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }
}

/// Why a request has no response to hand on.
#[derive(Debug)]
enum AuthorizedError {
    /// The request could not be made.
    Transport(std::io::Error),
    /// The server refused it and new credentials could not be had.
    Refused { status: u16, www_authenticate: Option<String>, reason: String },
}

/// What a POST's answer may hold in memory: a JSON reply, an error answer's body.
const LIMITS: BodyLimits = BodyLimits { reply: MAX_REPLY, refusal: MAX_DRAIN };

/// POSTs one message and carries out the core's [`PostExchange`]: reads the answer as it
/// says, feeds the session, resumes a cut SSE reply. (A stateless request is cancelled by
/// dropping this future, which closes its connection.)
async fn post(link: &Link, message: &Message, payload: &[u8]) {
    let mut exchange = PostExchange::new(message, &link.url, LIMITS);
    let (mut body, mut www_authenticate) = (None, None);
    match link.request_authorized("POST", || link.state().post_headers(message), payload).await {
        Ok(response) => {
            www_authenticate = response.header("WWW-Authenticate").map(str::to_owned);
            body = Some(answered(link, &mut exchange, response));
        }
        Err(AuthorizedError::Refused { status, www_authenticate, reason }) => {
            let (refusal, why) = authorization_failed(&link.url, message, status, www_authenticate, reason);
            if let Some(refusal) = refusal {
                link.note_refusal(refusal);
            }
            exchange.failed(&link.state(), why);
        }
        Err(AuthorizedError::Transport(e)) => exchange.failed(&link.state(), format!("HTTP transport: {e}")),
    }
    // Whether the request's call is settled otherwise: nothing to resume or give up.
    let moot = || link.is_closed() || !message.request_id().is_some_and(|id| still_pending(&link.conn, id));
    let mut buf = Vec::new();
    while let Some(step) = exchange.poll_step() {
        match step {
            // (Only a head brings steps that read a body.)
            PostStep::Drain => {
                let Some(body) = &mut body else { return };
                body.drain(MAX_DRAIN).await;
                exchange.body_end(&link.state());
            }
            PostStep::ReadWhole { limit } => {
                let Some(body) = &mut body else { return };
                match body.read_all(limit).await {
                    Ok(bytes) => exchange.body(&mut link.state(), bytes),
                    Err(e) => exchange.failed(&link.state(), format!("HTTP transport: {e}")),
                }
            }
            PostStep::ReadSse => {
                buf.clear();
                let Some(body) = &mut body else { return };
                if matches!(body.read(&mut buf).await, Ok(true)) {
                    exchange.sse(&mut link.state(), &buf);
                } else {
                    exchange.body_end(&link.state());
                }
            }
            PostStep::Resume { after, last_event_id } => {
                body = None;
                if moot() {
                    return;
                }
                smol::Timer::after(after).await;
                let authorization = link.authorization().await;
                let headers = link.state().stream_headers(Some(&last_event_id));
                match link.request("GET", headers, authorization.as_deref(), b"").await {
                    Ok(response) => body = Some(answered(link, &mut exchange, response)),
                    Err(e) => exchange.failed(&link.state(), e.to_string()),
                }
            }
            other => settle(other, &link.conn, link.trace.as_ref(), &link.first_refusal, &mut www_authenticate, moot),
        }
    }
}

/// Hands `response`'s head to `exchange`; gives back its body, to read as the exchange says.
fn answered(link: &Link, exchange: &mut PostExchange<'_>, response: Response) -> Body {
    let head = ResponseHead {
        status: response.status,
        content_type: response.header("Content-Type"),
        session_id: response.header(SESSION_ID),
    };
    exchange.head(&mut link.state(), &head);
    response.body
}

/// Reads an SSE body into `reading` to its end, feeding each event's data as it arrives.
async fn read_sse(link: &Link, body: &mut Body, reading: &mut SseReading) {
    let mut buf = Vec::new();
    while matches!(body.read(&mut buf).await, Ok(true)) {
        reading.feed(&buf, |event| {
            super::traced::sse_fields(link.trace.as_ref(), event);
            if !event.data.is_empty() {
                link.state().learn_version(event.data.as_bytes());
                link.feed(event.data.as_bytes());
            }
        });
        buf.clear();
    }
}

/// The legacy era's GET stream: server requests and notifications, reopened (after the
/// server's `retry`) from the last event until the client closes.
async fn get_stream(link: Arc<Link>, opened: Sender<()>) {
    let mut opened = Some(opened);
    let mut last_event_id: Option<String> = None;
    let mut retry = DEFAULT_GET_RETRY;
    while !link.is_closed() {
        let authorization = link.authorization().await;
        let headers = link.state().stream_headers(last_event_id.as_deref());
        let called = link.request("GET", headers, authorization.as_deref(), b"").await;
        // The server has answered the GET (or refused it): the client may go on.
        drop(opened.take());
        match called {
            Ok(mut response) if response.status == 200 => {
                let mut reading = SseReading::new(None);
                read_sse(&link, &mut response.body, &mut reading).await;
                if let Some(id) = reading.last_event_id() {
                    last_event_id = Some(id.to_owned());
                }
                retry = reading.retry().unwrap_or(retry);
            }
            Ok(response) => match get_refused(response.status, last_event_id.is_some()) {
                GetRefused::Retry => {}
                GetRefused::Fresh => last_event_id = None,
                GetRefused::Stop => return,
            },
            Err(_) => {}
        }
        smol::Timer::after(retry).await;
    }
}

/// Sends the client's messages in order: each request by a task of its own (its reply may
/// take long), notifications and responses one after the other, each sent before the next
/// message goes.
async fn dispatch(link: Arc<Link>, outgoing: Receiver<Frame>) {
    while let Ok((payload, carries)) = outgoing.recv().await {
        let message = Message::new(&carries, &payload);
        if message.is_request() {
            let cancelled = message.request_id().filter(|_| message.is_stateless()).map(|id| {
                let (tx, rx) = smol::channel::bounded::<()>(1);
                lock(&link.running).insert(id.clone(), tx);
                (id.clone(), rx)
            });
            let link = Arc::clone(&link);
            smol::spawn(async move {
                let Some((id, cancelled)) = cancelled else { return post(&link, &message, &payload).await };
                // Dropping the POST's future closes its connection: that is the cancellation.
                smol::future::or(post(&link, &message, &payload), async {
                    let _ = cancelled.recv().await;
                })
                .await;
                lock(&link.running).remove(&id);
            })
            .detach();
        } else if message.cancels().is_some_and(|id| lock(&link.running).remove(id).is_some()) {
            // 2026-07-28: the request's stream is closed; that is the cancellation.
        } else {
            post(&link, &message, &payload).await;
            start_get_stream(&link).await;
        }
    }
}

/// After `notifications/initialized` (legacy era), opens the GET stream once, and waits
/// (briefly) until it is open, so that what the server sends on it right after the
/// handshake is not missed.
async fn start_get_stream(link: &Arc<Link>) {
    if link.is_closed() || !link.state().take_get_stream() {
        return;
    }
    let (opened, waiting) = smol::channel::bounded(1);
    *lock(&link.get_task) = Some(smol::spawn(get_stream(Arc::clone(link), opened)));
    smol::future::or(
        async {
            let _ = waiting.recv().await;
        },
        async {
            smol::Timer::after(GET_OPEN_WAIT).await;
        },
    )
    .await;
}

/// One frame from the session: the JSON text and what it carries.
pub(super) type Frame = (Vec<u8>, Carries);

/// Hands the session's frames to the dispatching task.
struct ChannelSink(Sender<Frame>);

impl FrameSink for ChannelSink {
    fn send(&mut self, frames: Vec<Outgoing>) -> std::io::Result<()> {
        for frame in frames {
            if let Outgoing::Frame(_, payload, carries) = frame {
                self.0
                    .try_send((payload, carries))
                    .map_err(|_| std::io::Error::from(std::io::ErrorKind::BrokenPipe))?;
            }
        }
        Ok(())
    }

    fn close(&mut self) {
        // What is queued still goes; the dispatcher ends after it.
        self.0.close();
    }

    fn never_blocks(&self) -> bool {
        true
    }
}

/// Stops the GET stream and ends the session with DELETE, sent by a task: closing never blocks
/// the executor (which may be the one serving the answer).
struct HttpTeardown(Arc<Link>);

impl Teardown for HttpTeardown {
    fn session_id(&self) -> Option<String> {
        self.0.state().session_id().map(str::to_owned)
    }

    fn shutdown(&mut self) {
        let link = Arc::clone(&self.0);
        link.closed.store(true, Ordering::Release);
        drop(lock(&link.get_task).take());
        lock(&link.running).clear();
        let Some(headers) = link.state().delete_headers() else { return };
        let delete = async move {
            let authorization = link.authorization().await;
            if let Ok(mut response) = link.request("DELETE", headers, authorization.as_deref(), b"").await {
                response.body.drain(MAX_DRAIN).await;
            }
        };
        smol::spawn(smol::future::or(delete, async {
            smol::Timer::after(DELETE_WAIT).await;
        }))
        .detach();
    }
}

/// Connects to the Streamable HTTP endpoint at `url` (e.g. `http://127.0.0.1:8080/mcp`),
/// sending `headers` (e.g. `Authorization`) with every request, and awaits the handshake.
/// The async counterpart of [`Client::http`](crate::client::Client::http), with no thread per
/// request: every POST and stream is a task on smol's executor.
///
/// # Errors
///
/// [`ClientError::Connect`] for a URL this client cannot reach (only `http://`) or a failed
/// handshake; [`ClientError::HttpStatus`] if the server refused it.
///
/// # Examples
///
/// ```no_run
/// use talaria::client::ClientOptions;
///
/// smol::block_on(async {
///     let client = talaria::smol::http("http://127.0.0.1:8080/mcp", &[], ClientOptions::new("me", "1")).await?;
///     let tools = client.list_all_tools().await?;
///     # let _ = tools;
///     Ok::<(), talaria::client::ClientError>(())
/// })?;
/// # Ok::<(), talaria::client::ClientError>(())
/// ```
pub async fn http(url: &str, headers: &[(&str, &str)], options: ClientOptions) -> Result<AsyncClient, ClientError> {
    connect_http(url, headers, options).await.map_err(|(e, _)| e)
}

/// [`http`], telling on failure how the server first refused (for the probe): its status,
/// and whether the body was a modern MCP error.
async fn connect_http(
    url: &str,
    headers: &[(&str, &str)],
    options: ClientOptions,
) -> Result<AsyncClient, (ClientError, Option<(u16, bool)>)> {
    let bad = |why: String| (ClientError::Connect(format!("{url}: {why}")), None);
    let (origin, target) = wire::split_url(url).map_err(bad)?;
    let agent = Arc::new(Agent::new(&origin, 64, &options).map_err(bad)?);
    let link = Arc::new(Link {
        agent,
        url: url.to_owned(),
        target,
        headers: headers.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect(),
        state: Mutex::new(ClientLink::new()),
        conn: OnceLock::new(),
        running: Mutex::new(HashMap::new()),
        closed: AtomicBool::new(false),
        first_refusal: Mutex::new(None),
        trace: options.trace.clone(),
        authenticator: options.authenticator.clone(),
        get_task: Mutex::new(None),
    });
    let (tx, rx) = smol::channel::unbounded();
    let registering = Arc::clone(&link);
    let started =
        start_connecting(options, Box::new(ChannelSink(tx)), Box::new(HttpTeardown(Arc::clone(&link))), |conn| {
            let _ = registering.conn.set(Arc::downgrade(&conn));
            smol::spawn(dispatch(registering, rx)).detach();
            Ok(())
        });
    let (connecting, ready) = started.map_err(|e| (e, None))?;
    crate::smol::handshake(connecting, ready).await.map_err(|e| {
        let refusal = lock(&link.first_refusal).clone();
        let e = match (e, &refusal) {
            (ClientError::Connect(_), Some(r)) => r.clone().into_error(url),
            (e, _) => e,
        };
        (e, refusal.map(|r| (r.status, r.modern)))
    })
}
