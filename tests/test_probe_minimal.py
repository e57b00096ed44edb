"""The probe on a server that does what the specification's text asks and nothing more
(tests/spec_minimal_server.py, raw JSON lines, no mcp_sansio): no rule fails, whatever the
fuzz seed, with or without ``--strict``. And how levels drive the verdict: the same server
breaking one implied rule gets a warning (a failure only under ``--strict``), breaking one
MUST gets a failure (exit status 1).
"""

from __future__ import annotations

import io
import re
import sys
from pathlib import Path

import pytest

from mcp_sansio.testing import StdioTarget, run_probe
from mcp_sansio.testing._command import probe_command

SERVER = [sys.executable, str(Path(__file__).with_name("spec_minimal_server.py"))]
OFFERED = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_server_that_does_what_the_text_asks_fails_no_rule(seed: int) -> None:
    report = run_probe(StdioTarget(SERVER), examples=5, seed=seed, strict=True)
    assert report.unusable is None
    assert report.offered == OFFERED
    assert report.failures == (), report.render()
    assert report.warnings == (), report.render()
    counts = report.counts()
    assert counts["pass"] >= 25, report.render()
    # What the text leaves to the server is accepted and said: -32002 before initialize.
    (row,) = [r for r in report.rows if r.rule.name == "lifecycle.request-before-initialize"]
    assert row.status == "pass"
    assert "-32002" in row.detail


def _probe(
    args: list[str], *, strict: bool, versions: tuple[str, ...] = ("2025-11-25",)
) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    status = probe_command(
        http=None,
        command=[*SERVER, *args],
        json_output=False,
        examples=0,
        seed=1,
        timeout=5.0,
        versions=list(versions),
        jobs=4,
        out=out,
        err=err,
        strict=strict,
    )
    return status, out.getvalue()


def test_an_implied_rule_broken_is_a_warning_and_fails_only_under_strict() -> None:
    status, text = _probe(["--answer-responses"], strict=False)
    assert status == 0, text
    assert re.search(r"^envelope\.invalid-response +warn ", text, re.MULTILINE), text
    assert "\nWARN envelope.invalid-response (implied; 2025-11-25; checks)\n" in text
    assert "0 rules failed" in text
    status, text = _probe(["--answer-responses"], strict=True)
    assert status == 1, text
    assert "\nFAIL envelope.invalid-response (implied; 2025-11-25; checks)\n" in text


def test_a_must_broken_is_a_failure() -> None:
    status, text = _probe(["--parse-error-code", "-32600"], strict=False)
    assert status == 1, text
    assert "\nFAIL envelope.parse-error (MUST; 2025-11-25; checks)\n" in text
    assert "answered error -32600; the rule wants -32700" in text


def test_params_invalid_is_implied_for_a_method_no_sentence_names() -> None:
    """No sentence says SHOULD -32602 for ``tools/call``: the warning says implied (the
    rule's SHOULD is the log level's and the prompt arguments')."""
    status, text = _probe(["--params-code", "-32603"], strict=False)
    assert status == 0, text
    assert re.search(r"^params\.invalid +warn ", text, re.MULTILINE), text
    assert "\nWARN params.invalid (implied; tools/call; 2025-11-25; checks)\n" in text
    block = text[text.index("WARN params.invalid") :]
    block = block[: block.index("\n\n")] if "\n\n" in block else block
    assert "a warning: implied (no sentence about it has a keyword), not MUST" in block
    assert "SHOULD" not in block.split("  found:")[0].split("  rule:")[0]
    assert "Invalid log level" not in block, "the log level's sentence is not about tools/call"


@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26", "2025-11-25"])
def test_an_undeclared_log_message_is_a_must_failure_in_every_version(version: str) -> None:
    """The logging page: "Servers that emit log message notifications MUST declare the
    logging capability": a failure in 2024-11-05 and 2025-03-26 too, where the
    negotiated-capabilities sentence is only a SHOULD."""
    status, text = _probe(["--log-undeclared"], strict=False, versions=(version,))
    assert status == 1, text
    head = f"\nFAIL capability.undeclared-notification (MUST; notifications/message; {version};"
    assert head in text, text
    assert "MUST declare the `logging` capability" in text


def test_a_second_answer_to_one_request_cites_one_response_per_call() -> None:
    status, text = _probe(["--answer-twice", "ping"], strict=False)
    assert status == 1, text
    block = text[text.index("\nFAIL response.unknown-id (MUST;") :]
    assert "The Response is expressed as a single JSON Object" in block
    assert "MUST handle these race conditions gracefully" in block
