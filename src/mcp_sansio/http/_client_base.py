"""The session-facing side of :class:`~mcp_sansio.http._client.HttpClientTransport`, sans-IO:
its state, and the POSTs that carry what the session writes.

Each message the session writes is POSTed on its own (one HTTP exchange per message, a
*stream* numbered by the transport), with the headers of its era: in the initialize era the
``Mcp-Session-Id`` the server set on the ``initialize`` response and, where the version's
record says so (:attr:`~mcp_sansio._versions.VersionSpec.protocol_version_header`),
``MCP-Protocol-Version``; in 2026-07-28 (a message whose ``params._meta`` names a version
without sessions) the standard headers, ``Mcp-Param-*`` included. What the session writes
after ``notifications/initialized`` waits until that POST is answered (and, with
``listen``, until the GET stream has its answer). A ``notifications/cancelled`` of a
2026-07-28 request is not sent: its stream is aborted instead.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

import orjson

from .._backpressure import DEFAULT_MAX_WRITE_BUFFER, DEFAULT_WRITE_TIMEOUT
from .._versions import VERSIONS
from ._client_follow_ups import FollowUps
from ._client_parts import (
    _ACCEPT_BOTH,
    _ACCEPT_SSE,
    _DELETE,
    _JSON_BODY,
    _LISTEN,
    _META_VERSION,
    _POST,
    _SESSION_STATE_METHODS,
    DEFAULT_MAX_BODY_SIZE,
    DEFAULT_MAX_FOLLOW_UPS,
    DEFAULT_MAX_RECONNECTS,
    DEFAULT_RETRY_MS,
    INVALID_PARAMS,
    AbortRequest,
    ClientAction,
    HttpRequest,
    ToSession,
    TransportProblem,
    _check_header,
    _error,
    _Exchange,
    _is_id,
    _valid_session_id,
)
from ._client_tools import ToolHeaders
from ._headers import standard_headers

__all__ = ["TransportBase"]

#: The versions whose sessions an ``Mcp-Session-Id`` names (the initialize era): a message
#: whose ``_meta`` names another version is sent with that era's standard headers, and
#: only one of these goes into ``MCP-Protocol-Version`` once ``initialize`` is answered.
_SESSION_VERSIONS: Final = frozenset(v for v, s in VERSIONS.items() if s.policy.session_header)


class TransportBase:
    """The state of an :class:`~mcp_sansio.http._client.HttpClientTransport` and what it
    does with the session's lines (see that class for the parameters)."""

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
        self._tools = ToolHeaders()
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
        # The follow-ups in flight (by stream), and those waiting their turn.
        self._follow = FollowUps(max_follow_ups, max_write_buffer)

    # ------------------------------------------------------------------ introspection

    @property
    def follow_ups(self) -> tuple[int, int]:
        """The follow-ups in flight, and the bytes of those waiting their turn."""
        return len(self._follow.flying), self._follow.waiting_bytes

    @property
    def reading_paused(self) -> bool:
        """Whether the binding is to stop reading the server's streams (those of the
        follow-ups aside): the follow-ups waiting are past ``max_write_buffer`` bytes; it
        reads again once they are down to half."""
        return self._follow.paused

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
        return self._tools.get(name)

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

    def _flush(self, actions: list[ClientAction]) -> list[ClientAction]:
        """``actions``, then what handling the messages queued (a reopened session's)."""
        if self._outbox:
            actions.extend(self._outbox)
            self._outbox = []
        return actions

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
            modern = type(version) is str and version not in _SESSION_VERSIONS
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
                    params_of_tool = self._tools.get(name) if type(name) is str else {}
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
            # (Else its turn comes when one in flight ends.)
            if self._follow.offer(request, now=method == "notifications/initialized"):
                actions.insert(0, request)
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
        return list(self._follow.over(stream, self._exchanges))

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
        if ex.stream in self._follow.flying:
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

    def _initialized(self, result: dict[str, Any]) -> None:
        version = result.get("protocolVersion")
        # Only a version we know goes into a header (the session refuses the others).
        self.protocol_version = version if version in _SESSION_VERSIONS else None
        offered = self._offered_session_id
        self.session_id = offered if offered is not None and _valid_session_id(offered) else None
        headers: list[tuple[str, str]] = list(self._post_headers)
        if self.session_id is not None:
            headers.append(("Mcp-Session-Id", self.session_id))
        version_header = self._version_header()
        if version_header is not None:
            headers.append(("MCP-Protocol-Version", version_header))
        self._legacy_post_headers = tuple(headers)
