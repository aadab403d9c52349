//! Tools: definitions, listing, calling, and list-change notifications.

use crate::alloc_prelude::*;
use serde::{Deserialize, Serialize};

use super::common::{Icon, JsonObject, Meta, NotificationParams, PaginatedRequestParams, ResultType};
use super::content::{AudioContent, ContentBlock, EmbeddedResource, ImageContent, ResourceContents, ResourceLink};
use super::lazy::LazyObject;
use super::macros::{cacheable_list, mcp_struct};
use super::methods::{notification_method, request_method};
use super::mrtr::InputResponses;
use super::tasks::TaskMetadata;
use super::{adapt_result_type, ForRevision};
use crate::version::{Feature, ProtocolVersion};

#[cfg(feature = "schemars")]
mod derive;

/// Whether a tool supports task-augmented execution (2025-11-25).
///
/// # Examples
///
/// ```
/// use talaria_core::schema::tools::TaskSupport;
///
/// let t: TaskSupport = serde_json::from_str(r#""optional""#).unwrap();
/// assert_eq!(t, TaskSupport::Optional);
/// ```
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
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::tools::{TaskSupport, ToolExecution};
    ///
    /// let e: ToolExecution = serde_json::from_str(r#"{"taskSupport":"required"}"#).unwrap();
    /// assert_eq!(e.task_support, Some(TaskSupport::Required));
    /// ```
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
        req input_schema: LazyObject = "inputSchema",
        /// JSON Schema of `structuredContent` in results (2025-06-18+).
        opt output_schema: LazyObject = "outputSchema",
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

impl Tool {
    /// With `execution.taskSupport` set (2025-11-25): whether the tool may, must or must not
    /// be called as a task.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::tools::{TaskSupport, Tool};
    ///
    /// let tool = Tool::new("research", Default::default()).with_task_support(TaskSupport::Required);
    /// assert_eq!(tool.task_support(), TaskSupport::Required);
    /// assert_eq!(Tool::new("echo", Default::default()).task_support(), TaskSupport::Forbidden);
    /// ```
    #[must_use]
    pub fn with_task_support(mut self, support: TaskSupport) -> Self {
        self.execution.get_or_insert_with(ToolExecution::default).task_support = Some(support);
        self
    }

    /// Whether the tool may be called as a task (`forbidden` when it does not say).
    #[must_use]
    pub fn task_support(&self) -> TaskSupport {
        self.execution.as_ref().and_then(|e| e.task_support).unwrap_or(TaskSupport::Forbidden)
    }

    /// A tool named `name` whose arguments follow `input_schema` (a JSON Schema object whose
    /// `type` is `"object"`).
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::tools::Tool;
    /// use serde_json::json;
    ///
    /// let schema = json!({"type": "object"}).as_object().cloned().unwrap();
    /// let tool = Tool::new("now", schema).with_description("The current time");
    /// assert_eq!(
    ///     serde_json::to_value(&tool).unwrap(),
    ///     json!({"name": "now", "description": "The current time", "inputSchema": {"type": "object"}})
    /// );
    /// ```
    #[must_use]
    pub fn new(name: impl Into<String>, input_schema: JsonObject) -> Self {
        Self { name: name.into(), input_schema: input_schema.into(), ..Self::default() }
    }

    /// Sets the description.
    #[must_use]
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Sets the human-readable title (2025-06-18+).
    #[must_use]
    pub fn with_title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// Sets the JSON Schema of `structuredContent` (2025-06-18+).
    #[must_use]
    pub fn with_output_schema(mut self, output_schema: JsonObject) -> Self {
        self.output_schema = Some(output_schema.into());
        self
    }
}

cacheable_list! {
    /// The result of `tools/list`: one page of the server's tools.
    ///
    /// Cacheable from 2026-07-28 on: see [`ForRevision`] for the members it gains there.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::tools::{ListToolsResult, Tool};
    /// use talaria_core::schema::ForRevision;
    /// use talaria_core::version::ProtocolVersion;
    /// use serde_json::json;
    ///
    /// let mut r = ListToolsResult::new(vec![Tool::new("now", Default::default())]);
    /// r.adapt_to(ProtocolVersion::V2026_07_28);
    /// assert_eq!(
    ///     serde_json::to_value(&r).unwrap(),
    ///     json!({
    ///         "tools": [{"name": "now", "inputSchema": {}}],
    ///         "resultType": "complete", "ttlMs": 0, "cacheScope": "private"
    ///     })
    /// );
    /// ```
    pub struct ListToolsResult {
        /// The tools on this page.
        items tools: Tool = "tools"
    }
}

mcp_struct! {
    /// Parameters of `tools/call`.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::tools::CallToolRequestParams;
    /// use serde_json::json;
    ///
    /// let p: CallToolRequestParams =
    ///     serde_json::from_value(json!({"name": "get_weather", "arguments": {"city": "Oslo"}})).unwrap();
    /// assert_eq!(p.name, "get_weather");
    /// assert_eq!(p.arguments.unwrap()["city"], "Oslo");
    /// ```
    pub struct CallToolRequestParams {
        /// The name of the tool to call.
        req name: String = "name",
        /// The arguments, which should match the tool's `inputSchema`.
        opt arguments: JsonObject = "arguments",
        /// Request metadata (required from 2026-07-28 on, where it carries the protocol
        /// version and client capabilities).
        opt meta: Meta = "_meta",
        /// Asks for the call to run as a task (2025-11-25).
        opt task: TaskMetadata = "task",
        /// The client's answers to the input requests of an earlier `input_required` result
        /// (2026-07-28).
        opt input_responses: InputResponses = "inputResponses",
        /// The opaque state of an earlier `input_required` result, echoed back (2026-07-28).
        opt request_state: String = "requestState",
    }
}

impl CallToolRequestParams {
    /// A call of tool `name` without arguments.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::tools::CallToolRequestParams;
    /// use serde_json::json;
    ///
    /// let args = json!({"city": "Oslo"}).as_object().cloned().unwrap();
    /// let p = CallToolRequestParams::new("get_weather").with_arguments(args);
    /// assert_eq!(
    ///     serde_json::to_value(&p).unwrap(),
    ///     json!({"name": "get_weather", "arguments": {"city": "Oslo"}})
    /// );
    /// ```
    #[must_use]
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            arguments: None,
            meta: None,
            task: None,
            input_responses: None,
            request_state: None,
            extra: JsonObject::new(),
        }
    }

    /// Sets the arguments.
    #[must_use]
    pub fn with_arguments(mut self, arguments: JsonObject) -> Self {
        self.arguments = Some(arguments);
        self
    }
}

mcp_struct! {
    /// The result of `tools/call`.
    ///
    /// Errors raised by the tool itself travel here with `isError: true`, so the model can see
    /// them; only protocol problems (unknown tool, bad arguments shape) are JSON-RPC errors.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::tools::CallToolResult;
    /// use talaria_core::schema::ForRevision;
    /// use talaria_core::version::ProtocolVersion;
    /// use serde_json::json;
    ///
    /// let mut r = CallToolResult::structured(json!({"temperature": 22.5}));
    /// r.adapt_to(ProtocolVersion::V2025_03_26);
    /// // Before 2025-06-18 only the text block, which carries the same JSON, remains.
    /// assert_eq!(
    ///     serde_json::to_value(&r).unwrap(),
    ///     json!({"content": [{"type": "text", "text": r#"{"temperature":22.5}"#}]})
    /// );
    /// ```
    #[derive(Default)]
    pub struct CallToolResult {
        /// The unstructured result: text, images, audio, resource links, embedded resources.
        req content: Vec<ContentBlock> = "content",
        /// The structured result, matching the tool's `outputSchema` if it has one
        /// (2025-06-18+; an object through 2025-11-25, any JSON value from 2026-07-28 on).
        ///
        /// A JSON `null` reads as absent.
        opt structured_content: serde_json::Value = "structuredContent",
        /// Whether the call ended in an error; absent means `false`.
        opt is_error: bool = "isError",
        /// Result metadata.
        opt meta: Meta = "_meta",
        /// The kind of result (2026-07-28, where it is required).
        opt result_type: ResultType = "resultType",
    }
}

impl CallToolResult {
    /// A successful result made of `content`.
    #[must_use]
    pub fn new(content: Vec<ContentBlock>) -> Self {
        Self { content, ..Self::default() }
    }

    /// A successful result holding one text block.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::tools::CallToolResult;
    ///
    /// let r = CallToolResult::text("72°F");
    /// assert_eq!(r.content[0].as_text(), Some("72°F"));
    /// assert_eq!(r.is_error, None);
    /// ```
    #[must_use]
    pub fn text(text: impl Into<String>) -> Self {
        Self::new(vec![ContentBlock::text(text)])
    }

    /// A successful result holding one image (base64 `data` of type `mime_type`).
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::tools::CallToolResult;
    /// use talaria_core::schema::ContentBlock;
    ///
    /// let r = CallToolResult::image("iVBORw0KGgo=", "image/png");
    /// assert!(matches!(&r.content[0], ContentBlock::Image(i) if i.mime_type == "image/png"));
    /// ```
    #[must_use]
    pub fn image(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        Self::new(vec![ContentBlock::Image(ImageContent::new(data, mime_type))])
    }

    /// A successful result holding one audio clip (base64 `data` of type `mime_type`;
    /// clients before 2025-03-26 get a text block saying so instead).
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::tools::CallToolResult;
    /// use talaria_core::schema::ContentBlock;
    ///
    /// let r = CallToolResult::audio("UklGRg==", "audio/wav");
    /// assert!(matches!(&r.content[0], ContentBlock::Audio(a) if a.mime_type == "audio/wav"));
    /// ```
    #[must_use]
    pub fn audio(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        Self::new(vec![ContentBlock::Audio(AudioContent::new(data, mime_type))])
    }

    /// A successful result holding a link to the resource `uri`, named `name` (clients
    /// before 2025-06-18 get a text block with the name and URI instead).
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::tools::CallToolResult;
    /// use talaria_core::schema::ContentBlock;
    ///
    /// let r = CallToolResult::resource_link("file:///report.pdf", "report");
    /// assert!(matches!(&r.content[0], ContentBlock::ResourceLink(l) if l.uri == "file:///report.pdf"));
    /// ```
    #[must_use]
    pub fn resource_link(uri: impl Into<String>, name: impl Into<String>) -> Self {
        Self::new(vec![ResourceLink::new(uri, name).into()])
    }

    /// A successful result embedding a resource's `contents`.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::tools::CallToolResult;
    /// use talaria_core::schema::{ContentBlock, TextResourceContents};
    ///
    /// let r = CallToolResult::resource(TextResourceContents::new("file:///a.txt", "hello").into());
    /// assert!(matches!(&r.content[0], ContentBlock::Resource(_)));
    /// ```
    #[must_use]
    pub fn resource(contents: ResourceContents) -> Self {
        Self::new(vec![EmbeddedResource::new(contents).into()])
    }

    /// A tool error, described by one text block, with `isError: true`.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::tools::CallToolResult;
    ///
    /// let r = CallToolResult::error("departure date is in the past");
    /// assert_eq!(r.is_error, Some(true));
    /// ```
    #[must_use]
    pub fn error(text: impl Into<String>) -> Self {
        Self { is_error: Some(true), ..Self::text(text) }
    }

    /// A successful structured result; a text block carrying the same JSON is added for
    /// clients that do not read `structuredContent`.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::tools::CallToolResult;
    /// use serde_json::json;
    ///
    /// let r = CallToolResult::structured(json!([1, 2]));
    /// assert_eq!(r.content[0].as_text(), Some("[1,2]"));
    /// assert_eq!(r.structured_content, Some(json!([1, 2])));
    /// ```
    #[must_use]
    pub fn structured(value: serde_json::Value) -> Self {
        let text = value.to_string();
        Self { structured_content: Some(value), ..Self::text(text) }
    }

    /// Whether the call ended in an error (`isError` absent counts as `false`).
    #[must_use]
    pub fn is_error(&self) -> bool {
        self.is_error.unwrap_or(false)
    }
}

impl ForRevision for CallToolResult {
    /// Sets `resultType` for 2026-07-28, turns content blocks the revision lacks into text
    /// ([`ContentBlock::for_revision`]), and removes `structuredContent` where the revision
    /// cannot carry it: before 2025-06-18, and, through 2025-11-25, when it is not an object.
    /// When it is removed and `content` is empty, a text block with its JSON takes its place.
    fn adapt_to(&mut self, version: ProtocolVersion) {
        adapt_result_type(&mut self.result_type, version);
        ContentBlock::adapt_all(&mut self.content, version);
        let fits = |value: &serde_json::Value| {
            version.supports(Feature::StructuredOutput)
                && (value.is_object() || structured_content_may_be_any_value(version))
        };
        if let Some(value) = self.structured_content.take_if(|v| !fits(v)) {
            if self.content.is_empty() {
                self.content.push(ContentBlock::text(value.to_string()));
            }
        }
    }
}

/// Whether `structuredContent` may be any JSON value (2026-07-28) rather than an object.
fn structured_content_may_be_any_value(version: ProtocolVersion) -> bool {
    version.supports(Feature::StructuredContentAnyValue)
}

request_method! {
    /// `tools/list`: lists the server's tools, a page at a time.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::{tools::ListTools, RequestMethod};
    ///
    /// assert_eq!(ListTools::INFO.name, "tools/list");
    /// ```
    ListTools, "tools/list", PaginatedRequestParams => ListToolsResult
}

request_method! {
    /// `tools/call`: runs a tool.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::{tools::CallTool, Capability, RequestMethod};
    ///
    /// assert_eq!(CallTool::INFO.capability, Some(Capability::Tools));
    /// ```
    CallTool, "tools/call", CallToolRequestParams => CallToolResult
}

notification_method! {
    /// `notifications/tools/list_changed`: the server's list of tools changed.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::{tools::ToolListChanged, NotificationMethod};
    ///
    /// assert_eq!(ToolListChanged::INFO.name, "notifications/tools/list_changed");
    /// ```
    ToolListChanged, "notifications/tools/list_changed", NotificationParams
}

/// A tool as a revision knows it: members newer than the revision are dropped.
///
/// # Examples
///
/// ```
/// use talaria_core::schema::tools::Tool;
/// use talaria_core::schema::ForRevision;
/// use talaria_core::version::ProtocolVersion;
///
/// let mut tool = Tool::new("t", Default::default()).with_title("T").with_output_schema(Default::default());
/// tool.adapt_to(ProtocolVersion::V2025_03_26);
/// assert_eq!((tool.title, tool.output_schema), (None, None));
/// ```
impl ForRevision for Tool {
    fn adapt_to(&mut self, version: ProtocolVersion) {
        super::common::adapt_named(&mut self.title, &mut self.icons, version);
        if !version.supports(Feature::StructuredOutput) {
            self.output_schema = None;
        }
        if !version.supports(Feature::ToolAnnotations) {
            self.annotations = None;
        }
        if !version.supports(Feature::Tasks) {
            self.execution = None;
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use serde_json::{json, Value};

    use super::*;
    use crate::schema::test_support::{
        notification_round_trips, request_round_trips, response_round_trips, round_trips_as_written, EXAMPLES,
    };

    #[test]
    fn official_examples_round_trip() {
        round_trips_as_written::<Tool>("Tool");
        round_trips_as_written::<ListToolsResult>("ListToolsResult");
        round_trips_as_written::<CallToolRequestParams>("CallToolRequestParams");
        round_trips_as_written::<CallToolResult>("CallToolResult");
        request_round_trips::<ListTools>("ListToolsRequest");
        response_round_trips::<ListTools>("ListToolsResultResponse");
        request_round_trips::<CallTool>("CallToolRequest");
        response_round_trips::<CallTool>("CallToolResultResponse");
        notification_round_trips::<ToolListChanged>("ToolListChangedNotification");
    }

    #[test]
    fn examples_decode_to_the_expected_fields() {
        let text =
            std::fs::read_to_string(format!("{EXAMPLES}CallToolResult/result-with-array-structured-content.json"))
                .unwrap();
        let r: CallToolResult = serde_json::from_str(&text).unwrap();
        assert_eq!(r.result_type, Some(ResultType::Complete));
        assert!(r.structured_content.as_ref().is_some_and(Value::is_array));
        assert!(r.extra.is_empty());
    }

    #[test]
    fn a_2024_11_05_tool_decodes() {
        let tool: Tool = serde_json::from_value(json!({
            "name": "add",
            "description": "Adds",
            "inputSchema": {"type": "object", "properties": {"a": {"type": "number"}}, "required": ["a"]}
        }))
        .unwrap();
        assert_eq!((tool.title, tool.annotations, tool.meta), (None, None, None));
        assert_eq!(tool.input_schema["required"], json!(["a"]));
    }

    #[test]
    fn unknown_members_round_trip() {
        let v = json!({
            "tools": [{"name": "a", "inputSchema": {"type": "object"}, "x-future": [1]}],
            "nextCursor": "c",
            "streaming": true
        });
        let r: ListToolsResult = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(r.extra["streaming"], json!(true));
        assert_eq!(r.tools[0].extra["x-future"], json!([1]));
        assert_eq!(serde_json::to_value(&r).unwrap(), v);

        let v = json!({"name": "a", "arguments": {}, "task": {"ttl": 5, "later": 1}, "other": "x"});
        let p: CallToolRequestParams = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(p.task.as_ref().and_then(|t| t.ttl), Some(5));
        assert_eq!(serde_json::to_value(&p).unwrap(), v);
    }

    #[test]
    fn missing_required_members_fail() {
        assert!(serde_json::from_value::<Tool>(json!({"name": "a"})).is_err());
        assert!(serde_json::from_value::<Tool>(json!({"inputSchema": {}})).is_err());
        assert!(serde_json::from_value::<ListToolsResult>(json!({"nextCursor": "c"})).is_err());
        assert!(serde_json::from_value::<CallToolRequestParams>(json!({"arguments": {}})).is_err());
        assert!(serde_json::from_value::<CallToolResult>(json!({"isError": true})).is_err());
    }

    #[test]
    fn list_result_adapts_to_legacy_and_stateless_revisions() {
        let mut r = ListToolsResult {
            ttl_ms: Some(60_000),
            cache_scope: Some(crate::schema::CacheScope::Public),
            ..Default::default()
        };
        r.adapt_to(ProtocolVersion::V2026_07_28);
        assert_eq!(
            serde_json::to_value(&r).unwrap(),
            json!({"tools": [], "resultType": "complete", "ttlMs": 60_000, "cacheScope": "public"})
        );
        r.adapt_to(ProtocolVersion::V2025_11_25);
        assert_eq!(serde_json::to_value(&r).unwrap(), json!({"tools": []}));
    }

    #[test]
    fn call_result_keeps_structured_content_where_the_revision_allows_it() {
        let mut r = CallToolResult::structured(json!({"a": 1}));
        r.adapt_to(ProtocolVersion::V2025_06_18);
        assert_eq!(r.structured_content, Some(json!({"a": 1})));
        assert_eq!(r.result_type, None);

        let mut r = CallToolResult::structured(json!([1]));
        r.adapt_to(ProtocolVersion::V2026_07_28);
        assert_eq!(
            serde_json::to_value(&r).unwrap(),
            json!({"content": [{"type": "text", "text": "[1]"}], "structuredContent": [1], "resultType": "complete"})
        );
    }

    #[test]
    fn call_result_drops_structured_content_for_older_revisions_without_losing_it() {
        // Only structured content: the text block is added when dropping it.
        let mut r = CallToolResult { structured_content: Some(json!({"a": 1})), ..Default::default() };
        r.adapt_to(ProtocolVersion::V2024_11_05);
        assert_eq!(serde_json::to_value(&r).unwrap(), json!({"content": [{"type": "text", "text": r#"{"a":1}"#}]}));

        // An array is not allowed before 2026-07-28.
        let mut r = CallToolResult { structured_content: Some(json!([1, 2])), ..Default::default() };
        r.adapt_to(ProtocolVersion::V2025_11_25);
        assert_eq!(r.structured_content, None);
        assert_eq!(r.content, vec![ContentBlock::text("[1,2]")]);

        // Existing content is left alone.
        let mut r = CallToolResult { structured_content: Some(json!({"a": 1})), ..CallToolResult::text("one") };
        r.adapt_to(ProtocolVersion::V2025_03_26);
        assert_eq!(r.content, vec![ContentBlock::text("one")]);
        assert_eq!(r.structured_content, None);
    }

    #[test]
    fn constructors() {
        assert!(CallToolResult::error("bad").is_error());
        assert!(!CallToolResult::text("ok").is_error());
        assert_eq!(
            serde_json::to_value(CallToolResult::error("bad")).unwrap(),
            json!({"content": [{"type": "text", "text": "bad"}], "isError": true})
        );
        let tool = Tool::new("t", JsonObject::new()).with_title("T").with_output_schema(JsonObject::new());
        assert_eq!(
            serde_json::to_value(tool).unwrap(),
            json!({"name": "t", "title": "T", "inputSchema": {}, "outputSchema": {}})
        );
    }
}
