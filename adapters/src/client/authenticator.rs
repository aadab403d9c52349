//! Credentials for a client's HTTP requests: the `Authorization` header each request carries,
//! and what to do when the server refuses one (`401`, or `403` with `insufficient_scope`).

use std::fmt;

/// Why an [`Authenticator`] could not supply credentials.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("authorization failed: {0}")]
pub struct AuthFailure(pub String);

/// Supplies the `Authorization` header of a client's HTTP requests and renews it when the
/// server refuses it. [`OAuthClient`](crate::auth::OAuthClient) is the OAuth 2.1 one; a fixed
/// token needs none (pass the header to `Client::http`).
///
/// # Examples
///
/// ```
/// use talaria::client::{AuthFailure, Authenticator};
///
/// /// A token read from the environment, never renewed.
/// struct FromEnv;
/// impl Authenticator for FromEnv {
///     fn authorization(&self, _url: &str) -> Option<String> {
///         std::env::var("MCP_TOKEN").ok().map(|t| format!("Bearer {t}"))
///     }
///     fn challenged(&self, _url: &str, _sent: Option<&str>, _status: u16, _header: Option<&str>) -> Result<bool, AuthFailure> {
///         Ok(false)
///     }
/// }
/// ```
pub trait Authenticator: Send + Sync {
    /// The `Authorization` header for a request to `url`, if there is one yet.
    fn authorization(&self, url: &str) -> Option<String>;

    /// The request to `url` that carried `sent` was refused with `status` (401 or 403) and
    /// the `WWW-Authenticate` header `www_authenticate`. Returns `Ok(true)` when new
    /// credentials are ready and the request should be sent again, `Ok(false)` when trying
    /// again cannot help.
    ///
    /// # Errors
    ///
    /// [`AuthFailure`] when obtaining credentials failed.
    fn challenged(
        &self,
        url: &str,
        sent: Option<&str>,
        status: u16,
        www_authenticate: Option<&str>,
    ) -> Result<bool, AuthFailure>;
}

impl fmt::Debug for dyn Authenticator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Authenticator")
    }
}
