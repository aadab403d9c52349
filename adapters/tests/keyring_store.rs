//! `KeyringTokenStore`: tokens in the system keyring where it takes them (macOS, Windows),
//! never on disk then; in the fallback file otherwise (Linux). Either way a token saved is
//! loaded back by a later store, listed, and forgotten.
#![cfg(feature = "keyring")]
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use talaria::auth::{FileTokenStore, KeyringTokenStore, StoredToken, TokenStore};

fn token(access: &str) -> StoredToken {
    serde_json::from_value(serde_json::json!({
        "access_token": access,
        "refresh_token": "refresh-secret",
        "context": {
            "resource": "https://mcp.example.com/mcp",
            "server": {"issuer": "https://auth.example.com", "token_endpoint": "https://auth.example.com/token"},
            "issuer_checked": true,
            "client": {"client_id": "c1"}
        }
    }))
    .unwrap()
}

#[test]
fn a_token_round_trips_through_the_keyring_or_the_file() {
    let dir = std::env::temp_dir().join(format!("talaria-keyring-{}", std::process::id()));
    let file = dir.join("tokens.json");
    let store = KeyringTokenStore::new(FileTokenStore::new(&file));
    let server = format!("https://mcp.example.com/mcp/{}", std::process::id());
    store.save(&server, &token("access-secret")).unwrap();
    assert_eq!(store.load(&server).unwrap().access_token, "access-secret");
    assert!(store.servers().contains(&server), "{:?}", store.servers());
    let on_disk = std::fs::read_to_string(&file).unwrap_or_default();
    if store.in_keyring(&server) {
        assert!(!on_disk.contains("secret"), "in the keyring, nothing secret on disk: {on_disk}");
    } else {
        assert!(on_disk.contains("access-secret"), "not in the keyring: the file keeps it");
    }
    if cfg!(target_os = "linux") {
        assert!(!store.keyring_works(), "no keyring is used on Linux");
    }
    // A second store (a later run) finds it.
    let later = KeyringTokenStore::new(FileTokenStore::new(&file));
    assert_eq!(later.load(&server).unwrap().refresh_token.as_deref(), Some("refresh-secret"));
    later.forget(&server).unwrap();
    assert!(store.load(&server).is_none() && !store.servers().contains(&server));
    let _ = std::fs::remove_dir_all(dir);
}
