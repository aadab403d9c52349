//! `talaria --oauth` end to end on 127.0.0.1: the CLI meets a protected server, prints the
//! sign-in URL, the test plays the browser (following the authorization server's redirect to
//! the CLI's loopback listener), the call goes through, and a second run reuses the kept
//! token without signing in.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs, unreachable_pub, dead_code)]

#[path = "../../../examples/tests/test_as/mod.rs"]
mod test_as;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use serde_json::{json, Value};
use talaria::core::auth::resource::ProtectedResource;
use talaria::core::schema::tools::{CallToolResult, Tool};
use talaria::core::server::Router;
use talaria::http::{HttpServer, HttpServerOptions};
use talaria::server::Server;
use test_as::TestAuthorizationServer;

const TALARIA: &str = env!("CARGO_BIN_EXE_talaria");

/// Runs `talaria --json --oauth ... http <url> call whoami`, answering a sign-in prompt as a
/// browser would; returns the JSON output and whether a sign-in was asked.
fn call_whoami(url: &str, token_file: &std::path::Path) -> (Value, bool) {
    let mut child = Command::new(TALARIA)
        .args(["--json", "--oauth", "--no-browser", "--token-file"])
        .arg(token_file)
        .args(["http", url, "call", "whoami"])
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = BufReader::new(child.stderr.take().unwrap());
    let browser = ureq::Agent::new_with_defaults();
    let mut signed_in = false;
    for line in stderr.lines() {
        let line = line.unwrap();
        if let Some(url) = line.strip_prefix("talaria: sign in at ") {
            // The browser: the authorization server approves and redirects to the CLI.
            let page = browser.get(url).call().unwrap().into_body().read_to_string().unwrap();
            assert!(page.contains("Signed in"), "{page}");
            signed_in = true;
        }
    }
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "{output:?}");
    (serde_json::from_slice(&output.stdout).unwrap(), signed_in)
}

/// An MCP server on 127.0.0.1 protected by `authorization`, with one tool, `whoami`, answering
/// the signed-in subject; its URL.
fn protected_server(authorization: &TestAuthorizationServer) -> (String, HttpServer) {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let resource = ProtectedResource::new(&url, &[&authorization.issuer]).unwrap();
    let options = HttpServerOptions::default().protected_resource(resource, authorization.verifier(&url));
    let schema = serde_json::from_value(json!({"type": "object"})).unwrap();
    let router = Router::<()>::builder()
        .tool(Tool::new("whoami", schema), |ctx, _: Value| {
            Ok(CallToolResult::text(ctx.transport().and_then(|t| t.identity.clone()).unwrap_or_default()))
        })
        .build();
    let server =
        HttpServer::bind(&Server::new("protected", "1", router), format!("127.0.0.1:{port}"), options).unwrap();
    (url, server)
}

#[test]
fn the_cli_signs_in_once_and_keeps_the_token() {
    let authorization = TestAuthorizationServer::start(3600);
    let (url, _server) = protected_server(&authorization);

    let dir = std::env::temp_dir().join(format!("talaria-cli-oauth-{}", std::process::id()));
    let token_file = dir.join("tokens.json");
    let (first, signed_in) = call_whoami(&url, &token_file);
    assert!(signed_in);
    assert_eq!(first["content"][0]["text"], "alice", "{first}");
    let (second, signed_in_again) = call_whoami(&url, &token_file);
    assert!(!signed_in_again, "the kept token is used");
    assert_eq!(second["content"][0]["text"], "alice");
    assert_eq!(authorization.ledger.lock().unwrap().grants, ["authorization_code"]);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn auth_login_on_another_device_then_status_use_and_logout() {
    let authorization = TestAuthorizationServer::start(3600);
    let (url, _server) = protected_server(&authorization);
    let dir = std::env::temp_dir().join(format!("talaria-cli-device-{}", std::process::id()));
    let token_file = dir.join("tokens.json");
    let run = |args: &[&str]| {
        Command::new(TALARIA)
            .args(["--json", "--token-file"])
            .arg(&token_file)
            .args(args)
            .env("NO_COLOR", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    // Login with the device grant: the code is shown, the "other device" approves it.
    let mut login = run(&["--device", "auth", "login", &url]);
    let stderr = BufReader::new(login.stderr.take().unwrap());
    let mut shown = Vec::new();
    for line in stderr.lines() {
        let line = line.unwrap();
        if let Some(page) = line.strip_prefix("talaria: (or open ").and_then(|l| l.strip_suffix(')')) {
            let approved = ureq::get(page).call().unwrap().into_body().read_to_string().unwrap();
            assert!(approved.contains("USER-"), "{approved}");
        }
        shown.push(line);
    }
    let output = login.wait_with_output().unwrap();
    assert!(output.status.success(), "{shown:?}");
    assert!(shown.iter().any(|l| l.contains("visit ") && l.contains(" and enter the code USER-")), "{shown:?}");
    let signed_in: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!((signed_in["server"].as_str(), signed_in["expired"].as_bool()), (Some(url.as_str()), Some(false)));
    assert!(signed_in.get("accessToken").is_none() && !String::from_utf8_lossy(&output.stdout).contains("access-"));
    let grants = authorization.ledger.lock().unwrap().grants.clone();
    assert_eq!(grants.last().map(String::as_str), Some("urn:ietf:params:oauth:grant-type:device_code"), "{grants:?}");
    // Status lists it; a call goes through on the kept token, without signing in.
    let status: Value = serde_json::from_slice(&run(&["auth", "status"]).wait_with_output().unwrap().stdout).unwrap();
    assert_eq!(status["servers"][0]["server"], url.as_str(), "{status}");
    let called = run(&[url.as_str(), "call", "whoami"]).wait_with_output().unwrap();
    assert!(called.status.success(), "{}", String::from_utf8_lossy(&called.stderr));
    let called: Value = serde_json::from_slice(&called.stdout).unwrap();
    assert_eq!(called["content"][0]["text"], "alice");
    // Doctor sees the sign-in the server asks for, and what its authorization server offers.
    let doctor = run(&["doctor", url.as_str()]).wait_with_output().unwrap();
    let report: Value = serde_json::from_slice(&doctor.stdout).unwrap();
    let auth =
        report["findings"].as_array().unwrap().iter().find(|f| f["check"] == "auth").cloned().unwrap_or_default();
    assert_eq!(auth["level"], "ok", "{report}");
    let detail = auth["detail"].as_str().unwrap();
    assert!(detail.contains(&authorization.issuer) && detail.contains("device grant: yes"), "{detail}");
    // Logout forgets it.
    let out: Value =
        serde_json::from_slice(&run(&["auth", "logout", &url]).wait_with_output().unwrap().stdout).unwrap();
    assert_eq!(out["forgotten"], true);
    let status: Value =
        serde_json::from_slice(&run(&["auth", "status", &url]).wait_with_output().unwrap().stdout).unwrap();
    assert_eq!(status["servers"], json!([]), "{status}");
    std::fs::remove_dir_all(dir).unwrap();
}
