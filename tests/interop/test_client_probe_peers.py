"""``mcp-sansio probe --client`` against the official SDKs' clients (real peers): the
Python SDK's (``sdk_client.py``, ``mcp==2.3.0``, legacy mode) and the TypeScript SDK v1's
(``ts_client.mjs``, the ``@modelcontextprotocol/sdk`` the everything server brings).

What they do right passes, and what they get wrong is reported under its rule, at its level
(the findings of docs/probe.rst): neither answers a line that is not JSON or a bad envelope
(failures) or a batch (a warning); both serve a sampling request with tools they did not
declare (a failure); both answer a reused id as if new (the probe's own MUST NOT: a note).
"""

from __future__ import annotations

import io
import json
import os
import shutil
from pathlib import Path
from typing import Any

from mcp_sansio._cli import main

from . import peers

HERE = Path(__file__).resolve().parent

#: What both clients are found to do: the MUSTs they break (JSON-RPC's answers to a line
#: that is not JSON and to a bad envelope; MCP 2025-11-25's "Clients MUST return standard
#: JSON-RPC errors ..." for a sampling request with tools they did not declare), the implied
#: rule they break (an array where the version has no batches goes unanswered: a warning),
#: and what is the probe's own doing (a reused id is the sender's MUST NOT: a note).
FAILS = {
    "envelope.parse-error",
    "envelope.invalid-request",
    "capability.undeclared-client-subcapability",
}
WARNS = {"envelope.batch-not-allowed"}
NOTES = {"ids.duplicate-request-id"}
PASSES = {
    "envelope.invalid-response",
    "envelope.oversized-message",
    "lifecycle.unsupported-version-result",
    "ids.string-and-int-are-different",
    "response.unknown-id",
    "capability.undeclared-client-capability",
    "method.unknown",
    "method.unknown-notification",
    "method.wrong-direction",
    "response.missing",
}


def _probe(command: list[str], env: dict[str, str] | None = None) -> dict[str, Any]:
    out, err = io.StringIO(), io.StringIO()
    saved = dict(os.environ)
    os.environ.update(env or {})
    try:
        status = main(
            ["probe", "--client", "--json", "--examples", "3", "--seed", "1", "--", *command],
            out,
            err,
        )
    finally:
        os.environ.clear()
        os.environ.update(saved)
    report: dict[str, Any] = json.loads(out.getvalue())
    assert status == 1, err.getvalue()
    return report


def _check(
    report: dict[str, Any],
    fails: set[str],
    na: frozenset[str] = frozenset(),
    warns: set[str] = WARNS,
) -> None:
    by_rule = {row["rule"]: row for row in report["rules"]}
    for status, names in (("fail", fails), ("warn", warns), ("note", NOTES)):
        found = {name for name, row in by_rule.items() if row["status"] == status}
        assert found == names, (status, {n: by_rule[n]["detail"] for n in found ^ names})
    for name in PASSES - na:
        assert by_rule[name]["status"] == "pass", by_rule[name]
    for name in na:
        assert by_rule[name]["status"] == "n/a", by_rule[name]


def test_python_sdk_client(sdk_python: Path) -> None:
    report = _probe([str(sdk_python), str(HERE / "sdk_client.py"), "legacy", "--", "{server}"])
    assert report["answers"]["initialize"] == "asked for 2025-11-25, got 2025-11-25"
    # It declares sampling, elicitation and roots: no request is gated away from it.
    _check(report, FAILS, frozenset({"capability.undeclared-client-capability"}))


def test_typescript_sdk_client(everything_command: list[str]) -> None:
    sdk = peers.everything_dir().parent / "sdk"
    node = shutil.which("node")
    assert node is not None
    assert (sdk / "package.json").is_file()
    report = _probe([node, str(HERE / "ts_client.mjs"), "--", "{server}"], {"MCP_TS_SDK": str(sdk)})
    assert report["answers"]["initialize"] == "asked for 2025-11-25, got 2025-11-25"
    # It also answers sampling/createMessage without maxTokens with -32603, not -32602 (a
    # SHOULD: "Invalid parameters: -32602" under Error Handling): a warning.
    _check(report, FAILS, warns=WARNS | {"params.invalid"})
