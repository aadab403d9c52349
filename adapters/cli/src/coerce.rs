//! Tool arguments without JSON-quoting pain: words in, a JSON object out, typed by the tool's
//! input schema, checked before it is sent.
//!
//! | word             | meaning                                                            |
//! |------------------|--------------------------------------------------------------------|
//! | `key=value`      | `value` coerced by the schema of `key` (number, boolean, array...) |
//! | `key:=json`      | raw JSON, not coerced                                              |
//! | `@file.json`     | a JSON object read from a file, merged in                          |
//! | `{...}`          | a JSON object, merged in                                           |
//! | `value`          | the next required property not given yet                           |
//!
//! Later words override earlier ones, except that repeating `key=value` for an array property
//! appends. An array property also takes `a,b,c` or a JSON array.

use serde_json::{Map, Value};
use talaria_core::schema::validate::{describe, validate};

use super::exit::Failure;

/// A JSON object.
pub(crate) type JsonObject = Map<String, Value>;

/// The most `$ref`s followed to find a property's schema.
const MAX_REFS: usize = 16;

/// Builds arguments from `words` for a tool whose input schema is `schema`. When not
/// `strict`, a value that does not fit its property's type is sent as a string.
///
/// # Errors
///
/// A usage failure naming the word or field that is wrong.
pub(crate) fn tool_arguments(schema: &JsonObject, words: &[String], strict: bool) -> Result<JsonObject, Failure> {
    let coerce = |key: &str, text: &str| match coerce_value(text, property(schema, key), schema) {
        Ok(value) => Ok(value),
        Err(_) if !strict => Ok(Value::String(text.to_owned())),
        Err(e) => Err(field_failure(key, &e)),
    };
    let mut args = JsonObject::new();
    let mut repeated: Vec<String> = Vec::new();
    for word in words {
        if word.starts_with('{') {
            merge(&mut args, parse_object(word, "inline JSON")?);
        } else if let Some(path) = word.strip_prefix('@') {
            let text = std::fs::read_to_string(path).map_err(|e| Failure::usage(format!("cannot read {path}: {e}")))?;
            merge(&mut args, parse_object(&text, path)?);
        } else if let Some((key, raw)) = raw_pair(word) {
            let value = serde_json::from_str(raw)
                .map_err(|e| Failure::usage(format!("{key}:= takes JSON, and {raw:?} is not JSON: {e}")))?;
            args.insert(key.to_owned(), value);
        } else if let Some((key, text)) = word.split_once('=') {
            let key = key.to_owned();
            let value = coerce(&key, text)?;
            let array = matches!(value, Value::Array(_));
            match args.get_mut(&key) {
                Some(Value::Array(items)) if array && repeated.contains(&key) => {
                    if let Value::Array(more) = value {
                        items.extend(more);
                    }
                }
                _ => {
                    args.insert(key.clone(), value);
                    repeated.push(key);
                }
            }
        } else {
            let Some(key) = required(schema).into_iter().find(|k| !args.contains_key(k)) else {
                return Err(Failure::usage(format!(
                    "{word:?}: expected key=value, key:=<json>, @file.json or a JSON object"
                )));
            };
            let value = coerce(&key, word)?;
            args.insert(key, value);
        }
    }
    Ok(args)
}

fn field_failure(key: &str, why: &str) -> Failure {
    Failure::usage(format!("{}: {why}", Value::String(key.to_owned())))
}

/// `key:=json` split, if `word` has that form (`:=` before any other `=`).
fn raw_pair(word: &str) -> Option<(&str, &str)> {
    let at = word.find(":=")?;
    (word.find('=') == Some(at + 1)).then(|| (&word[..at], &word[at + 2..]))
}

fn parse_object(text: &str, what: &str) -> Result<JsonObject, Failure> {
    match serde_json::from_str(text) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err(Failure::usage(format!("{what}: expected a JSON object"))),
        Err(e) => Err(Failure::usage(format!("{what}: not JSON: {e}"))),
    }
}

fn merge(into: &mut JsonObject, from: JsonObject) {
    into.extend(from);
}

/// The names the schema requires, in its order.
pub(crate) fn required(schema: &JsonObject) -> Vec<String> {
    schema
        .get("required")
        .and_then(Value::as_array)
        .map(|names| names.iter().filter_map(Value::as_str).map(str::to_owned).collect())
        .unwrap_or_default()
}

/// The property names the schema declares.
pub(crate) fn property_names(schema: &JsonObject) -> Vec<String> {
    schema.get("properties").and_then(Value::as_object).map(|p| p.keys().cloned().collect()).unwrap_or_default()
}

/// The schema of property `name`, with local `$ref`s resolved.
pub(crate) fn property<'a>(schema: &'a JsonObject, name: &str) -> Option<&'a Value> {
    let found = schema.get("properties")?.as_object()?.get(name)?;
    Some(resolve(schema, found))
}

/// Follows local `$ref`s (`#/...` JSON Pointers) from `value`, against `root`.
fn resolve<'a>(root: &'a JsonObject, mut value: &'a Value) -> &'a Value {
    for _ in 0..MAX_REFS {
        let Some(pointer) = value.get("$ref").and_then(Value::as_str).and_then(|r| r.strip_prefix('#')) else {
            return value;
        };
        let mut at = None;
        let mut segments = pointer.split('/').skip(1);
        if let Some(first) = segments.next() {
            at = root.get(&unescape(first));
            for segment in segments {
                at = at.and_then(|v| v.get(unescape(segment)));
            }
        }
        match at {
            Some(next) => value = next,
            None => return value,
        }
    }
    value
}

fn unescape(segment: &str) -> String {
    segment.replace("~1", "/").replace("~0", "~")
}

/// The JSON types a property schema allows, in the schema's order (empty: any).
pub(crate) fn types(property: &Value) -> Vec<String> {
    match property.get("type") {
        Some(Value::String(t)) => return vec![t.clone()],
        Some(Value::Array(ts)) => return ts.iter().filter_map(Value::as_str).map(str::to_owned).collect(),
        _ => {}
    }
    let mut found = Vec::new();
    for key in ["anyOf", "oneOf"] {
        for branch in property.get(key).and_then(Value::as_array).into_iter().flatten() {
            for t in types(branch) {
                if !found.contains(&t) {
                    found.push(t);
                }
            }
        }
    }
    if found.is_empty() {
        for value in enum_values_raw(property) {
            let t = json_type(&value).to_owned();
            if !found.contains(&t) {
                found.push(t);
            }
        }
    }
    found
}

fn enum_values_raw(property: &Value) -> Vec<Value> {
    enum_choices(property).into_iter().map(|(value, _)| value).collect()
}

/// The allowed values of a property with their titles, in the forms elicitation schemas use:
/// `enum` (titled by a legacy `enumNames`), `oneOf`/`anyOf` of `{const, title}` (titled
/// enums), or one `const`.
pub(crate) fn enum_choices(property: &Value) -> Vec<(Value, Option<String>)> {
    if let Some(values) = property.get("enum").and_then(Value::as_array) {
        let names = property.get("enumNames").and_then(Value::as_array);
        return values
            .iter()
            .enumerate()
            .map(|(i, v)| (v.clone(), names.and_then(|n| n.get(i)).and_then(Value::as_str).map(str::to_owned)))
            .collect();
    }
    for key in ["oneOf", "anyOf"] {
        if let Some(options) = property.get(key).and_then(Value::as_array) {
            let titled: Vec<_> = options
                .iter()
                .filter_map(|o| {
                    Some((o.get("const")?.clone(), o.get("title").and_then(Value::as_str).map(str::to_owned)))
                })
                .collect();
            if !titled.is_empty() && titled.len() == options.len() {
                return titled;
            }
        }
    }
    property.get("const").cloned().map(|c| (c, None)).into_iter().collect()
}

/// The allowed values of an `enum` (or `const`) property, as they would be typed.
pub(crate) fn enum_values(property: &Value) -> Vec<String> {
    enum_values_raw(property).iter().map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_owned)).collect()
}

fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_f64() => "number",
        Value::Number(_) => "integer",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Turns `text` into the JSON value `property` asks for (a string when there is no schema).
///
/// Non-string types are tried first (in the schema's order), so `"5"` for `["string",
/// "integer"]` becomes `5`, unless the schema's `enum` lists the string itself.
///
/// # Errors
///
/// What was expected and what was given.
pub(crate) fn coerce_value(text: &str, property: Option<&Value>, root: &JsonObject) -> Result<Value, String> {
    let Some(property) = property else { return Ok(Value::String(text.to_owned())) };
    let property = resolve(root, property);
    if enum_values_raw(property).iter().any(|v| v.as_str() == Some(text)) {
        return Ok(Value::String(text.to_owned()));
    }
    let types = types(property);
    if types.is_empty() {
        return Ok(Value::String(text.to_owned()));
    }
    for t in types.iter().filter(|t| *t != "string") {
        if let Some(value) = coerce_as(t, text, property, root)? {
            return Ok(value);
        }
    }
    if types.iter().any(|t| t == "string") {
        return Ok(Value::String(text.to_owned()));
    }
    Err(format!("expected {}, got {:?}", expected(&types), text))
}

fn expected(types: &[String]) -> String {
    let named: Vec<String> = types.iter().map(|t| with_article(t)).collect();
    named.join(" or ")
}

fn with_article(t: &str) -> String {
    match t {
        "integer" | "array" | "object" => format!("an {t}"),
        "null" => "null".to_owned(),
        _ => format!("a {t}"),
    }
}

/// `text` as a value of JSON type `t`, `None` if it does not read as one.
fn coerce_as(t: &str, text: &str, property: &Value, root: &JsonObject) -> Result<Option<Value>, String> {
    let trimmed = text.trim();
    Ok(match t {
        "integer" => trimmed
            .parse::<i64>()
            .map(Value::from)
            .or_else(|_| trimmed.parse::<u64>().map(Value::from))
            .ok()
            .or_else(|| integral_float(trimmed)),
        "number" => match serde_json::from_str::<Value>(trimmed) {
            Ok(n @ Value::Number(_)) => Some(n),
            _ => None,
        },
        "boolean" => match trimmed.to_ascii_lowercase().as_str() {
            "true" | "yes" | "on" | "1" => Some(Value::Bool(true)),
            "false" | "no" | "off" | "0" => Some(Value::Bool(false)),
            _ => None,
        },
        "null" => (trimmed == "null").then_some(Value::Null),
        "array" => Some(coerce_array(trimmed, property, root)?),
        "object" => match serde_json::from_str::<Value>(trimmed) {
            Ok(o @ Value::Object(_)) => Some(o),
            _ => None,
        },
        _ => None,
    })
}

fn integral_float(text: &str) -> Option<Value> {
    let f: f64 = text.parse().ok()?;
    // Invariant: a finite float with no fractional part within ±2^53 converts exactly.
    #[allow(clippy::cast_possible_truncation)]
    (f.is_finite() && f.fract() == 0.0 && f.abs() <= 9_007_199_254_740_992.0).then(|| Value::from(f as i64))
}

/// An array from `[json]` or `a,b,c` (each item coerced by `items`).
fn coerce_array(text: &str, property: &Value, root: &JsonObject) -> Result<Value, String> {
    if text.starts_with('[') {
        return match serde_json::from_str::<Value>(text) {
            Ok(a @ Value::Array(_)) => Ok(a),
            Ok(_) | Err(_) => Err(format!("expected a JSON array or a,b,c, got {text:?}")),
        };
    }
    if text.is_empty() {
        return Ok(Value::Array(Vec::new()));
    }
    let items = property.get("items").filter(|i| i.is_object());
    let values: Result<Vec<Value>, String> =
        text.split(',').map(|item| coerce_value(item.trim(), items, root).map_err(|e| format!("item: {e}"))).collect();
    values.map(Value::Array)
}

/// Checks `args` against the tool's input schema before sending.
///
/// # Errors
///
/// A usage failure whose message names the fields that are wrong and whose hint shows a
/// corrected example.
pub(crate) fn check(tool_name: &str, schema: &JsonObject, args: &JsonObject) -> Result<(), Failure> {
    let violations = validate(schema, &Value::Object(args.clone()));
    match describe(&violations) {
        None => Ok(()),
        Some(why) => Err(Failure::usage(format!("invalid arguments for {tool_name}: {why}"))
            .with_hint(format!("example: {}", example(tool_name, schema)))),
    }
}

/// A command line that calls the tool with placeholders typed by the schema, optional
/// arguments in brackets: `call_tool add a=<integer> b=<integer>`.
pub(crate) fn example(tool_name: &str, schema: &JsonObject) -> String {
    let required = required(schema);
    let mut words = vec!["call_tool".to_owned(), tool_name.to_owned()];
    let mut names = property_names(schema);
    names.sort_by_key(|n| required.iter().position(|r| r == n).unwrap_or(usize::MAX));
    for name in names {
        let placeholder = placeholder(property(schema, &name));
        if required.contains(&name) {
            words.push(format!("{name}={placeholder}"));
        } else {
            words.push(format!("[{name}={placeholder}]"));
        }
    }
    words.join(" ")
}

/// How a value of this property is written: `a|b` for an enum, `<integer>`, `<a,b,...>`.
pub(crate) fn placeholder(property: Option<&Value>) -> String {
    let Some(property) = property else { return "<value>".into() };
    let choices = enum_values(property);
    if !choices.is_empty() {
        return choices.join("|");
    }
    match types(property).first().map(String::as_str) {
        Some("array") => "<a,b,...>".into(),
        Some(t) => format!("<{t}>"),
        None => "<value>".into(),
    }
}

/// The enum value a typed choice number stands for (`2` for the second value), when the
/// property is an enum of strings and `text` is not itself one of them.
pub(crate) fn choose(text: &str, property: Option<&Value>) -> Option<String> {
    let choices = enum_choices(property?);
    if choices.is_empty()
        || !choices.iter().all(|(v, _)| v.is_string())
        || choices.iter().any(|(v, _)| v.as_str() == Some(text))
    {
        return None;
    }
    // A choice's title stands for its value.
    let wanted = text.trim();
    if let Some((value, _)) =
        choices.iter().find(|(_, title)| title.as_deref().is_some_and(|t| t.eq_ignore_ascii_case(wanted)))
    {
        return value.as_str().map(str::to_owned);
    }
    let n: usize = wanted.parse().ok()?;
    choices.get(n.checked_sub(1)?).and_then(|(v, _)| v.as_str()).map(str::to_owned)
}

/// A short description of a property for prompts: `integer, 1..1000, default 5`.
pub(crate) fn describe_property(property: Option<&Value>) -> String {
    let Some(property) = property else { return "any".into() };
    let mut parts = vec![types(property).join(" or ")];
    if parts[0].is_empty() {
        parts[0] = "any".into();
    }
    let choices = enum_choices(property);
    if !choices.is_empty() {
        let numbered: Vec<String> = choices
            .iter()
            .enumerate()
            .map(|(i, (value, title))| {
                let value = value.as_str().map_or_else(|| value.to_string(), str::to_owned);
                match title {
                    Some(title) if *title != value => format!("{} {title} ({value})", i + 1),
                    _ => format!("{} {value}", i + 1),
                }
            })
            .collect();
        parts.push(format!("choose {}", numbered.join(", ")));
    }
    if let Some(format) = property.get("format").and_then(Value::as_str) {
        parts.push(format!("format {format}"));
    }
    match (property.get("minLength"), property.get("maxLength")) {
        (Some(lo), Some(hi)) => parts.push(format!("{lo}..{hi} characters")),
        (Some(lo), None) => parts.push(format!("at least {lo} characters")),
        (None, Some(hi)) => parts.push(format!("at most {hi} characters")),
        (None, None) => {}
    }
    match (property.get("minimum"), property.get("maximum")) {
        (Some(lo), Some(hi)) => parts.push(format!("{lo}..{hi}")),
        (Some(lo), None) => parts.push(format!(">= {lo}")),
        (None, Some(hi)) => parts.push(format!("<= {hi}")),
        (None, None) => {}
    }
    if let Some(default) = property.get("default") {
        parts.push(format!("default {default}"));
    }
    parts.join(", ")
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use serde_json::json;

    use super::*;
    use crate::exit::Kind;

    fn schema() -> JsonObject {
        json!({
            "type": "object",
            "properties": {
                "a": {"type": "integer"},
                "ratio": {"type": "number"},
                "loud": {"type": "boolean"},
                "tags": {"type": "array", "items": {"type": "integer"}},
                "mode": {"enum": ["fast", "slow"]},
                "either": {"type": ["string", "integer"]},
                "opt": {"anyOf": [{"type": "null"}, {"type": "integer"}]},
                "named": {"$ref": "#/$defs/n"},
                "text": {"type": "string"}
            },
            "$defs": {"n": {"type": "integer"}},
            "required": ["text", "a"]
        })
        .as_object()
        .cloned()
        .unwrap()
    }

    fn args(words: &[&str]) -> Result<Value, Failure> {
        let words: Vec<String> = words.iter().map(|w| (*w).to_owned()).collect();
        tool_arguments(&schema(), &words, true).map(Value::Object)
    }

    #[test]
    fn values_are_coerced_by_schema() {
        let got = args(&[
            "a=42",
            "ratio=0.5",
            "loud=yes",
            "tags=1,2",
            "mode=slow",
            "either=7",
            "opt=null",
            "named=3",
            "text=42",
            "extra=1",
        ])
        .unwrap();
        assert_eq!(
            got,
            json!({"a": 42, "ratio": 0.5, "loud": true, "tags": [1, 2], "mode": "slow", "either": 7,
                   "opt": null, "named": 3, "text": "42", "extra": "1"})
        );
    }

    #[test]
    fn raw_json_files_objects_and_positionals() {
        let dir = std::env::temp_dir().join(format!("talaria-coerce-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("args.json");
        std::fs::write(&file, r#"{"a": 1, "text": "from file"}"#).unwrap();
        let at = format!("@{}", file.display());
        assert_eq!(args(&[&at, "a:=2"]).unwrap(), json!({"a": 2, "text": "from file"}));
        assert_eq!(args(&[r#"{"text": "x", "a": 1}"#, "tags=[3]"]).unwrap(), json!({"a": 1, "text": "x", "tags": [3]}));
        assert_eq!(args(&["hello", "5"]).unwrap(), json!({"text": "hello", "a": 5}));
        assert_eq!(args(&["tags=1", "tags=2", "tags=3"]).unwrap()["tags"], json!([1, 2, 3]));
        assert_eq!(args(&["a:=1", "a=2"]).unwrap()["a"], json!(2));
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn bad_values_name_the_field() {
        let failure = args(&["a=x"]).unwrap_err();
        assert_eq!(failure.kind, Kind::Usage);
        assert_eq!(failure.message, r#""a": expected an integer, got "x""#);
        assert!(args(&["tags=1,x"]).unwrap_err().message.contains("item: expected an integer"));
        assert!(args(&["a:={"]).unwrap_err().message.contains("not JSON"));
        assert!(args(&["@/nonexistent/file.json"]).unwrap_err().message.contains("cannot read"));
        assert!(args(&["t", "1", "surplus"]).unwrap_err().message.contains("expected key=value"));
    }

    #[test]
    fn check_names_the_field_and_shows_an_example() {
        let schema = schema();
        let failure = check("demo", &schema, &json!({"a": "1"}).as_object().cloned().unwrap()).unwrap_err();
        assert!(failure.message.contains(r#"missing required property "text""#), "{}", failure.message);
        assert!(failure.message.contains(r#""a": expected an integer"#), "{}", failure.message);
        let hint = failure.hint.unwrap();
        assert!(hint.starts_with("example: call_tool demo text=<string> a=<integer> "), "{hint}");
        assert!(hint.contains("[mode=fast|slow]"), "{hint}");
        assert!(check("demo", &schema, &json!({"a": 1, "text": "t"}).as_object().cloned().unwrap()).is_ok());
    }

    #[test]
    fn property_descriptions() {
        let slow = json!({"type": "integer", "minimum": 1, "maximum": 9, "default": 5});
        assert_eq!(describe_property(Some(&slow)), "integer, 1..9, default 5");
        assert_eq!(describe_property(Some(&json!({"enum": ["a", "b"]}))), "string, choose 1 a, 2 b");
        assert_eq!(choose("2", Some(&json!({"enum": ["a", "b"]}))).as_deref(), Some("b"));
        assert_eq!(choose("3", Some(&json!({"enum": ["a", "b"]}))), None);
        assert_eq!(choose("1", Some(&json!({"enum": ["1", "2"]}))), None);
        assert_eq!(placeholder(Some(&json!({"type": "array"}))), "<a,b,...>");
    }
}
