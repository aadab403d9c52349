//! The Streamable HTTP server (`tiny_http`): one endpoint for both eras, each exchange on a
//! pooled thread (kept for the next exchanges), sessions in a table that expires idle ones.

use std::io::{self, Read};
use std::net::{SocketAddr, TcpListener, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::RecvTimeoutError;
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use talaria_core::http::event_log::{EventId, MemoryEventStore, Retention, SessionStore};
use talaria_core::http::exchange::{classify, EndpointConfig, Exchange, HttpMethod, HttpRequest, Refusal};
use talaria_core::http::headers::SESSION_ID;
use talaria_core::http::ids::mint_session_id;
use talaria_core::http::reply::{Reply, ReplyMode, ReplyStep};
use talaria_core::http::sessions::SessionTable;
use talaria_core::server::TransportInfo;
use talaria_core::session::{Event, Route, StreamId};
use talaria_core::version::Feature;
use tiny_http::{Header, Response};

use super::chan::Receiver;
use super::sse_out::{Ending, SseOut};
use super::streams::{Log, SharedEventStore, StreamMsg, Streams};
use crate::conn::Conn;
use crate::server::{Pool, Served, Server};

/// Why an authorization hook refused a request: sent as `401` with `WWW-Authenticate`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rejection {
    /// The `WWW-Authenticate` challenge (e.g. `Bearer resource_metadata="..."`).
    pub www_authenticate: String,
}

/// An authorization hook: sees the request headers; refuses, or names the caller (the identity
/// handlers see in [`TransportInfo::identity`]).
pub type Authorize = Arc<dyn Fn(&[(String, String)]) -> Result<Option<String>, Rejection> + Send + Sync>;

/// How the HTTP server serves.
///
/// # Examples
///
/// ```
/// use talaria::core::http::reply::ReplyMode;
/// use talaria::http::HttpServerOptions;
///
/// let options = HttpServerOptions::default().reply_mode(ReplyMode::Sse).path("/mcp");
/// assert_eq!(options.path, "/mcp");
/// ```
#[derive(Clone)]
#[non_exhaustive]
#[must_use]
pub struct HttpServerOptions {
    /// The MCP endpoint's path (default `/mcp`).
    pub path: String,
    /// Eras, limits, origins and session expiry.
    pub endpoint: EndpointConfig,
    /// JSON replies where possible, or always SSE.
    pub reply_mode: ReplyMode,
    /// The authorization hook, if any.
    pub authorize: Option<Authorize>,
    /// The legacy HTTP+SSE transport (2024-11-05): the stream path and the messages path
    /// (default `/sse` and `/messages`); `None` turns it off.
    pub legacy_sse: Option<(String, String)>,
    /// Where session records go, so that a session another process (or this one before a
    /// restart) initialized goes on here; `None`: sessions live in this process only.
    pub session_store: Option<SharedSessionStore>,
    /// Where SSE events are logged for resumption; `None`: an in-memory log with the default
    /// [`Retention`].
    pub event_store: Option<SharedEventStore>,
    /// The reconnection delay sent with each stream's priming event (2025-11-25), the `retry`
    /// a client waits before resuming a stream the server ended early; `None` leaves it to the
    /// client.
    pub sse_retry: Option<Duration>,
    /// How long an SSE stream may stay silent before the server writes a keep-alive comment
    /// (default 15 s). Besides keeping proxies from timing the stream out, the write is how the
    /// server notices a client that closed the stream: in 2026-07-28 that cancels the stream's
    /// request, and a gone GET stream is freed.
    pub sse_keepalive: Duration,
}

/// The default of [`HttpServerOptions::sse_keepalive`].
const DEFAULT_SSE_KEEPALIVE: Duration = Duration::from_secs(15);

/// A session store shared by the servers that serve the same sessions.
pub type SharedSessionStore = Arc<Mutex<dyn SessionStore + Send>>;

impl std::fmt::Debug for HttpServerOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpServerOptions")
            .field("path", &self.path)
            .field("endpoint", &self.endpoint)
            .field("reply_mode", &self.reply_mode)
            .field("authorize", &self.authorize.is_some())
            .field("legacy_sse", &self.legacy_sse)
            .field("session_store", &self.session_store.is_some())
            .field("event_store", &self.event_store.is_some())
            .field("sse_retry", &self.sse_retry)
            .field("sse_keepalive", &self.sse_keepalive)
            .finish()
    }
}

impl Default for HttpServerOptions {
    fn default() -> Self {
        Self {
            path: "/mcp".into(),
            endpoint: EndpointConfig::default(),
            reply_mode: ReplyMode::Json,
            authorize: None,
            legacy_sse: Some(("/sse".into(), "/messages".into())),
            session_store: None,
            event_store: None,
            sse_retry: None,
            sse_keepalive: DEFAULT_SSE_KEEPALIVE,
        }
    }
}

impl HttpServerOptions {
    /// Serves the endpoint at `path`.
    pub fn path(mut self, path: impl Into<String>) -> Self {
        self.path = path.into();
        self
    }

    /// Chooses JSON or SSE replies.
    pub const fn reply_mode(mut self, mode: ReplyMode) -> Self {
        self.reply_mode = mode;
        self
    }

    /// Sets the endpoint configuration (eras, limits, origins, expiry).
    pub fn endpoint(mut self, endpoint: EndpointConfig) -> Self {
        self.endpoint = endpoint;
        self
    }

    /// Keeps session records in `store` (see [`HttpServerOptions::session_store`]).
    pub fn session_store(mut self, store: SharedSessionStore) -> Self {
        self.session_store = Some(store);
        self
    }

    /// Logs SSE events in `store` (see [`HttpServerOptions::event_store`]).
    pub fn event_store(mut self, store: SharedEventStore) -> Self {
        self.event_store = Some(store);
        self
    }

    /// Sends `retry` with each stream's priming event: how long a client waits before resuming
    /// a stream the server ended early (see `Job::close_sse_stream`).
    pub const fn sse_retry(mut self, retry: Duration) -> Self {
        self.sse_retry = Some(retry);
        self
    }

    /// Writes a keep-alive comment on SSE streams silent for `every` (see
    /// [`HttpServerOptions::sse_keepalive`]).
    pub const fn sse_keepalive(mut self, every: Duration) -> Self {
        self.sse_keepalive = every;
        self
    }

    /// Installs an authorization hook.
    pub fn authorize(
        mut self,
        hook: impl Fn(&[(String, String)]) -> Result<Option<String>, Rejection> + Send + Sync + 'static,
    ) -> Self {
        self.authorize = Some(Arc::new(hook));
        self
    }
}

/// The most exchanges handled at once (each on its own thread); past it, 503.
const MAX_ACTIVE_EXCHANGES: usize = 4096;

/// A live legacy session: its connection and its response streams.
struct Session<S> {
    conn: Arc<Conn<Served<S>>>,
    streams: Streams,
}

impl<S> Clone for Session<S> {
    fn clone(&self) -> Self {
        Self { conn: Arc::clone(&self.conn), streams: self.streams.clone() }
    }
}

impl<S> Session<S> {
    const fn new(conn: Arc<Conn<Served<S>>>, streams: Streams) -> Self {
        Self { conn, streams }
    }
}

struct Shared<S> {
    server: Server<S>,
    options: HttpServerOptions,
    sessions: Mutex<SessionTable<Session<S>>>,
    /// The SSE event log, for resuming after `Last-Event-ID`.
    events: SharedEventStore,
    next_stream: AtomicU64,
    stop: AtomicBool,
    /// Exchanges being handled now.
    active: std::sync::atomic::AtomicUsize,
}

/// A Streamable HTTP server listening on a background thread.
///
/// # Examples
///
/// ```
/// use talaria::core::server::Router;
/// use talaria::http::{HttpServer, HttpServerOptions};
/// use talaria::server::Server;
///
/// let server = Server::new("http-demo", "1.0", Router::<()>::builder().build());
/// let listening = HttpServer::bind(&server, "127.0.0.1:0", HttpServerOptions::default())?;
/// println!("serving http://{}/mcp", listening.local_addr());
/// listening.shutdown();
/// # Ok::<(), std::io::Error>(())
/// ```
pub struct HttpServer {
    addr: SocketAddr,
    stop: Arc<dyn Fn() + Send + Sync>,
    threads: Vec<JoinHandle<()>>,
    sessions: Arc<dyn Fn() -> usize + Send + Sync>,
}

impl std::fmt::Debug for HttpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpServer").field("addr", &self.addr).finish_non_exhaustive()
    }
}

impl HttpServer {
    /// Listens on `addr` (with `TCP_NODELAY`) and serves `server` at the options' path.
    ///
    /// # Errors
    ///
    /// If the address cannot be bound.
    pub fn bind<S: Send + 'static>(
        server: &Server<S>,
        addr: impl ToSocketAddrs,
        options: HttpServerOptions,
    ) -> io::Result<Self> {
        let listener = TcpListener::bind(addr)?;
        // Accepted sockets inherit TCP_NODELAY from the listener on Linux. (Not a receive
        // timeout: on a listener that would make `accept` itself time out, and tiny_http stops
        // accepting at its first error.)
        let _ = rustix::net::sockopt::set_tcp_nodelay(&listener, true);
        let addr = listener.local_addr()?;
        let mut options = options;
        if addr.ip().is_loopback() && options.endpoint.allowed_hosts.is_none() {
            // Against DNS rebinding: a loopback server answers only to loopback names.
            options.endpoint = options.endpoint.localhost_only(&[]);
        }
        let http = Arc::new(tiny_http::Server::from_listener(listener, None).map_err(io::Error::other)?);
        let idle = options.endpoint.idle_timeout;
        let shared = Arc::new(Shared {
            server: server.clone(),
            sessions: Mutex::new(SessionTable::new(idle, options.endpoint.max_sessions)),
            events: options
                .event_store
                .clone()
                .unwrap_or_else(|| Arc::new(Mutex::new(MemoryEventStore::new(Retention::default())))),
            options,
            next_stream: AtomicU64::new(1),
            stop: AtomicBool::new(false),
            active: std::sync::atomic::AtomicUsize::new(0),
        });
        let accept = {
            let (http, shared) = (Arc::clone(&http), Arc::clone(&shared));
            // Exchange threads are kept for the next exchanges rather than started for each.
            let workers = Pool::new(MAX_ACTIVE_EXCHANGES);
            std::thread::Builder::new().name("talaria-http-accept".into()).spawn(move || {
                for request in http.incoming_requests() {
                    if shared.stop.load(Ordering::Acquire) {
                        break;
                    }
                    // Each exchange gets a thread (SSE streams live long); past the cap the
                    // server sheds load instead of growing without bound.
                    if shared.active.fetch_add(1, Ordering::AcqRel) >= MAX_ACTIVE_EXCHANGES {
                        shared.active.fetch_sub(1, Ordering::AcqRel);
                        respond_refusal(request, Refusal::too_many_sessions());
                        continue;
                    }
                    let worker = Arc::clone(&shared);
                    workers.run(Box::new(move || {
                        handle(&worker, request);
                        worker.active.fetch_sub(1, Ordering::AcqRel);
                    }));
                }
            })?
        };
        let expiry = {
            let shared = Arc::clone(&shared);
            std::thread::Builder::new().name("talaria-http-expiry".into()).spawn(move || expire_loop(&shared))?
        };
        let stopping = Arc::clone(&shared);
        let unblock = Arc::clone(&http);
        let stop = Arc::new(move || {
            stopping.stop.store(true, Ordering::Release);
            unblock.unblock();
        });
        let counting = Arc::clone(&shared);
        let sessions = Arc::new(move || counting.sessions.lock().unwrap_or_else(PoisonError::into_inner).len());
        Ok(Self { addr, stop, threads: vec![accept, expiry], sessions })
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

    /// Blocks while the server runs.
    pub fn wait(mut self) {
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
    }

    /// Stops accepting requests; exchanges under way finish.
    pub fn shutdown(mut self) {
        self.stop_now();
    }

    fn stop_now(&mut self) {
        (self.stop)();
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        if !self.threads.is_empty() {
            self.stop_now();
        }
    }
}

/// Expires idle sessions until the server stops.
fn expire_loop<S: Send + 'static>(shared: &Shared<S>) {
    while !shared.stop.load(Ordering::Acquire) {
        let now = Instant::now();
        let (expired, next) = {
            let mut table = shared.sessions.lock().unwrap_or_else(PoisonError::into_inner);
            let expired = table.expire(now);
            (expired, table.poll_timeout())
        };
        for (id, session) in expired {
            end_session(&session);
            let _ = shared.events.lock().unwrap_or_else(PoisonError::into_inner).drop_session(&id);
        }
        let pause = next.map_or(Duration::from_millis(200), |at| at.saturating_duration_since(now));
        std::thread::sleep(pause.clamp(Duration::from_millis(5), Duration::from_millis(200)));
    }
}

fn end_session<S: Send + 'static>(session: &Session<S>) {
    session.conn.with(|served, now| served.endpoint.handle_closed(now));
    session.streams.close_all();
}

fn header(name: &str, value: &str) -> Option<Header> {
    Header::from_bytes(name.as_bytes(), value.as_bytes()).ok()
}

fn respond_refusal(request: tiny_http::Request, refusal: Refusal) {
    let mut response = Response::from_data(refusal.body.unwrap_or_default()).with_status_code(refusal.status);
    if let Some(h) = header("Content-Type", "application/json") {
        response.add_header(h);
    }
    for (name, value) in &refusal.headers {
        if let Some(h) = header(name, value) {
            response.add_header(h);
        }
    }
    let _ = request.respond(response);
}

fn handle<S: Send + 'static>(shared: &Shared<S>, mut request: tiny_http::Request) {
    let path = request.url().split('?').next().unwrap_or("").to_owned();
    let legacy = shared.options.legacy_sse.as_ref().and_then(|(sse, messages)| {
        if path == *sse {
            Some(true)
        } else {
            (path == *messages).then_some(false)
        }
    });
    if path != shared.options.path && legacy.is_none() {
        let _ = request.respond(Response::empty(404));
        return;
    }
    let headers: Vec<(String, String)> =
        request.headers().iter().map(|h| (h.field.as_str().as_str().to_owned(), h.value.as_str().to_owned())).collect();
    let mut identity = None;
    if let Some(authorize) = &shared.options.authorize {
        match authorize(&headers) {
            Ok(who) => identity = who,
            Err(rejection) => {
                let mut response = Response::empty(401);
                if let Some(h) = header("WWW-Authenticate", &rejection.www_authenticate) {
                    response.add_header(h);
                }
                let _ = request.respond(response);
                return;
            }
        }
    }
    if let Some(open) = legacy {
        return if open { legacy_open(shared, request, identity) } else { legacy_post(shared, request) };
    }
    let method = HttpMethod::parse(request.method().as_str());
    let limit = shared.options.endpoint.max_body;
    let mut body = Vec::new();
    if method == HttpMethod::Post {
        let read = request.as_reader().take(limit as u64 + 1).read_to_end(&mut body);
        if read.is_err() {
            let _ = request.respond(Response::empty(400));
            return;
        }
    }
    let exchange = match classify(&HttpRequest { method, headers: &headers[..], body: &body }, &shared.options.endpoint)
    {
        Ok(exchange) => exchange,
        Err(refusal) => return respond_refusal(request, refusal),
    };
    let mut info = TransportInfo::new("http");
    info.remote_addr = request.remote_addr().map(ToString::to_string);
    info.identity = identity;
    info.headers = headers;
    match exchange {
        Exchange::Stateless { .. } => {
            let streams = Streams::new(None);
            let Ok(conn) = shared.server.open(Box::new(streams.clone()), info, quiet_events()) else {
                let _ = request.respond(Response::empty(500));
                return;
            };
            let session = Session::new(conn, streams);
            post(shared, &session, request, &body, None);
            session.conn.with(|served, now| served.endpoint.handle_closed(now));
        }
        Exchange::Initialize => {
            let id = mint_session_id(&mut |buf: &mut [u8]| {
                let _ = getrandom::fill(buf);
            });
            let streams = Streams::new(Some(Log::new(Arc::clone(&shared.events), &id)));
            let session = match start_session(shared, &id, streams, info.with_session_id(id.clone())) {
                Ok(session) => session,
                Err(refusal) => return respond_refusal(request, refusal),
            };
            post(shared, &session, request, &body, Some(&id));
            forget_headers(&session);
            save(shared, &session, &id);
        }
        Exchange::Post { session: id } => {
            let info = info.with_session_id(id.clone());
            let Some(session) = lookup(shared, &id).or_else(|| restore(shared, &id, info.clone())) else {
                return respond_refusal(request, Refusal::unknown_session());
            };
            session.conn.with(|served, _| served.endpoint.set_transport(info));
            post(shared, &session, request, &body, Some(&id));
            forget_headers(&session);
            save(shared, &session, &id);
        }
        Exchange::OpenStream { session: id, last_event_id } => {
            let Some(session) = lookup(shared, &id) else {
                return respond_refusal(request, Refusal::unknown_session());
            };
            open_stream(shared, &session, request, last_event_id.as_deref());
        }
        Exchange::Terminate { session: id } => {
            let removed = shared.sessions.lock().unwrap_or_else(PoisonError::into_inner).remove(&id);
            if let Some(store) = &shared.options.session_store {
                let _ = store.lock().unwrap_or_else(PoisonError::into_inner).delete(&id);
            }
            match removed {
                Some(session) => {
                    end_session(&session);
                    let _ = shared.events.lock().unwrap_or_else(PoisonError::into_inner).drop_session(&id);
                    let _ = request.respond(Response::empty(200));
                }
                None => respond_refusal(request, Refusal::unknown_session()),
            }
        }
        _ => {
            let _ = request.respond(Response::empty(500));
        }
    }
}

/// GET on the legacy stream path: a new session whose stream opens with the `endpoint` event.
fn legacy_open<S: Send + 'static>(shared: &Shared<S>, request: tiny_http::Request, identity: Option<String>) {
    if request.method() != &tiny_http::Method::Get {
        return respond_refusal(request, Refusal::bad_request("open the legacy stream with GET"));
    }
    if let Some(origin) = request.headers().iter().find(|h| h.field.equiv("Origin")).map(|h| h.value.to_string()) {
        if !shared.options.endpoint.origin_allowed(&origin) {
            let _ = request.respond(Response::empty(403));
            return;
        }
    }
    let id = mint_session_id(&mut |buf: &mut [u8]| {
        let _ = getrandom::fill(buf);
    });
    let mut info = TransportInfo::new("sse").with_session_id(id.clone());
    info.remote_addr = request.remote_addr().map(ToString::to_string);
    info.identity = identity;
    let session = match start_session(shared, &id, Streams::new(None), info) {
        Ok(session) => session,
        Err(refusal) => return respond_refusal(request, refusal),
    };
    let messages = shared.options.legacy_sse.as_ref().map_or("/messages", |(_, m)| m.as_str());
    let endpoint = talaria_core::http::legacy::endpoint_event(messages, &id);
    let frames = session.streams.open_get();
    if let Ok(mut out) = SseOut::start(request, None, None, true) {
        if out.raw(&endpoint).is_ok() && out.pump(&frames, shared.options.sse_keepalive) == Ending::Finished {
            out.end();
        }
    }
    // The stream is the session: when it ends, so does the session.
    if let Some(session) = shared.sessions.lock().unwrap_or_else(PoisonError::into_inner).remove(&id) {
        end_session(&session);
    }
}

/// POST on the legacy messages path: fed to the session named in the query, answered 202; the
/// replies travel on the session's stream.
fn legacy_post<S: Send + 'static>(shared: &Shared<S>, mut request: tiny_http::Request) {
    if request.method() != &tiny_http::Method::Post {
        return respond_refusal(request, Refusal::bad_request("send legacy messages with POST"));
    }
    let Some(id) = talaria_core::http::legacy::session_in_query(request.url()).map(str::to_owned) else {
        return respond_refusal(request, Refusal::bad_request("the messages URL needs its sessionId"));
    };
    let Some(session) = lookup(shared, &id) else { return respond_refusal(request, Refusal::unknown_session()) };
    let limit = shared.options.endpoint.max_body;
    let mut body = Vec::new();
    if request.as_reader().take(limit as u64 + 1).read_to_end(&mut body).is_err() || body.len() > limit {
        let _ = request.respond(Response::empty(413));
        return;
    }
    session.conn.with(|served, now| served.endpoint.handle_frame(now, Route::Connection, &body));
    let _ = request.respond(Response::empty(202));
}

/// Opens a new session's connection and enters it in the table: 500 if the connection cannot
/// be opened, 503 past the cap on sessions.
fn start_session<S: Send + 'static>(
    shared: &Shared<S>,
    id: &str,
    streams: Streams,
    info: TransportInfo,
) -> Result<Session<S>, Refusal> {
    let conn = shared
        .server
        .open(Box::new(streams.clone()), info, quiet_events())
        .map_err(|_| Refusal::internal("cannot open the session"))?;
    let session = Session::new(conn, streams);
    let inserted = shared.sessions.lock().unwrap_or_else(PoisonError::into_inner).insert(
        id.to_owned(),
        session.clone(),
        Instant::now(),
    );
    if inserted.is_err() {
        end_session(&session);
        return Err(Refusal::too_many_sessions());
    }
    Ok(session)
}

/// Stores the session's record, if a store is configured and the session is initialized.
fn save<S: Send + 'static>(shared: &Shared<S>, session: &Session<S>, id: &str) {
    let Some(store) = &shared.options.session_store else { return };
    let Some(snapshot) = session.conn.with(|served, _| served.endpoint.session().snapshot()) else { return };
    let Ok(record) = serde_json::to_vec(&snapshot) else { return };
    let _ = store.lock().unwrap_or_else(PoisonError::into_inner).store(id, record, Instant::now());
}

/// A session this process does not hold, brought back from the store (another process, or
/// this one before a restart, initialized it).
fn restore<S: Send + 'static>(shared: &Shared<S>, id: &str, info: TransportInfo) -> Option<Session<S>> {
    let store = shared.options.session_store.as_ref()?;
    let record = store.lock().unwrap_or_else(PoisonError::into_inner).load(id).ok().flatten()?;
    let snapshot = serde_json::from_slice(&record.data).ok()?;
    let streams = Streams::new(Some(Log::new(Arc::clone(&shared.events), id)));
    let conn = shared.server.open_from(Box::new(streams.clone()), info, quiet_events(), Some(snapshot)).ok()?;
    let session = Session::new(conn, streams);
    let mut table = shared.sessions.lock().unwrap_or_else(PoisonError::into_inner);
    if table.insert(id.to_owned(), session.clone(), Instant::now()).is_err() {
        drop(table);
        end_session(&session);
        return None;
    }
    Some(session)
}

/// After an exchange, the session keeps what it knows of its transport but not the request's
/// headers: an idle session holds no copy of its last request (handlers that ran saw them).
fn forget_headers<S: Send + 'static>(session: &Session<S>) {
    session.conn.with(|served, _| {
        if let Some(info) = served.endpoint.transport().filter(|info| !info.headers.is_empty()) {
            let mut kept = TransportInfo::new(info.kind.clone());
            kept.session_id.clone_from(&info.session_id);
            kept.remote_addr.clone_from(&info.remote_addr);
            kept.identity.clone_from(&info.identity);
            served.endpoint.set_transport(kept);
        }
    });
}

fn lookup<S>(shared: &Shared<S>, id: &str) -> Option<Session<S>> {
    shared.sessions.lock().unwrap_or_else(PoisonError::into_inner).get_mut(id, Instant::now()).cloned()
}

fn quiet_events() -> Box<dyn Fn(Event) + Send + Sync> {
    Box::new(|event| {
        if let Event::PeerMisbehaved(problem) = event {
            eprintln!("talaria: http peer error: {problem}");
        }
    })
}

/// Feeds one POST body to the session and writes its reply: 202, a JSON body, or an SSE stream
/// (logged, primed and resumable when the session has an event log).
fn post<S: Send + 'static>(
    shared: &Shared<S>,
    session: &Session<S>,
    request: tiny_http::Request,
    body: &[u8],
    session_id: Option<&str>,
) {
    let stream = StreamId(shared.next_stream.fetch_add(1, Ordering::Relaxed));
    let frames = session.streams.open_post(stream);
    session.conn.with(|served, now| served.endpoint.handle_frame(now, Route::Stream(stream), body));
    let mut reply = Reply::new(shared.options.reply_mode);
    let keepalive = shared.options.sse_keepalive.max(Duration::from_millis(10));
    let (first, disconnect) = loop {
        let (steps, disconnect) = match frames.recv_timeout(keepalive) {
            Ok(StreamMsg::Frame(payload)) => (reply.frame(payload), false),
            Ok(StreamMsg::Done) | Err(RecvTimeoutError::Disconnected) => (reply.done(), false),
            // A long wait: answer with a stream, kept alive, so a client that leaves is noticed.
            Err(RecvTimeoutError::Timeout) => (reply.idle(), false),
            // The handler frees the connection: the client needs a stream to resume.
            Ok(StreamMsg::Disconnect) => (reply.start_stream(), true),
        };
        match steps.first() {
            None => {}
            Some(ReplyStep::Accepted) => {
                let _ = request.respond(with_session(Response::empty(202), session_id));
                return;
            }
            Some(ReplyStep::Json { status, body }) => {
                let mut response = Response::from_data(body.clone()).with_status_code(*status);
                if let Some(h) = header("Content-Type", "application/json") {
                    response.add_header(h);
                }
                let _ = request.respond(with_session(response, session_id));
                return;
            }
            Some(_) => break (steps, disconnect),
        }
    };
    let log = session.streams.log_post(stream).and_then(|id| Some((session.streams.log()?.clone(), id)));
    let polling = supports_polling(session);
    let Ok(mut out) = SseOut::start(request, session_id, log, false) else {
        return detach_or_close(session, stream, &frames);
    };
    let mut ok = !polling || out.prime(shared.options.sse_retry).is_ok();
    for step in first {
        if let ReplyStep::Event(payload) = step {
            ok = ok && out.event(&payload).is_ok();
        }
    }
    let ending = if !ok {
        Ending::Gone
    } else if disconnect {
        Ending::Disconnected
    } else {
        out.pump(&frames, shared.options.sse_keepalive)
    };
    match ending {
        Ending::Finished => out.finish(),
        Ending::Disconnected => {
            out.end();
            detach_or_close(session, stream, &frames);
        }
        Ending::Gone => detach_or_close(session, stream, &frames),
    }
}

/// A POST stream's writer left before the request was answered: a logged stream waits for the
/// client to resume it; an unlogged one is closed, which cancels its request in the stateless
/// era.
fn detach_or_close<S: Send + 'static>(session: &Session<S>, stream: StreamId, frames: &Receiver<StreamMsg>) {
    if !session.streams.release_post(stream, frames) {
        session.conn.with(|served, now| served.endpoint.session_mut().handle_stream_closed(now, stream));
    }
}

/// Whether the session's revision primes its SSE streams and may end them early (2025-11-25).
fn supports_polling<S: Send + 'static>(session: &Session<S>) -> bool {
    session
        .conn
        .with(|served, _| served.endpoint.session().version())
        .is_some_and(|v| v.supports(Feature::SsePolling) && !v.supports(Feature::Stateless))
}

/// GET with `Mcp-Session-Id`: the session's stream for server messages, or, with
/// `Last-Event-ID`, the resumption of the stream that event belongs to (the GET stream, or a
/// POST stream that ended early).
fn open_stream<S: Send + 'static>(
    shared: &Shared<S>,
    session: &Session<S>,
    request: tiny_http::Request,
    last_event_id: Option<&str>,
) {
    let polling = supports_polling(session);
    if let Some(last) = last_event_id {
        let resumed = last.trim().parse::<EventId>().ok().and_then(|after| session.streams.resume(after));
        let Some(resumed) = resumed else {
            let refusal = Refusal::bad_request(&format!("Last-Event-ID {last} is not an event of this session"));
            return respond_refusal(request, refusal);
        };
        let log = session.streams.log().map(|log| (log.clone(), resumed.log));
        let Ok(mut out) = SseOut::start(request, None, log, true) else {
            if let (Some(stream), Some(frames)) = (resumed.post, &resumed.frames) {
                detach_or_close(session, stream, frames);
            }
            return;
        };
        let mut ok = true;
        for event in &resumed.events {
            ok = ok && out.replayed(event).is_ok();
        }
        let Some(frames) = resumed.frames else { return out.end() };
        let ending = if ok { out.pump(&frames, shared.options.sse_keepalive) } else { Ending::Gone };
        match (ending, resumed.post) {
            // The POST stream's request is answered: its log stream is complete.
            (Ending::Finished, Some(_)) => out.finish(),
            (_, Some(stream)) => detach_or_close(session, stream, &frames),
            // The GET stream is never complete; this one was replaced or the session ended.
            (_, None) => out.end(),
        }
        return;
    }
    let frames = session.streams.open_get();
    let log = session.streams.get_log().and_then(|id| Some((session.streams.log()?.clone(), id)));
    let Ok(mut out) = SseOut::start(request, None, log, true) else { return };
    // 2025-11-25: a priming event (an id, no data) lets the client resume even before the
    // first message arrives.
    if (!polling || out.prime(shared.options.sse_retry).is_ok())
        && out.pump(&frames, shared.options.sse_keepalive) == Ending::Finished
    {
        out.end();
    }
}

fn with_session<R: Read>(mut response: Response<R>, session_id: Option<&str>) -> Response<R> {
    if let Some(h) = session_id.and_then(|id| header(SESSION_ID, id)) {
        response.add_header(h);
    }
    response
}
