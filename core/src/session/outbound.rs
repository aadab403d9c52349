//! Requests this side sent: ids, deadlines and progress tokens.

use crate::alloc_prelude::*;
use crate::time::{Duration, Instant};
use alloc::collections::{BTreeMap, BTreeSet};

use crate::jsonrpc::RequestId;
use crate::schema::ProgressToken;

/// Why a request was sent: by the application, or by the session itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Purpose {
    /// The application's; its end becomes an `Event::Response`.
    App,
    /// The session's `initialize`.
    Initialize,
    /// The session's `server/discover` probe.
    Discover,
}

/// A request waiting for its response.
#[derive(Debug, Clone)]
pub(super) struct Pending {
    pub(super) method: String,
    pub(super) purpose: Purpose,
    /// When it times out unless progress resets it.
    deadline: Instant,
    /// When it times out regardless.
    hard_deadline: Option<Instant>,
    timeout: Duration,
    reset_on_progress: bool,
    pub(super) progress_token: Option<ProgressToken>,
}

impl Pending {
    pub(super) fn new(
        method: String,
        purpose: Purpose,
        now: Instant,
        timeout: Duration,
        max_time: Option<Duration>,
        reset_on_progress: bool,
    ) -> Self {
        Self {
            method,
            purpose,
            deadline: later(now, timeout),
            hard_deadline: max_time.map(|m| later(now, m)),
            timeout,
            reset_on_progress,
            progress_token: None,
        }
    }

    fn effective_deadline(&self) -> Instant {
        self.hard_deadline.map_or(self.deadline, |h| h.min(self.deadline))
    }
}

/// `now + by`, saturating at the furthest instant the platform can represent instead of
/// overflowing (a timeout of `Duration::MAX` means "practically never").
fn later(now: Instant, by: Duration) -> Instant {
    if let Some(t) = now.checked_add(by) {
        return t;
    }
    let mut step = by;
    let mut t = now;
    while step > Duration::from_secs(1) {
        step /= 2;
        if let Some(next) = t.checked_add(step) {
            t = next;
        }
    }
    t
}

/// The table of pending requests and its timer index.
#[derive(Debug, Default)]
pub(super) struct Outbound {
    next_id: i64,
    /// Ids are `{prefix}{n}` strings when set: unique across the processes that may hold the
    /// same session (see `Session::number_requests_with`).
    prefix: Option<String>,
    pending: BTreeMap<RequestId, Pending>,
    by_token: BTreeMap<ProgressToken, RequestId>,
    timers: BTreeSet<(Instant, RequestId)>,
}

impl Outbound {
    /// A fresh id; ids are never reused in a session.
    /// The number the next id will carry.
    pub(super) const fn peek_next(&self) -> i64 {
        self.next_id
    }

    /// Continues numbering at `next` (a restored session must not reuse ids).
    pub(super) fn resume_at(&mut self, next: i64) {
        self.next_id = self.next_id.max(next);
    }

    pub(super) fn next_id(&mut self) -> RequestId {
        let id = match &self.prefix {
            Some(prefix) => RequestId::String(format!("{prefix}{}", self.next_id)),
            None => RequestId::Number(self.next_id),
        };
        self.next_id += 1;
        id
    }

    /// Numbers later ids `{prefix}{n}`.
    pub(super) fn set_prefix(&mut self, prefix: &str) {
        self.prefix = Some(prefix.to_owned());
    }

    /// Whether `id` was handed out by `next_id` (so a response to it that is not pending is
    /// late, not foreign).
    pub(super) fn issued(&self, id: &RequestId) -> bool {
        let number = match (id, &self.prefix) {
            (RequestId::Number(n), _) => Some(*n),
            (RequestId::String(s), Some(prefix)) => s.strip_prefix(prefix.as_str()).and_then(|n| n.parse().ok()),
            (RequestId::String(_), None) => None,
        };
        number.is_some_and(|n| n >= 0 && n < self.next_id)
    }

    pub(super) fn len(&self) -> usize {
        self.pending.len()
    }

    pub(super) fn get(&self, id: &RequestId) -> Option<&Pending> {
        self.pending.get(id)
    }

    pub(super) fn insert(&mut self, id: RequestId, pending: Pending) {
        self.timers.insert((pending.effective_deadline(), id.clone()));
        if let Some(token) = &pending.progress_token {
            self.by_token.insert(token.clone(), id.clone());
        }
        self.pending.insert(id, pending);
    }

    pub(super) fn remove(&mut self, id: &RequestId) -> Option<Pending> {
        let pending = self.pending.remove(id)?;
        self.timers.remove(&(pending.effective_deadline(), id.clone()));
        if let Some(token) = &pending.progress_token {
            self.by_token.remove(token);
        }
        Some(pending)
    }

    /// Every pending id, in order.
    pub(super) fn ids(&self) -> Vec<RequestId> {
        self.pending.keys().cloned().collect()
    }

    /// The request a progress token belongs to; restarts its timeout if it resets on progress.
    pub(super) fn on_progress(&mut self, token: &ProgressToken, now: Instant) -> Option<RequestId> {
        let id = self.by_token.get(token)?.clone();
        let pending = self.pending.get_mut(&id)?;
        if pending.reset_on_progress {
            self.timers.remove(&(pending.effective_deadline(), id.clone()));
            pending.deadline = later(now, pending.timeout);
            self.timers.insert((pending.effective_deadline(), id.clone()));
        }
        Some(id)
    }

    /// The earliest deadline.
    pub(super) fn next_deadline(&self) -> Option<Instant> {
        self.timers.first().map(|(t, _)| *t)
    }

    /// Removes and returns one request whose deadline is at or before `now`.
    pub(super) fn pop_expired(&mut self, now: Instant) -> Option<(RequestId, Pending)> {
        let (at, id) = self.timers.first()?.clone();
        if at > now {
            return None;
        }
        let pending = self.remove(&id)?;
        Some((id, pending))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn pending(now: Instant, secs: u64, max: Option<u64>) -> Pending {
        Pending::new("x".into(), Purpose::App, now, Duration::from_secs(secs), max.map(Duration::from_secs), true)
    }

    #[test]
    fn ids_are_never_reused() {
        let mut o = Outbound::default();
        let a = o.next_id();
        let b = o.next_id();
        assert_ne!(a, b);
        assert!(o.issued(&a) && o.issued(&b));
        assert!(!o.issued(&RequestId::Number(5)));
    }

    #[test]
    fn prefixed_ids_name_their_process_and_are_known_as_issued() {
        let mut o = Outbound::default();
        o.resume_at(7);
        o.set_prefix("a1b2-");
        let id = o.next_id();
        assert_eq!(id, RequestId::String("a1b2-7".into()));
        assert!(o.issued(&id));
        assert!(!o.issued(&RequestId::String("c3d4-7".into())), "another process's id");
        assert!(!o.issued(&RequestId::String("a1b2-8".into())), "not issued yet");
    }

    #[test]
    fn progress_resets_the_deadline_but_not_past_the_cap() {
        let t0 = super::super::tests::t0();
        let mut o = Outbound::default();
        let id = o.next_id();
        let mut p = pending(t0, 10, Some(15));
        p.progress_token = Some(id.clone());
        o.insert(id.clone(), p);
        assert_eq!(o.next_deadline(), Some(t0 + Duration::from_secs(10)));
        assert_eq!(o.on_progress(&id, t0 + Duration::from_secs(8)), Some(id.clone()));
        assert_eq!(o.next_deadline(), Some(t0 + Duration::from_secs(15)), "capped by the hard deadline");
        assert!(o.pop_expired(t0 + Duration::from_secs(14)).is_none());
        assert_eq!(o.pop_expired(t0 + Duration::from_secs(15)).unwrap().0, id);
        assert_eq!(o.len(), 0);
        assert_eq!(o.next_deadline(), None);
    }
}
