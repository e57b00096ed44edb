"""The values of the near misses: one :class:`Line` of an exchange, a :class:`Scenario`
(an exchange, then one message, for a :class:`~mcp_sansio.Connection` in the receiving
role), what the receiver must do with the message (:class:`Expect`) and a
:class:`NearMiss` (a scenario whose message breaks one rule, and its repaired twin); the
capabilities of the schema (:func:`full_capabilities`) and the JSON-RPC message makers.
"""

from __future__ import annotations

import copy
import datetime
import functools
from collections.abc import Mapping, Sequence
from typing import Any, Final

import attrs
import orjson
from hypothesis import strategies as st

from mcp_sansio._connection import (
    Connection,
)
from mcp_sansio._events import Batch, Event, InvalidMessage, Message, RequestId
from mcp_sansio._jsonrpc import decode
from mcp_sansio._sentinels import NEED_DATA
from mcp_sansio._state import Role
from mcp_sansio._versions import VERSIONS
from mcp_sansio.testing._faults._ground import LISTEN_FLAGS
from mcp_sansio.testing._rules import Reply
from mcp_sansio.testing._schema_strategies import (
    _definitions,
)

#: The smallest ``max_message_size`` :func:`near_misses` accepts: the setup lines and the
#: repaired message of ``envelope.oversized-message`` must fit under it.
MIN_MESSAGE_SIZE: Final = 1024

CLIENT_INFO: Final = {"name": "near-miss-client", "version": "1.0"}
SERVER_INFO: Final = {"name": "near-miss-server", "version": "1.0"}
SERVER_INFO_KEY: Final = "io.modelcontextprotocol/serverInfo"
ACK: Final = "notifications/subscriptions/acknowledged"
LISTEN: Final = "subscriptions/listen"
DISCOVER: Final = "server/discover"
PROGRESS: Final = "notifications/progress"
CANCELLED: Final = "notifications/cancelled"
UPDATED: Final = "notifications/resources/updated"
MESSAGE: Final = "notifications/message"
#: 2026-07-28 notifications that only travel on a listen stream.
STREAM_NOTIFICATIONS: Final = frozenset(LISTEN_FLAGS.values()) | {UPDATED}
#: Every method name of every version.
_ALL_METHODS: Final = frozenset(m for spec in VERSIONS.values() for m in spec.methods)
LEGACY_VERSIONS: Final = tuple(v for v, s in sorted(VERSIONS.items()) if s.policy.handshake)

IDS: Final[st.SearchStrategy[RequestId]] = st.one_of(
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
def schema_capabilities(version: str, holder: Role) -> dict[str, Any]:
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
    return copy.deepcopy(schema_capabilities(version, holder))


def without(caps: Mapping[str, Any], path: tuple[str, ...], false: bool) -> dict[str, Any]:
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


def line_of(obj: Any) -> bytes:
    return orjson.dumps(obj) + b"\n"


def request_msg(rid: Any, method: Any, params: Any = None) -> dict[str, Any]:
    obj: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
    if params is not None:
        obj["params"] = params
    return obj


def notification_msg(method: Any, params: Any = None) -> dict[str, Any]:
    obj: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        obj["params"] = params
    return obj


def response_msg(rid: Any, result: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "result": result}


def error_msg(rid: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": message}}


def key_of(value: Any) -> tuple[type, Any]:
    return (type(value), value)


def fresh_in(value: RequestId, used: set[tuple[type, Any]]) -> RequestId:
    """``value``, or the nearest id of its type after it that is not in ``used``
    (deterministic, so that shrinking never loops)."""
    while key_of(value) in used:
        value = value + 1 if isinstance(value, int) else value + "~"
    return value


UNKNOWN_VERSIONS: Final[st.SearchStrategy[str]] = st.one_of(
    st.dates(datetime.date(2000, 1, 1), datetime.date(2099, 12, 31)).map(datetime.date.isoformat),
    st.sampled_from(["1.0", "2024-11-05-rc", "latest", "DRAFT-2099"]),
).filter(lambda v: v not in VERSIONS)

INVENTED: Final[st.SearchStrategy[str]] = st.from_regex(
    r"\A[a-z][a-zA-Z_]{0,9}(/[a-zA-Z_]{1,9}){0,2}\Z"
).filter(lambda m: m not in _ALL_METHODS)

PROGRESS_VALUES: Final[st.SearchStrategy[int | float]] = st.one_of(
    st.integers(0, 10**6), st.floats(0, 10**6, allow_nan=False, allow_infinity=False)
)
