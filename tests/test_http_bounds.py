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
import tracemalloc
from collections.abc import Callable
from typing import Any

from test_http_client import learn
from test_http_server import Client

from mcp_sansio.http import _client as http_client
from mcp_sansio.http._client import HttpClientTransport
from mcp_sansio.http._server import HttpSession

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
