//! Scenarios: opening and closing a session in both eras, through the two-peer simulator.
//!
//! Each scenario that applies to both eras runs under every [`Setup`]: legacy at each revision,
//! stateless, and Auto against a dual-era and a legacy-only server. `TALARIA_SIM_SEED=<n>`
//! replays a failing seed.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::time::Duration;

use serde_json::json;
use talaria_core::jsonrpc::{ErrorCode, RequestId};
use talaria_core::schema::lifecycle::{ClientCapabilities, ListChangedCapability, ServerCapabilities};
use talaria_core::session::{
    CallError, CloseReason, Event, LocalError, NotSentReason, Phase, ProtocolError, RequestOptions, SendError,
};
use talaria_core::version::ProtocolVersion;
use talaria_tests::sim::{method_of, params_of, request_frame, stateless_meta, Dir, Fate, Pair, Setup, SimConfig};

const fn secs(n: u64) -> Duration {
    Duration::from_secs(n)
}

fn tools_and_logging() -> ServerCapabilities {
    ServerCapabilities {
        tools: Some(ListChangedCapability { list_changed: Some(true), ..Default::default() }),
        logging: Some(serde_json::Map::new()),
        ..Default::default()
    }
}

fn with_roots() -> ClientCapabilities {
    ClientCapabilities { roots: Some(ListChangedCapability::default()), ..Default::default() }
}

/// One round trip of an opaque method; returns the result.
fn echo(pair: &mut Pair, n: u64) -> serde_json::Value {
    let id = pair.client_request("test/echo", Some(json!({"n": n})), RequestOptions::default()).unwrap();
    pair.run_until_quiet();
    pair.server.answer_all(|req| Ok(json!({"n": params_of(req)["n"]}))).unwrap();
    pair.run_until_quiet();
    pair.client.result(&id).unwrap_or_else(|| panic!("no result for {id}: {:#?}", pair.client.log))
}

#[test]
fn handshake_reaches_ready_with_the_negotiated_version_peer_info_and_capabilities() {
    for (i, setup) in Setup::ALL.into_iter().enumerate() {
        for sim in [SimConfig::perfect(10 + i as u64), SimConfig::chaos(20 + i as u64)] {
            let mut client = setup.client_config().with_capabilities(with_roots());
            client.session.info.title = Some("Sim Client".into());
            let server = setup.server_config().with_capabilities(tools_and_logging()).with_instructions("Be brief.");
            let mut pair = Pair::new(client, server, sim);
            pair.connect();

            let ready = pair.client.ready().unwrap_or_else(|| panic!("{setup}: client not ready"));
            assert_eq!(ready.version, setup.expected_version(), "{setup}");
            assert_eq!((ready.peer.name.as_str(), ready.peer.version.as_str()), ("sim-server", "2.0"), "{setup}");
            assert_eq!(ready.server_capabilities.as_ref(), Some(&tools_and_logging()), "{setup}");
            assert_eq!(ready.instructions.as_deref(), Some("Be brief."), "{setup}");
            assert_eq!(pair.client.session.phase(), Phase::Ready, "{setup}");
            assert_eq!(pair.client.session.version(), Some(setup.expected_version()), "{setup}");
            assert_eq!(pair.client.session.server_capabilities(), Some(&tools_and_logging()), "{setup}");
            assert_eq!(pair.client.session.instructions(), Some("Be brief."), "{setup}");

            // A stateless server learns who its client is from the first request's `_meta`.
            assert_eq!(echo(&mut pair, 1)["n"], 1, "{setup}");
            let ready = pair.server.ready().unwrap_or_else(|| panic!("{setup}: server not ready"));
            assert_eq!(ready.version, setup.expected_version(), "{setup}");
            assert_eq!(ready.peer.name, "sim-client", "{setup}");
            assert_eq!(ready.peer.title.as_deref(), Some("Sim Client"), "{setup}");
            if setup.is_stateless() {
                assert_eq!(ready.client_capabilities, None, "{setup}: per request in the stateless era");
            } else {
                assert_eq!(ready.client_capabilities.as_ref(), Some(&with_roots()), "{setup}");
                assert_eq!(pair.server.session.client_capabilities(), Some(&with_roots()), "{setup}");
            }
            assert_eq!(pair.server.session.phase(), Phase::Ready, "{setup}");
            assert_eq!((pair.client.ready_count(), pair.server.ready_count()), (1, 1), "{setup}: Ready once");
            assert_eq!(pair.client.misbehaviours().count() + pair.server.misbehaviours().count(), 0, "{setup}");
        }
    }
}

#[test]
fn the_legacy_handshake_is_initialize_then_initialized() {
    for v in ProtocolVersion::ALL.into_iter().filter(|v| v.era() == talaria_core::version::Era::Legacy) {
        let pair = Setup::Legacy(v).connected(SimConfig::perfect(1));
        assert_eq!(pair.client.sent_methods(), ["initialize"]);
        let init = pair.client.sent_messages().remove(0);
        let params: serde_json::Value = serde_json::from_str(init.params().unwrap().get()).unwrap();
        assert_eq!(params["protocolVersion"], v.as_str());
        assert_eq!(params["clientInfo"]["name"], "sim-client");
        assert_eq!(pair.client.sent_notifications("notifications/initialized").len(), 1);
    }
}

#[test]
fn a_client_restricted_to_an_old_revision_talks_to_a_newer_server() {
    for v in [ProtocolVersion::V2024_11_05, ProtocolVersion::V2025_03_26, ProtocolVersion::V2025_06_18] {
        let mut server = Setup::Legacy(v).server_config();
        server.session.versions = vec![v, ProtocolVersion::V2025_11_25, ProtocolVersion::V2026_07_28];
        let mut pair = Pair::new(Setup::Legacy(v).client_config(), server, SimConfig::chaos(3));
        pair.connect();
        assert_eq!(pair.client.session.version(), Some(v));
        assert_eq!(pair.server.session.version(), Some(v));
        assert_eq!(echo(&mut pair, 7)["n"], 7);
    }
}

#[test]
fn a_newer_client_accepts_an_older_revision_the_server_answers() {
    let mut client = Setup::Legacy(ProtocolVersion::V2025_11_25).client_config();
    client.session.versions = ProtocolVersion::ALL.to_vec();
    let mut server = Setup::AutoLegacyServer.server_config();
    server.session.versions = vec![ProtocolVersion::V2024_11_05];
    let mut pair = Pair::new(client, server, SimConfig::perfect(4));
    pair.connect();
    assert_eq!(pair.client.ready().unwrap().version, ProtocolVersion::V2024_11_05);
    assert_eq!(pair.server.ready().unwrap().version, ProtocolVersion::V2024_11_05);
}

#[test]
fn a_client_that_supports_no_version_the_server_answers_closes_with_a_clear_error() {
    let mut client = Setup::Legacy(ProtocolVersion::V2024_11_05).client_config();
    client.session.versions = vec![ProtocolVersion::V2024_11_05];
    let mut server = Setup::AutoLegacyServer.server_config();
    server.session.versions = vec![ProtocolVersion::V2025_06_18];
    let mut pair = Pair::new(client, server, SimConfig::perfect(5));
    let queued = pair.client_request("test/echo", None, RequestOptions::default()).unwrap();
    pair.run_until_quiet();

    assert!(pair.client.ready().is_none());
    assert!(pair.client.is_closed() && pair.client.closed_last());
    let reason = pair.client.closed_reason().unwrap();
    assert!(reason.contains("2025-06-18") && reason.contains("unsupported"), "{reason}");
    let misbehaved: Vec<_> = pair.client.misbehaviours().cloned().collect();
    assert_eq!(misbehaved, [ProtocolError::UnsupportedVersion("2025-06-18".into())]);
    assert!(matches!(pair.client.error(&queued), Some(CallError::Local(LocalError::Closed { .. }))));
    // The client's transport closes with it; the server sees the end of the stream.
    assert!(pair.server.is_closed() && pair.server.closed_last());
    assert_eq!(pair.client.sent_notifications("notifications/initialized").len(), 0);
}

#[test]
fn a_stateless_client_against_a_legacy_only_server_closes_with_a_clear_error() {
    let mut pair =
        Pair::new(Setup::Stateless.client_config(), Setup::AutoLegacyServer.server_config(), SimConfig::perfect(6));
    pair.run_until_quiet();
    assert!(pair.client.ready().is_none());
    assert!(pair.client.closed_last());
    let reason = pair.client.closed_reason().unwrap();
    assert!(reason.contains("server/discover"), "{reason}");
    assert_eq!(pair.client.sent_methods(), ["server/discover"], "no fallback in Stateless mode");
}

#[test]
fn auto_falls_back_to_initialize_when_the_server_is_legacy_only() {
    let pair = Setup::AutoLegacyServer.connected(SimConfig::perfect(7));
    assert_eq!(pair.client.sent_methods(), ["server/discover", "initialize"]);
    assert_eq!(pair.client.session.version(), Some(ProtocolVersion::V2025_11_25));
    assert_eq!(pair.server.session.version(), Some(ProtocolVersion::V2025_11_25));
    assert_eq!(pair.client.ready_at(), Some(Duration::ZERO), "no waiting for the probe deadline");
}

#[test]
fn auto_falls_back_to_initialize_when_the_discover_probe_times_out() {
    for timeout in [secs(5), Duration::from_millis(1500)] {
        let mut client = Setup::AutoBoth.client_config();
        client.discover_timeout = timeout;
        let mut pair = Pair::new(client, Setup::AutoBoth.server_config(), SimConfig::perfect(8));
        // A server that never sees the probe (an old server that ignores unknown methods).
        pair.set_tap(Dir::ToServer, |f| {
            if method_of(f).as_deref() == Some("server/discover") {
                Fate::Drop
            } else {
                Fate::Deliver
            }
        });
        pair.run_for(timeout - Duration::from_millis(1));
        assert_eq!(pair.client.session.phase(), Phase::Discovering);
        assert_eq!(pair.client.sent_methods(), ["server/discover"]);

        pair.run_for(Duration::from_millis(1));
        assert_eq!(pair.client.sent_methods(), ["server/discover", "initialize"]);
        let cancelled = pair.client.sent_notifications("notifications/cancelled");
        assert_eq!(cancelled, [json!({"requestId": 0, "reason": "timeout"})]);
        pair.run_until_quiet();
        let ready = pair.client.ready().unwrap();
        assert_eq!(ready.version, ProtocolVersion::V2025_11_25);
        assert_eq!(pair.client.ready_at(), Some(timeout), "ready as soon as the fallback is answered");
        assert_eq!(pair.server.ready().unwrap().version, ProtocolVersion::V2025_11_25);
    }
}

#[test]
fn the_whole_handshake_has_one_deadline_probe_and_fallback_included() {
    // Auto: the probe takes its 5 s, the fallback gets what is left of 8 s: closed at 8 s.
    let mut client = Setup::AutoBoth.client_config();
    client.handshake_timeout = secs(8);
    let mut pair = Pair::new(client, Setup::AutoBoth.server_config(), SimConfig::perfect(8));
    // A server that never answers.
    pair.set_tap(Dir::ToServer, |_| Fate::Drop);
    pair.run_for(secs(8) - Duration::from_millis(1));
    assert_eq!(pair.client.sent_methods(), ["server/discover", "initialize"]);
    assert!(pair.client.closed_with().is_none(), "still within the deadline");
    pair.run_for(Duration::from_millis(1));
    assert_eq!(
        pair.client.closed_with(),
        Some(&CloseReason::Handshake(ProtocolError::HandshakeTimedOut { after: secs(8) }))
    );

    // Legacy and stateless: their one handshake request has the whole deadline.
    for setup in [Setup::Legacy(ProtocolVersion::V2025_11_25), Setup::Stateless] {
        let mut client = setup.client_config();
        client.handshake_timeout = secs(3);
        let mut pair = Pair::new(client, setup.server_config(), SimConfig::perfect(8));
        pair.set_tap(Dir::ToServer, |_| Fate::Drop);
        pair.run_for(secs(3) - Duration::from_millis(1));
        assert!(pair.client.closed_with().is_none());
        pair.run_for(Duration::from_millis(1));
        assert_eq!(
            pair.client.closed_with(),
            Some(&CloseReason::Handshake(ProtocolError::HandshakeTimedOut { after: secs(3) })),
            "{setup:?}"
        );
    }
}

#[test]
fn a_probe_answer_after_the_fallback_is_dropped_and_counted() {
    let mut pair = Setup::AutoBoth.pair(SimConfig::perfect(9));
    pair.set_tap(Dir::ToServer, |f| {
        if method_of(f).as_deref() == Some("server/discover") {
            Fate::Delay(secs(7))
        } else {
            Fate::Deliver
        }
    });
    pair.run_for(secs(10));
    assert_eq!(pair.client.ready().unwrap().version, ProtocolVersion::V2025_11_25);
    assert_eq!(pair.client.ready_count(), 1);
    assert_eq!(pair.client.session.late_responses(), 1);
    assert_eq!(pair.client.misbehaviours().count(), 0);
}

#[test]
fn an_auto_client_without_the_stateless_revision_goes_straight_to_initialize() {
    let mut client = Setup::AutoBoth.client_config();
    client.session.versions = vec![ProtocolVersion::V2025_06_18];
    let mut pair = Pair::new(client, Setup::AutoBoth.server_config(), SimConfig::perfect(10));
    pair.run_until_quiet();
    assert_eq!(pair.client.closed_reason(), None);
    assert_eq!(pair.client.sent_methods(), ["initialize"]);
    assert_eq!(pair.client.ready().map(|r| r.version), Some(ProtocolVersion::V2025_06_18));
}

#[test]
fn requests_queued_before_ready_are_sent_after() {
    for (i, setup) in Setup::ALL.into_iter().enumerate() {
        let mut pair = setup.pair(SimConfig::chaos(30 + i as u64));
        let ids: Vec<RequestId> = (0..3)
            .map(|n| pair.client_request("test/echo", Some(json!({"n": n})), RequestOptions::default()).unwrap())
            .collect();
        let handshake = pair.client.sent_methods();
        assert!(handshake.iter().all(|m| m == "initialize" || m == "server/discover"), "{setup}: {handshake:?}");
        pair.run_until_quiet();
        pair.server.answer_all(|req| Ok(json!({"n": params_of(req)["n"]}))).unwrap();
        pair.run_until_quiet();
        for (n, id) in ids.iter().enumerate() {
            assert_eq!(pair.client.result(id).unwrap()["n"], n, "{setup}");
        }
        // Sent after the handshake, in the order they were made.
        let methods = pair.client.sent_methods();
        let first_app = methods.iter().position(|m| m == "test/echo").unwrap();
        assert!(methods[..first_app].iter().all(|m| m == "initialize" || m == "server/discover"), "{setup}");
        let messages = pair.client.sent_messages();
        let app_ids: Vec<_> =
            messages.iter().filter(|m| m.method() == Some("test/echo")).map(|m| m.id().cloned().unwrap()).collect();
        assert_eq!(app_ids, ids, "{setup}");
        if !setup.is_stateless() {
            let initialized = messages.iter().position(|m| m.method() == Some("notifications/initialized")).unwrap();
            let first = messages.iter().position(|m| m.method() == Some("test/echo")).unwrap();
            assert!(initialized < first, "{setup}: requests go after notifications/initialized");
        }
    }
}

#[test]
fn a_queued_request_the_server_cannot_take_ends_as_not_sent() {
    for setup in Setup::ALL {
        let mut pair = setup.pair(SimConfig::perfect(11));
        let id = pair.client_request("tools/call", Some(json!({"name": "x"})), RequestOptions::default()).unwrap();
        pair.run_until_quiet();
        assert!(
            matches!(
                pair.client.error(&id),
                Some(CallError::Local(LocalError::NotSent(NotSentReason::Refused(
                    SendError::MissingCapability { .. }
                ))))
            ),
            "{setup}: {:?}",
            pair.client.outcome(&id)
        );
        assert!(!pair.client.sent_methods().contains(&"tools/call".to_owned()), "{setup}");
        assert_eq!(pair.client.session.pending_requests(), 0, "{setup}");
    }
}

#[test]
fn server_requests_queued_before_ready_are_sent_after() {
    for v in ProtocolVersion::ALL.into_iter().filter(|v| v.era() == talaria_core::version::Era::Legacy) {
        let mut pair = Setup::Legacy(v).pair(SimConfig::perfect(12));
        let id = pair.server_request("ping", None, RequestOptions::default()).unwrap();
        pair.run_for(secs(1));
        assert_eq!(pair.server.result(&id), Some(json!({})), "{v}: {:?}", pair.server.outcome(&id));
    }
}

#[test]
fn a_second_initialize_is_refused() {
    for setup in Setup::ALL {
        let mut pair = setup.connected(SimConfig::perfect(13));
        if setup.is_stateless() {
            echo(&mut pair, 1);
        }
        let init = json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "again", "version": "9"}});
        pair.inject(Dir::ToServer, &request_frame(json!("again"), "initialize", Some(init)));
        pair.run_until_quiet();
        let errors = pair.server.sent_errors(&RequestId::from("again"));
        assert_eq!(errors.len(), 1, "{setup}");
        assert_eq!(errors[0].code, ErrorCode::INVALID_REQUEST, "{setup}");
        assert!(
            pair.server
                .misbehaviours()
                .any(|m| matches!(m, ProtocolError::Unexpected { method, .. } if method == "initialize")),
            "{setup}"
        );
        // Nothing changed: same version, same peer, still working.
        assert_eq!(pair.server.session.version(), Some(setup.expected_version()), "{setup}");
        assert_eq!(pair.server.session.peer_info().unwrap().name, "sim-client", "{setup}");
        assert_eq!(echo(&mut pair, 2)["n"], 2, "{setup}");
        assert_eq!(pair.server.ready_count(), 1, "{setup}");
    }
}

#[test]
fn a_request_before_initialize_is_refused_not_left_hanging() {
    let mut pair = Setup::Legacy(ProtocolVersion::V2025_06_18).pair(SimConfig::perfect(14));
    // Only the injected frame reaches the server first: hold the client's initialize back.
    pair.set_tap(Dir::ToServer, |_| Fate::Delay(secs(1)));
    pair.inject(Dir::ToServer, &request_frame(json!("early"), "tools/list", None));
    pair.inject(Dir::ToServer, &request_frame(json!("ping-early"), "ping", None));
    pair.run_for(Duration::from_millis(1));
    let errors = pair.server.sent_errors(&RequestId::from("early"));
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0].code, ErrorCode::INVALID_REQUEST);
    assert_eq!(pair.server.sent_answers(&RequestId::from("ping-early")).len(), 1, "ping is answered before initialize");
    assert!(pair.server.sent_errors(&RequestId::from("ping-early")).is_empty());
    pair.clear_tap(Dir::ToServer);
    pair.run_until_quiet();
    assert!(pair.client.ready().is_some() && pair.server.ready().is_some());
}

#[test]
fn a_stateless_request_carries_its_own_version_and_needs_no_handshake() {
    // A stateless-capable server answers a request with `_meta` directly, no discover first.
    let mut pair = Setup::AutoBoth.pair(SimConfig::perfect(15));
    pair.set_tap(Dir::ToClient, |_| Fate::Drop);
    let mut params = json!({"n": 1});
    params["_meta"] = stateless_meta("2026-07-28");
    pair.inject(Dir::ToServer, &request_frame(json!("direct"), "test/echo", Some(params)));
    pair.run_until_quiet();
    assert_eq!(pair.server.session.version(), Some(ProtocolVersion::V2026_07_28));
    let req = pair.server.take_request("test/echo").unwrap();
    let meta = req.meta.as_ref().unwrap();
    assert_eq!(meta.protocol_version.as_deref(), Some("2026-07-28"));
    assert_eq!(meta.client_info.as_ref().unwrap().name, "sim-client");
}

#[test]
fn close_ends_every_pending_request_as_closed_and_closed_is_last_on_both_sides() {
    for (i, setup) in Setup::ALL.into_iter().enumerate() {
        for closer_is_client in [true, false] {
            let mut pair = setup.connected(SimConfig::chaos(40 + i as u64));
            let ids: Vec<RequestId> = (0..5)
                .map(|n| pair.client_request("test/echo", Some(json!({"n": n})), RequestOptions::default()).unwrap())
                .collect();
            pair.run_until_quiet();
            assert_eq!(pair.server.requests.len(), 5, "{setup}");
            // One answered before the close, the rest still pending.
            let at = pair.server.requests.iter().position(|r| *r.reply.id() == ids[0]).unwrap();
            let first = pair.server.requests.remove(at).unwrap();
            pair.server.respond(first, Ok(json!({}))).unwrap();
            pair.run_for(secs(2));
            if closer_is_client {
                pair.client.session.close();
            } else {
                pair.server.session.close();
            }
            pair.run_until_quiet();
            pair.run_for(secs(1));

            assert!(pair.client.result(&ids[0]).is_some(), "{setup}");
            for id in &ids[1..] {
                assert!(
                    matches!(pair.client.error(id), Some(CallError::Local(LocalError::Closed { .. }))),
                    "{setup}: {id} ended {:?}",
                    pair.client.outcome(id)
                );
                assert_eq!(pair.client.response_count(id), 1, "{setup}");
                assert_eq!(pair.client.ended_at(id), Some(pair.client.log.last().unwrap().at), "{setup}: promptly");
            }
            assert!(pair.client.closed_last(), "{setup}: {:#?}", pair.client.log);
            assert!(pair.server.closed_last(), "{setup}: {:#?}", pair.server.log);
            assert_eq!(pair.client.session.phase(), Phase::Closed);
            assert_eq!(pair.server.session.phase(), Phase::Closed);
            assert_eq!(pair.client.session.pending_requests(), 0);
            assert_eq!(pair.server.session.inflight_requests(), 0);
            assert_eq!(pair.client.session.poll_timeout(), None);
        }
    }
}

#[test]
fn after_close_every_command_is_refused_and_nothing_is_output() {
    for setup in Setup::ALL {
        let mut pair = setup.connected(SimConfig::perfect(16));
        let id = pair.client_request("test/echo", None, RequestOptions::default()).unwrap();
        pair.run_until_quiet();
        let req = pair.server.requests.pop_front().unwrap();
        pair.server.session.close();
        pair.server.session.close();
        pair.run_until_quiet();
        assert_eq!(pair.server.respond(req, Ok(json!({}))), Err(SendError::Closed));
        assert_eq!(pair.server_request("ping", None, RequestOptions::default()), Err(SendError::Closed));
        assert_eq!(pair.server.session.notify("notifications/tools/list_changed", None), Err(SendError::Closed));
        assert_eq!(pair.client_request("test/echo", None, RequestOptions::default()), Err(SendError::Closed));
        assert_eq!(pair.client.session.cancel(&id, None), Err(SendError::UnknownRequest(id.clone())));
        let now = pair.now();
        pair.client.session.handle_bytes(now, b"{\"jsonrpc\":\"2.0\",\"method\":\"x\"}\n");
        pair.client.session.handle_timeout(now + secs(3600));
        pair.client.session.handle_closed(now);
        assert!(pair.client.session.poll_output().is_none(), "{setup}");
        assert!(pair.server.session.poll_output().is_none(), "{setup}");
        assert_eq!(
            pair.client
                .log
                .iter()
                .filter(|l| matches!(l.seen, talaria_tests::sim::Seen::Event(Event::Closed { .. })))
                .count(),
            1
        );
    }
}

#[test]
fn closing_during_the_handshake_ends_queued_requests_as_closed() {
    for setup in Setup::ALL {
        let mut pair = setup.pair(SimConfig::perfect(17));
        let id = pair.client_request("test/echo", None, RequestOptions::default()).unwrap();
        pair.client.session.close();
        pair.run_until_quiet();
        assert!(matches!(pair.client.error(&id), Some(CallError::Local(LocalError::Closed { .. }))), "{setup}");
        assert!(pair.client.closed_last() && pair.server.closed_last(), "{setup}");
        assert!(!pair.client.sent_methods().contains(&"test/echo".to_owned()), "{setup}");
    }
}

#[test]
fn killing_the_connection_mid_call_fails_pending_requests_promptly() {
    for (i, setup) in Setup::ALL.into_iter().enumerate() {
        let mut pair = setup.connected(SimConfig::chaos(50 + i as u64));
        let ids: Vec<RequestId> = (0..4)
            .map(|n| pair.client_request("test/echo", Some(json!({"n": n})), RequestOptions::default()).unwrap())
            .collect();
        pair.run_for(secs(3));
        let killed_at = pair.elapsed();
        pair.kill();
        pair.run_until_quiet();
        for id in &ids {
            let error = pair.client.error(id);
            assert!(
                matches!(error, Some(CallError::Local(LocalError::Closed { reason: Some(r) })) if r.contains("transport")),
                "{setup}: {error:?}"
            );
            assert_eq!(pair.client.ended_at(id), Some(killed_at), "{setup}: not at the timeout");
        }
        assert!(pair.client.closed_last() && pair.server.closed_last(), "{setup}");
        assert_eq!(pair.client.closed_with(), Some(&CloseReason::TransportClosed));
    }
}

#[test]
fn a_connection_that_dies_at_random_still_ends_every_request_exactly_once() {
    for seed in 0..40 {
        let setup = Setup::ALL[seed as usize % Setup::ALL.len()];
        let sim = SimConfig { kill: 0.02, duplicate: 0.1, ..SimConfig::chaos(1000 + seed) };
        let mut pair = setup.pair(sim);
        let mut ids = Vec::new();
        for round in 0..20 {
            if let Ok(id) = pair.client_request("test/echo", Some(json!({"n": round})), RequestOptions::default()) {
                ids.push(id);
            }
            pair.run_for(Duration::from_millis(30));
            let _ = pair.server.answer_all(|_| Ok(json!({})));
        }
        pair.run_for(secs(60));
        if !pair.is_killed() {
            pair.client.session.close();
            pair.run_until_quiet();
        }
        for id in &ids {
            assert_eq!(pair.client.response_count(id), 1, "{setup}, {id}");
        }
        assert!(pair.client.closed_last() && pair.server.closed_last(), "{setup}");
    }
}

#[test]
fn the_handshake_survives_byte_by_byte_delivery_and_coalescing() {
    for setup in Setup::ALL {
        let sim = SimConfig { chunk: 1.0, max_chunk: 1, ..SimConfig::perfect(18) };
        let mut pair = setup.connected(sim);
        assert_eq!(echo(&mut pair, 3)["n"], 3, "{setup}");
        let sim = SimConfig { chunk: 1.0, max_chunk: 4096, ..SimConfig::perfect(19) };
        let mut pair = setup.connected(sim);
        assert_eq!(echo(&mut pair, 4)["n"], 4, "{setup}");
    }
}

#[test]
fn an_initialize_that_gets_no_answer_fails_the_handshake_at_the_handshake_timeout() {
    let mut client = Setup::Legacy(ProtocolVersion::V2025_11_25).client_config();
    client.handshake_timeout = secs(12);
    // The requests' own timeout does not bound the handshake.
    client.session.request_timeout = secs(1);
    let mut pair = Pair::new(client, Setup::AutoBoth.server_config(), SimConfig::perfect(20));
    pair.set_tap(Dir::ToServer, |_| Fate::Drop);
    pair.run_for(secs(11));
    assert!(!pair.client.is_closed());
    pair.run_for(secs(1));
    assert!(pair.client.closed_last());
    assert_eq!(pair.client.log.last().unwrap().at, secs(12));
    assert!(
        pair.client.closed_reason().unwrap().contains("no handshake within 12s"),
        "{:?}",
        pair.client.closed_reason()
    );
    assert_eq!(pair.client.session.cancel(&RequestId::Number(0), None), Err(SendError::UnknownRequest(0.into())));
}

#[test]
fn initialize_cannot_be_cancelled() {
    let mut pair = Setup::Legacy(ProtocolVersion::V2025_06_18).pair(SimConfig::perfect(21));
    assert_eq!(pair.client.session.cancel(&RequestId::Number(0), Some("no")), Err(SendError::CannotCancelInitialize));
    pair.client.session.cancel_all(Some("all"));
    pair.connect();
    assert!(pair.client.sent_notifications("notifications/cancelled").is_empty());
}

#[test]
fn auto_falls_back_when_the_probe_answer_is_malformed() {
    let mut pair = Setup::AutoBoth.pair(SimConfig::perfect(22));
    // The real answer is lost; a malformed one arrives in its place.
    pair.set_tap(Dir::ToClient, |f| {
        let answer_to_probe = talaria_core::jsonrpc::Message::from_slice(f)
            .is_ok_and(|m| m.method().is_none() && m.id() == Some(&RequestId::Number(0)));
        if answer_to_probe {
            Fate::Drop
        } else {
            Fate::Deliver
        }
    });
    pair.inject(Dir::ToClient, br#"{"jsonrpc":"2.0","id":0,"result":{"supportedVersions":"all of them"}}"#);
    pair.run_until_quiet();
    assert_eq!(pair.client.sent_methods(), ["server/discover", "initialize"]);
    assert_eq!(pair.client.ready().map(|r| r.version), Some(ProtocolVersion::V2025_11_25));
}
