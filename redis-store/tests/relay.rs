//! The relay's leases and claims against a real Redis: a claim lives in its stream's record
//! (and goes with it), a lease lapses when it is not renewed.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod common;

use std::time::{Duration, Instant};

use common::{unique_prefix, RedisServer};
use talaria_core::http::event_log::{EventStore, Retention};
use talaria_core::http::relay::{Claim, Relay};
use talaria_core::jsonrpc::RequestId;
use talaria_redis::{RedisEventStore, RedisOptions, RedisRelay};

#[test]
fn a_claim_lives_in_its_streams_record_and_goes_with_it() {
    let server = RedisServer::start();
    let prefix = unique_prefix();
    let options = || RedisOptions::default().prefix(&prefix);
    let relay = RedisRelay::connect(&server.url(), options()).unwrap();
    let mut events = RedisEventStore::connect(&server.url(), options(), Retention::default()).unwrap();
    let stream = events.open_stream("s1").unwrap();
    let claim = Claim { process: "p1-".into(), requests: vec![RequestId::Number(4), RequestId::String("x".into())] };
    relay.claim("s1", stream, &claim);
    assert_eq!(relay.claimant("s1", stream).unwrap(), Some(claim.clone()));
    // The log is untouched by it.
    events.append("s1", stream, b"{}").unwrap();
    assert_eq!(
        events.replay_after("s1", talaria_core::http::event_log::EventId::start(stream)).unwrap().events.len(),
        1
    );
    // A stream that is not there takes no claim (its record is not made up).
    relay.claim("s1", stream + 1, &claim);
    assert_eq!(relay.claimant("s1", stream + 1).unwrap(), None);
    assert!(events.append("s1", stream + 1, b"{}").is_err(), "still no such stream");
    // Gone with the session's logs.
    events.drop_session("s1").unwrap();
    assert_eq!(relay.claimant("s1", stream).unwrap(), None);
}

#[test]
fn a_lease_holds_while_renewed_and_lapses_after_its_ttl() {
    let server = RedisServer::start();
    let relay = RedisRelay::connect(&server.url(), RedisOptions::default().prefix(unique_prefix())).unwrap();
    assert!(!relay.alive("p1-").unwrap(), "never renewed");
    let ttl = Duration::from_millis(300);
    relay.renew("p1-", ttl);
    assert!(relay.alive("p1-").unwrap());
    assert!(!relay.alive("p2-").unwrap(), "each process its own");
    // Redis expires the key: poll until it does (well within a second).
    let renewed = Instant::now();
    while relay.alive("p1-").unwrap() {
        assert!(renewed.elapsed() < Duration::from_secs(2), "the lease never lapsed");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(renewed.elapsed() >= ttl - Duration::from_millis(50), "lapsed early: {:?}", renewed.elapsed());
}

#[test]
fn a_relay_that_lost_redis_cannot_say() {
    let server = RedisServer::start();
    let relay = RedisRelay::connect(&server.url(), RedisOptions::default().prefix(unique_prefix())).unwrap();
    let _port = server.stop();
    assert!(relay.alive("p1-").is_err(), "unknown, not dead");
    assert!(relay.claimant("s1", 1).is_err());
}
