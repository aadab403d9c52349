//! The HTTP+SSE transport of 2024-11-05 (deprecated since 2025-03-26, still spoken by old
//! clients and servers): a GET opens an event stream whose first event, `endpoint`, names the
//! URL to POST messages to; every reply travels on the stream.

use crate::alloc_prelude::*;
use crate::codec::{encode_event, SseEvent};

/// The query parameter naming the session in the POST URL (`session_id` is accepted too).
pub const SESSION_PARAM: &str = "sessionId";

/// The `endpoint` event that opens a legacy stream: where the client POSTs its messages.
///
/// # Examples
///
/// ```
/// use talaria_core::http::legacy::endpoint_event;
///
/// assert_eq!(endpoint_event("/messages", "abc"), b"event: endpoint\ndata: /messages?sessionId=abc\n\n");
/// ```
#[must_use]
pub fn endpoint_event(messages_path: &str, session: &str) -> Vec<u8> {
    let mut event = SseEvent::message(format!("{messages_path}?{SESSION_PARAM}={session}"));
    event.event = Some("endpoint".into());
    let mut out = Vec::new();
    encode_event(&event, &mut out);
    out
}

/// The session a legacy POST names in its query string.
///
/// # Examples
///
/// ```
/// use talaria_core::http::legacy::session_in_query;
///
/// assert_eq!(session_in_query("/messages?sessionId=abc&x=1"), Some("abc"));
/// assert_eq!(session_in_query("/messages?session_id=abc"), Some("abc"));
/// assert_eq!(session_in_query("/messages"), None);
/// ```
#[must_use]
pub fn session_in_query(url: &str) -> Option<&str> {
    let (_, query) = url.split_once('?')?;
    query.split('&').find_map(|pair| {
        let (key, value) = pair.split_once('=')?;
        (key == SESSION_PARAM || key == "session_id").then_some(value).filter(|v| !v.is_empty())
    })
}

/// Resolves the `endpoint` event's `data` against the URL the stream was opened at: an
/// absolute URL stays, a path is taken from the base's origin, anything else is relative to
/// the base's directory.
///
/// # Examples
///
/// ```
/// use talaria_core::http::legacy::resolve_endpoint;
///
/// let base = "http://127.0.0.1:8080/mcp/sse";
/// assert_eq!(resolve_endpoint(base, "/messages?sessionId=1").unwrap(), "http://127.0.0.1:8080/messages?sessionId=1");
/// assert_eq!(resolve_endpoint(base, "messages?sessionId=1").unwrap(), "http://127.0.0.1:8080/mcp/messages?sessionId=1");
/// assert_eq!(resolve_endpoint(base, "https://other.example/m").unwrap(), "https://other.example/m");
/// assert!(resolve_endpoint("not a url", "/m").is_none());
/// ```
#[must_use]
pub fn resolve_endpoint(base: &str, data: &str) -> Option<String> {
    let data = data.trim();
    if data.starts_with("http://") || data.starts_with("https://") {
        return Some(data.to_owned());
    }
    let (scheme, rest) = base.split_once("://")?;
    let authority_end = rest.find('/').unwrap_or(rest.len());
    let origin = format!("{scheme}://{}", &rest[..authority_end]);
    if data.starts_with('/') {
        return Some(format!("{origin}{data}"));
    }
    let path = rest[authority_end..].split('?').next().unwrap_or("");
    let dir = path.rsplit_once('/').map_or("", |(dir, _)| dir);
    Some(format!("{origin}{dir}/{data}"))
}
