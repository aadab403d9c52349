#!/usr/bin/env bash
# The long version of examples/tests/http_load.rs, in release: 1,000 sessions x 100 calls over
# Streamable HTTP against the blocking server, the smol server and the endpoint mounted in axum
# on tokio, every answer checked by its id. Prints calls/s per host.
#
#   scripts/load.sh                               # the defaults below
#   TALARIA_LOAD_SESSIONS=200 scripts/load.sh     # anything set in the environment wins
#   scripts/load.sh smol                          # arguments filter the tests, as for cargo test
set -euo pipefail
cd "$(dirname "$0")/.."
export TALARIA_LOAD_SESSIONS="${TALARIA_LOAD_SESSIONS:-1000}"
export TALARIA_LOAD_CALLS="${TALARIA_LOAD_CALLS:-100}"
export TALARIA_LOAD_THREADS="${TALARIA_LOAD_THREADS:-64}"
echo "== load: $TALARIA_LOAD_SESSIONS sessions x $TALARIA_LOAD_CALLS calls, $TALARIA_LOAD_THREADS client threads, per host"
start=$SECONDS
cargo test --release -p talaria-examples --test http_load -- --nocapture --test-threads 1 "$@"
echo "== load: passed in $((SECONDS - start)) s"
