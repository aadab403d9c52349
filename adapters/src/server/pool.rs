//! A small thread pool for long-running tool calls: grows while every worker is busy, up to
//! a cap; idle workers wait for the next job, and one left idle for [`IDLE_KEEP`] ends, so a
//! burst's threads do not outlive it.

use std::sync::mpsc::{channel, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

type Job = Box<dyn FnOnce() + Send>;

/// How long a worker waits for a job before it ends (if no queued job needs it).
pub(crate) const IDLE_KEEP: Duration = Duration::from_secs(10);

struct Counts {
    threads: usize,
    /// Workers waiting for a job.
    idle: usize,
    /// Jobs sent and not yet taken by a worker.
    queued: usize,
}

/// The pool.
pub(crate) struct Pool {
    jobs: Mutex<Sender<Job>>,
    queue: Arc<Mutex<Receiver<Job>>>,
    counts: Arc<Mutex<Counts>>,
    max_threads: usize,
    idle_keep: Duration,
}

impl Pool {
    /// A pool of at most `max_threads` workers (none started yet), each ending after
    /// [`IDLE_KEEP`] without a job.
    pub(crate) fn new(max_threads: usize) -> Self {
        Self::with_idle_keep(max_threads, IDLE_KEEP)
    }

    /// A pool whose idle workers end after `idle_keep` without a job.
    pub(crate) fn with_idle_keep(max_threads: usize, idle_keep: Duration) -> Self {
        let (tx, rx) = channel();
        Self {
            jobs: Mutex::new(tx),
            queue: Arc::new(Mutex::new(rx)),
            counts: Arc::new(Mutex::new(Counts { threads: 0, idle: 0, queued: 0 })),
            max_threads: max_threads.max(1),
            idle_keep,
        }
    }

    /// Runs `job` on a worker.
    pub(crate) fn run(&self, job: Job) {
        let grow = {
            let mut counts = lock(&self.counts);
            counts.queued += 1;
            // Grow unless an idle worker is free for this job (idle workers may already be
            // promised to jobs queued before it).
            let grow = counts.queued > counts.idle && counts.threads < self.max_threads;
            if grow {
                counts.threads += 1;
            }
            grow
        };
        if grow && self.start_worker().is_err() {
            lock(&self.counts).threads -= 1;
        }
        let _ = lock(&self.jobs).send(job);
    }

    /// How many workers are running (busy or idle).
    #[cfg(test)]
    fn threads(&self) -> usize {
        lock(&self.counts).threads
    }

    fn start_worker(&self) -> std::io::Result<()> {
        let queue = Arc::clone(&self.queue);
        let counts = Arc::clone(&self.counts);
        let keep = self.idle_keep;
        std::thread::Builder::new().name("talaria-worker".into()).spawn(move || {
            while let Some(job) = next_job(&queue, &counts, keep) {
                job();
            }
        })?;
        Ok(())
    }
}

/// A worker's next job; `None` when the worker is to end (the pool is gone, or it was idle
/// for `keep` and no queued job counts on it), its counts already updated.
fn next_job(queue: &Mutex<Receiver<Job>>, counts: &Mutex<Counts>, keep: Duration) -> Option<Job> {
    lock(counts).idle += 1;
    loop {
        let received = lock(queue).recv_timeout(keep);
        let mut counts = lock(counts);
        match received {
            Ok(job) => {
                counts.idle -= 1;
                counts.queued -= 1;
                return Some(job);
            }
            // `run` counts a job as queued before sending it and grows the pool only when
            // the queued jobs outnumber the idle workers: a worker may end only if the
            // others idle still cover every queued job.
            Err(RecvTimeoutError::Timeout) if counts.queued >= counts.idle => {}
            Err(_) => {
                counts.idle -= 1;
                counts.threads -= 1;
                return None;
            }
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn jobs_run_concurrently_up_to_the_cap() {
        // Many fresh pools: the race between a worker starting and a job arriving shows up
        // only now and then.
        for _ in 0..200 {
            four_jobs_that_wait_for_each_other(&Pool::new(4));
        }
    }

    /// Runs four jobs on `pool` that only finish if they run at once.
    fn four_jobs_that_wait_for_each_other(pool: &Pool) {
        let (tx, rx) = channel();
        let gate = Arc::new(std::sync::Barrier::new(4));
        for i in 0..4 {
            let (tx, gate) = (tx.clone(), Arc::clone(&gate));
            // Each job waits for the other three: only concurrent workers get past.
            pool.run(Box::new(move || {
                gate.wait();
                tx.send(i).unwrap();
            }));
        }
        let mut got: Vec<i32> = (0..4).map(|_| rx.recv().unwrap()).collect();
        got.sort_unstable();
        assert_eq!(got, vec![0, 1, 2, 3]);
    }

    #[test]
    fn idle_workers_end_and_the_pool_grows_again() {
        let pool = Pool::with_idle_keep(4, Duration::from_millis(20));
        for round in 0..3 {
            four_jobs_that_wait_for_each_other(&pool);
            // The workers end one after another, each after its idle wait (generous bound
            // for a loaded machine: they need about 4 x 20 ms).
            let deadline = std::time::Instant::now() + Duration::from_secs(30);
            while pool.threads() > 0 && std::time::Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(5));
            }
            assert_eq!(pool.threads(), 0, "round {round}: idle workers ended");
        }
    }

    #[test]
    fn a_worker_counted_on_by_a_queued_job_does_not_end() {
        // `run` has counted a job for the one idle worker and not sent it yet: the worker's
        // idle waits end meanwhile, and it must keep waiting for that job.
        let (tx, rx) = channel::<Job>();
        let queue = Mutex::new(rx);
        let counts = Mutex::new(Counts { threads: 1, idle: 0, queued: 1 });
        let taken = std::thread::scope(|scope| {
            let worker = scope.spawn(|| next_job(&queue, &counts, Duration::from_millis(1)));
            std::thread::sleep(Duration::from_millis(50));
            tx.send(Box::new(|| ())).unwrap();
            worker.join().unwrap()
        });
        assert!(taken.is_some(), "the worker ended and left the job queued");
        let counts = lock(&counts);
        assert_eq!((counts.threads, counts.idle, counts.queued), (1, 0, 0));
    }

    #[test]
    fn a_worker_no_job_counts_on_ends_after_its_idle_wait() {
        let (_tx, rx) = channel::<Job>();
        let queue = Mutex::new(rx);
        let counts = Mutex::new(Counts { threads: 2, idle: 0, queued: 0 });
        assert!(next_job(&queue, &counts, Duration::from_millis(1)).is_none());
        let counts = lock(&counts);
        assert_eq!((counts.threads, counts.idle, counts.queued), (1, 0, 0));
    }
}
