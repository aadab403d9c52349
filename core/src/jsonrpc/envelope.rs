//! The envelope decoder: one pass over a JSON-RPC object, with `params` and `result` decoded by
//! a [`PayloadDecoder`] as they are met.
//!
//! [`RawPayloads`] keeps them as raw JSON (that is [`Message`](super::Message)); a typed decoder
//! (such as `talaria_core::schema::McpPayloads`) turns them into typed values in the same pass,
//! so a string-heavy message is scanned once, not twice. When `params` comes before `method`
//! (or `result` before `id`), which JSON allows but no SDK does, the payload is held raw and
//! decoded when the envelope is complete.

use crate::alloc_prelude::*;
use core::fmt;

use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;

use super::error::ErrorObject;
use super::id::{deserialize_nullable_id, RequestId};
use super::message::{ErrorResponse, JSONRPC_VERSION};

/// Decides how the payloads of a message are decoded while its envelope is read.
///
/// A payload may be offered twice (once on the fast path and again when a failed frame is
/// diagnosed), so the methods should look things up, not consume state.
///
/// # Examples
///
/// ```
/// use serde::Deserializer;
/// use talaria_core::jsonrpc::{decode_with, Envelope, PayloadDecoder, RequestId};
///
/// /// Reads every payload as a string's length, to show the shape.
/// struct Lengths;
/// impl PayloadDecoder for Lengths {
///     type Params = usize;
///     type Result = usize;
///     fn params<'de, D: Deserializer<'de>>(&mut self, _method: &str, d: D) -> Result<usize, D::Error> {
///         serde::Deserialize::deserialize(d).map(|v: serde_json::Value| v.to_string().len())
///     }
///     fn no_params<E: serde::de::Error>(&mut self, _method: &str) -> Result<usize, E> {
///         Ok(0)
///     }
///     fn result<'de, D: Deserializer<'de>>(&mut self, _id: &RequestId, d: D) -> Result<usize, D::Error> {
///         self.params("", d)
///     }
/// }
///
/// let e = decode_with(br#"{"jsonrpc":"2.0","method":"m","params":{"a":1}}"#, &mut Lengths).unwrap();
/// assert!(matches!(e, Envelope::Notification { params: 7, .. }));
/// ```
pub trait PayloadDecoder {
    /// What `params` decode into.
    type Params;
    /// What `result` decodes into.
    type Result;

    /// Decodes the `params` of `method` (present and not `null`).
    ///
    /// # Errors
    ///
    /// When the params do not fit the method.
    fn params<'de, D: Deserializer<'de>>(&mut self, method: &str, params: D) -> Result<Self::Params, D::Error>;

    /// The params of `method` when the member is absent or `null`.
    ///
    /// # Errors
    ///
    /// When the method requires params.
    fn no_params<E: de::Error>(&mut self, method: &str) -> Result<Self::Params, E>;

    /// Decodes the `result` of the response to request `id`.
    ///
    /// # Errors
    ///
    /// When the result does not fit what was asked.
    fn result<'de, D: Deserializer<'de>>(&mut self, id: &RequestId, result: D) -> Result<Self::Result, D::Error>;
}

/// A decoded message whose payloads are whatever the [`PayloadDecoder`] made of them.
#[derive(Debug, Clone, PartialEq)]
pub enum Envelope<P, R> {
    /// A request.
    Request {
        /// Its id.
        id: RequestId,
        /// Its method.
        method: String,
        /// Its decoded params.
        params: P,
    },
    /// A notification.
    Notification {
        /// Its method.
        method: String,
        /// Its decoded params.
        params: P,
    },
    /// A successful response.
    Response {
        /// The id of the request it answers.
        id: RequestId,
        /// Its decoded result.
        result: R,
    },
    /// An error response.
    Error(ErrorResponse),
}

/// Keeps `params` (an object or array; `null` reads as absent) and `result` as raw JSON.
#[derive(Debug, Clone, Copy, Default)]
pub struct RawPayloads;

impl PayloadDecoder for RawPayloads {
    type Params = Option<Box<RawValue>>;
    type Result = Box<RawValue>;

    fn params<'de, D: Deserializer<'de>>(&mut self, _method: &str, params: D) -> Result<Self::Params, D::Error> {
        let raw = Box::<RawValue>::deserialize(params)?;
        match raw.get().as_bytes().first() {
            Some(b'{' | b'[') => Ok(Some(raw)),
            _ => Err(de::Error::custom(r#""params" must be an object or an array"#)),
        }
    }

    fn no_params<E: de::Error>(&mut self, _method: &str) -> Result<Self::Params, E> {
        Ok(None)
    }

    fn result<'de, D: Deserializer<'de>>(&mut self, _id: &RequestId, result: D) -> Result<Self::Result, D::Error> {
        Box::<RawValue>::deserialize(result)
    }
}

/// The serde visitor of a JSON-RPC object.
pub(crate) struct EnvelopeVisitor<'a, P> {
    decoder: &'a mut P,
}

impl<'a, P> EnvelopeVisitor<'a, P> {
    pub(crate) fn new(decoder: &'a mut P) -> Self {
        Self { decoder }
    }
}

#[derive(Clone, Copy)]
enum Field {
    Jsonrpc,
    Id,
    Method,
    Params,
    Result,
    Error,
    Other,
}

impl<'de> Deserialize<'de> for Field {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct FieldVisitor;
        impl Visitor<'_> for FieldVisitor {
            type Value = Field;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a member name")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Field, E> {
                Ok(match v {
                    "jsonrpc" => Field::Jsonrpc,
                    "id" => Field::Id,
                    "method" => Field::Method,
                    "params" => Field::Params,
                    "result" => Field::Result,
                    "error" => Field::Error,
                    _ => Field::Other,
                })
            }
        }
        deserializer.deserialize_identifier(FieldVisitor)
    }
}

/// Accepts exactly the string "2.0".
struct VersionCheck;

impl<'de> Deserialize<'de> for VersionCheck {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = VersionCheck;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(r#"the string "2.0""#)
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<VersionCheck, E> {
                if v == JSONRPC_VERSION {
                    Ok(VersionCheck)
                } else {
                    Err(E::custom(format_args!(r#""jsonrpc" must be "2.0", not {v:?}"#)))
                }
            }
        }
        deserializer.deserialize_str(V)
    }
}

/// An id member that may be null.
struct NullableId(Option<RequestId>);

impl<'de> Deserialize<'de> for NullableId {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserialize_nullable_id(deserializer).map(NullableId)
    }
}

/// A payload decoded on the spot, or held raw until the envelope says how to decode it.
enum Slot<T> {
    Decoded(T),
    Raw(Box<RawValue>),
}

/// Decodes `params` for a known method; `null` goes to `no_params`.
struct ParamsSeed<'a, P> {
    decoder: &'a mut P,
    method: &'a str,
}

impl<'de, P: PayloadDecoder> DeserializeSeed<'de> for ParamsSeed<'_, P> {
    type Value = P::Params;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<P::Params, D::Error> {
        deserializer.deserialize_option(self)
    }
}

impl<'de, P: PayloadDecoder> Visitor<'de> for ParamsSeed<'_, P> {
    type Value = P::Params;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("params")
    }

    fn visit_none<E: de::Error>(self) -> Result<P::Params, E> {
        self.decoder.no_params(self.method)
    }

    fn visit_unit<E: de::Error>(self) -> Result<P::Params, E> {
        self.decoder.no_params(self.method)
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<P::Params, D::Error> {
        self.decoder.params(self.method, deserializer)
    }
}

/// Decodes `result` for a known request id.
struct ResultSeed<'a, P> {
    decoder: &'a mut P,
    id: &'a RequestId,
}

impl<'de, P: PayloadDecoder> DeserializeSeed<'de> for ResultSeed<'_, P> {
    type Value = P::Result;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<P::Result, D::Error> {
        self.decoder.result(self.id, deserializer)
    }
}

fn set_once<T, E: de::Error>(slot: &mut Option<T>, value: T, name: &str) -> Result<(), E> {
    if slot.is_some() {
        return Err(E::custom(format_args!("duplicate member {name:?}")));
    }
    *slot = Some(value);
    Ok(())
}

fn duplicate<E: de::Error>(present: bool, name: &str) -> Result<(), E> {
    if present {
        Err(E::custom(format_args!("duplicate member {name:?}")))
    } else {
        Ok(())
    }
}

impl<'de, P: PayloadDecoder> Visitor<'de> for EnvelopeVisitor<'_, P> {
    type Value = Envelope<P::Params, P::Result>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON-RPC message object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let decoder = self.decoder;
        let mut version = None;
        let mut id: Option<Option<RequestId>> = None;
        let mut method: Option<String> = None;
        let mut params: Option<Slot<P::Params>> = None;
        let mut result: Option<Slot<P::Result>> = None;
        let mut error: Option<ErrorObject> = None;
        while let Some(field) = map.next_key::<Field>()? {
            match field {
                Field::Jsonrpc => set_once(&mut version, map.next_value::<VersionCheck>()?, "jsonrpc")?,
                Field::Id => set_once(&mut id, map.next_value::<NullableId>()?.0, "id")?,
                Field::Method => set_once(&mut method, map.next_value()?, "method")?,
                Field::Params => {
                    duplicate(params.is_some(), "params")?;
                    params = Some(match &method {
                        Some(m) => {
                            Slot::Decoded(map.next_value_seed(ParamsSeed { decoder: &mut *decoder, method: m })?)
                        }
                        None => Slot::Raw(map.next_value()?),
                    });
                }
                Field::Result => {
                    duplicate(result.is_some(), "result")?;
                    result = Some(match &id {
                        Some(Some(id)) => {
                            Slot::Decoded(map.next_value_seed(ResultSeed { decoder: &mut *decoder, id })?)
                        }
                        _ => Slot::Raw(map.next_value()?),
                    });
                }
                Field::Error => set_once(&mut error, map.next_value()?, "error")?,
                Field::Other => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        if version.is_none() {
            return Err(de::Error::custom(r#"missing "jsonrpc": "2.0""#));
        }
        assemble(decoder, id, method, params, result, error)
    }
}

/// Decides which kind of message the members make, decoding any payload held raw.
/// `id` is `Some(None)` for `"id": null`.
fn assemble<P: PayloadDecoder, E: de::Error>(
    decoder: &mut P,
    id: Option<Option<RequestId>>,
    method: Option<String>,
    params: Option<Slot<P::Params>>,
    result: Option<Slot<P::Result>>,
    error: Option<ErrorObject>,
) -> Result<Envelope<P::Params, P::Result>, E> {
    match (method, result, error) {
        (Some(method), None, None) => {
            let params = match params {
                Some(Slot::Decoded(p)) => p,
                Some(Slot::Raw(raw)) => {
                    decode_raw(raw.get(), |d| ParamsSeed { decoder, method: &method }.deserialize(d))?
                }
                None => decoder.no_params(&method)?,
            };
            match id {
                Some(Some(id)) => Ok(Envelope::Request { id, method, params }),
                Some(None) => Err(E::custom("a request id must not be null")),
                None => Ok(Envelope::Notification { method, params }),
            }
        }
        (Some(_), _, _) => Err(E::custom(r#"a message with "method" must not have "result" or "error""#)),
        (None, Some(_), Some(_)) => Err(E::custom(r#"a response must not have both "result" and "error""#)),
        (None, Some(result), None) => {
            let Some(Some(id)) = id else {
                return Err(E::custom("a response needs a non-null id"));
            };
            let result = match result {
                Slot::Decoded(r) => r,
                Slot::Raw(raw) => decode_raw(raw.get(), |d| decoder.result(&id, d))?,
            };
            Ok(Envelope::Response { id, result })
        }
        (None, None, Some(error)) => Ok(Envelope::Error(ErrorResponse { id: id.flatten(), error })),
        (None, None, None) => Err(E::custom(r#"not a JSON-RPC message: no "method", "result" or "error""#)),
    }
}

/// Runs a payload decoder over JSON text held raw.
fn decode_raw<T, E: de::Error>(
    text: &str,
    f: impl FnOnce(&mut serde_json::Deserializer<serde_json::de::StrRead<'_>>) -> Result<T, serde_json::Error>,
) -> Result<T, E> {
    let mut de = serde_json::Deserializer::from_str(text);
    f(&mut de).map_err(E::custom)
}

/// Decodes raw `params` of `method` with `decoder` (absent: `no_params`).
pub(crate) fn decode_params<P: PayloadDecoder>(
    decoder: &mut P,
    method: &str,
    raw: Option<&RawValue>,
) -> Result<P::Params, serde_json::Error> {
    match raw {
        Some(raw) => decode_raw(raw.get(), |d| ParamsSeed { decoder, method }.deserialize(d)),
        None => decoder.no_params(method),
    }
}

/// Decodes a raw `result` of request `id` with `decoder`.
pub(crate) fn decode_result<P: PayloadDecoder>(
    decoder: &mut P,
    id: &RequestId,
    raw: &RawValue,
) -> Result<P::Result, serde_json::Error> {
    decode_raw(raw.get(), |d| decoder.result(id, d))
}
