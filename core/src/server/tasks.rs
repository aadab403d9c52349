//! Tool calls run as tasks (2025-11-25): the tasks one connection created, their state and
//! outcome, and the `tasks/result` requests waiting for them.
//!
//! A `tools/call` carrying `task` is answered at once with a `CreateTaskResult`; the tool runs
//! on (inline tools finish before that answer, long-running ones later), and its outcome is
//! kept here until the client fetches it with `tasks/result` or the task's TTL passes. Tasks
//! belong to the connection (the session) that created them, so their ids need only be unique
//! within it.
//!
//! The table reads no clock: the endpoint passes the monotonic `now` of each step, and wall
//! times (`createdAt`, `lastUpdatedAt`) come from the [`WallClock`] the adapter provides.

use crate::alloc_prelude::*;
use crate::time::{Duration, Instant, SystemTime};
use alloc::collections::BTreeMap;

use serde_json::value::RawValue;

use super::cancel::CancelFlag;
use crate::jsonrpc::ErrorObject;
use crate::schema::tasks::{Task, TaskStatus};
use crate::session::ReplyToken;

/// The wall clock the task timestamps are read from (the adapter's, e.g. `SystemTime::now`).
pub type WallClock = alloc::sync::Arc<dyn Fn() -> SystemTime + Send + Sync>;

/// How long a task is kept when the client asks for no TTL, in milliseconds (1 hour).
pub const DEFAULT_TASK_TTL_MS: u64 = 60 * 60 * 1000;

/// The longest TTL granted, in milliseconds (1 day); a longer request is cut to it.
pub const MAX_TASK_TTL_MS: u64 = 24 * 60 * 60 * 1000;

/// The most tasks one connection keeps; past it, creating one fails (-32603).
pub const MAX_TASKS: usize = 1024;

/// The polling interval suggested to clients, in milliseconds.
pub const POLL_INTERVAL_MS: u64 = 500;

/// The outcome of the request a task runs: the result, or the JSON-RPC error.
pub(super) type TaskOutcome = Result<Box<RawValue>, ErrorObject>;

/// One task.
struct Record {
    task: Task,
    /// When its TTL runs out.
    expires: Instant,
    /// Set when the task is cancelled, for the running tool to see.
    cancel: CancelFlag,
    outcome: Option<TaskOutcome>,
    /// `tasks/result` requests waiting for the outcome.
    waiters: Vec<ReplyToken>,
}

/// What became of a task that ended: the task as it is now, and who waits for its outcome.
pub(super) struct Ended {
    pub(super) task: Task,
    pub(super) outcome: TaskOutcome,
    pub(super) waiters: Vec<ReplyToken>,
}

/// The tasks of one connection.
pub(super) struct TaskTable {
    records: BTreeMap<String, Record>,
    next: u64,
    wall: Option<WallClock>,
}

impl core::fmt::Debug for TaskTable {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("TaskTable").field("tasks", &self.records.len()).finish_non_exhaustive()
    }
}

impl TaskTable {
    pub(super) const fn new() -> Self {
        Self { records: BTreeMap::new(), next: 0, wall: None }
    }

    pub(super) fn set_wall_clock(&mut self, wall: WallClock) {
        self.wall = Some(wall);
    }

    /// The wall time now, as ISO 8601 (the Unix epoch when the adapter gave no clock).
    fn stamp(&self) -> String {
        iso8601(self.wall.as_ref().map_or(SystemTime::UNIX_EPOCH, |wall| wall()))
    }

    /// Forgets the tasks whose TTL ran out; the `tasks/result` requests that were waiting for
    /// them, with the task's id, to be answered (the outcome is gone).
    pub(super) fn expire(&mut self, now: Instant) -> Vec<(String, ReplyToken)> {
        let mut orphans = Vec::new();
        self.records.retain(|id, record| {
            let keep = record.expires > now;
            if !keep {
                record.cancel.cancel();
                orphans.extend(record.waiters.drain(..).map(|waiter| (id.clone(), waiter)));
            }
            keep
        });
        orphans
    }

    /// When the first task that a `tasks/result` waits for expires (its waiters are then
    /// answered), if any.
    pub(super) fn next_awaited_expiry(&self) -> Option<Instant> {
        self.records.values().filter(|record| !record.waiters.is_empty()).map(|record| record.expires).min()
    }

    /// A new working task kept for `ttl_ms` (the default if `None`, at most the maximum);
    /// `None` when the connection holds too many.
    pub(super) fn create(&mut self, now: Instant, ttl_ms: Option<u64>, cancel: CancelFlag) -> Option<Task> {
        if self.records.len() >= MAX_TASKS {
            return None;
        }
        self.next += 1;
        let ttl = ttl_ms.unwrap_or(DEFAULT_TASK_TTL_MS).min(MAX_TASK_TTL_MS);
        let mut task = Task::new(format!("task-{}", self.next), TaskStatus::Working, self.stamp());
        task.ttl = Some(ttl);
        task.poll_interval = Some(POLL_INTERVAL_MS);
        let expires = now + Duration::from_millis(ttl);
        let record = Record { task: task.clone(), expires, cancel, outcome: None, waiters: Vec::new() };
        self.records.insert(task.task_id.clone(), record);
        Some(task)
    }

    /// The task `id`, if it is known (call [`TaskTable::expire`] first).
    pub(super) fn get(&self, id: &str) -> Option<Task> {
        self.records.get(id).map(|record| record.task.clone())
    }

    /// Every task, oldest first.
    pub(super) fn list(&self) -> Vec<Task> {
        let mut tasks: Vec<Task> = self.records.values().map(|record| record.task.clone()).collect();
        tasks.sort_by_key(|task| task.task_id.trim_start_matches("task-").parse::<u64>().unwrap_or(u64::MAX));
        tasks
    }

    /// The task's outcome if it ended; otherwise `reply` waits for it. `Err(reply)` for an
    /// unknown task.
    pub(super) fn result_or_wait(
        &mut self,
        id: &str,
        reply: ReplyToken,
    ) -> Result<Option<(ReplyToken, TaskOutcome)>, ReplyToken> {
        let Some(record) = self.records.get_mut(id) else { return Err(reply) };
        match &record.outcome {
            Some(outcome) => Ok(Some((reply, outcome.clone()))),
            None => {
                record.waiters.push(reply);
                Ok(None)
            }
        }
    }

    /// The task `id` ended with `outcome`: completed, or failed for an error or an `isError`
    /// result. A task that is already over (cancelled) keeps its state.
    pub(super) fn finish(&mut self, id: &str, outcome: TaskOutcome, failed: bool) -> Option<Ended> {
        let stamp = self.stamp();
        let record = self.records.get_mut(id)?;
        if record.task.status.is_terminal() {
            return None;
        }
        record.task.status = if failed || outcome.is_err() { TaskStatus::Failed } else { TaskStatus::Completed };
        record.task.last_updated_at = stamp;
        record.outcome = Some(outcome.clone());
        Some(Ended { task: record.task.clone(), outcome, waiters: core::mem::take(&mut record.waiters) })
    }

    /// Cancels the task `id`: its tool is told, its waiters get `outcome`.
    ///
    /// # Errors
    ///
    /// -32602 for an unknown task or one that already ended.
    pub(super) fn cancel(&mut self, id: &str) -> Result<Ended, ErrorObject> {
        let stamp = self.stamp();
        let Some(record) = self.records.get_mut(id) else { return Err(unknown_task(id)) };
        if record.task.status.is_terminal() {
            return Err(ErrorObject::invalid_params(format!(
                "task {id} is already {}",
                serde_json::to_value(record.task.status).unwrap_or_default().as_str().unwrap_or("over")
            )));
        }
        record.cancel.cancel();
        record.task.status = TaskStatus::Cancelled;
        record.task.status_message = Some("cancelled by the client".into());
        record.task.last_updated_at = stamp;
        let outcome: TaskOutcome = Err(ErrorObject::server_error("Task cancelled"));
        record.outcome = Some(outcome.clone());
        Ok(Ended { task: record.task.clone(), outcome, waiters: core::mem::take(&mut record.waiters) })
    }

    /// Moves a running task to `status` (`input_required` while its tool waits on the client,
    /// back to `working` after); the task as it is now if that changed it. An ended task keeps
    /// its state.
    pub(super) fn set_status(&mut self, id: &str, status: TaskStatus) -> Option<Task> {
        let stamp = self.stamp();
        let record = self.records.get_mut(id)?;
        if record.task.status.is_terminal() || record.task.status == status {
            return None;
        }
        record.task.status = status;
        record.task.last_updated_at = stamp;
        Some(record.task.clone())
    }

    /// Tells every running task's tool to stop (the connection closed).
    pub(super) fn cancel_all(&mut self) {
        for record in self.records.values().filter(|record| !record.task.status.is_terminal()) {
            record.cancel.cancel();
        }
    }
}

/// The -32602 error for a task id that is unknown (or expired).
pub(super) fn unknown_task(id: &str) -> ErrorObject {
    ErrorObject::invalid_params(format!("Unknown task: {id}"))
}

/// `time` as ISO 8601 in UTC, to the millisecond (`2025-11-25T10:30:00.000Z`).
///
/// # Examples
///
/// ```
/// use std::time::{Duration, SystemTime};
/// use talaria_core::server::iso8601;
///
/// let t = SystemTime::UNIX_EPOCH + Duration::from_millis(1_764_066_600_250);
/// assert_eq!(iso8601(t), "2025-11-25T10:30:00.250Z");
/// ```
#[must_use]
pub fn iso8601(time: SystemTime) -> String {
    let since = time.duration_since(SystemTime::UNIX_EPOCH).unwrap_or_default();
    let secs = since.as_secs();
    let (days, rest) = (secs / 86_400, secs % 86_400);
    let (year, month, day) = civil_from_days(days);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60,
        since.subsec_millis()
    )
}

/// The (year, month, day) of the day `days` after 1970-01-01, in the proleptic Gregorian
/// calendar (the era arithmetic of H. Hinnant's `civil_from_days`).
const fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + if month <= 2 { 1 } else { 0 };
    (year, month, day)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn table() -> TaskTable {
        let mut table = TaskTable::new();
        table.set_wall_clock(alloc::sync::Arc::new(|| SystemTime::UNIX_EPOCH + Duration::from_secs(86_400 * 365)));
        table
    }

    #[test]
    fn dates_cross_leap_years_and_centuries() {
        let at = |secs: u64| iso8601(SystemTime::UNIX_EPOCH + Duration::from_secs(secs));
        assert_eq!(at(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(at(951_782_400), "2000-02-29T00:00:00.000Z");
        assert_eq!(at(4_107_542_399), "2100-02-28T23:59:59.000Z");
        assert_eq!(at(4_107_542_400), "2100-03-01T00:00:00.000Z");
    }

    #[test]
    fn a_task_ends_once_and_its_waiters_are_handed_back() {
        let now = crate::test_clock::t0();
        let mut tasks = table();
        let task = tasks.create(now, Some(10_000), CancelFlag::default()).unwrap();
        assert_eq!(
            (task.status, task.ttl, task.created_at.as_str()),
            (TaskStatus::Working, Some(10_000), "1971-01-01T00:00:00.000Z")
        );
        let waiting = ReplyToken::detached(crate::jsonrpc::RequestId::Number(9));
        assert!(matches!(tasks.result_or_wait(&task.task_id, waiting), Ok(None)));
        let ended = tasks.finish(&task.task_id, Ok(RawValue::from_string("{}".into()).unwrap()), false).unwrap();
        assert_eq!((ended.task.status, ended.waiters.len()), (TaskStatus::Completed, 1));
        assert!(tasks.finish(&task.task_id, Ok(RawValue::from_string("{}".into()).unwrap()), true).is_none(), "once");
        assert!(tasks.cancel(&task.task_id).is_err(), "a task that ended cannot be cancelled");
    }

    #[test]
    fn cancelling_tells_the_tool_and_expiry_forgets() {
        let now = crate::test_clock::t0();
        let mut tasks = table();
        let flag = CancelFlag::default();
        let task = tasks.create(now, Some(1_000), flag.clone()).unwrap();
        let ended = tasks.cancel(&task.task_id).unwrap();
        assert!(flag.is_cancelled());
        assert_eq!(ended.task.status, TaskStatus::Cancelled);
        assert!(tasks.finish(&task.task_id, Ok(RawValue::from_string("{}".into()).unwrap()), false).is_none());
        assert!(tasks.expire(now + Duration::from_millis(999)).is_empty());
        assert!(tasks.get(&task.task_id).is_some());
        tasks.expire(now + Duration::from_millis(1_000));
        assert!(tasks.get(&task.task_id).is_none(), "its TTL ran out");
        assert!(tasks.cancel("task-404").is_err());
    }

    #[test]
    fn a_task_that_expires_while_awaited_hands_its_waiters_back() {
        let now = crate::test_clock::t0();
        let mut tasks = table();
        let flag = CancelFlag::default();
        let task = tasks.create(now, Some(50), flag.clone()).unwrap();
        let waiting = ReplyToken::detached(crate::jsonrpc::RequestId::Number(3));
        assert!(matches!(tasks.result_or_wait(&task.task_id, waiting), Ok(None)));
        assert_eq!(tasks.next_awaited_expiry(), Some(now + Duration::from_millis(50)), "a deadline to keep");
        let orphans = tasks.expire(now + Duration::from_millis(50));
        assert_eq!(orphans.len(), 1, "the waiter is answered, not dropped");
        assert_eq!(orphans[0].0, task.task_id);
        assert!(flag.is_cancelled(), "and the tool told to stop");
    }

    #[test]
    fn a_task_waits_for_input_and_works_again_but_an_ended_one_stays_ended() {
        let now = crate::test_clock::t0();
        let mut tasks = table();
        let task = tasks.create(now, None, CancelFlag::default()).unwrap();
        let waiting = tasks.set_status(&task.task_id, TaskStatus::InputRequired).unwrap();
        assert_eq!(waiting.status, TaskStatus::InputRequired);
        assert!(tasks.set_status(&task.task_id, TaskStatus::InputRequired).is_none(), "no change, nothing to tell");
        assert_eq!(tasks.set_status(&task.task_id, TaskStatus::Working).unwrap().status, TaskStatus::Working);
        tasks.cancel(&task.task_id).unwrap();
        assert!(tasks.set_status(&task.task_id, TaskStatus::Working).is_none());
        assert_eq!(tasks.get(&task.task_id).unwrap().status, TaskStatus::Cancelled);
    }

    #[test]
    fn a_connection_holds_a_bounded_number_of_tasks() {
        let now = crate::test_clock::t0();
        let mut tasks = table();
        for _ in 0..MAX_TASKS {
            assert!(tasks.create(now, None, CancelFlag::default()).is_some());
        }
        assert!(tasks.create(now, None, CancelFlag::default()).is_none());
        assert_eq!(tasks.list().len(), MAX_TASKS);
        assert_eq!(tasks.list()[0].task_id, "task-1", "oldest first");
    }
}
