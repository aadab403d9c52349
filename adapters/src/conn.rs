//! The one run loop every blocking transport shares: a sans-IO engine behind a mutex, an
//! outbox written by whichever thread finds it full (never under the engine's lock), a timer
//! thread for `poll_timeout`, and events handed to the application outside the lock.

use std::io;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::time::Instant;

use talaria_core::session::{Event, Output, Route, StreamId};

/// A sans-IO engine: a client or server endpoint (with its router).
pub(crate) trait Engine: Send + 'static {
    fn poll_output(&mut self) -> Option<Output>;
    fn poll_timeout(&self) -> Option<Instant>;
    fn handle_timeout(&mut self, now: Instant);
    fn handle_closed(&mut self, now: Instant);
    /// How many of this side's requests wait for an answer (for write batching).
    fn in_flight(&self) -> usize {
        0
    }
}

/// How long a request may wait in the outbox for company when many are in flight.
const LINGER: std::time::Duration = std::time::Duration::from_micros(50);

/// From how many requests in flight a new one lingers (below, it is written at once).
const LINGER_FROM: usize = 4;

/// One thing for a transport to write.
pub(crate) enum Outgoing {
    /// A JSON text for `route`.
    Frame(Route, Vec<u8>),
    /// Every reply due on an HTTP stream was sent.
    StreamDone(StreamId),
    /// End an HTTP stream early; the rest of its frames wait in its event log.
    StreamDisconnect(StreamId),
}

/// Where frames go: a pipe (one JSON text per line), a WebSocket (one per text message), the
/// other half of an in-memory pair, an HTTP response.
pub(crate) trait FrameSink: Send {
    /// Sends `frames` in order.
    fn send(&mut self, frames: Vec<Outgoing>) -> io::Result<()>;
    /// Answers a WebSocket ping (other transports have none).
    fn pong(&mut self, _data: Vec<u8>) -> io::Result<()> {
        Ok(())
    }
    /// Ends the outgoing direction (closes stdin, sends a close frame). Idempotent.
    fn close(&mut self);
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
    outbox: Vec<Outgoing>,
    /// A thread is writing the outbox; others only append.
    writing: bool,
    /// The sink failed: frames are dropped.
    broken: bool,
    /// The engine reported `Closed`.
    closed: bool,
    /// The earliest deadline the shared timer will ring this connection at.
    armed: Option<Instant>,
    /// Held frames must be written by then (see [`Conn::with_call`]).
    linger: Option<Instant>,
}

/// One connection's engine, outbox and deadlines.
pub(crate) struct Conn<E> {
    state: Mutex<State<E>>,
    sink: Mutex<Box<dyn FrameSink>>,
    events: EventSink,
    later: Later,
    /// This connection, for the shared timer to ring.
    me: Weak<Self>,
}

impl<E: Engine> Conn<E> {
    /// A connection; its deadlines go to the process's shared timer.
    pub(crate) fn start(engine: E, sink: Box<dyn FrameSink>, events: EventSink) -> io::Result<Arc<Self>> {
        let conn = Arc::new_cyclic(|me| Self {
            state: Mutex::new(State {
                engine,
                outbox: Vec::new(),
                writing: false,
                broken: false,
                closed: false,
                armed: None,
                linger: None,
            }),
            sink: Mutex::new(sink),
            events,
            later: Later::default(),
            me: me.clone(),
        });
        // Send what the engine wants to send from the start (a client's `initialize`).
        conn.with(|_, _| ());
        Ok(conn)
    }

    fn lock(&self) -> MutexGuard<'_, State<E>> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Runs `f` on the engine (an input or a command), then transmits what it produced and
    /// hands its events to the application.
    pub(crate) fn with<T>(&self, f: impl FnOnce(&mut E, Instant) -> T) -> T {
        let now = Instant::now();
        let (out, events) = {
            let mut state = self.lock();
            let out = f(&mut state.engine, now);
            let events = self.drain(&mut state);
            (out, events)
        };
        self.pump();
        self.deliver(events);
        out
    }

    /// The queue for completions (see [`Later`]).
    pub(crate) fn later(&self) -> Later {
        self.later.clone()
    }

    /// Like [`Conn::with`], but leaves the frames it produced in the outbox: a reader that
    /// knows more input is waiting handles it first, then writes everything at once with
    /// [`Conn::flush`] (one write for a burst instead of one per message).
    pub(crate) fn with_held<T>(&self, f: impl FnOnce(&mut E, Instant) -> T) -> T {
        let now = Instant::now();
        let (out, events) = {
            let mut state = self.lock();
            let out = f(&mut state.engine, now);
            let events = self.drain(&mut state);
            (out, events)
        };
        self.deliver(events);
        out
    }

    /// Writes what [`Conn::with_held`] left in the outbox.
    pub(crate) fn flush(&self) {
        self.pump();
    }

    /// A command that sends a request: written at once while few are in flight; with many in
    /// flight it lingers up to [`LINGER`] for company (the reader writes it sooner when the
    /// next answers arrive), so a busy connection writes a burst per syscall, not a request.
    pub(crate) fn with_call<T>(&self, f: impl FnOnce(&mut E, Instant) -> T) -> T {
        let now = Instant::now();
        let (out, events, linger) = {
            let mut state = self.lock();
            let busy = state.engine.in_flight() >= LINGER_FROM;
            let out = f(&mut state.engine, now);
            let events = self.drain(&mut state);
            let linger = busy && !state.outbox.is_empty();
            if linger && state.linger.is_none() {
                state.linger = Some(now + LINGER);
                self.arm(&mut state);
            }
            (out, events, linger)
        };
        if !linger {
            self.pump();
        }
        self.deliver(events);
        out
    }

    /// Whether the engine has closed.
    pub(crate) fn is_closed(&self) -> bool {
        self.lock().closed
    }

    /// Moves the engine's outputs into the outbox and the event list; rearms the timer.
    fn drain(&self, state: &mut State<E>) -> Vec<Delivery> {
        while let Some(output) = state.engine.poll_output() {
            match output {
                Output::Transmit { route, payload } if !state.broken => {
                    state.outbox.push(Outgoing::Frame(route, payload));
                }
                Output::StreamDone(stream) if !state.broken => state.outbox.push(Outgoing::StreamDone(stream)),
                Output::StreamDisconnect(stream) if !state.broken => {
                    state.outbox.push(Outgoing::StreamDisconnect(stream));
                }
                Output::Event(event) => {
                    if matches!(event, Event::Closed { .. }) {
                        state.closed = true;
                    }
                    self.later.push(Delivery::Event(event));
                }
                _ => {}
            }
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
        let next = match (state.engine.poll_timeout(), state.linger) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
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

    /// Writes the outbox unless another thread is writing it (that thread picks up what was
    /// appended meanwhile). Frames keep the order the engine produced them in.
    fn pump(&self) {
        loop {
            let frames = {
                let mut state = self.lock();
                if state.writing || state.outbox.is_empty() {
                    return;
                }
                state.writing = true;
                state.linger = None;
                std::mem::take(&mut state.outbox)
            };
            let result = self.sink.lock().unwrap_or_else(PoisonError::into_inner).send(frames);
            let events = {
                let mut state = self.lock();
                state.writing = false;
                if result.is_err() && !state.broken {
                    state.broken = true;
                    state.outbox.clear();
                    state.engine.handle_closed(Instant::now());
                    self.drain(&mut state)
                } else {
                    Vec::new()
                }
            };
            self.deliver(events);
        }
    }

    /// Answers a WebSocket ping.
    pub(crate) fn pong(&self, data: Vec<u8>) {
        let _ = self.sink.lock().unwrap_or_else(PoisonError::into_inner).pong(data);
    }

    /// Ends the outgoing direction of the transport.
    pub(crate) fn close_sink(&self) {
        self.sink.lock().unwrap_or_else(PoisonError::into_inner).close();
    }
}

impl<E: Engine> crate::timers::Alarm for Conn<E> {
    fn ring(&self, now: Instant) {
        let events = {
            let mut state = self.lock();
            if state.armed.is_some_and(|at| at <= now) {
                state.armed = None;
            }
            // A lingering write is due: the pump below takes the outbox.
            if state.linger.is_some_and(|at| at <= now) {
                state.linger = None;
            }
            state.engine.handle_timeout(now);
            self.drain(&mut state)
        };
        self.pump();
        self.deliver(events);
    }
}
