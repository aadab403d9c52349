//! A deterministic two-peer simulator for the sans-IO session.
//!
//! A [`Pair`] wires a [`Session<Client>`] to a [`Session<Server>`] through two seeded pipes, one
//! per direction, on a virtual clock: nothing sleeps, and the only clock read is the one that
//! picks the base [`Instant`]. Each pipe carries stream-framed bytes (every
//! [`Output::Transmit`] payload plus `\n`, fed with `handle_bytes`) and can, with the
//! probabilities of a [`SimConfig`], split what it delivers into random chunks, delay frames,
//! reorder and duplicate whole frames, and kill the connection. The pair records every event
//! each side reports, keeps the peer requests waiting for an answer, and checks the session's
//! invariants as it goes (valid JSON-RPC on the wire, no output after `Event::Closed`, at most
//! one `Event::Response` per id, no id sent twice, no busy loop after `handle_timeout`).
//!
//! Randomness comes from [`SimConfig::seed`]; the constructors read `TALARIA_SIM_SEED` when it is
//! set, and a failing test prints its seed, so `TALARIA_SIM_SEED=<n> cargo test ...` replays it.
//!
//! # Examples
//!
//! ```
//! use serde_json::json;
//! use talaria_core::session::RequestOptions;
//! use talaria_tests::sim::{Pair, Setup, SimConfig};
//!
//! let mut pair = Setup::Stateless.pair(SimConfig::chaos(7));
//! pair.run_until_quiet();
//! assert!(pair.client.ready().is_some());
//! let id = pair.client_request("test/echo", Some(json!({"n": 1})), RequestOptions::default()).unwrap();
//! pair.run_until_quiet();
//! pair.server.answer_all(|req| Ok(json!({"method": req.method})));
//! pair.run_until_quiet();
//! assert!(pair.client.outcome(&id).unwrap().is_ok());
//! ```
#![allow(clippy::panic, reason = "the simulator is test support: a broken invariant fails the test")]

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::fmt;
use std::time::{Duration, Instant};

use serde_json::value::RawValue;
use serde_json::Value;
use talaria_core::jsonrpc::{CallError, ErrorObject, Message, Packet, RequestId};
use talaria_core::schema::logging::LoggingMessageNotificationParams;
use talaria_core::schema::Implementation;
use talaria_core::session::{
    Client, ClientConfig, ClientMode, Event, IncomingRequest, Output, ProtocolError, ReadyInfo, RequestOptions, Role,
    SendError, Server, ServerConfig, Session,
};
use talaria_core::version::ProtocolVersion;

/// The environment variable that overrides every simulator seed.
pub const SEED_ENV: &str = "TALARIA_SIM_SEED";

/// The seed used when a test names none and `TALARIA_SIM_SEED` is unset.
pub const DEFAULT_SEED: u64 = 0x7a1a_71a5_5eed_0001;

/// The most steps [`Pair::settle`] takes at one instant before it declares a busy loop.
const MAX_STEPS_PER_INSTANT: u32 = 10_000;

/// The most wake-ups [`Pair::run_until_quiet`] and [`Pair::run_for`] take before giving up.
const MAX_WAKEUPS: u32 = 1_000_000;

/// `TALARIA_SIM_SEED` if it is set (decimal, or hex with `0x`), else `default`.
///
/// # Panics
///
/// If the variable is set but is not a number (a typo would silently replay the wrong seed).
///
/// # Examples
///
/// ```
/// if std::env::var_os(talaria_tests::sim::SEED_ENV).is_none() {
///     assert_eq!(talaria_tests::sim::seed_or(42), 42);
/// }
/// ```
#[must_use]
pub fn seed_or(default: u64) -> u64 {
    let Ok(text) = std::env::var(SEED_ENV) else { return default };
    let text = text.trim();
    let parsed = match text.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => text.parse(),
    };
    parsed.unwrap_or_else(|e| panic!("{SEED_ENV}={text:?} is not a u64: {e}"))
}

/// A small seeded PRNG (splitmix64): fast, deterministic, good enough to pick faults.
///
/// # Examples
///
/// ```
/// use talaria_tests::sim::Rng;
///
/// let (mut a, mut b) = (Rng::new(1), Rng::new(1));
/// assert_eq!(a.next_u64(), b.next_u64());
/// assert!(a.below(10) < 10);
/// assert!(!a.chance(0.0) && a.chance(1.0));
/// ```
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator started from `seed`.
    #[must_use]
    pub const fn new(seed: u64) -> Self {
        Self(seed)
    }

    /// The next 64 random bits.
    pub const fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next_u64() % n
        }
    }

    /// `true` with probability `p` (0 never, 1 always).
    pub fn chance(&mut self, p: f64) -> bool {
        if p <= 0.0 {
            return false;
        }
        // 53 random bits make a uniform f64 in [0, 1).
        #[allow(clippy::cast_precision_loss, reason = "53 bits fit an f64 mantissa exactly")]
        let unit = (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        unit < p
    }

    /// A duration in `0..=max`, in whole microseconds.
    pub fn duration(&mut self, max: Duration) -> Duration {
        let micros = u64::try_from(max.as_micros()).unwrap_or(u64::MAX);
        Duration::from_micros(self.below(micros.saturating_add(1)))
    }
}

/// The faults the pipes inject, and the simulator's switches. All probabilities zero is a
/// perfect pipe.
///
/// # Examples
///
/// ```
/// use talaria_tests::sim::SimConfig;
///
/// let c = SimConfig::perfect(1);
/// assert!(c.is_perfect());
/// assert!(!SimConfig::chaos(1).is_perfect());
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct SimConfig {
    /// The seed of both pipes' generators.
    pub seed: u64,
    /// Probability that one delivery (all frames due at one step, concatenated) is split into
    /// random chunks of 1 to `max_chunk` bytes instead of being fed whole.
    pub chunk: f64,
    /// The largest chunk when a delivery is split.
    pub max_chunk: usize,
    /// Probability that a frame is delayed by up to `max_delay` (it still keeps its place
    /// behind earlier frames, as on a byte stream).
    pub delay: f64,
    /// The longest delay, for `delay` and `reorder`.
    pub max_delay: Duration,
    /// Probability that a frame is reordered: held back by up to `max_delay` and behind up to
    /// a few frames sent after it, which may overtake it.
    pub reorder: f64,
    /// Probability that a frame is delivered twice.
    pub duplicate: f64,
    /// Probability, per frame about to be delivered, that the connection dies instead: the
    /// frames still in flight are lost and both sides get `handle_closed`.
    pub kill: f64,
    /// When a side reports `Event::Closed`, its transport closes too: the peer gets
    /// `handle_closed` once the frames already in flight from it are delivered (default on).
    pub eof_on_close: bool,
    /// Panic as soon as a session breaks an invariant (default on).
    pub check_invariants: bool,
}

impl SimConfig {
    /// A perfect pipe, seeded with `TALARIA_SIM_SEED` if set, else `seed`.
    #[must_use]
    pub fn perfect(seed: u64) -> Self {
        Self {
            seed: seed_or(seed),
            chunk: 0.0,
            max_chunk: 32,
            delay: 0.0,
            max_delay: Duration::ZERO,
            reorder: 0.0,
            duplicate: 0.0,
            kill: 0.0,
            eof_on_close: true,
            check_invariants: true,
        }
    }

    /// A lossless but unruly pipe: chunks, delays up to 50 ms and reorders; never duplicates
    /// or kills. Seeded like [`SimConfig::perfect`].
    #[must_use]
    pub fn chaos(seed: u64) -> Self {
        Self { chunk: 0.5, delay: 0.3, max_delay: Duration::from_millis(50), reorder: 0.3, ..Self::perfect(seed) }
    }

    /// A pipe that only reorders (half the frames, up to 20 ms). Seeded like
    /// [`SimConfig::perfect`].
    #[must_use]
    pub fn reordering(seed: u64) -> Self {
        Self { reorder: 0.5, max_delay: Duration::from_millis(20), ..Self::perfect(seed) }
    }

    /// Whether no fault is ever injected.
    #[must_use]
    pub fn is_perfect(&self) -> bool {
        self.chunk <= 0.0 && self.delay <= 0.0 && self.reorder <= 0.0 && self.duplicate <= 0.0 && self.kill <= 0.0
    }
}

impl Default for SimConfig {
    /// A perfect pipe seeded with `TALARIA_SIM_SEED` if set, else [`DEFAULT_SEED`].
    fn default() -> Self {
        Self::perfect(DEFAULT_SEED)
    }
}

/// A direction of the connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Dir {
    /// From the client to the server.
    ToServer,
    /// From the server to the client.
    ToClient,
}

/// What a tap decides for one frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fate {
    /// Into the pipe as usual (faults still apply).
    Deliver,
    /// Lost.
    Drop,
    /// Delivered this much later; later frames may overtake it.
    Delay(Duration),
}

/// A filter on the frames entering one pipe: sees each payload (no newline) and decides its
/// [`Fate`]. Lets a scenario drop or hold back one exact message.
pub type Tap = Box<dyn FnMut(&[u8]) -> Fate>;

/// How a scenario sets the two sides up: which client mode, which revisions each side speaks.
///
/// Scenarios that apply to both eras loop over [`Setup::ALL`].
///
/// # Examples
///
/// ```
/// use talaria_core::version::ProtocolVersion;
/// use talaria_tests::sim::Setup;
///
/// assert_eq!(Setup::AutoLegacyServer.expected_version(), ProtocolVersion::V2025_11_25);
/// assert!(Setup::AutoBoth.is_stateless());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Setup {
    /// `ClientMode::Legacy`, the client restricted to one legacy revision; the server speaks
    /// every revision.
    Legacy(ProtocolVersion),
    /// `ClientMode::Stateless` against a server that speaks every revision.
    Stateless,
    /// `ClientMode::Auto` against a server that speaks every revision (ends stateless).
    AutoBoth,
    /// `ClientMode::Auto` against a server restricted to the legacy revisions (falls back to
    /// `initialize`, ends at 2025-11-25).
    AutoLegacyServer,
}

impl Setup {
    /// Every setup: each legacy revision, stateless, and Auto against both kinds of server.
    pub const ALL: [Self; 7] = [
        Self::Legacy(ProtocolVersion::V2024_11_05),
        Self::Legacy(ProtocolVersion::V2025_03_26),
        Self::Legacy(ProtocolVersion::V2025_06_18),
        Self::Legacy(ProtocolVersion::V2025_11_25),
        Self::Stateless,
        Self::AutoBoth,
        Self::AutoLegacyServer,
    ];

    /// The revision the session should settle on.
    #[must_use]
    pub const fn expected_version(self) -> ProtocolVersion {
        match self {
            Self::Legacy(v) => v,
            Self::Stateless | Self::AutoBoth => ProtocolVersion::V2026_07_28,
            Self::AutoLegacyServer => ProtocolVersion::LATEST_LEGACY,
        }
    }

    /// Whether the session ends up in the stateless era.
    #[must_use]
    pub const fn is_stateless(self) -> bool {
        matches!(self, Self::Stateless | Self::AutoBoth)
    }

    /// The client's configuration (name `sim-client`, version `1.0`, no capabilities).
    #[must_use]
    pub fn client_config(self) -> ClientConfig {
        let info = Implementation::new("sim-client", "1.0");
        match self {
            Self::Legacy(v) => {
                let mut c = ClientConfig::new(info).with_mode(ClientMode::Legacy);
                c.session.versions = vec![v];
                c
            }
            Self::Stateless => ClientConfig::new(info).with_mode(ClientMode::Stateless),
            Self::AutoBoth | Self::AutoLegacyServer => ClientConfig::new(info).with_mode(ClientMode::Auto),
        }
    }

    /// The server's configuration (name `sim-server`, version `2.0`, no capabilities).
    #[must_use]
    pub fn server_config(self) -> ServerConfig {
        let mut s = ServerConfig::new(Implementation::new("sim-server", "2.0"));
        if self == Self::AutoLegacyServer {
            s.session.versions.retain(|v| v.era() == talaria_core::version::Era::Legacy);
        }
        s
    }

    /// A pair with this setup's configurations.
    #[must_use]
    pub fn pair(self, sim: SimConfig) -> Pair {
        Pair::new(self.client_config(), self.server_config(), sim)
    }

    /// A pair whose handshake is done: the client is ready (and, in the legacy era, the
    /// server too; a stateless server gets ready with the first request).
    ///
    /// # Panics
    ///
    /// If the handshake does not complete.
    #[must_use]
    pub fn connected(self, sim: SimConfig) -> Pair {
        let mut pair = self.pair(sim);
        pair.connect();
        pair
    }
}

impl fmt::Display for Setup {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Legacy(v) => write!(f, "legacy {v}"),
            Self::Stateless => f.write_str("stateless"),
            Self::AutoBoth => f.write_str("auto vs dual-era server"),
            Self::AutoLegacyServer => f.write_str("auto vs legacy-only server"),
        }
    }
}

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

/// One side of a [`Pair`]: its session and what it reported.
pub struct Peer<R> {
    /// The session. Commands may be called on it directly; the pair collects the outputs.
    pub session: Session<R>,
    /// Every event, in order, with the virtual time it was collected at.
    pub log: Vec<Logged>,
    /// Peer requests waiting for an answer, oldest first.
    pub requests: VecDeque<IncomingRequest>,
    /// Every payload this side transmitted, in order.
    pub wire: Vec<Sent>,
    name: &'static str,
    closed: bool,
    responses: BTreeMap<RequestId, usize>,
    request_ids: BTreeSet<RequestId>,
}

impl<R> fmt::Debug for Peer<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Peer")
            .field("name", &self.name)
            .field("log", &self.log)
            .field("requests", &self.requests)
            .finish_non_exhaustive()
    }
}

impl<R: Role> Peer<R> {
    fn new(session: Session<R>, name: &'static str) -> Self {
        Self {
            session,
            log: Vec::new(),
            requests: VecDeque::new(),
            wire: Vec::new(),
            name,
            closed: false,
            responses: BTreeMap::new(),
            request_ids: BTreeSet::new(),
        }
    }

    /// The events, without their times (peer requests appear as [`Seen::Request`]).
    pub fn seen(&self) -> impl Iterator<Item = &Seen> {
        self.log.iter().map(|l| &l.seen)
    }

    /// The events other than peer requests.
    pub fn events(&self) -> impl Iterator<Item = &Event> {
        self.seen().filter_map(|s| match s {
            Seen::Event(e) => Some(e),
            Seen::Request { .. } | Seen::Other(_) => None,
        })
    }

    /// What the session reported when it became ready.
    #[must_use]
    pub fn ready(&self) -> Option<&ReadyInfo> {
        self.events().find_map(|e| match e {
            Event::Ready(info) => Some(&**info),
            _ => None,
        })
    }

    /// When `Event::Ready` was collected (virtual offset).
    #[must_use]
    pub fn ready_at(&self) -> Option<Duration> {
        self.log.iter().find(|l| matches!(l.seen, Seen::Event(Event::Ready(_)))).map(|l| l.at)
    }

    /// How many `Event::Ready` were reported.
    #[must_use]
    pub fn ready_count(&self) -> usize {
        self.events().filter(|e| matches!(e, Event::Ready(_))).count()
    }

    /// Every `Event::Response`: id, outcome and when it was collected.
    pub fn responses(&self) -> impl Iterator<Item = (&RequestId, &Result<Box<RawValue>, CallError>, Duration)> {
        self.log.iter().filter_map(|l| match &l.seen {
            Seen::Event(Event::Response { id, outcome }) => Some((id, outcome, l.at)),
            _ => None,
        })
    }

    /// The outcome of request `id`, if it has ended.
    #[must_use]
    pub fn outcome(&self, id: &RequestId) -> Option<&Result<Box<RawValue>, CallError>> {
        self.responses().find(|(i, _, _)| *i == id).map(|(_, o, _)| o)
    }

    /// When request `id` ended (virtual offset), if it has.
    #[must_use]
    pub fn ended_at(&self, id: &RequestId) -> Option<Duration> {
        self.responses().find(|(i, _, _)| *i == id).map(|(_, _, at)| at)
    }

    /// How many `Event::Response` were reported for `id`.
    #[must_use]
    pub fn response_count(&self, id: &RequestId) -> usize {
        self.responses.get(id).copied().unwrap_or(0)
    }

    /// The decoded result of request `id`, if it ended with one.
    #[must_use]
    pub fn result(&self, id: &RequestId) -> Option<Value> {
        match self.outcome(id)? {
            Ok(raw) => serde_json::from_str(raw.get()).ok(),
            Err(_) => None,
        }
    }

    /// The error of request `id`, if it ended with one.
    #[must_use]
    pub fn error(&self, id: &RequestId) -> Option<&CallError> {
        self.outcome(id)?.as_ref().err()
    }

    /// Whether `Event::Closed` was reported.
    #[must_use]
    pub const fn is_closed(&self) -> bool {
        self.closed
    }

    /// The reason of `Event::Closed`, if it was reported (`Some(None)` for no reason).
    #[must_use]
    pub fn closed_reason(&self) -> Option<Option<&str>> {
        self.events().find_map(|e| match e {
            Event::Closed { reason } => Some(reason.as_deref()),
            _ => None,
        })
    }

    /// Whether the last event is `Event::Closed`.
    #[must_use]
    pub fn closed_last(&self) -> bool {
        matches!(self.log.last(), Some(Logged { seen: Seen::Event(Event::Closed { .. }), .. }))
    }

    /// Every `Event::PeerMisbehaved`.
    pub fn misbehaviours(&self) -> impl Iterator<Item = &ProtocolError> {
        self.events().filter_map(|e| match e {
            Event::PeerMisbehaved(p) => Some(p),
            _ => None,
        })
    }

    /// Every `Event::Log` (on a client).
    pub fn logs(&self) -> impl Iterator<Item = &LoggingMessageNotificationParams> {
        self.events().filter_map(|e| match e {
            Event::Log(p) => Some(&**p),
            _ => None,
        })
    }

    /// Every `Event::PeerCancelled`: id and reason.
    pub fn peer_cancellations(&self) -> impl Iterator<Item = (&RequestId, Option<&str>)> {
        self.events().filter_map(|e| match e {
            Event::PeerCancelled { id, reason } => Some((id, reason.as_deref())),
            _ => None,
        })
    }

    /// Every `Event::Progress`: id, progress, total, message, and when.
    pub fn progress(&self) -> impl Iterator<Item = (&RequestId, f64, Option<f64>, Option<&str>, Duration)> {
        self.log.iter().filter_map(|l| match &l.seen {
            Seen::Event(Event::Progress { id, progress, total, message }) => {
                Some((id, *progress, *total, message.as_deref(), l.at))
            }
            _ => None,
        })
    }

    /// Every payload this side transmitted, decoded (each is checked valid when sent).
    #[must_use]
    pub fn sent_messages(&self) -> Vec<Message> {
        self.wire.iter().filter_map(|s| Message::from_slice(&s.payload).ok()).collect()
    }

    /// The params of every notification named `method` this side transmitted.
    #[must_use]
    pub fn sent_notifications(&self, method: &str) -> Vec<Value> {
        self.sent_messages()
            .into_iter()
            .filter_map(|m| match m {
                Message::Notification(n) if n.method == method => {
                    Some(n.params.and_then(|p| serde_json::from_str(p.get()).ok()).unwrap_or(Value::Null))
                }
                _ => None,
            })
            .collect()
    }

    /// The answers (result or error) this side transmitted to request `id`.
    #[must_use]
    pub fn sent_answers(&self, id: &RequestId) -> Vec<Message> {
        self.sent_messages()
            .into_iter()
            .filter(|m| match m {
                Message::Response(r) => r.id == *id,
                Message::Error(e) => e.id.as_ref() == Some(id),
                _ => false,
            })
            .collect()
    }

    /// The error objects this side transmitted to request `id`.
    #[must_use]
    pub fn sent_errors(&self, id: &RequestId) -> Vec<ErrorObject> {
        self.sent_answers(id)
            .into_iter()
            .filter_map(|m| match m {
                Message::Error(e) => Some(e.error),
                _ => None,
            })
            .collect()
    }

    /// The methods of the requests this side transmitted, in order.
    #[must_use]
    pub fn sent_methods(&self) -> Vec<String> {
        self.sent_messages()
            .into_iter()
            .filter_map(|m| match m {
                Message::Request(r) => Some(r.method),
                _ => None,
            })
            .collect()
    }

    /// Takes the oldest waiting peer request named `method`.
    pub fn take_request(&mut self, method: &str) -> Option<IncomingRequest> {
        let i = self.requests.iter().position(|r| r.method == method)?;
        self.requests.remove(i)
    }

    /// Answers one peer request with a JSON result or an error.
    ///
    /// # Errors
    ///
    /// Whatever `Session::respond` refuses.
    #[allow(clippy::needless_pass_by_value, reason = "call sites pass `json!` temporaries")]
    pub fn respond(&mut self, request: IncomingRequest, result: Result<Value, ErrorObject>) -> Result<(), SendError> {
        self.session.respond(request.reply, result.map(|v| raw(&v)))
    }

    /// Answers every waiting peer request with what `answer` returns for it; returns how
    /// many were answered.
    ///
    /// # Errors
    ///
    /// The first refusal of `Session::respond` (the requests after it stay waiting).
    pub fn answer_all(
        &mut self,
        mut answer: impl FnMut(&IncomingRequest) -> Result<Value, ErrorObject>,
    ) -> Result<usize, SendError> {
        let mut n = 0;
        while let Some(request) = self.requests.pop_front() {
            let result = answer(&request);
            self.respond(request, result)?;
            n += 1;
        }
        Ok(n)
    }

    /// Collects the outputs: transmits into `pipe`, events into the log. Checks invariants.
    fn drain(&mut self, at: Duration, pipe: &mut Pipe, config: &SimConfig, killed: bool) -> bool {
        let mut any = false;
        while let Some(output) = self.session.poll_output() {
            any = true;
            if config.check_invariants && self.closed {
                panic!("{} output after Event::Closed (seed {}): {output:?}", self.name, config.seed);
            }
            match output {
                Output::Transmit { payload, .. } => {
                    if config.check_invariants {
                        self.check_payload(&payload, config.seed);
                    }
                    if !killed {
                        let (extra, dropped) = match pipe.tap.as_mut().map_or(Fate::Deliver, |tap| tap(&payload)) {
                            Fate::Deliver => (Duration::ZERO, false),
                            Fate::Drop => (Duration::ZERO, true),
                            Fate::Delay(d) => (d, false),
                        };
                        if !dropped {
                            pipe.push(at, &payload, extra, extra > Duration::ZERO, config);
                        }
                    }
                    self.wire.push(Sent { at, payload });
                }
                Output::Event(Event::Request(request)) => {
                    let seen = Seen::Request { id: request.reply.id().clone(), method: request.method.clone() };
                    self.log.push(Logged { at, seen });
                    self.requests.push_back(request);
                }
                Output::Event(event) => {
                    if let Event::Response { id, .. } = &event {
                        let n = self.responses.entry(id.clone()).or_default();
                        *n += 1;
                        if config.check_invariants && *n > 1 {
                            panic!("{}: request {id} ended twice (seed {}): {event:?}", self.name, config.seed);
                        }
                    }
                    if matches!(event, Event::Closed { .. }) {
                        self.closed = true;
                        if config.eof_on_close {
                            pipe.eof = true;
                        }
                        self.requests.clear();
                    }
                    self.log.push(Logged { at, seen: Seen::Event(event) });
                }
                other => self.log.push(Logged { at, seen: Seen::Other(format!("{other:?}")) }),
            }
        }
        any
    }

    fn check_payload(&mut self, payload: &[u8], seed: u64) {
        let requests = match Packet::from_slice(payload) {
            Ok(Packet::Single(Message::Request(req))) => vec![req.id],
            Ok(Packet::Batch(items)) => items
                .into_iter()
                .map(|item| {
                    item.unwrap_or_else(|e| panic!("{} sent an invalid batch element (seed {seed}): {e}", self.name))
                })
                .filter_map(|m| match m {
                    Message::Request(req) => Some(req.id),
                    _ => None,
                })
                .collect(),
            Ok(Packet::Single(_)) => Vec::new(),
            Err(e) => panic!(
                "{} transmitted an invalid JSON-RPC payload (seed {seed}): {e}: {}",
                self.name,
                String::from_utf8_lossy(payload)
            ),
        };
        for id in requests {
            if !self.request_ids.insert(id.clone()) {
                panic!("{} sent request id {id} twice (seed {seed})", self.name);
            }
        }
    }
}

/// One event a side reported, with the virtual time it was collected at.
#[derive(Debug)]
pub struct Logged {
    /// When (offset from the pair's start).
    pub at: Duration,
    /// What.
    pub seen: Seen,
}

/// An event as the pair records it.
#[derive(Debug)]
pub enum Seen {
    /// `Event::Request`; the request itself waits in [`Peer::requests`] for its answer.
    Request {
        /// Its id.
        id: RequestId,
        /// Its method.
        method: String,
    },
    /// Any other event.
    Event(Event),
    /// An output that is neither a transmit nor an event (e.g. `StreamDone`), as text.
    Other(String),
}

/// A payload one side transmitted.
#[derive(Debug, Clone)]
pub struct Sent {
    /// When (offset from the pair's start).
    pub at: Duration,
    /// The JSON text, without framing.
    pub payload: Vec<u8>,
}

/// The method of a JSON-RPC request or notification payload, if it is one.
///
/// # Examples
///
/// ```
/// assert_eq!(talaria_tests::sim::method_of(br#"{"jsonrpc":"2.0","method":"ping","id":1}"#).as_deref(), Some("ping"));
/// assert_eq!(talaria_tests::sim::method_of(b"nonsense"), None);
/// ```
#[must_use]
pub fn method_of(payload: &[u8]) -> Option<String> {
    Message::from_slice(payload).ok()?.method().map(str::to_owned)
}

/// A request frame: `{"jsonrpc":"2.0","id":id,"method":method,"params":params}`.
///
/// # Examples
///
/// ```
/// use serde_json::json;
///
/// let f = talaria_tests::sim::request_frame(json!(1), "ping", None);
/// assert_eq!(talaria_tests::sim::method_of(&f).as_deref(), Some("ping"));
/// ```
#[must_use]
pub fn request_frame(id: Value, method: &str, params: Option<Value>) -> Vec<u8> {
    let mut obj = serde_json::Map::new();
    obj.insert("jsonrpc".into(), "2.0".into());
    obj.insert("id".into(), id);
    obj.insert("method".into(), method.into());
    if let Some(params) = params {
        obj.insert("params".into(), params);
    }
    Value::Object(obj).to_string().into_bytes()
}

/// The `_meta` a stateless (2026-07-28) client puts on its requests, for `version`, with
/// empty client capabilities and the simulator client's info.
#[must_use]
pub fn stateless_meta(version: &str) -> Value {
    serde_json::json!({
        "io.modelcontextprotocol/protocolVersion": version,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "sim-client", "version": "1.0"},
    })
}

/// The params of a peer request as JSON (`null` when absent).
#[must_use]
pub fn params_of(request: &IncomingRequest) -> Value {
    request.params.as_ref().and_then(|p| serde_json::from_str(p.get()).ok()).unwrap_or(Value::Null)
}

/// Encodes a JSON value as raw params or a raw result.
///
/// # Panics
///
/// Never: a `serde_json::Value` always serializes.
#[must_use]
pub fn raw(value: &Value) -> Box<RawValue> {
    #[allow(clippy::expect_used, reason = "a serde_json::Value always serializes")]
    serde_json::value::to_raw_value(value).expect("a Value serializes")
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

/// One direction of the connection: frames in flight with their delivery times.
struct Pipe {
    rng: Rng,
    frames: Vec<Frame>,
    /// Sequence numbers, for the delivery order among frames due at the same time.
    seq: u64,
    /// The latest due time of an in-order frame: later in-order frames wait for it.
    fifo_due: Duration,
    tap: Option<Tap>,
    /// The sending side closed: after the last frame, the receiver gets `handle_closed`.
    eof: bool,
    eof_delivered: bool,
}

/// A frame in flight.
struct Frame {
    due: Duration,
    /// Delivery order among frames due together.
    order: u64,
    bytes: Vec<u8>,
}

impl Pipe {
    fn new(seed: u64) -> Self {
        Self {
            rng: Rng::new(seed),
            frames: Vec::new(),
            seq: 0,
            fifo_due: Duration::ZERO,
            tap: None,
            eof: false,
            eof_delivered: false,
        }
    }

    /// Sends one payload: framing, then the faults of `config`. `out_of_band` frames neither
    /// wait for earlier frames nor hold back later ones.
    fn push(&mut self, now: Duration, payload: &[u8], extra: Duration, out_of_band: bool, config: &SimConfig) {
        let mut bytes = Vec::with_capacity(payload.len() + 1);
        bytes.extend_from_slice(payload);
        if bytes.last() != Some(&b'\n') {
            bytes.push(b'\n');
        }
        let copies = if self.rng.chance(config.duplicate) { 2 } else { 1 };
        for _ in 0..copies {
            self.seq += 1;
            let mut due = now + extra;
            if self.rng.chance(config.delay) {
                due += self.rng.duration(config.max_delay);
            }
            // Orders are spaced by 8 so that a reordered frame can slot in behind later ones.
            let mut order = self.seq * 8;
            if self.rng.chance(config.reorder) {
                due += self.rng.duration(config.max_delay);
                order = (self.seq + 1 + self.rng.below(4)) * 8 + 4;
            } else if !out_of_band {
                due = due.max(self.fifo_due);
                self.fifo_due = due;
            }
            self.frames.push(Frame { due, order, bytes: bytes.clone() });
        }
    }

    /// Removes and returns the frames due at `now`, in delivery order.
    fn take_due(&mut self, now: Duration) -> Vec<Frame> {
        let (mut due, rest): (Vec<Frame>, Vec<Frame>) =
            std::mem::take(&mut self.frames).into_iter().partition(|f| f.due <= now);
        self.frames = rest;
        due.sort_by_key(|f| (f.due, f.order));
        due
    }
}

/// Prints the seed when a test panics while the pair is alive.
struct SeedGuard {
    seed: u64,
}

impl Drop for SeedGuard {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("talaria sim: failed with seed {0}; replay with {SEED_ENV}={0}", self.seed);
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn the_generator_is_deterministic_and_spread() {
        let mut a = Rng::new(9);
        let mut b = Rng::new(9);
        let xs: Vec<u64> = (0..100).map(|_| a.next_u64()).collect();
        let ys: Vec<u64> = (0..100).map(|_| b.next_u64()).collect();
        assert_eq!(xs, ys);
        let hits = (0..10_000).filter(|_| a.chance(0.25)).count();
        assert!((2_000..3_000).contains(&hits), "{hits}");
        assert!(a.duration(Duration::from_millis(3)) <= Duration::from_millis(3));
    }

    #[test]
    fn a_reordering_pipe_delivers_every_frame_once_and_sometimes_out_of_order() {
        let config = SimConfig { reorder: 0.5, max_delay: Duration::ZERO, ..SimConfig::perfect(3) };
        let mut pipe = Pipe::new(3);
        for i in 0..200u32 {
            pipe.push(Duration::ZERO, i.to_string().as_bytes(), Duration::ZERO, false, &config);
        }
        let got: Vec<u32> = pipe
            .take_due(Duration::ZERO)
            .into_iter()
            .map(|f| std::str::from_utf8(&f.bytes).unwrap().trim().parse().unwrap())
            .collect();
        let mut sorted = got.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..200).collect::<Vec<_>>());
        assert_ne!(got, sorted);
    }

    #[test]
    fn an_in_order_pipe_keeps_order_under_delay() {
        let config = SimConfig { delay: 0.5, max_delay: Duration::from_millis(10), ..SimConfig::perfect(5) };
        let mut pipe = Pipe::new(5);
        for i in 0..100u32 {
            pipe.push(Duration::from_micros(u64::from(i)), i.to_string().as_bytes(), Duration::ZERO, false, &config);
        }
        let got: Vec<u32> = pipe
            .take_due(Duration::from_secs(1))
            .into_iter()
            .map(|f| std::str::from_utf8(&f.bytes).unwrap().trim().parse().unwrap())
            .collect();
        assert_eq!(got, (0..100).collect::<Vec<_>>());
    }
}
