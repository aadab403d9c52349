//! Replays the checked-in fuzz corpora through the fuzz target bodies, so every input a fuzzer
//! ever kept (and every crash it found, once added) stays a regression test under `cargo test`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::path::PathBuf;

fn corpus(target: &str) -> Vec<(String, Vec<u8>)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../fuzz/corpus").join(target);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    files.into_iter().map(|p| (p.display().to_string(), std::fs::read(&p).unwrap())).collect()
}

fn replay(target: &str, body: fn(&[u8])) {
    let inputs = corpus(target);
    assert!(inputs.len() >= 5, "the {target} corpus is missing");
    for (name, bytes) in inputs {
        let outcome = std::panic::catch_unwind(|| body(&bytes));
        assert!(outcome.is_ok(), "{target}: {name} broke an invariant");
        // Also byte by byte prefixes, as a stream would deliver them.
        for end in (0..bytes.len()).step_by(bytes.len() / 16 + 1) {
            body(&bytes[..end]);
        }
    }
}

#[test]
fn jsonrpc_decode_corpus() {
    replay("jsonrpc_decode", talaria_core::fuzzing::jsonrpc_decode);
}

#[test]
fn line_decode_corpus() {
    replay("line_decode", talaria_core::fuzzing::line_decode);
}

#[test]
fn sse_decode_corpus() {
    replay("sse_decode", talaria_core::fuzzing::sse_decode);
}

#[test]
fn typed_decode_corpus() {
    replay("typed_decode", talaria_core::fuzzing::typed_decode);
}

#[test]
fn session_ops_corpus() {
    replay("session_ops", talaria_core::fuzzing::session_ops);
}

#[test]
fn auth_inputs_corpus() {
    replay("auth_inputs", talaria_core::fuzzing::auth_inputs);
}

#[test]
fn http_requests_corpus() {
    replay("http_requests", talaria_core::fuzzing::http_requests);
}
