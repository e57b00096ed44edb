"""``input_required`` round trips (MCP 2026-07-28, Base Protocol > Message Patterns > Multi
Round-Trip Requests): which methods may answer it, what it must carry, the capabilities the
request declared, the client's :class:`InputRequired` event and
:meth:`Connection.retry_request`."""

from __future__ import annotations

from typing import Any

import pytest
from helpers import (
    LEGACY,
    META_CAPABILITIES,
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
    Request,
    Response,
    Role,
)

INVALID = ErrorCode.INVALID_REQUEST
PARAMS = ErrorCode.INVALID_PARAMS
MISSING_CAPABILITY = ErrorCode.MISSING_REQUIRED_CLIENT_CAPABILITY
SERVER_CAPS: dict[str, Any] = {"tools": {}, "prompts": {}, "resources": {}, "completions": {}}
ALL_CLIENT_CAPS: dict[str, Any] = {
    "sampling": {"tools": {}, "context": {}},
    "roots": {},
    "elicitation": {"form": {}, "url": {}},
}

SAMPLING: dict[str, Any] = {
    "method": "sampling/createMessage",
    "params": {"messages": [], "maxTokens": 5},
}
ROOTS: dict[str, Any] = {"method": "roots/list"}
ELICIT: dict[str, Any] = {
    "method": "elicitation/create",
    "params": {"message": "m", "requestedSchema": {"type": "object", "properties": {}}},
}
ELICIT_URL: dict[str, Any] = {
    "method": "elicitation/create",
    "params": {"mode": "url", "message": "m", "url": "https://x", "elicitationId": "e"},
}

INPUT_METHODS: dict[str, dict[str, Any]] = {
    "tools/call": {"name": "t", "arguments": {"a": 1}},
    "prompts/get": {"name": "p"},
    "resources/read": {"uri": "file:///a"},
}
OTHER_METHODS: dict[str, dict[str, Any]] = {
    "tools/list": {},
    "prompts/list": {},
    "resources/list": {},
    "resources/templates/list": {},
    "completion/complete": {
        "ref": {"type": "ref/prompt", "name": "p"},
        "argument": {"name": "a", "value": "v"},
    },
    "server/discover": {},
}


def _pair(client_caps: dict[str, Any] | None = None) -> ConnectionPair:
    caps = ALL_CLIENT_CAPS if client_caps is None else client_caps
    return stateless_pair(client_capabilities=caps, server_capabilities=SERVER_CAPS)


def _input_required(**fields: Any) -> dict[str, Any]:
    return {"resultType": "input_required", **fields}


def _refused(conn: Connection, event: Any, code: int | None = None) -> LocalProtocolError:
    before = snapshot(conn)
    with pytest.raises(LocalProtocolError) as info:
        conn.send(event)
    assert snapshot(conn) == before
    if code is not None:
        assert info.value.code == code, info.value
    return info.value


def _client_gets(pair: ConnectionPair, rid: Any, result: Any) -> Any:
    return feed(pair.client, {"jsonrpc": "2.0", "id": rid, "result": result})


# ---------------------------------------------------------------------------- which methods


@pytest.mark.parametrize(("method", "params"), INPUT_METHODS.items())
def test_input_required_round_trip(method: str, params: dict[str, Any]) -> None:
    pair = _pair()
    req = pair.request(Role.CLIENT, method, params)
    result = _input_required(inputRequests={"s": SAMPLING, "r": ROOTS}, requestState="opaque")
    _, event = pair.send_raw(Role.SERVER, Response(id=req.id, result=result))
    assert isinstance(event, InputRequired)
    assert event.id == req.id
    assert event.result == result
    assert event.input_requests == {"s": SAMPLING, "r": ROOTS}
    assert event.request_state == "opaque"
    assert event.request.method == method
    assert {k: v for k, v in event.request.params.items() if k != "_meta"} == params
    # The request is over on both sides.
    assert pair.client.outstanding == pair.server.owed == ()


@pytest.mark.parametrize(("method", "params"), OTHER_METHODS.items())
def test_only_three_methods_may_answer_input_required(method: str, params: dict[str, Any]) -> None:
    pair = _pair()
    req = pair.request(Role.CLIENT, method, params)
    result = _input_required(requestState="s")
    _refused(pair.server, Response(id=req.id, result=result))
    invalid = expect_invalid(_client_gets(pair, req.id, result), INVALID, reply=False)
    assert invalid.id == req.id
    assert pair.client.outstanding == ()


@pytest.mark.parametrize(
    "fields",
    [
        {"inputRequests": {"s": SAMPLING}},
        {"requestState": "only state"},
        {"inputRequests": {}, "requestState": ""},
    ],
)
def test_either_input_requests_or_request_state(fields: dict[str, Any]) -> None:
    pair = _pair()
    req = pair.request(Role.CLIENT, "tools/call", INPUT_METHODS["tools/call"])
    _, event = pair.send_raw(Role.SERVER, Response(id=req.id, result=_input_required(**fields)))
    assert isinstance(event, InputRequired)


def test_neither_input_requests_nor_request_state() -> None:
    pair = _pair()
    req = pair.request(Role.CLIENT, "tools/call", INPUT_METHODS["tools/call"])
    _refused(pair.server, Response(id=req.id, result=_input_required()))
    expect_invalid(_client_gets(pair, req.id, _input_required()), INVALID, reply=False)


@pytest.mark.parametrize(
    "fields",
    [
        {"requestState": 5},
        {"inputRequests": [SAMPLING]},
        {"inputRequests": {"x": {"method": "tools/list"}}},
        {"inputRequests": {"x": "sampling/createMessage"}},
    ],
)
def test_server_checks_the_input_required_shape(fields: dict[str, Any]) -> None:
    pair = _pair()
    req = pair.request(Role.CLIENT, "tools/call", INPUT_METHODS["tools/call"])
    _refused(pair.server, Response(id=req.id, result=_input_required(**fields)))


def test_server_refuses_a_null_request_state() -> None:
    pair = _pair()
    req = pair.request(Role.CLIENT, "tools/call", INPUT_METHODS["tools/call"])
    result = _input_required(requestState=None, inputRequests={"s": SAMPLING})
    _refused(pair.server, Response(id=req.id, result=result))


@pytest.mark.parametrize(
    "fields",
    [
        {"requestState": 5},
        {"inputRequests": [SAMPLING]},
        {"inputRequests": {"x": {"method": "tools/list"}}},
    ],
)
def test_client_checks_the_input_required_shape(fields: dict[str, Any]) -> None:
    pair = _pair()
    req = pair.request(Role.CLIENT, "tools/call", INPUT_METHODS["tools/call"])
    expect_invalid(_client_gets(pair, req.id, _input_required(**fields)), None, reply=False)


# ---------------------------------------------------------------------------- capabilities


@pytest.mark.parametrize(
    ("item", "capability"),
    [(SAMPLING, "sampling"), (ROOTS, "roots"), (ELICIT, "elicitation")],
)
def test_server_cannot_ask_for_an_undeclared_capability(
    item: dict[str, Any], capability: str
) -> None:
    caps = {k: v for k, v in ALL_CLIENT_CAPS.items() if k != capability}
    pair = _pair(caps)
    req = pair.request(Role.CLIENT, "tools/call", INPUT_METHODS["tools/call"])
    result = _input_required(inputRequests={"k": item})
    err = _refused(pair.server, Response(id=req.id, result=result), MISSING_CAPABILITY)
    assert capability in err.message
    pair2 = _pair({capability: ALL_CLIENT_CAPS[capability]})
    req = pair2.request(Role.CLIENT, "tools/call", INPUT_METHODS["tools/call"])
    pair2.send_raw(Role.SERVER, Response(id=req.id, result=result))


def test_client_rejects_input_for_an_undeclared_capability() -> None:
    pair = _pair({})
    req = pair.request(Role.CLIENT, "tools/call", INPUT_METHODS["tools/call"])
    result = _input_required(inputRequests={"k": SAMPLING})
    expect_invalid(_client_gets(pair, req.id, result), None, reply=False)


def test_capabilities_come_from_each_requests_meta() -> None:
    """Not from the configuration and not from earlier requests."""
    pair = _pair({})
    own: dict[str, Any] = {
        "_meta": {META_CAPABILITIES: {"roots": {}}},
        **INPUT_METHODS["tools/call"],
    }
    req = pair.request(Role.CLIENT, "tools/call", own)
    result = _input_required(inputRequests={"k": ROOTS})
    pair.send_raw(Role.SERVER, Response(id=req.id, result=result))
    req = pair.request(Role.CLIENT, "tools/call", INPUT_METHODS["tools/call"])
    _refused(pair.server, Response(id=req.id, result=result), MISSING_CAPABILITY)


@pytest.mark.parametrize(
    ("elicitation", "item", "allowed"),
    [
        ({}, ELICIT, True),
        ({}, ELICIT_URL, False),
        ({"form": {}}, ELICIT_URL, False),
        ({"url": {}}, ELICIT_URL, True),
        ({"url": {}}, ELICIT, False),
    ],
)
def test_elicitation_modes_inside_input_requests(
    elicitation: dict[str, Any], item: dict[str, Any], allowed: bool
) -> None:
    pair = _pair({"elicitation": elicitation})
    req = pair.request(Role.CLIENT, "prompts/get", INPUT_METHODS["prompts/get"])
    response = Response(id=req.id, result=_input_required(inputRequests={"e": item}))
    if allowed:
        pair.send_raw(Role.SERVER, response)
    else:
        _refused(pair.server, response, PARAMS)


@pytest.mark.parametrize(
    ("sampling", "extra", "allowed"),
    [
        ({}, {}, True),
        ({}, {"tools": []}, False),
        ({"tools": {}}, {"tools": []}, True),
        ({}, {"includeContext": "thisServer"}, False),
        ({"context": {}}, {"includeContext": "thisServer"}, True),
    ],
)
def test_sampling_inside_input_requests(
    sampling: dict[str, Any], extra: dict[str, Any], allowed: bool
) -> None:
    pair = _pair({"sampling": sampling})
    req = pair.request(Role.CLIENT, "resources/read", INPUT_METHODS["resources/read"])
    item = {"method": "sampling/createMessage", "params": {**SAMPLING["params"], **extra}}
    response = Response(id=req.id, result=_input_required(inputRequests={"s": item}))
    if allowed:
        pair.send_raw(Role.SERVER, response)
    else:
        _refused(pair.server, response, PARAMS)


# ---------------------------------------------------------------------------- retry


def _input_required_event(pair: ConnectionPair, **fields: Any) -> InputRequired:
    req = pair.request(Role.CLIENT, "tools/call", INPUT_METHODS["tools/call"])
    _, event = pair.send_raw(Role.SERVER, Response(id=req.id, result=_input_required(**fields)))
    assert isinstance(event, InputRequired)
    return event


@pytest.mark.parametrize("state", ["opaque", 'ä\u2028"\\x\n\u0000', "a" * 10_000, ""])
def test_retry_request(state: str) -> None:
    pair = _pair()
    event = _input_required_event(
        pair, inputRequests={"s": SAMPLING, "r": ROOTS}, requestState=state
    )
    answers = {
        "s": {"role": "assistant", "content": {"type": "text", "text": "hi"}},
        "r": {"roots": []},
    }
    retry = pair.client.retry_request(event, answers)
    assert retry.id != event.id
    assert retry.method == "tools/call"
    assert retry.params["inputResponses"] == answers
    assert retry.params["requestState"] == state
    assert type(retry.params["requestState"]) is str
    original = event.request.params
    assert {
        k: v for k, v in retry.params.items() if k not in ("inputResponses", "requestState")
    } == original
    # It goes out and arrives byte for byte.
    got = pair.send(Role.CLIENT, retry)
    assert isinstance(got, Request)
    assert got.params["requestState"] == state
    assert got.params["inputResponses"] == answers


def test_retry_with_a_chosen_id_and_without_state() -> None:
    pair = _pair()
    event = _input_required_event(pair, inputRequests={"r": ROOTS})
    retry = pair.client.retry_request(event, {"r": {"roots": []}}, id="retry-1")
    assert retry.id == "retry-1"
    assert "requestState" not in retry.params
    pair.send(Role.CLIENT, retry)


def test_retry_with_state_only() -> None:
    pair = _pair()
    event = _input_required_event(pair, requestState="s")
    retry = pair.client.retry_request(event, {})
    assert "inputResponses" not in retry.params
    assert retry.params["requestState"] == "s"


def test_retry_refuses_answers_that_were_not_asked() -> None:
    pair = _pair()
    event = _input_required_event(pair, inputRequests={"r": ROOTS})
    with pytest.raises(LocalProtocolError):
        pair.client.retry_request(event, {"r": {"roots": []}, "x": {}})


def test_retry_replaces_the_previous_round() -> None:
    """A second input_required round: the retry carries only the latest answers and state."""
    pair = _pair()
    first = _input_required_event(pair, inputRequests={"r": ROOTS}, requestState="one")
    retry = pair.client.retry_request(first, {"r": {"roots": []}})
    pair.send(Role.CLIENT, retry)
    result = _input_required(inputRequests={"s": SAMPLING}, requestState="two")
    _, second = pair.send_raw(Role.SERVER, Response(id=retry.id, result=result))
    assert isinstance(second, InputRequired)
    answer = {"role": "assistant", "content": {"type": "text", "text": "x"}}
    again = pair.client.retry_request(second, {"s": answer})
    assert again.params["inputResponses"] == {"s": answer}
    assert again.params["requestState"] == "two"
    pair.send(Role.CLIENT, again)
    pair.respond(Role.SERVER, again.id, {"content": []})


@pytest.mark.parametrize("version", LEGACY)
def test_no_input_required_in_the_initialize_era(version: str) -> None:
    """Current behaviour: resultType means nothing before 2026-07-28; such a result is an
    ordinary Response."""
    pair = legacy_pair(version, server_capabilities={"tools": {}})
    req = pair.request(Role.CLIENT, "tools/call", {"name": "t"})
    result = _input_required(requestState="s")
    event = pair.send(Role.SERVER, Response(id=req.id, result=result))
    assert type(event) is Response


def test_elicitation_declared_as_a_non_object_inside_input_requests() -> None:
    pair = _pair({"elicitation": True})
    req = pair.request(Role.CLIENT, "tools/call", INPUT_METHODS["tools/call"])
    response = Response(id=req.id, result=_input_required(inputRequests={"e": ELICIT}))
    _refused(pair.server, response, PARAMS)
