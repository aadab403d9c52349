//! The conformance kit for [`EventStore`] and [`SessionStore`] implementations.
//!
//! Every store, in memory or shared (Redis, a database), must pass [`check_event_store`] and
//! [`check_session_store`]. Each runs a battery of named checks, each on a fresh store from the
//! caller's constructor, and returns the first failure. The kit is plain code with no test
//! dependency, always compiled and cheap: call it from a `#[test]` of the implementing crate.
//!
//! A shared store's checks must not see each other's data: give every store the constructor
//! returns its own namespace (a fresh key prefix), or clear it first.
//!
//! # Examples
//!
//! ```
//! use std::time::Instant;
//! use talaria_core::http::conformance::{check_event_store, check_session_store};
//! use talaria_core::http::event_log::{MemoryEventStore, MemorySessionStore};
//!
//! check_event_store(MemoryEventStore::new).unwrap();
//! check_session_store(MemorySessionStore::new, Instant::now()).unwrap();
//! ```

use crate::alloc_prelude::*;
use crate::time::{Duration, Instant};
use core::fmt::Display;

use super::event_log::{EventId, EventStore, EventStoreError, Replay, Retention, SessionRecord, SessionStore, StoreIf};

/// A store failed a conformance check: which check, and what went wrong.
///
/// # Examples
///
/// ```
/// use talaria_core::http::conformance::ConformanceError;
///
/// let err = ConformanceError { check: "append_replays_in_order", message: "got 2 events".into() };
/// assert_eq!(err.to_string(), "append_replays_in_order: got 2 events");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{check}: {message}")]
pub struct ConformanceError {
    /// The name of the failed check.
    pub check: &'static str,
    /// What the store did wrong.
    pub message: String,
}

/// One check of an event store: `Err` describes the failure.
type EventCheck = fn(&mut dyn EventStore) -> Result<(), String>;

/// One check of a session store, given the instant virtual time starts from.
type SessionCheck = fn(&mut dyn SessionStore, Instant) -> Result<(), String>;

/// Fails the enclosing check with a formatted message unless `cond` holds.
macro_rules! ensure {
    ($cond:expr, $($fmt:tt)+) => {
        if !$cond {
            return Err(format!($($fmt)+));
        }
    };
}

/// The value of `result`, or a failure naming the call `what` and its error.
fn ok<T, E: Display>(what: &str, result: Result<T, E>) -> Result<T, String> {
    result.map_err(|e| format!("{what}: unexpected error: {e}"))
}

/// The checks of an event store, with the retention each one's store is built with.
const EVENT_STORE_CHECKS: &[(&str, Retention, EventCheck)] = &[
    ("append_replays_in_order", Retention::new(), append_replays_in_order),
    ("replay_after_last_is_empty", Retention::new(), replay_after_last_is_empty),
    ("empty_payloads_are_events", Retention::new(), empty_payloads_are_events),
    ("unknown_ids_are_errors", Retention::new(), unknown_ids_are_errors),
    ("streams_are_independent", Retention::new(), streams_are_independent),
    ("retention_drops_oldest_by_count", Retention::new().with_max_events(3), retention_drops_oldest_by_count),
    ("retention_drops_oldest_by_bytes", Retention::new().with_max_bytes(10), retention_drops_oldest_by_bytes),
    ("oversized_event_is_not_kept", Retention::new().with_max_bytes(4), oversized_event_is_not_kept),
    ("zero_max_events_keeps_nothing", Retention::new().with_max_events(0), zero_max_events_keeps_nothing),
    ("closed_stream_is_reported", Retention::new(), closed_stream_is_reported),
    ("append_last_ends_the_stream_once", Retention::new(), append_last_ends_the_stream_once),
    ("open_with_event_starts_a_stream", Retention::new().with_max_streams(2), open_with_event_starts_a_stream),
    ("sessions_are_isolated", Retention::new(), sessions_are_isolated),
    ("dropping_a_session_forgets_it", Retention::new(), dropping_a_session_forgets_it),
    ("stream_count_is_bounded", Retention::new().with_max_streams(2), stream_count_is_bounded),
];

/// Runs the event store battery: `make(retention)` builds an empty store keeping what
/// `retention` allows, once per check.
///
/// The checks: append and replay in order, replay after the last id is empty, empty payloads
/// (priming events) are events, unknown streams and never-issued ids are errors, streams of a
/// session are independent, retention drops the oldest events by count and by bytes and reports
/// what a replay missed, an oversized event gets an id but is not kept (and the largest event
/// kept, if the store says it, is the retention's), closed streams are
/// reported and refuse appends, sessions are isolated, dropping a session forgets it, and the
/// stream count per session is bounded (closed streams evicted first, then the oldest).
///
/// # Errors
///
/// The first failed check.
///
/// # Examples
///
/// ```
/// use talaria_core::http::conformance::check_event_store;
/// use talaria_core::http::event_log::MemoryEventStore;
///
/// check_event_store(MemoryEventStore::new).unwrap();
/// ```
pub fn check_event_store<S, F>(mut make: F) -> Result<(), ConformanceError>
where
    S: EventStore,
    F: FnMut(Retention) -> S,
{
    for &(check, retention, run) in EVENT_STORE_CHECKS {
        let mut store = make(retention);
        run(&mut store).map_err(|message| ConformanceError { check, message })?;
    }
    Ok(())
}

/// The checks of a session store, each given the instant its virtual time starts from.
const SESSION_STORE_CHECKS: &[(&str, SessionCheck)] = &[
    ("store_then_load", store_then_load),
    ("store_replaces", store_replaces),
    ("touch_moves_last_seen_forward", touch_moves_last_seen_forward),
    ("delete_forgets", delete_forgets),
    ("expired_lists_idle_sessions", expired_lists_idle_sessions),
    ("records_are_isolated", records_are_isolated),
    ("store_if_writes_only_over_the_expected_record", store_if_writes_only_over_the_expected_record),
    ("store_new_writes_only_a_first_record", store_new_writes_only_a_first_record),
];

/// Runs the session store battery: `make()` builds an empty store, once per check; virtual time
/// starts at `t0` and only moves forward from it.
///
/// The checks: a stored record loads back with its time, storing replaces, touching moves the
/// last-seen time forward only and reports unknown sessions, deleting forgets, `expired` lists
/// exactly the sessions idle for longer than the timeout in ascending order without removing
/// them, records do not affect each other, and `store_if` writes only over the record it
/// expects (a deleted session's included).
///
/// # Errors
///
/// The first failed check.
///
/// # Examples
///
/// ```
/// use std::time::Instant;
/// use talaria_core::http::conformance::check_session_store;
/// use talaria_core::http::event_log::MemorySessionStore;
///
/// check_session_store(MemorySessionStore::new, Instant::now()).unwrap();
/// ```
pub fn check_session_store<S, F>(mut make: F, t0: Instant) -> Result<(), ConformanceError>
where
    S: SessionStore,
    F: FnMut() -> S,
{
    for &(check, run) in SESSION_STORE_CHECKS {
        let mut store = make();
        run(&mut store, t0).map_err(|message| ConformanceError { check, message })?;
    }
    Ok(())
}

// --- event store checks ---------------------------------------------------------------------

const SESSION: &str = "conformance-session";
const OTHER: &str = "conformance-other";

/// The (id, payload) pairs of a replay, for comparing.
fn pairs(replay: &Replay) -> Vec<(EventId, &[u8])> {
    replay.events.iter().map(|e| (e.id, &e.data[..])).collect()
}

/// Opens a stream and appends `payloads` to it; returns the stream and the ids.
fn stream_with(store: &mut dyn EventStore, session: &str, payloads: &[&[u8]]) -> Result<(u64, Vec<EventId>), String> {
    let stream = ok("open_stream", store.open_stream(session))?;
    let mut ids = Vec::new();
    for payload in payloads {
        ids.push(ok("append", store.append(session, stream, payload))?);
    }
    Ok((stream, ids))
}

/// Replays after `after` and checks the events, the missed count and the closed flag.
fn expect_replay(
    store: &mut dyn EventStore,
    session: &str,
    after: EventId,
    events: &[(EventId, &[u8])],
    missed: u64,
    closed: bool,
) -> Result<(), String> {
    let replay = ok("replay_after", store.replay_after(session, after))?;
    ensure!(
        pairs(&replay) == events,
        "replay after {after} in {session:?}: got events {:?}, want {events:?}",
        pairs(&replay)
    );
    ensure!(replay.missed == missed, "replay after {after}: missed {}, want {missed}", replay.missed);
    ensure!(replay.closed == closed, "replay after {after}: closed is {}, want {closed}", replay.closed);
    ensure!(replay.is_exact() == (missed == 0), "replay after {after}: is_exact disagrees with missed");
    Ok(())
}

fn append_replays_in_order(store: &mut dyn EventStore) -> Result<(), String> {
    let (stream, ids) = stream_with(store, SESSION, &[b"a", b"b", b"c"])?;
    ensure!(stream != 0, "open_stream returned 0, which is reserved");
    let want: Vec<EventId> = (1..=3).map(|seq| EventId::new(stream, seq)).collect();
    ensure!(ids == want, "appends returned {ids:?}, want {want:?}");
    let all: [(EventId, &[u8]); 3] = [(want[0], b"a"), (want[1], b"b"), (want[2], b"c")];
    expect_replay(store, SESSION, EventId::start(stream), &all, 0, false)?;
    expect_replay(store, SESSION, want[0], &all[1..], 0, false)?;
    expect_replay(store, SESSION, want[1], &all[2..], 0, false)
}

fn replay_after_last_is_empty(store: &mut dyn EventStore) -> Result<(), String> {
    let (fresh, _) = stream_with(store, SESSION, &[])?;
    expect_replay(store, SESSION, EventId::start(fresh), &[], 0, false)?;
    let (stream, ids) = stream_with(store, SESSION, &[b"a", b"b"])?;
    expect_replay(store, SESSION, ids[1], &[], 0, false)?;
    let id = ok("append", store.append(SESSION, stream, b"c"))?;
    expect_replay(store, SESSION, ids[1], &[(id, b"c")], 0, false)
}

fn empty_payloads_are_events(store: &mut dyn EventStore) -> Result<(), String> {
    let (stream, ids) = stream_with(store, SESSION, &[b"", b"x", b""])?;
    let all: [(EventId, &[u8]); 3] = [(ids[0], b""), (ids[1], b"x"), (ids[2], b"")];
    expect_replay(store, SESSION, EventId::start(stream), &all, 0, false)
}

fn unknown_ids_are_errors(store: &mut dyn EventStore) -> Result<(), String> {
    let (stream, ids) = stream_with(store, SESSION, &[b"a"])?;
    let future = EventId::new(stream, ids[0].seq + 1);
    let got = store.replay_after(SESSION, future);
    ensure!(
        matches!(got, Err(EventStoreError::UnknownEvent { id }) if id == future),
        "replay after never-issued {future}: got {got:?}, want UnknownEvent"
    );
    let never = stream + 1000;
    let got = store.replay_after(SESSION, EventId::start(never));
    ensure!(
        matches!(got, Err(EventStoreError::UnknownStream { stream }) if stream == never),
        "replay in never-opened stream {never}: got {got:?}, want UnknownStream"
    );
    let got = store.replay_after(SESSION, EventId::start(0));
    ensure!(
        matches!(got, Err(EventStoreError::UnknownStream { stream: 0 })),
        "replay in stream 0: got {got:?}, want UnknownStream"
    );
    let got = store.replay_after(OTHER, EventId::start(stream));
    ensure!(
        matches!(got, Err(EventStoreError::UnknownStream { .. })),
        "replay in a session with no stream: got {got:?}, want UnknownStream"
    );
    let got = store.append(SESSION, never, b"x");
    ensure!(
        matches!(got, Err(EventStoreError::UnknownStream { .. })),
        "append to never-opened stream: got {got:?}, want UnknownStream"
    );
    let got = store.close_stream(SESSION, never);
    ensure!(
        matches!(got, Err(EventStoreError::UnknownStream { .. })),
        "close of never-opened stream: got {got:?}, want UnknownStream"
    );
    // The failures changed nothing.
    expect_replay(store, SESSION, EventId::start(stream), &[(ids[0], b"a")], 0, false)
}

fn streams_are_independent(store: &mut dyn EventStore) -> Result<(), String> {
    let one = ok("open_stream", store.open_stream(SESSION))?;
    let two = ok("open_stream", store.open_stream(SESSION))?;
    ensure!(one != two, "open_stream returned {one} twice");
    let a1 = ok("append", store.append(SESSION, one, b"a1"))?;
    let b1 = ok("append", store.append(SESSION, two, b"b1"))?;
    let a2 = ok("append", store.append(SESSION, one, b"a2"))?;
    ensure!(
        a1 == EventId::new(one, 1) && a2 == EventId::new(one, 2) && b1 == EventId::new(two, 1),
        "ids {a1}, {b1}, {a2}: each stream numbers its own events from 1"
    );
    ok("close_stream", store.close_stream(SESSION, two))?;
    expect_replay(store, SESSION, EventId::start(one), &[(a1, b"a1"), (a2, b"a2")], 0, false)?;
    expect_replay(store, SESSION, EventId::start(two), &[(b1, b"b1")], 0, true)
}

fn retention_drops_oldest_by_count(store: &mut dyn EventStore) -> Result<(), String> {
    let (stream, ids) = stream_with(store, SESSION, &[b"1", b"2", b"3", b"4", b"5"])?;
    let kept: [(EventId, &[u8]); 3] = [(ids[2], b"3"), (ids[3], b"4"), (ids[4], b"5")];
    expect_replay(store, SESSION, EventId::start(stream), &kept, 2, false)?;
    expect_replay(store, SESSION, ids[0], &kept, 1, false)?;
    expect_replay(store, SESSION, ids[1], &kept, 0, false)?;
    expect_replay(store, SESSION, ids[2], &kept[1..], 0, false)
}

fn retention_drops_oldest_by_bytes(store: &mut dyn EventStore) -> Result<(), String> {
    // 10 bytes per stream: three 4-byte events do not fit, two do.
    let (stream, ids) = stream_with(store, SESSION, &[b"aaaa", b"bbbb", b"cccc"])?;
    let kept: [(EventId, &[u8]); 2] = [(ids[1], b"bbbb"), (ids[2], b"cccc")];
    expect_replay(store, SESSION, EventId::start(stream), &kept, 1, false)?;
    // Exactly at the bound fits: 4 + 4 + 2.
    let d = ok("append", store.append(SESSION, stream, b"dd"))?;
    expect_replay(store, SESSION, ids[0], &[(ids[1], b"bbbb"), (ids[2], b"cccc"), (d, b"dd")], 0, false)
}

fn oversized_event_is_not_kept(store: &mut dyn EventStore) -> Result<(), String> {
    // A store that says the largest event it keeps (for the stand-in of a larger answer)
    // says the retention's.
    let said = store.max_event_bytes();
    ensure!(matches!(said, None | Some(4)), "max_event_bytes says {said:?} under a 4-byte retention");
    // 4 bytes per stream: a 6-byte event gets its id and pushes out everything older.
    let (stream, ids) = stream_with(store, SESSION, &[b"ab", b"123456"])?;
    ensure!(ids[1] == EventId::new(stream, 2), "the oversized event got id {}, want {stream}-2", ids[1]);
    expect_replay(store, SESSION, EventId::start(stream), &[], 2, false)?;
    expect_replay(store, SESSION, ids[1], &[], 0, false)?;
    let c = ok("append", store.append(SESSION, stream, b"cd"))?;
    expect_replay(store, SESSION, EventId::start(stream), &[(c, b"cd")], 2, false)?;
    expect_replay(store, SESSION, ids[0], &[(c, b"cd")], 1, false)?;
    expect_replay(store, SESSION, ids[1], &[(c, b"cd")], 0, false)
}

fn zero_max_events_keeps_nothing(store: &mut dyn EventStore) -> Result<(), String> {
    let (stream, ids) = stream_with(store, SESSION, &[b"a", b"b"])?;
    ensure!(ids == [EventId::new(stream, 1), EventId::new(stream, 2)], "ids {ids:?} still number the events");
    expect_replay(store, SESSION, EventId::start(stream), &[], 2, false)?;
    expect_replay(store, SESSION, ids[1], &[], 0, false)
}

fn closed_stream_is_reported(store: &mut dyn EventStore) -> Result<(), String> {
    let (stream, ids) = stream_with(store, SESSION, &[b"a"])?;
    ok("close_stream", store.close_stream(SESSION, stream))?;
    expect_replay(store, SESSION, EventId::start(stream), &[(ids[0], b"a")], 0, true)?;
    expect_replay(store, SESSION, ids[0], &[], 0, true)?;
    let got = store.append(SESSION, stream, b"b");
    ensure!(
        matches!(got, Err(EventStoreError::StreamClosed { stream: s }) if s == stream),
        "append after close: got {got:?}, want StreamClosed"
    );
    ok("second close_stream", store.close_stream(SESSION, stream))?;
    expect_replay(store, SESSION, EventId::start(stream), &[(ids[0], b"a")], 0, true)
}

fn append_last_ends_the_stream_once(store: &mut dyn EventStore) -> Result<(), String> {
    let (stream, ids) = stream_with(store, SESSION, &[b"a"])?;
    let last = ok("append_last", store.append_last(SESSION, stream, b"z"))?;
    ensure!(last == EventId::new(stream, ids[0].seq + 1), "append_last returned {last}");
    expect_replay(store, SESSION, EventId::start(stream), &[(ids[0], b"a"), (last, b"z")], 0, true)?;
    let got = store.append_last(SESSION, stream, b"y");
    ensure!(
        matches!(got, Err(EventStoreError::StreamClosed { stream: s }) if s == stream),
        "a second append_last: got {got:?}, want StreamClosed"
    );
    expect_replay(store, SESSION, ids[0], &[(last, b"z")], 0, true)
}

fn open_with_event_starts_a_stream(store: &mut dyn EventStore) -> Result<(), String> {
    let (older, _) = stream_with(store, SESSION, &[b"a"])?;
    let first = ok("open_with_event", store.open_with_event(SESSION, Some(b"me"), b"b", false))?;
    ensure!(first.stream != older && first.seq == 1, "open_with_event returned {first}, beside stream {older}");
    let next = ok("append", store.append(SESSION, first.stream, b"c"))?;
    expect_replay(store, SESSION, EventId::start(first.stream), &[(first, b"b"), (next, b"c")], 0, false)?;
    // A store that keeps claims keeps this one too.
    let claimed = ok("open_claimed_stream", store.open_claimed_stream(OTHER, b"me"))?;
    let keeps = ok("claim_of", store.claim_of(OTHER, claimed))?.is_some();
    let claim = ok("claim_of", store.claim_of(SESSION, first.stream))?;
    let want: Option<&[u8]> = if keeps { Some(b"me") } else { None };
    ensure!(claim.as_deref() == want, "claim_of: {claim:?}, want {want:?}");
    // As the last event: the stream is complete at once. It is the third stream of two
    // allowed: the oldest goes, as when a stream is opened.
    let last = ok("open_with_event", store.open_with_event(SESSION, None, b"z", true))?;
    expect_replay(store, SESSION, EventId::start(last.stream), &[(last, b"z")], 0, true)?;
    let got = store.replay_after(SESSION, EventId::start(older));
    ensure!(
        matches!(got, Err(EventStoreError::StreamEvicted { .. } | EventStoreError::UnknownStream { .. })),
        "the oldest of three streams, two allowed: got {got:?}, want it evicted"
    );
    Ok(())
}

fn sessions_are_isolated(store: &mut dyn EventStore) -> Result<(), String> {
    let (mine, my_ids) = stream_with(store, SESSION, &[b"mine"])?;
    let (theirs, their_ids) = stream_with(store, OTHER, &[b"theirs", b"theirs too"])?;
    expect_replay(store, SESSION, EventId::start(mine), &[(my_ids[0], b"mine")], 0, false)?;
    let all_theirs: [(EventId, &[u8]); 2] = [(their_ids[0], b"theirs"), (their_ids[1], b"theirs too")];
    expect_replay(store, OTHER, EventId::start(theirs), &all_theirs, 0, false)?;
    if mine == theirs {
        // The same stream number in two sessions: still two streams.
        let got = store.replay_after(SESSION, their_ids[1]);
        ensure!(
            matches!(got, Err(EventStoreError::UnknownEvent { .. })),
            "{SESSION:?} replayed after an id only {OTHER:?} issued: got {got:?}, want UnknownEvent"
        );
    } else {
        let got = store.replay_after(SESSION, EventId::start(theirs));
        ensure!(
            matches!(got, Err(EventStoreError::UnknownStream { .. })),
            "{SESSION:?} replayed a stream of {OTHER:?}: got {got:?}, want UnknownStream"
        );
    }
    ok("close_stream", store.close_stream(OTHER, theirs))?;
    ok("drop_session", store.drop_session(OTHER))?;
    expect_replay(store, SESSION, EventId::start(mine), &[(my_ids[0], b"mine")], 0, false)
}

fn dropping_a_session_forgets_it(store: &mut dyn EventStore) -> Result<(), String> {
    let (one, _) = stream_with(store, SESSION, &[b"a", b"b"])?;
    let (two, _) = stream_with(store, SESSION, &[b"c"])?;
    ok("close_stream", store.close_stream(SESSION, two))?;
    ok("drop_session", store.drop_session(SESSION))?;
    for stream in [one, two] {
        let got = store.replay_after(SESSION, EventId::start(stream));
        ensure!(
            matches!(got, Err(EventStoreError::UnknownStream { .. })),
            "replay of stream {stream} of a dropped session: got {got:?}, want UnknownStream"
        );
        let got = store.append(SESSION, stream, b"x");
        ensure!(
            matches!(got, Err(EventStoreError::UnknownStream { .. })),
            "append to stream {stream} of a dropped session: got {got:?}, want UnknownStream"
        );
    }
    ok("drop_session again", store.drop_session(SESSION))?;
    ok("drop_session of an unknown session", store.drop_session(OTHER))?;
    let (other, ids) = stream_with(store, OTHER, &[b"d"])?;
    expect_replay(store, OTHER, EventId::start(other), &[(ids[0], b"d")], 0, false)
}

fn stream_count_is_bounded(store: &mut dyn EventStore) -> Result<(), String> {
    // Two streams per session: a closed stream goes first, then the oldest open one.
    let (first, _) = stream_with(store, SESSION, &[b"1"])?;
    let (second, _) = stream_with(store, SESSION, &[b"2"])?;
    ok("close_stream", store.close_stream(SESSION, second))?;
    let (third, third_ids) = stream_with(store, SESSION, &[b"3"])?;
    ensure!(first < second && second < third, "stream ids {first}, {second}, {third} do not increase");
    let got = store.replay_after(SESSION, EventId::start(second));
    ensure!(
        matches!(got, Err(EventStoreError::StreamEvicted { stream }) if stream == second),
        "replay of the closed stream evicted for a newer one: got {got:?}, want StreamEvicted"
    );
    let (fourth, fourth_ids) = stream_with(store, SESSION, &[b"4"])?;
    let got = store.replay_after(SESSION, EventId::start(first));
    ensure!(
        matches!(got, Err(EventStoreError::StreamEvicted { stream }) if stream == first),
        "replay of the oldest open stream evicted for a newer one: got {got:?}, want StreamEvicted"
    );
    let got = store.append(SESSION, first, b"x");
    ensure!(
        matches!(got, Err(EventStoreError::StreamEvicted { .. })),
        "append to an evicted stream: got {got:?}, want StreamEvicted"
    );
    ensure!(fourth > third, "stream id {fourth} after {third}: ids are reused");
    expect_replay(store, SESSION, EventId::start(third), &[(third_ids[0], b"3")], 0, false)?;
    expect_replay(store, SESSION, EventId::start(fourth), &[(fourth_ids[0], b"4")], 0, false)?;
    // Another session's budget is its own.
    let (other, other_ids) = stream_with(store, OTHER, &[b"o"])?;
    expect_replay(store, OTHER, EventId::start(other), &[(other_ids[0], b"o")], 0, false)?;
    expect_replay(store, SESSION, EventId::start(third), &[(third_ids[0], b"3")], 0, false)
}

// --- session store checks -------------------------------------------------------------------

const A: &str = "conformance-a";
const B: &str = "conformance-b";
const C: &str = "conformance-c";

/// Loads `session` and checks its record, or its absence.
fn expect_record(store: &mut dyn SessionStore, session: &str, want: Option<(&[u8], Instant)>) -> Result<(), String> {
    let got = ok("load", store.load(session))?;
    let got = got.as_ref().map(|r| (&r.data[..], r.last_seen));
    ensure!(got == want, "load({session:?}): got {got:?}, want {want:?}");
    Ok(())
}

fn store_then_load(store: &mut dyn SessionStore, t0: Instant) -> Result<(), String> {
    expect_record(store, A, None)?;
    ok("store", store.store(A, b"snapshot".to_vec(), t0))?;
    expect_record(store, A, Some((b"snapshot", t0)))?;
    ok("store", store.store(B, Vec::new(), t0))?;
    expect_record(store, B, Some((b"", t0)))
}

fn store_replaces(store: &mut dyn SessionStore, t0: Instant) -> Result<(), String> {
    let t1 = t0 + Duration::from_secs(5);
    ok("store", store.store(A, b"first".to_vec(), t0))?;
    ok("store", store.store(A, b"second".to_vec(), t1))?;
    expect_record(store, A, Some((b"second", t1)))?;
    // A stale `now` (another process's clock) replaces the data but not the time.
    ok("store", store.store(A, b"third".to_vec(), t0))?;
    expect_record(store, A, Some((b"third", t1)))
}

fn touch_moves_last_seen_forward(store: &mut dyn SessionStore, t0: Instant) -> Result<(), String> {
    let unknown = ok("touch", store.touch(A, t0))?;
    ensure!(!unknown, "touch of an unknown session returned true");
    expect_record(store, A, None)?;
    ok("store", store.store(A, b"x".to_vec(), t0))?;
    let t1 = t0 + Duration::from_secs(10);
    ensure!(ok("touch", store.touch(A, t1))?, "touch of a stored session returned false");
    expect_record(store, A, Some((b"x", t1)))?;
    ensure!(ok("touch", store.touch(A, t0))?, "touch of a stored session returned false");
    expect_record(store, A, Some((b"x", t1)))
}

fn delete_forgets(store: &mut dyn SessionStore, t0: Instant) -> Result<(), String> {
    ok("store", store.store(A, b"x".to_vec(), t0))?;
    ensure!(ok("delete", store.delete(A))?, "delete of a stored session returned false");
    expect_record(store, A, None)?;
    ensure!(!ok("delete", store.delete(A))?, "second delete returned true");
    ensure!(!ok("touch", store.touch(A, t0))?, "touch after delete returned true");
    let idle = Duration::from_secs(1);
    let expired = ok("expired", store.expired(t0 + idle * 10, idle))?;
    ensure!(expired.is_empty(), "expired lists deleted sessions: {expired:?}");
    Ok(())
}

fn expired_lists_idle_sessions(store: &mut dyn SessionStore, t0: Instant) -> Result<(), String> {
    let idle = Duration::from_secs(60);
    let at = |secs| t0 + Duration::from_secs(secs);
    // Stored in an order unlike the ids', so the ascending order is the store's doing.
    ok("store", store.store(C, b"c".to_vec(), at(0)))?;
    ok("store", store.store(A, b"a".to_vec(), at(30)))?;
    ok("store", store.store(B, b"b".to_vec(), at(0)))?;
    ok("touch", store.touch(B, at(60)))?;
    let cases: [(u64, &[&str]); 5] = [(0, &[]), (60, &[]), (61, &[C]), (91, &[A, C]), (121, &[A, B, C])];
    for (secs, want) in cases {
        let got = ok("expired", store.expired(at(secs), idle))?;
        ensure!(got == want, "expired at t0+{secs}s with a {idle:?} timeout: got {got:?}, want {want:?}");
    }
    // Listing removed nothing.
    expect_record(store, C, Some((b"c", at(0))))
}

fn records_are_isolated(store: &mut dyn SessionStore, t0: Instant) -> Result<(), String> {
    let t1 = t0 + Duration::from_secs(1);
    ok("store", store.store(A, b"a".to_vec(), t0))?;
    ok("store", store.store(B, b"b".to_vec(), t0))?;
    ok("touch", store.touch(A, t1))?;
    ok("store", store.store(A, b"a2".to_vec(), t1))?;
    expect_record(store, B, Some((b"b", t0)))?;
    ok("delete", store.delete(A))?;
    expect_record(store, B, Some((b"b", t0)))
}

fn store_if_writes_only_over_the_expected_record(store: &mut dyn SessionStore, t0: Instant) -> Result<(), String> {
    let t1 = t0 + Duration::from_secs(1);
    let got = ok("store_if", store.store_if(A, b"new".to_vec(), b"old", t0))?;
    ensure!(got == StoreIf::Gone, "store_if of a session never stored: got {got:?}, want Gone");
    expect_record(store, A, None)?;
    ok("store", store.store(A, b"v1".to_vec(), t0))?;
    let got = ok("store_if", store.store_if(A, b"v2".to_vec(), b"v1", t1))?;
    ensure!(got == StoreIf::Stored, "store_if over the expected record: got {got:?}, want Stored");
    expect_record(store, A, Some((b"v2", t1)))?;
    // A process that still holds v1 must not undo v2.
    let got = ok("store_if", store.store_if(A, b"v3".to_vec(), b"v1", t1))?;
    let want = StoreIf::Changed(SessionRecord::new(b"v2".to_vec(), t1));
    ensure!(got == want, "store_if over another record: got {got:?}, want {want:?}");
    expect_record(store, A, Some((b"v2", t1)))?;
    ok("delete", store.delete(A))?;
    let got = ok("store_if", store.store_if(A, b"v3".to_vec(), b"v2", t1))?;
    ensure!(got == StoreIf::Gone, "store_if of a deleted session: got {got:?}, want Gone");
    expect_record(store, A, None)
}

fn store_new_writes_only_a_first_record(store: &mut dyn SessionStore, t0: Instant) -> Result<(), String> {
    let t1 = t0 + Duration::from_secs(1);
    let got = ok("store_new", store.store_new(A, b"v1".to_vec(), t0))?;
    ensure!(got == StoreIf::Stored, "store_new of a session never stored: got {got:?}, want Stored");
    expect_record(store, A, Some((b"v1", t0)))?;
    ok("store", store.store(A, b"v2".to_vec(), t1))?;
    // The first write again, landing late: v2 stays.
    let got = ok("store_new", store.store_new(A, b"v1".to_vec(), t1))?;
    let want = StoreIf::Changed(SessionRecord::new(b"v2".to_vec(), t1));
    ensure!(got == want, "store_new over a record: got {got:?}, want {want:?}");
    expect_record(store, A, Some((b"v2", t1)))?;
    expect_record(store, B, None)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use crate::time::{Duration, Instant};

    use super::*;
    use crate::http::event_log::{MemoryEventStore, MemorySessionStore, SessionRecord, SessionStoreError};
    use crate::test_clock::t0;

    #[test]
    fn memory_event_store_passes() {
        check_event_store(MemoryEventStore::new).unwrap();
    }

    #[test]
    fn memory_session_store_passes() {
        check_session_store(MemorySessionStore::new, t0()).unwrap();
    }

    #[test]
    fn boxed_and_borrowed_stores_pass() {
        check_event_store(|r| Box::new(MemoryEventStore::new(r)) as Box<dyn EventStore>).unwrap();
        check_session_store(|| Box::new(MemorySessionStore::new()) as Box<dyn SessionStore + Send>, t0()).unwrap();
    }

    /// An event store that forgets closed markers: the kit must notice.
    struct ForgetsClosing(MemoryEventStore);

    impl EventStore for ForgetsClosing {
        fn open_stream(&mut self, session: &str) -> Result<u64, EventStoreError> {
            self.0.open_stream(session)
        }
        fn append(&mut self, session: &str, stream: u64, data: &[u8]) -> Result<EventId, EventStoreError> {
            self.0.append(session, stream, data)
        }
        fn replay_after(&mut self, session: &str, after: EventId) -> Result<Replay, EventStoreError> {
            self.0.replay_after(session, after)
        }
        fn close_stream(&mut self, session: &str, stream: u64) -> Result<(), EventStoreError> {
            self.0.replay_after(session, EventId::start(stream)).map(|_| ())
        }
        fn drop_session(&mut self, session: &str) -> Result<(), EventStoreError> {
            self.0.drop_session(session)
        }
    }

    #[test]
    fn kit_catches_a_store_that_forgets_closing() {
        let err = check_event_store(|r| ForgetsClosing(MemoryEventStore::new(r))).unwrap_err();
        assert_eq!(err.check, "streams_are_independent", "{err}");
        assert!(err.message.contains("closed is false, want true"), "{err}");
    }

    /// An event store that ignores retention: the kit must notice.
    #[test]
    fn kit_catches_a_store_without_retention() {
        let err = check_event_store(|_| MemoryEventStore::new(Retention::new())).unwrap_err();
        assert_eq!(err.check, "retention_drops_oldest_by_count", "{err}");
    }

    /// A session store whose clock goes back and which loses data: the kit must notice.
    #[derive(Default)]
    struct Careless(MemorySessionStore);

    impl SessionStore for Careless {
        fn load(&mut self, session: &str) -> Result<Option<SessionRecord>, SessionStoreError> {
            self.0.load(session)
        }
        fn store(&mut self, session: &str, data: Vec<u8>, now: Instant) -> Result<(), SessionStoreError> {
            self.0.delete(session)?;
            self.0.store(session, data, now)
        }
        fn touch(&mut self, session: &str, now: Instant) -> Result<bool, SessionStoreError> {
            self.0.touch(session, now)
        }
        fn delete(&mut self, session: &str) -> Result<bool, SessionStoreError> {
            self.0.delete(session)
        }
        fn expired(&mut self, now: Instant, idle: Duration) -> Result<Vec<String>, SessionStoreError> {
            self.0.expired(now, idle)
        }
    }

    #[test]
    fn kit_catches_a_session_store_whose_time_goes_back() {
        let err = check_session_store(Careless::default, t0()).unwrap_err();
        assert_eq!(err.check, "store_replaces", "{err}");
    }

    #[test]
    fn kit_reports_backend_errors() {
        struct Down;
        impl SessionStore for Down {
            fn load(&mut self, _: &str) -> Result<Option<SessionRecord>, SessionStoreError> {
                Err(SessionStoreError::Backend("connection refused".into()))
            }
            fn store(&mut self, _: &str, _: Vec<u8>, _: Instant) -> Result<(), SessionStoreError> {
                Err(SessionStoreError::Backend("connection refused".into()))
            }
            fn touch(&mut self, _: &str, _: Instant) -> Result<bool, SessionStoreError> {
                Err(SessionStoreError::Backend("connection refused".into()))
            }
            fn delete(&mut self, _: &str) -> Result<bool, SessionStoreError> {
                Err(SessionStoreError::Backend("connection refused".into()))
            }
            fn expired(&mut self, _: Instant, _: Duration) -> Result<Vec<String>, SessionStoreError> {
                Err(SessionStoreError::Backend("connection refused".into()))
            }
        }
        let err = check_session_store(|| Down, t0()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "store_then_load: load: unexpected error: session store backend: connection refused"
        );
    }
}
