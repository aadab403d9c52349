//! The lifecycle: capabilities, the `initialize` handshake (2024-11-05 .. 2025-11-25),
//! `server/discover` and the per-request `_meta` of the stateless era (2026-07-28).

use super::common::{
    CacheScope, Implementation, JsonObject, LoggingLevel, Meta, NotificationParams, ProgressToken, RequestParams,
    ResultType,
};
use super::macros::mcp_struct;
use super::methods::{notification_method, request_method, Capability};
use super::{adapt_cacheable, ForRevision};
use crate::alloc_prelude::*;
use crate::version::{Feature, ProtocolVersion};

mcp_struct! {
    /// A capability that may announce list-change notifications (`tools`, `prompts`).
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::lifecycle::ListChangedCapability;
    ///
    /// let c = ListChangedCapability::with_list_changed();
    /// assert_eq!(serde_json::to_string(&c).unwrap(), r#"{"listChanged":true}"#);
    /// ```
    #[derive(Default)]
    pub struct ListChangedCapability {
        /// Whether `notifications/.../list_changed` will be sent.
        opt list_changed: bool = "listChanged",
    }
}

impl ListChangedCapability {
    /// The capability with `listChanged: true`.
    #[must_use]
    pub fn with_list_changed() -> Self {
        Self { list_changed: Some(true), ..Self::default() }
    }
}

mcp_struct! {
    /// The server's `resources` capability.
    #[derive(Default)]
    pub struct ResourcesCapability {
        /// Whether clients may subscribe to resource updates.
        opt subscribe: bool = "subscribe",
        /// Whether `notifications/resources/list_changed` will be sent.
        opt list_changed: bool = "listChanged",
    }
}

mcp_struct! {
    /// The client's `sampling` capability.
    #[derive(Default)]
    pub struct SamplingCapability {
        /// Present if `includeContext` other than `"none"` is supported (2025-11-25+).
        opt context: JsonObject = "context",
        /// Present if `tools` and `toolChoice` are supported (2025-11-25+).
        opt tools: JsonObject = "tools",
    }
}

mcp_struct! {
    /// The client's `elicitation` capability; an empty object means form mode only.
    #[derive(Default)]
    pub struct ElicitationCapability {
        /// Present if form mode is supported (2025-11-25+).
        opt form: JsonObject = "form",
        /// Present if URL mode is supported (2025-11-25+).
        opt url: JsonObject = "url",
    }
}

mcp_struct! {
    /// What a client supports.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::lifecycle::ClientCapabilities;
    /// use talaria_core::schema::Capability;
    ///
    /// let caps: ClientCapabilities = serde_json::from_str(r#"{"roots":{"listChanged":true},"elicitation":{}}"#).unwrap();
    /// assert!(caps.has(Capability::RootsListChanged));
    /// assert!(caps.has(Capability::Elicitation));
    /// assert!(!caps.has(Capability::Sampling));
    /// ```
    #[derive(Default)]
    pub struct ClientCapabilities {
        /// Present if the client can list roots.
        opt roots: ListChangedCapability = "roots",
        /// Present if the client can sample from an LLM.
        opt sampling: SamplingCapability = "sampling",
        /// Present if the client can elicit input from the user (2025-06-18+).
        opt elicitation: ElicitationCapability = "elicitation",
        /// Task support (2025-11-25): `list`, `cancel`, `requests`.
        opt tasks: JsonObject = "tasks",
        /// Experimental, non-standard capabilities.
        opt experimental: JsonObject = "experimental",
        /// Extensions by identifier (2026-07-28).
        opt extensions: JsonObject = "extensions",
    }
}

impl ClientCapabilities {
    /// Whether the capability is advertised here. Server capabilities are never advertised by
    /// a client.
    #[must_use]
    pub fn has(&self, capability: Capability) -> bool {
        match capability {
            Capability::Roots => self.roots.is_some(),
            Capability::RootsListChanged => self.roots.as_ref().is_some_and(|r| r.list_changed == Some(true)),
            Capability::Sampling => self.sampling.is_some(),
            Capability::Elicitation => self.elicitation.is_some(),
            Capability::Tasks => self.tasks.is_some(),
            Capability::SamplingTools => self.sampling.as_ref().is_some_and(|s| s.tools.is_some()),
            Capability::ElicitationUrl => self.supports_url_elicitation(),
            _ => false,
        }
    }

    /// Whether URL-mode elicitation is supported (2025-11-25+).
    #[must_use]
    pub fn supports_url_elicitation(&self) -> bool {
        self.elicitation.as_ref().is_some_and(|e| e.url.is_some())
    }

    /// The settings of the extension `id` (2026-07-28), if the client declared it.
    ///
    /// # Examples
    ///
    /// ```
    /// use serde_json::json;
    /// use talaria_core::schema::lifecycle::ClientCapabilities;
    ///
    /// let caps: ClientCapabilities =
    ///     serde_json::from_value(json!({"extensions": {"com.example/trace": {"depth": 2}}})).unwrap();
    /// assert_eq!(caps.extension("com.example/trace"), Some(&json!({"depth": 2})));
    /// assert_eq!(caps.extension("com.example/other"), None);
    /// ```
    #[must_use]
    pub fn extension(&self, id: &str) -> Option<&serde_json::Value> {
        self.extensions.as_ref()?.get(id)
    }

    /// With the extension `id` declared, with `settings` (an empty object for none).
    ///
    /// # Errors
    ///
    /// [`ExtensionIdError`] if `id` does not follow the naming rule ([`check_extension_id`]).
    pub fn with_extension(mut self, id: &str, settings: JsonObject) -> Result<Self, ExtensionIdError> {
        check_extension_id(id)?;
        self.extensions.get_or_insert_with(JsonObject::new).insert(id.to_owned(), settings.into());
        Ok(self)
    }
}

/// An extension id that breaks the naming rule (see [`check_extension_id`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is not an extension id: use a reverse-DNS prefix, a slash and a name, e.g. \"com.example/feature\"")]
pub struct ExtensionIdError(pub String);

/// Checks the 2026-07-28 rule for extension ids (the `_meta` key rule with a mandatory
/// prefix): a prefix of dot-separated labels (each a letter, then letters, digits or
/// hyphens, not ending with a hyphen), a `/`, and a name that starts and ends with a letter
/// or digit, with `-`, `_` and `.` inside.
///
/// # Errors
///
/// [`ExtensionIdError`] naming the id.
///
/// # Examples
///
/// ```
/// use talaria_core::schema::lifecycle::check_extension_id;
///
/// assert!(check_extension_id("io.modelcontextprotocol/tasks").is_ok());
/// assert!(check_extension_id("com.example/my_feature.v2").is_ok());
/// assert!(check_extension_id("tasks").is_err(), "the prefix is mandatory");
/// assert!(check_extension_id("com..example/x").is_err());
/// assert!(check_extension_id("com.example/-x").is_err());
/// ```
pub fn check_extension_id(id: &str) -> Result<(), ExtensionIdError> {
    let bad = || ExtensionIdError(id.to_owned());
    let (prefix, name) = id.split_once('/').ok_or_else(bad)?;
    let label_ok = |label: &str| {
        let bytes = label.as_bytes();
        bytes.first().is_some_and(u8::is_ascii_alphabetic)
            && bytes.last().is_none_or(|b| *b != b'-')
            && bytes.iter().all(|b| b.is_ascii_alphanumeric() || *b == b'-')
    };
    let name_bytes = name.as_bytes();
    let name_ok = name_bytes.first().is_some_and(u8::is_ascii_alphanumeric)
        && name_bytes.last().is_some_and(u8::is_ascii_alphanumeric)
        && name_bytes.iter().all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(b));
    if prefix.split('.').all(label_ok) && name_ok {
        Ok(())
    } else {
        Err(bad())
    }
}

mcp_struct! {
    /// What a server offers.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::lifecycle::{ListChangedCapability, ServerCapabilities};
    /// use talaria_core::schema::Capability;
    /// use talaria_core::version::ProtocolVersion;
    ///
    /// let caps = ServerCapabilities { tools: Some(ListChangedCapability::default()), ..Default::default() };
    /// assert!(caps.has(Capability::Tools));
    /// assert!(!caps.has(Capability::ToolsListChanged));
    /// assert!(caps.allows(Capability::Completions, ProtocolVersion::V2024_11_05));
    /// assert!(!caps.allows(Capability::Completions, ProtocolVersion::V2025_03_26));
    /// ```
    #[derive(Default)]
    pub struct ServerCapabilities {
        /// Present if the server offers prompts.
        opt prompts: ListChangedCapability = "prompts",
        /// Present if the server offers resources.
        opt resources: ResourcesCapability = "resources",
        /// Present if the server offers tools.
        opt tools: ListChangedCapability = "tools",
        /// Present if the server sends log messages.
        opt logging: JsonObject = "logging",
        /// Present if the server offers argument completion (2025-03-26+).
        opt completions: JsonObject = "completions",
        /// Task support (2025-11-25): `list`, `cancel`, `requests`.
        opt tasks: JsonObject = "tasks",
        /// Experimental, non-standard capabilities.
        opt experimental: JsonObject = "experimental",
        /// Extensions by identifier (2026-07-28).
        opt extensions: JsonObject = "extensions",
    }
}

impl ServerCapabilities {
    /// The settings of the extension `id` (2026-07-28), if the server declared it.
    #[must_use]
    pub fn extension(&self, id: &str) -> Option<&serde_json::Value> {
        self.extensions.as_ref()?.get(id)
    }

    /// Whether the capability is advertised here. Client capabilities are never advertised by
    /// a server.
    #[must_use]
    pub fn has(&self, capability: Capability) -> bool {
        let flag = |f: Option<bool>| f == Some(true);
        match capability {
            Capability::Tools => self.tools.is_some(),
            Capability::ToolsListChanged => self.tools.as_ref().is_some_and(|c| flag(c.list_changed)),
            Capability::Prompts => self.prompts.is_some(),
            Capability::PromptsListChanged => self.prompts.as_ref().is_some_and(|c| flag(c.list_changed)),
            Capability::Resources => self.resources.is_some(),
            Capability::ResourcesSubscribe => self.resources.as_ref().is_some_and(|c| flag(c.subscribe)),
            Capability::ResourcesListChanged => self.resources.as_ref().is_some_and(|c| flag(c.list_changed)),
            Capability::Logging => self.logging.is_some(),
            Capability::Completions => self.completions.is_some(),
            Capability::Tasks => self.tasks.is_some(),
            _ => false,
        }
    }

    /// Whether a request needing `capability` may be sent to this server under `version`:
    /// advertised, or a capability the revision does not define (completions before
    /// 2025-03-26 had none).
    #[must_use]
    pub fn allows(&self, capability: Capability, version: ProtocolVersion) -> bool {
        if capability == Capability::Completions && !version.supports(Feature::CompletionsCapability) {
            return true;
        }
        self.has(capability)
    }
}

mcp_struct! {
    /// Parameters of `initialize` (legacy era).
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::lifecycle::InitializeRequestParams;
    /// use talaria_core::schema::Implementation;
    ///
    /// let p = InitializeRequestParams::new("2025-06-18", Default::default(), Implementation::new("c", "1"));
    /// assert_eq!(
    ///     serde_json::to_string(&p).unwrap(),
    ///     r#"{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}"#
    /// );
    /// ```
    pub struct InitializeRequestParams {
        /// The newest revision the client supports (a string: peers may send unknown ones).
        req protocol_version: String = "protocolVersion",
        /// The client's capabilities.
        req capabilities: ClientCapabilities = "capabilities",
        /// The client's implementation info.
        req client_info: Implementation = "clientInfo",
        /// Request metadata.
        opt meta: Meta = "_meta",
    }
}

impl InitializeRequestParams {
    /// Parameters for a client speaking `protocol_version`.
    #[must_use]
    pub fn new(
        protocol_version: impl Into<String>,
        capabilities: ClientCapabilities,
        client_info: Implementation,
    ) -> Self {
        Self {
            protocol_version: protocol_version.into(),
            capabilities,
            client_info,
            meta: None,
            extra: JsonObject::new(),
        }
    }
}

mcp_struct! {
    /// The server's answer to `initialize`.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::lifecycle::InitializeResult;
    ///
    /// let r: InitializeResult = serde_json::from_str(
    ///     r#"{"protocolVersion":"2024-11-05","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}"#,
    /// ).unwrap();
    /// assert_eq!(r.server_info.name, "s");
    /// ```
    pub struct InitializeResult {
        /// The revision the server chose.
        req protocol_version: String = "protocolVersion",
        /// The server's capabilities.
        req capabilities: ServerCapabilities = "capabilities",
        /// The server's implementation info.
        req server_info: Implementation = "serverInfo",
        /// How to use the server, for the model.
        opt instructions: String = "instructions",
        /// Result metadata.
        opt meta: Meta = "_meta",
    }
}

impl ForRevision for InitializeResult {
    fn adapt_to(&mut self, _version: ProtocolVersion) {}
}

mcp_struct! {
    /// The result of `server/discover` (2026-07-28).
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::lifecycle::DiscoverResult;
    ///
    /// let r: DiscoverResult = serde_json::from_str(
    ///     r#"{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{},"ttlMs":0,"cacheScope":"public"}"#,
    /// ).unwrap();
    /// assert_eq!(r.supported_versions, ["2026-07-28"]);
    /// ```
    #[derive(Default)]
    pub struct DiscoverResult {
        /// The kind of result.
        opt result_type: ResultType = "resultType",
        /// Every revision the server supports.
        req supported_versions: Vec<String> = "supportedVersions",
        /// The server's capabilities.
        req capabilities: ServerCapabilities = "capabilities",
        /// How to use the server, for the model.
        opt instructions: String = "instructions",
        /// Result metadata, including `io.modelcontextprotocol/serverInfo`.
        opt meta: Meta = "_meta",
        /// How long the client may cache this result, in milliseconds.
        opt ttl_ms: u64 = "ttlMs",
        /// Who may cache it.
        opt cache_scope: CacheScope = "cacheScope",
    }
}

impl ForRevision for DiscoverResult {
    fn adapt_to(&mut self, version: ProtocolVersion) {
        adapt_cacheable(&mut self.result_type, &mut self.ttl_ms, &mut self.cache_scope, version);
    }
}

mcp_struct! {
    /// The reserved members of a request's `_meta` in the stateless era (2026-07-28), read
    /// from a request's [`Meta`].
    ///
    /// All are optional here so that a server can tell the client exactly what is missing.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::lifecycle::RequestMeta;
    /// use serde_json::json;
    ///
    /// let meta: RequestMeta = serde_json::from_value(json!({
    ///     "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    ///     "io.modelcontextprotocol/clientCapabilities": {},
    ///     "progressToken": 5
    /// })).unwrap();
    /// assert_eq!(meta.protocol_version.as_deref(), Some("2026-07-28"));
    /// assert!(meta.client_capabilities.is_some());
    /// ```
    #[derive(Default)]
    pub struct RequestMeta {
        /// The progress token, if the requester wants progress.
        opt progress_token: ProgressToken = "progressToken",
        /// The protocol version of this request (required in 2026-07-28).
        opt protocol_version: String = "io.modelcontextprotocol/protocolVersion",
        /// The client's capabilities for this request (required in 2026-07-28).
        opt client_capabilities: ClientCapabilities = "io.modelcontextprotocol/clientCapabilities",
        /// The client's implementation info.
        opt client_info: Implementation = "io.modelcontextprotocol/clientInfo",
        /// The log level wanted for this request; absent means no log messages.
        opt log_level: LoggingLevel = "io.modelcontextprotocol/logLevel",
    }
}

request_method! {
    /// `initialize`: opens a session (legacy era).
    Initialize, "initialize", InitializeRequestParams => InitializeResult
}

notification_method! {
    /// `notifications/initialized`: the client finished initializing (legacy era).
    Initialized, "notifications/initialized", NotificationParams
}

request_method! {
    /// `server/discover`: asks what the server supports (2026-07-28).
    Discover, "server/discover", RequestParams => DiscoverResult
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn capability_flags_need_true() {
        let caps: ServerCapabilities =
            serde_json::from_value(json!({"resources": {"subscribe": false, "listChanged": true}})).unwrap();
        assert!(caps.has(Capability::Resources));
        assert!(!caps.has(Capability::ResourcesSubscribe));
        assert!(caps.has(Capability::ResourcesListChanged));
        assert!(!caps.has(Capability::Sampling));
    }

    #[test]
    fn url_elicitation_needs_the_url_member() {
        let form_only: ClientCapabilities = serde_json::from_value(json!({"elicitation": {}})).unwrap();
        assert!(!form_only.supports_url_elicitation());
        let both: ClientCapabilities = serde_json::from_value(json!({"elicitation": {"form": {}, "url": {}}})).unwrap();
        assert!(both.supports_url_elicitation());
    }

    #[test]
    fn discover_result_gains_cache_hints_when_stateless() {
        let mut r = DiscoverResult { supported_versions: vec!["2026-07-28".into()], ..Default::default() };
        r.adapt_to(ProtocolVersion::V2026_07_28);
        let v = serde_json::to_value(&r).unwrap();
        assert_eq!(v["resultType"], "complete");
        assert_eq!(v["ttlMs"], 0);
        assert_eq!(v["cacheScope"], "private");
    }
}
