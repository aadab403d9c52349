//! Where async tools run: one executor for the process, started with the first async call,
//! run by a few threads of its own (one per core, at most four). An async tool's future
//! waits there without holding a thread; one that blocks holds one of them, so handlers that
//! block belong in `blocking_tool`.

use std::future::Future;
use std::sync::{Arc, OnceLock};

/// The most threads that run async tools.
const MAX_THREADS: usize = 4;

static EXECUTOR: OnceLock<Arc<smol::Executor<'static>>> = OnceLock::new();

/// Runs `future` on the executor of async tools.
pub(super) fn spawn(future: impl Future<Output = ()> + Send + 'static) {
    EXECUTOR.get_or_init(start).spawn(future).detach();
}

/// The executor of async tools, started.
fn start() -> Arc<smol::Executor<'static>> {
    let threads = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get).min(MAX_THREADS);
    executor_on_threads("talaria-async", threads)
}

/// An executor run by `threads` threads of its own (at least one), named `{name}-{n}`, which
/// live as long as the process. If no thread can be started, smol's global executor runs it
/// (slower, never stuck).
pub(crate) fn executor_on_threads(name: &str, threads: usize) -> Arc<smol::Executor<'static>> {
    let executor = Arc::new(smol::Executor::new());
    for n in 0..threads.max(1) {
        let running = Arc::clone(&executor);
        let spawned = std::thread::Builder::new()
            .name(format!("{name}-{n}"))
            .spawn(move || smol::block_on(running.run(smol::future::pending::<()>())));
        if spawned.is_err() && n == 0 {
            let running = Arc::clone(&executor);
            smol::spawn(async move { running.run(smol::future::pending::<()>()).await }).detach();
        }
    }
    executor
}
