//! Tool registrations: typed handlers behind one erased signature.

use crate::alloc_prelude::*;
use crate::http::param_headers::{annotations, ParamHeader};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

use super::context::Context;
use crate::jsonrpc::ErrorObject;
use crate::schema::mrtr::InputRequiredResult;
use crate::schema::tools::{CallToolResult, Tool};
use crate::schema::JsonObject;

/// How a tool call can fail.
///
/// An [`ToolError::Execution`] failure is the tool's own (bad input, a failed API call): it is
/// reported to the model as a result with `isError: true`, so the model can correct itself. A
/// [`ToolError::Protocol`] failure is the request's: it is answered with a JSON-RPC error.
///
/// # Examples
///
/// ```
/// use talaria_core::server::ToolError;
///
/// let e = ToolError::execution("city not found");
/// assert_eq!(e.to_string(), "city not found");
/// ```
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ToolError {
    /// The tool ran and failed; the model sees the message.
    #[error("{0}")]
    Execution(String),
    /// The request is wrong; the client gets this JSON-RPC error.
    #[error(transparent)]
    Protocol(ErrorObject),
    /// Not a failure: the tool needs the client's input first (2026-07-28), and the call is
    /// answered with this `input_required` result. `Job::ask` produces it for long-running
    /// tools; outside 2026-07-28 it is answered as an internal error.
    #[error("input required from the client")]
    InputRequired(Box<InputRequiredResult>),
}

/// How a prompt's handler can fail: the same type as [`ToolError`], named for prompts. Both
/// kinds of failure are answered with a JSON-RPC error (an [`ToolError::Execution`] message
/// as an internal error, `-32603`): a prompt has no `isError` result.
///
/// # Examples
///
/// ```
/// use talaria_core::jsonrpc::ErrorObject;
/// use talaria_core::server::PromptError;
///
/// let e = PromptError::Protocol(ErrorObject::invalid_params("unknown language: klingon"));
/// assert_eq!(e.to_string(), "unknown language: klingon (code -32602)");
/// ```
pub type PromptError = ToolError;

/// How a resource read can fail: the same type as [`ToolError`], named for resources,
/// answered as a prompt's failure is (see [`PromptError`]).
///
/// # Examples
///
/// ```
/// use talaria_core::server::ResourceError;
///
/// let e = ResourceError::execution("the disk is gone");
/// assert_eq!(e.to_string(), "the disk is gone");
/// ```
pub type ResourceError = ToolError;

impl ToolError {
    /// An execution failure with `message`.
    #[must_use]
    pub fn execution(message: impl Into<String>) -> Self {
        Self::Execution(message.into())
    }
}

impl From<ErrorObject> for ToolError {
    fn from(e: ErrorObject) -> Self {
        Self::Protocol(e)
    }
}

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
