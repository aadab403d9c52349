//! The bytes of SSE responses: the 2025-11-25 priming event, each event logged before its
//! bytes are made, keep-alive comments. (HTTP's chunked framing is hyper's.)

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use talaria_core::codec::{encode_event, SseEvent};
use talaria_core::http::event_log::{EventId, StoredEvent};

use talaria_core::session::StreamId;

use super::streams::{Log, Streams};

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
    log: Mutex<Logged>,
    /// Whether the last event closed the log already.
    closed: AtomicBool,
}

/// Where an SSE response's events are logged.
enum Logged {
    /// Nowhere.
    No,
    /// On this log stream.
    At(Log, u64),
    /// On a log stream opened with the first event (one store call for both), for a client
    /// that needs no id before it (no priming event).
    WithFirstEvent(FirstEvent),
}

/// A log stream to open with the first event of a POST stream.
struct FirstEvent {
    streams: Streams,
    stream: StreamId,
    /// Who writes the stream, noted with it.
    claim: Option<Vec<u8>>,
}

impl FirstEvent {
    fn is_remote(&self) -> bool {
        self.streams.log().is_some_and(Log::is_remote)
    }
}

impl SseBytes {
    /// A stream logged on `log`'s stream, if any.
    pub(super) fn new(log: Option<(Log, u64)>) -> Self {
        let log = log.map_or(Logged::No, |(log, stream)| Logged::At(log, stream));
        Self { log: Mutex::new(log), closed: AtomicBool::new(false) }
    }

    /// The POST `stream` of `streams`, whose log stream opens with its first event (noting
    /// `claim`; see [`Streams::log_first_event`]); never, if it has none.
    pub(super) fn with_first_event(streams: Streams, stream: StreamId, claim: Option<Vec<u8>>) -> Self {
        let first = FirstEvent { streams, stream, claim };
        Self { log: Mutex::new(Logged::WithFirstEvent(first)), closed: AtomicBool::new(false) }
    }

    fn logged(&self) -> std::sync::MutexGuard<'_, Logged> {
        self.log.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The log stream the events went to, once there is one.
    pub(super) fn log_stream(&self) -> Option<u64> {
        match &*self.logged() {
            Logged::At(_, stream) => Some(*stream),
            Logged::No | Logged::WithFirstEvent(_) => None,
        }
    }

    /// The 2025-11-25 priming event: the stream's start id and no data, with the reconnection
    /// delay if one is configured. Nothing on an unlogged stream (there is nothing to resume).
    pub(super) fn prime(&self, retry: Option<Duration>) -> Option<Vec<u8>> {
        let stream = self.log_stream()?;
        let mut event = SseEvent::message("");
        event.id = Some(EventId::start(stream).to_string());
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

    /// Appends `payload` to the stream's log, if it has one (closing it if `last`, opening it
    /// first if it opens with its first event); its id.
    async fn log_event(&self, payload: &[u8], last: bool) -> Option<EventId> {
        let logged = std::mem::replace(&mut *self.logged(), Logged::No);
        match logged {
            Logged::No => None,
            Logged::At(log, stream) => {
                *self.logged() = Logged::At(log.clone(), stream);
                let append = move |log: &Log, payload: &[u8]| {
                    if last {
                        log.append_last(stream, payload)
                    } else {
                        log.append(stream, payload)
                    }
                };
                if log.is_remote() {
                    let payload = payload.to_vec();
                    smol::unblock(move || append(&log, &payload)).await
                } else {
                    append(&log, payload)
                }
            }
            Logged::WithFirstEvent(first) => {
                let remote = first.is_remote();
                let FirstEvent { streams, stream, claim } = first;
                let logging = streams.clone();
                let id = if remote {
                    let payload = payload.to_vec();
                    smol::unblock(move || logging.log_first_event(stream, claim.as_deref(), &payload, last)).await
                } else {
                    logging.log_first_event(stream, claim.as_deref(), payload, last)
                };
                // Not logged: the rest of the stream goes unlogged.
                if let (Some(id), Some(log)) = (id, streams.log()) {
                    *self.logged() = Logged::At(log.clone(), id.stream);
                }
                id
            }
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
    /// executor's threads if the log is remote). A stream whose log was to open with its first
    /// event and had none has nothing to close.
    pub(super) async fn close_log(&self) {
        if self.closed.load(Ordering::Relaxed) {
            return;
        }
        let Some((log, stream)) = (match &*self.logged() {
            Logged::At(log, stream) => Some((log.clone(), *stream)),
            Logged::No | Logged::WithFirstEvent(_) => None,
        }) else {
            return;
        };
        if log.is_remote() {
            smol::unblock(move || log.close(stream)).await;
        } else {
            log.close(stream);
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
