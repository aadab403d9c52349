//! The client handle: typed MCP calls over any transport, blocking ([`Client`]) or async
//! ([`AsyncClient`], any executor).
//!
//! A handle is cheap to clone and `Send + Sync`; every clone talks over the same connection.
//! When the last clone is dropped (or [`Client::close`] is called) the connection closes: the
//! transport is shut down (for a child process: stdin closed, then SIGTERM, then SIGKILL).

mod async_client;
mod async_connect;
mod authenticator;
mod error;
mod ext_tasks;
mod options;
mod start;
mod tasks;
mod trace;

use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use serde_json::value::RawValue;
use talaria_core::client::{Endpoint, FrameDirection};
use talaria_core::jsonrpc::RequestId;
use talaria_core::schema::completion::{Complete, CompleteRequestParams, CompleteResult};
use talaria_core::schema::lifecycle::{Discover, ServerCapabilities};
use talaria_core::schema::logging::{SetLevel, SetLevelRequestParams};
use talaria_core::schema::prompts::{
    GetPrompt, GetPromptRequestParams, GetPromptResult, ListPrompts, ListPromptsResult, Prompt,
};
use talaria_core::schema::resources::{
    ListResourceTemplates, ListResourceTemplatesResult, ListResources, ListResourcesResult, ReadResource,
    ReadResourceRequestParams, ReadResourceResult, Resource, ResourceTemplate, Subscribe, SubscribeRequestParams,
    Unsubscribe, UnsubscribeRequestParams,
};
use talaria_core::schema::roots::Root;
use talaria_core::schema::tools::{CallTool, CallToolRequestParams, CallToolResult, ListTools, ListToolsResult, Tool};
use talaria_core::schema::utilities::Ping;
use talaria_core::schema::{
    Implementation, LoggingLevel, Paginated, PaginatedRequestParams, RequestMethod, RequestParams,
};
use talaria_core::session::{BatchItem, CallError, CloseReason, Event, LocalError, ProtocolError, ReadyInfo};
use talaria_core::version::ProtocolVersion;

pub use async_client::{AsyncClient, CallFuture};
pub use authenticator::{AuthFailure, Authenticator};
pub use error::ClientError;
pub use options::ClientOptions;
use start::{call_here, conn_key};
pub(crate) use start::{flatten, start, start_mapped, Started};
/// Per-call options ([`Client::call_tool_with`], [`Client::call`]): a timeout, a progress
/// callback, task handling. The same type as `talaria::core::client::CallOptions`.
pub use talaria_core::client::CallOptions;
pub use tasks::{task_call, task_payload};
#[cfg(any(feature = "http", feature = "ws"))]
pub(crate) use trace::header_pairs;
pub use trace::{TraceEvent, TraceFn};

use crate::caller_runs::Waiting;
use crate::conn::{Conn, Engine, EventSink, FrameSink};
use crate::oneshot;

/// What a transport leaves behind to shut down when the client closes.
pub(crate) trait Teardown: Send {
    /// Shuts the transport down, after the session closed and its last frames were sent (or
    /// the peer did not take them within [`FLUSH_GRACE`]).
    fn shutdown(&mut self);
    /// How the server process ended, if it is a process and it has.
    fn exit_status(&mut self) -> Option<std::process::ExitStatus> {
        None
    }
    /// The transport's session id (HTTP `Mcp-Session-Id`, the legacy SSE `sessionId`), if it
    /// has one.
    fn session_id(&self) -> Option<String> {
        None
    }
}

impl Engine for Endpoint {
    // A client's reader never pauses: its application's calls are refused instead, so the
    // server's writer always drains and two peers never wait on each other.
    const READER_PAUSES: bool = false;
    fn poll_output(&mut self) -> Option<talaria_core::session::Output> {
        Self::poll_output(self)
    }
    fn poll_timeout(&self) -> Option<Instant> {
        Self::poll_timeout(self)
    }
    fn handle_timeout(&mut self, now: Instant) {
        Self::handle_timeout(self, now);
    }
    fn handle_closed(&mut self, now: Instant) {
        Self::handle_closed(self, now);
    }
    fn in_flight(&self) -> usize {
        self.pending()
    }
}

/// What every clone of a handle shares; dropping the last one closes the connection.
pub(crate) struct Inner {
    conn: Arc<Conn<Endpoint>>,
    /// The transport's remains, shut down once (and kept for `exit_status`).
    teardown: Mutex<Box<dyn Teardown>>,
    shut: std::sync::atomic::AtomicBool,
    ready: Box<ReadyInfo>,
}

impl Inner {
    /// Closes the session and the transport; returns once the transport is shut down (see
    /// [`Client::close`] for how long that may take).
    fn close(&self) {
        if self.shut.swap(true, std::sync::atomic::Ordering::AcqRel) {
            return;
        }
        self.conn.with(|endpoint, _| endpoint.close());
        // Flushed before the teardown is locked: other clones' `exit_status` and `session_id`
        // wait only for the shutdown itself.
        self.conn.close_sink();
        self.conn.wait_closed(FLUSH_GRACE);
        finish(&self.conn, &mut **self.teardown.lock().unwrap_or_else(PoisonError::into_inner));
    }
}

/// How long closing waits for the last frames to leave before the transport is torn down.
pub(crate) const FLUSH_GRACE: Duration = Duration::from_secs(2);

/// Ends the outgoing direction once its last frames are written (waiting up to
/// [`FLUSH_GRACE`] for a peer that does not read), then shuts the transport down.
fn finish(conn: &Conn<Endpoint>, teardown: &mut dyn Teardown) {
    conn.close_sink();
    conn.wait_closed(FLUSH_GRACE);
    teardown.shutdown();
}

impl Drop for Inner {
    /// The last handle is gone: the session closes now, and the transport is shut down on a
    /// thread of its own, so that dropping a handle never blocks (an executor, say) for the
    /// grace periods a child process gets.
    fn drop(&mut self) {
        if self.shut.swap(true, std::sync::atomic::Ordering::AcqRel) {
            return;
        }
        self.conn.with(|endpoint, _| endpoint.close());
        let teardown =
            std::mem::replace(&mut *self.teardown.lock().unwrap_or_else(PoisonError::into_inner), Box::new(Gone));
        let slot = Arc::new(Mutex::new(Some(teardown)));
        let (conn, taken) = (Arc::clone(&self.conn), Arc::clone(&slot));
        let closing = move || {
            if let Some(mut teardown) = taken.lock().unwrap_or_else(PoisonError::into_inner).take() {
                finish(&conn, &mut *teardown);
            }
        };
        if std::thread::Builder::new().name("talaria-close".into()).spawn(closing).is_err() {
            // No thread to be had: shut down here rather than leak the transport.
            if let Some(mut teardown) = slot.lock().unwrap_or_else(PoisonError::into_inner).take() {
                finish(&self.conn, &mut *teardown);
            }
        }
    }
}

/// What stands in for a transport handed to the closing thread.
struct Gone;

impl Teardown for Gone {
    fn shutdown(&mut self) {}
}

/// A connection whose handshake is under way.
pub(crate) struct Connecting {
    conn: Arc<Conn<Endpoint>>,
    teardown: Box<dyn Teardown>,
}

/// Where the handshake's outcome arrives: the server's description, or why the session closed
/// (the core's handshake deadline included: the one clock of the handshake).
pub(crate) type Handshake = oneshot::Receiver<Result<Box<ReadyInfo>, CloseReason>>;

impl Connecting {
    /// Turns the handshake's outcome (`None`: the connection went without one) into a client.
    pub(crate) fn finish(self, outcome: Option<Result<Box<ReadyInfo>, CloseReason>>) -> Result<Client, ClientError> {
        let failure = match outcome {
            Some(Ok(ready)) => {
                let inner = Inner {
                    conn: self.conn,
                    teardown: Mutex::new(self.teardown),
                    shut: std::sync::atomic::AtomicBool::new(false),
                    ready,
                };
                return Ok(Client { inner: Arc::new(inner) });
            }
            Some(Err(CloseReason::Handshake(ProtocolError::HandshakeTimedOut { after }))) => {
                ClientError::HandshakeTimedOut { after }
            }
            Some(Err(why)) => ClientError::Connect(why.to_string()),
            None => ClientError::Connect("connection closed".to_owned()),
        };
        let mut teardown = self.teardown;
        // A server process that died during the handshake says how.
        let failure = match (failure, exited(teardown.as_mut())) {
            (ClientError::Connect(_), Some(status)) => ClientError::ServerExited(status),
            (failure, _) => failure,
        };
        shut(&self.conn, Some(teardown));
        Err(failure)
    }
}

/// How the server process ended, if the transport is a process that has ended or ends within
/// a moment (its pipes close just before it is reaped).
fn exited(teardown: &mut dyn Teardown) -> Option<std::process::ExitStatus> {
    for _ in 0..20 {
        if let Some(status) = teardown.exit_status() {
            return Some(status);
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    None
}

/// Sets a connection up over `sink` and starts the handshake. The transport's reader feeds
/// the connection from its own thread or task, started by `start_reader`.
pub(crate) fn start_connecting(
    options: ClientOptions,
    sink: Box<dyn FrameSink>,
    teardown: Box<dyn Teardown>,
    start_reader: impl FnOnce(Arc<Conn<Endpoint>>) -> std::io::Result<()>,
) -> Result<(Connecting, Handshake), ClientError> {
    let ClientOptions { config, handlers, on_log, on_notification, trace, outbox_limit, authenticator: _, .. } =
        options;
    let (ready_tx, ready) = oneshot::channel();
    let ready_tx = Mutex::new(Some(ready_tx));
    let announce = move |outcome: Result<Box<ReadyInfo>, CloseReason>| {
        if let Some(tx) = ready_tx.lock().unwrap_or_else(PoisonError::into_inner).take() {
            tx.send(outcome);
        }
    };
    let events: EventSink = Box::new(move |event| match event {
        Event::Ready(info) => announce(Ok(info)),
        Event::Closed { reason } => announce(Err(reason)),
        Event::Log(params) => {
            if let Some(log) = &on_log {
                log(&params);
            }
        }
        Event::Notification { method, params } => {
            if let Some(notify) = &on_notification {
                notify(&method, params.as_deref());
            }
        }
        _ => {}
    });
    let mut endpoint = Endpoint::new(config, handlers, Instant::now());
    if let Some(trace) = trace {
        endpoint.observe_frames(Box::new(move |direction, frame| {
            trace(&match direction {
                FrameDirection::Sent => TraceEvent::Sent(frame),
                _ => TraceEvent::Received(frame),
            });
        }));
    }
    let conn = Conn::start(endpoint, sink, outbox_limit, events)?;
    if let Err(e) = start_reader(Arc::clone(&conn)) {
        shut(&conn, Some(teardown));
        return Err(e.into());
    }
    // Only now the `initialize`: its answer needs the reader (and an HTTP transport needs to
    // know the connection) to be fed to the session.
    conn.flush();
    Ok((Connecting { conn, teardown }, ready))
}

/// Sets a connection up over `sink` and waits for the handshake (see [`start_connecting`]).
#[cfg(any(feature = "stdio", feature = "ws", feature = "http"))]
pub(crate) fn connect(
    options: ClientOptions,
    sink: Box<dyn FrameSink>,
    teardown: Box<dyn Teardown>,
    start_reader: impl FnOnce(Arc<Conn<Endpoint>>) -> std::io::Result<()>,
) -> Result<Client, ClientError> {
    let (connecting, handshake) = start_connecting(options, sink, teardown, start_reader)?;
    connecting.finish(handshake.wait())
}

fn shut(conn: &Conn<Endpoint>, teardown: Option<Box<dyn Teardown>>) {
    conn.with(|endpoint, _| endpoint.close());
    match teardown {
        Some(mut teardown) => finish(conn, &mut *teardown),
        None => conn.close_sink(),
    }
}

/// A blocking MCP client: every call waits for its outcome.
///
/// # Examples
///
/// ```no_run
/// use talaria::client::{Client, ClientOptions};
/// use talaria::stdio::StdioCommand;
///
/// let client = Client::stdio(StdioCommand::new("everything-server").arg("--transport").arg("stdio"), ClientOptions::new("demo", "1.0"))?;
/// for tool in client.list_all_tools()? {
///     println!("{}", tool.name);
/// }
/// let result = client.call_tool("echo", serde_json::json!({"text": "hi"}))?;
/// println!("{result:?}");
/// # Ok::<(), talaria::client::ClientError>(())
/// ```
#[derive(Clone)]
pub struct Client {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client").field("server", &self.inner.ready.peer).finish_non_exhaustive()
    }
}

/// The most pages a `list_all_*` call follows before giving up.
pub const MAX_LIST_PAGES: usize = 1000;

impl Client {
    /// The async twin of this handle, over the same connection.
    #[must_use]
    pub fn to_async(&self) -> AsyncClient {
        AsyncClient::from_inner(Arc::clone(&self.inner))
    }

    /// The server's name and version.
    #[must_use]
    pub fn server_info(&self) -> &Implementation {
        &self.inner.ready.peer
    }

    /// Sets the log level each request asks for from now on, in the stateless era
    /// (2026-07-28), where it travels in the request's `_meta` (the start value is
    /// `ClientConfig::log_level`); `None` asks for none. A legacy session sets its level with
    /// [`Client::set_log_level`] (`logging/setLevel`) instead.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use talaria::client::{Client, ClientOptions};
    /// use talaria::core::schema::LoggingLevel;
    ///
    /// let client = Client::http("http://127.0.0.1:8080/mcp", &[], ClientOptions::new("me", "1"))?;
    /// client.set_request_log_level(Some(LoggingLevel::Debug));
    /// # Ok::<(), talaria::client::ClientError>(())
    /// ```
    pub fn set_request_log_level(&self, level: Option<LoggingLevel>) {
        self.inner.conn.with(|endpoint, _| endpoint.set_request_log_level(level));
    }

    /// The negotiated protocol revision.
    #[must_use]
    pub fn protocol_version(&self) -> ProtocolVersion {
        self.inner.ready.version
    }

    /// The server's capabilities.
    #[must_use]
    pub fn server_capabilities(&self) -> Option<&ServerCapabilities> {
        self.inner.ready.server_capabilities.as_ref()
    }

    /// The server's instructions for the model, if any.
    #[must_use]
    pub fn instructions(&self) -> Option<&str> {
        self.inner.ready.instructions.as_deref()
    }

    /// Whether the connection has closed (the server went away, or `close` was called).
    #[must_use]
    pub fn is_closed(&self) -> bool {
        self.inner.conn.is_closed()
    }

    /// How the server process ended, for a child-process server that has.
    #[must_use]
    pub fn exit_status(&self) -> Option<std::process::ExitStatus> {
        self.inner.teardown.lock().unwrap_or_else(PoisonError::into_inner).exit_status()
    }

    /// The transport's session id: the `Mcp-Session-Id` a Streamable HTTP server gave (legacy
    /// era), or the `sessionId` of a legacy HTTP+SSE endpoint; `None` for stdio, WebSocket and
    /// the stateless era.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use talaria::client::{Client, ClientOptions};
    ///
    /// let client = Client::http("http://127.0.0.1:8080/mcp", &[], ClientOptions::new("me", "1"))?;
    /// println!("session: {:?}", client.session_id());
    /// # Ok::<(), talaria::client::ClientError>(())
    /// ```
    #[must_use]
    pub fn session_id(&self) -> Option<String> {
        self.inner.teardown.lock().unwrap_or_else(PoisonError::into_inner).session_id()
    }

    /// How many calls wait for their outcome.
    #[must_use]
    pub fn pending_calls(&self) -> usize {
        self.inner.conn.with(|endpoint, _| endpoint.pending())
    }

    /// Closes the connection (every clone sees it closed); calls in flight fail at once.
    ///
    /// Returns once the transport is shut down: the last frames are written (waiting up to
    /// 2 s for a server that does not read), then a child process gets its stdin closed, the
    /// [grace period](crate::stdio::StdioCommand::grace_period) to exit, SIGTERM, the grace
    /// period again, SIGKILL, and is reaped; a socket is shut. Dropping the last handle does
    /// the same on a thread of its own, without waiting.
    pub fn close(&self) {
        self.inner.close();
    }

    /// Sends request `M` and waits for its typed result.
    ///
    /// # Errors
    ///
    /// [`ClientError::Send`] if it could not be sent, [`ClientError::Call`] if the server
    /// answered with an error or the call failed locally.
    pub fn call<M: RequestMethod>(&self, params: &M::Params, options: CallOptions) -> Result<M::Result, ClientError>
    where
        M::Result: Send + 'static,
    {
        call_here::<M, _>(&self.inner, params, options, |r| r)
    }

    /// Cancels a call in flight by id (its waiter gets a cancelled error). See also
    /// dropping an [`AsyncClient`] call's future.
    ///
    /// # Errors
    ///
    /// [`ClientError::Send`] if the connection is closed.
    pub fn cancel(&self, id: &RequestId, reason: Option<&str>) -> Result<(), ClientError> {
        self.inner.conn.with(|endpoint, _| endpoint.cancel(id, reason)).map_err(ClientError::from)
    }

    /// Sends request `method` with raw params and waits for the raw result.
    ///
    /// # Errors
    ///
    /// As [`Client::call`].
    pub fn request(&self, method: &str, params: Option<Box<RawValue>>) -> Result<Box<RawValue>, ClientError> {
        let (tx, rx) = oneshot::channel();
        let later = self.inner.conn.later();
        let waiting = Waiting::for_conn(&self.inner.conn);
        let ended = waiting.as_ref().map(Waiting::ended);
        let done = Box::new(move |r| {
            later.run(move || {
                tx.send(r);
                drop(ended);
            });
        });
        let conn = conn_key(&self.inner.conn);
        self.inner.conn.with_call(|endpoint, now| {
            endpoint.request(now, method, params, CallOptions::default(), done).inspect(|id| {
                if let Some(waiting) = &waiting {
                    waiting.expect(conn, id);
                }
            })
        })??;
        if let Some(waiting) = waiting {
            waiting.run();
        }
        flatten(rx.wait())
    }

    /// Sends requests and notifications as one JSON-RPC batch (protocol revision 2025-03-26
    /// only, the one revision with batches) and waits for every answer. Returns one outcome
    /// per request of `items`, in order (notifications have none).
    ///
    /// # Errors
    ///
    /// [`ClientError::Send`] if the session cannot batch (another revision) or an item is not
    /// allowed; then nothing was sent.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use talaria::client::{Client, ClientOptions};
    /// use talaria::core::session::BatchItem;
    /// use talaria::core::version::ProtocolVersion;
    ///
    /// let options = ClientOptions::new("me", "1").versions(vec![ProtocolVersion::V2025_03_26]);
    /// let client = Client::http("http://127.0.0.1:8080/mcp", &[], options)?;
    /// let ping = || BatchItem::Request { method: "ping".into(), params: None, options: Default::default() };
    /// let answers = client.batch(vec![ping(), ping()])?;
    /// assert_eq!(answers.len(), 2);
    /// # Ok::<(), talaria::client::ClientError>(())
    /// ```
    pub fn batch(&self, items: Vec<BatchItem>) -> Result<Vec<Result<Box<RawValue>, ClientError>>, ClientError> {
        let mut waiting = Vec::new();
        let items: Vec<(BatchItem, Option<talaria_core::client::Completion>)> = items
            .into_iter()
            .map(|item| {
                if matches!(item, BatchItem::Request { .. }) {
                    let (tx, rx) = oneshot::channel();
                    let later = self.inner.conn.later();
                    waiting.push(rx);
                    let done: talaria_core::client::Completion = Box::new(move |r| later.run(move || tx.send(r)));
                    (item, Some(done))
                } else {
                    (item, None)
                }
            })
            .collect();
        self.inner.conn.with_call(|endpoint, now| endpoint.batch(now, items))??;
        Ok(waiting.into_iter().map(|rx| flatten(rx.wait())).collect())
    }

    /// Sends a notification.
    ///
    /// # Errors
    ///
    /// [`ClientError::Send`] if the notification is not allowed or the connection is closed.
    pub fn notify(&self, method: &str, params: Option<Box<RawValue>>) -> Result<(), ClientError> {
        self.inner.conn.with_call(|endpoint, _| endpoint.notify(method, params))?.map_err(ClientError::from)
    }

    /// The roots the client offers.
    #[must_use]
    pub fn roots(&self) -> Vec<Root> {
        self.inner.conn.with(|endpoint, _| endpoint.handlers().roots().to_vec())
    }

    /// Adds a root (telling the server the roots changed); `false` if one with that URI was
    /// there already.
    ///
    /// # Errors
    ///
    /// [`ClientError::Send`] if the connection is closed.
    pub fn add_root(&self, root: Root) -> Result<bool, ClientError> {
        self.inner.conn.with(|endpoint, _| endpoint.update_roots(|h| h.add_root(root))).map_err(ClientError::from)
    }

    /// Removes the root with `uri` (telling the server); `false` if there was none.
    ///
    /// # Errors
    ///
    /// [`ClientError::Send`] if the connection is closed.
    pub fn remove_root(&self, uri: &str) -> Result<bool, ClientError> {
        self.inner.conn.with(|endpoint, _| endpoint.update_roots(|h| h.remove_root(uri))).map_err(ClientError::from)
    }

    /// Removes every root (telling the server).
    ///
    /// # Errors
    ///
    /// [`ClientError::Send`] if the connection is closed.
    pub fn clear_roots(&self) -> Result<(), ClientError> {
        self.inner
            .conn
            .with(|endpoint, _| endpoint.update_roots(|h| h.clear_roots()))
            .map(drop)
            .map_err(ClientError::from)
    }
}

/// The typed calls, generated for the blocking handle; the async handle has the same list.
macro_rules! blocking_calls {
    ($($(#[$doc:meta])* fn $name:ident($($arg:ident: $ty:ty),*) -> $out:ty = $marker:ty, |$($p:ident),*| $params:expr, |$r:ident| $map:expr;)*) => {
        impl Client {
            $(
                $(#[$doc])*
                ///
                /// # Errors
                ///
                /// As [`Client::call`].
                pub fn $name(&self, $($arg: $ty),*) -> Result<$out, ClientError> {
                    let make = |$($p: $ty),*| $params;
                    call_here::<$marker, _>(&self.inner, &make($($arg),*), CallOptions::default(), |$r| $map)
                }
            )*
        }
    };
}

/// The typed calls both handles offer, fed to a generator macro (`blocking_calls` here,
/// `async_calls` in the async handle).
macro_rules! typed_calls {
    ($generate:ident) => {
        $generate! {
            /// Checks the server is alive.
            fn ping() -> () = Ping, | | RequestParams::default(), |_r| ();
            /// One page of the server's tools (`cursor` from the previous page).
            fn list_tools(cursor: Option<String>) -> ListToolsResult = ListTools, |cursor| page(cursor), |r| r;
            /// Calls a tool with arguments (a JSON object, or `null` for none). Tool failures come
            /// back as a result with `is_error` set, not as an `Err`.
            fn call_tool(name: &str, arguments: serde_json::Value) -> CallToolResult = CallTool, |name, arguments| tool_call(name, arguments), |r| r;
            /// One page of the server's prompts.
            fn list_prompts(cursor: Option<String>) -> ListPromptsResult = ListPrompts, |cursor| page(cursor), |r| r;
            /// Gets a prompt filled in with `arguments`.
            fn get_prompt(name: &str, arguments: &[(&str, &str)]) -> GetPromptResult = GetPrompt, |name, arguments| prompt_get(name, arguments), |r| r;
            /// One page of the server's resources.
            fn list_resources(cursor: Option<String>) -> ListResourcesResult = ListResources, |cursor| page(cursor), |r| r;
            /// One page of the server's resource templates.
            fn list_resource_templates(cursor: Option<String>) -> ListResourceTemplatesResult = ListResourceTemplates, |cursor| page(cursor), |r| r;
            /// Reads the resource at `uri`.
            fn read_resource(uri: &str) -> ReadResourceResult = ReadResource, |uri| ReadResourceRequestParams::new(uri), |r| r;
            /// Subscribes to updates of the resource at `uri` (legacy era).
            fn subscribe(uri: &str) -> () = Subscribe, |uri| SubscribeRequestParams::new(uri), |_r| ();
            /// Ends a subscription (legacy era).
            fn unsubscribe(uri: &str) -> () = Unsubscribe, |uri| UnsubscribeRequestParams::new(uri), |_r| ();
            /// Asks for completions of a prompt argument or template variable.
            fn complete(params: CompleteRequestParams) -> CompleteResult = Complete, |params| params, |r| r;
            /// Sets the level of log messages the server sends (legacy era).
            fn set_log_level(level: LoggingLevel) -> () = SetLevel, |level| SetLevelRequestParams::new(level), |_r| ();
        }
    };
}

pub(crate) use typed_calls;

typed_calls!(blocking_calls);

impl Client {
    /// Calls a tool with per-call options: a timeout, a progress callback.
    ///
    /// # Errors
    ///
    /// As [`Client::call`].
    pub fn call_tool_with(
        &self,
        name: &str,
        arguments: serde_json::Value,
        options: CallOptions,
    ) -> Result<CallToolResult, ClientError> {
        self.call::<CallTool>(&tool_call(name, arguments), options)
    }

    /// Asks the server to describe itself (`server/discover`, 2026-07-28).
    ///
    /// # Errors
    ///
    /// As [`Client::call`].
    pub fn discover(&self) -> Result<<Discover as RequestMethod>::Result, ClientError> {
        self.call::<Discover>(&RequestParams::default(), CallOptions::default())
    }

    /// Every tool, following cursors (at most [`MAX_LIST_PAGES`] pages).
    ///
    /// # Errors
    ///
    /// As [`Client::call`], and a malformed-response error past the page cap.
    pub fn list_all_tools(&self) -> Result<Vec<Tool>, ClientError> {
        self.list_all::<ListTools>()
    }

    /// Every prompt, following cursors.
    ///
    /// # Errors
    ///
    /// As [`Client::list_all_tools`].
    pub fn list_all_prompts(&self) -> Result<Vec<Prompt>, ClientError> {
        self.list_all::<ListPrompts>()
    }

    /// Every resource, following cursors.
    ///
    /// # Errors
    ///
    /// As [`Client::list_all_tools`].
    pub fn list_all_resources(&self) -> Result<Vec<Resource>, ClientError> {
        self.list_all::<ListResources>()
    }

    /// Every resource template, following cursors.
    ///
    /// # Errors
    ///
    /// As [`Client::list_all_tools`].
    pub fn list_all_resource_templates(&self) -> Result<Vec<ResourceTemplate>, ClientError> {
        self.list_all::<ListResourceTemplates>()
    }

    /// Every item of a paginated list, following cursors.
    fn list_all<M>(&self) -> Result<Vec<<M::Result as Paginated>::Item>, ClientError>
    where
        M: RequestMethod<Params = PaginatedRequestParams>,
        M::Result: Paginated + Send + 'static,
    {
        let mut items = Vec::new();
        let mut cursor = None;
        for _ in 0..MAX_LIST_PAGES {
            let page = self.call::<M>(&page(cursor), CallOptions::default())?;
            cursor = page.next_cursor().map(str::to_owned);
            items.extend(page.into_items());
            if cursor.is_none() {
                return Ok(items);
            }
        }
        Err(too_many_pages(M::INFO.name))
    }
}

pub(crate) fn too_many_pages(method: &str) -> ClientError {
    let why = format!("{method} still had more after {MAX_LIST_PAGES} pages");
    ClientError::Call(CallError::Local(LocalError::MalformedResponse(why)))
}

pub(crate) fn page(cursor: Option<String>) -> PaginatedRequestParams {
    cursor.map_or_else(PaginatedRequestParams::default, PaginatedRequestParams::after)
}

pub(crate) fn tool_call(name: &str, arguments: serde_json::Value) -> CallToolRequestParams {
    let call = CallToolRequestParams::new(name);
    match arguments {
        serde_json::Value::Object(map) => call.with_arguments(map),
        _ => call,
    }
}

pub(crate) fn prompt_get(name: &str, arguments: &[(&str, &str)]) -> GetPromptRequestParams {
    let mut params = GetPromptRequestParams::new(name);
    if !arguments.is_empty() {
        params.arguments = Some(arguments.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect());
    }
    params
}

#[cfg(test)]
mod tests {
    use super::{AsyncClient, Client};

    #[test]
    fn handles_are_send_and_sync() {
        fn check<T: Send + Sync + Clone>() {}
        check::<Client>();
        check::<AsyncClient>();
    }
}
