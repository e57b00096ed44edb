"""Hostile or broken servers, through each adapter's stdio client (blocking, asyncio, trio):
each ends the same way, at once, with one clear error.

- A "server" that prints garbage forever and never reads its stdin (as ``yes`` does): the
  session answers the first unreadable lines as JSON-RPC says, then closes as broken after
  ``DEFAULT_MAX_UNREADABLE`` in a row (before: the blocking client hung past its timeout,
  trio took 34 s and 166 MB, asyncio 1.2 GB and a warning per write).
- An answer larger than the client's ``max_message_size``: the call it answers fails when it
  arrives, with an error that names the size and the option (before: the call waited out its
  whole timeout, then cancelled a request the server had answered).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any

import pytest
import trio

from mcp_sansio import asyncio as mcp_asyncio
from mcp_sansio import blocking
from mcp_sansio import trio as mcp_trio
from mcp_sansio.session import ConnectionLost, McpError

GARBAGE = [sys.executable, "-c", "import sys\nwhile True: sys.stdout.write('y\\n' * 4096)"]
EXAMPLE = [sys.executable, "-m", "mcp_sansio", "serve"]
#: Far longer than any of these takes, and far shorter than the timeouts they used to wait out.
TIMEOUT = 30.0
LIMIT = 20.0


def list_tools_blocking(command: list[str], **options: Any) -> Any:
    with blocking.Client.connect_stdio(command, timeout=TIMEOUT, **options) as client:
        return client.list_tools()


def list_tools_asyncio(command: list[str], **options: Any) -> Any:
    import asyncio

    async def main() -> Any:
        async with mcp_asyncio.Client.connect_stdio(command, timeout=TIMEOUT, **options) as c:
            return await c.list_tools()

    return asyncio.run(main())


def list_tools_trio(command: list[str], **options: Any) -> Any:
    async def main() -> Any:
        async with mcp_trio.Client.connect_stdio(command, timeout=TIMEOUT, **options) as c:
            return await c.list_tools()

    return trio.run(main)


RUNTIMES: dict[str, Callable[..., Any]] = {
    "blocking": list_tools_blocking,
    "asyncio": list_tools_asyncio,
    "trio": list_tools_trio,
}


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_a_server_that_prints_garbage(runtime: str) -> None:
    started = time.monotonic()
    with pytest.raises(ConnectionLost) as caught:
        RUNTIMES[runtime](GARBAGE)
    assert time.monotonic() - started < LIMIT
    message = caught.value.message
    assert message.startswith("the server sent 256 unreadable messages in a row (the last: 'y'")
    assert message.endswith("the connection is closed as broken")


@pytest.mark.parametrize("runtime", RUNTIMES)
@pytest.mark.parametrize("versions", [["2025-11-25"], ["2026-07-28"]])
def test_an_answer_over_max_message_size_fails_its_call_at_once(
    runtime: str, versions: list[str]
) -> None:
    started = time.monotonic()
    with pytest.raises(McpError) as caught:
        RUNTIMES[runtime](EXAMPLE, versions=versions, max_message_size=2000)
    assert time.monotonic() - started < LIMIT
    error = caught.value
    assert error.code == -32600
    assert error.message.startswith("Invalid response: ")
    assert error.message.endswith(" bytes, larger than max_message_size (2000 bytes); dropped")
    size = int(error.message.split()[2])
    assert size > 2000
