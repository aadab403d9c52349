"""Drives servers built with the official SDKs with Talaria's CLI in scripted mode and judges
its `--json` output (stdout) and its `-vv` notes (stderr: logs, progress). A few groups drive
its interactive mode instead, through a pseudo-terminal (what only the REPL answers: URL-mode
elicitation).

Prints one line per feature group, `PASS <prefix>/<group>` or `FAIL <prefix>/<group>: <reason>`.
Exit status: 0 all passed, 1 some failed.

usage: cli_checks.py --talaria PATH --prefix NAME --flavor sdk|server-everything
                     [--protocol-version V] [--era legacy|modern] -- CONNECTION...
where CONNECTION is what follows `talaria`: `stdio -- CMD ARGS...`, `http URL` or `sse URL`.
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import pty
import re
import select
import signal
import struct
import subprocess
import sys
import tempfile
import termios
import time
from dataclasses import dataclass, field
from typing import Any, Callable

ROOT_URI = "file:///tmp/talaria-interop-root"
LINK_URL = "https://example.com/interop/link?from=talaria"
LOG_LINE = re.compile(r"^\[(debug|info|notice|warning|error|critical|alert|emergency)\] ", re.M)


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


@dataclass
class Run:
    argv: list[str]
    rc: int
    values: list[Any]
    stderr: str

    def value(self, i: int) -> Any:
        expect(i < len(self.values), f"command {i + 1} printed nothing (rc {self.rc}): {short(self.stderr, 200)}")
        return self.values[i]

    def ok(self, i: int) -> dict[str, Any]:
        v = self.value(i)
        expect(isinstance(v, dict) and "kind" not in v, f"command {i + 1} failed: {short(v)}")
        return v


@dataclass
class Group:
    name: str
    commands: list[list[str]]
    check: Callable[[Run], None]
    options: list[str] = field(default_factory=list)
    want_rc: int = 0
    # Instead of the scripted commands: drives the REPL on a pseudo-terminal, given the
    # talaria command line (options and connection), raising CheckFailed.
    interactive: Callable[[list[str]], None] | None = None


ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[()][0-9A-Za-z]|\r")
PROMPT = r"talaria> "


class Repl:
    """`talaria ARGS` in interactive mode, on a pseudo-terminal of its own: type, then wait
    (bounded) for what the screen must show."""

    def __init__(self, talaria: str, args: list[str], history: str) -> None:
        env = dict(os.environ, TALARIA_HISTORY=history, NO_COLOR="1", TERM="xterm", COLUMNS="200", LINES="50")
        self.pid, self.fd = pty.fork()
        if self.pid == 0:  # the child: talaria on the terminal
            try:
                os.execve(talaria, [talaria, *args], env)
            finally:
                os._exit(127)
        fcntl.ioctl(self.fd, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 200, 0, 0))
        self.raw = ""
        self.seen = 0

    def screen(self) -> str:
        return ANSI.sub("", self.raw)

    def expect(self, pattern: str, timeout: float = 15.0) -> re.Match[str]:
        """Waits until `pattern` appears after what was matched before."""
        deadline = time.monotonic() + timeout
        regex = re.compile(pattern)
        while True:
            match = regex.search(self.screen(), self.seen)
            if match:
                self.seen = match.end()
                return match
            left = deadline - time.monotonic()
            expect(left > 0, f"the REPL never showed {pattern!r}; it showed: {short(self.screen()[self.seen:], 400)}")
            ready, _, _ = select.select([self.fd], [], [], min(left, 0.2))
            if ready:
                try:
                    data = os.read(self.fd, 65536)
                except OSError:
                    data = b""
                expect(bool(data) or regex.search(self.screen(), self.seen) is not None,
                       f"talaria left before showing {pattern!r}: {short(self.screen()[self.seen:], 400)}")
                self.raw += data.decode("utf-8", "replace")

    def line(self, text: str) -> None:
        os.write(self.fd, (text + "\r").encode())

    def command(self, text: str) -> None:
        """Waits for the prompt, then types `text` (keys typed ahead of the editor may be lost)."""
        self.expect(PROMPT)
        self.line(text)

    def close(self) -> None:
        try:
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
        except OSError:
            pass
        os.close(self.fd)


def drive(talaria: str, args: list[str], script: Callable[[Repl], None]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        repl = Repl(talaria, args, os.path.join(tmp, "history"))
        try:
            script(repl)
            repl.command("exit")
        finally:
            print(f"$ {talaria} {' '.join(args)} (interactive)\n{repl.screen()}", file=sys.stderr)
            repl.close()


def decode_all(text: str) -> list[Any]:
    decoder = json.JSONDecoder()
    values, i = [], 0
    while True:
        while i < len(text) and text[i].isspace():
            i += 1
        if i >= len(text):
            return values
        value, i = decoder.raw_decode(text, i)
        values.append(value)


def names(items: list[dict[str, Any]], key: str = "name") -> set[str]:
    return {item.get(key) for item in items}


def need(found: set[str], wanted: set[str], what: str) -> None:
    expect(wanted <= found, f"{what} missing: {sorted(wanted - found)} (have {sorted(found)[:12]})")


def stats_delta(run: Run, first: int, last: int) -> dict[str, int]:
    def parse(i: int) -> dict[str, int]:
        return json.loads(texts(run.ok(i)))

    before, after = parse(first), parse(last)
    return {k: after[k] - before[k] for k in ("started", "completed", "cancelled")}


def sdk_groups(era: str, json_replies: bool) -> list[Group]:
    """For tests/interop/python/server.py and tests/interop/ts/server.mjs.

    `json_replies`: the server answers POSTs with plain JSON bodies (the SDKs' JSON response
    mode), which carry no notifications and no server-to-client requests, so logging, progress
    and the server's requests cannot reach any client; those groups are left out.
    """

    def listing(r: Run) -> None:
        need(names(r.ok(0)["tools"]), {"echo", "add", "fail", "log", "slow", "slow-stats"}, "tools")
        add = next(t for t in r.ok(0)["tools"] if t["name"] == "add")
        expect("outputSchema" in add, "add has no outputSchema")
        need(names(r.ok(1)["prompts"]), {"greet"}, "prompts")
        need(names(r.ok(2)["resources"], "uri"), {"file:///readme.md"}, "resources")
        need(names(r.ok(3)["resourceTemplates"], "uriTemplate"), {"notes://{id}"}, "templates")

    def tools(r: Run) -> None:
        echo = r.ok(0)
        expect(texts(echo) == "hello interop" and not echo.get("isError"), f"echo gave {short(echo)}")
        add = r.ok(1)
        expect(add.get("structuredContent") == {"sum": 42}, f"add gave {short(add)}")
        fail = r.ok(2)
        expect(fail.get("isError") is True and "always fails" in texts(fail), f"fail gave {short(fail)}")

    def prompts(r: Run) -> None:
        got = [(m["role"], m["content"].get("text")) for m in r.ok(0)["messages"]]
        want = [("user", "Greet Ada in a formal tone."), ("assistant", "Hello, Ada!")]
        expect(got == want, f"greet gave {got}")

    def resources(r: Run) -> None:
        readme = r.ok(0)["contents"]
        expect(readme[0]["text"].startswith("# ") and readme[0].get("mimeType") == "text/markdown", f"readme {short(readme)}")
        note = r.ok(1)["contents"]
        expect(note[0]["text"] == "note 42" and note[0]["uri"] == "notes://42", f"notes://42 gave {short(note)}")

    def completion(r: Run) -> None:
        expect(r.ok(0)["completion"]["values"] == ["Ada", "Alan"], f"complete greet name=a: {short(r.ok(0))}")
        expect(r.ok(1)["completion"]["values"] == ["Grace"], f"complete notes id=g: {short(r.ok(1))}")

    def logging(r: Run) -> None:
        expect(texts(r.ok(len(r.values) - 1)) == "logged", f"log gave {short(r.values)}")
        levels = LOG_LINE.findall(r.stderr)
        expect(levels == ["warning", "error"], f"log lines at level warning: {levels}")

    def progress(r: Run) -> None:
        expect(texts(r.ok(0)) == "done after 3 steps", f"slow gave {short(r.ok(0))}")
        steps = re.findall(r"^progress slow: (\d+)/(\d+)", r.stderr, re.M)
        expect(steps == [("1", "3"), ("2", "3"), ("3", "3")], f"progress lines {steps}")

    def cancel(r: Run) -> None:
        timed_out = r.value(1)
        expect(isinstance(timed_out, dict) and timed_out.get("kind") == "timeout", f"slow call: {short(timed_out)}")
        delta = stats_delta(r, 0, 3)
        expect(delta == {"started": 2, "completed": 1, "cancelled": 1}, f"the server saw {delta}")

    def roots(r: Run) -> None:
        expect(texts(r.ok(1)) == ROOT_URI, f"roots tool gave {short(r.ok(1))}")

    def server_requests(r: Run) -> None:
        elicit = r.ok(0)
        expect(json.loads(texts(elicit)).get("action") == "decline", f"elicit gave {short(elicit)}")
        sample = r.value(1)
        expect("rejected sampling" in short(sample, 1000), f"sample gave {short(sample)}")

    def sampling_tools(r: Run) -> None:
        # The CLI declares sampling.tools: the SDK server offers the model its tool, and the
        # scripted --sampling-reply answers in text (the model chose not to call it), which
        # the server reports as the model's final answer.
        offered = r.ok(0)
        expect("forty-two" in texts(offered) and not offered.get("isError"), f"sample with tools gave {short(offered)}")
        plain = r.ok(1)
        expect("forty-two" in texts(plain) and not plain.get("isError"), f"sample without tools gave {short(plain)}")

    def url_elicitation(talaria_args: list[str]) -> None:
        # The REPL declares elicitation.url: the user is sent to the page, accepts, and (in
        # 2025-11-25) the server's notifications/elicitation/complete for that id is shown (-v).
        def script(repl: Repl) -> None:
            repl.command(f"call_tool elicit question=Sign-in-please url={LINK_URL}")
            repl.expect(r"The server asks: Sign-in-please")
            repl.expect(r"open: " + re.escape(LINK_URL))
            repl.expect(r"accept, decline or cancel\? \[a/d/c\]: ")
            repl.line("a")
            start = repl.seen
            reply = repl.expect(r'\{"action": ?"[a-z]+".*\}')
            answer = json.loads(reply.group(0))
            expect(answer.get("action") == "accept", f"elicit with a url gave {answer}")
            repl.expect(r"✓ \d+ ms")
            shown = repl.screen()[start:repl.seen]
            heard = re.findall(r'notification: notifications/elicitation/complete \{"elicitationId":"([^"]*)"\}', shown)
            if legacy:
                eid = answer.get("elicitationId")
                expect(answer.get("completionSent") is True and eid, f"the server did not complete it: {answer}")
                expect(heard == [eid], f"completions shown {heard}, wanted [{eid!r}]: {short(shown, 400)}")
            else:
                expect(answer.get("completionSent") is False, f"2026-07-28 has no completion: {answer}")
                expect(heard == [], f"2026-07-28 has no completion, but the REPL showed {heard}")

        drive(talaria_args[0], talaria_args[1:], script)

    legacy = era == "legacy"
    groups = [
        Group("list", [["list-tools"], ["list-prompts"], ["list-resources"], ["list-templates"]], listing),
        Group(
            "tools",
            [["call-tool", "echo", "text=hello interop"], ["call-tool", "add", "a=2", "b=40"], ["call-tool", "fail"]],
            tools,
            want_rc=3,
        ),
        Group("prompts", [["get-prompt", "greet", "name=Ada", "tone=formal"]], prompts),
        Group("resources", [["read-resource", "file:///readme.md"], ["read-resource", "notes://42"]], resources),
        Group("completion", [["complete", "greet", "name=a"], ["complete", "notes://{id}", "id=g"]], completion),
        Group(
            "logging",
            ([["set-log-level", "warning"]] if legacy else []) + [["call-tool", "log"]],
            logging,
            options=["-vv"] + ([] if legacy else ["--log-level", "warning"]),
        ),
        Group("progress", [["call-tool", "slow", "steps=3", "step_ms=30"]], progress, options=["-vv"]),
        Group(
            "cancel",
            [
                ["call-tool", "slow-stats"],
                ["call-tool", "slow", "steps=2", "step_ms=4000"],  # 8s; --timeout cuts it before any progress
                ["call-tool", "slow", "steps=1", "step_ms=1000"],  # gives the server time to notice
                ["call-tool", "slow-stats"],
            ],
            cancel,
            options=["--timeout", "3s"],
            want_rc=4,
        ),
    ]
    if json_replies:
        groups = [g for g in groups if g.name not in ("logging", "progress")]
    if legacy:
        groups.append(Group("ping", [["ping"]], lambda r: expect(r.ok(0) == {}, f"ping gave {short(r.ok(0))}")))
    # Handshake era: the server sends requests; 2026-07-28: it returns an InputRequiredResult.
    groups += [
        Group("roots", [["roots", "add", ROOT_URI], ["call-tool", "roots"]], roots),
        Group(
            "server-requests",
            [["call-tool", "elicit", "question=q"], ["call-tool", "sample", "question=q"]],
            server_requests,
            want_rc=-1,
        ),
        Group(
            "sampling-tools",
            [["call-tool", "sample", "question=q", "tools=true"], ["call-tool", "sample", "question=q"]],
            sampling_tools,
            options=["--sampling-reply", "forty-two"],
        ),
        Group("url-elicitation", [], lambda r: None, options=["-v"], interactive=url_elicitation),
    ]
    if json_replies:
        skipped = ("roots", "server-requests", "sampling-tools", "url-elicitation")
        groups = [g for g in groups if g.name not in skipped]
    return groups


def everything_groups() -> list[Group]:
    """For @modelcontextprotocol/server-everything."""

    def listing(r: Run) -> None:
        need(
            names(r.ok(0)["tools"]),
            {"echo", "get-sum", "get-structured-content", "trigger-long-running-operation", "get-tiny-image"},
            "tools",
        )
        need(names(r.ok(1)["prompts"]), {"simple-prompt", "args-prompt", "completable-prompt"}, "prompts")
        expect(len(r.ok(2)["resources"]) > 0, "no resources")
        need(
            names(r.ok(3)["resourceTemplates"], "uriTemplate"),
            {"demo://resource/dynamic/text/{resourceId}", "demo://resource/dynamic/blob/{resourceId}"},
            "templates",
        )

    def tools(r: Run) -> None:
        expect("hello interop" in texts(r.ok(0)), f"echo gave {short(r.ok(0))}")
        expect("is 42" in texts(r.ok(1)), f"get-sum gave {short(r.ok(1))}")
        structured = r.ok(2).get("structuredContent", {})
        expect({"temperature", "conditions", "humidity"} <= set(structured), f"get-structured-content {short(r.ok(2))}")
        image = [c for c in r.ok(3).get("content", []) if c.get("type") == "image"]
        expect(image and image[0].get("data") and image[0].get("mimeType") == "image/png", f"get-tiny-image {short(r.ok(3))}")

    def prompts(r: Run) -> None:
        messages = r.ok(0)["messages"]
        expect(any("Paris" in m["content"].get("text", "") for m in messages), f"args-prompt gave {short(messages)}")

    def resources(r: Run) -> None:
        contents = r.ok(0)["contents"]
        expect(contents and contents[0]["uri"] == "demo://resource/dynamic/text/1" and contents[0].get("text"), short(contents))
        contents = r.ok(1)["contents"]
        expect(contents and contents[0].get("blob"), f"blob resource {short(contents)}")

    def completion(r: Run) -> None:
        expect(r.ok(0)["completion"]["values"] == ["Engineering"], f"complete department=E: {short(r.ok(0))}")
        expect(r.ok(1)["completion"]["values"] == ["Alice"], f"complete name=A (department Engineering): {short(r.ok(1))}")

    def logging(r: Run) -> None:
        expect(LOG_LINE.search(r.stderr), f"no log line on stderr: {short(r.stderr, 300)}")

    def progress(r: Run) -> None:
        expect("completed" in texts(r.ok(0)), f"long-running operation gave {short(r.ok(0))}")
        steps = re.findall(r"^progress trigger-long-running-operation: (\d+)/(\d+)", r.stderr, re.M)
        expect(steps == [("1", "3"), ("2", "3"), ("3", "3")], f"progress lines {steps}")

    def roots(r: Run) -> None:
        expect(ROOT_URI in texts(r.ok(1)), f"get-roots-list gave {short(texts(r.ok(1)))}")

    def sampling(r: Run) -> None:
        expect("rejected sampling" in short(r.value(0), 1000), f"trigger-sampling-request gave {short(r.value(0))}")

    def tasks(r: Run) -> None:
        task = r.ok(0).get("task", {})
        expect(task.get("taskId") and task.get("status") == "working", f"task gave {short(r.ok(0))}")
        expect("tides" in texts(r.ok(1)), f"task-result gave {short(r.ok(1))}")
        expect(r.ok(2).get("status") == "completed", f"task-status after the result gave {short(r.ok(2))}")
        listed = [t.get("taskId") for t in r.ok(3).get("tasks", [])]
        expect(task.get("taskId") in listed, f"tasks gave {short(r.ok(3))}")

    return [
        Group("list", [["list-tools"], ["list-prompts"], ["list-resources"], ["list-templates"]], listing),
        Group(
            "tools",
            [
                ["call-tool", "echo", "message=hello interop"],
                ["call-tool", "get-sum", "a=40", "b=2"],
                ["call-tool", "get-structured-content", "location=Chicago"],
                ["call-tool", "get-tiny-image"],
            ],
            tools,
        ),
        Group("prompts", [["get-prompt", "args-prompt", "city=Paris", "state=TX"]], prompts),
        Group(
            "resources",
            [["read-resource", "demo://resource/dynamic/text/1"], ["read-resource", "demo://resource/dynamic/blob/1"]],
            resources,
        ),
        Group(
            "completion",
            [["complete", "completable-prompt", "department=E"], ["complete", "completable-prompt", "name=A", "department=Engineering"]],
            completion,
        ),
        Group(
            "logging",
            [["set-log-level", "debug"], ["call-tool", "toggle-simulated-logging"], ["ping"], ["call-tool", "toggle-simulated-logging"]],
            logging,
            options=["-vv"],
        ),
        Group("progress", [["call-tool", "trigger-long-running-operation", "duration=1", "steps=3"]], progress, options=["-vv"]),
        Group("ping", [["ping"]], lambda r: expect(r.ok(0) == {}, f"ping gave {short(r.ok(0))}")),
        Group("roots", [["roots", "add", ROOT_URI], ["call-tool", "get-roots-list"]], roots),
        Group("sampling", [["call-tool", "trigger-sampling-request", "prompt=hi"]], sampling, want_rc=-1),
        # 2025-11-25 tasks: simulate-research-query must be called as a task (about 4 s).
        Group(
            "tasks",
            [["task", "simulate-research-query", "topic=tides"], ["task-result"], ["task-status"], ["tasks"]],
            tasks,
        ),
    ]


def main() -> int:
    argv = sys.argv[1:]
    split = argv.index("--") if "--" in argv else len(argv)
    parser = argparse.ArgumentParser()
    parser.add_argument("--talaria", required=True)
    parser.add_argument("--prefix", required=True)
    parser.add_argument("--flavor", choices=["sdk", "server-everything"], required=True)
    parser.add_argument("--protocol-version")
    parser.add_argument("--era", choices=["legacy", "modern"], default="legacy")
    parser.add_argument("--want-protocol")
    parser.add_argument("--json-replies", action="store_true")
    args = parser.parse_args(argv[:split])
    connection = argv[split + 1 :]

    groups = sdk_groups(args.era, args.json_replies) if args.flavor == "sdk" else everything_groups()
    want_protocol = args.want_protocol or args.protocol_version
    failed = 0
    for i, group in enumerate(groups):
        flags = ["--protocol-version", args.protocol_version] if args.protocol_version else []
        # The first group also reports the negotiated protocol (-v).
        flags += group.options + (["-v"] if i == 0 and "-vv" not in group.options else [])
        if "--timeout" not in group.options:
            flags += ["--timeout", "10s"]  # a stuck request fails its group, not the whole run
        command = [args.talaria, "--json", "--no-color", *flags, *connection]
        for words in group.commands:
            command += [":::", *words]
        try:
            if group.interactive is not None:
                group.interactive([args.talaria, "--no-color", *flags, *connection])
                print(f"PASS {args.prefix}/{group.name}", flush=True)
                continue
            proc = subprocess.run(command, capture_output=True, text=True, timeout=40, stdin=subprocess.DEVNULL)
            print(f"$ {' '.join(command)}\n{proc.stdout}{proc.stderr}", file=sys.stderr)
            run = Run(command, proc.returncode, decode_all(proc.stdout), proc.stderr)
            if i == 0 and want_protocol:
                got = re.search(r"\(protocol ([^)]+)\)", proc.stderr)
                expect(got is not None and got.group(1) == want_protocol, f"negotiated {got and got.group(1)}, wanted {want_protocol}")
            group.check(run)
            if group.want_rc >= 0:
                expect(run.rc == group.want_rc, f"exit code {run.rc}, wanted {group.want_rc}")
            print(f"PASS {args.prefix}/{group.name}", flush=True)
        except (CheckFailed, subprocess.TimeoutExpired, json.JSONDecodeError, KeyError, IndexError, TypeError, OSError) as e:
            failed += 1
            reason = str(e) if isinstance(e, CheckFailed) else f"{type(e).__name__}: {e}"
            print(f"FAIL {args.prefix}/{group.name}: {short(reason, 300)}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
