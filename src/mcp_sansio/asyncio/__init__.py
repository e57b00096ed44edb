"""The asyncio adapter: an MCP client and server on asyncio streams.

All protocol work happens in the sessions of ``mcp_sansio.session``; this module moves
bytes, keeps one timer for the session's deadlines, and runs handlers as tasks. A complete
example, a server and a client in one process over TCP on 127.0.0.1::

    import asyncio

    from mcp_sansio.asyncio import Client, serve_tcp
    from mcp_sansio.server import Server

    server = Server("demo", "1.0")

    @server.tool(input_schema={"type": "object", "properties": {"text": {"type": "string"}}})
    async def echo(ctx, arguments):
        "Echo the text back, after asking the user to confirm."
        answer = await ctx.elicit("Send it?", {"type": "object", "properties": {}})
        return arguments["text"] if answer["action"] == "accept" else "(declined)"

    def confirm(ctx, params):
        return {"action": "accept", "content": {}}

    async def main():
        listener = await serve_tcp(server)                   # 127.0.0.1, a free port
        async with listener, Client.connect_tcp(
            "127.0.0.1", listener.port, handlers={"elicitation/create": confirm}
        ) as client:
            print(client.protocol_version)                   # 2026-07-28
            result = await client.call_tool("echo", {"text": "hi"})
            print(result["content"][0]["text"])              # hi

    asyncio.run(main())

Everything here is also available over a subprocess's stdin/stdout
(:meth:`Client.connect_stdio`, :func:`serve_stdio`), a Unix socket (:meth:`Client.connect_unix`,
:func:`serve_unix`), any pair of asyncio streams (:class:`Client`, :func:`serve_stream`), or
an in-memory pipe to a server in the same event loop (:meth:`Client.connect_server`).

Handlers (tools, prompts, resources, and the client's handlers of the server's requests) may
be plain functions or coroutine functions. Plain functions run on the event loop, in line,
before the next message is read: keep them quick. Coroutine functions run as tasks, many at
once (on Python 3.12+ a server handler's task starts eagerly, up to its first real wait); when
the peer cancels a request, its task is cancelled.
"""

from __future__ import annotations

from typing import Any

from ..server import Server
from ..session import ConnectionLost, McpError, RequestTimeout
from ._client import Client
from ._http_server import HttpSessions
from ._peer import Context
from ._serve import Listener, serve_stdio, serve_stream, serve_tcp, serve_unix
from ._streams import (
    DEFAULT_MAX_WRITE_BUFFER,
    DEFAULT_SHUTDOWN_TIMEOUT,
    DEFAULT_WRITE_TIMEOUT,
    Streams,
)

__all__ = [
    "DEFAULT_MAX_WRITE_BUFFER",
    "DEFAULT_SHUTDOWN_TIMEOUT",
    "DEFAULT_WRITE_TIMEOUT",
    "Client",
    "ConnectionLost",
    "Context",
    "HttpSessions",
    "Listener",
    "McpError",
    "RequestTimeout",
    "Streams",
    "serve_http",
    "serve_stdio",
    "serve_stream",
    "serve_tcp",
    "serve_unix",
]


async def serve_http(
    server: Server, host: str = "127.0.0.1", port: int = 0, **options: Any
) -> Listener:
    """Serve ``server`` over Streamable HTTP (needs the ``http`` extra: h11) on
    ``host:port``, at ``/mcp`` by default; returns an ``HttpListener`` (its ``url`` is the
    endpoint). The options: ``path=`` (the endpoint, ``"/mcp"``), ``keepalive=`` (seconds
    between ``: keep-alive`` comments on open SSE streams), ``idle_timeout=`` (seconds a
    connection may keep us waiting for a request), and the keywords of
    :class:`~mcp_sansio.http.HttpServer` (``allowed_hosts=``, ``json_response=``,
    ``max_body_size=``, …) and of each :class:`~mcp_sansio.session.ServerSession`
    (``versions=``, …)."""
    from ._http_server import serve_http as serve

    return await serve(server, host, port, **options)
