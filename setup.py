"""Only for the opt-in compiled core; everything else is in pyproject.toml.

``MCP_SANSIO_COMPILE=1`` compiles the modules below with mypyc (build_backend/ adds mypy to
the build's requirements). They are the protocol core that every message crosses; the rest
(typed messages, adapters, the example server) stays Python. Without the variable this file
declares nothing and the wheel is pure Python.
"""

from __future__ import annotations

import os

from setuptools import setup

COMPILED = [
    "src/mcp_sansio/_connection.py",
    "src/mcp_sansio/_jsonrpc.py",
    "src/mcp_sansio/_framing.py",
    "src/mcp_sansio/_checks.py",
    "src/mcp_sansio/_state.py",
    "src/mcp_sansio/_ids.py",
    "src/mcp_sansio/_names.py",
    "src/mcp_sansio/_requests.py",
    "src/mcp_sansio/_gates.py",
    "src/mcp_sansio/_negotiation.py",
    "src/mcp_sansio/_method_rules.py",
    "src/mcp_sansio/_policy.py",
]

if os.environ.get("MCP_SANSIO_COMPILE", "") == "1":
    from mypyc.build import mypycify

    setup(ext_modules=mypycify(COMPILED, opt_level="3", group_name="mcp_sansio_core"))
else:
    setup()
