//! Session records behind an id: the [`SessionStore`] trait and its in-memory default.

use crate::alloc_prelude::*;
use crate::time::{Duration, Instant};
use alloc::collections::BTreeMap;

/// One stored session: the opaque bytes of its snapshot and when it was last used.
///
/// The record is bytes, not a generic value: a shared store (Redis, a database) keeps bytes, and
/// the snapshot is serialized once by the HTTP layer whatever the store, so the trait stays
/// object safe and one implementation serves every server type.
///
/// # Examples
///
/// ```
/// use std::time::Instant;
/// use talaria_core::http::event_log::SessionRecord;
///
/// let record = SessionRecord::new(b"{\"version\":\"2025-11-25\"}".to_vec(), Instant::now());
/// assert!(record.data.starts_with(b"{"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SessionRecord {
    /// The snapshot, as stored.
    pub data: Vec<u8>,
    /// The latest `now` passed to [`SessionStore::store`] or [`SessionStore::touch`].
    pub last_seen: Instant,
}

impl SessionRecord {
    /// A record of `data` last seen at `last_seen` (for store implementations).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Instant;
    /// use talaria_core::http::event_log::SessionRecord;
    ///
    /// let now = Instant::now();
    /// assert_eq!(SessionRecord::new(Vec::new(), now).last_seen, now);
    /// ```
    #[must_use]
    pub const fn new(data: Vec<u8>, last_seen: Instant) -> Self {
        Self { data, last_seen }
    }

    /// Whether the session has been idle for longer than `idle_timeout` at `now`.
    ///
    /// Idle for exactly `idle_timeout` is not yet expired: the deadline is the last instant the
    /// session is still live.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::{Duration, Instant};
    /// use talaria_core::http::event_log::SessionRecord;
    ///
    /// let t0 = Instant::now();
    /// let record = SessionRecord::new(Vec::new(), t0);
    /// let idle = Duration::from_secs(60);
    /// assert!(!record.is_expired(t0 + idle, idle));
    /// assert!(record.is_expired(t0 + idle + Duration::from_millis(1), idle));
    /// ```
    #[must_use]
    pub fn is_expired(&self, now: Instant, idle_timeout: Duration) -> bool {
        now.saturating_duration_since(self.last_seen) > idle_timeout
    }
}

/// Why a [`SessionStore`] call failed.
///
/// # Examples
///
/// ```
/// use talaria_core::http::event_log::SessionStoreError;
///
/// let err = SessionStoreError::Backend("connection refused".into());
/// assert_eq!(err.to_string(), "session store backend: connection refused");
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SessionStoreError {
    /// The backing store failed (a network error, a corrupt record).
    #[error("session store backend: {0}")]
    Backend(#[source] Box<dyn core::error::Error + Send + Sync + 'static>),
}

/// Session records by session id: what lets a session continue in another server process.
///
/// The contract, which [`conformance::check_session_store`](crate::http::conformance::check_session_store)
/// checks:
///
/// - [`store`](SessionStore::store) inserts or replaces the record and sets its last-seen time;
///   [`touch`](SessionStore::touch) only sets the time. Last-seen never goes back: a `now`
///   earlier than the stored time leaves it (several processes' clocks may disagree slightly).
/// - [`load`](SessionStore::load) returns the record as stored, expired or not: expiry is the
///   caller's decision ([`SessionRecord::is_expired`]).
/// - [`expired`](SessionStore::expired) lists, in ascending order, the ids idle for longer than
///   the timeout; it removes nothing.
/// - [`delete`](SessionStore::delete) forgets the record and says whether there was one.
///
/// Times are `Instant`s, the core's only clock. A store shared between processes converts them
/// to wall-clock time with an anchor taken once in the adapter (an `Instant` and a `SystemTime`
/// read together), or maps [`touch`](SessionStore::touch) to its own expiry (a key TTL).
/// Methods take `&mut self` and may block; see the [module docs](super) for sharing and
/// blocking.
///
/// # Examples
///
/// ```
/// use std::time::{Duration, Instant};
/// use talaria_core::http::event_log::{MemorySessionStore, SessionStore};
///
/// fn sweep(store: &mut dyn SessionStore, now: Instant, idle: Duration) -> usize {
///     let ids = store.expired(now, idle).unwrap();
///     ids.iter().filter(|id| store.delete(id).unwrap()).count()
/// }
///
/// let t0 = Instant::now();
/// let mut store = MemorySessionStore::new();
/// store.store("a", b"snapshot a".to_vec(), t0).unwrap();
/// store.store("b", b"snapshot b".to_vec(), t0).unwrap();
/// store.touch("b", t0 + Duration::from_secs(50)).unwrap();
/// assert_eq!(sweep(&mut store, t0 + Duration::from_secs(61), Duration::from_secs(60)), 1);
/// assert!(store.load("a").unwrap().is_none());
/// assert!(store.load("b").unwrap().is_some());
/// ```
pub trait SessionStore {
    /// The record of `session`, if there is one.
    ///
    /// # Errors
    ///
    /// [`SessionStoreError::Backend`] if the store failed.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Instant;
    /// use talaria_core::http::event_log::{MemorySessionStore, SessionStore};
    ///
    /// let mut store = MemorySessionStore::new();
    /// assert!(store.load("a").unwrap().is_none());
    /// store.store("a", b"x".to_vec(), Instant::now()).unwrap();
    /// assert_eq!(store.load("a").unwrap().unwrap().data, b"x");
    /// ```
    fn load(&mut self, session: &str) -> Result<Option<SessionRecord>, SessionStoreError>;

    /// Inserts or replaces the record of `session` with `data`, seen at `now`.
    ///
    /// # Errors
    ///
    /// [`SessionStoreError::Backend`] if the store failed.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Instant;
    /// use talaria_core::http::event_log::{MemorySessionStore, SessionStore};
    ///
    /// let now = Instant::now();
    /// let mut store = MemorySessionStore::new();
    /// store.store("a", b"old".to_vec(), now).unwrap();
    /// store.store("a", b"new".to_vec(), now).unwrap();
    /// assert_eq!(store.load("a").unwrap().unwrap().data, b"new");
    /// ```
    fn store(&mut self, session: &str, data: Vec<u8>, now: Instant) -> Result<(), SessionStoreError>;

    /// Marks `session` used at `now`; returns whether it exists.
    ///
    /// # Errors
    ///
    /// [`SessionStoreError::Backend`] if the store failed.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::{Duration, Instant};
    /// use talaria_core::http::event_log::{MemorySessionStore, SessionStore};
    ///
    /// let t0 = Instant::now();
    /// let mut store = MemorySessionStore::new();
    /// assert!(!store.touch("a", t0).unwrap());
    /// store.store("a", Vec::new(), t0).unwrap();
    /// assert!(store.touch("a", t0 + Duration::from_secs(1)).unwrap());
    /// assert_eq!(store.load("a").unwrap().unwrap().last_seen, t0 + Duration::from_secs(1));
    /// ```
    fn touch(&mut self, session: &str, now: Instant) -> Result<bool, SessionStoreError>;

    /// Forgets the record of `session`; returns whether there was one.
    ///
    /// # Errors
    ///
    /// [`SessionStoreError::Backend`] if the store failed.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Instant;
    /// use talaria_core::http::event_log::{MemorySessionStore, SessionStore};
    ///
    /// let mut store = MemorySessionStore::new();
    /// store.store("a", Vec::new(), Instant::now()).unwrap();
    /// assert!(store.delete("a").unwrap());
    /// assert!(!store.delete("a").unwrap());
    /// ```
    fn delete(&mut self, session: &str) -> Result<bool, SessionStoreError>;

    /// The ids of the sessions idle for longer than `idle_timeout` at `now`, in ascending order.
    /// Nothing is removed.
    ///
    /// # Errors
    ///
    /// [`SessionStoreError::Backend`] if the store failed.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::{Duration, Instant};
    /// use talaria_core::http::event_log::{MemorySessionStore, SessionStore};
    ///
    /// let t0 = Instant::now();
    /// let mut store = MemorySessionStore::new();
    /// store.store("a", Vec::new(), t0).unwrap();
    /// let idle = Duration::from_secs(60);
    /// assert!(store.expired(t0 + idle, idle).unwrap().is_empty());
    /// assert_eq!(store.expired(t0 + idle * 2, idle).unwrap(), ["a"]);
    /// ```
    fn expired(&mut self, now: Instant, idle_timeout: Duration) -> Result<Vec<String>, SessionStoreError>;

    /// Marks `session` used at `now` and compares its record with `known`, the record this
    /// process holds: [`Refresh::Gone`] if there is none (deleted, by another process say),
    /// [`Refresh::Same`], or [`Refresh::Changed`] with the newer record another process
    /// stored. A store shared between processes answers it in one round trip; the default
    /// touches, then loads.
    ///
    /// # Errors
    ///
    /// [`SessionStoreError::Backend`] if the store failed.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Instant;
    /// use talaria_core::http::event_log::{MemorySessionStore, Refresh, SessionStore};
    ///
    /// let now = Instant::now();
    /// let mut store = MemorySessionStore::new();
    /// store.store("a", b"v1".to_vec(), now).unwrap();
    /// assert!(matches!(store.refresh("a", now, b"v1").unwrap(), Refresh::Same));
    /// store.store("a", b"v2".to_vec(), now).unwrap();
    /// assert!(matches!(store.refresh("a", now, b"v1").unwrap(), Refresh::Changed(r) if r.data == b"v2"));
    /// store.delete("a").unwrap();
    /// assert!(matches!(store.refresh("a", now, b"v2").unwrap(), Refresh::Gone));
    /// ```
    fn refresh(&mut self, session: &str, now: Instant, known: &[u8]) -> Result<Refresh, SessionStoreError> {
        if !self.touch(session, now)? {
            return Ok(Refresh::Gone);
        }
        Ok(match self.load(session)? {
            None => Refresh::Gone,
            Some(record) if record.data == known => Refresh::Same,
            Some(record) => Refresh::Changed(record),
        })
    }

    /// Stores `data` as the record of `session`, used at `now`, only if the record there is
    /// still `expected` (the one this process last stored or read): otherwise another process
    /// stored a newer one since, which it returns, and nothing is written. A session server
    /// merges the two and tries again, so that neither process's changes are lost.
    ///
    /// A store shared between processes must do it atomically, in one round trip. The default
    /// loads, compares and stores: atomic only for a store one process owns.
    ///
    /// # Errors
    ///
    /// [`SessionStoreError::Backend`] if the store failed.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Instant;
    /// use talaria_core::http::event_log::{MemorySessionStore, SessionStore, StoreIf};
    ///
    /// let now = Instant::now();
    /// let mut store = MemorySessionStore::new();
    /// store.store("a", b"v1".to_vec(), now).unwrap();
    /// assert_eq!(store.store_if("a", b"v2".to_vec(), b"v1", now).unwrap(), StoreIf::Stored);
    /// // Another process still holds v1: its write would undo v2.
    /// assert!(matches!(store.store_if("a", b"v3".to_vec(), b"v1", now).unwrap(), StoreIf::Changed(r) if r.data == b"v2"));
    /// store.delete("a").unwrap();
    /// assert_eq!(store.store_if("a", b"v3".to_vec(), b"v2", now).unwrap(), StoreIf::Gone);
    /// ```
    fn store_if(
        &mut self,
        session: &str,
        data: Vec<u8>,
        expected: &[u8],
        now: Instant,
    ) -> Result<StoreIf, SessionStoreError> {
        match self.load(session)? {
            None => Ok(StoreIf::Gone),
            Some(record) if record.data != expected => Ok(StoreIf::Changed(record)),
            Some(_) => {
                self.store(session, data, now)?;
                Ok(StoreIf::Stored)
            }
        }
    }

    /// Stores `data` as the first record of `session`, seen at `now`, only if it has none:
    /// [`StoreIf::Stored`] once written, [`StoreIf::Changed`] with the record found instead,
    /// [`StoreIf::Gone`] if the session was deleted (where the store can tell).
    ///
    /// The HTTP server writes a session's first record with it, so that a first write whose
    /// answer was lost, landing late, cannot replace a newer record another process wrote. A
    /// store shared between processes does it atomically, in one round trip; the default loads,
    /// then stores, which is atomic only for a store one process owns.
    ///
    /// # Errors
    ///
    /// [`SessionStoreError::Backend`] if the store failed.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Instant;
    /// use talaria_core::http::event_log::{MemorySessionStore, SessionStore, StoreIf};
    ///
    /// let now = Instant::now();
    /// let mut store = MemorySessionStore::new();
    /// assert_eq!(store.store_new("a", b"v1".to_vec(), now).unwrap(), StoreIf::Stored);
    /// store.store("a", b"v2".to_vec(), now).unwrap();
    /// // A late copy of the first write does not undo v2.
    /// assert!(matches!(store.store_new("a", b"v1".to_vec(), now).unwrap(), StoreIf::Changed(r) if r.data == b"v2"));
    /// ```
    fn store_new(&mut self, session: &str, data: Vec<u8>, now: Instant) -> Result<StoreIf, SessionStoreError> {
        if let Some(record) = self.load(session)? {
            return Ok(StoreIf::Changed(record));
        }
        self.store(session, data, now)?;
        Ok(StoreIf::Stored)
    }
}

/// What [`SessionStore::store_if`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum StoreIf {
    /// The record was the expected one: the new one is stored.
    Stored,
    /// Another process stored this newer record since: nothing was written.
    Changed(SessionRecord),
    /// No record: the session was deleted (or expired); nothing was written.
    Gone,
}

/// What [`SessionStore::refresh`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Refresh {
    /// No record: the session was deleted (or expired).
    Gone,
    /// The record is the one this process holds.
    Same,
    /// Another process stored a newer record.
    Changed(SessionRecord),
}

/// The in-memory [`SessionStore`]: an ordered map from session id to record.
///
/// Unbounded by itself: the session cap of the HTTP layer bounds it. [`expired`](SessionStore::expired)
/// scans every record.
///
/// # Examples
///
/// ```
/// use std::time::Instant;
/// use talaria_core::http::event_log::{MemorySessionStore, SessionStore};
///
/// let mut store = MemorySessionStore::new();
/// store.store("a", b"1234".to_vec(), Instant::now()).unwrap();
/// assert_eq!((store.len(), store.bytes()), (1, 4));
/// ```
#[derive(Debug, Clone, Default)]
pub struct MemorySessionStore {
    records: BTreeMap<String, SessionRecord>,
    bytes: usize,
}

impl MemorySessionStore {
    /// An empty store.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::http::event_log::MemorySessionStore;
    ///
    /// assert!(MemorySessionStore::new().is_empty());
    /// ```
    #[must_use]
    pub const fn new() -> Self {
        Self { records: BTreeMap::new(), bytes: 0 }
    }

    /// How many records the store holds.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Instant;
    /// use talaria_core::http::event_log::{MemorySessionStore, SessionStore};
    ///
    /// let mut store = MemorySessionStore::new();
    /// store.store("a", Vec::new(), Instant::now()).unwrap();
    /// assert_eq!(store.len(), 1);
    /// ```
    #[must_use]
    pub fn len(&self) -> usize {
        self.records.len()
    }

    /// Whether the store holds no record.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Instant;
    /// use talaria_core::http::event_log::{MemorySessionStore, SessionStore};
    ///
    /// let mut store = MemorySessionStore::new();
    /// store.store("a", Vec::new(), Instant::now()).unwrap();
    /// store.delete("a").unwrap();
    /// assert!(store.is_empty());
    /// ```
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    /// How many record bytes the store holds (the `data` of every record).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Instant;
    /// use talaria_core::http::event_log::{MemorySessionStore, SessionStore};
    ///
    /// let now = Instant::now();
    /// let mut store = MemorySessionStore::new();
    /// store.store("a", b"123".to_vec(), now).unwrap();
    /// store.store("a", b"12".to_vec(), now).unwrap();
    /// assert_eq!(store.bytes(), 2);
    /// ```
    #[must_use]
    pub const fn bytes(&self) -> usize {
        self.bytes
    }
}

impl SessionStore for MemorySessionStore {
    fn load(&mut self, session: &str) -> Result<Option<SessionRecord>, SessionStoreError> {
        Ok(self.records.get(session).cloned())
    }

    fn store(&mut self, session: &str, data: Vec<u8>, now: Instant) -> Result<(), SessionStoreError> {
        self.bytes += data.len();
        if let Some(record) = self.records.get_mut(session) {
            self.bytes -= record.data.len();
            record.data = data;
            record.last_seen = record.last_seen.max(now);
        } else {
            self.records.insert(session.to_owned(), SessionRecord::new(data, now));
        }
        Ok(())
    }

    fn touch(&mut self, session: &str, now: Instant) -> Result<bool, SessionStoreError> {
        let Some(record) = self.records.get_mut(session) else { return Ok(false) };
        record.last_seen = record.last_seen.max(now);
        Ok(true)
    }

    fn delete(&mut self, session: &str) -> Result<bool, SessionStoreError> {
        let Some(record) = self.records.remove(session) else { return Ok(false) };
        self.bytes -= record.data.len();
        Ok(true)
    }

    fn expired(&mut self, now: Instant, idle_timeout: Duration) -> Result<Vec<String>, SessionStoreError> {
        Ok(self
            .records
            .iter()
            .filter(|(_, record)| record.is_expired(now, idle_timeout))
            .map(|(id, _)| id.clone())
            .collect())
    }
}
