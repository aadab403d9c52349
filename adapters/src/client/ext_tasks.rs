//! Tasks of the 2026-07-28 tasks extension (`io.modelcontextprotocol/tasks`), handled by the
//! caller rather than followed for it: start one and keep its id, look at it, watch it until
//! it ends, cancel it. A plain [`Client::call_tool`] already follows a call the server turns
//! into a task; these are for tasks that outlive one call (a CLI's `task`, `watch`, `cancel`).
//!
//! The client must list the extension in its capabilities
//! ([`ClientOptions::extension`](super::ClientOptions::extension)), and the session speak
//! 2026-07-28.

use talaria_core::client::CallOptions;
use talaria_core::schema::tasks::ext::{
    CancelTask, DetailedTask, GetTask, StartTask, TaskRequestParams, TaskStart, WatchTask,
};
use talaria_core::schema::tools::CallToolResult;

use super::async_client::{AsyncClient, CallFuture};
use super::{tool_call, Client, ClientError};

impl Client {
    /// Calls tool `name` and keeps the task the server runs it as: [`TaskStart::Task`] with
    /// the task's id, or [`TaskStart::Answered`] when the server answered inline (it alone
    /// decides).
    ///
    /// # Errors
    ///
    /// As [`Client::call`].
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use talaria::core::schema::tasks::ext::TaskStart;
    /// # fn demo(client: &talaria::client::Client) -> Result<(), talaria::client::ClientError> {
    /// if let TaskStart::Task(task) = client.start_task("research", serde_json::json!({"topic": "tides"}))? {
    ///     let result = client.watch_task(&task.task_id, Default::default())?;
    ///     # let _ = result;
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub fn start_task(&self, name: &str, arguments: serde_json::Value) -> Result<TaskStart, ClientError> {
        self.call::<StartTask>(&tool_call(name, arguments), CallOptions::default().keeping_task())
    }

    /// The task `task_id` as the server has it now (`tasks/get`).
    ///
    /// # Errors
    ///
    /// As [`Client::call`]; -32602 from the server for an unknown or expired task.
    pub fn task_state(&self, task_id: &str) -> Result<DetailedTask, ClientError> {
        self.call::<GetTask>(&TaskRequestParams::new(task_id), CallOptions::default())
    }

    /// Waits for task `task_id` to end and returns its tool's result, answering its input
    /// requests with the client's handlers meanwhile. Each change of the task goes to
    /// `options`' progress callback; the timeout restarts with each.
    ///
    /// # Errors
    ///
    /// As [`Client::call`]; the task's JSON-RPC error if it failed, a cancellation if it was
    /// cancelled.
    pub fn watch_task(&self, task_id: &str, options: CallOptions) -> Result<CallToolResult, ClientError> {
        self.call::<WatchTask>(&TaskRequestParams::new(task_id), options.watching_task())
    }

    /// Asks the server to cancel task `task_id` (`tasks/cancel`, acknowledged at once; the
    /// task ends `cancelled` when the tool stops).
    ///
    /// # Errors
    ///
    /// As [`Client::call`].
    pub fn cancel_ext_task(&self, task_id: &str) -> Result<(), ClientError> {
        self.call::<CancelTask>(&TaskRequestParams::new(task_id), CallOptions::default()).map(|_| ())
    }
}

impl AsyncClient {
    /// Sent at once; see [`Client::start_task`].
    pub fn start_task(&self, name: &str, arguments: serde_json::Value) -> CallFuture<TaskStart> {
        self.call::<StartTask>(&tool_call(name, arguments), CallOptions::default().keeping_task())
    }

    /// Sent at once; see [`Client::task_state`].
    pub fn task_state(&self, task_id: &str) -> CallFuture<DetailedTask> {
        self.call::<GetTask>(&TaskRequestParams::new(task_id), CallOptions::default())
    }

    /// Sent at once; see [`Client::watch_task`]. Dropping the future stops the watch and
    /// leaves the task running.
    pub fn watch_task(&self, task_id: &str, options: CallOptions) -> CallFuture<CallToolResult> {
        self.call::<WatchTask>(&TaskRequestParams::new(task_id), options.watching_task())
    }

    /// Sent at once; see [`Client::cancel_ext_task`].
    pub fn cancel_ext_task(&self, task_id: &str) -> CallFuture<talaria_core::schema::tasks::ext::CancelTaskResult> {
        self.call::<CancelTask>(&TaskRequestParams::new(task_id), CallOptions::default())
    }
}
