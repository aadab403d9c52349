//! A one-sender, one-receiver channel that a thread can wait on (with a timeout) and a task can
//! await: how an HTTP response stream gets its frames in both the blocking and the smol server.

use std::collections::VecDeque;
use std::sync::mpsc::{RecvError, TryRecvError};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::task::Waker;

struct State<T> {
    /// Each value with the bytes it counts for.
    queue: VecDeque<(T, usize)>,
    /// The bytes of what is queued.
    bytes: usize,
    sender: bool,
    receiver: bool,
    /// The receiving thread waits on the condition variable (notifying costs a syscall even
    /// when no thread waits, so it is done only when one does). One flag is enough: there is
    /// one receiver, so at most one waiting thread.
    waiting: bool,
    waker: Option<Waker>,
}

impl<T> State<T> {
    /// The next value, no longer counted as queued.
    fn pop(&mut self) -> Option<T> {
        let (value, bytes) = self.queue.pop_front()?;
        self.bytes -= bytes;
        Some(value)
    }
}

struct Inner<T> {
    state: Mutex<State<T>>,
    ready: Condvar,
}

impl<T> Inner<T> {
    fn lock(&self) -> MutexGuard<'_, State<T>> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Wakes whoever waits: a thread, or a task.
    fn wake(&self, mut state: MutexGuard<'_, State<T>>) {
        let waker = state.waker.take();
        let waiting = state.waiting;
        drop(state);
        if waiting {
            self.ready.notify_one();
        }
        if let Some(waker) = waker {
            waker.wake();
        }
    }
}

/// A channel: what the sender sends, the receiver gets, in order.
pub(crate) fn channel<T>() -> (Sender<T>, Receiver<T>) {
    let inner = Arc::new(Inner {
        state: Mutex::new(State {
            queue: VecDeque::new(),
            bytes: 0,
            sender: true,
            receiver: true,
            waiting: false,
            waker: None,
        }),
        ready: Condvar::new(),
    });
    (Sender(Arc::clone(&inner)), Receiver(inner))
}

/// The sending half.
pub(crate) struct Sender<T>(Arc<Inner<T>>);

impl<T> Sender<T> {
    /// Sends `value`; gives it back if the receiver is gone.
    pub(crate) fn send(&self, value: T) -> Result<(), T> {
        self.send_sized(value, 0)
    }

    /// Sends `value`, counting it as `bytes` queued until it is received; gives it back if
    /// the receiver is gone.
    pub(crate) fn send_sized(&self, value: T, bytes: usize) -> Result<(), T> {
        let mut state = self.0.lock();
        if !state.receiver {
            return Err(value);
        }
        state.queue.push_back((value, bytes));
        state.bytes += bytes;
        self.0.wake(state);
        Ok(())
    }

    /// The bytes sent and not received yet.
    pub(crate) fn queued_bytes(&self) -> usize {
        self.0.lock().bytes
    }

    /// Takes back everything sent and not received yet, in order.
    pub(crate) fn take_all(&self) -> Vec<T> {
        let mut state = self.0.lock();
        state.bytes = 0;
        state.queue.drain(..).map(|(value, _)| value).collect()
    }

    /// Whether this sender feeds `receiver`.
    pub(crate) fn feeds(&self, receiver: &Receiver<T>) -> bool {
        Arc::ptr_eq(&self.0, &receiver.0)
    }
}

impl<T> Drop for Sender<T> {
    fn drop(&mut self) {
        let mut state = self.0.lock();
        state.sender = false;
        self.0.wake(state);
    }
}

/// The receiving half.
pub(crate) struct Receiver<T>(Arc<Inner<T>>);

impl<T> Receiver<T> {
    /// The next value if there is one now.
    pub(crate) fn try_recv(&self) -> Result<T, TryRecvError> {
        let mut state = self.0.lock();
        match state.pop() {
            Some(value) => Ok(value),
            None if state.sender => Err(TryRecvError::Empty),
            None => Err(TryRecvError::Disconnected),
        }
    }

    /// Whether the next value, left queued, is one `is` accepts.
    pub(crate) fn next_is(&self, is: impl FnOnce(&T) -> bool) -> bool {
        self.0.lock().queue.front().is_some_and(|(value, _)| is(value))
    }

    /// Waits for the next value; an error once the sender is gone and everything was taken.
    #[cfg(test)]
    pub(crate) fn recv(&self) -> Result<T, RecvError> {
        let mut state = self.0.lock();
        loop {
            if let Some(value) = state.pop() {
                return Ok(value);
            }
            if !state.sender {
                return Err(RecvError);
            }
            state.waiting = true;
            state = self.0.ready.wait(state).unwrap_or_else(PoisonError::into_inner);
            state.waiting = false;
        }
    }

    /// Awaits the next value; an error once the sender is gone and everything was taken.
    pub(crate) fn recv_async(&self) -> impl std::future::Future<Output = Result<T, RecvError>> + '_ {
        std::future::poll_fn(move |cx| {
            let mut state = self.0.lock();
            if let Some(value) = state.pop() {
                return std::task::Poll::Ready(Ok(value));
            }
            if !state.sender {
                return std::task::Poll::Ready(Err(RecvError));
            }
            state.waker = Some(cx.waker().clone());
            std::task::Poll::Pending
        })
    }
}

impl<T> Drop for Receiver<T> {
    fn drop(&mut self) {
        self.0.lock().receiver = false;
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use std::time::{Duration, Instant};

    #[test]
    fn values_arrive_in_order_and_the_end_is_seen() {
        let (tx, rx) = channel();
        tx.send(1).unwrap();
        tx.send(2).unwrap();
        assert_eq!(rx.try_recv(), Ok(1));
        assert_eq!(rx.try_recv(), Ok(2));
        assert_eq!(rx.try_recv(), Err(TryRecvError::Empty));
        tx.send(3).unwrap();
        drop(tx);
        assert_eq!(rx.recv(), Ok(3), "what was sent before the end is still received");
        assert_eq!(rx.recv(), Err(RecvError));
        assert_eq!(rx.try_recv(), Err(TryRecvError::Disconnected));
    }

    #[test]
    fn queued_bytes_are_counted_until_received_or_taken_back() {
        let (tx, rx) = channel();
        tx.send_sized('a', 3).unwrap();
        tx.send_sized('b', 4).unwrap();
        tx.send('c').unwrap();
        assert_eq!(tx.queued_bytes(), 7);
        assert_eq!(rx.try_recv(), Ok('a'));
        assert_eq!(tx.queued_bytes(), 4);
        assert_eq!(tx.take_all(), vec!['b', 'c']);
        assert_eq!((tx.queued_bytes(), rx.try_recv()), (0, Err(TryRecvError::Empty)));
    }

    #[test]
    fn a_sender_knows_its_receiver() {
        let (tx, rx) = channel::<u8>();
        let (_, other) = channel::<u8>();
        assert!(tx.feeds(&rx) && !tx.feeds(&other));
    }

    #[test]
    fn a_gone_receiver_refuses_values_and_a_waiting_thread_is_woken() {
        let (tx, rx) = channel::<u8>();
        let waiting = std::thread::spawn(move || rx.recv());
        tx.send(7).unwrap();
        assert_eq!(waiting.join().unwrap(), Ok(7));
        assert_eq!(tx.send(8), Err(8), "the receiver is gone");
    }

    /// Waits (by spinning, at most a minute) until `rx`'s thread sleeps on the condition
    /// variable with nothing left to take.
    fn until_waiting<T>(tx: &Sender<T>) {
        let deadline = Instant::now() + Duration::from_secs(60);
        while !{
            let state = tx.0.lock();
            state.waiting && state.queue.is_empty()
        } {
            assert!(Instant::now() < deadline, "the receiver never went to sleep");
            std::thread::yield_now();
        }
    }

    #[test]
    fn a_thread_asleep_is_woken_by_a_value_and_by_the_end() {
        let patience = Duration::from_secs(60);
        let (tx, rx) = channel::<u8>();
        let waiting = std::thread::spawn(move || {
            let began = Instant::now();
            let first = rx.recv();
            let second = rx.recv();
            (first, second, began.elapsed())
        });
        until_waiting(&tx);
        tx.send(1).unwrap();
        until_waiting(&tx);
        drop(tx);
        let (first, second, took) = waiting.join().unwrap();
        assert_eq!((first, second), (Ok(1), Err(RecvError)));
        assert!(took < patience, "woken: {took:?}");
    }

    #[cfg(feature = "smol")]
    #[test]
    fn a_task_awaits_values() {
        let (tx, rx) = channel();
        let sender = std::thread::spawn(move || {
            for i in 0..100 {
                tx.send(i).unwrap();
            }
        });
        let got = smol::block_on(async {
            let mut got = Vec::new();
            while let Ok(value) = rx.recv_async().await {
                got.push(value);
            }
            got
        });
        sender.join().unwrap();
        assert_eq!(got, (0..100).collect::<Vec<_>>());
    }
}
