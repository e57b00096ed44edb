"""The structure figures of issue 18 (``tools/structure.py``), held where the code is now.

Each figure may only go down: a change that adds an import cycle, a private name imported
from another package, a hand-written module over 800 lines or a branch on a version or era
outside the tables fails here, with the figure and where it comes from. The one-way layers
themselves are ``lint-imports``'s contracts (``pyproject.toml``), run by the lint job.
"""

from __future__ import annotations

import ast
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent

#: Where each figure stands; lower it when it goes down, never raise it.
CEILINGS = {
    "cycles": 0,
    "private_imports": 0,
    "long_modules": 0,
    "version_compares": 0,
}


def _structure() -> ModuleType:
    spec = importlib.util.spec_from_file_location("structure", ROOT / "tools" / "structure.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["structure"] = module
    spec.loader.exec_module(module)
    return module


structure = _structure()
found = structure.modules()


@pytest.mark.parametrize(
    ("figure", "measure"),
    [
        ("cycles", structure.cycles),
        ("private_imports", structure.private_imports),
        ("long_modules", structure.long_modules),
        ("version_compares", structure.version_compares),
    ],
)
def test_the_figure_does_not_grow(figure: str, measure: object) -> None:
    assert callable(measure)
    items = measure(found)
    assert len(items) <= CEILINGS[figure], items


def test_the_measures_see_what_they_measure() -> None:
    # Each measure finds its kind of fault in a module made for it (so that a zero above is
    # not a measure that sees nothing).
    source = (
        "from mcp_sansio._versions import Era\n"
        "from mcp_sansio.session import _private\n"
        "def f(version, era):\n"
        "    return version >= '2025-06-18' or era is Era.STATELESS\n"
    )
    fake = structure.Module(
        name="mcp_sansio.http.fake",
        path=ROOT / "fake.py",
        is_package=False,
        lines=801,
        generated=False,
        tree=ast.parse(source),
    )
    fake.imports = {"mcp_sansio.session", "mcp_sansio._versions"}
    universe = dict(found)
    universe["mcp_sansio.http.fake"] = fake
    # a cycle: session imports the fake module back
    back = structure.Module(
        name="mcp_sansio.session",
        path=ROOT / "fake2.py",
        is_package=False,
        lines=1,
        generated=False,
        tree=ast.parse("import mcp_sansio.http.fake\n"),
    )
    back.imports = {"mcp_sansio.http.fake"}
    universe["mcp_sansio.session"] = back
    assert ["mcp_sansio.http.fake", "mcp_sansio.session"] in structure.cycles(universe)
    assert structure.private_imports(universe) == [
        "mcp_sansio.http.fake: from mcp_sansio.session import _private"
    ]
    assert ("mcp_sansio.http.fake", 801) in structure.long_modules(universe)
    # (two: the version string and the era member)
    assert structure.version_compares({"mcp_sansio.http.fake": fake}) == [
        "mcp_sansio.http.fake:4",
        "mcp_sansio.http.fake:4",
    ]
