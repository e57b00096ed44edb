"""The server side of Streamable HTTP, sans-IO: HTTP requests in, MCP sessions and HTTP
responses out.

:class:`HttpServer` sits between any HTTP implementation and the
:class:`~mcp_sansio.session.ServerSession` s that serve the protocol. The HTTP binding
(h11 in :mod:`mcp_sansio.http._h11server`, run by each runtime's ``serve_http``, or the
ASGI application) hands
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

What a request must be is checked in :mod:`~mcp_sansio.http._admission`; the exchanges, the
streams with their replay buffers and the table of sessions are in
:mod:`~mcp_sansio.http._sessions` (an :class:`HttpServer` is a
:class:`~mcp_sansio.http._sessions.SessionTable`). Which versions have sessions is read from
each version's record (:attr:`~mcp_sansio._versions.EraPolicy.session_header`).
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Collection, Iterable, Mapping
from typing import Any, Final
from urllib.parse import urlsplit

import orjson

from .._errors import ErrorCode
from .._events import RequestId
from .._framing import DEFAULT_MAX_MESSAGE_SIZE
from .._sse import encode_comment, encode_event
from .._versions import ALL_VERSIONS, VERSIONS
from ..session import DEFAULT, DefaultType, ServerSession
from ._admission import (
    accepts,
    initialize_problem,
    origin_problem,
    post_head_problem,
    session_less,
    stateless_header_problem,
    version_header_problem,
)
from ._headers import ACCEPT, LAST_EVENT_ID, SESSION_ID, header_params, lower_headers
from ._server_auth import AuthHooks, authorize, bind_session, pending, same_principal
from ._sessions import (
    _JSON,
    _SSE,
    DEFAULT_MAX_SESSIONS,
    DEFAULT_REPLAY_BYTES,
    DEFAULT_REPLAY_SIZE,
    END,
    REPLAY_EVENT_COST,
    REPLAY_STREAM_COST,
    Deliver,
    Exchange,
    HttpSession,
    ResponseHead,
    SessionTable,
    Terminate,
    Wake,
    Work,
    _Stream,
    wake,
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
#: The reconnection delay (ms) sent in each stream's priming event.
DEFAULT_RETRY: Final = 1000
#: Seconds between the bindings' ``: keep-alive`` comments on open SSE streams.
DEFAULT_KEEPALIVE: Final = 15.0
#: Seconds a binding waits for the bytes of a request (the next one on a kept-alive
#: connection, or more of one begun) before it closes the connection.
DEFAULT_IDLE_TIMEOUT: Final = 60.0

# CR and LF to spaces: a JSON text on one line, of the same size.
_ONE_LINE: Final = bytes.maketrans(b"\r\n", b"  ")
_META: Final = "_meta"
_META_SUBSCRIPTION: Final = "io.modelcontextprotocol/subscriptionId"
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


class HttpServer(SessionTable, AuthHooks):
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
    :param auth: require tokens: a ``ServerAuth`` (see ``docs/auth-server.rst``).
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
        auth: Any = None,  # ServerAuth | None (typed on AuthHooks.auth)
        **session_options: Any,
    ) -> None:
        super().__init__(
            max_sessions=max_sessions, replay_size=replay_size, replay_bytes=replay_bytes
        )
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
        self.retry = retry
        """The reconnection delay (ms) of the priming events."""
        self.json_response = json_response
        """JSON only (``True``), SSE only (``False``) or automatic (``None``)."""
        self.state_keys = secrets.token_bytes(32) if state_keys is None else state_keys
        self.state_clock, self.auth = state_clock, auth  # tokens' times are on this clock too
        # Every body within max_body_size reaches its session as one line of its size: the
        # sessions must read lines that long (413 is the only refusal for size).
        session_options.setdefault("max_message_size", max(max_body_size, DEFAULT_MAX_MESSAGE_SIZE))
        self.session_options = dict(session_options, state_clock=state_clock)
        versions = tuple(session_options.get("versions") or ALL_VERSIONS)
        self.versions = versions
        """The protocol versions served."""
        # The versions whose sessions the server names with an Mcp-Session-Id (one per
        # initialize), and those where every POST is a session of its own.
        self.legacy_versions = tuple(v for v in versions if VERSIONS[v].policy.session_header)
        self.stateless_versions = tuple(
            v for v in versions if not VERSIONS[v].policy.session_header
        )
        # By name: (the tool, its header annotations); only names of registered tools.
        self._param_headers: dict[str, tuple[object, dict[str, str] | None]] = {}

    # ------------------------------------------------------------------ sessions

    def _new_session(self, stateless: bool, principal: Any = None) -> HttpSession:
        options = dict(self.session_options)
        options["versions"] = self.stateless_versions if stateless else self.legacy_versions
        session = ServerSession(self.server, state_keys=self.state_keys, **options)
        hs = HttpSession(self, session, None if stateless else secrets.token_hex(16))
        if principal is not None:
            bind_session(hs, principal)
        return hs

    # ------------------------------------------------------------------ requests

    def begin(
        self, method: str, target: str, headers: Iterable[tuple[bytes | str, bytes | str]]
    ) -> Exchange:
        """A request's head arrived. Returns its :class:`Exchange`; when the head alone
        decides the answer (a wrong path, method, ``Host``, ``Origin``, ``Accept``,
        session…), the response is already queued (:attr:`Exchange.finished`) and the
        body need not be read."""
        ex = Exchange(method.upper(), target, lower_headers(headers))
        h, path, auth = ex.headers, urlsplit(target).path, self.auth
        if path != self.path and (auth is None or path not in auth.resource.metadata_paths):
            ex.respond(404, f"no MCP endpoint at {path}")
            return ex
        problem = origin_problem(h, self.allowed_hosts, self.allowed_origins)
        if problem is not None:
            ex.respond(*problem)
            return ex
        if auth is None or authorize(self, ex, path, auth):
            self._head(ex)  # the token, if any, is checked first
        return ex

    def _head(self, ex: Exchange) -> None:
        if ex.method == "POST":
            self._begin_post(ex)
        elif ex.method in ("GET", "DELETE"):
            self._begin_session_request(ex)
        else:
            ex.respond(405, f"{ex.method} is not allowed", headers=self._allow())

    def _allow(self) -> tuple[tuple[str, str], ...]:
        return (("allow", "GET, POST, DELETE" if self.legacy_versions else "POST"),)

    def _begin_post(self, ex: Exchange) -> None:
        h = ex.headers
        head_problem = post_head_problem(h, self.max_body_size)
        if head_problem is not None:
            ex.respond(*head_problem)
            return
        session_id = h.get(SESSION_ID)
        if session_id is not None and self.legacy_versions:
            hs = self.sessions.get(session_id.strip())
            if hs is None or not same_principal(hs, ex):
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
        if hs is None or not same_principal(hs, ex):
            ex.respond(404, "no such session (it may have expired): initialize again")
            return
        ex.session = hs
        self._used(hs)
        if ex.method == "GET" and not accepts(h.get(ACCEPT, ""), _SSE):
            ex.respond(406, "Accept must list text/event-stream")

    def end(self, ex: Exchange) -> list[Work]:
        """The request's body is complete: decide and start its answer. Returns what the
        binding must do: feed bytes to a session (:class:`Deliver`), stop one
        (:class:`Terminate`)."""
        if ex.finished:
            return []
        if ex.verification is not None:
            return pending(ex) or []
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
            stream, seq = hs.find_event(last.strip())
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
            stateless = session_less(
                ex.headers, first, self.legacy_versions, self.stateless_versions
            )
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
                problem = initialize_problem(message)
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
            hs = self._new_session(stateless, ex.principal)
            if not stateless:
                hs.initializing = first["id"]
                self._remember(hs)
            ex.session = hs
        else:
            problem = version_header_problem(ex.headers, self.legacy_versions)
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
        ex.stream, stream.principal = stream, ex.principal
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

    def _check_stateless_headers(self, ex: Exchange, message: Mapping[str, Any]) -> str | None:
        params = message.get("params")
        tool_headers = None
        if message.get("method") == "tools/call" and isinstance(params, Mapping):
            tool_headers = self._tool_headers(params.get("name"))
        return stateless_header_problem(ex.headers, message, tool_headers)

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
        if not ok:
            # Transports: the server MAY assign a session ID "by including it in an
            # Mcp-Session-Id header on the HTTP response containing the InitializeResult";
            # an error is no InitializeResult: no session.
            self._drop(hs)

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
            and (self.json_response is True or accepts(ex.headers.get(ACCEPT, ""), _JSON))
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


def _status_of(line: bytes) -> int:
    """The HTTP status of a 2026-07-28 answer: from its JSON-RPC error code."""
    if b'"error"' not in line:
        return 200
    error = orjson.loads(line).get("error")
    code = error.get("code") if isinstance(error, dict) else None
    return _STATUS_OF_ERROR.get(code, 200) if isinstance(code, int) else 200
