"""JSON-RPC batches (MCP 2025-03-26, Base Protocol > Overview > Batching): only in 2025-03-26;
received batches come out member by member, in order; answers may go back as a
:class:`Batch`; initialize is never batched; an array under any other version is an invalid
request (null id)."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from helpers import (
    ALL,
    BATCH_VERSION,
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
    Batch,
    Connection,
    ConnectionClosed,
    ErrorCode,
    ErrorResponse,
    InvalidMessage,
    LocalProtocolError,
    Notification,
    Request,
    Response,
    Role,
)

INVALID = ErrorCode.INVALID_REQUEST
CAPS: dict[str, Any] = {"tools": {}, "prompts": {}}


def _pair() -> ConnectionPair:
    return legacy_pair(BATCH_VERSION, server_capabilities=CAPS)


def _line(items: list[Any]) -> bytes:
    return orjson.dumps(items) + b"\n"


def _events(conn: Connection) -> list[Any]:
    out = []
    while (event := conn.next_event()) is not NEED_DATA:
        out.append(event)
    return out


def _refused(conn: Connection, event: Any) -> LocalProtocolError:
    before = snapshot(conn)
    with pytest.raises(LocalProtocolError) as info:
        conn.send(event)
    assert snapshot(conn) == before
    return info.value


def _progress(token: Any, value: Any) -> Notification:
    return Notification(
        method="notifications/progress", params={"progressToken": token, "progress": value}
    )


# ---------------------------------------------------------------------------- 2025-03-26


def test_a_batch_round_trip() -> None:
    pair = _pair()
    requests = (
        Request(id=10, method="tools/list"),
        Request(id=12, method="ping"),
        Request(id=11, method="prompts/list"),
    )
    data = pair.client.send(Batch(events=requests))
    assert data.startswith(b"[")
    assert data.count(b"\n") == 1
    pair.server.receive_data(data)
    assert _events(pair.server) == list(requests)
    assert pair.server.owed == (10, 12, 11)
    answers = (
        Response(id=12, result={}),
        Response(id=10, result={"tools": []}),
        ErrorResponse(id=11, code=-32603, message="x"),
    )
    pair.client.receive_data(pair.server.send(Batch(events=answers)))
    assert _events(pair.client) == list(answers)
    assert not pair.client.outstanding
    assert not pair.server.owed


def test_requests_and_notifications_together() -> None:
    pair = _pair()
    req = pair.request(Role.CLIENT, "tools/list", {"_meta": {"progressToken": "t"}})
    members = (
        Request(id="p", method="ping"),
        Notification(method="notifications/progress", params={"progressToken": "t", "progress": 1}),
    )
    pair.client.receive_data(pair.server.send(Batch(events=members)))
    assert _events(pair.client) == list(members)
    pair.respond(Role.SERVER, req.id)


def test_a_received_batch_is_checked_member_by_member() -> None:
    pair = _pair()
    line = _line(
        [
            {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
            {"jsonrpc": "2.0", "id": 2, "method": "resources/list"},  # no resources capability
            {"jsonrpc": "2.0", "id": 3},  # a broken envelope
            {"jsonrpc": "2.0", "id": 1, "method": "ping"},  # duplicate of a member in flight
            5,
            {"jsonrpc": "2.0", "id": 4, "method": "ping"},
        ]
    )
    pair.server.receive_data(line)
    events = _events(pair.server)
    assert len(events) == 6
    assert events[0] == Request(id=1, method="tools/list")
    expect_invalid(events[1], ErrorCode.METHOD_NOT_FOUND, reply_id=2)
    expect_invalid(events[2], INVALID, reply_id=3)
    expect_invalid(events[3], INVALID, reply_id=None)
    expect_invalid(events[4], INVALID, reply_id=None)
    assert events[5] == Request(id=4, method="ping")
    assert pair.server.owed == (1, 4)
    # The errors and the answers may go back together.
    replies = [e.reply for e in events[1:4]]
    answers = (Response(id=1, result={"tools": []}), *replies, Response(id=4, result={}))
    data = pair.server.send(Batch(events=answers))
    assert len(orjson.loads(data)) == 5
    assert not pair.server.owed


def test_several_null_id_errors_in_one_batch() -> None:
    pair = _pair()
    pair.server.receive_data(_line([5, "x", {"jsonrpc": "2.0", "id": 1, "method": "ping"}]))
    events = _events(pair.server)
    replies = [e.reply for e in events[:2]]
    answers = (*replies, Response(id=1, result={}))
    data = pair.server.send(Batch(events=answers))
    assert len(orjson.loads(data)) == 3


def test_a_received_batch_of_responses() -> None:
    pair = _pair()
    a = pair.request(Role.CLIENT, "tools/list")
    b = pair.request(Role.CLIENT, "prompts/list")
    line = _line(
        [
            {"jsonrpc": "2.0", "id": b.id, "result": {"prompts": []}},
            {"jsonrpc": "2.0", "id": 999, "result": {}},
            {"jsonrpc": "2.0", "id": a.id, "error": {"code": -1, "message": "x"}},
        ]
    )
    pair.client.receive_data(line)
    events = _events(pair.client)
    assert events[0] == Response(id=b.id, result={"prompts": []})
    expect_invalid(events[1], INVALID, reply=False)
    assert events[2] == ErrorResponse(id=a.id, code=-1, message="x")
    assert pair.client.outstanding == ()


def test_a_batch_mixing_requests_and_responses_is_invalid() -> None:
    pair = _pair()
    req = pair.request(Role.CLIENT, "tools/list")
    line = _line(
        [
            {"jsonrpc": "2.0", "id": "x", "method": "ping"},
            {"jsonrpc": "2.0", "id": req.id, "result": {}},
        ]
    )
    pair.client.receive_data(line)
    events = _events(pair.client)
    assert len(events) == 1
    expect_invalid(events[0], INVALID, reply_id=None)
    assert pair.client.outstanding == (req.id,)
    member = Request(id=99, method="ping")
    err = _refused(pair.client, Batch(events=(member, Response(id=req.id, result={}))))
    assert "batch" in err.message


def test_an_empty_batch() -> None:
    pair = _pair()
    expect_invalid(feed(pair.server, b"[]"), INVALID, reply_id=None)
    _refused(pair.client, Batch(events=()))


def test_initialize_is_never_batched() -> None:
    pair = _pair()
    init = {
        "jsonrpc": "2.0",
        "id": "i",
        "method": "initialize",
        "params": initialize_params(BATCH_VERSION),
    }
    pair.server.receive_data(_line([init, {"jsonrpc": "2.0", "id": "p", "method": "ping"}]))
    events = _events(pair.server)
    expect_invalid(events[0], INVALID, reply_id="i")
    assert events[1] == Request(id="p", method="ping")
    err = _refused(
        pair.client,
        Batch(
            events=(Request(id="i2", method="initialize", params=initialize_params(BATCH_VERSION)),)
        ),
    )
    assert "initialize" in err.message


def test_no_batch_before_the_version_is_negotiated() -> None:
    """Batches exist only once 2025-03-26 is the negotiated version."""
    pair = ConnectionPair(versions=[BATCH_VERSION])
    ping = {"jsonrpc": "2.0", "id": "p", "method": "ping"}
    expect_invalid(feed(pair.server, _line([ping])), INVALID, reply_id=None)
    _refused(pair.client, Batch(events=(Request(id="p", method="ping"),)))


def test_a_batch_must_not_repeat_an_id() -> None:
    pair = _pair()
    err = _refused(
        pair.client,
        Batch(events=(Request(id=7, method="ping"), Request(id=7, method="tools/list"))),
    )
    assert "id" in err.message
    req = pair.request(Role.CLIENT, "tools/list")
    _refused(
        pair.server,
        Batch(
            events=(Response(id=req.id, result={}), ErrorResponse(id=req.id, code=1, message="x"))
        ),
    )
    # "1" and 1 are different ids.
    pair.client.send(Batch(events=(Request(id=8, method="ping"), Request(id="8", method="ping"))))


def test_one_bad_member_refuses_the_whole_batch() -> None:
    pair = _pair()
    before = snapshot(pair.client)
    _refused(
        pair.client,
        Batch(events=(Request(id=20, method="ping"), Request(id=21, method="resources/list"))),
    )
    assert snapshot(pair.client) == before
    pair.request(Role.CLIENT, "ping", id=20)  # the id was not used up


def test_a_batch_of_answers_to_cancelled_requests() -> None:
    pair = _pair()
    a = pair.request(Role.CLIENT, "tools/list")
    b = pair.request(Role.CLIENT, "prompts/list")
    pair.send(
        Role.CLIENT, Notification(method="notifications/cancelled", params={"requestId": a.id})
    )
    data = pair.server.send(
        Batch(events=(Response(id=a.id, result={}), Response(id=b.id, result={"prompts": []})))
    )
    assert orjson.loads(data) == [{"jsonrpc": "2.0", "id": b.id, "result": {"prompts": []}}]
    pair.send(
        Role.CLIENT,
        Notification(method="notifications/cancelled", params={"requestId": b.id}),
        expect=None,
    )
    assert pair.server.owed == ()


def test_a_batch_of_only_dropped_answers_is_empty() -> None:
    pair = _pair()
    a = pair.request(Role.CLIENT, "tools/list")
    pair.send(
        Role.CLIENT, Notification(method="notifications/cancelled", params={"requestId": a.id})
    )
    assert pair.server.send(Batch(events=(Response(id=a.id, result={}),))) == b""


def test_a_batch_cannot_repeat_a_progress_token() -> None:
    pair = _pair()
    members = (
        Request(id=30, method="tools/list", params={"_meta": {"progressToken": "t"}}),
        Request(id=31, method="prompts/list", params={"_meta": {"progressToken": "t"}}),
    )
    _refused(pair.client, Batch(events=members))


def test_progress_increases_within_a_batch() -> None:
    pair = _pair()
    pair.request(Role.CLIENT, "tools/list", {"_meta": {"progressToken": "t"}})
    _refused(pair.server, Batch(events=(_progress("t", 2), _progress("t", 1))))


def test_a_request_and_its_cancel_in_one_batch() -> None:
    """Members are checked in order, each against the state the earlier ones left: a
    request and its cancel may go out together."""
    pair = _pair()
    members = (
        Request(id=40, method="ping"),
        Notification(method="notifications/cancelled", params={"requestId": 40}),
    )
    pair.server.receive_data(pair.client.send(Batch(events=members)))
    assert _events(pair.server) == list(members)
    assert pair.client.outstanding == pair.server.owed == ()
    assert pair.server.send(Response(id=40, result={})) == b""


# ---------------------------------------------------------------------------- other versions


@pytest.mark.parametrize("version", [v for v in ALL if v != BATCH_VERSION])
def test_no_batches_in_other_versions(version: str) -> None:
    pair = (
        stateless_pair(server_capabilities=CAPS)
        if version == MODERN
        else legacy_pair(version, server_capabilities=CAPS)
    )
    ping = {"jsonrpc": "2.0", "id": "p", "method": "ping"}
    for conn in (pair.client, pair.server):
        event = feed(conn, _line([ping]))
        invalid = expect_invalid(event, INVALID, reply_id=None)
        assert "batch" in invalid.message
        assert conn.owed == ()
    err = _refused(pair.client, Batch(events=(Request(id="p", method="tools/list"),)))
    assert "2025-03-26" in err.message


def test_batch_members_without_an_event() -> None:
    """A member that gives no event (an ignored cancel, a late answer) is skipped."""
    pair = _pair()
    line = _line(
        [
            {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 9}},
            {"jsonrpc": "2.0", "id": "p", "method": "ping"},
        ]
    )
    pair.server.receive_data(line)
    assert _events(pair.server) == [Request(id="p", method="ping")]
    pair.server.receive_data(
        _line([{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {}}])
    )
    assert _events(pair.server) == []


def test_a_batch_that_is_not_json_serialisable() -> None:
    pair = _pair()
    members = (Request(id=50, method="tools/call", params={"name": object()}),)
    _refused(pair.client, Batch(events=members))


def test_a_batch_holds_no_invalid_message() -> None:
    pair = _pair()
    member = InvalidMessage(code=-32600, message="x", reply=None)
    _refused(pair.client, Batch(events=(Request(id=60, method="ping"), member)))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "member", [ConnectionClosed(), Batch(events=())], ids=["ConnectionClosed", "Batch"]
)
def test_a_batch_holds_only_messages(member: Any) -> None:
    pair = _pair()
    _refused(pair.client, Batch(events=(member,)))


def test_a_batch_holding_nan_is_refused_whole() -> None:
    """orjson would write NaN as null: a batch whose last member holds one is refused, and
    the members before it, already checked, are undone."""
    pair = _pair()
    first = Request(id=1, method="tools/list")
    bad = Request(id=2, method="tools/call", params={"name": "t", "arguments": {"x": float("nan")}})
    error = _refused(pair.client, Batch(events=(first, bad)))
    assert "NaN" in error.message
    pair.client.send(Batch(events=(first,)))  # id 1 is still free


def test_a_member_with_a_field_of_the_wrong_type_is_refused_not_a_type_error() -> None:
    """The batch's shape is read untyped: a request whose method is not a string is the
    member check's LocalProtocolError, in the compiled build too (mypyc read the narrowed
    Request's ``method`` as a ``str`` and raised TypeError; found by test_send_bulk)."""
    pair = _pair()
    before = snapshot(pair.client)
    bad = Request(id=30, method=None)  # type: ignore[arg-type]
    for events in ((bad,), (Request(id=31, method="ping"), bad)):
        with pytest.raises(LocalProtocolError, match="method must be a string"):
            pair.client.send(Batch(events=events))
    assert snapshot(pair.client) == before
