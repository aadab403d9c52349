//! Unit tests of the session against hand-written frames. The two-peer scenarios live in the
//! `talaria-tests` crate.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::time::{Duration, Instant};

use serde_json::{json, Value};

use super::*;
use crate::schema::lifecycle::{ClientCapabilities, ListChangedCapability, ServerCapabilities};
use crate::schema::Capability;

pub(super) use crate::test_clock::t0;

fn server(version_caps: ServerCapabilities) -> Session<Server> {
    Session::<Server>::new(ServerConfig::new(Implementation::new("s", "1")).with_capabilities(version_caps))
}

/// Feeds one JSON value as a line.
fn feed<R: Role>(s: &mut Session<R>, now: Instant, v: &Value) {
    let mut line = serde_json::to_vec(v).unwrap();
    line.push(b'\n');
    s.handle_bytes(now, &line);
}

/// Drains outputs: transmitted JSON values and events.
fn drain<R: Role>(s: &mut Session<R>) -> (Vec<Value>, Vec<Event>) {
    let (mut sent, mut events) = (Vec::new(), Vec::new());
    while let Some(out) = s.poll_output() {
        match out {
            Output::Transmit { payload, .. } => sent.push(serde_json::from_slice(&payload).unwrap()),
            Output::Event(e) => events.push(e),
            Output::StreamDone(_) | Output::StreamDisconnect(_) => {}
        }
    }
    (sent, events)
}

fn initialized_server(version: &str, caps: ServerCapabilities, now: Instant) -> Session<Server> {
    let mut s = server(caps);
    feed(
        &mut s,
        now,
        &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}}),
    );
    feed(&mut s, now, &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let (sent, events) = drain(&mut s);
    assert_eq!(sent[0]["result"]["protocolVersion"], version);
    assert!(matches!(events.last(), Some(Event::Ready(_))));
    s
}

/// A server holds one session per client: what each costs inline is watched (an idle HTTP
/// session is about 3 KB in all). The peer's capabilities are one kind or the other, never
/// both (`PeerCaps`).
#[test]
fn a_server_session_stays_small() {
    let size = size_of::<Session<Server>>();
    assert!(size <= 880, "Session<Server> is {size} bytes");
    assert!(size_of::<PeerCaps>() < size_of::<ServerCapabilities>() + size_of::<ClientCapabilities>());
}

/// A drained session keeps no output queue: thousands of idle HTTP sessions would each hold
/// one (a few hundred bytes) for nothing.
#[test]
fn a_drained_session_holds_no_output_queue() {
    let now = t0();
    let mut s = initialized_server("2025-06-18", ServerCapabilities::default(), now);
    assert_eq!(s.out.capacity(), 0, "after the handshake");
    feed(&mut s, now, &json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}));
    assert!(s.out.capacity() > 0, "the answer waits in the queue");
    let (sent, _) = drain(&mut s);
    assert_eq!(sent[0]["id"], 1);
    assert_eq!(s.out.capacity(), 0, "drained");
}

#[test]
fn a_2025_03_26_batch_is_answered_with_one_array() {
    let now = t0();
    let mut s = initialized_server("2025-03-26", ServerCapabilities::default(), now);
    feed(
        &mut s,
        now,
        &json!([
            {"jsonrpc": "2.0", "id": 1, "method": "ping"},
            {"jsonrpc": "2.0", "method": "notifications/roots/list_changed"},
            {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
            1
        ]),
    );
    let (sent, _) = drain(&mut s);
    assert_eq!(sent.len(), 1, "one frame: {sent:?}");
    let replies = sent[0].as_array().unwrap();
    assert_eq!(replies.len(), 3);
    assert_eq!(replies[0], json!({"jsonrpc": "2.0", "id": 1, "result": {}}));
    assert_eq!(replies[1]["error"]["code"], -32601, "no tools capability");
    assert_eq!(replies[2]["error"]["code"], -32600);
}

#[test]
fn a_batch_waits_for_the_application_before_answering() {
    let now = t0();
    let caps = ServerCapabilities { tools: Some(ListChangedCapability::default()), ..Default::default() };
    let mut s = initialized_server("2025-03-26", caps, now);
    feed(
        &mut s,
        now,
        &json!([
            {"jsonrpc": "2.0", "id": "a", "method": "tools/list"},
            {"jsonrpc": "2.0", "id": "b", "method": "ping"}
        ]),
    );
    let (sent, mut events) = drain(&mut s);
    assert!(sent.is_empty(), "nothing until tools/list is answered");
    let Some(Event::Request(req)) = events.pop() else { panic!("no request event") };
    s.respond_with(req.reply, &json!({"tools": []})).unwrap();
    let (sent, _) = drain(&mut s);
    assert_eq!(
        sent,
        vec![json!([
            {"jsonrpc": "2.0", "id": "b", "result": {}},
            {"jsonrpc": "2.0", "id": "a", "result": {"tools": []}}
        ])]
    );
}

#[test]
fn batches_outside_2025_03_26_are_refused_whole() {
    let now = t0();
    let mut s = initialized_server("2025-06-18", ServerCapabilities::default(), now);
    feed(&mut s, now, &json!([{"jsonrpc": "2.0", "id": 1, "method": "ping"}]));
    let (sent, events) = drain(&mut s);
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0]["error"]["code"], -32600);
    assert!(sent[0]["id"].is_null());
    assert!(events.iter().any(|e| matches!(e, Event::PeerMisbehaved(ProtocolError::BatchNotAllowed))));
}

#[test]
fn a_client_batch_tracks_each_request() {
    let now = t0();
    let roots = ClientCapabilities { roots: Some(ListChangedCapability::with_list_changed()), ..Default::default() };
    let mut config =
        ClientConfig::new(Implementation::new("c", "1")).with_mode(ClientMode::Legacy).with_capabilities(roots);
    config.session.versions = vec![ProtocolVersion::V2025_03_26];
    let mut c = Session::<Client>::new(config, now);
    let (sent, _) = drain(&mut c);
    assert_eq!(sent[0]["method"], "initialize");
    feed(
        &mut c,
        now,
        &json!({"jsonrpc": "2.0", "id": 0, "result": {
        "protocolVersion": "2025-03-26", "capabilities": {"tools": {}}, "serverInfo": {"name": "s", "version": "1"}}}),
    );
    drain(&mut c);
    let ids = c
        .send_batch(
            now,
            vec![
                BatchItem::Request { method: "tools/list".into(), params: None, options: RequestOptions::default() },
                BatchItem::Notification { method: "notifications/roots/list_changed".into(), params: None },
                BatchItem::Request { method: "ping".into(), params: None, options: RequestOptions::default() },
            ],
        )
        .unwrap();
    let (sent, _) = drain(&mut c);
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].as_array().unwrap().len(), 3);
    let (a, b) = (ids[0].clone().unwrap(), ids[2].clone().unwrap());
    assert!(ids[1].is_none());
    feed(
        &mut c,
        now,
        &json!([{"jsonrpc": "2.0", "id": id_json(&b), "result": {}}, {"jsonrpc": "2.0", "id": id_json(&a), "result": {"tools": []}}]),
    );
    let (_, events) = drain(&mut c);
    let ended: Vec<&RequestId> = events
        .iter()
        .filter_map(|e| match e {
            Event::Response { id, .. } => Some(id),
            _ => None,
        })
        .collect();
    assert_eq!(ended, vec![&b, &a]);
    assert_eq!(c.pending_requests(), 0);
}

#[test]
fn send_batch_is_refused_outside_2025_03_26() {
    let now = t0();
    let mut s = initialized_server("2025-06-18", ServerCapabilities::default(), now);
    let err = s.send_batch(now, vec![]).unwrap_err();
    assert_eq!(err, SendError::BatchNotSupported);
}

#[test]
fn a_timed_out_request_is_cancelled_and_its_late_answer_dropped() {
    let t0 = t0();
    let config = ClientConfig::new(Implementation::new("c", "1")).with_mode(ClientMode::Legacy);
    let mut c = Session::<Client>::new(config, t0);
    drain(&mut c);
    feed(
        &mut c,
        t0,
        &json!({"jsonrpc": "2.0", "id": 0, "result": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": {"name": "s", "version": "1"}}}),
    );
    drain(&mut c);
    let id = c.send_request(t0, "ping", None, RequestOptions::default().with_timeout(Duration::from_secs(2))).unwrap();
    drain(&mut c);
    assert_eq!(c.poll_timeout(), Some(t0 + Duration::from_secs(2)));
    c.handle_timeout(t0 + Duration::from_secs(1));
    assert!(drain(&mut c).1.is_empty(), "an early call does nothing");
    c.handle_timeout(t0 + Duration::from_secs(2));
    let (sent, events) = drain(&mut c);
    assert_eq!(
        sent,
        vec![
            json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": id_json(&id), "reason": "timeout"}})
        ]
    );
    assert!(matches!(&events[..], [Event::Response { outcome: Err(CallError::Local(LocalError::TimedOut)), .. }]));
    assert_eq!(c.poll_timeout(), None);
    feed(&mut c, t0 + Duration::from_secs(3), &json!({"jsonrpc": "2.0", "id": id_json(&id), "result": {}}));
    assert!(drain(&mut c).1.is_empty());
    assert_eq!(c.late_responses(), 1);
}

fn id_json(id: &RequestId) -> Value {
    serde_json::to_value(id).unwrap()
}

#[test]
fn an_auto_client_without_the_stateless_revision_starts_with_initialize() {
    let mut config = ClientConfig::new(Implementation::new("c", "1"));
    config.session.versions = vec![ProtocolVersion::V2025_06_18];
    let mut c = Session::<Client>::new(config, t0());
    let (sent, events) = drain(&mut c);
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0]["method"], "initialize");
    assert_eq!(sent[0]["params"]["protocolVersion"], "2025-06-18");
    assert!(events.is_empty(), "{events:?}");
    assert_eq!(c.phase(), Phase::Initializing);
}

#[test]
fn subscription_notifications_go_on_the_listen_stream_with_its_id() {
    let now = t0();
    let caps = ServerCapabilities { tools: Some(ListChangedCapability::with_list_changed()), ..Default::default() };
    let mut s = server(caps);
    let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}});
    let listen = json!({"jsonrpc": "2.0", "id": "sub-1", "method": "subscriptions/listen",
        "params": {"_meta": meta, "notifications": {"toolsListChanged": true}}});
    s.handle_frame(now, Route::Stream(StreamId(7)), &serde_json::to_vec(&listen).unwrap());
    let mut reply = None;
    while let Some(out) = s.poll_output() {
        if let Output::Event(Event::Request(req)) = out {
            reply = Some(req.reply);
        }
    }
    let reply = reply.expect("listen request handed to the application");
    s.notify_related(&reply, "notifications/tools/list_changed", None).unwrap();
    match s.poll_output() {
        Some(Output::Transmit { route, payload, .. }) => {
            assert_eq!(route, Route::Stream(StreamId(7)));
            let v: Value = serde_json::from_slice(&payload).unwrap();
            assert_eq!(v["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], "sub-1");
        }
        other => panic!("{other:?}"),
    }
    // Closing the stream ends the subscription: the application is told.
    s.handle_stream_closed(now, StreamId(7));
    assert!(matches!(s.poll_output(), Some(Output::Event(Event::PeerCancelled { .. }))));
}

#[test]
fn the_handshake_methods_belong_to_the_session() {
    let mut c =
        Session::<Client>::new(ClientConfig::new(Implementation::new("c", "1")).with_mode(ClientMode::Legacy), t0());
    let err = c.send_request(t0(), "initialize", None, RequestOptions::default()).unwrap_err();
    assert_eq!(err, SendError::Reserved("initialize".into()));
    assert_eq!(
        c.notify("notifications/initialized", None).unwrap_err(),
        SendError::Reserved("notifications/initialized".into())
    );
}

#[test]
fn replies_route_to_their_stream_which_is_then_done() {
    let now = t0();
    let caps = ServerCapabilities { tools: Some(ListChangedCapability::default()), ..Default::default() };
    let mut s = initialized_server("2025-06-18", caps, now);
    let frame = |v: Value| serde_json::to_vec(&v).unwrap();
    s.handle_frame(now, Route::Stream(StreamId(3)), &frame(json!({"jsonrpc": "2.0", "id": 9, "method": "tools/list"})));
    let Some(Output::Event(Event::Request(req))) = s.poll_output() else { panic!("no request") };
    assert!(s.poll_output().is_none(), "the stream stays open while the request does");
    s.respond_with(req.reply, &json!({"tools": []})).unwrap();
    assert!(matches!(s.poll_output(), Some(Output::Transmit { route: Route::Stream(StreamId(3)), .. })));
    assert!(matches!(s.poll_output(), Some(Output::StreamDone(StreamId(3)))));
    // A POST carrying only a notification is done at once.
    s.handle_frame(
        now,
        Route::Stream(StreamId(4)),
        &frame(json!({"jsonrpc": "2.0", "method": "notifications/roots/list_changed"})),
    );
    let outs: Vec<Output> = std::iter::from_fn(|| s.poll_output()).collect();
    assert!(matches!(outs.last(), Some(Output::StreamDone(StreamId(4)))), "{outs:?}");
    // In the legacy era a dropped stream does not cancel its requests.
    s.handle_frame(
        now,
        Route::Stream(StreamId(5)),
        &frame(json!({"jsonrpc": "2.0", "id": 10, "method": "tools/list"})),
    );
    let Some(Output::Event(Event::Request(_pending))) = s.poll_output() else { panic!("no request") };
    s.handle_stream_closed(now, StreamId(5));
    assert!(s.poll_output().is_none());
    assert_eq!(s.inflight_requests(), 1);
}

#[test]
fn a_stateless_handler_can_demand_a_client_capability() {
    let now = t0();
    let mut s = server(ServerCapabilities { tools: Some(ListChangedCapability::default()), ..Default::default() });
    let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}});
    feed(
        &mut s,
        now,
        &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "x", "_meta": meta}}),
    );
    let (_, events) = drain(&mut s);
    let Some(Event::Request(req)) = events.into_iter().find(|e| matches!(e, Event::Request(_))) else {
        panic!("no request")
    };
    let err = s.require_client_capability(&req, Capability::Elicitation).unwrap_err();
    assert_eq!(err.code, crate::jsonrpc::ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY);
    assert_eq!(err.data.unwrap()["requiredCapabilities"], json!({"elicitation": {}}));
    assert!(s.require_client_capability(&req, Capability::Tools).is_ok(), "not a client capability");
}

/// What the peer broke is typed: an undecodable frame carries the decoder's error (and is
/// answered -32700), an error response with no id carries the peer's error object.
#[test]
fn misbehaviour_is_reported_with_typed_reasons() {
    let now = t0();
    let mut s = initialized_server("2025-06-18", ServerCapabilities::default(), now);
    s.handle_bytes(now, b"{\"jsonrpc\":\"2.0\",\"method\":\n");
    let (sent, events) = drain(&mut s);
    assert_eq!(sent[0]["error"]["code"], -32700);
    assert!(
        matches!(
            events.as_slice(),
            [Event::PeerMisbehaved(ProtocolError::Decode(crate::jsonrpc::DecodeError::Parse { .. }))]
        ),
        "{events:?}"
    );

    feed(&mut s, now, &json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "Parse error"}}));
    let (sent, events) = drain(&mut s);
    assert!(sent.is_empty(), "an error response is never answered: {sent:?}");
    match events.as_slice() {
        [Event::PeerMisbehaved(ProtocolError::PeerError(e))] => {
            assert_eq!((e.code.0, e.message.as_str()), (-32700, "Parse error"));
        }
        other => panic!("{other:?}"),
    }
}
