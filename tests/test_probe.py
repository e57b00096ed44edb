"""``mcp-sansio probe``: the example server passes over stdio and over HTTP; planted
violations in small servers written here (raw stdin/stdout, no MCP library) are reported
under the right rule with short exchanges; a seeded run is reproducible; the JSON shape;
exit codes; a silent server is a timeout, not a hang; no hypothesis, no probe.

Every probe runs in this process (``main(argv, out, err)``) against subprocesses, and is
bounded in time.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import report_rows, run_probe_cli

from mcp_sansio import ALL_VERSIONS
from mcp_sansio.testing._probe import all_rules

PYTHON = sys.executable
LIMIT = 60.0

# A server that knows the shape of MCP and breaks some of its rules on purpose: it has no
# lifecycle (answers before initialize), drops invalid JSON and bad envelopes without a
# word, answers `tools/list` twice, and reuses nothing of the protocol's id rules.
PLANTED = textwrap.dedent(
    """
    import json, sys
    DUPLICATE = sys.argv[1]
    INIT = {"protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}, "resources": {}},
            "serverInfo": {"name": "planted", "version": "1"}}
    RESULTS = {"tools/list": {"tools": []}, "resources/list": {"resources": []},
               "resources/templates/list": {"resourceTemplates": []}, "ping": {}}
    for line in sys.stdin:
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if not isinstance(msg, dict) or "method" not in msg or "id" not in msg:
            continue
        method, rid = msg["method"], msg["id"]
        if method == "initialize":
            bodies = [{"result": INIT}]
        elif method in RESULTS:
            bodies = [{"result": RESULTS[method]}] * (2 if method == DUPLICATE else 1)
        elif method == "tools/call":
            bodies = [{"result": {"content": []}}]
        else:
            bodies = [{"error": {"code": -32601, "message": "Method not found"}}]
        for body in bodies:
            sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": rid, **body}) + "\\n")
        sys.stdout.flush()
    """
)


def probe(argv: list[str], limit: float = LIMIT) -> tuple[int, str, str]:
    """``mcp-sansio probe ARGV`` in this process: (status, stdout, stderr)."""
    return run_probe_cli(argv, limit)


rows = report_rows


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("planted") / "server.py"
    path.write_text(PLANTED)
    return path


@pytest.fixture(scope="module")
def planted_report(planted: Path) -> tuple[int, dict[str, Any]]:
    """The deterministic checks (no fuzz) against the planted server that answers
    ``tools/list`` twice."""
    status, out, _ = probe(
        ["--json", "--examples", "0", "--timeout", "2", "--", PYTHON, str(planted), "tools/list"]
    )
    return status, json.loads(out)


# ---------------------------------------------------------------------- our servers


def test_example_server_over_stdio_passes() -> None:
    status, out, err = probe(["--json", "--examples", "1", "--seed", "1"])
    report = json.loads(out)
    assert status == 0, out
    assert report["ok"] is True
    assert report["offered"] == list(ALL_VERSIONS)
    by_rule = rows(report)
    assert {row["status"] for row in by_rule.values()} <= {"pass", "n/a"}
    for name in (
        "envelope.parse-error",
        "envelope.invalid-request",
        "envelope.batch-not-allowed",
        "envelope.batch-accepted",
        "envelope.oversized-message",
        "lifecycle.request-before-initialize",
        "lifecycle.second-initialize",
        "lifecycle.initialize-version",
        "ids.duplicate-request-id",
        "response.unknown-id",
        "method.unknown",
        "params.invalid",
        "cancel.unknown-request",
        "progress.not-increasing",
        "meta.missing",
        "meta.unsupported-version",
        "meta.capabilities-missing",
        "input-required.retry",
        "subscriptions.listen-ack-first",
    ):
        assert by_rule[name]["status"] == "pass", by_rule[name]
    assert "checks:" in err  # the progress lines
    assert "fuzz 2025-11-25: no violation" in err


@pytest.fixture
def http_url() -> Iterator[str]:
    """The example server over Streamable HTTP on a free loopback port."""
    process = subprocess.Popen(
        [PYTHON, "-m", "mcp_sansio", "serve", "--http", "127.0.0.1:0"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stderr is not None
        line = process.stderr.readline()
        found = re.search(r"http://\S+", line)
        assert found, line
        yield found.group(0)
    finally:
        process.terminate()
        process.wait(10)
        assert process.stderr is not None
        process.stderr.close()


def test_example_server_over_http_passes(http_url: str) -> None:
    status, out, _ = probe(["--http", http_url, "--json", "--examples", "1", "--seed", "1"])
    report = json.loads(out)
    assert status == 0, out
    assert report["transport"] == "http"
    assert report["offered"] == list(ALL_VERSIONS)
    by_rule = rows(report)
    for name in ("envelope.parse-error", "meta.missing", "subscriptions.listen-ack-first"):
        assert by_rule[name]["status"] == "pass", by_rule[name]
    # Over HTTP there is no notifications/cancelled in 2026-07-28, but the initialize era has.
    assert by_rule["cancel.unknown-request"]["status"] == "pass"


# ---------------------------------------------------------------------- planted violations


def test_planted_violations_are_reported_under_their_rules(
    planted_report: tuple[int, dict[str, Any]],
) -> None:
    status, report = planted_report
    assert status == 1
    assert report["ok"] is False
    by_rule = rows(report)
    for name in (
        "lifecycle.request-before-initialize",
        "envelope.parse-error",
        "envelope.invalid-request",
        "envelope.batch-not-allowed",
        "ids.duplicate-request-id",
        "response.unknown-id",
    ):
        row = by_rule[name]
        assert row["status"] == "fail", row
        assert row["phase"] == "checks"
        # The deterministic checks are minimal: the handshake, the message, a ping.
        assert len(row["exchange"]) <= 8, row["exchange"]
    before = by_rule["lifecycle.request-before-initialize"]["exchange"]
    assert before[0]["side"] == "probe"
    assert '"method":"tools/list"' in before[0]["text"]
    assert before[1] == {
        "side": "peer",
        "text": '{"jsonrpc": "2.0", "id": "probe-1", "result": {"tools": []}}',
        "size": 60,
    }
    parse = by_rule["envelope.parse-error"]
    assert parse["detail"].endswith("no answer")
    # What the server does right passes.
    assert by_rule["method.unknown"]["status"] == "pass"
    assert by_rule["lifecycle.initialize-version"]["status"] == "pass"


def test_a_fuzz_only_violation_shrinks_to_a_short_exchange(planted: Path) -> None:
    # Only the fuzz phase's legal traffic asks for resources/list, which this one answers
    # twice; hypothesis shrinks it to the handshake and that one request.
    status, out, err = probe(
        [
            "--json",
            "--examples",
            "8",
            "--seed",
            "1",
            "--versions",
            "2025-11-25",
            "--timeout",
            "2",
            "--",
            PYTHON,
            str(planted),
            "resources/list",
        ]
    )
    report = json.loads(out)
    assert status == 1
    row = rows(report)["response.unknown-id"]
    assert row["status"] == "fail", row
    assert row["phase"] == "fuzz"
    texts = [line["text"] for line in row["exchange"]]
    assert len(texts) <= 8, texts
    assert any('"method":"resources/list"' in text for text in texts)
    assert sum('"resources": []' in text for text in texts) == 2
    assert "fuzz 2025-11-25: violations: " in err


def test_a_seeded_run_is_reproducible(planted: Path) -> None:
    argv = [
        "--json",
        "--examples",
        "3",
        "--seed",
        "11",
        "--versions",
        "2025-11-25",
        "--timeout",
        "2",
        "--",
        PYTHON,
        str(planted),
        "tools/list",
    ]
    first = probe(argv)
    second = probe(argv)
    assert first[0] == second[0] == 1
    assert json.loads(first[1])["seed"] == 11
    assert seeded_part(json.loads(first[1])) == seeded_part(json.loads(second[1]))


def seeded_part(report: dict[str, Any]) -> dict[str, Any]:
    """What a seed fixes in a report: everything, except how the server's lines interleave
    with the probe's in an exchange (that follows their arrival; each side's own lines
    stay in order)."""

    def sides(row: dict[str, Any]) -> dict[str, Any]:
        lines = row.pop("exchange", [])
        for side in ("probe", "peer", "note"):
            row[side] = [line["text"] for line in lines if line["side"] == side]
        return row

    return {**report, "rules": [sides(dict(row)) for row in report["rules"]]}


def test_json_shape(planted_report: tuple[int, dict[str, Any]]) -> None:
    _, report = planted_report
    assert set(report) == {
        "target",
        "transport",
        "offered",
        "answers",
        "seed",
        "examples",
        "ok",
        "counts",
        "rules",
        "notes",
    }
    assert report["transport"] == "stdio"
    assert report["answers"]["server/discover"] == "error -32601"
    assert report["answers"]["2025-06-18"] == "2025-11-25"
    assert report["offered"] == ["2025-11-25"]
    assert [row["rule"] for row in report["rules"]] == list(all_rules())
    assert sum(report["counts"].values()) == len(report["rules"])
    for row in report["rules"]:
        assert row["status"] in ("pass", "fail", "n/a")
        assert row["level"] in ("MUST", "SHOULD", "implied", "ours")
        assert isinstance(row["detail"], str)
        assert row["detail"]
        if row["status"] == "fail":
            assert row["phase"] in ("versions", "checks", "fuzz")
            for line in row["exchange"]:
                assert set(line) == {"side", "text", "size"}
                assert line["side"] in ("probe", "peer", "note")
        else:
            assert "exchange" not in row


def test_text_report(planted: Path) -> None:
    status, out, _ = probe(
        [
            "--examples",
            "0",
            "--versions",
            "2025-11-25",
            "--timeout",
            "2",
            "--",
            PYTHON,
            str(planted),
            "tools/list",
        ]
    )
    assert status == 1
    assert "lifecycle.request-before-initialize" in out
    assert "FAIL lifecycle.request-before-initialize (MUST; 2025-11-25; checks)" in out
    assert '    -> {"jsonrpc":"2.0","id":"probe-1","method":"tools/list"}' in out
    assert re.search(r"\d+ rules failed, \d+ passed, \d+ not applicable\.", out)


# ---------------------------------------------------------------------- failures of the target


def test_a_silent_server_is_a_timeout_not_a_hang() -> None:
    silent = [PYTHON, "-c", "import sys; sys.stdin.read()"]
    started = time.monotonic()
    status, out, err = probe(
        ["--json", "--timeout", "0.5", "--startup", "0.5", "--", *silent], limit=20
    )
    assert time.monotonic() - started < 20
    report = json.loads(out)
    assert status == 1
    assert rows(report)["response.missing"]["status"] == "fail"
    assert "no answer to" in rows(report)["response.missing"]["detail"]
    assert report["offered"] == []
    assert set(report["answers"].values()) == {"no answer"}
    assert "answered neither" in err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--http", "http://192.0.2.1/mcp"], "not a loopback address"),
        (["--http", "https://127.0.0.1/mcp"], "not an http:// URL"),
        (["--http", "http://127.0.0.1:1/mcp"], "cannot connect"),
        (["--", "/nonexistent/mcp-server"], "cannot start"),
    ],
)
def test_unusable_targets_exit_2(argv: list[str], message: str) -> None:
    status, out, err = probe(argv)
    assert status == 2
    assert message in err
    assert out == ""


@pytest.mark.parametrize(
    "argv",
    [
        ["--http", "http://127.0.0.1:1/mcp", "--", PYTHON],
        ["--"],
        ["--examples", "-1"],
        ["--timeout", "0"],
        ["--versions", "1999-01-01"],
    ],
)
def test_usage_errors_exit_2(argv: list[str]) -> None:
    status, out, _ = probe(argv)
    assert status == 2
    assert out == ""


def test_without_hypothesis_it_says_how_to_get_it() -> None:
    code = (
        "import sys; sys.modules['hypothesis'] = None\n"
        "from mcp_sansio._cli import main\n"
        "sys.exit(main(['probe']))\n"
    )
    done = subprocess.run(
        [PYTHON, "-c", code], capture_output=True, text=True, timeout=30, check=False
    )
    assert done.returncode == 2
    assert "pip install mcp-sansio[testing]" in done.stderr
    assert done.stdout == ""
