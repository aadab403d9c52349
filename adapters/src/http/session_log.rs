//! [`Log`]: one session's place in the event store, each call made on a store of the pool.

use std::sync::Arc;

use talaria_core::http::event_log::{EventId, EventStore, Replay};

use super::store_pool::SharedEventStore;

/// One session's place in the event store.
#[derive(Clone)]
pub(crate) struct Log {
    store: SharedEventStore,
    session: Arc<str>,
    /// Whether the store's calls may wait on the network (a store the server was given, not
    /// its own in-memory one): made off the executor's threads.
    remote: bool,
}

impl Log {
    pub(crate) fn new(store: SharedEventStore, session: &str, remote: bool) -> Self {
        Self { store, session: session.into(), remote }
    }

    /// Whether the store's calls may wait on the network.
    pub(crate) const fn is_remote(&self) -> bool {
        self.remote
    }

    fn with<R>(&self, f: impl FnOnce(&mut (dyn EventStore + Send), &str) -> R) -> R {
        self.store.with(|store| f(store, &self.session))
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
        self.with(|store, session| store.open_with_event(session, claim, payload, last)).ok()
    }

    /// Logs `payload` on `stream` before it is sent; its event id, if the store took it.
    pub(crate) fn append(&self, stream: u64, payload: &[u8]) -> Option<EventId> {
        self.with(|store, session| store.append(session, stream, payload)).ok()
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
        self.with(|store, session| store.append_last(session, stream, payload)).ok()
    }
}
