//! Validation of JSON values against a JSON Schema: a tool's arguments against its
//! `inputSchema` (the server), a structured result against its `outputSchema` (the client), an
//! elicitation answer against the requested schema.
//!
//! When a client calls a tool with arguments that do not fit the tool's declared JSON Schema,
//! the server answers with a tool error result whose message names the field and says what is
//! wrong. [`validate`] lists the [`Violation`]s, each a JSON Pointer to the offending value and a
//! sentence; [`describe`] joins them into that message.
//!
//! The validator is small and predictable rather than complete: it understands the subset of
//! JSON Schema (2020-12 and draft-07 spellings) that tool schemas use in practice.
//!
//! Supported keywords:
//!
//! - `type` (a name or an array of names; `"integer"` accepts any number without a fractional
//!   part, so `2.0` is an integer);
//! - `properties`, `required`, `additionalProperties` (`false` or a schema);
//! - `items` (a schema), `prefixItems`, and the draft-07 tuple form (`items` as an array, with
//!   `additionalItems` for the rest);
//! - `enum`, `const` (numbers compare by value: `1` equals `1.0`);
//! - `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum` (numbers only);
//! - `minLength`, `maxLength` (counted in characters, not bytes);
//! - `minItems`, `maxItems`, `uniqueItems`;
//! - `allOf`, `anyOf`, `oneOf`, `not`;
//! - local `$ref`s: `#`, `#/$defs/Name`, `#/definitions/Name` or any other JSON Pointer fragment,
//!   resolved against the root schema; siblings of `$ref` apply too, as in 2020-12;
//! - boolean schemas `true` and `false` wherever a schema is expected.
//!
//! Ignored keywords, which accept every value: `pattern` and `patternProperties` (there is no
//! regex engine in the core; a schema with `patternProperties` also has its
//! `additionalProperties` ignored, since which properties are additional cannot be known),
//! `format`, `multipleOf`, `minProperties`, `maxProperties`, `propertyNames`, `dependentRequired`,
//! `dependentSchemas`, `if`/`then`/`else`, `contains`, `unevaluatedProperties`,
//! `unevaluatedItems`, `$dynamicRef`, `nullable` (an `OpenAPI` extension), draft-04 boolean
//! `exclusiveMinimum`/`exclusiveMaximum`, `$ref`s that are not local JSON Pointers (remote URIs,
//! `#anchor`s), annotations such as `title` or `default`, and every unknown keyword. A keyword
//! whose value has the wrong shape (say `"minimum": "3"`) is ignored too.
//!
//! Validation never panics and its work is bounded: at most 20 violations are collected; a value
//! nested more than 64 levels deep is reported rather than descended into; more than 32 `$ref`s
//! followed without descending into the value (a cycle), or more than 256 nested subschemas, are
//! reported as `schema too deep`; and after a million subschema evaluations (say, `anyOf`s whose
//! branches refer back to themselves) validation stops with a violation saying so.
//!
//! # Examples
//!
//! ```
//! use serde_json::json;
//! use talaria_core::schema::validate::{describe, validate};
//!
//! let schema = json!({
//!     "type": "object",
//!     "properties": {"a": {"type": "integer"}, "mode": {"enum": ["fast", "slow"]}},
//!     "required": ["a", "b"],
//! });
//! let schema = schema.as_object().unwrap();
//! assert!(validate(schema, &json!({"a": 2.0, "b": null, "mode": "fast"})).is_empty());
//!
//! let violations = validate(schema, &json!({"a": "1", "mode": "medium"}));
//! assert_eq!(
//!     describe(&violations).unwrap(),
//!     r#"missing required property "b"; "a": expected an integer, got a string; "mode": must be one of "fast", "slow""#,
//! );
//! ```

use crate::alloc_prelude::*;
use core::fmt::{self, Write as _};

use serde_json::{Map, Value};

use self::keywords::{
    accepts_everything, check_const_and_enum, check_number, check_string, check_type, check_unique, count,
    is_non_empty_array, plural, push_pointer_segment, resolve, Quoted, Target,
};

/// The most violations [`validate`] collects; the rest are dropped.
const MAX_VIOLATIONS: usize = 20;

/// The deepest value nesting that is checked; the root is at depth 0.
const MAX_VALUE_DEPTH: usize = 64;

/// The most `$ref`s followed in a row without descending into the value.
const MAX_REF_DEPTH: usize = 32;

/// The most subschemas nested on the way to one value: the bound on the recursion.
const MAX_SCHEMA_DEPTH: usize = 256;

/// The most subschema evaluations of one [`validate`] call.
const MAX_STEPS: usize = 1_000_000;

/// The most `enum` values a message lists.
const MAX_LISTED: usize = 10;

/// The magnitude below which an `f64` with no fractional part fits an `i128` exactly.
const I128_LIMIT: f64 = 1.7e38;

/// One reason a value does not fit its schema.
///
/// `path` is a JSON Pointer (RFC 6901) to the offending value inside the validated value: `""`
/// for the root, `"/items/0/name"` for the `name` of the first element of `items`, with `~` and
/// `/` in property names escaped as `~0` and `~1`. Problems with an object's set of properties
/// (`required`, `additionalProperties: false`) point at the object and name the property in the
/// message.
///
/// It displays as the message alone at the root, and otherwise as the pointer without its
/// leading slash, quoted, then a colon and the message: `"items/0/name": expected a string, got a
/// number`.
///
/// # Examples
///
/// ```
/// use talaria_core::schema::validate::Violation;
///
/// let violation = Violation { path: "/items/0/name".into(), message: "expected a string, got a number".into() };
/// assert_eq!(violation.to_string(), r#""items/0/name": expected a string, got a number"#);
///
/// let at_root = Violation { path: String::new(), message: r#"missing required property "b""#.into() };
/// assert_eq!(at_root.to_string(), r#"missing required property "b""#);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// A JSON Pointer to the offending value, `""` for the root.
    pub path: String,
    /// What is wrong, as a sentence fragment: `expected an integer, got a string`.
    pub message: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            return f.write_str(&self.message);
        }
        let field = self.path.strip_prefix('/').unwrap_or(&self.path);
        write!(f, "{}: {}", Quoted(field), self.message)
    }
}

/// Checks `value` against the JSON Schema `schema` and lists why it does not fit.
///
/// An empty list means the value is valid. Violations come in a stable order: for each value,
/// `type` first (a value of the wrong type gets no other violation), then `$ref`, `const`,
/// `enum`, the keywords of its type (object properties in the schema's order), then `allOf`,
/// `anyOf`, `oneOf` and `not`. `anyOf`, `oneOf` and `not` report one violation for the value
/// itself, never the reasons deeper down. See the [module docs](self) for the keywords
/// understood and ignored, and for the limits.
///
/// # Errors
///
/// None: problems are the returned violations. At most 20 are returned; a value nested more than
/// 64 levels deep, a `$ref` cycle or an over-complex schema is reported as a violation instead of
/// exhausting the stack or the CPU, and a local `$ref` that does not resolve is reported as
/// `cannot resolve $ref "..."`.
///
/// # Examples
///
/// ```
/// use serde_json::json;
/// use talaria_core::schema::validate::validate;
///
/// let schema = json!({
///     "$defs": {"name": {"type": "string", "minLength": 1}},
///     "properties": {"items": {"type": "array", "items": {"properties": {"name": {"$ref": "#/$defs/name"}}}}},
/// });
/// let violations = validate(schema.as_object().unwrap(), &json!({"items": [{"name": "a"}, {"name": 3}]}));
/// assert_eq!(violations.len(), 1);
/// assert_eq!(violations[0].path, "/items/1/name");
/// assert_eq!(violations[0].to_string(), r#""items/1/name": expected a string, got a number"#);
/// ```
#[must_use]
pub fn validate(schema: &Map<String, Value>, value: &Value) -> Vec<Violation> {
    let mut validator = Validator { root: schema, steps: 0, exhausted: false };
    let mut sink = Sink::new(MAX_VIOLATIONS);
    let mut at = String::new();
    validator.check_map(schema, value, &mut at, Depth::default(), &mut sink);
    let mut violations = sink.violations;
    if validator.exhausted {
        violations.truncate(MAX_VIOLATIONS - 1);
        violations.push(Violation {
            path: String::new(),
            message: "validation stopped: the schema is too complex for this value".to_owned(),
        });
    }
    violations
}

/// Joins violations into one message, separated by `"; "`, or `None` when there are none.
///
/// Each violation is written as its [`Display`](fmt::Display) form, in order: this is the text
/// of the tool error result a server sends for arguments that do not fit.
///
/// # Errors
///
/// None.
///
/// # Examples
///
/// ```
/// use talaria_core::schema::validate::{describe, Violation};
///
/// assert_eq!(describe(&[]), None);
/// let violations = [
///     Violation { path: String::new(), message: r#"missing required property "b""#.into() },
///     Violation { path: "/a".into(), message: "expected an integer, got a string".into() },
/// ];
/// assert_eq!(
///     describe(&violations).as_deref(),
///     Some(r#"missing required property "b"; "a": expected an integer, got a string"#),
/// );
/// ```
#[must_use]
pub fn describe(violations: &[Violation]) -> Option<String> {
    let (first, rest) = violations.split_first()?;
    let mut message = first.to_string();
    for violation in rest {
        // Writing to a String cannot fail.
        let _ = write!(message, "; {violation}");
    }
    Some(message)
}

/// How deep the validation is, for the limits.
#[derive(Debug, Clone, Copy, Default)]
struct Depth {
    /// Nesting of the value being checked; the root is 0.
    value: usize,
    /// `$ref`s followed since the last descent into the value.
    refs: usize,
    /// Subschemas entered on the way here.
    schemas: usize,
}

impl Depth {
    /// The depth of a member or element of the current value.
    fn child(self) -> Self {
        Self { value: self.value + 1, refs: 0, schemas: self.schemas }
    }
}

/// Where violations go, up to a limit.
struct Sink {
    /// The violations so far.
    violations: Vec<Violation>,
    /// The most violations kept.
    limit: usize,
}

impl Sink {
    /// An empty sink keeping at most `limit` violations.
    fn new(limit: usize) -> Self {
        Self { violations: Vec::new(), limit }
    }

    /// Whether more violations would be dropped.
    fn is_full(&self) -> bool {
        self.violations.len() >= self.limit
    }

    /// Records that the value at `at` violates its schema.
    fn push(&mut self, at: &str, message: impl Into<String>) {
        if !self.is_full() {
            self.violations.push(Violation { path: at.to_owned(), message: message.into() });
        }
    }
}

/// One validation run against one root schema.
struct Validator<'s> {
    /// The root schema, against which `$ref`s resolve.
    root: &'s Map<String, Value>,
    /// Subschema evaluations so far.
    steps: usize,
    /// Whether `steps` passed [`MAX_STEPS`]: every check then returns at once.
    exhausted: bool,
}

impl<'s> Validator<'s> {
    /// Checks `value`, at pointer `at`, against a schema that may be an object or a boolean.
    ///
    /// A schema of any other shape is malformed and accepts everything.
    fn check(&mut self, schema: &'s Value, value: &Value, at: &mut String, depth: Depth, sink: &mut Sink) {
        match schema {
            Value::Bool(false) => sink.push(at, "not allowed"),
            Value::Object(map) => self.check_map(map, value, at, depth, sink),
            _ => {}
        }
    }

    /// Checks `value`, at pointer `at`, against an object schema.
    fn check_map(
        &mut self,
        schema: &'s Map<String, Value>,
        value: &Value,
        at: &mut String,
        depth: Depth,
        sink: &mut Sink,
    ) {
        if self.exhausted || sink.is_full() {
            return;
        }
        self.steps += 1;
        if self.steps > MAX_STEPS {
            self.exhausted = true;
            return;
        }
        let depth = Depth { schemas: depth.schemas + 1, ..depth };
        if depth.schemas > MAX_SCHEMA_DEPTH {
            sink.push(at, "schema too deep");
            return;
        }
        if !check_type(schema, value, at, sink) {
            return;
        }
        if let Some(Value::String(reference)) = schema.get("$ref") {
            self.check_ref(reference, value, at, depth, sink);
        }
        check_const_and_enum(schema, value, at, sink);
        match value {
            Value::Number(number) => check_number(schema, number, at, sink),
            Value::String(text) => check_string(schema, text, at, sink),
            Value::Array(items) => self.check_array(schema, items, at, depth, sink),
            Value::Object(members) => self.check_object(schema, members, at, depth, sink),
            Value::Null | Value::Bool(_) => {}
        }
        self.check_combinators(schema, value, at, depth, sink);
    }

    /// Follows a local `$ref` and checks `value` against its target.
    fn check_ref(&mut self, reference: &str, value: &Value, at: &mut String, depth: Depth, sink: &mut Sink) {
        let Some(pointer) = reference.strip_prefix('#') else {
            return; // A remote or relative URI: not supported, ignored.
        };
        if !pointer.is_empty() && !pointer.starts_with('/') {
            return; // A plain-name fragment (`#anchor`): not supported, ignored.
        }
        if depth.refs >= MAX_REF_DEPTH {
            sink.push(at, "schema too deep");
            return;
        }
        let depth = Depth { refs: depth.refs + 1, ..depth };
        match resolve(self.root, pointer) {
            Some(Target::Root) => self.check_map(self.root, value, at, depth, sink),
            Some(Target::Schema(schema)) => self.check(schema, value, at, depth, sink),
            None => sink.push(at, format!("cannot resolve $ref {}", Quoted(reference))),
        }
    }

    /// Checks the elements of an array: `prefixItems`/`items`/`additionalItems`, the counts and
    /// `uniqueItems`.
    fn check_array(
        &mut self,
        schema: &'s Map<String, Value>,
        items: &[Value],
        at: &mut String,
        depth: Depth,
        sink: &mut Sink,
    ) {
        let len = u64::try_from(items.len()).unwrap_or(u64::MAX);
        if let Some(min) = count(schema, "minItems").filter(|&min| len < min) {
            sink.push(at, format!("must contain at least {min} {}", plural(min, "item")));
        }
        if let Some(max) = count(schema, "maxItems").filter(|&max| len > max) {
            sink.push(at, format!("must contain at most {max} {}", plural(max, "item")));
        }
        if schema.get("uniqueItems") == Some(&Value::Bool(true)) {
            check_unique(items, at, depth, sink);
        }
        let (prefix, rest): (&'s [Value], Option<&'s Value>) = match (schema.get("prefixItems"), schema.get("items")) {
            (Some(Value::Array(prefix)), rest) => (prefix, rest),
            (_, Some(Value::Array(prefix))) => (prefix, schema.get("additionalItems")),
            (_, rest) => (&[], rest),
        };
        for (index, item) in items.iter().enumerate() {
            if self.exhausted || sink.is_full() {
                return;
            }
            if let Some(item_schema) = prefix.get(index).or(rest) {
                let len = at.len();
                at.push('/');
                at.push_str(&index.to_string());
                self.descend(item_schema, item, at, depth, sink);
                at.truncate(len);
            }
        }
    }

    /// Checks the members of an object: `required`, `properties` and `additionalProperties`.
    fn check_object(
        &mut self,
        schema: &'s Map<String, Value>,
        members: &Map<String, Value>,
        at: &mut String,
        depth: Depth,
        sink: &mut Sink,
    ) {
        if let Some(Value::Array(required)) = schema.get("required") {
            for name in required.iter().filter_map(Value::as_str) {
                if !members.contains_key(name) {
                    sink.push(at, format!("missing required property {}", Quoted(name)));
                }
            }
        }
        let properties = schema.get("properties").and_then(Value::as_object);
        for (name, property_schema) in properties.into_iter().flatten() {
            if let Some(member) = members.get(name) {
                self.descend_member(property_schema, name, member, at, depth, sink);
            }
        }
        if schema.contains_key("patternProperties") {
            return;
        }
        let Some(additional) = schema.get("additionalProperties") else {
            return;
        };
        let declared = |name: &str| properties.is_some_and(|properties| properties.contains_key(name));
        for (name, member) in members.iter().filter(|(name, _)| !declared(name)) {
            if self.exhausted || sink.is_full() {
                return;
            }
            if additional == &Value::Bool(false) {
                sink.push(at, format!("unexpected property {}", Quoted(name)));
            } else {
                self.descend_member(additional, name, member, at, depth, sink);
            }
        }
    }

    /// Checks `allOf`, `anyOf`, `oneOf` and `not`.
    fn check_combinators(
        &mut self,
        schema: &'s Map<String, Value>,
        value: &Value,
        at: &mut String,
        depth: Depth,
        sink: &mut Sink,
    ) {
        if let Some(Value::Array(all)) = schema.get("allOf") {
            for sub in all {
                self.check(sub, value, at, depth, sink);
            }
        }
        if let Some(Value::Array(any)) = schema.get("anyOf").filter(|any| is_non_empty_array(any)) {
            let mut matched = false;
            for sub in any {
                if self.matches(sub, value, at, depth) {
                    matched = true;
                    break;
                }
            }
            if !matched {
                sink.push(at, "does not match any of the anyOf schemas");
            }
        }
        if let Some(Value::Array(one)) = schema.get("oneOf").filter(|one| is_non_empty_array(one)) {
            let mut matched = Vec::with_capacity(2);
            for (index, sub) in one.iter().enumerate() {
                if self.matches(sub, value, at, depth) {
                    matched.push(index);
                    if matched.len() == 2 {
                        break;
                    }
                }
            }
            match matched.as_slice() {
                [] => sink.push(at, "must match exactly one of the oneOf schemas, matched none"),
                [_] => {}
                [first, second, ..] => sink.push(
                    at,
                    format!("must match exactly one of the oneOf schemas, but matches schemas {first} and {second}"),
                ),
            }
        }
        if let Some(not) = schema.get("not") {
            if self.matches(not, value, at, depth) {
                sink.push(at, "must not match the \"not\" schema");
            }
        }
    }

    /// Whether `value` fits `schema`, without reporting why not.
    fn matches(&mut self, schema: &'s Value, value: &Value, at: &mut String, depth: Depth) -> bool {
        let mut probe = Sink::new(1);
        self.check(schema, value, at, depth, &mut probe);
        probe.violations.is_empty()
    }

    /// Checks the member `name` of the current object against `schema`.
    fn descend_member(
        &mut self,
        schema: &'s Value,
        name: &str,
        member: &Value,
        at: &mut String,
        depth: Depth,
        sink: &mut Sink,
    ) {
        let len = at.len();
        push_pointer_segment(at, name);
        self.descend(schema, member, at, depth, sink);
        at.truncate(len);
    }

    /// Checks a member or element of the current value, already appended to `at`.
    fn descend(&mut self, schema: &'s Value, child: &Value, at: &mut String, depth: Depth, sink: &mut Sink) {
        if accepts_everything(schema) {
            return;
        }
        if depth.value >= MAX_VALUE_DEPTH {
            sink.push(at, format!("nested too deeply (more than {MAX_VALUE_DEPTH} levels)"));
            return;
        }
        self.check(schema, child, at, depth.child(), sink);
    }
}

mod keywords;

#[cfg(test)]
mod tests;
