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
from mcp_sansio._state import LIFECYCLE_METHODS, Role
from mcp_sansio._versions import VERSIONS, Direction, Era, Kind, VersionSpec, capability_met
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
#: The 2026-07-28 listen opt-in flags, and the notification each admits (the receiver's table,
#: kept here as the sender sees it; tests/test_testing_near_miss.py checks the two agree).
LISTEN_FLAGS: Final[Mapping[str, str]] = {
    "toolsListChanged": "notifications/tools/list_changed",
    "promptsListChanged": "notifications/prompts/list_changed",
    "resourcesListChanged": "notifications/resources/list_changed",
}
_SENDS: Final = {Role.CLIENT: Direction.CLIENT_TO_SERVER, Role.SERVER: Direction.SERVER_TO_CLIENT}
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


def _methods(
    spec: VersionSpec, sender: Role, kind: Kind, *, caps: Mapping[str, Any] | None = None
) -> list[str]:
    """The methods of ``kind`` that ``sender`` may send in ``spec`` (not the lifecycle
    ones); with ``caps``, only those whose gate ``caps`` meets."""
    return sorted(
        name
        for name, r in spec.methods.items()
        if r.kind is kind
        and r.direction in (Direction.BOTH, _SENDS[sender])
        and name not in LIFECYCLE_METHODS
        and (caps is None or not r.gate or capability_met(caps, r.gate))
    )


def _may_send(spec: VersionSpec, sender: Role, method: str) -> bool:
    r = spec.methods.get(method)
    return r is not None and r.direction in (Direction.BOTH, _SENDS[sender])


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
        return _methods(self.spec, role, Kind.REQUEST, caps=self.caps[role.peer])

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
        for m in _methods(s.spec, s.sender, Kind.NOTIFICATION, caps=s.caps[s.sender])
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
    if _may_send(s.spec, s.sender, _PROGRESS) and _can_request(s, s.receiver):
        paths.append("progress")
    if _may_send(s.spec, s.sender, _CANCELLED) and _can_request(s, s.sender):
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


@_generator("envelope.parse-error")
@st.composite
def _parse_error(draw: st.DrawFn, ctx: _Ctx) -> NearMiss:
    s = _Script(draw, ctx)
    if not s.legacy or draw(st.booleans()):
        s.opening()
    s.filler()
    valid = _line(_valid(s, ("request", "notification", "response")))
    text = valid[:-1]
    how = draw(
        st.sampled_from(
            [
                "cut short",
                "a trailing comma",
                "single quotes",
                "garbage before it",
                "invalid UTF-8",
                "an unquoted key",
            ]
        )
    )
    if how == "cut short":
        bad = text[: draw(st.integers(1, len(text) - 1))]
    elif how == "a trailing comma":
        bad = text[:-1] + b"," + text[-1:]
    elif how == "single quotes":
        bad = text.replace(b'"jsonrpc"', b"'jsonrpc'", 1)
    elif how == "garbage before it":
        bad = draw(st.sampled_from([b"x", b"//", b")]}'", b"\x00", b"NaN"])) + text
    elif how == "invalid UTF-8":
        bad = text.replace(b'"2.0"', b'"2.0\xff"', 1)
    else:
        bad = text.replace(b'"jsonrpc"', b"jsonrpc", 1)
    return s.near(
        "envelope.parse-error",
        bad + b"\n",
        _error_expect("envelope.parse-error", None),
        s.scenario(valid),
        f"JSON with {how}",
    )


_BAD_JSONRPC: Final[list[Any]] = ["1.0", "2", "2.0 ", "", 2.0, 2, None, ["2.0"]]
_BAD_IDS: Final[list[Any]] = [None, True, False, 1.5, -0.25, 1e300, [], {}, [1], {"id": 1}]
_BAD_METHODS: Final[list[Any]] = [1, None, True, [], {}, ["tools/list"], 0.5]
_BAD_PARAMS: Final[list[Any]] = [[], [1, 2], "params", 1, True, None]
_NOT_OBJECTS: Final[list[Any]] = ["a string", 42, None, True, 1.5]


def _is_id(value: Any) -> bool:
    return type(value) in (int, str)


@_generator("envelope.invalid-request")
@st.composite
def _invalid_request(draw: st.DrawFn, ctx: _Ctx) -> NearMiss:
    s = _Script(draw, ctx)
    if not s.legacy or draw(st.booleans()):
        s.opening()
    base = _valid(s, ("request", "notification"))
    bad = copy.deepcopy(base)
    rid = base.get("id")
    reply_id = rid if _is_id(rid) else None
    faults = ["jsonrpc missing", "jsonrpc wrong", "id invalid", "method invalid", "params invalid"]
    faults += ["result on a request", "error on a request", "not an object"]
    if "id" in base:
        faults.append("method missing")
    fault = draw(st.sampled_from(faults))
    if fault == "jsonrpc missing":
        del bad["jsonrpc"]
    elif fault == "jsonrpc wrong":
        bad["jsonrpc"] = draw(st.sampled_from(_BAD_JSONRPC))
    elif fault == "id invalid":
        bad["id"] = draw(st.sampled_from(_BAD_IDS))
        reply_id = None
    elif fault == "method invalid":
        bad["method"] = draw(st.sampled_from(_BAD_METHODS))
    elif fault == "method missing":
        del bad["method"]
    elif fault == "params invalid":
        bad["params"] = draw(st.sampled_from(_BAD_PARAMS))
    elif fault == "result on a request":
        bad["result"] = {}
    elif fault == "error on a request":
        bad["error"] = {"code": -32603, "message": "x"}
    else:
        bad = draw(st.sampled_from([*_NOT_OBJECTS, orjson.dumps(base).decode()]))
        reply_id = None
    return s.near(
        "envelope.invalid-request",
        bad,
        _error_expect("envelope.invalid-request", reply_id),
        s.scenario(base),
        f"{fault} ({'request' if 'id' in base else 'notification'} {base.get('method')!r})",
    )


@_generator("envelope.invalid-response")
@st.composite
def _invalid_response(draw: st.DrawFn, ctx: _Ctx) -> NearMiss:
    s = _Script(draw, ctx)
    if not s.legacy or draw(st.booleans()):
        s.opening()
    answerable = _can_request(s, s.receiver)
    # (A 2026 server never asks anything: no response of the client's is valid.)
    base = _sender_response(s) if answerable else _response(s.new_id(s.receiver), s.result("ping"))
    bad = copy.deepcopy(base)
    faults = ["both result and error", "jsonrpc missing", "jsonrpc wrong", "id invalid"]
    if "result" in base:
        faults += ["result not an object", "id missing"]
    else:
        faults += ["error not an object", "error code invalid", "error message invalid"]
    fault = draw(st.sampled_from(faults))
    if fault == "both result and error":
        bad["result"] = base.get("result", {})
        bad["error"] = base.get("error", {"code": -32603, "message": "x"})
    elif fault == "jsonrpc missing":
        del bad["jsonrpc"]
    elif fault == "jsonrpc wrong":
        bad["jsonrpc"] = draw(st.sampled_from(_BAD_JSONRPC))
    elif fault == "id invalid":
        bad["id"] = draw(
            st.sampled_from([i for i in _BAD_IDS if i is not None or "result" in base])
        )
    elif fault == "id missing":
        del bad["id"]
    elif fault == "result not an object":
        bad["result"] = draw(st.sampled_from([[], "ok", 1, None, True, [{}]]))
    elif fault == "error not an object":
        bad["error"] = draw(st.sampled_from(["failed", -32603, [], None]))
    elif fault == "error code invalid":
        error = bad["error"]
        if draw(st.booleans()):
            del error["code"]
        else:
            error["code"] = draw(st.sampled_from(["-32603", 1.5, None, True, []]))
    else:
        error = bad["error"]
        if draw(st.booleans()):
            del error["message"]
        else:
            error["message"] = draw(st.sampled_from([1, None, [], {}, True]))
    return s.near(
        "envelope.invalid-response",
        bad,
        _NONE,
        s.scenario(base) if answerable else None,
        f"a response with {fault}",
    )


@_generator("envelope.batch-not-allowed")
@st.composite
def _batch_not_allowed(draw: st.DrawFn, ctx: _Ctx) -> NearMiss:
    s = _Script(draw, ctx)
    if not s.legacy or draw(st.booleans()):
        s.opening()
    kinds = draw(st.sampled_from([("request", "notification"), ("response",)]))
    if not _kinds(s, kinds):
        kinds = ("request", "notification")
    members = [_valid(s, kinds) for _ in range(draw(st.integers(1, 3)))]
    return s.near(
        "envelope.batch-not-allowed",
        members,
        _error_expect("envelope.batch-not-allowed", None),
        s.scenario(members[0]),
        f"a batch of {len(members)}",
    )


@_generator("envelope.empty-batch")
@st.composite
def _empty_batch(draw: st.DrawFn, ctx: _Ctx) -> NearMiss:
    s = _Script(draw, ctx)
    s.opening()
    s.filler()
    member = _valid(s, ("request", "notification", "response"))
    return s.near(
        "envelope.empty-batch",
        [],
        _error_expect("envelope.empty-batch", None),
        s.scenario([member]),
        "an empty batch",
    )


@_generator("envelope.batch-mixed")
@st.composite
def _batch_mixed(draw: st.DrawFn, ctx: _Ctx) -> NearMiss:
    s = _Script(draw, ctx)
    s.opening()
    first = _valid(s, ("request", "notification"))
    answer = _sender_response(s)
    members = draw(st.permutations([first, answer]))
    return s.near(
        "envelope.batch-mixed",
        members,
        _error_expect("envelope.batch-mixed", None),
        s.scenario([first]),
        "a batch of a request or notification and a response",
    )


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
        for m in _methods(s.spec, Role.CLIENT, Kind.REQUEST, caps=s.caps[Role.SERVER])
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
        m for m in _methods(s.spec, s.sender, Kind.REQUEST, caps=s.caps[s.receiver]) if m != "ping"
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
        m for m in _methods(s.spec, s.sender, Kind.REQUEST, caps=s.caps[s.receiver]) if m != "ping"
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
        for m in _methods(s.spec, s.sender, Kind.NOTIFICATION, caps=s.caps[s.sender])
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


@_generator("lifecycle.second-initialize")
@st.composite
def _second_initialize(draw: st.DrawFn, ctx: _Ctx) -> NearMiss:
    s = _Script(draw, ctx)
    stage = draw(st.sampled_from(["initializing", "initialized", "operating"]))
    s.handshake(stage)
    s.filler()
    message = _request(s.new_id(Role.CLIENT), "initialize", s.initialize_params())
    return s.near(
        "lifecycle.second-initialize",
        message,
        _error_expect("lifecycle.second-initialize", message["id"]),
        _Script(draw, ctx).scenario(message),
        f"initialize again in stage {stage}",
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


@_generator("ids.duplicate-request-id")
@st.composite
def _duplicate_id(draw: st.DrawFn, ctx: _Ctx) -> NearMiss:
    s = _Script(draw, ctx)
    s.opening()
    if s.legacy:
        ways = ["an answered request", "a refused request"]
        if s.sender is Role.CLIENT:
            ways.append("initialize")
        way = draw(st.sampled_from(ways))
        if way == "initialize":
            rid = s.init_id
        else:
            rid = s.request(s.sender, "ping")
            if way == "a refused request":
                s.add(s.receiver, _error(rid, int(ErrorCode.INTERNAL_ERROR), "refused"))
            else:
                s.respond(s.receiver, rid, {})
        s.filler()
        reply_id: Any = rid
    else:
        way = "a listen in flight"
        rid = s.listen(_listen_flags(s), ack=draw(st.booleans()))
        reply_id = None
    method = draw(st.sampled_from(s.requests_of(s.sender)))
    message = _request(rid, method, s.params(s.sender, method))
    fixed = dict(message, id=s.new_id(s.sender))
    return s.near(
        "ids.duplicate-request-id",
        message,
        _error_expect("ids.duplicate-request-id", reply_id),
        s.scenario(fixed),
        f"{method} reusing the id {rid!r} of {way}",
    )


@_generator("ids.string-and-int-are-different")
@st.composite
def _string_and_int(draw: st.DrawFn, ctx: _Ctx) -> NearMiss:
    s = _Script(draw, ctx)
    s.opening()
    used = s.used[s.sender]
    n = draw(st.integers(-5, 2**31))
    while {_key(n), _key(str(n))} & used:
        n += 1
    first, twin = (n, str(n)) if draw(st.booleans()) else (str(n), n)
    s.use(s.sender, twin)
    if s.legacy:
        s.request(s.sender, "ping", rid=first)
        s.respond(s.receiver, first, {})
        message = _request(twin, "ping")
    else:
        s.listen(_listen_flags(s), ack=draw(st.booleans()), rid=first)
        message = _request(twin, _DISCOVER, {"_meta": s.meta()})
    return s.near(
        "ids.string-and-int-are-different",
        message,
        Expect(reply="result", id=twin),
        s.scenario(message),
        f"id {twin!r} after id {first!r}",
    )


@_generator("response.unknown-id")
@st.composite
def _unknown_response(draw: st.DrawFn, ctx: _Ctx) -> NearMiss:
    s = _Script(draw, ctx)
    s.opening()
    receiver = s.receiver
    method = _receiver_request_method(s)
    params = {"_meta": s.meta()} if not s.legacy else None
    ways = ["never sent"]
    if _can_request(s, receiver):
        ways += ["already answered", "the same digits as a string or number"]
    way = draw(st.sampled_from(ways))
    if way == "never sent":
        rid: Any = s.new_id(receiver)
    elif way == "already answered":
        rid = s.request(receiver, method, params)
        s.respond(s.sender, rid, s.result(method))
    else:
        used = s.used[receiver]
        n = draw(st.integers(0, 2**31))
        while {_key(n), _key(str(n))} & used:
            n += 1
        asked, rid = (n, str(n)) if draw(st.booleans()) else (str(n), n)
        s.request(receiver, method, params, rid=asked)
        s.use(receiver, rid)
    if draw(st.booleans()):
        message = _error(rid, int(ErrorCode.INTERNAL_ERROR), "failed")
    else:
        message = _response(rid, s.result(method))
    repaired = None
    if _can_request(s, receiver):
        fixed = s.fork()
        good = fixed.request(receiver, method, params)
        repaired = fixed.scenario(dict(message, id=good))
    return s.near("response.unknown-id", message, _NONE, repaired, f"a response to {way} id")


# -- capabilities


def _gated(spec: VersionSpec, sender: Role, kind: Kind) -> list[str]:
    return [m for m in _methods(spec, sender, kind) if spec.methods[m].gate]


@st.composite
def _undeclared_request_gate(draw: st.DrawFn, ctx: _Ctx, name: str) -> NearMiss:
    spec = ctx.spec
    method = draw(st.sampled_from(_gated(spec, ctx.sender, Kind.REQUEST)))
    gate = spec.methods[method].gate
    receiver = ctx.sender.peer
    full = _capabilities(spec.version, receiver)
    lacking = _without(full, gate, draw(st.booleans()))
    caps = {"client_caps" if receiver is Role.CLIENT else "server_caps": lacking}
    s = _Script(draw, ctx, **caps)
    s.opening()
    message = _request(s.new_id(s.sender), method, s.params(s.sender, method))
    repaired = s.recap(**{"client_caps" if receiver is Role.CLIENT else "server_caps": full})
    return s.near(
        name,
        message,
        _error_expect(name, message["id"]),
        repaired.scenario(message),
        f"{method} without the {receiver.value} capability {'.'.join(gate)}",
    )


_GENERATORS["capability.undeclared-server-capability"] = functools.partial(
    _undeclared_request_gate, name="capability.undeclared-server-capability"
)
_GENERATORS["capability.undeclared-client-capability"] = functools.partial(
    _undeclared_request_gate, name="capability.undeclared-client-capability"
)


@_generator("capability.undeclared-client-subcapability")
@st.composite
def _undeclared_subcapability(draw: st.DrawFn, ctx: _Ctx) -> NearMiss:
    spec = ctx.spec
    version = spec.version
    full = _capabilities(version, Role.CLIENT)
    ways = []
    if spec.elicitation_modes and _may_send(spec, Role.SERVER, "elicitation/create"):
        ways += ["url", "form"]
    if spec.sampling_tools and _may_send(spec, Role.SERVER, "sampling/createMessage"):
        ways += ["tools", "context"]
    way = draw(st.sampled_from(ways))
    lacking = copy.deepcopy(full)
    if way in ("url", "form"):
        method = "elicitation/create"
        definition = "ElicitRequestURLParams" if way == "url" else "ElicitRequestFormParams"
        params = copy.deepcopy(draw(from_schema(version, definition)))
        lacking["elicitation"] = {"form": {}} if way == "url" else {"url": {}}
    else:
        method = "sampling/createMessage"
        params = draw(schema_params(version, method))
        params = copy.deepcopy(params)
        if way == "tools":
            params.pop("includeContext", None)
            params.setdefault("tools", [])
            lacking["sampling"] = {k: v for k, v in full["sampling"].items() if k != "tools"}
        else:
            params.pop("tools", None)
            params.pop("toolChoice", None)
            params["includeContext"] = draw(st.sampled_from(["thisServer", "allServers"]))
            lacking["sampling"] = {k: v for k, v in full["sampling"].items() if k != "context"}
    if isinstance(params.get("_meta"), dict):
        params["_meta"].pop("progressToken", None)
    s = _Script(draw, ctx, client_caps=lacking)
    s.opening()
    message = _request(s.new_id(Role.SERVER), method, params)
    return s.near(
        "capability.undeclared-client-subcapability",
        message,
        _error_expect("capability.undeclared-client-subcapability", message["id"]),
        s.recap(client_caps=full).scenario(message),
        f"{method} using {way} without declaring it",
    )


@_generator("capability.undeclared-notification")
@st.composite
def _undeclared_notification(draw: st.DrawFn, ctx: _Ctx) -> NearMiss:
    spec = ctx.spec
    sender = ctx.sender
    needs_state = _STREAM_NOTIFICATIONS if spec.era is Era.STATELESS else {_UPDATED}
    methods = [m for m in _gated(spec, sender, Kind.NOTIFICATION) if m not in needs_state]
    method = draw(st.sampled_from(methods))
    gate = spec.methods[method].gate
    full = _capabilities(spec.version, sender)
    lacking = _without(full, gate, draw(st.booleans()))
    key = "client_caps" if sender is Role.CLIENT else "server_caps"
    s = _Script(draw, ctx, **{key: lacking})
    s.opening()
    if method == _MESSAGE and not s.legacy:
        s.in_flight(Role.CLIENT, meta={META_LOG_LEVEL: "debug"})
    message = _notification(method, s.params(sender, method))
    repaired = s.recap(**{key: full})
    return s.near(
        "capability.undeclared-notification",
        message,
        _NONE,
        repaired.scenario(message),
        f"{method} without the {sender.value} capability {'.'.join(gate)}",
    )


# -- methods and params


def _fallback_request(s: _Script, rid: Any) -> dict[str, Any] | None:
    """A valid request of the sender's with id ``rid``, or ``None`` (2026 server)."""
    if s.legacy:
        return _request(rid, "ping")
    if s.sender is Role.CLIENT:
        return _request(rid, _DISCOVER, {"_meta": s.meta()})
    return None


@_generator("method.unknown")
@st.composite
def _unknown_method(draw: st.DrawFn, ctx: _Ctx) -> NearMiss:
    s = _Script(draw, ctx)
    s.opening()
    spec = s.spec
    elsewhere = sorted(
        {
            (version, m)
            for version, other in VERSIONS.items()
            for m in _methods(other, s.sender, Kind.REQUEST)
            if m not in spec.methods
        }
    )
    notes = _methods(spec, Role.CLIENT, Kind.NOTIFICATION) + _methods(
        spec, Role.SERVER, Kind.NOTIFICATION
    )
    ways = ["an invented method", "a notification's name"]
    if elsewhere:
        ways.append("a method of another version")
    way = draw(st.sampled_from(ways))
    if way == "an invented method":
        method = draw(_INVENTED)
        params: Any = draw(
            st.sampled_from([None, {}, {"x-arg": 1}])
            if s.legacy or s.sender is Role.SERVER
            else st.just({})
        )
        if not s.legacy and s.sender is Role.CLIENT:
            params["_meta"] = s.meta()
    elif way == "a notification's name":
        method = draw(st.sampled_from(sorted(set(notes))))
        params = s.params(s.sender, method, as_request=True)
    else:
        version, method = draw(st.sampled_from(elsewhere))
        params = s.params(s.sender, method, version=version, as_request=True)
    rid = s.new_id(s.sender)
    message = _request(rid, method, params)
    fixed = _fallback_request(s, rid)
    return s.near(
        "method.unknown",
        message,
        _error_expect("method.unknown", rid),
        None if fixed is None else s.scenario(fixed),
        f"{way}: {method!r}",
    )


@_generator("method.unknown-notification")
@st.composite
def _unknown_notification(draw: st.DrawFn, ctx: _Ctx) -> NearMiss:
    s = _Script(draw, ctx)
    s.opening()
    spec = s.spec
    elsewhere = sorted(
        {
            (version, m)
            for version, other in VERSIONS.items()
            for m in _methods(other, s.sender, Kind.NOTIFICATION)
            if m not in spec.methods
        }
    )
    requests = sorted(
        {
            m
            for m, r in spec.methods.items()
            if r.kind is Kind.REQUEST and m not in LIFECYCLE_METHODS
        }
    )
    ways = ["an invented method", "a request's name"]
    if elsewhere:
        ways.append("a notification of another version")
    way = draw(st.sampled_from(ways))
    if way == "an invented method":
        method = draw(
            st.tuples(st.sampled_from(["", "notifications/"]), _INVENTED)
            .map("".join)
            .filter(lambda m: m not in _ALL_METHODS)
        )
        params: Any = draw(st.sampled_from([None, {}, {"x-arg": 1}]))
    elif way == "a request's name":
        method = draw(st.sampled_from(requests))
        params = s.params(s.sender, method, as_request=False)
    else:
        version, method = draw(st.sampled_from(elsewhere))
        params = s.params(s.sender, method, version=version, as_request=False)
    message = _notification(method, params)
    repaired = s.fork()
    fixed = _sender_notification(repaired)
    return s.near(
        "method.unknown-notification",
        message,
        _NONE,
        repaired.scenario(fixed),
        f"{way}: {method!r}",
    )


@_generator("method.wrong-direction")
@st.composite
def _wrong_direction(draw: st.DrawFn, ctx: _Ctx) -> NearMiss:
    s = _Script(draw, ctx)
    s.opening()
    spec = s.spec
    methods = sorted(
        m
        for m, r in spec.methods.items()
        if r.kind is Kind.REQUEST and r.direction is _SENDS[s.receiver] and m != "initialize"
    )
    method = draw(st.sampled_from(methods))
    rid = s.new_id(s.sender)
    message = _request(rid, method, s.params(s.receiver, method))
    fixed = _fallback_request(s, rid)
    return s.near(
        "method.wrong-direction",
        message,
        _error_expect("method.wrong-direction", rid),
        None if fixed is None else s.scenario(fixed),
        f"{method} sent by the {s.sender.value}",
    )


def _wrong_type(draw: st.DrawFn, kind: str) -> Any:
    options: dict[str, list[Any]] = {
        "string": [0, True, None, [], {}],
        "integer": ["0", None, [], {}],
        "number": ["0", None, [], {}],
        "object": ["x", 0, [], None],
        "array": ["x", 0, {}, None],
        "boolean": ["true", 0, None],
        "id": [None, 1.5, True, [], {}],
    }
    return draw(st.sampled_from(options[kind]))


def _params_methods(s: _Script) -> list[str]:
    methods = [
        m
        for m in _methods(s.spec, s.sender, Kind.REQUEST, caps=s.caps[s.receiver])
        if m in s.spec.required_params
    ]
    if s.legacy and s.sender is Role.CLIENT:
        methods.append("initialize")
    return methods


@st.composite
def _params_invalid_near(
    draw: st.DrawFn, ctx: _Ctx, methods: frozenset[str] | None = None
) -> NearMiss:
    s = _Script(draw, ctx)
    candidates = [m for m in _params_methods(s) if methods is None or m in methods]
    method = draw(st.sampled_from(candidates))
    if method == "initialize":
        params: Any = s.initialize_params()
    else:
        s.opening()
        s.filler()
        params = s.params(s.sender, method)
    assert isinstance(params, dict)
    key, kind, enum = draw(st.sampled_from(s.spec.required_params[method]))
    ways = ["missing"] if kind == "any" else ["missing", "of the wrong type"]
    if enum:
        ways.append("not one of its values")
    if s.legacy:
        ways.append("no params at all")
    way = draw(st.sampled_from(ways))
    bad: Any = copy.deepcopy(params)
    if way == "missing":
        del bad[key]
    elif way == "of the wrong type":
        bad[key] = _wrong_type(draw, kind)
    elif way == "not one of its values":
        bad[key] = draw(st.text(max_size=8).filter(lambda v: v not in (enum or ())))
    else:
        bad = None
    rid = s.new_id(s.sender)
    return s.near(
        "params.invalid",
        _request(rid, method, bad),
        _error_expect("params.invalid", rid),
        s.scenario(_request(rid, method, params)),
        f"{method}: {'params missing' if bad is None else repr(key) + ' ' + way}",
    )


_GENERATORS["params.invalid"] = _params_invalid_near


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


@_generator("progress.unknown-token")
@st.composite
def _progress_unknown_token(draw: st.DrawFn, ctx: _Ctx) -> NearMiss:
    s = _Script(draw, ctx)
    s.opening()
    ways = ["a token never sent", "the token of an answered request"]
    way = draw(st.sampled_from(ways))
    if way == "a token never sent":
        token = s.new_token()
    else:
        token = s.new_token()
        method = draw(st.sampled_from([m for m in s.requests_of(s.receiver) if m != _LISTEN]))
        rid = s.request(s.receiver, method, s.params(s.receiver, method, token=token))
        s.respond(s.sender, rid, s.result(method))
    params = {"progressToken": token, "progress": draw(_PROGRESS_VALUES)}
    repaired = s.fork()
    fixed_token = repaired.new_token()
    repaired.in_flight(s.receiver, token=fixed_token)
    return s.near(
        "progress.unknown-token",
        _notification(_PROGRESS, params),
        _NONE,
        repaired.scenario(_notification(_PROGRESS, dict(params, progressToken=fixed_token))),
        f"progress for {way}",
    )


@_generator("cancel.unknown-request")
@st.composite
def _cancel_unknown(draw: st.DrawFn, ctx: _Ctx) -> NearMiss:
    s = _Script(draw, ctx)
    s.opening()
    ways = ["a request never sent", "a malformed cancel"]
    if _can_request(s, s.sender):
        ways.append("an answered request")
    if _can_request(s, s.receiver):
        ways.append("one of the receiver's own requests")
    way = draw(st.sampled_from(ways))
    params: Any
    if way == "a request never sent":
        params = {"requestId": s.new_id(s.sender)}
    elif way == "an answered request":
        params = {"requestId": s.answered(s.sender)}
    elif way == "one of the receiver's own requests":
        params = {"requestId": s.in_flight(s.receiver)}
    else:
        params = draw(
            st.sampled_from(
                [
                    None,
                    {},
                    {"requestId": None},
                    {"requestId": 1.5},
                    {"requestId": True},
                    {"requestId": []},
                    {"reason": "no id"},
                ]
            )
        )
    repaired = s.fork()
    if _can_request(s, s.sender):
        target = repaired.in_flight(s.sender)
    else:  # a 2026 server cancels only a client's listen stream
        target = repaired.listen(_listen_flags(repaired), ack=draw(st.booleans()))
    return s.near(
        "cancel.unknown-request",
        _notification(_CANCELLED, params),
        _NONE,
        repaired.scenario(_notification(_CANCELLED, {"requestId": target})),
        f"a cancel naming {way}",
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


@st.composite
def _meta_near(draw: st.DrawFn, ctx: _Ctx, name: str) -> NearMiss:
    s = _Script(draw, ctx)
    s.opening()
    s.filler()
    method = draw(st.sampled_from(s.requests_of(Role.CLIENT)))
    params = s.params(Role.CLIENT, method)
    assert params is not None
    rid = s.new_id(Role.CLIENT)
    bad: Any = copy.deepcopy(params)
    meta = bad["_meta"]
    expect = _error_expect(name, rid)
    if name == "meta.missing":
        way = draw(
            st.sampled_from(
                [
                    "no params",
                    "no _meta",
                    "a _meta that is not an object",
                    "no protocolVersion",
                    "a protocolVersion that is not a string",
                ]
            )
        )
        if way == "no params":
            bad = None
        elif way == "no _meta":
            del bad["_meta"]
        elif way == "a _meta that is not an object":
            bad["_meta"] = draw(st.sampled_from(["x", [], 1, None, True]))
        elif way == "no protocolVersion":
            del meta[META_VERSION]
        else:
            meta[META_VERSION] = draw(st.sampled_from([20260728, None, [], {}, True]))
    elif name == "meta.unsupported-version":
        requested = draw(st.sampled_from(_LEGACY_VERSIONS) | _UNKNOWN_VERSIONS)
        meta[META_VERSION] = requested
        way = f"version {requested!r}"
        expect = _error_expect(name, rid, data={"requested": requested}, data_keys=("supported",))
    else:
        if draw(st.booleans()):
            del meta[META_CAPABILITIES]
            way = "no clientCapabilities"
        else:
            meta[META_CAPABILITIES] = draw(st.sampled_from([[], "x", 1, None, True]))
            way = "clientCapabilities that are not an object"
    return s.near(
        name,
        _request(rid, method, bad),
        expect,
        s.scenario(_request(rid, method, params)),
        f"{method} with {way}",
    )


for _name in ("meta.missing", "meta.unsupported-version", "meta.capabilities-missing"):
    _GENERATORS[_name] = functools.partial(_meta_near, name=_name)


@_generator("stateless.server-request")
@st.composite
def _stateless_server_request(draw: st.DrawFn, ctx: _Ctx) -> NearMiss:
    s = _Script(draw, ctx)
    s.opening()
    pairs = sorted(
        (version, m)
        for version, other in VERSIONS.items()
        if other.era is Era.INITIALIZE
        for m in _methods(other, Role.SERVER, Kind.REQUEST)
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


@_generator("resources.updated-not-subscribed")
@st.composite
def _updated_not_subscribed(draw: st.DrawFn, ctx: _Ctx) -> NearMiss:
    s = _Script(draw, ctx)
    s.opening()
    name = st.text("abcxyz", min_size=1, max_size=6)
    subscribed = "file:///" + draw(name)
    other = draw(
        st.sampled_from(["file:///", "file:///other/", "mcp://x/"])
        .flatmap(lambda prefix: name.map(lambda n: prefix + n))
        .filter(lambda u: u != subscribed and not u.startswith(subscribed + "/"))
    )
    rid = s.request(Role.CLIENT, "resources/subscribe", {"uri": subscribed})
    s.respond(Role.SERVER, rid, {})
    good = draw(st.sampled_from([subscribed, subscribed + "/part"]))
    return s.near(
        "resources.updated-not-subscribed",
        _notification(_UPDATED, {"uri": other}),
        _NONE,
        s.scenario(_notification(_UPDATED, {"uri": good})),
        f"an update of {other!r} after subscribing to {subscribed!r}",
    )


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
