//! stdio: a server as a child process speaking newline-delimited JSON on its stdin/stdout
//! ([`StdioCommand`], [`Client::stdio`](crate::client::Client::stdio)), and serving on this
//! process's own stdin/stdout ([`serve`]).

pub(crate) mod child;
mod serve;

use std::io::{self, Write};

pub use child::{StderrMode, StdioCommand};
pub use serve::{serve, serve_async, serve_streams};

use crate::conn::{FrameSink, Outgoing};

/// About how many bytes of a read a reader hands the engine under one lock: a read of 64 KiB
/// holds some thirty answers, and an application thread sending a call waits for the lock
/// while they are handled.
const PIECE: usize = 8 * 1024;

/// Splits a read into pieces of about [`PIECE`] bytes, each cut just after a newline (so no
/// line is split that need not be; the decoder would cope either way).
pub(crate) fn pieces(mut bytes: &[u8]) -> impl Iterator<Item = &[u8]> {
    std::iter::from_fn(move || {
        if bytes.is_empty() {
            return None;
        }
        let cut = match bytes.get(PIECE..).and_then(|tail| tail.iter().position(|&b| b == b'\n')) {
            Some(newline) => PIECE + newline + 1,
            None => bytes.len(),
        };
        let (piece, rest) = bytes.split_at(cut);
        bytes = rest;
        Some(piece)
    })
}

/// Writes frames as lines to a pipe.
pub(crate) struct LineSink<W: Write + Send> {
    writer: Option<io::BufWriter<W>>,
}

impl<W: Write + Send> LineSink<W> {
    pub(crate) fn new(writer: W) -> Self {
        Self { writer: Some(io::BufWriter::with_capacity(64 * 1024, writer)) }
    }
}

impl<W: Write + Send> FrameSink for LineSink<W> {
    fn send(&mut self, frames: Vec<Outgoing>) -> io::Result<()> {
        let Some(writer) = &mut self.writer else { return Err(io::ErrorKind::BrokenPipe.into()) };
        for frame in &frames {
            if let Outgoing::Frame(_, payload) = frame {
                writer.write_all(payload)?;
                writer.write_all(b"\n")?;
            }
        }
        writer.flush()
    }

    fn close(&mut self) {
        if let Some(mut writer) = self.writer.take() {
            let _ = writer.flush();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{pieces, PIECE};

    #[test]
    fn a_read_is_cut_after_newlines_into_pieces_that_join_back_whole() {
        let line = format!("{}\n", "x".repeat(999));
        let read = line.repeat(64);
        let cut: Vec<&[u8]> = pieces(read.as_bytes()).collect();
        assert!(cut.len() > 1);
        assert!(cut[..cut.len() - 1].iter().all(|p| p.ends_with(b"\n") && p.len() <= PIECE + line.len()));
        assert_eq!(cut.concat(), read.as_bytes());
    }

    #[test]
    fn a_long_line_and_a_short_read_stay_whole() {
        let long = "y".repeat(3 * PIECE);
        assert_eq!(pieces(long.as_bytes()).count(), 1);
        assert_eq!(pieces(b"short\n").collect::<Vec<_>>(), vec![&b"short\n"[..]]);
        assert_eq!(pieces(b"").count(), 0);
    }
}
