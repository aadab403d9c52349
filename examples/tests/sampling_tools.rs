//! Sampling with tools (2025-11-25 and the stateless 2026-07-28), our client and server end to
//! end over the in-process transport: a tool asks the client's model with a tool offered, the
//! model asks for the tool (`tool_use`, `stopReason: "toolUse"`), the server sends the result
//! back (`tool_result`) and the model answers. A client that did not declare `sampling.tools`
//! is never sent tools, and refuses them if it were.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use serde_json::json;
use talaria::client::{ClientError, ClientOptions};
use talaria::core::client::Handlers;
use talaria::core::schema::sampling::{
    CreateMessage, CreateMessageRequestParams, CreateMessageResult, SamplingContent, SamplingMessage, StopReason,
    ToolResultContent, ToolUseContent,
};
use talaria::core::schema::tools::{CallToolResult, Tool};
use talaria::core::schema::{ContentBlock, Role};
use talaria::core::server::{Router, ToolError};
use talaria::core::session::{CallError, ClientMode};
use talaria::core::version::ProtocolVersion;

/// The weather tool the server offers the model.
fn weather_tool() -> Tool {
    let schema = json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]});
    Tool::new("weather", schema.as_object().cloned().unwrap_or_default())
}

/// A server whose `agent` tool runs a sampling loop with the weather tool offered.
fn agent_server() -> talaria::server::Server<()> {
    let router = Router::<()>::builder()
        .blocking_tool(
            Tool::new("agent", json!({"type": "object"}).as_object().cloned().unwrap()),
            |job, _: serde_json::Value| {
                let question = SamplingMessage::new(Role::User, SamplingContent::text("Weather in Paris?"));
                let mut params = CreateMessageRequestParams::new(vec![question.clone()], 100);
                params.tools = Some(vec![weather_tool()]);
                let first = job.ask::<CreateMessage>(&params).map_err(|e| ToolError::execution(e.to_string()))?;
                if first.stop_reason != Some(StopReason::ToolUse) {
                    return Ok(CallToolResult::text("the model answered without the tool"));
                }
                let Some(SamplingContent::ToolUse(call)) = first.content.iter().next().cloned() else {
                    return Err(ToolError::execution("no tool_use block"));
                };
                let city = call.input.get("city").and_then(|c| c.as_str()).unwrap_or("?").to_owned();
                let result = ToolResultContent {
                    tool_use_id: call.id.clone(),
                    content: vec![ContentBlock::text(format!("18°C in {city}"))],
                    ..ToolResultContent::default()
                };
                let mut follow_up = params;
                follow_up.messages = vec![
                    question,
                    SamplingMessage::new(Role::Assistant, SamplingContent::ToolUse(call)),
                    SamplingMessage::new(Role::User, SamplingContent::ToolResult(result)),
                ];
                let last = job.ask::<CreateMessage>(&follow_up).map_err(|e| ToolError::execution(e.to_string()))?;
                let text = last.content.iter().find_map(|c| match c {
                    SamplingContent::Text(t) => Some(t.text.clone()),
                    _ => None,
                });
                Ok(CallToolResult::text(text.unwrap_or_default()))
            },
        )
        .build();
    talaria::server::Server::new("agent", "1", router)
}

/// A model that asks for the weather tool once, then answers with what it returned.
fn model(params: &CreateMessageRequestParams) -> Result<CreateMessageResult, talaria::core::jsonrpc::ErrorObject> {
    assert_eq!(params.tools.as_ref().map(|t| t[0].name.as_str()), Some("weather"));
    let tool_result = params.messages.iter().flat_map(|m| m.content.iter()).find_map(|c| match c {
        SamplingContent::ToolResult(r) => r.content[0].as_text().map(str::to_owned),
        _ => None,
    });
    let mut answer = match tool_result {
        Some(found) => {
            let mut answer = CreateMessageResult::new("test-model", SamplingContent::text(format!("It is {found}.")));
            answer.stop_reason = Some(StopReason::EndTurn);
            answer
        }
        None => {
            let call = ToolUseContent {
                id: "call_1".into(),
                name: "weather".into(),
                input: json!({"city": "Paris"}).as_object().cloned().unwrap(),
                ..ToolUseContent::default()
            };
            let mut answer = CreateMessageResult::new("test-model", SamplingContent::ToolUse(call));
            answer.stop_reason = Some(StopReason::ToolUse);
            answer
        }
    };
    answer.meta = None;
    Ok(answer)
}

fn options(mode: ClientMode, handlers: Handlers) -> ClientOptions {
    let options = ClientOptions::new("sampler", "1").mode(mode).handlers(handlers);
    match mode {
        ClientMode::Legacy => options.versions(vec![ProtocolVersion::V2025_11_25]),
        _ => options,
    }
}

#[test]
fn a_tool_loop_through_the_clients_model_in_both_eras() {
    for mode in [ClientMode::Legacy, ClientMode::Stateless] {
        let client =
            talaria::memory::connect(&agent_server(), options(mode, Handlers::default().with_sampling_tools(model)))
                .unwrap();
        let result = client.call_tool("agent", json!({})).unwrap();
        assert_eq!(result.content[0].as_text(), Some("It is 18°C in Paris."), "{mode:?}");
    }
}

#[test]
fn a_client_without_sampling_tools_is_not_sent_tools() {
    let plain = || Handlers::default().with_sampling(|_| panic!("a tool-enabled request reached the handler"));
    // 2025-11-25: the server may not send it; the tool sees the ask fail.
    let client = talaria::memory::connect(&agent_server(), options(ClientMode::Legacy, plain())).unwrap();
    let result = client.call_tool("agent", json!({})).unwrap();
    assert!(result.is_error(), "{result:?}");
    assert!(result.content[0].as_text().unwrap().contains("capability"), "{result:?}");
    // 2026-07-28: the call is refused with -32021 naming sampling.tools.
    let client = talaria::memory::connect(&agent_server(), options(ClientMode::Stateless, plain())).unwrap();
    match client.call_tool("agent", json!({})) {
        Err(ClientError::Call(CallError::Remote(e))) => {
            assert_eq!(
                (e.code.0, e.data),
                (-32021, Some(json!({"requiredCapabilities": {"sampling": {"tools": {}}}})))
            );
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_client_refuses_tools_it_did_not_declare() {
    let handlers = Handlers::default().with_sampling(|_| panic!("refused before the handler"));
    let mut params = CreateMessageRequestParams::new(vec![], 10);
    params.tools = Some(vec![weather_tool()]);
    let request = talaria::core::schema::mrtr::InputRequest::CreateMessage(
        serde_json::from_value(json!({
            "method": "sampling/createMessage", "params": params
        }))
        .unwrap(),
    );
    let refused = handlers.answer_input(&request).unwrap_err();
    assert_eq!(refused.code.0, -32602, "{refused:?}");
}
