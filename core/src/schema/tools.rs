//! Tools: definitions, listing, calling, and list-change notifications.

use serde::{Deserialize, Serialize};

use super::common::{Icon, JsonObject, Meta};
use super::macros::mcp_struct;

/// Whether a tool supports task-augmented execution (2025-11-25).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TaskSupport {
    /// The tool must not be called as a task (the default).
    Forbidden,
    /// The tool may be called as a task or not.
    Optional,
    /// The tool must be called as a task.
    Required,
}

mcp_struct! {
    /// Execution properties of a tool (2025-11-25).
    #[derive(Default)]
    pub struct ToolExecution {
        /// Whether the tool supports being run as a task.
        opt task_support: TaskSupport = "taskSupport",
    }
}

mcp_struct! {
    /// Hints about a tool's behaviour (2025-03-26+). Untrusted unless the server is trusted.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::tools::ToolAnnotations;
    ///
    /// let a = ToolAnnotations { read_only_hint: Some(true), ..Default::default() };
    /// assert_eq!(serde_json::to_string(&a).unwrap(), r#"{"readOnlyHint":true}"#);
    /// ```
    #[derive(Default)]
    pub struct ToolAnnotations {
        /// Human-readable title.
        opt title: String = "title",
        /// The tool does not modify its environment.
        opt read_only_hint: bool = "readOnlyHint",
        /// The tool may perform destructive updates.
        opt destructive_hint: bool = "destructiveHint",
        /// Calling it again with the same arguments has no further effect.
        opt idempotent_hint: bool = "idempotentHint",
        /// The tool interacts with an open world of external entities.
        opt open_world_hint: bool = "openWorldHint",
    }
}

mcp_struct! {
    /// The definition of a tool the client can call.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::tools::Tool;
    /// use serde_json::json;
    ///
    /// let tool: Tool = serde_json::from_value(json!({
    ///     "name": "get_weather",
    ///     "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}}
    /// })).unwrap();
    /// assert_eq!(tool.name, "get_weather");
    /// assert!(tool.output_schema.is_none());
    /// ```
    #[derive(Default)]
    pub struct Tool {
        /// Programmatic name, unique on the server.
        req name: String = "name",
        /// Human-readable name (2025-06-18+).
        opt title: String = "title",
        /// What the tool does, for the model.
        opt description: String = "description",
        /// JSON Schema of the arguments object.
        req input_schema: JsonObject = "inputSchema",
        /// JSON Schema of `structuredContent` in results (2025-06-18+).
        opt output_schema: JsonObject = "outputSchema",
        /// Behaviour hints (2025-03-26+).
        opt annotations: ToolAnnotations = "annotations",
        /// Execution properties (2025-11-25).
        opt execution: ToolExecution = "execution",
        /// Icons (2025-11-25+).
        opt icons: Vec<Icon> = "icons",
        /// Metadata (2025-06-18+).
        opt meta: Meta = "_meta",
    }
}
