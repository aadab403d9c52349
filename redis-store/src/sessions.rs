//! [`RedisSessionStore`]: legacy-era sessions in Redis.
//!
//! The keys, scripts and commands are the ones the async store runs too
//! (`session_commands.rs`), so either store reads what the other wrote.

use std::time::{Duration, Instant};

use talaria_core::http::event_log::{Refresh, SessionRecord, SessionStore, SessionStoreError, StoreIf};

use crate::link::{Link, RedisError, RedisOptions};
use crate::session_commands::{backend, SessionCommands};

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
    commands: SessionCommands,
}

impl RedisSessionStore {
    /// A store in the Redis at `url` (`redis://host:port/db`).
    ///
    /// # Errors
    ///
    /// [`RedisError`] if the URL is wrong or Redis cannot be reached.
    pub fn connect(url: &str, options: RedisOptions) -> Result<Self, RedisError> {
        let commands = SessionCommands::new(&options);
        Ok(Self { link: Link::open(url, options)?, commands })
    }
}

impl SessionStore for RedisSessionStore {
    fn load(&mut self, session: &str) -> Result<Option<SessionRecord>, SessionStoreError> {
        let pipe = self.commands.load(session);
        let reply = self.link.run(|c| pipe.query(c)).map_err(backend)?;
        self.commands.load_reply(session, reply)
    }

    fn store(&mut self, session: &str, data: Vec<u8>, now: Instant) -> Result<(), SessionStoreError> {
        let call = self.commands.store(session, data, now);
        self.link.run(|c| call.invoke::<i64>(c)).map(|_| ()).map_err(backend)
    }

    fn store_if(
        &mut self,
        session: &str,
        data: Vec<u8>,
        expected: &[u8],
        now: Instant,
    ) -> Result<StoreIf, SessionStoreError> {
        let call = self.commands.store_if(session, data, expected, now);
        let reply = self.link.run(|c| call.invoke(c)).map_err(backend)?;
        self.commands.store_if_reply(session, reply)
    }

    /// One script: written only where there is no record and no tombstone.
    fn store_new(&mut self, session: &str, data: Vec<u8>, now: Instant) -> Result<StoreIf, SessionStoreError> {
        let call = self.commands.store_new(session, data, now);
        let reply = self.link.run(|c| call.invoke(c)).map_err(backend)?;
        self.commands.store_if_reply(session, reply)
    }

    fn touch(&mut self, session: &str, now: Instant) -> Result<bool, SessionStoreError> {
        let call = self.commands.touch(session, now);
        self.link.run(|c| call.invoke(c)).map(SessionCommands::touch_reply).map_err(backend)
    }

    fn delete(&mut self, session: &str) -> Result<bool, SessionStoreError> {
        let pipe = self.commands.delete(session);
        self.link.run(|c| pipe.query(c)).map(|reply| SessionCommands::delete_reply(&reply)).map_err(backend)
    }

    fn expired(&mut self, now: Instant, idle_timeout: Duration) -> Result<Vec<String>, SessionStoreError> {
        let cmd = self.commands.expired(now, idle_timeout);
        self.link.run(|c| cmd.query(c)).map(SessionCommands::expired_reply).map_err(backend)
    }

    /// Plain commands, pipelined (no script: this is the call every request makes): the
    /// record's data, and the index's time moved forward (never creating an entry, so a
    /// deleted session is not brought back). The hash's own `seen` is left as it was;
    /// [`load`](SessionStore::load) takes the later of the two.
    fn refresh(&mut self, session: &str, now: Instant, known: &[u8]) -> Result<Refresh, SessionStoreError> {
        let pipe = self.commands.refresh(session, now);
        self.link.run(|c| pipe.query(c)).map(|reply| SessionCommands::refresh_reply(reply, now, known)).map_err(backend)
    }
}
