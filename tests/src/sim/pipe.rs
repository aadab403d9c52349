//! The seeded, faulty pipe that carries one direction of the connection, and the
//! [`SimConfig`] that sets its faults.

use std::time::Duration;

use super::rng::{seed_or, Rng, DEFAULT_SEED};

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

/// One direction of the connection: frames in flight with their delivery times.
pub(crate) struct Pipe {
    pub(crate) rng: Rng,
    pub(crate) frames: Vec<Frame>,
    /// Sequence numbers, for the delivery order among frames due at the same time.
    seq: u64,
    /// The latest due time of an in-order frame: later in-order frames wait for it.
    fifo_due: Duration,
    pub(crate) tap: Option<Tap>,
    /// The sending side closed: after the last frame, the receiver gets `handle_closed`.
    pub(crate) eof: bool,
    pub(crate) eof_delivered: bool,
}

/// A frame in flight.
pub(crate) struct Frame {
    pub(crate) due: Duration,
    /// Delivery order among frames due together.
    order: u64,
    pub(crate) bytes: Vec<u8>,
}

impl Pipe {
    pub(crate) fn new(seed: u64) -> Self {
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
    pub(crate) fn push(
        &mut self,
        now: Duration,
        payload: &[u8],
        extra: Duration,
        out_of_band: bool,
        config: &SimConfig,
    ) {
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
    pub(crate) fn take_due(&mut self, now: Duration) -> Vec<Frame> {
        let (mut due, rest): (Vec<Frame>, Vec<Frame>) =
            std::mem::take(&mut self.frames).into_iter().partition(|f| f.due <= now);
        self.frames = rest;
        due.sort_by_key(|f| (f.due, f.order));
        due
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

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
