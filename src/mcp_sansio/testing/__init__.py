"""Tools for testing MCP peers and this library with hypothesis (an optional dependency).

Nothing in the core imports this package; importing it needs ``hypothesis``
(``pip install mcp-sansio[testing]``).

- :func:`from_schema` -- JSON values valid against a definition of a version's schema;
- :func:`messages` -- whole JSON-RPC messages of a version;
- :func:`params`, :func:`results` -- the params and results of one method;
- :func:`json_values` -- arbitrary JSON values.
"""

from __future__ import annotations

from mcp_sansio.testing._schema_strategies import (
    EXTRA_KEYS,
    definition_names,
    from_schema,
    json_values,
    load_schema,
    messages,
    params,
    results,
    schema_dir,
)

__all__ = [
    "EXTRA_KEYS",
    "definition_names",
    "from_schema",
    "json_values",
    "load_schema",
    "messages",
    "params",
    "results",
    "schema_dir",
]
