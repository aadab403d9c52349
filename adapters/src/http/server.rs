//! The Streamable HTTP server (`tiny_http`): one endpoint for both eras, each exchange on a
//! pooled thread (kept for the next exchanges), sessions in a table that expires idle ones.

use std::io::{self, Read};
use std::net::{SocketAddr, TcpListener, ToSocketAddrs};
use std::sync::atomic::Ordering;
use std::sync::mpsc::RecvTimeoutError;
use std::sync::Arc;
use std::thread::JoinHandle;

use talaria_core::http::event_log::EventId;
use talaria_core::http::exchange::{HttpMethod, Refusal};
use talaria_core::http::headers::SESSION_ID;
use talaria_core::http::reply::{Reply, ReplyStep};
use talaria_core::server::Headers;
use tiny_http::{Header, Response};

use super::options::HttpServerOptions;
use super::shared::{
    detach_or_close, expire_due, feed_post, finish_post, legacy_closed, legacy_message, legacy_session, plan,
    supports_polling, target, Plan, Session, Shared, Target, Visit,
};
use super::sse_out::{keepalive_interval, Ending, SseOut};
use super::streams::StreamMsg;
use crate::server::{Pool, Server};

/// The most exchanges handled at once (each on its own thread); past it, 503.
const MAX_ACTIVE_EXCHANGES: usize = 4096;

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
        let http = Arc::new(tiny_http::Server::from_listener(listener, None).map_err(io::Error::other)?);
        let shared = Arc::new(Shared::new(server, addr, options));
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
            std::thread::Builder::new().name("talaria-http-expiry".into()).spawn(move || {
                while !shared.stop.load(Ordering::Acquire) {
                    std::thread::sleep(expire_due(&shared));
                }
            })?
        };
        let stopping = Arc::clone(&shared);
        let unblock = Arc::clone(&http);
        let stop = Arc::new(move || {
            stopping.stop.store(true, Ordering::Release);
            unblock.unblock();
        });
        let counting = Arc::clone(&shared);
        let sessions = Arc::new(move || counting.session_count());
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
    let target = target(&shared.options, request.url());
    if target == Target::Elsewhere {
        let _ = request.respond(Response::empty(404));
        return;
    }
    let fields = request.headers();
    let bytes = fields.iter().map(|h| h.field.as_str().as_str().len() + h.value.as_str().len()).sum();
    let mut headers = Headers::with_capacity(fields.len(), bytes);
    for field in fields {
        headers.push(field.field.as_str().as_str(), field.value.as_str());
    }
    if target == Target::ResourceMetadata {
        let document = shared.options.resource_metadata.as_ref().map(|(_, d)| d.to_vec()).unwrap_or_default();
        let mut response = Response::from_data(document);
        for h in [header("Content-Type", "application/json"), header("Access-Control-Allow-Origin", "*")]
            .into_iter()
            .flatten()
        {
            response.add_header(h);
        }
        let _ = request.respond(response);
        return;
    }
    let mut identity = None;
    if let Some(authorize) = &shared.options.authorize {
        match authorize(&headers) {
            Ok(who) => identity = who,
            Err(refusal) => return respond_refusal(request, refusal),
        }
    }
    match target {
        Target::LegacyOpen => return legacy_open(shared, request, identity),
        Target::LegacyPost => return legacy_post(shared, request),
        _ => {}
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
    let remote_addr = request.remote_addr().copied();
    match plan(shared, method, headers, &body, identity, remote_addr) {
        Plan::Refuse(refusal) => respond_refusal(request, refusal),
        Plan::Ended => {
            let _ = request.respond(Response::empty(200));
        }
        Plan::Post { session, session_id, visit } => {
            post(shared, &session, request, visit, &body, session_id.as_deref());
        }
        Plan::OpenStream { session, last_event_id } => open_stream(shared, &session, request, last_event_id.as_deref()),
    }
}

/// GET on the legacy stream path: a new session whose stream opens with the `endpoint` event.
fn legacy_open<S: Send + 'static>(shared: &Shared<S>, request: tiny_http::Request, identity: Option<String>) {
    let origin = request.headers().iter().find(|h| h.field.equiv("Origin")).map(|h| h.value.to_string());
    let remote_addr = request.remote_addr().map(ToString::to_string);
    let (id, session, endpoint) =
        match legacy_session(shared, request.method().as_str(), origin.as_deref(), identity, remote_addr) {
            Ok(opened) => opened,
            Err(refusal) => return respond_refusal(request, refusal),
        };
    let frames = session.streams.open_get();
    if let Ok(mut out) = SseOut::start(request, None, None, true) {
        if out.raw(&endpoint).is_ok() && out.pump(&frames, shared.options.sse_keepalive) == Ending::Finished {
            out.end();
        }
    }
    legacy_closed(shared, &id);
}

/// POST on the legacy messages path: fed to the session named in the query, answered 202; the
/// replies travel on the session's stream.
fn legacy_post<S: Send + 'static>(shared: &Shared<S>, mut request: tiny_http::Request) {
    if request.method() != &tiny_http::Method::Post {
        return respond_refusal(request, Refusal::bad_request("send legacy messages with POST"));
    }
    let limit = shared.options.endpoint.max_body;
    let mut body = Vec::new();
    if request.as_reader().take(limit as u64 + 1).read_to_end(&mut body).is_err() || body.len() > limit {
        let _ = request.respond(Response::empty(413));
        return;
    }
    match legacy_message(shared, request.url(), &body) {
        Ok(()) => {
            let _ = request.respond(Response::empty(202));
        }
        Err(refusal) => respond_refusal(request, refusal),
    }
}

/// Feeds one POST body to the session and writes its reply: 202, a JSON body, or an SSE stream
/// (logged, primed and resumable when the session has an event log). The session is finished
/// ([`finish_post`]: stored, or closed if stateless) before the reply's last bytes go out, so
/// a client that goes on at once (to another server sharing the store) finds it stored.
fn post<S: Send + 'static>(
    shared: &Shared<S>,
    session: &Session<S>,
    request: tiny_http::Request,
    visit: Option<Visit>,
    body: &[u8],
    session_id: Option<&str>,
) {
    let (stream, frames) = feed_post(shared, session, visit, body);
    let mut reply = Reply::new(shared.options.reply_mode);
    let keepalive = keepalive_interval(shared.options.sse_keepalive);
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
                finish_post(shared, session, session_id);
                let _ = request.respond(with_session(Response::empty(202), session_id));
                return;
            }
            Some(ReplyStep::Json { status, body }) => {
                finish_post(shared, session, session_id);
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
    let log_stream = log.as_ref().map(|(_, id)| *id);
    let polling = supports_polling(session);
    let Ok(mut out) = SseOut::start(request, session_id, log, false) else {
        detach_or_close(session, stream, &frames, log_stream);
        return finish_post(shared, session, session_id);
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
        Ending::Finished => {
            finish_post(shared, session, session_id);
            out.finish();
        }
        Ending::Disconnected => {
            out.end();
            detach_or_close(session, stream, &frames, log_stream);
            finish_post(shared, session, session_id);
        }
        Ending::Gone => {
            detach_or_close(session, stream, &frames, log_stream);
            finish_post(shared, session, session_id);
        }
    }
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
                detach_or_close(session, stream, frames, Some(resumed.log));
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
            (_, Some(stream)) => detach_or_close(session, stream, &frames, Some(resumed.log)),
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
