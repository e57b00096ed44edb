"""Hypothesis strategies for near-miss invalid MCP messages.

:func:`near_misses` generates :class:`NearMiss` values. Each one breaks exactly one rule of
the catalog (:data:`~mcp_sansio.testing.RULES`) and is valid by construction in every other
respect: its ids are fresh, its params are drawn from the version's schema, the
capabilities it needs are declared, and it arrives in the state it needs. A near miss
is a little script:

- :attr:`Scenario.exchange`: the valid lines both sides send first (the handshake, a
  request left in flight, a subscription, …), as :class:`Line` values. The *sender* is
  the side that breaks the rule; the *receiver* must enforce it. Lines of the receiver
  are what a receiver that follows the protocol sends at that point (its answers, and
  for some rules requests of its own: see :attr:`Scenario.receiver_initiates`);
- :attr:`Scenario.message`: the offending bytes (one line; for the envelope rules a raw
  malformed one);
- :attr:`NearMiss.expect`: what the receiver must answer (:class:`Expect`, derived from
  the :class:`~mcp_sansio.testing.Rule`);
- :attr:`NearMiss.repaired`: the same script with the one broken thing put right (the
  message repaired, or the missing state or capability supplied), which the receiver
  must accept; ``None`` where no valid counterpart exists (a 2026-07-28 server never
  sends requests, so no fix turns one into a valid message).

The receiver is assumed to speak only :attr:`Scenario.version` and to have declared
:attr:`Scenario.server_capabilities` (a server) or
:attr:`Scenario.client_capabilities` (a client); :meth:`Scenario.connection` builds such
a :class:`~mcp_sansio.Connection` and :meth:`Scenario.play` runs the script against it.

Behaviour that differs between versions is read from the version tables
(:data:`mcp_sansio._versions.VERSIONS`: methods, their senders and capability gates,
batches, progress messages, elicitation modes, ``input_required``) and from the schema
files (params, results, capabilities), never from version strings.
"""

from __future__ import annotations

import copy
import datetime
import functools
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Final

import attrs
import orjson
from hypothesis import strategies as st

from mcp_sansio._connection import (
    META_CAPABILITIES,
    META_CLIENT_INFO,
    META_LOG_LEVEL,
    META_SUBSCRIPTION,
    META_VERSION,
    Connection,
)
from mcp_sansio._errors import ErrorCode
from mcp_sansio._events import Batch, Event, InvalidMessage, Message, RequestId
from mcp_sansio._framing import DEFAULT_MAX_MESSAGE_SIZE
from mcp_sansio._jsonrpc import decode
from mcp_sansio._sentinels import NEED_DATA, OMITTED
from mcp_sansio._state import Role
from mcp_sansio._versions import VERSIONS, Era, Kind, VersionSpec
from mcp_sansio.testing._faults import FAULTS, Draw, Fault, FaultBuilder, Ground
from mcp_sansio.testing._faults._ground import LISTEN_FLAGS, SENDS, may_send, methods_of
from mcp_sansio.testing._faults.methods import invalid_params
from mcp_sansio.testing._rules import RULES, Reply, rule
from mcp_sansio.testing._schema_strategies import (
    _definitions,
    from_schema,
)
from mcp_sansio.testing._schema_strategies import params as schema_params

__all__ = [
    "MIN_MESSAGE_SIZE",
    "Expect",
    "Line",
    "NearMiss",
    "Scenario",
    "full_capabilities",
    "near_misses",
]

#: The smallest ``max_message_size`` :func:`near_misses` accepts: the setup lines and the
#: repaired message of ``envelope.oversized-message`` must fit under it.
MIN_MESSAGE_SIZE: Final = 1024

_CLIENT_INFO: Final = {"name": "near-miss-client", "version": "1.0"}
_SERVER_INFO: Final = {"name": "near-miss-server", "version": "1.0"}
_SERVER_INFO_KEY: Final = "io.modelcontextprotocol/serverInfo"
_ACK: Final = "notifications/subscriptions/acknowledged"
_LISTEN: Final = "subscriptions/listen"
_DISCOVER: Final = "server/discover"
_PROGRESS: Final = "notifications/progress"
_CANCELLED: Final = "notifications/cancelled"
_UPDATED: Final = "notifications/resources/updated"
_MESSAGE: Final = "notifications/message"
#: 2026-07-28 notifications that only travel on a listen stream.
_STREAM_NOTIFICATIONS: Final = frozenset(LISTEN_FLAGS.values()) | {_UPDATED}
#: Every method name of every version.
_ALL_METHODS: Final = frozenset(m for spec in VERSIONS.values() for m in spec.methods)
_LEGACY_VERSIONS: Final = tuple(v for v, s in sorted(VERSIONS.items()) if s.era is Era.INITIALIZE)

_IDS: Final[st.SearchStrategy[RequestId]] = st.one_of(
    st.integers(0, 1000), st.integers(-(2**31), 2**53), st.text(max_size=8)
)


# ---------------------------------------------------------------------------- the values


@attrs.frozen
class Line:
    """One line of an exchange: who sends it, and its bytes (one JSON message and
    ``\\n``)."""

    sender: Role
    """The side that writes the line."""
    data: bytes
    """The line, newline-terminated."""

    def json(self) -> Any:
        """The line's JSON value."""
        return orjson.loads(self.data)


@attrs.frozen(kw_only=True)
class Scenario:
    """A script: the valid exchange that sets the state, then one message."""

    version: str
    """The protocol version both sides speak."""
    sender: Role
    """The side that sends :attr:`message`."""
    client_capabilities: Mapping[str, Any]
    """The client's capabilities, as the script declares them."""
    server_capabilities: Mapping[str, Any]
    """The server's capabilities, as the script declares them (a 2026-07-28 server's
    configured ones)."""
    exchange: tuple[Line, ...]
    """The lines both sides send first, in order (see the module docstring)."""
    message: bytes
    """The message the receiver is fed last, newline-terminated."""
    max_message_size: int | None = None
    """The receiver's maximum message size the script assumes (set by
    ``envelope.oversized-message`` only); ``None``: the receiver's default."""

    @property
    def receiver(self) -> Role:
        """The side that receives :attr:`message`."""
        return self.sender.peer

    @property
    def setup(self) -> tuple[bytes, ...]:
        """The lines the sender writes before :attr:`message`, in order."""
        return tuple(line.data for line in self.exchange if line.sender is self.sender)

    @property
    def receiver_initiates(self) -> bool:
        """Whether the exchange needs the receiver to send requests of its own (a
        harness that drives a live peer can only replay the scripts where it does not:
        there the receiver's lines are answers it writes by itself)."""
        return any(
            line.sender is self.receiver and "id" in (obj := line.json()) and "method" in obj
            for line in self.exchange
        )

    def connection(self, **config: Any) -> Connection:
        """A :class:`~mcp_sansio.Connection` in the receiving role, configured as the
        script assumes (``versions=(version,)``, its capabilities, the message size);
        ``config`` overrides."""
        caps = (
            self.server_capabilities if self.receiver is Role.SERVER else self.client_capabilities
        )
        settings: dict[str, Any] = {"versions": (self.version,), "capabilities": caps}
        if self.max_message_size is not None:
            settings["max_message_size"] = self.max_message_size
        settings.update(config)
        return Connection(self.receiver, **settings)

    def play(self, connection: Connection | None = None) -> list[Event]:
        """Run the script against ``connection`` (by default :meth:`connection`): feed
        the sender's lines and check each is accepted, send the receiver's lines, then
        feed :attr:`message` and return the events it produced.

        :raises ValueError: a line of the exchange was refused (the script is wrong for
            this connection).
        :raises RemoteProtocolError: the message ended the session.
        """
        conn = self.connection() if connection is None else connection
        for index, line in enumerate(self.exchange):
            if line.sender is self.receiver:
                conn.send(_event_of(line.data))
                continue
            conn.receive_data(line.data)
            for event in _drain(conn):
                if isinstance(event, InvalidMessage):
                    raise ValueError(
                        f"line {index} of the exchange was refused: {event.message} ({line.data!r})"
                    )
        conn.receive_data(self.message)
        return _drain(conn)


def _drain(conn: Connection) -> list[Event]:
    events: list[Event] = []
    while True:
        event = conn.next_event()
        if event is NEED_DATA:
            return events
        events.append(event)


def _event_of(data: bytes) -> Event:
    decoded = decode(data.rstrip(b"\n"), allow_batch=True)
    if isinstance(decoded, list):
        members: list[Message] = []
        for item in decoded:
            if isinstance(item, InvalidMessage):
                raise ValueError(f"not a valid message: {data!r}")
            members.append(item)
        return Batch(events=tuple(members))
    if isinstance(decoded, InvalidMessage):
        raise ValueError(f"not a valid message: {data!r}")
    return decoded


def _same_id(a: Any, b: Any) -> bool:
    """JSON equality of ids: ``7`` and ``"7"`` differ, and so do ``1`` and ``true``."""
    return type(a) is type(b) and a == b


@attrs.frozen(kw_only=True)
class Expect:
    """What the receiver must do with the offending message."""

    reply: Reply
    """``"error"``, ``"none"``, ``"result"`` or ``"close"`` (see
    :data:`~mcp_sansio.testing.Reply`)."""
    code: int | None = None
    """For ``"error"``: the code of the error; ``None`` means any code."""
    id: RequestId | None = None
    """For ``"error"`` and ``"result"``: the id the answer carries (``None``: null)."""
    data: Mapping[str, Any] | None = None
    """For ``"error"``: entries ``error.data`` must hold, with these values."""
    data_keys: tuple[str, ...] = ()
    """For ``"error"``: further keys ``error.data`` must hold (any value)."""
    versions: frozenset[str] | None = None
    """For a ``"result"`` of ``initialize``: the versions its ``protocolVersion`` may name."""
    pending: RequestId | None = None
    """A request of the sender's that the receiver must still answer (answers to it are
    not counted as replies to the message)."""

    def check(self, replies: Sequence[Any]) -> str | None:
        """Judge what a receiver wrote after the message: ``replies`` are the JSON values
        of its lines (batches are flattened; notifications are ignored). Returns ``None``
        when they meet the expectation, else what is wrong. (``"close"`` cannot be seen in
        the replies: the caller checks that the receiver closed; here only that it did
        not answer.)"""
        answers = [
            item
            for value in replies
            for item in (value if isinstance(value, list) else [value])
            if isinstance(item, dict)
            and "method" not in item
            and ("result" in item or "error" in item)
            and not (self.pending is not None and _same_id(item.get("id"), self.pending))
        ]
        if self.reply in ("none", "close"):
            return None if not answers else f"expected no reply, got {answers!r}"
        if len(answers) != 1:
            return f"expected exactly one {self.reply} reply, got {answers!r}"
        answer = answers[0]
        if not _same_id(answer.get("id"), self.id):
            return f"expected the reply to carry id {self.id!r}, got {answer.get('id')!r}"
        if self.reply == "result":
            result = answer.get("result")
            if not isinstance(result, dict):
                return f"expected a result, got {answer!r}"
            if self.versions is not None and result.get("protocolVersion") not in self.versions:
                return (
                    f"expected protocolVersion among {sorted(self.versions)}, "
                    f"got {result.get('protocolVersion')!r}"
                )
            return None
        error = answer.get("error")
        if not isinstance(error, dict):
            return f"expected an error, got {answer!r}"
        if self.code is not None and error.get("code") != self.code:
            return f"expected error code {self.code}, got {error.get('code')!r}"
        if self.data is not None or self.data_keys:
            data = error.get("data")
            if not isinstance(data, dict):
                return f"expected error data, got {data!r}"
            for key, value in (self.data or {}).items():
                if data.get(key) != value:
                    return f"expected error data {key!r} = {value!r}, got {data.get(key)!r}"
            for key in self.data_keys:
                if key not in data:
                    return f"expected error data {key!r}, got {data!r}"
        return None


@attrs.frozen(kw_only=True)
class NearMiss(Scenario):
    """A :class:`Scenario` whose message breaks exactly one rule."""

    rule: str
    """The name of the rule broken (a key of :data:`~mcp_sansio.testing.RULES`)."""
    expect: Expect
    """What the receiver must do with the message (from the rule)."""
    repaired: Scenario | None
    """The script with the broken thing put right, which the receiver must accept;
    ``None`` where no valid counterpart exists."""
    note: str = ""
    """What exactly is broken, in words (for reports)."""


# ---------------------------------------------------------------------------- tables


@functools.cache
def _capabilities(version: str, holder: Role) -> dict[str, Any]:
    defs = _definitions(version)
    name = "ClientCapabilities" if holder is Role.CLIENT else "ServerCapabilities"
    return _caps_of(defs[name].get("properties", {}), defs)


def _resolve(defs: Mapping[str, Any], schema: Any) -> Any:
    while isinstance(schema, dict) and "$ref" in schema:
        schema = defs[schema["$ref"].rsplit("/", 1)[-1]]
    return schema


def _caps_of(props: Mapping[str, Any], defs: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, sub in props.items():
        if key in ("experimental", "extensions"):
            continue
        sub = _resolve(defs, sub)
        if sub.get("type") == "boolean":
            out[key] = True
        elif sub.get("properties"):
            out[key] = _caps_of(sub["properties"], defs)
        else:
            out[key] = {}
    return out


def full_capabilities(version: str, holder: Role) -> dict[str, Any]:
    """Every capability ``holder`` can declare in ``version`` (read from the schema's
    ``ClientCapabilities`` / ``ServerCapabilities``; ``experimental`` and ``extensions``
    left out), each sub-capability declared too: the capabilities near misses assume
    unless a rule is about a missing one."""
    return copy.deepcopy(_capabilities(version, holder))


def _without(caps: Mapping[str, Any], path: tuple[str, ...], false: bool) -> dict[str, Any]:
    """``caps`` without the capability at ``path`` (removed, or set to ``false`` where it
    is a boolean and ``false`` is asked)."""
    out = copy.deepcopy(dict(caps))
    node: Any = out
    for key in path[:-1]:
        node = node.get(key) if isinstance(node, dict) else None
    if isinstance(node, dict) and path[-1] in node:
        if false and node[path[-1]] is True:
            node[path[-1]] = False
        else:
            del node[path[-1]]
    return out


def _line(obj: Any) -> bytes:
    return orjson.dumps(obj) + b"\n"


def _request(rid: Any, method: Any, params: Any = None) -> dict[str, Any]:
    obj: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
    if params is not None:
        obj["params"] = params
    return obj


def _notification(method: Any, params: Any = None) -> dict[str, Any]:
    obj: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        obj["params"] = params
    return obj


def _response(rid: Any, result: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "result": result}


def _error(rid: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": message}}


def _key(value: Any) -> tuple[type, Any]:
    return (type(value), value)


def _fresh(value: RequestId, used: set[tuple[type, Any]]) -> RequestId:
    """``value``, or the nearest id of its type after it that is not in ``used``
    (deterministic, so that shrinking never loops)."""
    while _key(value) in used:
        value = value + 1 if isinstance(value, int) else value + "~"
    return value


_UNKNOWN_VERSIONS: Final[st.SearchStrategy[str]] = st.one_of(
    st.dates(datetime.date(2000, 1, 1), datetime.date(2099, 12, 31)).map(datetime.date.isoformat),
    st.sampled_from(["1.0", "2024-11-05-rc", "latest", "DRAFT-2099"]),
).filter(lambda v: v not in VERSIONS)

_INVENTED: Final[st.SearchStrategy[str]] = st.from_regex(
    r"\A[a-z][a-zA-Z_]{0,9}(/[a-zA-Z_]{1,9}){0,2}\Z"
).filter(lambda m: m not in _ALL_METHODS)

_PROGRESS_VALUES: Final[st.SearchStrategy[int | float]] = st.one_of(
    st.integers(0, 10**6), st.floats(0, 10**6, allow_nan=False, allow_infinity=False)
)


# ---------------------------------------------------------------------------- the script


@attrs.frozen
class _Ctx:
    spec: VersionSpec
    sender: Role
    max_message_size: int


class _Script:
    """The exchange under construction, with the ids and tokens already used."""

    def __init__(
        self,
        draw: st.DrawFn,
        ctx: _Ctx,
        *,
        client_caps: Mapping[str, Any] | None = None,
        server_caps: Mapping[str, Any] | None = None,
    ) -> None:
        self.draw = draw
        self.ctx = ctx
        self.spec = ctx.spec
        self.version = ctx.spec.version
        self.legacy = ctx.spec.era is Era.INITIALIZE
        self.sender = ctx.sender
        self.receiver = ctx.sender.peer
        self.caps: dict[Role, dict[str, Any]] = {
            Role.CLIENT: copy.deepcopy(
                dict(client_caps)
                if client_caps is not None
                else _capabilities(self.version, Role.CLIENT)
            ),
            Role.SERVER: copy.deepcopy(
                dict(server_caps)
                if server_caps is not None
                else _capabilities(self.version, Role.SERVER)
            ),
        }
        self.lines: list[Line] = []
        self.used: dict[Role, set[tuple[type, Any]]] = {Role.CLIENT: set(), Role.SERVER: set()}
        self.tokens: set[tuple[type, Any]] = set()
        self.stage = "idle" if self.legacy else "operating"
        self.init_id: RequestId | None = None
        # The receiver's size limit the scenario assumes (set only where it matters).
        self.max_message_size: int | None = None

    # -- copies

    def fork(self) -> _Script:
        other = copy.copy(self)
        other.caps = copy.deepcopy(self.caps)
        other.lines = list(self.lines)
        other.used = {role: set(ids) for role, ids in self.used.items()}
        other.tokens = set(self.tokens)
        return other

    def recap(
        self,
        *,
        client_caps: Mapping[str, Any] | None = None,
        server_caps: Mapping[str, Any] | None = None,
    ) -> _Script:
        """A fork whose lines declare other capabilities (the initialize request and
        result, the discover result, 2026 request ``_meta``)."""
        other = self.fork()
        old_client = self.caps[Role.CLIENT]
        if client_caps is not None:
            other.caps[Role.CLIENT] = copy.deepcopy(dict(client_caps))
        if server_caps is not None:
            other.caps[Role.SERVER] = copy.deepcopy(dict(server_caps))
        other.lines = [other._recap(line, old_client) for line in self.lines]
        return other

    def _recap(self, line: Line, old_client: Mapping[str, Any]) -> Line:
        obj = line.json()
        params = obj.get("params")
        result = obj.get("result")
        if obj.get("method") == "initialize" and isinstance(params, dict):
            params["capabilities"] = self.caps[Role.CLIENT]
        elif isinstance(result, dict) and ("serverInfo" in result or "supportedVersions" in result):
            result["capabilities"] = self.caps[Role.SERVER]
        elif isinstance(params, dict) and isinstance(params.get("_meta"), dict):
            meta = params["_meta"]
            if "id" in obj and meta.get(META_CAPABILITIES) == old_client:
                meta[META_CAPABILITIES] = self.caps[Role.CLIENT]
        else:
            return line
        return Line(line.sender, _line(obj))

    # -- ids

    def new_id(self, role: Role) -> RequestId:
        rid = _fresh(self.draw(_IDS), self.used[role])
        self.used[role].add(_key(rid))
        return rid

    def use(self, role: Role, rid: Any) -> None:
        self.used[role].add(_key(rid))

    def new_token(self) -> RequestId:
        token = _fresh(self.draw(_IDS), self.tokens)
        self.tokens.add(_key(token))
        return token

    # -- lines

    def add(self, role: Role, obj: Any) -> None:
        self.lines.append(Line(role, _line(obj)))

    def request(self, role: Role, method: str, params: Any = None, *, rid: Any = None) -> RequestId:
        chosen: RequestId
        if rid is None:
            chosen = self.new_id(role)
        else:
            chosen = rid
            self.use(role, chosen)
        self.add(role, _request(chosen, method, params))
        return chosen

    def respond(self, role: Role, rid: Any, result: Any) -> None:
        self.add(role, _response(rid, result))

    def notify(self, role: Role, method: str, params: Any = None) -> None:
        self.add(role, _notification(method, params))

    # -- contents

    def meta(
        self,
        *,
        caps: Mapping[str, Any] | None = None,
        extra: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """A 2026-07-28 request ``_meta``: this version and the client's capabilities."""
        meta: dict[str, Any] = {
            META_VERSION: self.version,
            META_CAPABILITIES: copy.deepcopy(
                dict(self.caps[Role.CLIENT] if caps is None else caps)
            ),
            META_CLIENT_INFO: dict(_CLIENT_INFO),
        }
        meta.update(extra or {})
        return meta

    def params(
        self,
        role: Role,
        method: str,
        *,
        version: str | None = None,
        as_request: bool | None = None,
        token: Any = None,
        meta: Mapping[str, Any] | None = None,
    ) -> dict[str, Any] | None:
        """Schema-valid params of ``method`` (of ``version``, by default this one) sent by
        ``role``: no progress token unless ``token``; 2026 client requests get the
        required ``_meta`` (with ``meta`` added)."""
        value = self.draw(schema_params(version or self.version, method))
        params: dict[str, Any] | None = None if value is OMITTED else copy.deepcopy(value)
        if params is not None:
            for key in ("inputResponses", "requestState"):
                params.pop(key, None)
            generated = params.get("_meta")
            if isinstance(generated, dict):
                params["_meta"] = {k: v for k, v in generated.items() if k != "progressToken"}
        if as_request is None:
            spec = VERSIONS[version or self.version]
            as_request = spec.methods[method].kind is Kind.REQUEST
        if not self.legacy and role is Role.CLIENT and as_request:
            params = dict(params or {})
            generated = params.get("_meta")
            kept = {
                k: v
                for k, v in (generated.items() if isinstance(generated, dict) else ())
                if k not in (META_VERSION, META_CAPABILITIES)
            }
            params["_meta"] = {**kept, **self.meta(extra=meta)}
        if token is not None:
            params = dict(params or {})
            params["_meta"] = {**(params.get("_meta") or {}), "progressToken": token}
        return params

    def result(self, method: str) -> dict[str, Any]:
        """A minimal valid result of ``method`` (the receiver's or the sender's answer)."""
        if method == _DISCOVER:
            return {
                "resultType": "complete",
                "supportedVersions": [self.version],
                "capabilities": copy.deepcopy(self.caps[Role.SERVER]),
                "ttlMs": 0,
                "cacheScope": "public",
                "_meta": {_SERVER_INFO_KEY: dict(_SERVER_INFO)},
            }
        return {} if self.legacy else {"resultType": "complete"}

    # -- phases

    def initialize_params(self, version: str | None = None) -> dict[str, Any]:
        return {
            "protocolVersion": version or self.version,
            "capabilities": copy.deepcopy(self.caps[Role.CLIENT]),
            "clientInfo": dict(_CLIENT_INFO),
        }

    def initialize_result(self, version: str | None = None) -> dict[str, Any]:
        return {
            "protocolVersion": version or self.version,
            "capabilities": copy.deepcopy(self.caps[Role.SERVER]),
            "serverInfo": dict(_SERVER_INFO),
        }

    def handshake(self, until: str = "operating") -> None:
        """The initialize handshake, from where it stands up to stage ``until``
        (``"initializing"``, ``"initialized"`` or ``"operating"``)."""
        order = ("idle", "initializing", "initialized", "operating")
        while order.index(self.stage) < order.index(until):
            if self.stage == "idle":
                self.init_id = self.request(Role.CLIENT, "initialize", self.initialize_params())
                self.stage = "initializing"
            elif self.stage == "initializing":
                self.respond(Role.SERVER, self.init_id, self.initialize_result())
                self.stage = "initialized"
            else:
                self.notify(Role.CLIENT, "notifications/initialized")
                self.stage = "operating"

    def discover(self) -> RequestId:
        """2026-07-28: a ``server/discover`` round trip."""
        rid = self.request(Role.CLIENT, _DISCOVER, {"_meta": self.meta()})
        self.respond(Role.SERVER, rid, self.result(_DISCOVER))
        return rid

    def opening(self) -> None:
        """Bring the session to where every method is allowed: the handshake, or in
        2026-07-28 a discover round trip (always for a client receiver, so that it knows
        the server's capabilities; sometimes for a server)."""
        if self.legacy:
            self.handshake()
        elif self.receiver is Role.CLIENT or self.draw(st.booleans()):
            self.discover()

    def filler(self) -> None:
        """Up to two answered round trips that change nothing (``ping`` either way, or
        a discover)."""
        for _ in range(self.draw(st.integers(0, 2))):
            if self.legacy:
                role = self.draw(st.sampled_from((Role.CLIENT, Role.SERVER)))
                rid = self.request(role, "ping", self.draw(st.sampled_from((None, {}))))
                self.respond(role.peer, rid, {})
            else:
                self.discover()

    def requests_of(self, role: Role) -> list[str]:
        """The requests ``role`` may send now (its peer's capabilities being as
        declared)."""
        if self.stage != "operating":
            return ["ping"] if "ping" in self.spec.methods else []
        return methods_of(self.spec, role, Kind.REQUEST, caps=self.caps[role.peer])

    def in_flight(self, role: Role, *, token: Any = None, meta: Any = None) -> RequestId:
        """A request of ``role``'s left unanswered (never a listen: progress and logging
        do not go on listen streams)."""
        methods = [m for m in self.requests_of(role) if m != _LISTEN]
        method = self.draw(st.sampled_from(methods))
        return self.request(role, method, self.params(role, method, token=token, meta=meta))

    def answered(self, role: Role) -> RequestId:
        """A request of ``role``'s, answered by its peer (``ping``; 2026: discover)."""
        if self.legacy:
            rid = self.request(role, "ping", self.draw(st.sampled_from((None, {}))))
            self.respond(role.peer, rid, {})
            return rid
        return self.discover()

    def listen(self, wanted: Mapping[str, Any], *, ack: bool = True, rid: Any = None) -> RequestId:
        """2026-07-28: a ``subscriptions/listen`` in flight (and its acknowledgement,
        granting everything asked)."""
        chosen = self.request(
            Role.CLIENT, _LISTEN, {"_meta": self.meta(), "notifications": wanted}, rid=rid
        )
        if ack:
            self.notify(
                Role.SERVER, _ACK, {"_meta": {META_SUBSCRIPTION: chosen}, "notifications": wanted}
            )
        return chosen

    # -- results

    def scenario(self, message: Any) -> Scenario:
        return Scenario(
            version=self.version,
            sender=self.sender,
            client_capabilities=copy.deepcopy(self.caps[Role.CLIENT]),
            server_capabilities=copy.deepcopy(self.caps[Role.SERVER]),
            exchange=tuple(self.lines),
            message=message if isinstance(message, bytes) else _line(message),
            max_message_size=self.max_message_size,
        )

    def near(
        self,
        name: str,
        message: Any,
        expect: Expect,
        repaired: Scenario | None,
        note: str,
    ) -> NearMiss:
        base = self.scenario(message)
        return NearMiss(
            version=base.version,
            sender=base.sender,
            client_capabilities=base.client_capabilities,
            server_capabilities=base.server_capabilities,
            exchange=base.exchange,
            message=base.message,
            max_message_size=base.max_message_size,
            rule=name,
            expect=expect,
            repaired=repaired,
            note=note,
        )


def _error_expect(name: str, rid: Any, **more: Any) -> Expect:
    return Expect(reply="error", code=RULES[name].code, id=rid, **more)


_NONE: Final = Expect(reply="none")


# ---------------------------------------------------------------------------- valid messages


def _can_request(s: _Script, role: Role) -> bool:
    return bool(s.requests_of(role))


def _sender_request(s: _Script, method: str | None = None) -> dict[str, Any]:
    """A valid request of the sender's (not sent)."""
    if method is None:
        method = s.draw(st.sampled_from(s.requests_of(s.sender)))
    rid = s.new_id(s.sender)
    return _request(rid, method, s.params(s.sender, method))


def _plain_notifications(s: _Script) -> list[str]:
    """Notifications of the sender's that need no state (legacy, operating)."""
    if not s.legacy or s.stage != "operating":
        return []
    return [
        m
        for m in methods_of(s.spec, s.sender, Kind.NOTIFICATION, caps=s.caps[s.sender])
        if m not in (_CANCELLED, _PROGRESS, _UPDATED)
    ]


def _progress(s: _Script) -> dict[str, Any]:
    """A receiver's request in flight with a progress token, and a valid progress
    notification of the sender's for it."""
    token = s.new_token()
    s.in_flight(s.receiver, token=token)
    params: dict[str, Any] = {"progressToken": token, "progress": s.draw(_PROGRESS_VALUES)}
    if s.draw(st.booleans()):
        params["total"] = params["progress"] + s.draw(st.integers(0, 100))
    if s.spec.progress_message and s.draw(st.booleans()):
        params["message"] = s.draw(st.text(max_size=10))
    return _notification(_PROGRESS, params)


def _sender_notification(s: _Script) -> dict[str, Any]:
    """A valid notification of the sender's (not sent; its setup is added)."""
    paths = []
    plain = _plain_notifications(s)
    if plain:
        paths.append("plain")
    if may_send(s.spec, s.sender, _PROGRESS) and _can_request(s, s.receiver):
        paths.append("progress")
    if may_send(s.spec, s.sender, _CANCELLED) and _can_request(s, s.sender):
        paths.append("cancel")
    path = s.draw(st.sampled_from(paths))
    if path == "plain":
        method = s.draw(st.sampled_from(plain))
        return _notification(method, s.params(s.sender, method))
    if path == "progress":
        return _progress(s)
    rid = s.in_flight(s.sender)
    params: dict[str, Any] = {"requestId": rid}
    if s.draw(st.booleans()):
        params["reason"] = s.draw(st.text(max_size=10))
    return _notification(_CANCELLED, params)


def _receiver_request_method(s: _Script) -> str:
    return "ping" if s.legacy else _DISCOVER


def _sender_response(s: _Script) -> dict[str, Any]:
    """A valid answer of the sender's to a receiver's request in flight."""
    method = _receiver_request_method(s)
    params = {"_meta": s.meta()} if not s.legacy else None
    rid = s.request(s.receiver, method, params)
    if s.draw(st.booleans()):
        return _error(rid, int(ErrorCode.INTERNAL_ERROR), "failed")
    return _response(rid, s.result(method))


def _kinds(s: _Script, kinds: Iterable[str]) -> list[str]:
    out = []
    for kind in kinds:
        if (
            (kind == "request" and _can_request(s, s.sender))
            or kind == "notification"
            or (kind == "response" and _can_request(s, s.receiver))
        ):
            out.append(kind)
    return out


def _valid(s: _Script, kinds: Iterable[str]) -> dict[str, Any]:
    """A valid message of the sender's of one of ``kinds`` (with its setup added)."""
    kind = s.draw(st.sampled_from(_kinds(s, kinds)))
    if kind == "request":
        return _sender_request(s)
    if kind == "notification":
        return _sender_notification(s)
    return _sender_response(s)


# ---------------------------------------------------------------------------- generators

_Generator = Callable[[_Ctx], st.SearchStrategy[NearMiss]]
_GENERATORS: dict[str, _Generator] = {}


def _generator(name: str) -> Callable[[_Generator], _Generator]:
    def register(fn: _Generator) -> _Generator:
        assert name in RULES, name
        _GENERATORS[name] = fn
        return fn

    return register


# -- envelope


_BAD_JSONRPC: Final[list[Any]] = ["1.0", "2", "2.0 ", "", 2.0, 2, None, ["2.0"]]
_BAD_IDS: Final[list[Any]] = [None, True, False, 1.5, -0.25, 1e300, [], {}, [1], {"id": 1}]
_BAD_METHODS: Final[list[Any]] = [1, None, True, [], {}, ["tools/list"], 0.5]
_BAD_PARAMS: Final[list[Any]] = [[], [1, 2], "params", 1, True, None]
_NOT_OBJECTS: Final[list[Any]] = ["a string", 42, None, True, 1.5]


def _is_id(value: Any) -> bool:
    return type(value) in (int, str)


@_generator("envelope.oversized-message")
@st.composite
def _oversized(draw: st.DrawFn, ctx: _Ctx) -> NearMiss:
    s = _Script(draw, ctx)
    s.max_message_size = ctx.max_message_size
    if not s.legacy or draw(st.booleans()):
        s.opening()
    # A request (the rule applies where the receiver gets requests): its id is read from
    # the two ends of the line that the receiver keeps, and the refusal goes to it. (An
    # oversized response is never answered: tests/test_connection_closing.py.)
    if s.legacy:
        base = _request(s.new_id(s.sender), "ping", {"_meta": {}})
    else:
        base = _request(s.new_id(s.sender), _DISCOVER, {"_meta": s.meta()})
    holder = base["params"]["_meta"]
    plain = _line(base)
    holder["x-pad"] = ""
    size = len(_line(base)) - 1  # without the newline
    holder["x-pad"] = "a" * (ctx.max_message_size - size + 1 + draw(st.integers(0, 64)))
    padded = _line(base)
    return s.near(
        "envelope.oversized-message",
        padded,
        _error_expect("envelope.oversized-message", base["id"]),
        s.scenario(plain),
        f"a line of {len(padded) - 1} bytes (limit {ctx.max_message_size})",
    )


# -- lifecycle


def _client_requests_after_handshake(s: _Script) -> list[str]:
    return [
        m
        for m in methods_of(s.spec, Role.CLIENT, Kind.REQUEST, caps=s.caps[Role.SERVER])
        if m != "ping"
    ]


@_generator("lifecycle.request-before-initialize")
@st.composite
def _request_before_initialize(draw: st.DrawFn, ctx: _Ctx) -> NearMiss:
    s = _Script(draw, ctx)
    s.filler()
    method = draw(st.sampled_from(_client_requests_after_handshake(s)))
    message = _sender_request(s, method)
    repaired = s.fork()
    repaired.handshake()
    return s.near(
        "lifecycle.request-before-initialize",
        message,
        _error_expect("lifecycle.request-before-initialize", message["id"]),
        repaired.scenario(message),
        f"{method} before initialize",
    )


@_generator("lifecycle.request-in-initialize-window")
@st.composite
def _request_in_initialize_window(draw: st.DrawFn, ctx: _Ctx) -> NearMiss:
    """A client request after the initialize result, before notifications/initialized:
    valid (the client waits only for the server's answer to initialize), so served."""
    s = _Script(draw, ctx)
    s.handshake("initialized")
    s.filler()
    methods = [
        m
        for m in methods_of(s.spec, s.sender, Kind.REQUEST, caps=s.caps[s.receiver])
        if m != "ping"
    ]
    message = _sender_request(s, draw(st.sampled_from(methods)))
    return s.near(
        "lifecycle.request-in-initialize-window",
        message,
        Expect(reply="result", id=message["id"]),
        s.scenario(message),
        f"{message['method']} before notifications/initialized",
    )


@_generator("lifecycle.server-request-before-initialized")
@st.composite
def _server_request_before_initialized(draw: st.DrawFn, ctx: _Ctx) -> NearMiss:
    """A server request other than ping before notifications/initialized: the server's
    SHOULD NOT; our client refuses it (the receiver's choice, never charged to it)."""
    s = _Script(draw, ctx)
    stage = draw(st.sampled_from(["idle", "initializing", "initialized"]))
    s.handshake(stage)
    s.filler()
    methods = [
        m
        for m in methods_of(s.spec, s.sender, Kind.REQUEST, caps=s.caps[s.receiver])
        if m != "ping"
    ]
    message = _sender_request(s, draw(st.sampled_from(methods)))
    repaired = s.fork()
    repaired.handshake()
    return s.near(
        "lifecycle.server-request-before-initialized",
        message,
        _error_expect("lifecycle.server-request-before-initialized", message["id"]),
        repaired.scenario(message),
        f"{message['method']} from the server in stage {stage}",
    )


@_generator("lifecycle.notification-before-initialized")
@st.composite
def _notification_before_initialized(draw: st.DrawFn, ctx: _Ctx) -> NearMiss:
    # Before the initialize result: once it is out, the notifications the capabilities
    # allow are open to both sides (the text restricts only requests in the window).
    s = _Script(draw, ctx)
    stage = draw(st.sampled_from(["idle", "initializing"]))
    s.handshake(stage)
    methods = [
        m
        for m in methods_of(s.spec, s.sender, Kind.NOTIFICATION, caps=s.caps[s.sender])
        if m not in (_CANCELLED, _PROGRESS, _MESSAGE, _UPDATED)
    ]
    method = draw(st.sampled_from(methods))
    message = _notification(method, s.params(s.sender, method))
    repaired = s.fork()
    repaired.handshake()
    return s.near(
        "lifecycle.notification-before-initialized",
        message,
        _NONE,
        repaired.scenario(message),
        f"{method} in stage {stage}",
    )


@_generator("lifecycle.initialize-version")
@st.composite
def _initialize_version(draw: st.DrawFn, ctx: _Ctx) -> NearMiss:
    s = _Script(draw, ctx)
    s.filler()
    requested = draw(_UNKNOWN_VERSIONS)
    rid = s.new_id(Role.CLIENT)
    message = _request(rid, "initialize", s.initialize_params(requested))
    return s.near(
        "lifecycle.initialize-version",
        message,
        Expect(reply="result", id=rid, versions=frozenset(_LEGACY_VERSIONS)),
        s.scenario(_request(rid, "initialize", s.initialize_params())),
        f"initialize asking for unknown version {requested!r}",
    )


@_generator("lifecycle.unsupported-version-result")
@st.composite
def _unsupported_version_result(draw: st.DrawFn, ctx: _Ctx) -> NearMiss:
    s = _Script(draw, ctx)
    s.handshake("initializing")
    chosen = draw(_UNKNOWN_VERSIONS)
    return s.near(
        "lifecycle.unsupported-version-result",
        _response(s.init_id, s.initialize_result(chosen)),
        Expect(reply="close"),
        s.scenario(_response(s.init_id, s.initialize_result())),
        f"the server chose unknown version {chosen!r}",
    )


@_generator("lifecycle.initialize-stateless")
@st.composite
def _initialize_stateless(draw: st.DrawFn, ctx: _Ctx) -> NearMiss:
    s = _Script(draw, ctx)
    s.filler()
    legacy = draw(st.sampled_from(_LEGACY_VERSIONS))
    rid = s.new_id(Role.CLIENT)
    message = _request(rid, "initialize", s.initialize_params(legacy))
    return s.near(
        "lifecycle.initialize-stateless",
        message,
        _error_expect("lifecycle.initialize-stateless", rid),
        s.scenario(_request(rid, _DISCOVER, {"_meta": s.meta()})),
        f"initialize for {legacy}",
    )


# -- ids


def _listen_flags(s: _Script) -> dict[str, Any]:
    """A listen's opt-ins: some list-changed flags, some resource URIs."""
    wanted: dict[str, Any] = {flag: True for flag in sorted(LISTEN_FLAGS) if s.draw(st.booleans())}
    if s.draw(st.booleans()):
        wanted["resourceSubscriptions"] = s.draw(
            st.lists(st.sampled_from(["file:///a.txt", "mcp://x/y", "urn:z"]), unique=True)
        )
    return wanted


# -- capabilities


def _gated(spec: VersionSpec, sender: Role, kind: Kind) -> list[str]:
    return [m for m in methods_of(spec, sender, kind) if spec.methods[m].gate]


# -- methods and params


def _params_methods(s: _Script) -> list[str]:
    methods = [
        m
        for m in methods_of(s.spec, s.sender, Kind.REQUEST, caps=s.caps[s.receiver])
        if m in s.spec.required_params
    ]
    if s.legacy and s.sender is Role.CLIENT:
        methods.append("initialize")
    return methods


# -- progress and cancellation


@_generator("progress.not-increasing")
@st.composite
def _progress_not_increasing(draw: st.DrawFn, ctx: _Ctx) -> NearMiss:
    s = _Script(draw, ctx)
    s.opening()
    first = _progress(s)
    s.add(s.sender, first)
    params = first["params"]
    last = params["progress"]
    for _ in range(draw(st.integers(0, 2))):
        last = last + draw(st.integers(1, 100))
        s.notify(s.sender, _PROGRESS, {**params, "progress": last})
    step = draw(st.sampled_from([0, 0.5, 1, 1000]))
    bad = {k: v for k, v in params.items() if k != "total"}
    bad["progress"] = last - step
    good = dict(bad, progress=last + draw(st.integers(1, 100)))
    return s.near(
        "progress.not-increasing",
        _notification(_PROGRESS, bad),
        _NONE,
        s.scenario(_notification(_PROGRESS, good)),
        f"progress {bad['progress']!r} after {last!r}",
    )


@_generator("cancel.initialize")
@st.composite
def _cancel_initialize(draw: st.DrawFn, ctx: _Ctx) -> NearMiss:
    s = _Script(draw, ctx)
    s.handshake("initializing")
    s.filler()
    params: dict[str, Any] = {"requestId": s.init_id}
    if draw(st.booleans()):
        params["reason"] = draw(st.text(max_size=10))
    repaired = s.fork()
    ping = repaired.request(Role.CLIENT, "ping")
    return s.near(
        "cancel.initialize",
        _notification(_CANCELLED, params),
        Expect(reply="none", pending=s.init_id),
        repaired.scenario(_notification(_CANCELLED, dict(params, requestId=ping))),
        "a cancel naming initialize",
    )


# -- 2026-07-28


@_generator("stateless.server-request")
@st.composite
def _stateless_server_request(draw: st.DrawFn, ctx: _Ctx) -> NearMiss:
    s = _Script(draw, ctx)
    s.opening()
    pairs = sorted(
        (version, m)
        for version, other in VERSIONS.items()
        if other.era is Era.INITIALIZE
        for m in methods_of(other, Role.SERVER, Kind.REQUEST)
    )
    version, method = draw(st.sampled_from(pairs))
    rid = s.new_id(Role.SERVER)
    message = _request(rid, method, s.params(Role.SERVER, method, version=version))
    return s.near(
        "stateless.server-request",
        message,
        _error_expect("stateless.server-request", rid),
        None,
        f"{method} (as in {version}) from a 2026 server",
    )


_INPUT_KINDS: Final = {
    # the kind of input → (client capability, request definition, result definition)
    "elicitation/create": ("elicitation", "ElicitRequest", "ElicitResult"),
    "sampling/createMessage": ("sampling", "CreateMessageRequest", "CreateMessageResult"),
    "roots/list": ("roots", "ListRootsRequest", "ListRootsResult"),
}


def _input_requests(
    s: _Script, caps: Mapping[str, Any], *, at_least: str | None = None
) -> dict[str, Any]:
    """``inputRequests`` for what ``caps`` declares (and ``at_least`` one of that kind)."""
    kinds = [k for k, (cap, _, _) in _INPUT_KINDS.items() if cap in caps]
    chosen = s.draw(st.lists(st.sampled_from(kinds), max_size=3)) if kinds else []
    if at_least is not None:
        chosen.append(at_least)
    out = {}
    for index, kind in enumerate(chosen):
        request = copy.deepcopy(s.draw(from_schema(s.version, _INPUT_KINDS[kind][1])))
        out[f"k{index}"] = {
            "method": kind,
            **({"params": request["params"]} if "params" in request else {}),
        }
    return out


def _input_required_methods(s: _Script, allowed: bool) -> list[str]:
    return [
        m
        for m in s.requests_of(Role.CLIENT)
        if s.spec.methods[m].input_required is allowed and m != _LISTEN
    ]


@_generator("input-required.retry")
@st.composite
def _input_required_retry(draw: st.DrawFn, ctx: _Ctx) -> NearMiss:
    s = _Script(draw, ctx)
    s.opening()
    method = draw(st.sampled_from(_input_required_methods(s, True)))
    params = s.params(Role.CLIENT, method)
    assert params is not None
    first = s.request(Role.CLIENT, method, params)
    requests = _input_requests(s, s.caps[Role.CLIENT])
    result: dict[str, Any] = {"resultType": "input_required"}
    if requests:
        result["inputRequests"] = requests
    if not requests or draw(st.booleans()):
        result["requestState"] = draw(st.text(max_size=16))
    s.respond(Role.SERVER, first, result)
    retry = copy.deepcopy(params)
    if requests:
        retry["inputResponses"] = {
            key: draw(from_schema(s.version, _INPUT_KINDS[item["method"]][2]))
            for key, item in requests.items()
        }
    if "requestState" in result:
        retry["requestState"] = result["requestState"]
    rid = s.new_id(Role.CLIENT)
    message = _request(rid, method, retry)
    return s.near(
        "input-required.retry",
        message,
        Expect(reply="result", id=rid),
        s.scenario(message),
        f"the retry of {method} with {len(requests)} input responses",
    )


@_generator("input-required.invalid")
@st.composite
def _input_required_invalid(draw: st.DrawFn, ctx: _Ctx) -> NearMiss:
    s = _Script(draw, ctx)
    s.opening()
    ways = ["neither inputRequests nor requestState", "a requestState that is not a string"]
    ways.append("an input request of an unknown kind")
    if _input_required_methods(s, False):
        ways.append("a method that cannot ask for input")
    way = draw(st.sampled_from(ways))
    good: dict[str, Any] = {"resultType": "input_required", "requestState": draw(st.text())}
    bad = copy.deepcopy(good)
    allowed = draw(st.sampled_from(_input_required_methods(s, True)))
    method = allowed
    if way == "neither inputRequests nor requestState":
        del bad["requestState"]
    elif way == "a requestState that is not a string":
        bad["requestState"] = draw(st.sampled_from([1, None, [], {}, True]))
    elif way == "an input request of an unknown kind":
        kind = draw(st.sampled_from(["tools/call", "ping", "notifications/progress"]) | _INVENTED)
        bad["inputRequests"] = {"k": {"method": kind, "params": {}}}
    else:
        method = draw(st.sampled_from(_input_required_methods(s, False)))
    base = s.fork()
    rid = s.request(Role.CLIENT, method, s.params(Role.CLIENT, method))
    if method == allowed:
        repaired = s.scenario(_response(rid, good))
    else:
        base.request(Role.CLIENT, allowed, base.params(Role.CLIENT, allowed), rid=rid)
        repaired = base.scenario(_response(rid, good))
    return s.near(
        "input-required.invalid",
        _response(rid, bad),
        _NONE,
        repaired,
        f"input_required for {method} with {way}",
    )


@_generator("input-required.undeclared-capability")
@st.composite
def _input_required_undeclared(draw: st.DrawFn, ctx: _Ctx) -> NearMiss:
    kind = draw(st.sampled_from(sorted(_INPUT_KINDS)))
    capability = _INPUT_KINDS[kind][0]
    full = _capabilities(ctx.spec.version, Role.CLIENT)
    lacking = {k: v for k, v in full.items() if k != capability}
    s = _Script(draw, ctx, client_caps=lacking)
    s.opening()
    method = draw(st.sampled_from(_input_required_methods(s, True)))
    rid = s.request(Role.CLIENT, method, s.params(Role.CLIENT, method))
    result = {
        "resultType": "input_required",
        "inputRequests": _input_requests(s, {}, at_least=kind),
    }
    return s.near(
        "input-required.undeclared-capability",
        _response(rid, result),
        _NONE,
        s.recap(client_caps=full).scenario(_response(rid, result)),
        f"input_required asking for {kind} without the capability {capability}",
    )


def _stream_note(method: str, sid: Any, uri: str | None = None) -> dict[str, Any]:
    params: dict[str, Any] = {"_meta": {META_SUBSCRIPTION: sid}}
    if uri is not None:
        params["uri"] = uri
    return _notification(method, params)


def _opted_in(wanted: Mapping[str, Any]) -> list[tuple[str, str | None]]:
    out: list[tuple[str, str | None]] = [
        (LISTEN_FLAGS[flag], None)
        for flag, on in sorted(wanted.items())
        if flag in LISTEN_FLAGS and on
    ]
    out += [(_UPDATED, uri) for uri in wanted.get("resourceSubscriptions", ())]
    return out


@_generator("subscriptions.listen-ack-first")
@st.composite
def _listen_ack_first(draw: st.DrawFn, ctx: _Ctx) -> NearMiss:
    s = _Script(draw, ctx)
    s.opening()
    wanted = _listen_flags(s)
    if not _opted_in(wanted):
        wanted[draw(st.sampled_from(sorted(LISTEN_FLAGS)))] = True
    repaired = s.fork()
    rid = s.listen(wanted, ack=False)
    repaired.listen(wanted, ack=True, rid=rid)
    method, uri = draw(st.sampled_from(_opted_in(wanted)))
    message = _stream_note(method, rid, uri)
    return s.near(
        "subscriptions.listen-ack-first",
        message,
        _NONE,
        repaired.scenario(message),
        f"{method} before the acknowledgement",
    )


@_generator("subscriptions.not-opted-in")
@st.composite
def _not_opted_in(draw: st.DrawFn, ctx: _Ctx) -> NearMiss:
    s = _Script(draw, ctx)
    s.opening()
    flag = draw(st.sampled_from(sorted(LISTEN_FLAGS)))
    uris = ["file:///a.txt", "mcp://x/y"]
    ways = ["a type not opted into", "a resource not subscribed", "no subscriptionId"]
    ways.append("the subscriptionId of no listen")
    way = draw(st.sampled_from(ways))
    wanted = {k: v for k, v in _listen_flags(s).items() if k != flag}
    fixed_wanted = dict(wanted)
    uri: str | None = None
    if way == "a resource not subscribed":
        wanted["resourceSubscriptions"] = uris[:1]
        fixed_wanted["resourceSubscriptions"] = uris
        method, uri = _UPDATED, uris[1]
    else:
        fixed_wanted[flag] = True
        method = LISTEN_FLAGS[flag]
    if way in ("a type not opted into", "a resource not subscribed"):
        repaired = s.fork()
        rid = s.listen(wanted)
        repaired.listen(fixed_wanted, rid=rid)
        message = fixed = _stream_note(method, rid, uri)
    else:
        rid = s.listen(fixed_wanted)
        repaired = s.fork()
        fixed = _stream_note(method, rid, uri)
        if way == "no subscriptionId":
            message = _notification(method, {"uri": uri} if uri else None)
        else:
            message = _stream_note(method, s.new_id(Role.CLIENT), uri)
    return s.near(
        "subscriptions.not-opted-in",
        message,
        _NONE,
        repaired.scenario(fixed),
        f"{method} with {way}",
    )


# ---------------------------------------------------------------------------- the faults


class ScriptGround(Ground):
    """A :class:`_Script` as the ground of a fault: what the builder asks for (an answered
    request, a valid message of the sender's, ...) is added to the script."""

    def __init__(self, script: _Script) -> None:
        self.script = script
        self.version = script.version
        self.sender = script.sender
        self.transport = "script"
        self.repairs = True
        self.prepared = True
        """Whether the script is where the fault may be sent (see :meth:`prepare`)."""

    def capabilities(self, role: Role) -> Mapping[str, Any] | None:
        return self.script.caps[role]

    def fresh_id(self) -> RequestId:
        return self.script.new_id(self.sender)

    def meta(self, **overrides: Any) -> dict[str, Any]:
        meta = self.script.meta()
        names = {"version": META_VERSION, "capabilities": META_CAPABILITIES}
        for name, value in overrides.items():
            key = names.get(name, name)
            if value is None:
                meta.pop(key, None)
            else:
                meta[key] = value
        return meta

    def valid(self, kinds: Sequence[str]) -> dict[str, Any]:
        s = self.script
        return _valid(s, kinds if _kinds(s, kinds) else ("notification",))

    def requests_possible(self) -> bool:
        return _can_request(self.script, self.sender)

    def answers_possible(self) -> bool:
        return _can_request(self.script, self.script.receiver)

    def answered_ids(self, *, integers: bool = False) -> list[RequestId]:
        return [self.script.answered(self.sender)]

    def some_request(self) -> tuple[str, Any]:
        s = self.script
        method = s.draw(st.sampled_from(s.requests_of(s.sender)))
        return method, s.params(s.sender, method)

    def reusable_ids(self) -> list[tuple[RequestId, str]] | str:
        s = self.script
        if not s.legacy:
            return [(s.listen(_listen_flags(s), ack=s.draw(st.booleans())), "a listen in flight")]
        ways = ["an answered request", "a refused request"]
        if s.sender is Role.CLIENT:
            ways.append("the initialize request")
        way = s.draw(st.sampled_from(ways))
        if way == "the initialize request":
            assert s.init_id is not None
            rid = s.init_id
        else:
            rid = s.request(s.sender, "ping")
            if way == "a refused request":
                s.add(s.receiver, _error(rid, int(ErrorCode.INTERNAL_ERROR), "refused"))
            else:
                s.respond(s.receiver, rid, {})
        s.filler()
        return [(rid, way)]

    def twin_ids(self) -> list[tuple[RequestId, RequestId]] | str:
        s = self.script
        used = s.used[s.sender]
        n = s.draw(st.integers(-5, 2**31))
        while {_key(n), _key(str(n))} & used:
            n += 1
        first: RequestId
        twin: RequestId
        first, twin = (n, str(n)) if s.draw(st.booleans()) else (str(n), n)
        s.use(s.sender, twin)
        if s.legacy:
            s.request(s.sender, "ping", rid=first)
            s.respond(s.receiver, first, {})
        else:
            s.listen(_listen_flags(s), ack=s.draw(st.booleans()), rid=first)
        return [(first, twin)]

    def stray_ids(self) -> list[tuple[RequestId, str]]:
        s = self.script
        receiver = s.receiver
        method = _receiver_request_method(s)
        params = {"_meta": s.meta()} if not s.legacy else None
        ways = ["a request never sent"]
        if _can_request(s, receiver):
            ways += ["an answered request", "the same digits as a string or number"]
        way = s.draw(st.sampled_from(ways))
        rid: RequestId
        if way == "a request never sent":
            rid = s.new_id(receiver)
        elif way == "an answered request":
            rid = s.request(receiver, method, params)
            s.respond(s.sender, rid, s.result(method))
        else:
            used = s.used[receiver]
            n = s.draw(st.integers(0, 2**31))
            while {_key(n), _key(str(n))} & used:
                n += 1
            asked: RequestId
            asked, rid = (n, str(n)) if s.draw(st.booleans()) else (str(n), n)
            s.request(receiver, method, params, rid=asked)
            s.use(receiver, rid)
        return [(rid, way)]

    def receivers_request(self) -> RequestId | None:
        s = self.script
        if not _can_request(s, s.receiver):
            return None
        params = {"_meta": s.meta()} if not s.legacy else None
        return s.request(s.receiver, _receiver_request_method(s), params)

    def result(self) -> dict[str, Any]:
        return self.script.result(_receiver_request_method(self.script))

    def initialize_params(self) -> dict[str, Any] | None:
        s = self.script
        return None if s.stage == "idle" else s.initialize_params()

    def params_of(
        self,
        method: str,
        *,
        version: str | None = None,
        as_request: bool | None = None,
        sent_by: Role | None = None,
    ) -> Any:
        s = self.script
        if method == "initialize":
            return s.initialize_params()
        return s.params(sent_by or s.sender, method, version=version, as_request=as_request)

    def params_methods(self) -> list[str]:
        return _params_methods(self.script)

    def prepare(self, method: str) -> None:
        if self.prepared:
            return
        self.prepared = True
        if method != "initialize":
            self.script.opening()
            self.script.filler()

    def log_request(self) -> bool:
        self.script.in_flight(Role.CLIENT, meta={META_LOG_LEVEL: "debug"})
        return True

    def stray_tokens(self, draw: Draw) -> list[tuple[Any, str]]:
        s = self.script
        way = s.draw(st.sampled_from(["a token never sent", "the token of an answered request"]))
        token = s.new_token()
        if way == "the token of an answered request":
            method = s.draw(st.sampled_from([m for m in s.requests_of(s.receiver) if m != _LISTEN]))
            rid = s.request(s.receiver, method, s.params(s.receiver, method, token=token))
            s.respond(s.sender, rid, s.result(method))
        return [(token, way)]

    def token_request(self) -> Any:
        s = self.script
        token = s.new_token()
        s.in_flight(s.receiver, token=token)
        return token

    def cancellable(self) -> RequestId | None:
        s = self.script
        if _can_request(s, s.sender):
            return s.in_flight(s.sender)
        # (A 2026-07-28 server cancels only a client's listen stream.)
        return s.listen(_listen_flags(s), ack=s.draw(st.booleans()))

    def subscribed_uri(self) -> str | None:
        s = self.script
        uri = "file:///" + s.draw(st.text("abcxyz", min_size=1, max_size=6))
        rid = s.request(Role.CLIENT, "resources/subscribe", {"uri": uri})
        s.respond(Role.SERVER, rid, {})
        return uri

    def receiver_versions(self) -> tuple[str, ...] | None:
        return (self.version,)

    def taken(self, rid: RequestId) -> bool:
        return _key(rid) in self.script.used[self.sender]


#: How the script of a repaired twin is made from the near miss's (finished) script.
Repair = Callable[[_Script], _Script]


def _opened(s: _Script) -> None:
    s.opening()


def _maybe_opened(s: _Script) -> None:
    if not s.legacy or s.draw(st.booleans()):
        s.opening()


def _opened_filled(s: _Script) -> None:
    _opened(s)
    s.filler()


def _maybe_opened_filled(s: _Script) -> None:
    _maybe_opened(s)
    s.filler()


def _nothing(s: _Script) -> None:
    """(The builder says where the script must be: :meth:`ScriptGround.prepare`.)"""


def _lacking_request_gate(s: _Script) -> Repair:
    """The receiver lacks the capability that gates a request of the sender's."""
    spec, receiver = s.spec, s.receiver
    # (Requests of one direction only: the probe leaves a peer's tasks/* alone.)
    gated = [
        m
        for m in _gated(spec, s.sender, Kind.REQUEST)
        if spec.methods[m].direction is SENDS[s.sender]
    ]
    method = s.draw(st.sampled_from(gated))
    full = s.caps[receiver]
    s.caps[receiver] = _without(full, spec.methods[method].gate, s.draw(st.booleans()))
    s.opening()
    key = "client_caps" if receiver is Role.CLIENT else "server_caps"
    return lambda done: done.recap(**{key: full})


def _lacking_subcapability(s: _Script) -> Repair:
    """The client lacks a sub-capability a server's request may need."""
    spec = s.spec
    full = s.caps[Role.CLIENT]
    ways = []
    if spec.elicitation_modes and may_send(spec, Role.SERVER, "elicitation/create"):
        ways += ["url", "form"]
    if spec.sampling_tools and may_send(spec, Role.SERVER, "sampling/createMessage"):
        ways += ["tools", "context"]
    way = s.draw(st.sampled_from(ways))
    lacking = copy.deepcopy(full)
    if way in ("url", "form"):
        lacking["elicitation"] = {"form": {}} if way == "url" else {"url": {}}
    else:
        lacking["sampling"] = {k: v for k, v in full["sampling"].items() if k != way}
    s.caps[Role.CLIENT] = lacking
    s.opening()
    return lambda done: done.recap(client_caps=full)


def _lacking_notification_gate(s: _Script) -> Repair:
    """The sender lacks the capability that gates one of its notifications."""
    spec, sender = s.spec, s.sender
    needs_state = _STREAM_NOTIFICATIONS if spec.era is Era.STATELESS else {_UPDATED}
    methods = [m for m in _gated(spec, sender, Kind.NOTIFICATION) if m not in needs_state]
    method = s.draw(st.sampled_from(methods))
    full = s.caps[sender]
    s.caps[sender] = _without(full, spec.methods[method].gate, s.draw(st.booleans()))
    s.opening()
    key = "client_caps" if sender is Role.CLIENT else "server_caps"
    return lambda done: done.recap(**{key: full})


def _handshake_to_any_stage(s: _Script) -> None:
    s.handshake(s.draw(st.sampled_from(["initializing", "initialized", "operating"])))
    s.filler()


#: Where the script of each rule's fault starts (what a live peer's state would be): by
#: default an opened session. A setup may return how to make the script of the repaired
#: twin from the finished script (default: the same script).
_SETUPS: Final[Mapping[str, Callable[[_Script], Repair | None]]] = {
    "envelope.parse-error": _maybe_opened_filled,
    "envelope.invalid-request": _maybe_opened,
    "envelope.invalid-response": _maybe_opened,
    "envelope.batch-not-allowed": _maybe_opened,
    "envelope.empty-batch": _opened_filled,
    "lifecycle.second-initialize": _handshake_to_any_stage,
    "capability.undeclared-server-capability": _lacking_request_gate,
    "capability.undeclared-client-capability": _lacking_request_gate,
    "capability.undeclared-client-subcapability": _lacking_subcapability,
    "capability.undeclared-notification": _lacking_notification_gate,
    "params.invalid": _nothing,
}


def expect_of(fault: Fault) -> Expect:
    """What our own Connection must do with ``fault``'s message: the :class:`Expect` of
    its :class:`~mcp_sansio.testing.Demand` (an error under the first id it allows, with
    the rule's code)."""
    due = fault.expect
    if due.reply == "error":
        return Expect(
            reply="error",
            code=RULES[fault.rule].code,
            id=due.ids[0] if due.ids else None,
            data=fault.data,
            data_keys=fault.data_keys,
        )
    if due.reply == "result":
        return Expect(reply="result", id=due.ids[0] if due.ids else None)
    return _NONE


@st.composite
def _from_fault(
    draw: st.DrawFn, ctx: _Ctx, name: str, builder: FaultBuilder | None = None
) -> NearMiss:
    s = _Script(draw, ctx)
    setup = _SETUPS.get(name, _opened)
    repair = setup(s)
    ground = ScriptGround(s)
    ground.prepared = setup is not _nothing

    def variation(strategy: st.SearchStrategy[Any], canonical: Any, /) -> Any:
        return draw(strategy)

    fault = (builder or FAULTS[name])(ground, variation)
    assert not isinstance(fault, str), (name, ctx.spec.version, fault)
    message = fault.message + b"\n" if isinstance(fault.message, bytes) else fault.message
    if fault.repaired is None:
        repaired = None
    elif fault.repaired_alone:
        repaired = _Script(draw, ctx).scenario(fault.repaired)
    else:
        repaired = (s if repair is None else repair(s)).scenario(fault.repaired)
    return s.near(name, message, expect_of(fault), repaired, fault.why)


def params_invalid_near(
    ctx: _Ctx, methods: frozenset[str] | None = None
) -> st.SearchStrategy[NearMiss]:
    """The near misses of ``params.invalid`` for ``methods`` only (default: all)."""
    return _from_fault(ctx, "params.invalid", functools.partial(invalid_params, methods=methods))


for _name in FAULTS:
    _GENERATORS[_name] = functools.partial(_from_fault, name=_name)

assert set(_GENERATORS) == set(RULES), set(RULES) ^ set(_GENERATORS)


# ---------------------------------------------------------------------------- the API


def near_misses(
    version: str,
    *,
    sender: Role = Role.CLIENT,
    rules: Iterable[str] | None = None,
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
) -> st.SearchStrategy[NearMiss]:
    """Near misses of ``version`` sent by ``sender``: each breaks one rule.

    :param rules: the names of the rules to break (default: all); those that do not
        apply to ``version`` with ``sender.peer`` as the receiver are left out.
    :param max_message_size: the receiver's maximum message size, for
        ``envelope.oversized-message`` (at least :data:`MIN_MESSAGE_SIZE`).
    :raises KeyError: an unknown version or rule name.
    :raises ValueError: none of the rules applies, or ``max_message_size`` is too small.
    """
    spec = VERSIONS[version]
    if max_message_size < MIN_MESSAGE_SIZE:
        raise ValueError(f"max_message_size must be at least {MIN_MESSAGE_SIZE}")
    names = list(RULES) if rules is None else [rule(name).name for name in rules]
    receiver = sender.peer
    chosen = [name for name in names if RULES[name].applies(version, receiver)]
    if not chosen:
        raise ValueError(
            f"none of the rules {names} applies to {version} with a {receiver.value} receiving"
        )
    ctx = _Ctx(spec, sender, max_message_size)
    return st.one_of([_GENERATORS[name](ctx) for name in chosen])
