"""``run_probe`` against the two real servers the interop setup installs (``peers.py``): the
TypeScript SDK's everything server (``@modelcontextprotocol/server-everything``) and the
Python SDK's ``MCPServer`` (``mcp==2.3.0``, ``sdk_server.py``), both over stdio.

These are the verdicts the "Findings" table of docs/probe.rst publishes for them: which rules
FAIL, which warn, which are noted, and that the initialize window
(``lifecycle.request-in-initialize-window``) is served, where the old probe demanded -32600
and failed every real server. A change of the probe or of a pinned peer that changes one of
these verdicts fails here, so the table cannot silently go stale: update both together.

Every other rule that applies must pass (or be n/a): a finding the table does not list is a
failure too. The fuzz phase is kept small and seeded; the checks decide these verdicts.

Each conversation runs on a fresh process: 5 for the versions and 46 for the checks, so 51
starts of the server before the fuzz phase. The Python SDK's server takes about 2 s to
import on a loaded machine, so its probe ran 60-90 s beside tox's other environments: they
have the interop backstop's 240 s (conftest.TEST_TIMEOUT), not the 120 s they had, which a
CI run beside three other environments ran out of.
"""

from __future__ import annotations

from collections.abc import Sequence

from mcp_sansio.testing import Report, StdioTarget, run_probe

from . import peers

#: The versions probed: the newest of each era, and 2025-03-26 for the batch rules. (All
#: five change nothing in these verdicts, and take longer.)
VERSIONS = ("2026-07-28", "2025-11-25", "2025-03-26")
EXAMPLES = 1
SEED = 1

#: What both servers do (docs/probe.rst, "Findings"): invalid JSON, an envelope without
#: ``"jsonrpc"`` and arrays are dropped without a word, and in 2025-03-26 a batch gets
#: nothing.
COMMON_FAILS = {
    "envelope.parse-error",
    "envelope.invalid-request",
    "envelope.empty-batch",
    "envelope.batch-accepted",
}
COMMON_WARNS = {
    "envelope.batch-not-allowed",
    "envelope.batch-mixed",
    "lifecycle.second-initialize",
}
COMMON_NOTES = {"ids.duplicate-request-id"}

EVERYTHING = {
    # logging/setLevel with a bad level gets -32603, not -32602.
    "warn": COMMON_WARNS | {"params.invalid"},
    # It serves tools/list before initialize: the client's MUST the probe broke, a note.
    "fail": COMMON_FAILS,
    "note": COMMON_NOTES | {"lifecycle.request-before-initialize"},
}
PYTHON_SDK = {
    # It refuses a request before initialize (-32602), and serves 2026-07-28 as the text asks.
    "fail": COMMON_FAILS,
    "warn": COMMON_WARNS,
    "note": COMMON_NOTES,
}


def _probe(command: Sequence[str]) -> Report:
    return run_probe(
        StdioTarget(list(command)),
        versions=VERSIONS,
        timeout=10.0,
        startup=30.0,
        examples=EXAMPLES,
        seed=SEED,
    )


def _verdicts(report: Report) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {"fail": set(), "warn": set(), "note": set()}
    for row in report.rows:
        if row.status in out:
            out[row.status].add(row.rule.name)
    return out


def _check(report: Report, want: dict[str, set[str]], offered: tuple[str, ...]) -> None:
    assert report.unusable is None, report.render()
    assert report.offered == offered, report.answers
    got = _verdicts(report)
    by_rule = {row.rule.name: row for row in report.rows}
    for status in ("fail", "warn", "note"):
        assert got[status] == want[status], (
            status,
            {name: by_rule[name].detail for name in got[status] ^ want[status]},
        )
    window = by_rule["lifecycle.request-in-initialize-window"]
    assert window.status == "pass", window.detail
    assert not report.ok  # MUST failures: the probe exits 1 for both


def test_everything_server_verdicts(everything_command: list[str]) -> None:
    report = _probe(everything_command)
    # The initialize era only: server/discover gets -32601.
    _check(report, EVERYTHING, ("2025-11-25", "2025-03-26"))
    assert report.answers["server/discover"] == "error -32601"
    rows = {row.rule.name: row for row in report.rows}
    assert rows["params.invalid"].detail.endswith("answered error -32603; the rule wants -32602")


def test_python_sdk_server_verdicts(sdk_server_command: list[str]) -> None:
    report = _probe(sdk_server_command)
    # Both eras.
    _check(report, PYTHON_SDK, VERSIONS)
    rows = {row.rule.name: row for row in report.rows}
    assert rows["lifecycle.request-before-initialize"].status == "pass"
    for name in ("meta.missing", "meta.unsupported-version", "meta.capabilities-missing"):
        assert rows[name].status == "pass", rows[name].detail


def test_pinned_peers() -> None:
    """The versions the table was made with."""
    assert peers.EVERYTHING_VERSION == "2026.8.31"
    assert peers.SDK_VERSION == "2.3.0"
