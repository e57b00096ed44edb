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
from mcp_sansio.testing._conversation import Conversation
from mcp_sansio.testing._faults import Draw
from mcp_sansio.testing._http_target import HttpTarget
from mcp_sansio.testing._inprocess_target import (
    ClientConnectionTarget,
    ConnectionTarget,
    FunctionTarget,
)
from mcp_sansio.testing._near_miss import near_misses
from mcp_sansio.testing._peer_machine import PeerMachine, SessionRefused
from mcp_sansio.testing._probe import run_probe
from mcp_sansio.testing._replay import agrees, replay
from mcp_sansio.testing._report import Report, Row, all_rules, charge
from mcp_sansio.testing._rules import (
    PROBE_RULES,
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
from mcp_sansio.testing._scenario import (
    MIN_MESSAGE_SIZE,
    Expect,
    Line,
    NearMiss,
    Scenario,
    full_capabilities,
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
from mcp_sansio.testing._shots import client_shot_builders, shot_builders
from mcp_sansio.testing._stdio_target import SERVER_PLACEHOLDER, ClientTarget, StdioTarget
from mcp_sansio.testing._targets import Channel, Incoming, Target, TargetError
from mcp_sansio.testing._wire import (
    PROBE_SERVER_CAPABILITIES,
    Demand,
    PeerViolation,
    Shot,
    Violation,
    WireLine,
    classify,
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
