//! Progress notifications as a live bar (indicatif, on stderr, only on a terminal), with the
//! total, the server's message and the rate; as plain lines with `-vv` when no bar can be
//! drawn.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use talaria_core::client::Progress;

use super::printer::Printer;

/// Progress is shown in hundredths, so fractional progress moves the bar.
const SCALE: f64 = 100.0;

/// The progress display of one call.
#[derive(Clone)]
pub(crate) struct ProgressView {
    inner: Arc<Mutex<Inner>>,
    printer: Arc<Printer>,
}

struct Inner {
    label: String,
    bar: Option<ProgressBar>,
    started: Instant,
    /// Whether bars may be drawn (stderr is a terminal and bars are wanted).
    bars: bool,
}

impl ProgressView {
    /// A display for the call `label` (no bar until the first report arrives).
    pub(crate) fn new(printer: &Arc<Printer>, label: &str, bars: bool) -> Self {
        let inner = Inner { label: label.to_owned(), bar: None, started: Instant::now(), bars };
        Self { inner: Arc::new(Mutex::new(inner)), printer: Arc::clone(printer) }
    }

    /// Shows one progress report.
    pub(crate) fn report(&self, progress: &Progress) {
        let mut inner = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        let elapsed = inner.started.elapsed().as_secs_f64().max(0.001);
        let rate = progress.progress / elapsed;
        let amount = match progress.total {
            Some(total) => format!("{}/{}", number(progress.progress), number(total)),
            None => number(progress.progress),
        };
        let text = format!(
            "{amount}{} ({}/s)",
            progress.message.as_deref().map(|m| format!(" {m}")).unwrap_or_default(),
            number((rate * 10.0).round() / 10.0)
        );
        if !inner.bars {
            self.printer.verbose(2, &format!("progress {}: {text}", inner.label));
            return;
        }
        let bar = match &inner.bar {
            Some(bar) => bar.clone(),
            None => {
                let bar = new_bar(&inner.label, progress.total);
                self.printer.set_bar(Some(bar.clone()));
                inner.bar = Some(bar.clone());
                bar
            }
        };
        if let Some(total) = progress.total {
            bar.set_length(scaled(total));
        }
        bar.set_position(scaled(progress.progress));
        bar.set_message(text);
    }

    /// Removes the bar (the call finished).
    pub(crate) fn finish(&self) {
        let mut inner = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(bar) = inner.bar.take() {
            bar.finish_and_clear();
            self.printer.set_bar(None);
        }
    }

    /// The callback for `CallOptions::with_progress`.
    pub(crate) fn callback(&self) -> impl FnMut(Progress) + Send + 'static {
        let view = self.clone();
        move |progress| view.report(&progress)
    }
}

fn new_bar(label: &str, total: Option<f64>) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(total.map(scaled), ProgressDrawTarget::stderr());
    let template =
        if total.is_some() { "{spinner} {prefix} [{bar:30}] {percent:>3}% {msg}" } else { "{spinner} {prefix} {msg}" };
    if let Ok(style) = ProgressStyle::with_template(template) {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.set_prefix(label.to_owned());
    bar.enable_steady_tick(Duration::from_millis(100));
    bar
}

/// A progress amount in bar units.
fn scaled(value: f64) -> u64 {
    let units = (value * SCALE).round();
    // Invariant: clamped to the u64 range first, so the cast cannot wrap.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let units = units.clamp(0.0, 1.0e18) as u64;
    units
}

/// A number without a needless `.0`.
fn number(value: f64) -> String {
    if value.fract() == 0.0 && value.abs() < 1.0e15 {
        format!("{value:.0}")
    } else {
        format!("{value}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_and_scaling() {
        assert_eq!(number(3.0), "3");
        assert_eq!(number(2.5), "2.5");
        assert_eq!(scaled(0.5), 50);
        assert_eq!(scaled(-1.0), 0);
    }
}
