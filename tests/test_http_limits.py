"""Documented limits are the enforced limits (issue 16, class 8): for each bound that
docs/http.rst and the docstrings of ``mcp_sansio.http`` promise, exactly the limit is
accepted and one more is refused with the documented answer.

The bounds: the request body (``max_body_size``, 413), the request head (64 KiB, 431), the
response head on the client (64 KiB), the client's JSON body, error body and SSE event
(``max_body_size``), the replay buffer (``replay_size`` events), the sessions
(``max_sessions``: eviction of an idle one, 503 when none is idle) and the idle timeout
(counted from the last byte). The pipelining bound is in tests/test_h11server.py, the SSE
decoder's in tests/test_sse.py, the blocking server's ``max_connections`` in
tests/test_http_blocking.py and the pool's ``max_idle`` in tests/test_http_client.py.
"""

from __future__ import annotations

import asyncio
import socket
import time
from typing import Any

import h11
import orjson
import pytest
from helpers import initialize_request
from test_http_asgi import Call, body_messages, http_scope
from test_http_idle import STARTS, serving
from test_http_server import Client, build, modern

from mcp_sansio._sse import encode_event
from mcp_sansio.asgi import McpAsgiApp
from mcp_sansio.example import build_server
from mcp_sansio.http import Deliver, HttpServer
from mcp_sansio.http._client import HttpClientTransport, HttpRequest, ToSession
from mcp_sansio.http._h11client import MAX_HEAD_SIZE, H11Exchange
from mcp_sansio.http._h11server import H11Server

HEAD_LIMIT = 64 * 1024  # docs/http.rst: "A request head is limited to 64 KiB"
PING = {"jsonrpc": "2.0", "id": 1, "method": "ping"}


def padded(message: Any, size: int) -> bytes:
    """``message`` as JSON, padded with spaces to exactly ``size`` bytes."""
    raw = orjson.dumps(message)
    assert len(raw) <= size
    return raw + b" " * (size - len(raw))


# ---------------------------------------------------------------------- the request body


@pytest.mark.parametrize("announced", [True, False], ids=["content-length", "streamed"])
@pytest.mark.parametrize("extra", [0, 1])
def test_a_body_of_max_body_size_is_served_and_one_byte_more_is_413(
    announced: bool, extra: int
) -> None:
    client = Client(max_body_size=1000)
    client.initialize()
    raw = padded(PING, 1000 + extra)
    headers = {"content-length": str(len(raw))} if announced else {}
    reply = client.send(raw=raw, headers=headers, chunks=7)
    if extra:
        assert reply.status == 413
        assert "larger than 1000 bytes" in reply.json()["error"]["message"]
    else:
        assert reply.status == 200
        assert reply.json() == {"jsonrpc": "2.0", "id": 1, "result": {}}


@pytest.mark.parametrize("extra", [0, 1])
def test_the_h11_glue_and_the_asgi_app_hold_the_body_limit(extra: int) -> None:
    body, headers = modern("tools/list")
    raw = padded(body, 1000 + extra)
    head = {
        "host": "127.0.0.1",
        "accept": "application/json, text/event-stream",
        "content-type": "application/json",
        "content-length": str(len(raw)),
        **headers,
    }
    glue = H11Server(HttpServer(build_server(), max_body_size=1000))
    request = "POST /mcp HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in head.items())
    work = glue.receive_data(request.encode() + b"\r\n" + raw)
    if extra:
        assert work == []
        assert glue.data_to_send().startswith(b"HTTP/1.1 413 ")
    else:
        assert [type(w) for w in work] == [Deliver]

    async def asgi() -> int:
        app = McpAsgiApp(build_server(), keepalive=None, max_body_size=1000)
        del head["content-length"]  # streamed: counted as it comes
        call = Call(app, http_scope("POST", headers=head), body_messages(raw, 300))
        status = (await call.finished()).status
        await app.aclose()
        return status

    assert asyncio.run(asyncio.wait_for(asgi(), 10)) == (413 if extra else 200)


def test_the_sessions_read_every_body_max_body_size_allows() -> None:
    # Before: max_body_size=8 MiB let a 5 MiB body through to a session that read 4 MiB
    # lines at most, and the call got -32600 "larger than max_message_size".
    size = 5 * 1024 * 1024
    client = Client(max_body_size=size)
    client.initialize()
    text = "x" * (size - 200)
    call = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "echo", "arguments": {"m": text}},
    }
    reply = client.send(raw=padded(call, size))
    assert reply.status == 200
    assert reply.json()["result"]["content"][0]["text"] == text


def test_a_pretty_printed_body_at_the_limit_keeps_its_size() -> None:
    # The body reaches the session as one line of its own size (line breaks become
    # spaces), so it fits a session that reads lines of max_body_size bytes. Re-encoding
    # it would not: orjson writes 1e5 as 100000.0.
    client = Client(max_body_size=4096, max_message_size=4096)
    client.initialize()
    call = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "echo", "arguments": {"m": "hi"}},
    }
    raw = orjson.dumps(call)[:-2] + b',"pad":[\n' + b",\n".join([b"1e5"] * 700) + b"\n]}}"
    raw += b" " * (4096 - len(raw))
    assert len(raw) == 4096
    reply = client.send(raw=raw)
    assert reply.status == 200
    assert reply.json()["result"]["content"][0]["text"] == "hi"


# ---------------------------------------------------------------------- the request head


def request_head(size: int, target: str = "/nowhere") -> bytes:
    """A request head (request line, headers, blank line) of exactly ``size`` bytes."""
    start = f"GET {target} HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\nx-pad: ".encode()
    end = b"\r\n\r\n"
    head = start + b"a" * (size - len(start) - len(end)) + end
    assert len(head) == size
    return head


@pytest.mark.parametrize("piece", [None, 1000, 65536], ids=["whole", "1000-byte-reads", "64k"])
@pytest.mark.parametrize("extra", [0, 1])
def test_a_request_head_of_64_kib_is_read_and_one_byte_more_is_431(
    piece: int | None, extra: int
) -> None:
    glue = H11Server(HttpServer(build_server()))
    head = request_head(HEAD_LIMIT + extra)
    step = piece or len(head)
    for i in range(0, len(head), step):
        glue.receive_data(head[i : i + step])
    out = glue.data_to_send()
    if extra:
        assert out.startswith(b"HTTP/1.1 431 ")
        assert glue.closed
    else:
        assert out.startswith(b"HTTP/1.1 404 ")  # read: the path decides


@pytest.mark.parametrize("binding", list(STARTS))
@pytest.mark.parametrize("extra", [0, 1])
def test_each_binding_holds_the_head_limit(binding: str, extra: int) -> None:
    # Before: a head arriving whole was parsed whatever its size, so up to about 128 KiB
    # (h11 bounds only what it has not seen the end of, checked after each 64 KiB read).
    with (
        serving(binding) as port,
        socket.create_connection(("127.0.0.1", port), timeout=10) as sock,
    ):
        sock.sendall(request_head(HEAD_LIMIT + extra))
        out = b""
        while chunk := sock.recv(65536):
            out += chunk
    assert out.startswith(b"HTTP/1.1 431 " if extra else b"HTTP/1.1 404 ")


# ---------------------------------------------------------------------- the client


def _posted(t: HttpClientTransport) -> HttpRequest:
    body, _ = modern("tools/list")
    (request,) = [a for a in t.send(orjson.dumps(body) + b"\n") if isinstance(a, HttpRequest)]
    return request


def _delivered(actions: list[Any]) -> list[Any]:
    return [orjson.loads(a.data) for a in actions if isinstance(a, ToSession)]


@pytest.mark.parametrize("extra", [0, 1])
def test_the_client_takes_a_json_body_of_max_body_size_and_refuses_one_more(extra: int) -> None:
    t = HttpClientTransport(max_body_size=1000)
    request = _posted(t)
    answer = {"jsonrpc": "2.0", "id": 1, "result": {"tools": []}}
    t.response_started(request.stream, 200, [(b"content-type", b"application/json")])
    raw = padded(answer, 1000 + extra)
    actions = t.response_data(request.stream, raw[:500]) + t.response_data(
        request.stream, raw[500:]
    )
    actions += t.response_ended(request.stream)
    (message,) = _delivered(actions)
    if extra:
        assert "larger than 1000 bytes" in message["error"]["message"]
    else:
        assert message == answer


@pytest.mark.parametrize("extra", [0, 1])
def test_the_client_takes_an_event_of_max_body_size_and_refuses_one_more(extra: int) -> None:
    # An event's size: its field lines (names, colons, values), not line endings.
    t = HttpClientTransport(max_body_size=1000)
    request = _posted(t)
    answer = {"jsonrpc": "2.0", "id": 1, "result": {"tools": []}}
    t.response_started(request.stream, 200, [(b"content-type", b"text/event-stream")])
    data = padded(answer, 1000 + extra - len(b"id: e1") - len(b"data: "))
    event = encode_event(data, id="e1")
    assert event == b"id: e1\ndata: " + data + b"\n\n"
    actions = t.response_data(request.stream, event) + t.response_ended(request.stream)
    (message,) = _delivered(actions)
    if extra:
        assert "larger than 1000 bytes" in message["error"]["message"]
    else:
        assert message == answer


@pytest.mark.parametrize("extra", [0, 1])
def test_the_client_reads_an_error_body_of_max_body_size_and_not_one_more(extra: int) -> None:
    t = HttpClientTransport(max_body_size=1000)
    request = _posted(t)
    error = {"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "no such method"}}
    t.response_started(request.stream, 400, [(b"content-type", b"application/json")])
    actions = t.response_data(request.stream, padded(error, 1000 + extra))
    actions += t.response_ended(request.stream)
    (message,) = _delivered(actions)
    if extra:
        assert "an oversized body, not read" in message["error"]["message"]
    else:
        assert message == error


def response_head(size: int, body: bytes) -> bytes:
    """A response head of exactly ``size`` bytes, for ``body``."""
    start = (
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
        f"content-length: {len(body)}\r\nx-pad: "
    ).encode()
    end = b"\r\n\r\n"
    head = start + b"a" * (size - len(start) - len(end)) + end
    assert len(head) == size
    return head


@pytest.mark.parametrize("piece", [None, 1000], ids=["whole", "1000-byte-reads"])
@pytest.mark.parametrize("extra", [0, 1])
def test_the_client_reads_a_response_head_of_64_kib_and_refuses_one_more(
    piece: int | None, extra: int
) -> None:
    assert MAX_HEAD_SIZE == HEAD_LIMIT
    t = HttpClientTransport()
    request = _posted(t)
    exchange = H11Exchange(t, request, "x")
    exchange.start()
    answer = {"jsonrpc": "2.0", "id": 1, "result": {"tools": []}}
    body = orjson.dumps(answer)
    raw = response_head(HEAD_LIMIT + extra, body) + body
    step = piece or len(raw)
    actions: list[Any] = []
    for i in range(0, len(raw), step):
        actions += exchange.receive_data(raw[i : i + step])
    (message,) = _delivered(actions)
    assert exchange.finished
    if extra:
        assert "response head is larger than 65536 bytes" in message["error"]["message"]
    else:
        assert message == answer
        assert exchange.conn.their_state is h11.DONE


# ---------------------------------------------------------------------- the replay buffer


@pytest.mark.parametrize("replay_size", [4, 3])
def test_a_stream_of_replay_size_events_resumes_from_its_start(replay_size: int) -> None:
    client = Client(replay_size=replay_size)
    client.initialize()
    client.send(
        body={"jsonrpc": "2.0", "id": 9, "method": "logging/setLevel", "params": {"level": "debug"}}
    )
    reply = client.call(1, "progress", _meta={"progressToken": "tok"})
    priming, *events = reply.events()
    assert len(events) == 4  # progress, log, progress, answer
    accept = {"accept": "text/event-stream"}
    resumed = client.send("GET", headers={**accept, "last-event-id": priming.id})
    if replay_size == len(events):  # exactly the bound: all of them are kept
        assert resumed.status == 200
        assert len(resumed.messages()) == 4
    else:  # one more: the first fell out
        assert resumed.status == 400
        again = client.send("GET", headers={**accept, "last-event-id": events[0].id})
        assert len(again.messages()) == 3


# ---------------------------------------------------------------------- sessions


def test_max_sessions_live_at_once_and_one_more_ends_the_least_recently_used() -> None:
    core = HttpServer(build(), max_sessions=3)
    clients = [Client(core) for _ in range(3)]
    for client in clients:
        client.initialize()
    assert len(core.sessions) == 3  # exactly the bound: none ended
    assert all(not c.driver.terminated for c in clients)
    newcomer = Client(core)
    newcomer.initialize()
    assert len(core.sessions) == 3
    assert clients[0].session_id not in core.sessions
    assert clients[0].send(body=PING).status == 404


def test_when_every_session_has_an_open_stream_a_new_one_gets_503() -> None:
    # Before: the new session was added anyway, past max_sessions (a client holding a GET
    # stream per session could open sessions without end).
    core = HttpServer(build(), max_sessions=2)
    clients = [Client(core) for _ in range(2)]
    streams = []
    for client in clients:
        client.initialize()
        streams.append(client.send("GET", headers={"accept": "text/event-stream"}))
    assert all(not s.ended for s in streams)
    refused = Client(core).send(body=initialize_request())
    assert refused.status == 503
    assert refused.header("retry-after") == "1"
    assert refused.header("mcp-session-id") is None
    assert refused.json()["error"]["code"] == -32000
    assert refused.json()["id"] == 0
    assert len(core.sessions) == 2
    # A stream closes: its session is idle, and gives way to the next one.
    core.disconnected(streams[0].ex)
    Client(core).initialize()
    assert len(core.sessions) == 2
    assert clients[0].session_id not in core.sessions


# ---------------------------------------------------------------------- idle connections


@pytest.mark.parametrize("binding", list(STARTS))
def test_the_idle_timeout_counts_from_the_last_byte(binding: str) -> None:
    # docs/http.rst: closed "after idle_timeout seconds without a byte": a request sent
    # slowly, a byte each half timeout, is served however long it takes.
    idle = 0.3
    request = request_head(200)
    with (
        serving(binding, idle_timeout=idle) as port,
        socket.create_connection(("127.0.0.1", port), timeout=10) as sock,
    ):
        start = time.monotonic()
        for i, piece in enumerate((request[:50], request[50:100], request[100:150])):
            sock.sendall(piece)
            time.sleep(idle / 2 if i < 2 else idle * 0.6)
        sock.sendall(request[150:])
        assert time.monotonic() - start > idle * 1.5
        assert sock.recv(100).startswith(b"HTTP/1.1 404 ")
