//! Argument completion (`completion/complete`) for prompt arguments and resource template
//! variables.

use crate::alloc_prelude::*;
use alloc::collections::BTreeMap;

use super::common::{JsonObject, Meta, ResultType};
use super::macros::{mcp_struct, tagged_union};
use super::methods::request_method;
use super::{adapt_result_type, ForRevision};
use crate::version::ProtocolVersion;

mcp_struct! {
    /// Identifies a prompt whose argument is being completed.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::completion::PromptReference;
    ///
    /// let r = PromptReference::new("code_review");
    /// assert_eq!(serde_json::to_string(&r).unwrap(), r#"{"type":"ref/prompt","name":"code_review"}"#);
    /// ```
    #[derive(Default)]
    pub struct PromptReference {
        @tag "type" = "ref/prompt";
        /// The prompt's name.
        req name: String = "name",
        /// Human-readable name (2025-06-18+).
        opt title: String = "title",
    }
}

impl PromptReference {
    /// A reference to prompt `name`.
    #[must_use]
    pub fn new(name: impl Into<String>) -> Self {
        Self { name: name.into(), ..Self::default() }
    }
}

mcp_struct! {
    /// Identifies a resource template (or resource) whose URI variable is being completed
    /// (`ResourceReference` before 2025-06-18, same shape).
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::completion::ResourceTemplateReference;
    ///
    /// let r = ResourceTemplateReference::new("file:///{path}");
    /// assert_eq!(serde_json::to_string(&r).unwrap(), r#"{"type":"ref/resource","uri":"file:///{path}"}"#);
    /// ```
    #[derive(Default)]
    pub struct ResourceTemplateReference {
        @tag "type" = "ref/resource";
        /// The URI or URI template.
        req uri: String = "uri",
    }
}

impl ResourceTemplateReference {
    /// A reference to the template (or resource) `uri`.
    #[must_use]
    pub fn new(uri: impl Into<String>) -> Self {
        Self { uri: uri.into(), ..Self::default() }
    }
}

tagged_union! {
    /// What a completion request completes an argument of: a prompt or a resource template.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::completion::CompletionReference;
    ///
    /// let r: CompletionReference = serde_json::from_str(r#"{"type":"ref/prompt","name":"greet"}"#).unwrap();
    /// assert!(matches!(&r, CompletionReference::Prompt(p) if p.name == "greet"));
    /// let future: CompletionReference = serde_json::from_str(r#"{"type":"ref/tool","name":"t"}"#).unwrap();
    /// assert!(matches!(future, CompletionReference::Unknown(_)));
    /// ```
    pub enum CompletionReference by "type" {
        /// A prompt (`ref/prompt`).
        "ref/prompt" => Prompt(PromptReference),
        /// A resource template (`ref/resource`).
        "ref/resource" => Resource(ResourceTemplateReference),
    }
}

mcp_struct! {
    /// The argument being completed and its partial value.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::completion::CompletionArgument;
    ///
    /// let a = CompletionArgument::new("language", "py");
    /// assert_eq!(serde_json::to_string(&a).unwrap(), r#"{"name":"language","value":"py"}"#);
    /// ```
    #[derive(Default)]
    pub struct CompletionArgument {
        /// The argument's name.
        req name: String = "name",
        /// The value typed so far, to match completions against.
        req value: String = "value",
    }
}

impl CompletionArgument {
    /// Argument `name` with partial value `value`.
    #[must_use]
    pub fn new(name: impl Into<String>, value: impl Into<String>) -> Self {
        Self { name: name.into(), value: value.into(), extra: JsonObject::new() }
    }
}

mcp_struct! {
    /// Extra context for a completion (2025-06-18+).
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::completion::CompletionContext;
    ///
    /// let c: CompletionContext = serde_json::from_str(r#"{"arguments":{"language":"python"}}"#).unwrap();
    /// assert_eq!(c.arguments.unwrap()["language"], "python");
    /// ```
    #[derive(Default)]
    pub struct CompletionContext {
        /// Variables of the prompt or URI template resolved already.
        opt arguments: BTreeMap<String, String> = "arguments",
    }
}

mcp_struct! {
    /// Parameters of `completion/complete`.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::completion::{CompleteRequestParams, CompletionArgument, PromptReference};
    ///
    /// let p = CompleteRequestParams::new(PromptReference::new("code_review"), CompletionArgument::new("language", "py"));
    /// assert_eq!(
    ///     serde_json::to_string(&p).unwrap(),
    ///     r#"{"ref":{"type":"ref/prompt","name":"code_review"},"argument":{"name":"language","value":"py"}}"#
    /// );
    /// ```
    pub struct CompleteRequestParams {
        /// The prompt or resource template the argument belongs to.
        req reference: CompletionReference = "ref",
        /// The argument and its partial value.
        req argument: CompletionArgument = "argument",
        /// Arguments resolved already (2025-06-18+).
        opt context: CompletionContext = "context",
        /// Request metadata (required from 2026-07-28 on, where it carries the protocol
        /// version and client capabilities).
        opt meta: Meta = "_meta",
    }
}

impl CompleteRequestParams {
    /// Asks for completions of `argument` of `reference`.
    #[must_use]
    pub fn new(reference: impl Into<CompletionReference>, argument: CompletionArgument) -> Self {
        Self { reference: reference.into(), argument, context: None, meta: None, extra: JsonObject::new() }
    }
}

mcp_struct! {
    /// Completion values for an argument.
    ///
    /// At most [`Completion::MAX_VALUES`] values may be sent; [`Completion::from_values`]
    /// keeps to that limit.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::completion::Completion;
    ///
    /// let c = Completion::from_values(["python", "pytorch"]);
    /// assert_eq!(
    ///     serde_json::to_string(&c).unwrap(),
    ///     r#"{"values":["python","pytorch"],"total":2,"hasMore":false}"#
    /// );
    /// ```
    #[derive(Default)]
    pub struct Completion {
        /// The values, best first (at most 100).
        req values: Vec<String> = "values",
        /// How many values exist in all; may exceed the number sent.
        opt total: u64 = "total",
        /// Whether more values exist than were sent, even if `total` is unknown.
        opt has_more: bool = "hasMore",
    }
}

impl Completion {
    /// The largest number of values one completion may carry.
    pub const MAX_VALUES: usize = 100;

    /// A completion from every matching value: the first [`Self::MAX_VALUES`] are kept,
    /// `total` counts them all and `hasMore` says whether any were left out.
    ///
    /// Values past the limit are counted, not stored.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::completion::Completion;
    ///
    /// let c = Completion::from_values((0..250).map(|i| i.to_string()));
    /// assert_eq!(c.values.len(), 100);
    /// assert_eq!((c.total, c.has_more), (Some(250), Some(true)));
    /// ```
    #[must_use]
    pub fn from_values<I>(values: I) -> Self
    where
        I: IntoIterator,
        I::Item: Into<String>,
    {
        let mut values = values.into_iter();
        let kept: Vec<String> = values.by_ref().take(Self::MAX_VALUES).map(Into::into).collect();
        let left_out = values.count();
        let total = u64::try_from(kept.len().saturating_add(left_out)).unwrap_or(u64::MAX);
        Self { values: kept, total: Some(total), has_more: Some(left_out > 0), extra: JsonObject::new() }
    }

    /// Whether more values exist than were sent (`hasMore` absent counts as `false`).
    #[must_use]
    pub fn has_more(&self) -> bool {
        self.has_more.unwrap_or(false)
    }

    /// Cuts `values` down to [`Self::MAX_VALUES`], recording in `total` and `hasMore` that
    /// some were left out.
    fn enforce_limit(&mut self) {
        if self.values.len() > Self::MAX_VALUES {
            let len = u64::try_from(self.values.len()).unwrap_or(u64::MAX);
            self.values.truncate(Self::MAX_VALUES);
            self.total = Some(self.total.map_or(len, |t| t.max(len)));
            self.has_more = Some(true);
        }
    }
}

mcp_struct! {
    /// The result of `completion/complete`.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::completion::{CompleteResult, Completion};
    /// use talaria_core::schema::ForRevision;
    /// use talaria_core::version::ProtocolVersion;
    ///
    /// let mut r = CompleteResult::new(Completion::from_values(["flask"]));
    /// r.adapt_to(ProtocolVersion::V2026_07_28);
    /// assert_eq!(
    ///     serde_json::to_string(&r).unwrap(),
    ///     r#"{"completion":{"values":["flask"],"total":1,"hasMore":false},"resultType":"complete"}"#
    /// );
    /// ```
    #[derive(Default)]
    pub struct CompleteResult {
        /// The completion values.
        req completion: Completion = "completion",
        /// Result metadata.
        opt meta: Meta = "_meta",
        /// The kind of result (2026-07-28, where it is required).
        opt result_type: ResultType = "resultType",
    }
}

impl CompleteResult {
    /// A result carrying `completion`.
    #[must_use]
    pub fn new(completion: Completion) -> Self {
        Self { completion, ..Self::default() }
    }
}

impl ForRevision for CompleteResult {
    /// Sets or clears `resultType`, and cuts the values down to [`Completion::MAX_VALUES`]
    /// (every revision sets that limit).
    fn adapt_to(&mut self, version: ProtocolVersion) {
        adapt_result_type(&mut self.result_type, version);
        self.completion.enforce_limit();
    }
}

request_method! {
    /// `completion/complete`: asks the server for values of a prompt argument or a resource
    /// template variable.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::{completion::Complete, Capability, RequestMethod};
    ///
    /// assert_eq!(Complete::INFO.name, "completion/complete");
    /// assert_eq!(Complete::INFO.capability, Some(Capability::Completions));
    /// ```
    Complete, "completion/complete", CompleteRequestParams => CompleteResult
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::schema::test_support::{request_round_trips, response_round_trips, round_trips_as_written, EXAMPLES};

    #[test]
    fn official_examples_round_trip() {
        round_trips_as_written::<CompleteRequestParams>("CompleteRequestParams");
        round_trips_as_written::<CompleteResult>("CompleteResult");
        request_round_trips::<Complete>("CompleteRequest");
        response_round_trips::<Complete>("CompleteResultResponse");
    }

    #[test]
    fn examples_decode_to_the_expected_fields() {
        let text = std::fs::read_to_string(format!(
            "{EXAMPLES}CompleteRequestParams/prompt-argument-completion-with-context.json"
        ))
        .unwrap();
        let p: CompleteRequestParams = serde_json::from_str(&text).unwrap();
        assert_eq!(p.reference, CompletionReference::Prompt(PromptReference::new("code_review")));
        assert_eq!(p.argument, CompletionArgument::new("framework", "fla"));
        assert_eq!(p.context.and_then(|c| c.arguments).unwrap()["language"], "python");

        let text = std::fs::read_to_string(format!(
            "{EXAMPLES}CompleteResult/multiple-completion-values-with-more-available.json"
        ))
        .unwrap();
        let r: CompleteResult = serde_json::from_str(&text).unwrap();
        assert_eq!((r.completion.values.len(), r.completion.total), (3, Some(10)));
        assert!(r.completion.has_more());
    }

    #[test]
    fn a_2024_11_05_request_decodes() {
        // A `ResourceReference` of 2024-11-05, no `context`, no `_meta`.
        let p: CompleteRequestParams = serde_json::from_value(json!({
            "ref": {"type": "ref/resource", "uri": "file:///{path}"},
            "argument": {"name": "path", "value": "sr"}
        }))
        .unwrap();
        assert_eq!(p.reference, CompletionReference::Resource(ResourceTemplateReference::new("file:///{path}")));
        assert_eq!((p.context, p.meta), (None, None));
        let r: CompleteResult = serde_json::from_value(json!({"completion": {"values": []}})).unwrap();
        assert_eq!((r.completion.total, r.completion.has_more), (None, None));
    }

    #[test]
    fn unknown_members_and_references_round_trip() {
        let v = json!({
            "ref": {"type": "ref/tool", "name": "t"},
            "argument": {"name": "a", "value": "b", "cursor": 3},
            "context": {"arguments": {}, "scope": "x"},
            "hint": true
        });
        let p: CompleteRequestParams = serde_json::from_value(v.clone()).unwrap();
        assert!(matches!(p.reference, CompletionReference::Unknown(_)));
        assert_eq!(p.argument.extra["cursor"], 3);
        assert_eq!(serde_json::to_value(&p).unwrap(), v);

        let v = json!({"completion": {"values": ["a"], "ranked": true}, "resultType": "complete", "x": 1});
        let r: CompleteResult = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(serde_json::to_value(&r).unwrap(), v);
    }

    #[test]
    fn missing_required_members_fail() {
        let arg = json!({"name": "a", "value": "b"});
        assert!(serde_json::from_value::<CompleteRequestParams>(json!({"argument": arg})).is_err());
        assert!(serde_json::from_value::<CompleteRequestParams>(json!({"ref": {"type": "ref/prompt", "name": "p"}}))
            .is_err());
        // A known reference kind with a missing member is an error, not `Unknown`.
        assert!(serde_json::from_value::<CompleteRequestParams>(
            json!({"ref": {"type": "ref/prompt"}, "argument": arg})
        )
        .is_err());
        assert!(serde_json::from_value::<CompletionArgument>(json!({"name": "a"})).is_err());
        assert!(serde_json::from_value::<Completion>(json!({"total": 1})).is_err());
        assert!(serde_json::from_value::<CompleteResult>(json!({"resultType": "complete"})).is_err());
        // A wrong tag on a concrete reference type is refused.
        assert!(serde_json::from_value::<PromptReference>(json!({"type": "ref/resource", "name": "p"})).is_err());
    }

    #[test]
    fn from_values_truncates_and_counts() {
        let c = Completion::from_values(Vec::<String>::new());
        assert_eq!((c.values.len(), c.total, c.has_more), (0, Some(0), Some(false)));
        let c = Completion::from_values((0..100).map(|i| format!("v{i}")));
        assert_eq!((c.values.len(), c.total, c.has_more), (100, Some(100), Some(false)));
        let c = Completion::from_values((0..101).map(|i| format!("v{i}")));
        assert_eq!((c.values.len(), c.total, c.has_more), (100, Some(101), Some(true)));
        assert_eq!(c.values.first().map(String::as_str), Some("v0"));
        assert_eq!(c.values.last().map(String::as_str), Some("v99"));
    }

    #[test]
    fn result_adapts_to_legacy_and_stateless_revisions() {
        let values: Vec<String> = (0..150).map(|i| i.to_string()).collect();
        let mut r = CompleteResult::new(Completion { values, ..Completion::default() });
        r.adapt_to(ProtocolVersion::V2026_07_28);
        assert_eq!(r.result_type, Some(ResultType::Complete));
        assert_eq!(
            (r.completion.values.len(), r.completion.total, r.completion.has_more),
            (100, Some(150), Some(true))
        );

        let mut r = CompleteResult {
            result_type: Some(ResultType::Complete),
            ..CompleteResult::new(Completion::from_values(["a"]))
        };
        r.adapt_to(ProtocolVersion::V2025_06_18);
        assert_eq!(
            serde_json::to_value(&r).unwrap(),
            json!({"completion": {"values": ["a"], "total": 1, "hasMore": false}})
        );
    }
}
