//! The device authorization grant (RFC 8628), for clients on machines without a browser:
//! the client asks the authorization server for a device code and a short user code, shows
//! the user where to enter it ([`Step::UserCode`]), and polls the token endpoint, waiting as
//! told ([`Step::Wait`]: `authorization_pending` at the interval, `slow_down` 5 s more each
//! time), until the user approves, refuses, or the code expires.

use crate::alloc_prelude::*;
use core::time::Duration;

use serde::Deserialize;

use super::{form_post, malformed, AuthError, Authorization, Response, State, Step};
use crate::auth::flow::{OAuthError, TokenRequest};
use crate::auth::metadata::AuthorizationServerMetadata;

/// The interval RFC 8628 §3.2 sets when the server names none.
const DEFAULT_INTERVAL: u64 = 5;
/// How much longer to wait after each `slow_down` (RFC 8628 §3.5).
const SLOW_DOWN: u64 = 5;
/// The longest a device code is polled for, whatever the server says (30 minutes).
const MAX_LIFETIME: u64 = 30 * 60;

/// What the user is shown to sign in on another device.
///
/// # Examples
///
/// ```
/// use talaria_core::auth::client::DeviceCode;
///
/// let code = DeviceCode {
///     user_code: "WDJB-MJHT".into(),
///     verification_uri: "https://auth.example.com/device".into(),
///     verification_uri_complete: None,
///     expires_in: 1800,
///     interval: std::time::Duration::from_secs(5),
/// };
/// assert_eq!(code.visit(), "https://auth.example.com/device");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceCode {
    /// The code the user enters.
    pub user_code: String,
    /// Where the user enters it.
    pub verification_uri: String,
    /// The same page with the code filled in, if the server offers one (for a link or a QR
    /// code).
    pub verification_uri_complete: Option<String>,
    /// How long the code lives, in seconds.
    pub expires_in: u64,
    /// How long to wait before the first poll, and between polls.
    pub interval: Duration,
}

impl DeviceCode {
    /// The page to send the user to: the one with the code filled in where there is one.
    #[must_use]
    pub fn visit(&self) -> &str {
        self.verification_uri_complete.as_deref().unwrap_or(&self.verification_uri)
    }
}

/// A device code being polled for its token.
#[derive(Debug)]
pub(super) struct Polling {
    /// The token endpoint.
    pub(super) url: String,
    device_code: String,
    interval: u64,
    /// Polls left before the code has certainly expired.
    polls_left: u64,
}

/// The device authorization response (RFC 8628 §3.2).
#[derive(Deserialize)]
struct DeviceAuthorizationResponse {
    device_code: String,
    user_code: String,
    verification_uri: String,
    #[serde(default)]
    verification_uri_complete: Option<String>,
    expires_in: u64,
    #[serde(default)]
    interval: Option<u64>,
}

impl Authorization {
    /// Asks the authorization server for a device code.
    pub(super) fn authorize_device(&mut self, metadata: &AuthorizationServerMetadata) -> Result<Step, AuthError> {
        let endpoint = metadata.device_authorization_endpoint.clone().ok_or(AuthError::NoDeviceAuthorization)?;
        super::secure(&endpoint)?;
        let (client_id, auth) = self.client_auth()?;
        let request = TokenRequest::device_authorization(self.scope.as_deref(), self.resource(), &client_id, &auth);
        self.state = State::DeviceAuthorizing { url: endpoint.clone() };
        Ok(Step::Send(form_post(endpoint, request)))
    }

    /// The device authorization answer: the code to show, then polling.
    pub(super) fn on_device_authorization(&mut self, url: &str, response: &Response) -> Step {
        if response.status != 200 {
            let error = serde_json::from_slice(&response.body).ok();
            return self.fail(AuthError::DeviceAuthorization { url: url.to_owned(), status: response.status, error });
        }
        let answer = match serde_json::from_slice::<DeviceAuthorizationResponse>(&response.body) {
            Ok(answer) => answer,
            Err(e) => return self.fail(malformed("device authorization response", url.to_owned(), &e)),
        };
        let token_endpoint = match self.metadata() {
            Ok(metadata) => metadata.token_endpoint.clone(),
            Err(e) => return self.fail(e),
        };
        let interval = answer.interval.unwrap_or(DEFAULT_INTERVAL).max(1);
        let lifetime = answer.expires_in.min(MAX_LIFETIME);
        self.state = State::DevicePolling(Polling {
            url: token_endpoint,
            device_code: answer.device_code,
            interval,
            polls_left: lifetime / interval + 1,
        });
        Step::UserCode(DeviceCode {
            user_code: answer.user_code,
            verification_uri: answer.verification_uri,
            verification_uri_complete: answer.verification_uri_complete,
            expires_in: answer.expires_in,
            interval: Duration::from_secs(interval),
        })
    }

    /// Polls the token endpoint, after a [`Step::UserCode`] or a [`Step::Wait`] (once the
    /// wait is over).
    pub fn poll(&mut self) -> Step {
        let State::DevicePolling(polling) = &self.state else {
            return self.fail(AuthError::Unexpected("a poll outside the device grant"));
        };
        if polling.polls_left == 0 {
            return self.fail(AuthError::DeviceCodeExpired);
        }
        let (url, device_code) = (polling.url.clone(), polling.device_code.clone());
        let step = self.client_auth().map(|(client_id, auth)| {
            let request = TokenRequest::device_code(&device_code, self.resource(), &client_id, &auth);
            Step::Send(form_post(url, request))
        });
        if let State::DevicePolling(polling) = &mut self.state {
            polling.polls_left -= 1;
        }
        self.settle(step)
    }

    /// The token endpoint's answer to a poll: the token, or wait and poll again.
    pub(super) fn on_device_token(&mut self, mut polling: Polling, response: &Response) -> Step {
        if response.status == 200 {
            return self.on_token(&polling.url, response);
        }
        let error = serde_json::from_slice::<OAuthError>(&response.body).ok();
        match error.as_ref().map(|e| e.error.as_str()) {
            Some("authorization_pending") => {}
            Some("slow_down") => polling.interval += SLOW_DOWN,
            Some("expired_token") => return self.fail(AuthError::DeviceCodeExpired),
            _ => return self.fail(AuthError::Token { url: polling.url, status: response.status, error }),
        }
        let wait = Duration::from_secs(polling.interval);
        self.state = State::DevicePolling(polling);
        Step::Wait(wait)
    }
}
