//! One timer thread for every connection of the process: each connection asks to be woken at
//! its next deadline (`poll_timeout`), and the thread rings it then. A
//! connection costs no thread of its own while it waits.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};
use std::sync::{Condvar, Mutex, OnceLock, PoisonError, Weak};
use std::time::Instant;

/// Something to wake at a deadline.
pub(crate) trait Alarm: Send + Sync {
    /// The deadline it asked for (or a later one) has come.
    fn ring(&self, now: Instant);
}

#[derive(Default)]
struct Queue {
    /// (deadline, ticket), earliest first.
    due: BinaryHeap<Reverse<(Instant, u64)>>,
    targets: BTreeMap<u64, Weak<dyn Alarm>>,
    next_ticket: u64,
}

/// The process's timer thread and its queue.
pub(crate) struct Timers {
    queue: Mutex<Queue>,
    changed: Condvar,
}

static TIMERS: OnceLock<Timers> = OnceLock::new();

/// The timer thread, started on first use.
pub(crate) fn timers() -> &'static Timers {
    TIMERS.get_or_init(|| {
        let _ = std::thread::Builder::new().name("talaria-timers".into()).spawn(|| timers().run());
        Timers { queue: Mutex::new(Queue::default()), changed: Condvar::new() }
    })
}

impl Timers {
    /// Rings `target` at `at` (if it still exists then).
    pub(crate) fn schedule(&self, at: Instant, target: Weak<dyn Alarm>) {
        let mut queue = self.queue.lock().unwrap_or_else(PoisonError::into_inner);
        let earliest = queue.due.peek().is_none_or(|Reverse((first, _))| at < *first);
        let ticket = queue.next_ticket;
        queue.next_ticket += 1;
        queue.due.push(Reverse((at, ticket)));
        queue.targets.insert(ticket, target);
        drop(queue);
        if earliest {
            self.changed.notify_one();
        }
    }

    fn run(&self) {
        let mut queue = self.queue.lock().unwrap_or_else(PoisonError::into_inner);
        loop {
            let now = Instant::now();
            match queue.due.peek().copied() {
                None => queue = self.changed.wait(queue).unwrap_or_else(PoisonError::into_inner),
                Some(Reverse((at, _))) if at > now => {
                    queue = self.changed.wait_timeout(queue, at - now).unwrap_or_else(PoisonError::into_inner).0;
                }
                Some(Reverse((_, ticket))) => {
                    queue.due.pop();
                    let target = queue.targets.remove(&ticket);
                    drop(queue);
                    if let Some(target) = target.and_then(|t| t.upgrade()) {
                        target.ring(now);
                    }
                    queue = self.queue.lock().unwrap_or_else(PoisonError::into_inner);
                }
            }
        }
    }
}
