"""The blocking adapter: MCP clients and servers for plain, synchronous Python.

No event loop and no threads are needed for the protocol. A :class:`Client` call writes its
request and then *pumps* the connection (reads with a timeout up to the next deadline of
the session) until that call is over, doing everything that arrives on the way: the
server's requests (sampling, elicitation, roots, ping) are answered inline by your sync
handlers, 2026-07-28 ``input_required`` rounds run the same handlers and retry,
notifications go to ``on_notification``, timed-out requests are cancelled. A server runs
its handlers inline, one request at a time, on each connection.

A complete example, a server spawned over stdio and a client talking to it (POSIX)::

    import pathlib, sys, tempfile, textwrap

    from mcp_sansio.blocking import Client

    SERVER = textwrap.dedent('''
        from mcp_sansio.blocking import serve_stdio
        from mcp_sansio.server import Server

        server = Server("greeter", "1.0")

        @server.tool(input_schema={"type": "object"})
        def greet(ctx, arguments):
            "Ask the user's name, then greet them."
            ctx.progress(0.5, 1.0, "asking")
            answer = ctx.elicit("Your name?", {
                "type": "object", "properties": {"name": {"type": "string"}}})
            return f"Hello, {answer['content']['name']}!"

        serve_stdio(server)
    ''')

    def elicit(ctx, params):  # the user, played by a function
        return {"action": "accept", "content": {"name": "Ada"}}

    with tempfile.TemporaryDirectory() as tmp:
        script = pathlib.Path(tmp, "server.py")
        script.write_text(SERVER)
        with Client.connect_stdio([sys.executable, str(script)],
                                  handlers={"elicitation/create": elicit}) as client:
            print(client.server_info, client.protocol_version)
            print([t["name"] for t in client.list_tools()["tools"]])
            result = client.call_tool("greet", on_progress=print, timeout=10)
            print(result["content"][0]["text"])  # Hello, Ada!

The same server code answers a client of either era: in the initialize era
``ctx.elicit`` sends ``elicitation/create`` and waits for the answer; in 2026-07-28 it
answers ``input_required`` and finds the answer in the retry.

What to know:

- **One call at a time per client.** A client is not thread-safe; calls are sequential
  (the connection is pumped only while a call, :meth:`Client.poll` or a handler's
  :meth:`Context.sleep` waits). The server's traffic may interleave with a call freely.
- **Server handlers are sync and run inline.** A request that arrives while a handler
  waits (for the client's answer, or in :meth:`Context.sleep`) is queued and run after it.
  A client's cancellation cannot interrupt a running handler: :attr:`Context.cancelled`
  turns true (during :meth:`Context.elicit`, :meth:`Context.sleep`, …) and the session
  drops its answer.
- **Writes never block the reader** on pipes and sockets: what the peer does not take at
  once waits in a buffer and goes out while the connection is pumped. Past
  ``max_write_buffer`` bytes (1 MiB), nothing is read until it is down to half; when the
  peer takes none of it for ``write_timeout`` seconds (30 s), the connection is closed as
  broken (:class:`ConnectionLost`). A :class:`Stream` without ``write_some`` and
  ``wait_ready`` is written to blocking, as before. Deadlines are honoured while waiting.
- **POSIX only** for pipes: waiting with a timeout uses ``selectors`` on the pipe's file
  descriptor, which Windows does not support (sockets work everywhere).
"""

from __future__ import annotations

from typing import Any

from ..server import Server
from ..session import ConnectionLost, McpError, RequestTimeout
from ._client import Client
from ._endpoint import Context
from ._redirect import LoopbackRedirect
from ._serve import Listener, serve_stdio, serve_stream, serve_tcp, serve_unix
from ._streams import (
    DEFAULT_MAX_WRITE_BUFFER,
    DEFAULT_SHUTDOWN_TIMEOUT,
    DEFAULT_WRITE_TIMEOUT,
    PipeStream,
    ProcessStream,
    SocketStream,
    Stream,
)

__all__ = [
    "DEFAULT_MAX_WRITE_BUFFER",
    "DEFAULT_SHUTDOWN_TIMEOUT",
    "DEFAULT_WRITE_TIMEOUT",
    "Client",
    "ConnectionLost",
    "Context",
    "Listener",
    "LoopbackRedirect",
    "McpError",
    "PipeStream",
    "ProcessStream",
    "RequestTimeout",
    "SocketStream",
    "Stream",
    "serve_http",
    "serve_stdio",
    "serve_stream",
    "serve_tcp",
    "serve_unix",
]


def serve_http(server: Server, host: str = "127.0.0.1", port: int = 0, **options: Any) -> None:
    """Serve ``server`` over Streamable HTTP (needs the ``http`` extra: h11) on TCP
    ``host``:``port``, at ``/mcp`` by default, until stopped; as :func:`serve_tcp`, ``ready=``
    is called with the listener (an ``HttpListener``: its ``url`` is the endpoint, its
    ``stop()`` ends the serving). A thread per connection and one per busy session: the
    handlers of different sessions (in 2026-07-28, of different requests) run at once, so
    they must be thread-safe; a session's own run one at a time. The options are those of
    ``mcp_sansio.blocking._http_server.serve_http`` (``path=``, ``keepalive=``,
    ``max_connections=``, ``allowed_origins=``, ``json_response=``, ``versions=``, …)."""
    from ._http_server import serve_http as serve

    serve(server, host, port, **options)
