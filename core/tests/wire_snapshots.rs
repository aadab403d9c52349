//! Byte-exact snapshots of encoded frames: a change in our encoding shows up here.
#![allow(clippy::unwrap_used, missing_docs)]

use serde_json::json;
use talaria_core::codec::{encode_event, SseEvent};
use talaria_core::jsonrpc::{
    encode_batch, DecodeError, ErrorObject, ErrorResponse, Message, Notification, Packet, Request, Response,
};

fn line(msg: &Message) -> String {
    let mut out = msg.to_vec();
    out.push(b'\n');
    String::from_utf8(out).unwrap()
}

#[test]
fn representative_frames() {
    let frames = [
        Request::new(
            1,
            "tools/call",
            Some(json!({"name": "echo", "arguments": {"text": "hé \"quoted\"\n"}, "_meta": {"progressToken": "p1"}})),
        )
        .unwrap()
        .into(),
        Request::new("req-α", "ping", None::<()>).unwrap().into(),
        Notification::new("notifications/progress", Some(json!({"progressToken": "p1", "progress": 0.5, "total": 1})))
            .unwrap()
            .into(),
        Response::new(1, &json!({"content": [{"type": "text", "text": "hi"}], "isError": false})).unwrap().into(),
        ErrorResponse {
            id: Some(7.into()),
            error: ErrorObject::unsupported_protocol_version("1900-01-01", &["2026-07-28", "2025-11-25"]),
        }
        .into(),
        ErrorResponse { id: Some(8.into()), error: ErrorObject::method_not_found("tools/destroy") }.into(),
        ErrorResponse { id: Some(9.into()), error: ErrorObject::request_timeout(30_000) }.into(),
    ];
    let text: String = frames.iter().map(line).collect();
    insta::assert_snapshot!(text);
}

#[test]
fn error_replies_to_bad_frames() {
    let bad: [&[u8]; 4] = [b"{oops", b"null", br#"{"jsonrpc":"1.0","id":3,"method":"x"}"#, b"[]"];
    let text: String = bad
        .iter()
        .map(|b| {
            let err: DecodeError = Packet::from_slice(b).unwrap_err();
            line(&err.to_response().unwrap().into())
        })
        .collect();
    insta::assert_snapshot!(text);
}

#[test]
fn batch_and_sse_framing() {
    let a: Message = Request::new(1, "tools/list", Some(json!({}))).unwrap().into();
    let b: Message = Notification::new("notifications/initialized", None::<()>).unwrap().into();
    let batch = String::from_utf8(encode_batch(&[a.clone(), b])).unwrap();
    let mut sse = Vec::new();
    encode_event(&SseEvent::message(String::from_utf8(a.to_vec()).unwrap()).with_id("0-1"), &mut sse);
    encode_event(&SseEvent::message("").with_id("0-0").with_retry(1000), &mut sse);
    insta::assert_snapshot!(format!("{batch}\n---\n{}", String::from_utf8(sse).unwrap()));
}
