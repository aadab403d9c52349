//! The bodies of the cargo-fuzz targets in `fuzz/`, kept in the library so that the checked-in
//! corpus also runs under plain `cargo test` (see `tests/tests/fuzz_corpus.rs`).
//!
//! Each function takes arbitrary bytes, must never panic on its own account, and panics only
//! when an invariant is broken, which is what the fuzzer reports.
//!
//! # Examples
//!
//! ```
//! talaria_core::fuzzing::jsonrpc_decode(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#);
//! talaria_core::fuzzing::line_decode(b"\x05{}\n{\"a\":1}\r\n");
//! talaria_core::fuzzing::sse_decode(b"\x03data: x\n\n");
//! ```
#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

use crate::codec::{LineDecoder, SseDecoder, SseEvent};
use crate::jsonrpc::{DecodeError, Message, Packet};

/// Decodes a frame as a message or batch; whatever decodes must re-encode to a fixed point,
/// and every error must produce a well-formed reply.
pub fn jsonrpc_decode(data: &[u8]) {
    match Packet::from_slice(data) {
        Ok(Packet::Single(msg)) => assert_fixed_point(&msg),
        Ok(Packet::Batch(items)) => {
            assert!(!items.is_empty(), "an empty batch must be an error");
            for item in items {
                match item {
                    Ok(msg) => assert_fixed_point(&msg),
                    Err(e) => assert_reply_is_valid(&e),
                }
            }
        }
        Err(e) => assert_reply_is_valid(&e),
    }
}

/// Splits the input into lines twice, whole and in chunks chosen by the first byte, and checks
/// that both give the same frames and that the buffer never exceeds its limit.
pub fn line_decode(data: &[u8]) {
    let Some((&knob, stream)) = data.split_first() else { return };
    let max = 1 + usize::from(knob % 64);
    let chunk = 1 + usize::from(knob / 64);
    let whole = collect_lines(max, stream, stream.len().max(1));
    let chunked = collect_lines(max, stream, chunk);
    assert_eq!(strip_lens(&whole), strip_lens(&chunked), "line framing depends on chunking");
    for frame in whole.iter().flatten() {
        assert!(frame.len() <= max, "a frame exceeds the limit");
        jsonrpc_decode(frame);
    }
}

/// Decodes the input as an event stream twice, whole and in chunks chosen by the first byte,
/// and checks that both give the same events and that the buffer never exceeds its limit.
pub fn sse_decode(data: &[u8]) {
    let Some((&knob, stream)) = data.split_first() else { return };
    let max = 1 + usize::from(knob % 128);
    let chunk = 1 + usize::from(knob / 128) * 7;
    let whole = collect_events(max, stream, stream.len().max(1));
    let chunked = collect_events(max, stream, chunk);
    assert_eq!(whole, chunked, "event framing depends on chunking");
}

fn assert_fixed_point(msg: &Message) {
    let bytes = msg.to_vec();
    let again = Message::from_slice(&bytes).expect("our own encoding must decode");
    assert_eq!(again.to_vec(), bytes, "encoding is not a fixed point");
}

fn assert_reply_is_valid(err: &DecodeError) {
    if let Some(reply) = err.to_response() {
        let bytes = Message::Error(reply).to_vec();
        assert!(Message::from_slice(&bytes).is_ok(), "our error reply must decode");
    }
}

type Frames = Vec<Option<Vec<u8>>>;

fn collect_lines(max: usize, stream: &[u8], chunk: usize) -> Frames {
    let mut decoder = LineDecoder::with_max_frame_len(max);
    let mut out = Vec::new();
    for piece in stream.chunks(chunk) {
        decoder.decode(piece, |f| out.push(f.ok().map(<[u8]>::to_vec)));
        assert!(decoder.buffered_len() <= max, "line buffer exceeds its limit");
    }
    decoder.finish(|f| out.push(f.ok().map(<[u8]>::to_vec)));
    out
}

/// Errors carry chunking-dependent lengths; compare only where errors happened.
fn strip_lens(frames: &Frames) -> Vec<Option<&[u8]>> {
    frames.iter().map(Option::as_deref).collect()
}

fn collect_events(max: usize, stream: &[u8], chunk: usize) -> Vec<Option<SseEvent>> {
    let mut decoder = SseDecoder::with_max_event_len(max);
    let mut out = Vec::new();
    for piece in stream.chunks(chunk) {
        decoder.decode(piece, |e| out.push(e.ok()));
        assert!(decoder.buffered_len() <= max, "event buffer exceeds its limit");
    }
    decoder.finish(|e| out.push(e.ok()));
    out
}
