"""Drives a server built with an official SDK with the talaria CLI's toolbox commands, each
through a real process, and judges their `--json` output: `describe`, `snapshot` then `diff`,
`--record` then `replay` and `talaria mock` (a mock built from the recording answers as the
server did), and `doctor`.

Prints one line per command group, `PASS <prefix>/<group>` or `FAIL <prefix>/<group>: <reason>`.
Exit status: 0 all passed, 1 some failed.

usage: cli_toolbox.py --talaria PATH --prefix NAME [--protocol-version V] -- CONNECTION...
where CONNECTION is what follows `talaria`: `stdio -- CMD ARGS...` or `http URL`.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from typing import Any, Callable


class CheckFailed(Exception):
    pass


def expect(condition: bool, message: str) -> None:
    if not condition:
        raise CheckFailed(message)


def short(value: Any, limit: int = 200) -> str:
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def talaria(talaria_path: str, args: list[str]) -> tuple[int, list[Any], str]:
    proc = subprocess.run([talaria_path, "--json", "--no-color", "--timeout", "10s", *args],
                          capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    print(f"$ talaria {' '.join(args)}\n{proc.stdout}{proc.stderr}", file=sys.stderr)
    values = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    return proc.returncode, values, proc.stderr


def one_shots(*commands: list[str]) -> list[str]:
    words: list[str] = []
    for command in commands:
        words += [":::", *command]
    return words


def without(value: Any, keys: tuple[str, ...] = ("_meta", "resultType", "cacheScope", "ttlMs")) -> Any:
    if isinstance(value, dict):
        return {k: without(v, keys) for k, v in value.items() if k not in keys}
    if isinstance(value, list):
        return [without(v, keys) for v in value]
    return value


def main() -> int:
    argv = sys.argv[1:]
    split = argv.index("--")
    parser = argparse.ArgumentParser()
    parser.add_argument("--talaria", required=True)
    parser.add_argument("--prefix", required=True)
    parser.add_argument("--protocol-version")
    args = parser.parse_args(argv[:split])
    connection = argv[split + 1:]
    pinned = ["--protocol-version", args.protocol_version] if args.protocol_version else []
    work = tempfile.mkdtemp(prefix="talaria-toolbox-")
    recording = os.path.join(work, "session.jsonl")
    surface = os.path.join(work, "surface.json")
    session = [["call-tool", "echo", "text=toolbox"], ["call-tool", "add", "a=40", "b=2"], ["list-prompts"],
               ["get-prompt", "greet", "name=Ada", "tone=formal"], ["list-resources"], ["read-resource", "file:///readme.md"]]
    recorded: list[Any] = []

    def describe() -> None:
        rc, values, err = talaria(args.talaria, [*pinned, *connection, *one_shots(["describe", "add"])])
        expect(rc == 0, f"rc {rc}: {short(err)}")
        expect(values[0]["name"] == "add" and values[0]["example"].startswith("call_tool add "), short(values[0]))

    def snapshot_and_diff() -> None:
        rc, values, err = talaria(args.talaria, [*pinned, *connection, *one_shots(["snapshot"])])
        expect(rc == 0 and any(t["name"] == "echo" for t in values[0]["tools"]), f"rc {rc}: {short(err)}")
        with open(surface, "w") as f:
            json.dump(values[0], f)
        rc, values, err = talaria(args.talaria, [*pinned, *connection, *one_shots(["diff", surface])])
        expect(rc == 0 and values[0]["same"] is True, f"diff of an unchanged server: rc {rc} {short(values)}")

    def record() -> None:
        rc, values, err = talaria(args.talaria, ["--record", recording, *pinned, *connection, *one_shots(["list-tools"], *session)])
        expect(rc == 0 and len(values) == len(session) + 1, f"rc {rc}: {short(err)}")
        recorded.extend(values[1:])
        with open(recording) as f:
            header = json.loads(f.readline())
        expect(header.get("talaria") == "recording", f"header {short(header)}")

    def replay() -> None:
        rc, values, err = talaria(args.talaria, [*pinned, *connection, *one_shots(["replay", recording])])
        expect(rc == 0, f"rc {rc}: {short(values)} {short(err)}")
        expect(values[0]["same"] is True and values[0]["replayed"] >= len(session), short(values[0]))

    def mock() -> None:
        for revision in ("2025-06-18", "2026-07-28"):
            served = ["stdio", "--", args.talaria, "mock", recording]
            rc, values, err = talaria(args.talaria, ["--protocol-version", revision, *served, *one_shots(*session)])
            expect(rc == 0, f"{revision}: rc {rc}: {short(err)}")
            for i, (got, want) in enumerate(zip(values, recorded)):
                expect(without(got) == without(want), f"{revision}: answer {i + 1}: {short(got)} != {short(want)}")

    def doctor() -> None:
        rc, values, err = talaria(args.talaria, [*connection, *one_shots(["doctor"])] if connection[0] == "stdio"
                                  else ["doctor", connection[-1]])
        report = values[0]
        levels = {f["check"]: f["level"] for f in report["findings"]}
        expect(any(c.startswith("revision ") and l == "ok" for c, l in levels.items()), f"no revision spoken: {short(report)}")
        expect(levels.get("tools capability") == "ok", f"tools: {short(report)}")
        if connection[0] == "stdio":
            expect(levels.get("stdout") == "ok", f"the SDK's server printed a banner? {short(report)}")
        else:
            expect(levels.get("redirects") == "ok" and levels.get("auth") == "ok", short(report))
        expect(rc == (3 if report["errors"] else 0), f"rc {rc} with {report['errors']} errors")

    groups: list[tuple[str, Callable[[], None]]] = [
        ("describe", describe), ("snapshot-diff", snapshot_and_diff), ("record", record), ("replay", replay),
        ("mock", mock), ("doctor", doctor),
    ]
    failed = 0
    for name, check in groups:
        try:
            check()
            print(f"PASS {args.prefix}/{name}", flush=True)
        except (CheckFailed, subprocess.TimeoutExpired, json.JSONDecodeError, KeyError, IndexError, TypeError, OSError) as e:
            failed += 1
            reason = str(e) if isinstance(e, CheckFailed) else f"{type(e).__name__}: {e}"
            print(f"FAIL {args.prefix}/{name}: {short(reason, 300)}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
