//! The server's side of authorization: an MCP server as an OAuth protected resource. It
//! publishes its Protected Resource Metadata (RFC 9728), reads the bearer token of each
//! request, has the application verify it, and answers a missing or bad token with `401` and
//! a token without the needed scope with `403`, each with the `WWW-Authenticate` challenge
//! that sends a client to the metadata (2025-06-18 authorization onward).
//!
//! ```
//! use talaria_core::auth::resource::{ProtectedResource, TokenInfo};
//!
//! let resource = ProtectedResource::new("https://mcp.example.com/mcp", &["https://auth.example.com"])
//!     .unwrap()
//!     .require_scopes(&["files:read"]);
//! assert_eq!(resource.metadata_path(), "/.well-known/oauth-protected-resource/mcp");
//!
//! let verify = |token: &str| match token {
//!     "good" => Ok(TokenInfo::new("alice", &["files:read"])),
//!     "narrow" => Ok(TokenInfo::new("bob", &[])),
//!     _ => Err("unknown token".to_owned()),
//! };
//! assert_eq!(resource.check(Some("Bearer good"), verify).unwrap().subject, "alice");
//! assert_eq!(resource.check(None, verify).unwrap_err().status, 401);
//! assert_eq!(resource.check(Some("Bearer narrow"), verify).unwrap_err().status, 403);
//! ```

use super::metadata::ProtectedResourceMetadata;
use super::url::{HttpUrl, UrlError};
use crate::alloc_prelude::*;
use crate::http::exchange::Refusal;
use crate::schema::JsonObject;

/// What the application's verifier says of a valid token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenInfo {
    /// Who the token speaks for (the handlers' `TransportInfo::identity`).
    pub subject: String,
    /// The scopes it grants.
    pub scopes: Vec<String>,
}

impl TokenInfo {
    /// A token for `subject` granting `scopes`.
    #[must_use]
    pub fn new(subject: &str, scopes: &[&str]) -> Self {
        Self { subject: subject.to_owned(), scopes: scopes.iter().map(|s| (*s).to_owned()).collect() }
    }
}

/// An MCP server as an OAuth protected resource: its metadata, where it is published, and
/// the scopes every request needs.
#[derive(Debug, Clone, PartialEq)]
pub struct ProtectedResource {
    metadata: ProtectedResourceMetadata,
    metadata_url: String,
    required_scopes: Vec<String>,
}

impl ProtectedResource {
    /// The MCP server at `resource` (its canonical URL, the tokens' audience), whose tokens
    /// come from `authorization_servers` (their issuer URLs). The metadata is published at
    /// the well-known URL with the server's path inserted.
    ///
    /// # Errors
    ///
    /// [`UrlError`] if `resource` is not an `http(s)` URL.
    pub fn new(resource: &str, authorization_servers: &[&str]) -> Result<Self, UrlError> {
        let url = HttpUrl::parse(resource)?;
        let path = url.path().trim_end_matches('/');
        let metadata = ProtectedResourceMetadata {
            resource: url.canonical(),
            authorization_servers: authorization_servers.iter().map(|s| (*s).to_owned()).collect(),
            scopes_supported: None,
            bearer_methods_supported: Some(vec!["header".to_owned()]),
            resource_name: None,
            extra: JsonObject::new(),
        };
        Ok(Self {
            metadata,
            metadata_url: format!("{}/.well-known/oauth-protected-resource{path}", url.origin()),
            required_scopes: Vec::new(),
        })
    }

    /// Every request needs a token with all of `scopes` (builder style); they are also
    /// listed in the metadata's `scopes_supported`, unless that was set.
    #[must_use]
    pub fn require_scopes(mut self, scopes: &[&str]) -> Self {
        self.required_scopes = scopes.iter().map(|s| (*s).to_owned()).collect();
        if self.metadata.scopes_supported.is_none() {
            self.metadata.scopes_supported = Some(self.required_scopes.clone());
        }
        self
    }

    /// The metadata, to change what it says (`scopes_supported`, `resource_name`, ...).
    pub fn metadata_mut(&mut self) -> &mut ProtectedResourceMetadata {
        &mut self.metadata
    }

    /// The metadata's URL.
    #[must_use]
    pub fn metadata_url(&self) -> &str {
        &self.metadata_url
    }

    /// The path the metadata is served at.
    #[must_use]
    pub fn metadata_path(&self) -> &str {
        HttpUrl::parse(&self.metadata_url).map_or("", |url| {
            let start = self.metadata_url.len() - url.path().len();
            &self.metadata_url[start..]
        })
    }

    /// The metadata document (`application/json`).
    #[must_use]
    pub fn metadata_document(&self) -> Vec<u8> {
        serde_json::to_vec(&self.metadata).unwrap_or_default()
    }

    /// Checks a request's `Authorization` header: its bearer token goes to `verify`, which
    /// answers who it speaks for and with which scopes, or why it is no good.
    ///
    /// # Errors
    ///
    /// The refusal to answer with: `401` for a missing, malformed or rejected token, `403`
    /// `insufficient_scope` for one without every required scope; each with the
    /// `WWW-Authenticate` challenge naming the metadata (and the scope needed).
    pub fn check(
        &self,
        authorization: Option<&str>,
        verify: impl FnOnce(&str) -> Result<TokenInfo, String>,
    ) -> Result<TokenInfo, Refusal> {
        let Some(token) = authorization.and_then(bearer_token) else {
            return Err(self.refuse(401, None, "a bearer token is required"));
        };
        let info = verify(token).map_err(|why| self.refuse(401, Some("invalid_token"), &why))?;
        if self.required_scopes.iter().all(|needed| info.scopes.contains(needed)) {
            Ok(info)
        } else {
            Err(self.refuse(403, Some("insufficient_scope"), "the token lacks a required scope"))
        }
    }

    /// A refusal with `status`, the challenge (with `error` if any) and a JSON body.
    fn refuse(&self, status: u16, error: Option<&str>, description: &str) -> Refusal {
        let mut challenge = format!("Bearer resource_metadata=\"{}\"", quoted(&self.metadata_url));
        if !self.required_scopes.is_empty() {
            challenge.push_str(&format!(", scope=\"{}\"", quoted(&self.required_scopes.join(" "))));
        }
        if let Some(error) = error {
            challenge.push_str(&format!(", error=\"{error}\", error_description=\"{}\"", quoted(description)));
        }
        let body = serde_json::json!({"error": error.unwrap_or("invalid_token"), "error_description": description});
        Refusal { status, body: Some(body.to_string().into_bytes()), headers: vec![("WWW-Authenticate", challenge)] }
    }
}

/// The token of an `Authorization: Bearer <token>` header (the scheme in any case).
///
/// # Examples
///
/// ```
/// use talaria_core::auth::resource::bearer_token;
///
/// assert_eq!(bearer_token("bearer abc"), Some("abc"));
/// assert_eq!(bearer_token("Basic abc"), None);
/// assert_eq!(bearer_token("Bearer "), None);
/// ```
#[must_use]
pub fn bearer_token(header: &str) -> Option<&str> {
    let (scheme, token) = header.trim().split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty() && !token.contains(' ')).then_some(token)
}

/// `text` made safe inside a quoted-string: quotes and backslashes escaped, control
/// characters dropped (a header cannot carry them).
fn quoted(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars().filter(|c| !c.is_control()) {
        if c == '"' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::auth::challenge;

    fn header(refusal: &Refusal) -> &str {
        &refusal.headers.iter().find(|(n, _)| *n == "WWW-Authenticate").unwrap().1
    }

    #[test]
    fn challenges_send_the_client_to_the_metadata_and_read_back() {
        let resource = ProtectedResource::new("http://127.0.0.1:9/mcp/", &["http://127.0.0.1:8"])
            .unwrap()
            .require_scopes(&["a", "b"]);
        assert_eq!(resource.metadata_url(), "http://127.0.0.1:9/.well-known/oauth-protected-resource/mcp");
        assert_eq!(resource.metadata_path(), "/.well-known/oauth-protected-resource/mcp");
        let document: serde_json::Value = serde_json::from_slice(&resource.metadata_document()).unwrap();
        assert_eq!(document["resource"], "http://127.0.0.1:9/mcp");
        assert_eq!(document["scopes_supported"], serde_json::json!(["a", "b"]));

        let verify = |_: &str| Err::<TokenInfo, _>("expired \"yesterday\"\r\nX-Evil: 1".to_owned());
        let refusal = resource.check(Some("Bearer t"), verify).unwrap_err();
        // Our own challenge parser reads what we write, injection attempts included.
        let parsed = challenge::bearer(header(&refusal)).unwrap();
        assert_eq!(parsed.resource_metadata(), Some(resource.metadata_url()));
        assert_eq!(parsed.error(), Some("invalid_token"));
        assert_eq!(parsed.scope(), Some("a b"));
        assert_eq!(parsed.param("error_description"), Some("expired \"yesterday\"X-Evil: 1"));
        assert!(!header(&refusal).contains('\n'));

        for missing in [None, Some("Basic abc"), Some("Bearer"), Some("Bearer a b")] {
            let refusal = resource.check(missing, |_| unreachable!()).unwrap_err();
            assert_eq!(refusal.status, 401, "{missing:?}");
            assert_eq!(challenge::bearer(header(&refusal)).unwrap().error(), None);
        }
        let narrow = resource.check(Some("Bearer t"), |_| Ok(TokenInfo::new("s", &["a"]))).unwrap_err();
        assert_eq!(narrow.status, 403);
        assert_eq!(challenge::bearer(header(&narrow)).unwrap().error(), Some("insufficient_scope"));
        assert!(resource.check(Some("Bearer t"), |_| Ok(TokenInfo::new("s", &["b", "a", "c"]))).is_ok());
    }
}
