"""The build backend of mcp-sansio: setuptools, plus an opt-in compiled core.

With ``MCP_SANSIO_COMPILE=1`` in the environment of a build (``pip install .``,
``python -m build``, tox's ``compiled`` environment), the protocol core (the modules in
``setup.py``'s ``COMPILED``) is compiled with mypyc, and mypy is added to the build's
requirements for that build only. Without it, the build is pure Python and needs nothing
but setuptools. docs/performance.rst says what the compiled core buys and how to check
which one is installed.
"""

from __future__ import annotations

import os
from typing import Any

from setuptools.build_meta import *  # noqa: F403 (every hook setuptools has)

# mypyc's output depends on the mypy that made it: a floor known to build the core. mypyc
# type-checks the core as it compiles it, so the runtime dependencies must be there too.
COMPILE_REQUIREMENTS = ["mypy>=1.15", "attrs>=23.1", "cattrs>=23.2", "orjson>=3.9"]


def compiling() -> bool:
    """Whether this build compiles the core (``MCP_SANSIO_COMPILE=1``)."""
    return os.environ.get("MCP_SANSIO_COMPILE", "") == "1"


# setuptools' own hooks would run setup.py to find its setup_requires (it has none), and
# setup.py needs mypyc when compiling: so the requirements are given here, without it.
def get_requires_for_build_wheel(config_settings: dict[str, Any] | None = None) -> list[str]:
    """What a build needs beyond ``[build-system] requires``: mypy when compiling."""
    return list(COMPILE_REQUIREMENTS) if compiling() else []


def get_requires_for_build_editable(config_settings: dict[str, Any] | None = None) -> list[str]:
    """What an editable build needs beyond ``[build-system] requires``: mypy when compiling."""
    return list(COMPILE_REQUIREMENTS) if compiling() else []
