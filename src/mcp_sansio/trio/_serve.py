"""trio servers: serve_stream, serve_stdio, serve_tcp, serve_unix, serve_http."""

from __future__ import annotations

import contextlib
import os
import stat
from typing import Any, NoReturn

import trio

from .._backpressure import write_options
from ..server import Server
from ..session import (
    ServerSession,
)
from ._loop import _Loop

# ---------------------------------------------------------------------- servers


async def serve_stream(server: Server, stream: trio.abc.Stream, **session_options: Any) -> None:
    """Serve one connection on ``stream`` for ``server`` (a
    ``mcp_sansio.server.Server``), then close it: until the client has closed its
    side and the handlers are done (their answers still go out). Each request's handler
    runs in its own task; the client's ``notifications/cancelled`` cancels it.
    ``session_options`` go to ``mcp_sansio.session.ServerSession`` (``versions=``,
    ``timeout=``, ``state_keys=``, …), but ``max_write_buffer=`` and ``write_timeout=``,
    as for :class:`Client` (a client that stops reading stops being read, then is
    disconnected)."""
    limit, timeout = write_options(session_options)
    loop = _Loop(
        ServerSession(server, **session_options),
        stream,
        max_write_buffer=limit,
        write_timeout=timeout,
    )
    try:
        await loop.run()
    finally:
        with trio.CancelScope(shield=True):
            await stream.aclose()


async def serve_stdio(server: Server, **session_options: Any) -> None:
    """Serve ``server`` on this process's stdin and stdout (Unix), until stdin ends and the
    handlers are done.

    Nothing else may write to stdout meanwhile (no ``print``); log to stderr. While
    serving, duplicates of the two file descriptors are in non-blocking mode (see
    ``trio.lowlevel.FdStream``), which other processes sharing them also see."""
    stream = trio.StapledStream(
        trio.lowlevel.FdStream(os.dup(1)), trio.lowlevel.FdStream(os.dup(0))
    )
    await serve_stream(server, stream, **session_options)


async def serve_tcp(
    server: Server,
    host: str = "127.0.0.1",
    port: int = 0,
    *,
    task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED,
    **session_options: Any,
) -> NoReturn:
    """Serve ``server`` on TCP ``host``:``port`` (``0``: a free port), a session per
    connection, until cancelled. ``port = await nursery.start(serve_tcp, server)`` returns
    the port once it is listening."""
    listeners = await trio.open_tcp_listeners(port, host=host)
    task_status.started(listeners[0].socket.getsockname()[1])
    await _serve(server, listeners, session_options)


async def serve_http(
    server: Server,
    host: str = "127.0.0.1",
    port: int = 0,
    *,
    task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED,
    **options: Any,
) -> NoReturn:
    """Serve ``server`` over Streamable HTTP on ``host``:``port`` (``0``: a free port), at
    ``http://host:port/mcp``, until cancelled; needs the ``http`` extra (h11).
    ``port = await nursery.start(serve_http, server)`` returns the port once it is
    listening. Cancelling it closes the connections and ends every session (their handlers
    are cancelled).

    :param options: ``path=`` (the endpoint, ``"/mcp"``), ``keepalive=`` (seconds between
        ``: keep-alive`` comments on open event streams; ``None``: none), the keywords of
        ``mcp_sansio.http.HttpServer`` (``allowed_hosts=``, ``allowed_origins=``,
        ``json_response=``, ``max_body_size=``, ``state_keys=``, …) and those of each
        ``mcp_sansio.session.ServerSession`` (``versions=``, …).
    """
    from ._http_server import serve_http as serve

    await serve(server, host, port, task_status=task_status, **options)


async def serve_unix(
    server: Server,
    path: str | os.PathLike[str],
    *,
    task_status: trio.TaskStatus[str] = trio.TASK_STATUS_IGNORED,
    **session_options: Any,
) -> NoReturn:
    """Serve ``server`` on a Unix socket at ``path`` (which must not exist), a session per
    connection, until cancelled; the socket file is removed then. ``await
    nursery.start(serve_unix, server, path)`` returns once it is listening."""
    sock = trio.socket.socket(trio.socket.AF_UNIX, trio.socket.SOCK_STREAM)
    try:
        await sock.bind(os.fspath(path))
        sock.listen()
    except BaseException:
        sock.close()
        raise
    try:
        task_status.started(os.fspath(path))
        await _serve(server, [trio.SocketListener(sock)], session_options)
    finally:
        sock.close()
        with contextlib.suppress(OSError):
            if stat.S_ISSOCK(os.stat(path).st_mode):
                os.unlink(path)


async def _serve(
    server: Server, listeners: list[trio.SocketListener], session_options: dict[str, Any]
) -> NoReturn:
    async def handle(stream: trio.SocketStream) -> None:
        await serve_stream(server, stream, **session_options)

    await trio.serve_listeners(handle, listeners)
