//! Why an authorization failed.

use crate::alloc_prelude::*;
use crate::auth::flow::{CallbackError, OAuthError};
use crate::auth::jwt::SignError;
use crate::auth::metadata::MetadataError;
use crate::auth::url::UrlError;

/// Why an authorization failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum AuthError {
    /// A URL is not an `http(s)` one.
    #[error(transparent)]
    Url(#[from] UrlError),
    /// Credentials would travel in clear to a host that is not this machine.
    #[error("refusing to send credentials over plain http to {0}")]
    Insecure(String),
    /// A metadata document does not speak for this server (see [`MetadataError`]).
    #[error(transparent)]
    Metadata(#[from] MetadataError),
    /// A document could not be read.
    #[error("malformed {what} from {url}: {detail}")]
    Malformed {
        /// Which document.
        what: &'static str,
        /// Where it came from.
        url: String,
        /// The parser's complaint.
        detail: String,
    },
    /// The resource metadata names no authorization server.
    #[error("the protected resource metadata names no authorization server")]
    NoAuthorizationServer,
    /// The client has no way to be known to the authorization server.
    #[error("no client registration: not pre-registered, and the server offers neither dynamic registration nor client metadata documents")]
    NoRegistration,
    /// Dynamic registration was refused.
    #[error("client registration at {url} failed with HTTP {status}{}", error.as_ref().map(|e| format!(": {e}")).unwrap_or_default())]
    Registration {
        /// The registration endpoint.
        url: String,
        /// Its status.
        status: u16,
        /// Its OAuth error, if it sent one.
        error: Option<OAuthError>,
    },
    /// The authorization code grant needs what is missing.
    #[error("the authorization code flow needs {0}")]
    Incomplete(&'static str),
    /// The redirect back was refused (state, issuer, error).
    #[error(transparent)]
    Callback(#[from] CallbackError),
    /// The redirect went somewhere other than the client's redirect URI.
    #[error("the authorization server redirected to {0}, not to the client's redirect URI")]
    RedirectMismatch(String),
    /// A token endpoint (the authorization server's, or the identity provider's) refused.
    #[error("the token request to {url} failed with HTTP {status}{}", error.as_ref().map(|e| format!(": {e}")).unwrap_or_default())]
    Token {
        /// The token endpoint.
        url: String,
        /// Its status.
        status: u16,
        /// Its OAuth error, if it sent one.
        error: Option<OAuthError>,
    },
    /// The device grant was asked for, and the authorization server offers no device
    /// authorization endpoint (RFC 8628).
    #[error(
        "the authorization server offers no device authorization endpoint (RFC 8628): sign in with a browser instead"
    )]
    NoDeviceAuthorization,
    /// The device authorization was refused, or answered with something unusable.
    #[error("the device authorization request to {url} failed with HTTP {status}{}", error.as_ref().map(|e| format!(": {e}")).unwrap_or_default())]
    DeviceAuthorization {
        /// The device authorization endpoint.
        url: String,
        /// Its status.
        status: u16,
        /// Its OAuth error, if it sent one.
        error: Option<OAuthError>,
    },
    /// The user code was not approved in time (the device code expired).
    #[error("the sign-in code was not approved in time")]
    DeviceCodeExpired,
    /// The token is not a bearer token.
    #[error("the token endpoint issued a {0:?} token, not a bearer token")]
    NotBearer(String),
    /// The client assertion could not be signed.
    #[error(transparent)]
    Sign(#[from] SignError),
    /// The authorization server takes only `private_key_jwt` and no signer was configured.
    #[error(
        "the authorization server takes only private_key_jwt client authentication and no signing key is configured"
    )]
    NoSigner,
    /// The request could not be made (connection refused, timeout, body too large).
    #[error("{url}: {detail}")]
    Transport {
        /// The URL.
        url: String,
        /// What went wrong.
        detail: String,
    },
    /// The state machine was fed something it was not waiting for.
    #[error("the authorization was not waiting for {0}")]
    Unexpected(&'static str),
}
