//! stdio: a server as a child process speaking newline-delimited JSON on its stdin/stdout
//! ([`StdioCommand`], [`Client::stdio`](crate::client::Client::stdio)), and serving on this
//! process's own stdin/stdout ([`serve`]).

pub(crate) mod child;
mod serve;
mod sink;

pub use child::{StderrMode, StdioCommand};
pub use serve::{serve, serve_async, serve_streams};
pub(crate) use sink::LineSink;

/// About how many bytes of a read a reader hands the engine under one lock: a read of 64 KiB
/// holds some thirty answers, and an application thread sending a call waits for the lock
/// while they are handled.
const PIECE: usize = 8 * 1024;

/// Splits a read into pieces of about [`PIECE`] bytes, each cut just after a newline (so no
/// line is split that need not be; the decoder would cope either way), each with whether more
/// of the read follows it.
pub(crate) fn pieces(mut bytes: &[u8]) -> impl Iterator<Item = (&[u8], bool)> {
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
        Some((piece, !rest.is_empty()))
    })
}

#[cfg(test)]
mod tests {
    use super::{pieces, PIECE};

    #[test]
    fn a_read_is_cut_after_newlines_into_pieces_that_join_back_whole() {
        let line = format!("{}\n", "x".repeat(999));
        let read = line.repeat(64);
        let (cut, more): (Vec<&[u8]>, Vec<bool>) = pieces(read.as_bytes()).unzip();
        assert!(cut.len() > 1);
        assert_eq!(more.iter().filter(|more| !**more).count(), 1, "only the last piece has nothing after it");
        assert!(!more[more.len() - 1]);
        assert!(cut[..cut.len() - 1].iter().all(|p| p.ends_with(b"\n") && p.len() <= PIECE + line.len()));
        assert_eq!(cut.concat(), read.as_bytes());
    }

    #[test]
    fn a_long_line_and_a_short_read_stay_whole() {
        let long = "y".repeat(3 * PIECE);
        assert_eq!(pieces(long.as_bytes()).count(), 1);
        assert_eq!(pieces(b"short\n").collect::<Vec<_>>(), vec![(&b"short\n"[..], false)]);
        assert_eq!(pieces(b"").count(), 0);
    }
}
