//! The JSON-RPC error model: codes, their meaning in MCP, and error objects.
//!
//! A peer's error travels as an [`ErrorObject`] (code, message, optional data). A failure that
//! happened on this side (a timeout, a closed transport) is a [`LocalError`] and never takes the
//! shape of a wire error, so the two cannot be mistaken for each other; [`CallError`] holds either.

use crate::alloc_prelude::*;
use core::fmt;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

/// A JSON-RPC error code.
///
/// A plain integer newtype, so codes this crate does not know survive a round trip. The
/// associated constants name every code MCP peers use; [`ErrorCode::kind`] classifies a code.
///
/// # Examples
///
/// ```
/// use talaria_core::jsonrpc::{ErrorCode, ErrorKind};
///
/// assert_eq!(ErrorCode::METHOD_NOT_FOUND.kind(), ErrorKind::MethodNotFound);
/// assert_eq!(ErrorCode(-32099).kind(), ErrorKind::ServerDefined);
/// assert_eq!(ErrorCode(42).kind(), ErrorKind::Other);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ErrorCode(pub i64);

impl ErrorCode {
    /// Whether the code is in the range the MCP specification reserves for its own errors
    /// (-32099 to -32020): only a 2026-07-28-aware server sends them, which is how a client
    /// tells a modern server that refused a request from a legacy one.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::jsonrpc::ErrorCode;
    ///
    /// assert!(ErrorCode::HEADER_MISMATCH.is_mcp_reserved());
    /// assert!(!ErrorCode::INVALID_REQUEST.is_mcp_reserved());
    /// ```
    #[must_use]
    pub const fn is_mcp_reserved(self) -> bool {
        self.0 >= -32099 && self.0 <= -32020
    }

    /// -32700: the bytes were not JSON.
    pub const PARSE_ERROR: Self = Self(-32700);
    /// -32600: JSON, but not a valid JSON-RPC message.
    pub const INVALID_REQUEST: Self = Self(-32600);
    /// -32601: the method does not exist or is not available (capability not negotiated).
    pub const METHOD_NOT_FOUND: Self = Self(-32601);
    /// -32602: invalid method parameters (also: unknown tool or prompt, bad cursor, and unknown
    /// resource from 2026-07-28 on).
    pub const INVALID_PARAMS: Self = Self(-32602);
    /// -32603: internal error of the peer.
    pub const INTERNAL_ERROR: Self = Self(-32603);
    /// -32000: generic server or execution error.
    pub const SERVER_ERROR: Self = Self(-32000);
    /// -32001: request timed out (as the official TypeScript SDK reports it).
    pub const REQUEST_TIMEOUT: Self = Self(-32001);
    /// -32002: resource not found (revisions before 2026-07-28).
    pub const RESOURCE_NOT_FOUND: Self = Self(-32002);
    /// -32020: HTTP headers do not match the body (2026-07-28).
    pub const HEADER_MISMATCH: Self = Self(-32020);
    /// -32021: the request needs a client capability the client did not declare (2026-07-28).
    pub const MISSING_REQUIRED_CLIENT_CAPABILITY: Self = Self(-32021);
    /// -32022: the protocol version of the request is not supported (2026-07-28).
    pub const UNSUPPORTED_PROTOCOL_VERSION: Self = Self(-32022);
    /// -32042: the request needs a URL-mode elicitation first (2025-11-25).
    pub const URL_ELICITATION_REQUIRED: Self = Self(-32042);

    /// The meaning of this code in MCP.
    #[must_use]
    pub const fn kind(self) -> ErrorKind {
        match self.0 {
            -32700 => ErrorKind::Parse,
            -32600 => ErrorKind::InvalidRequest,
            -32601 => ErrorKind::MethodNotFound,
            -32602 => ErrorKind::InvalidParams,
            -32603 => ErrorKind::Internal,
            -32000 => ErrorKind::Server,
            -32001 => ErrorKind::RequestTimeout,
            -32002 => ErrorKind::ResourceNotFound,
            -32020 => ErrorKind::HeaderMismatch,
            -32021 => ErrorKind::MissingRequiredClientCapability,
            -32022 => ErrorKind::UnsupportedProtocolVersion,
            -32042 => ErrorKind::UrlElicitationRequired,
            -32099..=-32000 => ErrorKind::ServerDefined,
            _ => ErrorKind::Other,
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// The semantic kind of an error code, for matching without magic numbers.
///
/// # Examples
///
/// ```
/// use talaria_core::jsonrpc::{ErrorKind, ErrorObject};
///
/// let err = ErrorObject::method_not_found("tools/list");
/// assert_eq!(err.kind(), ErrorKind::MethodNotFound);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// -32700 Parse error.
    Parse,
    /// -32600 Invalid Request.
    InvalidRequest,
    /// -32601 Method not found.
    MethodNotFound,
    /// -32602 Invalid params.
    InvalidParams,
    /// -32603 Internal error.
    Internal,
    /// -32000 generic server / execution error.
    Server,
    /// -32001 request timeout.
    RequestTimeout,
    /// -32002 resource not found (legacy revisions).
    ResourceNotFound,
    /// -32020 header mismatch.
    HeaderMismatch,
    /// -32021 missing required client capability.
    MissingRequiredClientCapability,
    /// -32022 unsupported protocol version.
    UnsupportedProtocolVersion,
    /// -32042 URL elicitation required.
    UrlElicitationRequired,
    /// Another code in the implementation-defined server range -32099..=-32000.
    ServerDefined,
    /// Any other code.
    Other,
}

/// A JSON-RPC error object, as carried by an error response.
///
/// Constructed through the named constructors, which fill in the data shapes the MCP schemas
/// prescribe. Any code and any data from a peer are preserved.
///
/// # Examples
///
/// ```
/// use talaria_core::jsonrpc::{ErrorCode, ErrorObject};
///
/// let err = ErrorObject::unsupported_protocol_version("1900-01-01", &["2026-07-28", "2025-11-25"]);
/// assert_eq!(err.code, ErrorCode::UNSUPPORTED_PROTOCOL_VERSION);
/// assert_eq!(err.data.unwrap()["requested"], "1900-01-01");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorObject {
    /// The error code.
    pub code: ErrorCode,
    /// A short description of the error.
    pub message: String,
    /// Additional information, shaped by the code. A `null` sent by the peer is kept as
    /// `Some(Value::Null)`, so it survives a round trip.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "present")]
    pub data: Option<Value>,
}

impl ErrorObject {
    /// An error with the given code and message and no data.
    #[must_use]
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self { code, message: message.into(), data: None }
    }

    /// Attaches data to the error.
    #[must_use]
    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }

    /// The meaning of the code.
    #[must_use]
    pub const fn kind(&self) -> ErrorKind {
        self.code.kind()
    }

    /// -32700, for bytes that are not JSON.
    #[must_use]
    pub fn parse_error(detail: &str) -> Self {
        Self::new(ErrorCode::PARSE_ERROR, format!("Parse error: {detail}"))
    }

    /// -32600, for JSON that is not a valid JSON-RPC message.
    #[must_use]
    pub fn invalid_request(detail: &str) -> Self {
        Self::new(ErrorCode::INVALID_REQUEST, format!("Invalid Request: {detail}"))
    }

    /// -32601, naming the method.
    #[must_use]
    pub fn method_not_found(method: &str) -> Self {
        Self::new(ErrorCode::METHOD_NOT_FOUND, format!("Method not found: {method}"))
    }

    /// -32602 with the given message.
    #[must_use]
    pub fn invalid_params(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::INVALID_PARAMS, message)
    }

    /// -32603 with the given message.
    #[must_use]
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::INTERNAL_ERROR, message)
    }

    /// -32000, a generic server-side failure.
    #[must_use]
    pub fn server_error(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::SERVER_ERROR, message)
    }

    /// -32001, the request timed out, with the timeout in milliseconds as data.
    #[must_use]
    pub fn request_timeout(timeout_ms: u64) -> Self {
        Self::new(ErrorCode::REQUEST_TIMEOUT, "Request timed out").with_data(json!({ "timeout": timeout_ms }))
    }

    /// -32002, resource not found, with the URI as data (revisions before 2026-07-28; from then on
    /// use [`ErrorObject::invalid_params`]).
    #[must_use]
    pub fn resource_not_found(uri: &str) -> Self {
        Self::new(ErrorCode::RESOURCE_NOT_FOUND, format!("Resource not found: {uri}")).with_data(json!({ "uri": uri }))
    }

    /// -32020, an HTTP header disagrees with the body.
    #[must_use]
    pub fn header_mismatch(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::HEADER_MISMATCH, message)
    }

    /// -32021, the request needs client capabilities the client did not declare;
    /// `required` is a `ClientCapabilities`-shaped object.
    #[must_use]
    pub fn missing_required_client_capability(message: impl Into<String>, required: Value) -> Self {
        Self::new(ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY, message)
            .with_data(object_with("requiredCapabilities", required))
    }

    /// -32022, the requested protocol version is not supported; lists the supported ones.
    #[must_use]
    pub fn unsupported_protocol_version(requested: &str, supported: &[&str]) -> Self {
        Self::new(ErrorCode::UNSUPPORTED_PROTOCOL_VERSION, "Unsupported protocol version")
            .with_data(json!({ "supported": supported, "requested": requested }))
    }

    /// -32042, the client must complete the given URL elicitations (each an
    /// `ElicitRequestURLParams`-shaped object) before retrying.
    #[must_use]
    pub fn url_elicitation_required(message: impl Into<String>, elicitations: Vec<Value>) -> Self {
        Self::new(ErrorCode::URL_ELICITATION_REQUIRED, message)
            .with_data(object_with("elicitations", Value::Array(elicitations)))
    }
}

/// Reads a member that is present (even as `null`) as `Some`.
fn present<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(deserializer).map(Some)
}

/// `{"key": value}`, moving `value` in.
fn object_with(key: &str, value: Value) -> Value {
    let mut map = serde_json::Map::new();
    map.insert(key.to_owned(), value);
    Value::Object(map)
}

impl fmt::Display for ErrorObject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (code {})", self.message, self.code)
    }
}

impl core::error::Error for ErrorObject {}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn every_named_code_has_its_kind() {
        let table = [
            (-32700, ErrorKind::Parse),
            (-32600, ErrorKind::InvalidRequest),
            (-32601, ErrorKind::MethodNotFound),
            (-32602, ErrorKind::InvalidParams),
            (-32603, ErrorKind::Internal),
            (-32000, ErrorKind::Server),
            (-32001, ErrorKind::RequestTimeout),
            (-32002, ErrorKind::ResourceNotFound),
            (-32020, ErrorKind::HeaderMismatch),
            (-32021, ErrorKind::MissingRequiredClientCapability),
            (-32022, ErrorKind::UnsupportedProtocolVersion),
            (-32042, ErrorKind::UrlElicitationRequired),
            (-32050, ErrorKind::ServerDefined),
            (-31999, ErrorKind::Other),
            (1, ErrorKind::Other),
        ];
        for (code, kind) in table {
            assert_eq!(ErrorCode(code).kind(), kind, "code {code}");
        }
    }

    #[test]
    fn unknown_codes_and_data_round_trip() {
        let text = r#"{"code":12345,"message":"custom","data":{"x":[1,2]}}"#;
        let err: ErrorObject = serde_json::from_str(text).unwrap();
        assert_eq!(err.kind(), ErrorKind::Other);
        assert_eq!(serde_json::to_string(&err).unwrap(), text);
    }

    #[test]
    fn constructors_match_the_schema_data_shapes() {
        let e = ErrorObject::missing_required_client_capability("needs elicitation", json!({"elicitation": {}}));
        assert_eq!(e.data.unwrap(), json!({"requiredCapabilities": {"elicitation": {}}}));
        let e = ErrorObject::url_elicitation_required("auth", vec![json!({"mode": "url"})]);
        assert_eq!(e.data.unwrap()["elicitations"][0]["mode"], "url");
        assert_eq!(ErrorObject::resource_not_found("file:///x").code, ErrorCode(-32002));
    }
}
