#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeMap as HashMap;
use std::sync::Arc;

use proptest::prelude::*;
use serde_json::{json, Value};

use super::*;
use crate::auth::challenge;
use crate::auth::encoding::{base64url, parse_form};
use crate::auth::flow::CallbackError;
use crate::auth::jwt::JwtSigner;
use crate::auth::pkce::sha256;

const SERVER: &str = "https://mcp.example.com/mcp";
const PRM: &str = "https://mcp.example.com/.well-known/oauth-protected-resource/mcp";
const ISSUER: &str = "https://auth.example.com";
const REDIRECT: &str = "http://127.0.0.1:4711/callback";

/// A scripted world: URL -> (status, body); anything else is a 404.
struct World {
    routes: HashMap<String, (u16, Value)>,
    /// Every request made, in order.
    log: Vec<Request>,
}

impl World {
    fn new() -> Self {
        let mut world = Self { routes: HashMap::new(), log: Vec::new() };
        world.route(
            PRM,
            200,
            json!({"resource": SERVER, "authorization_servers": [ISSUER], "scopes_supported": ["files:read"]}),
        );
        world.route(&format!("{ISSUER}/.well-known/oauth-authorization-server"), 200, as_metadata(ISSUER));
        world.route(&format!("{ISSUER}/register"), 201, json!({"client_id": "dyn-1"}));
        world.route(
            &format!("{ISSUER}/token"),
            200,
            json!({"access_token": "at-1", "token_type": "Bearer", "expires_in": 60, "refresh_token": "rt-1"}),
        );
        world
    }

    fn route(&mut self, url: &str, status: u16, body: Value) {
        self.routes.insert(url.to_owned(), (status, body));
    }

    fn answer(&mut self, request: &Request) -> Response {
        self.log.push(request.clone());
        match self.routes.get(&request.url) {
            Some((status, Value::String(raw))) => Response::new(*status, raw.clone().into_bytes()),
            Some((status, body)) => Response::new(*status, body.to_string().into_bytes()),
            None => Response::new(404, b"not found".to_vec()),
        }
    }

    fn urls(&self) -> Vec<&str> {
        self.log.iter().map(|r| r.url.as_str()).collect()
    }

    fn form(&self, url: &str) -> HashMap<String, String> {
        let request = self.log.iter().rev().find(|r| r.url == url).unwrap();
        parse_form(request.body.as_deref().unwrap_or_default()).into_iter().collect()
    }
}

fn as_metadata(issuer: &str) -> Value {
    json!({
        "issuer": issuer,
        "authorization_endpoint": format!("{issuer}/authorize"),
        "token_endpoint": format!("{issuer}/token"),
        "registration_endpoint": format!("{issuer}/register"),
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["none", "client_secret_basic"],
    })
}

/// The user agent: approves, redirecting to the redirect URI with a code and the state.
fn approve(url: &str) -> String {
    let query: HashMap<String, String> = parse_form(url.split_once('?').unwrap().1).into_iter().collect();
    format!("{}?code=the-code&state={}", query["redirect_uri"], query["state"])
}

fn counter() -> impl FnMut(&mut [u8]) {
    let mut n = 0u8;
    move |bytes: &mut [u8]| {
        for b in bytes {
            n = n.wrapping_add(1);
            *b = n;
        }
    }
}

/// Drives a flow to its end, answering from `world` and visiting with `visit`; the URLs the
/// user was sent to are in the second slot.
fn drive(
    world: &mut World,
    flow: &mut Authorization,
    mut step: Step,
    visit: &dyn Fn(&str) -> String,
) -> (Result<Authorized, AuthError>, Vec<String>) {
    let mut visited = Vec::new();
    for _ in 0..64 {
        step = match step {
            Step::Send(request) => flow.receive(&world.answer(&request)),
            Step::Visit(url) => {
                visited.push(url.clone());
                flow.redirected(&visit(&url))
            }
            Step::UserCode(code) => {
                visited.push(code.visit().to_owned());
                flow.poll()
            }
            Step::Wait(_) => flow.poll(),
            Step::Done(done) => return (Ok(*done), visited),
            Step::Failed(e) => return (Err(e), visited),
        };
    }
    panic!("the flow did not end");
}

fn run(world: &mut World, config: ClientConfig, header: &str) -> (Result<Authorized, AuthError>, Vec<String>) {
    let challenge = challenge::bearer(header);
    let (mut flow, step) =
        Authorization::start(Arc::new(config), SERVER, challenge.as_ref(), None, &mut counter(), 1000);
    drive(world, &mut flow, step, &approve)
}

fn interactive() -> ClientConfig {
    ClientConfig::authorization_code("talaria-test", REDIRECT)
}

#[test]
fn the_authorization_code_flow_end_to_end() {
    let mut world = World::new();
    let header = format!(r#"Bearer resource_metadata="{PRM}", scope="files:read files:write""#);
    let (done, visited) = run(&mut world, interactive(), &header);
    let done = done.unwrap();
    assert_eq!(done.token.access_token, "at-1");
    assert_eq!(done.scope.as_deref(), Some("files:read files:write"));
    assert_eq!(done.context.client.client_id, "dyn-1");
    assert_eq!(done.context.resource, SERVER);
    assert_eq!(
        world.urls(),
        [
            PRM,
            "https://auth.example.com/.well-known/oauth-authorization-server",
            "https://auth.example.com/register",
            "https://auth.example.com/token"
        ]
    );
    // Registration: native app, public client (the server takes `none`), the redirect URI.
    let registration: Value = serde_json::from_str(world.log[2].body.as_deref().unwrap()).unwrap();
    assert_eq!(registration["application_type"], "native");
    assert_eq!(registration["token_endpoint_auth_method"], "none");
    assert_eq!(registration["redirect_uris"], json!([REDIRECT]));
    // The authorization URL: PKCE S256, state, resource, the challenged scope.
    let url = &visited[0];
    assert!(url.starts_with("https://auth.example.com/authorize?"));
    let query: HashMap<String, String> = parse_form(url.split_once('?').unwrap().1).into_iter().collect();
    assert_eq!(query["code_challenge_method"], "S256");
    assert_eq!(query["resource"], SERVER);
    assert_eq!(query["client_id"], "dyn-1");
    // The token request: the verifier matches the challenge; the same resource; public client.
    let form = world.form("https://auth.example.com/token");
    assert_eq!(form["grant_type"], "authorization_code");
    assert_eq!(base64url(&sha256(form["code_verifier"].as_bytes())), query["code_challenge"]);
    assert_eq!(form["resource"], query["resource"]);
    assert_eq!(form["client_id"], "dyn-1");
    assert!(world.log[3].headers.iter().all(|(name, _)| *name != "Authorization"));
}

#[test]
fn discovery_follows_the_spec_order_and_scope_falls_back_to_scopes_supported() {
    // No hint: the path-inserted well-known URL; an issuer with a path: its inserted and
    // appended variants, never the root one.
    let mut world = World::new();
    let issuer = "https://auth.example.com/tenant1";
    world.route(
        PRM,
        200,
        json!({"resource": SERVER, "authorization_servers": [issuer], "scopes_supported": ["a", "b"]}),
    );
    world.route("https://auth.example.com/tenant1/.well-known/openid-configuration", 200, as_metadata(issuer));
    world.route(&format!("{issuer}/register"), 201, json!({"client_id": "t1"}));
    world.route(&format!("{issuer}/token"), 200, json!({"access_token": "t", "token_type": "Bearer"}));
    let (done, visited) = run(&mut world, interactive(), "Bearer");
    assert!(done.is_ok(), "{done:?}");
    assert_eq!(
        &world.urls()[..4],
        [
            PRM,
            "https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
            "https://auth.example.com/.well-known/openid-configuration/tenant1",
            "https://auth.example.com/tenant1/.well-known/openid-configuration",
        ]
    );
    assert!(visited[0].contains("&scope=a+b"), "{}", visited[0]);
}

#[test]
fn a_2025_03_26_server_without_metadata_uses_the_fallback_endpoints() {
    let mut world = World::new();
    world.routes.clear();
    world.route("https://mcp.example.com/register", 201, json!({"client_id": "c", "client_secret": "s"}));
    world.route("https://mcp.example.com/token", 200, json!({"access_token": "t", "token_type": "bearer"}));
    let (done, visited) = run(&mut world, interactive(), "Bearer");
    let done = done.unwrap();
    assert!(visited[0].starts_with("https://mcp.example.com/authorize?"));
    assert!(world.urls().contains(&"https://mcp.example.com/.well-known/oauth-protected-resource"));
    // No scope anywhere: none asked. A secret and no listed methods: client_secret_basic.
    assert_eq!(done.scope, None);
    let token = world.log.last().unwrap();
    assert!(token.headers.iter().any(|(name, value)| *name == "Authorization" && value.starts_with("Basic ")));
    assert!(!done.context.issuer_checked);
}

#[test]
fn a_2025_03_26_server_with_metadata_at_its_origin_may_name_another_issuer_path() {
    let mut world = World::new();
    world.routes.clear();
    let mut metadata = as_metadata("https://mcp.example.com/oauth");
    metadata["authorization_endpoint"] = json!("https://mcp.example.com/oauth/authorize");
    metadata["token_endpoint"] = json!("https://mcp.example.com/oauth/token");
    metadata["registration_endpoint"] = json!("https://mcp.example.com/oauth/register");
    world.route("https://mcp.example.com/.well-known/oauth-authorization-server", 200, metadata);
    world.route("https://mcp.example.com/oauth/register", 201, json!({"client_id": "c"}));
    world.route("https://mcp.example.com/oauth/token", 200, json!({"access_token": "t", "token_type": "Bearer"}));
    let (done, _) = run(&mut world, interactive(), "Bearer");
    assert!(done.is_ok(), "{done:?}");
}

#[test]
fn client_metadata_documents_and_preregistration_skip_registration() {
    let mut world = World::new();
    let mut metadata = as_metadata(ISSUER);
    metadata["client_id_metadata_document_supported"] = json!(true);
    world.route(&format!("{ISSUER}/.well-known/oauth-authorization-server"), 200, metadata);
    let config = interactive().with_metadata_document("https://app.example.com/client.json");
    let (done, visited) = run(&mut world, config, "Bearer");
    assert_eq!(done.unwrap().context.client.client_id, "https://app.example.com/client.json");
    assert!(visited[0].contains("client_id=https%3A%2F%2Fapp.example.com%2Fclient.json"));
    assert!(!world.urls().iter().any(|u| u.ends_with("/register")));

    let mut world = World::new();
    let config = interactive().with_client(ClientInformation::new("pre", Some("sec")));
    let (done, _) = run(&mut world, config, "Bearer");
    assert_eq!(done.unwrap().context.client.client_id, "pre");
    assert!(!world.urls().iter().any(|u| u.ends_with("/register")));
}

#[test]
fn offline_access_is_asked_only_where_listed() {
    let mut world = World::new();
    let mut metadata = as_metadata(ISSUER);
    metadata["scopes_supported"] = json!(["files:read", "offline_access"]);
    world.route(&format!("{ISSUER}/.well-known/oauth-authorization-server"), 200, metadata);
    let (done, _) = run(&mut world, interactive(), "Bearer");
    assert_eq!(done.unwrap().scope.as_deref(), Some("files:read offline_access"));
    let (done, _) = run(&mut World::new(), interactive(), "Bearer");
    assert_eq!(done.unwrap().scope.as_deref(), Some("files:read"));
}

struct FakeSigner;
impl JwtSigner for FakeSigner {
    fn algorithm(&self) -> &str {
        "ES256"
    }
    fn sign(&self, _: &[u8]) -> Result<Vec<u8>, String> {
        Ok(vec![1, 2, 3])
    }
}

#[test]
fn client_credentials_with_each_client_authentication() {
    for (methods, expect) in [
        (json!(["client_secret_basic"]), "basic"),
        (json!(["client_secret_post"]), "post"),
        (json!(["private_key_jwt"]), "jwt"),
    ] {
        let mut world = World::new();
        let mut metadata = as_metadata(ISSUER);
        metadata["token_endpoint_auth_methods_supported"] = methods;
        world.route(&format!("{ISSUER}/.well-known/oauth-authorization-server"), 200, metadata);
        let secret = (expect != "jwt").then_some("sec");
        let config = ClientConfig::client_credentials("m", ClientInformation::new("cid", secret))
            .with_signer(Arc::new(FakeSigner));
        let (done, visited) = run(&mut world, config, "Bearer");
        assert!(done.is_ok(), "{expect}: {done:?}");
        assert!(visited.is_empty());
        let form = world.form(&format!("{ISSUER}/token"));
        assert_eq!(form["grant_type"], "client_credentials");
        assert_eq!(form["resource"], SERVER);
        let basic = world.log.last().unwrap().headers.iter().any(|(n, _)| *n == "Authorization");
        match expect {
            "basic" => assert!(basic && !form.contains_key("client_secret")),
            "post" => assert_eq!(form["client_secret"], "sec"),
            _ => {
                assert_eq!(form["client_assertion_type"], crate::auth::jwt::JWT_BEARER_ASSERTION);
                assert_eq!(form["client_assertion"].split('.').count(), 3);
            }
        }
    }
    // private_key_jwt only, and no key: a clear error, no token request.
    let mut world = World::new();
    let mut metadata = as_metadata(ISSUER);
    metadata["token_endpoint_auth_methods_supported"] = json!(["private_key_jwt"]);
    world.route(&format!("{ISSUER}/.well-known/oauth-authorization-server"), 200, metadata);
    let config = ClientConfig::client_credentials("m", ClientInformation::new("cid", None));
    assert_eq!(run(&mut world, config, "Bearer").0.unwrap_err(), AuthError::NoSigner);
}

#[test]
fn an_identity_assertion_is_exchanged_at_the_idp_then_presented() {
    let mut world = World::new();
    world.route("https://idp.example.com/token", 200, json!({"access_token": "the-jag", "issued_token_type": "urn:ietf:params:oauth:token-type:id-jag", "token_type": "N_A"}));
    let config = ClientConfig::client_credentials("x", ClientInformation::new("as-client", Some("as-secret")))
        .with_grant(Grant::IdentityAssertion(IdentityAssertion {
            token_endpoint: "https://idp.example.com/token".into(),
            id_token: "the-id-token".into(),
            client: ClientInformation::new("idp-client", None),
        }));
    let (done, _) = run(&mut world, config, "Bearer");
    assert!(done.is_ok(), "{done:?}");
    let exchange = world.form("https://idp.example.com/token");
    assert_eq!(exchange["subject_token"], "the-id-token");
    assert_eq!(exchange["audience"], ISSUER);
    assert_eq!(exchange["resource"], SERVER);
    assert_eq!(exchange["requested_token_type"], crate::auth::flow::ID_JAG_TOKEN_TYPE);
    let grant = world.form(&format!("{ISSUER}/token"));
    assert_eq!(grant["grant_type"], crate::auth::flow::JWT_BEARER_GRANT);
    assert_eq!(grant["assertion"], "the-jag");
}

#[test]
fn a_step_up_keeps_the_granted_scope_and_skips_discovery() {
    let mut world = World::new();
    let (done, _) = run(&mut world, interactive(), "Bearer");
    let first = done.unwrap();
    world.log.clear();
    let challenge = challenge::bearer(r#"Bearer error="insufficient_scope", scope="files:write""#);
    let (mut flow, step) = Authorization::step_up(
        Arc::new(interactive()),
        SERVER,
        challenge.as_ref(),
        Some(first.context.clone()),
        first.scope.as_deref(),
        &mut counter(),
        0,
    );
    let (done, visited) = drive(&mut world, &mut flow, step, &approve);
    assert_eq!(done.unwrap().scope.as_deref(), Some("files:read files:write"));
    assert!(visited[0].contains("scope=files%3Aread+files%3Awrite"));
    assert_eq!(world.urls(), ["https://auth.example.com/token"]);

    // A refresh goes straight to the token endpoint.
    world.log.clear();
    let (mut flow, step) = Authorization::refresh(Arc::new(interactive()), first.context, "rt-1", &mut counter(), 0);
    let (done, _) = drive(&mut world, &mut flow, step, &approve);
    assert!(done.is_ok());
    let form = world.form("https://auth.example.com/token");
    assert_eq!((form["grant_type"].as_str(), form["refresh_token"].as_str()), ("refresh_token", "rt-1"));
}

/// Each hostile world, the error it ends in, and the URL prefixes that must never have been
/// asked anything (so no code, secret or token reached them).
#[test]
fn the_table_of_hostile_inputs() {
    type Setup = fn(&mut World);
    type Case = (&'static str, Setup, fn(&AuthError) -> bool, &'static str);
    let evil_token = "https://evil.example.com";
    let cases: Vec<Case> = vec![
        (
            "resource metadata for another server",
            |w| {
                w.route(
                    PRM,
                    200,
                    json!({"resource": "https://evil.example.com/mcp", "authorization_servers": [ISSUER]}),
                );
            },
            |e| matches!(e, AuthError::Metadata(MetadataError::ResourceMismatch { .. })),
            ISSUER,
        ),
        (
            "an issuer that is not the one named",
            |w| {
                w.route(
                    &format!("{ISSUER}/.well-known/oauth-authorization-server"),
                    200,
                    as_metadata("https://evil.example.com"),
                );
            },
            |e| matches!(e, AuthError::Metadata(MetadataError::IssuerMismatch { .. })),
            "https://auth.example.com/register",
        ),
        (
            "malformed resource metadata",
            |w| {
                w.route(PRM, 200, json!("{not json"));
            },
            |e| matches!(e, AuthError::Malformed { what: "protected resource metadata", .. }),
            ISSUER,
        ),
        (
            "malformed authorization server metadata",
            |w| {
                w.route(&format!("{ISSUER}/.well-known/oauth-authorization-server"), 200, json!({"issuer": 7}));
            },
            |e| matches!(e, AuthError::Malformed { .. }),
            "https://auth.example.com/register",
        ),
        (
            "a token endpoint in clear text on another host",
            |w| {
                let mut m = as_metadata(ISSUER);
                m["token_endpoint"] = json!("http://evil.example.com/token");
                w.route(&format!("{ISSUER}/.well-known/oauth-authorization-server"), 200, m);
            },
            |e| matches!(e, AuthError::Insecure(_)),
            "http://evil.example.com",
        ),
        (
            "an authorization server without PKCE",
            |w| {
                let mut m = as_metadata(ISSUER);
                m.as_object_mut().unwrap().remove("code_challenge_methods_supported");
                w.route(&format!("{ISSUER}/.well-known/oauth-authorization-server"), 200, m);
            },
            |e| matches!(e, AuthError::Metadata(MetadataError::NoPkce)),
            "https://auth.example.com/register",
        ),
        (
            "no authorization server named",
            |w| {
                w.route(PRM, 200, json!({"resource": SERVER}));
            },
            |e| matches!(e, AuthError::NoAuthorizationServer),
            ISSUER,
        ),
        (
            "registration refused",
            |w| {
                w.route(&format!("{ISSUER}/register"), 400, json!({"error": "invalid_client_metadata"}));
            },
            |e| matches!(e, AuthError::Registration { status: 400, error: Some(_), .. }),
            "https://auth.example.com/token",
        ),
        (
            "a token that is not a bearer token",
            |w| {
                w.route(&format!("{ISSUER}/token"), 200, json!({"access_token": "x", "token_type": "mac"}));
            },
            |e| matches!(e, AuthError::NotBearer(_)),
            evil_token,
        ),
        (
            "the token endpoint refuses",
            |w| {
                w.route(&format!("{ISSUER}/token"), 400, json!({"error": "invalid_grant"}));
            },
            |e| matches!(e, AuthError::Token { status: 400, error: Some(_), .. }),
            evil_token,
        ),
        (
            "an oversized or binary answer",
            |w| {
                w.route(PRM, 200, json!("\u{0}\u{ff}".repeat(10_000)));
            },
            |e| matches!(e, AuthError::Malformed { .. }),
            ISSUER,
        ),
    ];
    for (name, setup, expected, never) in cases {
        let mut world = World::new();
        setup(&mut world);
        let (done, _) = run(&mut world, interactive(), &format!(r#"Bearer resource_metadata="{PRM}""#));
        let error = done.expect_err(name);
        assert!(expected(&error), "{name}: {error:?}");
        assert!(!error.to_string().is_empty());
        assert!(world.urls().iter().all(|u| !u.starts_with(never)), "{name}: {:?}", world.urls());
    }
}

#[test]
fn hostile_redirects_are_refused_before_any_token_request() {
    type Visit = (&'static str, fn(&str) -> String, fn(&AuthError) -> bool);
    let visits: [Visit; 4] = [
        (
            "a forged state",
            |url| approve(url).replace("state=", "state=x"),
            |e| matches!(e, AuthError::Callback(CallbackError::StateMismatch)),
        ),
        (
            "another issuer",
            |url| format!("{}&iss=https%3A%2F%2Fevil.example.com", approve(url)),
            |e| matches!(e, AuthError::Callback(CallbackError::IssuerMismatch { .. })),
        ),
        (
            "another origin",
            |url| approve(url).replace("127.0.0.1:4711", "evil.example.com"),
            |e| matches!(e, AuthError::RedirectMismatch(_)),
        ),
        (
            "the user refused",
            |url| approve(url).replace("code=the-code", "error=access_denied"),
            |e| matches!(e, AuthError::Callback(CallbackError::Refused { .. })),
        ),
    ];
    for (name, visit, expected) in visits {
        let mut world = World::new();
        let (mut flow, step) = Authorization::start(Arc::new(interactive()), SERVER, None, None, &mut counter(), 0);
        let (done, _) = drive(&mut world, &mut flow, step, &visit);
        let error = done.expect_err(name);
        assert!(expected(&error), "{name}: {error:?}");
        assert!(!world.urls().iter().any(|u| u.ends_with("/token")), "{name}");
    }
}

#[test]
fn unreachable_metadata_urls_are_skipped_and_misuse_is_an_error() {
    let mut world = World::new();
    let (mut flow, step) = Authorization::start(Arc::new(interactive()), SERVER, None, None, &mut counter(), 0);
    let Step::Send(first) = step else { panic!() };
    assert_eq!(first.url, PRM);
    // The first URL cannot be reached: the next one is asked.
    let Step::Send(second) = flow.fail_transport("connection refused") else { panic!() };
    assert_eq!(second.url, "https://mcp.example.com/.well-known/oauth-protected-resource");
    // A redirect while a response is awaited is a misuse, reported, not a panic.
    assert!(matches!(flow.redirected("http://127.0.0.1:4711/callback?code=x"), Step::Failed(AuthError::Unexpected(_))));
    assert!(matches!(flow.receive(&world.answer(&second)), Step::Failed(AuthError::Unexpected(_))));
}

/// [`World`] with a device authorization endpoint.
fn device_world() -> World {
    let mut world = World::new();
    let mut metadata = as_metadata(ISSUER);
    metadata["device_authorization_endpoint"] = json!(format!("{ISSUER}/device"));
    world.route(&format!("{ISSUER}/.well-known/oauth-authorization-server"), 200, metadata);
    world.route(
        &format!("{ISSUER}/device"),
        200,
        json!({"device_code": "dc-1", "user_code": "WDJB-MJHT", "verification_uri": format!("{ISSUER}/activate"),
               "verification_uri_complete": format!("{ISSUER}/activate?user_code=WDJB-MJHT"), "expires_in": 60, "interval": 2}),
    );
    world
}

#[test]
fn the_device_grant_shows_the_code_then_polls_as_told_until_approved() {
    let mut world = device_world();
    let token = format!("{ISSUER}/token");
    let config = ClientConfig::device_code("talaria-test");
    let (mut flow, mut step) = Authorization::start(Arc::new(config), SERVER, None, None, &mut counter(), 0);
    // Discovery, registration (as a device client), then the device authorization request.
    let code = loop {
        step = match step {
            Step::Send(request) => flow.receive(&world.answer(&request)),
            Step::UserCode(code) => break code,
            other => panic!("{other:?}"),
        };
    };
    let registered: Value = serde_json::from_str(world.log[2].body.as_deref().unwrap()).unwrap();
    assert_eq!(registered["grant_types"], json!([crate::auth::flow::DEVICE_CODE_GRANT, "refresh_token"]));
    assert!(registered.get("redirect_uris").is_none_or(|r| r.as_array().is_some_and(Vec::is_empty)), "{registered}");
    assert_eq!(code.user_code, "WDJB-MJHT");
    assert_eq!(code.visit(), format!("{ISSUER}/activate?user_code=WDJB-MJHT"));
    assert_eq!(code.interval, std::time::Duration::from_secs(2));
    let asked = world.form(&format!("{ISSUER}/device"));
    assert_eq!((asked["client_id"].as_str(), asked["resource"].as_str()), ("dyn-1", SERVER));
    // Pending, then slow down (5 s more), then the token.
    let mut waits = Vec::new();
    let answers = [
        (400, json!({"error": "authorization_pending"})),
        (400, json!({"error": "slow_down"})),
        (200, json!({"access_token": "at-dev", "token_type": "Bearer", "refresh_token": "rt-dev"})),
    ];
    let mut step = flow.poll();
    for (status, body) in answers {
        let Step::Send(request) = step else { panic!("{step:?}") };
        assert_eq!(request.url, token);
        let form: HashMap<String, String> = parse_form(request.body.as_deref().unwrap()).into_iter().collect();
        assert_eq!(
            (form["grant_type"].as_str(), form["device_code"].as_str()),
            (crate::auth::flow::DEVICE_CODE_GRANT, "dc-1")
        );
        step = match flow.receive(&Response::new(status, body.to_string().into_bytes())) {
            Step::Wait(wait) => {
                waits.push(wait.as_secs());
                flow.poll()
            }
            other => other,
        };
    }
    let Step::Done(done) = step else { panic!("{step:?}") };
    assert_eq!(done.token.access_token, "at-dev");
    assert_eq!(waits, [2, 7], "the interval, then 5 s more after slow_down");
}

#[test]
fn the_device_grant_ends_on_refusal_expiry_or_a_server_without_it() {
    let finish = |world: &mut World, last: Option<(u16, Value)>| {
        let config = ClientConfig::device_code("talaria-test");
        let (mut flow, mut step) = Authorization::start(Arc::new(config), SERVER, None, None, &mut counter(), 0);
        for _ in 0..400 {
            step = match step {
                Step::Send(request) if request.url.ends_with("/token") => {
                    let (status, body) = last.clone().unwrap_or((400, json!({"error": "authorization_pending"})));
                    flow.receive(&Response::new(status, body.to_string().into_bytes()))
                }
                Step::Send(request) => flow.receive(&world.answer(&request)),
                Step::UserCode(_) | Step::Wait(_) => flow.poll(),
                Step::Failed(e) => return e,
                other => panic!("{other:?}"),
            };
        }
        panic!("the flow did not end");
    };
    let denied = finish(&mut device_world(), Some((400, json!({"error": "access_denied"}))));
    assert!(matches!(&denied, AuthError::Token { error: Some(e), .. } if e.error == "access_denied"), "{denied:?}");
    let expired = finish(&mut device_world(), Some((400, json!({"error": "expired_token"}))));
    assert_eq!(expired, AuthError::DeviceCodeExpired);
    // Pending forever: the polls stop once the code has certainly expired (60 s / 2 s).
    assert_eq!(finish(&mut device_world(), None), AuthError::DeviceCodeExpired);
    // No device endpoint: said so, before anything is asked of the user.
    assert_eq!(finish(&mut World::new(), None), AuthError::NoDeviceAuthorization);
    // A poll out of turn is an error, not a panic.
    let (mut flow, _) = Authorization::start(Arc::new(interactive()), SERVER, None, None, &mut counter(), 0);
    assert!(matches!(flow.poll(), Step::Failed(AuthError::Unexpected(_))));
}

proptest! {
    /// Whatever the servers answer, the flow ends (done or failed) within a bounded number of
    /// steps and never panics.
    #[test]
    fn any_answers_end_the_flow(answers in proptest::collection::vec((100u16..600, proptest::collection::vec(any::<u8>(), 0..64), any::<bool>()), 1..40)) {
        let (mut flow, mut step) = Authorization::start(Arc::new(interactive()), SERVER, None, None, &mut counter(), 0);
        let mut answers = answers.into_iter().cycle();
        let mut ended = false;
        for _ in 0..64 {
            let (status, body, json_ok) = answers.next().unwrap();
            step = match step {
                Step::Send(request) => {
                    // Half the time, a plausible document for the URL asked.
                    let body = if json_ok { plausible(&request.url) } else { body };
                    flow.receive(&Response::new(if json_ok { 200 } else { status }, body))
                }
                Step::Visit(url) => flow.redirected(&approve(&url)),
                Step::UserCode(_) | Step::Wait(_) => flow.poll(),
                Step::Done(_) | Step::Failed(_) => { ended = true; break; }
            };
        }
        prop_assert!(ended);
    }
}

fn plausible(url: &str) -> Vec<u8> {
    let body = if url.contains("protected-resource") {
        json!({"resource": SERVER, "authorization_servers": [ISSUER]})
    } else if url.contains(".well-known") {
        as_metadata(ISSUER)
    } else if url.ends_with("/register") {
        json!({"client_id": "c"})
    } else {
        json!({"access_token": "t", "token_type": "Bearer"})
    };
    body.to_string().into_bytes()
}
