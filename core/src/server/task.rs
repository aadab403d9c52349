//! Long-running tools: work that runs off the I/O loop (on a thread pool, or an executor)
//! and answers through its deferred reply.
//!
//! The core stays pure: it only describes the work ([`Task`]) and what the work may do while
//! it runs ([`Job`] for blocking work, [`AsyncJob`](super::AsyncJob) for async work: check for
//! cancellation, report progress, log, ask the client). An adapter supplies the [`Spawn`] that
//! runs tasks and the [`Link`] that carries a running task's progress, questions and outcome
//! back to its connection.

use crate::alloc_prelude::*;
use alloc::sync::Arc;
use core::future::Future;
use core::pin::Pin;

use serde::de::DeserializeOwned;
use serde_json::value::RawValue;

use super::async_job::{block_on, run_async, AnswerWork, AsyncWork, LaterAnswer};
use super::builder::RouterBuilder;
use super::context::Context;
use super::extras::CancelFlag;
use super::rounds::Rounds;
use super::router::Deferred;
use super::task_board::TaskRun;
use super::tools::ToolError;
use crate::jsonrpc::ErrorObject;
use crate::schema::elicitation::ElicitationCompleteNotificationParams;
use crate::schema::tools::{CallToolResult, Tool};
use crate::schema::{LoggingLevel, RequestMethod};
use crate::session::{CallError, LocalError};
use crate::version::Feature;

/// What a running task reaches its connection through. Implemented by each adapter.
pub trait Link: Send + Sync {
    /// Reports progress on the deferred request (dropped if the client did not ask).
    fn progress(&self, deferred: &Deferred, progress: f64, total: Option<f64>, message: Option<String>);
    /// Logs about the deferred request, if the client's level lets it through.
    fn log(&self, deferred: &Deferred, level: LoggingLevel, data: serde_json::Value);
    /// Sends a request about the deferred request to the client (on the deferred request's
    /// route: its HTTP response stream, if it has one) and waits for the answer.
    ///
    /// # Errors
    ///
    /// How the request failed: refused, timed out, cancelled, connection closed.
    fn ask(&self, deferred: &Deferred, method: &str, params: Box<RawValue>) -> Result<Box<RawValue>, CallError>;
    /// [`Link::ask`] for async work: sends the request now and returns the wait for its
    /// answer. The default waits in [`Link::ask`] before returning (it blocks whoever polls):
    /// adapters that run async work on an executor give a real wait.
    fn ask_async(&self, deferred: &Deferred, method: &str, params: Box<RawValue>) -> Answer {
        let answer = self.ask(deferred, method, params);
        Box::pin(core::future::ready(answer))
    }
    /// Ends the deferred request's SSE response stream early so the client reconnects for the
    /// rest (see `Session::close_sse_stream`); returns whether it was ended. The default does
    /// nothing: transports without response streams have nothing to end.
    fn close_sse_stream(&self, _deferred: &Deferred) -> bool {
        false
    }
    /// Sends a notification about the deferred request (on its route while it is in flight,
    /// else on the connection); returns whether it went. The default sends nothing.
    fn notify(&self, _deferred: &Deferred, _method: &str, _params: Option<Box<RawValue>>) -> bool {
        false
    }
    /// Answers the deferred request.
    fn complete(&self, deferred: Deferred, outcome: Result<CallToolResult, ToolError>);
    /// Answers a deferred request that is not a tool call (an async prompt or resource
    /// read). The default drops the answer: only links that run such work need it.
    fn complete_answer(&self, deferred: Deferred, answer: LaterAnswer) {
        let _ = (deferred, answer);
    }
}

/// The answer to a request a running task sent the client ([`Link::ask_async`]).
pub type Answer = Pin<Box<dyn Future<Output = Result<Box<RawValue>, CallError>> + Send>>;

/// Runs [`Task`]s off the I/O loop. Implemented by each adapter (a thread pool, an executor).
pub trait Spawn: Send + Sync {
    /// Runs `task` soon, on another thread; the task answers through its link when done.
    fn spawn(&self, task: Task);
}

/// The body of a blocking tool call.
type BlockingWork = Box<dyn FnOnce(&Job<'_>) -> Result<CallToolResult, ToolError> + Send>;

/// The body of a long-running tool call: blocking, or async.
pub(super) enum Work {
    /// Runs on a thread of its own, with a [`Job`].
    Blocking(BlockingWork),
    /// A future, polled by an executor, with an [`AsyncJob`](super::AsyncJob).
    Async(AsyncWork),
    /// A future answering a request that is not a tool call (an async prompt or resource).
    Answer(AnswerWork),
}

/// The work of one long-running tool call, with its deferred reply.
pub struct Task {
    deferred: Deferred,
    work: Work,
    /// 2026-07-28: the answers the client gave to the job's asks in earlier rounds.
    rounds: Option<Rounds>,
    /// The extension task the call runs as: the job reports through it, not the connection.
    task_run: Option<TaskRun>,
}

impl core::fmt::Debug for Task {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Task").field("deferred", &self.deferred).finish_non_exhaustive()
    }
}

impl Task {
    /// The work of an async prompt or resource read answering `deferred`.
    pub(super) fn answering(deferred: Deferred, answer: AnswerWork) -> Self {
        Self { deferred, work: Work::Answer(answer), rounds: None, task_run: None }
    }

    /// The call being answered.
    pub const fn deferred(&self) -> &Deferred {
        &self.deferred
    }

    /// Whether the work is async and may run on an executor ([`Task::into_future`]): `false`
    /// for blocking work, and for async work run as a task of the tasks extension, whose asks
    /// wait for the client's `tasks/update` on the thread that polls them. Run those with
    /// [`Task::run`], on a thread of their own.
    #[must_use]
    pub const fn runs_on_executor(&self) -> bool {
        matches!(self.work, Work::Async(_) | Work::Answer(_)) && self.task_run.is_none()
    }

    /// Runs the work on this thread, then answers through `link` (async work is driven to
    /// its end here). A task whose request was cancelled before it started is answered
    /// without running (the answer is dropped anyway). A call run as a task of the tasks
    /// extension (2026-07-28) reports to its task instead: the connection that started it may
    /// be gone.
    pub fn run(self, link: Arc<dyn Link>) {
        match self.work {
            Work::Async(_) | Work::Answer(_) => block_on(self.into_future(link)),
            Work::Blocking(work) => {
                let Self { deferred, rounds, task_run, .. } = self;
                let link: Arc<dyn Link> = match task_run {
                    Some(run) => Arc::new(run),
                    None => link,
                };
                let outcome = if deferred.cancel_flag().is_cancelled() {
                    Err(ToolError::Execution("cancelled".into()))
                } else {
                    let job = Job {
                        deferred: Some(&deferred),
                        cancel: deferred.cancel_flag().clone(),
                        link: Some(&*link),
                        rounds: rounds.as_ref(),
                    };
                    settle(work(&job), rounds.as_ref())
                };
                link.complete(deferred, outcome);
            }
        }
    }

    /// The work as a future that answers through `link` when it ends, for an executor to
    /// poll (see [`Task::runs_on_executor`]). Blocking work runs inside its first poll.
    pub fn into_future(self, link: Arc<dyn Link>) -> Pin<Box<dyn Future<Output = ()> + Send>> {
        let Self { deferred, work, rounds, task_run } = self;
        let link: Arc<dyn Link> = match task_run {
            Some(run) => Arc::new(run),
            None => link,
        };
        match work {
            Work::Async(work) => Box::pin(run_async(deferred, work, rounds, link)),
            Work::Answer(answer) => Box::pin(async move { link.complete_answer(deferred, answer.await) }),
            Work::Blocking(work) => {
                let task = Self { deferred, work: Work::Blocking(work), rounds, task_run: None };
                Box::pin(async move { task.run(link) })
            }
        }
    }
}

/// What a long-running tool may do while it runs.
///
/// # Examples
///
/// ```
/// use talaria_core::schema::tools::{CallToolResult, Tool};
/// use talaria_core::server::Router;
///
/// let router = Router::<()>::builder()
///     .blocking_tool(Tool::new("count", Default::default()), |job, _: serde_json::Value| {
///         for i in 1..=3 {
///             if job.is_cancelled() {
///                 break;
///             }
///             job.progress(f64::from(i), Some(3.0), None);
///         }
///         Ok(CallToolResult::text("counted"))
///     })
///     .build();
/// assert_eq!(router.tools().count(), 1);
/// ```
pub struct Job<'a> {
    pub(super) deferred: Option<&'a Deferred>,
    pub(super) cancel: CancelFlag,
    pub(super) link: Option<&'a dyn Link>,
    pub(super) rounds: Option<&'a Rounds>,
}

impl core::fmt::Debug for Job<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Job").field("cancelled", &self.cancel.is_cancelled()).finish_non_exhaustive()
    }
}

impl Job<'_> {
    /// Whether the client cancelled the call: stop early, the answer will be dropped.
    #[must_use]
    pub fn is_cancelled(&self) -> bool {
        self.cancel.is_cancelled()
    }

    /// Reports progress, if the client asked for it.
    pub fn progress(&self, progress: f64, total: Option<f64>, message: Option<String>) {
        if let (Some(link), Some(deferred)) = (self.link, self.deferred) {
            link.progress(deferred, progress, total, message);
        }
    }

    /// Logs about this call, if the client's level lets it through.
    pub fn log(&self, level: LoggingLevel, data: serde_json::Value) {
        if let (Some(link), Some(deferred)) = (self.link, self.deferred) {
            link.log(deferred, level, data);
        }
    }

    /// Asks the client (sampling, elicitation, roots) and waits for the answer.
    ///
    /// Before 2026-07-28 this sends a request to the client on the call's route. In
    /// 2026-07-28, where servers send no requests, the ask becomes an input request of the
    /// call's `input_required` answer: the first time, it fails with
    /// [`LocalError::InputRequired`] and the job should return (with `?`); the client answers
    /// and calls again, the job runs again from the start, and this time the ask returns the
    /// answer. Work done before the last ask therefore runs once per round: keep it cheap or
    /// idempotent. See the `rounds` notes in the source for the state carried between rounds.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::roots::ListRoots;
    /// use talaria_core::schema::tools::{CallToolResult, Tool};
    /// use talaria_core::server::{Router, ToolError};
    ///
    /// let router = Router::<()>::builder()
    ///     .blocking_tool(Tool::new("count_roots", Default::default()), |job, _: serde_json::Value| {
    ///         let roots = job.ask::<ListRoots>(&Default::default()).map_err(|e| ToolError::execution(e.to_string()))?;
    ///         Ok(CallToolResult::text(roots.roots.len().to_string()))
    ///     })
    ///     .build();
    /// assert_eq!(router.tools().count(), 1);
    /// ```
    ///
    /// # Errors
    ///
    /// How the request failed; [`LocalError::InputRequired`] when the answer comes in the next
    /// round; [`LocalError::NotSent`] when the job runs inline (no adapter) before 2026-07-28,
    /// or the client did not declare the capability the request needs.
    pub fn ask<M: RequestMethod>(&self, params: &M::Params) -> Result<M::Result, CallError> {
        match self.start_ask::<M>(params)? {
            Asking::Answered(result) => Ok(result),
            Asking::Sent(link, deferred, raw) => decode_answer::<M>(&link.ask(deferred, M::INFO.name, raw)?),
        }
    }

    /// The first step of an ask: answered from the rounds (2026-07-28), or to be sent.
    pub(super) fn start_ask<M: RequestMethod>(&self, params: &M::Params) -> Result<Asking<'_, M::Result>, CallError> {
        if let Some(rounds) = self.rounds {
            let params = serde_json::to_value(params)
                .map_err(|e| CallError::Local(LocalError::NotSent(format!("cannot encode {}: {e}", M::INFO.name))))?;
            return rounds.ask(M::INFO.name, &params).map(Asking::Answered);
        }
        let Some(link) = self.link else {
            return Err(CallError::Local(LocalError::NotSent("no connection to ask through".into())));
        };
        let raw = serde_json::value::to_raw_value(params)
            .map_err(|e| CallError::Local(LocalError::NotSent(format!("cannot encode {}: {e}", M::INFO.name))))?;
        let Some(deferred) = self.deferred else {
            return Err(CallError::Local(LocalError::NotSent("no request to ask about".into())));
        };
        Ok(Asking::Sent(link, deferred, raw))
    }

    /// Tells the client that the URL-mode elicitation `elicitation_id` (which this job asked
    /// with [`Job::ask`]) is complete: the user finished what the page asked
    /// (`notifications/elicitation/complete`, 2025-11-25). Returns whether it was sent: not in
    /// other revisions (2026-07-28 correlates through `requestState` instead), nor where the
    /// job has no connection.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::elicitation::{Elicit, ElicitRequestParams, ElicitRequestUrlParams};
    /// use talaria_core::schema::tools::{CallToolResult, Tool};
    /// use talaria_core::server::{Router, ToolError};
    ///
    /// let router = Router::<()>::builder()
    ///     .blocking_tool(Tool::new("connect_account", Default::default()), |job, _: serde_json::Value| {
    ///         let mut page = ElicitRequestUrlParams::new("Sign in to link your account", "https://example.com/link");
    ///         page.elicitation_id = Some("link-1".into());
    ///         job.ask::<Elicit>(&ElicitRequestParams::Url(page)).map_err(|e| ToolError::execution(e.to_string()))?;
    ///         // ... the user signs in on the page; the server learns it out of band ...
    ///         job.elicitation_complete("link-1");
    ///         Ok(CallToolResult::text("linked"))
    ///     })
    ///     .build();
    /// assert_eq!(router.tools().count(), 1);
    /// ```
    pub fn elicitation_complete(&self, elicitation_id: &str) -> bool {
        let (Some(link), Some(deferred)) = (self.link, self.deferred) else { return false };
        let params =
            ElicitationCompleteNotificationParams { elicitation_id: elicitation_id.to_owned(), ..Default::default() };
        let Ok(params) = serde_json::value::to_raw_value(&params) else { return false };
        link.notify(deferred, "notifications/elicitation/complete", Some(params))
    }

    /// Ends this call's SSE response stream now, while the work goes on (2025-11-25 SSE
    /// polling): the client reconnects after the stream's `retry` delay with `Last-Event-ID` and
    /// gets what the call sent meanwhile, the result included. Frees the client's connection
    /// during long work. Returns whether the stream was ended: `false` where there is none
    /// (stdio, WebSocket, a JSON reply, the stateless era, revisions before 2025-11-25).
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::tools::{CallToolResult, Tool};
    /// use talaria_core::server::{Router, ToolError};
    ///
    /// let router = Router::<()>::builder()
    ///     .blocking_tool(Tool::new("slow_report", Default::default()), |job, _: serde_json::Value| {
    ///         job.close_sse_stream(); // the client polls for the result
    ///         Ok::<_, ToolError>(CallToolResult::text("done"))
    ///     })
    ///     .build();
    /// assert_eq!(router.tools().count(), 1);
    /// ```
    pub fn close_sse_stream(&self) -> bool {
        match (self.link, self.deferred) {
            (Some(link), Some(deferred)) => link.close_sse_stream(deferred),
            _ => false,
        }
    }
}

/// Where an ask stands after [`Job::start_ask`].
pub(super) enum Asking<'a, R> {
    /// Answered already (by an earlier round's answer).
    Answered(R),
    /// To send through the link, about the deferred request, with these params.
    Sent(&'a dyn Link, &'a Deferred, Box<RawValue>),
}

/// The typed result of request `M` from the client's raw answer.
pub(super) fn decode_answer<M: RequestMethod>(answer: &RawValue) -> Result<M::Result, CallError> {
    serde_json::from_str(answer.get())
        .map_err(|e| CallError::Local(LocalError::MalformedResponse(format!("{} result: {e}", M::INFO.name))))
}

impl<S> Context<'_, S> {
    /// Runs `work` off the I/O loop if the adapter provided a [`Spawn`], answering when it
    /// finishes; otherwise runs it here, now. Returns the outcome when it ran here.
    pub(super) fn spawn_or_run(&mut self, work: Work) -> Option<Result<CallToolResult, ToolError>> {
        let rounds = match self.job_rounds() {
            Ok(rounds) => rounds,
            Err(refused) => return Some(Err(ToolError::Protocol(refused))),
        };
        let spawner = self.extras.spawner.clone();
        let task_run = self.extras.task_run.clone();
        // A task's job asks through the task (input requests), not in rounds.
        let rounds = if task_run.is_some() { None } else { rounds };
        match (spawner, self.defer()) {
            (Some(spawner), Some(deferred)) => {
                spawner.spawn(Task { deferred, work, rounds, task_run });
                None
            }
            (_, deferred) => {
                // No spawner: run inline. Put the reply back so the router answers.
                if let Some(deferred) = deferred {
                    self.reply = Some(deferred.reply);
                }
                Some(match work {
                    Work::Blocking(work) => {
                        let job =
                            Job { deferred: None, cancel: self.cancel_flag(), link: None, rounds: rounds.as_ref() };
                        settle(work(&job), rounds.as_ref())
                    }
                    Work::Async(work) => super::async_job::run_inline(work, self.cancel_flag(), rounds),
                    Work::Answer(_) => Err(ToolError::execution("not a tool's work")),
                })
            }
        }
    }

    /// In 2026-07-28, the round a long-running call is in (see [`Job::ask`]).
    fn job_rounds(&mut self) -> Result<Option<Rounds>, ErrorObject> {
        if !self.version().is_some_and(|v| v.supports(Feature::Mrtr)) {
            return Ok(None);
        }
        let responses = self.input_responses.take();
        let capabilities = self.client_capabilities().cloned();
        Rounds::start(self.request_state.as_deref(), responses, capabilities).map(Some)
    }
}

/// A job's outcome, unless it asked for something the client did not declare the capability
/// for (the call is answered with -32021) or has yet to answer (answered with
/// `input_required`).
pub(super) fn settle(
    outcome: Result<CallToolResult, ToolError>,
    rounds: Option<&Rounds>,
) -> Result<CallToolResult, ToolError> {
    if let Some(undeclared) = rounds.and_then(Rounds::undeclared_capability) {
        return Err(ToolError::Protocol(undeclared));
    }
    match rounds.and_then(Rounds::input_required) {
        Some(needed) => Err(ToolError::InputRequired(Box::new(needed))),
        None => outcome,
    }
}

impl<S: 'static> RouterBuilder<S> {
    /// Registers a long-running tool: its handler runs off the I/O loop on the adapter's
    /// pool (inline where there is none) and gets a [`Job`] to check for cancellation, report
    /// progress, log and ask the client. Arguments are typed and validated as for
    /// [`RouterBuilder::tool`].
    pub fn blocking_tool<A, F>(self, tool: Tool, handler: F) -> Self
    where
        A: DeserializeOwned + Send + 'static,
        F: Fn(&Job<'_>, A) -> Result<CallToolResult, ToolError> + Send + Sync + 'static,
    {
        let handler = Arc::new(handler);
        self.tool(tool, move |ctx: &mut Context<'_, S>, args: A| {
            let handler = Arc::clone(&handler);
            let work = Box::new(move |job: &Job<'_>| handler(job, args));
            ctx.spawn_or_run(Work::Blocking(work)).unwrap_or_else(|| Ok(CallToolResult::default()))
        })
    }
}
