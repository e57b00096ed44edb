"""What a fault builder builds on: the :class:`Ground`, the :class:`Fault` it returns, and
the :data:`Draw` it takes its variations from."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final, Protocol, TypeVar

import attrs
from hypothesis import strategies as st

from mcp_sansio._events import RequestId
from mcp_sansio._state import LIFECYCLE_METHODS, Role
from mcp_sansio._versions import VERSIONS, Direction, Kind, VersionSpec, capability_met
from mcp_sansio.testing._wire import Demand

T = TypeVar("T")

#: The 2026-07-28 listen opt-in flags, and the notification each admits (the receiver's table,
#: kept here as the sender sees it; tests/test_testing_near_miss.py checks the two agree).
LISTEN_FLAGS: Final[Mapping[str, str]] = {
    "toolsListChanged": "notifications/tools/list_changed",
    "promptsListChanged": "notifications/prompts/list_changed",
    "resourcesListChanged": "notifications/resources/list_changed",
}

#: The direction of what each role sends.
SENDS: Final = {Role.CLIENT: Direction.CLIENT_TO_SERVER, Role.SERVER: Direction.SERVER_TO_CLIENT}


def methods_of(
    spec: VersionSpec, sender: Role, kind: Kind, *, caps: Mapping[str, Any] | None = None
) -> list[str]:
    """The methods of ``kind`` that ``sender`` may send in ``spec`` (not the lifecycle
    ones); with ``caps``, only those whose gate ``caps`` meets."""
    return sorted(
        name
        for name, r in spec.methods.items()
        if r.kind is kind
        and r.direction in (Direction.BOTH, SENDS[sender])
        and name not in LIFECYCLE_METHODS
        and (caps is None or not r.gate or capability_met(caps, r.gate))
    )


def may_send(spec: VersionSpec, sender: Role, method: str) -> bool:
    """Whether ``sender`` may send ``method`` in ``spec``."""
    r = spec.methods.get(method)
    return r is not None and r.direction in (Direction.BOTH, SENDS[sender])


class Draw(Protocol):
    """Where a builder gets its variations: ``draw(strategy, canonical)`` returns a value of
    ``strategy`` (the fuzz phase, the scripts) or ``canonical`` (the deterministic checks)."""

    def __call__(self, strategy: st.SearchStrategy[T], canonical: T, /) -> T: ...


def canonical(strategy: st.SearchStrategy[T], value: T, /) -> T:
    """The :data:`Draw` of the deterministic checks: always the canonical choice."""
    return value


@attrs.frozen
class Fault:
    """One message that breaks one rule, and what the rule demands in answer."""

    rule: str
    """The rule's name."""
    message: Any
    """The message: a JSON value, or ``bytes`` (one line without its ending) for one that
    is not JSON."""
    expect: Demand
    """The answer the rule demands (the first of :attr:`Demand.ids` is the id our own
    Connection answers under)."""
    why: str
    """What is wrong with the message, for reports."""
    repaired: Any = None
    """The message with the broken thing put right (a JSON value), which the receiver must
    accept; ``None`` where the ground has none."""
    data: Mapping[str, Any] | None = None
    """For an error: entries its ``error.data`` must hold."""
    data_keys: tuple[str, ...] = ()
    """For an error: further keys its ``error.data`` must hold."""
    repaired_alone: bool = False
    """Whether :attr:`repaired` is sent alone, on a fresh session (the fault is the state
    the message comes in, not the message)."""


class Ground:
    """The state a fault is sent in, and what a builder may ask of it. Subclassed by the
    live ground (a conversation with a peer) and the script ground (a script for our own
    Connection)."""

    version: str
    """The protocol version spoken."""
    sender: Role
    """The side that sends the fault (the probe, or the script's sender)."""
    transport: str
    """``"stdio"``, ``"http"``, ``"in-process"`` (live), or ``"script"``."""
    repairs: bool
    """Whether the builder should make the repaired twin (a script checks it; a live peer
    does not need it)."""
    max_message_size: int | None
    """The receiver's limit on a message, in bytes, where it is known."""

    @property
    def receiver(self) -> Role:
        """The side that receives the fault (the peer under test)."""
        return self.sender.peer

    @property
    def spec(self) -> VersionSpec:
        """The version's record."""
        return VERSIONS[self.version]

    @property
    def stateless(self) -> bool:
        """Whether every request carries ``_meta`` (the 2026-07-28 era: no session)."""
        return self.spec.policy.request_meta

    @property
    def barrier_method(self) -> str:
        """A request every receiver answers at any time: ``ping`` in a session,
        ``server/discover`` where requests stand alone."""
        return "ping" if self.spec.policy.handshake else "server/discover"

    def capabilities(self, role: Role) -> Mapping[str, Any] | None:
        """What ``role`` declared, or ``None`` when it is not known."""
        raise NotImplementedError

    def fresh_id(self) -> RequestId:
        """An id the sender has not used."""
        raise NotImplementedError

    def meta(self, **overrides: Any) -> dict[str, Any]:
        """A 2026-07-28 request ``_meta`` of the sender's (``version=``, ``capabilities=``:
        those entries replaced, or left out with ``None``)."""
        raise NotImplementedError

    def request(self, rid: Any, method: Any, params: Any = None) -> dict[str, Any]:
        """A request of the sender's: with the ``_meta`` its era wants of a client."""
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
        if self.stateless and self.sender is Role.CLIENT:
            params = dict(params or {})
            params.setdefault("_meta", self.meta())
        if params is not None:
            message["params"] = params
        return message

    def valid(self, kinds: Sequence[str]) -> dict[str, Any]:
        """A valid message of the sender's, of one of ``kinds`` (``"request"``,
        ``"notification"``, ``"response"``), with whatever it needs set up first."""
        raise NotImplementedError

    def requests_possible(self) -> bool:
        """Whether the sender may send a request now."""
        raise NotImplementedError

    def answers_possible(self) -> bool:
        """Whether the sender can answer a request of the receiver's (a script asks one)."""
        raise NotImplementedError

    def answered_ids(self, *, integers: bool = False) -> list[RequestId]:
        """Ids of the sender's requests the receiver has answered, oldest first (only
        integer ids with ``integers``); a script ground makes one."""
        raise NotImplementedError

    def some_request(self) -> tuple[str, Any]:
        """A valid request of the sender's: its method and params (live: the barrier)."""
        raise NotImplementedError

    def reusable_ids(self) -> list[tuple[RequestId, str]] | str:
        """Ids of the sender's that may not be used again now, each with what it was (an
        answered request, a listen in flight, ...), oldest first; or why there are none."""
        raise NotImplementedError

    def twin_ids(self) -> list[tuple[RequestId, RequestId]] | str:
        """Pairs ``(used, twin)``: an id of the sender's request and its twin of the other
        type (``7`` and ``"7"``), the twin unused; or why there are none."""
        raise NotImplementedError

    def stray_ids(self) -> list[tuple[RequestId, str]]:
        """Ids that name no request of the receiver's in flight, each with how (never
        sent, already answered, ...)."""
        raise NotImplementedError

    def receivers_request(self) -> RequestId | None:
        """A request of the receiver's left in flight, for the sender to answer (``None``
        where the ground cannot make one: a live peer asks what it asks)."""
        raise NotImplementedError

    def result(self) -> dict[str, Any]:
        """A valid result of the receiver's request (:meth:`receivers_request`), or of
        ``ping``."""
        return {"resultType": "complete"} if self.stateless else {}

    def initialize_params(self) -> dict[str, Any] | None:
        """The params of the sender's ``initialize`` of the session, or ``None`` when the
        session is not initialized."""
        raise NotImplementedError

    def params_of(
        self,
        method: str,
        *,
        version: str | None = None,
        as_request: bool | None = None,
        sent_by: Role | None = None,
    ) -> Any:
        """Valid params of ``method`` (of ``version``, by default this one) as ``sent_by``
        (default: the sender) sends it (``as_request``: as a request or a notification,
        whatever its kind); live: plausible ones, or ``None``."""
        raise NotImplementedError

    def sends_unsolicited(self, method: str) -> bool:
        """Whether the sender may send the notification ``method`` in this state, as far
        as anything but its capability goes (an update needs a subscription, a 2026-07-28
        list change a listen stream, a 2026-07-28 log message a request that set a level:
        :meth:`log_request`)."""
        policy = self.spec.policy
        if method == "notifications/resources/updated":
            return False
        if policy.listen_streams and method in LISTEN_FLAGS.values():
            return False
        if method == "notifications/message" and policy.log_level_in_meta:
            return self.log_request()
        return True

    def params_methods(self) -> list[str]:
        """Requests of the sender's whose params the version's schema requires, and for
        which :meth:`params_of` has valid ones."""
        raise NotImplementedError

    def prepare(self, method: str) -> None:
        """Bring the state to where the sender may send ``method`` (a script opens the
        session, unless ``method`` is ``initialize``); a live ground is there already."""

    def log_request(self) -> bool:
        """2026-07-28: a request of the client's in flight that set a log level (so that
        the server may log); ``False`` where the ground cannot make one."""
        raise NotImplementedError

    def stray_tokens(self, draw: Draw) -> list[tuple[Any, str]]:
        """Progress tokens no request of the receiver's in flight carries, each with how."""
        raise NotImplementedError

    def token_request(self) -> Any:
        """The progress token of a request of the receiver's left in flight (``None`` where
        the ground cannot make one)."""
        raise NotImplementedError

    def cancellable(self) -> RequestId | None:
        """A request the sender may cancel (``None`` where the ground cannot make one)."""
        raise NotImplementedError

    def subscribed_uri(self) -> str | None:
        """A resource the receiver subscribed to (``None`` where the ground cannot make
        one)."""
        raise NotImplementedError

    def receiver_versions(self) -> tuple[str, ...] | None:
        """The versions the receiver speaks, or ``None`` when they are not known."""
        raise NotImplementedError

    def taken(self, rid: RequestId) -> bool:
        """Whether ``rid`` was used by the sender already."""
        raise NotImplementedError


#: A fault builder: the fault of one rule on this ground, or why there is none (a string).
FaultBuilder = Callable[[Ground, Draw], "Fault | str"]
