//! Tests of the JSON Schema subset validator.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
use proptest::prelude::*;
use serde_json::json;

use std::cmp::Ordering;

use super::keywords::{compare, json_eq};
use super::*;

/// The displayed violations of `value` against `schema`.
fn errors(schema: &Value, value: &Value) -> Vec<String> {
    let schema = schema.as_object().expect("test schemas are objects");
    validate(schema, value).iter().map(ToString::to_string).collect()
}

/// A value nested `levels` arrays deep around `null`.
fn nested_arrays(levels: usize) -> Value {
    (0..levels).fold(Value::Null, |inner, _| Value::Array(vec![inner]))
}

#[test]
fn each_keyword_reports_what_is_wrong_and_where() {
    let cases: Vec<(Value, Value, Vec<&str>)> = vec![
        // type
        (json!({"type": "integer"}), json!(2), vec![]),
        (json!({"type": "integer"}), json!(2.0), vec![]),
        (json!({"type": "integer"}), json!(-7), vec![]),
        (json!({"type": "integer"}), json!(2.5), vec!["expected an integer, got 2.5"]),
        (json!({"type": "integer"}), json!("2"), vec!["expected an integer, got a string"]),
        (json!({"type": "number"}), json!(1), vec![]),
        (json!({"type": "number"}), json!(null), vec!["expected a number, got null"]),
        (json!({"type": "boolean"}), json!(false), vec![]),
        (json!({"type": "object"}), json!([]), vec!["expected an object, got an array"]),
        (json!({"type": "array"}), json!({}), vec!["expected an array, got an object"]),
        (json!({"type": "null"}), json!(true), vec!["expected null, got a boolean"]),
        (json!({"type": ["string", "null"]}), json!(null), vec![]),
        (json!({"type": ["string", "null"]}), json!(1), vec!["expected a string or null, got a number"]),
        (
            json!({"type": ["string", "integer", "boolean"]}),
            json!([]),
            vec!["expected a string, an integer or a boolean, got an array"],
        ),
        (json!({"type": ["number", "integer"]}), json!(0.5), vec![]),
        (json!({"type": ["string", "integer"]}), json!(0.5), vec!["expected a string or an integer, got 0.5"]),
        (json!({"type": "frobnicate"}), json!(1), vec![]),
        (json!({"type": ["frobnicate", "string"]}), json!(1), vec!["expected a string, got a number"]),
        (json!({"type": "string", "enum": ["a"]}), json!(1), vec!["expected a string, got a number"]),
        // properties and required, nested
        (
            json!({"type": "object", "properties": {"a": {"type": "integer"}}}),
            json!({"a": "x"}),
            vec![r#""a": expected an integer, got a string"#],
        ),
        (json!({"required": ["a", "b"]}), json!({"a": 1}), vec![r#"missing required property "b""#]),
        (json!({"required": ["a"]}), json!([]), vec![]),
        (
            json!({"properties": {"user": {"required": ["id"], "properties": {"id": {"type": "string"}}}}}),
            json!({"user": {}}),
            vec![r#""user": missing required property "id""#],
        ),
        (
            json!({"properties": {"user": {"properties": {"address": {"properties": {"zip": {"type": "string"}}}}}}}),
            json!({"user": {"address": {"zip": 12345}}}),
            vec![r#""user/address/zip": expected a string, got a number"#],
        ),
        (
            json!({"properties": {"a/b": {"type": "string"}, "c~d": {"type": "string"}, "e\"f": {"type": "string"}}}),
            json!({"a/b": 1, "c~d": 2, "e\"f": 3}),
            vec![
                r#""a~1b": expected a string, got a number"#,
                r#""c~0d": expected a string, got a number"#,
                r#""e\"f": expected a string, got a number"#,
            ],
        ),
        // additionalProperties
        (
            json!({"properties": {"a": {}}, "additionalProperties": false}),
            json!({"a": 1, "b": 2}),
            vec![r#"unexpected property "b""#],
        ),
        (json!({"additionalProperties": false}), json!({"b": 2}), vec![r#"unexpected property "b""#]),
        (
            json!({"properties": {"a": {}}, "additionalProperties": {"type": "string"}}),
            json!({"a": 1, "b": 2, "c": "x"}),
            vec![r#""b": expected a string, got a number"#],
        ),
        (json!({"patternProperties": {"^x": {}}, "additionalProperties": false}), json!({"xy": 1}), vec![]),
        // items, prefixItems, additionalItems
        (
            json!({"properties": {"items": {"type": "array", "items": {"properties": {"name": {"type": "string"}}}}}}),
            json!({"items": [{"name": "a"}, {"name": 3}]}),
            vec![r#""items/1/name": expected a string, got a number"#],
        ),
        (
            json!({"prefixItems": [{"type": "string"}, {"type": "integer"}], "items": false}),
            json!(["a", "b", 3]),
            vec![r#""1": expected an integer, got a string"#, r#""2": not allowed"#],
        ),
        (
            json!({"prefixItems": [{"type": "string"}], "items": {"type": "integer"}}),
            json!(["a", 1, 2, "c"]),
            vec![r#""3": expected an integer, got a string"#],
        ),
        (
            json!({"items": [{"type": "string"}], "additionalItems": {"type": "boolean"}}),
            json!(["a", true, 1]),
            vec![r#""2": expected a boolean, got a number"#],
        ),
        (json!({"items": [{"type": "string"}]}), json!(["a", 1]), vec![]),
        // enum and const
        (
            json!({"properties": {"mode": {"enum": ["fast", "slow"]}}}),
            json!({"mode": "medium"}),
            vec![r#""mode": must be one of "fast", "slow""#],
        ),
        (json!({"enum": [1, "a", null]}), json!(1.0), vec![]),
        (json!({"enum": [1, "a", null]}), json!(null), vec![]),
        (json!({"enum": [{"a": [1, 2]}]}), json!({"a": [1.0, 2]}), vec![]),
        (json!({"enum": [[1, 2]]}), json!([2, 1]), vec!["must be one of [1,2]"]),
        (json!({"enum": []}), json!(1), vec!["must be one of no value (the enum is empty)"]),
        (
            json!({"enum": [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]}),
            json!(12),
            vec!["must be one of 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, ... (12 values)"],
        ),
        (json!({"const": "x"}), json!("y"), vec![r#"must be "x""#]),
        (json!({"const": null}), json!(0), vec!["must be null"]),
        (json!({"const": {"a": [1]}}), json!({"a": [1.0]}), vec![]),
        (
            json!({"const": 9_007_199_254_740_993_u64}),
            json!(9_007_199_254_740_992_u64),
            vec!["must be 9007199254740993"],
        ),
        // numbers
        (json!({"minimum": 1, "maximum": 10}), json!(0), vec!["must be at least 1"]),
        (json!({"minimum": 1, "maximum": 10}), json!(11), vec!["must be at most 10"]),
        (json!({"minimum": 1, "maximum": 10}), json!(10), vec![]),
        (json!({"minimum": 1, "maximum": 10}), json!(1.0), vec![]),
        (json!({"minimum": 0.5}), json!(0), vec!["must be at least 0.5"]),
        (json!({"maximum": 0.5}), json!(1), vec!["must be at most 0.5"]),
        (json!({"maximum": -0.5}), json!(-1), vec![]),
        (json!({"exclusiveMinimum": 0, "exclusiveMaximum": 1}), json!(0), vec!["must be greater than 0"]),
        (json!({"exclusiveMinimum": 0, "exclusiveMaximum": 1}), json!(1.0), vec!["must be less than 1"]),
        (json!({"exclusiveMinimum": 0, "exclusiveMaximum": 1}), json!(0.5), vec![]),
        (json!({"exclusiveMinimum": true, "minimum": 1}), json!(1), vec![]),
        (json!({"minimum": -1}), json!(u64::MAX), vec![]),
        (json!({"maximum": i64::MIN}), json!(u64::MAX), vec!["must be at most -9223372036854775808"]),
        (json!({"maximum": 1e300}), json!(u64::MAX), vec![]),
        (json!({"minimum": 5}), json!("a"), vec![]),
        (json!({"minimum": "5"}), json!(1), vec![]),
        // strings
        (json!({"minLength": 3}), json!("héé"), vec![]),
        (json!({"maxLength": 2}), json!("héé"), vec!["must be at most 2 characters long"]),
        (json!({"minLength": 2}), json!("a"), vec!["must be at least 2 characters long"]),
        (json!({"minLength": 1}), json!(""), vec!["must be at least 1 character long"]),
        (json!({"minLength": 2.0}), json!("a"), vec!["must be at least 2 characters long"]),
        (json!({"minLength": 5}), json!(5), vec![]),
        (json!({"pattern": "^a$"}), json!("b"), vec![]),
        (json!({"format": "email"}), json!("not an email"), vec![]),
        // arrays
        (json!({"minItems": 2}), json!([1]), vec!["must contain at least 2 items"]),
        (json!({"maxItems": 1}), json!([1, 2]), vec!["must contain at most 1 item"]),
        (json!({"minItems": 1, "maxItems": 1}), json!([1]), vec![]),
        (
            json!({"uniqueItems": true}),
            json!([1, 2, 1.0]),
            vec!["must not contain duplicates (items 0 and 2 are equal)"],
        ),
        (json!({"uniqueItems": true}), json!([{"a": 1}, {"a": 2}, [1], ["1"], "1", 1.5, null, false, 0]), vec![]),
        (
            json!({"uniqueItems": true}),
            json!([{"a": 1, "b": [2]}, {"b": [2.0], "a": 1}]),
            vec!["must not contain duplicates (items 0 and 1 are equal)"],
        ),
        (json!({"uniqueItems": false}), json!([1, 1]), vec![]),
        // combinators
        (
            json!({"properties": {"x": {"anyOf": [{"type": "string"}, {"type": "integer", "minimum": 0}]}}}),
            json!({"x": -1}),
            vec![r#""x": does not match any of the anyOf schemas"#],
        ),
        (json!({"anyOf": [{"type": "string"}, {"type": "integer"}]}), json!(1), vec![]),
        (json!({"anyOf": []}), json!(1), vec![]),
        (
            json!({"oneOf": [{"type": "integer"}, {"type": "number"}]}),
            json!(1),
            vec!["must match exactly one of the oneOf schemas, but matches schemas 0 and 1"],
        ),
        (json!({"oneOf": [{"type": "integer"}, {"type": "number"}]}), json!(1.5), vec![]),
        (
            json!({"oneOf": [{"type": "integer"}, {"type": "number"}]}),
            json!("a"),
            vec!["must match exactly one of the oneOf schemas, matched none"],
        ),
        (
            json!({"allOf": [{"required": ["a"]}, {"required": ["b"]}, true]}),
            json!({}),
            vec![r#"missing required property "a""#, r#"missing required property "b""#],
        ),
        (json!({"not": {"type": "null"}}), json!(null), vec![r#"must not match the "not" schema"#]),
        (json!({"not": {"type": "null"}}), json!(0), vec![]),
        (json!({"not": false}), json!(0), vec![]),
        // $ref
        (
            json!({"$defs": {"pos": {"type": "integer", "minimum": 0}}, "properties": {"n": {"$ref": "#/$defs/pos"}}}),
            json!({"n": -1}),
            vec![r#""n": must be at least 0"#],
        ),
        (
            json!({"definitions": {"s": {"type": "string"}}, "items": {"$ref": "#/definitions/s"}}),
            json!(["a", 2]),
            vec![r#""1": expected a string, got a number"#],
        ),
        (
            json!({"$defs": {"a/b": {"const": 1}}, "$ref": "#/$defs/a~1b", "maximum": 0}),
            json!(1),
            vec!["must be at most 0"],
        ),
        (
            json!({"$defs": {"list": {"items": [{"type": "null"}, {"const": 2}]}}, "$ref": "#/$defs/list/items/1"}),
            json!(3),
            vec!["must be 2"],
        ),
        (json!({"$ref": "#/$defs/missing"}), json!(1), vec![r##"cannot resolve $ref "#/$defs/missing""##]),
        (json!({"$ref": "https://example.com/schema.json"}), json!(1), vec![]),
        (json!({"$ref": "#anchor"}), json!(1), vec![]),
        (
            json!({"type": "object", "properties": {"children": {"items": {"$ref": "#"}}, "name": {"type": "string"}}}),
            json!({"name": "a", "children": [{"name": "b", "children": [{"name": 1}]}]}),
            vec![r#""children/0/children/0/name": expected a string, got a number"#],
        ),
        // boolean schemas, unknown and malformed keywords
        (json!({"properties": {"a": true, "b": false}}), json!({"a": 1, "b": 2}), vec![r#""b": not allowed"#]),
        (
            json!({"x-custom": 1, "nullable": true, "title": "T", "type": "string"}),
            json!(null),
            vec!["expected a string, got null"],
        ),
        (
            json!({"required": "a", "properties": [], "items": 3, "enum": "a", "allOf": {}, "anyOf": 1}),
            json!({"b": [1]}),
            vec![],
        ),
        (json!({"properties": {"a": 5}}), json!({"a": 1}), vec![]),
    ];
    for (schema, value, expected) in cases {
        assert_eq!(errors(&schema, &value), expected, "schema {schema} value {value}");
    }
}

#[test]
fn paths_are_json_pointers() {
    let schema = json!({"properties": {"items": {"items": {"properties": {"a/b": {"type": "string"}}}}}});
    let violations = validate(schema.as_object().unwrap(), &json!({"items": [{}, {"a/b": 1}]}));
    assert_eq!(
        violations,
        [Violation { path: "/items/1/a~1b".into(), message: "expected a string, got a number".into() }]
    );
    let root = validate(json!({"type": "string"}).as_object().unwrap(), &json!(1));
    assert_eq!(root[0].path, "");
    assert_eq!(root[0].to_string(), "expected a string, got a number");
}

#[test]
fn describe_joins_violations_in_order() {
    assert_eq!(describe(&[]), None);
    let schema = json!({"properties": {"a": {"type": "integer"}}, "required": ["b"]});
    let violations = validate(schema.as_object().unwrap(), &json!({"a": "x"}));
    assert_eq!(
        describe(&violations).unwrap(),
        r#"missing required property "b"; "a": expected an integer, got a string"#
    );
}

#[test]
fn violations_are_capped() {
    let schema = json!({"additionalProperties": {"type": "string"}});
    let value: Map<String, Value> = (0..30).map(|i| (format!("p{i:02}"), json!(i))).collect();
    let violations = validate(schema.as_object().unwrap(), &Value::Object(value));
    assert_eq!(violations.len(), MAX_VIOLATIONS);
    assert_eq!(violations[0].to_string(), r#""p00": expected a string, got a number"#);
}

#[test]
fn deep_values_are_reported_not_overflowed() {
    let schema = json!({"type": ["array", "null"], "items": {"$ref": "#"}});
    assert!(errors(&schema, &nested_arrays(MAX_VALUE_DEPTH)).is_empty());
    let violations = validate(schema.as_object().unwrap(), &nested_arrays(200));
    assert_eq!(violations.len(), 1);
    assert_eq!(violations[0].path, "/0".repeat(MAX_VALUE_DEPTH + 1));
    assert_eq!(violations[0].message, "nested too deeply (more than 64 levels)");
    // A schema that does not look inside accepts any depth.
    assert!(errors(&json!({"type": "array"}), &nested_arrays(200)).is_empty());
    assert!(errors(&json!({"items": true}), &nested_arrays(200)).is_empty());
}

#[test]
fn deep_values_in_unique_items_are_reported() {
    let violations = validate(json!({"uniqueItems": true}).as_object().unwrap(), &nested_arrays(100));
    assert_eq!(violations.len(), 1);
    assert_eq!(violations[0].path, "/0");
    assert_eq!(violations[0].message, "nested too deeply (more than 64 levels)");
}

#[test]
fn ref_cycles_are_schema_too_deep() {
    let cycle = json!({"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"});
    assert_eq!(errors(&cycle, &json!(1)), ["schema too deep"]);
    assert_eq!(errors(&json!({"$ref": "#"}), &json!(1)), ["schema too deep"]);
    let nested = json!({"properties": {"x": {"$ref": "#/properties/x"}}});
    assert_eq!(errors(&nested, &json!({"x": 1})), [r#""x": schema too deep"#]);
    // A chain of 32 refs is fine.
    let mut defs = Map::new();
    for i in 0..MAX_REF_DEPTH - 1 {
        defs.insert(format!("d{i}"), json!({"$ref": format!("#/$defs/d{}", i + 1)}));
    }
    defs.insert(format!("d{}", MAX_REF_DEPTH - 1), json!({"type": "string"}));
    let chain = json!({"$defs": defs, "$ref": "#/$defs/d0"});
    assert_eq!(errors(&chain, &json!(1)), ["expected a string, got a number"]);
}

#[test]
fn deeply_nested_schemas_are_schema_too_deep() {
    let schema = (0..300).fold(json!({"type": "string"}), |inner, _| json!({"allOf": [inner]}));
    assert_eq!(errors(&schema, &json!(1)), ["schema too deep"]);
    let schema = (0..200).fold(json!({"type": "string"}), |inner, _| json!({"allOf": [inner]}));
    assert_eq!(errors(&schema, &json!(1)), ["expected a string, got a number"]);
}

#[test]
fn deep_recursion_fits_a_small_stack() {
    let worst = std::thread::Builder::new()
        .stack_size(1 << 20)
        .spawn(|| {
            let recursive = json!({"allOf": [{"$ref": "#"}], "items": {"anyOf": [{"$ref": "#"}]}});
            let a = validate(recursive.as_object().unwrap(), &nested_arrays(100));
            let nested = (0..300).fold(json!({}), |inner, _| json!({"not": {"not": inner}}));
            let b = validate(nested.as_object().unwrap(), &json!(1));
            (a, b)
        })
        .unwrap()
        .join()
        .unwrap();
    assert!(!worst.0.is_empty());
    assert_eq!(worst.1.len(), 1);
}

#[test]
fn exponential_schemas_stop_with_a_violation() {
    let schema = json!({
        "$defs": {"a": {"anyOf": [{"$ref": "#/$defs/a"}, {"$ref": "#/$defs/a"}]}},
        "$ref": "#/$defs/a",
    });
    let violations = validate(schema.as_object().unwrap(), &json!(1));
    assert_eq!(violations.last().unwrap().message, "validation stopped: the schema is too complex for this value");
    assert!(violations.len() <= MAX_VIOLATIONS);
}

#[test]
fn numbers_compare_by_value() {
    let n = |v: Value| v.as_number().unwrap().clone();
    assert_eq!(compare(&n(json!(1)), &n(json!(1.0))), Some(Ordering::Equal));
    assert_eq!(compare(&n(json!(-1)), &n(json!(-0.5))), Some(Ordering::Less));
    assert_eq!(compare(&n(json!(-1)), &n(json!(-1.5))), Some(Ordering::Greater));
    assert_eq!(compare(&n(json!(u64::MAX)), &n(json!(1e300))), Some(Ordering::Less));
    assert_eq!(compare(&n(json!(-1e300)), &n(json!(i64::MIN))), Some(Ordering::Less));
    assert_eq!(compare(&n(json!(i64::MIN)), &n(json!(u64::MAX))), Some(Ordering::Less));
    assert!(json_eq(&json!(0.0), &json!(-0.0)));
}

/// Arbitrary JSON values, a few levels deep.
fn arb_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        (-1e6..1e6f64).prop_map(Value::from),
        prop_oneof![Just(0.0), Just(2.0), Just(-3.0), Just(1e300)].prop_map(Value::from),
        "[a-c/~\"é]{0,4}".prop_map(Value::from),
    ];
    leaf.prop_recursive(4, 32, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map("[a-c/~]{0,2}", inner, 0..4)
                .prop_map(|members| Value::Object(members.into_iter().collect())),
        ]
    })
}

/// Arbitrary schemas built from the supported keywords, a few levels deep.
fn arb_schema() -> impl Strategy<Value = Value> {
    let type_name = prop::sample::select(vec!["null", "boolean", "integer", "number", "string", "array", "object"]);
    let keyword = prop_oneof![
        type_name.clone().prop_map(|t| ("type", json!(t))),
        prop::collection::vec(type_name, 0..3).prop_map(|ts| ("type", json!(ts))),
        arb_json().prop_map(|v| ("const", v)),
        prop::collection::vec(arb_json(), 0..3).prop_map(|vs| ("enum", Value::Array(vs))),
        (-10i64..10).prop_map(|n| ("minimum", json!(n))),
        (-10.0..10.0f64).prop_map(|n| ("maximum", json!(n))),
        (-10i64..10).prop_map(|n| ("exclusiveMinimum", json!(n))),
        (-10i64..10).prop_map(|n| ("exclusiveMaximum", json!(n))),
        (0u64..4).prop_map(|n| ("minLength", json!(n))),
        (0u64..4).prop_map(|n| ("maxLength", json!(n))),
        (0u64..4).prop_map(|n| ("minItems", json!(n))),
        (0u64..4).prop_map(|n| ("maxItems", json!(n))),
        any::<bool>().prop_map(|b| ("uniqueItems", json!(b))),
        prop::collection::vec("[a-c]", 0..3).prop_map(|names| ("required", json!(names))),
        prop_oneof![Just("#"), Just("#/$defs/a"), Just("#/$defs/missing"), Just("#/properties")]
            .prop_map(|r| ("$ref", json!(r))),
        Just(("pattern", json!("^x+$"))),
        Just(("additionalProperties", json!(false))),
    ];
    let leaf = prop_oneof![any::<bool>().prop_map(Value::Bool), prop::collection::vec(keyword, 0..4).prop_map(object),];
    leaf.prop_recursive(3, 24, 3, |inner| {
        let sub = prop_oneof![
            prop::collection::btree_map("[a-c]", inner.clone(), 0..3).prop_map(|p| ("properties", json!(p))),
            inner.clone().prop_map(|s| ("additionalProperties", s)),
            inner.clone().prop_map(|s| ("items", s)),
            prop::collection::vec(inner.clone(), 0..3).prop_map(|s| ("prefixItems", Value::Array(s))),
            prop::collection::vec(inner.clone(), 0..3).prop_map(|s| ("allOf", Value::Array(s))),
            prop::collection::vec(inner.clone(), 0..3).prop_map(|s| ("anyOf", Value::Array(s))),
            prop::collection::vec(inner.clone(), 0..3).prop_map(|s| ("oneOf", Value::Array(s))),
            inner.prop_map(|s| ("not", s)),
        ];
        prop::collection::vec(sub, 1..3).prop_map(object)
    })
}

/// An object of keywords; a later keyword replaces an earlier one of the same name.
fn object(keywords: Vec<(&str, Value)>) -> Value {
    Value::Object(keywords.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
}

/// A root schema: `schema` with `defs` as its `$defs/a`.
fn root(schema: Value, defs: Value) -> Map<String, Value> {
    let mut root = match schema {
        Value::Object(map) => map,
        other => Map::from_iter([("allOf".to_owned(), json!([other]))]),
    };
    root.insert("$defs".to_owned(), Value::Object(Map::from_iter([("a".to_owned(), defs)])));
    root
}

fn fixed_schemas() -> Vec<Value> {
    vec![
        json!({}),
        json!({"type": "object", "properties": {"a": {"type": "integer"}, "b": {"enum": ["x", 1]}}, "required": ["a"], "additionalProperties": false}),
        json!({"type": "array", "items": {"$ref": "#"}, "uniqueItems": true, "maxItems": 2}),
        json!({"anyOf": [{"type": "string", "minLength": 1}, {"type": "number", "minimum": 0}], "not": {"const": 5}}),
        json!({"oneOf": [{"$ref": "#"}, {"type": "null"}], "prefixItems": [true, false]}),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn never_panics_on_fixed_schemas(value in arb_json()) {
        for schema in fixed_schemas() {
            let violations = validate(schema.as_object().unwrap(), &value);
            prop_assert!(violations.len() <= MAX_VIOLATIONS);
            prop_assert_eq!(describe(&violations).is_none(), violations.is_empty());
        }
    }

    #[test]
    fn never_panics_on_arbitrary_schemas(schema in arb_schema(), defs in arb_schema(), value in arb_json()) {
        let root = root(schema, defs);
        let violations = validate(&root, &value);
        prop_assert!(violations.len() <= MAX_VIOLATIONS);
        for violation in &violations {
            prop_assert!(violation.path.is_empty() || violation.path.starts_with('/'));
            prop_assert!(!violation.to_string().is_empty());
        }
    }

    #[test]
    fn const_and_enum_accept_their_own_values(value in arb_json(), others in prop::collection::vec(arb_json(), 0..4)) {
        prop_assert_eq!(errors(&json!({"const": value}), &value), Vec::<String>::new());
        let mut options = others;
        options.push(value);
        options.rotate_left(1);
        let schema = json!({"enum": options});
        for option in &options {
            prop_assert_eq!(errors(&schema, option), Vec::<String>::new());
        }
    }

    #[test]
    fn unique_items_agrees_with_json_eq(items in prop::collection::vec(arb_json(), 0..5)) {
        let has_duplicates = items.iter().enumerate().any(|(i, a)| items[..i].iter().any(|b| json_eq(a, b)));
        let violations = errors(&json!({"uniqueItems": true}), &Value::Array(items));
        prop_assert_eq!(violations.len(), usize::from(has_duplicates));
    }
}
