//! `AsyncRedisSessionStore` on tokio against a real `redis-server`: the same store, its
//! connection on a tokio runtime (the macro's and one built by hand), shared by tasks.
#![cfg(feature = "tokio")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{unique_prefix, RedisServer};
use talaria_core::http::event_log::{AsyncSessionStore, Refresh, SessionStore};
use talaria_redis::{AsyncRedisSessionStore, RedisOptions, RedisSessionStore};

async fn store(server: &RedisServer, prefix: &str) -> AsyncRedisSessionStore {
    AsyncRedisSessionStore::connect(&server.url(), RedisOptions::default().prefix(prefix)).await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_store_on_tokio_stores_loads_and_refreshes() {
    let server = RedisServer::start();
    let prefix = unique_prefix();
    let store = Arc::new(store(&server, &prefix).await);
    let now = Instant::now();
    store.store("s1", b"v1".to_vec(), now).await.unwrap();
    let record = store.load("s1").await.unwrap().unwrap();
    assert_eq!(record.data, b"v1");
    let skew = record.last_seen.max(now) - record.last_seen.min(now);
    assert!(skew < Duration::from_millis(1), "{skew:?}");
    // Tasks on the runtime's workers share the store (and its one connection).
    let tasks: Vec<_> = (0..100)
        .map(|n| {
            let store = Arc::clone(&store);
            tokio::spawn(async move {
                let known: &[u8] = if n % 2 == 0 { b"v1" } else { b"v0" };
                store.refresh("s1", now + Duration::from_secs(1), known).await.unwrap()
            })
        })
        .collect();
    for (n, task) in tasks.into_iter().enumerate() {
        let answer = task.await.unwrap();
        if n % 2 == 0 {
            assert_eq!(answer, Refresh::Same);
        } else {
            assert!(matches!(&answer, Refresh::Changed(record) if record.data == b"v1"), "{answer:?}");
        }
    }
    assert!(store.touch("s1", now + Duration::from_secs(2)).await.unwrap());
    let idle = Duration::from_secs(60);
    assert!(store.expired(now + Duration::from_secs(61), idle).await.unwrap().is_empty());
    assert_eq!(store.expired(now + Duration::from_secs(63), idle).await.unwrap(), ["s1"]);
    assert!(store.delete("s1").await.unwrap());
    assert_eq!(store.refresh("s1", now, b"v1").await.unwrap(), Refresh::Gone);
}

#[test]
fn a_store_on_a_runtime_built_by_hand_shares_records_with_the_sync_store() {
    let server = RedisServer::start();
    let prefix = unique_prefix();
    let mut sync = RedisSessionStore::connect(&server.url(), RedisOptions::default().prefix(&prefix)).unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let now = Instant::now();
    sync.store("s1", b"v1".to_vec(), now).unwrap();
    runtime.block_on(async {
        let store = store(&server, &prefix).await;
        assert_eq!(store.load("s1").await.unwrap().unwrap().data, b"v1");
        assert_eq!(store.refresh("s1", now, b"v1").await.unwrap(), Refresh::Same);
        store.store("s2", b"v2".to_vec(), now).await.unwrap();
    });
    assert_eq!(sync.load("s2").unwrap().unwrap().data, b"v2");
}

/// With only the `tokio` feature, redis would panic opening a connection outside a tokio
/// runtime: the store refuses with an error instead.
#[cfg(not(feature = "smol"))]
#[test]
fn outside_a_tokio_runtime_connecting_is_an_error_not_a_panic() {
    let server = RedisServer::start();
    let url = server.url();
    let refused = smol::block_on(AsyncRedisSessionStore::connect(&url, RedisOptions::default())).unwrap_err();
    assert!(matches!(refused, talaria_redis::RedisError::NoRuntime), "{refused}");
}
