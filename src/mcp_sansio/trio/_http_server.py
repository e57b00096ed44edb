"""Streamable HTTP on trio: sockets and tasks around :class:`H11Server` and
:class:`HttpServer`; every decision is theirs. Each MCP session is driven by the same loop
as on stdio (``mcp_sansio.trio._Loop``, in the server's nursery), whose writes go through
:meth:`HttpServer.route` onto the right HTTP responses.

A connection is a task that moves bytes between its socket and its :class:`H11Server`,
with a reader task beside it so that a client leaving in the middle of a response is
noticed (2026-07-28: its request is cancelled). An exchange's ``waiter`` is a
``trio.Event``, replaced by a fresh one before each drain of its output.

:class:`HttpSessions` runs the sessions for any trio binding: the h11 listener here and the
ASGI application (:mod:`mcp_sansio.asgi`, under hypercorn's trio worker), which is why h11
is only imported when a connection is served.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from typing import Any, NoReturn

import trio

from .._events import RequestId
from ..http._server import (
    DEFAULT_IDLE_TIMEOUT,
    DEFAULT_KEEPALIVE,
    Deliver,
    Exchange,
    HttpServer,
    HttpSession,
    Wake,
    Work,
    wake,
)
from ..http._sessions import Fetch
from ..server import Server
from ._loop import _GONE, _Loop

__all__ = ["DEFAULT_IDLE_TIMEOUT", "DEFAULT_KEEPALIVE", "HttpSessions", "serve_http"]

_READ_SIZE = 65536


class _Nowhere(trio.abc.Stream):
    """The stream of a session driven over HTTP: its bytes come through
    :meth:`HttpServer.end` and go through :meth:`HttpServer.route` instead."""

    async def receive_some(self, max_bytes: int | None = None) -> bytes:
        await trio.sleep_forever()

    async def send_all(self, data: Any) -> None:  # pragma: no cover - route is always set
        await trio.lowlevel.checkpoint()

    async def wait_send_all_might_not_block(self) -> None:  # pragma: no cover
        await trio.lowlevel.checkpoint()

    async def aclose(self) -> None:  # pragma: no cover - never closed
        await trio.lowlevel.checkpoint()


class HttpSessions:
    """The MCP sessions of an :class:`HttpServer` on trio, for a binding (the h11
    listener, the ASGI application) that moves the HTTP bytes: a ``_Loop`` per session in
    :attr:`nursery`, whose writes go through :meth:`HttpServer.route`, the work of
    :meth:`HttpServer.end` and :meth:`HttpServer.disconnected` carried out
    (:meth:`carry_out`), the exchanges woken, the keep-alive.

    The listener gives it its own nursery; a binding with none (the ASGI application:
    a request's task ends before its session does) calls :meth:`open`, which runs the
    sessions' nursery in a trio system task until :meth:`aclose`."""

    def __init__(self, core: HttpServer, nursery: trio.Nursery | None = None) -> None:
        self.core = core
        self.nursery = nursery
        """Where the sessions' loops run."""
        self._ready: trio.Event | None = None
        self._stop = trio.Event()
        self._done = trio.Event()

    async def _driver(self, hs: HttpSession) -> _Loop:
        loop: _Loop | None = hs.driver
        if loop is None:
            assert self.nursery is not None, "the sessions are not open"
            loop = _Loop(hs.session, _Nowhere())
            core = self.core

            write = core.wire(hs)

            def route(data: bytes, related: RequestId | None) -> None:
                write(data, related)
                self._reap(hs)

            loop.route = route
            await self.nursery.start(loop.run)
            hs.driver = loop
        return loop

    def _reap(self, hs: HttpSession) -> None:
        """A stateless session is over once its POST is answered: stop its loop."""
        if hs.over:
            self._stop_session(hs)

    @staticmethod
    def _stop_session(hs: HttpSession) -> None:
        loop: _Loop | None = hs.driver
        if loop is not None:
            loop.scope.cancel()  # its handlers with it

    async def carry_out(self, work: Iterable[Work], ex: Exchange | None) -> None:
        """Carry out ``work`` for the request ``ex`` (``None``: no request): feed each
        :class:`Deliver` to its session (its loop started on first use), stop the loop
        of each :class:`Terminate`, wake the exchanges of each :class:`Wake`."""
        core = self.core
        for item in work:
            if isinstance(item, Wake):
                wake(item.exchanges)
                continue
            if isinstance(item, Fetch):  # a token's verification needs a request
                assert self.nursery is not None, "the sessions are not open"
                self.nursery.start_soon(self._fetch, item)
                continue
            hs = item.session
            if isinstance(item, Deliver):
                loop = await self._driver(hs)
                core.begin_delivery(hs, ex)
                try:
                    loop.feed(item.data)
                finally:
                    wake(core.end_delivery(hs))
                self._reap(hs)
            else:
                self._stop_session(hs)

    async def _fetch(self, item: Fetch) -> None:
        """Make a :class:`Fetch`'s request, hand the answer back to the core."""
        from ._fetch import fetch

        try:
            status, headers, body = await fetch(item.request)
        except Exception:  # no answer: status 0 (the verifier decides)
            status, headers, body = 0, (), b""
        await self.carry_out(self.core.fetched(item.exchange, status, headers, body), item.exchange)

    def close(self) -> None:
        """End every session."""
        for hs in self.core.all_sessions():
            self._stop_session(hs)

    async def keep_alive(self, every: float) -> NoReturn:
        """Queue a ``: keep-alive`` comment on every open SSE response, ``every`` seconds."""
        while True:
            await trio.sleep(every)
            wake(self.core.keepalive())

    # ------------------------------------------------------------------ without a nursery

    async def open(self, keepalive: float | None) -> None:
        """Make the sessions' nursery (a system task's, with the keep-alive task in it
        unless ``keepalive`` is ``None``) unless it is there; return once it is."""
        if self._ready is None:
            self._ready = trio.Event()
            self._stop = trio.Event()
            self._done = trio.Event()
            trio.lowlevel.spawn_system_task(self._home, keepalive, name="mcp-sansio sessions")
        await self._ready.wait()

    async def _home(self, keepalive: float | None) -> None:
        try:
            async with trio.open_nursery() as nursery:
                self.nursery = nursery
                if keepalive is not None:
                    nursery.start_soon(self.keep_alive, keepalive)
                assert self._ready is not None
                self._ready.set()
                await self._stop.wait()
                self.close()
                nursery.cancel_scope.cancel()
        finally:
            self.nursery = None
            self._ready = None
            self._done.set()

    async def aclose(self) -> None:
        """End every session and the nursery :meth:`open` made; wait until they have ended."""
        if self._ready is None:
            self.close()
            return
        self._stop.set()
        await self._done.wait()

    @staticmethod
    def waiter() -> trio.Event:
        """A fresh waiter for an exchange (``Exchange.waiter``)."""
        return trio.Event()

    @staticmethod
    @contextlib.asynccontextmanager
    async def beside(watch: Callable[[], Awaitable[None]]) -> AsyncIterator[None]:
        """Run ``watch()`` in a task beside the body of the ``async with``, cancelled at
        its end."""
        async with trio.open_nursery() as tasks:
            tasks.start_soon(watch)
            yield
            tasks.cancel_scope.cancel()


class _Service(HttpSessions):
    """The sessions of an :class:`HttpServer`, each run by a ``_Loop`` in ``nursery``, and
    the connections that reach them."""

    def __init__(self, core: HttpServer, nursery: trio.Nursery, idle_timeout: float | None) -> None:
        super().__init__(core, nursery)
        self.idle_timeout = math.inf if idle_timeout is None else idle_timeout

    # ------------------------------------------------------------------ connections

    async def handle(self, stream: trio.abc.Stream) -> None:
        """Serve one connection until either side closes it."""
        import h11

        from ..http._h11server import H11Server

        glue = H11Server(self.core)
        inbox_in, inbox = trio.open_memory_channel[bytes](1)
        wakeup = trio.Event()

        async def read() -> None:
            while True:
                try:
                    data = bytes(await stream.receive_some(_READ_SIZE))
                except _GONE:
                    data = b""
                await inbox_in.send(data)
                wakeup.set()
                if not data:
                    return

        async with trio.open_nursery() as tasks:
            tasks.start_soon(read)
            try:
                while True:
                    # Woken by the reader, or (through the exchange's waiter) by the
                    # sessions and the keep-alive.
                    wakeup = trio.Event()
                    if glue.exchange is not None:
                        glue.exchange.waiter = wakeup
                    out = glue.data_to_send()
                    if out:
                        await stream.send_all(out)
                    if glue.closed:
                        break
                    if glue.exchange is None:
                        await self.carry_out(glue.resume(), glue.exchange)  # a pipelined request
                        if glue.exchange is not None:
                            continue
                    try:
                        data = inbox.receive_nowait()
                    except trio.WouldBlock:
                        if glue.exchange is None or glue.needs_body:
                            with trio.move_on_after(self.idle_timeout) as idle:
                                await wakeup.wait()
                            if idle.cancelled_caught:
                                break  # idle: close
                        else:
                            await wakeup.wait()
                        continue
                    await self.carry_out(glue.receive_data(data), glue.exchange)
                    if not data:
                        break  # the client left: nothing more to write
            except _GONE:  # the client went away under us
                pass
            except h11.LocalProtocolError:
                pass  # the response cannot be framed after a broken request: just close
            finally:
                with trio.CancelScope(shield=True):
                    await self.carry_out(glue.connection_lost(), None)
                tasks.cancel_scope.cancel()


async def serve_http(
    server: Server,
    host: str = "127.0.0.1",
    port: int = 0,
    *,
    path: str = "/mcp",
    keepalive: float | None = DEFAULT_KEEPALIVE,
    idle_timeout: float | None = DEFAULT_IDLE_TIMEOUT,
    task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED,
    **options: Any,
) -> NoReturn:
    """Serve ``server`` over Streamable HTTP on ``host:port`` (default: loopback, a free
    port), at ``path``, until cancelled; ``port = await nursery.start(serve_http, server)``
    returns the port once it is listening. Cancelling it closes the connections and ends
    every session.

    :param keepalive: seconds between ``: keep-alive`` comments on open SSE streams
        (``None``: none).
    :param idle_timeout: seconds a connection may keep us waiting for a request (the
        next one, or the rest of one) before it is closed (``None``: forever).
    :param options: keywords of :class:`~mcp_sansio.http.HttpServer` (``allowed_hosts=``,
        ``allowed_origins=``, ``json_response=``, ``max_body_size=``, ``state_keys=``, …)
        and of each :class:`~mcp_sansio.session.ServerSession` (``versions=``, …).
    """
    core = HttpServer(server, path=path, **options)
    listeners = await trio.open_tcp_listeners(port, host=host)
    async with trio.open_nursery() as nursery:
        service = _Service(core, nursery, idle_timeout)
        try:
            if keepalive is not None:
                nursery.start_soon(service.keep_alive, keepalive)
            task_status.started(listeners[0].socket.getsockname()[1])
            await trio.serve_listeners(service.handle, listeners, handler_nursery=nursery)
        finally:
            service.close()
    raise AssertionError("unreachable")  # pragma: no cover - serve_listeners never returns
