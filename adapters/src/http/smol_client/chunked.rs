//! Decoding an HTTP/1.1 `Transfer-Encoding: chunked` body incrementally, whatever the reads'
//! boundaries (an SSE reply arrives a chunk at a time and must be handed on as it comes).

/// Why a chunked body cannot be decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub(crate) enum ChunkError {
    /// A chunk size that is not hexadecimal, or too large.
    #[error("malformed chunk size")]
    BadSize,
    /// A chunk's data not followed by a line end.
    #[error("chunk data not followed by CRLF")]
    BadChunkEnd,
    /// A chunk-size line or trailer longer than any sane one.
    #[error("chunk line too long")]
    LineTooLong,
}

/// The longest chunk extension or trailer line accepted.
const MAX_LINE: usize = 8 * 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Reading a chunk size (`digits` so far).
    Size { size: u64, digits: u8 },
    /// Skipping a chunk extension, to the end of the size line.
    Extension { size: u64, skipped: usize },
    /// Copying a chunk's data.
    Data(u64),
    /// After a chunk's data: its CRLF.
    DataEnd { seen_cr: bool },
    /// After the last chunk: trailer lines until an empty one.
    Trailer { line: usize },
    /// The body is complete.
    Done,
}

/// An incremental chunked-body decoder.
#[derive(Debug, Clone)]
pub(crate) struct ChunkedDecoder {
    state: State,
}

impl ChunkedDecoder {
    pub(crate) const fn new() -> Self {
        Self { state: State::Size { size: 0, digits: 0 } }
    }

    /// Whether the body's last chunk and trailer have been read.
    pub(crate) fn is_done(&self) -> bool {
        self.state == State::Done
    }

    /// Decodes from `input`, appending data to `out`; returns how many bytes of `input` it
    /// used (fewer than all only once the body is done: the rest is the next response's).
    pub(crate) fn decode(&mut self, input: &[u8], out: &mut Vec<u8>) -> Result<usize, ChunkError> {
        let mut at = 0;
        while at < input.len() {
            match &mut self.state {
                State::Done => break,
                State::Data(left) => {
                    let take = usize::try_from(*left).unwrap_or(usize::MAX).min(input.len() - at);
                    out.extend_from_slice(&input[at..at + take]);
                    at += take;
                    *left -= take as u64;
                    if *left == 0 {
                        self.state = State::DataEnd { seen_cr: false };
                    }
                }
                state => {
                    let byte = input[at];
                    at += 1;
                    *state = step(*state, byte)?;
                }
            }
        }
        Ok(at)
    }
}

/// One byte of the framing (everything but chunk data).
fn step(state: State, byte: u8) -> Result<State, ChunkError> {
    let line_end = |size: u64| if size == 0 { State::Trailer { line: 0 } } else { State::Data(size) };
    Ok(match state {
        State::Size { size, digits } => match byte {
            b'\n' if digits > 0 => line_end(size),
            b'\r' if digits > 0 => State::Size { size, digits },
            b';' | b' ' | b'\t' if digits > 0 => State::Extension { size, skipped: 0 },
            _ => {
                let digit = char::from(byte).to_digit(16).ok_or(ChunkError::BadSize)?;
                if digits >= 15 {
                    return Err(ChunkError::BadSize);
                }
                State::Size { size: (size << 4) | u64::from(digit), digits: digits + 1 }
            }
        },
        State::Extension { size, skipped } => match byte {
            b'\n' => line_end(size),
            _ if skipped >= MAX_LINE => return Err(ChunkError::LineTooLong),
            _ => State::Extension { size, skipped: skipped + 1 },
        },
        State::DataEnd { seen_cr } => match byte {
            b'\r' if !seen_cr => State::DataEnd { seen_cr: true },
            b'\n' => State::Size { size: 0, digits: 0 },
            _ => return Err(ChunkError::BadChunkEnd),
        },
        State::Trailer { line } => match byte {
            b'\n' if line == 0 => State::Done,
            b'\n' => State::Trailer { line: 0 },
            b'\r' => State::Trailer { line },
            _ if line >= MAX_LINE => return Err(ChunkError::LineTooLong),
            _ => State::Trailer { line: line + 1 },
        },
        State::Data(_) | State::Done => state,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn decode_all(parts: &[&[u8]]) -> Result<(Vec<u8>, usize, bool), ChunkError> {
        let mut decoder = ChunkedDecoder::new();
        let mut out = Vec::new();
        let mut used = 0;
        for part in parts {
            used += decoder.decode(part, &mut out)?;
        }
        Ok((out, used, decoder.is_done()))
    }

    #[test]
    fn decodes_chunks_extensions_and_trailers_and_stops_at_the_end() {
        let body = b"5;name=val\r\nhello\r\n6\r\n world\r\n0\r\nX-Trailer: 1\r\n\r\nHTTP/1.1 200";
        let (out, used, done) = decode_all(&[body]).unwrap();
        assert_eq!(out, b"hello world");
        assert!(done);
        assert_eq!(&body[used..], b"HTTP/1.1 200", "the next response is left alone");
        // Bare line feeds and upper-case hex are accepted.
        let (out, _, done) = decode_all(&[b"A\n0123456789\n0\n\n"]).unwrap();
        assert_eq!((out.as_slice(), done), (&b"0123456789"[..], true));
    }

    #[test]
    fn refuses_malformed_framing() {
        assert_eq!(decode_all(&[b"zz\r\n"]), Err(ChunkError::BadSize));
        assert_eq!(decode_all(&[b"\r\n"]), Err(ChunkError::BadSize), "no digits");
        assert_eq!(decode_all(&[b"1234567890abcdef0\r\n"]), Err(ChunkError::BadSize), "too large");
        assert_eq!(decode_all(&[b"2\r\nabX"]), Err(ChunkError::BadChunkEnd));
        let long = vec![b'x'; MAX_LINE + 10];
        assert_eq!(decode_all(&[b"0\r\n", &long]), Err(ChunkError::LineTooLong));
        assert_eq!(decode_all(&[b"1;", &long]), Err(ChunkError::LineTooLong));
        // An unfinished body is not done.
        assert_eq!(decode_all(&[b"5\r\nhel"]).map(|(_, _, done)| done), Ok(false));
    }

    fn encode(chunks: &[Vec<u8>]) -> Vec<u8> {
        let mut body = Vec::new();
        for chunk in chunks.iter().filter(|c| !c.is_empty()) {
            body.extend_from_slice(format!("{:x}\r\n", chunk.len()).as_bytes());
            body.extend_from_slice(chunk);
            body.extend_from_slice(b"\r\n");
        }
        body.extend_from_slice(b"0\r\n\r\n");
        body
    }

    proptest! {
        #[test]
        fn decoding_is_chunking_invariant(
            chunks in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..40), 0..8),
            cuts in proptest::collection::vec(any::<prop::sample::Index>(), 0..6),
        ) {
            let body = encode(&chunks);
            let mut cuts: Vec<usize> = cuts.iter().map(|i| i.index(body.len() + 1)).collect();
            cuts.sort_unstable();
            let mut parts = Vec::new();
            let mut from = 0;
            for cut in cuts {
                parts.push(&body[from..cut]);
                from = cut;
            }
            parts.push(&body[from..]);
            let (out, used, done) = decode_all(&parts).unwrap();
            prop_assert_eq!(out, chunks.concat());
            prop_assert_eq!(used, body.len());
            prop_assert!(done);
        }

        #[test]
        fn any_bytes_end_in_data_or_an_error(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
            let mut out = Vec::new();
            let mut decoder = ChunkedDecoder::new();
            if let Ok(used) = decoder.decode(&bytes, &mut out) {
                prop_assert!(used <= bytes.len());
                prop_assert!(out.len() <= bytes.len());
            }
        }
    }
}
