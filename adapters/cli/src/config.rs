//! Servers people already configured: the `mcpServers` entries of Claude Desktop's config and
//! `.mcp.json`, and the `servers` entries of VS Code's `mcp.json` (or `mcp.servers` in its
//! settings), comments and trailing commas allowed.
//!
//! An entry with a `command` is a stdio server (`args`, `env`, `cwd`); one with a `url` is a
//! network server (`type` `http`, `sse` or `ws`, else guessed from the URL; `headers`).
//! `${env:NAME}` and `${NAME}` in strings are replaced from the environment, and
//! `${workspaceFolder}` by the current directory.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::exit::Failure;

/// A configured server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Entry {
    /// A child process over stdio.
    Stdio {
        /// The program.
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Extra environment variables.
        env: Vec<(String, String)>,
        /// The working directory.
        cwd: Option<PathBuf>,
    },
    /// A server at a URL.
    Url {
        /// `http`, `sse` or `ws`.
        kind: String,
        /// The URL.
        url: String,
        /// Headers to send.
        headers: Vec<(String, String)>,
    },
}

/// The config files searched, in order, when `--server NAME` is given without `--config`.
pub(crate) fn default_files() -> Vec<PathBuf> {
    let mut files = vec![PathBuf::from(".mcp.json"), PathBuf::from(".vscode/mcp.json")];
    if let Some(home) = std::env::var_os("HOME").map(PathBuf::from) {
        let config = std::env::var_os("XDG_CONFIG_HOME").map_or_else(|| home.join(".config"), PathBuf::from);
        files.push(config.join("Claude/claude_desktop_config.json"));
        files.push(home.join("Library/Application Support/Claude/claude_desktop_config.json"));
        files.push(home.join(".cursor/mcp.json"));
        files.push(config.join("Code/User/mcp.json"));
    }
    files
}

/// Finds server `name` in the first of `files` that has it.
///
/// # Errors
///
/// A usage failure when no file has it (listing the names found), or a file cannot be read or
/// parsed.
pub(crate) fn find(files: &[PathBuf], name: &str) -> Result<Entry, Failure> {
    let mut seen = Vec::new();
    let mut read_any = false;
    for file in files {
        let text = match std::fs::read_to_string(file) {
            Ok(text) => text,
            Err(_) if files.len() > 1 => continue,
            Err(e) => return Err(Failure::usage(format!("cannot read {}: {e}", file.display()))),
        };
        read_any = true;
        let servers = servers(&text).map_err(|e| Failure::usage(format!("{}: {e}", file.display())))?;
        if let Some(entry) = servers.iter().find(|(n, _)| n == name) {
            return entry_from(&entry.1)
                .map_err(|e| Failure::usage(format!("{}: server {name:?}: {e}", file.display())));
        }
        seen.extend(servers.into_iter().map(|(n, _)| n));
    }
    let searched: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
    let message = if read_any {
        format!("no server named {name:?} in {}", searched.join(", "))
    } else {
        format!("no config file found (looked for {})", searched.join(", "))
    };
    let failure = Failure::usage(message);
    Err(if seen.is_empty() { failure } else { failure.with_hint(format!("servers there: {}", seen.join(", "))) })
}

/// The named server entries of a config file's text.
fn servers(text: &str) -> Result<Vec<(String, Value)>, String> {
    let value: Value = serde_json::from_str(&strip_jsonc(text)).map_err(|e| format!("not JSON: {e}"))?;
    let table = value
        .get("mcpServers")
        .or_else(|| value.get("servers"))
        .or_else(|| value.get("mcp").and_then(|m| m.get("servers")))
        .or_else(|| value.get("mcp.servers"))
        .and_then(Value::as_object)
        .ok_or("no \"mcpServers\" or \"servers\" object")?;
    Ok(table.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
}

fn entry_from(value: &Value) -> Result<Entry, String> {
    let string = |key: &str| value.get(key).and_then(Value::as_str).map(substitute);
    let map = |key: &str| -> Vec<(String, String)> {
        value
            .get(key)
            .and_then(Value::as_object)
            .map(|m| m.iter().map(|(k, v)| (k.clone(), v.as_str().map_or_else(|| v.to_string(), substitute))).collect())
            .unwrap_or_default()
    };
    if let Some(command) = string("command") {
        let args = value
            .get("args")
            .and_then(Value::as_array)
            .map(|a| a.iter().map(|v| v.as_str().map_or_else(|| v.to_string(), substitute)).collect())
            .unwrap_or_default();
        return Ok(Entry::Stdio { command, args, env: map("env"), cwd: string("cwd").map(PathBuf::from) });
    }
    let url = string("url").or_else(|| string("serverUrl")).ok_or("neither \"command\" nor \"url\"")?;
    let kind = match string("type").as_deref() {
        Some("sse") => "sse",
        Some("ws" | "websocket") => "ws",
        Some("http" | "streamable-http" | "streamableHttp") => "http",
        _ if url.starts_with("ws://") || url.starts_with("wss://") => "ws",
        _ if url.trim_end_matches('/').ends_with("/sse") => "sse",
        _ => "http",
    };
    Ok(Entry::Url { kind: kind.to_owned(), url, headers: map("headers") })
}

/// Replaces `${env:NAME}`, `${NAME}` and `${workspaceFolder}`; unknown ones stay as written.
fn substitute(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let Some(len) = rest[start..].find('}') else {
            out.push_str(&rest[start..]);
            return out;
        };
        let name = &rest[start + 2..start + len];
        let value = match name {
            "workspaceFolder" => std::env::current_dir().ok().map(|d| d.display().to_string()),
            _ => std::env::var(name.strip_prefix("env:").unwrap_or(name)).ok(),
        };
        out.push_str(&value.unwrap_or_else(|| rest[start..=start + len].to_owned()));
        rest = &rest[start + len + 1..];
    }
    out.push_str(rest);
    out
}

/// JSON with comments (`//`, `/* */`) and trailing commas, made plain JSON.
fn strip_jsonc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    let mut in_string = false;
    while let Some(c) = chars.next() {
        if in_string {
            out.push(c);
            match c {
                '\\' => out.extend(chars.next()),
                '"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match (c, chars.peek()) {
            ('"', _) => {
                in_string = true;
                out.push(c);
            }
            ('/', Some('/')) => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            ('/', Some('*')) => {
                chars.next();
                let mut last = ' ';
                for c in chars.by_ref() {
                    if last == '*' && c == '/' {
                        break;
                    }
                    last = c;
                }
            }
            (']' | '}', _) => {
                let trimmed = out.trim_end().len();
                if out[..trimmed].ends_with(',') {
                    out.truncate(trimmed - 1);
                }
                out.push(c);
            }
            _ => out.push(c),
        }
    }
    out
}

/// Whether `path` looks like a config file path rather than a server name (for messages).
pub(crate) fn looks_like_file(path: &str) -> bool {
    Path::new(path).extension().is_some_and(|e| e == "json")
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)]

    use super::*;

    #[test]
    fn claude_desktop_and_vs_code_entries() {
        let claude = r#"{"mcpServers": {"files": {"command": "npx", "args": ["-y", "fs"], "env": {"K": "v"}}}}"#;
        let got = entry_from(&servers(claude).unwrap()[0].1).unwrap();
        assert_eq!(
            got,
            Entry::Stdio {
                command: "npx".into(),
                args: vec!["-y".into(), "fs".into()],
                env: vec![("K".into(), "v".into())],
                cwd: None
            }
        );
        let vscode = r#"{
            // VS Code allows comments
            "servers": {
                "remote": {"type": "http", "url": "https://x/mcp", "headers": {"Authorization": "Bearer t"},},
                "sock": {"url": "ws://127.0.0.1:1/ws"}, /* and these */
            },
        }"#;
        let servers = servers(vscode).unwrap();
        assert_eq!(servers.len(), 2);
        let Entry::Url { kind, headers, .. } = entry_from(&servers[0].1).unwrap() else { panic!() };
        assert_eq!((kind.as_str(), headers.len()), ("http", 1));
        let Entry::Url { kind, .. } = entry_from(&servers[1].1).unwrap() else { panic!() };
        assert_eq!(kind, "ws");
    }

    #[test]
    fn find_reports_what_exists() {
        let dir = std::env::temp_dir().join(format!("talaria-config-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("mcp.json");
        std::fs::write(&file, r#"{"mcpServers": {"a": {"command": "x"}, "b": {"command": "y"}}}"#).unwrap();
        assert!(
            matches!(find(std::slice::from_ref(&file), "b").unwrap(), Entry::Stdio { command, .. } if command == "y")
        );
        let failure = find(std::slice::from_ref(&file), "c").unwrap_err();
        assert_eq!(failure.hint.as_deref(), Some("servers there: a, b"));
        assert!(find(&[dir.join("missing.json")], "a").unwrap_err().message.contains("cannot read"));
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn substitution_and_comments() {
        std::env::set_var("TALARIA_TEST_TOKEN", "s3cret");
        assert_eq!(substitute("Bearer ${env:TALARIA_TEST_TOKEN}"), "Bearer s3cret");
        assert_eq!(substitute("${TALARIA_TEST_TOKEN}/${input:x}"), "s3cret/${input:x}");
        assert_eq!(strip_jsonc(r#"{"a": "//not", "b": [1,],} // c"#), r#"{"a": "//not", "b": [1]} "#);
    }
}
