"""The README's examples run, print what it says they print, and its commands are CI's."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"

# A fenced block: ```lang ... ```, with the prose before it.
FENCE = re.compile(r"^```(?P<lang>[\w-]*)\n(?P<body>.*?)^```$", re.MULTILINE | re.DOTALL)

RUN_COMMAND = (
    "python3 -m venv .venv && .venv/bin/pip install '.[testing]' && .venv/bin/mcp-sansio probe"
)
TEST_COMMAND = "python3 -m venv .venv && .venv/bin/pip install tox && .venv/bin/tox -p auto"

pytestmark = pytest.mark.skipif(not README.exists(), reason="README.md not beside tests/")


def blocks() -> list[tuple[str, str, str]]:
    """(language, body, prose before it) for each fenced block, in order."""
    text = README.read_text(encoding="utf-8")
    out = []
    end = 0
    for match in FENCE.finditer(text):
        out.append((match["lang"], match["body"], text[end : match.start()]))
        end = match.end()
    return out


def examples() -> list[tuple[str, str | None]]:
    """Each python block, with the output the README says it prints (a ``text`` block right
    after it, introduced by prose ending in "prints:"), or None."""
    found = blocks()
    out: list[tuple[str, str | None]] = []
    for i, (lang, body, _) in enumerate(found):
        if lang != "python":
            continue
        expected = None
        if i + 1 < len(found):
            next_lang, next_body, prose = found[i + 1]
            if next_lang == "text" and prose.strip().endswith("prints:"):
                expected = next_body
        out.append((body, expected))
    return out


def test_readme_has_python_examples() -> None:
    assert examples(), "the README should show runnable python"


@pytest.mark.parametrize("index", range(len(examples()) if README.exists() else 0))
def test_readme_example_runs(index: int) -> None:
    code, expected = examples()[index]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, f"README.md example {index + 1}", "exec"), {"__name__": "__readme__"})
    if expected is not None:
        assert out.getvalue() == expected


def test_readme_opens_with_the_two_commands() -> None:
    shell = [body.strip() for lang, body, _ in blocks() if lang == "sh"]
    assert shell[:2] == [RUN_COMMAND, TEST_COMMAND]


def test_ci_runs_exactly_the_test_command() -> None:
    script = ROOT / ".ci" / "run"
    if not script.exists():
        pytest.skip(".ci/run not beside tests/")
    commands = [
        line.strip()
        for line in script.read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]
    assert commands[-1] == TEST_COMMAND
