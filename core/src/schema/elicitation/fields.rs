//! The schemas of elicitation form fields: the members of an [`ElicitationSchema`](super::ElicitationSchema).

use crate::alloc_prelude::*;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::super::common::JsonObject;
use super::super::macros::mcp_struct;

mcp_struct! {
    /// A text field.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::elicitation::StringSchema;
    ///
    /// let s: StringSchema = serde_json::from_str(r#"{"type":"string","format":"email","maxLength":50}"#).unwrap();
    /// assert_eq!(s.format.as_deref(), Some("email"));
    /// assert_eq!(s.max_length, Some(50));
    /// ```
    #[derive(Default)]
    pub struct StringSchema {
        @tag "type" = "string";
        /// Display name.
        opt title: String = "title",
        /// Help text.
        opt description: String = "description",
        /// Minimum length.
        opt min_length: u64 = "minLength",
        /// Maximum length.
        opt max_length: u64 = "maxLength",
        /// Format: `date`, `date-time`, `email` or `uri`.
        opt format: String = "format",
        /// Default value (2025-11-25+).
        opt default: String = "default",
    }
}

/// Whether a [`NumberSchema`] accepts any number or only integers.
///
/// # Examples
///
/// ```
/// use talaria_core::schema::elicitation::NumberKind;
///
/// assert_eq!(serde_json::to_string(&NumberKind::Integer).unwrap(), r#""integer""#);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NumberKind {
    /// Any number.
    #[default]
    Number,
    /// Integers only.
    Integer,
}

mcp_struct! {
    /// A number field.
    ///
    /// Bounds and default keep their JSON spelling (`50` stays `50`, not `50.0`).
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::elicitation::{NumberKind, NumberSchema};
    ///
    /// let s: NumberSchema = serde_json::from_str(r#"{"type":"integer","minimum":0,"maximum":100}"#).unwrap();
    /// assert_eq!(s.kind, NumberKind::Integer);
    /// assert_eq!(s.maximum.unwrap().as_u64(), Some(100));
    /// ```
    #[derive(Default)]
    pub struct NumberSchema {
        /// `number` or `integer`.
        req kind: NumberKind = "type",
        /// Display name.
        opt title: String = "title",
        /// Help text.
        opt description: String = "description",
        /// Lower bound.
        opt minimum: serde_json::Number = "minimum",
        /// Upper bound.
        opt maximum: serde_json::Number = "maximum",
        /// Default value (2025-11-25+).
        opt default: serde_json::Number = "default",
    }
}

mcp_struct! {
    /// A yes/no field.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::elicitation::BooleanSchema;
    ///
    /// let s: BooleanSchema = serde_json::from_str(r#"{"type":"boolean","default":false}"#).unwrap();
    /// assert_eq!(s.default, Some(false));
    /// ```
    #[derive(Default)]
    pub struct BooleanSchema {
        @tag "type" = "boolean";
        /// Display name.
        opt title: String = "title",
        /// Help text.
        opt description: String = "description",
        /// Default value.
        opt default: bool = "default",
    }
}

mcp_struct! {
    /// A single choice among plain values (2025-11-25+; the 2025-06-18 `EnumSchema` without
    /// `enumNames` has the same shape).
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::elicitation::UntitledSingleSelectEnumSchema;
    ///
    /// let s: UntitledSingleSelectEnumSchema = serde_json::from_str(r#"{"type":"string","enum":["a","b"]}"#).unwrap();
    /// assert_eq!(s.values, ["a", "b"]);
    /// ```
    #[derive(Default)]
    pub struct UntitledSingleSelectEnumSchema {
        @tag "type" = "string";
        /// Display name.
        opt title: String = "title",
        /// Help text.
        opt description: String = "description",
        /// The values to choose from.
        req values: Vec<String> = "enum",
        /// Default value.
        opt default: String = "default",
    }
}

mcp_struct! {
    /// A value with a display title, one option of a titled enum.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::elicitation::EnumOption;
    ///
    /// let o = EnumOption::new("#FF0000", "Red");
    /// assert_eq!(serde_json::to_string(&o).unwrap(), r##"{"const":"#FF0000","title":"Red"}"##);
    /// ```
    #[derive(Default)]
    pub struct EnumOption {
        /// The value.
        req value: String = "const",
        /// What the user sees.
        req title: String = "title",
    }
}

impl EnumOption {
    /// An option with value `value` shown as `title`.
    #[must_use]
    pub fn new(value: impl Into<String>, title: impl Into<String>) -> Self {
        Self { value: value.into(), title: title.into(), extra: JsonObject::new() }
    }
}

mcp_struct! {
    /// A single choice among titled values (2025-11-25+).
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::elicitation::TitledSingleSelectEnumSchema;
    ///
    /// let s: TitledSingleSelectEnumSchema =
    ///     serde_json::from_str(r#"{"type":"string","oneOf":[{"const":"r","title":"Red"}]}"#).unwrap();
    /// assert_eq!(s.one_of[0].title, "Red");
    /// ```
    #[derive(Default)]
    pub struct TitledSingleSelectEnumSchema {
        @tag "type" = "string";
        /// Display name.
        opt title: String = "title",
        /// Help text.
        opt description: String = "description",
        /// The options.
        req one_of: Vec<EnumOption> = "oneOf",
        /// Default value.
        opt default: String = "default",
    }
}

mcp_struct! {
    /// The item schema of an [`UntitledMultiSelectEnumSchema`].
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::elicitation::UntitledEnumItems;
    ///
    /// let i: UntitledEnumItems = serde_json::from_str(r#"{"type":"string","enum":["a"]}"#).unwrap();
    /// assert_eq!(i.values, ["a"]);
    /// ```
    #[derive(Default)]
    pub struct UntitledEnumItems {
        @tag "type" = "string";
        /// The values to choose from.
        req values: Vec<String> = "enum",
    }
}

mcp_struct! {
    /// The item schema of a [`TitledMultiSelectEnumSchema`].
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::elicitation::TitledEnumItems;
    ///
    /// let i: TitledEnumItems = serde_json::from_str(r#"{"anyOf":[{"const":"a","title":"A"}]}"#).unwrap();
    /// assert_eq!(i.any_of[0].value, "a");
    /// ```
    #[derive(Default)]
    pub struct TitledEnumItems {
        /// The options.
        req any_of: Vec<EnumOption> = "anyOf",
    }
}

mcp_struct! {
    /// Several choices among plain values (2025-11-25+).
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::elicitation::UntitledMultiSelectEnumSchema;
    ///
    /// let s: UntitledMultiSelectEnumSchema =
    ///     serde_json::from_str(r#"{"type":"array","items":{"type":"string","enum":["a","b"]},"maxItems":2}"#).unwrap();
    /// assert_eq!(s.items.values.len(), 2);
    /// assert_eq!(s.max_items, Some(2));
    /// ```
    #[derive(Default)]
    pub struct UntitledMultiSelectEnumSchema {
        @tag "type" = "array";
        /// Display name.
        opt title: String = "title",
        /// Help text.
        opt description: String = "description",
        /// Fewest choices.
        opt min_items: u64 = "minItems",
        /// Most choices.
        opt max_items: u64 = "maxItems",
        /// The values to choose from.
        req items: UntitledEnumItems = "items",
        /// Default choices.
        opt default: Vec<String> = "default",
    }
}

mcp_struct! {
    /// Several choices among titled values (2025-11-25+).
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::elicitation::TitledMultiSelectEnumSchema;
    ///
    /// let s: TitledMultiSelectEnumSchema =
    ///     serde_json::from_str(r#"{"type":"array","items":{"anyOf":[{"const":"a","title":"A"}]}}"#).unwrap();
    /// assert_eq!(s.items.any_of[0].title, "A");
    /// ```
    #[derive(Default)]
    pub struct TitledMultiSelectEnumSchema {
        @tag "type" = "array";
        /// Display name.
        opt title: String = "title",
        /// Help text.
        opt description: String = "description",
        /// Fewest choices.
        opt min_items: u64 = "minItems",
        /// Most choices.
        opt max_items: u64 = "maxItems",
        /// The options.
        req items: TitledEnumItems = "items",
        /// Default choices.
        opt default: Vec<String> = "default",
    }
}

mcp_struct! {
    /// A single choice with titles in a parallel `enumNames` array (the 2025-06-18
    /// `EnumSchema`; deprecated from 2025-11-25 on).
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::elicitation::LegacyTitledEnumSchema;
    ///
    /// let s: LegacyTitledEnumSchema =
    ///     serde_json::from_str(r#"{"type":"string","enum":["r"],"enumNames":["Red"]}"#).unwrap();
    /// assert_eq!(s.names, Some(vec!["Red".to_owned()]));
    /// ```
    #[derive(Default)]
    pub struct LegacyTitledEnumSchema {
        @tag "type" = "string";
        /// Display name.
        opt title: String = "title",
        /// Help text.
        opt description: String = "description",
        /// The values to choose from.
        req values: Vec<String> = "enum",
        /// Display names of the values, in the same order.
        opt names: Vec<String> = "enumNames",
        /// Default value (2025-11-25+).
        opt default: String = "default",
    }
}

/// The schema of one form field.
///
/// Told apart by `type` and by which of `enum`, `enumNames`, `oneOf` and `items` are present.
/// A shape this SDK does not recognise is kept whole in `Unknown`.
///
/// # Examples
///
/// ```
/// use talaria_core::schema::elicitation::PrimitiveSchemaDefinition;
///
/// let f: PrimitiveSchemaDefinition = serde_json::from_str(r#"{"type":"string","enum":["a"]}"#).unwrap();
/// assert!(matches!(f, PrimitiveSchemaDefinition::UntitledSingleSelect(_)));
/// let f: PrimitiveSchemaDefinition = serde_json::from_str(r#"{"type":"object"}"#).unwrap();
/// assert!(matches!(f, PrimitiveSchemaDefinition::Unknown(_)));
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum PrimitiveSchemaDefinition {
    /// Text.
    String(StringSchema),
    /// A number or integer.
    Number(NumberSchema),
    /// A boolean.
    Boolean(BooleanSchema),
    /// One of plain values.
    UntitledSingleSelect(UntitledSingleSelectEnumSchema),
    /// One of titled values.
    TitledSingleSelect(TitledSingleSelectEnumSchema),
    /// Several of plain values.
    UntitledMultiSelect(UntitledMultiSelectEnumSchema),
    /// Several of titled values.
    TitledMultiSelect(TitledMultiSelectEnumSchema),
    /// One of values titled by `enumNames`.
    LegacyTitled(LegacyTitledEnumSchema),
    /// A shape this SDK does not know, kept whole.
    Unknown(JsonObject),
}

macro_rules! primitive_from {
    ($($variant:ident($inner:ty)),* $(,)?) => {
        $(
            impl From<$inner> for PrimitiveSchemaDefinition {
                fn from(v: $inner) -> Self {
                    Self::$variant(v)
                }
            }
        )*
    };
}

primitive_from! {
    String(StringSchema),
    Number(NumberSchema),
    Boolean(BooleanSchema),
    UntitledSingleSelect(UntitledSingleSelectEnumSchema),
    TitledSingleSelect(TitledSingleSelectEnumSchema),
    UntitledMultiSelect(UntitledMultiSelectEnumSchema),
    TitledMultiSelect(TitledMultiSelectEnumSchema),
    LegacyTitled(LegacyTitledEnumSchema),
}

impl Serialize for PrimitiveSchemaDefinition {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::String(v) => v.serialize(serializer),
            Self::Number(v) => v.serialize(serializer),
            Self::Boolean(v) => v.serialize(serializer),
            Self::UntitledSingleSelect(v) => v.serialize(serializer),
            Self::TitledSingleSelect(v) => v.serialize(serializer),
            Self::UntitledMultiSelect(v) => v.serialize(serializer),
            Self::TitledMultiSelect(v) => v.serialize(serializer),
            Self::LegacyTitled(v) => v.serialize(serializer),
            Self::Unknown(m) => m.serialize(serializer),
        }
    }
}

/// The variant an object decodes to.
#[derive(Clone, Copy)]
enum FieldKind {
    String,
    Number,
    Boolean,
    UntitledSingle,
    TitledSingle,
    UntitledMulti,
    TitledMulti,
    Legacy,
    Unknown,
}

impl FieldKind {
    fn of(map: &JsonObject) -> Self {
        let items = map.get("items").and_then(serde_json::Value::as_object);
        match map.get("type").and_then(serde_json::Value::as_str) {
            Some("string") if map.contains_key("oneOf") => Self::TitledSingle,
            Some("string") if map.contains_key("enum") && map.contains_key("enumNames") => Self::Legacy,
            Some("string") if map.contains_key("enum") => Self::UntitledSingle,
            Some("string") => Self::String,
            Some("number" | "integer") => Self::Number,
            Some("boolean") => Self::Boolean,
            Some("array") if items.is_some_and(|i| i.contains_key("anyOf")) => Self::TitledMulti,
            Some("array") if items.is_some_and(|i| i.contains_key("enum")) => Self::UntitledMulti,
            _ => Self::Unknown,
        }
    }
}

impl<'de> Deserialize<'de> for PrimitiveSchemaDefinition {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde_json::from_value;

        let map = JsonObject::deserialize(deserializer)?;
        let kind = FieldKind::of(&map);
        let value = serde_json::Value::Object(map);
        let decoded = match kind {
            FieldKind::String => from_value(value).map(Self::String),
            FieldKind::Number => from_value(value).map(Self::Number),
            FieldKind::Boolean => from_value(value).map(Self::Boolean),
            FieldKind::UntitledSingle => from_value(value).map(Self::UntitledSingleSelect),
            FieldKind::TitledSingle => from_value(value).map(Self::TitledSingleSelect),
            FieldKind::UntitledMulti => from_value(value).map(Self::UntitledMultiSelect),
            FieldKind::TitledMulti => from_value(value).map(Self::TitledMultiSelect),
            FieldKind::Legacy => from_value(value).map(Self::LegacyTitled),
            FieldKind::Unknown => match value {
                serde_json::Value::Object(map) => Ok(Self::Unknown(map)),
                _ => return Err(serde::de::Error::custom("unreachable: not an object")),
            },
        };
        decoded.map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::schema::test_support::{examples, round_trip, round_trips};

    #[test]
    fn field_schema_examples_round_trip_as_the_right_variant() {
        type IsRight = fn(&PrimitiveSchemaDefinition) -> bool;
        let cases: [(&str, IsRight); 7] = [
            ("StringSchema", |f| matches!(f, PrimitiveSchemaDefinition::String(_))),
            ("NumberSchema", |f| matches!(f, PrimitiveSchemaDefinition::Number(_))),
            ("BooleanSchema", |f| matches!(f, PrimitiveSchemaDefinition::Boolean(_))),
            ("UntitledSingleSelectEnumSchema", |f| matches!(f, PrimitiveSchemaDefinition::UntitledSingleSelect(_))),
            ("TitledSingleSelectEnumSchema", |f| matches!(f, PrimitiveSchemaDefinition::TitledSingleSelect(_))),
            ("UntitledMultiSelectEnumSchema", |f| matches!(f, PrimitiveSchemaDefinition::UntitledMultiSelect(_))),
            ("TitledMultiSelectEnumSchema", |f| matches!(f, PrimitiveSchemaDefinition::TitledMultiSelect(_))),
        ];
        for (folder, is_right) in cases {
            for (name, json) in examples(folder) {
                let f: PrimitiveSchemaDefinition = round_trip(&name, &json);
                assert!(is_right(&f), "{name} decoded as {f:?}");
            }
        }
        round_trips::<StringSchema>("StringSchema");
        round_trips::<NumberSchema>("NumberSchema");
        round_trips::<BooleanSchema>("BooleanSchema");
        round_trips::<UntitledSingleSelectEnumSchema>("UntitledSingleSelectEnumSchema");
        round_trips::<TitledSingleSelectEnumSchema>("TitledSingleSelectEnumSchema");
        round_trips::<UntitledMultiSelectEnumSchema>("UntitledMultiSelectEnumSchema");
        round_trips::<TitledMultiSelectEnumSchema>("TitledMultiSelectEnumSchema");
    }
}
