"""Every public name of ``mcp_sansio.auth`` has its entry in the docs (an ``auto*`` or a
``data`` directive on the authorization pages or the HTTP page), and the constants the
docs spell out by hand say what the code holds."""

from __future__ import annotations

import re
from pathlib import Path

import mcp_sansio.auth as auth

DOCS = Path(__file__).resolve().parent.parent / "docs"
PAGES = ("auth.rst", "auth-extensions.rst", "auth-server.rst", "http.rst")


def _text() -> str:
    return "\n".join((DOCS / page).read_text() for page in PAGES)


def test_every_public_name_is_documented() -> None:
    text = _text()
    entries = set(
        re.findall(r"^\.\. (?:auto\w+|data|class|function):: mcp_sansio\.auth\.(\w+)", text, re.M)
    )
    missing = sorted(set(auth.__all__) - entries)
    assert missing == []
    assert entries <= set(auth.__all__), sorted(entries - set(auth.__all__))


def test_the_constants_written_out_match() -> None:
    text = _text()
    for name in ("DEFAULT_MAX_STEP_UPS", "DEFAULT_MAX_SCOPE_SETS"):
        entry = re.search(rf"^\.\. data:: mcp_sansio\.auth\.{name}\n\n   ``(\d+)``", text, re.M)
        assert entry is not None, name
        assert int(entry.group(1)) == getattr(auth, name)
