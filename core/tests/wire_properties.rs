//! Properties of the wire layer: round trips, and agreement with a reference model of the
//! JSON-RPC 2.0 validity rules.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use proptest::prelude::*;
use serde_json::{json, Map, Value};
use talaria_core::codec::LineDecoder;
use talaria_core::jsonrpc::{
    encode_batch, DecodeError, ErrorCode, ErrorObject, ErrorResponse, Message, Notification, Packet, Request,
    RequestId, Response,
};

fn json_leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        (-1.0e9f64..1.0e9).prop_map(Value::from),
        ".{0,12}".prop_map(Value::String),
    ]
}

fn json_value() -> impl Strategy<Value = Value> {
    json_leaf().prop_recursive(4, 32, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map(".{0,8}", inner, 0..6).prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn structured() -> impl Strategy<Value = Value> {
    prop_oneof![
        prop::collection::btree_map(".{0,8}", json_value(), 0..6).prop_map(|m| Value::Object(m.into_iter().collect())),
        prop::collection::vec(json_value(), 0..4).prop_map(Value::Array),
    ]
}

fn request_id() -> impl Strategy<Value = RequestId> {
    prop_oneof![any::<i64>().prop_map(RequestId::Number), ".{0,16}".prop_map(RequestId::String)]
}

fn id_json(id: &RequestId) -> Value {
    match id {
        RequestId::Number(n) => json!(n),
        RequestId::String(s) => json!(s),
    }
}

/// An arbitrary message, with the JSON it must encode to.
fn message() -> impl Strategy<Value = (Message, Value)> {
    prop_oneof![
        (request_id(), ".{0,20}", prop::option::of(structured())).prop_map(|(id, method, params)| {
            let mut expect = json!({"jsonrpc": "2.0", "id": id_json(&id), "method": method});
            if let Some(p) = &params {
                expect["params"] = p.clone();
            }
            (Request::new(id, method, params).unwrap().into(), expect)
        }),
        (".{0,20}", prop::option::of(structured())).prop_map(|(method, params)| {
            let mut expect = json!({"jsonrpc": "2.0", "method": method});
            if let Some(p) = &params {
                expect["params"] = p.clone();
            }
            (Notification::new(method, params).unwrap().into(), expect)
        }),
        (request_id(), json_value()).prop_map(|(id, result)| {
            let expect = json!({"jsonrpc": "2.0", "id": id_json(&id), "result": result});
            (Response::new(id, &result).unwrap().into(), expect)
        }),
        (prop::option::of(request_id()), any::<i64>(), ".{0,20}", prop::option::of(json_value())).prop_map(
            |(id, code, message, data)| {
                let mut error = json!({"code": code, "message": message});
                if let Some(d) = &data {
                    error["data"] = d.clone();
                }
                let expect = json!({"jsonrpc": "2.0", "id": id.as_ref().map(id_json), "error": error});
                let err = ErrorObject { code: ErrorCode(code), message, data };
                (ErrorResponse { id, error: err }.into(), expect)
            },
        ),
    ]
}

/// Member values that exercise every validity rule.
fn member_value() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(json!("2.0")),
        Just(json!("1.0")),
        Just(json!(2.0)),
        Just(json!(7)),
        Just(json!(-3)),
        Just(json!(1.5)),
        Just(json!(9_223_372_036_854_775_808_u64)),
        Just(json!("an-id")),
        Just(Value::Null),
        Just(json!(true)),
        Just(json!({})),
        Just(json!({"a": [1]})),
        Just(json!([])),
        Just(json!({"code": -32601, "message": "m"})),
        Just(json!({"code": -32601, "message": "m", "data": {"x": 1}})),
        Just(json!({"code": 1.5, "message": "m"})),
        Just(json!({"code": 1})),
        Just(json!({"message": "m"})),
        Just(json!("tools/list")),
    ]
}

/// A JSON object with a random subset of the envelope members (and sometimes an unknown one).
fn envelope() -> impl Strategy<Value = Value> {
    let names = ["jsonrpc", "id", "method", "params", "result", "error", "other"];
    prop::collection::vec(prop::option::weighted(0.6, member_value()), names.len()).prop_map(move |vals| {
        let mut obj = Map::new();
        for (name, v) in names.iter().zip(vals) {
            if let Some(v) = v {
                obj.insert((*name).to_owned(), v);
            }
        }
        // Bias towards the valid version string so the other rules are reached.
        if obj.contains_key("jsonrpc") && obj["jsonrpc"] != json!("2.0") && obj.len() % 2 == 0 {
            obj.insert("jsonrpc".into(), json!("2.0"));
        }
        Value::Object(obj)
    })
}

#[derive(Debug, PartialEq)]
enum Verdict {
    Request,
    Notification,
    Response,
    Error,
    Invalid { id: Option<RequestId>, response_like: bool },
}

/// The JSON-RPC 2.0 rules (with MCP's "ids are never null on requests"), written independently
/// of the decoder.
fn reference(obj: &Map<String, Value>) -> Verdict {
    let valid_id = |v: &Value| v.as_i64().map(RequestId::Number).or_else(|| v.as_str().map(RequestId::from));
    let recovered = obj.get("id").and_then(valid_id);
    let response_like = !obj.contains_key("method") && (obj.contains_key("result") || obj.contains_key("error"));
    let invalid = Verdict::Invalid { id: recovered, response_like };
    if obj.get("jsonrpc") != Some(&json!("2.0")) {
        return invalid;
    }
    let id_state = match obj.get("id") {
        None => "absent",
        Some(Value::Null) => "null",
        Some(v) if valid_id(v).is_some() => "valid",
        Some(_) => return invalid,
    };
    // `params` belongs to requests and notifications; on a response it is an unknown member.
    if let (Some(_), Some(Value::Bool(_) | Value::Number(_) | Value::String(_))) =
        (obj.get("method"), obj.get("params"))
    {
        return invalid;
    }
    let error_ok = |e: &Value| {
        e.get("code").is_some_and(|c| c.as_i64().is_some()) && e.get("message").is_some_and(Value::is_string)
    };
    if let Some(e) = obj.get("error") {
        if !error_ok(e) {
            return invalid;
        }
    }
    match (obj.get("method"), obj.contains_key("result"), obj.contains_key("error")) {
        (Some(Value::String(_)), false, false) => match id_state {
            "valid" => Verdict::Request,
            "absent" => Verdict::Notification,
            _ => invalid,
        },
        (None, true, false) if id_state == "valid" => Verdict::Response,
        (None, false, true) => Verdict::Error,
        _ => invalid,
    }
}

fn verdict(result: Result<Message, DecodeError>) -> Verdict {
    match result {
        Ok(Message::Request(_)) => Verdict::Request,
        Ok(Message::Notification(_)) => Verdict::Notification,
        Ok(Message::Response(_)) => Verdict::Response,
        Ok(Message::Error(_)) => Verdict::Error,
        Err(DecodeError::Invalid { id, response_like, .. }) => Verdict::Invalid { id, response_like },
        Err(other) => panic!("valid JSON reported as {other:?}"),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn encode_then_decode_is_the_identity((msg, expect) in message()) {
        let bytes = msg.to_vec();
        let as_json: Value = serde_json::from_slice(&bytes).unwrap();
        prop_assert_eq!(&as_json, &expect);
        let back = Message::from_slice(&bytes).unwrap();
        prop_assert_eq!(back.to_vec(), bytes);
    }

    #[test]
    fn the_decoder_agrees_with_the_reference_rules(obj in envelope()) {
        let bytes = serde_json::to_vec(&obj).unwrap();
        let expected = reference(obj.as_object().unwrap());
        prop_assert_eq!(verdict(Message::from_slice(&bytes)), expected);
    }

    #[test]
    fn batches_round_trip_element_by_element(msgs in prop::collection::vec(message(), 1..8)) {
        let msgs: Vec<Message> = msgs.into_iter().map(|(m, _)| m).collect();
        let bytes = encode_batch(&msgs);
        let Packet::Batch(items) = Packet::from_slice(&bytes).unwrap() else { panic!("not a batch") };
        prop_assert_eq!(items.len(), msgs.len());
        for (item, msg) in items.into_iter().zip(&msgs) {
            prop_assert_eq!(item.unwrap().to_vec(), msg.to_vec());
        }
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..256)) {
        let _ = Packet::from_slice(&bytes);
        let mut lines = LineDecoder::with_max_frame_len(64);
        lines.decode(&bytes, |frame| {
            if let Ok(frame) = frame {
                let _ = Packet::from_slice(frame);
            }
        });
    }

    #[test]
    fn line_framing_is_chunking_invariant_for_messages(
        msgs in prop::collection::vec(message(), 1..6),
        cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..8),
    ) {
        let mut stream = Vec::new();
        for (m, _) in &msgs {
            m.write_to(&mut stream);
            stream.extend_from_slice(b"\r\n");
        }
        let mut points: Vec<usize> = cuts.iter().map(|c| c.index(stream.len() + 1)).collect();
        points.sort_unstable();
        let mut decoder = LineDecoder::new();
        let mut decoded = Vec::new();
        let mut start = 0;
        for end in points.into_iter().chain([stream.len()]) {
            decoder.decode(&stream[start..end], |f| decoded.push(Message::from_slice(f.unwrap()).unwrap().to_vec()));
            start = end;
        }
        let expected: Vec<Vec<u8>> = msgs.iter().map(|(m, _)| m.to_vec()).collect();
        prop_assert_eq!(decoded, expected);
    }
}
