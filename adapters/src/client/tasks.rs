//! Tool calls run as tasks (2025-11-25) from the blocking handle: start one, poll it, wait
//! for its outcome, list and cancel. The async handle has the same calls
//! ([`AsyncClient::call_tool_as_task`](super::AsyncClient::call_tool_as_task) and friends).

use std::time::Duration;

use talaria_core::client::CallOptions;
use talaria_core::schema::tasks::{
    CallToolAsTask, CancelTask, CancelTaskRequestParams, GetTask, GetTaskPayload, GetTaskPayloadRequestParams,
    GetTaskRequestParams, ListTasks, Task, TaskMetadata,
};
use talaria_core::schema::tools::{CallToolRequestParams, CallToolResult};
use talaria_core::session::{CallError, LocalError};

use super::{page, too_many_pages, tool_call, Client, ClientError, MAX_LIST_PAGES};

impl Client {
    /// Calls a tool as a task (2025-11-25), for a tool whose `execution.taskSupport` is
    /// `optional` or `required`: the server answers at once with the task, which runs on.
    /// Poll it with [`Client::get_task`], wait for its outcome with [`Client::task_result`],
    /// or cancel it with [`Client::cancel_task`]. `ttl` asks how long the server keeps it.
    ///
    /// # Errors
    ///
    /// As [`Client::call`]; -32601 from the server for a tool that cannot run as a task.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # fn demo(client: &talaria::client::Client) -> Result<(), talaria::client::ClientError> {
    /// let task = client.call_tool_as_task("research", serde_json::json!({"topic": "tides"}), None)?;
    /// let result = client.task_result(&task.task_id)?; // waits until the task ends
    /// # let _ = result;
    /// # Ok(())
    /// # }
    /// ```
    pub fn call_tool_as_task(
        &self,
        name: &str,
        arguments: serde_json::Value,
        ttl: Option<Duration>,
    ) -> Result<Task, ClientError> {
        Ok(self.call::<CallToolAsTask>(&task_call(name, arguments, ttl), CallOptions::default())?.task)
    }

    /// The task `task_id` as the server has it now (`tasks/get`, 2025-11-25).
    ///
    /// # Errors
    ///
    /// As [`Client::call`]; -32602 from the server for an unknown (or expired) task.
    pub fn get_task(&self, task_id: &str) -> Result<Task, ClientError> {
        self.call::<GetTask>(&GetTaskRequestParams::new(task_id), CallOptions::default())
    }

    /// The outcome of the tool call the task `task_id` runs (`tasks/result`, 2025-11-25): the
    /// server answers once the task has ended, so this waits that long (within the call's
    /// timeout, which progress does not reset here: pass a longer one with
    /// [`Client::task_result_with`]).
    ///
    /// # Errors
    ///
    /// As [`Client::call`]; the tool call's own JSON-RPC error; -32000 for a cancelled task.
    pub fn task_result(&self, task_id: &str) -> Result<CallToolResult, ClientError> {
        self.task_result_with(task_id, CallOptions::default())
    }

    /// [`Client::task_result`] with per-call options (a timeout).
    ///
    /// # Errors
    ///
    /// As [`Client::task_result`].
    pub fn task_result_with(&self, task_id: &str, options: CallOptions) -> Result<CallToolResult, ClientError> {
        task_payload(self.call::<GetTaskPayload>(&GetTaskPayloadRequestParams::new(task_id), options)?)
    }

    /// The server's tasks for this session (`tasks/list`, 2025-11-25), following cursors (at
    /// most [`MAX_LIST_PAGES`] pages).
    ///
    /// # Errors
    ///
    /// As [`Client::call`].
    pub fn list_tasks(&self) -> Result<Vec<Task>, ClientError> {
        let mut tasks = Vec::new();
        let mut cursor = None;
        for _ in 0..MAX_LIST_PAGES {
            let page = self.call::<ListTasks>(&page(cursor), CallOptions::default())?;
            tasks.extend(page.tasks);
            match page.next_cursor {
                Some(next) => cursor = Some(next),
                None => return Ok(tasks),
            }
        }
        Err(too_many_pages("tasks/list"))
    }

    /// Cancels the task `task_id` (`tasks/cancel`, 2025-11-25); the task as it is now.
    ///
    /// # Errors
    ///
    /// As [`Client::call`]; -32602 from the server for an unknown task or one that has ended.
    pub fn cancel_task(&self, task_id: &str) -> Result<Task, ClientError> {
        self.call::<CancelTask>(&CancelTaskRequestParams::new(task_id), CallOptions::default())
    }
}

/// `tools/call` params asking for the call to run as a task kept `ttl` (2025-11-25), for a
/// [`CallToolAsTask`] call of your own ([`Client::call_tool_as_task`] sends it for you).
///
/// # Examples
///
/// ```
/// use std::time::Duration;
///
/// let params = talaria::client::task_call("slow", serde_json::json!({"steps": 3}), Some(Duration::from_secs(60)));
/// assert_eq!(params.name, "slow");
/// assert_eq!(params.task.and_then(|t| t.ttl), Some(60_000));
/// ```
pub fn task_call(name: &str, arguments: serde_json::Value, ttl: Option<Duration>) -> CallToolRequestParams {
    let mut params = tool_call(name, arguments);
    params.task = Some(TaskMetadata {
        ttl: ttl.map(|t| u64::try_from(t.as_millis()).unwrap_or(u64::MAX)),
        ..TaskMetadata::default()
    });
    params
}

/// A `tasks/result` payload (a tool call's task) as the tool's result.
///
/// # Errors
///
/// [`ClientError::Call`] with a malformed-response error if the payload is no tool result.
///
/// # Examples
///
/// ```
/// let payload = serde_json::json!({"content": [{"type": "text", "text": "done"}]});
/// let result = talaria::client::task_payload(payload.as_object().cloned().unwrap_or_default())?;
/// assert_eq!(result.content[0].as_text(), Some("done"));
/// assert!(talaria::client::task_payload(serde_json::Map::new()).is_err(), "no content");
/// # Ok::<(), talaria::client::ClientError>(())
/// ```
pub fn task_payload(payload: talaria_core::schema::JsonObject) -> Result<CallToolResult, ClientError> {
    serde_json::from_value(serde_json::Value::Object(payload))
        .map_err(|e| ClientError::Call(CallError::Local(LocalError::MalformedResponse(format!("tasks/result: {e}")))))
}
