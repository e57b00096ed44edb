"""mcp_sansio.auth is a sans-IO service: no event loop, socket, thread or clock, and
nothing of mcp_sansio above the core (checked on the source, import by import, as the
sans-io contract of lint-imports does once the package is in it)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

AUTH = Path(__file__).resolve().parent.parent / "src" / "mcp_sansio" / "auth"
FORBIDDEN = {
    "asyncio", "trio", "socket", "select", "selectors", "threading", "time", "subprocess",
    "h11", "hypothesis", "http", "urllib.request", "ssl",
}  # fmt: skip
#: What the package may import: the standard library's pure parts, and orjson.
ALLOWED_ROOTS = {
    "__future__", "base64", "collections", "dataclasses", "hashlib", "ipaddress", "orjson",
    "secrets", "typing", "urllib",
}  # fmt: skip


def _imports(path: Path) -> list[str]:
    out: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out.append(node.module)
    return out


@pytest.mark.parametrize("path", sorted(AUTH.glob("*.py")), ids=lambda p: p.name)
def test_no_io_imports(path: Path) -> None:
    for name in _imports(path):
        assert name not in FORBIDDEN, name
        assert name.split(".")[0] in ALLOWED_ROOTS, name


def test_the_check_sees_imports() -> None:
    assert "orjson" in _imports(AUTH / "_flow.py")
