"""The server side: :class:`ServerSession`, for a :class:`~mcp_sansio.server.Server`."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final

from .._checks import LOG_RANK
from .._connection import Connection
from .._errors import ErrorCode, LocalProtocolError, ValidationError
from .._events import Request, RequestId, Response
from .._request_state import RequestStateSeal
from .._state import Role, State
from .._versions import Era
from ..server import ToolError
from ._actions import Action, Send
from ._base import _META_CAPABILITIES, _META_LOG_LEVEL, _META_SUBSCRIPTION, SessionBase
from ._calls import Call, Job, _is_mapping
from ._errors import DEFAULT_MAX_UNREADABLE, DEFAULT_TIMEOUT, McpError, NeedInput

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
        methods = getattr(server, "methods", ())
        if methods and "methods" not in config:
            config["methods"] = methods  # the registry's application methods
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
        self.state_principal: str | None = None
        """Who this session's ``requestState`` belongs to (a principal's key; the HTTP
        server's authorization sets it): a state is sealed for it and opens for it only."""
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
        spec = self.connection.spec
        rule = spec.methods.get(method) if spec is not None else None
        if not self.connection.policy.server_requests and rule is not None and rule.input_required:
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
        handler = getattr(server, "handlers", {}).get(method)
        if handler is not None:  # an application method (Server(methods=...))
            return Job(request.id, method, params, handler, (params,))
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
        if job.method == "tools/call" and isinstance(error, ToolError):
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
                    job.inputs,
                    method=job.method,
                    params=job.params,
                    now=self._state_now(now),
                    principal=self.state_principal,
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
                state,
                method=job.method,
                params=params,
                now=self._state_now(now),
                principal=self.state_principal,
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
