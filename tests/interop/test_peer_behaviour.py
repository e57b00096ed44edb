"""What the everything server does with traffic that our strict core treats otherwise, byte
for byte over a raw pipe, next to what our example server does with the same bytes. These
pin the peer's behaviour that ``docs/interop.rst`` records: if a new version of the peer
changes it, these tests say so.
"""

from __future__ import annotations

import json
import os
import subprocess
from typing import Any

import pytest

#: The bound of one raw exchange, in seconds.
EXCHANGE = 60.0
NODE_ENV = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}

INITIALIZE: dict[str, Any] = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"},
    },
}


def exchange(command: list[str], lines: list[Any], env: dict[str, str] | None = None) -> list[Any]:
    """Write ``lines`` (JSON values, or raw strings) to a fresh server, close its stdin and
    return what it wrote before exiting, one JSON value per line."""
    data = "".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines)
    done = subprocess.run(
        command,
        input=data.encode(),
        capture_output=True,
        timeout=EXCHANGE,
        env=env,
    )
    return [json.loads(line) for line in done.stdout.decode().splitlines() if line.strip()]


def by_id(messages: list[Any]) -> dict[Any, Any]:
    return {m["id"]: m for m in messages if "id" in m and "method" not in m}


def test_requests_before_initialize(
    everything_command: list[str], example_command: list[str]
) -> None:
    """The everything server answers ``tools/list`` with no ``initialize`` first (it does
    not enforce the lifecycle); our server refuses it (-32600)."""
    request = {"jsonrpc": "2.0", "id": 7, "method": "tools/list"}
    theirs = by_id(exchange(everything_command, [request], NODE_ENV))
    assert "echo" in {t["name"] for t in theirs[7]["result"]["tools"]}
    ours = by_id(exchange(example_command, [request]))
    assert ours[7]["error"]["code"] == -32600
    assert "initialize" in ours[7]["error"]["message"]


def test_invalid_json(everything_command: list[str], example_command: list[str]) -> None:
    """The everything server drops a line that is not JSON without a word; ours answers
    -32700 (id null) and goes on."""
    lines: list[Any] = [INITIALIZE, "{not json", {"jsonrpc": "2.0", "id": 2, "method": "ping"}]
    theirs = exchange(everything_command, lines, NODE_ENV)
    assert [m.get("id") for m in theirs if "method" not in m] == [1, 2]
    assert not [m for m in theirs if "error" in m]
    ours = exchange(example_command, lines)
    errors = [m for m in ours if "error" in m]
    assert [(m["id"], m["error"]["code"]) for m in errors] == [(None, -32700)]
    assert by_id(ours)[2]["result"] == {}


def test_batches_are_dropped(everything_command: list[str]) -> None:
    """A JSON-RPC batch (an array; 2025-03-26 only) gets no answer at all from the
    everything server, even when that version was negotiated."""
    init = {**INITIALIZE, "params": {**INITIALIZE["params"], "protocolVersion": "2025-03-26"}}
    batch = [
        {"jsonrpc": "2.0", "id": 3, "method": "ping"},
        {"jsonrpc": "2.0", "id": 4, "method": "ping"},
    ]
    theirs = exchange(
        everything_command,
        [init, {"jsonrpc": "2.0", "method": "notifications/initialized"}, json.dumps(batch)],
        NODE_ENV,
    )
    assert by_id(theirs)[1]["result"]["protocolVersion"] == "2025-03-26"
    assert 3 not in by_id(theirs)
    assert 4 not in by_id(theirs)


@pytest.mark.parametrize("version", ["2026-07-28", "1999-01-01"])
def test_unknown_versions_get_the_latest(everything_command: list[str], version: str) -> None:
    """``initialize`` with a version the server does not know (2026-07-28 is one) is
    answered with 2025-11-25, and ``server/discover`` with -32601."""
    init = {**INITIALIZE, "params": {**INITIALIZE["params"], "protocolVersion": version}}
    discover = {"jsonrpc": "2.0", "id": 9, "method": "server/discover", "params": {}}
    theirs = by_id(exchange(everything_command, [discover, init], NODE_ENV))
    assert theirs[9]["error"]["code"] == -32601
    assert theirs[1]["result"]["protocolVersion"] == "2025-11-25"
