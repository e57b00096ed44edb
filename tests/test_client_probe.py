"""``mcp-sansio probe --client``: our own client passes; a planted client (raw stdin/stdout,
no MCP library) that ignores what it does not understand and goes on with a version it never
asked for is reported under the right rules, each with its exchange; the command line with
its ``{server}`` placeholder; exit codes. (The official SDKs' clients: tests/interop.)

Every probe runs in this process (``main(argv, out, err)``) against subprocesses, and is
bounded in time.
"""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("hypothesis")

from helpers import report_rows, run_probe_cli

from mcp_sansio import Role
from mcp_sansio.testing import ClientConnectionTarget, ClientTarget, TargetError, run_client_probe
from mcp_sansio.testing._runner import fuzz

PYTHON = sys.executable
LIMIT = 90.0

# A client that knows the shape of MCP and no more: it starts its server (the arguments
# after `--`), initializes (declaring roots), sends initialized and tools/list, answers each
# `ping`, answers `roots/list` twice, and ignores everything else it is sent; it never gives
# up on a version it did not ask for.
PLANTED = textwrap.dedent(
    """
    import json, subprocess, sys
    server = subprocess.Popen(sys.argv[sys.argv.index("--") + 1:],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    def send(message):
        server.stdin.write((json.dumps(message) + "\\n").encode())
        server.stdin.flush()
    send({"jsonrpc": "2.0", "id": 1, "method": "initialize",
          "params": {"protocolVersion": "2025-06-18", "capabilities": {"roots": {}},
                     "clientInfo": {"name": "planted-client", "version": "1"}}})
    for line in server.stdout:
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if not isinstance(msg, dict):
            continue
        if msg.get("id") == 1 and "result" in msg:
            send({"jsonrpc": "2.0", "method": "notifications/initialized"})
            send({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        elif msg.get("method") == "ping" and "id" in msg:
            send({"jsonrpc": "2.0", "id": msg["id"], "result": {}})
        elif msg.get("method") == "roots/list" and "id" in msg:
            for _ in range(2):
                send({"jsonrpc": "2.0", "id": msg["id"], "result": {"roots": []}})
    """
)


def probe(argv: list[str], limit: float = LIMIT) -> tuple[int, str, str]:
    """``mcp-sansio probe ARGV`` in this process: (status, stdout, stderr)."""
    return run_probe_cli(argv, limit)


rows = report_rows


def test_our_client_passes() -> None:
    client = [PYTHON, "-m", "mcp_sansio", "call", "tool", "echo", "--args", '{"message": "hi"}']
    options = ["--client", "--json", "--examples", "3", "--seed", "1"]
    status, out, err = probe([*options, "--", *client, "--", "{server}"])
    report = json.loads(out)
    assert status == 0, out
    assert report["ok"] is True
    assert report["offered"] == ["2025-11-25"]
    assert report["answers"]["initialize"] == "asked for 2025-11-25, got 2025-11-25"
    by_rule = rows(report)
    assert {row["status"] for row in by_rule.values()} <= {"pass", "n/a"}
    for name in (
        "envelope.parse-error",
        "envelope.invalid-request",
        "envelope.invalid-response",
        "envelope.batch-not-allowed",
        "envelope.oversized-message",
        "lifecycle.unsupported-version-result",
        "ids.duplicate-request-id",
        "ids.string-and-int-are-different",
        "response.unknown-id",
        "capability.undeclared-client-capability",
        "capability.undeclared-client-subcapability",
        "capability.undeclared-notification",
        "method.unknown",
        "method.wrong-direction",
        "params.invalid",
        "resources.updated-not-subscribed",
    ):
        assert by_rule[name]["status"] == "pass", by_rule[name]
    # The rules only a server enforces do not apply to a client.
    assert by_rule["lifecycle.initialize-version"]["status"] == "n/a"
    assert "checks:" in err
    assert "fuzz 2025-11-25: no violation" in err
    assert report["examples"] == 3


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path: Path = tmp_path_factory.mktemp("planted") / "client.py"
    path.write_text(PLANTED)
    return path


@pytest.fixture(scope="module")
def planted_report(planted: Path) -> tuple[int, dict[str, Any]]:
    """The deterministic checks (no fuzz) against the planted client."""
    options = ["--client", "--json", "--timeout", "1", "--examples", "0"]
    status, out, _ = probe([*options, "--", PYTHON, str(planted), "--"])
    return status, json.loads(out)


@pytest.mark.parametrize(
    ("rule", "verdict", "found"),
    [
        ("envelope.parse-error", "fail", "no answer"),
        ("envelope.invalid-request", "fail", "the rule wants an error"),
        ("method.unknown", "fail", "no answer"),
        # The code is implied or a SHOULD: a warning; leaving the request unanswered is
        # JSON-RPC's MUST, charged as response.missing.
        ("method.wrong-direction", "warn", "no answer"),
        ("capability.undeclared-client-capability", "warn", "no answer"),
        ("response.missing", "fail", "the request got no answer"),
        (
            "lifecycle.unsupported-version-result",
            "warn",
            "the client went on (notifications/initialized",
        ),
    ],
)
def test_planted_violations_are_reported(
    planted_report: tuple[int, dict[str, Any]], rule: str, verdict: str, found: str
) -> None:
    status, report = planted_report
    assert status == 1
    assert report["answers"]["initialize"] == "asked for 2025-06-18, got 2025-06-18"
    row = rows(report)[rule]
    assert row["status"] == verdict, row
    assert found in row["detail"]
    sent = [line for line in row["exchange"] if line["side"] == "probe"]
    assert sent, row  # the exchange shows what the probe sent
    if rule == "lifecycle.unsupported-version-result":
        assert '"protocolVersion":"1999-01-01"' in sent[0]["text"]


def test_what_the_planted_client_gets_right_passes(
    planted_report: tuple[int, dict[str, Any]],
) -> None:
    _, report = planted_report
    by_rule = rows(report)
    # (It leaves some of the probe's requests unanswered: response.missing fails, above.)
    for name in ("envelope.invalid-response", "response.unknown-id"):
        assert by_rule[name]["status"] == "pass", by_rule[name]
    # It declares no capability, so no request of ours has params to break; what it sent
    # itself had valid params.
    assert by_rule["params.invalid"]["detail"].startswith("nothing the client sent")


def test_the_server_placeholder() -> None:
    relay = [PYTHON, "-m", "mcp_sansio._relay", "127.0.0.1", "4242"]
    assert ClientTarget(["c", "--", "{server}", "-x"]).argv(4242) == ["c", "--", *relay, "-x"]
    assert ClientTarget(["c", "--"]).argv(4242) == ["c", "--", *relay]
    with pytest.raises(TargetError):
        ClientTarget([])


def test_a_client_that_starts_no_server_exits_2() -> None:
    status, out, err = probe(["--client", "--startup", "2", "--", PYTHON, "-c", "print('hi')"])
    assert status == 2
    assert out == ""
    assert "before connecting to the probe" in err
    assert "hi" in err  # what the client printed is shown


# A client that starts its server (the arguments after -c's script) and then writes into
# it: lines that are not JSON-RPC, forever; or nothing at all.
GARBAGE_CLIENT = (
    "import itertools, subprocess, sys; "
    "p = subprocess.Popen(sys.argv[1:], stdin=subprocess.PIPE, stdout=subprocess.PIPE); "
    "any(p.stdin.write(b'hello\\n') < 0 for _ in itertools.count())"
)
SILENT_CLIENT = (
    "import subprocess, sys, time; "
    "p = subprocess.Popen(sys.argv[1:], stdin=subprocess.PIPE, stdout=subprocess.PIPE); "
    "time.sleep(100)"
)


def test_a_client_that_writes_garbage_cannot_be_used() -> None:
    status, out, err = probe(["--client", "--json", "--", PYTHON, "-c", GARBAGE_CLIENT], limit=30)
    report = json.loads(out)
    assert status == 2
    why = "cut off: the peer sent 100 lines that are not JSON-RPC messages (the first: 'hello')"
    # (What the client printed may follow: here, its broken pipe once the probe is gone.)
    assert report["unusable"]["reason"].startswith(f"the client did not open a session: {why}")
    assert report["notes"][0].startswith(f"the session: {why}")
    assert report["counts"]["fail"] == 0  # no verdict
    texts = [line["text"] for line in report["unusable"]["exchange"]]
    assert texts[:4] == [
        "hello",
        texts[1],
        "… the same 2 lines 99 more times",
        why,
    ]
    assert '"code":-32700' in texts[1]
    assert err.endswith(f"mcp-sansio probe: unusable: {report['unusable']['reason']}\n")


def test_a_client_that_sends_nothing_is_given_up_on_once() -> None:
    argv = ["--client", "--json", "--timeout", "0.5", "--startup", "1.5"]
    status, out, _ = probe([*argv, "--", PYTHON, "-c", SILENT_CLIENT], limit=30)
    report = json.loads(out)
    assert status == 2
    assert report["unusable"]["reason"] == (
        "the client sent nothing within 1.5 s of starting (the startup bound, --startup)"
    )
    assert report["answers"] == {}
    assert report["notes"][0].startswith("the session: the client did not open a session")


@pytest.mark.parametrize(
    "argv", [["--client"], ["--client", "--http", "http://127.0.0.1:1/mcp", "--", PYTHON]]
)
def test_usage_errors_exit_2(argv: list[str]) -> None:
    status, out, _ = probe(argv)
    assert status == 2
    assert out == ""


def test_the_fuzz_phase_finds_a_fault_no_check_shows_and_shrinks_it(planted: Path) -> None:
    """No check sends ``roots/list``; the fuzz phase does (legal traffic to a client that
    declared roots), sees it answered twice, and shrinks that to the handshake, the ping
    that opens the session, and the request."""
    found, notes = fuzz(
        ClientTarget([PYTHON, str(planted), "--"]),
        "2025-11-25",
        examples=10,
        seed_value=1,
        timeout=1,
        rules=["response.unknown-id"],
        peer=Role.CLIENT,
    )
    assert notes == []
    assert [o.rule for o in found] == ["response.unknown-id"]
    exchange = [line.render() for line in found[0].exchange]
    assert len(exchange) <= 12, exchange
    asked = [i for i, line in enumerate(exchange) if '"method":"roots/list"' in line]
    assert asked, exchange
    answers = [line for line in exchange[asked[0] :] if '"roots": []' in line]
    assert len(answers) == 2, exchange


@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"])
def test_our_client_in_process_passes_in_each_version(version: str) -> None:
    """``ClientConnectionTarget``: our asyncio client in this process, over loopback TCP."""
    report = run_client_probe(
        ClientConnectionTarget(versions=[version], capabilities={"roots": {"listChanged": True}}),
        timeout=2,
        examples=3,
        seed=1,
    )
    assert report.offered == (version,)
    assert report.ok, [(r.rule.name, r.detail) for r in report.failures]
    passed = {r.rule.name for r in report.rows if r.status == "pass"}
    assert {"envelope.parse-error", "lifecycle.unsupported-version-result"} <= passed
    if version == "2025-03-26":
        assert {"envelope.empty-batch", "envelope.batch-mixed"} <= passed
    else:
        assert "envelope.batch-not-allowed" in passed
