//! Where a connection's frames go over HTTP: each POST's response stream, and the legacy
//! GET stream (or a bounded backlog while none is open).

use std::collections::{BTreeMap, VecDeque};
use std::io;
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex, PoisonError};

use talaria_core::session::{Route, StreamId};

use crate::conn::{FrameSink, Outgoing};

/// What an HTTP response stream receives.
pub(crate) enum StreamMsg {
    /// A JSON text.
    Frame(Vec<u8>),
    /// The session is done with the stream.
    Done,
}

/// The most server messages held for a GET stream that is not open.
const MAX_BACKLOG: usize = 1024;

#[derive(Default)]
struct Routes {
    posts: BTreeMap<StreamId, Sender<StreamMsg>>,
    get: Option<Sender<StreamMsg>>,
    backlog: VecDeque<Vec<u8>>,
}

/// A connection's response streams, shared by its sink and the request handlers.
#[derive(Clone, Default)]
pub(crate) struct Streams(Arc<Mutex<Routes>>);

impl Streams {
    fn lock(&self) -> std::sync::MutexGuard<'_, Routes> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Registers a POST's response stream; its frames arrive on the receiver.
    pub(crate) fn open_post(&self, stream: StreamId) -> Receiver<StreamMsg> {
        let (tx, rx) = channel();
        self.lock().posts.insert(stream, tx);
        rx
    }

    /// Forgets a POST's stream (its client went away).
    pub(crate) fn close_post(&self, stream: StreamId) {
        self.lock().posts.remove(&stream);
    }

    /// Opens the GET stream: the backlog first, then what comes. A GET stream already open
    /// is ended (the client reconnected).
    pub(crate) fn open_get(&self) -> Receiver<StreamMsg> {
        let mut routes = self.lock();
        if let Some(old) = routes.get.take() {
            let _ = old.send(StreamMsg::Done);
        }
        let (tx, rx) = channel();
        for frame in routes.backlog.drain(..) {
            let _ = tx.send(StreamMsg::Frame(frame));
        }
        routes.get = Some(tx);
        rx
    }

    /// Ends every stream (the session is gone).
    pub(crate) fn close_all(&self) {
        let mut routes = self.lock();
        for (_, tx) in std::mem::take(&mut routes.posts) {
            let _ = tx.send(StreamMsg::Done);
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
                Outgoing::Frame(Route::Stream(stream), payload) => {
                    if let Some(tx) = routes.posts.get(&stream) {
                        let _ = tx.send(StreamMsg::Frame(payload));
                    }
                }
                Outgoing::Frame(Route::Connection, payload) => {
                    let sent = routes.get.as_ref().is_some_and(|tx| tx.send(StreamMsg::Frame(payload.clone())).is_ok());
                    if !sent {
                        routes.get = None;
                        if routes.backlog.len() == MAX_BACKLOG {
                            routes.backlog.pop_front();
                        }
                        routes.backlog.push_back(payload);
                    }
                }
                Outgoing::StreamDone(stream) => {
                    if let Some(tx) = routes.posts.remove(&stream) {
                        let _ = tx.send(StreamMsg::Done);
                    }
                }
            }
        }
        Ok(())
    }

    fn close(&mut self) {
        self.close_all();
    }
}
