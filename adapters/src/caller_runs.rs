//! Caller-runs: a blocking call whose transport sends each request on a job of its own (the
//! HTTP client: one POST per request, reading its reply) runs that job on the calling thread,
//! which would only wait for the answer otherwise. No hand-off to a worker and no wake-up of
//! the caller when the answer comes: two context switches less per call.
//!
//! - The calling thread [`Waiting::begin`]s, and says which request it waits for once the
//!   session has numbered it ([`Waiting::expect`], keyed by the connection and the id).
//! - The transport [`offer`]s each request's job, on whichever thread writes it (another
//!   caller's, the writer's). The job of a request someone waits for goes to that thread;
//!   any other is given back, to run where it ran before.
//! - The waiting thread [`Waiting::run`]s: it runs its job when the job arrives, or returns
//!   when the call ended without it (the frame was never sent: the connection closed).
//!
//! The job must end when the call ends otherwise (a timeout, a cancellation, the client
//! closed): the HTTP client gives each request a connection of its own, and closes it then.

use std::collections::BTreeMap;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};

use talaria_core::jsonrpc::RequestId;

/// A request's job: sends it and reads its answer.
pub(crate) type Job = Box<dyn FnOnce() + Send>;

/// Which connection a request is on: its address, while the connection lives.
pub(crate) type ConnKey = usize;

#[derive(Default)]
struct Post {
    job: Option<Job>,
    /// The call ended (its outcome was delivered, or can no longer be).
    ended: bool,
    /// The waiting thread is blocked on `arrived` (only then is a notify worth its syscall:
    /// std's condvar makes one per notify, and most jobs arrive before their thread waits).
    blocked: bool,
}

/// Where a waiting thread's job, or the news that its call ended, arrives.
#[derive(Default)]
struct Mailbox {
    post: Mutex<Post>,
    arrived: Condvar,
}

impl Mailbox {
    fn lock(&self) -> MutexGuard<'_, Post> {
        self.post.lock().unwrap_or_else(PoisonError::into_inner)
    }

    #[cfg(feature = "http")]
    fn deliver(&self, job: Job) {
        let blocked = {
            let mut post = self.lock();
            post.job = Some(job);
            post.blocked
        };
        if blocked {
            self.arrived.notify_one();
        }
    }

    fn end(&self) {
        let blocked = {
            let mut post = self.lock();
            post.ended = true;
            post.blocked
        };
        if blocked {
            self.arrived.notify_one();
        }
    }
}

/// The threads waiting for a request's job, by connection and request id.
static WAITERS: Mutex<BTreeMap<(ConnKey, RequestId), Arc<Mailbox>>> = Mutex::new(BTreeMap::new());

fn waiters() -> MutexGuard<'static, BTreeMap<(ConnKey, RequestId), Arc<Mailbox>>> {
    WAITERS.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A blocking call that waits on this thread for its answer.
pub(crate) struct Waiting {
    mailbox: Arc<Mailbox>,
    /// The request waited for, once known.
    expected: Mutex<Option<(ConnKey, RequestId)>>,
}

/// Tells the waiting thread its call ended, when dropped: put it beside the call's outcome
/// on the way to the waiter, so that it is dropped once the outcome was delivered, or with it
/// if it never will be.
pub(crate) struct Ended(Arc<Mailbox>);

impl Drop for Ended {
    fn drop(&mut self) {
        self.0.end();
    }
}

impl Waiting {
    /// Starts a call that waits on this thread.
    pub(crate) fn begin() -> Self {
        Self { mailbox: Arc::default(), expected: Mutex::new(None) }
    }

    /// The call's request is `id` on connection `conn`: its job, when offered, comes here.
    /// Say it before the request is written.
    pub(crate) fn expect(&self, conn: ConnKey, id: &RequestId) {
        let key = (conn, id.clone());
        waiters().insert(key.clone(), Arc::clone(&self.mailbox));
        *self.expected.lock().unwrap_or_else(PoisonError::into_inner) = Some(key);
    }

    /// The guard that tells this thread its call ended (see [`Ended`]).
    pub(crate) fn ended(&self) -> Ended {
        Ended(Arc::clone(&self.mailbox))
    }

    /// Waits until this call's job arrives, and runs it (the request's own I/O, here); or
    /// until the call ended without it. Returns at once if no request is expected.
    pub(crate) fn run(self) {
        let Some(key) = self.expected.lock().unwrap_or_else(PoisonError::into_inner).take() else { return };
        let job = {
            let mut post = self.mailbox.lock();
            loop {
                if let Some(job) = post.job.take() {
                    break Some(job);
                }
                if post.ended {
                    break None;
                }
                post.blocked = true;
                post = self.mailbox.arrived.wait(post).unwrap_or_else(PoisonError::into_inner);
                post.blocked = false;
            }
        };
        // No job can come any more (an offer made after this goes elsewhere).
        waiters().remove(&key);
        if let Some(job) = job {
            job();
        }
    }
}

impl Drop for Waiting {
    fn drop(&mut self) {
        if let Some(key) = self.expected.get_mut().unwrap_or_else(PoisonError::into_inner).take() {
            waiters().remove(&key);
        }
    }
}

/// Offers the job of request `id` on connection `conn` to the thread waiting for it, if one
/// does; gives the job back otherwise, to be run elsewhere.
#[cfg(feature = "http")]
pub(crate) fn offer(conn: ConnKey, id: &RequestId, job: Job) -> Option<Job> {
    let Some(mailbox) = waiters().remove(&(conn, id.clone())) else { return Some(job) };
    mailbox.deliver(job);
    None
}

#[cfg(all(test, feature = "http"))]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    fn counting(runs: &Arc<AtomicUsize>) -> Job {
        let runs = Arc::clone(runs);
        Box::new(move || {
            runs.fetch_add(1, Ordering::SeqCst);
        })
    }

    #[test]
    fn the_job_of_the_awaited_request_runs_on_the_waiting_thread_whoever_offers_it() {
        let runs = Arc::new(AtomicUsize::new(0));
        let waiting = Waiting::begin();
        waiting.expect(1, &RequestId::Number(7));
        assert!(offer(1, &RequestId::Number(6), counting(&runs)).is_some(), "nobody waits for 6");
        assert!(offer(2, &RequestId::Number(7), counting(&runs)).is_some(), "7 on another connection");
        let offered = std::thread::spawn({
            let runs = Arc::clone(&runs);
            let ran_on = std::thread::current().id();
            move || {
                let job: Job = Box::new(move || {
                    assert_eq!(std::thread::current().id(), ran_on, "runs on the waiting thread");
                    runs.fetch_add(1, Ordering::SeqCst);
                });
                offer(1, &RequestId::Number(7), job).is_none()
            }
        });
        assert!(offered.join().unwrap(), "kept for the waiting thread");
        assert!(offer(1, &RequestId::Number(7), counting(&runs)).is_some(), "one job per call");
        assert_eq!(runs.load(Ordering::SeqCst), 0, "nothing runs before the call waits");
        waiting.run();
        assert_eq!(runs.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn the_waiting_thread_waits_for_a_job_offered_late_and_returns_when_the_call_ends_without_one() {
        let runs = Arc::new(AtomicUsize::new(0));
        let waiting = Waiting::begin();
        waiting.expect(3, &RequestId::Number(1));
        let late = std::thread::spawn({
            let runs = Arc::clone(&runs);
            move || {
                std::thread::yield_now();
                offer(3, &RequestId::Number(1), counting(&runs)).is_none()
            }
        });
        waiting.run();
        assert!(late.join().unwrap());
        assert_eq!(runs.load(Ordering::SeqCst), 1, "the late job ran");

        let waiting = Waiting::begin();
        waiting.expect(3, &RequestId::Number(2));
        let ended = waiting.ended();
        std::thread::spawn(move || drop(ended));
        waiting.run();
        assert!(offer(3, &RequestId::Number(2), counting(&runs)).is_some(), "after the end, a job goes elsewhere");
    }

    #[test]
    fn a_call_that_never_expected_a_request_neither_waits_nor_leaves_an_entry() {
        let waiting = Waiting::begin();
        waiting.run();
        let waiting = Waiting::begin();
        waiting.expect(4, &RequestId::Number(1));
        drop(waiting);
        let runs = Arc::new(AtomicUsize::new(0));
        assert!(offer(4, &RequestId::Number(1), counting(&runs)).is_some(), "a dropped call's entry is gone");
    }
}
