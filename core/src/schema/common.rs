//! Types shared by every area: metadata, roles, annotations, icons, implementation info,
//! pagination, result kinds and cache hints.

use crate::alloc_prelude::*;
use core::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::macros::mcp_struct;
use crate::version::{Feature, ProtocolVersion};

/// A JSON object (`{"key": value, ...}`), the type of `_meta`, tool arguments, schemas.
pub type JsonObject = serde_json::Map<String, serde_json::Value>;

/// The contents of a `_meta` member. Reserved keys are listed in [`meta_keys`].
pub type Meta = JsonObject;

/// An opaque pagination cursor.
pub type Cursor = String;

/// A progress token: a string or an integer, chosen by the requester.
pub type ProgressToken = crate::jsonrpc::RequestId;

/// Reserved `_meta` keys.
///
/// # Examples
///
/// ```
/// use talaria_core::schema::meta_keys;
///
/// assert_eq!(meta_keys::PROTOCOL_VERSION, "io.modelcontextprotocol/protocolVersion");
/// ```
pub mod meta_keys {
    /// Request `_meta`: the progress token (every revision).
    pub const PROGRESS_TOKEN: &str = "progressToken";
    /// Request `_meta` (2026-07-28): the protocol version of this request.
    pub const PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
    /// Request `_meta` (2026-07-28): the client capabilities for this request.
    pub const CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
    /// Request `_meta` (2026-07-28): the client's implementation info.
    pub const CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
    /// Request `_meta` (2026-07-28): the log level wanted for this request.
    pub const LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";
    /// Result `_meta` (2026-07-28): the server's implementation info.
    pub const SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
    /// Notification and result `_meta` (2026-07-28): the `subscriptions/listen` id.
    pub const SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";
    /// `_meta` (2025-11-25): the task a message relates to.
    pub const RELATED_TASK: &str = "io.modelcontextprotocol/related-task";
}

/// The sender or recipient of messages and content in a conversation.
///
/// # Examples
///
/// ```
/// use talaria_core::schema::Role;
///
/// assert_eq!(serde_json::to_string(&Role::Assistant).unwrap(), r#""assistant""#);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The human side.
    #[default]
    User,
    /// The model side.
    Assistant,
}

/// The severity of a log message (RFC 5424 syslog levels), ordered from least to most severe.
///
/// # Examples
///
/// ```
/// use talaria_core::schema::LoggingLevel;
///
/// assert!(LoggingLevel::Error > LoggingLevel::Warning);
/// assert_eq!("notice".parse::<LoggingLevel>().unwrap(), LoggingLevel::Notice);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LoggingLevel {
    /// Detailed debugging information.
    Debug,
    /// General informational messages.
    #[default]
    Info,
    /// Normal but significant events.
    Notice,
    /// Warning conditions.
    Warning,
    /// Error conditions.
    Error,
    /// Critical conditions.
    Critical,
    /// Action must be taken immediately.
    Alert,
    /// The system is unusable.
    Emergency,
}

impl LoggingLevel {
    /// Every level, least severe first.
    pub const ALL: [Self; 8] = [
        Self::Debug,
        Self::Info,
        Self::Notice,
        Self::Warning,
        Self::Error,
        Self::Critical,
        Self::Alert,
        Self::Emergency,
    ];

    /// The wire name of the level.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Debug => "debug",
            Self::Info => "info",
            Self::Notice => "notice",
            Self::Warning => "warning",
            Self::Error => "error",
            Self::Critical => "critical",
            Self::Alert => "alert",
            Self::Emergency => "emergency",
        }
    }
}

impl fmt::Display for LoggingLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl core::str::FromStr for LoggingLevel {
    type Err = UnknownLevel;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL.into_iter().find(|l| l.as_str() == s).ok_or_else(|| UnknownLevel(s.to_owned()))
    }
}

/// A string that names no logging level.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown logging level {0:?}")]
pub struct UnknownLevel(pub String);

/// What kind of result a response carries (2026-07-28 `resultType`).
///
/// Results from peers of earlier revisions carry no `resultType`; they are complete.
/// Values this SDK does not know are preserved.
///
/// # Examples
///
/// ```
/// use talaria_core::schema::ResultType;
///
/// let t: ResultType = serde_json::from_str(r#""input_required""#).unwrap();
/// assert_eq!(t, ResultType::InputRequired);
/// let other: ResultType = serde_json::from_str(r#""streaming""#).unwrap();
/// assert_eq!(serde_json::to_string(&other).unwrap(), r#""streaming""#);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum ResultType {
    /// The request completed; the result holds its content.
    #[default]
    Complete,
    /// The server needs more input (MRTR); the result is an `InputRequiredResult`.
    InputRequired,
    /// The request became a task (the 2026-07-28 tasks extension); the result is a
    /// `tasks::ext::CreateTaskResult`.
    Task,
    /// A value this SDK does not know.
    Other(String),
}

impl ResultType {
    /// The wire value.
    #[must_use]
    pub fn as_str(&self) -> &str {
        match self {
            Self::Complete => "complete",
            Self::InputRequired => "input_required",
            Self::Task => "task",
            Self::Other(s) => s,
        }
    }
}

impl Serialize for ResultType {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for ResultType {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let s = super::macros::Key::deserialize(deserializer)?.0;
        Ok(match s.as_ref() {
            "complete" => Self::Complete,
            "input_required" => Self::InputRequired,
            "task" => Self::Task,
            _ => Self::Other(s.into_owned()),
        })
    }
}

/// Who may cache a cacheable result (2026-07-28 `cacheScope`).
///
/// # Examples
///
/// ```
/// use talaria_core::schema::CacheScope;
///
/// assert_eq!(serde_json::to_string(&CacheScope::Public).unwrap(), r#""public""#);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CacheScope {
    /// Reusable only within the same authorization context (the safe default).
    #[default]
    Private,
    /// Holds no user-specific data; shared caches may serve it to anyone.
    Public,
}

/// Light or dark theme, for icons.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IconTheme {
    /// For light backgrounds.
    Light,
    /// For dark backgrounds.
    Dark,
}

mcp_struct! {
    /// Hints to the client about how to use or show an object (audience, priority, recency).
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::{Annotations, Role};
    ///
    /// let a: Annotations = serde_json::from_str(r#"{"audience":["user"],"priority":0.5}"#).unwrap();
    /// assert_eq!(a.audience, Some(vec![Role::User]));
    /// ```
    #[derive(Default)]
    pub struct Annotations {
        /// Who the object is meant for.
        opt audience: Vec<Role> = "audience",
        /// Importance from 0 (optional) to 1 (required).
        optnum priority: f64 = "priority",
        /// ISO 8601 time of the last modification (2025-06-18+).
        opt last_modified: String = "lastModified",
    }
}

mcp_struct! {
    /// An icon for an implementation, tool, prompt or resource (2025-11-25+).
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::Icon;
    ///
    /// let icon = Icon::new("https://example.com/icon.png");
    /// assert_eq!(serde_json::to_string(&icon).unwrap(), r#"{"src":"https://example.com/icon.png"}"#);
    /// ```
    #[derive(Default)]
    pub struct Icon {
        /// A URI (https or data:) of the image.
        req src: String = "src",
        /// Its MIME type, when the URI does not tell.
        opt mime_type: String = "mimeType",
        /// Sizes it is usable at, such as `"48x48"` or `"any"`.
        opt sizes: Vec<String> = "sizes",
        /// The theme it is designed for.
        opt theme: IconTheme = "theme",
    }
}

impl Icon {
    /// An icon at the given URI.
    #[must_use]
    pub fn new(src: impl Into<String>) -> Self {
        Self { src: src.into(), ..Self::default() }
    }
}

mcp_struct! {
    /// The name and version of an MCP implementation (client or server).
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::Implementation;
    ///
    /// let me = Implementation::new("talaria", "0.1.0");
    /// assert_eq!(serde_json::to_string(&me).unwrap(), r#"{"name":"talaria","version":"0.1.0"}"#);
    /// ```
    #[derive(Default)]
    pub struct Implementation {
        /// Programmatic name.
        req name: String = "name",
        /// Version string.
        req version: String = "version",
        /// Human-readable name (2025-06-18+).
        opt title: String = "title",
        /// Human-readable description (2025-11-25+).
        opt description: String = "description",
        /// Icons (2025-11-25+).
        opt icons: Vec<Icon> = "icons",
        /// Home page (2025-11-25+).
        opt website_url: String = "websiteUrl",
    }
}

impl Implementation {
    /// An implementation with a name and version.
    #[must_use]
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        Self { name: name.into(), version: version.into(), ..Self::default() }
    }
}

mcp_struct! {
    /// Parameters of requests that carry nothing but `_meta` (`ping`, `server/discover`,
    /// `roots/list`).
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::RequestParams;
    ///
    /// let p: RequestParams = serde_json::from_str("{}").unwrap();
    /// assert!(p.meta.is_none());
    /// ```
    #[derive(Default)]
    pub struct RequestParams {
        /// Request metadata.
        opt meta: Meta = "_meta",
    }
}

mcp_struct! {
    /// Parameters of notifications that carry nothing but `_meta` (the `list_changed` family,
    /// `notifications/initialized`).
    #[derive(Default)]
    pub struct NotificationParams {
        /// Notification metadata.
        opt meta: Meta = "_meta",
    }
}

mcp_struct! {
    /// Parameters of the paginated list requests.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::PaginatedRequestParams;
    ///
    /// let p = PaginatedRequestParams::after("abc");
    /// assert_eq!(serde_json::to_string(&p).unwrap(), r#"{"cursor":"abc"}"#);
    /// ```
    #[derive(Default)]
    pub struct PaginatedRequestParams {
        /// Request metadata.
        opt meta: Meta = "_meta",
        /// Where to continue from: the `nextCursor` of the previous page.
        opt cursor: Cursor = "cursor",
    }
}

impl PaginatedRequestParams {
    /// Parameters asking for the page after `cursor`.
    #[must_use]
    pub fn after(cursor: impl Into<Cursor>) -> Self {
        Self { cursor: Some(cursor.into()), ..Self::default() }
    }
}

mcp_struct! {
    /// A result with no content of its own (`ping`, `logging/setLevel`, subscribe ...).
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::{EmptyResult, ForRevision};
    /// use talaria_core::version::ProtocolVersion;
    ///
    /// let mut r = EmptyResult::default();
    /// assert_eq!(serde_json::to_string(&r).unwrap(), "{}");
    /// r.adapt_to(ProtocolVersion::V2026_07_28);
    /// assert_eq!(serde_json::to_string(&r).unwrap(), r#"{"resultType":"complete"}"#);
    /// ```
    #[derive(Default)]
    pub struct EmptyResult {
        /// Result metadata.
        opt meta: Meta = "_meta",
        /// The kind of result (2026-07-28).
        opt result_type: ResultType = "resultType",
    }
}

/// One page of a paginated list result.
///
/// Implemented by the results of `tools/list`, `prompts/list`, `resources/list` and
/// `resources/templates/list`, so that one helper can follow cursors through any of them.
///
/// # Examples
///
/// ```
/// use talaria_core::schema::{tools::{ListToolsResult, Tool}, Paginated};
///
/// let mut page = ListToolsResult::new(vec![Tool::new("a", Default::default())]);
/// page.next_cursor = Some("2".into());
/// assert_eq!(page.items().len(), 1);
/// assert_eq!(page.next_cursor(), Some("2"));
/// ```
pub trait Paginated {
    /// What the list holds.
    type Item;

    /// The items on this page.
    fn items(&self) -> &[Self::Item];

    /// The items on this page, by value.
    fn into_items(self) -> Vec<Self::Item>;

    /// The cursor of the next page; `None` on the last page.
    fn next_cursor(&self) -> Option<&str>;
}

/// Encoding rules that depend on the protocol revision in play.
///
/// `adapt_to` fills in what a revision requires and removes what it does not define, so one
/// Rust type serves every revision: for 2026-07-28 a result gains `resultType: "complete"` (and
/// cacheable results `ttlMs: 0`, `cacheScope: "private"` unless set); for earlier revisions
/// those members are removed.
///
/// # Examples
///
/// ```
/// use talaria_core::schema::{EmptyResult, ForRevision, ResultType};
/// use talaria_core::version::ProtocolVersion;
///
/// let mut r = EmptyResult { result_type: Some(ResultType::Complete), ..Default::default() };
/// r.adapt_to(ProtocolVersion::V2025_06_18);
/// assert_eq!(r.result_type, None);
/// ```
pub trait ForRevision {
    /// Adapts `self` to the encoding of `version`.
    fn adapt_to(&mut self, version: ProtocolVersion);
}

/// Sets or clears `resultType` for the revision.
pub(crate) fn adapt_result_type(result_type: &mut Option<ResultType>, version: ProtocolVersion) {
    if version.supports(Feature::ResultType) {
        result_type.get_or_insert(ResultType::Complete);
    } else {
        *result_type = None;
    }
}

/// Sets or clears `resultType`, `ttlMs` and `cacheScope` for the revision.
pub(crate) fn adapt_cacheable(
    result_type: &mut Option<ResultType>,
    ttl_ms: &mut Option<u64>,
    cache_scope: &mut Option<CacheScope>,
    version: ProtocolVersion,
) {
    adapt_result_type(result_type, version);
    if version.supports(Feature::CacheHints) {
        ttl_ms.get_or_insert(0);
        cache_scope.get_or_insert(CacheScope::Private);
    } else {
        *ttl_ms = None;
        *cache_scope = None;
    }
}

/// Drops `title` and `icons` from a named object for revisions that lack them.
pub(crate) fn adapt_named(title: &mut Option<String>, icons: &mut Option<Vec<Icon>>, version: ProtocolVersion) {
    if !version.supports(Feature::Titles) {
        *title = None;
    }
    if !version.supports(Feature::Icons) {
        *icons = None;
    }
}

impl ForRevision for EmptyResult {
    fn adapt_to(&mut self, version: ProtocolVersion) {
        adapt_result_type(&mut self.result_type, version);
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn unknown_members_round_trip_after_known_ones() {
        let text = r#"{"name":"x","version":"1","future":{"a":1},"title":"X"}"#;
        let imp: Implementation = serde_json::from_str(text).unwrap();
        assert_eq!(imp.title.as_deref(), Some("X"));
        assert_eq!(imp.extra["future"], json!({"a": 1}));
        assert_eq!(
            serde_json::to_value(&imp).unwrap(),
            json!({"name": "x", "version": "1", "title": "X", "future": {"a": 1}})
        );
    }

    #[test]
    fn required_members_are_required_and_duplicates_refused() {
        assert!(serde_json::from_str::<Implementation>(r#"{"name":"x"}"#).is_err());
        assert!(serde_json::from_str::<Implementation>(r#"{"name":"x","version":"1","name":"y"}"#).is_err());
        assert!(serde_json::from_str::<Implementation>(r#"{"name":"x","version":"1","a":1,"a":2}"#).is_err());
    }

    #[test]
    fn null_optional_members_read_as_absent() {
        let p: PaginatedRequestParams = serde_json::from_str(r#"{"cursor":null}"#).unwrap();
        assert_eq!(p.cursor, None);
    }

    #[test]
    fn escaped_keys_are_recognised() {
        let imp: Implementation = serde_json::from_str(r#"{"n\u0061me":"x","version":"1"}"#).unwrap();
        assert_eq!(imp.name, "x");
    }

    #[test]
    fn cacheable_results_get_safe_defaults_only_when_stateless() {
        let (mut rt, mut ttl, mut scope) = (None, None, None);
        adapt_cacheable(&mut rt, &mut ttl, &mut scope, ProtocolVersion::V2026_07_28);
        assert_eq!((rt.clone(), ttl, scope), (Some(ResultType::Complete), Some(0), Some(CacheScope::Private)));
        adapt_cacheable(&mut rt, &mut ttl, &mut scope, ProtocolVersion::V2025_11_25);
        assert_eq!((rt, ttl, scope), (None, None, None));
    }
}
