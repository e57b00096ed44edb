"""asyncio servers: serve_stream, serve_stdio, serve_tcp, serve_unix, serve_http, Listener."""

from __future__ import annotations

import asyncio
import contextlib
import os
import stat
import sys
from collections.abc import Mapping
from typing import Any

from .._backpressure import write_options
from ..server import Server
from ..session import (
    ServerSession,
)
from ._peer import _Peer
from ._streams import _File, _InboxProtocol, _MemoryPipe, _Reader, _Writer

# ---------------------------------------------------------------------- server


async def serve_stream(
    server: Server,
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    **session_options: Any,
) -> None:
    """Serve ``server`` (a ``mcp_sansio.server.Server``) on one connection until the
    client closes it; then close ``writer``.

    :param session_options: keywords of ``mcp_sansio.session.ServerSession``
        (``versions=``, ``timeout=`` for requests to the client, ``state_keys=``,
        ``max_message_size=``, …), and ``max_write_buffer=`` and ``write_timeout=`` as for
        :class:`Client` (a client that stops reading stops being read, then is
        disconnected).
    """
    await _serve(server, reader, writer, session_options)


async def _serve(
    server: Server, reader: _Reader, writer: _Writer, session_options: Mapping[str, Any]
) -> None:
    options = dict(session_options)
    limit, timeout = write_options(options)
    peer = _Peer(
        ServerSession(server, **options),
        reader,
        writer,
        max_write_buffer=limit,
        write_timeout=timeout,
    )
    peer.start()
    try:
        await peer.closed.wait()
        await peer.wait_jobs()
    finally:
        await peer.stop()
        writer.close()
        await peer.flush()
        with contextlib.suppress(OSError, RuntimeError):
            await writer.wait_closed()


async def serve_stdio(server: Server, **session_options: Any) -> None:
    """Serve ``server`` on this process's stdin and stdout until stdin closes. Nothing else
    may write to stdout meanwhile (log to stderr). ``session_options`` as for
    :func:`serve_stream`."""
    loop = asyncio.get_running_loop()
    # Duplicates, so that closing them leaves sys.stdin and sys.stdout usable.
    stdin = os.fdopen(os.dup(sys.stdin.fileno()), "rb", buffering=0)
    stdout = os.fdopen(os.dup(sys.stdout.fileno()), "wb", buffering=0)
    reader: _Reader
    writer: _Writer
    closing: _File | asyncio.ReadTransport
    if stat.S_ISREG(os.fstat(stdin.fileno()).st_mode):
        reader = closing = _File(stdin)
    else:
        reader = inbox = _MemoryPipe()
        closing, _ = await loop.connect_read_pipe(lambda: _InboxProtocol(inbox), stdin)
    if stat.S_ISREG(os.fstat(stdout.fileno()).st_mode):
        writer = _File(stdout)
    else:
        transport, protocol = await loop.connect_write_pipe(
            asyncio.streams.FlowControlMixin, stdout
        )
        writer = asyncio.StreamWriter(transport, protocol, None, loop)
    try:
        await _serve(server, reader, writer, session_options)
    finally:
        closing.close()


class Listener:
    """A listening socket that serves an MCP server on each connection, returned by
    :func:`serve_tcp` and :func:`serve_unix`. An async context manager: leaving it closes
    the socket and the connections."""

    def __init__(self, server: Server, session_options: Mapping[str, Any]) -> None:
        self._server = server
        self._options = dict(session_options)
        self._connections: set[asyncio.Task[Any]] = set()
        self.sockets: tuple[Any, ...] = ()
        """The listening sockets."""
        self._listening: asyncio.Server | None = None
        self._unix_path: str | None = None
        self._closed = asyncio.Event()

    def _protocol(self) -> _InboxProtocol:
        """The protocol of one accepted connection."""
        return _InboxProtocol(_MemoryPipe(), self._serve)

    async def _serve(self, reader: _Reader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._connections.add(task)
        try:
            await self._handle(reader, writer)
        except asyncio.CancelledError:
            # close() cancelled us: end normally (asyncio's callback on this task would
            # otherwise log the cancellation as an error).
            pass
        finally:
            self._connections.discard(task)

    async def _handle(self, reader: _Reader, writer: asyncio.StreamWriter) -> None:
        await _serve(self._server, reader, writer, self._options)

    @property
    def port(self) -> int | None:
        """The TCP port listened on (``None`` for a Unix socket)."""
        for sock in self.sockets:
            address = sock.getsockname()
            if isinstance(address, tuple):
                return int(address[1])
        return None

    @property
    def address(self) -> Any:
        """The address listened on: ``(host, port)``, or the Unix socket's path."""
        return self.sockets[0].getsockname() if self.sockets else None

    async def serve_forever(self) -> None:
        """Wait until the listener is closed."""
        await self._closed.wait()

    def close(self) -> None:
        """Stop listening and close every connection (their handlers are cancelled); a
        Unix socket's file is removed."""
        self._closed.set()
        if self._listening is not None:
            self._listening.close()
        if self._unix_path is not None:
            with contextlib.suppress(OSError):
                os.unlink(self._unix_path)
            self._unix_path = None
        for task in self._connections:
            task.cancel()

    async def wait_closed(self) -> None:
        """Wait until the socket and every connection are closed."""
        if self._listening is not None:
            await self._listening.wait_closed()
        await asyncio.gather(*self._connections, return_exceptions=True)

    async def aclose(self) -> None:
        """:meth:`close`, then :meth:`wait_closed`."""
        self.close()
        await self.wait_closed()

    async def __aenter__(self) -> Listener:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


async def serve_tcp(
    server: Server, host: str = "127.0.0.1", port: int = 0, **session_options: Any
) -> Listener:
    """Listen on TCP ``host:port`` (default: loopback, a free port: see
    :attr:`Listener.port`) and serve ``server`` on each connection, one session each.
    ``session_options`` as for :func:`serve_stream`."""
    listener = Listener(server, session_options)
    listening = await asyncio.get_running_loop().create_server(listener._protocol, host, port)
    listener._listening = listening
    listener.sockets = tuple(listening.sockets)
    return listener


async def serve_unix(
    server: Server, path: str | os.PathLike[str], **session_options: Any
) -> Listener:
    """Listen on the Unix socket ``path`` and serve ``server`` on each connection.
    ``session_options`` as for :func:`serve_stream`."""
    listener = Listener(server, session_options)
    listening = await asyncio.get_running_loop().create_unix_server(listener._protocol, path)
    listener._listening = listening
    listener._unix_path = os.fspath(path)
    listener.sockets = tuple(listening.sockets)
    return listener
