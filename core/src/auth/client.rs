//! A client's authorization as a state machine: from a server's `401`/`403` challenge to an
//! access token, saying at each step which HTTP request to make next (or which URL to send
//! the user to) and consuming the answers. The caller does the I/O; nothing here blocks,
//! reads a clock or draws randomness of its own.
//!
//! The steps, in the spec's order (2025-11-25 authorization, with the 2025-03-26 fallbacks):
//!
//! 1. Protected Resource Metadata (RFC 9728), at the challenge's `resource_metadata` or the
//!    well-known URLs; its `resource` must cover the server. None found: the server's origin
//!    is the authorization server (2025-03-26).
//! 2. Authorization Server Metadata (RFC 8414, OIDC discovery); its `issuer` must be the one
//!    the resource metadata named. None found: `/authorize`, `/token`, `/register` at the
//!    authorization server's origin.
//! 3. The client's identity: pre-registered, a Client ID Metadata Document URL (when the
//!    server supports them), or Dynamic Client Registration (RFC 7591).
//! 4. The grant: authorization code with PKCE S256, `state`, `resource` and `iss` checks;
//!    client credentials; or an identity assertion exchanged at the enterprise identity provider (RFC 8693)
//!    then presented as a JWT bearer grant (RFC 7523).
//!
//! ```
//! use std::sync::Arc;
//! use talaria_core::auth::client::{Authorization, ClientConfig, Method, Response, Step};
//! use talaria_core::auth::challenge;
//!
//! let config = Arc::new(ClientConfig::authorization_code("talaria", "http://127.0.0.1:8765/cb"));
//! let challenge = challenge::bearer(r#"Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp""#);
//! let mut zero = |bytes: &mut [u8]| bytes.fill(7);
//! let (mut flow, step) = Authorization::start(config, "https://mcp.example.com/mcp", challenge.as_ref(), None, &mut zero, 0);
//! let Step::Send(request) = step else { panic!("{step:?}") };
//! assert_eq!(request.method, Method::Get);
//! assert_eq!(request.url, "https://mcp.example.com/.well-known/oauth-protected-resource/mcp");
//! let next = flow.receive(&Response::new(200, br#"{"resource":"https://mcp.example.com/mcp","authorization_servers":["https://auth.example.com"]}"#.to_vec()));
//! let Step::Send(request) = next else { panic!("{next:?}") };
//! assert_eq!(request.url, "https://auth.example.com/.well-known/oauth-authorization-server");
//! ```

use crate::alloc_prelude::*;
use alloc::sync::Arc;

use serde::{Deserialize, Serialize};

use super::challenge::Challenge;
use super::discovery::{authorization_server_metadata_urls, fallback_endpoints, resource_metadata_urls};
use super::flow::{callback_code, AuthorizationRequest, ClientAuth, TokenRequest, TokenResponse};
use super::jwt::client_assertion;
use super::metadata::{AuthorizationServerMetadata, MetadataError, ProtectedResourceMetadata};
use super::pkce::{random_token, Pkce};
use super::registration::ClientInformation;
use super::scope;
use super::url::HttpUrl;

pub use config::{ClientConfig, Grant, IdentityAssertion, OFFLINE_ACCESS};
pub use error::AuthError;

/// What a finished authorization learnt, kept to refresh the token or step up its scope
/// without discovering and registering again.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AuthContext {
    /// The `resource` the token is for (RFC 8707): the server's metadata's, or its
    /// canonical URL.
    pub resource: String,
    /// The authorization server (discovered, or built from the fallback endpoints).
    pub server: AuthorizationServerMetadata,
    /// Whether the issuer came from resource metadata (and was checked against it).
    pub issuer_checked: bool,
    /// The client as this authorization server knows it.
    pub client: ClientInformation,
    /// The scopes the server's resource metadata lists, if it does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scopes_supported: Option<Vec<String>>,
}

/// The method of a request the caller makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// `GET`.
    Get,
    /// `POST`.
    Post,
}

/// An HTTP request to make (never with a bearer token: these go to metadata, registration and
/// token endpoints). Redirects must not be followed: a `3xx` is an answer like any other.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// The method.
    pub method: Method,
    /// The URL.
    pub url: String,
    /// The headers (`Accept`, `Content-Type`, `Authorization: Basic` for a confidential
    /// client).
    pub headers: Vec<(&'static str, String)>,
    /// The body, for a `POST`.
    pub body: Option<String>,
}

/// The answer to a [`Request`]: its status and body (the caller bounds the body's size).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    /// The HTTP status.
    pub status: u16,
    /// The body.
    pub body: Vec<u8>,
}

impl Response {
    /// A response with `status` and `body`.
    #[must_use]
    pub fn new(status: u16, body: Vec<u8>) -> Self {
        Self { status, body }
    }
}

/// What the caller does next.
#[derive(Debug)]
pub enum Step {
    /// Make this request, then pass its answer to [`Authorization::receive`] (or a
    /// transport failure to [`Authorization::fail_transport`]).
    Send(Request),
    /// Send the user to this authorization URL, then pass the URL the authorization server
    /// redirected them to to [`Authorization::redirected`].
    Visit(String),
    /// Device grant (RFC 8628): show the user this URL and code, wait
    /// [`DeviceCode::interval`], then call [`Authorization::poll`].
    UserCode(DeviceCode),
    /// Device grant: wait this long, then call [`Authorization::poll`].
    Wait(core::time::Duration),
    /// Authorized: the token, and what to keep for refreshing it.
    Done(Box<Authorized>),
    /// The authorization failed (and will not go on).
    Failed(AuthError),
}

/// A finished authorization.
#[derive(Debug, Clone, PartialEq)]
pub struct Authorized {
    /// The token endpoint's answer.
    pub token: TokenResponse,
    /// The scope asked for, if any.
    pub scope: Option<String>,
    /// What was learnt on the way.
    pub context: AuthContext,
}

/// Where an authorization is.
#[derive(Debug)]
enum State {
    ResourceMetadata { urls: Vec<String>, next: usize },
    ServerMetadata { issuer: String, checked: bool, urls: Vec<String>, next: usize },
    Registering { url: String },
    Redirecting { url: String },
    Exchanging { url: String },
    Token { url: String },
    DeviceAuthorizing { url: String },
    DevicePolling(device::Polling),
    Ended,
}

/// One run of the authorization, from a challenge to a token (see the module docs).
#[derive(Debug)]
pub struct Authorization {
    config: Arc<ClientConfig>,
    server: String,
    challenged_scope: Option<String>,
    granted_scope: Option<String>,
    resource: Option<String>,
    scopes_supported: Option<Vec<String>>,
    as_metadata: Option<AuthorizationServerMetadata>,
    issuer_checked: bool,
    client: Option<ClientInformation>,
    scope: Option<String>,
    pkce: Pkce,
    state_token: String,
    jti: String,
    now: u64,
    state: State,
}

impl Authorization {
    /// Starts authorizing for the MCP server at `server`, which answered with `challenge`
    /// (its Bearer challenge, if it sent one). `known` skips discovery and registration (a
    /// step-up, or a token that could not be refreshed); `granted` is the scope the current
    /// token has, kept on a step-up. `random` fills buffers from a CSPRNG (PKCE, `state`, the
    /// assertion's `jti`); `now` is the time in seconds since the epoch (for assertions).
    pub fn start(
        config: Arc<ClientConfig>,
        server: &str,
        challenge: Option<&Challenge>,
        known: Option<AuthContext>,
        random: &mut dyn FnMut(&mut [u8]),
        now: u64,
    ) -> (Self, Step) {
        Self::step_up(config, server, challenge, known, None, random, now)
    }

    /// [`start`](Self::start) for a step-up: `granted` is the scope the current token has,
    /// which the new request keeps beside the challenged one.
    pub fn step_up(
        config: Arc<ClientConfig>,
        server: &str,
        challenge: Option<&Challenge>,
        known: Option<AuthContext>,
        granted: Option<&str>,
        random: &mut dyn FnMut(&mut [u8]),
        now: u64,
    ) -> (Self, Step) {
        let mut flow = Self::new(config, server, challenge, granted, random, now);
        let step = match known {
            Some(context) => {
                flow.learn(context);
                flow.grant()
            }
            None => match resource_metadata_urls(server, challenge.and_then(Challenge::resource_metadata)) {
                Ok(urls) => flow.next_resource_metadata(urls, 0),
                Err(e) => flow.fail(e.into()),
            },
        };
        (flow, step)
    }

    /// A flow that has not taken its first step.
    fn new(
        config: Arc<ClientConfig>,
        server: &str,
        challenge: Option<&Challenge>,
        granted: Option<&str>,
        random: &mut dyn FnMut(&mut [u8]),
        now: u64,
    ) -> Self {
        Self {
            config,
            server: server.to_owned(),
            challenged_scope: challenge.and_then(Challenge::scope).map(str::to_owned),
            granted_scope: granted.map(str::to_owned),
            resource: None,
            scopes_supported: None,
            as_metadata: None,
            issuer_checked: false,
            client: None,
            scope: None,
            pkce: Pkce::new(random),
            state_token: random_token(random),
            jti: random_token(random),
            now,
            state: State::Ended,
        }
    }

    /// Takes what an earlier authorization learnt, skipping discovery and registration.
    fn learn(&mut self, context: AuthContext) {
        self.resource = Some(context.resource);
        self.scopes_supported = context.scopes_supported;
        self.as_metadata = Some(context.server);
        self.issuer_checked = context.issuer_checked;
        self.client = Some(context.client);
    }

    /// Refreshes a token with its `refresh_token`, for the server `context` was learnt for.
    pub fn refresh(
        config: Arc<ClientConfig>,
        context: AuthContext,
        refresh_token: &str,
        random: &mut dyn FnMut(&mut [u8]),
        now: u64,
    ) -> (Self, Step) {
        let mut flow = Self::new(config, &context.resource, None, None, random, now);
        flow.learn(context);
        let step = flow.client_auth().and_then(|(client_id, auth)| {
            let request = TokenRequest::refresh(refresh_token, flow.resource(), &client_id, &auth);
            flow.post_token(request)
        });
        let step = flow.settle(step);
        (flow, step)
    }

    /// The answer to the last [`Step::Send`].
    pub fn receive(&mut self, response: &Response) -> Step {
        match core::mem::replace(&mut self.state, State::Ended) {
            State::ResourceMetadata { urls, next } => self.on_resource_metadata(urls, next, response),
            State::ServerMetadata { issuer, checked, urls, next } => {
                self.on_server_metadata(issuer, checked, urls, next, response)
            }
            State::Registering { url } => self.on_registration(&url, response),
            State::Exchanging { url } => self.on_exchange(&url, response),
            State::Token { url } => self.on_token(&url, response),
            State::DeviceAuthorizing { url } => self.on_device_authorization(&url, response),
            State::DevicePolling(polling) => self.on_device_token(polling, response),
            State::Redirecting { .. } | State::Ended => self.fail(AuthError::Unexpected("an HTTP response")),
        }
    }

    /// The last [`Step::Send`] could not be made.
    pub fn fail_transport(&mut self, detail: &str) -> Step {
        let url = match &self.state {
            State::ResourceMetadata { urls, next } | State::ServerMetadata { urls, next, .. } => {
                urls.get(*next - 1).cloned()
            }
            State::Registering { url }
            | State::Exchanging { url }
            | State::Token { url }
            | State::DeviceAuthorizing { url }
            | State::Redirecting { url } => Some(url.clone()),
            State::DevicePolling(polling) => Some(polling.url.clone()),
            State::Ended => None,
        };
        // A metadata URL that cannot be reached is one more place without metadata.
        match core::mem::replace(&mut self.state, State::Ended) {
            State::ResourceMetadata { urls, next } => self.next_resource_metadata(urls, next),
            State::ServerMetadata { issuer, checked, urls, next } => {
                self.next_server_metadata(issuer, checked, urls, next)
            }
            _ => self.fail(AuthError::Transport { url: url.unwrap_or_default(), detail: detail.to_owned() }),
        }
    }

    /// The URL the authorization server sent the user back to, after a [`Step::Visit`].
    pub fn redirected(&mut self, callback: &str) -> Step {
        let State::Redirecting { .. } = self.state else {
            return self.fail(AuthError::Unexpected("a redirect"));
        };
        let redirect_uri = self.config.metadata.redirect_uris.first().cloned().unwrap_or_default();
        let (target, query) = callback.split_once('?').unwrap_or((callback, ""));
        let query = query.split('#').next().unwrap_or("");
        if target.trim_end_matches('/') != redirect_uri.split('?').next().unwrap_or("").trim_end_matches('/') {
            return self.fail(AuthError::RedirectMismatch(target.to_owned()));
        }
        let step = self.exchange_code(query, &redirect_uri);
        self.settle(step)
    }

    fn exchange_code(&mut self, query: &str, redirect_uri: &str) -> Result<Step, AuthError> {
        let metadata = self.metadata()?;
        let iss_required = metadata.authorization_response_iss_parameter_supported == Some(true);
        let code = callback_code(query, &self.state_token, &metadata.issuer, iss_required)?;
        let (client_id, auth) = self.client_auth()?;
        let request = TokenRequest::authorization_code(
            &code,
            &self.pkce.verifier,
            redirect_uri,
            self.resource(),
            &client_id,
            &auth,
        );
        self.post_token(request)
    }

    fn fail(&mut self, error: AuthError) -> Step {
        self.state = State::Ended;
        Step::Failed(error)
    }

    fn settle(&mut self, step: Result<Step, AuthError>) -> Step {
        step.unwrap_or_else(|e| self.fail(e))
    }

    /// The authorization server's metadata, known from the end of discovery on.
    fn metadata(&self) -> Result<&AuthorizationServerMetadata, AuthError> {
        self.as_metadata.as_ref().ok_or(AuthError::Unexpected("a step before discovery ended"))
    }

    fn resource(&self) -> &str {
        self.resource.as_deref().unwrap_or(&self.server)
    }

    fn next_resource_metadata(&mut self, urls: Vec<String>, next: usize) -> Step {
        let Some(url) = urls.get(next).cloned() else {
            // No resource metadata anywhere: a 2025-03-26 server, its own authorization server.
            return match HttpUrl::parse(&self.server) {
                Ok(server) => self.discover_server(server.origin(), false),
                Err(e) => self.fail(e.into()),
            };
        };
        self.state = State::ResourceMetadata { urls, next: next + 1 };
        Step::Send(get(url))
    }

    fn on_resource_metadata(&mut self, urls: Vec<String>, next: usize, response: &Response) -> Step {
        if response.status != 200 {
            return self.next_resource_metadata(urls, next);
        }
        let url = urls.get(next - 1).cloned().unwrap_or_default();
        let metadata = match serde_json::from_slice::<ProtectedResourceMetadata>(&response.body) {
            Ok(metadata) => metadata,
            Err(e) => return self.fail(malformed("protected resource metadata", url, &e)),
        };
        if let Err(e) = metadata.check_resource(&self.server) {
            return self.fail(e.into());
        }
        let Some(issuer) = metadata.authorization_servers.first().cloned() else {
            return self.fail(AuthError::NoAuthorizationServer);
        };
        self.resource = Some(metadata.resource.clone());
        self.scopes_supported = metadata.scopes_supported;
        self.discover_server(issuer, true)
    }

    fn discover_server(&mut self, issuer: String, checked: bool) -> Step {
        match secure(&issuer).and_then(|()| Ok(authorization_server_metadata_urls(&issuer)?)) {
            Ok(urls) => self.next_server_metadata(issuer, checked, urls, 0),
            Err(e) => self.fail(e),
        }
    }

    fn next_server_metadata(&mut self, issuer: String, checked: bool, urls: Vec<String>, next: usize) -> Step {
        if let Some(url) = urls.get(next).cloned() {
            self.state = State::ServerMetadata { issuer, checked, urls, next: next + 1 };
            return Step::Send(get(url));
        }
        // No metadata: the 2025-03-26 default endpoints at the authorization server's origin.
        let endpoints = match fallback_endpoints(&issuer) {
            Ok(endpoints) => endpoints,
            Err(e) => return self.fail(e.into()),
        };
        let metadata = serde_json::json!({
            "issuer": issuer,
            "authorization_endpoint": endpoints.authorization,
            "token_endpoint": endpoints.token,
            "registration_endpoint": endpoints.registration,
            "code_challenge_methods_supported": ["S256"],
        });
        match serde_json::from_value(metadata) {
            Ok(metadata) => self.with_server(metadata, checked),
            Err(e) => self.fail(malformed("fallback metadata", issuer, &e)),
        }
    }

    fn on_server_metadata(
        &mut self,
        issuer: String,
        checked: bool,
        urls: Vec<String>,
        next: usize,
        response: &Response,
    ) -> Step {
        if response.status != 200 {
            return self.next_server_metadata(issuer, checked, urls, next);
        }
        let url = urls.get(next - 1).cloned().unwrap_or_default();
        let metadata = match serde_json::from_slice::<AuthorizationServerMetadata>(&response.body) {
            Ok(metadata) => metadata,
            Err(e) => return self.fail(malformed("authorization server metadata", url, &e)),
        };
        // The issuer must be the one the resource named (RFC 8414 §3.3); a 2025-03-26
        // server's guessed origin names none, so there the document is checked against itself.
        let expected = if checked { issuer.as_str() } else { metadata.issuer.as_str() };
        match metadata.check(expected) {
            Ok(()) => {}
            // PKCE matters to the authorization code grant only.
            Err(MetadataError::NoPkce) if !matches!(self.config.grant, Grant::AuthorizationCode) => {}
            Err(e) => return self.fail(e.into()),
        }
        self.with_server(metadata, checked)
    }

    fn with_server(&mut self, metadata: AuthorizationServerMetadata, checked: bool) -> Step {
        let endpoints = [Some(&metadata.token_endpoint), metadata.authorization_endpoint.as_ref()];
        if let Some(Err(e)) = endpoints.into_iter().flatten().map(|url| secure(url)).find(Result::is_err) {
            return self.fail(e);
        }
        self.issuer_checked = checked;
        let document = metadata.client_id_metadata_document_supported == Some(true);
        let registration = metadata.registration_endpoint.clone();
        let method = Self::registration_auth_method(&metadata);
        self.as_metadata = Some(metadata);
        if let Some(client) = self.config.client.clone() {
            self.client = Some(client);
            return self.grant();
        }
        if let (true, Some(url)) = (document, self.config.metadata_document.clone()) {
            self.client = Some(ClientInformation::new(&url, None));
            return self.grant();
        }
        let Some(url) = registration else {
            return self.fail(AuthError::NoRegistration);
        };
        if let Err(e) = secure(&url) {
            return self.fail(e);
        }
        let mut body = self.config.metadata.clone();
        body.token_endpoint_auth_method = Some(method.to_owned());
        if body.scope.is_none() {
            body.scope = self.scopes_supported.as_ref().map(|s| s.join(" ")).filter(|s| !s.is_empty());
        }
        self.state = State::Registering { url: url.clone() };
        Step::Send(Request {
            method: Method::Post,
            url,
            headers: vec![("Content-Type", "application/json".into()), ("Accept", "application/json".into())],
            body: Some(serde_json::to_string(&body).unwrap_or_default()),
        })
    }

    /// The method a dynamically registered client asks for: public where the server allows
    /// it (a client on the user's machine keeps no secret well), else a secret.
    fn registration_auth_method(metadata: &AuthorizationServerMetadata) -> &'static str {
        let supported = metadata.token_endpoint_auth_methods_supported.clone().unwrap_or_default();
        let offers = |m: &str| supported.iter().any(|s| s == m);
        if supported.is_empty() || offers("none") {
            "none"
        } else if offers("client_secret_basic") {
            "client_secret_basic"
        } else if offers("client_secret_post") {
            "client_secret_post"
        } else {
            "none"
        }
    }

    fn on_registration(&mut self, url: &str, response: &Response) -> Step {
        if !(200..300).contains(&response.status) {
            let error = serde_json::from_slice(&response.body).ok();
            return self.fail(AuthError::Registration { url: url.to_owned(), status: response.status, error });
        }
        match serde_json::from_slice::<ClientInformation>(&response.body) {
            Ok(client) => {
                self.client = Some(client);
                self.grant()
            }
            Err(e) => self.fail(malformed("client registration", url.to_owned(), &e)),
        }
    }

    /// The scope to ask for: the challenge's (with the granted one kept, on a step-up), else
    /// the resource's `scopes_supported`, else none; plus `offline_access` when the client
    /// wants a refresh token and the authorization server lists it.
    fn choose_scope(&self, metadata: &AuthorizationServerMetadata) -> Option<String> {
        let mut chosen = match (&self.challenged_scope, &self.granted_scope) {
            (Some(needed), Some(granted)) => Some(scope::step_up(Some(granted), needed)),
            (challenged, _) => scope::select(challenged.as_deref(), self.scopes_supported.as_deref()),
        };
        let listed = metadata.scopes_supported.iter().flatten().any(|s| s == OFFLINE_ACCESS);
        let wanted =
            self.config.offline_access && matches!(self.config.grant, Grant::AuthorizationCode | Grant::DeviceCode);
        if listed && wanted && chosen.is_some() {
            chosen = Some(scope::step_up(chosen.as_deref(), OFFLINE_ACCESS));
        }
        chosen
    }

    fn grant(&mut self) -> Step {
        let step = self.try_grant();
        self.settle(step)
    }

    fn try_grant(&mut self) -> Result<Step, AuthError> {
        let metadata = self.metadata()?.clone();
        self.scope = self.choose_scope(&metadata);
        match self.config.grant.clone() {
            Grant::AuthorizationCode => self.authorize(&metadata),
            Grant::ClientCredentials => {
                let (client_id, auth) = self.client_auth()?;
                let request =
                    TokenRequest::client_credentials(self.scope.as_deref(), self.resource(), &client_id, &auth);
                self.post_token(request)
            }
            Grant::IdentityAssertion(assertion) => {
                secure(&assertion.token_endpoint)?;
                let auth = match assertion.client.client_secret.as_deref() {
                    Some(secret) => ClientAuth::SecretBasic(secret.to_owned()),
                    None => ClientAuth::None,
                };
                let request = TokenRequest::id_jag_exchange(
                    &assertion.id_token,
                    &metadata.issuer,
                    self.resource(),
                    self.scope.as_deref(),
                    &assertion.client.client_id,
                    &auth,
                );
                self.state = State::Exchanging { url: assertion.token_endpoint.clone() };
                Ok(Step::Send(form_post(assertion.token_endpoint, request)))
            }
            Grant::DeviceCode => self.authorize_device(&metadata),
        }
    }

    fn authorize(&mut self, metadata: &AuthorizationServerMetadata) -> Result<Step, AuthError> {
        let endpoint =
            metadata.authorization_endpoint.clone().ok_or(AuthError::Incomplete("an authorization endpoint"))?;
        let redirect_uri =
            self.config.metadata.redirect_uris.first().cloned().ok_or(AuthError::Incomplete("a redirect URI"))?;
        let client = self.client.as_ref().ok_or(AuthError::NoRegistration)?;
        let request = AuthorizationRequest {
            endpoint: endpoint.clone(),
            client_id: client.client_id.clone(),
            redirect_uri,
            scope: self.scope.clone(),
            state: self.state_token.clone(),
            resource: self.resource().to_owned(),
        };
        self.state = State::Redirecting { url: endpoint };
        Ok(Step::Visit(request.url(&self.pkce)))
    }

    fn on_exchange(&mut self, url: &str, response: &Response) -> Step {
        #[derive(Deserialize)]
        struct Exchanged {
            access_token: String,
        }
        if response.status != 200 {
            let error = serde_json::from_slice(&response.body).ok();
            return self.fail(AuthError::Token { url: url.to_owned(), status: response.status, error });
        }
        let grant = match serde_json::from_slice::<Exchanged>(&response.body) {
            Ok(exchanged) => exchanged.access_token,
            Err(e) => return self.fail(malformed("token exchange response", url.to_owned(), &e)),
        };
        let step = self.client_auth().and_then(|(client_id, auth)| {
            let request = TokenRequest::jwt_bearer(&grant, self.scope.as_deref(), self.resource(), &client_id, &auth);
            self.post_token(request)
        });
        self.settle(step)
    }

    fn post_token(&mut self, request: TokenRequest) -> Result<Step, AuthError> {
        let url = self.metadata()?.token_endpoint.clone();
        self.state = State::Token { url: url.clone() };
        Ok(Step::Send(form_post(url, request)))
    }

    fn on_token(&mut self, url: &str, response: &Response) -> Step {
        if response.status != 200 {
            let error = serde_json::from_slice(&response.body).ok();
            return self.fail(AuthError::Token { url: url.to_owned(), status: response.status, error });
        }
        let token = match serde_json::from_slice::<TokenResponse>(&response.body) {
            Ok(token) => token,
            Err(e) => return self.fail(malformed("token response", url.to_owned(), &e)),
        };
        if !token.is_bearer() {
            return self.fail(AuthError::NotBearer(token.token_type));
        }
        let (Some(server), Some(client)) = (self.as_metadata.clone(), self.client.clone()) else {
            return self.fail(AuthError::Unexpected("a token before the server and client were known"));
        };
        let context = AuthContext {
            resource: self.resource().to_owned(),
            server,
            issuer_checked: self.issuer_checked,
            client,
            scopes_supported: self.scopes_supported.clone(),
        };
        self.state = State::Ended;
        Step::Done(Box::new(Authorized { token, scope: self.scope.clone(), context }))
    }

    /// The client id and how it authenticates at the token endpoint: as registered, else
    /// the strongest the server takes that the client can do.
    fn client_auth(&self) -> Result<(String, ClientAuth), AuthError> {
        let client = self.client.as_ref().ok_or(AuthError::NoRegistration)?;
        let metadata = self.metadata()?;
        let supported = metadata.token_endpoint_auth_methods_supported.clone();
        // RFC 8414 §2: absent means client_secret_basic.
        let supported = supported.unwrap_or_else(|| vec!["client_secret_basic".to_owned()]);
        let offers = |m: &str| supported.iter().any(|s| s == m);
        let method = match client.token_endpoint_auth_method.as_deref() {
            Some(method) => method.to_owned(),
            None if self.config.signer.is_some() && offers("private_key_jwt") => "private_key_jwt".to_owned(),
            None if client.client_secret.is_some() => {
                if !offers("client_secret_basic") && offers("client_secret_post") {
                    "client_secret_post".to_owned()
                } else {
                    "client_secret_basic".to_owned()
                }
            }
            None if offers("private_key_jwt") && !offers("none") => return Err(AuthError::NoSigner),
            None => "none".to_owned(),
        };
        let secret = client.client_secret.clone().unwrap_or_default();
        let auth = match method.as_str() {
            "client_secret_basic" => ClientAuth::SecretBasic(secret),
            "client_secret_post" => ClientAuth::SecretPost(secret),
            "private_key_jwt" => {
                let signer = self.config.signer.as_deref().ok_or(AuthError::NoSigner)?;
                let audience = &metadata.issuer;
                ClientAuth::PrivateKeyJwt(client_assertion(signer, &client.client_id, audience, self.now, &self.jti)?)
            }
            _ => ClientAuth::None,
        };
        Ok((client.client_id.clone(), auth))
    }
}

/// `Ok` if credentials may go to `url` (https, or http to this machine).
fn secure(url: &str) -> Result<(), AuthError> {
    if HttpUrl::parse(url)?.is_secure() {
        Ok(())
    } else {
        Err(AuthError::Insecure(url.to_owned()))
    }
}

fn malformed(what: &'static str, url: String, error: &serde_json::Error) -> AuthError {
    AuthError::Malformed { what, url, detail: error.to_string() }
}

fn get(url: String) -> Request {
    Request { method: Method::Get, url, headers: vec![("Accept", "application/json".into())], body: None }
}

fn form_post(url: String, request: TokenRequest) -> Request {
    let mut headers = vec![
        ("Content-Type", "application/x-www-form-urlencoded".to_owned()),
        ("Accept", "application/json".to_owned()),
    ];
    if let Some(authorization) = request.authorization {
        headers.push(("Authorization", authorization));
    }
    Request { method: Method::Post, url, headers, body: Some(request.body) }
}

mod config;
mod device;
mod error;

pub use device::DeviceCode;

#[cfg(test)]
mod tests;
