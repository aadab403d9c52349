//! Long-running tools: work that runs off the I/O loop (on a thread pool, or an executor's
//! blocking pool) and answers through its deferred reply.
//!
//! The core stays pure: it only describes the work ([`Task`]) and what the work may do while
//! it runs ([`Job`]: check for cancellation, report progress, log, ask the client). An adapter
//! supplies the [`Spawn`] that runs tasks and the [`Link`] that carries a running task's
//! progress, questions and outcome back to its connection.

use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde_json::value::RawValue;

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
}

/// Runs [`Task`]s off the I/O loop. Implemented by each adapter (a thread pool, an executor).
pub trait Spawn: Send + Sync {
    /// Runs `task` soon, on another thread; the task answers through its link when done.
    fn spawn(&self, task: Task);
}

/// The body of a long-running tool call.
type Work = Box<dyn FnOnce(&Job<'_>) -> Result<CallToolResult, ToolError> + Send>;

/// The work of one long-running tool call, with its deferred reply.
pub struct Task {
    deferred: Deferred,
    work: Work,
    /// 2026-07-28: the answers the client gave to the job's asks in earlier rounds.
    rounds: Option<Rounds>,
    /// The extension task the call runs as: the job reports through it, not the connection.
    task_run: Option<TaskRun>,
}

impl std::fmt::Debug for Task {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Task").field("deferred", &self.deferred).finish_non_exhaustive()
    }
}

impl Task {
    /// The call being answered.
    pub const fn deferred(&self) -> &Deferred {
        &self.deferred
    }

    /// Runs the work, then answers through `link`. A task whose request was cancelled before
    /// it started is answered without running (the answer is dropped anyway). A call run as a
    /// task of the tasks extension (2026-07-28) reports to its task instead: the connection
    /// that started it may be gone.
    pub fn run(self, link: &dyn Link) {
        let Self { deferred, work, rounds, task_run } = self;
        let link: &dyn Link = match &task_run {
            Some(run) => run,
            None => link,
        };
        let outcome = if deferred.cancel_flag().is_cancelled() {
            Err(ToolError::Execution("cancelled".into()))
        } else {
            let job = Job {
                deferred: Some(&deferred),
                cancel: deferred.cancel_flag().clone(),
                link: Some(link),
                rounds: rounds.as_ref(),
            };
            settle(work(&job), rounds.as_ref())
        };
        link.complete(deferred, outcome);
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
    deferred: Option<&'a Deferred>,
    cancel: CancelFlag,
    link: Option<&'a dyn Link>,
    rounds: Option<&'a Rounds>,
}

impl std::fmt::Debug for Job<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
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
        if let Some(rounds) = self.rounds {
            let params = serde_json::to_value(params)
                .map_err(|e| CallError::Local(LocalError::NotSent(format!("cannot encode {}: {e}", M::INFO.name))))?;
            return rounds.ask(M::INFO.name, &params);
        }
        let Some(link) = self.link else {
            return Err(CallError::Local(LocalError::NotSent("no connection to ask through".into())));
        };
        let raw = serde_json::value::to_raw_value(params)
            .map_err(|e| CallError::Local(LocalError::NotSent(format!("cannot encode {}: {e}", M::INFO.name))))?;
        let Some(deferred) = self.deferred else {
            return Err(CallError::Local(LocalError::NotSent("no request to ask about".into())));
        };
        let answer = link.ask(deferred, M::INFO.name, raw)?;
        serde_json::from_str(answer.get())
            .map_err(|e| CallError::Local(LocalError::MalformedResponse(format!("{} result: {e}", M::INFO.name))))
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

impl<S> Context<'_, S> {
    /// Runs `work` off the I/O loop if the adapter provided a [`Spawn`], answering when it
    /// finishes; otherwise runs it here, now. Returns the outcome when it ran here.
    fn spawn_or_run(&mut self, work: Work) -> Option<Result<CallToolResult, ToolError>> {
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
                let job = Job { deferred: None, cancel: self.cancel_flag(), link: None, rounds: rounds.as_ref() };
                Some(settle(work(&job), rounds.as_ref()))
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
fn settle(outcome: Result<CallToolResult, ToolError>, rounds: Option<&Rounds>) -> Result<CallToolResult, ToolError> {
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
            ctx.spawn_or_run(work).unwrap_or_else(|| Ok(CallToolResult::default()))
        })
    }
}
