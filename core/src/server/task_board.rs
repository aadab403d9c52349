//! Tool calls run as tasks of the 2026-07-28 tasks extension (`io.modelcontextprotocol/tasks`):
//! the server-wide board of tasks, the store that keeps their state, and the link a running
//! task's tool talks through.
//!
//! Unlike 2025-11-25 tasks, which belong to one connection, these outlive the request that
//! created them: in the stateless era every request may come over its own connection, so the
//! board is shared by every connection of a server (it lives in the [`Router`](super::Router)).
//! A task's state (a [`DetailedTask`]) sits in a [`TaskStore`]; what only this process can hold
//! (the running tool's cancel flag, the questions it waits on) sits beside it.
//!
//! A tool asking the client something while it runs ([`Job::ask`](super::Job::ask)) turns the
//! task `input_required`: the question shows in `tasks/get` under a fresh key, and the job
//! waits until `tasks/update` brings the answer (or the task is cancelled or expires).
//!
//! The board reads no clock of its own: wall time comes from the [`WallClock`] the adapter
//! sets, and task ids from the entropy it sets (sequential ids without it, fit only for tests).

use crate::alloc_prelude::*;
use crate::time::{Duration, SystemTime};
use alloc::collections::BTreeMap;
use alloc::sync::Arc;
use core::sync::atomic::{AtomicUsize, Ordering};

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::Value;

use super::cancel::CancelFlag;
use super::deferred::Deferred;
use super::error::ToolError;
use super::link::{not_askable, Link};
use super::tasks::{iso8601, WallClock};
use crate::jsonrpc::ErrorObject;
use crate::schema::mrtr::InputResponses;
use crate::schema::tasks::ext::{CreateTaskResult, DetailedTask, Task, EXTENSION_ID};
use crate::schema::tasks::TaskStatus;
use crate::schema::tools::CallToolResult;
use crate::schema::{ForRevision, LoggingLevel};
use crate::session::{CallError, LocalError, NotSentReason};
use crate::sync::{one_value, Mutex, MutexGuard, ValueReceiver, ValueSender};
use crate::version::ProtocolVersion;

/// How long a task is kept, in milliseconds from its creation (1 hour).
pub const EXT_TASK_TTL_MS: u64 = 60 * 60 * 1000;

/// The polling interval suggested to clients, in milliseconds.
pub const EXT_POLL_INTERVAL_MS: u64 = 500;

/// The most tasks a [`MemoryTaskStore`] keeps by default.
pub const MEMORY_STORE_CAPACITY: usize = 4096;

/// One task as stored: its state, whose it is, and when it expires.
///
/// # Examples
///
/// ```
/// use talaria_core::schema::tasks::ext::{Task, TaskStatus};
/// use talaria_core::server::StoredTask;
///
/// let stored = StoredTask {
///     task: Task::new("t1", TaskStatus::Working, "2026-07-28T10:00:00Z").into(),
///     owner: None,
///     expires_at_ms: Some(1_785_232_800_000),
/// };
/// let json = serde_json::to_value(&stored).unwrap();
/// assert_eq!(serde_json::from_value::<StoredTask>(json).unwrap(), stored);
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredTask {
    /// What `tasks/get` answers.
    pub task: DetailedTask,
    /// The identity (from the transport's authorization) that created it; only it may see it.
    pub owner: Option<String>,
    /// When it expires, in milliseconds since the Unix epoch; `None` never.
    pub expires_at_ms: Option<u64>,
}

impl StoredTask {
    fn expired(&self, now_ms: u64) -> bool {
        self.expires_at_ms.is_some_and(|at| at <= now_ms)
    }
}

/// Why a [`TaskStore`] refused a task.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TaskStoreError {
    /// The store holds as many tasks as it may.
    #[error("the task store is full ({0} tasks)")]
    Full(usize),
    /// The store could not be reached or written.
    #[error("the task store failed: {0}")]
    Unavailable(String),
}

/// Where the tasks of the tasks extension are kept: in memory ([`MemoryTaskStore`], the
/// default) or in a store shared by several server processes.
///
/// Every call is short; a store backed by a network service should bound its own waits.
pub trait TaskStore: Send + Sync {
    /// Adds a new task, first forgetting the tasks expired at `now_ms`.
    ///
    /// # Errors
    ///
    /// [`TaskStoreError`] when the task cannot be kept.
    fn insert(&self, task: StoredTask, now_ms: u64) -> Result<(), TaskStoreError>;
    /// The task `id`, if it is kept.
    fn get(&self, id: &str) -> Option<StoredTask>;
    /// Replaces the task of the same id, if it is kept.
    fn update(&self, task: StoredTask);
    /// Forgets the task `id`.
    fn remove(&self, id: &str);
}

/// A [`TaskStore`] in this process's memory, holding a bounded number of tasks.
///
/// # Examples
///
/// ```
/// use talaria_core::schema::tasks::ext::{Task, TaskStatus};
/// use talaria_core::server::{MemoryTaskStore, StoredTask, TaskStore};
///
/// let store = MemoryTaskStore::with_capacity(1);
/// let task = |id: &str, expires| StoredTask {
///     task: Task::new(id, TaskStatus::Working, "2026-07-28T10:00:00Z").into(),
///     owner: None,
///     expires_at_ms: Some(expires),
/// };
/// store.insert(task("a", 100), 0).unwrap();
/// assert!(store.insert(task("b", 100), 50).is_err(), "full");
/// store.insert(task("b", 200), 100).unwrap(); // "a" expired at 100
/// assert!(store.get("a").is_none());
/// ```
#[derive(Debug)]
pub struct MemoryTaskStore {
    tasks: Mutex<BTreeMap<String, StoredTask>>,
    capacity: usize,
}

impl Default for MemoryTaskStore {
    fn default() -> Self {
        Self::with_capacity(MEMORY_STORE_CAPACITY)
    }
}

impl MemoryTaskStore {
    /// A store keeping at most `capacity` tasks.
    #[must_use]
    pub fn with_capacity(capacity: usize) -> Self {
        Self { tasks: Mutex::new(BTreeMap::new()), capacity }
    }

    fn tasks(&self) -> MutexGuard<'_, BTreeMap<String, StoredTask>> {
        self.tasks.lock()
    }
}

impl TaskStore for MemoryTaskStore {
    fn insert(&self, task: StoredTask, now_ms: u64) -> Result<(), TaskStoreError> {
        let mut tasks = self.tasks();
        if tasks.len() >= self.capacity {
            tasks.retain(|_, t| !t.expired(now_ms));
        }
        if tasks.len() >= self.capacity {
            return Err(TaskStoreError::Full(self.capacity));
        }
        tasks.insert(task.task.task_id.clone(), task);
        Ok(())
    }

    fn get(&self, id: &str) -> Option<StoredTask> {
        self.tasks().get(id).cloned()
    }

    fn update(&self, task: StoredTask) {
        if let Some(slot) = self.tasks().get_mut(&task.task.task_id) {
            *slot = task;
        }
    }

    fn remove(&self, id: &str) {
        self.tasks().remove(id);
    }
}

/// What the board knows of a task running in this process, beside its stored state.
struct Running {
    cancel: CancelFlag,
    /// The questions the job waits on, by input request key.
    asks: BTreeMap<String, ValueSender<Value>>,
}

/// Told each task state that changed: the task as `tasks/get` would now answer.
type Watcher = Box<dyn Fn(&DetailedTask) + Send + Sync>;

/// Fills its buffer with random bytes for task ids; `false` when it cannot.
type Entropy = Box<dyn FnMut(&mut [u8]) -> bool + Send>;

/// The server-wide board of extension tasks. Built by the router; adapters give it a wall
/// clock ([`TaskBoard::set_wall_clock`]), entropy for ids ([`TaskBoard::set_entropy`]) and
/// a watcher to deliver `notifications/tasks` ([`TaskBoard::watch`]).
pub struct TaskBoard {
    store: Arc<dyn TaskStore>,
    /// Held across each read-modify-write of a task, so that two changes (an answer that lets
    /// the tool finish, and the update that delivered it) cannot overwrite one another.
    edit: Mutex<()>,
    running: Mutex<BTreeMap<String, Running>>,
    wall: Mutex<Option<WallClock>>,
    entropy: Mutex<Option<Entropy>>,
    /// Counters (`usize`: targets without 64-bit atomics have them too).
    next_id: AtomicUsize,
    next_key: AtomicUsize,
    watchers: Mutex<Vec<Arc<Watcher>>>,
}

impl core::fmt::Debug for TaskBoard {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("TaskBoard").field("running", &self.lock_running().len()).finish_non_exhaustive()
    }
}

impl TaskBoard {
    /// A board keeping task state in `store`.
    #[must_use]
    pub fn new(store: Arc<dyn TaskStore>) -> Self {
        Self {
            store,
            edit: Mutex::new(()),
            running: Mutex::new(BTreeMap::new()),
            wall: Mutex::new(None),
            entropy: Mutex::new(None),
            next_id: AtomicUsize::new(0),
            next_key: AtomicUsize::new(0),
            watchers: Mutex::new(Vec::new()),
        }
    }

    /// Sets the wall clock task timestamps and expiry are read from.
    pub fn set_wall_clock(&self, wall: WallClock) {
        *self.wall.lock() = Some(wall);
    }

    /// Sets the random source task ids are drawn from (128 bits each); it returns `false`
    /// when it has no randomness to give, and no task is created then. Without it, ids are
    /// sequential and guessable: set it wherever several clients share a server.
    pub fn set_entropy(&self, entropy: impl FnMut(&mut [u8]) -> bool + Send + 'static) {
        *self.entropy.lock() = Some(Box::new(entropy));
    }

    /// Calls `watcher` with every task whose state changes, from whichever thread changed it
    /// (a request's, or a running tool's): deliver `notifications/tasks` from it without
    /// waiting on the thread that called.
    pub fn watch(&self, watcher: impl Fn(&DetailedTask) + Send + Sync + 'static) {
        self.watchers.lock().push(Arc::new(Box::new(watcher)));
    }

    fn lock_edit(&self) -> MutexGuard<'_, ()> {
        self.edit.lock()
    }

    fn lock_running(&self) -> MutexGuard<'_, BTreeMap<String, Running>> {
        self.running.lock()
    }

    fn now(&self) -> SystemTime {
        self.wall.lock().as_ref().map_or(SystemTime::UNIX_EPOCH, |wall| wall())
    }

    fn fresh_id(&self) -> Option<String> {
        let mut entropy = self.entropy.lock();
        let Some(fill) = entropy.as_mut() else {
            return Some(format!("task-{}", self.next_id.fetch_add(1, Ordering::Relaxed) + 1));
        };
        let mut filled = true;
        let id = crate::http::ids::mint_session_id(&mut |buf: &mut [u8]| filled = fill(buf));
        filled.then_some(id)
    }

    fn tell(&self, task: &DetailedTask) {
        let watchers: Vec<Arc<Watcher>> = self.watchers.lock().clone();
        for watcher in watchers {
            watcher(task);
        }
    }

    /// Creates a working task owned by `owner`, durably stored before this returns (so a
    /// `tasks/get` for it resolves), and the handle its tool runs with.
    ///
    /// # Errors
    ///
    /// -32603 when the store refuses it.
    pub(crate) fn create(self: &Arc<Self>, owner: Option<String>) -> Result<(CreateTaskResult, TaskRun), ErrorObject> {
        let now = self.now();
        let id =
            self.fresh_id().ok_or_else(|| ErrorObject::internal("cannot create a task: no randomness for its id"))?;
        let mut task = Task::new(id, TaskStatus::Working, iso8601(now));
        task.ttl_ms = Some(EXT_TASK_TTL_MS);
        task.poll_interval_ms = Some(EXT_POLL_INTERVAL_MS);
        let expires = now + Duration::from_millis(EXT_TASK_TTL_MS);
        let stored = StoredTask { task: task.clone().into(), owner, expires_at_ms: Some(unix_ms(expires)) };
        self.store
            .insert(stored, unix_ms(now))
            .map_err(|e| ErrorObject::internal(format!("cannot create a task: {e}")))?;
        let cancel = CancelFlag::default();
        self.lock_running().insert(task.task_id.clone(), Running { cancel: cancel.clone(), asks: BTreeMap::new() });
        let run = TaskRun { board: Arc::clone(self), id: task.task_id.clone(), cancel };
        Ok((task.into(), run))
    }

    /// Forgets a task whose tool answered before its id was given out.
    pub(crate) fn discard(&self, id: &str) {
        self.lock_running().remove(id);
        self.store.remove(id);
    }

    /// The task `id` as `owner` may see it; an expired task is forgotten here.
    fn lookup(&self, id: &str, owner: Option<&str>) -> Result<StoredTask, ErrorObject> {
        let not_found = || ErrorObject::invalid_params(format!("Failed to retrieve task: Task not found: {id}"));
        let stored = self.store.get(id).filter(|s| s.owner.as_deref() == owner).ok_or_else(not_found)?;
        if stored.expired(unix_ms(self.now())) {
            self.forget(id);
            return Err(ErrorObject::invalid_params(format!("Failed to retrieve task: Task has expired: {id}")));
        }
        Ok(stored)
    }

    /// Forgets the task `id`, telling its tool to stop and its waiting questions that no
    /// answer will come.
    fn forget(&self, id: &str) {
        if let Some(running) = self.lock_running().remove(id) {
            running.cancel.cancel();
        }
        self.store.remove(id);
    }

    /// `tasks/get`: the task as it is now (`resultType` is added when answering).
    ///
    /// # Errors
    ///
    /// -32602 for an unknown or expired task, or another owner's.
    pub fn get(&self, id: &str, owner: Option<&str>) -> Result<DetailedTask, ErrorObject> {
        let _edit = self.lock_edit();
        self.lookup(id, owner).map(|stored| stored.task)
    }

    /// `tasks/update`: hands each answer to the question waiting under its key; answers for
    /// keys not outstanding are ignored. The task goes back to `working` once no question is
    /// left.
    ///
    /// # Errors
    ///
    /// -32602 for an unknown or expired task, or another owner's.
    pub fn update(&self, id: &str, owner: Option<&str>, responses: InputResponses) -> Result<(), ErrorObject> {
        let edit = self.lock_edit();
        let mut stored = self.lookup(id, owner)?;
        let mut deliveries = Vec::new();
        {
            let mut running = self.lock_running();
            let Some(run) = running.get_mut(id) else { return Ok(()) };
            for (key, response) in responses {
                if let Some(waiting) = run.asks.remove(&key) {
                    deliveries.push((waiting, serde_json::to_value(&response).unwrap_or(Value::Null)));
                    if let Some(requests) = stored.task.input_requests.as_mut() {
                        requests.remove(&key);
                    }
                }
            }
        }
        let mut changed = None;
        if !deliveries.is_empty() && stored.task.status == TaskStatus::InputRequired {
            if stored.task.input_requests.as_ref().is_none_or(BTreeMap::is_empty) {
                stored.task.input_requests = None;
                stored.task.status = TaskStatus::Working;
                stored.task.status_message = None;
            }
            changed = Some(self.store(stored));
        }
        drop(edit);
        // The job may finish the moment it has its answer: the task's state is written first.
        for (waiting, answer) in deliveries {
            let _ = waiting.send(answer);
        }
        if let Some(task) = changed {
            self.tell(&task);
        }
        Ok(())
    }

    /// `tasks/cancel`: the tool is told to stop and the task is `cancelled`, unless it already
    /// ended (then nothing changes: cancellation is cooperative).
    ///
    /// # Errors
    ///
    /// -32602 for an unknown or expired task, or another owner's.
    pub fn cancel(&self, id: &str, owner: Option<&str>) -> Result<(), ErrorObject> {
        let edit = self.lock_edit();
        let mut stored = self.lookup(id, owner)?;
        if stored.task.status.is_terminal() {
            return Ok(());
        }
        if let Some(running) = self.lock_running().remove(id) {
            running.cancel.cancel();
        }
        stored.task.status = TaskStatus::Cancelled;
        stored.task.status_message = Some("cancelled by the client".into());
        stored.task.input_requests = None;
        let task = self.store(stored);
        drop(edit);
        self.tell(&task);
        Ok(())
    }

    /// Ids among `ids` that `owner` may follow (known, not expired, its own).
    pub(crate) fn followable(&self, ids: &[String], owner: Option<&str>) -> Vec<String> {
        ids.iter().filter(|id| self.lookup(id, owner).is_ok()).cloned().collect()
    }

    /// A running task's tool reports how it is doing: its `statusMessage` (no notification).
    fn status_message(&self, id: &str, message: String) {
        let _edit = self.lock_edit();
        let Some(mut stored) = self.store.get(id) else { return };
        if stored.task.status != TaskStatus::Working {
            return;
        }
        stored.task.status_message = Some(message);
        self.store(stored);
    }

    /// The task's tool ended with `outcome`.
    fn finish(&self, id: &str, outcome: Result<CallToolResult, ToolError>) {
        let edit = self.lock_edit();
        self.lock_running().remove(id);
        let Some(mut stored) = self.store.get(id) else { return };
        if stored.task.status.is_terminal() {
            return;
        }
        stored.task.input_requests = None;
        let result = match outcome {
            Ok(result) => Ok(result),
            Err(ToolError::Execution(message)) => Ok(CallToolResult::error(message)),
            Err(ToolError::Protocol(error)) => Err(error),
            Err(ToolError::InputRequired(_)) => {
                Err(ErrorObject::internal("the tool asked for input the way a plain call does, not through the task"))
            }
        };
        match result {
            Ok(mut result) => {
                result.adapt_to(ProtocolVersion::V2026_07_28);
                stored.task.status = TaskStatus::Completed;
                stored.task.result = serde_json::to_value(&result).ok().and_then(|v| match v {
                    Value::Object(map) => Some(map),
                    _ => None,
                });
            }
            Err(error) => {
                stored.task.status = TaskStatus::Failed;
                stored.task.status_message = Some(error.message.clone());
                stored.task.error = serde_json::to_value(&error).ok().and_then(|v| match v {
                    Value::Object(map) => Some(map),
                    _ => None,
                });
            }
        }
        let task = self.store(stored);
        drop(edit);
        self.tell(&task);
    }

    /// The task's tool asks the client `method` with `params`: the question is posted under a
    /// fresh key and the task turns `input_required`. The receiver gets the answer.
    fn ask(&self, id: &str, method: &str, params: &RawValue) -> Result<ValueReceiver<Value>, CallError> {
        let not_running = || CallError::Local(LocalError::NotSent(NotSentReason::TaskNotRunning));
        let edit = self.lock_edit();
        let params: Value = serde_json::from_str(params.get()).map_err(|e| not_askable(method, &e))?;
        let request = super::link::input_request(method, params)?;
        let mut stored = self.store.get(id).ok_or_else(not_running)?;
        if stored.task.status.is_terminal() {
            return Err(CallError::Local(LocalError::Cancelled { reason: Some("the task ended".into()) }));
        }
        let key = format!("input-{}", self.next_key.fetch_add(1, Ordering::Relaxed) + 1);
        let (answer, answered) = one_value();
        {
            let mut running = self.lock_running();
            let run = running.get_mut(id).ok_or_else(not_running)?;
            run.asks.insert(key.clone(), answer);
        }
        stored.task.input_requests.get_or_insert_with(BTreeMap::new).insert(key, request);
        stored.task.status = TaskStatus::InputRequired;
        let task = self.store(stored);
        drop(edit);
        self.tell(&task);
        Ok(answered)
    }

    /// Writes a changed task (stamped now) back; returns it, for the watchers.
    fn store(&self, mut stored: StoredTask) -> DetailedTask {
        stored.task.last_updated_at = iso8601(self.now());
        let task = stored.task.clone();
        self.store.update(stored);
        task
    }
}

/// `time` in milliseconds since the Unix epoch.
fn unix_ms(time: SystemTime) -> u64 {
    u64::try_from(time.duration_since(SystemTime::UNIX_EPOCH).unwrap_or_default().as_millis()).unwrap_or(u64::MAX)
}

/// The `requiredCapabilities` of a -32021 refusal naming the tasks extension.
pub(crate) fn extension_required(why: &str) -> ErrorObject {
    ErrorObject::missing_required_client_capability(
        format!("Missing required client capability: {why}"),
        serde_json::json!({"extensions": {EXTENSION_ID: {}}}),
    )
}

/// One task's tool at work: the link it reports through instead of its connection, which
/// may be gone (the request that created the task has long been answered).
#[derive(Clone)]
pub(crate) struct TaskRun {
    board: Arc<TaskBoard>,
    id: String,
    cancel: CancelFlag,
}

impl core::fmt::Debug for TaskRun {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("TaskRun").field("id", &self.id).finish_non_exhaustive()
    }
}

impl TaskRun {
    /// The task's id.
    pub(crate) fn id(&self) -> &str {
        &self.id
    }

    /// Set when the task is cancelled or forgotten.
    pub(crate) fn cancel_flag(&self) -> &CancelFlag {
        &self.cancel
    }
}

/// Progress notifications and logs are not carried for tasks (the extension says they must
/// not go on a task's stream): progress shows in the task's `statusMessage` instead, which
/// `tasks/get` returns; questions become input requests; the outcome goes to the board.
impl Link for TaskRun {
    fn progress(&self, _deferred: &Deferred, progress: f64, total: Option<f64>, message: Option<String>) {
        let message = message.unwrap_or_else(|| match total {
            Some(total) => format!("{progress}/{total}"),
            None => format!("{progress}"),
        });
        self.board.status_message(&self.id, message);
    }

    fn log(&self, _deferred: &Deferred, _level: LoggingLevel, _data: Value) {}

    fn ask(&self, _deferred: &Deferred, method: &str, params: Box<RawValue>) -> Result<Box<RawValue>, CallError> {
        let answered = self.board.ask(&self.id, method, &params)?;
        let answer = answered
            .recv()
            .ok_or_else(|| CallError::Local(LocalError::Cancelled { reason: Some("the task ended".into()) }))?;
        serde_json::value::to_raw_value(&answer)
            .map_err(|e| CallError::Local(LocalError::MalformedResponse(format!("{method} answer: {e}"))))
    }

    fn complete(&self, _deferred: Deferred, outcome: Result<CallToolResult, ToolError>) {
        self.board.finish(&self.id, outcome);
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::schema::mrtr::InputResponse;
    use core::sync::atomic::AtomicUsize;

    fn board() -> Arc<TaskBoard> {
        let board = Arc::new(TaskBoard::new(Arc::new(MemoryTaskStore::default())));
        let clock = Arc::new(core::sync::atomic::AtomicU64::new(1_785_232_800_000));
        board.set_wall_clock(Arc::new(move || {
            SystemTime::UNIX_EPOCH + Duration::from_millis(clock.fetch_add(1, Ordering::Relaxed))
        }));
        board
    }

    fn deferred() -> Deferred {
        Deferred {
            reply: crate::session::ReplyToken::detached(crate::jsonrpc::RequestId::Number(1)),
            tool: "t".into(),
            cancel: CancelFlag::default(),
        }
    }

    #[test]
    fn a_task_completes_once_and_tells_its_watchers() {
        let board = board();
        let told = Arc::new(AtomicUsize::new(0));
        let seen = Arc::clone(&told);
        board.watch(move |_| {
            seen.fetch_add(1, Ordering::Relaxed);
        });
        let (created, run) = board.create(None).unwrap();
        assert_eq!((created.status, created.ttl_ms), (TaskStatus::Working, Some(EXT_TASK_TTL_MS)));
        assert_eq!(board.get(&created.task_id, None).unwrap().status, TaskStatus::Working, "durable at once");
        run.complete(deferred(), Err(ToolError::Execution("no luck".into())));
        let done = board.get(&created.task_id, None).unwrap();
        assert_eq!(done.status, TaskStatus::Completed, "isError is a completed task, not a failed one");
        assert_eq!(done.result.unwrap()["isError"], true);
        run.complete(deferred(), Ok(CallToolResult::text("late")));
        assert_eq!(told.load(Ordering::Relaxed), 1, "a task ends once");
        assert!(board.cancel(&created.task_id, None).is_ok(), "cancelling an ended task is acknowledged");
        assert_eq!(board.get(&created.task_id, None).unwrap().status, TaskStatus::Completed, "and changes nothing");
    }

    #[test]
    fn a_protocol_error_fails_the_task_with_the_error() {
        let board = board();
        let (created, run) = board.create(None).unwrap();
        run.complete(deferred(), Err(ToolError::Protocol(ErrorObject::internal("rate limited"))));
        let failed = board.get(&created.task_id, None).unwrap();
        assert_eq!(failed.status, TaskStatus::Failed);
        assert_eq!(failed.error.unwrap()["code"], -32603);
    }

    #[test]
    #[allow(clippy::disallowed_methods)] // the thread stands in for the adapter's pool
    fn a_question_waits_for_its_update_and_unknown_keys_are_ignored() {
        let board = board();
        let (created, run) = board.create(None).unwrap();
        let id = created.task_id;
        let asking = std::thread::spawn({
            move || {
                let params = RawValue::from_string(
                    r#"{"message":"Name?","requestedSchema":{"type":"object","properties":{}}}"#.into(),
                )
                .unwrap();
                run.ask(&deferred(), "elicitation/create", params)
            }
        });
        let key = loop {
            let task = board.get(&id, None).unwrap();
            if let Some(requests) = task.input_requests {
                assert_eq!(task.status, TaskStatus::InputRequired);
                break requests.keys().next().unwrap().clone();
            }
            std::thread::yield_now();
        };
        let answer: InputResponse = serde_json::from_str(r#"{"action":"accept","content":{"name":"Luca"}}"#).unwrap();
        board.update(&id, None, [("other".to_owned(), answer.clone())].into()).unwrap();
        assert_eq!(board.get(&id, None).unwrap().status, TaskStatus::InputRequired, "not its key");
        board.update(&id, None, [(key, answer)].into()).unwrap();
        let answered = asking.join().unwrap().unwrap();
        assert!(answered.get().contains("Luca"));
        let task = board.get(&id, None).unwrap();
        assert_eq!((task.status, task.input_requests), (TaskStatus::Working, None));
    }

    #[test]
    #[allow(clippy::disallowed_methods)] // the thread stands in for the adapter's pool
    fn cancelling_releases_a_waiting_question_and_tells_the_tool() {
        let board = board();
        let (created, run) = board.create(None).unwrap();
        let asking = std::thread::spawn({
            let run = run.clone();
            move || run.ask(&deferred(), "roots/list", RawValue::from_string("{}".into()).unwrap())
        });
        while board.get(&created.task_id, None).unwrap().status != TaskStatus::InputRequired {
            std::thread::yield_now();
        }
        board.cancel(&created.task_id, None).unwrap();
        assert!(asking.join().unwrap().is_err(), "the question ends with the task");
        assert!(run.cancel_flag().is_cancelled());
        assert_eq!(board.get(&created.task_id, None).unwrap().status, TaskStatus::Cancelled);
    }

    #[test]
    fn tasks_are_private_to_their_owner_and_expire() {
        let board = board();
        let (created, _run) = board.create(Some("alice".into())).unwrap();
        assert!(board.get(&created.task_id, Some("alice")).is_ok());
        assert_eq!(
            board.get(&created.task_id, Some("bob")).unwrap_err().code,
            crate::jsonrpc::ErrorCode::INVALID_PARAMS
        );
        assert!(board.get(&created.task_id, None).is_err());
        board.set_wall_clock(Arc::new(|| {
            SystemTime::UNIX_EPOCH + Duration::from_millis(1_785_232_800_000 + EXT_TASK_TTL_MS)
        }));
        let expired = board.get(&created.task_id, Some("alice")).unwrap_err();
        assert!(expired.message.contains("expired"), "{}", expired.message);
        assert!(
            board.get(&created.task_id, Some("alice")).unwrap_err().message.contains("not found"),
            "then forgotten"
        );
    }

    #[test]
    fn ids_come_from_the_entropy_when_given() {
        let board = board();
        assert_eq!(board.create(None).unwrap().0.task_id, "task-1");
        board.set_entropy(|buf: &mut [u8]| {
            buf.fill(0xab);
            true
        });
        assert_eq!(board.create(None).unwrap().0.task_id, "ab".repeat(16));
        board.set_entropy(|_: &mut [u8]| false);
        assert!(board.create(None).is_err(), "no randomness, no task");
    }
}
