"""The blocking binding of the Streamable HTTP client transport.

:class:`HttpStream` is the :class:`~mcp_sansio.blocking.Stream` that
:class:`mcp_sansio.blocking.Client` drives its session over (see
:meth:`mcp_sansio.blocking.Client.connect_http`): what the session writes goes to a
:class:`~mcp_sansio.http._client.HttpClientTransport`, whose requests are made by a bounded
pool of worker threads, each request on its own connection from a small keep-alive pool;
what the responses carry for the session is read back with :meth:`HttpStream.read_some`.
All the HTTP work is in the sans-IO :mod:`~mcp_sansio.http._client` and
:mod:`~mcp_sansio.http._h11client` (the endpoint, the options and the dispatch of the actions
are :class:`~mcp_sansio.http._h11client.ClientBinding`'s); this module only opens sockets,
moves bytes, sleeps a reconnection's delay, and keeps the threads apart: the transport and
everything it touches are used under one lock.

The requests take the idle connections, and are written, in the order the session made
them (a delayed reconnection aside), so that ``notifications/initialized`` goes out before
the calls that follow it; the connections themselves are opened in parallel.

**The bound on threads.** At most ``max_workers`` requests are in progress at once (a
thread each, started when needed and ended when nothing is queued); more wait their turn in
order. An answer that comes as an event stream keeps its thread until the stream ends, and
so does the standalone GET stream (``listen=True``) and a 2026-07-28
``subscriptions/listen`` for as long as it lasts; a server's request on a stream is answered
with a POST that needs a thread of its own. So keep ``max_workers`` above the number of
such streams open at once, plus one: the default (:data:`DEFAULT_MAX_WORKERS`) is plenty for
a client that makes one call at a time, as a blocking client does. The POSTs that owe no
answer (a response to the server's request, a notification) hold at most
``max_follow_ups`` threads, which must be fewer than ``max_workers`` (by default the
transport's bound, 4, and at most half of ``max_workers``), and each for at most
``write_timeout``: a server that never answers them cannot take every thread.
"""

from __future__ import annotations

import contextlib
import logging
import socket
import ssl
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any, Final

import h11

from ..http._client import DEFAULT_MAX_FOLLOW_UPS, AuthFetch, AuthOpenUrl, HttpRequest
from ..http._client_parts import FetchError, FetchResponse
from ..http._h11client import HTTP_OPTIONS as _SHARED_OPTIONS
from ..http._h11client import ClientBinding, H11Exchange, parse_url, readable
from ._fetch import fetch

__all__ = [
    "DEFAULT_CONNECT_TIMEOUT",
    "DEFAULT_MAX_WORKERS",
    "HTTP_OPTIONS",
    "HttpStream",
    "parse_url",
]

#: The most requests an :class:`HttpStream` has in progress at once (a thread each).
DEFAULT_MAX_WORKERS: Final = 8
#: How long opening a connection (and its TLS handshake) may take, in seconds.
DEFAULT_CONNECT_TIMEOUT: Final = 10.0
#: The keywords of :class:`HttpStream` that :meth:`mcp_sansio.blocking.Client.connect_http`
#: passes on (the others go to the client).
HTTP_OPTIONS: Final = (*_SHARED_OPTIONS, "max_workers", "connect_timeout")

_READ_SIZE: Final = 1 << 16
_log = logging.getLogger("mcp_sansio.http")


class _Conn:
    __slots__ = ("h11", "sock")

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.h11: h11.Connection | None = None  # once an exchange made one

    def shutdown(self) -> None:
        """Wake a thread blocked on the socket (the next ``recv`` returns ``b""``)."""
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.close()

    def dropped(self) -> bool:
        """Whether the server wrote on this idle connection (bytes, or its end)."""
        sock = self.sock
        if isinstance(sock, ssl.SSLSocket) and sock.pending():
            return True
        return readable(sock)


class _Job:
    """A request, queued or in progress."""

    __slots__ = ("aborted", "conn", "released", "request", "seq", "to_close", "wake")

    def __init__(self, request: HttpRequest, seq: int) -> None:
        self.request = request
        self.seq = seq  # its place in the order of writing (0: none, a delayed request)
        self.aborted = False
        self.wake = threading.Event()  # ends the wait of a delayed request when aborted
        self.conn: _Conn | None = None  # the connection it is using, while it is
        # Set when the connection went back to the pool in the same locked step that
        # delivered the answer (so the request the answer prompts finds it there).
        self.released = False
        self.to_close: _Conn | None = None


class HttpStream(ClientBinding[_Conn]):
    """The :class:`~mcp_sansio.blocking.Stream` of a :class:`mcp_sansio.blocking.Client`
    over Streamable HTTP. Its methods may be called from any thread.

    :param url: the endpoint (``http://host:port/path``; ``https://`` uses TLS).
    :param max_workers: the most requests in progress at once, each in a thread (see the
        module docs for what holds one).
    :param connect_timeout: how long opening a connection may take, in seconds (``None``:
        the system's limit).
    :param options: the keywords of :class:`~mcp_sansio.http._h11client.ClientBinding`:
        ``headers=`` (extra headers sent with every request), ``max_body_size=``,
        ``max_reconnects=``, ``default_retry_ms=``, ``listen=``, ``reopen=``, ``max_idle=``,
        ``ssl=``, ``close_timeout=`` (how long :meth:`close` waits for the ``DELETE``),
        ``max_follow_ups=`` (fewer than ``max_workers``; by default 4, and at most half of
        ``max_workers``), ``max_write_buffer=`` and ``write_timeout=`` (the bound and the
        deadline of the POSTs that owe no answer), ``auth=`` (a
        :class:`~mcp_sansio.auth.ClientAuth`) and ``open_url=`` (the handler of a flow's
        person step, ``open_url(url) -> redirect URL``, called in a thread of its own). A
        flow's steps run one at a time, each in a thread of its own, besides
        ``max_workers``.
    """

    def __init__(
        self,
        url: str,
        *,
        max_workers: int = DEFAULT_MAX_WORKERS,
        connect_timeout: float | None = DEFAULT_CONNECT_TIMEOUT,
        **options: Any,
    ) -> None:
        if max_workers < 1:
            raise ValueError("max_workers must be at least 1")
        follow_ups = options.get("max_follow_ups")
        if follow_ups is None:
            options["max_follow_ups"] = min(DEFAULT_MAX_FOLLOW_UPS, max(1, max_workers // 2))
        elif type(follow_ups) is int and max_workers > 1 and follow_ups >= max_workers:
            raise ValueError(
                f"max_follow_ups ({follow_ups}) must be fewer than max_workers ({max_workers}):"
                " the follow-ups a server never answers would hold every thread"
            )
        super().__init__(url, **options)
        self.max_workers = max_workers
        """The bound on requests in progress (and threads)."""
        self.connect_timeout = connect_timeout
        """The bound on opening a connection, in seconds."""
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)  # bytes for the session, a job over
        self._queue: deque[_Job] = deque()  # waiting for a thread
        self._jobs: dict[int, _Job] = {}  # queued or in progress (not aborted), by stream
        self._workers: set[threading.Thread] = set()
        # The requests are written in the order they were made (the delayed ones aside):
        # each waits until those before it are written (or failed, or dropped).
        self._made = 0  # the place of the last request made
        self._unwritten: set[int] = set()  # the places of those not written yet

    # ------------------------------------------------------------------ the Stream

    def read_some(self, timeout: float | None) -> bytes | None:
        """The bytes for the session that arrived; ``b""`` once closed; ``None`` when
        nothing arrived within ``timeout`` seconds (``None``: wait as long as it takes)."""
        with self._lock:
            if not self._incoming and not self._eof:
                wait = None if timeout is None else max(0.0, timeout)
                self._changed.wait_for(lambda: bool(self._incoming) or self._eof, wait)
            if self._incoming:
                return self._take()
            return b"" if self._eof else None

    def write(self, data: bytes) -> None:
        """Send what the session wrote: each request goes to a worker thread (the call does
        not wait for it). Ignored once closed."""
        with self._lock:
            if not self._closing:
                self._run(self.transport.send(data))

    def close(self) -> None:
        """Close: abort the exchanges, make the ``DELETE`` that ends the session (when the
        server set a session id) and wait up to ``close_timeout`` for it, end the reading
        side, close every connection and let the threads end. Idempotent."""
        with self._lock:
            if not self._close_transport():
                return
            self._changed.wait_for(lambda: not self._jobs, self.close_timeout)
            for stream in list(self._jobs):  # the DELETE, if it is still going
                self._abort(stream)
            idle = self._pool.drain()
            workers = list(self._workers)
        for conn in idle:
            conn.close()
        end = time.monotonic() + self.close_timeout
        for worker in workers:  # they see their aborts at once (unless still connecting)
            worker.join(max(0.0, end - time.monotonic()))

    # ------------------------------------------------------------------ actions (locked)

    def _wake(self) -> None:
        self._changed.notify_all()

    def _resume(self) -> None:
        self._changed.notify_all()

    def _dropped(self, connection: _Conn) -> bool:
        return connection.dropped()

    def _discard(self, connection: _Conn) -> None:
        connection.close()

    def _fetch(self, action: AuthFetch) -> None:
        self._step(self._fetch_step, action)

    def _ask(self, action: AuthOpenUrl, handler: Callable[[str], Any]) -> None:
        self._step(self._ask_step, action, handler)

    def _step(self, target: Callable[..., None], *args: Any) -> None:
        thread = threading.Thread(
            target=target, args=args, name=f"mcp-http-auth-{args[0].flow}", daemon=True
        )
        thread.start()

    def _fetch_step(self, action: AuthFetch) -> None:
        outcome: FetchResponse | FetchError
        try:
            outcome = fetch(
                action.request,
                timeout=action.timeout,
                ssl=self._fetch_ssl,
                max_body=action.max_body,
            )
        except FetchError as exc:
            outcome = exc
        with self._lock:
            self._fetched(action, outcome)

    def _ask_step(self, action: AuthOpenUrl, handler: Callable[[str], Any]) -> None:
        outcome: object
        try:
            outcome = handler(action.url)
        except Exception as exc:
            outcome = exc
        with self._lock:
            self._redirected(action, outcome)

    def _start(self, request: HttpRequest) -> None:
        seq = 0
        if request.delay <= 0:
            self._made = seq = self._made + 1
            self._unwritten.add(seq)
        job = _Job(request, seq)
        self._jobs[request.stream] = job
        self._queue.append(job)
        if len(self._workers) < self.max_workers:
            worker = threading.Thread(
                target=self._work, name=f"mcp-http-client-{request.stream}", daemon=True
            )
            self._workers.add(worker)
            worker.start()

    def _abort(self, stream: int) -> None:
        job = self._jobs.pop(stream, None)
        if job is None:
            return
        job.aborted = True
        job.wake.set()
        self._written(job)
        with contextlib.suppress(ValueError):
            self._queue.remove(job)
        if job.conn is not None:
            job.conn.shutdown()
        self._changed.notify_all()

    # ------------------------------------------------------------------ the threads

    def _work(self) -> None:
        me = threading.current_thread()
        while True:
            with self._lock:
                if not self._queue:
                    self._workers.discard(me)
                    return
                job = self._queue.popleft()
                # The requests take the idle connections in the order they were made, so
                # that the first goes out first (``notifications/initialized`` before the
                # calls that follow it).
                conn = None if job.request.delay > 0 else self._idle()
            try:
                self._exchange(job, conn)
            except Exception as exc:  # pragma: no cover - a bug: the next job still runs
                _log.error("an HTTP exchange failed", exc_info=exc)
            finally:
                with self._lock:
                    if self._jobs.get(job.request.stream) is job:
                        del self._jobs[job.request.stream]
                    self._written(job)
                    self._changed.notify_all()

    def _written(self, job: _Job) -> None:
        """``job``'s request is written, or never will be (locked)."""
        if job.seq in self._unwritten:
            self._unwritten.discard(job.seq)
            self._changed.notify_all()

    def _turn(self, job: _Job) -> bool:
        """Wait until the requests made before ``job`` are written (locked); ``False`` when
        ``job`` was aborted meanwhile."""
        seq = job.seq
        self._changed.wait_for(
            lambda: job.aborted or not self._unwritten or min(self._unwritten) >= seq
        )
        return not job.aborted

    def _open(self) -> _Conn:
        endpoint = self.endpoint
        sock = socket.create_connection((endpoint.host, endpoint.port), self.connect_timeout)
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if self._ssl is not None:
                sock = self._ssl.wrap_socket(sock, server_hostname=endpoint.host)
            sock.settimeout(None)
        except BaseException:
            sock.close()
            raise
        return _Conn(sock)

    def _exchange(self, job: _Job, conn: _Conn | None) -> None:
        request = job.request
        try:
            if request.delay > 0:
                if job.wake.wait(request.delay):
                    return  # aborted while waiting
                with self._lock:
                    conn = self._idle()
            while True:
                if conn is None:
                    try:
                        conn = self._open()
                    except OSError as exc:
                        reason = self._cannot_connect(exc)
                        with self._lock:
                            if not job.aborted:
                                self._run(self.transport.request_failed(request.stream, reason))
                        return
                with self._lock:
                    if not self._turn(job):
                        return
                    exchange = self._new_exchange(request, conn.h11)
                    conn.h11 = exchange.conn
                    job.conn = conn
                self._drive(job, conn, exchange)
                to_close: _Conn | None = conn
                with self._lock:
                    job.conn = None
                    again = exchange.stale and not job.aborted  # the server had closed it
                    if job.released:
                        to_close = job.to_close
                    elif not exchange.stale:
                        to_close = self._release(conn, exchange, not job.aborted)
                conn = None
                if to_close is not None:
                    to_close.close()
                if not again:
                    return
        finally:
            if conn is not None:  # aborted, or failed
                with self._lock:
                    job.conn = None
                conn.close()

    def _drive(self, job: _Job, conn: _Conn, exchange: H11Exchange) -> None:
        sock = conn.sock
        timeout = exchange.timeout
        deadline = None if timeout is None else time.monotonic() + timeout
        try:
            try:
                if deadline is not None:
                    sock.settimeout(timeout)
                sock.sendall(exchange.start())
            finally:
                with self._lock:
                    self._written(job)
            while True:
                with self._lock:
                    if exchange.paused():
                        self._changed.wait_for(lambda: job.aborted or not exchange.paused())
                    if job.aborted:
                        exchange.finished = True
                        return
                if deadline is not None:
                    sock.settimeout(max(0.001, deadline - time.monotonic()))
                data = sock.recv(_READ_SIZE)
                with self._lock:
                    if job.aborted:  # its socket was shut down
                        exchange.finished = True
                        return
                    self._run(exchange.receive_data(data))
                    if exchange.finished and not exchange.stale and not job.aborted:
                        if deadline is not None:  # before another thread can take it
                            sock.settimeout(None)
                        job.to_close = self._release(conn, exchange)
                        job.released = True
                    if exchange.finished or job.aborted:  # (it may abort itself)
                        return
        except TimeoutError as exc:  # (an OSError: first)
            with self._lock:
                if job.aborted:
                    pass
                elif deadline is not None:  # (a socket has no other timeout)
                    self._run(exchange.overdue())
                else:  # pragma: no cover - the system's own timeout
                    self._run(exchange.fail(str(exc) or type(exc).__name__))
        except (OSError, h11.LocalProtocolError) as exc:
            reason = str(exc) or type(exc).__name__
            with self._lock:
                if not job.aborted:
                    self._run(exchange.fail(reason))
        except Exception as exc:  # a bug: fail the exchange rather than leave it waiting
            _log.error("an HTTP exchange failed", exc_info=exc)
            with self._lock:
                if not job.aborted:
                    self._run(exchange.fail(f"{type(exc).__name__}: {exc}"))
        finally:
            if deadline is not None and not job.released:
                with contextlib.suppress(OSError):
                    sock.settimeout(None)  # (back to the pool, if reusable, without it)
