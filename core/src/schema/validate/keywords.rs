//! The leaf checks of the validator (type, const/enum, numbers, strings, uniqueness) and the
//! JSON value helpers they share.

use crate::alloc_prelude::*;
use alloc::collections::BTreeMap;
use core::cmp::Ordering;
use core::fmt::{self, Write as _};

use serde_json::{Map, Number, Value};

use super::{Depth, Sink, I128_LIMIT, MAX_LISTED, MAX_VALUE_DEPTH};

/// Checks `type`; returns whether the value has one of the types (or `type` does not apply).
pub(super) fn check_type(schema: &Map<String, Value>, value: &Value, at: &str, sink: &mut Sink) -> bool {
    match schema.get("type") {
        Some(name @ Value::String(_)) => check_type_names(core::slice::from_ref(name).iter(), value, at, sink),
        Some(Value::Array(names)) => check_type_names(names.iter(), value, at, sink),
        _ => true,
    }
}

/// [`check_type`] against the names of `type` (entries that are not strings ignored). The
/// value's type is looked for first, so that a value that passes costs no allocation.
fn check_type_names<'a>(
    names: impl Iterator<Item = &'a Value> + Clone,
    value: &Value,
    at: &str,
    sink: &mut Sink,
) -> bool {
    let known = names.filter_map(Value::as_str).filter(|name| with_article(name).is_some());
    if known.clone().next().is_none() {
        return true; // Only unknown type names: ignored.
    }
    if known.clone().any(|name| has_type(name, value)) {
        return true;
    }
    let mut expected: Vec<&str> = Vec::new();
    for article in known.filter_map(with_article) {
        if !expected.contains(&article) {
            expected.push(article);
        }
    }
    let mut message = String::from("expected ");
    for (index, article) in expected.iter().enumerate() {
        let separator = match index {
            0 => "",
            _ if index + 1 == expected.len() => " or ",
            _ => ", ",
        };
        message.push_str(separator);
        message.push_str(article);
    }
    match value {
        Value::Number(number) if expected.contains(&"an integer") => {
            // Writing to a String cannot fail.
            let _ = write!(message, ", got {number}");
        }
        _ => {
            message.push_str(", got ");
            message.push_str(kind(value));
        }
    }
    sink.push(at, message);
    false
}

/// Checks `const` and `enum`.
pub(super) fn check_const_and_enum(schema: &Map<String, Value>, value: &Value, at: &str, sink: &mut Sink) {
    if let Some(constant) = schema.get("const") {
        if !json_eq(constant, value) {
            sink.push(at, format!("must be {constant}"));
        }
    }
    if let Some(Value::Array(options)) = schema.get("enum") {
        if !options.iter().any(|option| json_eq(option, value)) {
            let mut message = String::from("must be one of ");
            if options.is_empty() {
                message.push_str("no value (the enum is empty)");
            }
            for (index, option) in options.iter().take(MAX_LISTED).enumerate() {
                // Writing to a String cannot fail.
                let _ = write!(message, "{}{option}", if index == 0 { "" } else { ", " });
            }
            if options.len() > MAX_LISTED {
                let _ = write!(message, ", ... ({} values)", options.len());
            }
            sink.push(at, message);
        }
    }
}

/// Checks `minimum`, `maximum`, `exclusiveMinimum` and `exclusiveMaximum`.
pub(super) fn check_number(schema: &Map<String, Value>, number: &Number, at: &str, sink: &mut Sink) {
    let bound = |keyword: &str| schema.get(keyword).and_then(Value::as_number);
    if let Some(min) = bound("minimum") {
        if compare(number, min) == Some(Ordering::Less) {
            sink.push(at, format!("must be at least {min}"));
        }
    }
    if let Some(max) = bound("maximum") {
        if compare(number, max) == Some(Ordering::Greater) {
            sink.push(at, format!("must be at most {max}"));
        }
    }
    if let Some(min) = bound("exclusiveMinimum") {
        if matches!(compare(number, min), Some(Ordering::Less | Ordering::Equal)) {
            sink.push(at, format!("must be greater than {min}"));
        }
    }
    if let Some(max) = bound("exclusiveMaximum") {
        if matches!(compare(number, max), Some(Ordering::Greater | Ordering::Equal)) {
            sink.push(at, format!("must be less than {max}"));
        }
    }
}

/// Checks `minLength` and `maxLength`, in characters.
pub(super) fn check_string(schema: &Map<String, Value>, text: &str, at: &str, sink: &mut Sink) {
    let (min, max) = (count(schema, "minLength"), count(schema, "maxLength"));
    if min.is_none() && max.is_none() {
        return;
    }
    let len = u64::try_from(text.chars().count()).unwrap_or(u64::MAX);
    if let Some(min) = min.filter(|&min| len < min) {
        sink.push(at, format!("must be at least {min} {} long", plural(min, "character")));
    }
    if let Some(max) = max.filter(|&max| len > max) {
        sink.push(at, format!("must be at most {max} {} long", plural(max, "character")));
    }
}

/// Reports the first two equal elements of an array.
pub(super) fn check_unique(items: &[Value], at: &mut String, depth: Depth, sink: &mut Sink) {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    for (index, item) in items.iter().enumerate() {
        let mut key = String::new();
        if !canonical(item, &mut key, MAX_VALUE_DEPTH.saturating_sub(depth.value)) {
            let len = at.len();
            at.push('/');
            at.push_str(&index.to_string());
            sink.push(at, format!("nested too deeply (more than {MAX_VALUE_DEPTH} levels)"));
            at.truncate(len);
            return;
        }
        if let Some(first) = seen.insert(key, index) {
            sink.push(at, format!("must not contain duplicates (items {first} and {index} are equal)"));
            return;
        }
    }
}

/// Where a local `$ref` points.
pub(super) enum Target<'s> {
    /// The root schema itself (`#`).
    Root,
    /// A schema inside the root.
    Schema(&'s Value),
}

/// Resolves the JSON Pointer of a `#...` fragment against the root schema.
pub(super) fn resolve<'s>(root: &'s Map<String, Value>, pointer: &str) -> Option<Target<'s>> {
    let Some(path) = pointer.strip_prefix('/') else {
        return Some(Target::Root);
    };
    let (first, rest) = match path.split_once('/') {
        Some((first, rest)) => (first, format!("/{rest}")),
        None => (path, String::new()),
    };
    let first = first.replace("~1", "/").replace("~0", "~");
    root.get(&first)?.pointer(&rest).map(Target::Schema)
}

/// Whether a schema needs no check at all: `true` or `{}`.
pub(super) fn accepts_everything(schema: &Value) -> bool {
    match schema {
        Value::Bool(accepts) => *accepts,
        Value::Object(map) => map.is_empty(),
        _ => true,
    }
}

/// Whether a value is an array with at least one element.
pub(super) fn is_non_empty_array(value: &Value) -> bool {
    value.as_array().is_some_and(|array| !array.is_empty())
}

/// Appends `/name` to a JSON Pointer, escaping `~` and `/`.
pub(super) fn push_pointer_segment(pointer: &mut String, name: &str) {
    pointer.push('/');
    for c in name.chars() {
        match c {
            '~' => pointer.push_str("~0"),
            '/' => pointer.push_str("~1"),
            c => pointer.push(c),
        }
    }
}

/// A non-negative integer keyword such as `minLength` (`3.0` counts as 3).
pub(super) fn count(schema: &Map<String, Value>, keyword: &str) -> Option<u64> {
    let number = schema.get(keyword)?.as_number()?;
    number.as_u64().or_else(|| {
        // The cast saturates; an integral non-negative f64 past u64::MAX is no practical bound.
        number.as_f64().filter(|f| crate::float::is_integral(*f) && *f >= 0.0).map(|f| f as u64)
    })
}

/// `noun` or its plural, to follow `n`.
pub(super) fn plural(n: u64, noun: &str) -> String {
    if n == 1 {
        noun.to_owned()
    } else {
        format!("{noun}s")
    }
}

/// A JSON type name with its article, as messages use it; `None` for an unknown name.
pub(super) fn with_article(name: &str) -> Option<&'static str> {
    Some(match name {
        "null" => "null",
        "boolean" => "a boolean",
        "integer" => "an integer",
        "number" => "a number",
        "string" => "a string",
        "array" => "an array",
        "object" => "an object",
        _ => return None,
    })
}

/// The JSON type of a value, with its article.
pub(super) fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Whether `value` has the JSON Schema type `name`.
pub(super) fn has_type(name: &str, value: &Value) -> bool {
    match (name, value) {
        ("integer", Value::Number(number)) => is_integer(number),
        ("null", Value::Null)
        | ("boolean", Value::Bool(_))
        | ("number", Value::Number(_))
        | ("string", Value::String(_))
        | ("array", Value::Array(_))
        | ("object", Value::Object(_)) => true,
        _ => false,
    }
}

/// Whether a number has no fractional part.
pub(super) fn is_integer(number: &Number) -> bool {
    number.is_i64() || number.is_u64() || number.as_f64().is_some_and(crate::float::is_integral)
}

/// A JSON number, classified for exact comparison.
#[derive(Debug, Clone, Copy)]
pub(super) enum Num {
    /// A number with no fractional part, small enough for an `i128`.
    Int(i128),
    /// Any other number: fractional, or too large in magnitude for an `i128`.
    Real(f64),
}

impl Num {
    /// Classifies a JSON number.
    fn of(number: &Number) -> Option<Self> {
        if let Some(i) = number.as_i64() {
            return Some(Self::Int(i.into()));
        }
        if let Some(u) = number.as_u64() {
            return Some(Self::Int(u.into()));
        }
        let f = number.as_f64()?;
        if crate::float::is_integral(f) && f.abs() < I128_LIMIT {
            // Exact: `f` is integral and within the range of i128.
            Some(Self::Int(f as i128))
        } else {
            Some(Self::Real(f))
        }
    }
}

/// Compares two JSON numbers by value (`1` equals `1.0`), exactly for integers.
pub(super) fn compare(a: &Number, b: &Number) -> Option<Ordering> {
    match (Num::of(a)?, Num::of(b)?) {
        (Num::Int(a), Num::Int(b)) => Some(a.cmp(&b)),
        (Num::Real(a), Num::Real(b)) => a.partial_cmp(&b),
        (Num::Int(a), Num::Real(b)) => compare_int_real(a, b),
        (Num::Real(a), Num::Int(b)) => compare_int_real(b, a).map(Ordering::reverse),
    }
}

/// Compares an integer with a number that is fractional or beyond the `i128` range.
pub(super) fn compare_int_real(int: i128, real: f64) -> Option<Ordering> {
    if real.is_nan() {
        None
    } else if real.abs() < I128_LIMIT {
        // `real` is fractional, so it lies strictly between its floor and the next integer.
        Some(if int <= crate::float::floor(real) as i128 { Ordering::Less } else { Ordering::Greater })
    } else {
        Some(if real > 0.0 { Ordering::Less } else { Ordering::Greater })
    }
}

/// JSON Schema equality: numbers compare by value, objects ignore member order.
///
/// The recursion goes no deeper than the shallower of the two values.
pub(super) fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Null, Value::Null) => true,
        (Value::Bool(a), Value::Bool(b)) => a == b,
        (Value::Number(a), Value::Number(b)) => compare(a, b) == Some(Ordering::Equal),
        (Value::String(a), Value::String(b)) => a == b,
        (Value::Array(a), Value::Array(b)) => a.len() == b.len() && a.iter().zip(b).all(|(a, b)| json_eq(a, b)),
        (Value::Object(a), Value::Object(b)) => {
            a.len() == b.len() && a.iter().all(|(name, a)| b.get(name).is_some_and(|b| json_eq(a, b)))
        }
        _ => false,
    }
}

/// Writes a text that is equal for two values exactly when [`json_eq`] holds.
///
/// Returns `false`, leaving `out` incomplete, when the value is nested more than `levels` deep.
pub(super) fn canonical(value: &Value, out: &mut String, levels: usize) -> bool {
    match value {
        Value::Null => out.push('n'),
        Value::Bool(b) => out.push(if *b { 't' } else { 'f' }),
        Value::Number(number) => match Num::of(number) {
            Some(Num::Int(i)) => {
                let _ = write!(out, "i{i};");
            }
            Some(Num::Real(f)) => {
                let _ = write!(out, "r{f:e};");
            }
            None => {
                let _ = write!(out, "?{number};");
            }
        },
        Value::String(text) => {
            let _ = write!(out, "{}", Quoted(text));
        }
        Value::Array(items) => {
            let Some(levels) = levels.checked_sub(1) else {
                return false;
            };
            out.push('[');
            for item in items {
                if !canonical(item, out, levels) {
                    return false;
                }
                out.push(',');
            }
            out.push(']');
        }
        Value::Object(members) => {
            let Some(levels) = levels.checked_sub(1) else {
                return false;
            };
            let mut sorted: Vec<(&String, &Value)> = members.iter().collect();
            sorted.sort_unstable_by_key(|&(name, _)| name);
            out.push('{');
            for (name, member) in sorted {
                let _ = write!(out, "{}:", Quoted(name));
                if !canonical(member, out, levels) {
                    return false;
                }
                out.push(',');
            }
            out.push('}');
        }
    }
    true
}

/// Displays a string in double quotes, escaped as in JSON.
pub(super) struct Quoted<'a>(pub(super) &'a str);

impl fmt::Display for Quoted<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_char('"')?;
        for c in self.0.chars() {
            match c {
                '"' => f.write_str("\\\"")?,
                '\\' => f.write_str("\\\\")?,
                '\n' => f.write_str("\\n")?,
                '\r' => f.write_str("\\r")?,
                '\t' => f.write_str("\\t")?,
                c if c.is_control() => write!(f, "\\u{:04x}", u32::from(c))?,
                c => f.write_char(c)?,
            }
        }
        f.write_char('"')
    }
}
