//! A small OAuth 2.1 authorization server for end-to-end tests, on 127.0.0.1 (`tiny_http`):
//! metadata (RFC 8414), dynamic registration, an authorization endpoint that approves at
//! once (redirecting with `code`, `state` and `iss`), and a token endpoint for the
//! authorization code (PKCE S256 checked), refresh and device (RFC 8628: `/device?user_code=`
//! plays the user approving on another device) grants. It keeps every token it issued
//! so the MCP server under test can verify them, and counts the grants.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use serde_json::{json, Value};
use talaria::core::auth::encoding::{base64url, parse_form};
use talaria::core::auth::pkce::sha256;
use talaria::core::auth::resource::TokenInfo;
use tiny_http::{Header, Response, Server};

/// What the server issued and saw.
#[derive(Debug, Default)]
pub(crate) struct Ledger {
    /// Registered client ids and their redirect URIs.
    pub(crate) clients: BTreeMap<String, Vec<String>>,
    /// Pending codes: code -> (client, PKCE challenge, redirect URI, resource, scope).
    codes: BTreeMap<String, (String, String, String, String, String)>,
    /// Access tokens: token -> (subject, scopes, resource).
    pub(crate) tokens: BTreeMap<String, (String, Vec<String>, String)>,
    /// Refresh tokens: token -> (scope, resource).
    refresh: BTreeMap<String, (String, String)>,
    /// Grant types served, in order.
    pub(crate) grants: Vec<String>,
    /// Every resource parameter received.
    pub(crate) resources: Vec<String>,
    /// Device codes: code -> (client, resource, scope, user code, approved).
    devices: BTreeMap<String, (String, String, String, String, bool)>,
    counter: u64,
}

/// A running test authorization server.
pub(crate) struct TestAuthorizationServer {
    /// Its issuer URL.
    pub(crate) issuer: String,
    /// What it issued.
    pub(crate) ledger: Arc<Mutex<Ledger>>,
    server: Arc<Server>,
    thread: Option<JoinHandle<()>>,
}

impl TestAuthorizationServer {
    /// Starts on a free port; tokens live `lifetime` seconds.
    pub(crate) fn start(lifetime: u64) -> Self {
        let server = Arc::new(Server::http("127.0.0.1:0").unwrap());
        let issuer = format!("http://{}", server.server_addr().to_ip().unwrap());
        let ledger = Arc::new(Mutex::new(Ledger::default()));
        let thread = {
            let (server, ledger, issuer) = (server.clone(), ledger.clone(), issuer.clone());
            std::thread::spawn(move || {
                for mut request in server.incoming_requests() {
                    let mut body = String::new();
                    let _ = request.as_reader().read_to_string(&mut body);
                    let (status, headers, answer) =
                        route(&issuer, &ledger, lifetime, request.method().as_str(), request.url(), &body);
                    let mut response = Response::from_string(answer.to_string()).with_status_code(status);
                    response.add_header(Header::from_bytes("Content-Type", "application/json").unwrap());
                    for (name, value) in headers {
                        response.add_header(Header::from_bytes(name, value.as_bytes()).unwrap());
                    }
                    let _ = request.respond(response);
                }
            })
        };
        Self { issuer, ledger, server, thread: Some(thread) }
    }

    /// The MCP server's verifier: a token this server issued for `resource`, with its scopes.
    pub(crate) fn verifier(
        &self,
        resource: &str,
    ) -> impl Fn(&str) -> Result<TokenInfo, String> + Send + Sync + 'static {
        let (ledger, resource) = (self.ledger.clone(), resource.to_owned());
        move |token| {
            let ledger = ledger.lock().unwrap();
            let (subject, scopes, audience) = ledger.tokens.get(token).ok_or("unknown token")?;
            if *audience != resource {
                return Err(format!("the token is for {audience}"));
            }
            let scopes: Vec<&str> = scopes.iter().map(String::as_str).collect();
            Ok(TokenInfo::new(subject, &scopes))
        }
    }
}

impl Drop for TestAuthorizationServer {
    fn drop(&mut self) {
        self.server.unblock();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The device grant's type (RFC 8628).
const DEVICE_GRANT: &str = "urn:ietf:params:oauth:grant-type:device_code";

/// The scopes this server grants.
const SCOPES: [&str; 3] = ["mcp:read", "mcp:write", "offline_access"];

type Answer = (u16, Vec<(&'static str, String)>, Value);

fn route(issuer: &str, ledger: &Mutex<Ledger>, lifetime: u64, method: &str, url: &str, body: &str) -> Answer {
    let (path, query) = url.split_once('?').unwrap_or((url, ""));
    let mut ledger = ledger.lock().unwrap();
    ledger.counter += 1;
    let n = ledger.counter;
    let error = |status: u16, code: &str| (status, Vec::new(), json!({"error": code}));
    match (method, path) {
        ("GET", "/.well-known/oauth-authorization-server") => (
            200,
            Vec::new(),
            json!({
                "issuer": issuer,
                "authorization_endpoint": format!("{issuer}/authorize"),
                "token_endpoint": format!("{issuer}/token"),
                "registration_endpoint": format!("{issuer}/register"),
                "scopes_supported": SCOPES,
                "response_types_supported": ["code"],
                "grant_types_supported": ["authorization_code", "refresh_token", DEVICE_GRANT],
                "device_authorization_endpoint": format!("{issuer}/device_authorization"),
                "code_challenge_methods_supported": ["S256"],
                "token_endpoint_auth_methods_supported": ["none"],
                "authorization_response_iss_parameter_supported": true,
            }),
        ),
        ("POST", "/register") => {
            let metadata: Value = serde_json::from_str(body).unwrap_or_default();
            let redirects: Vec<String> = serde_json::from_value(metadata["redirect_uris"].clone()).unwrap_or_default();
            let id = format!("client-{n}");
            ledger.clients.insert(id.clone(), redirects);
            (201, Vec::new(), json!({"client_id": id, "token_endpoint_auth_method": "none"}))
        }
        ("GET", "/authorize") => {
            let q: BTreeMap<String, String> = parse_form(query).into_iter().collect();
            let get = |k: &str| q.get(k).cloned().unwrap_or_default();
            let registered = ledger.clients.get(&get("client_id")).is_some_and(|r| r.contains(&get("redirect_uri")));
            if !registered || get("code_challenge_method") != "S256" || get("resource").is_empty() {
                return error(400, "invalid_request");
            }
            ledger.resources.push(get("resource"));
            let code = format!("code-{n}");
            let pending = (get("client_id"), get("code_challenge"), get("redirect_uri"), get("resource"), get("scope"));
            ledger.codes.insert(code.clone(), pending);
            let location = format!(
                "{}?code={code}&state={}&iss={}",
                get("redirect_uri"),
                talaria::core::auth::encoding::form_encode(&get("state")),
                talaria::core::auth::encoding::form_encode(issuer)
            );
            (302, vec![("Location", location)], json!({}))
        }
        ("POST", "/device_authorization") => {
            let form: BTreeMap<String, String> = parse_form(body).into_iter().collect();
            let get = |k: &str| form.get(k).cloned().unwrap_or_default();
            if !ledger.clients.contains_key(&get("client_id")) || get("resource").is_empty() {
                return error(400, "invalid_request");
            }
            let (device, user) = (format!("device-{n}"), format!("USER-{n}"));
            let pending = (get("client_id"), get("resource"), get("scope"), user.clone(), false);
            ledger.devices.insert(device.clone(), pending);
            let answer = json!({"device_code": device, "user_code": user, "verification_uri": format!("{issuer}/device"),
                "verification_uri_complete": format!("{issuer}/device?user_code={user}"), "expires_in": 300, "interval": 1});
            (200, Vec::new(), answer)
        }
        ("GET", "/device") => {
            // The user, on another device, approves the code.
            let q: BTreeMap<String, String> = parse_form(query).into_iter().collect();
            let user = q.get("user_code").cloned().unwrap_or_default();
            let Some(entry) = ledger.devices.values_mut().find(|d| d.3 == user) else {
                return error(404, "unknown_code");
            };
            entry.4 = true;
            (200, Vec::new(), json!({"approved": user}))
        }
        ("POST", "/token") if body.contains("device_code=") => {
            let form: BTreeMap<String, String> = parse_form(body).into_iter().collect();
            let get = |k: &str| form.get(k).cloned().unwrap_or_default();
            ledger.grants.push(get("grant_type"));
            let Some((client, resource, scope, _, approved)) = ledger.devices.get(&get("device_code")).cloned() else {
                return error(400, "invalid_grant");
            };
            if client != get("client_id") || resource != get("resource") {
                return error(400, "invalid_grant");
            }
            if !approved {
                return error(400, "authorization_pending");
            }
            ledger.devices.remove(&get("device_code"));
            let access = format!("access-{n}");
            let scopes = scope.split_whitespace().filter(|s| SCOPES.contains(s)).map(str::to_owned).collect();
            ledger.tokens.insert(access.clone(), ("alice".into(), scopes, resource));
            (200, Vec::new(), json!({"access_token": access, "token_type": "Bearer", "expires_in": lifetime}))
        }
        ("POST", "/token") => {
            let form: BTreeMap<String, String> = parse_form(body).into_iter().collect();
            let get = |k: &str| form.get(k).cloned().unwrap_or_default();
            ledger.grants.push(get("grant_type"));
            ledger.resources.push(get("resource"));
            let (scope, resource) = match get("grant_type").as_str() {
                "authorization_code" => {
                    let Some((client, challenge, redirect, resource, scope)) = ledger.codes.remove(&get("code")) else {
                        return error(400, "invalid_grant");
                    };
                    let verified = base64url(&sha256(get("code_verifier").as_bytes())) == challenge;
                    if !verified
                        || client != get("client_id")
                        || redirect != get("redirect_uri")
                        || resource != get("resource")
                    {
                        return error(400, "invalid_grant");
                    }
                    (scope, resource)
                }
                "refresh_token" => match ledger.refresh.remove(&get("refresh_token")) {
                    Some(granted) => granted,
                    None => return error(400, "invalid_grant"),
                },
                _ => return error(400, "unsupported_grant_type"),
            };
            // Only the scopes it knows are granted; others are dropped silently.
            let scope = scope.split_whitespace().filter(|s| SCOPES.contains(s)).collect::<Vec<_>>().join(" ");
            let access = format!("access-{n}");
            let refresh = format!("refresh-{n}");
            let scopes = scope.split_whitespace().map(str::to_owned).collect();
            ledger.tokens.insert(access.clone(), ("alice".into(), scopes, resource.clone()));
            ledger.refresh.insert(refresh.clone(), (scope.clone(), resource));
            (
                200,
                Vec::new(),
                json!({"access_token": access, "token_type": "Bearer", "expires_in": lifetime, "refresh_token": refresh, "scope": scope}),
            )
        }
        _ => error(404, "not_found"),
    }
}
