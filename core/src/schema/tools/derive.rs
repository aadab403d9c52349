//! Tool schemas derived from Rust types with [`schemars`] (feature `schemars`).

use crate::alloc_prelude::*;
use schemars::{generate::SchemaSettings, JsonSchema};

use super::Tool;
use crate::schema::JsonObject;

impl Tool {
    /// A tool named `name` whose `inputSchema` is derived from its arguments type `A`.
    ///
    /// The schema describes what `A` deserializes from: a field of type `Option` or with
    /// `#[serde(default)]` is not required, `#[serde(rename)]` is followed, and
    /// `#[serde(deny_unknown_fields)]` becomes `"additionalProperties": false`. Doc comments
    /// become `description`s and the type's name the root `title`.
    ///
    /// Every derived schema (this one and [`with_output_of`](Self::with_output_of)'s) follows
    /// JSON Schema 2020-12, the default dialect of MCP, and so carries no `$schema`. Its root is
    /// always `"type": "object"`, as every MCP revision requires of `inputSchema` (tool
    /// arguments are always an object): derive from a struct with named fields, a map, or an
    /// enum whose variants are objects; any other type fits no arguments. The types it refers
    /// to stay in `$defs` behind local `$ref`s (a recursive type needs them), which the
    /// router's [validator](crate::schema::validate) follows.
    ///
    /// [`RouterBuilder::typed_tool`](crate::server::RouterBuilder::typed_tool) registers a tool
    /// defined this way.
    ///
    /// # Examples
    ///
    /// ```
    /// use schemars::JsonSchema;
    /// use serde::Deserialize;
    /// use serde_json::json;
    /// use talaria_core::schema::tools::Tool;
    ///
    /// #[derive(Deserialize, JsonSchema)]
    /// struct Forecast {
    ///     /// The city to look up.
    ///     city: String,
    ///     days: Option<u8>,
    /// }
    ///
    /// let tool = Tool::for_args::<Forecast>("forecast").with_description("The weather to come");
    /// let schema = &tool.input_schema;
    /// assert_eq!(schema["type"], "object");
    /// assert_eq!(schema["required"], json!(["city"]));
    /// assert_eq!(schema["properties"]["city"], json!({"type": "string", "description": "The city to look up."}));
    /// assert_eq!(schema["properties"]["days"]["type"], json!(["integer", "null"]));
    /// assert!(schema.get("$schema").is_none());
    /// ```
    #[must_use]
    pub fn for_args<A: JsonSchema + ?Sized>(name: impl Into<String>) -> Self {
        Self::new(name, derived_object_schema::<A>(SchemaSettings::draft2020_12().for_deserialize()))
    }

    /// Sets `outputSchema` (2025-06-18+) to the schema derived from the output type `O`.
    ///
    /// The schema describes what `O` serializes to, the `structuredContent` a handler
    /// registered with [`RouterBuilder::structured_tool`] produces: every field is required
    /// unless `#[serde(skip_serializing_if)]` may leave it out, and an `Option` field may be
    /// `null`. The schema is shaped as [`for_args`](Self::for_args) describes, its root
    /// `"type": "object"`: through 2025-11-25 `structuredContent` is always an object, so `O`
    /// should serialize to one (wrap a list in a struct).
    ///
    /// [`RouterBuilder::typed_structured_tool`] registers a tool defined this way.
    ///
    /// [`RouterBuilder::structured_tool`]: crate::server::RouterBuilder::structured_tool
    /// [`RouterBuilder::typed_structured_tool`]: crate::server::RouterBuilder::typed_structured_tool
    ///
    /// # Examples
    ///
    /// ```
    /// use schemars::JsonSchema;
    /// use serde::{Deserialize, Serialize};
    /// use serde_json::json;
    /// use talaria_core::schema::tools::Tool;
    ///
    /// #[derive(Deserialize, JsonSchema)]
    /// struct Forecast {
    ///     city: String,
    /// }
    ///
    /// #[derive(Serialize, JsonSchema)]
    /// struct Weather {
    ///     celsius: f64,
    ///     warning: Option<String>,
    /// }
    ///
    /// let tool = Tool::for_args::<Forecast>("forecast").with_output_of::<Weather>();
    /// let schema = tool.output_schema.unwrap();
    /// assert_eq!(schema["type"], "object");
    /// assert_eq!(schema["required"], json!(["celsius", "warning"]));
    /// assert_eq!(schema["properties"]["celsius"]["type"], "number");
    /// ```
    #[must_use]
    pub fn with_output_of<O: JsonSchema + ?Sized>(self) -> Self {
        self.with_output_schema(derived_object_schema::<O>(SchemaSettings::draft2020_12().for_serialize()))
    }
}

/// The schema `settings` derive for `T`, without `$schema` and with `"type": "object"` at the root.
fn derived_object_schema<T: JsonSchema + ?Sized>(settings: SchemaSettings) -> JsonObject {
    let settings = settings.with(|s| s.meta_schema = None);
    let mut schema = settings.into_generator().into_root_schema_for::<T>();
    // A root schema is always an object (`true` becomes `{}`, `false` becomes `{"not": {}}`).
    let root = schema.ensure_object();
    root.remove("$schema");
    root.insert("type".into(), serde_json::Value::String("object".into()));
    core::mem::take(root)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
    use schemars::JsonSchema;
    use serde::{Deserialize, Serialize};
    use serde_json::{json, Value};

    use super::Tool;
    use crate::schema::validate::{describe, validate};

    /// Arguments with every kind of field a tool tends to take.
    #[derive(Debug, Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Booking {
        /// Where to.
        city: String,
        nights: u32,
        #[serde(default)]
        breakfast: bool,
        note: Option<String>,
        guest: Guest,
        extras: Vec<Extra>,
    }

    #[derive(Debug, Serialize, Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Guest {
        name: String,
        age: Option<u8>,
    }

    #[derive(Debug, Serialize, Deserialize, JsonSchema)]
    #[serde(rename_all = "lowercase")]
    enum Extra {
        Parking,
        Spa,
    }

    #[derive(Serialize, JsonSchema)]
    struct Confirmation {
        id: u64,
        total: f64,
        guest: Guest,
        extras: Vec<Extra>,
        #[serde(skip_serializing_if = "Option::is_none")]
        coupon: Option<String>,
        warning: Option<String>,
    }

    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Tree {
        label: String,
        children: Vec<Self>,
    }

    #[derive(Deserialize, JsonSchema)]
    #[serde(tag = "kind", rename_all = "lowercase")]
    #[allow(dead_code)]
    enum Shape {
        Circle { radius: f64 },
        Square { side: f64 },
    }

    #[derive(Deserialize, JsonSchema)]
    struct Nothing;

    #[test]
    fn input_schema_is_an_object_schema_with_the_required_fields_and_types() {
        let tool = Tool::for_args::<Booking>("book");
        let schema = &tool.input_schema;
        assert_eq!(tool.name, "book");
        assert_eq!(schema["type"], "object");
        assert!(schema.get("$schema").is_none(), "2020-12 is the default dialect: {schema:?}");
        // `Option` and `#[serde(default)]` fields are not required.
        assert_eq!(schema["required"], json!(["city", "nights", "guest", "extras"]));
        let properties = &schema["properties"];
        assert_eq!(properties["city"], json!({"type": "string", "description": "Where to."}));
        assert_eq!(properties["nights"]["type"], "integer");
        assert_eq!(properties["nights"]["minimum"], 0);
        assert_eq!(properties["breakfast"]["type"], "boolean");
        assert_eq!(properties["note"]["type"], json!(["string", "null"]));
        assert_eq!(properties["extras"]["type"], "array");
        // Named types stay in `$defs`, behind local references.
        assert_eq!(properties["guest"], json!({"$ref": "#/$defs/Guest"}));
        assert_eq!(schema["$defs"]["Guest"]["required"], json!(["name"]));
        assert_eq!(schema["$defs"]["Extra"]["enum"], json!(["parking", "spa"]));
    }

    #[test]
    fn the_validator_follows_the_derived_references() {
        let schema = Tool::for_args::<Booking>("book").input_schema;
        let good = json!({
            "city": "Oslo", "nights": 2, "note": null,
            "guest": {"name": "Ada", "age": 36}, "extras": ["spa"]
        });
        assert_eq!(validate(&schema, &good), []);
        serde_json::from_value::<Booking>(good).unwrap();

        let bad = json!({"city": 7, "nights": -1, "guest": {"age": "old"}, "extras": ["sauna"]});
        assert_eq!(
            describe(&validate(&schema, &bad)).unwrap(),
            r#""city": expected a string, got a number; "extras/0": must be one of "parking", "spa"; "#.to_owned()
                + r#""guest": missing required property "name"; "guest/age": expected an integer or null, got a string; "#
                + r#""nights": must be at least 0"#
        );
    }

    #[test]
    fn recursive_types_refer_to_the_root() {
        let schema = Tool::for_args::<Tree>("tree").input_schema;
        assert_eq!(schema["properties"]["children"]["items"], json!({"$ref": "#"}));
        let value = json!({"label": "a", "children": [{"label": "b", "children": [{"label": 3, "children": []}]}]});
        let violations = validate(&schema, &value);
        assert_eq!(describe(&violations).unwrap(), r#""children/0/children/0/label": expected a string, got a number"#);
    }

    #[test]
    fn the_root_is_always_an_object_schema() {
        // An internally tagged enum: a `oneOf` of objects, under `"type": "object"`.
        let schema = Tool::for_args::<Shape>("shape").input_schema;
        assert_eq!(schema["type"], "object");
        assert_eq!(schema["oneOf"].as_array().map(Vec::len), Some(2));
        assert_eq!(validate(&schema, &json!({"kind": "circle", "radius": 1.0})), []);
        assert_eq!(validate(&schema, &json!({"kind": "circle", "side": 1.0})).len(), 1);

        // Raw arguments: any object.
        let schema = Tool::for_args::<Value>("raw").input_schema;
        assert_eq!(schema, json!({"type": "object", "title": "AnyValue"}).as_object().cloned().unwrap());

        // A type that never deserializes from an object still yields a valid MCP tool.
        let schema = Tool::for_args::<Nothing>("nothing").input_schema;
        assert_eq!(schema["type"], "object");
        assert!(serde_json::from_value::<Nothing>(json!({})).is_err());
    }

    #[test]
    fn output_schema_accepts_what_the_output_serializes_to() {
        let tool = Tool::for_args::<Booking>("book").with_output_of::<Confirmation>();
        let schema = tool.output_schema.unwrap();
        assert_eq!(schema["type"], "object");
        assert!(schema.get("$schema").is_none());
        // What serialization always writes is required, `null` included.
        assert_eq!(schema["required"], json!(["id", "total", "guest", "extras", "warning"]));
        assert_eq!(schema["properties"]["total"]["type"], "number");

        let outputs = [
            Confirmation {
                id: 1,
                total: 99.5,
                guest: Guest { name: "Ada".into(), age: None },
                extras: vec![Extra::Parking],
                coupon: None,
                warning: None,
            },
            Confirmation {
                id: u64::MAX,
                total: 0.0,
                guest: Guest { name: String::new(), age: Some(255) },
                extras: vec![],
                coupon: Some("SPRING".into()),
                warning: Some("late check-in".into()),
            },
        ];
        for output in outputs {
            let value = serde_json::to_value(&output).unwrap();
            assert_eq!(validate(&schema, &value), [], "{value}");
        }
        assert_eq!(
            describe(&validate(&schema, &json!({"id": 1, "total": 1, "guest": {"age": 3}, "extras": []}))).unwrap(),
            r#"missing required property "warning"; "guest": missing required property "name""#
        );
    }

    #[test]
    fn derived_tools_serialize_as_mcp_tools() {
        let tool = Tool::for_args::<Guest>("greet").with_description("Greets").with_output_of::<Guest>();
        let value = serde_json::to_value(&tool).unwrap();
        assert_eq!(value["inputSchema"]["type"], "object");
        assert_eq!(value["outputSchema"]["type"], "object");
        // Input: `age` may be left out; output: it is always written, maybe as `null`.
        assert_eq!(value["inputSchema"]["required"], json!(["name"]));
        assert_eq!(value["outputSchema"]["required"], json!(["name", "age"]));
        let back: Tool = serde_json::from_value(value).unwrap();
        assert_eq!(back, tool);
    }
}
