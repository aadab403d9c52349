//! Where a connection's frames go over HTTP: each POST's response stream, the GET stream (or
//! a bounded backlog while none is open), and, for sessions that can resume, the event log.
//!
//! A POST's SSE stream is logged from its first event (its log stream is opened when the reply
//! turns into SSE). When its writer goes away before the request is answered (the client
//! dropped, or the handler asked for the stream to end: SSE polling), the stream is *detached*:
//! the sink appends what the session still routes to it straight to the log, and a GET with
//! `Last-Event-ID` later *resumes* it, replaying the log and taking over the rest.

use super::chan::{channel, Receiver, Sender};
use std::collections::{BTreeMap, VecDeque};
use std::io;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use talaria_core::http::event_log::{EventId, EventStore, StoredEvent};
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

/// The most server messages held for a GET stream that is not open.
const MAX_BACKLOG: usize = 1024;

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

/// A POST's response stream: its writer's channel while one is attached, its log stream once
/// it is SSE.
struct Post {
    tx: Option<Sender<StreamMsg>>,
    log: Option<u64>,
}

#[derive(Default)]
struct Routes {
    posts: BTreeMap<StreamId, Post>,
    get: Option<Sender<StreamMsg>>,
    get_log: Option<u64>,
    backlog: VecDeque<(Vec<u8>, Carries)>,
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

/// A connection's response streams, shared by its sink and the request handlers.
#[derive(Clone)]
pub(crate) struct Streams {
    routes: Arc<Mutex<Routes>>,
    log: Option<Log>,
}

impl Streams {
    /// The streams of a connection whose events are logged in `log` (`None`: not resumable).
    pub(crate) fn new(log: Option<Log>) -> Self {
        Self { routes: Arc::default(), log }
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
        let (tx, rx) = channel();
        self.lock().posts.insert(stream, Post { tx: Some(tx), log: None });
        rx
    }

    /// Opens the log stream of a POST whose reply turned into SSE; its id, if the session
    /// logs.
    pub(crate) fn log_post(&self, stream: StreamId) -> Option<u64> {
        let id = self.log.as_ref()?.open()?;
        if let Some(post) = self.lock().posts.get_mut(&stream) {
            post.log = Some(id);
        }
        Some(id)
    }

    /// The writer of a POST stream (or of the GET that resumed it) is gone before the stream
    /// ended. A logged stream is detached: what its writer had not taken yet, and what comes
    /// later, goes to the log for a GET to resume. Returns whether it was detached (`false`:
    /// not logged, forgotten; its remaining frames are dropped).
    ///
    /// `log_stream` is the log stream the writer wrote to, if any: the stream may have ended
    /// (its last frames still in `frames`) before the writer let go.
    pub(crate) fn release_post(&self, stream: StreamId, frames: &Receiver<StreamMsg>, log_stream: Option<u64>) -> bool {
        let mut routes = self.lock();
        let log_stream = routes.posts.get(&stream).and_then(|post| post.log).or(log_stream);
        let (Some(log), Some(log_stream)) = (self.log.as_ref(), log_stream) else {
            routes.posts.remove(&stream);
            return false;
        };
        // A GET that resumed the stream meanwhile owns it now: only this writer's channel is
        // detached, never the newer one's.
        if let Some(post) =
            routes.posts.get_mut(&stream).filter(|post| post.tx.as_ref().is_some_and(|tx| tx.feeds(frames)))
        {
            post.tx = None;
        }
        // Under the routes lock, so these land in the log before anything the sink appends.
        while let Ok(msg) = frames.try_recv() {
            match msg {
                StreamMsg::Frame(payload, _) => {
                    let _ = log.append(log_stream, &payload);
                }
                StreamMsg::Done => {
                    log.close(log_stream);
                    routes.posts.remove(&stream);
                    break;
                }
                StreamMsg::Disconnect => {}
            }
        }
        true
    }

    /// Opens the GET stream: the backlog first, then what comes. A GET stream already open
    /// is ended (the client reconnected).
    pub(crate) fn open_get(&self) -> Receiver<StreamMsg> {
        let mut routes = self.lock();
        Self::attach_get(&mut routes)
    }

    fn attach_get(routes: &mut Routes) -> Receiver<StreamMsg> {
        if let Some(old) = routes.get.take() {
            let _ = old.send(StreamMsg::Done);
        }
        let (tx, rx) = channel();
        for (payload, carries) in routes.backlog.drain(..) {
            let _ = tx.send(StreamMsg::Frame(payload, carries));
        }
        routes.get = Some(tx);
        rx
    }

    /// The GET stream's log stream, opened on first use; `None` if the session does not log.
    pub(crate) fn get_log(&self) -> Option<u64> {
        let log = self.log.as_ref()?;
        let mut routes = self.lock();
        if routes.get_log.is_none() {
            routes.get_log = log.open();
        }
        routes.get_log
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
        if routes.get_log == Some(after.stream) {
            let frames = Self::attach_get(&mut routes);
            return Some(Resumed { events: replay.events, frames: Some(frames), log: after.stream, post: None });
        }
        let post = routes.posts.iter_mut().find(|(_, post)| post.log == Some(after.stream));
        let frames = match post {
            Some((&stream, post)) if !replay.closed => {
                let (tx, rx) = channel();
                // A writer still attached (the client reconnected early) loses the stream.
                post.tx = Some(tx);
                Some((stream, rx))
            }
            _ => None,
        };
        let (post, frames) = frames.map_or((None, None), |(stream, rx)| (Some(stream), Some(rx)));
        Some(Resumed { events: replay.events, frames, log: after.stream, post })
    }

    /// Ends every stream (the session is gone).
    pub(crate) fn close_all(&self) {
        let mut routes = self.lock();
        for (_, post) in std::mem::take(&mut routes.posts) {
            if let Some(tx) = post.tx {
                let _ = tx.send(StreamMsg::Done);
            }
        }
        if let Some(tx) = routes.get.take() {
            let _ = tx.send(StreamMsg::Done);
        }
    }
}

impl FrameSink for Streams {
    fn send(&mut self, frames: Vec<Outgoing>) -> io::Result<()> {
        let mut routes = self.lock();
        for frame in frames {
            match frame {
                Outgoing::Frame(Route::Stream(stream), payload, carries) => match routes.posts.get(&stream) {
                    Some(Post { tx: Some(tx), .. }) => {
                        let _ = tx.send(StreamMsg::Frame(payload, carries));
                    }
                    Some(Post { tx: None, log: Some(log_stream) }) => {
                        if let Some(log) = &self.log {
                            let _ = log.append(*log_stream, &payload);
                        }
                    }
                    _ => {}
                },
                Outgoing::Frame(Route::Connection, payload, carries) => {
                    // A send that fails hands the frame back, for the backlog.
                    let unsent = match routes.get.as_ref() {
                        Some(tx) => tx.send(StreamMsg::Frame(payload, carries)).err(),
                        None => Some(StreamMsg::Frame(payload, carries)),
                    };
                    if let Some(StreamMsg::Frame(payload, carries)) = unsent {
                        routes.get = None;
                        if routes.backlog.len() == MAX_BACKLOG {
                            routes.backlog.pop_front();
                        }
                        routes.backlog.push_back((payload, carries));
                    }
                }
                Outgoing::StreamDone(stream) => match routes.posts.remove(&stream) {
                    Some(Post { tx: Some(tx), .. }) => {
                        let _ = tx.send(StreamMsg::Done);
                    }
                    Some(Post { tx: None, log: Some(log_stream) }) => {
                        if let Some(log) = &self.log {
                            log.close(log_stream);
                        }
                    }
                    _ => {}
                },
                Outgoing::StreamDisconnect(stream) => {
                    if let Some(Post { tx: Some(tx), .. }) = routes.posts.get(&stream) {
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
        assert!(streams.release_post(StreamId(1), &rx, None));
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
        assert!(streams.release_post(StreamId(5), &rx, None));
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
        assert!(streams.release_post(StreamId(6), &rx, Some(log_stream)), "detached, not cancelled");
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
        assert!(streams.release_post(StreamId(2), &rx, None));
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
        assert!(!streams.release_post(StreamId(3), &rx, None));
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
