//! Every MCP method, described once: name, kind, sender, capability, revisions.
//!
//! The session uses [`method_info`] to gate traffic it otherwise treats as opaque (direction,
//! capability, revision); the typed layers use the [`RequestMethod`] and
//! [`NotificationMethod`] impls on marker types (such as [`super::tools::CallTool`]) to pair a
//! method with its parameter and result types.

use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::version::ProtocolVersion;

/// Whether a method is a request (expects a response) or a notification.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MethodKind {
    /// A request.
    Request,
    /// A notification.
    Notification,
}

/// Who may send a message.
///
/// # Examples
///
/// ```
/// use talaria_core::schema::{method_info, Side, SentBy};
///
/// assert!(method_info("tools/call").unwrap().sent_by.allows(Side::Client));
/// assert_eq!(method_info("ping").unwrap().sent_by, SentBy::Both);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SentBy {
    /// Only clients.
    Client,
    /// Only servers.
    Server,
    /// Either side.
    Both,
}

/// One side of an MCP connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Side {
    /// The application side (host's connector).
    Client,
    /// The side offering tools, prompts and resources.
    Server,
}

impl Side {
    /// The other side.
    #[must_use]
    pub const fn peer(self) -> Self {
        match self {
            Self::Client => Self::Server,
            Self::Server => Self::Client,
        }
    }
}

impl SentBy {
    /// Whether `side` may send the message.
    #[must_use]
    pub const fn allows(self, side: Side) -> bool {
        matches!((self, side), (Self::Both, _) | (Self::Client, Side::Client) | (Self::Server, Side::Server))
    }
}

/// A capability a method needs the receiving (or, for notifications, sending) side to have
/// advertised.
///
/// # Examples
///
/// ```
/// use talaria_core::schema::{Capability, Side};
///
/// assert_eq!(Capability::Sampling.advertised_by(), Side::Client);
/// assert_eq!(Capability::Tools.advertised_by(), Side::Server);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Capability {
    /// Server `tools`.
    Tools,
    /// Server `tools.listChanged`.
    ToolsListChanged,
    /// Server `prompts`.
    Prompts,
    /// Server `prompts.listChanged`.
    PromptsListChanged,
    /// Server `resources`.
    Resources,
    /// Server `resources.subscribe`.
    ResourcesSubscribe,
    /// Server `resources.listChanged`.
    ResourcesListChanged,
    /// Server `logging`.
    Logging,
    /// Server `completions` (2025-03-26+; earlier revisions had no such capability).
    Completions,
    /// Client `roots`.
    Roots,
    /// Client `roots.listChanged`.
    RootsListChanged,
    /// Client `sampling`.
    Sampling,
    /// Client `elicitation`.
    Elicitation,
    /// `tasks` on either side (2025-11-25).
    Tasks,
    /// Client `sampling.tools`: tools in a sampling request (2025-11-25+).
    SamplingTools,
    /// Client `elicitation.url`: URL-mode elicitation (2025-11-25+).
    ElicitationUrl,
}

impl Capability {
    /// The side that advertises this capability.
    #[must_use]
    pub const fn advertised_by(self) -> Side {
        match self {
            Self::Roots
            | Self::RootsListChanged
            | Self::Sampling
            | Self::Elicitation
            | Self::Tasks
            | Self::SamplingTools
            | Self::ElicitationUrl => Side::Client,
            _ => Side::Server,
        }
    }
}

/// The capability a request's `params` call for beyond its method's own: tools in a
/// `sampling/createMessage` need `sampling.tools`, a URL-mode `elicitation/create` needs
/// `elicitation.url`. A sender must not send such a request to a peer that did not declare it.
///
/// # Examples
///
/// ```
/// use serde_json::json;
/// use talaria_core::schema::{params_capability, Capability};
///
/// let with_tools = json!({"messages": [], "maxTokens": 5, "tools": [{"name": "t", "inputSchema": {"type": "object"}}]});
/// assert_eq!(params_capability("sampling/createMessage", &with_tools), Some(Capability::SamplingTools));
/// let url = json!({"mode": "url", "message": "Sign in", "url": "https://example.com", "elicitationId": "e1"});
/// assert_eq!(params_capability("elicitation/create", &url), Some(Capability::ElicitationUrl));
/// assert_eq!(params_capability("elicitation/create", &json!({"message": "Name?"})), None);
/// ```
#[must_use]
pub fn params_capability(method: &str, params: &serde_json::Value) -> Option<Capability> {
    let present = |key: &str| params.get(key).is_some_and(|v| !v.is_null());
    match method {
        "sampling/createMessage" if present("tools") || present("toolChoice") => Some(Capability::SamplingTools),
        "elicitation/create" if params.get("mode").and_then(serde_json::Value::as_str) == Some("url") => {
            Some(Capability::ElicitationUrl)
        }
        _ => None,
    }
}

/// The description of one MCP method.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MethodInfo {
    /// The method name on the wire.
    pub name: &'static str,
    /// Request or notification.
    pub kind: MethodKind,
    /// Who may send it.
    pub sent_by: SentBy,
    /// The capability it needs, if any.
    pub capability: Option<Capability>,
    /// The first revision that has it.
    pub since: ProtocolVersion,
    /// The last revision that has it.
    pub until: ProtocolVersion,
}

impl MethodInfo {
    /// Whether the method exists in `version`.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::method_info;
    /// use talaria_core::version::ProtocolVersion;
    ///
    /// let init = method_info("initialize").unwrap();
    /// assert!(init.exists_in(ProtocolVersion::V2024_11_05));
    /// assert!(!init.exists_in(ProtocolVersion::V2026_07_28));
    /// ```
    #[must_use]
    pub fn exists_in(&self, version: ProtocolVersion) -> bool {
        self.since <= version && version <= self.until
    }
}

/// A request method: ties the method name to its parameter and result types.
///
/// # Examples
///
/// ```
/// use talaria_core::schema::{tools::CallTool, RequestMethod};
///
/// assert_eq!(CallTool::INFO.name, "tools/call");
/// ```
pub trait RequestMethod {
    /// The method's description.
    const INFO: MethodInfo;
    /// The `params` type.
    type Params: Serialize + DeserializeOwned;
    /// The `result` type.
    type Result: Serialize + DeserializeOwned;
}

/// A notification method: ties the method name to its parameter type.
pub trait NotificationMethod {
    /// The method's description.
    const INFO: MethodInfo;
    /// The `params` type.
    type Params: Serialize + DeserializeOwned;
}

const fn info(
    name: &'static str,
    kind: MethodKind,
    sent_by: SentBy,
    capability: Option<Capability>,
    since: ProtocolVersion,
    until: ProtocolVersion,
) -> MethodInfo {
    MethodInfo { name, kind, sent_by, capability, since, until }
}

use Capability as C;
use MethodKind::{Notification as N, Request as R};
use ProtocolVersion::{V2024_11_05 as V1, V2025_06_18 as V3, V2025_11_25 as V4, V2026_07_28 as V5};

/// Every method of every revision. Methods that only exist as MRTR input requests in
/// 2026-07-28 (`sampling/createMessage`, `roots/list`, `elicitation/create`) end their life as
/// JSON-RPC methods in 2025-11-25.
pub const METHODS: &[MethodInfo] = &[
    // Lifecycle and utilities.
    info("initialize", R, SentBy::Client, None, V1, V4),
    info("notifications/initialized", N, SentBy::Client, None, V1, V4),
    info("ping", R, SentBy::Both, None, V1, V4),
    info("notifications/cancelled", N, SentBy::Both, None, V1, V5),
    info("notifications/progress", N, SentBy::Both, None, V1, V5),
    info("server/discover", R, SentBy::Client, None, V5, V5),
    // Tools.
    info("tools/list", R, SentBy::Client, Some(C::Tools), V1, V5),
    info("tools/call", R, SentBy::Client, Some(C::Tools), V1, V5),
    info("notifications/tools/list_changed", N, SentBy::Server, Some(C::ToolsListChanged), V1, V5),
    // Prompts.
    info("prompts/list", R, SentBy::Client, Some(C::Prompts), V1, V5),
    info("prompts/get", R, SentBy::Client, Some(C::Prompts), V1, V5),
    info("notifications/prompts/list_changed", N, SentBy::Server, Some(C::PromptsListChanged), V1, V5),
    // Resources.
    info("resources/list", R, SentBy::Client, Some(C::Resources), V1, V5),
    info("resources/templates/list", R, SentBy::Client, Some(C::Resources), V1, V5),
    info("resources/read", R, SentBy::Client, Some(C::Resources), V1, V5),
    info("resources/subscribe", R, SentBy::Client, Some(C::ResourcesSubscribe), V1, V4),
    info("resources/unsubscribe", R, SentBy::Client, Some(C::ResourcesSubscribe), V1, V4),
    info("notifications/resources/list_changed", N, SentBy::Server, Some(C::ResourcesListChanged), V1, V5),
    info("notifications/resources/updated", N, SentBy::Server, Some(C::ResourcesSubscribe), V1, V5),
    // Subscriptions (2026-07-28).
    info("subscriptions/listen", R, SentBy::Client, None, V5, V5),
    info("notifications/subscriptions/acknowledged", N, SentBy::Server, None, V5, V5),
    // Completion and logging.
    info("completion/complete", R, SentBy::Client, Some(C::Completions), V1, V5),
    info("logging/setLevel", R, SentBy::Client, Some(C::Logging), V1, V4),
    info("notifications/message", N, SentBy::Server, Some(C::Logging), V1, V5),
    // Client features.
    info("sampling/createMessage", R, SentBy::Server, Some(C::Sampling), V1, V4),
    info("roots/list", R, SentBy::Server, Some(C::Roots), V1, V4),
    info("notifications/roots/list_changed", N, SentBy::Client, Some(C::RootsListChanged), V1, V4),
    info("elicitation/create", R, SentBy::Server, Some(C::Elicitation), V3, V4),
    info("notifications/elicitation/complete", N, SentBy::Server, Some(C::Elicitation), V4, V4),
    // Tasks (2025-11-25 core; an extension from 2026-07-28 on).
    info("tasks/get", R, SentBy::Both, Some(C::Tasks), V4, V4),
    info("tasks/result", R, SentBy::Both, Some(C::Tasks), V4, V4),
    info("tasks/cancel", R, SentBy::Both, Some(C::Tasks), V4, V4),
    info("tasks/list", R, SentBy::Both, Some(C::Tasks), V4, V4),
    info("notifications/tasks/status", N, SentBy::Both, Some(C::Tasks), V4, V4),
];

/// Looks a method up by name.
///
/// # Examples
///
/// ```
/// use talaria_core::schema::{method_info, MethodKind};
///
/// assert_eq!(method_info("tools/list").unwrap().kind, MethodKind::Request);
/// assert!(method_info("tools/destroy").is_none());
/// ```
#[must_use]
pub fn method_info(name: &str) -> Option<&'static MethodInfo> {
    METHODS.iter().find(|m| m.name == name)
}

/// Looks a method up by name as the revision `version` knows it: where the core protocol
/// does not have it in `version`, a method of an extension that does (the tasks extension's
/// `tasks/get` in 2026-07-28) is found instead.
///
/// # Examples
///
/// ```
/// use talaria_core::schema::{method_info_in, SentBy};
/// use talaria_core::version::ProtocolVersion;
///
/// let get = method_info_in("tasks/get", Some(ProtocolVersion::V2026_07_28)).unwrap();
/// assert!(get.exists_in(ProtocolVersion::V2026_07_28));
/// assert_eq!(get.sent_by, SentBy::Client);
/// assert_eq!(method_info_in("tasks/get", Some(ProtocolVersion::V2025_11_25)).unwrap().sent_by, SentBy::Both);
/// ```
#[must_use]
pub fn method_info_in(name: &str, version: Option<ProtocolVersion>) -> Option<&'static MethodInfo> {
    let core = method_info(name);
    match (core, version) {
        (Some(info), Some(v)) if !info.exists_in(v) => {
            super::tasks::ext::METHODS.iter().find(|m| m.name == name && m.exists_in(v)).or(core)
        }
        _ => core,
    }
}

/// Looks a method up by name at compile time; used by the marker types' trait impls.
pub(crate) const fn lookup(name: &str) -> MethodInfo {
    let mut i = 0;
    while i < METHODS.len() {
        if const_str_eq(METHODS[i].name, name) {
            return METHODS[i];
        }
        i += 1;
    }
    // Evaluated at compile time only: a marker naming a method missing from the table fails
    // the build.
    #[allow(clippy::panic)]
    {
        panic!("method missing from METHODS")
    }
}

const fn const_str_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// Declares a request marker type with its [`RequestMethod`] impl.
macro_rules! request_method {
    ($(#[$attr:meta])* $marker:ident, $name:literal, $params:ty => $result:ty) => {
        $crate::schema::methods::request_method!(
            $(#[$attr])* $marker, info = $crate::schema::methods::lookup($name), $params => $result
        );
    };
    ($(#[$attr:meta])* $marker:ident, info = $info:expr, $params:ty => $result:ty) => {
        $(#[$attr])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub struct $marker;
        impl $crate::schema::RequestMethod for $marker {
            const INFO: $crate::schema::MethodInfo = $info;
            type Params = $params;
            type Result = $result;
        }
    };
}

/// Declares a notification marker type with its [`NotificationMethod`] impl.
macro_rules! notification_method {
    ($(#[$attr:meta])* $marker:ident, $name:literal, $params:ty) => {
        $crate::schema::methods::notification_method!(
            $(#[$attr])* $marker, info = $crate::schema::methods::lookup($name), $params
        );
    };
    ($(#[$attr:meta])* $marker:ident, info = $info:expr, $params:ty) => {
        $(#[$attr])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub struct $marker;
        impl $crate::schema::NotificationMethod for $marker {
            const INFO: $crate::schema::MethodInfo = $info;
            type Params = $params;
        }
    };
}

pub(crate) use {notification_method, request_method};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn method_names_are_unique() {
        for (i, m) in METHODS.iter().enumerate() {
            assert!(METHODS[i + 1..].iter().all(|o| o.name != m.name), "{} twice", m.name);
        }
    }

    #[test]
    fn stateless_revision_drops_the_handshake_and_server_requests() {
        let gone: Vec<_> = METHODS.iter().filter(|m| m.exists_in(V4) && !m.exists_in(V5)).map(|m| m.name).collect();
        for name in ["initialize", "ping", "logging/setLevel", "resources/subscribe", "roots/list", "tasks/get"] {
            assert!(gone.contains(&name), "{name} should end in 2025-11-25");
        }
    }
}
