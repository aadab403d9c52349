//! The one run loop every transport shares: a sans-IO engine behind a mutex, an [`Outbox`]
//! that frames are appended to (never written under the engine's lock, and never by a reader
//! waiting on its peer), the process's timer thread for `poll_timeout`, and events handed to
//! the application outside the lock.
//!
//! Backpressure: an application's new calls are refused while the outbox holds its limit
//! ([`Conn::with_call`]); a server's reader pauses until its writer catches up, while a
//! client's reader never pauses (so two peers can never both wait for the other to read) and
//! gives the connection up if its outbox grows past [`STALLED_FACTOR`] times the limit.

use std::io;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError, Weak};
use std::time::{Duration, Instant};

use talaria_core::session::{Event, Output};

use crate::outbox::Outbox;
pub(crate) use crate::outbox::{FrameSink, Outgoing};

/// A sans-IO engine: a client or server endpoint (with its router).
pub(crate) trait Engine: Send + 'static {
    /// Whether this side's reader pauses while its outbox is full (a server's does; a
    /// client's must keep reading, see the module docs).
    const READER_PAUSES: bool;
    fn poll_output(&mut self) -> Option<Output>;
    fn poll_timeout(&self) -> Option<Instant>;
    fn handle_timeout(&mut self, now: Instant);
    fn handle_closed(&mut self, now: Instant);
    /// How many of this side's requests wait for an answer.
    fn in_flight(&self) -> usize {
        0
    }
}

/// The most bytes a reader's held answers reach before they are sent anyway, more input
/// waiting or not: a long burst does not keep its first answers back.
const HOLD_MAX: usize = 64 * 1024;

/// From how many requests in flight a new one is handed to the writer thread rather than
/// written by the calling thread, on a transport whose frames gain from leaving together
/// ([`FrameSink::batches`]: a WebSocket): the writer then writes whatever piled up meanwhile
/// in one go, so a busy connection writes a burst of requests per syscall, not one each.
const BATCH_FROM: usize = 4;

/// What happens to the frames a step produced.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Then {
    /// Written at once as far as the peer takes them ([`Outbox::pump`]).
    Write,
    /// Handed to the writer thread, to leave with whatever joins them meanwhile.
    HandOver,
    /// Left queued: more input is coming, and the frames leave with the burst's last step.
    Hold,
}

/// A reader that never pauses gives its connection up once its outbox holds this many times
/// the limit: the peer sends without reading.
pub(crate) const STALLED_FACTOR: usize = 4;

/// An application call was refused: the connection's outbox is full (the peer reads more
/// slowly than the application sends).
#[derive(Debug, Clone, Copy)]
pub(crate) struct OutboxFull {
    /// The configured limit, in bytes.
    pub(crate) limit: usize,
}

/// What the application hears from a connection, outside any lock.
pub(crate) type EventSink = Box<dyn Fn(Event) + Send + Sync>;

/// Something to hand to the application once the engine's lock is released.
enum Delivery {
    Event(Event),
    Run(Box<dyn FnOnce() + Send>),
}

/// Where completions queue up while the engine runs, so that the application hears of them
/// outside the lock and in the order the engine produced them, events included (a log sent
/// before a response is seen before the response's waiter wakes).
#[derive(Clone, Default)]
pub(crate) struct Later(Arc<Mutex<Vec<Delivery>>>);

impl Later {
    /// Runs `f` after the current engine step, in order with that step's events.
    pub(crate) fn run(&self, f: impl FnOnce() + Send + 'static) {
        self.push(Delivery::Run(Box::new(f)));
    }

    fn push(&self, delivery: Delivery) {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).push(delivery);
    }

    fn take(&self) -> Vec<Delivery> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

struct State<E> {
    engine: E,
    /// The engine reported `Closed`.
    closed: bool,
    /// The earliest deadline the shared timer will ring this connection at.
    armed: Option<Instant>,
}

/// One connection's engine, outbox and deadlines.
pub(crate) struct Conn<E> {
    state: Mutex<State<E>>,
    outbox: Outbox,
    events: EventSink,
    later: Later,
    /// This connection, for the shared timer to ring.
    me: Weak<Self>,
}

impl<E: Engine> Conn<E> {
    /// A connection writing to `sink` (through a writer thread unless the sink never
    /// blocks), queueing up to `limit` bytes; its deadlines go to the process's shared timer.
    pub(crate) fn start(engine: E, sink: Box<dyn FrameSink>, limit: usize, events: EventSink) -> io::Result<Arc<Self>> {
        // The writer reports a failed sink to the connection, which does not exist yet.
        let found: Arc<OnceLock<Weak<Self>>> = Arc::default();
        let lost = Arc::clone(&found);
        let on_broken = Box::new(move || {
            if let Some(conn) = lost.get().and_then(Weak::upgrade) {
                conn.with(|engine, now| engine.handle_closed(now));
            }
        });
        let outbox = Outbox::new(sink, limit, on_broken)?;
        let conn = Arc::new_cyclic(|me| Self {
            state: Mutex::new(State { engine, closed: false, armed: None }),
            outbox,
            events,
            later: Later::default(),
            me: me.clone(),
        });
        let _ = found.set(Arc::downgrade(&conn));
        Ok(conn)
    }

    /// Sends what the engine wants to send from the start (a client's `initialize`). Not done
    /// by [`Conn::start`]: the transport first learns of the connection, so that an answer
    /// that comes back at once finds it (an HTTP reply can arrive before `start` returns).
    pub(crate) fn flush(&self) {
        self.with(|_, _| ());
    }

    fn lock(&self) -> MutexGuard<'_, State<E>> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Runs `f` on the engine (an input or a command), queues what it produced for the
    /// writer and hands its events to the application. Never waits for the peer.
    pub(crate) fn with<T>(&self, f: impl FnOnce(&mut E, Instant) -> T) -> T {
        self.step(f, |_| Then::Write)
    }

    /// Runs `f`, queues its frames, sends them on as `then` (asked before `f` runs) says, and
    /// delivers its events.
    fn step<T>(&self, f: impl FnOnce(&mut E, Instant) -> T, then: impl FnOnce(&E) -> Then) -> T {
        let now = Instant::now();
        let (out, events, then) = {
            let mut state = self.lock();
            let then = then(&state.engine);
            let out = f(&mut state.engine, now);
            let events = self.drain(&mut state);
            (out, events, then)
        };
        match then {
            Then::Write => self.outbox.pump(),
            Then::HandOver => self.outbox.hand_over(),
            Then::Hold => {}
        }
        self.deliver(events);
        out
    }

    /// A reader's input: [`Conn::with`], then the reader's share of backpressure. A server's
    /// reader waits until its writer has caught up (the peer reads again); a client's goes on,
    /// unless the peer has stopped reading altogether (see [`STALLED_FACTOR`]).
    ///
    /// `more`: more input is waiting already (the rest of a read, bytes the socket holds), so
    /// what this input produced waits in the outbox for the end of the burst and leaves with
    /// it, in one write. The reader's last input before it waits for more passes `false`.
    pub(crate) fn with_input<T>(&self, more: bool, f: impl FnOnce(&mut E, Instant) -> T) -> T {
        let out = self.step(f, |_| self.then_for_input(more));
        if self.outbox.is_full() {
            self.outbox.pump();
            if E::READER_PAUSES {
                self.outbox.wait_for_room();
            } else {
                self.give_up_if_stalled();
            }
        }
        out
    }

    /// [`Conn::with_input`] for a reader that is a task: it awaits room instead of blocking.
    #[cfg(all(feature = "smol", feature = "stdio", unix))]
    pub(crate) async fn with_input_async<T>(&self, more: bool, f: impl FnOnce(&mut E, Instant) -> T) -> T {
        let out = self.step(f, |_| self.then_for_input(more));
        if self.outbox.is_full() {
            self.outbox.pump();
            if E::READER_PAUSES {
                self.outbox.room().await;
            } else {
                self.give_up_if_stalled();
            }
        }
        out
    }

    /// Holds an input's answers while `more` input waits, unless [`HOLD_MAX`] bytes are held.
    fn then_for_input(&self, more: bool) -> Then {
        if more && self.outbox.queued() < HOLD_MAX {
            Then::Hold
        } else {
            Then::Write
        }
    }

    /// Sends what a reader held back: its burst ended without an input of its own (the
    /// waiting bytes were a control message, or nothing).
    #[cfg(feature = "ws")]
    pub(crate) fn release(&self) {
        self.outbox.pump();
    }

    fn give_up_if_stalled(&self) {
        if self.outbox.queued() >= self.outbox.limit().saturating_mul(STALLED_FACTOR) {
            self.with(|engine, now| engine.handle_closed(now));
            self.outbox.close();
        }
    }

    /// The queue for completions (see [`Later`]).
    pub(crate) fn later(&self) -> Later {
        self.later.clone()
    }

    /// An application command that adds work (a request, a notification): refused while the
    /// outbox is full, so a peer that reads slowly costs the application an error, not
    /// unbounded memory or a blocked thread.
    ///
    /// # Errors
    ///
    /// [`OutboxFull`] when the outbox holds its limit; `f` did not run.
    pub(crate) fn with_call<T>(&self, f: impl FnOnce(&mut E, Instant) -> T) -> Result<T, OutboxFull> {
        if self.outbox.is_full() {
            return Err(OutboxFull { limit: self.outbox.limit() });
        }
        let batches = self.batches();
        let then = |engine: &E| if batches && engine.in_flight() >= BATCH_FROM { Then::HandOver } else { Then::Write };
        Ok(self.step(f, then))
    }

    /// Whether the transport's frames gain from leaving together (a byte stream: see
    /// [`FrameSink::batches`]).
    pub(crate) const fn batches(&self) -> bool {
        self.outbox.batches()
    }

    /// Whether the transport sends each request on a job of its own, which a blocking caller
    /// can run itself (see [`FrameSink::sends_apart`]).
    pub(crate) const fn sends_apart(&self) -> bool {
        self.outbox.sends_apart()
    }

    /// Whether the engine has closed.
    pub(crate) fn is_closed(&self) -> bool {
        self.lock().closed
    }

    /// Moves the engine's outputs into the outbox (under the engine's lock, so frames keep
    /// the engine's order) and its events into the delivery list; rearms the timer.
    fn drain(&self, state: &mut State<E>) -> Vec<Delivery> {
        let mut frames = Vec::new();
        while let Some(output) = state.engine.poll_output() {
            match output {
                Output::Transmit { route, payload, carries } => frames.push(Outgoing::Frame(route, payload, carries)),
                Output::StreamDone(stream) => frames.push(Outgoing::StreamDone(stream)),
                Output::StreamDisconnect(stream) => frames.push(Outgoing::StreamDisconnect(stream)),
                Output::Event(event) => {
                    if matches!(event, Event::Closed { .. }) {
                        state.closed = true;
                    }
                    self.later.push(Delivery::Event(event));
                }
                _ => {}
            }
        }
        if !frames.is_empty() {
            self.outbox.push(frames);
        }
        self.arm(state);
        self.later.take()
    }

    /// Asks the shared timer to ring at the next deadline, if it is earlier than the one it
    /// will ring at already.
    fn arm(&self, state: &mut State<E>) {
        if state.closed {
            return;
        }
        let next = state.engine.poll_timeout();
        if let Some(at) = next.filter(|at| state.armed.is_none_or(|armed| *at < armed)) {
            state.armed = Some(at);
            let me: Weak<dyn crate::timers::Alarm> = self.me.clone();
            crate::timers::timers().schedule(at, me);
        }
    }

    fn deliver(&self, deliveries: Vec<Delivery>) {
        for delivery in deliveries {
            match delivery {
                Delivery::Event(event) => (self.events)(event),
                Delivery::Run(f) => f(),
            }
        }
    }

    /// Answers a WebSocket ping (in order with the frames before it).
    #[cfg(feature = "ws")]
    pub(crate) fn pong(&self, data: Vec<u8>) {
        self.outbox.push([Outgoing::Pong(data)]);
        self.outbox.pump();
    }

    /// Ends the outgoing direction of the transport once what is queued is written; returns
    /// at once.
    pub(crate) fn close_sink(&self) {
        self.outbox.close();
    }

    /// Resolves once the outgoing direction was closed after its last frame (or failed).
    #[cfg(all(feature = "smol", feature = "stdio", unix))]
    pub(crate) async fn closed(&self) {
        self.outbox.closed().await;
    }

    /// Waits up to `limit` for the outgoing direction to be closed after its last frame;
    /// `false` if the peer did not take it all by then.
    pub(crate) fn wait_closed(&self, limit: Duration) -> bool {
        self.outbox.wait_closed(limit)
    }
}

impl<E: Engine> crate::timers::Alarm for Conn<E> {
    fn ring(&self, now: Instant) {
        let events = {
            let mut state = self.lock();
            if state.armed.is_some_and(|at| at <= now) {
                state.armed = None;
            }
            state.engine.handle_timeout(now);
            self.drain(&mut state)
        };
        self.outbox.pump();
        self.deliver(events);
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use std::collections::VecDeque;
    use std::sync::mpsc;

    use talaria_core::session::{Carries, Route};

    use super::*;

    /// An engine that answers every input with one frame of the same bytes, and closes when
    /// told the transport is gone.
    struct Echo<const PAUSES: bool> {
        out: VecDeque<Output>,
    }

    impl<const PAUSES: bool> Engine for Echo<PAUSES> {
        const READER_PAUSES: bool = PAUSES;
        fn poll_output(&mut self) -> Option<Output> {
            self.out.pop_front()
        }
        fn poll_timeout(&self) -> Option<Instant> {
            None
        }
        fn handle_timeout(&mut self, _now: Instant) {}
        fn handle_closed(&mut self, _now: Instant) {
            self.out.push_back(Output::Event(Event::Closed {
                reason: talaria_core::session::CloseReason::TransportClosed,
            }));
        }
    }

    impl<const PAUSES: bool> Echo<PAUSES> {
        fn input(&mut self, bytes: &[u8]) {
            // Only the bytes matter to these tests, not what they carry.
            let carries = Carries::Error { id: None, code: talaria_core::jsonrpc::ErrorCode::PARSE_ERROR };
            self.out.push_back(Output::Transmit { route: Route::Connection, payload: bytes.to_vec(), carries });
        }
    }

    /// A sink whose peer reads nothing until the test lets it (one send per token).
    struct Stalled(mpsc::Receiver<()>);

    impl FrameSink for Stalled {
        fn send(&mut self, _frames: Vec<Outgoing>) -> io::Result<()> {
            self.0.recv().map_err(|_| io::Error::from(io::ErrorKind::BrokenPipe))
        }
        fn close(&mut self) {}
    }

    fn stalled<const PAUSES: bool>(limit: usize) -> (Arc<Conn<Echo<PAUSES>>>, mpsc::Sender<()>) {
        let (go, gate) = mpsc::channel();
        let conn = Conn::start(Echo { out: VecDeque::new() }, Box::new(Stalled(gate)), limit, Box::new(|_| {}));
        (conn.unwrap(), go)
    }

    #[test]
    fn a_client_reader_never_waits_for_a_peer_that_does_not_read() {
        let (conn, _gate) = stalled::<false>(1 << 20);
        let start = Instant::now();
        for _ in 0..1000 {
            conn.with_input(false, |engine, _| engine.input(&[b'x'; 512]));
        }
        assert!(start.elapsed() < Duration::from_secs(2), "the reader went on: {:?}", start.elapsed());
        assert!(!conn.is_closed());
    }

    #[test]
    fn application_calls_are_refused_while_the_outbox_is_full() {
        let (conn, _gate) = stalled::<false>(4096);
        let mut sent = 0;
        let refused = loop {
            match conn.with_call(|engine, _| engine.input(&[b'x'; 1024])) {
                Ok(()) => sent += 1,
                Err(full) => break full,
            }
            assert!(sent < 100, "never refused");
        };
        assert_eq!(refused.limit, 4096);
        assert!((4..=5).contains(&sent), "refused once the limit was reached: {sent} sent");
    }

    #[test]
    fn a_client_gives_up_on_a_peer_that_sends_without_ever_reading() {
        let (conn, _gate) = stalled::<false>(4096);
        for _ in 0..(4 * STALLED_FACTOR + 8) {
            conn.with_input(false, |engine, _| engine.input(&[b'x'; 1024]));
        }
        assert!(conn.is_closed(), "closed once {STALLED_FACTOR} times the limit was queued");
    }

    #[test]
    fn a_server_reader_pauses_until_its_writer_catches_up() {
        let (conn, gate) = stalled::<true>(4096);
        let reader = Arc::clone(&conn);
        let (done_tx, done) = mpsc::channel();
        std::thread::spawn(move || {
            for _ in 0..8 {
                reader.with_input(false, |engine, _| engine.input(&[b'x'; 1024]));
            }
            done_tx.send(()).unwrap();
        });
        assert!(done.recv_timeout(Duration::from_millis(100)).is_err(), "paused with a full outbox");
        // The peer reads again: the reader goes on.
        for _ in 0..16 {
            let _ = gate.send(());
        }
        done.recv_timeout(Duration::from_secs(5)).expect("the reader went on once the writer caught up");
    }

    #[test]
    fn a_failed_sink_closes_the_engine() {
        let (conn, gate) = stalled::<false>(1 << 20);
        drop(gate);
        conn.with(|engine, _| engine.input(b"lost"));
        let deadline = Instant::now() + Duration::from_secs(5);
        while !conn.is_closed() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
        assert!(conn.is_closed());
    }
}
