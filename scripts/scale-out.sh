#!/usr/bin/env bash
# The long scale-out run: three everything-server processes behind nginx sharing sessions
# through Redis, with a seeded killer sending kill -9 to a random process KILLS times while
# CLIENTS legacy clients go on (examples/tests/scale_out.rs; CI runs a short version).
#
#   scripts/scale-out.sh [KILLS] [CLIENTS] [SEED]     # default 40 kills, 8 clients, seed 7
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/redis.sh --install >/dev/null
bash scripts/nginx.sh --install >/dev/null
TALARIA_SCALE_KILLS="${1:-40}" TALARIA_SCALE_CLIENTS="${2:-8}" TALARIA_SCALE_SEED="${3:-7}" \
  cargo test --release -p talaria-examples --test scale_out -- --nocapture
