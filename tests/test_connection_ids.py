"""Request ids and response correlation (MCP 2025-11-25 and 2026-07-28, Base Protocol >
Overview > Messages > Requests and Responses), both directions, every version: ids are never
null, a bool or a float; never reused in the initialize era's session, not while outstanding in
2026-07-28; every request is answered exactly once; an answer to no request is caught; ``"1"``
and ``1`` are different ids."""

from __future__ import annotations

import tracemalloc
from typing import Any

import orjson
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
    NEED_DATA,
    Connection,
    ErrorCode,
    ErrorResponse,
    InvalidMessage,
    LocalProtocolError,
    Request,
    Response,
    Role,
)

INVALID = ErrorCode.INVALID_REQUEST
CAPS: dict[str, Any] = {"tools": {}}
BAD_IDS: list[Any] = [None, True, False, 1.5, 1.0, [1], {"a": 1}]


def _pair(version: str, **common: Any) -> ConnectionPair:
    if version == MODERN:
        return stateless_pair(server_capabilities=CAPS, **common)
    return legacy_pair(version, server_capabilities=CAPS, **common)


def _sides(version: str) -> list[Role]:
    """Who sends requests in ``version``: both sides, except in 2026-07-28."""
    return [Role.CLIENT] if version == MODERN else [Role.CLIENT, Role.SERVER]


def _method(side: Role, version: str) -> str:
    """A request ``side`` may send in ``version`` without more capabilities."""
    return "tools/list" if side is Role.CLIENT else "ping"


def _raw_request(rid: Any, method: str, version: str) -> dict[str, Any]:
    msg: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
    if version == MODERN:
        msg["params"] = {"_meta": modern_meta()}
    return msg


def _refused(conn: Connection, event: Any) -> LocalProtocolError:
    before = snapshot(conn)
    with pytest.raises(LocalProtocolError) as info:
        conn.send(event)
    assert snapshot(conn) == before
    return info.value


# ---------------------------------------------------------------------------- id types


@pytest.mark.parametrize("version", ALL)
@pytest.mark.parametrize("bad", BAD_IDS, ids=repr)
def test_we_never_send_a_bad_request_id(version: str, bad: Any) -> None:
    pair = _pair(version)
    for side in _sides(version):
        _refused(pair.conn(side), Request(id=bad, method=_method(side, version)))


@pytest.mark.parametrize("version", ALL)
@pytest.mark.parametrize("bad", BAD_IDS, ids=repr)
def test_a_bad_request_id_from_the_peer_is_invalid(version: str, bad: Any) -> None:
    pair = _pair(version)
    for side in _sides(version):
        receiver = pair.peer(side)
        event = feed(receiver, _raw_request(bad, _method(side, version), version))
        expect_invalid(event, INVALID, reply_id=None)
        assert receiver.owed == ()


@pytest.mark.parametrize("version", ALL)
@pytest.mark.parametrize("bad", [True, 1.5, [1]], ids=repr)
def test_we_never_answer_under_a_bad_id(version: str, bad: Any) -> None:
    pair = _pair(version)
    pair.request(Role.CLIENT, "tools/list")
    _refused(pair.server, Response(id=bad, result={}))
    _refused(pair.server, ErrorResponse(id=bad, code=-1, message="x"))


@pytest.mark.parametrize("version", ALL)
def test_an_error_with_null_id_is_allowed_both_ways(version: str) -> None:
    """The id of a request that could not be read: the error goes to ``null``."""
    pair = _pair(version)
    pair.send(Role.SERVER, ErrorResponse(id=None, code=-32700, message="Parse error"))
    if version != MODERN:
        pair.send(Role.CLIENT, ErrorResponse(id=None, code=-32700, message="Parse error"))


@pytest.mark.parametrize("version", ALL)
@pytest.mark.parametrize("bad", [1.5, True, [1]], ids=repr)
def test_a_response_with_a_bad_id_is_invalid(version: str, bad: Any) -> None:
    pair = _pair(version)
    pair.request(Role.CLIENT, "tools/list")
    expect_invalid(
        feed(pair.client, {"jsonrpc": "2.0", "id": bad, "result": {}}), INVALID, reply=False
    )
    assert pair.client.outstanding != ()


# ---------------------------------------------------------------------------- reuse


@pytest.mark.parametrize("version", LEGACY)
@pytest.mark.parametrize("side", list(Role))
@pytest.mark.parametrize("rid", [5, "five", -3, 2**40])
def test_initialize_era_never_reuses_an_id(version: str, side: Role, rid: Any) -> None:
    pair = _pair(version)
    method = _method(side, version)
    req = pair.request(side, method, id=rid)
    pair.respond(side.peer, req.id)
    err = _refused(pair.conn(side), Request(id=rid, method=method))
    assert "already used" in err.message


@pytest.mark.parametrize("version", LEGACY)
@pytest.mark.parametrize("side", list(Role))
@pytest.mark.parametrize("rid", [5, "five"])
def test_initialize_era_peer_reuse_is_caught(version: str, side: Role, rid: Any) -> None:
    pair = _pair(version)
    method = _method(side, version)
    req = pair.request(side, method, id=rid)
    pair.respond(side.peer, req.id)
    receiver = pair.peer(side)
    event = feed(receiver, _raw_request(rid, method, version))
    invalid = expect_invalid(event, INVALID, reply_id=rid)
    assert receiver.owed == ()
    # The reply goes out once (the request is answered by it) and only once.
    assert invalid.reply is not None
    receiver.send(invalid.reply)
    with pytest.raises(LocalProtocolError):
        receiver.send(invalid.reply)


@pytest.mark.parametrize("version", LEGACY)
def test_ids_of_the_handshake_are_used_too(version: str) -> None:
    pair = ConnectionPair()
    pair.handshake(version, request_id="init")
    _refused(pair.client, Request(id="init", method="ping"))
    expect_invalid(
        feed(pair.server, _raw_request("init", "ping", version)), INVALID, reply_id="init"
    )


@pytest.mark.parametrize("version", LEGACY)
def test_a_rejected_request_uses_its_id(version: str) -> None:
    pair = _pair(version)
    event = feed(pair.server, _raw_request(9, "prompts/list", version))  # no prompts capability
    expect_invalid(event, ErrorCode.METHOD_NOT_FOUND, reply_id=9)
    expect_invalid(feed(pair.server, _raw_request(9, "ping", version)), INVALID, reply_id=9)


def test_stateless_reuse_is_allowed_once_answered() -> None:
    pair = _pair(MODERN)
    for _ in range(3):
        req = pair.request(Role.CLIENT, "tools/list", id=1)
        pair.respond(Role.SERVER, req.id, {"tools": []})


def test_stateless_reuse_while_outstanding_is_caught_both_ways() -> None:
    pair = _pair(MODERN)
    pair.request(Role.CLIENT, "tools/list", id=1)
    err = _refused(pair.client, Request(id=1, method="tools/list"))
    assert "in flight" in err.message
    event = feed(pair.server, _raw_request(1, "tools/list", MODERN))
    # The reply must not look like the answer to the request in flight.
    expect_invalid(event, INVALID, reply_id=None)
    assert pair.server.owed == (1,)


@pytest.mark.parametrize("version", ALL)
def test_duplicate_in_flight_id_from_the_peer(version: str) -> None:
    pair = _pair(version)
    for side in _sides(version):
        method = _method(side, version)
        req = pair.request(side, method, id="dup")
        receiver = pair.peer(side)
        event = feed(receiver, _raw_request("dup", method, version))
        invalid = expect_invalid(event, INVALID, reply_id=None)
        assert "dup" in invalid.message
        assert invalid.reply is not None
        receiver.send(invalid.reply)
        # The original is still owed and is answered normally, once.
        assert receiver.owed == ("dup",)
        pair.respond(side.peer, req.id)
        assert not receiver.owed


@pytest.mark.parametrize("version", ALL)
def test_malformed_duplicate_does_not_answer_the_request_in_flight(version: str) -> None:
    pair = _pair(version)
    req = pair.request(Role.CLIENT, "tools/list", id=1)
    event = feed(pair.server, {"jsonrpc": "2.0", "id": 1, "method": 5})
    assert isinstance(event, InvalidMessage)
    if event.reply is not None:
        assert event.reply.id != 1
        pair.server.send(event.reply)
    assert pair.server.owed == (1,)
    pair.respond(Role.SERVER, req.id, {"tools": []})


@pytest.mark.parametrize("version", LEGACY)
def test_the_two_directions_have_their_own_ids(version: str) -> None:
    pair = _pair(version)
    a = pair.request(Role.CLIENT, "tools/list", id=7)
    b = pair.request(Role.SERVER, "ping", id=7)
    pair.respond(Role.CLIENT, b.id)
    pair.respond(Role.SERVER, a.id, {"tools": []})
    assert pair.client.outstanding == pair.server.outstanding == ()


# ---------------------------------------------------------------------------- correlation


@pytest.mark.parametrize("version", ALL)
def test_a_response_to_an_unknown_id_is_caught_both_ways(version: str) -> None:
    pair = _pair(version)
    for side in _sides(version):
        _refused(pair.peer(side), Response(id=404, result={}))
        _refused(pair.peer(side), ErrorResponse(id=404, code=-1, message="x"))
    for receiver in (pair.client, pair.server):
        before = snapshot(receiver)
        event = feed(receiver, {"jsonrpc": "2.0", "id": 404, "result": {}})
        invalid = expect_invalid(event, INVALID, reply=False)
        assert invalid.id == 404
        error = {"code": -1, "message": "x"}
        expect_invalid(
            feed(receiver, {"jsonrpc": "2.0", "id": 404, "error": error}), INVALID, reply=False
        )
        assert snapshot(receiver) == before


@pytest.mark.parametrize("version", ALL)
def test_each_request_is_answered_exactly_once(version: str) -> None:
    pair = _pair(version)
    for side in _sides(version):
        req = pair.request(side, _method(side, version))
        answerer = pair.peer(side)
        pair.respond(side.peer, req.id)
        _refused(answerer, Response(id=req.id, result={}))
        _refused(answerer, ErrorResponse(id=req.id, code=-1, message="again"))
        # The peer answering twice is caught on the other side.
        asker = pair.conn(side)
        event = feed(asker, {"jsonrpc": "2.0", "id": req.id, "result": {}})
        expect_invalid(event, INVALID, reply=False)


@pytest.mark.parametrize("version", ALL)
def test_an_error_answers_the_request(version: str) -> None:
    pair = _pair(version)
    req = pair.request(Role.CLIENT, "tools/list")
    pair.send(Role.SERVER, ErrorResponse(id=req.id, code=-32603, message="boom"))
    assert pair.client.outstanding == pair.server.owed == ()
    _refused(pair.server, Response(id=req.id, result={}))


@pytest.mark.parametrize("version", ALL)
def test_string_and_integer_ids_are_different(version: str) -> None:
    pair = _pair(version)
    one = pair.request(Role.CLIENT, "tools/list", id=1)
    pair.request(Role.CLIENT, "tools/list", id="1")
    assert pair.client.outstanding == (1, "1")
    assert pair.server.owed == (1, "1")
    event = pair.send(Role.SERVER, Response(id="1", result={"tools": []}))
    assert isinstance(event, Response)
    assert type(event.id) is str
    assert list(pair.client.outstanding) == [1]
    assert [type(i) for i in pair.server.owed] == [int]
    _refused(pair.server, Response(id="1", result={}))
    pair.respond(Role.SERVER, one.id, {"tools": []})


@pytest.mark.parametrize("version", LEGACY)
def test_string_id_reuse_does_not_block_the_integer(version: str) -> None:
    pair = _pair(version)
    req = pair.request(Role.CLIENT, "tools/list", id="100")
    pair.respond(Role.SERVER, req.id, {"tools": []})
    pair.request(Role.CLIENT, "tools/list", id=100)


@pytest.mark.parametrize("version", ALL)
def test_a_malformed_answer_ends_our_request(version: str) -> None:
    """Current behaviour: a response to our request whose envelope is bad (result not an
    object) is reported (no reply) and the request is over."""
    pair = _pair(version)
    req = pair.request(Role.CLIENT, "tools/list")
    event = feed(pair.client, {"jsonrpc": "2.0", "id": req.id, "result": 5})
    invalid = expect_invalid(event, INVALID, reply=False)
    assert invalid.id == req.id
    assert pair.client.outstanding == ()


@pytest.mark.parametrize("version", ALL)
def test_an_error_with_null_id_is_delivered(version: str) -> None:
    pair = _pair(version)
    pair.request(Role.CLIENT, "tools/list")
    error = {"code": -32700, "message": "Parse error"}
    event = feed(pair.client, {"jsonrpc": "2.0", "id": None, "error": error})
    assert event == ErrorResponse(id=None, code=-32700, message="Parse error")
    assert pair.client.outstanding != ()


@pytest.mark.parametrize("version", ALL)
def test_too_many_requests_in_flight(version: str) -> None:
    pair = _pair(version, max_in_flight=2)
    pair.request(Role.CLIENT, "tools/list", id="a")
    pair.request(Role.CLIENT, "tools/list", id="b")
    event = feed(pair.server, _raw_request("c", "tools/list", version))
    invalid = expect_invalid(event, INVALID, reply_id="c")
    assert pair.server.owed == ("a", "b")
    assert invalid.reply is not None
    pair.server.send(invalid.reply)
    pair.respond(Role.SERVER, "a", {"tools": []})
    pair.request(Role.CLIENT, "tools/list", id="d")


@pytest.mark.parametrize("version", LEGACY)
def test_forgetting_ids_past_the_bound(version: str) -> None:
    """Documented: past ``id_memory`` non-sequential ids, the oldest is forgotten and its
    reuse is no longer detected; the newer ones still are."""
    pair = _pair(version, id_memory=2)
    for rid in ("a", "b", "c"):
        req = pair.request(Role.CLIENT, "tools/list", id=rid)
        pair.respond(Role.SERVER, req.id, {"tools": []})
    assert isinstance(feed(pair.server, _raw_request("a", "tools/list", version)), Request)
    expect_invalid(feed(pair.server, _raw_request("c", "tools/list", version)), INVALID)
    # Sequential integer ids are never forgotten.
    for _ in range(5):
        pair.roundtrip(Role.SERVER, "ping")
    _refused(pair.server, Request(id=0, method="ping"))


@pytest.mark.parametrize("version", ALL)
def test_next_request_id_never_collides(version: str) -> None:
    pair = _pair(version)
    seen = set()
    for _ in range(20):
        req = pair.request(Role.CLIENT, "tools/list")
        assert req.id not in seen
        seen.add(req.id)
        pair.respond(Role.SERVER, req.id, {"tools": []})
    assert pair.client.next_event() is NEED_DATA


@pytest.mark.parametrize("version", ALL)
def test_malformed_request_under_a_used_or_fresh_id(version: str) -> None:
    """A request whose envelope is broken but whose id could be read is answered under that
    id (once); in the initialize era the id counts as used."""
    pair = _pair(version)
    req = pair.request(Role.CLIENT, "tools/list", id="used")
    pair.respond(Role.SERVER, req.id, {"tools": []})
    for rid in ("used", "fresh"):
        event = feed(pair.server, {"jsonrpc": "2.0", "id": rid, "method": 7})
        invalid = expect_invalid(event, INVALID, reply_id=rid)
        assert invalid.reply is not None
        pair.server.send(invalid.reply)
        _refused(pair.server, invalid.reply)
    if version != MODERN:
        expect_invalid(feed(pair.server, _raw_request("fresh", "tools/list", version)), INVALID)


@pytest.mark.parametrize("version", ALL)
def test_malformed_response_to_an_unknown_id(version: str) -> None:
    pair = _pair(version)
    req = pair.request(Role.CLIENT, "tools/list")
    before = snapshot(pair.client)
    event = feed(pair.client, {"jsonrpc": "2.0", "id": "nobody", "result": 5})
    expect_invalid(event, INVALID, reply=False)
    assert snapshot(pair.client) == before
    assert pair.client.outstanding == (req.id,)


@pytest.mark.parametrize("version", LEGACY)
def test_owed_errors_are_bounded(version: str) -> None:
    """Current behaviour: the replies owed for refused requests are remembered up to
    ``max_in_flight``; past it, the oldest can no longer be sent (LocalProtocolError)."""
    pair = _pair(version, max_in_flight=2)
    replies = []
    for rid in ("r1", "r2", "r3"):
        event = feed(pair.server, _raw_request(rid, "prompts/list", version))  # not declared
        invalid = expect_invalid(event, ErrorCode.METHOD_NOT_FOUND, reply_id=rid)
        replies.append(invalid.reply)
    assert replies[0] is not None
    _refused(pair.server, replies[0])
    for reply in replies[1:]:
        assert reply is not None
        pair.server.send(reply)


# ------------------------------------------------ bounds in bytes on ids (issue 16, class 1)

MIB = 1 << 20
LATEST_LEGACY = "2025-11-25"


def _long_id(i: int) -> str:
    return f"{i:07d}" + "x" * MIB


def _growth(pair: ConnectionPair, step: Any, n: int = 400) -> int:
    """What ``n`` calls of ``step(pair, i)`` leave allocated, in bytes (tracemalloc)."""
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        for i in range(n):
            step(pair, i)
        return tracemalloc.get_traced_memory()[0] - base
    finally:
        tracemalloc.stop()


def _answered_ping(pair: ConnectionPair, i: int) -> None:
    event = feed(pair.server, {"jsonrpc": "2.0", "id": _long_id(i), "method": "ping"})
    assert isinstance(event, Request), event
    pair.server.send(Response(id=event.id, result={}))


def test_400_answered_pings_with_1_mib_ids_keep_the_id_history_bound_in_bytes() -> None:
    """The id history remembers at most ``id_memory_bytes`` (4 MiB) of ids outside the
    run: 400 answered pings with 1 MiB string ids left +401 MiB behind before, +4 MiB now.
    A reused id among the forgotten is no longer caught (documented); among the
    remembered it is."""
    pair = _pair(LATEST_LEGACY)
    grown = _growth(pair, _answered_ping)
    assert grown < 8 * MIB, grown
    event = feed(pair.server, {"jsonrpc": "2.0", "id": _long_id(399), "method": "ping"})
    expect_invalid(event, INVALID, reply_id=_long_id(399))


def _cancelled_call(pair: ConnectionPair, i: int) -> None:
    rid = _long_id(i)
    call = {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": {"name": "t"}}
    assert isinstance(feed(pair.server, call), Request)
    cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": rid}}
    assert feed(pair.server, cancel) is not NEED_DATA  # the cancel, never answered (as sessions do)


def test_400_cancelled_calls_with_1_mib_ids_stay_bounded_in_bytes() -> None:
    """The peer's cancelled requests are remembered (their late answer is dropped) within
    ``id_memory_bytes`` too: +802 MiB before (the history and the cancelled ids), +8 MiB now.
    The newest cancelled id is still known: its late answer is dropped."""
    pair = _pair(LATEST_LEGACY)
    grown = _growth(pair, _cancelled_call)
    assert grown < 16 * MIB, grown
    assert pair.server.send(Response(id=_long_id(399), result={})) == b""
    with pytest.raises(LocalProtocolError):  # forgotten: it answers nothing we know of
        pair.server.send(Response(id=_long_id(0), result={}))


def test_owed_errors_are_bounded_in_bytes() -> None:
    """Refused requests whose error is not written yet: at most ``id_memory_bytes`` of their
    ids are kept; the newest can always be answered."""
    pair = _pair(LATEST_LEGACY, id_memory_bytes=3 * MIB)
    replies = []
    for i in range(5):
        event = feed(pair.server, _raw_request(_long_id(i), "prompts/list", LATEST_LEGACY))
        replies.append(expect_invalid(event, ErrorCode.METHOD_NOT_FOUND).reply)
    assert pair.server._s.theirs.owed.nbytes <= 3 * MIB
    assert replies[0] is not None
    assert replies[-1] is not None
    _refused(pair.server, replies[0])
    assert pair.server.send(replies[-1])


def test_id_memory_bytes_is_validated() -> None:
    with pytest.raises(ValueError, match="id_memory_bytes"):
        Connection(Role.SERVER, id_memory_bytes=0)


def test_owes_looks_up_one_request() -> None:
    server = Connection(Role.SERVER, versions=("2025-06-18",))
    init = {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "c", "version": "1"},
    }
    server.receive_data(
        b'{"jsonrpc":"2.0","id":"a","method":"initialize","params":' + orjson.dumps(init) + b"}\n"
    )
    assert isinstance(server.next_event(), Request)
    assert server.owes("a")
    assert not server.owes("b")
    assert not server.owes(1)
