//! Checking a tool's structured output against its declared output schema.

use crate::alloc_prelude::*;
use crate::schema::tools::{CallToolResult, Tool};
use crate::schema::validate::{describe, validate};

/// Checks `result.structuredContent` against `tool.outputSchema`, as a client should before
/// trusting it. Results marked `isError`, and tools without an output schema, pass.
///
/// # Errors
///
/// A message naming what does not fit, or saying that structured content is missing.
///
/// # Examples
///
/// ```
/// use serde_json::json;
/// use talaria_core::client::check_structured_output;
/// use talaria_core::schema::tools::{CallToolResult, Tool};
///
/// let tool: Tool = serde_json::from_value(json!({"name": "sum", "inputSchema": {"type": "object"},
///     "outputSchema": {"type": "object", "properties": {"sum": {"type": "integer"}}, "required": ["sum"]}})).unwrap();
/// assert!(check_structured_output(&tool, &CallToolResult::structured(json!({"sum": 3}))).is_ok());
/// let err = check_structured_output(&tool, &CallToolResult::structured(json!({"sum": "3"}))).unwrap_err();
/// assert!(err.contains("\"sum\": expected an integer"));
/// ```
pub fn check_structured_output(tool: &Tool, result: &CallToolResult) -> Result<(), String> {
    let Some(schema) = &tool.output_schema else { return Ok(()) };
    if result.is_error == Some(true) {
        return Ok(());
    }
    let Some(content) = &result.structured_content else {
        return Err(format!("tool {} declares an output schema but returned no structured content", tool.name));
    };
    match describe(&validate(schema, content)) {
        Some(problems) => {
            Err(format!("structured content of tool {} does not fit its output schema: {problems}", tool.name))
        }
        None => Ok(()),
    }
}
