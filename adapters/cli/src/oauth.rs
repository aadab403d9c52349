//! `--oauth`: the CLI signs in to servers that ask for OAuth. The user's browser is opened on
//! the authorization URL (the URL is also printed, for machines without one), the redirect
//! comes back to a loopback listener, and tokens are kept in a file so the next run goes on
//! without signing in again.

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::Arc;

use talaria::auth::{FileTokenStore, KeyringTokenStore, LoopbackRedirect, OAuthClient, TokenStore};
use talaria::core::auth::client::ClientConfig;
use talaria::core::auth::registration::ClientInformation;

use super::exit::{Failure, Kind};

/// The `--oauth` settings from the command line.
#[derive(Debug, Clone)]
pub(crate) struct OAuthArgs {
    /// A pre-registered client id.
    pub(crate) client_id: Option<String>,
    /// Its secret.
    pub(crate) client_secret: Option<String>,
    /// Where tokens are kept.
    pub(crate) token_file: Option<PathBuf>,
    /// Print the authorization URL only; do not start a browser.
    pub(crate) no_browser: bool,
    /// Sign in on another device (the device grant).
    pub(crate) device: bool,
    /// Print each step of the authorization.
    pub(crate) verbose: bool,
    /// The certificate authorities trusted for `https://`.
    pub(crate) tls: talaria::tls::TlsRoots,
}

/// The default token file: `$XDG_CONFIG_HOME/talaria/tokens.json`, else
/// `~/.config/talaria/tokens.json`, else `talaria-tokens.json` here.
fn default_token_file() -> PathBuf {
    token_file_in(std::env::var_os("XDG_CONFIG_HOME"), std::env::var_os("HOME"))
}

/// [`default_token_file`] for the given `XDG_CONFIG_HOME` and `HOME`.
fn token_file_in(xdg_config_home: Option<OsString>, home: Option<OsString>) -> PathBuf {
    let config = xdg_config_home
        .filter(|dir| !dir.is_empty())
        .map(PathBuf::from)
        .or_else(|| home.map(|home| PathBuf::from(home).join(".config")));
    config.map_or_else(|| PathBuf::from("talaria-tokens.json"), |dir| dir.join("talaria").join("tokens.json"))
}

/// Starts the user's browser on `url`, if there is one to start.
fn open_browser(url: &str) -> bool {
    let opener = if cfg!(target_os = "macos") { "open" } else { "xdg-open" };
    Command::new(opener).arg(url).stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null()).spawn().is_ok()
}

/// Where tokens are kept: the file `--token-file` names; without one, the system keyring
/// where there is one, else the default file.
pub(crate) fn store(args: &OAuthArgs) -> Arc<dyn TokenStore> {
    match &args.token_file {
        Some(path) => Arc::new(FileTokenStore::new(path)),
        None => Arc::new(KeyringTokenStore::new(FileTokenStore::new(default_token_file()))),
    }
}

/// Where [`store`] keeps tokens, for a person.
pub(crate) fn store_description(args: &OAuthArgs) -> String {
    match &args.token_file {
        Some(path) => format!("the file {}", path.display()),
        None if KeyringTokenStore::new(FileTokenStore::new(default_token_file())).keyring_works() => {
            format!("the system keyring (else {})", default_token_file().display())
        }
        None => format!("the file {} (no system keyring here)", default_token_file().display()),
    }
}

/// The OAuth client `--oauth` asks for: the browser (authorization code) or, with
/// `--device`, another device (the device grant).
pub(crate) fn client(args: &OAuthArgs) -> Result<Arc<OAuthClient>, Failure> {
    let no_browser = args.no_browser;
    let (mut config, redirect) = if args.device {
        (ClientConfig::device_code("talaria"), None)
    } else {
        let redirect = LoopbackRedirect::bind(move |url| {
            eprintln!("talaria: sign in at {url}");
            if !no_browser && open_browser(url) {
                eprintln!("talaria: (opened in your browser; waiting for you to come back)");
            }
        })
        .map_err(|e| Failure::new(Kind::Transport, format!("cannot listen for the OAuth redirect: {e}")))?;
        (ClientConfig::authorization_code("talaria", &redirect.redirect_uri()), Some(redirect))
    };
    if let Some(id) = &args.client_id {
        config = config.with_client(ClientInformation::new(id, args.client_secret.as_deref()));
    }
    let mut client = OAuthClient::new(config).store(store(args)).tls_roots(&args.tls).on_user_code(|code| {
        eprintln!("talaria: to sign in, visit {} and enter the code {}", code.verification_uri, code.user_code);
        if let Some(complete) = &code.verification_uri_complete {
            eprintln!("talaria: (or open {complete})");
        }
        eprintln!("talaria: waiting for the sign-in to be approved (the code lasts {} s)", code.expires_in);
    });
    if let Some(redirect) = redirect {
        client = client.redirect(redirect);
    }
    if args.verbose {
        client = client.on_progress(|line| eprintln!("talaria: oauth: {line}"));
    }
    Ok(Arc::new(client))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_token_file_follows_xdg() {
        let some = |s: &str| Some(OsString::from(s));
        assert_eq!(token_file_in(some("/x"), some("/h")), PathBuf::from("/x/talaria/tokens.json"));
        assert_eq!(token_file_in(some(""), some("/h")), PathBuf::from("/h/.config/talaria/tokens.json"));
        assert_eq!(token_file_in(None, None), PathBuf::from("talaria-tokens.json"));
    }
}
