//! The bad-input table: every hostile or malformed frame gets its documented error, none panics.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use talaria_core::codec::{LineDecoder, LineError};
use talaria_core::jsonrpc::{DecodeError, ErrorCode, Message, Packet, RequestId};

/// What a frame is documented to produce.
#[derive(Debug)]
enum Expect {
    /// -32700, id null.
    Parse,
    /// -32600 with this recovered id.
    Invalid(Option<RequestId>),
    /// -32600 for a response-shaped message: reported, never answered.
    InvalidResponse,
    /// -32600 for `[]`.
    EmptyBatch,
    /// A batch whose elements all failed (each answered on its own).
    BatchOfInvalid(usize),
    /// A valid single message.
    Valid,
}

fn deep(levels: usize) -> String {
    format!("{}{}", "[".repeat(levels), "]".repeat(levels))
}

fn deep_params(levels: usize) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":4,"method":"x","params":{{"a":{}}}}}"#, deep(levels))
}

fn table() -> Vec<(&'static str, Vec<u8>, Expect)> {
    let n = |i| Some(RequestId::Number(i));
    vec![
        ("empty frame", b"".to_vec(), Expect::Parse),
        ("whitespace", b"  \t ".to_vec(), Expect::Parse),
        ("null", b"null".to_vec(), Expect::Invalid(None)),
        ("number", b"42".to_vec(), Expect::Invalid(None)),
        ("empty batch", b"[]".to_vec(), Expect::EmptyBatch),
        ("batch of a number", b"[1]".to_vec(), Expect::BatchOfInvalid(1)),
        ("batch of junk", br#"[1,"a",null]"#.to_vec(), Expect::BatchOfInvalid(3)),
        ("200 levels of nesting: a batch whose element is too deep", deep(200).into_bytes(), Expect::BatchOfInvalid(1)),
        (
            "200 levels of objects",
            format!("{}1{}", r#"{"a":"#.repeat(200), "}".repeat(200)).into_bytes(),
            Expect::Parse,
        ),
        ("200 levels inside params", deep_params(200).into_bytes(), Expect::Valid),
        ("invalid UTF-8 in a string", b"{\"jsonrpc\":\"2.0\",\"method\":\"\xff\"}".to_vec(), Expect::Parse),
        ("invalid UTF-8 outside strings", b"\xfe\xff".to_vec(), Expect::Parse),
        ("raw NUL in a string", b"{\"jsonrpc\":\"2.0\",\"method\":\"a\0b\"}".to_vec(), Expect::Parse),
        ("raw NUL outside strings", b"{\"jsonrpc\":\"2.0\",\0\"method\":\"a\"}".to_vec(), Expect::Parse),
        ("escaped NUL is fine", br#"{"jsonrpc":"2.0","method":"a\u0000b"}"#.to_vec(), Expect::Valid),
        ("duplicate id", br#"{"jsonrpc":"2.0","id":1,"id":2,"method":"x"}"#.to_vec(), Expect::Invalid(n(2))),
        ("duplicate method", br#"{"jsonrpc":"2.0","id":1,"method":"x","method":"y"}"#.to_vec(), Expect::Invalid(n(1))),
        (
            "id beyond i64",
            br#"{"jsonrpc":"2.0","id":9223372036854775808,"method":"x"}"#.to_vec(),
            Expect::Invalid(None),
        ),
        (
            "id beyond u64",
            br#"{"jsonrpc":"2.0","id":18446744073709551616,"method":"x"}"#.to_vec(),
            Expect::Invalid(None),
        ),
        ("float id", br#"{"jsonrpc":"2.0","id":1.5,"method":"x"}"#.to_vec(), Expect::Invalid(None)),
        ("exponent id", br#"{"jsonrpc":"2.0","id":1e3,"method":"x"}"#.to_vec(), Expect::Invalid(None)),
        ("null id on a request", br#"{"jsonrpc":"2.0","id":null,"method":"x"}"#.to_vec(), Expect::Invalid(None)),
        ("boolean id", br#"{"jsonrpc":"2.0","id":true,"method":"x"}"#.to_vec(), Expect::Invalid(None)),
        ("jsonrpc 1.0", br#"{"jsonrpc":"1.0","id":7,"method":"x"}"#.to_vec(), Expect::Invalid(n(7))),
        (
            "jsonrpc as number",
            br#"{"jsonrpc":2.0,"id":"s","method":"x"}"#.to_vec(),
            Expect::Invalid(Some(RequestId::from("s"))),
        ),
        ("missing jsonrpc", br#"{"id":3,"method":"x"}"#.to_vec(), Expect::Invalid(n(3))),
        ("method not a string", br#"{"jsonrpc":"2.0","id":3,"method":1}"#.to_vec(), Expect::Invalid(n(3))),
        ("params a string", br#"{"jsonrpc":"2.0","id":3,"method":"x","params":"p"}"#.to_vec(), Expect::Invalid(n(3))),
        ("params a number", br#"{"jsonrpc":"2.0","method":"x","params":1}"#.to_vec(), Expect::Invalid(None)),
        ("method with result", br#"{"jsonrpc":"2.0","id":3,"method":"x","result":{}}"#.to_vec(), Expect::Invalid(n(3))),
        ("nothing to do", br#"{"jsonrpc":"2.0","id":3}"#.to_vec(), Expect::Invalid(n(3))),
        (
            "result and error",
            br#"{"jsonrpc":"2.0","id":3,"result":{},"error":{"code":1,"message":"m"}}"#.to_vec(),
            Expect::InvalidResponse,
        ),
        ("result with null id", br#"{"jsonrpc":"2.0","id":null,"result":{}}"#.to_vec(), Expect::InvalidResponse),
        ("error without message", br#"{"jsonrpc":"2.0","id":3,"error":{"code":1}}"#.to_vec(), Expect::InvalidResponse),
        (
            "error with float code",
            br#"{"jsonrpc":"2.0","id":3,"error":{"code":1.5,"message":"m"}}"#.to_vec(),
            Expect::InvalidResponse,
        ),
        ("trailing garbage", br#"{"jsonrpc":"2.0","method":"x"} x"#.to_vec(), Expect::Parse),
        ("two objects", br#"{"jsonrpc":"2.0","method":"x"}{"jsonrpc":"2.0","method":"x"}"#.to_vec(), Expect::Parse),
        ("truncated", br#"{"jsonrpc":"2.0","method":"#.to_vec(), Expect::Parse),
        (
            "error response with null id",
            br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"m"}}"#.to_vec(),
            Expect::Valid,
        ),
        ("null params read as absent", br#"{"jsonrpc":"2.0","method":"x","params":null}"#.to_vec(), Expect::Valid),
        ("unknown members ignored", br#"{"jsonrpc":"2.0","method":"x","extra":[1,{"a":2}]}"#.to_vec(), Expect::Valid),
    ]
}

#[test]
fn every_bad_frame_gets_its_documented_error() {
    for (name, bytes, expect) in table() {
        let got = Packet::from_slice(&bytes);
        match (&expect, &got) {
            (Expect::Parse, Err(e @ DecodeError::Parse { .. })) => {
                let reply = e.to_response().expect("parse errors are answered");
                assert_eq!(reply.error.code, ErrorCode::PARSE_ERROR, "{name}");
                assert_eq!(reply.id, None, "{name}");
            }
            (Expect::Invalid(id), Err(e @ DecodeError::Invalid { response_like: false, .. })) => {
                let reply = e.to_response().expect("invalid requests are answered");
                assert_eq!(reply.error.code, ErrorCode::INVALID_REQUEST, "{name}");
                assert_eq!(&reply.id, id, "{name}");
            }
            (Expect::InvalidResponse, Err(e @ DecodeError::Invalid { response_like: true, .. })) => {
                assert!(e.to_response().is_none(), "{name}: a response must not be answered");
                assert_eq!(e.to_error_object().code, ErrorCode::INVALID_REQUEST, "{name}");
            }
            (Expect::EmptyBatch, Err(e @ DecodeError::EmptyBatch)) => {
                assert_eq!(e.to_response().unwrap().error.code, ErrorCode::INVALID_REQUEST, "{name}");
            }
            (Expect::BatchOfInvalid(n), Ok(Packet::Batch(items))) => {
                assert_eq!(items.len(), *n, "{name}");
                assert!(items.iter().all(Result::is_err), "{name}");
            }
            (Expect::Valid, Ok(Packet::Single(_))) => {}
            _ => panic!("{name}: expected {expect:?}, got {got:?}"),
        }
    }
}

#[test]
fn single_message_decoding_refuses_batches() {
    let err = Message::from_slice(br#"[{"jsonrpc":"2.0","method":"x"}]"#).unwrap_err();
    assert!(matches!(err, DecodeError::Invalid { .. }));
    assert!(err.to_string().contains("batch"));
}

#[test]
fn deep_params_fail_only_when_typed() {
    let msg = Message::from_slice(deep_params(200).as_bytes()).unwrap();
    let Message::Request(req) = msg else { panic!("not a request") };
    assert_eq!(req.id, RequestId::Number(4));
    assert!(req.params_as::<serde_json::Value>().is_err(), "serde_json's depth limit applies to typed decoding");
}

#[test]
fn a_hundred_megabyte_line_is_refused_with_bounded_memory() {
    let max = 8 * 1024 * 1024;
    let mut decoder = LineDecoder::with_max_frame_len(max);
    let chunk = vec![b'a'; 1 << 20];
    let mut errors = Vec::new();
    let mut frames = Vec::new();
    for _ in 0..100 {
        decoder.decode(&chunk, |f| match f {
            Ok(frame) => frames.push(frame.to_vec()),
            Err(e) => errors.push(e),
        });
        assert!(decoder.buffered_len() <= max);
    }
    decoder.decode(b"\n{\"jsonrpc\":\"2.0\",\"method\":\"after\"}\n", |f| match f {
        Ok(frame) => frames.push(frame.to_vec()),
        Err(e) => errors.push(e),
    });
    assert_eq!(errors.len(), 1);
    assert!(matches!(errors[0], LineError::FrameTooLong { max: m, .. } if m == max));
    assert_eq!(frames.len(), 1, "the stream resynchronises at the next line");
    assert_eq!(Message::from_slice(&frames[0]).unwrap().method(), Some("after"));
}

#[test]
fn blank_lines_between_messages_are_skipped() {
    let mut decoder = LineDecoder::new();
    let mut methods = Vec::new();
    decoder.decode(b"\n  \r\n{\"jsonrpc\":\"2.0\",\"method\":\"a\"}\r\n\n", |f| {
        methods.push(Message::from_slice(f.unwrap()).unwrap().method().unwrap().to_owned());
    });
    assert_eq!(methods, ["a"]);
}
