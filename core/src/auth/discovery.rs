//! Where a client looks for metadata, in the order the spec gives (2025-11-25 authorization,
//! "Authorization Server Discovery"), and the 2025-03-26 fallback endpoints.

use super::url::{HttpUrl, UrlError};
use crate::alloc_prelude::*;

/// The Protected Resource Metadata URLs to try for the MCP server at `server` (RFC 9728):
/// the challenge's `resource_metadata` first, if the 401 named one; then the well-known URL
/// with the server's path inserted (unless the server is at the root); then the root one.
///
/// # Errors
///
/// [`UrlError`] if `server` is not an `http(s)` URL.
///
/// # Examples
///
/// ```
/// use talaria_core::auth::discovery::resource_metadata_urls;
///
/// assert_eq!(
///     resource_metadata_urls("https://example.com/public/mcp", None).unwrap(),
///     [
///         "https://example.com/.well-known/oauth-protected-resource/public/mcp",
///         "https://example.com/.well-known/oauth-protected-resource",
///     ],
/// );
/// let hinted = resource_metadata_urls("https://example.com/mcp", Some("https://example.com/prm")).unwrap();
/// assert_eq!(hinted[0], "https://example.com/prm");
/// ```
pub fn resource_metadata_urls(server: &str, hint: Option<&str>) -> Result<Vec<String>, UrlError> {
    let server = HttpUrl::parse(server)?;
    let mut urls = Vec::new();
    if let Some(hint) = hint.and_then(|h| HttpUrl::parse(h).ok()) {
        urls.push(hint.to_string());
    }
    let path = server.path().trim_end_matches('/');
    if !path.is_empty() {
        urls.push(format!("{}/.well-known/oauth-protected-resource{path}", server.origin()));
    }
    urls.push(format!("{}/.well-known/oauth-protected-resource", server.origin()));
    urls.dedup();
    Ok(urls)
}

/// The Authorization Server Metadata URLs to try for `issuer`: OAuth (RFC 8414) and OIDC
/// discovery, with the issuer's path inserted after the well-known prefix, then OIDC
/// path appending.
///
/// # Errors
///
/// [`UrlError`] if `issuer` is not an `http(s)` URL.
///
/// # Examples
///
/// ```
/// use talaria_core::auth::discovery::authorization_server_metadata_urls;
///
/// assert_eq!(
///     authorization_server_metadata_urls("https://auth.example.com/tenant1").unwrap(),
///     [
///         "https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
///         "https://auth.example.com/.well-known/openid-configuration/tenant1",
///         "https://auth.example.com/tenant1/.well-known/openid-configuration",
///     ],
/// );
/// assert_eq!(
///     authorization_server_metadata_urls("https://auth.example.com").unwrap(),
///     [
///         "https://auth.example.com/.well-known/oauth-authorization-server",
///         "https://auth.example.com/.well-known/openid-configuration",
///     ],
/// );
/// ```
pub fn authorization_server_metadata_urls(issuer: &str) -> Result<Vec<String>, UrlError> {
    let issuer = HttpUrl::parse(issuer)?;
    let origin = issuer.origin();
    let path = issuer.path().trim_end_matches('/');
    Ok(if path.is_empty() {
        vec![
            format!("{origin}/.well-known/oauth-authorization-server"),
            format!("{origin}/.well-known/openid-configuration"),
        ]
    } else {
        vec![
            format!("{origin}/.well-known/oauth-authorization-server{path}"),
            format!("{origin}/.well-known/openid-configuration{path}"),
            format!("{origin}{path}/.well-known/openid-configuration"),
        ]
    })
}

/// The endpoints a 2025-03-26 client falls back to when the authorization server publishes no
/// metadata: `/authorize`, `/token` and `/register` at the server's origin (the path is dropped).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FallbackEndpoints {
    /// The authorization endpoint.
    pub authorization: String,
    /// The token endpoint.
    pub token: String,
    /// The registration endpoint.
    pub registration: String,
}

/// The 2025-03-26 fallback endpoints for the MCP server at `server`.
///
/// # Errors
///
/// [`UrlError`] if `server` is not an `http(s)` URL.
///
/// # Examples
///
/// ```
/// use talaria_core::auth::discovery::fallback_endpoints;
///
/// let e = fallback_endpoints("https://api.example.com/v1/mcp").unwrap();
/// assert_eq!(e.token, "https://api.example.com/token");
/// ```
pub fn fallback_endpoints(server: &str) -> Result<FallbackEndpoints, UrlError> {
    let origin = HttpUrl::parse(server)?.origin();
    Ok(FallbackEndpoints {
        authorization: format!("{origin}/authorize"),
        token: format!("{origin}/token"),
        registration: format!("{origin}/register"),
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn resource_metadata_at_the_root_is_tried_once() {
        assert_eq!(
            resource_metadata_urls("https://example.com/", None).unwrap(),
            ["https://example.com/.well-known/oauth-protected-resource"]
        );
        // A hint that is not a URL is ignored, not followed.
        assert_eq!(resource_metadata_urls("https://example.com", Some("javascript:x")).unwrap().len(), 1);
        assert!(resource_metadata_urls("example.com/mcp", None).is_err());
    }

    #[test]
    fn issuer_paths_with_a_trailing_slash_are_the_same_issuer() {
        assert_eq!(
            authorization_server_metadata_urls("https://a.example/t/").unwrap(),
            authorization_server_metadata_urls("https://a.example/t").unwrap()
        );
    }
}
