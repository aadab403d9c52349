//! The in-memory [`EventStore`].

use crate::alloc_prelude::*;
use alloc::collections::{BTreeMap, VecDeque};

use super::{EventId, EventStore, EventStoreError, Replay, Retention, StoredEvent};

/// The in-memory [`EventStore`]: ordered maps of sessions and streams, one `VecDeque` per stream.
///
/// For one server process (or tests). Share it between threads behind a `Mutex`.
///
/// # Examples
///
/// ```
/// use talaria_core::http::event_log::{EventStore, MemoryEventStore, Retention};
///
/// let mut log = MemoryEventStore::new(Retention::default().with_max_bytes(8));
/// let stream = log.open_stream("s").unwrap();
/// log.append("s", stream, b"12345").unwrap();
/// log.append("s", stream, b"6789").unwrap(); // 9 bytes: "12345" goes
/// assert_eq!((log.len(), log.bytes()), (1, 4));
/// ```
#[derive(Debug, Clone, Default)]
pub struct MemoryEventStore {
    retention: Retention,
    /// Visible to the module's tests, which check the bounds stream by stream.
    pub(super) sessions: BTreeMap<String, SessionLog>,
    events: usize,
    bytes: usize,
}

#[derive(Debug, Clone, Default)]
pub(super) struct SessionLog {
    /// The last stream id minted (0: none yet).
    last_stream: u64,
    pub(super) streams: BTreeMap<u64, StreamLog>,
}

#[derive(Debug, Clone, Default)]
pub(super) struct StreamLog {
    /// The last sequence number issued (0: none yet).
    last_seq: u64,
    /// The retained events, oldest first, with consecutive sequence numbers ending at `last_seq`.
    pub(super) events: VecDeque<StoredEvent>,
    /// The payload bytes of `events`.
    pub(super) bytes: usize,
    closed: bool,
}

impl MemoryEventStore {
    /// An empty store keeping what `retention` allows.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::http::event_log::{MemoryEventStore, Retention};
    ///
    /// assert!(MemoryEventStore::new(Retention::default()).is_empty());
    /// ```
    #[must_use]
    pub const fn new(retention: Retention) -> Self {
        Self { retention, sessions: BTreeMap::new(), events: 0, bytes: 0 }
    }

    /// The retention this store applies.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::http::event_log::{MemoryEventStore, Retention};
    ///
    /// let retention = Retention::default().with_max_events(3);
    /// assert_eq!(MemoryEventStore::new(retention).retention(), retention);
    /// ```
    #[must_use]
    pub const fn retention(&self) -> Retention {
        self.retention
    }

    /// How many events are retained, across all sessions and streams.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::http::event_log::{EventStore, MemoryEventStore, Retention};
    ///
    /// let mut log = MemoryEventStore::new(Retention::default());
    /// let stream = log.open_stream("s").unwrap();
    /// log.append("s", stream, b"{}").unwrap();
    /// assert_eq!(log.len(), 1);
    /// ```
    #[must_use]
    pub const fn len(&self) -> usize {
        self.events
    }

    /// Whether the store holds nothing: no event, no stream, no session.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::http::event_log::{EventStore, MemoryEventStore, Retention};
    ///
    /// let mut log = MemoryEventStore::new(Retention::default());
    /// log.open_stream("s").unwrap();
    /// assert!(!log.is_empty()); // an empty stream is still held
    /// log.drop_session("s").unwrap();
    /// assert!(log.is_empty());
    /// ```
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.sessions.is_empty()
    }

    /// How many payload bytes are retained, across all sessions and streams.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::http::event_log::{EventStore, MemoryEventStore, Retention};
    ///
    /// let mut log = MemoryEventStore::new(Retention::default());
    /// let stream = log.open_stream("s").unwrap();
    /// log.append("s", stream, b"{}").unwrap();
    /// assert_eq!(log.bytes(), 2);
    /// ```
    #[must_use]
    pub const fn bytes(&self) -> usize {
        self.bytes
    }

    /// How many sessions hold at least one stream.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::http::event_log::{EventStore, MemoryEventStore, Retention};
    ///
    /// let mut log = MemoryEventStore::new(Retention::default());
    /// log.open_stream("a").unwrap();
    /// log.open_stream("b").unwrap();
    /// assert_eq!(log.session_count(), 2);
    /// ```
    #[must_use]
    pub fn session_count(&self) -> usize {
        self.sessions.len()
    }

    /// How many streams `session` holds (0 for an unknown session).
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::http::event_log::{EventStore, MemoryEventStore, Retention};
    ///
    /// let mut log = MemoryEventStore::new(Retention::default().with_max_streams(2));
    /// for _ in 0..3 {
    ///     log.open_stream("s").unwrap();
    /// }
    /// assert_eq!(log.stream_count("s"), 2);
    /// ```
    #[must_use]
    pub fn stream_count(&self, session: &str) -> usize {
        self.sessions.get(session).map_or(0, |log| log.streams.len())
    }

    /// The stream `stream` of `session`, or why it is not there.
    fn stream_mut(&mut self, session: &str, stream: u64) -> Result<&mut StreamLog, EventStoreError> {
        let log = self.sessions.get_mut(session).ok_or(EventStoreError::UnknownStream { stream })?;
        match log.streams.get_mut(&stream) {
            Some(found) => Ok(found),
            None if stream != 0 && stream <= log.last_stream => Err(EventStoreError::StreamEvicted { stream }),
            None => Err(EventStoreError::UnknownStream { stream }),
        }
    }

    /// Forgets `stream` of `log`, keeping the totals right.
    fn evict(events: &mut usize, bytes: &mut usize, log: &mut SessionLog, stream: u64) {
        if let Some(gone) = log.streams.remove(&stream) {
            *events -= gone.events.len();
            *bytes -= gone.bytes;
        }
    }
}

impl EventStore for MemoryEventStore {
    fn max_event_bytes(&self) -> Option<usize> {
        Some(self.retention.max_bytes)
    }

    fn open_stream(&mut self, session: &str) -> Result<u64, EventStoreError> {
        let log = self.sessions.entry(session.to_owned()).or_default();
        while log.streams.len() >= self.retention.max_streams {
            let oldest_closed = log.streams.iter().find(|(_, s)| s.closed).map(|(id, _)| *id);
            let Some(victim) = oldest_closed.or_else(|| log.streams.keys().next().copied()) else { break };
            Self::evict(&mut self.events, &mut self.bytes, log, victim);
        }
        log.last_stream += 1;
        log.streams.insert(log.last_stream, StreamLog::default());
        Ok(log.last_stream)
    }

    fn append(&mut self, session: &str, stream: u64, data: &[u8]) -> Result<EventId, EventStoreError> {
        let Retention { max_events, max_bytes, .. } = self.retention;
        let log = self.stream_mut(session, stream)?;
        if log.closed {
            return Err(EventStoreError::StreamClosed { stream });
        }
        log.last_seq += 1;
        let id = EventId::new(stream, log.last_seq);
        let (events_before, bytes_before) = (log.events.len(), log.bytes);
        if data.len() > max_bytes || max_events == 0 {
            // Not kept; neither is anything older, so that retained ids stay consecutive.
            log.events.clear();
            log.bytes = 0;
        } else {
            while log.events.len() >= max_events || log.bytes + data.len() > max_bytes {
                let Some(old) = log.events.pop_front() else { break };
                log.bytes -= old.data.len();
            }
            log.bytes += data.len();
            log.events.push_back(StoredEvent::new(id, data.to_vec()));
        }
        let (events_after, bytes_after) = (log.events.len(), log.bytes);
        self.events = self.events - events_before + events_after;
        self.bytes = self.bytes - bytes_before + bytes_after;
        Ok(id)
    }

    fn replay_after(&mut self, session: &str, after: EventId) -> Result<Replay, EventStoreError> {
        let log = self.stream_mut(session, after.stream)?;
        if after.seq > log.last_seq {
            return Err(EventStoreError::UnknownEvent { id: after });
        }
        // Retained sequence numbers are consecutive and end at `last_seq`.
        let first_kept = log.last_seq + 1 - log.events.len() as u64;
        let missed = first_kept.saturating_sub(after.seq + 1);
        let skip = usize::try_from((after.seq + 1).saturating_sub(first_kept)).unwrap_or(usize::MAX);
        let events = log.events.iter().skip(skip).cloned().collect();
        Ok(Replay::new(events, missed, log.closed))
    }

    fn close_stream(&mut self, session: &str, stream: u64) -> Result<(), EventStoreError> {
        self.stream_mut(session, stream)?.closed = true;
        Ok(())
    }

    fn drop_session(&mut self, session: &str) -> Result<(), EventStoreError> {
        if let Some(mut log) = self.sessions.remove(session) {
            let streams: Vec<u64> = log.streams.keys().copied().collect();
            for stream in streams {
                Self::evict(&mut self.events, &mut self.bytes, &mut log, stream);
            }
        }
        Ok(())
    }
}
