//! A connection's outgoing queue and the writer that empties it.
//!
//! Whoever produces frames (a reader handling input, an application call, a timer) only
//! appends them here; it never waits for the peer. A sink that may block (a pipe, a socket)
//! gets a writer thread of its own, which takes everything queued at once and writes it, so a
//! busy connection writes a burst per syscall. Where the sink can write without waiting
//! ([`FrameSink::try_send`]), the producing thread first writes what the peer takes at once
//! and hands only the rest to the writer thread: a quiet connection costs no thread hand-off
//! per frame, and a stalled peer costs a producer nothing. A sink that never blocks (an HTTP
//! server's per-stream channels, the smol HTTP client's dispatching channel) is written on the
//! producing thread.
//!
//! The queue is bounded in bytes: [`Outbox::is_full`] tells callers to refuse new work, and
//! [`Outbox::wait_for_room`] / [`Outbox::room`] let a reader pause until the writer has caught
//! up. Which side pauses and which refuses is the connection's choice (see `conn.rs`).

use std::io;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::task::Waker;
use std::time::{Duration, Instant};

use talaria_core::session::{Carries, Route, StreamId};

/// How many bytes of frames a connection queues for its writer unless told otherwise.
pub const DEFAULT_OUTBOX_LIMIT: usize = 32 * 1024 * 1024;

/// One thing for a transport to write.
// Routes, what frames carry and the stream events are read by the HTTP transport only.
pub(crate) enum Outgoing {
    /// A JSON text for `route`, and what it carries (as the session said).
    Frame(
        #[cfg_attr(not(feature = "http"), allow(dead_code))] Route,
        Vec<u8>,
        #[cfg_attr(not(feature = "http"), allow(dead_code))] Carries,
    ),
    /// Every reply due on an HTTP stream was sent.
    StreamDone(#[cfg_attr(not(feature = "http"), allow(dead_code))] StreamId),
    /// End an HTTP stream early; the rest of its frames wait in its event log.
    StreamDisconnect(#[cfg_attr(not(feature = "http"), allow(dead_code))] StreamId),
    /// Answer a WebSocket ping with these bytes.
    #[cfg_attr(not(feature = "ws"), allow(dead_code))]
    Pong(Vec<u8>),
}

impl Outgoing {
    /// The bytes it holds, as counted against the limit.
    fn size(&self) -> usize {
        match self {
            Self::Frame(_, payload, _) | Self::Pong(payload) => payload.len(),
            Self::StreamDone(_) | Self::StreamDisconnect(_) => 0,
        }
    }

    /// A frame of `text` for `route` in tests, carrying what the text is (an error about an
    /// undecodable message if it is no JSON-RPC message).
    #[cfg(test)]
    pub(crate) fn text(route: Route, text: &str) -> Self {
        let carries = talaria_core::jsonrpc::Message::from_slice(text.as_bytes())
            .map_or(Carries::Error { id: None, code: talaria_core::jsonrpc::ErrorCode::PARSE_ERROR }, Carries::from);
        Self::Frame(route, text.as_bytes().to_vec(), carries)
    }
}

/// Where frames go: a pipe (one JSON text per line), a WebSocket (one per text message), the
/// other half of an in-memory pair, an HTTP response.
pub(crate) trait FrameSink: Send {
    /// Sends what [`FrameSink::try_send`] kept back, then `frames`, in order; may block until
    /// the peer takes them.
    fn send(&mut self, frames: Vec<Outgoing>) -> io::Result<()>;
    /// Whether [`FrameSink::try_send`] can write without waiting for the peer.
    fn tries(&self) -> bool {
        false
    }
    /// Sends what the peer takes at once of `frames` without waiting, and keeps the rest for
    /// the next [`FrameSink::send`]; `Ok(true)` if nothing was kept. Only called when
    /// [`FrameSink::tries`], and only when nothing is kept from before.
    fn try_send(&mut self, frames: Vec<Outgoing>) -> io::Result<bool> {
        self.send(frames).map(|()| true)
    }
    /// Ends the outgoing direction (closes stdin, sends a close frame). Idempotent.
    fn close(&mut self);
    /// Whether `send` returns at once whatever the peer does (it hands frames to channels):
    /// then it is called on the producing thread and no writer thread is started.
    fn never_blocks(&self) -> bool {
        false
    }
    /// Whether frames gain from leaving together, several in one write (a byte stream does):
    /// then a client with several calls in flight leaves its requests to the writer thread.
    /// A sink that says no has the producing thread always write its own request.
    fn batches(&self) -> bool {
        true
    }
    /// Whether each request is sent on a job of its own (one HTTP POST each), which the
    /// calling thread of a blocking call can carry out itself (see `caller_runs`).
    fn sends_apart(&self) -> bool {
        false
    }
}

/// What the writer does when the sink fails: tell the connection it is gone.
pub(crate) type OnBroken = Box<dyn Fn() + Send + Sync>;

#[derive(Default)]
struct Queue {
    frames: Vec<Outgoing>,
    /// Bytes queued or being written.
    bytes: usize,
    /// A thread is writing; others only append.
    writing: bool,
    /// The sink kept part of a tried write: only the writer thread writes until it is sent.
    leftover: bool,
    /// The bytes of the frames the sink kept part of.
    held: usize,
    /// The writer thread waits for frames (only then is a notify worth a syscall).
    idle: bool,
    /// Close the sink once what is queued is written.
    closing: bool,
    /// The sink was closed (after its last frame) or failed.
    done: bool,
    /// The sink failed: frames are dropped.
    broken: bool,
    /// Tasks waiting for room.
    wakers: Vec<Waker>,
    /// Threads blocked on `room` (only then is a notify worth a syscall: std's condvar makes
    /// one per notify, waiter or not, and this one is notified after every write).
    blocked: usize,
}

struct Shared {
    queue: Mutex<Queue>,
    /// The writer thread waits here for frames.
    work: Condvar,
    /// Blocked readers wait here for room, and closers for the end.
    room: Condvar,
    limit: usize,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// `written` bytes left the queue (or the sink failed): wake whoever waits for room.
    fn written(&self, written: usize, failed: bool) {
        let (wakers, wake_writer, blocked) = {
            let mut queue = self.lock();
            queue.bytes = queue.bytes.saturating_sub(written);
            queue.writing = false;
            queue.leftover = false;
            if failed {
                queue.broken = true;
                queue.frames.clear();
                queue.bytes = 0;
            }
            // The writer thread may have waited for a producer's try to end.
            let wake_writer = queue.idle && (queue.closing || queue.broken || !queue.frames.is_empty());
            (std::mem::take(&mut queue.wakers), wake_writer, queue.blocked > 0)
        };
        if wake_writer {
            self.work.notify_one();
        }
        if blocked {
            self.room.notify_all();
        }
        wakers.into_iter().for_each(Waker::wake);
    }

    fn finished(&self) {
        let (wakers, blocked) = {
            let mut queue = self.lock();
            queue.done = true;
            (std::mem::take(&mut queue.wakers), queue.blocked > 0)
        };
        if blocked {
            self.room.notify_all();
        }
        wakers.into_iter().for_each(Waker::wake);
    }

    /// Blocks on `room` until notified (or `limit` passed), counted among the blocked.
    fn wait_room<'a>(&self, queue: MutexGuard<'a, Queue>, limit: Option<Duration>) -> MutexGuard<'a, Queue> {
        let mut queue = queue;
        queue.blocked += 1;
        let mut queue = match limit {
            None => self.room.wait(queue).unwrap_or_else(PoisonError::into_inner),
            Some(limit) => self.room.wait_timeout(queue, limit).unwrap_or_else(PoisonError::into_inner).0,
        };
        queue.blocked -= 1;
        queue
    }

    /// Whether a paused reader may go on: the queue is back under half its limit, or nothing
    /// more will be written.
    fn roomy(&self, queue: &Queue) -> bool {
        queue.bytes <= self.limit / 2 || queue.broken || queue.done
    }
}

/// A connection's outgoing queue (see the module docs).
pub(crate) struct Outbox {
    shared: Arc<Shared>,
    /// The sink, when it never blocks and is written by the producing thread.
    inline: Option<Mutex<Box<dyn FrameSink>>>,
    /// The sink, shared with the writer thread, when producers try it first.
    tried: Option<Arc<Mutex<Box<dyn FrameSink>>>>,
    on_broken: Arc<OnBroken>,
    /// The sink's [`FrameSink::batches`].
    batches: bool,
    /// The sink's [`FrameSink::sends_apart`].
    sends_apart: bool,
}

impl Outbox {
    /// An outbox for `sink`, holding up to `limit` bytes before [`Outbox::is_full`]; a sink
    /// that may block gets a writer thread. `on_broken` runs (on the writing thread, no lock
    /// held) if the sink fails.
    pub(crate) fn new(sink: Box<dyn FrameSink>, limit: usize, on_broken: OnBroken) -> io::Result<Self> {
        let shared = Arc::new(Shared {
            queue: Mutex::new(Queue::default()),
            work: Condvar::new(),
            room: Condvar::new(),
            limit: limit.max(1),
        });
        let on_broken = Arc::new(on_broken);
        let (batches, sends_apart) = (sink.batches(), sink.sends_apart());
        if sink.never_blocks() {
            let inline = Some(Mutex::new(sink));
            return Ok(Self { shared, inline, tried: None, on_broken, batches, sends_apart });
        }
        let tries = sink.tries();
        let sink = Arc::new(Mutex::new(sink));
        let (writer, writes, broken) = (Arc::clone(&shared), Arc::clone(&sink), Arc::clone(&on_broken));
        std::thread::Builder::new()
            .name("talaria-write".into())
            .spawn(move || write_loop(&writer, &writes, &broken))?;
        Ok(Self { shared, inline: None, tried: tries.then_some(sink), on_broken, batches, sends_apart })
    }

    /// Whether the sink's frames gain from leaving together ([`FrameSink::batches`]).
    pub(crate) const fn batches(&self) -> bool {
        self.batches
    }

    /// Whether the sink sends each request on a job of its own ([`FrameSink::sends_apart`]).
    pub(crate) const fn sends_apart(&self) -> bool {
        self.sends_apart
    }

    /// Appends `frames` (in order; nothing if the sink failed). Call it while holding
    /// whatever orders the frames (the engine's lock), then [`Outbox::pump`] once that lock
    /// is released.
    pub(crate) fn push(&self, frames: impl IntoIterator<Item = Outgoing>) {
        let mut queue = self.shared.lock();
        if queue.broken || queue.closing {
            return;
        }
        for frame in frames {
            queue.bytes += frame.size();
            queue.frames.push(frame);
        }
    }

    /// Gets what is queued on its way: written on this thread when the sink never blocks, or
    /// as far as the peer takes it at once when the sink [`tries`](FrameSink::tries) (the
    /// rest goes to the writer thread), or else handed to the writer thread. Whoever is
    /// writing already picks up what was appended meanwhile.
    pub(crate) fn pump(&self) {
        let Some(sink) = &self.inline else {
            self.try_or_hand_over();
            return;
        };
        loop {
            let frames = {
                let mut queue = self.shared.lock();
                if queue.writing || queue.frames.is_empty() {
                    return;
                }
                queue.writing = true;
                std::mem::take(&mut queue.frames)
            };
            let size = frames.iter().map(Outgoing::size).sum();
            let failed = sink.lock().unwrap_or_else(PoisonError::into_inner).send(frames).is_err();
            self.shared.written(size, failed);
            if failed {
                (self.on_broken)();
                return;
            }
        }
    }

    /// Leaves what is queued to the writer thread (to a sink that never blocks: writes it
    /// here), so that it leaves together with whatever joins it meanwhile.
    pub(crate) fn hand_over(&self) {
        if self.inline.is_some() {
            self.pump();
            return;
        }
        let wake = {
            let queue = self.shared.lock();
            queue.idle && !queue.frames.is_empty()
        };
        if wake {
            self.shared.work.notify_one();
        }
    }

    /// [`Outbox::pump`] for a sink with a writer thread.
    fn try_or_hand_over(&self) {
        let Some(sink) = &self.tried else {
            self.hand_over();
            return;
        };
        loop {
            let frames = {
                let mut queue = self.shared.lock();
                if queue.writing || queue.leftover || queue.frames.is_empty() {
                    return;
                }
                queue.writing = true;
                std::mem::take(&mut queue.frames)
            };
            let size: usize = frames.iter().map(Outgoing::size).sum();
            // The sink's lock ends here: `on_broken` below runs with no lock held.
            let tried = sink.lock().unwrap_or_else(PoisonError::into_inner).try_send(frames);
            match tried {
                Ok(true) => self.shared.written(size, false),
                Ok(false) => {
                    let wake = {
                        let mut queue = self.shared.lock();
                        queue.writing = false;
                        queue.leftover = true;
                        queue.held = size;
                        queue.idle
                    };
                    if wake {
                        self.shared.work.notify_one();
                    }
                    return;
                }
                Err(_) => {
                    self.shared.written(size, true);
                    (self.on_broken)();
                    return;
                }
            }
        }
    }

    /// The most bytes it queues before [`Outbox::is_full`].
    pub(crate) fn limit(&self) -> usize {
        self.shared.limit
    }

    /// Bytes queued or being written.
    pub(crate) fn queued(&self) -> usize {
        self.shared.lock().bytes
    }

    /// Whether the queue holds its limit or more: new work should be refused.
    pub(crate) fn is_full(&self) -> bool {
        self.queued() >= self.shared.limit
    }

    /// Blocks until the queue is back under half its limit (or will never drain).
    pub(crate) fn wait_for_room(&self) {
        let mut queue = self.shared.lock();
        while !self.shared.roomy(&queue) {
            queue = self.shared.wait_room(queue, None);
        }
    }

    /// [`Outbox::wait_for_room`] as a future.
    #[cfg(any(test, all(feature = "smol", feature = "stdio", unix)))]
    pub(crate) fn room(&self) -> Until<'_> {
        Until { shared: &self.shared, ready: Shared::roomy }
    }

    /// Resolves once the sink was closed after its last frame (or failed): the future twin
    /// of [`Outbox::wait_closed`], without its time limit.
    #[cfg(any(test, all(feature = "smol", feature = "stdio", unix)))]
    pub(crate) fn closed(&self) -> Until<'_> {
        Until { shared: &self.shared, ready: |_, queue| queue.done || queue.broken }
    }

    /// Closes the sink once everything queued is written; returns at once.
    pub(crate) fn close(&self) {
        let wake = {
            let mut queue = self.shared.lock();
            if queue.closing {
                return;
            }
            queue.closing = true;
            queue.idle
        };
        if wake {
            self.shared.work.notify_one();
        }
        if let Some(sink) = &self.inline {
            // Another thread may be writing on this sink: its frames go before the close.
            let mut queue = self.shared.lock();
            while queue.writing {
                queue = self.shared.wait_room(queue, None);
            }
            drop(queue);
            self.pump();
            sink.lock().unwrap_or_else(PoisonError::into_inner).close();
            self.shared.finished();
        }
    }

    /// Waits up to `limit` for the sink to be closed after its last frame (or to fail);
    /// `false` if it was not by then (the peer is not reading).
    pub(crate) fn wait_closed(&self, limit: Duration) -> bool {
        let deadline = Instant::now() + limit;
        let mut queue = self.shared.lock();
        while !(queue.done || queue.broken) {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            queue = self.shared.wait_room(queue, Some(left));
        }
        true
    }
}

impl Drop for Outbox {
    /// The connection is gone: the writer writes what is queued, closes the sink and ends.
    fn drop(&mut self) {
        self.close();
    }
}

/// The writer thread: takes everything queued (and whatever a tried write kept back), writes
/// it, until closed or the sink fails. It waits while a producer is trying the sink.
fn write_loop(shared: &Shared, sink: &Mutex<Box<dyn FrameSink>>, on_broken: &OnBroken) {
    let sink = || sink.lock().unwrap_or_else(PoisonError::into_inner);
    loop {
        let (frames, size) = {
            let mut queue = shared.lock();
            loop {
                if !queue.writing {
                    if !queue.frames.is_empty() || queue.leftover {
                        break;
                    }
                    if queue.closing || queue.broken {
                        drop(queue);
                        sink().close();
                        shared.finished();
                        return;
                    }
                }
                queue.idle = true;
                queue = shared.work.wait(queue).unwrap_or_else(PoisonError::into_inner);
                queue.idle = false;
            }
            queue.writing = true;
            let frames = std::mem::take(&mut queue.frames);
            let size = frames.iter().map(Outgoing::size).sum::<usize>() + std::mem::take(&mut queue.held);
            (frames, size)
        };
        let failed = sink().send(frames).is_err();
        shared.written(size, failed);
        if failed {
            on_broken();
        }
    }
}

/// A task waiting for the outbox to drain or close (see [`Outbox::room`], [`Outbox::closed`]).
#[cfg(any(test, all(feature = "smol", feature = "stdio", unix)))]
pub(crate) struct Until<'a> {
    shared: &'a Shared,
    ready: fn(&Shared, &Queue) -> bool,
}

#[cfg(any(test, all(feature = "smol", feature = "stdio", unix)))]
impl std::future::Future for Until<'_> {
    type Output = ();

    fn poll(self: std::pin::Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> std::task::Poll<()> {
        let mut queue = self.shared.lock();
        if (self.ready)(self.shared, &queue) {
            return std::task::Poll::Ready(());
        }
        if !queue.wakers.iter().any(|w| w.will_wake(cx.waker())) {
            queue.wakers.push(cx.waker().clone());
        }
        std::task::Poll::Pending
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::mpsc;

    use super::*;

    /// A sink that blocks every send until the test lets it go, and reports what it wrote.
    struct Gate {
        open: mpsc::Receiver<()>,
        wrote: mpsc::Sender<Vec<u8>>,
        fail: bool,
    }

    impl FrameSink for Gate {
        fn send(&mut self, frames: Vec<Outgoing>) -> io::Result<()> {
            self.open.recv().map_err(|_| io::Error::from(io::ErrorKind::BrokenPipe))?;
            if self.fail {
                return Err(io::ErrorKind::BrokenPipe.into());
            }
            for frame in frames {
                if let Outgoing::Frame(_, payload, _) = frame {
                    let _ = self.wrote.send(payload);
                }
            }
            Ok(())
        }
        fn close(&mut self) {
            let _ = self.wrote.send(b"<closed>".to_vec());
        }
    }

    fn gated(limit: usize, fail: bool) -> (Outbox, mpsc::Sender<()>, mpsc::Receiver<Vec<u8>>, Arc<AtomicBool>) {
        let (open_tx, open) = mpsc::channel();
        let (wrote, written) = mpsc::channel();
        let broken = Arc::new(AtomicBool::new(false));
        let seen = Arc::clone(&broken);
        let outbox = Outbox::new(
            Box::new(Gate { open, wrote, fail }),
            limit,
            Box::new(move || seen.store(true, Ordering::SeqCst)),
        )
        .unwrap();
        (outbox, open_tx, written, broken)
    }

    /// A frame of `text`. Tests push it and then pump, as the connection does: pushing
    /// alone only queues (the writer thread may be asleep already).
    fn frame(text: &str) -> Outgoing {
        Outgoing::text(Route::Connection, text)
    }

    #[test]
    fn pushing_never_waits_for_a_blocked_sink_and_frames_keep_their_order() {
        let (outbox, open, written, _) = gated(1 << 20, false);
        let start = Instant::now();
        for i in 0..1000 {
            outbox.push([frame(&i.to_string())]);
            outbox.pump();
        }
        assert!(start.elapsed() < Duration::from_secs(1), "pushes did not wait for the sink");
        assert!(outbox.queued() > 0);
        let mut seen = Vec::new();
        while seen.len() < 1000 {
            let _ = open.send(());
            if let Ok(payload) = written.recv_timeout(Duration::from_millis(100)) {
                seen.push(String::from_utf8(payload).unwrap());
            }
        }
        let expected: Vec<String> = (0..1000).map(|i: i32| i.to_string()).collect();
        assert_eq!(seen, expected);
    }

    /// A sink that takes tried frames at once up to `room` of them, keeping the rest for the
    /// writer thread, and logs which thread wrote what.
    struct Tried {
        room: usize,
        kept: Vec<Vec<u8>>,
        log: Arc<Mutex<Vec<(String, std::thread::ThreadId)>>>,
    }

    impl Tried {
        fn write(&self, payload: Vec<u8>) {
            let text = String::from_utf8(payload).unwrap();
            self.log.lock().unwrap().push((text, std::thread::current().id()));
        }
    }

    impl FrameSink for Tried {
        fn send(&mut self, frames: Vec<Outgoing>) -> io::Result<()> {
            for payload in std::mem::take(&mut self.kept) {
                self.write(payload);
            }
            for frame in frames {
                if let Outgoing::Frame(_, payload, _) = frame {
                    self.write(payload);
                }
            }
            Ok(())
        }
        fn tries(&self) -> bool {
            true
        }
        fn try_send(&mut self, frames: Vec<Outgoing>) -> io::Result<bool> {
            for frame in frames {
                if let Outgoing::Frame(_, payload, _) = frame {
                    if self.room > 0 {
                        self.room -= 1;
                        self.write(payload);
                    } else {
                        self.kept.push(payload);
                    }
                }
            }
            Ok(self.kept.is_empty())
        }
        fn close(&mut self) {}
    }

    #[test]
    fn a_producer_writes_what_the_sink_takes_and_the_writer_thread_the_rest_in_order() {
        let log = Arc::new(Mutex::new(Vec::new()));
        let sink = Tried { room: 2, kept: Vec::new(), log: Arc::clone(&log) };
        let outbox = Outbox::new(Box::new(sink), 1 << 20, Box::new(|| {})).unwrap();
        let me = std::thread::current().id();
        // A writer thread just started takes whatever it finds queued before it first waits;
        // once waiting, only a hand-over wakes it.
        while !outbox.shared.lock().idle {
            std::thread::yield_now();
        }
        outbox.push([frame("a")]);
        outbox.pump();
        assert_eq!(*log.lock().unwrap(), vec![("a".to_owned(), me)], "written by the producer, at once");
        for text in ["b", "c", "d"] {
            outbox.push([frame(text)]);
            outbox.pump();
        }
        outbox.close();
        assert!(outbox.wait_closed(Duration::from_secs(5)));
        let log = log.lock().unwrap();
        let texts: Vec<&str> = log.iter().map(|(t, _)| t.as_str()).collect();
        assert_eq!(texts, ["a", "b", "c", "d"]);
        assert_eq!(log[1].1, me, "the second still fit");
        assert!(log[2..].iter().all(|(_, thread)| *thread != me), "the rest went through the writer thread");
        assert_eq!(outbox.queued(), 0);
    }

    #[test]
    fn a_full_outbox_says_so_and_a_paused_reader_goes_on_when_it_drains() {
        let (outbox, open, written, _) = gated(10, false);
        outbox.push([frame("0123456789ab")]);
        outbox.pump();
        assert!(outbox.is_full());
        let outbox = Arc::new(outbox);
        let waiting = Arc::clone(&outbox);
        let (done_tx, done) = mpsc::channel();
        std::thread::spawn(move || {
            waiting.wait_for_room();
            done_tx.send(()).unwrap();
        });
        assert!(done.recv_timeout(Duration::from_millis(50)).is_err(), "the reader waits while the queue is full");
        open.send(()).unwrap();
        assert_eq!(written.recv().unwrap(), b"0123456789ab");
        done.recv_timeout(Duration::from_secs(5)).expect("the reader goes on once the frame is written");
        assert!(!outbox.is_full());
    }

    #[test]
    fn the_room_future_wakes_when_the_writer_catches_up() {
        let (outbox, open, _written, _) = gated(4, false);
        outbox.push([frame("too big")]);
        outbox.pump();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(20));
            let _ = open.send(());
        });
        smol::block_on(outbox.room());
        assert_eq!(outbox.queued(), 0);
    }

    #[test]
    fn close_writes_what_is_queued_then_closes_the_sink() {
        let (outbox, open, written, _) = gated(1 << 20, false);
        outbox.push([frame("last")]);
        outbox.pump();
        outbox.close();
        outbox.push([frame("after close")]);
        outbox.pump();
        open.send(()).unwrap();
        assert_eq!(written.recv().unwrap(), b"last");
        assert_eq!(written.recv().unwrap(), b"<closed>");
        assert!(outbox.wait_closed(Duration::from_secs(5)));
    }

    #[test]
    fn a_failed_sink_is_reported_and_later_frames_are_dropped() {
        let (outbox, open, _written, broken) = gated(1 << 20, true);
        outbox.push([frame("doomed")]);
        outbox.pump();
        open.send(()).unwrap();
        assert!(outbox.wait_closed(Duration::from_secs(5)), "a failed sink counts as done");
        let deadline = Instant::now() + Duration::from_secs(5);
        while !broken.load(Ordering::SeqCst) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
        assert!(broken.load(Ordering::SeqCst));
        outbox.push([frame("dropped")]);
        outbox.pump();
        assert_eq!(outbox.queued(), 0);
    }

    #[test]
    fn waiting_for_a_stalled_sink_to_close_gives_up_at_its_limit() {
        let (outbox, _open, _written, _) = gated(1 << 20, false);
        outbox.push([frame("never taken")]);
        outbox.pump();
        outbox.close();
        let start = Instant::now();
        assert!(!outbox.wait_closed(Duration::from_millis(30)));
        assert!(start.elapsed() < Duration::from_secs(2));
    }
}
