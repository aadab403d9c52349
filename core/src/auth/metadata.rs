//! The metadata documents of MCP authorization: the Protected Resource Metadata an MCP server
//! publishes (RFC 9728), and the Authorization Server Metadata (RFC 8414, or OIDC
//! discovery). Members this SDK does not know are kept in `extra` and written back.

use crate::alloc_prelude::*;
use serde::{Deserialize, Serialize};

use super::url::HttpUrl;
use crate::schema::JsonObject;

/// Why a metadata document was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum MetadataError {
    /// The document's `resource` is not the server it was fetched for (a server must not
    /// obtain tokens meant for another).
    #[error("the protected resource metadata is for {resource}, not for {server}")]
    ResourceMismatch {
        /// What the document says.
        resource: String,
        /// The server the client connects to.
        server: String,
    },
    /// The document's `issuer` is not the issuer it was fetched for (RFC 8414 §3.3).
    #[error("the authorization server metadata is for issuer {issuer}, not {expected}")]
    IssuerMismatch {
        /// What the document says.
        issuer: String,
        /// The issuer it was fetched for.
        expected: String,
    },
    /// A URL in the document is not an `http(s)` URL.
    #[error("bad URL in metadata: {0}")]
    Url(#[from] super::url::UrlError),
    /// The authorization server does not do PKCE with S256, which MCP clients must use.
    #[error("the authorization server does not advertise PKCE with S256")]
    NoPkce,
}

/// An MCP server's Protected Resource Metadata (RFC 9728 §2).
///
/// # Examples
///
/// ```
/// use talaria_core::auth::metadata::ProtectedResourceMetadata;
///
/// let prm: ProtectedResourceMetadata = serde_json::from_str(r#"{
///     "resource": "https://mcp.example.com/mcp",
///     "authorization_servers": ["https://auth.example.com"],
///     "scopes_supported": ["files:read"],
///     "x-vendor": 1
/// }"#).unwrap();
/// assert!(prm.check_resource("https://mcp.example.com/mcp").is_ok());
/// assert!(prm.check_resource("https://other.example.com/mcp").is_err());
/// assert!(serde_json::to_string(&prm).unwrap().contains("x-vendor"));
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProtectedResourceMetadata {
    /// The protected resource's identifier.
    pub resource: String,
    /// The authorization servers that issue tokens for it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub authorization_servers: Vec<String>,
    /// The scopes it understands.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scopes_supported: Option<Vec<String>>,
    /// How a bearer token may be sent (`header`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bearer_methods_supported: Option<Vec<String>>,
    /// A human-readable name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_name: Option<String>,
    /// Members not modelled here.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl ProtectedResourceMetadata {
    /// Checks that this document speaks for the MCP server at `server`: its `resource` is the
    /// server's canonical URI or a parent of it, on the same origin.
    ///
    /// # Errors
    ///
    /// [`MetadataError::ResourceMismatch`], or [`MetadataError::Url`] for a bad URL.
    pub fn check_resource(&self, server: &str) -> Result<(), MetadataError> {
        let resource = HttpUrl::parse(&self.resource)?;
        let server_url = HttpUrl::parse(server)?;
        if resource.covers(&server_url) {
            Ok(())
        } else {
            Err(MetadataError::ResourceMismatch { resource: self.resource.clone(), server: server_url.canonical() })
        }
    }
}

/// An authorization server's metadata (RFC 8414 §2; OIDC discovery documents parse
/// too).
///
/// # Examples
///
/// ```
/// use talaria_core::auth::metadata::AuthorizationServerMetadata;
///
/// let asm: AuthorizationServerMetadata = serde_json::from_str(r#"{
///     "issuer": "https://auth.example.com",
///     "authorization_endpoint": "https://auth.example.com/authorize",
///     "token_endpoint": "https://auth.example.com/token",
///     "code_challenge_methods_supported": ["S256"]
/// }"#).unwrap();
/// assert!(asm.check("https://auth.example.com").is_ok());
/// assert!(asm.check("https://evil.example.com").is_err());
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AuthorizationServerMetadata {
    /// The issuer identifier.
    pub issuer: String,
    /// Where the user authorizes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authorization_endpoint: Option<String>,
    /// Where codes and refresh tokens are exchanged.
    pub token_endpoint: String,
    /// Dynamic Client Registration (RFC 7591), if offered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registration_endpoint: Option<String>,
    /// Scopes it knows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scopes_supported: Option<Vec<String>>,
    /// Response types (`code`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_types_supported: Option<Vec<String>>,
    /// Grant types (`authorization_code`, `refresh_token`, `client_credentials`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grant_types_supported: Option<Vec<String>>,
    /// PKCE methods (`S256`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code_challenge_methods_supported: Option<Vec<String>>,
    /// Token endpoint client authentication methods.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_endpoint_auth_methods_supported: Option<Vec<String>>,
    /// Whether it accepts Client ID Metadata Documents as client ids.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_id_metadata_document_supported: Option<bool>,
    /// Whether it sends `iss` with authorization responses (RFC 9207).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authorization_response_iss_parameter_supported: Option<bool>,
    /// The device authorization endpoint (RFC 8628), if it offers the device grant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_authorization_endpoint: Option<String>,
    /// Members not modelled here.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl AuthorizationServerMetadata {
    /// Checks the document against the issuer it was fetched for, and that it offers PKCE with
    /// S256 (MCP clients must refuse servers that do not advertise it).
    ///
    /// # Errors
    ///
    /// [`MetadataError::IssuerMismatch`], [`MetadataError::NoPkce`], or
    /// [`MetadataError::Url`] for a bad URL.
    pub fn check(&self, expected_issuer: &str) -> Result<(), MetadataError> {
        let issuer = HttpUrl::parse(&self.issuer)?;
        let expected = HttpUrl::parse(expected_issuer)?;
        if issuer.canonical() != expected.canonical() {
            return Err(MetadataError::IssuerMismatch { issuer: self.issuer.clone(), expected: expected.canonical() });
        }
        HttpUrl::parse(&self.token_endpoint)?;
        if let Some(endpoint) = &self.authorization_endpoint {
            HttpUrl::parse(endpoint)?;
        }
        if !self.code_challenge_methods_supported.iter().flatten().any(|m| m == "S256") {
            return Err(MetadataError::NoPkce);
        }
        Ok(())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn prm(resource: &str) -> ProtectedResourceMetadata {
        serde_json::from_value(serde_json::json!({"resource": resource})).unwrap()
    }

    #[test]
    fn hostile_metadata_is_refused() {
        // Another origin, a sibling path, a non-http scheme: refused.
        assert!(prm("https://evil.example.com/mcp").check_resource("https://mcp.example.com/mcp").is_err());
        assert!(prm("https://mcp.example.com/other").check_resource("https://mcp.example.com/mcp").is_err());
        assert!(prm("javascript:alert(1)").check_resource("https://mcp.example.com/mcp").is_err());
        // The origin itself, or the exact server, with case and trailing-slash differences: fine.
        assert!(prm("https://MCP.example.com").check_resource("https://mcp.example.com/mcp").is_ok());
        assert!(prm("https://mcp.example.com/mcp/").check_resource("https://mcp.example.com/mcp").is_ok());

        let without_pkce: AuthorizationServerMetadata = serde_json::from_value(serde_json::json!({
            "issuer": "https://a.example", "token_endpoint": "https://a.example/token"
        }))
        .unwrap();
        assert_eq!(without_pkce.check("https://a.example"), Err(MetadataError::NoPkce));
        // Malformed documents are errors, not panics.
        assert!(serde_json::from_str::<AuthorizationServerMetadata>(r#"{"issuer": 7}"#).is_err());
        assert!(serde_json::from_str::<ProtectedResourceMetadata>("[]").is_err());
    }
}
