//! [`StorePool`]: a session or event store shared by the server's threads, as one store or as
//! several that keep their records in the same place (connections to one Redis), so that
//! store round trips of different requests run side by side rather than one after another.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError, TryLockError};

use talaria_core::http::event_log::EventStore;

/// A store shared by the threads (and servers) that serve the same sessions: one store, or a
/// pool of stores that see the same records, each used by one thread at a time. The event
/// store is one ([`SharedEventStore`]); [`SharedSessionStore`](super::SharedSessionStore)
/// keeps its blocking stores in one.
///
/// Cloning shares the pool.
///
/// # Examples
///
/// ```
/// use talaria::core::http::event_log::{MemoryEventStore, Retention};
/// use talaria::http::{HttpServerOptions, SharedEventStore};
///
/// // One store: every round trip takes its turn.
/// let options = HttpServerOptions::default()
///     .event_store(SharedEventStore::new(MemoryEventStore::new(Retention::default())));
/// # let _ = options;
/// ```
///
/// A pool is for stores that keep their records elsewhere, such as connections to one Redis
/// (`talaria-redis`): requests then wait for the store side by side.
///
/// ```no_run
/// # use talaria::http::SharedEventStore;
/// # fn connect() -> talaria::core::http::event_log::MemoryEventStore { unimplemented!() }
/// let pool = SharedEventStore::pool((0..4).map(|_| connect()));
/// assert_eq!(pool.len(), 4);
/// ```
pub struct StorePool<T: ?Sized> {
    inner: Arc<Members<T>>,
}

struct Members<T: ?Sized> {
    stores: Vec<Mutex<Box<T>>>,
    /// Where the next caller starts looking for a free store.
    next: AtomicUsize,
}

impl<T: ?Sized> Clone for StorePool<T> {
    fn clone(&self) -> Self {
        Self { inner: Arc::clone(&self.inner) }
    }
}

impl<T: ?Sized> std::fmt::Debug for StorePool<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StorePool").field("stores", &self.len()).finish()
    }
}

impl<T: ?Sized> StorePool<T> {
    pub(crate) fn of(stores: Vec<Box<T>>) -> Self {
        assert!(!stores.is_empty(), "a store pool needs at least one store");
        let stores = stores.into_iter().map(Mutex::new).collect();
        Self { inner: Arc::new(Members { stores, next: AtomicUsize::new(0) }) }
    }

    /// How many stores the pool has.
    #[must_use]
    pub fn len(&self) -> usize {
        self.inner.stores.len()
    }

    /// Always `false`: a pool has at least one store.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.inner.stores.is_empty()
    }

    /// Runs `f` on a store no other thread is using: the first free one from a rotating start,
    /// else the start's, once it is free.
    pub(crate) fn with<R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
        let stores = &self.inner.stores;
        let start = self.inner.next.fetch_add(1, Ordering::Relaxed) % stores.len();
        for offset in 0..stores.len() {
            match stores[(start + offset) % stores.len()].try_lock() {
                Ok(mut store) => return f(&mut **store),
                Err(TryLockError::Poisoned(poisoned)) => return f(&mut **poisoned.into_inner()),
                Err(TryLockError::WouldBlock) => {}
            }
        }
        let mut store = stores[start].lock().unwrap_or_else(PoisonError::into_inner);
        f(&mut **store)
    }
}

impl StorePool<dyn EventStore + Send> {
    /// One event store.
    pub fn new(store: impl EventStore + Send + 'static) -> Self {
        Self::of(vec![Box::new(store)])
    }

    /// A pool of event stores that see the same events (connections to one Redis).
    ///
    /// # Panics
    ///
    /// If `stores` is empty.
    pub fn pool<S: EventStore + Send + 'static>(stores: impl IntoIterator<Item = S>) -> Self {
        Self::of(stores.into_iter().map(|s| Box::new(s) as Box<dyn EventStore + Send>).collect())
    }
}

/// An event store shared by the servers (and threads) that serve the same sessions.
pub type SharedEventStore = StorePool<dyn EventStore + Send>;

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use std::sync::Barrier;
    use std::time::{Duration, Instant};

    use talaria_core::http::event_log::{MemorySessionStore, SessionStore};

    use super::*;

    #[test]
    fn a_busy_store_sends_the_next_caller_to_a_free_one() {
        let pool = StorePool::<dyn SessionStore + Send>::of(vec![
            Box::new(MemorySessionStore::new()),
            Box::new(MemorySessionStore::new()),
        ]);
        let barrier = Barrier::new(2);
        std::thread::scope(|scope| {
            scope.spawn(|| {
                pool.with(|store| {
                    store.store("held", b"1".to_vec(), Instant::now()).unwrap();
                    barrier.wait();
                    // Held until the other thread has used the other store.
                    barrier.wait();
                });
            });
            barrier.wait();
            let seen = pool.with(|store| store.load("held").unwrap().is_some());
            assert!(!seen, "the other thread's store is busy: this one is the other member");
            barrier.wait();
        });
    }

    #[test]
    fn a_pool_of_one_serializes_its_callers() {
        let pool = StorePool::<dyn SessionStore + Send>::of(vec![Box::new(MemorySessionStore::new())]);
        std::thread::scope(|scope| {
            for n in 0..4 {
                let pool = pool.clone();
                scope.spawn(move || {
                    pool.with(|store| store.store(&n.to_string(), vec![n], Instant::now()).unwrap());
                });
            }
        });
        let expired = pool.with(|store| store.expired(Instant::now() + Duration::from_secs(60), Duration::ZERO));
        assert_eq!(expired.unwrap().len(), 4);
    }
}
