"""A server built with the official Python MCP SDK (MCPServer), with a surface like Talaria's
everything-server, for Talaria's client to talk to.

usage: server.py --transport stdio|http|sse [--port N] [--json-response] [--stateless]

Network transports bind 127.0.0.1 (port 0: a free one) and print
`server.py: listening on URL` on stderr once they accept connections.
"""

from __future__ import annotations

import argparse
import itertools
import json
import logging
import socket
import sys
import warnings
from typing import Any

import anyio
import mcp_types as types
from mcp import MCPDeprecationWarning
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel

warnings.filterwarnings("ignore", category=MCPDeprecationWarning)

LEVELS = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]
NAMES = ["Ada", "Alan", "Barbara", "Grace", "Linus", "Margaret"]

mcp = MCPServer(
    name="python-sdk-server",
    version="1.0.0",
    instructions="A server built with the official Python SDK for Talaria's interop tests.",
    log_level="WARNING",
)

# What happened to `slow` calls, process-wide.
slow_stats = {"started": 0, "completed": 0, "cancelled": 0}
# The level logging/setLevel chose (handshake era); None: everything.
min_level: dict[str, str | None] = {"level": None}


class Sum(BaseModel):
    sum: int


class Answer(BaseModel):
    answer: str


@mcp.tool(description="Echoes the text back")
def echo(text: str) -> str:
    return text


@mcp.tool(description="Adds two integers")
def add(a: int, b: int) -> Sum:
    return Sum(sum=a + b)


@mcp.tool(description="Always fails")
def fail() -> str:
    raise ToolError("this tool always fails")


@mcp.tool(description="Logs at debug, info, warning and error")
async def log(ctx: Context) -> str:
    floor = min_level["level"]
    for level in ["debug", "info", "warning", "error"]:
        if floor is None or LEVELS.index(level) >= LEVELS.index(floor):
            await ctx.log(level, {"level": level}, logger_name="log")
    return "logged"


@mcp.tool(name="slow", description="Counts steps with progress; honours cancellation")
async def slow(ctx: Context, steps: int = 5, step_ms: int = 100) -> str:
    slow_stats["started"] += 1
    try:
        for step in range(1, steps + 1):
            await anyio.sleep(step_ms / 1000)
            await ctx.report_progress(step, steps, f"step {step}")
    except anyio.get_cancelled_exc_class():
        slow_stats["cancelled"] += 1
        raise
    slow_stats["completed"] += 1
    return f"done after {steps} steps"


@mcp.tool(name="slow-stats", description="What happened to slow calls")
def slow_stats_tool() -> str:
    return json.dumps(slow_stats)


def modern(ctx: Context) -> bool:
    return ctx.protocol_version == "2026-07-28"


def pending(ctx: Context, request: Any) -> tuple[Any, types.InputRequiredResult | None]:
    """2026-07-28: the client's answer to `request`, or the InputRequiredResult that asks for it."""
    answer = (ctx.input_responses or {}).get("ask")
    if answer is not None:
        return answer, None
    return None, types.InputRequiredResult(input_requests={"ask": request})


# The tool `sample` offers the model with `tools=True`.
WEATHER = types.Tool(
    name="weather",
    description="Today's weather in a city",
    input_schema={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)
# The elicitation ids `elicit` hands out to URL-mode requests.
url_elicitations = itertools.count(1)


def tool_use_of(result: Any) -> types.ToolUseContent | None:
    """The weather call the model asked for (tool_use, stopReason toolUse), if it did."""
    content = result.content if isinstance(result.content, list) else [result.content]
    calls = [c for c in content if isinstance(c, types.ToolUseContent)]
    return calls[0] if calls and result.stop_reason == "toolUse" else None


def follow_up(messages: list[types.SamplingMessage], call: types.ToolUseContent) -> list[types.SamplingMessage]:
    """The conversation after running the model's weather call: its tool_use, then the tool_result."""
    city = str(call.input.get("city", "nowhere"))
    answer = types.TextContent(type="text", text=f"sunny, 18 degrees in {city}")
    return messages + [
        types.SamplingMessage(role="assistant", content=[call]),
        types.SamplingMessage(role="user", content=[types.ToolResultContent(tool_use_id=call.id, content=[answer])]),
    ]


def said(result: Any) -> str:
    """What the model said, as the tool reports it: one block as is, a list of blocks as a list."""
    if isinstance(result.content, list):
        return json.dumps([c.model_dump(mode="json", by_alias=True, exclude_none=True) for c in result.content])
    return result.content.model_dump_json(exclude_none=True)


@mcp.tool(description="Asks the client's model, with a weather tool offered if `tools` is true")
async def sample(ctx: Context, question: str = "", tools: bool = False) -> str | types.InputRequiredResult:
    messages = [types.SamplingMessage(role="user", content=types.TextContent(type="text", text=question))]
    offered: dict[str, Any] = {"tools": [WEATHER], "tool_choice": types.ToolChoice(mode="auto")} if tools else {}
    if modern(ctx):
        # Round 1 asks ("ask"); if the model called the tool, round 2 sends its result ("ask-2").
        responses = ctx.input_responses or {}
        if "ask-2" in responses:
            return f"the model said: {said(responses['ask-2'])}"
        result, ask = pending(ctx, types.CreateMessageRequest(
            params=types.CreateMessageRequestParams(messages=messages, max_tokens=100, **offered)))
        if ask is not None:
            return ask
        call = tool_use_of(result) if tools else None
        if call is not None:
            params = types.CreateMessageRequestParams(messages=follow_up(messages, call), max_tokens=100, **offered)
            return types.InputRequiredResult(input_requests={"ask-2": types.CreateMessageRequest(params=params)})
    else:
        session = ctx.request_context.session
        result = await session.create_message(messages, max_tokens=100, related_request_id=ctx.request_id, **offered)
        call = tool_use_of(result) if tools else None
        if call is not None:
            result = await session.create_message(
                follow_up(messages, call), max_tokens=100, related_request_id=ctx.request_id, **offered
            )
    return f"the model said: {said(result)}"


@mcp.tool(description="Asks the user a question, or sends them to `url` (URL mode)")
async def elicit(ctx: Context, question: str = "", url: str = "") -> str | types.InputRequiredResult:
    if url:
        if modern(ctx):
            # 2026-07-28: an input request with no elicitationId, and no completion notification.
            params = types.ElicitRequestURLParams(message=question, url=url)
            result, ask = pending(ctx, types.ElicitRequest(params=params))
            if ask is not None:
                return ask
            return json.dumps({"action": result.action, "completionSent": False})
        eid = f"url-{next(url_elicitations)}"
        result = await ctx.request_context.session.elicit_url(question, url, eid, related_request_id=ctx.request_id)
        sent = result.action == "accept"
        if sent:  # the page's flow is done (here: at once)
            await ctx.request_context.session.send_elicit_complete(eid, related_request_id=ctx.request_id)
        return json.dumps({"action": result.action, "elicitationId": eid, "completionSent": sent})
    if modern(ctx):
        schema = {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}
        params = types.ElicitRequestFormParams(message=question, requested_schema=schema)
        result, ask = pending(ctx, types.ElicitRequest(params=params))
        if ask is not None:
            return ask
        return json.dumps(result.model_dump(mode="json", exclude_none=True, include={"action", "content"}))
    result = await ctx.elicit(question, Answer)
    if result.action == "accept":
        return json.dumps({"action": "accept", "content": result.data.model_dump()})
    return json.dumps({"action": result.action})


@mcp.tool(description="Lists the client's roots")
async def roots(ctx: Context) -> str | types.InputRequiredResult:
    if modern(ctx):
        result, ask = pending(ctx, types.ListRootsRequest())
        if ask is not None:
            return ask
    else:
        result = await ctx.request_context.session.list_roots()
    return "\n".join(str(r.uri) for r in result.roots)


@mcp.prompt(name="greet", description="Greets someone")
def greet(name: str, tone: str = "warm") -> list[Any]:
    from mcp.server.mcpserver.prompts.base import AssistantMessage, UserMessage

    return [UserMessage(f"Greet {name} in a {tone} tone."), AssistantMessage(f"Hello, {name}!")]


@mcp.resource("file:///readme.md", name="readme", mime_type="text/markdown")
def readme() -> str:
    return "# Python SDK server\nA peer for interop tests."


@mcp.resource("notes://{id}", name="notes")
def notes(id: str) -> str:
    return f"note {id}"


@mcp.completion()
async def complete(ref: Any, argument: types.CompletionArgument, context: Any) -> types.Completion:
    prefix = argument.value.lower()
    return types.Completion(values=[n for n in NAMES if n.lower().startswith(prefix)])


async def set_level(ctx: Any, params: types.SetLevelRequestParams) -> types.EmptyResult:
    min_level["level"] = params.level
    return types.EmptyResult()


mcp._lowlevel_server.add_request_handler("logging/setLevel", types.SetLevelRequestParams, set_level)


async def serve_http(app: Any, port: int, path: str) -> None:
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(128)
    host, bound = sock.getsockname()
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))

    async def announce() -> None:
        while not server.started:
            await anyio.sleep(0.02)
        print(f"server.py: listening on http://{host}:{bound}{path}", file=sys.stderr, flush=True)

    async with anyio.create_task_group() as tg:
        tg.start_soon(announce)
        await server.serve(sockets=[sock])
        tg.cancel_scope.cancel()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--transport", choices=["stdio", "http", "sse"], default="stdio")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--json-response", action="store_true")
    parser.add_argument("--stateless", action="store_true")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    if args.transport == "stdio":
        anyio.run(mcp.run_stdio_async)
    elif args.transport == "http":
        app = mcp.streamable_http_app(json_response=args.json_response, stateless_http=args.stateless)
        anyio.run(serve_http, app, args.port, "/mcp")
    else:
        anyio.run(serve_http, mcp.sse_app(), args.port, "/sse")


if __name__ == "__main__":
    main()
