"""The version of mcp-sansio, and which build of its core is installed."""

from __future__ import annotations

__version__ = "0.1.0.dev0"

# The modules that a build with MCP_SANSIO_COMPILE=1 compiles with mypyc (setup.py).
CORE_MODULES = (
    "_connection",
    "_jsonrpc",
    "_framing",
    "_checks",
    "_state",
    "_ids",
    "_names",
    "_requests",
    "_gates",
    "_negotiation",
    "_method_rules",
    "_policy",
)


def compiled_core() -> tuple[str, ...]:
    """The core modules that are compiled extensions here (all of them in a compiled build,
    none in the pure-Python one)."""
    import importlib

    return tuple(
        name
        for name in CORE_MODULES
        if not str(importlib.import_module(f"mcp_sansio.{name}").__file__).endswith(".py")
    )


def build() -> str:
    """Which build is installed, in words: ``"pure Python"`` or ``"compiled core (mypyc)"``."""
    done = compiled_core()
    if not done:
        return "pure Python"
    if len(done) == len(CORE_MODULES):
        return "compiled core (mypyc)"
    return f"partly compiled core ({', '.join(done)})"
