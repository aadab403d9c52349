//! One client connection, ready to drive: the session, the handlers that answer the server,
//! and a completion per request in flight.

use crate::alloc_prelude::*;
use crate::time::{Duration, Instant};
use alloc::borrow::Cow;
use alloc::collections::BTreeMap;

use serde::Deserialize;
use serde_json::value::RawValue;

use super::ext_tasks::TaskCalls;
use super::mrtr::next_round;
use super::{check_structured_output, Handlers};
use crate::http::param_headers::without_invalid_mirroring;
use crate::jsonrpc::{ErrorCode, ErrorObject, RequestId};
use crate::schema::tools::{CallToolResult, ListToolsResult, Tool};
use crate::schema::{result_type_of, JsonObject, RequestMethod, ResultType};
use crate::session::{
    BatchItem, CallError, Client, ClientConfig, ClientMode, Event, LocalError, Output, RequestOptions, SendError,
    Session,
};
use crate::version::Feature;

/// What to do with a request's outcome. Called exactly once, from
/// [`Endpoint::poll_output`]; keep it short (hand the outcome to a waiting thread or task).
pub type Completion = Box<dyn FnOnce(Result<Box<RawValue>, CallError>) + Send>;

/// A progress callback for one request.
pub type ProgressFn = Box<dyn FnMut(Progress) + Send>;

/// Progress the server reported on a request.
#[derive(Debug, Clone, PartialEq)]
pub struct Progress {
    /// Progress so far (increases with every report).
    pub progress: f64,
    /// The total, if known.
    pub total: Option<f64>,
    /// A message, if any.
    pub message: Option<String>,
}

/// How one call is made: its timeouts and an optional progress callback.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use talaria_core::client::CallOptions;
///
/// let options = CallOptions::default()
///     .with_timeout(Duration::from_secs(5))
///     .with_progress(|p| eprintln!("{:.0}%", 100.0 * p.progress / p.total.unwrap_or(1.0)));
/// # let _ = options;
/// ```
#[derive(Default)]
#[must_use]
pub struct CallOptions {
    request: RequestOptions,
    on_progress: Option<ProgressFn>,
    task: TaskMode,
}

/// What a call does with a task (the 2026-07-28 tasks extension).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) enum TaskMode {
    /// A `tools/call` answered with a task is followed until the task ends.
    #[default]
    Follow,
    /// A `tools/call` answered with a task ends with the `CreateTaskResult`.
    Keep,
    /// A `tasks/get` is followed until the task ends, without owning the task.
    Watch,
}

impl core::fmt::Debug for CallOptions {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("CallOptions")
            .field("request", &self.request)
            .field("on_progress", &self.on_progress.is_some())
            .field("task", &self.task)
            .finish()
    }
}

impl CallOptions {
    /// Overrides the session's request timeout (reset by each progress report).
    pub const fn with_timeout(mut self, timeout: Duration) -> Self {
        self.request.timeout = Some(timeout);
        self
    }

    /// Overrides the session's cap on total time, progress or not.
    pub const fn with_max_time(mut self, max_time: Duration) -> Self {
        self.request.max_time = Some(max_time);
        self
    }

    /// Wraps the progress callback, if any (an adapter moving it out of its lock).
    pub fn map_progress(mut self, wrap: impl FnOnce(ProgressFn) -> ProgressFn) -> Self {
        self.on_progress = self.on_progress.map(wrap);
        self
    }

    /// A `tools/call` the server answers with a task (the 2026-07-28 tasks extension) ends
    /// at once with the `CreateTaskResult` (`resultType: "task"`, the `taskId`), instead of
    /// being followed until the task ends: the caller polls, watches or cancels it itself.
    ///
    /// # Examples
    ///
    /// ```
    /// let options = talaria_core::client::CallOptions::default().keeping_task();
    /// # let _ = options;
    /// ```
    pub const fn keeping_task(mut self) -> Self {
        self.task = TaskMode::Keep;
        self
    }

    /// Turns a `tasks/get` (the 2026-07-28 tasks extension) into a watch: the call ends
    /// with the task's outcome (the tool's result or error) once it ends, and meanwhile the
    /// task is followed as a call answered with a task is (input requests answered, each
    /// change reported as progress, the timeout restarted by each change). The task is not
    /// the call's: cancelling the call stops the watch and leaves the task running.
    ///
    /// # Examples
    ///
    /// ```
    /// let options = talaria_core::client::CallOptions::default()
    ///     .watching_task()
    ///     .with_progress(|p| eprintln!("{}", p.message.unwrap_or_default()));
    /// # let _ = options;
    /// ```
    pub const fn watching_task(mut self) -> Self {
        self.task = TaskMode::Watch;
        self
    }

    /// Asks the server for progress and hands each report to `on_progress`. A call followed
    /// through a task (2026-07-28) reports each change of the task the same way: its status
    /// message (or status) as the message.
    pub fn with_progress(mut self, on_progress: impl FnMut(Progress) + Send + 'static) -> Self {
        self.request = self.request.with_progress();
        self.on_progress = Some(Box::new(on_progress));
        self
    }
}

/// A request in flight.
pub(super) struct Pending {
    /// The id the caller knows it by (the first attempt's, when an MRTR retry re-sent it).
    pub(super) origin: RequestId,
    done: Completion,
    pub(super) progress: Option<ProgressFn>,
    check: Check,
    /// Kept for an MRTR retry (stateless era only).
    pub(super) retry: Option<Retry>,
}

/// What to look at in a result before handing it over.
enum Check {
    Nothing,
    /// Learn the tools' output schemas.
    ListTools,
    /// Check structured content against this tool's output schema.
    CallTool(String),
    /// A `tools/list` sent on behalf of this call, refused with this header mismatch: once it
    /// is answered (the transport learnt which arguments to mirror), the call goes again.
    Relist(Box<Pending>, ErrorObject),
}

pub(super) struct Retry {
    pub(super) method: String,
    params: JsonObject,
    pub(super) options: RequestOptions,
    /// When the call was first sent (a task it became ends by its `max_time` from then).
    pub(super) started: Instant,
    rounds: usize,
    /// The call went again after a `tools/list` (see [`Check::Relist`]); once is enough.
    relisted: bool,
    /// What to do with a task.
    pub(super) task: TaskMode,
}

/// A client connection: a [`Session<Client>`], the [`Handlers`] that answer the server, and a
/// [`Completion`] per request in flight. It answers server requests (roots, sampling,
/// elicitation), routes progress to each call's callback, validates structured tool output
/// against the output schemas `tools/list` declared, and, in the stateless era, answers
/// `input_required` results and retries transparently (bounded rounds).
///
/// Sans-IO: the adapter feeds it bytes and time and drains [`Endpoint::poll_output`]; the
/// events it does not handle itself (`Ready`, `Log`, notifications such as list changes,
/// `PeerMisbehaved`, `Closed`) come out of it for the application.
///
/// # Examples
///
/// ```
/// use std::time::Instant;
/// use talaria_core::client::{CallOptions, Endpoint, Handlers};
/// use talaria_core::schema::{tools::ListTools, Implementation, PaginatedRequestParams};
/// use talaria_core::session::{ClientConfig, ClientMode, Output};
///
/// let now = Instant::now();
/// let config = ClientConfig::new(Implementation::new("c", "1")).with_mode(ClientMode::Legacy);
/// let mut client = Endpoint::new(config, Handlers::default(), now);
/// let id = client
///     .call::<ListTools>(now, &PaginatedRequestParams::default(), CallOptions::default(), |outcome| {
///         println!("{} tools", outcome.map(|r| r.tools.len()).unwrap_or(0));
///     })
///     .unwrap();
/// // `initialize` goes out first; `tools/list` waits for the handshake.
/// let Some(Output::Transmit { payload, .. }) = client.poll_output() else { panic!() };
/// assert!(String::from_utf8(payload).unwrap().contains("initialize"));
/// assert_eq!(client.pending(), 1);
/// # let _ = id;
/// ```
pub struct Endpoint {
    pub(super) session: Session<Client>,
    pub(super) handlers: Handlers,
    pending: BTreeMap<RequestId, Pending>,
    /// Tools with an output schema, as the last `tools/list` pages described them.
    tools: BTreeMap<String, Tool>,
    max_input_rounds: usize,
    /// The mode forbids the stateless era, so no result can be `input_required`.
    legacy_only: bool,
    /// The time of the latest input or command (retries are sent at it).
    pub(super) now: Instant,
    /// Calls answered with a task (2026-07-28 tasks extension), followed to their end.
    pub(super) tasks: TaskCalls,
}

impl core::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Endpoint")
            .field("session", &self.session)
            .field("handlers", &self.handlers)
            .field("pending", &self.pending.len())
            .field("tools", &self.tools.len())
            .finish_non_exhaustive()
    }
}

/// How many `input_required` rounds one call may take before it fails.
pub const DEFAULT_MAX_INPUT_ROUNDS: usize = 8;

impl Endpoint {
    /// A client connection with `config` (the handlers' [`capabilities`](Handlers::capabilities)
    /// are merged into it); the handshake starts at once.
    #[must_use]
    pub fn new(config: ClientConfig, handlers: Handlers, now: Instant) -> Self {
        let wanted = handlers.capabilities();
        let mut config = config;
        let caps = &mut config.capabilities;
        caps.roots = caps.roots.take().or(wanted.roots);
        caps.sampling = caps.sampling.take().or(wanted.sampling);
        caps.elicitation = caps.elicitation.take().or(wanted.elicitation);
        let legacy_only = config.mode == ClientMode::Legacy;
        Self {
            session: Session::<Client>::new(config, now),
            handlers,
            pending: BTreeMap::new(),
            tools: BTreeMap::new(),
            max_input_rounds: DEFAULT_MAX_INPUT_ROUNDS,
            legacy_only,
            now,
            tasks: TaskCalls::default(),
        }
    }

    /// Shows `observer` every frame received (before it is handled) and every frame to
    /// transmit (as [`Endpoint::poll_output`] hands it out): the seam for wire traces. See
    /// [`Session::observe_frames`](crate::session::Session::observe_frames).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::{Arc, Mutex};
    /// use std::time::Instant;
    /// use talaria_core::client::{Endpoint, FrameDirection, Handlers};
    /// use talaria_core::schema::Implementation;
    /// use talaria_core::session::ClientConfig;
    ///
    /// let seen = Arc::new(Mutex::new(Vec::new()));
    /// let log = Arc::clone(&seen);
    /// let mut client = Endpoint::new(ClientConfig::new(Implementation::new("c", "1")), Handlers::default(), Instant::now());
    /// client.observe_frames(Box::new(move |direction, frame| log.lock().unwrap().push((direction, frame.len()))));
    /// while client.poll_output().is_some() {}
    /// assert_eq!(seen.lock().unwrap()[0].0, FrameDirection::Sent, "the handshake's first request");
    /// ```
    pub fn observe_frames(&mut self, observer: crate::session::FrameObserver) {
        self.session.observe_frames(observer);
    }

    /// Caps the `input_required` rounds of one call (default [`DEFAULT_MAX_INPUT_ROUNDS`]).
    pub const fn set_max_input_rounds(&mut self, rounds: usize) {
        self.max_input_rounds = rounds;
    }

    /// The session: negotiated version, server info, capabilities and instructions.
    #[must_use]
    pub const fn session(&self) -> &Session<Client> {
        &self.session
    }

    /// The session, for what the endpoint does not wrap.
    pub const fn session_mut(&mut self) -> &mut Session<Client> {
        &mut self.session
    }

    /// Closes the session (see [`Session::close`]).
    pub fn close(&mut self) {
        self.session.close();
    }

    /// The transport could not deliver request `id` (see [`Session::transport_failed`]).
    pub fn transport_failed(&mut self, now: Instant, id: &RequestId, why: &str) {
        self.session.transport_failed(now, id, why);
    }

    /// The server forgot the session (an HTTP 404; see [`Session::session_lost`]).
    pub fn session_lost(&mut self, now: Instant, reason: &str) {
        self.session.session_lost(now, reason);
    }

    /// The transport refused request `id` with `error` (see [`Session::refused`]).
    pub fn refused(&mut self, now: Instant, id: &RequestId, error: ErrorObject) {
        self.session.refused(now, id, error);
    }

    /// The log level asked for on every request of the stateless era (see
    /// [`Session::set_request_log_level`]).
    pub fn set_request_log_level(&mut self, level: Option<crate::schema::LoggingLevel>) {
        self.session.set_request_log_level(level);
    }

    /// Sends a notification to the server.
    ///
    /// # Errors
    ///
    /// As [`Session::notify`].
    pub fn notify(&mut self, method: &str, params: Option<Box<RawValue>>) -> Result<(), SendError> {
        self.session.notify(method, params)
    }

    /// The handlers.
    #[must_use]
    pub const fn handlers(&self) -> &Handlers {
        &self.handlers
    }

    /// Changes the handlers' roots (or anything else about them), then tells the server if
    /// the roots changed (`notifications/roots/list_changed`, where the revision has it).
    ///
    /// # Errors
    ///
    /// [`SendError::Closed`].
    pub fn update_roots<T>(&mut self, change: impl FnOnce(&mut Handlers) -> T) -> Result<T, SendError> {
        let before = self.handlers.roots().to_vec();
        let out = change(&mut self.handlers);
        if before != self.handlers.roots() {
            self.handlers.announce_roots(&mut self.session)?;
        }
        Ok(out)
    }

    /// How many calls wait for their outcome.
    #[must_use]
    pub fn pending(&self) -> usize {
        self.pending.len() + self.tasks.len()
    }

    /// Bytes from a stream transport (stdio, WebSocket).
    pub fn handle_bytes(&mut self, now: Instant, bytes: &[u8]) {
        self.now = now;
        self.session.handle_bytes(now, bytes);
    }

    /// One complete JSON text from `route` (an HTTP body, an SSE event's data).
    pub fn handle_frame(&mut self, now: Instant, route: crate::session::Route, frame: &[u8]) {
        self.now = now;
        self.session.handle_frame(now, route, frame);
    }

    /// The transport is gone: every call in flight fails with a transport error.
    pub fn handle_closed(&mut self, now: Instant) {
        self.now = now;
        self.session.handle_closed(now);
    }

    /// A deadline from [`Endpoint::poll_timeout`] has passed.
    pub fn handle_timeout(&mut self, now: Instant) {
        self.now = now;
        self.session.handle_timeout(now);
        self.poll_due_tasks(now);
    }

    /// When to call [`Endpoint::handle_timeout`] next: the session's next deadline, or the
    /// next poll of a task a call waits for.
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Instant> {
        match (self.session.poll_timeout(), self.tasks.next_poll()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Sends requests and notifications as one JSON-RPC batch (2025-03-26 only). Each request
    /// of `items` comes with its completion, called once with its outcome like
    /// [`Endpoint::request`]'s; notifications have none. Returns the requests' ids in order.
    ///
    /// # Errors
    ///
    /// As [`Session::send_batch`]: [`SendError::BatchNotSupported`] outside a ready
    /// 2025-03-26 session, [`SendError::EmptyBatch`], or the gating errors of any item (then
    /// nothing is sent and no completion is called).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Instant;
    /// use talaria_core::client::{Endpoint, Handlers};
    /// use talaria_core::schema::Implementation;
    /// use talaria_core::session::{BatchItem, ClientConfig, SendError};
    ///
    /// let mut client = Endpoint::new(ClientConfig::new(Implementation::new("c", "1")), Handlers::default(), Instant::now());
    /// let ping = BatchItem::Request { method: "ping".into(), params: None, options: Default::default() };
    /// // Not before a 2025-03-26 handshake.
    /// let refused = client.batch(Instant::now(), vec![(ping, Some(Box::new(|_| {})))]);
    /// assert!(matches!(refused, Err(SendError::BatchNotSupported)));
    /// ```
    pub fn batch(
        &mut self,
        now: Instant,
        items: Vec<(BatchItem, Option<Completion>)>,
    ) -> Result<Vec<RequestId>, SendError> {
        self.now = now;
        let (items, mut completions): (Vec<BatchItem>, Vec<Option<Completion>>) = items.into_iter().unzip();
        let ids = self.session.send_batch(now, items)?;
        let mut sent = Vec::new();
        for (id, done) in ids.into_iter().zip(completions.drain(..)) {
            let (Some(id), Some(done)) = (id, done) else { continue };
            let pending = Pending { origin: id.clone(), done, progress: None, check: Check::Nothing, retry: None };
            self.pending.insert(id.clone(), pending);
            sent.push(id);
        }
        Ok(sent)
    }

    /// Sends request `method` with raw `params`; `done` gets the raw outcome. Returns the id
    /// to [`cancel`](Endpoint::cancel) it by.
    ///
    /// A `subscriptions/listen` request (2026-07-28) lives until it is cancelled: unless
    /// `options` set them, it has no timeout and no cap on its total time.
    ///
    /// # Errors
    ///
    /// As [`Session::send_request`].
    pub fn request(
        &mut self,
        now: Instant,
        method: &str,
        params: Option<Box<RawValue>>,
        mut options: CallOptions,
        done: Completion,
    ) -> Result<RequestId, SendError> {
        self.now = now;
        if method == "subscriptions/listen" {
            options.request.timeout.get_or_insert(Duration::MAX);
            options.request.max_time.get_or_insert(Duration::MAX);
        }
        let check = match method {
            "tools/list" => Check::ListTools,
            // A call run as a task is answered with the task, not the tool's result.
            "tools/call" if !self.tools.is_empty() && !asks_task(params.as_deref()) => {
                tool_name(params.as_deref()).map_or(Check::Nothing, Check::CallTool)
            }
            _ => Check::Nothing,
        };
        let retry = self.may_need_input().then(|| Retry {
            method: method.to_owned(),
            params: params.as_deref().and_then(|p| serde_json::from_str(p.get()).ok()).unwrap_or_default(),
            options: options.request,
            started: now,
            rounds: 0,
            relisted: false,
            task: options.task,
        });
        let id = self.session.send_request(now, method, params, options.request)?;
        let pending = Pending { origin: id.clone(), done, progress: options.on_progress, check, retry };
        self.pending.insert(id.clone(), pending);
        Ok(id)
    }

    /// Sends request `M` with typed params; `done` gets the typed outcome (a result that does
    /// not decode is [`LocalError::MalformedResponse`]).
    ///
    /// # Errors
    ///
    /// As [`Session::send_request`], and [`SendError::Encode`].
    pub fn call<M: RequestMethod>(
        &mut self,
        now: Instant,
        params: &M::Params,
        options: CallOptions,
        done: impl FnOnce(Result<M::Result, CallError>) + Send + 'static,
    ) -> Result<RequestId, SendError> {
        let raw = serde_json::value::to_raw_value(params).map_err(|e| SendError::Encode(e.to_string()))?;
        let decode = move |outcome: Result<Box<RawValue>, CallError>| {
            done(outcome.and_then(|raw| {
                serde_json::from_str(raw.get()).map_err(|e| {
                    CallError::Local(LocalError::MalformedResponse(format!("{} result: {e}", M::INFO.name)))
                })
            }));
        };
        self.request(now, M::INFO.name, Some(raw), options, Box::new(decode))
    }

    /// Cancels a call: the server is told (`notifications/cancelled`) and the call's
    /// completion gets [`LocalError::Cancelled`]. Unknown or finished ids are ignored.
    ///
    /// # Errors
    ///
    /// [`SendError::Closed`].
    pub fn cancel(&mut self, id: &RequestId, reason: Option<&str>) -> Result<(), SendError> {
        let current = if self.pending.contains_key(id) {
            Some(id.clone())
        } else {
            self.pending.iter().find(|(_, p)| p.origin == *id).map(|(current, _)| current.clone())
        };
        match current {
            Some(current) => self.session.cancel(&current, reason),
            None => {
                self.cancel_task_call(id, reason, Err(CallError::Local(LocalError::Cancelled { reason: None })));
                Ok(())
            }
        }
    }

    /// The next output: frames to transmit, and the events the endpoint does not handle
    /// itself. Completions and progress callbacks run on the way. Call until `None` after
    /// every input or command.
    pub fn poll_output(&mut self) -> Option<Output> {
        loop {
            match self.session.poll_output()? {
                Output::Event(event) => {
                    if let Some(event) = self.on_event(event) {
                        return Some(Output::Event(event));
                    }
                }
                other => return Some(other),
            }
        }
    }

    fn on_event(&mut self, event: Event) -> Option<Event> {
        match event {
            Event::Response { id, outcome } => match self.pending.remove(&id) {
                Some(pending) => {
                    self.finish(pending, outcome);
                    None
                }
                None => match self.tasks.take_request(&id) {
                    Some(about) => {
                        self.on_task_response(about, outcome);
                        None
                    }
                    None => Some(Event::Response { id, outcome }),
                },
            },
            Event::Progress { id, progress, total, message } => match self.pending.get_mut(&id) {
                Some(Pending { progress: Some(report), .. }) => {
                    report(Progress { progress, total, message });
                    None
                }
                _ => Some(Event::Progress { id, progress, total, message }),
            },
            Event::Request(request) => {
                // Errors mean the session closed; its `Closed` event says so.
                let _ = self.handlers.dispatch(&mut self.session, request);
                None
            }
            // A completion this client cannot place is ignored; one it can goes to the
            // completion callback, or on to the application if there is none.
            Event::Notification { method, params } if method == "notifications/elicitation/complete" => {
                let known = self.handlers.elicitation_completed(params.as_deref());
                (known && !self.handlers.has_elicitation_complete()).then_some(Event::Notification { method, params })
            }
            other => Some(other),
        }
    }

    fn finish(&mut self, mut pending: Pending, outcome: Result<Box<RawValue>, CallError>) {
        let outcome = match outcome {
            Err(CallError::Remote(error)) if self.relists_for(&pending, &error) => match self.relist(pending, error) {
                Ok(()) => return,
                Err((refused, error)) => {
                    pending = *refused;
                    Err(CallError::Remote(error))
                }
            },
            outcome => outcome,
        };
        if let Check::Relist(..) = pending.check {
            let Check::Relist(call, error) = core::mem::replace(&mut pending.check, Check::Nothing) else { return };
            self.resume_after_relist(*call, error, outcome);
            return;
        }
        let mrtr = self.session.version().is_some_and(|v| v.supports(Feature::Mrtr));
        let outcome = match (outcome, &mut pending.retry) {
            (Ok(raw), Some(retry)) if mrtr && result_type_of(&raw) == Some(ResultType::InputRequired) => {
                match self.retry(retry, &raw) {
                    Ok(next) => {
                        self.pending.insert(next, pending);
                        return;
                    }
                    Err(e) => Err(e),
                }
            }
            (Ok(raw), Some(retry)) if retry.task == TaskMode::Watch && retry.method == "tasks/get" => {
                return self.watch_task(pending, &raw);
            }
            (Ok(raw), Some(retry)) if mrtr && result_type_of(&raw) == Some(ResultType::Task) => {
                match (retry.method.as_str(), retry.task) {
                    ("tools/call", TaskMode::Keep) => {
                        // The task itself, not the tool's result: nothing to check.
                        pending.check = Check::Nothing;
                        return self.deliver(pending, Ok(raw));
                    }
                    ("tools/call", _) => return self.follow_task(pending, &raw),
                    _ => {}
                }
                let why = format!("{} cannot be answered with a task", retry.method);
                Err(CallError::Local(LocalError::MalformedResponse(why)))
            }
            (outcome, _) => outcome,
        };
        self.deliver(pending, outcome);
    }

    /// Hands a call its outcome, after the checks its result calls for.
    pub(super) fn deliver(&mut self, pending: Pending, outcome: Result<Box<RawValue>, CallError>) {
        let outcome = match (&pending.check, outcome) {
            (Check::ListTools, Ok(raw)) => {
                // 2026-07-28: a tool whose x-mcp-header annotations break the rules is left out.
                let raw = if self.stateless() { without_invalid_mirroring(&raw).unwrap_or(raw) } else { raw };
                self.learn_tools(&raw);
                Ok(raw)
            }
            (Check::CallTool(name), Ok(raw)) => self.check_tool_result(name, raw),
            (_, outcome) => outcome,
        };
        (pending.done)(outcome);
    }

    /// Whether a call refused with `error` should go again after a `tools/list`: a stateless
    /// `tools/call` refused for a header mismatch (its tool's mirrored arguments were not
    /// known yet), the first time. The spec says a client should.
    fn relists_for(&self, pending: &Pending, error: &ErrorObject) -> bool {
        error.code == ErrorCode::HEADER_MISMATCH
            && self.stateless()
            && pending.retry.as_ref().is_some_and(|r| r.method == "tools/call" && !r.relisted)
    }

    /// Sends a `tools/list` on behalf of the refused call `pending`; gives the call back if
    /// it cannot.
    fn relist(&mut self, pending: Pending, error: ErrorObject) -> Result<(), (Box<Pending>, ErrorObject)> {
        let options = pending.retry.as_ref().map(|r| r.options).unwrap_or_default();
        match self.session.send_request(self.now, "tools/list", None, options) {
            Ok(id) => {
                // Known by the call's id: cancelling the call cancels the listing.
                let origin = pending.origin.clone();
                let check = Check::Relist(Box::new(pending), error);
                let relist = Pending { origin, done: Box::new(|_| {}), progress: None, check, retry: None };
                self.pending.insert(id, relist);
                Ok(())
            }
            Err(_) => Err((Box::new(pending), error)),
        }
    }

    /// The `tools/list` sent for `call` ended (`listed`): once listed, the call goes again;
    /// a cancelled listing cancels the call; otherwise the call ends with its first refusal.
    fn resume_after_relist(&mut self, mut call: Pending, error: ErrorObject, listed: Result<Box<RawValue>, CallError>) {
        let raw = match listed {
            Ok(raw) => raw,
            Err(cancelled @ CallError::Local(LocalError::Cancelled { .. })) => return (call.done)(Err(cancelled)),
            Err(_) => return (call.done)(Err(CallError::Remote(error))),
        };
        self.learn_tools(&without_invalid_mirroring(&raw).unwrap_or(raw));
        let Some(retry) = call.retry.as_mut() else { return (call.done)(Err(CallError::Remote(error))) };
        retry.relisted = true;
        match self.session.send(self.now, &retry.method, &retry.params, retry.options) {
            Ok(next) => {
                self.pending.insert(next, call);
            }
            Err(_) => (call.done)(Err(CallError::Remote(error))),
        }
    }

    /// Answers the server's input requests and sends the request again.
    fn retry(&mut self, retry: &mut Retry, raw: &RawValue) -> Result<RequestId, CallError> {
        retry.rounds += 1;
        let params =
            next_round(&retry.method, &retry.params, raw, &self.handlers, retry.rounds, self.max_input_rounds)?;
        self.session
            .send(self.now, &retry.method, &params, retry.options)
            .map_err(|e| CallError::Local(LocalError::from(e)))
    }

    /// Learns the output schemas of a `tools/list` page. Only where the revision has
    /// structured output: before 2025-06-18 a server cannot send `structuredContent`, so an
    /// `outputSchema` it lists anyway must not make every call of that tool fail.
    fn learn_tools(&mut self, raw: &RawValue) {
        if !self.structured_output() {
            return;
        }
        if let Ok(page) = serde_json::from_str::<ListToolsResult>(raw.get()) {
            for tool in page.tools {
                if tool.output_schema.is_some() {
                    self.tools.insert(tool.name.clone(), tool);
                } else {
                    self.tools.remove(&tool.name);
                }
            }
        }
    }

    fn check_tool_result(&self, name: &str, raw: Box<RawValue>) -> Result<Box<RawValue>, CallError> {
        let Some(tool) = self.tools.get(name).filter(|_| self.structured_output()) else { return Ok(raw) };
        let result: CallToolResult = serde_json::from_str(raw.get())
            .map_err(|e| CallError::Local(LocalError::MalformedResponse(format!("tools/call result: {e}"))))?;
        check_structured_output(tool, &result)
            .map_err(|why| CallError::Local(LocalError::OutputMismatch { why, result: raw.get().to_owned() }))?;
        Ok(raw)
    }

    /// Whether the session speaks the stateless era (2026-07-28).
    fn stateless(&self) -> bool {
        self.session.version().is_some_and(|v| v.supports(Feature::Stateless))
    }

    /// Whether the negotiated revision has `structuredContent` and `outputSchema`.
    fn structured_output(&self) -> bool {
        self.session.version().is_some_and(|v| v.supports(Feature::StructuredOutput))
    }

    /// Whether results may come back `input_required` (the stateless era, or not known yet).
    fn may_need_input(&self) -> bool {
        match self.session.version() {
            Some(v) => v.supports(Feature::Mrtr),
            None => !self.legacy_only,
        }
    }
}

/// Whether `tools/call` params ask for the call to run as a task (2025-11-25).
fn asks_task(params: Option<&RawValue>) -> bool {
    #[derive(serde::Deserialize)]
    struct Probe {
        task: Option<serde::de::IgnoredAny>,
    }
    params.and_then(|p| serde_json::from_str::<Probe>(p.get()).ok()).is_some_and(|p| p.task.is_some())
}

/// The `name` of `tools/call` params.
fn tool_name(params: Option<&RawValue>) -> Option<String> {
    #[derive(Deserialize)]
    struct Named<'a> {
        #[serde(borrow)]
        name: Cow<'a, str>,
    }
    params.and_then(|p| serde_json::from_str::<Named<'_>>(p.get()).ok()).map(|n| n.name.into_owned())
}
