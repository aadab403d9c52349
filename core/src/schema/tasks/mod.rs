//! Tasks (2025-11-25 core; an extension from 2026-07-28 on).
//!
//! In 2025-11-25 a request carrying `task` ([`TaskMetadata`]) may be answered with a
//! [`CreateTaskResult`]; the requester then polls `tasks/get`, fetches the outcome with
//! `tasks/result`, and may list (`tasks/list`) and cancel (`tasks/cancel`) tasks. Either side
//! may host tasks.
//!
//! 2026-07-28 removes tasks from the core protocol. The `io.modelcontextprotocol/tasks`
//! extension (SEP-2663) replaces them with a different wire shape, described in [`ext`].

use crate::alloc_prelude::*;
use serde::{Deserialize, Serialize};

use super::common::{Cursor, ForRevision, JsonObject, Meta, PaginatedRequestParams};
use super::macros::mcp_struct;
use super::methods::{notification_method, request_method};
use crate::version::ProtocolVersion;

mcp_struct! {
    /// Asks for a request to run as a task (2025-11-25).
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::tasks::TaskMetadata;
    ///
    /// let t = TaskMetadata { ttl: Some(60_000), ..Default::default() };
    /// assert_eq!(serde_json::to_string(&t).unwrap(), r#"{"ttl":60000}"#);
    /// ```
    #[derive(Default)]
    pub struct TaskMetadata {
        /// How long, in milliseconds, to keep the task's result after completion.
        opt ttl: u64 = "ttl",
    }
}

/// The state of a task.
///
/// ```text
///            +---------------------+
///            v                     |
/// working --+--> input_required ---+
///    |                  |
///    +------------------+--> completed | failed | cancelled   (terminal)
/// ```
///
/// # Examples
///
/// ```
/// use talaria_core::schema::tasks::TaskStatus;
///
/// let s: TaskStatus = serde_json::from_str(r#""input_required""#).unwrap();
/// assert!(!s.is_terminal());
/// assert!(TaskStatus::Cancelled.is_terminal());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    /// The request is being processed.
    Working,
    /// The receiver needs input from the requester.
    InputRequired,
    /// The request completed; its result is available.
    Completed,
    /// The request failed.
    Failed,
    /// The request was cancelled.
    Cancelled,
}

impl TaskStatus {
    /// Whether the task can no longer change state.
    #[must_use]
    pub const fn is_terminal(self) -> bool {
        matches!(self, Self::Completed | Self::Failed | Self::Cancelled)
    }
}

mcp_struct! {
    /// The state of a task (2025-11-25).
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::tasks::{Task, TaskStatus};
    ///
    /// let t = Task::new("t1", TaskStatus::Working, "2025-11-25T10:30:00Z");
    /// let json = serde_json::to_value(&t).unwrap();
    /// assert_eq!(json["ttl"], serde_json::Value::Null);
    /// assert_eq!(json["lastUpdatedAt"], "2025-11-25T10:30:00Z");
    /// ```
    pub struct Task {
        /// The task's id.
        req task_id: String = "taskId",
        /// Its state.
        req status: TaskStatus = "status",
        /// A human-readable description of the state.
        opt status_message: String = "statusMessage",
        /// ISO 8601 creation time.
        req created_at: String = "createdAt",
        /// ISO 8601 time of the last update.
        req last_updated_at: String = "lastUpdatedAt",
        /// Retention from creation in milliseconds; `None` (written as `null`) is unlimited.
        req ttl: Option<u64> = "ttl",
        /// Suggested polling interval in milliseconds.
        opt poll_interval: u64 = "pollInterval",
        /// Metadata, when the task is itself a result (`tasks/get`, `tasks/cancel`) or the
        /// params of `notifications/tasks/status`.
        opt meta: Meta = "_meta",
    }
}

impl Task {
    /// A task created and last updated at `created_at`, kept without limit.
    #[must_use]
    pub fn new(task_id: impl Into<String>, status: TaskStatus, created_at: impl Into<String>) -> Self {
        let created_at = created_at.into();
        Self {
            task_id: task_id.into(),
            status,
            status_message: None,
            last_updated_at: created_at.clone(),
            created_at,
            ttl: None,
            poll_interval: None,
            meta: None,
            extra: JsonObject::new(),
        }
    }
}

mcp_struct! {
    /// The answer to a task-augmented request (2025-11-25): the task that will produce the
    /// result.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::tasks::{CreateTaskResult, Task, TaskStatus};
    ///
    /// let r = CreateTaskResult::new(Task::new("t1", TaskStatus::Working, "2025-11-25T10:30:00Z"));
    /// assert_eq!(serde_json::to_value(&r).unwrap()["task"]["status"], "working");
    /// ```
    pub struct CreateTaskResult {
        /// The task.
        req task: Task = "task",
        /// Result metadata.
        opt meta: Meta = "_meta",
    }
}

impl CreateTaskResult {
    /// A result announcing `task`.
    #[must_use]
    pub fn new(task: Task) -> Self {
        Self { task, meta: None, extra: JsonObject::new() }
    }
}

mcp_struct! {
    /// Parameters of `tasks/get` (2025-11-25).
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::tasks::GetTaskRequestParams;
    ///
    /// let p = GetTaskRequestParams::new("t1");
    /// assert_eq!(serde_json::to_string(&p).unwrap(), r#"{"taskId":"t1"}"#);
    /// ```
    #[derive(Default)]
    pub struct GetTaskRequestParams {
        /// The task to query.
        req task_id: String = "taskId",
        /// Request metadata.
        opt meta: Meta = "_meta",
    }
}

mcp_struct! {
    /// Parameters of `tasks/result` (2025-11-25): fetch the outcome of a finished task.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::tasks::GetTaskPayloadRequestParams;
    ///
    /// let p: GetTaskPayloadRequestParams = serde_json::from_str(r#"{"taskId":"t1"}"#).unwrap();
    /// assert_eq!(p.task_id, "t1");
    /// ```
    #[derive(Default)]
    pub struct GetTaskPayloadRequestParams {
        /// The task whose result to fetch.
        req task_id: String = "taskId",
        /// Request metadata.
        opt meta: Meta = "_meta",
    }
}

mcp_struct! {
    /// Parameters of `tasks/cancel` (2025-11-25).
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::tasks::CancelTaskRequestParams;
    ///
    /// let p = CancelTaskRequestParams::new("t1");
    /// assert_eq!(serde_json::to_string(&p).unwrap(), r#"{"taskId":"t1"}"#);
    /// ```
    #[derive(Default)]
    pub struct CancelTaskRequestParams {
        /// The task to cancel.
        req task_id: String = "taskId",
        /// Request metadata.
        opt meta: Meta = "_meta",
    }
}

impl GetTaskRequestParams {
    /// Parameters naming `task_id`.
    #[must_use]
    pub fn new(task_id: impl Into<String>) -> Self {
        Self { task_id: task_id.into(), ..Self::default() }
    }
}

impl GetTaskPayloadRequestParams {
    /// Parameters naming `task_id`.
    #[must_use]
    pub fn new(task_id: impl Into<String>) -> Self {
        Self { task_id: task_id.into(), ..Self::default() }
    }
}

impl CancelTaskRequestParams {
    /// Parameters naming `task_id`.
    #[must_use]
    pub fn new(task_id: impl Into<String>) -> Self {
        Self { task_id: task_id.into(), ..Self::default() }
    }
}

/// The answer to `tasks/get` (2025-11-25): the task itself, with `_meta`.
///
/// # Examples
///
/// ```
/// use talaria_core::schema::tasks::{GetTaskResult, Task, TaskStatus};
///
/// let r: GetTaskResult = Task::new("t1", TaskStatus::Completed, "2025-11-25T10:30:00Z");
/// assert_eq!(serde_json::to_value(&r).unwrap()["taskId"], "t1");
/// assert!(r.status.is_terminal());
/// ```
pub type GetTaskResult = Task;

/// The answer to `tasks/cancel` (2025-11-25): the task in its new state, with `_meta`.
pub type CancelTaskResult = Task;

/// The params of `notifications/tasks/status` (2025-11-25): the task, with `_meta`.
pub type TaskStatusNotificationParams = Task;

mcp_struct! {
    /// The answer to `tasks/list` (2025-11-25): one page of tasks.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::tasks::ListTasksResult;
    ///
    /// let r: ListTasksResult = serde_json::from_str(r#"{"tasks":[],"nextCursor":"p2"}"#).unwrap();
    /// assert!(r.tasks.is_empty());
    /// assert_eq!(r.next_cursor.as_deref(), Some("p2"));
    /// ```
    #[derive(Default)]
    pub struct ListTasksResult {
        /// The tasks on this page.
        req tasks: Vec<Task> = "tasks",
        /// Where the next page starts, if there is one.
        opt next_cursor: Cursor = "nextCursor",
        /// Result metadata.
        opt meta: Meta = "_meta",
    }
}

mcp_struct! {
    /// The task a message relates to (2025-11-25), stored in `_meta` under
    /// [`meta_keys::RELATED_TASK`](super::meta_keys::RELATED_TASK).
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::tasks::RelatedTaskMetadata;
    ///
    /// let r = RelatedTaskMetadata::new("t1");
    /// assert_eq!(serde_json::to_string(&r).unwrap(), r#"{"taskId":"t1"}"#);
    /// ```
    #[derive(Default)]
    pub struct RelatedTaskMetadata {
        /// The task's id.
        req task_id: String = "taskId",
    }
}

impl RelatedTaskMetadata {
    /// Metadata relating a message to `task_id`.
    #[must_use]
    pub fn new(task_id: impl Into<String>) -> Self {
        Self { task_id: task_id.into(), ..Self::default() }
    }
}

/// Implements [`ForRevision`] for results that exist only in 2025-11-25, where no result
/// carries `resultType`: nothing to adapt.
macro_rules! legacy_only_result {
    ($($ty:ident),* $(,)?) => {
        $(
            /// 2025-11-25 only: nothing depends on the revision.
            impl ForRevision for $ty {
                fn adapt_to(&mut self, _version: ProtocolVersion) {}
            }
        )*
    };
}

legacy_only_result!(CreateTaskResult, Task, ListTasksResult);

request_method! {
    /// `tasks/get` (2025-11-25): the state of a task.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::{tasks::GetTask, RequestMethod, SentBy};
    /// use talaria_core::version::ProtocolVersion;
    ///
    /// assert_eq!(GetTask::INFO.sent_by, SentBy::Both);
    /// assert!(!GetTask::INFO.exists_in(ProtocolVersion::V2026_07_28));
    /// ```
    GetTask, "tasks/get", GetTaskRequestParams => GetTaskResult
}

request_method! {
    /// `tasks/result` (2025-11-25): the outcome of a finished task, shaped like the result of
    /// the original request.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::{tasks::GetTaskPayload, RequestMethod};
    ///
    /// assert_eq!(GetTaskPayload::INFO.name, "tasks/result");
    /// ```
    GetTaskPayload, "tasks/result", GetTaskPayloadRequestParams => JsonObject
}

request_method! {
    /// `tasks/cancel` (2025-11-25): cancels a task.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::{tasks::CancelTask, Capability, RequestMethod};
    ///
    /// assert_eq!(CancelTask::INFO.capability, Some(Capability::Tasks));
    /// ```
    CancelTask, "tasks/cancel", CancelTaskRequestParams => CancelTaskResult
}

request_method! {
    /// `tasks/list` (2025-11-25): lists tasks, one page at a time.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::{tasks::ListTasks, RequestMethod};
    /// use talaria_core::version::ProtocolVersion;
    ///
    /// assert!(ListTasks::INFO.exists_in(ProtocolVersion::V2025_11_25));
    /// ```
    ListTasks, "tasks/list", PaginatedRequestParams => ListTasksResult
}

request_method! {
    /// `tools/call` run as a task (2025-11-25): the params carry `task`, and the answer is
    /// the task ([`CreateTaskResult`]), not the tool's result.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::{tasks::CallToolAsTask, RequestMethod};
    ///
    /// assert_eq!(CallToolAsTask::INFO.name, "tools/call");
    /// ```
    CallToolAsTask, "tools/call", super::tools::CallToolRequestParams => CreateTaskResult
}

notification_method! {
    /// `notifications/tasks/status` (2025-11-25): a task changed state.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::{tasks::TaskStatusChanged, NotificationMethod};
    ///
    /// assert_eq!(TaskStatusChanged::INFO.name, "notifications/tasks/status");
    /// ```
    TaskStatusChanged, "notifications/tasks/status", TaskStatusNotificationParams
}

pub mod ext;

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use serde_json::{json, Value};

    use super::*;
    use crate::schema::mrtr::{InputRequest, InputResponse};
    use crate::schema::test_support::round_trip;
    use crate::schema::{NotificationMethod, RequestMethod, ResultType};

    fn task_json(ttl: &Value) -> Value {
        json!({
            "taskId": "786512e2",
            "status": "working",
            "statusMessage": "Processing",
            "createdAt": "2025-11-25T10:30:00Z",
            "lastUpdatedAt": "2025-11-25T10:40:00Z",
            "ttl": ttl,
            "pollInterval": 5000
        })
    }

    #[test]
    fn core_task_shapes_round_trip() {
        let t: Task = round_trip("task", &task_json(&json!(60000)));
        assert_eq!(t.ttl, Some(60000));
        let t: Task = round_trip("unlimited task", &task_json(&Value::Null));
        assert_eq!(t.ttl, None);
        let created: CreateTaskResult = round_trip("create", &json!({"task": task_json(&json!(1)), "_meta": {"k": 1}}));
        assert_eq!(created.task.status, TaskStatus::Working);
        round_trip::<GetTaskResult>("get", &task_json(&Value::Null));
        round_trip::<CancelTaskResult>("cancel", &task_json(&json!(7)));
        round_trip::<TaskStatusNotificationParams>("status", &task_json(&json!(7)));
        let list: ListTasksResult = round_trip("list", &json!({"tasks": [task_json(&Value::Null)], "nextCursor": "c"}));
        assert_eq!(list.tasks.len(), 1);
        round_trip::<GetTaskRequestParams>("get params", &json!({"taskId": "t", "_meta": {"progressToken": 1}}));
        round_trip::<GetTaskPayloadRequestParams>("payload params", &json!({"taskId": "t"}));
        round_trip::<CancelTaskRequestParams>("cancel params", &json!({"taskId": "t"}));
        round_trip::<RelatedTaskMetadata>("related", &json!({"taskId": "t"}));
        round_trip::<TaskMetadata>("metadata", &json!({"ttl": 100}));
    }

    #[test]
    fn unknown_members_round_trip() {
        let mut json = task_json(&json!(1));
        json["progress"] = json!(0.5);
        let r: GetTaskResult = round_trip("unknown", &json);
        assert_eq!(r.extra["progress"], 0.5);
    }

    #[test]
    fn missing_required_members_fail() {
        let mut no_ttl = task_json(&json!(1));
        no_ttl.as_object_mut().unwrap().remove("ttl");
        assert!(serde_json::from_value::<Task>(no_ttl).is_err());
        assert!(serde_json::from_value::<Task>(json!({"taskId": "t", "status": "working"})).is_err());
        let mut bad_status = task_json(&json!(1));
        bad_status["status"] = json!("sleeping");
        assert!(serde_json::from_value::<GetTaskResult>(bad_status).is_err());
        assert!(serde_json::from_value::<CreateTaskResult>(json!({})).is_err());
        assert!(serde_json::from_value::<ListTasksResult>(json!({"nextCursor": "c"})).is_err());
        assert!(serde_json::from_value::<GetTaskRequestParams>(json!({})).is_err());
    }

    #[test]
    fn markers_name_their_methods() {
        assert_eq!(GetTask::INFO.name, "tasks/get");
        assert_eq!(GetTaskPayload::INFO.name, "tasks/result");
        assert_eq!(CancelTask::INFO.name, "tasks/cancel");
        assert_eq!(ListTasks::INFO.name, "tasks/list");
        assert_eq!(TaskStatusChanged::INFO.name, "notifications/tasks/status");
        assert!(!GetTask::INFO.exists_in(ProtocolVersion::V2026_07_28));
        assert!(ext::GetTask::INFO.exists_in(ProtocolVersion::V2026_07_28));
        assert_eq!(ext::UpdateTask::INFO.name, "tasks/update");
        assert_eq!(ext::CancelTask::INFO.name, "tasks/cancel");
        assert_eq!(ext::TaskStatusChanged::INFO.name, "notifications/tasks");
    }

    // The messages of the extension's specification (`ext-tasks`, 2026-07-28), retyped.

    #[test]
    fn extension_task_creation_round_trips() {
        let created = json!({
            "resultType": "task",
            "taskId": "786512e2-9e0d-44bd-8f29-789f320fe840",
            "status": "working",
            "statusMessage": "The operation is now in progress.",
            "createdAt": "2025-11-25T10:30:00Z",
            "lastUpdatedAt": "2025-11-25T10:40:00Z",
            "ttlMs": 60000,
            "pollIntervalMs": 5000
        });
        let r: ext::CreateTaskResult = round_trip("create", &created);
        assert_eq!(r.poll_interval_ms, Some(5000));
        let mut wrong = created;
        wrong["resultType"] = json!("complete");
        assert!(serde_json::from_value::<ext::CreateTaskResult>(wrong).is_err());
    }

    #[test]
    fn extension_polling_and_update_round_trip() {
        let input_required = json!({
            "resultType": "complete",
            "taskId": "786512e2-9e0d-44bd-8f29-789f320fe840",
            "status": "input_required",
            "createdAt": "2025-11-25T10:30:00Z",
            "lastUpdatedAt": "2025-11-25T10:50:00Z",
            "ttlMs": 3600000,
            "pollIntervalMs": 5000,
            "inputRequests": {
                "name": {
                    "method": "elicitation/create",
                    "params": {
                        "mode": "form",
                        "message": "Please enter your name.",
                        "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
                    }
                }
            }
        });
        let t: ext::GetTaskResult = round_trip("input required", &input_required);
        assert!(matches!(t.input_requests.unwrap()["name"], InputRequest::Elicit(_)));
        assert_eq!(t.result_type, Some(ResultType::Complete));

        let failed = json!({
            "resultType": "complete",
            "taskId": "786512e2",
            "status": "failed",
            "createdAt": "2025-11-25T10:30:00Z",
            "lastUpdatedAt": "2025-11-25T10:40:00Z",
            "ttlMs": 3600000,
            "statusMessage": "Tool execution failed: API rate limit exceeded",
            "error": {"code": -32603, "message": "API rate limit exceeded"}
        });
        let t: ext::DetailedTask = round_trip("failed", &failed);
        assert_eq!(t.error.unwrap()["code"], -32603);

        let notification = json!({
            "taskId": "786512e2",
            "status": "completed",
            "createdAt": "2025-11-25T10:30:00Z",
            "lastUpdatedAt": "2025-11-25T10:50:00Z",
            "ttlMs": 60000,
            "pollIntervalMs": 5000,
            "result": {"content": [{"type": "text", "text": "Operation completed successfully."}], "isError": false}
        });
        let mut n: ext::TaskStatusNotificationParams = round_trip("notification", &notification);
        n.adapt_to(ProtocolVersion::V2026_07_28);
        assert_eq!(n.result_type, Some(ResultType::Complete));

        let update = json!({"taskId": "786512e2", "inputResponses": {"name": {"action": "accept", "content": {"input": "Luca"}}}});
        let u: ext::UpdateTaskRequestParams = round_trip("update", &update);
        assert!(matches!(u.input_responses["name"], InputResponse::Elicit(_)));
        round_trip::<ext::TaskRequestParams>("get", &json!({"taskId": "786512e2"}));
        round_trip::<ext::UpdateTaskResult>("ack", &json!({"resultType": "complete"}));
        assert!(serde_json::from_value::<ext::UpdateTaskRequestParams>(json!({"taskId": "t"})).is_err());
        assert!(serde_json::from_value::<ext::Task>(
            json!({"taskId": "t", "status": "working", "createdAt": "a", "lastUpdatedAt": "a"})
        )
        .is_err());
    }
}
