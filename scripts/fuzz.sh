#!/usr/bin/env bash
# Fuzz the parsers with cargo-fuzz (libFuzzer). Needs a nightly toolchain (rustup installs one)
# and cargo-fuzz, which this script installs if missing.
#
#   scripts/fuzz.sh                 # every target, 60 s each
#   scripts/fuzz.sh 600 line_decode # one target, 10 minutes
#
# The checked-in seeds in fuzz/corpus/<target>/ are read, new inputs go to the git-ignored
# .cache/fuzz-corpus/<target>/ (copy a useful one into fuzz/corpus to keep it: `cargo test`
# replays that folder); crashes land in fuzz/artifacts/<target>/.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(jsonrpc_decode line_decode sse_decode typed_decode session_ops auth_inputs http_requests)

if ! rustup toolchain list | grep -q '^nightly'; then
  rustup toolchain install nightly --profile minimal
fi
if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
  cargo install cargo-fuzz --locked
fi
for t in "${targets[@]}"; do
  echo "== fuzzing $t for ${seconds}s"
  mkdir -p ".cache/fuzz-corpus/$t"
  log=".cache/fuzz-$t.log"
  if ! cargo +nightly fuzz run "$t" ".cache/fuzz-corpus/$t" "fuzz/corpus/$t" -- \
    -max_total_time="$seconds" -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 >"$log" 2>&1; then
    cat "$log"
    echo "FAIL: $t (crash input in fuzz/artifacts/$t/)"
    exit 1
  fi
  grep -E '^(Done|stat::number_of_executed_units|stat::peak_rss_mb)|INFO: (seed corpus|-max_len)' "$log" || tail -n 5 "$log"
done
