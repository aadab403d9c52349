//! A session's record as the session store holds it: the snapshot, and the lineage of writes
//! it descends from ([`SessionSnapshot::writes`]).
//!
//! A store shared between processes writes a record only over the one expected
//! ([`SessionStore::store_if`]), so its records form one line, each made from the one before
//! it. Each record this process stores names its own write after those of the record it
//! replaces. A write that failed in a way that leaves open whether it landed (a timeout after
//! the store ran it) is then settled by any later record: if that record names the write, it
//! holds the write's changes, even if another process merged its own over them since.
//!
//! [`SessionStore::store_if`]: talaria_core::http::event_log::SessionStore::store_if

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

use talaria_core::session::SessionSnapshot;

/// How many of the latest writes a stored record names: a write in doubt is recognised while
/// fewer than this many other writes landed after it.
const LINEAGE: usize = 8;

/// A session record as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Stored {
    /// The bytes in the store: the snapshot with its lineage.
    pub(super) bytes: Vec<u8>,
    /// The snapshot without its lineage, as a live session's snapshot is written: what one is
    /// compared with to tell whether the session changed.
    pub(super) plain: Vec<u8>,
    /// The writes it descends from, oldest first; the last is the one that stored it.
    writes: Vec<String>,
}

impl Stored {
    /// A record read from the store, with the snapshot it holds (without its lineage): `None`
    /// if it is not a session snapshot.
    pub(super) fn read(bytes: Vec<u8>) -> Option<(Self, SessionSnapshot)> {
        let mut snapshot: SessionSnapshot = serde_json::from_slice(&bytes).ok()?;
        let writes = std::mem::take(&mut snapshot.writes);
        let plain = serde_json::to_vec(&snapshot).ok()?;
        Some((Self { bytes, plain, writes }, snapshot))
    }

    /// The record to store for `plain`, a live session's snapshot (with no lineage), written
    /// over `after` (`None` for a session's first record): named by a new write, after the
    /// writes `after` descends from.
    pub(super) fn stamp(plain: Vec<u8>, after: Option<&Self>) -> Self {
        let mut writes = after.map(|after| after.writes.clone()).unwrap_or_default();
        writes.push(next_write());
        if writes.len() > LINEAGE {
            writes.drain(..writes.len() - LINEAGE);
        }
        let bytes = with_writes(&plain, &writes);
        Self { bytes, plain, writes }
    }

    /// Whether this record holds `other`'s write: it descends from it (or is it).
    pub(super) fn holds(&self, other: &Self) -> bool {
        other.writes.last().is_some_and(|write| self.writes.contains(write))
    }

    /// Whether this record, a write whose outcome is in doubt, may still land over `current`,
    /// the record the store holds: it was written over `current` (a store writes it only
    /// there, and no record comes back once replaced: each names a new write).
    pub(super) fn may_land_over(&self, current: &Self) -> bool {
        let written_over = self.writes.len().checked_sub(2).map(|before| &self.writes[before]);
        written_over == current.writes.last()
    }
}

/// `plain`, a JSON object without a `writes` member, with `writes` added as its last member.
fn with_writes(plain: &[u8], writes: &[String]) -> Vec<u8> {
    let Some((b'}', members)) = plain.split_last() else {
        // Not an object: no snapshot serializes so. Stored without a lineage, it is never
        // taken for another's write.
        return plain.to_vec();
    };
    let list = serde_json::to_vec(writes).unwrap_or_else(|_| b"[]".to_vec());
    let mut bytes = Vec::with_capacity(plain.len() + list.len() + 12);
    bytes.extend_from_slice(members);
    if members != b"{" {
        bytes.push(b',');
    }
    bytes.extend_from_slice(b"\"writes\":");
    bytes.extend_from_slice(&list);
    bytes.push(b'}');
    bytes
}

/// What the store holds of a session, as far as this process knows.
#[derive(Debug, Default)]
pub(super) struct Saved {
    /// The record last written to (or read from) the store.
    record: Option<Stored>,
    /// Records whose writes failed in a way that leaves open whether they landed (a timeout
    /// after the script ran), oldest first. A record found in the store later that holds one
    /// (see [`Stored::holds`]) already has this process's changes up to it: only those made
    /// since are merged into it (merging from an older base would count them twice). Each
    /// later one has the changes of those before it.
    in_doubt: Vec<Stored>,
}

/// The most writes in doubt a session remembers (each failed write adds one until a record
/// is stored or read).
const MAX_IN_DOUBT: usize = 8;

impl Saved {
    /// The record last written to (or read from) the store.
    pub(super) const fn record(&self) -> Option<&Stored> {
        self.record.as_ref()
    }

    /// The record the store should hold: the last written or read, else one whose write may
    /// have landed.
    pub(super) fn base(&self) -> Option<Stored> {
        self.record.clone().or_else(|| self.in_doubt.last().cloned())
    }

    /// The store holds `record`, and the live session has everything in it. The writes in
    /// doubt that `record` holds are settled, as are those that can no longer land (written
    /// over another record); one written over `record` itself may still land (a command
    /// that timed out may yet run), and is kept.
    pub(super) fn set(&mut self, record: Stored) {
        self.in_doubt.retain(|doubt| !record.holds(doubt) && doubt.may_land_over(&record));
        self.record = Some(record);
    }

    /// The write of `record` failed: it may have landed.
    pub(super) fn doubt(&mut self, record: Stored) {
        if self.in_doubt.len() == MAX_IN_DOUBT {
            self.in_doubt.remove(0);
        }
        self.in_doubt.push(record);
    }

    /// What to merge `found`, a newer record in the store, against: this process's latest
    /// write in doubt that `found` holds (the live session's changes up to it are in `found`
    /// already), else `known`, the record the live session last went on from.
    pub(super) fn merge_base(&self, found: &Stored, known: Stored) -> Stored {
        self.in_doubt.iter().rev().find(|doubt| found.holds(doubt)).cloned().unwrap_or(known)
    }
}

/// A name no other write is likely to have: this process's random prefix and a count.
fn next_write() -> String {
    static PROCESS: OnceLock<String> = OnceLock::new();
    static COUNT: AtomicU64 = AtomicU64::new(0);
    let process = PROCESS.get_or_init(|| {
        super::processes::process_prefix().unwrap_or_else(|| {
            // No randomness: the process id and the time it started writing.
            let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
            format!("{}.{:x}-", std::process::id(), nanos.as_nanos())
        })
    });
    format!("{process}{:x}", COUNT.fetch_add(1, Ordering::Relaxed))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    const SNAPSHOT: &str = r#"{"version":"2025-06-18","clientInfo":{"name":"c","version":"1"},"clientCapabilities":{},"nextRequestId":0,"app":{"count":3}}"#;

    fn plain() -> Vec<u8> {
        // As a live session's snapshot is written.
        let snapshot: SessionSnapshot = serde_json::from_str(SNAPSHOT).unwrap();
        serde_json::to_vec(&snapshot).unwrap()
    }

    #[test]
    fn a_stamped_record_reads_back_as_the_same_snapshot_and_lineage() {
        let first = Stored::stamp(plain(), None);
        let second = Stored::stamp(plain(), Some(&first));
        let read = Stored::read(second.bytes.clone()).unwrap().0;
        assert_eq!(read, second);
        assert_eq!(read.plain, plain());
        assert_eq!(read.writes.len(), 2);
        assert_eq!(read.writes[0], first.writes[0], "the lineage goes on from the record written over");
        assert_ne!(read.writes[0], read.writes[1], "each write has a name of its own");
    }

    #[test]
    fn a_record_holds_the_writes_it_descends_from_and_no_other() {
        let base = Stored::stamp(plain(), None);
        let ours = Stored::stamp(plain(), Some(&base));
        let theirs_over_ours = Stored::stamp(plain(), Some(&ours));
        let theirs_over_base = Stored::stamp(plain(), Some(&base));
        assert!(ours.holds(&ours));
        assert!(theirs_over_ours.holds(&ours));
        assert!(theirs_over_ours.holds(&base));
        assert!(!theirs_over_base.holds(&ours), "a sibling does not hold our write");
        assert!(!base.holds(&ours), "nor does the record ours was written over");
    }

    #[test]
    fn a_write_may_land_only_over_the_record_it_was_written_over() {
        let base = Stored::stamp(plain(), None);
        let ours = Stored::stamp(plain(), Some(&base));
        let theirs = Stored::stamp(plain(), Some(&base));
        assert!(ours.may_land_over(&base));
        assert!(!ours.may_land_over(&theirs), "the store moved on: ours can no longer land");
        assert!(!ours.may_land_over(&ours));
        assert!(
            Stored::stamp(plain(), None).may_land_over(&Stored::read(SNAPSHOT.into()).unwrap().0),
            "a first record lands over one naming no write"
        );
    }

    #[test]
    fn the_lineage_keeps_only_the_latest_writes() {
        let first = Stored::stamp(plain(), None);
        let mut last = first.clone();
        for _ in 0..LINEAGE - 1 {
            last = Stored::stamp(plain(), Some(&last));
        }
        assert!(last.holds(&first), "{LINEAGE} writes are named");
        last = Stored::stamp(plain(), Some(&last));
        assert!(!last.holds(&first), "the oldest is forgotten past {LINEAGE}");
        assert_eq!(Stored::read(last.bytes).unwrap().0.writes.len(), LINEAGE);
    }

    #[test]
    fn a_write_in_doubt_is_the_merge_base_while_a_newer_record_holds_it() {
        let known = Stored::stamp(plain(), None);
        let mut saved = Saved::default();
        saved.set(known.clone());
        let first = Stored::stamp(plain(), Some(&known));
        saved.doubt(first.clone());
        // A second write over the record still known, failed too (it could not land: the
        // first had), must not make the first forgotten.
        saved.doubt(Stored::stamp(plain(), Some(&known)));
        let theirs = Stored::stamp(plain(), Some(&first));
        assert_eq!(saved.merge_base(&theirs, known.clone()), first, "theirs holds the first: merge from it");
        let sibling = Stored::stamp(plain(), Some(&known));
        assert_eq!(saved.merge_base(&sibling, known.clone()), known, "a record without ours: from the known one");
        assert_eq!(saved.base(), Some(known), "the known record is the one to write over");
    }

    #[test]
    fn a_stored_record_settles_the_doubts_it_holds_or_that_can_no_longer_land() {
        let known = Stored::stamp(plain(), None);
        let mut saved = Saved::default();
        saved.set(known.clone());
        let landed = Stored::stamp(plain(), Some(&known));
        saved.doubt(landed.clone());
        let theirs = Stored::stamp(plain(), Some(&landed));
        saved.set(theirs.clone());
        assert!(saved.in_doubt.is_empty(), "theirs holds it: settled");
        // A write over the record now held may yet land (a command that timed out may run).
        let pending = Stored::stamp(plain(), Some(&theirs));
        saved.doubt(pending.clone());
        saved.set(theirs.clone());
        let later = Stored::stamp(plain(), Some(&pending));
        assert_eq!(saved.merge_base(&later, theirs.clone()), pending, "kept while it may land");
        // Once the store holds another record, it never can.
        saved.set(Stored::stamp(plain(), Some(&theirs)));
        assert!(saved.in_doubt.is_empty(), "settled: it was written over a record gone for good");
    }

    #[test]
    fn a_record_written_before_lineages_reads_with_none() {
        let (read, snapshot) = Stored::read(SNAPSHOT.as_bytes().to_vec()).unwrap();
        assert!(snapshot.writes.is_empty());
        assert!(read.writes.is_empty());
        assert!(!read.holds(&read), "a record naming no write holds none");
        assert!(Stored::read(b"not json".to_vec()).is_none());
    }
}
