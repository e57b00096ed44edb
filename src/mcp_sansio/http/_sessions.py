"""The state of a Streamable HTTP server, sans-IO: the exchanges (one HTTP request and its
response each), the logical SSE streams of each MCP session with their replay buffers, and
the table of sessions with its bounds.

:class:`~mcp_sansio.http.HttpServer` decides what each request gets (see
:mod:`mcp_sansio.http._server`); this module keeps what those decisions leave behind, and
bounds it: a replay buffer bounded in events per stream (``replay_size``) and in bytes per
session (``replay_bytes``, the least recently written streams forgetting their oldest
events first), a bounded number of initialize-era sessions (``max_sessions``: the one idle
the longest is ended to make room, and when none is idle the new one is refused), and no
operation that walks the streams or the sessions: the idle sessions and the streams with a
response attached are kept in order as they change.
"""

from __future__ import annotations

import re
from collections import OrderedDict, deque
from collections.abc import Iterable
from typing import Any, Final

import attrs
import orjson

from .._errors import ErrorCode
from .._events import RequestId
from ..session import ServerSession

__all__ = [
    "DEFAULT_MAX_SESSIONS",
    "DEFAULT_REPLAY_BYTES",
    "DEFAULT_REPLAY_SIZE",
    "END",
    "REPLAY_EVENT_COST",
    "REPLAY_STREAM_COST",
    "Deliver",
    "Exchange",
    "Fetch",
    "HttpSession",
    "ResponseHead",
    "SessionTable",
    "Terminate",
    "Wake",
    "Work",
    "wake",
]

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
#: How many initialize-era sessions live at once; past it, the session idle the longest is
#: ended, and when none is idle a new ``initialize`` gets 503.
DEFAULT_MAX_SESSIONS: Final = 1024

# A Last-Event-ID of ours: two decimal numbers of at most 18 ASCII digits (int() takes them).
_EVENT_ID: Final = re.compile(r"([0-9]{1,18})_([0-9]{1,18})")
_JSON: Final = "application/json"
_SSE: Final = "text/event-stream"
_SSE_HEADERS: Final = (
    ("content-type", _SSE),
    ("cache-control", "no-cache"),
    ("x-accel-buffering", "no"),
)


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


@attrs.frozen
class _Fetch:
    """Make ``request`` (an :class:`~mcp_sansio.auth.HttpRequest`: an introspection, a
    JWKS) for the verification of ``exchange``'s token, and hand the answer to
    :meth:`HttpServer.fetched` (status 0 when it could not be made). Only a server with
    ``auth=`` whose verifier needs I/O asks for it."""

    exchange: Exchange
    request: Any


#: The work item of a verification's request (private until mcp_sansio.http exports it).
Fetch = _Fetch
#: What :meth:`HttpServer.end` and :meth:`HttpServer.disconnected` ask of the binding.
Work = Deliver | Terminate | Wake | _Fetch


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
        "principal",
        "session",
        "stream",
        "target",
        "verification",
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
        self.principal: Any = None
        """The ``Principal`` its token was verified as (a server with ``auth=``), else
        ``None``."""
        self.verification: Any = None  # a token verification waiting for a Fetch
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
        "principal",
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
        self.principal: Any = None  # the principal of the POST that opened it

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
        "__weakref__",
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
        "principal",
        "replay_bytes",
        "session",
        "streams",
    )

    def __init__(self, owner: SessionTable, session: ServerSession, session_id: str | None) -> None:
        self.owner = owner
        """The table it is in (the :class:`~mcp_sansio.http.HttpServer`)."""
        self.session = session
        """The sans-IO server session."""
        self.id = session_id
        """The ``Mcp-Session-Id`` (``None`` for a stateless POST)."""
        self.driver: Any = None
        """The binding's loop around :attr:`session`."""
        self.principal: Any = None
        """The ``Principal`` that started it (``auth=``): the only one whose requests it
        serves."""
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

    def find_event(self, last: str) -> tuple[_Stream | None, int]:
        """The stream and event number a ``Last-Event-ID`` names, when the stream can
        resume after it: ``(None, 0)`` for an id not of ours, of a stream forgotten, in the
        future, or before the events kept."""
        match = _EVENT_ID.fullmatch(last)
        if match is None:
            return None, 0  # not one of ours (int() would refuse some: "²", 5,000 digits)
        no, seq = match.groups()
        stream = self.streams.get(int(no))
        if stream is None:
            return None, 0
        n = int(seq)
        oldest = stream.replay[0][0] if stream.replay else stream.seq + 1
        if n > stream.seq or n < oldest - 1:
            return None, 0  # in the future, or fell out of the replay buffer
        return stream, n

    def __repr__(self) -> str:
        return f"<HttpSession {self.id or 'stateless'}>"


class SessionTable:
    """The sessions of a server and their bounds (what :class:`~mcp_sansio.http.HttpServer`
    is besides its decisions): the initialize-era sessions by id, least recently used
    first, at most ``max_sessions``; every session with work in hand; the idle ones and the
    streams with a response attached, kept in order as they change so that neither making
    room nor the keep-alive walks the sessions.

    :param max_sessions: the most initialize-era sessions at once.
    :param replay_size: how many events each stream keeps for resumption.
    :param replay_bytes: how many bytes of events each session keeps for resumption.
    """

    def __init__(self, *, max_sessions: int, replay_size: int, replay_bytes: int) -> None:
        self.max_sessions = max_sessions
        """The most initialize-era sessions at once."""
        self.replay_size = replay_size
        """How many events each stream keeps for resumption."""
        self.replay_bytes = replay_bytes
        """How many bytes of events each session keeps for resumption."""
        self.sessions: OrderedDict[str, HttpSession] = OrderedDict()
        """The initialize-era sessions, least recently used first."""
        self.live: set[HttpSession] = set()
        """Every session with work in hand (stateless POSTs included)."""
        # The initialize-era sessions with no response attached, idle the longest first
        # (the ones _make_room may end), and every stream with a response attached (the
        # ones keepalive() visits): kept up to date so that neither walks the sessions.
        self._idle: OrderedDict[HttpSession, None] = OrderedDict()
        self._open: dict[_Stream, None] = {}

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

    def _drop(self, hs: HttpSession) -> None:
        """``hs`` ends before it began (its ``initialize`` was refused): it was never
        named to the client, so it is forgotten without a :class:`Terminate`."""
        hs.closed = True
        if hs.id is not None:
            self.sessions.pop(hs.id, None)
        self.live.discard(hs)
        self._idle.pop(hs, None)

    def all_sessions(self) -> list[HttpSession]:
        """Every session alive: the initialize-era ones and the stateless POSTs in hand."""
        seen = dict.fromkeys(self.sessions.values())
        seen.update(dict.fromkeys(self.live))
        return [hs for hs in seen if not hs.closed]


def wake(exchanges: Iterable[Exchange]) -> None:
    """Set the ``waiter`` of each exchange (anything with a ``set()``: an
    :class:`asyncio.Event`, a :class:`trio.Event`, a binding's own waker)."""
    for ex in exchanges:
        if ex.waiter is not None:
            ex.waiter.set()
