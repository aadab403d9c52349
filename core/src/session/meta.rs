//! Reading and writing `_meta` in raw params and results without decoding the rest.

use crate::alloc_prelude::*;
use serde::de::{self, Deserializer as _, IgnoredAny, MapAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::error::SendError;
use crate::jsonrpc::scan::Word;
use crate::schema::lifecycle::RequestMeta;
use crate::schema::{result_type_of, Meta};

/// The `_meta` key, to skip parses of texts without it.
static META: Word = Word::new("\"_meta\"");

/// The `_meta` of raw params, if any; every other member is skipped unparsed.
pub(super) fn request_meta(params: Option<&RawValue>) -> Result<Option<RequestMeta>, serde_json::Error> {
    let Some(raw) = params else { return Ok(None) };
    if !raw.get().starts_with('{') || !META.may_be_in(raw.get().as_bytes()) {
        return Ok(None);
    }
    let mut de = serde_json::Deserializer::from_str(raw.get());
    de.deserialize_map(MetaProbe)
}

struct MetaProbe;

impl<'de> Visitor<'de> for MetaProbe {
    type Value = Option<RequestMeta>;

    fn expecting(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("a params object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut meta = None;
        while let Some(key) = map.next_key::<alloc::borrow::Cow<'de, str>>()? {
            if key == "_meta" {
                if meta.is_some() {
                    return Err(de::Error::custom("duplicate member \"_meta\""));
                }
                meta = map.next_value::<Option<RequestMeta>>()?;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(meta)
    }
}

/// Whether the raw object has a top-level member named `name`.
fn has_member(raw: &RawValue, name: &str) -> bool {
    struct Probe<'a>(&'a str);
    impl<'de> Visitor<'de> for Probe<'_> {
        type Value = bool;
        fn expecting(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
            f.write_str("an object")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<bool, A::Error> {
            let mut found = false;
            while let Some(key) = map.next_key::<alloc::borrow::Cow<'de, str>>()? {
                found |= key == self.0;
                map.next_value::<IgnoredAny>()?;
            }
            Ok(found)
        }
    }
    serde_json::Deserializer::from_str(raw.get()).deserialize_map(Probe(name)).unwrap_or(false)
}

/// Adds `entries` to `params._meta`, creating the params object and `_meta` as needed.
///
/// When the params have no `_meta` yet, the member is spliced into the text; otherwise the
/// params are decoded, merged and encoded again.
pub(super) fn with_meta(params: Option<Box<RawValue>>, entries: Meta) -> Result<Box<RawValue>, SendError> {
    merge_meta(params, entries, true)
}

/// Adds to a result's `_meta` those of `entries` it does not have yet (what the application
/// put there stays); a result that is not an object is left as it is.
pub(super) fn with_meta_defaults(result: Box<RawValue>, entries: Meta) -> Box<RawValue> {
    if !result.get().trim_start().starts_with('{') {
        return result;
    }
    let fallback = result.clone();
    merge_meta(Some(result), entries, false).unwrap_or(fallback)
}

/// [`with_meta`], the existing entries of `_meta` replaced by `entries` (`overwrite`) or kept.
fn merge_meta(params: Option<Box<RawValue>>, entries: Meta, overwrite: bool) -> Result<Box<RawValue>, SendError> {
    let encode = |v: Value| serde_json::value::to_raw_value(&v).map_err(|e| SendError::Encode(e.to_string()));
    let Some(raw) = params else {
        let mut obj = Map::new();
        obj.insert("_meta".into(), Value::Object(entries));
        return encode(Value::Object(obj));
    };
    let text = raw.get().trim_start();
    if !text.starts_with('{') {
        return Err(SendError::ParamsNotAnObject);
    }
    if !(META.may_be_in(raw.get().as_bytes()) && has_member(&raw, "_meta")) {
        let meta = serde_json::to_string(&entries).map_err(|e| SendError::Encode(e.to_string()))?;
        let rest = text[1..].trim_start();
        let sep = if rest.starts_with('}') { "" } else { "," };
        let spliced = format!("{{\"_meta\":{meta}{sep}{rest}");
        return RawValue::from_string(spliced).map_err(|e| SendError::Encode(e.to_string()));
    }
    let mut obj: Map<String, Value> = serde_json::from_str(text).map_err(|e| SendError::Encode(e.to_string()))?;
    match obj.entry("_meta").or_insert_with(|| Value::Object(Map::new())) {
        Value::Object(existing) if overwrite => existing.extend(entries),
        Value::Object(existing) => {
            for (key, value) in entries {
                existing.entry(key).or_insert(value);
            }
        }
        other => *other = Value::Object(entries),
    }
    encode(Value::Object(obj))
}

/// Makes sure an object result says `"resultType"` (2026-07-28): `"complete"` unless it
/// already says something.
pub(super) fn stamp_result_type(result: Box<RawValue>) -> Box<RawValue> {
    let text = result.get();
    if !text.starts_with('{') || result_type_of(&result).is_some() {
        return result;
    }
    let rest = text[1..].trim_start();
    let sep = if rest.starts_with('}') { "" } else { "," };
    RawValue::from_string(format!("{{\"resultType\":\"complete\"{sep}{rest}")).unwrap_or(result)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use serde_json::json;

    use super::*;

    fn raw(v: &Value) -> Box<RawValue> {
        serde_json::value::to_raw_value(v).unwrap()
    }

    fn entries(v: Value) -> Meta {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn defaults_join_a_result_meta_without_replacing_what_is_there() {
        let defaults = || entries(json!({"io.modelcontextprotocol/serverInfo": {"name": "s"}, "b": 2}));
        let spliced = with_meta_defaults(raw(&json!({"content": []})), defaults());
        assert_eq!(
            serde_json::from_str::<Value>(spliced.get()).unwrap(),
            json!({"content": [], "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "s"}, "b": 2}})
        );
        let kept = with_meta_defaults(raw(&json!({"_meta": {"b": 1}})), defaults());
        assert_eq!(
            serde_json::from_str::<Value>(kept.get()).unwrap(),
            json!({"_meta": {"b": 1, "io.modelcontextprotocol/serverInfo": {"name": "s"}}})
        );
        assert_eq!(with_meta_defaults(raw(&json!([1])), defaults()).get(), "[1]", "not an object: as it was");
    }

    #[test]
    fn meta_is_spliced_merged_or_created() {
        let spliced = with_meta(Some(raw(&json!({"name": "x"}))), entries(json!({"progressToken": 1}))).unwrap();
        assert_eq!(
            serde_json::from_str::<Value>(spliced.get()).unwrap(),
            json!({"name": "x", "_meta": {"progressToken": 1}})
        );
        let empty = with_meta(Some(raw(&json!({}))), entries(json!({"a": 1}))).unwrap();
        assert_eq!(empty.get(), r#"{"_meta":{"a":1}}"#);
        let merged = with_meta(Some(raw(&json!({"_meta": {"keep": true}, "n": 1}))), entries(json!({"a": 1}))).unwrap();
        assert_eq!(
            serde_json::from_str::<Value>(merged.get()).unwrap(),
            json!({"_meta": {"keep": true, "a": 1}, "n": 1})
        );
        let created = with_meta(None, entries(json!({"a": 1}))).unwrap();
        assert_eq!(created.get(), r#"{"_meta":{"a":1}}"#);
        assert_eq!(with_meta(Some(raw(&json!([1]))), Meta::new()).unwrap_err(), SendError::ParamsNotAnObject);
    }

    #[test]
    fn request_meta_is_read_without_the_rest() {
        let params = raw(&json!({"arguments": {"deep": [1, 2, {"x": "y"}]}, "_meta": {"progressToken": "p"}}));
        let meta = request_meta(Some(&params)).unwrap().unwrap();
        assert_eq!(meta.progress_token, Some("p".into()));
        assert!(request_meta(Some(&raw(&json!({"a": 1})))).unwrap().is_none());
    }

    #[test]
    fn result_type_is_stamped_once() {
        assert_eq!(stamp_result_type(raw(&json!({}))).get(), r#"{"resultType":"complete"}"#);
        let stamped = stamp_result_type(raw(&json!({"tools": []})));
        assert_eq!(
            serde_json::from_str::<Value>(stamped.get()).unwrap(),
            json!({"resultType": "complete", "tools": []})
        );
        let kept = stamp_result_type(raw(&json!({"resultType": "input_required"})));
        assert_eq!(kept.get(), r#"{"resultType":"input_required"}"#);
    }
}
