"""The official MCP conformance suite against our Streamable HTTP server and HTTP client.

``conformance/run.py`` does the work: it installs Node 22 and the two pinned versions of
``@modelcontextprotocol/conformance`` (0.1.16 and 0.2.0-alpha.12) into
``.interop/conformance/`` (or ``$MCP_SANSIO_INTEROP_DIR/conformance/``), starts our server on a
free loopback port for each server run, runs each client scenario against our client, and
writes a JSON summary. These tests run it once per suite run and fail with the names of the
failing checks; anything the expected-failures files (``conformance/expected-failures-*.yml``)
do not excuse fails the test.

They are marked ``conformance`` and run in tox's ``conformance`` environment
(``pytest -m conformance tests/test_conformance.py``). They skip, loudly, only when the suite
cannot be had on this machine: no ``node``/``npm`` on PATH, or the npm registry unreachable
(``run.py`` exits 3 and says which); any other setup failure fails them.

``MCP_SANSIO_CONFORMANCE_SERVER`` and ``MCP_SANSIO_CONFORMANCE_CLIENT`` replace the commands
under test (the server's with a ``{port}`` placeholder).
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.conformance

ROOT = Path(__file__).resolve().parents[1]
RUNNER = ROOT / "conformance" / "run.py"

#: ``run.py``'s exit status when node/npm or the npm registry is missing.
EXIT_UNAVAILABLE = 3
#: Bounds, in seconds: the first setup downloads Node 22 and both suites.
SETUP_TIMEOUT = 1800.0
RUN_TIMEOUT = 1200.0

_PYTHON = shlex.quote(sys.executable)
SERVER_COMMAND = os.environ.get("MCP_SANSIO_CONFORMANCE_SERVER") or (
    f"{_PYTHON} -m mcp_sansio serve --http 127.0.0.1:{{port}}"
)
CLIENT_COMMAND = os.environ.get("MCP_SANSIO_CONFORMANCE_CLIENT") or (
    f"{_PYTHON} {shlex.quote(str(ROOT / 'conformance' / 'client.py'))}"
)

#: The runs of ``run.py``: (mode, ``--only`` selector).
RUNS = [
    ("server", "0.1.16/server-all"),
    ("server", "0.2.0-alpha.12/server-2025-11-25"),
    ("server", "0.2.0-alpha.12/server-2026-07-28"),
    ("client", "0.1.16/client"),
    ("client", "0.2.0-alpha.12/client-2025-11-25"),
    ("client", "0.2.0-alpha.12/client-2026-07-28"),
    # every auth/* client scenario (22 in 0.1.16, 33 in 0.2.0-alpha.12, extensions included)
    ("client", "0.1.16/client-auth"),
    ("client", "0.2.0-alpha.12/client-auth"),
]

#: Suite invocations at once, per run: the auth scenarios have no timing check (sse-retry,
#: in the other client runs, allows the client 200 ms of lateness), so two at a time halve
#: their minutes on two cores.
JOBS = {"0.1.16/client-auth": 2, "0.2.0-alpha.12/client-auth": 2}
#: How many scenarios the auth runs must have run (the suite's ``list``, at these versions).
AUTH_SCENARIO_COUNTS = {"0.1.16/client-auth": 22, "0.2.0-alpha.12/client-auth": 33}


def _counts(summary: dict[str, Any]) -> str:
    """One line per run: scenarios passed/failed, checks passed/failed, expected failures."""
    lines = []
    for run in summary["runs"]:
        sc, ch = run["scenarios"], run["checks"]
        lines.append(
            f"{run['suite']} {run['run']}: scenarios {sc['passed']} passed, {sc['failed']} "
            f"failed ({len(run['expected_failures'])} expected failing check(s)); checks "
            f"{ch['passed']} passed, {ch['failed']} failed, {ch['warnings']} warnings"
        )
    return "\n".join(lines)


def _runner(*args: str, timeout: float) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(
            [sys.executable, str(RUNNER), *args],
            capture_output=True,
            text=True,
            timeout=timeout,
            cwd=ROOT,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout or ""
        output = out.decode(errors="replace") if isinstance(out, bytes) else out
        pytest.fail(
            f"conformance/run.py {' '.join(args)} ran past {timeout:g} s:\n{output[-4000:]}",
            pytrace=False,
        )


@pytest.fixture(scope="module")
def suite() -> None:
    """Node 22 and both suite versions, installed (once) by ``run.py setup``."""
    result = _runner("setup", timeout=SETUP_TIMEOUT)
    if result.returncode == EXIT_UNAVAILABLE:
        pytest.skip(
            "CONFORMANCE SUITE UNAVAILABLE (node/npm or the npm registry missing): "
            + (result.stdout.strip() or result.stderr.strip())[-2000:]
        )
    if result.returncode != 0:
        pytest.fail(
            f"conformance/run.py setup failed (exit {result.returncode}):\n"
            f"{result.stdout[-4000:]}\n{result.stderr[-4000:]}",
            pytrace=False,
        )


def _failure_report(summary: dict[str, Any], output: str) -> str:
    lines: list[str] = []
    for run in summary["runs"]:
        for name in run["unexpected_failures"]:
            lines.append(f"{run['suite']} {run['run']}: {name}")
        for message in run["messages"]:
            lines.append(f"{run['suite']} {run['run']}: note: {message}")
    return "unexpected conformance failures:\n  " + "\n  ".join(lines) + f"\n\n{output[-6000:]}"


@pytest.mark.parametrize(("mode", "run"), RUNS, ids=[r.replace("/", "-") for _, r in RUNS])
def test_conformance(suite: None, mode: str, run: str, tmp_path: Path) -> None:
    summary_path = tmp_path / "summary.json"
    command = SERVER_COMMAND if mode == "server" else CLIENT_COMMAND
    result = _runner(
        mode,
        "--command",
        command,
        "--only",
        run,
        "--out",
        str(tmp_path / "results"),
        "--json",
        str(summary_path),
        "--jobs",
        str(JOBS.get(run, 1)),
        timeout=RUN_TIMEOUT,
    )
    output = f"{result.stdout}\n{result.stderr}"
    if result.returncode == EXIT_UNAVAILABLE:
        pytest.skip(f"CONFORMANCE SUITE UNAVAILABLE: {output.strip()[-2000:]}")
    if not summary_path.exists():
        pytest.fail(
            f"conformance/run.py {mode} --only {run} wrote no summary "
            f"(exit {result.returncode}):\n{output[-6000:]}",
            pytrace=False,
        )
    summary: dict[str, Any] = json.loads(summary_path.read_text())
    assert summary["runs"], f"no run matched {run}:\n{output[-4000:]}"
    # the figures, shown by `pytest -rA` (and in tox's output)
    print(_counts(summary))
    if run in AUTH_SCENARIO_COUNTS:
        ran = sum(r["scenarios"]["passed"] + r["scenarios"]["failed"] for r in summary["runs"])
        assert ran == AUTH_SCENARIO_COUNTS[run], (
            f"{run} ran {ran} scenarios, not {AUTH_SCENARIO_COUNTS[run]}:\n{_counts(summary)}"
        )
    assert summary["ok"], _failure_report(summary, output)
    assert result.returncode == 0, (
        f"conformance/run.py exited {result.returncode}:\n{output[-6000:]}"
    )
