//! Whether a request has been cancelled: the flag the endpoint sets and the handler reads.

use alloc::sync::Arc;
use core::sync::atomic::{AtomicBool, Ordering};

/// Whether a request has been cancelled, shared between the endpoint (which sets it when
/// `notifications/cancelled` or a closed stream arrives) and the handler (which polls it).
///
/// Cloning shares the flag.
///
/// # Examples
///
/// ```
/// use talaria_core::server::CancelFlag;
///
/// let flag = CancelFlag::default();
/// let seen_by_handler = flag.clone();
/// assert!(!seen_by_handler.is_cancelled());
/// flag.cancel();
/// assert!(seen_by_handler.is_cancelled());
/// ```
#[derive(Debug, Clone, Default)]
pub struct CancelFlag(Arc<AtomicBool>);

impl CancelFlag {
    /// Marks the request cancelled.
    pub fn cancel(&self) {
        self.0.store(true, Ordering::Release);
    }

    /// Whether the request was cancelled: the handler should stop, its answer will be dropped.
    #[must_use]
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Acquire)
    }
}
