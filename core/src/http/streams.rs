//! Which HTTP response stream gets which frame of a session: each POST's stream while a writer
//! is attached to it, its event log once the writer left (the stream is *detached*), the GET
//! stream, or a bounded backlog while no GET stream is open; and who owns a stream a GET with
//! `Last-Event-ID` resumes.
//!
//! [`StreamRoutes`] only decides. Writers are the adapter's (a channel to a response body),
//! named here by [`WriterId`]; the event log is the adapter's [`EventStore`], named by its
//! log stream numbers. The adapter asks where a frame goes, then hands it there.
//!
//! [`EventStore`]: super::event_log::EventStore

use crate::alloc_prelude::*;
use alloc::collections::{BTreeMap, VecDeque};

use crate::session::{Carries, StreamId};

/// How many server messages wait for a GET stream that is not open, unless told otherwise;
/// past it the oldest are dropped.
pub const DEFAULT_MAX_BACKLOG: usize = 1024;

/// One writer the adapter attached to a response stream (a POST's or the GET's).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct WriterId(u64);

/// A frame waiting for the GET stream: the JSON text and what it carries.
pub type HeldFrame = (Vec<u8>, Carries);

/// Where a frame for a POST's stream goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PostDelivery {
    /// To the writer attached to the stream.
    Writer(WriterId),
    /// To this log stream: the stream is detached, for a GET to resume.
    Log(u64),
    /// Nowhere: the stream is gone, or was never logged.
    Dropped,
}

/// How a POST stream ends (the session is done with it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PostEnding {
    /// Tell this writer the stream is done.
    Writer(WriterId),
    /// Close this log stream: the detached stream is complete.
    Log(u64),
    /// Nothing to tell.
    Nothing,
}

/// What becomes of a POST stream whose writer left before it ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Release {
    /// It is logged: what the writer had not taken, and what comes later, goes to this log
    /// stream until a GET resumes it.
    Detached(u64),
    /// It is not logged: forgotten. Its request is cancelled by closing the stream (in the
    /// stateless era, the only cancellation there is).
    Forgotten,
}

/// A GET stream attached (a new one, or the GET stream resumed).
#[derive(Debug, PartialEq, Eq)]
pub struct GetAttached {
    /// The new writer.
    pub writer: WriterId,
    /// The GET stream's writer it replaces, if one was attached: tell it the stream is done.
    pub replaced: Option<WriterId>,
    /// What waited for a GET stream, oldest first: send it to the new writer first.
    pub backlog: Vec<HeldFrame>,
}

/// What a GET with `Last-Event-ID` takes over.
#[derive(Debug, PartialEq, Eq)]
pub enum Resumption {
    /// The GET stream.
    Get(GetAttached),
    /// A POST stream whose request is still running: the rest of its frames go to `writer`.
    Post {
        /// The POST stream.
        stream: StreamId,
        /// The new writer.
        writer: WriterId,
        /// A writer still attached (the client reconnected early): it loses the stream.
        replaced: Option<WriterId>,
    },
    /// A stream that has ended: replay the log, then end.
    Ended,
}

/// A POST stream's route: its writer while one is attached, its log stream once it is SSE.
#[derive(Debug, Clone, Copy)]
struct PostRoute {
    writer: Option<WriterId>,
    log: Option<u64>,
}

/// The routing state of one session's response streams.
///
/// # Examples
///
/// ```
/// use talaria_core::http::streams::{PostDelivery, Release, StreamRoutes};
/// use talaria_core::session::StreamId;
///
/// let mut routes = StreamRoutes::new(true);
/// let writer = routes.open_post(StreamId(1));
/// assert_eq!(routes.post_frame(StreamId(1)), PostDelivery::Writer(writer));
///
/// // The reply turned into SSE, logged on log stream 7; then the client went away.
/// routes.log_post(StreamId(1), 7);
/// assert_eq!(routes.release_post(StreamId(1), Some(writer), None), Release::Detached(7));
/// assert_eq!(routes.post_frame(StreamId(1)), PostDelivery::Log(7));
/// ```
#[derive(Debug)]
pub struct StreamRoutes {
    /// Whether the session's events are logged (it can resume).
    logged: bool,
    posts: BTreeMap<StreamId, PostRoute>,
    get: Option<WriterId>,
    get_log: Option<u64>,
    backlog: VecDeque<HeldFrame>,
    max_backlog: usize,
    next_writer: u64,
}

impl StreamRoutes {
    /// The routes of a session whose events are `logged` (it can resume streams) or not.
    #[must_use]
    pub const fn new(logged: bool) -> Self {
        Self {
            logged,
            posts: BTreeMap::new(),
            get: None,
            get_log: None,
            backlog: VecDeque::new(),
            max_backlog: DEFAULT_MAX_BACKLOG,
            next_writer: 0,
        }
    }

    /// Keeps at most `frames` for a GET stream that is not open. With `0` they are dropped:
    /// for a session shared between processes, where the process that holds the client's GET
    /// stream delivers, and a backlog here could only arrive late, or twice.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::http::streams::StreamRoutes;
    /// use talaria_core::jsonrpc::RequestId;
    /// use talaria_core::session::Carries;
    ///
    /// let mut routes = StreamRoutes::new(true).with_max_backlog(0);
    /// let note = (b"{}".to_vec(), Carries::Result { id: RequestId::Number(1) });
    /// assert!(routes.get_frame(note).is_none(), "no GET stream here");
    /// assert!(routes.open_get().backlog.is_empty(), "nothing held for a later one");
    /// ```
    #[must_use]
    pub const fn with_max_backlog(mut self, frames: usize) -> Self {
        self.max_backlog = frames;
        self
    }

    /// Whether a GET stream is open.
    #[must_use]
    pub const fn get_open(&self) -> bool {
        self.get.is_some()
    }

    fn new_writer(&mut self) -> WriterId {
        self.next_writer += 1;
        WriterId(self.next_writer)
    }

    /// Registers a POST's response stream, its writer attached.
    pub fn open_post(&mut self, stream: StreamId) -> WriterId {
        let writer = self.new_writer();
        self.posts.insert(stream, PostRoute { writer: Some(writer), log: None });
        writer
    }

    /// The POST's reply turned into SSE, logged on `log`.
    pub fn log_post(&mut self, stream: StreamId, log: u64) {
        if let Some(post) = self.posts.get_mut(&stream) {
            post.log = Some(log);
        }
    }

    /// The log stream of the POST `stream`, once it has one.
    #[must_use]
    pub fn post_log(&self, stream: StreamId) -> Option<u64> {
        self.posts.get(&stream).and_then(|post| post.log)
    }

    /// Where a frame the session routes to the POST `stream` goes.
    #[must_use]
    pub fn post_frame(&self, stream: StreamId) -> PostDelivery {
        match self.posts.get(&stream) {
            Some(PostRoute { writer: Some(writer), .. }) => PostDelivery::Writer(*writer),
            Some(PostRoute { writer: None, log: Some(log) }) => PostDelivery::Log(*log),
            _ => PostDelivery::Dropped,
        }
    }

    /// The session is done with the POST `stream`; it is forgotten.
    pub fn post_done(&mut self, stream: StreamId) -> PostEnding {
        match self.forget_post(stream) {
            Some(PostRoute { writer: Some(writer), .. }) => PostEnding::Writer(writer),
            Some(PostRoute { writer: None, log: Some(log) }) => PostEnding::Log(log),
            _ => PostEnding::Nothing,
        }
    }

    /// Removes the POST `stream`'s route. The last one out frees the map's node, so that an
    /// idle session holds no empty one (a few hundred bytes each, over thousands of sessions).
    fn forget_post(&mut self, stream: StreamId) -> Option<PostRoute> {
        let route = self.posts.remove(&stream);
        if self.posts.is_empty() {
            self.posts = BTreeMap::new();
        }
        route
    }

    /// The writer to tell to end the POST `stream` now (the request goes on), if one is
    /// attached.
    #[must_use]
    pub fn post_disconnect(&self, stream: StreamId) -> Option<WriterId> {
        self.posts.get(&stream).and_then(|post| post.writer)
    }

    /// The `writer` of the POST `stream` left before the stream ended (`None` if the adapter
    /// no longer knows which: it lost the stream to a newer one already). `log` is the log
    /// stream it wrote to, if any (the stream may have ended, its last frames still in the
    /// writer's channel, before the writer let go).
    ///
    /// A logged stream is detached, unless a newer writer (a GET that resumed it) owns it
    /// now: then only this writer lets go. The adapter moves what this writer had not taken
    /// to the log, and closes the log stream if that includes the stream's end.
    pub fn release_post(&mut self, stream: StreamId, writer: Option<WriterId>, log: Option<u64>) -> Release {
        let log = self.posts.get(&stream).and_then(|post| post.log).or(log);
        let Some(log) = log.filter(|_| self.logged) else {
            self.forget_post(stream);
            return Release::Forgotten;
        };
        if let Some(post) = self.posts.get_mut(&stream).filter(|post| writer.is_some() && post.writer == writer) {
            post.writer = None;
        }
        Release::Detached(log)
    }

    /// Where a frame for the GET stream goes: its writer, or (`None`) the backlog, where
    /// `frame` is kept (the oldest dropped past the limit).
    pub fn get_frame(&mut self, frame: HeldFrame) -> Option<(WriterId, HeldFrame)> {
        match self.get {
            Some(writer) => Some((writer, frame)),
            None => {
                self.hold(frame);
                None
            }
        }
    }

    /// The GET stream's writer is gone (its channel refused `frame`): the frame waits for the
    /// next GET stream, with whatever comes until then.
    pub fn get_gone(&mut self, writer: WriterId, frame: HeldFrame) {
        if self.get == Some(writer) {
            self.get = None;
        }
        self.hold(frame);
    }

    fn hold(&mut self, frame: HeldFrame) {
        if self.max_backlog == 0 {
            return;
        }
        if self.backlog.len() >= self.max_backlog {
            self.backlog.pop_front();
        }
        self.backlog.push_back(frame);
    }

    /// Opens the GET stream: a GET stream already open is replaced (the client reconnected),
    /// and the backlog goes to the new one first.
    pub fn open_get(&mut self) -> GetAttached {
        let writer = self.new_writer();
        let replaced = self.get.replace(writer);
        GetAttached { writer, replaced, backlog: self.backlog.drain(..).collect() }
    }

    /// Ends the GET stream, if one is open (the client opened one elsewhere: on another
    /// process sharing the session); its writer, to tell. What comes next waits in the
    /// backlog, as when the stream is gone.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::http::streams::StreamRoutes;
    ///
    /// let mut routes = StreamRoutes::new(true);
    /// let writer = routes.open_get().writer;
    /// assert_eq!(routes.end_get(), Some(writer));
    /// assert!(!routes.get_open());
    /// assert_eq!(routes.end_get(), None);
    /// ```
    pub fn end_get(&mut self) -> Option<WriterId> {
        self.get.take()
    }

    /// The GET stream's log stream, if it has one yet.
    #[must_use]
    pub const fn get_log(&self) -> Option<u64> {
        self.get_log
    }

    /// The GET stream is logged on `log` (opened on first use).
    pub fn set_get_log(&mut self, log: u64) {
        self.get_log = Some(log);
    }

    /// A GET with `Last-Event-ID` in log stream `log`, whose log says the stream `closed` or
    /// not: what it takes over. `None` if `log` is no stream of this session.
    pub fn resume(&mut self, log: u64, closed: bool) -> Option<Resumption> {
        if self.get_log == Some(log) {
            return Some(Resumption::Get(self.open_get()));
        }
        let found = self.posts.iter().find(|(_, post)| post.log == Some(log)).map(|(stream, _)| *stream);
        match found {
            Some(stream) if !closed => {
                let writer = self.new_writer();
                let post = self.posts.get_mut(&stream)?;
                let replaced = post.writer.replace(writer);
                Some(Resumption::Post { stream, writer, replaced })
            }
            _ => Some(Resumption::Ended),
        }
    }

    /// Ends every stream (the session is gone): the writers to tell.
    pub fn close_all(&mut self) -> Vec<WriterId> {
        let posts = core::mem::take(&mut self.posts).into_values().filter_map(|post| post.writer);
        posts.chain(self.get.take()).collect()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)]
    use proptest::prelude::*;

    use super::*;
    use crate::jsonrpc::RequestId;

    fn frame(n: i64) -> HeldFrame {
        (n.to_string().into_bytes(), Carries::Result { id: RequestId::Number(n) })
    }

    #[test]
    fn an_unlogged_post_stream_is_forgotten_when_its_writer_leaves() {
        let mut routes = StreamRoutes::new(false);
        let writer = routes.open_post(StreamId(1));
        routes.log_post(StreamId(1), 3);
        assert_eq!(routes.release_post(StreamId(1), Some(writer), None), Release::Forgotten);
        assert_eq!(routes.post_frame(StreamId(1)), PostDelivery::Dropped);
        assert_eq!(routes.post_done(StreamId(1)), PostEnding::Nothing);
    }

    #[test]
    fn a_post_stream_not_yet_sse_is_forgotten_even_in_a_logged_session() {
        let mut routes = StreamRoutes::new(true);
        let writer = routes.open_post(StreamId(1));
        assert_eq!(routes.release_post(StreamId(1), Some(writer), None), Release::Forgotten);
        let writer = routes.open_post(StreamId(2));
        assert_eq!(routes.release_post(StreamId(2), Some(writer), Some(9)), Release::Detached(9), "it wrote to log 9");
    }

    #[test]
    fn a_post_stream_knows_its_log_stream_once_it_has_one() {
        let mut routes = StreamRoutes::new(true);
        routes.open_post(StreamId(1));
        assert_eq!(routes.post_log(StreamId(1)), None);
        routes.log_post(StreamId(1), 5);
        assert_eq!(routes.post_log(StreamId(1)), Some(5));
        assert_eq!(routes.post_log(StreamId(2)), None, "an unknown stream has none");
    }

    #[test]
    fn a_detached_stream_is_logged_then_resumed_and_its_end_reaches_the_new_writer() {
        let mut routes = StreamRoutes::new(true);
        let first = routes.open_post(StreamId(1));
        routes.log_post(StreamId(1), 4);
        assert_eq!(routes.release_post(StreamId(1), Some(first), None), Release::Detached(4));
        assert_eq!(routes.post_frame(StreamId(1)), PostDelivery::Log(4));
        let Some(Resumption::Post { stream, writer, replaced }) = routes.resume(4, false) else { panic!() };
        assert_eq!((stream, replaced), (StreamId(1), None));
        assert_eq!(routes.post_frame(StreamId(1)), PostDelivery::Writer(writer));
        assert_eq!(routes.post_done(StreamId(1)), PostEnding::Writer(writer));
        assert_eq!(routes.resume(4, true), Some(Resumption::Ended), "the log still has it, complete");
    }

    #[test]
    fn an_old_writer_letting_go_does_not_detach_the_resumed_stream() {
        let mut routes = StreamRoutes::new(true);
        let old = routes.open_post(StreamId(1));
        routes.log_post(StreamId(1), 4);
        let Some(Resumption::Post { writer, replaced, .. }) = routes.resume(4, false) else { panic!() };
        assert_eq!(replaced, Some(old), "the client reconnected early");
        assert_eq!(routes.release_post(StreamId(1), Some(old), None), Release::Detached(4));
        assert_eq!(routes.post_frame(StreamId(1)), PostDelivery::Writer(writer), "the new writer keeps it");
    }

    #[test]
    fn a_detached_stream_that_ended_closes_its_log() {
        let mut routes = StreamRoutes::new(true);
        let writer = routes.open_post(StreamId(1));
        routes.log_post(StreamId(1), 4);
        let _ = routes.release_post(StreamId(1), Some(writer), None);
        assert_eq!(routes.post_done(StreamId(1)), PostEnding::Log(4));
        assert_eq!(routes.post_frame(StreamId(1)), PostDelivery::Dropped);
    }

    #[test]
    fn the_get_stream_takes_its_backlog_and_replaces_the_old_one() {
        let mut routes = StreamRoutes::new(false).with_max_backlog(2);
        assert_eq!(routes.get_frame(frame(1)), None);
        assert_eq!(routes.get_frame(frame(2)), None);
        assert_eq!(routes.get_frame(frame(3)), None);
        let first = routes.open_get();
        assert_eq!(first.backlog, vec![frame(2), frame(3)], "the oldest dropped past the limit");
        assert_eq!(first.replaced, None);
        assert_eq!(routes.get_frame(frame(4)), Some((first.writer, frame(4))));
        routes.get_gone(first.writer, frame(4));
        let second = routes.open_get();
        assert_eq!((second.replaced, second.backlog), (None, vec![frame(4)]));
        let third = routes.open_get();
        assert_eq!(third.replaced, Some(second.writer));
        routes.get_gone(second.writer, frame(5));
        assert_eq!(routes.get_frame(frame(6)), Some((third.writer, frame(6))), "a stale writer's loss changes nothing");
    }

    #[test]
    fn resuming_the_get_log_attaches_a_get_stream() {
        let mut routes = StreamRoutes::new(true);
        routes.set_get_log(2);
        assert_eq!(routes.get_log(), Some(2));
        assert!(matches!(routes.resume(2, false), Some(Resumption::Get(GetAttached { replaced: None, .. }))));
        assert_eq!(routes.resume(99, false), Some(Resumption::Ended), "a log stream of no open stream");
    }

    #[test]
    fn closing_tells_every_attached_writer() {
        let mut routes = StreamRoutes::new(true);
        let a = routes.open_post(StreamId(1));
        let b = routes.open_post(StreamId(2));
        routes.log_post(StreamId(2), 1);
        let _ = routes.release_post(StreamId(2), Some(b), None);
        let get = routes.open_get().writer;
        let mut told = routes.close_all();
        told.sort();
        assert_eq!(told, vec![a, get]);
        assert_eq!(routes.post_frame(StreamId(1)), PostDelivery::Dropped);
    }

    #[derive(Debug, Clone)]
    enum Op {
        Open(u8),
        Log(u8),
        Release(u8),
        Done(u8),
        Resume(u8),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            (0u8..4).prop_map(Op::Open),
            (0u8..4).prop_map(Op::Log),
            (0u8..4).prop_map(Op::Release),
            (0u8..4).prop_map(Op::Done),
            (0u8..4).prop_map(Op::Resume),
        ]
    }

    proptest! {
        /// Whatever happens to POST streams, a frame goes to at most one place, and only to a
        /// writer that is attached (the newest one of its stream).
        #[test]
        fn a_post_frame_goes_to_the_newest_writer_or_the_log(ops in proptest::collection::vec(op(), 0..40)) {
            let mut routes = StreamRoutes::new(true);
            let mut newest: BTreeMap<u8, WriterId> = BTreeMap::new();
            for op in ops {
                match op {
                    Op::Open(s) => { newest.insert(s, routes.open_post(StreamId(s.into()))); }
                    Op::Log(s) => routes.log_post(StreamId(s.into()), s.into()),
                    Op::Release(s) => if let Some(w) = newest.get(&s) {
                        if routes.release_post(StreamId(s.into()), Some(*w), None) == Release::Forgotten {
                            newest.remove(&s);
                        }
                    },
                    Op::Done(s) => { let _ = routes.post_done(StreamId(s.into())); newest.remove(&s); }
                    Op::Resume(s) => if let Some(Resumption::Post { writer, .. }) = routes.resume(s.into(), false) {
                        newest.insert(s, writer);
                    },
                }
                for s in 0u8..4 {
                    match routes.post_frame(StreamId(s.into())) {
                        PostDelivery::Writer(w) => prop_assert_eq!(Some(&w), newest.get(&s)),
                        PostDelivery::Log(log) => prop_assert_eq!(log, u64::from(s)),
                        PostDelivery::Dropped => {}
                    }
                }
            }
        }
    }
}
