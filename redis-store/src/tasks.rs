//! [`RedisTaskStore`]: the tasks of the 2026-07-28 tasks extension in Redis.
//!
//! Keys (after the prefix): `task:{id}`, the task as JSON, expiring when the task does;
//! `tasks`, a sorted set of the ids scored by their expiry (milliseconds since the Unix
//! epoch; `+inf` for none), which bounds how many are kept.

use std::sync::{Mutex, PoisonError};

use talaria_core::server::{StoredTask, TaskStore, TaskStoreError};

use crate::link::{Link, RedisError, RedisOptions};

/// KEYS: task, index. ARGV: json, id, expiry score, expiry (ms, 0: none), now (ms), max.
const INSERT: &str = "
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ARGV[5])
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[6]) then return 0 end
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[2])
if ARGV[4] ~= '0' then
  redis.call('SET', KEYS[1], ARGV[1], 'PXAT', ARGV[4])
else
  redis.call('SET', KEYS[1], ARGV[1])
end
return 1";

/// Tasks in Redis, shared by every server process that uses the same Redis and prefix: a
/// task created by one process is polled, updated and cancelled through any other.
///
/// # Examples
///
/// ```no_run
/// use std::sync::Arc;
/// use talaria_core::server::Router;
/// use talaria_redis::{RedisOptions, RedisTaskStore};
///
/// let store = RedisTaskStore::connect("redis://127.0.0.1:6379", RedisOptions::default())?;
/// let router = Router::<()>::builder().task_store(Arc::new(store)).build();
/// # let _ = router;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct RedisTaskStore {
    link: Mutex<Link>,
    prefix: String,
    max: usize,
    insert: redis::Script,
}

impl RedisTaskStore {
    /// A store in the Redis at `url`.
    ///
    /// # Errors
    ///
    /// [`RedisError`] if the URL is wrong or Redis cannot be reached.
    pub fn connect(url: &str, options: RedisOptions) -> Result<Self, RedisError> {
        let (prefix, max) = (options.prefix.clone(), options.max_tasks);
        Ok(Self { link: Mutex::new(Link::open(url, options)?), prefix, max, insert: redis::Script::new(INSERT) })
    }

    fn run<T>(&self, commands: impl FnOnce(&mut redis::Connection) -> redis::RedisResult<T>) -> Result<T, RedisError> {
        self.link.lock().unwrap_or_else(PoisonError::into_inner).run(commands)
    }

    fn key(&self, id: &str) -> String {
        format!("{}task:{id}", self.prefix)
    }

    fn index(&self) -> String {
        format!("{}tasks", self.prefix)
    }
}

impl TaskStore for RedisTaskStore {
    fn insert(&self, task: StoredTask, now_ms: u64) -> Result<(), TaskStoreError> {
        let json = serde_json::to_string(&task).map_err(|e| TaskStoreError::Unavailable(e.to_string()))?;
        let id = task.task.task_id.clone();
        let score = task.expires_at_ms.map_or_else(|| "+inf".to_owned(), |at| at.to_string());
        let expiry = task.expires_at_ms.unwrap_or(0);
        let mut call = self.insert.key(self.key(&id));
        call.key(self.index()).arg(json).arg(&id).arg(score).arg(expiry).arg(now_ms).arg(self.max);
        match self.run(|c| call.invoke::<i64>(c)) {
            Ok(1) => Ok(()),
            Ok(_) => Err(TaskStoreError::Full(self.max)),
            Err(e) => Err(TaskStoreError::Unavailable(e.to_string())),
        }
    }

    fn get(&self, id: &str) -> Option<StoredTask> {
        let key = self.key(id);
        let json: Option<String> = self.run(|c| redis::cmd("GET").arg(&key).query(c)).ok()?;
        serde_json::from_str(&json?).ok()
    }

    fn update(&self, task: StoredTask) {
        let Ok(json) = serde_json::to_string(&task) else { return };
        let key = self.key(&task.task.task_id);
        // Only a task still kept, keeping its expiry. A failure leaves the task as it was: the
        // next change writes it again, and a poll sees the last state written.
        let _ = self.run(|c| redis::cmd("SET").arg(&key).arg(json).arg("XX").arg("KEEPTTL").query::<Option<String>>(c));
    }

    fn remove(&self, id: &str) {
        let (key, index) = (self.key(id), self.index());
        let _ = self.run(|c| redis::pipe().cmd("DEL").arg(&key).cmd("ZREM").arg(&index).arg(id).query::<(i64, i64)>(c));
    }
}
