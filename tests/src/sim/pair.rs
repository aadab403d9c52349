//! [`Pair`]: the two sessions, the two pipes between them and the virtual clock that drives
//! them.

use std::fmt;
use std::time::{Duration, Instant};

use serde_json::Value;
use talaria_core::jsonrpc::RequestId;
use talaria_core::session::{Client, ClientConfig, RequestOptions, Role, SendError, Server, ServerConfig, Session};

use super::peer::Peer;
use super::pipe::{Dir, Fate, Pipe, SimConfig};
use super::raw;
use super::rng::SeedGuard;

/// The most steps [`Pair::settle`] takes at one instant before it declares a busy loop.
const MAX_STEPS_PER_INSTANT: u32 = 10_000;

/// The most wake-ups [`Pair::run_until_quiet`] and [`Pair::run_for`] take before giving up.
const MAX_WAKEUPS: u32 = 1_000_000;

/// A client and a server session connected by two simulated pipes on a virtual clock.
///
/// Call order: issue commands through [`Pair::client`] / [`Pair::server`] (or the
/// `*_request` helpers), then drive with [`Pair::step`], [`Pair::settle`],
/// [`Pair::run_until_quiet`] or [`Pair::run_for`]; inspect what each [`Peer`] recorded.
pub struct Pair {
    /// The client side.
    pub client: Peer<Client>,
    /// The server side.
    pub server: Peer<Server>,
    config: SimConfig,
    base: Instant,
    offset: Duration,
    to_server: Pipe,
    to_client: Pipe,
    killed: bool,
    guard: SeedGuard,
}

impl fmt::Debug for Pair {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Pair")
            .field("seed", &self.config.seed)
            .field("elapsed", &self.offset)
            .field("client_phase", &self.client.session.phase())
            .field("server_phase", &self.server.session.phase())
            .field("to_server_in_flight", &self.to_server.frames.len())
            .field("to_client_in_flight", &self.to_client.frames.len())
            .field("client", &self.client)
            .field("server", &self.server)
            .finish_non_exhaustive()
    }
}

impl Pair {
    /// A pair: the client starts its handshake at once (nothing is delivered until driven).
    #[must_use]
    pub fn new(client: ClientConfig, server: ServerConfig, sim: SimConfig) -> Self {
        let base = Instant::now();
        let seed = sim.seed;
        Self {
            client: Peer::new(Session::<Client>::new(client, base), "client"),
            server: Peer::new(Session::<Server>::new(server), "server"),
            to_server: Pipe::new(seed ^ 0x5e4e_e000_0000_0001),
            to_client: Pipe::new(seed ^ 0xc11e_0700_0000_0002),
            config: sim,
            base,
            offset: Duration::ZERO,
            killed: false,
            guard: SeedGuard { seed },
        }
    }

    /// The seed this pair runs with.
    #[must_use]
    pub const fn seed(&self) -> u64 {
        self.guard.seed
    }

    /// The simulator's configuration.
    #[must_use]
    pub const fn config(&self) -> &SimConfig {
        &self.config
    }

    /// The virtual now.
    #[must_use]
    pub fn now(&self) -> Instant {
        self.base + self.offset
    }

    /// Virtual time since the pair was made.
    #[must_use]
    pub const fn elapsed(&self) -> Duration {
        self.offset
    }

    /// The virtual offset of an instant from `poll_timeout` (zero if before the start).
    #[must_use]
    pub fn offset_of(&self, at: Instant) -> Duration {
        at.saturating_duration_since(self.base)
    }

    /// Whether the connection was killed.
    #[must_use]
    pub const fn is_killed(&self) -> bool {
        self.killed
    }

    /// Frames in flight in one direction.
    #[must_use]
    pub fn in_flight(&self, dir: Dir) -> usize {
        self.pipe(dir).frames.len()
    }

    /// Sends a request from the client now; `params` are encoded from JSON.
    ///
    /// # Errors
    ///
    /// Whatever `Session::send_request` refuses.
    #[allow(clippy::needless_pass_by_value, reason = "call sites pass `json!` temporaries")]
    pub fn client_request(
        &mut self,
        method: &str,
        params: Option<Value>,
        options: RequestOptions,
    ) -> Result<RequestId, SendError> {
        let now = self.now();
        self.client.session.send_request(now, method, params.as_ref().map(raw), options)
    }

    /// Sends a request from the server now; `params` are encoded from JSON.
    ///
    /// # Errors
    ///
    /// Whatever `Session::send_request` refuses.
    #[allow(clippy::needless_pass_by_value, reason = "call sites pass `json!` temporaries")]
    pub fn server_request(
        &mut self,
        method: &str,
        params: Option<Value>,
        options: RequestOptions,
    ) -> Result<RequestId, SendError> {
        let now = self.now();
        self.server.session.send_request(now, method, params.as_ref().map(raw), options)
    }

    /// Runs the handshake: until the client is ready and, in the legacy era, the server too.
    ///
    /// # Panics
    ///
    /// If that does not happen within a minute of virtual time.
    pub fn connect(&mut self) {
        let done = self.run_until(Duration::from_secs(60), |p| {
            let legacy = p.client.ready().is_some_and(|r| r.version.era() == talaria_core::version::Era::Legacy);
            p.client.ready().is_some() && (!legacy || p.server.ready().is_some())
        });
        assert!(done, "the handshake did not complete (seed {}): {:#?}", self.seed(), self);
        self.run_until_quiet();
    }

    /// Puts a raw frame into a pipe as if the other side had sent it (a `\n` is added). It
    /// is subject to the pipe's faults but not to taps.
    pub fn inject(&mut self, dir: Dir, frame: &[u8]) {
        let now = self.offset;
        let config = self.config.clone();
        self.pipe_mut(dir).push(now, frame, Duration::ZERO, false, &config);
    }

    /// Installs a tap on the frames entering one pipe (replacing any earlier one).
    pub fn set_tap(&mut self, dir: Dir, tap: impl FnMut(&[u8]) -> Fate + 'static) {
        self.pipe_mut(dir).tap = Some(Box::new(tap));
    }

    /// Removes the tap of one pipe.
    pub fn clear_tap(&mut self, dir: Dir) {
        self.pipe_mut(dir).tap = None;
    }

    /// Kills the connection now: frames in flight are lost and both sides get
    /// `handle_closed`. Killing twice does nothing.
    pub fn kill(&mut self) {
        if self.killed {
            return;
        }
        self.killed = true;
        self.to_server.frames.clear();
        self.to_client.frames.clear();
        let now = self.now();
        self.client.session.handle_closed(now);
        self.server.session.handle_closed(now);
        self.drain();
    }

    /// Does what is due at the current instant, once: collects both sides' outputs, delivers
    /// the frames that are due, calls `handle_timeout` where a deadline has passed, and
    /// collects again. Returns whether anything happened.
    pub fn step(&mut self) -> bool {
        let mut busy = self.drain();
        busy |= self.deliver(Dir::ToServer);
        busy |= self.deliver(Dir::ToClient);
        busy |= self.drain();
        busy |= self.fire_timers();
        busy |= self.drain();
        busy
    }

    /// Steps until nothing more happens at the current instant.
    ///
    /// # Panics
    ///
    /// If the pair is still busy after many steps at one instant (a busy loop).
    pub fn settle(&mut self) {
        for _ in 0..MAX_STEPS_PER_INSTANT {
            if !self.step() {
                return;
            }
        }
        panic!("the pair never settled at {:?} (seed {}): busy loop?", self.offset, self.seed());
    }

    /// Runs until no frame is in flight, moving the clock to each delayed frame's delivery
    /// and firing the deadlines met on the way. Deadlines later than the last delivery are
    /// not reached.
    ///
    /// # Panics
    ///
    /// If the pipes never empty (a ping-pong that never ends).
    pub fn run_until_quiet(&mut self) {
        for _ in 0..MAX_WAKEUPS {
            self.settle();
            let Some(frame_due) = self.next_frame_due() else { return };
            let next = self.next_deadline().map_or(frame_due, |t| t.min(frame_due));
            self.offset = self.offset.max(next);
        }
        panic!("the pair never went quiet (seed {})", self.seed());
    }

    /// Moves the clock forward by `by` without delivering anything or firing any deadline;
    /// the next [`Pair::step`] does what became due, all at the new instant (as a late
    /// adapter would).
    pub fn advance(&mut self, by: Duration) {
        self.offset += by;
    }

    /// Runs for `by` of virtual time: every delivery and every deadline in between happens
    /// at its own instant, in time order; the clock ends at now + `by`.
    ///
    /// # Panics
    ///
    /// If there are more than a million wake-ups.
    pub fn run_for(&mut self, by: Duration) {
        let end = self.offset + by;
        for _ in 0..MAX_WAKEUPS {
            self.settle();
            match self.next_wakeup() {
                Some(t) if t <= end => self.offset = self.offset.max(t),
                _ => {
                    self.offset = end;
                    self.settle();
                    return;
                }
            }
        }
        panic!("run_for never ended (seed {})", self.seed());
    }

    /// Runs, as [`Pair::run_for`] does, until `done` holds or `limit` of virtual time has
    /// passed. Returns whether `done` held.
    pub fn run_until(&mut self, limit: Duration, mut done: impl FnMut(&Self) -> bool) -> bool {
        let end = self.offset + limit;
        loop {
            self.settle();
            if done(self) {
                return true;
            }
            match self.next_wakeup() {
                Some(t) if t <= end => self.offset = self.offset.max(t),
                _ => {
                    self.offset = end;
                    self.settle();
                    return done(self);
                }
            }
        }
    }

    /// The earliest instant (as an offset) at which something is scheduled: a frame delivery
    /// or a session deadline.
    #[must_use]
    pub fn next_wakeup(&self) -> Option<Duration> {
        match (self.next_frame_due(), self.next_deadline()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    fn next_frame_due(&self) -> Option<Duration> {
        let eof_pending = |p: &Pipe| p.eof && !p.eof_delivered;
        let frames = self.to_server.frames.iter().chain(&self.to_client.frames).map(|f| f.due).min();
        if frames.is_none() && (eof_pending(&self.to_server) || eof_pending(&self.to_client)) {
            return Some(self.offset);
        }
        frames
    }

    fn next_deadline(&self) -> Option<Duration> {
        let c = self.client.session.poll_timeout().map(|t| self.offset_of(t));
        let s = self.server.session.poll_timeout().map(|t| self.offset_of(t));
        match (c, s) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    fn pipe(&self, dir: Dir) -> &Pipe {
        match dir {
            Dir::ToServer => &self.to_server,
            Dir::ToClient => &self.to_client,
        }
    }

    fn pipe_mut(&mut self, dir: Dir) -> &mut Pipe {
        match dir {
            Dir::ToServer => &mut self.to_server,
            Dir::ToClient => &mut self.to_client,
        }
    }

    /// Collects both sides' outputs; whether there were any.
    fn drain(&mut self) -> bool {
        let (at, config, killed) = (self.offset, &self.config, self.killed);
        let a = self.client.drain(at, &mut self.to_server, config, killed);
        let b = self.server.drain(at, &mut self.to_client, config, killed);
        a || b
    }

    /// Feeds the frames due in one direction (and the EOF behind them); whether anything was.
    fn deliver(&mut self, dir: Dir) -> bool {
        let (now, at) = (self.now(), self.offset);
        let kill_p = self.config.kill;
        let (chunk_p, max_chunk) = (self.config.chunk, self.config.max_chunk.max(1));
        let pipe = self.pipe_mut(dir);
        let mut due = pipe.take_due(at);
        let mut kill = false;
        if kill_p > 0.0 {
            if let Some(i) = (0..due.len()).find(|_| pipe.rng.chance(kill_p)) {
                due.truncate(i);
                kill = true;
            }
        }
        let eof = pipe.eof && !pipe.eof_delivered && pipe.frames.is_empty() && !kill;
        if eof {
            pipe.eof_delivered = true;
        }
        let mut bytes = Vec::new();
        for frame in &due {
            bytes.extend_from_slice(&frame.bytes);
        }
        let mut chunks = Vec::new();
        if chunk_p > 0.0 && pipe.rng.chance(chunk_p) {
            let mut rest = bytes.as_slice();
            while !rest.is_empty() {
                let take = usize::try_from(pipe.rng.below(max_chunk as u64)).map_or(1, |n| n + 1).min(rest.len());
                chunks.push(rest[..take].to_vec());
                rest = &rest[take..];
            }
        } else if !bytes.is_empty() {
            chunks.push(bytes);
        }
        let busy = !due.is_empty() || eof || kill;
        for chunk in &chunks {
            match dir {
                Dir::ToServer => self.server.session.handle_bytes(now, chunk),
                Dir::ToClient => self.client.session.handle_bytes(now, chunk),
            }
        }
        if eof {
            match dir {
                Dir::ToServer => self.server.session.handle_closed(now),
                Dir::ToClient => self.client.session.handle_closed(now),
            }
        }
        if kill {
            self.drain();
            self.kill();
        }
        busy
    }

    /// Calls `handle_timeout` on each side whose deadline has come; whether any did.
    fn fire_timers(&mut self) -> bool {
        let now = self.now();
        let check = self.config.check_invariants;
        let seed = self.seed();
        let c = fire(&mut self.client.session, now, check, "client", seed);
        let s = fire(&mut self.server.session, now, check, "server", seed);
        c || s
    }
}
/// Calls `handle_timeout` if the deadline has come, and checks that it moved on.
fn fire<R: Role>(session: &mut Session<R>, now: Instant, check: bool, name: &str, seed: u64) -> bool {
    let Some(deadline) = session.poll_timeout() else { return false };
    if deadline > now {
        return false;
    }
    session.handle_timeout(now);
    if check {
        if let Some(next) = session.poll_timeout() {
            assert!(next > now, "{name}: poll_timeout() is {next:?}, not after handle_timeout({now:?}) (seed {seed})");
        }
    }
    true
}
