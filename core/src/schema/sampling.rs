//! Sampling: the server asks the client's model for a message (`sampling/createMessage`).
//!
//! Up to 2025-11-25 this is a JSON-RPC request from server to client; in 2026-07-28 it is an
//! input request carried by an [`InputRequiredResult`](super::mrtr::InputRequiredResult).
//! From 2025-11-25 on, messages may hold several content blocks and the model may use tools
//! ([`ToolUseContent`], [`ToolResultContent`]).

use crate::alloc_prelude::*;
use core::fmt;
use core::marker::PhantomData;

use serde::de::value::{MapAccessDeserializer, SeqAccessDeserializer};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::common::{ForRevision, JsonObject, Meta, Role};
use super::content::{AudioContent, ContentBlock, ImageContent, TextContent};
use super::macros::{mcp_struct, tagged_union};
use super::methods::request_method;
use super::tasks::TaskMetadata;
use super::tools::Tool;
use crate::version::{Feature, ProtocolVersion};

mcp_struct! {
    /// A request from the model to call a tool (2025-11-25+).
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::sampling::ToolUseContent;
    ///
    /// let t: ToolUseContent = serde_json::from_str(
    ///     r#"{"type":"tool_use","id":"call_1","name":"get_weather","input":{"city":"Paris"}}"#,
    /// ).unwrap();
    /// assert_eq!(t.name, "get_weather");
    /// assert_eq!(t.input["city"], "Paris");
    /// ```
    #[derive(Default)]
    pub struct ToolUseContent {
        @tag "type" = "tool_use";
        /// The id of this tool use, echoed by the matching [`ToolResultContent`].
        req id: String = "id",
        /// The name of the tool to call.
        req name: String = "name",
        /// The arguments, conforming to the tool's input schema.
        req input: JsonObject = "input",
        /// Metadata.
        opt meta: Meta = "_meta",
    }
}

mcp_struct! {
    /// The result of a tool use, sent back to the model (2025-11-25+).
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::sampling::ToolResultContent;
    ///
    /// let r: ToolResultContent = serde_json::from_str(
    ///     r#"{"type":"tool_result","toolUseId":"call_1","content":[{"type":"text","text":"18°C"}]}"#,
    /// ).unwrap();
    /// assert_eq!(r.tool_use_id, "call_1");
    /// assert_eq!(r.content[0].as_text(), Some("18°C"));
    /// ```
    #[derive(Default)]
    pub struct ToolResultContent {
        @tag "type" = "tool_result";
        /// The id of the [`ToolUseContent`] this answers.
        req tool_use_id: String = "toolUseId",
        /// The unstructured result.
        req content: Vec<ContentBlock> = "content",
        /// The structured result (an object in 2025-11-25, any JSON value in 2026-07-28).
        opt structured_content: serde_json::Value = "structuredContent",
        /// Whether the tool use failed.
        opt is_error: bool = "isError",
        /// Metadata.
        opt meta: Meta = "_meta",
    }
}

tagged_union! {
    /// A content block in a sampling message: text, image, audio, tool use or tool result.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::sampling::SamplingContent;
    ///
    /// let c: SamplingContent = serde_json::from_str(r#"{"type":"text","text":"hi"}"#).unwrap();
    /// assert!(matches!(c, SamplingContent::Text(_)));
    /// let future: SamplingContent = serde_json::from_str(r#"{"type":"thinking","x":1}"#).unwrap();
    /// assert!(matches!(future, SamplingContent::Unknown(_)));
    /// ```
    pub enum SamplingContent by "type" {
        /// Text.
        "text" => Text(TextContent),
        /// An image.
        "image" => Image(ImageContent),
        /// Audio (2025-03-26+).
        "audio" => Audio(AudioContent),
        /// A tool call by the model (2025-11-25+).
        "tool_use" => ToolUse(ToolUseContent),
        /// The result of a tool call (2025-11-25+).
        "tool_result" => ToolResult(ToolResultContent),
    }
}

impl SamplingContent {
    /// Text content with the given text.
    #[must_use]
    pub fn text(text: impl Into<String>) -> Self {
        Self::Text(TextContent::new(text))
    }
}

/// One value or an array of values, keeping the shape it was read in.
///
/// Sampling messages carry a single content block in every revision and, from 2025-11-25 on,
/// may carry an array of blocks instead.
///
/// # Examples
///
/// ```
/// use talaria_core::schema::sampling::OneOrMany;
///
/// let one: OneOrMany<serde_json::Map<String, serde_json::Value>> = serde_json::from_str(r#"{"a":1}"#).unwrap();
/// assert_eq!(one.len(), 1);
/// let many: OneOrMany<serde_json::Map<String, serde_json::Value>> = serde_json::from_str(r#"[{"a":1},{"b":2}]"#).unwrap();
/// assert_eq!(many.iter().count(), 2);
/// assert_eq!(serde_json::to_string(&many).unwrap(), r#"[{"a":1},{"b":2}]"#);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub enum OneOrMany<T> {
    /// A single value (written without an array).
    One(T),
    /// An array of values.
    Many(Vec<T>),
}

impl<T> OneOrMany<T> {
    /// The values as a slice.
    #[must_use]
    pub fn as_slice(&self) -> &[T] {
        match self {
            Self::One(v) => core::slice::from_ref(v),
            Self::Many(v) => v,
        }
    }

    /// Iterates over the values.
    pub fn iter(&self) -> core::slice::Iter<'_, T> {
        self.as_slice().iter()
    }

    /// The number of values.
    #[must_use]
    pub fn len(&self) -> usize {
        self.as_slice().len()
    }

    /// Whether there are no values (only an empty array).
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.as_slice().is_empty()
    }

    /// The values as a vector.
    #[must_use]
    pub fn into_vec(self) -> Vec<T> {
        match self {
            Self::One(v) => vec![v],
            Self::Many(v) => v,
        }
    }

    /// Turns a one-element array into a single value; other shapes are left alone.
    fn collapse(&mut self) {
        if let Self::Many(v) = self {
            if v.len() == 1 {
                if let Some(only) = v.pop() {
                    *self = Self::One(only);
                }
            }
        }
    }
}

impl<'a, T> IntoIterator for &'a OneOrMany<T> {
    type Item = &'a T;
    type IntoIter = core::slice::Iter<'a, T>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl<T> From<T> for OneOrMany<T> {
    fn from(v: T) -> Self {
        Self::One(v)
    }
}

impl<T> From<Vec<T>> for OneOrMany<T> {
    fn from(v: Vec<T>) -> Self {
        Self::Many(v)
    }
}

impl<T: Serialize> Serialize for OneOrMany<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::One(v) => v.serialize(serializer),
            Self::Many(v) => v.serialize(serializer),
        }
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for OneOrMany<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>> serde::de::Visitor<'de> for V<T> {
            type Value = OneOrMany<T>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object or an array of objects")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                T::deserialize(MapAccessDeserializer::new(map)).map(OneOrMany::One)
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
                Vec::<T>::deserialize(SeqAccessDeserializer::new(seq)).map(OneOrMany::Many)
            }
        }
        deserializer.deserialize_any(V(PhantomData))
    }
}

mcp_struct! {
    /// A message sent to or received from the model.
    ///
    /// `content` is one block in every revision, or an array of blocks from 2025-11-25 on.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::sampling::{SamplingContent, SamplingMessage};
    /// use talaria_core::schema::Role;
    ///
    /// let m = SamplingMessage::new(Role::User, SamplingContent::text("hi"));
    /// assert_eq!(
    ///     serde_json::to_string(&m).unwrap(),
    ///     r#"{"role":"user","content":{"type":"text","text":"hi"}}"#,
    /// );
    /// ```
    pub struct SamplingMessage {
        /// Who the message is from.
        req role: Role = "role",
        /// The content: one block or (2025-11-25+) several.
        req content: OneOrMany<SamplingContent> = "content",
        /// Metadata (2025-11-25+).
        opt meta: Meta = "_meta",
    }
}

impl SamplingMessage {
    /// A message from `role` with the given content.
    #[must_use]
    pub fn new(role: Role, content: impl Into<OneOrMany<SamplingContent>>) -> Self {
        Self { role, content: content.into(), meta: None, extra: JsonObject::new() }
    }
}

mcp_struct! {
    /// A hint for model selection: a model name, or part of one.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::sampling::ModelHint;
    ///
    /// let h = ModelHint::new("claude");
    /// assert_eq!(serde_json::to_string(&h).unwrap(), r#"{"name":"claude"}"#);
    /// ```
    #[derive(Default)]
    pub struct ModelHint {
        /// A substring of a model name; clients may map it to an equivalent model.
        opt name: String = "name",
    }
}

impl ModelHint {
    /// A hint naming `name`.
    #[must_use]
    pub fn new(name: impl Into<String>) -> Self {
        Self { name: Some(name.into()), ..Self::default() }
    }
}

mcp_struct! {
    /// The server's preferences for model selection; advisory.
    ///
    /// Priorities range from 0 (unimportant) to 1 (most important).
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::sampling::ModelPreferences;
    ///
    /// let p: ModelPreferences = serde_json::from_str(r#"{"hints":[{"name":"claude"}],"speedPriority":0.8}"#).unwrap();
    /// assert_eq!(p.speed_priority, Some(0.8));
    /// assert_eq!(p.hints.unwrap()[0].name.as_deref(), Some("claude"));
    /// ```
    #[derive(Default)]
    pub struct ModelPreferences {
        /// Model hints, in order of preference.
        opt hints: Vec<ModelHint> = "hints",
        /// How much cost matters.
        optnum cost_priority: f64 = "costPriority",
        /// How much latency matters.
        optnum speed_priority: f64 = "speedPriority",
        /// How much capability matters.
        optnum intelligence_priority: f64 = "intelligencePriority",
    }
}

/// Which MCP servers' context the client should add to the prompt.
///
/// `thisServer` and `allServers` are soft-deprecated from 2025-11-25 on.
///
/// # Examples
///
/// ```
/// use talaria_core::schema::sampling::IncludeContext;
///
/// assert_eq!(serde_json::to_string(&IncludeContext::ThisServer).unwrap(), r#""thisServer""#);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum IncludeContext {
    /// No context (the default).
    #[default]
    None,
    /// Context from the requesting server.
    ThisServer,
    /// Context from every connected server.
    AllServers,
}

/// How the model may use tools (2025-11-25+).
///
/// # Examples
///
/// ```
/// use talaria_core::schema::sampling::ToolChoiceMode;
///
/// assert_eq!(serde_json::to_string(&ToolChoiceMode::Required).unwrap(), r#""required""#);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolChoiceMode {
    /// The model decides (the default).
    #[default]
    Auto,
    /// The model must not use tools.
    None,
    /// The model must use at least one tool.
    Required,
}

mcp_struct! {
    /// Controls tool use during sampling (2025-11-25+).
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::sampling::{ToolChoice, ToolChoiceMode};
    ///
    /// let c = ToolChoice::new(ToolChoiceMode::Auto);
    /// assert_eq!(serde_json::to_string(&c).unwrap(), r#"{"mode":"auto"}"#);
    /// ```
    #[derive(Default)]
    pub struct ToolChoice {
        /// The mode; absent means `auto`.
        opt mode: ToolChoiceMode = "mode",
    }
}

impl ToolChoice {
    /// A tool choice with the given mode.
    #[must_use]
    pub fn new(mode: ToolChoiceMode) -> Self {
        Self { mode: Some(mode), ..Self::default() }
    }
}

mcp_struct! {
    /// Parameters of `sampling/createMessage`.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::sampling::{CreateMessageRequestParams, SamplingContent, SamplingMessage};
    /// use talaria_core::schema::Role;
    ///
    /// let p = CreateMessageRequestParams::new(
    ///     vec![SamplingMessage::new(Role::User, SamplingContent::text("Capital of France?"))],
    ///     100,
    /// );
    /// let json = serde_json::to_value(&p).unwrap();
    /// assert_eq!(json["maxTokens"], 100);
    /// assert_eq!(json["messages"][0]["content"]["text"], "Capital of France?");
    /// ```
    pub struct CreateMessageRequestParams {
        /// The conversation to continue.
        req messages: Vec<SamplingMessage> = "messages",
        /// Model preferences; the client may ignore them.
        opt model_preferences: ModelPreferences = "modelPreferences",
        /// A system prompt; the client may change or drop it.
        opt system_prompt: String = "systemPrompt",
        /// Which servers' context to include.
        opt include_context: IncludeContext = "includeContext",
        /// Sampling temperature.
        optnum temperature: f64 = "temperature",
        /// The most tokens to sample.
        req max_tokens: u64 = "maxTokens",
        /// Sequences that stop sampling.
        opt stop_sequences: Vec<String> = "stopSequences",
        /// Provider-specific metadata passed through to the model provider.
        opt metadata: JsonObject = "metadata",
        /// Tools the model may use (2025-11-25+).
        opt tools: Vec<Tool> = "tools",
        /// How the model may use the tools (2025-11-25+).
        opt tool_choice: ToolChoice = "toolChoice",
        /// Asks for the request to run as a task (2025-11-25).
        opt task: TaskMetadata = "task",
        /// Request metadata (not part of the 2026-07-28 input request).
        opt meta: Meta = "_meta",
    }
}

impl CreateMessageRequestParams {
    /// Parameters sampling at most `max_tokens` tokens after `messages`.
    #[must_use]
    pub fn new(messages: Vec<SamplingMessage>, max_tokens: u64) -> Self {
        Self {
            messages,
            model_preferences: None,
            system_prompt: None,
            include_context: None,
            temperature: None,
            max_tokens,
            stop_sequences: None,
            metadata: None,
            tools: None,
            tool_choice: None,
            task: None,
            meta: None,
            extra: JsonObject::new(),
        }
    }
}

/// Why sampling stopped. Values this SDK does not know are kept.
///
/// # Examples
///
/// ```
/// use talaria_core::schema::sampling::StopReason;
///
/// let r: StopReason = serde_json::from_str(r#""toolUse""#).unwrap();
/// assert_eq!(r, StopReason::ToolUse);
/// let other: StopReason = serde_json::from_str(r#""contentFilter""#).unwrap();
/// assert_eq!(other.as_str(), "contentFilter");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum StopReason {
    /// The model ended its turn.
    EndTurn,
    /// A stop sequence was met.
    StopSequence,
    /// The token limit was reached.
    MaxTokens,
    /// The model wants to use tools (2025-11-25+).
    ToolUse,
    /// A provider-specific reason.
    Other(String),
}

impl StopReason {
    /// The wire value.
    #[must_use]
    pub fn as_str(&self) -> &str {
        match self {
            Self::EndTurn => "endTurn",
            Self::StopSequence => "stopSequence",
            Self::MaxTokens => "maxTokens",
            Self::ToolUse => "toolUse",
            Self::Other(s) => s,
        }
    }
}

impl Serialize for StopReason {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for StopReason {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let s = super::macros::Key::deserialize(deserializer)?.0;
        Ok(match s.as_ref() {
            "endTurn" => Self::EndTurn,
            "stopSequence" => Self::StopSequence,
            "maxTokens" => Self::MaxTokens,
            "toolUse" => Self::ToolUse,
            _ => Self::Other(s.into_owned()),
        })
    }
}

mcp_struct! {
    /// The client's answer to `sampling/createMessage`: the sampled message.
    ///
    /// In 2026-07-28 it is an input response and carries no `resultType`.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::sampling::{CreateMessageResult, StopReason};
    ///
    /// let r: CreateMessageResult = serde_json::from_str(
    ///     r#"{"role":"assistant","content":{"type":"text","text":"Paris."},"model":"m","stopReason":"endTurn"}"#,
    /// ).unwrap();
    /// assert_eq!(r.stop_reason, Some(StopReason::EndTurn));
    /// assert_eq!(r.content.len(), 1);
    /// ```
    pub struct CreateMessageResult {
        /// Who the message is from (normally the assistant).
        req role: Role = "role",
        /// The content: one block or (2025-11-25+) several.
        req content: OneOrMany<SamplingContent> = "content",
        /// The model that produced the message.
        req model: String = "model",
        /// Why sampling stopped, if known.
        opt stop_reason: StopReason = "stopReason",
        /// Result metadata.
        opt meta: Meta = "_meta",
    }
}

impl CreateMessageResult {
    /// A result holding `content` produced by `model` for the assistant.
    #[must_use]
    pub fn new(model: impl Into<String>, content: impl Into<OneOrMany<SamplingContent>>) -> Self {
        Self {
            role: Role::Assistant,
            content: content.into(),
            model: model.into(),
            stop_reason: None,
            meta: None,
            extra: JsonObject::new(),
        }
    }
}

/// Before 2025-11-25 the content must be a single block: a one-block array is written as that
/// block. No `resultType` is added in 2026-07-28, where this is an input response.
impl ForRevision for CreateMessageResult {
    fn adapt_to(&mut self, version: ProtocolVersion) {
        if !version.supports(Feature::SamplingTools) {
            self.content.collapse();
        }
    }
}

request_method! {
    /// `sampling/createMessage`: the server asks the client to sample the model.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::{sampling::CreateMessage, Capability, RequestMethod, SentBy};
    /// use talaria_core::version::ProtocolVersion;
    ///
    /// assert_eq!(CreateMessage::INFO.sent_by, SentBy::Server);
    /// assert_eq!(CreateMessage::INFO.capability, Some(Capability::Sampling));
    /// // An MRTR input request, not a JSON-RPC method, in 2026-07-28.
    /// assert!(!CreateMessage::INFO.exists_in(ProtocolVersion::V2026_07_28));
    /// ```
    CreateMessage, "sampling/createMessage", CreateMessageRequestParams => CreateMessageResult
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::schema::test_support::{examples, round_trip, round_trips};
    use crate::schema::RequestMethod;

    #[test]
    fn official_examples_round_trip() {
        round_trips::<CreateMessageRequestParams>("CreateMessageRequestParams");
        for (name, json) in examples("CreateMessageRequest") {
            round_trip::<CreateMessageRequestParams>(&name, &json["params"]);
        }
        round_trips::<CreateMessageResult>("CreateMessageResult");
        round_trips::<SamplingMessage>("SamplingMessage");
        round_trips::<ModelPreferences>("ModelPreferences");
        for (name, json) in examples("ToolUseContent") {
            round_trip::<ToolUseContent>(&name, &json);
            round_trip::<SamplingContent>(&name, &json);
        }
        for (name, json) in examples("ToolResultContent") {
            round_trip::<ToolResultContent>(&name, &json);
            round_trip::<SamplingContent>(&name, &json);
        }
    }

    #[test]
    fn tool_results_decode_into_typed_blocks() {
        let (name, json) = examples("CreateMessageRequestParams")
            .into_iter()
            .find(|(n, _)| n.ends_with("follow-up-with-tool-results.json"))
            .unwrap();
        let p: CreateMessageRequestParams = round_trip(&name, &json);
        assert!(matches!(p.messages[2].content, OneOrMany::Many(_)));
        assert!(p.messages[2].content.iter().all(|b| matches!(b, SamplingContent::ToolResult(_))));
        assert_eq!(p.tools.as_ref().unwrap()[0].name, "get_weather");
    }

    #[test]
    fn early_revision_single_block_shapes() {
        // 2024-11-05: one text or image block, no `_meta`, no tools.
        let req = json!({
            "messages": [{"role": "user", "content": {"type": "image", "data": "AA==", "mimeType": "image/png"}}],
            "includeContext": "thisServer",
            "temperature": 0.5,
            "maxTokens": 10,
            "stopSequences": ["\n"],
            "metadata": {"provider": {"x": 1}}
        });
        let p: CreateMessageRequestParams = round_trip("2024-11-05 request", &req);
        assert_eq!(p.include_context, Some(IncludeContext::ThisServer));
        assert!(matches!(p.messages[0].content, OneOrMany::One(SamplingContent::Image(_))));
        let res = json!({"role": "assistant", "content": {"type": "text", "text": "x"}, "model": "m", "stopReason": "maxTokens"});
        let r: CreateMessageResult = round_trip("2024-11-05 result", &res);
        assert_eq!(r.stop_reason, Some(StopReason::MaxTokens));
    }

    #[test]
    fn one_block_arrays_collapse_for_early_revisions_only() {
        let mut r = CreateMessageResult::new("m", vec![SamplingContent::text("a")]);
        r.adapt_to(ProtocolVersion::V2025_11_25);
        assert!(matches!(r.content, OneOrMany::Many(_)));
        r.adapt_to(ProtocolVersion::V2026_07_28);
        assert!(serde_json::to_value(&r).unwrap().get("resultType").is_none());
        r.adapt_to(ProtocolVersion::V2025_06_18);
        assert_eq!(serde_json::to_value(&r).unwrap()["content"], json!({"type": "text", "text": "a"}));
    }

    #[test]
    fn unknown_members_tags_and_stop_reasons_round_trip() {
        let msg = json!({
            "role": "assistant",
            "content": [{"type": "thinking", "text": "hmm"}, {"type": "text", "text": "ok", "future": true}],
            "model": "m",
            "stopReason": "contentFilter",
            "usage": {"tokens": 3}
        });
        let r: CreateMessageResult = round_trip("unknown", &msg);
        assert!(matches!(r.content.as_slice()[0], SamplingContent::Unknown(_)));
        assert_eq!(r.stop_reason, Some(StopReason::Other("contentFilter".into())));
        assert_eq!(r.extra["usage"], json!({"tokens": 3}));
        round_trip::<ToolChoice>("tool choice", &json!({"mode": "required", "x": 1}));
    }

    #[test]
    fn missing_required_members_fail() {
        assert!(serde_json::from_value::<CreateMessageRequestParams>(json!({"messages": []})).is_err());
        assert!(serde_json::from_value::<CreateMessageResult>(json!({"role": "assistant", "model": "m"})).is_err());
        assert!(serde_json::from_value::<SamplingMessage>(json!({"role": "user"})).is_err());
        assert!(serde_json::from_value::<ToolUseContent>(json!({"type": "tool_use", "id": "a", "name": "b"})).is_err());
        assert!(serde_json::from_value::<ToolResultContent>(json!({"type": "tool_result", "content": []})).is_err());
        assert!(serde_json::from_value::<SamplingContent>(json!({"type": "tool_use", "id": "a"})).is_err());
        assert!(serde_json::from_value::<SamplingMessage>(json!({"role": "user", "content": "text"})).is_err());
    }

    #[test]
    fn marker_names_its_method() {
        assert_eq!(CreateMessage::INFO.name, "sampling/createMessage");
    }
}
