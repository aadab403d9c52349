#!/usr/bin/env bash
# Checks that `talaria` builds warning-free (clippy, -D warnings) in each feature combination
# CI checks: no features, each feature alone, the default set and all of them; and
# `talaria-core` with and without its features, and with no `std` on a target that has none;
# and `talaria-redis` with each runtime of its async store alone (the workspace's own builds
# turn both on), its tokio-only test run.
#
#   scripts/features.sh            # every combination
#   scripts/features.sh http tls   # only these features alone
set -euo pipefail
cd "$(dirname "$0")/.."
features=("$@")
if [ ${#features[@]} -eq 0 ]; then
  features=(stdio ws http smol tls tower jwt keyring schemars)
fi
check() {
  echo "==> $*"
  cargo clippy --quiet "$@" -- -D warnings
}
check -p talaria-core --no-default-features
# A target that has no `std` at all: proves no dependency of the core pulls it in.
rustup target add thumbv7em-none-eabihf > /dev/null 2>&1 || rustup target add thumbv7em-none-eabihf
check -p talaria-core --no-default-features --target thumbv7em-none-eabihf
# And run as such a host would: a session and a server on host-built timestamps.
check -p talaria-core --no-default-features --test no_std_host
cargo test --quiet -p talaria-core --no-default-features --test no_std_host
check -p talaria-core --all-features
check -p talaria --no-default-features
for feature in "${features[@]}"; do
  check -p talaria --no-default-features --features "$feature"
done
check -p talaria
check -p talaria --all-features
check -p talaria-cli --all-targets
check -p talaria-redis --all-targets --features smol
check -p talaria-redis --all-targets --features tokio
cargo test --quiet -p talaria-redis --features tokio --test async_sessions_tokio
echo "features: every combination builds without warnings"
