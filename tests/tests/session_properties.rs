//! Properties of the session over random interleavings, through the two-peer simulator with a
//! perfect and a reordering pipe: random sequences of requests, answers, errors, silence,
//! progress, time, cancels, closes and kills, under every [`Setup`].
//!
//! Checked after every operation (by the simulator, which panics at once): every transmitted
//! payload decodes as JSON-RPC, nothing is output after `Event::Closed`, no request ends twice,
//! no id is sent twice, and after `handle_timeout(t)` the next `poll_timeout()` is `None` or
//! later than `t`. Checked here: every sent request ends exactly once; ids are never reused; a
//! peer-cancelled request's answer is never transmitted; no inbound id is answered twice;
//! buffered bytes stay within the frame limit; `Event::Closed` is last on both sides.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use proptest::prelude::*;
use serde_json::json;
use talaria_core::jsonrpc::{ErrorObject, Message, Packet, RequestId};
use talaria_core::session::{RequestOptions, SendError};
use talaria_tests::sim::{Pair, Setup, SimConfig};

#[derive(Debug, Clone, Copy)]
enum How {
    Ok,
    Err,
    Progress,
    Ignore,
}

#[derive(Debug, Clone)]
enum Op {
    /// The client sends a request.
    Send { timeout_s: u64, progress: bool },
    /// The server sends a ping (legacy era; refused in the stateless era).
    ServerPing,
    /// The server's application handles one waiting request.
    Answer { pick: usize, how: How },
    /// Time passes, every event at its own instant.
    RunFor { ms: u64 },
    /// Time jumps (a late adapter), then one spurious `handle_timeout` on each side.
    Jump { ms: u64 },
    /// The client cancels one of its requests.
    Cancel { pick: usize },
    /// The client cancels everything.
    CancelAll,
    /// One side closes.
    Close { client: bool },
    /// The connection dies.
    Kill,
}

fn op() -> impl Strategy<Value = Op> {
    let how = prop_oneof![Just(How::Ok), Just(How::Err), Just(How::Progress), Just(How::Ignore)];
    prop_oneof![
        8 => (1..40u64, any::<bool>()).prop_map(|(timeout_s, progress)| Op::Send { timeout_s, progress }),
        1 => Just(Op::ServerPing),
        8 => (any::<usize>(), how).prop_map(|(pick, how)| Op::Answer { pick, how }),
        5 => (0..3_000u64).prop_map(|ms| Op::RunFor { ms }),
        2 => (0..20_000u64).prop_map(|ms| Op::Jump { ms }),
        2 => any::<usize>().prop_map(|pick| Op::Cancel { pick }),
        1 => Just(Op::CancelAll),
        1 => any::<bool>().prop_map(|client| Op::Close { client }),
        1 => Just(Op::Kill),
    ]
}

fn setup() -> impl Strategy<Value = Setup> {
    (0..Setup::ALL.len()).prop_map(|i| Setup::ALL[i])
}

/// Runs one interleaving and checks the properties.
fn check(setup: Setup, reorder: bool, seed: u64, ops: &[Op]) -> Result<(), TestCaseError> {
    let sim = if reorder { SimConfig::reordering(seed) } else { SimConfig::perfect(seed) };
    let sim = SimConfig { seed, ..sim }; // proptest's seed, not TALARIA_SIM_SEED
    let mut pair = setup.pair(sim);
    let max_frame = setup.client_config().session.max_frame_len;
    let mut sent: Vec<RequestId> = Vec::new();
    let mut server_sent: Vec<RequestId> = Vec::new();
    let mut progress = 0.0;

    for op in ops {
        match op {
            Op::Send { timeout_s, progress } => {
                let mut options = RequestOptions::default().with_timeout(Duration::from_secs(*timeout_s));
                if *progress {
                    options = options.with_progress();
                }
                match pair.client_request("test/op", Some(json!({"k": sent.len()})), options) {
                    Ok(id) => {
                        prop_assert!(!sent.contains(&id), "id {} reused", id);
                        sent.push(id);
                    }
                    Err(e) => prop_assert_eq!(e, SendError::Closed),
                }
            }
            Op::ServerPing => {
                if let Ok(id) = pair.server_request("ping", None, RequestOptions::default()) {
                    prop_assert!(!server_sent.contains(&id));
                    server_sent.push(id);
                }
            }
            Op::Answer { pick, how } => answer(&mut pair, *pick, *how, &mut progress)?,
            Op::RunFor { ms } => pair.run_for(Duration::from_millis(*ms)),
            Op::Jump { ms } => {
                pair.advance(Duration::from_millis(*ms));
                let now = pair.now();
                pair.client.session.handle_timeout(now);
                pair.server.session.handle_timeout(now);
                for next in [pair.client.session.poll_timeout(), pair.server.session.poll_timeout()] {
                    prop_assert!(next.is_none_or(|t| t > now), "busy loop: deadline {:?} not after {:?}", next, now);
                }
            }
            Op::Cancel { pick } => {
                if !sent.is_empty() {
                    let id = sent[pick % sent.len()].clone();
                    let ended = pair.client.response_count(&id) > 0;
                    let got = pair.client.session.cancel(&id, Some("prop"));
                    if ended {
                        prop_assert_eq!(got, Err(SendError::UnknownRequest(id)));
                    } else {
                        prop_assert_eq!(got, Ok(()));
                    }
                }
            }
            Op::CancelAll => pair.client.session.cancel_all(None),
            Op::Close { client: true } => pair.client.session.close(),
            Op::Close { client: false } => pair.server.session.close(),
            Op::Kill => pair.kill(),
        }
        pair.settle();
        prop_assert!(pair.client.session.buffered_bytes() <= max_frame);
        prop_assert!(pair.server.session.buffered_bytes() <= max_frame);
    }

    // Wind down: whatever is still pending ends now, as closed.
    pair.run_until_quiet();
    pair.client.session.close();
    pair.server.session.close();
    pair.run_until_quiet();

    for id in &sent {
        prop_assert_eq!(
            pair.client.response_count(id),
            1,
            "client request {} ended {} times",
            id,
            pair.client.response_count(id)
        );
    }
    for id in &server_sent {
        prop_assert_eq!(pair.server.response_count(id), 1, "server request {}", id);
    }
    prop_assert_eq!(pair.client.responses().count(), sent.len(), "a response for a request never sent");
    prop_assert!(pair.client.closed_last() && pair.server.closed_last());
    prop_assert!(pair.client.session.poll_output().is_none() && pair.server.session.poll_output().is_none());
    prop_assert_eq!(pair.client.session.poll_timeout(), None);
    for (name, wire) in [("client", &pair.client.wire), ("server", &pair.server.wire)] {
        let mut answered: BTreeMap<RequestId, usize> = BTreeMap::new();
        for s in wire {
            let packet = Packet::from_slice(&s.payload);
            prop_assert!(packet.is_ok(), "{} sent invalid JSON-RPC: {}", name, String::from_utf8_lossy(&s.payload));
            if let Ok(Packet::Single(Message::Response(r))) = &packet {
                *answered.entry(r.id.clone()).or_default() += 1;
            }
            if let Ok(Packet::Single(Message::Error(e))) = &packet {
                if let Some(id) = &e.id {
                    *answered.entry(id.clone()).or_default() += 1;
                }
            }
        }
        for (id, n) in answered {
            prop_assert!(n <= 1, "{} answered {} {} times", name, id, n);
        }
    }
    Ok(())
}

/// The server's application handles one waiting request.
fn answer(pair: &mut Pair, pick: usize, how: How, progress: &mut f64) -> Result<(), TestCaseError> {
    if pair.server.requests.is_empty() {
        return Ok(());
    }
    let i = pick % pair.server.requests.len();
    let id = pair.server.requests[i].reply.id().clone();
    let cancelled = pair.server.peer_cancellations().any(|(c, _)| *c == id);
    let before = pair.server.wire.len();
    match how {
        How::Ok | How::Err => {
            let req = pair.server.requests.remove(i).unwrap();
            let result = match how {
                How::Ok => Ok(json!({"ok": true})),
                _ => Err(ErrorObject::internal("refused")),
            };
            prop_assert_eq!(pair.server.respond(req, result), Ok(()));
            pair.settle();
            if cancelled {
                prop_assert_eq!(pair.server.wire.len(), before, "answer to a peer-cancelled request {} sent", id);
            }
        }
        How::Progress => {
            *progress += 1.0;
            let got = pair.server.session.progress(&pair.server.requests[i].reply, *progress, None, None);
            prop_assert!(matches!(got, Ok(()) | Err(SendError::NoProgressToken(_))), "{:?}", got);
            pair.settle();
            if cancelled {
                prop_assert_eq!(pair.server.wire.len(), before, "progress on a peer-cancelled request {} sent", id);
            }
        }
        How::Ignore => {}
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn random_interleavings_keep_the_session_invariants(
        setup in setup(),
        reorder in any::<bool>(),
        seed in any::<u64>(),
        ops in prop::collection::vec(op(), 1..60),
    ) {
        check(setup, reorder, seed, &ops)?;
    }
}

#[test]
fn every_setup_survives_a_long_fixed_interleaving() {
    // A deterministic long run per setup, so that a plain `cargo test` always covers each.
    let mut ids = BTreeSet::new();
    for (i, setup) in Setup::ALL.into_iter().enumerate() {
        let mut ops = Vec::new();
        for k in 0..200u64 {
            ops.push(match k % 9 {
                0 | 4 => Op::Send { timeout_s: 1 + k % 30, progress: k % 2 == 0 },
                1 | 5 => Op::Answer { pick: k as usize, how: How::Ok },
                2 => Op::Answer { pick: k as usize, how: How::Progress },
                3 => Op::RunFor { ms: 700 },
                6 => Op::Cancel { pick: k as usize },
                7 => Op::Answer { pick: k as usize, how: How::Err },
                _ => Op::Jump { ms: 2_500 },
            });
        }
        ops.push(Op::Close { client: i % 2 == 0 });
        check(setup, i % 2 == 1, 77 + i as u64, &ops).unwrap();
        ids.insert(setup.to_string());
    }
    assert_eq!(ids.len(), Setup::ALL.len());
}
