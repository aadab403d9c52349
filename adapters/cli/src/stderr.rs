//! A stdio server's stderr: kept (its tail is shown when the connection fails), shown live with
//! `-v`, and carrying the frames the trace proxy reports (see [`super::trace`]).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use super::printer::Printer;
use super::trace::{self, Frame};

/// How many lines of the server's stderr are kept.
const KEEP: usize = 200;
/// How many lines a failure shows.
pub(crate) const TAIL: usize = 20;

/// The server's stderr.
pub(crate) struct StderrLog {
    lines: Mutex<VecDeque<String>>,
    printer: Arc<Printer>,
    live: AtomicBool,
}

impl StderrLog {
    /// A log printing through `printer` (live when `live`).
    pub(crate) fn new(printer: &Arc<Printer>, live: bool) -> Arc<Self> {
        Arc::new(Self { lines: Mutex::new(VecDeque::new()), printer: Arc::clone(printer), live: AtomicBool::new(live) })
    }

    /// Takes one line of the server's stderr.
    pub(crate) fn push(&self, line: &str) {
        if let Some(frame) = trace::parse_line(line) {
            if self.printer.tracing() {
                self.printer.line(&describe_frame(&self.printer, &frame));
            }
            return;
        }
        if self.live.load(Ordering::Relaxed) {
            self.printer.line(&self.printer.style.dim(&format!("server: {line}")));
        }
        let mut lines = self.lines.lock().unwrap_or_else(PoisonError::into_inner);
        if lines.len() == KEEP {
            lines.pop_front();
        }
        lines.push_back(line.to_owned());
    }

    /// The last `n` lines.
    pub(crate) fn tail(&self, n: usize) -> Vec<String> {
        let lines = self.lines.lock().unwrap_or_else(PoisonError::into_inner);
        lines.iter().skip(lines.len().saturating_sub(n)).cloned().collect()
    }

    /// The tail as a hint for a failure: `server stderr (last N lines):` and the lines, or
    /// `None` when the server said nothing.
    pub(crate) fn hint(&self) -> Option<String> {
        // The stderr reader may still be catching up with a server that just died.
        std::thread::sleep(std::time::Duration::from_millis(150));
        let tail = self.tail(TAIL);
        if tail.is_empty() {
            return None;
        }
        Some(format!("server stderr (last {} lines):\n{}", tail.len(), tail.join("\n")))
    }
}

/// A traced frame as printed: an arrow for its direction, then the frame.
pub(crate) fn describe_frame(printer: &Printer, frame: &Frame) -> String {
    let arrow = if frame.outgoing { printer.style.cyan("→") } else { printer.style.green("←") };
    format!("{arrow} {}", printer.style.dim(&frame.text))
}
