//! Decoding frames into messages, and diagnosing the ones that are not.
//!
//! Valid input takes one fast pass through the typed envelope decoder. Only when that fails does
//! the slow path run: it re-reads the bytes as a `serde_json::Value` to tell "not JSON" (-32700)
//! from "JSON but not a message" (-32600) and to recover the id for the error reply.

use crate::alloc_prelude::*;
use serde::de::Deserializer as _;
use serde_json::value::RawValue;
use serde_json::Value;

use super::envelope::{decode_params, decode_result, Envelope, EnvelopeVisitor, PayloadDecoder};
use super::error::ErrorObject;
use super::id::RequestId;
use super::message::{ErrorResponse, Message};

/// Why a frame could not be decoded into a message.
///
/// # Examples
///
/// ```
/// use talaria_core::jsonrpc::{DecodeError, ErrorCode, Message, RequestId};
///
/// let err = Message::from_slice(br#"{"jsonrpc":"1.0","id":9,"method":"ping"}"#).unwrap_err();
/// assert_eq!(err.id(), Some(&RequestId::Number(9)));
/// assert_eq!(err.to_error_object().code, ErrorCode::INVALID_REQUEST);
///
/// let err = Message::from_slice(b"{not json").unwrap_err();
/// assert!(matches!(err, DecodeError::Parse { .. }));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DecodeError {
    /// The bytes are not JSON (syntax error, invalid UTF-8, nesting deeper than 128 levels,
    /// empty input). Answered with -32700 and a null id.
    #[error("parse error: {detail}")]
    Parse {
        /// What the JSON parser reported.
        detail: String,
    },
    /// The bytes are JSON but not a valid JSON-RPC message. Answered with -32600, carrying the
    /// id when it could be read.
    #[error("invalid message: {detail}")]
    Invalid {
        /// The id of the offending message, when it could be read.
        id: Option<RequestId>,
        /// What was wrong.
        detail: String,
        /// The message looked like a response (no `method`, but `result` or `error`): it must
        /// not be answered, only reported.
        response_like: bool,
    },
    /// An empty batch (`[]`). Answered with a single -32600 error, id null.
    #[error("invalid message: empty batch")]
    EmptyBatch,
}

impl DecodeError {
    /// The id of the offending message, when it could be recovered.
    #[must_use]
    pub const fn id(&self) -> Option<&RequestId> {
        match self {
            Self::Invalid { id, .. } => id.as_ref(),
            Self::Parse { .. } | Self::EmptyBatch => None,
        }
    }

    /// The JSON-RPC error object that answers this failure (-32700 or -32600).
    #[must_use]
    pub fn to_error_object(&self) -> ErrorObject {
        match self {
            Self::Parse { detail } => ErrorObject::parse_error(detail),
            Self::Invalid { detail, .. } => ErrorObject::invalid_request(detail),
            Self::EmptyBatch => ErrorObject::invalid_request("empty batch"),
        }
    }

    /// The error response to send back, or `None` when the offending message was itself a
    /// response (answering a response could make two peers loop).
    #[must_use]
    pub fn to_response(&self) -> Option<ErrorResponse> {
        match self {
            Self::Invalid { response_like: true, .. } => None,
            _ => Some(ErrorResponse { id: self.id().cloned(), error: self.to_error_object() }),
        }
    }
}

/// Why a frame could not be decoded into a typed message.
///
/// # Examples
///
/// ```
/// use talaria_core::jsonrpc::{decode_with, ErrorCode, RawPayloads, TypedDecodeError};
///
/// let err = decode_with(b"[", &mut RawPayloads).unwrap_err();
/// assert!(matches!(err, TypedDecodeError::Envelope(_)));
/// assert_eq!(err.to_response().unwrap().error.code, ErrorCode::PARSE_ERROR);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TypedDecodeError {
    /// The frame is not a valid JSON-RPC message.
    #[error(transparent)]
    Envelope(DecodeError),
    /// A valid message whose `params` do not fit its method. A request gets -32602.
    #[error("invalid params for {method}: {detail}")]
    Params {
        /// The request id; `None` for a notification.
        id: Option<RequestId>,
        /// The method.
        method: String,
        /// What did not fit.
        detail: String,
    },
    /// A valid response whose `result` does not fit the request it answers.
    #[error("malformed result for request {id}: {detail}")]
    Result {
        /// The id of the request it answers.
        id: RequestId,
        /// What did not fit.
        detail: String,
    },
}

impl TypedDecodeError {
    /// The error response to send back, if any: none for notifications, responses and results.
    #[must_use]
    pub fn to_response(&self) -> Option<ErrorResponse> {
        match self {
            Self::Envelope(e) => e.to_response(),
            Self::Params { id: Some(id), method, detail } => Some(ErrorResponse {
                id: Some(id.clone()),
                error: ErrorObject::invalid_params(format!("Invalid params for {method}: {detail}")),
            }),
            Self::Params { id: None, .. } | Self::Result { .. } => None,
        }
    }
}

/// Decodes a frame into a message whose payloads `decoder` decodes, in one pass when it can.
///
/// The fast path reads the envelope and hands `params` (by method) and `result` (by request
/// id) to the decoder as they are met. Only when that fails does the slow path run, which
/// decodes the envelope raw and then the payload, to say exactly what was wrong.
///
/// A batch is refused as an invalid message: split one with [`Packet::from_slice`] where the
/// revision allows batches, and decode its elements one by one.
///
/// # Errors
///
/// [`TypedDecodeError::Envelope`] for a bad frame, [`TypedDecodeError::Params`] when the params
/// do not fit the method, [`TypedDecodeError::Result`] when a result does not fit.
///
/// # Examples
///
/// ```
/// use talaria_core::jsonrpc::{decode_with, Envelope, RawPayloads};
///
/// let e = decode_with(br#"{"jsonrpc":"2.0","id":3,"result":{"ok":true}}"#, &mut RawPayloads).unwrap();
/// let Envelope::Response { result, .. } = e else { panic!("not a response") };
/// assert_eq!(result.get(), r#"{"ok":true}"#);
/// ```
pub fn decode_with<P: PayloadDecoder>(
    bytes: &[u8],
    decoder: &mut P,
) -> Result<Envelope<P::Params, P::Result>, TypedDecodeError> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let fast = (&mut de).deserialize_map(EnvelopeVisitor::new(decoder)).and_then(|e| de.end().map(|()| e));
    if let Ok(envelope) = fast {
        return Ok(envelope);
    }
    let detail = |e: serde_json::Error| strip_position(&e);
    match Message::from_slice(bytes).map_err(TypedDecodeError::Envelope)? {
        Message::Request(r) => match decode_params(decoder, &r.method, r.params.as_deref()) {
            Ok(params) => Ok(Envelope::Request { id: r.id, method: r.method, params }),
            Err(e) => Err(TypedDecodeError::Params { id: Some(r.id), method: r.method, detail: detail(e) }),
        },
        Message::Notification(n) => match decode_params(decoder, &n.method, n.params.as_deref()) {
            Ok(params) => Ok(Envelope::Notification { method: n.method, params }),
            Err(e) => Err(TypedDecodeError::Params { id: None, method: n.method, detail: detail(e) }),
        },
        Message::Response(r) => match decode_result(decoder, &r.id, &r.result) {
            Ok(result) => Ok(Envelope::Response { id: r.id, result }),
            Err(e) => Err(TypedDecodeError::Result { id: r.id, detail: detail(e) }),
        },
        Message::Error(e) => Ok(Envelope::Error(e)),
    }
}

/// What one frame holds: a single message or a batch.
///
/// Batches are decoded by the wire layer in every revision; whether a batch is acceptable is
/// decided by the session (only 2025-03-26 allows them).
///
/// # Examples
///
/// ```
/// use talaria_core::jsonrpc::Packet;
///
/// let p = Packet::from_slice(br#"[{"jsonrpc":"2.0","method":"a"}, 1]"#).unwrap();
/// let Packet::Batch(items) = p else { panic!("not a batch") };
/// assert!(items[0].is_ok());
/// assert!(items[1].is_err());
/// ```
#[derive(Debug, Clone, PartialEq)]
pub enum Packet {
    /// One message.
    Single(Message),
    /// A non-empty batch; each element decoded on its own.
    Batch(Vec<Result<Message, DecodeError>>),
}

impl Packet {
    /// Decodes one frame (a line, an HTTP body, an SSE `data` field).
    ///
    /// # Errors
    ///
    /// [`DecodeError::Parse`] if the frame is not JSON, [`DecodeError::EmptyBatch`] for `[]`,
    /// [`DecodeError::Invalid`] if it is a single invalid message. Invalid batch elements are
    /// reported inside the batch.
    pub fn from_slice(bytes: &[u8]) -> Result<Self, DecodeError> {
        if first_non_ws(bytes) == Some(b'[') {
            decode_batch(bytes).map(Packet::Batch)
        } else {
            Message::from_slice(bytes).map(Packet::Single)
        }
    }
}

impl Message {
    /// Decodes one JSON-RPC message; a batch is refused as an invalid message.
    ///
    /// Unknown members of the envelope are ignored; duplicate members, a `jsonrpc` other than
    /// `"2.0"`, a null or fractional id, an id beyond the `i64` range, `params` that are neither
    /// object nor array, or a mix of `method` with `result`/`error` make it invalid.
    ///
    /// # Errors
    ///
    /// [`DecodeError::Parse`] if the bytes are not JSON, [`DecodeError::Invalid`] if they are
    /// not a valid message.
    pub fn from_slice(bytes: &[u8]) -> Result<Self, DecodeError> {
        serde_json::from_slice(bytes).map_err(|fast| diagnose(bytes, &fast))
    }
}

impl core::str::FromStr for Message {
    type Err = DecodeError;

    /// Decodes one JSON-RPC message from text; see [`Message::from_slice`].
    fn from_str(text: &str) -> Result<Self, DecodeError> {
        Self::from_slice(text.as_bytes())
    }
}

/// Encodes several messages as one batch frame (a JSON array, no trailing newline).
///
/// # Examples
///
/// ```
/// use talaria_core::jsonrpc::{encode_batch, Message, Notification};
///
/// let n: Message = Notification::new("a", None::<()>).unwrap().into();
/// assert_eq!(encode_batch(&[n.clone(), n]), br#"[{"jsonrpc":"2.0","method":"a"},{"jsonrpc":"2.0","method":"a"}]"#);
/// ```
#[must_use]
pub fn encode_batch(messages: &[Message]) -> Vec<u8> {
    let mut out = Vec::with_capacity(64 * messages.len() + 2);
    out.push(b'[');
    for (i, m) in messages.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        m.write_to(&mut out);
    }
    out.push(b']');
    out
}

fn decode_batch(bytes: &[u8]) -> Result<Vec<Result<Message, DecodeError>>, DecodeError> {
    let elements: Vec<&RawValue> = match serde_json::from_slice(bytes) {
        Ok(elements) => elements,
        Err(e) => return Err(DecodeError::Parse { detail: e.to_string() }),
    };
    if elements.is_empty() {
        return Err(DecodeError::EmptyBatch);
    }
    Ok(elements.into_iter().map(|raw| Message::from_slice(raw.get().as_bytes())).collect())
}

/// The slow path: why did the fast decoder refuse these bytes?
fn diagnose(bytes: &[u8], fast: &serde_json::Error) -> DecodeError {
    let value: Value = match serde_json::from_slice(bytes) {
        Ok(v) => v,
        Err(e) => return DecodeError::Parse { detail: e.to_string() },
    };
    let detail = if value.is_array() {
        "a batch where a single message was expected".to_owned()
    } else if value.is_object() {
        strip_position(fast)
    } else {
        format!("expected a JSON-RPC message object, found {}", json_type(&value))
    };
    let obj = value.as_object();
    let id = obj.and_then(|o| o.get("id")).and_then(recover_id);
    let response_like =
        obj.is_some_and(|o| !o.contains_key("method") && (o.contains_key("result") || o.contains_key("error")));
    DecodeError::Invalid { id, detail, response_like }
}

fn recover_id(v: &Value) -> Option<RequestId> {
    match v {
        Value::Number(n) => n.as_i64().map(RequestId::Number),
        Value::String(s) => Some(RequestId::String(s.clone())),
        _ => None,
    }
}

/// serde's messages end in " at line 1 column 42", which means little to a peer.
fn strip_position(e: &serde_json::Error) -> String {
    let text = e.to_string();
    match text.rfind(" at line ") {
        Some(i) => text[..i].to_owned(),
        None => text,
    }
}

const fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn first_non_ws(bytes: &[u8]) -> Option<u8> {
    bytes.iter().copied().find(|b| !matches!(b, b' ' | b'\t' | b'\r' | b'\n'))
}
