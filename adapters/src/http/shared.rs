//! What both HTTP server flavours share: the session table and its records, the streams of
//! each session, and the steps of an exchange (the stores' calls awaited or run off the
//! executor's threads; no socket I/O).

use std::fmt::Write as _;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use talaria_core::http::event_log::{EventStore, MemoryEventStore, Retention};
use talaria_core::http::exchange::{classify, Exchange, HttpMethod, HttpRequest, Refusal};
use talaria_core::http::ids::try_mint_session_id;
use talaria_core::http::outcome::{after_post, AfterPost, PostEnd};
use talaria_core::http::sessions::SessionTable;
use talaria_core::server::{Headers, TransportInfo};
use talaria_core::session::{Route, StreamId};
use talaria_core::version::ProtocolVersion;

use super::chan::Receiver;
use super::options::HttpServerOptions;
use super::processes::{fan_out, fan_out_hook, for_another_process, number_requests, process_prefix, GetStreamPeers};
use super::record::{Saved, Stored};
use super::store_pool::SharedEventStore;
use super::streams::{Log, StreamMsg, Streams};
use crate::conn::Conn;
use crate::server::{Served, Server, UpdateHook};
use talaria_core::http::event_log::{Refresh, SessionStoreError, StoreIf};

/// A live legacy session: its connection and its response streams.
pub(super) struct Session<S> {
    pub(super) conn: Arc<Conn<Served<S>>>,
    pub(super) streams: Streams,
    /// The record last written to (or read from) the session store, so that an exchange that
    /// changed nothing writes nothing.
    saved: Arc<Mutex<Saved>>,
    /// Taken by the refreshes and saves of this `Session`, one at a time, so that each merges
    /// another process's record against the record it started from.
    store_turn: Arc<smol::lock::Mutex<()>>,
}

impl<S> Clone for Session<S> {
    fn clone(&self) -> Self {
        Self {
            conn: Arc::clone(&self.conn),
            streams: self.streams.clone(),
            saved: Arc::clone(&self.saved),
            store_turn: Arc::clone(&self.store_turn),
        }
    }
}

impl<S> Session<S> {
    pub(super) fn new(conn: Arc<Conn<Served<S>>>, streams: Streams) -> Self {
        Self {
            conn,
            streams,
            saved: Arc::new(Mutex::new(Saved::default())),
            store_turn: Arc::new(smol::lock::Mutex::new(())),
        }
    }

    /// What the store holds of the session, as far as this process knows.
    fn saved(&self) -> MutexGuard<'_, Saved> {
        self.saved.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The most times a save merges another process's newer record and tries again.
const MAX_MERGES: usize = 16;

pub(super) struct Shared<S> {
    pub(super) server: Server<S>,
    pub(super) options: HttpServerOptions,
    pub(super) sessions: Mutex<SessionTable<Session<S>>>,
    /// The SSE event log, for resuming after `Last-Event-ID`.
    pub(super) events: SharedEventStore,
    /// The largest event `events` keeps ([`EventStore::max_event_bytes`]).
    pub(super) max_event: Option<usize>,
    pub(super) next_stream: AtomicU64,
    /// With a relay: what this process's server-to-client request ids start with, unique
    /// among the processes sharing sessions.
    pub(super) request_prefix: Option<String>,
    /// With a relay: publishes the server's resource updates to every process (registered
    /// with the server for as long as this lives).
    pub(super) update_hook: Option<Arc<UpdateHook>>,
    /// With a relay: where the resource updates other processes publish are queued for the
    /// task that takes them in (see `processes::listen_to_relay`).
    pub(super) updates: std::sync::OnceLock<super::chan::Sender<String>>,
}

impl<S: Send + 'static> Shared<S> {
    /// The state of a server of `server` listening on `addr`.
    pub(super) fn new(server: &Server<S>, addr: SocketAddr, options: HttpServerOptions) -> Self {
        let mut options = options;
        if addr.ip().is_loopback() && options.endpoint.allowed_hosts.is_none() {
            // Against DNS rebinding: a loopback server answers only to loopback names.
            options.endpoint = options.endpoint.localhost_only(&[]);
        }
        let idle = options.endpoint.idle_timeout;
        let events = options
            .event_store
            .clone()
            .unwrap_or_else(|| SharedEventStore::new(MemoryEventStore::new(Retention::default())));
        let max_event = events.with(|store| store.max_event_bytes());
        Self {
            server: server.clone(),
            sessions: Mutex::new(
                SessionTable::new(idle, options.endpoint.max_sessions)
                    .per_owner(options.endpoint.max_sessions_per_peer),
            ),
            events,
            max_event,
            request_prefix: options.relay.as_ref().and_then(|_| process_prefix()),
            update_hook: fan_out_hook(server, &options),
            updates: std::sync::OnceLock::new(),
            options,
            next_stream: AtomicU64::new(1),
        }
    }

    /// How many legacy sessions are live.
    pub(super) fn session_count(&self) -> usize {
        self.sessions.lock().unwrap_or_else(PoisonError::into_inner).len()
    }
}

/// Ends the sessions idle past their expiry; how long until it is worth looking again.
pub(super) fn expire_due<S: Send + 'static>(shared: &Shared<S>) -> Duration {
    let now = Instant::now();
    let (expired, next) = {
        let mut table = shared.sessions.lock().unwrap_or_else(PoisonError::into_inner);
        let expired = table.expire(now);
        (expired, table.poll_timeout())
    };
    for (id, session) in expired {
        end_session(&session);
        let _ = shared.events.with(|events| events.drop_session(&id));
    }
    let pause = next.map_or(Duration::from_millis(200), |at| at.saturating_duration_since(now));
    pause.clamp(Duration::from_millis(5), Duration::from_millis(200))
}

pub(super) fn end_session<S: Send + 'static>(session: &Session<S>) {
    session.conn.with(|served, now| served.endpoint.handle_closed(now));
    session.streams.close_all();
}

/// Opens a new session's connection and enters it in the table (making room as the table
/// does, see `SessionTable::admit`): 500 if the connection cannot be opened, 503 if the table
/// is full of sessions in use.
pub(super) fn start_session<S: Send + 'static>(
    shared: &Shared<S>,
    id: &str,
    streams: Streams,
    info: TransportInfo,
) -> Result<Session<S>, Refusal> {
    let owner = owner_of(&info);
    let conn = shared
        .server
        .open(Box::new(streams.clone()), info, shared.server.peer_error_events("http"))
        .map_err(|_| Refusal::internal("cannot open the session"))?;
    let session = Session::new(conn, streams);
    number_requests(shared, &session);
    if !admit(shared, id, &session, owner.as_deref()) {
        end_session(&session);
        return Err(Refusal::too_many_sessions());
    }
    Ok(session)
}

/// Enters `session` in the table for `owner`, ending the sessions it replaces; `false` if the
/// table is full of sessions in use.
fn admit<S: Send + 'static>(shared: &Shared<S>, id: &str, session: &Session<S>, owner: Option<&str>) -> bool {
    let admitted = shared.sessions.lock().unwrap_or_else(PoisonError::into_inner).admit(
        id.to_owned(),
        session.clone(),
        owner,
        Instant::now(),
    );
    let Ok(evicted) = admitted else { return false };
    end_evicted(shared, evicted);
    true
}

/// Ends the sessions the table gave up to make room, and drops their logs.
fn end_evicted<S: Send + 'static>(shared: &Shared<S>, evicted: Vec<(String, Session<S>)>) {
    if !evicted.is_empty() {
        let events = shared.events.clone();
        off_executor(shared, move || {
            for (id, session) in evicted {
                end_session(&session);
                let _ = events.with(|events| events.drop_session(&id));
            }
        });
    }
}

/// Runs `work`, which may call the event store (sessions' streams logging as they end), off
/// the executor's threads when that store is remote, without waiting for it; here otherwise.
fn off_executor<S>(shared: &Shared<S>, work: impl FnOnce() + Send + 'static) {
    if shared.options.event_store.is_some() {
        smol::unblock(work).detach();
    } else {
        work();
    }
}

/// Whom a session is counted against: the caller the authorization hook named, else the
/// peer's IP address (any port).
fn owner_of(info: &TransportInfo) -> Option<String> {
    if let Some(identity) = &info.identity {
        return Some(format!("identity:{identity}"));
    }
    let addr = info.remote_addr.as_deref()?;
    Some(addr.parse::<SocketAddr>().map_or_else(|_| addr.to_owned(), |addr| addr.ip().to_string()))
}

/// Stores the session's record, if a store is configured, the session's `initialize` was
/// answered, and its record changed since it was last stored or read (the request already
/// marked it used: see [`refresh`]).
///
/// Another process may have stored the session since (it served a request of the same session
/// at the same time): the record is then written only over the one this process started from
/// ([`StoreIf`]), and if another is there, the two are merged (each side's changes kept:
/// [`Served::merge`]) and the merged record stored in its place. A first record is written only
/// where the store has none (`store_new`), so that a first write whose answer was lost, landing
/// late, cannot replace a record written since.
pub(super) async fn save<S: Send + 'static>(shared: &Shared<S>, session: &Session<S>, id: &str) {
    let Some(store) = &shared.options.session_store else { return };
    let _turn = session.store_turn.lock().await;
    let Some(plain) = changed_record(session) else { return };
    // What the store should hold: none for a first record, else the one this process last
    // stored or read, or its last write in doubt.
    let mut expected = session.saved().base();
    let mut record = Stored::stamp(plain, expected.as_ref());
    let mut first = expected.is_none();
    let mut first_in_doubt = !first && session.saved().record().is_none();
    for _ in 0..MAX_MERGES {
        let done = match expected.as_ref().filter(|_| !first) {
            Some(expected) => store.store_if(id, record.bytes.clone(), expected.bytes.clone(), Instant::now()).await,
            None => store.store_new(id, record.bytes.clone(), Instant::now()).await,
        };
        match done {
            Ok(StoreIf::Stored) => {
                session.saved().set(record);
                return;
            }
            // The first write, in doubt, did not land after all: this one is the first.
            Ok(StoreIf::Gone) if first_in_doubt => {
                first = true;
                first_in_doubt = false;
            }
            Ok(StoreIf::Changed(theirs)) => {
                let Some((theirs, snapshot)) = Stored::read(theirs.data) else { return };
                // Against this process's write in doubt if it landed, even under another's.
                // (A first write finding a record that holds none of this process's writes
                // cannot happen with random session ids: this process's state is kept.)
                let known = expected.unwrap_or_else(|| theirs.clone());
                let base = session.saved().merge_base(&theirs, known);
                let Some(merged) = session.conn.with(|served, _| served.merge(&base.plain, snapshot)) else {
                    return;
                };
                (first, first_in_doubt) = (false, false);
                let unchanged = merged == theirs.plain;
                session.saved().set(theirs.clone());
                if unchanged {
                    // Nothing here that the store's record lacks (an earlier write landed).
                    return;
                }
                record = Stored::stamp(merged, Some(&theirs));
                expected = Some(theirs);
            }
            Err(_) => {
                session.saved().doubt(record);
                return;
            }
            // Deleted elsewhere: the next request's refresh finds it gone. A session with no
            // record yet is not refreshed (there is nothing to check), so it ends here.
            Ok(StoreIf::Gone) => {
                if first {
                    drop_local(shared, id);
                }
                return;
            }
            _ => return,
        }
    }
}

/// Whether [`save`] would have a record to store for `session`: a store is configured and the
/// session's record differs from the one last stored or read (no store call). Without the
/// session's store turn, so only a hint that nothing is to be stored: a record that differs
/// here is checked again by `save`, under it.
pub(super) fn has_unsaved_changes<S: Send + 'static>(shared: &Shared<S>, session: &Session<S>) -> bool {
    shared.options.session_store.is_some() && changed_record(session).is_some()
}

/// The session's snapshot as written, if it differs from the record last stored or read (no
/// store call: a snapshot and a comparison).
fn changed_record<S: Send + 'static>(session: &Session<S>) -> Option<Vec<u8>> {
    let snapshot = session.conn.with(|served, _| served.snapshot())?;
    let plain = serde_json::to_vec(&snapshot).ok()?;
    let saved = session.saved();
    (saved.record().map(|record| &record.plain[..]) != Some(&plain[..])).then_some(plain)
}

/// Checks the session `id`, held here, against the store, and marks it used there: current,
/// changed by another process (the newer record is taken in, what is under way here goes on),
/// deleted elsewhere (404, and dropped here), or unknown because the store cannot be reached
/// (503). Without a store, or for a session not stored yet, it is current.
pub(super) async fn refresh<S: Send + 'static>(
    shared: &Shared<S>,
    id: &str,
    session: &Session<S>,
) -> Result<(), Refusal> {
    let Some(store) = &shared.options.session_store else { return Ok(()) };
    let _turn = session.store_turn.lock().await;
    // Not stored yet, as far as this process knows (a first write in doubt included: the
    // save after this request settles it).
    let Some(known) = session.saved().record().cloned() else {
        return Ok(());
    };
    let refreshed = store.refresh(id, Instant::now(), known.bytes.clone()).await;
    take_refresh(shared, id, session, known, refreshed)
}

/// What the store's refresh of the session `id`, held here, says for the request.
/// A newer record is merged with what changed here since `known` (changes this process has
/// not stored yet are kept).
fn take_refresh<S: Send + 'static>(
    shared: &Shared<S>,
    id: &str,
    session: &Session<S>,
    known: Stored,
    refreshed: Result<Refresh, SessionStoreError>,
) -> Result<(), Refusal> {
    match refreshed {
        Ok(Refresh::Gone) => {
            drop_local(shared, id);
            Err(Refusal::unknown_session())
        }
        Ok(Refresh::Changed(record)) => {
            // Against this process's write in doubt if it landed, even under another's.
            let merged = Stored::read(record.data).and_then(|(found, snapshot)| {
                let base = session.saved().merge_base(&found, known);
                session.conn.with(|served, _| served.merge(&base.plain, snapshot)).map(|_| found)
            });
            let Some(found) = merged else {
                drop_local(shared, id);
                return Err(Refusal::unknown_session());
            };
            session.saved().set(found);
            Ok(())
        }
        Ok(_) => Ok(()),
        Err(_) => Err(Refusal::store_unavailable()),
    }
}

/// A session held here but gone from the store (or whose record cannot be read): ended here.
fn drop_local<S: Send + 'static>(shared: &Shared<S>, id: &str) {
    let removed = shared.sessions.lock().unwrap_or_else(PoisonError::into_inner).remove(id);
    if let Some(session) = removed {
        off_executor(shared, move || end_session(&session));
    }
}

/// The session `id` for a request with `visit`: held here and current, brought back from the
/// store, or refused.
async fn session_for<S: Send + 'static>(
    shared: &Shared<S>,
    id: &str,
    visit: Visit,
) -> Result<(Session<S>, Option<Visit>), Refusal> {
    if let Some(held) = lookup(shared, id) {
        refresh(shared, id, &held).await?;
        return Ok((held, Some(visit)));
    }
    match restore(shared, id, visit.clone().info(Some(id))).await? {
        Some(Revived::Opened(session)) => Ok((session, None)),
        // Read from the store before this request's client may have last written it.
        Some(Revived::Held(held)) => {
            refresh(shared, id, &held).await?;
            Ok((held, Some(visit)))
        }
        None => Err(Refusal::unknown_session()),
    }
}

/// A session brought back from the store for a request.
enum Revived<S> {
    /// Opened here from its record, and entered in the table.
    Opened(Session<S>),
    /// Another request brought it back meanwhile, and that one is held here: the request goes
    /// on with it (replacing it would drop what its requests changed and had not stored yet).
    Held(Session<S>),
}

/// A session this process does not hold, brought back from the store (another process, or
/// this one before a restart, initialized it): `Ok(None)` if there is none to bring back, a
/// 503 if the store cannot be reached (the session may well be there).
async fn restore<S: Send + 'static>(
    shared: &Shared<S>,
    id: &str,
    info: TransportInfo,
) -> Result<Option<Revived<S>>, Refusal> {
    let Some(store) = shared.options.session_store.as_ref() else { return Ok(None) };
    let loaded = store.load(id).await;
    let record = match loaded {
        Ok(Some(record)) => record,
        Ok(None) => return Ok(None),
        Err(_) => return Err(Refusal::store_unavailable()),
    };
    Ok(revive(shared, id, info, record))
}

/// The session `id` opened here from its stored `record`, or the one held here if another
/// request brought it back meanwhile (`None` if it cannot be opened).
fn revive<S: Send + 'static>(
    shared: &Shared<S>,
    id: &str,
    info: TransportInfo,
    record: talaria_core::http::event_log::SessionRecord,
) -> Option<Revived<S>> {
    let (stored, snapshot) = Stored::read(record.data)?;
    let streams = logged_streams(shared, id);
    let conn = shared
        .server
        .open_from(Box::new(streams.clone()), info, shared.server.peer_error_events("http"), Some(snapshot))
        .ok()?;
    let session = Session::new(conn, streams);
    number_requests(shared, &session);
    fan_out(shared, &session);
    session.saved().set(stored);
    let owner = session.conn.with(|served, _| served.endpoint.transport().and_then(owner_of));
    let admitted = {
        let mut sessions = shared.sessions.lock().unwrap_or_else(PoisonError::into_inner);
        match sessions.get_mut(id, Instant::now()) {
            Some(held) => Err(held.clone()),
            None => Ok(sessions.admit(id.to_owned(), session.clone(), owner.as_deref(), Instant::now())),
        }
    };
    match admitted {
        Err(held) => {
            end_session(&session);
            Some(Revived::Held(held))
        }
        Ok(Err(_full)) => {
            end_session(&session);
            None
        }
        Ok(Ok(evicted)) => {
            end_evicted(shared, evicted);
            // It is in use: the request that brought it back goes on with it.
            lookup(shared, id);
            Some(Revived::Opened(session))
        }
    }
}

/// After an exchange, the session keeps what it knows of its transport but not the request's
/// headers: an idle session holds no copy of its last request (handlers that ran saw them).
pub(super) fn forget_headers<S: Send + 'static>(session: &Session<S>) {
    session.conn.with(|served, _| {
        if served.endpoint.transport().is_some_and(|info| !info.headers.is_empty()) {
            served.endpoint.transport_mut().headers = Headers::new();
        }
    });
}

/// The response streams of the session `id`, logged in the server's event store.
fn logged_streams<S: Send + 'static>(shared: &Shared<S>, id: &str) -> Streams {
    let remote = shared.options.event_store.is_some();
    let log = Some(Log::new(shared.events.clone(), id, remote).keeping_at_most(shared.max_event));
    if shared.options.session_store.is_some() {
        Streams::shared(log, shared.server.frame_queue_limit(), GetStreamPeers::of(shared, id))
    } else {
        Streams::new(log, shared.server.frame_queue_limit())
    }
}

pub(super) fn lookup<S>(shared: &Shared<S>, id: &str) -> Option<Session<S>> {
    shared.sessions.lock().unwrap_or_else(PoisonError::into_inner).get_mut(id, Instant::now()).cloned()
}

/// Carries out what the core says follows a POST exchange on `stream` that ended as `end`
/// ([`after_post`]): a stateless session ends; a legacy one (`session_id`) forgets the
/// request's headers; a stream whose writer left unlogged is closed, which cancels its request
/// (a logged one waits for the client to resume it). Returns whether the session is to be
/// stored next ([`save`], which the caller awaits or spawns).
#[must_use]
pub(super) fn finish_post<S: Send + 'static>(
    session: &Session<S>,
    stream: StreamId,
    session_id: Option<&str>,
    end: PostEnd,
) -> bool {
    let mut saves = false;
    for step in after_post(session_id.is_some(), end) {
        match step {
            AfterPost::CloseStream => close_stream(session, stream),
            AfterPost::EndSession => session.conn.with(|served, now| served.endpoint.handle_closed(now)),
            AfterPost::ForgetHeaders => forget_headers(session),
            AfterPost::Save => saves = session_id.is_some(),
            _ => {}
        }
    }
    saves
}

/// Tells the session the response stream `stream` closed: its request is cancelled.
fn close_stream<S: Send + 'static>(session: &Session<S>, stream: StreamId) {
    session.conn.with(|served, now| served.endpoint.handle_stream_closed(now, stream));
}

/// The protocol revision the session negotiated, if any yet.
pub(super) fn version_of<S: Send + 'static>(session: &Session<S>) -> Option<ProtocolVersion> {
    session.conn.with(|served, _| served.endpoint.session().version())
}

/// Which part of the server a request path is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Target {
    /// The MCP endpoint.
    Mcp,
    /// The legacy HTTP+SSE stream path.
    LegacyOpen,
    /// The legacy HTTP+SSE messages path.
    LegacyPost,
    /// The Protected Resource Metadata (served to anyone, without authorization).
    ResourceMetadata,
    /// Nothing here: 404.
    Elsewhere,
}

/// Where a request for `path` (query included or not) goes.
pub(super) fn target(options: &HttpServerOptions, path: &str) -> Target {
    let path = path.split('?').next().unwrap_or("");
    if path == options.path {
        return Target::Mcp;
    }
    if options.resource_metadata.as_ref().is_some_and(|(metadata, _)| metadata == path) {
        return Target::ResourceMetadata;
    }
    match &options.legacy_sse {
        Some((sse, _)) if path == sse => Target::LegacyOpen,
        Some((_, messages)) if path == messages => Target::LegacyPost,
        _ => Target::Elsewhere,
    }
}

/// What to do with a request for the MCP endpoint, decided by [`plan`] (with the session store's
/// round trip, if the request names a stored session).
pub(super) enum Plan<S> {
    /// Answer with this refusal.
    Refuse(Refusal),
    /// Answer `200` with no body (the session ended).
    Ended,
    /// Answer `202`: the body's answers were relayed to the process that waits for them.
    Relayed,
    /// Feed the body to the session and write its reply, finishing the session ([`finish_post`])
    /// before the reply's last bytes.
    Post {
        /// The session (a fresh one for a stateless request).
        session: Session<S>,
        /// The `Mcp-Session-Id` to answer with, for a legacy session.
        session_id: Option<String>,
        /// What the request tells an existing session about its transport, for [`feed_post`]
        /// (a session the request opened knows it already).
        visit: Option<Visit>,
    },
    /// Open the session's GET stream, or resume a stream after `last_event_id`.
    OpenStream {
        /// The session.
        session: Session<S>,
        /// `Last-Event-ID`, if sent.
        last_event_id: Option<String>,
    },
}

/// Plans a request for the MCP endpoint: `method`, `headers`, `body` as received, from the
/// caller `identity` (the authorization hook's) at `remote_addr`.
pub(super) async fn plan<S: Send + 'static>(
    shared: &Shared<S>,
    method: HttpMethod,
    headers: Headers,
    body: &[u8],
    identity: Option<String>,
    remote_addr: Option<SocketAddr>,
) -> Plan<S> {
    let exchange = match classify(&HttpRequest { method, headers: &headers, body }, &shared.options.endpoint) {
        Ok(exchange) => exchange,
        Err(refusal) => return Plan::Refuse(refusal),
    };
    let visit = Visit { headers, remote_addr, identity };
    match exchange {
        Exchange::Stateless { .. } => {
            let streams = Streams::new(None, shared.server.frame_queue_limit());
            match shared.server.open(
                Box::new(streams.clone()),
                visit.info(None),
                shared.server.peer_error_events("http"),
            ) {
                Ok(conn) => {
                    let session = Session::new(conn, streams);
                    // A `subscriptions/listen` stream hears updates from every process.
                    if shared.update_hook.is_some() {
                        session.conn.with(|served, _| served.fanned_out = true);
                    }
                    Plan::Post { session, session_id: None, visit: None }
                }
                Err(_) => Plan::Refuse(Refusal::internal("cannot open the session")),
            }
        }
        Exchange::Initialize => {
            let Some(id) = fresh_session_id() else {
                return Plan::Refuse(Refusal::internal("no randomness for a session id"));
            };
            let streams = logged_streams(shared, &id);
            match start_session(shared, &id, streams, visit.info(Some(&id))) {
                Ok(session) => {
                    fan_out(shared, &session);
                    Plan::Post { session, session_id: Some(id), visit: None }
                }
                Err(refusal) => Plan::Refuse(refusal),
            }
        }
        Exchange::Post { session: id } => match session_for(shared, &id, visit).await {
            Ok((session, visit)) => match for_another_process(shared, &session, body) {
                Some(relay) => {
                    let body = body.to_vec();
                    smol::unblock(move || relay.publish(&id, &body)).await;
                    Plan::Relayed
                }
                None => Plan::Post { session, session_id: Some(id), visit },
            },
            Err(refusal) => Plan::Refuse(refusal),
        },
        // Another process's session opens here too (its events, if logged in a shared store,
        // resume here).
        Exchange::OpenStream { session: id, last_event_id } => match session_for(shared, &id, visit).await {
            Ok((session, _)) => Plan::OpenStream { session, last_event_id },
            Err(refusal) => Plan::Refuse(refusal),
        },
        Exchange::Terminate { session: id } => {
            let removed = shared.sessions.lock().unwrap_or_else(PoisonError::into_inner).remove(&id);
            // The store's word is authoritative: a session another process holds ends too.
            let stored = match &shared.options.session_store {
                Some(store) => match store.delete(&id).await {
                    Ok(had) => had,
                    Err(_) => return Plan::Refuse(Refusal::store_unavailable()),
                },
                None => false,
            };
            if removed.is_none() && !stored {
                return Plan::Refuse(Refusal::unknown_session());
            }
            let events = shared.events.clone();
            let end = move || {
                if let Some(session) = &removed {
                    end_session(session);
                }
                let _ = events.with(|events| events.drop_session(&id));
            };
            // A shared event store (Redis, say) is called off the executor's threads.
            if shared.options.event_store.is_some() {
                smol::unblock(end).await;
            } else {
                end();
            }
            Plan::Ended
        }
        _ => Plan::Refuse(Refusal::internal("an exchange this server does not know")),
    }
}

/// What a request tells its session about the transport: the request's headers, the peer,
/// and the caller as the authorization hook named it.
#[derive(Clone)]
pub(super) struct Visit {
    headers: Headers,
    remote_addr: Option<SocketAddr>,
    identity: Option<String>,
}

impl Visit {
    /// The transport information of a session this request opens (`session_id` for a legacy
    /// one).
    fn info(self, session_id: Option<&str>) -> TransportInfo {
        let mut info = TransportInfo::new("http");
        info.session_id = session_id.map(str::to_owned);
        self.apply(&mut info);
        info
    }

    /// Updates an existing session's transport information in place: the session's kind and
    /// id stay, and the peer address is written into the string the session has already.
    fn apply(self, info: &mut TransportInfo) {
        info.headers = self.headers;
        info.identity = self.identity;
        match self.remote_addr {
            None => info.remote_addr = None,
            Some(addr) => {
                let text = info.remote_addr.get_or_insert_with(String::new);
                text.clear();
                // Writing to a String cannot fail.
                let _ = write!(text, "{addr}");
            }
        }
    }
}

/// Opens a response stream for a POST and feeds its body to the session, with what the
/// request tells the session about its transport (if anything) in the same step: the stream,
/// and where its frames arrive.
pub(super) fn feed_post<S: Send + 'static>(
    shared: &Shared<S>,
    session: &Session<S>,
    visit: Option<Visit>,
    body: &[u8],
) -> (StreamId, Receiver<StreamMsg>) {
    let stream = StreamId(shared.next_stream.fetch_add(1, Ordering::Relaxed));
    let frames = session.streams.open_post(stream);
    session.conn.with(|served, now| {
        if let Some(visit) = visit {
            visit.apply(served.endpoint.transport_mut());
        }
        served.endpoint.handle_frame(now, Route::Stream(stream), body);
    });
    (stream, frames)
}

/// A POST on the legacy messages path (`path` with its query) carrying `body`: fed to the
/// session the query names. `Ok` means answer 202; the replies travel on the session's stream.
pub(super) fn legacy_message<S: Send + 'static>(shared: &Shared<S>, path: &str, body: &[u8]) -> Result<(), Refusal> {
    let Some(id) = talaria_core::http::legacy::session_in_query(path) else {
        return Err(Refusal::bad_request("the messages URL needs its sessionId"));
    };
    let Some(session) = lookup(shared, id) else { return Err(Refusal::unknown_session()) };
    session.conn.with(|served, now| served.endpoint.handle_frame(now, Route::Connection, body));
    Ok(())
}

/// A GET on the legacy stream path (`method`, its `Origin` if any): a new session for the
/// legacy HTTP+SSE transport, with its id, and the `endpoint` event to open its stream with.
pub(super) fn legacy_session<S: Send + 'static>(
    shared: &Shared<S>,
    method: &str,
    origin: Option<&str>,
    identity: Option<String>,
    remote_addr: Option<String>,
) -> Result<(String, Session<S>, Vec<u8>), Refusal> {
    if method != "GET" {
        return Err(Refusal::bad_request("open the legacy stream with GET"));
    }
    if origin.is_some_and(|origin| !shared.options.endpoint.origin_allowed(origin)) {
        return Err(Refusal { status: 403, body: None, headers: Vec::new() });
    }
    let id = fresh_session_id().ok_or_else(|| Refusal::internal("no randomness for a session id"))?;
    let mut info = TransportInfo::new("sse").with_session_id(id.clone());
    info.remote_addr = remote_addr;
    info.identity = identity;
    let session = start_session(shared, &id, Streams::new(None, shared.server.frame_queue_limit()), info)?;
    let messages = shared.options.legacy_sse.as_ref().map_or("/messages", |(_, m)| m.as_str());
    let endpoint = talaria_core::http::legacy::endpoint_event(messages, &id);
    Ok((id, session, endpoint))
}

/// The legacy stream of session `id` ended: so does the session.
pub(super) fn legacy_closed<S: Send + 'static>(shared: &Shared<S>, id: &str) {
    if let Some(session) = shared.sessions.lock().unwrap_or_else(PoisonError::into_inner).remove(id) {
        end_session(&session);
    }
}

/// A new session id from the operating system's CSPRNG; `None` if it failed (the server then
/// refuses, rather than mint an id from a buffer of zeros).
fn fresh_session_id() -> Option<String> {
    try_mint_session_id(|buf: &mut [u8]| getrandom::fill(buf)).ok()
}
