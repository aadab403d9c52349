//! OAuth end to end on 127.0.0.1: our client (`OAuthClient`) and our HTTP servers (a
//! protected resource) against the small authorization server in `test_as`: discovery,
//! dynamic registration, the authorization code flow with PKCE, refresh, the identity
//! reaching the handler, a scope the token lacks, and a token kept on disk.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod test_as;

use std::sync::Arc;

use serde_json::{json, Value};
use talaria::auth::{FileTokenStore, HeadlessRedirect, OAuthClient, TokenStore};
use talaria::client::{Client, ClientError, ClientOptions};
use talaria::core::auth::client::ClientConfig;
use talaria::core::auth::resource::ProtectedResource;
use talaria::core::schema::tools::{CallToolResult, Tool};
use talaria::core::server::Router;
use talaria::core::session::ClientMode;
use talaria::http::{HttpServer, HttpServerOptions, SmolHttpServer};
use talaria::server::Server;
use test_as::TestAuthorizationServer;

/// A server whose `whoami` tool answers with the caller's identity.
fn whoami_server() -> Server<()> {
    let schema = serde_json::from_value(json!({"type": "object"})).unwrap();
    let router = Router::<()>::builder()
        .tool(Tool::new("whoami", schema), |ctx, _: Value| {
            let identity = ctx.transport().and_then(|t| t.identity.clone()).unwrap_or_default();
            Ok(CallToolResult::text(identity))
        })
        .build();
    Server::new("protected", "1", router)
}

/// Binds a port first, so the resource URL (with its port) can go into the options.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

fn text(result: &CallToolResult) -> String {
    result.content.iter().filter_map(|c| c.as_text()).collect()
}

fn oauth(store: Option<Arc<dyn TokenStore>>) -> Arc<OAuthClient> {
    let config = ClientConfig::authorization_code("oauth-e2e", "http://127.0.0.1:1/callback");
    let client = OAuthClient::new(config).redirect(HeadlessRedirect::default());
    Arc::new(match store {
        Some(store) => client.store(store),
        None => client,
    })
}

fn client_options(oauth: &Arc<OAuthClient>) -> ClientOptions {
    ClientOptions::new("oauth-e2e", "1").mode(ClientMode::Legacy).authenticator(oauth.clone())
}

#[test]
fn a_client_signs_in_and_calls_a_protected_server_on_both_runtimes() {
    for smol in [false, true] {
        let authorization = TestAuthorizationServer::start(3600);
        let port = free_port();
        let url = format!("http://127.0.0.1:{port}/mcp");
        let resource = ProtectedResource::new(&url, &[&authorization.issuer]).unwrap().require_scopes(&["mcp:read"]);
        let options = HttpServerOptions::default().protected_resource(resource, authorization.verifier(&url));
        let address = format!("127.0.0.1:{port}");
        let server = whoami_server();
        let (_blocking, _smol) = if smol {
            (None, Some(SmolHttpServer::bind(&server, &address, options).unwrap()))
        } else {
            (Some(HttpServer::bind(&server, &address, options).unwrap()), None)
        };

        // Without credentials: a 401 naming the metadata, which is served without any.
        let refused = Client::http(&url, &[], ClientOptions::new("anon", "1").mode(ClientMode::Legacy)).unwrap_err();
        let ClientError::HttpStatus { status: 401, www_authenticate: Some(challenge), .. } = refused else {
            panic!("{refused:?}")
        };
        assert!(challenge.contains("/.well-known/oauth-protected-resource/mcp"), "{challenge}");

        let oauth = oauth(None);
        let client = Client::http(&url, &[], client_options(&oauth)).unwrap();
        assert_eq!(text(&client.call_tool("whoami", json!({})).unwrap()), "alice", "smol: {smol}");
        client.close();
        let ledger = authorization.ledger.lock().unwrap();
        assert_eq!(ledger.grants, ["authorization_code"]);
        assert_eq!(ledger.clients.len(), 1, "registered once");
        assert!(ledger.resources.iter().all(|r| *r == url), "{:?}", ledger.resources);
        let token = oauth.token(&url).unwrap();
        assert_eq!(token.scope.as_deref(), Some("mcp:read offline_access"));
    }
}

#[test]
fn tokens_near_expiry_are_refreshed_and_a_kept_token_signs_nobody_in_again() {
    let authorization = TestAuthorizationServer::start(5);
    let port = free_port();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let resource = ProtectedResource::new(&url, &[&authorization.issuer]).unwrap();
    let options = HttpServerOptions::default().protected_resource(resource, authorization.verifier(&url));
    let _server = HttpServer::bind(&whoami_server(), format!("127.0.0.1:{port}"), options).unwrap();

    let dir = std::env::temp_dir().join(format!("talaria-oauth-e2e-{}", std::process::id()));
    let store: Arc<dyn TokenStore> = Arc::new(FileTokenStore::new(dir.join("tokens.json")));
    let oauth_client = oauth(Some(store.clone()));
    let client = Client::http(&url, &[], client_options(&oauth_client)).unwrap();
    // Tokens live 5 s, inside the 30 s refresh margin: each request refreshes first.
    client.call_tool("whoami", json!({})).unwrap();
    client.close();
    let grants = authorization.ledger.lock().unwrap().grants.clone();
    assert_eq!(grants[0], "authorization_code");
    assert!(grants[1..].iter().all(|g| g == "refresh_token") && grants.len() > 1, "{grants:?}");

    // A new client with the same file store goes on with the kept token: no new sign-in.
    let again = oauth(Some(store));
    let client = Client::http(&url, &[], client_options(&again)).unwrap();
    assert_eq!(text(&client.call_tool("whoami", json!({})).unwrap()), "alice");
    client.close();
    let ledger = authorization.ledger.lock().unwrap();
    assert_eq!(ledger.grants.iter().filter(|g| *g == "authorization_code").count(), 1);
    drop(ledger);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_token_without_the_required_scope_is_refused_without_looping() {
    let authorization = TestAuthorizationServer::start(3600);
    let port = free_port();
    let url = format!("http://127.0.0.1:{port}/mcp");
    // The server wants a scope the authorization server never grants.
    let resource = ProtectedResource::new(&url, &[&authorization.issuer]).unwrap().require_scopes(&["mcp:admin"]);
    let options = HttpServerOptions::default().protected_resource(resource, authorization.verifier(&url));
    let _server = HttpServer::bind(&whoami_server(), format!("127.0.0.1:{port}"), options).unwrap();
    let oauth = oauth(None);
    let refused = Client::http(&url, &[], client_options(&oauth)).unwrap_err();
    assert!(matches!(refused, ClientError::HttpStatus { status: 403, .. }), "{refused:?}");
    // One sign-in; the 403 asks for a scope the token already asked for: no second one.
    assert_eq!(authorization.ledger.lock().unwrap().grants, ["authorization_code"]);
}

#[test]
fn the_legacy_sse_transport_signs_in_too() {
    let authorization = TestAuthorizationServer::start(3600);
    let port = free_port();
    // One resource for the whole origin: it covers `/mcp` and `/sse` alike.
    let origin = format!("http://127.0.0.1:{port}");
    let resource = ProtectedResource::new(&origin, &[&authorization.issuer]).unwrap();
    let options = HttpServerOptions::default().protected_resource(resource, authorization.verifier(&origin));
    let _server = HttpServer::bind(&whoami_server(), format!("127.0.0.1:{port}"), options).unwrap();
    let oauth = oauth(None);
    let client = Client::sse(&format!("{origin}/sse"), &[], client_options(&oauth)).unwrap();
    assert_eq!(text(&client.call_tool("whoami", json!({})).unwrap()), "alice");
    client.close();
    assert_eq!(authorization.ledger.lock().unwrap().grants, ["authorization_code"]);
}
