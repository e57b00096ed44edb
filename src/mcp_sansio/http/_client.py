"""The client side of Streamable HTTP, sans-IO.

:class:`HttpClientTransport` sits between a :class:`~mcp_sansio.session.ClientSession` and
an HTTP client. Its session-facing side is bytes: :meth:`~HttpClientTransport.send` takes
the newline-terminated JSON-RPC lines the session writes, and the lines the session should
read come back as :class:`ToSession` actions. So the session (era probing, the
``input_required`` loop, cancellation, timeouts) runs over HTTP unchanged. Its HTTP-facing
side is *parts*: :class:`HttpRequest` descriptions out, and the response in as calls to
:meth:`~HttpClientTransport.response_started`, :meth:`~HttpClientTransport.response_data`,
:meth:`~HttpClientTransport.response_ended` or :meth:`~HttpClientTransport.request_failed`.
It does no I/O and reads no clock: a reconnection comes out as a request with a ``delay``.

What it does, by the specification's rules for Streamable HTTP:

- Each message the session writes is POSTed on its own (one HTTP exchange per message, a
  *stream* numbered by the transport), with ``Content-Type: application/json`` and
  ``Accept: application/json, text/event-stream``.
- Initialize era: once the ``initialize`` result has passed, every request carries the
  ``Mcp-Session-Id`` the server set on that response (if any) and, from 2025-06-18 on,
  ``MCP-Protocol-Version``. 2026-07-28 (a message whose ``params._meta`` names a version of
  that era): the standard headers of :func:`~mcp_sansio.http._headers.standard_headers`,
  including ``Mcp-Param-*`` for ``tools/call``, from the ``x-mcp-header`` annotations of
  the ``tools/list`` results it has seen go by. A call of a tool whose annotations are
  invalid is not sent; the session gets an error answer (-32602) instead.
- Answers: ``202``/``204`` for notifications and responses; ``application/json`` (one
  message, or a batch in 2025-03-26) or ``text/event-stream`` (each ``message`` event's
  data is a message; the priming event with empty data is skipped) for requests.
- Failures become JSON-RPC errors, so that every request of the session gets its answer: a
  4xx/5xx whose body is a JSON-RPC error is passed on (a ``null`` id replaced by the id of
  the request the POST carried: that is how a ``server/discover`` probe of a legacy server
  ends and the session falls back to ``initialize``); anything else (404 for an expired
  session, 405, a refused or broken connection, a malformed or oversized body, a stream that
  ends without the answer) gives each request the POST carried an error with code
  :data:`TRANSPORT_ERROR` whose message says what happened, with ``data.status`` the HTTP
  status when there was one.
- Resumption (initialize era, 2025-11-25's SSE polling): when an event stream ends before
  every answer it owes has arrived, and it had given an event id, the transport asks for a
  ``GET`` with ``Last-Event-ID`` after the stream's ``retry`` delay (default
  :data:`DEFAULT_RETRY_MS`), and again while the server keeps answering with streams that
  end without the answers, up to ``max_reconnects`` times in a row without progress.
- Cancellation: a ``notifications/cancelled`` for a request of the initialize era is
  POSTed; in 2026-07-28 it is not sent (that era has no such notification on HTTP): the
  request's stream is aborted instead, which is how that era cancels. Either way the
  cancelled request's stream is aborted and its answer is no longer awaited.
- Optionally (``listen=True``), initialize era only: a standalone ``GET`` stream for the
  server's own requests and notifications, opened once ``notifications/initialized`` is
  sent and reopened (with ``Last-Event-ID``) when it ends; a ``405`` means the server
  offers none. Off by default: most servers send everything on the POST streams.
- An expired session (initialize era): when a POST that carried the session id gets HTTP
  404 (or another of ``expired_statuses``), the specification says the client MUST start a
  new session. The transport does it without the session noticing: it replays the
  session's ``initialize`` request (under an id of its own, without the old session id),
  checks that the result names the same version, sends ``notifications/initialized`` with
  the new session id, and sends again what the 404 refused (the server did not take it),
  then what the session wrote meanwhile. What the old session held on the server is
  restored first, under ids of the transport's own whose answers the session never sees:
  the logging level of the last ``logging/setLevel`` the server accepted, then a
  ``resources/subscribe`` for each resource subscribed to (and not unsubscribed from) with
  the server's success, each answered before anything else is sent. Once in a row: if what
  it resent gets 404 again before anything succeeded, or the new ``initialize`` fails, the
  requests waiting get errors. A :class:`TransportProblem` says the session was reopened
  and what was restored, and another one says what the new session refused to restore.
  ``reopen=False`` turns this off (each request the 404 refused then gets an error).
- :meth:`~HttpClientTransport.close` aborts every stream and, when the server set a
  session id, sends ``DELETE`` with it (any answer, ``405`` included, is fine).
- Memory is bounded: a JSON body, an error body and each event are limited to
  ``max_body_size`` bytes (4 MiB by default), counted as they arrive.
- Follow-ups are bounded: a POST that owes the session no answer (a response to the
  server's request, a notification) is a *follow-up*. At most ``max_follow_ups`` are in
  flight at once; the others wait in a queue bounded in bytes by ``max_write_buffer``
  (each counts its line and :data:`_QUEUED_COST`). Past that bound :attr:`reading_paused`
  is true (until the queue is down to half): the binding stops reading the server's
  streams, but the follow-ups' own, so that the server's requests stop producing answers,
  as the stdio adapters do. Each follow-up's request carries ``write_timeout`` as its
  :attr:`HttpRequest.timeout`: a follow-up whose response has not ended by then (the
  server never answered it) is aborted by the binding (:meth:`response_overdue`), which
  frees its connection and lets the next one go; it is dropped (the server owed no
  answer), with a :class:`TransportProblem` at debug level.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Iterable, Mapping
from typing import Any, Final

import attrs
import orjson

from .._backpressure import DEFAULT_MAX_WRITE_BUFFER, DEFAULT_WRITE_TIMEOUT
from .._framing import DEFAULT_CLIENT_MAX_MESSAGE_SIZE
from .._sse import SseDecoder, SseEvent
from .._versions import VERSIONS, Era
from ._headers import header_params, standard_headers

__all__ = [
    "DEFAULT_MAX_BODY_SIZE",
    "DEFAULT_MAX_FOLLOW_UPS",
    "DEFAULT_MAX_RECONNECTS",
    "DEFAULT_RETRY_MS",
    "TRANSPORT_ERROR",
    "AbortRequest",
    "ClientAction",
    "HttpClientTransport",
    "HttpRequest",
    "ToSession",
    "TransportProblem",
]

#: The largest JSON body, error body or SSE event accepted, in bytes: a client's
#: ``max_message_size`` (64 MiB, :data:`~mcp_sansio.DEFAULT_CLIENT_MAX_MESSAGE_SIZE`).
DEFAULT_MAX_BODY_SIZE: Final = DEFAULT_CLIENT_MAX_MESSAGE_SIZE
#: How long to wait before resuming a stream whose server gave no ``retry`` (milliseconds).
DEFAULT_RETRY_MS: Final = 1000
#: How many times in a row a stream is resumed without a message arriving before its
#: requests fail.
DEFAULT_MAX_RECONNECTS: Final = 5
#: The most follow-up POSTs (those that owe the session no answer: responses to the
#: server's requests, notifications) in flight at once; the others wait their turn.
DEFAULT_MAX_FOLLOW_UPS: Final = 4
#: What a follow-up waiting its turn counts within ``max_write_buffer`` besides its line,
#: in bytes (its exchange, its request and their slots).
_QUEUED_COST: Final = 512
#: The JSON-RPC error code of the errors the transport makes up for failed exchanges.
TRANSPORT_ERROR: Final = -32000
#: The error code of a ``tools/call`` refused because of the tool's ``x-mcp-header``.
INVALID_PARAMS: Final = -32602

_ACCEPT_BOTH: Final = ("Accept", "application/json, text/event-stream")
_ACCEPT_SSE: Final = ("Accept", "text/event-stream")
_JSON_BODY: Final = ("Content-Type", "application/json")
_LEGACY_VERSIONS: Final = frozenset(v for v, s in VERSIONS.items() if s.era is Era.INITIALIZE)
_META_VERSION: Final = "io.modelcontextprotocol/protocolVersion"
#: The most tools whose ``x-mcp-header`` annotations the transport remembers, and the
#: bytes they may take (each costs its name, its arguments and suffixes, and
#: ``_TOOL_COST``; 4 MiB): past either, the tools learned first are forgotten (a call to
#: one goes without its ``Mcp-Param-*`` headers, which the server refuses with -32020).
#: Only tools with annotations (valid or not) are remembered: the others need nothing.
_MAX_TOOLS: Final = 65536
_MAX_TOOL_BYTES: Final = 4 * 1024 * 1024
_TOOL_COST: Final = 384  # a dict entry, the name object and a small dict of suffixes


@attrs.frozen
class HttpRequest:
    """An HTTP request for the caller to make, and whose response to feed back under
    ``stream``."""

    stream: int
    """The transport's number for this exchange; pass it with each part of the response."""
    method: str
    """``"POST"``, ``"GET"`` or ``"DELETE"``."""
    target: str
    """The request target (the endpoint's path and query)."""
    headers: tuple[tuple[str, str], ...]
    """The headers, without ``Host`` and ``Content-Length`` (the HTTP layer adds them)."""
    body: bytes = b""
    """The body (one JSON-RPC message, for a POST)."""
    delay: float = 0.0
    """Seconds to wait before sending it (a reconnection's ``retry``)."""
    timeout: float | None = None
    """For a follow-up (a POST that owes no answer): the seconds, counted from the start of
    writing it, by which its response must have ended; past them, call
    :meth:`HttpClientTransport.response_overdue` and close its connection. ``None``: no
    deadline."""


@attrs.frozen
class ToSession:
    """Bytes for the session: one or more newline-terminated JSON-RPC messages."""

    data: bytes


@attrs.frozen
class AbortRequest:
    """Stop the exchange ``stream`` now: close its connection (it may not be reused), and
    feed nothing more of it. Also sent for a request not started yet (a delayed one)."""

    stream: int
    reason: str


@attrs.frozen
class TransportProblem:
    """Something went wrong that no request of the session is waiting on (a notification
    or a response the server refused, a listen stream that failed): worth a log line."""

    message: str
    level: int = logging.WARNING
    """The level to log it at."""


#: What the transport's methods return.
ClientAction = HttpRequest | ToSession | AbortRequest | TransportProblem

# How an exchange's body is read.
_NONE: Final = 0  # ignored (202, 204, an unexpected success body)
_JSON: Final = 1
_SSE: Final = 2
_ERROR: Final = 3  # a 4xx/5xx body, read up to the limit

# What an exchange is.
_POST: Final = 0
_RESUME: Final = 1  # GET with Last-Event-ID, for a POST stream cut short
_LISTEN: Final = 2  # the standalone GET stream
_DELETE: Final = 3
_REOPEN: Final = 4  # the replayed initialize of an expired session

#: The id under which the transport replays ``initialize`` to reopen an expired session.
_REOPEN_ID: Final = "mcp-sansio-reopen"
#: The ids under which it restores what the old session held (a number follows).
_RESTORE_ID: Final = "mcp-sansio-restore-"
#: The requests whose success changes what the server holds for the session (initialize
#: era): remembered, to be restored in a reopened session.
_SESSION_STATE_METHODS: Final = frozenset(
    {"resources/subscribe", "resources/unsubscribe", "logging/setLevel"}
)


class _Exchange:
    __slots__ = (
        "attempts",
        "body",
        "buffer",
        "decoder",
        "follow_up",
        "kind",
        "last_id",
        "malformed",
        "mode",
        "modern",
        "oversized",
        "owed",
        "progress",
        "retry",
        "session_id",
        "size",
        "status",
        "stream",
        "truncated",
    )

    def __init__(self, stream: int, kind: int, owed: set[Any], modern: bool = False) -> None:
        self.stream = stream
        self.kind = kind
        self.owed = owed  # the ids of the requests still waiting for their answer here
        self.modern = modern
        self.session_id: str | None = None  # sent with the request
        self.body = b""  # a POST's line, kept to send again in a reopened session
        self.status = 0
        self.mode = _NONE
        self.buffer: list[bytes] = []
        self.size = 0
        self.truncated = False
        self.decoder: SseDecoder | None = None
        self.oversized = 0
        self.malformed = False
        self.attempts = 0  # reconnections without progress (resume, listen)
        self.progress = False  # a message arrived on this exchange
        self.last_id = ""  # the Last-Event-ID this GET was opened with
        self.retry: int | None = None  # the retry in force when it was opened (ms)
        self.follow_up = False  # a POST that owes no answer (bounded, with a deadline)


def _tool_cost(name: str, params: dict[str, str] | None) -> int:
    """What a remembered tool counts within ``_MAX_TOOL_BYTES``."""
    size = _TOOL_COST + _chars(name)
    if params:
        size += sum(_chars(argument) + len(suffix) for argument, suffix in params.items())
    return size


def _chars(text: str) -> int:
    """The bytes ``text`` may take in memory: 4 a character unless it is ASCII."""
    return len(text) if text.isascii() else 4 * len(text)


def _text(value: bytes | str) -> str:
    return value.decode("latin-1") if isinstance(value, bytes) else value


def _error_message(request_id: Any, code: int, message: str, status: int = 0) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message}
    if status:
        error["data"] = {"status": status}
    return {"jsonrpc": "2.0", "id": request_id, "error": error}


def _error(request_id: Any, code: int, message: str, status: int = 0) -> bytes:
    return orjson.dumps(_error_message(request_id, code, message, status)) + b"\n"


def _is_id(value: Any) -> bool:
    return type(value) is str or type(value) is int


def _valid_session_id(value: str) -> bool:
    """Visible ASCII, as the specification requires of a session id."""
    return bool(value) and all(0x21 <= ord(c) <= 0x7E for c in value)


def _header_safe(value: str) -> bool:
    """Whether ``value`` can go into a header as it is (printable ASCII, no whitespace at
    either end): a server's event id that cannot is not sent back."""
    return value == value.strip(" \t") and all(0x20 <= ord(c) <= 0x7E for c in value)


_TOKEN = frozenset("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")


def _check_header(name: str, value: str) -> tuple[str, str]:
    if not name or not set(name) <= _TOKEN:
        raise ValueError(f"not a valid header name: {name!r}")
    if not all(c == "\t" or 0x20 <= ord(c) <= 0x7E for c in value):
        raise ValueError(f"not a valid value for the header {name}: {value!r}")
    return name, value


class HttpClientTransport:
    """A Streamable HTTP client transport for one MCP endpoint, sans-IO.

    Every method returns a list of actions, in order: :class:`HttpRequest` (make this
    request), :class:`AbortRequest` (drop that exchange), :class:`ToSession` (bytes for the
    session) and :class:`TransportProblem` (log it).

    :param target: the endpoint's request target, e.g. ``"/mcp"``.
    :param headers: extra headers for every request (``Authorization``…); a name that is
        not an HTTP token or a value with control characters raises :exc:`ValueError`.
    :param max_body_size: the largest JSON body, error body or SSE event, in bytes.
    :param max_reconnects: how many resumptions in a row may bring no message before the
        requests a stream owes fail.
    :param default_retry_ms: the wait before resuming a stream whose server set no
        ``retry``.
    :param listen: open the standalone GET stream in the initialize era.
    :param reopen: start a new session when the server answers 404 to the session id
        (initialize era), as the module docs say.
    :param expired_statuses: the HTTP statuses that, in answer to a POST that carried the
        session id, mean the session expired. The specification says 404; servers built on
        the TypeScript SDK's examples (the everything server among them) answer an unknown
        session id with 400 and a JSON-RPC error: pass ``(404, 400)`` for them. Each must
        be a 4xx or 5xx status.
    :param max_follow_ups: the most follow-up POSTs (owing no answer) in flight at once.
    :param max_write_buffer: the bound, in bytes, on the follow-ups waiting their turn:
        past it :attr:`reading_paused` is true until they are down to half.
    :param write_timeout: the seconds by which a follow-up's response must have ended
        (:attr:`HttpRequest.timeout`); ``None``: no deadline.
    """

    def __init__(
        self,
        target: str = "/mcp",
        *,
        headers: Iterable[tuple[str, str]] | Mapping[str, str] = (),
        max_body_size: int = DEFAULT_MAX_BODY_SIZE,
        max_reconnects: int = DEFAULT_MAX_RECONNECTS,
        default_retry_ms: int = DEFAULT_RETRY_MS,
        listen: bool = False,
        reopen: bool = True,
        expired_statuses: Iterable[int] = (404,),
        max_follow_ups: int = DEFAULT_MAX_FOLLOW_UPS,
        max_write_buffer: int = DEFAULT_MAX_WRITE_BUFFER,
        write_timeout: float | None = DEFAULT_WRITE_TIMEOUT,
    ) -> None:
        if isinstance(max_follow_ups, bool) or not isinstance(max_follow_ups, int):
            raise ValueError(f"max_follow_ups must be a number, not {max_follow_ups!r}")
        if max_follow_ups < 1:
            raise ValueError("max_follow_ups must be at least 1")
        if isinstance(max_write_buffer, bool) or not isinstance(max_write_buffer, int):
            raise ValueError(f"max_write_buffer must be bytes, not {max_write_buffer!r}")
        if max_write_buffer < 1:
            raise ValueError("max_write_buffer must be at least 1 byte")
        if write_timeout is not None and not (
            isinstance(write_timeout, (int, float))
            and not isinstance(write_timeout, bool)
            and write_timeout > 0
        ):
            raise ValueError(f"write_timeout must be more than 0 s or None, not {write_timeout!r}")
        if max_body_size < 1:
            raise ValueError("max_body_size must be at least 1 byte")
        if max_reconnects < 0 or default_retry_ms < 0:
            raise ValueError("max_reconnects and default_retry_ms must not be negative")
        statuses = frozenset(expired_statuses)
        if not all(type(status) is int and 400 <= status <= 599 for status in statuses):
            raise ValueError(f"expired_statuses must be 4xx or 5xx statuses: {sorted(statuses)}")
        self.target = target
        """The endpoint's request target."""
        extra = headers.items() if isinstance(headers, Mapping) else headers
        self.extra_headers: tuple[tuple[str, str], ...] = tuple(
            _check_header(k, v) for k, v in extra
        )
        """The caller's headers, sent with every request."""
        self.max_body_size = max_body_size
        """The bound on bodies and events, in bytes."""
        self.max_reconnects = max_reconnects
        """The bound on resumptions in a row without progress."""
        self.default_retry_ms = default_retry_ms
        """The wait before a resumption when the server set no ``retry``, in ms."""
        self.listen = listen
        """Whether the standalone GET stream is opened (initialize era)."""
        self.reopen = reopen
        """Whether an expired session is reopened (initialize era)."""
        self.reopened = 0
        """How many times an expired session was reopened."""
        self.expired_statuses = statuses
        """The statuses that mean the session expired (initialize era)."""
        self.max_follow_ups = max_follow_ups
        """The bound on follow-ups in flight."""
        self.max_write_buffer = max_write_buffer
        """The bound, in bytes, on the follow-ups waiting their turn."""
        self.write_timeout = None if write_timeout is None else float(write_timeout)
        """The deadline of a follow-up's response, in seconds."""
        self.reading_paused = False
        """Whether the binding is to stop reading the server's streams (those of the
        follow-ups aside): the follow-ups waiting are past ``max_write_buffer`` bytes; it
        reads again once they are down to half."""
        self.overdue = 0
        """How many follow-ups were dropped because their response had not ended within
        ``write_timeout``."""
        self.session_id: str | None = None
        """The ``Mcp-Session-Id`` the server set on the ``initialize`` response, once the
        result has arrived."""
        self.protocol_version: str | None = None
        """The version the ``initialize`` result negotiated (initialize era)."""
        self.closed = False
        """Whether :meth:`close` was called."""
        self._next_stream = 1
        self._exchanges: dict[int, _Exchange] = {}
        self._owner: dict[Any, _Exchange] = {}  # request id -> the exchange that owes it
        self._pending = b""  # an unfinished line from the session
        self._initialize_ids: set[Any] = set()
        self._offered_session_id: str | None = None  # on the initialize response
        self._tools_list_ids: set[Any] = set()
        self._tool_headers: dict[str, dict[str, str] | None] = {}  # first learned first
        self._tool_bytes = 0  # what _tool_headers counts within _MAX_TOOL_BYTES
        self._modern = False  # whether the last request sent was of 2026-07-28
        self._post_headers = (_JSON_BODY, _ACCEPT_BOTH, *self.extra_headers)
        self._legacy_post_headers = self._post_headers
        # Initialize era: what the session writes after ``notifications/initialized`` waits
        # until that POST is answered (on other connections it could overtake it) and, with
        # ``listen``, until the GET stream has its answer (a server sends what it has for
        # the client there, and drops it while no stream is open).
        self._gates: set[int] = set()
        self._held: list[bytes] = []
        # Reopening an expired session: the session's initialize request, the exchange
        # replaying it, and whether a reopened session has had an answer yet (a second 404
        # before that is not reopened again).
        self._initialize: dict[str, Any] | None = None
        self._reopening: _Exchange | None = None
        self._expired_id: str | None = None  # the session being replaced
        self._expired_status = 404  # and the status that said it expired
        self._fresh = False
        # What the server holds for the session, as far as its answers said: the
        # requests that change it, in flight (id -> (method, params)); the resources
        # subscribed to, in order; the logging level. And the transport's own requests
        # restoring them in a reopened session (id -> what it restores, and its line).
        self._changing: dict[Any, tuple[str, dict[str, Any]]] = {}
        self._subscriptions: dict[str, None] = {}
        self._log_level: str | None = None
        self._restoring: dict[Any, tuple[str, bytes]] = {}
        self._restores = 0
        # Actions made while handling a message (a reopened session's next requests), for
        # the public method at work to return.
        self._outbox: list[ClientAction] = []
        # The follow-ups in flight (by stream), and those waiting their turn, with the
        # bytes they count.
        self._flying: set[int] = set()
        self._waiting: deque[HttpRequest] = deque()
        self._waiting_bytes = 0

    # ------------------------------------------------------------------ introspection

    @property
    def follow_ups(self) -> tuple[int, int]:
        """The follow-ups in flight, and the bytes of those waiting their turn."""
        return len(self._flying), self._waiting_bytes

    def paused(self, stream: int) -> bool:
        """Whether the binding is to wait before reading more of ``stream``'s response:
        :attr:`reading_paused`, and ``stream`` is not a follow-up (nor the ``DELETE``)."""
        if not self.reading_paused:
            return False
        ex = self._exchanges.get(stream)
        return ex is not None and not ex.follow_up and ex.kind != _DELETE

    @property
    def open_streams(self) -> tuple[int, ...]:
        """The exchanges in progress (requested and not yet ended), by number."""
        return tuple(self._exchanges)

    def tool_headers(self, name: str) -> dict[str, str] | None:
        """What the transport learned of tool ``name`` from ``tools/list``: its
        ``{argument: header suffix}`` (``None`` for invalid annotations; ``{}`` for a tool
        it has not seen or that has none)."""
        return self._tool_headers.get(name, {})

    # ------------------------------------------------------------------ from the session

    def send(self, data: bytes) -> list[ClientAction]:
        """Take bytes the session wrote (newline-terminated JSON-RPC lines; a line may be
        split across calls) and return the requests that carry them."""
        if self.closed:
            return []
        if self._pending:
            data = self._pending + data
            self._pending = b""
        if data.endswith(b"\n") and data.count(b"\n") == 1:  # the usual case: one line
            return self._flush(self._post(data[:-1])) if len(data) > 1 else []
        lines = data.split(b"\n")
        tail = lines.pop()
        actions: list[ClientAction] = []
        if len(tail) > self.max_body_size:
            actions.append(TransportProblem("the session wrote an oversized line; dropped"))
        else:
            self._pending = tail
        for line in lines:
            if line.strip():
                actions.extend(self._post(line))
        return self._flush(actions)

    def _post(self, line: bytes) -> list[ClientAction]:
        if self._gates:
            self._held.append(line)
            return []
        try:
            message = orjson.loads(line)
        except orjson.JSONDecodeError:
            return [TransportProblem("the session wrote a line that is not JSON; dropped")]
        owed: set[Any] = set()
        modern = False
        method = None
        headers: tuple[tuple[str, str], ...] | list[tuple[str, str]]
        actions: list[ClientAction] = []
        if type(message) is dict:
            method = message.get("method")
            request_id = message.get("id")
            params = message.get("params")
            meta = params.get("_meta") if type(params) is dict else None
            version = meta.get(_META_VERSION) if type(meta) is dict else None
            modern = type(version) is str and version not in _LEGACY_VERSIONS
            if method == "notifications/cancelled":
                target_id = params.get("requestId") if type(params) is dict else None
                ex = self._owner.get(target_id) if _is_id(target_id) else None
                if ex is not None:
                    self._forget(ex, target_id)
                    if not ex.owed and ex.kind != _LISTEN:
                        actions.append(self._abort(ex, "the request was cancelled"))
                    if ex.modern:
                        return actions  # 2026-07-28: closing the stream is the cancel
                elif self._modern:
                    return actions  # 2026-07-28, a request no longer in flight: nothing
            if method is not None and _is_id(request_id):
                self._modern = modern and method != "initialize"
                owed.add(request_id)
                if (
                    method in _SESSION_STATE_METHODS
                    and not modern
                    and type(params) is dict
                    and request_id not in self._restoring
                ):
                    self._changing[request_id] = (method, params)
                if method == "tools/list":
                    self._tools_list_ids.add(request_id)
                elif method == "initialize":
                    self._initialize_ids.add(request_id)
                    self._initialize = message
                    modern = False
            if modern:
                params_of_tool = None
                if method == "tools/call" and type(params) is dict:
                    name = params.get("name")
                    params_of_tool = self._tool_headers.get(name, {}) if type(name) is str else {}
                    if params_of_tool is None:
                        return [
                            ToSession(
                                _error(
                                    request_id,
                                    INVALID_PARAMS,
                                    f"refusing to call the tool {name!r}: its input schema "
                                    "has invalid x-mcp-header annotations",
                                )
                            )
                        ]
                headers = [*self._post_headers, *standard_headers(message, params_of_tool)]
            else:
                headers = self._legacy_post_headers
        elif type(message) is list:  # a batch (2025-03-26)
            for item in message:
                if type(item) is dict and "method" in item and _is_id(item.get("id")):
                    owed.add(item["id"])
            headers = self._legacy_post_headers
        else:
            return [TransportProblem("the session wrote a line that is not a JSON-RPC message")]
        ex = self._new(_POST, owed, modern)
        ex.body = line
        if not modern:
            ex.session_id = self.session_id
        if owed:
            request = HttpRequest(ex.stream, "POST", self.target, tuple(headers), line)
            actions.insert(0, request)
        else:
            ex.follow_up = True
            request = HttpRequest(
                ex.stream, "POST", self.target, tuple(headers), line, timeout=self.write_timeout
            )
            # notifications/initialized (once a session) goes at once: what the session
            # writes next waits for it, the follow-ups in flight may be stalled.
            if len(self._flying) < self.max_follow_ups or method == "notifications/initialized":
                self._flying.add(ex.stream)
                actions.insert(0, request)
            else:  # its turn comes when one in flight ends (O(1) each)
                self._waiting.append(request)
                self._waiting_bytes += len(line) + _QUEUED_COST
                if self._waiting_bytes > self.max_write_buffer:
                    self.reading_paused = True
        if owed and not owed.isdisjoint(self._restoring):
            self._gates.add(ex.stream)  # what follows waits until it is restored
        if method == "notifications/initialized" and not modern:
            self._gates.add(ex.stream)
            if self.listen:
                listen = self._start_listen()
                self._gates.add(listen.stream)
                actions.append(listen)
        return actions

    def _release(self, stream: int) -> list[ClientAction]:
        """The POST of ``notifications/initialized`` is over, or the GET stream has its
        answer: once both are, send what waited for them."""
        if stream not in self._gates:
            return []
        self._gates.discard(stream)
        if self._gates:
            return []
        held, self._held = self._held, []
        actions: list[ClientAction] = []
        for line in held:
            actions.extend(self._post(line))
        return actions

    def _follow_up_over(self, stream: int) -> list[ClientAction]:
        """The exchange ``stream`` is over: if it was a follow-up in flight, the next ones
        waiting (that were not aborted meanwhile) go."""
        if stream not in self._flying:
            return []
        self._flying.discard(stream)
        actions: list[ClientAction] = []
        waiting = self._waiting
        while waiting and len(self._flying) < self.max_follow_ups:
            request = waiting.popleft()
            self._waiting_bytes -= len(request.body) + _QUEUED_COST
            if request.stream in self._exchanges:
                self._flying.add(request.stream)
                actions.append(request)
        if self.reading_paused and self._waiting_bytes <= self.max_write_buffer // 2:
            self.reading_paused = False
        return actions

    def _new(self, kind: int, owed: set[Any], modern: bool = False) -> _Exchange:
        stream = self._next_stream
        self._next_stream += 1
        ex = self._exchanges[stream] = _Exchange(stream, kind, owed, modern)
        for request_id in owed:
            self._owner[request_id] = ex
        return ex

    def _forget(self, ex: _Exchange, request_id: Any) -> None:
        ex.owed.discard(request_id)
        self._owner.pop(request_id, None)
        self._tools_list_ids.discard(request_id)
        self._initialize_ids.discard(request_id)
        self._changing.pop(request_id, None)

    def _abort(self, ex: _Exchange, reason: str) -> AbortRequest:
        self._exchanges.pop(ex.stream, None)
        if ex.stream in self._flying:
            self._outbox.extend(self._follow_up_over(ex.stream))
        for request_id in list(ex.owed):
            self._forget(ex, request_id)
        return AbortRequest(ex.stream, reason)

    def _version_header(self) -> str | None:
        """The ``MCP-Protocol-Version`` requests carry, or ``None`` where the version's
        record says they carry none."""
        version = self.protocol_version
        spec = VERSIONS.get(version) if version is not None else None
        return version if spec is not None and spec.protocol_version_header else None

    def _get_headers(self, last_event_id: str | None) -> tuple[tuple[str, str], ...]:
        headers = [_ACCEPT_SSE, *self.extra_headers]
        if self.session_id is not None:
            headers.append(("Mcp-Session-Id", self.session_id))
        version_header = self._version_header()
        if version_header is not None:
            headers.append(("MCP-Protocol-Version", version_header))
        if last_event_id:
            headers.append(("Last-Event-ID", last_event_id))
        return tuple(headers)

    def _start_listen(self, last_event_id: str = "", delay: float = 0.0) -> HttpRequest:
        ex = self._new(_LISTEN, set())
        ex.session_id = self.session_id
        return HttpRequest(
            ex.stream, "GET", self.target, self._get_headers(last_event_id), delay=delay
        )

    # ------------------------------------------------------------------ from the server

    def response_started(
        self, stream: int, status: int, headers: Iterable[tuple[bytes | str, bytes | str]]
    ) -> list[ClientAction]:
        """The status line and headers of the response to ``stream`` arrived (header names
        in any case; ``bytes`` are read as latin-1). Informational (1xx) responses are not
        passed here."""
        ex = self._exchanges.get(stream)
        if ex is None:
            return []
        ex.status = status
        content_type = ""
        session_id = None
        for raw_name, raw_value in headers:
            name = _text(raw_name).lower()
            if name == "content-type":
                content_type = _text(raw_value).split(";", 1)[0].strip().lower()
            elif name == "mcp-session-id":
                session_id = _text(raw_value).strip()
        if ex.kind == _DELETE:
            return []
        posted = ex.kind == _POST or ex.kind == _REOPEN
        if session_id is not None and posted and self._initialize_ids & ex.owed:
            self._offered_session_id = session_id
        if 200 <= status < 300:
            if content_type == "text/event-stream":
                ex.mode = _SSE
                ex.decoder = SseDecoder(self.max_body_size)
            elif content_type == "application/json" and posted:
                ex.mode = _JSON
        elif status >= 300:
            ex.mode = _ERROR
        return self._release(stream) if ex.kind == _LISTEN else []

    def response_data(self, stream: int, data: bytes) -> list[ClientAction]:
        """A piece of the body of ``stream``'s response."""
        ex = self._exchanges.get(stream)
        if ex is None or not data:
            return []
        mode = ex.mode
        if mode == _SSE:
            decoder = ex.decoder
            assert decoder is not None
            events = decoder.feed(data)
            out: list[bytes] = []
            actions: list[ClientAction] = []
            if events:
                self._events(ex, events, out)
            if decoder.oversized != ex.oversized:
                ex.oversized = decoder.oversized
                actions.extend(
                    self._fail(
                        ex,
                        f"an event on the server's stream was larger than {self.max_body_size}"
                        " bytes",
                        out,
                    )
                )
            elif ex.kind == _RESUME and not ex.owed and ex.stream in self._exchanges:
                actions.append(self._abort(ex, "every answer has arrived"))
            if out:
                actions.insert(0, ToSession(b"".join(out)))
            return self._flush(actions)
        if mode in (_JSON, _ERROR):
            ex.size += len(data)
            if ex.size > self.max_body_size:
                if mode == _ERROR:
                    ex.truncated = True
                    return []
                out = []
                actions = self._fail(
                    ex, f"the response body was larger than {self.max_body_size} bytes", out
                )
                return self._flush([ToSession(b"".join(out)), *actions] if out else actions)
            ex.buffer.append(data)
        return []

    def response_ended(self, stream: int) -> list[ClientAction]:
        """The response to ``stream`` ended (the whole body arrived)."""
        ex = self._exchanges.pop(stream, None)
        if ex is None:
            return []
        out: list[bytes] = []
        actions: list[ClientAction] = []
        mode = ex.mode
        status = ex.status
        if ex.kind == _DELETE:
            return []
        if mode == _JSON:
            body = b"".join(ex.buffer)
            ex.buffer = []
            self._incoming(ex, body, out)
            if ex.owed:
                why = (
                    "the server's JSON body was not valid JSON-RPC"
                    if ex.malformed
                    else "the server's JSON body did not answer the request"
                )
                self._fail_owed(ex, f"{why} (HTTP {status})", status, out)
        elif mode == _SSE:
            decoder = ex.decoder
            assert decoder is not None
            self._events(ex, decoder.close(), out)
            actions.extend(self._stream_over(ex, "the server ended the stream", out))
        elif mode == _ERROR:
            actions.extend(self._http_error(ex, out))
        elif ex.kind == _LISTEN:
            actions.append(TransportProblem(f"the GET stream got HTTP {status}; not listening"))
        elif ex.owed:
            self._fail_owed(
                ex, f"the server answered HTTP {status} with no JSON or event stream", status, out
            )
        if out:
            actions.insert(0, ToSession(b"".join(out)))
        actions.extend(self._release(stream))
        actions.extend(self._follow_up_over(stream))
        return self._flush(actions)

    def request_failed(self, stream: int, reason: str) -> list[ClientAction]:
        """The exchange ``stream`` failed: no connection, a broken connection, a malformed
        HTTP response, or the server closed the connection before the response ended.
        ``reason`` says which (it goes into the errors' messages)."""
        ex = self._exchanges.pop(stream, None)
        if ex is None or ex.kind == _DELETE:
            return []
        out: list[bytes] = []
        if ex.mode == _SSE and ex.decoder is not None:
            self._events(ex, ex.decoder.close(), out)
            actions = self._stream_over(ex, f"the stream broke ({reason})", out)
        elif ex.kind == _LISTEN:
            actions = [TransportProblem(f"the GET stream failed: {reason}")]
        else:
            actions = []
            status = f" after HTTP {ex.status}" if ex.status else ""
            self._fail_owed(ex, f"the HTTP request failed{status}: {reason}", ex.status, out)
        if out:
            actions.insert(0, ToSession(b"".join(out)))
        actions.extend(self._release(stream))
        actions.extend(self._follow_up_over(stream))
        return self._flush(actions)

    def response_overdue(self, stream: int) -> list[ClientAction]:
        """The response to ``stream`` had not ended within its request's
        :attr:`~HttpRequest.timeout`: the binding closes its connection (it may not be
        reused) and feeds nothing more of it. A follow-up owes no answer: it is dropped,
        with a :class:`TransportProblem` at debug level, and the next one waiting goes."""
        ex = self._exchanges.get(stream)
        if ex is None or ex.kind == _DELETE:
            return []
        if not ex.follow_up:  # (only follow-ups have a deadline)
            return self.request_failed(stream, "no response within write_timeout")
        del self._exchanges[stream]
        self.overdue += 1
        got = f"HTTP {ex.status} and not the end of it" if ex.status else "no status line"
        actions: list[ClientAction] = [
            TransportProblem(
                f"a follow-up POST got {got} within write_timeout ({self.write_timeout or 0:g}"
                " s);"
                " its connection is closed and it is dropped (it owed no answer)",
                logging.DEBUG,
            )
        ]
        actions.extend(self._release(stream))
        actions.extend(self._follow_up_over(stream))
        return self._flush(actions)

    def _flush(self, actions: list[ClientAction]) -> list[ClientAction]:
        """``actions``, then what handling the messages queued (a reopened session's)."""
        if self._outbox:
            actions.extend(self._outbox)
            self._outbox = []
        return actions

    def close(self) -> list[ClientAction]:
        """Close: abort every exchange and, when the server set a session id, return the
        ``DELETE`` that ends the session (its answer may be fed back or ignored). The
        session's unanswered requests get nothing more from the transport: the session
        ends them itself when its input ends."""
        if self.closed:
            return []
        self.closed = True
        actions: list[ClientAction] = [
            AbortRequest(stream, "the client is closing") for stream in self._exchanges
        ]
        self._exchanges.clear()
        self._owner.clear()
        self._flying.clear()
        self._waiting.clear()
        self._waiting_bytes = 0
        self.reading_paused = False
        self._gates.clear()
        self._held.clear()
        self._outbox.clear()
        self._reopening = None
        self._restoring.clear()
        self._changing.clear()
        if self.session_id is not None:
            ex = self._new(_DELETE, set())
            actions.append(HttpRequest(ex.stream, "DELETE", self.target, self._get_headers(None)))
        return actions

    # ------------------------------------------------------------------ the messages

    def _events(self, ex: _Exchange, events: list[SseEvent], out: list[bytes]) -> None:
        for event in events:
            if event.data and event.event == "message":
                self._incoming(ex, event.data.encode(), out)

    def _incoming(self, ex: _Exchange, raw: bytes, out: list[bytes]) -> None:
        """One message (or batch) from the server: note what it answers, pass it on."""
        try:
            message = orjson.loads(raw)
        except orjson.JSONDecodeError:
            ex.malformed = True
            return
        if type(message) is dict:
            if not self._note(ex, message, out):
                return
        elif type(message) is list and message:
            kept = [m for m in message if type(m) is not dict or self._note(ex, m, out)]
            if len(kept) != len(message):
                if not kept:
                    return
                message = kept
                raw = orjson.dumps(message)
        else:
            ex.malformed = True
            return
        ex.progress = True
        if b"\n" in raw or b"\r" in raw:
            raw = orjson.dumps(message)  # one line for the session's framing
        out.append(raw + b"\n")

    def _note(self, ex: _Exchange, message: dict[str, Any], out: list[bytes]) -> bool:
        """Note an answer; ``False`` when the message is consumed here (an error with a
        ``null`` id, given to the request(s) this exchange owes)."""
        if "method" in message:
            return True
        request_id = message.get("id")
        if request_id is None and "error" in message:
            if not ex.owed:
                return True
            for owed_id in list(ex.owed):
                self._forget(ex, owed_id)
                self._pass_error(owed_id, message, out)
            ex.progress = True
            return False
        if not _is_id(request_id):
            return True
        owner = self._owner.get(request_id)
        if owner is not None:
            if owner.kind == _REOPEN:
                self._reopened(owner, message, out)
                return False
            if owner.session_id is not None and owner.session_id == self.session_id:
                self._fresh = False
            owner.owed.discard(request_id)
            del self._owner[request_id]
        if request_id in self._restoring:
            self._restored(request_id, message)
            return False
        result = message.get("result")
        if type(result) is dict:
            if request_id in self._tools_list_ids:
                self._learn_tools(result)
            elif request_id in self._initialize_ids:
                self._initialized(result)
            elif request_id in self._changing:
                self._changed(*self._changing[request_id])
        self._tools_list_ids.discard(request_id)
        self._initialize_ids.discard(request_id)
        self._changing.pop(request_id, None)
        return True

    def _learn_tools(self, result: dict[str, Any]) -> None:
        tools = result.get("tools")
        if type(tools) is not list:
            return
        known = self._tool_headers
        for tool in tools:
            if type(tool) is dict and type(tool.get("name")) is str:
                name = tool["name"]
                if name in known:
                    self._tool_bytes -= _tool_cost(name, known.pop(name))
                params = header_params(tool.get("inputSchema"))
                if params == {}:
                    continue  # nothing to mirror: nothing to remember
                known[name] = params
                self._tool_bytes += _tool_cost(name, params)
                while len(known) > _MAX_TOOLS or self._tool_bytes > _MAX_TOOL_BYTES:
                    first = next(iter(known))  # O(1) amortized: each is forgotten once
                    self._tool_bytes -= _tool_cost(first, known.pop(first))

    def _initialized(self, result: dict[str, Any]) -> None:
        version = result.get("protocolVersion")
        # Only a version we know goes into a header (the session refuses the others).
        self.protocol_version = version if version in _LEGACY_VERSIONS else None
        offered = self._offered_session_id
        self.session_id = offered if offered is not None and _valid_session_id(offered) else None
        headers: list[tuple[str, str]] = list(self._post_headers)
        if self.session_id is not None:
            headers.append(("Mcp-Session-Id", self.session_id))
        version_header = self._version_header()
        if version_header is not None:
            headers.append(("MCP-Protocol-Version", version_header))
        self._legacy_post_headers = tuple(headers)

    # ------------------------------------------------------------------ expired sessions

    def _expired(self, ex: _Exchange) -> list[ClientAction] | None:
        """A POST that carried a session id got HTTP 404 (or another of
        ``expired_statuses``): reopen the session and send its line again; ``None`` when
        that is not to be done (it then fails as any such status)."""
        if not self.reopen or self.closed or self._initialize is None:
            return None
        # One of the transport's restoring requests is not sent again: the next reopened
        # session gets its own.
        body = b"" if ex.owed and ex.owed <= self._restoring.keys() else ex.body
        if ex.session_id != self.session_id and (
            self._reopening is not None or self.session_id is not None
        ):
            # Sent in an earlier session, which has been (or is being) reopened: again.
            self._drop_owed(ex)
            return self._post(body) if body else []
        if self._fresh or self._reopening is not None:
            return None  # the reopened session refused it too: once is enough
        self._drop_owed(ex)
        request_id = _REOPEN_ID
        while request_id in self._owner:  # the session's own ids come first
            request_id += "-"
        message = {**self._initialize, "id": request_id}
        reopen = self._reopening = self._new(_REOPEN, {request_id})
        self._expired_id = ex.session_id
        self._expired_status = ex.status
        self._initialize_ids.add(request_id)
        self._offered_session_id = None
        self.session_id = None
        self._legacy_post_headers = self._post_headers
        # What the session writes meanwhile waits, after what the 404 refused.
        self._gates.add(reopen.stream)
        if body:
            self._held.insert(0, body)
        body = orjson.dumps(message)
        actions: list[ClientAction] = [
            self._abort(listen, "the session expired")  # the new session opens its own
            for listen in list(self._exchanges.values())
            if listen.kind == _LISTEN
        ]
        actions.append(HttpRequest(reopen.stream, "POST", self.target, self._post_headers, body))
        return actions

    def _drop_owed(self, ex: _Exchange) -> None:
        """``ex`` is to be sent again (or, for a restoring request, not at all)."""
        for request_id in list(ex.owed):
            self._forget(ex, request_id)
            self._restoring.pop(request_id, None)

    def _reopened(self, ex: _Exchange, message: dict[str, Any], out: list[bytes]) -> None:
        """The answer to the replayed ``initialize``: the session goes on in the new one,
        or the requests waiting fail."""
        for request_id in list(ex.owed):
            self._forget(ex, request_id)
        result = message.get("result")
        version = result.get("protocolVersion") if type(result) is dict else None
        if type(result) is not dict:
            error = message.get("error")
            detail = error.get("message") if type(error) is dict else None
            self._reopen_failed(f"the new initialize was refused ({detail or 'no result'})", out)
            return
        if version != self.protocol_version:
            self._reopen_failed(
                f"the new initialize negotiated {version!r}, not {self.protocol_version!r}", out
            )
            return
        self._initialized(result)
        self._reopening = None
        self._fresh = True
        self.reopened += 1
        restores = self._restore_lines()
        self._held[0:0] = [
            b'{"jsonrpc":"2.0","method":"notifications/initialized"}',
            *(line for line, _ in restores),
        ]
        new = f" as {self.session_id!r}" if self.session_id is not None else ""
        what = "; restoring " + ", ".join(what for _, what in restores) if restores else ""
        self._outbox.append(
            TransportProblem(
                f"the session {self._expired_id!r} expired (HTTP {self._expired_status}) and was "
                f"reopened{new}{what}"
            )
        )
        self._outbox.extend(self._release(ex.stream))

    def _changed(self, method: str, params: dict[str, Any]) -> None:
        """The server accepted a request that changes what it holds for the session."""
        value = params.get("level" if method == "logging/setLevel" else "uri")
        if type(value) is not str:
            return
        if method == "logging/setLevel":
            self._log_level = value
        elif method == "resources/subscribe":
            self._subscriptions[value] = None
        else:
            self._subscriptions.pop(value, None)

    def _restore_lines(self) -> list[tuple[bytes, str]]:
        """The requests that restore, in a reopened session, what the old one held, and
        what each restores. Those of an earlier reopening still waiting to go out are
        dropped: these replace them."""
        unsent = {line: request_id for request_id, (_, line) in self._restoring.items()}
        if unsent:
            for line in self._held:
                request_id = unsent.get(line)
                if request_id is not None:
                    del self._restoring[request_id]
            self._held = [line for line in self._held if line not in unsent]
        wanted: list[tuple[str, dict[str, Any], str]] = []
        if self._log_level is not None:
            level = self._log_level
            wanted.append(("logging/setLevel", {"level": level}, f"the logging level {level!r}"))
        wanted.extend(
            ("resources/subscribe", {"uri": uri}, f"the subscription to {uri!r}")
            for uri in self._subscriptions
        )
        lines = []
        for method, params, what in wanted:
            self._restores += 1
            request_id = f"{_RESTORE_ID}{self._restores}"
            while request_id in self._owner:  # the session's own ids come first
                request_id += "-"
            message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
            line = orjson.dumps(message)
            self._restoring[request_id] = (what, line)
            lines.append((line, what))
        return lines

    def _restored(self, request_id: Any, message: dict[str, Any]) -> None:
        """The answer to one of the transport's restoring requests: a success is all it
        needs; an error is worth a :class:`TransportProblem`."""
        what, _ = self._restoring.pop(request_id)
        error = message.get("error")
        if type(error) is dict or type(message.get("result")) is not dict:
            detail = error.get("message") if type(error) is dict else None
            self._outbox.append(
                TransportProblem(
                    f"the reopened session {self.session_id!r} did not restore {what}: "
                    f"{detail or 'no result'}"
                )
            )

    def _reopen_failed(self, why: str, out: list[bytes]) -> None:
        """Reopening failed: every request waiting for it gets an error."""
        ex = self._reopening
        assert ex is not None
        self._reopening = None
        self._exchanges.pop(ex.stream, None)
        for request_id in list(ex.owed):
            self._forget(ex, request_id)
        self._gates.discard(ex.stream)
        held, self._held = self._held, []
        message = (
            f"the session {self._expired_id!r} expired (HTTP {self._expired_status}) and could "
            f"not be reopened: {why}"
        )
        for line in held:
            try:
                value = orjson.loads(line)
            except orjson.JSONDecodeError:  # pragma: no cover - the session writes JSON
                continue
            for item in value if type(value) is list else [value]:
                request_id = item.get("id") if type(item) is dict and "method" in item else None
                # (The transport's own restoring requests are dropped, unanswered.)
                if _is_id(request_id) and self._restoring.pop(request_id, None) is None:
                    out.append(_error(request_id, TRANSPORT_ERROR, message, self._expired_status))
        self._fresh = True

    # ------------------------------------------------------------------ failures

    def _fail_owed(self, ex: _Exchange, message: str, status: int, out: list[bytes]) -> None:
        if ex.kind == _REOPEN:
            if ex.owed and ex is self._reopening:
                self._reopen_failed(message, out)
            return
        for request_id in sorted(ex.owed, key=str):
            self._forget(ex, request_id)
            error = _error_message(request_id, TRANSPORT_ERROR, message, status)
            self._pass_error(request_id, error, out)

    def _pass_error(self, request_id: Any, message: dict[str, Any], out: list[bytes]) -> None:
        """An error answering ``request_id`` that its exchange got or failed with: to the
        session under that id, or, for one of the transport's own restoring requests (the
        session never sent it), to :meth:`_restored`."""
        if request_id in self._restoring:
            self._restored(request_id, message)
        else:
            out.append(orjson.dumps({**message, "id": request_id}) + b"\n")

    def _fail(self, ex: _Exchange, message: str, out: list[bytes]) -> list[ClientAction]:
        """Fail what ``ex`` owes and abort it."""
        if ex.kind == _LISTEN:
            return [self._abort(ex, message), TransportProblem(f"the GET stream: {message}")]
        self._fail_owed(ex, message, ex.status, out)
        return [self._abort(ex, message)]

    def _http_error(self, ex: _Exchange, out: list[bytes]) -> list[ClientAction]:
        status = ex.status
        if ex.kind == _LISTEN:
            if status == 405:
                return []  # the server offers no standalone stream
            return [TransportProblem(f"the GET stream got HTTP {status}")]
        if status in self.expired_statuses and ex.kind == _POST and ex.session_id is not None:
            expired = self._expired(ex)
            if expired is not None:
                return expired
        body = b"" if ex.truncated else b"".join(ex.buffer)
        ex.buffer = []
        if body and ex.owed and ex.kind in (_POST, _REOPEN):
            try:
                message = orjson.loads(body)
            except orjson.JSONDecodeError:
                message = None
            if type(message) is dict and type(message.get("error")) is dict:
                self._incoming(ex, body, out)
                if not ex.owed:
                    return []  # the error answered what the request carried
        if not ex.owed:
            if ex.kind == _POST:
                return [TransportProblem(f"the server refused a message with HTTP {status}")]
            return []
        if status == 404 and ex.session_id is not None:
            why = f"the session {ex.session_id!r} has expired (HTTP 404); it must be reopened"
        elif status == 404:
            why = "the server answered HTTP 404 (no MCP endpoint here?)"
        elif status == 405:
            why = f"the server does not allow {'GET' if ex.kind == _RESUME else 'POST'} (HTTP 405)"
        elif ex.truncated:
            why = f"the server answered HTTP {status} (an oversized body, not read)"
        else:
            why = f"the server answered HTTP {status} without a JSON-RPC error"
        self._fail_owed(ex, why, status, out)
        return []

    def _stream_over(self, ex: _Exchange, how: str, out: list[bytes]) -> list[ClientAction]:
        """An event stream ended (``how``): resume it, or fail what it still owes."""
        decoder = ex.decoder
        assert decoder is not None
        # The cursor and the delay carry over from earlier streams of the chain.
        last_id = decoder.last_event_id
        last_id = last_id if last_id and _header_safe(last_id) else ex.last_id
        retry = decoder.retry if decoder.retry is not None else ex.retry
        delay = (retry if retry is not None else self.default_retry_ms) / 1000
        attempts = 0 if ex.progress else ex.attempts + 1
        if ex.kind == _LISTEN:
            if attempts > self.max_reconnects:
                return [TransportProblem(f"{how}; the GET stream is given up")]
            request = self._start_listen(last_id, delay)
            listen = self._exchanges[request.stream]
            listen.attempts, listen.last_id, listen.retry = attempts, last_id, retry
            return [request]
        if not ex.owed:
            return []
        if decoder.truncated:
            how += ", in the middle of an event"
        if last_id and not ex.modern and attempts <= self.max_reconnects and ex.kind != _REOPEN:
            resumed = self._new(_RESUME, ex.owed)
            resumed.attempts, resumed.last_id, resumed.retry = attempts, last_id, retry
            resumed.session_id = self.session_id
            headers = self._get_headers(last_id)
            return [HttpRequest(resumed.stream, "GET", self.target, headers, delay=delay)]
        if ex.malformed:
            how += " (after a malformed event)"
        if last_id and not ex.modern and attempts > self.max_reconnects:
            how += f", and {self.max_reconnects} resumptions in a row brought nothing"
        self._fail_owed(ex, f"{how} before the answer", ex.status, out)
        return []
