//! [`LazyJson`]: a JSON member kept as the text it arrived in, read into a tree only when
//! something looks at it.
//!
//! Some members are large and often passed on untouched: a tool's `inputSchema` and
//! `outputSchema`, which a client mostly hands to a model as they are. (A call's `arguments`
//! are not among them: a server always reads them, to check them against the tool's schema;
//! nor is a result's `structuredContent`, which a client checks against the tool's
//! `outputSchema`, and which is mostly small, where keeping its text costs what reading it
//! does.) Decoding one into a `serde_json::Value` costs an allocation per string, per array
//! and per object; keeping its text costs one copy and a scan. The tree is built on first
//! access (through `Deref`), once, and encoding writes the text back unchanged until the value
//! is changed through `DerefMut`.

use crate::alloc_prelude::*;
use core::fmt;
use core::ops::{Deref, DerefMut};

use serde::de::{DeserializeOwned, Error as _};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::value::RawValue;

use super::common::JsonObject;
use crate::sync::OnceCell;

/// Nesting a kept text may have without being read at once: below `serde_json`'s recursion
/// limit (128), so that a later read cannot fail. A text with more opening brackets than this
/// (counted anywhere, strings included: an upper bound of its depth) is read while decoding,
/// which fails as a tree member would.
const KEPT_BRACKETS: usize = 100;

/// The longest run of digits a kept text may have: an integer of 309 digits is beyond `f64`.
const KEPT_DIGITS: usize = 300;

/// Whether reading `text` later could fail where reading it now would. `serde_json` checks a
/// raw value's syntax only; building the value also refuses nesting past its recursion limit,
/// a number beyond `f64`'s range and a `\u` escape of a lone surrogate. The answer errs on the
/// side of reading now: it does not tell strings from the rest, so any exponent-like `1e`, run
/// of 300 digits, `\uD` escape or more than [`KEPT_BRACKETS`] brackets, in a string or not,
/// counts (reading such a text now costs what a tree member would).
fn read_now(text: &[u8]) -> bool {
    // Counted and sought over every byte without stopping early, which the compiler turns
    // into vector code: faster on schemas, dense with brackets and `e`s, than a search.
    let brackets = text.iter().map(|&b| usize::from(b == b'{' || b == b'[')).sum::<usize>();
    // An exponent follows a digit (JSON has no `1.e5`).
    let exponent = || {
        let pairs = text.iter().zip(text.iter().skip(1));
        pairs.fold(false, |found, (&before, &b)| found | (before.is_ascii_digit() & (b | 0x20 == b'e')))
    };
    // `\uD800` to `\uDFFF`, and a few more: surrogates, paired or not.
    let surrogate = || {
        memchr::memchr_iter(b'\\', text)
            .any(|i| text.get(i + 1) == Some(&b'u') && matches!(text.get(i + 2), Some(b'd' | b'D')))
    };
    brackets > KEPT_BRACKETS || exponent() || surrogate() || long_digit_run(text)
}

/// Whether `text` has a run of [`KEPT_DIGITS`] digits. Such a run covers one of the bytes
/// probed every `KEPT_DIGITS / 2`, and only digits probed are followed out.
fn long_digit_run(text: &[u8]) -> bool {
    text.iter().enumerate().step_by(KEPT_DIGITS / 2).any(|(i, b)| {
        b.is_ascii_digit() && {
            let before = text[..i].iter().rev().take_while(|b| b.is_ascii_digit()).count();
            let after = text[i..].iter().take_while(|b| b.is_ascii_digit()).count();
            before + after >= KEPT_DIGITS
        }
    })
}

/// A JSON value of type `T` (a [`JsonObject`] or a `serde_json::Value`), kept as its text when
/// decoded and read into a `T` the first time it is dereferenced.
///
/// It reads like the `T` it holds (`Deref`), compares and prints as that `T`, and is made from
/// one with `From`/`into()`. Encoding writes the text it was decoded from, byte for byte, unless
/// it was changed through `DerefMut` (or held line breaks, which a newline-delimited transport
/// cannot carry: that text is read at once and written from the value). That is `serde_json`'s
/// raw-value encoding, which its writers and `to_value` understand: to encode a kept value in
/// another format, encode the value itself (`&*kept`).
///
/// # Examples
///
/// ```
/// use talaria_core::schema::tools::Tool;
/// use serde_json::json;
///
/// let text = r#"{"name":"find","inputSchema":{"type":"object","required":["q"]}}"#;
/// let tool: Tool = serde_json::from_str(text).unwrap();
/// // Written back as it came, without being read.
/// assert_eq!(serde_json::to_string(&tool).unwrap(), text);
/// // Read on first use.
/// assert_eq!(tool.input_schema["required"], json!(["q"]));
/// ```
pub struct LazyJson<T> {
    /// The text it was decoded from, while nothing changed it.
    text: Option<Box<RawValue>>,
    /// The value, read from `text` on first access (or given).
    value: OnceCell<T>,
}

/// A JSON object kept as its text until read: see [`LazyJson`].
pub type LazyObject = LazyJson<JsonObject>;

/// What a [`LazyJson`] may hold: the JSON shape its text must have.
pub trait LazyShape: Serialize + DeserializeOwned + Default {
    /// Whether `text` (a valid JSON value) has this shape.
    fn fits(text: &str) -> bool;
    /// The shape, for the error on a text that lacks it.
    const EXPECTING: &'static str;
}

impl LazyShape for JsonObject {
    fn fits(text: &str) -> bool {
        text.starts_with('{')
    }
    const EXPECTING: &'static str = "a JSON object";
}

impl LazyShape for serde_json::Value {
    fn fits(_: &str) -> bool {
        true
    }
    const EXPECTING: &'static str = "a JSON value";
}

impl<T: LazyShape> LazyJson<T> {
    /// The value, read from its text if that was not done yet.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::LazyObject;
    /// use serde_json::json;
    ///
    /// let kept: LazyObject = serde_json::from_str(r#"{"a": 1}"#).unwrap();
    /// assert_eq!(kept.into_inner()["a"], json!(1));
    /// ```
    #[must_use]
    pub fn into_inner(self) -> T {
        let Self { text, value } = self;
        value.into_inner().unwrap_or_else(|| read(text.as_deref()))
    }

    /// The text this value was decoded from, if it was and nothing changed it since.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::LazyObject;
    ///
    /// let kept: LazyObject = serde_json::from_str(r#" {"a":1} "#).unwrap();
    /// assert_eq!(kept.text(), Some(r#"{"a":1}"#));
    /// let made = LazyObject::from(serde_json::Map::new());
    /// assert_eq!(made.text(), None);
    /// ```
    #[must_use]
    pub fn text(&self) -> Option<&str> {
        self.text.as_deref().map(RawValue::get)
    }
}

/// The value a kept text holds. The text was checked when it was decoded (valid JSON of the
/// shape, nested within the recursion limit), so reading it cannot fail; were it to, the
/// default value stands in rather than a panic.
fn read<T: LazyShape>(text: Option<&RawValue>) -> T {
    text.and_then(|text| serde_json::from_str(text.get()).ok()).unwrap_or_default()
}

impl<T: LazyShape> Deref for LazyJson<T> {
    type Target = T;

    fn deref(&self) -> &T {
        self.value.get_or_init(|| read(self.text.as_deref()))
    }
}

impl<T: LazyShape> DerefMut for LazyJson<T> {
    /// Reads the value if needed and forgets the text: what is written from now on is the
    /// value, changed or not.
    fn deref_mut(&mut self) -> &mut T {
        let text = self.text.take();
        if self.value.get().is_none() {
            let value = read::<T>(text.as_deref());
            self.value = OnceCell::from(value);
        }
        self.value.get_mut().unwrap_or_else(|| unreachable!("the value was set just above"))
    }
}

impl<T: LazyShape> From<T> for LazyJson<T> {
    fn from(value: T) -> Self {
        Self { text: None, value: OnceCell::from(value) }
    }
}

impl<T: LazyShape> Default for LazyJson<T> {
    fn default() -> Self {
        Self::from(T::default())
    }
}

impl<T: LazyShape + Clone> Clone for LazyJson<T> {
    fn clone(&self) -> Self {
        match &self.text {
            // The text is the value: the copy reads its own when asked.
            Some(text) => Self { text: Some(text.clone()), value: OnceCell::new() },
            None => Self::from((**self).clone()),
        }
    }
}

impl<T: LazyShape + PartialEq> PartialEq for LazyJson<T> {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl<T: LazyShape + PartialEq> PartialEq<T> for LazyJson<T> {
    fn eq(&self, other: &T) -> bool {
        **self == *other
    }
}

impl<T: LazyShape + fmt::Debug> fmt::Debug for LazyJson<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

impl<T: LazyShape> Serialize for LazyJson<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match &self.text {
            Some(text) => text.serialize(serializer),
            None => (**self).serialize(serializer),
        }
    }
}

impl<'de, T: LazyShape> Deserialize<'de> for LazyJson<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = Box::<RawValue>::deserialize(deserializer)?;
        if !T::fits(text.get()) {
            return Err(D::Error::invalid_type(unexpected(text.get()), &T::EXPECTING));
        }
        let bytes = text.get().as_bytes();
        // Line breaks between tokens (a pretty-printed peer): the text is not written back,
        // as a newline-delimited transport could not carry it.
        let broken = memchr::memchr2(b'\n', b'\r', bytes).is_some();
        if broken || read_now(bytes) {
            // Read now, failing here as a tree member would.
            let value: T = serde_json::from_str(text.get()).map_err(D::Error::custom)?;
            let text = (!broken).then_some(text);
            return Ok(Self { text, value: OnceCell::from(value) });
        }
        Ok(Self { text: Some(text), value: OnceCell::new() })
    }
}

/// The kind of JSON value `text` starts, for a type error.
fn unexpected(text: &str) -> serde::de::Unexpected<'static> {
    use serde::de::Unexpected;
    match text.as_bytes().first() {
        Some(b'[') => Unexpected::Seq,
        Some(b'"') => Unexpected::Other("a string"),
        Some(b't' | b'f') => Unexpected::Other("a boolean"),
        Some(b'n') => Unexpected::Unit,
        _ => Unexpected::Other("a number"),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    #[test]
    fn a_decoded_object_is_written_back_as_it_came_and_reads_as_its_tree() {
        let text = r#"{"type":"object","n":1.50,"z":{},"a":[true]}"#;
        let kept: LazyObject = serde_json::from_str(&format!("  {text}\t")).unwrap();
        assert_eq!(kept.text(), Some(text));
        // Not read yet: the member order and the number's form are the peer's.
        assert_eq!(serde_json::to_string(&kept).unwrap(), text);
        assert_eq!(kept["n"], json!(1.5));
        assert_eq!(kept, json!({"type": "object", "n": 1.5, "z": {}, "a": [true]}).as_object().cloned().unwrap());
        // Reading does not change what is written.
        assert_eq!(serde_json::to_string(&kept).unwrap(), text);
    }

    #[test]
    fn a_change_through_deref_mut_is_what_is_written() {
        let mut kept: LazyObject = serde_json::from_str(r#"{"a":1}"#).unwrap();
        kept.insert("b".into(), json!(2));
        assert_eq!(kept.text(), None);
        assert_eq!(serde_json::to_value(&kept).unwrap(), json!({"a": 1, "b": 2}));
        // Even an access that changes nothing: the value is written from then on.
        let mut same: LazyJson<Value> = serde_json::from_str("[1, 2]").unwrap();
        let _ = &mut *same;
        assert_eq!(serde_json::to_string(&same).unwrap(), "[1,2]");
    }

    #[test]
    fn an_object_member_refuses_another_shape_when_decoded() {
        for text in ["[]", "\"s\"", "1", "true", "null"] {
            let err = serde_json::from_str::<LazyObject>(text).unwrap_err();
            assert!(err.to_string().contains("expected a JSON object"), "{text}: {err}");
        }
        assert_eq!(*serde_json::from_str::<LazyJson<Value>>("\"s\"").unwrap(), json!("s"));
        assert!(serde_json::from_str::<LazyObject>("{").is_err());
    }

    #[test]
    fn nesting_past_the_recursion_limit_fails_when_decoded_not_when_read() {
        let deep = |n: usize| format!("{}{}", "{\"a\":".repeat(n), "1".to_owned() + &"}".repeat(n));
        let kept: LazyObject = serde_json::from_str(&deep(KEPT_BRACKETS)).unwrap();
        assert!(kept.contains_key("a"));
        let read: LazyObject = serde_json::from_str(&deep(120)).unwrap();
        assert!(read.contains_key("a"));
        assert!(serde_json::from_str::<LazyObject>(&deep(200)).is_err());
    }

    #[test]
    fn what_a_later_read_would_refuse_is_refused_when_decoded() {
        let big = format!("{{\"n\":{}}}", "9".repeat(400));
        for text in [r#"{"n":1e400}"#, r#"{"n":-2E+999}"#, r#"{"s":"\ud800"}"#, r#"{"s":"\uDFFF x"}"#, &big] {
            let err = serde_json::from_str::<LazyObject>(text).unwrap_err();
            assert!(serde_json::from_str::<Value>(text).is_err(), "{text}: {err}");
        }
        // What reads fine is kept, read now or not.
        for text in [r#"{"n":1e300,"m":2.5E-7}"#, r#"{"s":"\ud83d\ude00"}"#, r#"{"s":"\\ud800"}"#] {
            let kept: LazyObject = serde_json::from_str(text).unwrap();
            assert_eq!(serde_json::to_value(&*kept).unwrap(), serde_json::from_str::<Value>(text).unwrap());
            assert_eq!(kept.text(), Some(text));
        }
        assert!(!read_now(br#"{"type":"object","properties":{"a":{"type":"integer","maximum":100}}}"#));
        for run in [KEPT_DIGITS - 1, KEPT_DIGITS, KEPT_DIGITS + 7] {
            for at in [0, 1, 149, 150, 151, 299, 300] {
                let text = format!("{}{}x", "a".repeat(at), "7".repeat(run));
                assert_eq!(long_digit_run(text.as_bytes()), run >= KEPT_DIGITS, "{run} digits after {at}");
            }
        }
    }

    #[test]
    fn a_pretty_printed_text_is_read_at_once_and_written_on_one_line() {
        let kept: LazyObject = serde_json::from_str("{\n  \"a\": [\r\n 1]\n}").unwrap();
        assert_eq!(kept.text(), None);
        assert_eq!(serde_json::to_string(&kept).unwrap(), r#"{"a":[1]}"#);
    }

    #[test]
    fn copies_and_values_from_a_tree_deserializer_keep_the_value() {
        let kept: LazyObject = serde_json::from_str(r#"{"a":"x"}"#).unwrap();
        let copy = kept.clone();
        assert_eq!(copy.text(), kept.text());
        assert_eq!(copy, kept);
        let from_tree: LazyObject = serde_json::from_value(json!({"a": "x"})).unwrap();
        assert_eq!(from_tree, kept);
        assert_eq!(kept.into_inner()["a"], "x");
        assert_eq!(format!("{copy:?}"), format!("{:?}", json!({"a": "x"}).as_object().unwrap()));
        assert_eq!(LazyObject::default(), JsonObject::new());
    }
}
