"""The h11 glue of the HTTP server (:class:`mcp_sansio.http._h11server.H11Server`): what a
client sends while its request is being answered is bounded."""

from __future__ import annotations

import orjson

from mcp_sansio.example import build_server
from mcp_sansio.http import Deliver, HttpServer
from mcp_sansio.http._h11server import H11Server

V2026 = "2026-07-28"


def _post(rid: int) -> bytes:
    body = orjson.dumps(
        {
            "jsonrpc": "2.0",
            "id": rid,
            "method": "tools/call",
            "params": {
                "name": "echo",
                "arguments": {"message": "hi"},
                "_meta": {
                    "io.modelcontextprotocol/protocolVersion": V2026,
                    "io.modelcontextprotocol/clientCapabilities": {},
                },
            },
        }
    )
    head = (
        "POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\n"
        "accept: application/json, text/event-stream\r\ncontent-type: application/json\r\n"
        f"mcp-protocol-version: {V2026}\r\nmcp-method: tools/call\r\nmcp-name: echo\r\n"
        f"content-length: {len(body)}\r\n\r\n"
    )
    return head.encode() + body


def _in_flight(max_body_size: int) -> H11Server:
    """A connection whose first request has been read and handed to a session that has not
    answered yet (the Deliver is not run)."""
    glue = H11Server(HttpServer(build_server(), max_body_size=max_body_size))
    work = glue.receive_data(_post(1))
    assert any(isinstance(w, Deliver) for w in work)
    assert glue.waiting
    assert not glue.needs_body
    return glue


def test_pipelined_bytes_are_held_up_to_the_bound() -> None:
    glue = _in_flight(4096)
    assert glue.max_held == 4096 + 64 * 1024
    second = _post(2)
    sent = 0
    while sent + len(second) <= glue.max_held:
        assert glue.receive_data(second) == []  # held: the first response is not over
        sent += len(second)
    assert not glue.closed


def test_a_client_that_sends_past_the_bound_is_dropped() -> None:
    glue = _in_flight(4096)
    glue.receive_data(b"x" * glue.max_held)
    assert not glue.closed
    glue.receive_data(b"x")
    assert glue.closed
    assert glue.data_to_send() == b""
    assert glue.receive_data(b"more") == []  # nothing is buffered any more
