"""Capability gating (MCP 2025-11-25, Base Protocol > Lifecycle > Capability Negotiation and
the "Capabilities" section of each feature's page; MCP 2026-07-28, Architecture > Capability
Negotiation), both directions, every version: a request needs its receiver's capability, a
notification its sender's; what is missing is -32601. Then the rules inside the gates:
subscriptions, log levels, elicitation modes and sampling with tools."""

from __future__ import annotations

import math
from typing import Any

import pytest
from helpers import (
    LEGACY,
    META_LOG_LEVEL,
    MODERN,
    ConnectionPair,
    capability,
    expect_invalid,
    expected_gates,
    feed,
    legacy_pair,
    modern_meta,
    snapshot,
    stateless_pair,
)

from mcp_sansio import (
    Connection,
    ErrorCode,
    ErrorResponse,
    LocalProtocolError,
    Notification,
    Request,
    Response,
    Role,
)
from mcp_sansio._checks import required_params_fault

INVALID = ErrorCode.INVALID_REQUEST
PARAMS = ErrorCode.INVALID_PARAMS
NOT_FOUND = ErrorCode.METHOD_NOT_FOUND

#: Valid params for each gated method (the content rules are tested separately).
SAMPLE_PARAMS: dict[str, Any] = {
    "resources/read": {"uri": "file:///a"},
    "resources/subscribe": {"uri": "file:///a"},
    "resources/unsubscribe": {"uri": "file:///a"},
    "notifications/resources/updated": {"uri": "file:///a"},
    "prompts/get": {"name": "p"},
    "tools/call": {"name": "t", "arguments": {}},
    "logging/setLevel": {"level": "info"},
    "notifications/message": {"level": "info", "data": "hello"},
    "completion/complete": {
        "ref": {"type": "ref/prompt", "name": "p"},
        "argument": {"name": "a", "value": "b"},
    },
    "sampling/createMessage": {"messages": [], "maxTokens": 10},
    "elicitation/create": {
        "message": "m",
        "requestedSchema": {"type": "object", "properties": {}},
    },
    "tasks/get": {"taskId": "t"},
    "tasks/result": {"taskId": "t"},
    "tasks/cancel": {"taskId": "t"},
}

LEGACY_GATED = [
    pytest.param(v, name, sender, path, id=f"{v}-{name}-{sender.value}")
    for v in LEGACY
    for name, (senders, path) in expected_gates(v).items()
    for sender in senders
]


def _event(method: str, rid: Any = "g") -> Request | Notification:
    params = SAMPLE_PARAMS.get(method)
    if method.startswith("notifications/"):
        return Notification(method=method, params=params)
    return Request(id=rid, method=method, params=params)


def _raw(event: Request | Notification) -> dict[str, Any]:
    msg: dict[str, Any] = {"jsonrpc": "2.0", "method": event.method}
    if isinstance(event, Request):
        msg["id"] = event.id
    if event.params is not None:
        msg["params"] = event.params
    return msg


def _holder(method: str, sender: Role) -> Role:
    return sender if method.startswith("notifications/") else sender.peer


def _legacy_pair(version: str, holder: Role, caps: dict[str, Any]) -> ConnectionPair:
    pair = ConnectionPair()
    if holder is Role.CLIENT:
        pair.handshake(version, client_capabilities=caps, server_capabilities={})
    else:
        pair.handshake(version, client_capabilities={}, server_capabilities=caps)
    return pair


def _refused(conn: Connection, event: Any, code: int | None = None) -> LocalProtocolError:
    before = snapshot(conn)
    with pytest.raises(LocalProtocolError) as info:
        conn.send(event)
    assert snapshot(conn) == before
    if code is not None:
        assert info.value.code == code, info.value
    return info.value


# ---------------------------------------------------------------------------- the tables


@pytest.mark.parametrize(("version", "method", "sender", "path"), LEGACY_GATED)
def test_gate_missing(version: str, method: str, sender: Role, path: tuple[str, ...]) -> None:
    holder = _holder(method, sender)
    pair = _legacy_pair(version, holder, {})
    event = _event(method)
    err = _refused(pair.conn(sender), event, NOT_FOUND)
    assert path[0] in err.message
    got = feed(pair.peer(sender), _raw(event))
    if isinstance(event, Request):
        expect_invalid(got, NOT_FOUND, reply_id=event.id)
    else:
        expect_invalid(got, NOT_FOUND, reply=False)


@pytest.mark.parametrize(("version", "method", "sender", "path"), LEGACY_GATED)
def test_gate_partly_declared(
    version: str, method: str, sender: Role, path: tuple[str, ...]
) -> None:
    if len(path) == 1:
        caps: dict[str, Any] = {path[0]: False}
    else:
        caps = {path[0]: {path[1]: False}}
    pair = _legacy_pair(version, _holder(method, sender), caps)
    _refused(pair.conn(sender), _event(method), NOT_FOUND)
    if len(path) > 1:
        pair = _legacy_pair(version, _holder(method, sender), {path[0]: {}})
        _refused(pair.conn(sender), _event(method), NOT_FOUND)


@pytest.mark.parametrize(("version", "method", "sender", "path"), LEGACY_GATED)
def test_gate_declared(version: str, method: str, sender: Role, path: tuple[str, ...]) -> None:
    caps = capability(path)
    if method == "elicitation/create" and version == "2025-11-25":
        caps = {"elicitation": {}}  # {} means form mode
    pair = _legacy_pair(version, _holder(method, sender), caps)
    if method == "notifications/resources/updated":
        req = pair.request(Role.CLIENT, "resources/subscribe", {"uri": "file:///a"})
        pair.respond(Role.SERVER, req.id)
    pair.send(sender, _event(method))


@pytest.mark.parametrize("version", LEGACY)
def test_ungated_methods_need_no_capability(version: str) -> None:
    pair = _legacy_pair(version, Role.SERVER, {})
    pair.roundtrip(Role.CLIENT, "ping")
    pair.roundtrip(Role.SERVER, "ping")
    if version == "2024-11-05":
        # completion/complete had no capability before 2025-03-26.
        pair.roundtrip(Role.CLIENT, "completion/complete", SAMPLE_PARAMS["completion/complete"])
    if version == "2025-11-25":
        note = Notification(
            method="notifications/tasks/status",
            params={"taskId": "t", "status": "working", "createdAt": "x", "ttl": None},
        )
        pair.send(Role.CLIENT, note)
        pair.send(Role.SERVER, note)


@pytest.mark.parametrize("version", LEGACY)
def test_a_request_in_the_wrong_direction(version: str) -> None:
    caps: dict[str, Any] = {
        "tools": {},
        "sampling": {},
        "roots": {"listChanged": True},
        "logging": {},
    }
    pair = ConnectionPair()
    pair.handshake(version, client_capabilities=caps, server_capabilities=caps)
    for sender, method in [
        (Role.SERVER, "tools/list"),
        (Role.CLIENT, "sampling/createMessage"),
        (Role.CLIENT, "roots/list"),
        (Role.SERVER, "logging/setLevel"),
    ]:
        event = _event(method, rid=method)
        _refused(pair.conn(sender), event, NOT_FOUND)
        expect_invalid(feed(pair.peer(sender), _raw(event)), NOT_FOUND, reply_id=method)
    for sender, method in [
        (Role.CLIENT, "notifications/message"),
        (Role.SERVER, "notifications/roots/list_changed"),
        (Role.CLIENT, "notifications/tools/list_changed"),
    ]:
        event = _event(method)
        _refused(pair.conn(sender), event, NOT_FOUND)
        expect_invalid(feed(pair.peer(sender), _raw(event)), NOT_FOUND, reply=False)


@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26"])
def test_no_elicitation_before_2025_06_18(version: str) -> None:
    pair = _legacy_pair(version, Role.CLIENT, {"elicitation": {}})
    event = _event("elicitation/create")
    _refused(pair.server, event, NOT_FOUND)
    expect_invalid(feed(pair.client, _raw(event)), NOT_FOUND, reply_id="g")


@pytest.mark.parametrize("version", LEGACY[1:])
def test_no_tasks_before_2025_11_25(version: str) -> None:
    pair = _legacy_pair(version, Role.SERVER, {"tasks": {"list": {}, "cancel": {}}})
    event = _event("tasks/get")
    _refused(pair.client, event, NOT_FOUND)
    expect_invalid(feed(pair.server, _raw(event)), NOT_FOUND, reply_id="g")


@pytest.mark.parametrize("version", LEGACY)
def test_unknown_method_is_method_not_found(version: str) -> None:
    pair = _legacy_pair(version, Role.SERVER, {"tools": {}})
    for event in (Request(id="u", method="tools/frobnicate"), Notification(method="x/y")):
        _refused(pair.client, event, NOT_FOUND)
        got = feed(pair.server, _raw(event))
        expect_invalid(got, NOT_FOUND, reply=isinstance(event, Request))


# ---------------------------------------------------------------------------- 2026-07-28

MODERN_GATED = [
    pytest.param(name, path, id=name)
    for name, (senders, path) in expected_gates(MODERN).items()
    if not name.startswith("notifications/")
]


@pytest.mark.parametrize(("method", "path"), MODERN_GATED)
def test_2026_server_gates_requests(method: str, path: tuple[str, ...]) -> None:
    server = Connection(Role.SERVER, versions=[MODERN], capabilities={})
    params = {**SAMPLE_PARAMS.get(method, {}), "_meta": modern_meta()}
    event = feed(server, {"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
    expect_invalid(event, NOT_FOUND, reply_id=1)
    server = Connection(Role.SERVER, versions=[MODERN], capabilities=capability(path))
    event = feed(server, {"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
    assert isinstance(event, Request)


@pytest.mark.parametrize(("method", "path"), MODERN_GATED)
def test_2026_client_gates_requests_once_it_knows_the_server(
    method: str, path: tuple[str, ...]
) -> None:
    """A client learns the server's capabilities from server/discover (the probe)."""
    for caps, allowed in (({}, False), (capability(path), True)):
        client = Connection(Role.CLIENT)
        client.send(Request(id=0, method="server/discover"))
        result = {"supportedVersions": [MODERN], "capabilities": caps}
        feed(client, {"jsonrpc": "2.0", "id": 0, "result": result})
        event = _event(method, rid=1)
        if allowed:
            client.send(event)
        else:
            _refused(client, event, NOT_FOUND)


def test_2026_client_without_the_servers_capabilities_does_not_gate() -> None:
    """Current behaviour: a stateless-only client that never asked server/discover does not
    know the server's capabilities and lets every request go (the server gates)."""
    pair = stateless_pair(server_capabilities={})
    _, event = pair.send_raw(Role.CLIENT, Request(id=1, method="prompts/list"))
    expect_invalid(event, NOT_FOUND, reply_id=1)


# ---------------------------------------------------------------------------- subscriptions


def _subscribing(version: str, **common: Any) -> ConnectionPair:
    return legacy_pair(version, server_capabilities={"resources": {"subscribe": True}}, **common)


def _updated(uri: str) -> Notification:
    return Notification(method="notifications/resources/updated", params={"uri": uri})


def _raw_updated(uri: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": uri}}


@pytest.mark.parametrize("version", LEGACY)
def test_updated_only_for_subscribed_uris(version: str) -> None:
    # "This should only be sent if the client previously sent a resources/subscribe request"
    # (Schema > ResourceUpdatedNotification): a lower-case "should", so a client refuses a
    # received update only under strict=True (tests/test_connection_leniency.py has the
    # default); what we send is held to it either way.
    pair = _subscribing(version, strict=True)
    _refused(pair.server, _updated("file:///a"), INVALID)
    expect_invalid(feed(pair.client, _raw_updated("file:///a")), INVALID, reply=False)
    req = pair.request(Role.CLIENT, "resources/subscribe", {"uri": "file:///a"})
    # Not yet: the subscription counts once it succeeded.
    _refused(pair.server, _updated("file:///a"), INVALID)
    expect_invalid(feed(pair.client, _raw_updated("file:///a")), INVALID, reply=False)
    pair.respond(Role.SERVER, req.id)
    pair.send(Role.SERVER, _updated("file:///a"))
    pair.send(Role.SERVER, _updated("file:///a/sub/resource"))  # under the subscribed URI
    _refused(pair.server, _updated("file:///ab"), INVALID)
    _refused(pair.server, _updated("file:///b"), INVALID)
    expect_invalid(feed(pair.client, _raw_updated("file:///b")), INVALID, reply=False)
    req = pair.request(Role.CLIENT, "resources/unsubscribe", {"uri": "file:///a"})
    pair.send(Role.SERVER, _updated("file:///a"))  # the unsubscribe is not answered yet
    pair.respond(Role.SERVER, req.id)
    _refused(pair.server, _updated("file:///a"), INVALID)
    expect_invalid(feed(pair.client, _raw_updated("file:///a")), INVALID, reply=False)


@pytest.mark.parametrize("version", LEGACY)
def test_a_failed_subscribe_subscribes_nothing(version: str) -> None:
    pair = _subscribing(version, strict=True)  # (the received update: see above)
    req = pair.request(Role.CLIENT, "resources/subscribe", {"uri": "file:///a"})
    pair.send(Role.SERVER, ErrorResponse(id=req.id, code=-32002, message="not found"))
    _refused(pair.server, _updated("file:///a"), INVALID)
    expect_invalid(feed(pair.client, _raw_updated("file:///a")), INVALID, reply=False)


@pytest.mark.parametrize("version", LEGACY)
@pytest.mark.parametrize("params", [None, {}, {"uri": 5}])
def test_subscribe_needs_a_uri(version: str, params: Any) -> None:
    pair = _subscribing(version)
    for method in ("resources/subscribe", "resources/unsubscribe"):
        event = Request(id=method, method=method, params=params)
        _refused(pair.client, event, PARAMS)
        expect_invalid(feed(pair.server, _raw(event)), PARAMS, reply_id=method)


@pytest.mark.parametrize("version", LEGACY)
@pytest.mark.parametrize("uri", [None, 5, ["file:///a"]], ids=repr)
def test_updated_needs_a_uri(version: str, uri: Any) -> None:
    pair = _subscribing(version)
    req = pair.request(Role.CLIENT, "resources/subscribe", {"uri": "file:///a"})
    pair.respond(Role.SERVER, req.id)
    _refused(pair.server, _updated(uri), PARAMS)
    expect_invalid(feed(pair.client, _raw_updated(uri)), PARAMS, reply=False)


# ---------------------------------------------------------------------------- logging


def _log(level: Any) -> Notification:
    return Notification(method="notifications/message", params={"level": level, "data": "x"})


def _raw_log(level: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": level}}


@pytest.mark.parametrize("version", LEGACY)
def test_log_level_filters_messages(version: str) -> None:
    # "The server should send all logs at this level and higher" (Schema > SetLevelRequest):
    # lower case, nothing forbids a lower level, so a client refuses one only under
    # strict=True (tests/test_connection_leniency.py has the default); a server never sends
    # one.
    pair = legacy_pair(version, server_capabilities={"logging": {}}, strict=True)
    for level in ("debug", "info", "emergency"):
        pair.send(Role.SERVER, _log(level))
    req = pair.request(Role.CLIENT, "logging/setLevel", {"level": "error"})
    pair.send(Role.SERVER, _log("debug"))  # not answered yet: the old level holds
    pair.respond(Role.SERVER, req.id)
    for level in ("debug", "info", "notice", "warning"):
        _refused(pair.server, _log(level), INVALID)
        expect_invalid(feed(pair.client, _raw_log(level)), INVALID, reply=False)
    for level in ("error", "critical", "alert", "emergency"):
        pair.send(Role.SERVER, _log(level))


@pytest.mark.parametrize("version", LEGACY)
@pytest.mark.parametrize("level", [None, "loud", 3, "INFO"])
def test_log_levels_must_be_known(version: str, level: Any) -> None:
    pair = legacy_pair(version, server_capabilities={"logging": {}})
    event = Request(id="l", method="logging/setLevel", params={"level": level})
    _refused(pair.client, event, PARAMS)
    expect_invalid(feed(pair.server, _raw(event)), PARAMS, reply_id="l")
    _refused(pair.server, _log(level), PARAMS)
    expect_invalid(feed(pair.client, _raw_log(level)), PARAMS, reply=False)


@pytest.mark.parametrize("version", LEGACY)
@pytest.mark.parametrize("level", [["info"], {"a": 1}], ids=repr)
def test_unhashable_log_levels(version: str, level: Any) -> None:
    pair = legacy_pair(version, server_capabilities={"logging": {}})
    event = Request(id="l", method="logging/setLevel", params={"level": level})
    _refused(pair.client, event, PARAMS)
    expect_invalid(feed(pair.server, _raw(event)), PARAMS, reply_id="l")
    _refused(pair.server, _log(level), PARAMS)
    expect_invalid(feed(pair.client, _raw_log(level)), PARAMS, reply=False)


def _logging_pair() -> ConnectionPair:
    return stateless_pair(server_capabilities={"logging": {}, "tools": {}})


def test_2026_message_needs_a_request_with_log_level() -> None:
    pair = _logging_pair()
    _refused(pair.server, _log("error"), INVALID)
    expect_invalid(feed(pair.client, _raw_log("error")), INVALID, reply=False)
    req = pair.request(Role.CLIENT, "tools/list")  # no logLevel
    _refused(pair.server, _log("error"), INVALID)
    expect_invalid(feed(pair.client, _raw_log("error")), INVALID, reply=False)
    pair.respond(Role.SERVER, req.id, {"tools": []})


def test_2026_message_at_or_above_the_requested_level() -> None:
    # "When the field is present, the server MAY send notifications/message notifications
    # at or above the requested level" (2026-07-28, Server > Utilities > Logging): no MUST
    # NOT below it, so a client refuses one only under strict=True (the default is in
    # tests/test_connection_leniency.py). After the request, "The server MUST NOT emit
    # notifications/message for a request that does not include this field": refused always.
    pair = stateless_pair(server_capabilities={"logging": {}, "tools": {}}, strict=True)
    req = pair.request(Role.CLIENT, "tools/list", {"_meta": {META_LOG_LEVEL: "warning"}})
    for level in ("debug", "info", "notice"):
        _refused(pair.server, _log(level), INVALID)
        expect_invalid(feed(pair.client, _raw_log(level)), INVALID, reply=False)
    for level in ("warning", "error", "emergency"):
        pair.send(Role.SERVER, _log(level))
    pair.respond(Role.SERVER, req.id, {"tools": []})
    # The request is over: no more log messages for it.
    _refused(pair.server, _log("error"), INVALID)
    expect_invalid(feed(pair.client, _raw_log("error")), INVALID, reply=False)


def test_2026_message_needs_the_logging_capability() -> None:
    pair = stateless_pair(server_capabilities={"tools": {}})
    pair.request(Role.CLIENT, "tools/list", {"_meta": {META_LOG_LEVEL: "debug"}})
    _refused(pair.server, _log("error"), NOT_FOUND)


# ---------------------------------------------------------------------------- elicitation


def _elicit(mode: str | None, rid: Any = "e") -> Request:
    params: dict[str, Any] = {"message": "m"}
    if mode == "url":
        params.update(mode="url", url="https://example.com", elicitationId="x")
    else:
        params["requestedSchema"] = {"type": "object", "properties": {}}
        if mode is not None:
            params["mode"] = mode
    return Request(id=rid, method="elicitation/create", params=params)


@pytest.mark.parametrize(
    ("caps", "allowed"),
    [
        ({}, {None, "form"}),
        ({"form": {}}, {None, "form"}),
        ({"url": {}}, {"url"}),
        ({"form": {}, "url": {}}, {None, "form", "url"}),
    ],
)
def test_elicitation_modes_2025_11_25(caps: dict[str, Any], allowed: set[str | None]) -> None:
    pair = _legacy_pair("2025-11-25", Role.CLIENT, {"elicitation": caps})
    for i, mode in enumerate([None, "form", "url", "other"]):
        event = _elicit(mode, rid=i)
        if mode in allowed:
            pair.send(Role.SERVER, event)
        else:
            _refused(pair.server, event, PARAMS)
            expect_invalid(feed(pair.client, _raw(event)), PARAMS, reply_id=i)


@pytest.mark.parametrize("mode", [None, "form", "other"])
def test_elicitation_has_no_modes_in_2025_06_18(mode: str | None) -> None:
    """Before 2025-11-25 the mode is not looked at (an unknown key)..."""
    pair = _legacy_pair("2025-06-18", Role.CLIENT, {"elicitation": {}})
    pair.send(Role.SERVER, _elicit(mode))


def test_url_elicitation_in_2025_06_18_lacks_requested_schema() -> None:
    """... so a URL-mode elicitation, which has no ``requestedSchema``, is refused there."""
    pair = _legacy_pair("2025-06-18", Role.CLIENT, {"elicitation": {}})
    event = _elicit("url")
    _refused(pair.server, event, PARAMS)
    reply = expect_invalid(feed(pair.client, _raw(event)), PARAMS, reply_id="e")
    assert "requestedSchema" in reply.message


@pytest.mark.parametrize("version", ["2025-06-18", "2025-11-25"])
def test_elicitation_needs_params(version: str) -> None:
    pair = _legacy_pair(version, Role.CLIENT, {"elicitation": {}})
    event = Request(id="e", method="elicitation/create")
    _refused(pair.server, event, PARAMS)
    expect_invalid(feed(pair.client, _raw(event)), PARAMS, reply_id="e")


# ---------------------------------------------------------------------------- sampling


def _sample(rid: Any = "s", **extra: Any) -> Request:
    params = {"messages": [], "maxTokens": 5, **extra}
    return Request(id=rid, method="sampling/createMessage", params=params)


@pytest.mark.parametrize(
    ("extra", "path", "must"),
    [
        ({"tools": []}, ("sampling", "tools"), True),
        ({"toolChoice": {"mode": "auto"}}, ("sampling", "tools"), True),
        ({"includeContext": "thisServer"}, ("sampling", "context"), False),
        ({"includeContext": "allServers"}, ("sampling", "context"), False),
    ],
)
def test_sampling_with_tools_or_context_2025_11_25(
    extra: dict[str, Any], path: tuple[str, ...], must: bool
) -> None:
    """Tools: "The client MUST return an error if this field is provided but
    ClientCapabilities.sampling.tools is not declared" (Schema > CreateMessageRequestParams,
    of ``tools`` and ``toolChoice``): refused always. Context: "If not declared, servers
    SHOULD only use includeContext: "none" (or omit it)" (Schema > ClientCapabilities), and
    "The client MAY ignore this request" (of includeContext): a server never sends it, a
    client serves it by default and refuses it under strict=True."""
    pair = _legacy_pair("2025-11-25", Role.CLIENT, {"sampling": {}})
    event = _sample(**extra)
    _refused(pair.server, event, PARAMS)
    got = feed(pair.client, _raw(event))
    if must:
        expect_invalid(got, PARAMS, reply_id="s")
    else:
        assert got == event, got
        strict = ConnectionPair(strict=True)
        strict.handshake("2025-11-25", client_capabilities={"sampling": {}}, server_capabilities={})
        expect_invalid(feed(strict.client, _raw(event)), PARAMS, reply_id="s")
    pair = _legacy_pair("2025-11-25", Role.CLIENT, capability(path))
    pair.send(Role.SERVER, event)


@pytest.mark.parametrize("version", LEGACY)
def test_plain_sampling(version: str) -> None:
    pair = _legacy_pair(version, Role.CLIENT, {"sampling": {}})
    pair.send(Role.SERVER, _sample(includeContext="none"))
    event = Request(id="bad", method="sampling/createMessage")
    _refused(pair.server, event, PARAMS)
    expect_invalid(feed(pair.client, _raw(event)), PARAMS, reply_id="bad")


@pytest.mark.parametrize("version", LEGACY[1:])
def test_sampling_tools_are_not_checked_before_2025_11_25(version: str) -> None:
    """Current behaviour: sampling.tools did not exist before 2025-11-25."""
    pair = _legacy_pair(version, Role.CLIENT, {"sampling": {}})
    pair.send(Role.SERVER, _sample(tools=[], includeContext="thisServer"))


# ---------------------------------------------------------------------------- roots


@pytest.mark.parametrize("version", LEGACY)
def test_roots(version: str) -> None:
    pair = _legacy_pair(version, Role.CLIENT, {"roots": {}})
    pair.roundtrip(Role.SERVER, "roots/list", result={"roots": []})
    note = Notification(method="notifications/roots/list_changed")
    _refused(pair.client, note, NOT_FOUND)  # needs roots.listChanged
    got = feed(pair.server, _raw(note))
    if version in ("2024-11-05", "2025-03-26"):
        # "Both parties SHOULD: … Only use capabilities that were successfully negotiated"
        # (Basic > Lifecycle > Operation; MUST from 2025-06-18): with roots declared, the
        # missing listChanged is only a SHOULD, and the server takes the notification
        # (refused under strict=True: tests/test_connection_leniency.py).
        assert got == note, got
    else:
        expect_invalid(got, NOT_FOUND, reply=False)
    pair = _legacy_pair(version, Role.CLIENT, {"roots": {"listChanged": True}})
    pair.send(Role.CLIENT, note)


@pytest.mark.parametrize("version", LEGACY)
def test_gates_come_from_the_initialize_messages(version: str) -> None:
    """The configured capabilities are informative in the initialize era."""
    pair = ConnectionPair(server={"capabilities": {"tools": {}}})
    pair.handshake(version, server_capabilities={"prompts": {}})
    _refused(pair.client, Request(id="t", method="tools/list"), NOT_FOUND)
    _, event = pair.send_raw(Role.CLIENT, Request(id="p", method="prompts/list"))
    assert isinstance(event, Request)
    pair.send(Role.SERVER, Response(id="p", result={"prompts": []}))


@pytest.mark.parametrize("value", [True, 1, "yes"])
def test_elicitation_declared_as_a_non_object(value: Any) -> None:
    """2025-11-25: a non-object ``elicitation`` passes the gate but declares no mode."""
    pair = _legacy_pair("2025-11-25", Role.CLIENT, {"elicitation": value})
    event = _elicit(None)
    _refused(pair.server, event, PARAMS)
    expect_invalid(feed(pair.client, _raw(event)), PARAMS, reply_id="e")


@pytest.mark.parametrize(
    ("version", "method", "caps"),
    [
        ("2025-06-18", "elicitation/create", {"elicitation": {}}),
        ("2025-06-18", "sampling/createMessage", {"sampling": {}}),
        ("2024-11-05", "sampling/createMessage", {"sampling": {}}),
    ],
)
def test_required_params_come_from_the_schema(
    version: str, method: str, caps: dict[str, Any]
) -> None:
    """Empty params of sampling/elicitation lack what the version's schema requires: a
    received one gets -32602 naming the key; sending one raises, and changes nothing."""
    pair = _legacy_pair(version, Role.CLIENT, caps)
    event = Request(id="empty", method=method, params={})
    reply = expect_invalid(feed(pair.client, _raw(event)), PARAMS, reply_id="empty")
    assert "needs" in reply.message
    _refused(pair.server, Request(id="empty2", method=method, params={}), PARAMS)


@pytest.mark.parametrize("version", ["2024-11-05", "2025-11-25"])
def test_accept_undeclared_is_a_documented_switch(version: str) -> None:
    """The official Python SDK's MCPServer logs without declaring ``logging``: a client
    may accept that with ``accept_undeclared``; by default it is refused."""
    note = {
        "jsonrpc": "2.0",
        "method": "notifications/message",
        "params": {"level": "info", "data": 1},
    }
    strict = legacy_pair(version, server_capabilities={"tools": {}})
    expect_invalid(feed(strict.client, note), -32601, reply=False)
    lenient = ConnectionPair(
        client={"accept_undeclared": {"notifications/message"}},
        server={"capabilities": {"tools": {}}},
    )
    lenient.handshake(version)
    event = feed(lenient.client, note)
    assert isinstance(event, Notification)
    assert event.method == "notifications/message"
    # Only what the peer sends is waived; this side still may not log undeclared.
    with pytest.raises(LocalProtocolError):
        lenient.server.send(
            Notification(method="notifications/message", params={"level": "info", "data": 1})
        )


@pytest.mark.parametrize("bad", ["notifications/message", ["tools/call"], [1]])
def test_accept_undeclared_is_checked(bad: object) -> None:
    with pytest.raises((TypeError, ValueError)):
        Connection(Role.CLIENT, accept_undeclared=bad)


@pytest.mark.parametrize(
    ("kind", "good", "bad"),
    [
        ("string", ["", "x"], [1, None, b"x", ["x"]]),
        ("integer", [0, -3], [True, 1.0, "1", None]),
        ("number", [0, 2.5, -1e300], [True, "1", None, math.nan, math.inf, -math.inf]),
        ("object", [{}, {"a": 1}], [[], "x", None]),
        ("array", [[], [1]], [{}, (1,), "x"]),
        ("boolean", [True, False], [0, 1, "true", None]),
        ("id", ["a", 7], [True, 1.5, None, ["a"]]),
        ("any", [None, 0, "x", [], {}, math.nan], []),
    ],
)
def test_each_kind_of_required_param(kind: str, good: list[Any], bad: list[Any]) -> None:
    """The JSON type of each kind a schema may require; a bool is no integer, and NaN and
    the infinities are no number."""
    rows = (("key", kind, None),)
    for value in good:
        assert required_params_fault("m", rows, {"key": value}) is None, value
    for value in bad:
        fault = required_params_fault("m", rows, {"key": value})
        assert fault is not None, value
        assert fault[0] == PARAMS
        assert "'key' must be" in fault[1]
    assert required_params_fault("m", rows, {}) == (PARAMS, "Invalid params: m needs 'key'")
    assert required_params_fault("m", rows, None) == (PARAMS, "Invalid params: m needs params")
