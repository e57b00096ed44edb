"""The lifecycle family: ``lifecycle.*`` (the initialize handshake, in the initialize era)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from mcp_sansio.testing._faults._ground import Draw, Fault, FaultBuilder, Ground
from mcp_sansio.testing._wire import refusal


def second_initialize(g: Ground, draw: Draw) -> Fault | str:
    if not g.spec.policy.handshake:
        return f"{g.version} has no initialize"
    params = g.initialize_params()
    if params is None:
        return "the session is not initialized"
    rid = g.fresh_id()
    message = g.request(rid, "initialize", params)
    return Fault(
        "lifecycle.second-initialize",
        message,
        refusal("lifecycle.second-initialize", (rid,)),
        "initialize again, in an initialized session",
        repaired=message,
        repaired_alone=True,
    )


#: The builders of this family, by rule.
FAULTS: Final[Mapping[str, FaultBuilder]] = {
    "lifecycle.second-initialize": second_initialize,
}
