//! OAuth 2.1 for MCP clients (2025-03-26 onward): an [`OAuthClient`] that runs the core's
//! [`Authorization`] state machine with ureq when a server answers `401` (or `403`
//! `insufficient_scope`), keeps tokens in a [`TokenStore`], refreshes them, and hands the
//! user to the authorization server through a [`RedirectHandler`].
//!
//! ```no_run
//! use std::sync::Arc;
//! use talaria::auth::{LoopbackRedirect, OAuthClient};
//! use talaria::client::{Client, ClientOptions};
//! use talaria::core::auth::client::ClientConfig;
//!
//! let redirect = LoopbackRedirect::bind(|url| eprintln!("sign in at {url}"))?;
//! let config = ClientConfig::authorization_code("my-app", &redirect.redirect_uri());
//! let oauth = Arc::new(OAuthClient::new(config).redirect(redirect));
//! let client = Client::http("https://mcp.example.com/mcp", &[], ClientOptions::new("my-app", "1.0").authenticator(oauth))?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#[cfg(feature = "jwt")]
mod es256;
mod fetch;
#[cfg(feature = "keyring")]
mod keyring_store;
mod redirect;
mod store;

use std::sync::{Arc, Mutex, PoisonError};
use std::time::{SystemTime, UNIX_EPOCH};

use talaria_core::auth::challenge::{self, Challenge};
use talaria_core::auth::client::{Authorization, Authorized, ClientConfig, DeviceCode, Step};
use talaria_core::auth::scope;
use talaria_core::auth::url::HttpUrl;

use crate::client::{AuthFailure, Authenticator};

#[cfg(feature = "jwt")]
pub use es256::{Es256Signer, KeyError};
pub use fetch::MAX_RESPONSE;
#[cfg(feature = "keyring")]
pub use keyring_store::KeyringTokenStore;
pub use redirect::{HeadlessRedirect, LoopbackRedirect, RedirectHandler};
pub use store::{FileTokenStore, MemoryTokenStore, StoredToken, TokenStore};

/// A token this close to its expiry is refreshed before use.
const EXPIRY_MARGIN: u64 = 30;

/// Called with a line about each step of an authorization (for a CLI's `--verbose`).
type ProgressFn = Arc<dyn Fn(&str) + Send + Sync>;

/// Shows the user the code to enter on another device (the device grant).
type UserCodeFn = Arc<dyn Fn(&DeviceCode) + Send + Sync>;

/// An OAuth 2.1 client for MCP servers: an [`Authenticator`] for
/// [`ClientOptions::authenticator`](crate::client::ClientOptions::authenticator).
///
/// - A request refused with `401`: refresh the token if there is a refresh token, else run
///   the whole flow (discovery, registration, the grant).
/// - A request refused with `403` `insufficient_scope`: authorize again with the granted
///   and the needed scopes, unless the token already has them (asking again cannot help).
/// - Tokens about to expire are refreshed before use.
///
/// One authorization runs at a time; requests that were refused meanwhile use its token.
pub struct OAuthClient {
    config: Arc<ClientConfig>,
    redirect: Option<Arc<dyn RedirectHandler>>,
    store: Arc<dyn TokenStore>,
    agent: ureq::Agent,
    response_limit: u64,
    progress: Option<ProgressFn>,
    user_code: Option<UserCodeFn>,
    running: Mutex<()>,
}

impl std::fmt::Debug for OAuthClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthClient").field("config", &self.config).finish_non_exhaustive()
    }
}

impl OAuthClient {
    /// A client authorizing as `config` says, keeping tokens in memory. An authorization
    /// code grant also needs a [`redirect`](Self::redirect) handler.
    #[must_use]
    pub fn new(config: ClientConfig) -> Self {
        Self {
            config: Arc::new(config),
            redirect: None,
            store: Arc::new(MemoryTokenStore::default()),
            agent: fetch::default_agent(),
            response_limit: MAX_RESPONSE,
            progress: None,
            user_code: None,
            running: Mutex::new(()),
        }
    }

    /// Where the user is sent to sign in (builder style).
    #[must_use]
    pub fn redirect(mut self, handler: impl RedirectHandler + 'static) -> Self {
        self.redirect = Some(Arc::new(handler));
        self
    }

    /// Where tokens are kept (builder style).
    #[must_use]
    pub fn store(mut self, store: Arc<dyn TokenStore>) -> Self {
        self.store = store;
        self
    }

    /// The largest response read from a metadata, registration or token endpoint (builder
    /// style; default [`MAX_RESPONSE`]).
    #[must_use]
    pub const fn response_limit(mut self, bytes: u64) -> Self {
        self.response_limit = bytes;
        self
    }

    /// Trusts `roots` for the authorization requests to `https://` servers (builder style;
    /// default: Mozilla's roots and the system's), as
    /// [`ClientOptions::tls_roots`](crate::client::ClientOptions::tls_roots) does for MCP
    /// requests.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria::auth::OAuthClient;
    /// use talaria::core::auth::client::ClientConfig;
    /// use talaria::core::auth::registration::ClientInformation;
    ///
    /// let client = ClientInformation::new("id", Some("secret"));
    /// let oauth = OAuthClient::new(ClientConfig::client_credentials("me", client))
    ///     .tls_roots(&talaria::tls::TlsRoots::new());
    /// # let _ = oauth;
    /// ```
    #[cfg(feature = "tls")]
    #[must_use]
    pub fn tls_roots(mut self, roots: &crate::tls::TlsRoots) -> Self {
        self.agent = fetch::agent(std::time::Duration::from_secs(30), roots);
        self
    }

    /// Shows the user the code to enter, and where, when the grant is the device grant
    /// ([`ClientConfig::device_code`]): the client then polls until the user has approved
    /// (builder style).
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria::auth::OAuthClient;
    /// use talaria::core::auth::client::ClientConfig;
    ///
    /// let oauth = OAuthClient::new(ClientConfig::device_code("my-cli"))
    ///     .on_user_code(|code| eprintln!("Visit {} and enter {}", code.verification_uri, code.user_code));
    /// # let _ = oauth;
    /// ```
    #[must_use]
    pub fn on_user_code(mut self, show: impl Fn(&DeviceCode) + Send + Sync + 'static) -> Self {
        self.user_code = Some(Arc::new(show));
        self
    }

    /// Reports each step of an authorization to `progress` (builder style).
    #[must_use]
    pub fn on_progress(mut self, progress: impl Fn(&str) + Send + Sync + 'static) -> Self {
        self.progress = Some(Arc::new(progress));
        self
    }

    /// The token kept for the server at `url`.
    #[must_use]
    pub fn token(&self, url: &str) -> Option<StoredToken> {
        self.store.load(&key(url))
    }

    /// Forgets the token kept for the server at `url` (signing out here; the authorization
    /// server may still hold a grant). Whether there was one.
    ///
    /// # Errors
    ///
    /// The token store could not be written.
    pub fn forget(&self, url: &str) -> std::io::Result<bool> {
        let key = key(url);
        let had = self.store.load(&key).is_some();
        self.store.forget(&key)?;
        Ok(had)
    }

    /// Authorizes for the server at `url` now, without waiting for it to refuse a request
    /// (discovering from its well-known metadata).
    ///
    /// # Errors
    ///
    /// [`AuthFailure`] if the authorization failed.
    pub fn authorize(&self, url: &str) -> Result<StoredToken, AuthFailure> {
        let _running = self.running.lock().unwrap_or_else(PoisonError::into_inner);
        let (flow, step) = Authorization::start(self.config.clone(), url, None, None, &mut fill, now());
        self.run(url, flow, step)
    }

    fn say(&self, line: &str) {
        if let Some(progress) = &self.progress {
            progress(line);
        }
    }

    /// Drives `flow` from `step` to its end, keeping the token.
    fn run(&self, url: &str, mut flow: Authorization, mut step: Step) -> Result<StoredToken, AuthFailure> {
        loop {
            step = match step {
                Step::Send(request) => {
                    self.say(&format!("{:?} {}", request.method, request.url));
                    match fetch::fetch(&self.agent, &request, self.response_limit) {
                        Ok(response) => flow.receive(&response),
                        Err(e) => flow.fail_transport(&e),
                    }
                }
                Step::Visit(authorization_url) => {
                    let Some(redirect) = &self.redirect else {
                        return Err(AuthFailure(
                            "the server wants the user to sign in, and no redirect handler is set".into(),
                        ));
                    };
                    self.say(&format!("sign in at {authorization_url}"));
                    match redirect.authorize(&authorization_url) {
                        Ok(back) => flow.redirected(&back),
                        Err(e) => return Err(AuthFailure(e)),
                    }
                }
                Step::UserCode(code) => {
                    let Some(show) = &self.user_code else {
                        return Err(AuthFailure(
                            "the server wants the user to enter a code, and no user code handler is set".into(),
                        ));
                    };
                    self.say(&format!("enter {} at {}", code.user_code, code.verification_uri));
                    show(&code);
                    std::thread::sleep(code.interval);
                    flow.poll()
                }
                Step::Wait(wait) => {
                    std::thread::sleep(wait);
                    flow.poll()
                }
                Step::Done(done) => {
                    let token = stored(*done);
                    self.say(&format!("authorized (scope: {})", token.scope.as_deref().unwrap_or("none")));
                    self.store.save(&key(url), &token).map_err(|e| AuthFailure(format!("keeping the token: {e}")))?;
                    return Ok(token);
                }
                Step::Failed(e) => return Err(AuthFailure(e.to_string())),
            };
        }
    }

    /// Refreshes `token`; `None` if the server would not.
    fn refresh(&self, url: &str, token: &StoredToken) -> Option<StoredToken> {
        let refresh_token = token.refresh_token.as_deref()?;
        self.say("refreshing the token");
        let (flow, step) =
            Authorization::refresh(self.config.clone(), token.context.clone(), refresh_token, &mut fill, now());
        let mut fresh = self.run(url, flow, step).ok()?;
        // A refresh keeps what the answer does not restate: the refresh token (a server may
        // not rotate it) and the scope (RFC 6749 §6: unchanged unless said).
        let kept = fresh.refresh_token.is_none() || fresh.scope.is_none();
        fresh.refresh_token = fresh.refresh_token.or_else(|| token.refresh_token.clone());
        fresh.scope = fresh.scope.or_else(|| token.scope.clone());
        fresh.requested_scope = fresh.requested_scope.or_else(|| token.requested_scope.clone());
        if kept {
            let _ = self.store.save(&key(url), &fresh);
        }
        Some(fresh)
    }
}

impl Authenticator for OAuthClient {
    fn authorization(&self, url: &str) -> Option<String> {
        let token = self.store.load(&key(url))?;
        let expiring = token.expires_at.is_some_and(|at| at <= now() + EXPIRY_MARGIN);
        if expiring && token.refresh_token.is_some() {
            let _running = self.running.lock().unwrap_or_else(PoisonError::into_inner);
            // Another request may have refreshed it meanwhile.
            let current = self.store.load(&key(url))?;
            if current.access_token != token.access_token {
                return Some(bearer(&current));
            }
            return Some(bearer(&self.refresh(url, &token).unwrap_or(token)));
        }
        Some(bearer(&token))
    }

    fn challenged(
        &self,
        url: &str,
        sent: Option<&str>,
        status: u16,
        www_authenticate: Option<&str>,
    ) -> Result<bool, AuthFailure> {
        let challenge = www_authenticate.and_then(challenge::bearer);
        let _running = self.running.lock().unwrap_or_else(PoisonError::into_inner);
        let current = self.store.load(&key(url));
        if current.as_ref().map(bearer).as_deref() != sent && current.is_some() {
            // Renewed while this request was on its way: send it again with the new token.
            return Ok(true);
        }
        match status {
            403 => self.step_up(url, challenge.as_ref(), current),
            401 => {
                if let Some(fresh) = current.as_ref().and_then(|token| self.refresh(url, token)) {
                    return Ok(fresh.access_token != current.map(|t| t.access_token).unwrap_or_default());
                }
                self.say(&format!("{url} wants authorization"));
                let (flow, step) =
                    Authorization::start(self.config.clone(), url, challenge.as_ref(), None, &mut fill, now());
                self.run(url, flow, step).map(|_| true)
            }
            _ => Ok(false),
        }
    }
}

impl OAuthClient {
    /// A `403`: authorize again for the needed scope, if it is more than the token has.
    fn step_up(
        &self,
        url: &str,
        challenge: Option<&Challenge>,
        current: Option<StoredToken>,
    ) -> Result<bool, AuthFailure> {
        let Some(challenge) = challenge.filter(|c| c.error() == Some("insufficient_scope")) else {
            return Ok(false);
        };
        let Some(needed) = challenge.scope() else { return Ok(false) };
        let granted = current.as_ref().and_then(|t| t.scope.clone());
        let tried = current.as_ref().map_or([None, None], |t| [t.scope.as_deref(), t.requested_scope.as_deref()]);
        if scope::already_tried(needed, &tried) {
            self.say(&format!("{url} wants scope {needed:?}, which was already asked for: not asking again"));
            return Ok(false);
        }
        self.say(&format!("{url} wants scope {needed:?}: stepping up"));
        let context = current.map(|t| t.context);
        let (flow, step) = Authorization::step_up(
            self.config.clone(),
            url,
            Some(challenge),
            context,
            granted.as_deref(),
            &mut fill,
            now(),
        );
        self.run(url, flow, step).map(|_| true)
    }
}

fn bearer(token: &StoredToken) -> String {
    format!("Bearer {}", token.access_token)
}

/// The store key for the server at `url`: its canonical URL.
fn key(url: &str) -> String {
    HttpUrl::parse(url).map_or_else(|_| url.to_owned(), |u| u.canonical())
}

fn stored(done: Authorized) -> StoredToken {
    StoredToken {
        expires_at: done.token.expires_in.map(|seconds| now().saturating_add(seconds)),
        scope: done.token.scope.clone().or_else(|| done.scope.clone()),
        requested_scope: done.scope,
        access_token: done.token.access_token,
        refresh_token: done.token.refresh_token,
        context: done.context,
    }
}

fn now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

/// Fills `bytes` from the operating system's CSPRNG.
fn fill(bytes: &mut [u8]) {
    // The OS generator does not fail on the platforms std supports; if it ever did, the
    // flow's state and PKCE verifier would be predictable, so stop rather than go on.
    if getrandom::fill(bytes).is_err() {
        std::process::abort();
    }
}
