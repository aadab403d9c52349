//! Scenarios: the stateless era (2026-07-28), through the two-peer simulator: `_meta` on every
//! request, per-request validation by the server, `resultType` on results, `server/discover`.
//!
//! `TALARIA_SIM_SEED=<n>` replays a failing seed.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use serde_json::{json, Value};
use talaria_core::jsonrpc::{ErrorCode, Message, RequestId};
use talaria_core::schema::lifecycle::{ClientCapabilities, ListChangedCapability};
use talaria_core::schema::LoggingLevel;
use talaria_core::session::RequestOptions;
use talaria_core::version::ProtocolVersion;
use talaria_tests::sim::{request_frame, stateless_meta, Dir, Pair, Setup, SimConfig};

const VERSION: &str = "io.modelcontextprotocol/protocolVersion";
const CAPS: &str = "io.modelcontextprotocol/clientCapabilities";
const INFO: &str = "io.modelcontextprotocol/clientInfo";
const LEVEL: &str = "io.modelcontextprotocol/logLevel";

fn stateless_setups() -> impl Iterator<Item = Setup> {
    Setup::ALL.into_iter().filter(|s| s.is_stateless())
}

fn request_params(pair: &Pair) -> Vec<(String, Value)> {
    pair.client
        .sent_messages()
        .into_iter()
        .filter_map(|m| match m {
            Message::Request(r) => {
                let params = r.params.map_or(Value::Null, |p| serde_json::from_str(p.get()).unwrap());
                Some((r.method, params))
            }
            _ => None,
        })
        .collect()
}

/// Injects one client request into a server that serves both eras and returns its one error.
fn server_error_for(server_setup: Setup, params: Value) -> talaria_core::jsonrpc::ErrorObject {
    let mut pair = server_setup.pair(SimConfig::perfect(1));
    pair.set_tap(Dir::ToServer, |_| talaria_tests::sim::Fate::Drop); // keep the client's own handshake out
    pair.inject(Dir::ToServer, &request_frame(json!("q"), "test/x", Some(params)));
    pair.run_until_quiet();
    assert!(pair.server.requests.is_empty(), "the application never sees it");
    let errors = pair.server.sent_errors(&RequestId::from("q"));
    assert_eq!(errors.len(), 1, "{errors:?}");
    errors.into_iter().next().unwrap()
}

#[test]
fn every_stateless_request_carries_version_capabilities_and_client_info() {
    for setup in stateless_setups() {
        let caps = ClientCapabilities { roots: Some(ListChangedCapability::default()), ..Default::default() };
        let mut client = setup.client_config().with_capabilities(caps);
        client.log_level = Some(LoggingLevel::Notice);
        let mut pair = Pair::new(client, setup.server_config(), SimConfig::chaos(2));
        pair.client_request("test/queued", Some(json!({"a": 1})), RequestOptions::default()).unwrap();
        pair.connect();
        pair.client_request("test/progress", None, RequestOptions::default().with_progress()).unwrap();
        pair.client_request("test/plain", Some(json!({"_meta": {"mine": true}, "b": 2})), RequestOptions::default())
            .unwrap();
        pair.run_until_quiet();

        let sent = request_params(&pair);
        let methods: Vec<_> = sent.iter().map(|(m, _)| m.as_str()).collect();
        assert_eq!(methods, ["server/discover", "test/queued", "test/progress", "test/plain"], "{setup}");
        for (method, params) in &sent {
            let meta = &params["_meta"];
            assert_eq!(meta[VERSION], "2026-07-28", "{setup}: {method}");
            assert_eq!(meta[CAPS], json!({"roots": {}}), "{setup}: {method}");
            assert_eq!(meta[INFO], json!({"name": "sim-client", "version": "1.0"}), "{setup}: {method}");
            assert_eq!(meta[LEVEL], "notice", "{setup}: {method}");
        }
        assert_eq!(sent[1].1["a"], 1, "{setup}: params kept");
        assert!(sent[2].1["_meta"]["progressToken"].is_number(), "{setup}: progress token kept beside");
        assert_eq!((sent[3].1["_meta"]["mine"].clone(), sent[3].1["b"].clone()), (json!(true), json!(2)), "{setup}");

        // And the server reads them per request.
        let req = pair.server.take_request("test/plain").unwrap();
        let meta = req.meta.as_ref().unwrap();
        assert_eq!(meta.protocol_version.as_deref(), Some("2026-07-28"), "{setup}");
        assert_eq!(meta.client_info.as_ref().unwrap().name, "sim-client", "{setup}");
        assert!(meta.client_capabilities.as_ref().unwrap().roots.is_some(), "{setup}");
        assert_eq!(meta.log_level, Some(LoggingLevel::Notice), "{setup}");
    }
}

#[test]
fn legacy_requests_carry_no_stateless_meta() {
    for setup in Setup::ALL.into_iter().filter(|s| !s.is_stateless()) {
        let mut pair = setup.connected(SimConfig::perfect(3));
        pair.client_request("test/x", Some(json!({"a": 1})), RequestOptions::default().with_progress()).unwrap();
        pair.run_until_quiet();
        let (_, params) = request_params(&pair).pop().unwrap();
        let meta = params["_meta"].as_object().unwrap();
        assert_eq!(meta.keys().collect::<Vec<_>>(), ["progressToken"], "{setup}");
        assert!(pair.server.requests[0].meta.is_none(), "{setup}");
    }
}

#[test]
fn stateless_results_say_result_type_and_legacy_results_do_not() {
    for setup in Setup::ALL {
        let mut pair = setup.connected(SimConfig::perfect(4));
        let plain = pair.client_request("test/x", None, RequestOptions::default()).unwrap();
        let marked = pair.client_request("test/y", None, RequestOptions::default()).unwrap();
        pair.run_until_quiet();
        let x = pair.server.take_request("test/x").unwrap();
        pair.server.respond(x, Ok(json!({"v": 1}))).unwrap();
        let y = pair.server.take_request("test/y").unwrap();
        pair.server.respond(y, Ok(json!({"resultType": "input_required", "v": 2}))).unwrap();
        pair.run_until_quiet();
        let plain = pair.client.result(&plain).unwrap();
        assert_eq!(plain["v"], 1, "{setup}");
        if setup.is_stateless() {
            assert_eq!(plain["resultType"], "complete", "{setup}");
        } else {
            assert_eq!(plain.get("resultType"), None, "{setup}");
        }
        assert_eq!(pair.client.result(&marked).unwrap()["resultType"], "input_required", "{setup}: kept as given");
    }
}

#[test]
fn the_server_answers_discover_with_its_revisions_capabilities_and_info() {
    let mut pair = Setup::Stateless.pair(SimConfig::perfect(5));
    pair.run_until_quiet();
    let answer = pair.server.sent_answers(&RequestId::Number(0)).pop().unwrap();
    let Message::Response(resp) = answer else { panic!("discover refused: {answer:?}") };
    let result: Value = serde_json::from_str(resp.result.get()).unwrap();
    assert_eq!(
        result["supportedVersions"],
        json!(["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"]),
        "newest first"
    );
    assert_eq!(result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "sim-server");
    assert!(result["capabilities"].is_object());
    assert_eq!(result["resultType"], "complete");
    assert_eq!(pair.client.session.peer_info().unwrap().name, "sim-server");
}

#[test]
fn a_legacy_only_server_refuses_discover() {
    let mut pair = Setup::AutoLegacyServer.pair(SimConfig::perfect(6));
    pair.run_until_quiet();
    let errors = pair.server.sent_errors(&RequestId::Number(0));
    assert_eq!(errors.iter().map(|e| e.code).collect::<Vec<_>>(), [ErrorCode::METHOD_NOT_FOUND]);
    assert_eq!(pair.client.session.version(), Some(ProtocolVersion::V2025_11_25), "the Auto client fell back");
}

#[test]
fn missing_client_capabilities_is_invalid_params() {
    let meta = json!({VERSION: "2026-07-28", INFO: {"name": "c", "version": "1"}});
    let error = server_error_for(Setup::AutoBoth, json!({"_meta": meta}));
    assert_eq!(error.code, ErrorCode::INVALID_PARAMS);
    assert!(error.message.contains("clientCapabilities"), "{}", error.message);
}

#[test]
fn an_unsupported_version_is_refused_with_the_supported_list() {
    for requested in ["2099-01-01", "2025-06-18", "yesterday"] {
        let error = server_error_for(Setup::AutoBoth, json!({"_meta": stateless_meta(requested)}));
        assert_eq!(error.code, ErrorCode::UNSUPPORTED_PROTOCOL_VERSION, "{requested}");
        let data = error.data.unwrap();
        assert_eq!(data["requested"], requested);
        let supported: Vec<String> = serde_json::from_value(data["supported"].clone()).unwrap();
        assert_eq!(supported.first().map(String::as_str), Some("2026-07-28"), "{requested}: {supported:?}");
    }
    // A legacy-only server lists what it does speak.
    let error = server_error_for(Setup::AutoLegacyServer, json!({"_meta": stateless_meta("2026-07-28")}));
    assert_eq!(error.code, ErrorCode::UNSUPPORTED_PROTOCOL_VERSION);
    let supported: Vec<String> = serde_json::from_value(error.data.unwrap()["supported"].clone()).unwrap();
    assert!(!supported.contains(&"2026-07-28".to_owned()), "{supported:?}");
    assert!(supported.contains(&"2025-11-25".to_owned()), "{supported:?}");
}

#[test]
fn the_first_valid_request_makes_the_server_ready_and_a_bad_one_does_not() {
    let mut pair = Setup::AutoBoth.pair(SimConfig::perfect(7));
    pair.set_tap(Dir::ToServer, |_| talaria_tests::sim::Fate::Drop);
    pair.inject(
        Dir::ToServer,
        &request_frame(json!(1), "test/x", Some(json!({"_meta": stateless_meta("2099-01-01")}))),
    );
    pair.run_until_quiet();
    assert!(pair.server.ready().is_none());
    assert_eq!(pair.server.session.version(), None);
    pair.inject(
        Dir::ToServer,
        &request_frame(json!(2), "test/x", Some(json!({"_meta": stateless_meta("2026-07-28")}))),
    );
    pair.run_until_quiet();
    assert_eq!(pair.server.ready().map(|r| r.version), Some(ProtocolVersion::V2026_07_28));
}

#[test]
fn a_stateless_server_refuses_a_request_without_protocol_version() {
    for setup in stateless_setups() {
        let mut pair = setup.connected(SimConfig::perfect(8));
        pair.client_request("test/first", None, RequestOptions::default()).unwrap();
        pair.run_until_quiet();
        assert_eq!(pair.server.session.version(), Some(ProtocolVersion::V2026_07_28), "{setup}");
        pair.inject(Dir::ToServer, &request_frame(json!("bare"), "test/x", Some(json!({"a": 1}))));
        pair.inject(Dir::ToServer, &request_frame(json!("none"), "test/x", None));
        pair.run_until_quiet();
        for id in ["bare", "none"] {
            let errors = pair.server.sent_errors(&RequestId::from(id));
            assert_eq!(errors.iter().map(|e| e.code).collect::<Vec<_>>(), [ErrorCode::INVALID_PARAMS], "{setup}: {id}");
        }
        assert_eq!(pair.server.requests.len(), 1, "{setup}: only test/first reached the application");
    }
}

#[test]
fn a_stateless_only_server_refuses_a_request_without_protocol_version_as_invalid_params() {
    let mut server = Setup::Stateless.server_config();
    server.session.versions = vec![ProtocolVersion::V2026_07_28];
    let mut pair = Pair::new(Setup::Stateless.client_config(), server, SimConfig::perfect(9));
    pair.set_tap(Dir::ToServer, |_| talaria_tests::sim::Fate::Drop);
    pair.inject(Dir::ToServer, &request_frame(json!("bare"), "test/x", Some(json!({"a": 1}))));
    pair.run_until_quiet();
    let errors = pair.server.sent_errors(&RequestId::from("bare"));
    assert_eq!(errors.iter().map(|e| e.code).collect::<Vec<_>>(), [ErrorCode::INVALID_PARAMS]);
}

#[test]
fn a_stateless_only_server_refuses_initialize() {
    let mut server = Setup::Stateless.server_config();
    server.session.versions = vec![ProtocolVersion::V2026_07_28];
    let mut pair =
        Pair::new(Setup::Legacy(ProtocolVersion::V2025_11_25).client_config(), server, SimConfig::perfect(10));
    pair.run_until_quiet();
    assert!(pair.client.ready().is_none());
    assert!(pair.client.closed_last());
    let errors = pair.server.sent_errors(&RequestId::Number(0));
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0].code, ErrorCode::INVALID_PARAMS);
    assert!(pair.client.closed_reason().unwrap().contains("handshake"));
}

#[test]
fn a_stateless_session_serves_many_clients_requests_interleaved() {
    // Requests from several stateless clients (different infos) through one server session.
    let mut pair = Setup::AutoBoth.pair(SimConfig::perfect(11));
    pair.set_tap(Dir::ToServer, |_| talaria_tests::sim::Fate::Drop);
    for (i, name) in ["a", "b", "c"].iter().enumerate() {
        let mut meta = stateless_meta("2026-07-28");
        meta[INFO] = json!({"name": name, "version": "1"});
        pair.inject(Dir::ToServer, &request_frame(json!(i), "test/x", Some(json!({"_meta": meta}))));
    }
    pair.run_until_quiet();
    let names: Vec<_> = pair
        .server
        .requests
        .iter()
        .map(|r| r.meta.as_ref().unwrap().client_info.as_ref().unwrap().name.clone())
        .collect();
    assert_eq!(names, ["a", "b", "c"]);
}
