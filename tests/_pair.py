"""A small client/server pair and state probes for the property tests.

Used by ``test_connection_fuzz.py`` and ``test_connection_stateful.py`` only (the
general-purpose ``ConnectionPair`` lives in ``helpers.py``). Everything here goes through
the public API of :class:`Connection`, except :func:`deep_state`, which reads the private
attributes to check that a refused ``send()`` changed nothing at all.
"""

from __future__ import annotations

import enum
import math
from collections import deque
from collections.abc import Mapping
from typing import Any, Final

from helpers import attributes

from mcp_sansio import (
    ALL_VERSIONS,
    NEED_DATA,
    Connection,
    ConnectionClosed,
    Event,
    Notification,
    Request,
    Response,
    Role,
)

__all__ = [
    "ALL",
    "CLIENT_INFO",
    "LEGACY",
    "META_CAPABILITIES",
    "META_CLIENT_INFO",
    "META_LOG_LEVEL",
    "META_SUBSCRIPTION",
    "META_VERSION",
    "MODERN",
    "SERVER_INFO",
    "deep_state",
    "drain",
    "initialize_params",
    "initialize_result",
    "json_equal",
    "legacy_pair",
    "observable",
    "stateless_pair",
    "transfer",
]

ALL: Final = ALL_VERSIONS
LEGACY: Final = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
MODERN: Final = "2026-07-28"

META_VERSION: Final = "io.modelcontextprotocol/protocolVersion"
META_CAPABILITIES: Final = "io.modelcontextprotocol/clientCapabilities"
META_CLIENT_INFO: Final = "io.modelcontextprotocol/clientInfo"
META_LOG_LEVEL: Final = "io.modelcontextprotocol/logLevel"
META_SUBSCRIPTION: Final = "io.modelcontextprotocol/subscriptionId"

CLIENT_INFO: Final[Mapping[str, Any]] = {"name": "pair-client", "version": "1"}
SERVER_INFO: Final[Mapping[str, Any]] = {"name": "pair-server", "version": "1"}


def drain(conn: Connection, limit: int = 1_000_000) -> list[Event]:
    """Every event ``conn`` has ready, up to ``NEED_DATA`` or a ``ConnectionClosed``
    (included). :class:`RemoteProtocolError` propagates."""
    events: list[Event] = []
    for _ in range(limit):
        event = conn.next_event()
        if event is NEED_DATA:
            return events
        assert isinstance(event, Event)
        events.append(event)
        if isinstance(event, ConnectionClosed):
            return events
    raise AssertionError(f"next_event() produced more than {limit} events without NEED_DATA")


def transfer(sender: Connection, receiver: Connection, event: Event) -> list[Event]:
    """``sender.send(event)``, the bytes fed to ``receiver``, and the events it gives."""
    data = sender.send(event)
    if data:
        receiver.receive_data(data)
    return drain(receiver)


def initialize_params(version: str, capabilities: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "protocolVersion": version,
        "capabilities": dict(capabilities),
        "clientInfo": dict(CLIENT_INFO),
    }


def initialize_result(version: str, capabilities: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "protocolVersion": version,
        "capabilities": dict(capabilities),
        "serverInfo": dict(SERVER_INFO),
    }


def legacy_pair(
    version: str,
    client_caps: Mapping[str, Any],
    server_caps: Mapping[str, Any],
    *,
    client_versions: tuple[str, ...] | None = None,
    server_versions: tuple[str, ...] | None = None,
    steps: int = 3,
) -> tuple[Connection, Connection]:
    """A client and a server that went through ``steps`` of the three handshake messages
    (``initialize``, its result, ``notifications/initialized``) of ``version`` (id 0)."""
    client = Connection(
        Role.CLIENT,
        versions=client_versions or (version,),
        capabilities=client_caps,
        implementation=CLIENT_INFO,
    )
    server = Connection(
        Role.SERVER,
        versions=server_versions or (version,),
        capabilities=server_caps,
        implementation=SERVER_INFO,
    )
    messages: list[tuple[Connection, Connection, Event]] = [
        (
            client,
            server,
            Request(id=0, method="initialize", params=initialize_params(version, client_caps)),
        ),
        (server, client, Response(id=0, result=initialize_result(version, server_caps))),
        (client, server, Notification(method="notifications/initialized")),
    ]
    for sender, receiver, event in messages[:steps]:
        got = transfer(sender, receiver, event)
        assert got == [event], got
    return client, server


def stateless_pair(
    client_caps: Mapping[str, Any],
    server_caps: Mapping[str, Any],
    *,
    client_versions: tuple[str, ...] = (MODERN,),
    server_versions: tuple[str, ...] = (MODERN,),
) -> tuple[Connection, Connection]:
    """A client and a server of the stateless era; a client that speaks both eras has
    probed with ``server/discover`` (id 0) and learned the server's capabilities."""
    client = Connection(
        Role.CLIENT,
        versions=client_versions,
        capabilities=client_caps,
        implementation=CLIENT_INFO,
    )
    server = Connection(
        Role.SERVER,
        versions=server_versions,
        capabilities=server_caps,
        implementation=SERVER_INFO,
    )
    if client.era is None:
        [req] = transfer(client, server, Request(id=0, method="server/discover"))
        assert isinstance(req, Request)
        result = {
            "resultType": "complete",
            "supportedVersions": [MODERN],
            "capabilities": dict(server_caps),
            "ttlMs": 0,
            "cacheScope": "public",
        }
        [resp] = transfer(server, client, Response(id=0, result=result))
        assert isinstance(resp, Response), resp
    return client, server


def observable(conn: Connection) -> tuple[Any, ...]:
    """The public state that a refused ``send()`` must leave unchanged."""
    return (
        conn.state,
        conn.era,
        conn.protocol_version,
        conn.outstanding,
        conn.owed,
        conn.client_capabilities,
        conn.server_capabilities,
        conn.peer_closed,
    )


def _freeze(value: Any, depth: int = 0) -> Any:
    """A comparable deep copy of ``value`` (containers, and objects of the package)."""
    if depth > 50:
        return ("<deep>", id(value))
    if value is None or isinstance(value, (bool, int, float, str, bytes, enum.Enum)):
        if isinstance(value, float) and math.isnan(value):
            return ("<nan>",)
        return value
    if isinstance(value, bytearray):
        return ("bytearray", bytes(value))
    if isinstance(value, Mapping):
        return (
            "map",
            tuple((_freeze(k, depth + 1), _freeze(v, depth + 1)) for k, v in value.items()),
        )
    if isinstance(value, (list, tuple, deque)):
        return (type(value).__name__, tuple(_freeze(v, depth + 1) for v in value))
    if isinstance(value, (set, frozenset)):
        return (type(value).__name__, frozenset(_freeze(v, depth + 1) for v in value))
    module = type(value).__module__
    if module.startswith("mcp_sansio"):
        fields = tuple((k, _freeze(v, depth + 1)) for k, v in attributes(value).items())
        return (type(value).__name__, fields)
    if callable(value):
        return ("callable", id(value))
    return ("obj", type(value).__name__, repr(value))


def deep_state(conn: Connection) -> Any:
    """Everything the connection holds, frozen for comparison (private attributes too)."""
    return _freeze(conn)


def json_equal(a: Any, b: Any) -> bool:
    """Equality of JSON values as the wire carries them: types must match (``True`` is
    not ``1``, ``1`` is not ``1.0``), tuples and lists are both arrays, NaN equals
    nothing."""
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=False))
    if _json_type(a) is not _json_type(b):
        return False
    return bool(a == b)


def _json_type(value: Any) -> type:
    """The JSON type of a value: an ``IntEnum`` (an error code) is an integer, ``True`` is
    not."""
    for kind in (bool, int, float, str):
        if isinstance(value, kind):
            return kind
    return type(value)
