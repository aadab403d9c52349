//! Typed payloads of every method, and the [`PayloadDecoder`] that decodes them in the same pass
//! as the JSON-RPC envelope.
//!
//! [`AnyParams`] holds the parameters of any request or notification, chosen by method name;
//! [`AnyResult`] holds the result of any request, chosen by the method of the request it
//! answers. Methods this SDK does not know (extensions, experimental ones) keep their payload
//! as raw JSON. [`McpPayloads`] plugs both into [`decode_with`](crate::jsonrpc::decode_with).

use crate::alloc_prelude::*;
use serde::de::{self, Deserialize, Deserializer};
use serde_json::value::RawValue;

use super::macros::{FromMap, Key, MapVisitor};
use super::methods::{NotificationMethod, RequestMethod};
use super::mrtr::InputRequiredResult;
use super::tasks::ext::CreateTaskResult;
use super::{
    completion, elicitation, lifecycle, logging, prompts, resources, roots, sampling, subscriptions, tasks, tools,
    utilities, ResultType,
};
use crate::jsonrpc::scan::Word;
use crate::jsonrpc::{PayloadDecoder, RequestId};
use crate::version::{Feature, ProtocolVersion};

/// The type of a payload variant: boxed when marked, to keep the enums small (a value is moved
/// several times on its way out of the decoder).
macro_rules! payload_type {
    (boxed $t:ty) => { Box<$t> };
    ($t:ty) => { $t };
}

/// Wraps a decoded payload as its variant expects.
macro_rules! payload_value {
    (boxed $v:expr) => {
        Box::new($v)
    };
    ($v:expr) => {
        $v
    };
}

macro_rules! any_payloads {
    (
        requests { $( $req:ident => $rpath:path $([$pbox:ident])? $({$rbox:ident})?, )* }
        notifications { $( $note:ident => $npath:path $([$nbox:ident])?, )* }
    ) => {
        /// The typed parameters of any MCP request or notification. Encodes as the params
        /// object itself.
        ///
        /// # Examples
        ///
        /// ```
        /// use talaria_core::schema::AnyParams;
        ///
        /// let mut de = serde_json::Deserializer::from_str(r#"{"name":"echo","arguments":{"x":1}}"#);
        /// let p = AnyParams::decode("tools/call", &mut de).unwrap();
        /// let AnyParams::CallTool(call) = p else { panic!("not tools/call") };
        /// assert_eq!(call.name, "echo");
        /// ```
        #[derive(Debug, Clone)]
        #[non_exhaustive]
        pub enum AnyParams {
            $(
                #[doc = concat!("Parameters of the request [`", stringify!($rpath), "`].")]
                $req(payload_type!($($pbox)? <$rpath as RequestMethod>::Params)),
            )*
            $(
                #[doc = concat!("Parameters of the notification [`", stringify!($npath), "`].")]
                $note(payload_type!($($nbox)? <$npath as NotificationMethod>::Params)),
            )*
            /// A method this SDK does not know: its params (an object or array), kept raw.
            Other(Option<Box<RawValue>>),
        }

        impl AnyParams {
            /// Decodes the params of `method`.
            ///
            /// # Errors
            ///
            /// When the params do not fit the method's type.
            pub fn decode<'de, D: Deserializer<'de>>(method: &str, params: D) -> Result<Self, D::Error> {
                $( if method == <$rpath as RequestMethod>::INFO.name {
                    return Deserialize::deserialize(params).map(|p| Self::$req(payload_value!($($pbox)? p)));
                } )*
                $( if method == <$npath as NotificationMethod>::INFO.name {
                    return Deserialize::deserialize(params).map(|p| Self::$note(payload_value!($($nbox)? p)));
                } )*
                let raw = Box::<RawValue>::deserialize(params)?;
                match raw.get().as_bytes().first() {
                    Some(b'{' | b'[') => Ok(Self::Other(Some(raw))),
                    _ => Err(de::Error::custom(r#""params" must be an object or an array"#)),
                }
            }

            /// The params of `method` when none were sent: those of an empty object, so a method
            /// whose params have required members reports them missing.
            ///
            /// # Errors
            ///
            /// When the method requires params.
            pub fn absent<E: de::Error>(method: &str) -> Result<Self, E> {
                $( if method == <$rpath as RequestMethod>::INFO.name {
                    return Self::decode(method, &mut serde_json::Deserializer::from_str("{}")).map_err(E::custom);
                } )*
                $( if method == <$npath as NotificationMethod>::INFO.name {
                    return Self::decode(method, &mut serde_json::Deserializer::from_str("{}")).map_err(E::custom);
                } )*
                Ok(Self::Other(None))
            }
        }

        /// The typed result of any MCP request. Encodes as the result object itself.
        ///
        /// # Examples
        ///
        /// ```
        /// use talaria_core::schema::AnyResult;
        ///
        /// let mut de = serde_json::Deserializer::from_str(r#"{"tools":[]}"#);
        /// let r = AnyResult::decode("tools/list", None, &mut de).unwrap();
        /// assert!(matches!(r, AnyResult::ListTools(_)));
        /// ```
        #[derive(Debug, Clone)]
        #[non_exhaustive]
        pub enum AnyResult {
            $(
                #[doc = concat!("Result of [`", stringify!($rpath), "`].")]
                $req(payload_type!($($rbox)? <$rpath as RequestMethod>::Result)),
            )*
            /// The server needs more input before it can answer (2026-07-28 MRTR).
            InputRequired(Box<InputRequiredResult>),
            /// The request became a task (the 2026-07-28 tasks extension).
            Task(Box<CreateTaskResult>),
            /// The result of a method this SDK does not know, kept raw.
            Other(Box<RawValue>),
        }

        impl serde::Serialize for AnyParams {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                match self {
                    $( Self::$req(p) => p.serialize(serializer), )*
                    $( Self::$note(p) => p.serialize(serializer), )*
                    Self::Other(raw) => raw.serialize(serializer),
                }
            }
        }

        impl serde::Serialize for AnyResult {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                match self {
                    $( Self::$req(r) => r.serialize(serializer), )*
                    Self::InputRequired(r) => r.serialize(serializer),
                    Self::Task(r) => r.serialize(serializer),
                    Self::Other(raw) => raw.serialize(serializer),
                }
            }
        }

        impl AnyResult {
            fn decode_complete<'de, D: Deserializer<'de>>(method: &str, result: D) -> Result<Self, D::Error> {
                $( if method == <$rpath as RequestMethod>::INFO.name {
                    return Deserialize::deserialize(result).map(|r| Self::$req(payload_value!($($rbox)? r)));
                } )*
                Box::<RawValue>::deserialize(result).map(Self::Other)
            }
        }
    };
}

any_payloads! {
    requests {
        CallTool => tools::CallTool [boxed] {boxed},
        ListTools => tools::ListTools {boxed},
        Initialize => lifecycle::Initialize [boxed] {boxed},
        Ping => utilities::Ping,
        Discover => lifecycle::Discover {boxed},
        ListPrompts => prompts::ListPrompts {boxed},
        GetPrompt => prompts::GetPrompt [boxed] {boxed},
        ListResources => resources::ListResources {boxed},
        ListResourceTemplates => resources::ListResourceTemplates {boxed},
        ReadResource => resources::ReadResource {boxed},
        Subscribe => resources::Subscribe,
        Unsubscribe => resources::Unsubscribe,
        SubscriptionsListen => subscriptions::SubscriptionsListen,
        Complete => completion::Complete [boxed] {boxed},
        SetLevel => logging::SetLevel,
        CreateMessage => sampling::CreateMessage [boxed] {boxed},
        ListRoots => roots::ListRoots,
        Elicit => elicitation::Elicit [boxed] {boxed},
        GetTask => tasks::GetTask {boxed},
        GetTaskPayload => tasks::GetTaskPayload,
        CancelTask => tasks::CancelTask {boxed},
        ListTasks => tasks::ListTasks {boxed},
    }
    notifications {
        Progress => utilities::Progress,
        LogMessage => logging::LogMessage,
        Cancelled => utilities::Cancelled,
        Initialized => lifecycle::Initialized,
        ToolListChanged => tools::ToolListChanged,
        PromptListChanged => prompts::PromptListChanged,
        ResourceListChanged => resources::ResourceListChanged,
        ResourceUpdated => resources::ResourceUpdated,
        RootsListChanged => roots::RootsListChanged,
        SubscriptionsAcknowledged => subscriptions::SubscriptionsAcknowledged,
        ElicitationComplete => elicitation::ElicitationComplete,
        TaskStatusChanged => tasks::TaskStatusChanged [boxed],
    }
}

/// Methods whose result may be an `InputRequiredResult` (2026-07-28), or a task handle under the
/// tasks extension.
const INTERIM_RESULT_METHODS: [&str; 3] = ["tools/call", "prompts/get", "resources/read"];

impl AnyResult {
    /// Decodes the result of a `method` request under `version` (`None` before a revision is
    /// agreed, which reads results as complete).
    ///
    /// In the stateless era a `tools/call`, `prompts/get` or `resources/read` result may be
    /// `input_required` (or a task): its `resultType` is probed first, then the matching type
    /// decoded.
    ///
    /// # Errors
    ///
    /// When the result does not fit the method's type.
    pub fn decode<'de, D: Deserializer<'de>>(
        method: &str,
        version: Option<ProtocolVersion>,
        result: D,
    ) -> Result<Self, D::Error> {
        let interim_possible =
            version.is_some_and(|v| v.supports(Feature::Mrtr)) && INTERIM_RESULT_METHODS.contains(&method);
        if !interim_possible {
            return Self::decode_complete(method, result);
        }
        let raw = Box::<RawValue>::deserialize(result)?;
        let text = raw.get();
        let decoded = match result_type_of(&raw) {
            Some(ResultType::InputRequired) => serde_json::from_str(text).map(|r| Self::InputRequired(Box::new(r))),
            Some(ResultType::Task) => serde_json::from_str(text).map(|t| Self::Task(Box::new(t))),
            _ => Self::decode_complete(method, &mut serde_json::Deserializer::from_str(text)),
        };
        decoded.map_err(de::Error::custom)
    }
}

/// The `resultType` of a result object, reading nothing else.
///
/// # Examples
///
/// ```
/// use talaria_core::schema::{result_type_of, ResultType};
/// use serde_json::value::RawValue;
///
/// let raw = RawValue::from_string(r#"{"content":[],"resultType":"input_required"}"#.into()).unwrap();
/// assert_eq!(result_type_of(&raw), Some(ResultType::InputRequired));
/// let legacy = RawValue::from_string(r#"{"content":[]}"#.into()).unwrap();
/// assert_eq!(result_type_of(&legacy), None);
/// ```
#[must_use]
pub fn result_type_of(result: &RawValue) -> Option<ResultType> {
    static RESULT_TYPE: Word = Word::new("\"resultType\"");
    if !RESULT_TYPE.may_be_in(result.get().as_bytes()) {
        return None;
    }
    let mut de = serde_json::Deserializer::from_str(result.get());
    de.deserialize_map(MapVisitor::<ResultTypeProbe>::new("a result object")).ok().and_then(|p| p.0)
}

/// Reads only `resultType`, skipping every other member unparsed.
struct ResultTypeProbe(Option<ResultType>);

impl FromMap for ResultTypeProbe {
    fn from_map<'de, A: de::MapAccess<'de>>(map: &mut A) -> Result<Self, A::Error> {
        let mut found = None;
        while let Some(key) = map.next_key::<Key<'de>>()? {
            if key.0 == "resultType" {
                found = Some(map.next_value()?);
            } else {
                map.next_value::<de::IgnoredAny>()?;
            }
        }
        Ok(Self(found))
    }
}

/// Decodes every payload into its MCP type while the envelope is read.
///
/// `pending` names the method of an outgoing request by its id, so that a response's result is
/// decoded as that method's result (an id it does not know keeps the result raw).
///
/// # Examples
///
/// ```
/// use talaria_core::jsonrpc::{decode_with, Envelope, RequestId};
/// use talaria_core::schema::{AnyParams, AnyResult, McpPayloads};
/// use talaria_core::version::ProtocolVersion;
///
/// let mut payloads = McpPayloads::new(Some(ProtocolVersion::V2025_06_18), |id: &RequestId| {
///     (*id == RequestId::Number(1)).then_some("tools/list")
/// });
/// let e = decode_with(br#"{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}"#, &mut payloads).unwrap();
/// assert!(matches!(e, Envelope::Response { result: AnyResult::ListTools(_), .. }));
/// let e = decode_with(br#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":2}}"#, &mut payloads).unwrap();
/// assert!(matches!(e, Envelope::Notification { params: AnyParams::Progress(_), .. }));
/// ```
#[derive(Debug, Clone)]
pub struct McpPayloads<L> {
    version: Option<ProtocolVersion>,
    pending: L,
}

impl<L: FnMut(&RequestId) -> Option<&'static str>> McpPayloads<L> {
    /// A decoder for traffic under `version`, with `pending` naming outgoing requests' methods.
    pub const fn new(version: Option<ProtocolVersion>, pending: L) -> Self {
        Self { version, pending }
    }
}

impl<L: FnMut(&RequestId) -> Option<&'static str>> PayloadDecoder for McpPayloads<L> {
    type Params = AnyParams;
    type Result = AnyResult;

    fn params<'de, D: Deserializer<'de>>(&mut self, method: &str, params: D) -> Result<AnyParams, D::Error> {
        AnyParams::decode(method, params)
    }

    fn no_params<E: de::Error>(&mut self, method: &str) -> Result<AnyParams, E> {
        AnyParams::absent(method)
    }

    fn result<'de, D: Deserializer<'de>>(&mut self, id: &RequestId, result: D) -> Result<AnyResult, D::Error> {
        match (self.pending)(id) {
            Some(method) => AnyResult::decode(method, self.version, result),
            None => Box::<RawValue>::deserialize(result).map(AnyResult::Other),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
mod tests {
    use super::*;
    use crate::jsonrpc::{decode_with, Envelope, TypedDecodeError};

    fn payloads() -> McpPayloads<impl FnMut(&RequestId) -> Option<&'static str>> {
        McpPayloads::new(Some(ProtocolVersion::V2026_07_28), |id: &RequestId| match id {
            RequestId::Number(1) => Some("tools/call"),
            RequestId::Number(2) => Some("tools/list"),
            _ => None,
        })
    }

    #[test]
    fn every_method_in_the_table_has_typed_params() {
        for m in super::super::METHODS {
            let p = AnyParams::absent::<serde_json::Error>(m.name);
            assert!(!matches!(p, Ok(AnyParams::Other(_))), "{} has no typed params", m.name);
        }
    }

    #[test]
    fn absent_params_report_required_members() {
        let err = decode_with(br#"{"jsonrpc":"2.0","id":5,"method":"tools/call"}"#, &mut payloads()).unwrap_err();
        let TypedDecodeError::Params { id, method, detail } = &err else { panic!("{err:?}") };
        assert_eq!((id.clone(), method.as_str()), (Some(RequestId::Number(5)), "tools/call"));
        assert!(detail.contains("name"), "{detail}");
        assert_eq!(err.to_response().unwrap().error.code, crate::jsonrpc::ErrorCode::INVALID_PARAMS);
        let ok = decode_with(br#"{"jsonrpc":"2.0","id":5,"method":"tools/list"}"#, &mut payloads()).unwrap();
        assert!(matches!(ok, Envelope::Request { params: AnyParams::ListTools(_), .. }));
    }

    #[test]
    fn stateless_interim_results_are_recognised() {
        let input = br#"{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","requestState":"s"}}"#;
        let e = decode_with(input, &mut payloads()).unwrap();
        assert!(matches!(e, Envelope::Response { result: AnyResult::InputRequired(_), .. }));
        let done = br#"{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[]}}"#;
        assert!(matches!(
            decode_with(done, &mut payloads()).unwrap(),
            Envelope::Response { result: AnyResult::CallTool(_), .. }
        ));
        let unknown_id = br#"{"jsonrpc":"2.0","id":9,"result":{"x":1}}"#;
        assert!(matches!(
            decode_with(unknown_id, &mut payloads()).unwrap(),
            Envelope::Response { result: AnyResult::Other(_), .. }
        ));
    }

    #[test]
    fn payload_before_method_is_decoded_after_the_envelope() {
        let reordered =
            br#"{"params":{"progressToken":"t","progress":1},"jsonrpc":"2.0","method":"notifications/progress"}"#;
        let e = decode_with(reordered, &mut payloads()).unwrap();
        assert!(matches!(e, Envelope::Notification { params: AnyParams::Progress(_), .. }));
        let result_first = br#"{"result":{"tools":[]},"id":2,"jsonrpc":"2.0"}"#;
        assert!(matches!(
            decode_with(result_first, &mut payloads()).unwrap(),
            Envelope::Response { result: AnyResult::ListTools(_), .. }
        ));
    }

    #[test]
    fn malformed_results_are_reported_against_their_request() {
        let bad = br#"{"jsonrpc":"2.0","id":2,"result":{"tools":"nope"}}"#;
        let err = decode_with(bad, &mut payloads()).unwrap_err();
        assert!(matches!(err, TypedDecodeError::Result { id: RequestId::Number(2), .. }), "{err:?}");
        assert!(err.to_response().is_none(), "a response is never answered");
    }

    #[test]
    fn unknown_methods_keep_raw_params() {
        let e = decode_with(br#"{"jsonrpc":"2.0","id":3,"method":"x/y","params":[1]}"#, &mut payloads()).unwrap();
        let Envelope::Request { params: AnyParams::Other(Some(raw)), .. } = e else { panic!("{e:?}") };
        assert_eq!(raw.get(), "[1]");
    }
}
