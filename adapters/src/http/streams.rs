//! Where a connection's frames go over HTTP: each POST's response stream, the GET stream (or
//! a bounded backlog while none is open), and, for sessions that can resume, the event log.
//! The core's [`StreamRoutes`] decides; this module holds the writers' channels and the log,
//! and moves each frame where it was told.
//!
//! A writer's channel holds at most the server's frame queue limit (`Server::outbox_limit`)
//! in bytes. A writer that falls that far behind the session (its client reads slowly, or a
//! handler sends faster than any socket takes) is *cut*: it is told to end its response after
//! what it is writing, and what it had not taken goes on: a POST stream's to the event log
//! (opened by the cut if the reply had not turned into SSE yet; the client resumes it with
//! `Last-Event-ID`, from the priming event or, before 2025-11-25, from the one event the cut
//! response carries), the GET stream's to the backlog for the next GET. In a session without
//! a log the cut POST stream is forgotten, and its request cancelled when the response ends.
//! Memory stays bounded whatever the client does.
//!
//! A POST's SSE stream is logged from its first event (its log stream is opened when the reply
//! turns into SSE, or, for a client that knows no priming event, with that first event). When its writer goes away before the request is answered (the client
//! dropped, or the handler asked for the stream to end: SSE polling), the stream is *detached*:
//! the sink appends what the session still routes to it to the log (in order, off its own
//! thread if the store is remote: see [`Log::append_later`]), and a GET with
//! `Last-Event-ID` later *resumes* it, replaying the log and taking over the rest.

use super::chan::{channel, Receiver, Sender};
use std::io;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use talaria_core::http::event_log::{EventId, StoredEvent};
use talaria_core::http::relay::Claim;
use talaria_core::http::streams::{GetAttached, PostDelivery, PostEnding, Release, Resumption, StreamRoutes, WriterId};
use talaria_core::session::{Carries, Route, StreamId};

use super::processes::GetStreamPeers;
pub(crate) use super::session_log::Log;
use crate::conn::{FrameSink, Outgoing};

/// What an HTTP response stream receives.
pub(crate) enum StreamMsg {
    /// A JSON text, and what it carries.
    Frame(Vec<u8>, Carries),
    /// The session is done with the stream.
    Done,
    /// End the response now; the request goes on (its frames wait in the log).
    Disconnect,
    /// The writer lagged past its limit and was cut: end the response now. The stream goes
    /// on in this log stream (`None`: unlogged, it is forgotten), which the writer may not
    /// have opened yet (the cut came before its first frame).
    Cut(Option<u64>),
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
    /// Whether the log says the stream ended. A stream this process does not write that has
    /// not ended (`frames` is `None`) is another process's.
    pub(crate) closed: bool,
}

/// A connection's response streams, shared by its sink and the request handlers: the core's
/// [`StreamRoutes`] decides where each frame goes; this moves it there.
#[derive(Clone)]
pub(crate) struct Streams {
    routes: Arc<Mutex<Routes>>,
    log: Option<Log>,
    /// The most bytes of frames a writer's channel holds before the writer is cut.
    limit: usize,
    /// For a session shared between processes, the others that may hold its GET stream.
    peers: Option<Arc<GetStreamPeers>>,
}

impl Streams {
    /// The streams of a connection whose events are logged in `log` (`None`: not resumable),
    /// each writer holding at most `limit` bytes of frames not yet taken.
    pub(crate) fn new(log: Option<Log>, limit: usize) -> Self {
        Self::with_routes(StreamRoutes::new(log.is_some()), log, limit)
    }

    /// [`Streams::new`] for a session shared between processes: what is meant for a GET stream
    /// that is not open here is not held. The process holding the client's GET stream
    /// delivers, and this one's own server-to-client requests go there through `peers`.
    pub(crate) fn shared(log: Option<Log>, limit: usize, peers: Option<Arc<GetStreamPeers>>) -> Self {
        let mut streams = Self::with_routes(StreamRoutes::new(log.is_some()).with_max_backlog(0), log, limit);
        streams.peers = peers;
        streams
    }

    fn with_routes(decide: StreamRoutes, log: Option<Log>, limit: usize) -> Self {
        let routes = Arc::new(Mutex::new(Routes { decide, writers: Vec::new() }));
        Self { routes, log, limit: limit.max(1), peers: None }
    }

    /// The other processes that may hold the GET stream of this session, if it is shared.
    pub(crate) fn peers(&self) -> Option<&Arc<GetStreamPeers>> {
        self.peers.as_ref()
    }

    /// Ends the GET stream held here, if any (the client opened one on another process).
    pub(crate) fn end_get(&self) {
        let mut routes = self.lock();
        if let Some(writer) = routes.decide.end_get() {
            routes.end(writer);
        }
    }

    /// Sends `payload`, from another process, on the GET stream if it is open here; else
    /// nothing (it is never sent on from here, so no message circles between processes).
    pub(crate) fn deliver_to_get(&self, payload: Vec<u8>, carries: Carries) {
        let mut routes = self.lock();
        if !routes.decide.get_open() {
            return;
        }
        if let Some((writer, (payload, carries))) = routes.decide.get_frame((payload, carries)) {
            self.send_get(&mut routes, writer, payload, carries);
        }
    }

    /// Hands a frame to the GET stream's `writer`; a writer that lags past the limit, or
    /// whose channel refuses the frame (its reader is gone), is cut.
    fn send_get(&self, routes: &mut Routes, writer: WriterId, payload: Vec<u8>, carries: Carries) {
        if !self.has_room(routes, writer, payload.len()) {
            Self::cut_get(routes, writer, (payload, carries));
            return;
        }
        let size = payload.len();
        let refused =
            routes.writer(writer).and_then(|tx| tx.send_sized(StreamMsg::Frame(payload, carries), size).err());
        if let Some(StreamMsg::Frame(payload, carries)) = refused {
            Self::cut_get(routes, writer, (payload, carries));
        }
    }

    /// Whether the session's GET stream is open here.
    pub(crate) fn listening(&self) -> bool {
        self.lock().decide.get_open()
    }

    /// Whether `writer`'s channel has room for `bytes` more: it holds nothing (a frame larger
    /// than the limit still goes to a writer that keeps up), or stays within the limit. An
    /// unknown writer has none.
    fn has_room(&self, routes: &Routes, writer: WriterId, bytes: usize) -> bool {
        routes.writer(writer).is_some_and(|tx| {
            let queued = tx.queued_bytes();
            queued == 0 || queued.saturating_add(bytes) <= self.limit
        })
    }

    /// The writer of the POST `stream` lags past the limit: it is told to end its response
    /// (a disconnect, as SSE polling does), and what it had not taken goes to the stream's
    /// log with `payload`, as does the rest of the stream until the client resumes it. A
    /// stream cut before its reply turned into SSE gets its log stream here (the writer then
    /// finds it, see [`Streams::log_post`]). An unlogged session's frames are dropped; its
    /// request is cancelled once the response ends.
    fn cut_post(&self, routes: &mut Routes, stream: StreamId, writer: WriterId, payload: &[u8]) {
        let Some(tx) = routes.detach(writer) else { return };
        let unsent = tx.take_all();
        let log_stream = match (&self.log, routes.decide.post_log(stream)) {
            (Some(_), Some(log_stream)) => Some(log_stream),
            (Some(log), None) => log.open().inspect(|log_stream| routes.decide.log_post(stream, *log_stream)),
            (None, _) => None,
        };
        let _ = tx.send(StreamMsg::Cut(log_stream));
        let Release::Detached(log_stream) = routes.decide.release_post(stream, Some(writer), log_stream) else {
            return;
        };
        let Some(log) = &self.log else { return };
        for msg in unsent {
            if let StreamMsg::Frame(unsent, _) = msg {
                log.append_later(log_stream, unsent);
            }
        }
        log.append_later(log_stream, payload.to_vec());
    }

    /// The GET stream's writer lags past the limit (or is gone): it is told the stream is
    /// done, and what it had not taken waits in the backlog, with `frame`, for the next GET.
    fn cut_get(routes: &mut Routes, writer: WriterId, frame: (Vec<u8>, Carries)) {
        let unsent = routes.detach(writer).map(|tx| {
            let unsent = tx.take_all();
            let _ = tx.send(StreamMsg::Done);
            unsent
        });
        for msg in unsent.into_iter().flatten() {
            if let StreamMsg::Frame(payload, carries) = msg {
                routes.decide.get_gone(writer, (payload, carries));
            }
        }
        routes.decide.get_gone(writer, frame);
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

    /// Opens the log stream of a POST whose reply turned into SSE, noting `claim` (who writes
    /// it) if given; its id, if the session logs.
    pub(crate) fn log_post(&self, stream: StreamId, claim: Option<&[u8]>) -> Option<u64> {
        let log = self.log.as_ref()?;
        let id = match claim {
            Some(claim) => log.open_claimed(claim)?,
            None => log.open()?,
        };
        self.lock().decide.log_post(stream, id);
        Some(id)
    }

    /// Logs `payload`, the first event of the POST `stream`, on a log stream opened with it
    /// (noting `claim`), or on the one a cut opened meanwhile. Under the routes lock (as a cut
    /// logs), so that a cut cannot open a second log stream beside it: the event's id, if the
    /// session logs and the store took it.
    pub(crate) fn log_first_event(
        &self,
        stream: StreamId,
        claim: Option<&[u8]>,
        payload: &[u8],
        last: bool,
    ) -> Option<EventId> {
        let log = self.log.as_ref()?;
        let mut routes = self.lock();
        if let Some(opened) = routes.decide.post_log(stream) {
            return if last { log.append_last(opened, payload) } else { log.append(opened, payload) };
        }
        let id = log.open_with_event(claim, payload, last)?;
        routes.decide.log_post(stream, id.stream);
        Some(id)
    }

    /// The first event logged on `log_stream`, if the log still has it.
    pub(crate) fn first_logged(&self, log_stream: u64) -> Option<StoredEvent> {
        let log = self.log.as_ref()?;
        let replay = log.replay_after(EventId::start(log_stream))?;
        replay.events.into_iter().next()
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
        // Under the routes lock, so these are queued before anything the sink appends.
        while let Ok(msg) = frames.try_recv() {
            match msg {
                StreamMsg::Frame(payload, _) => log.append_later(log_stream, payload),
                StreamMsg::Done => {
                    log.close_later(log_stream);
                    break;
                }
                StreamMsg::Disconnect | StreamMsg::Cut(_) => {}
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
            // Shared between processes: marked as the GET stream, for a process the client
            // resumes it on to take it over.
            let opened = match &self.peers {
                Some(peers) => log.open_claimed(&peers.get_claim()),
                None => log.open(),
            };
            routes.decide.set_get_log(opened?);
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
        let replay = log.replay_after(after)?;
        let mut resumption = routes.decide.resume(after.stream, replay.closed)?;
        // The session's GET stream, held by another process until now: it goes on here, in
        // the same log stream.
        if matches!(resumption, Resumption::Ended)
            && !replay.closed
            && self.peers.is_some()
            && is_get_stream(log, after)
        {
            routes.decide.set_get_log(after.stream);
            resumption = routes.decide.resume(after.stream, false)?;
        }
        let (frames, post) = match resumption {
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
        Some(Resumed { events: replay.events, frames, log: after.stream, post, closed: replay.closed })
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

/// Whether the log stream of `after` is a GET stream, by its claim (see [`Claim`]).
fn is_get_stream(log: &Log, after: EventId) -> bool {
    log.claim_of(after.stream).ok().flatten().as_deref().and_then(Claim::decode).is_some_and(|claim| claim.get)
}

impl FrameSink for Streams {
    fn send(&mut self, frames: Vec<Outgoing>) -> io::Result<()> {
        let mut routes = self.lock();
        // Meant for a GET stream another process holds.
        let mut elsewhere = Vec::new();
        for frame in frames {
            match frame {
                Outgoing::Frame(Route::Stream(stream), payload, carries) => match routes.decide.post_frame(stream) {
                    PostDelivery::Writer(writer) if self.has_room(&routes, writer, payload.len()) => {
                        if let Some(tx) = routes.writer(writer) {
                            let size = payload.len();
                            let _ = tx.send_sized(StreamMsg::Frame(payload, carries), size);
                        }
                    }
                    PostDelivery::Writer(writer) => self.cut_post(&mut routes, stream, writer, &payload),
                    PostDelivery::Log(log_stream) => {
                        if let Some(log) = &self.log {
                            log.append_later(log_stream, payload);
                        }
                    }
                    PostDelivery::Dropped => {}
                },
                Outgoing::Frame(Route::Connection, payload, carries)
                    if self.peers.is_some() && !routes.decide.get_open() =>
                {
                    elsewhere.push((payload, carries));
                }
                Outgoing::Frame(Route::Connection, payload, carries) => {
                    let Some((writer, (payload, carries))) = routes.decide.get_frame((payload, carries)) else {
                        continue;
                    };
                    self.send_get(&mut routes, writer, payload, carries);
                }
                Outgoing::StreamDone(stream) => match routes.decide.post_done(stream) {
                    PostEnding::Writer(writer) => routes.end(writer),
                    PostEnding::Log(log_stream) => {
                        if let Some(log) = &self.log {
                            log.close_later(log_stream);
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
        drop(routes);
        if let (Some(peers), false) = (&self.peers, elsewhere.is_empty()) {
            peers.forward(&elsewhere);
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
    #![allow(clippy::unwrap_used, clippy::panic)]
    use talaria_core::http::event_log::{MemoryEventStore, Retention};
    use talaria_core::http::relay::{Notice, Relay};

    use super::*;
    use crate::http::store_pool::SharedEventStore;

    fn logged() -> Streams {
        let store = SharedEventStore::new(MemoryEventStore::new(Retention::default()));
        Streams::new(Some(Log::new(store, "s", false)), 1 << 20)
    }

    fn frame(stream: u64, text: &str) -> Outgoing {
        Outgoing::text(Route::Stream(StreamId(stream)), text)
    }

    /// Every process in this address space: notices published are kept, in order.
    #[derive(Default)]
    struct Kept(Mutex<Vec<Notice>>);

    impl Relay for Kept {
        fn publish(&self, _session: &str, frames: &[u8]) {
            self.0.lock().unwrap().push(Notice::decode(frames).unwrap());
        }
        fn subscribe(&self, _deliver: talaria_core::http::relay::Deliver) {}
    }

    /// A session shared between processes, seen from `process`, on `relay`.
    fn shared_on(relay: &Arc<Kept>, process: &str) -> Streams {
        let store = SharedEventStore::new(MemoryEventStore::new(Retention::default()));
        let relay: Arc<dyn Relay> = relay.clone();
        Streams::shared(Some(Log::new(store, "s", false)), 1 << 20, Some(GetStreamPeers::new(relay, "s", process)))
    }

    fn to_get(text: &str) -> Outgoing {
        let carries = Carries::from(talaria_core::jsonrpc::Message::from_slice(text.as_bytes()).unwrap());
        Outgoing::Frame(Route::Connection, text.as_bytes().to_vec(), carries)
    }

    #[test]
    fn a_request_for_a_get_stream_held_elsewhere_goes_there_and_only_there() {
        let relay = Arc::new(Kept::default());
        let (mut asking, holding, idle) = (shared_on(&relay, "a-"), shared_on(&relay, "b-"), shared_on(&relay, "c-"));
        let get = holding.open_get();
        // The asking process holds no GET stream: its own request travels, a notification
        // every copy of the session sends alike does not.
        let ping = r#"{"jsonrpc":"2.0","id":"a-1","method":"ping"}"#;
        let changed = r#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#;
        asking.send(vec![to_get(ping), to_get(changed)]).unwrap();
        let waited = std::time::Instant::now();
        while relay.0.lock().unwrap().is_empty() && waited.elapsed() < std::time::Duration::from_secs(5) {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
        let published = std::mem::take(&mut *relay.0.lock().unwrap());
        let [Notice::ForGetStream { session, frame }] = &published[..] else { panic!("{published:?}") };
        assert_eq!((session.as_str(), frame.as_str()), ("s", ping));
        // Every process hears it; the one holding the stream sends it, the others drop it.
        for streams in [&holding, &idle] {
            let carries = Carries::from(talaria_core::jsonrpc::Message::from_slice(frame.as_bytes()).unwrap());
            streams.deliver_to_get(frame.clone().into_bytes(), carries);
        }
        assert!(matches!(get.try_recv(), Ok(StreamMsg::Frame(p, _)) if p == ping.as_bytes()));
        assert!(get.try_recv().is_err(), "sent once");
        assert!(relay.0.lock().unwrap().is_empty(), "a delivered frame is never sent on again");
    }

    #[test]
    fn the_newest_get_stream_of_a_shared_session_is_the_one_that_stays() {
        let relay = Arc::new(Kept::default());
        let (here, there) = (shared_on(&relay, "a-"), shared_on(&relay, "b-"));
        here.peers().unwrap().expect_announcement();
        let get = here.open_get();
        here.peers().unwrap().announce();
        // Another process's stream, announced before this one's announcement came back, is
        // older: this one stays.
        assert!(!here.peers().unwrap().heard_opened("b-"));
        assert!(!here.peers().unwrap().heard_opened("a-"), "its own announcement, back");
        // One announced after it is newer: this one ends.
        there.peers().unwrap().expect_announcement();
        there.open_get();
        there.peers().unwrap().announce();
        assert!(here.peers().unwrap().heard_opened("b-"));
        here.end_get();
        assert!(matches!(get.try_recv(), Ok(StreamMsg::Done)));
        assert!(!here.listening());
    }

    #[test]
    fn a_detached_post_stream_is_logged_and_resumed_in_order() {
        let mut streams = logged();
        let rx = streams.open_post(StreamId(1));
        let log_stream = streams.log_post(StreamId(1), None).unwrap();
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
        let log_stream = streams.log_post(StreamId(5), None).unwrap();
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
        let log_stream = streams.log_post(StreamId(6), None).unwrap();
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
        let log_stream = streams.log_post(StreamId(2), None).unwrap();
        assert!(matches!(streams.release_post(StreamId(2), &rx, None), Release::Detached(_)));
        streams.send(vec![frame(2, "result"), Outgoing::StreamDone(StreamId(2))]).unwrap();
        let resumed = streams.resume(EventId::start(log_stream)).unwrap();
        assert_eq!(resumed.events.len(), 1);
        assert!(resumed.frames.is_none(), "nothing more will come");
    }

    #[test]
    fn unlogged_streams_are_forgotten_and_unknown_ids_refused() {
        let mut streams = Streams::new(None, 1 << 20);
        let rx = streams.open_post(StreamId(3));
        assert!(streams.log_post(StreamId(3), None).is_none());
        assert_eq!(streams.release_post(StreamId(3), &rx, None), Release::Forgotten);
        streams.send(vec![frame(3, "lost")]).unwrap();
        assert!(streams.resume(EventId::start(1)).is_none());
        assert!(logged().resume(EventId::new(9, 0)).is_none());
    }

    /// Whatever `rx` holds now.
    fn held(rx: &Receiver<StreamMsg>) -> Vec<String> {
        std::iter::from_fn(|| rx.try_recv().ok())
            .map(|msg| match msg {
                StreamMsg::Frame(payload, _) => String::from_utf8(payload).unwrap(),
                StreamMsg::Done => "<done>".into(),
                StreamMsg::Disconnect => "<disconnect>".into(),
                StreamMsg::Cut(log) => format!("<cut {log:?}>"),
            })
            .collect()
    }

    /// Streams whose writers hold at most 10 bytes, logged or not.
    fn tight(logged: bool) -> Streams {
        let store = SharedEventStore::new(MemoryEventStore::new(Retention::default()));
        Streams::new(logged.then(|| Log::new(store, "s", false)), 10)
    }

    #[test]
    fn a_post_writer_that_lags_is_cut_and_its_frames_logged_for_resumption() {
        let mut streams = tight(true);
        let rx = streams.open_post(StreamId(1));
        let log_stream = streams.log_post(StreamId(1), None).unwrap();
        let first = streams.log().unwrap().append(log_stream, b"written").unwrap();
        // The writer takes nothing: the third frame goes past 10 bytes.
        streams.send(vec![frame(1, "aaaa"), frame(1, "bbbb"), frame(1, "cccc"), frame(1, "dddd")]).unwrap();
        let cut = format!("<cut {:?}>", Some(log_stream));
        assert_eq!(held(&rx), [cut], "only told to end, and where its stream goes on: nothing else is held for it");
        // The writer ends its response and lets go; the stream waits in the log.
        assert_eq!(streams.release_post(StreamId(1), &rx, Some(log_stream)), Release::Detached(log_stream));
        streams.send(vec![frame(1, "eeee"), Outgoing::StreamDone(StreamId(1))]).unwrap();
        let resumed = streams.resume(first).unwrap();
        let data: Vec<&[u8]> = resumed.events.iter().map(|e| &e.data[..]).collect();
        assert_eq!(data, [&b"aaaa"[..], b"bbbb", b"cccc", b"dddd", b"eeee"], "nothing lost, in order");
        assert!(resumed.frames.is_none(), "and complete");
    }

    #[test]
    fn a_post_writer_cut_before_its_first_frame_finds_its_stream_in_a_log_the_cut_opened() {
        let mut streams = tight(true);
        let rx = streams.open_post(StreamId(5));
        // The whole burst, and the stream's end, before the writer takes anything.
        let burst = vec![frame(5, "aaaa"), frame(5, "bbbb"), frame(5, "cccc"), Outgoing::StreamDone(StreamId(5))];
        streams.send(burst).unwrap();
        let Ok(StreamMsg::Cut(Some(log_stream))) = rx.try_recv() else { panic!("told to end, with a log stream") };
        assert_eq!(
            streams.first_logged(log_stream).map(|e| e.data),
            Some(b"aaaa".to_vec()),
            "the cut response's event"
        );
        assert_eq!(streams.release_post(StreamId(5), &rx, Some(log_stream)), Release::Detached(log_stream));
        let resumed = streams.resume(EventId::start(log_stream)).unwrap();
        let data: Vec<&[u8]> = resumed.events.iter().map(|e| &e.data[..]).collect();
        assert_eq!(data, [&b"aaaa"[..], b"bbbb", b"cccc"], "nothing lost, in order");
        assert!(resumed.frames.is_none(), "and complete");
    }

    #[test]
    fn an_unlogged_post_writer_that_lags_is_cut_and_the_rest_dropped() {
        let mut streams = tight(false);
        let rx = streams.open_post(StreamId(2));
        streams.send(vec![frame(2, "aaaa"), frame(2, "bbbb")]).unwrap();
        assert_eq!(rx.try_recv().ok().map(|_| ()), Some(()), "the writer took one");
        streams.send(vec![frame(2, "cccc"), frame(2, "dddddddd"), frame(2, "later")]).unwrap();
        assert_eq!(held(&rx), ["<cut None>"], "nowhere to go on");
        assert_eq!(streams.release_post(StreamId(2), &rx, None), Release::Forgotten, "its request is cancelled");
    }

    #[test]
    fn a_frame_larger_than_the_limit_reaches_a_writer_that_keeps_up() {
        let mut streams = tight(false);
        let rx = streams.open_post(StreamId(4));
        streams.send(vec![frame(4, "a reply of more than ten bytes")]).unwrap();
        assert_eq!(held(&rx), ["a reply of more than ten bytes"]);
    }

    #[test]
    fn a_get_writer_that_lags_is_ended_and_the_next_get_gets_what_it_missed() {
        let mut streams = tight(false);
        let rx = streams.open_get();
        let notes: Vec<Outgoing> =
            ["aaaa", "bbbb", "cccc"].iter().map(|t| Outgoing::text(Route::Connection, t)).collect();
        streams.send(notes).unwrap();
        assert_eq!(held(&rx), ["<done>"]);
        let next = streams.open_get();
        assert_eq!(held(&next), ["aaaa", "bbbb", "cccc"]);
    }

    #[test]
    fn disconnect_reaches_the_writer() {
        let mut streams = logged();
        let rx = streams.open_post(StreamId(4));
        streams.send(vec![Outgoing::StreamDisconnect(StreamId(4))]).unwrap();
        assert!(matches!(rx.recv().unwrap(), StreamMsg::Disconnect));
    }
}
