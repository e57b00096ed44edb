"""The client side: :class:`ClientSession`."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final

from .._connection import Connection
from .._errors import ErrorCode
from .._events import ErrorResponse, InputRequired, Notification, Request, RequestId, Response
from .._state import Role, State
from .._version import __version__
from ._actions import Action, CallFinished, HandleJob, Opened, Send
from ._base import _META_LOG_LEVEL, _META_SUBSCRIPTION, SessionBase, _data
from ._calls import Call, Job, _is_mapping
from ._errors import (
    DEFAULT_MAX_INPUT_ROUNDS,
    DEFAULT_MAX_UNREADABLE,
    DEFAULT_PROBE_TIMEOUT,
    DEFAULT_TIMEOUT,
    ConnectionLost,
    McpError,
    _error_of,
)

#: The JSON-RPC error code of the errors a transport makes up for failed exchanges (the
#: HTTP client's ``mcp_sansio.http.TRANSPORT_ERROR``).
TRANSPORT_ERROR: Final = -32000

#: The key of a JSON-RPC error's ``data`` by which a transport says that the request never
#: reached the server for want of authorization (the HTTP client's failed flows put the
#: failure there, under :data:`TRANSPORT_ERROR`): no answer of the server's, so not one about its
#: era, and a ``server/discover`` probe failed so does not fall back to ``initialize``.
AUTHORIZATION_FAILURE: Final = "authorization"

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
        own = {spec.method for spec in config.get("methods", ())}
        for method in self.handlers:
            if method not in _CLIENT_HANDLER_METHODS and method not in own:
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

    @property
    def is_open(self) -> bool:
        """Whether the session is open (handshake or probe done)."""
        return self._opened

    def open(self, now: float) -> list[Action]:
        """Start the session: the probe or the ``initialize`` request (as a :class:`Send`).
        When the opening completes, :meth:`SessionBase.receive_data` returns :class:`Opened`."""
        policy = self.connection.policy
        if policy.probe:  # both eras: the probe, which falls back to initialize
            call, data = self.call("server/discover", now=now, timeout=self.probe_timeout)
        elif not policy.handshake:
            # A stateless-only client needs no handshake; it may still discover. This is no
            # probe (there is no other era to fall back to): the usual timeout applies.
            call, data = self.call("server/discover", now=now)
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
        version = _handshake_versions(conn)[0]
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
        if (
            call.method == "server/discover"
            and not conn.policy.probe
            and conn.policy.handshake
            and not _unauthorized(event)
        ):
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
            and _handshake_versions(self.connection)
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

    def complete(
        self,
        job: Job,
        value: Any = None,
        error: BaseException | None = None,
        now: float | None = None,
    ) -> list[Action]:
        """As :meth:`SessionBase.complete`; for an input request of a 2026-07-28 call, the
        answer is collected, and the retry goes out once every input is answered (its
        timeout restarts at ``now`` when given). An input handler that raised ends the call
        with that error (:class:`CallFinished`)."""
        if job.key is None:
            return super().complete(job, value, error, now)
        call = job.call
        assert call is not None
        pending = self._input.get(call.id)
        if pending is None or call.done:
            return []
        event, responses, _ = pending
        if error is not None:
            # The caller's own handler failed, inside the caller's call: the call ends with
            # that very exception (as for on_progress: the server did nothing wrong).
            del self._input[call.id]
            call.error = error if isinstance(error, Exception) else _error_of(error)
            return [CallFinished(call)]
        responses[job.key] = {} if value is None else value
        if len(responses) < len(event.input_requests):
            return []
        return [self._retry(call, now)]

    def finish(
        self,
        job: Job,
        value: Any = None,
        error: BaseException | None = None,
        now: float | None = None,
    ) -> bytes:
        """As :meth:`SessionBase.finish` (the bytes of :meth:`complete`'s writes; a call an
        input handler ended is then failed but nobody is woken: runtimes call
        :meth:`complete`)."""
        if job.key is None:
            return super().finish(job, value, error, now)
        return b"".join(a.data for a in self.complete(job, value, error, now) if type(a) is Send)

    def _on_notification(self, note: Notification, now: float) -> list[Action]:
        """As for :class:`SessionBase`; a 2026-07-28 listen stream's acknowledgement also
        finishes its ``subscriptions/listen`` call, with the acknowledgement's params: the
        caller gets what was granted at once, and the stream goes on (its notifications
        reach the application, its final response, if any, is dropped)."""
        actions = super()._on_notification(note, now)
        if note.method == "notifications/subscriptions/acknowledged":
            params = note.params or {}
            meta = params.get("_meta")
            listen_id = meta.get(_META_SUBSCRIPTION) if _is_mapping(meta) else None
            call = self._calls.get(listen_id) if listen_id is not None else None
            if call is not None and call.method == "subscriptions/listen" and not call.done:
                self._forget(call)
                call.result = dict(params)
                actions.append(CallFinished(call))
        return actions

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


def _handshake_versions(conn: Connection) -> list[str]:
    """The versions of ``conn`` that open with an ``initialize`` handshake, newest first."""
    specs = conn.config.specs
    return [v for v in conn.config.versions if specs[v].policy.handshake]


def _unauthorized(event: Response | ErrorResponse | InputRequired) -> bool:
    """Whether ``event`` is a transport's error for a request that was never delivered for
    want of authorization (:data:`AUTHORIZATION_FAILURE`): the server did not answer it,
    so it says nothing of the server's era; ``initialize`` would be refused the same way
    (and a person asked again)."""
    if type(event) is not ErrorResponse or event.code != TRANSPORT_ERROR:
        return False
    data = event.data
    return type(data) is dict and type(data.get(AUTHORIZATION_FAILURE)) is dict
