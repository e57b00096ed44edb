"""Streamable HTTP on threads: sockets and threads around :class:`H11Server` and
:class:`HttpServer`; every decision is theirs. Each MCP session is driven by the same loop
as on stdio (``mcp_sansio.blocking._ServerEndpoint``), whose writes go through
:meth:`HttpServer.route` onto the right HTTP responses.

The threads:

- **one per connection** (at most ``max_connections``; past it a new connection is
  answered ``503`` and closed): it reads requests, feeds them to the core and writes the
  responses; while a response is pending it waits in ``select`` on its socket (to see the
  client leave) and on a wake-up socket pair (the exchange's ``waiter``);
- **one per busy session**: the session's loop runs in it while bodies delivered to the
  session wait to be read, one of its handlers runs or one of its questions to the client
  waits, and ends when the session is idle (a stateless 2026-07-28 POST is served by one
  such thread, an initialize-era session by one at a time);
- **one for the keep-alive** comments on open event streams.

So handlers of different sessions run at once, each in its session's thread (they must
be thread-safe, as on any threaded server): a handler that blocks (on a socket,
``time.sleep``) holds up its own session only. Within a session they run one at a time, as
on stdio: a request that arrives while a handler waits (:meth:`Context.sleep`,
:meth:`Context.elicit`, …) is queued and run after it. In 2026-07-28 every POST is a
session of its own, so every request runs in parallel with the others.

The locks, always taken in this order (never the other way round):

1. :attr:`HttpListener.lock`, the *core lock*: it guards :class:`HttpServer` (its
   sessions' HTTP side, the exchanges) and each session's inbox and thread slot (it is the
   condition the inboxes wait on). It is held only for short calls into the core
   (``begin``/``end``, ``route``, ``begin_delivery``/``end_delivery``, ``close_stream``,
   ``keepalive``, ``disconnected``, …), never while a handler runs, a socket is written or
   a thread joined;
2. the :class:`~mcp_sansio.blocking.Listener`'s registry lock (the connections and
   threads), taken alone or inside the core lock.

A session's own state (its :class:`~mcp_sansio.session.ServerSession` and connection) has
one owner at a time: its thread while it has one; while it has none (idle), whoever holds
the core lock (the thread is started, and lets go of the session, with the core lock
held). A handler's broadcast (:meth:`Context.resource_updated`,
:meth:`Context.list_changed`) therefore builds each session's notification where that
session lives: its own at once, in the handler's thread; an idle session's under the core
lock; a busy session's in that session's thread, the broadcast being queued in its inbox
(read at once if it waits through its context; after the running handler otherwise).

Ending a session (``DELETE``, eviction, :meth:`HttpListener.close`) closes its inbox: its
thread marks its handlers cancelled and feeds the session its end, so a handler waiting
through its context wakes with :attr:`Context.cancelled` true (its questions fail); one
that blocks otherwise finishes first, and its answer goes nowhere. A 2026-07-28 client
that leaves cancels its request (a ``notifications/cancelled`` fed to the session).
"""

from __future__ import annotations

import contextlib
import logging
import selectors
import socket
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from typing import Any, Final

from .._events import RequestId
from ..http._h11server import H11Server
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
from ..session import ServerSession
from ._serve import Listener, _ServerEndpoint
from ._streams import SocketStream

__all__ = [
    "DEFAULT_IDLE_TIMEOUT",
    "DEFAULT_KEEPALIVE",
    "DEFAULT_MAX_CONNECTIONS",
    "HttpListener",
    "serve_http",
]

#: How many connections are served at once (a thread each).
DEFAULT_MAX_CONNECTIONS: Final = 100

_READ_SIZE: Final = 65536
_BUSY: Final = (
    b"HTTP/1.1 503 Service Unavailable\r\nretry-after: 1\r\ncontent-length: 0\r\n"
    b"connection: close\r\n\r\n"
)
_clock = time.monotonic
_log = logging.getLogger("mcp_sansio.http")

#: A broadcast: what a session writes for it (``lambda s: s.resource_updated(uri)``).
_Make = Callable[[ServerSession], bytes]


class _Waker:
    """An exchange's ``waiter``: :meth:`set` wakes the connection thread's ``select``."""

    def __init__(self) -> None:
        self.reader, self._writer = socket.socketpair()
        self.reader.setblocking(False)
        self._writer.setblocking(False)

    def set(self) -> None:
        with contextlib.suppress(OSError):  # full (it is set already), or closed
            self._writer.send(b"\0")

    def clear(self) -> None:
        with contextlib.suppress(OSError):  # empty
            while self.reader.recv(4096):
                pass

    def close(self) -> None:
        self.reader.close()
        self._writer.close()


class _Inbox:
    """The stream a session's loop reads (a :class:`mcp_sansio.blocking.Stream`): the
    bodies delivered to the session, each between :meth:`HttpServer.begin_delivery` and
    :meth:`HttpServer.end_delivery`, and the broadcasts queued for it. Its queue is guarded
    by the core lock (the condition it waits on); only the session's thread reads it."""

    def __init__(self, lock: threading.RLock, core: HttpServer, hs: HttpSession) -> None:
        self._lock = lock
        self._ready = threading.Condition(lock)
        self._core = core
        self._hs = hs
        self.items: deque[tuple[bytes, Exchange | None] | _Make] = deque()
        self.closed = False
        self._delivering = False  # the session's thread's own

    def put(self, item: tuple[bytes, Exchange | None] | _Make) -> None:
        """Queue a body (and its exchange) or a broadcast (with the core lock held)."""
        if not self.closed:
            self.items.append(item)
            self._ready.notify()

    def settle(self) -> None:
        """The delivery read last has been carried out (with the core lock held, in the
        session's thread)."""
        if self._delivering:
            self._delivering = False
            wake(self._core.end_delivery(self._hs))

    def read_some(self, timeout: float | None) -> bytes | None:
        end = None if timeout is None else _clock() + timeout
        with self._lock:
            self.settle()
            while not self.items and not self.closed:
                left = None if end is None else end - _clock()
                if left is not None and left <= 0:
                    return None
                self._ready.wait(left)
            if not self.items:  # the session is over: its handlers see it
                for job in self._hs.session.jobs:
                    job.cancelled = True
                return b""
            item = self.items.popleft()
            if isinstance(item, tuple):
                data, ex = item
                self._core.begin_delivery(self._hs, ex)
                self._delivering = True
                return data
        # A broadcast, built in this session's thread without the core lock.
        data = _made(item, self._hs)
        if data:
            with self._lock:
                wake(self._core.route(self._hs, data))
        return None  # nothing for the session to read: its loop reads again

    def write(self, data: bytes) -> None:  # pragma: no cover - route is always set
        pass

    def close(self) -> None:
        """No more reading: the loop sees the end (with the core lock held)."""
        self.closed = True
        self.items.clear()
        self._ready.notify()


class _Driver:
    """One session's loop (:attr:`HttpSession.driver`): the blocking adapter's, reading an
    :class:`_Inbox`, in a thread of its own while the session has work. Made, like every
    change of :attr:`thread` and :attr:`finished`, with the core lock held."""

    def __init__(self, listener: HttpListener, hs: HttpSession) -> None:
        core, lock = listener.core, listener.lock
        self._listener = listener
        self.hs = hs
        self.inbox = _Inbox(lock, core, hs)
        self.endpoint = _ServerEndpoint(hs.session, self.inbox, None)
        self.thread: threading.Thread | None = None
        """The session's thread, while it has one (its state is then the thread's)."""
        self.finished = False
        """Whether the session's loop has ended for good."""

        # The hooks of HttpServer.wire, each call into the core under the core lock.
        def route(data: bytes, related: RequestId | None) -> None:
            with lock:
                wake(core.route(hs, data, related))

        def close_stream(request_id: RequestId) -> None:
            with lock:
                wake(core.close_stream(hs, request_id))

        self.endpoint.route = route
        hs.session.on_close_stream = close_stream
        hs.session.broadcast = listener._broadcast

    def deliver(self, data: bytes, ex: Exchange | None) -> None:
        self.inbox.put((data, ex))
        self._run_soon()

    def stop(self) -> None:
        """End the session: its thread marks its handlers cancelled (they see
        :attr:`Context.cancelled`) and feeds it its end (its calls fail)."""
        self.inbox.close()
        self._run_soon()

    def _run_soon(self) -> None:
        if self.thread is None and not self.finished:
            self.thread = threading.Thread(target=self._run, name="mcp-http-session", daemon=True)
            self._listener._track(self.thread)
            self.thread.start()

    def _run(self) -> None:
        endpoint, inbox, lock = self.endpoint, self.inbox, self._listener.lock
        try:
            while True:
                with lock:
                    inbox.settle()
                    if endpoint._eof:
                        inbox.close()
                        self.finished = True
                    if self.finished or not (
                        inbox.items or inbox.closed or endpoint.session.next_deadline() is not None
                    ):
                        self.thread = None  # the session is the core lock's again
                        return
                endpoint._pump()
        except BaseException:  # pragma: no cover - a bug (a handler's errors are answers)
            with lock:  # a later delivery starts a new thread
                inbox.settle()
                self.thread = None
            raise
        finally:
            self._listener._forget(threading.current_thread())


def _made(make: _Make, hs: HttpSession) -> bytes:
    """What a broadcast writes on ``hs`` (nothing if building it fails: another session's
    trouble is not the broadcasting handler's)."""
    try:
        return make(hs.session)
    except Exception:
        _log.exception("a broadcast failed on %r", hs)
        return b""


class HttpListener(Listener):
    """A listening socket serving an MCP server over Streamable HTTP (see
    :func:`serve_http`): :attr:`url`, and the :class:`~mcp_sansio.blocking.Listener`'s
    :meth:`serve_forever`, :meth:`stop`, :meth:`close` and context manager. Closing it
    ends every session and connection and joins their threads (each within the timeout).

    :param server: the registry.
    :param sock: a bound, listening socket; the listener owns it.
    :param path: the MCP endpoint.
    :param keepalive: seconds between ``: keep-alive`` comments on open SSE streams
        (``None``: none).
    :param max_connections: the most connections served at once (a thread each); past
        it, a new connection gets ``503`` and is closed.
    :param idle_timeout: seconds a connection may keep us waiting for a request (the
        next one, or the rest of one) before it is closed (``None``: forever).
    :param options: keywords of :class:`~mcp_sansio.http.HttpServer` and of each
        :class:`~mcp_sansio.session.ServerSession`.
    """

    def __init__(
        self,
        server: Server,
        sock: socket.socket,
        *,
        path: str = "/mcp",
        keepalive: float | None = DEFAULT_KEEPALIVE,
        max_connections: int = DEFAULT_MAX_CONNECTIONS,
        idle_timeout: float | None = DEFAULT_IDLE_TIMEOUT,
        **options: Any,
    ) -> None:
        super().__init__(server, sock)
        self.core = HttpServer(server, path=path, **options)
        """The sans-IO Streamable HTTP server."""
        self.lock = threading.RLock()
        """The core lock: held around each (short) use of :attr:`core`, never while a
        handler runs (see the module)."""
        self.max_connections = max_connections
        """The most connections served at once."""
        self.idle_timeout = idle_timeout
        """Seconds without a byte of the request awaited before a connection is closed."""
        self._keepalive = keepalive
        self._closing = threading.Event()
        self._threads: set[threading.Thread] = set()  # the sessions' and the keep-alive

    @property
    def url(self) -> str:
        """The MCP endpoint's URL."""
        host, port = self.address[:2]
        host = f"[{host}]" if ":" in host else host
        return f"http://{host}:{port}{self.core.path}"

    def serve_forever(self) -> None:
        """Accept and serve connections until :meth:`stop`; then close everything."""
        every = self._keepalive
        if every is not None and not self._closing.is_set():
            thread = threading.Thread(
                target=self._keep_alive, args=(every,), name="mcp-http-keepalive", daemon=True
            )
            self._track(thread)
            thread.start()
        super().serve_forever()

    def _track(self, thread: threading.Thread) -> None:
        with self._lock:
            self._threads.add(thread)

    def _forget(self, thread: threading.Thread) -> None:
        with self._lock:
            self._threads.discard(thread)

    def _keep_alive(self, every: float) -> None:
        while not self._closing.wait(every):
            with self.lock:
                wake(self.core.keepalive())

    def _broadcast(self, make: _Make) -> None:
        """A handler's broadcast (every session's ``broadcast`` hook): ``make`` runs for
        each live session where that session lives (see the module), and what it writes
        is routed. Called without the core lock, from the broadcasting handler's thread."""
        me = threading.current_thread()
        mine: _Driver | None = None
        with self.lock:
            for hs in self.core.all_sessions():
                driver = self._driver(hs)
                if driver.finished:
                    continue
                if driver.thread is me:
                    mine = driver  # after the lock: no need to hold the others up
                elif driver.thread is None:  # idle: the session is the core lock's
                    data = _made(make, hs)
                    if data:
                        wake(self.core.route(hs, data))
                else:  # busy: its thread builds it
                    driver.inbox.put(make)
        if mine is not None:
            data = make(mine.hs.session)
            if data:
                mine.endpoint._write(data)

    # ------------------------------------------------------------------ sessions

    def _driver(self, hs: HttpSession) -> _Driver:
        driver: _Driver | None = hs.driver
        if driver is None:
            driver = hs.driver = _Driver(self, hs)
        return driver

    def _do(self, work: Iterable[Work], ex: Exchange | None) -> None:
        """Carry out the core's work for the request ``ex`` (with :attr:`lock` held)."""
        for item in work:
            if isinstance(item, Wake):
                wake(item.exchanges)
            elif isinstance(item, Deliver):
                self._driver(item.session).deliver(item.data, ex)
            elif isinstance(item, Fetch):  # a token's verification needs a request
                thread = threading.Thread(target=self._fetch, args=(item,), daemon=True)
                self._track(thread)
                thread.start()
            elif item.session.driver is not None:
                item.session.driver.stop()

    def _fetch(self, item: Fetch) -> None:
        """Make a :class:`Fetch`'s request (without the core lock), hand the answer back."""
        from ._fetch import fetch

        try:
            status, headers, body = fetch(item.request)
        except Exception:  # no answer: status 0 (the verifier decides)
            status, headers, body = 0, (), b""
        try:
            with self.lock:
                self._do(self.core.fetched(item.exchange, status, headers, body), item.exchange)
        finally:
            self._forget(threading.current_thread())

    # ------------------------------------------------------------------ connections

    def _start(self, conn: socket.socket) -> None:
        with self._lock:
            full = len(self._live) >= self.max_connections
        if not full:
            super()._start(conn)
            return
        with contextlib.suppress(OSError):
            conn.settimeout(1.0)
            conn.sendall(_BUSY)
            conn.shutdown(socket.SHUT_WR)
        conn.close()

    def _handle(self, stream: SocketStream) -> None:
        conn = stream.socket
        glue = H11Server(self.core)
        waker = _Waker()
        lock = self.lock
        try:
            with selectors.DefaultSelector() as selector:
                selector.register(conn, selectors.EVENT_READ)
                selector.register(waker.reader, selectors.EVENT_READ)
                while True:
                    with lock:
                        if glue.exchange is not None:
                            glue.exchange.waiter = waker
                        waker.clear()
                        out = glue.data_to_send()
                        if not glue.closed and glue.exchange is None:
                            self._do(glue.resume(), glue.exchange)  # a pipelined request
                            if glue.exchange is not None:
                                glue.exchange.waiter = waker
                                out += glue.data_to_send()
                        closed = glue.closed
                        reading = glue.exchange is None or glue.needs_body
                    if out:
                        conn.sendall(out)
                    if closed:
                        break
                    ready = selector.select(self.idle_timeout if reading else None)
                    if not any(key.fileobj is conn for key, _ in ready):
                        if not ready:
                            break  # idle: close
                        continue  # the waiter: more of the response
                    try:
                        data = conn.recv(_READ_SIZE)
                    except OSError:
                        data = b""
                    with lock:
                        self._do(glue.receive_data(data), glue.exchange)
        except OSError:  # the client went away under us
            pass
        finally:
            with lock:  # no session's thread sets the waker meanwhile
                self._do(glue.connection_lost(), None)
                waker.close()

    # ------------------------------------------------------------------ the end

    def close(self, timeout: float = 5.0) -> None:
        """Stop; end every connection and session; wait up to ``timeout`` seconds for each
        of their threads; close the listening socket. Idempotent."""
        self._closing.set()
        super().close(timeout)  # the connections first: no new work for the sessions
        with self.lock:
            self._do([Terminate(hs) for hs in self.core.all_sessions()], None)
        with self._lock:
            threads = list(self._threads)
        for thread in threads:
            if thread is not threading.current_thread():
                thread.join(timeout)


def serve_http(
    server: Server,
    host: str = "127.0.0.1",
    port: int = 0,
    *,
    ready: Callable[[HttpListener], Any] | None = None,
    **options: Any,
) -> None:
    """Serve ``server`` over Streamable HTTP on TCP ``host``:``port`` (default: loopback,
    a free port) until stopped. ``ready`` is called with the :class:`HttpListener` once it
    listens (its :attr:`~HttpListener.url`; its :meth:`~HttpListener.stop`).

    :param options: the keywords of :class:`HttpListener` (``path=``, ``keepalive=``,
        ``max_connections=``, ``idle_timeout=``), of :class:`~mcp_sansio.http.HttpServer`
        (``allowed_hosts=``, ``allowed_origins=``, ``json_response=``, ``max_body_size=``,
        ``state_keys=``, …) and of each :class:`~mcp_sansio.session.ServerSession`
        (``versions=``, …).
    """
    listener = HttpListener(server, socket.create_server((host, port)), **options)
    with listener:
        if ready is not None:
            ready(listener)
        listener.serve_forever()
