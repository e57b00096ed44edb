"""Which build of the core is installed: pure Python by default; compiled by mypyc in tox's
``compiled`` environment, which says so with ``MCP_SANSIO_EXPECT_COMPILED=1`` (setup.py,
build_backend/, docs/performance.rst)."""

from __future__ import annotations

import os

import pytest

from mcp_sansio import _cli
from mcp_sansio._version import CORE_MODULES, build, compiled_core


def test_the_installed_build_is_the_expected_one() -> None:
    if os.environ.get("MCP_SANSIO_EXPECT_COMPILED") == "1":
        assert compiled_core() == CORE_MODULES
        assert build() == "compiled core (mypyc)"
    else:
        assert compiled_core() == ()
        assert build() == "pure Python"


def test_version_names_the_build(capsys: pytest.CaptureFixture[str]) -> None:
    assert _cli.main(["--version"]) == 0
    assert capsys.readouterr().out.strip().endswith(f"({build()})")


def test_the_compiled_modules_are_the_ones_setup_py_compiles() -> None:
    setup_py = os.path.join(os.path.dirname(__file__), os.pardir, "setup.py")
    with open(setup_py, encoding="utf-8") as file:
        text = file.read()
    listed = [line.strip().strip('",') for line in text.splitlines() if "src/mcp_sansio/" in line]
    assert listed == [f"src/mcp_sansio/{name}.py" for name in CORE_MODULES]
