//! A one-value channel that a thread can block on and a task can await: how a call's outcome
//! travels from the connection's I/O to whoever is waiting for it, under any executor.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::task::{Context, Poll, Waker};

struct Slot<T> {
    value: Option<T>,
    /// The sender was dropped without sending.
    abandoned: bool,
    waker: Option<Waker>,
    /// A thread is blocked in `wait` (only then is the condvar worth a syscall).
    blocked: bool,
}

struct Shared<T> {
    slot: Mutex<Slot<T>>,
    ready: Condvar,
}

/// Sends the one value.
pub(crate) struct Sender<T> {
    shared: Option<Arc<Shared<T>>>,
}

/// Waits for the one value, blocking or as a future.
pub(crate) struct Receiver<T> {
    shared: Arc<Shared<T>>,
}

/// A connected pair.
pub(crate) fn channel<T>() -> (Sender<T>, Receiver<T>) {
    let shared = Arc::new(Shared {
        slot: Mutex::new(Slot { value: None, abandoned: false, waker: None, blocked: false }),
        ready: Condvar::new(),
    });
    (Sender { shared: Some(Arc::clone(&shared)) }, Receiver { shared })
}

impl<T> Sender<T> {
    /// Delivers `value` and wakes the receiver.
    pub(crate) fn send(mut self, value: T) {
        if let Some(shared) = self.shared.take() {
            let (waker, blocked) = {
                let mut slot = shared.slot.lock().unwrap_or_else(PoisonError::into_inner);
                slot.value = Some(value);
                (slot.waker.take(), slot.blocked)
            };
            if blocked {
                shared.ready.notify_all();
            }
            if let Some(waker) = waker {
                waker.wake();
            }
        }
    }
}

impl<T> Drop for Sender<T> {
    fn drop(&mut self) {
        if let Some(shared) = self.shared.take() {
            let (waker, blocked) = {
                let mut slot = shared.slot.lock().unwrap_or_else(PoisonError::into_inner);
                slot.abandoned = true;
                (slot.waker.take(), slot.blocked)
            };
            if blocked {
                shared.ready.notify_all();
            }
            if let Some(waker) = waker {
                waker.wake();
            }
        }
    }
}

impl<T> Receiver<T> {
    /// Blocks until the value arrives; `None` if the sender was dropped without sending.
    pub(crate) fn wait(&self) -> Option<T> {
        let mut slot = self.shared.slot.lock().unwrap_or_else(PoisonError::into_inner);
        loop {
            if let Some(value) = slot.value.take() {
                return Some(value);
            }
            if slot.abandoned {
                return None;
            }
            slot.blocked = true;
            slot = self.shared.ready.wait(slot).unwrap_or_else(PoisonError::into_inner);
        }
    }

    /// Whether the value (or the sender's abandonment) has arrived.
    pub(crate) fn is_done(&self) -> bool {
        let slot = self.shared.slot.lock().unwrap_or_else(PoisonError::into_inner);
        slot.value.is_some() || slot.abandoned
    }
}

impl<T> Future for Receiver<T> {
    type Output = Option<T>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<T>> {
        let mut slot = self.shared.slot.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(value) = slot.value.take() {
            return Poll::Ready(Some(value));
        }
        if slot.abandoned {
            return Poll::Ready(None);
        }
        match &slot.waker {
            Some(w) if w.will_wake(cx.waker()) => {}
            _ => slot.waker = Some(cx.waker().clone()),
        }
        Poll::Pending
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_value_sent_from_another_thread_is_received_once() {
        let (tx, rx) = channel();
        std::thread::spawn(move || tx.send(7));
        assert_eq!(rx.wait(), Some(7));
    }

    #[test]
    fn a_dropped_sender_ends_the_wait() {
        let (tx, rx) = channel::<u8>();
        drop(tx);
        assert_eq!(rx.wait(), None);
        assert!(rx.is_done());
    }

    #[test]
    fn the_receiver_is_a_future() {
        let (tx, rx) = channel();
        std::thread::spawn(move || tx.send("done"));
        assert_eq!(smol::block_on(rx), Some("done"));
    }
}
