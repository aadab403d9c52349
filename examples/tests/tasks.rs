//! Tool calls run as tasks (2025-11-25), our client and server end to end over the in-process
//! transport: a task is answered at once and runs on; the client polls it, waits for its
//! outcome, lists and cancels tasks; `taskSupport` is enforced both ways; and revisions
//! without tasks never see them.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;
use talaria::client::{Client, ClientError, ClientOptions};
use talaria::core::schema::tasks::TaskStatus;
use talaria::core::schema::tools::{CallToolResult, TaskSupport, Tool};
use talaria::core::server::{Router, ToolError};
use talaria::core::session::{CallError, ClientMode};
use talaria::core::version::ProtocolVersion;

fn schema() -> talaria::core::schema::JsonObject {
    json!({"type": "object"}).as_object().cloned().unwrap()
}

/// A server whose `research` tool (task required) runs until the test lets it finish (or it
/// is cancelled), `quick` (task optional) answers inline, and `echo` may not be a task.
fn server(release: Arc<Mutex<mpsc::Receiver<()>>>) -> talaria::server::Server<()> {
    let router = Router::<()>::builder()
        .blocking_tool(
            Tool::new("research", schema()).with_task_support(TaskSupport::Required),
            move |job, _: serde_json::Value| loop {
                if job.is_cancelled() {
                    return Err(ToolError::execution("stopped"));
                }
                if release.lock().unwrap().recv_timeout(Duration::from_millis(5)).is_ok() {
                    return Ok(CallToolResult::text("the tides follow the moon"));
                }
            },
        )
        .tool(Tool::new("quick", schema()).with_task_support(TaskSupport::Optional), |_ctx, _: serde_json::Value| {
            Ok(CallToolResult::text("quick answer"))
        })
        .tool(Tool::new("echo", schema()), |_ctx, _: serde_json::Value| Ok(CallToolResult::text("echo")))
        .build();
    talaria::server::Server::new("tasks", "1", router)
}

fn connect(version: ProtocolVersion) -> (Client, mpsc::Sender<()>) {
    let (release, wait) = mpsc::channel();
    let options = ClientOptions::new("tasker", "1").mode(ClientMode::Legacy).versions(vec![version]);
    let client = talaria::memory::connect(&server(Arc::new(Mutex::new(wait))), options).unwrap();
    (client, release)
}

fn remote_code(outcome: Result<impl std::fmt::Debug, ClientError>) -> i64 {
    match outcome {
        Err(ClientError::Call(CallError::Remote(e))) => e.code.0,
        other => panic!("expected a JSON-RPC error, got {other:?}"),
    }
}

#[test]
fn a_task_is_answered_at_once_runs_on_and_its_outcome_is_fetched() {
    let (client, release) = connect(ProtocolVersion::V2025_11_25);
    let caps = client.server_capabilities().and_then(|c| c.tasks.clone()).unwrap();
    assert_eq!(json!(caps), json!({"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}));
    let task = client.call_tool_as_task("research", json!({}), Some(Duration::from_secs(60))).unwrap();
    assert_eq!((task.status, task.ttl), (TaskStatus::Working, Some(60_000)));
    assert!(task.created_at.ends_with('Z') && task.created_at.len() == 24, "{}", task.created_at);
    assert_eq!(client.get_task(&task.task_id).unwrap().status, TaskStatus::Working);
    // tasks/result waits for the task: let it finish while the request is out.
    let releasing = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(50));
        release.send(()).unwrap();
    });
    let result = client.task_result(&task.task_id).unwrap();
    releasing.join().unwrap();
    assert_eq!(result.content[0].as_text(), Some("the tides follow the moon"));
    let related = result.meta.as_ref().and_then(|m| m.get("io.modelcontextprotocol/related-task")).cloned();
    assert_eq!(related, Some(json!({"taskId": task.task_id})));
    assert_eq!(client.get_task(&task.task_id).unwrap().status, TaskStatus::Completed);
    // Fetched again, the same outcome.
    assert_eq!(client.task_result(&task.task_id).unwrap().content[0].as_text(), Some("the tides follow the moon"));
    assert_eq!(client.list_tasks().unwrap().len(), 1);
}

#[test]
fn an_inline_tool_run_as_a_task_is_complete_in_its_first_answer() {
    let (client, _release) = connect(ProtocolVersion::V2025_11_25);
    let task = client.call_tool_as_task("quick", json!({}), None).unwrap();
    assert_eq!(task.status, TaskStatus::Completed);
    assert_eq!(client.task_result(&task.task_id).unwrap().content[0].as_text(), Some("quick answer"));
    // And called normally, as it may be.
    assert_eq!(client.call_tool("quick", json!({})).unwrap().content[0].as_text(), Some("quick answer"));
}

#[test]
fn a_cancelled_task_stops_its_tool_and_ends_cancelled() {
    let (client, _release) = connect(ProtocolVersion::V2025_11_25);
    let task = client.call_tool_as_task("research", json!({}), None).unwrap();
    let cancelled = client.cancel_task(&task.task_id).unwrap();
    assert_eq!(cancelled.status, TaskStatus::Cancelled);
    assert_eq!(client.get_task(&task.task_id).unwrap().status, TaskStatus::Cancelled, "it stays cancelled");
    assert_eq!(remote_code(client.task_result(&task.task_id)), -32000);
    assert_eq!(remote_code(client.cancel_task(&task.task_id)), -32602, "a task that ended cannot be cancelled");
    assert_eq!(remote_code(client.get_task("task-404")), -32602, "an unknown task");
}

#[test]
fn task_support_is_enforced_both_ways() {
    let (client, _release) = connect(ProtocolVersion::V2025_11_25);
    assert_eq!(remote_code(client.call_tool("research", json!({}))), -32601, "required: only as a task");
    assert_eq!(remote_code(client.call_tool_as_task("echo", json!({}), None)), -32601, "forbidden: never as a task");
}

#[test]
fn revisions_without_tasks_call_every_tool_normally() {
    let (client, release) = connect(ProtocolVersion::V2025_06_18);
    assert!(client.server_capabilities().unwrap().tasks.is_none(), "no tasks capability before 2025-11-25");
    release.send(()).unwrap();
    let result = client.call_tool("research", json!({})).unwrap();
    assert_eq!(result.content[0].as_text(), Some("the tides follow the moon"));
    let tools = client.list_all_tools().unwrap();
    assert!(tools.iter().all(|t| t.execution.is_none()), "taskSupport is not shown before 2025-11-25");
}

#[test]
fn the_async_handle_runs_tasks_too() {
    let (client, _release) = connect(ProtocolVersion::V2025_11_25);
    let client = client.to_async();
    smol::block_on(async {
        let quick = client.call_tool_as_task("quick", json!({}), None).await.unwrap().task;
        assert_eq!(quick.status, TaskStatus::Completed);
        let result = client.task_result(&quick.task_id, talaria::core::client::CallOptions::default()).await.unwrap();
        assert_eq!(result.content[0].as_text(), Some("quick answer"));
        let running = client.call_tool_as_task("research", json!({}), None).await.unwrap().task;
        assert_eq!(client.get_task(&running.task_id).await.unwrap().status, TaskStatus::Working);
        assert_eq!(client.cancel_task(&running.task_id).await.unwrap().status, TaskStatus::Cancelled);
    });
}

#[test]
fn a_task_whose_ttl_runs_out_while_awaited_answers_its_waiter() {
    let (client, _release) = connect(ProtocolVersion::V2025_11_25);
    // The tool never finishes; the task is kept 100 ms.
    let task = client.call_tool_as_task("research", json!({}), Some(Duration::from_millis(100))).unwrap();
    let started = std::time::Instant::now();
    assert_eq!(remote_code(client.task_result(&task.task_id)), -32602, "the task is gone, and so is its outcome");
    assert!(started.elapsed() < Duration::from_secs(10), "answered at the expiry, not at the call's timeout");
    assert_eq!(remote_code(client.get_task(&task.task_id)), -32602);
}

#[test]
fn a_task_whose_tool_asks_the_client_is_input_required_until_answered() {
    use talaria::core::client::Handlers;
    use talaria::core::schema::elicitation::{Elicit, ElicitAction, ElicitRequestParams, ElicitResult};
    let router = Router::<()>::builder()
        .blocking_tool(
            Tool::new("ask", schema()).with_task_support(TaskSupport::Required),
            |job, _: serde_json::Value| {
                let form =
                    talaria::core::schema::elicitation::ElicitRequestFormParams::new("Go on?", Default::default());
                let answer = job
                    .ask::<Elicit>(&ElicitRequestParams::Form(form))
                    .map_err(|e| ToolError::execution(e.to_string()))?;
                Ok(CallToolResult::text(format!("{:?}", answer.action)))
            },
        )
        .build();
    let server = talaria::server::Server::new("asker", "1", router);
    let related = Arc::new(Mutex::new(Vec::new()));
    let statuses = Arc::new(Mutex::new(Vec::new()));
    let (seen, heard) = (Arc::clone(&related), Arc::clone(&statuses));
    let handlers = Handlers::default().with_elicitation(false, move |params| {
        let ElicitRequestParams::Form(form) = params else { panic!("{params:?}") };
        let meta = form.meta.as_ref().and_then(|m| m.get("io.modelcontextprotocol/related-task")).cloned();
        seen.lock().unwrap().push(meta);
        Ok(ElicitResult::new(ElicitAction::Accept))
    });
    let options = ClientOptions::new("tasker", "1")
        .mode(ClientMode::Legacy)
        .versions(vec![ProtocolVersion::V2025_11_25])
        .handlers(handlers)
        .on_notification(move |method, params| {
            if method == "notifications/tasks/status" {
                let params: serde_json::Value = serde_json::from_str(params.unwrap().get()).unwrap();
                heard.lock().unwrap().push(params["status"].as_str().unwrap().to_owned());
            }
        });
    let client = talaria::memory::connect(&server, options).unwrap();
    let task = client.call_tool_as_task("ask", json!({}), None).unwrap();
    let result = client.task_result(&task.task_id).unwrap();
    assert_eq!(result.content[0].as_text(), Some("Accept"));
    assert_eq!(*related.lock().unwrap(), [Some(json!({"taskId": task.task_id}))], "the question names its task");
    // Notifications may trail the result a little: wait for the last one.
    let started = std::time::Instant::now();
    while statuses.lock().unwrap().len() < 3 && started.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(*statuses.lock().unwrap(), ["input_required", "working", "completed"]);
}
