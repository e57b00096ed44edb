"""``mcp-sansio probe``: the example server passes over stdio and over HTTP; planted
violations in small servers written here (raw stdin/stdout, no MCP library) are reported
under the right rule with short exchanges; a seeded run is reproducible; the JSON shape;
exit codes; a silent server is a timeout, not a hang; no hypothesis, no probe.

Every probe runs in this process (``main(argv, out, err)``) against subprocesses, and is
bounded in time.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import report_rows, run_probe_cli

from mcp_sansio import ALL_VERSIONS
from mcp_sansio.testing import _targets as targets
from mcp_sansio.testing._conversation import Conversation
from mcp_sansio.testing._inprocess_target import FunctionTarget
from mcp_sansio.testing._report import Report, Row, all_rules
from mcp_sansio.testing._targets import MAX_MESSAGES
from mcp_sansio.testing._wire import KEPT_BYTES, MAX_EXCHANGE, MAX_UNREADABLE, WireLine, collapse

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
    # Each found, at the level the text gives it: the MUSTs fail, the implied rules warn, the
    # reuse of an id is the probe's own MUST NOT (the sender's): only noted.
    for name, verdict in (
        # (serving a request before initialize breaks the client's MUST, not the server's)
        ("lifecycle.request-before-initialize", "note"),
        ("envelope.parse-error", "fail"),
        ("envelope.invalid-request", "fail"),
        ("envelope.batch-not-allowed", "warn"),
        ("ids.duplicate-request-id", "note"),
        # (found in what the server sent: "Responses MUST include the same ID as the
        # request they correspond to" binds the sender, the server)
        ("response.unknown-id", "fail"),
    ):
        row = by_rule[name]
        assert row["status"] == verdict, row
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
        "strict",
        "counts",
        "rules",
        "notes",
        "unusable",
    }
    assert report["unusable"] is None
    assert report["transport"] == "stdio"
    assert report["answers"]["server/discover"] == "error -32601"
    assert report["answers"]["2025-06-18"] == "2025-11-25"
    assert report["offered"] == ["2025-11-25"]
    assert [row["rule"] for row in report["rules"]] == list(all_rules())
    assert sum(report["counts"].values()) == len(report["rules"])
    assert report["strict"] is False
    for row in report["rules"]:
        assert row["status"] in ("pass", "fail", "warn", "note", "n/a")
        assert row["level"] in ("MUST", "MUST NOT", "SHOULD", "SHOULD NOT", "implied", "ours")
        assert row["binds"] in ("receiver", "sender")
        assert isinstance(row["detail"], str)
        assert row["detail"]
        if row["status"] in ("fail", "warn", "note"):
            assert row["phase"] in ("versions", "checks", "fuzz")
            assert row["part"] in ("receiver", "sender")
            for cited in row["text"]:
                assert set(cited) == {"document", "versions", "section", "text"}
            assert row["text"] or row["level"] == "ours"
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
    assert "NOTE lifecycle.request-before-initialize (MUST; 2025-11-25; checks)" in out
    assert "FAIL envelope.parse-error (MUST; 2025-11-25; checks)" in out
    assert '    -> {"jsonrpc":"2.0","id":"probe-1","method":"tools/list"}' in out
    assert re.search(
        r"\d+ rules failed, \d+ passed, \d+ warned, \d+ noted, \d+ not applicable\.", out
    )
    # The verdict cites the sentence it rests on.
    assert (
        "  text (MCP 2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05, Basic > Lifecycle >"
        ' Lifecycle Phases > Initialization): "The initialization phase MUST be the first'
        ' interaction between client and server."' in out
    )


# ---------------------------------------------------------------------- failures of the target


def test_a_silent_server_is_a_timeout_not_a_hang() -> None:
    silent = [PYTHON, "-c", "import sys; sys.stdin.read()"]
    started = time.monotonic()
    status, out, err = probe(
        ["--json", "--timeout", "0.5", "--startup", "0.5", "--", *silent], limit=20
    )
    assert time.monotonic() - started < 20
    report = json.loads(out)
    # It offers no version: it cannot be used, and gets no verdict (not response.missing).
    assert status == 2
    assert report["ok"] is False
    assert report["offered"] == []
    assert {row["status"] for row in report["rules"]} == {"n/a"}
    assert rows(report)["response.missing"]["detail"] == "not checked: the server cannot be used"
    assert "no answer" in set(report["answers"].values())
    assert report["unusable"]["reason"] == (
        "the server answered nothing within 0.5 s of starting (the startup bound, --startup)"
    )
    assert err.endswith(f"mcp-sansio probe: unusable: {report['unusable']['reason']}\n")


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
    assert "pip install 'mcp-sansio[testing]' (from a checkout: pip install '.[testing]')" in (
        done.stderr
    )
    assert done.stdout == ""


# ---------------------------------------------------------------------- broken servers
#
# Fake servers, each a `python -c` script: one that writes garbage forever and reads
# nothing (`yes`), one that sends back what it is sent (`cat`), one that never answers and
# never reads (`sleep`). None of them offers a version: the probe says it cannot be used
# (exit status 2), gives no verdict, and ends within a bound, with a short report.

# (One line each: the report's first line shows the command.)
GARBAGE = "import itertools, sys; any(sys.stdout.write('y\\n') < 0 for _ in itertools.count())"
ECHO = "import sys; any(sys.stdout.write(line) and sys.stdout.flush() for line in sys.stdin)"
SLEEPER = "import time; time.sleep(100)"
# Answers initialize (2025-11-25), then, once initialized, writes garbage forever.
FLOOD_AFTER_INIT = textwrap.dedent(
    """
    import json, sys
    for line in sys.stdin:
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if not isinstance(msg, dict):
            continue
        if msg.get("method") == "initialize":
            result = {"protocolVersion": "2025-11-25", "capabilities": {},
                      "serverInfo": {"name": "flood", "version": "1"}}
            print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}), flush=True)
        elif msg.get("method") == "notifications/initialized":
            while True:
                sys.stdout.write("y\\n")
        elif "id" in msg and "method" in msg:
            error = {"code": -32601, "message": "Method not found"}
            print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "error": error}), flush=True)
    """
)


def test_a_server_that_writes_garbage_forever_is_cut_off() -> None:
    # What `mcp-sansio probe -- yes` does: the defaults (--timeout 5, --startup 15).
    status, out, err = probe(["--", PYTHON, "-c", GARBAGE], limit=30)
    assert status == 2
    lines = out.splitlines()
    assert len(lines) < 30, out
    assert lines[1] == (
        "versions: server/discover -> cut off, 2025-11-25 -> cut off, 2025-06-18 -> cut off, "
        "2025-03-26 -> cut off, 2024-11-05 -> cut off; offered: none"
    )
    why = "cut off: the peer sent 100 lines that are not JSON-RPC messages (the first: 'y')"
    assert (
        "note: server/discover, initialize 2025-11-25, initialize 2025-06-18, "
        f"initialize 2025-03-26, initialize 2024-11-05: {why}"
    ) in lines
    assert f"Unusable: the server offers none of the versions probed: {why}." in lines
    assert "No rule was checked." in lines
    # The exchange: the request, the first y and our parse error, then the count.
    at = lines.index("An exchange:")
    shown = lines[at + 1 :]
    assert shown[0].startswith('    -> {"jsonrpc":"2.0","id":0,"method":"initialize"')
    assert shown[1] == "    <- y"
    assert shown[2].startswith('    -> {"jsonrpc":"2.0","id":null,"error":{"code":-32700')
    assert shown[3] == "    .. … the same 2 lines 99 more times"
    assert shown[4] == f"    .. {why}"
    assert "FAIL" not in out  # no verdict on a server that cannot be used
    assert err.endswith(
        f"mcp-sansio probe: unusable: the server offers none of the versions probed: {why}\n"
    )


def test_a_server_that_writes_garbage_as_json() -> None:
    status, out, _ = probe(["--json", "--timeout", "1", "--", PYTHON, "-c", GARBAGE], limit=30)
    report = json.loads(out)
    assert status == 2
    assert report["ok"] is False
    assert report["examples"] == 0
    assert report["counts"] == {"pass": 0, "fail": 0, "warn": 0, "note": 0, "n/a": len(all_rules())}
    assert report["unusable"]["reason"].startswith("the server offers none")
    exchange = report["unusable"]["exchange"]
    assert [line["side"] for line in exchange] == ["probe", "peer", "probe", "note", "note", "note"]
    assert exchange[3] == {
        "side": "note",
        "text": "… the same 2 lines 99 more times",
        "size": len("… the same 2 lines 99 more times".encode()),
    }
    assert exchange[5]["text"].startswith("exit status")


def test_an_echo_cannot_be_used() -> None:
    # `mcp-sansio probe -- cat`: what comes back is our own requests (and errors).
    status, out, err = probe(["--json", "--", PYTHON, "-c", ECHO], limit=30)
    report = json.loads(out)
    assert status == 2
    assert set(report["answers"].values()) == {"an echo"}
    reason = (
        "the server offers none of the versions probed: it sends back what it is sent "
        "(an echo, not an MCP server)"
    )
    assert report["unusable"]["reason"] == reason
    # The mirror refuses the echoed requests (method.wrong-direction, ...): no verdict.
    assert report["counts"]["fail"] == 0
    sides = [line["side"] for line in report["unusable"]["exchange"]]
    assert sides[:4] == ["probe", "peer", "probe", "peer"]
    assert err.endswith(f"mcp-sansio probe: unusable: {reason}\n")


def test_a_server_that_never_answers_is_given_up_on_once() -> None:
    # One check at a time: the first conversation waits out the startup bound, and no
    # other is started (no wait per version).
    status, out, err = probe(
        [
            "--json",
            "--jobs",
            "1",
            "--timeout",
            "0.5",
            "--startup",
            "1",
            "--",
            PYTHON,
            "-c",
            SLEEPER,
        ],
        limit=30,
    )
    report = json.loads(out)
    assert status == 2
    assert report["answers"] == {
        "server/discover": "no answer",
        "2025-11-25": "not asked",
        "2025-06-18": "not asked",
        "2025-03-26": "not asked",
        "2024-11-05": "not asked",
    }
    assert report["unusable"]["reason"] == (
        "the server answered nothing within 1 s of starting (the startup bound, --startup)"
    )
    assert report["notes"] == ["server/discover: no answer to server/discover within 1 s"]
    assert "versions: 5 conversations" in err


def test_sleep_with_the_default_startup_is_given_up_on_within_it() -> None:
    # `probe --timeout 1 -- sleep 100`: the startup bound (15 s) once, then the shutdown.
    started = time.monotonic()
    status, out, _ = probe(["--timeout", "1", "--", PYTHON, "-c", SLEEPER], limit=40)
    assert time.monotonic() - started < 40
    assert status == 2
    assert "Unusable: the server answered nothing within 15 s of starting" in out


def test_a_server_that_exits_at_once_cannot_be_used_and_its_stderr_is_shown() -> None:
    crash = "import sys\nprint('no config file', file=sys.stderr)\nsys.exit(3)\n"
    status, out, _ = probe(["--json", "--", PYTHON, "-c", crash], limit=30)
    report = json.loads(out)
    assert status == 2
    assert report["unusable"]["reason"] == (
        "the server offers none of the versions probed: it closed without answering "
        "(exit status 3); its stderr ends: 'no config file'"
    )


def test_a_slow_starting_server_works_with_the_default_startup(planted: Path) -> None:
    # Each fresh process takes 1.5 s before it reads (as npx servers take seconds): more
    # than --timeout, within the default --startup.
    slow = (
        "import runpy, time\ntime.sleep(1.5)\n"
        f"runpy.run_path({str(planted)!r}, run_name='__main__')\n"
    )
    argv = ["--json", "--examples", "0", "--versions", "2025-11-25", "--timeout", "0.5"]
    status, out, _ = probe([*argv, "--", PYTHON, "-c", slow, "tools/list"], limit=90)
    report = json.loads(out)
    assert report["offered"] == ["2025-11-25"]
    assert status == 1  # its planted violations
    assert rows(report)["lifecycle.request-before-initialize"]["status"] == "note"
    assert rows(report)["response.missing"]["status"] == "pass"


def test_a_server_that_offers_a_version_then_floods_fails_with_short_exchanges() -> None:
    argv = ["--json", "--examples", "0", "--versions", "2025-11-25", "--timeout", "1"]
    status, out, _ = probe([*argv, "--", PYTHON, "-c", FLOOD_AFTER_INIT], limit=90)
    report = json.loads(out)
    assert status == 1
    assert report["unusable"] is None
    assert report["offered"] == ["2025-11-25"]
    parse = rows(report)["envelope.parse-error"]
    assert parse["status"] == "fail"
    failed = [row for row in report["rules"] if row["status"] == "fail"]
    assert len(failed) > 5
    for row in failed:
        assert len(row["exchange"]) <= 12, row
    cut = rows(report)["method.unknown"]
    assert cut["status"] == "fail"
    texts = [line["text"] for line in cut["exchange"]]
    assert "… the same 2 lines 99 more times" in texts
    assert texts[-1].startswith("cut off: the peer sent 100 lines")


def test_an_interrupted_probe_shuts_its_servers_down_and_exits_130(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    pids.mkdir()
    server = (
        "import os, sys, time\n"
        f"open(os.path.join({str(pids)!r}, str(os.getpid())), 'w').close()\n"
        "time.sleep(100)\n"
    )
    process = subprocess.Popen(
        [PYTHON, "-m", "mcp_sansio", "probe", "--", PYTHON, "-c", server],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 30
    while len(list(pids.iterdir())) < 4 and time.monotonic() < deadline:
        time.sleep(0.05)
    started = [int(p.name) for p in pids.iterdir()]
    assert len(started) == 4  # --jobs 4: the first phase's conversations
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=30)
    assert process.returncode == 130
    assert out == ""
    assert err.endswith("mcp-sansio probe: interrupted\n")
    for pid in started:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)  # shut down (and reaped) before the probe exited


# ---------------------------------------------------------------------- bounds


def test_collapse_shows_a_repeated_block_once_and_a_count() -> None:
    a, b, c, d = (
        WireLine(side, data)
        for side, data in [("probe", b"a"), ("peer", b"y"), ("probe", b"err"), ("note", b"end")]
    )
    assert collapse([a, *[b, c] * 7001, d]) == [
        a,
        b,
        c,
        WireLine("note", "… the same 2 lines 7,000 more times".encode()),
        d,
    ]
    assert collapse([a, *[b] * 5]) == [
        a,
        b,
        WireLine("note", "… the same line 4 more times".encode()),
    ]
    # Twice is shown as it is.
    assert collapse([b, c, b, c]) == [b, c, b, c]
    # At most `shown` lines: the first, a note, the last.
    many = [WireLine("peer", str(i).encode()) for i in range(500)]
    out = collapse(many, shown=10)
    assert len(out) == 10
    assert out[:6] == many[:6]
    assert out[6] == WireLine("note", "… 491 more lines not shown".encode())
    assert out[7:] == many[-3:]


def test_the_report_shows_a_long_repeated_exchange_in_a_few_lines() -> None:
    exchange = (WireLine("probe", b"{}"), *[WireLine("peer", b"y"), WireLine("probe", b"e")] * 7001)
    rule = all_rules()["envelope.parse-error"]
    row = Row(rule, "fail", "found", ("2025-11-25",), exchange, "checks")
    report = Report(
        target="t",
        transport="stdio",
        offered=("2025-11-25",),
        answers={},
        rows=(row,),
        seed=1,
        examples=0,
    )
    text = report.render()
    assert len(text.splitlines()) < 20 + len(rule.citations)
    assert "    .. … the same 2 lines 7,000 more times" in text.splitlines()
    assert len(report.to_json()["rules"][0]["exchange"]) == 4


def test_a_conversation_keeps_a_bounded_record_of_a_flood() -> None:
    def flood() -> Callable[[bytes], list[bytes]]:
        return lambda line: [b"y" * 10_000] * 500 if b'"initialize"' in line else []

    with Conversation(FunctionTarget(flood), "2025-11-25", timeout=1, startup=1) as conv:
        assert not conv.open_session()
        assert conv.cut.startswith("cut off: the peer sent 100 lines that are not JSON-RPC")
    assert conv.unreadable == MAX_UNREADABLE
    # One violation per rule, however often it is broken; each line keeps KEPT_BYTES.
    assert [v.rule for v in conv.violations] == ["envelope.parse-error"]
    peer = [line for line in conv.lines if line.side == "peer"]
    assert len(peer) == MAX_UNREADABLE
    assert {(len(line.data), line.size) for line in peer} == {(KEPT_BYTES, 10_000)}
    assert sum(len(line.data) for line in conv.lines) <= MAX_EXCHANGE


def test_a_channel_stops_reading_past_its_bounds(monkeypatch: pytest.MonkeyPatch) -> None:
    notification = b'{"jsonrpc":"2.0","method":"notifications/message","params":{}}'

    def chatty() -> Callable[[bytes], list[bytes]]:
        return lambda line: [notification] * (MAX_MESSAGES + 5)

    with Conversation(FunctionTarget(chatty), "2025-11-25", timeout=1, startup=1) as conv:
        conv.request("ping", wait=False)
        conv.drain(0.1)
    assert conv.cut == (
        f"cut off: the peer sent more than {MAX_MESSAGES} messages: the probe stopped reading"
    )
    assert conv.peer_lines == MAX_MESSAGES
    # And in bytes (a smaller bound here, to keep the test small).
    monkeypatch.setattr(targets, "MAX_RECEIVED", 1_000_000)

    def big() -> Callable[[bytes], list[bytes]]:
        return lambda line: (
            [b'{"jsonrpc":"2.0","method":"x","params":{"p":"' + b"a" * 400_000 + b'"}}'] * 3
        )

    with Conversation(FunctionTarget(big), "2025-11-25", timeout=1, startup=1) as conv:
        conv.request("ping", wait=False)
        conv.drain(0.1)
    assert conv.cut == "cut off: the peer sent more than 1000000 bytes: the probe stopped reading"
    assert conv.peer_lines == 2


def test_a_wire_line_keeps_its_first_bytes_and_its_size() -> None:
    line = WireLine("peer", b"x" * 1_000_000)
    assert len(line.data) == KEPT_BYTES
    assert line.size == 1_000_000
    assert line.render(5) == "<- xxxxx... (1000000 bytes in all)"


# A 2026-07-28 server that, once a request without _meta has come, serves the connection as
# the initialize era's: server/discover then gets -32601 (as the TypeScript SDK v2 did).
DISCOVER_LOST = textwrap.dedent(
    """
    import json, sys
    META = "io.modelcontextprotocol/protocolVersion"
    legacy = False
    for line in sys.stdin:
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if not isinstance(msg, dict) or "method" not in msg or "id" not in msg:
            continue
        rid, method = msg["id"], msg["method"]
        meta = (msg.get("params") or {}).get("_meta")
        if not isinstance(meta, dict) or META not in meta:
            legacy = True
            body = {"error": {"code": -32602, "message": "no _meta"}}
        elif method == "server/discover" and not legacy:
            body = {"result": {"resultType": "complete", "supportedVersions": ["2026-07-28"],
                               "capabilities": {},
                               "_meta": {"io.modelcontextprotocol/serverInfo":
                                         {"name": "lost", "version": "0"}}}}
        elif method == "ping":
            body = {"result": {}}
        else:
            body = {"error": {"code": -32601, "message": "Method not found"}}
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": rid, **body}) + "\\n")
        sys.stdout.flush()
    """
)


def test_server_discover_refused_after_a_request_without_meta_fails(tmp_path: Path) -> None:
    """Server > Discovery (2026-07-28), "Servers MUST implement it": a well-formed
    server/discover answered with -32601, after a request without _meta, is a failure."""
    path = tmp_path / "server.py"
    path.write_text(DISCOVER_LOST)
    argv = ["--json", "--examples", "0", "--timeout", "2", "--versions", "2026-07-28"]
    status, out, _ = probe([*argv, "--", PYTHON, str(path)])
    report = json.loads(out)
    assert report["offered"] == ["2026-07-28"], report
    row = rows(report)["stateless.discover"]
    assert row["status"] == "fail", row
    assert row["level_charged"] == "MUST"
    assert "server/discover after a ping without _meta" in row["detail"]
    assert "-32601" in row["detail"]
    assert any("Servers MUST implement it." in t["text"] for t in row["text"])
    assert status == 1
