//! The tasks extension of 2026-07-28 (`io.modelcontextprotocol/tasks`, SEP-2663).
//!
//! A client that lists the extension in its per-request capabilities
//! (`_meta["io.modelcontextprotocol/clientCapabilities"].extensions`) may receive, for
//! `tools/call`, a [`CreateTaskResult`] (`resultType: "task"`) instead of the usual result; the
//! server alone decides. The client then polls `tasks/get` ([`GetTaskResult`] inlines pending
//! `inputRequests`, the final `result` or the JSON-RPC `error`), answers input requests with
//! `tasks/update`, and may send `tasks/cancel`. There is no `tasks/list` and no `tasks/result`;
//! both `tasks/update` and `tasks/cancel` are acknowledged with an empty result. Status
//! notifications (`notifications/tasks`) are opted into per task with `taskIds` in the
//! `subscriptions/listen` filter.
//!
//! Compared with 2025-11-25, the task's lifetime and polling interval are `ttlMs` and
//! `pollIntervalMs`, and the task members sit directly in `CreateTaskResult`.
//!
//! These types follow the extension's `specification/2026-07-28/tasks.md` in the
//! `modelcontextprotocol/ext-tasks` repository. The extension's methods are not in
//! [`METHODS`](super::super::METHODS) (which describes the core protocol); the markers here carry
//! their own [`MethodInfo`].
//!
//! # Examples
//!
//! ```
//! use talaria_core::schema::tasks::ext::{CreateTaskResult, EXTENSION_ID};
//! use talaria_core::schema::tasks::TaskStatus;
//!
//! assert_eq!(EXTENSION_ID, "io.modelcontextprotocol/tasks");
//! let r: CreateTaskResult = serde_json::from_str(
//!     r#"{"resultType":"task","taskId":"t1","status":"working","createdAt":"a","lastUpdatedAt":"a","ttlMs":60000}"#,
//! ).unwrap();
//! assert_eq!(r.status, TaskStatus::Working);
//! assert_eq!(r.ttl_ms, Some(60_000));
//! ```

use super::super::common::{EmptyResult, ForRevision, JsonObject, Meta, ResultType};
use super::super::macros::mcp_struct;
use super::super::methods::{notification_method, request_method, MethodInfo, MethodKind, SentBy};
use super::super::mrtr::{InputRequests, InputResponses};
use crate::alloc_prelude::*;

pub use super::TaskStatus;
use crate::version::ProtocolVersion;

/// The extension's identifier, the key under `capabilities.extensions`.
pub const EXTENSION_ID: &str = "io.modelcontextprotocol/tasks";

/// The `resultType` of a [`CreateTaskResult`].
pub const RESULT_TYPE_TASK: &str = "task";

mcp_struct! {
    /// The state of an extension task.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::tasks::ext::{Task, TaskStatus};
    ///
    /// let t = Task::new("t1", TaskStatus::Working, "2026-07-28T10:00:00Z");
    /// assert_eq!(serde_json::to_value(&t).unwrap()["ttlMs"], serde_json::Value::Null);
    /// ```
    pub struct Task {
        /// The task's id, chosen by the server and hard to guess.
        req task_id: String = "taskId",
        /// Its state.
        req status: TaskStatus = "status",
        /// A human-readable description of the state.
        opt status_message: String = "statusMessage",
        /// ISO 8601 creation time.
        req created_at: String = "createdAt",
        /// ISO 8601 time of the last update.
        req last_updated_at: String = "lastUpdatedAt",
        /// Lifetime from creation in milliseconds; `None` (written as `null`) is unlimited.
        req ttl_ms: Option<u64> = "ttlMs",
        /// Suggested polling interval in milliseconds.
        opt poll_interval_ms: u64 = "pollIntervalMs",
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
            ttl_ms: None,
            poll_interval_ms: None,
            extra: JsonObject::new(),
        }
    }
}

mcp_struct! {
    /// The answer to a request the server runs as a task: the task's members, with
    /// `resultType: "task"` (always written).
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::tasks::ext::{CreateTaskResult, Task, TaskStatus};
    ///
    /// let r = CreateTaskResult::from(Task::new("t1", TaskStatus::Working, "2026-07-28T10:00:00Z"));
    /// assert_eq!(serde_json::to_value(&r).unwrap()["resultType"], "task");
    /// ```
    pub struct CreateTaskResult {
        @tag "resultType" = "task";
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
        /// Lifetime from creation in milliseconds; `None` (written as `null`) is unlimited.
        req ttl_ms: Option<u64> = "ttlMs",
        /// Suggested polling interval in milliseconds.
        opt poll_interval_ms: u64 = "pollIntervalMs",
        /// Result metadata.
        opt meta: Meta = "_meta",
    }
}

impl From<Task> for CreateTaskResult {
    fn from(t: Task) -> Self {
        Self {
            task_id: t.task_id,
            status: t.status,
            status_message: t.status_message,
            created_at: t.created_at,
            last_updated_at: t.last_updated_at,
            ttl_ms: t.ttl_ms,
            poll_interval_ms: t.poll_interval_ms,
            meta: None,
            extra: t.extra,
        }
    }
}

/// `resultType` is a constant written by the type itself: nothing to adapt.
impl ForRevision for CreateTaskResult {
    fn adapt_to(&mut self, _version: ProtocolVersion) {}
}

mcp_struct! {
    /// Parameters of the extension's `tasks/get`, `tasks/cancel`: the task's id.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::tasks::ext::TaskRequestParams;
    ///
    /// let p = TaskRequestParams::new("t1");
    /// assert_eq!(serde_json::to_string(&p).unwrap(), r#"{"taskId":"t1"}"#);
    /// ```
    #[derive(Default)]
    pub struct TaskRequestParams {
        /// The task.
        req task_id: String = "taskId",
        /// Request metadata (protocol version, client capabilities ...).
        opt meta: Meta = "_meta",
    }
}

impl TaskRequestParams {
    /// Parameters naming `task_id`.
    #[must_use]
    pub fn new(task_id: impl Into<String>) -> Self {
        Self { task_id: task_id.into(), ..Self::default() }
    }
}

mcp_struct! {
    /// The answer to the extension's `tasks/get`, and the parameters of
    /// `notifications/tasks`: the task's members plus the payload of its state.
    ///
    /// `input_requests` is present when the status is `input_required`, `result` when
    /// `completed`, `error` (a JSON-RPC error object) when `failed`.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::tasks::ext::{DetailedTask, TaskStatus};
    ///
    /// let t: DetailedTask = serde_json::from_str(
    ///     r#"{"resultType":"complete","taskId":"t1","status":"completed","createdAt":"a",
    ///         "lastUpdatedAt":"b","ttlMs":null,"result":{"content":[],"isError":false}}"#,
    /// ).unwrap();
    /// assert_eq!(t.status, TaskStatus::Completed);
    /// assert_eq!(t.result.unwrap()["isError"], false);
    /// ```
    pub struct DetailedTask {
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
        /// Lifetime from creation in milliseconds; `None` (written as `null`) is unlimited.
        req ttl_ms: Option<u64> = "ttlMs",
        /// Suggested polling interval in milliseconds.
        opt poll_interval_ms: u64 = "pollIntervalMs",
        /// The outstanding requests to the client (`input_required`).
        opt input_requests: InputRequests = "inputRequests",
        /// The result of the original request (`completed`).
        opt result: JsonObject = "result",
        /// The JSON-RPC error the original request failed with (`failed`).
        opt error: JsonObject = "error",
        /// `"complete"` on a `tasks/get` answer; absent on a notification.
        opt result_type: ResultType = "resultType",
        /// Result or notification metadata.
        opt meta: Meta = "_meta",
    }
}

/// The answer to the extension's `tasks/get`.
pub type GetTaskResult = DetailedTask;

/// The parameters of `notifications/tasks`.
pub type TaskStatusNotificationParams = DetailedTask;

impl From<Task> for DetailedTask {
    fn from(t: Task) -> Self {
        Self {
            task_id: t.task_id,
            status: t.status,
            status_message: t.status_message,
            created_at: t.created_at,
            last_updated_at: t.last_updated_at,
            ttl_ms: t.ttl_ms,
            poll_interval_ms: t.poll_interval_ms,
            input_requests: None,
            result: None,
            error: None,
            result_type: None,
            meta: None,
            extra: t.extra,
        }
    }
}

/// Sets `resultType: "complete"`, which a `tasks/get` answer must carry. (Use the value
/// unadapted as notification parameters.)
impl ForRevision for DetailedTask {
    fn adapt_to(&mut self, version: ProtocolVersion) {
        super::super::adapt_result_type(&mut self.result_type, version);
    }
}

mcp_struct! {
    /// Parameters of `tasks/update`: answers to the task's input requests.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::tasks::ext::UpdateTaskRequestParams;
    /// use talaria_core::schema::mrtr::InputResponse;
    ///
    /// let p: UpdateTaskRequestParams = serde_json::from_str(
    ///     r#"{"taskId":"t1","inputResponses":{"name":{"action":"accept","content":{"input":"Luca"}}}}"#,
    /// ).unwrap();
    /// assert!(matches!(p.input_responses["name"], InputResponse::Elicit(_)));
    /// ```
    pub struct UpdateTaskRequestParams {
        /// The task.
        req task_id: String = "taskId",
        /// Answers, keyed like the task's `inputRequests`.
        req input_responses: InputResponses = "inputResponses",
        /// Request metadata.
        opt meta: Meta = "_meta",
    }
}

/// The answer to `tasks/update`: an empty acknowledgement (`resultType: "complete"`).
pub type UpdateTaskResult = EmptyResult;

/// The answer to the extension's `tasks/cancel`: an empty acknowledgement.
pub type CancelTaskResult = EmptyResult;

const fn info(name: &'static str, kind: MethodKind, sent_by: SentBy) -> MethodInfo {
    MethodInfo {
        name,
        kind,
        sent_by,
        capability: None,
        since: ProtocolVersion::V2026_07_28,
        until: ProtocolVersion::LATEST,
    }
}

request_method! {
    /// `tasks/get` (extension): the state of a task.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::tasks::ext::GetTask;
    /// use talaria_core::schema::RequestMethod;
    /// use talaria_core::version::ProtocolVersion;
    ///
    /// assert!(GetTask::INFO.exists_in(ProtocolVersion::V2026_07_28));
    /// assert!(!GetTask::INFO.exists_in(ProtocolVersion::V2025_11_25));
    /// ```
    GetTask, info = info("tasks/get", MethodKind::Request, SentBy::Client), TaskRequestParams => GetTaskResult
}

request_method! {
    /// `tasks/update` (extension): answers a task's input requests.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::tasks::ext::UpdateTask;
    /// use talaria_core::schema::{RequestMethod, SentBy};
    ///
    /// assert_eq!(UpdateTask::INFO.name, "tasks/update");
    /// assert_eq!(UpdateTask::INFO.sent_by, SentBy::Client);
    /// ```
    UpdateTask, info = info("tasks/update", MethodKind::Request, SentBy::Client), UpdateTaskRequestParams => UpdateTaskResult
}

request_method! {
    /// `tasks/cancel` (extension): asks for a task to be cancelled; cooperative.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::tasks::ext::CancelTask;
    /// use talaria_core::schema::RequestMethod;
    ///
    /// assert_eq!(CancelTask::INFO.name, "tasks/cancel");
    /// assert_eq!(CancelTask::INFO.capability, None);
    /// ```
    CancelTask, info = info("tasks/cancel", MethodKind::Request, SentBy::Client), TaskRequestParams => CancelTaskResult
}

request_method! {
    /// `tools/call` made to start a task: answered with the task ([`TaskStart::Task`]), or
    /// with the tool's result when the server runs the call inline ([`TaskStart::Answered`]).
    /// A client sends it with `CallOptions::keeping_task`, so that the task comes back
    /// instead of being followed.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::tasks::ext::StartTask;
    /// use talaria_core::schema::RequestMethod;
    ///
    /// assert_eq!(StartTask::INFO.name, "tools/call");
    /// ```
    StartTask, "tools/call", super::super::tools::CallToolRequestParams => TaskStart
}

request_method! {
    /// `tasks/get` made to watch a task until it ends: the answer is the tool's result once
    /// the task has completed. A client sends it with `CallOptions::watching_task`, which
    /// follows the task (polls, answers its input requests) and ends the call with its
    /// outcome.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::tasks::ext::WatchTask;
    /// use talaria_core::schema::RequestMethod;
    ///
    /// assert_eq!(WatchTask::INFO.name, "tasks/get");
    /// ```
    WatchTask, info = info("tasks/get", MethodKind::Request, SentBy::Client), TaskRequestParams => super::super::tools::CallToolResult
}

/// What a `tools/call` made to start a task ([`StartTask`]) was answered with.
///
/// # Examples
///
/// ```
/// use talaria_core::schema::tasks::ext::TaskStart;
///
/// let task: TaskStart = serde_json::from_str(
///     r#"{"resultType":"task","taskId":"t1","status":"working","createdAt":"a","lastUpdatedAt":"a","ttlMs":null}"#,
/// ).unwrap();
/// assert!(matches!(task, TaskStart::Task(ref t) if t.task_id == "t1"));
/// let inline: TaskStart = serde_json::from_str(r#"{"content":[{"type":"text","text":"hi"}]}"#).unwrap();
/// assert!(matches!(inline, TaskStart::Answered(_)));
/// ```
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(untagged)]
pub enum TaskStart {
    /// The call runs as this task.
    Task(CreateTaskResult),
    /// The server answered inline: the tool's result.
    Answered(super::super::tools::CallToolResult),
}

impl<'de> serde::Deserialize<'de> for TaskStart {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error as _;
        let value = serde_json::Value::deserialize(deserializer)?;
        if value.get("resultType").and_then(serde_json::Value::as_str) == Some(RESULT_TYPE_TASK) {
            serde_json::from_value(value).map(Self::Task).map_err(D::Error::custom)
        } else {
            serde_json::from_value(value).map(Self::Answered).map_err(D::Error::custom)
        }
    }
}

/// The extension's methods, for gating by revision (see
/// [`method_info_in`](super::super::method_info_in)).
pub static METHODS: [MethodInfo; 4] = [
    info("tasks/get", MethodKind::Request, SentBy::Client),
    info("tasks/update", MethodKind::Request, SentBy::Client),
    info("tasks/cancel", MethodKind::Request, SentBy::Client),
    info("notifications/tasks", MethodKind::Notification, SentBy::Server),
];

notification_method! {
    /// `notifications/tasks` (extension): a task changed state.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::tasks::ext::TaskStatusChanged;
    /// use talaria_core::schema::{NotificationMethod, SentBy};
    ///
    /// assert_eq!(TaskStatusChanged::INFO.name, "notifications/tasks");
    /// assert_eq!(TaskStatusChanged::INFO.sent_by, SentBy::Server);
    /// ```
    TaskStatusChanged, info = info("notifications/tasks", MethodKind::Notification, SentBy::Server), TaskStatusNotificationParams
}
