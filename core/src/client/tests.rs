//! The client layer against a real server session, in memory.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::time::Instant;

use serde_json::{json, Value};

use super::*;
use crate::jsonrpc::RequestId;
use crate::schema::roots::Root;
use crate::schema::sampling::CreateMessageResult;
use crate::schema::{Implementation, Role};
use crate::session::{CallError, ClientConfig, ClientMode, Event, Output, Route, Server, ServerConfig};

/// Runs a legacy client with `handlers` against a plain server until both are quiet; returns
/// the server's response outcomes.
fn exchange(
    handlers: &Handlers,
    client: &mut Session<Client>,
    server: &mut Session<Server>,
    now: Instant,
) -> Vec<(RequestId, Result<Value, CallError>)> {
    let mut ended = Vec::new();
    loop {
        let mut moved = false;
        while let Some(out) = client.poll_output() {
            match out {
                Output::Transmit { payload, .. } => {
                    server.handle_frame(now, Route::Connection, &payload);
                    moved = true;
                }
                Output::Event(Event::Request(req)) => {
                    handlers.dispatch(client, req).unwrap();
                    moved = true;
                }
                _ => {}
            }
        }
        while let Some(out) = server.poll_output() {
            match out {
                Output::Transmit { payload, .. } => {
                    client.handle_frame(now, Route::Connection, &payload);
                    moved = true;
                }
                Output::Event(Event::Response { id, outcome }) => {
                    ended.push((id, outcome.map(|raw| serde_json::from_str(raw.get()).unwrap())));
                }
                _ => {}
            }
        }
        if !moved {
            return ended;
        }
    }
}

#[test]
fn the_client_answers_roots_and_sampling_and_refuses_what_it_lacks() {
    let now = crate::test_clock::t0();
    let mut handlers = Handlers::default().with_sampling(|params| {
        assert_eq!(params.max_tokens, 50);
        let mut result: CreateMessageResult = serde_json::from_value(json!({
            "role": "assistant", "content": {"type": "text", "text": "Paris"}, "model": "test-model"
        }))
        .unwrap();
        result.role = Role::Assistant;
        Ok(result)
    });
    handlers.add_root(Root::new("file:///project"));
    let config = ClientConfig::new(Implementation::new("c", "1"))
        .with_mode(ClientMode::Legacy)
        .with_capabilities(handlers.capabilities());
    let mut client = Session::<Client>::new(config, now);
    let mut server = Session::<Server>::new(ServerConfig::new(Implementation::new("s", "1")));
    exchange(&handlers, &mut client, &mut server, now);
    assert!(server.phase().is_ready());

    let roots = server.send_request(now, "roots/list", None, RequestOptions::default()).unwrap();
    let params = serde_json::value::to_raw_value(&json!({"messages": [
        {"role": "user", "content": {"type": "text", "text": "Capital of France?"}}], "maxTokens": 50}))
    .unwrap();
    let sample = server.send_request(now, "sampling/createMessage", Some(params), RequestOptions::default()).unwrap();
    let ended = exchange(&handlers, &mut client, &mut server, now);
    let outcome = |id: &RequestId| ended.iter().find(|(i, _)| i == id).unwrap().1.as_ref().unwrap().clone();
    assert_eq!(outcome(&roots), json!({"roots": [{"uri": "file:///project"}]}));
    assert_eq!(outcome(&sample)["content"]["text"], "Paris");

    // No elicitation handler: the capability was not declared, so the server may not ask.
    let refused = server.send_request(now, "elicitation/create", None, RequestOptions::default()).unwrap_err();
    assert!(matches!(refused, SendError::MissingCapability { .. }));

    // Changing the roots tells the server.
    assert!(handlers.remove_root("file:///project"));
    handlers.announce_roots(&mut client).unwrap();
    let mut told = false;
    while let Some(out) = client.poll_output() {
        if let Output::Transmit { payload, .. } = out {
            told |= String::from_utf8_lossy(&payload).contains("notifications/roots/list_changed");
        }
    }
    assert!(told);
}

/// Runs `client` against a plain server session whose requests `answer` answers, until both
/// are quiet.
fn drive(client: &mut Endpoint, server: &mut Session<Server>, now: Instant, answer: &dyn Fn(&str) -> Value) {
    loop {
        let mut moved = false;
        while let Some(out) = client.poll_output() {
            if let Output::Transmit { payload, .. } = out {
                server.handle_frame(now, Route::Connection, &payload);
                moved = true;
            }
        }
        while let Some(out) = server.poll_output() {
            match out {
                Output::Transmit { payload, .. } => {
                    client.handle_frame(now, Route::Connection, &payload);
                    moved = true;
                }
                Output::Event(Event::Request(req)) => {
                    let result = serde_json::value::to_raw_value(&answer(&req.method)).unwrap();
                    server.respond(req.reply, Ok(result)).unwrap();
                    moved = true;
                }
                _ => {}
            }
        }
        if !moved {
            return;
        }
    }
}

#[test]
fn a_result_that_breaks_its_output_schema_fails_with_the_result_kept() {
    let now = crate::test_clock::t0();
    let config = ClientConfig::new(Implementation::new("c", "1")).with_mode(ClientMode::Legacy);
    let mut client = Endpoint::new(config, Handlers::default(), now);
    let mut server = Session::<Server>::new(
        ServerConfig::new(Implementation::new("s", "1"))
            .with_capabilities(serde_json::from_value(json!({"tools": {}})).unwrap()),
    );
    let answer = |method: &str| match method {
        "tools/list" => json!({"tools": [{"name": "sum", "inputSchema": {"type": "object"},
            "outputSchema": {"type": "object", "properties": {"sum": {"type": "integer"}}, "required": ["sum"]}}]}),
        _ => json!({"content": [{"type": "text", "text": "3"}], "structuredContent": {"sum": "three"}}),
    };
    let listed = std::sync::Arc::new(std::sync::Mutex::new(None));
    let seen = std::sync::Arc::clone(&listed);
    client
        .call::<crate::schema::tools::ListTools>(now, &Default::default(), CallOptions::default(), move |r| {
            *seen.lock().unwrap() = Some(r.is_ok());
        })
        .unwrap();
    drive(&mut client, &mut server, now, &answer);
    assert_eq!(*listed.lock().unwrap(), Some(true));
    let outcome = std::sync::Arc::new(std::sync::Mutex::new(None));
    let seen = std::sync::Arc::clone(&outcome);
    let params = serde_json::value::to_raw_value(&json!({"name": "sum", "arguments": {}})).unwrap();
    client
        .request(
            now,
            "tools/call",
            Some(params),
            CallOptions::default(),
            Box::new(move |r| *seen.lock().unwrap() = Some(r)),
        )
        .unwrap();
    drive(&mut client, &mut server, now, &answer);
    let outcome = outcome.lock().unwrap().take().unwrap();
    match outcome {
        Err(CallError::Local(LocalError::OutputMismatch { why, result })) => {
            assert!(why.contains("\"sum\""), "{why}");
            let result: Value = serde_json::from_str(&result).unwrap();
            assert_eq!(result["structuredContent"]["sum"], "three", "the result is kept whole");
        }
        other => panic!("expected an output mismatch, got {other:?}"),
    }
}
