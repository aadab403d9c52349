//! [`AsyncSessionStore`]: the [`SessionStore`] contract for stores whose calls are futures (an
//! async Redis client on smol or tokio), so that a server waiting on the store holds no thread.

use crate::alloc_prelude::*;
use crate::time::{Duration, Instant};
use alloc::sync::Arc;
use core::future::Future;
use core::pin::Pin;

use super::session_store::{Refresh, SessionRecord, SessionStore, SessionStoreError, StoreIf};

/// The future an [`AsyncSessionStore`] call returns: boxed, so that the trait stays object safe
/// and one server type serves every store.
pub type StoreFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, SessionStoreError>> + Send + 'a>>;

/// Session records by session id, with calls that are futures: the same contract as
/// [`SessionStore`] (which [`conformance::check_session_store`] checks, through
/// [`BlockingSessionStore`]), for a store whose round trips an executor awaits rather than a
/// thread blocks on.
///
/// Calls take `&self`: an async store is shared by every request in flight (a multiplexed
/// connection, say), and each call's future borrows only its arguments.
///
/// [`conformance::check_session_store`]: crate::http::conformance::check_session_store
///
/// # Examples
///
/// An in-memory store behind a lock, with futures that are ready at once:
///
/// ```
/// use std::sync::Mutex;
/// use std::time::{Duration, Instant};
/// use talaria_core::http::event_log::{
///     AsyncSessionStore, MemorySessionStore, SessionRecord, SessionStore, StoreFuture,
/// };
///
/// struct Ready(Mutex<MemorySessionStore>);
///
/// impl AsyncSessionStore for Ready {
///     fn load<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Option<SessionRecord>> {
///         Box::pin(std::future::ready(self.0.lock().unwrap().load(id)))
///     }
///     fn store<'a>(&'a self, id: &'a str, data: Vec<u8>, now: Instant) -> StoreFuture<'a, ()> {
///         Box::pin(std::future::ready(self.0.lock().unwrap().store(id, data, now)))
///     }
///     fn touch<'a>(&'a self, id: &'a str, now: Instant) -> StoreFuture<'a, bool> {
///         Box::pin(std::future::ready(self.0.lock().unwrap().touch(id, now)))
///     }
///     fn delete<'a>(&'a self, id: &'a str) -> StoreFuture<'a, bool> {
///         Box::pin(std::future::ready(self.0.lock().unwrap().delete(id)))
///     }
///     fn expired(&self, now: Instant, idle: Duration) -> StoreFuture<'_, Vec<String>> {
///         Box::pin(std::future::ready(self.0.lock().unwrap().expired(now, idle)))
///     }
/// }
///
/// use talaria_core::http::conformance::check_session_store;
/// use talaria_core::http::event_log::BlockingSessionStore;
/// let make = || BlockingSessionStore::new(Ready(Mutex::new(MemorySessionStore::new())));
/// check_session_store(make, Instant::now()).unwrap();
/// ```
pub trait AsyncSessionStore: Send + Sync {
    /// The record of `session`, if there is one ([`SessionStore::load`]).
    fn load<'a>(&'a self, session: &'a str) -> StoreFuture<'a, Option<SessionRecord>>;

    /// Inserts or replaces the record of `session` with `data`, seen at `now`
    /// ([`SessionStore::store`]).
    fn store<'a>(&'a self, session: &'a str, data: Vec<u8>, now: Instant) -> StoreFuture<'a, ()>;

    /// Marks `session` used at `now`; whether it exists ([`SessionStore::touch`]).
    fn touch<'a>(&'a self, session: &'a str, now: Instant) -> StoreFuture<'a, bool>;

    /// Forgets the record of `session`; whether there was one ([`SessionStore::delete`]).
    fn delete<'a>(&'a self, session: &'a str) -> StoreFuture<'a, bool>;

    /// The ids of the sessions idle for longer than `idle_timeout` at `now`, in ascending order
    /// ([`SessionStore::expired`]).
    fn expired(&self, now: Instant, idle_timeout: Duration) -> StoreFuture<'_, Vec<String>>;

    /// Marks `session` used at `now` and compares its record with `known`
    /// ([`SessionStore::refresh`]). A store shared between processes answers it in one round
    /// trip; the default touches, then loads.
    fn refresh<'a>(&'a self, session: &'a str, now: Instant, known: &'a [u8]) -> StoreFuture<'a, Refresh> {
        Box::pin(async move {
            if !self.touch(session, now).await? {
                return Ok(Refresh::Gone);
            }
            Ok(match self.load(session).await? {
                None => Refresh::Gone,
                Some(record) if record.data == known => Refresh::Same,
                Some(record) => Refresh::Changed(record),
            })
        })
    }

    /// Stores `data` as the record of `session` only if the record there is still `expected`
    /// ([`SessionStore::store_if`]). A store shared between processes does it atomically, in
    /// one round trip; the default loads, compares and stores.
    fn store_if<'a>(
        &'a self,
        session: &'a str,
        data: Vec<u8>,
        expected: &'a [u8],
        now: Instant,
    ) -> StoreFuture<'a, StoreIf> {
        Box::pin(async move {
            match self.load(session).await? {
                None => Ok(StoreIf::Gone),
                Some(record) if record.data != expected => Ok(StoreIf::Changed(record)),
                Some(_) => {
                    self.store(session, data, now).await?;
                    Ok(StoreIf::Stored)
                }
            }
        })
    }

    /// Stores `data` as the first record of `session` only if it has none
    /// ([`SessionStore::store_new`]). A store shared between processes does it atomically, in
    /// one round trip; the default loads, then stores.
    fn store_new<'a>(&'a self, session: &'a str, data: Vec<u8>, now: Instant) -> StoreFuture<'a, StoreIf> {
        Box::pin(async move {
            if let Some(record) = self.load(session).await? {
                return Ok(StoreIf::Changed(record));
            }
            self.store(session, data, now).await?;
            Ok(StoreIf::Stored)
        })
    }
}

impl<S: AsyncSessionStore + ?Sized> AsyncSessionStore for Arc<S> {
    fn load<'a>(&'a self, session: &'a str) -> StoreFuture<'a, Option<SessionRecord>> {
        (**self).load(session)
    }

    fn store<'a>(&'a self, session: &'a str, data: Vec<u8>, now: Instant) -> StoreFuture<'a, ()> {
        (**self).store(session, data, now)
    }

    fn touch<'a>(&'a self, session: &'a str, now: Instant) -> StoreFuture<'a, bool> {
        (**self).touch(session, now)
    }

    fn delete<'a>(&'a self, session: &'a str) -> StoreFuture<'a, bool> {
        (**self).delete(session)
    }

    fn expired(&self, now: Instant, idle_timeout: Duration) -> StoreFuture<'_, Vec<String>> {
        (**self).expired(now, idle_timeout)
    }

    fn refresh<'a>(&'a self, session: &'a str, now: Instant, known: &'a [u8]) -> StoreFuture<'a, Refresh> {
        (**self).refresh(session, now, known)
    }

    fn store_if<'a>(
        &'a self,
        session: &'a str,
        data: Vec<u8>,
        expected: &'a [u8],
        now: Instant,
    ) -> StoreFuture<'a, StoreIf> {
        (**self).store_if(session, data, expected, now)
    }

    fn store_new<'a>(&'a self, session: &'a str, data: Vec<u8>, now: Instant) -> StoreFuture<'a, StoreIf> {
        (**self).store_new(session, data, now)
    }
}

/// An [`AsyncSessionStore`] used as a [`SessionStore`]: each call waits for its future on the
/// calling thread. For a blocking host, and for the conformance kit. The store's futures must
/// not need a runtime the calling thread lacks (a tokio client outside a tokio runtime, say).
///
/// # Examples
///
/// ```
/// use std::sync::Arc;
/// use std::time::Instant;
/// use talaria_core::http::event_log::{AsyncSessionStore, BlockingSessionStore, SessionStore};
/// # use talaria_core::http::event_log::{SessionRecord, StoreFuture};
/// # use std::time::Duration;
/// # struct Empty;
/// # impl AsyncSessionStore for Empty {
/// #     fn load<'a>(&'a self, _: &'a str) -> StoreFuture<'a, Option<SessionRecord>> { Box::pin(async { Ok(None) }) }
/// #     fn store<'a>(&'a self, _: &'a str, _: Vec<u8>, _: Instant) -> StoreFuture<'a, ()> { Box::pin(async { Ok(()) }) }
/// #     fn touch<'a>(&'a self, _: &'a str, _: Instant) -> StoreFuture<'a, bool> { Box::pin(async { Ok(false) }) }
/// #     fn delete<'a>(&'a self, _: &'a str) -> StoreFuture<'a, bool> { Box::pin(async { Ok(false) }) }
/// #     fn expired(&self, _: Instant, _: Duration) -> StoreFuture<'_, Vec<String>> { Box::pin(async { Ok(Vec::new()) }) }
/// # }
/// let shared: Arc<dyn AsyncSessionStore> = Arc::new(Empty);
/// let mut blocking = BlockingSessionStore::new(shared);
/// assert!(blocking.load("a").unwrap().is_none());
/// ```
#[derive(Debug, Clone)]
pub struct BlockingSessionStore<A>(A);

impl<A: AsyncSessionStore> BlockingSessionStore<A> {
    /// `store`, called by waiting.
    pub const fn new(store: A) -> Self {
        Self(store)
    }

    /// The async store inside.
    pub const fn get_ref(&self) -> &A {
        &self.0
    }
}

impl<A: AsyncSessionStore> SessionStore for BlockingSessionStore<A> {
    fn load(&mut self, session: &str) -> Result<Option<SessionRecord>, SessionStoreError> {
        crate::sync::block_on(self.0.load(session))
    }

    fn store(&mut self, session: &str, data: Vec<u8>, now: Instant) -> Result<(), SessionStoreError> {
        crate::sync::block_on(self.0.store(session, data, now))
    }

    fn touch(&mut self, session: &str, now: Instant) -> Result<bool, SessionStoreError> {
        crate::sync::block_on(self.0.touch(session, now))
    }

    fn delete(&mut self, session: &str) -> Result<bool, SessionStoreError> {
        crate::sync::block_on(self.0.delete(session))
    }

    fn expired(&mut self, now: Instant, idle_timeout: Duration) -> Result<Vec<String>, SessionStoreError> {
        crate::sync::block_on(self.0.expired(now, idle_timeout))
    }

    fn refresh(&mut self, session: &str, now: Instant, known: &[u8]) -> Result<Refresh, SessionStoreError> {
        crate::sync::block_on(self.0.refresh(session, now, known))
    }

    fn store_if(
        &mut self,
        session: &str,
        data: Vec<u8>,
        expected: &[u8],
        now: Instant,
    ) -> Result<StoreIf, SessionStoreError> {
        crate::sync::block_on(self.0.store_if(session, data, expected, now))
    }

    fn store_new(&mut self, session: &str, data: Vec<u8>, now: Instant) -> Result<StoreIf, SessionStoreError> {
        crate::sync::block_on(self.0.store_new(session, data, now))
    }
}
