"""``mcp-sansio probe --client`` against the official SDKs' clients (real peers): the
Python SDK's (``sdk_client.py``, ``mcp==2.3.0``, legacy mode) and the TypeScript SDK v1's
(``ts_client.mjs``, the ``@modelcontextprotocol/sdk`` the everything server brings).

What they do right passes, and what they get wrong is reported under its rule (the findings
of docs/probe.rst): neither answers a line that is not JSON, a bad envelope or a batch;
both answer a reused id as if new, and a sampling request with tools they did not declare.
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

#: What both clients are found to do.
FAILS = {
    "envelope.parse-error",
    "envelope.invalid-request",
    "envelope.batch-not-allowed",
    "ids.duplicate-request-id",
    "capability.undeclared-client-subcapability",
}
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


def _check(report: dict[str, Any], fails: set[str], na: frozenset[str] = frozenset()) -> None:
    by_rule = {row["rule"]: row for row in report["rules"]}
    failed = {name for name, row in by_rule.items() if row["status"] == "fail"}
    assert failed == fails, {name: by_rule[name]["detail"] for name in failed ^ fails}
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
    # It also answers sampling/createMessage without maxTokens with -32603, not -32602.
    _check(report, FAILS | {"params.invalid"})
