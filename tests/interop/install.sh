#!/usr/bin/env bash
# Installs the official MCP SDKs used as interop peers into .cache/interop/ (git-ignored):
#   .cache/interop/venv  Python venv with PyPI `mcp`
#   .cache/interop/npm   npm prefix with the TypeScript SDK, server-everything and inspector-cli
# Idempotent: a stamp keyed by the pinned versions makes a second run a no-op.
# Needs only python3 (>= 3.10, with venv) and node/npm (>= 18) plus registry access.
set -euo pipefail

PY_MCP_VERSION=2.3.0
TS_SDK_VERSION=1.32.2
SERVER_EVERYTHING_VERSION=2026.8.31
INSPECTOR_CLI_VERSION=1.0.3

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cache="$root/.cache/interop"
stamp_key="py-mcp=$PY_MCP_VERSION ts-sdk=$TS_SDK_VERSION server-everything=$SERVER_EVERYTHING_VERSION inspector-cli=$INSPECTOR_CLI_VERSION"
stamp="$cache/.installed"

if [[ -f "$stamp" && "$(cat "$stamp")" == "$stamp_key" \
      && -x "$cache/venv/bin/python" && -d "$cache/npm/node_modules/@modelcontextprotocol/sdk" ]]; then
    exit 0
fi

mkdir -p "$cache"
rm -f "$stamp"

python="${PYTHON:-python3}"
echo "install.sh: Python venv with mcp==$PY_MCP_VERSION" >&2
if [[ ! -x "$cache/venv/bin/python" ]]; then
    "$python" -m venv "$cache/venv"
fi
"$cache/venv/bin/python" -m pip install --quiet --disable-pip-version-check --upgrade "mcp==$PY_MCP_VERSION" >&2

echo "install.sh: npm packages (sdk $TS_SDK_VERSION, server-everything $SERVER_EVERYTHING_VERSION, inspector-cli $INSPECTOR_CLI_VERSION)" >&2
mkdir -p "$cache/npm"
cat > "$cache/npm/package.json" <<JSON
{
  "name": "talaria-interop-peers",
  "private": true,
  "type": "module",
  "dependencies": {
    "@modelcontextprotocol/sdk": "$TS_SDK_VERSION",
    "@modelcontextprotocol/server-everything": "$SERVER_EVERYTHING_VERSION",
    "@modelcontextprotocol/inspector-cli": "$INSPECTOR_CLI_VERSION"
  },
  "overrides": {
    "@modelcontextprotocol/sdk": "$TS_SDK_VERSION"
  }
}
JSON
(cd "$cache/npm" && npm install --no-audit --no-fund --loglevel=error >&2)

printf '%s' "$stamp_key" > "$stamp"
echo "install.sh: done ($stamp_key)" >&2
