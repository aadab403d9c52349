//! The relay's leases against a real Redis: a lease lapses when it is not renewed.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod common;

use std::time::{Duration, Instant};

use common::{unique_prefix, RedisServer};
use talaria_core::http::relay::Relay;
use talaria_redis::{RedisOptions, RedisRelay};

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
}
