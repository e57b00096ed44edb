"""Capability gating: which methods each side may use now, and why not when it may not.

The version's table and the declared capabilities decide the *gated* set per sender and kind
(they cannot change within a session, so it is computed once and shared, read-only, by the
connections that agree on all of its inputs); the lifecycle table's row for the state narrows
it (:func:`refresh`, after every state change). :func:`method_fault` explains a refusal.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import orjson

from ._checks import Fault, undeclared_is_soft
from ._errors import ErrorCode, LocalProtocolError
from ._names import INITIALIZE, INITIALIZED
from ._requests import Session
from ._state import (
    ANY,
    LIFECYCLE_METHODS,
    NOTIFICATIONS_ALLOWED,
    REQUESTS_ALLOWED,
    TRANSITIONS,
    Allowed,
    Every,
    Role,
    State,
    Trigger,
)
from ._versions import Direction, Kind, capability_met

__all__ = ["allowed_in", "compute_gates", "method_fault", "refresh", "transition"]

_KIND_REQUEST: Final = Kind.REQUEST
_KIND_NOTIFICATION: Final = Kind.NOTIFICATION
_ROLE_CLIENT: Final = Role.CLIENT
_INVALID: Final = ErrorCode.INVALID_REQUEST
_NOT_FOUND: Final = ErrorCode.METHOD_NOT_FOUND
_DIRECTION_OF: Final = {
    Role.CLIENT: Direction.CLIENT_TO_SERVER,
    Role.SERVER: Direction.SERVER_TO_CLIENT,
}
# The rows of the lifecycle tables where the text states only a SHOULD NOT of the sender,
# and the receiver may serve what it sends: what the peer may send there, unless
# ``Config.strict``. (What we send keeps the tables' rows.)
LENIENT_REQUESTS: Final[Mapping[tuple[State, Role], Allowed]] = {
    # "The server SHOULD NOT send requests other than pings and logging before receiving
    # the initialized notification" (2024-11-05 to 2025-11-25, Basic > Lifecycle >
    # Initialization): once its initialize result is out, the version and both sides'
    # capabilities are agreed, and a client can check and serve the request.
    (State.INITIALIZED, Role.SERVER): ANY,
}

# The gates computed per (version, application methods, peer, waived methods, strict, both
# sides' capabilities): a read-only table, shared by the connections that agree on all of
# them. Bounded.
GATES: dict[tuple[Any, ...], dict[tuple[Role, Kind], frozenset[str]]] = {}
GATES_MAX: Final = 256


def allowed_in(s: Session, state: State, sender: Role, kind: Kind) -> Allowed:
    """The lifecycle table's row for ``sender`` in ``state``; for the peer's requests,
    :data:`LENIENT_REQUESTS` where it has the row (unless ``strict``)."""
    if kind is _KIND_REQUEST:
        value = REQUESTS_ALLOWED[(state, sender)]
        if sender is s.peer and not s.config.strict:
            return LENIENT_REQUESTS.get((state, sender), value)
        return value
    return NOTIFICATIONS_ALLOWED[(state, sender)]


def transition(s: Session, trigger: Trigger) -> None:
    """Move the lifecycle (:data:`~mcp_sansio._state.TRANSITIONS`) and recompute what each
    side may use."""
    try:
        s.state = TRANSITIONS[s.state][trigger]
    except KeyError:  # pragma: no cover - callers check the state first
        raise LocalProtocolError(
            f"{trigger.value} is not possible in state {s.state.value}"
        ) from None
    refresh(s)


def refresh(s: Session) -> None:
    """Recompute the methods each side may use now (after every state change)."""
    state = s.state
    gated = s.gated
    known = s.known

    def allowed(sender: Role, kind: Kind) -> frozenset[str]:
        value = allowed_in(s, state, sender, kind)
        if isinstance(value, Every):
            return gated[(sender, kind)] | value.also
        narrowed = gated.get((sender, kind))
        if narrowed is not None:  # capabilities known: they gate the lifecycle's set too
            return value & (narrowed | LIFECYCLE_METHODS)
        return value & known

    s.own_requests = allowed(s.role, _KIND_REQUEST)
    s.own_notes = allowed(s.role, _KIND_NOTIFICATION)
    s.peer_requests = allowed(s.peer, _KIND_REQUEST)
    s.peer_notes = allowed(s.peer, _KIND_NOTIFICATION)


def compute_gates(s: Session) -> None:
    """Precompute, per sender and kind, the methods the version and the declared
    capabilities allow (they cannot change during the session)."""
    spec = s.spec
    assert spec is not None
    cfg = s.config
    lenient = cfg.accept_undeclared
    strict = cfg.strict
    key = (
        spec.version,
        cfg.methods,
        s.peer,
        lenient,
        strict,
        _fingerprint(s.client_caps),
        _fingerprint(s.server_caps),
    )
    cached = GATES.get(key)
    if cached is not None:  # a server serving many stateless requests computes it once
        s.gated = cached
        return
    gated: dict[tuple[Role, Kind], frozenset[str]] = {}
    for sender in Role:
        for kind in Kind:
            holder = sender.peer if kind is _KIND_REQUEST else sender
            caps = s.client_caps if holder is _ROLE_CLIENT else s.server_caps
            waived = lenient if sender is s.peer else frozenset()
            # The peer's notifications of a sub-capability it did not declare, where
            # the text says only SHOULD (see undeclared_is_soft): served, unless strict.
            soft = sender is s.peer and kind is _KIND_NOTIFICATION and not strict
            gated[(sender, kind)] = frozenset(
                name
                for name, rule in spec.methods.items()
                if rule.kind is kind
                and name not in LIFECYCLE_METHODS
                and rule.direction in (Direction.BOTH, _DIRECTION_OF[sender])
                and (
                    not rule.gate
                    or caps is None
                    or name in waived
                    or capability_met(caps, rule.gate)
                    or (soft and undeclared_is_soft(spec, rule.gate, caps))
                )
            )
    s.gated = gated
    if len(GATES) >= GATES_MAX:
        GATES.clear()
    GATES[key] = gated


def method_fault(s: Session, sender: Role, kind: Kind, method: str) -> Fault:
    """Why ``sender`` may not use ``method`` now (called only when it may not)."""
    noun = "request" if kind is _KIND_REQUEST else "notification"
    cfg = s.config
    specs = cfg.specs
    if not any(method in specs[v].methods for v in cfg.versions):
        return _NOT_FOUND, (
            f"Method not found: {method!r} is not part of protocol versions "
            f"{', '.join(cfg.versions)}"
        )
    if method == INITIALIZE:
        return _INVALID, "Invalid request: initialize was already received in this session"
    if method == INITIALIZED:
        return _INVALID, "Invalid request: notifications/initialized is not expected now"
    allowed = allowed_in(s, s.state, sender, kind)
    if not isinstance(allowed, Every) and method not in allowed:
        names = ", ".join(sorted(allowed)) or "none"
        return _INVALID, (
            f"Invalid request: {method!r} is not allowed from the {sender.value} in state "
            f"{s.state.value} ({noun}s allowed now: {names})"
        )
    spec = s.spec
    assert spec is not None
    rule = spec.methods.get(method)
    if rule is None or rule.kind is not kind:
        return _NOT_FOUND, (
            f"Method not found: {method!r} is not a {noun} of protocol version {spec.version}"
        )
    if rule.direction not in (Direction.BOTH, _DIRECTION_OF[sender]):
        return _NOT_FOUND, f"Method not found: {method!r} is not sent by the {sender.value}"
    holder = sender.peer if kind is _KIND_REQUEST else sender
    return _NOT_FOUND, (
        f"Method not found: {method!r} needs the {holder.value} capability "
        f"{'.'.join(rule.gate)!r}, which the {holder.value} did not declare"
    )


def _fingerprint(capabilities: Mapping[str, Any] | None) -> bytes | None:
    """A hashable stand-in for a capabilities object: its JSON, keys sorted. (Capabilities
    are JSON by construction: the configured ones are checked by a round trip through
    orjson, the peer's were decoded by it; ``default=dict`` reads the configured ones'
    read-only view.)"""
    if capabilities is None:
        return None
    return orjson.dumps(capabilities, default=dict, option=orjson.OPT_SORT_KEYS)
