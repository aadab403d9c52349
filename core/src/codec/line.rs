//! Newline-delimited framing, as used by the MCP stdio transport.
//!
//! Each message is one line terminated by `\n`; a `\r` just before the `\n` is tolerated and
//! stripped, and blank lines are skipped. [`LineDecoder`] hands out each line as a byte slice and
//! bounds how much it buffers; see its documentation for the exact rules.

use crate::alloc_prelude::*;
use memchr::{memchr, memchr_iter};

use crate::codec::{extend_capped, DEFAULT_MAX_FRAME_LEN};

/// Splits a byte stream into `\n`-terminated frames, holding at most a configured number of bytes.
///
/// Call [`decode`](Self::decode) with each chunk read from the peer, in order, then
/// [`finish`](Self::finish) once at end of stream. Every complete line is passed to the callback
/// synchronously, in stream order, as a slice that excludes the line ending:
///
/// - A line ends at `\n`; one `\r` immediately before it is stripped too (CRLF is tolerated).
/// - Lines that are empty or hold only spaces, tabs and carriage returns are skipped without a
///   callback.
/// - Frames are bytes: the decoder does not check UTF-8 (or JSON). Invalid UTF-8 inside a frame is
///   reported by the JSON parser for that frame only, and NUL bytes pass through unchanged.
/// - Incomplete input is not an error: the unterminated tail is kept for the next call.
///
/// # Bound
///
/// The decoder never holds more than [`max_frame_len`](Self::max_frame_len) bytes. When a line
/// grows beyond that many bytes (not counting its line ending), the buffered part is dropped, one
/// `Err(`[`LineError::FrameTooLong`]`)` is reported as soon as the limit is crossed (without
/// waiting for the newline), and the rest of that line, up to and including the next `\n`, is
/// discarded; decoding then resumes with the following line. A line of exactly `max_frame_len`
/// bytes is accepted. The limit applies before blank lines are recognised, so an over-long line
/// of spaces is still an error.
///
/// # Performance
///
/// Lines are found with `memchr`. When a whole line lies inside the chunk and nothing is buffered,
/// the callback receives a slice of the chunk itself; only an unterminated tail is copied. Buffered
/// bytes are never scanned twice and never moved.
///
/// # Examples
///
/// ```
/// use talaria_core::codec::{LineDecoder, LineError};
///
/// let mut decoder = LineDecoder::with_max_frame_len(8);
/// let mut frames = Vec::new();
/// let mut push = |frame: Result<&[u8], LineError>| frames.push(frame.map(<[u8]>::to_vec));
/// decoder.decode(b"one\r\n\n  \ntoo long line\ntw", &mut push);
/// decoder.decode(b"o\n", &mut push);
/// assert_eq!(
///     frames,
///     [
///         Ok(b"one".to_vec()),
///         Err(LineError::FrameTooLong { len: 13, max: 8 }),
///         Ok(b"two".to_vec()),
///     ]
/// );
/// ```
#[derive(Debug, Clone)]
pub struct LineDecoder {
    /// Largest accepted frame, in bytes, excluding the line ending.
    max: usize,
    /// The incomplete line seen so far, without a final `\r` (see `pending_cr`); never holds `\n`.
    buf: Vec<u8>,
    /// The incomplete line also ends with one `\r` not stored in `buf`: it is either part of the
    /// line or the start of a CRLF, and only the next byte tells, so it does not count yet.
    pending_cr: bool,
    /// A too-long line was reported; input is dropped up to and including the next `\n`.
    discarding: bool,
}

/// Errors reported by [`LineDecoder`] for one frame; decoding continues after them.
///
/// # Examples
///
/// ```
/// use talaria_core::codec::{LineDecoder, LineError};
///
/// let mut errors = Vec::new();
/// LineDecoder::with_max_frame_len(2).decode(b"abc\n", |frame| {
///     if let Err(error) = frame {
///         errors.push(error);
///     }
/// });
/// assert_eq!(errors, [LineError::FrameTooLong { len: 3, max: 2 }]);
/// ```
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LineError {
    /// The peer sent a line longer than the configured maximum; it was dropped, and the decoder
    /// resynchronised at the next newline.
    #[error("frame of at least {len} bytes exceeds the limit of {max} bytes")]
    FrameTooLong {
        /// Bytes of the line seen when it was given up: at least `max + 1`. It depends on how the
        /// input was chunked, since the line is given up as soon as it crosses the limit.
        len: usize,
        /// The configured maximum frame length.
        max: usize,
    },
}

impl LineDecoder {
    /// Creates a decoder accepting frames of up to [`DEFAULT_MAX_FRAME_LEN`] bytes.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::codec::{LineDecoder, DEFAULT_MAX_FRAME_LEN};
    ///
    /// let decoder = LineDecoder::new();
    /// assert_eq!(decoder.max_frame_len(), DEFAULT_MAX_FRAME_LEN);
    /// assert_eq!(decoder.buffered_len(), 0);
    /// ```
    #[must_use]
    pub fn new() -> Self {
        Self::with_max_frame_len(DEFAULT_MAX_FRAME_LEN)
    }

    /// Creates a decoder accepting frames of up to `max` bytes, not counting the line ending.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::codec::LineDecoder;
    ///
    /// let mut decoder = LineDecoder::with_max_frame_len(3);
    /// let mut ok = Vec::new();
    /// decoder.decode(b"abc\r\n", |frame| ok.push(frame.is_ok()));
    /// assert_eq!(ok, [true]);
    /// ```
    #[must_use]
    pub fn with_max_frame_len(max: usize) -> Self {
        Self { max, buf: Vec::new(), pending_cr: false, discarding: false }
    }

    /// Returns the largest frame length accepted, in bytes, excluding the line ending.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::codec::LineDecoder;
    ///
    /// assert_eq!(LineDecoder::with_max_frame_len(1024).max_frame_len(), 1024);
    /// ```
    #[must_use]
    pub fn max_frame_len(&self) -> usize {
        self.max
    }

    /// Returns how many bytes are held for an incomplete line; never more than
    /// [`max_frame_len`](Self::max_frame_len).
    ///
    /// A final `\r`, which may turn out to be half of a CRLF, is remembered rather than buffered,
    /// and is not counted.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::codec::LineDecoder;
    ///
    /// let mut decoder = LineDecoder::new();
    /// decoder.decode(b"{}\n{\"jsonrpc\"", |_| {});
    /// assert_eq!(decoder.buffered_len(), 10);
    /// ```
    #[must_use]
    pub fn buffered_len(&self) -> usize {
        self.buf.len()
    }

    /// Feeds the next `chunk` of the stream, calling `on_frame` once per complete line, in order.
    ///
    /// The frame slice excludes the line ending and is only valid during the callback. Blank lines
    /// produce no call. An unterminated tail is kept for the next call (or for
    /// [`finish`](Self::finish)).
    ///
    /// # Errors
    ///
    /// Errors are passed to `on_frame` rather than returned, one per offending line, and decoding
    /// continues: [`LineError::FrameTooLong`] when a line exceeds
    /// [`max_frame_len`](Self::max_frame_len).
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::codec::LineDecoder;
    ///
    /// let mut decoder = LineDecoder::new();
    /// let mut frames = Vec::new();
    /// decoder.decode(b"{\"id\":1}\n{\"id\"", |frame| frames.push(frame.map(<[u8]>::to_vec)));
    /// assert_eq!(frames, [Ok(b"{\"id\":1}".to_vec())]);
    /// decoder.decode(b":2}\n", |frame| frames.push(frame.map(<[u8]>::to_vec)));
    /// assert_eq!(frames[1], Ok(b"{\"id\":2}".to_vec()));
    /// ```
    pub fn decode(&mut self, chunk: &[u8], mut on_frame: impl FnMut(Result<&[u8], LineError>)) {
        let mut rest = chunk;
        if self.discarding {
            let Some(end) = memchr(b'\n', rest) else {
                return;
            };
            self.discarding = false;
            rest = &rest[end + 1..];
        }
        if self.has_pending() {
            let Some(end) = memchr(b'\n', rest) else {
                self.push_partial(rest, &mut on_frame);
                return;
            };
            match self.append(&rest[..end]) {
                Ok(()) => emit_if_not_blank(&self.buf, &mut on_frame),
                Err(error) => on_frame(Err(error)),
            }
            self.reset();
            rest = &rest[end + 1..];
        }
        let mut start = 0;
        for end in memchr_iter(b'\n', rest) {
            let line = &rest[start..end];
            let frame = line.strip_suffix(b"\r").unwrap_or(line);
            if frame.len() > self.max {
                on_frame(Err(LineError::FrameTooLong { len: frame.len(), max: self.max }));
            } else {
                emit_if_not_blank(frame, &mut on_frame);
            }
            start = end + 1;
        }
        self.push_partial(&rest[start..], &mut on_frame);
    }

    /// Ends the stream: delivers a final line that lacks its newline, then resets the decoder.
    ///
    /// This is lenient on purpose: a peer that exits after writing its last message without a
    /// trailing newline still gets that message through. The final line follows the same rules as
    /// any other (a trailing `\r` is stripped, blank lines are skipped). A line that was being
    /// discarded as too long was already reported and produces nothing. Afterwards the decoder is
    /// empty and can be reused for a new stream.
    ///
    /// # Errors
    ///
    /// None in practice: an over-long final line is reported by [`decode`](Self::decode) as soon
    /// as it crosses the limit. The callback has the same type as for `decode` so both can share
    /// it.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::codec::LineDecoder;
    ///
    /// let mut decoder = LineDecoder::new();
    /// let mut frames = Vec::new();
    /// decoder.decode(b"{\"id\":1}", |frame| frames.push(frame.map(<[u8]>::to_vec)));
    /// assert!(frames.is_empty());
    /// decoder.finish(|frame| frames.push(frame.map(<[u8]>::to_vec)));
    /// assert_eq!(frames, [Ok(b"{\"id\":1}".to_vec())]);
    /// assert_eq!(decoder.buffered_len(), 0);
    /// ```
    pub fn finish(&mut self, mut on_frame: impl FnMut(Result<&[u8], LineError>)) {
        if !self.discarding {
            emit_if_not_blank(&self.buf, &mut on_frame);
        }
        self.reset();
        self.discarding = false;
    }

    /// Returns whether part of a line is buffered.
    fn has_pending(&self) -> bool {
        !self.buf.is_empty() || self.pending_cr
    }

    /// Buffers `tail`, the unterminated end of a chunk, reporting and discarding an over-long line.
    fn push_partial(&mut self, tail: &[u8], on_frame: &mut impl FnMut(Result<&[u8], LineError>)) {
        if let Err(error) = self.append(tail) {
            self.reset();
            self.discarding = true;
            on_frame(Err(error));
        }
    }

    /// Appends `bytes` (which hold no `\n`) to the pending line, unless it would exceed the limit.
    ///
    /// A final `\r` is held back in `pending_cr`, since it may be the first half of a CRLF.
    fn append(&mut self, bytes: &[u8]) -> Result<(), LineError> {
        let (body, cr) = match bytes.strip_suffix(b"\r") {
            Some(body) => (body, true),
            None if bytes.is_empty() => return Ok(()),
            None => (bytes, false),
        };
        let len = self.buf.len() + usize::from(self.pending_cr) + body.len();
        if len > self.max {
            return Err(LineError::FrameTooLong { len: len + usize::from(cr), max: self.max });
        }
        if self.pending_cr {
            extend_capped(&mut self.buf, b"\r", self.max);
        }
        extend_capped(&mut self.buf, body, self.max);
        self.pending_cr = cr;
        Ok(())
    }

    /// Forgets the pending line, keeping the buffer's allocation.
    fn reset(&mut self) {
        self.buf.clear();
        self.pending_cr = false;
    }
}

impl Default for LineDecoder {
    /// Same as [`LineDecoder::new`].
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::codec::{LineDecoder, DEFAULT_MAX_FRAME_LEN};
    ///
    /// assert_eq!(LineDecoder::default().max_frame_len(), DEFAULT_MAX_FRAME_LEN);
    /// ```
    fn default() -> Self {
        Self::new()
    }
}

/// Passes `frame` to `on_frame` unless it is empty or only spaces, tabs and carriage returns.
fn emit_if_not_blank(frame: &[u8], on_frame: &mut impl FnMut(Result<&[u8], LineError>)) {
    if !frame.iter().all(|byte| matches!(byte, b' ' | b'\t' | b'\r')) {
        on_frame(Ok(frame));
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// A frame as collected by the tests; error lengths depend on chunking, so they are dropped.
    #[derive(Debug, Clone, PartialEq, Eq)]
    enum Item {
        Frame(Vec<u8>),
        TooLong,
    }

    fn collect_into(items: &mut Vec<Item>) -> impl FnMut(Result<&[u8], LineError>) + '_ {
        |frame| {
            items.push(match frame {
                Ok(bytes) => Item::Frame(bytes.to_vec()),
                Err(LineError::FrameTooLong { .. }) => Item::TooLong,
            });
        }
    }

    /// Decodes `chunks` in order then finishes, checking the bound after every call.
    fn run(max: usize, chunks: &[&[u8]]) -> Vec<Item> {
        let mut decoder = LineDecoder::with_max_frame_len(max);
        let mut items = Vec::new();
        for chunk in chunks {
            decoder.decode(chunk, collect_into(&mut items));
            assert!(decoder.buffered_len() <= max, "{} > {max}", decoder.buffered_len());
        }
        decoder.finish(collect_into(&mut items));
        assert_eq!(decoder.buffered_len(), 0);
        items
    }

    fn frame(bytes: &[u8]) -> Item {
        Item::Frame(bytes.to_vec())
    }

    fn bytewise(stream: &[u8]) -> Vec<&[u8]> {
        stream.chunks(1).collect()
    }

    #[test]
    fn splits_on_lf_and_strips_one_cr() {
        let items = run(64, &[b"a\nb\r\nc\r\r\n"]);
        assert_eq!(items, [frame(b"a"), frame(b"b"), frame(b"c\r")]);
    }

    #[test]
    fn skips_blank_and_whitespace_lines() {
        let items = run(64, &[b"\n\r\n \t \r\n{}\n\n  x \n"]);
        assert_eq!(items, [frame(b"{}"), frame(b"  x ")]);
    }

    #[test]
    fn keeps_partial_lines_across_calls() {
        let mut decoder = LineDecoder::with_max_frame_len(64);
        let mut items = Vec::new();
        decoder.decode(b"{\"a\"", collect_into(&mut items));
        assert!(items.is_empty());
        assert_eq!(decoder.buffered_len(), 4);
        decoder.decode(b":1}\r", collect_into(&mut items));
        assert!(items.is_empty());
        decoder.decode(b"\n{", collect_into(&mut items));
        assert_eq!(items, [frame(b"{\"a\":1}")]);
        assert_eq!(decoder.buffered_len(), 1);
    }

    #[test]
    fn fast_path_lines_are_slices_of_the_chunk() {
        let chunk = b"abc\ndef\n";
        let mut decoder = LineDecoder::new();
        let mut pointers = Vec::new();
        decoder.decode(chunk, |frame| pointers.push(frame.unwrap().as_ptr()));
        assert_eq!(pointers, [chunk.as_ptr(), chunk[4..].as_ptr()]);
    }

    #[test]
    fn finish_delivers_unterminated_line_and_resets() {
        let items = run(64, &[b"x\ny"]);
        assert_eq!(items, [frame(b"x"), frame(b"y")]);
        assert_eq!(run(64, &[b"y\r"]), [frame(b"y")]);
        assert_eq!(run(64, &[b"x\n  "]), [frame(b"x")]);
    }

    #[test]
    fn finish_after_overflow_delivers_nothing() {
        assert_eq!(run(2, &[b"abc"]), [Item::TooLong]);
        let mut decoder = LineDecoder::with_max_frame_len(2);
        decoder.decode(b"abc", |_| {});
        decoder.finish(|_| {});
        let mut items = Vec::new();
        decoder.decode(b"ok\n", collect_into(&mut items));
        assert_eq!(items, [frame(b"ok")], "finish must end discard mode");
    }

    #[test]
    fn exactly_max_is_accepted() {
        let line = [b'x'; 8];
        let mut stream = line.to_vec();
        stream.extend_from_slice(b"\r\n");
        assert_eq!(run(8, &[&stream]), [frame(&line)]);
        assert_eq!(run(8, &bytewise(&stream)), [frame(&line)]);
        assert_eq!(run(8, &[&line]), [frame(&line)]);
    }

    #[test]
    fn max_plus_one_is_rejected_then_resyncs() {
        let stream = b"123456789\r\nok\n";
        let expected = [Item::TooLong, frame(b"ok")];
        assert_eq!(run(8, &[stream]), expected);
        assert_eq!(run(8, &bytewise(stream)), expected);
        assert_eq!(run(8, &[b"1234", b"56789abc", b"def\nok\n"]), expected);
    }

    #[test]
    fn error_reports_lengths() {
        let mut errors = Vec::new();
        let mut decoder = LineDecoder::with_max_frame_len(4);
        let mut push = |frame: Result<&[u8], LineError>| errors.extend(frame.err());
        decoder.decode(b"1234567\n", &mut push);
        decoder.decode(b"123", &mut push);
        decoder.decode(b"45\r6", &mut push);
        assert_eq!(errors, [LineError::FrameTooLong { len: 7, max: 4 }, LineError::FrameTooLong { len: 7, max: 4 },]);
        assert_eq!(errors[0].to_string(), "frame of at least 7 bytes exceeds the limit of 4 bytes");
    }

    #[test]
    fn huge_line_without_newline_yields_one_error_and_stays_bounded() {
        let max = 1024 * 1024;
        let mut decoder = LineDecoder::with_max_frame_len(max);
        let chunk = vec![b'a'; 1024 * 1024];
        let mut items = Vec::new();
        for _ in 0..100 {
            decoder.decode(&chunk, collect_into(&mut items));
            assert!(decoder.buffered_len() <= max);
        }
        assert_eq!(items, [Item::TooLong]);
        decoder.decode(b"aaa\n{}\n", collect_into(&mut items));
        assert_eq!(items, [Item::TooLong, frame(b"{}")]);
        assert!(decoder.buf.capacity() <= max);
    }

    #[test]
    fn nul_and_invalid_utf8_pass_through() {
        let items = run(64, &[b"a\0b\n\xff\xfe\n"]);
        assert_eq!(items, [frame(b"a\0b"), frame(b"\xff\xfe")]);
    }

    #[test]
    fn default_is_new() {
        assert_eq!(LineDecoder::default().max_frame_len(), DEFAULT_MAX_FRAME_LEN);
    }

    /// Splits `stream` at the given cut points (taken modulo its length).
    fn chunked<'a>(stream: &'a [u8], cuts: &[usize]) -> Vec<&'a [u8]> {
        let mut cuts: Vec<usize> = cuts.iter().map(|cut| cut % (stream.len() + 1)).collect();
        cuts.sort_unstable();
        let mut chunks = Vec::new();
        let mut start = 0;
        for cut in cuts {
            chunks.push(&stream[start..cut]);
            start = cut;
        }
        chunks.push(&stream[start..]);
        chunks
    }

    fn line_stream() -> impl Strategy<Value = Vec<u8>> {
        let line = prop_oneof![
            "[ -~]{0,80}".prop_map(String::into_bytes),
            r#"\{"jsonrpc":"2\.0","id":[0-9]{1,5},"method":"[a-z/]{1,20}"\}"#.prop_map(String::into_bytes),
            "[ \t\r]{0,4}".prop_map(String::into_bytes),
        ];
        let ending = prop_oneof![Just(&b"\n"[..]), Just(&b"\r\n"[..])];
        prop::collection::vec((line, ending), 0..12).prop_map(|lines| {
            lines
                .into_iter()
                .flat_map(|(mut line, ending)| {
                    line.extend_from_slice(ending);
                    line
                })
                .collect()
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn arbitrary_bytes_are_chunking_invariant(
            stream in prop::collection::vec(
                prop_oneof![Just(b'\n'), Just(b'\r'), Just(b' '), any::<u8>()], 0..400),
            cuts in prop::collection::vec(any::<usize>(), 0..20),
        ) {
            let whole = run(64, &[&stream]);
            prop_assert_eq!(&whole, &run(64, &chunked(&stream, &cuts)));
            prop_assert_eq!(&whole, &run(64, &bytewise(&stream)));
        }

        #[test]
        fn json_lines_are_chunking_invariant(
            stream in line_stream(),
            cuts in prop::collection::vec(any::<usize>(), 0..20),
        ) {
            let whole = run(64, &[&stream]);
            prop_assert_eq!(&whole, &run(64, &chunked(&stream, &cuts)));
            prop_assert_eq!(&whole, &run(64, &bytewise(&stream)));
        }

        #[test]
        fn frames_never_contain_line_endings_or_exceed_max(stream in line_stream()) {
            for item in run(64, &[&stream]) {
                if let Item::Frame(bytes) = item {
                    prop_assert!(bytes.len() <= 64);
                    prop_assert!(!bytes.contains(&b'\n'));
                    prop_assert!(!bytes.ends_with(b"\r"));
                }
            }
        }
    }
}
