//! Multi round-trip requests (2026-07-28).
//!
//! A 2026-07-28 server cannot send requests of its own. When it needs the client to sample a
//! model, list roots or ask the user while handling a request, it answers with an
//! [`InputRequiredResult`] (`resultType: "input_required"`) holding [`InputRequests`] and/or an
//! opaque `requestState`. The client fulfils the input requests and sends the original request
//! again with [`InputResponses`] (keyed like the requests) and the `requestState` echoed.
//!
//! ```text
//! client                                   server
//!   | -- tools/call ------------------------> |
//!   | <-- resultType: input_required -------- |  inputRequests, requestState
//!   | -- tools/call + inputResponses -------> |  requestState echoed
//!   | <-- resultType: complete -------------- |
//! ```

use crate::alloc_prelude::*;
use alloc::collections::BTreeMap;

use serde::de::IgnoredAny;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::common::{ForRevision, JsonObject, Meta, RequestParams, ResultType};
use super::elicitation::{ElicitRequestParams, ElicitResult};
use super::macros::{mcp_struct, tagged_union, Key};
use super::roots::ListRootsResult;
use super::sampling::{CreateMessageRequestParams, CreateMessageResult};
use crate::version::ProtocolVersion;

mcp_struct! {
    /// An input request asking the client to sample its model.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::mrtr::CreateMessageRequest;
    ///
    /// let r: CreateMessageRequest = serde_json::from_str(
    ///     r#"{"method":"sampling/createMessage","params":{"messages":[],"maxTokens":10}}"#,
    /// ).unwrap();
    /// assert_eq!(r.params.max_tokens, 10);
    /// ```
    pub struct CreateMessageRequest {
        @tag "method" = "sampling/createMessage";
        /// What to sample.
        req params: CreateMessageRequestParams = "params",
    }
}

mcp_struct! {
    /// An input request asking the client for its roots.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::mrtr::ListRootsRequest;
    ///
    /// let r = ListRootsRequest::default();
    /// assert_eq!(serde_json::to_string(&r).unwrap(), r#"{"method":"roots/list"}"#);
    /// ```
    #[derive(Default)]
    pub struct ListRootsRequest {
        @tag "method" = "roots/list";
        /// Parameters (only `_meta`).
        opt params: RequestParams = "params",
    }
}

mcp_struct! {
    /// An input request asking the user for information.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::elicitation::ElicitRequestParams;
    /// use talaria_core::schema::mrtr::ElicitRequest;
    ///
    /// let r: ElicitRequest = serde_json::from_str(
    ///     r#"{"method":"elicitation/create","params":{"mode":"url","message":"m","url":"https://x"}}"#,
    /// ).unwrap();
    /// assert!(matches!(r.params, ElicitRequestParams::Url(_)));
    /// ```
    pub struct ElicitRequest {
        @tag "method" = "elicitation/create";
        /// What to ask.
        req params: ElicitRequestParams = "params",
    }
}

tagged_union! {
    /// A request the server needs the client to fulfil, told apart by `method`.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::mrtr::InputRequest;
    ///
    /// let r: InputRequest = serde_json::from_str(r#"{"method":"roots/list"}"#).unwrap();
    /// assert!(matches!(r, InputRequest::ListRoots(_)));
    /// assert_eq!(r.method(), Some("roots/list"));
    /// ```
    pub enum InputRequest by "method" {
        /// `sampling/createMessage`.
        "sampling/createMessage" => CreateMessage(CreateMessageRequest),
        /// `roots/list`.
        "roots/list" => ListRoots(ListRootsRequest),
        /// `elicitation/create`.
        "elicitation/create" => Elicit(ElicitRequest),
    }
}

impl InputRequest {
    /// The method asked for.
    #[must_use]
    pub fn method(&self) -> Option<&str> {
        let tag = match self {
            Self::CreateMessage(_) => CreateMessageRequest::TAG,
            Self::ListRoots(_) => ListRootsRequest::TAG,
            Self::Elicit(_) => ElicitRequest::TAG,
            Self::Unknown(m) => return m.get("method").and_then(serde_json::Value::as_str),
        };
        tag.map(|(_, method)| method)
    }
}

/// Input requests, keyed by identifiers the server chooses.
pub type InputRequests = BTreeMap<String, InputRequest>;

/// The client's answer to one [`InputRequest`].
///
/// Input responses carry no method, so they are told apart by shape: `roots` means
/// [`ListRootsResult`], `action` [`ElicitResult`], `model` [`CreateMessageResult`]; anything
/// else is kept whole in `Unknown`.
///
/// # Examples
///
/// ```
/// use talaria_core::schema::mrtr::InputResponse;
///
/// let r: InputResponse = serde_json::from_str(r#"{"action":"decline"}"#).unwrap();
/// assert!(matches!(r, InputResponse::Elicit(_)));
/// let r: InputResponse = serde_json::from_str(r#"{"roots":[]}"#).unwrap();
/// assert!(matches!(r, InputResponse::ListRoots(_)));
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum InputResponse {
    /// A sampled message (boxed: it is much larger than the other answers).
    CreateMessage(Box<CreateMessageResult>),
    /// The client's roots.
    ListRoots(ListRootsResult),
    /// The user's answer.
    Elicit(ElicitResult),
    /// A shape this SDK does not know, kept whole.
    Unknown(JsonObject),
}

impl From<CreateMessageResult> for InputResponse {
    fn from(r: CreateMessageResult) -> Self {
        Self::CreateMessage(Box::new(r))
    }
}

impl From<ListRootsResult> for InputResponse {
    fn from(r: ListRootsResult) -> Self {
        Self::ListRoots(r)
    }
}

impl From<ElicitResult> for InputResponse {
    fn from(r: ElicitResult) -> Self {
        Self::Elicit(r)
    }
}

impl Serialize for InputResponse {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::CreateMessage(r) => r.serialize(serializer),
            Self::ListRoots(r) => r.serialize(serializer),
            Self::Elicit(r) => r.serialize(serializer),
            Self::Unknown(m) => m.serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for InputResponse {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let map = JsonObject::deserialize(deserializer)?;
        let (roots, action, model) = (map.contains_key("roots"), map.contains_key("action"), map.contains_key("model"));
        let value = serde_json::Value::Object(map);
        let decoded = if roots {
            serde_json::from_value(value).map(Self::ListRoots)
        } else if action {
            serde_json::from_value(value).map(Self::Elicit)
        } else if model {
            serde_json::from_value(value).map(|r| Self::CreateMessage(Box::new(r)))
        } else {
            return match value {
                serde_json::Value::Object(map) => Ok(Self::Unknown(map)),
                _ => Err(serde::de::Error::custom("unreachable: not an object")),
            };
        };
        decoded.map_err(serde::de::Error::custom)
    }
}

/// The client's answers, keyed like the [`InputRequests`] they answer.
pub type InputResponses = BTreeMap<String, InputResponse>;

mcp_struct! {
    /// A server's answer saying it needs input before it can complete the request.
    ///
    /// At least one of `input_requests` and `request_state` is present.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::mrtr::{InputRequest, InputRequiredResult, ListRootsRequest};
    ///
    /// let mut r = InputRequiredResult::new();
    /// r.input_requests = Some([("roots".to_owned(), InputRequest::from(ListRootsRequest::default()))].into());
    /// let text = serde_json::to_string(&r).unwrap();
    /// assert_eq!(text, r#"{"resultType":"input_required","inputRequests":{"roots":{"method":"roots/list"}}}"#);
    /// let raw = serde_json::value::RawValue::from_string(text).unwrap();
    /// assert!(InputRequiredResult::is_input_required(&raw));
    /// ```
    pub struct InputRequiredResult {
        /// Always `input_required`.
        req result_type: ResultType = "resultType",
        /// The requests to fulfil, keyed by server-chosen ids.
        opt input_requests: InputRequests = "inputRequests",
        /// Opaque state the client echoes on the retried request.
        opt request_state: String = "requestState",
        /// Result metadata.
        opt meta: Meta = "_meta",
    }
}

impl Default for InputRequiredResult {
    fn default() -> Self {
        Self::new()
    }
}

impl InputRequiredResult {
    /// An empty input-required result (fill in `input_requests` or `request_state`).
    #[must_use]
    pub fn new() -> Self {
        Self {
            result_type: ResultType::InputRequired,
            input_requests: None,
            request_state: None,
            meta: None,
            extra: JsonObject::new(),
        }
    }

    /// Whether a result's `resultType` is `input_required`, without decoding the rest.
    ///
    /// Anything that is not an object with that member (including malformed JSON) gives
    /// `false`.
    #[must_use]
    pub fn is_input_required(result: &serde_json::value::RawValue) -> bool {
        serde_json::from_str::<ResultTypeProbe>(result.get()).is_ok_and(|probe| probe.0)
    }
}

/// Reads an object's members, comparing `resultType` and skipping everything else unparsed.
struct ResultTypeProbe(bool);

impl<'de> Deserialize<'de> for ResultTypeProbe {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = ResultTypeProbe;
            fn expecting(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                f.write_str("a result object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<ResultTypeProbe, A::Error> {
                let mut found = false;
                while let Some(key) = map.next_key::<Key<'de>>()? {
                    if key.0 == "resultType" {
                        found = map.next_value::<Key<'de>>()?.0 == "input_required";
                    } else {
                        map.next_value::<IgnoredAny>()?;
                    }
                }
                Ok(ResultTypeProbe(found))
            }
        }
        deserializer.deserialize_map(V)
    }
}

/// `resultType` is always `input_required`, in the only revision that has this result.
impl ForRevision for InputRequiredResult {
    fn adapt_to(&mut self, _version: ProtocolVersion) {
        self.result_type = ResultType::InputRequired;
    }
}

mcp_struct! {
    /// The members a client adds to the parameters of a request it sends again with answers
    /// to input requests.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::mrtr::InputResponseRequestParams;
    ///
    /// let p: InputResponseRequestParams = serde_json::from_str(
    ///     r#"{"_meta":{},"inputResponses":{"r":{"roots":[]}},"requestState":"abc"}"#,
    /// ).unwrap();
    /// assert_eq!(p.request_state.as_deref(), Some("abc"));
    /// assert_eq!(p.input_responses.unwrap().len(), 1);
    /// ```
    #[derive(Default)]
    pub struct InputResponseRequestParams {
        /// Request metadata (required in 2026-07-28).
        opt meta: Meta = "_meta",
        /// The answers, keyed like the input requests.
        opt input_responses: InputResponses = "inputResponses",
        /// The `requestState` of the input-required result, echoed.
        opt request_state: String = "requestState",
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use serde_json::json;
    use serde_json::value::RawValue;

    use super::*;
    use crate::schema::test_support::{examples, round_trip};

    #[test]
    fn official_examples_round_trip() {
        for (name, json) in examples("InputRequests") {
            let r: InputRequests = round_trip(&name, &json);
            assert!(r.values().all(|r| !matches!(r, InputRequest::Unknown(_))), "{name}");
        }
        for (name, json) in examples("InputResponses") {
            let r: InputResponses = round_trip(&name, &json);
            assert!(r.values().all(|r| !matches!(r, InputResponse::Unknown(_))), "{name}");
        }
        for (name, json) in examples("InputRequiredResult") {
            // One example has a form elicitation without `mode`, written back without it.
            let r: InputRequiredResult = round_trip(&name, &json);
            assert_eq!(r.result_type, ResultType::InputRequired);
            let raw = RawValue::from_string(json.to_string()).unwrap();
            assert!(InputRequiredResult::is_input_required(&raw), "{name}");
        }
        for (name, json) in examples("CreateMessageRequest") {
            assert!(matches!(round_trip::<InputRequest>(&name, &json), InputRequest::CreateMessage(_)));
        }
        for (name, json) in examples("ElicitRequest") {
            assert!(matches!(round_trip::<InputRequest>(&name, &json), InputRequest::Elicit(_)));
        }
        // Carries an `id` (kept as an unknown member) and no params.
        for (name, json) in examples("ListRootsRequest") {
            assert!(matches!(round_trip::<InputRequest>(&name, &json), InputRequest::ListRoots(_)));
        }
    }

    #[test]
    fn every_response_kind_decodes_by_shape() {
        let roots: InputResponse = round_trip("roots", &json!({"roots": [{"uri": "file:///a"}]}));
        assert!(matches!(roots, InputResponse::ListRoots(_)));
        let sampled: InputResponse = round_trip(
            "sampled",
            &json!({"role": "assistant", "content": {"type": "text", "text": "x"}, "model": "m"}),
        );
        assert!(matches!(sampled, InputResponse::CreateMessage(_)));
        let unknown: InputResponse = round_trip("unknown", &json!({"approved": true}));
        assert!(matches!(unknown, InputResponse::Unknown(_)));
        // A recognised shape with bad members is an error, not `Unknown`.
        assert!(serde_json::from_value::<InputResponse>(json!({"action": "maybe"})).is_err());
        assert!(serde_json::from_value::<InputResponse>(json!({"model": "m"})).is_err());
    }

    #[test]
    fn unknown_methods_and_members_round_trip() {
        let r: InputRequest =
            round_trip("unknown method", &json!({"method": "files/pick", "params": {"accept": "*.txt"}}));
        assert!(matches!(r, InputRequest::Unknown(_)));
        assert_eq!(r.method(), Some("files/pick"));
        let r: InputRequiredResult = round_trip(
            "unknown members",
            &json!({"resultType": "input_required", "requestState": "s", "retryAfterMs": 10, "_meta": {"a": 1}}),
        );
        assert_eq!(r.extra["retryAfterMs"], 10);
        round_trip::<InputResponseRequestParams>(
            "retry",
            &json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}, "inputResponses": {"x": {"action": "cancel"}}, "requestState": "s", "name": "tool"}),
        );
    }

    #[test]
    fn missing_required_members_fail() {
        assert!(serde_json::from_value::<InputRequiredResult>(json!({"requestState": "s"})).is_err());
        assert!(serde_json::from_value::<InputRequest>(json!({"method": "sampling/createMessage"})).is_err());
        assert!(serde_json::from_value::<InputRequest>(json!({"method": "elicitation/create"})).is_err());
        assert!(serde_json::from_value::<CreateMessageRequest>(json!({"method": "roots/list", "params": {}})).is_err());
    }

    #[test]
    fn probe_reads_only_result_type() {
        let probe =
            |text: &str| InputRequiredResult::is_input_required(&RawValue::from_string(text.to_owned()).unwrap());
        assert!(probe(r#"{"content":[{"type":"text","text":"x"}],"resultType":"input_required"}"#));
        assert!(!probe(r#"{"resultType":"complete","inputRequests":{}}"#));
        assert!(!probe(r#"{"content":[]}"#));
        assert!(!probe(r#"{"resultType":7}"#));
        assert!(!probe(r#"["input_required"]"#));
        assert!(!probe(r#"{"nested":{"resultType":"input_required"}}"#));
    }

    #[test]
    fn adapt_repairs_the_result_type() {
        let mut r = InputRequiredResult { result_type: ResultType::Complete, ..InputRequiredResult::new() };
        r.adapt_to(ProtocolVersion::V2026_07_28);
        assert_eq!(r.result_type, ResultType::InputRequired);
    }
}
