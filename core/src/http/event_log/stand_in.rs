//! [`stand_in`]: what the event log keeps in place of an answer too large for it.

use crate::alloc_prelude::*;

use crate::jsonrpc::{ErrorObject, ErrorResponse, Message};

/// What to log in place of `payload`, an event larger than the store keeps (`max_bytes`, see
/// [`EventStore::max_event_bytes`](super::EventStore::max_event_bytes)), if it is answers: an
/// internal error (`-32603`) for each request it answers, saying the answer cannot be sent
/// again. The client that received the event live never sees the stand-in; one that lost
/// the connection and resumes after it gets a terminal answer, where it would otherwise get
/// nothing and wait. `None` for an event the store keeps, and for one that answers nothing
/// (a notification, a server request): losing those is what a replay's
/// [`missed`](super::Replay::missed) count reports.
///
/// # Examples
///
/// ```
/// use talaria_core::http::event_log::stand_in;
///
/// let answer = br#"{"jsonrpc":"2.0","id":7,"result":{"content":[]}}"#;
/// assert_eq!(stand_in(answer, 1024), None, "kept as it is");
/// let kept = String::from_utf8(stand_in(answer, 16).unwrap()).unwrap();
/// assert!(kept.starts_with(r#"{"jsonrpc":"2.0","id":7,"error":{"code":-32603"#), "{kept}");
/// let note = br#"{"jsonrpc":"2.0","method":"notifications/progress","params":{}}"#;
/// assert_eq!(stand_in(note, 16), None, "not an answer");
/// ```
#[must_use]
pub fn stand_in(payload: &[u8], max_bytes: usize) -> Option<Vec<u8>> {
    if payload.len() <= max_bytes {
        return None;
    }
    let ids = crate::http::relay::answers_only(payload)?;
    let message = format!(
        "the answer ({} bytes) is larger than the server's event log keeps ({max_bytes} bytes): it cannot be sent again",
        payload.len()
    );
    let errors: Vec<Message> = ids
        .into_iter()
        .map(|id| Message::Error(ErrorResponse { id: Some(id), error: ErrorObject::internal(message.clone()) }))
        .collect();
    let batch = payload.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'[');
    Some(match (batch, &errors[..]) {
        (false, [one]) => one.to_vec(),
        _ => serde_json::to_vec(&errors).unwrap_or_default(),
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::{json, Value};

    fn parsed(bytes: &[u8]) -> Value {
        serde_json::from_slice(bytes).unwrap()
    }

    #[test]
    fn an_error_answer_too_large_is_stood_in_for_too() {
        let big = "x".repeat(100);
        let error = json!({"jsonrpc": "2.0", "id": "a", "error": {"code": 1, "message": big}}).to_string();
        let kept = parsed(&stand_in(error.as_bytes(), 64).unwrap());
        assert_eq!(kept["id"], "a");
        assert_eq!(kept["error"]["code"], -32603);
    }

    #[test]
    fn a_batch_of_answers_gets_a_batch_of_errors_in_its_order() {
        let big = "x".repeat(100);
        let batch =
            json!([{"jsonrpc": "2.0", "id": 2, "result": {"t": big}}, {"jsonrpc": "2.0", "id": 1, "result": {}}]);
        let kept = parsed(&stand_in(batch.to_string().as_bytes(), 64).unwrap());
        let ids: Vec<&Value> = kept.as_array().unwrap().iter().map(|e| &e["id"]).collect();
        assert_eq!(ids, [&json!(2), &json!(1)]);
        assert!(kept[0]["error"]["message"].as_str().unwrap().contains("larger than"));
    }

    #[test]
    fn a_batch_of_one_answer_stays_a_batch() {
        let batch = json!([{"jsonrpc": "2.0", "id": 2, "result": {"t": "x".repeat(100)}}]).to_string();
        assert!(parsed(&stand_in(batch.as_bytes(), 64).unwrap()).is_array());
    }

    #[test]
    fn the_stand_in_fits_where_the_answer_did_not() {
        let answer = json!({"jsonrpc": "2.0", "id": 1, "result": {"t": "x".repeat(1 << 20)}}).to_string();
        let kept = stand_in(answer.as_bytes(), 64 * 1024).unwrap();
        assert!(kept.len() < 512, "{} bytes", kept.len());
    }

    #[test]
    fn requests_and_mixed_frames_are_not_stood_in_for() {
        let request =
            json!({"jsonrpc": "2.0", "id": 1, "method": "sampling/createMessage", "params": {"t": "x".repeat(100)}});
        assert_eq!(stand_in(request.to_string().as_bytes(), 16), None);
        let mixed = json!([{"jsonrpc": "2.0", "id": 1, "result": {}}, {"jsonrpc": "2.0", "method": "n"}]);
        assert_eq!(stand_in(mixed.to_string().as_bytes(), 16), None);
    }
}
