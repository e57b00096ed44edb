"""The flow family: ``progress.*``, ``cancel.*`` and ``resources.*`` (what a side says
about requests in flight and subscriptions)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from hypothesis import strategies as st

from mcp_sansio.testing._faults._ground import Draw, Fault, FaultBuilder, Ground, may_send
from mcp_sansio.testing._wire import Demand

_PROGRESS: Final = "notifications/progress"
_CANCELLED: Final = "notifications/cancelled"
_UPDATED: Final = "notifications/resources/updated"

#: Progress values (any number the schema allows).
PROGRESS_VALUES: Final[st.SearchStrategy[int | float]] = st.one_of(
    st.integers(0, 10**6), st.floats(0, 1e6, allow_nan=False, allow_infinity=False)
)


def unknown_token(g: Ground, draw: Draw) -> Fault | str:
    if not may_send(g.spec, g.sender, _PROGRESS):
        return f"in {g.version} only the {g.receiver.value} sends progress"
    token, way = _stray(g, draw)
    params: dict[str, Any] = {"progressToken": token, "progress": draw(PROGRESS_VALUES, 1)}
    fixed = g.token_request() if g.repairs else None
    return Fault(
        "progress.unknown-token",
        {"jsonrpc": "2.0", "method": _PROGRESS, "params": params},
        Demand("none"),
        f"progress for {way}",
        repaired=None
        if fixed is None
        else {"jsonrpc": "2.0", "method": _PROGRESS, "params": {**params, "progressToken": fixed}},
    )


def _stray(g: Ground, draw: Draw) -> tuple[Any, str]:
    options = g.stray_tokens(draw)
    token, way = draw(st.sampled_from(options), options[0])
    return token, way


#: Cancel params that name no request at all.
_MALFORMED: Final[list[Any]] = [
    {"requestId": None},
    {"requestId": 1.5},
    {"requestId": {"id": 1}},
    None,
    {},
    {"requestId": True},
    {"requestId": []},
    {"reason": "no id"},
]


def unknown_cancel(g: Ground, draw: Draw) -> Fault | str:
    if g.spec.policy.http_cancel_closes_stream and g.transport == "http":
        return "2026-07-28 over HTTP cancels by closing the stream"
    # (The request the repaired twin cancels comes first, so that no id below names it.)
    fixed = g.cancellable() if g.repairs else None
    ways = ["unknown", "malformed"]
    if g.requests_possible():
        ways.insert(1, "answered")
    if g.answers_possible():
        ways.append("the receiver's own")
    target = draw(st.sampled_from(ways), "unknown")
    params: Any
    if target == "answered":
        answered = g.answered_ids()
        params = {"requestId": answered[-1] if answered else g.fresh_id()}
    elif target == "malformed":
        params = draw(st.sampled_from(_MALFORMED), _MALFORMED[0])
    elif target == "the receiver's own":
        params = {"requestId": g.receivers_request()}
    else:
        params = {"requestId": g.fresh_id()}
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": _CANCELLED}
    if params is not None:
        message["params"] = params
    return Fault(
        "cancel.unknown-request",
        message,
        Demand("none"),
        f"a cancel naming no request in flight ({target})",
        repaired=None
        if fixed is None
        else {"jsonrpc": "2.0", "method": _CANCELLED, "params": {"requestId": fixed}},
    )


_NAME: Final = st.text("abcxyz", min_size=1, max_size=6)


def updated_not_subscribed(g: Ground, draw: Draw) -> Fault | str:
    subscribed = g.subscribed_uri()
    uri = draw(
        st.sampled_from(["file:///", "file:///other/", "mcp://x/", "test://probe/"])
        .flatmap(lambda prefix: _NAME.map(lambda n: prefix + n))
        .filter(
            lambda u: subscribed is None or (u != subscribed and not u.startswith(subscribed + "/"))
        )
        | st.sampled_from(["test://probe/never-subscribed", "file:///probe"]).filter(
            lambda u: u != subscribed
        ),
        "test://probe",
    )
    repaired = None
    if subscribed is not None:
        good = draw(st.sampled_from([subscribed, subscribed + "/part"]), subscribed)
        repaired = {"jsonrpc": "2.0", "method": _UPDATED, "params": {"uri": good}}
    return Fault(
        "resources.updated-not-subscribed",
        {"jsonrpc": "2.0", "method": _UPDATED, "params": {"uri": uri}},
        Demand("none"),
        f"resources/updated for {uri!r}, never subscribed to",
        repaired=repaired,
    )


#: The builders of this family, by rule.
FAULTS: Final[Mapping[str, FaultBuilder]] = {
    "progress.unknown-token": unknown_token,
    "cancel.unknown-request": unknown_cancel,
    "resources.updated-not-subscribed": updated_not_subscribed,
}
