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
    /// (expiry, id), ordered by expiry.
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

    fn expiry(&self, last_seen: Instant) -> Instant {
        last_seen.checked_add(self.idle).unwrap_or(last_seen)
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
        if let Some(old) = self.entries.insert(id.clone(), Entry { value, last_seen: now }) {
            self.deadlines.remove(&(self.expiry(old.last_seen), id.clone()));
        }
        self.deadlines.insert((self.expiry(now), id));
        Ok(())
    }

    /// The session `id`, touched (its idle time starts again at `now`).
    pub fn get_mut(&mut self, id: &str, now: Instant) -> Option<&mut T> {
        let entry = self.entries.get_mut(id)?;
        let old = entry.last_seen.checked_add(self.idle).unwrap_or(entry.last_seen);
        let new = now.checked_add(self.idle).unwrap_or(now);
        if new != old {
            self.deadlines.remove(&(old, id.to_owned()));
            self.deadlines.insert((new, id.to_owned()));
            entry.last_seen = now;
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
        self.deadlines.remove(&(self.expiry(entry.last_seen), id.to_owned()));
        Some(entry.value)
    }

    /// When the next session expires, if any.
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.deadlines.first().map(|(at, _)| *at)
    }

    /// Removes and returns every session idle past its expiry at `now` (everything it held is
    /// the caller's to drop).
    pub fn expire(&mut self, now: Instant) -> Vec<(String, T)> {
        let mut expired = Vec::new();
        while let Some((at, _)) = self.deadlines.first() {
            if *at >= now {
                break;
            }
            let Some((_, id)) = self.deadlines.pop_first() else { break };
            if let Some(entry) = self.entries.remove(&id) {
                expired.push((id, entry.value));
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
        /// (by `remove` or `expire`), and the deadline index matches the entries.
        #[test]
        fn sessions_end_exactly_once(ops in proptest::collection::vec((0u8..4, 0u8..6, 0u64..100), 1..100)) {
            let start = t0();
            let mut table = SessionTable::new(Duration::from_secs(20), 4);
            let mut ended = BTreeMap::<String, u32>::new();
            let mut now = start;
            for (op, key, dt) in ops {
                now += Duration::from_secs(dt % 10);
                let id = format!("s{key}");
                match op {
                    0 => { let _ = table.insert(id, (), now); }
                    1 => { table.get_mut(&id, now); }
                    2 => if table.remove(&id).is_some() { *ended.entry(id).or_default() += 1 },
                    _ => for (id, ()) in table.expire(now) { *ended.entry(id).or_default() += 1 },
                }
                prop_assert_eq!(table.deadlines.len(), table.entries.len());
                prop_assert!(table.len() <= 4);
                for id in table.ids() {
                    prop_assert!(table.entries[id].last_seen <= now);
                }
            }
            prop_assert!(table.expire(now + Duration::from_secs(1000)).len() == table.entries.len() || table.is_empty());
        }
    }
}
