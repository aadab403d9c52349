//! `--record FILE`, `replay FILE` and `talaria mock FILE` end to end against the demo server
//! (`talaria serve-demo`) over stdio: a recorded session replays the same on the same server,
//! a changed answer makes `replay` exit 3, and a mock built from the recording answers as
//! the server did, to any revision.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use serde_json::Value;

mod common;
use common::{json_lines, talaria, TALARIA};

/// The one-shot commands recorded, and checked against the mock.
const SESSION: &[&str] = &[
    "list-tools",
    ":::",
    "call-tool",
    "echo",
    "text=Hi",
    "case=upper",
    ":::",
    "call-tool",
    "add",
    "a=2",
    "b=3",
    ":::",
    "call-tool",
    "echo",
    "text=again",
    ":::",
    "list-prompts",
    ":::",
    "list-resources",
    ":::",
    "list-templates",
    ":::",
    "read-resource",
    "notes://7",
    ":::",
    "rpc",
    "tools/call",
    r#"{"name":"nope"}"#,
];

#[test]
fn a_recording_replays_the_same_and_a_mock_answers_as_the_server_did() {
    let dir = std::env::temp_dir().join(format!("talaria-cli-record-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("session.jsonl");
    let file = file.to_str().unwrap();
    // Record.
    let mut args = vec!["--json", "--record", file, "stdio", "--", TALARIA, "serve-demo", ":::"];
    args.extend_from_slice(SESSION);
    let recorded = talaria(&args);
    assert_eq!(
        recorded.status.code(),
        Some(3),
        "the last call is refused: {}",
        String::from_utf8_lossy(&recorded.stderr)
    );
    let originals = json_lines(&recorded);
    let text = std::fs::read_to_string(file).unwrap();
    let header: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!((header["talaria"].as_str(), header["transport"].as_str()), (Some("recording"), Some("stdio")));
    assert!(text.contains(r#""dir":"out""#) && text.contains(r#""dir":"in""#));
    // Replay on the same server: the same answers (the refusal included).
    let replayed = talaria(&["--json", "stdio", "--", TALARIA, "serve-demo", ":::", "replay", file]);
    let report = &json_lines(&replayed)[0];
    assert_eq!(replayed.status.code(), Some(0), "{report}");
    assert_eq!(report["same"], true, "{report}");
    assert!(report["replayed"].as_u64().unwrap() >= 8, "{report}");
    // A changed answer is found, and exits 3.
    let changed = dir.join("changed.jsonl");
    std::fs::write(&changed, text.replace(r#""text":"HI""#, r#""text":"HO""#)).unwrap();
    let replayed =
        talaria(&["--json", "stdio", "--", TALARIA, "serve-demo", ":::", "replay", changed.to_str().unwrap()]);
    let report = &json_lines(&replayed)[0];
    assert_eq!((replayed.status.code(), report["same"].as_bool()), (Some(3), Some(false)), "{report}");
    let difference = &report["differences"][0];
    assert_eq!(difference["method"], "tools/call");
    assert_eq!(difference["before"]["result"]["content"][0]["text"], "HO");
    assert_eq!(difference["now"]["result"]["content"][0]["text"], "HI");
    // The mock answers as the server did, in the handshake era and the stateless one.
    for revision in ["2025-06-18", "2026-07-28"] {
        let mut args = vec!["--json", "--protocol-version", revision, "stdio", "--", TALARIA, "mock", file, ":::"];
        args.extend_from_slice(SESSION);
        let mocked = talaria(&args);
        let answers = json_lines(&mocked);
        assert_eq!(answers.len(), originals.len(), "{revision}: {}", String::from_utf8_lossy(&mocked.stderr));
        for (i, (mocked, original)) in answers.iter().zip(&originals).enumerate() {
            if i == 0 {
                let names =
                    |v: &Value| v["tools"].as_array().unwrap().iter().map(|t| t["name"].clone()).collect::<Vec<_>>();
                assert_eq!(names(mocked), names(original), "{revision}: the tools listed");
            } else if i + 1 < originals.len() {
                assert_eq!(strip(mocked), strip(original), "{revision}: answer {i}");
            }
        }
        // An unrecorded call is an error saying so.
        let unknown =
            talaria(&["--json", "stdio", "--", TALARIA, "mock", file, ":::", "call-tool", "stats", "values:=[1]"]);
        assert_eq!(unknown.status.code(), Some(3), "{}", String::from_utf8_lossy(&unknown.stderr));
    }
    // Not a recording: a usage error.
    assert_eq!(talaria(&["mock", "/nonexistent.jsonl"]).status.code(), Some(2));
    std::fs::remove_dir_all(dir).unwrap();
}

/// An answer without what differs by revision: `_meta` anywhere, and what only 2026-07-28
/// has (`resultType`, `cacheScope`, `ttlMs`).
fn strip(value: &Value) -> Value {
    match value {
        Value::Object(o) => Value::Object(
            o.iter()
                .filter(|(k, _)| !["_meta", "resultType", "cacheScope", "ttlMs"].contains(&k.as_str()))
                .map(|(k, v)| (k.clone(), strip(v)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(strip).collect()),
        other => other.clone(),
    }
}
