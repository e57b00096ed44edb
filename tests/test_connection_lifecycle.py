"""The initialize era's lifecycle (MCP 2024-11-05 to 2025-11-25, Base Protocol > Lifecycle),
both roles, every version of the era: initialize first, only ping before the result, the
client's notifications/initialized, no second initialize, version negotiation."""

from __future__ import annotations

from typing import Any

import pytest
from helpers import (
    CLIENT_INFO,
    LEGACY,
    SERVER_INFO,
    ConnectionPair,
    expect_invalid,
    feed,
    initialize_params,
    initialize_result,
    snapshot,
)

from mcp_sansio import (
    NEED_DATA,
    Connection,
    Era,
    ErrorCode,
    ErrorResponse,
    LocalProtocolError,
    Notification,
    RemoteProtocolError,
    Request,
    Response,
    Role,
    State,
)

INVALID = ErrorCode.INVALID_REQUEST
PARAMS = ErrorCode.INVALID_PARAMS
NOT_FOUND = ErrorCode.METHOD_NOT_FOUND

pytestmark = pytest.mark.parametrize("version", LEGACY)


def _pair(version: str, **server: Any) -> ConnectionPair:
    """A client and a server that both speak only ``version``'s era (all four versions)."""
    return ConnectionPair(versions=LEGACY, server=server)


def _initializing(version: str) -> ConnectionPair:
    pair = _pair(version, capabilities={"tools": {}})
    pair.send(Role.CLIENT, Request(id=0, method="initialize", params=initialize_params(version)))
    return pair


def _initialized(version: str, server_caps: Any = None) -> ConnectionPair:
    """The result is out; the client has not sent notifications/initialized yet."""
    pair = _pair(version)
    pair.handshake(version, server_capabilities=server_caps or {"tools": {}}, initialized=False)
    return pair


def _operating(version: str) -> ConnectionPair:
    pair = _pair(version)
    pair.handshake(version, server_capabilities={"tools": {}})
    return pair


def _refused(conn: Connection, event: Any, code: int | None = None) -> LocalProtocolError:
    before = snapshot(conn)
    with pytest.raises(LocalProtocolError) as info:
        conn.send(event)
    assert snapshot(conn) == before
    if code is not None:
        assert info.value.code == code
    return info.value


# ---------------------------------------------------------------------------- IDLE


def test_the_handshake(version: str) -> None:
    pair = _pair(version)
    assert pair.states() == (State.IDLE, State.IDLE)
    assert pair.client.era is pair.server.era is Era.INITIALIZE
    pair.handshake(version, client_capabilities={"roots": {}}, server_capabilities={"tools": {}})
    assert pair.states() == (State.OPERATING, State.OPERATING)
    for conn in (pair.client, pair.server):
        assert conn.protocol_version == version
        assert conn.client_capabilities == {"roots": {}}
        assert conn.server_capabilities == {"tools": {}}
        assert conn.outstanding == conn.owed == ()


def test_client_must_initialize_first(version: str) -> None:
    pair = _pair(version)
    err = _refused(pair.client, Request(id=1, method="tools/list"), INVALID)
    assert "IDLE" in err.message
    _refused(pair.client, Notification(method="notifications/initialized"), INVALID)
    assert pair.client.state is State.IDLE


def test_server_rejects_requests_before_initialize(version: str) -> None:
    pair = _pair(version)
    event = feed(pair.server, {"jsonrpc": "2.0", "id": 7, "method": "tools/list"})
    invalid = expect_invalid(event, INVALID, reply_id=7)
    assert pair.server.state is State.IDLE
    assert invalid.reply is not None
    assert pair.server.send(invalid.reply).startswith(b'{"jsonrpc":"2.0","id":7,"error"')


def test_server_cannot_initialize(version: str) -> None:
    pair = _pair(version)
    _refused(pair.server, Request(id=0, method="initialize", params=initialize_params(version)))


def test_client_rejects_initialize_from_the_server(version: str) -> None:
    pair = _pair(version)
    event = feed(
        pair.client,
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": initialize_params(version)},
    )
    expect_invalid(event, INVALID, reply_id=0)
    assert pair.client.state is State.IDLE


def test_unknown_method_before_initialize_is_method_not_found(version: str) -> None:
    pair = _pair(version)
    expect_invalid(feed(pair.server, {"jsonrpc": "2.0", "id": 1, "method": "x/y"}), NOT_FOUND)
    _refused(pair.client, Request(id=1, method="x/y"), NOT_FOUND)


def test_ping_before_initialize_both_ways(version: str) -> None:
    pair = _pair(version)
    pair.roundtrip(Role.CLIENT, "ping")
    pair.roundtrip(Role.SERVER, "ping")
    assert pair.states() == (State.IDLE, State.IDLE)
    pair.handshake(version, request_id="init")


@pytest.mark.parametrize(
    "params",
    [
        None,
        {},
        {"capabilities": {}, "clientInfo": CLIENT_INFO},
        {"protocolVersion": 20250618, "capabilities": {}, "clientInfo": CLIENT_INFO},
        {"protocolVersion": "V", "clientInfo": CLIENT_INFO},
        {"protocolVersion": "V", "capabilities": [], "clientInfo": CLIENT_INFO},
        {"protocolVersion": "V", "capabilities": {}},
        {"protocolVersion": "V", "capabilities": {}, "clientInfo": "me"},
    ],
)
def test_initialize_params_are_checked_both_ways(version: str, params: Any) -> None:
    if isinstance(params, dict) and params.get("protocolVersion") == "V":
        params = {**params, "protocolVersion": version}
    pair = _pair(version)
    _refused(pair.client, Request(id=0, method="initialize", params=params), PARAMS)
    raw: dict[str, Any] = {"jsonrpc": "2.0", "id": 0, "method": "initialize"}
    if params is not None:
        raw["params"] = params
    expect_invalid(feed(pair.server, raw), PARAMS, reply_id=0)
    assert pair.states() == (State.IDLE, State.IDLE)


# ---------------------------------------------------------------------------- INITIALIZING


def test_only_ping_while_initializing_client_side(version: str) -> None:
    pair = _initializing(version)
    _refused(pair.client, Request(id=1, method="tools/list"), INVALID)
    assert pair.client.state is State.INITIALIZING
    assert pair.client.outstanding == (0,)
    pair.roundtrip(Role.CLIENT, "ping")


def test_only_ping_while_initializing_server_side(version: str) -> None:
    pair = _initializing(version)
    event = feed(pair.server, {"jsonrpc": "2.0", "id": "raw-1", "method": "tools/list"})
    invalid = expect_invalid(event, INVALID, reply_id="raw-1")
    assert "INITIALIZING" in invalid.message
    assert pair.server.state is State.INITIALIZING
    assert pair.server.owed == (0,)
    assert invalid.reply is not None
    pair.server.send(invalid.reply)
    # Ping is fine both ways.
    pair.roundtrip(Role.CLIENT, "ping")
    pair.roundtrip(Role.SERVER, "ping")


def test_server_sends_no_request_but_ping_before_initialized(version: str) -> None:
    pair = _initializing(version)
    _refused(pair.server, Request(id=1, method="roots/list"), INVALID)
    _refused(pair.server, Request(id=1, method="sampling/createMessage", params={}), INVALID)
    event = feed(pair.client, {"jsonrpc": "2.0", "id": 9, "method": "roots/list"})
    expect_invalid(event, INVALID, reply_id=9)


def test_server_may_log_before_initialized(version: str) -> None:
    pair = _initializing(version)
    pair.send(
        Role.SERVER,
        Notification(method="notifications/message", params={"level": "info", "data": 1}),
    )


def test_initialized_notification_only_after_the_result(version: str) -> None:
    pair = _initializing(version)
    _refused(pair.client, Notification(method="notifications/initialized"), INVALID)
    event = feed(pair.server, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    expect_invalid(event, INVALID, reply=False)
    assert pair.states() == (State.INITIALIZING, State.INITIALIZING)


def test_second_initialize_while_initializing(version: str) -> None:
    pair = _initializing(version)
    _refused(
        pair.client,
        Request(id=1, method="initialize", params=initialize_params(version)),
        INVALID,
    )
    event = feed(
        pair.server,
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": initialize_params(version)},
    )
    expect_invalid(event, INVALID, reply_id=1)
    assert pair.server.owed == (0,)


def test_initialize_error_returns_to_idle(version: str) -> None:
    pair = _initializing(version)
    pair.send(Role.SERVER, ErrorResponse(id=0, code=PARAMS, message="no"))
    assert pair.states() == (State.IDLE, State.IDLE)
    assert pair.client.protocol_version is pair.server.protocol_version is None
    # A new attempt, under a new id (ids are never reused in this era).
    _refused(pair.client, Request(id=0, method="initialize", params=initialize_params(version)))
    pair.handshake(version, request_id=1)


# ---------------------------------------------------------------------------- the result


def test_server_must_echo_a_version_it_supports(version: str) -> None:
    pair = _initializing(version)
    others = [v for v in LEGACY if v != version]
    for other in others:
        err = _refused(pair.server, Response(id=0, result=initialize_result(other)))
        assert "echo" in err.message
    pair.send(Role.SERVER, Response(id=0, result=initialize_result(version)))
    assert pair.client.protocol_version == version


@pytest.mark.parametrize("requested", ["1999-01-01", "2026-07-28"])
def test_server_answers_one_of_its_versions_otherwise(version: str, requested: str) -> None:
    server = Connection(Role.SERVER, versions=[version])
    event = feed(
        server,
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": initialize_params(requested)},
    )
    assert isinstance(event, Request)
    for other in (v for v in LEGACY if v != version):
        with pytest.raises(LocalProtocolError):
            server.send(Response(id=0, result=initialize_result(other)))
    with pytest.raises(LocalProtocolError):
        server.send(Response(id=0, result=initialize_result(requested)))
    server.send(Response(id=0, result=initialize_result(version)))
    assert server.protocol_version == version
    assert server.state is State.INITIALIZED


def test_server_may_choose_any_of_its_versions(version: str) -> None:
    """Not only its newest: the spec says "another version it supports"."""
    server = Connection(Role.SERVER, versions=LEGACY)
    feed(
        server,
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": initialize_params("1.0")},
    )
    server.send(Response(id=0, result=initialize_result(version)))
    assert server.protocol_version == version


def test_client_accepts_another_version_it_supports(version: str) -> None:
    pair = ConnectionPair(versions=LEGACY, server={"versions": [version]})
    newest = LEGACY[0]
    pair.send(Role.CLIENT, Request(id=0, method="initialize", params=initialize_params(newest)))
    pair.send(Role.SERVER, Response(id=0, result=initialize_result(version)))
    assert pair.client.protocol_version == pair.server.protocol_version == version
    pair.send(Role.CLIENT, Notification(method="notifications/initialized"))


def test_client_only_asks_for_a_version_it_accepts(version: str) -> None:
    client = Connection(Role.CLIENT, versions=[version])
    for other in [v for v in LEGACY if v != version] + ["2026-07-28", "x"]:
        with pytest.raises(LocalProtocolError) as info:
            client.send(Request(id=0, method="initialize", params=initialize_params(other)))
        assert info.value.code == PARAMS
    assert client.state is State.IDLE


def test_client_refuses_a_version_it_does_not_support(version: str) -> None:
    client = Connection(Role.CLIENT, versions=[version])
    client.send(Request(id=0, method="initialize", params=initialize_params(version)))
    other = next(v for v in LEGACY if v != version)
    with pytest.raises(RemoteProtocolError) as info:
        feed(client, {"jsonrpc": "2.0", "id": 0, "result": initialize_result(other)})
    assert other in info.value.message
    # The connection stays broken.
    with pytest.raises(RemoteProtocolError):
        client.next_event()
    with pytest.raises(LocalProtocolError):
        client.send(Request(id=1, method="ping"))
    with pytest.raises(LocalProtocolError):
        client.send(Notification(method="notifications/initialized"))


@pytest.mark.parametrize(
    "result",
    [
        {"protocolVersion": "V", "serverInfo": SERVER_INFO},
        {"protocolVersion": "V", "capabilities": [], "serverInfo": SERVER_INFO},
        {"protocolVersion": "V", "capabilities": {}},
        {"capabilities": {}, "serverInfo": SERVER_INFO},
        {"protocolVersion": 1, "capabilities": {}, "serverInfo": SERVER_INFO},
    ],
)
def test_initialize_result_is_checked_both_ways(version: str, result: dict[str, Any]) -> None:
    if result.get("protocolVersion") == "V":
        result = {**result, "protocolVersion": version}
    pair = _initializing(version)
    _refused(pair.server, Response(id=0, result=result))
    with pytest.raises(RemoteProtocolError):
        feed(pair.client, {"jsonrpc": "2.0", "id": 0, "result": result})


# ---------------------------------------------------------------------------- INITIALIZED


def test_client_requests_in_the_initialize_window(version: str) -> None:
    """After the initialize result and before ``notifications/initialized``, the client may
    send any request ("The client SHOULD NOT send requests other than pings before the
    server has responded to the initialize request": the window is after that) and the
    server serves it; over HTTP the two POSTs can arrive in either order."""
    pair = _initialized(version)
    assert pair.states() == (State.INITIALIZED, State.INITIALIZED)
    pair.roundtrip(Role.CLIENT, "tools/list", result={"tools": []})
    event = feed(pair.server, {"jsonrpc": "2.0", "id": "raw-1", "method": "tools/list"})
    assert isinstance(event, Request)
    assert event.id == "raw-1"
    pair.roundtrip(Role.CLIENT, "ping")
    pair.roundtrip(Role.SERVER, "ping")
    assert pair.states() == (State.INITIALIZED, State.INITIALIZED)
    pair.send(Role.CLIENT, Notification(method="notifications/initialized"))
    assert pair.states() == (State.OPERATING, State.OPERATING)
    pair.roundtrip(Role.CLIENT, "tools/list", result={"tools": []})


def test_the_initialize_window_still_gates_capabilities_and_lifecycle(version: str) -> None:
    """The window opens what the capabilities allow, nothing more: a second ``initialize``
    and an undeclared feature are refused as after the handshake."""
    pair = _initialized(version)
    event = feed(pair.server, {"jsonrpc": "2.0", "id": 5, "method": "prompts/list"})
    expect_invalid(event, NOT_FOUND, reply_id=5)
    event = feed(
        pair.server,
        {"jsonrpc": "2.0", "id": 6, "method": "initialize", "params": initialize_params(version)},
    )
    expect_invalid(event, INVALID, reply_id=6)
    assert pair.states() == (State.INITIALIZED, State.INITIALIZED)


def test_client_notifications_in_the_initialize_window(version: str) -> None:
    """The client's notifications are open in the window too (the text restricts only
    requests); the server takes ``roots/list_changed`` before ``initialized``."""
    pair = ConnectionPair(versions=LEGACY)
    pair.handshake(version, client_capabilities={"roots": {"listChanged": True}}, initialized=False)
    pair.send(Role.CLIENT, Notification(method="notifications/roots/list_changed"))
    pair.send(Role.CLIENT, Notification(method="notifications/initialized"))
    assert pair.states() == (State.OPERATING, State.OPERATING)


def test_server_sends_no_request_before_initialized_arrives(version: str) -> None:
    pair = ConnectionPair(versions=LEGACY)
    pair.handshake(version, client_capabilities={"roots": {}}, initialized=False)
    _refused(pair.server, Request(id=1, method="roots/list"), INVALID)
    pair.send(Role.CLIENT, Notification(method="notifications/initialized"))
    pair.roundtrip(Role.SERVER, "roots/list", result={"roots": []})


def test_log_before_initialized_still_needs_logging(version: str) -> None:
    pair = _initialized(version, server_caps={"tools": {}})
    note = Notification(method="notifications/message", params={"level": "info", "data": 1})
    _refused(pair.server, note, NOT_FOUND)


def test_client_rejects_log_before_initialized_without_logging(version: str) -> None:
    pair = _initialized(version, server_caps={"tools": {}})
    event = feed(
        pair.client,
        {
            "jsonrpc": "2.0",
            "method": "notifications/message",
            "params": {"level": "info", "data": 1},
        },
    )
    expect_invalid(event, NOT_FOUND, reply=False)


def test_second_initialize_after_the_result(version: str) -> None:
    pair = _initialized(version)
    _refused(
        pair.client, Request(id=1, method="initialize", params=initialize_params(version)), INVALID
    )
    event = feed(
        pair.server,
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": initialize_params(version)},
    )
    expect_invalid(event, INVALID, reply_id=1)


# ---------------------------------------------------------------------------- OPERATING


def test_second_initialize_is_rejected_both_ways(version: str) -> None:
    pair = _operating(version)
    _refused(
        pair.client, Request(id=1, method="initialize", params=initialize_params(version)), INVALID
    )
    event = feed(
        pair.server,
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": initialize_params(version)},
    )
    invalid = expect_invalid(event, INVALID, reply_id=1)
    assert "initialize" in invalid.message
    assert pair.server.protocol_version == version
    assert pair.server.state is State.OPERATING


def test_second_initialized_is_rejected_both_ways(version: str) -> None:
    pair = _operating(version)
    _refused(pair.client, Notification(method="notifications/initialized"), INVALID)
    event = feed(pair.server, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    expect_invalid(event, INVALID, reply=False)


def test_server_cannot_send_initialized(version: str) -> None:
    pair = _operating(version)
    _refused(pair.server, Notification(method="notifications/initialized"))
    event = feed(pair.client, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    expect_invalid(event, INVALID, reply=False)


def test_operating_allows_the_negotiated_methods(version: str) -> None:
    pair = _operating(version)
    pair.roundtrip(Role.CLIENT, "tools/list", result={"tools": []})
    pair.roundtrip(Role.CLIENT, "tools/call", {"name": "t"}, result={"content": []})
    pair.roundtrip(Role.CLIENT, "ping")
    pair.roundtrip(Role.SERVER, "ping")
    assert pair.client.next_event() is NEED_DATA


def test_dual_era_client_may_initialize_directly(version: str) -> None:
    pair = ConnectionPair(server={"versions": LEGACY})
    assert pair.client.era is None
    pair.handshake(version)
    assert pair.client.era is Era.INITIALIZE


def test_dual_era_server_takes_initialize_as_the_initialize_era(version: str) -> None:
    pair = ConnectionPair(client={"versions": LEGACY})
    assert pair.server.era is None
    pair.handshake(version)
    assert pair.server.era is Era.INITIALIZE
    assert pair.server.protocol_version == version
