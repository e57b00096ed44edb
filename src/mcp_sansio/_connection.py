"""The :class:`Connection`: the MCP state machine, both eras, both roles.

Bytes go in with :meth:`Connection.receive_data`; events come out of
:meth:`Connection.next_event`; :meth:`Connection.send` checks an event against the protocol
and returns the bytes to write. Every rule is enforced in both directions: what we send
raises :class:`LocalProtocolError` (and changes nothing), what we receive comes out as an
:class:`InvalidMessage` carrying the answer the protocol defines.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Mapping
from typing import Any, Final

import orjson

from ._config import Config
from ._errors import ErrorCode, LocalProtocolError, RemoteProtocolError
from ._events import (
    Batch,
    ConnectionClosed,
    ErrorResponse,
    Event,
    InputRequired,
    InvalidMessage,
    Message,
    Notification,
    Request,
    RequestId,
    Response,
)
from ._framing import OVERSIZED, LineFramer
from ._ids import IdHistory
from ._jsonrpc import decode, encode, encode_batch, invalid
from ._sentinels import NEED_DATA, NeedData
from ._state import (
    ANY,
    LIFECYCLE_METHODS,
    NOTIFICATIONS_ALLOWED,
    REQUESTS_ALLOWED,
    TRANSITIONS,
    Role,
    State,
    Trigger,
)
from ._versions import VERSIONS, Direction, Era, Kind, VersionSpec, capability_met

__all__ = ["Connection", "NextEvent"]

#: What :meth:`Connection.next_event` returns.
NextEvent = Event | NeedData

META_VERSION: Final = "io.modelcontextprotocol/protocolVersion"
META_CAPABILITIES: Final = "io.modelcontextprotocol/clientCapabilities"
META_CLIENT_INFO: Final = "io.modelcontextprotocol/clientInfo"
META_LOG_LEVEL: Final = "io.modelcontextprotocol/logLevel"
META_SUBSCRIPTION: Final = "io.modelcontextprotocol/subscriptionId"

#: Logging levels, least severe first (RFC 5424 order as MCP uses it).
LOG_LEVELS: Final = (
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
)
_LOG_RANK: Final = {name: i for i, name in enumerate(LOG_LEVELS)}

# Listen opt-in flag → the notification it admits (2026-07-28).
_LISTEN_FLAGS: Final = {
    "toolsListChanged": "notifications/tools/list_changed",
    "promptsListChanged": "notifications/prompts/list_changed",
    "resourcesListChanged": "notifications/resources/list_changed",
}
_INPUT_CAPABILITY: Final = {
    "elicitation/create": "elicitation",
    "sampling/createMessage": "sampling",
    "roots/list": "roots",
}
_DIRECTION_OF: Final = {
    Role.CLIENT: Direction.CLIENT_TO_SERVER,
    Role.SERVER: Direction.SERVER_TO_CLIENT,
}

_Fault = tuple[int, str]
_INVALID: Final = ErrorCode.INVALID_REQUEST
_PARAMS: Final = ErrorCode.INVALID_PARAMS
_NOT_FOUND: Final = ErrorCode.METHOD_NOT_FOUND


def _is_id(value: object) -> bool:
    cls = type(value)
    return cls is str or cls is int


def _is_number(value: object) -> bool:
    cls = type(value)
    return cls is int or cls is float


class _Pending:
    """One request in flight (ours or the peer's)."""

    __slots__ = ("acked", "caps", "listen", "log_level", "method", "params", "progress", "token")

    def __init__(self, method: str, params: Any, token: Any) -> None:
        self.method = method
        self.params = params
        self.token = token
        self.progress: float | None = None  # last progress value sent for this request
        self.caps: Mapping[str, Any] = {}  # 2026: the request's client capabilities
        self.log_level: str | None = None  # 2026: the request's logLevel
        self.listen: frozenset[str] | None = None  # 2026 listen: the acknowledged types
        self.acked = False


class Connection:
    """One side of an MCP conversation, without I/O.

    :param role: :attr:`Role.CLIENT` or :attr:`Role.SERVER`.
    :param config: the keywords of :class:`Config` (``versions=``, ``capabilities=``,
        ``implementation=``, ``max_message_size=``, …).
    """

    def __init__(self, role: Role, **config: Any) -> None:
        self.config: Config = Config(role=role, **config)
        """The validated configuration."""
        self.role: Role = role
        """Which side we play."""
        cfg = self.config
        self._framer = LineFramer(cfg.max_message_size)
        self._queue: deque[Event] = deque()
        self._state = State.IDLE
        self._eof = False
        self._closed_reported = False
        self._error: RemoteProtocolError | None = None
        eras = cfg.eras
        self._era: Era | None = next(iter(eras)) if len(eras) == 1 else None
        self._spec: VersionSpec | None = None
        self._client_caps: Mapping[str, Any] | None = None
        self._server_caps: Mapping[str, Any] | None = None
        if role is Role.SERVER:
            self._server_caps = cfg.capabilities
        else:
            self._client_caps = cfg.capabilities
        if self._era is Era.STATELESS:
            self._spec = VERSIONS[cfg.versions[0]]
        self._requested_version: str | None = None  # initialize: what the client asked for
        self._init_id: RequestId | None = None
        self._probe_id: RequestId | None = None
        # Requests in flight: ours (the peer owes an answer) and theirs (we owe one).
        self._ours: dict[RequestId, _Pending] = {}
        self._theirs: dict[RequestId, _Pending] = {}
        self._our_ids = IdHistory(cfg.id_memory)
        self._their_ids = IdHistory(cfg.id_memory)
        self._our_tokens: dict[Any, RequestId] = {}
        self._their_tokens: dict[Any, RequestId] = {}
        self._cancelled_ours: dict[RequestId, None] = {}
        self._cancelled_theirs: dict[RequestId, None] = {}
        self._owed_errors: dict[RequestId, None] = {}
        self._subscriptions: set[str] = set()
        self._log_level: str | None = None
        self._next_id = 0
        self._allowed: dict[tuple[Role, Kind], frozenset[str]] = {}
        self._batch_ids: set[RequestId] | None = None

    # ------------------------------------------------------------------ properties

    @property
    def state(self) -> State:
        """The lifecycle state of the session."""
        return self._state

    @property
    def era(self) -> Era | None:
        """The era of the session, or ``None`` while a client that speaks both has not
        decided (see :meth:`fall_back_to_initialize`)."""
        return self._era

    @property
    def protocol_version(self) -> str | None:
        """The negotiated protocol version (stateless era: the one this client sends, or
        the newest this server accepts), or ``None`` before the handshake."""
        return self._spec.version if self._spec is not None else None

    @property
    def client_capabilities(self) -> Mapping[str, Any] | None:
        """The client's capabilities: from ``initialize`` (initialize era), from the
        configuration (a stateless client); ``None`` when not known."""
        return self._client_caps

    @property
    def server_capabilities(self) -> Mapping[str, Any] | None:
        """The server's capabilities: from the ``initialize`` result or the
        ``server/discover`` result; a server's own from its configuration."""
        return self._server_caps

    @property
    def peer_closed(self) -> bool:
        """Whether the peer has closed its side (``receive_data(b"")``)."""
        return self._eof

    @property
    def outstanding(self) -> tuple[RequestId, ...]:
        """Ids of our requests still waiting for the peer's answer, oldest first."""
        return tuple(self._ours)

    @property
    def owed(self) -> tuple[RequestId, ...]:
        """Ids of the peer's requests still waiting for our answer, oldest first."""
        return tuple(self._theirs)

    def next_request_id(self) -> int:
        """An integer id no request of ours has used in this session."""
        while self._next_id in self._our_ids or self._next_id in self._ours:
            self._next_id += 1
        value = self._next_id
        self._next_id += 1
        return value

    # ------------------------------------------------------------------ receiving

    def receive_data(self, data: bytes) -> None:
        """Buffer bytes from the peer; ``b""`` means the peer closed its side."""
        if self._eof:
            if data:
                raise LocalProtocolError("receive_data() after the peer closed (b'' was fed)")
            return
        if data:
            self._framer.feed(data)
        else:
            self._eof = True

    def next_event(self) -> NextEvent:
        """The next event, or :data:`NEED_DATA` when more bytes are needed.

        Raises :class:`RemoteProtocolError` when the peer broke the session beyond repair;
        afterwards every call raises it again.
        """
        if self._error is not None:
            raise self._error
        if self._queue:
            return self._queue.popleft()
        framer = self._framer
        while True:
            line = framer.next_line()
            if line is None:
                if self._eof:
                    return self._closed()
                return NEED_DATA
            if line is OVERSIZED:
                return invalid(
                    _INVALID,
                    f"Invalid request: message larger than {framer.max_size} bytes; dropped",
                    b"",
                    reply=True,
                )
            spec = self._spec
            decoded = decode(line, allow_batch=spec is not None and spec.batches)
            if type(decoded) is list:
                self._receive_batch(decoded)
                if self._queue:
                    return self._queue.popleft()
                continue
            event = self._receive(decoded)  # type: ignore[arg-type]
            if event is not None:
                return event

    def _closed(self) -> Event:
        if self._framer.pending_partial() and not self._closed_reported:
            self._closed_reported = True
            self._framer = LineFramer(self.config.max_message_size)
            return invalid(
                ErrorCode.PARSE_ERROR,
                "Parse error: the peer closed in the middle of a message",
                b"",
                reply=False,
            )
        self._closed_reported = True
        return ConnectionClosed(unanswered=tuple(self._ours))

    def _fail(self, message: str, code: int = _INVALID) -> RemoteProtocolError:
        self._error = RemoteProtocolError(message, code)
        return self._error

    def _receive_batch(self, items: list[Message | InvalidMessage]) -> None:
        kinds = {type(i) in (Request, Notification) for i in items if type(i) is not InvalidMessage}
        if len(kinds) > 1:
            self._queue.append(
                invalid(
                    _INVALID,
                    "Invalid request: a batch mixes requests or notifications with responses",
                    b"",
                    reply=True,
                )
            )
            return
        for item in items:
            if type(item) is Request and item.method == "initialize":
                self._queue.append(
                    invalid(
                        _INVALID,
                        "Invalid request: initialize must not be batched",
                        b"",
                        reply=True,
                        id=item.id,
                    )
                )
                continue
            event = self._receive(item)
            if event is not None:
                self._queue.append(event)

    def _receive(self, msg: Message | InvalidMessage) -> Event | None:
        cls = type(msg)
        if cls is Request:
            return self._receive_request(msg)  # type: ignore[arg-type]
        if cls is Notification:
            return self._receive_notification(msg)  # type: ignore[arg-type]
        if cls is Response or cls is ErrorResponse:
            return self._receive_response(msg)  # type: ignore[arg-type]
        assert isinstance(msg, InvalidMessage)
        if msg.id is not None:
            if msg.reply is not None:
                self._remember_owed(msg.id)
                if self._era is not Era.STATELESS and msg.id not in self._their_ids:
                    self._their_ids.add(msg.id)
            elif msg.id in self._ours:
                # A malformed answer to our request: the request is over.
                self._retire_ours(msg.id)
        return msg

    def _reject(self, req: Request, code: int, message: str, data: Any = None) -> InvalidMessage:
        """An InvalidMessage answering the peer's request ``req``."""
        self._remember_owed(req.id)
        reply = (
            ErrorResponse(id=req.id, code=code, message=message)
            if data is None
            else ErrorResponse(id=req.id, code=code, message=message, data=data)
        )
        return InvalidMessage(code=code, message=message, reply=reply, id=req.id, raw=b"")

    def _remember_owed(self, request_id: RequestId) -> None:
        owed = self._owed_errors
        owed[request_id] = None
        if len(owed) > self.config.max_in_flight:
            del owed[next(iter(owed))]

    def _receive_request(self, req: Request) -> Event:
        rid = req.id
        if rid in self._theirs:
            message = f"Invalid request: duplicate id {rid!r}: a request with this id is in flight"
            return InvalidMessage(
                code=_INVALID,
                message=message,
                reply=ErrorResponse(id=None, code=_INVALID, message=message),
                id=None,
            )
        if self._era is not Era.STATELESS and rid in self._their_ids:
            return self._reject(
                req, _INVALID, f"Invalid request: id {rid!r} was already used in this session"
            )
        if len(self._theirs) >= self.config.max_in_flight:
            return self._reject(
                req,
                _INVALID,
                f"Invalid request: more than {self.config.max_in_flight} requests in flight",
            )
        peer = self.role.peer
        if self._state is State.STATELESS or (
            self._state is State.IDLE
            and self.role is Role.SERVER
            and Era.STATELESS in self.config.eras
            and (
                self._era is Era.STATELESS
                or (req.method not in ("initialize", "ping") and self._looks_stateless(req))
            )
        ):
            return self._receive_stateless_request(req)
        fault = self._method_fault(peer, Kind.REQUEST, req.method)
        if fault is None:
            fault = self._request_fault(peer, req)
        if self._era is not Era.STATELESS:
            self._their_ids.add(rid)
        if fault is not None:
            return self._reject(req, *fault)
        self._admit_theirs(req)
        return req

    def _looks_stateless(self, req: Request) -> bool:
        params = req.params
        if type(params) is not dict:
            return False
        meta = params.get("_meta")
        return type(meta) is dict and META_VERSION in meta

    def _receive_stateless_request(self, req: Request) -> Event:
        """A server's checks of one 2026-07-28 request (also decides the era)."""
        modern = self.config.versions_of(Era.STATELESS)
        params = req.params
        if req.method == "initialize":
            requested = params.get("protocolVersion") if type(params) is dict else None
            return self._reject(
                req,
                _PARAMS,
                f"Unsupported protocol version: this server speaks {', '.join(modern)} "
                "(stateless; no initialize)",
                {"supported": list(modern), "requested": requested},
            )
        meta = params.get("_meta") if type(params) is dict else None
        if type(meta) is not dict:
            return self._reject(
                req, _PARAMS, "Invalid params: params._meta is required on every request"
            )
        version = meta.get(META_VERSION)
        if type(version) is not str:
            return self._reject(
                req, _PARAMS, f"Invalid params: params._meta[{META_VERSION!r}] must be a string"
            )
        if version not in modern:
            return self._reject(
                req,
                ErrorCode.UNSUPPORTED_PROTOCOL_VERSION,
                f"Unsupported protocol version {version!r}",
                {"supported": list(modern), "requested": version},
            )
        caps = meta.get(META_CAPABILITIES)
        if type(caps) is not dict:
            return self._reject(
                req,
                _PARAMS,
                f"Invalid params: params._meta[{META_CAPABILITIES!r}] must be an object",
            )
        info = meta.get(META_CLIENT_INFO)
        if info is not None and type(info) is not dict:
            return self._reject(
                req,
                _PARAMS,
                f"Invalid params: params._meta[{META_CLIENT_INFO!r}] must be an object",
            )
        level = meta.get(META_LOG_LEVEL)
        if level is not None and level not in _LOG_RANK:
            return self._reject(req, _PARAMS, f"Invalid params: unknown log level {level!r}")
        if self._state is State.IDLE:
            self._enter_stateless(VERSIONS[modern[0]])
        fault = self._method_fault(Role.CLIENT, Kind.REQUEST, req.method)
        if fault is None:
            fault = self._request_fault(Role.CLIENT, req)
        if fault is not None:
            return self._reject(req, *fault)
        pending = self._admit_theirs(req)
        pending.caps = caps
        pending.log_level = level
        return req

    def _admit_theirs(self, req: Request) -> _Pending:
        params = req.params
        token = None
        if type(params) is dict:
            meta = params.get("_meta")
            if type(meta) is dict:
                token = meta.get("progressToken")
        pending = _Pending(req.method, params, token)
        self._theirs[req.id] = pending
        if token is not None:
            self._their_tokens[token] = req.id
        if req.method == "initialize":
            self._initialize_request(req, sent=False)
        return pending

    def _receive_notification(self, note: Notification) -> Event | None:
        peer = self.role.peer
        method = note.method
        if method == "notifications/cancelled":
            return self._peer_cancelled(note)
        fault = self._method_fault(peer, Kind.NOTIFICATION, method)
        if fault is None:
            fault = self._notification_fault(peer, note)
        if fault is not None:
            code, message = fault
            return InvalidMessage(code=code, message=message, reply=None, raw=b"")
        self._apply_notification(peer, note)
        return note

    def _peer_cancelled(self, note: Notification) -> Event | None:
        """The peer cancels one of its requests; malformed or unknown cancels are ignored."""
        params = note.params
        rid = params.get("requestId") if type(params) is dict else None
        if not _is_id(rid):
            return None
        pending = self._theirs.get(rid)  # type: ignore[arg-type]
        if pending is not None:
            if pending.method == "initialize":
                return None  # initialize must not be cancelled: ignore
            self._retire_theirs(rid)  # type: ignore[arg-type]
            cancelled = self._cancelled_theirs
            cancelled[rid] = None  # type: ignore[index]
            if len(cancelled) > self.config.max_in_flight:
                del cancelled[next(iter(cancelled))]
            return note
        if self.role is Role.CLIENT:
            # 2026: a stdio server ends a listen stream with notifications/cancelled.
            ours = self._ours.get(rid)  # type: ignore[arg-type]
            if ours is not None and ours.method == "subscriptions/listen":
                self._retire_ours(rid)  # type: ignore[arg-type]
                return note
        return None

    def _receive_response(self, msg: Response | ErrorResponse) -> Event | None:
        rid = msg.id
        if rid is None:
            return msg  # an error the peer could not address: nothing to retire
        pending = self._ours.get(rid)
        if pending is None:
            if rid in self._cancelled_ours:
                del self._cancelled_ours[rid]
                return None  # the late answer to a request we cancelled: dropped
            return InvalidMessage(
                code=_INVALID,
                message=f"Invalid response: id {rid!r} answers no request of ours in flight",
                reply=None,
                id=rid,
            )
        self._retire_ours(rid)
        method = pending.method
        if type(msg) is ErrorResponse:
            if method == "initialize":
                self._transition(Trigger.INITIALIZE_ERROR)
            elif rid == self._probe_id:
                self._probe_error(msg)
            return msg
        result = msg.result  # type: ignore[union-attr]
        if method == "initialize":
            self._initialize_result(result, sent=False)
        elif rid == self._probe_id:
            self._probe_result(result)
        elif self._era is Era.STATELESS:
            result_type = result.get("resultType", "complete")
            if result_type == "input_required":
                rule = self._spec.methods.get(method) if self._spec else None
                if rule is None or not rule.input_required:
                    return InvalidMessage(
                        code=_INVALID,
                        message=f"Invalid response: {method} cannot answer input_required",
                        reply=None,
                        id=rid,
                    )
                if "inputRequests" not in result and "requestState" not in result:
                    return InvalidMessage(
                        code=_INVALID,
                        message="Invalid response: input_required needs inputRequests/requestState",
                        reply=None,
                        id=rid,
                    )
                return InputRequired(
                    id=rid,
                    result=result,
                    request=Request(id=rid, method=method, params=pending.params),
                )
            if result_type != "complete":
                return InvalidMessage(
                    code=_INVALID,
                    message=f"Invalid response: unknown resultType {result_type!r}",
                    reply=None,
                    id=rid,
                )
        else:
            self._after_success(method, pending.params)
        return msg

    # ------------------------------------------------------------------ sending

    def send(self, event: Event) -> bytes:
        """Check ``event`` against the protocol and return the bytes to write.

        Raises :class:`LocalProtocolError` when the protocol forbids it; the connection is
        then unchanged. Returns ``b""`` for an answer to a request the peer cancelled (the
        protocol says not to answer it; the request is retired).
        """
        if self._error is not None:
            raise LocalProtocolError(f"the connection is in its error state: {self._error.message}")
        cls = type(event)
        if cls is Batch:
            return self._send_batch(event)  # type: ignore[arg-type]
        if cls is Request or cls is Notification or cls is Response or cls is ErrorResponse:
            prepared, commit = self._prepare(event)  # type: ignore[arg-type]
            if prepared is None:
                commit()
                return b""
            data = self._encode(prepared)
            commit()
            return data
        raise LocalProtocolError(f"cannot send a {cls.__name__} event")

    def _encode(self, message: Message) -> bytes:
        try:
            return encode(message)
        except (TypeError, orjson.JSONEncodeError) as exc:
            raise LocalProtocolError(f"not JSON-serialisable: {exc}") from None

    def _send_batch(self, batch: Batch) -> bytes:
        spec = self._spec
        if spec is None or not spec.batches:
            raise LocalProtocolError("JSON-RPC batches exist only in protocol version 2025-03-26")
        if not batch.events:
            raise LocalProtocolError("a batch must not be empty")
        kinds = {type(e) in (Request, Notification) for e in batch.events}
        if len(kinds) > 1:
            raise LocalProtocolError("a batch holds requests and notifications, or responses")
        ids = [e.id for e in batch.events if type(e) in (Request, Response, ErrorResponse)]  # type: ignore[union-attr]
        if len({(type(i), i) for i in ids}) != len(ids):
            raise LocalProtocolError("a batch must not repeat an id")
        prepared: list[Message] = []
        commits: list[Callable[[], None]] = []
        for e in batch.events:
            if type(e) is Request and e.method == "initialize":
                raise LocalProtocolError("initialize must not be batched")
            p, c = self._prepare(e)
            if p is not None:
                prepared.append(p)
            commits.append(c)
        try:
            data = encode_batch(prepared) if prepared else b""
        except (TypeError, orjson.JSONEncodeError) as exc:
            raise LocalProtocolError(f"not JSON-serialisable: {exc}") from None
        for c in commits:
            c()
        return data

    def _prepare(self, event: Message) -> tuple[Message | None, Callable[[], None]]:
        cls = type(event)
        if cls is Request:
            return self._prepare_request(event)  # type: ignore[arg-type]
        if cls is Notification:
            return self._prepare_notification(event)  # type: ignore[arg-type]
        return self._prepare_response(event)  # type: ignore[arg-type]

    def _params_dict(self, params: Any) -> dict[str, Any] | None:
        if params is None or type(params) is dict:
            return params
        if isinstance(params, Mapping):
            return dict(params)
        from . import types  # typed params: lazily, to keep import light

        try:
            value = types.unstructure(params)
        except Exception as exc:  # any failure of a foreign object
            raise LocalProtocolError(
                f"params must be a JSON object or a typed MCP object: {exc}"
            ) from None
        if type(value) is not dict:
            raise LocalProtocolError("params must be a JSON object")
        return value

    def _prepare_request(self, req: Request) -> tuple[Message | None, Callable[[], None]]:
        rid = req.id
        if not _is_id(rid):
            raise LocalProtocolError(f"request id must be a string or an integer, not {rid!r}")
        if type(req.method) is not str:
            raise LocalProtocolError("method must be a string")
        if self._eof:
            raise LocalProtocolError("the peer has closed: no new requests can be answered")
        if rid in self._ours:
            raise LocalProtocolError(f"id {rid!r} is already in flight")
        if self._era is not Era.STATELESS and rid in self._our_ids:
            raise LocalProtocolError(f"id {rid!r} was already used in this session")
        params = self._params_dict(req.params)
        method = req.method
        trigger: Trigger | None = None
        if self.role is Role.CLIENT and self._state is State.IDLE and method != "ping":
            if method == "initialize":
                pass
            elif self._era is Era.STATELESS or method == "server/discover":
                trigger = Trigger.PROBE if self._era is None else Trigger.STATELESS_REQUEST
            elif self._era is None:
                raise LocalProtocolError(
                    "this client speaks both eras: send server/discover (or initialize) first"
                )
        if self._era is Era.STATELESS or trigger is not None:
            if self.role is Role.SERVER:
                raise LocalProtocolError("a 2026-07-28 server never sends requests")
            params = self._fill_meta(params)
            spec = self._spec or VERSIONS[self.config.versions_of(Era.STATELESS)[0]]
            rule = spec.methods.get(method)
            if rule is None or rule.kind is not Kind.REQUEST:
                raise LocalProtocolError(
                    f"{method!r} is not a request of protocol version {spec.version}"
                )
            fault = None
            if self._state is State.STATELESS:
                fault = self._method_fault(Role.CLIENT, Kind.REQUEST, method)
            if fault is None:
                fault = self._request_fault(
                    self.role, Request(id=rid, method=method, params=params)
                )
            if fault is not None:
                raise LocalProtocolError(fault[1], fault[0])
        else:
            fault = self._method_fault(self.role, Kind.REQUEST, method)
            if fault is None:
                fault = self._request_fault(
                    self.role, Request(id=rid, method=method, params=params)
                )
            if fault is not None:
                raise LocalProtocolError(fault[1], fault[0])
        token = None
        if params is not None:
            meta = params.get("_meta")
            if type(meta) is dict:
                token = meta.get("progressToken")
        out = Request(id=rid, method=method, params=params) if params is not req.params else req

        def commit() -> None:
            pending = _Pending(method, params, token)
            self._ours[rid] = pending
            if self._era is not Era.STATELESS:
                self._our_ids.add(rid)
            if token is not None:
                self._our_tokens[token] = rid
            if method == "initialize":
                self._initialize_request(out, sent=True)
            elif trigger is Trigger.PROBE:
                self._probe_id = rid
                self._transition(Trigger.PROBE)
            elif trigger is Trigger.STATELESS_REQUEST:
                self._enter_stateless(
                    self._spec or VERSIONS[self.config.versions_of(Era.STATELESS)[0]]
                )

        return out, commit

    def _fill_meta(self, params: dict[str, Any] | None) -> dict[str, Any]:
        """A stateless client's request params, with the required ``_meta`` keys filled."""
        params = dict(params) if params else {}
        meta = params.get("_meta")
        meta = dict(meta) if isinstance(meta, Mapping) else {}
        version = (self._spec or VERSIONS[self.config.versions_of(Era.STATELESS)[0]]).version
        given = meta.setdefault(META_VERSION, version)
        if given != version:
            raise LocalProtocolError(
                f"_meta protocolVersion {given!r} differs from the session's {version!r}"
            )
        if META_CAPABILITIES not in meta:
            meta[META_CAPABILITIES] = dict(self.config.capabilities)
        if META_CLIENT_INFO not in meta:
            meta[META_CLIENT_INFO] = dict(self.config.implementation)
        params["_meta"] = meta
        return params

    def _prepare_notification(
        self, note: Notification
    ) -> tuple[Message | None, Callable[[], None]]:
        if type(note.method) is not str:
            raise LocalProtocolError("method must be a string")
        params = self._params_dict(note.params)
        out = Notification(method=note.method, params=params) if params is not note.params else note
        method = note.method
        if method == "notifications/cancelled":
            return out, self._prepare_cancel(out)
        if self._eof and method not in ("notifications/progress", "notifications/message"):
            raise LocalProtocolError("the peer has closed: only answers and progress may go out")
        fault = self._method_fault(self.role, Kind.NOTIFICATION, method)
        if fault is None:
            fault = self._notification_fault(self.role, out)
        if fault is not None:
            raise LocalProtocolError(fault[1], fault[0])
        return out, lambda: self._apply_notification(self.role, out)

    def _prepare_cancel(self, note: Notification) -> Callable[[], None]:
        params = note.params
        rid = params.get("requestId") if type(params) is dict else None
        if not _is_id(rid):
            raise LocalProtocolError(
                "notifications/cancelled needs params.requestId (a string or an integer)"
            )
        if self.role is Role.SERVER and self._era is Era.STATELESS:
            pending = self._theirs.get(rid)  # type: ignore[arg-type]
            if pending is None or pending.method != "subscriptions/listen":
                raise LocalProtocolError(
                    "a 2026-07-28 server sends notifications/cancelled only to end a listen stream"
                )

            def end_listen() -> None:
                self._retire_theirs(rid)  # type: ignore[arg-type]

            return end_listen
        pending = self._ours.get(rid)  # type: ignore[arg-type]
        if pending is None:
            raise LocalProtocolError(
                f"cannot cancel {rid!r}: no request of ours with this id is in flight"
            )
        if pending.method == "initialize":
            raise LocalProtocolError("initialize must not be cancelled")

        def commit() -> None:
            self._retire_ours(rid)  # type: ignore[arg-type]
            cancelled = self._cancelled_ours
            cancelled[rid] = None  # type: ignore[index]
            if len(cancelled) > self.config.cancelled_memory:
                del cancelled[next(iter(cancelled))]
            if rid == self._probe_id:
                self._probe_id = None
                self._decide_legacy()

        return commit

    def _prepare_response(
        self, msg: Response | ErrorResponse
    ) -> tuple[Message | None, Callable[[], None]]:
        rid = msg.id
        if type(msg) is ErrorResponse:
            if (
                not isinstance(msg.code, int)
                or isinstance(msg.code, bool)
                or type(msg.message) is not str
            ):
                raise LocalProtocolError("an error needs an integer code and a string message")
            if rid is None:
                return msg, lambda: None
        if not _is_id(rid):
            raise LocalProtocolError(f"response id must be a string or an integer, not {rid!r}")
        pending = self._theirs.get(rid)  # type: ignore[arg-type]
        if pending is None:
            if rid in self._cancelled_theirs:
                return None, lambda: self._cancelled_theirs.pop(rid, None)
            if type(msg) is ErrorResponse and rid in self._owed_errors:
                return msg, lambda: self._owed_errors.pop(rid, None)
            raise LocalProtocolError(f"id {rid!r} answers no request of the peer in flight")
        if type(msg) is ErrorResponse:

            def commit_error() -> None:
                self._retire_theirs(rid)  # type: ignore[arg-type]
                if pending.method == "initialize":
                    self._transition(Trigger.INITIALIZE_ERROR)

            return msg, commit_error
        result = msg.result  # type: ignore[union-attr]
        if type(result) is not dict:
            result = self._params_dict(result)
            if result is None:
                raise LocalProtocolError("a result must be a JSON object")
            msg = Response(id=rid, result=result)  # type: ignore[arg-type]
        method = pending.method
        if method == "initialize":
            self._check_initialize_result(result)
        elif self._era is Era.STATELESS:
            result_type = result.get("resultType")
            if result_type is None:
                result = {**result, "resultType": "complete"}
                msg = Response(id=rid, result=result)  # type: ignore[arg-type]
            elif result_type == "input_required":
                self._check_input_required(method, pending, result)
            elif result_type != "complete":
                raise LocalProtocolError(f"unknown resultType {result_type!r}")

        def commit() -> None:
            self._retire_theirs(rid)  # type: ignore[arg-type]
            if method == "initialize":
                self._initialize_result(result, sent=True)
            elif self._era is not Era.STATELESS:
                self._after_success(method, pending.params)

        return msg, commit

    def _check_input_required(
        self, method: str, pending: _Pending, result: Mapping[str, Any]
    ) -> None:
        spec = self._spec
        rule = spec.methods.get(method) if spec else None
        if rule is None or not rule.input_required:
            raise LocalProtocolError(f"{method} cannot answer input_required")
        requests = result.get("inputRequests")
        if requests is None and "requestState" not in result:
            raise LocalProtocolError("input_required needs inputRequests or requestState")
        state = result.get("requestState")
        if state is not None and type(state) is not str:
            raise LocalProtocolError("requestState must be a string")
        if requests is None:
            return
        if type(requests) is not dict:
            raise LocalProtocolError("inputRequests must be an object")
        for key, item in requests.items():
            inner = item.get("method") if type(item) is dict else None
            capability = _INPUT_CAPABILITY.get(inner)  # type: ignore[arg-type]
            if capability is None:
                raise LocalProtocolError(f"inputRequests[{key!r}] has no known method")
            if capability not in pending.caps:
                raise LocalProtocolError(
                    f"inputRequests[{key!r}] asks for {inner}, but the request did not declare "
                    f"the client capability {capability!r}",
                    ErrorCode.MISSING_REQUIRED_CLIENT_CAPABILITY,
                )
            if inner == "elicitation/create":
                fault = self._elicitation_fault(item.get("params"), pending.caps)
            elif inner == "sampling/createMessage":
                fault = self._sampling_fault(item.get("params"), pending.caps)
            else:
                fault = None
            if fault is not None:
                raise LocalProtocolError(fault[1], fault[0])

    # ------------------------------------------------------------------ shared checks

    def _method_fault(self, sender: Role, kind: Kind, method: str) -> _Fault | None:
        """Whether ``sender`` may use ``method`` now (state, version, capabilities)."""
        table = REQUESTS_ALLOWED if kind is Kind.REQUEST else NOTIFICATIONS_ALLOWED
        allowed = table[(self._state, sender)]
        if allowed is not ANY:
            if method in allowed:
                return None
            if not any(method in VERSIONS[v].methods for v in self.config.versions):
                return _NOT_FOUND, (
                    f"Method not found: {method!r} is not part of protocol versions "
                    f"{', '.join(self.config.versions)}"
                )
            if method == "initialize":
                return _INVALID, "Invalid request: initialize was already received in this session"
            what = "request" if kind is Kind.REQUEST else "notification"
            return _INVALID, (
                f"Invalid request: {method!r} is not allowed from the {sender.value} in state "
                f"{self._state.value} ({what}s allowed now: {', '.join(sorted(allowed)) or 'none'})"
            )
        if method in self._allowed[(sender, kind)]:
            return None
        spec = self._spec
        assert spec is not None
        rule = spec.methods.get(method)
        if rule is None or rule.kind is not kind or method in LIFECYCLE_METHODS:
            if method == "initialize":
                return _INVALID, "Invalid request: initialize was already received in this session"
            if method == "notifications/initialized":
                return _INVALID, "Invalid request: notifications/initialized was already sent"
            noun = "request" if kind is Kind.REQUEST else "notification"
            return (
                _NOT_FOUND,
                f"Method not found: {method!r} is not a {noun} of protocol version {spec.version}",
            )
        if rule.direction is not Direction.BOTH and rule.direction is not _DIRECTION_OF[sender]:
            return _NOT_FOUND, f"Method not found: {method!r} is not sent by the {sender.value}"
        holder = sender.peer if kind is Kind.REQUEST else sender
        return _NOT_FOUND, (
            f"Method not found: {method!r} needs the {holder.value} capability "
            f"{'.'.join(rule.gate)!r}, which the {holder.value} did not declare"
        )

    def _caps_of(self, role: Role) -> Mapping[str, Any] | None:
        return self._client_caps if role is Role.CLIENT else self._server_caps

    def _compute_allowed(self) -> None:
        """Precompute, per sender and kind, the methods the version and the declared
        capabilities allow (they cannot change during the session)."""
        spec = self._spec
        assert spec is not None
        allowed: dict[tuple[Role, Kind], frozenset[str]] = {}
        for sender in Role:
            for kind in Kind:
                names = set()
                for name, rule in spec.methods.items():
                    if rule.kind is not kind or name in LIFECYCLE_METHODS:
                        continue
                    if (
                        rule.direction is not Direction.BOTH
                        and rule.direction is not _DIRECTION_OF[sender]
                    ):
                        continue
                    if rule.gate:
                        caps = self._caps_of(sender.peer if kind is Kind.REQUEST else sender)
                        if caps is not None and not capability_met(caps, rule.gate):
                            continue
                    names.add(name)
                allowed[(sender, kind)] = frozenset(names)
        self._allowed = allowed

    def _request_fault(self, sender: Role, req: Request) -> _Fault | None:
        """Params-level rules of requests that the state machine depends on."""
        params = req.params
        if params is not None and type(params) is not dict:
            return _PARAMS, "Invalid params: params must be an object"
        meta = params.get("_meta") if params else None
        if meta is not None:
            if type(meta) is not dict:
                return _PARAMS, "Invalid params: _meta must be an object"
            token = meta.get("progressToken")
            if token is not None:
                if not _is_id(token):
                    return _PARAMS, "Invalid params: progressToken must be a string or an integer"
                tokens = self._their_tokens if sender is not self.role else self._our_tokens
                if token in tokens:
                    return (
                        _INVALID,
                        f"Invalid request: progressToken {token!r} is in use by another request",
                    )
        method = req.method
        if method == "initialize":
            return self._initialize_params_fault(params)
        if method == "elicitation/create":
            return self._elicitation_fault(params, self._client_caps or {})
        if method == "sampling/createMessage":
            return self._sampling_fault(params, self._client_caps or {})
        if method == "logging/setLevel":
            level = params.get("level") if params else None
            if level not in _LOG_RANK:
                return _PARAMS, f"Invalid params: unknown log level {level!r}"
        if method in ("resources/subscribe", "resources/unsubscribe"):
            uri = params.get("uri") if params else None
            if type(uri) is not str:
                return _PARAMS, "Invalid params: uri must be a string"
        if method == "subscriptions/listen":
            return self._listen_params_fault(params)
        return None

    def _sampling_fault(self, params: Any, caps: Mapping[str, Any]) -> _Fault | None:
        """Sampling with tools needs ``sampling.tools``; with context, ``sampling.context``."""
        if type(params) is not dict:
            return _PARAMS, "Invalid params: sampling/createMessage needs params"
        spec = self._spec
        if spec is None or not spec.sampling_tools:
            return None
        if ("tools" in params or "toolChoice" in params) and not capability_met(
            caps, ("sampling", "tools")
        ):
            return (
                _PARAMS,
                "Invalid params: sampling with tools needs the client capability sampling.tools",
            )
        context = params.get("includeContext", "none")
        if context != "none" and not capability_met(caps, ("sampling", "context")):
            return (
                _PARAMS,
                "Invalid params: includeContext needs the client capability sampling.context",
            )
        return None

    def _elicitation_fault(self, params: Any, caps: Mapping[str, Any]) -> _Fault | None:
        """Elicitation modes (2025-11-25 on): form needs ``form`` or ``{}``, url ``url``."""
        if type(params) is not dict:
            return _PARAMS, "Invalid params: elicitation/create needs params"
        spec = self._spec
        if spec is None or not spec.elicitation_modes:
            return None
        elicitation = caps.get("elicitation")
        if not isinstance(elicitation, Mapping):
            return _PARAMS, "Invalid params: the client did not declare elicitation"
        mode = params.get("mode", "form")
        if mode == "url":
            if "url" not in elicitation:
                return (
                    _PARAMS,
                    "Invalid params: URL-mode elicitation needs the capability elicitation.url",
                )
        elif mode == "form":
            if elicitation and "form" not in elicitation:
                return (
                    _PARAMS,
                    "Invalid params: form-mode elicitation needs the capability elicitation.form",
                )
        else:
            return _PARAMS, f"Invalid params: unknown elicitation mode {mode!r}"
        return None

    def _listen_params_fault(self, params: Any) -> _Fault | None:
        wanted = params.get("notifications") if type(params) is dict else None
        if type(wanted) is not dict:
            return (
                _PARAMS,
                "Invalid params: subscriptions/listen needs params.notifications (an object)",
            )
        subs = wanted.get("resourceSubscriptions")
        if subs is not None and (type(subs) is not list or any(type(u) is not str for u in subs)):
            return _PARAMS, "Invalid params: resourceSubscriptions must be a list of strings"
        return None

    def _notification_fault(self, sender: Role, note: Notification) -> _Fault | None:
        params = note.params
        method = note.method
        if method == "notifications/progress":
            return self._progress_fault(sender, params)
        if method == "notifications/message":
            if type(params) is not dict or params.get("level") not in _LOG_RANK:
                return _PARAMS, "Invalid params: notifications/message needs a known level"
            rank = _LOG_RANK[params["level"]]
            if self._era is Era.STATELESS:
                levels = [
                    p.log_level for p in self._requests_of(sender.peer).values() if p.log_level
                ]
                if not levels:
                    return (
                        _INVALID,
                        "Invalid request: notifications/message, but no request set logLevel",
                    )
                if rank < min(_LOG_RANK[level] for level in levels):
                    return _INVALID, "Invalid request: log message below the requested logLevel"
            elif self._log_level is not None and rank < _LOG_RANK[self._log_level]:
                return _INVALID, (
                    f"Invalid request: log message at {params['level']!r} is below the level "
                    f"{self._log_level!r} the client set"
                )
            return None
        if method == "notifications/resources/updated" and self._era is not Era.STATELESS:
            uri = params.get("uri") if type(params) is dict else None
            if type(uri) is not str:
                return _PARAMS, "Invalid params: uri must be a string"
            if not any(
                uri == s or uri.startswith(s.rstrip("/") + "/") for s in self._subscriptions
            ):
                return _INVALID, f"Invalid request: resource {uri!r} was not subscribed to"
            return None
        if (
            self._era is Era.STATELESS
            and sender is Role.SERVER
            and method != "notifications/progress"
        ):
            return self._stream_fault(note)
        return None

    def _requests_of(self, role: Role) -> dict[RequestId, _Pending]:
        """The requests in flight sent by ``role``."""
        return self._ours if role is self.role else self._theirs

    def _progress_fault(self, sender: Role, params: Any) -> _Fault | None:
        if type(params) is not dict:
            return _PARAMS, "Invalid params: notifications/progress needs params"
        token = params.get("progressToken")
        progress: Any = params.get("progress")
        if not _is_id(token):
            return _PARAMS, "Invalid params: progressToken must be a string or an integer"
        if not _is_number(progress):
            return _PARAMS, "Invalid params: progress must be a number"
        total = params.get("total")
        if total is not None and not _is_number(total):
            return _PARAMS, "Invalid params: total must be a number"
        if "message" in params:
            if self._spec is not None and not self._spec.progress_message:
                return _PARAMS, "Invalid params: progress message is not part of 2024-11-05"
            if type(params["message"]) is not str:
                return _PARAMS, "Invalid params: message must be a string"
        # The token belongs to a request sent by the *receiver* of the progress.
        tokens = self._our_tokens if sender is not self.role else self._their_tokens
        rid = tokens.get(token)
        if rid is None:
            return _INVALID, f"Invalid request: progressToken {token!r} names no request in flight"
        pending = self._requests_of(sender.peer)[rid]
        if pending.progress is not None and progress <= pending.progress:
            return _INVALID, (
                f"Invalid request: progress must increase ({progress!r} after {pending.progress!r})"
            )
        return None

    def _stream_fault(self, note: Notification) -> _Fault | None:
        """2026-07-28: server notifications that belong on a listen stream."""
        params = note.params
        meta = params.get("_meta") if type(params) is dict else None
        sid = meta.get(META_SUBSCRIPTION) if type(meta) is dict else None
        requests = self._ours if self.role is Role.CLIENT else self._theirs
        pending = requests.get(sid) if _is_id(sid) else None  # type: ignore[arg-type]
        if pending is None or pending.method != "subscriptions/listen":
            return (
                _INVALID,
                f"Invalid request: {note.method} needs _meta subscriptionId of a listen in flight",
            )
        wanted = pending.params.get("notifications", {}) if pending.params else {}
        if note.method == "notifications/subscriptions/acknowledged":
            if pending.acked:
                return _INVALID, "Invalid request: the subscription was already acknowledged"
            granted = params.get("notifications") if type(params) is dict else None
            if type(granted) is not dict:
                return _PARAMS, "Invalid params: acknowledged needs notifications (an object)"
            for key, value in granted.items():
                if key == "resourceSubscriptions":
                    if type(value) is not list or not set(value) <= set(wanted.get(key) or ()):
                        return (
                            _INVALID,
                            "Invalid request: acknowledged resources that were not requested",
                        )
                elif value and not wanted.get(key):
                    return (
                        _INVALID,
                        f"Invalid request: acknowledged {key!r}, which was not requested",
                    )
            return None
        if not pending.acked:
            return (
                _INVALID,
                f"Invalid request: {note.method} before the subscription's acknowledgement",
            )
        assert pending.listen is not None
        if note.method == "notifications/resources/updated":
            uri = params.get("uri") if type(params) is dict else None
            if uri not in pending.listen:
                return (
                    _INVALID,
                    f"Invalid request: resource {uri!r} is not subscribed on this stream",
                )
        elif note.method not in pending.listen:
            return _INVALID, f"Invalid request: {note.method} was not opted into on this stream"
        return None

    def _apply_notification(self, sender: Role, note: Notification) -> None:
        method = note.method
        params = note.params
        if method == "notifications/initialized":
            self._transition(Trigger.INITIALIZED)
        elif method == "notifications/progress":
            tokens = self._our_tokens if sender is not self.role else self._their_tokens
            rid = tokens[params["progressToken"]]
            self._requests_of(sender.peer)[rid].progress = params["progress"]
        elif method == "notifications/subscriptions/acknowledged":
            sid = params["_meta"][META_SUBSCRIPTION]
            pending = self._requests_of(sender.peer)[sid]
            granted = params["notifications"]
            listen = {_LISTEN_FLAGS[k] for k, v in granted.items() if k in _LISTEN_FLAGS and v}
            listen.update(granted.get("resourceSubscriptions") or ())
            pending.listen = frozenset(listen)
            pending.acked = True

    # ------------------------------------------------------------------ lifecycle

    def _transition(self, trigger: Trigger) -> None:
        try:
            self._state = TRANSITIONS[self._state][trigger]
        except KeyError:  # pragma: no cover - callers check the state first
            raise LocalProtocolError(
                f"{trigger.value} is not possible in state {self._state.value}"
            ) from None

    def _initialize_params_fault(self, params: Any) -> _Fault | None:
        if type(params) is not dict:
            return _PARAMS, "Invalid params: initialize needs params"
        version = params.get("protocolVersion")
        if type(version) is not str:
            return _PARAMS, "Invalid params: initialize needs protocolVersion (a string)"
        if type(params.get("capabilities")) is not dict:
            return _PARAMS, "Invalid params: initialize needs capabilities (an object)"
        if type(params.get("clientInfo")) is not dict:
            return _PARAMS, "Invalid params: initialize needs clientInfo (an object)"
        legacy = self.config.versions_of(Era.INITIALIZE)
        if not legacy:
            return _PARAMS, (
                "Invalid params: this side speaks only the stateless protocol versions "
                f"{', '.join(self.config.versions)}; initialize is not part of them"
            )
        if self.role is Role.CLIENT and version not in legacy:
            return (
                _PARAMS,
                f"Invalid params: protocolVersion {version!r} is not one this client accepts",
            )
        return None

    def _initialize_request(self, req: Request, *, sent: bool) -> None:
        self._init_id = req.id
        self._requested_version = req.params["protocolVersion"]
        self._client_caps = req.params["capabilities"]
        self._era = Era.INITIALIZE
        self._transition(Trigger.INITIALIZE)

    def _check_initialize_result(self, result: Mapping[str, Any]) -> None:
        version = result.get("protocolVersion")
        legacy = self.config.versions_of(Era.INITIALIZE)
        if type(version) is not str:
            raise LocalProtocolError("the initialize result needs protocolVersion (a string)")
        if type(result.get("capabilities")) is not dict:
            raise LocalProtocolError("the initialize result needs capabilities (an object)")
        if type(result.get("serverInfo")) is not dict:
            raise LocalProtocolError("the initialize result needs serverInfo (an object)")
        if self._requested_version in legacy and version != self._requested_version:
            raise LocalProtocolError(
                f"the client asked for {self._requested_version!r}, which this server supports: "
                f"the result must echo it, not {version!r}"
            )
        if version not in legacy:
            raise LocalProtocolError(f"protocolVersion {version!r} is not one this server accepts")

    def _initialize_result(self, result: Mapping[str, Any], *, sent: bool) -> None:
        version = result.get("protocolVersion")
        caps = result.get("capabilities")
        if not sent:
            if type(version) is not str or version not in self.config.versions_of(Era.INITIALIZE):
                raise self._fail(
                    f"the server chose protocol version {version!r}, which this client does not "
                    f"support ({', '.join(self.config.versions_of(Era.INITIALIZE))}): disconnect",
                    _PARAMS,
                )
            if type(caps) is not dict or type(result.get("serverInfo")) is not dict:
                raise self._fail("the initialize result lacks capabilities or serverInfo", _PARAMS)
        assert isinstance(version, str)
        assert isinstance(caps, dict)
        self._spec = VERSIONS[version]
        self._server_caps = caps
        self._transition(Trigger.INITIALIZE_RESULT)
        self._compute_allowed()

    def _enter_stateless(self, spec: VersionSpec) -> None:
        self._era = Era.STATELESS
        self._spec = spec
        if self._state is State.IDLE:
            self._transition(Trigger.STATELESS_REQUEST)
        self._compute_allowed()

    def _probe_result(self, result: Mapping[str, Any]) -> None:
        self._probe_id = None
        supported = result.get("supportedVersions")
        caps = result.get("capabilities")
        if type(supported) is not list or type(caps) is not dict:
            raise self._fail(
                "the server/discover result lacks supportedVersions or capabilities", _PARAMS
            )
        self._server_caps = caps
        self._choose_modern(supported)

    def _choose_modern(self, supported: Any) -> None:
        mine = self.config.versions_of(Era.STATELESS)
        common = [v for v in mine if isinstance(supported, list) and v in supported]
        if not common:
            raise self._fail(
                f"the server supports {supported!r}; this client speaks none of them ({mine})",
                ErrorCode.UNSUPPORTED_PROTOCOL_VERSION,
            )
        self._spec = VERSIONS[common[0]]
        self._era = Era.STATELESS
        self._transition(Trigger.PROBE_MODERN)
        self._compute_allowed()

    def _probe_error(self, error: ErrorResponse) -> None:
        self._probe_id = None
        if error.code == ErrorCode.UNSUPPORTED_PROTOCOL_VERSION and isinstance(error.data, dict):
            self._choose_modern(error.data.get("supported"))
        else:
            self._decide_legacy()

    def _decide_legacy(self) -> None:
        if not self.config.versions_of(Era.INITIALIZE):
            raise self._fail(
                "the server does not speak the stateless era, and this client speaks nothing else"
            )
        self._era = Era.INITIALIZE
        self._transition(Trigger.PROBE_LEGACY)

    def fall_back_to_initialize(self) -> None:
        """Give up the ``server/discover`` probe (the adapter's timeout ran out): the era
        becomes the initialize era, and a late answer to the probe will be dropped.

        Raises :class:`LocalProtocolError` when no probe is in flight.
        """
        rid = self._probe_id
        if rid is None or self._state is not State.PROBING:
            raise LocalProtocolError("no server/discover probe is in flight")
        if not self.config.versions_of(Era.INITIALIZE):
            raise LocalProtocolError("this client speaks no initialize-era version to fall back to")
        self._retire_ours(rid)
        self._cancelled_ours[rid] = None
        self._probe_id = None
        self._decide_legacy()

    def _after_success(self, method: str, params: Any) -> None:
        """Effects of a successful answer to a request (initialize era)."""
        if method == "resources/subscribe":
            self._subscriptions.add(params["uri"])
        elif method == "resources/unsubscribe":
            self._subscriptions.discard(params["uri"])
        elif method == "logging/setLevel":
            self._log_level = params["level"]

    def _retire_ours(self, rid: RequestId) -> None:
        pending = self._ours.pop(rid)
        if pending.token is not None:
            self._our_tokens.pop(pending.token, None)

    def _retire_theirs(self, rid: RequestId) -> None:
        pending = self._theirs.pop(rid)
        if pending.token is not None:
            self._their_tokens.pop(pending.token, None)

    # ------------------------------------------------------------------ 2026 helpers

    def retry_request(
        self,
        event: InputRequired,
        input_responses: Mapping[str, Any],
        *,
        id: RequestId | None = None,
    ) -> Request:
        """The retry of an ``input_required`` answer: a new id, the original params,
        ``inputResponses`` under the server's keys, and ``requestState`` echoed exactly.

        Raises :class:`LocalProtocolError` when a key of ``inputRequests`` is not answered
        or an answer has no matching request.
        """
        asked = set(event.input_requests)
        given = set(input_responses)
        if given - asked:
            raise LocalProtocolError(
                f"inputResponses for keys that were not asked: {sorted(given - asked)}"
            )
        params = dict(event.request.params or {})
        params.pop("inputResponses", None)
        params.pop("requestState", None)
        if input_responses:
            params["inputResponses"] = dict(input_responses)
        if event.request_state is not None:
            params["requestState"] = event.request_state
        return Request(
            id=self.next_request_id() if id is None else id,
            method=event.request.method,
            params=params,
        )
