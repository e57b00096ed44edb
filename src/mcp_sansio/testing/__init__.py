"""Tools for testing MCP peers and this library with hypothesis (an optional dependency).

Nothing in the core imports this package; importing it needs ``hypothesis``
(``pip install mcp-sansio[testing]``).

- :func:`from_schema` -- JSON values valid against a definition of a version's schema;
- :func:`messages` -- whole JSON-RPC messages of a version;
- :func:`params`, :func:`results` -- the params and results of one method;
- :func:`json_values` -- arbitrary JSON values;
- :data:`RULES`, :func:`rule`, :func:`rules_for` -- the catalog of named protocol rules
  (:class:`Rule`), shared by the strategies, the probe and its report;
- :func:`near_misses` -- near-miss invalid messages (:class:`NearMiss`), each breaking
  one named rule and valid in every other respect, with the exchange that sets the state
  (:class:`Line`, :class:`Scenario`), what the receiver must answer (:class:`Expect`) and
  a repaired twin the receiver must accept.
"""

from __future__ import annotations

from mcp_sansio.testing._near_miss import (
    MIN_MESSAGE_SIZE,
    Expect,
    Line,
    NearMiss,
    Scenario,
    full_capabilities,
    near_misses,
)
from mcp_sansio.testing._rules import RULES, Level, Reply, Rule, rule, rules_for
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
    "MIN_MESSAGE_SIZE",
    "RULES",
    "Expect",
    "Level",
    "Line",
    "NearMiss",
    "Reply",
    "Rule",
    "Scenario",
    "full_capabilities",
    "near_misses",
    "rule",
    "rules_for",
    "definition_names",
    "from_schema",
    "json_values",
    "load_schema",
    "messages",
    "params",
    "results",
    "schema_dir",
]
