"""The Connection's configuration, its exposed properties, and the basics shared by every
rule: what ``send()`` accepts, the error state, ``next_request_id()``, the helpers."""

from __future__ import annotations

from typing import Any

import pytest
from helpers import (
    ALL,
    LEGACY,
    MODERN,
    ConnectionPair,
    feed,
    initialize_params,
    initialize_result,
    legacy_pair,
    snapshot,
    stateless_pair,
)

from mcp_sansio import (
    ALL_VERSIONS,
    DEFAULT_CLIENT_MAX_MESSAGE_SIZE,
    DEFAULT_MAX_MESSAGE_SIZE,
    Config,
    Connection,
    ConnectionClosed,
    Era,
    ErrorCode,
    ErrorResponse,
    InvalidMessage,
    LocalProtocolError,
    Notification,
    ProtocolError,
    RemoteProtocolError,
    Request,
    Response,
    Role,
    State,
)

# ---------------------------------------------------------------------------- config


def test_default_versions_are_all_five_newest_first() -> None:
    conn = Connection(Role.CLIENT)
    assert conn.config.versions == ALL_VERSIONS
    assert len(ALL_VERSIONS) == 5
    assert list(ALL_VERSIONS) == sorted(ALL_VERSIONS, reverse=True)
    assert ALL_VERSIONS[0] == MODERN


@pytest.mark.parametrize(
    "given",
    [
        ["2024-11-05", "2026-07-28", "2025-06-18"],
        ("2025-03-26", "2025-11-25"),
        iter(["2024-11-05", "2025-03-26"]),
    ],
)
def test_versions_are_sorted_newest_first(given: Any) -> None:
    conn = Connection(Role.SERVER, versions=given)
    assert list(conn.config.versions) == sorted(conn.config.versions, reverse=True)
    assert isinstance(conn.config.versions, tuple)


@pytest.mark.parametrize(
    "versions",
    [["1999-01-01"], ["2025-06-18", "draft"], ["2026-07-28 "], [""]],
)
def test_unknown_version_is_refused(versions: list[str]) -> None:
    with pytest.raises(ValueError, match="unknown protocol version"):
        Connection(Role.CLIENT, versions=versions)


def test_empty_versions_are_refused() -> None:
    with pytest.raises(ValueError, match="at least one"):
        Connection(Role.CLIENT, versions=[])


def test_repeated_version_is_refused() -> None:
    with pytest.raises(ValueError, match="repeat"):
        Connection(Role.CLIENT, versions=["2025-06-18", "2025-06-18"])


def test_one_string_is_not_a_list_of_versions() -> None:
    with pytest.raises(TypeError):
        Connection(Role.CLIENT, versions="2025-06-18")


@pytest.mark.parametrize(
    "capabilities",
    [
        {"tools": {1: 2}},
        {"tools": object()},
        {"tools": {1, 2}},
        {3: {}},
        [("tools", {})],
        "tools",
    ],
)
def test_non_json_capabilities_are_refused(capabilities: Any) -> None:
    with pytest.raises(TypeError):
        Connection(Role.SERVER, capabilities=capabilities)


def test_non_json_implementation_is_refused() -> None:
    with pytest.raises(TypeError):
        Connection(Role.CLIENT, implementation={"name": object()})


def test_capabilities_are_copied_and_read_only() -> None:
    caps: dict[str, Any] = {"tools": {"listChanged": True}}
    conn = Connection(Role.SERVER, capabilities=caps)
    caps["tools"]["listChanged"] = False
    caps["prompts"] = {}
    assert dict(conn.config.capabilities) == {"tools": {"listChanged": True}}
    with pytest.raises(TypeError):
        conn.config.capabilities["x"] = 1  # type: ignore[index]


@pytest.mark.parametrize(
    "keyword", ["max_message_size", "max_in_flight", "id_memory", "cancelled_memory"]
)
@pytest.mark.parametrize("value", [0, -1, True, 1.5, "10", None])
def test_bad_sizes_are_refused(keyword: str, value: Any) -> None:
    with pytest.raises(ValueError, match=keyword):
        Connection(Role.CLIENT, **{keyword: value})


def test_size_defaults() -> None:
    assert Config(role=Role.SERVER).max_message_size == DEFAULT_MAX_MESSAGE_SIZE == 4 << 20
    # A client takes more by default: it asked for what it gets.
    config = Config(role=Role.CLIENT)
    assert config.max_message_size == DEFAULT_CLIENT_MAX_MESSAGE_SIZE == 64 << 20
    assert config.max_in_flight >= 1
    assert config.id_memory >= 1
    assert config.cancelled_memory >= 1


def test_config_is_immutable() -> None:
    conn = Connection(Role.CLIENT)
    with pytest.raises(AttributeError):
        conn.config.versions = ()  # type: ignore[misc]


def test_unknown_keyword_is_refused() -> None:
    with pytest.raises(TypeError):
        Connection(Role.CLIENT, version="2025-06-18")


def test_role_must_be_a_role() -> None:
    with pytest.raises(TypeError):
        Connection("client")  # type: ignore[arg-type]


def test_eras_and_versions_of() -> None:
    config = Config(role=Role.CLIENT, versions=["2026-07-28", "2025-06-18", "2024-11-05"])
    assert config.eras == {Era.STATELESS, Era.INITIALIZE}
    assert config.versions_of(Era.INITIALIZE) == ("2025-06-18", "2024-11-05")
    assert config.versions_of(Era.STATELESS) == ("2026-07-28",)


# ---------------------------------------------------------------------------- properties


@pytest.mark.parametrize("role", list(Role))
def test_fresh_connection_properties(role: Role) -> None:
    conn = Connection(role, capabilities={"x": {}})
    assert conn.role is role
    assert conn.state is State.IDLE
    assert conn.era is None  # both eras configured: not decided yet
    assert conn.protocol_version is None
    assert conn.outstanding == ()
    assert conn.owed == ()
    assert conn.peer_closed is False
    own = conn.client_capabilities if role is Role.CLIENT else conn.server_capabilities
    other = conn.server_capabilities if role is Role.CLIENT else conn.client_capabilities
    assert own == {"x": {}}
    assert other is None


@pytest.mark.parametrize("role", list(Role))
@pytest.mark.parametrize("version", LEGACY)
def test_one_era_is_decided_by_the_configuration(role: Role, version: str) -> None:
    conn = Connection(role, versions=[version])
    assert conn.era is Era.INITIALIZE
    assert conn.protocol_version is None  # negotiated by initialize


@pytest.mark.parametrize("role", list(Role))
def test_stateless_only_knows_its_version_from_the_start(role: Role) -> None:
    conn = Connection(role, versions=[MODERN])
    assert conn.era is Era.STATELESS
    assert conn.protocol_version == MODERN
    assert conn.state is State.IDLE


@pytest.mark.parametrize("version", LEGACY)
def test_handshake_exposes_version_and_capabilities(version: str) -> None:
    pair = ConnectionPair(
        client={"capabilities": {"roots": {}}}, server={"capabilities": {"tools": {}}}
    )
    pair.handshake(
        version,
        client_capabilities={"sampling": {}},
        server_capabilities={"prompts": {}},
    )
    for conn in (pair.client, pair.server):
        assert conn.state is State.OPERATING
        assert conn.era is Era.INITIALIZE
        assert conn.protocol_version == version
        # The initialize messages count, not the configuration.
        assert conn.client_capabilities == {"sampling": {}}
        assert conn.server_capabilities == {"prompts": {}}


# ---------------------------------------------------------------------------- send()


@pytest.mark.parametrize(
    "event",
    [
        InvalidMessage(code=-32600, message="x", reply=None),
        ConnectionClosed(),
    ],
)
def test_only_messages_can_be_sent(event: Any) -> None:
    conn = Connection(Role.CLIENT)
    before = snapshot(conn)
    with pytest.raises(LocalProtocolError):
        conn.send(event)
    assert snapshot(conn) == before


def test_send_returns_one_newline_terminated_line() -> None:
    conn = Connection(Role.CLIENT)
    data = conn.send(Request(id=0, method="initialize", params=initialize_params("2025-06-18")))
    assert data.endswith(b"\n")
    assert data.count(b"\n") == 1


@pytest.mark.parametrize("wrap", [bytearray, lambda b: memoryview(bytearray(b))])
def test_receive_data_takes_a_buffer_the_caller_reuses(wrap: Any) -> None:
    """A transport that reads into one bytearray may hand it over and then overwrite it."""
    client = Connection(Role.CLIENT, versions=["2025-06-18"])
    server = Connection(Role.SERVER, versions=["2025-06-18"])
    data = client.send(Request(id=0, method="initialize", params=initialize_params("2025-06-18")))
    buffer = wrap(data[:10])
    server.receive_data(buffer)
    buffer[:] = b"X" * 10
    server.receive_data(wrap(data[10:]))
    event = server.next_event()
    assert type(event) is Request
    assert (event.id, event.method) == (0, "initialize")


@pytest.mark.parametrize("params", [{"x": object()}, {"x": {1: 2}}])
def test_non_json_params_are_a_local_error(params: Any) -> None:
    pair = legacy_pair("2025-06-18", server_capabilities={"tools": {}})
    before = snapshot(pair.client)
    with pytest.raises(LocalProtocolError):
        pair.client.send(Request(id=5, method="tools/call", params={"name": "t", **params}))
    assert snapshot(pair.client) == before
    # The id was not used up by the failed send.
    pair.send(Role.CLIENT, Request(id=5, method="tools/call", params={"name": "t"}))


@pytest.mark.parametrize("params", [[1, 2], "x", 3])
def test_params_must_be_an_object(params: Any) -> None:
    pair = legacy_pair("2025-06-18", server_capabilities={"tools": {}})
    with pytest.raises(LocalProtocolError):
        pair.client.send(Request(id=5, method="tools/list", params=params))
    with pytest.raises(LocalProtocolError):
        pair.client.send(Notification(method="notifications/progress", params=params))


def test_mapping_params_are_sent_as_objects() -> None:
    from types import MappingProxyType

    pair = legacy_pair("2025-06-18", server_capabilities={"tools": {}})
    params = MappingProxyType({"name": "t", "arguments": {}})
    data = pair.client.send(Request(id=6, method="tools/call", params=params))
    pair.server.receive_data(data)
    assert pair.server.next_event() == Request(id=6, method="tools/call", params=dict(params))


def test_non_json_result_is_a_local_error() -> None:
    pair = legacy_pair("2025-06-18", server_capabilities={"tools": {}})
    req = pair.request(Role.CLIENT, "tools/list")
    before = snapshot(pair.server)
    with pytest.raises(LocalProtocolError):
        pair.server.send(Response(id=req.id, result={"tools": [object()]}))
    with pytest.raises(LocalProtocolError):
        pair.server.send(Response(id=req.id, result=[1]))
    assert snapshot(pair.server) == before
    pair.respond(Role.SERVER, req.id, {"tools": []})


@pytest.mark.parametrize(
    "error",
    [
        ErrorResponse(id=1, code="x", message="m"),  # type: ignore[arg-type]
        ErrorResponse(id=1, code=True, message="m"),
        ErrorResponse(id=1, code=1, message=None),  # type: ignore[arg-type]
    ],
)
def test_error_response_needs_int_code_and_str_message(error: ErrorResponse) -> None:
    pair = legacy_pair("2025-06-18")
    pair.request(Role.CLIENT, "ping", id=1)
    before = snapshot(pair.server)
    with pytest.raises(LocalProtocolError):
        pair.server.send(error)
    assert snapshot(pair.server) == before


def test_request_method_must_be_a_string() -> None:
    pair = legacy_pair("2025-06-18")
    with pytest.raises(LocalProtocolError):
        pair.client.send(Request(id=1, method=5, params=None))  # type: ignore[arg-type]
    with pytest.raises(LocalProtocolError):
        pair.client.send(Notification(method=5))  # type: ignore[arg-type]


# ---------------------------------------------------------------------------- error state


def _broken_client() -> Connection:
    client = Connection(Role.CLIENT, versions=["2025-06-18"])
    client.send(Request(id=0, method="initialize", params=initialize_params("2025-06-18")))
    with pytest.raises(RemoteProtocolError):
        feed(client, {"jsonrpc": "2.0", "id": 0, "result": initialize_result("2025-03-26")})
    return client


def test_error_state_is_sticky() -> None:
    client = _broken_client()
    with pytest.raises(RemoteProtocolError) as first:
        client.next_event()
    with pytest.raises(RemoteProtocolError) as second:
        client.next_event()
    assert first.value is second.value
    with pytest.raises(LocalProtocolError, match="error state"):
        client.send(Request(id=1, method="ping"))
    with pytest.raises(LocalProtocolError):
        client.send(Notification(method="notifications/initialized"))


def test_protocol_errors_carry_a_code() -> None:
    with pytest.raises(TypeError):
        ProtocolError("abstract")
    err = LocalProtocolError("x")
    assert err.code == ErrorCode.INVALID_REQUEST
    assert "LocalProtocolError" in repr(err)
    assert RemoteProtocolError("y", -32602).code == -32602


# ---------------------------------------------------------------------------- ids


@pytest.mark.parametrize("version", [*LEGACY, MODERN])
def test_next_request_id_skips_used_ids(version: str) -> None:
    pair = (
        stateless_pair(server_capabilities={"tools": {}})
        if version == MODERN
        else legacy_pair(version, server_capabilities={"tools": {}})
    )
    first = pair.client.next_request_id()
    # The application uses the next few integers itself.
    for rid in range(first, first + 3):
        pair.send(Role.CLIENT, Request(id=rid, method="tools/list", params={}))
    got = pair.client.next_request_id()
    assert got not in range(first, first + 3)
    assert got not in pair.client.outstanding
    assert pair.client.next_request_id() != got
    assert type(got) is int


def test_next_request_id_skips_ids_of_the_handshake() -> None:
    pair = ConnectionPair()
    pair.handshake("2025-06-18", request_id=0)
    assert pair.client.next_request_id() != 0


# ---------------------------------------------------------------------------- the helpers


@pytest.mark.parametrize("version", ALL)
def test_pair_round_trips_every_message_kind(version: str) -> None:
    """The ConnectionPair: each kind of message arrives exactly as sent."""
    caps: dict[str, Any] = {"tools": {}, "prompts": {}}
    if version == MODERN:
        pair = stateless_pair(server_capabilities=caps)
    else:
        pair = legacy_pair(version, server_capabilities=caps)
    req = pair.request(Role.CLIENT, "tools/call", {"name": "a", "arguments": {"x": [1, "2"]}})
    pair.respond(Role.SERVER, req.id, {"content": [], "isError": False})
    req = pair.request(Role.CLIENT, "prompts/get", {"name": "p"}, id="string-id")
    pair.send(Role.SERVER, ErrorResponse(id=req.id, code=-32602, message="no", data={"a": 1}))
    assert pair.client.outstanding == pair.server.owed == ()


# ---------------------------------------------------------------------------- typed values


def test_typed_params_and_results_are_sent_as_their_json() -> None:
    from mcp_sansio.types import v2025_06_18 as v

    pair = legacy_pair("2025-06-18", server_capabilities={"tools": {}})
    params = v.CallToolRequestParams(name="t", arguments={"a": 1})
    data = pair.client.send(Request(id="typed", method="tools/call", params=params))
    pair.server.receive_data(data)
    event = pair.server.next_event()
    assert event == Request(
        id="typed", method="tools/call", params={"name": "t", "arguments": {"a": 1}}
    )
    data = pair.server.send(Response(id="typed", result=v.CallToolResult(content=[])))
    pair.client.receive_data(data)
    assert pair.client.next_event() == Response(id="typed", result={"content": []})


def test_a_value_that_cannot_be_unstructured_is_a_local_error() -> None:
    import attrs

    @attrs.define
    class Broken:
        x: int

    broken = Broken(x=1)
    del broken.x  # unstructuring it raises AttributeError
    pair = legacy_pair("2025-06-18", server_capabilities={"tools": {}})
    before = snapshot(pair.client)
    with pytest.raises(LocalProtocolError):
        pair.client.send(Request(id="b", method="tools/call", params=broken))
    assert snapshot(pair.client) == before


def test_a_result_must_be_an_object() -> None:
    from types import MappingProxyType

    pair = legacy_pair("2025-06-18", server_capabilities={"tools": {}})
    req = pair.request(Role.CLIENT, "tools/list")
    before = snapshot(pair.server)
    with pytest.raises(LocalProtocolError):
        pair.server.send(Response(id=req.id, result=None))
    assert snapshot(pair.server) == before
    # A read-only mapping is an object.
    event = pair.send(Role.SERVER, Response(id=req.id, result=MappingProxyType({"tools": []})))
    assert event == Response(id=req.id, result={"tools": []})
