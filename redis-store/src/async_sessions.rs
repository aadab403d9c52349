//! [`AsyncRedisSessionStore`]: legacy-era sessions in Redis, for a server that awaits its
//! store rather than blocking a thread on it.
//!
//! The keys, scripts and commands are the sync store's (`session_commands.rs`): the two
//! differ only in how they wait for Redis, so a sync and an async store with the same prefix
//! see the same records, and processes may mix them.

use std::time::{Duration, Instant};

use talaria_core::http::event_log::{AsyncSessionStore, Refresh, SessionRecord, StoreFuture, StoreIf};

use crate::async_link::AsyncLink;
use crate::link::{RedisError, RedisOptions};
use crate::session_commands::{backend, SessionCommands};

/// Sessions in Redis, shared by every server process that uses the same Redis and prefix,
/// with calls that are futures: the async twin of [`RedisSessionStore`](crate::RedisSessionStore),
/// with the same records and the same contract (a deleted session stays deleted; session ids
/// are never reused).
///
/// One store holds one multiplexed connection, shared by every call in flight (their commands
/// are pipelined on it): share the store itself (`Arc`, or `&`), not one per request. A lost
/// connection is opened again by a later call. Each round trip is bounded by
/// [`RedisOptions::io_timeout`], and opening the connection by
/// [`RedisOptions::connect_timeout`], so a Redis outage turns into
/// [`SessionStoreError::Backend`] within them, and service resumes with Redis.
///
/// Needs the `smol` or the `tokio` feature, which picks the runtime the connection runs on;
/// see [`connect`](Self::connect).
///
/// [`SessionStoreError::Backend`]: talaria_core::http::event_log::SessionStoreError::Backend
///
/// # Examples
///
/// ```no_run
/// use std::time::Instant;
/// use talaria_core::http::event_log::{AsyncSessionStore, Refresh};
/// use talaria_redis::{AsyncRedisSessionStore, RedisOptions};
///
/// smol::block_on(async {
///     let url = "redis://127.0.0.1:6379";
///     let store = AsyncRedisSessionStore::connect(url, RedisOptions::default()).await?;
///     store.store("a1b2", b"snapshot".to_vec(), Instant::now()).await?;
///     // What every request does: one round trip.
///     assert_eq!(store.refresh("a1b2", Instant::now(), b"snapshot").await?, Refresh::Same);
///     Ok::<(), Box<dyn std::error::Error>>(())
/// })?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct AsyncRedisSessionStore {
    link: AsyncLink,
    commands: SessionCommands,
}

impl AsyncRedisSessionStore {
    /// A store in the Redis at `url` (`redis://host:port/db`), connected now.
    ///
    /// The connection runs on the runtime of the `smol` or `tokio` feature. With both on,
    /// redis picks tokio when the connection is opened inside a tokio runtime, and smol (its
    /// global executor, from any thread) otherwise; this holds for every reconnection too,
    /// which happens within the call that finds the connection lost. A tokio runtime needs its
    /// I/O and time drivers (`enable_all`). A connection opened on a tokio runtime dies with
    /// it; a later call then opens another.
    ///
    /// # Errors
    ///
    /// [`RedisError`] if the URL is wrong or Redis cannot be reached within the connect
    /// timeout; with only the `tokio` feature, also outside a tokio runtime.
    ///
    /// # Examples
    ///
    /// On tokio (feature `tokio`), shared by the tasks of a server:
    ///
    /// ```no_run
    /// # #[cfg(feature = "tokio")]
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use std::sync::Arc;
    /// use std::time::Instant;
    /// use talaria_core::http::event_log::AsyncSessionStore;
    /// use talaria_redis::{AsyncRedisSessionStore, RedisOptions};
    ///
    /// let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    /// runtime.block_on(async {
    ///     let options = RedisOptions::default().prefix("myapp:");
    ///     let store = Arc::new(AsyncRedisSessionStore::connect("redis://127.0.0.1:6379", options).await?);
    ///     let shared = Arc::clone(&store);
    ///     tokio::spawn(async move { shared.touch("a1b2", Instant::now()).await }).await??;
    ///     Ok(())
    /// })
    /// # }
    /// # #[cfg(not(feature = "tokio"))]
    /// # fn main() {}
    /// ```
    pub async fn connect(url: &str, options: RedisOptions) -> Result<Self, RedisError> {
        let link = AsyncLink::open(url, &options).await?;
        Ok(Self { link, commands: SessionCommands::new(&options) })
    }

    /// [`connect`](Self::connect) (feature `smol`), with the connection's task on `executor`:
    /// give it the executor the server's requests run on
    /// ([`SmolHttpServer::bind_on`](https://docs.rs/talaria/latest/talaria/http/struct.SmolHttpServer.html#method.bind_on),
    /// or the one [`HttpServer::bind_with`](https://docs.rs/talaria/latest/talaria/http/struct.HttpServer.html#method.bind_with)
    /// hands the closure that makes the server's options),
    /// and a round trip's command and reply are handled on those threads, not handed to smol's
    /// global executor and back. Only a `redis://` (TCP) URL takes this path; any other
    /// connects as [`connect`](Self::connect) does. Reconnections after a loss run their task
    /// on `executor` too.
    ///
    /// # Errors
    ///
    /// As [`connect`](Self::connect).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # #[cfg(feature = "smol")]
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use std::sync::Arc;
    /// use talaria_redis::{AsyncRedisSessionStore, RedisOptions};
    ///
    /// // The server's executor, run by two threads of its own.
    /// let executor = Arc::new(smol::Executor::new());
    /// for _ in 0..2 {
    ///     let running = Arc::clone(&executor);
    ///     std::thread::spawn(move || smol::block_on(running.run(smol::future::pending::<()>())));
    /// }
    /// let url = "redis://127.0.0.1:6379";
    /// let store = smol::block_on(AsyncRedisSessionStore::connect_on(Arc::clone(&executor), url, RedisOptions::default()))?;
    /// # drop(store);
    /// # Ok(())
    /// # }
    /// # #[cfg(not(feature = "smol"))]
    /// # fn main() {}
    /// ```
    #[cfg(feature = "smol")]
    pub async fn connect_on(
        executor: std::sync::Arc<smol::Executor<'static>>,
        url: &str,
        options: RedisOptions,
    ) -> Result<Self, RedisError> {
        let link = AsyncLink::open_on(executor, url, &options).await?;
        Ok(Self { link, commands: SessionCommands::new(&options) })
    }
}

impl AsyncSessionStore for AsyncRedisSessionStore {
    fn load<'a>(&'a self, session: &'a str) -> StoreFuture<'a, Option<SessionRecord>> {
        Box::pin(async move {
            let pipe = self.commands.load(session);
            let reply = self.link.run(|mut c| async move { pipe.query_async(&mut c).await }).await.map_err(backend)?;
            self.commands.load_reply(session, reply)
        })
    }

    fn store<'a>(&'a self, session: &'a str, data: Vec<u8>, now: Instant) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            let call = self.commands.store(session, data, now);
            self.link.run(|mut c| async move { call.invoke_async::<i64>(&mut c).await }).await.map_err(backend)?;
            Ok(())
        })
    }

    fn store_if<'a>(
        &'a self,
        session: &'a str,
        data: Vec<u8>,
        expected: &'a [u8],
        now: Instant,
    ) -> StoreFuture<'a, StoreIf> {
        Box::pin(async move {
            let call = self.commands.store_if(session, data, expected, now);
            let reply = self.link.run(|mut c| async move { call.invoke_async(&mut c).await }).await.map_err(backend)?;
            self.commands.store_if_reply(session, reply)
        })
    }

    /// One script, as the sync store's
    /// [`store_new`](talaria_core::http::event_log::SessionStore::store_new).
    fn store_new<'a>(&'a self, session: &'a str, data: Vec<u8>, now: Instant) -> StoreFuture<'a, StoreIf> {
        Box::pin(async move {
            let call = self.commands.store_new(session, data, now);
            let reply = self.link.run(|mut c| async move { call.invoke_async(&mut c).await }).await.map_err(backend)?;
            self.commands.store_if_reply(session, reply)
        })
    }

    fn touch<'a>(&'a self, session: &'a str, now: Instant) -> StoreFuture<'a, bool> {
        Box::pin(async move {
            let call = self.commands.touch(session, now);
            let found = self.link.run(|mut c| async move { call.invoke_async(&mut c).await }).await.map_err(backend)?;
            Ok(SessionCommands::touch_reply(found))
        })
    }

    fn delete<'a>(&'a self, session: &'a str) -> StoreFuture<'a, bool> {
        Box::pin(async move {
            let pipe = self.commands.delete(session);
            let reply = self.link.run(|mut c| async move { pipe.query_async(&mut c).await }).await.map_err(backend)?;
            Ok(SessionCommands::delete_reply(&reply))
        })
    }

    fn expired(&self, now: Instant, idle_timeout: Duration) -> StoreFuture<'_, Vec<String>> {
        Box::pin(async move {
            let cmd = self.commands.expired(now, idle_timeout);
            let ids = self.link.run(|mut c| async move { cmd.query_async(&mut c).await }).await.map_err(backend)?;
            Ok(SessionCommands::expired_reply(ids))
        })
    }

    /// One round trip of plain commands, pipelined, as the sync store's
    /// [`refresh`](talaria_core::http::event_log::SessionStore::refresh): the record's data,
    /// and the index's time moved forward (never creating an entry, so a deleted session is
    /// not brought back).
    fn refresh<'a>(&'a self, session: &'a str, now: Instant, known: &'a [u8]) -> StoreFuture<'a, Refresh> {
        Box::pin(async move {
            let pipe = self.commands.refresh(session, now);
            let reply = self.link.run(|mut c| async move { pipe.query_async(&mut c).await }).await.map_err(backend)?;
            Ok(SessionCommands::refresh_reply(reply, now, known))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn send<T: Send>(_: &T) {}

    #[test]
    fn the_store_and_its_futures_can_cross_threads() {
        fn sync<T: Send + Sync>() {}
        sync::<AsyncRedisSessionStore>();
        send(&AsyncRedisSessionStore::connect("redis://127.0.0.1:1", RedisOptions::default()));
    }
}
