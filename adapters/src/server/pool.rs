//! A small thread pool for long-running tool calls: grows while every worker is busy, up to
//! a cap; idle workers wait for the next job.

use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex, PoisonError};

type Job = Box<dyn FnOnce() + Send>;

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
}

impl Pool {
    /// A pool of at most `max_threads` workers (none started yet).
    pub(crate) fn new(max_threads: usize) -> Self {
        let (tx, rx) = channel();
        Self {
            jobs: Mutex::new(tx),
            queue: Arc::new(Mutex::new(rx)),
            counts: Arc::new(Mutex::new(Counts { threads: 0, idle: 0, queued: 0 })),
            max_threads: max_threads.max(1),
        }
    }

    /// Runs `job` on a worker.
    pub(crate) fn run(&self, job: Job) {
        let grow = {
            let mut counts = self.counts.lock().unwrap_or_else(PoisonError::into_inner);
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
            self.counts.lock().unwrap_or_else(PoisonError::into_inner).threads -= 1;
        }
        let _ = self.jobs.lock().unwrap_or_else(PoisonError::into_inner).send(job);
    }

    fn start_worker(&self) -> std::io::Result<()> {
        let queue = Arc::clone(&self.queue);
        let counts = Arc::clone(&self.counts);
        std::thread::Builder::new().name("talaria-worker".into()).spawn(move || loop {
            counts.lock().unwrap_or_else(PoisonError::into_inner).idle += 1;
            let job = queue.lock().unwrap_or_else(PoisonError::into_inner).recv();
            {
                let mut counts = counts.lock().unwrap_or_else(PoisonError::into_inner);
                counts.idle -= 1;
                if job.is_ok() {
                    counts.queued -= 1;
                }
            }
            match job {
                Ok(job) => job(),
                Err(_) => {
                    counts.lock().unwrap_or_else(PoisonError::into_inner).threads -= 1;
                    return;
                }
            }
        })?;
        Ok(())
    }
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
            four_jobs_that_wait_for_each_other();
        }
    }

    fn four_jobs_that_wait_for_each_other() {
        let pool = Pool::new(4);
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
}
