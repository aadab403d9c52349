#!/usr/bin/env bash
# The HTTP server's soak, in release: the blocking server, the smol server and the axum mount
# on tokio, each a child process under moderate load at once; resident memory every 30 s, and
# a verdict per host (flat after the warm-up, or GREW: exit 1). See examples/src/bin/soak.rs.
#
#   scripts/soak.sh                        # 30 minutes
#   scripts/soak.sh --seconds 300 --every 10 --clients 4
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q -p talaria-examples --bin soak --bin everything-server --bin axum-server
exec target/release/soak "$@"
