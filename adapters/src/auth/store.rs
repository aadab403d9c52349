//! Where an [`OAuthClient`](super::OAuthClient) keeps its tokens between requests and runs:
//! in memory, or in a file (the CLI's, so a second run does not sign in again).

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use serde::{Deserialize, Serialize};
use talaria_core::auth::client::AuthContext;

/// A token for one MCP server, and what is needed to refresh it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredToken {
    /// The access token.
    pub access_token: String,
    /// The refresh token, if one was issued.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_token: Option<String>,
    /// When the access token expires, in seconds since the epoch, if the server said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<u64>,
    /// The scope granted (the server's word, else the one asked for).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
    /// The scope asked for, which the server may have narrowed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requested_scope: Option<String>,
    /// The authorization server and client registration the token came from.
    pub context: AuthContext,
}

/// Keeps tokens, keyed by the MCP server's canonical URL (tokens are bound to one resource).
///
/// # Examples
///
/// ```
/// use talaria::auth::{MemoryTokenStore, TokenStore};
///
/// let store = MemoryTokenStore::default();
/// assert!(store.load("https://mcp.example.com/mcp").is_none());
/// ```
pub trait TokenStore: Send + Sync {
    /// The token kept for `server`, if any.
    fn load(&self, server: &str) -> Option<StoredToken>;
    /// Keeps `token` for `server`, replacing any other.
    ///
    /// # Errors
    ///
    /// The store could not be written.
    fn save(&self, server: &str, token: &StoredToken) -> io::Result<()>;
    /// Forgets the token for `server`.
    ///
    /// # Errors
    ///
    /// The store could not be written.
    fn forget(&self, server: &str) -> io::Result<()>;
    /// The servers it keeps a token for, where it can list them (a keyring may not: then
    /// none).
    fn servers(&self) -> Vec<String> {
        Vec::new()
    }
}

/// Tokens in memory, gone with the process (the default).
#[derive(Debug, Default)]
pub struct MemoryTokenStore {
    tokens: Mutex<BTreeMap<String, StoredToken>>,
}

impl TokenStore for MemoryTokenStore {
    fn load(&self, server: &str) -> Option<StoredToken> {
        self.tokens.lock().unwrap_or_else(PoisonError::into_inner).get(server).cloned()
    }

    fn save(&self, server: &str, token: &StoredToken) -> io::Result<()> {
        self.tokens.lock().unwrap_or_else(PoisonError::into_inner).insert(server.to_owned(), token.clone());
        Ok(())
    }

    fn forget(&self, server: &str) -> io::Result<()> {
        self.tokens.lock().unwrap_or_else(PoisonError::into_inner).remove(server);
        Ok(())
    }

    fn servers(&self) -> Vec<String> {
        self.tokens.lock().unwrap_or_else(PoisonError::into_inner).keys().cloned().collect()
    }
}

/// Tokens in a JSON file (an object from server URL to token), readable by its owner only,
/// replaced whole on each write (a temporary file renamed over it).
#[derive(Debug)]
pub struct FileTokenStore {
    path: PathBuf,
    lock: Mutex<()>,
}

impl FileTokenStore {
    /// A store at `path` (created on the first save).
    #[must_use]
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Self { path: path.into(), lock: Mutex::new(()) }
    }

    /// The file's path.
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn read(&self) -> BTreeMap<String, StoredToken> {
        // A missing or unreadable file is an empty store: the user signs in again.
        std::fs::read(&self.path).ok().and_then(|bytes| serde_json::from_slice(&bytes).ok()).unwrap_or_default()
    }

    fn write(&self, tokens: &BTreeMap<String, StoredToken>) -> io::Result<()> {
        if let Some(dir) = self.path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)?;
        }
        let temporary = self.path.with_extension("tmp");
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create(true).truncate(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let mut file = options.open(&temporary)?;
        io::Write::write_all(&mut file, &serde_json::to_vec_pretty(tokens).map_err(io::Error::other)?)?;
        file.sync_all()?;
        std::fs::rename(&temporary, &self.path)
    }

    fn update(&self, change: impl FnOnce(&mut BTreeMap<String, StoredToken>)) -> io::Result<()> {
        let _guard = self.lock.lock().unwrap_or_else(PoisonError::into_inner);
        let mut tokens = self.read();
        change(&mut tokens);
        self.write(&tokens)
    }
}

impl TokenStore for FileTokenStore {
    fn load(&self, server: &str) -> Option<StoredToken> {
        let _guard = self.lock.lock().unwrap_or_else(PoisonError::into_inner);
        self.read().remove(server)
    }

    fn save(&self, server: &str, token: &StoredToken) -> io::Result<()> {
        self.update(|tokens| {
            tokens.insert(server.to_owned(), token.clone());
        })
    }

    fn forget(&self, server: &str) -> io::Result<()> {
        self.update(|tokens| {
            tokens.remove(server);
        })
    }

    fn servers(&self) -> Vec<String> {
        let _guard = self.lock.lock().unwrap_or_else(PoisonError::into_inner);
        self.read().into_keys().collect()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn token(access: &str) -> StoredToken {
        let context = serde_json::json!({
            "resource": "https://mcp.example.com/mcp",
            "server": {"issuer": "https://as.example.com", "token_endpoint": "https://as.example.com/token"},
            "issuer_checked": true,
            "client": {"client_id": "c"},
        });
        StoredToken {
            access_token: access.into(),
            refresh_token: Some("r".into()),
            expires_at: Some(10),
            scope: None,
            requested_scope: None,
            context: serde_json::from_value(context).unwrap(),
        }
    }

    #[test]
    fn a_file_store_survives_the_process_and_is_private() {
        let dir = std::env::temp_dir().join(format!("talaria-tokens-{}", std::process::id()));
        let path = dir.join("tokens.json");
        let store = FileTokenStore::new(&path);
        assert!(store.load("a").is_none());
        store.save("a", &token("t1")).unwrap();
        store.save("b", &token("t2")).unwrap();
        let again = FileTokenStore::new(&path);
        assert_eq!(again.load("a").unwrap().access_token, "t1");
        again.forget("a").unwrap();
        assert!(store.load("a").is_none());
        assert_eq!(store.load("b").unwrap(), token("t2"));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
        }
        // A corrupt file reads as empty, and the next save repairs it.
        std::fs::write(&path, b"{not json").unwrap();
        assert!(store.load("b").is_none());
        store.save("c", &token("t3")).unwrap();
        assert_eq!(store.load("c").unwrap().access_token, "t3");
        std::fs::remove_dir_all(dir).unwrap();
    }
}
