//! Tool arguments mirrored into `Mcp-Param-{Name}` headers (2026-07-28): the `x-mcp-header`
//! annotations of a tool's input schema, the headers a client sends with a call, and the
//! server's check that they match the call's arguments.
//!
//! An annotation sits in the schema of a property reachable from the schema's root through
//! `properties` keys only (no `items`, composition, conditionals or `$ref` on the way), on a
//! property of type `string`, `integer` or `boolean`; its value is an HTTP token, unique
//! (case-insensitively) in the schema. A client over HTTP must not offer a tool whose
//! annotations break these rules.

use crate::alloc_prelude::*;
use alloc::collections::BTreeMap;

use serde_json::{Map, Value};

use super::headers::{decode_value, encode_value, HeaderLookup, PARAM_PREFIX};
use crate::jsonrpc::ErrorObject;

/// The schema keyword naming the header a property is mirrored into.
pub const ANNOTATION: &str = "x-mcp-header";

/// [`ANNOTATION`] looked for in a reply's text before it is parsed (escapes included).
static ANNOTATION_WORD: crate::jsonrpc::scan::Word = crate::jsonrpc::scan::Word::new(ANNOTATION);

/// The largest (and, negated, smallest) integer a mirrored header may carry: 2^53 - 1.
const MAX_SAFE_INTEGER: i64 = (1 << 53) - 1;

/// One mirrored argument: the `{Name}` of its `Mcp-Param-{Name}` header and the property
/// names leading to it from the arguments object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParamHeader {
    /// The annotation's value, the `{Name}` part of the header.
    pub name: String,
    /// The property names from the arguments object's root to the value.
    pub path: Vec<String>,
}

impl ParamHeader {
    /// The full header name, `Mcp-Param-{Name}`.
    #[must_use]
    pub fn header_name(&self) -> String {
        format!("{PARAM_PREFIX}{}", self.name)
    }

    /// The value at this header's path in `arguments`, if there is one (a `null` counts as
    /// none).
    fn value_in<'a>(&self, arguments: &'a Map<String, Value>) -> Option<&'a Value> {
        let (last, parents) = self.path.split_last()?;
        let mut object = arguments;
        for key in parents {
            object = object.get(key)?.as_object()?;
        }
        object.get(last).filter(|value| !value.is_null())
    }
}

/// Why a tool's `x-mcp-header` annotations are invalid.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AnnotationError {
    /// The annotation is not a non-empty HTTP token (`1*tchar`).
    #[error("x-mcp-header {0:?} is not an HTTP header name token")]
    NotAToken(String),
    /// Two annotations name the same header (compared case-insensitively).
    #[error("x-mcp-header {0:?} is used twice")]
    Duplicate(String),
    /// The annotated property is not of type `string`, `integer` or `boolean`.
    #[error("x-mcp-header {0:?} is on a property that is not a string, integer or boolean")]
    NotPrimitive(String),
    /// The annotation is not reachable from the root through `properties` alone.
    #[error("x-mcp-header {0:?} is not reachable from the schema root through properties")]
    Unreachable(String),
}

/// The mirrored arguments an input schema declares (ordered by property name).
///
/// # Errors
///
/// [`AnnotationError`] for the first annotation that breaks the spec's rules: a client over
/// HTTP leaves such a tool out of its `tools/list`.
///
/// # Examples
///
/// ```
/// use serde_json::json;
/// use talaria_core::http::param_headers::annotations;
///
/// let schema = json!({"type": "object", "properties": {
///     "region": {"type": "string", "x-mcp-header": "Region"},
///     "query": {"type": "string"}}});
/// let found = annotations(schema.as_object().unwrap()).unwrap();
/// assert_eq!((found[0].header_name(), found[0].path.clone()), ("Mcp-Param-Region".to_owned(), vec!["region".to_owned()]));
///
/// let float = json!({"properties": {"t": {"type": "number", "x-mcp-header": "T"}}});
/// assert!(annotations(float.as_object().unwrap()).is_err());
/// ```
pub fn annotations(input_schema: &Map<String, Value>) -> Result<Vec<ParamHeader>, AnnotationError> {
    let mut found = Vec::new();
    walk(input_schema, Some(&mut Vec::new()), &mut found)?;
    for (i, header) in found.iter().enumerate() {
        if found[..i].iter().any(|earlier| earlier.name.eq_ignore_ascii_case(&header.name)) {
            return Err(AnnotationError::Duplicate(header.name.clone()));
        }
    }
    Ok(found)
}

/// Looks for annotations in `schema`, at `path` when it is reachable through `properties`
/// alone (`None` when it is not: any annotation found there is an error).
fn walk(
    schema: &Map<String, Value>,
    path: Option<&mut Vec<String>>,
    found: &mut Vec<ParamHeader>,
) -> Result<(), AnnotationError> {
    let mut path = path;
    if let Some(annotation) = schema.get(ANNOTATION) {
        let name = annotation.as_str().map_or_else(|| annotation.to_string(), str::to_owned);
        let Some(at) = path.as_deref().filter(|at| !at.is_empty()) else {
            return Err(AnnotationError::Unreachable(name));
        };
        if !annotation.as_str().is_some_and(is_token) {
            return Err(AnnotationError::NotAToken(name));
        }
        if !matches!(schema.get("type").and_then(Value::as_str), Some("string" | "integer" | "boolean")) {
            return Err(AnnotationError::NotPrimitive(name));
        }
        found.push(ParamHeader { name, path: at.clone() });
    }
    for (key, value) in schema {
        match (key.as_str(), value, path.as_deref_mut()) {
            ("properties", Value::Object(properties), Some(at)) => {
                for (property, sub) in properties {
                    if let Value::Object(sub) = sub {
                        at.push(property.clone());
                        walk(sub, Some(at), found)?;
                        at.pop();
                    }
                }
            }
            _ => walk_unreachable(value, found)?,
        }
    }
    Ok(())
}

/// Any annotation inside `value` is unreachable.
fn walk_unreachable(value: &Value, found: &mut Vec<ParamHeader>) -> Result<(), AnnotationError> {
    match value {
        Value::Object(object) => walk(object, None, found),
        Value::Array(items) => items.iter().try_for_each(|item| walk_unreachable(item, found)),
        _ => Ok(()),
    }
}

/// Whether `name` is an HTTP token: one or more of RFC 9110's `tchar`.
fn is_token(name: &str) -> bool {
    !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

/// A mirrored argument's header text: a string as is (Base64-wrapped when it is not plain
/// header text), an integer in decimal, a boolean as `true`/`false`. `None` for anything
/// else (the value does not fit its schema; the server's validation answers that).
fn header_text(value: &Value) -> Option<String> {
    match value {
        Value::String(text) => Some(encode_value(text).into_owned()),
        Value::Bool(flag) => Some(flag.to_string()),
        Value::Number(n) => n.as_i64().filter(|n| n.abs() <= MAX_SAFE_INTEGER).map(|n| n.to_string()),
        _ => None,
    }
}

/// The `Mcp-Param-*` headers a client sends with a call of a tool whose mirrored arguments
/// are `headers`: one per argument present (and not `null`) in `arguments`.
///
/// # Examples
///
/// ```
/// use serde_json::json;
/// use talaria_core::http::param_headers::{annotations, param_headers};
///
/// let schema = json!({"properties": {"region": {"type": "string", "x-mcp-header": "Region"},
///     "n": {"type": "integer", "x-mcp-header": "N"}}});
/// let headers = annotations(schema.as_object().unwrap()).unwrap();
/// let arguments = json!({"region": "Zürich", "n": 42});
/// let sent = param_headers(&headers, arguments.as_object().unwrap());
/// assert!(sent.contains(&("Mcp-Param-Region".to_owned(), "=?base64?WsO8cmljaA==?=".to_owned())));
/// assert!(sent.contains(&("Mcp-Param-N".to_owned(), "42".to_owned())));
/// ```
#[must_use]
pub fn param_headers(headers: &[ParamHeader], arguments: &Map<String, Value>) -> Vec<(String, String)> {
    headers
        .iter()
        .filter_map(|header| Some((header.header_name(), header_text(header.value_in(arguments)?)?)))
        .collect()
}

/// Checks a call's `Mcp-Param-*` headers against its `arguments`, as a server must: each
/// mirrored argument present in the body has its header, with the same value (integers
/// compared as numbers), and no header stands for an argument the body lacks.
///
/// # Errors
///
/// A `-32020` header mismatch naming the header (HTTP 400).
///
/// # Examples
///
/// ```
/// use serde_json::json;
/// use talaria_core::http::param_headers::{annotations, check_param_headers};
///
/// let schema = json!({"properties": {"region": {"type": "string", "x-mcp-header": "Region"}}});
/// let mirrored = annotations(schema.as_object().unwrap()).unwrap();
/// let arguments = json!({"region": "us-west1"});
/// let sent = [("mcp-param-region", "us-west1")];
/// assert!(check_param_headers(&mirrored, arguments.as_object().unwrap(), &sent[..]).is_ok());
/// let missing: [(&str, &str); 0] = [];
/// assert_eq!(check_param_headers(&mirrored, arguments.as_object().unwrap(), &missing[..]).unwrap_err().code.0, -32020);
/// ```
pub fn check_param_headers(
    headers: &[ParamHeader],
    arguments: &Map<String, Value>,
    sent: &(impl HeaderLookup + ?Sized),
) -> Result<(), ErrorObject> {
    let mismatch = |what: String| ErrorObject::header_mismatch(format!("Header mismatch: {what}"));
    for header in headers {
        let name = header.header_name();
        if sent.header_count(&name) > 1 {
            return Err(mismatch(format!("{name} header is repeated")));
        }
        let expected = header.value_in(arguments);
        let raw = sent.header(&name);
        let (expected, raw) = match (expected, raw) {
            (None, None) => continue,
            (Some(_), None) => return Err(mismatch(format!("{name} header is missing"))),
            (None, Some(_)) => return Err(mismatch(format!("{name} header has no argument in the body"))),
            (Some(expected), Some(raw)) => (expected, raw),
        };
        let value = decode_value(raw).map_err(|e| mismatch(format!("{name} header: {e}")))?;
        let agrees = match expected {
            Value::String(text) => *text == value,
            Value::Bool(flag) => value == if *flag { "true" } else { "false" },
            Value::Number(n) => n.as_i64().is_some_and(|n| value.trim().parse::<i64>() == Ok(n)),
            _ => false,
        };
        if !agrees {
            return Err(mismatch(format!("{name} header value '{value}' does not match body value {expected}")));
        }
    }
    Ok(())
}

/// What a client learnt of the arguments each tool mirrors into `Mcp-Param-*` headers, from
/// the `tools/list` answers it saw.
///
/// # Examples
///
/// ```
/// use talaria_core::http::param_headers::MirroredTools;
///
/// let mut tools = MirroredTools::default();
/// tools.learn(br#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"w","inputSchema":
///     {"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}}]}}"#);
/// assert_eq!(tools.headers("w", r#"{"region":"eu"}"#), [("Mcp-Param-Region".to_owned(), "eu".to_owned())]);
/// assert!(tools.headers("other", "{}").is_empty());
/// ```
#[derive(Debug, Clone, Default)]
pub struct MirroredTools(BTreeMap<String, Vec<ParamHeader>>);

impl MirroredTools {
    /// Learns from `reply`, the JSON-RPC answer to a `tools/list`: each listed tool's
    /// mirrored arguments replace what was known of it. A page without any `x-mcp-header` is
    /// not decoded while nothing is known.
    pub fn learn(&mut self, reply: &[u8]) {
        #[derive(serde::Deserialize)]
        struct Page {
            result: PageResult,
        }
        #[derive(serde::Deserialize)]
        struct PageResult {
            tools: Vec<ListedTool>,
        }
        #[derive(serde::Deserialize)]
        struct ListedTool {
            name: String,
            #[serde(rename = "inputSchema", default)]
            input_schema: Map<String, Value>,
        }
        if self.0.is_empty() && !ANNOTATION_WORD.may_be_in(reply) {
            return;
        }
        let Ok(page) = serde_json::from_slice::<Page>(reply) else { return };
        for tool in page.result.tools {
            match annotations(&tool.input_schema) {
                Ok(mirrored) if !mirrored.is_empty() => {
                    self.0.insert(tool.name, mirrored);
                }
                _ => {
                    self.0.remove(&tool.name);
                }
            }
        }
    }

    /// The `Mcp-Param-*` headers of a call of `tool` with `arguments` (JSON text); none for
    /// a tool not known to mirror any.
    #[must_use]
    pub fn headers(&self, tool: &str, arguments: &str) -> Vec<(String, String)> {
        let Some(mirrored) = self.0.get(tool) else { return Vec::new() };
        let arguments = serde_json::from_str::<Map<String, Value>>(arguments).unwrap_or_default();
        param_headers(mirrored, &arguments)
    }
}

/// A `tools/list` result without the tools whose `x-mcp-header` annotations are invalid, as
/// a client must present it; `None` when every tool may stay (the result is then used as it
/// is: most pages are not decoded at all).
///
/// # Examples
///
/// ```
/// use serde_json::{json, value::to_raw_value};
/// use talaria_core::http::param_headers::without_invalid_mirroring;
///
/// let page = json!({"tools": [
///     {"name": "good", "inputSchema": {"type": "object", "properties": {"r": {"type": "string", "x-mcp-header": "R"}}}},
///     {"name": "bad", "inputSchema": {"type": "object", "properties": {"f": {"type": "number", "x-mcp-header": "F"}}}}]});
/// let kept = without_invalid_mirroring(&to_raw_value(&page).unwrap()).unwrap();
/// let kept: serde_json::Value = serde_json::from_str(kept.get()).unwrap();
/// assert_eq!(kept["tools"].as_array().unwrap().len(), 1);
/// assert_eq!(kept["tools"][0]["name"], "good");
/// ```
#[must_use]
pub fn without_invalid_mirroring(result: &serde_json::value::RawValue) -> Option<Box<serde_json::value::RawValue>> {
    // Most pages mirror nothing and are not decoded.
    if !ANNOTATION_WORD.may_be_in(result.get().as_bytes()) {
        return None;
    }
    let mut page: Map<String, Value> = serde_json::from_str(result.get()).ok()?;
    let Some(Value::Array(tools)) = page.get_mut("tools") else { return None };
    let before = tools.len();
    tools.retain(|tool| {
        tool.get("inputSchema").and_then(Value::as_object).is_none_or(|schema| annotations(schema).is_ok())
    });
    if tools.len() == before {
        return None;
    }
    serde_json::value::to_raw_value(&page).ok()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use proptest::prelude::*;
    use serde_json::json;

    use super::*;

    fn of(schema: &Value) -> Result<Vec<ParamHeader>, AnnotationError> {
        annotations(schema.as_object().unwrap())
    }

    #[test]
    fn nested_properties_are_reachable_and_everything_else_is_not() {
        let nested = json!({"properties": {"where": {"type": "object", "properties": {
            "zone": {"type": "string", "x-mcp-header": "Zone"}}}}});
        assert_eq!(of(&nested).unwrap()[0].path, ["where", "zone"]);
        for unreachable in [
            json!({"type": "string", "x-mcp-header": "Root"}),
            json!({"properties": {"list": {"type": "array", "items": {"type": "string", "x-mcp-header": "I"}}}}),
            json!({"properties": {"a": {"oneOf": [{"type": "string", "x-mcp-header": "O"}]}}}),
            json!({"$defs": {"x": {"type": "string", "x-mcp-header": "D"}}, "properties": {"x": {"$ref": "#/$defs/x"}}}),
            json!({"if": {"properties": {"a": {"type": "string", "x-mcp-header": "C"}}}}),
        ] {
            assert!(matches!(of(&unreachable), Err(AnnotationError::Unreachable(_))), "{unreachable}");
        }
    }

    #[test]
    fn names_types_and_duplicates_are_checked() {
        let bad_names = [json!(""), json!("Has Space"), json!("Colon:"), json!(7)];
        for name in bad_names {
            let schema = json!({"properties": {"a": {"type": "string", "x-mcp-header": name}}});
            assert!(matches!(of(&schema), Err(AnnotationError::NotAToken(_))), "{schema}");
        }
        for kind in ["number", "object", "array", "null"] {
            let schema = json!({"properties": {"a": {"type": kind, "x-mcp-header": "A"}}});
            assert!(matches!(of(&schema), Err(AnnotationError::NotPrimitive(_))), "{kind}");
        }
        let twice = json!({"properties": {"a": {"type": "string", "x-mcp-header": "Region"},
            "b": {"type": "string", "x-mcp-header": "region"}}});
        assert_eq!(of(&twice), Err(AnnotationError::Duplicate("region".into())));
        assert_eq!(of(&json!({"type": "object"})), Ok(Vec::new()), "no annotation, nothing mirrored");
    }

    #[test]
    fn absent_and_null_arguments_send_no_header_and_need_none() {
        let mirrored = of(&json!({"properties": {"a": {"type": "string", "x-mcp-header": "A"},
            "b": {"type": "boolean", "x-mcp-header": "B"}}}))
        .unwrap();
        let arguments = json!({"a": null});
        let arguments = arguments.as_object().unwrap();
        assert!(param_headers(&mirrored, arguments).is_empty());
        let none: [(&str, &str); 0] = [];
        assert!(check_param_headers(&mirrored, arguments, &none[..]).is_ok());
        let stray = [("Mcp-Param-B", "true")];
        assert!(check_param_headers(&mirrored, arguments, &stray[..]).is_err(), "a header for no argument");
    }

    #[test]
    fn integers_compare_as_numbers_and_mismatches_are_named() {
        let mirrored = of(&json!({"properties": {"n": {"type": "integer", "x-mcp-header": "N"}}})).unwrap();
        let arguments = json!({"n": 42});
        let arguments = arguments.as_object().unwrap();
        assert!(check_param_headers(&mirrored, arguments, &[("Mcp-Param-N", "42")][..]).is_ok());
        assert!(check_param_headers(&mirrored, arguments, &[("Mcp-Param-N", "042")][..]).is_ok());
        let wrong = check_param_headers(&mirrored, arguments, &[("Mcp-Param-N", "43")][..]).unwrap_err();
        assert!(wrong.message.contains("Mcp-Param-N"), "{}", wrong.message);
        let repeated = [("Mcp-Param-N", "42"), ("mcp-param-n", "42")];
        assert!(check_param_headers(&mirrored, arguments, &repeated[..]).is_err());
        let unsafe_int = json!({"n": 1_u64 << 60});
        assert!(param_headers(&mirrored, unsafe_int.as_object().unwrap()).is_empty(), "past 2^53: not sent");
    }

    proptest! {
        /// What a client sends, the server accepts, for any string, integer or boolean.
        #[test]
        fn what_a_client_sends_the_server_accepts(text in ".*", n in -MAX_SAFE_INTEGER..=MAX_SAFE_INTEGER, flag: bool) {
            let mirrored = of(&json!({"properties": {
                "s": {"type": "string", "x-mcp-header": "S"},
                "n": {"type": "integer", "x-mcp-header": "N"},
                "f": {"type": "boolean", "x-mcp-header": "F"}}})).unwrap();
            let arguments = json!({"s": text, "n": n, "f": flag});
            let arguments = arguments.as_object().unwrap();
            let sent = param_headers(&mirrored, arguments);
            prop_assert_eq!(sent.len(), 3);
            prop_assert!(check_param_headers(&mirrored, arguments, &sent[..]).is_ok());
        }
    }
}
