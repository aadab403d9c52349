//! How a client makes itself known to an authorization server: the client metadata it
//! registers with Dynamic Client Registration (RFC 7591) or publishes as a Client ID Metadata
//! Document (the URL being its `client_id`), and what the server answers.

use crate::alloc_prelude::*;
use serde::{Deserialize, Serialize};

use super::url::HttpUrl;
use crate::schema::JsonObject;

/// The client's metadata (RFC 7591 §2): the body of a registration request, and the document
/// a client publishes at its `client_id` URL.
///
/// # Examples
///
/// ```
/// use talaria_core::auth::registration::ClientMetadata;
///
/// let metadata = ClientMetadata::new("talaria", Some("http://127.0.0.1:8765/callback"));
/// assert_eq!(metadata.application_type.as_deref(), Some("native"));
/// assert_eq!(metadata.grant_types, ["authorization_code", "refresh_token"]);
/// let body = serde_json::to_value(&metadata).unwrap();
/// assert_eq!(body["redirect_uris"][0], "http://127.0.0.1:8765/callback");
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClientMetadata {
    /// The client id, in a Client ID Metadata Document (its own URL); absent in a
    /// registration request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_id: Option<String>,
    /// The name shown to the user.
    pub client_name: String,
    /// Where the authorization server may send the user back.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub redirect_uris: Vec<String>,
    /// The grants the client uses.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub grant_types: Vec<String>,
    /// The response types it uses (`code`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub response_types: Vec<String>,
    /// How it authenticates at the token endpoint (`none` for a public client).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_endpoint_auth_method: Option<String>,
    /// `native` (loopback or custom-scheme redirects) or `web` (OIDC Dynamic Registration).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub application_type: Option<String>,
    /// The scope it asks to be able to request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
    /// Members not modelled here (`client_uri`, `logo_uri`, `software_id`, ...).
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl ClientMetadata {
    /// Metadata for a client called `name`: the authorization code grant (with refresh) when
    /// it has a `redirect_uri`, the client credentials grant otherwise; `application_type`
    /// `native` for a loopback or custom-scheme redirect, `web` for an `https` one.
    #[must_use]
    pub fn new(name: &str, redirect_uri: Option<&str>) -> Self {
        let (grant_types, response_types) = match redirect_uri {
            Some(_) => (vec!["authorization_code".to_owned(), "refresh_token".to_owned()], vec!["code".to_owned()]),
            None => (vec!["client_credentials".to_owned()], Vec::new()),
        };
        Self {
            client_id: None,
            client_name: name.to_owned(),
            redirect_uris: redirect_uri.map(str::to_owned).into_iter().collect(),
            grant_types,
            response_types,
            token_endpoint_auth_method: None,
            application_type: redirect_uri.map(|uri| application_type(uri).to_owned()),
            scope: None,
            extra: JsonObject::new(),
        }
    }
}

/// `native` for a loopback `http` or a custom-scheme redirect URI, `web` otherwise.
fn application_type(redirect_uri: &str) -> &'static str {
    match HttpUrl::parse(redirect_uri) {
        Ok(url) if url.scheme() == "https" && !url.is_loopback() => "web",
        _ => "native",
    }
}

/// What the authorization server registered (RFC 7591 §3.2.1).
///
/// # Examples
///
/// ```
/// use talaria_core::auth::registration::ClientInformation;
///
/// let info: ClientInformation = serde_json::from_str(r#"{"client_id":"c1","client_secret":"s","token_endpoint_auth_method":"client_secret_basic"}"#).unwrap();
/// assert_eq!(info.client_id, "c1");
/// assert_eq!(info.client_secret.as_deref(), Some("s"));
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClientInformation {
    /// The client id.
    pub client_id: String,
    /// The secret, for a confidential client.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<String>,
    /// When the secret expires (seconds since the epoch; 0 never).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret_expires_at: Option<u64>,
    /// How the client must authenticate at the token endpoint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_endpoint_auth_method: Option<String>,
    /// Members not modelled here (the registered metadata echoed back, ...).
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl ClientInformation {
    /// A client known by id (and secret) alone: pre-registered, or a metadata document URL.
    #[must_use]
    pub fn new(client_id: &str, client_secret: Option<&str>) -> Self {
        Self {
            client_id: client_id.to_owned(),
            client_secret: client_secret.map(str::to_owned),
            client_secret_expires_at: None,
            token_endpoint_auth_method: None,
            extra: JsonObject::new(),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn application_type_follows_the_redirect() {
        assert_eq!(application_type("http://127.0.0.1:1/cb"), "native");
        assert_eq!(application_type("http://localhost/cb"), "native");
        assert_eq!(application_type("com.example.app:/cb"), "native");
        assert_eq!(application_type("https://app.example.com/cb"), "web");
        let machine = ClientMetadata::new("m", None);
        assert_eq!(machine.grant_types, ["client_credentials"]);
        assert!(machine.application_type.is_none());
        // Unknown members round-trip.
        let info: ClientInformation = serde_json::from_str(r#"{"client_id":"c","x":1}"#).unwrap();
        assert_eq!(serde_json::to_value(&info).unwrap()["x"], 1);
    }
}
