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
from test_http_server import Client

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
