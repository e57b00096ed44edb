"""The main job: ``python -m mcp_sansio`` runs a real exchange through two Connections."""

from __future__ import annotations

import io
import subprocess
import sys

import orjson

from mcp_sansio.__main__ import main


def test_main_prints_a_complete_exchange_in_both_eras() -> None:
    out = io.StringIO()
    assert main([], out) == 0
    lines = out.getvalue().splitlines()
    wire = [orjson.loads(line[5:]) for line in lines if line.startswith(("C->S ", "S->C "))]
    methods = [m.get("method") for m in wire if "method" in m]
    assert methods == [
        "initialize",
        "notifications/initialized",
        "tools/list",
        "tools/call",
        "server/discover",
        "tools/call",
    ]
    results = [m["result"] for m in wire if "result" in m]
    assert results[2]["content"][0]["text"] == "hello over MCP"
    assert results[4]["content"][0]["text"] == "hello, statelessly"
    assert "-> negotiated 2025-11-25, state OPERATING" in lines
    assert "-> version 2026-07-28, state STATELESS" in lines


def test_module_runs_as_a_program() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "mcp_sansio"], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    assert "stateless" in proc.stdout
