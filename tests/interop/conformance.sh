#!/usr/bin/env bash
# Runs the official MCP conformance suite (@modelcontextprotocol/conformance, pinned in
# tests/interop/node/package-lock.json) against Talaria:
#
#   - the server scenarios (`--suite all`) against `conformance-server` over Streamable HTTP,
#     once with the blocking server and once with the smol one (`--runtime smol`),
#   - every client scenario, the authorization ones (`auth/*`) included, with `conformance-client`
#     (the others a second time with its smol HTTP client, as `client-smol`),
#
# once per spec version the suite has scenarios for. Prints one line per scenario and version,
#
#   PASS conformance/server/2025-11-25/tools-list
#   FAIL conformance/client/2025-11-25/sse-retry: client-sse-retry-timing
#
# (a scenario passes only with no FAILURE and no WARNING check), then `N passed, N failed`;
# exits 1 if anything failed, 2 if the suite could not be installed or the binaries built.
#
# Usage: bash tests/interop/conformance.sh
# Needs node and npm (Node 20 works through tests/interop/node/preload.mjs). The suite is
# installed once into .cache/interop/conformance; results go to
# .cache/interop/conformance-results (override with CONFORMANCE_RESULTS).
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
NODE_FILES=$ROOT/tests/interop/node
CACHE=$ROOT/.cache/interop/conformance
RESULTS=${CONFORMANCE_RESULTS:-$ROOT/.cache/interop/conformance-results}
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
SERVER_BIN=$TARGET/debug/conformance-server
CLIENT_BIN=$TARGET/debug/conformance-client
SUITE=$CACHE/node_modules/@modelcontextprotocol/conformance/dist/index.js

# Time limits, in seconds.
INSTALL_TIMEOUT=300
BUILD_TIMEOUT=1200
SERVER_SUITE_TIMEOUT=600
CLIENT_SCENARIO_TIMEOUT=120
LIST_TIMEOUT=60

log() { echo "conformance: $*" >&2; }

# --- install the suite (idempotent: the stamp holds the lock file's hash) ---------------------
install_suite() {
    local want have=""
    want=$(sha256sum "$NODE_FILES/package-lock.json" | cut -d' ' -f1)
    [[ -f $CACHE/.stamp ]] && have=$(cat "$CACHE/.stamp")
    if [[ $want == "$have" && -f $SUITE ]]; then
        return 0
    fi
    log "installing the conformance suite into $CACHE"
    mkdir -p "$CACHE"
    cp "$NODE_FILES/package.json" "$NODE_FILES/package-lock.json" "$CACHE/"
    (cd "$CACHE" && timeout "$INSTALL_TIMEOUT" npm ci --no-audit --no-fund --loglevel=error) >&2 || return 1
    echo "$want" >"$CACHE/.stamp"
}

# The suite imports `globSync` from fs, which Node gained in 22: shim it on older Nodes.
NODE_FLAGS=()
node_major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
if ((node_major < 22)); then
    NODE_FLAGS=(--import "$NODE_FILES/preload.mjs")
fi

# Runs the suite under a time limit. `timeout` puts it in a process group of its own and
# signals the whole group, so a client the suite spawned goes too; SUITE_PID lets the traps
# below stop it early.
SUITE_PID=""
suite() {
    local limit=$1 code
    shift
    timeout "$limit" node "${NODE_FLAGS[@]}" "$SUITE" "$@" &
    SUITE_PID=$!
    wait "$SUITE_PID"
    code=$?
    SUITE_PID=""
    return "$code"
}

# --- processes we start, killed on exit ----------------------------------------------------------
SERVER_PID=""
stop_server() {
    if [[ -n $SERVER_PID ]]; then
        kill "$SERVER_PID" 2>/dev/null
        wait "$SERVER_PID" 2>/dev/null
        SERVER_PID=""
    fi
}
cleanup() {
    [[ -n $SUITE_PID ]] && kill "$SUITE_PID" 2>/dev/null
    stop_server
}
trap cleanup EXIT
trap 'cleanup; exit 130' INT TERM

# Starts conformance-server (RUNTIME blocking or smol) on a free loopback port; sets SERVER_URL.
start_server() {
    local logfile=$1 runtime=$2 url=""
    "$SERVER_BIN" --port 0 --runtime "$runtime" 2>"$logfile" &
    SERVER_PID=$!
    for _ in $(seq 100); do
        url=$(sed -n 's/^conformance-server: listening on \(http:[^ ]*\)$/\1/p' "$logfile")
        [[ -n $url ]] && break
        kill -0 "$SERVER_PID" 2>/dev/null || break
        sleep 0.1
    done
    if [[ -z $url ]]; then
        log "conformance-server did not start:"
        cat "$logfile" >&2
        stop_server
        return 1
    fi
    SERVER_URL=$url
}

# Scenario names from `list` output lines such as `  - tools-list [2025-06-18,2025-11-25]`.
scenario_names() {
    sed -n 's/^  - \([^ ]*\).*$/\1/p'
}

# The dated spec versions the listed scenarios are tagged with.
spec_versions() {
    sed -n 's/^  - [^ ]* \[\(.*\)\]$/\1/p' | tr ',' '\n' | grep -E '^[0-9]{4}-[0-9]{2}-[0-9]{2}$' | sort -u
}

# The version tags of the listed client scenarios: the dated ones, then `draft` and `extension`.
client_versions() {
    sed -n 's/^  - [^ ]* \[\(.*\)\]$/\1/p' | tr ',' '\n' | grep -E '^([0-9]{4}-[0-9]{2}-[0-9]{2}|draft|extension)$' | sort -u
}

# --- main --------------------------------------------------------------------------------------
command -v node >/dev/null && command -v npm >/dev/null || { log "needs node and npm"; exit 2; }
install_suite || { log "could not install the suite"; exit 2; }
log "building conformance-server and conformance-client"
(cd "$ROOT" && timeout "$BUILD_TIMEOUT" cargo build --quiet -p talaria-examples \
    --bin conformance-server --bin conformance-client) || { log "build failed"; exit 2; }

rm -rf "$RESULTS"
mkdir -p "$RESULTS"
SUMMARY=$RESULTS/summary.txt
: >"$SUMMARY"

# Server scenarios, all of them, once per version and per server flavour (the blocking server
# as `server`, the smol one as `server-smol`); a fresh server for each.
for version in $(suite "$LIST_TIMEOUT" list --server | spec_versions); do
    mapfile -t scenarios < <(suite "$LIST_TIMEOUT" list --server --spec-version "$version" | scenario_names)
    ((${#scenarios[@]})) || continue
    for runtime in blocking smol; do
        kind=server
        [[ $runtime == smol ]] && kind=server-smol
        out=$RESULTS/$kind/$version
        mkdir -p "$out"
        start_server "$out/server.log" "$runtime" ||
            { echo "FAIL conformance/$kind/$version/*: server did not start" | tee -a "$SUMMARY"; continue; }
        log "server suite $version (${#scenarios[@]} scenarios) against $SERVER_URL ($runtime)"
        suite "$SERVER_SUITE_TIMEOUT" server --url "$SERVER_URL" --suite all \
            --spec-version "$version" -o "$out" >"$out/suite.log" 2>&1
        stop_server
        node "$NODE_FILES/summarize.mjs" "$kind" "$version" "$out" - "${scenarios[@]}" | tee -a "$SUMMARY"
    done
done

# Client scenarios, the authorization ones (`auth/*`) included, one at a time, once per
# version tag (dated revisions, `draft`, and `extension` for the official extensions).
for version in $(suite "$LIST_TIMEOUT" list --client | client_versions); do
    mapfile -t scenarios < <(suite "$LIST_TIMEOUT" list --client --spec-version "$version" | scenario_names)
    for scenario in "${scenarios[@]}"; do
        out=$RESULTS/client/$version
        mkdir -p "$out"
        log "client scenario $version/$scenario"
        suite "$CLIENT_SCENARIO_TIMEOUT" client --command "$CLIENT_BIN" \
            --scenario "$scenario" --spec-version "$version" -o "$out" >"$out/${scenario//\//_}.log" 2>&1
        code=$?
        node "$NODE_FILES/summarize.mjs" client "$version" "$out" "$code" "$scenario" | tee -a "$SUMMARY"
        # The smol HTTP client too, as `client-smol` (authorization runs over the blocking one).
        [[ $scenario == auth/* ]] && continue
        out=$RESULTS/client-smol/$version
        mkdir -p "$out"
        log "client scenario $version/$scenario (smol)"
        TALARIA_CLIENT_RUNTIME=smol suite "$CLIENT_SCENARIO_TIMEOUT" client --command "$CLIENT_BIN" \
            --scenario "$scenario" --spec-version "$version" -o "$out" >"$out/${scenario//\//_}.log" 2>&1
        code=$?
        node "$NODE_FILES/summarize.mjs" client-smol "$version" "$out" "$code" "$scenario" | tee -a "$SUMMARY"
    done
done

passed=$(grep -c '^PASS ' "$SUMMARY")
failed=$(grep -c '^FAIL ' "$SUMMARY")
echo "$passed passed, $failed failed"
log "results in $RESULTS"
((failed == 0 && passed > 0))
