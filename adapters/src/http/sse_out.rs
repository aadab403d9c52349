//! The bytes of SSE responses: the 2025-11-25 priming event, each event logged before its
//! bytes are made, keep-alive comments. (HTTP's chunked framing is hyper's.)

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use talaria_core::codec::{encode_event, SseEvent};
use talaria_core::http::event_log::{EventId, StoredEvent};

use super::streams::Log;

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

/// The comment a long-lived stream opens with, so that the client sees it open at once.
pub(super) const OPENED: &[u8] = b": stream open\n\n";

/// The shortest keep-alive interval honoured (a zero one would spin).
pub(super) fn keepalive_interval(configured: Duration) -> Duration {
    configured.max(Duration::from_millis(10))
}

/// The bytes of one SSE response, each event logged before its bytes are made when the stream
/// has a log.
pub(super) struct SseBytes {
    log: Option<(Log, u64)>,
    /// Whether the last event closed the log already.
    closed: AtomicBool,
}

impl SseBytes {
    /// A stream logged on `log`'s stream, if any.
    pub(super) const fn new(log: Option<(Log, u64)>) -> Self {
        Self { log, closed: AtomicBool::new(false) }
    }

    /// The 2025-11-25 priming event: the stream's start id and no data, with the reconnection
    /// delay if one is configured. Nothing on an unlogged stream (there is nothing to resume).
    pub(super) fn prime(&self, retry: Option<Duration>) -> Option<Vec<u8>> {
        let (_, stream) = self.log.as_ref()?;
        let mut event = SseEvent::message("");
        event.id = Some(EventId::start(*stream).to_string());
        event.retry = retry.map(|r| u64::try_from(r.as_millis()).unwrap_or(u64::MAX));
        Some(event_bytes(&event))
    }

    /// Logs `payload` (if the stream has a log: off the executor's threads if the log is
    /// remote); its event, with its event id.
    pub(super) async fn event(&self, payload: &[u8]) -> Vec<u8> {
        let id = self.log_event(payload, false).await;
        message_event(payload, id)
    }

    /// [`SseBytes::event`] for the stream's last event: logged and the log closed in one step,
    /// so [`SseBytes::close_log`] has nothing left to do.
    pub(super) async fn last_event(&self, payload: &[u8]) -> Vec<u8> {
        let id = self.log_event(payload, true).await;
        if id.is_some() {
            self.closed.store(true, Ordering::Relaxed);
        }
        message_event(payload, id)
    }

    /// Appends `payload` to the stream's log, if it has one (closing it if `last`); its id.
    async fn log_event(&self, payload: &[u8], last: bool) -> Option<EventId> {
        let append = move |log: &Log, stream: u64, payload: &[u8]| {
            if last {
                log.append_last(stream, payload)
            } else {
                log.append(stream, payload)
            }
        };
        match &self.log {
            None => None,
            Some((log, stream)) if log.is_remote() => {
                let (log, stream, payload) = (log.clone(), *stream, payload.to_vec());
                smol::unblock(move || append(&log, stream, &payload)).await
            }
            Some((log, stream)) => append(log, *stream, payload),
        }
    }

    /// An event from the log again, with its own id.
    pub(super) fn replayed(stored: &StoredEvent) -> Vec<u8> {
        let mut event = SseEvent::message(String::from_utf8_lossy(&stored.data));
        event.id = Some(stored.id.to_string());
        event_bytes(&event)
    }

    /// A keep-alive comment.
    pub(super) const fn keepalive() -> &'static [u8] {
        KEEPALIVE
    }

    /// Marks a complete stream's log stream closed (before its end is written; off the
    /// executor's threads if the log is remote).
    pub(super) async fn close_log(&self) {
        if self.closed.load(Ordering::Relaxed) {
            return;
        }
        match &self.log {
            None => {}
            Some((log, stream)) if log.is_remote() => {
                let (log, stream) = (log.clone(), *stream);
                smol::unblock(move || log.close(stream)).await;
            }
            Some((log, stream)) => log.close(*stream),
        }
    }
}

/// A message event carrying `payload`, with its log id if it has one.
fn message_event(payload: &[u8], id: Option<EventId>) -> Vec<u8> {
    let mut event = SseEvent::message(String::from_utf8_lossy(payload));
    event.id = id.map(|id| id.to_string());
    event_bytes(&event)
}

fn event_bytes(event: &SseEvent) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(event.data.len() + 32);
    encode_event(event, &mut bytes);
    bytes
}
