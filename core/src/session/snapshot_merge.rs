//! Three-way merge of session records: two processes served requests of one session at the
//! same time, each from the record it read (the base), and the second to store finds the
//! first's record there. Storing its own would undo the first's changes (a subscription made,
//! a level set, a count moved), so it merges: each side's changes since the base are kept.

use crate::alloc_prelude::*;

use super::SessionSnapshot;

/// How the application's state merges when both sides changed it since the base: given the
/// base's state, ours and theirs (each `None` where there was none), the merged state.
pub type AppMerge<'a> = &'a dyn Fn(
    Option<&serde_json::Value>,
    Option<serde_json::Value>,
    Option<serde_json::Value>,
) -> Option<serde_json::Value>;

impl SessionSnapshot {
    /// Merges `ours` and `theirs`, two records made from `base` by two processes, keeping the
    /// changes of both:
    /// - the log level: ours if we changed it, else theirs;
    /// - subscriptions: theirs, plus the URIs we subscribed to, less those we unsubscribed from;
    /// - the next server request id: the larger (ids only go up, and neither side reuses one);
    /// - the handshake is pending only if it is on both sides;
    /// - the application's state: whichever side changed it; if both did, `app_merge` decides
    ///   (without one, ours);
    /// - what the handshake fixed (revision, client info and capabilities), and the writes the
    ///   record descends from: theirs.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::LoggingLevel;
    /// use talaria_core::session::SessionSnapshot;
    ///
    /// let base: SessionSnapshot = serde_json::from_value(serde_json::json!({
    ///     "version": "2025-06-18", "clientInfo": {"name": "c", "version": "1"},
    ///     "clientCapabilities": {}, "nextRequestId": 0, "subscriptions": ["file:///a"]})).unwrap();
    /// let mut ours = base.clone();
    /// ours.subscriptions.push("file:///b".into());
    /// let mut theirs = base.clone();
    /// theirs.log_level = Some(LoggingLevel::Warning);
    ///
    /// let merged = SessionSnapshot::merge(&base, ours, theirs, None);
    /// assert_eq!(merged.subscriptions, ["file:///a", "file:///b"]);
    /// assert_eq!(merged.log_level, Some(LoggingLevel::Warning));
    /// ```
    #[must_use]
    pub fn merge(base: &Self, ours: Self, theirs: Self, app_merge: Option<AppMerge<'_>>) -> Self {
        let log_level = if ours.log_level == base.log_level { theirs.log_level } else { ours.log_level };
        let added = ours.subscriptions.iter().filter(|uri| !base.subscriptions.contains(uri));
        let removed: Vec<&String> = base.subscriptions.iter().filter(|uri| !ours.subscriptions.contains(uri)).collect();
        let mut subscriptions: Vec<String> =
            theirs.subscriptions.iter().filter(|uri| !removed.contains(uri)).cloned().collect();
        for uri in added {
            if !subscriptions.contains(uri) {
                subscriptions.push(uri.clone());
            }
        }
        let app = if ours.app == base.app {
            theirs.app
        } else if theirs.app == base.app {
            ours.app
        } else {
            match app_merge {
                Some(merge) => merge(base.app.as_ref(), ours.app, theirs.app),
                None => ours.app,
            }
        };
        Self {
            log_level,
            next_request_id: ours.next_request_id.max(theirs.next_request_id),
            handshake_pending: ours.handshake_pending && theirs.handshake_pending,
            subscriptions,
            app,
            ..theirs
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::schema::LoggingLevel;
    use serde_json::{json, Value};

    fn base() -> SessionSnapshot {
        serde_json::from_value(json!({
            "version": "2025-06-18", "clientInfo": {"name": "c", "version": "1"},
            "clientCapabilities": {}, "nextRequestId": 3, "handshakePending": true,
            "subscriptions": ["a", "b"], "app": {"count": 10}}))
        .unwrap()
    }

    fn count(app: Option<&Value>) -> i64 {
        app.and_then(|a| a["count"].as_i64()).unwrap_or(0)
    }

    #[test]
    fn each_sides_subscription_changes_are_kept() {
        let mut ours = base();
        ours.subscriptions = vec!["a".into(), "c".into()]; // b dropped, c added
        let mut theirs = base();
        theirs.subscriptions = vec!["b".into(), "d".into()]; // a dropped, d added
        let merged = SessionSnapshot::merge(&base(), ours, theirs, None);
        assert_eq!(merged.subscriptions, ["d", "c"]);
    }

    #[test]
    fn the_level_is_ours_only_if_we_set_it() {
        let mut theirs = base();
        theirs.log_level = Some(LoggingLevel::Error);
        let merged = SessionSnapshot::merge(&base(), base(), theirs.clone(), None);
        assert_eq!(merged.log_level, Some(LoggingLevel::Error));
        let mut ours = base();
        ours.log_level = Some(LoggingLevel::Debug);
        let merged = SessionSnapshot::merge(&base(), ours, theirs, None);
        assert_eq!(merged.log_level, Some(LoggingLevel::Debug), "both set it: ours is the later");
    }

    #[test]
    fn request_ids_go_on_past_both_and_a_handshake_ended_anywhere_is_ended() {
        let mut ours = base();
        ours.next_request_id = 9;
        let mut theirs = base();
        theirs.next_request_id = 5;
        theirs.handshake_pending = false;
        let merged = SessionSnapshot::merge(&base(), ours, theirs, None);
        assert_eq!(merged.next_request_id, 9);
        assert!(!merged.handshake_pending);
    }

    #[test]
    fn app_state_changed_on_one_side_is_that_sides_and_on_both_is_the_hooks() {
        let changed = |n: i64| {
            let mut s = base();
            s.app = Some(json!({"count": n}));
            s
        };
        let merged = SessionSnapshot::merge(&base(), base(), changed(12), None);
        assert_eq!(count(merged.app.as_ref()), 12);
        let merged = SessionSnapshot::merge(&base(), changed(11), base(), None);
        assert_eq!(count(merged.app.as_ref()), 11);
        let merged = SessionSnapshot::merge(&base(), changed(11), changed(12), None);
        assert_eq!(count(merged.app.as_ref()), 11, "without a hook, ours");
        let add = |base: Option<&Value>, ours: Option<Value>, theirs: Option<Value>| {
            Some(json!({"count": count(ours.as_ref()) + count(theirs.as_ref()) - count(base)}))
        };
        let merged = SessionSnapshot::merge(&base(), changed(11), changed(12), Some(&add));
        assert_eq!(count(merged.app.as_ref()), 13, "one call on each side since 10");
    }
}
