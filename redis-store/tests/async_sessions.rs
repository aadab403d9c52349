//! `AsyncRedisSessionStore` on smol against a real `redis-server`: the session store contract
//! (the core's conformance battery, through `BlockingSessionStore`), records shared with the
//! sync store, the one-round-trip refresh, outages (a dead and a hung server: errors within
//! the timeouts, service again once Redis is back), and many calls in flight on one
//! connection; and the same for a store whose connection's task runs on an executor of the
//! test's (`connect_on`).
#![cfg(feature = "smol")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod common;
mod stats;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{unique_prefix, RedisServer};
use stats::{calls, inspect};
use talaria_core::http::conformance::check_session_store;
use talaria_core::http::event_log::{AsyncSessionStore, BlockingSessionStore, Refresh, SessionRecord, SessionStore};
use talaria_redis::{AsyncRedisSessionStore, RedisOptions, RedisSessionStore};

fn options(prefix: &str) -> RedisOptions {
    RedisOptions::default().prefix(prefix)
}

fn store(server: &RedisServer, prefix: &str) -> AsyncRedisSessionStore {
    smol::block_on(AsyncRedisSessionStore::connect(&server.url(), options(prefix))).unwrap()
}

/// An executor run by one thread of its own until the sender is dropped.
fn executor() -> (Arc<smol::Executor<'static>>, smol::channel::Sender<()>, std::thread::JoinHandle<()>) {
    let executor = Arc::new(smol::Executor::new());
    let (stop, stopped) = smol::channel::bounded::<()>(1);
    let running = Arc::clone(&executor);
    let thread = std::thread::spawn(move || {
        let _ = smol::block_on(running.run(stopped.recv()));
    });
    (executor, stop, thread)
}

fn store_on(executor: &Arc<smol::Executor<'static>>, server: &RedisServer, prefix: &str) -> AsyncRedisSessionStore {
    smol::block_on(AsyncRedisSessionStore::connect_on(Arc::clone(executor), &server.url(), options(prefix))).unwrap()
}

fn sync_store(server: &RedisServer, prefix: &str) -> RedisSessionStore {
    RedisSessionStore::connect(&server.url(), options(prefix)).unwrap()
}

#[test]
fn the_session_store_contract_holds() {
    let server = RedisServer::start();
    let make = || BlockingSessionStore::new(store(&server, &unique_prefix()));
    check_session_store(make, Instant::now()).unwrap();
}

#[test]
fn a_session_stored_by_the_sync_store_is_read_refreshed_and_deleted_by_the_async_one() {
    let server = RedisServer::start();
    let prefix = unique_prefix();
    let (mut sync, async_store) = (sync_store(&server, &prefix), store(&server, &prefix));
    let now = Instant::now();
    sync.store("s1", b"v1".to_vec(), now).unwrap();
    smol::block_on(async {
        let record = async_store.load("s1").await.unwrap().unwrap();
        assert_eq!(record.data, b"v1");
        // Each store has its own clock anchor; wall time agrees to well within a millisecond.
        let skew = record.last_seen.max(now) - record.last_seen.min(now);
        assert!(skew < Duration::from_millis(1), "{skew:?}");
        let later = now + Duration::from_secs(30);
        assert_eq!(async_store.refresh("s1", later, b"v1").await.unwrap(), Refresh::Same);
        assert!(async_store.touch("s1", later).await.unwrap());
        let idle = Duration::from_secs(60);
        assert!(async_store.expired(now + Duration::from_secs(80), idle).await.unwrap().is_empty());
        assert_eq!(async_store.expired(now + Duration::from_secs(91), idle).await.unwrap(), ["s1"]);
    });
    let seen = sync.load("s1").unwrap().unwrap().last_seen;
    let off = seen.max(now + Duration::from_secs(30)) - seen.min(now + Duration::from_secs(30));
    assert!(off < Duration::from_millis(1), "the sync store sees the async refresh: off by {off:?}");
    assert!(smol::block_on(async_store.delete("s1")).unwrap(), "the async store deletes it");
    assert!(sync.load("s1").unwrap().is_none(), "the sync store sees it gone");
    sync.store("s1", b"v2".to_vec(), now).unwrap();
    assert!(sync.load("s1").unwrap().is_none(), "the async store's tombstone holds for the sync one");
}

#[test]
fn a_session_stored_by_the_async_store_is_read_refreshed_and_deleted_by_the_sync_one() {
    let server = RedisServer::start();
    let prefix = unique_prefix();
    let (mut sync, async_store) = (sync_store(&server, &prefix), store(&server, &prefix));
    let now = Instant::now();
    smol::block_on(async_store.store("s1", b"v1".to_vec(), now)).unwrap();
    assert_eq!(sync.load("s1").unwrap().unwrap().data, b"v1");
    let at = now + Duration::from_secs(5);
    assert_eq!(sync.refresh("s1", at, b"v0").unwrap(), Refresh::Changed(SessionRecord::new(b"v1".to_vec(), at)));
    assert!(sync.touch("s1", now + Duration::from_secs(10)).unwrap());
    smol::block_on(async {
        let seen = async_store.load("s1").await.unwrap().unwrap().last_seen;
        let at = now + Duration::from_secs(10);
        let off = seen.max(at) - seen.min(at);
        assert!(off < Duration::from_millis(1), "the async store sees the sync touch: off by {off:?}");
    });
    assert!(sync.delete("s1").unwrap());
    smol::block_on(async {
        assert!(async_store.load("s1").await.unwrap().is_none());
        assert!(!async_store.touch("s1", now).await.unwrap());
        assert!(!async_store.delete("s1").await.unwrap(), "already gone");
        async_store.store("s1", b"v2".to_vec(), now).await.unwrap();
        assert!(async_store.load("s1").await.unwrap().is_none(), "the sync store's tombstone holds for the async one");
    });
}

#[test]
fn a_refresh_answers_same_changed_or_gone_in_one_round_trip_without_a_script() {
    let server = RedisServer::start();
    let prefix = unique_prefix();
    let (mut other, store) = (sync_store(&server, &prefix), store(&server, &prefix));
    let mut redis = inspect(&server);
    let now = Instant::now();
    other.store("s1", b"v1".to_vec(), now).unwrap();
    let later = now + Duration::from_secs(2);
    let () = redis::cmd("CONFIG").arg("RESETSTAT").query(&mut redis).unwrap();
    smol::block_on(async {
        assert_eq!(store.refresh("s1", now, b"v1").await.unwrap(), Refresh::Same);
        let Refresh::Changed(record) = store.refresh("s1", later, b"v0").await.unwrap() else { panic!("changed") };
        assert_eq!(record.data, b"v1");
        assert_eq!(record.last_seen, later, "the refresh marked it used");
        assert_eq!(store.refresh("never", later, b"v1").await.unwrap(), Refresh::Gone);
    });
    // One HGET and one ZADD each, pipelined; no script (not a touch, then a load).
    assert_eq!(calls(&mut redis, "hget"), 3);
    assert_eq!(calls(&mut redis, "zadd"), 3);
    assert_eq!(calls(&mut redis, "hmget"), 0);
    assert_eq!(calls(&mut redis, "evalsha") + calls(&mut redis, "eval"), 0);
    other.delete("s1").unwrap();
    smol::block_on(async {
        assert_eq!(store.refresh("s1", later, b"v1").await.unwrap(), Refresh::Gone);
        other.store("s1", b"v3".to_vec(), later).unwrap();
        assert_eq!(
            store.refresh("s1", later, b"v1").await.unwrap(),
            Refresh::Gone,
            "a deleted session is not written back"
        );
        let idle = Duration::from_secs(1);
        assert!(
            store.expired(now + Duration::from_secs(999), idle).await.unwrap().is_empty(),
            "nor brought back to the index"
        );
    });
}

#[test]
fn with_its_connection_on_the_callers_executor_the_contract_holds() {
    let server = RedisServer::start();
    let (executor, _stop, _thread) = executor();
    let make = || BlockingSessionStore::new(store_on(&executor, &server, &unique_prefix()));
    check_session_store(make, Instant::now()).unwrap();
}

#[test]
fn the_connection_of_connect_on_runs_on_the_executor_given() {
    let server = RedisServer::start();
    let (executor, stop, thread) = executor();
    let store = store_on(&executor, &server, &unique_prefix());
    smol::block_on(async {
        store.store("s1", b"x".to_vec(), Instant::now()).await.unwrap();
        assert_eq!(store.load("s1").await.unwrap().unwrap().data, b"x");
    });
    // Nothing runs the executor any more, so nothing reads the connection: a call waits for
    // its answer until its timeout (through smol's global executor it would be answered).
    drop(stop);
    thread.join().unwrap();
    let started = Instant::now();
    assert!(smol::block_on(store.load("s1")).is_err(), "answered with the executor stopped");
    assert!(started.elapsed() < Duration::from_millis(1500), "failed within {:?}", started.elapsed());
}

#[test]
fn a_dead_redis_is_an_error_within_the_timeouts_and_service_resumes_with_redis() {
    a_dead_redis_is_survived(store);
}

#[test]
fn on_the_callers_executor_a_dead_redis_is_survived_too() {
    let (executor, _stop, _thread) = executor();
    a_dead_redis_is_survived(|server, prefix| store_on(&executor, server, prefix));
}

/// A store from `make` errs within the timeouts while Redis is down, and reconnects within
/// 2 s of its return.
fn a_dead_redis_is_survived(make: impl Fn(&RedisServer, &str) -> AsyncRedisSessionStore) {
    let server = RedisServer::start();
    let store = make(&server, &unique_prefix());
    smol::block_on(store.store("s1", b"x".to_vec(), Instant::now())).unwrap();
    let port = server.stop();
    smol::block_on(async {
        for call in 0..3 {
            let started = Instant::now();
            assert!(store.load("s1").await.is_err(), "Redis is down (call {call})");
            assert!(
                started.elapsed() < Duration::from_millis(1500),
                "call {call} failed within {:?}",
                started.elapsed()
            );
        }
    });
    // Redis comes back (empty: no persistence); a later call reconnects.
    let _again = RedisServer::start_on(port);
    let back = Instant::now();
    smol::block_on(async {
        store.store("s2", b"y".to_vec(), Instant::now()).await.unwrap();
        assert_eq!(store.load("s2").await.unwrap().unwrap().data, b"y");
    });
    assert!(back.elapsed() < Duration::from_secs(2), "resumed within {:?}", back.elapsed());
}

#[test]
fn a_hung_redis_is_an_error_within_the_timeouts_and_service_resumes_with_redis() {
    let server = RedisServer::start();
    let store = store(&server, &unique_prefix());
    smol::block_on(store.store("s1", b"x".to_vec(), Instant::now())).unwrap();
    server.pause();
    smol::block_on(async {
        // The first call times out waiting for its answer, the next ones connecting (the
        // kernel still accepts, the server never answers the handshake).
        for call in 0..3 {
            let started = Instant::now();
            assert!(store.load("s1").await.is_err(), "Redis hangs (call {call})");
            assert!(
                started.elapsed() < Duration::from_millis(1500),
                "call {call} failed within {:?}",
                started.elapsed()
            );
        }
    });
    server.resume();
    let back = Instant::now();
    smol::block_on(async {
        assert_eq!(store.load("s1").await.unwrap().unwrap().data, b"x");
    });
    assert!(back.elapsed() < Duration::from_secs(2), "resumed within {:?}", back.elapsed());
}

#[test]
fn a_thousand_refreshes_in_flight_share_one_connection_and_all_answer() {
    let server = RedisServer::start();
    let store = Arc::new(store(&server, &unique_prefix()));
    let now = Instant::now();
    let answers = smol::block_on(async {
        for i in 0..10 {
            store.store(&format!("s{i}"), format!("v{i}").into_bytes(), now).await.unwrap();
        }
        let tasks: Vec<_> = (0..1000)
            .map(|n| {
                let store = Arc::clone(&store);
                smol::spawn(async move {
                    // s0..s19, of which s10..s19 were never stored; every other one known stale.
                    let (session, known) = (format!("s{}", n % 20), format!("v{}", n % 20 + (n / 20) % 2));
                    store.refresh(&session, now + Duration::from_secs(1), known.as_bytes()).await
                })
            })
            .collect();
        let mut answers = Vec::with_capacity(tasks.len());
        for task in tasks {
            answers.push(task.await.unwrap());
        }
        answers
    });
    let count = |wanted: fn(&Refresh) -> bool| answers.iter().filter(|&answer| wanted(answer)).count();
    assert_eq!(answers.len(), 1000);
    assert_eq!(count(|a| *a == Refresh::Gone), 500);
    assert_eq!(count(|a| *a == Refresh::Same), 250);
    assert_eq!(count(|a| matches!(a, Refresh::Changed(_))), 250);
    let clients: String = redis::cmd("CLIENT").arg("LIST").query(&mut inspect(&server)).unwrap();
    assert_eq!(clients.lines().count(), 2, "the store's one connection, and this one:\n{clients}");
}
