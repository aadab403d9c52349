//! Async tools: a handler that returns a future ([`RouterBuilder::async_tool`](super::RouterBuilder::async_tool)), polled by
//! whatever executor the adapter runs, with an [`AsyncJob`] to check for cancellation, report
//! progress, log and ask the client (awaiting the answer).
//!
//! The future owns its job, so the job holds its call's deferred reply behind a lock that the
//! runner takes back when the future ends (a job kept past that does nothing more).

use crate::alloc_prelude::*;
use alloc::sync::Arc;
use core::future::Future;
use core::pin::Pin;

use serde::de::DeserializeOwned;

pub(super) use crate::sync::block_on;

use super::cancel::CancelFlag;
use super::deferred::Deferred;
use super::error::ToolError;
use super::job::{decode_answer, settle, Asking, Job};
use super::link::{LaterAnswer, Link};
use super::rounds::Rounds;
use crate::schema::tools::CallToolResult;
use crate::schema::{LoggingLevel, RequestMethod};
use crate::session::CallError;
use crate::sync::Mutex;

/// What an async tool's handler returns: the call's outcome, later.
pub type ToolFuture = Pin<Box<dyn Future<Output = Result<CallToolResult, ToolError>> + Send>>;

/// The body of an async tool call.
pub(super) type AsyncWork = Box<dyn FnOnce(AsyncJob) -> ToolFuture + Send>;

/// The body of an async prompt or resource read.
pub(super) type AnswerWork = Pin<Box<dyn Future<Output = LaterAnswer> + Send>>;

/// What an async tool may do while it runs: the async twin of [`Job`]. It is owned (the
/// handler's future keeps it) and cheap to clone.
///
/// # Examples
///
/// ```
/// use talaria_core::schema::tools::{CallToolResult, Tool};
/// use talaria_core::server::Router;
///
/// let router = Router::<()>::builder()
///     .async_tool(Tool::new("count", Default::default()), |job, _: serde_json::Value| async move {
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
#[derive(Clone)]
pub struct AsyncJob {
    /// The call's deferred reply while the call runs; taken back when the future ends.
    deferred: Arc<Mutex<Option<Deferred>>>,
    cancel: CancelFlag,
    link: Option<Arc<dyn Link>>,
    rounds: Option<Arc<Rounds>>,
}

impl core::fmt::Debug for AsyncJob {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("AsyncJob").field("cancelled", &self.cancel.is_cancelled()).finish_non_exhaustive()
    }
}

impl AsyncJob {
    /// The blocking [`Job`] view of this job, for what needs no waiting.
    fn with_job<R>(&self, f: impl FnOnce(&Job<'_>) -> R) -> R {
        let deferred = self.deferred.lock();
        let job = Job {
            deferred: deferred.as_ref(),
            cancel: self.cancel.clone(),
            link: self.link.as_deref().filter(|_| deferred.is_some()),
            rounds: self.rounds.as_deref(),
        };
        f(&job)
    }

    /// Whether the client cancelled the call: stop early, the answer will be dropped.
    #[must_use]
    pub fn is_cancelled(&self) -> bool {
        self.cancel.is_cancelled()
    }

    /// Reports progress, if the client asked for it (see [`Job::progress`]).
    pub fn progress(&self, progress: f64, total: Option<f64>, message: Option<String>) {
        self.with_job(|job| job.progress(progress, total, message));
    }

    /// Logs about this call, if the client's level lets it through (see [`Job::log`]).
    pub fn log(&self, level: LoggingLevel, data: serde_json::Value) {
        self.with_job(|job| job.log(level, data));
    }

    /// Asks the client (sampling, elicitation, roots) and awaits the answer; as [`Job::ask`],
    /// rounds of 2026-07-28 included.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::roots::ListRoots;
    /// use talaria_core::schema::tools::{CallToolResult, Tool};
    /// use talaria_core::server::{Router, ToolError};
    ///
    /// let router = Router::<()>::builder()
    ///     .async_tool(Tool::new("count_roots", Default::default()), |job, _: serde_json::Value| async move {
    ///         let roots = job.ask::<ListRoots>(&Default::default()).await.map_err(|e| ToolError::execution(e.to_string()))?;
    ///         Ok(CallToolResult::text(roots.roots.len().to_string()))
    ///     })
    ///     .build();
    /// assert_eq!(router.tools().count(), 1);
    /// ```
    ///
    /// # Errors
    ///
    /// As [`Job::ask`].
    pub async fn ask<M: RequestMethod>(&self, params: &M::Params) -> Result<M::Result, CallError>
    where
        M::Result: DeserializeOwned,
    {
        let waiting = self.with_job(|job| {
            Ok::<_, CallError>(match job.start_ask::<M>(params)? {
                Asking::Answered(result) => Err(result),
                Asking::Sent(link, deferred, raw) => Ok(link.ask_async(deferred, M::INFO.name, raw)),
            })
        })?;
        match waiting {
            Err(answered) => Ok(answered),
            Ok(answer) => decode_answer::<M>(&answer.await?),
        }
    }

    /// Tells the client the URL-mode elicitation `elicitation_id` is complete (see
    /// [`Job::elicitation_complete`]); whether it was sent.
    pub fn elicitation_complete(&self, elicitation_id: &str) -> bool {
        self.with_job(|job| job.elicitation_complete(elicitation_id))
    }

    /// Ends this call's SSE response stream now, while the work goes on (see
    /// [`Job::close_sse_stream`]); whether it was ended.
    pub fn close_sse_stream(&self) -> bool {
        self.with_job(|job| job.close_sse_stream())
    }
}

/// Runs async `work` for `deferred` to its end, then answers through `link`.
pub(super) async fn run_async(deferred: Deferred, work: AsyncWork, rounds: Option<Rounds>, link: Arc<dyn Link>) {
    if deferred.cancel_flag().is_cancelled() {
        link.complete(deferred, Err(ToolError::Execution("cancelled".into())));
        return;
    }
    let cancel = deferred.cancel_flag().clone();
    let rounds = rounds.map(Arc::new);
    let slot = Arc::new(Mutex::new(Some(deferred)));
    let job = AsyncJob { deferred: Arc::clone(&slot), cancel, link: Some(Arc::clone(&link)), rounds: rounds.clone() };
    let outcome = settle(work(job).await, rounds.as_deref());
    let deferred = slot.lock().take();
    if let Some(deferred) = deferred {
        link.complete(deferred, outcome);
    }
}

/// Runs async `work` here, now, with no connection to report through (no adapter).
pub(super) fn run_inline(
    work: AsyncWork,
    cancel: CancelFlag,
    rounds: Option<Rounds>,
) -> Result<CallToolResult, ToolError> {
    let rounds = rounds.map(Arc::new);
    let job = AsyncJob { deferred: Arc::new(Mutex::new(None)), cancel, link: None, rounds: rounds.clone() };
    settle(block_on(work(job)), rounds.as_deref())
}
