"""Streamable HTTP on asyncio: sockets and tasks around :class:`H11Server` and
:class:`HttpServer`; every decision is theirs. Each MCP session is driven by the same loop
as on stdio (``mcp_sansio.asyncio._peer._Peer``), whose writes go through
:meth:`HttpServer.route` onto the right HTTP responses.

:class:`HttpSessions` runs those sessions for any asyncio binding: the h11 listener here and
the ASGI application (:mod:`mcp_sansio.asgi`), which is why h11 is only imported when
a connection is served."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from typing import Any

from ..http._server import (
    DEFAULT_IDLE_TIMEOUT,
    DEFAULT_KEEPALIVE,
    Deliver,
    Exchange,
    HttpServer,
    HttpSession,
    Terminate,
    Wake,
    Work,
    wake,
)
from ..http._sessions import Fetch
from ..server import Server
from ._peer import _Peer
from ._serve import Listener
from ._streams import _Reader

__all__ = ["DEFAULT_IDLE_TIMEOUT", "DEFAULT_KEEPALIVE", "HttpListener", "serve_http"]

_READ_SIZE = 65536


class _Nowhere:
    """The reader and writer of a session driven over HTTP: its bytes go through
    :meth:`HttpServer.route` instead."""

    async def read(self, n: int = -1) -> bytes:  # pragma: no cover - never started
        return b""

    def write(self, data: bytes) -> None:  # pragma: no cover - route is always set
        pass

    async def drain(self) -> None:
        pass

    def close(self) -> None:
        pass

    async def wait_closed(self) -> None:
        pass


class HttpSessions:
    """The MCP sessions of an :class:`HttpServer` on the running asyncio loop, for a
    binding (the h11 listener, the ASGI application) that moves the HTTP bytes: a
    ``_Peer`` per session whose writes go through :meth:`HttpServer.route`, the work of
    :meth:`HttpServer.end` and :meth:`HttpServer.disconnected` carried out
    (:meth:`do`), the exchanges woken, the keep-alive task."""

    def __init__(self, core: HttpServer) -> None:
        self.core = core
        self._stopping: set[asyncio.Task[None]] = set()
        self._keepalive_task: asyncio.Task[None] | None = None

    def driver(self, hs: HttpSession) -> _Peer:
        """The loop around ``hs``'s session, made on first use."""
        peer: _Peer | None = hs.driver
        if peer is None:
            nowhere = _Nowhere()
            peer = hs.driver = _Peer(hs.session, nowhere, nowhere)
            core = self.core

            peer.route = core.wire(hs)
        return peer

    def do(self, work: Iterable[Work], ex: Exchange | None) -> None:
        """Carry out ``work`` for the request ``ex`` (``None``: no request): feed each
        :class:`Deliver` to its session, stop the driver of each :class:`Terminate`, wake
        the exchanges of each :class:`Wake`."""
        core = self.core
        for item in work:
            if isinstance(item, Wake):
                wake(item.exchanges)
                continue
            if isinstance(item, Fetch):  # a token's verification needs a request
                task = asyncio.get_running_loop().create_task(self._fetch(item))
                self._stopping.add(task)
                task.add_done_callback(self._stopping.discard)
                continue
            hs = item.session
            if isinstance(item, Deliver):
                core.begin_delivery(hs, ex)
                try:
                    self.driver(hs).feed(item.data)
                finally:
                    wake(core.end_delivery(hs))
            elif hs.driver is not None:
                task = asyncio.get_running_loop().create_task(hs.driver.stop())
                self._stopping.add(task)
                task.add_done_callback(self._stopping.discard)

    async def _fetch(self, item: Fetch) -> None:
        """Make a :class:`Fetch`'s request, hand the answer back to the core."""
        from ._fetch import fetch

        try:
            status, headers, body = await fetch(item.request)
        except Exception:  # no answer: status 0 (the verifier decides)
            status, headers, body = 0, (), b""
        self.do(self.core.fetched(item.exchange, status, headers, body), item.exchange)

    def start_keepalive(self, every: float | None) -> None:
        """Send ``: keep-alive`` comments every ``every`` seconds (``None``: never) from
        a task on the running loop, unless one is running there already."""
        task = self._keepalive_task
        if every is None:
            return
        if task is not None and not task.done():
            if task.get_loop() is asyncio.get_running_loop():
                return
            task.cancel()
        self._keepalive_task = asyncio.get_running_loop().create_task(self._keep_alive(every))

    async def _keep_alive(self, every: float) -> None:
        while True:
            await asyncio.sleep(every)
            wake(self.core.keepalive())

    def close(self) -> None:
        """Stop the keep-alive task and end every session (their drivers stop)."""
        if self._keepalive_task is not None:
            self._keepalive_task.cancel()
            self._keepalive_task = None
        for hs in self.core.all_sessions():
            self.do([Terminate(hs)], None)

    async def wait_closed(self) -> None:
        """Wait until the drivers being stopped have stopped."""
        await asyncio.gather(*self._stopping, return_exceptions=True)

    # ------------------------------------------------------------------ the binding face
    # What the ASGI application (mcp_sansio.asgi) uses, with the same names on trio.

    async def open(self, keepalive: float | None) -> None:
        """Be ready to run sessions on the running loop: the keep-alive task started
        (:meth:`start_keepalive`)."""
        self.start_keepalive(keepalive)

    async def carry_out(self, work: Iterable[Work], ex: Exchange | None) -> None:
        """:meth:`do`, awaitable (as on trio, where starting a session's loop awaits)."""
        self.do(work, ex)

    async def aclose(self) -> None:
        """End every session and stop the keep-alive task; wait until they have ended."""
        self.close()
        await self.wait_closed()

    @staticmethod
    def waiter() -> asyncio.Event:
        """A fresh waiter for an exchange (``Exchange.waiter``)."""
        return asyncio.Event()

    @staticmethod
    @contextlib.asynccontextmanager
    async def beside(watch: Callable[[], Awaitable[None]]) -> AsyncIterator[None]:
        """Run ``watch()`` in a task beside the body of the ``async with``, cancelled at
        its end."""
        task = asyncio.ensure_future(watch())
        try:
            yield
        finally:
            task.cancel()


class HttpListener(Listener):
    """A listening socket serving an MCP server over Streamable HTTP (returned by
    :func:`serve_http`): :attr:`port`, :attr:`url`, and an async context manager that
    closes everything on the way out."""

    def __init__(
        self,
        core: HttpServer,
        keepalive: float | None,
        idle_timeout: float | None = DEFAULT_IDLE_TIMEOUT,
    ) -> None:
        super().__init__(core.server, {})
        self.core = core
        """The sans-IO Streamable HTTP server."""
        self.idle_timeout = idle_timeout
        """Seconds without a byte of the request awaited before a connection is closed."""
        self._keepalive = keepalive
        self._sessions = HttpSessions(core)

    @property
    def url(self) -> str:
        """The MCP endpoint's URL."""
        host, port = self.address[:2]
        host = f"[{host}]" if ":" in host else host
        return f"http://{host}:{port}{self.core.path}"

    # ------------------------------------------------------------------ connections

    async def _handle(self, reader: _Reader, writer: asyncio.StreamWriter) -> None:
        from ..http._h11server import H11Server

        do = self._sessions.do
        glue = H11Server(self.core)
        read: asyncio.Task[bytes] | None = None
        try:
            while True:  # it writes what is queued (a 400 for a bad request too), then stops
                ex = glue.exchange
                if ex is not None and ex.waiter is None:
                    ex.waiter = asyncio.Event()
                if ex is not None:
                    ex.waiter.clear()
                out = glue.data_to_send()
                if out:
                    writer.write(out)
                    await writer.drain()
                if glue.closed:
                    break
                if glue.exchange is None:
                    work = glue.resume()  # a request that came while we answered
                    do(work, glue.exchange)
                    if glue.exchange is not None:
                        continue
                ex = glue.exchange
                if read is None:
                    read = asyncio.ensure_future(reader.read(_READ_SIZE))
                if ex is None or glue.needs_body:
                    done, _ = await asyncio.wait((read,), timeout=self.idle_timeout)
                    if not done:
                        break  # idle: close
                    data = read.result()
                    read = None
                    do(glue.receive_data(data), glue.exchange)
                    continue
                if ex.waiter is None:
                    ex.waiter = asyncio.Event()
                waiting = asyncio.ensure_future(ex.waiter.wait())
                try:
                    await asyncio.wait((read, waiting), return_when=asyncio.FIRST_COMPLETED)
                finally:
                    waiting.cancel()
                if read.done():
                    data = read.result()
                    read = None
                    do(glue.receive_data(data), glue.exchange)
        except (OSError, RuntimeError):  # the client went away under us
            pass
        finally:
            if read is not None:
                read.cancel()
            do(glue.connection_lost(), None)
            writer.close()
            with contextlib.suppress(OSError, RuntimeError):
                await writer.wait_closed()

    def close(self) -> None:
        """Stop listening, close every connection and end every session."""
        self._sessions.close()
        super().close()

    async def wait_closed(self) -> None:
        """Wait until the socket, the connections and the sessions are closed."""
        await super().wait_closed()
        await self._sessions.wait_closed()


async def serve_http(
    server: Server,
    host: str = "127.0.0.1",
    port: int = 0,
    *,
    path: str = "/mcp",
    keepalive: float | None = DEFAULT_KEEPALIVE,
    idle_timeout: float | None = DEFAULT_IDLE_TIMEOUT,
    **options: Any,
) -> HttpListener:
    """Serve ``server`` over Streamable HTTP on ``host:port`` (default: loopback, a free
    port: see :attr:`HttpListener.port` and :attr:`HttpListener.url`), at ``path``.

    :param keepalive: seconds between ``: keep-alive`` comments on open SSE streams
        (``None``: none).
    :param idle_timeout: seconds a connection may keep us waiting for a request (the
        next one, or the rest of one) before it is closed (``None``: forever).
    :param options: keywords of :class:`~mcp_sansio.http.HttpServer` (``allowed_hosts=``,
        ``allowed_origins=``, ``json_response=``, ``max_body_size=``, ``state_keys=``, …)
        and of each :class:`~mcp_sansio.session.ServerSession` (``versions=``, …).
    """
    core = HttpServer(server, path=path, **options)
    listener = HttpListener(core, keepalive, idle_timeout)
    listening = await asyncio.start_server(listener._serve, host, port)
    listener._listening = listening
    listener.sockets = tuple(listening.sockets)
    listener._sessions.start_keepalive(keepalive)
    return listener
