"""Drives Talaria's everything-server with the official Python MCP SDK client.

Prints one line per feature group, `PASS <prefix>/<group>` or `FAIL <prefix>/<group>: <reason>`,
on stdout; diagnostics go to stderr. Exit status: 0 all passed, 1 some failed.

usage: client.py --prefix NAME --mode legacy|auto|2026-07-28
                 (--stdio CMD [ARGS...] | --http URL | --sse URL)
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import traceback
from typing import Any

import anyio
import warnings
import mcp_types as types
from mcp import Client, MCPDeprecationWarning, MCPError, StdioServerParameters
from mcp.client.sse import sse_client
from mcp_types import LOG_LEVEL_META_KEY

# The tool that reports what happened to `slow` calls (process-wide counters).
SLOW_STATS_TOOL = "slow-stats"
EXPECTED_TOOLS = {"echo", "add", "fail", "calls", "log", "slow", "sample", "elicit", "roots"}
ROOT_URI = "file:///tmp/talaria-interop-root"
GROUP_TIMEOUT = 20.0

warnings.filterwarnings("ignore", category=MCPDeprecationWarning)


class CheckFailed(Exception):
    pass


def expect(condition: bool, message: str) -> None:
    if not condition:
        raise CheckFailed(message)


def short(value: Any, limit: int = 160) -> str:
    text = value if isinstance(value, str) else repr(value)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def describe(error: BaseException) -> str:
    """`Type: message`, and for an exception group the same of each exception it holds (a task
    group's `unhandled errors (1 sub-exception)` alone says nothing of what went wrong)."""
    text = f"{type(error).__name__}: {error}"
    if isinstance(error, BaseExceptionGroup):
        text += " [" + "; ".join(describe(inner) for inner in error.exceptions) + "]"
    return text


def texts(result: types.CallToolResult) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, types.TextContent))


# When the server offers the client's model tools, the model asks for the weather tool under
# this id, then answers with the tool's result.
WEATHER_CALL_ID = "call-py-1"
# The page the url-elicitation group has the server send the user to.
LINK_URL = "https://example.com/interop/link?from=python"


class Recorder:
    """What the client's handlers saw."""

    def __init__(self) -> None:
        self.logs: list[types.LoggingMessageNotificationParams] = []
        self.sampling: list[types.CreateMessageRequestParams] = []
        self.elicitation: list[types.ElicitRequestParams] = []
        self.completions: list[str] = []
        self.roots_asked = 0

    async def on_log(self, params: types.LoggingMessageNotificationParams) -> None:
        self.logs.append(params)

    async def on_message(self, message: Any) -> None:
        if isinstance(message, types.ElicitCompleteNotification):
            self.completions.append(message.params.elicitation_id)

    async def on_sampling(self, _ctx: Any, params: types.CreateMessageRequestParams) -> Any:
        self.sampling.append(params)
        if params.tools:
            last = params.messages[-1].content_as_list
            results = [c for c in last if isinstance(c, types.ToolResultContent)]
            if not results:
                return types.CreateMessageResultWithTools(
                    role="assistant",
                    content=[types.ToolUseContent(id=WEATHER_CALL_ID, name="weather", input={"city": "Paris"})],
                    model="interop-model",
                    stop_reason="toolUse",
                )
            said = " ".join(c.text for c in results[0].content if isinstance(c, types.TextContent))
            return types.CreateMessageResultWithTools(
                role="assistant",
                content=[types.TextContent(type="text", text=f"python heard: {said}")],
                model="interop-model",
                stop_reason="endTurn",
            )
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text="pong from python"),
            model="interop-model",
            stop_reason="endTurn",
        )

    async def on_elicitation(self, _ctx: Any, params: types.ElicitRequestParams) -> Any:
        self.elicitation.append(params)
        if isinstance(params, types.ElicitRequestURLParams):
            return types.ElicitResult(action="accept")
        return types.ElicitResult(action="accept", content={"answer": "forty-two"})

    async def on_roots(self, _ctx: Any) -> Any:
        self.roots_asked += 1
        return types.ListRootsResult(roots=[types.Root(uri=ROOT_URI, name="interop")])


async def wait_for(predicate, seconds: float = 2.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        await anyio.sleep(0.02)
    return predicate()


async def list_all(fetch, attr: str) -> list[Any]:
    """Follows pagination cursors to the end."""
    items: list[Any] = []
    cursor: str | None = None
    for _ in range(100):
        page = await fetch(cursor=cursor)
        items.extend(getattr(page, attr))
        cursor = page.next_cursor
        if not cursor:
            return items
    raise CheckFailed(f"{attr}: more than 100 pages")


class Checks:
    def __init__(self, client: Client, rec: Recorder, legacy: bool, transport: str, server_name: str) -> None:
        self.c = client
        self.server_name = server_name
        # Our everything-server has a few extras the SDK-built peer servers lack.
        self.ours = server_name == "everything-server"
        self.rec = rec
        self.legacy = legacy
        self.transport = transport

    async def lifecycle(self) -> None:
        c = self.c
        if self.legacy:
            expect(c.protocol_version == "2025-11-25", f"negotiated {c.protocol_version}, wanted 2025-11-25")
        else:
            expect(c.protocol_version == "2026-07-28", f"negotiated {c.protocol_version}, wanted 2026-07-28")
        expect(c.server_info is not None and c.server_info.name == self.server_name, f"serverInfo {c.server_info}")
        caps = c.server_capabilities
        for name in ("tools", "prompts", "resources", "completions"):
            expect(getattr(caps, name) is not None, f"capability {name} missing: {caps}")
        if self.legacy:
            expect(caps.logging is not None, "logging capability missing")
            expect(bool(c.instructions), "no instructions")
            await c.session.send_ping()

    async def listing(self) -> None:
        tools = await list_all(self.c.list_tools, "tools")
        names = {t.name for t in tools}
        wanted = EXPECTED_TOOLS if self.ours else EXPECTED_TOOLS - {"calls"}
        expect(wanted <= names, f"tools missing: {sorted(wanted - names)}")
        add = next(t for t in tools if t.name == "add")
        expect(add.output_schema is not None, "add has no outputSchema")
        prompts = await list_all(self.c.list_prompts, "prompts")
        greet = next((p for p in prompts if p.name == "greet"), None)
        expect(greet is not None, f"prompt greet missing: {[p.name for p in prompts]}")
        args = {a.name: a.required for a in greet.arguments or []}
        expect(args.get("name") is True and "tone" in args, f"greet arguments {args}")
        resources = await list_all(self.c.list_resources, "resources")
        uris = {str(r.uri) for r in resources}
        wanted = {"file:///readme.md", "file:///pixel.png"} if self.ours else {"file:///readme.md"}
        expect(wanted <= uris, f"resources {sorted(uris)}")
        templates = await list_all(self.c.list_resource_templates, "resource_templates")
        expect(any(t.uri_template == "notes://{id}" for t in templates), f"templates {templates}")

    async def tools(self) -> None:
        c = self.c
        r = await c.call_tool("echo", {"text": "hello interop"})
        expect(not r.is_error and texts(r) == "hello interop", f"echo gave {short(r)}")
        r = await c.call_tool("fail", {})
        expect(r.is_error is True, f"fail: isError not set: {short(r)}")
        expect("always fails" in texts(r), f"fail text {short(texts(r))}")
        # The SDK validates structuredContent against the listed outputSchema.
        await c.list_tools()
        r = await c.call_tool("add", {"a": 2, "b": 40})
        expect(not r.is_error, f"add isError: {short(r)}")
        expect(r.structured_content == {"sum": 42}, f"add structuredContent {r.structured_content}")
        if self.legacy and self.ours:
            await c.call_tool("echo", {"text": "again"})
            r = await c.call_tool("calls", {})
            expect(texts(r) == "2", f"calls (per-connection state) says {short(texts(r))}, wanted 2")

    async def prompts(self) -> None:
        r = await self.c.get_prompt("greet", {"name": "Ada", "tone": "formal"})
        got = [(m.role, getattr(m.content, "text", None)) for m in r.messages]
        want = [("user", "Greet Ada in a formal tone."), ("assistant", "Hello, Ada!")]
        expect(got == want, f"greet gave {got}")

    async def resources(self) -> None:
        r = await self.c.read_resource("file:///readme.md")
        expect(len(r.contents) == 1, f"readme: {len(r.contents)} contents")
        item = r.contents[0]
        expect(isinstance(item, types.TextResourceContents), f"readme not text: {short(item)}")
        expect(item.text.startswith("# "), f"readme text {short(item.text)}")
        expect(item.mime_type == "text/markdown", f"readme mimeType {item.mime_type}")
        if self.ours:
            r = await self.c.read_resource("file:///pixel.png")
            item = r.contents[0]
            blob = isinstance(item, types.BlobResourceContents) and item.blob == "iVBORw0KGgo="
            expect(blob, f"pixel {short(item)}")
        r = await self.c.read_resource("notes://42")
        item = r.contents[0]
        expect(getattr(item, "text", None) == "note 42", f"notes://42 gave {short(item)}")
        expect(str(item.uri) == "notes://42", f"notes://42 uri {item.uri}")
        if self.legacy and self.c.server_capabilities.resources.subscribe:
            await self.c.subscribe_resource("file:///readme.md")
            await self.c.unsubscribe_resource("file:///readme.md")

    async def errors(self) -> None:
        async def code_of(call) -> int | None:
            try:
                await call()
            except MCPError as e:
                return e.code
            return None

        got = await code_of(lambda: self.c.call_tool("no-such-tool", {}))
        expect(got == -32602, f"unknown tool: error code {got}, wanted -32602")
        r = await self.c.call_tool("add", {"a": "two", "b": 40})
        expect(r.is_error is True, f"add with a string argument: isError not set: {short(r)}")
        got = await code_of(lambda: self.c.get_prompt("no-such-prompt", {}))
        expect(got == -32602, f"unknown prompt: error code {got}, wanted -32602")
        # Resource not found: -32002 until 2025-11-25, -32602 from 2026-07-28 (where -32002 is retired).
        want = -32002 if self.legacy else -32602
        got = await code_of(lambda: self.c.read_resource("file:///no-such-resource"))
        expect(got == want, f"unknown resource: error code {got}, wanted {want}")

    async def completion(self) -> None:
        r = await self.c.complete(types.PromptReference(type="ref/prompt", name="greet"), {"name": "name", "value": "a"})
        expect(r.completion.values == ["Ada", "Alan"], f"complete 'a' gave {r.completion.values}")
        r = await self.c.complete(
            types.ResourceTemplateReference(type="ref/resource", uri="notes://{id}"), {"name": "id", "value": "g"}
        )
        expect(r.completion.values == ["Grace"], f"complete 'g' gave {r.completion.values}")

    async def logging(self) -> None:
        async def levels_after(call) -> list[str]:
            self.rec.logs.clear()
            r = await call()
            expect(texts(r) == "logged", f"log tool gave {short(r)}")
            await anyio.sleep(0.2)  # notifications are handled on their own tasks
            return [p.level for p in self.rec.logs]

        if self.legacy:
            await self.c.set_logging_level("warning")
            got = await levels_after(lambda: self.c.call_tool("log", {}))
            expect(got == ["warning", "error"], f"at level warning got {got}")
            await self.c.set_logging_level("debug")
            got = await levels_after(lambda: self.c.call_tool("log", {}))
            expect(got == ["debug", "info", "warning", "error"], f"at level debug got {got}")
        else:
            got = await levels_after(lambda: self.c.call_tool("log", {}))
            expect(got == [], f"without the logLevel opt-in got {got}")
            got = await levels_after(lambda: self.c.call_tool("log", {}, meta={LOG_LEVEL_META_KEY: "warning"}))
            expect(got == ["warning", "error"], f"at logLevel warning got {got}")
        expect(all(p.data.get("level") for p in self.rec.logs), f"log data {self.rec.logs}")

    async def progress(self) -> None:
        seen: list[tuple[float, float | None, str | None]] = []

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            seen.append((progress, total, message))

        r = await self.c.call_tool("slow", {"steps": 3, "step_ms": 50}, progress_callback=on_progress)
        expect(texts(r) == "done after 3 steps", f"slow gave {short(r)}")
        await wait_for(lambda: len(seen) >= 3, 1.0)
        expect([p for p, _, _ in seen] == [1.0, 2.0, 3.0], f"progress values {seen}")
        expect(all(t == 3.0 for _, t, _ in seen), f"progress totals {seen}")

    async def slow_stats(self) -> dict[str, int]:
        r = await self.c.call_tool(SLOW_STATS_TOOL, {})
        expect(not r.is_error, f"{SLOW_STATS_TOOL} isError: {short(texts(r))}")
        try:
            return json.loads(texts(r))  # the counters as a JSON text
        except json.JSONDecodeError:
            return dict(r.structured_content or {})

    async def cancellation(self) -> None:
        tools = {t.name for t in await list_all(self.c.list_tools, "tools")}
        expect(
            SLOW_STATS_TOOL in tools,
            f"everything-server has no {SLOW_STATS_TOOL} tool, so whether the cancelled work stopped is unobservable",
        )
        before = await self.slow_stats()
        started = anyio.Event()

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            started.set()

        t0 = time.monotonic()
        with anyio.move_on_after(10) as scope:
            async with anyio.create_task_group() as tg:

                async def call() -> None:
                    await self.c.call_tool("slow", {"steps": 50, "step_ms": 100}, progress_callback=on_progress)
                    raise CheckFailed("the slow call finished instead of being cancelled")

                tg.start_soon(call)
                await started.wait()
                tg.cancel_scope.cancel()  # abandons the call: the SDK sends notifications/cancelled
        expect(not scope.cancelled_caught, "no progress within 10s")
        # The call would take 5s; the server must record it as cancelled well before that.
        after: dict[str, int] = {}
        deadline = time.monotonic() + 3.0
        while time.monotonic() < deadline:
            after = await self.slow_stats()
            if after.get("cancelled", 0) > before.get("cancelled", 0):
                break
            await anyio.sleep(0.1)
        elapsed = time.monotonic() - t0
        expect(
            after.get("cancelled", 0) == before.get("cancelled", 0) + 1,
            f"server did not record the cancelled slow call within {elapsed:.1f}s: before {before}, after {after}",
        )
        expect(after.get("completed") == before.get("completed"), f"a slow call completed: {before} -> {after}")
        r = await self.c.call_tool("echo", {"text": "still alive"})
        expect(texts(r) == "still alive", "server unresponsive after the cancellation")

    async def sampling(self) -> None:
        r = await self.c.call_tool("sample", {"question": "ping?"})
        expect(not r.is_error, f"sample isError: {short(texts(r))}")
        expect(len(self.rec.sampling) == 1, f"sampling callback ran {len(self.rec.sampling)} times")
        params = self.rec.sampling[0]
        expect(params.max_tokens == 100, f"maxTokens {params.max_tokens}")
        first = params.messages[0]
        expect(first.role == "user" and getattr(first.content, "text", None) == "ping?", f"messages {params.messages}")
        expect("pong from python" in texts(r), f"sample gave {short(texts(r))}")

    async def elicitation(self) -> None:
        r = await self.c.call_tool("elicit", {"question": "the answer?"})
        expect(not r.is_error, f"elicit isError: {short(texts(r))}")
        expect(len(self.rec.elicitation) == 1, f"elicitation callback ran {len(self.rec.elicitation)} times")
        params = self.rec.elicitation[0]
        expect(params.message == "the answer?", f"elicitation message {params.message!r}")
        answer = json.loads(texts(r))
        expect(answer.get("action") == "accept", f"elicit gave {answer}")
        expect(answer.get("content") == {"answer": "forty-two"}, f"elicit gave {answer}")

    async def roots(self) -> None:
        r = await self.c.call_tool("roots", {})
        expect(not r.is_error, f"roots isError: {short(texts(r))}")
        expect(self.rec.roots_asked == 1, f"roots callback ran {self.rec.roots_asked} times")
        expect(texts(r) == ROOT_URI, f"roots gave {short(texts(r))}")

    async def sampling_tools(self) -> None:
        """2025-11-25 sampling with tools: the server offers the model a tool, the model asks for
        it (tool_use), the server sends the result back (tool_result), the model answers."""
        before = len(self.rec.sampling)
        r = await self.c.call_tool("sample", {"question": "weather in Paris?", "tools": True})
        expect(not r.is_error, f"sample with tools isError: {short(texts(r))}")
        asked = self.rec.sampling[before:]
        expect(len(asked) == 2, f"sampling callback ran {len(asked)} times, wanted 2 (tool_use, then tool_result)")
        first, second = asked
        tools = {t.name: t for t in first.tools or []}
        expect(list(tools) == ["weather"], f"tools offered {list(tools)}")
        schema = tools["weather"].input_schema
        expect(schema.get("required") == ["city"] and "city" in schema.get("properties", {}), f"weather inputSchema {schema}")
        mode = first.tool_choice.mode if first.tool_choice else None
        expect(mode == "auto", f"toolChoice {first.tool_choice}")
        expect(second.tools is not None and second.tool_choice is not None, "the follow-up dropped tools/toolChoice")
        roles = [m.role for m in second.messages]
        expect(roles == ["user", "assistant", "user"], f"follow-up roles {roles}")
        use = second.messages[1].content_as_list
        expect(
            len(use) == 1 and isinstance(use[0], types.ToolUseContent) and use[0].id == WEATHER_CALL_ID
            and use[0].input == {"city": "Paris"},
            f"follow-up assistant message {short(use)}",
        )
        result = second.messages[2].content_as_list
        expect(
            len(result) == 1 and isinstance(result[0], types.ToolResultContent) and result[0].tool_use_id == WEATHER_CALL_ID,
            f"follow-up tool_result {short(result)}",
        )
        said = [c.text for c in result[0].content if isinstance(c, types.TextContent)]
        expect(said == ["sunny, 18 degrees in Paris"], f"tool_result content {said}")
        prefix = "the model said: "
        expect(texts(r).startswith(prefix), f"sample with tools gave {short(texts(r))}")
        final = json.loads(texts(r)[len(prefix) :])
        want = [{"type": "text", "text": "python heard: sunny, 18 degrees in Paris"}]
        expect(final == want, f"the model's final answer reached the server as {short(final)}")

    async def url_elicitation(self) -> None:
        """URL-mode elicitation. 2025-11-25: an elicitationId, and once accepted
        notifications/elicitation/complete with that id. 2026-07-28: an input request with no
        elicitationId, and no completion notification (the revision has none)."""
        before = len(self.rec.elicitation)
        r = await self.c.call_tool("elicit", {"question": "sign in, please", "url": LINK_URL})
        expect(not r.is_error, f"elicit with a url isError: {short(texts(r))}")
        asked = self.rec.elicitation[before:]
        expect(len(asked) == 1, f"elicitation callback ran {len(asked)} times")
        params = asked[0]
        expect(isinstance(params, types.ElicitRequestURLParams), f"not a URL elicitation: {short(params)}")
        expect(params.mode == "url", f"mode {params.mode!r}")
        expect(params.url == LINK_URL and params.message == "sign in, please", f"url {params.url!r} message {params.message!r}")
        answer = json.loads(texts(r))
        expect(answer.get("action") == "accept", f"elicit with a url gave {answer}")
        if self.legacy:
            eid = params.elicitation_id
            expect(bool(eid) and eid == answer.get("elicitationId"), f"elicitationId {eid!r}, the server says {answer}")
            expect(answer.get("completionSent") is True, f"the server did not send the completion: {answer}")
            await wait_for(lambda: eid in self.rec.completions, 2.0)
            expect(self.rec.completions == [eid], f"completions heard {self.rec.completions}, wanted [{eid!r}]")
        else:
            expect(params.elicitation_id is None, f"2026-07-28 has no elicitationId, got {params.elicitation_id!r}")
            expect(answer.get("completionSent") is False, f"2026-07-28 has no completion notification: {answer}")
            await anyio.sleep(0.2)
            expect(self.rec.completions == [], f"completions heard {self.rec.completions}")


async def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--prefix", required=True)
    parser.add_argument("--mode", default="legacy")
    parser.add_argument("--server-name", default="everything-server")
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--stdio", nargs=argparse.REMAINDER)
    where.add_argument("--http")
    where.add_argument("--sse")
    args = parser.parse_args()

    transport = "stdio" if args.stdio else "http" if args.http else "sse"

    def target() -> Any:
        """Where to connect, made anew for each client (an SSE transport is entered once)."""
        if args.stdio:
            return StdioServerParameters(command=args.stdio[0], args=args.stdio[1:])
        if args.http:
            return args.http
        return sse_client(args.sse)

    legacy = args.mode == "legacy"
    rec = Recorder()

    def new_client() -> Client:
        return Client(
            target(),
            mode=args.mode,
            cache=None,
            logging_callback=rec.on_log,
            message_handler=rec.on_message,
            sampling_callback=rec.on_sampling,
            # Sampling with tools (2025-11-25+); elicitation declares form and url by itself.
            sampling_capabilities=types.SamplingCapability(tools=types.SamplingToolsCapability()),
            elicitation_callback=rec.on_elicitation,
            list_roots_callback=rec.on_roots,
        )

    failed = 0

    def report(group: str, error: BaseException | None) -> None:
        nonlocal failed
        if error is None:
            print(f"PASS {args.prefix}/{group}", flush=True)
        else:
            failed += 1
            reason = str(error) if isinstance(error, CheckFailed) else describe(error)
            print(f"FAIL {args.prefix}/{group}: {short(reason, 400)}", flush=True)

    # A connect that fails is tried once more, on a new client, and the first failure is printed
    # as a NOTE, which the run shows: a CI machine once saw the SDK's transport fail its first
    # exchange with nothing in our server's log, and a second attempt tells such a hiccup apart
    # from a server that cannot be reached. Failing twice fails the check.
    client: Client | None = None
    for attempt in (1, 2):
        candidate = new_client()
        try:
            await candidate.__aenter__()
        except Exception as e:  # noqa: BLE001 - reported (and on the first attempt, retried)
            traceback.print_exc(file=sys.stderr)
            if attempt == 1:
                print(f"NOTE {args.prefix}/connect: failed once, trying again: {short(describe(e), 400)}", flush=True)
                continue
            report("connect", e)
            return 1
        client = candidate
        break
    assert client is not None

    checks = Checks(client, rec, legacy, transport, args.server_name)
    groups = [
        ("lifecycle", checks.lifecycle),
        ("list", checks.listing),
        ("tools", checks.tools),
        ("prompts", checks.prompts),
        ("resources", checks.resources),
        ("completion", checks.completion),
        ("errors", checks.errors),
        ("logging", checks.logging),
        ("progress", checks.progress),
        ("cancel", checks.cancellation),
    ]
    # In 2026-07-28 a server asks the client through an InputRequiredResult, which the SDK
    # answers with the same callbacks and then retries the call.
    groups += [("sampling", checks.sampling), ("elicitation", checks.elicitation), ("roots", checks.roots)]
    groups += [("sampling-tools", checks.sampling_tools), ("url-elicitation", checks.url_elicitation)]
    for group, check in groups:
        error: BaseException | None = None
        try:
            with anyio.fail_after(GROUP_TIMEOUT):
                await check()
        except TimeoutError:
            error = CheckFailed(f"timed out after {GROUP_TIMEOUT:.0f}s")
        except Exception as e:  # noqa: BLE001 - every failure is reported
            traceback.print_exc(file=sys.stderr)
            error = e
        report(group, error)
    try:
        await client.__aexit__(None, None, None)
    except Exception as e:  # noqa: BLE001 - closing failed
        traceback.print_exc(file=sys.stderr)
        report("close", e)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(anyio.run(main))
