"""Ping (MCP 2025-11-25, Base Protocol > Utilities > Ping), closing and half-close, and what
reaches the Connection through the line framing: split bytes, bad JSON, a truncated last
message, an oversized line and the recovery after it."""

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
    initialize_result,
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
    InvalidMessage,
    LocalProtocolError,
    Notification,
    Request,
    Response,
    Role,
    State,
)

INVALID = ErrorCode.INVALID_REQUEST
PARSE = ErrorCode.PARSE_ERROR
CAPS: dict[str, Any] = {"tools": {"listChanged": True}, "logging": {}}


def _pair(version: str, **common: Any) -> ConnectionPair:
    if version == MODERN:
        return stateless_pair(server_capabilities=CAPS, **common)
    return legacy_pair(version, server_capabilities=CAPS, **common)


def _refused(conn: Connection, event: Any) -> LocalProtocolError:
    before = snapshot(conn)
    with pytest.raises(LocalProtocolError) as info:
        conn.send(event)
    assert snapshot(conn) == before
    return info.value


# ---------------------------------------------------------------------------- ping


@pytest.mark.parametrize("version", LEGACY)
def test_ping_both_ways_in_every_state(version: str) -> None:
    pair = ConnectionPair()
    pair.roundtrip(Role.CLIENT, "ping")
    pair.roundtrip(Role.SERVER, "ping")
    pair.send(Role.CLIENT, Request(id="i", method="initialize", params=initialize_params(version)))
    assert pair.states() == (State.INITIALIZING, State.INITIALIZING)
    pair.roundtrip(Role.CLIENT, "ping")
    pair.roundtrip(Role.SERVER, "ping")
    pair.send(Role.SERVER, Response(id="i", result=initialize_result(version)))
    assert pair.states() == (State.INITIALIZED, State.INITIALIZED)
    pair.roundtrip(Role.CLIENT, "ping")
    pair.roundtrip(Role.SERVER, "ping")
    pair.send(Role.CLIENT, Notification(method="notifications/initialized"))
    pair.roundtrip(Role.CLIENT, "ping")
    pair.roundtrip(Role.SERVER, "ping")


@pytest.mark.parametrize("version", LEGACY)
def test_a_ping_may_be_answered_with_an_error(version: str) -> None:
    pair = _pair(version)
    req = pair.request(Role.SERVER, "ping")
    pair.send(Role.CLIENT, ErrorResponse(id=req.id, code=-32603, message="busy"))


def test_no_ping_in_2026() -> None:
    pair = _pair(MODERN)
    _refused(pair.client, Request(id=1, method="ping"))
    _refused(pair.server, Request(id=1, method="ping"))


# ---------------------------------------------------------------------------- closing


@pytest.mark.parametrize("version", ALL)
def test_close_reports_our_unanswered_requests(version: str) -> None:
    pair = _pair(version)
    a = pair.request(Role.CLIENT, "tools/list", id="a")
    b = pair.request(Role.CLIENT, "tools/list", id=2)
    c = pair.request(Role.CLIENT, "tools/list", id="c")
    pair.respond(Role.SERVER, b.id, {"tools": []})
    pair.client.receive_data(b"")
    assert pair.client.peer_closed
    closed = pair.client.next_event()
    assert closed == ConnectionClosed(unanswered=(a.id, c.id))
    # It stays closed.
    assert pair.client.next_event() == closed
    pair.client.receive_data(b"")
    assert pair.client.next_event() == closed


@pytest.mark.parametrize("role", list(Role))
def test_close_before_anything(role: Role) -> None:
    conn = Connection(role)
    conn.receive_data(b"")
    assert conn.next_event() == ConnectionClosed(unanswered=())
    assert conn.state is State.IDLE


@pytest.mark.parametrize("version", ALL)
def test_bytes_after_close_are_a_local_error(version: str) -> None:
    pair = _pair(version)
    pair.server.receive_data(b"")
    with pytest.raises(LocalProtocolError):
        pair.server.receive_data(b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}\n')


@pytest.mark.parametrize("version", ALL)
def test_messages_before_eof_still_come_out(version: str) -> None:
    pair = _pair(version)
    data = pair.client.send(Request(id="x", method="tools/list"))
    pair.server.receive_data(data + data.replace(b'"x"', b'"y"'))
    pair.server.receive_data(b"")
    events = [pair.server.next_event() for _ in range(3)]
    assert [type(e) for e in events] == [Request, Request, ConnectionClosed]
    assert pair.server.owed == ("x", "y")


@pytest.mark.parametrize("version", ALL)
def test_half_close_answers_still_go_out(version: str) -> None:
    pair = _pair(version)
    req = pair.request(Role.CLIENT, "tools/list", {"_meta": {"progressToken": "p"}})
    pair.server.receive_data(b"")
    assert pair.server.next_event() == ConnectionClosed(unanswered=())
    # Progress and the answer still go out; the owed request is answered once.
    data = pair.server.send(
        Notification(method="notifications/progress", params={"progressToken": "p", "progress": 1})
    )
    assert data
    assert pair.server.send(Response(id=req.id, result={"tools": []}))
    assert pair.server.owed == ()
    _refused(pair.server, Response(id=req.id, result={"tools": []}))


@pytest.mark.parametrize("version", ALL)
def test_no_new_requests_after_close(version: str) -> None:
    pair = _pair(version)
    for conn in (pair.client, pair.server):
        conn.receive_data(b"")
        assert isinstance(conn.next_event(), ConnectionClosed)
    err = _refused(pair.client, Request(id="late", method="tools/list"))
    assert "closed" in err.message
    if version != MODERN:
        _refused(pair.server, Request(id="late", method="ping"))


@pytest.mark.parametrize("version", LEGACY)
def test_notifications_after_close(version: str) -> None:
    """Current behaviour: after the peer closed, only progress and log messages (which
    belong to answers in preparation) and cancels go out."""
    pair = _pair(version)
    req = pair.request(Role.CLIENT, "tools/list")
    pair.server.receive_data(b"")
    pair.server.next_event()
    _refused(pair.server, Notification(method="notifications/tools/list_changed"))
    pair.server.send(
        Notification(method="notifications/message", params={"level": "info", "data": 1})
    )
    pair.client.receive_data(b"")
    pair.client.next_event()
    # The client may still cancel its request (the server may never read it).
    pair.client.send(Notification(method="notifications/cancelled", params={"requestId": req.id}))


@pytest.mark.parametrize("version", ALL)
def test_a_truncated_last_message_is_reported(version: str) -> None:
    pair = _pair(version)
    data = pair.client.send(Request(id="t", method="tools/list"))
    pair.server.receive_data(data[: len(data) // 2])
    assert pair.server.next_event() is NEED_DATA
    pair.server.receive_data(b"")
    expect_invalid(pair.server.next_event(), PARSE, reply=False)
    assert pair.server.next_event() == ConnectionClosed(unanswered=())
    assert pair.server.next_event() == ConnectionClosed(unanswered=())


@pytest.mark.parametrize("tail", [b"", b"\n", b"  \r\n  ", b"\n\n"])
def test_whitespace_at_eof_is_not_a_truncated_message(tail: bytes) -> None:
    conn = Connection(Role.SERVER)
    conn.receive_data(tail)
    conn.receive_data(b"")
    assert conn.next_event() == ConnectionClosed(unanswered=())


# ---------------------------------------------------------------------------- framing


@pytest.mark.parametrize("version", ALL)
def test_bytes_split_anywhere(version: str) -> None:
    pair = _pair(version)
    data = pair.client.send(Request(id="split", method="tools/call", params={"name": "ü€𝄞"}))
    data += pair.client.send(Request(id="two", method="tools/list"))
    ids = []
    for i in range(len(data)):
        pair.server.receive_data(data[i : i + 1])
        while (event := pair.server.next_event()) is not NEED_DATA:
            assert isinstance(event, Request)
            ids.append(event.id)
    assert ids == ["split", "two"]


def test_crlf_is_tolerated() -> None:
    conn = Connection(Role.SERVER)
    event = feed(conn, b'{"jsonrpc":"2.0","id":1,"method":"ping"}\r\n')
    assert event == Request(id=1, method="ping")


@pytest.mark.parametrize(
    "line",
    [b"{", b"not json", b'{"jsonrpc":"2.0","id":1,"method":"ping"', b"\xff\xfe", b'"\xc3\x28"'],
)
def test_bad_json_is_a_parse_error(line: bytes) -> None:
    conn = Connection(Role.SERVER)
    invalid = expect_invalid(feed(conn, line), PARSE, reply_id=None)
    assert invalid.reply is not None
    assert conn.send(invalid.reply).startswith(b'{"jsonrpc":"2.0","id":null,"error":{"code":-32700')
    # Nothing else changed: the connection goes on.
    assert feed(conn, b'{"jsonrpc":"2.0","id":1,"method":"ping"}') == Request(id=1, method="ping")


@pytest.mark.parametrize("version", ALL)
def test_an_oversized_line_and_recovery(version: str) -> None:
    pair = _pair(version, max_message_size=400)
    big = pair.client.send(Request(id="big", method="tools/call", params={"name": "x" * 2000}))
    small = pair.client.send(Request(id="small", method="tools/list"))
    # Fed in pieces: the big line is dropped without being buffered whole.
    for i in range(0, len(big), 64):
        pair.server.receive_data(big[i : i + 64])
    pair.server.receive_data(small)
    first = pair.server.next_event()
    # Its id is read from what is kept of its head: the refusal goes to it.
    invalid = expect_invalid(first, INVALID, reply_id="big")
    assert invalid.message == (
        f"Invalid request: {len(big) - 1} bytes, larger than max_message_size (400 bytes); dropped"
    )
    second = pair.server.next_event()
    assert isinstance(second, Request)
    assert second.id == "small"
    assert invalid.reply is not None
    pair.server.send(invalid.reply)
    assert pair.server.owed == ("small",)


def _over(conn: Connection, *parts: bytes) -> InvalidMessage:
    conn.receive_data(b"".join(parts) + b"\n")
    event = conn.next_event()
    assert isinstance(event, InvalidMessage), event
    assert conn.next_event() is NEED_DATA
    return event


@pytest.mark.parametrize("version", ALL)
@pytest.mark.parametrize("id_last", [False, True])
def test_an_oversized_answer_ends_our_request_and_is_not_answered(
    version: str, id_last: bool
) -> None:
    """The Python SDK writes ``{"jsonrpc", "id", "result"}``, the TypeScript SDK
    ``{"result", "jsonrpc", "id"}``: either way the id is read from the kept ends, the
    request is over at once (no waiting for a timeout), and nothing is sent back."""
    pair = _pair(version, max_message_size=1000)
    pair.client.send(Request(id=5, method="tools/list"))
    pair.client.send(Request(id=6, method="tools/list"))
    assert pair.client.outstanding == (5, 6)
    body = b'{"tools":[' + b",".join([b'{"name":"t","inputSchema":{}}'] * 200) + b"]}"
    if id_last:
        line = b'{"result":' + body + b',"jsonrpc":"2.0","id":6}'
    else:
        line = b'{"jsonrpc":"2.0","id":6,"result":' + body + b"}"
    invalid = _over(pair.client, line)
    assert invalid.reply is None
    assert invalid.id == 6
    assert invalid.message == (
        f"Invalid response: {len(line)} bytes, larger than max_message_size (1000 bytes); dropped"
    )
    assert list(pair.client.outstanding) == [5]


@pytest.mark.parametrize(
    "line",
    [
        b"x" * 2000,
        b'{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"' + b"x" * 2000,
        b'{"jsonrpc":"2.0","id":[1],"method":"ping","params":{"x":"' + b"x" * 2000 + b'"}}',
        b'["' + b"x" * 2000 + b'"]',
    ],
)
def test_an_oversized_line_that_cannot_be_told_is_refused_to_null(line: bytes) -> None:
    conn = Connection(Role.SERVER, max_message_size=1000)
    invalid = _over(conn, line)
    expect_invalid(invalid, INVALID, reply_id=None)
    assert invalid.id is None
    assert invalid.raw == line[:1024]


def test_an_oversized_answer_with_an_unreadable_id_is_not_answered() -> None:
    conn = Connection(Role.CLIENT, max_message_size=1000)
    invalid = _over(conn, b'{"jsonrpc":"2.0","id":1.5,"result":{"x":"', b"x" * 2000, b'"}}')
    assert (invalid.reply, invalid.id) == (None, None)


def test_a_line_at_the_limit_is_accepted() -> None:
    line = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'
    conn = Connection(Role.SERVER, max_message_size=len(line))
    assert feed(conn, line) == Request(id=1, method="ping")
    conn = Connection(Role.SERVER, max_message_size=len(line) - 1)
    assert isinstance(feed(conn, line), InvalidMessage)
