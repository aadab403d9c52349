//! Where a connection's frames go over HTTP: each POST's response stream, the GET stream (or
//! a bounded backlog while none is open), and, for sessions that can resume, the event log.
//! The core's [`StreamRoutes`] decides; this module holds the writers' channels and the log,
//! and moves each frame where it was told.
//!
//! A POST's SSE stream is logged from its first event (its log stream is opened when the reply
//! turns into SSE). When its writer goes away before the request is answered (the client
//! dropped, or the handler asked for the stream to end: SSE polling), the stream is *detached*:
//! the sink appends what the session still routes to it straight to the log, and a GET with
//! `Last-Event-ID` later *resumes* it, replaying the log and taking over the rest.

use super::chan::{channel, Receiver, Sender};
use std::io;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use talaria_core::http::event_log::{EventId, EventStore, StoredEvent};
use talaria_core::http::streams::{GetAttached, PostDelivery, PostEnding, Release, Resumption, StreamRoutes, WriterId};
use talaria_core::session::{Carries, Route, StreamId};

use crate::conn::{FrameSink, Outgoing};

/// An event store shared by the servers (and threads) that serve the same sessions.
pub type SharedEventStore = Arc<Mutex<dyn EventStore + Send>>;

/// What an HTTP response stream receives.
pub(crate) enum StreamMsg {
    /// A JSON text, and what it carries.
    Frame(Vec<u8>, Carries),
    /// The session is done with the stream.
    Done,
    /// End the response now; the request goes on (its frames wait in the log).
    Disconnect,
}

/// One session's place in the event store.
#[derive(Clone)]
pub(crate) struct Log {
    store: SharedEventStore,
    session: Arc<str>,
}

impl Log {
    pub(crate) fn new(store: SharedEventStore, session: &str) -> Self {
        Self { store, session: session.into() }
    }

    fn store(&self) -> MutexGuard<'_, dyn EventStore + Send + 'static> {
        self.store.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A new log stream, if the store took it.
    pub(crate) fn open(&self) -> Option<u64> {
        self.store().open_stream(&self.session).ok()
    }

    /// Logs `payload` on `stream` before it is sent; its event id, if the store took it.
    pub(crate) fn append(&self, stream: u64, payload: &[u8]) -> Option<EventId> {
        self.store().append(&self.session, stream, payload).ok()
    }

    /// Marks `stream` ended.
    pub(crate) fn close(&self, stream: u64) {
        let _ = self.store().close_stream(&self.session, stream);
    }
}

/// The core's routing decisions, and the channels of the writers they name.
struct Routes {
    decide: StreamRoutes,
    /// A session has a few writers at a time: a list, freed when empty, costs an idle session
    /// nothing.
    writers: Vec<(WriterId, Sender<StreamMsg>)>,
}

impl Routes {
    /// A channel for the new `writer`.
    fn attach(&mut self, writer: WriterId) -> Receiver<StreamMsg> {
        let (tx, rx) = channel();
        self.writers.push((writer, tx));
        rx
    }

    /// The channel of `writer`, if it is attached.
    fn writer(&self, writer: WriterId) -> Option<&Sender<StreamMsg>> {
        self.writers.iter().find(|(id, _)| *id == writer).map(|(_, tx)| tx)
    }

    /// Forgets `writer`; its channel, if it was attached.
    fn detach(&mut self, writer: WriterId) -> Option<Sender<StreamMsg>> {
        let at = self.writers.iter().position(|(id, _)| *id == writer)?;
        let (_, tx) = self.writers.swap_remove(at);
        if self.writers.is_empty() {
            self.writers = Vec::new();
        }
        Some(tx)
    }

    /// Tells `writer` its stream is done, and forgets it.
    fn end(&mut self, writer: WriterId) {
        if let Some(tx) = self.detach(writer) {
            let _ = tx.send(StreamMsg::Done);
        }
    }

    /// Attaches the GET stream's new writer: the one it replaces ends, the backlog goes first.
    fn attach_get(&mut self, attached: GetAttached) -> Receiver<StreamMsg> {
        if let Some(replaced) = attached.replaced {
            self.end(replaced);
        }
        let rx = self.attach(attached.writer);
        if let Some(tx) = self.writer(attached.writer) {
            for (payload, carries) in attached.backlog {
                let _ = tx.send(StreamMsg::Frame(payload, carries));
            }
        }
        rx
    }

    /// The writer whose channel `frames` is, if it is still attached.
    fn writer_of(&self, frames: &Receiver<StreamMsg>) -> Option<WriterId> {
        self.writers.iter().find(|(_, tx)| tx.feeds(frames)).map(|(writer, _)| *writer)
    }
}

/// What a GET with `Last-Event-ID` resumes.
pub(crate) struct Resumed {
    /// The retained events after the id, oldest first.
    pub(crate) events: Vec<StoredEvent>,
    /// Where the rest arrives; `None` when the stream had ended (send `events`, then end).
    pub(crate) frames: Option<Receiver<StreamMsg>>,
    /// The log stream to append the rest to.
    pub(crate) log: u64,
    /// The POST stream taken over, if it was one (else the GET stream).
    pub(crate) post: Option<StreamId>,
}

/// A connection's response streams, shared by its sink and the request handlers: the core's
/// [`StreamRoutes`] decides where each frame goes; this moves it there.
#[derive(Clone)]
pub(crate) struct Streams {
    routes: Arc<Mutex<Routes>>,
    log: Option<Log>,
}

impl Streams {
    /// The streams of a connection whose events are logged in `log` (`None`: not resumable).
    pub(crate) fn new(log: Option<Log>) -> Self {
        let decide = StreamRoutes::new(log.is_some());
        Self { routes: Arc::new(Mutex::new(Routes { decide, writers: Vec::new() })), log }
    }

    fn lock(&self) -> MutexGuard<'_, Routes> {
        self.routes.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The session's event log, if it has one.
    pub(crate) const fn log(&self) -> Option<&Log> {
        self.log.as_ref()
    }

    /// Registers a POST's response stream; its frames arrive on the receiver.
    pub(crate) fn open_post(&self, stream: StreamId) -> Receiver<StreamMsg> {
        let mut routes = self.lock();
        let writer = routes.decide.open_post(stream);
        routes.attach(writer)
    }

    /// Opens the log stream of a POST whose reply turned into SSE; its id, if the session
    /// logs.
    pub(crate) fn log_post(&self, stream: StreamId) -> Option<u64> {
        let id = self.log.as_ref()?.open()?;
        self.lock().decide.log_post(stream, id);
        Some(id)
    }

    /// The writer of a POST stream (or of the GET that resumed it), reading `frames`, is gone
    /// before the stream ended. Says whether the stream was detached (its rest logged for a
    /// GET to resume; see [`StreamRoutes::release_post`]) or forgotten (its remaining frames
    /// dropped).
    ///
    /// `log_stream` is the log stream the writer wrote to, if any: the stream may have ended
    /// (its last frames still in `frames`) before the writer let go.
    pub(crate) fn release_post(
        &self,
        stream: StreamId,
        frames: &Receiver<StreamMsg>,
        log_stream: Option<u64>,
    ) -> Release {
        let mut routes = self.lock();
        let writer = routes.writer_of(frames);
        if let Some(writer) = writer {
            routes.detach(writer);
        }
        let Release::Detached(log_stream) = routes.decide.release_post(stream, writer, log_stream) else {
            return Release::Forgotten;
        };
        let Some(log) = self.log.as_ref() else { return Release::Forgotten };
        // Under the routes lock, so these land in the log before anything the sink appends.
        while let Ok(msg) = frames.try_recv() {
            match msg {
                StreamMsg::Frame(payload, _) => {
                    let _ = log.append(log_stream, &payload);
                }
                StreamMsg::Done => {
                    log.close(log_stream);
                    break;
                }
                StreamMsg::Disconnect => {}
            }
        }
        Release::Detached(log_stream)
    }

    /// Opens the GET stream: the backlog first, then what comes. A GET stream already open
    /// is ended (the client reconnected).
    pub(crate) fn open_get(&self) -> Receiver<StreamMsg> {
        let mut routes = self.lock();
        let attached = routes.decide.open_get();
        routes.attach_get(attached)
    }

    /// The GET stream's log stream, opened on first use; `None` if the session does not log.
    pub(crate) fn get_log(&self) -> Option<u64> {
        let log = self.log.as_ref()?;
        let mut routes = self.lock();
        if routes.decide.get_log().is_none() {
            routes.decide.set_get_log(log.open()?);
        }
        routes.decide.get_log()
    }

    /// Resumes the stream `after` belongs to: the events the client missed, and where the rest
    /// comes from. `None` when `after` names no stream of this session that the log still
    /// has.
    pub(crate) fn resume(&self, after: EventId) -> Option<Resumed> {
        let log = self.log.as_ref()?;
        let mut routes = self.lock();
        // Under the routes lock: the sink cannot append to a detached stream between the
        // replay and the new writer's attachment.
        let replay = log.store().replay_after(&log.session, after).ok()?;
        let (frames, post) = match routes.decide.resume(after.stream, replay.closed)? {
            Resumption::Get(attached) => (Some(routes.attach_get(attached)), None),
            Resumption::Post { stream, writer, replaced } => {
                // A writer still attached (the client reconnected early) loses the stream.
                if let Some(replaced) = replaced {
                    routes.detach(replaced);
                }
                (Some(routes.attach(writer)), Some(stream))
            }
            Resumption::Ended => (None, None),
        };
        Some(Resumed { events: replay.events, frames, log: after.stream, post })
    }

    /// Ends every stream (the session is gone).
    pub(crate) fn close_all(&self) {
        let mut routes = self.lock();
        for writer in routes.decide.close_all() {
            routes.end(writer);
        }
        routes.writers = Vec::new();
    }
}

impl FrameSink for Streams {
    fn send(&mut self, frames: Vec<Outgoing>) -> io::Result<()> {
        let mut routes = self.lock();
        for frame in frames {
            match frame {
                Outgoing::Frame(Route::Stream(stream), payload, carries) => match routes.decide.post_frame(stream) {
                    PostDelivery::Writer(writer) => {
                        if let Some(tx) = routes.writer(writer) {
                            let _ = tx.send(StreamMsg::Frame(payload, carries));
                        }
                    }
                    PostDelivery::Log(log_stream) => {
                        if let Some(log) = &self.log {
                            let _ = log.append(log_stream, &payload);
                        }
                    }
                    PostDelivery::Dropped => {}
                },
                Outgoing::Frame(Route::Connection, payload, carries) => {
                    let Some((writer, frame)) = routes.decide.get_frame((payload, carries)) else { continue };
                    // A channel that refuses the frame hands it back, for the backlog.
                    let refused = match routes.writer(writer) {
                        Some(tx) => tx.send(StreamMsg::Frame(frame.0, frame.1)).err(),
                        None => Some(StreamMsg::Frame(frame.0, frame.1)),
                    };
                    if let Some(StreamMsg::Frame(payload, carries)) = refused {
                        routes.detach(writer);
                        routes.decide.get_gone(writer, (payload, carries));
                    }
                }
                Outgoing::StreamDone(stream) => match routes.decide.post_done(stream) {
                    PostEnding::Writer(writer) => routes.end(writer),
                    PostEnding::Log(log_stream) => {
                        if let Some(log) = &self.log {
                            log.close(log_stream);
                        }
                    }
                    PostEnding::Nothing => {}
                },
                Outgoing::StreamDisconnect(stream) => {
                    if let Some(tx) = routes.decide.post_disconnect(stream).and_then(|w| routes.writer(w)) {
                        let _ = tx.send(StreamMsg::Disconnect);
                    }
                }
                Outgoing::Pong(_) => {}
            }
        }
        Ok(())
    }

    fn close(&mut self) {
        self.close_all();
    }

    fn never_blocks(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use talaria_core::http::event_log::{MemoryEventStore, Retention};

    use super::*;

    fn logged() -> Streams {
        let store: SharedEventStore = Arc::new(Mutex::new(MemoryEventStore::new(Retention::default())));
        Streams::new(Some(Log::new(store, "s")))
    }

    fn frame(stream: u64, text: &str) -> Outgoing {
        Outgoing::text(Route::Stream(StreamId(stream)), text)
    }

    #[test]
    fn a_detached_post_stream_is_logged_and_resumed_in_order() {
        let mut streams = logged();
        let rx = streams.open_post(StreamId(1));
        let log_stream = streams.log_post(StreamId(1)).unwrap();
        let first = streams.log().unwrap().append(log_stream, b"a").unwrap();
        // "b" reached the channel but not the writer when it went away; "c" came after.
        streams.send(vec![frame(1, "b")]).unwrap();
        assert!(matches!(streams.release_post(StreamId(1), &rx, None), Release::Detached(_)));
        streams.send(vec![frame(1, "c")]).unwrap();

        let resumed = streams.resume(first).unwrap();
        let data: Vec<&[u8]> = resumed.events.iter().map(|e| &e.data[..]).collect();
        assert_eq!(data, [&b"b"[..], b"c"]);
        assert_eq!(resumed.post, Some(StreamId(1)));
        let frames = resumed.frames.unwrap();
        streams.send(vec![frame(1, "d"), Outgoing::StreamDone(StreamId(1))]).unwrap();
        assert!(matches!(frames.recv().unwrap(), StreamMsg::Frame(p, _) if p == b"d"));
        assert!(matches!(frames.recv().unwrap(), StreamMsg::Done));
    }

    #[test]
    fn a_writer_leaving_after_a_get_resumed_its_stream_leaves_the_get_attached() {
        let mut streams = logged();
        let rx = streams.open_post(StreamId(5));
        let log_stream = streams.log_post(StreamId(5)).unwrap();
        // The client resumes before the old writer has let go of the stream.
        let resumed = streams.resume(EventId::start(log_stream)).unwrap();
        assert!(matches!(streams.release_post(StreamId(5), &rx, None), Release::Detached(_)));
        streams.send(vec![frame(5, "answer"), Outgoing::StreamDone(StreamId(5))]).unwrap();
        let frames = resumed.frames.unwrap();
        assert!(matches!(frames.recv().unwrap(), StreamMsg::Frame(p, _) if p == b"answer"), "the GET gets the answer");
        assert!(matches!(frames.recv().unwrap(), StreamMsg::Done));
    }

    #[test]
    fn a_stream_that_ended_while_its_writer_was_leaving_is_logged_whole() {
        let mut streams = logged();
        let rx = streams.open_post(StreamId(6));
        let log_stream = streams.log_post(StreamId(6)).unwrap();
        // The answer and the end reach the writer's channel; the writer leaves without them.
        streams.send(vec![frame(6, "answer"), Outgoing::StreamDone(StreamId(6))]).unwrap();
        assert!(
            matches!(streams.release_post(StreamId(6), &rx, Some(log_stream)), Release::Detached(_)),
            "detached, not cancelled"
        );
        let resumed = streams.resume(EventId::start(log_stream)).unwrap();
        let data: Vec<&[u8]> = resumed.events.iter().map(|e| &e.data[..]).collect();
        assert_eq!(data, [&b"answer"[..]]);
        assert!(resumed.frames.is_none(), "the stream is complete");
    }

    #[test]
    fn a_stream_that_ended_while_detached_replays_and_ends() {
        let mut streams = logged();
        let rx = streams.open_post(StreamId(2));
        let log_stream = streams.log_post(StreamId(2)).unwrap();
        assert!(matches!(streams.release_post(StreamId(2), &rx, None), Release::Detached(_)));
        streams.send(vec![frame(2, "result"), Outgoing::StreamDone(StreamId(2))]).unwrap();
        let resumed = streams.resume(EventId::start(log_stream)).unwrap();
        assert_eq!(resumed.events.len(), 1);
        assert!(resumed.frames.is_none(), "nothing more will come");
    }

    #[test]
    fn unlogged_streams_are_forgotten_and_unknown_ids_refused() {
        let mut streams = Streams::new(None);
        let rx = streams.open_post(StreamId(3));
        assert!(streams.log_post(StreamId(3)).is_none());
        assert_eq!(streams.release_post(StreamId(3), &rx, None), Release::Forgotten);
        streams.send(vec![frame(3, "lost")]).unwrap();
        assert!(streams.resume(EventId::start(1)).is_none());
        assert!(logged().resume(EventId::new(9, 0)).is_none());
    }

    #[test]
    fn disconnect_reaches_the_writer() {
        let mut streams = logged();
        let rx = streams.open_post(StreamId(4));
        streams.send(vec![Outgoing::StreamDisconnect(StreamId(4))]).unwrap();
        assert!(matches!(rx.recv().unwrap(), StreamMsg::Disconnect));
    }
}
