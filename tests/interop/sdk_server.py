"""A one-file MCP server on the official Python SDK (``mcp==2.3.0``, ``MCPServer``) over
stdio (or, with ``http PORT``, Streamable HTTP on 127.0.0.1), for the interop tests: run
with the interop venv's Python (``.interop/sdk-venv/bin/python sdk_server.py``), never
imported by the tests themselves.

It speaks both eras (the SDK answers ``server/discover`` and ``initialize``). Its tools ask
the client for input through the SDK's resolvers (``Elicit``, ``Sample``, ``ListRoots``),
which send a server→client request in the initialize era and answer ``input_required`` in
2026-07-28: the same tool exercises both paths of our client.
"""

# mypy: ignore-errors
# (mypy runs in an environment without the SDK; this file only runs in the SDK's venv.)

from __future__ import annotations

import json
from typing import Annotated

from mcp import types
from mcp.server import MCPServer
from mcp.server.mcpserver import Context, Elicit, ListRoots, Resolve, Sample
from pydantic import BaseModel

server = MCPServer("sdk-interop-server", instructions="The SDK side of mcp-sansio's interop tests.")


@server.tool()
def echo(message: str) -> str:
    """Echo the message back."""
    return f"Echo: {message}"


@server.tool()
def add(a: float, b: float) -> float:
    """Add two numbers."""
    return a + b


@server.tool()
async def count(steps: int, ctx: Context) -> str:
    """Count to `steps`, reporting progress at each step."""
    for step in range(1, steps + 1):
        await ctx.report_progress(step, steps, f"step {step} of {steps}")
    return f"counted to {steps}"


@server.tool()
async def chatty(ctx: Context) -> str:
    """Send log messages at three levels."""
    await ctx.debug("a debug message")
    await ctx.info("an info message")
    await ctx.warning("a warning message")
    return "logged"


class Name(BaseModel):
    name: str


def ask_name() -> Elicit[Name]:
    return Elicit("What is your name?", Name)


@server.tool()
def greet(who: Annotated[Name, Resolve(ask_name)]) -> str:
    """Ask the user's name (elicitation), then greet them."""
    return f"Hello, {who.name}!"


def ask_model(topic: str) -> Sample:
    message = types.SamplingMessage(
        role="user", content=types.TextContent(type="text", text=f"Write about {topic}")
    )
    return Sample([message], max_tokens=50)


@server.tool()
def write(topic: str, reply: Annotated[types.CreateMessageResult, Resolve(ask_model)]) -> str:
    """Ask the client's model to write about `topic` (sampling)."""
    content = reply.content
    return f"The model says: {getattr(content, 'text', content)}"


def ask_roots() -> ListRoots:
    return ListRoots()


@server.tool()
def where(roots: Annotated[types.ListRootsResult, Resolve(ask_roots)]) -> str:
    """List the client's roots (roots/list)."""
    return ", ".join(str(root.uri) for root in roots.roots) or "no roots"


@server.resource("note://greeting", mime_type="text/plain")
def greeting() -> str:
    """A static text resource."""
    return "Hello from the SDK server"


@server.resource("note://items/{item}")
def item(item: str) -> str:
    """A resource template."""
    return f"item {item}"


@server.prompt()
def review(code: str) -> str:
    """A prompt with one argument."""
    return f"Please review this code: {code}"


# With --stateful: the initialize era's session state (logging/setLevel and resource
# subscriptions), which MCPServer leaves to the low-level server's handlers, and a tool that
# reports what this process was told. (Off by default: declaring logging would change what
# other tests see.)
SEEN: dict = {"level": None, "subscribed": []}


async def set_level(ctx, params: types.SetLevelRequestParams) -> types.EmptyResult:
    SEEN["level"] = params.level
    return types.EmptyResult()


async def subscribe(ctx, params: types.SubscribeRequestParams) -> types.EmptyResult:
    SEEN["subscribed"].append(str(params.uri))
    return types.EmptyResult()


async def unsubscribe(ctx, params: types.UnsubscribeRequestParams) -> types.EmptyResult:
    SEEN["subscribed"].remove(str(params.uri))
    return types.EmptyResult()


def session_state() -> str:
    """What this server process was told: the logging level and the subscribed URIs."""
    return json.dumps(SEEN)


def stateful() -> None:
    low = server._lowlevel_server
    low.add_request_handler("logging/setLevel", types.SetLevelRequestParams, set_level)
    low.add_request_handler("resources/subscribe", types.SubscribeRequestParams, subscribe)
    low.add_request_handler("resources/unsubscribe", types.UnsubscribeRequestParams, unsubscribe)
    server.tool()(session_state)


if __name__ == "__main__":
    import sys

    args = sys.argv[1:]
    if "--stateful" in args:
        args.remove("--stateful")
        stateful()
    if args[:1] == ["http"]:  # sdk_server.py http PORT: Streamable HTTP on loopback
        server.run("streamable-http", host="127.0.0.1", port=int(args[1]))
    else:
        server.run()
