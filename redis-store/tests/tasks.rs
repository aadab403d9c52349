//! `RedisTaskStore` against a real `redis-server`: kept, read, updated and removed; bounded;
//! expired tasks pruned; and a task started through one server process polled through another
//! sharing the store.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{unique_prefix, RedisServer};
use serde_json::{json, Value};
use talaria::client::ClientOptions;
use talaria::core::schema::tasks::ext::{TaskStart, EXTENSION_ID};
use talaria::core::schema::tasks::TaskStatus;
use talaria::core::schema::tools::{CallToolResult, TaskSupport, Tool};
use talaria::core::server::{Router, StoredTask, TaskStore, TaskStoreError};
use talaria::core::session::ClientMode;
use talaria_core::schema::tasks::ext::Task;
use talaria_redis::{RedisOptions, RedisTaskStore};

fn task(id: &str, expires_at_ms: Option<u64>) -> StoredTask {
    StoredTask { task: Task::new(id, TaskStatus::Working, "2026-07-28T10:00:00Z").into(), owner: None, expires_at_ms }
}

#[test]
fn tasks_are_kept_read_updated_removed_and_bounded() {
    let server = RedisServer::start();
    let options = RedisOptions::default().prefix(unique_prefix()).max_tasks(2);
    let store = RedisTaskStore::connect(&server.url(), options).unwrap();
    let far = 4_000_000_000_000;
    store.insert(task("a", Some(far)), 0).unwrap();
    store.insert(task("b", None), 0).unwrap();
    assert_eq!(store.insert(task("c", Some(far)), 0), Err(TaskStoreError::Full(2)));
    let mut done = store.get("a").unwrap();
    done.task.status = TaskStatus::Completed;
    store.update(done.clone());
    assert_eq!(store.get("a"), Some(done));
    store.update(task("ghost", None));
    assert!(store.get("ghost").is_none(), "update keeps only tasks still kept");
    store.remove("b");
    assert!(store.get("b").is_none());
    // "a" expires at `far`: an insert at that time prunes it, making room.
    store.insert(task("c", None), 0).unwrap();
    assert_eq!(store.insert(task("d", None), 0), Err(TaskStoreError::Full(2)));
    store.insert(task("d", None), far).unwrap();
    assert!(store.get("d").is_some());
}

#[test]
fn a_task_started_through_one_process_is_polled_through_another() {
    let redis = RedisServer::start();
    let prefix = unique_prefix();
    let process = || {
        let store = RedisTaskStore::connect(&redis.url(), RedisOptions::default().prefix(&prefix)).unwrap();
        let schema = json!({"type": "object"}).as_object().cloned().unwrap();
        let tool = Tool::new("slow", schema).with_task_support(TaskSupport::Optional);
        let router = Router::<()>::builder()
            .task_store(Arc::new(store))
            .blocking_tool(tool, |_job, _: Value| {
                std::thread::sleep(Duration::from_millis(300));
                Ok(CallToolResult::text("done"))
            })
            .build();
        talaria::server::Server::new("tasks", "1", router)
    };
    let (first, second) = (process(), process());
    let options = || {
        ClientOptions::new("c", "1").mode(ClientMode::Stateless).extension(EXTENSION_ID, Default::default()).unwrap()
    };
    let a = talaria::memory::connect(&first, options()).unwrap();
    let b = talaria::memory::connect(&second, options()).unwrap();
    let TaskStart::Task(started) = a.start_task("slow", json!({})).unwrap() else { panic!("slow runs as a task") };
    let seen = b.task_state(&started.task_id).unwrap();
    assert_eq!(seen.status, TaskStatus::Working, "the other process finds the task in Redis");
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let state = b.task_state(&started.task_id).unwrap();
        if state.status == TaskStatus::Completed {
            assert_eq!(state.result.unwrap()["content"][0]["text"], "done");
            break;
        }
        assert!(Instant::now() < deadline, "the task never completed: {state:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
}
