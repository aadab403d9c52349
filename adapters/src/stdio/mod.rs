//! stdio: a server as a child process speaking newline-delimited JSON on its stdin/stdout
//! ([`StdioCommand`], [`Client::stdio`](crate::client::Client::stdio)), and serving on this
//! process's own stdin/stdout ([`serve`]).

pub(crate) mod child;
mod serve;

use std::io::{self, Write};

pub use child::{StderrMode, StdioCommand};
pub use serve::{serve, serve_streams};

use crate::conn::{FrameSink, Outgoing};

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
