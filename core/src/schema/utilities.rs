//! Base-protocol utilities: ping, cancellation and progress.

use super::common::{EmptyResult, Meta, ProgressToken, RequestParams};
use super::macros::mcp_struct;
use super::methods::{notification_method, request_method};
use crate::alloc_prelude::*;
use crate::jsonrpc::RequestId;

mcp_struct! {
    /// Parameters of `notifications/cancelled`: the sender no longer wants the request's
    /// result.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::utilities::CancelledNotificationParams;
    ///
    /// let p = CancelledNotificationParams::new(7, Some("timeout"));
    /// assert_eq!(serde_json::to_string(&p).unwrap(), r#"{"requestId":7,"reason":"timeout"}"#);
    /// ```
    #[derive(Default)]
    pub struct CancelledNotificationParams {
        /// The id of the request to cancel (optional only in 2025-11-25, where task
        /// cancellation uses `tasks/cancel`).
        opt request_id: RequestId = "requestId",
        /// Why, for logs.
        opt reason: String = "reason",
        /// Notification metadata.
        opt meta: Meta = "_meta",
    }
}

impl CancelledNotificationParams {
    /// Cancels request `id`, optionally saying why.
    #[must_use]
    pub fn new(id: impl Into<RequestId>, reason: Option<&str>) -> Self {
        Self { request_id: Some(id.into()), reason: reason.map(str::to_owned), ..Self::default() }
    }
}

mcp_struct! {
    /// Parameters of `notifications/progress`.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::utilities::ProgressNotificationParams;
    ///
    /// let p: ProgressNotificationParams =
    ///     serde_json::from_str(r#"{"progressToken":"t","progress":50,"total":100,"message":"half"}"#).unwrap();
    /// assert_eq!(p.progress, 50.0);
    /// assert_eq!(p.message.as_deref(), Some("half"));
    /// ```
    pub struct ProgressNotificationParams {
        /// The token from the request's `_meta.progressToken`.
        req progress_token: ProgressToken = "progressToken",
        /// Progress so far; increases with every notification.
        num progress: f64 = "progress",
        /// The total, if known.
        optnum total: f64 = "total",
        /// A human-readable message (2025-03-26+).
        opt message: String = "message",
        /// Notification metadata.
        opt meta: Meta = "_meta",
    }
}

impl ProgressNotificationParams {
    /// Progress for `token`.
    #[must_use]
    pub fn new(token: ProgressToken, progress: f64, total: Option<f64>, message: Option<String>) -> Self {
        Self { progress_token: token, progress, total, message, meta: None, extra: super::JsonObject::new() }
    }
}

request_method! {
    /// `ping`: checks that the peer is alive (legacy era; either side).
    Ping, "ping", RequestParams => EmptyResult
}

notification_method! {
    /// `notifications/cancelled`: the sender abandons a request.
    Cancelled, "notifications/cancelled", CancelledNotificationParams
}

notification_method! {
    /// `notifications/progress`: progress on a long-running request.
    Progress, "notifications/progress", ProgressNotificationParams
}
