//! Request identifiers.

use crate::alloc_prelude::*;
use core::fmt;

use serde::de::{self, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A JSON-RPC request id: an integer or a string.
///
/// MCP forbids `null` ids on requests, and JSON-RPC discourages fractional numbers, so neither is
/// representable here; an error response to a request whose id could not be read carries no id
/// (`"id": null` on the wire), which is modelled as `Option<RequestId>` where it can happen.
/// Integers are limited to the `i64` range: a larger or fractional number is an invalid id.
///
/// # Examples
///
/// ```
/// use talaria_core::jsonrpc::RequestId;
///
/// let id: RequestId = serde_json::from_str("7").unwrap();
/// assert_eq!(id, RequestId::Number(7));
/// assert_eq!(serde_json::to_string(&RequestId::from("abc")).unwrap(), r#""abc""#);
/// assert!(serde_json::from_str::<RequestId>("1.5").is_err());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RequestId {
    /// An integer id, as most clients send.
    Number(i64),
    /// A string id.
    String(String),
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Number(n) => write!(f, "{n}"),
            Self::String(s) => write!(f, "{s:?}"),
        }
    }
}

impl From<i64> for RequestId {
    fn from(n: i64) -> Self {
        Self::Number(n)
    }
}

impl From<&str> for RequestId {
    fn from(s: &str) -> Self {
        Self::String(s.to_owned())
    }
}

impl From<String> for RequestId {
    fn from(s: String) -> Self {
        Self::String(s)
    }
}

impl Serialize for RequestId {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Number(n) => serializer.serialize_i64(*n),
            Self::String(s) => serializer.serialize_str(s),
        }
    }
}

impl<'de> Deserialize<'de> for RequestId {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match deserializer.deserialize_any(IdVisitor)? {
            Some(id) => Ok(id),
            None => Err(de::Error::custom("id must not be null")),
        }
    }
}

/// Reads an id that may be `null` (`None`), as in error responses.
pub(crate) fn deserialize_nullable_id<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<RequestId>, D::Error> {
    deserializer.deserialize_any(IdVisitor)
}

/// Accepts integers in the `i64` range, strings and null.
struct IdVisitor;

impl<'de> Visitor<'de> for IdVisitor {
    type Value = Option<RequestId>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an integer or string id")
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
        Ok(Some(RequestId::Number(v)))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
        i64::try_from(v)
            .map(|n| Some(RequestId::Number(n)))
            .map_err(|_| E::custom("id is an integer beyond the i64 range"))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
        Err(E::custom(format_args!("id must be a string or an integer within the i64 range, not {v}")))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Some(RequestId::String(v.to_owned())))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
        Ok(Some(RequestId::String(v)))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn ids_accept_integers_and_strings_only() {
        assert_eq!(serde_json::from_str::<RequestId>("-3").unwrap(), RequestId::Number(-3));
        assert_eq!(serde_json::from_str::<RequestId>(r#""x""#).unwrap(), RequestId::from("x"));
        assert_eq!(serde_json::from_str::<RequestId>("9223372036854775807").unwrap(), RequestId::Number(i64::MAX));
        for bad in ["9223372036854775808", "1.0", "1e3", "null", "true", "[]", "{}"] {
            assert!(serde_json::from_str::<RequestId>(bad).is_err(), "{bad} accepted");
        }
    }

    #[test]
    fn display_distinguishes_number_from_string() {
        assert_eq!(RequestId::Number(1).to_string(), "1");
        assert_eq!(RequestId::from("1").to_string(), "\"1\"");
    }
}
