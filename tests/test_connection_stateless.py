"""The stateless era (MCP 2026-07-28: Base Protocol > Overview > Statelessness and General
fields > ``_meta``; Base Protocol > Versioning and Compatibility; Server Features > Discovery):
the client's ``_meta``, the server's checks of it, who may send what, and the era decision of
dual-era clients (``server/discover`` probe) and servers (per opening)."""

from __future__ import annotations

from typing import Any

import pytest
from helpers import (
    CLIENT_INFO,
    LEGACY,
    META_CAPABILITIES,
    META_CLIENT_INFO,
    META_LOG_LEVEL,
    META_VERSION,
    MODERN,
    ConnectionPair,
    expect_invalid,
    feed,
    initialize_params,
    initialize_result,
    modern_meta,
    snapshot,
    state_of,
    stateless_pair,
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
UNSUPPORTED = ErrorCode.UNSUPPORTED_PROTOCOL_VERSION

DISCOVER_RESULT: dict[str, Any] = {
    "supportedVersions": [MODERN],
    "capabilities": {"tools": {}},
    "ttlMs": 0,
    "cacheScope": "public",
}


def _request(rid: Any, method: str, params: Any = ...) -> dict[str, Any]:
    msg: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
    if params is ...:
        params = {"_meta": modern_meta()}
    if params is not None:
        msg["params"] = params
    return msg


def _server(**config: Any) -> Connection:
    config.setdefault("capabilities", {"tools": {}, "prompts": {}, "resources": {}})
    return Connection(Role.SERVER, versions=[MODERN], **config)


def _refused(conn: Connection, event: Any, code: int | None = None) -> LocalProtocolError:
    before = snapshot(conn)
    with pytest.raises(LocalProtocolError) as info:
        conn.send(event)
    assert snapshot(conn) == before
    if code is not None:
        assert info.value.code == code
    return info.value


# ---------------------------------------------------------------------------- client _meta


def test_client_fills_meta() -> None:
    caps: dict[str, Any] = {"sampling": {}, "elicitation": {"form": {}}}
    info = {"name": "app", "version": "9"}
    client = Connection(Role.CLIENT, versions=[MODERN], capabilities=caps, implementation=info)
    server = _server()
    data = client.send(Request(id=1, method="tools/list"))
    server.receive_data(data)
    event = server.next_event()
    assert isinstance(event, Request)
    assert event.params == {
        "_meta": {META_VERSION: MODERN, META_CAPABILITIES: caps, META_CLIENT_INFO: info}
    }
    assert client.state is server.state is State.STATELESS
    assert client.client_capabilities == caps


def test_client_fills_meta_on_every_request() -> None:
    pair = stateless_pair({"roots": {}}, {"tools": {}})
    for _ in range(3):
        req = pair.request(Role.CLIENT, "tools/call", {"name": "t", "arguments": {"a": 1}})
        pair.respond(Role.SERVER, req.id, {"content": []})


def test_client_keeps_the_applications_meta() -> None:
    pair = stateless_pair({"roots": {}}, {"tools": {}})
    own_caps: dict[str, Any] = {"sampling": {"tools": {}}}
    meta = {
        META_CAPABILITIES: own_caps,
        META_CLIENT_INFO: {"name": "other", "version": "2"},
        META_LOG_LEVEL: "debug",
        "progressToken": "tok",
        "com.example/x": [1],
    }
    data = pair.client.send(Request(id=2, method="tools/list", params={"_meta": meta}))
    pair.server.receive_data(data)
    event = pair.server.next_event()
    assert isinstance(event, Request)
    assert event.params["_meta"] == {**meta, META_VERSION: MODERN}


def test_client_keeps_a_matching_protocol_version() -> None:
    pair = stateless_pair()
    pair.send(
        Role.CLIENT,
        Request(id=1, method="server/discover", params={"_meta": {META_VERSION: MODERN}}),
    )


@pytest.mark.parametrize("given", ["2025-06-18", "2027-01-01", 20260728])
def test_client_refuses_another_protocol_version_in_meta(given: Any) -> None:
    client = Connection(Role.CLIENT, versions=[MODERN])
    _refused(client, Request(id=1, method="tools/list", params={"_meta": {META_VERSION: given}}))
    assert client.state is State.IDLE


@pytest.mark.parametrize(
    "method",
    [
        "ping",
        "initialize",
        "logging/setLevel",
        "resources/subscribe",
        "notifications/cancelled",
        "x",
    ],
)
def test_client_sends_only_2026_requests(method: str) -> None:
    client = Connection(Role.CLIENT, versions=[MODERN])
    params = initialize_params(MODERN) if method == "initialize" else {"level": "info", "uri": "u"}
    _refused(client, Request(id=1, method=method, params=params))


@pytest.mark.parametrize(
    "method",
    [
        "notifications/progress",
        "notifications/initialized",
        "notifications/roots/list_changed",
        "notifications/message",
        "x/y",
    ],
)
def test_client_sends_no_notification_but_cancelled(method: str) -> None:
    pair = stateless_pair(server_capabilities={"tools": {}})
    req = pair.request(Role.CLIENT, "tools/list", {"_meta": {"progressToken": 1}})
    _refused(pair.client, Notification(method=method, params={"progressToken": 1, "progress": 1}))
    event = feed(
        pair.server,
        {"jsonrpc": "2.0", "method": method, "params": {"progressToken": 1, "progress": 1}},
    )
    expect_invalid(event, None, reply=False)
    assert pair.server.owed == (req.id,)
    pair.send(
        Role.CLIENT, Notification(method="notifications/cancelled", params={"requestId": req.id})
    )
    assert not pair.server.owed


# ---------------------------------------------------------------------------- server checks


@pytest.mark.parametrize(
    ("params", "code"),
    [
        (None, PARAMS),
        ({}, PARAMS),
        ({"_meta": "x"}, PARAMS),
        ({"_meta": {}}, PARAMS),
        ({"_meta": {META_CAPABILITIES: {}}}, PARAMS),
        ({"_meta": {META_VERSION: 20260728, META_CAPABILITIES: {}}}, PARAMS),
        ({"_meta": {META_VERSION: MODERN}}, PARAMS),
        ({"_meta": {META_VERSION: MODERN, META_CAPABILITIES: []}}, PARAMS),
        ({"_meta": {META_VERSION: MODERN, META_CAPABILITIES: None}}, PARAMS),
        ({"_meta": {META_VERSION: MODERN, META_CAPABILITIES: {}, META_CLIENT_INFO: "me"}}, PARAMS),
        ({"_meta": modern_meta(extra={META_LOG_LEVEL: "loud"})}, PARAMS),
        ({"_meta": modern_meta(extra={META_LOG_LEVEL: 3})}, PARAMS),
    ],
)
def test_server_checks_meta(params: Any, code: int) -> None:
    server = _server()
    event = feed(server, _request(5, "tools/list", params))
    expect_invalid(event, code, reply_id=5)
    assert server.owed == ()


@pytest.mark.parametrize("level", [["debug"], {"level": "debug"}])
def test_server_checks_an_unhashable_log_level(level: Any) -> None:
    server = _server()
    event = feed(
        server, _request(5, "tools/list", {"_meta": modern_meta(extra={META_LOG_LEVEL: level})})
    )
    expect_invalid(event, PARAMS, reply_id=5)


@pytest.mark.parametrize("requested", ["2025-06-18", "2025-11-25", "2027-01-01", "draft"])
def test_server_refuses_an_unsupported_version_with_32022(requested: str) -> None:
    server = _server()
    event = feed(server, _request("a", "tools/list", {"_meta": modern_meta(version=requested)}))
    invalid = expect_invalid(event, UNSUPPORTED, reply_id="a")
    assert invalid.reply is not None
    assert invalid.reply.data == {"supported": [MODERN], "requested": requested}
    assert server.state is State.IDLE
    # The reply goes out as an error response.
    assert b'"code":-32022' in server.send(invalid.reply)


def test_client_info_is_optional() -> None:
    server = _server()
    meta = {META_VERSION: MODERN, META_CAPABILITIES: {}}
    event = feed(server, _request(1, "tools/list", {"_meta": meta}))
    assert isinstance(event, Request)


def test_server_never_takes_meta_from_earlier_requests() -> None:
    server = _server()
    assert isinstance(feed(server, _request(1, "tools/list")), Request)
    expect_invalid(feed(server, _request(2, "tools/list", {})), PARAMS, reply_id=2)


@pytest.mark.parametrize(
    "method", ["ping", "logging/setLevel", "resources/subscribe", "tasks/get", "x/y"]
)
def test_server_rejects_methods_not_in_2026(method: str) -> None:
    server = _server(capabilities={"logging": {}, "resources": {"subscribe": True}})
    meta = modern_meta()
    feed(server, _request(0, "tools/list"))  # decide the era
    event = feed(server, _request(1, method, {"_meta": meta, "level": "info", "uri": "u"}))
    expect_invalid(event, NOT_FOUND, reply_id=1)


def test_modern_only_server_answers_initialize_naming_its_versions() -> None:
    server = _server()
    event = feed(server, _request(0, "initialize", initialize_params("2025-06-18")))
    invalid = expect_invalid(event, None, reply_id=0)
    assert invalid.reply is not None
    assert MODERN in invalid.reply.message
    assert invalid.reply.data == {"supported": [MODERN], "requested": "2025-06-18"}
    assert server.state is State.IDLE


def test_modern_only_server_refuses_a_ping_without_meta() -> None:
    """Current behaviour: -32602 (params._meta missing); ping is not a 2026 method."""
    server = _server()
    event = feed(server, _request(0, "ping", None))
    expect_invalid(event, PARAMS, reply_id=0)


@pytest.mark.parametrize(
    "event",
    [
        Request(id=1, method="ping"),
        Request(id=1, method="roots/list"),
        Request(id=1, method="sampling/createMessage", params={"messages": [], "maxTokens": 1}),
        Request(id=1, method="elicitation/create", params={"message": "m", "requestedSchema": {}}),
    ],
)
@pytest.mark.parametrize("dual", [False, True])
def test_server_never_sends_requests(event: Request, dual: bool) -> None:
    server = Connection(
        Role.SERVER, versions=[MODERN, *LEGACY] if dual else [MODERN], capabilities={"tools": {}}
    )
    feed(server, _request(0, "tools/list"))
    assert server.state is State.STATELESS
    _refused(server, event)


def test_modern_only_server_sends_no_request_before_any_request() -> None:
    _refused(_server(), Request(id=1, method="ping"))


def test_client_rejects_any_request_from_the_server() -> None:
    pair = stateless_pair(server_capabilities={"tools": {}})
    pair.request(Role.CLIENT, "tools/list")
    event = feed(pair.client, _request(7, "tools/list"))
    invalid = expect_invalid(event, None, reply_id=7)
    assert invalid.code in (INVALID, NOT_FOUND)


def test_client_rejects_a_ping_from_the_server() -> None:
    pair = stateless_pair(server_capabilities={"tools": {}})
    pair.request(Role.CLIENT, "tools/list")
    event = feed(pair.client, _request(7, "ping", None))
    invalid = expect_invalid(event, None, reply_id=7)
    assert pair.client.owed == ()
    assert invalid.reply is not None
    pair.client.send(invalid.reply)


# ---------------------------------------------------------------------------- results


def test_server_adds_result_type_complete() -> None:
    pair = stateless_pair(server_capabilities={"tools": {}})
    req = pair.request(Role.CLIENT, "tools/list")
    event = pair.send(Role.SERVER, Response(id=req.id, result={"tools": []}))
    assert isinstance(event, Response)
    assert event.result == {"tools": [], "resultType": "complete"}


def test_server_refuses_an_unknown_result_type() -> None:
    pair = stateless_pair(server_capabilities={"tools": {}})
    req = pair.request(Role.CLIENT, "tools/list")
    _refused(pair.server, Response(id=req.id, result={"resultType": "task", "tools": []}))
    pair.send(Role.SERVER, Response(id=req.id, result={"resultType": "complete", "tools": []}))


@pytest.mark.parametrize("result_type", ["task", "", 1, None])
def test_client_rejects_an_unknown_result_type(result_type: Any) -> None:
    pair = stateless_pair(server_capabilities={"tools": {}})
    req = pair.request(Role.CLIENT, "tools/list")
    event = feed(
        pair.client,
        {"jsonrpc": "2.0", "id": req.id, "result": {"resultType": result_type, "tools": []}},
    )
    expect_invalid(event, INVALID, reply=False)
    assert pair.client.outstanding == ()


def test_client_treats_a_missing_result_type_as_complete() -> None:
    pair = stateless_pair(server_capabilities={"tools": {}})
    req = pair.request(Role.CLIENT, "tools/list")
    event = feed(pair.client, {"jsonrpc": "2.0", "id": req.id, "result": {"tools": []}})
    assert event == Response(id=req.id, result={"tools": []})


def test_client_receives_32022_as_an_error_response() -> None:
    pair = stateless_pair(server_capabilities={"tools": {}})
    req = pair.request(Role.CLIENT, "tools/list")
    data = {"supported": [MODERN], "requested": MODERN}
    pair.send(Role.SERVER, ErrorResponse(id=req.id, code=UNSUPPORTED, message="no", data=data))
    assert pair.client.state is State.STATELESS


# ---------------------------------------------------------------------------- dual-era server


def test_dual_era_server_takes_modern_meta_as_stateless() -> None:
    server = Connection(Role.SERVER, capabilities={"tools": {}})
    assert server.era is None
    assert isinstance(feed(server, _request(0, "tools/list")), Request)
    assert server.era is Era.STATELESS
    assert server.state is State.STATELESS
    assert server.protocol_version == MODERN


def test_dual_era_server_takes_initialize_as_initialize_era() -> None:
    server = Connection(Role.SERVER, capabilities={"tools": {}})
    event = feed(server, _request(0, "initialize", initialize_params("2025-06-18")))
    assert isinstance(event, Request)
    assert server.era is Era.INITIALIZE
    assert server.state is State.INITIALIZING
    server.send(Response(id=0, result=initialize_result("2025-06-18", {"tools": {}})))
    assert server.protocol_version == "2025-06-18"
    # Now modern _meta means nothing special: tools/list in the initialize window is a
    # request of the initialize era (the client may send it once initialize is answered).
    event = feed(server, _request(1, "tools/list"))
    assert isinstance(event, Request)
    assert server.era is Era.INITIALIZE
    assert state_of(server) is State.INITIALIZED


def test_dual_era_server_ping_without_meta_does_not_decide() -> None:
    server = Connection(Role.SERVER, capabilities={"tools": {}})
    assert isinstance(feed(server, _request(0, "ping", None)), Request)
    server.send(Response(id=0, result={}))
    assert server.state is State.IDLE
    assert server.era is None
    assert isinstance(feed(server, _request(1, "tools/list")), Request)
    assert server.era is Era.STATELESS


def test_dual_era_server_without_meta_is_initialize_era_rules() -> None:
    server = Connection(Role.SERVER, capabilities={"tools": {}})
    expect_invalid(feed(server, _request(0, "tools/list", None)), INVALID, reply_id=0)
    assert server.state is State.IDLE


def test_dual_era_server_refuses_an_unsupported_modern_version() -> None:
    server = Connection(Role.SERVER, capabilities={"tools": {}})
    event = feed(server, _request(0, "tools/list", {"_meta": modern_meta(version="2027-01-01")}))
    invalid = expect_invalid(event, UNSUPPORTED, reply_id=0)
    assert invalid.reply is not None
    assert invalid.reply.data == {"supported": [MODERN], "requested": "2027-01-01"}
    assert server.state is State.IDLE


def test_dual_era_server_once_stateless_refuses_initialize() -> None:
    """Current behaviour (debatable): after a stateless opening the server stays stateless;
    a later initialize gets the modern-only answer naming 2026-07-28 only."""
    server = Connection(Role.SERVER, capabilities={"tools": {}})
    feed(server, _request(0, "tools/list"))
    event = feed(server, _request(1, "initialize", initialize_params("2025-06-18")))
    invalid = expect_invalid(event, PARAMS, reply_id=1)
    assert invalid.reply is not None
    assert invalid.reply.data == {"supported": [MODERN], "requested": "2025-06-18"}
    assert server.era is Era.STATELESS


# ---------------------------------------------------------------------------- dual-era client


def _probing(**server: Any) -> ConnectionPair:
    server.setdefault("capabilities", {"tools": {}})
    pair = ConnectionPair(server=server)
    assert pair.client.era is None
    pair.send(Role.CLIENT, Request(id="probe", method="server/discover"))
    assert pair.client.state is State.PROBING
    assert pair.client.era is None
    return pair


def test_dual_era_client_must_probe_or_initialize_first() -> None:
    client = Connection(Role.CLIENT)
    err = _refused(client, Request(id=0, method="tools/list"))
    assert "server/discover" in err.message


def test_probe_answered_by_discover_result() -> None:
    pair = _probing()
    assert pair.server.era is Era.STATELESS
    pair.send(Role.SERVER, Response(id="probe", result=DISCOVER_RESULT))
    assert pair.client.state is State.STATELESS
    assert pair.client.era is Era.STATELESS
    assert pair.client.protocol_version == MODERN
    assert pair.client.server_capabilities == {"tools": {}}
    pair.roundtrip(Role.CLIENT, "tools/list", result={"tools": []})


def test_probe_picks_the_newest_common_version() -> None:
    client = Connection(Role.CLIENT)
    client.send(Request(id=0, method="server/discover"))
    result = {**DISCOVER_RESULT, "supportedVersions": ["2027-01-01", MODERN, "2025-06-18"]}
    feed(client, {"jsonrpc": "2.0", "id": 0, "result": result})
    assert client.protocol_version == MODERN
    assert client.era is Era.STATELESS


@pytest.mark.parametrize(
    "result",
    [
        {**DISCOVER_RESULT, "supportedVersions": ["2027-01-01"]},
        {**DISCOVER_RESULT, "supportedVersions": []},
        {"capabilities": {}},
        {"supportedVersions": [MODERN]},
        {"supportedVersions": MODERN, "capabilities": {}},
    ],
)
def test_probe_result_without_a_usable_version_is_fatal(result: dict[str, Any]) -> None:
    client = Connection(Role.CLIENT)
    client.send(Request(id=0, method="server/discover"))
    with pytest.raises(RemoteProtocolError):
        feed(client, {"jsonrpc": "2.0", "id": 0, "result": result})
    with pytest.raises(RemoteProtocolError):
        client.next_event()


def test_probe_answered_by_32022_is_stateless() -> None:
    pair = _probing(versions=[MODERN])
    data = {"supported": ["2027-01-01", MODERN], "requested": MODERN}
    pair.send(Role.SERVER, ErrorResponse(id="probe", code=UNSUPPORTED, message="v", data=data))
    assert pair.client.state is State.STATELESS
    assert pair.client.protocol_version == MODERN


def test_probe_32022_without_common_version_is_fatal() -> None:
    client = Connection(Role.CLIENT)
    client.send(Request(id=0, method="server/discover"))
    error = {"code": UNSUPPORTED, "message": "v", "data": {"supported": ["2027-01-01"]}}
    with pytest.raises(RemoteProtocolError) as info:
        feed(client, {"jsonrpc": "2.0", "id": 0, "error": error})
    assert info.value.code == UNSUPPORTED


@pytest.mark.parametrize(
    "error",
    [
        {"code": NOT_FOUND, "message": "Method not found"},
        {"code": INVALID, "message": "x"},
        {"code": PARAMS, "message": "x", "data": {"supported": [MODERN]}},
        {"code": -32000, "message": "server error"},
        {"code": 1, "message": "?"},
        {"code": UNSUPPORTED, "message": "no data"},
        {"code": UNSUPPORTED, "message": "odd data", "data": [MODERN]},
    ],
)
def test_probe_answered_by_another_error_is_initialize_era(error: dict[str, Any]) -> None:
    client = Connection(Role.CLIENT)
    client.send(Request(id=0, method="server/discover"))
    event = feed(client, {"jsonrpc": "2.0", "id": 0, "error": error})
    assert isinstance(event, ErrorResponse)
    assert client.state is State.IDLE
    assert client.era is Era.INITIALIZE
    client.send(Request(id=1, method="initialize", params=initialize_params("2025-11-25")))
    assert state_of(client) is State.INITIALIZING


def test_probe_against_a_legacy_server_end_to_end() -> None:
    pair = ConnectionPair(server={"versions": LEGACY, "capabilities": {"tools": {}}})
    _, event = pair.send_raw(Role.CLIENT, Request(id="probe", method="server/discover"))
    invalid = expect_invalid(event, NOT_FOUND, reply_id="probe")
    assert invalid.reply is not None
    pair.send(Role.SERVER, invalid.reply)
    assert pair.client.era is Era.INITIALIZE
    pair.handshake("2025-11-25", request_id="init")
    pair.roundtrip(Role.CLIENT, "tools/list", result={"tools": []})


def test_nothing_else_while_probing() -> None:
    pair = _probing()
    _refused(pair.client, Request(id=1, method="tools/list"))
    _refused(pair.client, Request(id=1, method="ping"))
    _refused(
        pair.client, Request(id=1, method="initialize", params=initialize_params("2025-06-18"))
    )
    _refused(pair.client, Request(id=1, method="server/discover"))


def test_fall_back_to_initialize_drops_the_late_answer() -> None:
    pair = _probing()
    pair.client.fall_back_to_initialize()
    assert pair.client.state is State.IDLE
    assert pair.client.era is Era.INITIALIZE
    assert pair.client.outstanding == ()
    # The late discover answer is dropped: no event, no error.
    pair.send(Role.SERVER, Response(id="probe", result=DISCOVER_RESULT), expect=None)
    assert pair.client.era is Era.INITIALIZE
    client = pair.client
    client.send(Request(id=1, method="initialize", params=initialize_params("2025-11-25")))
    assert client.state is State.INITIALIZING


def test_fall_back_to_initialize_drops_a_late_error_too() -> None:
    client = Connection(Role.CLIENT)
    client.send(Request(id=0, method="server/discover"))
    client.fall_back_to_initialize()
    error = {"code": UNSUPPORTED, "message": "v", "data": {"supported": [MODERN]}}
    assert feed(client, {"jsonrpc": "2.0", "id": 0, "error": error}) is NEED_DATA
    assert client.era is Era.INITIALIZE


@pytest.mark.parametrize("versions", [None, [MODERN], LEGACY])
def test_fall_back_without_a_probe_is_a_local_error(versions: Any) -> None:
    client = (
        Connection(Role.CLIENT) if versions is None else Connection(Role.CLIENT, versions=versions)
    )
    with pytest.raises(LocalProtocolError):
        client.fall_back_to_initialize()
    pair = stateless_pair()
    pair.request(Role.CLIENT, "server/discover")
    with pytest.raises(LocalProtocolError):
        pair.client.fall_back_to_initialize()


def test_fall_back_after_the_probe_was_answered_is_a_local_error() -> None:
    pair = _probing()
    pair.send(Role.SERVER, Response(id="probe", result=DISCOVER_RESULT))
    with pytest.raises(LocalProtocolError):
        pair.client.fall_back_to_initialize()


def test_cancelling_the_probe_means_initialize_era() -> None:
    pair = _probing()
    pair.send(
        Role.CLIENT, Notification(method="notifications/cancelled", params={"requestId": "probe"})
    )
    assert pair.client.era is Era.INITIALIZE
    assert pair.client.state is State.IDLE
    assert pair.server.owed == ()
    # The server's answer, if it still sends one, is b"" (the client cancelled).
    assert pair.server.send(Response(id="probe", result=DISCOVER_RESULT)) == b""


def test_modern_only_client_discover_is_an_ordinary_request() -> None:
    pair = stateless_pair(server_capabilities={"tools": {}})
    req = pair.request(Role.CLIENT, "server/discover")
    assert pair.client.state is State.STATELESS
    pair.respond(Role.SERVER, req.id, DISCOVER_RESULT)
    assert pair.client.state is State.STATELESS
    assert pair.client.outstanding == ()


def test_legacy_only_client_cannot_send_discover() -> None:
    client = Connection(Role.CLIENT, versions=LEGACY)
    _refused(client, Request(id=0, method="server/discover"))


def test_server_discover_result_must_match_its_capabilities() -> None:
    pair = stateless_pair(server_capabilities={"tools": {}})
    req = pair.request(Role.CLIENT, "server/discover")
    _refused(
        pair.server,
        Response(id=req.id, result={**DISCOVER_RESULT, "capabilities": {"prompts": {}}}),
    )


def test_server_discover_result_with_its_capabilities() -> None:
    pair = stateless_pair(server_capabilities={"tools": {}})
    req = pair.request(Role.CLIENT, "server/discover")
    pair.respond(Role.SERVER, req.id, DISCOVER_RESULT)


def test_client_info_default_and_configured() -> None:
    client = Connection(Role.CLIENT, versions=[MODERN], implementation=CLIENT_INFO)
    server = _server()
    server.receive_data(client.send(Request(id=0, method="tools/list")))
    event = server.next_event()
    assert isinstance(event, Request)
    assert event.params["_meta"][META_CLIENT_INFO] == CLIENT_INFO


@pytest.mark.parametrize(
    "change",
    [
        {"supportedVersions": []},
        {"supportedVersions": ["2025-06-18"]},
        {"supportedVersions": MODERN},
        {"capabilities": {}},
        {"ttlMs": -1},
        {"ttlMs": 1.5},
        {"ttlMs": None},
        {"cacheScope": "shared"},
        {"cacheScope": None},
    ],
)
def test_server_discover_result_is_checked(change: dict[str, Any]) -> None:
    pair = stateless_pair(server_capabilities={"tools": {}})
    req = pair.request(Role.CLIENT, "server/discover")
    result = {k: v for k, v in {**DISCOVER_RESULT, **change}.items() if v is not None}
    _refused(pair.server, Response(id=req.id, result=result))


def test_discover_result_helper() -> None:
    pair = stateless_pair(server_capabilities={"tools": {"listChanged": True}})
    req = pair.request(Role.CLIENT, "server/discover")
    result = pair.server.discover_result(ttl_ms=5, cache_scope="private", instructions="hi")
    assert result["supportedVersions"] == [MODERN]
    assert result["capabilities"] == {"tools": {"listChanged": True}}
    assert result["instructions"] == "hi"
    pair.respond(Role.SERVER, req.id, result)


def test_discover_result_helper_defaults() -> None:
    server = _server()
    result = server.discover_result()
    assert "instructions" not in result
    assert result["ttlMs"] == 0
    assert result["cacheScope"] == "public"
    assert result["resultType"] == "complete"


@pytest.mark.parametrize(
    "meta",
    [
        {META_CAPABILITIES: []},
        {META_CAPABILITIES: None},
        {META_CLIENT_INFO: ["x"]},
        {META_LOG_LEVEL: "loud"},
        {META_LOG_LEVEL: []},
    ],
    ids=["caps-list", "caps-null", "info-list", "level-unknown", "level-list"],
)
def test_client_checks_the_applications_meta(meta: dict[str, Any]) -> None:
    client = Connection(Role.CLIENT, versions=[MODERN])
    _refused(client, Request(id=1, method="tools/list", params={"_meta": meta}), PARAMS)


def test_client_refuses_a_meta_that_is_not_an_object() -> None:
    """An application ``_meta`` that is not an object is refused (-32602), as the
    initialize-era path refuses it, rather than silently replaced."""
    pair = stateless_pair(server_capabilities={"tools": {}})
    with pytest.raises(LocalProtocolError) as info:
        pair.client.send(Request(id=1, method="tools/list", params={"_meta": "x"}))
    assert info.value.code == -32602
