#!/usr/bin/env bash
# The interop stage: the official MCP SDKs judge Talaria.
#
#   1. Talaria's everything-server driven by the official Python SDK client (handshake era,
#      and the stateless 2026-07-28 era) and the official TypeScript SDK client, over stdio,
#      Streamable HTTP and the legacy HTTP+SSE transport (and WebSocket for TypeScript);
#   2. Talaria's CLI (scripted, --json) driving servers built with the official Python and
#      TypeScript SDKs (tests/interop/{python/server.py,ts/server.mjs}) and the reference
#      @modelcontextprotocol/server-everything, over the same transports;
#   3. the MCP Inspector CLI listing and calling everything-server's tools;
#   4. tests/interop/conformance.sh (the official conformance suite), when present.
#
# Prints one line per check, `PASS <check>` or `FAIL <check>: <reason>`, then `N passed, N failed`;
# exits 1 if any check failed. Logs of every check and server: .cache/interop/logs/.
#
# Usage: bash tests/interop/run.sh
# Environment: INTEROP_SKIP_BUILD=1 (use the binaries already built),
#              INTEROP_SKIP_CONFORMANCE=1 (do not run conformance.sh),
#              INTEROP_CHECK_TIMEOUT (seconds per check, default 60).
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
HERE=$ROOT/tests/interop
CACHE=$ROOT/.cache/interop
LOGS=$CACHE/logs
BUILT=${CARGO_TARGET_DIR:-$ROOT/target}/debug
# Private copies of the binaries: other builds sharing the target directory may relink them mid-run.
BIN=$CACHE/bin
EVERYTHING=$BIN/everything-server
TALARIA=$BIN/talaria
PY=$CACHE/venv/bin/python
MODULES=$CACHE/npm/node_modules/@modelcontextprotocol
INSPECTOR=$MODULES/inspector-cli/build
SERVER_EVERYTHING=$MODULES/server-everything/dist/index.js
CHECK_TIMEOUT=${INTEROP_CHECK_TIMEOUT:-60}
CONFORMANCE_TIMEOUT=${INTEROP_CONFORMANCE_TIMEOUT:-1500}

log() { echo "interop: $*" >&2; }

PASSED=0
FAILED=0
KNOWN=0
# Checks known to fail, each with the reason (tests/interop/known-failures: `<check> # why`).
# A known failure prints `XFAIL` and does not fail the run; a known failure that passes does
# (the entry is stale: remove it).
KNOWN_FAILURES=$ROOT/tests/interop/known-failures
known_reason() {
    [[ -f $KNOWN_FAILURES ]] || return 1
    local line
    line=$(grep -v '^[[:space:]]*#' "$KNOWN_FAILURES" | grep -F -- "$1 " | head -n 1) || return 1
    [[ -n $line ]] || return 1
    echo "${line#*# }"
}
# One result line: counts it and prints it.
result() {
    local line=$1 name why
    name=${line#* }
    name=${name%%:*}
    case $line in
        PASS\ *)
            if why=$(known_reason "$name"); then
                FAILED=$((FAILED + 1))
                line="FAIL $name: passes now but is listed in tests/interop/known-failures; remove it"
            else
                PASSED=$((PASSED + 1))
            fi
            ;;
        FAIL\ *)
            if why=$(known_reason "$name"); then
                KNOWN=$((KNOWN + 1))
                line="XFAIL $name: $why"
            else
                FAILED=$((FAILED + 1))
            fi
            ;;
        *) return ;;
    esac
    echo "$line"
}

# The logs of failed checks (and of the server each ran against), whose tails the run prints at
# its end: CI keeps only what a run prints, so a failure seen there must carry its own evidence.
FAILED_LOGS=()
SERVER_LOG=""
show_failed_logs() {
    local logfile
    for logfile in "${FAILED_LOGS[@]}"; do
        [[ -s $logfile ]] || continue
        echo "--- last 40 lines of ${logfile#"$ROOT"/}"
        tail -n 40 "$logfile" | cut -c1-400
    done
}

# --- processes we start, all killed on exit ------------------------------------------------------
SERVER_PIDS=()
CHECK_PID=""
cleanup() {
    [[ -n $CHECK_PID ]] && kill "$CHECK_PID" 2>/dev/null
    local pid
    for pid in "${SERVER_PIDS[@]}"; do
        kill "$pid" 2>/dev/null
    done
    for pid in "${SERVER_PIDS[@]}"; do
        wait "$pid" 2>/dev/null
    done
    SERVER_PIDS=()
}
trap cleanup EXIT
trap 'cleanup; exit 130' INT TERM

# start_server NAME CMD...: starts a server in the background (its own port: each server binds
# port 0 and reports the port it got, so no two can collide) and waits until it prints
# `listening on ADDRESS`; sets SERVER_PID and SERVER_ADDR. Fails if it does not within 30s.
start_server() {
    local name=$1 addr="" pid
    shift
    local logfile=$LOGS/$name.server.log
    "$@" </dev/null >"$logfile" 2>&1 &
    pid=$!
    SERVER_PIDS+=("$pid")
    for _ in $(seq 300); do
        addr=$(sed -n 's/.*listening on \(\(http\|ws\):\/\/[^ ]*\|[0-9][0-9.]*:[0-9][0-9]*\).*/\1/p' "$logfile" | head -n 1)
        [[ -n $addr ]] && break
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    if [[ -z $addr ]]; then
        log "$name did not start; see $logfile"
        kill "$pid" 2>/dev/null
        return 1
    fi
    SERVER_PID=$pid
    SERVER_ADDR=$addr
    SERVER_LOG=$logfile
}

stop_server() {
    kill "$1" 2>/dev/null
    wait "$1" 2>/dev/null
    SERVER_LOG=""
}

# check NAME CMD...: runs a peer program under the time limit (`timeout` signals its whole
# process group, so stdio servers the peer spawned go too). The program prints PASS/FAIL lines;
# those are counted, the rest goes to the log. A program that dies or times out is a failure.
check() {
    local name=$1 code out
    shift
    local logfile=$LOGS/${name//\//_}.log
    out=$(mktemp)
    timeout -k 5 "$CHECK_TIMEOUT" "$@" </dev/null >"$out" 2>"$logfile" &
    CHECK_PID=$!
    wait "$CHECK_PID"
    code=$?
    CHECK_PID=""
    local lines=0 line failed_before=$FAILED
    while IFS= read -r line; do
        case $line in
            PASS\ * | FAIL\ *)
                result "$line"
                lines=$((lines + 1))
                ;;
            # A peer's note on something it got past (a retried connect, say): printed, and kept.
            NOTE\ *)
                echo "$line"
                echo "$line" >>"$logfile"
                ;;
            *) echo "$line" >>"$logfile" ;;
        esac
    done <"$out"
    rm -f "$out"
    if ((code == 124 || code == 137)); then
        result "FAIL $name: timed out after ${CHECK_TIMEOUT}s (log: ${logfile#"$ROOT"/})"
    elif ((code > 1 || (code != 0 && lines == 0))); then
        result "FAIL $name: exited with status $code: $(tail -n 1 "$logfile" | cut -c1-200) (log: ${logfile#"$ROOT"/})"
    elif ((lines == 0)); then
        result "FAIL $name: reported nothing (log: ${logfile#"$ROOT"/})"
    fi
    if ((FAILED > failed_before)); then
        FAILED_LOGS+=("$logfile")
        if [[ -n $SERVER_LOG ]]; then FAILED_LOGS+=("$SERVER_LOG"); fi
    fi
}

# fail NAME REASON: a check that could not even start.
fail() { result "FAIL $1: $2"; }

# --- build and install ---------------------------------------------------------------------------
START=$SECONDS
mkdir -p "$LOGS"
rm -f "$LOGS"/*.log

if [[ -z ${INTEROP_SKIP_BUILD:-} ]]; then
    log "building everything-server and the talaria CLI"
    if ! (cd "$ROOT" && cargo build -p talaria-examples --bins && cargo build -p talaria-cli --bin talaria) \
        >"$LOGS/build.log" 2>&1; then
        tail -n 30 "$LOGS/build.log" >&2
        fail build "cargo build failed (log: .cache/interop/logs/build.log)"
        echo "$PASSED passed, $FAILED failed"
        exit 1
    fi
fi
mkdir -p "$BIN"
if ! cp "$BUILT/everything-server" "$BUILT/talaria" "$BIN/" || ! "$TALARIA" --version >/dev/null 2>&1; then
    fail build "no everything-server or talaria in $BUILT"
    echo "$PASSED passed, $FAILED failed"
    exit 1
fi
log "installing the official SDKs (tests/interop/install.sh)"
if ! bash "$HERE/install.sh" >"$LOGS/install.log" 2>&1; then
    tail -n 30 "$LOGS/install.log" >&2
    fail install "tests/interop/install.sh failed (log: .cache/interop/logs/install.log)"
    echo "$PASSED passed, $FAILED failed"
    exit 1
fi

# everything-server's flags, from its usage line (it exits 2 on --help: not in a pipeline
# under pipefail). Always-SSE Streamable HTTP replies, if it has them:
EVERYTHING_USAGE=$("$EVERYTHING" --help 2>&1 || true)
REPLY_MODES=(default)
if [[ $EVERYTHING_USAGE == *--reply-mode* ]]; then
    REPLY_MODES=(default sse)
fi

# --- 1. our server, official clients -------------------------------------------------------------
log "official SDK clients against everything-server"
PY_CLIENT=("$PY" "$HERE/python/client.py")
TS_CLIENT=(node "$HERE/ts/client.mjs")

check python-client/stdio "${PY_CLIENT[@]}" --prefix python-client/stdio --mode legacy --stdio "$EVERYTHING" --transport stdio
check python-client-2026/stdio "${PY_CLIENT[@]}" --prefix python-client-2026/stdio --mode auto --stdio "$EVERYTHING" --transport stdio
check ts-client/stdio "${TS_CLIENT[@]}" --prefix ts-client/stdio --stdio "$EVERYTHING" --transport stdio

for mode in "${REPLY_MODES[@]}"; do
    flags=() suffix=""
    if [[ $mode != default ]]; then
        flags=(--reply-mode "$mode") suffix="-$mode-replies"
    fi
    # One server per client, so that a crash or a stuck session stays with the client that caused it.
    for client in python-client python-client-2026 ts-client; do
        if ! start_server "everything-http$suffix-$client" "$EVERYTHING" --transport http --host 127.0.0.1 --port 0 "${flags[@]}"; then
            fail "$client/http$suffix" "everything-server did not start"
            continue
        fi
        pid=$SERVER_PID url=$SERVER_ADDR
        case $client in
            python-client)
                check "$client/http$suffix" "${PY_CLIENT[@]}" --prefix "$client/http$suffix" --mode legacy --http "$url"
                [[ -z $suffix ]] && check "$client/sse" "${PY_CLIENT[@]}" --prefix "$client/sse" --mode legacy --sse "${url%/mcp}/sse"
                ;;
            python-client-2026)
                check "$client/http$suffix" "${PY_CLIENT[@]}" --prefix "$client/http$suffix" --mode auto --http "$url"
                ;;
            ts-client)
                check "$client/http$suffix" "${TS_CLIENT[@]}" --prefix "$client/http$suffix" --http "$url"
                [[ -z $suffix ]] && check "$client/sse" "${TS_CLIENT[@]}" --prefix "$client/sse" --sse "${url%/mcp}/sse"
                ;;
        esac
        stop_server "$pid"
    done
done

# The 2026-07-28 tasks extension, which no official SDK implements yet: a reference client
# written from the extension's spec drives our server over stdio and both HTTP flavours, and
# our CLI follows a task through a reference server written the same way.
log "tasks extension reference peers"
EXT_CLIENT=("$PY" "$HERE/python/ext_tasks_client.py")
check ext-tasks-reference/stdio "${EXT_CLIENT[@]}" --prefix ext-tasks-reference/stdio --stdio "$EVERYTHING" --transport stdio
for runtime in blocking smol; do
    if start_server "everything-http-ext-tasks-$runtime" "$EVERYTHING" --transport http --host 127.0.0.1 --port 0 --runtime "$runtime"; then
        pid=$SERVER_PID url=$SERVER_ADDR
        check "ext-tasks-reference/http-$runtime" "${EXT_CLIENT[@]}" --prefix "ext-tasks-reference/http-$runtime" --http "$url"
        stop_server "$pid"
    else
        fail "ext-tasks-reference/http-$runtime" "everything-server did not start"
    fi
done
check talaria-cli/ext-tasks-reference "$PY" "$HERE/python/ext_tasks_server.py" --talaria "$TALARIA" --prefix talaria-cli/ext-tasks-reference

# The smol flavour of the HTTP server (Streamable HTTP and the legacy transport beside it).
if [[ $EVERYTHING_USAGE == *--runtime* ]]; then
    for client in python-client python-client-2026 ts-client; do
        if ! start_server "everything-http-smol-$client" "$EVERYTHING" --transport http --host 127.0.0.1 --port 0 --runtime smol; then
            fail "$client/http-smol" "everything-server --runtime smol did not start"
            continue
        fi
        pid=$SERVER_PID url=$SERVER_ADDR
        case $client in
            python-client)
                check "$client/http-smol" "${PY_CLIENT[@]}" --prefix "$client/http-smol" --mode legacy --http "$url"
                check "$client/sse-smol" "${PY_CLIENT[@]}" --prefix "$client/sse-smol" --mode legacy --sse "${url%/mcp}/sse"
                ;;
            python-client-2026)
                check "$client/http-smol" "${PY_CLIENT[@]}" --prefix "$client/http-smol" --mode auto --http "$url"
                ;;
            ts-client)
                check "$client/http-smol" "${TS_CLIENT[@]}" --prefix "$client/http-smol" --http "$url"
                ;;
        esac
        stop_server "$pid"
    done
fi

# The TypeScript SDK's WebSocket client (it needs a global WebSocket: a flag before Node 22).
WS_FLAGS=()
(($(node -p 'process.versions.node.split(".")[0]') < 22)) && WS_FLAGS=(--experimental-websocket)
if start_server everything-ws "$EVERYTHING" --transport ws --host 127.0.0.1 --port 0; then
    pid=$SERVER_PID
    check ts-client/ws node "${WS_FLAGS[@]}" "$HERE/ts/client.mjs" --prefix ts-client/ws --ws "$SERVER_ADDR"
    stop_server "$pid"
else
    fail ts-client/ws "everything-server did not start"
fi

# --- 2. our client, official servers -------------------------------------------------------------
log "the talaria CLI against servers built with the official SDKs"
CLI=("$PY" "$HERE/python/cli_checks.py" --talaria "$TALARIA")
PY_SERVER=("$PY" "$HERE/python/server.py")
TS_SERVER=(node "$HERE/ts/server.mjs")

# cli_check NAME ARGS... -- CONNECTION...
cli_check() {
    local name=$1
    shift
    check "talaria-cli/$name" "${CLI[@]}" --prefix "talaria-cli/$name" "$@"
}

cli_check python-server/stdio --flavor sdk --protocol-version 2025-11-25 -- stdio -- "${PY_SERVER[@]}"
cli_check python-server/stdio-2026 --flavor sdk --era modern --want-protocol 2026-07-28 -- stdio -- "${PY_SERVER[@]}"
cli_check ts-server/stdio --flavor sdk --want-protocol 2025-11-25 -- stdio -- "${TS_SERVER[@]}"
cli_check server-everything/stdio --flavor server-everything --want-protocol 2025-11-25 -- stdio -- node "$SERVER_EVERYTHING" stdio
# The toolbox (describe, snapshot/diff, --record/replay/mock, doctor) against the official
# SDK servers.
TOOLBOX=("$PY" "$HERE/python/cli_toolbox.py" --talaria "$TALARIA")
check talaria-toolbox/python-server/stdio "${TOOLBOX[@]}" --prefix talaria-toolbox/python-server/stdio -- stdio -- "${PY_SERVER[@]}"
check talaria-toolbox/ts-server/stdio "${TOOLBOX[@]}" --prefix talaria-toolbox/ts-server/stdio -- stdio -- "${TS_SERVER[@]}"

if start_server python-server-http "${PY_SERVER[@]}" --transport http; then
    pid=$SERVER_PID url=$SERVER_ADDR
    cli_check python-server/http --flavor sdk --protocol-version 2025-11-25 -- http "$url"
    cli_check python-server/http-2026 --flavor sdk --era modern --want-protocol 2026-07-28 -- http "$url"
    check talaria-toolbox/python-server/http "${TOOLBOX[@]}" --prefix talaria-toolbox/python-server/http -- http "$url"
    # The same with the smol HTTP client (`talaria::smol::http`) under the CLI.
    TALARIA_HTTP_CLIENT=smol cli_check python-server/http-smol-client --flavor sdk --protocol-version 2025-11-25 -- http "$url"
    TALARIA_HTTP_CLIENT=smol cli_check python-server/http-2026-smol-client --flavor sdk --era modern --want-protocol 2026-07-28 -- http "$url"
    stop_server "$pid"
else
    fail talaria-cli/python-server/http "server.py did not start"
fi
if start_server python-server-http-json "${PY_SERVER[@]}" --transport http --json-response; then
    pid=$SERVER_PID url=$SERVER_ADDR
    cli_check python-server/http-json --flavor sdk --json-replies --protocol-version 2025-11-25 -- http "$url"
    stop_server "$pid"
else
    fail talaria-cli/python-server/http-json "server.py did not start"
fi
if start_server python-server-sse "${PY_SERVER[@]}" --transport sse; then
    pid=$SERVER_PID url=$SERVER_ADDR
    cli_check python-server/sse --flavor sdk --protocol-version 2025-11-25 -- sse "$url"
    TALARIA_HTTP_CLIENT=smol cli_check python-server/sse-smol-client --flavor sdk --protocol-version 2025-11-25 -- sse "$url"
    stop_server "$pid"
else
    fail talaria-cli/python-server/sse "server.py did not start"
fi
if start_server ts-server-http "${TS_SERVER[@]}" --transport http; then
    pid=$SERVER_PID url=$SERVER_ADDR
    cli_check ts-server/http --flavor sdk --want-protocol 2025-11-25 -- http "$url"
    cli_check ts-server/sse --flavor sdk --want-protocol 2025-11-25 -- sse "${url%/mcp}/sse"
    TALARIA_HTTP_CLIENT=smol cli_check ts-server/http-smol-client --flavor sdk --want-protocol 2025-11-25 -- http "$url"
    TALARIA_HTTP_CLIENT=smol cli_check ts-server/sse-smol-client --flavor sdk --want-protocol 2025-11-25 -- sse "${url%/mcp}/sse"
    stop_server "$pid"
else
    fail talaria-cli/ts-server/http "server.mjs did not start"
fi
if start_server ts-server-http-json "${TS_SERVER[@]}" --transport http --json-response; then
    pid=$SERVER_PID url=$SERVER_ADDR
    cli_check ts-server/http-json --flavor sdk --json-replies --want-protocol 2025-11-25 -- http "$url"
    TALARIA_HTTP_CLIENT=smol cli_check ts-server/http-json-smol-client --flavor sdk --json-replies --want-protocol 2025-11-25 -- http "$url"
    stop_server "$pid"
else
    fail talaria-cli/ts-server/http-json "server.mjs did not start"
fi
# server-everything listens on $PORT on every interface; the shim makes it bind 127.0.0.1:0.
for transport in streamableHttp sse; do
    name=http path=/mcp
    [[ $transport == sse ]] && name=sse path=/sse
    if start_server "server-everything-$name" node --import "$HERE/ts/listen-shim.mjs" "$SERVER_EVERYTHING" "$transport"; then
        pid=$SERVER_PID
        cli_check "server-everything/$name" --flavor server-everything --want-protocol 2025-11-25 -- "$name" "http://$SERVER_ADDR$path"
        stop_server "$pid"
    else
        fail "talaria-cli/server-everything/$name" "server-everything did not start"
    fi
done

# --- 3. the MCP Inspector CLI --------------------------------------------------------------------
log "the MCP Inspector CLI against everything-server"
INSPECT=("$PY" "$HERE/python/inspector_checks.py" --inspector "$INSPECTOR")
check inspector-cli/stdio "${INSPECT[@]}" --prefix inspector-cli/stdio --stdio "$EVERYTHING" --transport stdio
if start_server everything-http-inspector "$EVERYTHING" --transport http --host 127.0.0.1 --port 0; then
    pid=$SERVER_PID url=$SERVER_ADDR
    check inspector-cli/http "${INSPECT[@]}" --prefix inspector-cli/http --http "$url"
    check inspector-cli/sse "${INSPECT[@]}" --prefix inspector-cli/sse --sse "${url%/mcp}/sse"
    stop_server "$pid"
else
    fail inspector-cli/http "everything-server did not start"
fi
log "interop checks took $((SECONDS - START))s"

# --- 4. the conformance suite --------------------------------------------------------------------
if [[ -x $HERE/conformance.sh && -z ${INTEROP_SKIP_CONFORMANCE:-} ]]; then
    log "the conformance suite (tests/interop/conformance.sh)"
    CONFORMANCE_START=$SECONDS
    CHECK_TIMEOUT=$CONFORMANCE_TIMEOUT check conformance bash "$HERE/conformance.sh"
    log "conformance took $((SECONDS - CONFORMANCE_START))s"
fi

show_failed_logs
echo "$PASSED passed, $FAILED failed, $KNOWN known failures (tests/interop/known-failures)"
log "total $((SECONDS - START))s; logs in ${LOGS#"$ROOT"/}"
((FAILED == 0))
