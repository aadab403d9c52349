"""A reference server for the 2026-07-28 tasks extension (io.modelcontextprotocol/tasks),
written from the extension's specification (modelcontextprotocol/ext-tasks,
specification/2026-07-28/tasks.md) with raw JSON-RPC over stdio, because the official Python
SDK 2.3 does not implement the extension; and the check that drives Talaria's CLI against it.

`--serve` runs the server: one tool, `greet`, which it only ever runs as a task (a client
without the extension gets -32021 naming it). The task asks the user's name through
`inputRequests` on its first poll, takes the answer from `tasks/update`, and completes with
"Hello, <name>!". It appends every request it receives to the file named by `--journal`.

Without `--serve` it is the check: `talaria --json --elicitation accept-defaults stdio --
<this server> ::: call greet`, judged by the CLI's output and the server's journal. Prints
`PASS <prefix>/<group>` or `FAIL <prefix>/<group>: <reason>`.

usage: ext_tasks_server.py --talaria PATH --prefix NAME
       ext_tasks_server.py --serve --journal FILE
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from datetime import datetime, timezone
from typing import Any

VERSION = "2026-07-28"
TASKS = "io.modelcontextprotocol/tasks"
QUESTION = {
    "method": "elicitation/create",
    "params": {
        "mode": "form",
        "message": "Your name?",
        "requestedSchema": {
            "type": "object",
            "properties": {"name": {"type": "string", "default": "Ada"}},
            "required": ["name"],
        },
    },
}


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def serve(journal: str) -> None:
    tasks: dict[str, dict[str, Any]] = {}
    answers: dict[str, dict[str, Any]] = {}

    def task_view(task_id: str) -> dict[str, Any]:
        task = dict(tasks[task_id])
        if task["status"] == "input_required":
            task["inputRequests"] = {"name": QUESTION}
        return task

    for line in sys.stdin:
        message = json.loads(line)
        with open(journal, "a", encoding="utf-8") as log:
            log.write(json.dumps(message) + "\n")
        if "id" not in message or "method" not in message:
            continue
        method, params = message["method"], message.get("params", {})
        caps = params.get("_meta", {}).get("io.modelcontextprotocol/clientCapabilities", {})
        declared = TASKS in caps.get("extensions", {})
        result: dict[str, Any] | None = None
        error: dict[str, Any] | None = None
        missing = {
            "code": -32021,
            "message": "Missing required client capability",
            "data": {"requiredCapabilities": {"extensions": {TASKS: {}}}},
        }
        if method == "server/discover":
            result = {
                "supportedVersions": [VERSION],
                "capabilities": {"tools": {}, "extensions": {TASKS: {}}},
                "cacheScope": "public",
                "ttlMs": 0,
                "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "ext-tasks-reference", "version": "1"}},
            }
        elif method == "tools/list":
            tools = [{"name": "greet", "description": "Greets you, as a task", "inputSchema": {"type": "object"}}]
            result = {"tools": tools, "cacheScope": "public", "ttlMs": 0}
        elif method == "tools/call" and params.get("name") == "greet":
            if not declared:
                error = missing
            else:
                task_id = f"task-{len(tasks) + 1}"
                stamp = now()
                tasks[task_id] = {
                    "taskId": task_id,
                    "status": "working",
                    "createdAt": stamp,
                    "lastUpdatedAt": stamp,
                    "ttlMs": 60000,
                    "pollIntervalMs": 50,
                }
                message_out = dict(tasks[task_id], resultType="task")
                result = message_out
        elif method in ("tasks/get", "tasks/update", "tasks/cancel"):
            task_id = params.get("taskId")
            if not declared:
                error = missing
            elif task_id not in tasks:
                error = {"code": -32602, "message": "Failed to retrieve task: Task not found"}
            elif method == "tasks/get":
                task = tasks[task_id]
                if task["status"] == "working" and task_id not in answers:
                    task["status"] = "input_required"
                elif task["status"] == "working":
                    name = answers[task_id].get("content", {}).get("name", "?")
                    task["status"] = "completed"
                    task["result"] = {"content": [{"type": "text", "text": f"Hello, {name}!"}], "isError": False}
                task["lastUpdatedAt"] = now()
                result = task_view(task_id)
            elif method == "tasks/update":
                answer = params.get("inputResponses", {}).get("name")
                if answer is not None and tasks[task_id]["status"] == "input_required":
                    answers[task_id] = answer
                    tasks[task_id]["status"] = "working"
                result = {}
            else:
                if tasks[task_id]["status"] not in ("completed", "failed", "cancelled"):
                    tasks[task_id]["status"] = "cancelled"
                result = {}
        else:
            error = {"code": -32601, "message": f"Method not found: {method}"}
        reply: dict[str, Any] = {"jsonrpc": "2.0", "id": message["id"]}
        if error is not None:
            reply["error"] = error
        else:
            assert result is not None
            result.setdefault("resultType", "complete")
            reply["result"] = result
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


def check(talaria: str, prefix: str) -> int:
    failed = 0

    def report(group: str, problem: str | None) -> None:
        nonlocal failed
        if problem is None:
            print(f"PASS {prefix}/{group}", flush=True)
        else:
            failed += 1
            print(f"FAIL {prefix}/{group}: {problem[:300]}", flush=True)

    with tempfile.TemporaryDirectory() as tmp:
        journal = os.path.join(tmp, "journal.jsonl")
        server = [sys.executable, os.path.abspath(__file__), "--serve", "--journal", journal]
        command = [talaria, "--json", "--no-color", "--elicitation", "accept-defaults", "stdio", "--", *server]
        run = subprocess.run([*command, ":::", "call", "greet"], capture_output=True, text=True, timeout=60)
        values = []
        for line in run.stdout.splitlines():
            try:
                values.append(json.loads(line))
            except json.JSONDecodeError:
                pass
        texts = [c.get("text") for v in values if isinstance(v, dict) for c in v.get("content", [])]
        report(
            "task-followed-to-its-result",
            None if "Hello, Ada!" in texts else f"rc {run.returncode}, stdout {run.stdout[-300:]!r}, stderr {run.stderr[-300:]!r}",
        )
        seen = []
        if os.path.exists(journal):
            with open(journal, encoding="utf-8") as log:
                seen = [json.loads(l) for l in log if l.strip()]
        calls = [m for m in seen if m.get("method") == "tools/call"]
        declared = [
            TASKS in m["params"].get("_meta", {}).get("io.modelcontextprotocol/clientCapabilities", {}).get("extensions", {})
            for m in calls
        ]
        report("declares-the-extension", None if declared and all(declared) else f"tools/call capabilities: {calls}")
        updates = [m["params"] for m in seen if m.get("method") == "tasks/update"]
        answered = [u.get("inputResponses", {}).get("name") for u in updates]
        report(
            "answers-input-once",
            None
            if len(answered) == 1 and answered[0].get("action") == "accept" and answered[0].get("content") == {"name": "Ada"}
            else f"tasks/update sent: {updates}",
        )
        gets = [m for m in seen if m.get("method") == "tasks/get"]
        report("polls-tasks-get", None if len(gets) >= 2 else f"{len(gets)} tasks/get")

        # The CLI's task commands: start one and keep its id, look at it, watch it to its
        # result (answering its question), then start another and cancel it.
        steps = ["task", "greet", ":::", "task-status", ":::", "watch", ":::", "task", "greet", ":::", "cancel-task", ":::", "task-status"]
        run = subprocess.run([*command, ":::", *steps], capture_output=True, text=True, timeout=60)
        values = [json.loads(line) for line in run.stdout.splitlines() if line.strip().startswith("{")]
        problem = None
        try:
            first, status, watched, second, cancelled, after = values
            if first.get("resultType") != "task" or not first.get("taskId"):
                problem = f"task gave {first}"
            elif status.get("taskId") != first["taskId"] or status.get("status") not in ("working", "input_required"):
                problem = f"task-status gave {status}"
            elif [c.get("text") for c in watched.get("content", [])] != ["Hello, Ada!"]:
                problem = f"watch gave {watched}"
            elif second.get("taskId") in (None, first["taskId"]) or cancelled.get("ok") is not True:
                problem = f"second task {second}, cancel {cancelled}"
            elif after.get("status") != "cancelled":
                problem = f"after cancel-task: {after}"
        except ValueError:
            problem = f"rc {run.returncode}, stdout {run.stdout[-300:]!r}, stderr {run.stderr[-300:]!r}"
        report("cli-start-status-watch-cancel", problem)
    return 1 if failed else 0


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--serve", action="store_true")
    parser.add_argument("--journal")
    parser.add_argument("--talaria")
    parser.add_argument("--prefix")
    args = parser.parse_args()
    if args.serve:
        serve(args.journal)
        return 0
    return check(args.talaria, args.prefix)


if __name__ == "__main__":
    sys.exit(main())
