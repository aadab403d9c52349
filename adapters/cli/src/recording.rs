//! Recordings of sessions (`--record FILE`): every JSON-RPC frame both ways, one JSON object
//! per line, as the client's frame hook saw them (whatever the transport):
//!
//! ```text
//! {"talaria":"recording","version":1,"server":"npx -y server-everything","transport":"stdio"}
//! {"ms":3,"dir":"out","frame":{"jsonrpc":"2.0","id":0,"method":"initialize",...}}
//! {"ms":41,"dir":"in","frame":{"jsonrpc":"2.0","id":0,"result":{...}}}
//! ```
//!
//! `replay FILE` sends a recording's requests to a server again and compares the answers;
//! `talaria mock FILE` serves what a recording shows. Both read it with [`Recording::read`],
//! which pairs each request with its answer.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::Path;
use std::sync::{Mutex, PoisonError};
use std::time::Instant;

use serde_json::{json, Value};

/// The largest recording read (a mock or a replay holds it in memory).
const MAX_RECORDING: u64 = 256 << 20;

/// Writes a recording as frames pass.
pub(crate) struct Recorder {
    file: Mutex<std::io::BufWriter<std::fs::File>>,
    started: Instant,
}

impl std::fmt::Debug for Recorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recorder").finish_non_exhaustive()
    }
}

impl Recorder {
    /// Creates `path` (replacing it) with the header line.
    ///
    /// # Errors
    ///
    /// The file could not be created or written.
    pub(crate) fn create(path: &Path, server: &str, transport: &str) -> std::io::Result<Self> {
        let mut file = std::io::BufWriter::new(std::fs::File::create(path)?);
        let header = json!({"talaria": "recording", "version": 1, "server": server, "transport": transport});
        writeln!(file, "{header}")?;
        file.flush()?;
        Ok(Self { file: Mutex::new(file), started: Instant::now() })
    }

    /// Records one frame (`sent` by the client, or received); a frame that is not JSON is
    /// kept as a string.
    pub(crate) fn frame(&self, sent: bool, frame: &[u8]) {
        let frame = serde_json::from_slice::<Value>(frame)
            .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(frame).into_owned()));
        let line =
            json!({"ms": self.started.elapsed().as_millis(), "dir": if sent { "out" } else { "in" }, "frame": frame});
        let mut file = self.file.lock().unwrap_or_else(PoisonError::into_inner);
        // A recording that cannot be written is lost; the session goes on.
        let _ = writeln!(file, "{line}").and_then(|()| file.flush());
    }
}

/// A request the client made, and the server's answer (if one came).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Exchange {
    /// The method.
    pub(crate) method: String,
    /// Its params.
    pub(crate) params: Option<Value>,
    /// The answer: `Ok(result)` or `Err(error object)`; `None` if none was recorded.
    pub(crate) answer: Option<Result<Value, Value>>,
}

/// A recording, read back.
#[derive(Debug, Clone, Default)]
pub(crate) struct Recording {
    /// The client's requests in the order sent, each with its answer.
    pub(crate) exchanges: Vec<Exchange>,
}

impl Recording {
    /// Reads the recording at `path`.
    ///
    /// # Errors
    ///
    /// Why it cannot be read: not a file, too large, or not a recording.
    pub(crate) fn read(path: &Path) -> Result<Self, String> {
        let size = std::fs::metadata(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?.len();
        if size > MAX_RECORDING {
            return Err(format!("{} is larger than {MAX_RECORDING} bytes", path.display()));
        }
        let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        Self::parse(&text).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// A recording from its text.
    ///
    /// # Errors
    ///
    /// Its first line is not a recording's header, or a line is not JSON.
    pub(crate) fn parse(text: &str) -> Result<Self, String> {
        let mut lines = text.lines().filter(|l| !l.trim().is_empty());
        let header: Value = lines.next().and_then(|l| serde_json::from_str(l).ok()).unwrap_or_default();
        if header.get("talaria").and_then(Value::as_str) != Some("recording") {
            return Err("not a talaria recording (made with --record FILE)".into());
        }
        let mut recording = Self::default();
        // Request id (as JSON text) -> index in `exchanges`, for the outgoing requests.
        let mut open: BTreeMap<String, usize> = BTreeMap::new();
        for (number, line) in lines.enumerate() {
            let entry: Value = serde_json::from_str(line).map_err(|e| format!("line {}: {e}", number + 2))?;
            let sent = entry.get("dir").and_then(Value::as_str) == Some("out");
            let frames = match entry.get("frame") {
                Some(Value::Array(batch)) => batch.clone(),
                Some(frame) => vec![frame.clone()],
                None => continue,
            };
            for frame in frames {
                recording.take(&frame, sent, &mut open);
            }
        }
        Ok(recording)
    }

    /// Files one frame: a client request opens an exchange, the server's answer closes it.
    fn take(&mut self, frame: &Value, sent: bool, open: &mut BTreeMap<String, usize>) {
        let id = frame.get("id").map(Value::to_string);
        let method = frame.get("method").and_then(Value::as_str);
        match (sent, method, id) {
            (true, Some(method), Some(id)) => {
                open.insert(id, self.exchanges.len());
                let params = frame.get("params").cloned();
                self.exchanges.push(Exchange { method: method.to_owned(), params, answer: None });
            }
            (false, None, Some(id)) => {
                let Some(at) = open.remove(&id) else { return };
                let answer = match (frame.get("result"), frame.get("error")) {
                    (Some(result), _) => Ok(result.clone()),
                    (None, Some(error)) => Err(error.clone()),
                    (None, None) => return,
                };
                if let Some(exchange) = self.exchanges.get_mut(at) {
                    exchange.answer = Some(answer);
                }
            }
            _ => {}
        }
    }
}

/// `value` without `_meta` members, at any depth (they carry what differs from run to run:
/// revisions, client capabilities, server info, progress tokens).
pub(crate) fn without_meta(value: &Value) -> Value {
    match value {
        Value::Object(object) => Value::Object(
            object.iter().filter(|(k, _)| *k != "_meta").map(|(k, v)| (k.clone(), without_meta(v))).collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(without_meta).collect()),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_paired_with_their_answers_across_batches_and_out_of_order() {
        let text = [
            r#"{"talaria":"recording","version":1,"server":"s","transport":"stdio"}"#,
            r#"{"ms":0,"dir":"out","frame":{"jsonrpc":"2.0","id":1,"method":"tools/list"}}"#,
            r#"{"ms":1,"dir":"out","frame":[{"jsonrpc":"2.0","id":2,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/x"}]}"#,
            r#"{"ms":2,"dir":"in","frame":{"jsonrpc":"2.0","id":2,"result":{}}}"#,
            r#"{"ms":3,"dir":"in","frame":{"jsonrpc":"2.0","id":"s1","method":"roots/list"}}"#,
            r#"{"ms":4,"dir":"out","frame":{"jsonrpc":"2.0","id":"s1","result":{"roots":[]}}}"#,
            r#"{"ms":5,"dir":"in","frame":{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"no"}}}"#,
            r#"{"ms":6,"dir":"out","frame":{"jsonrpc":"2.0","id":3,"method":"never/answered"}}"#,
        ]
        .join("\n");
        let recording = Recording::parse(&text).unwrap_or_default();
        let methods: Vec<&str> = recording.exchanges.iter().map(|e| e.method.as_str()).collect();
        assert_eq!(methods, ["tools/list", "ping", "never/answered"]);
        assert_eq!(recording.exchanges[0].answer, Some(Err(json!({"code": -32601, "message": "no"}))));
        assert_eq!(recording.exchanges[1].answer, Some(Ok(json!({}))));
        assert_eq!(recording.exchanges[2].answer, None);
        assert!(Recording::parse("{}\n").is_err(), "a file without the header is refused");
        assert!(Recording::parse("").is_err());
    }

    proptest::proptest! {
        /// Any text after a valid header reads as a recording or an error, never a panic;
        /// every exchange read has a method.
        #[test]
        fn any_lines_read_without_panicking(lines in proptest::collection::vec(proptest::prelude::any::<String>(), 0..8),
                                            frames in proptest::collection::vec((0i64..4, proptest::prelude::any::<bool>(), 0u8..4), 0..16)) {
            let header = r#"{"talaria":"recording","version":1}"#;
            let mut text = vec![header.to_owned()];
            text.extend(lines);
            for (id, sent, kind) in frames {
                let frame = match kind {
                    0 => json!({"jsonrpc": "2.0", "id": id, "method": "m"}),
                    1 => json!({"jsonrpc": "2.0", "id": id, "result": {}}),
                    2 => json!({"jsonrpc": "2.0", "id": id, "error": {"code": -1, "message": "x"}}),
                    _ => json!([{"jsonrpc": "2.0", "id": id, "method": "b"}, 7, null]),
                };
                text.push(json!({"ms": 0, "dir": if sent { "out" } else { "in" }, "frame": frame}).to_string());
            }
            if let Ok(recording) = Recording::parse(&text.join("\n")) {
                proptest::prop_assert!(recording.exchanges.iter().all(|e| !e.method.is_empty()));
            }
        }
    }

    #[test]
    fn meta_is_left_out_at_any_depth() {
        let value = json!({"_meta": {"a": 1}, "content": [{"text": "x", "_meta": {}}]});
        assert_eq!(without_meta(&value), json!({"content": [{"text": "x"}]}));
    }
}
