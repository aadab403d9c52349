//! Scenarios: JSON-RPC batches, which exist only in 2025-03-26, through the two-peer
//! simulator.
//!
//! `TALARIA_SIM_SEED=<n>` replays a failing seed.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use serde_json::{json, Value};
use talaria_core::jsonrpc::{ErrorCode, Message, Packet};
use talaria_core::session::{BatchItem, ProtocolError, RequestOptions, SendError};
use talaria_core::version::ProtocolVersion;
use talaria_tests::sim::{params_of, raw, Dir, Pair, Setup, SimConfig};

const BATCHING: Setup = Setup::Legacy(ProtocolVersion::V2025_03_26);

fn request(method: &str, params: &Value) -> BatchItem {
    BatchItem::Request { method: method.into(), params: Some(raw(params)), options: RequestOptions::default() }
}

/// The batch frames (JSON arrays) a side transmitted, decoded.
fn batches(wire: &[talaria_tests::sim::Sent]) -> Vec<Vec<Message>> {
    wire.iter()
        .filter_map(|s| match Packet::from_slice(&s.payload).unwrap() {
            Packet::Batch(items) => Some(items.into_iter().map(Result::unwrap).collect()),
            Packet::Single(_) => None,
        })
        .collect()
}

#[test]
fn a_batch_is_tracked_per_request_and_answered_with_one_array() {
    for seed in 0..5 {
        let mut pair = BATCHING.connected(SimConfig::chaos(seed));
        let now = pair.now();
        let items = vec![
            request("test/echo", &json!({"n": 1})),
            BatchItem::Notification { method: "notifications/test".into(), params: None },
            request("ping", &json!({})),
            request("test/echo", &json!({"n": 2})),
        ];
        let ids = pair.client.session.send_batch(now, items).unwrap();
        assert!(ids[1].is_none());
        pair.run_until_quiet();
        assert_eq!(pair.server.requests.len(), 2, "ping is the session's; the echoes are the application's");
        // The application answers one now and one later; the array waits for both.
        let first = pair.server.requests.pop_front().unwrap();
        let answer = json!({"n": params_of(&first)["n"]});
        pair.server.respond(first, Ok(answer)).unwrap();
        pair.run_until_quiet();
        assert!(batches(&pair.server.wire).is_empty(), "seed {seed}: sent before the last answer");
        pair.server.answer_all(|r| Ok(json!({"n": params_of(r)["n"]}))).unwrap();
        pair.run_until_quiet();

        let sent = batches(&pair.server.wire);
        assert_eq!(sent.len(), 1, "seed {seed}");
        assert_eq!(sent[0].len(), 3, "seed {seed}: one response per request, none for the notification");
        assert_eq!(pair.client.result(ids[0].as_ref().unwrap()).unwrap()["n"], 1);
        assert_eq!(pair.client.result(ids[2].as_ref().unwrap()), Some(json!({})));
        assert_eq!(pair.client.result(ids[3].as_ref().unwrap()).unwrap()["n"], 2);
        assert_eq!(batches(&pair.client.wire).len(), 1);
    }
}

#[test]
fn batched_requests_time_out_and_cancel_one_by_one() {
    let mut pair = BATCHING.connected(SimConfig::perfect(1));
    let now = pair.now();
    let slow = BatchItem::Request {
        method: "test/slow".into(),
        params: None,
        options: RequestOptions::default().with_timeout(std::time::Duration::from_secs(5)),
    };
    let ids = pair.client.session.send_batch(now, vec![slow, request("test/x", &json!({}))]).unwrap();
    let (slow, other) = (ids[0].clone().unwrap(), ids[1].clone().unwrap());
    pair.run_for(std::time::Duration::from_secs(6));
    assert!(matches!(
        pair.client.error(&slow),
        Some(talaria_core::session::CallError::Local(talaria_core::session::LocalError::TimedOut))
    ));
    pair.client.session.cancel(&other, None).unwrap();
    pair.run_until_quiet();
    assert_eq!(pair.client.response_count(&slow), 1);
    assert_eq!(pair.client.response_count(&other), 1);
    // The application answers both anyway: nothing is sent for cancelled requests.
    pair.server.answer_all(|_| Ok(json!({}))).unwrap();
    pair.run_until_quiet();
    assert!(pair.server.sent_answers(&slow).is_empty() && pair.server.sent_answers(&other).is_empty());
    assert!(batches(&pair.server.wire).is_empty());
    assert_eq!(pair.client.session.late_responses(), 0);
}

#[test]
fn send_batch_is_refused_outside_2025_03_26() {
    for setup in Setup::ALL.into_iter().filter(|s| *s != BATCHING) {
        let mut pair = setup.connected(SimConfig::perfect(2));
        let now = pair.now();
        let got = pair.client.session.send_batch(now, vec![request("test/x", &json!({}))]);
        assert_eq!(got, Err(SendError::BatchNotSupported), "{setup}");
    }
    // Nor before the handshake.
    let mut pair = BATCHING.pair(SimConfig::perfect(2));
    let now = pair.now();
    assert_eq!(pair.client.session.send_batch(now, vec![]), Err(SendError::BatchNotSupported));
}

#[test]
fn a_batch_outside_2025_03_26_is_refused_whole() {
    for setup in Setup::ALL.into_iter().filter(|s| *s != BATCHING) {
        let mut pair = setup.connected(SimConfig::perfect(3));
        pair.inject(
            Dir::ToServer,
            br#"[{"jsonrpc":"2.0","id":"b1","method":"ping"},{"jsonrpc":"2.0","id":"b2","method":"ping"}]"#,
        );
        pair.run_until_quiet();
        let refusals: Vec<_> = pair
            .server
            .sent_messages()
            .into_iter()
            .filter_map(|m| match m {
                Message::Error(e) if e.id.is_none() => Some(e.error.code),
                _ => None,
            })
            .collect();
        assert_eq!(refusals, [ErrorCode::INVALID_REQUEST], "{setup}");
        assert!(pair.server.misbehaviours().any(|m| *m == ProtocolError::BatchNotAllowed), "{setup}");
        assert!(pair.server.sent_answers(&"b1".into()).is_empty(), "{setup}");
        assert!(!pair.server.is_closed(), "{setup}");
    }
}

#[test]
fn a_batch_of_notifications_gets_no_answer_and_a_bad_element_its_own_error() {
    let mut pair = BATCHING.connected(SimConfig::perfect(4));
    let before = pair.server.wire.len();
    pair.inject(
        Dir::ToServer,
        br#"[{"jsonrpc":"2.0","method":"notifications/a"},{"jsonrpc":"2.0","method":"notifications/b"}]"#,
    );
    pair.run_until_quiet();
    assert_eq!(pair.server.wire.len(), before, "notifications are not answered");
    pair.inject(
        Dir::ToServer,
        br#"[{"jsonrpc":"2.0","id":"ok","method":"ping"},{"jsonrpc":"1.0","id":"bad","method":"ping"}]"#,
    );
    pair.run_until_quiet();
    let sent = batches(&pair.server.wire);
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].len(), 2, "{:?}", sent[0]);
    assert!(matches!(&sent[0][0], Message::Response(r) if r.id == "ok".into()));
    assert!(matches!(&sent[0][1], Message::Error(e) if e.error.code == ErrorCode::INVALID_REQUEST));
}

#[test]
fn a_batch_longer_than_the_limit_is_refused() {
    let mut server = BATCHING.server_config();
    server.session.max_batch_len = 3;
    let mut pair = Pair::new(BATCHING.client_config(), server, SimConfig::perfect(5));
    pair.connect();
    let items: Vec<String> = (0..4).map(|i| format!(r#"{{"jsonrpc":"2.0","id":{i},"method":"ping"}}"#)).collect();
    pair.inject(Dir::ToServer, format!("[{}]", items.join(",")).as_bytes());
    pair.run_until_quiet();
    assert!(batches(&pair.server.wire).is_empty());
    let refused = pair.server.sent_messages().into_iter().any(|m| matches!(m, Message::Error(e) if e.id.is_none()));
    assert!(refused);
}

#[test]
fn closing_with_a_batch_half_answered_sends_nothing_more() {
    let mut pair = BATCHING.connected(SimConfig::perfect(6));
    let now = pair.now();
    let ids = pair
        .client
        .session
        .send_batch(now, vec![request("test/a", &json!({})), request("test/b", &json!({}))])
        .unwrap();
    pair.run_until_quiet();
    let a = pair.server.requests.pop_front().unwrap();
    pair.server.respond(a, Ok(json!({}))).unwrap();
    pair.server.session.close();
    pair.run_until_quiet();
    assert!(batches(&pair.server.wire).is_empty());
    for id in ids.into_iter().flatten() {
        assert!(matches!(
            pair.client.error(&id),
            Some(talaria_core::session::CallError::Local(talaria_core::session::LocalError::Closed { .. }))
        ));
    }
    assert!(pair.client.closed_last() && pair.server.closed_last());
}

#[test]
fn a_cancelled_request_does_not_hold_back_the_rest_of_its_batch() {
    let mut pair = BATCHING.connected(SimConfig::perfect(7));
    let now = pair.now();
    let ids = pair
        .client
        .session
        .send_batch(now, vec![request("test/a", &json!({})), request("test/b", &json!({}))])
        .unwrap();
    let (a, b) = (ids[0].clone().unwrap(), ids[1].clone().unwrap());
    pair.run_until_quiet();
    pair.client.session.cancel(&a, Some("not needed")).unwrap();
    pair.run_until_quiet();
    assert_eq!(pair.server.peer_cancellations().count(), 1);
    // The handler of `a` stops, as `Event::PeerCancelled` asks; only `b` is answered.
    let b_req = pair.server.take_request("test/b").unwrap();
    pair.server.respond(b_req, Ok(json!({"b": true}))).unwrap();
    pair.run_for(std::time::Duration::from_secs(1));
    assert_eq!(pair.client.result(&b).map(|r| r["b"].clone()), Some(json!(true)), "{:?}", pair.client.outcome(&b));
}
