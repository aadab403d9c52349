//! The Server-Sent Events decoder: [`SseDecoder`] and its error, [`SseError`].

use crate::alloc_prelude::*;
use alloc::borrow::Cow;
use core::mem;

use memchr::{memchr, memchr2};

use crate::codec::sse::SseEvent;
use crate::codec::{extend_capped, DEFAULT_MAX_FRAME_LEN};

/// The UTF-8 byte order mark, stripped once at the very start of a stream.
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// Parses a Server-Sent Events stream into [`SseEvent`]s, holding at most a configured byte count.
///
/// Call [`decode`](Self::decode) with each chunk of the response body, in order, then
/// [`finish`](Self::finish) at end of stream. The WHATWG rules are applied:
///
/// - Bytes are decoded as UTF-8, line by line, replacing invalid sequences with U+FFFD. One UTF-8
///   byte order mark at the very start of the stream is skipped.
/// - Lines end with CRLF, a lone LF or a lone CR. A CR at the end of one chunk followed by an LF at
///   the start of the next is one line ending, not two.
/// - Lines starting with `:` are comments. Other lines are `name:value` fields, with one leading
///   space removed from the value; a line without a colon is a field with an empty value.
/// - `event` sets the event type, `data` appends its value and a `\n` to the data buffer, `id` sets
///   the event's id unless the value contains NUL, and `retry` sets the reconnection time if the
///   value is only ASCII digits (and fits in a `u64`). Other fields are ignored.
/// - A blank line dispatches: the last event id takes the block's id (if any); then, if the data
///   buffer is empty, nothing is emitted; otherwise one trailing `\n` is removed and the event is
///   emitted. So `data:` followed by a blank line emits an event with empty data.
///
/// Chunking never changes the events produced (only the `len` inside an error may differ).
///
/// # Bound
///
/// The decoder holds at most [`max_event_len`](Self::max_event_len) bytes: the pending line plus
/// the pending event's data, type and id. When a line would take it beyond that, one
/// `Err(`[`SseError::EventTooLong`]`)` is reported, the pending event is dropped (its id does not
/// become the last event id), and every line up to the next blank line is ignored; decoding then
/// resumes with the following event.
///
/// # Examples
///
/// ```
/// use talaria_core::codec::{SseDecoder, SseEvent};
///
/// let mut decoder = SseDecoder::new();
/// let mut events = Vec::new();
/// decoder.decode(b"id: 1\ndata: {\"a\":\r", |event| events.push(event));
/// decoder.decode(b"\ndata: 1}\n\n", |event| events.push(event));
/// assert_eq!(events, [Ok(SseEvent::message("{\"a\":\n1}").with_id("1"))]);
/// assert_eq!(decoder.last_event_id(), "1");
/// ```
#[derive(Debug, Clone)]
pub struct SseDecoder {
    /// Largest number of bytes held at once.
    max: usize,
    /// Progress in skipping a byte order mark at the start of the stream.
    bom: Bom,
    /// The last line ended with a CR at the end of a chunk: a following LF belongs to it.
    skip_lf: bool,
    /// The incomplete line seen so far; never contains CR or LF.
    line: Vec<u8>,
    /// An over-long event was reported; lines are ignored up to the next blank line.
    discarding: bool,
    /// While discarding: the current line has at least one byte, so it is not blank.
    discarded_line: bool,
    /// The WHATWG event type buffer.
    event_type: String,
    /// The WHATWG data buffer.
    data: String,
    /// The `id` field of the current block, if any.
    id: Option<String>,
    /// The valid `retry` field of the current block, if any.
    retry: Option<u64>,
    /// The WHATWG last event id string.
    last_event_id: String,
    /// The last valid `retry` value, in milliseconds.
    reconnection_time: Option<u64>,
}

/// Errors reported by [`SseDecoder`] for one event; decoding continues after them.
///
/// # Examples
///
/// ```
/// use talaria_core::codec::{SseDecoder, SseError};
///
/// let mut results = Vec::new();
/// let mut decoder = SseDecoder::with_max_event_len(8);
/// decoder.decode(b"data: 0123456789\n\ndata: ok\n\n", |event| results.push(event));
/// assert_eq!(results.len(), 2);
/// assert_eq!(results[0], Err(SseError::EventTooLong { len: 16, max: 8 }));
/// assert_eq!(results[1].as_ref().map(|event| event.data.as_str()), Ok("ok"));
/// ```
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SseError {
    /// The peer sent an event (or a line) larger than the configured maximum; it was dropped, and
    /// the decoder resynchronised at the next blank line.
    #[error("event of at least {len} bytes exceeds the limit of {max} bytes")]
    EventTooLong {
        /// Bytes of the event seen when it was given up: at least `max + 1`. It depends on how the
        /// input was chunked, since the event is given up as soon as it crosses the limit.
        len: usize,
        /// The configured maximum event length.
        max: usize,
    },
}

/// Progress in skipping the optional byte order mark.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Bom {
    /// Still at the start of the stream, with this many bytes of the mark matched (and held back).
    Matching(usize),
    /// Past the start of the stream.
    Done,
}

impl SseDecoder {
    /// Creates a decoder holding at most [`DEFAULT_MAX_FRAME_LEN`] bytes of one event.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::codec::{SseDecoder, DEFAULT_MAX_FRAME_LEN};
    ///
    /// assert_eq!(SseDecoder::new().max_event_len(), DEFAULT_MAX_FRAME_LEN);
    /// ```
    #[must_use]
    pub fn new() -> Self {
        Self::with_max_event_len(DEFAULT_MAX_FRAME_LEN)
    }

    /// Creates a decoder holding at most `max` bytes of one event (pending line plus event fields).
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::codec::SseDecoder;
    ///
    /// let mut decoder = SseDecoder::with_max_event_len(16);
    /// let mut results = Vec::new();
    /// decoder.decode(b"data: this is far too long\n\n", |event| results.push(event.is_ok()));
    /// assert_eq!(results, [false]);
    /// ```
    #[must_use]
    pub fn with_max_event_len(max: usize) -> Self {
        Self {
            max,
            bom: Bom::Matching(0),
            skip_lf: false,
            line: Vec::new(),
            discarding: false,
            discarded_line: false,
            event_type: String::new(),
            data: String::new(),
            id: None,
            retry: None,
            last_event_id: String::new(),
            reconnection_time: None,
        }
    }

    /// Returns the largest number of bytes held for one event.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::codec::SseDecoder;
    ///
    /// assert_eq!(SseDecoder::with_max_event_len(4096).max_event_len(), 4096);
    /// ```
    #[must_use]
    pub fn max_event_len(&self) -> usize {
        self.max
    }

    /// Returns the WHATWG "last event ID": the id of the latest dispatched block that had one.
    ///
    /// It persists across events, survives [`finish`](Self::finish), and is what a client sends
    /// as `Last-Event-ID` when it reconnects. An `id` field with an empty value resets it to `""`.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::codec::SseDecoder;
    ///
    /// let mut decoder = SseDecoder::new();
    /// decoder.decode(b"id: 5\ndata: a\n\ndata: b\n\n", |_| {});
    /// assert_eq!(decoder.last_event_id(), "5");
    /// ```
    #[must_use]
    pub fn last_event_id(&self) -> &str {
        &self.last_event_id
    }

    /// Returns the reconnection time from the last valid `retry` field, in milliseconds.
    ///
    /// It takes effect as soon as the field is read (even if its event is never dispatched) and
    /// survives [`finish`](Self::finish).
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::codec::SseDecoder;
    ///
    /// let mut decoder = SseDecoder::new();
    /// assert_eq!(decoder.reconnection_time(), None);
    /// decoder.decode(b"retry: 3000\nretry: soon\n", |_| {});
    /// assert_eq!(decoder.reconnection_time(), Some(3000));
    /// ```
    #[must_use]
    pub fn reconnection_time(&self) -> Option<u64> {
        self.reconnection_time
    }

    /// Returns how many bytes are held for the pending event; never more than
    /// [`max_event_len`](Self::max_event_len).
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::codec::SseDecoder;
    ///
    /// let mut decoder = SseDecoder::new();
    /// decoder.decode(b"data: abc\nda", |_| {});
    /// assert_eq!(decoder.buffered_len(), 6); // "abc\n" and "da"
    /// ```
    #[must_use]
    pub fn buffered_len(&self) -> usize {
        self.line.len() + self.event_len()
    }

    /// Feeds the next `chunk` of the stream, calling `on_event` per dispatched event, in order.
    ///
    /// # Errors
    ///
    /// Errors are passed to `on_event` rather than returned, one per offending event, and decoding
    /// continues: [`SseError::EventTooLong`] when an event exceeds
    /// [`max_event_len`](Self::max_event_len).
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::codec::{SseDecoder, SseEvent};
    ///
    /// let mut decoder = SseDecoder::new();
    /// let mut events = Vec::new();
    /// decoder.decode(b": keep-alive\n\nevent: ping\ndata\n\n", |event| events.push(event));
    /// assert_eq!(events, [Ok(SseEvent::message("").with_event("ping"))]);
    /// ```
    pub fn decode(&mut self, chunk: &[u8], mut on_event: impl FnMut(Result<SseEvent, SseError>)) {
        let mut rest = chunk;
        if let Bom::Matching(mut matched) = self.bom {
            loop {
                let Some((&byte, tail)) = rest.split_first() else {
                    self.bom = Bom::Matching(matched);
                    return;
                };
                if BOM.get(matched) != Some(&byte) {
                    // Not a byte order mark after all: the bytes held back are ordinary input.
                    self.bom = Bom::Done;
                    self.feed(BOM.get(..matched).unwrap_or_default(), &mut on_event);
                    break;
                }
                matched += 1;
                rest = tail;
                if matched == BOM.len() {
                    self.bom = Bom::Done;
                    break;
                }
            }
        }
        self.feed(rest, &mut on_event);
    }

    /// Ends the stream: discards an incomplete event, then resets the decoder for a new stream.
    ///
    /// Per WHATWG, an event not yet terminated by a blank line at end of stream is not dispatched,
    /// and neither is an unterminated last line processed. [`last_event_id`](Self::last_event_id)
    /// and [`reconnection_time`](Self::reconnection_time) are kept, since a client needs them to
    /// reconnect; everything else returns to its initial state (a byte order mark is again skipped
    /// at the start of the next stream).
    ///
    /// # Errors
    ///
    /// None: under the WHATWG rules the end of the stream produces no event and no error, so
    /// `_on_event` is never called. It has the same type as for [`decode`](Self::decode) so that
    /// transports can treat this decoder and [`LineDecoder`](crate::codec::LineDecoder) alike.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::codec::SseDecoder;
    ///
    /// let mut decoder = SseDecoder::new();
    /// let mut events = Vec::new();
    /// decoder.decode(b"id: 1\ndata: complete\n\nid: 2\ndata: cut off\n", |e| events.push(e));
    /// decoder.finish(|e| events.push(e));
    /// assert_eq!(events.len(), 1);
    /// assert_eq!(decoder.last_event_id(), "1");
    /// assert_eq!(decoder.buffered_len(), 0);
    /// ```
    pub fn finish(&mut self, _on_event: impl FnMut(Result<SseEvent, SseError>)) {
        self.bom = Bom::Matching(0);
        self.skip_lf = false;
        self.line.clear();
        self.discarding = false;
        self.discarded_line = false;
        self.clear_event();
    }

    /// Splits `bytes` (with any byte order mark already removed) into lines and processes them.
    fn feed(&mut self, bytes: &[u8], on_event: &mut impl FnMut(Result<SseEvent, SseError>)) {
        let mut rest = bytes;
        if self.skip_lf && !rest.is_empty() {
            self.skip_lf = false;
            rest = rest.strip_prefix(b"\n").unwrap_or(rest);
        }
        while let Some(end) = memchr2(b'\n', b'\r', rest) {
            let (tail, ending) = rest.split_at(end);
            let ending_len = match ending {
                [b'\r', b'\n', ..] => 2,
                [b'\r'] => {
                    self.skip_lf = true;
                    1
                }
                _ => 1,
            };
            self.complete_line(tail, on_event);
            rest = ending.get(ending_len..).unwrap_or_default();
        }
        self.partial_line(rest, on_event);
    }

    /// Handles the end of a line whose last bytes are `tail` (the rest is in `self.line`).
    fn complete_line(&mut self, tail: &[u8], on_event: &mut impl FnMut(Result<SseEvent, SseError>)) {
        if self.discarding {
            if !self.discarded_line && tail.is_empty() {
                self.discarding = false;
            }
            self.discarded_line = false;
            return;
        }
        let len = self.buffered_len() + tail.len();
        if len > self.max {
            self.overflow(len, on_event);
            return;
        }
        if self.line.is_empty() {
            self.process_line(tail, on_event);
        } else {
            let mut line = mem::take(&mut self.line);
            extend_capped(&mut line, tail, self.max);
            self.process_line(&line, on_event);
            line.clear();
            self.line = line;
        }
    }

    /// Buffers `bytes`, the unterminated end of a chunk, unless the event would grow too large.
    fn partial_line(&mut self, bytes: &[u8], on_event: &mut impl FnMut(Result<SseEvent, SseError>)) {
        if bytes.is_empty() {
            return;
        }
        if self.discarding {
            self.discarded_line = true;
            return;
        }
        let len = self.buffered_len() + bytes.len();
        if len > self.max {
            self.overflow(len, on_event);
            self.discarded_line = true;
            return;
        }
        extend_capped(&mut self.line, bytes, self.max);
    }

    /// Interprets one complete line (without its ending) as a blank line, comment or field.
    fn process_line(&mut self, line: &[u8], on_event: &mut impl FnMut(Result<SseEvent, SseError>)) {
        if line.is_empty() {
            self.dispatch(on_event);
            return;
        }
        let (name, value) = match memchr(b':', line) {
            Some(0) => return,
            Some(colon) => {
                let (name, value) = line.split_at(colon);
                let value = value.get(1..).unwrap_or_default();
                (name, value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (line, &[][..]),
        };
        match name {
            b"event" => {
                self.event_type.clear();
                self.event_type.push_str(&lossy(value));
            }
            b"data" => {
                self.data.push_str(&lossy(value));
                self.data.push('\n');
            }
            b"id" if memchr(0, value).is_none() => self.id = Some(lossy(value).into_owned()),
            b"retry" => {
                if let Some(ms) = parse_retry(value) {
                    self.retry = Some(ms);
                    self.reconnection_time = Some(ms);
                }
            }
            _ => {}
        }
        let len = self.event_len();
        if len > self.max {
            self.overflow(len, on_event);
        }
    }

    /// Handles a blank line: updates the last event id and emits the pending event, if it has data.
    fn dispatch(&mut self, on_event: &mut impl FnMut(Result<SseEvent, SseError>)) {
        let id = self.id.take();
        if let Some(id) = &id {
            self.last_event_id.clone_from(id);
        }
        let retry = self.retry.take();
        let event_type = mem::take(&mut self.event_type);
        if self.data.is_empty() {
            return;
        }
        let mut data = mem::take(&mut self.data);
        if data.ends_with('\n') {
            data.pop();
        }
        on_event(Ok(SseEvent { event: (!event_type.is_empty()).then_some(event_type), data, id, retry }));
    }

    /// Reports an event that grew to `len` bytes, drops it and ignores lines up to a blank one.
    fn overflow(&mut self, len: usize, on_event: &mut impl FnMut(Result<SseEvent, SseError>)) {
        self.line.clear();
        self.clear_event();
        self.discarding = true;
        self.discarded_line = false;
        on_event(Err(SseError::EventTooLong { len, max: self.max }));
    }

    /// Forgets the fields of the pending event.
    fn clear_event(&mut self) {
        self.event_type.clear();
        self.data.clear();
        self.id = None;
        self.retry = None;
    }

    /// Bytes held by the pending event's fields.
    fn event_len(&self) -> usize {
        self.data.len() + self.event_type.len() + self.id.as_ref().map_or(0, String::len)
    }
}

impl Default for SseDecoder {
    /// Same as [`SseDecoder::new`].
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::codec::{SseDecoder, DEFAULT_MAX_FRAME_LEN};
    ///
    /// assert_eq!(SseDecoder::default().max_event_len(), DEFAULT_MAX_FRAME_LEN);
    /// ```
    fn default() -> Self {
        Self::new()
    }
}

/// Decodes a field name or value as UTF-8, replacing invalid sequences with U+FFFD.
fn lossy(bytes: &[u8]) -> Cow<'_, str> {
    String::from_utf8_lossy(bytes)
}

/// Parses a `retry` value: one or more ASCII digits fitting in a `u64`, else `None`.
fn parse_retry(value: &[u8]) -> Option<u64> {
    if value.is_empty() {
        return None;
    }
    value.iter().try_fold(0_u64, |ms, byte| {
        let digit = byte.is_ascii_digit().then(|| u64::from(byte - b'0'))?;
        ms.checked_mul(10)?.checked_add(digit)
    })
}

#[cfg(test)]
pub(super) mod tests;
