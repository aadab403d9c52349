//! Logging: the client sets a level, the server sends log messages at or above it.

use crate::alloc_prelude::*;
use serde_json::Value;

use super::common::{EmptyResult, LoggingLevel, Meta};
use super::macros::mcp_struct;
use super::methods::{notification_method, request_method};

mcp_struct! {
    /// Parameters of `logging/setLevel` (legacy era; 2026-07-28 sets the level per request in
    /// `_meta`).
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::logging::SetLevelRequestParams;
    /// use talaria_core::schema::LoggingLevel;
    ///
    /// let p = SetLevelRequestParams::new(LoggingLevel::Warning);
    /// assert_eq!(serde_json::to_string(&p).unwrap(), r#"{"level":"warning"}"#);
    /// ```
    pub struct SetLevelRequestParams {
        /// The least severe level the client wants.
        req level: LoggingLevel = "level",
        /// Request metadata.
        opt meta: Meta = "_meta",
    }
}

impl SetLevelRequestParams {
    /// Asks for messages at `level` and above.
    #[must_use]
    pub fn new(level: LoggingLevel) -> Self {
        Self { level, meta: None, extra: super::JsonObject::new() }
    }
}

mcp_struct! {
    /// Parameters of `notifications/message`: one log message.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::logging::LoggingMessageNotificationParams;
    /// use talaria_core::schema::LoggingLevel;
    ///
    /// let p = LoggingMessageNotificationParams::new(LoggingLevel::Info, Some("db"), "connected".into());
    /// assert_eq!(serde_json::to_string(&p).unwrap(), r#"{"level":"info","logger":"db","data":"connected"}"#);
    /// ```
    pub struct LoggingMessageNotificationParams {
        /// Severity.
        req level: LoggingLevel = "level",
        /// Which logger.
        opt logger: String = "logger",
        /// The message: any JSON value.
        req data: Value = "data",
        /// Notification metadata.
        opt meta: Meta = "_meta",
    }
}

impl LoggingMessageNotificationParams {
    /// A message at `level` from `logger`.
    #[must_use]
    pub fn new(level: LoggingLevel, logger: Option<&str>, data: Value) -> Self {
        Self { level, logger: logger.map(str::to_owned), data, meta: None, extra: super::JsonObject::new() }
    }
}

request_method! {
    /// `logging/setLevel` (legacy era).
    SetLevel, "logging/setLevel", SetLevelRequestParams => EmptyResult
}

notification_method! {
    /// `notifications/message`: a log message from the server.
    LogMessage, "notifications/message", LoggingMessageNotificationParams
}
