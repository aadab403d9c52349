//! [`Log`]: one session's place in the event store, each call made on a store of the pool.
//!
//! What the session's sink logs for a stream no writer holds (a detached POST stream) is
//! written *later* ([`Log::append_later`], [`Log::close_later`]): queued in order and written by
//! one task of the blocking pool, so that a remote store's round trip never runs on the thread
//! that routes the session's frames (an executor's, with the session's locks held). Every
//! other call first writes what is queued, so it sees the log as the sink left it.
//!
//! An answer larger than the store keeps is logged as its [`stand_in`]: the client that reads
//! the stream live gets the answer, one that resumes after it an error saying it is gone,
//! rather than nothing to wait on.

use std::borrow::Cow;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use talaria_core::http::event_log::{stand_in, EventId, EventStore, EventStoreError, Replay};

use super::store_pool::SharedEventStore;

/// The most bytes of a session's later writes waiting for a store that does not keep up
/// (down, or slower than the session's handlers). Past it the oldest waiting events are
/// dropped to make room, as a log's retention drops its oldest (so a stream's answer, its
/// last event, is kept): memory stays bounded whatever the store does.
const MAX_PENDING_BYTES: usize = 16 << 20;

/// One session's place in the event store.
#[derive(Clone)]
pub(crate) struct Log {
    store: SharedEventStore,
    session: Arc<str>,
    /// Whether the store's calls may wait on the network (a store the server was given, not
    /// its own in-memory one): made off the executor's threads.
    remote: bool,
    later: Arc<Later>,
    /// The largest event the store keeps, if it says.
    max_event: Option<usize>,
}

/// The writes made later, in order (see the module's docs).
#[derive(Default)]
struct Later {
    queue: Mutex<Pending>,
    /// Held while queued writes are taken and made: who must see them all made takes it.
    writing: Mutex<()>,
}

#[derive(Default)]
struct Pending {
    writes: VecDeque<Write>,
    bytes: usize,
    /// Whether a task of the blocking pool is on its way to make them.
    draining: bool,
}

/// A write made later.
enum Write {
    Append(u64, Vec<u8>),
    Close(u64),
}

impl Write {
    fn size(&self) -> usize {
        match self {
            Self::Append(_, payload) => payload.len(),
            Self::Close(_) => 0,
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Log {
    pub(crate) fn new(store: SharedEventStore, session: &str, remote: bool) -> Self {
        Self { store, session: session.into(), remote, later: Arc::default(), max_event: None }
    }

    /// The log of a store that keeps no event larger than `max_event` bytes (see
    /// [`EventStore::max_event_bytes`]): an answer larger is logged as its [`stand_in`].
    pub(crate) const fn keeping_at_most(mut self, max_event: Option<usize>) -> Self {
        self.max_event = max_event;
        self
    }

    /// What is logged for `payload`: itself, or the stand-in of an answer too large to keep.
    fn kept<'a>(&self, payload: &'a [u8]) -> Cow<'a, [u8]> {
        match self.max_event.and_then(|max| stand_in(payload, max)) {
            Some(stand_in) => Cow::Owned(stand_in),
            None => Cow::Borrowed(payload),
        }
    }

    /// Whether the store's calls may wait on the network.
    pub(crate) const fn is_remote(&self) -> bool {
        self.remote
    }

    /// Runs `f` on a store of the pool, after the writes queued before it are made.
    fn with<T>(
        &self,
        f: impl FnOnce(&mut (dyn EventStore + Send), &str) -> Result<T, EventStoreError>,
    ) -> Result<T, EventStoreError> {
        if self.remote {
            let _writing = lock(&self.later.writing);
            // The store failed a queued write: this call, which must not land before the
            // writes still queued, fails too (at once, rather than after each one's timeout).
            self.make_queued()?;
        }
        self.store.with(|store| f(store, &self.session))
    }

    /// Logs `payload` on `stream`, now if the store is in this process, else later (see the
    /// module's docs); its id is not needed.
    pub(crate) fn append_later(&self, stream: u64, payload: Vec<u8>) {
        if self.remote {
            let payload = match self.kept(&payload) {
                Cow::Owned(stand_in) => stand_in,
                Cow::Borrowed(_) => payload,
            };
            self.queue(Write::Append(stream, payload));
        } else {
            let _ = self.append(stream, &payload);
        }
    }

    /// Marks `stream` ended, now if the store is in this process, else later.
    pub(crate) fn close_later(&self, stream: u64) {
        if self.remote {
            self.queue(Write::Close(stream));
        } else {
            self.close(stream);
        }
    }

    fn queue(&self, write: Write) {
        let mut pending = lock(&self.later.queue);
        let size = write.size();
        if size > MAX_PENDING_BYTES {
            return;
        }
        // Room made as retention makes it: the oldest events go, never a stream's end (which
        // takes no room).
        while pending.bytes + size > MAX_PENDING_BYTES {
            let Some(oldest) = pending.writes.iter().position(|queued| matches!(queued, Write::Append(..))) else {
                break;
            };
            if let Some(dropped) = pending.writes.remove(oldest) {
                pending.bytes -= dropped.size();
            }
        }
        pending.bytes += size;
        pending.writes.push_back(write);
        if std::mem::replace(&mut pending.draining, true) {
            return;
        }
        drop(pending);
        let log = self.clone();
        smol::unblock(move || log.drain()).detach();
    }

    /// Makes the queued writes, oldest first (the caller holds `writing`), until the store
    /// fails one: it is down or stalled, and each write would wait for its timeout. That write
    /// is given up (it may have landed); the rest stay queued, in order, for the draining task.
    fn make_queued(&self) -> Result<(), EventStoreError> {
        while let Some(made) = self.make_next(false) {
            made?;
        }
        Ok(())
    }

    /// The draining task: makes the queued writes one at a time, each under `writing` (so a
    /// call waits for at most the one under way, not for the whole queue), giving up each one
    /// the store fails, until none is left.
    fn drain(&self) {
        loop {
            let _writing = lock(&self.later.writing);
            if self.make_next(true).is_none() {
                return;
            }
        }
    }

    /// Makes the oldest queued write: `None` if there is none. The draining task says it is
    /// done when it finds none left, under the queue's lock: a write queued after that starts
    /// another.
    fn make_next(&self, draining: bool) -> Option<Result<(), EventStoreError>> {
        let write = {
            let mut pending = lock(&self.later.queue);
            let Some(write) = pending.writes.pop_front() else {
                if draining {
                    pending.draining = false;
                }
                return None;
            };
            pending.bytes -= write.size();
            write
        };
        Some(self.store.with(|store| match write {
            Write::Append(stream, payload) => store.append(&self.session, stream, &payload).map(drop),
            Write::Close(stream) => store.close_stream(&self.session, stream),
        }))
    }

    /// A new log stream, if the store took it.
    pub(crate) fn open(&self) -> Option<u64> {
        self.with(|store, session| store.open_stream(session)).ok()
    }

    /// A new log stream noting `claim` (who writes it), if the store took it.
    pub(crate) fn open_claimed(&self, claim: &[u8]) -> Option<u64> {
        self.with(|store, session| store.open_claimed_stream(session, claim)).ok()
    }

    /// The claim noted on `stream`, if the store keeps one; `Err` if the store cannot say.
    pub(crate) fn claim_of(&self, stream: u64) -> Result<Option<Vec<u8>>, ()> {
        self.with(|store, session| store.claim_of(session, stream)).map_err(drop)
    }

    /// A new log stream noting `claim` if given, with `payload` as its first event (closed
    /// after it if `last`): the event's id, if the store took them.
    pub(crate) fn open_with_event(&self, claim: Option<&[u8]>, payload: &[u8], last: bool) -> Option<EventId> {
        let payload = self.kept(payload);
        self.with(|store, session| store.open_with_event(session, claim, &payload, last)).ok()
    }

    /// Logs `payload` on `stream` before it is sent; its event id, if the store took it.
    pub(crate) fn append(&self, stream: u64, payload: &[u8]) -> Option<EventId> {
        let payload = self.kept(payload);
        self.with(|store, session| store.append(session, stream, &payload)).ok()
    }

    /// Marks `stream` ended.
    pub(crate) fn close(&self, stream: u64) {
        let _ = self.with(|store, session| store.close_stream(session, stream));
    }

    /// The events after `after`, and whether their stream ended; `None` if the store cannot
    /// say.
    pub(crate) fn replay_after(&self, after: EventId) -> Option<Replay> {
        self.with(|store, session| store.replay_after(session, after)).ok()
    }

    /// Logs `payload` as the last event of `stream` and ends it, in one step; `None` if the
    /// stream had ended already (or the store failed).
    pub(crate) fn append_last(&self, stream: u64, payload: &[u8]) -> Option<EventId> {
        let payload = self.kept(payload);
        self.with(|store, session| store.append_last(session, stream, &payload)).ok()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use std::sync::mpsc;
    use std::sync::Condvar;
    use std::time::Duration;
    use talaria_core::http::event_log::{EventStoreError, MemoryEventStore, Retention};

    /// An in-memory store that runs `before_append` before each append, which may hold it
    /// (a remote store that stalls) or fail it (one past its timeout).
    struct Hooked {
        inner: MemoryEventStore,
        before_append: Box<dyn Fn() -> Result<(), EventStoreError> + Send>,
    }

    impl EventStore for Hooked {
        fn open_stream(&mut self, session: &str) -> Result<u64, EventStoreError> {
            self.inner.open_stream(session)
        }
        fn append(&mut self, session: &str, stream: u64, data: &[u8]) -> Result<EventId, EventStoreError> {
            (self.before_append)()?;
            self.inner.append(session, stream, data)
        }
        fn replay_after(&mut self, session: &str, after: EventId) -> Result<Replay, EventStoreError> {
            self.inner.replay_after(session, after)
        }
        fn close_stream(&mut self, session: &str, stream: u64) -> Result<(), EventStoreError> {
            self.inner.close_stream(session, stream)
        }
        fn drop_session(&mut self, session: &str) -> Result<(), EventStoreError> {
            self.inner.drop_session(session)
        }
    }

    fn gated_log() -> (Log, Arc<(Mutex<bool>, Condvar)>) {
        let gate = Arc::new((Mutex::new(false), Condvar::new()));
        let retention = Retention::new().with_max_bytes(64 << 20).with_max_events(1 << 20);
        let held = Arc::clone(&gate);
        let wait_open = move || {
            let (open, changed) = &*held;
            let mut open = open.lock().unwrap();
            while !*open {
                open = changed.wait(open).unwrap();
            }
            Ok(())
        };
        let store = Hooked { inner: MemoryEventStore::new(retention), before_append: Box::new(wait_open) };
        (Log::new(SharedEventStore::new(store), "s", true), gate)
    }

    fn open(gate: &(Mutex<bool>, Condvar)) {
        *gate.0.lock().unwrap() = true;
        gate.1.notify_all();
    }

    /// A store timing out does not hold a call behind every queued write's timeout (the
    /// writer of a stream would wait for each): the call fails at its first, and the writes
    /// still queued are made, in order, once the store is back.
    #[test]
    fn a_call_behind_later_writes_a_failing_store_times_out_fails_after_one_timeout() {
        let failing = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let failing_now = Arc::clone(&failing);
        let time_out = move || {
            if failing_now.load(std::sync::atomic::Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(40));
                return Err(EventStoreError::Backend("timed out".into()));
            }
            Ok(())
        };
        let store = Hooked { inner: MemoryEventStore::new(Retention::new()), before_append: Box::new(time_out) };
        let log = Log::new(SharedEventStore::new(store), "s", true);
        let stream = log.open().unwrap();
        failing.store(true, std::sync::atomic::Ordering::SeqCst);
        for i in 0..50 {
            log.append_later(stream, i.to_string().into_bytes());
        }
        let start = std::time::Instant::now();
        assert!(log.append(stream, b"now").is_none(), "the store is failing");
        let took = start.elapsed();
        // Each queued write made in turn would take 50 x 40 ms: 2 s.
        assert!(took < Duration::from_secs(1), "the call waited {took:?}");
        failing.store(false, std::sync::atomic::Ordering::SeqCst);
        let replay = log.replay_after(EventId::start(stream)).unwrap();
        let numbers: Vec<u32> =
            replay.events.iter().map(|e| String::from_utf8(e.data.clone()).unwrap().parse().unwrap()).collect();
        assert!(numbers.windows(2).all(|pair| pair[0] < pair[1]), "in order: {numbers:?}");
        assert_eq!(numbers.last(), Some(&49), "the newest was kept: {numbers:?}");
        assert!(numbers.len() >= 40, "only the writes the store failed were given up: {numbers:?}");
    }

    #[test]
    fn later_writes_return_while_the_store_stalls_and_a_replay_sees_them_all_in_order() {
        let (log, gate) = gated_log();
        let stream = log.open().unwrap();
        let (done, queued) = mpsc::channel();
        let writer = log.clone();
        std::thread::spawn(move || {
            for i in 0..50 {
                writer.append_later(stream, i.to_string().into_bytes());
            }
            writer.close_later(stream);
            done.send(()).unwrap();
        });
        queued.recv_timeout(Duration::from_secs(10)).expect("queuing waited for the stalled store");
        let (replayed, replay) = mpsc::channel();
        std::thread::spawn(move || replayed.send(log.replay_after(EventId::start(stream))).unwrap());
        open(&gate);
        let replay = replay.recv_timeout(Duration::from_secs(10)).unwrap().unwrap();
        let texts: Vec<String> = replay.events.iter().map(|e| String::from_utf8(e.data.clone()).unwrap()).collect();
        assert_eq!(texts, (0..50).map(|i| i.to_string()).collect::<Vec<_>>());
        assert!(replay.closed, "the close, queued last, was made before the replay");
    }

    #[test]
    fn later_writes_a_stalled_store_has_not_taken_stay_within_their_bound_and_the_newest_are_kept() {
        let (log, gate) = gated_log();
        let stream = log.open().unwrap();
        // 20 MiB for a store that takes nothing: each write 1 MiB, numbered, the last the
        // stream's answer.
        for i in 0..20u8 {
            let mut payload = vec![b'x'; 1 << 20];
            payload[0] = i;
            log.append_later(stream, payload);
        }
        log.close_later(stream);
        let waiting = lock(&log.later.queue).bytes;
        assert!(waiting <= MAX_PENDING_BYTES, "{waiting} bytes wait");
        assert!(waiting >= MAX_PENDING_BYTES - (1 << 20), "the queue kept what it had room for: {waiting}");
        open(&gate);
        let replay = log.replay_after(EventId::start(stream)).unwrap();
        let kept: Vec<u8> = replay.events.iter().map(|event| event.data[0]).collect();
        // The draining task may hold the first write already, out of the queue.
        assert!((16..=17).contains(&kept.len()), "kept {kept:?}");
        assert_eq!(kept[kept.len() - 16..], (4..20).collect::<Vec<u8>>(), "the newest 16, in order");
        assert!(replay.closed, "the stream's end is never dropped");
    }
}
