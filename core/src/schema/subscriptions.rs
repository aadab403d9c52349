//! Subscriptions (2026-07-28): a long-lived `subscriptions/listen` request over which the
//! server sends the notifications the client opted into.
//!
//! It replaces the HTTP GET stream and `resources/subscribe`. The server first acknowledges
//! the subscription with `notifications/subscriptions/acknowledged`, naming the notification
//! types it agreed to send; every notification on the stream carries the subscription id (the
//! listen request's JSON-RPC id) in `_meta` under
//! [`meta_keys::SUBSCRIPTION_ID`](super::meta_keys::SUBSCRIPTION_ID). The server answers the
//! request itself only when it ends the subscription gracefully.

use super::common::{adapt_result_type, ForRevision, JsonObject, Meta, ResultType};
use super::macros::mcp_struct;
use super::methods::{notification_method, request_method};
use crate::alloc_prelude::*;
use crate::version::ProtocolVersion;

mcp_struct! {
    /// The notification types a client opts into, or that the server agreed to send.
    ///
    /// Each type is opt-in: the server sends nothing the client did not ask for.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::subscriptions::SubscriptionFilter;
    ///
    /// let f = SubscriptionFilter { tools_list_changed: Some(true), ..Default::default() };
    /// assert_eq!(serde_json::to_string(&f).unwrap(), r#"{"toolsListChanged":true}"#);
    /// ```
    #[derive(Default)]
    pub struct SubscriptionFilter {
        /// `notifications/prompts/list_changed`.
        opt prompts_list_changed: bool = "promptsListChanged",
        /// `notifications/resources/list_changed`.
        opt resources_list_changed: bool = "resourcesListChanged",
        /// `notifications/resources/updated` for these resource URIs.
        opt resource_subscriptions: Vec<String> = "resourceSubscriptions",
        /// `notifications/tools/list_changed`.
        opt tools_list_changed: bool = "toolsListChanged",
        /// `notifications/tasks` for these task ids (tasks extension,
        /// [`tasks::ext`](super::tasks::ext); not in the core schema).
        opt task_ids: Vec<String> = "taskIds",
    }
}

mcp_struct! {
    /// Parameters of `subscriptions/listen`.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::subscriptions::{SubscriptionFilter, SubscriptionsListenRequestParams};
    ///
    /// let p = SubscriptionsListenRequestParams::new(SubscriptionFilter {
    ///     resource_subscriptions: Some(vec!["file:///config.json".into()]),
    ///     ..Default::default()
    /// });
    /// assert_eq!(
    ///     serde_json::to_string(&p).unwrap(),
    ///     r#"{"notifications":{"resourceSubscriptions":["file:///config.json"]}}"#,
    /// );
    /// ```
    #[derive(Default)]
    pub struct SubscriptionsListenRequestParams {
        /// Request metadata: protocol version, client info and capabilities (required on
        /// the wire; the session fills it in).
        opt meta: Meta = "_meta",
        /// The notifications wanted on this stream.
        req notifications: SubscriptionFilter = "notifications",
    }
}

impl SubscriptionsListenRequestParams {
    /// Parameters asking for `notifications`.
    #[must_use]
    pub fn new(notifications: SubscriptionFilter) -> Self {
        Self { meta: None, notifications, extra: JsonObject::new() }
    }
}

mcp_struct! {
    /// The answer to `subscriptions/listen`, sent only when the server ends the subscription
    /// gracefully; otherwise empty.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::subscriptions::SubscriptionsListenResult;
    /// use talaria_core::schema::{ForRevision, ResultType};
    /// use talaria_core::version::ProtocolVersion;
    ///
    /// let mut r = SubscriptionsListenResult::default();
    /// r.adapt_to(ProtocolVersion::V2026_07_28);
    /// assert_eq!(r.result_type, Some(ResultType::Complete));
    /// ```
    #[derive(Default)]
    pub struct SubscriptionsListenResult {
        /// Result metadata; carries the subscription id under
        /// [`meta_keys::SUBSCRIPTION_ID`](super::meta_keys::SUBSCRIPTION_ID) (required on the
        /// wire).
        opt meta: Meta = "_meta",
        /// The kind of result.
        opt result_type: ResultType = "resultType",
    }
}

impl ForRevision for SubscriptionsListenResult {
    fn adapt_to(&mut self, version: ProtocolVersion) {
        adapt_result_type(&mut self.result_type, version);
    }
}

mcp_struct! {
    /// Parameters of `notifications/subscriptions/acknowledged`: what the server agreed to
    /// send, a subset of what was asked (types it does not support are left out).
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::subscriptions::SubscriptionsAcknowledgedNotificationParams;
    ///
    /// let p: SubscriptionsAcknowledgedNotificationParams =
    ///     serde_json::from_str(r#"{"notifications":{"toolsListChanged":true}}"#).unwrap();
    /// assert_eq!(p.notifications.tools_list_changed, Some(true));
    /// assert_eq!(p.notifications.prompts_list_changed, None);
    /// ```
    #[derive(Default)]
    pub struct SubscriptionsAcknowledgedNotificationParams {
        /// Notification metadata; carries the subscription id.
        opt meta: Meta = "_meta",
        /// The notifications the server will send.
        req notifications: SubscriptionFilter = "notifications",
    }
}

request_method! {
    /// `subscriptions/listen` (2026-07-28): opens a notification stream.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::{subscriptions::SubscriptionsListen, RequestMethod, SentBy};
    /// use talaria_core::version::ProtocolVersion;
    ///
    /// assert_eq!(SubscriptionsListen::INFO.sent_by, SentBy::Client);
    /// assert!(!SubscriptionsListen::INFO.exists_in(ProtocolVersion::V2025_11_25));
    /// ```
    SubscriptionsListen, "subscriptions/listen", SubscriptionsListenRequestParams => SubscriptionsListenResult
}

notification_method! {
    /// `notifications/subscriptions/acknowledged` (2026-07-28): the server accepted a
    /// subscription.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::{subscriptions::SubscriptionsAcknowledged, NotificationMethod, SentBy};
    ///
    /// assert_eq!(SubscriptionsAcknowledged::INFO.sent_by, SentBy::Server);
    /// ```
    SubscriptionsAcknowledged, "notifications/subscriptions/acknowledged", SubscriptionsAcknowledgedNotificationParams
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::schema::test_support::{examples, round_trip};
    use crate::schema::{meta_keys, NotificationMethod, RequestMethod};

    #[test]
    fn official_examples_round_trip() {
        for (name, json) in examples("SubscriptionsListenRequest") {
            let p: SubscriptionsListenRequestParams = round_trip(&name, &json["params"]);
            assert_eq!(p.notifications.tools_list_changed, Some(true));
            assert_eq!(p.meta.unwrap()[meta_keys::PROTOCOL_VERSION], "2026-07-28");
        }
        for (name, json) in examples("SubscriptionsListenResult") {
            let r: SubscriptionsListenResult = round_trip(&name, &json);
            assert_eq!(r.meta.unwrap()[meta_keys::SUBSCRIPTION_ID], "listen-1");
        }
        for (name, json) in examples("SubscriptionsListenResultResponse") {
            round_trip::<SubscriptionsListenResult>(&name, &json["result"]);
        }
        for (name, json) in examples("SubscriptionsAcknowledgedNotification") {
            let p: SubscriptionsAcknowledgedNotificationParams = round_trip(&name, &json["params"]);
            assert_eq!(p.notifications.resource_subscriptions.unwrap(), ["file:///project/config.json"]);
        }
    }

    #[test]
    fn unknown_members_round_trip() {
        let f: SubscriptionFilter =
            round_trip("future filter", &json!({"toolsListChanged": true, "loggingMessages": {"level": "info"}}));
        assert!(f.extra.contains_key("loggingMessages"));
        round_trip::<SubscriptionFilter>("tasks extension", &json!({"taskIds": ["t1"]}));
        round_trip::<SubscriptionsListenResult>(
            "future result",
            &json!({"resultType": "complete", "reason": "shutdown"}),
        );
    }

    #[test]
    fn missing_required_members_fail() {
        assert!(serde_json::from_value::<SubscriptionsListenRequestParams>(json!({"_meta": {}})).is_err());
        assert!(serde_json::from_value::<SubscriptionsAcknowledgedNotificationParams>(json!({})).is_err());
    }

    #[test]
    fn result_type_follows_the_revision() {
        let mut r = SubscriptionsListenResult::default();
        r.adapt_to(ProtocolVersion::V2026_07_28);
        assert_eq!(serde_json::to_value(&r).unwrap(), json!({"resultType": "complete"}));
        r.adapt_to(ProtocolVersion::V2025_11_25);
        assert_eq!(r.result_type, None);
    }

    #[test]
    fn markers_name_their_methods() {
        assert_eq!(SubscriptionsListen::INFO.name, "subscriptions/listen");
        assert_eq!(SubscriptionsAcknowledged::INFO.name, "notifications/subscriptions/acknowledged");
    }
}
