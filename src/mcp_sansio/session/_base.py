"""What clients and servers share: :class:`SessionBase`."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from .._connection import Connection
from .._errors import ErrorCode, LocalProtocolError, RemoteProtocolError
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
from .._sentinels import NEED_DATA, OMITTED
from .._state import Role, State
from ..server import ToolError
from ._actions import (
    Action,
    CallFinished,
    CancelJob,
    Closed,
    HandleJob,
    PeerNotification,
    Send,
)
from ._calls import Call, Job, _is_mapping
from ._errors import (
    DEFAULT,
    DEFAULT_MAX_TIMEOUT,
    DEFAULT_MAX_UNREADABLE,
    DEFAULT_TIMEOUT,
    ConnectionLost,
    DefaultType,
    McpError,
    NeedInput,
    RequestTimeout,
    _error_of,
)
from ._policy import log_handler_error

_META_SUBSCRIPTION: Final = "io.modelcontextprotocol/subscriptionId"
_META_LOG_LEVEL: Final = "io.modelcontextprotocol/logLevel"
_META_CAPABILITIES: Final = "io.modelcontextprotocol/clientCapabilities"
_UNREADABLE: Final = frozenset({ErrorCode.PARSE_ERROR, ErrorCode.INVALID_REQUEST})


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
        self.broadcast: Callable[[Callable[[SessionBase], bytes]], None] | None = None
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

        With ``on_progress`` or ``reset_on_progress``, a progress token is added; each
        progress notification is passed to ``on_progress``, and ``reset_on_progress``
        restarts the timeout on each one, up to ``max_timeout`` in all. Raises
        :class:`LocalProtocolError` when the protocol forbids the request now, and
        :class:`ConnectionLost` after the peer closed.
        """
        if self._closed:
            raise ConnectionLost("the connection is closed")
        conn = self.connection
        request_id = conn.next_request_id()
        body = dict(params) if params else {}
        body = self._decorate(method, body)
        if on_progress is not None or reset_on_progress:
            # (reset_on_progress alone asks for progress too: it is what keeps the call alive)
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

    def close(self, reason: str = "the connection is closed") -> list[Action]:
        """We close the session (the owner's close, a runtime's shutdown): every call of
        ours fails with :class:`ConnectionLost` (``reason``), every job of the peer's
        requests is cancelled (its answer will not be sent), and :class:`Closed` comes last.
        Later calls raise :class:`ConnectionLost` at once."""
        actions = self._on_closed(reason)
        closed = actions.pop() if actions else Closed()
        for job in list(self._jobs.values()):
            job.cancelled = True
            actions.append(CancelJob(job))
        self._jobs.clear()
        actions.append(closed)
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
                    except BaseException as exc:
                        # The caller's own callback failed: the call ends with that very
                        # exception (not an McpError: the peer did nothing wrong), and the
                        # request is cancelled at the peer, as a timeout cancels it. A
                        # BaseException (KeyboardInterrupt) too: it comes out of the call,
                        # in the caller's task, never swallowed nor raised in a reader's.
                        data = self.cancel(
                            call, f"the progress callback raised {type(exc).__name__}"
                        )
                        call.error = exc
                        actions: list[Action] = [Send(data)] if data else []
                        actions.append(CallFinished(call))
                        return actions
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

    def complete(
        self,
        job: Job,
        value: Any = None,
        error: BaseException | None = None,
        now: float | None = None,
    ) -> list[Action]:
        """The handler of ``job`` returned ``value`` (or raised ``error``): what to do now
        (the answer to write; for a 2026-07-28 client's input handler, the retry, or the
        call it ended). What a runtime calls when a job is over."""
        data = self.finish(job, value, error, now)
        return [Send(data)] if data else []

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

    # ------------------------------------------------------------------ for handlers
    # (a server's; a client's handlers have nothing to report: these send nothing)

    def progress(
        self, job: Job, progress: float, total: float | None = None, message: str | None = None
    ) -> bytes:
        """The progress notification for ``job`` (``b""``: nothing to send)."""
        return b""

    def log(self, job: Job | None, level: str, data: Any, logger: str | None = None) -> bytes:
        """A log message for the peer (``b""``: nothing to send)."""
        return b""

    def resource_updated(self, uri: str) -> bytes:
        """``notifications/resources/updated`` for the subscribers of ``uri`` (``b""``)."""
        return b""

    def list_changed(self, kind: str) -> bytes:
        """``notifications/<kind>/list_changed`` (``b""``: nothing to send)."""
        return b""

    def ask(
        self,
        job: Job,
        method: str,
        params: Mapping[str, Any],
        now: float,
        timeout: float | None = None,
    ) -> tuple[Call | None, bytes, Any]:
        """A handler asks the peer for input: only a server's can."""
        raise McpError(ErrorCode.METHOD_NOT_FOUND, "only a server handler can ask the client")

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
