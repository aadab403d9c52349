#!/usr/bin/env bash
# Runs every benchmark issue 24 reads and writes one Markdown table of its rows, each with the
# floor measured in the same run, at 1, 16 and 64 calls in flight.
#
#   scripts/bench-all.sh                  # full run (about 10 minutes on 2 cores)
#   scripts/bench-all.sh --quick          # a smoke run: 1 round, few calls, no clean build
#   scripts/bench-all.sh --out table.md   # where the table goes (default: target/bench-all.md)
#
# Rows come from the benches themselves (`TALARIA_BENCH_ROWS`): the memory pair and stdio
# (`examples/benches/{memory,stdio}.rs`), stdio again with the SDK's client against the floor's
# own server (`TALARIA_BENCH_SERVER=json-echo`: the client's own cost), typed decode
# (`core/benches/decode.rs`); then the stripped size of the minimal stdio server
# (`examples/min-server`, only the `stdio` feature) and a clean release build of
# `talaria-core` in a fresh target directory. Ratios are medians of the rounds, paired within
# each run.
set -euo pipefail
cd "$(dirname "$0")/.."

quick=0
out=target/bench-all.md
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=1 ;;
    --out) out=$2; shift ;;
    *) echo "usage: $0 [--quick] [--out FILE]" >&2; exit 2 ;;
  esac
  shift
done

rows=$(mktemp)
trap 'rm -f "$rows"' EXIT
export TALARIA_BENCH_ROWS=$rows TALARIA_BENCH_DEPTHS=1,16,64 TALARIA_BENCH_PAYLOADS=32
if [ $quick = 1 ]; then
  export TALARIA_BENCH_ROUNDS=1 TALARIA_BENCH_CALLS=2000 TALARIA_BENCH_MB=2
else
  export TALARIA_BENCH_ROUNDS=${TALARIA_BENCH_ROUNDS:-5} TALARIA_BENCH_CALLS=${TALARIA_BENCH_CALLS:-20000}
fi

echo "==> memory pair"
cargo bench -q -p talaria-examples --bench memory
echo "==> stdio, Talaria client and server"
cargo bench -q -p talaria-examples --bench stdio
echo "==> stdio, Talaria client against json-echo"
TALARIA_BENCH_TAG=stdio-client TALARIA_BENCH_SERVER=json-echo cargo bench -q -p talaria-examples --bench stdio
echo "==> typed decode"
cargo bench -q -p talaria-core --bench decode

echo "==> minimal stdio server, stripped"
cargo build -q --release -p talaria-min-server
strip -o target/min-stdio-server.stripped target/release/min-stdio-server
size_release=$(stat -c %s target/min-stdio-server.stripped)
# The same with a size-minded profile a user would pick for it.
CARGO_PROFILE_RELEASE_OPT_LEVEL=s CARGO_PROFILE_RELEASE_LTO=true CARGO_PROFILE_RELEASE_CODEGEN_UNITS=1 \
  CARGO_PROFILE_RELEASE_PANIC=abort CARGO_TARGET_DIR=target/size-profile \
  cargo build -q --release -p talaria-min-server
strip -o target/min-stdio-server.small target/size-profile/release/min-stdio-server
size_small=$(stat -c %s target/min-stdio-server.small)

build_s=skipped
crates=skipped
if [ $quick = 0 ]; then
  echo "==> talaria-core clean release build"
  fresh=$(mktemp -d)
  cargo fetch -q
  begin=$(date +%s.%N)
  CARGO_TARGET_DIR=$fresh cargo build --release -p talaria-core 2> "$fresh/log"
  end=$(date +%s.%N)
  build_s=$(python3 -c "print(f'{$end - $begin:.1f} s')")
  crates=$(grep -c '^ *Compiling' "$fresh/log" || true)
  rm -rf "$fresh"
fi

python3 - "$rows" "$out" "$size_release" "$size_small" "$build_s" "$crates" "$quick" <<'EOF'
import sys
rows_path, out, size_release, size_small, build_s, crates, quick = sys.argv[1:]
runs, decode = {}, {}
for line in open(rows_path):
    f = line.rstrip("\n").split("\t")
    if f[0] == "decode":
        decode[f[1]] = tuple(float(x) for x in f[2:5])
    else:
        bench, payload, kind, depth, cps, floor_cps, ratio, p50, floor_p50 = f
        runs[(bench, kind, int(depth))] = (float(cps), float(floor_cps), float(ratio), float(p50), float(floor_p50))

def ratio(bench, kind, depth):
    r = runs.get((bench, kind, depth))
    return "n/a" if r is None else f"{r[2]:.2f}x ({r[0]:,.0f} vs {r[1]:,.0f} calls/s)"

def verdict(value, target, above=True):
    if value is None:
        return ""
    return "met" if (value >= target if above else value <= target) else "missed"

def get(bench, kind, depth):
    r = runs.get((bench, kind, depth))
    return None if r is None else r[2]

lines = ["| figure | run | 1 in flight | 16 in flight | 64 in flight | target | verdict (at 64; the 1-in-flight rows at 1) |",
         "|---|---|---|---|---|---|---|"]
def row(name, bench, kind, target, depths=(1, 16, 64)):
    at = 1 if depths == (1,) else 64
    cells = [ratio(bench, kind, d) if d in depths else "" for d in (1, 16, 64)]
    lines.append(f"| {name} | {kind} | {' | '.join(cells)} | {target:.1f}x | {verdict(get(bench, kind, at), target)} |")
for kind in ("blocking", "pipelined", "async"):
    row("in-process pair (`memory`) vs serde_json echo", "memory", kind, 0.6)
for kind in ("blocking", "pipelined", "async"):
    row("stdio, Talaria client and server vs raw echo", "stdio", kind, 0.6)
for kind in ("blocking", "async"):
    row("stdio, 1 in flight", "stdio", kind, 0.8, depths=(1,))
for kind in ("blocking", "pipelined", "async"):
    row("Talaria client against a raw server (json-echo)", "stdio-client", kind, 0.7)

table = "\n".join(lines)
whole = decode.get("whole corpus")
small = decode.get("CallResult")
other = [
    "| figure | Talaria | target | |",
    "|---|---|---|---|",
]
if whole:
    other.append(f"| typed decode, whole corpus, vs `Value` | {whole[0]:.2f}x one pass ({whole[2]:.2f}x with every kept member read), {whole[1]:.2f}x two passes | 1.5x | {verdict(max(whole[:2]), 1.5)} |")
if small:
    other.append(f"| typed decode of `tools/call` results (small), vs `Value` | {small[0]:.2f}x one pass, {small[1]:.2f}x two passes | 1.2x | {verdict(max(small[:2]), 1.2)} |")
other.append(f"| minimal stdio server, stripped (release profile) | {int(size_release)/1e6:.2f} MB | 1 MB | {verdict(int(size_release)/1e6, 1.0, above=False)} |")
other.append(f"| the same, `opt-level = \"s\"`, LTO, 1 codegen unit, `panic = \"abort\"` | {int(size_small)/1e6:.2f} MB | 1 MB | {verdict(int(size_small)/1e6, 1.0, above=False)} |")
other.append(f"| `talaria-core` clean release build | {build_s}, {crates} crates | 15 s | {'' if build_s == 'skipped' else verdict(float(build_s.split()[0]), 15, above=False)} |")

text = "# Issue 24's figures (`scripts/bench-all.sh" + (" --quick" if quick == "1" else "") + "`)\n\n"
text += "Calls/s ratios against the floor measured in the same run (median of the rounds), payload 32 B.\n\n"
text += table + "\n\n" + "\n".join(other) + "\n"
open(out, "w").write(text)
print(text)
EOF
echo "table written to $out"
