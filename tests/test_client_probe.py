"""``mcp-sansio probe --client``: our own client passes; a planted client (raw stdin/stdout,
no MCP library) that ignores what it does not understand and goes on with a version it never
asked for is reported under the right rules, each with its exchange; the command line with
its ``{server}`` placeholder; exit codes. (The official SDKs' clients: tests/interop.)

Every probe runs in this process (``main(argv, out, err)``) against subprocesses, and is
bounded in time.
"""

from __future__ import annotations

import io
import json
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("hypothesis")

from mcp_sansio.__main__ import main
from mcp_sansio.testing import ClientTarget, TargetError

PYTHON = sys.executable
LIMIT = 90.0

# A client that knows the shape of MCP and no more: it starts its server (the arguments
# after `--`), initializes, sends initialized and tools/list, answers each `ping` and
# ignores everything else it is sent; it never gives up on a version it did not ask for.
PLANTED = textwrap.dedent(
    """
    import json, subprocess, sys
    server = subprocess.Popen(sys.argv[sys.argv.index("--") + 1:],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    def send(message):
        server.stdin.write((json.dumps(message) + "\\n").encode())
        server.stdin.flush()
    send({"jsonrpc": "2.0", "id": 1, "method": "initialize",
          "params": {"protocolVersion": "2025-06-18", "capabilities": {},
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
    """
)


def probe(argv: list[str], limit: float = LIMIT) -> tuple[int, str, str]:
    """``mcp-sansio probe ARGV`` in this process: (status, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    started = time.monotonic()
    status = main(["probe", *argv], out, err)
    assert time.monotonic() - started < limit
    return status, out.getvalue(), err.getvalue()


def rows(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {row["rule"]: row for row in report["rules"]}


def test_our_client_passes() -> None:
    client = [PYTHON, "-m", "mcp_sansio", "call", "tool", "echo", "--args", '{"message": "hi"}']
    status, out, err = probe(["--client", "--json", "--", *client, "--", "{server}"])
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


@pytest.fixture(scope="module")
def planted_report(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, dict[str, Any]]:
    path: Path = tmp_path_factory.mktemp("planted") / "client.py"
    path.write_text(PLANTED)
    status, out, _ = probe(["--client", "--json", "--timeout", "1", "--", PYTHON, str(path), "--"])
    return status, json.loads(out)


@pytest.mark.parametrize(
    ("rule", "found"),
    [
        ("envelope.parse-error", "no answer"),
        ("envelope.invalid-request", "the rule wants an error"),
        ("method.unknown", "no answer"),
        ("method.wrong-direction", "no answer"),
        ("capability.undeclared-client-capability", "no answer"),
        ("lifecycle.unsupported-version-result", "the client went on (notifications/initialized"),
    ],
)
def test_planted_violations_are_reported(
    planted_report: tuple[int, dict[str, Any]], rule: str, found: str
) -> None:
    status, report = planted_report
    assert status == 1
    assert report["answers"]["initialize"] == "asked for 2025-06-18, got 2025-06-18"
    row = rows(report)[rule]
    assert row["status"] == "fail", row
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
    for name in ("envelope.invalid-response", "response.unknown-id", "response.missing"):
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


@pytest.mark.parametrize(
    "argv", [["--client"], ["--client", "--http", "http://127.0.0.1:1/mcp", "--", PYTHON]]
)
def test_usage_errors_exit_2(argv: list[str]) -> None:
    status, out, _ = probe(argv)
    assert status == 2
    assert out == ""
