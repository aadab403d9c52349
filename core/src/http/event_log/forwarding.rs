//! [`EventStore`] and [`SessionStore`] through a reference or a box: every call forwarded, one
//! impl for each.

use crate::alloc_prelude::*;

use super::{
    EventId, EventStore, EventStoreError, Refresh, Replay, SessionRecord, SessionStore, SessionStoreError, StoreIf,
};
use crate::time::{Duration, Instant};

/// Implements [`EventStore`] for each pointer type given, forwarding every method to the store
/// it points to (including the provided ones, so that an override is not lost).
macro_rules! forward_event_store {
    ($($pointer:ty),+) => {$(
        impl<S: EventStore + ?Sized> EventStore for $pointer {
            fn open_stream(&mut self, session: &str) -> Result<u64, EventStoreError> {
                (**self).open_stream(session)
            }

            fn append(&mut self, session: &str, stream: u64, data: &[u8]) -> Result<EventId, EventStoreError> {
                (**self).append(session, stream, data)
            }

            fn replay_after(&mut self, session: &str, after: EventId) -> Result<Replay, EventStoreError> {
                (**self).replay_after(session, after)
            }

            fn close_stream(&mut self, session: &str, stream: u64) -> Result<(), EventStoreError> {
                (**self).close_stream(session, stream)
            }

            fn drop_session(&mut self, session: &str) -> Result<(), EventStoreError> {
                (**self).drop_session(session)
            }

            fn open_claimed_stream(&mut self, session: &str, claim: &[u8]) -> Result<u64, EventStoreError> {
                (**self).open_claimed_stream(session, claim)
            }

            fn claim_of(&mut self, session: &str, stream: u64) -> Result<Option<Vec<u8>>, EventStoreError> {
                (**self).claim_of(session, stream)
            }

            fn append_last(&mut self, session: &str, stream: u64, data: &[u8]) -> Result<EventId, EventStoreError> {
                (**self).append_last(session, stream, data)
            }

            fn open_with_event(
                &mut self,
                session: &str,
                claim: Option<&[u8]>,
                data: &[u8],
                last: bool,
            ) -> Result<EventId, EventStoreError> {
                (**self).open_with_event(session, claim, data, last)
            }

            fn max_event_bytes(&self) -> Option<usize> {
                (**self).max_event_bytes()
            }
        }
    )+};
}

forward_event_store!(&mut S, Box<S>);

/// Implements [`SessionStore`] for each pointer type given, forwarding every method to the
/// store it points to (including the provided ones, so that an override is not lost).
macro_rules! forward_session_store {
    ($($pointer:ty),+) => {$(
        impl<S: SessionStore + ?Sized> SessionStore for $pointer {
            fn load(&mut self, session: &str) -> Result<Option<SessionRecord>, SessionStoreError> {
                (**self).load(session)
            }

            fn store(&mut self, session: &str, data: Vec<u8>, now: Instant) -> Result<(), SessionStoreError> {
                (**self).store(session, data, now)
            }

            fn touch(&mut self, session: &str, now: Instant) -> Result<bool, SessionStoreError> {
                (**self).touch(session, now)
            }

            fn delete(&mut self, session: &str) -> Result<bool, SessionStoreError> {
                (**self).delete(session)
            }

            fn expired(&mut self, now: Instant, idle_timeout: Duration) -> Result<Vec<String>, SessionStoreError> {
                (**self).expired(now, idle_timeout)
            }

            fn refresh(&mut self, session: &str, now: Instant, known: &[u8]) -> Result<Refresh, SessionStoreError> {
                (**self).refresh(session, now, known)
            }

            fn store_if(
                &mut self,
                session: &str,
                data: Vec<u8>,
                expected: &[u8],
                now: Instant,
            ) -> Result<StoreIf, SessionStoreError> {
                (**self).store_if(session, data, expected, now)
            }

            fn store_new(&mut self, session: &str, data: Vec<u8>, now: Instant) -> Result<StoreIf, SessionStoreError> {
                (**self).store_new(session, data, now)
            }
        }
    )+};
}

forward_session_store!(&mut S, Box<S>);
