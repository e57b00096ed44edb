"""A peer that floods the session with unreadable messages: each is answered as JSON-RPC 2.0
says ("If there was an error in detecting the id in the Request object (e.g. Parse
error/Invalid Request), it MUST be Null"), until ``max_unreadable`` of them in a row, when the
session closes as broken with one clear error."""

from __future__ import annotations

import orjson
import pytest
from helpers import sent

from mcp_sansio.example import build_server
from mcp_sansio.session import (
    DEFAULT_MAX_UNREADABLE,
    CallFinished,
    ClientSession,
    Closed,
    ConnectionLost,
    ServerSession,
)

HELLO = {
    "protocolVersion": "2025-11-25",
    "capabilities": {},
    "clientInfo": {"name": "t", "version": "0"},
}


def opened_server(**options: object) -> ServerSession:
    session = ServerSession(build_server(), **options)  # type: ignore[arg-type]
    request = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": HELLO}
    session.receive_data(orjson.dumps(request) + b"\n", 0.0)
    session.receive_data(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n', 0.0)
    return session


def test_the_default_bound() -> None:
    assert DEFAULT_MAX_UNREADABLE == 256
    assert ClientSession().max_unreadable == DEFAULT_MAX_UNREADABLE


def test_each_unreadable_line_is_answered_until_the_bound() -> None:
    session = ClientSession(versions=["2025-11-25"], max_unreadable=5)
    session.open(0.0)
    call = session.opening
    assert call is not None
    actions = session.receive_data(b"y\n" * 4, 0.0)
    replies = sent(actions)
    assert [r["error"]["code"] for r in replies] == [-32700] * 4
    assert all(r["id"] is None for r in replies)
    assert not session.closed
    actions = session.receive_data(b"y\n" + b"y\n" * 1000, 0.0)
    assert sent(actions) == []  # the fifth is not answered: the session is over
    assert session.closed
    (finished,) = [a for a in actions if isinstance(a, CallFinished)]
    assert finished.call is call
    assert isinstance(call.error, ConnectionLost)
    assert call.error.message == (
        "the server sent 5 unreadable messages in a row (the last: 'y': Parse error:"
        " unexpected character, expected a JSON value: line 1 column 1 (char 0)); the"
        " connection is closed as broken"
    )
    assert isinstance(actions[-1], Closed)
    assert session.receive_data(b"y\n" * 10, 0.0) == []  # nothing more, ever


def test_json_that_is_no_json_rpc_message_counts_too() -> None:
    session = opened_server(max_unreadable=3)
    actions = session.receive_data(b'1\n{}\n"text"\n', 0.0)
    assert session.closed
    assert [r["error"]["code"] for r in sent(actions)] == [-32600, -32600]
    assert isinstance(actions[-1], Closed)


def test_a_readable_message_in_between_starts_the_count_again() -> None:
    session = opened_server(max_unreadable=3)
    ping = b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n'
    for _ in range(20):
        session.receive_data(b"garbage\ngarbage\n" + ping, 0.0)
    assert not session.closed
    # A malformed request with an id is readable enough to answer to its id: not counted.
    bad = b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":5}}\n'
    actions = session.receive_data(b"garbage\ngarbage\n" + bad + b"garbage\n", 0.0)
    assert not session.closed
    assert [r["id"] for r in sent(actions)] == [None, None, 7, None]
    actions = session.receive_data(b"garbage\ngarbage\n", 0.0)
    assert session.closed
    assert [r["id"] for r in sent(actions)] == [None]
    assert isinstance(actions[-1], Closed)


def test_a_server_names_the_client() -> None:
    session = opened_server(max_unreadable=1)
    ping, _ = session.call("ping", now=0.0)
    actions = session.receive_data(b"\xff\xfe not utf-8\n", 0.0)
    assert session.closed
    assert [a.call for a in actions if isinstance(a, CallFinished)] == [ping]
    assert isinstance(ping.error, ConnectionLost)
    assert ping.error.message.startswith(
        "the client sent 1 unreadable message in a row (the last: '\ufffd\ufffd not utf-8':"
    )


def test_the_bound_is_at_least_one() -> None:
    with pytest.raises(ValueError, match="max_unreadable must be at least 1"):
        ClientSession(max_unreadable=0)
