//! [`SharedSessionStore`]: where an HTTP server keeps its session records, blocking stores
//! called off the executor's threads or an async store awaited on them.

use std::sync::Arc;
use std::time::Instant;

use talaria_core::http::event_log::{
    AsyncSessionStore, Refresh, SessionRecord, SessionStore, SessionStoreError, StoreIf,
};

use super::store_pool::StorePool;

/// A session store shared by the servers that serve the same sessions.
///
/// - [`SharedSessionStore::new`] and [`SharedSessionStore::pool`] take blocking stores
///   ([`SessionStore`]): each call runs on a thread of smol's blocking pool, never on an
///   executor's thread, and a pool lets calls of different requests run side by side.
/// - [`SharedSessionStore::from_async`] takes an async store ([`AsyncSessionStore`], such as
///   `talaria-redis`'s `AsyncRedisSessionStore`): its calls are awaited where the request is
///   served, with no thread held while Redis answers, on the server's executors: smol's for
///   [`HttpServer`](super::HttpServer), the application's for `McpService` (tokio's, say).
///
/// Cloning shares the store.
///
/// # Examples
///
/// ```
/// use talaria::core::http::event_log::{MemoryEventStore, MemorySessionStore, Retention};
/// use talaria::http::{HttpServerOptions, SharedEventStore, SharedSessionStore};
///
/// // One store: every round trip takes its turn.
/// let options = HttpServerOptions::default()
///     .session_store(SharedSessionStore::new(MemorySessionStore::new()))
///     .event_store(SharedEventStore::new(MemoryEventStore::new(Retention::default())));
/// # let _ = options;
/// ```
///
/// A pool is for stores that keep their records elsewhere, such as connections to one Redis
/// (`talaria-redis`): requests then wait for the store side by side.
///
/// ```no_run
/// # use talaria::http::SharedSessionStore;
/// # fn connect() -> talaria::core::http::event_log::MemorySessionStore { unimplemented!() }
/// let pool = SharedSessionStore::pool((0..8).map(|_| connect()));
/// assert_eq!(pool.len(), 8);
/// ```
#[derive(Clone)]
pub struct SharedSessionStore(Kind);

#[derive(Clone)]
enum Kind {
    Blocking(StorePool<dyn SessionStore + Send>),
    Async(Arc<dyn AsyncSessionStore>),
}

impl std::fmt::Debug for SharedSessionStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.0 {
            Kind::Blocking(pool) => f.debug_tuple("SharedSessionStore").field(pool).finish(),
            Kind::Async(_) => f.write_str("SharedSessionStore(async)"),
        }
    }
}

impl SharedSessionStore {
    /// One blocking session store.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria::core::http::event_log::MemorySessionStore;
    /// use talaria::http::SharedSessionStore;
    ///
    /// assert_eq!(SharedSessionStore::new(MemorySessionStore::new()).len(), 1);
    /// ```
    pub fn new(store: impl SessionStore + Send + 'static) -> Self {
        Self(Kind::Blocking(StorePool::of(vec![Box::new(store)])))
    }

    /// A pool of blocking session stores that see the same records (connections to one
    /// Redis).
    ///
    /// # Panics
    ///
    /// If `stores` is empty.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria::core::http::event_log::MemorySessionStore;
    /// use talaria::http::SharedSessionStore;
    ///
    /// // (Two memory stores do not share records: a pool is for stores that do.)
    /// let pool = SharedSessionStore::pool([MemorySessionStore::new(), MemorySessionStore::new()]);
    /// assert_eq!(pool.len(), 2);
    /// ```
    pub fn pool<S: SessionStore + Send + 'static>(stores: impl IntoIterator<Item = S>) -> Self {
        let stores = stores.into_iter().map(|s| Box::new(s) as Box<dyn SessionStore + Send>).collect();
        Self(Kind::Blocking(StorePool::of(stores)))
    }

    /// One async session store, shared by every request in flight.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Mutex;
    /// use std::time::{Duration, Instant};
    /// use talaria::core::http::event_log::{
    ///     AsyncSessionStore, MemorySessionStore, SessionRecord, SessionStore, StoreFuture,
    /// };
    /// use talaria::http::{HttpServerOptions, SharedSessionStore};
    ///
    /// struct Ready(Mutex<MemorySessionStore>);
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
    /// let store = SharedSessionStore::from_async(Ready(Mutex::new(MemorySessionStore::new())));
    /// assert!(store.is_async());
    /// let options = HttpServerOptions::default().session_store(store);
    /// # let _ = options;
    /// ```
    pub fn from_async(store: impl AsyncSessionStore + 'static) -> Self {
        Self(Kind::Async(Arc::new(store)))
    }

    /// Whether the store is async ([`SharedSessionStore::from_async`]).
    #[must_use]
    pub const fn is_async(&self) -> bool {
        matches!(self.0, Kind::Async(_))
    }

    /// How many blocking stores the pool has (1 for an async store).
    #[must_use]
    pub fn len(&self) -> usize {
        match &self.0 {
            Kind::Blocking(pool) => pool.len(),
            Kind::Async(_) => 1,
        }
    }

    /// Always `false`: there is at least one store.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// [`SessionStore::refresh`]: a blocking store's call off the executor's threads.
    pub(crate) async fn refresh(&self, id: &str, now: Instant, known: Vec<u8>) -> Result<Refresh, SessionStoreError> {
        match &self.0 {
            Kind::Async(store) => store.refresh(id, now, &known).await,
            Kind::Blocking(pool) => {
                let id = id.to_owned();
                off_executor(pool, move |store| store.refresh(&id, now, &known)).await
            }
        }
    }

    /// [`SessionStore::load`], off the executor's threads.
    pub(crate) async fn load(&self, id: &str) -> Result<Option<SessionRecord>, SessionStoreError> {
        match &self.0 {
            Kind::Async(store) => store.load(id).await,
            Kind::Blocking(pool) => {
                let id = id.to_owned();
                off_executor(pool, move |store| store.load(&id)).await
            }
        }
    }

    /// [`SessionStore::store_if`], off the executor's threads.
    pub(crate) async fn store_if(
        &self,
        id: &str,
        data: Vec<u8>,
        expected: Vec<u8>,
        now: Instant,
    ) -> Result<StoreIf, SessionStoreError> {
        match &self.0 {
            Kind::Async(store) => store.store_if(id, data, &expected, now).await,
            Kind::Blocking(pool) => {
                let id = id.to_owned();
                off_executor(pool, move |store| store.store_if(&id, data, &expected, now)).await
            }
        }
    }

    /// [`SessionStore::store_new`], off the executor's threads.
    pub(crate) async fn store_new(&self, id: &str, data: Vec<u8>, now: Instant) -> Result<StoreIf, SessionStoreError> {
        match &self.0 {
            Kind::Async(store) => store.store_new(id, data, now).await,
            Kind::Blocking(pool) => {
                let id = id.to_owned();
                off_executor(pool, move |store| store.store_new(&id, data, now)).await
            }
        }
    }

    /// [`SessionStore::delete`], off the executor's threads.
    pub(crate) async fn delete(&self, id: &str) -> Result<bool, SessionStoreError> {
        match &self.0 {
            Kind::Async(store) => store.delete(id).await,
            Kind::Blocking(pool) => {
                let id = id.to_owned();
                off_executor(pool, move |store| store.delete(&id)).await
            }
        }
    }
}

/// `call` on a store of `pool`, on smol's blocking pool (never an executor's thread).
async fn off_executor<T, F>(pool: &StorePool<dyn SessionStore + Send>, call: F) -> T
where
    T: Send + 'static,
    F: FnOnce(&mut (dyn SessionStore + Send + 'static)) -> T + Send + 'static,
{
    let pool = pool.clone();
    smol::unblock(move || pool.with(call)).await
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use std::sync::Mutex;
    use std::time::Duration;

    use talaria_core::http::event_log::{MemorySessionStore, StoreFuture};

    use super::*;

    /// A memory store behind the async contract, counting its calls.
    struct Counted(Mutex<(MemorySessionStore, usize)>);

    impl Counted {
        fn call<T>(&self, f: impl FnOnce(&mut MemorySessionStore) -> T) -> T {
            let mut held = self.0.lock().unwrap();
            held.1 += 1;
            f(&mut held.0)
        }
    }

    impl AsyncSessionStore for Counted {
        fn load<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Option<SessionRecord>> {
            Box::pin(async move { self.call(|s| s.load(id)) })
        }
        fn store<'a>(&'a self, id: &'a str, data: Vec<u8>, now: Instant) -> StoreFuture<'a, ()> {
            Box::pin(async move { self.call(|s| s.store(id, data, now)) })
        }
        fn touch<'a>(&'a self, id: &'a str, now: Instant) -> StoreFuture<'a, bool> {
            Box::pin(async move { self.call(|s| s.touch(id, now)) })
        }
        fn delete<'a>(&'a self, id: &'a str) -> StoreFuture<'a, bool> {
            Box::pin(async move { self.call(|s| s.delete(id)) })
        }
        fn expired(&self, now: Instant, idle: Duration) -> StoreFuture<'_, Vec<String>> {
            Box::pin(async move { self.call(|s| s.expired(now, idle)) })
        }
    }

    #[test]
    fn both_kinds_answer_the_same_calls_alike() {
        let counted = Arc::new(Counted(Mutex::new((MemorySessionStore::new(), 0))));
        let stores =
            [SharedSessionStore::new(MemorySessionStore::new()), SharedSessionStore::from_async(counted.clone())];
        let now = Instant::now();
        for store in stores {
            smol::block_on(async {
                assert!(store.load("a").await.unwrap().is_none());
                assert_eq!(store.store_new("a", b"v1".to_vec(), now).await.unwrap(), StoreIf::Stored);
                assert_eq!(store.refresh("a", now, b"v1".to_vec()).await.unwrap(), Refresh::Same);
                let changed = store.refresh("a", now, b"v0".to_vec()).await.unwrap();
                assert!(matches!(changed, Refresh::Changed(r) if r.data == b"v1"));
                assert!(store.delete("a").await.unwrap());
                assert_eq!(store.refresh("a", now, b"v1".to_vec()).await.unwrap(), Refresh::Gone);
            });
        }
        // The async store was called, not a copy: load, a first store of two calls (load then
        // store, the trait's default), two refreshes of two calls each (touch then load),
        // delete, and a refresh that stops at the touch.
        assert_eq!(counted.0.lock().unwrap().1, 9);
    }
}
