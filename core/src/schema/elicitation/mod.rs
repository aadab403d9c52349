//! Elicitation: the server asks the user for information through the client
//! (`elicitation/create`, 2025-06-18+).
//!
//! Form mode (every revision with elicitation) describes a flat form with a restricted JSON
//! Schema ([`ElicitationSchema`]); URL mode (2025-11-25+) sends the user to a web page. Up to
//! 2025-11-25 this is a JSON-RPC request from server to client; in 2026-07-28 it is an input
//! request carried by an [`InputRequiredResult`](super::mrtr::InputRequiredResult).

use crate::alloc_prelude::*;
use alloc::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::common::{ForRevision, JsonObject, Meta};
use super::macros::{mcp_struct, tagged_union};
use super::methods::{notification_method, request_method};
use super::ordered::OrderedMap;
use super::tasks::TaskMetadata;
use crate::version::ProtocolVersion;

mod fields;

pub use fields::{
    BooleanSchema, EnumOption, LegacyTitledEnumSchema, NumberKind, NumberSchema, PrimitiveSchemaDefinition,
    StringSchema, TitledEnumItems, TitledMultiSelectEnumSchema, TitledSingleSelectEnumSchema, UntitledEnumItems,
    UntitledMultiSelectEnumSchema, UntitledSingleSelectEnumSchema,
};

mcp_struct! {
    /// Parameters of a form-mode elicitation.
    ///
    /// 2025-06-18 requests carry no `mode`; later ones may carry `"mode": "form"`. A decoded
    /// request keeps whichever it had; [`ElicitRequestFormParams::new`] sets it.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::elicitation::ElicitRequestFormParams;
    ///
    /// let p: ElicitRequestFormParams = serde_json::from_str(
    ///     r#"{"message":"Name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}"#,
    /// ).unwrap();
    /// assert!(p.requested_schema.properties.contains_key("name"));
    /// // A 2025-06-18 request had no `mode`, and gains none on the way back out.
    /// assert!(serde_json::to_string(&p).unwrap().starts_with(r#"{"message":"Name?""#));
    /// // A new one says what it is.
    /// let fresh = ElicitRequestFormParams::new("Name?", p.requested_schema.clone());
    /// assert!(serde_json::to_string(&fresh).unwrap().starts_with(r#"{"mode":"form","message":"Name?""#));
    /// ```
    pub struct ElicitRequestFormParams {
        /// `"form"` when present (2025-11-25+).
        opt mode: String = "mode",
        /// What to ask the user.
        req message: String = "message",
        /// The form: a flat object schema with primitive members.
        req requested_schema: ElicitationSchema = "requestedSchema",
        /// Asks for the request to run as a task (2025-11-25).
        opt task: TaskMetadata = "task",
        /// Request metadata (not part of the 2026-07-28 input request).
        opt meta: Meta = "_meta",
    }
}

impl ElicitRequestFormParams {
    /// A form asking `message` with the given schema.
    #[must_use]
    pub fn new(message: impl Into<String>, requested_schema: ElicitationSchema) -> Self {
        Self {
            mode: Some("form".to_owned()),
            message: message.into(),
            requested_schema,
            task: None,
            meta: None,
            extra: JsonObject::new(),
        }
    }
}

mcp_struct! {
    /// Parameters of a URL-mode elicitation (2025-11-25+): the user is sent to a web page.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::elicitation::ElicitRequestUrlParams;
    ///
    /// let p = ElicitRequestUrlParams::new("Set your API key", "https://example.com/key");
    /// assert_eq!(
    ///     serde_json::to_string(&p).unwrap(),
    ///     r#"{"mode":"url","message":"Set your API key","url":"https://example.com/key"}"#,
    /// );
    /// ```
    #[derive(Default)]
    pub struct ElicitRequestUrlParams {
        @tag "mode" = "url";
        /// Why the user should open the URL.
        req message: String = "message",
        /// The URL to open.
        req url: String = "url",
        /// The id of this elicitation, echoed by `notifications/elicitation/complete`
        /// (required in 2025-11-25, removed in 2026-07-28).
        opt elicitation_id: String = "elicitationId",
        /// Asks for the request to run as a task (2025-11-25).
        opt task: TaskMetadata = "task",
        /// Request metadata (2025-11-25; not part of the 2026-07-28 input request).
        opt meta: Meta = "_meta",
    }
}

impl ElicitRequestUrlParams {
    /// A URL elicitation asking the user to open `url`.
    #[must_use]
    pub fn new(message: impl Into<String>, url: impl Into<String>) -> Self {
        Self { message: message.into(), url: url.into(), ..Self::default() }
    }
}

tagged_union! {
    /// Parameters of `elicitation/create`: a form or (2025-11-25+) a URL.
    ///
    /// An object without `mode` is a form (the 2025-06-18 shape).
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::elicitation::ElicitRequestParams;
    ///
    /// let p: ElicitRequestParams = serde_json::from_str(
    ///     r#"{"message":"Name?","requestedSchema":{"type":"object","properties":{}}}"#,
    /// ).unwrap();
    /// assert!(matches!(p, ElicitRequestParams::Form(_)));
    /// assert_eq!(p.message(), Some("Name?"));
    /// ```
    pub enum ElicitRequestParams by "mode", missing => Form {
        /// A form.
        "form" => Form(ElicitRequestFormParams),
        /// A URL to open (2025-11-25+).
        "url" => Url(ElicitRequestUrlParams),
    }
}

impl ElicitRequestParams {
    /// The message shown to the user.
    #[must_use]
    pub fn message(&self) -> Option<&str> {
        match self {
            Self::Form(f) => Some(&f.message),
            Self::Url(u) => Some(&u.message),
            Self::Unknown(m) => m.get("message").and_then(serde_json::Value::as_str),
        }
    }
}

mcp_struct! {
    /// The schema of an elicitation form: an object whose members are primitive values.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::elicitation::{ElicitationSchema, PrimitiveSchemaDefinition, StringSchema};
    ///
    /// let mut s = ElicitationSchema::default();
    /// s.properties.insert("name".into(), StringSchema::default().into());
    /// s.required = Some(vec!["name".into()]);
    /// assert_eq!(
    ///     serde_json::to_string(&s).unwrap(),
    ///     r#"{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}"#,
    /// );
    /// ```
    #[derive(Default)]
    pub struct ElicitationSchema {
        @tag "type" = "object";
        /// The form fields, by name, in the order the server listed them (the order to ask).
        req properties: OrderedMap<PrimitiveSchemaDefinition> = "properties",
        /// The names of the fields the user must fill in.
        opt required: Vec<String> = "required",
        /// The JSON Schema dialect (2025-11-25+).
        opt schema: String = "$schema",
    }
}

impl ElicitationSchema {
    /// The form filled with each field's `default` (fields without one are left out): what a
    /// non-interactive client that accepts forms answers.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::elicitation::ElicitationSchema;
    ///
    /// let s: ElicitationSchema = serde_json::from_str(
    ///     r#"{"type":"object","properties":{"n":{"type":"integer","default":3},"name":{"type":"string"}}}"#,
    /// ).unwrap();
    /// assert_eq!(serde_json::to_string(&s.defaults()).unwrap(), r#"{"n":3}"#);
    /// ```
    #[must_use]
    pub fn defaults(&self) -> BTreeMap<String, serde_json::Value> {
        self.properties
            .iter()
            .filter_map(|(name, field)| {
                let default = serde_json::to_value(field).ok()?.get("default")?.clone();
                Some((name.clone(), default))
            })
            .collect()
    }

    /// The required fields the [defaults](ElicitationSchema::defaults) leave empty.
    #[must_use]
    pub fn missing_from_defaults(&self) -> Vec<&str> {
        let defaults = self.defaults();
        self.required.iter().flatten().filter(|name| !defaults.contains_key(*name)).map(String::as_str).collect()
    }
}

/// The user's answer to an elicitation.
///
/// # Examples
///
/// ```
/// use talaria_core::schema::elicitation::ElicitAction;
///
/// assert_eq!(serde_json::to_string(&ElicitAction::Decline).unwrap(), r#""decline""#);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ElicitAction {
    /// The user submitted the form (or, in URL mode, agreed to open the page).
    Accept,
    /// The user explicitly refused.
    Decline,
    /// The user dismissed the request without choosing.
    Cancel,
}

mcp_struct! {
    /// The client's answer to `elicitation/create`.
    ///
    /// In 2026-07-28 it is an input response and carries no `resultType`.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::elicitation::{ElicitAction, ElicitResult};
    ///
    /// let r: ElicitResult = serde_json::from_str(r#"{"action":"accept","content":{"name":"octocat"}}"#).unwrap();
    /// assert_eq!(r.action, ElicitAction::Accept);
    /// assert_eq!(r.content.unwrap()["name"], "octocat");
    /// ```
    pub struct ElicitResult {
        /// What the user did.
        req action: ElicitAction = "action",
        /// The submitted values (form mode, `accept` only): strings, numbers, booleans and
        /// (2025-11-25+) arrays of strings.
        opt content: BTreeMap<String, serde_json::Value> = "content",
        /// Result metadata (2025-06-18 to 2025-11-25).
        opt meta: Meta = "_meta",
    }
}

impl ElicitResult {
    /// A result with the given action and no content.
    #[must_use]
    pub fn new(action: ElicitAction) -> Self {
        Self { action, content: None, meta: None, extra: JsonObject::new() }
    }

    /// An `accept` result carrying the submitted values.
    #[must_use]
    pub fn accept(content: BTreeMap<String, serde_json::Value>) -> Self {
        Self { content: Some(content), ..Self::new(ElicitAction::Accept) }
    }
}

/// Nothing depends on the revision: in 2026-07-28 this is an input response, without
/// `resultType`.
impl ForRevision for ElicitResult {
    fn adapt_to(&mut self, _version: ProtocolVersion) {}
}

mcp_struct! {
    /// Parameters of `notifications/elicitation/complete` (2025-11-25): a URL-mode elicitation
    /// finished.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::elicitation::ElicitationCompleteNotificationParams;
    ///
    /// let p: ElicitationCompleteNotificationParams = serde_json::from_str(r#"{"elicitationId":"e1"}"#).unwrap();
    /// assert_eq!(p.elicitation_id, "e1");
    /// ```
    #[derive(Default)]
    pub struct ElicitationCompleteNotificationParams {
        /// The `elicitationId` of the finished URL elicitation.
        req elicitation_id: String = "elicitationId",
        /// Notification metadata.
        opt meta: Meta = "_meta",
    }
}

request_method! {
    /// `elicitation/create`: the server asks the user for information.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::{elicitation::Elicit, RequestMethod};
    /// use talaria_core::version::ProtocolVersion;
    ///
    /// assert_eq!(Elicit::INFO.name, "elicitation/create");
    /// assert!(!Elicit::INFO.exists_in(ProtocolVersion::V2025_03_26));
    /// ```
    Elicit, "elicitation/create", ElicitRequestParams => ElicitResult
}

notification_method! {
    /// `notifications/elicitation/complete` (2025-11-25): a URL-mode elicitation finished.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::{elicitation::ElicitationComplete, NotificationMethod, SentBy};
    ///
    /// assert_eq!(ElicitationComplete::INFO.sent_by, SentBy::Server);
    /// ```
    ElicitationComplete, "notifications/elicitation/complete", ElicitationCompleteNotificationParams
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::schema::test_support::{examples, round_trip, round_trips};
    use crate::schema::{NotificationMethod, RequestMethod};

    #[test]
    fn official_examples_round_trip() {
        for (name, json) in examples("ElicitRequestFormParams") {
            round_trip::<ElicitRequestFormParams>(&name, &json);
            assert!(matches!(round_trip::<ElicitRequestParams>(&name, &json), ElicitRequestParams::Form(_)));
        }
        for (name, json) in examples("ElicitRequestURLParams") {
            round_trip::<ElicitRequestUrlParams>(&name, &json);
            assert!(matches!(round_trip::<ElicitRequestParams>(&name, &json), ElicitRequestParams::Url(_)));
        }
        for (name, json) in examples("ElicitRequest") {
            round_trip::<ElicitRequestParams>(&name, &json["params"]);
        }
        round_trips::<ElicitResult>("ElicitResult");
    }

    #[test]
    fn legacy_and_early_shapes() {
        // 2025-06-18: no `mode`, `EnumSchema` with `enumNames`.
        let req = json!({
            "message": "Pick",
            "requestedSchema": {
                "type": "object",
                "properties": {
                    "color": {"type": "string", "enum": ["r", "g"], "enumNames": ["Red", "Green"]},
                    "n": {"type": "integer", "minimum": 1.5}
                },
                "required": ["color"]
            }
        });
        let p: ElicitRequestParams = serde_json::from_value(req.clone()).unwrap();
        let ElicitRequestParams::Form(form) = &p else { unreachable!("decoded {p:?}") };
        assert!(matches!(form.requested_schema.properties["color"], PrimitiveSchemaDefinition::LegacyTitled(_)));
        assert_eq!(form.mode, None);
        assert_eq!(serde_json::to_value(&p).unwrap(), req);
        // 2025-11-25 URL mode with its id, a task and `_meta`.
        round_trip::<ElicitRequestParams>(
            "url",
            &json!({"mode": "url", "message": "m", "url": "https://x", "elicitationId": "e", "task": {"ttl": 5}, "_meta": {"progressToken": 1}}),
        );
    }

    #[test]
    fn a_forms_fields_keep_the_order_they_came_in_with_or_without_a_mode() {
        for mode in ["", r#""mode":"form","#, r#""_meta":{},"mode":"form","#] {
            let text = format!(
                r#"{{{mode}"message":"m","requestedSchema":{{"type":"object","properties":{{
                    "zeta":{{"type":"string"}},"alpha":{{"type":"integer"}},"mid":{{"type":"boolean"}}}}}}}}"#
            );
            let p: ElicitRequestParams = serde_json::from_str(&text).unwrap();
            let ElicitRequestParams::Form(form) = &p else { unreachable!("decoded {p:?}") };
            assert_eq!(form.requested_schema.properties.keys().collect::<Vec<_>>(), ["zeta", "alpha", "mid"], "{mode}");
        }
        let dup = r#"{"message":"m","message":"n","requestedSchema":{"type":"object","properties":{}}}"#;
        assert!(serde_json::from_str::<ElicitRequestParams>(dup).is_err(), "duplicates are refused");
    }

    #[test]
    fn unknown_members_and_shapes_round_trip() {
        let p: ElicitRequestParams =
            round_trip("unknown mode", &json!({"mode": "voice", "message": "Say your name", "lang": "en"}));
        assert!(matches!(p, ElicitRequestParams::Unknown(_)));
        assert_eq!(p.message(), Some("Say your name"));
        let f: PrimitiveSchemaDefinition =
            round_trip("unknown field", &json!({"type": "array", "items": {"type": "number"}}));
        assert!(matches!(f, PrimitiveSchemaDefinition::Unknown(_)));
        let f: PrimitiveSchemaDefinition = round_trip("extra member", &json!({"type": "string", "pattern": "^a"}));
        assert!(matches!(f, PrimitiveSchemaDefinition::String(ref s) if s.extra.contains_key("pattern")));
        round_trip::<ElicitResult>("future", &json!({"action": "accept", "content": {"tags": ["a"]}, "x": 1}));
    }

    #[test]
    fn missing_required_members_fail() {
        assert!(serde_json::from_value::<ElicitRequestParams>(json!({"message": "m"})).is_err());
        assert!(serde_json::from_value::<ElicitRequestParams>(json!({"mode": "url", "message": "m"})).is_err());
        assert!(serde_json::from_value::<ElicitationSchema>(json!({"type": "object"})).is_err());
        assert!(serde_json::from_value::<ElicitResult>(json!({"content": {}})).is_err());
        assert!(serde_json::from_value::<ElicitResult>(json!({"action": "maybe"})).is_err());
        assert!(serde_json::from_value::<PrimitiveSchemaDefinition>(
            json!({"type": "string", "oneOf": [{"const": "a"}]})
        )
        .is_err());
        assert!(serde_json::from_value::<ElicitationCompleteNotificationParams>(json!({})).is_err());
    }

    #[test]
    fn markers_name_their_methods() {
        assert_eq!(Elicit::INFO.name, "elicitation/create");
        assert_eq!(ElicitationComplete::INFO.name, "notifications/elicitation/complete");
    }
}
