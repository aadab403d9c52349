//! The smol flavour end to end: the smol stdio client against a child server, a server
//! served with the smol driver, and the in-memory pair, all awaited.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;
use talaria::client::{ClientError, ClientOptions};
use talaria::core::schema::tools::CallToolResult;
use talaria::core::session::{CallError, ClientMode, LocalError};
use talaria::core::version::ProtocolVersion;
use talaria::stdio::StdioCommand;

const SERVER: &str = env!("CARGO_BIN_EXE_everything-server");

fn text_of(result: &CallToolResult) -> String {
    result.content.iter().filter_map(|c| c.as_text()).collect::<Vec<_>>().join("")
}

fn legacy() -> ClientOptions {
    ClientOptions::new("smol-e2e", "1").mode(ClientMode::Legacy).versions(vec![ProtocolVersion::V2025_06_18])
}

#[test]
fn the_smol_client_talks_to_a_smol_served_child() {
    smol::block_on(async {
        let command = StdioCommand::new(SERVER).args(["--transport", "stdio", "--runtime", "smol"]);
        let client = talaria::smol::stdio(command, legacy()).await.unwrap();
        assert_eq!(client.server_info().name, "everything-server");
        client.ping().await.unwrap();
        let calls: Vec<_> = (0..64).map(|i| client.call_tool("echo", json!({"text": i.to_string()}))).collect();
        for (i, call) in calls.into_iter().enumerate() {
            assert_eq!(text_of(&call.await.unwrap()), i.to_string());
        }
        let slow = client.call_tool("slow", json!({"steps": 3, "step_ms": 5})).await.unwrap();
        assert_eq!(text_of(&slow), "done after 3 steps");
        let roots = client.list_all_resources().await.unwrap();
        assert_eq!(roots.len(), 2);
    });
}

#[test]
fn a_crash_fails_pending_smol_calls_fast() {
    smol::block_on(async {
        let command = StdioCommand::new(SERVER).args(["--transport", "stdio", "--runtime", "smol"]);
        let client = talaria::smol::stdio(command, legacy()).await.unwrap();
        let slow = client.call_tool("slow", json!({"steps": 100, "step_ms": 100}));
        let start = Instant::now();
        let crash = client.call_tool("crash", json!({})).await;
        let slow = slow.await;
        assert!(start.elapsed() < Duration::from_secs(1), "{:?}", start.elapsed());
        assert!(matches!(crash, Err(ClientError::Call(CallError::Local(LocalError::Closed { .. })))), "{crash:?}");
        assert!(matches!(slow, Err(ClientError::Call(CallError::Local(LocalError::Closed { .. })))), "{slow:?}");
    });
}

#[test]
fn the_smol_server_exits_zero_on_stdin_eof_after_flushing() {
    let mut child = Command::new(SERVER)
        .args(["--transport", "stdio", "--runtime", "smol"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    for frame in [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18",
            "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "slow", "arguments": {"steps": 2, "step_ms": 50}}}),
    ] {
        writeln!(stdin, "{frame}").unwrap();
    }
    drop(stdin);
    let mut out = String::new();
    child.stdout.take().unwrap().read_to_string(&mut out).unwrap();
    assert!(child.wait().unwrap().success());
    assert!(out.contains("done after 2 steps"), "{out}");
}

#[test]
fn the_in_memory_pair_is_awaitable() {
    let server = talaria_examples::everything::server();
    smol::block_on(async {
        let client = talaria::smol::memory(&server, ClientOptions::new("mem", "1")).await.unwrap();
        let echo = client.call_tool("echo", json!({"text": "in memory"})).await.unwrap();
        assert_eq!(text_of(&echo), "in memory");
    });
}
