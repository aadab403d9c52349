//! Server-Sent Events framing, as used by the MCP Streamable HTTP transport.
//!
//! [`SseDecoder`] interprets a `text/event-stream` body following the WHATWG HTML "server-sent
//! events" parsing rules, with a bound on how much it buffers. [`encode_event`] and
//! [`encode_comment`] write events and keep-alive comments in a fixed, byte-exact layout that the
//! decoder (or any conforming client) reads back unchanged.

use crate::alloc_prelude::*;
mod decode;
mod encode;

pub use decode::{SseDecoder, SseError};
pub use encode::{encode_comment, encode_event};

/// One server-sent event: a type, a data payload, and optionally an id and a retry delay.
///
/// On the decoder side, `id` and `retry` are the fields carried by this event's own block of lines,
/// if any (the connection-wide values are [`SseDecoder::last_event_id`] and
/// [`SseDecoder::reconnection_time`]). On the encoder side, fields that are `None` are not written.
///
/// # Examples
///
/// ```
/// use talaria_core::codec::SseEvent;
///
/// let event = SseEvent::message("{}").with_id("7").with_retry(1000);
/// assert_eq!(event.event_type(), "message");
/// assert_eq!(event.id.as_deref(), Some("7"));
/// assert_eq!(event.retry, Some(1000));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SseEvent {
    /// The event type; `None` means the default type, `"message"`.
    pub event: Option<String>,
    /// The payload; lines of a multi-line payload are joined with `\n`.
    pub data: String,
    /// The event's `id` field, if it carried one.
    pub id: Option<String>,
    /// The event's valid `retry` field (a reconnection delay in milliseconds), if it carried one.
    pub retry: Option<u64>,
}

impl SseEvent {
    /// Creates an event of the default type (`"message"`) with the given data and no id or retry.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::codec::SseEvent;
    ///
    /// let event = SseEvent::message("hello");
    /// assert_eq!(event.data, "hello");
    /// assert_eq!(event.event, None);
    /// ```
    #[must_use]
    pub fn message(data: impl Into<String>) -> Self {
        Self { data: data.into(), ..Self::default() }
    }

    /// Sets the event's id.
    ///
    /// The encoder strips CR, LF and NUL from it, so that it can neither break framing nor be
    /// ignored by the peer.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::codec::SseEvent;
    ///
    /// assert_eq!(SseEvent::message("").with_id("42").id.as_deref(), Some("42"));
    /// ```
    #[must_use]
    pub fn with_id(self, id: impl Into<String>) -> Self {
        Self { id: Some(id.into()), ..self }
    }

    /// Sets the event's type.
    ///
    /// The encoder strips CR and LF from it. An empty type means `"message"`.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::codec::SseEvent;
    ///
    /// assert_eq!(SseEvent::message("").with_event("endpoint").event_type(), "endpoint");
    /// ```
    #[must_use]
    pub fn with_event(self, event: impl Into<String>) -> Self {
        Self { event: Some(event.into()), ..self }
    }

    /// Sets the event's `retry` field: the reconnection delay for the client, in milliseconds.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::codec::SseEvent;
    ///
    /// assert_eq!(SseEvent::message("").with_retry(500).retry, Some(500));
    /// ```
    #[must_use]
    pub fn with_retry(self, ms: u64) -> Self {
        Self { retry: Some(ms), ..self }
    }

    /// Returns the event type: `"message"` when [`event`](Self::event) is `None` or empty.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::codec::SseEvent;
    ///
    /// assert_eq!(SseEvent::message("").event_type(), "message");
    /// assert_eq!(SseEvent::message("").with_event("ping").event_type(), "ping");
    /// ```
    #[must_use]
    pub fn event_type(&self) -> &str {
        match self.event.as_deref() {
            None | Some("") => "message",
            Some(event) => event,
        }
    }
}
