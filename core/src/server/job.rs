//! What a long-running tool may do while it runs ([`Job`]): check for cancellation, report
//! progress, log, ask the client; and how its outcome settles against 2026-07-28 rounds.

use crate::alloc_prelude::*;

use serde_json::value::RawValue;

use super::cancel::CancelFlag;
use super::deferred::Deferred;
use super::error::ToolError;
use super::link::{unencodable, Link};
use super::rounds::Rounds;
use crate::schema::elicitation::ElicitationCompleteNotificationParams;
use crate::schema::tools::CallToolResult;
use crate::schema::{LoggingLevel, RequestMethod};
use crate::session::{CallError, LocalError, NotSentReason};

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
            let params = serde_json::to_value(params).map_err(|e| unencodable(M::INFO.name, &e))?;
            return rounds.ask(M::INFO.name, &params).map(Asking::Answered);
        }
        let Some(link) = self.link else {
            return Err(CallError::Local(LocalError::NotSent(NotSentReason::NoConnection)));
        };
        let raw = serde_json::value::to_raw_value(params).map_err(|e| unencodable(M::INFO.name, &e))?;
        let Some(deferred) = self.deferred else {
            return Err(CallError::Local(LocalError::NotSent(NotSentReason::NoRequest)));
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
