"""A Streamable HTTP POST body is one JSON value, never a stream of lines (issue 16, class 5).

Transports, 2025-06-18 and 2025-11-25: "The body of the POST request MUST be a single
JSON-RPC request, notification, or response" (2025-03-26 also allows one batch array;
2026-07-28: a single request or notification). JSON allows line breaks between tokens, so a
pretty-printed body is as valid as a compact one: it is answered like it, on the sans-IO
server, through each ``serve_http`` binding and under ASGI. A body that is not one JSON-RPC
value gets one error answer (400, -32700 or -32600), and no session id is sent but on the
response that carries an ``InitializeResult``.
"""

from __future__ import annotations

import asyncio
import json
import socket
from typing import Any

import orjson
import pytest
from test_http_asgi import Call, body_messages, http_scope
from test_http_idle import STARTS, serving
from test_http_server import Client, build, modern

from mcp_sansio.asgi import McpAsgiApp
from mcp_sansio.example import build_server
from mcp_sansio.http import HttpServer
from mcp_sansio.http._client import HttpClientTransport, HttpRequest, ToSession

ACCEPT = "application/json, text/event-stream"


def initialize(version: str = "2025-11-25", rid: Any = 0, **extra: Any) -> dict[str, Any]:
    params = {
        "protocolVersion": version,
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
        **extra,
    }
    return {"jsonrpc": "2.0", "id": rid, "method": "initialize", "params": params}


def pretty(message: Any) -> bytes:
    """``message`` with a member per line, as a person (or ``json.dumps(indent=2)``) writes
    it."""
    return json.dumps(message, indent=2).encode()


def long_lines(n: int) -> bytes:
    """An ``initialize`` request spread over ``n`` short lines (a padding array of zeros,
    one per line)."""
    head = orjson.dumps(initialize())[:-2]  # without the closing "}}"
    return head + b',"pad":[\n' + b",\n".join([b"0"] * n) + b"\n]}}"


# ---------------------------------------------------------------------- answered as one value


@pytest.mark.parametrize("version", ["2025-03-26", "2025-11-25"])
def test_a_pretty_printed_initialize_and_call_are_answered(version: str) -> None:
    client = Client()
    reply = client.send(raw=pretty(initialize(version)))
    assert reply.status == 200
    assert reply.json()["result"]["protocolVersion"] == version
    client.session_id = reply.header("mcp-session-id")
    assert client.session_id is not None
    client.version = version
    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert client.send(raw=pretty(initialized)).status == 202
    call = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "echo", "arguments": {"m": "two\nlines"}},
    }
    reply = client.send(raw=pretty(call))
    assert reply.status == 200
    assert reply.json()["result"]["content"][0]["text"] == "two\nlines"


def test_a_pretty_printed_2026_request_is_answered() -> None:
    body, headers = modern("tools/call", name="echo", arguments={"m": "hi"})
    reply = Client().send(raw=pretty(body), headers=headers)
    assert reply.status == 200
    assert reply.json()["result"]["content"][0]["text"] == "hi"


def test_a_pretty_printed_batch_is_answered_in_2025_03_26() -> None:
    client = Client()
    client.initialize("2025-03-26")
    batch = [{"jsonrpc": "2.0", "id": i, "method": "ping"} for i in (1, 2)]
    reply = client.send(raw=pretty(batch))
    assert reply.status == 200
    assert reply.ended
    assert {m["id"]: m.get("result") for m in reply.messages()} == {1: {}, 2: {}}


@pytest.mark.parametrize(
    "layout",
    [
        lambda raw: raw.replace(b"\n", b"\r\n"),  # CRLF line ends
        lambda raw: raw.replace(b"  ", b"\t"),  # tabs
        lambda raw: b"\n\n  " + raw + b"\r\n\r\n",  # blank lines around it
        lambda raw: raw.replace(b"\n", b"\r"),  # bare CRs (JSON whitespace too)
    ],
    ids=["crlf", "tabs", "blank-lines-around", "bare-cr"],
)
def test_any_json_whitespace_is_one_message(layout: Any) -> None:
    reply = Client().send(raw=layout(pretty(initialize())))
    assert reply.status == 200
    assert reply.json()["result"]["protocolVersion"] == "2025-11-25"
    assert reply.header("mcp-session-id") is not None


def test_a_body_of_200000_lines_is_answered_once() -> None:
    # Before: a parse error per line and no answer (32.5 MB of errors for this 0.6 MB body,
    # then, once sessions closed after 256 unreadable lines, 41 KB and a broken session).
    client = Client()
    raw = long_lines(200_000)
    reply = client.send(raw=raw)
    assert reply.status == 200
    assert reply.json()["result"]["protocolVersion"] == "2025-11-25"
    assert len(reply.body) < 1000


@pytest.mark.parametrize("binding", list(STARTS))
def test_each_binding_answers_a_200000_line_body_once(binding: str) -> None:
    raw = long_lines(200_000)
    head = (
        "POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\n"
        f"accept: {ACCEPT}\r\ncontent-type: application/json\r\n"
        f"content-length: {len(raw)}\r\nconnection: close\r\n\r\n"
    ).encode()
    with (
        serving(binding) as port,
        socket.create_connection(("127.0.0.1", port), timeout=10) as sock,
    ):
        sock.sendall(head + raw)
        out = b""
        while chunk := sock.recv(65536):
            out += chunk
    status, _, body = out.partition(b"\r\n\r\n")
    assert status.startswith(b"HTTP/1.1 200 ")
    assert b"mcp-session-id" in status.lower()
    assert orjson.loads(body)["result"]["protocolVersion"] == "2025-11-25"
    assert len(out) < 2000  # was 32,489,476 bytes


def test_the_asgi_app_answers_a_pretty_printed_body() -> None:
    async def main() -> None:
        app = McpAsgiApp(build_server(), keepalive=None)
        headers = {"accept": ACCEPT, "content-type": "application/json"}
        for raw in (pretty(initialize()), long_lines(200_000)):
            call = Call(app, http_scope("POST", headers=headers), body_messages(raw, 4096))
            response = await call.finished()
            assert response.status == 200
            assert response.json()["result"]["protocolVersion"] == "2025-11-25"
            assert "mcp-session-id" in response.headers
        await app.aclose()

    asyncio.run(asyncio.wait_for(main(), 10))


# ---------------------------------------------------------------------- not one message


TWO_VALUES = b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n{"jsonrpc":"2.0","id":2,"method":"ping"}'


@pytest.mark.parametrize(
    ("raw", "code"),
    [
        (b"{not json", -32700),
        (TWO_VALUES, -32700),  # newline-delimited JSON: two values, not one
        (pretty(initialize()) + b"\n" + pretty(initialize(rid=1)), -32700),
        (b"{}\n" * 1000, -32700),
        (b"", -32700),
        (b"[]", -32600),
        (b"[\n1,\n2\n]", -32600),
    ],
    ids=["garbage", "ndjson", "two-pretty", "many-objects", "empty", "empty-batch", "numbers"],
)
def test_a_body_that_is_not_one_message_gets_one_400(raw: bytes, code: int) -> None:
    core = HttpServer(build())
    reply = Client(core).send(raw=raw)
    assert reply.status == 400
    assert reply.json()["error"]["code"] == code
    assert reply.json()["id"] is None
    assert reply.header("mcp-session-id") is None
    assert core.all_sessions() == []


def test_two_values_in_a_session_get_one_parse_error_and_the_session_lives_on() -> None:
    client = Client()
    client.initialize()
    reply = client.send(raw=TWO_VALUES)
    assert reply.status == 400
    assert reply.json()["error"]["code"] == -32700
    reply = client.send(body={"jsonrpc": "2.0", "id": 3, "method": "ping"})
    assert reply.json() == {"jsonrpc": "2.0", "id": 3, "result": {}}


@pytest.mark.parametrize("json_response", [None, False])
@pytest.mark.parametrize(
    "message",
    [
        {"jsonrpc": "2.0", "method": "initialize", "params": initialize()["params"]},
        [initialize("2025-03-26")],
        initialize(rid=True),
        {**initialize(), "params": "x"},
        {"jsonrpc": "2.0", "id": 0, "method": "initialize"},
        {**initialize(), "jsonrpc": "1.0"},
        {key: value for key, value in initialize().items() if key != "jsonrpc"},
    ],
    ids=[
        "a-notification",
        "in-a-batch",
        "a-boolean-id",
        "params-not-an-object",
        "no-params",
        "jsonrpc-1.0",
        "no-jsonrpc",
    ],
)
def test_no_session_id_for_an_initialize_that_fails(message: Any, json_response: Any) -> None:
    core = HttpServer(build(), json_response=json_response)
    reply = Client(core).send(raw=pretty(message))
    assert reply.ended
    assert reply.header("mcp-session-id") is None
    assert core.sessions == {}
    assert core.all_sessions() == []
    if reply.status == 400:  # refused before any session: one JSON-RPC error
        assert reply.json()["error"]["code"] == -32600
    else:  # the session's own answer to it: an error
        assert reply.status == 200
        answers = reply.messages() if reply.header("content-type") == "text/event-stream" else []
        (answer,) = answers or [reply.json()]
        assert "error" in answer


def test_a_failed_initialize_takes_no_session_slot() -> None:
    # Before: each failed initialize kept a session, so two of them evicted the idle one.
    core = HttpServer(build(), max_sessions=2)
    keeper = Client(core)
    keeper.initialize()
    for _ in range(3):
        Client(core).send(body={"jsonrpc": "2.0", "id": 0, "method": "initialize"})
    assert list(core.sessions) == [keeper.session_id]
    assert keeper.send(body={"jsonrpc": "2.0", "id": 9, "method": "ping"}).status == 200


# ---------------------------------------------------------------------- the client side


@pytest.mark.parametrize(
    "layout",
    [
        lambda raw: raw,
        lambda raw: raw.replace(b"\n", b"\r\n"),
        lambda raw: b"\r\n  " + raw.replace(b"\n", b"\r") + b"\n\n",
    ],
    ids=["lf", "crlf", "bare-cr-and-blank-lines"],
)
def test_the_client_reads_a_pretty_printed_json_answer_as_one_message(layout: Any) -> None:
    t = HttpClientTransport()
    body, _ = modern("tools/list")
    (request,) = [a for a in t.send(orjson.dumps(body) + b"\n") if isinstance(a, HttpRequest)]
    answer = {"jsonrpc": "2.0", "id": 1, "result": {"tools": [], "note": "a\nb"}}
    raw = layout(pretty(answer))
    t.response_started(request.stream, 200, [(b"content-type", b"application/json")])
    actions = []
    for i in range(0, len(raw), 5):
        actions += t.response_data(request.stream, raw[i : i + 5])
    actions += t.response_ended(request.stream)
    (delivered,) = [a.data for a in actions if isinstance(a, ToSession)]
    assert delivered.count(b"\n") == 1
    assert delivered.endswith(b"\n")
    assert orjson.loads(delivered) == answer
