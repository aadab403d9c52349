//! The task commands: start a tool call as a task and keep its id, list, look at, watch,
//! wait for and cancel tasks. Either design of tasks, by the session's revision: 2025-11-25's
//! (`tasks/list`, `tasks/result`, the task under `task` in `tools/call`) and the 2026-07-28
//! extension's (`tasks/get` with the outcome inlined, input requests answered with
//! `tasks/update`, no list).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, PoisonError};
use std::time::Duration;

use serde_json::Value;
use talaria_core::client::{CallOptions, Progress};
use talaria_core::schema::tasks::ext::TaskStart;
use talaria_core::schema::tasks::{
    CallToolAsTask, CancelTask, CancelTaskRequestParams, GetTask, GetTaskPayload, GetTaskPayloadRequestParams,
    GetTaskRequestParams, ListTasks, TaskStatus,
};
use talaria_core::schema::tools::CallToolResult;
use talaria_core::schema::PaginatedRequestParams;
use talaria_core::version::Era;

use super::commands::Command;
use super::exec::{done, to_json, Exec, Outcome, Shape};
use super::exit::Failure;
use super::printer::Printer;
use super::wait;
use talaria::client::{task_call, task_payload};

/// How often a 2025-11-25 task is looked at while watched, when it suggests nothing.
const DEFAULT_POLL: Duration = Duration::from_millis(500);

impl Exec<'_> {
    /// Runs a task command (`task`, `tasks`, `task_status`, `task_result`, `watch`,
    /// `cancel_task`).
    ///
    /// # Errors
    ///
    /// The command's failure; a usage failure for a command that is not about tasks.
    pub(super) fn run_task(&mut self, command: &Command, elapsed: &dyn Fn() -> Duration) -> Result<Outcome, Failure> {
        let extension = self.session.client.protocol_version().era() == Era::Stateless;
        let outcome = match command {
            Command::CallToolAsTask { name, args } => self.start(name, args, extension),
            Command::ListTasks if extension => Err(Failure::usage(
                "the 2026-07-28 tasks extension has no tasks/list: a task is known by the id `task` printed",
            )),
            Command::ListTasks => {
                self.typed::<ListTasks>(&PaginatedRequestParams::default()).and_then(|tasks| raw(to_json(&tasks)?))
            }
            Command::TaskStatus(id) => self.task_id(id.as_deref()).and_then(|id| {
                if extension {
                    let client = self.session.client.to_async();
                    raw(to_json(&self.wait(|| client.task_state(&id))?)?)
                } else {
                    raw(to_json(&self.typed::<GetTask>(&GetTaskRequestParams::new(id))?)?)
                }
            }),
            Command::TaskResult(id) => self.task_id(id.as_deref()).and_then(|id| {
                let result = if extension {
                    let client = self.session.client.to_async();
                    self.wait(|| client.watch_task(&id, CallOptions::default()))?
                } else {
                    let payload = self.typed::<GetTaskPayload>(&GetTaskPayloadRequestParams::new(id))?;
                    task_payload(payload).map_err(Failure::from)?
                };
                tool_result(&result)
            }),
            Command::WatchTask(id) => self.task_id(id.as_deref()).and_then(|id| {
                let result = if extension { self.watch_extension_task(&id)? } else { self.watch_task(&id)? };
                tool_result(&result)
            }),
            Command::CancelTask(id) => self.task_id(id.as_deref()).and_then(|id| {
                if extension {
                    let client = self.session.client.to_async();
                    self.wait(|| client.cancel_ext_task(&id))?;
                    let value = done(&format!("asked the server to cancel task {id}"));
                    Ok(Outcome { value, shape: Shape::Done, tool_error: false, elapsed: Duration::ZERO })
                } else {
                    raw(to_json(&self.typed::<CancelTask>(&CancelTaskRequestParams::new(id))?)?)
                }
            }),
            _ => Err(Failure::usage("not a task command")),
        };
        outcome.map(|o| Outcome { elapsed: elapsed(), ..o })
    }

    /// `task TOOL ARGS...`: the call starts, the task comes back and is remembered.
    fn start(&mut self, name: &str, words: &[String], extension: bool) -> Result<Outcome, Failure> {
        let args = Value::Object(self.tool_arguments(name, words)?);
        if !extension {
            let created = self.typed::<CallToolAsTask>(&task_call(name, args, None))?;
            self.remember(&created.task.task_id);
            return raw(to_json(&created)?);
        }
        let client = self.session.client.to_async();
        match self.wait(|| client.start_task(name, args))? {
            TaskStart::Task(task) => {
                self.remember(&task.task_id);
                raw(to_json(&task)?)
            }
            // The server ran it inline: that is the tool's result.
            TaskStart::Answered(result) => {
                self.printer.verbose(1, "the server answered at once instead of starting a task");
                tool_result(&result)
            }
        }
    }

    fn remember(&self, id: &str) {
        *self.session.last_task.lock().unwrap_or_else(PoisonError::into_inner) = Some(id.to_owned());
        self.printer.verbose(1, &format!("task {id} started: `watch` follows it, `cancel_task` stops it"));
    }

    /// `watch` in the 2026-07-28 extension: the client follows the task (answering its input
    /// requests as the session does), each change printed.
    fn watch_extension_task(&mut self, id: &str) -> Result<CallToolResult, Failure> {
        let printer = Arc::clone(self.printer);
        let task = id.to_owned();
        let options = CallOptions::default()
            .with_progress(move |p: Progress| print_change(&printer, &task, p.message.as_deref()));
        let client = self.session.client.to_async();
        self.wait(|| client.watch_task(id, options))
    }

    /// `watch` in 2025-11-25: `tasks/get` at the interval the task suggests, each change
    /// printed, then `tasks/result` once it has ended. Ctrl-C stops watching, not the task.
    fn watch_task(&mut self, id: &str) -> Result<CallToolResult, Failure> {
        let client = self.session.client.clone();
        let printer = Arc::clone(self.printer);
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = Arc::clone(&stop);
        let task = id.to_owned();
        let job = move || {
            let mut last = None;
            loop {
                let state = client.get_task(&task)?;
                let seen = (state.status, state.status_message.clone());
                if last.as_ref() != Some(&seen) {
                    let message = state.status_message.clone().unwrap_or_else(|| status_name(state.status));
                    print_change(&printer, &task, Some(&message));
                    last = Some(seen);
                }
                if state.status.is_terminal() {
                    return client.task_result(&task);
                }
                let interval = state.poll_interval.map_or(DEFAULT_POLL, Duration::from_millis);
                if !sleep_unless(&stopped, interval.clamp(Duration::from_millis(10), Duration::from_secs(30))) {
                    return Err(talaria::client::ClientError::Call(talaria_core::session::CallError::Local(
                        talaria_core::session::LocalError::Cancelled { reason: Some("stopped watching".into()) },
                    )));
                }
            }
        };
        let outcome = wait::run(&self.session.client, None, job, self.ui, self.printer);
        stop.store(true, Ordering::Relaxed);
        outcome.map_err(|f| self.session.explain(f))
    }
}

/// Sleeps `total` unless `stop` is set first; whether it slept it all.
fn sleep_unless(stop: &AtomicBool, total: Duration) -> bool {
    let step = Duration::from_millis(20);
    let mut slept = Duration::ZERO;
    while slept < total {
        if stop.load(Ordering::Relaxed) {
            return false;
        }
        std::thread::sleep(step.min(total - slept));
        slept += step;
    }
    !stop.load(Ordering::Relaxed)
}

/// One change of a watched task, on stderr.
fn print_change(printer: &Printer, task: &str, message: Option<&str>) {
    let text = super::neutral::neutralize(message.unwrap_or("changed"), false);
    printer.line(&format!("{} {text}", printer.style.dim(&format!("task {task}:"))));
}

/// A status as the spec writes it.
fn status_name(status: TaskStatus) -> String {
    serde_json::to_value(status).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default()
}

/// A tool's result as an outcome (its time set by the caller).
fn tool_result(result: &CallToolResult) -> Result<Outcome, Failure> {
    Ok(Outcome {
        value: to_json(result)?,
        shape: Shape::ToolResult,
        tool_error: result.is_error(),
        elapsed: Duration::ZERO,
    })
}

/// A raw JSON outcome (its time set by the caller).
fn raw(value: Value) -> Result<Outcome, Failure> {
    Ok(Outcome { value, shape: Shape::Raw, tool_error: false, elapsed: Duration::ZERO })
}
