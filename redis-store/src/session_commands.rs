//! What the sync and the async session store share: the keys, the Lua scripts, the commands of
//! each call and the reading of their replies. A store only runs them on its connection, so
//! [`RedisSessionStore`](crate::RedisSessionStore) and `AsyncRedisSessionStore` with the same
//! prefix see the same records, and processes may mix them.
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

use talaria_core::http::event_log::{Refresh, SessionRecord, SessionStoreError, StoreIf};

use crate::clock::{score, WallClock};
use crate::link::{RedisError, RedisOptions};

/// Whether the decimal `a` is later than `b` (both without leading zeros): Lua's numbers are
/// doubles, too coarse for nanoseconds.
const LATER: &str = "local function later(a, b) if #a ~= #b then return #a > #b end return a > b end\n";

/// How long a deleted session's id stays refused.
const TOMBSTONE_MS: u64 = 24 * 60 * 60 * 1000;

/// The write of `STORE` and `STORE_IF`. KEYS: record, index. ARGV: data, seen (ns), score
/// (ms), id, ttl (ms, 0: none).
const WRITE: &str = "local function write()
local old = redis.call('HGET', KEYS[1], 'seen')
local seen = ARGV[2]
if old and not later(seen, old) then seen = old end
redis.call('HSET', KEYS[1], 'data', ARGV[1], 'seen', seen)
redis.call('ZADD', KEYS[2], 'GT', ARGV[3], ARGV[4])
if ARGV[5] ~= '0' then redis.call('PEXPIRE', KEYS[1], ARGV[5]) end
end
";

/// KEYS: record, index, tombstone. ARGV: as `WRITE`'s. Returns 1, or 0 for a deleted session.
const STORE: &str = "
if redis.call('EXISTS', KEYS[3]) == 1 then return 0 end
write()
return 1";

/// KEYS: record, index, tombstone. ARGV: as `WRITE`'s, then the expected data. Returns {1, '',
/// ''} once written; {2, data, seen} for another record, unwritten; {0, '', ''} for no record.
const STORE_IF: &str = "
if redis.call('EXISTS', KEYS[3]) == 1 then return {0, '', ''} end
local found = redis.call('HMGET', KEYS[1], 'data', 'seen')
if not found[1] then return {0, '', ''} end
if found[1] ~= ARGV[6] then return {2, found[1], found[2] or '0'} end
write()
return {1, '', ''}";

/// KEYS: record, index, tombstone. ARGV: as `WRITE`'s. Returns as `STORE_IF` does: written
/// only where there is no record (a session's first write, which may land late).
const STORE_NEW: &str = "
if redis.call('EXISTS', KEYS[3]) == 1 then return {0, '', ''} end
local found = redis.call('HMGET', KEYS[1], 'data', 'seen')
if found[1] then return {2, found[1], found[2] or '0'} end
write()
return {1, '', ''}";

/// KEYS: record, index. ARGV: seen (ns), score (ms), id, ttl (ms, 0: none).
const TOUCH: &str = "
local old = redis.call('HGET', KEYS[1], 'seen')
if not old then return 0 end
if later(ARGV[1], old) then redis.call('HSET', KEYS[1], 'seen', ARGV[1]) end
redis.call('ZADD', KEYS[2], 'GT', ARGV[2], ARGV[3])
if ARGV[4] ~= '0' then redis.call('PEXPIRE', KEYS[1], ARGV[4]) end
return 1";

/// The reply to [`SessionCommands::load`]: the record's `data` and `seen` fields, and the
/// index's score.
pub(crate) type LoadReply = ((Option<Vec<u8>>, Option<String>), Option<f64>);

/// The reply to [`SessionCommands::delete`]: how many records were deleted, how many index
/// entries, and the tombstone's `OK`.
pub(crate) type DeleteReply = (i64, i64, String);

/// The reply to [`SessionCommands::store_if`]: 1 (stored), 2 (another record: its `data` and
/// `seen`) or 0 (none).
pub(crate) type StoreIfReply = (i64, Vec<u8>, String);

/// The reply to [`SessionCommands::refresh`]: the record's `data`.
pub(crate) type RefreshReply = (Option<Vec<u8>>,);

/// The commands of a session store, for one prefix and clock: each call's request, and the
/// reading of its reply (the `*_reply` methods, given the reply as the request's type).
#[derive(Debug)]
pub(crate) struct SessionCommands {
    prefix: String,
    ttl_ms: u128,
    clock: WallClock,
    store: redis::Script,
    store_if: redis::Script,
    store_new: redis::Script,
    touch: redis::Script,
}

impl SessionCommands {
    /// The commands for `options`' prefix and session TTL, with a clock anchored now.
    pub(crate) fn new(options: &RedisOptions) -> Self {
        Self {
            prefix: options.prefix.clone(),
            ttl_ms: options.session_ttl.map_or(0, |ttl| ttl.as_millis().max(1)),
            clock: WallClock::now(),
            store: redis::Script::new(&format!("{LATER}{WRITE}{STORE}")),
            store_if: redis::Script::new(&format!("{LATER}{WRITE}{STORE_IF}")),
            store_new: redis::Script::new(&format!("{LATER}{WRITE}{STORE_NEW}")),
            touch: redis::Script::new(&format!("{LATER}{TOUCH}")),
        }
    }

    fn record_key(&self, session: &str) -> String {
        format!("{}session:{session}", self.prefix)
    }

    fn tombstone_key(&self, session: &str) -> String {
        format!("{}deleted:{session}", self.prefix)
    }

    fn index_key(&self) -> String {
        format!("{}sessions", self.prefix)
    }

    /// Reads the record and the index's time of `session` ([`LoadReply`]).
    pub(crate) fn load(&self, session: &str) -> redis::Pipeline {
        let mut pipe = redis::pipe();
        pipe.cmd("HMGET").arg(self.record_key(session)).arg("data").arg("seen");
        pipe.cmd("ZSCORE").arg(self.index_key()).arg(session);
        pipe
    }

    /// The record [`load`](Self::load) read.
    pub(crate) fn load_reply(
        &self,
        session: &str,
        reply: LoadReply,
    ) -> Result<Option<SessionRecord>, SessionStoreError> {
        let ((Some(data), Some(seen)), scored) = reply else { return Ok(None) };
        let nanos = seen
            .parse::<u128>()
            .map_err(|e| backend(RedisError::Malformed(format!("{} seen: {e}", self.record_key(session)))))?;
        Ok(Some(SessionRecord::new(data, self.clock.instant(later_use(nanos, scored)))))
    }

    /// Stores `data` as `session`'s record, seen at `now`, unless the session was deleted (an
    /// integer reply, ignored).
    pub(crate) fn store(&self, session: &str, data: Vec<u8>, now: Instant) -> redis::ScriptInvocation<'_> {
        self.write(&self.store, session, data, now)
    }

    /// A call of `script` with `WRITE`'s keys and arguments.
    fn write<'a>(
        &self,
        script: &'a redis::Script,
        session: &str,
        data: Vec<u8>,
        now: Instant,
    ) -> redis::ScriptInvocation<'a> {
        let nanos = self.clock.nanos(now);
        let mut call = script.key(self.record_key(session));
        call.key(self.index_key())
            .key(self.tombstone_key(session))
            .arg(data)
            .arg(nanos.to_string())
            .arg(score(nanos))
            .arg(session)
            .arg(self.ttl_ms.to_string());
        call
    }

    /// Stores `data` as `session`'s record, seen at `now`, only over the record `expected`
    /// ([`StoreIfReply`]).
    pub(crate) fn store_if(
        &self,
        session: &str,
        data: Vec<u8>,
        expected: &[u8],
        now: Instant,
    ) -> redis::ScriptInvocation<'_> {
        let mut call = self.write(&self.store_if, session, data, now);
        call.arg(expected);
        call
    }

    /// Stores `data` as `session`'s first record, seen at `now`, only if it has none (a
    /// [`StoreIfReply`]; read it with [`store_if_reply`](Self::store_if_reply)).
    pub(crate) fn store_new(&self, session: &str, data: Vec<u8>, now: Instant) -> redis::ScriptInvocation<'_> {
        self.write(&self.store_new, session, data, now)
    }

    /// What [`store_if`](Self::store_if) or [`store_new`](Self::store_new) did.
    pub(crate) fn store_if_reply(
        &self,
        session: &str,
        (done, data, seen): StoreIfReply,
    ) -> Result<StoreIf, SessionStoreError> {
        match done {
            1 => Ok(StoreIf::Stored),
            2 => {
                let nanos = seen
                    .parse::<u128>()
                    .map_err(|e| backend(RedisError::Malformed(format!("{} seen: {e}", self.record_key(session)))))?;
                Ok(StoreIf::Changed(SessionRecord::new(data, self.clock.instant(nanos))))
            }
            _ => Ok(StoreIf::Gone),
        }
    }

    /// Marks `session` used at `now`: 1 if it exists, else 0.
    pub(crate) fn touch(&self, session: &str, now: Instant) -> redis::ScriptInvocation<'_> {
        let nanos = self.clock.nanos(now);
        let mut call = self.touch.key(self.record_key(session));
        call.key(self.index_key()).arg(nanos.to_string()).arg(score(nanos)).arg(session).arg(self.ttl_ms.to_string());
        call
    }

    /// Whether [`touch`](Self::touch) found the session.
    pub(crate) const fn touch_reply(found: i64) -> bool {
        found == 1
    }

    /// Deletes `session`'s record and index entry, and leaves its tombstone
    /// ([`DeleteReply`]).
    pub(crate) fn delete(&self, session: &str) -> redis::Pipeline {
        let mut pipe = redis::pipe();
        pipe.cmd("DEL").arg(self.record_key(session)).cmd("ZREM").arg(self.index_key()).arg(session);
        pipe.cmd("SET").arg(self.tombstone_key(session)).arg(1).arg("PX").arg(TOMBSTONE_MS);
        pipe
    }

    /// Whether [`delete`](Self::delete) found a record.
    pub(crate) const fn delete_reply(reply: &DeleteReply) -> bool {
        reply.0 > 0
    }

    /// The ids of the sessions idle for longer than `idle_timeout` at `now`, unordered.
    pub(crate) fn expired(&self, now: Instant, idle_timeout: Duration) -> redis::Cmd {
        // Idle for longer than the timeout: last seen strictly before now minus the timeout.
        let cutoff = self.clock.nanos(now).saturating_sub(idle_timeout.as_nanos());
        let mut cmd = redis::cmd("ZRANGEBYSCORE");
        cmd.arg(self.index_key()).arg("-inf").arg(format!("({}", score(cutoff)));
        cmd
    }

    /// The ids [`expired`](Self::expired) found, in ascending order.
    pub(crate) fn expired_reply(mut ids: Vec<String>) -> Vec<String> {
        ids.sort();
        ids
    }

    /// Plain commands, pipelined (no script: this is the call every request makes): the
    /// record's data, and the index's time moved forward to `now` (never creating an entry, so
    /// a deleted session is not brought back) ([`RefreshReply`]). The hash's own `seen` is left
    /// as it was; [`load_reply`](Self::load_reply) takes the later of the two.
    pub(crate) fn refresh(&self, session: &str, now: Instant) -> redis::Pipeline {
        let record = self.record_key(session);
        let mut pipe = redis::pipe();
        pipe.cmd("HGET").arg(&record).arg("data");
        pipe.cmd("ZADD")
            .arg(self.index_key())
            .arg("XX")
            .arg("GT")
            .arg(score(self.clock.nanos(now)))
            .arg(session)
            .ignore();
        if self.ttl_ms > 0 {
            pipe.cmd("PEXPIRE").arg(&record).arg(self.ttl_ms.to_string()).ignore();
        }
        pipe
    }

    /// What [`refresh`](Self::refresh) at `now` found, for a process that holds `known`.
    pub(crate) fn refresh_reply((data,): RefreshReply, now: Instant, known: &[u8]) -> Refresh {
        match data {
            None => Refresh::Gone,
            Some(data) if data == known => Refresh::Same,
            Some(data) => Refresh::Changed(SessionRecord::new(data, now)),
        }
    }
}

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

/// A Redis failure as a session store error.
pub(crate) fn backend(error: RedisError) -> SessionStoreError {
    SessionStoreError::Backend(Box::new(error))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_later_of_seen_and_the_score_is_the_last_use() {
        let seen = 1_700_000_000_000_000_000u128;
        assert_eq!(later_use(seen, None), seen);
        assert_eq!(later_use(seen, Some(score(seen))), seen, "the score's own rounding");
        assert_eq!(later_use(seen, Some(score(seen - 5_000_000))), seen, "an older score");
        let refreshed = seen + 30_000_000_000;
        let found = later_use(seen, Some(score(refreshed)));
        assert!(found.abs_diff(refreshed) < 1_000, "{found} vs {refreshed}");
    }

    #[test]
    fn keys_carry_the_prefix_and_the_ttl_is_at_least_a_millisecond() {
        let options = RedisOptions::default().prefix("app:").session_ttl(Duration::from_micros(10));
        let commands = SessionCommands::new(&options);
        assert_eq!(commands.record_key("s1"), "app:session:s1");
        assert_eq!(commands.tombstone_key("s1"), "app:deleted:s1");
        assert_eq!(commands.index_key(), "app:sessions");
        assert_eq!(commands.ttl_ms, 1);
        assert_eq!(SessionCommands::new(&RedisOptions::default()).ttl_ms, 0);
    }
}
