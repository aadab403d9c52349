//! `RedisSessionStore` against a real `redis-server`: the session store contract (the core's
//! conformance battery), sessions shared between stores (processes), key expiry, and an
//! outage: errors within the timeouts, service again once Redis is back.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod common;

use std::time::{Duration, Instant};

use common::{unique_prefix, RedisServer};
use talaria_core::http::conformance::check_session_store;
use talaria_core::http::event_log::SessionStore;
use talaria_redis::{RedisOptions, RedisSessionStore};

fn store(server: &RedisServer, prefix: &str) -> RedisSessionStore {
    RedisSessionStore::connect(&server.url(), RedisOptions::default().prefix(prefix)).unwrap()
}

#[test]
fn the_session_store_contract_holds() {
    let server = RedisServer::start();
    check_session_store(|| store(&server, &unique_prefix()), Instant::now()).unwrap();
}

#[test]
fn a_session_stored_by_one_process_is_loaded_touched_and_deleted_by_another() {
    let server = RedisServer::start();
    let prefix = unique_prefix();
    let (mut a, mut b) = (store(&server, &prefix), store(&server, &prefix));
    let now = Instant::now();
    a.store("s1", b"snapshot".to_vec(), now).unwrap();
    let record = b.load("s1").unwrap().unwrap();
    assert_eq!(record.data, b"snapshot");
    // Each store has its own clock anchor; wall time agrees to well within a millisecond.
    let skew = record.last_seen.max(now) - record.last_seen.min(now);
    assert!(skew < Duration::from_millis(1), "{skew:?}");
    assert!(b.touch("s1", now + Duration::from_secs(5)).unwrap());
    assert_eq!(a.expired(now + Duration::from_secs(64), Duration::from_secs(60)).unwrap(), Vec::<String>::new());
    assert_eq!(a.expired(now + Duration::from_secs(66), Duration::from_secs(60)).unwrap(), ["s1"]);
    assert!(b.delete("s1").unwrap(), "one process deletes");
    assert!(a.load("s1").unwrap().is_none(), "the other sees it gone");
    assert!(!a.touch("s1", now).unwrap());
}

#[test]
fn sessions_expire_in_redis_itself_when_a_ttl_is_set() {
    let server = RedisServer::start();
    let prefix = unique_prefix();
    let options = RedisOptions::default().prefix(&prefix).session_ttl(Duration::from_secs(30));
    let mut store = RedisSessionStore::connect(&server.url(), options).unwrap();
    store.store("s1", b"x".to_vec(), Instant::now()).unwrap();
    let client = redis::Client::open(server.url()).unwrap();
    let mut connection = client.get_connection().unwrap();
    let ttl: i64 = redis::cmd("PTTL").arg(format!("{prefix}session:s1")).query(&mut connection).unwrap();
    assert!((1..=30_000).contains(&ttl), "the key expires with the session: {ttl} ms");
}

#[test]
fn an_outage_is_an_error_within_the_timeouts_and_service_resumes_with_redis() {
    let server = RedisServer::start();
    let prefix = unique_prefix();
    let mut store = store(&server, &prefix);
    store.store("s1", b"x".to_vec(), Instant::now()).unwrap();
    let port = server.stop();
    let started = Instant::now();
    assert!(store.load("s1").is_err(), "Redis is down");
    assert!(started.elapsed() < Duration::from_secs(1), "failed within {:?}", started.elapsed());
    // Redis comes back (empty: no persistence); the next call reconnects.
    let _again = RedisServer::start_on(port);
    let back = Instant::now();
    store.store("s2", b"y".to_vec(), Instant::now()).unwrap();
    assert_eq!(store.load("s2").unwrap().unwrap().data, b"y");
    assert!(back.elapsed() < Duration::from_secs(2), "resumed within {:?}", back.elapsed());
}

#[test]
fn a_refresh_says_whether_another_process_changed_or_deleted_the_session() {
    use talaria_core::http::event_log::Refresh;
    let server = RedisServer::start();
    let prefix = unique_prefix();
    let (mut a, mut b) = (store(&server, &prefix), store(&server, &prefix));
    let now = Instant::now();
    a.store("s1", b"v1".to_vec(), now).unwrap();
    assert_eq!(b.refresh("s1", now, b"v1").unwrap(), Refresh::Same);
    a.store("s1", b"v2".to_vec(), now + Duration::from_secs(1)).unwrap();
    let Refresh::Changed(record) = b.refresh("s1", now + Duration::from_secs(2), b"v1").unwrap() else { panic!() };
    assert_eq!(record.data, b"v2");
    assert!(record.last_seen >= now + Duration::from_secs(2) - Duration::from_millis(1), "the refresh marked it used");
    a.delete("s1").unwrap();
    assert_eq!(b.refresh("s1", now, b"v2").unwrap(), Refresh::Gone);
    a.store("s1", b"v3".to_vec(), now).unwrap();
    assert_eq!(b.refresh("s1", now, b"v2").unwrap(), Refresh::Gone, "a deleted session is not written back");
}

#[test]
fn a_refresh_keeps_the_session_from_expiring_and_load_sees_its_time() {
    use talaria_core::http::event_log::Refresh;
    let server = RedisServer::start();
    let prefix = unique_prefix();
    let (mut a, mut b) = (store(&server, &prefix), store(&server, &prefix));
    let now = Instant::now();
    a.store("s1", b"v1".to_vec(), now).unwrap();
    assert_eq!(b.refresh("s1", now + Duration::from_secs(30), b"v1").unwrap(), Refresh::Same);
    let idle = Duration::from_secs(60);
    assert!(a.expired(now + Duration::from_secs(80), idle).unwrap().is_empty(), "used at +30 s");
    assert_eq!(a.expired(now + Duration::from_secs(91), idle).unwrap(), ["s1"]);
    let seen = a.load("s1").unwrap().unwrap().last_seen;
    let off = seen.max(now + Duration::from_secs(30)) - seen.min(now + Duration::from_secs(30));
    assert!(off < Duration::from_millis(1), "load sees the refresh's time: off by {off:?}");
    a.delete("s1").unwrap();
    assert_eq!(b.refresh("s1", now + Duration::from_secs(40), b"v1").unwrap(), Refresh::Gone);
    assert!(a.expired(now + Duration::from_secs(999), idle).unwrap().is_empty(), "not brought back to the index");
}
