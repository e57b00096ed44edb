"""What the text leaves to the receiver: accepted by default, refused under ``strict``.

Issue 17, item 4: what the peer sends against a MUST or MUST NOT is refused; what it sends
against only a SHOULD or SHOULD NOT of its own (or a lower-case "should" of the schema),
where the receiver can process it, is accepted by default (the default the text allows),
and refused as before with ``Config.strict``. What we send is held to all of it either way
(``send()`` raises :class:`LocalProtocolError`). Each test names the sentence it rests on;
docs/connection.rst, "Every refusal of the peer's messages", lists them all.
"""

from __future__ import annotations

from typing import Any

import pytest
from helpers import (
    LEGACY,
    META_LOG_LEVEL,
    ConnectionPair,
    expect_invalid,
    feed,
    legacy_pair,
    snapshot,
    stateless_pair,
)

from mcp_sansio import (
    Connection,
    ErrorCode,
    InputRequired,
    LocalProtocolError,
    Notification,
    Request,
    Response,
    Role,
    State,
)

INVALID = ErrorCode.INVALID_REQUEST
PARAMS = ErrorCode.INVALID_PARAMS
NOT_FOUND = ErrorCode.METHOD_NOT_FOUND
#: "Both parties SHOULD: … Only use capabilities that were successfully negotiated" (Basic >
#: Lifecycle > Operation); from 2025-06-18 "Both parties MUST: …".
SHOULD_VERSIONS = ("2024-11-05", "2025-03-26")
MUST_VERSIONS = tuple(v for v in LEGACY if v not in SHOULD_VERSIONS)


def _raw(event: Request | Notification) -> dict[str, Any]:
    msg: dict[str, Any] = {"jsonrpc": "2.0", "method": event.method}
    if isinstance(event, Request):
        msg["id"] = event.id
    if event.params is not None:
        msg["params"] = event.params
    return msg


def _refused(conn: Connection, event: Any, code: int | None = None) -> None:
    """What we send is held to the rule: ``send()`` raises and changes nothing."""
    before = snapshot(conn)
    with pytest.raises(LocalProtocolError) as info:
        conn.send(event)
    assert snapshot(conn) == before
    if code is not None:
        assert info.value.code == code, info.value


def _both_ways(
    make: Any, receiver: Role, event: Request | Notification, code: int, **reply: Any
) -> Any:
    """``make(**config)`` builds a pair in the state to test. By default the receiver takes
    ``event`` (returned); with ``strict=True`` it refuses it with ``code``; the sender's
    ``send()`` refuses it in both."""
    lenient = make()
    _refused(lenient.conn(receiver.peer), event)
    got = feed(lenient.conn(receiver), _raw(event))
    assert type(got) is type(event), got
    assert got == event, got
    strict = make(strict=True)
    _refused(strict.conn(receiver.peer), event)
    expect_invalid(feed(strict.conn(receiver), _raw(event)), code, **reply)
    return lenient


def test_strict_is_off_by_default_and_checked() -> None:
    assert Connection(Role.CLIENT).config.strict is False
    assert Connection(Role.CLIENT, strict=True).config.strict is True
    for bad in (1, "yes", None):
        with pytest.raises(TypeError):
            Connection(Role.CLIENT, strict=bad)


# ---------------------------------------------------------------------------- the window


def _in_window(version: str, client_caps: dict[str, Any], **config: Any) -> ConnectionPair:
    pair = ConnectionPair(**config)
    pair.handshake(version, client_capabilities=client_caps, initialized=False)
    assert pair.states() == (State.INITIALIZED, State.INITIALIZED)
    return pair


@pytest.mark.parametrize("version", LEGACY)
def test_a_server_request_before_initialized_is_served(version: str) -> None:
    """ "The server SHOULD NOT send requests other than pings and logging before receiving
    the initialized notification" (Basic > Lifecycle > Initialization): the server's duty
    only. Once the initialize result is out, the version and capabilities are agreed, so a
    client serves such a request by default (its answer goes out), and refuses it (-32600)
    under strict=True. A server Connection never sends one."""
    event = Request(id="r", method="roots/list")
    pair = _both_ways(
        lambda **c: _in_window(version, {"roots": {}}, **c),
        Role.CLIENT,
        event,
        INVALID,
        reply_id="r",
    )
    wire = pair.client.send(Response(id="r", result={"roots": []}))
    assert b'"roots":[]' in wire
    assert pair.client.owed == ()
    # The capabilities still gate it: without roots, -32601 (under strict the window's
    # -32600 comes first).
    bare = _in_window(version, {})
    expect_invalid(feed(bare.client, _raw(event)), NOT_FOUND, reply_id="r")
    bare = _in_window(version, {}, strict=True)
    expect_invalid(feed(bare.client, _raw(event)), INVALID, reply_id="r")


@pytest.mark.parametrize("version", LEGACY)
@pytest.mark.parametrize("strict", [False, True])
def test_a_server_request_before_the_result_is_still_refused(version: str, strict: bool) -> None:
    """Before the initialize result no version is agreed to check or serve it under: -32600
    in either mode (the Connection's own integrity)."""
    pair = ConnectionPair(strict=strict)
    pair.send(
        Role.CLIENT,
        Request(
            id=0,
            method="initialize",
            params={
                "protocolVersion": version,
                "capabilities": {"roots": {}},
                "clientInfo": {"name": "c", "version": "1"},
            },
        ),
    )
    got = feed(pair.client, _raw(Request(id="r", method="roots/list")))
    expect_invalid(got, INVALID, reply_id="r")


# ---------------------------------------------------------------------------- sampling


def _context_pair(**config: Any) -> ConnectionPair:
    pair = ConnectionPair(**config)
    pair.handshake("2025-11-25", client_capabilities={"sampling": {}}, server_capabilities={})
    return pair


@pytest.mark.parametrize("context", ["thisServer", "allServers"])
def test_sampling_with_context_without_sampling_context(context: str) -> None:
    """ "If not declared, servers SHOULD only use includeContext: "none" (or omit it)"
    (2025-11-25, Schema > ClientCapabilities) and, of includeContext, "The client MAY ignore
    this request" (Schema > CreateMessageRequestParams): served by default, -32602 under
    strict=True."""
    event = Request(
        id="s",
        method="sampling/createMessage",
        params={"messages": [], "maxTokens": 5, "includeContext": context},
    )
    _both_ways(_context_pair, Role.CLIENT, event, PARAMS, reply_id="s")


def test_sampling_with_tools_without_sampling_tools_is_refused_by_default() -> None:
    """ "The client MUST return an error if this field is provided but
    ClientCapabilities.sampling.tools is not declared": refused in either mode."""
    event = Request(
        id="s",
        method="sampling/createMessage",
        params={"messages": [], "maxTokens": 5, "tools": []},
    )
    expect_invalid(feed(_context_pair().client, _raw(event)), PARAMS, reply_id="s")


def _input_required(pair: ConnectionPair, extra: dict[str, Any]) -> Any:
    req = pair.request(Role.CLIENT, "tools/call", {"name": "t"})
    item = {
        "method": "sampling/createMessage",
        "params": {"messages": [], "maxTokens": 5, **extra},
    }
    result = {"resultType": "input_required", "inputRequests": {"s": item}}
    _refused(pair.server, Response(id=req.id, result=result), PARAMS)
    return feed(pair.client, {"jsonrpc": "2.0", "id": req.id, "result": result})


def test_input_required_sampling_with_context_2026() -> None:
    """The same sentences in 2026-07-28 (Schema > ClientCapabilities, Schema >
    CreateMessageRequestParams): an ``input_required`` result asking for sampling with
    context, the request not having declared ``sampling.context``, is an InputRequired
    event by default and an invalid response under strict=True; with tools it is invalid in
    either mode ("The client MUST return an error")."""
    caps: dict[str, Any] = {
        "client_capabilities": {"sampling": {}},
        "server_capabilities": {"tools": {}},
    }
    context = {"includeContext": "thisServer"}
    assert isinstance(_input_required(stateless_pair(**caps), context), InputRequired)
    expect_invalid(
        _input_required(stateless_pair(**caps, strict=True), context), INVALID, reply=False
    )
    expect_invalid(_input_required(stateless_pair(**caps), {"tools": []}), INVALID, reply=False)


# ---------------------------------------------------------------------------- logging


def _log(level: str) -> Notification:
    return Notification(method="notifications/message", params={"level": level, "data": 1})


@pytest.mark.parametrize("version", LEGACY)
def test_a_log_message_below_the_level_set(version: str) -> None:
    """ "The server should send all logs at this level and higher (i.e., more severe) to the
    client as notifications/message" (Schema > SetLevelRequest): a lower-case "should", and
    no sentence forbids a lower level: delivered by default, dropped under strict=True."""

    def make(**config: Any) -> ConnectionPair:
        pair = legacy_pair(version, server_capabilities={"logging": {}}, **config)
        pair.roundtrip(Role.CLIENT, "logging/setLevel", {"level": "error"})
        return pair

    for level in ("debug", "warning"):
        _both_ways(make, Role.CLIENT, _log(level), INVALID, reply=False)


def _logging_2026(**config: Any) -> ConnectionPair:
    pair = stateless_pair(server_capabilities={"logging": {}, "tools": {}}, **config)
    pair.request(Role.CLIENT, "tools/list", {"_meta": {META_LOG_LEVEL: "warning"}})
    return pair


def test_a_2026_log_message_below_the_requested_level() -> None:
    """ "When the field is present, the server MAY send notifications/message notifications
    at or above the requested level" (2026-07-28, Server > Utilities > Logging): no MUST NOT
    below it: delivered by default, dropped under strict=True."""
    _both_ways(_logging_2026, Role.CLIENT, _log("info"), INVALID, reply=False)


@pytest.mark.parametrize("strict", [False, True])
def test_a_2026_log_message_without_a_log_level_is_refused(strict: bool) -> None:
    """ "The server MUST NOT emit notifications/message for a request that does not include
    this field" (ibid.): dropped in either mode."""
    pair = stateless_pair(server_capabilities={"logging": {}, "tools": {}}, strict=strict)
    pair.request(Role.CLIENT, "tools/list")
    expect_invalid(feed(pair.client, _raw(_log("error"))), INVALID, reply=False)


# ---------------------------------------------------------------------------- subscriptions


def _subscribed(version: str, **config: Any) -> ConnectionPair:
    pair = legacy_pair(version, server_capabilities={"resources": {"subscribe": True}}, **config)
    pair.roundtrip(Role.CLIENT, "resources/subscribe", {"uri": "file:///a"})
    return pair


@pytest.mark.parametrize("version", LEGACY)
def test_an_update_of_a_resource_not_subscribed_to(version: str) -> None:
    """ "This should only be sent if the client previously sent a resources/subscribe
    request" (Schema > ResourceUpdatedNotification): a lower-case "should" of the server's;
    the client may read the resource again. Delivered by default, dropped under
    strict=True; one without a string uri is refused in either mode (-32602, the schema)."""
    update = Notification(method="notifications/resources/updated", params={"uri": "file:///b"})
    pair = _both_ways(
        lambda **c: _subscribed(version, **c), Role.CLIENT, update, INVALID, reply=False
    )
    bad = {"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": 5}}
    expect_invalid(feed(pair.client, bad), PARAMS, reply=False)


# ---------------------------------------------------------------------------- capabilities

# The notifications gated by a sub-capability: (sender, method, the feature declared).
SUB_GATED = [
    (Role.SERVER, "notifications/tools/list_changed", {"tools": {}}),
    (Role.SERVER, "notifications/prompts/list_changed", {"prompts": {"listChanged": False}}),
    (Role.SERVER, "notifications/resources/list_changed", {"resources": {"subscribe": True}}),
    (Role.SERVER, "notifications/resources/updated", {"resources": {"listChanged": True}}),
    (Role.CLIENT, "notifications/roots/list_changed", {"roots": {}}),
]


def _declared(version: str, sender: Role, caps: dict[str, Any], **config: Any) -> ConnectionPair:
    pair = ConnectionPair(**config)
    if sender is Role.SERVER:
        pair.handshake(version, client_capabilities={}, server_capabilities=caps)
    else:
        pair.handshake(version, client_capabilities=caps, server_capabilities={})
    return pair


def _note(method: str) -> Notification:
    params = {"uri": "file:///a"} if method.endswith("/updated") else None
    return Notification(method=method, params=params)


@pytest.mark.parametrize("version", SHOULD_VERSIONS)
@pytest.mark.parametrize(("sender", "method", "caps"), SUB_GATED)
def test_an_undeclared_sub_capability_before_2025_06_18(
    version: str, sender: Role, method: str, caps: dict[str, Any]
) -> None:
    """2024-11-05 and 2025-03-26: "Both parties SHOULD: … Only use capabilities that were
    successfully negotiated" (Basic > Lifecycle > Operation). With the feature declared and
    only ``listChanged`` / ``subscribe`` missing, the notification is delivered by default
    and dropped (-32601) under strict=True. (The strict pair is built after the lenient one
    with the same capabilities: the shared gate tables must tell them apart.)"""
    _both_ways(
        lambda **c: _declared(version, sender, caps, **c),
        sender.peer,
        _note(method),
        NOT_FOUND,
        reply=False,
    )


@pytest.mark.parametrize("version", MUST_VERSIONS)
@pytest.mark.parametrize(("sender", "method", "caps"), SUB_GATED)
def test_an_undeclared_sub_capability_from_2025_06_18(
    version: str, sender: Role, method: str, caps: dict[str, Any]
) -> None:
    """From 2025-06-18: "Both parties MUST: … Only use capabilities that were successfully
    negotiated": dropped (-32601) by default."""
    pair = _declared(version, sender, caps)
    expect_invalid(feed(pair.conn(sender.peer), _raw(_note(method))), NOT_FOUND, reply=False)


@pytest.mark.parametrize("version", LEGACY)
@pytest.mark.parametrize(("sender", "method", "caps"), SUB_GATED)
def test_an_undeclared_feature_is_refused_in_every_version(
    version: str, sender: Role, method: str, caps: dict[str, Any]
) -> None:
    """Declaring the feature itself is a MUST in every version ("Servers that support tools
    MUST declare the tools capability", likewise prompts, resources and the client's roots):
    without it, dropped (-32601) by default."""
    pair = _declared(version, sender, {})
    expect_invalid(feed(pair.conn(sender.peer), _raw(_note(method))), NOT_FOUND, reply=False)


@pytest.mark.parametrize("version", SHOULD_VERSIONS)
def test_logging_without_the_logging_capability_is_refused(version: str) -> None:
    """ "Servers that emit log message notifications MUST declare the logging capability"
    (Server > Utilities > Logging), in every version: dropped by default."""
    pair = _declared(version, Role.SERVER, {"tools": {}})
    expect_invalid(feed(pair.client, _raw(_log("error"))), NOT_FOUND, reply=False)


@pytest.mark.parametrize("version", SHOULD_VERSIONS)
def test_an_undeclared_request_is_refused_in_every_version(version: str) -> None:
    """Requests are gated by the receiver's own declaration: it did not declare the feature
    ("Servers that support tools MUST declare the tools capability"), and the text asks it
    to answer -32601 ("Method not found: -32601 (Capability not supported)", Server >
    Utilities > Completion > Error Handling): refused by default, in the SHOULD versions
    too."""
    pair = _declared(version, Role.SERVER, {"tools": {}})
    got = feed(pair.server, _raw(Request(id=1, method="resources/subscribe", params={"uri": "x"})))
    expect_invalid(got, NOT_FOUND, reply_id=1)


# ---------------------------------------------------------------------------- progress


def test_a_2024_progress_message() -> None:
    """2024-11-05 has no ``message`` in progress notifications, but its schema does not
    forbid further properties: delivered by default (any value: the field is unknown there),
    refused (-32602) under strict=True; a 2024-11-05 Connection never sends one."""

    def make(**config: Any) -> ConnectionPair:
        pair = legacy_pair("2024-11-05", server_capabilities={"tools": {}}, **config)
        pair.request(Role.CLIENT, "tools/list", {"_meta": {"progressToken": "t"}})
        return pair

    for message in ("half", 5):
        note = Notification(
            method="notifications/progress",
            params={"progressToken": "t", "progress": 1, "message": message},
        )
        _both_ways(make, Role.CLIENT, note, PARAMS, reply=False)
