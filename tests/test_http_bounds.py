"""What a peer grows in the Streamable HTTP server and client is bounded in bytes, and what
each message costs does not grow with what was remembered (issue 16, classes 1 and 2). Each
test says what it found before the fix, with the figure before and after.

Memory is measured with tracemalloc (what is still held after a flood) or by counting what
is kept. Time is not measured but counted: the tables a message could walk are swapped for
ones that count their walks, so a test fails if any walk happens, whatever the machine's
load. Only the header join is timed, as a ratio of best-of-N runs of sizes ten times apart
with a generous factor (linear gives about 10, quadratic about 100), which noise on a
shared machine does not move by that much.
"""

from __future__ import annotations

import gc
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

import orjson
import pytest
from test_http_client import learn
from test_http_server import Client, modern

from mcp_sansio.http import ResponseHead
from mcp_sansio.http import _client as http_client
from mcp_sansio.http._client import HttpClientTransport
from mcp_sansio.http._headers import lower_headers
from mcp_sansio.http._server import HttpSession
from mcp_sansio.server import Server

MiB = 1024 * 1024
SSE = {"accept": "text/event-stream"}
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}


def grown(run: Callable[[], object]) -> float:
    """The memory (MiB) still held after ``run``, what it returns included."""
    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        kept = run()
        gc.collect()
        size = tracemalloc.get_traced_memory()[0] - base
    finally:
        tracemalloc.stop()
    del kept
    return size / MiB


def session(client: Client) -> HttpSession:
    assert client.session_id is not None
    return client.core.sessions[client.session_id]


# ---------------------------------------------------------------------- the tool cache


def test_tool_names_a_client_sends_are_not_cached() -> None:
    # Before: 400 refused tools/call with 256 KiB names unknown to the server left 400
    # entries and +100.0 MiB in HttpServer._param_headers; now none, +0.0 MiB.
    client = Client(versions=["2026-07-28"])

    def flood() -> None:
        for i in range(400):
            body, headers = modern("tools/call", rid=i, name=f"{i}" + "x" * 256 * 1024)
            assert client.send(body=body, headers=headers).json()["error"]["code"] == -32602

    assert grown(flood) < 8
    assert client.core._param_headers == {}


def test_the_cache_follows_the_registered_tools() -> None:
    client = Client(versions=["2026-07-28"])
    body, headers = modern("tools/call", name="later", arguments={"n": 1})
    assert client.send(body=body, headers=headers).json()["error"]["code"] == -32602  # unknown

    # A tool registered after a call named it has its headers checked (the old cache kept
    # the first answer for a name: no annotations).
    server: Server = client.core.server

    @server.tool(
        "later",
        input_schema={
            "type": "object",
            "properties": {"n": {"type": "integer", "x-mcp-header": "N"}},
        },
    )
    def later(ctx: Any, arguments: Any) -> str:
        return "ok"

    reply = client.send(body=body, headers=headers)
    assert reply.status == 400
    assert reply.json()["error"]["code"] == -32020
    assert client.send(body=body, headers={**headers, "mcp-param-n": "1"}).status == 200
    assert set(client.core._param_headers) == {"later"}


# ---------------------------------------------------------------------- bodies in flight


def test_a_request_in_flight_does_not_keep_its_body() -> None:
    # Before: each slow request's Exchange kept its body for as long as the request ran
    # (200 requests of 256 KiB: +100.8 MiB, the body twice); now once (+50.8 MiB).
    client = Client()
    client.initialize()

    def calls() -> list[Any]:
        replies = []
        for i in range(1, 201):
            body = {"jsonrpc": "2.0", "id": i, "method": "tools/call"}
            body["params"] = {"name": "slow", "arguments": {"pad": "x" * 256 * 1024}}
            replies.append(client.send(raw=bytes(bytearray(orjson.dumps(body)))))
        return replies

    assert grown(calls) < 70
    assert len(client.driver.kept) == 200


# ---------------------------------------------------------------------- hostile headers


@pytest.mark.parametrize("last", ["9" * 5000 + "_1", "1_" + "9" * 5000, "1_\xb2", "\xb2_1"])
def test_a_last_event_id_that_is_not_ours_is_400(last: str) -> None:
    # Before: 5,000 digits raised ValueError out of HttpServer.end (int() takes 4,300).
    client = Client()
    client.initialize()
    headers = [
        (b"host", b"127.0.0.1"),
        (b"accept", b"text/event-stream"),
        (b"mcp-session-id", client.session_id.encode()),  # type: ignore[union-attr]
        (b"last-event-id", last.encode("latin-1")),
    ]
    ex = client.core.begin("GET", "/mcp", headers)
    assert client.core.end(ex) == []
    head = ex.next_output()
    assert isinstance(head, ResponseHead)
    assert head.status == 400


@pytest.mark.parametrize(("length", "status"), [("9" * 5000, 413), ("0" * 5000 + "5", 400)])
def test_a_long_content_length_is_read_as_a_number(length: str, status: int) -> None:
    # Before: ValueError out of HttpServer.begin.
    client = Client()
    assert client.send(raw=b"{}", headers={"content-length": length}).status == status


def test_repeated_accept_headers_are_joined_once() -> None:
    # Before: each Accept header re-joined all the earlier ones (60,000: 0.22 s, 70 times
    # the cost of 6,000; now 13 times, linear).
    assert lower_headers([(b"Accept", b"a"), (b"x", b"1"), (b"accept", b"b")]) == {
        "x": "1",
        "accept": "a, b",
    }

    def best(n: int) -> float:
        headers = [(b"accept", b"a/b")] * n
        times = []
        for _ in range(5):
            start = time.perf_counter()
            lower_headers(headers)
            times.append(time.perf_counter() - start)
        return min(times)

    assert best(60_000) < 35 * best(6_000)


# ---------------------------------------------------------------------- the client


def annotated(name: str) -> dict[str, Any]:
    schema = {"type": "object", "properties": {"r": {"type": "string", "x-mcp-header": "R"}}}
    return {"name": name, "inputSchema": schema}


def test_the_client_remembers_annotated_tools_within_its_bytes() -> None:
    # Before: 16 pages of 256 annotated tools with 16 KiB names: 4,096 kept, +65.2 MiB
    # (the bound was 65,536 tools of any size); now 250 tools, +4.0 MiB.
    t = HttpClientTransport()

    def pages() -> None:
        for page in range(16):
            learn(t, [annotated(f"{page}_{i}_" + "n" * 16384) for i in range(256)])

    assert grown(pages) < 4 + 1.5
    assert t._tool_bytes <= http_client._MAX_TOOL_BYTES
    assert t.tool_headers(f"15_255_{'n' * 16384}") == {"r": "R"}  # the newest are kept
    assert t.tool_headers(f"0_0_{'n' * 16384}") == {}  # the first learned are forgotten


def test_the_client_does_not_remember_tools_without_annotations() -> None:
    t = HttpClientTransport()
    learn(t, [annotated("a"), {"name": "plain", "inputSchema": {"type": "object"}}])
    assert set(t._tool_headers) == {"a"}
    learn(t, [{"name": "a", "inputSchema": {"type": "object"}}])  # lost its annotation
    assert t._tool_headers == {}
    assert t._tool_bytes == 0
    assert t.tool_headers("a") == {}
