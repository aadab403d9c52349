//! `replay FILE`: sends a recording's requests (`--record FILE`) to the server connected now,
//! in order, and compares each answer with the recorded one (`_meta` aside): a result with
//! a result, an error with an error of the same code. For CI: a server that answers
//! differently after a change exits 3.
//!
//! Left out: the handshake (`initialize`, `server/discover`: the session makes its own, and
//! a recorded probe may have been refused before a fallback), requests about tasks and listen
//! streams (their ids belong to the recorded run), and the rounds of a multi-round request
//! (the client answers the server's questions again itself, as its flags say).

use serde_json::{json, Value};
use talaria_core::session::CallError;

use super::recording::{without_meta, Exchange, Recording};
use talaria::client::{Client, ClientError};

/// The methods never replayed.
const SKIPPED: [&str; 7] = [
    "initialize",
    "server/discover",
    "tasks/get",
    "tasks/update",
    "tasks/result",
    "tasks/cancel",
    "subscriptions/listen",
];

/// Replays `recording` on `client`: the report, and whether any answer differed.
pub(crate) fn replay(client: &Client, recording: &Recording) -> (Value, bool) {
    let (mut replayed, mut skipped) = (0, 0);
    let mut differences = Vec::new();
    for (index, exchange) in recording.exchanges.iter().enumerate() {
        let Some(before) = exchange.answer.as_ref().filter(|_| replayable(exchange)) else {
            skipped += 1;
            continue;
        };
        replayed += 1;
        let params = exchange.params.as_ref().map(without_meta).and_then(|p| serde_json::value::to_raw_value(&p).ok());
        let now = match client.request(&exchange.method, params) {
            Ok(raw) => Ok(serde_json::from_str::<Value>(raw.get()).unwrap_or(Value::Null)),
            Err(ClientError::Call(CallError::Remote(error))) => Err(serde_json::to_value(error).unwrap_or_default()),
            Err(other) => Err(json!({"failed": other.to_string()})),
        };
        if !same(before, &now) {
            let shown = |answer: &Result<Value, Value>| match answer {
                Ok(result) => json!({"result": without_meta(result)}),
                Err(error) => json!({"error": error}),
            };
            differences.push(json!({
                "index": index, "method": exchange.method, "params": exchange.params.as_ref().map(without_meta),
                "before": shown(before), "now": shown(&now),
            }));
        }
    }
    let same = differences.is_empty();
    (json!({"same": same, "replayed": replayed, "skipped": skipped, "differences": differences}), !same)
}

/// Whether `exchange` can be sent again and its answer compared.
fn replayable(exchange: &Exchange) -> bool {
    let retry = exchange.params.as_ref().is_some_and(|p| p.get("inputResponses").is_some());
    // An answer that is a step of a longer exchange (a task, a question) is not comparable.
    let partial = matches!(&exchange.answer, Some(Ok(result))
        if matches!(result.get("resultType").and_then(Value::as_str), Some("task" | "input_required")));
    !SKIPPED.contains(&exchange.method.as_str()) && !retry && !partial
}

/// Whether two answers agree: equal results (`_meta` aside), or errors with the same code.
fn same(before: &Result<Value, Value>, now: &Result<Value, Value>) -> bool {
    match (before, now) {
        (Ok(a), Ok(b)) => without_meta(a) == without_meta(b),
        (Err(a), Err(b)) => a.get("code").is_some() && a.get("code") == b.get("code"),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_agree_on_results_without_meta_and_on_error_codes() {
        let ok = |v: Value| -> Result<Value, Value> { Ok(v) };
        let err = |v: Value| -> Result<Value, Value> { Err(v) };
        assert!(same(&ok(json!({"a": 1, "_meta": {"x": 1}})), &ok(json!({"a": 1}))));
        assert!(!same(&ok(json!({"a": 1})), &ok(json!({"a": 2}))));
        assert!(same(&err(json!({"code": -32602, "message": "x"})), &err(json!({"code": -32602, "message": "y"}))));
        assert!(!same(&err(json!({"code": -32602})), &err(json!({"code": -32601}))));
        assert!(!same(&ok(json!({})), &err(json!({"code": -32601}))));
        let exchange = |method: &str, params: Value, answer: Value| Exchange {
            method: method.into(),
            params: Some(params),
            answer: Some(Ok(answer)),
        };
        assert!(replayable(&exchange("tools/call", json!({"name": "x"}), json!({"content": []}))));
        assert!(!replayable(&exchange("tasks/get", json!({"taskId": "t"}), json!({}))));
        assert!(!replayable(&exchange("tools/call", json!({"inputResponses": {}}), json!({}))));
        assert!(!replayable(&exchange("tools/call", json!({}), json!({"resultType": "task"}))));
    }
}
