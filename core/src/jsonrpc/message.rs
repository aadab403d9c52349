//! JSON-RPC 2.0 messages: the four kinds, their encoding, and a fast envelope decoder.
//!
//! The envelope (`jsonrpc`, `id`, `method`) is decoded into Rust types while `params` and
//! `result` stay as raw JSON text ([`RawValue`]) until a typed layer asks for them. That keeps
//! decoding a message cheaper than building a `serde_json::Value` of it.

use crate::alloc_prelude::*;
use serde::de::DeserializeOwned;
use serde::ser::SerializeStruct;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::value::RawValue;

use super::envelope::{Envelope, EnvelopeVisitor, RawPayloads};
use super::error::ErrorObject;
use super::id::RequestId;

/// The JSON-RPC version string every message carries.
pub const JSONRPC_VERSION: &str = "2.0";

/// One JSON-RPC 2.0 message.
///
/// # Examples
///
/// ```
/// use talaria_core::jsonrpc::{Message, RequestId};
///
/// let msg = Message::from_slice(br#"{"jsonrpc":"2.0","id":1,"result":{}}"#).unwrap();
/// let Message::Response(resp) = &msg else { panic!("not a response") };
/// assert_eq!(resp.id, RequestId::Number(1));
/// assert_eq!(resp.result.get(), "{}");
/// assert_eq!(msg.to_vec(), br#"{"jsonrpc":"2.0","id":1,"result":{}}"#);
/// ```
#[derive(Debug, Clone)]
pub enum Message {
    /// A request: expects exactly one response with the same id.
    Request(Request),
    /// A notification: no id, no response.
    Notification(Notification),
    /// A successful response.
    Response(Response),
    /// An error response.
    Error(ErrorResponse),
}

/// A request: `{"jsonrpc":"2.0","id":..,"method":..,"params":..}`.
///
/// # Examples
///
/// ```
/// use talaria_core::jsonrpc::{Request, RequestId};
/// use serde_json::json;
///
/// let req = Request::new(1, "tools/call", Some(json!({"name": "echo"}))).unwrap();
/// assert_eq!(req.params.as_ref().unwrap().get(), r#"{"name":"echo"}"#);
/// #[derive(serde::Deserialize)]
/// struct Call { name: String }
/// assert_eq!(req.params_as::<Call>().unwrap().name, "echo");
/// ```
#[derive(Debug, Clone)]
pub struct Request {
    /// The request id, unique among the sender's requests in flight.
    pub id: RequestId,
    /// The method name.
    pub method: String,
    /// The parameters, an object or array, as raw JSON; `None` when absent.
    pub params: Option<Box<RawValue>>,
}

/// A notification: `{"jsonrpc":"2.0","method":..,"params":..}`.
///
/// # Examples
///
/// ```
/// use talaria_core::jsonrpc::Notification;
///
/// let n = Notification::new("notifications/initialized", None::<()>).unwrap();
/// assert!(n.params.is_none());
/// ```
#[derive(Debug, Clone)]
pub struct Notification {
    /// The method name.
    pub method: String,
    /// The parameters, an object or array, as raw JSON; `None` when absent.
    pub params: Option<Box<RawValue>>,
}

/// A successful response: `{"jsonrpc":"2.0","id":..,"result":..}`.
///
/// # Examples
///
/// ```
/// use talaria_core::jsonrpc::Response;
///
/// let r = Response::new(7, &serde_json::json!({"tools": []})).unwrap();
/// assert_eq!(r.result.get(), r#"{"tools":[]}"#);
/// ```
#[derive(Debug, Clone)]
pub struct Response {
    /// The id of the request this answers.
    pub id: RequestId,
    /// The result, as raw JSON.
    pub result: Box<RawValue>,
}

/// An error response: `{"jsonrpc":"2.0","id":..,"error":{..}}`.
///
/// `id` is `None` (`null` on the wire) when the request's id could not be read.
///
/// # Examples
///
/// ```
/// use talaria_core::jsonrpc::{ErrorObject, ErrorResponse, Message};
///
/// let e = ErrorResponse { id: None, error: ErrorObject::parse_error("bad") };
/// assert_eq!(
///     Message::Error(e).to_vec(),
///     br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error: bad"}}"#
/// );
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct ErrorResponse {
    /// The id of the request this answers, if it could be read.
    pub id: Option<RequestId>,
    /// The error.
    pub error: ErrorObject,
}

impl Request {
    /// A request with parameters serialized from `params` (`None` for no `params` member).
    ///
    /// # Errors
    ///
    /// Fails if `params` cannot be serialized to JSON.
    pub fn new<P: Serialize>(
        id: impl Into<RequestId>,
        method: impl Into<String>,
        params: Option<P>,
    ) -> Result<Self, serde_json::Error> {
        Ok(Self { id: id.into(), method: method.into(), params: raw_params(params)? })
    }

    /// Decodes the parameters into `T`; absent parameters decode as an empty object.
    ///
    /// # Errors
    ///
    /// Fails if the parameters do not fit `T`.
    pub fn params_as<T: DeserializeOwned>(&self) -> Result<T, serde_json::Error> {
        params_as(self.params.as_deref())
    }
}

impl Notification {
    /// A notification with parameters serialized from `params` (`None` for no `params` member).
    ///
    /// # Errors
    ///
    /// Fails if `params` cannot be serialized to JSON.
    pub fn new<P: Serialize>(method: impl Into<String>, params: Option<P>) -> Result<Self, serde_json::Error> {
        Ok(Self { method: method.into(), params: raw_params(params)? })
    }

    /// Decodes the parameters into `T`; absent parameters decode as an empty object.
    ///
    /// # Errors
    ///
    /// Fails if the parameters do not fit `T`.
    pub fn params_as<T: DeserializeOwned>(&self) -> Result<T, serde_json::Error> {
        params_as(self.params.as_deref())
    }
}

impl Response {
    /// A response whose result is serialized from `result`.
    ///
    /// # Errors
    ///
    /// Fails if `result` cannot be serialized to JSON.
    pub fn new<R: Serialize + ?Sized>(id: impl Into<RequestId>, result: &R) -> Result<Self, serde_json::Error> {
        Ok(Self { id: id.into(), result: serde_json::value::to_raw_value(result)? })
    }

    /// Decodes the result into `T`.
    ///
    /// # Errors
    ///
    /// Fails if the result does not fit `T`.
    pub fn result_as<T: DeserializeOwned>(&self) -> Result<T, serde_json::Error> {
        serde_json::from_str(self.result.get())
    }
}

fn raw_params<P: Serialize>(params: Option<P>) -> Result<Option<Box<RawValue>>, serde_json::Error> {
    params.map(|p| serde_json::value::to_raw_value(&p)).transpose()
}

fn params_as<T: DeserializeOwned>(params: Option<&RawValue>) -> Result<T, serde_json::Error> {
    serde_json::from_str(params.map_or("{}", RawValue::get))
}

impl Message {
    /// The method name of a request or notification.
    #[must_use]
    pub fn method(&self) -> Option<&str> {
        match self {
            Self::Request(r) => Some(&r.method),
            Self::Notification(n) => Some(&n.method),
            Self::Response(_) | Self::Error(_) => None,
        }
    }

    /// The id of a request or response (`None` for notifications and id-less errors).
    #[must_use]
    pub const fn id(&self) -> Option<&RequestId> {
        match self {
            Self::Request(Request { id, .. }) | Self::Response(Response { id, .. }) => Some(id),
            Self::Error(e) => e.id.as_ref(),
            Self::Notification(_) => None,
        }
    }

    /// The raw parameters of a request or notification.
    #[must_use]
    pub fn params(&self) -> Option<&RawValue> {
        match self {
            Self::Request(r) => r.params.as_deref(),
            Self::Notification(n) => n.params.as_deref(),
            Self::Response(_) | Self::Error(_) => None,
        }
    }

    /// Encodes the message as compact JSON (no trailing newline).
    #[must_use]
    pub fn to_vec(&self) -> Vec<u8> {
        // The envelope, and the raw JSON it carries: one allocation, no regrowth.
        let carried = match self {
            Self::Response(r) => r.result.get().len(),
            _ => self.params().map_or(0, |p| p.get().len()),
        };
        let mut out = Vec::with_capacity(64 + carried);
        self.write_to(&mut out);
        out
    }

    /// Appends the compact JSON encoding of the message to `out`.
    pub fn write_to(&self, out: &mut Vec<u8>) {
        // Invariant: every field serializes infallibly (string keys, raw JSON, `Value` data),
        // and writing to a `Vec` cannot fail.
        #[cfg(feature = "std")]
        #[allow(clippy::expect_used)]
        serde_json::to_writer(out, self).expect("a JSON-RPC message always serializes");
        // `serde_json` writes into a `Vec` of its own without `std` (no `io::Write`).
        #[cfg(not(feature = "std"))]
        #[allow(clippy::expect_used)]
        out.extend_from_slice(&serde_json::to_vec(self).expect("a JSON-RPC message always serializes"));
    }
}

impl From<Request> for Message {
    fn from(r: Request) -> Self {
        Self::Request(r)
    }
}

impl From<Notification> for Message {
    fn from(n: Notification) -> Self {
        Self::Notification(n)
    }
}

impl From<Response> for Message {
    fn from(r: Response) -> Self {
        Self::Response(r)
    }
}

impl From<ErrorResponse> for Message {
    fn from(e: ErrorResponse) -> Self {
        Self::Error(e)
    }
}

impl PartialEq for Message {
    /// Messages are equal when their encodings are equal byte for byte.
    fn eq(&self, other: &Self) -> bool {
        self.to_vec() == other.to_vec()
    }
}

impl Serialize for Message {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Request(r) => {
                let mut s = serializer.serialize_struct("Request", 4)?;
                s.serialize_field("jsonrpc", JSONRPC_VERSION)?;
                s.serialize_field("id", &r.id)?;
                s.serialize_field("method", &r.method)?;
                if let Some(p) = &r.params {
                    s.serialize_field("params", p)?;
                }
                s.end()
            }
            Self::Notification(n) => {
                let mut s = serializer.serialize_struct("Notification", 3)?;
                s.serialize_field("jsonrpc", JSONRPC_VERSION)?;
                s.serialize_field("method", &n.method)?;
                if let Some(p) = &n.params {
                    s.serialize_field("params", p)?;
                }
                s.end()
            }
            Self::Response(r) => {
                let mut s = serializer.serialize_struct("Response", 3)?;
                s.serialize_field("jsonrpc", JSONRPC_VERSION)?;
                s.serialize_field("id", &r.id)?;
                s.serialize_field("result", &r.result)?;
                s.end()
            }
            Self::Error(e) => {
                let mut s = serializer.serialize_struct("ErrorResponse", 3)?;
                s.serialize_field("jsonrpc", JSONRPC_VERSION)?;
                s.serialize_field("id", &e.id)?;
                s.serialize_field("error", &e.error)?;
                s.end()
            }
        }
    }
}

impl From<Envelope<Option<Box<RawValue>>, Box<RawValue>>> for Message {
    fn from(e: Envelope<Option<Box<RawValue>>, Box<RawValue>>) -> Self {
        match e {
            Envelope::Request { id, method, params } => Self::Request(Request { id, method, params }),
            Envelope::Notification { method, params } => Self::Notification(Notification { method, params }),
            Envelope::Response { id, result } => Self::Response(Response { id, result }),
            Envelope::Error(e) => Self::Error(e),
        }
    }
}

/// Strict envelope decoding with `params` and `result` kept raw.
impl<'de> Deserialize<'de> for Message {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(EnvelopeVisitor::new(&mut RawPayloads)).map(Self::from)
    }
}
