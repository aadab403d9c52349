//! Typed values survive encode -> decode unchanged, whatever optional and unknown members they
//! carry.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use proptest::prelude::*;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{Map, Value};
use talaria_core::schema::{
    tools::{CallToolResult, Tool, ToolAnnotations},
    utilities::ProgressNotificationParams,
    Annotations, ContentBlock, Icon, ImageContent, Implementation, JsonObject, Role, TextContent,
};

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        (-1.0e12f64..1.0e12).prop_map(Value::from),
        "\\PC{0,10}".prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map("[a-z]{1,6}", inner, 0..4).prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// Unknown members: keys no MCP type defines.
fn extra() -> impl Strategy<Value = JsonObject> {
    prop::collection::btree_map("x-[a-z]{1,6}", json_value(), 0..3).prop_map(|m| m.into_iter().collect::<Map<_, _>>())
}

fn opt_text() -> impl Strategy<Value = Option<String>> {
    prop::option::of("\\PC{0,12}")
}

fn finite() -> impl Strategy<Value = f64> {
    prop_oneof![(-1.0e9f64..1.0e9), (-1000i64..1000).prop_map(|i| i as f64), Just(0.5), Just(-0.0)]
}

fn meta() -> impl Strategy<Value = Option<JsonObject>> {
    prop::option::of(extra())
}

fn implementation() -> impl Strategy<Value = Implementation> {
    (
        "\\PC{1,10}",
        "[0-9.]{1,6}",
        opt_text(),
        opt_text(),
        prop::option::of(prop::collection::vec("\\PC{1,20}", 0..2)),
        extra(),
    )
        .prop_map(|(name, version, title, description, icons, extra)| Implementation {
            title,
            description,
            icons: icons.map(|v| v.into_iter().map(Icon::new).collect()),
            extra,
            ..Implementation::new(name, version)
        })
}

fn annotations() -> impl Strategy<Value = Option<Annotations>> {
    prop::option::of(
        (
            prop::option::of(prop::collection::vec(prop_oneof![Just(Role::User), Just(Role::Assistant)], 0..2)),
            prop::option::of(finite()),
            extra(),
        )
            .prop_map(|(audience, priority, extra)| Annotations {
                audience,
                priority,
                last_modified: None,
                extra,
            }),
    )
}

fn content_block() -> impl Strategy<Value = ContentBlock> {
    prop_oneof![
        ("\\PC{0,30}", annotations(), meta(), extra()).prop_map(|(text, annotations, meta, extra)| ContentBlock::Text(
            TextContent { text, annotations: annotations.map(Box::new), meta, extra }
        )),
        ("[A-Za-z0-9+/]{0,12}", "image/(png|jpeg)", meta())
            .prop_map(|(data, mime, meta)| ContentBlock::Image(ImageContent { meta, ..ImageContent::new(data, mime) })),
        (extra(), "[a-z]{3,8}").prop_map(|(mut fields, kind)| {
            fields.insert("type".into(), Value::String(format!("future-{kind}")));
            ContentBlock::Unknown(fields)
        }),
    ]
}

fn call_tool_result() -> impl Strategy<Value = CallToolResult> {
    (
        prop::collection::vec(content_block(), 0..4),
        prop::option::of(json_value()),
        prop::option::of(any::<bool>()),
        meta(),
        extra(),
    )
        .prop_map(|(content, structured, is_error, meta, extra)| {
            // `null` in an optional member reads as absent, so it is not generated there.
            let structured_content = structured.filter(|v| !v.is_null());
            CallToolResult { content, structured_content, is_error, meta, extra, ..CallToolResult::new(vec![]) }
        })
}

fn tool() -> impl Strategy<Value = Tool> {
    (
        "[a-z_]{1,12}",
        opt_text(),
        opt_text(),
        extra(),
        prop::option::of(extra()),
        prop::option::of(any::<bool>()),
        extra(),
    )
        .prop_map(|(name, title, description, schema, output, read_only, extra)| Tool {
            title,
            description,
            output_schema: output.map(Into::into),
            annotations: read_only.map(|r| ToolAnnotations { read_only_hint: Some(r), ..Default::default() }),
            extra,
            ..Tool::new(name, schema)
        })
}

fn progress() -> impl Strategy<Value = ProgressNotificationParams> {
    (any::<i64>(), finite(), prop::option::of(finite()), opt_text())
        .prop_map(|(token, p, total, message)| ProgressNotificationParams::new(token.into(), p, total, message))
}

fn round_trips<T: Serialize + DeserializeOwned + PartialEq + std::fmt::Debug>(value: &T) -> Result<(), TestCaseError> {
    let bytes = serde_json::to_vec(value).unwrap();
    let back: T = serde_json::from_slice(&bytes)
        .map_err(|e| TestCaseError::fail(format!("{e}: {}", String::from_utf8_lossy(&bytes))))?;
    prop_assert_eq!(&back, value);
    // Encoding is a fixed point.
    prop_assert_eq!(serde_json::to_vec(&back).unwrap(), bytes);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn implementations_round_trip(v in implementation()) { round_trips(&v)?; }

    #[test]
    fn content_blocks_round_trip(v in content_block()) { round_trips(&v)?; }

    #[test]
    fn tool_results_round_trip(v in call_tool_result()) { round_trips(&v)?; }

    #[test]
    fn tools_round_trip(v in tool()) { round_trips(&v)?; }

    #[test]
    fn progress_round_trips(v in progress()) { round_trips(&v)?; }
}
