//! Scenarios: capability, direction and revision gating both ways, through the two-peer
//! simulator, in both eras.
//!
//! `TALARIA_SIM_SEED=<n>` replays a failing seed.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use serde_json::{json, Value};
use talaria_core::jsonrpc::{ErrorCode, RequestId};
use talaria_core::schema::lifecycle::{
    ClientCapabilities, ListChangedCapability, ResourcesCapability, SamplingCapability, ServerCapabilities,
};
use talaria_core::schema::Capability;
use talaria_core::session::{Event, RequestOptions, SendError};
use talaria_core::version::ProtocolVersion;
use talaria_tests::sim::{request_frame, stateless_meta, Dir, Pair, Setup, SimConfig};

fn client_frame(setup: Setup, id: &str, method: &str, params: Value) -> Vec<u8> {
    let mut params = params;
    if setup.is_stateless() {
        params["_meta"] = stateless_meta("2026-07-28");
    }
    request_frame(json!(id), method, Some(params))
}

fn sampling_params() -> Value {
    json!({"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}], "maxTokens": 10})
}

fn only_error_code(pair: &Pair, from_server: bool, id: &str) -> ErrorCode {
    let id = RequestId::from(id);
    let errors = if from_server { pair.server.sent_errors(&id) } else { pair.client.sent_errors(&id) };
    assert_eq!(errors.len(), 1, "one error for {id}: {errors:?}");
    errors[0].code
}

#[test]
fn a_client_does_not_call_what_the_server_did_not_advertise() {
    for setup in Setup::ALL {
        let mut pair = setup.connected(SimConfig::perfect(1));
        let before = pair.client.wire.len();
        for (method, capability) in [
            ("tools/call", Capability::Tools),
            ("tools/list", Capability::Tools),
            ("prompts/get", Capability::Prompts),
            ("resources/read", Capability::Resources),
        ] {
            assert_eq!(
                pair.client_request(method, Some(json!({})), RequestOptions::default()),
                Err(SendError::MissingCapability { method: method.into(), capability }),
                "{setup}"
            );
        }
        // completion/complete needs `completions` only from 2025-03-26 on.
        let completion = pair.client_request("completion/complete", Some(json!({})), RequestOptions::default());
        if setup == Setup::Legacy(ProtocolVersion::V2024_11_05) {
            assert!(completion.is_ok(), "{setup}: 2024-11-05 has no completions capability");
        } else {
            assert_eq!(
                completion,
                Err(SendError::MissingCapability {
                    method: "completion/complete".into(),
                    capability: Capability::Completions
                }),
                "{setup}"
            );
        }
        if !setup.is_stateless() {
            assert_eq!(
                pair.client_request("resources/subscribe", Some(json!({"uri": "x"})), RequestOptions::default()),
                Err(SendError::MissingCapability {
                    method: "resources/subscribe".into(),
                    capability: Capability::ResourcesSubscribe
                }),
                "{setup}"
            );
        }
        pair.run_until_quiet();
        let expected_new = usize::from(setup == Setup::Legacy(ProtocolVersion::V2024_11_05));
        assert_eq!(pair.client.wire.len() - before, expected_new, "{setup}: refused requests are not sent");
    }
}

#[test]
fn a_client_calls_what_the_server_advertised() {
    for setup in Setup::ALL {
        let caps = ServerCapabilities {
            tools: Some(ListChangedCapability::default()),
            resources: Some(ResourcesCapability { subscribe: Some(true), ..Default::default() }),
            ..Default::default()
        };
        let mut pair =
            Pair::new(setup.client_config(), setup.server_config().with_capabilities(caps), SimConfig::perfect(2));
        pair.connect();
        let call = pair.client_request("tools/call", Some(json!({"name": "x"})), RequestOptions::default()).unwrap();
        let read = pair.client_request("resources/read", Some(json!({"uri": "a"})), RequestOptions::default()).unwrap();
        pair.run_until_quiet();
        let methods: Vec<_> = pair.server.requests.iter().map(|r| r.method.clone()).collect();
        assert_eq!(methods, ["tools/call", "resources/read"], "{setup}");
        pair.server.answer_all(|_| Ok(json!({"content": []}))).unwrap();
        pair.run_until_quiet();
        assert!(pair.client.result(&call).is_some() && pair.client.result(&read).is_some(), "{setup}");
    }
}

#[test]
fn a_server_answers_method_not_found_for_a_capability_it_did_not_advertise() {
    for setup in Setup::ALL {
        let mut pair = setup.connected(SimConfig::perfect(3));
        pair.inject(Dir::ToServer, &client_frame(setup, "t", "tools/call", json!({"name": "x"})));
        pair.inject(Dir::ToServer, &client_frame(setup, "p", "prompts/list", json!({})));
        pair.run_until_quiet();
        assert_eq!(only_error_code(&pair, true, "t"), ErrorCode::METHOD_NOT_FOUND, "{setup}");
        assert_eq!(only_error_code(&pair, true, "p"), ErrorCode::METHOD_NOT_FOUND, "{setup}");
        assert!(pair.server.requests.is_empty(), "{setup}: the application never sees them");
    }
}

#[test]
fn a_server_refuses_requests_only_a_server_may_send() {
    for setup in Setup::ALL {
        let mut pair = setup.connected(SimConfig::perfect(4));
        pair.inject(Dir::ToServer, &client_frame(setup, "s", "sampling/createMessage", sampling_params()));
        pair.inject(Dir::ToServer, &client_frame(setup, "r", "roots/list", json!({})));
        pair.run_until_quiet();
        assert_eq!(only_error_code(&pair, true, "s"), ErrorCode::METHOD_NOT_FOUND, "{setup}");
        assert_eq!(only_error_code(&pair, true, "r"), ErrorCode::METHOD_NOT_FOUND, "{setup}");
        assert!(pair.server.requests.is_empty(), "{setup}");
    }
}

#[test]
fn a_client_refuses_an_unadvertised_sampling_request() {
    for setup in Setup::ALL {
        let mut pair = setup.connected(SimConfig::perfect(5));
        pair.inject(Dir::ToClient, &request_frame(json!("s"), "sampling/createMessage", Some(sampling_params())));
        pair.inject(Dir::ToClient, &request_frame(json!("r"), "roots/list", None));
        pair.inject(Dir::ToClient, &request_frame(json!("t"), "tools/call", Some(json!({"name": "x"}))));
        pair.run_until_quiet();
        for id in ["s", "r", "t"] {
            assert_eq!(only_error_code(&pair, false, id), ErrorCode::METHOD_NOT_FOUND, "{setup}: {id}");
        }
        assert!(pair.client.requests.is_empty(), "{setup}");
    }
}

#[test]
fn a_client_that_advertised_sampling_gets_sampling_requests_in_the_legacy_era() {
    for setup in Setup::ALL {
        let caps = ClientCapabilities {
            sampling: Some(SamplingCapability::default()),
            roots: Some(ListChangedCapability::default()),
            ..Default::default()
        };
        let mut pair =
            Pair::new(setup.client_config().with_capabilities(caps), setup.server_config(), SimConfig::perfect(6));
        pair.connect();
        if setup.is_stateless() {
            // No server-to-client requests on the wire in 2026-07-28 (MRTR instead).
            pair.inject(Dir::ToClient, &request_frame(json!("s"), "sampling/createMessage", Some(sampling_params())));
            pair.run_until_quiet();
            assert_eq!(only_error_code(&pair, false, "s"), ErrorCode::METHOD_NOT_FOUND, "{setup}");
            continue;
        }
        let sample =
            pair.server_request("sampling/createMessage", Some(sampling_params()), RequestOptions::default()).unwrap();
        let roots = pair.server_request("roots/list", None, RequestOptions::default()).unwrap();
        pair.run_until_quiet();
        let methods: Vec<_> = pair.client.requests.iter().map(|r| r.method.clone()).collect();
        assert_eq!(methods, ["sampling/createMessage", "roots/list"], "{setup}");
        pair.client.answer_all(|_| Ok(json!({}))).unwrap();
        pair.run_until_quiet();
        assert!(pair.server.result(&sample).is_some() && pair.server.result(&roots).is_some(), "{setup}");
    }
}

#[test]
fn a_server_does_not_send_what_the_client_did_not_advertise() {
    for setup in Setup::ALL {
        let mut pair = setup.connected(SimConfig::perfect(7));
        if setup.is_stateless() {
            // The stateless server learns the revision from the first request.
            pair.inject(
                Dir::ToServer,
                &request_frame(json!("x"), "test/x", Some(json!({"_meta": stateless_meta("2026-07-28")}))),
            );
            pair.run_until_quiet();
        }
        for (method, capability) in [
            ("sampling/createMessage", Capability::Sampling),
            ("roots/list", Capability::Roots),
            ("elicitation/create", Capability::Elicitation),
        ] {
            let got = pair.server_request(method, Some(json!({})), RequestOptions::default());
            let version = setup.expected_version();
            let exists = talaria_core::schema::method_info(method).unwrap().exists_in(version);
            let expected = if exists {
                SendError::MissingCapability { method: method.into(), capability }
            } else {
                SendError::NotInRevision { method: method.into(), version }
            };
            assert_eq!(got, Err(expected), "{setup}");
        }
    }
}

#[test]
fn each_side_refuses_to_send_the_other_sides_methods() {
    for setup in Setup::ALL {
        let mut pair = setup.connected(SimConfig::perfect(8));
        if setup.is_stateless() {
            // Gating starts once the session knows its revision: a stateless server learns it
            // from the first request.
            pair.inject(Dir::ToServer, &client_frame(setup, "x", "test/x", json!({})));
            pair.run_until_quiet();
        }
        assert_eq!(
            pair.client_request("sampling/createMessage", Some(sampling_params()), RequestOptions::default()),
            Err(SendError::WrongDirection { method: "sampling/createMessage".into() }),
            "{setup}"
        );
        assert_eq!(
            pair.server_request("tools/call", Some(json!({})), RequestOptions::default()),
            Err(SendError::WrongDirection { method: "tools/call".into() }),
            "{setup}"
        );
        assert_eq!(
            pair.client.session.notify("notifications/tools/list_changed", None),
            Err(SendError::WrongDirection { method: "notifications/tools/list_changed".into() }),
            "{setup}"
        );
    }
}

#[test]
fn list_changed_notifications_need_their_capability_and_reach_the_client() {
    for setup in Setup::ALL {
        let mut pair = setup.connected(SimConfig::perfect(9));
        assert_eq!(
            pair.server.session.notify("notifications/tools/list_changed", None),
            Err(SendError::MissingCapability {
                method: "notifications/tools/list_changed".into(),
                capability: Capability::ToolsListChanged
            }),
            "{setup}"
        );
        let caps = ServerCapabilities {
            tools: Some(ListChangedCapability { list_changed: Some(true), ..Default::default() }),
            ..Default::default()
        };
        let mut pair =
            Pair::new(setup.client_config(), setup.server_config().with_capabilities(caps), SimConfig::perfect(9));
        pair.connect();
        // A server speaks only once a client has: in the stateless era, after its first
        // request (a discover probe commits the client to nothing).
        pair.client_request("tools/list", None, RequestOptions::default()).unwrap();
        pair.run_until_quiet();
        pair.server.session.notify("notifications/tools/list_changed", None).unwrap();
        pair.run_until_quiet();
        let got: Vec<_> = pair
            .client
            .events()
            .filter_map(|e| match e {
                Event::Notification { method, .. } => Some(method.clone()),
                _ => None,
            })
            .collect();
        assert_eq!(got, ["notifications/tools/list_changed"], "{setup}");
    }
}
