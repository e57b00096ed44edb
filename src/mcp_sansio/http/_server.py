"""The server side of Streamable HTTP, sans-IO: HTTP requests in, MCP sessions and HTTP
responses out.

:class:`HttpServer` sits between any HTTP implementation and the
:class:`~mcp_sansio.session.ServerSession` s that serve the protocol. The HTTP binding
(h11 in :mod:`mcp_sansio.http.asyncio` and its siblings, or the ASGI application) hands
it each request's method, target and headers (:meth:`HttpServer.begin`), then the body
(:meth:`Exchange.receive_body`, :meth:`HttpServer.end`), and pulls the response out of the
:class:`Exchange` (:meth:`Exchange.next_output`): a :class:`ResponseHead`, body chunks,
then :data:`~mcp_sansio.http.END`. Everything the protocol says about HTTP is decided here, once:

- **the initialize era** (2024-11-05 … 2025-11-25): a session per ``initialize``, named by
  an unguessable ``Mcp-Session-Id``; POST, GET (the standalone stream) and DELETE; the
  ``Accept`` and ``Content-Type`` rules; 202 for notifications and responses; a JSON or SSE
  answer (JSON when the answer is ready with nothing before it, SSE otherwise); SSE event
  ids, a bounded replay buffer per stream and resumption with ``Last-Event-ID``; the
  priming event with ``retry``; ``MCP-Protocol-Version`` checks; 404 for an unknown
  session;
- **the stateless era** (2026-07-28): POST only (405 otherwise); every POST is served by a
  fresh session; ``Mcp-Method`` / ``Mcp-Name`` / ``Mcp-Param-*`` checked against the body
  (400 and -32020); HTTP statuses from JSON-RPC error codes (404 for -32601, 400 for
  -32602, -32020, -32021, -32022); closing the stream cancels the request;
  ``subscriptions/listen`` streams stay open, with keep-alive comments;
- **DNS-rebinding protection**: ``Host`` and ``Origin`` allow-lists, on by default and set
  for a server on loopback (421 for a foreign ``Host``, 403 for a foreign ``Origin``);
- **bounded memory**: a maximum body size (413), replay buffers bounded in events per
  stream and in bytes per session, a bounded number of sessions, annotations cached for
  registered tools only; and no request walks the session's streams, the sessions or the
  requests in flight.

The binding runs the sessions: each :class:`HttpSession` has a ``driver`` slot for the
binding's loop around it (the asyncio, trio and blocking adapters reuse their stdio
machinery). :meth:`HttpServer.end` returns :class:`Deliver` (feed these bytes to that
session) and :class:`Terminate` (that session is over) instructions; what a session writes
goes through :meth:`HttpServer.route`, which puts each message on the right stream and
returns the exchanges that have new output, for the binding to wake.
"""

from __future__ import annotations

import re
import secrets
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Collection, Iterable, Mapping
from typing import Any, Final
from urllib.parse import urlsplit

import attrs
import orjson

from .._errors import ErrorCode
from .._events import RequestId
from .._framing import DEFAULT_MAX_MESSAGE_SIZE
from .._sse import encode_comment, encode_event
from .._versions import ALL_VERSIONS, VERSIONS, Era
from ..session import DEFAULT, DefaultType, ServerSession
from ._headers import (
    ACCEPT,
    CONTENT_TYPE,
    LAST_EVENT_ID,
    PROTOCOL_VERSION,
    SESSION_ID,
    check_standard_headers,
    header_params,
    lower_headers,
)

__all__ = [
    "DEFAULT_ALLOWED_HOSTS",
    "DEFAULT_IDLE_TIMEOUT",
    "DEFAULT_KEEPALIVE",
    "DEFAULT_MAX_SESSIONS",
    "DEFAULT_REPLAY_BYTES",
    "DEFAULT_REPLAY_SIZE",
    "DEFAULT_RETRY",
    "END",
    "REPLAY_EVENT_COST",
    "REPLAY_STREAM_COST",
    "Deliver",
    "Exchange",
    "HttpServer",
    "HttpSession",
    "ResponseHead",
    "Terminate",
    "Wake",
    "Work",
    "wake",
]

#: The ``Host`` names a server on loopback accepts by default (any port).
DEFAULT_ALLOWED_HOSTS: Final = ("localhost", "127.0.0.1", "[::1]")
#: How many events each SSE stream keeps for resumption.
DEFAULT_REPLAY_SIZE: Final = 256
#: How many bytes of events each initialize-era session keeps for resumption, across its
#: streams (4 MiB): each event counts its size and ``REPLAY_EVENT_COST``, each stream that
#: keeps events ``REPLAY_STREAM_COST`` more. Past it the oldest events of the stream
#: written to least recently are forgotten first (a finished stream whose events are all
#: forgotten is forgotten with them); an event larger than the whole budget is not kept.
DEFAULT_REPLAY_BYTES: Final = 4 * 1024 * 1024
#: What the replay budget counts for each event beyond its bytes (its bookkeeping).
REPLAY_EVENT_COST: Final = 96
#: What the replay budget counts for each stream that keeps events (its bookkeeping).
REPLAY_STREAM_COST: Final = 1024
#: The reconnection delay (ms) sent in each stream's priming event.
DEFAULT_RETRY: Final = 1000
#: How many initialize-era sessions live at once; past it, the session idle the longest is
#: ended, and when none is idle a new ``initialize`` gets 503.
DEFAULT_MAX_SESSIONS: Final = 1024
#: Seconds between the bindings' ``: keep-alive`` comments on open SSE streams.
DEFAULT_KEEPALIVE: Final = 15.0
#: Seconds a binding waits for the bytes of a request (the next one on a kept-alive
#: connection, or more of one begun) before it closes the connection.
DEFAULT_IDLE_TIMEOUT: Final = 60.0

# CR and LF to spaces: a JSON text on one line, of the same size.
_ONE_LINE: Final = bytes.maketrans(b"\r\n", b"  ")
# A Last-Event-ID of ours: two decimal numbers of at most 18 ASCII digits (int() takes them).
_EVENT_ID: Final = re.compile(r"([0-9]{1,18})_([0-9]{1,18})")
# A Content-Length: ASCII digits only (str.isdigit() takes "²", which int() refuses).
_DIGITS: Final = re.compile(r"[0-9]+")
_META: Final = "_meta"
_META_VERSION: Final = "io.modelcontextprotocol/protocolVersion"
_META_SUBSCRIPTION: Final = "io.modelcontextprotocol/subscriptionId"
_JSON: Final = "application/json"
_SSE: Final = "text/event-stream"
_SSE_HEADERS: Final = (
    ("content-type", _SSE),
    ("cache-control", "no-cache"),
    ("x-accel-buffering", "no"),
)
# 2026-07-28: the HTTP status of a JSON-RPC error answer.
_STATUS_OF_ERROR: Final[dict[int, int]] = {
    ErrorCode.PARSE_ERROR: 400,
    ErrorCode.INVALID_REQUEST: 400,
    ErrorCode.METHOD_NOT_FOUND: 404,
    ErrorCode.INVALID_PARAMS: 400,
    ErrorCode.HEADER_MISMATCH: 400,
    ErrorCode.MISSING_REQUIRED_CLIENT_CAPABILITY: 400,
    ErrorCode.UNSUPPORTED_PROTOCOL_VERSION: 400,
}


class _End:
    def __repr__(self) -> str:
        return "END"


#: What :meth:`Exchange.next_output` returns when the response is complete.
END: Final = _End()


@attrs.frozen
class ResponseHead:
    """The status line and headers of a response."""

    status: int
    headers: tuple[tuple[str, str], ...]


@attrs.frozen
class Deliver:
    """Feed ``data`` (JSON-RPC lines) to ``session`` (through its driver)."""

    session: HttpSession
    data: bytes


@attrs.frozen
class Terminate:
    """``session`` is over (deleted, evicted): stop its driver."""

    session: HttpSession


@attrs.frozen
class Wake:
    """These exchanges, served on other connections, have new output (their end)."""

    exchanges: tuple[Exchange, ...]


#: What :meth:`HttpServer.end` and :meth:`HttpServer.disconnected` ask of the binding.
Work = Deliver | Terminate | Wake


class Exchange:
    """One HTTP request and its response. The binding feeds the body in and pulls the
    response out with :meth:`next_output`; ``waiter`` is the binding's to use (wake it
    when :meth:`HttpServer.route` names this exchange)."""

    __slots__ = (
        "_body",
        "_ended",
        "_out",
        "_size",
        "headers",
        "method",
        "mode",
        "session",
        "stream",
        "target",
        "waiter",
    )

    def __init__(self, method: str, target: str, headers: dict[str, str]) -> None:
        self.method = method
        """The HTTP method."""
        self.target = target
        """The request target."""
        self.headers = headers
        """The request headers, by lower-case name."""
        self.session: HttpSession | None = None
        """The MCP session it belongs to, once known."""
        self.stream: _Stream | None = None
        self.mode: str | None = None  # None (undecided), "json", "sse" or "done"
        self.waiter: Any = None
        self._out: deque[ResponseHead | bytes | _End] = deque()
        self._body: list[bytes] = []
        self._size = 0
        self._ended = False

    # ------------------------------------------------------------------ the request

    def receive_body(self, chunk: bytes, max_size: int) -> bool:
        """Take a chunk of the request body; ``False`` (and a 413 response) when the body
        grew past ``max_size``: stop reading it."""
        if self._ended:
            return False
        self._size += len(chunk)
        if self._size > max_size:
            self._body.clear()
            self.respond(413, f"the body is larger than {max_size} bytes")
            return False
        if chunk:
            self._body.append(chunk)
        return True

    @property
    def body(self) -> bytes:
        """The request body received so far."""
        return b"".join(self._body)

    # ------------------------------------------------------------------ the response

    def next_output(self) -> ResponseHead | bytes | _End | None:
        """The next part of the response: a :class:`ResponseHead` (first), body bytes,
        :data:`~mcp_sansio.http.END` (last), or ``None`` when nothing is ready yet (wait
        on ``waiter``)."""
        return self._out.popleft() if self._out else None

    @property
    def finished(self) -> bool:
        """Whether the whole response has been queued (its :data:`~mcp_sansio.http.END`
        included)."""
        return self._ended

    @property
    def streaming(self) -> bool:
        """Whether the response is an SSE stream."""
        return self.mode == "sse"

    def respond(
        self,
        status: int,
        message: str | None = None,
        *,
        body: bytes | None = None,
        headers: Iterable[tuple[str, str]] = (),
        code: int = ErrorCode.INVALID_REQUEST,
        request_id: RequestId | None = None,
    ) -> None:
        """Queue a whole response: ``body`` as JSON, or a JSON-RPC error of ``code`` and
        ``message`` (with ``request_id``), or no body."""
        if self._ended:
            return
        if body is None and message is not None:
            body = orjson.dumps(
                {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}
            )
        head = list(headers)
        if body:
            head.append(("content-type", _JSON))
        head.append(("content-length", str(len(body or b""))))
        self._out.append(ResponseHead(status, tuple(head)))
        if body:
            self._out.append(body)
        self._finish()

    def _finish(self) -> None:
        self._out.append(END)
        self._ended = True
        self.mode = "done"

    def _start_sse(self, extra: Iterable[tuple[str, str]] = ()) -> None:
        self.mode = "sse"
        self._out.append(ResponseHead(200, _SSE_HEADERS + tuple(extra)))

    def _push(self, data: bytes) -> None:
        if not self._ended:
            self._out.append(data)

    def __repr__(self) -> str:
        return f"<Exchange {self.method} {self.target} {self.mode or 'pending'}>"


class _Stream:
    """A logical SSE stream of a session: the answers (and related messages) of one POST,
    or the standalone GET stream. It outlives a dropped connection in the initialize era,
    keeping its last events for resumption: ``replay`` is always the run of its newest
    events (none, when the newest could not be kept), so a resumption gets all the events
    after its ``Last-Event-ID`` or none (400), never a gap."""

    __slots__ = (
        "_exchange",
        "batched",
        "cancels",
        "kept",
        "no",
        "owed",
        "replay",
        "seq",
        "session",
        "standalone",
    )

    def __init__(self, session: HttpSession, no: int, *, standalone: bool = False) -> None:
        self.session = session
        self.no = no
        self.standalone = standalone
        self._exchange: Exchange | None = None
        self.owed: set[RequestId] = set()
        self.seq = 0
        self.replay: deque[tuple[int, bytes]] = deque()
        self.kept = 0  # what the events in replay count in the session's replay budget
        self.cancels: tuple[RequestId, ...] = ()  # the requests its POST cancels
        # A batch's POST: the answers that came while the JSON answer waits for the rest
        # (``json_response=True``); None for a POST of one message.
        self.batched: list[bytes] | None = None

    @property
    def done(self) -> bool:
        return not self.standalone and not self.owed

    @property
    def exchange(self) -> Exchange | None:
        """The HTTP response carrying the stream now, if any."""
        return self._exchange

    @exchange.setter
    def exchange(self, ex: Exchange | None) -> None:
        # The session and the server count the streams with a response attached, so that
        # neither the eviction of an idle session nor the keep-alive walks all streams.
        if (ex is None) != (self._exchange is None):
            self.session._attach(self, ex is not None)
        self._exchange = ex


class HttpSession:
    """One MCP session behind HTTP: an initialize-era session (named by its
    ``Mcp-Session-Id``), or one stateless POST. ``driver`` is the binding's."""

    __slots__ = (
        "_next_stream",
        "attached",
        "by_request",
        "closed",
        "current",
        "driver",
        "get_stream",
        "id",
        "initializing",
        "kept",
        "owner",
        "replay_bytes",
        "session",
        "streams",
    )

    def __init__(self, owner: HttpServer, session: ServerSession, session_id: str | None) -> None:
        self.owner = owner
        self.session = session
        """The sans-IO server session."""
        self.id = session_id
        """The ``Mcp-Session-Id`` (``None`` for a stateless POST)."""
        self.driver: Any = None
        """The binding's loop around :attr:`session`."""
        self.streams: dict[int, _Stream] = {}
        self.by_request: dict[RequestId, _Stream] = {}
        self.get_stream: _Stream | None = None
        self.current: _Stream | None = None
        self.closed = False
        self.initializing: RequestId | None = None
        """The id of the ``initialize`` request whose answer decides whether this session
        exists: an error answer ends it, and its id is never sent."""
        self.attached = 0
        """How many of its streams have an HTTP response attached (0: the session is
        idle)."""
        self.kept: OrderedDict[int, _Stream] = OrderedDict()
        """The streams keeping events for resumption, the least recently written first."""
        self.replay_bytes = 0
        """What the events kept for resumption count, within the server's
        ``replay_bytes``."""
        self._next_stream = 1

    @property
    def stateless(self) -> bool:
        """Whether this is a 2026-07-28 POST (no session id, no resumption)."""
        return self.id is None

    @property
    def over(self) -> bool:
        """Whether the session has ended (deleted or evicted, or a stateless POST that is
        answered or abandoned): the binding stops its driver."""
        return self.closed or (self.id is None and self not in self.owner.live)

    def _new_stream(self, *, standalone: bool = False) -> _Stream:
        stream = _Stream(self, self._next_stream, standalone=standalone)
        self._next_stream += 1
        self.streams[stream.no] = stream
        return stream

    def _attach(self, stream: _Stream, attached: bool) -> None:
        self.attached += 1 if attached else -1
        self.owner._attached(self, stream, attached)

    def _keep(self, stream: _Stream, seq: int, event: bytes) -> None:
        """Keep ``event`` (number ``seq``, the stream's newest) for resumption, within
        ``replay_size`` events per stream and ``replay_bytes`` per session: the oldest
        events of the least recently written streams go first, each once (O(1) amortized
        per event)."""
        owner = self.owner
        budget = owner.replay_bytes
        cost = len(event) + REPLAY_EVENT_COST
        if not stream.replay:
            cost += REPLAY_STREAM_COST
        if cost > budget or owner.replay_size < 1:
            self._forget(stream, len(stream.replay))  # no gap: keep none
            return
        stream.replay.append((seq, event))
        stream.kept += cost
        self.replay_bytes += cost
        self.kept[stream.no] = stream
        self.kept.move_to_end(stream.no)
        if len(stream.replay) > owner.replay_size:
            self._forget(stream, 1)
        while self.replay_bytes > budget:
            self._forget(next(iter(self.kept.values())), 1)

    def _forget(self, stream: _Stream, n: int) -> None:
        """Forget the ``n`` oldest events of ``stream``; a stream left with none is out of
        the budget, and so is a finished one with no response attached (gone)."""
        replay = stream.replay
        for _ in range(min(n, len(replay))):
            cost = len(replay.popleft()[1]) + REPLAY_EVENT_COST
            stream.kept -= cost
            self.replay_bytes -= cost
        if not replay:
            self.replay_bytes -= stream.kept  # its REPLAY_STREAM_COST
            stream.kept = 0
            self.kept.pop(stream.no, None)
            if stream.done and stream.exchange is None and self.current is not stream:
                self.streams.pop(stream.no, None)

    def __repr__(self) -> str:
        return f"<HttpSession {self.id or 'stateless'}>"


class HttpServer:
    """Streamable HTTP for a :class:`~mcp_sansio.server.Server`, sans-IO.

    :param server: the registry to serve.
    :param path: the MCP endpoint (other paths get 404).
    :param allowed_hosts: the ``Host`` names (without port) accepted; ``None`` turns the
        check off (behind a proxy that checks it). Default: the loopback names.
    :param allowed_origins: the ``Origin`` hosts (without scheme and port) accepted when a
        request has an ``Origin``; ``None`` turns the check off. Default: as
        ``allowed_hosts``.
    :param max_body_size: the largest request body, in bytes: one of exactly this size is
        served, one byte more gets 413. Each session reads messages that large (its
        ``max_message_size`` defaults to the larger of this and 4 MiB).
    :param replay_size: how many events each SSE stream keeps for ``Last-Event-ID``.
    :param replay_bytes: how many bytes of events each initialize-era session keeps for
        ``Last-Event-ID``, across its streams
        (:data:`~mcp_sansio.http.DEFAULT_REPLAY_BYTES`, 4 MiB; each event counts
        :data:`~mcp_sansio.http.REPLAY_EVENT_COST` more, each stream keeping events
        :data:`~mcp_sansio.http.REPLAY_STREAM_COST`): past it the oldest events of the
        stream written to least recently are forgotten (the spec lets a server replay or
        not), and a ``Last-Event-ID`` before them gets 400. An event larger than the
        budget is not kept, nor are its stream's older ones: a resumption never skips an
        event.
    :param retry: the reconnection delay (ms) announced in each stream's priming event.
    :param json_response: ``True``: answer requests with JSON only (notifications sent
        during a request are dropped); ``False``: always SSE; ``None`` (default): JSON when
        the answer is the first thing ready, SSE otherwise.
    :param max_sessions: the most initialize-era sessions at once: past it the one idle the
        longest (without an open stream) is ended, and when every one has an open stream a
        new ``initialize`` gets 503 (with ``Retry-After``).
    :param state_keys: the keys that seal 2026 ``requestState`` (share them between the
        workers of a deployment; default: random per process).
    :param state_clock: the one clock that seals and checks the expiry of ``requestState``
        (default ``time.time``, so that a state sealed by one worker opens on another; the
        only clock this class touches, and only through this parameter). The sessions'
        other times (call deadlines) are on the binding's clock, the ``now`` it passes.
    :param session_options: for each :class:`~mcp_sansio.session.ServerSession`
        (``versions=``, ``timeout=``, ``max_message_size=``, …).
    """

    def __init__(
        self,
        server: Any,
        *,
        path: str = "/mcp",
        allowed_hosts: Collection[str] | None = DEFAULT_ALLOWED_HOSTS,
        allowed_origins: Collection[str] | DefaultType | None = DEFAULT,
        max_body_size: int = DEFAULT_MAX_MESSAGE_SIZE,
        replay_size: int = DEFAULT_REPLAY_SIZE,
        replay_bytes: int = DEFAULT_REPLAY_BYTES,
        retry: int = DEFAULT_RETRY,
        json_response: bool | None = None,
        max_sessions: int = DEFAULT_MAX_SESSIONS,
        state_keys: bytes | list[bytes] | None = None,
        state_clock: Callable[[], float] = time.time,
        **session_options: Any,
    ) -> None:
        self.server = server
        """The registry served."""
        self.path = path
        """The MCP endpoint's path."""
        self.allowed_hosts = None if allowed_hosts is None else frozenset(allowed_hosts)
        """The accepted ``Host`` names, or ``None`` (no check)."""
        self.allowed_origins = (
            self.allowed_hosts
            if allowed_origins is DEFAULT
            else None
            if allowed_origins is None
            else frozenset(allowed_origins)
        )
        """The accepted ``Origin`` hosts, or ``None`` (no check)."""
        self.max_body_size = max_body_size
        """The largest request body, in bytes."""
        self.replay_size = replay_size
        """How many events each stream keeps for resumption."""
        self.replay_bytes = replay_bytes
        """How many bytes of events each session keeps for resumption."""
        self.retry = retry
        """The reconnection delay (ms) of the priming events."""
        self.json_response = json_response
        """JSON only (``True``), SSE only (``False``) or automatic (``None``)."""
        self.max_sessions = max_sessions
        """The most initialize-era sessions at once."""
        self.state_keys = secrets.token_bytes(32) if state_keys is None else state_keys
        # Every body within max_body_size reaches its session as one line of its size: the
        # sessions must read lines that long (413 is the only refusal for size).
        session_options.setdefault("max_message_size", max(max_body_size, DEFAULT_MAX_MESSAGE_SIZE))
        self.session_options = dict(session_options, state_clock=state_clock)
        versions = tuple(session_options.get("versions") or ALL_VERSIONS)
        self.versions = versions
        """The protocol versions served."""
        self.legacy_versions = tuple(v for v in versions if VERSIONS[v].era is Era.INITIALIZE)
        self.stateless_versions = tuple(v for v in versions if VERSIONS[v].era is Era.STATELESS)
        self.sessions: OrderedDict[str, HttpSession] = OrderedDict()
        """The initialize-era sessions, least recently used first."""
        self.live: set[HttpSession] = set()
        """Every session with work in hand (stateless POSTs included)."""
        # The initialize-era sessions with no response attached, idle the longest first
        # (the ones _make_room may end), and every stream with a response attached (the
        # ones keepalive() visits): kept up to date so that neither walks the sessions.
        self._idle: OrderedDict[HttpSession, None] = OrderedDict()
        self._open: dict[_Stream, None] = {}
        # By name: (the tool, its header annotations); only names of registered tools.
        self._param_headers: dict[str, tuple[object, dict[str, str] | None]] = {}

    # ------------------------------------------------------------------ sessions

    def _new_session(self, stateless: bool) -> HttpSession:
        options = dict(self.session_options)
        options["versions"] = self.stateless_versions if stateless else self.legacy_versions
        session = ServerSession(self.server, state_keys=self.state_keys, **options)
        if stateless:
            return HttpSession(self, session, None)
        session_id = secrets.token_hex(16)
        return HttpSession(self, session, session_id)

    def _make_room(self) -> list[Work] | None:
        """Room for a new initialize-era session: when :attr:`max_sessions` are open, the
        one idle the longest (no response attached since its last request, or for
        longest) is ended; ``None`` when every one has an open stream (the new one is
        refused: the bound holds). O(1): the idle sessions are kept in order."""
        if len(self.sessions) < self.max_sessions:
            return []
        if self._idle:
            return self._terminate(next(iter(self._idle)))
        return None

    def _remember(self, hs: HttpSession) -> None:
        """Register a new initialize-era session (after :meth:`_make_room`)."""
        assert hs.id is not None
        self.sessions[hs.id] = hs
        if not hs.attached:
            self._idle[hs] = None

    def _used(self, hs: HttpSession) -> None:
        """A request reached ``hs``: it is the most recently used."""
        assert hs.id is not None
        self.sessions.move_to_end(hs.id)
        if hs in self._idle:
            self._idle.move_to_end(hs)

    def _attached(self, hs: HttpSession, stream: _Stream, attached: bool) -> None:
        """``stream`` of ``hs`` got (or lost) its HTTP response."""
        if attached:
            self._open[stream] = None
            self._idle.pop(hs, None)
        else:
            self._open.pop(stream, None)
            if not hs.attached and not hs.closed and hs.id is not None and hs.id in self.sessions:
                self._idle[hs] = None  # the most recently used idle session

    def _terminate(self, hs: HttpSession) -> list[Work]:
        hs.closed = True
        if hs.id is not None:
            self.sessions.pop(hs.id, None)
        self.live.discard(hs)
        self._idle.pop(hs, None)
        ended = []
        for stream in hs.streams.values():
            ex = stream.exchange
            if ex is not None and not ex.finished:
                if ex.mode is None:
                    ex.respond(404, "the session has ended")
                else:
                    ex._finish()
                ended.append(ex)
            self._open.pop(stream, None)
        return [Terminate(hs), Wake(tuple(ended))]

    # ------------------------------------------------------------------ requests

    def begin(
        self, method: str, target: str, headers: Iterable[tuple[bytes | str, bytes | str]]
    ) -> Exchange:
        """A request's head arrived. Returns its :class:`Exchange`; when the head alone
        decides the answer (a wrong path, method, ``Host``, ``Origin``, ``Accept``,
        session…), the response is already queued (:attr:`Exchange.finished`) and the
        body need not be read."""
        ex = Exchange(method.upper(), target, lower_headers(headers))
        h = ex.headers
        if urlsplit(target).path != self.path:
            ex.respond(404, f"no MCP endpoint at {urlsplit(target).path}")
            return ex
        problem = self._check_origin(h)
        if problem is not None:
            ex.respond(*problem)
            return ex
        if ex.method == "POST":
            self._begin_post(ex)
        elif ex.method in ("GET", "DELETE"):
            self._begin_session_request(ex)
        else:
            ex.respond(405, f"{ex.method} is not allowed", headers=self._allow())
        return ex

    def _allow(self) -> tuple[tuple[str, str], ...]:
        return (("allow", "GET, POST, DELETE" if self.legacy_versions else "POST"),)

    def _check_origin(self, h: Mapping[str, str]) -> tuple[int, str] | None:
        if self.allowed_hosts is not None:
            host = _host_name(h.get("host", ""))
            if host not in self.allowed_hosts:
                return 421, f"the Host {h.get('host', '')!r} is not allowed"
        origin = h.get("origin")
        if origin is not None and self.allowed_origins is not None:
            parts = urlsplit(origin)
            if parts.scheme not in ("http", "https") or _host_name(parts.netloc) not in (
                self.allowed_origins
            ):
                return 403, f"the Origin {origin!r} is not allowed"
        return None

    def _begin_post(self, ex: Exchange) -> None:
        h = ex.headers
        if not _accepts(h.get(ACCEPT, ""), _JSON) or not _accepts(h.get(ACCEPT, ""), _SSE):
            ex.respond(406, "Accept must list both application/json and text/event-stream")
            return
        kind = h.get(CONTENT_TYPE, "").split(";")[0].strip().lower()
        if kind != _JSON:
            ex.respond(415, "the Content-Type must be application/json")
            return
        length = (h.get("content-length") or "").strip()
        # More digits than the limit has is larger (and int() takes no more than 4,300).
        digits = length.lstrip("0") or "0"
        if _DIGITS.fullmatch(length) and (
            len(digits) > len(str(self.max_body_size)) or int(digits) > self.max_body_size
        ):
            ex.respond(413, f"the body is larger than {self.max_body_size} bytes")
            return
        session_id = h.get(SESSION_ID)
        if session_id is not None and self.legacy_versions:
            hs = self.sessions.get(session_id.strip())
            if hs is None:
                ex.respond(404, "no such session (it may have expired): initialize again")
                return
            self._used(hs)
            ex.session = hs

    def _begin_session_request(self, ex: Exchange) -> None:
        h = ex.headers
        session_id = h.get(SESSION_ID)
        if not self.legacy_versions or session_id is None:
            ex.respond(405, f"{ex.method} needs an initialize-era session", headers=self._allow())
            return
        hs = self.sessions.get(session_id.strip())
        if hs is None:
            ex.respond(404, "no such session (it may have expired): initialize again")
            return
        ex.session = hs
        self._used(hs)
        if ex.method == "GET" and not _accepts(h.get(ACCEPT, ""), _SSE):
            ex.respond(406, "Accept must list text/event-stream")

    def end(self, ex: Exchange) -> list[Work]:
        """The request's body is complete: decide and start its answer. Returns what the
        binding must do: feed bytes to a session (:class:`Deliver`), stop one
        (:class:`Terminate`)."""
        if ex.finished:
            return []
        if ex.method == "DELETE":
            assert ex.session is not None
            out = self._terminate(ex.session)
            ex.respond(200)
            return out
        if ex.method == "GET":
            return self._open_get(ex)
        return self._post(ex)

    def _open_get(self, ex: Exchange) -> list[Work]:
        hs = ex.session
        assert hs is not None
        last = ex.headers.get(LAST_EVENT_ID)
        if last is not None:
            stream, seq = self._find_event(hs, last.strip())
            if stream is None:
                ex.respond(400, f"unknown Last-Event-ID {last!r}: the stream cannot resume")
                return []
            out: list[Work] = []
            old = stream.exchange
            if old is not None and not old.finished:
                old._finish()  # the client moved to this connection
                out.append(Wake((old,)))
            ex.stream = stream
            ex._start_sse()
            for event_seq, event in stream.replay:
                if event_seq > seq:
                    ex._push(event)
            if stream.done:
                ex._finish()  # all there is: the stream needs no response attached
                stream.exchange = None
            else:
                stream.exchange = ex
            return out
        if hs.get_stream is not None and hs.get_stream.exchange is not None:
            ex.respond(409, "this session's standalone stream is already open")
            return []
        stream = hs.get_stream or hs._new_stream(standalone=True)
        hs.get_stream = stream
        stream.exchange = ex
        ex.stream = stream
        ex._start_sse()
        self._prime(stream, ex)
        return []

    @staticmethod
    def _find_event(hs: HttpSession, last: str) -> tuple[_Stream | None, int]:
        match = _EVENT_ID.fullmatch(last)
        if match is None:
            return None, 0  # not one of ours (int() would refuse some: "²", 5,000 digits)
        no, seq = match.groups()
        stream = hs.streams.get(int(no))
        if stream is None:
            return None, 0
        n = int(seq)
        oldest = stream.replay[0][0] if stream.replay else stream.seq + 1
        if n > stream.seq or n < oldest - 1:
            return None, 0  # in the future, or fell out of the replay buffer
        return stream, n

    def _prime(self, stream: _Stream, ex: Exchange) -> None:
        """The priming event of a resumable stream: an id (and ``retry``) with no data."""
        if stream.session.stateless:
            return
        ex._push(encode_event(b"", id=f"{stream.no}_{stream.seq}", retry=self.retry))

    # ------------------------------------------------------------------ POST

    def _post(self, ex: Exchange) -> list[Work]:
        body = ex.body
        # The exchange of a request in flight lives as long as the request: it must not
        # keep a copy of the body (up to max_body_size) the session has.
        ex._body.clear()
        try:
            message = orjson.loads(body)
        except orjson.JSONDecodeError:
            ex.respond(400, "the body is not JSON", code=ErrorCode.PARSE_ERROR)
            return []
        messages = message if isinstance(message, list) else [message]
        if not messages or not all(isinstance(m, dict) for m in messages):
            ex.respond(400, "the body is not a JSON-RPC message")
            return []
        first: dict[str, Any] = messages[0]
        hs = ex.session
        out: list[Work] = []
        if hs is None:
            stateless = self._is_stateless(ex, first)
            if stateless is None:
                ex.respond(
                    400, "a session id is needed: send initialize first", request_id=first.get("id")
                )
                return []
            if stateless:
                if isinstance(message, list):
                    ex.respond(400, "2026-07-28 has no batches", request_id=None)
                    return []
                problem = self._check_stateless_headers(ex, first)
                if problem is not None:
                    ex.respond(
                        400,
                        problem,
                        code=ErrorCode.HEADER_MISMATCH,
                        request_id=first.get("id") if "method" in first else None,
                    )
                    return []
            else:
                problem = _initialize_problem(message)
                if problem is not None:
                    ex.respond(400, problem, request_id=None)
                    return []
                room = self._make_room()
                if room is None:
                    # JSON-RPC 2.0: -32000 to -32099 are "reserved for implementation-defined
                    # server-errors"; 503: the refusal is temporary.
                    ex.respond(
                        503,
                        f"the server holds its maximum of {self.max_sessions} sessions, each "
                        "with an open stream: try again later",
                        headers=(("retry-after", "1"),),
                        code=-32000,
                        request_id=first["id"],
                    )
                    return []
                out.extend(room)
            hs = self._new_session(stateless)
            if not stateless:
                hs.initializing = first["id"]
                self._remember(hs)
            ex.session = hs
        else:
            problem = self._check_version_header(ex, hs)
            if problem is not None:
                ex.respond(400, problem, request_id=first.get("id"))
                return []
        requests = [
            m["id"]
            for m in messages
            if "method" in m
            and isinstance(m.get("id"), (str, int))
            and not isinstance(m["id"], bool)
        ]
        seen: set[RequestId] = set()
        for rid in requests:
            if rid in hs.by_request or rid in seen:
                # Its answer would be mistaken for the one in flight under the same id.
                ex.respond(400, f"the request id {rid!r} is already in flight", request_id=rid)
                return out
            seen.add(rid)
        stream = hs._new_stream()
        if isinstance(message, list):
            stream.batched = []
        stream.owed.update(requests)
        stream.cancels = tuple(
            rid
            for m in messages
            if m.get("method") == "notifications/cancelled" and isinstance(m.get("params"), dict)
            for rid in (m["params"].get("requestId"),)
            if isinstance(rid, (str, int)) and not isinstance(rid, bool) and rid in hs.by_request
        )
        for rid in stream.owed:
            hs.by_request[rid] = stream
        stream.exchange = ex
        ex.stream = stream
        self.live.add(hs)
        # Transports: "The body of the POST request MUST be a single JSON-RPC request,
        # notification, or response" (MUST; 2025-06-18, 2025-11-25; 2025-03-26 adds one
        # batch array, 2026-07-28 has no responses). JSON allows line breaks between
        # tokens, so a body is one value whatever its layout; the session reads a message
        # per line, so it gets that value as one line. JSON strings hold no raw CR or LF
        # (and orjson, which parsed the body, is strict): each is whitespace between
        # tokens and becomes a space, so the line has the body's size.
        out.append(Deliver(hs, body.translate(_ONE_LINE) + b"\n"))
        return out

    def _is_stateless(self, ex: Exchange, first: Mapping[str, Any]) -> bool | None:
        """Whether a POST without a session is 2026-07-28; ``None`` when it is an
        initialize-era message that needs a session."""
        if not self.stateless_versions:
            return False if first.get("method") == "initialize" else None
        if not self.legacy_versions:
            return True
        header = ex.headers.get(PROTOCOL_VERSION, "").strip()
        if header in VERSIONS and VERSIONS[header].era is Era.STATELESS:
            return True
        params = first.get("params")
        meta = params.get(_META) if isinstance(params, Mapping) else None
        if isinstance(meta, Mapping) and _META_VERSION in meta:
            return True
        if first.get("method") == "initialize":
            return False
        return None if header in VERSIONS else True

    def _check_stateless_headers(self, ex: Exchange, message: Mapping[str, Any]) -> str | None:
        if "method" not in message:
            return None
        h = ex.headers
        params = message.get("params")
        meta = params.get(_META) if isinstance(params, Mapping) else None
        version = meta.get(_META_VERSION) if isinstance(meta, Mapping) else None
        header = h.get(PROTOCOL_VERSION)
        if header is None:
            if version is not None:
                return "the MCP-Protocol-Version header is missing"
        elif version is not None and header.strip() != version:
            return (
                f"the MCP-Protocol-Version header {header.strip()!r} does not match the "
                f"request's protocol version {version!r}"
            )
        tool_headers = None
        if message.get("method") == "tools/call" and isinstance(params, Mapping):
            tool_headers = self._tool_headers(params.get("name"))
        return check_standard_headers(h, message, tool_headers)

    def _tool_headers(self, name: Any) -> dict[str, str] | None:
        """The ``Mcp-Param-*`` annotations of the tool called ``name``, cached per tool
        the server registered: a name the client sends that names no tool is not
        remembered (each one cost the cache an entry, and its bytes, for good), so the
        cache holds at most one entry per registered tool, whatever the clients send."""
        if not isinstance(name, str):
            return None
        tool = self.server.tools.get(name)
        if tool is None:
            self._param_headers.pop(name, None)  # a tool since removed
            return None
        cached = self._param_headers.get(name)
        if cached is None or cached[0] is not tool:
            cached = self._param_headers[name] = (tool, header_params(tool.input_schema))
        return cached[1]

    def _check_version_header(self, ex: Exchange, hs: HttpSession) -> str | None:
        header = ex.headers.get(PROTOCOL_VERSION)
        if header is None:
            return None  # absent: assume 2025-03-26, as the spec says
        header = header.strip()
        if header not in self.legacy_versions:
            return f"unsupported MCP-Protocol-Version {header!r}"
        # The spec rejects only invalid or unsupported values: a supported version other
        # than the negotiated one passes (the 0.1.16 conformance suite sends 2025-03-26 on
        # a 2025-11-25 session).
        return None

    # ------------------------------------------------------------------ what sessions write

    def begin_delivery(self, hs: HttpSession, ex: Exchange | None) -> None:
        """The binding is about to feed ``ex``'s body to ``hs``: what the session writes
        with no other home (an error about an unreadable message) goes to ``ex``."""
        hs.current = ex.stream if ex is not None and ex.session is hs else None

    def end_delivery(self, hs: HttpSession) -> list[Exchange]:
        """The body has been fed; returns the exchanges touched by closing up. A request
        the session refused without an answer of its own (a refused batch: one error with
        a null id) is owed no more; a POST that asked for nothing gets its 202 now, unless
        an error about it went out."""
        stream, hs.current = hs.current, None
        touched: list[Exchange] = []
        if stream is not None:
            session = hs.session
            for rid in [r for r in stream.owed if not _owes(session, r)]:
                stream.owed.discard(rid)
                hs.by_request.pop(rid, None)
            ex = stream.exchange
            if ex is not None and ex.mode is None and stream.done:
                if stream.batched:  # the rest of the batch was refused or cancelled
                    self._answer_batch(stream, ex, None)
                else:
                    ex.respond(202)
                touched.append(ex)
            touched.extend(e for e in self._reap(hs, (stream,)) if e not in touched)
            if stream.cancels:
                touched.extend(e for e in self._cancelled(hs, stream) if e not in touched)
        elif hs.stateless:
            self._reap(hs, ())
        return touched

    def _cancelled(self, hs: HttpSession, by: _Stream) -> list[Exchange]:
        """The requests that ``by``'s POST cancelled (and the session forgot: it ignores
        a cancel of ``initialize``) are owed no more; their streams end if they owe
        nothing else. (They were kept, each with its stream and its response open, for
        the rest of the session.)"""
        ended: dict[_Stream, None] = {}
        for rid in by.cancels:
            stream = hs.by_request.get(rid)
            if stream is None or stream is by or _owes(hs.session, rid):
                continue
            del hs.by_request[rid]
            stream.owed.discard(rid)
            ended[stream] = None
        by.cancels = ()
        touched = []
        for stream in ended:
            ex = stream.exchange
            if stream.done and ex is not None and ex.mode is None and stream.batched:
                self._answer_batch(stream, ex, None)  # the answers that came before
                touched.append(ex)
            elif stream.done and ex is not None and ex.mode is None:
                # No answer is owed for a cancelled request (Cancellation: the receiver
                # "SHOULD NOT send a response"): an event stream with nothing on it ends.
                ex._start_sse(self._session_headers(hs))
                self._prime(stream, ex)
                ex._finish()
                touched.append(ex)
        touched.extend(e for e in self._reap(hs, ended) if e not in touched)
        return touched

    def route(
        self, hs: HttpSession, data: bytes, related: RequestId | None = None
    ) -> list[Exchange]:
        """Put what ``hs``'s session wrote (JSON-RPC lines) on the right streams;
        ``related`` is the id of the request a handler was serving when it wrote. Returns
        the exchanges with new output (wake their waiters)."""
        touched: list[Exchange] = []
        streams: dict[_Stream, None] = {}  # the streams written to: the only ones to reap
        for line in data.splitlines():
            if not line:
                continue
            stream = self._stream_for(hs, line, related)
            if stream is None:
                continue
            streams[stream] = None
            ex = self._emit(stream, line)
            if ex is not None and ex not in touched:
                touched.append(ex)
        touched.extend(e for e in self._reap(hs, streams) if e not in touched)
        return touched

    def _stream_for(
        self, hs: HttpSession, line: bytes, related: RequestId | None
    ) -> _Stream | None:
        message = orjson.loads(line)
        rid = message.get("id")
        if "method" not in message and rid is not None:  # an answer
            if hs.initializing is not None and rid == hs.initializing:
                self._initialized(hs, "error" not in message)
            stream = hs.by_request.pop(rid, None)
            if stream is not None:
                stream.owed.discard(rid)
                return stream
            return hs.current
        if related is not None and related in hs.by_request:
            return hs.by_request[related]
        params = message.get("params")
        meta = params.get(_META) if isinstance(params, dict) else None
        if isinstance(meta, dict) and meta.get(_META_SUBSCRIPTION) in hs.by_request:
            return hs.by_request[meta[_META_SUBSCRIPTION]]
        if "method" not in message:  # an error about an unreadable message
            return hs.current
        return hs.current or hs.get_stream

    def _initialized(self, hs: HttpSession, ok: bool) -> None:
        """The session's ``initialize`` was answered: with an ``InitializeResult``, the
        session lives on; with an error, it ends here, and its id is never sent."""
        hs.initializing = None
        if ok:
            return
        # Transports: the server MAY assign a session ID "by including it in an
        # Mcp-Session-Id header on the HTTP response containing the InitializeResult"; an
        # error is no InitializeResult: no session.
        hs.closed = True
        if hs.id is not None:
            self.sessions.pop(hs.id, None)
        self.live.discard(hs)
        self._idle.pop(hs, None)

    def _emit(self, stream: _Stream, line: bytes) -> Exchange | None:
        ex = stream.exchange
        resumable = not stream.session.stateless
        if ex is not None and ex.mode is None:
            batched = stream.batched
            if batched is not None and b'"id":null' not in line:
                # A batch answered in JSON gets "an Array containing the corresponding
                # Response objects" (JSON-RPC 2.0, Batch), once all have come; with JSON
                # only, the answers that come first wait for the last.
                if self.json_response is True and not stream.done:
                    if "method" not in orjson.loads(line):
                        batched.append(line)
                    return None
                if self._json_now(ex, stream):
                    self._answer_batch(stream, ex, line)
                    return ex
            if self._json_now(ex, stream):
                status = 200
                if stream.session.stateless or b'"id":null' in line:
                    status = _status_of(line)
                ex.respond(status, body=line, headers=self._session_headers(stream.session))
                return ex
            if self.json_response and not stream.done:
                return None  # JSON only: what comes before the answer is dropped
            ex._start_sse(self._session_headers(stream.session))
            self._prime(stream, ex)
        event: bytes
        if resumable:
            stream.seq += 1
            event = encode_event(line, id=f"{stream.no}_{stream.seq}")
            stream.session._keep(stream, stream.seq, event)
        else:
            event = encode_event(line)
        if ex is None:
            return None
        ex._push(event)
        return ex

    def _answer_batch(self, stream: _Stream, ex: Exchange, last: bytes | None) -> None:
        """Answer a batch's POST with the JSON array of its answers (and ``last``)."""
        answers = stream.batched or []
        if last is not None:
            answers.append(last)
        stream.batched = None
        body = b"[" + b",".join(answers) + b"]"
        ex.respond(200, body=body, headers=self._session_headers(stream.session))

    def _json_now(self, ex: Exchange, stream: _Stream) -> bool:
        if self.json_response is False:
            return False
        return (
            stream.done
            and not stream.standalone
            and stream.seq == 0  # nothing went out on it before
            and (self.json_response is True or _accepts(ex.headers.get(ACCEPT, ""), _JSON))
        )

    @staticmethod
    def _session_headers(hs: HttpSession) -> tuple[tuple[str, str], ...]:
        if hs.id is None or hs.closed:
            return ()
        return ((SESSION_ID, hs.id),)

    def _reap(self, hs: HttpSession, streams: Iterable[_Stream]) -> list[Exchange]:
        """End those of ``streams`` whose requests are all answered (only the streams a
        step touched can have changed: the others are not walked, so a message costs the
        same however many streams the session keeps); forget a finished stateless
        session."""
        touched = []
        for stream in streams:
            if not stream.done:
                continue
            ex = stream.exchange
            if ex is not None and ex.mode == "sse" and not ex.finished:
                ex._finish()
                touched.append(ex)
            if ex is not None and ex.mode is not None and hs.current is not stream:
                stream.exchange = None
            if stream.exchange is None and hs.current is not stream and not stream.replay:
                hs.streams.pop(stream.no, None)
        if hs.stateless and not hs.streams and hs.current is None:
            self.live.discard(hs)
        return touched

    # ------------------------------------------------------------------ the binding's news

    def close_stream(self, hs: HttpSession, request_id: RequestId) -> list[Exchange]:
        """End the HTTP response carrying ``request_id``'s stream now (the client resumes
        it with ``Last-Event-ID`` after the priming event's ``retry``); later messages are
        kept for the replay. Only for initialize-era sessions; returns the exchanges to
        wake."""
        stream = hs.by_request.get(request_id)
        if stream is None or hs.stateless or stream.exchange is None:
            return []
        ex = stream.exchange
        if ex.mode is None:
            ex._start_sse(self._session_headers(hs))
            self._prime(stream, ex)
        ex._finish()
        stream.exchange = None
        return [ex]

    def disconnected(self, ex: Exchange) -> list[Work]:
        """The client went away before ``ex``'s response ended. In the initialize era its
        stream lives on for resumption; in 2026-07-28 its requests are cancelled (a
        ``notifications/cancelled`` is fed to the session for each)."""
        stream = ex.stream
        if not ex.finished:
            ex._finish()
        if stream is None or stream.exchange is not ex:
            return []
        stream.exchange = None
        hs = stream.session
        if not hs.stateless:
            return []
        out: list[Work] = []
        for rid in list(stream.owed):
            hs.by_request.pop(rid, None)
            note = {
                "jsonrpc": "2.0",
                "method": "notifications/cancelled",
                "params": {"requestId": rid, "reason": "the client closed the stream"},
            }
            out.append(Deliver(hs, orjson.dumps(note) + b"\n"))
        stream.owed.clear()
        self._reap(hs, (stream,))
        return out

    def keepalive(self) -> list[Exchange]:
        """Queue a ``: keep-alive`` comment on every open SSE response; returns them."""
        touched = []
        comment = encode_comment("keep-alive")
        for stream in self._open:  # the streams with a response attached, no others
            ex = stream.exchange  # (an exchange carries one stream: each comes once)
            if ex is not None and ex.mode == "sse" and not ex.finished:
                ex._push(comment)
                touched.append(ex)
        return touched

    def all_sessions(self) -> list[HttpSession]:
        """Every session alive: the initialize-era ones and the stateless POSTs in hand."""
        seen = dict.fromkeys(self.sessions.values())
        seen.update(dict.fromkeys(self.live))
        return [hs for hs in seen if not hs.closed]

    def wire(
        self, hs: HttpSession, waker: Callable[[Iterable[Exchange]], None] | None = None
    ) -> Callable[[bytes, RequestId | None], None]:
        """Connect ``hs``'s session to this server: its handlers' broadcasts (resource
        updates, list changes) and ``close_stream`` go through here. Returns the function
        its driver writes through (``route(data, related_request_id)``). Each call wakes
        the exchanges it touched with ``waker`` (default: :func:`wake`)."""
        waker = waker or wake
        hs.session.broadcast = lambda make: waker(self.broadcast(make))
        hs.session.on_close_stream = lambda rid: waker(self.close_stream(hs, rid))
        return lambda data, related: waker(self.route(hs, data, related))

    def broadcast(self, make: Callable[[ServerSession], bytes]) -> list[Exchange]:
        """Run ``make`` on every live session (``lambda s: s.resource_updated(uri)``) and
        route what each returns; returns the exchanges to wake."""
        touched: list[Exchange] = []
        for hs in self.all_sessions():
            data = make(hs.session)
            if data:
                touched.extend(self.route(hs, data))
        return touched


def _owes(session: ServerSession, request_id: RequestId) -> bool:
    """Whether ``session`` still owes an answer to the peer's request ``request_id``, in
    O(1) (``Connection.owed`` would copy every request in flight)."""
    return session.connection.owes(request_id)


def _host_name(host: str) -> str:
    """``host[:port]`` → ``host`` (an IPv6 literal keeps its brackets)."""
    host = host.strip().lower()
    if host.startswith("["):
        end = host.find("]")
        return host[: end + 1] if end != -1 else host
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def _initialize_problem(message: Any) -> str | None:
    """Why a POST that would open an initialize-era session cannot (``None``: it can): it
    must be one ``initialize`` request, with an id."""
    if isinstance(message, list):
        # 2025-03-26, Lifecycle: "The initialize request MUST NOT be part of a JSON-RPC
        # batch" (and later versions have no batches).
        return "the initialize request must not be part of a JSON-RPC batch"
    rid = message.get("id")
    if not isinstance(rid, (str, int)) or isinstance(rid, bool):
        # JSON-RPC 2.0: a request has an id, a string or a number; without one it is a
        # notification, which opens nothing.
        return "initialize must be a request, with a string or integer id"
    return None


def _accepts(accept: str, media: str) -> bool:
    major = media.split("/")[0]
    for item in accept.split(","):
        kind = item.split(";")[0].strip().lower()
        if kind in (media, "*/*", f"{major}/*"):
            return True
    return False


def _status_of(line: bytes) -> int:
    """The HTTP status of a 2026-07-28 answer: from its JSON-RPC error code."""
    if b'"error"' not in line:
        return 200
    error = orjson.loads(line).get("error")
    code = error.get("code") if isinstance(error, dict) else None
    return _STATUS_OF_ERROR.get(code, 200) if isinstance(code, int) else 200


def wake(exchanges: Iterable[Exchange]) -> None:
    """Set the ``waiter`` of each exchange (anything with a ``set()``: an
    :class:`asyncio.Event`, a :class:`trio.Event`, a binding's own waker)."""
    for ex in exchanges:
        if ex.waiter is not None:
            ex.waiter.set()
