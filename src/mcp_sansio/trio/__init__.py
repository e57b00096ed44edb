"""The trio adapter: an MCP client and server over stdio, TCP, Unix sockets or any trio stream,
and a server over Streamable HTTP (:func:`serve_http`).

All protocol work is done by ``mcp_sansio.session``; this module moves bytes, owns the
clock (``trio.current_time``) and runs handlers in tasks. One connection is a small
nursery: a reader task, a writer task (writes are buffered and go out in order, so the
synchronous :class:`Context` methods can write too), a timer task that sleeps until
the session's next deadline, and a watchdog that closes the connection as broken when the
peer stops reading (``write_timeout``). While more than ``max_write_buffer`` bytes wait to
be written, the reader reads nothing. Each handler runs in its own task and cancel scope;
the peer's ``notifications/cancelled`` cancels it.

A complete example: a server with one tool, and a client that starts it as a subprocess
(save it as ``demo.py`` and run ``python demo.py``)::

    import sys

    import trio

    from mcp_sansio.server import Server
    from mcp_sansio.trio import Client, serve_stdio

    server = Server("demo", "1.0")


    @server.tool(input_schema={"type": "object", "properties": {"text": {"type": "string"}}})
    async def shout(ctx, arguments):
        "Shout the text back, if the user agrees."
        answer = await ctx.elicit("Shout it?", {"type": "object", "properties": {}})
        if answer["action"] != "accept":
            return "(not shouted)"
        for step in range(3):
            ctx.progress(step + 1, 3)
            await ctx.sleep(0.01)
        return arguments["text"].upper()


    def confirm(ctx, params):
        return {"action": "accept", "content": {}}


    async def main():
        command = [sys.executable, __file__, "serve"]
        handlers = {"elicitation/create": confirm}
        async with Client.connect_stdio(command, handlers=handlers) as client:
            print("speaking", client.protocol_version, "to", client.server_info["name"])
            result = await client.call_tool("shout", {"text": "hello"}, on_progress=print)
            print(result["content"][0]["text"])


    if __name__ == "__main__":
        trio.run(serve_stdio, server) if sys.argv[1:] == ["serve"] else trio.run(main)

The same handler runs in both protocol eras: in the ``initialize`` era ``ctx.elicit`` sends
``elicitation/create`` to the client and waits for its answer; in 2026-07-28 it makes the
request end with ``input_required``, and the client runs its handler and retries by itself.

Sync handlers and callbacks run inline in the event loop (keep them quick); coroutine
functions run as tasks. Requires the ``trio`` extra (from a checkout: ``pip install '.[trio]'``).
"""

from __future__ import annotations

from ..session import ConnectionLost, McpError, RequestTimeout
from ._client import Client
from ._http_server import HttpSessions
from ._loop import (
    DEFAULT_MAX_WRITE_BUFFER,
    DEFAULT_SHUTDOWN_TIMEOUT,
    DEFAULT_WRITE_TIMEOUT,
    Context,
)
from ._serve import serve_http, serve_stdio, serve_stream, serve_tcp, serve_unix

__all__ = [
    "DEFAULT_MAX_WRITE_BUFFER",
    "DEFAULT_SHUTDOWN_TIMEOUT",
    "DEFAULT_WRITE_TIMEOUT",
    "Client",
    "ConnectionLost",
    "Context",
    "HttpSessions",
    "McpError",
    "RequestTimeout",
    "serve_http",
    "serve_stdio",
    "serve_stream",
    "serve_tcp",
    "serve_unix",
]
