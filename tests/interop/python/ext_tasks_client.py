"""A reference client for the 2026-07-28 tasks extension (io.modelcontextprotocol/tasks),
written from the extension's specification (modelcontextprotocol/ext-tasks,
specification/2026-07-28/tasks.md) with raw JSON-RPC, because the official Python SDK 2.3
does not implement the extension. It drives a Talaria server's `slow` tool (taskSupport
optional) over stdio or Streamable HTTP.

Prints `PASS <prefix>/<group>` or `FAIL <prefix>/<group>: <reason>` per group.

usage: ext_tasks_client.py --prefix NAME (--stdio CMD... | --http URL)
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
import urllib.error
import urllib.request
from typing import Any, Callable

VERSION = "2026-07-28"
TASKS = "io.modelcontextprotocol/tasks"


class Failed(Exception):
    pass


def expect(ok: bool, why: str) -> None:
    if not ok:
        raise Failed(why)


def meta(with_tasks: bool) -> dict[str, Any]:
    return {
        "io.modelcontextprotocol/protocolVersion": VERSION,
        "io.modelcontextprotocol/clientCapabilities": {"extensions": {TASKS: {}}} if with_tasks else {},
        "io.modelcontextprotocol/clientInfo": {"name": "ext-tasks-reference", "version": "1"},
    }


class Stdio:
    """Newline-delimited JSON-RPC to a child process."""

    def __init__(self, command: list[str]) -> None:
        self.proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def request(self, message: dict[str, Any]) -> dict[str, Any]:
        assert self.proc.stdin and self.proc.stdout
        self.proc.stdin.write(json.dumps(message) + "\n")
        self.proc.stdin.flush()
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise Failed("the server closed its stdout")
            frame = json.loads(line)
            if frame.get("id") == message["id"] and "method" not in frame:
                return frame

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait()


class Http:
    """One POST per request, with the 2026-07-28 mirrored headers (Mcp-Name = taskId for the
    extension's methods, as it requires)."""

    def __init__(self, url: str) -> None:
        self.url = url

    def request(self, message: dict[str, Any]) -> dict[str, Any]:
        params = message.get("params", {})
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": VERSION,
            "Mcp-Method": message["method"],
        }
        name = params.get("name") or params.get("taskId")
        if name:
            headers["Mcp-Name"] = name
        req = urllib.request.Request(self.url, json.dumps(message).encode(), headers, method="POST")
        try:
            with urllib.request.urlopen(req, timeout=30) as resp:
                body = resp.read().decode()
                kind = resp.headers.get("Content-Type", "")
        except urllib.error.HTTPError as e:
            body, kind = e.read().decode(), e.headers.get("Content-Type", "")
        if "text/event-stream" in kind:
            frames = [json.loads(l[5:]) for l in body.splitlines() if l.startswith("data:") and l[5:].strip()]
            answers = [f for f in frames if f.get("id") == message["id"] and "method" not in f]
            expect(bool(answers), f"no answer in the event stream: {body[:200]}")
            return answers[-1]
        return json.loads(body)

    def close(self) -> None:
        pass


class Client:
    def __init__(self, transport: Stdio | Http) -> None:
        self.t = transport
        self.next_id = 0

    def send(self, method: str, params: dict[str, Any], with_tasks: bool = True) -> dict[str, Any]:
        self.next_id += 1
        params = dict(params, _meta=meta(with_tasks))
        return self.t.request({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})

    def result(self, method: str, params: dict[str, Any], with_tasks: bool = True) -> dict[str, Any]:
        reply = self.send(method, params, with_tasks)
        expect("result" in reply, f"{method} failed: {reply}")
        return reply["result"]

    def error(self, method: str, params: dict[str, Any], with_tasks: bool = True) -> dict[str, Any]:
        reply = self.send(method, params, with_tasks)
        expect("error" in reply, f"{method} should have failed: {reply}")
        return reply["error"]

    def poll(self, task_id: str, done: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        deadline = time.monotonic() + 20
        while True:
            task = self.result("tasks/get", {"taskId": task_id})
            expect(task.get("resultType") == "complete", f"tasks/get resultType {task.get('resultType')!r}")
            expect(task.get("taskId") == task_id, f"tasks/get for another task: {task}")
            if done(task):
                return task
            expect(time.monotonic() < deadline, f"the task never got there: {task}")
            time.sleep(min(task.get("pollIntervalMs", 100), 200) / 1000)


def discover(c: Client) -> None:
    r = c.result("server/discover", {})
    expect(VERSION in r.get("supportedVersions", []), f"supportedVersions {r.get('supportedVersions')}")
    expect(TASKS in r.get("capabilities", {}).get("extensions", {}), f"extensions {r.get('capabilities')}")


def completes(c: Client) -> None:
    created = c.result("tools/call", {"name": "slow", "arguments": {"steps": 3, "step_ms": 30}})
    expect(created.get("resultType") == "task", f"expected a task, got {created}")
    for field in ("taskId", "status", "createdAt", "lastUpdatedAt"):
        expect(field in created, f"CreateTaskResult without {field}: {created}")
    expect("ttlMs" in created, f"CreateTaskResult without ttlMs (null or a number): {created}")
    expect(created["status"] == "working", f"status {created['status']}")
    task = c.poll(created["taskId"], lambda t: t["status"] != "working")
    expect(task["status"] == "completed", f"ended {task['status']}: {task}")
    texts = [b.get("text") for b in task["result"].get("content", [])]
    expect(texts == ["done after 3 steps"], f"result {task['result']}")


def slow_stats(c: Client) -> dict[str, int]:
    stats = c.result("tools/call", {"name": "slow-stats", "arguments": {}}, with_tasks=False)
    return stats.get("structuredContent") or json.loads(stats["content"][0]["text"])


def cancels(c: Client) -> None:
    before = slow_stats(c)
    created = c.result("tools/call", {"name": "slow", "arguments": {"steps": 1000, "step_ms": 20}})
    expect(created.get("resultType") == "task", f"expected a task, got {created}")
    # Cancel once the tool runs: a task cancelled before its work starts is ended without
    # running it, and this checks that a running tool is told to stop.
    deadline = time.monotonic() + 10
    while slow_stats(c).get("started", 0) <= before.get("started", 0):
        expect(time.monotonic() < deadline, "the tool never started")
        time.sleep(0.02)
    ack = c.result("tasks/cancel", {"taskId": created["taskId"]})
    expect(ack.get("resultType") == "complete", f"cancel ack {ack}")
    task = c.poll(created["taskId"], lambda t: t["status"] != "working")
    expect(task["status"] == "cancelled", f"after tasks/cancel: {task}")
    # The tool saw the cancellation and stopped (slow-stats counts it).
    deadline = time.monotonic() + 10
    while True:
        counts = slow_stats(c)
        if counts.get("cancelled", 0) > before.get("cancelled", 0):
            break
        expect(time.monotonic() < deadline, f"the tool never stopped: {counts}")
        time.sleep(0.05)


def without_extension(c: Client) -> None:
    plain = c.result("tools/call", {"name": "slow", "arguments": {"steps": 1, "step_ms": 1}}, with_tasks=False)
    expect(plain.get("resultType", "complete") == "complete", f"a task for a client without the extension: {plain}")
    expect(plain["content"][0]["text"] == "done after 1 steps", f"plain result {plain}")
    err = c.error("tasks/get", {"taskId": "x"}, with_tasks=False)
    expect(err["code"] == -32021, f"tasks/get without the extension: {err}")
    required = err.get("data", {}).get("requiredCapabilities", {})
    expect(TASKS in required.get("extensions", {}), f"-32021 names {required}")


def unknown_task(c: Client) -> None:
    for method in ("tasks/get", "tasks/cancel"):
        err = c.error(method, {"taskId": "no-such-task"})
        expect(err["code"] == -32602, f"{method} of an unknown task: {err}")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--prefix", required=True)
    parser.add_argument("--http")
    parser.add_argument("--stdio", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    transport: Stdio | Http = Http(args.http) if args.http else Stdio(args.stdio)
    client = Client(transport)
    failed = 0
    try:
        for name, group in [
            ("discover", discover),
            ("completes", completes),
            ("cancels", cancels),
            ("without-extension", without_extension),
            ("unknown-task", unknown_task),
        ]:
            try:
                group(client)
                print(f"PASS {args.prefix}/{name}", flush=True)
            except Exception as e:  # noqa: BLE001 - every failure is reported, not raised
                failed += 1
                print(f"FAIL {args.prefix}/{name}: {str(e)[:300]}", flush=True)
    finally:
        transport.close()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
