#!/usr/bin/env bash
# The long version of examples/tests/stress_e2e.rs, in release: every transport (stdio,
# WebSocket, in memory) from every host (blocking threads, smol, tokio) with 10,000 calls in
# flight at 2 KiB and at 64 KiB, twenty rounds each on a new connection, every answer checked
# once; then the executor hold times and the stalled-server tests. Prints throughput lines.
#
#   scripts/stress.sh                           # the defaults below
#   TALARIA_STRESS_ROUNDS=3 scripts/stress.sh   # anything set in the environment wins
#   scripts/stress.sh stdio_from_tokio          # arguments filter the tests, as for cargo test
#
# Knobs (see the test file's docs): TALARIA_STRESS_CALLS, TALARIA_STRESS_BIG_CALLS,
# TALARIA_STRESS_BIG_CALLS_OTHER, TALARIA_STRESS_ROUNDS, TALARIA_STRESS_TIMEOUT_SECS.
# 10,000 calls of 64 KiB in flight queue some 650 MiB on each side: have a few GiB free.
set -euo pipefail
cd "$(dirname "$0")/.."
export TALARIA_STRESS_CALLS="${TALARIA_STRESS_CALLS:-10000}"
export TALARIA_STRESS_BIG_CALLS="${TALARIA_STRESS_BIG_CALLS:-10000}"
export TALARIA_STRESS_BIG_CALLS_OTHER="${TALARIA_STRESS_BIG_CALLS_OTHER:-10000}"
export TALARIA_STRESS_ROUNDS="${TALARIA_STRESS_ROUNDS:-20}"
export TALARIA_STRESS_TIMEOUT_SECS="${TALARIA_STRESS_TIMEOUT_SECS:-300}"
echo "== stress: $TALARIA_STRESS_ROUNDS rounds; $TALARIA_STRESS_CALLS x 2 KiB;" \
  "$TALARIA_STRESS_BIG_CALLS x 64 KiB over stdio from threads, $TALARIA_STRESS_BIG_CALLS_OTHER x 64 KiB elsewhere"
start=$SECONDS
cargo test --release -p talaria-examples --test stress_e2e -- --nocapture "$@"
echo "== stress: passed in $((SECONDS - start)) s"
