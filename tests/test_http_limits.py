"""Documented limits are the enforced limits (issue 16, class 8): for each bound that
docs/http.rst and the docstrings of ``mcp_sansio.http`` promise, exactly the limit is
accepted and one more is refused with the documented answer.

The bounds: the request body (``max_body_size``, 413), the request head (64 KiB, 431), the
response head on the client (64 KiB), the client's JSON body and SSE event
(``max_body_size``), the replay buffer (``replay_size`` events), the sessions
(``max_sessions``: eviction of an idle one, 503 when none is idle) and the idle timeout
(counted from the last byte). The pipelining bound is in tests/test_h11server.py, the SSE
decoder's in tests/test_sse.py, the blocking server's ``max_connections`` in
tests/test_http_blocking.py and the pool's ``max_idle`` in tests/test_http_client.py.
"""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from test_http_server import Client, build

from mcp_sansio.http import HttpServer

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
    refused = Client(core).send(
        body={
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            },
        }
    )
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
