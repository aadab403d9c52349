//! `talaria auth login|logout|status`: sign in to an OAuth-protected server ahead of time
//! (in the browser, or with `--device` on another device), sign out, and show what is kept.
//! Tokens go where `--oauth` keeps them (`--token-file`, else the default file), so a later
//! `talaria URL ...` goes on without signing in.

use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{json, Value};

use super::args::AuthAction;
use super::exit::{Exit, Failure, Kind};
use super::oauth::{self, OAuthArgs};
use super::printer::Printer;
use super::scripted::emit_failure;
use super::Settings;
use talaria::auth::StoredToken;

/// Runs `action`; the exit code.
pub(crate) fn run(action: &AuthAction, args: &OAuthArgs, settings: &Settings, printer: &Arc<Printer>) -> Exit {
    match outcome(action, args) {
        Ok((value, line)) => {
            if settings.json {
                println!("{value}");
            } else {
                println!("{line}");
            }
            Exit::Ok
        }
        Err(failure) => {
            emit_failure(settings, printer, &failure);
            failure.exit()
        }
    }
}

/// What `action` did: as JSON, and as a line for a person.
fn outcome(action: &AuthAction, args: &OAuthArgs) -> Result<(Value, String), Failure> {
    match action {
        AuthAction::Login { url } => {
            let client = oauth::client(args)?;
            let token = client.authorize(url).map_err(|e| Failure::new(Kind::Authorization, e.0))?;
            let value = describe(url, &token);
            let line = format!("signed in to {url} ({})", summary(&token));
            Ok((value, line))
        }
        AuthAction::Logout { url } => {
            let (store, server) = (oauth::store(args), canonical(url));
            let had = store.load(&server).is_some();
            store
                .forget(&server)
                .map_err(|e| Failure::new(Kind::Transport, format!("cannot forget the token: {e}")))?;
            let line = if had { format!("signed out of {url}") } else { format!("no token was kept for {url}") };
            Ok((json!({"ok": true, "server": url, "forgotten": had}), line))
        }
        AuthAction::Status { url } => {
            let store = oauth::store(args);
            let servers = match url {
                Some(url) => vec![canonical(url)],
                None => store.servers(),
            };
            let kept: Vec<(String, StoredToken)> =
                servers.into_iter().filter_map(|server| store.load(&server).map(|token| (server, token))).collect();
            let place = oauth::store_description(args);
            let value =
                json!({"store": place, "servers": kept.iter().map(|(s, t)| describe(s, t)).collect::<Vec<_>>()});
            let mut lines = vec![format!("tokens in {place}")];
            if kept.is_empty() {
                lines.push(match url {
                    Some(url) => format!("  none for {url}: talaria auth login {url}"),
                    None => "  none: talaria auth login URL".to_owned(),
                });
            }
            lines.extend(kept.iter().map(|(server, token)| format!("  {server}: {}", summary(token))));
            Ok((value, lines.join("\n")))
        }
    }
}

/// A kept token as JSON: never the tokens themselves.
fn describe(server: &str, token: &StoredToken) -> Value {
    json!({
        "server": server,
        "scope": token.scope,
        "expiresAt": token.expires_at,
        "expired": token.expires_at.is_some_and(|at| at <= now()),
        "refreshable": token.refresh_token.is_some(),
        "authorizationServer": token.context.server.issuer,
        "clientId": token.context.client.client_id,
    })
}

/// A kept token in a few words: scope, expiry, refresh.
fn summary(token: &StoredToken) -> String {
    let scope = token.scope.as_deref().filter(|s| !s.is_empty()).unwrap_or("no scope");
    let expiry = match token.expires_at {
        None => "no expiry said".to_owned(),
        Some(at) if at <= now() => "expired".to_owned(),
        Some(at) => format!("expires in {}", human(at - now())),
    };
    let refresh = if token.refresh_token.is_some() { ", refreshable" } else { "" };
    format!("{scope}; {expiry}{refresh}")
}

/// Seconds as `2h 5m`, `4m 10s`, `12s`.
fn human(seconds: u64) -> String {
    match seconds {
        s if s >= 3600 => format!("{}h {}m", s / 3600, s % 3600 / 60),
        s if s >= 60 => format!("{}m {}s", s / 60, s % 60),
        s => format!("{s}s"),
    }
}

/// The key tokens are kept under: the server's canonical URL.
fn canonical(url: &str) -> String {
    talaria_core::auth::url::HttpUrl::parse(url).map_or_else(|_| url.to_owned(), |u| u.canonical())
}

fn now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

#[cfg(test)]
mod tests {
    use super::human;

    #[test]
    fn durations_read_as_people_write_them() {
        assert_eq!(human(12), "12s");
        assert_eq!(human(250), "4m 10s");
        assert_eq!(human(7500), "2h 5m");
    }
}
