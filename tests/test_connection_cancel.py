"""Cancellation (MCP 2025-11-25, Base Protocol > Utilities > Cancellation; MCP 2026-07-28, Base
Protocol > Message Patterns > Cancellation), both directions, every version: only our own
requests in flight, never initialize; a late answer to a request we cancelled is dropped; the
peer's cancels of unknown or finished requests are ignored; our answer to a request the peer
cancelled is not sent."""

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
    initialize_params,
    legacy_pair,
    snapshot,
    stateless_pair,
)

from mcp_sansio import (
    NEED_DATA,
    Connection,
    ConnectionClosed,
    ErrorCode,
    ErrorResponse,
    LocalProtocolError,
    Notification,
    Request,
    Response,
    Role,
    State,
)

INVALID = ErrorCode.INVALID_REQUEST
CAPS: dict[str, Any] = {"tools": {}}


def _pair(version: str, **common: Any) -> ConnectionPair:
    if version == MODERN:
        return stateless_pair(server_capabilities=CAPS, **common)
    return legacy_pair(version, server_capabilities=CAPS, **common)


def _sides(version: str) -> list[Role]:
    return [Role.CLIENT] if version == MODERN else [Role.CLIENT, Role.SERVER]


def _method(side: Role) -> str:
    return "tools/list" if side is Role.CLIENT else "ping"


def _cancel(rid: Any, reason: str | None = None) -> Notification:
    params: dict[str, Any] = {"requestId": rid}
    if reason is not None:
        params["reason"] = reason
    return Notification(method="notifications/cancelled", params=params)


def _raw_cancel(params: Any) -> dict[str, Any]:
    msg: dict[str, Any] = {"jsonrpc": "2.0", "method": "notifications/cancelled"}
    if params is not ...:
        msg["params"] = params
    return msg


def _refused(conn: Connection, event: Any) -> LocalProtocolError:
    before = snapshot(conn)
    with pytest.raises(LocalProtocolError) as info:
        conn.send(event)
    assert snapshot(conn) == before
    return info.value


# ---------------------------------------------------------------------------- sending


@pytest.mark.parametrize("version", ALL)
def test_cancel_our_request_in_flight(version: str) -> None:
    pair = _pair(version)
    for side in _sides(version):
        req = pair.request(side, _method(side))
        event = pair.send(side, _cancel(req.id, "timeout"))
        assert isinstance(event, Notification)
        assert pair.conn(side).outstanding == ()
        assert pair.peer(side).owed == ()


@pytest.mark.parametrize("version", ALL)
def test_cancel_only_our_own_requests_in_flight(version: str) -> None:
    pair = _pair(version)
    for side in _sides(version):
        _refused(pair.conn(side), _cancel("never-sent"))
        req = pair.request(side, _method(side))
        pair.respond(side.peer, req.id)
        _refused(pair.conn(side), _cancel(req.id))  # finished
    # A request of the peer's is not ours to cancel.
    if version != MODERN:
        req = pair.request(Role.CLIENT, "tools/list")
        _refused(pair.server, _cancel(req.id))
        req2 = pair.request(Role.SERVER, "ping")
        _refused(pair.client, _cancel(req2.id))


@pytest.mark.parametrize("version", ALL)
@pytest.mark.parametrize(
    "params", [None, {}, {"requestId": None}, {"requestId": 1.5}, {"requestId": True}]
)
def test_cancel_needs_a_request_id(version: str, params: Any) -> None:
    pair = _pair(version)
    pair.request(Role.CLIENT, "tools/list", id=1)
    _refused(pair.client, Notification(method="notifications/cancelled", params=params))


@pytest.mark.parametrize("version", LEGACY)
def test_initialize_is_never_cancelled(version: str) -> None:
    pair = ConnectionPair()
    pair.send(Role.CLIENT, Request(id=0, method="initialize", params=initialize_params(version)))
    err = _refused(pair.client, _cancel(0))
    assert "initialize" in err.message
    # A peer's cancel of initialize is ignored: no event, the request is still owed.
    assert feed(pair.server, _raw_cancel({"requestId": 0})) is NEED_DATA
    assert pair.server.owed == (0,)
    assert pair.server.state is State.INITIALIZING


# ---------------------------------------------------------------------------- late answers


@pytest.mark.parametrize("version", ALL)
@pytest.mark.parametrize("error", [False, True])
def test_a_late_answer_to_a_cancelled_request_is_dropped(version: str, error: bool) -> None:
    pair = _pair(version)
    for side in _sides(version):
        req = pair.request(side, _method(side), id=f"late-{side.value}")
        # The answer is already on its way when the cancel goes out.
        answer: Any = (
            ErrorResponse(id=req.id, code=-32603, message="x")
            if error
            else Response(id=req.id, result={})
        )
        data = pair.peer(side).send(answer)
        # The peer has answered already: it ignores the cancel.
        pair.send(side, _cancel(req.id), expect=None)
        asker = pair.conn(side)
        asker.receive_data(data)
        assert asker.next_event() is NEED_DATA
        # Once: a second copy is an answer to no request.
        asker.receive_data(data)
        expect_invalid(asker.next_event(), INVALID, reply=False)


@pytest.mark.parametrize("version", ALL)
def test_our_answer_to_a_request_the_peer_cancelled_is_not_sent(version: str) -> None:
    pair = _pair(version)
    for side in _sides(version):
        req = pair.request(side, _method(side))
        pair.send(side, _cancel(req.id))
        answerer = pair.peer(side)
        assert answerer.owed == ()
        assert answerer.send(Response(id=req.id, result={})) == b""
        # Only one answer, even a dropped one.
        _refused(answerer, Response(id=req.id, result={}))


@pytest.mark.parametrize("version", ALL)
def test_our_error_to_a_request_the_peer_cancelled_is_not_sent(version: str) -> None:
    pair = _pair(version)
    req = pair.request(Role.CLIENT, "tools/list")
    pair.send(Role.CLIENT, _cancel(req.id))
    assert pair.server.send(ErrorResponse(id=req.id, code=-1, message="x")) == b""


@pytest.mark.parametrize("version", ALL)
def test_cancelled_memory_is_bounded(version: str) -> None:
    """Documented: past ``cancelled_memory`` cancels, the oldest is forgotten and its late
    answer shows as a response to an unknown id."""
    pair = _pair(version, cancelled_memory=1)
    first = pair.request(Role.CLIENT, "tools/list", id="first")
    second = pair.request(Role.CLIENT, "tools/list", id="second")
    late = [pair.server.send(Response(id=r.id, result={})) for r in (first, second)]
    pair.send(Role.CLIENT, _cancel(first.id), expect=None)
    pair.send(Role.CLIENT, _cancel(second.id), expect=None)
    pair.client.receive_data(late[0])
    expect_invalid(pair.client.next_event(), INVALID, reply=False)
    pair.client.receive_data(late[1])
    assert pair.client.next_event() is NEED_DATA


@pytest.mark.parametrize("version", ALL)
def test_cancelled_requests_are_not_unanswered_at_close(version: str) -> None:
    pair = _pair(version)
    a = pair.request(Role.CLIENT, "tools/list")
    b = pair.request(Role.CLIENT, "tools/list")
    pair.send(Role.CLIENT, _cancel(a.id))
    pair.client.receive_data(b"")
    assert pair.client.next_event() == ConnectionClosed(unanswered=(b.id,))


# ---------------------------------------------------------------------------- receiving


@pytest.mark.parametrize("version", ALL)
@pytest.mark.parametrize(
    "params",
    [
        {"requestId": "unknown"},
        {"requestId": 12345},
        {},
        {"requestId": None},
        {"requestId": 1.5},
        {"requestId": [1]},
        ...,
    ],
)
def test_unknown_or_malformed_cancels_are_ignored(version: str, params: Any) -> None:
    pair = _pair(version)
    pair.request(Role.CLIENT, "tools/list")
    for receiver in (pair.server, pair.client):
        before = snapshot(receiver)
        assert feed(receiver, _raw_cancel(params)) is NEED_DATA
        assert snapshot(receiver) == before


@pytest.mark.parametrize("version", ALL)
def test_a_cancel_of_a_finished_request_is_ignored(version: str) -> None:
    pair = _pair(version)
    req = pair.request(Role.CLIENT, "tools/list")
    pair.respond(Role.SERVER, req.id, {"tools": []})
    assert feed(pair.server, _raw_cancel({"requestId": req.id})) is NEED_DATA


@pytest.mark.parametrize("version", LEGACY)
def test_a_cancel_names_a_request_in_the_same_direction(version: str) -> None:
    """The client cancelling "its" id 5 does not touch the server's request 5."""
    pair = _pair(version)
    theirs = pair.request(Role.SERVER, "ping", id=5)
    assert feed(pair.server, _raw_cancel({"requestId": 5})) is NEED_DATA
    assert pair.server.outstanding == (theirs.id,)
    pair.respond(Role.CLIENT, theirs.id)


def test_2026_server_cancels_only_listen_streams() -> None:
    pair = _pair(MODERN)
    req = pair.request(Role.CLIENT, "tools/list")
    err = _refused(pair.server, _cancel(req.id))
    assert "listen" in err.message
    _refused(pair.server, _cancel("unknown"))


def test_2026_client_ignores_a_server_cancel_of_an_ordinary_request() -> None:
    """Current behaviour (debatable): the server must not cancel anything but a listen
    stream; a client ignores such a cancel (as it ignores unknown cancels) rather than
    reporting it."""
    pair = _pair(MODERN)
    req = pair.request(Role.CLIENT, "tools/list")
    assert feed(pair.client, _raw_cancel({"requestId": req.id})) is NEED_DATA
    assert pair.client.outstanding == (req.id,)


@pytest.mark.parametrize("version", ALL)
def test_progress_stops_after_cancel(version: str) -> None:
    pair = _pair(version)
    req = pair.request(Role.CLIENT, "tools/list", {"_meta": {"progressToken": "p"}})
    progress = Notification(
        method="notifications/progress", params={"progressToken": "p", "progress": 1}
    )
    pair.send(Role.SERVER, progress)
    pair.send(Role.CLIENT, _cancel(req.id))
    later = Notification(
        method="notifications/progress", params={"progressToken": "p", "progress": 2}
    )
    _refused(pair.server, later)
    # Progress that crossed the cancel on the wire is dropped, like a late answer ...
    pair.client.receive_data(
        b'{"jsonrpc":"2.0","method":"notifications/progress",'
        b'"params":{"progressToken":"p","progress":2}}\n'
    )
    assert pair.client.next_event() is NEED_DATA
    # ... but progress on a token that never was ours is still a fault.
    pair.client.receive_data(
        b'{"jsonrpc":"2.0","method":"notifications/progress",'
        b'"params":{"progressToken":"q","progress":2}}\n'
    )
    expect_invalid(pair.client.next_event(), INVALID, reply=False)


@pytest.mark.parametrize("version", ALL)
def test_cancels_by_the_peer_are_remembered_within_a_bound(version: str) -> None:
    """Current behaviour: the peer's cancelled requests are remembered up to
    ``max_in_flight``; an answer to one forgotten past the bound is a LocalProtocolError
    (answers no request) instead of b""."""
    pair = _pair(version, max_in_flight=1)
    ids = []
    for rid in ("a", "b"):
        req = pair.request(Role.CLIENT, "tools/list", id=rid)
        pair.send(Role.CLIENT, _cancel(req.id))
        ids.append(req.id)
    _refused(pair.server, Response(id="a", result={}))
    assert pair.server.send(Response(id="b", result={})) == b""


@pytest.mark.parametrize("version", ALL)
def test_tokens_of_cancelled_requests_are_remembered_within_a_bound(version: str) -> None:
    """Late progress is dropped for the last ``cancelled_memory`` cancelled requests; past
    the bound, it is reported like any progress on an unknown token."""
    pair = _pair(version, cancelled_memory=1)
    first = pair.request(Role.CLIENT, "tools/list", {"_meta": {"progressToken": "a"}})
    second = pair.request(Role.CLIENT, "tools/list", {"_meta": {"progressToken": "b"}})
    pair.send(Role.CLIENT, _cancel(first.id))
    pair.send(Role.CLIENT, _cancel(second.id))
    late = (
        b'{"jsonrpc":"2.0","method":"notifications/progress",'
        b'"params":{"progressToken":"%s","progress":1}}\n'
    )
    pair.client.receive_data(late % b"b")
    assert pair.client.next_event() is NEED_DATA
    pair.client.receive_data(late % b"a")
    expect_invalid(pair.client.next_event(), INVALID, reply=False)
