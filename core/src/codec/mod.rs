//! Framing codecs: newline-delimited JSON and Server-Sent Events.
//!
//! Both decoders are sans-IO push parsers: the transport feeds whatever bytes it read with
//! `decode`, receives every complete frame (or event) synchronously through a callback, and calls
//! `finish` once at end of stream. Neither decoder ever fails on incomplete input, and both hold at
//! most a configured number of bytes ([`DEFAULT_MAX_FRAME_LEN`] unless told otherwise), so a peer
//! cannot make them grow without bound. Splitting the input into different chunks never changes the
//! sequence of frames or events produced (only the `len` reported by a too-long error may differ).
//!
//! - [`line`](mod@line): [`LineDecoder`], the stdio framing (one JSON-RPC message per
//!   `\n`-terminated line).
//! - [`sse`]: [`SseDecoder`], [`encode_event`] and [`encode_comment`], the Streamable HTTP
//!   framing, following the WHATWG HTML "server-sent events" parsing rules.
//!
//! # Examples
//!
//! ```
//! use talaria_core::codec::LineDecoder;
//!
//! let mut decoder = LineDecoder::new();
//! let mut frames = Vec::new();
//! decoder.decode(b"{\"a\":1}\n{\"b\"", |frame| frames.push(frame.map(<[u8]>::to_vec)));
//! decoder.decode(b":2}\n", |frame| frames.push(frame.map(<[u8]>::to_vec)));
//! assert_eq!(frames, [Ok(b"{\"a\":1}".to_vec()), Ok(b"{\"b\":2}".to_vec())]);
//! ```

use crate::alloc_prelude::*;
pub mod line;
pub mod sse;

pub use line::{LineDecoder, LineError};
pub use sse::{encode_comment, encode_event, SseDecoder, SseError, SseEvent};

/// Default bound on one frame ([`LineDecoder`]) or one pending event ([`SseDecoder`]): 8 MiB.
///
/// Large enough for big tool results, small enough that a misbehaving peer cannot exhaust memory.
/// Use [`LineDecoder::with_max_frame_len`] or [`SseDecoder::with_max_event_len`] to change it.
///
/// # Examples
///
/// ```
/// use talaria_core::codec::{LineDecoder, DEFAULT_MAX_FRAME_LEN};
///
/// assert_eq!(DEFAULT_MAX_FRAME_LEN, 8 * 1024 * 1024);
/// assert_eq!(LineDecoder::new().max_frame_len(), DEFAULT_MAX_FRAME_LEN);
/// ```
pub const DEFAULT_MAX_FRAME_LEN: usize = 8 * 1024 * 1024;

/// Appends `bytes` to `buf`, growing its capacity geometrically but never beyond `max`.
///
/// The caller has already checked that `buf.len() + bytes.len() <= max`; if it has not, the vector
/// simply grows to what is needed.
fn extend_capped(buf: &mut Vec<u8>, bytes: &[u8], max: usize) {
    let needed = buf.len().saturating_add(bytes.len());
    if needed > buf.capacity() {
        let target = buf.capacity().saturating_mul(2).min(max).max(needed);
        buf.reserve_exact(target - buf.len());
    }
    buf.extend_from_slice(bytes);
}
