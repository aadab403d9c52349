//! SSE responses written by hand, chunk by chunk, so that each event goes out at once: the head,
//! the 2025-11-25 priming event, each event logged before it is written, keep-alive comments,
//! and the end. [`SseBytes`] makes the bytes (both server flavours use it); [`SseOut`] writes
//! them on a `tiny_http` connection (which would otherwise buffer a chunked body).

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

/// The comment written on a silent stream.
const KEEPALIVE: &[u8] = b": keepalive\n\n";

/// The chunk that ends a chunked body.
pub(super) const END: &[u8] = b"0\r\n\r\n";

/// The shortest keep-alive interval honoured (a zero one would spin).
pub(super) fn keepalive_interval(configured: Duration) -> Duration {
    configured.max(Duration::from_millis(10))
}

/// The bytes of one SSE response, each event logged before its bytes are made when the stream
/// has a log.
pub(super) struct SseBytes {
    log: Option<(Log, u64)>,
}

impl SseBytes {
    /// A stream logged on `log`'s stream, if any.
    pub(super) const fn new(log: Option<(Log, u64)>) -> Self {
        Self { log }
    }

    /// The response head (and, on a long-lived stream, a comment saying it is open).
    pub(super) fn head(session_id: Option<&str>, long_lived: bool) -> Vec<u8> {
        let mut head = String::from(
            "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nX-Accel-Buffering: no\r\nTransfer-Encoding: chunked\r\n",
        );
        if let Some(id) = session_id {
            head.push_str(&format!("{SESSION_ID}: {id}\r\n"));
        }
        head.push_str("\r\n");
        let mut bytes = head.into_bytes();
        if long_lived {
            bytes.extend_from_slice(&chunk(b": stream open\n\n"));
        }
        bytes
    }

    /// The 2025-11-25 priming event: the stream's start id and no data, with the reconnection
    /// delay if one is configured. Nothing on an unlogged stream (there is nothing to resume).
    pub(super) fn prime(&self, retry: Option<Duration>) -> Option<Vec<u8>> {
        let (_, stream) = self.log.as_ref()?;
        let mut event = SseEvent::message("");
        event.id = Some(EventId::start(*stream).to_string());
        event.retry = retry.map(|r| u64::try_from(r.as_millis()).unwrap_or(u64::MAX));
        Some(event_chunk(&event))
    }

    /// Logs `payload` (if the stream has a log); its event, with its event id.
    pub(super) fn event(&self, payload: &[u8]) -> Vec<u8> {
        let id = self.log.as_ref().and_then(|(log, stream)| log.append(*stream, payload));
        let mut event = SseEvent::message(String::from_utf8_lossy(payload));
        event.id = id.map(|id| id.to_string());
        event_chunk(&event)
    }

    /// An event from the log again, with its own id.
    pub(super) fn replayed(stored: &StoredEvent) -> Vec<u8> {
        let mut event = SseEvent::message(String::from_utf8_lossy(&stored.data));
        event.id = Some(stored.id.to_string());
        event_chunk(&event)
    }

    /// A keep-alive comment.
    pub(super) fn keepalive() -> Vec<u8> {
        chunk(KEEPALIVE)
    }

    /// Marks a complete stream's log stream closed (before its end is written).
    pub(super) fn close_log(&self) {
        if let Some((log, stream)) = &self.log {
            log.close(*stream);
        }
    }
}

/// `bytes` as one chunk of a chunked body.
pub(super) fn chunk(bytes: &[u8]) -> Vec<u8> {
    let mut out = format!("{:x}\r\n", bytes.len()).into_bytes();
    out.extend_from_slice(bytes);
    out.extend_from_slice(b"\r\n");
    out
}

fn event_chunk(event: &SseEvent) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(event.data.len() + 32);
    encode_event(event, &mut bytes);
    chunk(&bytes)
}

/// An SSE response on a `tiny_http` connection.
pub(super) struct SseOut {
    writer: Box<dyn Write + Send>,
    bytes: SseBytes,
}

impl SseOut {
    /// Writes the head (and, on a long-lived stream, a comment saying it is open).
    pub(super) fn start(
        request: tiny_http::Request,
        session_id: Option<&str>,
        log: Option<(Log, u64)>,
        long_lived: bool,
    ) -> io::Result<Self> {
        let mut out = Self { writer: request.into_writer(), bytes: SseBytes::new(log) };
        out.write(&SseBytes::head(session_id, long_lived))?;
        Ok(out)
    }

    fn write(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.writer.write_all(bytes)?;
        self.writer.flush()
    }

    /// Writes the priming event (see [`SseBytes::prime`]).
    pub(super) fn prime(&mut self, retry: Option<Duration>) -> io::Result<()> {
        match self.bytes.prime(retry) {
            Some(bytes) => self.write(&bytes),
            None => Ok(()),
        }
    }

    /// Logs `payload` (if the stream has a log), then writes it with its event id.
    pub(super) fn event(&mut self, payload: &[u8]) -> io::Result<()> {
        let bytes = self.bytes.event(payload);
        self.write(&bytes)
    }

    /// Writes an event from the log again, with its own id.
    pub(super) fn replayed(&mut self, stored: &StoredEvent) -> io::Result<()> {
        self.write(&SseBytes::replayed(stored))
    }

    /// Writes a pre-encoded event (the legacy `endpoint` event).
    pub(super) fn raw(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.write(&chunk(bytes))
    }

    /// Writes frames as they come until the stream ends, the server ends it, or the client
    /// goes away; a stream silent for `keepalive` gets a comment, which is how a client that
    /// closed it is noticed.
    pub(super) fn pump(&mut self, frames: &Receiver<StreamMsg>, keepalive: Duration) -> Ending {
        let keepalive = keepalive_interval(keepalive);
        loop {
            let written = match frames.recv_timeout(keepalive) {
                Ok(StreamMsg::Frame(payload)) if payload.is_empty() => Ok(()),
                Ok(StreamMsg::Frame(payload)) => self.event(&payload),
                Err(RecvTimeoutError::Timeout) => self.write(&SseBytes::keepalive()),
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
        let _ = self.write(END);
    }

    /// Ends the response of a complete stream, marking its log stream closed.
    pub(super) fn finish(mut self) {
        self.bytes.close_log();
        self.end();
    }
}
