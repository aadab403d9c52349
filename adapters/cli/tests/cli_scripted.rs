//! The `talaria` binary in scripted mode, against its own demo server (`talaria serve-demo`)
//! over stdio and WebSocket: JSON output, error objects and exit codes.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::process::{Command, Stdio};

use serde_json::Value;

mod common;
use common::{code, json_lines, stderr, stdio, talaria, with_stdin, NetDemo, TALARIA};

#[test]
fn stdio_one_shot_commands_print_one_json_value_each() {
    let output = stdio(&[], "call-tool echo text=hi case=upper ::: list-tools ::: call-tool add a=2 b=40 ::: ping");
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let values = json_lines(&output);
    assert_eq!(values.len(), 4);
    assert_eq!(values[0]["content"][0]["text"], "HI");
    let tools: Vec<&str> = values[1]["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert!(tools.contains(&"slow") && tools.contains(&"echo"), "{tools:?}");
    assert_eq!(values[2]["structuredContent"]["sum"], 42);
    assert_eq!(values[3], serde_json::json!({}));
}

#[test]
fn arguments_are_typed_by_the_schema() {
    let output =
        stdio(&[], r#"call-tool stats values=1,2,4.5 ::: call-tool add {"a":1} b:=2 ::: call-tool echo positional"#);
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let values = json_lines(&output);
    assert_eq!(values[0]["structuredContent"]["count"], 3);
    assert_eq!(values[0]["structuredContent"]["max"], 4.5);
    assert_eq!(values[1]["structuredContent"]["sum"], 3);
    assert_eq!(values[2]["content"][0]["text"], "positional");
}

#[test]
fn bad_arguments_are_usage_errors_naming_the_field() {
    let output = stdio(&[], "call-tool add a=x b=1");
    assert_eq!(code(&output), 2);
    let values = json_lines(&output);
    assert_eq!(values[0]["kind"], "usage");
    assert!(values[0]["message"].as_str().unwrap().contains(r#""a": expected an integer"#), "{}", values[0]);

    let output = stdio(&[], "call-tool add a=1");
    assert_eq!(code(&output), 2);
    let message = json_lines(&output)[0]["message"].as_str().unwrap().to_owned();
    assert!(message.contains(r#"missing required property "b""#), "{message}");
    assert!(stderr(&output).contains("example: call_tool add a=<integer> b=<integer>"), "{}", stderr(&output));

    let output = stdio(&[], "call-tool nope ::: frobnicate ::: read-resource");
    assert_eq!(code(&output), 2);
    let kinds: Vec<Value> = json_lines(&output).into_iter().map(|v| v["kind"].clone()).collect();
    assert_eq!(kinds, ["usage", "usage", "usage"]);
}

#[test]
fn tool_errors_and_protocol_errors_exit_3() {
    let output = stdio(&[], "call-tool fail");
    assert_eq!(code(&output), 3);
    assert_eq!(json_lines(&output)[0]["isError"], true);

    let output = stdio(&[], "read-resource file:///missing ::: ping");
    assert_eq!(code(&output), 3, "{}", stderr(&output));
    let values = json_lines(&output);
    assert_eq!(values[0]["kind"], "protocol");
    assert!(values[0]["code"].is_i64(), "{}", values[0]);
    assert_eq!(values[1], serde_json::json!({}), "the run goes on after a protocol error");

    let output = stdio(&["--no-validate"], "call-tool add a=x b=1");
    assert_eq!(code(&output), 3, "the server rejects what the client did not check");
}

#[test]
fn raw_rpc_and_completion() {
    let output = stdio(
        &[],
        r#"rpc tools/list {} ::: complete greet name=A ::: complete notes://{id} id ::: get-prompt greet name=Ada"#,
    );
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let values = json_lines(&output);
    assert!(values[0]["tools"].is_array());
    assert_eq!(values[1]["completion"]["values"], serde_json::json!(["Ada", "Alan"]));
    assert_eq!(values[2]["completion"]["values"], serde_json::json!(["1", "2", "3"]));
    assert_eq!(values[3]["messages"][1]["content"]["text"], "Hello, Ada!");
}

#[test]
fn commands_from_stdin_one_per_line() {
    let script = "# a comment\ncall-tool echo text='two words'\n\nread-resource notes://7\nlist-templates\n";
    let output = with_stdin(&["--json", "stdio", "--cmd", &format!("{TALARIA} serve-demo")], script);
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let values = json_lines(&output);
    assert_eq!(values.len(), 3);
    assert_eq!(values[0]["content"][0]["text"], "two words");
    assert_eq!(values[1]["contents"][0]["text"], "note 7");
    assert_eq!(values[2]["resourceTemplates"][0]["uriTemplate"], "notes://{id}");
}

#[test]
fn human_output_without_json() {
    let output = talaria(&["stdio", "--", TALARIA, "serve-demo", ":::", "call-tool", "fail", ":::", "list-resources"]);
    assert_eq!(code(&output), 3);
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(text.contains("✗ the tool reported an error:\nthis tool always fails"), "{text}");
    assert!(text.contains("file:///readme.md  readme (text/markdown)"), "{text}");
}

#[test]
fn pinned_legacy_revision() {
    let output = stdio(&["--protocol-version", "2025-06-18"], "show-state ::: ping ::: set-log-level debug");
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let values = json_lines(&output);
    assert_eq!(values[0]["protocolVersion"], "2025-06-18");
    assert_eq!(values[0]["transport"], "stdio");
    assert_eq!(values[2]["ok"], true);
}

#[test]
fn a_server_that_dies_shows_its_stderr_and_exits_4() {
    let output =
        talaria(&["--json", "stdio", "--", "sh", "-c", "echo 'boom: missing config' >&2; exit 1", ":::", "ping"]);
    assert_eq!(code(&output), 4);
    assert_eq!(json_lines(&output)[0]["kind"], "transport");
    assert!(stderr(&output).contains("boom: missing config"), "{}", stderr(&output));

    // The server's own exit status is shown, directly and through the trace proxy.
    for trace in [&[][..], &["--trace"][..]] {
        let mut args = vec!["--json"];
        args.extend_from_slice(trace);
        args.extend(["stdio", "--", "sh", "-c", "echo 'boom' >&2; exit 3", ":::", "ping"]);
        let output = talaria(&args);
        assert_eq!(code(&output), 4, "{trace:?}");
        let message = json_lines(&output)[0]["message"].as_str().unwrap().to_owned();
        assert!(message.contains("exit status: 3"), "{trace:?}: {message}");
    }

    let output = talaria(&["--json", "stdio", "--", "/nonexistent/server", ":::", "ping"]);
    assert_eq!(code(&output), 4);
    assert!(json_lines(&output)[0]["message"].as_str().unwrap().contains("cannot start /nonexistent/server"));
}

#[test]
fn timeouts_exit_4() {
    let output = stdio(&["--timeout", "300ms"], "call-tool slow steps=2 step_ms=2000");
    assert_eq!(code(&output), 4);
    assert_eq!(json_lines(&output)[0]["kind"], "timeout");
}

#[test]
fn ctrl_c_cancels_the_call_and_exits_6() {
    let child = Command::new(TALARIA)
        .args(["--json", "stdio", "--", TALARIA, "serve-demo", ":::", "call-tool", "slow", "steps=100", "step_ms=100"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let killed = Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    assert!(killed.success());
    let output = child.wait_with_output().unwrap();
    assert_eq!(code(&output), 6, "{}", stderr(&output));
    assert_eq!(json_lines(&output)[0]["kind"], "interrupted");
}

#[test]
fn trace_prints_frames_both_ways() {
    let output = stdio(&["--trace", "--protocol-version", "2025-06-18"], "ping");
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let err = stderr(&output);
    assert!(err.contains(r#"→ {"jsonrpc":"2.0","id":"#) && err.contains(r#""method":"initialize""#), "{err}");
    assert!(err.contains(r#"← {"jsonrpc":"2.0","id":"#), "{err}");
    assert!(err.contains(r#""method":"ping""#), "{err}");
}

#[test]
fn servers_from_a_config_file() {
    let dir = std::env::temp_dir().join(format!("talaria-cli-config-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join(".mcp.json");
    let config = serde_json::json!({"mcpServers": {"demo": {"command": TALARIA, "args": ["serve-demo"]}}});
    std::fs::write(&file, config.to_string()).unwrap();
    let path = file.display().to_string();
    let output = talaria(&["--json", "--config", &path, "demo", "list-prompts"]);
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    assert_eq!(json_lines(&output)[0]["prompts"][0]["name"], "greet");
    let output = talaria(&["--json", "--config", &path, "other", "ping"]);
    assert_eq!(code(&output), 2);
    assert!(stderr(&output).contains("servers there: demo"), "{}", stderr(&output));
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn legacy_sse_servers_are_reached_directly_and_through_the_http_probe() {
    let demo = NetDemo::start("sse");
    assert!(demo.url.ends_with("/sse"), "{}", demo.url);
    for transport in ["sse", "http"] {
        let output = talaria(&["--json", transport, &demo.url, "call-tool", "echo", "text=old school"]);
        assert_eq!(code(&output), 0, "{transport}: {}", stderr(&output));
        assert_eq!(json_lines(&output)[0]["content"][0]["text"], "old school", "{transport}");
    }
    // The state names the transport reached, not the one asked for.
    for transport in ["sse", "http"] {
        let output = talaria(&["--json", transport, &demo.url, "show_state"]);
        assert_eq!(code(&output), 0, "{transport}: {}", stderr(&output));
        assert_eq!(json_lines(&output)[0]["transport"], "sse", "{transport} fell back to legacy SSE");
    }
    let refused = talaria(&["--json", "sse", "http://127.0.0.1:9/sse", "ping"]);
    assert_eq!(code(&refused), 4, "nothing listening: a transport failure");
}

#[test]
fn usage_errors_exit_2() {
    assert_eq!(code(&talaria(&["stdio"])), 2);
    assert_eq!(code(&talaria(&["--no-such-flag"])), 2);
    assert_eq!(code(&talaria(&[])), 2);
    assert_eq!(code(&talaria(&["--help"])), 0);
}

#[test]
fn websocket_one_shot_commands() {
    let demo = NetDemo::start("ws");
    let output = talaria(&[
        "--json",
        "ws",
        &demo.url,
        "call-tool",
        "echo",
        "text=over ws",
        ":::",
        "show-state",
        ":::",
        "call-tool",
        "fail",
    ]);
    assert_eq!(code(&output), 3, "{}", stderr(&output));
    let values = json_lines(&output);
    assert_eq!(values[0]["content"][0]["text"], "over ws");
    assert_eq!(values[1]["transport"], "websocket");
    assert_eq!(values[2]["isError"], true);
    let output = talaria(&[
        "--json",
        "--protocol-version",
        "2025-03-26",
        "ws",
        &demo.url,
        "call-tool",
        "slow",
        "steps=2",
        "step_ms=10",
    ]);
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    assert_eq!(json_lines(&output)[0]["content"][0]["text"], "done after 2 steps");
}

#[test]
fn network_failures_exit_4_and_refused_credentials_exit_5() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let output = talaria(&["--json", "ws", &format!("ws://127.0.0.1:{port}/ws"), "ping"]);
    assert_eq!(code(&output), 4);
    assert_eq!(json_lines(&output)[0]["kind"], "transport");

    let addr = refusing_server();
    let output = talaria(&["--json", "-H", "Authorization: Bearer wrong", "ws", &format!("ws://{addr}/ws"), "ping"]);
    assert_eq!(code(&output), 5, "{}", String::from_utf8_lossy(&output.stdout));
    assert_eq!(json_lines(&output)[0]["kind"], "authorization");
    let output =
        talaria(&["--json", "-H", "Authorization: Bearer wrong", "http", &format!("http://{addr}/mcp"), "ping"]);
    assert_eq!(code(&output), 5, "{}", String::from_utf8_lossy(&output.stdout));
    let failure = &json_lines(&output)[0];
    assert_eq!(failure["kind"], "authorization");
    assert!(failure["message"].as_str().unwrap().contains("HTTP 401"), "{failure}");
}

#[test]
fn exit_codes_follow_the_error_type_not_its_text() {
    // Nothing listens on a port whose number contains 403 (4403 when it is free): a refused
    // connection is a transport failure (4), whatever digits its message holds.
    let port = [4403u16, 14033, 24030]
        .into_iter()
        .find(|p| TcpListener::bind(("127.0.0.1", *p)).is_ok())
        .expect("a free port containing 403");
    for url in [format!("ws://127.0.0.1:{port}/ws"), format!("http://127.0.0.1:{port}/mcp")] {
        let mode = if url.starts_with("ws") { "ws" } else { "http" };
        let output = talaria(&["--json", mode, &url, "ping"]);
        assert_eq!(code(&output), 4, "{url}: {}", String::from_utf8_lossy(&output.stdout));
        assert_eq!(json_lines(&output)[0]["kind"], "transport");
    }
}

#[test]
fn sse_and_ws_connects_end_at_the_timeout_on_a_server_that_never_answers() {
    // A server that accepts connections and never says a word.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming().flatten() {
            held.push(stream);
        }
    });
    for (mode, url) in [("ws", format!("ws://{addr}/ws")), ("sse", format!("http://{addr}/sse"))] {
        let started = std::time::Instant::now();
        let output = talaria(&["--json", "--timeout", "1", mode, &url, "ping"]);
        assert!(started.elapsed() < std::time::Duration::from_secs(20), "{mode} waited {:?}", started.elapsed());
        assert_eq!(code(&output), 4, "{mode}: {}", String::from_utf8_lossy(&output.stdout));
        assert_eq!(json_lines(&output)[0]["kind"], "timeout", "{mode}");
    }
}

/// A server answering every request with 401 (on a thread that lives as long as the tests).
fn refusing_server() -> std::net::SocketAddr {
    answering_server("HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".into())
}

/// A server answering every request with `response` (on a thread that lives as long as the
/// tests).
fn answering_server(response: String) -> std::net::SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            let mut request = [0u8; 8192];
            let _ = std::io::Read::read(&mut stream, &mut request);
            let _ = stream.write_all(response.as_bytes());
        }
    });
    addr
}

#[test]
fn demo_runs_to_completion_non_interactively() {
    let output = talaria(&["demo", "--no-interactive"]);
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let text = String::from_utf8_lossy(&output.stdout);
    for expected in
        ["1. The handshake", "talaria> call_tool slow", "done after 8 steps", "Hello, Ada!", "note 42", "Ada  Alan"]
    {
        assert!(text.contains(expected), "missing {expected:?} in:\n{text}");
    }
    assert!(stderr(&output).contains("[warning] log: a message at level warning"), "{}", stderr(&output));
    for expected in [
        "talaria> describe echo",
        "call_tool echo text=<string>",
        "talaria> show_state",
        "tap -- CMD",
        "the model said: [{\"text\":\"Ready when you are",
        "talaria> call_tool elicit",
    ] {
        assert!(text.contains(expected), "missing {expected:?} in:\n{text}");
    }
    // The commands suggested run as written: `talaria` if it is on PATH, else this binary's path.
    let on_path = std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join("talaria").is_file()));
    let me = if on_path { "talaria" } else { TALARIA };
    assert!(text.contains(&format!("{me} --json stdio -- {me} serve-demo")), "{text}");
}

#[test]
fn streamable_http_one_shot_commands() {
    let demo = NetDemo::start("http");
    assert!(demo.url.starts_with("http://") && demo.url.ends_with("/mcp"), "{}", demo.url);
    let output = talaria(&[
        "--json",
        "http",
        &demo.url,
        "call-tool",
        "add",
        "a=1",
        "b=2",
        ":::",
        "show-state",
        ":::",
        "read-resource",
        "notes://9",
    ]);
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let values = json_lines(&output);
    assert_eq!(values[0]["structuredContent"]["sum"], 3);
    assert_eq!(values[1]["transport"], "streamable-http");
    assert_eq!(values[2]["contents"][0]["text"], "note 9");
    let output = talaria(&[
        "--json",
        "--protocol-version",
        "2025-06-18",
        "http",
        &demo.url,
        "call-tool",
        "slow",
        "steps=2",
        "step_ms=10",
        ":::",
        "ping",
    ]);
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let values = json_lines(&output);
    assert_eq!(values[0]["content"][0]["text"], "done after 2 steps");
    assert_eq!(values[1], serde_json::json!({}));
    let output = talaria(&["--json", "--protocol-version", "2025-06-18", "http", &demo.url, "show-state"]);
    let state = &json_lines(&output)[0];
    assert_eq!(state["sessionId"].as_str().map(str::len), Some(32), "{state}");
}

#[test]
fn raw_batches_in_2025_03_26() {
    let batch = r#"[{"id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2}}},{"method":"notifications/roots/list_changed"},{"id":2,"method":"ping"}]"#;
    let run = |batch: &str| {
        talaria(&[
            "--json",
            "--protocol-version",
            "2025-03-26",
            "stdio",
            "--",
            TALARIA,
            "serve-demo",
            ":::",
            "batch",
            batch,
        ])
    };
    let output = run(batch);
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let answers = &json_lines(&output)[0];
    assert_eq!(answers.as_array().map(Vec::len), Some(2), "{answers}");
    assert!(answers[0]["result"]["structuredContent"].is_null(), "no structured output before 2025-06-18");
    assert!(answers[0]["result"]["content"][0]["text"].as_str().is_some_and(|t| t.contains('3')), "{answers}");
    assert_eq!(answers[1]["result"], serde_json::json!({}));
    assert_eq!((&answers[0]["id"], &answers[1]["id"]), (&serde_json::json!(1), &serde_json::json!(2)), "the ids given");
    let failing = r#"[{"id":"a","method":"no/such/method"}]"#;
    let output = run(failing);
    assert_eq!(code(&output), 3, "an error answer: {}", stderr(&output));
    let answer = &json_lines(&output)[0][0];
    assert_eq!(answer["id"], "a");
    assert_eq!(answer["error"]["code"], -32601, "the error object, not a string: {answer}");
    assert!(answer["error"]["message"].is_string(), "{answer}");
    let output = stdio(&[], "batch [1]");
    assert_eq!(code(&output), 2, "not messages: {}", stderr(&output));
    let output = stdio(&["--protocol-version", "2025-06-18"], r#"batch [{"id":1,"method":"ping"}]"#);
    assert_ne!(code(&output), 0, "no batches after 2025-03-26");
}

#[test]
fn scripted_mode_answers_server_requests_as_its_flags_say() {
    for version in ["2025-06-18", "2026-07-28"] {
        // Declined by default: the sampling call fails, the elicitation is declined.
        let output =
            stdio(&["--protocol-version", version], "call-tool sample question=q ::: call-tool elicit question=q");
        let values = json_lines(&output);
        assert_eq!(code(&output), 3, "{version}: {}", stderr(&output));
        // Legacy: the tool reports the refusal (isError); 2026-07-28: the client cannot answer
        // the input request, and says so.
        let refusal = values[0]["message"].as_str().or_else(|| values[0]["content"][0]["text"].as_str());
        assert!(refusal.unwrap().contains("User rejected sampling"), "{version}: {}", values[0]);
        if version == "2026-07-28" {
            assert!(values[0]["code"].is_i64(), "the refusal keeps its JSON-RPC code: {}", values[0]);
        }
        assert_eq!(values[1]["content"][0]["text"], r#"{"action":"decline"}"#, "{version}");
        // Flags answer instead: a fixed sampling reply, and a cancelled elicitation.
        let flags = ["--protocol-version", version, "--sampling-reply", "forty-two", "--elicitation", "cancel"];
        let output = stdio(&flags, "call-tool sample question=q ::: call-tool elicit question=q");
        assert_eq!(code(&output), 0, "{version}: {}", stderr(&output));
        let values = json_lines(&output);
        assert!(values[0]["content"][0]["text"].as_str().unwrap().contains("forty-two"), "{version}: {}", values[0]);
        assert_eq!(values[1]["content"][0]["text"], r#"{"action":"cancel"}"#, "{version}");
    }
    let output = talaria(&["--elicitation", "maybe", "stdio", "--", TALARIA, "serve-demo", "ping"]);
    assert_eq!(code(&output), 2, "an unknown answer is a usage error");
}

#[test]
fn trace_shows_http_heads_and_redacts_credentials() {
    let demo = NetDemo::start("http");
    let output = talaria(&[
        "--trace",
        "--protocol-version",
        "2025-11-25",
        "-H",
        "Authorization: Bearer very-secret",
        "http",
        &demo.url,
        "ping",
    ]);
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let err = stderr(&output);
    assert!(err.contains(&format!("→ POST {}", demo.url)), "{err}");
    assert!(err.contains("← HTTP 200") && err.contains("← HTTP 202"), "{err}");
    assert!(err.contains("authorization: Bearer [redacted]") && !err.contains("very-secret"), "{err}");
    assert!(err.contains(r#"→ {"jsonrpc":"2.0","id":1,"method":"ping""#), "{err}");
    assert!(err.contains("mcp-session-id: "), "{err}");
}

#[test]
fn asking_for_a_log_level_shows_the_logs_without_verbose() {
    for era in [&["--protocol-version", "2025-06-18"][..], &[][..]] {
        let mut extra = vec!["--log-level", "debug"];
        extra.extend_from_slice(era);
        let output = stdio(&extra, "call-tool log");
        assert_eq!(code(&output), 0, "{}", stderr(&output));
        let err = stderr(&output);
        assert!(err.contains("[debug]") && err.contains("[error]"), "{era:?}: the logs: {err}");
        // Without the flag, and without -v, they stay quiet.
        let quiet = stdio(era, "call-tool log");
        assert!(!stderr(&quiet).contains("[debug]"), "{}", stderr(&quiet));
        // Set mid-session: with logging/setLevel in the legacy era, in place in 2026-07-28.
        let set = stdio(era, "set-log-level debug ::: call-tool log");
        assert_eq!(code(&set), 0, "{era:?}: {}", stderr(&set));
        assert!(stderr(&set).contains("[debug]"), "{era:?}: {}", stderr(&set));
    }
}

#[test]
fn mistyped_modes_options_commands_and_tools_are_refused_with_the_closest_name() {
    let cases: [(&[&str], &str); 5] = [
        (&["--jsn", "stdio", "--", TALARIA, "serve-demo"], "did you mean --json?"),
        (&["sdtio", "--", TALARIA, "serve-demo"], "did you mean stdio?"),
        (&["stdio", "--jsn", "--", TALARIA, "serve-demo"], "did you mean --json?"),
        (&["stdio", "--", TALARIA, "serve-demo", ":::", "list-tool"], "did you mean list_tools?"),
        (&["stdio", "--", TALARIA, "serve-demo", ":::", "call-tool", "ecko", "text=x"], "did you mean echo?"),
    ];
    for (args, hint) in cases {
        let output = talaria(args);
        assert_eq!(code(&output), 2, "{args:?}: {}", stderr(&output));
        assert!(stderr(&output).contains(hint), "{args:?}: {}", stderr(&output));
    }
}

#[test]
fn a_url_alone_picks_its_transport() {
    for transport in ["http", "ws"] {
        let demo = NetDemo::start(transport);
        let output = talaria(&["--json", &demo.url, "call-tool", "echo", "text=by URL", ":::", "show_state"]);
        assert_eq!(code(&output), 0, "{transport}: {}", stderr(&output));
        let values = json_lines(&output);
        assert_eq!(values[0]["content"][0]["text"], "by URL");
        let expected = if transport == "ws" { "websocket" } else { "streamable-http" };
        assert_eq!(values[1]["transport"], expected);
    }
}

#[test]
fn a_servers_escape_sequences_are_shown_not_obeyed_in_human_output() {
    let nasty = "text=\x1b[2J\x1b]0;pwned\x07hello\r";
    let output = talaria(&["stdio", "--", TALARIA, "serve-demo", ":::", "call-tool", "echo", nasty]);
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let out = String::from_utf8_lossy(&output.stdout);
    assert!(!out.contains('\x1b') && !out.contains('\x07') && !out.contains('\r'), "{out:?}");
    assert!(out.contains("␛[2J␛]0;pwned␇hello␍"), "{out:?}");
    // JSON output keeps the text exact (JSON escapes control characters itself).
    let output = talaria(&["--json", "stdio", "--", TALARIA, "serve-demo", ":::", "call-tool", "echo", nasty]);
    assert_eq!(json_lines(&output)[0]["content"][0]["text"], "\x1b[2J\x1b]0;pwned\x07hello\r");
}

#[test]
fn a_refusal_shows_what_the_server_said() {
    // A server that knows only older revisions refuses a pinned 2026-07-28 with a plain body.
    let body = "Bad Request: Unsupported protocol version (supported: 2025-06-18)";
    let head = format!(
        "HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    let addr = answering_server(format!("{head}{body}"));
    let output =
        talaria(&["--json", "--protocol-version", "2026-07-28", "http", &format!("http://{addr}/mcp"), "ping"]);
    assert_ne!(code(&output), 0);
    let failure = &json_lines(&output)[0];
    assert!(
        failure["message"].as_str().unwrap().contains("Unsupported protocol version (supported: 2025-06-18)"),
        "{failure}"
    );
}

#[test]
fn a_script_goes_on_after_the_server_forgets_its_session() {
    let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let serve = || {
        let child = Command::new(TALARIA)
            .args(["serve-demo", "--transport", "http", "--port", &port.to_string()])
            .stdin(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut child = child;
        let mut line = String::new();
        BufReader::new(child.stderr.take().unwrap()).read_line(&mut line).unwrap();
        child
    };
    let mut server = serve();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let mut cli = Command::new(TALARIA)
        .args(["--json", "--protocol-version", "2025-11-25", "http", &url])
        .env("NO_COLOR", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = cli.stdin.take().unwrap();
    let mut output = BufReader::new(cli.stdout.take().unwrap());
    writeln!(input, "call-tool echo text=one").unwrap();
    let mut first = String::new();
    output.read_line(&mut first).unwrap();
    assert!(first.contains("one"), "{first}");
    // The server restarts: the session it gave is gone (404 on the next request).
    let _ = server.kill();
    let _ = server.wait();
    let mut server = serve();
    writeln!(input, "call-tool echo text=two").unwrap();
    writeln!(input, "call-tool echo text=three").unwrap();
    drop(input);
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut output, &mut rest).unwrap();
    let status = cli.wait().unwrap();
    let _ = server.kill();
    let _ = server.wait();
    let lines: Vec<Value> = rest.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 2, "{rest}");
    assert_eq!(lines[1]["content"][0]["text"], "three", "the script went on with a new session: {rest}");
    assert_eq!(status.code(), Some(if lines[0].get("kind").is_some() { 4 } else { 0 }), "{rest}");
}

#[test]
fn subscribing_in_2026_opens_a_listen_stream_and_unsubscribing_closes_it() {
    let output = stdio(&[], "subscribe notes://1 ::: unsubscribe notes://1 ::: unsubscribe notes://1");
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let values = json_lines(&output);
    assert!(values[0]["message"].as_str().unwrap().contains("subscriptions/listen"), "{values:?}");
    assert_eq!(values[1]["message"], "unsubscribed from notes://1");
    assert_eq!(values[2]["message"], "not subscribed to notes://1");
}

#[test]
fn describe_snapshot_and_diff_show_a_servers_surface_for_people_and_ci() {
    let output = stdio(&[], "describe echo");
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let described = &json_lines(&output)[0];
    assert_eq!(described["name"], "echo");
    assert!(described["example"].as_str().unwrap().starts_with("call_tool echo text=<string>"), "{described}");
    let output = stdio(&[], "describe ecko");
    assert_eq!(code(&output), 2);
    assert!(stderr(&output).contains("did you mean echo?"), "{}", stderr(&output));

    let output = stdio(&[], "snapshot");
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let snapshot = json_lines(&output)[0].clone();
    assert!(snapshot["tools"].as_array().unwrap().iter().any(|t| t["name"] == "echo"), "{snapshot}");
    let dir = std::env::temp_dir().join(format!("talaria-snapshot-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let saved = dir.join("surface.json");
    std::fs::write(&saved, snapshot.to_string()).unwrap();
    let saved_arg = saved.to_string_lossy().into_owned();
    let output = stdio(&[], &format!("diff {saved_arg}"));
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    assert_eq!(json_lines(&output)[0]["same"], true);
    // The saved surface had no `echo`: the server now has one more tool.
    let mut older = snapshot;
    older["tools"].as_array_mut().unwrap().retain(|t| t["name"] != "echo");
    std::fs::write(&saved, older.to_string()).unwrap();
    let output = stdio(&[], &format!("diff {saved_arg}"));
    assert_eq!(code(&output), 3, "a changed surface fails the run: {}", stderr(&output));
    assert_eq!(json_lines(&output)[0]["added"]["tools"], serde_json::json!(["echo"]));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn completions_a_man_page_and_a_public_tap() {
    for shell in ["bash", "zsh", "fish"] {
        let output = talaria(&["completions", shell]);
        assert_eq!(code(&output), 0, "{shell}");
        let script = String::from_utf8_lossy(&output.stdout);
        assert!(script.contains("talaria") && script.contains("serve-demo"), "{shell}: {script}");
    }
    let man = talaria(&["man"]);
    assert_eq!(code(&man), 0);
    assert!(String::from_utf8_lossy(&man.stdout).contains(".TH talaria"));
    // `tap` between a host and a stdio server: frames pass unchanged, each shown on stderr.
    let discover = r#"{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"host","version":"1"}}}}"#;
    let output = with_stdin(&["tap", "--", TALARIA, "serve-demo"], &format!("{discover}\n"));
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    assert!(String::from_utf8_lossy(&output.stdout).contains(r#""supportedVersions""#), "the server's answer passed");
    assert!(stderr(&output).contains(r#"method":"server/discover""#), "{}", stderr(&output));
}

#[test]
fn doctor_reports_revisions_capabilities_schemas_and_latency() {
    let demo = NetDemo::start("http");
    for args in [
        vec!["--json", "doctor", demo.url.as_str()],
        vec!["--json", "stdio", "--", TALARIA, "serve-demo", ":::", "doctor"],
    ] {
        let output = talaria(&args);
        assert_eq!(code(&output), 0, "{args:?}: {}", stderr(&output));
        let report = &json_lines(&output)[0];
        let found = |check: &str| {
            report["findings"].as_array().unwrap().iter().find(|f| f["check"] == check).cloned().unwrap_or_default()
        };
        for revision in ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"] {
            assert_eq!(found(&format!("revision {revision}"))["level"], "ok", "{args:?} {revision}: {report}");
        }
        assert_eq!(found("tools capability")["level"], "ok", "{report}");
        assert_eq!(found("tool echo")["level"], "ok", "{report}");
        assert_eq!(found("latency")["level"], "ok", "{report}");
        assert_eq!(report["errors"], 0, "{report}");
    }
    // A server that cannot be reached is an error, and the run says so in its exit code.
    let output = talaria(&["--json", "stdio", "--", "sh", "-c", "exit 1", ":::", "doctor"]);
    assert_eq!(code(&output), 3, "{}", stderr(&output));
    let report = &json_lines(&output)[0];
    assert!(report["errors"].as_u64().unwrap() >= 1, "{report}");
    assert!(report["findings"].as_array().unwrap().iter().any(|f| f["check"] == "reachable" && f["level"] == "error"));
}
