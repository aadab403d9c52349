//! Where the REPL's history lives: `$TALARIA_HISTORY`, else
//! `$XDG_STATE_HOME/talaria/history`, else `~/.local/state/talaria/history`.

use std::path::PathBuf;

/// The history file, its directory created; `None` when no home is known.
pub(crate) fn path() -> Option<PathBuf> {
    let path = match std::env::var_os("TALARIA_HISTORY").filter(|p| !p.is_empty()) {
        Some(path) => PathBuf::from(path),
        None => {
            let state = std::env::var_os("XDG_STATE_HOME")
                .filter(|p| !p.is_empty())
                .map(PathBuf::from)
                .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".local/state")))?;
            state.join("talaria").join("history")
        }
    };
    if let Some(dir) = path.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    Some(path)
}
