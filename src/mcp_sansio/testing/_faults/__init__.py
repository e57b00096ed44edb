"""The near-miss faults: one builder per rule, for two runners.

A *fault builder* makes the message that breaks one rule, what the rule demands in answer
(a :class:`~mcp_sansio.testing.Demand`), why the message is wrong, and, where the ground
allows, its repaired twin. It is written once, against a :class:`Ground`: the state the
message is sent in, and what the builder may ask of it (a fresh id, an answered request, a
valid message of the sender's, the capabilities each side declared). Two grounds run it:

- a live conversation with a peer under test (``_shots.py``: the probe and
  :class:`~mcp_sansio.testing.PeerMachine` fire the fault as a
  :class:`~mcp_sansio.testing.Shot`);
- a script played against our own :class:`~mcp_sansio.Connection` (``_near_miss.py``:
  :func:`~mcp_sansio.testing.near_misses` wraps it in a
  :class:`~mcp_sansio.testing.NearMiss`, after the setup the rule needs).

A live ground reads the state the peer is in; a script ground makes the state the builder
asks for. Each draws its variations from a :data:`Draw`: hypothesis in the fuzz phase and
the scripts, the canonical choice in the probe's deterministic checks.

The families: :mod:`.envelope`, :mod:`.ids` (ids and responses), :mod:`.lifecycle`,
:mod:`.methods` (methods, params and capabilities), :mod:`.flow` (progress, cancellation,
subscriptions), :mod:`.stateless` (the 2026-07-28 request ``_meta``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from mcp_sansio.testing._faults import envelope, flow, ids, lifecycle, methods, stateless
from mcp_sansio.testing._faults._ground import Draw, Fault, FaultBuilder, Ground, canonical

__all__ = ["FAULTS", "Draw", "Fault", "FaultBuilder", "Ground", "canonical"]

#: Every fault builder, by rule: the one place each rule's fault is built.
FAULTS: Final[Mapping[str, FaultBuilder]] = {
    **envelope.FAULTS,
    **lifecycle.FAULTS,
    **ids.FAULTS,
    **methods.FAULTS,
    **flow.FAULTS,
    **stateless.FAULTS,
}
