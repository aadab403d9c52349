//! Tool registrations: typed handlers behind one erased signature.

use crate::alloc_prelude::*;
use crate::http::param_headers::{annotations, ParamHeader};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

use super::context::Context;
use super::error::ToolError;
use crate::jsonrpc::ErrorObject;
use crate::schema::tools::{CallToolResult, Tool};
use crate::schema::JsonObject;

/// A handler with its arguments still as a JSON object.
pub(super) type ToolFn<S> =
    Box<dyn Fn(&mut Context<'_, S>, JsonObject) -> Result<CallToolResult, ToolError> + Send + Sync>;

/// One registered tool.
pub(super) struct ToolEntry<S> {
    pub(super) tool: Tool,
    pub(super) call: ToolFn<S>,
    /// The arguments its input schema mirrors into `Mcp-Param-*` headers (2026-07-28 over
    /// HTTP); none when its annotations are invalid (clients leave such a tool out).
    pub(super) mirrored: Vec<ParamHeader>,
}

/// Wraps a handler taking typed arguments: arguments that do not fit `A` become an execution
/// error naming the tool and what did not fit.
pub(super) fn typed<S, A, F>(name: String, handler: F) -> ToolFn<S>
where
    A: DeserializeOwned,
    F: Fn(&mut Context<'_, S>, A) -> Result<CallToolResult, ToolError> + Send + Sync + 'static,
{
    Box::new(move |ctx, args| {
        let args: A = serde_json::from_value(Value::Object(args))
            .map_err(|e| ToolError::Execution(format!("Invalid arguments for tool {name}: {e}")))?;
        handler(ctx, args)
    })
}

/// Wraps a handler returning a typed output: the output becomes `structuredContent`, with its
/// JSON as a text block for clients of earlier revisions.
pub(super) fn structured<S, A, O, F>(name: String, handler: F) -> ToolFn<S>
where
    A: DeserializeOwned,
    O: Serialize,
    F: Fn(&mut Context<'_, S>, A) -> Result<O, ToolError> + Send + Sync + 'static,
{
    typed(name, move |ctx, args: A| {
        let out = handler(ctx, args)?;
        let value =
            serde_json::to_value(&out).map_err(|e| ToolError::Protocol(ErrorObject::internal(e.to_string())))?;
        Ok(CallToolResult::structured(value))
    })
}

/// Every revision requires a tool's `inputSchema` to be an object schema: a schema that says
/// no `type` gets `"type": "object"`.
pub(super) fn normalized(mut tool: Tool) -> Tool {
    if !tool.input_schema.contains_key("type") {
        tool.input_schema.insert("type".into(), Value::String("object".into()));
    }
    tool
}

/// Adds `tool` (normalized) with the handler `make` builds for its name, replacing a tool of
/// the same name.
pub(super) fn register<S>(tools: &mut Vec<ToolEntry<S>>, tool: Tool, make: impl FnOnce(String) -> ToolFn<S>) {
    let tool = normalized(tool);
    let call = make(tool.name.clone());
    let mirrored = annotations(&tool.input_schema).unwrap_or_default();
    upsert(tools, ToolEntry { tool, call, mirrored }, |a, b| a.tool.name == b.tool.name);
}

/// Puts `item` last, removing any entry `same` says it replaces.
pub(super) fn upsert<T>(items: &mut Vec<T>, item: T, same: impl Fn(&T, &T) -> bool) {
    items.retain(|existing| !same(existing, &item));
    items.push(item);
}
