//! Scenarios: requests in flight, through the two-peer simulator: correlation, exactly-once
//! completion, timeouts, progress, cancellation, ping and duplicate ids, in both eras.
//!
//! `TALARIA_SIM_SEED=<n>` replays a failing seed.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::time::Duration;

use serde_json::{json, Value};
use talaria_core::jsonrpc::{ErrorCode, ErrorObject, Message, RequestId};
use talaria_core::session::{CallError, LocalError, ProtocolError, RequestOptions, SendError};
use talaria_core::version::ProtocolVersion;
use talaria_tests::sim::{params_of, request_frame, stateless_meta, Dir, Fate, Pair, Rng, Setup, SimConfig};

const fn secs(n: u64) -> Duration {
    Duration::from_secs(n)
}

const fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn echo_n(req: &talaria_core::session::IncomingRequest) -> Result<Value, ErrorObject> {
    Ok(json!({"n": params_of(req)["n"]}))
}

/// A request frame from the client as this setup's client would shape it (`_meta` when
/// stateless).
fn client_frame(setup: Setup, id: Value, method: &str, params: Value) -> Vec<u8> {
    let mut params = params;
    if setup.is_stateless() {
        params["_meta"] = stateless_meta("2026-07-28");
    }
    request_frame(id, method, Some(params))
}

fn is_timed_out(e: Option<&CallError>) -> bool {
    matches!(e, Some(CallError::Local(LocalError::TimedOut)))
}

#[test]
fn ping_is_answered_by_the_session_both_ways_in_the_legacy_era() {
    for setup in Setup::ALL {
        let mut pair = setup.connected(SimConfig::chaos(1));
        if setup.is_stateless() {
            let err = pair.client_request("ping", None, RequestOptions::default()).unwrap_err();
            assert_eq!(
                err,
                SendError::NotInRevision { method: "ping".into(), version: ProtocolVersion::V2026_07_28 },
                "{setup}"
            );
            continue;
        }
        let from_client = pair.client_request("ping", None, RequestOptions::default()).unwrap();
        let from_server = pair.server_request("ping", None, RequestOptions::default()).unwrap();
        pair.run_until_quiet();
        assert_eq!(pair.client.result(&from_client), Some(json!({})), "{setup}");
        assert_eq!(pair.server.result(&from_server), Some(json!({})), "{setup}");
        assert!(pair.client.requests.is_empty() && pair.server.requests.is_empty(), "{setup}: no app involvement");
    }
}

#[test]
fn many_requests_in_flight_are_correlated_over_a_reordering_pipe() {
    for (i, setup) in Setup::ALL.into_iter().enumerate() {
        for seed in 0..3 {
            let sim = SimConfig { chunk: 0.3, ..SimConfig::reordering(100 * i as u64 + seed) };
            let mut rng = Rng::new(sim.seed);
            let mut pair = setup.connected(sim);
            let ids: Vec<RequestId> = (0..150)
                .map(|n| pair.client_request("test/echo", Some(json!({"n": n})), RequestOptions::default()).unwrap())
                .collect();
            let distinct: std::collections::BTreeSet<_> = ids.iter().collect();
            assert_eq!(distinct.len(), ids.len(), "{setup}: ids are never reused");
            pair.run_until_quiet();
            assert_eq!(pair.server.requests.len(), 150, "{setup}");
            // The server answers in a random order, a few at a time.
            while !pair.server.requests.is_empty() {
                for _ in 0..=rng.below(5) {
                    let k = rng.below(pair.server.requests.len() as u64) as usize;
                    if let Some(req) = pair.server.requests.remove(k) {
                        let answer = echo_n(&req);
                        pair.server.respond(req, answer).unwrap();
                    }
                }
                pair.run_for(ms(rng.below(5)));
            }
            pair.run_until_quiet();
            for (n, id) in ids.iter().enumerate() {
                assert_eq!(pair.client.result(id).unwrap()["n"], n, "{setup}: {id}");
                assert_eq!(pair.client.response_count(id), 1, "{setup}");
            }
            assert_eq!(pair.client.session.pending_requests(), 0);
        }
    }
}

#[test]
fn every_request_ends_exactly_once_under_chaos_and_duplicates() {
    let mut answered = 0;
    for seed in 0..28u64 {
        let setup = Setup::ALL[seed as usize % Setup::ALL.len()];
        let sim = SimConfig { duplicate: 0.15, ..SimConfig::chaos(2000 + seed) };
        let mut rng = Rng::new(sim.seed ^ 0xabc);
        // Duplicates can break the handshake itself (a duplicated `initialize` is refused, and
        // the refusal may overtake the result): requests made meanwhile must end all the same.
        let mut pair = setup.pair(sim);
        let mut ids = Vec::new();
        for _ in 0..60 {
            let timeout = secs(1 + rng.below(20));
            let options = RequestOptions::default().with_timeout(timeout);
            match pair.client_request("test/echo", Some(json!({"n": ids.len()})), options) {
                Ok(id) => ids.push(id),
                Err(e) => assert_eq!(e, SendError::Closed, "{setup}"),
            }
            pair.run_for(ms(rng.below(400)));
            match rng.below(6) {
                0 => {
                    let _ = pair.server.answer_all(echo_n);
                }
                1 => {
                    let _ = pair.server.answer_all(|_| Err(ErrorObject::internal("no")));
                }
                2 => {
                    if let Some(victim) = ids.get(rng.below(ids.len() as u64) as usize) {
                        let _ = pair.client.session.cancel(victim, Some("changed my mind"));
                    }
                }
                _ => {}
            }
        }
        pair.run_for(secs(30));
        let _ = pair.server.answer_all(echo_n);
        pair.run_for(secs(30));
        assert_eq!(pair.client.session.pending_requests(), 0, "{setup}");
        for id in &ids {
            assert_eq!(pair.client.response_count(id), 1, "{setup}: {id}");
        }
        assert!(!ids.is_empty());
        answered += pair.client.responses().filter(|(_, o, _)| o.is_ok()).count();
        pair.client.session.close();
        pair.run_until_quiet();
        assert!(pair.client.closed_last() && pair.server.closed_last(), "{setup}");
    }
    assert!(answered > 100, "too few requests got through to mean much: {answered}");
}

#[test]
fn a_timeout_fires_at_its_virtual_deadline_and_tells_the_peer() {
    for setup in Setup::ALL {
        let mut pair = setup.connected(SimConfig::perfect(3));
        let t0 = pair.elapsed();
        let id = pair.client_request("test/slow", None, RequestOptions::default().with_timeout(secs(10))).unwrap();
        let default = pair.client_request("test/slow", None, RequestOptions::default()).unwrap();
        assert_eq!(pair.client.session.poll_timeout().map(|t| pair.offset_of(t)), Some(t0 + secs(10)), "{setup}");

        pair.run_for(secs(10) - ms(1));
        assert_eq!(pair.client.outcome(&id).map(Result::is_ok), None, "{setup}: not yet");
        // Early and repeated calls do nothing.
        let now = pair.now();
        pair.client.session.handle_timeout(now);
        pair.client.session.handle_timeout(now - ms(500));
        assert!(!pair.step(), "{setup}: a spurious handle_timeout produced output");

        pair.run_for(ms(1));
        assert!(is_timed_out(pair.client.error(&id)), "{setup}: {:?}", pair.client.outcome(&id));
        assert_eq!(pair.client.ended_at(&id), Some(t0 + secs(10)), "{setup}");
        let cancelled = pair.client.sent_notifications("notifications/cancelled");
        assert_eq!(cancelled.len(), 1, "{setup}");
        assert_eq!(cancelled[0]["requestId"], json!(id), "{setup}");
        assert_eq!(cancelled[0]["reason"], "timeout", "{setup}");
        let seen: Vec<_> = pair.server.peer_cancellations().map(|(i, r)| (i.clone(), r.map(str::to_owned))).collect();
        assert_eq!(seen, [(id.clone(), Some("timeout".to_owned()))], "{setup}");

        // The server's handler finishes anyway: its answer is not sent.
        let req = pair.server.take_request("test/slow").unwrap();
        assert_eq!(req.reply.id(), &id);
        pair.server.respond(req, Ok(json!({"late": true}))).unwrap();
        pair.run_until_quiet();
        assert!(pair.server.sent_answers(&id).is_empty(), "{setup}");
        assert_eq!(pair.client.session.late_responses(), 0, "{setup}");

        // The default timeout is 30 s.
        pair.run_for(secs(20) - ms(1));
        assert!(pair.client.outcome(&default).is_none(), "{setup}");
        pair.run_for(ms(1));
        assert!(is_timed_out(pair.client.error(&default)), "{setup}");
        assert_eq!(pair.client.ended_at(&default), Some(t0 + secs(30)), "{setup}");
        assert_eq!(pair.client.session.poll_timeout(), None, "{setup}");
    }
}

#[test]
fn a_late_response_is_dropped_and_counted() {
    for setup in Setup::ALL {
        let mut pair = setup.connected(SimConfig::perfect(4));
        pair.set_tap(Dir::ToClient, |_| Fate::Delay(secs(5)));
        let id = pair.client_request("test/slow", None, RequestOptions::default().with_timeout(secs(10))).unwrap();
        pair.run_for(secs(9));
        let req = pair.server.take_request("test/slow").unwrap();
        pair.server.respond(req, Ok(json!({}))).unwrap();
        pair.run_for(secs(10));
        assert!(is_timed_out(pair.client.error(&id)), "{setup}");
        assert_eq!(pair.client.response_count(&id), 1, "{setup}");
        assert_eq!(pair.client.session.late_responses(), 1, "{setup}");
        assert_eq!(pair.client.misbehaviours().count(), 0, "{setup}: late is not foreign");
        assert_eq!(pair.server.sent_answers(&id).len(), 1, "{setup}");
    }
}

#[test]
fn a_response_to_an_id_never_sent_is_reported_as_misbehaviour() {
    for setup in Setup::ALL {
        let mut pair = setup.connected(SimConfig::perfect(5));
        pair.inject(Dir::ToClient, br#"{"jsonrpc":"2.0","id":4242,"result":{}}"#);
        pair.inject(Dir::ToClient, br#"{"jsonrpc":"2.0","id":"nope","result":{}}"#);
        pair.run_until_quiet();
        let m: Vec<_> = pair.client.misbehaviours().cloned().collect();
        assert_eq!(
            m,
            [
                ProtocolError::UnexpectedResponse { id: 4242.into() },
                ProtocolError::UnexpectedResponse { id: "nope".into() }
            ],
            "{setup}"
        );
        assert_eq!(pair.client.session.late_responses(), 0);
        assert!(!pair.client.is_closed());
    }
}

#[test]
fn progress_resets_the_timeout() {
    for setup in Setup::ALL {
        let mut pair = setup.connected(SimConfig::perfect(6));
        let t0 = pair.elapsed();
        let options = RequestOptions::default().with_timeout(secs(10)).with_max_time(secs(600)).with_progress();
        let id = pair.client_request("test/long", Some(json!({"n": 1})), options).unwrap();
        pair.run_until_quiet();
        let req = pair.server.take_request("test/long").unwrap();
        assert_eq!(req.progress_token.as_ref(), Some(&id), "{setup}: the token is the request id");
        assert_eq!(params_of(&req)["n"], 1, "{setup}: params survive the token");
        for k in 1..=4 {
            pair.run_for(secs(8));
            pair.server.session.progress(&req.reply, f64::from(k), Some(5.0), Some(format!("step {k}"))).unwrap();
        }
        pair.run_for(secs(8));
        assert!(pair.client.outcome(&id).is_none(), "{setup}: alive at 40 s thanks to progress");
        pair.server.respond(req, Ok(json!({"done": true}))).unwrap();
        pair.run_until_quiet();
        assert_eq!(pair.client.result(&id).unwrap()["done"], true, "{setup}");
        assert_eq!(pair.client.ended_at(&id), Some(t0 + secs(40)), "{setup}");
        let progress: Vec<_> = pair.client.progress().map(|(i, p, t, _, at)| (i.clone(), p, t, at)).collect();
        let expected: Vec<_> =
            (1..=4u32).map(|k| (id.clone(), f64::from(k), Some(5.0), t0 + secs(8 * u64::from(k)))).collect();
        assert_eq!(progress, expected, "{setup}");
    }
}

#[test]
fn progress_does_not_outlive_the_max_total_cap() {
    for setup in Setup::ALL {
        let mut pair = setup.connected(SimConfig::perfect(7));
        let t0 = pair.elapsed();
        let options = RequestOptions::default().with_timeout(secs(10)).with_max_time(secs(25)).with_progress();
        let id = pair.client_request("test/long", None, options).unwrap();
        pair.run_until_quiet();
        let req = pair.server.take_request("test/long").unwrap();
        for k in 1..=3 {
            pair.run_for(secs(8));
            pair.server.session.progress(&req.reply, f64::from(k), None, None).unwrap();
        }
        pair.run_for(secs(5));
        assert!(is_timed_out(pair.client.error(&id)), "{setup}: {:?}", pair.client.outcome(&id));
        assert_eq!(pair.client.ended_at(&id), Some(t0 + secs(25)), "{setup}");
        assert_eq!(pair.client.progress().count(), 3, "{setup}");
        assert_eq!(pair.client.sent_notifications("notifications/cancelled")[0]["reason"], "timeout");
    }
}

#[test]
fn without_reset_on_progress_the_timeout_stands() {
    for setup in Setup::ALL {
        let mut client = setup.client_config();
        client.session.reset_timeout_on_progress = false;
        let mut pair = Pair::new(client, setup.server_config(), SimConfig::perfect(8));
        pair.connect();
        let t0 = pair.elapsed();
        let id = pair
            .client_request("test/long", None, RequestOptions::default().with_timeout(secs(10)).with_progress())
            .unwrap();
        pair.run_for(secs(8));
        let req = pair.server.take_request("test/long").unwrap();
        pair.server.session.progress(&req.reply, 0.5, None, None).unwrap();
        pair.run_for(secs(5));
        assert!(is_timed_out(pair.client.error(&id)), "{setup}");
        assert_eq!(pair.client.ended_at(&id), Some(t0 + secs(10)), "{setup}");
        assert_eq!(pair.client.progress().count(), 1, "{setup}");
    }
}

#[test]
fn progress_is_checked_by_the_sender_and_ignored_when_unknown() {
    for setup in Setup::ALL {
        let mut pair = setup.connected(SimConfig::perfect(9));
        let with = pair.client_request("test/a", None, RequestOptions::default().with_progress()).unwrap();
        let without = pair.client_request("test/b", None, RequestOptions::default()).unwrap();
        pair.run_until_quiet();
        let a = pair.server.take_request("test/a").unwrap();
        let b = pair.server.take_request("test/b").unwrap();
        assert_eq!(pair.server.session.progress(&b.reply, 1.0, None, None), Err(SendError::NoProgressToken(without)));
        pair.server.session.progress(&a.reply, 2.0, None, None).unwrap();
        assert_eq!(
            pair.server.session.progress(&a.reply, 2.0, None, None),
            Err(SendError::ProgressNotIncreasing { previous: 2.0, next: 2.0 })
        );
        // Progress for a token nobody handed out is dropped without harm.
        pair.inject(
            Dir::ToClient,
            br#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":999,"progress":1}}"#,
        );
        pair.inject(
            Dir::ToClient,
            br#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"x","progress":1}}"#,
        );
        pair.run_until_quiet();
        let progress: Vec<_> = pair.client.progress().map(|(i, p, ..)| (i.clone(), p)).collect();
        assert_eq!(progress, [(with.clone(), 2.0)], "{setup}");
        assert_eq!(pair.client.misbehaviours().count(), 0, "{setup}");
        // Progress after the request ended goes nowhere.
        pair.client.session.cancel(&with, None).unwrap();
        pair.run_until_quiet();
        pair.server.session.progress(&a.reply, 3.0, None, None).unwrap();
        pair.run_until_quiet();
        assert_eq!(pair.server.sent_notifications("notifications/progress").len(), 1, "{setup}");
        assert_eq!(pair.client.progress().count(), 1, "{setup}");
        drop((a, b));
    }
}

#[test]
fn cancel_ends_the_request_and_the_server_drops_its_answer() {
    for (i, setup) in Setup::ALL.into_iter().enumerate() {
        let mut pair = setup.connected(SimConfig::chaos(60 + i as u64));
        let id = pair.client_request("test/slow", None, RequestOptions::default().with_progress()).unwrap();
        let other = pair.client_request("test/slow", None, RequestOptions::default()).unwrap();
        pair.run_until_quiet();
        let cancelled_at = pair.elapsed();
        pair.client.session.cancel(&id, Some("user")).unwrap();
        assert_eq!(pair.client.session.cancel(&id, None), Err(SendError::UnknownRequest(id.clone())));
        pair.run_until_quiet();

        assert_eq!(
            pair.client.error(&id),
            Some(&CallError::Local(LocalError::Cancelled { reason: Some("user".into()) })),
            "{setup}"
        );
        assert_eq!(pair.client.ended_at(&id), Some(cancelled_at), "{setup}: at once");
        assert_eq!(
            pair.client.sent_notifications("notifications/cancelled"),
            [json!({"requestId": id, "reason": "user"})],
            "{setup}"
        );
        let seen: Vec<_> = pair.server.peer_cancellations().map(|(i, r)| (i.clone(), r.map(str::to_owned))).collect();
        assert_eq!(seen, [(id.clone(), Some("user".to_owned()))], "{setup}");

        let pos = pair.server.requests.iter().position(|r| *r.reply.id() == id).unwrap();
        let req = pair.server.requests.remove(pos).unwrap();
        pair.server.session.progress(&req.reply, 1.0, None, None).unwrap();
        pair.server.respond(req, Ok(json!({"ignored": true}))).unwrap();
        pair.server.answer_all(|_| Ok(json!({"fine": true}))).unwrap();
        pair.run_until_quiet();
        assert!(pair.server.sent_answers(&id).is_empty(), "{setup}: no reply after cancel");
        assert!(pair.server.sent_notifications("notifications/progress").is_empty(), "{setup}");
        assert_eq!(pair.client.result(&other).unwrap()["fine"], true, "{setup}: others unaffected");
        assert_eq!(pair.client.session.late_responses(), 0, "{setup}");
    }
}

#[test]
fn a_cancel_that_crosses_the_response_counts_it_late() {
    for setup in Setup::ALL {
        let mut pair = setup.connected(SimConfig::perfect(10));
        let id = pair.client_request("test/slow", None, RequestOptions::default()).unwrap();
        pair.run_until_quiet();
        pair.server.answer_all(|_| Ok(json!({}))).unwrap();
        // The answer is on the wire when the client gives up.
        pair.client.session.cancel(&id, None).unwrap();
        pair.run_until_quiet();
        assert!(matches!(pair.client.error(&id), Some(CallError::Local(LocalError::Cancelled { reason: None }))));
        assert_eq!(pair.client.response_count(&id), 1, "{setup}");
        assert_eq!(pair.client.session.late_responses(), 1, "{setup}");
        assert!(pair.server.peer_cancellations().next().is_none(), "{setup}: nothing left to cancel");
    }
}

#[test]
fn cancel_all_ends_every_application_request() {
    for setup in Setup::ALL {
        let mut pair = setup.connected(SimConfig::perfect(11));
        let ids: Vec<_> =
            (0..5).map(|_| pair.client_request("test/slow", None, RequestOptions::default()).unwrap()).collect();
        pair.run_until_quiet();
        pair.client.session.cancel_all(Some("shutdown"));
        pair.run_until_quiet();
        for id in &ids {
            assert!(matches!(pair.client.error(id), Some(CallError::Local(LocalError::Cancelled { .. }))), "{setup}");
        }
        assert_eq!(pair.client.sent_notifications("notifications/cancelled").len(), 5, "{setup}");
        assert_eq!(pair.server.peer_cancellations().count(), 5, "{setup}");
        assert_eq!(pair.client.session.pending_requests(), 0, "{setup}");
    }
}

#[test]
fn cancelling_a_queued_request_sends_nothing() {
    for setup in Setup::ALL {
        let mut pair = setup.pair(SimConfig::perfect(12));
        let id = pair.client_request("test/slow", None, RequestOptions::default()).unwrap();
        let kept = pair.client_request("test/slow", None, RequestOptions::default()).unwrap();
        pair.client.session.cancel(&id, Some("early")).unwrap();
        pair.connect();
        assert!(matches!(pair.client.error(&id), Some(CallError::Local(LocalError::Cancelled { .. }))), "{setup}");
        let sent: Vec<_> = pair.client.sent_messages().iter().filter_map(|m| m.id().cloned()).collect();
        assert!(!sent.contains(&id), "{setup}: the cancelled request never went out");
        assert!(sent.contains(&kept), "{setup}");
        assert!(pair.client.sent_notifications("notifications/cancelled").is_empty(), "{setup}");
    }
}

#[test]
fn a_queued_request_times_out_without_being_sent() {
    for setup in Setup::ALL {
        let mut client = setup.client_config();
        client.discover_timeout = secs(60);
        client.session.request_timeout = secs(60);
        let mut pair = Pair::new(client, setup.server_config(), SimConfig::perfect(13));
        pair.set_tap(Dir::ToServer, |_| Fate::Drop);
        let id = pair.client_request("test/x", None, RequestOptions::default().with_timeout(secs(2))).unwrap();
        pair.run_for(secs(3));
        assert!(is_timed_out(pair.client.error(&id)), "{setup}");
        assert_eq!(pair.client.ended_at(&id), Some(secs(2)), "{setup}");
        assert!(pair.client.sent_notifications("notifications/cancelled").is_empty(), "{setup}: it never left");
        pair.clear_tap(Dir::ToServer);
    }
}

#[test]
fn a_duplicate_inbound_id_is_refused_while_in_flight() {
    for setup in Setup::ALL {
        let mut pair = setup.connected(SimConfig::perfect(14));
        let frame = client_frame(setup, json!("dup"), "test/echo", json!({"n": 1}));
        pair.inject(Dir::ToServer, &frame);
        pair.inject(Dir::ToServer, &frame);
        pair.run_until_quiet();
        let dup = RequestId::from("dup");
        assert_eq!(pair.server.requests.iter().filter(|r| *r.reply.id() == dup).count(), 1, "{setup}");
        let errors = pair.server.sent_errors(&dup);
        assert_eq!(errors.len(), 1, "{setup}");
        assert_eq!(errors[0].code, ErrorCode::INVALID_REQUEST, "{setup}");
        assert!(pair.server.misbehaviours().any(|m| *m == ProtocolError::DuplicateId { id: dup.clone() }), "{setup}");
        // Once answered, the id is free again.
        pair.server.answer_all(echo_n).unwrap();
        pair.inject(Dir::ToServer, &frame);
        pair.run_until_quiet();
        assert_eq!(pair.server.requests.len(), 1, "{setup}");
        assert_eq!(pair.server.sent_errors(&dup).len(), 1, "{setup}");

        // The same on the client, for a request from the server.
        let frame = request_frame(json!(7), "test/ask", Some(json!({})));
        pair.inject(Dir::ToClient, &frame);
        pair.inject(Dir::ToClient, &frame);
        pair.run_until_quiet();
        assert_eq!(pair.client.requests.len(), 1, "{setup}");
        let errors = pair.client.sent_errors(&7.into());
        assert_eq!(errors.iter().map(|e| e.code).collect::<Vec<_>>(), [ErrorCode::INVALID_REQUEST], "{setup}");
    }
}

#[test]
fn a_server_request_reaches_the_client_application_and_back() {
    for setup in Setup::ALL.into_iter().filter(|s| !s.is_stateless()) {
        let mut pair = setup.connected(SimConfig::chaos(15));
        let id = pair.server_request("test/ask", Some(json!({"n": 5})), RequestOptions::default()).unwrap();
        pair.run_until_quiet();
        pair.client.answer_all(echo_n).unwrap();
        pair.run_until_quiet();
        assert_eq!(pair.server.result(&id), Some(json!({"n": 5})), "{setup}");
    }
}

#[test]
fn too_many_pending_requests_is_a_local_error() {
    for setup in Setup::ALL {
        let mut client = setup.client_config();
        client.session.max_pending = 3;
        let mut pair = Pair::new(client, setup.server_config(), SimConfig::perfect(16));
        pair.connect();
        for _ in 0..3 {
            pair.client_request("test/x", None, RequestOptions::default()).unwrap();
        }
        assert_eq!(
            pair.client_request("test/x", None, RequestOptions::default()),
            Err(SendError::TooManyPending { limit: 3 }),
            "{setup}"
        );
        pair.run_until_quiet();
        pair.server.answer_all(|_| Ok(json!({}))).unwrap();
        pair.run_until_quiet();
        assert!(pair.client_request("test/x", None, RequestOptions::default()).is_ok(), "{setup}");
    }
}

#[test]
fn too_many_inbound_requests_are_refused() {
    for setup in Setup::ALL {
        let mut server = setup.server_config();
        server.session.max_inflight = 2;
        let mut pair = Pair::new(setup.client_config(), server, SimConfig::perfect(17));
        pair.connect();
        let ids: Vec<_> =
            (0..3).map(|_| pair.client_request("test/x", None, RequestOptions::default()).unwrap()).collect();
        pair.run_until_quiet();
        assert_eq!(pair.server.requests.len(), 2, "{setup}");
        let refused = pair.client.error(&ids[2]).and_then(CallError::remote).map(|e| e.code);
        assert_eq!(refused, Some(ErrorCode::INTERNAL_ERROR), "{setup}");
    }
}

#[test]
fn every_transmitted_payload_is_one_json_rpc_message_per_line() {
    // The simulator checks every payload as it goes; this drives a busy session and checks
    // the framing: the payload never contains the newline the stream framing adds.
    for setup in Setup::ALL {
        let mut pair = setup.connected(SimConfig::chaos(18));
        for n in 0..20 {
            let params = json!({"text": format!("line\nbreak {n}"), "n": n});
            pair.client_request("test/echo", Some(params), RequestOptions::default()).unwrap();
        }
        pair.run_until_quiet();
        pair.server.answer_all(|r| Ok(json!({"text": params_of(r)["text"]}))).unwrap();
        pair.run_until_quiet();
        for sent in pair.client.wire.iter().chain(&pair.server.wire) {
            assert!(!sent.payload.contains(&b'\n'), "{setup}");
            assert!(Message::from_slice(&sent.payload).is_ok(), "{setup}");
        }
        assert_eq!(pair.client.responses().filter(|(_, o, _)| o.is_ok()).count(), 20, "{setup}");
    }
}

#[test]
fn a_server_request_times_out_and_tells_the_client() {
    for setup in Setup::ALL.into_iter().filter(|s| !s.is_stateless()) {
        let mut pair = setup.connected(SimConfig::chaos(19));
        let t0 = pair.elapsed();
        let id = pair.server_request("test/ask", None, RequestOptions::default().with_timeout(secs(4))).unwrap();
        pair.run_for(secs(5));
        assert!(is_timed_out(pair.server.error(&id)), "{setup}");
        assert_eq!(pair.server.ended_at(&id), Some(t0 + secs(4)), "{setup}");
        let seen: Vec<_> = pair.client.peer_cancellations().map(|(i, r)| (i.clone(), r.map(str::to_owned))).collect();
        assert_eq!(seen, [(id.clone(), Some("timeout".to_owned()))], "{setup}");
        pair.client.answer_all(|_| Ok(json!({}))).unwrap();
        pair.run_until_quiet();
        assert!(pair.client.sent_answers(&id).is_empty(), "{setup}");
    }
}

#[test]
fn an_oversized_frame_is_refused_and_the_stream_goes_on() {
    for setup in Setup::ALL {
        let mut server = setup.server_config();
        server.session.max_frame_len = 2048;
        let sim = SimConfig { chunk: 1.0, max_chunk: 100, ..SimConfig::perfect(20) };
        let mut pair = Pair::new(setup.client_config(), server, sim);
        pair.connect();
        let big = pair
            .client_request(
                "test/big",
                Some(json!({"blob": "x".repeat(10_000)})),
                RequestOptions::default().with_timeout(secs(5)),
            )
            .unwrap();
        let small = pair.client_request("test/small", Some(json!({"n": 1})), RequestOptions::default()).unwrap();
        pair.run_until_quiet();
        assert!(
            pair.server.misbehaviours().any(|m| matches!(m, ProtocolError::FrameTooLong { max: 2048, .. })),
            "{setup}"
        );
        assert!(pair.server.session.buffered_bytes() <= 2048, "{setup}");
        let methods: Vec<_> = pair.server.requests.iter().map(|r| r.method.clone()).collect();
        assert_eq!(methods, ["test/small"], "{setup}");
        pair.server.answer_all(echo_n).unwrap();
        pair.run_for(secs(6));
        assert_eq!(pair.client.result(&small).unwrap()["n"], 1, "{setup}");
        assert!(is_timed_out(pair.client.error(&big)), "{setup}: nobody can answer a frame that was never read");
        assert!(!pair.server.is_closed(), "{setup}");
    }
}

#[test]
fn garbage_on_the_wire_is_answered_and_the_session_carries_on() {
    for setup in Setup::ALL {
        let mut pair = setup.connected(SimConfig::chaos(21));
        pair.inject(Dir::ToServer, b"this is not json");
        pair.inject(Dir::ToServer, br#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#);
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
        assert_eq!(refusals.len(), 2, "{setup}: {refusals:?}");
        assert!(refusals.contains(&ErrorCode::PARSE_ERROR), "{setup}: {refusals:?}");
        assert!(pair.server.misbehaviours().count() >= 2, "{setup}");
        // The client hears about errors with no id, and nothing breaks.
        assert!(pair.client.misbehaviours().count() >= 2, "{setup}");
        let id = pair.client_request("test/echo", Some(json!({"n": 9})), RequestOptions::default()).unwrap();
        pair.run_until_quiet();
        pair.server.answer_all(echo_n).unwrap();
        pair.run_until_quiet();
        assert_eq!(pair.client.result(&id).unwrap()["n"], 9, "{setup}");
    }
}

#[test]
fn a_last_line_without_newline_is_still_read_at_eof() {
    for setup in Setup::ALL.into_iter().filter(|s| !s.is_stateless()) {
        let mut pair = setup.connected(SimConfig::perfect(22));
        let now = pair.now();
        pair.client.session.handle_bytes(now, br#"{"jsonrpc":"2.0","id":"tail","method":"test/ask"}"#);
        assert!(pair.client.session.buffered_bytes() > 0, "{setup}");
        pair.client.session.handle_closed(now);
        pair.settle();
        let seen: Vec<_> = pair
            .client
            .seen()
            .filter_map(|s| match s {
                talaria_tests::sim::Seen::Request { id, .. } => Some(id.clone()),
                _ => None,
            })
            .collect();
        assert_eq!(seen, [RequestId::from("tail")], "{setup}");
        assert!(pair.client.closed_last(), "{setup}");
    }
}
