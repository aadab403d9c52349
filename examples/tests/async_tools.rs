//! Async tools end to end, our client and server over the in-process transport: the handler's
//! future awaits a timer, reports progress and asks the client's model, awaiting the answer;
//! many such calls wait at once on the few threads of the server's async executor, not on a
//! thread each; and in the stateless era an async tool's asks go by rounds.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use talaria::client::ClientOptions;
use talaria::core::client::{CallOptions, Handlers};
use talaria::core::schema::roots::{ListRoots, Root};
use talaria::core::schema::sampling::{
    CreateMessage, CreateMessageRequestParams, CreateMessageResult, SamplingContent, SamplingMessage,
};
use talaria::core::schema::tools::{CallToolResult, Tool};
use talaria::core::schema::Role;
use talaria::core::server::{Router, ToolError};
use talaria::core::session::ClientMode;

fn object() -> talaria::core::schema::JsonObject {
    json!({"type": "object"}).as_object().cloned().unwrap()
}

/// `think` waits 50 ms, reports progress, asks the model and answers with what it said;
/// `nap` waits 400 ms; `roots` counts the client's roots.
fn server() -> talaria::server::Server<()> {
    let router = Router::<()>::builder()
        .async_tool(Tool::new("think", object()), |job, _: serde_json::Value| async move {
            smol::Timer::after(Duration::from_millis(50)).await;
            job.progress(1.0, Some(2.0), Some("asking the model".into()));
            let question = SamplingMessage::new(Role::User, SamplingContent::text("The answer?"));
            let answer = job
                .ask::<CreateMessage>(&CreateMessageRequestParams::new(vec![question], 10))
                .await
                .map_err(|e| ToolError::execution(e.to_string()))?;
            job.progress(2.0, Some(2.0), None);
            let text = answer.content.iter().find_map(|c| match c {
                SamplingContent::Text(t) => Some(t.text.clone()),
                _ => None,
            });
            Ok(CallToolResult::text(format!("the model said {}", text.unwrap_or_default())))
        })
        .async_tool(Tool::new("nap", object()), |_job, _: serde_json::Value| async move {
            smol::Timer::after(Duration::from_millis(400)).await;
            Ok(CallToolResult::text("rested"))
        })
        .async_tool(Tool::new("roots", object()), |job, _: serde_json::Value| async move {
            let roots =
                job.ask::<ListRoots>(&Default::default()).await.map_err(|e| ToolError::execution(e.to_string()))?;
            Ok(CallToolResult::text(roots.roots.len().to_string()))
        })
        .build();
    talaria::server::Server::new("async", "1", router)
}

#[test]
fn an_async_tool_awaits_reports_progress_and_asks_the_client() {
    let handlers =
        Handlers::default().with_sampling(|_| Ok(CreateMessageResult::new("m", SamplingContent::text("42"))));
    // Legacy: the ask is a request to the client, awaited while the call runs on.
    let options = ClientOptions::new("c", "1").mode(ClientMode::Legacy).handlers(handlers);
    let client = talaria::memory::connect(&server(), options).unwrap();
    let progress = Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = Arc::clone(&progress);
    let options = CallOptions::default().with_progress(move |p| {
        seen.lock().unwrap().push(format!("{p:?}"));
    });
    let result = client.call_tool_with("think", json!({}), options).unwrap();
    assert_eq!(result.content[0].as_text(), Some("the model said 42"));
    let progress = progress.lock().unwrap();
    assert_eq!(progress.len(), 2, "both progress notifications arrived: {progress:?}");
}

/// The threads of this process whose name starts with `prefix` (Linux).
#[cfg(target_os = "linux")]
fn threads_named(prefix: &str) -> usize {
    std::fs::read_dir("/proc/self/task")
        .unwrap()
        .filter_map(|task| std::fs::read_to_string(task.ok()?.path().join("comm")).ok())
        .filter(|name| name.starts_with(prefix))
        .count()
}

#[test]
#[cfg(target_os = "linux")]
fn a_hundred_async_calls_wait_at_once_without_a_thread_each() {
    let client = talaria::memory::connect(&server(), ClientOptions::new("c", "1")).unwrap();
    let workers_before = threads_named("talaria-worker");
    let started = Instant::now();
    let callers: Vec<_> = (0..100)
        .map(|_| {
            let client = client.clone();
            std::thread::spawn(move || {
                client.call_tool("nap", json!({})).unwrap().content[0].as_text().map(str::to_owned)
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(200));
    let (workers, executors) = (threads_named("talaria-worker"), threads_named("talaria-async"));
    for caller in callers {
        assert_eq!(caller.join().unwrap().as_deref(), Some("rested"));
    }
    let took = started.elapsed();
    // A hundred 400 ms naps on a pool of 64 threads would take two waves (800 ms and more).
    assert!(took < Duration::from_millis(790), "the naps overlapped: {took:?}");
    assert_eq!(workers, workers_before, "no pool worker was taken by an async call");
    assert!((1..=4).contains(&executors), "{executors} executor threads");
}

#[test]
fn an_async_tool_asks_in_rounds_in_the_stateless_era() {
    let mut handlers = Handlers::default();
    handlers.add_root(Root::new("file:///a"));
    handlers.add_root(Root::new("file:///b"));
    let options = ClientOptions::new("c", "1").mode(ClientMode::Stateless).handlers(handlers);
    let client = talaria::memory::connect(&server(), options).unwrap();
    let result = client.call_tool("roots", json!({})).unwrap();
    assert_eq!(result.content[0].as_text(), Some("2"));
}
