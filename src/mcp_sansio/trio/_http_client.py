"""The trio binding of the Streamable HTTP client transport.

:class:`HttpStream` is the ``trio.abc.Stream`` that :class:`mcp_sansio.trio.Client` drives
its session over (see :meth:`mcp_sansio.trio.Client.connect_http`): what the session sends
goes to a :class:`~mcp_sansio.http._client.HttpClientTransport`, whose requests run as tasks
of the stream's own nursery (:meth:`HttpStream.run`, which the client starts in its nursery),
many at once, each on its own connection from a small keep-alive pool; what the responses
carry for the session is received with :meth:`HttpStream.receive_some`. ``https://`` uses
``trio.open_ssl_over_tcp_stream``. All the HTTP work is in the sans-IO
:mod:`~mcp_sansio.http._client` and :mod:`~mcp_sansio.http._h11client` (the endpoint, the
options and the dispatch of the actions are :class:`~mcp_sansio.http._h11client.ClientBinding`
's); this module only opens sockets, moves bytes and sleeps a reconnection's delay.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable
from typing import Any, Final

import h11
import trio

from ..http._client import AuthFetch, AuthOpenUrl, HttpRequest
from ..http._client_parts import FetchError, FetchResponse
from ..http._h11client import HTTP_OPTIONS, ClientBinding, H11Exchange, parse_url
from ._fetch import fetch

__all__ = ["HTTP_OPTIONS", "HttpStream", "parse_url"]

_READ_SIZE: Final = 1 << 16
_BROKEN: Final = (OSError, trio.BrokenResourceError, trio.ClosedResourceError)
_log = logging.getLogger("mcp_sansio.http")


class _Conn:
    __slots__ = ("h11", "stream")

    def __init__(self, stream: trio.abc.Stream) -> None:
        self.stream = stream
        self.h11: h11.Connection | None = None  # once an exchange made one

    def _socket(self) -> Any:
        stream: Any = self.stream
        if isinstance(stream, trio.SSLStream):
            stream = stream.transport_stream
        return getattr(stream, "socket", None)

    def dropped(self) -> bool:
        """Whether the server wrote on this idle connection (bytes, or its end)."""
        sock = self._socket()
        return sock is not None and sock.is_readable()

    def close_now(self) -> None:
        """Close the connection's socket (without a checkpoint: from sync code)."""
        sock = self._socket()
        if sock is not None:
            sock.close()


class HttpStream(ClientBinding[_Conn], trio.abc.Stream):
    """The stream of a :class:`mcp_sansio.trio.Client` over Streamable HTTP.

    Its exchanges run in :meth:`run`, which must be running for requests to be made
    (``await nursery.start(stream.run)``); :meth:`aclose` ends the session with a
    ``DELETE`` (when the server set a session id), made by itself within
    ``close_timeout``, and closes every connection.

    :param url: the endpoint (``http://host:port/path``; ``https://`` uses TLS).
    :param options: the keywords of :class:`~mcp_sansio.http._h11client.ClientBinding`:
        ``headers=`` (extra headers sent with every request), ``max_body_size=``,
        ``max_reconnects=``, ``default_retry_ms=``, ``listen=``, ``reopen=``, ``max_idle=``,
        ``ssl=``, ``close_timeout=``, ``max_follow_ups=``, ``max_write_buffer=`` and
        ``write_timeout=`` (the bound and the deadline of the POSTs that owe no answer),
        ``auth=`` (a :class:`~mcp_sansio.auth.ClientAuth`) and ``open_url=`` (the handler of
        a flow's person step: a coroutine function is awaited, a plain callable runs in a
        worker thread, so that one that blocks, such as a
        :class:`~mcp_sansio.blocking.LoopbackRedirect`, does not stall the run). A flow's steps are
        tasks of :meth:`run`'s nursery.
    """

    def __init__(self, url: str, **options: Any) -> None:
        super().__init__(url, **options)
        self._nursery: trio.Nursery | None = None
        self._run_scope = trio.CancelScope()
        self._scopes: dict[int, trio.CancelScope] = {}  # the exchanges' scopes, by stream
        self._late: list[HttpRequest] = []  # made before run() started or while closing
        self._ready = trio.Event()
        self._unpaused = trio.Event()  # set when reading may go on (a new one per pause)

    # ------------------------------------------------------------------ the exchanges' tasks

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Run the exchanges, each a task of a nursery of this method's, until
        :meth:`aclose` (or cancelled; the exchanges in progress are then dropped)."""
        with self._run_scope:
            try:
                async with trio.open_nursery() as nursery:
                    self._nursery = nursery
                    late, self._late = self._late, []
                    for request in late:
                        self._start(request)
                    task_status.started()
                    await trio.sleep_forever()
            finally:
                self._nursery = None

    # ------------------------------------------------------------------ trio.abc.Stream

    async def receive_some(self, max_bytes: int | None = None) -> bytes:
        """The next bytes for the session (at most ``max_bytes``); ``b""`` once closed."""
        await trio.lowlevel.checkpoint()
        while not self._incoming:
            if self._eof:
                return b""
            self._ready = trio.Event()
            await self._ready.wait()
        return self._take(max_bytes or -1)

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        """Send what the session wrote (each request is made by a task of its own); raises
        ``trio.ClosedResourceError`` once closed."""
        if self._closing:
            raise trio.ClosedResourceError("the HTTP stream is closed")
        self._run(self.transport.send(bytes(data)))
        await trio.lowlevel.checkpoint()

    async def wait_send_all_might_not_block(self) -> None:
        """Nothing to wait for: :meth:`send_all` never blocks."""
        await trio.lowlevel.checkpoint()

    async def aclose(self) -> None:
        """Close: abort the exchanges, make the ``DELETE`` that ends the session (when the
        server set a session id; waiting up to ``close_timeout`` for its answer), end the
        reading side, stop :meth:`run` and close every connection."""
        self._close_transport()
        late, self._late = self._late, []
        try:
            with trio.move_on_after(self.close_timeout):
                for request in late:
                    await self._exchange(request, trio.CancelScope(), self._idle())
        finally:
            self._run_scope.cancel()
            for conn in self._pool.drain():
                await trio.aclose_forcefully(conn.stream)
            await trio.lowlevel.cancel_shielded_checkpoint()

    # ------------------------------------------------------------------ actions

    def _wake(self) -> None:
        self._ready.set()

    def _resume(self) -> None:
        self._unpaused.set()

    async def _wait_unpaused(self, exchange: H11Exchange) -> None:
        while exchange.paused():
            if self._unpaused.is_set():
                self._unpaused = trio.Event()
            await self._unpaused.wait()

    def _dropped(self, connection: _Conn) -> bool:
        return connection.dropped()

    def _discard(self, connection: _Conn) -> None:
        connection.close_now()

    def _start(self, request: HttpRequest) -> None:
        nursery = self._nursery
        if nursery is None or self._closing:  # aclose() or run() makes it
            self._late.append(request)
            return
        scope = self._scopes[request.stream] = trio.CancelScope()
        # The requests take the idle connections in the order they were made (trio runs new
        # tasks in any order), so that the first goes out first: ``notifications/initialized``
        # before the calls that follow it.
        conn = None if request.delay > 0 else self._idle()
        name = f"mcp http {request.stream}"
        nursery.start_soon(self._exchange, request, scope, conn, name=name)

    def _fetch(self, action: AuthFetch) -> None:
        if self._nursery is not None:  # (a flow starts from a response: run() is running)
            self._nursery.start_soon(self._fetch_task, action)

    def _ask(self, action: AuthOpenUrl, handler: Callable[[str], Any]) -> None:
        if self._nursery is not None:
            self._nursery.start_soon(self._ask_task, action, handler)

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
                outcome = await trio.to_thread.run_sync(handler, action.url, abandon_on_cancel=True)
            if inspect.isawaitable(outcome):
                outcome = await outcome
        except Exception as exc:
            outcome = exc
        self._redirected(action, outcome)

    def _abort(self, stream: int) -> None:
        scope = self._scopes.get(stream)
        if scope is not None:
            scope.cancel()  # the exchange's own task too: it stops at its next read
        self._late = [r for r in self._late if r.stream != stream]

    # ------------------------------------------------------------------ exchanges

    async def _open(self) -> _Conn:
        endpoint = self.endpoint
        stream: trio.abc.Stream
        if self._ssl is not None:
            stream = await trio.open_ssl_over_tcp_stream(
                endpoint.host, endpoint.port, https_compatible=True, ssl_context=self._ssl
            )
        else:
            stream = await trio.open_tcp_stream(endpoint.host, endpoint.port)
        return _Conn(stream)

    async def _exchange(
        self, request: HttpRequest, scope: trio.CancelScope, conn: _Conn | None = None
    ) -> None:
        try:
            with scope:
                if request.delay > 0:
                    await trio.sleep(request.delay)
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
                        stale, conn = conn, None
                        await trio.aclose_forcefully(stale.stream)
                        continue
                    to_close = self._release(conn, exchange, keep=not scope.cancel_called)
                    conn = None
                    if to_close is not None:
                        await trio.aclose_forcefully(to_close.stream)
                    return
        finally:
            if self._scopes.get(request.stream) is scope:
                del self._scopes[request.stream]
            if conn is not None:  # cancelled (aborted, closing) or failed
                await trio.aclose_forcefully(conn.stream)

    async def _drive(self, conn: _Conn, exchange: H11Exchange) -> None:
        timeout = exchange.timeout
        deadline = trio.current_time() + timeout if timeout is not None else float("inf")
        try:
            with trio.move_on_at(deadline) as within:
                await conn.stream.send_all(exchange.start())
                receive = conn.stream.receive_some
                while not exchange.finished:
                    if exchange.paused():
                        await self._wait_unpaused(exchange)
                    self._run(exchange.receive_data(bytes(await receive(_READ_SIZE))))
            if within.cancelled_caught:
                self._run(exchange.overdue())
        except (*_BROKEN, h11.LocalProtocolError) as exc:
            reason = str(exc) or str(exc.__cause__ or "") or type(exc).__name__
            self._run(exchange.fail(reason))
        except Exception as exc:  # a bug: fail the exchange rather than leave it waiting
            _log.error("an HTTP exchange failed", exc_info=exc)
            self._run(exchange.fail(f"{type(exc).__name__}: {exc}"))
