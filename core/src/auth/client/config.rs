//! What a client is and how it authorizes: its metadata, its registration, its grant.

use crate::alloc_prelude::*;
use alloc::sync::Arc;

use crate::auth::jwt::JwtSigner;
use crate::auth::registration::{ClientInformation, ClientMetadata};

/// The scope that asks for a refresh token (OIDC, SEP-2207).
pub const OFFLINE_ACCESS: &str = "offline_access";

/// How the client gets its token.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Grant {
    /// Authorization code with PKCE: the user signs in at the authorization server, which
    /// sends them back to the client's redirect URI (its metadata's first).
    AuthorizationCode,
    /// Client credentials (machine to machine, the `ext-auth` extension): no user.
    ClientCredentials,
    /// Enterprise-managed authorization (`ext-auth`): an ID token from the enterprise identity provider is
    /// exchanged there for an identity assertion grant, which the authorization server takes
    /// as a JWT bearer grant.
    IdentityAssertion(IdentityAssertion),
    /// The device authorization grant (RFC 8628), for machines without a browser: the user
    /// signs in on another device, at a URL with a short code the client shows.
    DeviceCode,
}

/// Where and how a client exchanges its ID token for an identity assertion grant.
#[derive(Debug, Clone)]
pub struct IdentityAssertion {
    /// The identity provider's token endpoint.
    pub token_endpoint: String,
    /// The user's ID token from the identity provider.
    pub id_token: String,
    /// The client as the identity provider knows it.
    pub client: ClientInformation,
}

/// How a client authorizes, for every server it meets.
///
/// # Examples
///
/// ```
/// use talaria_core::auth::client::ClientConfig;
/// use talaria_core::auth::registration::ClientInformation;
///
/// let interactive = ClientConfig::authorization_code("talaria", "http://127.0.0.1:8765/cb");
/// let machine = ClientConfig::client_credentials("talaria", ClientInformation::new("id", Some("secret")));
/// assert!(machine.client.is_some() && interactive.client.is_none());
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ClientConfig {
    /// What the client registers (Dynamic Client Registration) or publishes (its metadata
    /// document); its first redirect URI is the one the authorization code flow uses.
    pub metadata: ClientMetadata,
    /// Pre-registered credentials, used as they are when given.
    pub client: Option<ClientInformation>,
    /// The URL of the client's metadata document, used as its `client_id` where the
    /// authorization server supports Client ID Metadata Documents.
    pub metadata_document: Option<String>,
    /// The grant.
    pub grant: Grant,
    /// Signs `private_key_jwt` client assertions, where the server takes them.
    pub signer: Option<Arc<dyn JwtSigner>>,
    /// Asks for `offline_access` (a refresh token) where the authorization server lists it.
    pub offline_access: bool,
}

impl ClientConfig {
    /// An interactive client named `name` whose user comes back at `redirect_uri`; it
    /// registers dynamically and asks for a refresh token where it can.
    #[must_use]
    pub fn authorization_code(name: &str, redirect_uri: &str) -> Self {
        Self {
            metadata: ClientMetadata::new(name, Some(redirect_uri)),
            client: None,
            metadata_document: None,
            grant: Grant::AuthorizationCode,
            signer: None,
            offline_access: true,
        }
    }

    /// A machine client with the client credentials grant and its pre-registered `client`.
    #[must_use]
    pub fn client_credentials(name: &str, client: ClientInformation) -> Self {
        Self {
            metadata: ClientMetadata::new(name, None),
            client: Some(client),
            metadata_document: None,
            grant: Grant::ClientCredentials,
            signer: None,
            offline_access: false,
        }
    }

    /// An interactive client named `name` that signs its user in on another device (RFC
    /// 8628): it shows a URL and a short code, and polls until the user has approved. It
    /// registers dynamically (as a public client) and asks for a refresh token where it can.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::auth::client::{ClientConfig, Grant};
    /// use talaria_core::auth::flow::DEVICE_CODE_GRANT;
    ///
    /// let headless = ClientConfig::device_code("talaria");
    /// assert!(matches!(headless.grant, Grant::DeviceCode));
    /// assert_eq!(headless.metadata.grant_types, [DEVICE_CODE_GRANT, "refresh_token"]);
    /// ```
    #[must_use]
    pub fn device_code(name: &str) -> Self {
        let mut metadata = ClientMetadata::new(name, None);
        metadata.grant_types = vec![crate::auth::flow::DEVICE_CODE_GRANT.to_owned(), "refresh_token".to_owned()];
        Self {
            metadata,
            client: None,
            metadata_document: None,
            grant: Grant::DeviceCode,
            signer: None,
            offline_access: true,
        }
    }

    /// The pre-registered `client` (builder style).
    #[must_use]
    pub fn with_client(mut self, client: ClientInformation) -> Self {
        self.client = Some(client);
        self
    }

    /// The client metadata document's URL (builder style).
    #[must_use]
    pub fn with_metadata_document(mut self, url: &str) -> Self {
        self.metadata_document = Some(url.to_owned());
        self
    }

    /// The grant (builder style).
    #[must_use]
    pub fn with_grant(mut self, grant: Grant) -> Self {
        self.grant = grant;
        self
    }

    /// The `private_key_jwt` signer (builder style).
    #[must_use]
    pub fn with_signer(mut self, signer: Arc<dyn JwtSigner>) -> Self {
        self.signer = Some(signer);
        self
    }
}
