//! Roots: the directories or files the client lets the server work in (`roots/list`).
//!
//! Up to 2025-11-25 `roots/list` is a JSON-RPC request from server to client and the client
//! announces changes with `notifications/roots/list_changed`; in 2026-07-28 it is an input
//! request carried by an [`InputRequiredResult`](super::mrtr::InputRequiredResult).

use super::common::{ForRevision, JsonObject, Meta, NotificationParams, RequestParams};
use super::macros::mcp_struct;
use super::methods::{notification_method, request_method};
use crate::alloc_prelude::*;
use crate::version::ProtocolVersion;

mcp_struct! {
    /// A root: a directory or file the server may operate on.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::roots::Root;
    ///
    /// let r = Root::new("file:///home/user/project").with_name("Project");
    /// assert_eq!(
    ///     serde_json::to_string(&r).unwrap(),
    ///     r#"{"uri":"file:///home/user/project","name":"Project"}"#,
    /// );
    /// ```
    #[derive(Default)]
    pub struct Root {
        /// The root's URI (`file://` in every published revision).
        req uri: String = "uri",
        /// A display name.
        opt name: String = "name",
        /// Metadata (2025-06-18+).
        opt meta: Meta = "_meta",
    }
}

impl Root {
    /// A root at `uri`.
    #[must_use]
    pub fn new(uri: impl Into<String>) -> Self {
        Self { uri: uri.into(), ..Self::default() }
    }

    /// Sets the display name.
    #[must_use]
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }
}

mcp_struct! {
    /// The client's answer to `roots/list`.
    ///
    /// In 2026-07-28 it is an input response and carries no `resultType`.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::roots::{ListRootsResult, Root};
    ///
    /// let r = ListRootsResult::new(vec![Root::new("file:///a")]);
    /// assert_eq!(serde_json::to_string(&r).unwrap(), r#"{"roots":[{"uri":"file:///a"}]}"#);
    /// ```
    #[derive(Default)]
    pub struct ListRootsResult {
        /// The roots.
        req roots: Vec<Root> = "roots",
        /// Result metadata (2024-11-05 to 2025-11-25).
        opt meta: Meta = "_meta",
    }
}

impl ListRootsResult {
    /// A result listing `roots`.
    #[must_use]
    pub fn new(roots: Vec<Root>) -> Self {
        Self { roots, meta: None, extra: JsonObject::new() }
    }
}

/// Nothing depends on the revision: in 2026-07-28 this is an input response, without
/// `resultType`.
impl ForRevision for ListRootsResult {
    fn adapt_to(&mut self, _version: ProtocolVersion) {}
}

request_method! {
    /// `roots/list`: the server asks the client for its roots.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::{roots::ListRoots, Capability, RequestMethod};
    ///
    /// assert_eq!(ListRoots::INFO.capability, Some(Capability::Roots));
    /// ```
    ListRoots, "roots/list", RequestParams => ListRootsResult
}

notification_method! {
    /// `notifications/roots/list_changed` (up to 2025-11-25): the client's roots changed.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::{roots::RootsListChanged, NotificationMethod, SentBy};
    ///
    /// assert_eq!(RootsListChanged::INFO.sent_by, SentBy::Client);
    /// ```
    RootsListChanged, "notifications/roots/list_changed", NotificationParams
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::schema::test_support::{examples, round_trip, round_trips};
    use crate::schema::{NotificationMethod, RequestMethod};

    #[test]
    fn official_examples_round_trip() {
        round_trips::<Root>("Root");
        for (name, json) in examples("ListRootsResult") {
            let r: ListRootsResult = round_trip(&name, &json);
            assert!(!r.roots.is_empty());
        }
        // The request example has no params at all.
        for (name, json) in examples("ListRootsRequest") {
            assert!(json.get("params").is_none(), "{name}");
        }
    }

    #[test]
    fn early_shapes_and_unknown_members_round_trip() {
        // 2024-11-05: no `_meta` on roots.
        round_trip::<ListRootsResult>("2024-11-05", &json!({"roots": [{"uri": "file:///a"}]}));
        let r: ListRootsResult = round_trip(
            "2025-11-25",
            &json!({"roots": [{"uri": "file:///a", "name": "A", "_meta": {"k": 1}, "writable": true}], "_meta": {}}),
        );
        assert_eq!(r.roots[0].extra["writable"], true);
    }

    #[test]
    fn missing_required_members_fail() {
        assert!(serde_json::from_value::<Root>(json!({"name": "x"})).is_err());
        assert!(serde_json::from_value::<ListRootsResult>(json!({})).is_err());
    }

    #[test]
    fn result_is_left_alone_in_every_revision() {
        let mut r = ListRootsResult::new(vec![Root::new("file:///a")]);
        r.adapt_to(ProtocolVersion::V2026_07_28);
        assert_eq!(serde_json::to_value(&r).unwrap(), json!({"roots": [{"uri": "file:///a"}]}));
    }

    #[test]
    fn markers_name_their_methods() {
        assert_eq!(ListRoots::INFO.name, "roots/list");
        assert_eq!(RootsListChanged::INFO.name, "notifications/roots/list_changed");
    }
}
