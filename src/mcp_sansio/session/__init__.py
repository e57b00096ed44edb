"""Sans-IO sessions: everything the adapters share, above the :class:`Connection`.

A session owns a :class:`Connection` and does what every client or server has to do on top
of the bare protocol: open the session (``initialize`` or ``server/discover``, with the
fallback between eras), assign request ids and correlate answers, turn timeouts into
deadlines (the caller passes ``now``; the session never reads the clock), cancel what timed
out, route progress, answer ``ping``, dispatch the peer's requests to handlers, and run the
2026-07-28 ``input_required`` loop.

It still does no I/O: methods return the bytes to write, and
:meth:`SessionBase.receive_data` returns a list of *actions* for the adapter to carry out
(write these bytes, finish this call, run this handler, cancel that job). An adapter for a
new runtime is a loop around those actions; see :mod:`mcp_sansio.blocking`,
:mod:`mcp_sansio.asyncio` and :mod:`mcp_sansio.trio`.
"""

from __future__ import annotations

import enum
import functools
import inspect
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final, Protocol, TypeGuard

import attrs

from .._checks import LOG_RANK
from .._connection import Connection
from .._errors import ErrorCode, LocalProtocolError, RemoteProtocolError, ValidationError
from .._events import (
    ConnectionClosed,
    ErrorResponse,
    InputRequired,
    InvalidMessage,
    Notification,
    Request,
    RequestId,
    Response,
)
from .._request_state import RequestStateSeal
from .._sentinels import NEED_DATA, OMITTED
from .._state import Role, State
from .._version import __version__
from .._versions import Era
from ..server import ToolError
from ._policy import log_handler_error

__all__ = [
    "DEFAULT",
    "DEFAULT_MAX_INPUT_ROUNDS",
    "DEFAULT_MAX_UNREADABLE",
    "DEFAULT_PROBE_TIMEOUT",
    "DEFAULT_TIMEOUT",
    "DefaultType",
    "Action",
    "Call",
    "CallFinished",
    "CallProgress",
    "CancelJob",
    "AsyncContext",
    "ClientSession",
    "ClientView",
    "ContextBase",
    "Closed",
    "ConnectionLost",
    "HandleJob",
    "Job",
    "McpError",
    "NeedInput",
    "Opened",
    "PeerNotification",
    "RequestTimeout",
    "Send",
    "ServerSession",
    "SessionBase",
]

_META_SUBSCRIPTION: Final = "io.modelcontextprotocol/subscriptionId"
_META_LOG_LEVEL: Final = "io.modelcontextprotocol/logLevel"
_META_CAPABILITIES: Final = "io.modelcontextprotocol/clientCapabilities"

#: Default time a request may take, in seconds, before it is cancelled.
DEFAULT_TIMEOUT: Final = 60.0
#: Default hard limit, in seconds, when progress keeps resetting a request's timeout.
DEFAULT_MAX_TIMEOUT: Final = 600.0
#: How long a client that speaks both eras waits for its ``server/discover`` probe.
DEFAULT_PROBE_TIMEOUT: Final = 10.0
#: How many ``input_required`` rounds a client goes through for one call before giving up.
DEFAULT_MAX_INPUT_ROUNDS: Final = 8
#: How many unreadable messages in a row a session takes before it closes the connection as
#: broken: messages that are not JSON (-32700), or JSON that is no JSON-RPC message and has no
#: id to answer (-32600 to a null id). Each is answered as JSON-RPC says until then.
DEFAULT_MAX_UNREADABLE: Final = 256

_UNREADABLE: Final = frozenset({ErrorCode.PARSE_ERROR, ErrorCode.INVALID_REQUEST})


class DefaultType(enum.Enum):
    """The type of :data:`DEFAULT`."""

    DEFAULT = "DEFAULT"


#: "The session's default" (for ``timeout=``).
DEFAULT: Final = DefaultType.DEFAULT


class McpError(Exception):
    """A request failed: the peer answered with an error, or it timed out, or the
    connection went away. Raised by the adapters' calls; handlers may raise it to answer
    with that JSON-RPC error.

    :ivar code: the JSON-RPC error code.
    :ivar message: the error message.
    :ivar data: the error's ``data``, or ``None``.
    """

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(f"{message} (code {code})")
        self.code = code
        self.message = message
        self.data = data


class RequestTimeout(McpError):
    """A request got no answer in time; ``notifications/cancelled`` was sent for it."""

    def __init__(self, message: str = "request timed out") -> None:
        super().__init__(-32001, message)


class ConnectionLost(McpError):
    """The connection closed (or broke) before the request was answered."""

    def __init__(self, message: str = "connection closed before the answer") -> None:
        super().__init__(-32000, message)


class NeedInput(Exception):
    """Raised inside a 2026-07-28 server handler that asked for input it does not have yet;
    the session turns it into an ``input_required`` result. Handlers never catch it.

    :param key: the key of the input request in ``inputRequests``.
    :param request: the input request, ``{"method", "params"}``.
    :param more: other input requests of the same round, by key (a handler that needs
        several answers asks for them all at once).
    """

    def __init__(
        self,
        key: str,
        request: Mapping[str, Any],
        more: Mapping[str, Mapping[str, Any]] | None = None,
    ) -> None:
        super().__init__(key)
        self.key = key
        self.request = request
        self.requests: dict[str, Mapping[str, Any]] = {key: request, **(more or {})}
        """Every input request of the round, by key (``key`` first)."""


class Call:
    """One request of ours in flight, with its deadlines. Adapters keep their waiter (a
    future, an event) in ``waiter``."""

    __slots__ = (
        "deadline",
        "error",
        "hard_deadline",
        "id",
        "method",
        "on_progress",
        "params",
        "reset_on_progress",
        "result",
        "rounds",
        "timeout",
        "waiter",
    )

    def __init__(
        self,
        request_id: RequestId,
        method: str,
        params: dict[str, Any] | None,
        timeout: float | None,
        now: float,
        *,
        reset_on_progress: bool = False,
        max_timeout: float | None = DEFAULT_MAX_TIMEOUT,
        on_progress: Callable[[Mapping[str, Any]], Any] | None = None,
    ) -> None:
        self.id = request_id
        self.method = method
        self.params = params
        self.timeout = timeout
        self.hard_deadline = None if max_timeout is None else now + max_timeout
        self.deadline = None if timeout is None else now + timeout
        if self.hard_deadline is not None:
            self.deadline = min(self.deadline or self.hard_deadline, self.hard_deadline)
        self.reset_on_progress = reset_on_progress
        self.on_progress = on_progress
        self.rounds = 0
        self.result: Any = None
        self.error: Exception | None = None
        """What the call failed with: an :class:`McpError`, or what the caller's own
        ``on_progress`` raised."""
        self.waiter: Any = None

    @property
    def done(self) -> bool:
        """Whether the call has a result or an error."""
        return self.result is not None or self.error is not None

    def outcome(self) -> Any:
        """The result, or raise the error."""
        if self.error is not None:
            raise self.error
        return self.result

    def __repr__(self) -> str:
        return f"<Call {self.method} id={self.id!r}{' done' if self.done else ''}>"


def _is_mapping(value: object) -> TypeGuard[Mapping[str, Any]]:
    """``isinstance(value, Mapping)``, with the common cases (a dict, ``None``) first: an
    ABC check costs more, and this runs for every request."""
    return type(value) is dict or (value is not None and isinstance(value, Mapping))


#: Whether a handler is a coroutine function: asked for every job, and a handler is
#: registered once (``inspect.iscoroutinefunction`` costs about 1 µs a time).
_is_coroutine_function: Final = functools.lru_cache(maxsize=256)(inspect.iscoroutinefunction)


class Job:
    """One piece of work for a handler: a request from the peer, or (2026 client) one
    input request of an ``input_required`` answer. Adapters keep their task in ``task``."""

    __slots__ = (
        "args",
        "asked",
        "call",
        "cancelled",
        "handler",
        "id",
        "inputs",
        "key",
        "meta",
        "method",
        "params",
        "task",
    )

    def __init__(
        self,
        request_id: RequestId | None,
        method: str,
        params: dict[str, Any],
        handler: Callable[..., Any],
        args: tuple[Any, ...],
        *,
        call: Call | None = None,
        key: str | None = None,
    ) -> None:
        self.id = request_id
        self.method = method
        self.params = params
        self.handler = handler
        self.args = args
        self.call = call
        self.key = key
        self.cancelled = False
        self.inputs: dict[str, Any] = {}
        self.asked = 0
        meta = params.get("_meta") if _is_mapping(params) else None
        self.meta: Mapping[str, Any] = meta if _is_mapping(meta) else {}
        self.task: Any = None

    @property
    def is_async(self) -> bool:
        """Whether the handler is a coroutine function (to be awaited)."""
        handler = self.handler
        try:
            return _is_coroutine_function(handler)
        except TypeError:  # an unhashable callable object
            return inspect.iscoroutinefunction(handler)

    def __repr__(self) -> str:
        return f"<Job {self.method} id={self.id!r}>"


@attrs.frozen
class Action:
    """Something the adapter must do, returned by the session."""


@attrs.frozen
class Send(Action):
    """Write these bytes to the peer."""

    data: bytes


@attrs.frozen
class CallFinished(Action):
    """A call of ours is over: wake its waiter (``call.result`` or ``call.error`` is set)."""

    call: Call


@attrs.frozen
class CallProgress(Action):
    """Progress for a call of ours (its ``on_progress`` has already been called)."""

    call: Call
    params: Mapping[str, Any]


@attrs.frozen
class HandleJob(Action):
    """Run ``job.handler(context, *job.args)``, then pass what it returned (or raised) to
    :meth:`SessionBase.finish`."""

    job: Job


@attrs.frozen
class CancelJob(Action):
    """The peer cancelled the request this job serves: stop it (its answer will not be sent)."""

    job: Job


@attrs.frozen
class PeerNotification(Action):
    """A notification from the peer for the application (logs, list changes, updates)."""

    notification: Notification


@attrs.frozen
class Opened(Action):
    """The session is open: ``result`` is the ``initialize`` result (initialize era) or the
    ``server/discover`` result (stateless era; empty when the client did not discover)."""

    result: Mapping[str, Any]


@attrs.frozen
class Closed(Action):
    """The peer closed the connection; calls still in flight have failed."""


def _error_of(exc: BaseException) -> McpError:
    if isinstance(exc, McpError):
        return exc
    return McpError(ErrorCode.INTERNAL_ERROR, f"{type(exc).__name__}: {exc}")


class SessionBase:
    """What clients and servers share: our calls to the peer, and jobs for the peer's requests.

    :param connection: the :class:`Connection` to drive.
    :param timeout: the default timeout of our calls, in seconds (``None``: none).
    :param max_unreadable: how many unreadable messages in a row (not JSON, or not JSON-RPC
        and with no id) the peer may send before the session closes as broken: our calls
        then fail with :class:`ConnectionLost` saying so, and :class:`Closed` is returned.
        Any other message in between starts the count again.
    """

    def __init__(
        self,
        connection: Connection,
        *,
        timeout: float | None = DEFAULT_TIMEOUT,
        max_unreadable: int = DEFAULT_MAX_UNREADABLE,
    ) -> None:
        if max_unreadable < 1:
            raise ValueError(f"max_unreadable must be at least 1, not {max_unreadable!r}")
        self.connection = connection
        """The protocol state machine underneath."""
        self.timeout = timeout
        """The default timeout of our calls, in seconds."""
        self.max_unreadable = max_unreadable
        """How many unreadable messages in a row close the session as broken."""
        self._unreadable = 0
        self._calls: dict[RequestId, Call] = {}
        self._jobs: dict[RequestId, Job] = {}
        self._progress_tokens: dict[Any, Call] = {}
        self._closed = False
        self.broadcast: Callable[[Callable[[ServerSession], bytes]], None] | None = None
        """Set by a transport that serves many sessions at once (Streamable HTTP): handlers'
        resource updates and list changes go to every session through it."""
        self.on_close_stream: Callable[[RequestId], None] | None = None
        """Set by Streamable HTTP: ends the HTTP response carrying a request (see
        :meth:`ContextBase.close_stream`)."""

    # ------------------------------------------------------------------ our calls

    def call(
        self,
        method: str,
        params: Mapping[str, Any] | None = None,
        *,
        now: float,
        timeout: float | DefaultType | None = DEFAULT,
        reset_on_progress: bool = False,
        max_timeout: float | None = DEFAULT_MAX_TIMEOUT,
        on_progress: Callable[[Mapping[str, Any]], Any] | None = None,
    ) -> tuple[Call, bytes]:
        """Start a request: returns the :class:`Call` and the bytes to write.

        With ``on_progress``, a progress token is added and each progress notification is
        passed to it; ``reset_on_progress`` then restarts the timeout on each one, up to
        ``max_timeout`` in all. Raises :class:`LocalProtocolError` when the protocol forbids
        the request now, and :class:`ConnectionLost` after the peer closed.
        """
        if self._closed:
            raise ConnectionLost("the connection is closed")
        conn = self.connection
        request_id = conn.next_request_id()
        body = dict(params) if params else {}
        body = self._decorate(method, body)
        if on_progress is not None:
            meta = dict(body.get("_meta") or {})
            meta.setdefault("progressToken", f"p{request_id}")
            body["_meta"] = meta
        call = Call(
            request_id,
            method,
            body or None,
            self.timeout if timeout is DEFAULT else timeout,
            now,
            reset_on_progress=reset_on_progress,
            max_timeout=max_timeout,
            on_progress=on_progress,
        )
        data = conn.send(Request(id=request_id, method=method, params=call.params))
        self._register(call)
        return call, data

    def _decorate(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Add what this side puts into every request's params (nothing by default)."""
        return params

    def _register(self, call: Call) -> None:
        self._calls[call.id] = call
        params = call.params
        meta = params.get("_meta") if params else None
        if _is_mapping(meta) and "progressToken" in meta:
            self._progress_tokens[meta["progressToken"]] = call

    def _forget(self, call: Call) -> None:
        self._calls.pop(call.id, None)
        params = call.params
        meta = params.get("_meta") if params else None
        if _is_mapping(meta):
            self._progress_tokens.pop(meta.get("progressToken"), None)

    def cancel(self, call: Call, reason: str | None = None) -> bytes:
        """Cancel a call of ours (the caller gave up): returns the ``notifications/cancelled``
        bytes; the call fails with ``error`` set. Cancelling a finished call returns ``b""``."""
        if call.done or call.id not in self._calls:
            return b""
        self._forget(call)
        call.error = McpError(-32800, reason or "request cancelled")
        if call.method == "server/discover" and self.connection.state is State.PROBING:
            self.connection.fall_back_to_initialize()
            return b""
        params: dict[str, Any] = {"requestId": call.id}
        if reason:
            params["reason"] = reason
        try:
            return self.connection.send(
                Notification(method="notifications/cancelled", params=params)
            )
        except LocalProtocolError:
            return b""

    def next_deadline(self) -> float | None:
        """The earliest time at which :meth:`expire` has something to do, or ``None``."""
        earliest = None
        for call in self._calls.values():
            deadline = call.deadline
            if deadline is not None and (earliest is None or deadline < earliest):
                earliest = deadline
        return earliest

    def expire(self, now: float) -> list[Action]:
        """Fail the calls whose deadline has passed (sending their cancellation)."""
        actions: list[Action] = []
        due = [c for c in self._calls.values() if c.deadline is not None and c.deadline <= now]
        for call in due:
            if call.done:  # finished by another path: nothing is due
                self._forget(call)
                continue
            data = self.cancel(call, "timed out")
            call.error = RequestTimeout(f"{call.method} timed out after {call.timeout} s")
            if data:
                actions.append(Send(data))
            actions.extend(self._after_timeout(call))
            actions.append(CallFinished(call))
        return actions

    def _after_timeout(self, call: Call) -> list[Action]:
        return []

    # ------------------------------------------------------------------ receiving

    def receive_data(self, data: bytes, now: float) -> list[Action]:
        """Feed bytes from the peer (``b""``: it closed) and return what to do."""
        conn = self.connection
        actions: list[Action] = []
        if self._closed:
            return actions
        conn.receive_data(data)
        while True:
            try:
                event = conn.next_event()
            except RemoteProtocolError as exc:
                # The session cannot go on: everything in flight fails with the reason.
                actions.extend(self._on_closed(exc.message))
                return actions
            if event is NEED_DATA:
                return actions
            if isinstance(event, ConnectionClosed):
                actions.extend(self._on_closed())
                return actions
            cls = type(event)
            if cls is InvalidMessage:
                actions.extend(self._on_invalid(event))  # type: ignore[arg-type]
                if self._closed:
                    return actions
                continue
            self._unreadable = 0
            if cls is Response or cls is ErrorResponse or cls is InputRequired:
                call = self._calls.get(event.id)  # type: ignore[attr-defined]
                if call is not None:
                    actions.extend(self._on_answer(call, event, now))  # type: ignore[arg-type]
                elif cls is ErrorResponse and event.id is None:  # type: ignore[attr-defined]
                    pass  # the peer could not read something we sent; nothing to finish
            elif cls is Request:
                actions.extend(self._on_request(event, now))  # type: ignore[arg-type]
            elif cls is Notification:
                actions.extend(self._on_notification(event, now))  # type: ignore[arg-type]

    def _on_invalid(self, event: InvalidMessage) -> list[Action]:
        actions: list[Action] = []
        # Unreadable: what the decoder could not take as a JSON-RPC message (it keeps the
        # line, in raw), or what is answered to null. A valid message the protocol's state
        # refuses (progress for a finished request, say) has neither: it is readable.
        if (
            event.code in _UNREADABLE
            and event.id is None
            and (event.reply is not None or bool(event.raw))
        ):
            self._unreadable += 1
            if self._unreadable >= self.max_unreadable:
                shown = event.raw[:60].decode("utf-8", "replace")
                peer = "server" if self.connection.role is Role.CLIENT else "client"
                return self._on_closed(
                    f"the {peer} sent {self._unreadable} unreadable"
                    f" message{'' if self._unreadable == 1 else 's'} in a row (the last:"
                    f" {shown!r}: {event.message}); the connection is closed as broken"
                )
        else:
            self._unreadable = 0
        if event.reply is not None:
            actions.append(Send(self.connection.send(event.reply)))
        if event.id is not None and event.reply is None:
            call = self._calls.get(event.id)
            if call is not None:  # a malformed answer to our call
                self._forget(call)
                call.error = McpError(event.code, event.message)
                actions.append(CallFinished(call))
        return actions

    def _on_closed(self, reason: str | None = None) -> list[Action]:
        """The peer closed (or broke the session): our calls fail. The peer's requests in
        hand are *not* cancelled: half-closed is not closed, and their answers can still go
        out (a stdio server's stdout stays open after its stdin ends)."""
        if self._closed:
            return []
        self._closed = True
        actions: list[Action] = []
        for call in list(self._calls.values()):
            self._forget(call)
            call.error = ConnectionLost(reason or "connection closed before the answer")
            actions.append(CallFinished(call))
        actions.append(Closed())
        return actions

    def _on_answer(
        self, call: Call, event: Response | ErrorResponse | InputRequired, now: float
    ) -> list[Action]:
        self._forget(call)
        if type(event) is ErrorResponse:
            call.error = McpError(event.code, event.message, _data(event))
        else:
            call.result = event.result  # type: ignore[union-attr]
        return [CallFinished(call)]

    def _on_notification(self, note: Notification, now: float) -> list[Action]:
        if note.method == "notifications/progress":
            params = note.params or {}
            call = self._progress_tokens.get(params.get("progressToken"))
            if call is not None:
                if call.reset_on_progress and call.timeout is not None:
                    deadline = now + call.timeout
                    if call.hard_deadline is not None:
                        deadline = min(deadline, call.hard_deadline)
                    call.deadline = deadline
                if call.on_progress is not None:
                    try:
                        call.on_progress(params)
                    except Exception as exc:
                        # The caller's own callback failed: the call ends with that very
                        # exception (not an McpError: the peer did nothing wrong), and the
                        # request is cancelled at the peer, as a timeout cancels it.
                        data = self.cancel(
                            call, f"the progress callback raised {type(exc).__name__}"
                        )
                        call.error = exc
                        return ([Send(data)] if data else []) + [CallFinished(call)]
                return [CallProgress(call, params)]
            return []
        if note.method == "notifications/cancelled":
            params = note.params or {}
            job = self._jobs.pop(params.get("requestId"), None)  # type: ignore[arg-type]
            if job is not None:
                job.cancelled = True
                return [CancelJob(job)]
            return self._on_other_cancel(params)
        return [PeerNotification(note)]

    def _on_other_cancel(self, params: Mapping[str, Any]) -> list[Action]:
        return []

    def _on_request(self, request: Request, now: float) -> list[Action]:
        if request.method == "ping":
            return [Send(self.connection.send(Response(id=request.id, result={})))]
        return self._dispatch(request, now)

    def _dispatch(self, request: Request, now: float) -> list[Action]:
        return [
            self._error(request.id, ErrorCode.METHOD_NOT_FOUND, f"no handler for {request.method}")
        ]

    def _error(self, request_id: RequestId, code: int, message: str, data: Any = None) -> Send:
        event = (
            ErrorResponse(id=request_id, code=code, message=message)
            if data is None
            else ErrorResponse(id=request_id, code=code, message=message, data=data)
        )
        return Send(self.connection.send(event))

    # ------------------------------------------------------------------ jobs

    def _start_job(self, job: Job) -> HandleJob:
        if job.id is not None:
            self._jobs[job.id] = job
        return HandleJob(job)

    def finish(
        self,
        job: Job,
        value: Any = None,
        error: BaseException | None = None,
        now: float | None = None,
    ) -> bytes:
        """The handler of ``job`` returned ``value`` (or raised ``error``): returns the bytes
        of the answer (``b""`` when there is nothing to send, such as a cancelled job)."""
        if job.id is not None:
            self._jobs.pop(job.id, None)
        if job.cancelled:
            return b""
        assert job.id is not None
        if error is not None:
            if isinstance(error, Exception) and not isinstance(
                error, (McpError, NeedInput, ToolError)
            ):
                log_handler_error(job.method, error)
            handled = self._result_of_error(job, error)
            if handled is not None:
                return self.connection.send(Response(id=job.id, result=handled))
            mcp_error = _error_of(error)
            event: Response | ErrorResponse = (
                ErrorResponse(id=job.id, code=mcp_error.code, message=mcp_error.message)
                if mcp_error.data is None
                else ErrorResponse(
                    id=job.id, code=mcp_error.code, message=mcp_error.message, data=mcp_error.data
                )
            )
        else:
            try:
                event = Response(id=job.id, result=self._result_of(job, value))
            except Exception as exc:  # a handler returned something that is no result
                event = ErrorResponse(
                    id=job.id,
                    code=ErrorCode.INTERNAL_ERROR,
                    message=f"the handler returned {type(value).__name__}, not a result: {exc}",
                )
        try:
            return self.connection.send(event)
        except LocalProtocolError as exc:
            fallback = ErrorResponse(id=job.id, code=ErrorCode.INTERNAL_ERROR, message=exc.message)
            try:
                return self.connection.send(fallback)
            except LocalProtocolError:  # the connection is in its error state
                return b""

    def _result_of(self, job: Job, value: Any) -> Any:
        return {} if value is None else value

    def _result_of_error(self, job: Job, error: BaseException) -> Any:
        """A result that answers a handler's exception, or ``None`` for an error response."""
        return None

    def notify(self, method: str, params: Mapping[str, Any] | None = None) -> bytes:
        """The bytes of a notification (checked by the connection like everything else)."""
        return self.connection.send(
            Notification(method=method, params=dict(params) if params else None)
        )

    @property
    def jobs(self) -> tuple[Job, ...]:
        """The peer's requests being handled now."""
        return tuple(self._jobs.values())

    @property
    def calls(self) -> tuple[Call, ...]:
        """Our calls in flight."""
        return tuple(self._calls.values())

    @property
    def closed(self) -> bool:
        """Whether the peer has closed the connection."""
        return self._closed


def _data(event: ErrorResponse) -> Any:
    return None if event.data is OMITTED else event.data


# ---------------------------------------------------------------------- client

_CLIENT_HANDLER_METHODS: Final = {
    "sampling/createMessage": "sampling",
    "elicitation/create": "elicitation",
    "roots/list": "roots",
}


class ClientSession(SessionBase):
    """The client side: opening, calls, handlers for the server's requests and, in
    2026-07-28, the ``input_required`` loop (the same handlers answer ``inputRequests``).

    :param versions: the protocol versions to speak (default: all; both eras means a
        ``server/discover`` probe with a fallback to ``initialize``).
    :param handlers: functions for the server's requests, by method:
        ``"sampling/createMessage"``, ``"elicitation/create"``, ``"roots/list"``. Each is
        called as ``handler(context, params)`` and returns the result object. The client's
        capabilities are declared from them (override with ``capabilities=``).
    :param client_info: ``{"name", "version", ...}`` of this client.
    :param max_input_rounds: how many ``input_required`` rounds one call may take.
    :param log_level: 2026-07-28: the ``logLevel`` to put in each request's ``_meta``.
    :param max_unreadable: as for :class:`SessionBase`.
    """

    def __init__(
        self,
        *,
        versions: Iterable[str] | None = None,
        handlers: Mapping[str, Callable[..., Any]] | None = None,
        capabilities: Mapping[str, Any] | None = None,
        client_info: Mapping[str, Any] | None = None,
        timeout: float | None = DEFAULT_TIMEOUT,
        probe_timeout: float = DEFAULT_PROBE_TIMEOUT,
        max_input_rounds: int = DEFAULT_MAX_INPUT_ROUNDS,
        log_level: str | None = None,
        max_unreadable: int = DEFAULT_MAX_UNREADABLE,
        **config: Any,
    ) -> None:
        self.handlers: dict[str, Callable[..., Any]] = dict(handlers or {})
        """The handlers of the server's requests, by method."""
        for method in self.handlers:
            if method not in _CLIENT_HANDLER_METHODS:
                raise ValueError(f"no client handler can be registered for {method!r}")
        if capabilities is None:
            capabilities = {
                name: {} for m, name in _CLIENT_HANDLER_METHODS.items() if m in self.handlers
            }
        info = dict(client_info or {"name": "mcp-sansio", "version": __version__})
        if versions is not None:
            config["versions"] = list(versions)
        conn = Connection(Role.CLIENT, capabilities=capabilities, implementation=info, **config)
        super().__init__(conn, timeout=timeout, max_unreadable=max_unreadable)
        self.probe_timeout = probe_timeout
        """How long the ``server/discover`` probe may take before falling back."""
        self.max_input_rounds = max_input_rounds
        """The bound on ``input_required`` rounds for one call."""
        self.opening: Call | None = None
        """The opening call (``server/discover`` or ``initialize``) while it is in flight."""
        self.server_info: Mapping[str, Any] | None = None
        """The server's ``serverInfo`` once open."""
        self.instructions: str | None = None
        """The server's instructions, if any, once open."""
        self._opened = False
        self._rediscovered = False
        self.log_level: str | None = log_level
        """2026-07-28: the ``logLevel`` put into each request's ``_meta`` (the server sends
        log messages for a request only when it has one); ``None`` for none."""
        # 2026: calls waiting for their input handlers: id -> (the input_required answer,
        # the answers so far, the call). At most one per call of ours (each round replaces
        # the last), each holding one message of the peer (at most max_message_size).
        self._input: dict[RequestId, tuple[InputRequired, dict[str, Any], Call]] = {}
        self._finished: list[Call] = []

    @property
    def is_open(self) -> bool:
        """Whether the session is open (handshake or probe done)."""
        return self._opened

    def open(self, now: float) -> list[Action]:
        """Start the session: the probe or the ``initialize`` request (as a :class:`Send`).
        When the opening completes, :meth:`SessionBase.receive_data` returns :class:`Opened`."""
        conn = self.connection
        if (
            conn.era is Era.STATELESS
            and "2026-07-28" in conn.config.versions
            and conn.config.eras == {Era.STATELESS}
        ):
            # A stateless-only client needs no handshake; it may still discover. This is no
            # probe (there is no other era to fall back to): the usual timeout applies.
            call, data = self.call("server/discover", now=now)
        elif conn.era is None:
            call, data = self.call("server/discover", now=now, timeout=self.probe_timeout)
        else:
            call, data = self._initialize(now)
        self.opening = call
        return [Send(data)]

    def logging_request(self, level: str) -> tuple[str, dict[str, Any]] | None:
        """Set the level of the server's log messages: the ``logging/setLevel`` request to
        send (initialize era), or ``None`` in 2026-07-28, where the level is remembered and
        sent in every later request's ``_meta``."""
        if self.connection.policy.log_level_in_meta:
            self.log_level = level
            return None
        return "logging/setLevel", {"level": level}

    def _decorate(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        if self.log_level is not None and self.connection.policy.log_level_in_meta:
            meta = dict(params.get("_meta") or {})
            meta.setdefault(_META_LOG_LEVEL, self.log_level)
            params["_meta"] = meta
        return params

    def _initialize(self, now: float) -> tuple[Call, bytes]:
        conn = self.connection
        version = conn.config.versions_of(Era.INITIALIZE)[0]
        return self.call(
            "initialize",
            {
                "protocolVersion": version,
                "capabilities": dict(conn.config.capabilities),
                "clientInfo": dict(conn.config.implementation),
            },
            now=now,
        )

    def _on_answer(
        self, call: Call, event: Response | ErrorResponse | InputRequired, now: float
    ) -> list[Action]:
        if call is self.opening:
            return self._opening_answer(call, event, now)
        if type(event) is InputRequired:
            return self._input_required(call, event, now)
        return super()._on_answer(call, event, now)

    def _opening_answer(
        self, call: Call, event: Response | ErrorResponse | InputRequired, now: float
    ) -> list[Action]:
        self._forget(call)
        conn = self.connection
        if call.method == "server/discover" and conn.era is Era.INITIALIZE:
            # The probe failed: this server speaks the initialize era.
            new_call, data = self._initialize(now)
            self.opening = new_call
            return [Send(data)]
        if type(event) is ErrorResponse:
            if (
                call.method == "server/discover"
                and conn.state is State.STATELESS
                and event.code == ErrorCode.UNSUPPORTED_PROTOCOL_VERSION
                and not self._rediscovered
            ):
                # -32022 named versions we speak: the connection switched; discover again,
                # once (a server that keeps refusing fails the opening).
                self._rediscovered = True
                new_call, data = self.call("server/discover", now=now, timeout=self.probe_timeout)
                self.opening = new_call
                return [Send(data)]
            self.opening = None
            call.error = McpError(event.code, event.message, _data(event))
            return [CallFinished(call)]
        result = event.result  # type: ignore[union-attr]
        call.result = result
        self.opening = None
        self._opened = True
        actions: list[Action] = []
        if call.method == "initialize":
            self.server_info = result.get("serverInfo")
            actions.append(Send(conn.send(Notification(method="notifications/initialized"))))
        else:
            meta = result.get("_meta") or {}
            self.server_info = meta.get("io.modelcontextprotocol/serverInfo")
        instructions = result.get("instructions")
        self.instructions = instructions if isinstance(instructions, str) else None
        actions += [Opened(result), CallFinished(call)]
        return actions

    def _after_timeout(self, call: Call) -> list[Action]:
        if (
            call is self.opening
            and call.method == "server/discover"
            and self.connection.config.versions_of(Era.INITIALIZE)
        ):
            # The probe timed out: fall back to initialize (cancel() did the switch). A
            # client of 2026-07-28 alone has nothing to fall back to: its opening fails.
            call.error = None
            new_call, data = self._initialize(call.deadline or 0.0)
            self.opening = new_call
            return [Send(data)]
        return []

    def expire(self, now: float) -> list[Action]:
        actions = super().expire(now)
        # A probe that fell back is not finished for the caller: the opening goes on.
        return [
            a
            for a in actions
            if not (isinstance(a, CallFinished) and a.call.error is None and a.call.result is None)
        ]

    def _input_required(self, call: Call, event: InputRequired, now: float) -> list[Action]:
        """2026-07-28: run the handlers for each input request, then retry (see
        :meth:`finish`); a bare ``requestState`` is retried at once. While the handlers
        run, the call has no deadline (a person may be answering)."""
        self._forget(call)  # registered again under the retry's id
        call.rounds += 1
        if call.rounds > self.max_input_rounds:
            call.error = McpError(
                ErrorCode.INTERNAL_ERROR, f"more than {self.max_input_rounds} input_required rounds"
            )
            return [CallFinished(call)]
        requests = event.input_requests
        self._input[call.id] = (event, {}, call)
        if not requests:
            return [self._retry(call, now)]
        jobs: list[Action] = []
        for key, item in requests.items():
            method = item.get("method") if isinstance(item, Mapping) else None
            handler = self.handlers.get(method) if isinstance(method, str) else None
            if handler is None or not isinstance(method, str):
                del self._input[call.id]
                call.error = McpError(
                    ErrorCode.METHOD_NOT_FOUND, f"no handler for the input request {method!r}"
                )
                return [CallFinished(call)]
            params = item.get("params") or {}
            jobs.append(
                HandleJob(Job(None, method, params, handler, (params,), call=call, key=key))
            )
        return jobs

    def cancel(self, call: Call, reason: str | None = None) -> bytes:
        """As :meth:`SessionBase.cancel`; a call waiting for its input handlers (2026) is
        simply dropped (nothing of it is in flight)."""
        if self._input.pop(call.id, None) is not None and not call.done:
            call.error = McpError(-32800, reason or "request cancelled")
            return b""
        return super().cancel(call, reason)

    def _on_closed(self, reason: str | None = None) -> list[Action]:
        """As for :class:`SessionBase`; the calls waiting for their input handlers (2026)
        fail too (their retry could never go out), and are forgotten."""
        if self._closed:
            return []
        waiting, self._input = self._input, {}
        actions = super()._on_closed(reason)
        closed = actions.pop()  # Closed() comes last
        for _, _, call in waiting.values():
            if not call.done:
                call.error = ConnectionLost(reason or "connection closed before the answer")
                actions.append(CallFinished(call))
        actions.append(closed)
        return actions

    def _retry(self, call: Call, now: float | None) -> Send:
        event, responses, _ = self._input.pop(call.id)
        retry = self.connection.retry_request(event, responses)
        data = self.connection.send(retry)
        # The call goes on under the retry's id, with its deadline restarted.
        call.id = retry.id
        call.params = retry.params
        if call.timeout is not None and now is not None:
            call.deadline = now + call.timeout
        self._register(call)
        return Send(data)

    def finish(
        self,
        job: Job,
        value: Any = None,
        error: BaseException | None = None,
        now: float | None = None,
    ) -> bytes:
        """As :meth:`SessionBase.finish`; for an input request of a 2026-07-28 call, the
        answer is collected, and the retry goes out once every input is answered (its
        timeout restarts at ``now`` when given)."""
        if job.key is None:
            return super().finish(job, value, error, now)
        call = job.call
        assert call is not None
        pending = self._input.get(call.id)
        if pending is None or call.done:
            return b""
        event, responses, _ = pending
        if error is not None:
            del self._input[call.id]
            call.error = _error_of(error)
            self._finished.append(call)
            return b""
        responses[job.key] = {} if value is None else value
        if len(responses) < len(event.input_requests):
            return b""
        return self._retry(call, now).data

    def take_finished(self) -> list[Call]:
        """Calls that :meth:`finish` ended (an input handler failed); wake their waiters."""
        finished, self._finished = self._finished, []
        return finished

    def _dispatch(self, request: Request, now: float) -> list[Action]:
        handler = self.handlers.get(request.method)
        if handler is None:
            return [
                self._error(
                    request.id, ErrorCode.METHOD_NOT_FOUND, f"this client has no {request.method}"
                )
            ]
        params = request.params or {}
        return [self._start_job(Job(request.id, request.method, params, handler, (params,)))]


# ---------------------------------------------------------------------- server

_ASK_CAPABILITY: Final = {
    "elicitation/create": "elicitation",
    "sampling/createMessage": "sampling",
    "roots/list": "roots",
}
_LISTEN_FLAGS: Final = {
    "toolsListChanged": ("tools", "notifications/tools/list_changed"),
    "promptsListChanged": ("prompts", "notifications/prompts/list_changed"),
    "resourcesListChanged": ("resources", "notifications/resources/list_changed"),
}
_CACHED: Final = frozenset(
    {"tools/list", "prompts/list", "resources/list", "resources/templates/list", "resources/read"}
)


class ServerSession(SessionBase):
    """The server side, for a :class:`~mcp_sansio.server.Server` registry.

    Answers by itself what needs no application code: ``initialize`` (version negotiation),
    ``server/discover``, ``ping``, ``logging/setLevel``, resource subscriptions and 2026
    listen streams, and the four list methods. ``tools/call``, ``prompts/get``,
    ``resources/read`` and ``completion/complete`` become :class:`HandleJob` actions.

    Handlers ask the client for input through their context (:meth:`ask`): a server→client
    request in the initialize era, an ``input_required`` round trip in 2026-07-28 (the
    handler runs again on the retry, and finds the answers it asked for). The same handler
    code serves both eras. ``requestState`` is sealed with :class:`RequestStateSeal`.

    :param server: the registry.
    :param state_keys: keys for sealing ``requestState`` (default: a random key per
        session, so a state is only good on the process that sealed it).
    :param state_ttl: how long a sealed ``requestState`` stays good, in seconds.
    :param state_clock: the one clock that both seals and opens ``requestState`` (default:
        the ``now`` the adapter passes, a monotonic clock of this process). Processes that
        share ``state_keys`` need a clock they share: ``time.time``. A state is at most half
        of ``max_message_size`` long (so that a retry has room for its answers); answers
        that would make it longer, or that nest too deeply to seal, get -32602 (see
        :class:`RequestStateSeal`).
    :param max_unreadable: as for :class:`SessionBase`.
    """

    def __init__(
        self,
        server: Any,
        *,
        versions: Iterable[str] | None = None,
        timeout: float | None = DEFAULT_TIMEOUT,
        state_keys: bytes | list[bytes] | None = None,
        state_ttl: float = 600.0,
        state_clock: Callable[[], float] | None = None,
        max_unreadable: int = DEFAULT_MAX_UNREADABLE,
        **config: Any,
    ) -> None:
        if versions is not None:
            config["versions"] = list(versions)
        conn = Connection(
            Role.SERVER, capabilities=server.capabilities, implementation=server.info, **config
        )
        super().__init__(conn, timeout=timeout, max_unreadable=max_unreadable)
        self.server = server
        """The registry this session serves."""
        if state_keys is None:
            import secrets

            state_keys = secrets.token_bytes(32)
        self._seal = RequestStateSeal(
            state_keys,
            ttl=state_ttl,
            max_length=max(1, self.connection.config.max_message_size // 2),
        )
        self._state_clock = state_clock
        self._sealed = ""  # finish() → _result_of_error(): the state of an input_required
        self._log_level: str | None = None
        # The peer's subscriptions: bounded by the connection, which refuses a subscribe
        # past max_subscriptions or max_subscription_bytes before it gets here.
        self._subscribed: set[str] = set()
        # 2026 listen streams: request id → (notification methods, resource URIs); each is
        # a request in flight, within max_in_flight and max_in_flight_bytes.
        self._listens: dict[RequestId, tuple[frozenset[str], frozenset[str]]] = {}
        # and by URI, the streams that asked for it (resource_updated() looks up, no scan)
        self._listeners: dict[str, dict[RequestId, None]] = {}

    # ------------------------------------------------------------------ dispatch

    def _dispatch(self, request: Request, now: float) -> list[Action]:
        method = request.method
        params = request.params or {}
        server = self.server
        if method == "initialize":
            return [self._answer(request, self._initialize_result(params))]
        if method == "server/discover":
            return [
                self._answer(
                    request, self.connection.discover_result(instructions=server.instructions)
                )
            ]
        if method == "logging/setLevel":
            self._log_level = params["level"]
            return [self._answer(request, {})]
        if method == "resources/subscribe":
            self._subscribed.add(params["uri"])
            return [self._answer(request, {})]
        if method == "resources/unsubscribe":
            self._subscribed.discard(params["uri"])
            return [self._answer(request, {})]
        if method == "subscriptions/listen":
            return [Send(self._acknowledge(request))]
        if method == "tools/list":
            return [
                self._answer(request, {"tools": [t.declaration() for t in server.tools.values()]})
            ]
        if method == "prompts/list":
            return [
                self._answer(
                    request, {"prompts": [p.declaration() for p in server.prompts.values()]}
                )
            ]
        if method == "resources/list":
            return [
                self._answer(
                    request, {"resources": [r.declaration() for r in server.resources.values()]}
                )
            ]
        if method == "resources/templates/list":
            return [
                self._answer(
                    request, {"resourceTemplates": [t.declaration() for t in server.templates]}
                )
            ]
        job = self._job_for(request, params)
        if isinstance(job, Send):
            return [job]
        if not self.connection.policy.server_requests and method in (
            "tools/call",
            "prompts/get",
            "resources/read",
        ):
            try:
                self._restore_inputs(job, now)
            except ValidationError as exc:
                return [self._error(request.id, ErrorCode.INVALID_PARAMS, str(exc))]
        return [self._start_job(job)]

    def _job_for(self, request: Request, params: dict[str, Any]) -> Job | Send:
        method = request.method
        server = self.server
        if method == "tools/call":
            tool = server.tools.get(params.get("name"))
            if tool is None:
                return self._error(
                    request.id, ErrorCode.INVALID_PARAMS, f"Unknown tool: {params.get('name')!r}"
                )
            arguments = params.get("arguments") or {}
            return Job(request.id, method, params, tool.handler, (arguments,))
        if method == "prompts/get":
            prompt = server.prompts.get(params.get("name"))
            if prompt is None:
                return self._error(
                    request.id, ErrorCode.INVALID_PARAMS, f"Unknown prompt: {params.get('name')!r}"
                )
            return Job(request.id, method, params, prompt.handler, (params.get("arguments") or {},))
        if method == "resources/read":
            uri = params.get("uri")
            found = server.find_resource(uri) if isinstance(uri, str) else None
            if found is None:
                code = self.connection_spec_resource_not_found()
                return self._error(request.id, code, f"Resource not found: {uri!r}", {"uri": uri})
            handler, args, _ = found
            return Job(request.id, method, params, handler, args)
        if method == "completion/complete" and server.completer is not None:
            ref = params.get("ref") or {}
            argument = params.get("argument") or {}
            context = (params.get("context") or {}).get("arguments") or {}
            return Job(request.id, method, params, server.completer, (ref, argument, context))
        return self._error(request.id, ErrorCode.METHOD_NOT_FOUND, f"Method not found: {method}")

    def connection_spec_resource_not_found(self) -> int:
        """The error code for an unknown resource in the negotiated version."""
        spec = self.connection.spec
        return spec.resource_not_found if spec is not None else -32002

    def _answer(self, request: Request, result: dict[str, Any]) -> Send:
        if self.connection.policy.cache_hints and request.method in _CACHED:
            result.setdefault("ttlMs", 0)
            result.setdefault(
                "cacheScope", "public" if request.method != "resources/read" else "private"
            )
        return Send(self.connection.send(Response(id=request.id, result=result)))

    def _initialize_result(self, params: Mapping[str, Any]) -> dict[str, Any]:
        requested = params.get("protocolVersion")
        legacy = self.connection.config.versions_of(Era.INITIALIZE)
        version = requested if requested in legacy else legacy[0]
        result: dict[str, Any] = {
            "protocolVersion": version,
            "capabilities": dict(self.server.capabilities),
            "serverInfo": dict(self.server.info),
        }
        if self.server.instructions is not None:
            result["instructions"] = self.server.instructions
        return result

    def _acknowledge(self, request: Request) -> bytes:
        wanted = (request.params or {}).get("notifications") or {}
        caps = self.server.capabilities
        granted: dict[str, Any] = {}
        methods: set[str] = set()
        for flag, (capability, method) in _LISTEN_FLAGS.items():
            if wanted.get(flag) and caps.get(capability, {}).get("listChanged"):
                granted[flag] = True
                methods.add(method)
        uris: frozenset[str] = frozenset()
        if wanted.get("resourceSubscriptions") and caps.get("resources", {}).get("subscribe"):
            uris = frozenset(wanted["resourceSubscriptions"])
            granted["resourceSubscriptions"] = sorted(uris)
        self._drop_listen(request.id)  # (an id of an ended stream may come again)
        self._listens[request.id] = (frozenset(methods), uris)
        for uri in uris:
            self._listeners.setdefault(uri, {})[request.id] = None
        return self.notify(
            "notifications/subscriptions/acknowledged",
            {"notifications": granted, "_meta": {_META_SUBSCRIPTION: request.id}},
        )

    def _on_other_cancel(self, params: Mapping[str, Any]) -> list[Action]:
        self._drop_listen(params.get("requestId"))
        return []

    def _drop_listen(self, listen_id: Any) -> bool:
        """Forget a listen stream (``False`` when there is none by that id)."""
        listen = self._listens.pop(listen_id, None)
        if listen is None:
            return False
        for uri in listen[1]:
            listeners = self._listeners[uri]
            del listeners[listen_id]
            if not listeners:
                del self._listeners[uri]
        return True

    def end_listen(self, listen_id: RequestId) -> bytes:
        """End a 2026 listen stream gracefully: its final response."""
        if not self._drop_listen(listen_id):
            return b""
        return self.connection.send(
            Response(
                id=listen_id,
                result={"resultType": "complete", "_meta": {_META_SUBSCRIPTION: listen_id}},
            )
        )

    # ------------------------------------------------------------------ results

    def _result_of(self, job: Job, value: Any) -> Any:
        method = job.method
        if method == "tools/call":
            if isinstance(value, str):
                return {"content": [{"type": "text", "text": value}]}
            if isinstance(value, list):
                return {"content": value}
            return {"content": []} if value is None else value
        if method == "prompts/get":
            return {"messages": value} if isinstance(value, list) else value
        if method == "resources/read":
            result = self._read_result(job, value)
            if self.connection.policy.cache_hints:
                result.setdefault("ttlMs", 0)
                result.setdefault("cacheScope", "private")
            return result
        if method == "completion/complete" and isinstance(value, list):
            values = [str(v) for v in value]
            return {
                "completion": {
                    "values": values[:100],
                    "total": len(values),
                    "hasMore": len(values) > 100,
                }
            }
        return {} if value is None else value

    def _read_result(self, job: Job, value: Any) -> dict[str, Any]:
        uri = job.params.get("uri")
        mime: dict[str, Any] = {}
        found = self.server.find_resource(uri) if isinstance(uri, str) else None
        if found is not None and found[2]:
            mime["mimeType"] = found[2]
        if isinstance(value, str):
            return {"contents": [{"uri": uri, **mime, "text": value}]}
        if isinstance(value, (bytes, bytearray)):
            import base64

            return {
                "contents": [{"uri": uri, **mime, "blob": base64.b64encode(value).decode("ascii")}]
            }
        if isinstance(value, list):
            return {"contents": value}
        return dict(value)

    def _result_of_error(self, job: Job, error: BaseException) -> Any:
        if isinstance(error, NeedInput):
            state, self._sealed = self._sealed, ""
            return {
                "resultType": "input_required",
                "inputRequests": {key: dict(item) for key, item in error.requests.items()},
                "requestState": state,
            }
        if job.method == "tools/call" and not isinstance(error, McpError):
            return {
                "content": [{"type": "text", "text": str(error) or type(error).__name__}],
                "isError": True,
            }
        return None

    def finish(
        self,
        job: Job,
        value: Any = None,
        error: BaseException | None = None,
        now: float | None = None,
    ) -> bytes:
        """As :meth:`SessionBase.finish`; a handler that needs input (2026-07-28) gets its
        ``input_required`` result, its ``requestState`` sealed at the ``state_clock``'s time
        (or ``now``), or -32602 when the answers cannot be sealed (too large, too deep)."""
        if isinstance(error, NeedInput) and not job.cancelled:
            try:
                self._sealed = self._seal.seal(
                    job.inputs, method=job.method, params=job.params, now=self._state_now(now)
                )
            except ValidationError as exc:
                error = McpError(ErrorCode.INVALID_PARAMS, str(exc))
        return super().finish(job, value, error, now)

    #: The latest ``now`` an adapter passed (for :meth:`finish` called without one).
    _now: float = 0.0

    def _state_now(self, now: float | None) -> float:
        """The time on the ``requestState`` clock, the one clock that seals and opens
        states: ``state_clock`` when given (the wall clock, where several processes share
        the keys), otherwise the adapter's ``now`` (or the latest one, when ``None``)."""
        if self._state_clock is not None:
            return self._state_clock()
        if now is not None:
            self._now = now
        return self._now

    def _restore_inputs(self, job: Job, now: float) -> None:
        params = job.params
        state = params.get("requestState")
        inputs: dict[str, Any] = {}
        if state is not None:
            opened = self._seal.open(
                state, method=job.method, params=params, now=self._state_now(now)
            )
            if isinstance(opened, dict):
                inputs.update(opened)
        responses = params.get("inputResponses")
        if _is_mapping(responses):
            inputs.update(responses)
        job.inputs = inputs

    # ------------------------------------------------------------------ for handlers

    def ask(
        self,
        job: Job,
        method: str,
        params: Mapping[str, Any],
        now: float,
        timeout: float | None = None,
    ) -> tuple[Call | None, bytes, Any]:
        """A handler asks the client (``elicitation/create``, ``sampling/createMessage``,
        ``roots/list``). Returns ``(call, bytes, None)`` in the initialize era (write the
        bytes, wait for the call; it has ``timeout``, by default none: a person may be
        answering, and the request itself is bounded by the client) or
        ``(None, b"", answer)`` in 2026-07-28 when the retry
        carries the answer; raises :class:`NeedInput` when it does not yet (let it
        propagate out of the handler) and :class:`McpError` when the client cannot answer."""
        capability = _ASK_CAPABILITY[method]
        self._now = now  # the adapter's clock, for a state sealed by finish() without one
        if not self.connection.policy.server_requests:
            caps = job.meta.get(_META_CAPABILITIES) or {}
            if capability not in caps:
                raise McpError(
                    ErrorCode.MISSING_REQUIRED_CLIENT_CAPABILITY,
                    f"this needs the client capability {capability!r}",
                    {"requiredCapabilities": {capability: {}}},
                )
            key = f"{method.split('/')[0]}-{job.asked}"
            job.asked += 1
            if key in job.inputs:
                return None, b"", job.inputs[key]
            raise NeedInput(key, {"method": method, "params": dict(params)})
        caps = self.connection.client_capabilities or {}
        if capability not in caps:
            raise McpError(ErrorCode.METHOD_NOT_FOUND, f"the client did not declare {capability!r}")
        call, data = self.call(method, params, now=now, timeout=timeout)
        return call, data, None

    def progress(
        self, job: Job, progress: float, total: float | None = None, message: str | None = None
    ) -> bytes:
        """The progress notification for ``job`` (``b""`` when its request has no token)."""
        token = job.meta.get("progressToken")
        if token is None or job.cancelled:
            return b""
        params: dict[str, Any] = {"progressToken": token, "progress": progress}
        if total is not None:
            params["total"] = total
        spec = self.connection.spec
        if message is not None and (spec is None or spec.progress_message):
            params["message"] = message
        return self.notify("notifications/progress", params)

    def log(self, job: Job | None, level: str, data: Any, logger: str | None = None) -> bytes:
        """A log message (``b""`` when the level is filtered out or logging is not on)."""
        if not self.server.logging or level not in LOG_RANK:
            return b""
        if self.connection.policy.log_level_in_meta:
            wanted = job.meta.get(_META_LOG_LEVEL) if job is not None else None
            if not isinstance(wanted, str) or wanted not in LOG_RANK:
                return b""
        else:
            wanted = self._log_level
        if wanted is not None and LOG_RANK[level] < LOG_RANK[wanted]:
            return b""
        params: dict[str, Any] = {"level": level, "data": data}
        if logger is not None:
            params["logger"] = logger
        try:
            return self.notify("notifications/message", params)
        except LocalProtocolError:
            return b""

    def resource_updated(self, uri: str) -> bytes:
        """``notifications/resources/updated`` for every subscriber of ``uri``."""
        out = b""
        if self.connection.policy.listen_streams:
            for listen_id in self._listeners.get(uri, ()):
                out += self.notify(
                    "notifications/resources/updated",
                    {"uri": uri, "_meta": {_META_SUBSCRIPTION: listen_id}},
                )
        elif uri in self._subscribed:
            out = self.notify("notifications/resources/updated", {"uri": uri})
        return out

    def list_changed(self, kind: str) -> bytes:
        """``notifications/<kind>/list_changed`` (kind: tools, prompts or resources)."""
        method = f"notifications/{kind}/list_changed"
        if self.connection.policy.listen_streams:
            out = b""
            for listen_id, (methods, _) in self._listens.items():
                if method in methods:
                    out += self.notify(method, {"_meta": {_META_SUBSCRIPTION: listen_id}})
            return out
        if self.connection.state is not State.OPERATING:
            return b""
        try:
            return self.notify(method)
        except LocalProtocolError:
            return b""


class ContextBase:
    """What a handler gets as its first argument: the request it serves and ways to talk
    back. The adapters subclass it; they supply ``_write`` (send bytes now, or queue
    them) and the waiting half of ``elicit``, ``sample`` and ``list_roots``
    (``await`` in asyncio and trio, a blocking wait in :mod:`mcp_sansio.blocking`).
    """

    def __init__(self, session: SessionBase, job: Job, clock: Callable[[], float]) -> None:
        self.session = session
        """The session the request arrived on."""
        self.job = job
        """The job being run."""
        self._clock = clock

    def _write(self, data: bytes) -> None:  # pragma: no cover - adapters override
        raise NotImplementedError

    @property
    def request_id(self) -> RequestId | None:
        """The id of the request being handled (``None`` for a 2026 input request)."""
        return self.job.id

    @property
    def method(self) -> str:
        """The method being handled."""
        return self.job.method

    @property
    def params(self) -> Mapping[str, Any]:
        """The request's params."""
        return self.job.params

    @property
    def cancelled(self) -> bool:
        """Whether the peer cancelled the request (its answer will not be sent)."""
        return self.job.cancelled

    @property
    def protocol_version(self) -> str | None:
        """The protocol version of the session (or of this request, in 2026-07-28)."""
        return self.session.connection.protocol_version

    def progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        """Report progress on this request (nothing happens when it has no progress token)."""
        if isinstance(self.session, ServerSession):
            data = self.session.progress(self.job, progress, total, message)
            if data:
                self._write(data)

    def log(self, level: str, data: Any, logger: str | None = None) -> None:
        """Send a log message, if the client's log level lets it through."""
        if isinstance(self.session, ServerSession):
            out = self.session.log(self.job, level, data, logger)
            if out:
                self._write(out)

    def resource_updated(self, uri: str) -> None:
        """Tell subscribers of ``uri`` that it changed."""
        if self.session.broadcast is not None:
            self.session.broadcast(lambda session: session.resource_updated(uri))
        elif isinstance(self.session, ServerSession):
            data = self.session.resource_updated(uri)
            if data:
                self._write(data)

    def list_changed(self, kind: str) -> None:
        """Tell the client that the list of ``kind`` (tools, prompts, resources) changed."""
        if self.session.broadcast is not None:
            self.session.broadcast(lambda session: session.list_changed(kind))
        elif isinstance(self.session, ServerSession):
            data = self.session.list_changed(kind)
            if data:
                self._write(data)

    def close_stream(self) -> None:
        """Over Streamable HTTP in the initialize era, end the HTTP response that carries
        this request now; the client reconnects after the stream's ``retry`` delay and
        resumes with ``Last-Event-ID``, and what the handler sends meanwhile waits in the
        replay buffer. Elsewhere it does nothing."""
        hook = self.session.on_close_stream
        if hook is not None and self.job.id is not None:
            hook(self.job.id)

    def _ask(
        self, method: str, params: Mapping[str, Any], timeout: float | None = None
    ) -> tuple[Call | None, Any]:
        """Start asking the client; returns ``(call, None)`` to wait on, or ``(None, answer)``.

        The adapters' ``elicit``, ``sample`` and ``list_roots`` return the whole result
        object the client sent (``ElicitResult``, ``CreateMessageResult``,
        ``ListRootsResult``)."""
        if not isinstance(self.session, ServerSession):
            raise McpError(ErrorCode.METHOD_NOT_FOUND, "only a server handler can ask the client")
        call, data, answer = self.session.ask(self.job, method, params, self._clock(), timeout)
        if call is not None:
            self._write(data)
        return call, answer

    @staticmethod
    def elicitation_params(
        message: str, requested_schema: Mapping[str, Any] | None = None, *, url: str | None = None
    ) -> dict[str, Any]:
        """The params of ``elicitation/create``: a form (``requested_schema``) or a URL."""
        if url is not None:
            return {"mode": "url", "message": message, "url": url}
        return {
            "message": message,
            "requestedSchema": dict(requested_schema or {"type": "object", "properties": {}}),
        }


class AsyncContext(Protocol):
    """The context that handlers get from the asyncio and trio adapters: type handlers
    against this, and the same code runs on both (and, thanks to the session, in both
    eras).

    In 2026-07-28, a handler that asks the client for input runs again on the client's
    retry, and finds the answers it asked for: what it did before asking (progress, logs,
    changes) happens again. Ask first, act after.
    """

    @property
    def params(self) -> Mapping[str, Any]:
        """The request's params."""

    @property
    def request_id(self) -> RequestId | None:
        """The id of the request being handled."""

    @property
    def cancelled(self) -> bool:
        """Whether the peer cancelled the request."""

    def progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        """Report progress on the request."""

    def log(self, level: str, data: Any, logger: str | None = None) -> None:
        """Send a log message."""

    def resource_updated(self, uri: str) -> None:
        """Tell subscribers that ``uri`` changed."""

    def list_changed(self, kind: str) -> None:
        """Tell the client that a list (tools, prompts, resources) changed."""

    async def sleep(self, seconds: float) -> None:
        """Sleep, in the adapter's runtime."""

    async def elicit(
        self,
        message: str,
        requested_schema: Mapping[str, Any] | None = None,
        *,
        url: str | None = None,
    ) -> Any:
        """Ask the user (``elicitation/create``); returns the ``ElicitResult``."""

    async def sample(self, params: Mapping[str, Any]) -> Any:
        """Ask the client's model (``sampling/createMessage``); returns its result."""

    async def list_roots(self) -> Any:
        """Ask the client for its roots (``roots/list``); returns the ``ListRootsResult``."""


class ClientView:
    """What every adapter's ``Client`` tells about its session (a mixin: the adapter sets
    :attr:`session`)."""

    session: ClientSession
    """The sans-IO session underneath."""

    @property
    def server_info(self) -> Mapping[str, Any] | None:
        """The server's ``serverInfo`` (``name``, ``version``, …), once open."""
        return self.session.server_info

    @property
    def server_capabilities(self) -> Mapping[str, Any] | None:
        """The server's capabilities, once known."""
        return self.session.connection.server_capabilities

    @property
    def protocol_version(self) -> str | None:
        """The protocol version in use."""
        return self.session.connection.protocol_version

    @property
    def era(self) -> Era | None:
        """The era of the session: ``Era.INITIALIZE`` or ``Era.STATELESS``."""
        return self.session.connection.era

    @property
    def instructions(self) -> str | None:
        """The server's instructions for the model, if it gave any."""
        return self.session.instructions
