//! Tokens in the operating system's keyring (feature `keyring`): the macOS Keychain, the
//! Windows Credential Manager. Where there is none, or it refuses, a [`FileTokenStore`] keeps
//! them instead.
//!
//! Linux has no keyring here: the kernel keyring (keyutils) forgets at logout and, tried in
//! a container, reported failures for writes it had made; the desktop Secret Service needs
//! D-Bus. Tokens stay in the file (owner-only), as before.

use std::collections::BTreeSet;
use std::io;
use std::path::PathBuf;
use std::sync::{Mutex, PoisonError};

use super::store::{FileTokenStore, StoredToken, TokenStore};

/// Tokens in the OS keyring, one entry per server (service `talaria-mcp`, the server's URL,
/// base64url-encoded, as the account), falling back to a file where the keyring cannot take one. The file also
/// lists which servers have a token in the keyring (a keyring cannot be listed), never the
/// tokens themselves.
///
/// # Examples
///
/// ```no_run
/// use std::sync::Arc;
/// use talaria::auth::{FileTokenStore, KeyringTokenStore, OAuthClient};
/// use talaria::core::auth::client::ClientConfig;
///
/// let store = KeyringTokenStore::new(FileTokenStore::new("/home/me/.config/my-app/tokens.json"));
/// let oauth = OAuthClient::new(ClientConfig::device_code("my-app")).store(Arc::new(store));
/// # let _ = oauth;
/// ```
#[derive(Debug)]
pub struct KeyringTokenStore {
    file: FileTokenStore,
    index: PathBuf,
    lock: Mutex<()>,
}

impl KeyringTokenStore {
    /// A store keeping tokens in the keyring, and in `fallback` where the keyring fails.
    #[must_use]
    pub fn new(fallback: FileTokenStore) -> Self {
        let index = fallback.path().with_extension("keyring.json");
        Self { file: fallback, index, lock: Mutex::new(()) }
    }

    /// Whether a keyring took a test entry: tokens go there, not to the file.
    #[must_use]
    pub fn keyring_works(&self) -> bool {
        let probe = "talaria-keyring-probe";
        let works = os::set(probe, "probe") && os::get(probe).is_some_and(|p| p == "probe");
        os::delete(probe);
        works
    }

    /// Whether the token for `server` is in the keyring (not in the file).
    #[must_use]
    pub fn in_keyring(&self, server: &str) -> bool {
        os::get(&account(server)).is_some()
    }

    fn listed(&self) -> BTreeSet<String> {
        std::fs::read(&self.index).ok().and_then(|bytes| serde_json::from_slice(&bytes).ok()).unwrap_or_default()
    }

    fn list(&self, change: impl FnOnce(&mut BTreeSet<String>)) -> io::Result<()> {
        let _guard = self.lock.lock().unwrap_or_else(PoisonError::into_inner);
        let mut servers = self.listed();
        change(&mut servers);
        if let Some(dir) = self.index.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)?;
        }
        std::fs::write(&self.index, serde_json::to_vec(&servers).map_err(io::Error::other)?)
    }
}

impl TokenStore for KeyringTokenStore {
    fn load(&self, server: &str) -> Option<StoredToken> {
        let kept = os::get(&account(server));
        kept.and_then(|json| serde_json::from_str(&json).ok()).or_else(|| self.file.load(server))
    }

    fn save(&self, server: &str, token: &StoredToken) -> io::Result<()> {
        let json = serde_json::to_string(token).map_err(io::Error::other)?;
        let account = account(server);
        // Kept only if it reads back the same: a keyring that fails half-way is not trusted.
        if os::set(&account, &json) && os::get(&account).is_some_and(|kept| kept == json) {
            // In the keyring: no copy on disk, only the server's name in the list.
            self.file.forget(server)?;
            return self.list(|servers| {
                servers.insert(server.to_owned());
            });
        }
        os::delete(&account);
        self.file.save(server, token)
    }

    fn forget(&self, server: &str) -> io::Result<()> {
        os::delete(&account(server));
        self.list(|servers| {
            servers.remove(server);
        })?;
        self.file.forget(server)
    }

    fn servers(&self) -> Vec<String> {
        let mut all: BTreeSet<String> = self.file.servers().into_iter().collect();
        all.extend(self.listed().into_iter().filter(|server| self.load(server).is_some()));
        all.into_iter().collect()
    }
}

/// The keyring account for `server`: its URL, base64url-encoded (some keyrings refuse the
/// characters of a URL in a name).
fn account(server: &str) -> String {
    talaria_core::auth::encoding::base64url(server.as_bytes())
}

/// The platform's keyring.
#[cfg(any(target_os = "macos", target_os = "windows"))]
mod os {
    /// The keyring service the tokens are kept under.
    const SERVICE: &str = "talaria-mcp";

    pub(super) fn set(account: &str, secret: &str) -> bool {
        keyring::Entry::new(SERVICE, account).and_then(|e| e.set_password(secret)).is_ok()
    }

    pub(super) fn get(account: &str) -> Option<String> {
        keyring::Entry::new(SERVICE, account).and_then(|e| e.get_password()).ok()
    }

    pub(super) fn delete(account: &str) {
        if let Ok(entry) = keyring::Entry::new(SERVICE, account) {
            let _ = entry.delete_credential();
        }
    }
}

/// No keyring on this platform: nothing is kept, so the file is used.
#[cfg(not(any(target_os = "macos", target_os = "windows")))]
mod os {
    pub(super) const fn set(_account: &str, _secret: &str) -> bool {
        false
    }

    pub(super) const fn get(_account: &str) -> Option<String> {
        None
    }

    pub(super) const fn delete(_account: &str) {}
}
