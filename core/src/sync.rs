//! The few shared-state tools the core needs, with or without an OS: a lock that ignores
//! poisoning, a one-value channel with a blocking receive, a cell set once, and a
//! `block_on` for a future a thread would wait on anyway.
//!
//! With `std` they are the standard library's; without it the lock and the cell spin (the
//! `spin` crate) and a blocking receive polls, which is all a `#![no_std]` target offers.

#[cfg(feature = "std")]
pub(crate) use std_impl::*;

#[cfg(not(feature = "std"))]
pub(crate) use no_std_impl::*;

#[cfg(feature = "std")]
mod std_impl {
    use std::sync::PoisonError;

    /// A mutual-exclusion lock; a panic while it was held does not poison it (the state it
    /// guards stays usable, as every writer leaves it whole).
    #[derive(Debug, Default)]
    pub(crate) struct Mutex<T>(std::sync::Mutex<T>);

    /// The guard [`Mutex::lock`] returns.
    pub(crate) type MutexGuard<'a, T> = std::sync::MutexGuard<'a, T>;

    impl<T> Mutex<T> {
        pub(crate) const fn new(value: T) -> Self {
            Self(std::sync::Mutex::new(value))
        }

        pub(crate) fn lock(&self) -> MutexGuard<'_, T> {
            self.0.lock().unwrap_or_else(PoisonError::into_inner)
        }
    }

    /// The sending half of [`one_value`].
    pub(crate) struct ValueSender<T>(std::sync::mpsc::SyncSender<T>);

    /// The receiving half of [`one_value`].
    pub(crate) struct ValueReceiver<T>(std::sync::mpsc::Receiver<T>);

    /// A channel that carries one value, from any thread to one waiting receiver.
    pub(crate) fn one_value<T>() -> (ValueSender<T>, ValueReceiver<T>) {
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        (ValueSender(tx), ValueReceiver(rx))
    }

    impl<T> ValueSender<T> {
        /// Hands `value` over; `false` if the receiver is gone.
        pub(crate) fn send(&self, value: T) -> bool {
            self.0.try_send(value).is_ok()
        }
    }

    impl<T> ValueReceiver<T> {
        /// Waits for the value; `None` once every sender is dropped without sending.
        pub(crate) fn recv(&self) -> Option<T> {
            self.0.recv().ok()
        }
    }

    /// A cell written once, by the first reader that finds it empty.
    pub(crate) type OnceCell<T> = std::sync::OnceLock<T>;
}

#[cfg(not(feature = "std"))]
mod no_std_impl {
    use alloc::sync::Arc;

    /// A spinning mutual-exclusion lock (no OS to park on).
    #[derive(Debug, Default)]
    pub(crate) struct Mutex<T>(spin::Mutex<T>);

    /// The guard [`Mutex::lock`] returns.
    pub(crate) type MutexGuard<'a, T> = spin::MutexGuard<'a, T>;

    impl<T> Mutex<T> {
        pub(crate) const fn new(value: T) -> Self {
            Self(spin::Mutex::new(value))
        }

        pub(crate) fn lock(&self) -> MutexGuard<'_, T> {
            self.0.lock()
        }
    }

    /// The sending half of [`one_value`].
    pub(crate) struct ValueSender<T>(Arc<spin::Mutex<Option<T>>>);

    /// The receiving half of [`one_value`].
    pub(crate) struct ValueReceiver<T>(Arc<spin::Mutex<Option<T>>>);

    /// A channel that carries one value, from any thread to one waiting receiver.
    pub(crate) fn one_value<T>() -> (ValueSender<T>, ValueReceiver<T>) {
        let slot = Arc::new(spin::Mutex::new(None));
        (ValueSender(slot.clone()), ValueReceiver(slot))
    }

    impl<T> ValueSender<T> {
        /// Hands `value` over; `false` if the receiver is gone or a value already waits (as
        /// `try_send` on std's one-slot channel).
        pub(crate) fn send(&self, value: T) -> bool {
            if Arc::strong_count(&self.0) < 2 {
                return false;
            }
            let mut slot = self.0.lock();
            if slot.is_some() {
                return false;
            }
            *slot = Some(value);
            true
        }
    }

    impl<T> ValueReceiver<T> {
        /// Polls for the value; `None` once every sender is dropped without sending.
        pub(crate) fn recv(&self) -> Option<T> {
            loop {
                if let Some(value) = self.0.lock().take() {
                    return Some(value);
                }
                // Only the receiver holds the slot: no sender is left to fill it.
                if Arc::strong_count(&self.0) < 2 {
                    return self.0.lock().take();
                }
                core::hint::spin_loop();
            }
        }
    }

    /// A cell written once, by the first reader that finds it empty.
    #[derive(Debug, Default)]
    pub(crate) struct OnceCell<T>(spin::Once<T>);

    impl<T> OnceCell<T> {
        pub(crate) const fn new() -> Self {
            Self(spin::Once::new())
        }

        pub(crate) fn get_or_init(&self, init: impl FnOnce() -> T) -> &T {
            self.0.call_once(init)
        }

        pub(crate) fn get(&self) -> Option<&T> {
            self.0.get()
        }

        pub(crate) fn get_mut(&mut self) -> Option<&mut T> {
            self.0.get_mut()
        }

        pub(crate) fn into_inner(self) -> Option<T> {
            self.0.try_into_inner()
        }
    }

    impl<T> From<T> for OnceCell<T> {
        fn from(value: T) -> Self {
            Self(spin::Once::initialized(value))
        }
    }
}

/// Polls `future` to its end on this thread, parking it between wake-ups: for a thread that
/// runs one task's work and would block on it anyway.
#[cfg(feature = "std")]
pub(crate) fn block_on<F: core::future::Future>(future: F) -> F::Output {
    use alloc::sync::Arc;
    use alloc::task::Wake;
    use core::task::Waker;

    struct Unpark(std::thread::Thread);
    impl Wake for Unpark {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
        fn wake_by_ref(self: &Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut cx = core::task::Context::from_waker(&waker);
    let mut future = core::pin::pin!(future);
    loop {
        if let core::task::Poll::Ready(output) = future.as_mut().poll(&mut cx) {
            return output;
        }
        std::thread::park();
    }
}

/// Polls `future` to its end on this thread. Without `std` there is no thread to park: it
/// polls again at once, so a host without `std` should run async work on its own executor.
#[cfg(not(feature = "std"))]
pub(crate) fn block_on<F: core::future::Future>(future: F) -> F::Output {
    let mut cx = core::task::Context::from_waker(core::task::Waker::noop());
    let mut future = core::pin::pin!(future);
    loop {
        if let core::task::Poll::Ready(output) = future.as_mut().poll(&mut cx) {
            return output;
        }
        core::hint::spin_loop();
    }
}

#[cfg(test)]
#[allow(clippy::disallowed_methods, clippy::unwrap_used, clippy::panic)] // tests cross real threads
mod tests {
    use super::*;

    #[test]
    fn a_value_crosses_threads_and_a_dropped_sender_ends_the_wait() {
        let (tx, rx) = one_value();
        let sender = std::thread::spawn(move || assert!(tx.send(7)));
        assert_eq!(rx.recv(), Some(7));
        sender.join().unwrap();
        let (tx, rx) = one_value::<u8>();
        drop(tx);
        assert_eq!(rx.recv(), None);
    }

    #[test]
    fn the_lock_survives_a_panic_while_held() {
        let lock = std::sync::Arc::new(Mutex::new(1));
        let held = lock.clone();
        let _ = std::thread::spawn(move || {
            let _guard = held.lock();
            panic!("while held");
        })
        .join();
        *lock.lock() += 1;
        assert_eq!(*lock.lock(), 2);
    }

    #[test]
    fn block_on_polls_again_after_a_wake() {
        let mut polls = 0;
        let value = block_on(core::future::poll_fn(|cx| {
            polls += 1;
            if polls < 3 {
                cx.waker().wake_by_ref();
                return core::task::Poll::Pending;
            }
            core::task::Poll::Ready(7)
        }));
        assert_eq!((value, polls), (7, 3));
    }
}
