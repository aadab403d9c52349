//! [`RedisEventStore`]: the SSE event logs behind resumable streams, in Redis, so that a client
//! resumes with `Last-Event-ID` on whichever process it reaches.
//!
//! Keys (after the prefix), for session `S`: `events:S`, a hash with the last stream id
//! minted; `events:S:streams`, the session's streams (a sorted set, oldest first); per stream
//! `N`, `events:S:N`, a hash (`seq`, the last sequence number issued; `bytes`, the payload
//! bytes kept; `closed`; `claim`, who writes it, if noted) and `events:S:N:data`, the kept payloads, oldest first, consecutive
//! and ending at `seq`. Each call is one Lua script (one round trip), so that processes
//! appending and replaying at once see a consistent log. The scripts name keys they derive,
//! so the store needs one Redis node (not a cluster).

use talaria_core::http::event_log::{EventId, EventStore, EventStoreError, Replay, Retention, StoredEvent};

use crate::link::{Link, RedisError, RedisOptions};

/// What every script starts with: `state(n)` says whether stream `n` is there, was evicted,
/// or is unknown. KEYS[1]: the session hash. ARGV[1]: the prefix of the session's keys.
const STATE: &str = "
local base = ARGV[1]
local function state(n)
  if redis.call('EXISTS', base .. n) == 1 then return 0 end
  local last = tonumber(redis.call('HGET', KEYS[1], 'last') or '0')
  if n ~= 0 and n <= last then return -2 end
  return -1
end
";

/// The scripts that open or append share these: `open(max, claim)` makes a stream (evicting
/// closed streams first, then the oldest, past `max`) and returns its id; `append(n, data,
/// max events, max bytes, close)` returns {0, seq} or {error}.
const WRITE: &str = "
local function open(max, claim)
  local streams = base .. 'streams'
  while redis.call('ZCARD', streams) >= max do
    local ids = redis.call('ZRANGE', streams, 0, -1)
    local victim = nil
    for _, id in ipairs(ids) do
      if redis.call('HGET', base .. id, 'closed') == '1' then victim = id break end
    end
    victim = victim or ids[1]
    if not victim then break end
    redis.call('DEL', base .. victim, base .. victim .. ':data')
    redis.call('ZREM', streams, victim)
  end
  local n = redis.call('HINCRBY', KEYS[1], 'last', 1)
  redis.call('HSET', base .. n, 'seq', 0, 'bytes', 0, 'closed', 0)
  if claim ~= '' then redis.call('HSET', base .. n, 'claim', claim) end
  redis.call('ZADD', streams, n, n)
  return n
end
local function append(n, data, max_events, max_bytes, close)
  local s = state(n)
  if s ~= 0 then return {s} end
  local key = base .. n
  if redis.call('HGET', key, 'closed') == '1' then return {-3} end
  local seq = redis.call('HINCRBY', key, 'seq', 1)
  local list = key .. ':data'
  if #data > max_bytes or max_events == 0 then
    redis.call('DEL', list)
    redis.call('HSET', key, 'bytes', 0)
  else
    local bytes = tonumber(redis.call('HGET', key, 'bytes'))
    while redis.call('LLEN', list) >= max_events or bytes + #data > max_bytes do
      local old = redis.call('LPOP', list)
      if not old then break end
      bytes = bytes - #old
    end
    redis.call('RPUSH', list, data)
    redis.call('HSET', key, 'bytes', bytes + #data)
  end
  if close == '1' then redis.call('HSET', key, 'closed', 1) end
  return {0, seq}
end
";

/// ARGV: base, max streams, claim (empty: none). Returns the new stream id.
const OPEN: &str = "return open(tonumber(ARGV[2]), ARGV[3])";

/// ARGV: base, stream, data, max events, max bytes, close after (1) or not (0). Returns
/// {0, seq} or {error}.
const APPEND: &str = "return append(tonumber(ARGV[2]), ARGV[3], tonumber(ARGV[4]), tonumber(ARGV[5]), ARGV[6])";

/// ARGV: base, max streams, claim (empty: none), data, max events, max bytes, close after (1)
/// or not (0). Returns {0, seq, stream} or {error}.
const OPEN_APPEND: &str = "
local n = open(tonumber(ARGV[2]), ARGV[3])
local answer = append(n, ARGV[4], tonumber(ARGV[5]), tonumber(ARGV[6]), ARGV[7])
if answer[1] ~= 0 then return answer end
return {0, answer[2], n}";

/// ARGV: base, stream, after seq. Returns {0, first seq returned, missed, closed, data...} or
/// {error}.
const REPLAY: &str = "
local n = tonumber(ARGV[2])
local s = state(n)
if s ~= 0 then return {s} end
local key = base .. n
local after = tonumber(ARGV[3])
local seq = tonumber(redis.call('HGET', key, 'seq'))
if after > seq then return {-4} end
local list = key .. ':data'
local kept = redis.call('LLEN', list)
local first_kept = seq + 1 - kept
local missed = math.max(0, first_kept - (after + 1))
local skip = math.max(0, after + 1 - first_kept)
local closed = 0
if redis.call('HGET', key, 'closed') == '1' then closed = 1 end
local out = {0, first_kept + skip, missed, closed}
for _, data in ipairs(redis.call('LRANGE', list, skip, -1)) do out[#out + 1] = data end
return out";

/// ARGV: base, stream. Returns {0} or {error}.
const CLOSE: &str = "
local n = tonumber(ARGV[2])
local s = state(n)
if s ~= 0 then return {s} end
redis.call('HSET', base .. n, 'closed', 1)
return {0}";

/// ARGV: base. Forgets the session's streams.
const DROP: &str = "
local streams = base .. 'streams'
for _, id in ipairs(redis.call('ZRANGE', streams, 0, -1)) do
  redis.call('DEL', base .. id, base .. id .. ':data')
end
redis.call('DEL', streams, KEYS[1])
return 0";

/// SSE event logs in Redis, shared by every server process using the same Redis and prefix,
/// with the same contract and retention as the in-memory store (see the
/// [`EventStore`] trait).
///
/// # Examples
///
/// ```no_run
/// use talaria_core::http::event_log::{EventStore, Retention};
/// use talaria_redis::{RedisEventStore, RedisOptions};
///
/// let mut log = RedisEventStore::connect("redis://127.0.0.1:6379", RedisOptions::default(), Retention::default())?;
/// let stream = log.open_stream("a1b2")?;
/// let id = log.append("a1b2", stream, b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/x\"}")?;
/// # let _ = id;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct RedisEventStore {
    link: Link,
    retention: Retention,
    scripts: Scripts,
}

#[derive(Debug)]
struct Scripts {
    open: redis::Script,
    append: redis::Script,
    open_append: redis::Script,
    replay: redis::Script,
    close: redis::Script,
    drop: redis::Script,
}

impl RedisEventStore {
    /// A store in the Redis at `url`, keeping what `retention` allows.
    ///
    /// # Errors
    ///
    /// [`RedisError`] if the URL is wrong or Redis cannot be reached.
    pub fn connect(url: &str, options: RedisOptions, retention: Retention) -> Result<Self, RedisError> {
        let script = |body: &str| redis::Script::new(&format!("{STATE}{body}"));
        let writing = |body: &str| redis::Script::new(&format!("{STATE}{WRITE}{body}"));
        let scripts = Scripts {
            open: writing(OPEN),
            append: writing(APPEND),
            open_append: writing(OPEN_APPEND),
            replay: script(REPLAY),
            close: script(CLOSE),
            drop: script(DROP),
        };
        Ok(Self { link: Link::open(url, options)?, retention, scripts })
    }

    /// The session's hash, and the prefix of its other keys.
    fn keys(&self, session: &str) -> (String, String) {
        let session_key = format!("{}events:{session}", self.link.options().prefix);
        let base = format!("{session_key}:");
        (session_key, base)
    }

    /// Runs `script` for `session` with `args` after the base.
    fn call(&mut self, script: Which, session: &str, args: &[Arg<'_>]) -> Result<redis::Value, EventStoreError> {
        let (session_key, base) = self.keys(session);
        let script = match script {
            Which::Open => &self.scripts.open,
            Which::Append => &self.scripts.append,
            Which::OpenAppend => &self.scripts.open_append,
            Which::Replay => &self.scripts.replay,
            Which::Close => &self.scripts.close,
            Which::Drop => &self.scripts.drop,
        };
        let mut invocation = script.key(session_key);
        invocation.arg(base);
        for arg in args {
            match arg {
                Arg::Number(n) => invocation.arg(*n),
                Arg::Bytes(b) => invocation.arg(*b),
            };
        }
        self.link.run(|c| invocation.invoke::<redis::Value>(c)).map_err(backend)
    }
}

#[derive(Clone, Copy)]
enum Which {
    Open,
    Append,
    OpenAppend,
    Replay,
    Close,
    Drop,
}

enum Arg<'a> {
    Number(u64),
    Bytes(&'a [u8]),
}

/// A retention limit as a script argument.
fn limit(n: usize) -> u64 {
    u64::try_from(n).unwrap_or(u64::MAX)
}

fn backend(error: RedisError) -> EventStoreError {
    EventStoreError::Backend(Box::new(error))
}

fn malformed(what: &str) -> EventStoreError {
    backend(RedisError::Malformed(format!("unexpected answer to {what}")))
}

/// An integer of a script's answer.
fn int(value: &redis::Value) -> Option<i64> {
    match value {
        redis::Value::Int(n) => Some(*n),
        _ => None,
    }
}

fn count(value: Option<&redis::Value>, what: &str) -> Result<u64, EventStoreError> {
    value.and_then(int).and_then(|n| u64::try_from(n).ok()).ok_or_else(|| malformed(what))
}

/// The error a script answered with (`{code}`), or the rest of its answer.
fn answer(value: redis::Value, stream: u64, after: Option<EventId>) -> Result<Vec<redis::Value>, EventStoreError> {
    let redis::Value::Array(items) = value else { return Err(malformed("a script")) };
    match items.first().and_then(int) {
        Some(0) => Ok(items.into_iter().skip(1).collect()),
        Some(-1) => Err(EventStoreError::UnknownStream { stream }),
        Some(-2) => Err(EventStoreError::StreamEvicted { stream }),
        Some(-3) => Err(EventStoreError::StreamClosed { stream }),
        Some(-4) => Err(EventStoreError::UnknownEvent { id: after.unwrap_or_else(|| EventId::start(stream)) }),
        _ => Err(malformed("a script")),
    }
}

impl EventStore for RedisEventStore {
    fn max_event_bytes(&self) -> Option<usize> {
        Some(self.retention.max_bytes())
    }

    fn open_stream(&mut self, session: &str) -> Result<u64, EventStoreError> {
        self.open_claimed_stream(session, b"")
    }

    /// The claim is kept in the stream's record, and goes with it.
    fn open_claimed_stream(&mut self, session: &str, claim: &[u8]) -> Result<u64, EventStoreError> {
        let max = limit(self.retention.max_streams());
        let value = self.call(Which::Open, session, &[Arg::Number(max), Arg::Bytes(claim)])?;
        int(&value).and_then(|n| u64::try_from(n).ok()).ok_or_else(|| malformed("open_stream"))
    }

    fn claim_of(&mut self, session: &str, stream: u64) -> Result<Option<Vec<u8>>, EventStoreError> {
        let (_, base) = self.keys(session);
        self.link.run(|c| redis::cmd("HGET").arg(format!("{base}{stream}")).arg("claim").query(c)).map_err(backend)
    }

    fn append(&mut self, session: &str, stream: u64, data: &[u8]) -> Result<EventId, EventStoreError> {
        self.append_closing(session, stream, data, false)
    }

    fn replay_after(&mut self, session: &str, after: EventId) -> Result<Replay, EventStoreError> {
        let args = [Arg::Number(after.stream), Arg::Number(after.seq)];
        let rest = answer(self.call(Which::Replay, session, &args)?, after.stream, Some(after))?;
        let first = count(rest.first(), "replay_after")?;
        let missed = count(rest.get(1), "replay_after")?;
        let closed = count(rest.get(2), "replay_after")? == 1;
        let mut events = Vec::new();
        for (seq, value) in (first..).zip(rest.into_iter().skip(3)) {
            let redis::Value::BulkString(data) = value else { return Err(malformed("replay_after")) };
            events.push(StoredEvent::new(EventId::new(after.stream, seq), data));
        }
        Ok(Replay::new(events, missed, closed))
    }

    fn close_stream(&mut self, session: &str, stream: u64) -> Result<(), EventStoreError> {
        answer(self.call(Which::Close, session, &[Arg::Number(stream)])?, stream, None).map(|_| ())
    }

    fn drop_session(&mut self, session: &str) -> Result<(), EventStoreError> {
        self.call(Which::Drop, session, &[]).map(|_| ())
    }

    /// One script: the append and the close happen together, or not at all.
    fn append_last(&mut self, session: &str, stream: u64, data: &[u8]) -> Result<EventId, EventStoreError> {
        self.append_closing(session, stream, data, true)
    }

    /// One script (one round trip): the stream is opened with its first event.
    fn open_with_event(
        &mut self,
        session: &str,
        claim: Option<&[u8]>,
        data: &[u8],
        last: bool,
    ) -> Result<EventId, EventStoreError> {
        let args = [
            Arg::Number(limit(self.retention.max_streams())),
            Arg::Bytes(claim.unwrap_or_default()),
            Arg::Bytes(data),
            Arg::Number(limit(self.retention.max_events())),
            Arg::Number(limit(self.retention.max_bytes())),
            Arg::Number(u64::from(last)),
        ];
        // The stream is new: an error is the store's, never a stream state.
        let rest = answer(self.call(Which::OpenAppend, session, &args)?, 0, None)?;
        let (seq, stream) = (count(rest.first(), "open_with_event")?, count(rest.get(1), "open_with_event")?);
        Ok(EventId::new(stream, seq))
    }
}

impl RedisEventStore {
    /// Appends `data` to `stream`, closing the stream in the same script if `close`.
    fn append_closing(
        &mut self,
        session: &str,
        stream: u64,
        data: &[u8],
        close: bool,
    ) -> Result<EventId, EventStoreError> {
        let (events, bytes) = (limit(self.retention.max_events()), limit(self.retention.max_bytes()));
        let args = [
            Arg::Number(stream),
            Arg::Bytes(data),
            Arg::Number(events),
            Arg::Number(bytes),
            Arg::Number(u64::from(close)),
        ];
        let rest = answer(self.call(Which::Append, session, &args)?, stream, None)?;
        Ok(EventId::new(stream, count(rest.first(), "append")?))
    }
}
