//! What `doctor` checks before speaking MCP: for an HTTP server, TLS (a certificate the
//! client trusts, or plain http beyond this machine), redirects (a POST that is redirected
//! fails in most clients), and sign-in (a `401` with a usable challenge, resource metadata
//! naming an authorization server, and that server's metadata: PKCE, registration, the
//! device grant); for a stdio server, a banner on stdout (anything written there before the
//! client spoke breaks the framing).

use std::io::Read as _;
use std::time::Duration;

use serde_json::json;
use talaria_core::auth::challenge;
use talaria_core::auth::discovery::{authorization_server_metadata_urls, resource_metadata_urls};
use talaria_core::auth::metadata::{AuthorizationServerMetadata, ProtectedResourceMetadata};
use talaria_core::auth::url::HttpUrl;

use super::connect::{Connector, Target};
use super::doctor::{Level, Report};

/// How long a probe may take.
const PROBE_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a stdio server is watched for a banner before the client speaks.
const BANNER_WAIT: Duration = Duration::from_millis(700);
/// The most of a metadata document read.
const MAX_DOCUMENT: u64 = 1 << 20;

/// Runs the checks that apply to `connector`'s server.
pub(crate) fn check(connector: &Connector, report: &mut Report) {
    match &connector.target {
        Target::Http(url) | Target::Sse(url) => http(connector, url, report),
        Target::Stdio { program, args, env, cwd } => banner(program, args, env, cwd.as_deref(), report),
        Target::WebSocket(_) | Target::Demo => {}
    }
}

/// An agent that follows no redirect and takes every status as an answer.
fn agent(connector: &Connector) -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .max_redirects(0)
        .timeout_global(Some(PROBE_TIMEOUT))
        .tls_config(connector.tls.ureq_config())
        .build()
        .new_agent()
}

/// TLS, redirects and sign-in, from one `initialize` POST.
fn http(connector: &Connector, url: &str, report: &mut Report) {
    let agent = agent(connector);
    let secure = url.to_ascii_lowercase().starts_with("https://");
    let local = HttpUrl::parse(url).is_ok_and(|u| u.is_secure());
    if !secure && !local {
        report.add(
            "tls",
            Level::Warning,
            "plain http to another machine: requests, tokens and results travel in clear",
            Some("serve https (talaria::tls::server_config, or a TLS proxy in front)"),
        );
    }
    let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "talaria-doctor", "version": "1"}}});
    let mut request = agent
        .post(url)
        .header("Content-Type", "application/json")
        .header("Accept", "application/json, text/event-stream");
    for (name, value) in &connector.headers {
        request = request.header(name.as_str(), value.as_str());
    }
    let response = match request.send(initialize.to_string()) {
        Ok(response) => response,
        Err(e) => {
            let text = e.to_string();
            let tls = text.to_ascii_lowercase().contains("certificate") || matches!(e, ureq::Error::Tls(_));
            let (check, fix) = if tls {
                ("tls", "for a private CA pass --cacert FILE; otherwise fix the server's certificate chain")
            } else {
                ("reachable", "check the URL, and that the server is running and reachable from here")
            };
            report.add(check, Level::Error, text, Some(fix));
            return;
        }
    };
    if secure {
        report.add("tls", Level::Ok, "the certificate is trusted", None);
    }
    let status = response.status().as_u16();
    let header = |name: &str| response.headers().get(name).and_then(|v| v.to_str().ok()).map(str::to_owned);
    if (300..400).contains(&status) {
        let to = header("location").unwrap_or_else(|| "nowhere".into());
        report.add(
            "redirects",
            Level::Warning,
            format!("the URL answers {status}, redirecting to {to}"),
            Some("give clients the final URL: most do not follow a redirected POST"),
        );
    } else {
        report.add("redirects", Level::Ok, "none", None);
    }
    if status == 401 || status == 403 {
        sign_in(&agent, url, header("www-authenticate").as_deref(), report);
    } else {
        report.add("auth", Level::Ok, "no sign-in asked", None);
    }
}

/// A refusal's challenge, the resource metadata it leads to, and the authorization server's.
fn sign_in(agent: &ureq::Agent, url: &str, www_authenticate: Option<&str>, report: &mut Report) {
    let Some(header) = www_authenticate else {
        report.add(
            "auth",
            Level::Error,
            "refused without a WWW-Authenticate challenge: clients cannot learn how to sign in",
            Some("answer 401 with WWW-Authenticate: Bearer resource_metadata=\"...\" (RFC 9728)"),
        );
        return;
    };
    let challenge = challenge::bearer(header);
    let hint = challenge.as_ref().and_then(|c| c.resource_metadata());
    let urls = resource_metadata_urls(url, hint).unwrap_or_default();
    let Some((found_at, metadata)) =
        urls.iter().find_map(|u| fetch::<ProtectedResourceMetadata>(agent, u).map(|m| (u.clone(), m)))
    else {
        report.add(
            "auth",
            Level::Warning,
            format!("asks for sign-in ({header}) but serves no protected resource metadata"),
            Some("serve /.well-known/oauth-protected-resource (RFC 9728): 2025-06-18 clients need it"),
        );
        return;
    };
    if let Err(e) = metadata.check_resource(url) {
        report.add(
            "auth",
            Level::Error,
            format!("resource metadata at {found_at}: {e}"),
            Some("its resource must be this server's URL"),
        );
        return;
    }
    let Some(issuer) = metadata.authorization_servers.first() else {
        report.add(
            "auth",
            Level::Error,
            format!("{found_at} names no authorization server"),
            Some("list one in authorization_servers"),
        );
        return;
    };
    let server = authorization_server_metadata_urls(issuer)
        .unwrap_or_default()
        .iter()
        .find_map(|u| fetch::<AuthorizationServerMetadata>(agent, u));
    let Some(server) = server else {
        report.add(
            "auth",
            Level::Error,
            format!("the authorization server {issuer} serves no metadata"),
            Some("serve /.well-known/oauth-authorization-server (RFC 8414) or OpenID discovery"),
        );
        return;
    };
    let pkce = server.check(issuer);
    let registration =
        server.registration_endpoint.is_some() || server.client_id_metadata_document_supported == Some(true);
    let device = server.device_authorization_endpoint.is_some();
    let detail = format!(
        "OAuth via {issuer}; client registration: {}; device grant: {}",
        if registration { "yes" } else { "no (clients need a pre-registered id)" },
        if device { "yes" } else { "no" }
    );
    match pkce {
        Err(e) => report.add(
            "auth",
            Level::Error,
            format!("{detail}; {e}"),
            Some("MCP clients refuse servers without PKCE S256"),
        ),
        Ok(()) if !registration => report.add(
            "auth",
            Level::Warning,
            detail,
            Some("offer dynamic registration or client metadata documents, or give users a client id (--client-id)"),
        ),
        Ok(()) => report.add("auth", Level::Ok, detail, None),
    }
}

/// A JSON document at `url`, if it answers 200 with one.
fn fetch<T: serde::de::DeserializeOwned>(agent: &ureq::Agent, url: &str) -> Option<T> {
    let response = agent.get(url).header("Accept", "application/json").call().ok()?;
    if response.status().as_u16() != 200 {
        return None;
    }
    let mut body = Vec::new();
    response.into_body().into_reader().take(MAX_DOCUMENT).read_to_end(&mut body).ok()?;
    serde_json::from_slice(&body).ok()
}

/// Starts the server and watches its stdout before saying anything: whatever comes is a
/// banner, which clients read as a broken frame.
fn banner(
    program: &str,
    args: &[String],
    env: &[(String, String)],
    cwd: Option<&std::path::Path>,
    report: &mut Report,
) {
    let mut command = std::process::Command::new(program);
    command
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null());
    command.envs(env.iter().map(|(k, v)| (k, v)));
    if let Some(dir) = cwd {
        command.current_dir(dir);
    }
    let Ok(mut child) = command.spawn() else { return };
    let Some(mut stdout) = child.stdout.take() else { return };
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut first = [0u8; 512];
        let n = stdout.read(&mut first).unwrap_or(0);
        let _ = tx.send(first[..n].to_vec());
    });
    let seen = rx.recv_timeout(BANNER_WAIT).ok().filter(|bytes| !bytes.is_empty());
    let _ = child.kill();
    let _ = child.wait();
    match seen {
        Some(bytes) => {
            let text = String::from_utf8_lossy(&bytes);
            let first = text.lines().next().unwrap_or_default();
            let first = super::neutral::neutralize(first, false);
            report.add(
                "stdout",
                Level::Error,
                format!("the server writes to stdout before the client speaks: {first:?}"),
                Some("write logs and banners to stderr: stdout carries JSON-RPC only"),
            );
        }
        None => report.add("stdout", Level::Ok, "quiet until spoken to", None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_banner_on_stdout_is_found_and_a_quiet_server_passes() {
        let mut report = Report::default();
        banner("sh", &["-c".into(), "echo 'Server ready on stdio'; sleep 5".into()], &[], None, &mut report);
        banner("sh", &["-c".into(), "sleep 5".into()], &[], None, &mut report);
        let json = report.to_json();
        assert_eq!(json["findings"][0]["level"], "error", "{json}");
        assert!(json["findings"][0]["detail"].as_str().unwrap_or("").contains("Server ready"), "{json}");
        assert_eq!(json["findings"][1]["level"], "ok", "{json}");
    }
}
