//! Calls answered with a task (the 2026-07-28 tasks extension), followed for the application.
//!
//! A server may answer a `tools/call` from a client that lists `io.modelcontextprotocol/tasks`
//! in its capabilities with a `CreateTaskResult` (`resultType: "task"`) instead of the tool's
//! result. The endpoint then polls `tasks/get` at the interval the server suggests, answers
//! the task's input requests with the client's [`Handlers`](super::Handlers) through
//! `tasks/update` (each key once), and ends the call with the task's result, its JSON-RPC
//! error, or a cancellation. Cancelling the call sends `tasks/cancel`.
//!
//! A call that became a task is timed like any call: its request timeout restarts whenever
//! the task changes (its status, its status message, where servers report progress, or its
//! input requests), as progress restarts it for a plain call; its `max_time` (or the
//! session's) bounds it all, and the task's TTL is a backstop. On timing out, the task is
//! cancelled.
//!
//! Each change of the task is reported to the call's progress callback, if it has one: the
//! status message (or the status) as the message, the count of changes as the progress.
//!
//! A `tasks/get` sent with [`CallOptions::watching_task`](super::CallOptions::watching_task)
//! follows a task the caller did not start here the same way, without owning it: the call
//! ends with the task's outcome, and cancelling it stops the watch, not the task.

use crate::alloc_prelude::*;
use crate::time::{Duration, Instant};
use alloc::collections::{BTreeMap, BTreeSet};

use serde_json::value::RawValue;

use super::endpoint::{Endpoint, Pending, Progress};
use crate::jsonrpc::{ErrorObject, RequestId};
use crate::schema::mrtr::InputResponses;
use crate::schema::tasks::ext::{CreateTaskResult, DetailedTask, TaskRequestParams, UpdateTaskRequestParams};
use crate::schema::tasks::TaskStatus;
use crate::session::{CallError, LocalError, RequestOptions};

/// How often a task is polled when the server suggests nothing (and at least).
const DEFAULT_POLL: Duration = Duration::from_millis(500);
/// The shortest poll interval honoured (a server suggesting less is polled this often).
const MIN_POLL: Duration = Duration::from_millis(10);
/// The longest poll interval honoured.
const MAX_POLL: Duration = Duration::from_secs(30);

/// One call waiting for its task.
struct TaskCall {
    call: Pending,
    interval: Duration,
    /// When to poll next; `None` while a `tasks/get` is out.
    next_poll: Option<Instant>,
    /// The input request keys answered already.
    answered: BTreeSet<String>,
    /// When the call's `max_time` (or the task's TTL) runs out: the task is cancelled then.
    deadline: Option<Instant>,
    /// The request timeout, restarted by each change of the task.
    timeout: Duration,
    /// When the task goes too long without a change (judged on a poll answered after it).
    quiet_until: Instant,
    /// When the last `tasks/get` was answered.
    answered_at: Instant,
    /// What the task looked like at its last change: status, message, input request keys.
    last_seen: String,
    /// How many changes were reported to the call's progress callback.
    changes: u32,
    /// Whether the call started the task (cancelling it cancels the task) or watches it.
    owns: bool,
}

/// What a request the endpoint sent on a task's behalf was.
pub(super) enum TaskRequest {
    Get(String),
    Update(String),
    Cancel,
}

/// The calls waiting for tasks, by task id, and the requests sent for them.
#[derive(Default)]
pub(super) struct TaskCalls {
    calls: BTreeMap<String, TaskCall>,
    requests: BTreeMap<RequestId, TaskRequest>,
}

impl TaskCalls {
    /// When the next task is due for a poll.
    pub(super) fn next_poll(&self) -> Option<Instant> {
        // The quiet deadline counts only between polls: a poll out decides it when answered.
        let quiet = |c: &TaskCall| c.next_poll.map(|_| c.quiet_until);
        self.calls.values().flat_map(|c| [c.next_poll, c.deadline, quiet(c)]).flatten().min()
    }

    /// How many calls wait for their task.
    pub(super) fn len(&self) -> usize {
        self.calls.len()
    }

    /// The task request answered by the response `id`, if it was one.
    pub(super) fn take_request(&mut self, id: &RequestId) -> Option<TaskRequest> {
        self.requests.remove(id)
    }
}

fn malformed(why: String) -> CallError {
    CallError::Local(LocalError::MalformedResponse(why))
}

impl Endpoint {
    /// A `tools/call` was answered with a task (`raw`): poll it until it ends.
    pub(super) fn follow_task(&mut self, call: Pending, raw: &RawValue) {
        let created: CreateTaskResult = match serde_json::from_str(raw.get()) {
            Ok(created) => created,
            Err(e) => return self.deliver(call, Err(malformed(format!("malformed CreateTaskResult: {e}")))),
        };
        let status = (created.status, created.status_message);
        self.start_following(call, created.task_id, created.poll_interval_ms, created.ttl_ms, Some(status));
    }

    /// A `tasks/get` sent to watch a task was answered with its state (`raw`): follow it
    /// from there, without owning it.
    pub(super) fn watch_task(&mut self, call: Pending, raw: &RawValue) {
        let task: DetailedTask = match serde_json::from_str(raw.get()) {
            Ok(task) => task,
            Err(e) => return self.deliver(call, Err(malformed(format!("malformed tasks/get result: {e}")))),
        };
        // The TTL counts from the task's creation, an unknown while ago: from now, it is a
        // backstop that errs long.
        self.start_following(call, task.task_id.clone(), task.poll_interval_ms, task.ttl_ms, None);
        if let Some(follow) = self.tasks.calls.get_mut(&task.task_id) {
            follow.owns = false;
        }
        self.on_task_state(task);
    }

    /// Follows task `task_id` for `call`: polled every `poll_ms`, for at most `ttl_ms` (and
    /// the call's `max_time`). `created` is its state as created (reported as a change).
    fn start_following(
        &mut self,
        call: Pending,
        task_id: String,
        poll_ms: Option<u64>,
        ttl_ms: Option<u64>,
        created: Option<(TaskStatus, Option<String>)>,
    ) {
        let interval = interval_of(poll_ms);
        // The call's own `max_time` (or the session's), and the task's TTL as a backstop (a
        // task not over by then may be gone).
        let config = self.session.config();
        let (default_timeout, default_max) = (config.request_timeout, config.max_request_time);
        let max_time = call.retry.as_ref().and_then(|r| r.options.max_time.or(default_max).map(|max| r.started + max));
        let ttl = ttl_ms.map(|ms| self.now + Duration::from_millis(ms));
        let deadline = [max_time, ttl].into_iter().flatten().min();
        let timeout = call.retry.as_ref().and_then(|r| r.options.timeout).unwrap_or(default_timeout);
        let mut follow = TaskCall {
            call,
            interval,
            next_poll: Some(self.now + interval),
            answered: BTreeSet::new(),
            deadline,
            timeout,
            quiet_until: self.now + timeout,
            answered_at: self.now,
            last_seen: String::new(),
            changes: 0,
            owns: true,
        };
        if let Some((status, message)) = created {
            follow.last_seen = fingerprint(status, message.as_deref(), None);
            follow.report(status, message.as_deref());
        }
        self.tasks.calls.insert(task_id, follow);
    }

    /// Sends `tasks/get` for every task due; cancels those whose call ran out of time.
    pub(super) fn poll_due_tasks(&mut self, now: Instant) {
        let late: Vec<RequestId> = self
            .tasks
            .calls
            .values()
            .filter(|c| {
                c.deadline.is_some_and(|at| at <= now) || (c.quiet_until <= now && c.answered_at >= c.quiet_until)
            })
            .map(|c| c.call.origin.clone())
            .collect();
        for origin in late {
            self.cancel_task_call(&origin, None, Err(CallError::Local(LocalError::TimedOut)));
        }
        let due: Vec<String> = self
            .tasks
            .calls
            .iter()
            // Due by the interval, or quiet for too long with no answer since: one more look.
            .filter(|(_, c)| c.next_poll.is_some_and(|at| at <= now || c.quiet_until <= now))
            .map(|(id, _)| id.clone())
            .collect();
        for task_id in due {
            match self.session.send(now, "tasks/get", &TaskRequestParams::new(&task_id), RequestOptions::default()) {
                Ok(id) => {
                    self.tasks.requests.insert(id, TaskRequest::Get(task_id.clone()));
                    if let Some(call) = self.tasks.calls.get_mut(&task_id) {
                        call.next_poll = None;
                    }
                }
                Err(e) => self.end_task_call(&task_id, Err(CallError::Local(LocalError::from(e)))),
            }
        }
    }

    /// The answer to a request sent on a task's behalf.
    pub(super) fn on_task_response(&mut self, about: TaskRequest, outcome: Result<Box<RawValue>, CallError>) {
        match about {
            TaskRequest::Get(task_id) => match outcome {
                Ok(raw) => match serde_json::from_str::<DetailedTask>(raw.get()) {
                    Ok(task) => self.on_task_state(task),
                    Err(e) => self.end_task_call(&task_id, Err(malformed(format!("malformed tasks/get result: {e}")))),
                },
                Err(error) => self.end_task_call(&task_id, Err(error)),
            },
            // A refused update leaves the task waiting; the next poll shows what is left.
            TaskRequest::Update(task_id) => {
                if let Err(error) = outcome {
                    self.end_task_call(&task_id, Err(error));
                }
            }
            TaskRequest::Cancel => {}
        }
    }

    /// What `tasks/get` said about a task: poll again, answer its questions, or end the call.
    fn on_task_state(&mut self, task: DetailedTask) {
        let id = task.task_id.clone();
        let seen = fingerprint(task.status, task.status_message.as_deref(), task.input_requests.as_ref());
        let ended = match task.status {
            TaskStatus::Completed => Some(match task.result {
                Some(result) => serde_json::value::to_raw_value(&result).map_err(|e| malformed(e.to_string())),
                None => Err(malformed("a completed task without its result".into())),
            }),
            TaskStatus::Failed => {
                let error = task
                    .error
                    .and_then(|e| serde_json::from_value::<ErrorObject>(serde_json::Value::Object(e)).ok())
                    .unwrap_or_else(|| {
                        ErrorObject::internal(task.status_message.clone().unwrap_or_else(|| "the task failed".into()))
                    });
                Some(Err(CallError::Remote(error)))
            }
            TaskStatus::Cancelled => {
                Some(Err(CallError::Local(LocalError::Cancelled { reason: task.status_message.clone() })))
            }
            _ => None,
        };
        if let Some(outcome) = ended {
            return self.end_task_call(&id, outcome);
        }
        let Some(call) = self.tasks.calls.get_mut(&id) else { return };
        call.interval = task.poll_interval_ms.map_or(call.interval, |ms| interval_of(Some(ms)));
        call.next_poll = Some(self.now + call.interval);
        call.answered_at = self.now;
        if seen != call.last_seen {
            call.last_seen = seen;
            call.quiet_until = self.now + call.timeout;
            call.report(task.status, task.status_message.as_deref());
        } else if call.quiet_until <= self.now {
            // No change since before its timeout: the call timed out.
            let origin = call.call.origin.clone();
            self.cancel_task_call(&origin, None, Err(CallError::Local(LocalError::TimedOut)));
            return;
        }
        let fresh: Vec<_> =
            task.input_requests.into_iter().flatten().filter(|(key, _)| !call.answered.contains(key)).collect();
        if fresh.is_empty() {
            return;
        }
        let mut answers = InputResponses::new();
        for (key, request) in fresh {
            match self.handlers.answer_input(&request) {
                Ok(answer) => {
                    answers.insert(key, answer);
                }
                Err(error) => {
                    return self.end_task_call(&id, Err(CallError::Local(LocalError::InputRefused { key, error })));
                }
            }
        }
        if let Some(call) = self.tasks.calls.get_mut(&id) {
            call.answered.extend(answers.keys().cloned());
        }
        let params = UpdateTaskRequestParams {
            task_id: id.clone(),
            input_responses: answers,
            meta: None,
            extra: crate::schema::JsonObject::new(),
        };
        match self.session.send(self.now, "tasks/update", &params, RequestOptions::default()) {
            Ok(sent) => {
                self.tasks.requests.insert(sent, TaskRequest::Update(id));
            }
            Err(e) => self.end_task_call(&id, Err(CallError::Local(LocalError::from(e)))),
        }
    }

    /// Ends the call waiting for `task_id` with `outcome`.
    fn end_task_call(&mut self, task_id: &str, outcome: Result<Box<RawValue>, CallError>) {
        if let Some(call) = self.tasks.calls.remove(task_id) {
            self.tasks
                .requests
                .retain(|_, about| !matches!(about, TaskRequest::Get(t) | TaskRequest::Update(t) if t == task_id));
            self.deliver(call.call, outcome);
        }
    }

    /// Cancels the call known by `origin` if it waits for a task: `tasks/cancel` goes out and
    /// the call ends with `outcome`. Returns whether it was one.
    pub(super) fn cancel_task_call(
        &mut self,
        origin: &RequestId,
        reason: Option<&str>,
        outcome: Result<Box<RawValue>, CallError>,
    ) -> bool {
        let Some((task_id, owns)) =
            self.tasks.calls.iter().find(|(_, c)| c.call.origin == *origin).map(|(id, c)| (id.clone(), c.owns))
        else {
            return false;
        };
        if !owns {
            // A watch ends; the task is someone else's.
        } else if let Ok(sent) =
            self.session.send(self.now, "tasks/cancel", &TaskRequestParams::new(&task_id), RequestOptions::default())
        {
            self.tasks.requests.insert(sent, TaskRequest::Cancel);
        }
        let outcome = match outcome {
            Err(CallError::Local(LocalError::Cancelled { reason: None })) => {
                Err(CallError::Local(LocalError::Cancelled { reason: reason.map(str::to_owned) }))
            }
            other => other,
        };
        self.end_task_call(&task_id, outcome);
        true
    }
}

impl TaskCall {
    /// Reports a change of the task to the call's progress callback, if any.
    fn report(&mut self, status: TaskStatus, message: Option<&str>) {
        self.changes += 1;
        if let Some(report) = self.call.progress.as_mut() {
            let message = message.map_or_else(|| status_name(status), str::to_owned);
            report(Progress { progress: f64::from(self.changes), total: None, message: Some(message) });
        }
    }
}

/// A status as the spec writes it (`working`, `input_required`, ...).
fn status_name(status: TaskStatus) -> String {
    serde_json::to_value(status).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default()
}

/// What a change of a task is judged by: its status, its message, its input request keys.
fn fingerprint(
    status: TaskStatus,
    message: Option<&str>,
    requests: Option<&crate::schema::mrtr::InputRequests>,
) -> String {
    let keys: Vec<&str> = requests.into_iter().flatten().map(|(k, _)| k.as_str()).collect();
    format!("{status:?}\u{0}{}\u{0}{}", message.unwrap_or(""), keys.join("\u{0}"))
}

/// The poll interval for a suggestion in milliseconds, within bounds.
fn interval_of(ms: Option<u64>) -> Duration {
    ms.map_or(DEFAULT_POLL, Duration::from_millis).clamp(MIN_POLL, MAX_POLL)
}
