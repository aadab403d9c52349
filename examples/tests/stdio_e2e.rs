//! End to end over real child processes: our client <-> `everything-server` over stdio.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::json;
use talaria::client::{Client, ClientError, ClientOptions};
use talaria::core::client::{CallOptions, Handlers};
use talaria::core::schema::completion::{CompleteRequestParams, CompletionArgument, PromptReference};
use talaria::core::schema::elicitation::{ElicitAction, ElicitResult};
use talaria::core::schema::roots::Root;
use talaria::core::schema::sampling::{CreateMessageResult, SamplingContent};
use talaria::core::schema::LoggingLevel;
use talaria::core::session::{CallError, ClientMode, LocalError};
use talaria::core::version::ProtocolVersion;
use talaria::stdio::{StderrMode, StdioCommand};

const SERVER: &str = env!("CARGO_BIN_EXE_everything-server");

fn server_command() -> StdioCommand {
    StdioCommand::new(SERVER).args(["--transport", "stdio"]).grace_period(Duration::from_millis(300))
}

fn handlers() -> Handlers {
    let mut handlers = Handlers::default()
        .with_sampling(|_| Ok(CreateMessageResult::new("test-model", SamplingContent::text("sampled answer"))))
        .with_elicitation(false, |_| {
            let mut answer = ElicitResult::new(ElicitAction::Accept);
            answer.content = Some([("answer".to_owned(), json!("forty-two"))].into_iter().collect());
            Ok(answer)
        });
    handlers.add_root(Root::new("file:///work/project"));
    handlers
}

fn legacy(version: ProtocolVersion) -> ClientOptions {
    ClientOptions::new("e2e", "1").mode(ClientMode::Legacy).versions(vec![version]).handlers(handlers())
}

fn text_of(result: &talaria::core::schema::tools::CallToolResult) -> String {
    result.content.iter().filter_map(|c| c.as_text()).collect::<Vec<_>>().join("")
}

#[test]
fn every_typed_call_under_every_legacy_revision() {
    for version in [
        ProtocolVersion::V2024_11_05,
        ProtocolVersion::V2025_03_26,
        ProtocolVersion::V2025_06_18,
        ProtocolVersion::V2025_11_25,
    ] {
        let logs = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::clone(&logs);
        let options = legacy(version).on_log(move |log| seen.lock().unwrap().push(log.level));
        let client = Client::stdio(server_command(), options).unwrap();
        assert_eq!(client.protocol_version(), version, "negotiated");
        assert_eq!(client.server_info().name, "everything-server");
        assert!(client.instructions().unwrap().contains("every MCP feature"));
        client.ping().unwrap();

        let tools = client.list_all_tools().unwrap();
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names[..3], ["echo", "add", "fail"], "{version}: registration order");

        let echo = client.call_tool("echo", json!({"text": "hi"})).unwrap();
        assert_eq!(text_of(&echo), "hi");
        let sum = client.call_tool("add", json!({"a": 2, "b": 40})).unwrap();
        if version >= ProtocolVersion::V2025_06_18 {
            assert_eq!(sum.structured_content, Some(json!({"sum": 42})), "{version}");
        } else {
            assert_eq!(sum.structured_content, None, "{version}: no structured output before 2025-06-18");
        }
        assert!(text_of(&sum).contains("42"));
        assert_eq!(client.call_tool("fail", json!({})).unwrap().is_error, Some(true));
        let bad = client.call_tool("add", json!({"a": "two", "b": 1})).unwrap();
        assert_eq!(bad.is_error, Some(true));
        assert!(text_of(&bad).contains("\"a\""), "{version}: names the field: {}", text_of(&bad));
        match client.call_tool("nope", json!({})) {
            Err(ClientError::Call(CallError::Remote(e))) => {
                assert_eq!(e.code.0, -32602);
                assert!(e.message.contains("nope"));
            }
            other => panic!("{version}: unknown tool gave {other:?}"),
        }

        let prompts = client.list_all_prompts().unwrap();
        assert_eq!(prompts[0].name, "greet");
        let prompt = client.get_prompt("greet", &[("name", "Ada")]).unwrap();
        assert_eq!(prompt.messages.len(), 2);
        assert!(
            matches!(client.get_prompt("greet", &[]), Err(ClientError::Call(CallError::Remote(e))) if e.code.0 == -32602 && e.message.contains("name"))
        );

        assert_eq!(client.list_all_resources().unwrap().len(), 2);
        assert_eq!(client.list_all_resource_templates().unwrap()[0].uri_template, "notes://{id}");
        let readme = client.read_resource("file:///readme.md").unwrap();
        assert_eq!(readme.contents.len(), 1);
        let note = client.read_resource("notes://7").unwrap();
        assert!(serde_json::to_string(&note).unwrap().contains("note 7"));
        match client.read_resource("file:///missing") {
            Err(ClientError::Call(CallError::Remote(e))) => assert_eq!(e.code.0, -32002, "{version}"),
            other => panic!("{version}: missing resource gave {other:?}"),
        }
        client.subscribe("file:///readme.md").unwrap();
        client.unsubscribe("file:///readme.md").unwrap();

        if version >= ProtocolVersion::V2025_03_26 {
            let completion = client
                .complete(CompleteRequestParams::new(
                    PromptReference::new("greet"),
                    CompletionArgument::new("name", "a"),
                ))
                .unwrap();
            assert_eq!(completion.completion.values, vec!["Ada", "Alan"]);
        }

        client.set_log_level(LoggingLevel::Warning).unwrap();
        client.call_tool("log", json!({})).unwrap();
        // Logs travel before the response on the same pipe, so they have arrived.
        assert_eq!(
            *logs.lock().unwrap(),
            vec![LoggingLevel::Warning, LoggingLevel::Error],
            "{version}: level respected"
        );

        let reports = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::clone(&reports);
        let options = CallOptions::default().with_progress(move |p| seen.lock().unwrap().push(p.progress));
        let slow = client.call_tool_with("slow", json!({"steps": 3, "step_ms": 1}), options).unwrap();
        assert_eq!(text_of(&slow), "done after 3 steps");
        assert_eq!(*reports.lock().unwrap(), vec![1.0, 2.0, 3.0], "{version}: progress in order");

        let sampled = client.call_tool("sample", json!({"question": "why?"})).unwrap();
        assert!(text_of(&sampled).contains("sampled answer"), "{version}: {}", text_of(&sampled));
        let roots = client.call_tool("roots", json!({})).unwrap();
        assert_eq!(text_of(&roots), "file:///work/project");
        if version >= ProtocolVersion::V2025_06_18 {
            let elicited = client.call_tool("elicit", json!({"question": "answer?"})).unwrap();
            assert!(text_of(&elicited).contains("forty-two"), "{version}: {}", text_of(&elicited));
        }
        client.close();
        assert!(client.is_closed());
    }
}

#[test]
fn the_stateless_era_works_over_stdio() {
    let client = Client::stdio(server_command(), ClientOptions::new("e2e", "1").mode(ClientMode::Stateless)).unwrap();
    assert_eq!(client.protocol_version(), ProtocolVersion::V2026_07_28);
    let echoed = client.call_tool("echo", json!({"text": "stateless"})).unwrap();
    assert_eq!(text_of(&echoed), "stateless");
    let named = echoed.meta.as_ref().and_then(|m| m.get("io.modelcontextprotocol/serverInfo"));
    assert_eq!(named.and_then(|info| info["name"].as_str()), Some("everything-server"), "results name the server");
    // Over stdio the mirrored-argument headers do not exist: the call needs none.
    assert_eq!(
        text_of(&client.call_tool("forecast", json!({"region": "Bern", "days": 2})).unwrap()),
        "Bern: sunny for 2 days"
    );
    // This client answers no elicitation: a tool that asks for one is refused with -32021.
    match client.call_tool("elicit", json!({"question": "?"})) {
        Err(ClientError::Call(CallError::Remote(e))) => {
            assert_eq!((e.code.0, e.data), (-32021, Some(json!({"requiredCapabilities": {"elicitation": {}}}))));
        }
        other => panic!("a tool needing undeclared elicitation gave {other:?}"),
    }
    match client.request("no/such/method", None) {
        Err(ClientError::Call(CallError::Remote(e))) => assert_eq!(e.code.0, -32601),
        other => panic!("an unknown method gave {other:?}"),
    }
    match client.read_resource("file:///missing") {
        Err(ClientError::Call(CallError::Remote(e))) => assert_eq!(e.code.0, -32602),
        other => panic!("missing resource gave {other:?}"),
    }
    assert!(client.discover().unwrap().supported_versions.contains(&"2026-07-28".to_owned()));
}

#[test]
fn a_crashing_server_fails_pending_calls_fast_and_reports_its_exit() {
    let client = Client::stdio(server_command(), legacy(ProtocolVersion::V2025_06_18)).unwrap();
    let slow_client = client.clone();
    let slow = std::thread::spawn(move || slow_client.call_tool("slow", json!({"steps": 100, "step_ms": 100})));
    std::thread::sleep(Duration::from_millis(50));
    let start = Instant::now();
    let crash = client.call_tool("crash", json!({}));
    let slow = slow.join().unwrap();
    let elapsed = start.elapsed();
    assert!(matches!(crash, Err(ClientError::Call(CallError::Local(LocalError::Closed { .. })))), "{crash:?}");
    assert!(matches!(slow, Err(ClientError::Call(CallError::Local(LocalError::Closed { .. })))), "{slow:?}");
    assert!(elapsed < Duration::from_secs(1), "pending calls failed after {elapsed:?}");
    let deadline = Instant::now() + Duration::from_secs(2);
    while client.exit_status().is_none() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(client.exit_status().and_then(|s| s.code()), Some(3));
    assert!(matches!(client.ping(), Err(ClientError::Send(_))), "a closed client refuses calls");
}

fn alive(pid: u32) -> bool {
    // A zombie counts as gone: it has exited and only waits to be reaped by its parent.
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rsplit(')').next().and_then(|rest| rest.split_whitespace().next()).is_some_and(|state| state != "Z")
    })
}

#[cfg(target_os = "linux")]
#[test]
fn a_server_ignoring_sigterm_is_killed_after_the_grace_period() {
    // The shell ignores SIGTERM (and so does everything it starts) and outlives stdin EOF.
    let script = format!("trap '' TERM; echo $$ >&2; {SERVER} --transport stdio; while :; do sleep 1; done");
    let pid = Arc::new(Mutex::new(None));
    let seen = Arc::clone(&pid);
    let command = StdioCommand::new("sh").args(["-c", &script]).grace_period(Duration::from_millis(200)).stderr(
        StderrMode::Capture(Arc::new(move |line: &str| {
            seen.lock().unwrap().get_or_insert(line.trim().parse::<u32>().unwrap());
        })),
    );
    let client = Client::stdio(command, legacy(ProtocolVersion::V2025_06_18)).unwrap();
    let pid = pid.lock().unwrap().expect("the shell printed its pid");
    assert!(alive(pid));
    let start = Instant::now();
    client.close();
    let took = start.elapsed();
    assert!(took >= Duration::from_millis(400), "waited both grace periods: {took:?}");
    assert!(took < Duration::from_secs(5), "{took:?}");
    assert!(!alive(pid), "the shell was killed");
    let status = client.exit_status().expect("reaped");
    assert!(!status.success());
}

/// What a server writes to its stderr as it ends (often why it ended) reaches a capturing
/// callback before `close` returns, even a slow callback: a caller that exits next (the CLI)
/// loses none of it.
#[test]
fn a_servers_last_stderr_lines_reach_the_callback_before_close_returns() {
    let script = format!("{SERVER} --transport stdio; for n in 1 2 3 4 5; do echo \"bye $n\" >&2; done");
    let lines = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&lines);
    let command = StdioCommand::new("sh").args(["-c", &script]).grace_period(Duration::from_secs(2)).stderr(
        StderrMode::Capture(Arc::new(move |line: &str| {
            // A slow callback: each line takes a while to hand on.
            std::thread::sleep(Duration::from_millis(40));
            seen.lock().unwrap().push(line.to_owned());
        })),
    );
    let client = Client::stdio(command, legacy(ProtocolVersion::V2025_06_18)).unwrap();
    client.ping().unwrap();
    client.close();
    let byes: Vec<String> = lines.lock().unwrap().iter().filter(|line| line.starts_with("bye")).cloned().collect();
    assert_eq!(byes, (1..=5).map(|n| format!("bye {n}")).collect::<Vec<_>>());
}

#[cfg(target_os = "linux")]
#[test]
fn grandchildren_die_with_the_server() {
    let script = format!("sleep 1000 & echo $! >&2; exec {SERVER} --transport stdio");
    let pid = Arc::new(Mutex::new(None));
    let seen = Arc::clone(&pid);
    let command = StdioCommand::new("sh").args(["-c", &script]).grace_period(Duration::from_millis(200)).stderr(
        StderrMode::Capture(Arc::new(move |line: &str| {
            if let Ok(pid) = line.trim().parse::<u32>() {
                seen.lock().unwrap().get_or_insert(pid);
            }
        })),
    );
    let client = Client::stdio(command, legacy(ProtocolVersion::V2025_06_18)).unwrap();
    client.ping().unwrap();
    let grandchild = pid.lock().unwrap().expect("the shell printed the sleeper's pid");
    assert!(alive(grandchild));
    drop(client);
    let deadline = Instant::now() + Duration::from_secs(2);
    while alive(grandchild) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(!alive(grandchild), "grandchild {grandchild} outlived the client");
}

#[test]
fn stdin_eof_makes_the_server_exit_zero_after_flushing_running_calls() {
    let mut child = Command::new(SERVER)
        .args(["--transport", "stdio"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let frames = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18",
            "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "slow", "arguments": {"steps": 3, "step_ms": 50}}}),
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "last"}}}),
    ];
    for frame in frames {
        writeln!(stdin, "{frame}").unwrap();
    }
    drop(stdin);
    let mut out = String::new();
    child.stdout.take().unwrap().read_to_string(&mut out).unwrap();
    let status = child.wait().unwrap();
    assert!(status.success(), "{status:?}");
    let replies: Vec<serde_json::Value> = out.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let ids: Vec<i64> = replies.iter().filter_map(|r| r["id"].as_i64()).collect();
    assert!(ids.contains(&2), "the slow call's answer was flushed before exit: {out}");
    assert!(ids.contains(&3));
    let slow = replies.iter().find(|r| r["id"] == 2).unwrap();
    assert_eq!(slow["result"]["content"][0]["text"], "done after 3 steps");
}

#[test]
fn the_async_handle_makes_the_same_calls_and_cancels_on_drop() {
    let client = Client::stdio(server_command(), legacy(ProtocolVersion::V2025_11_25)).unwrap().to_async();
    smol::block_on(async {
        let echo = client.call_tool("echo", json!({"text": "async"})).await.unwrap();
        assert_eq!(text_of(&echo), "async");
        assert_eq!(client.list_all_tools().await.unwrap().len(), 12);
        // Start a long call, give up on it after 50 ms: dropping the future cancels it.
        let slow = client.call_tool("slow", json!({"steps": 100, "step_ms": 20}));
        let gave_up = smol::future::or(async { Some(slow.await) }, async {
            smol::Timer::after(Duration::from_millis(50)).await;
            None
        })
        .await;
        assert!(gave_up.is_none());
        assert_eq!(client.to_blocking().pending_calls(), 0, "the dropped call was cancelled");
        // Concurrent calls on one connection.
        let calls: Vec<_> = (0..32).map(|i| client.call_tool("echo", json!({"text": i.to_string()}))).collect();
        for (i, call) in calls.into_iter().enumerate() {
            assert_eq!(text_of(&call.await.unwrap()), i.to_string());
        }
    });
}

#[test]
fn a_call_times_out_and_the_connection_lives_on() {
    let client = Client::stdio(server_command(), legacy(ProtocolVersion::V2025_06_18)).unwrap();
    let options =
        CallOptions::default().with_timeout(Duration::from_millis(100)).with_max_time(Duration::from_millis(100));
    let start = Instant::now();
    let outcome = client.call_tool_with("slow", json!({"steps": 50, "step_ms": 20}), options);
    assert!(matches!(outcome, Err(ClientError::Call(CallError::Local(LocalError::TimedOut)))), "{outcome:?}");
    assert!(start.elapsed() < Duration::from_secs(1));
    assert_eq!(text_of(&client.call_tool("echo", json!({"text": "still here"})).unwrap()), "still here");
}

#[test]
fn a_server_that_never_answers_the_handshake_times_out_at_the_connect_timeout() {
    // `cat` reads the client's initialize and never answers (its echo is no answer).
    let silent = StdioCommand::new("sh").arg("-c").arg("cat > /dev/null");
    for mode in [ClientMode::Legacy, ClientMode::Stateless, ClientMode::Auto] {
        let options = ClientOptions::new("c", "1").mode(mode).connect_timeout(Duration::from_millis(300));
        let started = Instant::now();
        let failed = Client::stdio(silent.clone(), options).err();
        let took = started.elapsed();
        let Some(ClientError::HandshakeTimedOut { after }) = failed else { panic!("{mode:?}: {failed:?}") };
        assert_eq!(after, Duration::from_millis(300));
        assert!(took >= Duration::from_millis(300) && took < Duration::from_secs(5), "{mode:?}: {took:?}");
    }
}
