"""The asyncio binding of the Streamable HTTP client transport.

:class:`HttpStreams` is the reader and the writer that :class:`mcp_sansio.asyncio.Client`
drives its session over (see :meth:`mcp_sansio.asyncio.Client.connect_http`): what the
session writes goes to a :class:`~mcp_sansio.http._client.HttpClientTransport`, whose
requests run as tasks, many at once, each on its own connection from a small keep-alive pool
(:class:`~mcp_sansio.http._h11client.ConnectionPool`); what the responses carry for the
session is read back with :meth:`HttpStreams.read`. All the HTTP work is in the sans-IO
:mod:`~mcp_sansio.http._client` and :mod:`~mcp_sansio.http._h11client`; this module only
opens sockets, moves bytes and sleeps a reconnection's delay.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import inspect
import logging
from collections.abc import Awaitable, Callable
from typing import Any, Final, TypeVar

import h11

from ..http._client import AuthFetch, AuthOpenUrl, HttpRequest
from ..http._client_parts import FetchError, FetchResponse
from ..http._h11client import (
    DEFAULT_CLOSE_TIMEOUT,
    HTTP_OPTIONS,
    ClientBinding,
    Endpoint,
    H11Exchange,
    parse_url,
    readable,
)
from ._fetch import fetch

__all__ = ["DEFAULT_CLOSE_TIMEOUT", "HTTP_OPTIONS", "HttpStreams", "Endpoint", "parse_url"]

_READ_SIZE: Final = 1 << 16
_log = logging.getLogger("mcp_sansio.http")
R = TypeVar("R")


class _Overdue(Exception):
    """A follow-up's deadline passed."""


async def _within(awaitable: Awaitable[R], deadline: float | None) -> R:
    """``await awaitable``, by the loop time ``deadline`` (``None``: no limit), or raise
    :exc:`_Overdue`."""
    if deadline is None:
        return await awaitable
    loop = asyncio.get_running_loop()
    try:
        return await asyncio.wait_for(awaitable, max(0.0, deadline - loop.time()))
    except asyncio.TimeoutError:
        if loop.time() < deadline:  # pragma: no cover - a socket's own timeout
            raise
        raise _Overdue from None


class _Conn:
    __slots__ = ("h11", "reader", "writer")

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.h11: h11.Connection | None = None  # once an exchange made one

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.writer.close()

    def dropped(self) -> bool:
        """Whether the server wrote on this idle connection (bytes, or its end)."""
        reader = self.reader
        if reader.at_eof() or self.writer.is_closing():
            return True
        # What the transport read since waits in the reader's buffer (StreamReader tells
        # it to no public method), what it has not read yet in the socket.
        if getattr(reader, "_buffer", None):
            return True
        sock = self.writer.get_extra_info("socket")
        return sock is not None and readable(sock)


class HttpStreams(ClientBinding[_Conn]):
    """The reader and writer of a :class:`mcp_sansio.asyncio.Client` over Streamable HTTP.

    :param url: the endpoint (``http://host:port/path``; ``https://`` uses TLS).
    :param options: the keywords of :class:`~mcp_sansio.http._h11client.ClientBinding`:
        ``headers=`` (extra headers sent with every request), ``max_body_size=``,
        ``max_reconnects=``, ``default_retry_ms=``, ``listen=``, ``reopen=``, ``max_idle=``,
        ``ssl=``, ``close_timeout=`` (how long :meth:`wait_closed` waits for the ``DELETE``),
        ``max_follow_ups=``, ``max_write_buffer=`` and ``write_timeout=`` (the bound and the
        deadline of the POSTs that owe no answer), ``auth=`` (a
        :class:`~mcp_sansio.auth.ClientAuth`) and ``open_url=`` (the handler of a flow's
        person step: a coroutine function is awaited, a plain callable runs in a worker
        thread, so that one that blocks, such as a
        :class:`~mcp_sansio.blocking.LoopbackRedirect`, does not stall the loop).
    """

    def __init__(self, url: str, **options: Any) -> None:
        super().__init__(url, **options)
        self._auth_tasks: set[asyncio.Task[None]] = set()  # a flow's step at work
        self._tasks: dict[int, asyncio.Task[None]] = {}
        self._aborted: set[int] = set()
        self._waiter: asyncio.Future[None] | None = None
        self._unpaused: asyncio.Event | None = None  # set when reading may go on

    # ------------------------------------------------------------------ the reader

    async def read(self, n: int = -1) -> bytes:
        """The next bytes for the session (at most ``n`` when ``n > 0``); ``b""`` once
        closed."""
        while not self._incoming:
            if self._eof:
                return b""
            waiter = self._waiter = asyncio.get_running_loop().create_future()
            try:
                await waiter
            finally:
                self._waiter = None
        return self._take(n)

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    # ------------------------------------------------------------------ the writer

    def write(self, data: bytes) -> None:
        """Send what the session wrote."""
        if not self._closing:
            self._run(self.transport.send(data))

    async def drain(self) -> None:
        """Nothing to wait for: each request is written by its own task."""

    def close(self) -> None:
        """Close: abort the exchanges, send the ``DELETE`` that ends the session (when the
        server set a session id), end the reading side."""
        self._close_transport()

    async def wait_closed(self) -> None:
        """Wait (up to ``close_timeout``) for the ``DELETE``; then close every connection."""
        tasks = list(self._tasks.values())
        if tasks:
            await asyncio.wait(tasks, timeout=self.close_timeout)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        flows = list(self._auth_tasks)
        for task in flows:
            task.cancel()
        await asyncio.gather(*flows, return_exceptions=True)
        for conn in self._pool.drain():
            conn.close()

    # ------------------------------------------------------------------ actions

    def _start(self, request: HttpRequest) -> None:
        task = asyncio.get_running_loop().create_task(self._exchange(request))
        self._tasks[request.stream] = task
        task.add_done_callback(functools.partial(self._done, request.stream))

    def _abort(self, stream: int) -> None:
        running = self._tasks.get(stream)
        if running is None:
            return
        if running is asyncio.current_task():
            self._aborted.add(stream)  # it stops after the bytes in hand
        else:
            running.cancel()

    def _resume(self) -> None:
        if self._unpaused is not None:
            self._unpaused.set()

    def _fetch(self, action: AuthFetch) -> None:
        self._spawn(self._fetch_task(action))

    def _ask(self, action: AuthOpenUrl, handler: Callable[[str], Any]) -> None:
        self._spawn(self._ask_task(action, handler))

    def _spawn(self, work: Awaitable[None]) -> None:
        task = asyncio.ensure_future(work)
        self._auth_tasks.add(task)
        task.add_done_callback(self._auth_tasks.discard)

    async def _fetch_task(self, action: AuthFetch) -> None:
        outcome: FetchResponse | FetchError
        try:
            outcome = await fetch(
                action.request,
                timeout=action.timeout,
                ssl=self._fetch_ssl,
                max_body=action.max_body,
            )
        except FetchError as exc:
            outcome = exc
        self._fetched(action, outcome)

    async def _ask_task(self, action: AuthOpenUrl, handler: Callable[[str], Any]) -> None:
        outcome: object
        try:
            if inspect.iscoroutinefunction(handler):
                outcome = await handler(action.url)
            else:
                outcome = await asyncio.get_running_loop().run_in_executor(
                    None, handler, action.url
                )
            if inspect.isawaitable(outcome):
                outcome = await outcome
        except Exception as exc:
            outcome = exc
        self._redirected(action, outcome)

    async def _wait_unpaused(self, exchange: H11Exchange) -> None:
        while exchange.paused():
            unpaused = self._unpaused
            if unpaused is None or unpaused.is_set():
                unpaused = self._unpaused = asyncio.Event()
            await unpaused.wait()

    def _done(self, stream: int, task: asyncio.Task[None]) -> None:
        if self._tasks.get(stream) is task:
            del self._tasks[stream]
        self._aborted.discard(stream)
        if not task.cancelled() and task.exception() is not None:
            _log.error("an HTTP exchange failed", exc_info=task.exception())

    # ------------------------------------------------------------------ exchanges

    async def _open(self) -> _Conn:
        endpoint = self.endpoint
        reader, writer = await asyncio.open_connection(
            endpoint.host,
            endpoint.port,
            ssl=self._ssl,
            server_hostname=endpoint.host if self._ssl is not None else None,
            limit=_READ_SIZE,
        )
        return _Conn(reader, writer)

    def _dropped(self, connection: _Conn) -> bool:
        return connection.dropped()

    def _discard(self, connection: _Conn) -> None:
        connection.close()

    async def _exchange(self, request: HttpRequest) -> None:
        conn: _Conn | None = None
        try:
            if request.delay > 0:
                await asyncio.sleep(request.delay)
            conn = self._idle()
            while True:
                if conn is None:
                    try:
                        conn = await self._open()
                    except OSError as exc:
                        reason = self._cannot_connect(exc)
                        self._run(self.transport.request_failed(request.stream, reason))
                        return
                exchange = self._new_exchange(request, conn.h11)
                conn.h11 = exchange.conn
                await self._drive(conn, exchange)
                if exchange.stale:  # an idle connection the server had closed: once more
                    conn.close()
                    conn = None
                    continue
                to_close = self._release(conn, exchange)
                conn = None
                if to_close is not None:
                    to_close.close()
                return
        finally:
            if conn is not None:  # cancelled (aborted, closing) or failed
                conn.close()

    async def _drive(self, conn: _Conn, exchange: H11Exchange) -> None:
        stream = exchange.request.stream
        timeout = exchange.timeout
        deadline = None if timeout is None else asyncio.get_running_loop().time() + timeout
        try:
            conn.writer.write(exchange.start())
            await _within(conn.writer.drain(), deadline)
            read = conn.reader.read
            while not exchange.finished:
                if exchange.paused():
                    await self._wait_unpaused(exchange)
                self._run(exchange.receive_data(await _within(read(_READ_SIZE), deadline)))
                if stream in self._aborted:
                    exchange.finished = True
                    return
        except _Overdue:
            self._run(exchange.overdue())
        except (OSError, h11.LocalProtocolError) as exc:
            self._run(exchange.fail(str(exc) or type(exc).__name__))
        except Exception as exc:  # a bug: fail the exchange rather than leave it waiting
            _log.error("an HTTP exchange failed", exc_info=exc)
            self._run(exchange.fail(f"{type(exc).__name__}: {exc}"))
