"""mcp_sansio.auth is a sans-IO service: no event loop, socket, thread or clock, and
nothing of mcp_sansio above the core (checked on the source, import by import, as the
sans-io contract of lint-imports does once the package is in it). The JOSE library
(joserfc, the optional ``auth`` extra) is imported only by the modules that sign or verify
JWTs, and only inside the functions that do: ``import mcp_sansio.auth`` works without it."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

AUTH = Path(__file__).resolve().parent.parent / "src" / "mcp_sansio" / "auth"
FORBIDDEN = {
    "asyncio", "trio", "socket", "select", "selectors", "threading", "time", "subprocess",
    "h11", "hypothesis", "http", "urllib.request", "ssl",
}  # fmt: skip
#: What the package may import: the standard library's pure parts, and orjson.
ALLOWED_ROOTS = {
    "__future__", "base64", "collections", "dataclasses", "hashlib", "ipaddress", "math",
    "orjson", "re", "secrets", "typing", "urllib",
}  # fmt: skip
#: The modules that may import joserfc, and only below their top level.
JOSE = {"_dpop.py", "_dpop_proof.py", "_grants.py", "_jwt.py"}


def _imports(path: Path, top_only: bool = False) -> list[str]:
    out: list[str] = []
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in tree.body if top_only else ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out.append(node.module)
    return out


@pytest.mark.parametrize("path", sorted(AUTH.glob("*.py")), ids=lambda p: p.name)
def test_no_io_imports(path: Path) -> None:
    for name in _imports(path):
        assert name not in FORBIDDEN, name
        root = name.split(".")[0]
        assert root in ALLOWED_ROOTS or (root == "joserfc" and path.name in JOSE), name
    top = [n for n in _imports(path, top_only=True) if n.split(".")[0] == "joserfc"]
    assert not top, f"{path.name} imports {top} at its top level"


def test_the_check_sees_imports() -> None:
    assert "orjson" in _imports(AUTH / "_metadata.py")
    assert "joserfc" in _imports(AUTH / "_dpop.py")
    assert "joserfc" not in _imports(AUTH / "_dpop.py", top_only=True)


def test_the_package_imports_without_joserfc() -> None:
    code = (
        "import sys; sys.modules['joserfc'] = None\n"
        "import mcp_sansio.auth, mcp_sansio.auth._dpop, mcp_sansio.auth._grants\n"
        "assert 'joserfc' not in {m.split('.')[0] for m in sys.modules if sys.modules[m]}\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
