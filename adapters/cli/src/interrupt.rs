//! Ctrl-C: while a call runs it cancels the call (the waiter sees the flag and sends the
//! cancellation); otherwise, outside the REPL's line editor (which reads Ctrl-C as a key), it
//! ends the process with exit code 6.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::OnceLock;

use async_signal::{Signal, Signals};
use smol::stream::StreamExt as _;

use super::exit::Exit;

/// Set by Ctrl-C while a call runs; taken by the waiter.
static PENDING: AtomicBool = AtomicBool::new(false);
/// How many calls run.
static BUSY: AtomicUsize = AtomicUsize::new(0);
/// Ctrl-C when nothing runs ends the process (scripted mode) or is ignored (interactive).
static EXIT_WHEN_IDLE: AtomicBool = AtomicBool::new(true);
static INSTALLED: OnceLock<bool> = OnceLock::new();

/// Starts watching for Ctrl-C (once per process). Returns whether it could.
pub(crate) fn install() -> bool {
    *INSTALLED.get_or_init(|| {
        let Ok(mut signals) = Signals::new([Signal::Int]) else { return false };
        std::thread::Builder::new()
            .name("talaria-sigint".into())
            .spawn(move || {
                smol::block_on(async {
                    while let Some(Ok(_)) = signals.next().await {
                        on_interrupt();
                    }
                });
            })
            .is_ok()
    })
}

fn on_interrupt() {
    if BUSY.load(Ordering::Acquire) > 0 {
        PENDING.store(true, Ordering::Release);
    } else if EXIT_WHEN_IDLE.load(Ordering::Acquire) {
        eprintln!("talaria: interrupted");
        std::process::exit(i32::from(Exit::Interrupted.code()));
    }
}

/// Chooses what Ctrl-C does when no call runs: exit (scripted mode) or nothing (interactive).
pub(crate) fn exit_when_idle(exit: bool) {
    EXIT_WHEN_IDLE.store(exit, Ordering::Release);
}

/// Whether Ctrl-C was pressed since the call started (and forgets it).
pub(crate) fn take() -> bool {
    PENDING.swap(false, Ordering::AcqRel)
}

/// Marks a call as running while it lives.
pub(crate) struct Busy(());

impl Busy {
    /// A call starts: Ctrl-C now cancels it.
    pub(crate) fn start() -> Self {
        if BUSY.fetch_add(1, Ordering::AcqRel) == 0 {
            PENDING.store(false, Ordering::Release);
        }
        Self(())
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        BUSY.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Whether a call runs (someone waits for the server's questions).
pub(crate) fn busy() -> bool {
    BUSY.load(Ordering::Acquire) > 0
}
