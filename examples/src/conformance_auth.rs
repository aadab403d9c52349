//! The conformance suite's client authorization scenarios (`auth/*`): which OAuth client each
//! one calls for, read from the scenario's name and the context the suite passes in
//! `MCP_CONFORMANCE_CONTEXT` (pre-registered credentials, a signing key, an enterprise ID
//! token), and the session each runs once authorized.
//!
//! Every scenario connects over Streamable HTTP, lists the tools and calls the first one:
//! the suite's servers ask for authorization at `initialize`, at the listing, or (a step-up)
//! at the call. The suite's authorization servers approve at once, so the user agent is
//! [`HeadlessRedirect`].

use std::sync::Arc;

use serde::Deserialize;
use serde_json::json;
use talaria::auth::{Es256Signer, HeadlessRedirect, OAuthClient};
use talaria::client::{Client, ClientOptions};
use talaria::core::auth::client::{ClientConfig, Grant, IdentityAssertion};
use talaria::core::auth::registration::ClientInformation;
use talaria::core::session::ClientMode;

/// The URL the client's metadata document would live at: the suite expects this exact
/// `client_id` where the authorization server supports Client ID Metadata Documents.
pub const METADATA_DOCUMENT: &str = "https://conformance-test.local/client-metadata.json";

/// The redirect URI registered: never listened on, since [`HeadlessRedirect`] reads the
/// authorization server's redirect itself.
const REDIRECT_URI: &str = "http://127.0.0.1:3999/callback";

/// What the suite passes in `MCP_CONFORMANCE_CONTEXT` (each field for some scenarios only).
#[derive(Debug, Default, Deserialize)]
pub struct Context {
    /// A pre-registered client id.
    pub client_id: Option<String>,
    /// Its secret.
    pub client_secret: Option<String>,
    /// A PKCS#8 PEM key for `private_key_jwt`.
    pub private_key_pem: Option<String>,
    /// The enterprise identity provider's client id for this client.
    pub idp_client_id: Option<String>,
    /// The user's ID token from that identity provider.
    pub idp_id_token: Option<String>,
    /// The identity provider's token endpoint.
    pub idp_token_endpoint: Option<String>,
}

impl Context {
    /// Reads the context from the environment (empty when absent or unreadable).
    #[must_use]
    pub fn from_env() -> Self {
        std::env::var("MCP_CONFORMANCE_CONTEXT")
            .ok()
            .and_then(|text| serde_json::from_str(&text).ok())
            .unwrap_or_default()
    }

    fn client(&self) -> Option<ClientInformation> {
        self.client_id.as_deref().map(|id| ClientInformation::new(id, self.client_secret.as_deref()))
    }
}

/// The OAuth client configuration `scenario` calls for.
///
/// # Errors
///
/// A message when the context lacks what the scenario needs.
pub fn config(scenario: &str, context: &Context) -> Result<ClientConfig, String> {
    const NAME: &str = "talaria-conformance-client";
    let missing = |what: &str| format!("{scenario}: the context has no {what}");
    Ok(match scenario {
        "auth/client-credentials-basic" => {
            ClientConfig::client_credentials(NAME, context.client().ok_or_else(|| missing("client_id"))?)
        }
        "auth/client-credentials-jwt" => {
            let pem = context.private_key_pem.as_deref().ok_or_else(|| missing("private_key_pem"))?;
            let signer = Es256Signer::from_pem(pem).map_err(|e| format!("{scenario}: {e}"))?;
            ClientConfig::client_credentials(NAME, context.client().ok_or_else(|| missing("client_id"))?)
                .with_signer(Arc::new(signer))
        }
        "auth/cross-app-access-complete-flow" => {
            let assertion = IdentityAssertion {
                token_endpoint: context.idp_token_endpoint.clone().ok_or_else(|| missing("idp_token_endpoint"))?,
                id_token: context.idp_id_token.clone().ok_or_else(|| missing("idp_id_token"))?,
                client: ClientInformation::new(
                    context.idp_client_id.as_deref().ok_or_else(|| missing("idp_client_id"))?,
                    None,
                ),
            };
            ClientConfig::client_credentials(NAME, context.client().ok_or_else(|| missing("client_id"))?)
                .with_grant(Grant::IdentityAssertion(assertion))
        }
        _ => {
            let config = ClientConfig::authorization_code(NAME, REDIRECT_URI).with_metadata_document(METADATA_DOCUMENT);
            match context.client() {
                Some(client) => config.with_client(client),
                None => config,
            }
        }
    })
}

/// Runs `scenario` against the server at `url`.
///
/// # Errors
///
/// What failed: the authorization, the handshake, or a call.
pub fn run(scenario: &str, url: &str) -> Result<(), String> {
    let config = config(scenario, &Context::from_env())?;
    let oauth =
        OAuthClient::new(config).redirect(HeadlessRedirect::default()).on_progress(|line| eprintln!("auth: {line}"));
    let options = ClientOptions::new("talaria-conformance-client", env!("CARGO_PKG_VERSION"))
        .mode(ClientMode::Legacy)
        .authenticator(Arc::new(oauth));
    let client = Client::http(url, &[], options).map_err(|e| e.to_string())?;
    let tools = client.list_all_tools().map_err(|e| e.to_string())?;
    println!("tools: {}", tools.iter().map(|t| t.name.as_str()).collect::<Vec<_>>().join(", "));
    if let Some(tool) = tools.first() {
        let result = client.call_tool(&tool.name, json!({})).map_err(|e| e.to_string())?;
        println!("{} answered (error: {})", tool.name, result.is_error());
    }
    client.close();
    Ok(())
}
