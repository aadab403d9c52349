//! Wire transcripts of whole exchanges between a client and a server session, snapshot with
//! insta: the handshake of each revision, the Auto fallback, a timeout with cancellation, a
//! 2025-03-26 batch and an MRTR round.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::disallowed_methods, missing_docs)]

use std::time::{Duration, Instant};

use serde_json::{json, Value};
use talaria_core::schema::lifecycle::{ListChangedCapability, ServerCapabilities};
use talaria_core::schema::Implementation;
use talaria_core::session::{
    BatchItem, Client, ClientConfig, ClientMode, Event, IncomingRequest, Output, RequestOptions, Server, ServerConfig,
    Session,
};
use talaria_core::version::ProtocolVersion;

/// A client and a server joined by a perfect pipe, writing down every frame.
struct Wire {
    client: Session<Client>,
    server: Session<Server>,
    now: Instant,
    log: Vec<String>,
    requests: Vec<IncomingRequest>,
    client_events: Vec<String>,
}

impl Wire {
    fn new(client: ClientConfig, server: ServerConfig) -> Self {
        let now = Instant::now();
        Self {
            client: Session::<Client>::new(client, now),
            server: Session::<Server>::new(server),
            now,
            log: Vec::new(),
            requests: Vec::new(),
            client_events: Vec::new(),
        }
    }

    /// Moves frames until neither side has anything to say.
    fn settle(&mut self) {
        loop {
            let mut moved = false;
            while let Some(out) = self.client.poll_output() {
                match out {
                    Output::Transmit { payload, .. } => {
                        self.log.push(format!("C→S {}", String::from_utf8_lossy(&payload)));
                        self.server.handle_frame(self.now, talaria_core::session::Route::Connection, &payload);
                        moved = true;
                    }
                    Output::Event(e) => self.client_events.push(describe(&e)),
                    _ => {}
                }
            }
            while let Some(out) = self.server.poll_output() {
                match out {
                    Output::Transmit { payload, .. } => {
                        self.log.push(format!("S→C {}", String::from_utf8_lossy(&payload)));
                        self.client.handle_frame(self.now, talaria_core::session::Route::Connection, &payload);
                        moved = true;
                    }
                    Output::Event(Event::Request(req)) => self.requests.push(req),
                    _ => {}
                }
            }
            if !moved {
                return;
            }
        }
    }

    fn advance(&mut self, by: Duration) {
        self.now += by;
        self.log.push(format!("… {} s later", by.as_secs()));
        self.client.handle_timeout(self.now);
        self.server.handle_timeout(self.now);
        self.settle();
    }

    fn transcript(&self) -> String {
        let mut s = self.log.join("\n");
        s.push_str("\n-- client events --\n");
        s.push_str(&self.client_events.join("\n"));
        s
    }
}

fn describe(e: &Event) -> String {
    match e {
        Event::Ready(info) => format!("Ready {} peer={}", info.version, info.peer.name),
        Event::Response { id, outcome } => match outcome {
            Ok(r) => format!("Response {id} ok {}", r.get()),
            Err(err) => format!("Response {id} failed: {err}"),
        },
        Event::Closed { reason } => format!("Closed: {reason}"),
        other => format!("{other:?}"),
    }
}

fn client(mode: ClientMode, versions: &[ProtocolVersion]) -> ClientConfig {
    let mut c = ClientConfig::new(Implementation::new("transcript-client", "1.0.0")).with_mode(mode);
    c.session.versions = versions.to_vec();
    c
}

fn server(versions: &[ProtocolVersion]) -> ServerConfig {
    let caps = ServerCapabilities { tools: Some(ListChangedCapability::with_list_changed()), ..Default::default() };
    let mut s = ServerConfig::new(Implementation::new("transcript-server", "1.0.0")).with_capabilities(caps);
    s.session.versions = versions.to_vec();
    s
}

#[test]
fn handshake_of_each_legacy_revision() {
    for version in [
        ProtocolVersion::V2024_11_05,
        ProtocolVersion::V2025_03_26,
        ProtocolVersion::V2025_06_18,
        ProtocolVersion::V2025_11_25,
    ] {
        let mut w = Wire::new(client(ClientMode::Legacy, &[version]), server(&ProtocolVersion::ALL));
        w.settle();
        assert_eq!(w.client.version(), Some(version));
        insta::assert_snapshot!(format!("handshake_{}", version.as_str().replace('-', "_")), w.transcript());
    }
}

#[test]
fn stateless_discovery() {
    let mut w = Wire::new(client(ClientMode::Stateless, &ProtocolVersion::ALL), server(&ProtocolVersion::ALL));
    w.settle();
    w.client.send_request(w.now, "tools/list", None, RequestOptions::default()).unwrap();
    w.settle();
    let req = w.requests.pop().unwrap();
    w.server.respond_with(req.reply, &json!({"tools": [], "ttlMs": 0, "cacheScope": "public"})).unwrap();
    w.settle();
    assert_eq!(w.client.version(), Some(ProtocolVersion::V2026_07_28));
    insta::assert_snapshot!(w.transcript());
}

#[test]
fn auto_falls_back_to_initialize_on_a_legacy_server() {
    let legacy = [ProtocolVersion::V2025_03_26, ProtocolVersion::V2025_06_18];
    let mut w = Wire::new(client(ClientMode::Auto, &ProtocolVersion::ALL), server(&legacy));
    w.settle();
    assert_eq!(w.client.version(), Some(ProtocolVersion::V2025_06_18));
    insta::assert_snapshot!(w.transcript());
}

#[test]
fn a_timeout_sends_a_cancellation() {
    let mut w = Wire::new(client(ClientMode::Legacy, &ProtocolVersion::ALL), server(&ProtocolVersion::ALL));
    w.settle();
    let params = serde_json::value::to_raw_value(&json!({"name": "slow"})).unwrap();
    let options = RequestOptions::default().with_timeout(Duration::from_secs(10)).with_progress();
    w.client.send_request(w.now, "tools/call", Some(params), options).unwrap();
    w.settle();
    let req = w.requests.pop().unwrap();
    w.server.progress(&req.reply, 1.0, Some(4.0), Some("working".into())).unwrap();
    w.settle();
    w.advance(Duration::from_secs(10));
    w.server.respond_with(req.reply, &json!({"content": []})).unwrap();
    w.settle();
    assert_eq!(w.client.late_responses(), 0, "the server dropped its answer to a cancelled request");
    insta::assert_snapshot!(w.transcript());
}

#[test]
fn a_2025_03_26_batch() {
    let v = [ProtocolVersion::V2025_03_26];
    let mut w = Wire::new(client(ClientMode::Legacy, &v), server(&v));
    w.settle();
    let items = vec![
        BatchItem::Request { method: "tools/list".into(), params: None, options: RequestOptions::default() },
        BatchItem::Request { method: "ping".into(), params: None, options: RequestOptions::default() },
    ];
    w.client.send_batch(w.now, items).unwrap();
    w.settle();
    let req = w.requests.pop().unwrap();
    w.server.respond_with(req.reply, &json!({"tools": []})).unwrap();
    w.settle();
    insta::assert_snapshot!(w.transcript());
}

#[test]
fn an_mrtr_round() {
    let mut w = Wire::new(client(ClientMode::Stateless, &ProtocolVersion::ALL), server(&ProtocolVersion::ALL));
    w.settle();
    let call = |extra: Value| {
        let mut p = json!({"name": "deploy", "arguments": {"env": "prod"}});
        p.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        serde_json::value::to_raw_value(&p).unwrap()
    };
    w.client.send_request(w.now, "tools/call", Some(call(json!({}))), RequestOptions::default()).unwrap();
    w.settle();
    let req = w.requests.pop().unwrap();
    let input_required = json!({
        "resultType": "input_required",
        "inputRequests": {"confirm": {"method": "elicitation/create", "params": {"mode": "form", "message": "Deploy to prod?",
            "requestedSchema": {"type": "object", "properties": {"ok": {"type": "boolean"}}}}}},
        "requestState": "s1"
    });
    w.server.respond_with(req.reply, &input_required).unwrap();
    w.settle();
    // The client answers the input request and retries under a new id.
    let retry =
        json!({"inputResponses": {"confirm": {"action": "accept", "content": {"ok": true}}}, "requestState": "s1"});
    w.client.send_request(w.now, "tools/call", Some(call(retry)), RequestOptions::default()).unwrap();
    w.settle();
    let req = w.requests.pop().unwrap();
    w.server.respond_with(req.reply, &json!({"content": [{"type": "text", "text": "deployed"}]})).unwrap();
    w.settle();
    insta::assert_snapshot!(w.transcript());
}
