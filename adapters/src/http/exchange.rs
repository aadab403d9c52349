//! One HTTP exchange on the server: a hyper request in, a response out. What the request means
//! is decided by `shared` (and the core under it); this module reads the body within its
//! limits, and turns each decision into a response, whole or streamed.
//!
//! A streamed (SSE) response is written by a task of its own, which owns what the stream needs
//! to finish. When the client goes away, hyper drops the response body (or, before the response
//! began, the exchange's future) and the session hears of it at once: a POST's stream is
//! detached for resumption, or closed, which cancels its request in the stateless era.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, LengthLimitError, Limited};
use hyper::header::{HeaderMap, HeaderName, HeaderValue};
use hyper::{Request, Response, StatusCode};
use smol::Timer;
use talaria_core::http::event_log::EventId;
use talaria_core::http::exchange::{HttpMethod, Refusal};
use talaria_core::http::headers::SESSION_ID;
use talaria_core::http::outcome::PostEnd;
use talaria_core::http::relay::Follow;
use talaria_core::http::reply::{Reply, ReplyStep};
use talaria_core::http::stream_start::{primes_streams, EarlyEnd, LogOpening, Opening, StreamStart};
use talaria_core::server::Headers;
use talaria_core::session::StreamId;

use super::body::{Body, BodyWriter};
use super::chan::{channel, Receiver};
use super::processes::{claim_of_stream, follows_others, look_at_followed};
use super::shared::{
    feed_post, finish_post, has_unsaved_changes, legacy_closed, legacy_message, legacy_session, plan, save, target,
    version_of, Plan, Session, Shared, Target, Visit,
};
use super::sse_out::{keepalive_interval, Ending, SseBytes, OPENED};
use super::streams::{Log, StreamMsg};

/// Where the server's tasks run.
#[derive(Clone)]
pub(super) enum Spawner {
    /// smol's global executor.
    Global,
    /// An executor of the application's.
    On(Arc<smol::Executor<'static>>),
    /// The server's own executor, which ends with the server (a task spawned after that is
    /// dropped).
    Own(std::sync::Weak<smol::Executor<'static>>),
    /// The application's way to run a task (tokio's `spawn`, say).
    #[cfg_attr(not(feature = "tower"), allow(dead_code))]
    With(Arc<dyn Fn(BoxedTask) + Send + Sync>),
}

/// A task for [`Spawner::With`].
pub(super) type BoxedTask = std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>;

impl Spawner {
    /// Runs `future` to its end (or until the executor is gone) as a detached task.
    pub(super) fn detach(&self, future: impl std::future::Future<Output = ()> + Send + 'static) {
        if let Self::With(spawn) = self {
            return spawn(Box::pin(future));
        }
        if let Some(task) = self.spawn(future) {
            task.detach();
        }
    }

    /// Runs `future` as a task; `None` if the executor is gone (or is the application's, whose
    /// tasks this cannot hold: see [`Spawner::detach`]).
    pub(super) fn spawn<T: Send + 'static>(
        &self,
        future: impl std::future::Future<Output = T> + Send + 'static,
    ) -> Option<smol::Task<T>> {
        match self {
            Self::With(_) => None,
            Self::Global => Some(smol::spawn(future)),
            Self::On(executor) => Some(executor.spawn(future)),
            Self::Own(executor) => executor.upgrade().map(|executor| executor.spawn(future)),
        }
    }
}

/// What every exchange of one server shares.
pub(super) struct Context<S> {
    pub(super) shared: Arc<Shared<S>>,
    pub(super) spawner: Spawner,
}

/// Answers one request from `peer` (if known), whatever carries its body.
pub(super) async fn handle<S, B>(
    context: Arc<Context<S>>,
    request: Request<B>,
    peer: Option<SocketAddr>,
) -> Result<Response<Body>, Infallible>
where
    S: Send + 'static,
    B: hyper::body::Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let shared = &context.shared;
    let (parts, incoming) = request.into_parts();
    let path = parts.uri.path_and_query().map_or("/", |p| p.as_str());
    let target = target(&shared.options, path);
    if target == Target::Elsewhere {
        return Ok(respond(404, &[], Body::empty()));
    }
    if target == Target::ResourceMetadata {
        let document = shared.options.resource_metadata.as_ref().map(|(_, d)| Bytes::copy_from_slice(d));
        let head = [("Content-Type", "application/json"), ("Access-Control-Allow-Origin", "*")];
        return Ok(respond(200, &head, document.map_or_else(Body::empty, Body::whole)));
    }
    let headers = headers_of(&parts.headers);
    let mut identity = None;
    if let Some(authorize) = &shared.options.authorize {
        match authorize(&headers) {
            Ok(who) => identity = who,
            Err(refusal) => return Ok(refuse(refusal)),
        }
    }
    if target == Target::LegacyOpen {
        let origin = headers.get("Origin");
        return Ok(legacy_open(&context, (parts.method.as_str(), origin), identity, peer));
    }
    let body = match read_body(incoming, shared.options.endpoint.max_body, shared.options.read_timeout).await {
        Ok(body) => body,
        Err(status) => return Ok(respond(status, &[("Connection", "close")], Body::empty())),
    };
    if target == Target::LegacyPost {
        if parts.method != hyper::Method::POST {
            return Ok(refuse(Refusal::bad_request("send legacy messages with POST")));
        }
        return Ok(match legacy_message(shared, path, &body) {
            Ok(()) => respond(202, &[], Body::empty()),
            Err(refusal) => refuse(refusal),
        });
    }
    let method = HttpMethod::parse(parts.method.as_str());
    // A session store's calls are awaited (a blocking one's run on smol's blocking pool).
    let planned = plan(shared, method, headers, &body, identity, peer).await;
    Ok(match planned {
        Plan::Refuse(refusal) => refuse(refusal),
        Plan::Ended => respond(200, &[], Body::empty()),
        Plan::Relayed => respond(202, &[], Body::empty()),
        Plan::Post { session, session_id, visit } => post(&context, session, visit, &body, session_id).await,
        Plan::OpenStream { session, last_event_id } => open_stream(&context, &session, last_event_id.as_deref()).await,
    })
}

/// The request's headers as the core reads them (each repeated field kept).
fn headers_of(map: &HeaderMap) -> Headers {
    let text = map.iter().map(|(name, value)| name.as_str().len() + value.len()).sum();
    let mut headers = Headers::with_capacity(map.len(), text);
    for (name, value) in map {
        headers.push(name.as_str(), String::from_utf8_lossy(value.as_bytes()).trim());
    }
    headers
}

/// Reads the whole body: at most `limit` bytes (413 past it, whatever the framing), within
/// `timeout` (408), or 400 if the connection fails under it.
async fn read_body<B>(incoming: B, limit: usize, timeout: Duration) -> Result<Bytes, u16>
where
    B: hyper::body::Body,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    if incoming.size_hint().lower() > limit as u64 {
        return Err(413);
    }
    let reading = async {
        match Limited::new(incoming, limit).collect().await {
            Ok(collected) => Ok(collected.to_bytes()),
            Err(e) if e.is::<LengthLimitError>() => Err(413),
            Err(_) => Err(400),
        }
    };
    smol::future::or(reading, async {
        Timer::after(timeout).await;
        Err(408)
    })
    .await
}

/// A response with these headers (any that is not a valid header is left out).
fn respond(status: u16, headers: &[(&str, &str)], body: Body) -> Response<Body> {
    let mut response = Response::new(body);
    *response.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let fields = response.headers_mut();
    for (name, value) in headers {
        if let (Ok(name), Ok(value)) = (HeaderName::from_bytes(name.as_bytes()), HeaderValue::from_str(value)) {
            fields.append(name, value);
        }
    }
    response
}

/// The session id header, as hyper names it (no allocation per response).
const SESSION_ID_NAME: HeaderName = HeaderName::from_static("mcp-session-id");

/// A POST's answer (202, or a JSON reply of `content_type`), with the session's id if it has
/// one: [`respond`] for the one answer every call gets, built with no allocation but the id's.
fn answer(status: u16, session_id: Option<&str>, content_type: Option<HeaderValue>, body: Body) -> Response<Body> {
    let mut response = Response::new(body);
    *response.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let fields = response.headers_mut();
    if let Some(id) = session_id.and_then(|id| HeaderValue::from_str(id).ok()) {
        fields.append(SESSION_ID_NAME, id);
    }
    if let Some(content_type) = content_type {
        fields.append(hyper::header::CONTENT_TYPE, content_type);
    }
    response
}

fn refuse(refusal: Refusal) -> Response<Body> {
    let mut headers: Vec<(&str, &str)> = refusal.headers.iter().map(|(n, v)| (*n, v.as_str())).collect();
    if refusal.body.is_some() {
        headers.push(("Content-Type", "application/json"));
    }
    respond(refusal.status, &headers, refusal.body.map_or_else(Body::empty, Body::whole))
}

/// The head of an SSE response.
fn event_stream(session_id: Option<&str>, body: Body) -> Response<Body> {
    let mut headers =
        vec![("Content-Type", "text/event-stream"), ("Cache-Control", "no-cache"), ("X-Accel-Buffering", "no")];
    if let Some(id) = session_id {
        headers.push((SESSION_ID, id));
    }
    respond(200, &headers, body)
}

/// A POST's stream until it ends: if the exchange is dropped first (the client went away),
/// the stream is detached for resumption or closed (cancelling its request), and the session
/// finished.
struct PostStream<S: Send + 'static> {
    shared: Arc<Shared<S>>,
    session: Session<S>,
    stream: StreamId,
    frames: Receiver<StreamMsg>,
    session_id: Option<String>,
    /// The log stream its events went to, once it is an SSE stream with a log.
    log_stream: Option<u64>,
    /// Runs the store's round trip of a stream dropped before its answer.
    spawner: Spawner,
    ended: bool,
}

impl<S: Send + 'static> PostStream<S> {
    /// The request is answered: the session is finished (stored, or ended if stateless), the
    /// store's round trip (if the record changed) awaited, never run on the executor's threads
    /// by a blocking store.
    async fn finish(mut self) {
        self.ended = true;
        let saves = finish_post(&self.session, self.stream, self.session_id.as_deref(), PostEnd::Answered);
        if let (true, Some(id)) = (saves, self.session_id.clone()) {
            // Nothing to store (no store, or a record as stored): the answer goes out now,
            // with no task to wait for.
            if !has_unsaved_changes(&self.shared, &self.session) {
                return;
            }
            let (shared, session) = (Arc::clone(&self.shared), self.session.clone());
            let (saved, stored) = channel::<()>();
            // A task of its own, so that an exchange dropped meanwhile (the client hung up)
            // still stores the session; awaited, so that the reply goes out after it.
            self.spawner.detach(async move {
                save(&shared, &session, &id).await;
                let _ = saved.send(());
            });
            let _ = stored.recv_async().await;
        }
    }

    /// The stream's writer leaves before the request is answered.
    fn leave(mut self) {
        self.ended = true;
        self.detach();
    }

    fn detach(&self) {
        let end = PostEnd::Left(self.session.streams.release_post(self.stream, &self.frames, self.log_stream));
        let saves = finish_post(&self.session, self.stream, self.session_id.as_deref(), end);
        if let (true, Some(id)) = (saves, &self.session_id) {
            let (shared, session, id) = (Arc::clone(&self.shared), self.session.clone(), id.clone());
            self.spawner.detach(async move { save(&shared, &session, &id).await });
        }
    }
}

impl<S: Send + 'static> Drop for PostStream<S> {
    fn drop(&mut self) {
        if !self.ended {
            self.detach();
        }
    }
}

/// Why a POST's response ends right after its first steps, its request going on.
#[derive(Clone, Copy)]
enum Early {
    /// The handler freed the connection (SSE polling).
    Disconnect,
    /// The writer was cut (it lagged past its limit) before its first frame; the stream goes
    /// on in this log stream, if the session logs.
    Cut(Option<u64>),
}

impl Early {
    /// The core's name for it.
    const fn as_core(self) -> EarlyEnd {
        match self {
            Self::Disconnect => EarlyEnd::Disconnected,
            Self::Cut(_) => EarlyEnd::Cut,
        }
    }
}

/// Feeds one POST body to the session and answers with its reply: 202, a JSON body, or an SSE
/// stream (logged, primed and resumable when the session has an event log). The session is
/// finished before the reply's last bytes go out, so a client that goes on at once (to another
/// server sharing the store) finds it stored.
async fn post<S: Send + 'static>(
    context: &Arc<Context<S>>,
    session: Session<S>,
    visit: Option<Visit>,
    body: &[u8],
    session_id: Option<String>,
) -> Response<Body> {
    let shared = &context.shared;
    let (stream, frames) = feed_post(shared, &session, visit, body);
    let mut pending = PostStream {
        shared: Arc::clone(shared),
        session,
        stream,
        frames,
        session_id,
        log_stream: None,
        spawner: context.spawner.clone(),
        ended: false,
    };
    // Only a stateless exchange has no session id.
    let mut reply = match pending.session_id {
        None => Reply::stateless(shared.options.reply_mode),
        Some(_) => Reply::new(shared.options.reply_mode),
    };
    let keepalive = keepalive_interval(shared.options.sse_keepalive);
    let (first, early) = loop {
        let next = smol::future::or(async { Some(pending.frames.recv_async().await) }, async {
            Timer::after(keepalive).await;
            None
        })
        .await;
        let (steps, early) = match next {
            Some(Ok(StreamMsg::Frame(payload, carries))) => (reply.frame(&carries, payload), None),
            Some(Ok(StreamMsg::Done) | Err(_)) => (reply.done(), None),
            // A long wait: answer with a stream, kept alive.
            None => (reply.idle(), None),
            // The handler frees the connection: the client needs a stream to resume.
            Some(Ok(StreamMsg::Disconnect)) => (reply.start_stream(), Some(Early::Disconnect)),
            // Cut before the first frame: the stream goes on in the log the cut opened.
            Some(Ok(StreamMsg::Cut(log_stream))) => (reply.start_stream(), Some(Early::Cut(log_stream))),
        };
        match steps.first() {
            None => {}
            Some(ReplyStep::Accepted) => {
                let response = answer(202, pending.session_id.as_deref(), None, Body::empty());
                pending.finish().await;
                return response;
            }
            Some(ReplyStep::Json { status, body }) => {
                let json = Some(HeaderValue::from_static("application/json"));
                let response = answer(*status, pending.session_id.as_deref(), json, Body::whole(body.clone()));
                pending.finish().await;
                return response;
            }
            Some(_) => break (steps, early),
        }
    };
    let session = &pending.session;
    // With a relay, the log notes whose stream this is, for a process the client may resume
    // it on.
    let claim = pending.session_id.as_ref().and_then(|_| claim_of_stream(shared, session, stream));
    let start = StreamStart::for_post(version_of(session), early.map(Early::as_core));
    let log_stream = match (start.log, early) {
        (LogOpening::Opened, Some(Early::Cut(log_stream))) => log_stream,
        (LogOpening::Now, _) if session.streams.log().is_some_and(Log::is_remote) => {
            let streams = session.streams.clone();
            let claim = claim.clone();
            smol::unblock(move || streams.log_post(stream, claim.as_deref())).await
        }
        (LogOpening::Now, _) => session.streams.log_post(stream, claim.as_deref()),
        _ => None,
    };
    let log = log_stream.and_then(|id| Some((session.streams.log()?.clone(), id)));
    pending.log_stream = log_stream;
    let priming = match start.opening {
        Opening::Priming => SseBytes::new(log.clone()).prime(shared.options.sse_retry),
        Opening::FirstLogged => {
            pending.log_stream.and_then(|id| session.streams.first_logged(id)).map(|event| SseBytes::replayed(&event))
        }
        _ => None,
    };
    let bytes = if start.log == LogOpening::WithFirstEvent && session.streams.log().is_some() {
        SseBytes::with_first_event(session.streams.clone(), stream, claim)
    } else {
        SseBytes::new(log)
    };
    let (body, out) = Body::streamed();
    let response = event_stream(pending.session_id.as_deref(), body);
    let keepalive = shared.options.sse_keepalive;
    context.spawner.detach(async move {
        let mut ok = true;
        if let Some(priming) = priming {
            ok = out.write(priming).await;
        }
        let mut events: Vec<Vec<u8>> = first
            .into_iter()
            .filter_map(|step| if let ReplyStep::Event(payload) = step { Some(payload) } else { None })
            .collect();
        let last = events.pop();
        // Every event is logged, even once the client is gone: the stream is resumable.
        for payload in events {
            let event = bytes.event(&payload).await;
            ok = ok && out.write(event).await;
        }
        // The answer in the first steps, its end already queued: logged and the log closed in
        // one step, as `pump` does.
        let mut complete = false;
        if let Some(payload) = last {
            complete = ok && early.is_none() && pending.frames.next_is(|msg| matches!(msg, StreamMsg::Done));
            let event = if complete { bytes.last_event(&payload).await } else { bytes.event(&payload).await };
            ok = ok && out.write(event).await;
        }
        let ending = if !ok {
            Ending::Gone
        } else if complete {
            Ending::Finished
        } else if early.is_some() {
            Ending::Disconnected
        } else {
            pump(&out, &bytes, &pending.frames, keepalive, true).await
        };
        match ending {
            Ending::Finished => {
                pending.finish().await;
                bytes.close_log().await;
            }
            // The response ends (the writer is dropped) before the stream is detached; what the
            // stream carries from then on goes to its log. A log that was to open with a first
            // event that never came stays unopened: the client has no id to resume from, and
            // its request goes on (only the stateless era cancels on a closed stream).
            Ending::Disconnected | Ending::Gone => {
                drop(out);
                pending.log_stream = pending.log_stream.or_else(|| bytes.log_stream());
                pending.leave();
            }
        }
    });
    response
}

/// GET with `Mcp-Session-Id`: the session's stream for server messages, or, with
/// `Last-Event-ID`, the resumption of the stream that event belongs to (the GET stream, or a
/// POST stream that ended early).
async fn open_stream<S: Send + 'static>(
    context: &Arc<Context<S>>,
    session: &Session<S>,
    last_event_id: Option<&str>,
) -> Response<Body> {
    let keepalive = context.shared.options.sse_keepalive;
    let (body, out) = Body::streamed();
    // A remote log (Redis, say) is read and written off the executor's threads.
    let remote = session.streams.log().is_some_and(Log::is_remote);
    if let Some(last) = last_event_id {
        let after = last.trim().parse::<EventId>().ok();
        let resumed = match after {
            Some(after) if remote => {
                let streams = session.streams.clone();
                smol::unblock(move || {
                    // If it is the GET stream, taken over here, the other processes hear of it.
                    let peers = streams.peers().cloned();
                    if let Some(peers) = &peers {
                        peers.expect_announcement();
                    }
                    let resumed = streams.resume(after);
                    let get = resumed.as_ref().is_some_and(|r| r.post.is_none() && r.frames.is_some());
                    match peers {
                        Some(peers) if get => peers.announce(),
                        Some(peers) => peers.withdraw(),
                        None => {}
                    }
                    resumed
                })
                .await
            }
            Some(after) => session.streams.resume(after),
            None => None,
        };
        let (Some(after), Some(resumed)) = (after, resumed) else {
            return refuse(Refusal::bad_request(&format!("Last-Event-ID {last} is not an event of this session")));
        };
        let bytes = SseBytes::new(session.streams.log().map(|log| (log.clone(), resumed.log)));
        let (session, shared) = (session.clone(), Arc::clone(&context.shared));
        context.spawner.detach(async move {
            let mut ok = out.write(OPENED).await;
            for event in &resumed.events {
                ok = ok && out.write(SseBytes::replayed(event)).await;
            }
            let Some(frames) = resumed.frames else {
                // Another process's stream, not ended: followed here.
                if let (true, false, true, Some(log)) =
                    (ok, resumed.closed, follows_others(&shared), session.streams.log().cloned())
                {
                    let last = resumed.events.last().map_or(after, |event| event.id);
                    follow_other(&shared, &log, last, &out, keepalive).await;
                }
                return;
            };
            let closes_log = resumed.post.is_some();
            let ending = if ok { pump(&out, &bytes, &frames, keepalive, closes_log).await } else { Ending::Gone };
            match (ending, resumed.post) {
                // The POST stream's request is answered: its log stream is complete.
                (Ending::Finished, Some(_)) => bytes.close_log().await,
                (_, Some(stream)) => {
                    drop(out);
                    let end = PostEnd::ResumedLeft(session.streams.release_post(stream, &frames, Some(resumed.log)));
                    // Not the POST's own exchange (no session id): nothing to store.
                    let _ = finish_post(&session, stream, None, end);
                }
                // The GET stream is never complete; this one was replaced or the session ended.
                (_, None) => {}
            }
        });
        return event_stream(None, body);
    }
    // The other processes sharing the session hear of the stream before its response starts
    // (see `GetStreamPeers`).
    let peers = session.streams.peers().cloned();
    if let Some(peers) = &peers {
        peers.expect_announcement();
    }
    let frames = session.streams.open_get();
    let get_log = if remote || peers.is_some() {
        let streams = session.streams.clone();
        smol::unblock(move || {
            if let Some(peers) = peers {
                peers.announce();
            }
            streams.get_log()
        })
        .await
    } else {
        session.streams.get_log()
    };
    let bytes = SseBytes::new(get_log.and_then(|id| Some((session.streams.log()?.clone(), id))));
    // 2025-11-25: a priming event (an id, no data) lets the client resume even before the
    // first message arrives.
    let priming =
        if primes_streams(version_of(session)) { bytes.prime(context.shared.options.sse_retry) } else { None };
    context.spawner.detach(async move {
        let mut ok = out.write(OPENED).await;
        if let Some(priming) = priming {
            ok = ok && out.write(priming).await;
        }
        if ok {
            pump(&out, &bytes, &frames, keepalive, false).await;
        }
    });
    event_stream(None, body)
}

/// GET on the legacy stream path: a new session whose stream opens with the `endpoint` event;
/// the session ends with the stream.
fn legacy_open<S: Send + 'static>(
    context: &Arc<Context<S>>,
    request: (&str, Option<&str>),
    identity: Option<String>,
    peer: Option<SocketAddr>,
) -> Response<Body> {
    let (method, origin) = request;
    let shared = &context.shared;
    let (id, session, endpoint) = match legacy_session(shared, method, origin, identity, peer.map(|p| p.to_string())) {
        Ok(opened) => opened,
        Err(refusal) => return refuse(refusal),
    };
    let frames = session.streams.open_get();
    let (body, out) = Body::streamed();
    let keepalive = shared.options.sse_keepalive;
    let closing = LegacyStream { shared: Arc::clone(shared), id };
    context.spawner.detach(async move {
        let mut opening = OPENED.to_vec();
        opening.extend_from_slice(&endpoint);
        if out.write(opening).await {
            pump(&out, &SseBytes::new(None), &frames, keepalive, false).await;
        }
        drop(closing);
    });
    event_stream(None, body)
}

/// A legacy session's stream: the session ends with it, however it ends.
struct LegacyStream<S: Send + 'static> {
    shared: Arc<Shared<S>>,
    id: String,
}

impl<S: Send + 'static> Drop for LegacyStream<S> {
    fn drop(&mut self) {
        legacy_closed(&self.shared, &self.id);
    }
}

/// Writes frames as SSE events as they come, until the stream ends, the server ends it, or the
/// client goes away (noticed at once, not at the next write); a stream silent for `keepalive`
/// gets a comment, for the proxies between. For a stream whose log is closed when it is
/// complete (`closes_log`), a last frame whose end is already queued is logged and the log
/// closed in one step (one round trip less with a remote log).
async fn pump(
    out: &BodyWriter,
    bytes: &SseBytes,
    frames: &Receiver<StreamMsg>,
    keepalive: Duration,
    closes_log: bool,
) -> Ending {
    let keepalive = keepalive_interval(keepalive);
    loop {
        let waiting = async { Wake::Frame(frames.recv_async().await) };
        let next = smol::future::or(waiting, async {
            smol::future::or(
                async {
                    Timer::after(keepalive).await;
                    Wake::Quiet
                },
                async {
                    out.gone().await;
                    Wake::Gone
                },
            )
            .await
        })
        .await;
        let written = match next {
            Wake::Frame(Ok(StreamMsg::Frame(payload, _))) if payload.is_empty() => true,
            Wake::Frame(Ok(StreamMsg::Frame(payload, _))) => {
                // The end left queued: a stream detached now still finds it.
                if closes_log && frames.next_is(|msg| matches!(msg, StreamMsg::Done)) {
                    let written = out.write(bytes.last_event(&payload).await).await;
                    return if written { Ending::Finished } else { Ending::Gone };
                }
                out.write(bytes.event(&payload).await).await
            }
            Wake::Quiet => out.write(SseBytes::keepalive()).await,
            Wake::Frame(Ok(StreamMsg::Done) | Err(_)) => return Ending::Finished,
            Wake::Frame(Ok(StreamMsg::Disconnect | StreamMsg::Cut(_))) => return Ending::Disconnected,
            Wake::Gone => return Ending::Gone,
        };
        if !written {
            return Ending::Gone;
        }
    }
}

/// How often a stream another process writes is looked at.
const FOLLOW_POLL: Duration = Duration::from_millis(100);

/// Every how many looks the writer's lease is checked too.
const LEASE_EVERY: u32 = 5;

/// Follows a stream another process writes (a client resumed it here) after `last`: what it
/// logs is sent on as it comes, until the stream ends. If the writer's lease lapses first (it
/// died), the requests it was answering end with errors, logged as the stream's last events
/// (one step, so that a stream gets one ending however many processes follow it).
async fn follow_other<S: Send + 'static>(
    shared: &Arc<Shared<S>>,
    log: &Log,
    mut last: EventId,
    out: &BodyWriter,
    keepalive: Duration,
) {
    let mut quiet = Duration::ZERO;
    let mut look = 0u32;
    loop {
        let (shared, follow_log) = (Arc::clone(shared), log.clone());
        let lease = look % LEASE_EVERY == 0;
        look = look.wrapping_add(1);
        let (events, step) = smol::unblock(move || look_at_followed(&shared, &follow_log, last, lease)).await;
        for event in &events {
            if !out.write(SseBytes::replayed(event)).await {
                return;
            }
            last = event.id;
            quiet = Duration::ZERO;
        }
        match step {
            Follow::End => return,
            Follow::Wait => {}
            Follow::Abandon(answers) => {
                // The next look sends them (or whatever ending won).
                let log = log.clone();
                smol::unblock(move || end_abandoned(&log, last.stream, &answers)).await;
                continue;
            }
        }
        Timer::after(FOLLOW_POLL).await;
        quiet += FOLLOW_POLL;
        if quiet >= keepalive_interval(keepalive) {
            if !out.write(SseBytes::keepalive()).await {
                return;
            }
            quiet = Duration::ZERO;
        }
    }
}

/// Logs `answers` as the last events of log stream `stream`, the last one ending it (nothing,
/// if the stream ended meanwhile).
fn end_abandoned(log: &Log, stream: u64, answers: &[Vec<u8>]) {
    let Some((final_answer, before)) = answers.split_last() else { return };
    for answer in before {
        if log.append(stream, answer).is_none() {
            return;
        }
    }
    let _ = log.append_last(stream, final_answer);
}

/// What ended a wait in [`pump`].
enum Wake {
    Frame(Result<StreamMsg, std::sync::mpsc::RecvError>),
    Quiet,
    Gone,
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_session_id_header_name_is_the_cores() {
        assert!(super::SESSION_ID_NAME.as_str().eq_ignore_ascii_case(talaria_core::http::headers::SESSION_ID));
    }
}
