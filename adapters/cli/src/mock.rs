//! `talaria mock FILE`: a server built from a recording (`--record FILE`), to test a client
//! against a server that is not at hand. It offers the tools, prompts, resources and
//! templates the recording listed, with the server's name, version and instructions, and
//! answers each call or read as recorded: the recorded answer to the same arguments, else the
//! first recorded for that name, else an error saying the recording has none. It speaks every
//! revision and transport `serve-demo` does, whatever the recording was made with.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::Value;
use talaria_core::jsonrpc::ErrorObject;
use talaria_core::schema::prompts::{GetPromptResult, Prompt};
use talaria_core::schema::resources::{ReadResourceResult, Resource, ResourceTemplate};
use talaria_core::schema::tools::{CallToolResult, Tool};
use talaria_core::schema::ResourceContents;
use talaria_core::server::{Router, ToolError};

use super::recording::{without_meta, Exchange, Recording};
use talaria::server::Server;

/// The server a recording shows.
///
/// # Errors
///
/// Why the recording cannot be served (it lists nothing, a template is malformed).
pub(crate) fn server(recording: &Recording) -> Result<Server<()>, String> {
    let answers = Arc::new(recording.exchanges.clone());
    let mut builder = Router::<()>::builder();
    for tool in listed::<Tool>(recording, "tools/list", "tools") {
        let (answers, name) = (Arc::clone(&answers), tool.name.clone());
        builder = builder.tool(tool, move |_ctx, arguments: Value| {
            let result = recorded(&answers, "tools/call", "name", &name, "arguments", &arguments)?;
            decode::<CallToolResult>(&result)
        });
    }
    for prompt in listed::<Prompt>(recording, "prompts/list", "prompts") {
        let (answers, name) = (Arc::clone(&answers), prompt.name.clone());
        builder = builder.prompt(prompt, move |_ctx, arguments: BTreeMap<String, String>| {
            let arguments = serde_json::to_value(arguments).unwrap_or_default();
            decode::<GetPromptResult>(&recorded(&answers, "prompts/get", "name", &name, "arguments", &arguments)?)
        });
    }
    for resource in listed::<Resource>(recording, "resources/list", "resources") {
        let answers = Arc::clone(&answers);
        builder = builder.resource(resource, move |_ctx, uri, _| read(&answers, uri));
    }
    for template in listed::<ResourceTemplate>(recording, "resources/templates/list", "resourceTemplates") {
        let answers = Arc::clone(&answers);
        builder =
            builder.resource_template(template, move |_ctx, uri, _| read(&answers, uri)).map_err(|e| e.to_string())?;
    }
    let info = server_info(recording);
    let name = info.get("name").and_then(Value::as_str).unwrap_or("talaria-mock").to_owned();
    let version = info.get("version").and_then(Value::as_str).unwrap_or("0").to_owned();
    let server = Server::new(name, version, builder.build());
    Ok(match instructions(recording) {
        Some(text) => server.instructions(text),
        None => server,
    })
}

/// Everything the recording's `method` answers listed under `key`, each once (by its JSON).
fn listed<T: serde::de::DeserializeOwned>(recording: &Recording, method: &str, key: &str) -> Vec<T> {
    let mut seen = Vec::new();
    let mut items = Vec::new();
    for exchange in recording.exchanges.iter().filter(|e| e.method == method) {
        let Some(Ok(result)) = &exchange.answer else { continue };
        for item in result.get(key).and_then(Value::as_array).into_iter().flatten() {
            let identity = item.get("name").or_else(|| item.get("uri")).or_else(|| item.get("uriTemplate")).cloned();
            if seen.contains(&identity) {
                continue;
            }
            if let Ok(typed) = serde_json::from_value(item.clone()) {
                seen.push(identity);
                items.push(typed);
            }
        }
    }
    items
}

/// The recorded answer to `method` whose params' `key` is `name`: the one with the same
/// `args_key` (`_meta` aside), else the first.
fn recorded(
    answers: &[Exchange],
    method: &str,
    key: &str,
    name: &str,
    args_key: &str,
    args: &Value,
) -> Result<Value, ToolError> {
    let candidates: Vec<&Exchange> = answers
        .iter()
        .filter(|e| e.method == method && e.answer.is_some())
        .filter(|e| e.params.as_ref().and_then(|p| p.get(key)).and_then(Value::as_str) == Some(name))
        .collect();
    // No arguments and empty arguments are the same.
    let args_of =
        |e: &Exchange| e.params.as_ref().and_then(|p| p.get(args_key)).map(without_meta).filter(|v| !is_empty(v));
    let wanted = Some(without_meta(args)).filter(|v| !is_empty(v));
    let chosen = candidates.iter().find(|e| args_of(e) == wanted).or_else(|| candidates.first());
    match chosen.and_then(|e| e.answer.clone()) {
        Some(Ok(result)) => Ok(result),
        Some(Err(error)) => Err(ToolError::Protocol(
            serde_json::from_value(error).unwrap_or_else(|_| ErrorObject::internal("a recorded error")),
        )),
        None => {
            Err(ToolError::Protocol(ErrorObject::invalid_params(format!("the recording has no {method} of {name}"))))
        }
    }
}

fn is_empty(value: &Value) -> bool {
    value.is_null() || value.as_object().is_some_and(serde_json::Map::is_empty)
}

/// The recorded read of `uri`.
fn read(answers: &[Exchange], uri: &str) -> Result<Vec<ResourceContents>, ToolError> {
    let result = recorded(answers, "resources/read", "uri", uri, "uri", &Value::String(uri.to_owned()))?;
    Ok(decode::<ReadResourceResult>(&result)?.contents)
}

fn decode<T: serde::de::DeserializeOwned>(value: &Value) -> Result<T, ToolError> {
    serde_json::from_value(without_meta(value))
        .map_err(|e| ToolError::Protocol(ErrorObject::internal(format!("the recorded answer does not decode: {e}"))))
}

/// The recorded server's `serverInfo`: from `initialize` or `server/discover`, else from the
/// `_meta` a 2026-07-28 server puts on every result.
fn server_info(recording: &Recording) -> Value {
    let from_meta = || {
        recording.exchanges.iter().find_map(|e| match &e.answer {
            Some(Ok(result)) => result.get("_meta")?.get("io.modelcontextprotocol/serverInfo").cloned(),
            _ => None,
        })
    };
    handshake(recording).and_then(|r| r.get("serverInfo").cloned()).or_else(from_meta).unwrap_or_default()
}

fn instructions(recording: &Recording) -> Option<String> {
    handshake(recording).and_then(|r| r.get("instructions")).and_then(Value::as_str).map(str::to_owned)
}

/// The last answered `initialize` or `server/discover`.
fn handshake(recording: &Recording) -> Option<&Value> {
    recording.exchanges.iter().rev().filter(|e| e.method == "initialize" || e.method == "server/discover").find_map(
        |e| match &e.answer {
            Some(Ok(result)) => Some(result),
            _ => None,
        },
    )
}
