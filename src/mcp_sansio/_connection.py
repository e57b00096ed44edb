"""The :class:`Connection`: the MCP state machine, both eras, both roles.

Bytes go in with :meth:`Connection.receive_data`; events come out of
:meth:`Connection.next_event`; :meth:`Connection.send` checks an event against the protocol
and returns the bytes to write. Every rule is enforced in both directions: what we send
raises :class:`LocalProtocolError` (and changes nothing), what we receive comes out as an
:class:`InvalidMessage` carrying the answer the protocol defines. Where the text asks of
the peer only a SHOULD (or a lower-case "should") and leaves the message to the receiver,
what we receive is accepted unless ``Config.strict`` (docs/connection.rst, "Every refusal
of the peer's messages"); what we send is held to it always.

This module is the three verbs and the glue. What a session knows is one object
(:class:`~mcp_sansio._requests.Session`: one record per request in flight, so a refused
batch puts back one copy); capability gating is :mod:`~mcp_sansio._gates`; opening and the
choice of era and version, :mod:`~mcp_sansio._negotiation`; the per-method checks and
effects, the tables of :mod:`~mcp_sansio._method_rules`; what differs by era or version, the
fields of :class:`~mcp_sansio.VersionSpec` and its ``EraPolicy``.

Speed: the methods each side may use are precomputed whenever the state changes (the
negotiated capabilities cannot change within a session), so the common path of a message
is a handful of dict and set look-ups; the rarer rules (progress, logging, subscriptions,
elicitation modes, …) run only for the methods they concern.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from typing import Any, Final

import orjson

from . import _method_rules as rules
from . import _negotiation as opening
from ._checks import is_id
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
from ._gates import method_fault, transition
from ._jsonrpc import (
    ERROR_RESPONSE,
    NOTIFICATION,
    REQUEST,
    RESPONSE,
    as_object,
    batch_shape_fault,
    decode,
    encode,
    encode_batch,
    invalid,
    sniff,
)
from ._method_rules import (
    CHECKED_NOTIFICATIONS,
    CHECKED_REQUESTS,
    NOTIFICATION_CHECKS,
    NOTIFICATION_EFFECTS,
    meta_fault,
    request_fault,
)
from ._names import (
    CANCELLED,
    INITIALIZE,
    LISTEN_FLAGS,
    LOG_MESSAGE,
    PING,
    PROGRESS,
)

# (Kept importable from here, where the layers above import them from.)
from ._names import META_CAPABILITIES as META_CAPABILITIES
from ._names import META_CLIENT_INFO as META_CLIENT_INFO
from ._names import META_LOG_LEVEL as META_LOG_LEVEL
from ._names import META_SUBSCRIPTION as META_SUBSCRIPTION
from ._names import META_VERSION as META_VERSION
from ._requests import Pending, Session, with_meta
from ._sentinels import NEED_DATA, NeedData
from ._state import Role, State, Trigger
from ._versions import UNDECIDED, Era, EraPolicy, Kind, VersionSpec

__all__ = ["Connection", "NextEvent"]

# (Kept importable from here: testing/_near_miss.py reads it.)
_LISTEN_FLAGS: Final = LISTEN_FLAGS

#: What :meth:`Connection.next_event` returns.
NextEvent = Event | NeedData

# The enum members the code compares against, as module constants: a compiled build (mypyc)
# reads these directly, where ``Role.SERVER`` costs a class attribute lookup each time
# (about 0.1 µs against 1 ns here; a compiled round trip is about 12% faster for it).
_KIND_NOTIFICATION: Final = Kind.NOTIFICATION
_KIND_REQUEST: Final = Kind.REQUEST
_ROLE_CLIENT: Final = Role.CLIENT
_ROLE_SERVER: Final = Role.SERVER
_STATE_IDLE: Final = State.IDLE

_INVALID: Final = ErrorCode.INVALID_REQUEST
# The peer's requests under this size are not counted against max_in_flight_bytes (so the
# common small request costs no arithmetic): max_in_flight bounds their bytes, at most
# 4,096 x 4 KiB = 16 MiB at the defaults.
_COUNTED: Final = 4096


class Connection:
    """One side of an MCP conversation, without I/O.

    :param role: :attr:`Role.CLIENT` or :attr:`Role.SERVER`.
    :param config: the keywords of :class:`Config` (``versions=``, ``capabilities=``,
        ``implementation=``, ``max_message_size=``, ``methods=``, …).
    """

    def __init__(self, role: Role, **config: Any) -> None:
        self.config: Config = Config(role=role, **config)
        """The validated configuration."""
        self.role: Role = role
        """Which side we play."""
        cfg = self.config
        self._peer = role.peer
        self._framer = LineFramer(cfg.max_message_size)
        self._max_in_flight = cfg.max_in_flight
        self._queue: deque[Event] = deque()
        self._eof = False
        self._closed_reported = False
        self._error: RemoteProtocolError | None = None
        self._next_id = 0
        # Everything a message can change: one object (a refused batch puts back a copy).
        self._s = Session(cfg, role, UNDECIDED, _STATE_IDLE)
        opening.start(self._s)

    # ------------------------------------------------------------------ properties

    @property
    def state(self) -> State:
        """The lifecycle state of the session."""
        return self._s.state

    @property
    def era(self) -> Era | None:
        """The era of the session, or ``None`` while it is undecided (a side that speaks
        both eras, before the first exchange; see :meth:`fall_back_to_initialize`)."""
        return self._s.policy.era

    @property
    def protocol_version(self) -> str | None:
        """The negotiated protocol version (stateless era: the one this client sends, or
        the newest this server accepts), or ``None`` before the handshake."""
        spec = self._s.spec
        return spec.version if spec is not None else None

    @property
    def spec(self) -> VersionSpec | None:
        """The negotiated version's record (:class:`~mcp_sansio.VersionSpec`, with
        the application's :attr:`Config.methods` added), or ``None`` before the handshake.
        What differs by version is a field of it; what differs by era, of its ``policy``."""
        return self._s.spec

    @property
    def policy(self) -> EraPolicy:
        """What differs by era, as data (:class:`~mcp_sansio.EraPolicy`): the
        negotiated era's policy, or ``UNDECIDED`` while a side of both eras has not chosen."""
        return self._s.policy

    @property
    def client_capabilities(self) -> Mapping[str, Any] | None:
        """The client's capabilities: from ``initialize`` (initialize era), or a client's
        own from its configuration; ``None`` when not known."""
        return self._s.client_caps

    @property
    def server_capabilities(self) -> Mapping[str, Any] | None:
        """The server's capabilities: from the ``initialize`` or ``server/discover``
        result, or a server's own from its configuration; ``None`` when not known."""
        return self._s.server_caps

    @property
    def peer_closed(self) -> bool:
        """Whether the peer has closed its side (``receive_data(b"")``)."""
        return self._eof

    @property
    def outstanding(self) -> tuple[RequestId, ...]:
        """Ids of our requests still waiting for the peer's answer, oldest first."""
        return tuple(self._s.ours.pending)

    @property
    def owed(self) -> tuple[RequestId, ...]:
        """Ids of the peer's requests still waiting for our answer, oldest first."""
        return tuple(self._s.theirs.pending)

    def owes(self, request_id: RequestId) -> bool:
        """Whether the peer's request ``request_id`` still waits for our answer: one lookup,
        where :attr:`owed` copies the whole table."""
        return request_id in self._s.theirs.pending

    def next_request_id(self) -> int:
        """An integer id that no request of ours in flight (and, in the initialize era,
        none in this session) has used."""
        ours = self._s.ours
        while self._next_id in ours.ids or self._next_id in ours.pending:
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
            decoded = decode(line, self._s.batches)
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
        return ConnectionClosed(unanswered=tuple(self._s.ours.pending))

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
        ids = self._s.theirs.ids
        for item in items:
            if type(item) is Request and item.method == INITIALIZE:
                ids.add(item.id) if item.id not in ids else None
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
            s = self._s
            if msg.reply is not None:
                theirs = s.theirs
                if rid in theirs.pending:
                    # Its id is that of a request in flight: an answer under that id would
                    # be taken for the answer to the other request, so answer to null.
                    reply = ErrorResponse(id=None, code=msg.code, message=msg.message)
                    return InvalidMessage(
                        code=msg.code, message=msg.message, reply=reply, raw=msg.raw
                    )
                theirs.remember_owed(rid)
                if s.policy.ids_unique_per_session and rid not in theirs.ids:
                    theirs.ids.add(rid)
            elif rid in s.ours.pending:
                # A malformed answer to our request: the request is over.
                s.ours.retire(rid)
        return msg

    def _reject(self, req: Request, code: int, message: str, data: Any = None) -> InvalidMessage:
        """An InvalidMessage answering the peer's request ``req``."""
        self._s.theirs.remember_owed(req.id)
        reply = (
            ErrorResponse(id=req.id, code=code, message=message)
            if data is None
            else ErrorResponse(id=req.id, code=code, message=message, data=data)
        )
        return InvalidMessage(code=code, message=message, reply=reply, id=req.id)

    def _receive_request(self, req: Request, size: int) -> Event:
        rid = req.id
        s = self._s
        theirs = s.theirs
        if rid in theirs.pending:
            message = f"Invalid request: duplicate id {rid!r}: a request with this id is in flight"
            return InvalidMessage(
                code=_INVALID,
                message=message,
                reply=ErrorResponse(id=None, code=_INVALID, message=message),
            )
        meta: Any = None  # a 2026-07-28 request's _meta (checked)
        if (
            self.role is _ROLE_SERVER
            and (s.policy.request_meta or s.state is _STATE_IDLE)
            and opening.opens_stateless(s, req)
        ):
            # A server's checks of a 2026-07-28 request (the first one decides the era).
            refusal = opening.stateless_meta_fault(s, req)
            if refusal is not None:
                return self._reject(req, *refusal)
            meta = req.params["_meta"]
            if s.state is _STATE_IDLE:
                opening.enter_stateless(s, s.specs[s.modern[0]])
        else:
            if rid in theirs.ids:
                return self._reject(
                    req, _INVALID, f"Invalid request: id {rid!r} was already used in this session"
                )
            theirs.ids.add(rid)
        if len(theirs.pending) >= self._max_in_flight:
            return self._reject(
                req, _INVALID, f"Invalid request: more than {self._max_in_flight} in flight"
            )
        if size < _COUNTED:
            size = 0
        elif theirs.bytes and theirs.bytes + size > self.config.max_in_flight_bytes:
            limit = self.config.max_in_flight_bytes
            return self._reject(
                req, _INVALID, f"Invalid request: more than {limit} bytes of requests in flight"
            )
        method = req.method
        if method not in s.peer_requests:
            return self._reject(req, *method_fault(s, self._peer, _KIND_REQUEST, method))
        params = req.params
        token = None
        if params and "_meta" in params:
            fault, token = meta_fault(params["_meta"], theirs.tokens)
            if fault is not None:
                return self._reject(req, *fault)
        if method in CHECKED_REQUESTS:
            fault = request_fault(s, method, params, self.config.strict)
            if fault is not None:
                return self._reject(req, *fault)
        # (theirs.add(), inline: every request)
        entry = theirs.pending[rid] = Pending(rid, method, params, token, size)
        if token is not None:
            theirs.tokens[token] = entry
        if size:
            theirs.bytes += size
        if meta is not None:
            with_meta(entry, meta)
            if entry.rank >= 0:
                theirs.ranks[entry.rank] += 1
        elif method == INITIALIZE:
            opening.sent_initialize(s, params)
        return req

    def _receive_notification(self, note: Notification) -> Event | None:
        method = note.method
        s = self._s
        if method == CANCELLED:
            return note if rules.peer_cancelled(s, note.params) else None
        peer = self._peer
        if method not in s.peer_notes:
            code, message = method_fault(s, peer, _KIND_NOTIFICATION, method)
            return InvalidMessage(code=code, message=message, reply=None)
        if method in CHECKED_NOTIFICATIONS:
            fault = NOTIFICATION_CHECKS[method](s, peer, note)
            if fault is not None:
                if rules.late_for_cancelled(s, note):
                    return None  # it crossed our cancel on the wire: dropped, like a late answer
                return InvalidMessage(code=fault[0], message=fault[1], reply=None)
            self._apply_notification(peer, note)
        return note

    def _receive_response(self, msg: Response | ErrorResponse) -> Event | None:
        rid = msg.id
        if rid is None:
            return msg  # an error the peer could not address: nothing to retire
        s = self._s
        ours = s.ours
        pending = ours.pending.get(rid)
        if pending is None:
            if rid in ours.cancelled:
                ours.cancelled.discard(rid)
                return None  # the late answer to a request we cancelled: dropped
            return InvalidMessage(
                code=_INVALID,
                message=f"Invalid response: id {rid!r} answers no request of ours in flight",
                reply=None,
                id=rid,
            )
        del ours.pending[rid]  # (ours.retire(), inline: every answer; ours have no size)
        if pending.token is not None:
            del ours.tokens[pending.token]
        if pending.rank >= 0:
            ours.ranks[pending.rank] -= 1
        try:
            if type(msg) is ERROR_RESPONSE:
                if rid == s.probe_id:
                    opening.refused_probe(s, msg)
                else:
                    rules.answered(s, pending, None, sent=False)
                return msg
            assert type(msg) is RESPONSE
            policy = s.policy
            if policy.result_type:
                return opening.stateless_answer(s, msg, pending)
            if pending.method in policy.effectful:
                rules.answered(s, pending, msg.result, sent=False)
            elif rid == s.probe_id:
                opening.answered_probe(s, msg.result)
        except RemoteProtocolError as exc:  # the opening failed: the session is over
            self._error = exc
            raise
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
        if not self._s.batches:
            raise LocalProtocolError("JSON-RPC batches exist only in protocol version 2025-03-26")
        events = batch.events
        why = batch_shape_fault(events)
        if why is not None:
            raise LocalProtocolError(why)
        # Each member is checked against the state the members before it leave (two
        # requests with one progress token, or progress that does not increase, are
        # caught); if any member is refused, the session is put back as it was: one copy.
        saved = self._s.copy()
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
            self._s = saved
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
        self._s.theirs.cancelled.discard(rid)

    def _forget_owed(self, rid: RequestId) -> None:
        self._s.theirs.forget_owed(rid)

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
        s = self._s
        ours = s.ours
        if rid in ours.pending:
            raise LocalProtocolError(f"id {rid!r} is already in flight")
        if rid in ours.cancelled.entries:  # (hot: no __contains__ call)
            raise LocalProtocolError(
                f"id {rid!r} was cancelled and its late answer may still arrive: use another"
            )
        policy = s.policy
        if policy.ids_unique_per_session and rid in ours.ids:
            raise LocalProtocolError(f"id {rid!r} was already used in this session")
        params = req.params
        if params is not None and type(params) is not dict:  # (the call only when needed)
            params = as_object(params)
        trigger: Trigger | None = None
        if s.state is _STATE_IDLE and self.role is _ROLE_CLIENT and method != PING:
            trigger = opening.client_trigger(policy, method)
        commit = self._commit_request
        if policy.request_meta or trigger is not None:
            if self.role is _ROLE_SERVER and not policy.server_requests:
                raise LocalProtocolError("a 2026-07-28 server never sends requests")
            commit = self._commit_stateless_request
            spec = s.spec or s.specs[s.modern[0]]
            params = opening.fill_meta(params, spec.version, self.config)
            rule = spec.methods.get(method)
            if rule is None or rule.kind is not _KIND_REQUEST:
                raise LocalProtocolError(
                    f"{method!r} is not a request of protocol version {spec.version}"
                )
            # (In IDLE the first request opens the session; its gates follow from it.)
            if s.state is not _STATE_IDLE and method not in s.own_requests:
                code, message = method_fault(s, self.role, _KIND_REQUEST, method)
                raise LocalProtocolError(message, code)
        elif method not in s.own_requests:
            code, message = method_fault(s, self.role, _KIND_REQUEST, method)
            raise LocalProtocolError(message, code)
        token = None
        if params and "_meta" in params:
            fault, token = meta_fault(params["_meta"], ours.tokens)
            if fault is not None:
                raise LocalProtocolError(fault[1], fault[0])
        if method in CHECKED_REQUESTS:
            fault = request_fault(s, method, params)
            if fault is not None:
                raise LocalProtocolError(fault[1], fault[0])
        out = req if params is req.params else Request(id=rid, method=method, params=params)
        return out, (commit, rid, method, params, token, trigger)

    def _commit_stateless_request(
        self, rid: RequestId, method: str, params: Any, token: Any, trigger: Trigger | None
    ) -> None:
        """As :meth:`_commit_request`, for a 2026 request: its logLevel is counted, and a
        listen's stream is recorded (its ``_meta`` was checked by ``fill_meta``)."""
        self._commit(with_meta(Pending(rid, method, params, token, 0), params["_meta"]), trigger)

    def _commit_request(
        self, rid: RequestId, method: str, params: Any, token: Any, trigger: Trigger | None
    ) -> None:
        s = self._s
        ours = s.ours
        # (ours.add(), inline: every request)
        entry = ours.pending[rid] = Pending(rid, method, params, token, 0)
        if token is not None:
            ours.tokens[token] = entry
        if s.policy.ids_unique_per_session:
            ours.ids.add(rid)
        if trigger is not None or method == INITIALIZE:
            opening.opened(s, entry, trigger)

    def _commit(self, entry: Pending, trigger: Trigger | None) -> None:
        s = self._s
        s.ours.add(entry)
        if s.policy.ids_unique_per_session:
            s.ours.ids.add(entry.id)
        if trigger is not None or entry.method == INITIALIZE:
            opening.opened(s, entry, trigger)

    def _check_notification(self, note: Any) -> tuple[Message, tuple[Any, ...]]:
        method = note.method
        if type(method) is not str:
            raise LocalProtocolError("method must be a string")
        params = note.params
        if params is not None and type(params) is not dict:
            params = as_object(params)
        out = note if params is note.params else Notification(method=method, params=params)
        if method == CANCELLED:
            return out, self._check_cancel(params)
        if self._eof and method not in (PROGRESS, LOG_MESSAGE):
            raise LocalProtocolError("the peer has closed: only answers and progress may go out")
        s = self._s
        if method not in s.own_notes:
            code, message = method_fault(s, self.role, _KIND_NOTIFICATION, method)
            raise LocalProtocolError(message, code)
        if method in CHECKED_NOTIFICATIONS:
            fault = NOTIFICATION_CHECKS[method](s, self.role, out)
            if fault is not None:
                raise LocalProtocolError(fault[1], fault[0])
        return out, (self._apply_notification, self.role, out)

    def _check_cancel(self, params: Any) -> tuple[Any, ...]:
        ends_listen, rid = rules.cancel_target(self._s, params)
        return (self._retire_theirs if ends_listen else self._commit_cancel, rid)

    def _retire_theirs(self, rid: RequestId) -> None:
        self._s.theirs.retire(rid)

    def _commit_cancel(self, rid: RequestId) -> None:
        rules.commit_cancel(self._s, rid)

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
        s = self._s
        theirs = s.theirs
        pending = theirs.pending.get(rid)
        if pending is None:
            if is_error and rid in theirs.owed:
                return msg, (self._forget_owed, rid)
            if rid in theirs.cancelled:
                return None, (self._forget_cancelled, rid)
            raise LocalProtocolError(f"id {rid!r} answers no request of the peer in flight")
        method = pending.method
        if is_error:
            return msg, (self._commit_response, rid, method, None)
        result = msg.result
        if type(result) is not dict:
            result = as_object(result)
            if result is None:
                raise LocalProtocolError("a result must be a JSON object")
            msg = Response(id=rid, result=result)
        if s.policy.result_type:
            if "resultType" not in result:
                result = {**result, "resultType": "complete"}
                msg = Response(id=rid, result=result)
            opening.check_stateless_result(s, pending, result)
        elif method == INITIALIZE:
            opening.check_initialize_result(s, result)
        return msg, (self._commit_response, rid, method, result)

    def discover_result(
        self,
        *,
        ttl_ms: int = 0,
        cache_scope: str = "public",
        instructions: str | None = None,
    ) -> dict[str, Any]:
        """The ``server/discover`` result that describes this server (2026-07-28): its
        stateless versions, its configured capabilities and ``serverInfo`` in ``_meta``."""
        return opening.discover_result(self._s, ttl_ms, cache_scope, instructions)

    def _commit_response(self, rid: RequestId, method: str, result: Any) -> None:
        s = self._s
        theirs = s.theirs
        pending = theirs.pending.pop(rid)  # (theirs.retire(), inline: every answer)
        if pending.token is not None:
            del theirs.tokens[pending.token]
        if pending.size or pending.rank >= 0:
            theirs.release_counts(pending)
        if result is None or method in s.policy.effectful:
            rules.answered(s, pending, result, sent=True)

    def _apply_notification(self, sender: Role, note: Notification) -> None:
        effect = NOTIFICATION_EFFECTS.get(note.method)
        if effect is not None:
            trigger = effect(self._s, sender, note.params)
            if trigger is not None:
                transition(self._s, trigger)

    # ------------------------------------------------------------------ lifecycle

    def fall_back_to_initialize(self) -> None:
        """Give up the ``server/discover`` probe (the adapter's timeout ran out): the era
        becomes the initialize era, and a late answer to the probe will be dropped.

        Raises :class:`LocalProtocolError` when no probe is in flight or this client speaks
        no initialize-era version.
        """
        rid = self._s.probe_id
        if rid is None:
            raise LocalProtocolError("no server/discover probe is in flight")
        rules.commit_cancel(self._s, rid)  # a probe implies a client of both eras

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
        params = opening.retry_params(event, input_responses)
        return Request(
            id=self.next_request_id() if id is None else id,
            method=event.request.method,
            params=params,
        )
