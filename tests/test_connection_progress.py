"""Progress (MCP 2025-11-25, Base Protocol > Utilities > Progress; MCP 2026-07-28, Base
Protocol > Message Patterns > Progress), both directions, every version: tokens unique among
active requests; progress only for an active request's token, from the request's receiver,
strictly increasing, none after completion; ``message`` from 2025-03-26."""

from __future__ import annotations

from typing import Any

import pytest
from helpers import (
    ALL,
    LEGACY,
    MODERN,
    ConnectionPair,
    expect_invalid,
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
    Role,
)

INVALID = ErrorCode.INVALID_REQUEST
PARAMS = ErrorCode.INVALID_PARAMS
CAPS: dict[str, Any] = {"tools": {}}


def _pair(version: str) -> ConnectionPair:
    if version == MODERN:
        return stateless_pair(server_capabilities=CAPS)
    return legacy_pair(version, server_capabilities=CAPS)


def _sides(version: str) -> list[Role]:
    """Who sends requests (and so receives progress)."""
    return [Role.CLIENT] if version == MODERN else [Role.CLIENT, Role.SERVER]


def _method(side: Role) -> str:
    return "tools/list" if side is Role.CLIENT else "ping"


def _with_token(token: Any) -> dict[str, Any]:
    return {"_meta": {"progressToken": token}}


def _progress(token: Any, progress: Any, **extra: Any) -> Notification:
    params = {"progressToken": token, "progress": progress, **extra}
    return Notification(method="notifications/progress", params=params)


def _raw(note: Notification) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": note.method, "params": note.params}


def _refused(conn: Connection, event: Any, code: int | None = None) -> None:
    before = snapshot(conn)
    with pytest.raises(LocalProtocolError) as info:
        conn.send(event)
    assert snapshot(conn) == before
    if code is not None:
        assert info.value.code == code, info.value


def _both_refuse(pair: ConnectionPair, sender: Role, note: Notification, code: int) -> None:
    """``sender`` may not send ``note``; its peer reports it (no reply)."""
    _refused(pair.conn(sender), note, code)
    expect_invalid(feed(pair.peer(sender), _raw(note)), code, reply=False)


# ---------------------------------------------------------------------------- tokens


@pytest.mark.parametrize("version", ALL)
@pytest.mark.parametrize("token", ["tok", 7, 0, -1])
def test_progress_for_an_active_request(version: str, token: Any) -> None:
    pair = _pair(version)
    for side in _sides(version):
        req = pair.request(side, _method(side), _with_token(token))
        for value in (0, 0.5, 1, 10):
            pair.send(side.peer, _progress(token, value, total=10))
        pair.respond(side.peer, req.id)
        _both_refuse(pair, side.peer, _progress(token, 11), INVALID)


@pytest.mark.parametrize("version", ALL)
def test_tokens_are_unique_among_active_requests(version: str) -> None:
    pair = _pair(version)
    for side in _sides(version):
        first = pair.request(side, _method(side), _with_token("same"))
        again = Request(id="again", method=_method(side), params=_with_token("same"))
        _refused(pair.conn(side), again, INVALID)
        raw: dict[str, Any] = {"jsonrpc": "2.0", "id": "again", "method": again.method}
        raw["params"] = _with_token("same")
        if version == MODERN:
            raw["params"]["_meta"].update(modern_meta())
        expect_invalid(feed(pair.peer(side), raw), INVALID, reply_id="again")
        # Free again once the first request is answered.
        pair.respond(side.peer, first.id)
        pair.request(side, _method(side), _with_token("same"), id="later")
        pair.respond(side.peer, "later")


@pytest.mark.parametrize("version", LEGACY)
def test_the_same_token_in_both_directions(version: str) -> None:
    """Current behaviour: each sender's tokens are unique among its own requests."""
    pair = _pair(version)
    a = pair.request(Role.CLIENT, "tools/list", _with_token("t"))
    b = pair.request(Role.SERVER, "ping", _with_token("t"))
    pair.send(Role.SERVER, _progress("t", 1))
    pair.send(Role.CLIENT, _progress("t", 1))
    pair.respond(Role.SERVER, a.id)
    pair.respond(Role.CLIENT, b.id)


@pytest.mark.parametrize("version", ALL)
@pytest.mark.parametrize("token", [None, 1.5, True, [1], {"a": 1}], ids=repr)
def test_a_token_is_a_string_or_an_integer(version: str, token: Any) -> None:
    pair = _pair(version)
    req = Request(id="r", method="tools/list", params=_with_token(token))
    _refused(pair.client, req, PARAMS)
    params = _with_token(token)
    if version == MODERN:
        params["_meta"].update(modern_meta())
    raw = {"jsonrpc": "2.0", "id": "r", "method": "tools/list", "params": params}
    expect_invalid(feed(pair.server, raw), PARAMS, reply_id="r")


@pytest.mark.parametrize("version", LEGACY)
def test_meta_must_be_an_object(version: str) -> None:
    pair = _pair(version)
    _refused(pair.client, Request(id="r", method="tools/list", params={"_meta": 5}), PARAMS)
    raw = {"jsonrpc": "2.0", "id": "r", "method": "tools/list", "params": {"_meta": []}}
    expect_invalid(feed(pair.server, raw), PARAMS, reply_id="r")


# ---------------------------------------------------------------------------- progress


@pytest.mark.parametrize("version", ALL)
def test_progress_for_an_unknown_token(version: str) -> None:
    pair = _pair(version)
    pair.request(Role.CLIENT, "tools/list", _with_token("known"))
    _both_refuse(pair, Role.SERVER, _progress("unknown", 1), INVALID)
    _both_refuse(pair, Role.SERVER, _progress(1, 1), INVALID)


@pytest.mark.parametrize("version", LEGACY)
def test_progress_comes_from_the_requests_receiver(version: str) -> None:
    """The client cannot report progress on its own request."""
    pair = _pair(version)
    pair.request(Role.CLIENT, "tools/list", _with_token("mine"))
    _both_refuse(pair, Role.CLIENT, _progress("mine", 1), INVALID)


def test_2026_client_sends_no_progress() -> None:
    pair = _pair(MODERN)
    pair.request(Role.CLIENT, "tools/list", _with_token("mine"))
    _refused(pair.client, _progress("mine", 1))


@pytest.mark.parametrize("version", ALL)
@pytest.mark.parametrize(("first", "second"), [(1, 1), (2, 1), (0.5, 0.5), (1, 0.99), (0, -1)])
def test_progress_strictly_increases(version: str, first: Any, second: Any) -> None:
    pair = _pair(version)
    for side in _sides(version):
        token = f"t-{side.value}"
        req = pair.request(side, _method(side), _with_token(token))
        pair.send(side.peer, _progress(token, first))
        _both_refuse(pair, side.peer, _progress(token, second), INVALID)
        pair.send(side.peer, _progress(token, first + 1))
        pair.respond(side.peer, req.id)


@pytest.mark.parametrize("version", ALL)
def test_no_progress_after_an_error_answer(version: str) -> None:
    pair = _pair(version)
    req = pair.request(Role.CLIENT, "tools/list", _with_token("e"))
    pair.send(Role.SERVER, ErrorResponse(id=req.id, code=-32603, message="x"))
    _both_refuse(pair, Role.SERVER, _progress("e", 1), INVALID)


@pytest.mark.parametrize("version", ALL)
@pytest.mark.parametrize(
    "params",
    [
        None,
        {"progress": 1},
        {"progressToken": "t"},
        {"progressToken": "t", "progress": "1"},
        {"progressToken": "t", "progress": True},
        {"progressToken": "t", "progress": None},
        {"progressToken": "t", "progress": 1, "total": "10"},
        {"progressToken": 1.5, "progress": 1},
    ],
)
def test_progress_params(version: str, params: Any) -> None:
    pair = _pair(version)
    pair.request(Role.CLIENT, "tools/list", _with_token("t"))
    note = Notification(method="notifications/progress", params=params)
    _refused(pair.server, note, PARAMS)
    raw: dict[str, Any] = {"jsonrpc": "2.0", "method": "notifications/progress"}
    if params is not None:
        raw["params"] = params
    expect_invalid(feed(pair.client, raw), PARAMS, reply=False)


def test_progress_has_no_message_in_2024_11_05() -> None:
    """2024-11-05 has no ``message`` in progress, but its schema's params allow further
    properties: a received one is refused only under strict=True (the default, which takes
    it, is in tests/test_connection_leniency.py); what we send is held to the version."""
    pair = legacy_pair("2024-11-05", server_capabilities=CAPS, strict=True)
    pair.request(Role.CLIENT, "tools/list", _with_token("t"))
    _both_refuse(pair, Role.SERVER, _progress("t", 1, message="half"), PARAMS)
    pair.send(Role.SERVER, _progress("t", 1))


@pytest.mark.parametrize("version", [v for v in ALL if v != "2024-11-05"])
def test_progress_message_from_2025_03_26(version: str) -> None:
    pair = _pair(version)
    pair.request(Role.CLIENT, "tools/list", _with_token("t"))
    pair.send(Role.SERVER, _progress("t", 1, total=2, message="half way"))
    _both_refuse(pair, Role.SERVER, _progress("t", 2, message=5), PARAMS)


@pytest.mark.parametrize("version", ALL)
def test_progress_is_tracked_per_request(version: str) -> None:
    pair = _pair(version)
    a = pair.request(Role.CLIENT, "tools/list", _with_token("a"))
    b = pair.request(Role.CLIENT, "tools/list", _with_token("b"))
    pair.send(Role.SERVER, _progress("a", 5))
    pair.send(Role.SERVER, _progress("b", 1))
    pair.send(Role.SERVER, _progress("a", 6))
    pair.respond(Role.SERVER, a.id)
    pair.send(Role.SERVER, _progress("b", 2))
    _both_refuse(pair, Role.SERVER, _progress("a", 7), INVALID)
    pair.respond(Role.SERVER, b.id)
