"""``python -m mcp_sansio``: the command line, ``mcp-sansio`` (see :mod:`mcp_sansio._cli`).

With no command it runs the demonstration: our client and our example server talking over
stdio, in both eras of the protocol. ``serve`` runs the example server; ``call`` runs one
method or tool on any server and prints the result.
"""

from __future__ import annotations

import sys

from ._cli import main

__all__ = ["main"]

if __name__ == "__main__":
    sys.exit(main())
