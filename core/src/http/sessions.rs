//! The live sessions of an HTTP server: looked up by id, touched on use, expired when idle
//! (a timer deadline, no clock of its own), capped in number, in total and for each owner (the
//! peer or caller that opened them).
//!
//! Under pressure the table makes room rather than refuse everyone ([`SessionTable::admit`]):
//! a new session past its owner's cap replaces that owner's least useful session, and one past
//! the total cap replaces a session never used since it was opened, or else the least recently
//! used one if it has been idle for [`EVICTABLE_AFTER`]. So one peer that opens sessions by the
//! thousand pushes out only its own, or sessions nobody uses.

use crate::alloc_prelude::*;
use crate::time::{Duration, Instant};
use alloc::collections::{BTreeMap, BTreeSet};

/// How long a session that has been used must have been idle before a new session may take
/// its place in a full table.
pub const EVICTABLE_AFTER: Duration = Duration::from_secs(1);

/// The table is full: a new session would exceed the cap (HTTP 503).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("too many sessions (at most {0})")]
pub struct TableFull(pub usize);

struct Entry<T> {
    value: T,
    /// When it was opened (its key in `fresh` while unused).
    opened: Instant,
    last_seen: Instant,
    /// Whether it has been used (looked up with [`SessionTable::get_mut`]) since it was opened.
    used: bool,
    /// Who opened it, if the table counts sessions per owner.
    owner: Option<Box<str>>,
    /// The expiry this session is filed under in `deadlines`: its expiry when it was filed.
    /// A touch only moves `last_seen`; a session found touched when its filed expiry comes is
    /// filed again, so a request costs no work on the deadline index. `None`: an idle time so
    /// long that its end is past what an `Instant` can hold, so the session never expires.
    filed: Option<Instant>,
}

/// Sessions by id, with idle expiry.
///
/// # Examples
///
/// ```
/// use std::time::{Duration, Instant};
/// use talaria_core::http::sessions::SessionTable;
///
/// let t0 = Instant::now();
/// let mut table = SessionTable::new(Duration::from_secs(60), 100);
/// table.insert("a".into(), "state of a", t0).unwrap();
/// assert_eq!(table.poll_timeout(), Some(t0 + Duration::from_secs(60)));
/// assert!(table.get_mut("a", t0 + Duration::from_secs(30)).is_some()); // touched
/// assert!(table.expire(t0 + Duration::from_secs(61)).is_empty());
/// assert_eq!(table.expire(t0 + Duration::from_secs(91)), vec![("a".to_owned(), "state of a")]);
/// ```
pub struct SessionTable<T> {
    entries: BTreeMap<String, Entry<T>>,
    /// (filed expiry, id), ordered by expiry: a session expires at or after the time it is
    /// filed under, never before.
    deadlines: BTreeSet<(Instant, String)>,
    /// (opened, id) of the sessions never used since they were opened, oldest first.
    fresh: BTreeSet<(Instant, String)>,
    /// The ids of each owner's sessions.
    owners: BTreeMap<Box<str>, BTreeSet<String>>,
    idle: Duration,
    max: usize,
    per_owner: usize,
}

impl<T> core::fmt::Debug for SessionTable<T> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("SessionTable").field("len", &self.entries.len()).field("idle", &self.idle).finish()
    }
}

impl<T> SessionTable<T> {
    /// An empty table: sessions expire after `idle` without use; at most `max` at once.
    #[must_use]
    pub const fn new(idle: Duration, max: usize) -> Self {
        Self {
            entries: BTreeMap::new(),
            deadlines: BTreeSet::new(),
            fresh: BTreeSet::new(),
            owners: BTreeMap::new(),
            idle,
            max,
            per_owner: usize::MAX,
        }
    }

    /// At most `per_owner` sessions for each owner (see [`SessionTable::admit`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::{Duration, Instant};
    /// use talaria_core::http::sessions::SessionTable;
    ///
    /// let now = Instant::now();
    /// let mut table = SessionTable::new(Duration::from_secs(60), 100).per_owner(2);
    /// for id in ["a", "b", "c"] {
    ///     table.admit(id.into(), (), Some("10.0.0.7"), now).unwrap();
    /// }
    /// assert_eq!(table.len(), 2, "the owner's oldest unused session made room");
    /// assert!(!table.contains("a"));
    /// ```
    #[must_use]
    pub const fn per_owner(mut self, per_owner: usize) -> Self {
        self.per_owner = per_owner;
        self
    }

    /// When a session last seen at `last_seen` expires; `None` if never (`idle` is longer than
    /// an `Instant` can count).
    fn expiry(idle: Duration, last_seen: Instant) -> Option<Instant> {
        last_seen.checked_add(idle)
    }

    /// Adds a session with no owner, refusing it if the table is full.
    ///
    /// # Errors
    ///
    /// [`TableFull`] if the table holds `max` sessions already.
    pub fn insert(&mut self, id: String, value: T, now: Instant) -> Result<(), TableFull> {
        if self.entries.len() >= self.max && !self.entries.contains_key(&id) {
            return Err(TableFull(self.max));
        }
        self.put(id, value, None, now);
        Ok(())
    }

    /// Adds a session opened by `owner` (a peer address, or the caller's identity), making
    /// room if needed: past the owner's cap, the owner's oldest unused session (or else its
    /// least recently used) goes; in a full table, the oldest session never used, or else the
    /// least recently used if idle for [`EVICTABLE_AFTER`]. The sessions that went, for the
    /// caller to end.
    ///
    /// # Errors
    ///
    /// [`TableFull`] if the table is full and every session in it is in use.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::{Duration, Instant};
    /// use talaria_core::http::sessions::SessionTable;
    ///
    /// let t0 = Instant::now();
    /// let mut table = SessionTable::new(Duration::from_secs(60), 2);
    /// table.admit("used".into(), 1, Some("10.0.0.1"), t0).unwrap();
    /// table.admit("unused".into(), 2, Some("10.0.0.2"), t0).unwrap();
    /// table.get_mut("used", t0);
    /// let evicted = table.admit("new".into(), 3, Some("10.0.0.3"), t0).unwrap();
    /// assert_eq!(evicted, vec![("unused".to_owned(), 2)]);
    /// table.get_mut("new", t0);
    /// assert!(table.admit("newer".into(), 4, None, t0).is_err(), "the rest are in use");
    /// ```
    pub fn admit(
        &mut self,
        id: String,
        value: T,
        owner: Option<&str>,
        now: Instant,
    ) -> Result<Vec<(String, T)>, TableFull> {
        // A session of the same id is replaced (its value dropped), and counted afresh.
        drop(self.remove(&id));
        let mut evicted = Vec::new();
        if let Some(owner) = owner {
            if self.owners.get(owner).is_some_and(|ids| ids.len() >= self.per_owner) {
                if let Some(victim) = self.owners_least_useful(owner) {
                    evicted.extend(self.remove(&victim).map(|value| (victim, value)));
                }
            }
        }
        if self.entries.len() >= self.max {
            let Some(victim) = self.evictable(now) else { return Err(TableFull(self.max)) };
            evicted.extend(self.remove(&victim).map(|value| (victim, value)));
        }
        self.put(id, value, owner, now);
        Ok(evicted)
    }

    /// Files a session (replacing one of the same id).
    fn put(&mut self, id: String, value: T, owner: Option<&str>, now: Instant) {
        drop(self.remove(&id));
        let filed = Self::expiry(self.idle, now);
        if let Some(owner) = owner {
            self.owners.entry(owner.into()).or_default().insert(id.clone());
        }
        self.fresh.insert((now, id.clone()));
        if let Some(at) = filed {
            self.deadlines.insert((at, id.clone()));
        }
        let owner = owner.map(Into::into);
        self.entries.insert(id, Entry { value, opened: now, last_seen: now, used: false, owner, filed });
    }

    /// The owner's session to give up first: its oldest unused, or else its least recently
    /// used.
    fn owners_least_useful(&self, owner: &str) -> Option<String> {
        let ids = self.owners.get(owner)?;
        let rank = |entry: &Entry<T>| (entry.used, if entry.used { entry.last_seen } else { entry.opened });
        ids.iter().filter_map(|id| Some((rank(self.entries.get(id)?), id))).min().map(|(_, id)| id.clone())
    }

    /// The session a full table gives up for a new one at `now`, if any may go: the oldest
    /// never used, or else the least recently used if idle for [`EVICTABLE_AFTER`].
    fn evictable(&mut self, now: Instant) -> Option<String> {
        if let Some((_, id)) = self.fresh.first() {
            return Some(id.clone());
        }
        let id = self.least_recently_used()?;
        let idle_since = self.entries.get(&id)?.last_seen;
        (now.saturating_duration_since(idle_since) >= EVICTABLE_AFTER).then_some(id)
    }

    /// The session used least recently (of those that can expire): the first in the deadline
    /// index not touched since it was filed; those touched are filed again on the way, as
    /// [`SessionTable::expire`] does.
    fn least_recently_used(&mut self) -> Option<String> {
        loop {
            let (at, id) = self.deadlines.first()?.clone();
            let entry = self.entries.get_mut(&id)?;
            let expiry = Self::expiry(self.idle, entry.last_seen);
            if expiry == Some(at) {
                return Some(id);
            }
            self.deadlines.pop_first();
            entry.filed = expiry;
            if let Some(expiry) = expiry {
                self.deadlines.insert((expiry, id));
            }
        }
    }

    /// The session `id`, touched (its idle time starts again at `now`). A touch allocates
    /// nothing and leaves the deadline index alone (see [`SessionTable::expire`]).
    pub fn get_mut(&mut self, id: &str, now: Instant) -> Option<&mut T> {
        let entry = self.entries.get_mut(id)?;
        entry.last_seen = entry.last_seen.max(now);
        if !entry.used {
            // Its first use: it is no longer a candidate for eviction as never used.
            entry.used = true;
            self.fresh.remove(&(entry.opened, id.to_owned()));
        }
        Some(&mut entry.value)
    }

    /// The session `id`, untouched.
    #[must_use]
    pub fn get(&self, id: &str) -> Option<&T> {
        self.entries.get(id).map(|e| &e.value)
    }

    /// Whether session `id` exists.
    #[must_use]
    pub fn contains(&self, id: &str) -> bool {
        self.entries.contains_key(id)
    }

    /// Removes session `id` (DELETE, or the application closing it).
    pub fn remove(&mut self, id: &str) -> Option<T> {
        let entry = self.entries.remove(id)?;
        if let Some(at) = entry.filed {
            self.deadlines.remove(&(at, id.to_owned()));
        }
        self.unlink(id, &entry);
        Some(entry.value)
    }

    /// Drops a removed entry from the indexes other than the deadlines.
    fn unlink(&mut self, id: &str, entry: &Entry<T>) {
        if !entry.used {
            self.fresh.remove(&(entry.opened, id.to_owned()));
        }
        if let Some(owner) = &entry.owner {
            if let Some(ids) = self.owners.get_mut(owner) {
                ids.remove(id);
                if ids.is_empty() {
                    self.owners.remove(owner);
                }
            }
        }
    }

    /// When to call [`SessionTable::expire`] next, if any session is live: the earliest
    /// expiry a session is filed under. A session touched since it was filed does not expire
    /// then; it is filed again under its new expiry.
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.deadlines.first().map(|(at, _)| *at)
    }

    /// Removes and returns every session idle past its expiry at `now` (everything it held is
    /// the caller's to drop); files again the sessions touched since they were filed.
    pub fn expire(&mut self, now: Instant) -> Vec<(String, T)> {
        let mut expired = Vec::new();
        while let Some((at, _)) = self.deadlines.first() {
            if *at >= now {
                break;
            }
            let Some((_, id)) = self.deadlines.pop_first() else { break };
            let Some(entry) = self.entries.get_mut(&id) else { continue };
            match Self::expiry(self.idle, entry.last_seen) {
                Some(expiry) if expiry < now => {
                    if let Some(entry) = self.entries.remove(&id) {
                        self.unlink(&id, &entry);
                        expired.push((id, entry.value));
                    }
                }
                Some(expiry) => {
                    entry.filed = Some(expiry);
                    self.deadlines.insert((expiry, id));
                }
                None => entry.filed = None,
            }
        }
        expired
    }

    /// How many sessions are live.
    #[must_use]
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no session is live.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The ids of the live sessions.
    pub fn ids(&self) -> impl Iterator<Item = &str> {
        self.entries.keys().map(String::as_str)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use proptest::prelude::*;

    use super::*;
    use crate::test_clock::t0;

    #[test]
    fn the_cap_refuses_new_sessions_but_not_replacements() {
        let now = t0();
        let mut table = SessionTable::new(Duration::from_secs(1), 2);
        table.insert("a".into(), 1, now).unwrap();
        table.insert("b".into(), 2, now).unwrap();
        assert_eq!(table.insert("c".into(), 3, now), Err(TableFull(2)));
        table.insert("a".into(), 10, now).unwrap();
        assert_eq!(table.get("a"), Some(&10));
        assert_eq!(table.remove("b"), Some(2));
        table.insert("c".into(), 3, now).unwrap();
        assert_eq!(table.len(), 2);
    }

    #[test]
    fn a_full_table_gives_up_unused_sessions_then_long_idle_ones_but_not_busy_ones() {
        let now = t0();
        let mut table = SessionTable::new(Duration::from_secs(60), 3);
        for id in ["a", "b", "c"] {
            table.admit(id.into(), id, Some(id), now).unwrap();
        }
        table.get_mut("a", now);
        table.get_mut("c", now);
        let evicted = table.admit("d".into(), "d", Some("d"), now).unwrap();
        assert_eq!(evicted, vec![("b".to_owned(), "b")], "the unused one goes first");
        table.get_mut("d", now + Duration::from_millis(10));
        assert_eq!(table.admit("e".into(), "e", None, now + Duration::from_millis(500)), Err(TableFull(3)));
        table.get_mut("a", now + Duration::from_millis(100));
        let later = now + Duration::from_secs(2);
        table.get_mut("a", later);
        let evicted = table.admit("e".into(), "e", None, later).unwrap();
        assert_eq!(evicted, vec![("c".to_owned(), "c")], "the least recently used, idle for long enough");
        assert_eq!(table.len(), 3);
    }

    #[test]
    fn one_owner_past_its_cap_replaces_its_own_sessions() {
        let now = t0();
        let mut table = SessionTable::new(Duration::from_secs(60), 100).per_owner(3);
        table.admit("other".into(), (), Some("10.0.0.2"), now).unwrap();
        for n in 0..50 {
            table.admit(format!("flood{n}"), (), Some("10.0.0.1"), now + Duration::from_millis(n)).unwrap();
        }
        assert_eq!(table.len(), 4);
        assert!(table.contains("other"), "another owner's session stays");
        assert!(table.contains("flood49") && table.contains("flood48") && table.contains("flood47"));
        table.get_mut("flood47", now + Duration::from_secs(1));
        let evicted = table.admit("flood50".into(), (), Some("10.0.0.1"), now + Duration::from_secs(1)).unwrap();
        assert_eq!(evicted, vec![("flood48".to_owned(), ())], "its oldest unused goes, not the one in use");
    }

    #[test]
    fn an_idle_time_past_what_an_instant_holds_never_expires() {
        let now = t0();
        let mut table = SessionTable::new(Duration::MAX, 10);
        table.insert("a".into(), (), now).unwrap();
        assert_eq!(table.poll_timeout(), None, "no timer for a session that never expires");
        assert!(table.expire(now + Duration::from_secs(365 * 24 * 3600)).is_empty());
        assert!(table.get_mut("a", now + Duration::from_secs(1)).is_some());
        assert_eq!(table.remove("a"), Some(()));
        assert!(table.is_empty());
    }

    #[test]
    fn touching_postpones_expiry() {
        let now = t0();
        let idle = Duration::from_secs(10);
        let mut table = SessionTable::new(idle, 10);
        table.insert("a".into(), (), now).unwrap();
        table.insert("b".into(), (), now).unwrap();
        table.get_mut("b", now + Duration::from_secs(5));
        assert_eq!(table.poll_timeout(), Some(now + idle));
        let gone: Vec<_> = table.expire(now + Duration::from_secs(11)).into_iter().map(|(id, ())| id).collect();
        assert_eq!(gone, vec!["a"]);
        assert_eq!(table.poll_timeout(), Some(now + Duration::from_secs(15)));
        assert!(table.expire(now + Duration::from_secs(16)).len() == 1);
        assert!(table.is_empty());
        assert_eq!(table.poll_timeout(), None, "nothing left to wake for");
    }

    proptest! {
        /// Whatever the operations, every session is either live or was returned exactly once
        /// (by `remove` or `expire`), the deadline index matches the entries, and `expire`
        /// removes exactly the sessions idle past their expiry (against a model of the last
        /// touch of each).
        #[test]
        fn sessions_end_exactly_once_and_on_time(ops in proptest::collection::vec((0u8..5, 0u8..6, 0u64..100), 1..100)) {
            let start = t0();
            let idle = Duration::from_secs(20);
            let mut table = SessionTable::new(idle, 4).per_owner(2);
            let mut ended = BTreeMap::<String, u32>::new();
            let mut touched = BTreeMap::<String, Instant>::new();
            let mut now = start;
            for (op, key, dt) in ops {
                now += Duration::from_secs(dt % 10);
                let id = format!("s{key}");
                match op {
                    0 => if table.insert(id.clone(), (), now).is_ok() { touched.insert(id, now); },
                    4 => {
                        let owner = if key % 2 == 0 { "even" } else { "odd" };
                        if let Ok(evicted) = table.admit(id.clone(), (), Some(owner), now) {
                            for (gone, ()) in evicted {
                                prop_assert!(gone != id, "a session evicted for itself");
                                touched.remove(&gone);
                                *ended.entry(gone).or_default() += 1;
                            }
                            touched.insert(id, now);
                        }
                    }
                    1 => if table.get_mut(&id, now).is_some() { touched.insert(id, now); },
                    2 => if table.remove(&id).is_some() {
                        *ended.entry(id.clone()).or_default() += 1;
                        touched.remove(&id);
                    },
                    _ => {
                        for (id, ()) in table.expire(now) {
                            let last = touched.remove(&id).unwrap();
                            prop_assert!(last + idle < now, "{} expired early", id);
                            *ended.entry(id).or_default() += 1;
                        }
                        for (id, last) in &touched {
                            prop_assert!(*last + idle >= now, "{} outlived its expiry", id);
                        }
                    }
                }
                prop_assert_eq!(table.deadlines.len(), table.entries.len());
                prop_assert_eq!(table.len(), touched.len());
                prop_assert_eq!(table.fresh.len(), table.entries.values().filter(|e| !e.used).count());
                prop_assert!(table.fresh.iter().all(|(_, id)| table.entries.contains_key(id)));
                let owned: usize = table.owners.values().map(BTreeSet::len).sum();
                prop_assert_eq!(owned, table.entries.values().filter(|e| e.owner.is_some()).count());
                prop_assert!(table.owners.values().all(|ids| ids.len() <= 2 && !ids.is_empty()));
                prop_assert!(table.len() <= 4);
                for id in table.ids() {
                    prop_assert!(table.entries[id].last_seen <= now);
                    let next = table.poll_timeout().unwrap();
                    prop_assert!(next <= table.entries[id].last_seen + idle, "the timer would ring late");
                }
            }
            prop_assert!(table.expire(now + Duration::from_secs(1000)).len() == table.entries.len() || table.is_empty());
        }
    }
}
