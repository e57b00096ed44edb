"""Tools for testing MCP peers and this library with hypothesis (an optional dependency).

Nothing in the core imports this package; importing it needs ``hypothesis``, the ``testing``
extra (from a checkout: ``pip install '.[testing]'``).

- :func:`from_schema` -- JSON values valid against a definition of a version's schema;
- :func:`messages` -- whole JSON-RPC messages of a version;
- :func:`params`, :func:`results` -- the params and results of one method;
- :func:`json_values` -- arbitrary JSON values;
- :data:`RULES`, :func:`rule`, :func:`rules_for` -- the catalog of named protocol rules
  (:class:`Rule`), shared by the strategies, the probe and its report;
- :func:`near_misses` -- near-miss invalid messages (:class:`NearMiss`), each breaking
  one named rule and valid in every other respect, with the exchange that sets the state
  (:class:`Line`, :class:`Scenario`), what the receiver must answer (:class:`Expect`) and
  a repaired twin the receiver must accept;
- :class:`PeerMachine` -- a hypothesis state machine that drives a live server (a
  :class:`Target`: :class:`StdioTarget`, :class:`HttpTarget`, :class:`ConnectionTarget`,
  :class:`FunctionTarget`) or client (:class:`ClientTarget`, :class:`ClientConnectionTarget`)
  through legal and near-miss
  sequences, judged by our own Connection (:class:`Conversation`);
- :func:`run_probe` -- the ``mcp-sansio probe`` command's checks and report;
- :func:`run_client_probe` -- the same for a client (``mcp-sansio probe --client``): a
  :class:`ClientTarget` starts the client, whose server is the probe, and the near misses
  of :func:`client_shot_builders` go to the client.
"""

from __future__ import annotations

from mcp_sansio.testing._client_probe import run_client_probe
from mcp_sansio.testing._machine import (
    PROBE_SERVER_CAPABILITIES,
    Conversation,
    Demand,
    Draw,
    PeerMachine,
    PeerViolation,
    SessionRefused,
    Shot,
    Violation,
    WireLine,
    agrees,
    classify,
    client_shot_builders,
    replay,
    shot_builders,
)
from mcp_sansio.testing._near_miss import (
    MIN_MESSAGE_SIZE,
    Expect,
    Line,
    NearMiss,
    Scenario,
    full_capabilities,
    near_misses,
)
from mcp_sansio.testing._probe import PROBE_RULES, Report, Row, all_rules, charge, run_probe
from mcp_sansio.testing._rules import (
    RULES,
    Binds,
    Citation,
    Level,
    Reply,
    Rule,
    Severity,
    rule,
    rules_for,
)
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
from mcp_sansio.testing._targets import (
    SERVER_PLACEHOLDER,
    Channel,
    ClientConnectionTarget,
    ClientTarget,
    ConnectionTarget,
    FunctionTarget,
    HttpTarget,
    Incoming,
    StdioTarget,
    Target,
    TargetError,
)

__all__ = [
    "EXTRA_KEYS",
    "PROBE_RULES",
    "PROBE_SERVER_CAPABILITIES",
    "SERVER_PLACEHOLDER",
    "Channel",
    "ClientConnectionTarget",
    "ClientTarget",
    "ConnectionTarget",
    "Conversation",
    "Demand",
    "Draw",
    "FunctionTarget",
    "HttpTarget",
    "Incoming",
    "PeerMachine",
    "PeerViolation",
    "Report",
    "Row",
    "SessionRefused",
    "Shot",
    "StdioTarget",
    "Target",
    "TargetError",
    "Violation",
    "WireLine",
    "agrees",
    "all_rules",
    "charge",
    "classify",
    "client_shot_builders",
    "replay",
    "run_client_probe",
    "run_probe",
    "shot_builders",
    "MIN_MESSAGE_SIZE",
    "RULES",
    "Binds",
    "Citation",
    "Expect",
    "Level",
    "Line",
    "NearMiss",
    "Reply",
    "Rule",
    "Scenario",
    "Severity",
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
