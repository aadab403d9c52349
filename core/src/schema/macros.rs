//! `mcp_struct!`: declares an MCP object type with forward-compatible (de)serialization.
//!
//! serde's `#[serde(flatten)]` would keep unknown members too, but it buffers every object
//! through an intermediate tree and costs more than building a `serde_json::Value`. This macro
//! writes the map visitor by hand instead: known members decode straight into their fields,
//! unknown ones (rare) are kept as `Value`s in `extra`, and encoding writes the known members
//! in declaration order followed by `extra`.
//!
//! Field forms:
//! - `req name: Type = "wireName"`: required; missing is an error.
//! - `opt name: Type = "wireName"`: the field is `Option<Type>`; absent or `null` reads as `None`,
//!   `None` is not written.
//! - `def name: Type = "wireName"`: absent reads as `Type::default()`; always written.
//! - `num name: f64 = "wireName"` / `optnum name: f64 = "wireName"`: like `req` / `opt` for an
//!   `f64`, written as JavaScript writes numbers (`50`, not `50.0`), so integral values sent by
//!   a peer round-trip unchanged.
//!
//! An optional `@tag "type" = "text";` line makes the object carry a constant discriminator: it is
//! written first, and reading checks it (absent is accepted, another value is an error).

use crate::alloc_prelude::*;
/// Writes an `f64` the way `JSON.stringify` does: integral values (within 2^53) without a
/// fractional part.
pub(crate) struct JsNumber(pub(crate) f64);

impl serde::Serialize for JsNumber {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        const EXACT: f64 = 9_007_199_254_740_992.0; // 2^53
        let v = self.0;
        if crate::float::is_integral(v) && v.abs() <= EXACT {
            // Invariant: integral and within ±2^53, so the conversion is exact.
            #[allow(clippy::cast_possible_truncation)]
            serializer.serialize_i64(v as i64)
        } else {
            serializer.serialize_f64(v)
        }
    }
}

/// Reads a map key, borrowing it when the deserializer can.
pub(crate) struct Key<'de>(pub(crate) alloc::borrow::Cow<'de, str>);

impl<'de> serde::Deserialize<'de> for Key<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                f.write_str("a member name")
            }
            fn visit_borrowed_str<E: serde::de::Error>(self, v: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(alloc::borrow::Cow::Borrowed(v)))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Key<'de>, E> {
                Ok(Key(alloc::borrow::Cow::Owned(v.to_owned())))
            }
            fn visit_string<E: serde::de::Error>(self, v: String) -> Result<Key<'de>, E> {
                Ok(Key(alloc::borrow::Cow::Owned(v)))
            }
        }
        deserializer.deserialize_str(V)
    }
}

/// Decodes an object type from the members left in a map.
///
/// Implemented by every `mcp_struct!` type; tagged unions call it after reading the tag.
pub(crate) trait FromMap: Sized {
    /// Reads the remaining members of `map` into `Self`.
    fn from_map<'de, A: serde::de::MapAccess<'de>>(map: &mut A) -> Result<Self, A::Error>;
}

impl<T: FromMap> FromMap for Box<T> {
    fn from_map<'de, A: serde::de::MapAccess<'de>>(map: &mut A) -> Result<Self, A::Error> {
        T::from_map(map).map(Self::new)
    }
}

/// The serde visitor of every `FromMap` type.
pub(crate) struct MapVisitor<T> {
    expecting: &'static str,
    marker: core::marker::PhantomData<T>,
}

impl<T> MapVisitor<T> {
    pub(crate) const fn new(expecting: &'static str) -> Self {
        Self { expecting, marker: core::marker::PhantomData }
    }
}

impl<'de, T: FromMap> serde::de::Visitor<'de> for MapVisitor<T> {
    type Value = T;

    fn expecting(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.expecting)
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<T, A::Error> {
        T::from_map(&mut map)
    }
}

/// Moves the remaining members of `map` into `object`, refusing duplicates.
pub(crate) fn collect_rest<'de, A: serde::de::MapAccess<'de>>(
    map: &mut A,
    object: &mut crate::schema::JsonObject,
) -> Result<(), A::Error> {
    while let Some(key) = map.next_key::<Key<'de>>()? {
        let value: serde_json::Value = map.next_value()?;
        let name = key.0.into_owned();
        if object.contains_key(&name) {
            return Err(duplicate(&name));
        }
        object.insert(name, value);
    }
    Ok(())
}

/// Gathers the members of `map` as one JSON object's text, in the order they came, refusing
/// duplicates; and the value of the string member `tag`, if there is one.
pub(crate) fn collect_text<'de, A: serde::de::MapAccess<'de>>(
    map: &mut A,
    tag: &str,
) -> Result<(String, Option<String>), A::Error> {
    use serde::de::Error as _;
    let mut text = String::from("{");
    let mut names: Vec<String> = Vec::new();
    let mut found = None;
    while let Some(key) = map.next_key::<Key<'de>>()? {
        let value: Box<serde_json::value::RawValue> = map.next_value()?;
        let name = key.0.into_owned();
        if names.contains(&name) {
            return Err(duplicate(&name));
        }
        if name == tag {
            found = serde_json::from_str::<String>(value.get()).ok();
        }
        if !names.is_empty() {
            text.push(',');
        }
        text.push_str(&serde_json::to_string(&name).map_err(A::Error::custom)?);
        text.push(':');
        text.push_str(value.get());
        names.push(name);
    }
    text.push('}');
    Ok((text, found))
}

/// Checks a constant tag member.
pub(crate) fn check_tag<E: serde::de::Error>(found: &str, name: &str, expected: &str) -> Result<(), E> {
    if found == expected {
        Ok(())
    } else {
        Err(E::custom(format_args!("expected {name:?} to be {expected:?}, found {found:?}")))
    }
}

/// Refuses a member seen twice.
pub(crate) fn duplicate<E: serde::de::Error>(name: &str) -> E {
    E::custom(format_args!("duplicate member {name:?}"))
}

macro_rules! mcp_field_type {
    (num $t:ty) => { $t };
    (optnum $t:ty) => { Option<$t> };
    (req $t:ty) => { $t };
    (def $t:ty) => { $t };
    (opt $t:ty) => { Option<$t> };
}

macro_rules! mcp_field_finish {
    (optnum $slot:ident, $wire:literal) => { $slot.flatten() };
    (num $slot:ident, $wire:literal) => { $crate::schema::macros::mcp_field_finish!(req $slot, $wire) };
    (req $slot:ident, $wire:literal) => {
        match $slot {
            Some(v) => v,
            None => return Err(serde::de::Error::missing_field($wire)),
        }
    };
    (def $slot:ident, $wire:literal) => {
        $slot.unwrap_or_default()
    };
    (opt $slot:ident, $wire:literal) => {
        $slot.flatten()
    };
}

macro_rules! mcp_field_read {
    (opt $map:ident, $t:ty) => {
        $map.next_value::<Option<$t>>()?
    };
    (optnum $map:ident, $t:ty) => {
        $map.next_value::<Option<$t>>()?
    };
    ($kind:ident $map:ident, $t:ty) => {
        $map.next_value::<$t>()?
    };
}

macro_rules! mcp_field_write {
    (num $map:ident, $wire:literal, $v:expr) => {
        serde::ser::SerializeMap::serialize_entry(&mut $map, $wire, &$crate::schema::macros::JsNumber($v))?;
    };
    (optnum $map:ident, $wire:literal, $v:expr) => {
        if let Some(v) = $v {
            serde::ser::SerializeMap::serialize_entry(&mut $map, $wire, &$crate::schema::macros::JsNumber(v))?;
        }
    };
    (opt $map:ident, $wire:literal, $v:expr) => {
        if let Some(v) = &$v {
            serde::ser::SerializeMap::serialize_entry(&mut $map, $wire, v)?;
        }
    };
    ($kind:ident $map:ident, $wire:literal, $v:expr) => {
        serde::ser::SerializeMap::serialize_entry(&mut $map, $wire, &$v)?;
    };
}

macro_rules! mcp_struct {
    (
        $(#[$attr:meta])*
        pub struct $name:ident {
            $( @tag $tag_wire:literal = $tag_value:literal; )?
            $(
                $(#[$fattr:meta])*
                $kind:ident $field:ident : $fty:ty = $wire:literal
            ),* $(,)?
        }
    ) => {
        $(#[$attr])*
        #[derive(Debug, Clone, PartialEq)]
        pub struct $name {
            $(
                $(#[$fattr])*
                pub $field: $crate::schema::macros::mcp_field_type!($kind $fty),
            )*
            /// Members this version of the SDK does not know, kept for forward compatibility and
            /// written back after the known ones.
            pub extra: $crate::schema::JsonObject,
        }

        impl $name {
            /// The constant discriminator of this object type, if it has one.
            #[allow(dead_code)]
            pub(crate) const TAG: Option<(&'static str, &'static str)> = mcp_struct!(@tag $( $tag_wire, $tag_value )?);
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                let mut map = serializer.serialize_map(None)?;
                $( serde::ser::SerializeMap::serialize_entry(&mut map, $tag_wire, $tag_value)?; )?
                $( $crate::schema::macros::mcp_field_write!($kind map, $wire, self.$field); )*
                for (k, v) in &self.extra {
                    serde::ser::SerializeMap::serialize_entry(&mut map, k, v)?;
                }
                serde::ser::SerializeMap::end(map)
            }
        }

        impl $crate::schema::macros::FromMap for $name {
            #[allow(unused_mut)]
            fn from_map<'de, A: serde::de::MapAccess<'de>>(map: &mut A) -> Result<Self, A::Error> {
                $( let mut $field: Option<$crate::schema::macros::mcp_field_type!($kind $fty)> = None; )*
                let mut extra = $crate::schema::JsonObject::new();
                while let Some(key) = map.next_key::<$crate::schema::macros::Key<'de>>()? {
                    match key.0.as_ref() {
                        $( $tag_wire => {
                            let found: alloc::borrow::Cow<'de, str> = map.next_value::<$crate::schema::macros::Key<'de>>()?.0;
                            $crate::schema::macros::check_tag(&found, $tag_wire, $tag_value)?;
                        } )?
                        $( $wire => {
                            if $field.is_some() {
                                return Err($crate::schema::macros::duplicate($wire));
                            }
                            $field = Some($crate::schema::macros::mcp_field_read!($kind map, $fty));
                        } )*
                        _ => {
                            let value: serde_json::Value = map.next_value()?;
                            if extra.insert(key.0.into_owned(), value).is_some() {
                                return Err(serde::de::Error::custom("duplicate member"));
                            }
                        }
                    }
                }
                Ok($name {
                    $( $field: $crate::schema::macros::mcp_field_finish!($kind $field, $wire), )*
                    extra,
                })
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                deserializer.deserialize_map($crate::schema::macros::MapVisitor::<$name>::new(concat!("an object (", stringify!($name), ")")))
            }
        }
    };
    (@tag) => { None };
    (@tag $w:literal, $v:literal) => { Some(($w, $v)) };
}

/// Declares a union of object types told apart by one string member (such as `"type"`).
///
/// Each variant wraps an `mcp_struct!` type declared with the matching `tag` line, so encoding
/// simply encodes the inner value. Decoding reads the object once into a map, looks at the tag
/// and decodes the variant from the map. A tag value this SDK does not know (or a missing tag,
/// unless a `missing => Variant` default is given) is kept whole in `Unknown`, so newer peers'
/// content survives a round trip. With a `missing` default, that variant's type must read the
/// tag as an ordinary optional member (no `@tag`), so whether it was sent survives too.
macro_rules! tagged_union {
    (
        $(#[$attr:meta])*
        pub enum $name:ident by $tag:literal $( , missing => $missing:ident )? {
            $(
                $(#[$vattr:meta])*
                $value:literal => $variant:ident($inner:ty)
            ),* $(,)?
        }
    ) => {
        $(#[$attr])*
        #[derive(Debug, Clone, PartialEq)]
        #[non_exhaustive]
        pub enum $name {
            $( $(#[$vattr])* $variant($inner), )*
            /// A variant this SDK does not know, kept whole.
            Unknown($crate::schema::JsonObject),
        }

        $(
            impl From<$inner> for $name {
                fn from(v: $inner) -> Self {
                    Self::$variant(v)
                }
            }
        )*

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                match self {
                    $( Self::$variant(v) => v.serialize(serializer), )*
                    Self::Unknown(map) => map.serialize(serializer),
                }
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                struct V;
                impl<'de> serde::de::Visitor<'de> for V {
                    type Value = $name;
                    fn expecting(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                        f.write_str(concat!("an object (", stringify!($name), ")"))
                    }
                    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<$name, A::Error> {
                        if $name::TAG_MAY_BE_MISSING {
                            // The default variant keeps the tag as an ordinary member, so it
                            // must see the whole object: gathered as JSON text, which keeps
                            // the members' order (a form's fields are asked in it).
                            let (text, tag) = $crate::schema::macros::collect_text(&mut map, $tag)?;
                            return $name::from_text(&text, tag.as_deref());
                        }
                        // Fast path: the tag is the first member, as every SDK writes it.
                        let Some(first) = map.next_key::<$crate::schema::macros::Key<'de>>()? else {
                            return $name::from_object($crate::schema::JsonObject::new());
                        };
                        if first.0 == $tag {
                            let tag: serde_json::Value = map.next_value()?;
                            match tag.as_str() {
                                $( Some($value) => {
                                    return <$inner as $crate::schema::macros::FromMap>::from_map(&mut map).map($name::$variant);
                                } )*
                                _ => {}
                            }
                            let mut object = $crate::schema::JsonObject::new();
                            object.insert(first.0.into_owned(), tag);
                            $crate::schema::macros::collect_rest(&mut map, &mut object)?;
                            return $name::from_object(object);
                        }
                        let mut object = $crate::schema::JsonObject::new();
                        object.insert(first.0.into_owned(), map.next_value()?);
                        $crate::schema::macros::collect_rest(&mut map, &mut object)?;
                        $name::from_object(object)
                    }
                }
                deserializer.deserialize_map(V)
            }
        }

        impl $name {
            /// Whether an object without the tag decodes as a default variant.
            const TAG_MAY_BE_MISSING: bool = tagged_union!(@missing $($missing)?);

            /// The object as JSON text, with its tag if it had one: dispatch on the tag.
            #[allow(dead_code)]
            fn from_text<E: serde::de::Error>(text: &str, tag: Option<&str>) -> Result<Self, E> {
                match tag {
                    $( Some($value) => serde_json::from_str(text).map(Self::$variant).map_err(E::custom), )*
                    $( None => serde_json::from_str(text).map(Self::$missing).map_err(E::custom), )?
                    _ => serde_json::from_str(text).map(Self::Unknown).map_err(E::custom),
                }
            }

            /// The slow path: the whole object is in hand; dispatch on its tag.
            fn from_object<E: serde::de::Error>(map: $crate::schema::JsonObject) -> Result<Self, E> {
                let tag: Option<String> = match map.get($tag) {
                    Some(serde_json::Value::String(s)) => Some(s.clone()),
                    _ => None,
                };
                let value = serde_json::Value::Object(map);
                match tag.as_deref() {
                    $( Some($value) => serde_json::from_value(value).map(Self::$variant).map_err(E::custom), )*
                    $( None => serde_json::from_value(value).map(Self::$missing).map_err(E::custom), )?
                    _ => match value {
                        serde_json::Value::Object(map) => Ok(Self::Unknown(map)),
                        _ => Err(E::custom("unreachable: not an object")),
                    },
                }
            }
        }
    };
    (@missing) => { false };
    (@missing $m:ident) => { true };
}

/// Declares a cacheable list result (`tools/list`, `prompts/list`, `resources/list`,
/// `resources/templates/list`): one page of items, the next cursor, and the 2026-07-28
/// `resultType` / `ttlMs` / `cacheScope` members, with its constructor, [`ForRevision`] and
/// [`Paginated`] impls.
///
/// [`ForRevision`]: crate::schema::ForRevision
/// [`Paginated`]: crate::schema::Paginated
macro_rules! cacheable_list {
    (
        $(#[$attr:meta])*
        pub struct $name:ident {
            $(#[$fattr:meta])*
            items $field:ident: $item:ty = $wire:literal
        }
    ) => {
        $crate::schema::macros::mcp_struct! {
            $(#[$attr])*
            #[derive(Default)]
            pub struct $name {
                $(#[$fattr])*
                req $field: Vec<$item> = $wire,
                /// The cursor of the next page; absent on the last page.
                opt next_cursor: $crate::schema::Cursor = "nextCursor",
                /// Result metadata.
                opt meta: $crate::schema::Meta = "_meta",
                /// The kind of result (2026-07-28, where it is required).
                opt result_type: $crate::schema::ResultType = "resultType",
                /// How long, in milliseconds, the client may cache the result (2026-07-28, where
                /// it is required).
                opt ttl_ms: u64 = "ttlMs",
                /// Who may cache the result (2026-07-28, where it is required).
                opt cache_scope: $crate::schema::CacheScope = "cacheScope",
            }
        }

        impl $name {
            #[doc = concat!("A last (or only) page holding `", stringify!($field), "`.")]
            #[must_use]
            pub fn new($field: Vec<$item>) -> Self {
                Self { $field, ..Self::default() }
            }
        }

        impl $crate::schema::ForRevision for $name {
            fn adapt_to(&mut self, version: $crate::version::ProtocolVersion) {
                $crate::schema::adapt_cacheable(&mut self.result_type, &mut self.ttl_ms, &mut self.cache_scope, version);
                for item in &mut self.$field {
                    $crate::schema::ForRevision::adapt_to(item, version);
                }
            }
        }

        impl $crate::schema::Paginated for $name {
            type Item = $item;

            fn items(&self) -> &[$item] {
                &self.$field
            }

            fn into_items(self) -> Vec<$item> {
                self.$field
            }

            fn next_cursor(&self) -> Option<&str> {
                self.next_cursor.as_deref()
            }
        }
    };
}

pub(crate) use {
    cacheable_list, mcp_field_finish, mcp_field_read, mcp_field_type, mcp_field_write, mcp_struct, tagged_union,
};

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use crate::schema::ContentBlock;

    /// A content block whose tag is not a string, or is one this SDK does not know, is kept
    /// whole, the tag's value as it came.
    #[test]
    fn a_tag_of_any_json_value_round_trips_in_an_unknown_block() {
        for text in [
            r#"{"type":5,"x":1}"#,
            r#"{"type":-2.5,"x":1}"#,
            r#"{"type":true}"#,
            r#"{"type":null,"x":[1]}"#,
            r#"{"type":[1,"a"],"x":1}"#,
            r#"{"type":{"k":"v"},"x":1}"#,
            r#"{"type":"hologram","x":1}"#,
            r#"{"type":"holo\"gram","x":1}"#,
        ] {
            let block: ContentBlock = serde_json::from_str(text).unwrap();
            assert!(matches!(block, ContentBlock::Unknown(_)), "{text}");
            let back = serde_json::to_value(&block).unwrap();
            assert_eq!(back, serde_json::from_str::<serde_json::Value>(text).unwrap(), "{text}");
        }
    }

    /// An escaped tag (not borrowable from the input) still picks its variant.
    #[test]
    fn an_escaped_tag_is_read_as_its_text() {
        let block: ContentBlock = serde_json::from_str(r#"{"type":"t\u0065xt","text":"hi"}"#).unwrap();
        assert_eq!(block.as_text(), Some("hi"));
        let block: ContentBlock = serde_json::from_slice(br#"{"type":"text","text":"hi"}"#).unwrap();
        assert_eq!(block.as_text(), Some("hi"));
    }
}
