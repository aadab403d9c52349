//! The smol server's read timeout, kept by one task for every connection: a connection notes
//! when it starts waiting for bytes, and the watchdog, waking a few times per timeout, shuts
//! the reading side of those silent for too long. A timer per read would register with the
//! reactor (and wake a thread parked in it) on every request.

use std::net::{Shutdown, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::{Duration, Instant};

use smol::Async;

/// One connection as the watchdog sees it.
#[derive(Debug)]
pub(super) struct Watch {
    stream: Arc<Async<TcpStream>>,
    /// When the connection started waiting for bytes (milliseconds since the watchdog's
    /// epoch, plus one); 0 while it is not reading.
    since: AtomicU64,
    timed_out: AtomicBool,
    epoch: Instant,
}

impl Watch {
    /// The connection waits for bytes from now on.
    pub(super) fn reading(&self) {
        self.since.store(millis(self.epoch) + 1, Ordering::Release);
    }

    /// The connection got its bytes (or stopped waiting).
    pub(super) fn done_reading(&self) {
        self.since.store(0, Ordering::Release);
    }

    /// Whether the watchdog ended the connection's read for silence.
    pub(super) fn timed_out(&self) -> bool {
        self.timed_out.load(Ordering::Acquire)
    }
}

fn millis(epoch: Instant) -> u64 {
    u64::try_from(epoch.elapsed().as_millis()).unwrap_or(u64::MAX - 1)
}

/// Every connection's [`Watch`], and the timeout they are held to.
#[derive(Debug)]
pub(super) struct Watchdog {
    watches: Mutex<Vec<Weak<Watch>>>,
    timeout: Duration,
    epoch: Instant,
}

impl Watchdog {
    pub(super) fn new(timeout: Duration) -> Self {
        Self { watches: Mutex::new(Vec::new()), timeout, epoch: Instant::now() }
    }

    /// Watches a new connection (for as long as its [`Watch`] lives).
    pub(super) fn watch(&self, stream: Arc<Async<TcpStream>>) -> Arc<Watch> {
        let watch =
            Arc::new(Watch { stream, since: AtomicU64::new(0), timed_out: AtomicBool::new(false), epoch: self.epoch });
        self.watches.lock().unwrap_or_else(PoisonError::into_inner).push(Arc::downgrade(&watch));
        watch
    }

    /// How often [`sweep`](Self::sweep) runs: a quarter of the timeout, within 5 ms and 1 s.
    pub(super) fn tick(&self) -> Duration {
        (self.timeout / 4).clamp(Duration::from_millis(5), Duration::from_secs(1))
    }

    /// Ends the reads of connections silent past the timeout, and forgets closed ones.
    pub(super) fn sweep(&self) {
        let now = millis(self.epoch) + 1;
        let limit = u64::try_from(self.timeout.as_millis()).unwrap_or(u64::MAX);
        self.watches.lock().unwrap_or_else(PoisonError::into_inner).retain(|watch| {
            let Some(watch) = watch.upgrade() else { return false };
            let since = watch.since.load(Ordering::Acquire);
            if since != 0 && now.saturating_sub(since) > limit {
                watch.timed_out.store(true, Ordering::Release);
                // The waiting read sees the end of input; the connection may still answer.
                let _ = watch.stream.get_ref().shutdown(Shutdown::Read);
            }
            true
        });
    }

    /// How many connections are watched (closed ones until the next sweep).
    #[cfg(test)]
    fn len(&self) -> usize {
        self.watches.lock().unwrap_or_else(PoisonError::into_inner).len()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use std::io::Read;
    use std::net::TcpListener;

    use super::*;

    #[test]
    fn a_connection_silent_past_the_timeout_has_its_read_ended_and_a_busy_one_does_not() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let _silent_client = TcpStream::connect(addr).unwrap();
        let (silent, _) = listener.accept().unwrap();
        let _busy_client = TcpStream::connect(addr).unwrap();
        let (busy, _) = listener.accept().unwrap();
        let dog = Watchdog::new(Duration::from_millis(20));
        assert_eq!(dog.tick(), Duration::from_millis(5));
        let silent = dog.watch(Arc::new(Async::new(silent).unwrap()));
        let busy = dog.watch(Arc::new(Async::new(busy).unwrap()));
        silent.reading();
        busy.reading();
        busy.done_reading();
        std::thread::sleep(Duration::from_millis(40));
        dog.sweep();
        assert!(silent.timed_out());
        assert!(!busy.timed_out(), "not reading: a handler may take as long as it likes");
        // The silent connection's read now ends at once.
        let mut byte = [0u8; 1];
        assert_eq!(silent.stream.get_ref().read(&mut byte).unwrap(), 0);
        drop(silent);
        dog.sweep();
        assert_eq!(dog.len(), 1, "a closed connection is forgotten");
    }
}
