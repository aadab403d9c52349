//! The in-memory stores: accounting, edge cases, and properties against a model.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeMap;
use std::time::Duration;

use proptest::prelude::*;

use super::*;
use crate::test_clock::t0;

fn data(replay: &Replay) -> Vec<&[u8]> {
    replay.events.iter().map(|e| &e.data[..]).collect()
}

#[test]
fn event_ids_print_and_parse_canonically() {
    assert_eq!(EventId::new(0, 0).to_string(), "0-0");
    assert_eq!(EventId::new(u64::MAX, 1).to_string(), "18446744073709551615-1");
    assert_eq!("18446744073709551615-1".parse(), Ok(EventId::new(u64::MAX, 1)));
    assert_eq!("12-0".parse(), Ok(EventId::start(12)));
    for bad in [
        "",
        "-",
        "1",
        "1-",
        "-1",
        "1--1",
        "1-2-3",
        "01-1",
        "1-01",
        "+1-1",
        "1-+1",
        " 1-1",
        "1-1 ",
        "a-1",
        "1-a",
        "18446744073709551616-1",
        "1-18446744073709551616",
        "1_000-1",
        "١-١",
    ] {
        assert_eq!(bad.parse::<EventId>(), Err(ParseEventIdError), "{bad:?}");
    }
}

#[test]
fn accounting_follows_appends_evictions_and_drops() {
    let mut log = MemoryEventStore::new(Retention::new().with_max_events(2).with_max_bytes(10).with_max_streams(2));
    let one = log.open_stream("s").unwrap();
    log.append("s", one, b"aaa").unwrap();
    log.append("s", one, b"bbb").unwrap();
    log.append("s", one, b"cccc").unwrap(); // count bound: "aaa" goes
    assert_eq!((log.len(), log.bytes()), (2, 7));
    log.append("s", one, b"dddddddd").unwrap(); // byte bound: both older go
    assert_eq!((log.len(), log.bytes()), (1, 8));
    log.append("s", one, b"eleven bytes").unwrap(); // oversized: nothing kept
    assert_eq!((log.len(), log.bytes()), (0, 0));
    log.append("s", one, b"f").unwrap();
    let two = log.open_stream("s").unwrap();
    log.append("s", two, b"gg").unwrap();
    let other = log.open_stream("t").unwrap();
    log.append("t", other, b"hhh").unwrap();
    assert_eq!((log.len(), log.bytes(), log.session_count()), (3, 6, 2));
    log.open_stream("s").unwrap(); // evicts `one` (the oldest, none closed)
    assert_eq!((log.len(), log.bytes(), log.stream_count("s")), (2, 5, 2));
    log.drop_session("s").unwrap();
    assert_eq!((log.len(), log.bytes(), log.session_count(), log.stream_count("s")), (1, 3, 1, 0));
    log.drop_session("t").unwrap();
    assert!(log.is_empty());
    assert_eq!((log.len(), log.bytes()), (0, 0));
}

#[test]
fn eviction_prefers_the_oldest_closed_stream() {
    let mut log = MemoryEventStore::new(Retention::new().with_max_streams(3));
    let streams: Vec<u64> = (0..3).map(|_| log.open_stream("s").unwrap()).collect();
    log.close_stream("s", streams[2]).unwrap();
    log.close_stream("s", streams[1]).unwrap();
    let fourth = log.open_stream("s").unwrap();
    assert!(matches!(
        log.replay_after("s", EventId::start(streams[1])),
        Err(EventStoreError::StreamEvicted { stream }) if stream == streams[1]
    ));
    for live in [streams[0], streams[2], fourth] {
        log.replay_after("s", EventId::start(live)).unwrap();
    }
    assert_eq!(fourth, 4);
}

#[test]
fn close_of_an_evicted_stream_says_so() {
    let mut log = MemoryEventStore::new(Retention::new().with_max_streams(1));
    let first = log.open_stream("s").unwrap();
    log.open_stream("s").unwrap();
    assert!(matches!(log.close_stream("s", first), Err(EventStoreError::StreamEvicted { stream: 1 })));
    assert!(matches!(log.close_stream("s", 9), Err(EventStoreError::UnknownStream { stream: 9 })));
}

#[test]
fn replay_of_a_closed_stream_after_retention_still_reports_closed() {
    let mut log = MemoryEventStore::new(Retention::new().with_max_events(1));
    let stream = log.open_stream("s").unwrap();
    for payload in [b"1", b"2", b"3"] {
        log.append("s", stream, payload).unwrap();
    }
    log.close_stream("s", stream).unwrap();
    let replay = log.replay_after("s", EventId::start(stream)).unwrap();
    assert_eq!((data(&replay), replay.missed, replay.closed), (vec![&b"3"[..]], 2, true));
}

#[test]
fn errors_display_what_went_wrong() {
    let err = EventStoreError::UnknownEvent { id: EventId::new(2, 7) };
    assert_eq!(err.to_string(), "event 2-7 was never appended");
    let err = EventStoreError::Backend("timed out".into());
    assert_eq!(err.to_string(), "event store backend: timed out");
    assert!(std::error::Error::source(&err).is_some());
}

#[test]
fn stores_can_be_shared_between_threads() {
    fn shareable<T: Send + Sync>() {}
    shareable::<std::sync::Mutex<MemoryEventStore>>();
    shareable::<std::sync::Mutex<MemorySessionStore>>();
    shareable::<EventStoreError>();
    shareable::<SessionStoreError>();
}

#[test]
fn session_store_accounts_bytes() {
    let now = t0();
    let mut store = MemorySessionStore::new();
    store.store("a", vec![0; 10], now).unwrap();
    store.store("b", vec![0; 5], now).unwrap();
    store.store("a", vec![0; 3], now).unwrap();
    assert_eq!((store.len(), store.bytes()), (2, 8));
    store.delete("b").unwrap();
    assert_eq!((store.len(), store.bytes()), (1, 3));
    store.delete("a").unwrap();
    assert!(store.is_empty());
    assert_eq!(store.bytes(), 0);
}

#[test]
fn expired_at_the_deadline_is_not_yet() {
    let now = t0();
    let idle = Duration::from_secs(30);
    let record = SessionRecord::new(Vec::new(), now + idle);
    assert!(!record.is_expired(now, idle)); // `now` before `last_seen`
    assert!(!record.is_expired(now + idle * 2, idle));
    assert!(record.is_expired(now + idle * 2 + Duration::from_nanos(1), idle));
}

/// One step of a random workload on one session.
#[derive(Debug, Clone)]
enum Op {
    Open,
    Append { stream: usize, len: usize },
    Close { stream: usize },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        1 => Just(Op::Open),
        8 => (any::<usize>(), 0..12_usize).prop_map(|(stream, len)| Op::Append { stream, len }),
        1 => any::<usize>().prop_map(|stream| Op::Close { stream }),
    ]
}

/// What a stream is owed, kept naively: every event ever appended.
#[derive(Debug, Default)]
struct ModelStream {
    all: Vec<Vec<u8>>,
    closed: bool,
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn any_printed_id_parses_back(stream in any::<u64>(), seq in any::<u64>()) {
        let id = EventId::new(stream, seq);
        prop_assert_eq!(id.to_string().parse::<EventId>(), Ok(id));
    }

    #[test]
    fn parsing_never_panics_and_round_trips(s in "\\PC{0,24}|[0-9]{1,21}-[0-9]{1,21}") {
        if let Ok(id) = s.parse::<EventId>() {
            prop_assert_eq!(id.to_string(), s);
        }
    }

    /// Against a model that keeps everything: a replay from any issued id returns a suffix of
    /// what was appended after it, the newest events, within the bounds, with `missed` counting
    /// exactly what is not there.
    #[test]
    fn replay_is_the_retained_suffix(
        max_events in 0..6_usize,
        max_bytes in 0..24_usize,
        max_streams in 1..4_usize,
        ops in prop::collection::vec(op(), 1..80),
    ) {
        let retention = Retention::new().with_max_events(max_events).with_max_bytes(max_bytes).with_max_streams(max_streams);
        let mut log = MemoryEventStore::new(retention);
        let mut model: BTreeMap<u64, ModelStream> = BTreeMap::new();
        let mut counter = 0_u8;
        for op in ops {
            let live: Vec<u64> = log.sessions.get("s").map(|s| s.streams.keys().copied().collect()).unwrap_or_default();
            match op {
                Op::Open => {
                    let stream = log.open_stream("s").unwrap();
                    prop_assert!(model.keys().all(|&old| old < stream));
                    model.insert(stream, ModelStream::default());
                }
                Op::Append { stream, len } if !live.is_empty() => {
                    let stream = live[stream % live.len()];
                    counter = counter.wrapping_add(1);
                    let payload = vec![counter; len];
                    let got = log.append("s", stream, &payload);
                    let entry = model.get_mut(&stream).unwrap();
                    if entry.closed {
                        prop_assert!(matches!(got, Err(EventStoreError::StreamClosed { .. })), "{:?}", got);
                    } else {
                        entry.all.push(payload);
                        prop_assert_eq!(got.unwrap(), EventId::new(stream, entry.all.len() as u64));
                    }
                }
                Op::Close { stream } if !live.is_empty() => {
                    let stream = live[stream % live.len()];
                    log.close_stream("s", stream).unwrap();
                    model.get_mut(&stream).unwrap().closed = true;
                }
                Op::Append { .. } | Op::Close { .. } => {}
            }
            // Bounds and accounting hold after every step.
            let streams = log.sessions.get("s").map(|s| &s.streams);
            prop_assert!(streams.map_or(0, BTreeMap::len) <= max_streams);
            let (mut events, mut bytes) = (0, 0);
            for stream in streams.into_iter().flat_map(BTreeMap::values) {
                prop_assert!(stream.events.len() <= max_events);
                prop_assert!(stream.bytes <= max_bytes);
                prop_assert_eq!(stream.bytes, stream.events.iter().map(|e| e.data.len()).sum::<usize>());
                events += stream.events.len();
                bytes += stream.bytes;
            }
            prop_assert_eq!((log.len(), log.bytes()), (events, bytes));
        }
        for (&stream, owed) in &model {
            let last = owed.all.len() as u64;
            let whole = log.replay_after("s", EventId::start(stream));
            let Ok(whole) = whole else {
                prop_assert!(matches!(whole, Err(EventStoreError::StreamEvicted { .. })), "{:?}", whole);
                continue;
            };
            // Retention keeps the newest events that fit: one more would break a bound.
            if whole.missed > 0 {
                let next = &owed.all[usize::try_from(whole.missed).unwrap() - 1];
                let bytes: usize = whole.events.iter().map(|e| e.data.len()).sum();
                prop_assert!(whole.events.len() + 1 > max_events || bytes + next.len() > max_bytes);
            }
            for after in 0..=last {
                let replay = log.replay_after("s", EventId::new(stream, after)).unwrap();
                let wanted = &owed.all[usize::try_from(after).unwrap()..];
                let kept = replay.events.len();
                prop_assert!(kept <= wanted.len());
                let newest: Vec<&[u8]> = wanted[wanted.len() - kept..].iter().map(Vec::as_slice).collect();
                prop_assert_eq!(data(&replay), newest);
                prop_assert_eq!(replay.missed, (wanted.len() - kept) as u64);
                prop_assert_eq!(replay.closed, owed.closed);
                for (offset, event) in replay.events.iter().enumerate() {
                    prop_assert_eq!(event.id, EventId::new(stream, after + replay.missed + offset as u64 + 1));
                }
            }
            let too_far = log.replay_after("s", EventId::new(stream, last + 1));
            prop_assert!(matches!(too_far, Err(EventStoreError::UnknownEvent { .. })), "{:?}", too_far);
        }
    }

    /// Session store: `expired` agrees with `is_expired` on every record, in id order.
    #[test]
    fn expired_matches_each_record(
        touches in prop::collection::vec((0..6_u8, 0..100_u64), 0..40),
        now in 0..200_u64,
        idle in 0..100_u64,
    ) {
        let base = t0();
        let mut store = MemorySessionStore::new();
        for (id, at) in touches {
            let id = id.to_string();
            let at = base + Duration::from_secs(at);
            if !store.touch(&id, at).unwrap() {
                store.store(&id, id.clone().into_bytes(), at).unwrap();
            }
        }
        let (now, idle) = (base + Duration::from_secs(now), Duration::from_secs(idle));
        let want: Vec<String> = (0..6)
            .map(|id| id.to_string())
            .filter(|id| store.load(id).unwrap().is_some_and(|r| r.is_expired(now, idle)))
            .collect();
        prop_assert_eq!(store.expired(now, idle).unwrap(), want);
    }
}
