"""The :class:`Connection`: the MCP state machine, both eras, both roles.

Bytes go in with :meth:`Connection.receive_data`; events come out of
:meth:`Connection.next_event`; :meth:`Connection.send` checks an event against the protocol
and returns the bytes to write. Every rule is enforced in both directions: what we send
raises :class:`LocalProtocolError` (and changes nothing), what we receive comes out as an
:class:`InvalidMessage` carrying the answer the protocol defines. Where the text asks of
the peer only a SHOULD (or a lower-case "should") and leaves the message to the receiver,
what we receive is accepted unless ``Config.strict`` (docs/connection.rst, "Every refusal
of the peer's messages"); what we send is held to it always.

Speed: the methods each side may use are precomputed whenever the state changes (the
negotiated capabilities cannot change within a session), so the common path of a message
is a handful of dict and set look-ups; the rarer rules (progress, logging, subscriptions,
elicitation modes, …) run only for the methods they concern.
"""

from __future__ import annotations

import copy
from collections import deque
from collections.abc import Mapping
from typing import Any, Final

import orjson

from ._checks import (
    LOG_RANK,
    Fault,
    elicitation_fault,
    initialize_params_fault,
    input_required_fault,
    is_id,
    listen_params_fault,
    progress_params_fault,
    required_params_fault,
    sampling_fault,
    undeclared_is_soft,
)
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
from ._ids import IdHistory, RecentIds, Subscriptions
from ._jsonrpc import (
    ERROR_RESPONSE,
    NOTIFICATION,
    REQUEST,
    RESPONSE,
    decode,
    encode,
    encode_batch,
    invalid,
    sniff,
)
from ._sentinels import NEED_DATA, NeedData
from ._state import (
    ANY,
    LIFECYCLE_METHODS,
    NOTIFICATIONS_ALLOWED,
    REQUESTS_ALLOWED,
    TRANSITIONS,
    Allowed,
    Every,
    Role,
    State,
    Trigger,
)
from ._versions import (
    POLICIES,
    UNDECIDED,
    VERSIONS,
    Direction,
    Era,
    EraPolicy,
    Kind,
    VersionSpec,
    capability_met,
)

__all__ = ["Connection", "NextEvent"]

#: What :meth:`Connection.next_event` returns.
NextEvent = Event | NeedData

# The enum members the code compares against, as module constants: a compiled build (mypyc)
# reads these directly, where ``Era.STATELESS`` costs a class attribute lookup each time
# (about 0.1 µs against 1 ns here; a compiled round trip is about 12% faster for it).
_ERA_INITIALIZE: Final = Era.INITIALIZE
_ERA_STATELESS: Final = Era.STATELESS
_KIND_NOTIFICATION: Final = Kind.NOTIFICATION
_KIND_REQUEST: Final = Kind.REQUEST
_ROLE_CLIENT: Final = Role.CLIENT
_ROLE_SERVER: Final = Role.SERVER
_STATE_IDLE: Final = State.IDLE
_TRIGGER_INITIALIZE: Final = Trigger.INITIALIZE
_TRIGGER_INITIALIZED: Final = Trigger.INITIALIZED
_TRIGGER_INITIALIZE_ERROR: Final = Trigger.INITIALIZE_ERROR
_TRIGGER_INITIALIZE_RESULT: Final = Trigger.INITIALIZE_RESULT
_TRIGGER_PROBE: Final = Trigger.PROBE
_TRIGGER_PROBE_LEGACY: Final = Trigger.PROBE_LEGACY
_TRIGGER_PROBE_MODERN: Final = Trigger.PROBE_MODERN
_TRIGGER_STATELESS_REQUEST: Final = Trigger.STATELESS_REQUEST

META_VERSION: Final = "io.modelcontextprotocol/protocolVersion"
META_CAPABILITIES: Final = "io.modelcontextprotocol/clientCapabilities"
META_CLIENT_INFO: Final = "io.modelcontextprotocol/clientInfo"
META_LOG_LEVEL: Final = "io.modelcontextprotocol/logLevel"
META_SUBSCRIPTION: Final = "io.modelcontextprotocol/subscriptionId"

# Listen opt-in flag → the notification it admits (2026-07-28).
_LISTEN_FLAGS: Final = {
    "toolsListChanged": "notifications/tools/list_changed",
    "promptsListChanged": "notifications/prompts/list_changed",
    "resourcesListChanged": "notifications/resources/list_changed",
}
_DIRECTION_OF: Final = {
    _ROLE_CLIENT: Direction.CLIENT_TO_SERVER,
    _ROLE_SERVER: Direction.SERVER_TO_CLIENT,
}
# Requests whose params are checked: those the schema of some version requires params
# of, and those whose params the state machine looks into; notifications likewise.
_STATE_READ_REQUESTS: Final = frozenset(
    {
        "initialize",
        "elicitation/create",
        "sampling/createMessage",
        "subscriptions/listen",
        "resources/subscribe",  # (a server bounds its peer's subscriptions)
    }
)
_CHECKED_REQUESTS: Final = _STATE_READ_REQUESTS.union(
    *(spec.required_params for spec in VERSIONS.values())
)
_CHECKED_NOTIFICATIONS: Final = frozenset(
    {
        "notifications/initialized",
        "notifications/progress",
        "notifications/message",
        "notifications/resources/updated",
        "notifications/subscriptions/acknowledged",
        "notifications/tools/list_changed",
        "notifications/prompts/list_changed",
        "notifications/resources/list_changed",
    }
)
# The rows of the lifecycle tables where the text states only a SHOULD NOT of the sender,
# and the receiver may serve what it sends: what the peer may send there, unless
# ``Config.strict``. (What we send keeps the tables' rows.)
_LENIENT_REQUESTS: Final[Mapping[tuple[State, Role], Allowed]] = {
    # "The server SHOULD NOT send requests other than pings and logging before receiving
    # the initialized notification" (2024-11-05 to 2025-11-25, Basic > Lifecycle >
    # Initialization): once its initialize result is out, the version and both sides'
    # capabilities are agreed, and a client can check and serve the request.
    (State.INITIALIZED, Role.SERVER): ANY,
}
_INITIALIZE_POLICY: Final = POLICIES[Era.INITIALIZE]
_STATELESS_POLICY: Final = POLICIES[Era.STATELESS]

_INVALID: Final = ErrorCode.INVALID_REQUEST
_PARAMS: Final = ErrorCode.INVALID_PARAMS
_NOT_FOUND: Final = ErrorCode.METHOD_NOT_FOUND
_OPTS: Final = orjson.OPT_APPEND_NEWLINE
# What a refused batch cannot have changed (configuration, buffers), so it is not saved.
_UNSAVED: Final = frozenset(
    {
        "config",
        "role",
        "_specs",
        "_peer",
        "_legacy",
        "_modern",
        "_framer",
        "_queue",
        "_max_in_flight",
    }
)
# Everything else: what a refused batch saves and puts back. Named, not read from
# ``vars(self)``: a compiled Connection (mypyc, see docs/performance.rst) has no ``__dict__``.
# tests/test_connection_local_errors.py checks that the two sets name every attribute.
_SAVED: Final = (
    "_state", "_eof", "_closed_reported", "_error", "_policy", "_spec", "_batches",
    "_client_caps", "_server_caps", "_requested_version", "_probe_id", "_ours", "_theirs",
    "_our_ids", "_their_ids", "_our_tokens", "_their_tokens", "_cancelled_ours",
    "_cancelled_theirs", "_cancelled_tokens", "_owed_errors", "_subscriptions", "_log_level",
    "_their_bytes", "_log_ranks_ours", "_log_ranks_theirs", "_our_ranks",
    "_request_caps", "_listens", "_next_id", "_gated", "_own_requests", "_own_notes",
    "_peer_requests", "_peer_notes", "_known",
)  # fmt: skip

# A request in flight: (method, params, progress token or None, the bytes it counts against
# max_in_flight_bytes: for the peer's requests of at least _COUNTED bytes their size, else 0).
_Pending = tuple[str, Any, Any, int]
# The peer's requests under this size are not counted against max_in_flight_bytes (so the
# common small request costs no arithmetic): max_in_flight bounds their bytes, at most
# 4,096 x 4 KiB = 16 MiB at the defaults.
_COUNTED: Final = 4096


class _Listen:
    """A ``subscriptions/listen`` stream in flight (2026-07-28)."""

    __slots__ = ("granted", "wanted")

    def __init__(self, wanted: Mapping[str, Any]) -> None:
        self.wanted = wanted
        self.granted: frozenset[str] | None = None  # None until acknowledged


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
        # The version tables, with the application's methods (Config.methods) added.
        self._specs: Mapping[str, VersionSpec] = cfg.specs
        self._peer = role.peer
        self._legacy = cfg.versions_of(_ERA_INITIALIZE)
        self._modern = cfg.versions_of(_ERA_STATELESS)
        self._framer = LineFramer(cfg.max_message_size)
        self._max_in_flight = cfg.max_in_flight
        self._queue: deque[Event] = deque()
        self._state = _STATE_IDLE
        self._eof = False
        self._closed_reported = False
        self._error: RemoteProtocolError | None = None
        # What differs by era (EraPolicy): read where the behaviour differs.
        self._policy: EraPolicy = UNDECIDED
        self._spec: VersionSpec | None = None
        self._batches = False
        self._client_caps: Mapping[str, Any] | None = None
        self._server_caps: Mapping[str, Any] | None = None
        if role is _ROLE_SERVER:
            self._server_caps = cfg.capabilities
        else:
            self._client_caps = cfg.capabilities
        if not self._legacy:
            self._policy = _STATELESS_POLICY
            self._spec = self._specs[self._modern[0]]
        elif not self._modern:
            self._policy = _INITIALIZE_POLICY
        self._requested_version: str | None = None
        self._probe_id: RequestId | None = None
        # Requests in flight: ours (the peer owes an answer) and theirs (we owe one).
        self._ours: dict[RequestId, _Pending] = {}
        self._theirs: dict[RequestId, _Pending] = {}
        self._their_bytes = 0  # the sizes of the requests in _theirs
        self._our_ids = IdHistory(cfg.id_memory, cfg.id_memory_bytes)
        self._their_ids = IdHistory(cfg.id_memory, cfg.id_memory_bytes)
        # progress token → [request id, last progress value or None]
        self._our_tokens: dict[Any, list[Any]] = {}
        self._their_tokens: dict[Any, list[Any]] = {}
        # Bounded in entries and in bytes of ids, oldest forgotten first, in O(1).
        memory = cfg.id_memory_bytes
        self._cancelled_ours = RecentIds(cfg.cancelled_memory, memory)
        self._cancelled_theirs = RecentIds(cfg.max_in_flight, memory)
        # progress tokens of our cancelled requests
        self._cancelled_tokens = RecentIds(cfg.cancelled_memory, memory)
        # replies owed to refused requests: id → how many (a bad batch may repeat an id)
        self._owed_errors = RecentIds(cfg.max_in_flight, memory)
        self._subscriptions = Subscriptions()
        self._log_level: str | None = None
        # 2026-07-28: per request of the client, its capabilities and logLevel.
        self._request_caps: dict[RequestId, tuple[Mapping[str, Any], str | None]] = {}
        # 2026-07-28: how many requests in flight (not listens) ask for each log level (by
        # rank), so a log message is checked without a walk over them; ours by id.
        self._log_ranks_ours = [0] * len(LOG_RANK)
        self._log_ranks_theirs = [0] * len(LOG_RANK)
        self._our_ranks: dict[RequestId, int] = {}
        self._listens: dict[RequestId, _Listen] = {}
        self._next_id = 0
        self._gated: dict[tuple[Role, Kind], frozenset[str]] = {}
        self._own_requests: frozenset[str] = frozenset()
        self._own_notes: frozenset[str] = frozenset()
        self._peer_requests: frozenset[str] = frozenset()
        self._peer_notes: frozenset[str] = frozenset()
        # Every method of the configured versions (a lifecycle set names no other).
        self._known = frozenset(m for v in cfg.versions for m in self._specs[v].methods)
        self._refresh()

    # ------------------------------------------------------------------ properties

    @property
    def state(self) -> State:
        """The lifecycle state of the session."""
        return self._state

    @property
    def era(self) -> Era | None:
        """The era of the session, or ``None`` while it is undecided (a side that speaks
        both eras, before the first exchange; see :meth:`fall_back_to_initialize`)."""
        return self._policy.era

    @property
    def protocol_version(self) -> str | None:
        """The negotiated protocol version (stateless era: the one this client sends, or
        the newest this server accepts), or ``None`` before the handshake."""
        return self._spec.version if self._spec is not None else None

    @property
    def spec(self) -> VersionSpec | None:
        """The negotiated version's record (:class:`~mcp_sansio._versions.VersionSpec`, with
        the application's :attr:`Config.methods` added), or ``None`` before the handshake.
        What differs by version is a field of it; what differs by era, of its ``policy``."""
        return self._spec

    @property
    def policy(self) -> EraPolicy:
        """What differs by era, as data (:class:`~mcp_sansio._versions.EraPolicy`): the
        negotiated era's policy, or ``UNDECIDED`` while a side of both eras has not chosen."""
        return self._policy

    @property
    def client_capabilities(self) -> Mapping[str, Any] | None:
        """The client's capabilities: from ``initialize`` (initialize era), or a client's
        own from its configuration; ``None`` when not known."""
        return self._client_caps

    @property
    def server_capabilities(self) -> Mapping[str, Any] | None:
        """The server's capabilities: from the ``initialize`` or ``server/discover``
        result, or a server's own from its configuration; ``None`` when not known."""
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

    def owes(self, request_id: RequestId) -> bool:
        """Whether the peer's request ``request_id`` still waits for our answer: one lookup,
        where :attr:`owed` copies the whole table."""
        return request_id in self._theirs

    def next_request_id(self) -> int:
        """An integer id that no request of ours in flight (and, in the initialize era,
        none in this session) has used."""
        while self._next_id in self._our_ids or self._next_id in self._ours:
            self._next_id += 1
        value = self._next_id
        self._next_id += 1
        return value

    # ------------------------------------------------------------------ receiving

    def receive_data(self, data: bytes | bytearray | memoryview) -> None:
        """Buffer bytes from the peer; ``b""`` means the peer closed its side. A bytearray
        or memoryview is copied, so the caller may reuse it.

        Raises :class:`LocalProtocolError` when bytes are fed after ``b""``.
        """
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
                return self._oversized()
            decoded = decode(line, self._batches)
            cls = type(decoded)
            if cls is REQUEST:
                event: Event | None = self._receive_request(decoded, len(line))  # type: ignore[arg-type]
            elif cls is RESPONSE:
                event = self._receive_response(decoded)  # type: ignore[arg-type]
            elif cls is list:
                self._receive_batch(decoded, len(line))  # type: ignore[arg-type]
                event = self._queue.popleft() if self._queue else None
            else:
                event = self._receive(decoded)  # type: ignore[arg-type]
            if event is not None:
                return event

    def _closed(self) -> Event:
        if not self._closed_reported:
            self._closed_reported = True
            if self._framer.pending_partial():
                return invalid(
                    ErrorCode.PARSE_ERROR,
                    "Parse error: the peer closed in the middle of a message",
                    b"",
                    reply=False,
                )
        return ConnectionClosed(unanswered=tuple(self._ours))

    def _oversized(self) -> Event:
        """A line over ``max_message_size``, dropped by the framer: told apart by what is
        left of its two ends (:func:`~mcp_sansio._jsonrpc.sniff`). An answer to our request
        ends that request, with no reply (JSON-RPC answers no response); a request whose id
        could be read is refused to that id; anything else is refused to ``null``, as
        JSON-RPC 2.0 says of an Invalid Request whose id cannot be detected."""
        size, head, tail = self._framer.dropped
        kind, rid = sniff(head, tail)
        over = f"{size} bytes, larger than max_message_size ({self._framer.max_size} bytes)"
        if kind == "response":
            event = self._receive(
                invalid(_INVALID, f"Invalid response: {over}; dropped", head, reply=False, id=rid)
            )
        elif kind == "request":
            event = self._receive(
                invalid(_INVALID, f"Invalid request: {over}; dropped", head, reply=True, id=rid)
            )
        else:
            return invalid(_INVALID, f"Invalid request: {over}; dropped", head, reply=True)
        assert event is not None  # _receive passes an InvalidMessage on
        return event

    def _fail(self, message: str, code: int = _INVALID) -> RemoteProtocolError:
        self._error = RemoteProtocolError(message, code)
        return self._error

    def _receive_batch(self, items: list[Message | InvalidMessage], size: int) -> None:
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
                self._their_ids.add(item.id) if item.id not in self._their_ids else None
                self._queue.append(
                    self._reject(item, _INVALID, "Invalid request: initialize must not be batched")
                )
                continue
            # Each member counts its share of the batch against max_in_flight_bytes.
            event = (
                self._receive_request(item, size // len(items))
                if type(item) is Request
                else self._receive(item)
            )
            if event is not None:
                self._queue.append(event)

    def _receive(self, msg: Message | InvalidMessage) -> Event | None:
        cls = type(msg)
        if cls is Request:
            return self._receive_request(msg, 0)  # type: ignore[arg-type]
        if cls is Notification:
            return self._receive_notification(msg)  # type: ignore[arg-type]
        if cls is Response or cls is ErrorResponse:
            return self._receive_response(msg)  # type: ignore[arg-type]
        assert isinstance(msg, InvalidMessage)
        rid = msg.id
        if rid is not None:
            if msg.reply is not None:
                if rid in self._theirs:
                    # Its id is that of a request in flight: an answer under that id would
                    # be taken for the answer to the other request, so answer to null.
                    reply = ErrorResponse(id=None, code=msg.code, message=msg.message)
                    return InvalidMessage(
                        code=msg.code, message=msg.message, reply=reply, raw=msg.raw
                    )
                self._remember_owed(rid)
                if self._policy.ids_unique_per_session and rid not in self._their_ids:
                    self._their_ids.add(rid)
            elif rid in self._ours:
                # A malformed answer to our request: the request is over.
                self._retire_ours(rid)
        return msg

    def _reject(self, req: Request, code: int, message: str, data: Any = None) -> InvalidMessage:
        """An InvalidMessage answering the peer's request ``req``."""
        self._remember_owed(req.id)
        reply = (
            ErrorResponse(id=req.id, code=code, message=message)
            if data is None
            else ErrorResponse(id=req.id, code=code, message=message, data=data)
        )
        return InvalidMessage(code=code, message=message, reply=reply, id=req.id)

    def _remember_owed(self, request_id: RequestId) -> None:
        owed = self._owed_errors
        owed.put(request_id, owed.get(request_id) + 1)

    def _receive_request(self, req: Request, size: int) -> Event:
        rid = req.id
        theirs = self._theirs
        if rid in theirs:
            message = f"Invalid request: duplicate id {rid!r}: a request with this id is in flight"
            return InvalidMessage(
                code=_INVALID,
                message=message,
                reply=ErrorResponse(id=None, code=_INVALID, message=message),
            )
        if self.role is _ROLE_SERVER and (
            self._policy.request_meta
            or (
                self._state is _STATE_IDLE
                and self._modern
                and (
                    not self._legacy
                    or (req.method not in ("initialize", "ping") and _looks_stateless(req.params))
                )
            )
        ):
            return self._receive_stateless_request(req, size)
        if rid in self._their_ids:
            return self._reject(
                req, _INVALID, f"Invalid request: id {rid!r} was already used in this session"
            )
        self._their_ids.add(rid)
        if len(theirs) >= self._max_in_flight:
            return self._reject(
                req, _INVALID, f"Invalid request: more than {self._max_in_flight} in flight"
            )
        if size < _COUNTED:
            size = 0
        elif self._their_bytes and self._their_bytes + size > self.config.max_in_flight_bytes:
            return self._over_in_flight_bytes(req)
        method = req.method
        if method not in self._peer_requests:
            return self._reject(req, *self._method_fault(self._peer, _KIND_REQUEST, method))
        params = req.params
        token = None
        if params and "_meta" in params:
            fault, token = self._meta_fault(params["_meta"], self._their_tokens)
            if fault is not None:
                return self._reject(req, *fault)
        if method in _CHECKED_REQUESTS:
            fault = self._request_fault(method, params, self.config.strict)
            if fault is not None:
                return self._reject(req, *fault)
        theirs[rid] = (method, params, token, size)
        if size:
            self._their_bytes += size
        if token is not None:
            self._their_tokens[token] = [rid, None]
        if method == "initialize":
            self._initialize_request(params)
        return req

    def _receive_stateless_request(self, req: Request, size: int) -> Event:
        """A server's checks of one 2026-07-28 request (the first one decides the era)."""
        modern = self._modern
        params = req.params
        if req.method == "initialize" and not _looks_stateless(params):
            # A legacy client's handshake (one carrying 2026 ``_meta`` asks for a method
            # that no longer exists: -32601 below).
            requested = params.get("protocolVersion") if params else None
            return self._reject(
                req,
                _PARAMS,
                f"Unsupported protocol version: this server speaks {', '.join(modern)}, "
                "which have no initialize",
                {"supported": list(modern), "requested": requested},
            )
        meta = params.get("_meta") if params else None
        if type(meta) is not dict:
            return self._reject(
                req, _PARAMS, "Invalid params: params._meta is required on every request"
            )
        version = meta.get(META_VERSION)
        if type(version) is not str:
            return self._reject(
                req, _PARAMS, f"Invalid params: _meta[{META_VERSION!r}] must be a string"
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
                req, _PARAMS, f"Invalid params: _meta[{META_CAPABILITIES!r}] must be an object"
            )
        info = meta.get(META_CLIENT_INFO)
        if info is not None and type(info) is not dict:
            return self._reject(
                req, _PARAMS, f"Invalid params: _meta[{META_CLIENT_INFO!r}] must be an object"
            )
        level = meta.get(META_LOG_LEVEL)
        if level is not None and (type(level) is not str or level not in LOG_RANK):
            return self._reject(req, _PARAMS, f"Invalid params: unknown logLevel {level!r}")
        if self._state is _STATE_IDLE:
            self._enter_stateless(self._specs[modern[0]])
        rid = req.id
        if len(self._theirs) >= self._max_in_flight:
            return self._reject(
                req, _INVALID, f"Invalid request: more than {self._max_in_flight} in flight"
            )
        if size < _COUNTED:
            size = 0
        elif self._their_bytes and self._their_bytes + size > self.config.max_in_flight_bytes:
            return self._over_in_flight_bytes(req)
        method = req.method
        if method not in self._peer_requests:
            return self._reject(req, *self._method_fault(_ROLE_CLIENT, _KIND_REQUEST, method))
        fault: Fault | None = None
        token: Any = None
        if "progressToken" in meta:
            fault, token = self._meta_fault(meta, self._their_tokens)
        if fault is None and method in _CHECKED_REQUESTS:
            fault = self._request_fault(method, params, self.config.strict)
        if fault is not None:
            return self._reject(req, *fault)
        self._theirs[rid] = (method, params, token, size)
        if size:
            self._their_bytes += size
        if token is not None:
            self._their_tokens[token] = [rid, None]
        self._request_caps[rid] = (caps, level)
        if method == "subscriptions/listen":
            self._listens[rid] = _Listen(params["notifications"])
        elif level is not None:
            self._log_ranks_theirs[LOG_RANK[level]] += 1
        return req

    def _over_in_flight_bytes(self, req: Request) -> InvalidMessage:
        """Refuse a request that would take the peer's requests in flight past
        ``max_in_flight_bytes`` (one request alone is always accepted; those under
        ``_COUNTED`` bytes are not counted)."""
        limit = self.config.max_in_flight_bytes
        return self._reject(
            req, _INVALID, f"Invalid request: more than {limit} bytes of requests in flight"
        )

    def _meta_fault(self, meta: Any, tokens: dict[Any, list[Any]]) -> tuple[Fault | None, Any]:
        """The request ``_meta`` object and its progress token (unique among requests in
        flight of the same sender)."""
        if type(meta) is not dict:
            return (_PARAMS, "Invalid params: _meta must be an object"), None
        token = meta.get("progressToken")
        if token is None:
            return None, None
        cls = type(token)
        if cls is not str and cls is not int:  # is_id(), inline: every request, both ways
            return (_PARAMS, "Invalid params: progressToken must be a string or an integer"), None
        if token in tokens:
            return (
                _INVALID,
                f"Invalid request: progressToken {token!r} is in use by another request",
            ), None
        return None, token

    def _receive_notification(self, note: Notification) -> Event | None:
        method = note.method
        if method == "notifications/cancelled":
            return self._peer_cancelled(note)
        peer = self._peer
        if method not in self._peer_notes:
            code, message = self._method_fault(peer, _KIND_NOTIFICATION, method)
            return InvalidMessage(code=code, message=message, reply=None)
        if method in _CHECKED_NOTIFICATIONS:
            fault = self._notification_fault(peer, note)
            if fault is not None:
                if self._late_for_cancelled(note):
                    return None  # it crossed our cancel on the wire: dropped, like a late answer
                return InvalidMessage(code=fault[0], message=fault[1], reply=None)
            self._apply_notification(peer, note)
        return note

    def _late_for_cancelled(self, note: Notification) -> bool:
        """Whether a refused notification belongs to a request we cancelled (progress on its
        token, a 2026 stream notification of its listen)."""
        params = note.params or {}
        if note.method == "notifications/progress":
            token = params.get("progressToken")
            return is_id(token) and token in self._cancelled_tokens
        meta = params.get("_meta")
        sid = meta.get(META_SUBSCRIPTION) if type(meta) is dict else None
        return is_id(sid) and sid in self._cancelled_ours

    def _peer_cancelled(self, note: Notification) -> Event | None:
        """The peer cancels one of its requests; malformed or unknown cancels, and cancels
        of ``initialize``, are ignored (no event), as the specification says."""
        params = note.params
        rid = params.get("requestId") if params else None
        if not is_id(rid):
            return None
        pending = self._theirs.get(rid)  # type: ignore[arg-type]
        if pending is not None:
            if pending[0] == "initialize":
                return None
            self._retire_theirs(rid)  # type: ignore[arg-type]
            if pending[0] == "resources/subscribe":
                self._release_subscription(pending[1])
            self._cancelled_theirs.put(rid)
            return note
        if self.role is _ROLE_CLIENT and self._policy.cancel_ends_listen:
            # 2026: a stdio server ends a listen stream with notifications/cancelled.
            ours = self._ours.get(rid)  # type: ignore[arg-type]
            if ours is not None and ours[0] == "subscriptions/listen":
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
                self._cancelled_ours.discard(rid)
                return None  # the late answer to a request we cancelled: dropped
            return InvalidMessage(
                code=_INVALID,
                message=f"Invalid response: id {rid!r} answers no request of ours in flight",
                reply=None,
                id=rid,
            )
        self._retire_ours(rid)
        method = pending[0]
        if type(msg) is ERROR_RESPONSE:
            if method == "initialize":
                self._transition(_TRIGGER_INITIALIZE_ERROR)
            elif rid == self._probe_id:
                self._probe_error(msg)
            return msg
        assert type(msg) is RESPONSE
        policy = self._policy
        if policy.result_type:
            return self._stateless_result(msg, pending)
        if method in policy.effectful:
            if method == "initialize":
                self._initialize_result(msg.result, sent=False)
            else:
                self._after_success(method, pending[1])
        elif rid == self._probe_id:
            self._probe_result(msg.result)
        return msg

    def _stateless_result(self, msg: Response, pending: _Pending) -> Event:
        result = msg.result
        rid = msg.id
        result_type = result.get("resultType", "complete")
        if result_type == "complete":
            if pending[0] == "server/discover" and type(result.get("capabilities")) is dict:
                # A stateless-only client learns the server's capabilities here too.
                self._server_caps = result["capabilities"]
                self._compute_gates()
                self._refresh()
            return msg
        if result_type != "input_required":
            return InvalidMessage(
                code=_INVALID,
                message=f"Invalid response: unknown resultType {result_type!r}",
                reply=None,
                id=rid,
            )
        method, params, _, _ = pending
        assert self._spec is not None
        meta = params.get("_meta") if params else None
        caps = meta.get(META_CAPABILITIES) if type(meta) is dict else None
        fault = input_required_fault(
            self._spec, method, result, caps or {}, strict=self.config.strict
        )
        if fault is not None:
            return InvalidMessage(
                code=_INVALID, message=f"Invalid response: {fault[1]}", reply=None, id=rid
            )
        return InputRequired(
            id=rid, result=result, request=Request(id=rid, method=method, params=params)
        )

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
        message: Message | None
        if cls is REQUEST:
            message, plan = self._check_request(event)
        elif cls is RESPONSE or cls is ERROR_RESPONSE:
            message, plan = self._check_response(event)
        elif cls is NOTIFICATION:
            message, plan = self._check_notification(event)
        elif cls is Batch:
            return self._send_batch(event)
        else:
            raise LocalProtocolError(f"cannot send a {cls.__name__} event")
        if message is None:
            data = b""
        else:
            try:
                data = encode(message)
            except (TypeError, orjson.JSONEncodeError) as exc:
                raise LocalProtocolError(f"not JSON-serialisable: {exc}") from None
        plan[0](*plan[1:])
        return data

    # The _check methods and _send_batch take the application's event as ``Any``: its fields
    # may hold anything until checked here, and a compiled build (mypyc) would otherwise
    # turn a field of the wrong type into a TypeError where LocalProtocolError is promised.
    def _send_batch(self, batch: Any) -> bytes:
        if not self._batches:
            raise LocalProtocolError("JSON-RPC batches exist only in protocol version 2025-03-26")
        events = batch.events
        if not isinstance(events, (tuple, list)):
            raise LocalProtocolError("a batch's events must be a sequence of messages")
        if not events:
            raise LocalProtocolError("a batch must not be empty")
        if any(type(e) not in (Request, Notification, Response, ErrorResponse) for e in events):
            raise LocalProtocolError("a batch holds only requests, notifications and answers")
        if len({type(e) in (Request, Notification) for e in events}) > 1:
            raise LocalProtocolError("a batch holds requests and notifications, or responses")
        ids = [(type(e.id), e.id) for e in events if type(e) is not Notification and is_id(e.id)]
        if len(set(ids)) != len(ids):
            raise LocalProtocolError("a batch must not repeat an id")
        if any(
            type(e) is Request and type(e.method) is str and e.method == "initialize"
            for e in events
        ):
            raise LocalProtocolError("initialize must not be batched")
        # Each member is checked against the state the members before it leave (two
        # requests with one progress token, or progress that does not increase, are
        # caught); if any member is refused, the state is put back as it was.
        saved = copy.deepcopy([getattr(self, name) for name in _SAVED])
        try:
            messages = []
            for e in events:
                message, plan = self._check(e)
                plan[0](*plan[1:])
                if message is not None:
                    messages.append(message)
            try:
                return encode_batch(messages) if messages else b""
            except (TypeError, orjson.JSONEncodeError) as exc:
                raise LocalProtocolError(f"not JSON-serialisable: {exc}") from None
        except BaseException:
            for name, value in zip(_SAVED, saved, strict=True):
                setattr(self, name, value)
            raise

    def _check(self, event: Any) -> tuple[Message | None, tuple[Any, ...]]:
        """Check an outgoing message without changing anything. Returns the message to
        write (``None`` for nothing) and the plan that carries it out: ``(method, *arguments)``."""
        cls = type(event)
        if cls is Request:
            return self._check_request(event)
        if cls is Notification:
            return self._check_notification(event)
        return self._check_response(event)

    def _forget_cancelled(self, rid: RequestId) -> None:
        self._cancelled_theirs.discard(rid)

    def _forget_owed(self, rid: RequestId) -> None:
        owed = self._owed_errors
        count = owed.get(rid)
        if count > 1:
            owed.put(rid, count - 1)
        else:
            owed.discard(rid)

    def _nothing(self) -> None:
        return None

    def _check_request(self, req: Any) -> tuple[Message, tuple[Any, ...]]:
        rid = req.id
        method = req.method
        if type(rid) is not int and type(rid) is not str:
            raise LocalProtocolError(f"request id must be a string or an integer, not {rid!r}")
        if type(method) is not str:
            raise LocalProtocolError("method must be a string")
        if self._eof:
            raise LocalProtocolError("the peer has closed: no new requests can be answered")
        if rid in self._ours:
            raise LocalProtocolError(f"id {rid!r} is already in flight")
        if rid in self._cancelled_ours.entries:  # (hot: no __contains__ call)
            raise LocalProtocolError(
                f"id {rid!r} was cancelled and its late answer may still arrive: use another"
            )
        if self._policy.ids_unique_per_session and rid in self._our_ids:
            raise LocalProtocolError(f"id {rid!r} was already used in this session")
        params = _params_dict(req.params)
        trigger: Trigger | None = None
        policy = self._policy
        if self._state is _STATE_IDLE and self.role is _ROLE_CLIENT and method != "ping":
            if policy.probe:
                if method == "server/discover":
                    trigger = _TRIGGER_PROBE
                elif method != "initialize":
                    raise LocalProtocolError(
                        "this client speaks both eras: send server/discover (or initialize) first"
                    )
            elif policy.request_meta:
                trigger = _TRIGGER_STATELESS_REQUEST
        commit = self._commit_request
        if policy.request_meta or trigger is not None:
            if self.role is _ROLE_SERVER and not policy.server_requests:
                raise LocalProtocolError("a 2026-07-28 server never sends requests")
            commit = self._commit_stateless_request
            params = self._fill_meta(params)
            spec = self._spec or self._specs[self._modern[0]]
            rule = spec.methods.get(method)
            if rule is None or rule.kind is not _KIND_REQUEST:
                raise LocalProtocolError(
                    f"{method!r} is not a request of protocol version {spec.version}"
                )
            # (In IDLE the first request opens the session; its gates follow from it.)
            if self._state is not _STATE_IDLE and method not in self._own_requests:
                code, message = self._method_fault(self.role, _KIND_REQUEST, method)
                raise LocalProtocolError(message, code)
        elif method not in self._own_requests:
            code, message = self._method_fault(self.role, _KIND_REQUEST, method)
            raise LocalProtocolError(message, code)
        token = None
        if params and "_meta" in params:
            fault, token = self._meta_fault(params["_meta"], self._our_tokens)
            if fault is not None:
                raise LocalProtocolError(fault[1], fault[0])
        if method in _CHECKED_REQUESTS:
            fault = self._request_fault(method, params)
            if fault is not None:
                raise LocalProtocolError(fault[1], fault[0])
        out = req if params is req.params else Request(id=rid, method=method, params=params)
        return out, (commit, rid, method, params, token, trigger)

    def _commit_stateless_request(
        self, rid: RequestId, method: str, params: Any, token: Any, trigger: Trigger | None
    ) -> None:
        """As :meth:`_commit_request`, for a 2026 request: its logLevel is counted."""
        if method != "subscriptions/listen":
            level = params["_meta"].get(META_LOG_LEVEL)  # (checked by _fill_meta)
            if level is not None:
                rank = LOG_RANK[level]
                self._our_ranks[rid] = rank
                self._log_ranks_ours[rank] += 1
        self._commit_request(rid, method, params, token, trigger)

    def _commit_request(
        self, rid: RequestId, method: str, params: Any, token: Any, trigger: Trigger | None
    ) -> None:
        self._ours[rid] = (method, params, token, 0)
        if self._policy.ids_unique_per_session:
            self._our_ids.add(rid)
        if token is not None:
            self._our_tokens[token] = [rid, None]
        if method == "initialize":
            self._initialize_request(params)
        elif trigger is _TRIGGER_PROBE:
            self._probe_id = rid
            self._transition(_TRIGGER_PROBE)
        elif trigger is _TRIGGER_STATELESS_REQUEST:
            self._enter_stateless(self._spec or self._specs[self._modern[0]])
        if method == "subscriptions/listen":
            self._listens[rid] = _Listen(params["notifications"])

    def _fill_meta(self, params: dict[str, Any] | None) -> dict[str, Any]:
        """A stateless client's request params, with the required ``_meta`` keys filled."""
        params = dict(params) if params else {}
        version = (self._spec or self._specs[self._modern[0]]).version
        cfg = self.config
        filled = {
            META_VERSION: version,
            META_CAPABILITIES: dict(cfg.capabilities),
            META_CLIENT_INFO: dict(cfg.implementation),
        }
        if "_meta" not in params:  # the common case: nothing of the application's to check
            params["_meta"] = filled
            return params
        meta = params["_meta"]
        if not isinstance(meta, Mapping):
            raise LocalProtocolError("_meta must be an object", _PARAMS)
        meta = dict(meta)
        for key, value in filled.items():  # (after the application's keys, as they came)
            meta.setdefault(key, value)
        given = meta[META_VERSION]
        if type(given) is not str or given != version:  # (a bytes value must not compare)
            raise LocalProtocolError(
                f"_meta protocolVersion {given!r} differs from the session's {version!r}"
            )
        # What the application put there itself must be what every server accepts.
        if type(meta[META_CAPABILITIES]) is not dict:
            raise LocalProtocolError(f"_meta[{META_CAPABILITIES!r}] must be an object", _PARAMS)
        if type(meta[META_CLIENT_INFO]) is not dict:
            raise LocalProtocolError(f"_meta[{META_CLIENT_INFO!r}] must be an object", _PARAMS)
        level = meta.get(META_LOG_LEVEL)
        if level is not None and (type(level) is not str or level not in LOG_RANK):
            raise LocalProtocolError(f"unknown logLevel {level!r}", _PARAMS)
        params["_meta"] = meta
        return params

    def _check_notification(self, note: Any) -> tuple[Message, tuple[Any, ...]]:
        method = note.method
        if type(method) is not str:
            raise LocalProtocolError("method must be a string")
        params = _params_dict(note.params)
        out = note if params is note.params else Notification(method=method, params=params)
        if method == "notifications/cancelled":
            return out, self._check_cancel(params)
        if self._eof and method not in ("notifications/progress", "notifications/message"):
            raise LocalProtocolError("the peer has closed: only answers and progress may go out")
        if method not in self._own_notes:
            code, message = self._method_fault(self.role, _KIND_NOTIFICATION, method)
            raise LocalProtocolError(message, code)
        if method in _CHECKED_NOTIFICATIONS:
            fault = self._notification_fault(self.role, out)
            if fault is not None:
                raise LocalProtocolError(fault[1], fault[0])
        return out, (self._apply_notification, self.role, out)

    def _check_cancel(self, params: Any) -> tuple[Any, ...]:
        rid = params.get("requestId") if params else None
        if not is_id(rid):
            raise LocalProtocolError(
                "notifications/cancelled needs params.requestId (a string or an integer)"
            )
        if self.role is _ROLE_SERVER and self._policy.cancel_ends_listen:
            pending = self._theirs.get(rid)  # type: ignore[arg-type]
            if pending is None or pending[0] != "subscriptions/listen":
                raise LocalProtocolError(
                    "a 2026-07-28 server sends notifications/cancelled only to end a listen stream"
                )
            return (self._retire_theirs, rid)
        pending = self._ours.get(rid)  # type: ignore[arg-type]
        if pending is None:
            raise LocalProtocolError(
                f"cannot cancel {rid!r}: no request of ours with this id is in flight"
            )
        if pending[0] == "initialize":
            raise LocalProtocolError("initialize must not be cancelled")
        return (self._commit_cancel, rid)

    def _commit_cancel(self, rid: RequestId) -> None:
        token = self._ours[rid][2]
        if token is not None:
            self._cancelled_tokens.put(token)
        self._retire_ours(rid)
        self._cancelled_ours.put(rid)
        if rid == self._probe_id:
            self._probe_id = None
            self._decide_legacy()

    def _check_response(self, msg: Any) -> tuple[Message | None, tuple[Any, ...]]:
        rid = msg.id
        is_error = type(msg) is ERROR_RESPONSE
        if is_error:
            code = msg.code
            if not isinstance(code, int) or isinstance(code, bool) or type(msg.message) is not str:
                raise LocalProtocolError("an error needs an integer code and a string message")
            if rid is None:
                return msg, (self._nothing,)
        if not is_id(rid):
            raise LocalProtocolError(f"response id must be a string or an integer, not {rid!r}")
        pending = self._theirs.get(rid)
        if pending is None:
            if is_error and rid in self._owed_errors:
                return msg, (self._forget_owed, rid)
            if rid in self._cancelled_theirs:
                return None, (self._forget_cancelled, rid)
            raise LocalProtocolError(f"id {rid!r} answers no request of the peer in flight")
        method = pending[0]
        if is_error:
            return msg, (self._commit_response, rid, method, None)
        result = msg.result
        if type(result) is not dict:
            result = _params_dict(result)
            if result is None:
                raise LocalProtocolError("a result must be a JSON object")
            msg = Response(id=rid, result=result)
        if self._policy.result_type:
            result_type = result.get("resultType")
            if "resultType" not in result:
                result = {**result, "resultType": "complete"}
                msg = Response(id=rid, result=result)
            elif result_type == "input_required":
                assert self._spec is not None
                caps = self._request_caps[rid][0]
                fault = input_required_fault(self._spec, method, result, caps)
                if fault is not None:
                    raise LocalProtocolError(fault[1], fault[0])
            elif result_type != "complete":
                raise LocalProtocolError(f"unknown resultType {result_type!r}")
            if method == "server/discover":
                self._check_discover_result(result)
        elif method == "initialize":
            self._check_initialize_result(result)
        return msg, (self._commit_response, rid, method, result)

    def _check_discover_result(self, result: Mapping[str, Any]) -> None:
        """A server's ``server/discover`` result must describe this server."""
        supported = result.get("supportedVersions")
        if (
            type(supported) is not list
            or not supported
            or any(v not in self._modern for v in supported)
        ):
            raise LocalProtocolError(
                f"supportedVersions must list versions this server speaks statelessly "
                f"({', '.join(self._modern)}), not {supported!r}"
            )
        if result.get("capabilities") != self.config.capabilities:
            raise LocalProtocolError(
                "the discover result's capabilities must be this server's configured ones"
            )
        ttl = result.get("ttlMs")
        if type(ttl) is not int or ttl < 0:
            raise LocalProtocolError("the discover result needs ttlMs (an integer >= 0)")
        if result.get("cacheScope") not in ("public", "private"):
            raise LocalProtocolError('the discover result needs cacheScope "public" or "private"')

    def discover_result(
        self,
        *,
        ttl_ms: int = 0,
        cache_scope: str = "public",
        instructions: str | None = None,
    ) -> dict[str, Any]:
        """The ``server/discover`` result that describes this server (2026-07-28): its
        stateless versions, its configured capabilities and ``serverInfo`` in ``_meta``."""
        result: dict[str, Any] = {
            "resultType": "complete",
            "supportedVersions": list(self._modern),
            "capabilities": dict(self.config.capabilities),
            "ttlMs": ttl_ms,
            "cacheScope": cache_scope,
            "_meta": {"io.modelcontextprotocol/serverInfo": dict(self.config.implementation)},
        }
        if instructions is not None:
            result["instructions"] = instructions
        return result

    def _commit_response(self, rid: RequestId, method: str, result: Any) -> None:
        pending = self._retire_theirs(rid)
        if result is None:  # an error answer
            if method == "initialize":
                self._transition(_TRIGGER_INITIALIZE_ERROR)
            elif method == "resources/subscribe":
                self._release_subscription(pending[1])
        elif method in self._policy.effectful:
            if method == "initialize":
                self._initialize_result(result, sent=True)
            else:
                if method == "resources/subscribe":
                    self._release_subscription(pending[1])
                self._after_success(method, pending[1])

    # ------------------------------------------------------------------ shared checks

    def _refresh(self) -> None:
        """Recompute the methods each side may use now (after every state change)."""
        state = self._state
        role, peer = self.role, self._peer

        def allowed(sender: Role, kind: Kind) -> frozenset[str]:
            value = self._allowed_in(state, sender, kind)
            if isinstance(value, Every):
                return self._gated[(sender, kind)] | value.also
            gated = self._gated.get((sender, kind))
            if gated is not None:  # capabilities known: they gate the lifecycle's set too
                return value & (gated | LIFECYCLE_METHODS)
            return value & self._known

        self._own_requests = allowed(role, _KIND_REQUEST)
        self._own_notes = allowed(role, _KIND_NOTIFICATION)
        self._peer_requests = allowed(peer, _KIND_REQUEST)
        self._peer_notes = allowed(peer, _KIND_NOTIFICATION)

    def _allowed_in(self, state: State, sender: Role, kind: Kind) -> Allowed:
        """The lifecycle table's row for ``sender`` in ``state``; for the peer's requests,
        :data:`_LENIENT_REQUESTS` where it has the row (unless ``strict``)."""
        if kind is _KIND_REQUEST:
            value = REQUESTS_ALLOWED[(state, sender)]
            if sender is self._peer and not self.config.strict:
                return _LENIENT_REQUESTS.get((state, sender), value)
            return value
        return NOTIFICATIONS_ALLOWED[(state, sender)]

    def _compute_gates(self) -> None:
        """Precompute, per sender and kind, the methods the version and the declared
        capabilities allow (they cannot change during the session)."""
        spec = self._spec
        assert spec is not None
        lenient = self.config.accept_undeclared
        strict = self.config.strict
        key = (
            spec.version,
            self.config.methods,
            self._peer,
            lenient,
            strict,
            _fingerprint(self._client_caps),
            _fingerprint(self._server_caps),
        )
        cached = _GATES.get(key)
        if cached is not None:  # a server serving many stateless requests computes it once
            self._gated = cached
            return
        gated: dict[tuple[Role, Kind], frozenset[str]] = {}
        for sender in Role:
            for kind in Kind:
                holder = sender.peer if kind is _KIND_REQUEST else sender
                caps = self._client_caps if holder is _ROLE_CLIENT else self._server_caps
                waived = lenient if sender is self._peer else frozenset()
                # The peer's notifications of a sub-capability it did not declare, where
                # the text says only SHOULD (see undeclared_is_soft): served, unless strict.
                soft = sender is self._peer and kind is _KIND_NOTIFICATION and not strict
                gated[(sender, kind)] = frozenset(
                    name
                    for name, rule in spec.methods.items()
                    if rule.kind is kind
                    and name not in LIFECYCLE_METHODS
                    and rule.direction in (Direction.BOTH, _DIRECTION_OF[sender])
                    and (
                        not rule.gate
                        or caps is None
                        or name in waived
                        or capability_met(caps, rule.gate)
                        or (soft and undeclared_is_soft(spec, rule.gate, caps))
                    )
                )
        self._gated = gated
        if len(_GATES) >= _GATES_MAX:
            _GATES.clear()
        _GATES[key] = gated

    def _method_fault(self, sender: Role, kind: Kind, method: str) -> Fault:
        """Why ``sender`` may not use ``method`` now (called only when it may not)."""
        noun = "request" if kind is _KIND_REQUEST else "notification"
        if not any(method in self._specs[v].methods for v in self.config.versions):
            return _NOT_FOUND, (
                f"Method not found: {method!r} is not part of protocol versions "
                f"{', '.join(self.config.versions)}"
            )
        if method == "initialize":
            return _INVALID, "Invalid request: initialize was already received in this session"
        if method == "notifications/initialized":
            return _INVALID, "Invalid request: notifications/initialized is not expected now"
        allowed = self._allowed_in(self._state, sender, kind)
        if not isinstance(allowed, Every) and method not in allowed:
            names = ", ".join(sorted(allowed)) or "none"
            return _INVALID, (
                f"Invalid request: {method!r} is not allowed from the {sender.value} in state "
                f"{self._state.value} ({noun}s allowed now: {names})"
            )
        spec = self._spec
        assert spec is not None
        rule = spec.methods.get(method)
        if rule is None or rule.kind is not kind:
            return _NOT_FOUND, (
                f"Method not found: {method!r} is not a {noun} of protocol version {spec.version}"
            )
        if rule.direction not in (Direction.BOTH, _DIRECTION_OF[sender]):
            return _NOT_FOUND, f"Method not found: {method!r} is not sent by the {sender.value}"
        holder = sender.peer if kind is _KIND_REQUEST else sender
        return _NOT_FOUND, (
            f"Method not found: {method!r} needs the {holder.value} capability "
            f"{'.'.join(rule.gate)!r}, which the {holder.value} did not declare"
        )

    def _request_fault(self, method: str, params: Any, strict: bool = True) -> Fault | None:
        """Params-level rules of the requests in ``_CHECKED_REQUESTS``: first the params
        the version's schema requires, then the rules of the methods the state machine
        reads. ``strict`` (what we send; what we receive under ``Config.strict``) adds the
        rules the text states only as the sender's SHOULD (see :func:`sampling_fault`)."""
        spec = self._spec
        rows = spec.required_params.get(method) if spec is not None else None
        if rows is not None:
            fault = required_params_fault(method, rows, params)
            if fault is not None:
                return fault
        if method not in _STATE_READ_REQUESTS:
            return None
        if method == "initialize":
            fault = initialize_params_fault(params)
            if fault is not None:
                return fault
            # (A side with no initialize-era version never gets here: a stateless client
            # refuses to send initialize, a stateless server answers it by itself.)
            version = params["protocolVersion"]
            if self.role is _ROLE_CLIENT and version not in self._legacy:
                return _PARAMS, f"Invalid params: protocolVersion {version!r} is not one we speak"
            return None
        if method == "elicitation/create":
            assert spec is not None
            return elicitation_fault(spec, params, self._client_caps or {})
        if method == "sampling/createMessage":
            assert spec is not None
            return sampling_fault(spec, params, self._client_caps or {}, strict=strict)
        if method == "resources/subscribe":
            return self._subscribe_fault(params) if self.role is _ROLE_SERVER else None
        return listen_params_fault(params)  # subscriptions/listen

    def _subscribe_fault(self, params: Any) -> Fault | None:
        """A server's bounds on its peer's subscriptions (``max_subscriptions``,
        ``max_subscription_bytes``), counting those not answered yet; an accepted request
        reserves its place until it is answered."""
        uri = params.get("uri") if params else None
        if type(uri) is not str:
            return None  # (the required params were checked before)
        cfg = self.config
        subscriptions = self._subscriptions
        why = subscriptions.full(uri, cfg.max_subscriptions, cfg.max_subscription_bytes)
        if why is not None:
            return _INVALID, f"Invalid request: {why}"
        subscriptions.reserve(uri)
        return None

    def _notification_fault(self, sender: Role, note: Notification) -> Fault | None:
        """Rules of the notifications in ``_CHECKED_NOTIFICATIONS``. What we send is held
        to all of them; what the peer sends, to those the text states as a MUST (or that
        the Connection needs), and to the rest only under ``Config.strict``."""
        params = note.params
        method = note.method
        if method == "notifications/progress":
            return self._progress_fault(sender, params)
        if method == "notifications/message":
            return self._log_fault(sender, params)
        if self._policy.listen_streams:
            return self._stream_fault(note)
        if method == "notifications/resources/updated":
            uri = params.get("uri") if params else None
            if type(uri) is not str:
                return _PARAMS, "Invalid params: uri must be a string"
            # "This should only be sent if the client previously sent a resources/subscribe
            # request" (Schema > ResourceUpdatedNotification): a lower-case "should", the
            # server's; a client may read the resource again (refused under strict).
            if not self._subscriptions.covers(uri) and (sender is self.role or self.config.strict):
                return _INVALID, f"Invalid request: resource {uri!r} was not subscribed to"
        return None

    def _log_fault(self, sender: Role, params: Any) -> Fault | None:
        level = params.get("level") if params else None
        if type(level) is not str or level not in LOG_RANK:
            return _PARAMS, "Invalid params: notifications/message needs a known level"
        rank = LOG_RANK[level]
        # Below the level set, the text is silent or says "should" (see below): the peer's
        # log message is refused only under strict.
        strict = sender is self.role or self.config.strict
        if self._policy.log_level_in_meta:
            # Sending (server side): the peer's requests' logLevels; receiving (client
            # side): ours. n/message never goes on a listen stream (those are not counted).
            counts = self._log_ranks_theirs if sender is self.role else self._log_ranks_ours
            lowest = -1
            for i, count in enumerate(counts):
                if count:
                    lowest = i
                    break
            if lowest < 0:
                # "The server MUST NOT emit notifications/message for a request that does
                # not include this field" (2026-07-28, Server > Utilities > Logging).
                return (
                    _INVALID,
                    "Invalid request: notifications/message, but no request set logLevel",
                )
            # "When the field is present, the server MAY send notifications/message
            # notifications at or above the requested level" (ibid.): no MUST NOT below.
            if strict and rank < lowest:
                return _INVALID, "Invalid request: log message below the requested logLevel"
        # "The server should send all logs at this level and higher" (Schema >
        # SetLevelRequest, lower case): nothing forbids a lower one.
        elif strict and self._log_level is not None and rank < LOG_RANK[self._log_level]:
            return _INVALID, (
                f"Invalid request: log message at {level!r} is below the level "
                f"{self._log_level!r} the client set"
            )
        return None

    def _progress_fault(self, sender: Role, params: Any) -> Fault | None:
        strict = sender is self.role or self.config.strict
        fault = progress_params_fault(self._spec, params, strict=strict)
        if fault is not None:
            return fault
        token = params["progressToken"]
        # The token belongs to a request sent by the *receiver* of the progress.
        entry = (self._our_tokens if sender is self._peer else self._their_tokens).get(token)
        if entry is None:
            return _INVALID, f"Invalid request: progressToken {token!r} names no request in flight"
        requests = self._ours if sender is self._peer else self._theirs
        if requests[entry[0]][0] == "subscriptions/listen":
            return _INVALID, "Invalid request: notifications/progress never goes on a listen stream"
        last = entry[1]
        progress = params["progress"]
        if last is not None and progress <= last:
            return (
                _INVALID,
                f"Invalid request: progress must increase ({progress!r} after {last!r})",
            )
        return None

    def _stream_fault(self, note: Notification) -> Fault | None:
        """2026-07-28: server notifications that belong on a listen stream."""
        params = note.params
        method = note.method
        meta = params.get("_meta") if params else None
        sid = meta.get(META_SUBSCRIPTION) if type(meta) is dict else None
        listen = self._listens.get(sid) if is_id(sid) else None  # type: ignore[arg-type]
        if listen is None:
            return _INVALID, f"Invalid request: {method} needs the subscriptionId of a listen"
        wanted = listen.wanted
        if method == "notifications/subscriptions/acknowledged":
            if listen.granted is not None:
                return _INVALID, "Invalid request: the subscription was already acknowledged"
            granted = params.get("notifications")
            if type(granted) is not dict:
                return _PARAMS, "Invalid params: acknowledged needs notifications (an object)"
            for key, value in granted.items():
                if key == "resourceSubscriptions":
                    asked = wanted.get(key) or ()
                    if type(value) is not list or any(uri not in asked for uri in value):
                        return _INVALID, "Invalid request: acknowledged unrequested resources"
                elif value and not wanted.get(key):
                    return _INVALID, f"Invalid request: acknowledged {key!r}, not requested"
            return None
        if listen.granted is None:
            return _INVALID, f"Invalid request: {method} before the subscription's acknowledgement"
        if method == "notifications/resources/updated":
            uri = params.get("uri")
            if type(uri) is not str or uri not in listen.granted:
                return _INVALID, f"Invalid request: resource {uri!r} is not on this stream"
        elif method not in listen.granted:
            return _INVALID, f"Invalid request: {method} was not opted into on this stream"
        return None

    def _apply_notification(self, sender: Role, note: Notification) -> None:
        method = note.method
        params = note.params
        if method not in _CHECKED_NOTIFICATIONS:
            return
        if method == "notifications/progress":
            tokens = self._our_tokens if sender is self._peer else self._their_tokens
            tokens[params["progressToken"]][1] = params["progress"]
        elif method == "notifications/initialized":
            self._transition(_TRIGGER_INITIALIZED)
        elif method == "notifications/subscriptions/acknowledged":
            listen = self._listens[params["_meta"][META_SUBSCRIPTION]]
            granted = params["notifications"]
            names = {_LISTEN_FLAGS[k] for k, v in granted.items() if k in _LISTEN_FLAGS and v}
            names.update(granted.get("resourceSubscriptions") or ())
            listen.granted = frozenset(names)

    # ------------------------------------------------------------------ lifecycle

    def _transition(self, trigger: Trigger) -> None:
        try:
            self._state = TRANSITIONS[self._state][trigger]
        except KeyError:  # pragma: no cover - callers check the state first
            raise LocalProtocolError(
                f"{trigger.value} is not possible in state {self._state.value}"
            ) from None
        self._refresh()

    def _initialize_request(self, params: Any) -> None:
        self._requested_version = params["protocolVersion"]
        self._client_caps = params["capabilities"]
        self._policy = _INITIALIZE_POLICY
        self._transition(_TRIGGER_INITIALIZE)

    def _check_initialize_result(self, result: Mapping[str, Any]) -> None:
        version = result.get("protocolVersion")
        if type(version) is not str:
            raise LocalProtocolError("the initialize result needs protocolVersion (a string)")
        if type(result.get("capabilities")) is not dict:
            raise LocalProtocolError("the initialize result needs capabilities (an object)")
        if type(result.get("serverInfo")) is not dict:
            raise LocalProtocolError("the initialize result needs serverInfo (an object)")
        requested = self._requested_version
        if requested in self._legacy and version != requested:
            raise LocalProtocolError(
                f"the client asked for {requested!r}, which this server supports: "
                f"the result must echo it, not {version!r}"
            )
        if version not in self._legacy:
            raise LocalProtocolError(f"protocolVersion {version!r} is not one this server speaks")

    def _initialize_result(self, result: Mapping[str, Any], *, sent: bool) -> None:
        version = result.get("protocolVersion")
        caps = result.get("capabilities")
        if not sent:
            if version not in self._legacy:
                raise self._fail(
                    f"the server chose protocol version {version!r}, which this client does not "
                    f"speak ({', '.join(self._legacy)}): disconnect",
                    _PARAMS,
                )
            if type(caps) is not dict or type(result.get("serverInfo")) is not dict:
                raise self._fail("the initialize result lacks capabilities or serverInfo", _PARAMS)
        assert isinstance(version, str)
        assert isinstance(caps, dict)
        self._set_spec(self._specs[version])
        self._server_caps = caps
        self._compute_gates()
        self._transition(_TRIGGER_INITIALIZE_RESULT)

    def _set_spec(self, spec: VersionSpec) -> None:
        self._spec = spec
        self._batches = spec.batches

    def _enter_stateless(self, spec: VersionSpec) -> None:
        self._policy = spec.policy
        self._set_spec(spec)
        self._compute_gates()
        self._transition(_TRIGGER_STATELESS_REQUEST)

    def _probe_result(self, result: Mapping[str, Any]) -> None:
        self._probe_id = None
        supported = result.get("supportedVersions")
        caps = result.get("capabilities")
        if type(supported) is not list or type(caps) is not dict:
            raise self._fail("the server/discover result lacks supportedVersions or capabilities")
        self._server_caps = caps
        self._choose_modern(supported)

    def _choose_modern(self, supported: Any) -> None:
        mine = self._modern
        common = [v for v in mine if isinstance(supported, list) and v in supported]
        if not common:
            raise self._fail(
                f"the server supports {supported!r}; this client speaks none of them ({mine})",
                ErrorCode.UNSUPPORTED_PROTOCOL_VERSION,
            )
        spec = self._specs[common[0]]
        self._policy = spec.policy
        self._set_spec(spec)
        self._compute_gates()
        self._transition(_TRIGGER_PROBE_MODERN)

    def _probe_error(self, error: ErrorResponse) -> None:
        self._probe_id = None
        if error.code == ErrorCode.UNSUPPORTED_PROTOCOL_VERSION and isinstance(error.data, dict):
            self._choose_modern(error.data.get("supported"))
        else:
            self._decide_legacy()

    def _decide_legacy(self) -> None:
        assert self._legacy, "only a client of both eras probes"
        self._policy = _INITIALIZE_POLICY
        self._transition(_TRIGGER_PROBE_LEGACY)

    def fall_back_to_initialize(self) -> None:
        """Give up the ``server/discover`` probe (the adapter's timeout ran out): the era
        becomes the initialize era, and a late answer to the probe will be dropped.

        Raises :class:`LocalProtocolError` when no probe is in flight or this client speaks
        no initialize-era version.
        """
        rid = self._probe_id
        if rid is None:
            raise LocalProtocolError("no server/discover probe is in flight")
        self._commit_cancel(rid)  # a probe implies a client of both eras

    def _after_success(self, method: str, params: Any) -> None:
        """Effects of a successful answer to a request (initialize era)."""
        if method == "resources/subscribe":
            self._subscriptions.add(params["uri"])
        elif method == "resources/unsubscribe":
            self._subscriptions.discard(params["uri"])
        else:  # logging/setLevel
            self._log_level = params["level"]

    def _retire_ours(self, rid: RequestId) -> None:
        token = self._ours.pop(rid)[2]
        if token is not None:
            del self._our_tokens[token]
        if self._listens:
            self._listens.pop(rid, None)
        if self._our_ranks:
            rank = self._our_ranks.pop(rid, None)
            if rank is not None:
                self._log_ranks_ours[rank] -= 1

    def _retire_theirs(self, rid: RequestId) -> _Pending:
        """Forget the peer's request ``rid`` (answered or cancelled); returns its entry."""
        pending = self._theirs.pop(rid)
        if pending[3]:
            self._their_bytes -= pending[3]
        token = pending[2]
        if token is not None:
            del self._their_tokens[token]
        if self._request_caps:
            info = self._request_caps.pop(rid, None)
            if info is not None and info[1] is not None and pending[0] != "subscriptions/listen":
                self._log_ranks_theirs[LOG_RANK[info[1]]] -= 1
            self._listens.pop(rid, None)
        return pending

    def _release_subscription(self, params: Any) -> None:
        """A server answered (or its peer cancelled) a ``resources/subscribe``: the place
        its request reserved (see :meth:`_subscribe_fault`) is free again."""
        uri = params.get("uri") if params else None
        if self.role is _ROLE_SERVER and type(uri) is str:
            self._subscriptions.release(uri)

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

        Raises :class:`LocalProtocolError` when an answer's key was not asked for.
        """
        extra = set(input_responses) - set(event.input_requests)
        if extra:
            raise LocalProtocolError(
                f"inputResponses for keys that were not asked: {sorted(extra)}"
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


# The gates computed per (version, peer, waived methods, both sides' capabilities): a
# read-only table, shared by the connections that agree on all of them. Bounded.
_GATES: dict[tuple[Any, ...], dict[tuple[Role, Kind], frozenset[str]]] = {}
_GATES_MAX: Final = 256


def _fingerprint(capabilities: Mapping[str, Any] | None) -> bytes | None:
    """A hashable stand-in for a capabilities object: its JSON, keys sorted. (Capabilities
    are JSON by construction: the configured ones are checked by a round trip through
    orjson, the peer's were decoded by it; ``default=dict`` reads the configured ones'
    read-only view.)"""
    if capabilities is None:
        return None
    return orjson.dumps(capabilities, default=dict, option=orjson.OPT_SORT_KEYS)


def _looks_stateless(params: Any) -> bool:
    """Whether request params carry the 2026-07-28 ``_meta`` protocol version."""
    meta = params.get("_meta") if params else None
    return type(meta) is dict and META_VERSION in meta


def _params_dict(params: Any) -> Any:
    """Outgoing params or result as a JSON object (typed MCP objects are unstructured)."""
    if params is None or type(params) is dict:
        return params
    if isinstance(params, Mapping):
        return dict(params)
    from . import types  # typed objects: imported lazily, to keep `import mcp_sansio` light

    try:
        value = types.unstructure(params)
    except Exception as exc:  # any failure of a foreign object
        raise LocalProtocolError(f"expected a JSON object or a typed MCP object: {exc}") from None
    if type(value) is not dict:
        raise LocalProtocolError("params and results must be JSON objects")
    return value
