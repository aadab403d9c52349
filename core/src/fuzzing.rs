//! The bodies of the cargo-fuzz targets in `fuzz/`, kept in the library so that the checked-in
//! corpus also runs under plain `cargo test` (see `tests/tests/fuzz_corpus.rs`).
//!
//! Each function takes arbitrary bytes, must never panic on its own account, and panics only
//! when an invariant is broken, which is what the fuzzer reports.
//!
//! # Examples
//!
//! ```
//! talaria_core::fuzzing::jsonrpc_decode(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#);
//! talaria_core::fuzzing::line_decode(b"\x05{}\n{\"a\":1}\r\n");
//! talaria_core::fuzzing::sse_decode(b"\x03data: x\n\n");
//! talaria_core::fuzzing::typed_decode(br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}"#);
//! talaria_core::fuzzing::session_ops(&[0, 7, 7, 0, 7, 5, 7, 3, 200, 6]);
//! ```
#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

use serde::Serialize;

use crate::codec::{LineDecoder, SseDecoder, SseEvent};
use crate::jsonrpc::{decode_with, DecodeError, Envelope, Message, Packet, RequestId};
use crate::schema::{AnyParams, AnyResult, LazyJson, LazyShape, McpPayloads};
use crate::version::ProtocolVersion;

/// Decodes a frame as a message or batch; whatever decodes must re-encode to a fixed point,
/// and every error must produce a well-formed reply.
pub fn jsonrpc_decode(data: &[u8]) {
    match Packet::from_slice(data) {
        Ok(Packet::Single(msg)) => assert_fixed_point(&msg),
        Ok(Packet::Batch(items)) => {
            assert!(!items.is_empty(), "an empty batch must be an error");
            for item in items {
                match item {
                    Ok(msg) => assert_fixed_point(&msg),
                    Err(e) => assert_reply_is_valid(&e),
                }
            }
        }
        Err(e) => assert_reply_is_valid(&e),
    }
}

/// Splits the input into lines twice, whole and in chunks chosen by the first byte, and checks
/// that both give the same frames and that the buffer never exceeds its limit.
pub fn line_decode(data: &[u8]) {
    let Some((&knob, stream)) = data.split_first() else { return };
    let max = 1 + usize::from(knob % 64);
    let chunk = 1 + usize::from(knob / 64);
    let whole = collect_lines(max, stream, stream.len().max(1));
    let chunked = collect_lines(max, stream, chunk);
    assert_eq!(strip_lens(&whole), strip_lens(&chunked), "line framing depends on chunking");
    for frame in whole.iter().flatten() {
        assert!(frame.len() <= max, "a frame exceeds the limit");
        jsonrpc_decode(frame);
    }
}

/// Decodes the input as an event stream twice, whole and in chunks chosen by the first byte,
/// and checks that both give the same events and that the buffer never exceeds its limit.
pub fn sse_decode(data: &[u8]) {
    let Some((&knob, stream)) = data.split_first() else { return };
    let max = 1 + usize::from(knob % 128);
    let chunk = 1 + usize::from(knob / 128) * 7;
    let whole = collect_events(max, stream, stream.len().max(1));
    let chunked = collect_events(max, stream, chunk);
    assert_eq!(whole, chunked, "event framing depends on chunking");
}

/// Decodes a frame into the typed schema under every revision, answering responses as if every
/// known method were pending; whatever decodes must re-encode to JSON that decodes to the same
/// encoding again.
pub fn typed_decode(data: &[u8]) {
    let pending: [&'static str; 6] =
        ["tools/call", "tools/list", "initialize", "resources/read", "prompts/get", "completion/complete"];
    for version in ProtocolVersion::ALL {
        let which = data.len() % pending.len();
        let mut payloads = McpPayloads::new(Some(version), |_: &RequestId| Some(pending[which]));
        match decode_with(data, &mut payloads) {
            Ok(Envelope::Request { method, params, .. } | Envelope::Notification { method, params }) => {
                assert_typed_fixed_point(&method, &params);
            }
            Ok(Envelope::Response { result, .. }) => assert_result_fixed_point(&result),
            Ok(Envelope::Error(_)) => {}
            Err(e) => {
                if let Some(reply) = e.to_response() {
                    assert!(Message::from_slice(&Message::Error(reply).to_vec()).is_ok());
                }
            }
        }
    }
}

/// Drives a client and a server session with operations read from `data` (sends, raw peer
/// bytes, deliveries, time jumps, cancels, answers, closes) and checks the session invariants
/// after every step: every transmitted payload is valid JSON-RPC, every request ends at most
/// once (and exactly once by the end), nothing follows `Closed`, and `poll_timeout` never
/// asks for a time already handled.
pub fn session_ops(data: &[u8]) {
    session_fuzz::run(data);
}

fn assert_typed_fixed_point(method: &str, params: &AnyParams) {
    if matches!(params, AnyParams::Other(None)) {
        return; // No params were sent: there is nothing to encode.
    }
    let first = params_json(params);
    let mut de = serde_json::Deserializer::from_slice(&first);
    let again = AnyParams::decode(method, &mut de).expect("our encoding of params must decode");
    assert_eq!(params_json(&again), first, "typed params are not a fixed point");
}

fn assert_result_fixed_point(result: &AnyResult) {
    let first = result_json(result);
    assert!(serde_json::from_slice::<serde_json::Value>(&first).is_ok(), "a typed result must encode as JSON");
    if let AnyResult::ListTools(list) = result {
        for tool in &list.tools {
            assert_reads_as_its_text(&tool.input_schema);
            if let Some(schema) = &tool.output_schema {
                assert_reads_as_its_text(schema);
            }
        }
    }
}

/// A member kept as text reads as the tree that text parses to (a read never falls back to
/// the default value), and a line break never stays in what it writes.
fn assert_reads_as_its_text<T: LazyShape + Serialize>(kept: &LazyJson<T>) {
    if let Some(text) = kept.text() {
        let parsed: serde_json::Value = serde_json::from_str(text).expect("a kept text is JSON");
        let read = serde_json::to_value(&**kept).expect("a read value encodes");
        assert_eq!(read, parsed, "a kept member reads as its text");
        assert!(!text.contains(['\n', '\r']), "a kept text has no line break");
    }
}

fn to_json(value: &impl Serialize) -> Vec<u8> {
    serde_json::to_vec(value).expect("typed values always serialize")
}

fn params_json(params: &AnyParams) -> Vec<u8> {
    to_json(params)
}

fn result_json(result: &AnyResult) -> Vec<u8> {
    to_json(result)
}

fn assert_fixed_point(msg: &Message) {
    let bytes = msg.to_vec();
    let again = Message::from_slice(&bytes).expect("our own encoding must decode");
    assert_eq!(again.to_vec(), bytes, "encoding is not a fixed point");
}

fn assert_reply_is_valid(err: &DecodeError) {
    if let Some(reply) = err.to_response() {
        let bytes = Message::Error(reply).to_vec();
        assert!(Message::from_slice(&bytes).is_ok(), "our error reply must decode");
    }
}

type Frames = Vec<Option<Vec<u8>>>;

fn collect_lines(max: usize, stream: &[u8], chunk: usize) -> Frames {
    let mut decoder = LineDecoder::with_max_frame_len(max);
    let mut out = Vec::new();
    for piece in stream.chunks(chunk) {
        decoder.decode(piece, |f| out.push(f.ok().map(<[u8]>::to_vec)));
        assert!(decoder.buffered_len() <= max, "line buffer exceeds its limit");
    }
    decoder.finish(|f| out.push(f.ok().map(<[u8]>::to_vec)));
    out
}

/// Errors carry chunking-dependent lengths; compare only where errors happened.
fn strip_lens(frames: &Frames) -> Vec<Option<&[u8]>> {
    frames.iter().map(Option::as_deref).collect()
}

fn collect_events(max: usize, stream: &[u8], chunk: usize) -> Vec<Option<SseEvent>> {
    let mut decoder = SseDecoder::with_max_event_len(max);
    let mut out = Vec::new();
    for piece in stream.chunks(chunk) {
        decoder.decode(piece, |e| out.push(e.ok()));
        assert!(decoder.buffered_len() <= max, "event buffer exceeds its limit");
    }
    decoder.finish(|e| out.push(e.ok()));
    out
}

mod session_fuzz {
    use crate::time::{Duration, Instant};
    use alloc::collections::{BTreeMap, BTreeSet, VecDeque};

    use crate::jsonrpc::{Packet, RequestId};
    use crate::schema::lifecycle::{ListChangedCapability, ServerCapabilities};
    use crate::schema::Implementation;
    use crate::session::{
        Carries, Client, ClientConfig, ClientMode, Event, Output, ReplyToken, RequestOptions, Role, Server,
        ServerConfig, Session,
    };
    use crate::version::ProtocolVersion;

    const METHODS: [&str; 6] = ["ping", "tools/list", "tools/call", "prompts/list", "custom/thing", "resources/read"];

    /// What one side has emitted so far.
    #[derive(Default)]
    struct Seen {
        ended: BTreeMap<RequestId, usize>,
        closed: bool,
        replies: VecDeque<ReplyToken>,
    }

    fn drain<R: Role>(s: &mut Session<R>, seen: &mut Seen, wire: &mut Vec<Vec<u8>>) {
        while let Some(out) = s.poll_output() {
            assert!(!seen.closed, "output after Closed: {out:?}");
            match out {
                Output::Transmit { payload, carries, .. } => {
                    let packet = Packet::from_slice(&payload);
                    let Ok(packet) = packet else {
                        panic!("invalid payload {}", String::from_utf8_lossy(&payload));
                    };
                    let decoded = match packet {
                        Packet::Single(message) => Carries::from(message),
                        Packet::Batch(items) => {
                            let items: Result<Vec<_>, _> = items.into_iter().collect();
                            let Ok(items) = items else { panic!("invalid batch member") };
                            Carries::from(items.as_slice())
                        }
                    };
                    assert_eq!(carries, decoded, "what the frame carries is what it says");
                    wire.push(payload);
                }
                Output::Event(Event::Response { id, .. }) => *seen.ended.entry(id).or_default() += 1,
                Output::Event(Event::Request(req)) => seen.replies.push_back(req.reply),
                Output::Event(Event::Closed { .. }) => seen.closed = true,
                Output::Event(_) | Output::StreamDone(_) | Output::StreamDisconnect(_) => {}
            }
        }
        assert!(seen.ended.values().all(|&n| n == 1), "a request ended twice");
    }

    fn deliver<R: Role>(s: &mut Session<R>, now: Instant, wire: &mut Vec<Vec<u8>>) {
        for mut frame in wire.drain(..) {
            frame.push(b'\n');
            s.handle_bytes(now, &frame);
        }
    }

    #[allow(clippy::disallowed_methods)] // the one clock read: the base of virtual time
    fn base() -> Instant {
        Instant::now()
    }

    pub(super) fn run(data: &[u8]) {
        let Some((&knob, mut ops)) = data.split_first() else { return };
        let mut now = base();
        let mode = [ClientMode::Legacy, ClientMode::Auto, ClientMode::Stateless][usize::from(knob % 3)];
        let mut client_config = ClientConfig::new(Implementation::new("c", "1")).with_mode(mode);
        client_config.session.versions = match knob / 3 % 4 {
            0 => ProtocolVersion::ALL.to_vec(),
            1 => vec![ProtocolVersion::V2025_03_26],
            2 => vec![ProtocolVersion::V2024_11_05, ProtocolVersion::V2026_07_28],
            _ => vec![ProtocolVersion::V2025_06_18],
        };
        client_config.session.request_timeout = Duration::from_secs(5);
        let mut server_config = ServerConfig::new(Implementation::new("s", "1"));
        if knob & 0x80 != 0 {
            server_config.capabilities =
                ServerCapabilities { tools: Some(ListChangedCapability::default()), ..Default::default() };
        }
        let mut client = Session::<Client>::new(client_config, now);
        let mut server = Session::<Server>::new(server_config);
        let (mut cs, mut ss) = (Seen::default(), Seen::default());
        let (mut to_server, mut to_client) = (Vec::new(), Vec::new());
        let mut sent: BTreeSet<RequestId> = BTreeSet::new();
        while let Some((&op, rest)) = ops.split_first() {
            ops = rest;
            let arg = ops.first().copied().unwrap_or(0);
            match op % 10 {
                0 => {
                    let method = METHODS[usize::from(arg) % METHODS.len()];
                    if let Ok(id) = client.send_request(now, method, None, RequestOptions::default()) {
                        assert!(sent.insert(id), "an id was reused");
                    }
                }
                1 | 2 => {
                    let n = usize::from(arg).min(ops.len());
                    let (raw, rest) = ops.split_at(n);
                    ops = rest;
                    if op % 10 == 1 {
                        server.handle_bytes(now, raw);
                    } else {
                        client.handle_bytes(now, raw);
                    }
                }
                3 => {
                    now += Duration::from_millis(u64::from(arg) * 50);
                    client.handle_timeout(now);
                    server.handle_timeout(now);
                    assert!(client.poll_timeout().is_none_or(|t| t > now), "the next deadline is already due");
                }
                4 => {
                    if let Some(id) = sent.iter().nth(usize::from(arg) % sent.len().max(1)).cloned() {
                        let _ = client.cancel(&id, Some("fuzz"));
                    }
                }
                5 => {
                    if let Some(reply) = ss.replies.pop_front() {
                        let _ = server.respond_with(reply, &serde_json::json!({"tools": [], "content": []}));
                    }
                }
                6 => client.close(),
                8 => server.handle_closed(now),
                _ => {
                    deliver(&mut server, now, &mut to_server);
                    drain(&mut server, &mut ss, &mut to_client);
                    deliver(&mut client, now, &mut to_client);
                }
            }
            drain(&mut client, &mut cs, &mut to_server);
            drain(&mut server, &mut ss, &mut to_client);
        }
        client.close();
        drain(&mut client, &mut cs, &mut to_server);
        for id in &sent {
            assert_eq!(cs.ended.get(id), Some(&1), "request {id} did not end exactly once");
        }
    }
}

/// Reads the input as what an authorization server or MCP server could send a client: a
/// `WWW-Authenticate` value, URLs, and metadata documents. Nothing may panic; whatever parses as
/// a challenge keeps its Bearer parameters readable, and metadata that decodes re-encodes.
pub fn auth_inputs(data: &[u8]) {
    use crate::auth::{challenge, discovery, metadata, scope};
    let text = String::from_utf8_lossy(data);
    for c in challenge::parse(&text) {
        let _ = (c.resource_metadata(), c.scope(), c.error(), c.is_bearer());
        let _ = scope::select(c.scope(), None);
    }
    let _ = discovery::resource_metadata_urls(&text, Some(&text));
    let _ = discovery::authorization_server_metadata_urls(&text);
    let _ = crate::auth::url::HttpUrl::parse(&text).map(|u| (u.canonical(), u.covers(&u)));
    if let Ok(prm) = serde_json::from_slice::<metadata::ProtectedResourceMetadata>(data) {
        let _ = prm.check_resource("https://mcp.example.com/mcp");
        let again: metadata::ProtectedResourceMetadata =
            serde_json::from_str(&serde_json::to_string(&prm).unwrap_or_default()).unwrap_or_else(|_| prm.clone());
        assert_eq!(again, prm, "protected resource metadata does not round-trip");
    }
    if let Ok(asm) = serde_json::from_slice::<metadata::AuthorizationServerMetadata>(data) {
        let _ = asm.check("https://auth.example.com");
    }
    let _ = crate::auth::flow::callback_code(&text, "state", "https://auth.example.com", data.len() % 2 == 0);
    let _ = serde_json::from_slice::<crate::auth::flow::TokenResponse>(data);
    assert_eq!(crate::auth::encoding::form_decode(&crate::auth::encoding::form_encode(&text)), text);
    let _ = crate::auth::encoding::base64_decode(&text);
    let _ = crate::auth::resource::bearer_token(&text);
    auth_flow(data);
}

/// Drives the client's authorization state machine with `data` as every answer: each
/// response's status from one byte, its body the rest of the input, the redirect back the
/// input as a query; the first byte odd picks the device grant, whose polls are answered the
/// same way. It must end (done or failed) within a bounded number of steps (the device
/// grant's polls are bounded by the code's lifetime: at most 1801).
fn auth_flow(data: &[u8]) {
    use crate::auth::client::{Authorization, ClientConfig, Response, Step};
    let config = if data.first().is_some_and(|b| b % 2 == 1) {
        ClientConfig::device_code("fuzz")
    } else {
        ClientConfig::authorization_code("fuzz", "http://127.0.0.1:1/cb")
    };
    let config = std::sync::Arc::new(config);
    let challenge = crate::auth::challenge::bearer(&String::from_utf8_lossy(data));
    let mut zeros = |bytes: &mut [u8]| bytes.fill(0);
    let server = "https://mcp.example.com/mcp";
    let (mut flow, mut step) = Authorization::start(config, server, challenge.as_ref(), None, &mut zeros, 0);
    let query = String::from_utf8_lossy(data);
    for round in 0..4096 {
        step = match step {
            Step::Send(_) => {
                let status = [200, 201, 404, 400, 302][data.get(round % 64).map_or(0, |b| usize::from(*b) % 5)];
                flow.receive(&Response::new(status, data.to_vec()))
            }
            Step::Visit(_) => flow.redirected(&format!("http://127.0.0.1:1/cb?{query}")),
            Step::UserCode(_) | Step::Wait(_) => flow.poll(),
            Step::Done(_) | Step::Failed(_) => return,
        };
    }
    panic!("the authorization did not end within 4096 steps");
}

/// Reads the input as an HTTP request to the MCP endpoint: header lines (`Name: value`, up to
/// an empty line), then the body. Classifying it, checking a stateless body against its
/// headers, and reading the mirrored headers a client would send must not panic. When the body
/// is a JSON object, it is also read as a tool's input schema (its `x-mcp-header`
/// annotations) with its `arguments` member as a call's arguments: the `Mcp-Param-*` headers a
/// client builds from them are always accepted by the server's check, and header values
/// round-trip through their encoding.
pub fn http_requests(data: &[u8]) {
    use crate::http::exchange::{classify, EndpointConfig, HttpMethod, HttpRequest};
    use crate::http::headers::{check_mirrored, check_stateless_request, decode_value, encode_value, mirror};
    use crate::http::param_headers::{annotations, check_param_headers, param_headers};

    let (head, body) = match data.windows(2).position(|w| w == b"\n\n") {
        Some(at) => (&data[..at], &data[at + 2..]),
        None => (data, &[][..]),
    };
    let head = String::from_utf8_lossy(head);
    let headers: Vec<(&str, &str)> =
        head.lines().filter_map(|line| line.split_once(':')).map(|(n, v)| (n.trim(), v.trim())).collect();
    let method =
        [HttpMethod::Post, HttpMethod::Get, HttpMethod::Delete][data.first().map_or(0, |b| usize::from(*b % 3))];
    let _ = classify(&HttpRequest { method, headers: &headers[..], body }, &EndpointConfig::default());
    let _ = check_mirrored(&headers[..], body);
    let _ = check_stateless_request(&headers[..], body);
    let _ = mirror(body);
    for (_, value) in &headers {
        if let Ok(decoded) = decode_value(value) {
            let again = encode_value(&decoded).into_owned();
            assert_eq!(decode_value(&again).ok().as_deref(), Some(&*decoded), "a header value does not round-trip");
        }
    }
    let Ok(serde_json::Value::Object(schema)) = serde_json::from_slice::<serde_json::Value>(body) else { return };
    let Ok(mirrored) = annotations(&schema) else { return };
    let arguments = schema.get("arguments").and_then(serde_json::Value::as_object).cloned().unwrap_or_default();
    let _ = check_param_headers(&mirrored, &arguments, &headers[..]);
    let sent = param_headers(&mirrored, &arguments);
    if let Err(e) = check_param_headers(&mirrored, &arguments, &sent[..]) {
        // Only a value the client cannot mirror (not a string, safe integer or boolean) may
        // leave a header out; the server then rightly refuses.
        assert!(e.message.contains("is missing"), "what a client sends, the server refuses: {}", e.message);
    }
}
