//! Wire traces: what a client sends and receives, frames and transport exchanges, handed to a
//! callback as it happens (the CLI's `--trace`).

use std::sync::Arc;

/// One thing on the wire, for a trace (see [`ClientOptions::trace`](super::ClientOptions::trace)).
///
/// Values are as sent or received: redacting secrets (`Authorization`, tokens) is the
/// printer's job.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum TraceEvent<'a> {
    /// A JSON-RPC frame to the server.
    Sent(&'a [u8]),
    /// A JSON-RPC frame from the server.
    Received(&'a [u8]),
    /// An HTTP request's head (Streamable HTTP, legacy SSE, the WebSocket upgrade).
    HttpRequest {
        /// `POST`, `GET`, `DELETE`.
        method: &'a str,
        /// The URL.
        url: &'a str,
        /// The headers, in order.
        headers: &'a [(String, String)],
    },
    /// An HTTP response's head.
    HttpResponse {
        /// The status code.
        status: u16,
        /// The headers, in order.
        headers: &'a [(String, String)],
    },
    /// The fields of an SSE event besides its data (the data arrives as [`TraceEvent::Received`]
    /// when it is a frame).
    SseEvent {
        /// `event:` (none means `message`).
        event: Option<&'a str>,
        /// `id:`.
        id: Option<&'a str>,
        /// `retry:`, in milliseconds.
        retry: Option<u64>,
    },
}

/// Receives a client's [`TraceEvent`]s, from whichever thread saw them.
pub type TraceFn = Arc<dyn Fn(&TraceEvent<'_>) + Send + Sync>;

/// Header name/value pairs for a trace (values that are not text are shown lossily).
#[cfg(any(feature = "http", feature = "ws"))]
pub(crate) fn header_pairs<'a>(headers: impl IntoIterator<Item = (&'a str, &'a [u8])>) -> Vec<(String, String)> {
    headers.into_iter().map(|(name, value)| (name.to_owned(), String::from_utf8_lossy(value).into_owned())).collect()
}
