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
  404 (or another of ``expired_statuses``), the transport opens a new session without the
  session noticing, restores what the old one held and sends again what was refused (see
  :mod:`~mcp_sansio.http._client_reopen`). ``reopen=False`` turns this off (each request the
  404 refused then gets an error).
- :meth:`~HttpClientTransport.close` aborts every stream and, when the server set a
  session id, sends ``DELETE`` with it (any answer, ``405`` included, is fine).
- Authorization (``auth=``, a :class:`~mcp_sansio.auth.ClientAuth`; see
  :mod:`~mcp_sansio.http._client_auth`): the HTTP layer adds its headers to each request
  as it writes it (:meth:`~HttpClientTransport.request_headers`); a 401 or 403 may start a
  flow, whose steps come out as :class:`AuthFetch` and :class:`AuthOpenUrl` actions (the
  answers go back to :meth:`~HttpClientTransport.auth_response`,
  :meth:`~HttpClientTransport.auth_redirect` or :meth:`~HttpClientTransport.auth_failed`),
  and the request held meanwhile is sent again once it is authorized.
- Memory is bounded: a JSON body, an error body and each event are limited to
  ``max_body_size`` bytes (4 MiB by default), counted as they arrive.
- Follow-ups are bounded (see :mod:`~mcp_sansio.http._client_follow_ups`): a POST that owes
  the session no answer (a response to the server's request, a notification) is a
  *follow-up*; at most ``max_follow_ups`` are in flight at once, the others wait in a queue
  bounded by ``max_write_buffer``, past which :attr:`~HttpClientTransport.reading_paused` is
  true. Each follow-up's request carries ``write_timeout`` as its
  :attr:`HttpRequest.timeout`: a follow-up whose response has not ended by then is aborted by
  the binding (:meth:`~HttpClientTransport.response_overdue`) and dropped (the server owed no
  answer), with a :class:`TransportProblem` at debug level.

The transport is built in layers, one concern each: the parts it deals in
(:mod:`~mcp_sansio.http._client_parts`), its state and the POSTs of the session's lines
(:mod:`~mcp_sansio.http._client_base`), expired sessions
(:mod:`~mcp_sansio.http._client_reopen`), and here what the server sends back: responses,
event streams and their resumption, failures.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from typing import Any

import orjson

from .._sse import SseDecoder, SseEvent
from ..auth._challenge import bearer_challenge
from ..auth._errors import AuthError, detail
from ._client_auth import AUTH_STATUSES
from ._client_parts import (
    _DELETE,
    _ERROR,
    _JSON,
    _LISTEN,
    _POST,
    _REOPEN,
    _RESUME,
    _SSE,
    DEFAULT_MAX_BODY_SIZE,
    DEFAULT_MAX_FOLLOW_UPS,
    DEFAULT_MAX_RECONNECTS,
    DEFAULT_RETRY_MS,
    TRANSPORT_ERROR,
    AbortRequest,
    AuthFetch,
    AuthOpenUrl,
    ClientAction,
    HttpRequest,
    ToSession,
    TransportProblem,
    _error_message,
    _Exchange,
    _header_safe,
    _is_id,
    _text,
)
from ._client_reopen import Reopening

__all__ = [
    "AuthFetch",
    "AuthOpenUrl",
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


class HttpClientTransport(Reopening):
    """A Streamable HTTP client transport for one MCP endpoint, sans-IO.

    Every method returns a list of actions, in order: :class:`HttpRequest` (make this
    request), :class:`AbortRequest` (drop that exchange), :class:`ToSession` (bytes for the
    session), :class:`TransportProblem` (log it), and with ``auth`` a flow's steps,
    :class:`AuthFetch` and :class:`AuthOpenUrl`.

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
    :param auth: a :class:`~mcp_sansio.auth.ClientAuth` that authorizes the requests.
    :param url: the MCP server's URL (what ``auth`` is told); required with ``auth``.
    :param clock: the ``now`` of the calls into ``auth`` and its flows (default: a wall
        clock, :func:`time.time`).
    :param open_url: whether the binding carries out :class:`AuthOpenUrl` (has a handler).
    """

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
        # Its headers: for the ClientAuth (every answer, ClientAuth.answered), and a 401's
        # or 403's for its challenge (or the error message)
        challenged = status in AUTH_STATUSES
        seen: list[tuple[str, str]] | None = [] if challenged or self.auth is not None else None
        ex.challenge = seen if challenged else None
        for raw_name, raw_value in headers:
            name = _text(raw_name).lower()
            if seen is not None:
                seen.append((name, _text(raw_value)))
            if name == "content-type":
                content_type = _text(raw_value).split(";", 1)[0].strip().lower()
            elif name == "mcp-session-id":
                session_id = _text(raw_value).strip()
        if seen is not None and self.auth is not None:
            self.auth.answered(status, seen, now=self._clock())
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
        if ex.challenge is not None:
            authorizing = self._challenged(ex)
            if authorizing is not None:  # held for a flow, sent again, or failed
                return self._flush(authorizing)
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

    def close(self) -> list[ClientAction]:
        """Close: abort every exchange and, when the server set a session id, return the
        ``DELETE`` that ends the session (its answer may be fed back or ignored). The
        session's unanswered requests get nothing more from the transport: the session
        ends them itself when its input ends."""
        if self.closed:
            return []
        self.closed = True
        self._close_auth()
        actions: list[ClientAction] = [
            AbortRequest(stream, "the client is closing") for stream in self._exchanges
        ]
        self._exchanges.clear()
        self._owner.clear()
        self._follow.clear()
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
                self._tools.learn(result)
            elif request_id in self._initialize_ids:
                self._initialized(result)
            elif request_id in self._changing:
                self._changed(*self._changing[request_id])
        self._tools_list_ids.discard(request_id)
        self._initialize_ids.discard(request_id)
        self._changing.pop(request_id, None)
        return True

    # ------------------------------------------------------------------ failures

    def _fail_owed(
        self,
        ex: _Exchange,
        message: str,
        status: int,
        out: list[bytes],
        data: Mapping[str, Any] | None = None,
    ) -> None:
        if ex.kind == _REOPEN:
            if ex.owed and ex is self._reopening:
                self._reopen_failed(message, out)
            return
        for request_id in sorted(ex.owed, key=str):
            self._forget(ex, request_id)
            error = _error_message(request_id, TRANSPORT_ERROR, message, status, data)
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
        elif ex.challenge is not None:
            why = f"the server answered HTTP {status}{_challenge_text(ex.challenge)}"
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


def _challenge_text(headers: list[tuple[str, str]]) -> str:
    """What a 401 or 403's ``WWW-Authenticate`` says, for the error of a request that no
    flow answered: the Bearer challenge's ``error`` and ``error_description`` (the server's
    words, cut to a safe length; a challenge holds no token)."""
    values = [value for name, value in headers if name == "www-authenticate"]
    if not values:
        return " without a JSON-RPC error"
    try:
        bearer = bearer_challenge(values)
    except AuthError:
        return " (an invalid WWW-Authenticate)"
    if bearer is None:
        return " (no Bearer challenge)"
    said = bearer.error or "no error code"
    if bearer.error_description:
        said += f": {bearer.error_description}"
    return f" (Bearer challenge: {detail(said)})"
