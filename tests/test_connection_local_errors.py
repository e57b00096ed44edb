"""A refused ``send()`` changes nothing: for many states of both roles and many illegal
events, ``LocalProtocolError`` leaves the whole connection (every attribute, not only
``state``, ``outstanding`` and ``owed``) as it was, and a legal send still works after it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from helpers import (
    BATCH_VERSION,
    LEGACY,
    META_SUBSCRIPTION,
    MODERN,
    ConnectionPair,
    attributes,
    initialize_params,
    initialize_result,
    snapshot,
)

from mcp_sansio import (
    Batch,
    Connection,
    ErrorResponse,
    LocalProtocolError,
    Message,
    Notification,
    Request,
    Response,
    Role,
)
from mcp_sansio._versions import VERSIONS

CAPS: dict[str, Any] = {
    "tools": {"listChanged": True},
    "resources": {"subscribe": True},
    "logging": {},
}
CLIENT_CAPS: dict[str, Any] = {"roots": {}, "sampling": {}}


def deep_state(value: Any, depth: int = 0) -> Any:
    """Every attribute of ``value``, recursively, as comparable plain data."""
    assert depth < 30
    if isinstance(value, (str, bytes, int, float, bool, type(None))):
        return value
    if type(value).__name__ == "Config":  # immutable
        return id(value)
    if type(value).__name__ == "VersionSpec":  # immutable; compared by value
        return ("VersionSpec", value.version, value == VERSIONS[value.version])
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, [deep_state(v, depth + 1) for v in value])
    if isinstance(value, (set, frozenset)):
        return (type(value).__name__, sorted(repr(v) for v in value))
    if isinstance(value, dict) or hasattr(value, "items"):
        return ("map", [(repr(k), deep_state(v, depth + 1)) for k, v in value.items()])
    if callable(value) and not hasattr(value, "__dict__") and not hasattr(value, "__slots__"):
        return repr(value)
    fields = attributes(value)
    if fields and type(value).__module__.startswith("mcp_sansio"):
        return (type(value).__name__, deep_state(fields, depth + 1))
    return repr(value)


# ---------------------------------------------------------------------------- scenarios


def _idle(version: str) -> ConnectionPair:
    return ConnectionPair(versions=[version])


def _initializing(version: str) -> ConnectionPair:
    pair = ConnectionPair(versions=[version])
    pair.send(Role.CLIENT, Request(id=0, method="initialize", params=initialize_params(version)))
    return pair


def _initialized(version: str) -> ConnectionPair:
    pair = _initializing(version)
    pair.send(Role.SERVER, Response(id=0, result=initialize_result(version, CAPS)))
    return pair


def _busy(version: str) -> ConnectionPair:
    """Operating, with requests in flight both ways, tokens, a subscription, a log level."""
    pair = ConnectionPair(versions=[version])
    pair.handshake(version, client_capabilities=CLIENT_CAPS, server_capabilities=CAPS)
    sub = pair.request(Role.CLIENT, "resources/subscribe", {"uri": "file:///a"}, id="sub")
    pair.respond(Role.SERVER, sub.id)
    lvl = pair.request(Role.CLIENT, "logging/setLevel", {"level": "warning"}, id="lvl")
    pair.respond(Role.SERVER, lvl.id)
    pair.request(Role.CLIENT, "tools/call", {"name": "t", "_meta": {"progressToken": "p"}}, id=1)
    pair.send(
        Role.SERVER,
        Notification(method="notifications/progress", params={"progressToken": "p", "progress": 5}),
    )
    pair.request(Role.SERVER, "roots/list", {"_meta": {"progressToken": "q"}}, id=1)
    pair.request(Role.CLIENT, "tools/list", id="c")
    pair.send(
        Role.CLIENT, Notification(method="notifications/cancelled", params={"requestId": "c"})
    )
    return pair


def _stateless(version: str) -> ConnectionPair:
    pair = ConnectionPair(versions=[MODERN], server={"capabilities": CAPS})
    pair.request(Role.CLIENT, "tools/call", {"name": "t", "_meta": {"progressToken": "p"}}, id=1)
    listen = pair.request(
        Role.CLIENT, "subscriptions/listen", {"notifications": {"toolsListChanged": True}}, id="L"
    )
    pair.send(
        Role.SERVER,
        Notification(
            method="notifications/subscriptions/acknowledged",
            params={
                "notifications": {"toolsListChanged": True},
                "_meta": {META_SUBSCRIPTION: listen.id},
            },
        ),
    )
    return pair


def _probing(version: str) -> ConnectionPair:
    pair = ConnectionPair()
    pair.send(Role.CLIENT, Request(id="probe", method="server/discover"))
    return pair


def _closed(version: str) -> ConnectionPair:
    pair = _busy(version)
    for conn in (pair.client, pair.server):
        conn.receive_data(b"")
        conn.next_event()
    return pair


SCENARIOS: list[tuple[str, Callable[[str], ConnectionPair], list[str]]] = [
    ("idle", _idle, list(LEGACY)),
    ("initializing", _initializing, list(LEGACY)),
    ("initialized", _initialized, list(LEGACY)),
    ("busy", _busy, list(LEGACY)),
    ("closed", _closed, list(LEGACY)),
    ("stateless", _stateless, [MODERN]),
    ("probing", _probing, [MODERN]),
]

# ---------------------------------------------------------------------------- candidates


def _note(method: str, **params: Any) -> Notification:
    return Notification(method=method, params=params or None)


CANDIDATES: list[Any] = [
    Request(id=None, method="ping"),  # type: ignore[arg-type]
    Request(id=True, method="ping"),
    Request(id=1.5, method="ping"),  # type: ignore[arg-type]
    Request(id=0, method="ping"),
    Request(id=1, method="ping"),
    Request(id="sub", method="ping"),
    Request(id=90, method="initialize", params=initialize_params(LEGACY[0])),
    Request(id=91, method="x/unknown"),
    Request(id=92, method="tools/list", params={"_meta": {"progressToken": "p"}}),
    Request(id=93, method="tools/list", params={"_meta": {"progressToken": 1.5}}),
    Request(id=94, method="prompts/list"),
    Request(id=95, method="sampling/createMessage", params={"messages": [], "maxTokens": 1}),
    Request(id=96, method="elicitation/create", params={"message": "m"}),
    Request(id=97, method="logging/setLevel", params={"level": "loud"}),
    Request(id=98, method="resources/subscribe", params={}),
    Request(id=99, method="subscriptions/listen", params={}),
    Request(id=100, method="tools/call", params={"name": object()}),
    Request(id=101, method="tools/list", params=[1]),
    Request(id=102, method="server/discover"),
    _note("notifications/initialized"),
    _note("notifications/cancelled", requestId=0),
    _note("notifications/cancelled", requestId="never"),
    _note("notifications/cancelled", requestId=1),
    _note("notifications/cancelled"),
    _note("notifications/progress", progressToken="p", progress=5),
    _note("notifications/progress", progressToken="p", progress=4),
    _note("notifications/progress", progressToken="q", progress=1),
    _note("notifications/progress", progressToken="zz", progress=1),
    _note("notifications/progress", progressToken="p", progress=6, message=1),
    _note("notifications/message", level="info", data=1),
    _note("notifications/message", level="nope"),
    _note("notifications/resources/updated", uri="file:///b"),
    _note("notifications/tools/list_changed"),
    _note("notifications/tools/list_changed", _meta={META_SUBSCRIPTION: "other"}),
    _note("notifications/prompts/list_changed"),
    _note("notifications/roots/list_changed"),
    _note(
        "notifications/subscriptions/acknowledged", notifications={}, _meta={META_SUBSCRIPTION: "L"}
    ),
    _note("x/unknown"),
    Response(id=404, result={}),
    Response(id="c", result={}),
    Response(id=1, result={"resultType": "input_required"}),
    Response(id=1, result={"resultType": "task"}),
    Response(id=1, result={"x": object()}),
    Response(id="sub", result={}),
    Response(id=0, result=initialize_result("1999-01-01")),
    Response(id=0, result={"protocolVersion": LEGACY[0]}),
    Response(id=True, result={}),
    ErrorResponse(id=404, code=-1, message="x"),
    ErrorResponse(id=1, code=True, message="x"),
    ErrorResponse(id=1, code=1, message=None),  # type: ignore[arg-type]
    Batch(events=(Request(id=200, method="ping"),)),
    Batch(events=()),
    Batch(events=(Request(id=201, method="ping"), Request(id=201, method="ping"))),
    Batch(events=(Request(id=202, method="ping"), Request(id=203, method="x/unknown"))),
    ErrorResponse(id="c", code=-1, message="x"),
]


@pytest.mark.parametrize("role", list(Role))
@pytest.mark.parametrize(
    ("name", "build", "version"),
    [
        pytest.param(name, build, version, id=f"{name}-{version}")
        for name, build, versions in SCENARIOS
        for version in versions
    ],
)
def test_a_refused_send_changes_nothing(
    role: Role, name: str, build: Callable[[str], ConnectionPair], version: str
) -> None:
    refused = 0
    pair: ConnectionPair | None = None
    for candidate in CANDIDATES:
        if pair is None:  # a fresh scenario (only after a send that went through)
            pair = build(version)
        conn = pair.conn(role)
        before = deep_state(conn)
        public = snapshot(conn)
        try:
            conn.send(candidate)
        except LocalProtocolError:
            refused += 1
            assert snapshot(conn) == public, candidate
            assert deep_state(conn) == before, candidate
        else:
            pair = None
    assert refused >= len(CANDIDATES) // 2, refused


@pytest.mark.parametrize("version", LEGACY)
def test_a_legal_send_after_a_refused_one(version: str) -> None:
    pair = _busy(version)
    with pytest.raises(LocalProtocolError):
        pair.client.send(Request(id=1, method="tools/list"))
    with pytest.raises(LocalProtocolError):
        pair.server.send(Response(id=404, result={}))
    pair.respond(Role.SERVER, 1, {"content": []})
    pair.respond(Role.CLIENT, 1, {"roots": []})
    pair.roundtrip(Role.CLIENT, "tools/list", result={"tools": []})


# What send() never changes: the configuration, the buffers, the close and error flags,
# the id counter. Everything else is the one Session object a refused batch puts back.
_OUTSIDE_THE_SESSION = frozenset(
    {
        "config",
        "role",
        "_peer",
        "_framer",
        "_max_in_flight",
        "_queue",
        "_eof",
        "_closed_reported",
        "_error",
        "_next_id",
    }
)


@pytest.mark.parametrize("role", list(Role))
def test_what_a_send_can_change_is_one_object(role: Role) -> None:
    """A refused batch puts back one copy (``Session.copy``): every attribute a send could
    change lives in that object; the others are configuration and buffers."""
    names = set(attributes(Connection(role)))
    assert names == _OUTSIDE_THE_SESSION | {"_s"}


TOKEN_Z: dict[str, Any] = {"progressToken": "z"}


def _progress(token: str, value: int) -> Notification:
    return Notification(
        method="notifications/progress", params={"progressToken": token, "progress": value}
    )


def test_a_batch_refused_at_its_last_member_puts_everything_back() -> None:
    """Every kind of change a member can make (a request with a token, progress, a cancel,
    an answer that subscribes or sets the level, an error) is undone with the batch."""
    version = "2025-03-26"
    pair = _busy(version)
    pair.request(Role.SERVER, "roots/list", id="r2")
    pair.request(Role.CLIENT, "resources/subscribe", {"uri": "file:///b"}, id="sub2")
    pair.request(Role.CLIENT, "logging/setLevel", {"level": "error"}, id="lvl2")
    cases: tuple[tuple[Connection, list[Message]], ...] = (
        (
            pair.client,
            [
                Request(
                    id=10,
                    method="tools/call",
                    params={"name": "t", "_meta": {"progressToken": "z"}},
                ),
                Notification(
                    method="notifications/progress", params={"progressToken": "q", "progress": 1}
                ),
                Notification(method="notifications/cancelled", params={"requestId": 1}),
                Response(id="r2", result={"roots": []}),
                Request(id=10, method="ping"),  # refused: id 10 is in flight
            ],
        ),
        (
            pair.server,
            [
                Response(id="sub2", result={}),
                Response(id="lvl2", result={}),
                Notification(
                    method="notifications/progress", params={"progressToken": "p", "progress": 6}
                ),
                Request(id=11, method="ping", params={"_meta": {"progressToken": "y"}}),
                Response(id="nope", result={}),  # refused: answers nothing
            ],
        ),
    )
    for conn, members in cases:
        before, public = deep_state(conn), snapshot(conn)
        with pytest.raises(LocalProtocolError):
            conn.send(Batch(events=tuple(members)))
        assert snapshot(conn) == public
        assert deep_state(conn) == before
        # and each member but the last goes through alone
        for member in members[:-1]:
            conn.send(member)


def test_deep_state_sees_a_change() -> None:
    """The comparison is not blind: a legal send changes the deep state."""
    conn = Connection(Role.CLIENT, versions=[BATCH_VERSION])
    before = deep_state(conn)
    conn.send(Request(id=0, method="initialize", params=initialize_params(BATCH_VERSION)))
    assert deep_state(conn) != before


@pytest.mark.parametrize("value", [b"2026-07-28", bytearray(b"2026-07-28"), 20260728])
def test_a_meta_version_that_is_not_a_string_is_refused(value: Any) -> None:
    """Found by the fuzz test under ``python -bb``: comparing a bytes version with the
    session's string raised ``BytesWarning`` out of ``send()``."""
    conn = Connection(Role.CLIENT, versions=["2026-07-28"])
    meta = {"io.modelcontextprotocol/protocolVersion": value}
    with pytest.raises(LocalProtocolError, match="differs from the session's"):
        conn.send(Request(id=1, method="tools/list", params={"_meta": meta}))
