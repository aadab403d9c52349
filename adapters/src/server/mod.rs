//! Serving: one [`Server`] (a router, its configuration, per-session state) shared by every
//! connection, whatever the transport.
//!
//! Each connection gets its own [`Endpoint`] and state. Requests are handled on the thread that
//! read them; long-running tools ([`RouterBuilder::blocking_tool`]) run on a small pool and
//! answer when done, with cancellation reaching their [`Job`](talaria_core::server::Job).
//!
//! [`RouterBuilder::blocking_tool`]: talaria_core::server::RouterBuilder::blocking_tool

#[cfg(feature = "smol")]
pub(crate) mod async_tools;
pub(crate) mod pool;

use std::sync::{Arc, Mutex, OnceLock, PoisonError, RwLock, RwLockReadGuard, Weak};
#[cfg(any(feature = "stdio", feature = "ws"))]
use std::time::Duration;
use std::time::Instant;

use serde_json::value::RawValue;
use talaria_core::schema::tools::{CallToolResult, Tool};
use talaria_core::schema::{Implementation, LoggingLevel};
use talaria_core::server::{
    Answer, Context, Deferred, Endpoint, LaterAnswer, Link, Router, Spawn, Task, ToolError, TransportInfo,
};
use talaria_core::session::{CallError, Event, LocalError, Output, ProtocolError, RequestOptions, ServerConfig};

use crate::conn::{Conn, Engine, EventSink, FrameSink};
use crate::oneshot;
pub(crate) use pool::Pool;

/// A server: what it offers (a [`Router`]), who it is, and how each connection's state starts.
/// Cheap to clone; clones serve the same router.
///
/// # Examples
///
/// ```
/// use talaria::core::schema::tools::{CallToolResult, Tool};
/// use talaria::core::server::Router;
/// use talaria::server::Server;
///
/// let router = Router::<()>::builder()
///     .tool(Tool::new("hi", Default::default()), |_ctx, _: serde_json::Value| Ok(CallToolResult::text("hello")))
///     .build();
/// let server = Server::new("greeter", "1.0", router).instructions("Say hi.");
/// assert_eq!(server.info().name, "greeter");
/// ```
pub struct Server<S> {
    shared: Arc<Shared<S>>,
}

impl<S> Clone for Server<S> {
    fn clone(&self) -> Self {
        Self { shared: Arc::clone(&self.shared) }
    }
}

impl<S> std::fmt::Debug for Server<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server").field("info", &self.shared.config.session.info).finish_non_exhaustive()
    }
}

pub(crate) struct Shared<S> {
    router: RwLock<Router<S>>,
    /// Shared by every session.
    config: Arc<ServerConfig>,
    new_state: Box<dyn Fn() -> S + Send + Sync>,
    /// Writes and reads each legacy session's application state in its record.
    state_codec: Option<StateCodec<S>>,
    /// See [`Server::merge_session_state`].
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    state_merge: Option<MergeState>,
    conns: Mutex<Vec<Weak<Conn<Served<S>>>>>,
    /// Told of each resource update, to carry it to the other processes sharing sessions (an
    /// HTTP server with a relay).
    update_hooks: Mutex<Vec<Weak<UpdateHook>>>,
    /// Told of each peer's protocol violations (see [`Server::on_peer_error`]).
    peer_errors: Arc<PeerErrorHook>,
    pool: Pool,
    /// How many bytes each connection queues for its peer before its reader pauses.
    outbox_limit: usize,
}

/// Told of a peer's protocol violation: the transport's kind (`stdio`, `http`, `websocket`)
/// and what the peer did.
pub type PeerErrorHook = dyn Fn(&str, &ProtocolError) + Send + Sync;

/// Carries a resource update (its URI) to other processes.
pub(crate) type UpdateHook = dyn Fn(&str) + Send + Sync;

/// Writes a session's application state into its record.
type SaveState<S> = Box<dyn Fn(&S) -> Option<serde_json::Value> + Send + Sync>;
/// Rebuilds a session's application state from its record.
type RestoreState<S> = Box<dyn Fn(serde_json::Value) -> Option<S> + Send + Sync>;

/// Merges the application states two processes wrote for one session from the same base.
type MergeState = Box<
    dyn Fn(
            Option<&serde_json::Value>,
            Option<serde_json::Value>,
            Option<serde_json::Value>,
        ) -> Option<serde_json::Value>
        + Send
        + Sync,
>;

/// The application's hook for its per-session state (see [`Server::session_state`]).
struct StateCodec<S> {
    /// Read by the HTTP server only, which stores sessions.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    save: SaveState<S>,
    restore: RestoreState<S>,
}

impl<S> Shared<S> {
    fn router(&self) -> RwLockReadGuard<'_, Router<S>> {
        self.router.read().unwrap_or_else(PoisonError::into_inner)
    }
}

impl<S: Default + Send + 'static> Server<S> {
    /// A server named `name` at `version`, offering `router`, each connection starting with
    /// `S::default()`. Capabilities follow from the router.
    #[must_use]
    pub fn new(name: impl Into<String>, version: impl Into<String>, router: Router<S>) -> Self {
        let config = ServerConfig::new(Implementation::new(name, version)).with_capabilities(router.capabilities());
        Self::with_config(config, router, S::default)
    }
}

impl<S: Send + 'static> Server<S> {
    /// A server with a full session configuration (its capabilities are used as given) and a
    /// constructor for each connection's state.
    #[must_use]
    pub fn with_config(
        config: ServerConfig,
        router: Router<S>,
        new_state: impl Fn() -> S + Send + Sync + 'static,
    ) -> Self {
        let board = Arc::clone(router.task_board());
        let shared = Arc::new(Shared {
            router: RwLock::new(router),
            config: Arc::new(config),
            new_state: Box::new(new_state),
            state_codec: None,
            state_merge: None,
            conns: Mutex::new(Vec::new()),
            update_hooks: Mutex::new(Vec::new()),
            peer_errors: Arc::new(|transport: &str, problem: &ProtocolError| {
                eprintln!("talaria: {transport} peer error: {problem}");
            }),
            pool: Pool::new(64),
            outbox_limit: crate::DEFAULT_OUTBOX_LIMIT,
        });
        board.set_wall_clock(Arc::new(std::time::SystemTime::now));
        #[cfg(feature = "http")]
        board.set_entropy(|buf: &mut [u8]| getrandom::fill(buf).is_ok());
        // A task changes on a tool's thread or a request's, which may hold a connection:
        // the connections following it are told from the pool.
        let weak = Arc::downgrade(&shared);
        board.watch(move |task| {
            let Some(shared) = weak.upgrade() else { return };
            let (task, target) = (task.clone(), Arc::downgrade(&shared));
            shared.pool.run(Box::new(move || {
                if let Some(shared) = target.upgrade() {
                    broadcast(&shared, |served| {
                        served.endpoint.task_changed(&task);
                        Ok::<(), ()>(())
                    });
                }
            }));
        });
        Self { shared }
    }

    /// Keeps each legacy session's application state in its record, so that a session store
    /// shared between processes carries it: `save` writes the state after each exchange
    /// (`None`: nothing to keep), and `restore` rebuilds it in the process that continues the
    /// session (`None`: a fresh state, as for a new session). `initialize` is never replayed
    /// through the application.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria::server::Server;
    /// use talaria::core::server::Router;
    ///
    /// #[derive(Default)]
    /// struct Cart { items: Vec<String> }
    ///
    /// let server = Server::new("shop", "1", Router::<Cart>::builder().build()).session_state(
    ///     |cart: &Cart| Some(serde_json::json!(cart.items)),
    ///     |saved| Some(Cart { items: serde_json::from_value(saved).ok()? }),
    /// );
    /// # let _ = server;
    /// ```
    ///
    /// # Panics
    ///
    /// If the server was cloned already: set it while building.
    #[must_use]
    pub fn session_state(
        self,
        save: impl Fn(&S) -> Option<serde_json::Value> + Send + Sync + 'static,
        restore: impl Fn(serde_json::Value) -> Option<S> + Send + Sync + 'static,
    ) -> Self {
        let mut shared = Arc::try_unwrap(self.shared).unwrap_or_else(|_| unreachable_shared());
        shared.state_codec = Some(StateCodec { save: Box::new(save), restore: Box::new(restore) });
        Self { shared: Arc::new(shared) }
    }

    /// How two processes' changes to one session's application state combine, when both
    /// served requests of the session at once from the same record: `merge(base, ours,
    /// theirs)` gets the state both started from and each one's result (as the
    /// [`Server::session_state`] hook wrote them), and returns the state to keep. Without it,
    /// when both changed it, the state of the process merging wins ("ours"). Only a changed state needs merging:
    /// the protocol's own state (log level, subscriptions) always merges, and a state only one
    /// side changed is that side's.
    ///
    /// # Examples
    ///
    /// ```
    /// use serde_json::json;
    /// use talaria::core::server::Router;
    /// use talaria::server::Server;
    ///
    /// #[derive(Default)]
    /// struct Visits(u64);
    ///
    /// let count = |state: Option<&serde_json::Value>| state.and_then(serde_json::Value::as_u64).unwrap_or(0);
    /// let server = Server::new("counter", "1", Router::<Visits>::builder().build())
    ///     .session_state(|v: &Visits| Some(json!(v.0)), |saved| Some(Visits(saved.as_u64()?)))
    ///     // Each side counted its own visits since the base: keep both.
    ///     .merge_session_state(move |base, ours, theirs| {
    ///         Some(json!(count(theirs.as_ref()) + count(ours.as_ref()).saturating_sub(count(base))))
    ///     });
    /// # let _ = server;
    /// ```
    ///
    /// # Panics
    ///
    /// If the server was cloned already: set it while building.
    #[must_use]
    pub fn merge_session_state(
        self,
        merge: impl Fn(
                Option<&serde_json::Value>,
                Option<serde_json::Value>,
                Option<serde_json::Value>,
            ) -> Option<serde_json::Value>
            + Send
            + Sync
            + 'static,
    ) -> Self {
        let mut shared = Arc::try_unwrap(self.shared).unwrap_or_else(|_| unreachable_shared());
        shared.state_merge = Some(Box::new(merge));
        Self { shared: Arc::new(shared) }
    }

    /// Hands each peer's protocol violations (malformed frames, answers to nothing, ...) to
    /// `hook`, with the transport's kind, instead of writing them to stderr (the default). The
    /// session has already answered them on the wire; this is for the operator.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria::core::server::Router;
    /// use talaria::server::Server;
    ///
    /// let server = Server::new("counted", "1.0", Router::<()>::builder().build())
    ///     .on_peer_error(|transport, problem| eprintln!("[{transport}] the client misbehaved: {problem}"));
    /// # let _ = server;
    /// ```
    #[must_use]
    pub fn on_peer_error(self, hook: impl Fn(&str, &ProtocolError) + Send + Sync + 'static) -> Self {
        let mut shared = Arc::try_unwrap(self.shared).unwrap_or_else(|_| unreachable_shared());
        shared.peer_errors = Arc::new(hook);
        Self { shared: Arc::new(shared) }
    }

    /// The events sink of a connection over `transport`: the peer's protocol violations go to
    /// the server's hook ([`Server::on_peer_error`]).
    #[cfg_attr(not(any(feature = "stdio", feature = "ws", feature = "http")), allow(dead_code))]
    pub(crate) fn peer_error_events(&self, transport: &'static str) -> EventSink {
        let hook = Arc::clone(&self.shared.peer_errors);
        Box::new(move |event| {
            if let Event::PeerMisbehaved(problem) = event {
                hook(transport, &problem);
            }
        })
    }

    /// Adds the server's instructions for the model.
    #[must_use]
    pub fn instructions(self, instructions: impl Into<String>) -> Self {
        let mut shared = Arc::try_unwrap(self.shared).unwrap_or_else(|_| unreachable_shared());
        let config = Arc::unwrap_or_clone(shared.config);
        shared.config = Arc::new(config.with_instructions(instructions));
        Self { shared: Arc::new(shared) }
    }

    /// How many bytes of frames each connection may queue for a client that reads slowly
    /// (default [`DEFAULT_OUTBOX_LIMIT`](crate::DEFAULT_OUTBOX_LIMIT), 32 MiB). Past it the
    /// connection stops reading that client's requests until its writer has caught up: a
    /// client that sends without reading is slowed down, never given unbounded memory.
    ///
    /// # Panics
    ///
    /// If the server was cloned already: set it while building, as
    /// [`Server::instructions`].
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria::core::server::Router;
    /// use talaria::server::Server;
    ///
    /// let server = Server::new("small", "1.0", Router::<()>::builder().build()).outbox_limit(1 << 20);
    /// # let _ = server;
    /// ```
    #[must_use]
    pub fn outbox_limit(self, bytes: usize) -> Self {
        let mut shared = Arc::try_unwrap(self.shared).unwrap_or_else(|_| unreachable_shared());
        shared.outbox_limit = bytes;
        Self { shared: Arc::new(shared) }
    }

    /// The most bytes of frames a connection queues for its writer ([`Server::outbox_limit`]).
    #[cfg(feature = "http")]
    pub(crate) fn frame_queue_limit(&self) -> usize {
        self.shared.outbox_limit
    }

    /// The server's name and version.
    #[must_use]
    pub fn info(&self) -> &Implementation {
        &self.shared.config.session.info
    }

    /// How many connections are open.
    #[must_use]
    pub fn connections(&self) -> usize {
        let mut conns = self.shared.conns.lock().unwrap_or_else(PoisonError::into_inner);
        conns.retain(|c| c.upgrade().is_some_and(|c| !c.is_closed()));
        conns.len()
    }

    /// Adds (or replaces) a tool while serving and tells every connection that asked.
    pub fn add_tool<A, F>(&self, tool: Tool, handler: F)
    where
        A: serde::de::DeserializeOwned + 'static,
        F: Fn(&mut Context<'_, S>, A) -> Result<CallToolResult, ToolError> + Send + Sync + 'static,
    {
        let change = self.shared.router.write().unwrap_or_else(PoisonError::into_inner).add_tool(tool, handler);
        self.broadcast(|served| served.endpoint.announce(change).map(drop));
    }

    /// Removes a tool while serving and tells every connection that asked; `false` if there
    /// was none.
    pub fn remove_tool(&self, name: &str) -> bool {
        let change = self.shared.router.write().unwrap_or_else(PoisonError::into_inner).remove_tool(name);
        match change {
            Some(change) => {
                self.broadcast(|served| served.endpoint.announce(change));
                true
            }
            None => false,
        }
    }

    /// Tells every subscribed connection that the resource at `uri` changed.
    ///
    /// With sessions shared between processes through a relay (see
    /// [`HttpServerOptions::relay`](crate::http::HttpServerOptions::relay)), the update also
    /// goes to every other process, and each shared session hears it from the process that
    /// holds its GET stream: once, whichever process saw the change.
    pub fn resource_updated(&self, uri: &str) {
        self.broadcast(
            |served| if served.fanned_out { Ok(()) } else { served.endpoint.resource_updated(uri).map(drop) },
        );
        let hooks: Vec<_> = self
            .shared
            .update_hooks
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .filter_map(Weak::upgrade)
            .collect();
        for hook in hooks {
            hook(uri);
        }
    }

    /// Tells the subscribed connections `which` picks that the resource at `uri` changed.
    #[cfg(feature = "http")]
    pub(crate) fn resource_updated_where(&self, uri: &str, which: impl Fn(&Served<S>) -> bool) {
        self.broadcast(|served| if which(served) { served.endpoint.resource_updated(uri).map(drop) } else { Ok(()) });
    }

    /// Hands each resource update to `hook` too, for as long as `hook` lives.
    #[cfg(feature = "http")]
    pub(crate) fn on_resource_update(&self, hook: &Arc<UpdateHook>) {
        let mut hooks = self.shared.update_hooks.lock().unwrap_or_else(PoisonError::into_inner);
        hooks.retain(|hook| hook.strong_count() > 0);
        hooks.push(Arc::downgrade(hook));
    }

    fn broadcast<E>(&self, f: impl FnMut(&mut Served<S>) -> Result<(), E>) {
        broadcast(&self.shared, f);
    }

    /// Starts serving one connection whose frames go to `sink`; the caller feeds it.
    pub(crate) fn open(
        &self,
        sink: Box<dyn FrameSink>,
        transport: TransportInfo,
        events: EventSink,
    ) -> std::io::Result<Arc<Conn<Served<S>>>> {
        self.open_from(sink, transport, events, None)
    }

    /// [`Server::open`], going on from a stored session when given one.
    pub(crate) fn open_from(
        &self,
        sink: Box<dyn FrameSink>,
        transport: TransportInfo,
        events: EventSink,
        snapshot: Option<talaria_core::session::SessionSnapshot>,
    ) -> std::io::Result<Arc<Conn<Served<S>>>> {
        let mut endpoint = match snapshot {
            Some(mut snapshot) => {
                let codec = self.shared.state_codec.as_ref();
                let saved = snapshot.app.take().and_then(|app| codec.and_then(|c| (c.restore)(app)));
                let state = saved.unwrap_or_else(|| (self.shared.new_state)());
                Endpoint::restore(Arc::clone(&self.shared.config), snapshot, state)
            }
            None => Endpoint::new(Arc::clone(&self.shared.config), (self.shared.new_state)()),
        };
        endpoint.set_transport(transport);
        let spawner = Arc::new(PoolSpawn { shared: Arc::clone(&self.shared), conn: OnceLock::new() });
        endpoint.set_spawner(Arc::clone(&spawner) as Arc<dyn Spawn>);
        endpoint.set_wall_clock(Arc::new(std::time::SystemTime::now));
        let served = Served { endpoint, shared: Arc::clone(&self.shared), fanned_out: false };
        let conn = Conn::start(served, sink, self.shared.outbox_limit, events)?;
        let _ = spawner.conn.set(Arc::downgrade(&conn));
        conn.flush();
        let mut conns = self.shared.conns.lock().unwrap_or_else(PoisonError::into_inner);
        conns.retain(|c| c.strong_count() > 0);
        conns.push(Arc::downgrade(&conn));
        Ok(conn)
    }
}

/// Runs `f` on every open connection of the server.
fn broadcast<S: Send + 'static, E>(shared: &Shared<S>, mut f: impl FnMut(&mut Served<S>) -> Result<(), E>) {
    let conns: Vec<_> =
        shared.conns.lock().unwrap_or_else(PoisonError::into_inner).iter().filter_map(Weak::upgrade).collect();
    for conn in conns {
        let _ = conn.with(|served, _| f(served));
    }
}

#[allow(clippy::panic)]
fn unreachable_shared<T>() -> T {
    panic!(
        "Server::instructions, outbox_limit and on_peer_error are called while building, before the server is shared"
    )
}

/// One connection's engine: its endpoint, and the server it belongs to.
pub(crate) struct Served<S> {
    pub(crate) endpoint: Endpoint<S>,
    shared: Arc<Shared<S>>,
    /// A session shared between processes, told of resource updates by the process that
    /// holds its GET stream (through the relay), not by [`Server::resource_updated`] directly.
    pub(crate) fanned_out: bool,
}

impl<S> Served<S> {
    /// Whether the connection speaks the stateless era (2026-07-28).
    #[cfg(feature = "http")]
    pub(crate) fn is_stateless(&self) -> bool {
        self.endpoint
            .session()
            .version()
            .is_some_and(|version| version.supports(talaria_core::version::Feature::Stateless))
    }

    /// Takes in a newer record of this session: its log level, subscriptions and, through
    /// the server's hook, application state. Requests under way here go on.
    #[cfg(feature = "http")]
    fn absorb(&mut self, mut snapshot: talaria_core::session::SessionSnapshot) {
        let codec = self.shared.state_codec.as_ref();
        let state = snapshot.app.take().and_then(|app| codec.and_then(|c| (c.restore)(app)));
        self.endpoint.absorb(&snapshot, state);
    }

    /// Merges `theirs`, a record another process stored, into this session, which went on
    /// from the record `base` (see [`SessionSnapshot::merge`]), takes the merged record in
    /// ([`Served::absorb`]) and returns it as written, without the lineage of writes a stored
    /// record carries (`None` if `base` cannot be read, or this session has no record to give:
    /// the caller then ends it here).
    ///
    /// [`SessionSnapshot::merge`]: talaria_core::session::SessionSnapshot::merge
    #[cfg(feature = "http")]
    pub(crate) fn merge(&mut self, base: &[u8], theirs: talaria_core::session::SessionSnapshot) -> Option<Vec<u8>> {
        let base: talaria_core::session::SessionSnapshot = serde_json::from_slice(base).ok()?;
        let ours = self.snapshot()?;
        let merge = self.shared.state_merge.as_deref();
        let merge = merge.map(|m| m as talaria_core::session::AppMerge<'_>);
        let mut merged = talaria_core::session::SessionSnapshot::merge(&base, ours, theirs, merge);
        merged.writes = Vec::new();
        let record = serde_json::to_vec(&merged).ok()?;
        self.absorb(merged);
        Some(record)
    }

    /// The session's record for a session store: the endpoint's, with the application's state
    /// where the server has a hook for it ([`Server::session_state`]).
    #[cfg(feature = "http")]
    pub(crate) fn snapshot(&mut self) -> Option<talaria_core::session::SessionSnapshot> {
        let mut snapshot = self.endpoint.snapshot()?;
        if let Some(codec) = &self.shared.state_codec {
            snapshot.app = (codec.save)(self.endpoint.state());
        }
        Some(snapshot)
    }
}

impl<S: Send + 'static> Engine for Served<S> {
    const READER_PAUSES: bool = true;
    fn poll_output(&mut self) -> Option<Output> {
        let router = self.shared.router();
        self.endpoint.poll_output(&router)
    }
    fn poll_timeout(&self) -> Option<Instant> {
        self.endpoint.poll_timeout()
    }
    fn handle_timeout(&mut self, now: Instant) {
        self.endpoint.handle_timeout(now);
    }
    fn handle_closed(&mut self, now: Instant) {
        self.endpoint.handle_closed(now);
    }
}

/// Runs a connection's long-running tools on the server's pool.
struct PoolSpawn<S> {
    shared: Arc<Shared<S>>,
    conn: OnceLock<Weak<Conn<Served<S>>>>,
}

impl<S: Send + 'static> Spawn for PoolSpawn<S> {
    fn spawn(&self, task: Task) {
        let Some(conn) = self.conn.get().cloned() else { return };
        let link: Arc<dyn Link> = Arc::new(ConnLink { conn });
        // Async work goes to the executor of async tools (when there is one); the rest takes
        // a worker of the pool.
        #[cfg(feature = "smol")]
        if task.runs_on_executor() {
            async_tools::spawn(task.into_future(link));
            return;
        }
        self.shared.pool.run(Box::new(move || task.run(link)));
    }
}

/// How a running task reaches its connection.
struct ConnLink<S> {
    conn: Weak<Conn<Served<S>>>,
}

/// Where a client's answer to a running task's request arrives.
type AnswerSlot = oneshot::Receiver<Result<Box<RawValue>, CallError>>;

impl<S: Send + 'static> ConnLink<S> {
    /// Sends the client request `method` about `deferred`; where its answer arrives.
    fn send_ask(&self, deferred: &Deferred, method: &str, params: Box<RawValue>) -> Result<AnswerSlot, CallError> {
        let Some(conn) = self.conn.upgrade() else { return Err(CallError::Local(LocalError::Closed { reason: None })) };
        let (tx, rx) = oneshot::channel();
        conn.with(|s, now| {
            let answer = Box::new(move |r| tx.send(r));
            s.endpoint.ask_raw(now, Some(deferred.reply()), method, Some(params), RequestOptions::default(), answer)
        })
        .map_err(|e| CallError::Local(LocalError::from(e)))?;
        Ok(rx)
    }
}

impl<S: Send + 'static> Link for ConnLink<S> {
    fn progress(&self, deferred: &Deferred, progress: f64, total: Option<f64>, message: Option<String>) {
        if let Some(conn) = self.conn.upgrade() {
            let _ = conn.with(|s, _| s.endpoint.deferred_progress(deferred, progress, total, message));
        }
    }

    fn log(&self, deferred: &Deferred, level: LoggingLevel, data: serde_json::Value) {
        if let Some(conn) = self.conn.upgrade() {
            let _ = conn.with(|s, _| s.endpoint.deferred_log(deferred, level, data));
        }
    }

    fn ask(&self, deferred: &Deferred, method: &str, params: Box<RawValue>) -> Result<Box<RawValue>, CallError> {
        let rx = self.send_ask(deferred, method, params)?;
        rx.wait().unwrap_or(Err(CallError::Local(LocalError::Closed { reason: None })))
    }

    fn ask_async(&self, deferred: &Deferred, method: &str, params: Box<RawValue>) -> Answer {
        let sent = self.send_ask(deferred, method, params);
        Box::pin(async move { sent?.await.unwrap_or(Err(CallError::Local(LocalError::Closed { reason: None }))) })
    }

    fn close_sse_stream(&self, deferred: &Deferred) -> bool {
        self.conn.upgrade().is_some_and(|conn| conn.with(|s, _| s.endpoint.deferred_close_sse_stream(deferred)))
    }

    fn notify(&self, deferred: &Deferred, method: &str, params: Option<Box<RawValue>>) -> bool {
        self.conn.upgrade().is_some_and(|conn| conn.with(|s, _| s.endpoint.deferred_notify(deferred, method, params)))
    }

    fn complete(&self, deferred: Deferred, outcome: Result<CallToolResult, ToolError>) {
        if let Some(conn) = self.conn.upgrade() {
            let _ = conn.with(|s, _| {
                let router = s.shared.router();
                s.endpoint.complete_tool(&router, deferred, outcome)
            });
        }
    }

    fn complete_answer(&self, deferred: Deferred, answer: LaterAnswer) {
        if let Some(conn) = self.conn.upgrade() {
            let _ = conn.with(|s, _| {
                let router = s.shared.router();
                s.endpoint.complete_answer(&router, deferred, answer)
            });
        }
    }
}

/// How long a closing connection waits for its running tools to answer.
#[cfg(any(feature = "stdio", feature = "ws"))]
pub(crate) const DRAIN_GRACE: Duration = Duration::from_secs(10);

/// Waits until `conn` has no running tools, or `grace` passes.
#[cfg(any(feature = "stdio", feature = "ws"))]
pub(crate) fn wait_for_running<S: Send + 'static>(conn: &Conn<Served<S>>, grace: Duration) {
    let deadline = Instant::now() + grace;
    let mut pause = Duration::from_millis(1);
    while conn.with(|s, _| s.endpoint.running()) > 0 && Instant::now() < deadline {
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(20));
    }
}

/// [`wait_for_running`] without blocking the executor.
#[cfg(all(feature = "smol", feature = "stdio", unix))]
pub(crate) async fn wait_for_running_async<S: Send + 'static>(conn: &Conn<Served<S>>, grace: Duration) {
    let deadline = Instant::now() + grace;
    let mut pause = Duration::from_millis(1);
    while conn.with(|s, _| s.endpoint.running()) > 0 && Instant::now() < deadline {
        smol::Timer::after(pause).await;
        pause = (pause * 2).min(Duration::from_millis(20));
    }
}
