"""Targets in this process: a :class:`~mcp_sansio.server.Server` on the asyncio adapter
(:class:`ConnectionTarget`), our own client (:class:`ClientConnectionTarget`), and a
function of each line (:class:`FunctionTarget`).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import socket
import threading
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcp_sansio.server import Server

from mcp_sansio.testing._targets import (
    CHUNK,
    SHUTDOWN_TIMEOUT,
    Channel,
    LineBuffer,
    StreamChannel,
    TargetError,
)


class ConnectionTarget:
    """A :class:`~mcp_sansio.server.Server` served in this process, a fresh
    :class:`~mcp_sansio.session.ServerSession` (asyncio adapter) for each peer, over a
    socket pair.

    :param server: the server, or a function that builds one for each peer; default
        :func:`mcp_sansio.example.build_server`.
    :param session_options: keywords of :class:`~mcp_sansio.session.ServerSession`
        (``versions=``, ``max_message_size=``, ...).
    """

    transport = "in-process"

    def __init__(
        self, server: Server | Callable[[], Server] | None = None, **session_options: Any
    ) -> None:
        self.server = server
        self.session_options = session_options

    def describe(self) -> str:
        """A short description for reports."""
        return "in-process: " + ("the example server" if self.server is None else "a server")

    def open(self) -> Channel:
        """Start a fresh session on a new socket pair."""
        from mcp_sansio.example import build_server
        from mcp_sansio.server import Server

        server = self.server
        if server is None:
            server = build_server()
        elif not isinstance(server, Server):
            server = server()
        return _SessionChannel(server, self.session_options)


class _InProcessChannel(StreamChannel):
    """A channel over ``sock`` to a peer that runs in ``thread`` (started)."""

    transport = "in-process"

    def __init__(self, sock: socket.socket, thread: threading.Thread) -> None:
        self._socket = sock
        self._thread = thread
        self._closed = False

        def write(data: bytes) -> None:
            sock.sendall(data)

        super().__init__(functools.partial(sock.recv, CHUNK), write)
        self._start()

    def close(self) -> str:
        """End our side; the peer sees EOF, finishes, and closes its side."""
        if self._closed:
            return ""
        self._closed = True
        self._stop_writer()
        with contextlib.suppress(OSError):
            self._socket.shutdown(socket.SHUT_WR)
        self._thread.join(SHUTDOWN_TIMEOUT)
        with contextlib.suppress(OSError):
            self._socket.shutdown(socket.SHUT_RDWR)
        self._reader.join(SHUTDOWN_TIMEOUT)
        self._socket.close()
        return ""


class _SessionChannel(_InProcessChannel):
    def __init__(self, server: Server, options: Mapping[str, Any]) -> None:
        mine, theirs = socket.socketpair()
        thread = threading.Thread(
            target=asyncio.run, args=(self._serve(server, theirs, options),), daemon=True
        )
        thread.start()
        super().__init__(mine, thread)

    @staticmethod
    async def _serve(server: Server, sock: socket.socket, options: Mapping[str, Any]) -> None:
        from mcp_sansio.asyncio import serve_stream

        try:
            reader, writer = await asyncio.open_connection(sock=sock)
        except OSError:  # pragma: no cover - a socket pair does not fail here
            sock.close()
            return
        with contextlib.suppress(Exception):
            await serve_stream(server, reader, writer, **options)


class ClientConnectionTarget:
    """A client under test in this process: our own asyncio
    :class:`~mcp_sansio.asyncio.Client`, a fresh one for each peer, connected over loopback
    TCP to the probe, which plays its server (what :class:`ConnectionTarget` is for a
    server). Once its session is open it runs ``script(client)``: by default one
    ``tools/list``, which the probe holds unanswered, so the client stays in the session
    until the probe hangs up.

    :param script: an async function of the open :class:`~mcp_sansio.asyncio.Client`.
    :param client_options: keywords of :class:`~mcp_sansio.asyncio.Client` (``versions=``,
        ``handlers=``, ``capabilities=``...); requests have no timeout unless given one.
    """

    transport = "in-process"

    def __init__(
        self, script: Callable[[Any], Awaitable[Any]] | None = None, **client_options: Any
    ) -> None:
        self.script = script
        self.client_options = {"timeout": None, **client_options}
        self.startup = 10.0
        """Seconds the client has to connect."""

    def describe(self) -> str:
        """A short description for reports."""
        return "in-process: the mcp-sansio asyncio client"

    def open(self) -> Channel:
        """Start a fresh client and take its connection. Raises :class:`TargetError` when
        it does not connect in time."""
        return _ClientChannel(self.script, self.client_options, self.startup)


async def _list_tools(client: Any) -> None:
    await client.list_tools()


class _ClientChannel(_InProcessChannel):
    def __init__(
        self,
        script: Callable[[Any], Awaitable[Any]] | None,
        options: Mapping[str, Any],
        startup: float,
    ) -> None:
        self.opened = time.monotonic()
        with socket.create_server(("127.0.0.1", 0)) as listener:
            port = listener.getsockname()[1]
            thread = threading.Thread(
                target=asyncio.run,
                args=(self._run(port, script or _list_tools, options),),
                daemon=True,
            )
            thread.start()
            listener.settimeout(startup)
            try:
                sock, _ = listener.accept()
            except OSError as exc:
                raise TargetError(f"the in-process client did not connect: {exc}") from None
        sock.settimeout(None)
        super().__init__(sock, thread)

    @staticmethod
    async def _run(
        port: int, script: Callable[[Any], Awaitable[Any]], options: Mapping[str, Any]
    ) -> None:
        from mcp_sansio.asyncio import Client

        # Whatever ends the client (the probe hanging up, a version it refuses) ends it.
        with contextlib.suppress(Exception):
            async with Client.connect_tcp("127.0.0.1", port, **options) as client:
                await script(client)


#: What a :class:`FunctionTarget`'s function returns for each line: the lines to answer
#: (each one message; a line ending is added when missing), or ``None`` for none.
Responder = Callable[[bytes], "Iterable[bytes] | None"]


class FunctionTarget:
    """The smallest peer: ``factory()`` makes a responder for each fresh peer, a function
    called with each line sent (without its line ending) that returns the lines to answer.

    A responder may also have a ``close()`` method, called when the peer is closed.
    """

    transport = "in-process"

    def __init__(self, factory: Callable[[], Responder], *, name: str = "a function") -> None:
        self.factory = factory
        self.name = name

    def describe(self) -> str:
        """A short description for reports."""
        return f"in-process: {self.name}"

    def open(self) -> Channel:
        """Make a fresh responder."""
        return _FunctionChannel(self.factory())


class _FunctionChannel(Channel):
    transport = "in-process"

    def __init__(self, responder: Responder) -> None:
        super().__init__()
        self._responder = responder
        self._closed = False

    def send(self, data: bytes) -> None:
        """Call the responder with each line of ``data``; queue what it answers."""
        if self._closed:
            return
        for line in data.split(b"\n"):
            if not line.strip():
                continue
            if self._full:
                return  # past the channel's bounds: the peer is not read any more
            answers = self._responder(line)
            for answer in answers or ():
                lines = LineBuffer(self._push)
                if not lines.feed(answer if answer.endswith(b"\n") else answer + b"\n"):
                    break

    def close(self) -> str:
        """Call the responder's ``close()``, if any."""
        if not self._closed:
            self._closed = True
            close = getattr(self._responder, "close", None)
            if callable(close):
                close()
            self._push_eof()
        return ""
