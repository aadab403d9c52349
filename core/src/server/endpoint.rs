//! One server connection, ready to drive: the session, its per-session state, and the
//! bookkeeping between them and the router (cancellation flags, subscriptions, requests to
//! the client).

use crate::alloc_prelude::*;
use crate::time::Instant;
use alloc::collections::{BTreeMap, BTreeSet};
use alloc::sync::Arc;

use serde_json::value::RawValue;

use super::cancel::CancelFlag;
use super::deferred::Deferred;
use super::error::ToolError;
use super::extras::{Extras, TransportInfo};
use super::router::{task_outcome, ListChanged, Router, ToolRun};
use super::task::Spawn;
use super::tasks::{unknown_task, Ended, TaskOutcome, TaskTable, WallClock, MAX_TASKS};
use crate::jsonrpc::{ErrorCode, ErrorObject, RequestId};
use crate::schema::resources::{ResourceUpdatedNotificationParams, SubscribeRequestParams};
use crate::schema::subscriptions::{
    SubscriptionFilter, SubscriptionsAcknowledgedNotificationParams, SubscriptionsListenRequestParams,
};
use crate::schema::tasks::{CreateTaskResult, GetTaskRequestParams, ListTasksResult, TaskMetadata, TaskStatus};
use crate::schema::tools::CallToolResult;
use crate::schema::tools::TaskSupport;
use crate::schema::RequestMethod;
use crate::schema::{meta_keys, JsonObject};
use crate::session::{CallError, LocalError};
use crate::session::{
    Carries, Event, IncomingRequest, Output, ReplyToken, RequestOptions, Route, SendError, Server, Session,
};
use crate::version::Feature;

/// What the client answered to a request the server sent it (see [`Endpoint::ask`]).
pub type ClientAnswer = Box<dyn FnOnce(Result<Box<RawValue>, CallError>) + Send>;

/// A served connection: a [`Session<Server>`], the per-session state `S`, and what joins them
/// to a [`Router`]. Requests the session hands over go to the router's handlers; cancellations
/// reach the handlers' [`CancelFlag`]s; `resources/subscribe` and (2026-07-28)
/// `subscriptions/listen` are tracked so that [`Endpoint::announce`] and
/// [`Endpoint::resource_updated`] reach exactly the clients that asked; answers to requests
/// the server sent ([`Endpoint::ask`]) go to their callbacks.
///
/// Sans-IO like the session: the adapter feeds it bytes and time, and drains
/// [`Endpoint::poll_output`] (which needs the router, so one router can serve many endpoints
/// and change at run time behind whatever lock the adapter chooses).
///
/// # Examples
///
/// ```
/// use std::time::Instant;
/// use talaria_core::schema::tools::{CallToolResult, Tool};
/// use talaria_core::schema::Implementation;
/// use talaria_core::server::{Endpoint, Router};
/// use talaria_core::session::{Output, ServerConfig};
///
/// let router = Router::<()>::builder()
///     .tool(Tool::new("hi", Default::default()), |_ctx, _: serde_json::Value| Ok(CallToolResult::text("hello")))
///     .build();
/// let config = ServerConfig::new(Implementation::new("demo", "1")).with_capabilities(router.capabilities());
/// let mut endpoint = Endpoint::new(config, ());
/// let now = Instant::now();
/// endpoint.handle_bytes(now, br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}
/// {"jsonrpc":"2.0","method":"notifications/initialized"}
/// {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"hi"}}
/// "#);
/// let mut frames = Vec::new();
/// while let Some(out) = endpoint.poll_output(&router) {
///     if let Output::Transmit { payload, .. } = out {
///         frames.push(String::from_utf8(payload).unwrap());
///     }
/// }
/// assert!(frames[1].contains("hello"));
/// ```
pub struct Endpoint<S> {
    pub(super) session: Session<Server>,
    pub(super) state: S,
    pub(super) transport: Option<Arc<TransportInfo>>,
    /// Runs long-running tools off the I/O loop, if the adapter has somewhere to run them.
    pub(super) spawner: Option<Arc<dyn Spawn>>,
    /// Requests handed to a handler and not answered yet, with their cancellation flags.
    running: BTreeMap<RequestId, CancelFlag>,
    /// Legacy era: the URIs this client subscribed to.
    subscribed: BTreeSet<String>,
    /// Legacy era: `resources/subscribe` requests handed to the router whose answer has not
    /// gone out yet. The URI joins `subscribed` only if the answer is a result: the router's
    /// subscribe handler may refuse.
    subscribing: BTreeMap<RequestId, String>,
    /// Stateless era: open `subscriptions/listen` requests and what each agreed to carry.
    pub(super) listens: Vec<(ReplyToken, SubscriptionFilter)>,
    /// Requests sent to the client, with what to do with the answer.
    asked: BTreeMap<RequestId, ClientAnswer>,
    /// 2025-11-25: the tool calls run as tasks, and their outcomes.
    tasks: TaskTable,
    /// The tasks whose tool runs on: its detached request id, to the task's id.
    task_runs: BTreeMap<RequestId, String>,
    /// Requests sent to the client for a task's tool (2025-11-25): the task each is for,
    /// which is `input_required` until they are answered.
    task_asks: BTreeMap<RequestId, String>,
    /// The time of the latest input (tasks expire by it).
    now: Option<Instant>,
}

/// What a `tools/call` asking to run as a task names: the tool and the TTL asked for.
struct TaskAsked {
    name: String,
    ttl: Option<u64>,
}

/// The tool and TTL of `tools/call` params that carry `task`; `None` for a normal call.
fn task_asked(params: Option<&RawValue>) -> Option<TaskAsked> {
    #[derive(serde::Deserialize)]
    struct Probe {
        name: String,
        task: Option<TaskMetadata>,
    }
    let probe: Probe = serde_json::from_str(params?.get()).ok()?;
    probe.task.map(|task| TaskAsked { name: probe.name, ttl: task.ttl })
}

/// A task's outcome as `tasks/result` answers it: a result carries the task's id in
/// `_meta["io.modelcontextprotocol/related-task"]`.
fn related_to(task_id: &str, outcome: TaskOutcome) -> TaskOutcome {
    let raw = outcome?;
    let Ok(serde_json::Value::Object(mut result)) = serde_json::from_str::<serde_json::Value>(raw.get()) else {
        return Ok(raw);
    };
    let meta = result.entry("_meta").or_insert_with(|| serde_json::Value::Object(JsonObject::new()));
    if let serde_json::Value::Object(meta) = meta {
        meta.insert(meta_keys::RELATED_TASK.into(), serde_json::json!({ "taskId": task_id }));
    }
    Ok(serde_json::value::to_raw_value(&result).unwrap_or(raw))
}

/// Request `params` with `_meta["io.modelcontextprotocol/related-task"]` naming `task_id`
/// (2025-11-25: a request a task's tool sends says which task it is for).
fn with_related_task(params: Option<Box<RawValue>>, task_id: &str) -> Option<Box<RawValue>> {
    let mut object = match params.as_deref().map(|p| serde_json::from_str::<serde_json::Value>(p.get())) {
        Some(Ok(serde_json::Value::Object(object))) => object,
        None => JsonObject::new(),
        Some(_) => return params,
    };
    let meta = object.entry("_meta").or_insert_with(|| serde_json::Value::Object(JsonObject::new()));
    if let serde_json::Value::Object(meta) = meta {
        meta.insert(meta_keys::RELATED_TASK.into(), serde_json::json!({ "taskId": task_id }));
    }
    serde_json::value::to_raw_value(&object).ok().or(params)
}

impl<S> core::fmt::Debug for Endpoint<S> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Endpoint")
            .field("session", &self.session)
            .field("running", &self.running.len())
            .field("subscribed", &self.subscribed)
            .field("listens", &self.listens.len())
            .field("asked", &self.asked.len())
            .finish_non_exhaustive()
    }
}

impl<S> Endpoint<S> {
    /// A connection served with `config` (put the router's
    /// [`capabilities`](Router::capabilities) in it), starting with per-session `state`.
    #[must_use]
    pub fn new(config: impl Into<Arc<crate::session::ServerConfig>>, state: S) -> Self {
        Self::around(Session::<Server>::new(config), state)
    }

    /// A connection that goes on from a stored [`SessionSnapshot`](crate::session::SessionSnapshot)
    /// (see [`Session::restore`]), with fresh per-session `state`. Resource subscriptions are
    /// not part of a snapshot: clients subscribe again.
    #[must_use]
    pub fn restore(
        config: impl Into<Arc<crate::session::ServerConfig>>,
        snapshot: crate::session::SessionSnapshot,
        state: S,
    ) -> Self {
        let subscribed = snapshot.subscriptions.iter().cloned().collect();
        let mut endpoint = Self::around(Session::<Server>::restore(config, snapshot), state);
        endpoint.subscribed = subscribed;
        endpoint
    }

    /// Takes in a newer record of this session stored by another process (see
    /// [`Session::absorb`](crate::session::Session::absorb)), with the client's resource
    /// subscriptions; `state` replaces the application's state when given. What is under way
    /// here goes on.
    pub fn absorb(&mut self, snapshot: &crate::session::SessionSnapshot, state: Option<S>) {
        self.session.absorb(snapshot);
        self.subscribed = snapshot.subscriptions.iter().cloned().collect();
        if let Some(state) = state {
            self.state = state;
        }
    }

    /// The session as a record for another process (see
    /// [`SessionSnapshot`](crate::session::SessionSnapshot)): the session's own, with the
    /// client's resource subscriptions. `None` before the handshake has ended, and in the
    /// stateless era.
    #[must_use]
    pub fn snapshot(&self) -> Option<crate::session::SessionSnapshot> {
        let mut snapshot = self.session.snapshot()?;
        snapshot.subscriptions = self.subscribed.iter().cloned().collect();
        Some(snapshot)
    }

    fn around(session: Session<Server>, state: S) -> Self {
        Self {
            session,
            state,
            transport: None,
            spawner: None,
            running: BTreeMap::new(),
            subscribed: BTreeSet::new(),
            subscribing: BTreeMap::new(),
            listens: Vec::new(),
            asked: BTreeMap::new(),
            tasks: TaskTable::new(),
            task_runs: BTreeMap::new(),
            task_asks: BTreeMap::new(),
            now: None,
        }
    }

    /// Where task timestamps (`createdAt`, `lastUpdatedAt`) are read from: the adapter's wall
    /// clock (the core reads none; without one they read 1970-01-01).
    pub fn set_wall_clock(&mut self, wall: WallClock) {
        self.tasks.set_wall_clock(wall);
    }

    /// Tells handlers about the transport (see [`Context::transport`](super::Context::transport)).
    /// Requests dispatched from now on see it.
    pub fn set_transport(&mut self, info: TransportInfo) {
        self.transport = Some(Arc::new(info));
    }

    /// What the adapter last said about the transport (see [`Endpoint::set_transport`]).
    #[must_use]
    pub fn transport(&self) -> Option<&TransportInfo> {
        self.transport.as_deref()
    }

    /// The transport information to change in place, say with each HTTP request's headers
    /// (empty information if none was set). Requests dispatched from now on see the change;
    /// a handler already running keeps what it was given.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::server::{Endpoint, TransportInfo};
    /// use talaria_core::session::ServerConfig;
    /// use talaria_core::schema::Implementation;
    ///
    /// let mut endpoint = Endpoint::new(ServerConfig::new(Implementation::new("demo", "1")), ());
    /// endpoint.set_transport(TransportInfo::new("http").with_session_id("s1"));
    /// endpoint.transport_mut().headers.push("Authorization", "Bearer x");
    /// let info = endpoint.transport().unwrap();
    /// assert_eq!((info.session_id.as_deref(), info.header("authorization")), (Some("s1"), Some("Bearer x")));
    /// ```
    pub fn transport_mut(&mut self) -> &mut TransportInfo {
        Arc::make_mut(self.transport.get_or_insert_with(Default::default))
    }

    /// Where long-running tools ([`RouterBuilder::blocking_tool`](super::RouterBuilder::blocking_tool))
    /// run; without one they run inline, on the caller's thread.
    pub fn set_spawner(&mut self, spawner: Arc<dyn Spawn>) {
        self.spawner = Some(spawner);
    }

    /// The session.
    #[must_use]
    pub const fn session(&self) -> &Session<Server> {
        &self.session
    }

    /// The session, for what the endpoint does not wrap.
    pub const fn session_mut(&mut self) -> &mut Session<Server> {
        &mut self.session
    }

    /// Numbers the requests this session sends the client with `prefix` (see
    /// [`Session::number_requests_with`]).
    pub fn number_requests_with(&mut self, prefix: &str) {
        self.session.number_requests_with(prefix);
    }

    /// The HTTP response stream `stream` closed: its request is cancelled (see
    /// [`Session::handle_stream_closed`]).
    pub fn handle_stream_closed(&mut self, now: Instant, stream: crate::session::StreamId) {
        self.session.handle_stream_closed(now, stream);
    }

    /// The per-session state.
    pub const fn state(&mut self) -> &mut S {
        &mut self.state
    }

    /// How many requests wait in (or were deferred by) handlers.
    #[must_use]
    pub fn running(&self) -> usize {
        self.running.len()
    }

    /// Bytes from a stream transport (stdio, WebSocket, legacy SSE POST bodies).
    pub fn handle_bytes(&mut self, now: Instant, bytes: &[u8]) {
        self.now = Some(now);
        self.session.handle_bytes(now, bytes);
    }

    /// One complete JSON text from `route`.
    pub fn handle_frame(&mut self, now: Instant, route: Route, frame: &[u8]) {
        self.now = Some(now);
        self.session.handle_frame(now, route, frame);
    }

    /// The transport is gone.
    pub fn handle_closed(&mut self, now: Instant) {
        self.now = Some(now);
        self.session.handle_closed(now);
    }

    /// A deadline from [`Endpoint::poll_timeout`] has passed.
    pub fn handle_timeout(&mut self, now: Instant) {
        self.now = Some(now);
        self.session.handle_timeout(now);
        self.expire_tasks(now);
    }

    /// When to call [`Endpoint::handle_timeout`] next (the session's deadlines, and the
    /// expiry of a task someone waits for).
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Instant> {
        let session = self.session.poll_timeout();
        match (session, self.tasks.next_awaited_expiry()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// The next output: frames to transmit, streams done, and the events the endpoint does not
    /// handle itself (`Ready`, notifications such as `roots/list_changed`, `LogLevelChanged`,
    /// `PeerMisbehaved`, `Closed`). Requests are dispatched to `router` on the way, and
    /// answers to [`Endpoint::ask`] go to their callbacks. Call until `None` after every input
    /// or command.
    pub fn poll_output(&mut self, router: &Router<S>) -> Option<Output> {
        loop {
            match self.session.poll_output()? {
                Output::Event(event) => {
                    if let Some(event) = self.on_event(router, event) {
                        return Some(Output::Event(event));
                    }
                }
                other => {
                    if let Output::Transmit { carries, .. } = &other {
                        if !self.subscribing.is_empty() {
                            self.settle_subscriptions(carries);
                        }
                    }
                    return Some(other);
                }
            }
        }
    }

    fn on_event(&mut self, router: &Router<S>, event: Event) -> Option<Event> {
        match event {
            Event::Request(request) => {
                self.on_request(router, request);
                None
            }
            Event::PeerCancelled { id, .. } => {
                if let Some(flag) = self.running.remove(&id) {
                    flag.cancel();
                }
                self.subscribing.remove(&id);
                self.listens.retain(|(reply, _)| *reply.id() != id);
                None
            }
            Event::Response { id, outcome } => match self.asked.remove(&id) {
                Some(answer) => {
                    answer(outcome);
                    self.task_answered(&id);
                    None
                }
                None => Some(Event::Response { id, outcome }),
            },
            Event::Closed { reason } => {
                for flag in core::mem::take(&mut self.running).into_values() {
                    flag.cancel();
                }
                self.tasks.cancel_all();
                self.listens.clear();
                self.subscribing.clear();
                Some(Event::Closed { reason })
            }
            other => Some(other),
        }
    }

    fn on_request(&mut self, router: &Router<S>, request: IncomingRequest) {
        let tasks = router.offers_tasks() && self.session.version().is_some_and(|v| v.supports(Feature::Tasks));
        let ext_tasks = router.offers_tasks() && self.is_stateless();
        let request = match request.method.as_str() {
            "tasks/get" | "tasks/update" | "tasks/cancel" if ext_tasks => {
                return self.on_ext_task_request(router, request);
            }
            "tools/call" if ext_tasks => match self.call_as_ext_task(router, request) {
                Some(request) => request,
                None => return,
            },
            _ => request,
        };
        match request.method.as_str() {
            "subscriptions/listen" => return self.listen(router, request),
            "tasks/get" | "tasks/result" | "tasks/list" | "tasks/cancel" if tasks => {
                return self.on_task_request(request);
            }
            "tools/call" if tasks => {
                if let Some(asked) = task_asked(request.params.as_deref()) {
                    return self.call_as_task(router, request, &asked);
                }
            }
            "resources/subscribe" | "resources/unsubscribe" if router.subscriptions.is_some() => {
                self.track_subscription(router, &request);
            }
            _ => {}
        }
        let id = request.reply.id().clone();
        let cancel = CancelFlag::default();
        let extras = Extras {
            cancel: cancel.clone(),
            transport: self.transport.clone(),
            spawner: self.spawner.clone(),
            task_run: None,
        };
        // Errors here mean the session closed; the `Closed` event tells the adapter.
        let _ = router.dispatch_with(&mut self.session, &mut self.state, request, extras);
        if self.session.awaits_answer(&id) {
            self.running.insert(id, cancel);
        }
    }

    /// Legacy era: remembers which URIs the client subscribes to, so updates reach only them.
    /// An unsubscription counts at once; a subscription once its answer goes out as a result
    /// (see [`Endpoint::settle_subscriptions`]).
    fn track_subscription(&mut self, router: &Router<S>, request: &IncomingRequest) {
        let text = request.params.as_deref().map_or("{}", RawValue::get);
        let Ok(params) = serde_json::from_str::<SubscribeRequestParams>(text) else { return };
        if request.method == "resources/unsubscribe" {
            self.subscribed.remove(&params.uri);
        } else if router.offers_uri(&params.uri) {
            self.subscribing.insert(request.reply.id().clone(), params.uri);
        }
    }

    /// Looks for the answers to pending `resources/subscribe` requests in a frame going out
    /// (one message, or a batch): a result commits the subscription, an error drops it.
    fn settle_subscriptions(&mut self, carries: &Carries) {
        // Requests this server sends carry ids too, from its own counter: only answers count.
        for (id, ok) in carries.answers() {
            if let Some(uri) = self.subscribing.remove(id) {
                if ok {
                    self.subscribed.insert(uri);
                }
            }
        }
    }

    /// Stateless era: opens a notification stream carrying what the client asked for and the
    /// router can send, and acknowledges it.
    fn listen(&mut self, router: &Router<S>, request: IncomingRequest) {
        let text = request.params.as_deref().map_or("{}", RawValue::get);
        let wanted = match serde_json::from_str::<SubscriptionsListenRequestParams>(text) {
            Ok(params) => params.notifications,
            Err(e) => {
                let error = ErrorObject::invalid_params(format!("Invalid params for subscriptions/listen: {e}"));
                let _ = self.session.respond(request.reply, Err(error));
                return;
            }
        };
        let task_ids = match self.followed_tasks(router, wanted.task_ids, request.meta.as_deref()) {
            Ok(ids) => ids,
            Err(refusal) => {
                let _ = self.session.respond(request.reply, Err(refusal));
                return;
            }
        };
        let changes = router.list_changes;
        let agreed = SubscriptionFilter {
            task_ids,
            tools_list_changed: wanted.tools_list_changed.filter(|&on| on && changes),
            prompts_list_changed: wanted.prompts_list_changed.filter(|&on| on && changes),
            resources_list_changed: wanted.resources_list_changed.filter(|&on| on && changes),
            resource_subscriptions: wanted.resource_subscriptions.filter(|_| router.subscriptions.is_some()),
            ..SubscriptionFilter::default()
        };
        let ack = SubscriptionsAcknowledgedNotificationParams { notifications: agreed.clone(), ..Default::default() };
        let Ok(params) = serde_json::value::to_raw_value(&ack) else { return };
        let reply = request.reply;
        if self.session.notify_related(&reply, "notifications/subscriptions/acknowledged", Some(params)).is_ok() {
            self.listens.push((reply, agreed));
        }
    }

    /// Announces a change to what the router offers to this client: as a `list_changed`
    /// notification on the connection (legacy era, if `listChanged` was negotiated), or on
    /// each `subscriptions/listen` stream that asked for it (2026-07-28).
    ///
    /// # Errors
    ///
    /// [`SendError::Closed`] if the session is closed.
    pub fn announce(&mut self, change: ListChanged) -> Result<(), SendError> {
        if !self.is_stateless() {
            return change.notify(&mut self.session);
        }
        for (reply, filter) in &self.listens {
            let wanted = match change.method() {
                "notifications/tools/list_changed" => filter.tools_list_changed,
                "notifications/prompts/list_changed" => filter.prompts_list_changed,
                "notifications/resources/list_changed" => filter.resources_list_changed,
                _ => None,
            };
            if wanted == Some(true) {
                self.session.notify_related(reply, change.method(), None)?;
            }
        }
        Ok(())
    }

    /// Tells this client that the resource at `uri` changed, if it subscribed to it
    /// (`resources/subscribe` in the legacy era, a listen stream's `resourceSubscriptions` in
    /// 2026-07-28). Returns whether a notification was sent.
    ///
    /// # Errors
    ///
    /// [`SendError::Closed`] if the session is closed.
    pub fn resource_updated(&mut self, uri: &str) -> Result<bool, SendError> {
        let params = serde_json::value::to_raw_value(&ResourceUpdatedNotificationParams::new(uri))
            .map_err(|e| SendError::Encode(e.to_string()))?;
        if !self.is_stateless() {
            if !self.subscribed.contains(uri) {
                return Ok(false);
            }
            self.session.notify("notifications/resources/updated", Some(params))?;
            return Ok(true);
        }
        let mut sent = false;
        for (reply, filter) in &self.listens {
            if filter.resource_subscriptions.iter().flatten().any(|u| u == uri) {
                self.session.notify_related(reply, "notifications/resources/updated", Some(params.clone()))?;
                sent = true;
            }
        }
        Ok(sent)
    }

    /// The URIs this client is subscribed to (legacy era).
    pub fn subscriptions(&self) -> impl Iterator<Item = &str> {
        self.subscribed.iter().map(String::as_str)
    }

    /// Answers a tool call a handler deferred.
    ///
    /// # Errors
    ///
    /// As [`Router::complete_tool`].
    pub fn complete_tool(
        &mut self,
        router: &Router<S>,
        deferred: Deferred,
        outcome: Result<CallToolResult, ToolError>,
    ) -> Result<(), SendError> {
        self.running.remove(deferred.reply.id());
        if let Some(task_id) = self.task_runs.remove(deferred.reply.id()) {
            let (outcome, failed) = task_outcome(self.session.version(), outcome);
            if let Some(ended) = self.tasks.finish(&task_id, outcome, failed) {
                self.task_ended(ended, true);
            }
            return Ok(());
        }
        router.complete_tool(&mut self.session, deferred, outcome)
    }

    /// Answers a prompt or resource read an async handler deferred.
    ///
    /// # Errors
    ///
    /// As [`Router::complete_answer`].
    pub fn complete_answer(
        &mut self,
        router: &Router<S>,
        deferred: Deferred,
        answer: super::LaterAnswer,
    ) -> Result<(), SendError> {
        self.running.remove(deferred.reply.id());
        router.complete_answer(&mut self.session, deferred, answer)
    }

    /// A `tools/call` asking to run as a task (2025-11-25): the task is created and answered
    /// at once (`CreateTaskResult`); the tool runs on, its outcome kept for `tasks/result`.
    fn call_as_task(&mut self, router: &Router<S>, request: IncomingRequest, asked: &TaskAsked) {
        let IncomingRequest { reply, method, params, progress_token, meta } = request;
        let refusal = match router.task_support(&asked.name) {
            None => Some(ErrorObject::invalid_params(format!("Unknown tool: {}", asked.name))),
            Some(TaskSupport::Forbidden) => Some(ErrorObject::new(
                ErrorCode::METHOD_NOT_FOUND,
                format!("tool {} cannot be called as a task", asked.name),
            )),
            Some(_) => None,
        };
        if let Some(error) = refusal {
            let _ = self.session.respond(reply, Err(error));
            return;
        }
        let (Some(now), cancel) = (self.now, CancelFlag::default()) else {
            let _ = self.session.respond(reply, Err(ErrorObject::internal("no time known yet")));
            return;
        };
        self.expire_tasks(now);
        let Some(task) = self.tasks.create(now, asked.ttl, cancel.clone()) else {
            let error = ErrorObject::internal(format!("too many tasks (at most {MAX_TASKS} per session)"));
            let _ = self.session.respond(reply, Err(error));
            return;
        };
        let run = RequestId::String(format!("talaria-task/{}", task.task_id));
        let detached =
            IncomingRequest { reply: ReplyToken::detached(run.clone()), method, params, progress_token, meta };
        let extras =
            Extras { cancel, transport: self.transport.clone(), spawner: self.spawner.clone(), task_run: None };
        let task = match router.run_tool_as_task(&mut self.session, &mut self.state, detached, extras) {
            ToolRun::Deferred => {
                self.task_runs.insert(run, task.task_id.clone());
                task
            }
            ToolRun::Answer(_, outcome) => {
                let (outcome, failed) = task_outcome(self.session.version(), outcome);
                // Over before its id was given out: nobody waits, nobody is told.
                self.tasks.finish(&task.task_id, outcome, failed).map_or(task, |ended| ended.task)
            }
            ToolRun::InputRequired(..) => {
                let error = ErrorObject::internal("the tool asked for input_required outside 2026-07-28");
                self.tasks.finish(&task.task_id, Err(error), true).map_or(task, |ended| ended.task)
            }
        };
        let _ = self.session.respond_with(reply, &CreateTaskResult::new(task));
    }

    /// `tasks/get`, `tasks/result`, `tasks/list` and `tasks/cancel` (2025-11-25).
    fn on_task_request(&mut self, request: IncomingRequest) {
        let IncomingRequest { reply, method, params, .. } = request;
        let Some(now) = self.now else {
            let _ = self.session.respond(reply, Err(ErrorObject::internal("no time known yet")));
            return;
        };
        self.expire_tasks(now);
        if method == "tasks/list" {
            let tasks = self.tasks.list();
            let _ = self.session.respond_with(reply, &ListTasksResult { tasks, ..ListTasksResult::default() });
            return;
        }
        let id = match serde_json::from_str::<GetTaskRequestParams>(params.as_deref().map_or("{}", RawValue::get)) {
            Ok(p) => p.task_id,
            Err(e) => {
                let _ = self.session.respond(reply, Err(ErrorObject::invalid_params(format!("{method}: {e}"))));
                return;
            }
        };
        match method.as_str() {
            "tasks/get" => match self.tasks.get(&id) {
                Some(task) => drop(self.session.respond_with(reply, &task)),
                None => drop(self.session.respond(reply, Err(unknown_task(&id)))),
            },
            "tasks/result" => match self.tasks.result_or_wait(&id, reply) {
                Ok(Some((reply, outcome))) => drop(self.session.respond(reply, related_to(&id, outcome))),
                Ok(None) => {}
                Err(reply) => drop(self.session.respond(reply, Err(unknown_task(&id)))),
            },
            _ => match self.tasks.cancel(&id) {
                Ok(ended) => {
                    let task = ended.task.clone();
                    self.task_ended(ended, false);
                    let _ = self.session.respond_with(reply, &task);
                }
                Err(error) => drop(self.session.respond(reply, Err(error))),
            },
        }
    }

    /// Forgets the tasks whose TTL ran out, answering the `tasks/result` requests that
    /// waited for them (-32602: the task is gone).
    fn expire_tasks(&mut self, now: Instant) {
        for (id, waiter) in self.tasks.expire(now) {
            let _ = self.session.respond(waiter, Err(unknown_task(&id)));
        }
    }

    /// A task ended: the `tasks/result` requests waiting get its outcome, and (if `tell`)
    /// the client is told its new status.
    fn task_ended(&mut self, ended: Ended, tell: bool) {
        let Ended { task, outcome, waiters } = ended;
        for waiter in waiters {
            let _ = self.session.respond(waiter, related_to(&task.task_id, outcome.clone()));
        }
        if tell {
            self.tell_status(&task);
        }
    }

    /// Sends request `M` to the client (legacy era: `sampling/createMessage`,
    /// `elicitation/create`, `roots/list`, `ping`); `answer` gets the typed outcome when it
    /// arrives, from [`Endpoint::poll_output`]. Returns the request's id.
    ///
    /// # Errors
    ///
    /// As [`Session::send_request`]: the client lacks the capability, the revision lacks the
    /// method, the session is closed.
    pub fn ask<M: RequestMethod>(
        &mut self,
        now: Instant,
        params: &M::Params,
        options: RequestOptions,
        answer: impl FnOnce(Result<M::Result, CallError>) + Send + 'static,
    ) -> Result<RequestId, SendError> {
        let id = self.session.send(now, M::INFO.name, params, options)?;
        let decode = move |outcome: Result<Box<RawValue>, CallError>| {
            answer(outcome.and_then(|raw| {
                serde_json::from_str(raw.get()).map_err(|e| {
                    CallError::Local(LocalError::MalformedResponse(format!("{} result: {e}", M::INFO.name)))
                })
            }));
        };
        self.asked.insert(id.clone(), Box::new(decode));
        Ok(id)
    }

    /// Sends request `method` with raw `params` to the client; `answer` gets the raw outcome.
    /// The untyped twin of [`Endpoint::ask`], for adapters relaying a running task's
    /// questions. With `about`, the request travels on the route of that client request (its
    /// HTTP response stream; see [`Session::send_request_related`]).
    ///
    /// # Errors
    ///
    /// As [`Endpoint::ask`].
    pub fn ask_raw(
        &mut self,
        now: Instant,
        about: Option<&ReplyToken>,
        method: &str,
        params: Option<Box<RawValue>>,
        options: RequestOptions,
        answer: ClientAnswer,
    ) -> Result<RequestId, SendError> {
        let task_id = about.and_then(|reply| self.task_runs.get(reply.id())).cloned();
        let params = match &task_id {
            Some(task_id) => with_related_task(params, task_id),
            None => params,
        };
        let id = match about {
            Some(reply) => self.session.send_request_related(now, reply, method, params, options)?,
            None => self.session.send_request(now, method, params, options)?,
        };
        self.asked.insert(id.clone(), answer);
        if let Some(task_id) = task_id {
            // 2025-11-25: a task whose tool waits on the client is `input_required`.
            if let Some(task) = self.tasks.set_status(&task_id, TaskStatus::InputRequired) {
                self.tell_status(&task);
            }
            self.task_asks.insert(id.clone(), task_id);
        }
        Ok(id)
    }

    /// The client answered request `id`: if a task's tool asked it and waits on nothing else,
    /// the task is `working` again.
    fn task_answered(&mut self, id: &RequestId) {
        let Some(task_id) = self.task_asks.remove(id) else { return };
        if self.task_asks.values().any(|t| *t == task_id) {
            return;
        }
        if let Some(task) = self.tasks.set_status(&task_id, TaskStatus::Working) {
            self.tell_status(&task);
        }
    }

    /// Tells the client a task's new status (`notifications/tasks/status`).
    fn tell_status(&mut self, task: &crate::schema::tasks::Task) {
        if let Ok(params) = serde_json::value::to_raw_value(task) {
            let _ = self.session.notify("notifications/tasks/status", Some(params));
        }
    }

    fn is_stateless(&self) -> bool {
        self.session.version().is_some_and(|v| v.supports(Feature::Stateless))
    }
}
