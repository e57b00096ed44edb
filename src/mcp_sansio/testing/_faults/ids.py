"""The ids family: ``ids.*`` and ``response.*`` (request ids, and the responses that name
them)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from hypothesis import strategies as st

from mcp_sansio.testing._faults._ground import Draw, Fault, FaultBuilder, Ground
from mcp_sansio.testing._wire import Demand, refusal


def duplicate_id(g: Ground, draw: Draw) -> Fault | str:
    options = g.reusable_ids()
    if isinstance(options, str):
        return options
    rid, way = draw(st.sampled_from(options), options[-1])
    method, params = g.some_request()
    message = g.request(rid, method, params)
    # (A duplicate of a listen in flight is refused as a stream that exists: under null.)
    reply = None if way == "a listen in flight" else rid
    return Fault(
        "ids.duplicate-request-id",
        message,
        refusal("ids.duplicate-request-id", (reply,)),
        f"{method} reusing id {rid!r} of {way}",
        repaired=dict(message, id=g.fresh_id()) if g.repairs else None,
    )


def string_and_int(g: Ground, draw: Draw) -> Fault | str:
    pairs = g.twin_ids()
    if isinstance(pairs, str):
        return pairs
    used, twin = draw(st.sampled_from(pairs), pairs[-1])
    message = g.request(twin, g.barrier_method)
    what = "the string of an integer id" if isinstance(used, int) else "the integer of a string id"
    return Fault(
        "ids.string-and-int-are-different",
        message,
        Demand("result", (), (twin,)),
        f"{g.barrier_method} with id {twin!r}, {what} already used",
        repaired=message,
    )


def unknown_response(g: Ground, draw: Draw) -> Fault | str:
    options = g.stray_ids()
    rid, way = draw(st.sampled_from(options), options[0])
    bodies: list[dict[str, Any]] = [
        {"result": g.result()},
        {"error": {"code": -32603, "message": "stray"}},
    ]
    body = draw(st.sampled_from(bodies), bodies[0])
    pending = g.receivers_request()
    return Fault(
        "response.unknown-id",
        {"jsonrpc": "2.0", "id": rid, **body},
        Demand("none"),
        f"a response to {way}",
        repaired=None if pending is None else {"jsonrpc": "2.0", "id": pending, **body},
    )


#: The builders of this family, by rule.
FAULTS: Final[Mapping[str, FaultBuilder]] = {
    "ids.duplicate-request-id": duplicate_id,
    "ids.string-and-int-are-different": string_and_int,
    "response.unknown-id": unknown_response,
}
