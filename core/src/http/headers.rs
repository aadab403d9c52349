//! MCP's HTTP headers: their names, the Base64 sentinel encoding of values that are not plain
//! header text, and the stateless era's rule that mirrored headers match the body.

use crate::alloc_prelude::*;
use alloc::borrow::Cow;

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::jsonrpc::{ErrorObject, RequestId};

/// `Mcp-Session-Id`: the legacy era's session (2025-03-26 .. 2025-11-25).
pub const SESSION_ID: &str = "Mcp-Session-Id";
/// `MCP-Protocol-Version`: the revision a request speaks (2025-06-18 on).
pub const PROTOCOL_VERSION: &str = "MCP-Protocol-Version";
/// `Mcp-Method`: the JSON-RPC method, mirrored (2026-07-28).
pub const METHOD: &str = "Mcp-Method";
/// `Mcp-Name`: `params.name` or `params.uri`, mirrored (2026-07-28).
pub const NAME: &str = "Mcp-Name";
/// `Last-Event-ID`: where a resumed SSE stream picks up.
pub const LAST_EVENT_ID: &str = "Last-Event-ID";
/// The prefix of headers mirroring tool arguments marked `x-mcp-header` (2026-07-28).
pub const PARAM_PREFIX: &str = "Mcp-Param-";

const SENTINEL_START: &str = "=?base64?";
const SENTINEL_END: &str = "?=";

/// Looks headers up by name, case-insensitively.
pub trait HeaderLookup {
    /// The first value of header `name`.
    fn header(&self, name: &str) -> Option<&str>;

    /// How many fields named `name` there are. The default counts the first only: implement
    /// it where repeated fields can be seen, so that repeated MCP headers are refused.
    fn header_count(&self, name: &str) -> usize {
        usize::from(self.header(name).is_some())
    }
}

impl<K: AsRef<str>, V: AsRef<str>> HeaderLookup for [(K, V)] {
    fn header(&self, name: &str) -> Option<&str> {
        self.iter().find(|(k, _)| k.as_ref().eq_ignore_ascii_case(name)).map(|(_, v)| v.as_ref())
    }

    fn header_count(&self, name: &str) -> usize {
        self.iter().filter(|(k, _)| k.as_ref().eq_ignore_ascii_case(name)).count()
    }
}

impl<K: AsRef<str>, V: AsRef<str>> HeaderLookup for Vec<(K, V)> {
    fn header(&self, name: &str) -> Option<&str> {
        self.as_slice().header(name)
    }

    fn header_count(&self, name: &str) -> usize {
        self.as_slice().header_count(name)
    }
}

/// Why a header value could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum HeaderError {
    /// The value holds characters a header may not carry.
    #[error("header value holds characters a header may not carry")]
    InvalidCharacters,
    /// The Base64 between the sentinels does not decode, or not to UTF-8.
    #[error("malformed =?base64?...?= header value")]
    BadBase64,
}

/// Whether `value` can travel as a plain header value: visible ASCII, spaces and tabs inside,
/// no surrounding whitespace, and not itself looking like an encoded value.
fn is_plain(value: &str) -> bool {
    let bytes = value.as_bytes();
    let inner_ok = bytes.iter().all(|&b| (0x20..=0x7e).contains(&b) || b == b'\t');
    let trimmed = !bytes.first().is_some_and(|b| b.is_ascii_whitespace())
        && !bytes.last().is_some_and(|b| b.is_ascii_whitespace());
    inner_ok && trimmed && !(value.starts_with(SENTINEL_START) && value.ends_with(SENTINEL_END))
}

/// Encodes `value` for an `Mcp-Name` or `Mcp-Param-*` header: as is when it is plain header
/// text, otherwise as `=?base64?…?=` of its UTF-8.
///
/// # Examples
///
/// ```
/// use talaria_core::http::headers::encode_value;
///
/// assert_eq!(encode_value("us-west1"), "us-west1");
/// assert_eq!(encode_value("Hello, 世界"), "=?base64?SGVsbG8sIOS4lueVjA==?=");
/// assert_eq!(encode_value(" padded "), "=?base64?IHBhZGRlZCA=?=");
/// assert_eq!(encode_value("=?base64?literal?="), "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?=");
/// ```
#[must_use]
pub fn encode_value(value: &str) -> Cow<'_, str> {
    if is_plain(value) {
        Cow::Borrowed(value)
    } else {
        Cow::Owned(format!("{SENTINEL_START}{}{SENTINEL_END}", base64_encode(value.as_bytes())))
    }
}

/// Decodes a header value that may use the Base64 sentinel.
///
/// # Errors
///
/// [`HeaderError`] for control characters, or an encoded value that does not decode to UTF-8.
///
/// # Examples
///
/// ```
/// use talaria_core::http::headers::decode_value;
///
/// assert_eq!(decode_value("=?base64?bGluZTEKbGluZTI=?=").unwrap(), "line1\nline2");
/// assert_eq!(decode_value("plain").unwrap(), "plain");
/// assert!(decode_value("=?base64?@@?=").is_err());
/// ```
pub fn decode_value(value: &str) -> Result<Cow<'_, str>, HeaderError> {
    if !value.bytes().all(|b| (0x20..=0x7e).contains(&b) || b == b'\t') {
        return Err(HeaderError::InvalidCharacters);
    }
    match value.strip_prefix(SENTINEL_START).and_then(|v| v.strip_suffix(SENTINEL_END)) {
        Some(encoded) => {
            let bytes = base64_decode(encoded).ok_or(HeaderError::BadBase64)?;
            String::from_utf8(bytes).map(Cow::Owned).map_err(|_| HeaderError::BadBase64)
        }
        None => Ok(Cow::Borrowed(value)),
    }
}

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Standard Base64 with padding.
fn base64_encode(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk.iter().enumerate().fold(0u32, |n, (i, &b)| n | u32::from(b) << (16 - 8 * i));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[(n >> (18 - 6 * i)) as usize & 63]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Standard Base64 with padding; `None` if malformed.
fn base64_decode(text: &str) -> Option<Vec<u8>> {
    let bytes = text.as_bytes();
    if bytes.len() % 4 != 0 {
        return None;
    }
    let mut out = Vec::with_capacity(bytes.len() / 4 * 3);
    for (index, quad) in bytes.chunks(4).enumerate() {
        let last = index == bytes.len() / 4 - 1;
        let pad = quad.iter().rev().take_while(|&&b| b == b'=').count();
        if pad > 2 || (pad > 0 && !last) {
            return None;
        }
        let mut n = 0u32;
        for &b in &quad[..4 - pad] {
            let v = ALPHABET.iter().position(|&a| a == b)?;
            n = n << 6 | u32::try_from(v).ok()?;
        }
        n <<= 6 * u32::try_from(pad).ok()?;
        let decoded = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
        out.extend_from_slice(&decoded[..3 - pad]);
    }
    Some(out)
}

/// The parts of a request body the stateless headers mirror.
#[derive(Deserialize)]
struct Mirrored<'a> {
    /// The request's id (none for a notification), for the refusal's answer.
    #[serde(default)]
    id: Option<RequestId>,
    #[serde(borrow)]
    method: Cow<'a, str>,
    #[serde(borrow, default)]
    params: Option<MirroredParams<'a>>,
}

#[derive(Deserialize)]
struct MirroredParams<'a> {
    #[serde(borrow, default)]
    name: Option<Cow<'a, str>>,
    /// A `tools/call`'s arguments, read only for the `Mcp-Param-*` headers they may need.
    #[serde(borrow, default)]
    arguments: Option<&'a RawValue>,
    #[serde(borrow, default)]
    uri: Option<Cow<'a, str>>,
    /// The task of the tasks extension's `tasks/get`, `tasks/update`, `tasks/cancel`.
    #[serde(rename = "taskId", borrow, default)]
    task_id: Option<Cow<'a, str>>,
    #[serde(rename = "_meta", default)]
    meta: Option<Box<RawValue>>,
}

/// What `Mcp-Name` mirrors for `method`, if anything: `params.name` (`tools/call`,
/// `prompts/get`), `params.uri` (`resources/read`), `params.taskId` (the tasks extension's
/// `tasks/get`, `tasks/update`, `tasks/cancel`, so that a load balancer can route a task's
/// requests to the process holding it).
fn mirrored_name<'p>(method: &str, params: Option<&'p MirroredParams<'_>>) -> Option<&'p str> {
    match method {
        "tools/call" | "prompts/get" => params.and_then(|p| p.name.as_deref()),
        "resources/read" => params.and_then(|p| p.uri.as_deref()),
        "tasks/get" | "tasks/update" | "tasks/cancel" => params.and_then(|p| p.task_id.as_deref()),
        _ => None,
    }
}

#[derive(Deserialize)]
struct MirroredMeta<'a> {
    #[serde(rename = "io.modelcontextprotocol/protocolVersion", borrow, default)]
    version: Option<Cow<'a, str>>,
    #[serde(rename = "io.modelcontextprotocol/clientCapabilities", default)]
    capabilities: Option<serde::de::IgnoredAny>,
}

/// A stateless-era request refused before the JSON-RPC layer reads it (HTTP 400): the id
/// its answer carries (`None` for a notification) and the error.
#[derive(Debug, Clone, PartialEq)]
pub struct BodyRefusal {
    /// The request's id, if the body had one.
    pub id: Option<RequestId>,
    /// A `-32020` header mismatch or a `-32602` for a missing `_meta`.
    pub error: ErrorObject,
}

/// Checks a 2026-07-28 request body against its headers ([`check_mirrored`]) and that a
/// request carries the `_meta` every request must (`io.modelcontextprotocol/protocolVersion`
/// and `io.modelcontextprotocol/clientCapabilities`), in one read of the body.
///
/// # Errors
///
/// A [`BodyRefusal`] with the request's id: `-32020` for a header that is missing or
/// disagrees, `-32602` for a missing `_meta` field (HTTP 400 both).
///
/// # Examples
///
/// ```
/// use talaria_core::http::headers::check_stateless_request;
/// use talaria_core::jsonrpc::RequestId;
///
/// let headers = [("MCP-Protocol-Version", "2026-07-28"), ("Mcp-Method", "tools/list")];
/// let bare = br#"{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{}}"#;
/// let refusal = check_stateless_request(&headers[..], bare).unwrap_err();
/// assert_eq!((refusal.id, refusal.error.code.0), (Some(RequestId::Number(4)), -32602));
/// ```
pub fn check_stateless_request(headers: &(impl HeaderLookup + ?Sized), body: &[u8]) -> Result<(), BodyRefusal> {
    let Ok(mirrored) = serde_json::from_slice::<Mirrored<'_>>(body) else {
        // Not a request the headers can be checked against; the JSON-RPC layer answers it.
        return Ok(());
    };
    let meta = mirrored_meta(&mirrored);
    if let Err(error) = check_parsed(headers, &mirrored, meta.as_ref()) {
        return Err(BodyRefusal { id: mirrored.id, error });
    }
    let complete = meta.as_ref().is_some_and(|m| m.version.is_some() && m.capabilities.is_some());
    if mirrored.id.is_some() && !complete {
        let error = ErrorObject::invalid_params(
            "a request must carry _meta with io.modelcontextprotocol/protocolVersion and \
             io.modelcontextprotocol/clientCapabilities",
        );
        return Err(BodyRefusal { id: mirrored.id, error });
    }
    Ok(())
}

/// The request's `_meta`, if it has one this reads.
fn mirrored_meta<'a>(mirrored: &'a Mirrored<'_>) -> Option<MirroredMeta<'a>> {
    let meta = mirrored.params.as_ref()?.meta.as_deref()?;
    serde_json::from_str::<MirroredMeta<'_>>(meta.get()).ok()
}

/// Checks the 2026-07-28 rule that `MCP-Protocol-Version`, `Mcp-Method` and (for
/// `tools/call`, `resources/read`, `prompts/get`) `Mcp-Name` are present and agree with the
/// request `body`.
///
/// # Errors
///
/// A `-32020` header-mismatch error naming the header (HTTP 400).
///
/// # Examples
///
/// ```
/// use talaria_core::http::headers::check_mirrored;
///
/// let body = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_weather",
///     "_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#;
/// let good = [("MCP-Protocol-Version", "2026-07-28"), ("Mcp-Method", "tools/call"), ("Mcp-Name", "get_weather")];
/// assert!(check_mirrored(&good[..], body).is_ok());
/// let bad = [("MCP-Protocol-Version", "2026-07-28"), ("Mcp-Method", "tools/call"), ("Mcp-Name", "other")];
/// assert_eq!(check_mirrored(&bad[..], body).unwrap_err().code.0, -32020);
/// ```
pub fn check_mirrored(headers: &(impl HeaderLookup + ?Sized), body: &[u8]) -> Result<(), ErrorObject> {
    let Ok(mirrored) = serde_json::from_slice::<Mirrored<'_>>(body) else {
        // Not a request the headers can be checked against; the JSON-RPC layer answers it.
        return Ok(());
    };
    check_parsed(headers, &mirrored, mirrored_meta(&mirrored).as_ref())
}

/// [`check_mirrored`] of a body read already.
fn check_parsed(
    headers: &(impl HeaderLookup + ?Sized),
    mirrored: &Mirrored<'_>,
    meta: Option<&MirroredMeta<'_>>,
) -> Result<(), ErrorObject> {
    let mismatch = |what: String| ErrorObject::header_mismatch(format!("Header mismatch: {what}"));
    let method = headers.header(METHOD).ok_or_else(|| mismatch(format!("{METHOD} header is missing")))?;
    if method != mirrored.method {
        return Err(mismatch(format!(
            "{METHOD} header value '{method}' does not match body value '{}'",
            mirrored.method
        )));
    }
    let params = mirrored.params.as_ref();
    let version =
        headers.header(PROTOCOL_VERSION).ok_or_else(|| mismatch(format!("{PROTOCOL_VERSION} header is missing")))?;
    if let Some(body_version) = meta.and_then(|m| m.version.as_deref()) {
        if version != body_version {
            return Err(mismatch(format!(
                "{PROTOCOL_VERSION} header value '{version}' does not match body value '{body_version}'"
            )));
        }
    }
    let Some(expected) = mirrored_name(&mirrored.method, params) else { return Ok(()) };
    // The extension's task requests are checked when they carry the header; the core
    // protocol's named requests must.
    let Some(raw) = headers.header(NAME) else {
        if mirrored.method.starts_with("tasks/") {
            return Ok(());
        }
        return Err(mismatch(format!("{NAME} header is missing")));
    };
    let name = decode_value(raw).map_err(|e| mismatch(format!("{NAME} header: {e}")))?;
    if name != expected {
        return Err(mismatch(format!("{NAME} header value '{name}' does not match body value '{expected}'")));
    }
    Ok(())
}

/// The headers a client mirrors from a stateless request: `Mcp-Method`, `Mcp-Name` where the
/// method has one (encoded as needed), and `MCP-Protocol-Version` from the request's `_meta`.
///
/// # Examples
///
/// ```
/// use talaria_core::http::headers::mirror;
///
/// let body = br#"{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"file:///a b"}}"#;
/// assert_eq!(mirror(body), vec![("Mcp-Method", "resources/read".to_owned()), ("Mcp-Name", "file:///a b".to_owned())]);
/// ```
#[must_use]
pub fn mirror(body: &[u8]) -> Vec<(&'static str, String)> {
    mirror_call(body).0
}

/// A stateless `tools/call`: the tool's name and its arguments (JSON text), for the
/// `Mcp-Param-*` headers the tool's schema may call for.
pub(crate) type MirroredCall = (String, String);

/// [`mirror`], with the name and arguments of a stateless `tools/call`.
pub(crate) fn mirror_call(body: &[u8]) -> (Vec<(&'static str, String)>, Option<MirroredCall>) {
    let Ok(mirrored) = serde_json::from_slice::<Mirrored<'_>>(body) else { return (Vec::new(), None) };
    let mut headers = vec![(METHOD, mirrored.method.clone().into_owned())];
    let params = mirrored.params.as_ref();
    if let Some(name) = mirrored_name(&mirrored.method, params) {
        headers.push((NAME, encode_value(name).into_owned()));
    }
    let version = params
        .and_then(|p| p.meta.as_deref())
        .and_then(|m| serde_json::from_str::<MirroredMeta<'_>>(m.get()).ok())
        .and_then(|m| m.version);
    let stateless = version.is_some();
    if let Some(version) = version {
        headers.push((PROTOCOL_VERSION, version.into_owned()));
    }
    let call = match (mirrored.method.as_ref(), params) {
        ("tools/call", Some(MirroredParams { name: Some(name), arguments: Some(arguments), .. })) if stateless => {
            Some((name.clone().into_owned(), arguments.get().to_owned()))
        }
        _ => None,
    };
    (headers, call)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn base64_matches_the_spec_examples() {
        assert_eq!(base64_encode(b"Hello, \xe4\xb8\x96\xe7\x95\x8c"), "SGVsbG8sIOS4lueVjA==");
        assert_eq!(base64_encode(b""), "");
        assert_eq!(base64_encode(b"f"), "Zg==");
        assert_eq!(base64_encode(b"fo"), "Zm8=");
        assert_eq!(base64_encode(b"foo"), "Zm9v");
        assert_eq!(base64_decode("Zm9vYg==").unwrap(), b"foob");
        assert_eq!(base64_decode("Zg=a"), None, "padding only at the end");
        assert_eq!(base64_decode("Zg="), None, "length not a multiple of 4");
    }

    #[test]
    fn control_characters_are_refused() {
        assert_eq!(decode_value("a\nb"), Err(HeaderError::InvalidCharacters));
        assert_eq!(decode_value("=?base64?/w==?="), Err(HeaderError::BadBase64), "0xFF is not UTF-8");
    }

    #[test]
    fn missing_and_mismatched_headers_are_named() {
        let body = br#"{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"file:///x",
            "_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#;
        let cases: [(&[(&str, &str)], &str); 4] = [
            (&[("MCP-Protocol-Version", "2026-07-28"), ("Mcp-Method", "resources/read")], "Mcp-Name header is missing"),
            (&[("Mcp-Method", "resources/read"), ("Mcp-Name", "file:///x")], "MCP-Protocol-Version header is missing"),
            (
                &[("MCP-Protocol-Version", "2025-11-25"), ("Mcp-Method", "resources/read"), ("Mcp-Name", "file:///x")],
                "does not match body value '2026-07-28'",
            ),
            (&[("MCP-Protocol-Version", "2026-07-28"), ("mcp-method", "tools/call")], "'tools/call' does not match"),
        ];
        for (headers, expected) in cases {
            let error = check_mirrored(headers, body).unwrap_err();
            assert_eq!(error.code.0, -32020);
            assert!(error.message.contains(expected), "{} lacks {expected}", error.message);
        }
        let encoded = [
            ("mcp-protocol-version", "2026-07-28"),
            ("MCP-METHOD", "resources/read"),
            ("mcp-name", "=?base64?ZmlsZTovLy94?="),
        ];
        assert!(check_mirrored(&encoded[..], body).is_ok(), "names compared case-insensitively, values decoded");
    }

    proptest! {
        #[test]
        fn every_value_round_trips(value in ".*") {
            let encoded = encode_value(&value);
            prop_assert!(encoded.bytes().all(|b| (0x20..=0x7e).contains(&b) || b == b'\t'));
            prop_assert_eq!(decode_value(&encoded).unwrap(), value.as_str());
        }

        #[test]
        fn base64_round_trips(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            prop_assert_eq!(base64_decode(&base64_encode(&bytes)).unwrap(), bytes);
        }
    }
}
