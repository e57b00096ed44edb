"""Every ``.. code-block:: python`` of the docs runs, as written."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parent.parent / "docs"
_BLOCK = re.compile(r"^\.\. code-block:: python\n\n((?:(?:   .*)?\n)+)", re.MULTILINE)


def _blocks() -> list[tuple[str, int, str]]:
    found = []
    for page in sorted(DOCS.glob("*.rst")):
        for i, match in enumerate(_BLOCK.finditer(page.read_text())):
            found.append((page.name, i, textwrap.dedent(match.group(1))))
    return found


BLOCKS = _blocks()


def test_the_docs_have_examples() -> None:
    assert any(name == "connection.rst" for name, _, _ in BLOCKS)


@pytest.mark.parametrize(("page", "index", "code"), BLOCKS, ids=[f"{p}#{i}" for p, i, _ in BLOCKS])
def test_example_runs(page: str, index: int, code: str) -> None:
    exec(compile(code, f"{page} block {index}", "exec"), {"__name__": "docs_example"})
