"""HTTP/1.1 for :class:`~mcp_sansio.http._client.HttpClientTransport`, on h11: sans-IO.

A runtime binding (asyncio, trio, blocking sockets) only moves bytes and keeps sockets:

1. for each :class:`~mcp_sansio.http._client.HttpRequest`, take a connection from a
   :class:`ConnectionPool` (or open one), make an :class:`H11Exchange` on it, and write
   :meth:`H11Exchange.start`;
2. feed what the socket reads to :meth:`H11Exchange.receive_data` (``b""`` at EOF) until
   :attr:`H11Exchange.finished`, carrying out the actions it returns; a socket error goes to
   :meth:`H11Exchange.fail`;
3. then, if :attr:`H11Exchange.reusable`, call :meth:`H11Exchange.recycle` and put the
   connection back in the pool; if :attr:`H11Exchange.stale` (a kept-alive connection the
   server had closed before this request), retry the request once on a new connection;
   otherwise close the socket.

A connection carries one exchange at a time (no pipelining), and is reused only after its
response ended cleanly with the connection kept alive.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Final, Generic, TypeVar

import h11

from ._client import ClientAction, HttpClientTransport, HttpRequest

__all__ = ["DEFAULT_MAX_IDLE", "ConnectionPool", "H11Exchange", "host_header"]

#: How many idle connections a pool keeps per host and port.
DEFAULT_MAX_IDLE: Final = 8
#: The largest response head (status line and headers) accepted, in bytes.
MAX_HEAD_SIZE: Final = 64 * 1024

_USER_AGENT: Final = ("User-Agent", "mcp-sansio")

T = TypeVar("T")


def host_header(host: str, port: int, default_port: int = 80) -> str:
    """The ``Host`` header for ``host:port`` (an IPv6 address in brackets; the port left
    out when it is the scheme's default)."""
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"
    return host if port == default_port else f"{host}:{port}"


class H11Exchange:
    """One exchange of an :class:`HttpClientTransport` on an h11 client connection.

    :param transport: the transport the response parts go to.
    :param request: the request to make.
    :param host: the ``Host`` header's value (see :func:`host_header`).
    :param conn: the connection (idle, from a pool), or ``None`` for a new one.
    """

    def __init__(
        self,
        transport: HttpClientTransport,
        request: HttpRequest,
        host: str,
        conn: h11.Connection | None = None,
    ) -> None:
        self.transport = transport
        self.request = request
        self.host = host
        self.reused = conn is not None
        """Whether the connection carried an earlier exchange."""
        self.conn = conn if conn is not None else h11.Connection(h11.CLIENT, MAX_HEAD_SIZE)
        """The h11 connection."""
        self.finished = False
        """Whether the exchange is over (the response ended, or it failed)."""
        self.stale = False
        """Whether it failed before a single byte of response on a reused connection: the
        server had closed it while idle, and the request may be retried on a new one."""
        self.received = False
        self._clean = False

    def start(self) -> bytes:
        """The bytes of the request, to write on the connection."""
        request = self.request
        headers: list[tuple[str, str]] = [("Host", self.host), _USER_AGENT, *request.headers]
        if request.body or request.method == "POST":
            headers.append(("Content-Length", str(len(request.body))))
        conn = self.conn
        data = conn.send(h11.Request(method=request.method, target=request.target, headers=headers))
        if request.body:
            data += conn.send(h11.Data(data=request.body))
        return data + conn.send(h11.EndOfMessage())

    def receive_data(self, data: bytes) -> list[ClientAction]:
        """Bytes read from the connection (``b""``: it closed); returns the transport's
        actions."""
        if self.finished:
            return []
        if data:
            self.received = True
        conn = self.conn
        conn.receive_data(data)
        transport = self.transport
        stream = self.request.stream
        actions: list[ClientAction] = []
        while True:
            try:
                event = conn.next_event()
            except h11.RemoteProtocolError as exc:
                actions.extend(self.fail(f"malformed HTTP response: {exc}"))
                return actions
            if isinstance(event, h11.Data):
                actions.extend(transport.response_data(stream, bytes(event.data)))
            elif isinstance(event, h11.Response):
                actions.extend(transport.response_started(stream, event.status_code, event.headers))
            elif isinstance(event, h11.EndOfMessage):
                self.finished = True
                self._clean = True
                actions.extend(transport.response_ended(stream))
                return actions
            elif event is h11.NEED_DATA:
                if not data:  # pragma: no cover - h11 reports an EOF itself
                    actions.extend(self.fail("the server closed the connection"))
                return actions
            elif isinstance(event, h11.ConnectionClosed) or event is h11.PAUSED:
                actions.extend(self.fail("the server closed the connection"))
                return actions
            # InformationalResponse (1xx): nothing to do

    def fail(self, reason: str) -> list[ClientAction]:
        """The connection failed (``reason``: a socket error, an EOF, a timeout…)."""
        if self.finished:
            return []
        self.finished = True
        if self.reused and not self.received:
            self.stale = True
            return []
        return self.transport.request_failed(self.request.stream, reason)

    @property
    def reusable(self) -> bool:
        """Whether the connection may carry another exchange: the response ended cleanly,
        both sides are done, the server keeps the connection open, and nothing more came."""
        conn = self.conn
        return (
            self._clean
            and conn.our_state is h11.DONE
            and conn.their_state is h11.DONE
            and not conn.trailing_data[0]
        )

    def recycle(self) -> h11.Connection:
        """Ready the connection for the next exchange (only when :attr:`reusable`)."""
        self.conn.start_next_cycle()
        return self.conn


class ConnectionPool(Generic[T]):
    """Idle connections (of any type: a binding's socket and its :class:`h11.Connection`),
    by key (host and port), the most recent first. Holds no more than ``max_idle`` per key:
    :meth:`put` returns the one to close."""

    def __init__(self, max_idle: int = DEFAULT_MAX_IDLE) -> None:
        self.max_idle = max_idle
        self._idle: dict[Hashable, list[T]] = {}

    def get(self, key: Hashable) -> T | None:
        """An idle connection for ``key``, or ``None``."""
        idle = self._idle.get(key)
        return idle.pop() if idle else None

    def put(self, key: Hashable, connection: T) -> T | None:
        """Keep ``connection``; returns a connection to close, if the pool is full."""
        idle = self._idle.setdefault(key, [])
        idle.append(connection)
        return idle.pop(0) if len(idle) > self.max_idle else None

    def drain(self) -> list[T]:
        """Take every idle connection (to close them)."""
        every = [c for idle in self._idle.values() for c in idle]
        self._idle.clear()
        return every

    def __len__(self) -> int:
        return sum(len(idle) for idle in self._idle.values())
