//! The live sessions of an HTTP server: looked up by id, touched on use, expired when idle
//! (a timer deadline, no clock of its own), capped in number.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

/// The table is full: a new session would exceed the cap (HTTP 503).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("too many sessions (at most {0})")]
pub struct TableFull(pub usize);

struct Entry<T> {
    value: T,
    last_seen: Instant,
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
    idle: Duration,
    max: usize,
}

impl<T> std::fmt::Debug for SessionTable<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionTable").field("len", &self.entries.len()).field("idle", &self.idle).finish()
    }
}

impl<T> SessionTable<T> {
    /// An empty table: sessions expire after `idle` without use; at most `max` at once.
    #[must_use]
    pub const fn new(idle: Duration, max: usize) -> Self {
        Self { entries: BTreeMap::new(), deadlines: BTreeSet::new(), idle, max }
    }

    /// When a session last seen at `last_seen` expires; `None` if never (`idle` is longer than
    /// an `Instant` can count).
    fn expiry(idle: Duration, last_seen: Instant) -> Option<Instant> {
        last_seen.checked_add(idle)
    }

    /// Adds a session.
    ///
    /// # Errors
    ///
    /// [`TableFull`] if the table holds `max` sessions already.
    pub fn insert(&mut self, id: String, value: T, now: Instant) -> Result<(), TableFull> {
        if self.entries.len() >= self.max && !self.entries.contains_key(&id) {
            return Err(TableFull(self.max));
        }
        let filed = Self::expiry(self.idle, now);
        if let Some(Entry { filed: Some(old), .. }) =
            self.entries.insert(id.clone(), Entry { value, last_seen: now, filed })
        {
            self.deadlines.remove(&(old, id.clone()));
        }
        if let Some(at) = filed {
            self.deadlines.insert((at, id));
        }
        Ok(())
    }

    /// The session `id`, touched (its idle time starts again at `now`). A touch allocates
    /// nothing and leaves the deadline index alone (see [`SessionTable::expire`]).
    pub fn get_mut(&mut self, id: &str, now: Instant) -> Option<&mut T> {
        let entry = self.entries.get_mut(id)?;
        entry.last_seen = entry.last_seen.max(now);
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
        Some(entry.value)
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
        fn sessions_end_exactly_once_and_on_time(ops in proptest::collection::vec((0u8..4, 0u8..6, 0u64..100), 1..100)) {
            let start = t0();
            let idle = Duration::from_secs(20);
            let mut table = SessionTable::new(idle, 4);
            let mut ended = BTreeMap::<String, u32>::new();
            let mut touched = BTreeMap::<String, Instant>::new();
            let mut now = start;
            for (op, key, dt) in ops {
                now += Duration::from_secs(dt % 10);
                let id = format!("s{key}");
                match op {
                    0 => if table.insert(id.clone(), (), now).is_ok() { touched.insert(id, now); },
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
