"""One fault builder per rule (issue 18, item 6): every near miss the probe fires live and
every near miss of a script for our own Connection, for a rule a single message breaks,
comes from the same builder of ``mcp_sansio.testing._faults``; the deterministic checks
fire its canonical variation."""

from __future__ import annotations

import functools
from collections.abc import Callable

import pytest

pytest.importorskip("hypothesis")

from mcp_sansio import Role
from mcp_sansio.testing import RULES, FunctionTarget, client_shot_builders, shot_builders
from mcp_sansio.testing._conversation import Conversation
from mcp_sansio.testing._faults import FAULTS, canonical
from mcp_sansio.testing._near_miss import _GENERATORS
from mcp_sansio.testing._script_faults import from_fault
from mcp_sansio.testing._shots import LiveGround, to_shot


def test_every_fault_builder_is_a_rule_of_the_catalog() -> None:
    assert set(FAULTS) <= set(RULES)


def test_the_live_shots_are_the_fault_builders() -> None:
    # Both tables of shots hold only rules with a fault builder, and nothing else builds one;
    # the oversized line (past 4 MiB) has its own check, not a shot of the fuzz phase.
    shots = set(shot_builders()) | set(client_shot_builders())
    assert shots <= set(FAULTS)
    assert set(FAULTS) - shots == {"envelope.oversized-message"}


def test_the_scripts_of_those_rules_are_the_fault_builders() -> None:
    for name in FAULTS:
        generator = _GENERATORS[name]
        assert isinstance(generator, functools.partial), name
        assert generator.func is from_fault, name
        assert generator.keywords == {"name": name}, name


def _silent() -> Callable[[bytes], list[bytes]]:
    return lambda line: []


@pytest.mark.parametrize("version", ["2025-11-25", "2026-07-28"])
def test_a_live_shot_is_the_canonical_fault(version: str) -> None:
    # What the probe's check fires is what the builder makes on a live ground, canonically.
    builders = shot_builders()
    for name in ("envelope.parse-error", "envelope.invalid-request", "method.unknown"):
        with Conversation(FunctionTarget(_silent), version, timeout=0.1, startup=0.1) as conv:
            fired = builders[name](conv, canonical)
        with Conversation(FunctionTarget(_silent), version, timeout=0.1, startup=0.1) as conv:
            built = to_shot(FAULTS[name](LiveGround(conv), canonical))
        assert fired == built, name
        assert not isinstance(fired, str)
        assert fired.rule == name


def test_the_probe_plays_the_receiver_it_is_given() -> None:
    with Conversation(FunctionTarget(_silent), "2025-11-25", timeout=0.1, startup=0.1) as conv:
        ground = LiveGround(conv)
        assert (ground.sender, ground.receiver) == (Role.CLIENT, Role.SERVER)
