"""The main job: ``python -m mcp_sansio`` runs a real exchange between our client and our
example server (a subprocess, over stdio), in both eras, and prints each step."""

from __future__ import annotations

import io
import subprocess
import sys
import time

from mcp_sansio import __version__
from mcp_sansio.__main__ import main
from mcp_sansio._version import build

LIMIT = 30.0  # it takes a few seconds; the bound is generous for slow machines


def check_demonstration(text: str) -> None:
    lines = text.splitlines()
    assert lines[0] == f"mcp-sansio {__version__}: our client and our example server, over stdio"
    assert lines[1] == "server command: python -m mcp_sansio serve"
    legacy_at = lines.index("== a client of the initialize era (versions 2025-11-25) ==")
    both_at = lines.index("== a client of both eras (it probes with server/discover) ==")
    assert legacy_at < both_at
    legacy, both = lines[legacy_at:both_at], lines[both_at:]
    server = f"server mcp-sansio-example {__version__}"
    assert f"handshake       initialize -> protocol 2025-11-25, {server}" in legacy
    assert f"handshake       server/discover -> protocol 2026-07-28, {server}" in both
    for part, how in ((legacy, "(a request to us)"), (both, "(an input_required round)")):
        assert part[2].startswith("tools/list      35 tools: echo, add, add_numbers,")
        assert 'tools/call      echo {"message":"hello over MCP"} -> Echo: hello over MCP' in part
        progress = [line for line in part if line.startswith("  progress")]
        assert progress == [
            "  progress      0/100 Completed step 0 of 100",
            "  progress      50/100 Completed step 50 of 100",
            "  progress      100/100 Completed step 100 of 100",
        ]
        (asked,) = [line for line in part if line.startswith("  elicitation")]
        assert asked.endswith(how)
        (answer,) = [line for line in part if line.startswith("  our answer")]
        defaults = '{"name":"John Doe","age":30,"score":95.5,"status":"active","verified":true}'
        assert answer == f"  our answer    accept {defaults}"
        assert (
            f"                -> Elicitation completed: action=accept, content={defaults}" in part
        )
        assert (
            "resources/read  test://static-text -> "
            "This is the content of the static text resource." in part
        )
        assert [line for line in part if line][-1] == (
            "closed          stdin closed; the server exited with status 0"
        )


def test_main_runs_the_exchange_in_both_eras() -> None:
    out = io.StringIO()
    started = time.monotonic()
    assert main([], out) == 0
    assert time.monotonic() - started < LIMIT
    check_demonstration(out.getvalue())


def test_module_runs_as_a_program() -> None:
    started = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "mcp_sansio"], capture_output=True, text=True, timeout=LIMIT * 2
    )
    assert time.monotonic() - started < LIMIT
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    check_demonstration(proc.stdout)


def test_version() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "mcp_sansio", "--version"],
        capture_output=True,
        text=True,
        timeout=LIMIT,
    )
    assert (proc.returncode, proc.stdout) == (0, f"mcp-sansio {__version__} ({build()})\n")


def test_a_closed_stdout_stops_it_quietly() -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "mcp_sansio"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    assert proc.stdout.readline().startswith("mcp-sansio ")
    proc.stdout.close()  # as `python -m mcp_sansio | head -1` does
    _, err = proc.communicate(timeout=LIMIT)
    assert proc.returncode == 1
    assert "Traceback" not in err
