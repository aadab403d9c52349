//! `RedisEventStore` against a real `redis-server`: the event store contract (the core's
//! conformance battery, retention included), and a stream written by one process resumed
//! through another.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod common;

use common::{unique_prefix, RedisServer};
use talaria_core::http::conformance::check_event_store;
use talaria_core::http::event_log::{EventId, EventStore, Retention};
use talaria_redis::{RedisEventStore, RedisOptions};

#[test]
fn the_event_store_contract_holds() {
    let server = RedisServer::start();
    let make = |retention| {
        RedisEventStore::connect(&server.url(), RedisOptions::default().prefix(unique_prefix()), retention).unwrap()
    };
    check_event_store(make).unwrap();
}

#[test]
fn a_stream_written_by_one_process_resumes_through_another() {
    let server = RedisServer::start();
    let prefix = unique_prefix();
    let open = || {
        RedisEventStore::connect(&server.url(), RedisOptions::default().prefix(&prefix), Retention::default()).unwrap()
    };
    let (mut writer, mut reader) = (open(), open());
    let stream = writer.open_stream("s").unwrap();
    let ids: Vec<EventId> =
        [&b"one"[..], b"two", b"three"].iter().map(|d| writer.append("s", stream, d).unwrap()).collect();
    let replay = reader.replay_after("s", ids[0]).unwrap();
    let got: Vec<&[u8]> = replay.events.iter().map(|e| &e.data[..]).collect();
    assert_eq!(got, [&b"two"[..], b"three"]);
    assert_eq!(replay.events[1].id, ids[2]);
    assert!(replay.is_exact() && !replay.closed);
    reader.close_stream("s", stream).unwrap();
    assert!(writer.append("s", stream, b"four").is_err(), "closed by the other process");
    writer.drop_session("s").unwrap();
    assert!(reader.replay_after("s", ids[0]).is_err(), "dropped everywhere");
}

#[test]
fn a_claim_is_kept_with_its_stream_and_goes_with_it() {
    let server = RedisServer::start();
    let prefix = unique_prefix();
    let connect = || {
        RedisEventStore::connect(&server.url(), RedisOptions::default().prefix(&prefix), Retention::default()).unwrap()
    };
    let (mut writer, mut reader) = (connect(), connect());
    let claimed = writer.open_claimed_stream("s1", br#"{"process":"p1-","requests":[4]}"#).unwrap();
    let plain = writer.open_stream("s1").unwrap();
    assert_eq!(reader.claim_of("s1", claimed).unwrap().as_deref(), Some(&br#"{"process":"p1-","requests":[4]}"#[..]));
    assert_eq!(reader.claim_of("s1", plain).unwrap(), None, "none noted");
    assert_eq!(reader.claim_of("s1", plain + 9).unwrap(), None, "no such stream");
    // The claimed stream is a stream like any other.
    let id = writer.append("s1", claimed, b"{}").unwrap();
    assert_eq!(reader.replay_after("s1", EventId::start(claimed)).unwrap().events[0].id, id);
    writer.drop_session("s1").unwrap();
    assert_eq!(reader.claim_of("s1", claimed).unwrap(), None, "gone with the session's logs");
}
