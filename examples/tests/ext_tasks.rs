//! The 2026-07-28 tasks extension (`io.modelcontextprotocol/tasks`) end to end: our client
//! and server over the in-process transport and over Streamable HTTP on 127.0.0.1 (both
//! server flavours, where every request comes on its own connection), and raw requests for
//! the wire rules: `resultType: "task"`, `tasks/get` with the result inlined,
//! `input_required` answered with `tasks/update`, `tasks/cancel`, `notifications/tasks` on a
//! listen stream, and -32021 naming the extension for a client without it.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use talaria::client::{Client, ClientError, ClientOptions};
use talaria::core::client::Handlers;
use talaria::core::schema::elicitation::{
    Elicit, ElicitAction, ElicitRequestFormParams, ElicitRequestParams, ElicitResult,
};
use talaria::core::schema::tasks::ext::EXTENSION_ID;
use talaria::core::schema::tools::{CallToolResult, TaskSupport, Tool};
use talaria::core::server::{Router, ToolError};
use talaria::core::session::{CallError, ClientMode, LocalError};
use talaria::http::{HttpServer, HttpServerOptions, SmolHttpServer};

fn schema() -> talaria::core::schema::JsonObject {
    json!({"type": "object"}).as_object().cloned().unwrap()
}

/// `greet` (task required) asks the user's name, then greets; `spin` (task optional) runs
/// until cancelled; `quick` (task optional) answers inline; `fail` ends with a protocol error.
fn server() -> talaria::server::Server<()> {
    server_counting(Arc::new(AtomicUsize::new(0)))
}

/// [`server`], with `spinning` counting the `spin` tools running.
fn server_counting(spinning: Arc<AtomicUsize>) -> talaria::server::Server<()> {
    let router = Router::<()>::builder()
        .blocking_tool(Tool::new("greet", schema()).with_task_support(TaskSupport::Required), |job, _: Value| {
            let form = ElicitRequestFormParams::new("Your name?", schema_with_name());
            let answer =
                job.ask::<Elicit>(&ElicitRequestParams::Form(form)).map_err(|e| ToolError::execution(e.to_string()))?;
            let name = answer.content.as_ref().and_then(|c| c.get("name")).and_then(Value::as_str).unwrap_or("?");
            Ok(CallToolResult::text(format!("Hello, {name}!")))
        })
        .blocking_tool(Tool::new("spin", schema()).with_task_support(TaskSupport::Optional), move |job, _: Value| {
            spinning.fetch_add(1, Ordering::SeqCst);
            while !job.is_cancelled() {
                std::thread::sleep(Duration::from_millis(2));
            }
            spinning.fetch_sub(1, Ordering::SeqCst);
            Err(ToolError::execution("stopped"))
        })
        .blocking_tool(Tool::new("count", schema()).with_task_support(TaskSupport::Optional), |job, _: Value| {
            for step in 1..=12 {
                std::thread::sleep(Duration::from_millis(50));
                job.progress(f64::from(step), Some(12.0), None);
            }
            Ok(CallToolResult::text("counted"))
        })
        .tool(Tool::new("quick", schema()).with_task_support(TaskSupport::Optional), |_ctx, _: Value| {
            Ok(CallToolResult::text("quick answer"))
        })
        .blocking_tool(Tool::new("fail", schema()).with_task_support(TaskSupport::Required), |_job, _: Value| {
            Err(ToolError::Protocol(talaria::core::jsonrpc::ErrorObject::internal("rate limited")))
        })
        .build();
    talaria::server::Server::new("tasks", "1", router)
}

fn schema_with_name() -> talaria::core::schema::elicitation::ElicitationSchema {
    serde_json::from_value(json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}))
        .unwrap()
}

/// A stateless client listing the tasks extension that answers forms with "Luca", counting
/// the questions it was asked.
fn options(asked: &Arc<AtomicUsize>) -> ClientOptions {
    let asked = Arc::clone(asked);
    let handlers = Handlers::default().with_elicitation(false, move |_| {
        asked.fetch_add(1, Ordering::Relaxed);
        let mut answer = ElicitResult::new(ElicitAction::Accept);
        answer.content = Some([("name".to_owned(), json!("Luca"))].into());
        Ok(answer)
    });
    ClientOptions::new("tasker", "1")
        .mode(ClientMode::Stateless)
        .handlers(handlers)
        .extension(EXTENSION_ID, Default::default())
        .unwrap()
}

/// What our client sees of the extension, whatever carries it.
fn client_drives_tasks(client: &Client, asked: &Arc<AtomicUsize>) {
    let caps = client.server_capabilities().unwrap();
    assert!(caps.extension(EXTENSION_ID).is_some(), "the server declares the extension: {caps:?}");
    // Answered with a task; the client polls, answers the question, and returns the result.
    let result = client.call_tool("greet", json!({})).unwrap();
    assert_eq!(result.content[0].as_text(), Some("Hello, Luca!"));
    assert_eq!(asked.load(Ordering::Relaxed), 1, "the question was answered once");
    // An inline tool is answered as a plain call.
    assert_eq!(client.call_tool("quick", json!({})).unwrap().content[0].as_text(), Some("quick answer"));
    // A JSON-RPC error ends the call with that error.
    match client.call_tool("fail", json!({})) {
        Err(ClientError::Call(CallError::Remote(e))) => {
            assert_eq!((e.code.0, e.message.as_str()), (-32603, "rate limited"));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn our_client_follows_tasks_in_process() {
    let asked = Arc::new(AtomicUsize::new(0));
    let client = talaria::memory::connect(&server(), options(&asked)).unwrap();
    client_drives_tasks(&client, &asked);
}

#[test]
fn our_client_follows_tasks_over_http_on_both_servers() {
    let server = server();
    let blocking = HttpServer::bind(&server, "127.0.0.1:0", HttpServerOptions::default()).unwrap();
    let smol = SmolHttpServer::bind(&server, "127.0.0.1:0", HttpServerOptions::default()).unwrap();
    for addr in [blocking.local_addr(), smol.local_addr()] {
        let asked = Arc::new(AtomicUsize::new(0));
        let client = Client::http(&format!("http://{addr}/mcp"), &[], options(&asked)).unwrap();
        client_drives_tasks(&client, &asked);
        // The async handle too.
        let asked = Arc::new(AtomicUsize::new(0));
        let url = format!("http://{addr}/mcp");
        smol::block_on(async {
            let client = talaria::smol::http(&url, &[], options(&asked)).await.unwrap();
            let result = client.call_tool("greet", json!({})).await.unwrap();
            assert_eq!(result.content[0].as_text(), Some("Hello, Luca!"));
        });
    }
}

/// Waits up to 10 s for no `spin` to be running.
fn wait_stopped(spinning: &AtomicUsize) {
    let started = Instant::now();
    while spinning.load(Ordering::SeqCst) > 0 {
        assert!(started.elapsed() < Duration::from_secs(10), "the tool was never told to stop");
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn cancelling_a_call_that_became_a_task_cancels_the_task() {
    let asked = Arc::new(AtomicUsize::new(0));
    let spinning = Arc::new(AtomicUsize::new(0));
    let client = talaria::memory::connect(&server_counting(Arc::clone(&spinning)), options(&asked)).unwrap().to_async();
    smol::block_on(async {
        let call = client.call_tool("spin", json!({}));
        let outcome = smol::future::or(async { Some(call.await) }, async {
            smol::Timer::after(Duration::from_millis(300)).await;
            None
        })
        .await;
        assert!(outcome.is_none(), "spin runs until cancelled: {outcome:?}");
    });
    assert_eq!(spinning.load(Ordering::SeqCst), 1, "it ran as a task");
    // Dropping the call cancelled it: the server saw tasks/cancel and stopped the tool.
    wait_stopped(&spinning);
}

#[test]
fn a_task_can_be_started_looked_at_watched_and_cancelled_by_id() {
    use talaria::core::client::CallOptions;
    use talaria::core::schema::tasks::ext::TaskStart;
    use talaria::core::schema::tasks::TaskStatus;
    let asked = Arc::new(AtomicUsize::new(0));
    let spinning = Arc::new(AtomicUsize::new(0));
    let client = talaria::memory::connect(&server_counting(Arc::clone(&spinning)), options(&asked)).unwrap();
    // Started and kept: the task's id comes back, and nothing answers its question yet.
    let TaskStart::Task(task) = client.start_task("greet", json!({})).unwrap() else { panic!("greet is a task") };
    let state = poll_state(&client, &task.task_id, |s| s.status == TaskStatus::InputRequired);
    assert!(state.input_requests.is_some_and(|r| r.len() == 1), "the question waits");
    assert_eq!(asked.load(Ordering::Relaxed), 0, "a kept task is not followed");
    // Watched: the question is answered once, each change reported, and the result returned.
    let changes = Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = Arc::clone(&changes);
    let options =
        CallOptions::default().with_progress(move |p| seen.lock().unwrap().push(p.message.unwrap_or_default()));
    let result = client.watch_task(&task.task_id, options).unwrap();
    assert_eq!(result.content[0].as_text(), Some("Hello, Luca!"));
    assert_eq!(asked.load(Ordering::Relaxed), 1);
    assert_eq!(changes.lock().unwrap().first().map(String::as_str), Some("input_required"), "{changes:?}");
    // An inline tool answers at once.
    assert!(
        matches!(client.start_task("quick", json!({})).unwrap(), TaskStart::Answered(r) if r.content[0].as_text() == Some("quick answer"))
    );
    // A dropped watch leaves the task running; cancelling it by id stops it.
    let TaskStart::Task(spin) = client.start_task("spin", json!({})).unwrap() else { panic!("spin became a task") };
    let asynchronous = client.to_async();
    smol::block_on(async {
        let watch = asynchronous.watch_task(&spin.task_id, CallOptions::default());
        let outcome = smol::future::or(async { Some(watch.await) }, async {
            smol::Timer::after(Duration::from_millis(200)).await;
            None
        })
        .await;
        assert!(outcome.is_none(), "spin runs until cancelled: {outcome:?}");
    });
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(spinning.load(Ordering::SeqCst), 1, "the watch was dropped, not the task");
    assert_eq!(client.task_state(&spin.task_id).unwrap().status, TaskStatus::Working);
    client.cancel_ext_task(&spin.task_id).unwrap();
    wait_stopped(&spinning);
    let ended = poll_state(&client, &spin.task_id, |s| s.status == TaskStatus::Cancelled);
    assert_eq!(ended.status, TaskStatus::Cancelled);
}

/// Polls task `id` with our client until `done` holds (10 s at most).
fn poll_state(
    client: &Client,
    id: &str,
    done: impl Fn(&talaria::core::schema::tasks::ext::DetailedTask) -> bool,
) -> talaria::core::schema::tasks::ext::DetailedTask {
    let started = Instant::now();
    loop {
        let state = client.task_state(id).unwrap();
        if done(&state) {
            return state;
        }
        assert!(started.elapsed() < Duration::from_secs(10), "the task stayed {:?}", state.status);
        std::thread::sleep(Duration::from_millis(10));
    }
}

// ---- raw HTTP: the wire rules, from a client that is not ours ----

fn meta(with_tasks: bool) -> Value {
    let caps = if with_tasks { json!({"extensions": {EXTENSION_ID: {}}}) } else { json!({}) };
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": caps,
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"}
    })
}

/// Sends one request and returns the response head and a reader on the rest.
fn send(addr: &str, body: &Value) -> (String, BufReader<TcpStream>) {
    let text = body.to_string();
    let method = body["method"].as_str().unwrap();
    let name = body["params"]["name"].as_str().or_else(|| body["params"]["taskId"].as_str());
    let mut request = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: {method}\r\n"
    );
    if let Some(name) = name {
        request.push_str(&format!("Mcp-Name: {name}\r\n"));
    }
    request.push_str(&format!("Content-Length: {}\r\n\r\n{text}", text.len()));
    let mut stream = TcpStream::connect(addr).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    stream.write_all(request.as_bytes()).unwrap();
    let mut reader = BufReader::new(stream);
    let mut head = String::new();
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).unwrap();
        if line == "\r\n" || line.is_empty() {
            break;
        }
        head.push_str(&line);
    }
    (head, reader)
}

/// One request's JSON answer (the last `data:` line of an SSE reply).
fn post(addr: &str, body: &Value) -> (u16, Value) {
    let (head, mut reader) = send(addr, body);
    let mut rest = String::new();
    let _ = reader.read_to_string(&mut rest);
    let status = head.split(' ').nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    let json = rest
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .next_back()
        .map_or_else(|| rest.lines().find(|l| l.starts_with('{')).unwrap_or("null").to_owned(), str::to_owned);
    (status, serde_json::from_str(&json).unwrap_or(Value::Null))
}

fn request(id: i64, method: &str, params: Value, with_tasks: bool) -> Value {
    let mut params = params;
    params["_meta"] = meta(with_tasks);
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

fn on_both_servers(check: impl Fn(&str)) {
    let server = server();
    let blocking = HttpServer::bind(&server, "127.0.0.1:0", HttpServerOptions::default()).unwrap();
    check(&blocking.local_addr().to_string());
    let smol = SmolHttpServer::bind(&server, "127.0.0.1:0", HttpServerOptions::default()).unwrap();
    check(&smol.local_addr().to_string());
}

/// Polls `tasks/get` until `done` accepts the task, for at most 10 s.
fn poll_until(addr: &str, task_id: &str, done: impl Fn(&Value) -> bool) -> Value {
    let started = Instant::now();
    loop {
        let (status, reply) = post(addr, &request(90, "tasks/get", json!({"taskId": task_id}), true));
        assert_eq!(status, 200, "{reply}");
        let task = reply["result"].clone();
        assert_eq!(task["resultType"], "complete", "tasks/get answers are complete results: {task}");
        if done(&task) {
            return task;
        }
        assert!(started.elapsed() < Duration::from_secs(10), "the task never got there: {task}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn a_task_is_created_polled_asked_updated_and_completed_on_the_wire() {
    on_both_servers(|addr| {
        let (status, created) = post(addr, &request(1, "tools/call", json!({"name": "greet", "arguments": {}}), true));
        assert_eq!(status, 200);
        let created = &created["result"];
        assert_eq!(created["resultType"], "task", "{created}");
        assert_eq!(created["status"], "working");
        assert!(created["ttlMs"].is_u64() && created["pollIntervalMs"].is_u64(), "{created}");
        let task_id = created["taskId"].as_str().unwrap().to_owned();
        assert_eq!(task_id.len(), 32, "128 random bits, not a counter: {task_id}");
        let asking = poll_until(addr, &task_id, |t| t["status"] == "input_required");
        let (key, question) = asking["inputRequests"].as_object().unwrap().iter().next().unwrap();
        assert_eq!(question["method"], "elicitation/create", "{asking}");
        // An answer to a key that is not outstanding is acknowledged and ignored.
        let stray = json!({"taskId": task_id, "inputResponses": {"nope": {"action": "decline"}}});
        let (_, ack) = post(addr, &request(2, "tasks/update", stray, true));
        assert_eq!(ack["result"]["resultType"], "complete", "an empty acknowledgement: {ack}");
        let answer =
            json!({"taskId": task_id, "inputResponses": {key: {"action": "accept", "content": {"name": "Ada"}}}});
        let (_, ack) = post(addr, &request(3, "tasks/update", answer, true));
        assert_eq!(ack["result"]["resultType"], "complete", "an empty acknowledgement: {ack}");
        let done = poll_until(addr, &task_id, |t| t["status"] == "completed");
        assert_eq!(done["result"]["content"][0]["text"], "Hello, Ada!", "{done}");
        assert!(done.get("inputRequests").is_none(), "{done}");
    });
}

#[test]
fn a_failed_task_carries_the_json_rpc_error_and_a_cancelled_one_says_so() {
    on_both_servers(|addr| {
        let (_, created) = post(addr, &request(1, "tools/call", json!({"name": "fail", "arguments": {}}), true));
        let task_id = created["result"]["taskId"].as_str().unwrap().to_owned();
        let failed = poll_until(addr, &task_id, |t| t["status"] != "working");
        assert_eq!((failed["status"].as_str(), &failed["error"]["code"]), (Some("failed"), &json!(-32603)), "{failed}");
        let (_, created) = post(addr, &request(2, "tools/call", json!({"name": "spin", "arguments": {}}), true));
        let task_id = created["result"]["taskId"].as_str().unwrap().to_owned();
        let (_, ack) = post(addr, &request(3, "tasks/cancel", json!({"taskId": task_id}), true));
        assert_eq!(ack["result"]["resultType"], "complete", "an empty acknowledgement: {ack}");
        assert_eq!(poll_until(addr, &task_id, |_| true)["status"], "cancelled");
        let (_, unknown) = post(addr, &request(4, "tasks/get", json!({"taskId": "0".repeat(32)}), true));
        assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
        let (_, unknown) = post(addr, &request(5, "tasks/cancel", json!({"taskId": "0".repeat(32)}), true));
        assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
    });
}

#[test]
fn a_client_without_the_extension_gets_plain_calls_or_minus_32021_naming_it() {
    let named = json!({"requiredCapabilities": {"extensions": {EXTENSION_ID: {}}}});
    on_both_servers(|addr| {
        // Optional: called as a plain call, never a task.
        let (status, quick) = post(addr, &request(1, "tools/call", json!({"name": "quick", "arguments": {}}), false));
        assert_eq!((status, &quick["result"]["content"][0]["text"]), (200, &json!("quick answer")), "{quick}");
        // Required: refused, naming the extension.
        let (status, refused) = post(addr, &request(2, "tools/call", json!({"name": "greet", "arguments": {}}), false));
        assert_eq!((status, &refused["error"]["code"]), (400, &json!(-32021)), "{refused}");
        assert_eq!(refused["error"]["data"], named, "{refused}");
        // The task methods too.
        let (_, refused) = post(addr, &request(3, "tasks/get", json!({"taskId": "x"}), false));
        assert_eq!(refused["error"]["code"], -32021, "{refused}");
        // And task notifications on a listen stream.
        let listen = request(4, "subscriptions/listen", json!({"notifications": {"taskIds": ["x"]}}), false);
        let (_, refused) = post(addr, &listen);
        assert_eq!(refused["error"]["code"], -32021, "{refused}");
    });
}

#[test]
fn a_listen_stream_following_a_task_hears_it_end() {
    on_both_servers(|addr| {
        let (_, created) = post(addr, &request(1, "tools/call", json!({"name": "spin", "arguments": {}}), true));
        let task_id = created["result"]["taskId"].as_str().unwrap().to_owned();
        let listen =
            request(2, "subscriptions/listen", json!({"notifications": {"taskIds": [task_id, "unknown"]}}), true);
        let (head, mut stream) = send(addr, &listen);
        assert!(head.contains("text/event-stream"), "{head}");
        let mut next_data = || loop {
            let mut line = String::new();
            assert!(stream.read_line(&mut line).unwrap() > 0, "the stream ended early");
            if let Some(data) = line.trim_end().strip_prefix("data: ") {
                return serde_json::from_str::<Value>(data).unwrap();
            }
        };
        let ack = next_data();
        assert_eq!(ack["method"], "notifications/subscriptions/acknowledged", "{ack}");
        assert_eq!(ack["params"]["notifications"]["taskIds"], json!([task_id]), "only the task it may follow: {ack}");
        let (_, ack) = post(addr, &request(3, "tasks/cancel", json!({"taskId": task_id}), true));
        assert!(ack.get("result").is_some(), "{ack}");
        let told = next_data();
        assert_eq!(told["method"], "notifications/tasks", "{told}");
        assert_eq!(
            (told["params"]["taskId"].as_str(), told["params"]["status"].as_str()),
            (Some(task_id.as_str()), Some("cancelled"))
        );
    });
}

#[test]
fn a_call_that_became_a_task_still_ends_by_its_max_time() {
    let asked = Arc::new(AtomicUsize::new(0));
    let spinning = Arc::new(AtomicUsize::new(0));
    let client = talaria::memory::connect(&server_counting(Arc::clone(&spinning)), options(&asked)).unwrap();
    let outcome = client.call_tool_with(
        "spin",
        json!({}),
        talaria::core::client::CallOptions::default().with_max_time(Duration::from_millis(200)),
    );
    assert!(matches!(outcome, Err(ClientError::Call(CallError::Local(LocalError::TimedOut)))), "{outcome:?}");
    wait_stopped(&spinning);
}

#[test]
fn a_task_that_reports_progress_outlives_the_request_timeout_and_a_silent_one_does_not() {
    let asked = Arc::new(AtomicUsize::new(0));
    let spinning = Arc::new(AtomicUsize::new(0));
    let options = options(&asked).request_timeout(Duration::from_millis(300));
    let client = talaria::memory::connect(&server_counting(Arc::clone(&spinning)), options).unwrap();
    // 600 ms of work, with progress (the task's status message) every 50 ms.
    let counted = client.call_tool("count", json!({})).unwrap();
    assert_eq!(counted.content[0].as_text(), Some("counted"));
    // A task that never changes is timed out like a call that never reports progress.
    let started = Instant::now();
    let outcome = client.call_tool("spin", json!({}));
    assert!(matches!(outcome, Err(ClientError::Call(CallError::Local(LocalError::TimedOut)))), "{outcome:?}");
    assert!(started.elapsed() < Duration::from_secs(5), "{:?}", started.elapsed());
    wait_stopped(&spinning);
}

#[test]
fn a_call_that_asks_for_progress_of_an_optional_tool_stays_a_plain_call_with_its_progress() {
    let asked = Arc::new(AtomicUsize::new(0));
    let client = talaria::memory::connect(&server(), options(&asked)).unwrap();
    let reports = Arc::new(AtomicUsize::new(0));
    let seen = Arc::clone(&reports);
    let options = talaria::core::client::CallOptions::default().with_progress(move |_| {
        seen.fetch_add(1, Ordering::Relaxed);
    });
    let counted = client.call_tool_with("count", json!({}), options).unwrap();
    assert_eq!(counted.content[0].as_text(), Some("counted"));
    assert_eq!(reports.load(Ordering::Relaxed), 12, "every step reported: no task, which would carry none");
}
