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

use super::async_job::{block_on, run_async, AnswerWork, AsyncWork};
use super::deferred::Deferred;
use super::error::ToolError;
use super::job::{settle, Job};
use super::link::Link;
use super::rounds::Rounds;
use super::task_board::TaskRun;
use crate::schema::tools::CallToolResult;

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
    /// The work of a long-running tool call answering `deferred`.
    pub(super) const fn new(deferred: Deferred, work: Work, rounds: Option<Rounds>, task_run: Option<TaskRun>) -> Self {
        Self { deferred, work, rounds, task_run }
    }

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
