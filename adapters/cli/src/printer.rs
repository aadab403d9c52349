//! Where diagnostics go: lines for a person on stderr, printed above a live progress bar or
//! above the REPL's prompt, never through them.

use std::io::Write as _;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError};

use indicatif::ProgressBar;

use super::style::Style;

/// Something that prints a line above an active line editor (rustyline's external printer).
pub(crate) type External = Box<dyn FnMut(String) + Send>;

/// Routes lines for a person to stderr (or above the prompt), and decides what is shown.
pub(crate) struct Printer {
    state: Mutex<State>,
    /// The style of stderr.
    pub(crate) style: Style,
    /// How much to say: 0 errors only, 1 `-v` (server stderr live, latency, logs), 2 `-vv`
    /// (progress lines when no bar can be drawn), 3 `-vvv`.
    pub(crate) verbosity: u8,
    /// Whether frames are printed (`--trace`, `wire on`).
    trace: AtomicBool,
    /// Whether server log messages are printed (always in interactive mode, with `-v` else).
    logs: AtomicBool,
}

#[derive(Default)]
struct State {
    bar: Option<ProgressBar>,
    external: Option<External>,
}

impl Printer {
    /// A printer for stderr in `style`.
    pub(crate) fn new(style: Style, verbosity: u8, trace: bool) -> Self {
        Self {
            state: Mutex::new(State::default()),
            style,
            verbosity,
            trace: AtomicBool::new(trace),
            logs: AtomicBool::new(verbosity > 0),
        }
    }

    /// Prints one line (or several) for a person.
    pub(crate) fn line(&self, text: &str) {
        // Only this CLI's own colours reach the terminal; a server's escapes are shown.
        let text = &*super::neutral::neutralize(text, true);
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(bar) = state.bar.as_ref().filter(|b| !b.is_hidden()) {
            bar.println(text);
            return;
        }
        if let Some(external) = &mut state.external {
            external(format!("{text}\n"));
            return;
        }
        drop(state);
        let mut stderr = std::io::stderr().lock();
        let _ = writeln!(stderr, "{text}");
    }

    /// Prints `text` if the verbosity is at least `level`.
    pub(crate) fn verbose(&self, level: u8, text: &str) {
        if self.verbosity >= level {
            self.line(text);
        }
    }

    /// Prints an error (and its hint) for a person.
    pub(crate) fn error(&self, message: &str, hint: Option<&str>) {
        self.line(&format!("{} {message}", self.style.red("error:")));
        if let Some(hint) = hint {
            for line in hint.lines() {
                self.line(&format!("  {}", self.style.dim(line)));
            }
        }
    }

    /// Makes `bar` the one lines are printed above (or none).
    pub(crate) fn set_bar(&self, bar: Option<ProgressBar>) {
        self.state.lock().unwrap_or_else(PoisonError::into_inner).bar = bar;
    }

    /// Runs `f` with the progress bar (if any) hidden and lines printed plainly: for talking
    /// to the user in the middle of a call.
    pub(crate) fn suspend_bar<T>(&self, f: impl FnOnce() -> T) -> T {
        let bar = self.state.lock().unwrap_or_else(PoisonError::into_inner).bar.take();
        match bar {
            Some(bar) => {
                let out = bar.suspend(f);
                self.state.lock().unwrap_or_else(PoisonError::into_inner).bar = Some(bar);
                out
            }
            None => f(),
        }
    }

    /// Prints through `external` from now on (the REPL's line editor), or plainly again.
    pub(crate) fn set_external(&self, external: Option<External>) {
        self.state.lock().unwrap_or_else(PoisonError::into_inner).external = external;
    }

    /// Whether frames are printed.
    pub(crate) fn tracing(&self) -> bool {
        self.trace.load(Ordering::Relaxed)
    }

    /// Turns printing frames on or off.
    pub(crate) fn set_tracing(&self, on: bool) {
        self.trace.store(on, Ordering::Relaxed);
    }

    /// Whether server log messages are printed.
    pub(crate) fn shows_logs(&self) -> bool {
        self.logs.load(Ordering::Relaxed)
    }

    /// Turns printing server log messages on or off.
    pub(crate) fn set_logs(&self, on: bool) {
        self.logs.store(on, Ordering::Relaxed);
    }
}
