"""Drives Talaria's everything-server with the MCP Inspector CLI (@modelcontextprotocol/inspector-cli)
and checks what it prints.

Prints one line per feature group, `PASS <prefix>/<group>` or `FAIL <prefix>/<group>: <reason>`.
Exit status: 0 all passed, 1 some failed.

usage: inspector_checks.py --inspector DIR --prefix NAME (--stdio CMD [ARGS...] | --http URL | --sse URL)
(DIR: the inspector-cli package's build directory)
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from typing import Any


class CheckFailed(Exception):
    pass


def expect(condition: bool, message: str) -> None:
    if not condition:
        raise CheckFailed(message)


def short(value: Any, limit: int = 160) -> str:
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def texts(result: dict[str, Any]) -> str:
    return "\n".join(c.get("text", "") for c in result.get("content", []) if c.get("type") == "text")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--inspector", required=True)
    parser.add_argument("--prefix", required=True)
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--stdio", nargs=argparse.REMAINDER)
    where.add_argument("--http")
    where.add_argument("--sse")
    args = parser.parse_args()

    def inspect(method: str, *extra: str) -> Any:
        # The inspector's own options first; a stdio server's arguments after `--`.
        if args.stdio:
            command = ["node", "index.js", args.stdio[0], "--method", method, *extra, "--", *args.stdio[1:]]
        else:
            url, transport = (args.http, "http") if args.http else (args.sse, "sse")
            command = ["node", "index.js", url, "--transport", transport, "--method", method, *extra]
        # It finds its package.json relative to the working directory.
        proc = subprocess.run(
            command, cwd=args.inspector, capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL
        )
        print(f"$ {' '.join(command)}\n{proc.stdout}{proc.stderr}", file=sys.stderr)
        expect(proc.returncode == 0, f"{method}: exit {proc.returncode}: {short(proc.stderr.strip()[-300:] or proc.stdout)}")
        try:
            return json.loads(proc.stdout)
        except json.JSONDecodeError:
            raise CheckFailed(f"{method}: not JSON: {short(proc.stdout)}") from None

    def tools() -> None:
        listed = {t["name"] for t in inspect("tools/list")["tools"]}
        expect({"echo", "add", "fail", "slow"} <= listed, f"tools/list gave {sorted(listed)}")
        r = inspect("tools/call", "--tool-name", "echo", "--tool-arg", "text=hello inspector")
        expect(texts(r) == "hello inspector" and not r.get("isError"), f"echo gave {short(r)}")
        r = inspect("tools/call", "--tool-name", "add", "--tool-arg", "a=2", "b=40")
        expect(r.get("structuredContent") == {"sum": 42}, f"add gave {short(r)}")
        r = inspect("tools/call", "--tool-name", "fail")
        expect(r.get("isError") is True, f"fail gave {short(r)}")

    def prompts() -> None:
        listed = {p["name"] for p in inspect("prompts/list")["prompts"]}
        expect("greet" in listed, f"prompts/list gave {sorted(listed)}")
        r = inspect("prompts/get", "--prompt-name", "greet", "--prompt-args", "name=Ada", "tone=formal")
        expect(r["messages"][0]["content"]["text"] == "Greet Ada in a formal tone.", f"greet gave {short(r)}")

    def resources() -> None:
        listed = {x["uri"] for x in inspect("resources/list")["resources"]}
        expect("file:///readme.md" in listed, f"resources/list gave {sorted(listed)}")
        r = inspect("resources/read", "--uri", "file:///readme.md")
        expect(r["contents"][0]["text"].startswith("# Everything"), f"readme gave {short(r)}")
        templates = {t["uriTemplate"] for t in inspect("resources/templates/list")["resourceTemplates"]}
        expect("notes://{id}" in templates, f"templates gave {sorted(templates)}")
        r = inspect("resources/read", "--uri", "notes://7")
        expect(r["contents"][0]["text"] == "note 7", f"notes://7 gave {short(r)}")

    def logging() -> None:
        r = inspect("logging/setLevel", "--log-level", "debug")
        expect(r == {}, f"logging/setLevel gave {short(r)}")

    failed = 0
    for name, check in [("tools", tools), ("prompts", prompts), ("resources", resources), ("logging", logging)]:
        try:
            check()
            print(f"PASS {args.prefix}/{name}", flush=True)
        except (CheckFailed, subprocess.TimeoutExpired, KeyError, IndexError, TypeError) as e:
            failed += 1
            reason = str(e) if isinstance(e, CheckFailed) else f"{type(e).__name__}: {e}"
            print(f"FAIL {args.prefix}/{name}: {short(reason, 300)}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
