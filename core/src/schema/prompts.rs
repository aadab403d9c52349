//! Prompts: templates the server offers, listing, getting, and list-change notifications.

use crate::alloc_prelude::*;
use alloc::collections::BTreeMap;

use super::common::{Icon, JsonObject, Meta, NotificationParams, PaginatedRequestParams, ResultType, Role};
use super::content::ContentBlock;
use super::macros::{cacheable_list, mcp_struct};
use super::methods::{notification_method, request_method};
use super::mrtr::InputResponses;
use super::{adapt_result_type, ForRevision};
use crate::version::ProtocolVersion;

mcp_struct! {
    /// A prompt or prompt template the server offers.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::prompts::{Prompt, PromptArgument};
    ///
    /// let p = Prompt::new("code_review").with_argument(PromptArgument::required("code"));
    /// assert_eq!(
    ///     serde_json::to_string(&p).unwrap(),
    ///     r#"{"name":"code_review","arguments":[{"name":"code","required":true}]}"#
    /// );
    /// ```
    #[derive(Default)]
    pub struct Prompt {
        /// Programmatic name, unique on the server.
        req name: String = "name",
        /// Human-readable name (2025-06-18+).
        opt title: String = "title",
        /// What the prompt provides.
        opt description: String = "description",
        /// The arguments it accepts for templating.
        opt arguments: Vec<PromptArgument> = "arguments",
        /// Icons (2025-11-25+).
        opt icons: Vec<Icon> = "icons",
        /// Metadata (2025-06-18+).
        opt meta: Meta = "_meta",
    }
}

impl Prompt {
    /// A prompt named `name`, without arguments.
    #[must_use]
    pub fn new(name: impl Into<String>) -> Self {
        Self { name: name.into(), ..Self::default() }
    }

    /// Sets the description.
    #[must_use]
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Adds an argument.
    #[must_use]
    pub fn with_argument(mut self, argument: PromptArgument) -> Self {
        self.arguments.get_or_insert_with(Vec::new).push(argument);
        self
    }
}

mcp_struct! {
    /// An argument a prompt template accepts.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::prompts::PromptArgument;
    ///
    /// let a: PromptArgument = serde_json::from_str(r#"{"name":"code","required":true}"#).unwrap();
    /// assert!(a.is_required());
    /// assert!(!PromptArgument::optional("style").is_required());
    /// ```
    #[derive(Default)]
    pub struct PromptArgument {
        /// The argument's name.
        req name: String = "name",
        /// Human-readable name (2025-06-18+).
        opt title: String = "title",
        /// What the argument is for.
        opt description: String = "description",
        /// Whether it must be given; absent means `false`.
        opt required: bool = "required",
    }
}

impl PromptArgument {
    /// A required argument named `name`.
    #[must_use]
    pub fn required(name: impl Into<String>) -> Self {
        Self { name: name.into(), required: Some(true), ..Self::default() }
    }

    /// An optional argument named `name` (`required` left absent).
    #[must_use]
    pub fn optional(name: impl Into<String>) -> Self {
        Self { name: name.into(), ..Self::default() }
    }

    /// Sets the description.
    #[must_use]
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Whether the argument must be given (`required` absent counts as `false`).
    #[must_use]
    pub fn is_required(&self) -> bool {
        self.required.unwrap_or(false)
    }
}

mcp_struct! {
    /// One message of a prompt: like a sampling message, but it may embed server resources.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::prompts::PromptMessage;
    /// use talaria_core::schema::Role;
    ///
    /// let m = PromptMessage::user_text("Review this code");
    /// assert_eq!(m.role, Role::User);
    /// assert_eq!(
    ///     serde_json::to_string(&m).unwrap(),
    ///     r#"{"role":"user","content":{"type":"text","text":"Review this code"}}"#
    /// );
    /// ```
    pub struct PromptMessage {
        /// Who speaks.
        req role: Role = "role",
        /// What is said.
        req content: ContentBlock = "content",
    }
}

impl PromptMessage {
    /// A message from `role` holding `content`.
    #[must_use]
    pub fn new(role: Role, content: ContentBlock) -> Self {
        Self { role, content, extra: JsonObject::new() }
    }

    /// A user message holding one text block.
    #[must_use]
    pub fn user_text(text: impl Into<String>) -> Self {
        Self::new(Role::User, ContentBlock::text(text))
    }

    /// An assistant message holding one text block.
    #[must_use]
    pub fn assistant_text(text: impl Into<String>) -> Self {
        Self::new(Role::Assistant, ContentBlock::text(text))
    }
}

cacheable_list! {
    /// The result of `prompts/list`: one page of the server's prompts.
    ///
    /// Cacheable from 2026-07-28 on: see [`ForRevision`] for the members it gains there.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::prompts::{ListPromptsResult, Prompt};
    /// use talaria_core::schema::{ForRevision, ResultType};
    /// use talaria_core::version::ProtocolVersion;
    ///
    /// let mut r = ListPromptsResult::new(vec![Prompt::new("greet")]);
    /// r.adapt_to(ProtocolVersion::V2026_07_28);
    /// assert_eq!(r.result_type, Some(ResultType::Complete));
    /// r.adapt_to(ProtocolVersion::V2024_11_05);
    /// assert_eq!(serde_json::to_string(&r).unwrap(), r#"{"prompts":[{"name":"greet"}]}"#);
    /// ```
    pub struct ListPromptsResult {
        /// The prompts on this page.
        items prompts: Prompt = "prompts"
    }
}

mcp_struct! {
    /// Parameters of `prompts/get`.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::prompts::GetPromptRequestParams;
    ///
    /// let p = GetPromptRequestParams::new("code_review").with_argument("code", "fn main() {}");
    /// assert_eq!(
    ///     serde_json::to_string(&p).unwrap(),
    ///     r#"{"name":"code_review","arguments":{"code":"fn main() {}"}}"#
    /// );
    /// ```
    pub struct GetPromptRequestParams {
        /// The name of the prompt or prompt template.
        req name: String = "name",
        /// Values for the template's arguments.
        opt arguments: BTreeMap<String, String> = "arguments",
        /// Request metadata (required from 2026-07-28 on, where it carries the protocol
        /// version and client capabilities).
        opt meta: Meta = "_meta",
        /// The client's answers to the input requests of an earlier `input_required` result
        /// (2026-07-28).
        opt input_responses: InputResponses = "inputResponses",
        /// The opaque state of an earlier `input_required` result, echoed back (2026-07-28).
        opt request_state: String = "requestState",
    }
}

impl GetPromptRequestParams {
    /// Asks for prompt `name`, without arguments.
    #[must_use]
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            arguments: None,
            meta: None,
            input_responses: None,
            request_state: None,
            extra: JsonObject::new(),
        }
    }

    /// Adds (or replaces) an argument value.
    #[must_use]
    pub fn with_argument(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.arguments.get_or_insert_with(BTreeMap::new).insert(name.into(), value.into());
        self
    }
}

mcp_struct! {
    /// The result of `prompts/get`: the prompt's messages, arguments filled in.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::prompts::{GetPromptResult, PromptMessage};
    /// use talaria_core::schema::ForRevision;
    /// use talaria_core::version::ProtocolVersion;
    ///
    /// let mut r = GetPromptResult::new(vec![PromptMessage::user_text("Hi")]);
    /// r.adapt_to(ProtocolVersion::V2026_07_28);
    /// assert_eq!(
    ///     serde_json::to_string(&r).unwrap(),
    ///     r#"{"messages":[{"role":"user","content":{"type":"text","text":"Hi"}}],"resultType":"complete"}"#
    /// );
    /// ```
    #[derive(Default)]
    pub struct GetPromptResult {
        /// A description of the prompt.
        opt description: String = "description",
        /// The messages.
        req messages: Vec<PromptMessage> = "messages",
        /// Result metadata.
        opt meta: Meta = "_meta",
        /// The kind of result (2026-07-28, where it is required).
        opt result_type: ResultType = "resultType",
    }
}

impl GetPromptResult {
    /// A result holding `messages`.
    #[must_use]
    pub fn new(messages: Vec<PromptMessage>) -> Self {
        Self { messages, ..Self::default() }
    }

    /// Sets the description.
    #[must_use]
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }
}

impl ForRevision for GetPromptResult {
    /// Sets `resultType` for 2026-07-28, and turns each message's content into what the
    /// revision can carry ([`ContentBlock::for_revision`]).
    fn adapt_to(&mut self, version: ProtocolVersion) {
        adapt_result_type(&mut self.result_type, version);
        for message in &mut self.messages {
            let content = core::mem::replace(&mut message.content, ContentBlock::text(""));
            message.content = content.for_revision(version);
        }
    }
}

request_method! {
    /// `prompts/list`: lists the server's prompts, a page at a time.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::{prompts::ListPrompts, RequestMethod};
    ///
    /// assert_eq!(ListPrompts::INFO.name, "prompts/list");
    /// ```
    ListPrompts, "prompts/list", PaginatedRequestParams => ListPromptsResult
}

request_method! {
    /// `prompts/get`: gets a prompt, its template filled in with the given arguments.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::{prompts::GetPrompt, Capability, RequestMethod};
    ///
    /// assert_eq!(GetPrompt::INFO.capability, Some(Capability::Prompts));
    /// ```
    GetPrompt, "prompts/get", GetPromptRequestParams => GetPromptResult
}

notification_method! {
    /// `notifications/prompts/list_changed`: the server's list of prompts changed.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::{prompts::PromptListChanged, NotificationMethod};
    ///
    /// assert_eq!(PromptListChanged::INFO.name, "notifications/prompts/list_changed");
    /// ```
    PromptListChanged, "notifications/prompts/list_changed", NotificationParams
}

/// A prompt as a revision knows it: `title` and `icons` only where they exist.
impl ForRevision for Prompt {
    fn adapt_to(&mut self, version: ProtocolVersion) {
        super::common::adapt_named(&mut self.title, &mut self.icons, version);
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::schema::test_support::{
        notification_round_trips, request_round_trips, response_round_trips, round_trips_as_written, EXAMPLES,
    };

    #[test]
    fn official_examples_round_trip() {
        round_trips_as_written::<ListPromptsResult>("ListPromptsResult");
        round_trips_as_written::<GetPromptRequestParams>("GetPromptRequestParams");
        round_trips_as_written::<GetPromptResult>("GetPromptResult");
        request_round_trips::<ListPrompts>("ListPromptsRequest");
        response_round_trips::<ListPrompts>("ListPromptsResultResponse");
        request_round_trips::<GetPrompt>("GetPromptRequest");
        response_round_trips::<GetPrompt>("GetPromptResultResponse");
        notification_round_trips::<PromptListChanged>("PromptListChangedNotification");
    }

    #[test]
    fn examples_decode_to_the_expected_fields() {
        let text =
            std::fs::read_to_string(format!("{EXAMPLES}ListPromptsResult/prompts-list-with-cursor-and-ttl.json"))
                .unwrap();
        let r: ListPromptsResult = serde_json::from_str(&text).unwrap();
        let args = r.prompts[0].arguments.as_deref().unwrap();
        assert!(args[0].is_required());
        assert_eq!(r.prompts[0].icons.as_ref().map(Vec::len), Some(1));
        assert_eq!((r.ttl_ms, r.cache_scope), (Some(600_000), Some(crate::schema::CacheScope::Public)));

        let text =
            std::fs::read_to_string(format!("{EXAMPLES}GetPromptRequestParams/get-code-review-prompt.json")).unwrap();
        let p: GetPromptRequestParams = serde_json::from_str(&text).unwrap();
        assert!(p.arguments.unwrap()["code"].starts_with("def hello()"));
    }

    #[test]
    fn a_2024_11_05_prompt_decodes() {
        let p: Prompt = serde_json::from_value(json!({
            "name": "greet", "description": "Says hi", "arguments": [{"name": "who", "description": "Whom"}]
        }))
        .unwrap();
        assert_eq!((p.title, p.icons, p.meta), (None, None, None));
        assert!(!p.arguments.unwrap()[0].is_required());

        let r: GetPromptResult = serde_json::from_value(json!({
            "messages": [{"role": "assistant", "content": {"type": "image", "data": "AA==", "mimeType": "image/png"}}]
        }))
        .unwrap();
        assert_eq!(r.messages[0].role, Role::Assistant);
        assert_eq!(r.result_type, None);
    }

    #[test]
    fn unknown_members_round_trip() {
        let v = json!({
            "messages": [{"role": "user", "content": {"type": "text", "text": "x"}, "weight": 2}],
            "description": "d",
            "later": [null]
        });
        let r: GetPromptResult = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(r.messages[0].extra["weight"], 2);
        assert_eq!(serde_json::to_value(&r).unwrap(), v);

        let v = json!({"name": "p", "arguments": {"a": "1"}, "inputResponses": {}, "requestState": "s", "x": {}});
        let p: GetPromptRequestParams = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(serde_json::to_value(&p).unwrap(), v);
    }

    #[test]
    fn missing_required_members_fail() {
        assert!(serde_json::from_value::<Prompt>(json!({"description": "d"})).is_err());
        assert!(serde_json::from_value::<PromptArgument>(json!({"required": true})).is_err());
        assert!(serde_json::from_value::<PromptMessage>(json!({"role": "user"})).is_err());
        assert!(serde_json::from_value::<PromptMessage>(json!({"content": {"type": "text", "text": "x"}})).is_err());
        assert!(serde_json::from_value::<ListPromptsResult>(json!({"nextCursor": "c"})).is_err());
        assert!(serde_json::from_value::<GetPromptRequestParams>(json!({"arguments": {}})).is_err());
        assert!(serde_json::from_value::<GetPromptResult>(json!({"description": "d"})).is_err());
        // Argument values are strings.
        assert!(serde_json::from_value::<GetPromptRequestParams>(json!({"name": "p", "arguments": {"n": 1}})).is_err());
    }

    #[test]
    fn results_adapt_to_legacy_and_stateless_revisions() {
        let mut r = GetPromptResult::new(vec![PromptMessage::assistant_text("ok")]).with_description("d");
        r.adapt_to(ProtocolVersion::V2026_07_28);
        assert_eq!(r.result_type, Some(ResultType::Complete));
        r.adapt_to(ProtocolVersion::V2025_11_25);
        assert_eq!(
            serde_json::to_value(&r).unwrap(),
            json!({"description": "d", "messages": [{"role": "assistant", "content": {"type": "text", "text": "ok"}}]})
        );

        let mut l = ListPromptsResult { ttl_ms: Some(10), ..ListPromptsResult::new(Vec::new()) };
        l.adapt_to(ProtocolVersion::V2026_07_28);
        assert_eq!(
            serde_json::to_value(&l).unwrap(),
            json!({"prompts": [], "resultType": "complete", "ttlMs": 10, "cacheScope": "private"})
        );
        l.adapt_to(ProtocolVersion::V2025_03_26);
        assert_eq!(serde_json::to_value(&l).unwrap(), json!({"prompts": []}));
    }
}
