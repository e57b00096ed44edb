"""HTTP/1.1 for :class:`~mcp_sansio.http._client.HttpClientTransport`, on h11: sans-IO.

A runtime binding (asyncio, trio, blocking sockets) only moves bytes and keeps sockets:

1. for each :class:`~mcp_sansio.http._client.HttpRequest`, take a connection from a
   :class:`ConnectionPool` (or open one), make an :class:`H11Exchange` on it, and write
   :meth:`H11Exchange.start`;
2. feed what the socket reads to :meth:`H11Exchange.receive_data` (``b""`` at EOF) until
   :attr:`H11Exchange.finished`, carrying out the actions it returns; a socket error goes to
   :meth:`H11Exchange.fail`;
   while :meth:`H11Exchange.paused` (the transport's follow-ups waiting their turn are past
   ``max_write_buffer``), read no more until :meth:`ClientBinding._resume` is called; when
   the request has a :attr:`~mcp_sansio.http._client.HttpRequest.timeout` (a follow-up),
   writing it and reading its whole response must be done within it, counted from the
   start: past it call :meth:`H11Exchange.overdue` (the exchange is then finished, and the
   connection not reusable);
3. then, if :attr:`H11Exchange.reusable`, call :meth:`H11Exchange.recycle` and put the
   connection back in the pool; if :attr:`H11Exchange.stale` (a kept-alive connection the
   server had closed before this request), retry the request once on a new connection;
   otherwise close the socket.

A connection carries one exchange at a time (no pipelining), and is reused only after its
response ended cleanly with the connection kept alive, and only if the server wrote nothing on
it since (:meth:`ClientBinding._idle`): bytes that come on an idle connection (a 408 that a
server sends before it closes one, a response nobody asked for, the connection's end) would
be read as the next request's answer, so such a connection is closed and another one used.

What the bindings share beyond that is here too: :func:`parse_url` and :class:`Endpoint`,
the keywords they take (:data:`HTTP_OPTIONS`), and :class:`ClientBinding`, their common base:
the transport, the pool, the bytes waiting for the session and the dispatch of the
transport's actions, leaving a binding only its sockets, tasks or threads, and its waits.
"""

from __future__ import annotations

import logging
import re
import select
import ssl as _ssl
import time
from collections.abc import Callable, Hashable, Iterable, Mapping
from typing import Any, Final, Generic, TypeVar
from urllib.parse import urlsplit

import attrs
import h11

from .._backpressure import DEFAULT_MAX_WRITE_BUFFER, DEFAULT_WRITE_TIMEOUT
from ..auth._client_auth import ClientAuth
from ..auth._errors import AuthError
from ._client import (
    DEFAULT_MAX_BODY_SIZE,
    DEFAULT_MAX_FOLLOW_UPS,
    DEFAULT_MAX_RECONNECTS,
    DEFAULT_RETRY_MS,
    AbortRequest,
    AuthFetch,
    AuthOpenUrl,
    ClientAction,
    HttpClientTransport,
    HttpRequest,
    ToSession,
)
from ._client_parts import FetchError, FetchResponse

__all__ = [
    "DEFAULT_CLOSE_TIMEOUT",
    "DEFAULT_MAX_IDLE",
    "HTTP_OPTIONS",
    "ClientBinding",
    "ConnectionPool",
    "Endpoint",
    "H11Exchange",
    "host_header",
    "parse_url",
    "readable",
]

#: How many idle connections a pool keeps per host and port.
DEFAULT_MAX_IDLE: Final = 8
#: How long closing a client waits for the ``DELETE`` that ends its session, in seconds.
DEFAULT_CLOSE_TIMEOUT: Final = 2.0
#: The keywords of :class:`ClientBinding` that every binding's ``Client.connect_http``
#: passes on to it (the others go to the client).
HTTP_OPTIONS: Final = (
    "max_body_size",
    "max_reconnects",
    "default_retry_ms",
    "listen",
    "reopen",
    "expired_statuses",
    "max_idle",
    "ssl",
    "close_timeout",
    "max_follow_ups",
    "max_write_buffer",
    "write_timeout",
    "auth",
    "open_url",
)
#: The largest response head accepted (status line, headers and the blank line that ends
#: them), in bytes: past it the request fails as a malformed response.
MAX_HEAD_SIZE: Final = 64 * 1024

_USER_AGENT: Final = ("User-Agent", "mcp-sansio")
#: A header name (an RFC 9110 token) and a value h11 takes (visible ASCII, spaces, tabs).
_CLEAN: Final = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_VISIBLE: Final = re.compile(r"[\t\x20-\x7e]*")

T = TypeVar("T")

_log = logging.getLogger("mcp_sansio.http")


def readable(sock: Any) -> bool:
    """Whether the socket ``sock`` (anything with a ``fileno()``) has bytes, or its end, to
    read now (a closed one counts as readable); never blocks."""
    try:
        if hasattr(select, "poll"):  # (select() takes no descriptor past FD_SETSIZE)
            poller = select.poll()
            poller.register(sock, select.POLLIN)
            return bool(poller.poll(0))
        return bool(select.select([sock], [], [], 0)[0])
    except (OSError, ValueError):  # closed: no descriptor
        return True


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
        """Whether it failed before a single byte of response on a reused connection, or
        was answered 408 there: the server had closed it, or was closing it, while idle, and
        the request may be retried on a new one."""
        self.received = False
        self._clean = False

    def start(self) -> bytes:
        """The bytes of the request, to write on the connection."""
        request = self.request
        headers: list[tuple[str, str]] = [("Host", self.host), _USER_AGENT, *request.headers]
        for name, value in self.transport.request_headers(request):  # authorization, now
            clean = _VISIBLE.fullmatch(value) and value == value.strip(" \t")
            if not _CLEAN.fullmatch(name) or not clean:
                # (h11's own error would quote the value: a credential)
                raise h11.LocalProtocolError(
                    f"the ClientAuth gave an invalid {name[:40]!r} header (its value not shown)"
                )
            headers.append((name, value))
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
            head = conn.their_state is h11.SEND_RESPONSE  # what comes is a response head
            before = len(conn._receive_buffer) if head else 0
            try:
                event = conn.next_event()
                # h11 bounds only a head it has not seen the end of; one that arrives whole
                # is parsed whatever its size: the bound on it is counted here.
                if head and before - len(conn._receive_buffer) > MAX_HEAD_SIZE:
                    raise h11.RemoteProtocolError(
                        f"the response head is larger than {MAX_HEAD_SIZE} bytes"
                    )
            except h11.RemoteProtocolError as exc:
                actions.extend(self.fail(f"malformed HTTP response: {exc}"))
                return actions
            if isinstance(event, h11.Data):
                actions.extend(transport.response_data(stream, bytes(event.data)))
            elif isinstance(event, h11.Response):
                if event.status_code == 408 and self.reused:
                    # A 408 on a kept-alive connection says the server took no request on
                    # it before it timed the connection out (RFC 9110, 15.5.9): it crossed
                    # ours in flight, which may go again on a new connection.
                    self.finished = True
                    self.stale = True
                    return actions
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

    @property
    def timeout(self) -> float | None:
        """The seconds within which the request must be written and its whole response
        read (a follow-up's ``write_timeout``), or ``None``."""
        return self.request.timeout

    def paused(self) -> bool:
        """Whether to wait (for :meth:`ClientBinding._resume`) before reading more."""
        return not self.finished and self.transport.paused(self.request.stream)

    def overdue(self) -> list[ClientAction]:
        """The response had not ended within :attr:`timeout`: the exchange is over (its
        connection is to be closed); returns the transport's actions."""
        if self.finished:
            return []
        self.finished = True
        return self.transport.response_overdue(self.request.stream)

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


class ClientBinding(Generic[T]):
    """The base of a runtime binding of the Streamable HTTP client (asyncio, trio,
    blocking), with all of it that is not about the runtime: the endpoint, the sans-IO
    :class:`~mcp_sansio.http._client.HttpClientTransport`, the keep-alive
    :class:`ConnectionPool` of its connections (of type ``T``), the bytes waiting for the
    session, and the dispatch of the transport's actions (:meth:`_run`).

    A binding supplies :meth:`_start` (make a request, in a task or a thread, as the module
    docs say), :meth:`_abort` (stop an exchange) and :meth:`_wake` (the session's reader has
    bytes, or the end, to read), and reads with :meth:`_take`.

    :param url: the endpoint (``http://host:port/path``; ``https://`` uses TLS).
    :param headers: extra headers sent with every request.
    :param max_body_size: the largest JSON body or SSE event accepted, in bytes.
    :param max_reconnects: resumptions in a row without progress before giving up.
    :param default_retry_ms: the wait before resuming a stream whose server set no ``retry``.
    :param listen: open the standalone GET stream (initialize era); off by default.
    :param reopen: start a new session, and send again what it refused, when the server
        answers 404 to the session id (initialize era); on by default.
    :param expired_statuses: the statuses that mean the session expired: ``(404,)``, as
        the specification says; ``(404, 400)`` for servers built on the TypeScript SDK's
        examples, which answer 400.
    :param max_idle: idle keep-alive connections kept.
    :param ssl: for ``https://``: an :class:`ssl.SSLContext` (default: the system's
        default context).
    :param close_timeout: how long closing waits for the ``DELETE`` that ends the session.
    :param max_follow_ups: the most follow-up POSTs (those owing no answer: responses to
        the server's requests, notifications) in flight at once.
    :param max_write_buffer: the bound, in bytes, on the follow-ups waiting their turn;
        past it the server's streams are not read until they are down to half.
    :param write_timeout: the seconds within which a follow-up's response must have ended;
        past them its connection is closed and it is dropped (``None``: no deadline).
    :param auth: a :class:`~mcp_sansio.auth.ClientAuth` that authorizes the requests (see
        :mod:`~mcp_sansio.http._client_auth`); its flows' requests go to any origin,
        ``https://`` ones with ``ssl`` (or the system's default context).
    :param open_url: the handler of a flow's person step: called with the authorization
        URL, it returns the URL the browser was redirected to (each binding says whether it
        may be a coroutine function); without one such a flow fails at that step.
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
        reopen: bool = True,
        expired_statuses: Iterable[int] = (404,),
        max_idle: int = DEFAULT_MAX_IDLE,
        ssl: _ssl.SSLContext | None = None,
        close_timeout: float = DEFAULT_CLOSE_TIMEOUT,
        max_follow_ups: int = DEFAULT_MAX_FOLLOW_UPS,
        max_write_buffer: int = DEFAULT_MAX_WRITE_BUFFER,
        write_timeout: float | None = DEFAULT_WRITE_TIMEOUT,
        auth: ClientAuth | None = None,
        open_url: Callable[[str], Any] | None = None,
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
            reopen=reopen,
            expired_statuses=expired_statuses,
            max_follow_ups=max_follow_ups,
            max_write_buffer=max_write_buffer,
            write_timeout=write_timeout,
            auth=auth,
            url=url,
            clock=time.time,
            open_url=open_url is not None,
        )
        """The sans-IO transport."""
        self.open_url = open_url
        """The handler of a flow's person step, or ``None``."""
        self._fetch_ssl = ssl  # for a flow's https:// requests (None: the default context)
        self.close_timeout = close_timeout
        """How long closing waits for the ``DELETE``, in seconds."""
        self._ssl: _ssl.SSLContext | None = None
        if self.endpoint.scheme == "https":
            self._ssl = ssl if ssl is not None else _ssl.create_default_context()
        self._host_header = self.endpoint.host_header
        self._pool: ConnectionPool[T] = ConnectionPool(max_idle)
        self._incoming: list[bytes] = []
        self._eof = False  # the session's side has ended: it reads b"" once the rest is read
        self._closing = False
        self._paused = False  # the transport's reading_paused, when last seen

    # ------------------------------------------------------------------ for the binding

    def _start(self, request: HttpRequest) -> None:
        """Make ``request`` (after its ``delay``), feeding its response to the transport."""
        raise NotImplementedError

    def _abort(self, stream: int) -> None:
        """Stop the exchange ``stream`` (running or not started yet); its connection is not
        reused, and nothing more of it reaches the transport."""
        raise NotImplementedError

    def _wake(self) -> None:
        """Wake the session's reader: bytes (or the end) are there to read."""
        raise NotImplementedError

    def _resume(self) -> None:
        """Wake the exchanges waiting to read (:meth:`H11Exchange.paused`): the transport
        no longer pauses reading."""
        raise NotImplementedError

    def _dropped(self, connection: T) -> bool:
        """Whether the server wrote on the idle ``connection`` (bytes, or its end)."""
        raise NotImplementedError

    def _fetch(self, action: AuthFetch) -> None:
        """Make the flow's request (with the runtime's ``fetch``, in a task or a thread) and
        hand the outcome to :meth:`_fetched`."""
        raise NotImplementedError

    def _ask(self, action: AuthOpenUrl, handler: Callable[[str], Any]) -> None:
        """Call ``handler`` with the flow's URL (in a task or a thread) and hand the outcome
        to :meth:`_redirected`."""
        raise NotImplementedError

    def _discard(self, connection: T) -> None:
        """Close the idle ``connection`` at once (it is not used again)."""
        raise NotImplementedError

    # ------------------------------------------------------------------ shared

    def _run(self, actions: list[ClientAction]) -> None:
        """Carry out the transport's actions."""
        self._carry_out(actions)
        paused = self.transport.reading_paused
        if self._paused and not paused:
            self._resume()
        self._paused = paused

    def _carry_out(self, actions: list[ClientAction]) -> None:
        for action in actions:
            if isinstance(action, ToSession):
                if not self._eof:
                    self._incoming.append(action.data)
                    self._wake()
            elif isinstance(action, HttpRequest):
                self._start(action)
            elif isinstance(action, AbortRequest):
                self._abort(action.stream)
            elif isinstance(action, AuthFetch):
                self._fetch(action)
            elif isinstance(action, AuthOpenUrl):
                handler = self.open_url
                if handler is None:  # pragma: no cover - the transport asks only with one
                    self._redirected(action, AuthError("no open_url handler", step="usage"))
                else:
                    self._ask(action, handler)
            else:
                _log.log(action.level, "%s", action.message)

    def _fetched(self, action: AuthFetch, outcome: FetchResponse | FetchError) -> None:
        """The outcome of the flow's request: to the transport (a binding calls it as it
        calls the transport: under its lock, in its loop)."""
        if self._closing:
            return
        if isinstance(outcome, FetchError):
            self._run(self.transport.auth_failed(action.flow, outcome))
        else:
            status, headers, body = outcome
            self._run(self.transport.auth_response(action.flow, status, headers, body))

    def _redirected(self, action: AuthOpenUrl, outcome: object) -> None:
        """What the ``open_url`` handler returned (the redirect URL) or raised: to the
        transport."""
        if self._closing:
            return
        if isinstance(outcome, Exception):
            self._run(self.transport.auth_failed(action.flow, outcome))
        elif not isinstance(outcome, str):
            error = AuthError(
                f"the open_url handler returned {type(outcome).__name__}, not the URL the"
                " browser was redirected to",
                step="authorization response",
            )
            self._run(self.transport.auth_failed(action.flow, error))
        else:
            self._run(self.transport.auth_redirect(action.flow, outcome))

    def _idle(self) -> T | None:
        """An idle connection from the pool to carry a request, or ``None`` (open a new
        one). Those the server wrote on meanwhile (:meth:`_dropped`) are closed instead:
        what it wrote, a 408 before it closes the connection or a response nobody asked for,
        would be read as the answer to the request written next."""
        while (connection := self._pool.get(None)) is not None:
            if not self._dropped(connection):
                return connection
            self._discard(connection)
        return None

    def _take(self, n: int = -1) -> bytes:
        """The bytes waiting for the session (at most ``n`` when ``n > 0``), taken."""
        incoming = self._incoming
        data = incoming[0] if len(incoming) == 1 else b"".join(incoming)
        incoming.clear()
        if 0 < n < len(data):
            incoming.append(data[n:])
            data = data[:n]
        return data

    def _close_transport(self) -> bool:
        """Begin closing (once; ``False`` after): abort every exchange, start the
        ``DELETE`` when the server set a session id, end the session's side."""
        if self._closing:
            return False
        self._closing = True
        self._run(self.transport.close())
        self._eof = True
        self._wake()
        return True

    def _new_exchange(self, request: HttpRequest, conn: h11.Connection | None) -> H11Exchange:
        """An :class:`H11Exchange` of ``request`` on ``conn`` (``None``: a new connection)."""
        return H11Exchange(self.transport, request, self._host_header, conn)

    def _cannot_connect(self, exc: OSError) -> str:
        """The reason given to the transport when no connection could be opened."""
        where = f"{self.endpoint.host}:{self.endpoint.port}"
        return f"cannot connect to {where}: {exc.strerror or exc}"

    def _release(self, connection: T, exchange: H11Exchange, keep: bool = True) -> T | None:
        """After ``exchange`` (not stale) on ``connection``: keep the connection for the
        next request if it is reusable (and ``keep``, and not closing); returns the
        connection to close, if any (this one, or one the full pool let go)."""
        if keep and exchange.reusable and not self._closing:
            exchange.recycle()
            return self._pool.put(None, connection)
        return connection
