//! [`RedisSessionStore`]: legacy-era sessions in Redis.
//!
//! Keys (after the prefix): `session:{id}`, a hash of the snapshot (`data`) and the last use
//! in nanoseconds since the Unix epoch (`seen`); `sessions`, a sorted set of the ids scored by
//! that time in milliseconds, for listing the idle ones; `deleted:{id}`, a tombstone kept a
//! day after a delete. Storing and touching are Lua scripts, so that the last-seen time never
//! goes back, whichever process writes, and so that a deleted session is never written back
//! by a process that still held it (session ids are never reused). The refresh every request
//! makes is plain commands, pipelined: it reads the record and moves the index's time only.
//! Each call is one round trip.

use std::time::{Duration, Instant};

use talaria_core::http::event_log::{Refresh, SessionRecord, SessionStore, SessionStoreError};

use crate::clock::{score, WallClock};
use crate::link::{Link, RedisError, RedisOptions};

/// Whether the decimal `a` is later than `b` (both without leading zeros): Lua's numbers are
/// doubles, too coarse for nanoseconds.
const LATER: &str = "local function later(a, b) if #a ~= #b then return #a > #b end return a > b end\n";

/// How long a deleted session's id stays refused.
const TOMBSTONE_MS: u64 = 24 * 60 * 60 * 1000;

/// KEYS: record, index, tombstone. ARGV: data, seen (ns), score (ms), id, ttl (ms, 0: none).
const STORE: &str = "
if redis.call('EXISTS', KEYS[3]) == 1 then return 0 end
local old = redis.call('HGET', KEYS[1], 'seen')
local seen = ARGV[2]
if old and not later(seen, old) then seen = old end
redis.call('HSET', KEYS[1], 'data', ARGV[1], 'seen', seen)
redis.call('ZADD', KEYS[2], 'GT', ARGV[3], ARGV[4])
if ARGV[5] ~= '0' then redis.call('PEXPIRE', KEYS[1], ARGV[5]) end
return 1";

/// KEYS: record, index. ARGV: seen (ns), score (ms), id, ttl (ms, 0: none).
const TOUCH: &str = "
local old = redis.call('HGET', KEYS[1], 'seen')
if not old then return 0 end
if later(ARGV[1], old) then redis.call('HSET', KEYS[1], 'seen', ARGV[1]) end
redis.call('ZADD', KEYS[2], 'GT', ARGV[2], ARGV[3])
if ARGV[4] ~= '0' then redis.call('PEXPIRE', KEYS[1], ARGV[4]) end
return 1";

/// Sessions in Redis, shared by every server process that uses the same Redis and prefix
/// (see the [crate docs](crate)). A deleted session stays deleted: storing it again (a process
/// that held it finishing a request) is ignored for a day, and session ids are never reused.
///
/// # Examples
///
/// ```no_run
/// use std::time::{Duration, Instant};
/// use talaria_core::http::event_log::SessionStore;
/// use talaria_redis::{RedisOptions, RedisSessionStore};
///
/// let options = RedisOptions::default().session_ttl(Duration::from_secs(3600));
/// let mut store = RedisSessionStore::connect("redis://127.0.0.1:6379", options)?;
/// store.store("a1b2", b"snapshot".to_vec(), Instant::now())?;
/// assert!(store.touch("a1b2", Instant::now())?);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct RedisSessionStore {
    link: Link,
    clock: WallClock,
    store: redis::Script,
    touch: redis::Script,
}

impl RedisSessionStore {
    /// A store in the Redis at `url` (`redis://host:port/db`).
    ///
    /// # Errors
    ///
    /// [`RedisError`] if the URL is wrong or Redis cannot be reached.
    pub fn connect(url: &str, options: RedisOptions) -> Result<Self, RedisError> {
        Ok(Self {
            link: Link::open(url, options)?,
            clock: WallClock::now(),
            store: redis::Script::new(&format!("{LATER}{STORE}")),
            touch: redis::Script::new(&format!("{LATER}{TOUCH}")),
        })
    }

    fn record_key(&self, session: &str) -> String {
        format!("{}session:{session}", self.link.options().prefix)
    }

    fn tombstone_key(&self, session: &str) -> String {
        format!("{}deleted:{session}", self.link.options().prefix)
    }

    fn index_key(&self) -> String {
        format!("{}sessions", self.link.options().prefix)
    }

    fn ttl_ms(&self) -> u128 {
        self.link.options().session_ttl.map_or(0, |ttl| ttl.as_millis().max(1))
    }
}

/// A record's `data` and `seen` fields, as read.
type Fields = (Option<Vec<u8>>, Option<String>);

/// The last use of a session: the record's `seen` (nanoseconds, written by store and touch),
/// unless the index's score (moved by refresh, in fractional milliseconds) is later by more
/// than its rounding.
fn later_use(seen: u128, scored: Option<f64>) -> u128 {
    // Scores are milliseconds since the epoch: well within u128, never negative.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let scored = scored.map_or(0, |ms| (ms * 1e6) as u128);
    if scored > seen + 1_000_000 {
        scored
    } else {
        seen
    }
}

fn backend(error: RedisError) -> SessionStoreError {
    SessionStoreError::Backend(Box::new(error))
}

impl SessionStore for RedisSessionStore {
    fn load(&mut self, session: &str) -> Result<Option<SessionRecord>, SessionStoreError> {
        let (key, index) = (self.record_key(session), self.index_key());
        let (fields, scored): (Fields, Option<f64>) = self
            .link
            .run(|c| {
                let mut pipe = redis::pipe();
                pipe.cmd("HMGET").arg(&key).arg("data").arg("seen").cmd("ZSCORE").arg(&index).arg(session);
                pipe.query(c)
            })
            .map_err(backend)?;
        let (Some(data), Some(seen)) = fields else { return Ok(None) };
        let nanos = seen.parse::<u128>().map_err(|e| backend(RedisError::Malformed(format!("{key} seen: {e}"))))?;
        Ok(Some(SessionRecord::new(data, self.clock.instant(later_use(nanos, scored)))))
    }

    fn store(&mut self, session: &str, data: Vec<u8>, now: Instant) -> Result<(), SessionStoreError> {
        let (record, index, ttl) = (self.record_key(session), self.index_key(), self.ttl_ms());
        let nanos = self.clock.nanos(now);
        let mut call = self.store.key(record);
        call.key(index)
            .key(self.tombstone_key(session))
            .arg(data)
            .arg(nanos.to_string())
            .arg(score(nanos))
            .arg(session)
            .arg(ttl.to_string());
        self.link.run(|c| call.invoke::<i64>(c)).map(|_| ()).map_err(backend)
    }

    fn touch(&mut self, session: &str, now: Instant) -> Result<bool, SessionStoreError> {
        let (record, index, ttl) = (self.record_key(session), self.index_key(), self.ttl_ms());
        let nanos = self.clock.nanos(now);
        let mut call = self.touch.key(record);
        call.key(index).arg(nanos.to_string()).arg(score(nanos)).arg(session).arg(ttl.to_string());
        self.link.run(|c| call.invoke::<i64>(c)).map(|found| found == 1).map_err(backend)
    }

    fn delete(&mut self, session: &str) -> Result<bool, SessionStoreError> {
        let (record, index, tombstone) = (self.record_key(session), self.index_key(), self.tombstone_key(session));
        let (deleted, _, _): (i64, i64, String) = self
            .link
            .run(|c| {
                let mut pipe = redis::pipe();
                pipe.cmd("DEL").arg(&record).cmd("ZREM").arg(&index).arg(session);
                pipe.cmd("SET").arg(&tombstone).arg(1).arg("PX").arg(TOMBSTONE_MS).query(c)
            })
            .map_err(backend)?;
        Ok(deleted > 0)
    }

    fn expired(&mut self, now: Instant, idle_timeout: Duration) -> Result<Vec<String>, SessionStoreError> {
        let index = self.index_key();
        // Idle for longer than the timeout: last seen strictly before now minus the timeout.
        let cutoff = self.clock.nanos(now).saturating_sub(idle_timeout.as_nanos());
        let bound = format!("({}", score(cutoff));
        let mut ids: Vec<String> = self
            .link
            .run(|c| redis::cmd("ZRANGEBYSCORE").arg(&index).arg("-inf").arg(&bound).query(c))
            .map_err(backend)?;
        ids.sort();
        Ok(ids)
    }

    /// Plain commands, pipelined (no script: this is the call every request makes): the
    /// record's data, and the index's time moved forward (never creating an entry, so a
    /// deleted session is not brought back). The hash's own `seen` is left as it was;
    /// [`load`](SessionStore::load) takes the later of the two.
    fn refresh(&mut self, session: &str, now: Instant, known: &[u8]) -> Result<Refresh, SessionStoreError> {
        let (record, index, ttl) = (self.record_key(session), self.index_key(), self.ttl_ms());
        let nanos = self.clock.nanos(now);
        let (data,): (Option<Vec<u8>>,) = self
            .link
            .run(|c| {
                let mut pipe = redis::pipe();
                pipe.cmd("HGET").arg(&record).arg("data");
                pipe.cmd("ZADD").arg(&index).arg("XX").arg("GT").arg(score(nanos)).arg(session).ignore();
                if ttl > 0 {
                    pipe.cmd("PEXPIRE").arg(&record).arg(ttl.to_string()).ignore();
                }
                pipe.query(c)
            })
            .map_err(backend)?;
        Ok(match data {
            None => Refresh::Gone,
            Some(data) if data == known => Refresh::Same,
            Some(data) => Refresh::Changed(SessionRecord::new(data, now)),
        })
    }
}
