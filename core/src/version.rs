//! MCP protocol revisions: parsing, ordering, negotiation and the per-revision feature table.
//!
//! Revisions up to 2025-11-25 form the *legacy* era (an `initialize` handshake opens a
//! session); 2026-07-28 opens the *stateless* era (no handshake, `server/discover`, version and
//! capabilities in every request's `_meta`).

use crate::alloc_prelude::*;
use core::fmt;
use core::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A published revision of the Model Context Protocol.
///
/// Ordered by publication date.
///
/// # Examples
///
/// ```
/// use talaria_core::version::{Feature, ProtocolVersion};
///
/// let v: ProtocolVersion = "2025-03-26".parse().unwrap();
/// assert!(v.supports(Feature::Batching));
/// assert!(!ProtocolVersion::V2025_06_18.supports(Feature::Batching));
/// assert!(ProtocolVersion::V2024_11_05 < ProtocolVersion::LATEST);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum ProtocolVersion {
    /// 2024-11-05, the first published revision.
    V2024_11_05,
    /// 2025-03-26: Streamable HTTP, batching, audio, tool annotations, completions capability.
    V2025_03_26,
    /// 2025-06-18: structured tool output, elicitation, resource links, titles, no batching.
    V2025_06_18,
    /// 2025-11-25: icons, tasks, URL elicitation, sampling with tools, SSE polling.
    V2025_11_25,
    /// 2026-07-28: the stateless revision.
    V2026_07_28,
}

/// The two lifecycles MCP has had.
///
/// # Examples
///
/// ```
/// use talaria_core::version::{Era, ProtocolVersion};
///
/// assert_eq!(ProtocolVersion::V2025_11_25.era(), Era::Legacy);
/// assert_eq!(ProtocolVersion::V2026_07_28.era(), Era::Stateless);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Era {
    /// `initialize` handshake, negotiated capabilities, sessions.
    Legacy,
    /// No handshake; every request carries version and capabilities.
    Stateless,
}

/// A protocol feature whose presence depends on the revision.
///
/// # Examples
///
/// ```
/// use talaria_core::version::{Feature, ProtocolVersion};
///
/// let since: Vec<_> = ProtocolVersion::ALL.iter().filter(|v| v.supports(Feature::StructuredOutput)).collect();
/// assert_eq!(since.len(), 3);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Feature {
    /// The `initialize` / `notifications/initialized` handshake (legacy era).
    Initialize,
    /// `ping` requests.
    Ping,
    /// `logging/setLevel` (the stateless era carries the level in `_meta`).
    SetLevel,
    /// `resources/subscribe` / `resources/unsubscribe`.
    ResourceSubscribe,
    /// `notifications/roots/list_changed`.
    RootsListChanged,
    /// Server-to-client JSON-RPC requests (sampling, roots, elicitation) on the wire.
    ServerRequests,
    /// JSON-RPC batches (2025-03-26 only).
    Batching,
    /// Audio content blocks.
    AudioContent,
    /// Tool annotations (`readOnlyHint` and friends).
    ToolAnnotations,
    /// The `completions` server capability.
    CompletionsCapability,
    /// `message` on progress notifications.
    ProgressMessage,
    /// `structuredContent` and `outputSchema`.
    StructuredOutput,
    /// `elicitation/create` (form mode).
    Elicitation,
    /// `resource_link` content blocks.
    ResourceLinks,
    /// `title` on named objects, `context` in completion requests.
    Titles,
    /// The `MCP-Protocol-Version` HTTP header.
    ProtocolVersionHeader,
    /// `icons` on implementations, tools, prompts, resources.
    Icons,
    /// Task-augmented requests and `tasks/*` (2025-11-25 core).
    Tasks,
    /// URL-mode elicitation and the -32042 error.
    UrlElicitation,
    /// `tools` and `toolChoice` in sampling requests.
    SamplingTools,
    /// SSE priming events and server-initiated disconnects with `retry`.
    SsePolling,
    /// No handshake; version, capabilities and client info in request `_meta`.
    Stateless,
    /// `server/discover`.
    Discover,
    /// Multi-round-trip requests (`input_required`, `inputResponses`, `requestState`).
    Mrtr,
    /// `resultType` on results.
    ResultType,
    /// `ttlMs` / `cacheScope` cache hints on results.
    CacheHints,
    /// `subscriptions/listen`.
    SubscriptionsListen,
    /// `Mcp-Method` / `Mcp-Name` HTTP headers.
    MethodHeaders,
    /// An unknown resource is reported as -32602 Invalid Params (-32002 before).
    ResourceNotFoundIsInvalidParams,
    /// `structuredContent` may be any JSON value, not only an object.
    StructuredContentAnyValue,
}

/// An error from protocol-version negotiation.
///
/// # Examples
///
/// ```
/// use talaria_core::version::{accept_server_version, ProtocolVersion, VersionError};
///
/// let err = accept_server_version("1999-01-01", &ProtocolVersion::ALL).unwrap_err();
/// assert!(matches!(err, VersionError::Unsupported { .. }));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum VersionError {
    /// The peer chose a revision this side does not support.
    #[error("protocol version {requested:?} is not supported (supported: {supported:?})")]
    Unsupported {
        /// What the peer chose.
        requested: String,
        /// What this side supports.
        supported: Vec<&'static str>,
    },
}

impl ProtocolVersion {
    /// Every revision, oldest first.
    pub const ALL: [Self; 5] =
        [Self::V2024_11_05, Self::V2025_03_26, Self::V2025_06_18, Self::V2025_11_25, Self::V2026_07_28];
    /// The newest revision.
    pub const LATEST: Self = Self::V2026_07_28;
    /// The newest revision of the legacy (handshake) era.
    pub const LATEST_LEGACY: Self = Self::V2025_11_25;
    /// The revision assumed for an HTTP request without an `MCP-Protocol-Version` header.
    pub const HTTP_DEFAULT: Self = Self::V2025_03_26;

    /// The revision's date string, as on the wire.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::V2024_11_05 => "2024-11-05",
            Self::V2025_03_26 => "2025-03-26",
            Self::V2025_06_18 => "2025-06-18",
            Self::V2025_11_25 => "2025-11-25",
            Self::V2026_07_28 => "2026-07-28",
        }
    }

    /// Parses a revision date string; `None` for an unknown one.
    #[must_use]
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|v| v.as_str() == s)
    }

    /// The lifecycle this revision uses.
    #[must_use]
    pub const fn era(self) -> Era {
        match self {
            Self::V2026_07_28 => Era::Stateless,
            _ => Era::Legacy,
        }
    }

    /// Whether `feature` exists in this revision.
    #[must_use]
    pub const fn supports(self, feature: Feature) -> bool {
        use Feature as F;
        let (since, until) = match feature {
            F::Initialize | F::Ping | F::SetLevel | F::ResourceSubscribe | F::RootsListChanged | F::ServerRequests => {
                (Self::V2024_11_05, Self::V2025_11_25)
            }
            F::Batching => (Self::V2025_03_26, Self::V2025_03_26),
            F::AudioContent | F::ToolAnnotations | F::CompletionsCapability | F::ProgressMessage => {
                (Self::V2025_03_26, Self::LATEST)
            }
            F::StructuredOutput | F::Elicitation | F::ResourceLinks | F::Titles | F::ProtocolVersionHeader => {
                (Self::V2025_06_18, Self::LATEST)
            }
            F::Icons | F::UrlElicitation | F::SamplingTools | F::SsePolling => (Self::V2025_11_25, Self::LATEST),
            F::Tasks => (Self::V2025_11_25, Self::V2025_11_25),
            F::Stateless
            | F::Discover
            | F::Mrtr
            | F::ResultType
            | F::CacheHints
            | F::SubscriptionsListen
            | F::MethodHeaders
            | F::ResourceNotFoundIsInvalidParams
            | F::StructuredContentAnyValue => (Self::V2026_07_28, Self::LATEST),
        };
        since as u8 <= self as u8 && self as u8 <= until as u8
    }
}

/// The revision a server answers to `initialize`: the client's if supported, else the newest
/// supported revision that has the handshake.
///
/// `None` if `supported` holds no legacy revision (a stateless-only server cannot answer
/// `initialize`).
///
/// # Examples
///
/// ```
/// use talaria_core::version::{negotiate_initialize, ProtocolVersion as V};
///
/// assert_eq!(negotiate_initialize("2025-03-26", &V::ALL), Some(V::V2025_03_26));
/// assert_eq!(negotiate_initialize("2099-01-01", &V::ALL), Some(V::V2025_11_25));
/// assert_eq!(negotiate_initialize("2026-07-28", &V::ALL), Some(V::V2025_11_25));
/// ```
#[must_use]
pub fn negotiate_initialize(requested: &str, supported: &[ProtocolVersion]) -> Option<ProtocolVersion> {
    let legacy = supported.iter().copied().filter(|v| v.supports(Feature::Initialize));
    match ProtocolVersion::parse(requested) {
        Some(v) if v.supports(Feature::Initialize) && supported.contains(&v) => Some(v),
        _ => legacy.max(),
    }
}

/// Checks the revision a server chose against what the client supports.
///
/// # Errors
///
/// [`VersionError::Unsupported`] when the client does not support it; per the spec the client
/// should then disconnect.
pub fn accept_server_version(answered: &str, supported: &[ProtocolVersion]) -> Result<ProtocolVersion, VersionError> {
    match ProtocolVersion::parse(answered) {
        Some(v) if supported.contains(&v) => Ok(v),
        _ => Err(VersionError::Unsupported {
            requested: answered.to_owned(),
            supported: supported.iter().map(|v| v.as_str()).collect(),
        }),
    }
}

impl fmt::Display for ProtocolVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ProtocolVersion {
    type Err = VersionError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s).ok_or_else(|| VersionError::Unsupported {
            requested: s.to_owned(),
            supported: Self::ALL.iter().map(|v| v.as_str()).collect(),
        })
    }
}

impl Serialize for ProtocolVersion {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for ProtocolVersion {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let s = String::deserialize(deserializer)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn every_revision_parses_back_from_its_string() {
        for v in ProtocolVersion::ALL {
            assert_eq!(ProtocolVersion::parse(v.as_str()), Some(v));
            assert_eq!(serde_json::to_string(&v).unwrap(), format!("\"{v}\""));
        }
        assert_eq!(ProtocolVersion::parse("2025-01-01"), None);
    }

    #[test]
    fn feature_table_matches_the_changelogs() {
        use ProtocolVersion as V;
        let batching: Vec<_> = V::ALL.into_iter().filter(|v| v.supports(Feature::Batching)).collect();
        assert_eq!(batching, [V::V2025_03_26]);
        assert!(!V::V2026_07_28.supports(Feature::Initialize));
        assert!(V::V2025_11_25.supports(Feature::Initialize));
        assert!(V::V2025_11_25.supports(Feature::Tasks));
        assert!(!V::V2026_07_28.supports(Feature::Tasks));
        assert!(!V::V2024_11_05.supports(Feature::AudioContent));
        assert!(V::V2026_07_28.supports(Feature::StructuredOutput));
        assert!(!V::V2025_03_26.supports(Feature::StructuredOutput));
    }

    #[test]
    fn stateless_only_server_cannot_answer_initialize() {
        assert_eq!(negotiate_initialize("2025-06-18", &[ProtocolVersion::V2026_07_28]), None);
        assert_eq!(
            negotiate_initialize("2025-06-18", &[ProtocolVersion::V2024_11_05]),
            Some(ProtocolVersion::V2024_11_05)
        );
    }

    #[test]
    fn client_rejects_unsupported_answers() {
        let only_old = [ProtocolVersion::V2024_11_05];
        assert!(accept_server_version("2025-06-18", &only_old).is_err());
        assert_eq!(accept_server_version("2024-11-05", &only_old).unwrap(), ProtocolVersion::V2024_11_05);
    }
}
