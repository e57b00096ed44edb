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
import logging
import ssl as _ssl
from collections.abc import Iterable, Mapping
from typing import Final
from urllib.parse import urlsplit

import attrs
import h11

from ._client import (
    DEFAULT_MAX_BODY_SIZE,
    DEFAULT_MAX_RECONNECTS,
    DEFAULT_RETRY_MS,
    AbortRequest,
    ClientAction,
    HttpClientTransport,
    HttpRequest,
    ToSession,
)
from ._h11client import DEFAULT_MAX_IDLE, ConnectionPool, H11Exchange, host_header

__all__ = ["DEFAULT_CLOSE_TIMEOUT", "HTTP_OPTIONS", "HttpStreams", "Endpoint", "parse_url"]

#: How long :meth:`HttpStreams.wait_closed` waits for the ``DELETE`` that ends a session.
DEFAULT_CLOSE_TIMEOUT: Final = 2.0
#: The keywords of :class:`HttpStreams` that :meth:`~mcp_sansio.asyncio.Client.connect_http`
#: passes on (the others go to the client).
HTTP_OPTIONS: Final = (
    "max_body_size",
    "max_reconnects",
    "default_retry_ms",
    "listen",
    "max_idle",
    "ssl",
    "close_timeout",
)

_READ_SIZE: Final = 1 << 16
_log = logging.getLogger("mcp_sansio.http")


@attrs.frozen
class Endpoint:
    """Where an MCP endpoint is, from its URL."""

    scheme: str
    host: str
    port: int
    target: str
    """The path and query."""

    @property
    def host_header(self) -> str:
        """The ``Host`` header's value."""
        return host_header(self.host, self.port, 443 if self.scheme == "https" else 80)


def parse_url(url: str) -> Endpoint:
    """Split an ``http://`` or ``https://`` URL; raises :exc:`ValueError` for others."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"not an http:// or https:// URL: {url!r}")
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError as exc:  # a port out of range or not a number
        raise ValueError(f"bad port in {url!r}: {exc}") from None
    target = parts.path or "/"
    if parts.query:
        target += "?" + parts.query
    return Endpoint(parts.scheme, parts.hostname, port, target)


class _Conn:
    __slots__ = ("h11", "reader", "writer")

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.h11: h11.Connection | None = None  # once an exchange made one

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.writer.close()


class HttpStreams:
    """The reader and writer of a :class:`mcp_sansio.asyncio.Client` over Streamable HTTP.

    :param url: the endpoint (``http://host:port/path``; ``https://`` uses TLS).
    :param headers: extra headers sent with every request.
    :param max_body_size: the largest JSON body or SSE event accepted, in bytes.
    :param max_reconnects: resumptions in a row without progress before giving up.
    :param default_retry_ms: the wait before resuming a stream whose server set no ``retry``.
    :param listen: open the standalone GET stream (initialize era); off by default.
    :param max_idle: idle keep-alive connections kept.
    :param ssl: for ``https://``: an :class:`ssl.SSLContext` (default: the system's
        default context).
    :param close_timeout: how long :meth:`wait_closed` waits for the ``DELETE``.
    """

    def __init__(
        self,
        url: str,
        *,
        headers: Mapping[str, str] | Iterable[tuple[str, str]] | None = None,
        max_body_size: int = DEFAULT_MAX_BODY_SIZE,
        max_reconnects: int = DEFAULT_MAX_RECONNECTS,
        default_retry_ms: int = DEFAULT_RETRY_MS,
        listen: bool = False,
        max_idle: int = DEFAULT_MAX_IDLE,
        ssl: _ssl.SSLContext | None = None,
        close_timeout: float = DEFAULT_CLOSE_TIMEOUT,
    ) -> None:
        self.endpoint = parse_url(url)
        """Where the server is."""
        self.transport = HttpClientTransport(
            self.endpoint.target,
            headers=headers or (),
            max_body_size=max_body_size,
            max_reconnects=max_reconnects,
            default_retry_ms=default_retry_ms,
            listen=listen,
        )
        """The sans-IO transport."""
        self.close_timeout = close_timeout
        self._ssl: _ssl.SSLContext | None = None
        if self.endpoint.scheme == "https":
            self._ssl = ssl if ssl is not None else _ssl.create_default_context()
        self._host_header = self.endpoint.host_header
        self._pool: ConnectionPool[_Conn] = ConnectionPool(max_idle)
        self._tasks: dict[int, asyncio.Task[None]] = {}
        self._aborted: set[int] = set()
        self._incoming: list[bytes] = []
        self._waiter: asyncio.Future[None] | None = None
        self._eof = False
        self._closing = False

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
        incoming = self._incoming
        data = incoming[0] if len(incoming) == 1 else b"".join(incoming)
        incoming.clear()
        if 0 < n < len(data):
            incoming.append(data[n:])
            data = data[:n]
        return data

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
        if self._closing:
            return
        self._closing = True
        self._run(self.transport.close())
        self._eof = True
        self._wake()

    async def wait_closed(self) -> None:
        """Wait (up to ``close_timeout``) for the ``DELETE``; then close every connection."""
        tasks = list(self._tasks.values())
        if tasks:
            await asyncio.wait(tasks, timeout=self.close_timeout)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        for conn in self._pool.drain():
            conn.close()

    # ------------------------------------------------------------------ actions

    def _run(self, actions: list[ClientAction]) -> None:
        for action in actions:
            if isinstance(action, ToSession):
                if not self._eof:
                    self._incoming.append(action.data)
                    self._wake()
            elif isinstance(action, HttpRequest):
                task = asyncio.get_running_loop().create_task(self._exchange(action))
                self._tasks[action.stream] = task
                task.add_done_callback(functools.partial(self._done, action.stream))
            elif isinstance(action, AbortRequest):
                running = self._tasks.get(action.stream)
                if running is None:
                    continue
                if running is asyncio.current_task():
                    self._aborted.add(action.stream)  # it stops after the bytes in hand
                else:
                    running.cancel()
            else:
                _log.warning("%s", action.message)

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

    def _idle(self) -> _Conn | None:
        while (conn := self._pool.get(None)) is not None:
            if not conn.reader.at_eof() and not conn.writer.is_closing():
                return conn
            conn.close()
        return None

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
                        where = f"{self.endpoint.host}:{self.endpoint.port}"
                        reason = f"cannot connect to {where}: {exc.strerror or exc}"
                        self._run(self.transport.request_failed(request.stream, reason))
                        return
                exchange = H11Exchange(
                    self.transport,
                    request,
                    self._host_header,
                    conn.h11,
                )
                conn.h11 = exchange.conn
                await self._drive(conn, exchange)
                if exchange.stale:  # an idle connection the server had closed: once more
                    conn.close()
                    conn = None
                    continue
                if exchange.reusable and not self._closing:
                    exchange.recycle()
                    evicted = self._pool.put(None, conn)
                    if evicted is not None:
                        evicted.close()
                else:
                    conn.close()
                conn = None
                return
        finally:
            if conn is not None:  # cancelled (aborted, closing) or failed
                conn.close()

    async def _drive(self, conn: _Conn, exchange: H11Exchange) -> None:
        stream = exchange.request.stream
        try:
            conn.writer.write(exchange.start())
            await conn.writer.drain()
            read = conn.reader.read
            while not exchange.finished:
                self._run(exchange.receive_data(await read(_READ_SIZE)))
                if stream in self._aborted:
                    exchange.finished = True
                    return
        except (OSError, h11.LocalProtocolError) as exc:
            self._run(exchange.fail(str(exc) or type(exc).__name__))
        except Exception as exc:  # a bug: fail the exchange rather than leave it waiting
            _log.error("an HTTP exchange failed", exc_info=exc)
            self._run(exchange.fail(f"{type(exc).__name__}: {exc}"))
