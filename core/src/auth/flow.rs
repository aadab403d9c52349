//! The authorization code flow with PKCE, as requests to make and responses to check: the
//! authorization URL (with `resource`, RFC 8707, and `state`), the redirect's validation
//! (`state`, and `iss` per RFC 9207), and the token endpoint's requests and answers.

use crate::alloc_prelude::*;
use serde::{Deserialize, Serialize};

use super::encoding::{base64, form, form_encode, parse_form};
use super::jwt::JWT_BEARER_ASSERTION;
use super::pkce::Pkce;
use crate::schema::JsonObject;

/// The JWT bearer grant type (RFC 7523).
pub const JWT_BEARER_GRANT: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";

/// The device code grant type (RFC 8628 §3.4).
pub const DEVICE_CODE_GRANT: &str = "urn:ietf:params:oauth:grant-type:device_code";
/// The token exchange grant type (RFC 8693).
pub const TOKEN_EXCHANGE_GRANT: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
/// The token type of an OIDC ID token (RFC 8693 §3).
pub const ID_TOKEN_TYPE: &str = "urn:ietf:params:oauth:token-type:id_token";
/// The token type of an identity assertion authorization grant.
pub const ID_JAG_TOKEN_TYPE: &str = "urn:ietf:params:oauth:token-type:id-jag";

/// What the authorization request carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthorizationRequest {
    /// The authorization server's `authorization_endpoint`.
    pub endpoint: String,
    /// The client id.
    pub client_id: String,
    /// Where the authorization server sends the user back.
    pub redirect_uri: String,
    /// The scope to ask for, if any (see [`scope::select`](super::scope::select)).
    pub scope: Option<String>,
    /// The opaque `state`, checked on the way back.
    pub state: String,
    /// The MCP server's canonical URI (RFC 8707 `resource`).
    pub resource: String,
}

impl AuthorizationRequest {
    /// The URL to open in the user's browser, with `pkce`'s challenge.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::auth::flow::AuthorizationRequest;
    /// use talaria_core::auth::pkce::Pkce;
    ///
    /// let request = AuthorizationRequest {
    ///     endpoint: "https://auth.example.com/authorize".into(),
    ///     client_id: "talaria".into(),
    ///     redirect_uri: "http://127.0.0.1:8765/callback".into(),
    ///     scope: Some("files:read".into()),
    ///     state: "s1".into(),
    ///     resource: "https://mcp.example.com/mcp".into(),
    /// };
    /// let url = request.url(&Pkce::from_verifier("v"));
    /// assert!(url.starts_with("https://auth.example.com/authorize?response_type=code&client_id=talaria&"));
    /// assert!(url.contains("&code_challenge_method=S256&"));
    /// assert!(url.contains("&resource=https%3A%2F%2Fmcp.example.com%2Fmcp"));
    /// ```
    #[must_use]
    pub fn url(&self, pkce: &Pkce) -> String {
        let mut pairs = vec![
            ("response_type", "code"),
            ("client_id", self.client_id.as_str()),
            ("redirect_uri", self.redirect_uri.as_str()),
            ("state", self.state.as_str()),
            ("code_challenge", pkce.challenge.as_str()),
            ("code_challenge_method", Pkce::METHOD),
            ("resource", self.resource.as_str()),
        ];
        if let Some(scope) = &self.scope {
            pairs.push(("scope", scope));
        }
        let separator = if self.endpoint.contains('?') { '&' } else { '?' };
        format!("{}{separator}{}", self.endpoint, form(&pairs))
    }
}

/// Why the redirect back from the authorization server was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CallbackError {
    /// The authorization server refused (`error`, `error_description`).
    #[error("the authorization server refused: {error}{}", description.as_deref().map(|d| format!(" ({d})")).unwrap_or_default())]
    Refused {
        /// The OAuth error code.
        error: String,
        /// Its description, if given.
        description: Option<String>,
    },
    /// `state` is missing or not the one sent: possibly a forged redirect.
    #[error("the state in the redirect does not match the request's")]
    StateMismatch,
    /// `iss` is not the expected issuer (RFC 9207): a mix-up attack.
    #[error("the redirect came from issuer {got:?}, not {expected}")]
    IssuerMismatch {
        /// What the redirect said.
        got: Option<String>,
        /// The issuer the request went to.
        expected: String,
    },
    /// No `code` in a redirect that did not say it failed.
    #[error("the redirect carries no authorization code")]
    NoCode,
}

/// Reads the redirect's query (`code`, `state`, `iss` or `error`) and returns the code, after
/// checking `state` and, when the authorization server sends it (or says it will,
/// `iss_required`), `iss`.
///
/// # Errors
///
/// [`CallbackError`].
///
/// # Examples
///
/// ```
/// use talaria_core::auth::flow::{callback_code, CallbackError};
///
/// let code = callback_code("code=abc&state=s1&iss=https%3A%2F%2Fauth.example.com", "s1", "https://auth.example.com", false);
/// assert_eq!(code.unwrap(), "abc");
/// let forged = callback_code("code=abc&state=other", "s1", "https://auth.example.com", false);
/// assert_eq!(forged, Err(CallbackError::StateMismatch));
/// ```
pub fn callback_code(query: &str, state: &str, issuer: &str, iss_required: bool) -> Result<String, CallbackError> {
    let pairs = parse_form(query.trim_start_matches('?'));
    let get = |name: &str| pairs.iter().find(|(n, _)| n == name).map(|(_, v)| v.clone());
    if get("state").as_deref() != Some(state) {
        return Err(CallbackError::StateMismatch);
    }
    let iss = get("iss");
    if iss.is_some() || iss_required {
        let same = iss.as_deref().is_some_and(|got| got.trim_end_matches('/') == issuer.trim_end_matches('/'));
        if !same {
            return Err(CallbackError::IssuerMismatch { got: iss, expected: issuer.to_owned() });
        }
    }
    if let Some(error) = get("error") {
        return Err(CallbackError::Refused { error, description: get("error_description") });
    }
    get("code").filter(|c| !c.is_empty()).ok_or(CallbackError::NoCode)
}

/// How the client authenticates at the token endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ClientAuth {
    /// A public client: `client_id` in the body (`none`).
    None,
    /// `client_secret_basic`: HTTP Basic with the form-encoded id and secret.
    SecretBasic(String),
    /// `client_secret_post`: the secret in the body.
    SecretPost(String),
    /// `private_key_jwt`: a signed client assertion in the body (see
    /// [`jwt::client_assertion`](super::jwt::client_assertion)).
    PrivateKeyJwt(String),
}

impl ClientAuth {
    /// The `token_endpoint_auth_method` this is.
    #[must_use]
    pub fn method(&self) -> &'static str {
        match self {
            Self::None => "none",
            Self::SecretBasic(_) => "client_secret_basic",
            Self::SecretPost(_) => "client_secret_post",
            Self::PrivateKeyJwt(_) => "private_key_jwt",
        }
    }
}

/// A token endpoint request: the body (form-encoded) and the `Authorization` header, if the
/// client authenticates with one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenRequest {
    /// The `application/x-www-form-urlencoded` body.
    pub body: String,
    /// The `Authorization` header value (`Basic ...`), if any.
    pub authorization: Option<String>,
}

impl TokenRequest {
    /// Exchanges an authorization `code` (with the PKCE verifier and the `resource`).
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::auth::flow::{ClientAuth, TokenRequest};
    ///
    /// let r = TokenRequest::authorization_code("c", "v", "http://127.0.0.1/cb", "https://mcp/x", "id", &ClientAuth::SecretBasic("s".into()));
    /// assert!(r.body.starts_with("grant_type=authorization_code&code=c&code_verifier=v&"));
    /// assert_eq!(r.authorization.as_deref(), Some("Basic aWQ6cw=="));
    /// ```
    #[must_use]
    pub fn authorization_code(
        code: &str,
        verifier: &str,
        redirect_uri: &str,
        resource: &str,
        client_id: &str,
        auth: &ClientAuth,
    ) -> Self {
        let pairs = [
            ("grant_type", "authorization_code"),
            ("code", code),
            ("code_verifier", verifier),
            ("redirect_uri", redirect_uri),
            ("resource", resource),
        ];
        Self::with_client(&pairs, client_id, auth)
    }

    /// Refreshes with a `refresh_token` (for the same `resource`).
    #[must_use]
    pub fn refresh(refresh_token: &str, resource: &str, client_id: &str, auth: &ClientAuth) -> Self {
        let pairs = [("grant_type", "refresh_token"), ("refresh_token", refresh_token), ("resource", resource)];
        Self::with_client(&pairs, client_id, auth)
    }

    /// The client credentials grant (machine-to-machine, the official extension).
    #[must_use]
    pub fn client_credentials(scope: Option<&str>, resource: &str, client_id: &str, auth: &ClientAuth) -> Self {
        let mut pairs = vec![("grant_type", "client_credentials"), ("resource", resource)];
        if let Some(scope) = scope {
            pairs.push(("scope", scope));
        }
        Self::with_client(&pairs, client_id, auth)
    }

    /// The device authorization request (RFC 8628 §3.1): asks for a device code and a user
    /// code, for `resource` and `scope`.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::auth::flow::{ClientAuth, TokenRequest};
    ///
    /// let r = TokenRequest::device_authorization(Some("mcp:read"), "https://mcp.example.com/mcp", "c1", &ClientAuth::None);
    /// assert_eq!(r.body, "resource=https%3A%2F%2Fmcp.example.com%2Fmcp&scope=mcp%3Aread&client_id=c1");
    /// ```
    #[must_use]
    pub fn device_authorization(scope: Option<&str>, resource: &str, client_id: &str, auth: &ClientAuth) -> Self {
        let mut pairs = vec![("resource", resource)];
        if let Some(scope) = scope {
            pairs.push(("scope", scope));
        }
        Self::with_client(&pairs, client_id, auth)
    }

    /// The device code grant (RFC 8628 §3.4): polls the token endpoint with `device_code`.
    #[must_use]
    pub fn device_code(device_code: &str, resource: &str, client_id: &str, auth: &ClientAuth) -> Self {
        let pairs = [("grant_type", DEVICE_CODE_GRANT), ("device_code", device_code), ("resource", resource)];
        Self::with_client(&pairs, client_id, auth)
    }

    /// The JWT bearer grant (RFC 7523 §2.1): an `assertion` (such as an identity assertion
    /// authorization grant, `oauth-id-jag+jwt`) exchanged for an access token.
    #[must_use]
    pub fn jwt_bearer(
        assertion: &str,
        scope: Option<&str>,
        resource: &str,
        client_id: &str,
        auth: &ClientAuth,
    ) -> Self {
        let mut pairs = vec![("grant_type", JWT_BEARER_GRANT), ("assertion", assertion), ("resource", resource)];
        if let Some(scope) = scope {
            pairs.push(("scope", scope));
        }
        Self::with_client(&pairs, client_id, auth)
    }

    /// Token exchange (RFC 8693) of an OIDC ID token for an identity assertion authorization
    /// grant (ID-JAG) meant for the authorization server `audience` and the MCP server
    /// `resource` (Enterprise-Managed Authorization, the `ext-auth` extension).
    #[must_use]
    pub fn id_jag_exchange(
        id_token: &str,
        audience: &str,
        resource: &str,
        scope: Option<&str>,
        client_id: &str,
        auth: &ClientAuth,
    ) -> Self {
        let mut pairs = vec![
            ("grant_type", TOKEN_EXCHANGE_GRANT),
            ("requested_token_type", ID_JAG_TOKEN_TYPE),
            ("subject_token", id_token),
            ("subject_token_type", ID_TOKEN_TYPE),
            ("audience", audience),
            ("resource", resource),
        ];
        if let Some(scope) = scope {
            pairs.push(("scope", scope));
        }
        Self::with_client(&pairs, client_id, auth)
    }

    fn with_client(pairs: &[(&str, &str)], client_id: &str, auth: &ClientAuth) -> Self {
        let mut pairs = pairs.to_vec();
        let authorization = match auth {
            ClientAuth::SecretBasic(secret) => {
                // RFC 6749 §2.3.1: each part form-encoded before Basic encoding.
                let credentials = format!("{}:{}", form_encode(client_id), form_encode(secret));
                Some(format!("Basic {}", base64(credentials.as_bytes())))
            }
            ClientAuth::SecretPost(secret) => {
                pairs.push(("client_id", client_id));
                pairs.push(("client_secret", secret));
                None
            }
            ClientAuth::PrivateKeyJwt(assertion) => {
                pairs.push(("client_id", client_id));
                pairs.push(("client_assertion_type", JWT_BEARER_ASSERTION));
                pairs.push(("client_assertion", assertion));
                None
            }
            ClientAuth::None => {
                pairs.push(("client_id", client_id));
                None
            }
        };
        Self { body: form(&pairs), authorization }
    }
}

/// A token endpoint's success answer (RFC 6749 §5.1).
///
/// # Examples
///
/// ```
/// use talaria_core::auth::flow::TokenResponse;
///
/// let t: TokenResponse = serde_json::from_str(r#"{"access_token":"at","token_type":"Bearer","expires_in":3600,"refresh_token":"rt"}"#).unwrap();
/// assert!(t.is_bearer());
/// assert_eq!(t.expires_in, Some(3600));
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TokenResponse {
    /// The access token.
    pub access_token: String,
    /// Its type (`Bearer`, any case).
    pub token_type: String,
    /// Seconds until it expires.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_in: Option<u64>,
    /// A refresh token, if issued.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_token: Option<String>,
    /// The scope granted, if it differs from the one asked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
    /// Members not modelled here.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl TokenResponse {
    /// Whether the token is a bearer token (the only kind MCP uses).
    #[must_use]
    pub fn is_bearer(&self) -> bool {
        self.token_type.eq_ignore_ascii_case("bearer")
    }
}

/// A token endpoint's error answer (RFC 6749 §5.2).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[error("{error}{}", error_description.as_deref().map(|d| format!(": {d}")).unwrap_or_default())]
pub struct OAuthError {
    /// The error code (`invalid_grant`, ...).
    pub error: String,
    /// A description for the developer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_description: Option<String>,
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn the_table_of_redirects() {
        let issuer = "https://auth.example.com";
        let cases: Vec<(&str, bool, Result<String, CallbackError>)> = vec![
            ("code=c&state=s", false, Ok("c".into())),
            ("?code=c&state=s", false, Ok("c".into())),
            ("code=c&state=s", true, Err(CallbackError::IssuerMismatch { got: None, expected: issuer.into() })),
            (
                "code=c&state=s&iss=https%3A%2F%2Fevil.example.com",
                false,
                Err(CallbackError::IssuerMismatch {
                    got: Some("https://evil.example.com".into()),
                    expected: issuer.into(),
                }),
            ),
            ("code=c", false, Err(CallbackError::StateMismatch)),
            ("state=s", false, Err(CallbackError::NoCode)),
            (
                "error=access_denied&error_description=no+way&state=s",
                false,
                Err(CallbackError::Refused { error: "access_denied".into(), description: Some("no way".into()) }),
            ),
            // A forged error redirect (wrong state) is a state mismatch, not a refusal.
            ("error=access_denied&state=x", false, Err(CallbackError::StateMismatch)),
        ];
        for (query, iss_required, expected) in cases {
            assert_eq!(callback_code(query, "s", issuer, iss_required), expected, "{query}");
        }
    }

    #[test]
    fn token_requests_authenticate_the_client_as_configured() {
        let public = TokenRequest::refresh("rt", "https://mcp/x", "id", &ClientAuth::None);
        assert_eq!(
            public.body,
            "grant_type=refresh_token&refresh_token=rt&resource=https%3A%2F%2Fmcp%2Fx&client_id=id"
        );
        assert!(public.authorization.is_none());
        let post = TokenRequest::client_credentials(Some("a b"), "r", "id", &ClientAuth::SecretPost("p&q".into()));
        assert!(post.body.ends_with("&scope=a+b&client_id=id&client_secret=p%26q"), "{}", post.body);
        // Basic credentials are form-encoded first: a colon in the id cannot split it.
        let basic = TokenRequest::refresh("rt", "r", "a:b", &ClientAuth::SecretBasic("s".into()));
        assert_eq!(basic.authorization.as_deref(), Some(format!("Basic {}", base64(b"a%3Ab:s")).as_str()));
        let error: OAuthError = serde_json::from_str(r#"{"error":"invalid_grant"}"#).unwrap();
        assert_eq!(error.to_string(), "invalid_grant");
    }
}
