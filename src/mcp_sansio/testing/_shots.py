"""The faults fired live: :class:`LiveGround` (a :class:`Conversation` as the ground of a
fault builder of :mod:`._faults`), and the shot builders the probe and the machine fire,
by rule (:func:`shot_builders` at a server, :func:`client_shot_builders` at a client under
test), each drawing its variations from a :data:`~mcp_sansio.testing.Draw` (hypothesis in
the fuzz phase, the canonical choice in the deterministic checks).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

from hypothesis import strategies as st

from mcp_sansio._events import (
    RequestId,
)
from mcp_sansio._state import Role
from mcp_sansio._versions import capability_met
from mcp_sansio.testing._conversation import Conversation
from mcp_sansio.testing._faults import FAULTS, Draw, Fault, FaultBuilder, Ground
from mcp_sansio.testing._faults._ground import may_send
from mcp_sansio.testing._faults.methods import PLAUSIBLE
from mcp_sansio.testing._wire import Shot, dumps, id_key

# ---------------------------------------------------------------------- the live ground


class LiveGround(Ground):
    """A live :class:`Conversation` as the ground of a fault: its state is what the peer
    and the probe said so far; nothing is set up for the builder."""

    def __init__(self, conv: Conversation) -> None:
        self.conv = conv
        self.version = conv.version
        self.sender = conv.peer.peer
        self.transport = conv.transport
        self.repairs = False
        self.max_message_size = None

    def capabilities(self, role: Role) -> Mapping[str, Any] | None:
        if role is self.sender:
            return self.conv.capabilities
        conv = self.conv
        return conv.server_capabilities if role is Role.SERVER else conv.client_capabilities

    def fresh_id(self) -> RequestId:
        return self.conv.fresh_id()

    def meta(self, **overrides: Any) -> dict[str, Any]:
        return self.conv.meta(**overrides)

    def valid(self, kinds: Sequence[str]) -> dict[str, Any]:
        # The probe's own valid message: a request every peer answers at any time.
        return self.request(self.fresh_id(), self.barrier_method)

    def requests_possible(self) -> bool:
        return True

    def answers_possible(self) -> bool:
        return False  # (the peer's requests are answered as they come, by the conversation)

    def answered_ids(self, *, integers: bool = False) -> list[RequestId]:
        return [rid for kind, rid in self.conv.answered_ids() if kind == "int" or not integers]

    def some_request(self) -> tuple[str, Any]:
        return self.barrier_method, None

    def reusable_ids(self) -> list[tuple[RequestId, str]] | str:
        if not self.spec.policy.ids_unique_per_session:
            return "2026-07-28 ids may be reused once answered (in-flight reuse is not probed)"
        used = self.answered_ids()
        if not used:
            return "no request answered yet"
        return [(rid, "an answered request") for rid in used]

    def twin_ids(self) -> list[tuple[RequestId, RequestId]] | str:
        if not self.spec.policy.ids_unique_per_session:
            return "not probed in 2026-07-28"
        taken = {rid for kind, rid in (*self.conv.answered_ids(), *self.conv.used_ids)}
        used = [n for n in self.answered_ids(integers=True) if str(n) not in taken]
        if not used:
            return "no integer id answered yet"
        return [(n, str(n)) for n in used]

    def stray_ids(self) -> list[tuple[RequestId, str]]:
        return [(self.fresh_id(), "a request never sent")]

    def receivers_request(self) -> RequestId | None:
        return None

    def result(self) -> dict[str, Any]:
        return {}

    def initialize_params(self) -> dict[str, Any] | None:
        negotiated = self.conv.negotiated
        return None if negotiated is None else self.conv.initialize_params(negotiated)

    def params_of(
        self,
        method: str,
        *,
        version: str | None = None,
        as_request: bool | None = None,
        sent_by: Role | None = None,
    ) -> Any:
        return dict(PLAUSIBLE[method]) if method in PLAUSIBLE else None

    def params_methods(self) -> list[str]:
        spec = self.spec
        caps = self.capabilities(self.receiver) or {}
        return [
            m
            for m in PLAUSIBLE
            if m in spec.required_params
            and may_send(spec, self.sender, m)
            and capability_met(caps, spec.methods[m].gate)
        ]

    def log_request(self) -> bool:
        return False

    def stray_tokens(self, draw: Draw) -> list[tuple[Any, str]]:
        token = draw(st.integers(0, 2**31) | st.text(max_size=8), "probe-token")
        return [(token, "a token no request of the receiver's carries")]

    def token_request(self) -> Any:
        return None

    def cancellable(self) -> RequestId | None:
        return None

    def subscribed_uri(self) -> str | None:
        return None

    def receiver_versions(self) -> tuple[str, ...] | None:
        return None

    def taken(self, rid: RequestId) -> bool:
        key = id_key(rid)
        return key in self.conv.used_ids or key in dict.fromkeys(self.conv.answered_ids())


def to_shot(fault: Fault | str) -> Shot | str:
    """A fault as the probe fires it."""
    if isinstance(fault, str):
        return fault
    data = fault.message if isinstance(fault.message, bytes) else dumps(fault.message)
    return Shot(fault.rule, data, fault.expect, fault.why)


def _live(builder: FaultBuilder) -> Builder:
    def shot(conv: Conversation, draw: Draw) -> Shot | str:
        return to_shot(builder(LiveGround(conv), draw))

    shot.__name__ = shot.__qualname__ = getattr(builder, "__name__", "shot")
    return shot


#: A shot builder: the near-miss for one rule in the conversation's current state, or why
#: there is none (a string).
Builder = Callable[[Conversation, Draw], "Shot | str"]


# -- the near-misses a server sends to a client under test


#: The rules fired at a server, in the order the probe checks them.
SERVER_RULES: Final = (
    "envelope.parse-error",
    "envelope.invalid-request",
    "envelope.invalid-response",
    "envelope.batch-not-allowed",
    "envelope.empty-batch",
    "envelope.batch-mixed",
    "lifecycle.second-initialize",
    "ids.duplicate-request-id",
    "ids.string-and-int-are-different",
    "response.unknown-id",
    "capability.undeclared-server-capability",
    "capability.undeclared-notification",
    "method.unknown",
    "method.unknown-notification",
    "method.wrong-direction",
    "params.invalid",
    "progress.unknown-token",
    "cancel.unknown-request",
    "meta.missing",
    "meta.unsupported-version",
    "meta.capabilities-missing",
)

#: The rules fired at a client under test (the probe plays its server), in order.
CLIENT_RULES: Final = (
    "envelope.parse-error",
    "envelope.invalid-request",
    "envelope.invalid-response",
    "envelope.batch-not-allowed",
    "envelope.empty-batch",
    "envelope.batch-mixed",
    "ids.duplicate-request-id",
    "ids.string-and-int-are-different",
    "response.unknown-id",
    "method.unknown",
    "method.unknown-notification",
    "progress.unknown-token",
    "cancel.unknown-request",
    "capability.undeclared-client-capability",
    "capability.undeclared-client-subcapability",
    "capability.undeclared-notification",
    "resources.updated-not-subscribed",
    "method.wrong-direction",
    "params.invalid",
)

_BUILDERS: Final[Mapping[str, Builder]] = {name: _live(FAULTS[name]) for name in SERVER_RULES}
_CLIENT_BUILDERS: Final[Mapping[str, Builder]] = {
    name: _live(FAULTS[name]) for name in CLIENT_RULES
}


def client_shot_builders() -> Mapping[str, Builder]:
    """The near-miss builders fired at a client under test (the probe plays its server),
    by the rule each one tests; called like those of :func:`shot_builders`, with a
    :class:`Conversation` whose peer is a client."""
    return _CLIENT_BUILDERS


def shot_builders() -> Mapping[str, Builder]:
    """The near-miss builders, by the rule each one tests. Each is called with an open
    :class:`Conversation` and a :data:`Draw`, and returns a :class:`Shot`, or a string
    saying why the rule does not apply in that conversation."""
    return _BUILDERS
