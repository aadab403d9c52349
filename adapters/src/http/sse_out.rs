//! SSE responses written by hand on a `tiny_http` connection (it buffers chunked bodies; events
//! must go out at once): the head, the 2025-11-25 priming event, each event logged before it is
//! written, and the end.

use std::io::{self, Write};
use std::sync::mpsc::RecvTimeoutError;
use std::time::Duration;

use talaria_core::codec::{encode_event, SseEvent};
use talaria_core::http::event_log::{EventId, StoredEvent};
use talaria_core::http::headers::SESSION_ID;

use super::chan::Receiver;
use super::streams::{Log, StreamMsg};

/// How an SSE response stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Ending {
    /// The stream is complete.
    Finished,
    /// The server ended it early; the request goes on.
    Disconnected,
    /// The client went away.
    Gone,
}

/// An SSE response written by hand (`tiny_http` buffers chunked bodies; events must go out at
/// once), each event logged before it is written when the stream has a log.
pub(super) struct SseOut {
    writer: Box<dyn Write + Send>,
    log: Option<(Log, u64)>,
}

impl SseOut {
    /// Writes the head (and, on a long-lived stream, a comment saying it is open).
    pub(super) fn start(
        request: tiny_http::Request,
        session_id: Option<&str>,
        log: Option<(Log, u64)>,
        long_lived: bool,
    ) -> io::Result<Self> {
        let mut writer = request.into_writer();
        let mut head = String::from(
            "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nX-Accel-Buffering: no\r\nTransfer-Encoding: chunked\r\n",
        );
        if let Some(id) = session_id {
            head.push_str(&format!("{SESSION_ID}: {id}\r\n"));
        }
        head.push_str("\r\n");
        writer.write_all(head.as_bytes())?;
        if long_lived {
            write_chunk(&mut writer, b": stream open\n\n")?;
        }
        writer.flush()?;
        Ok(Self { writer, log })
    }

    /// The 2025-11-25 priming event: the stream's start id and no data, with the reconnection
    /// delay if one is configured. Nothing on an unlogged stream (there is nothing to resume).
    pub(super) fn prime(&mut self, retry: Option<Duration>) -> io::Result<()> {
        let Some((_, stream)) = &self.log else { return Ok(()) };
        let mut event = SseEvent::message("");
        event.id = Some(EventId::start(*stream).to_string());
        event.retry = retry.map(|r| u64::try_from(r.as_millis()).unwrap_or(u64::MAX));
        self.write_event(&event)
    }

    /// Logs `payload` (if the stream has a log), then writes it with its event id.
    pub(super) fn event(&mut self, payload: &[u8]) -> io::Result<()> {
        let id = self.log.as_ref().and_then(|(log, stream)| log.append(*stream, payload));
        let mut event = SseEvent::message(String::from_utf8_lossy(payload));
        event.id = id.map(|id| id.to_string());
        self.write_event(&event)
    }

    /// Writes an event from the log again, with its own id.
    pub(super) fn replayed(&mut self, stored: &StoredEvent) -> io::Result<()> {
        let mut event = SseEvent::message(String::from_utf8_lossy(&stored.data));
        event.id = Some(stored.id.to_string());
        self.write_event(&event)
    }

    fn write_event(&mut self, event: &SseEvent) -> io::Result<()> {
        let mut bytes = Vec::with_capacity(event.data.len() + 32);
        encode_event(event, &mut bytes);
        write_chunk(&mut self.writer, &bytes)?;
        self.writer.flush()
    }

    /// Writes a pre-encoded event (the legacy `endpoint` event).
    pub(super) fn raw(&mut self, bytes: &[u8]) -> io::Result<()> {
        write_chunk(&mut self.writer, bytes)?;
        self.writer.flush()
    }

    /// Writes frames as they come until the stream ends, the server ends it, or the client
    /// goes away; a stream silent for `keepalive` gets a comment, which is how a client that
    /// closed it is noticed.
    pub(super) fn pump(&mut self, frames: &Receiver<StreamMsg>, keepalive: Duration) -> Ending {
        let keepalive = keepalive.max(Duration::from_millis(10));
        loop {
            let written = match frames.recv_timeout(keepalive) {
                Ok(StreamMsg::Frame(payload)) if payload.is_empty() => Ok(()),
                Ok(StreamMsg::Frame(payload)) => self.event(&payload),
                Err(RecvTimeoutError::Timeout) => self.raw(b": keepalive\n\n"),
                Ok(StreamMsg::Done) | Err(RecvTimeoutError::Disconnected) => return Ending::Finished,
                Ok(StreamMsg::Disconnect) => return Ending::Disconnected,
            };
            if written.is_err() {
                return Ending::Gone;
            }
        }
    }

    /// Ends the response.
    pub(super) fn end(&mut self) {
        let _ = self.writer.write_all(b"0\r\n\r\n");
        let _ = self.writer.flush();
    }

    /// Ends the response of a complete stream, marking its log stream closed.
    pub(super) fn finish(mut self) {
        if let Some((log, stream)) = &self.log {
            log.close(*stream);
        }
        self.end();
    }
}

fn write_chunk(writer: &mut dyn Write, bytes: &[u8]) -> io::Result<()> {
    write!(writer, "{:x}\r\n", bytes.len())?;
    writer.write_all(bytes)?;
    writer.write_all(b"\r\n")
}
