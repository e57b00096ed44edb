"""The lifecycle state machine, as data.

Two rules, after h11: every lifecycle transition lives in this file, and this file does not
know which side we are. States describe the *session*, which both sides share; a message
moves it whether we send it or receive it.

- :data:`TRANSITIONS` maps ``(state, trigger)`` to the next state. A trigger is a lifecycle
  message (the ``initialize`` request, its result, ``notifications/initialized``, the
  ``server/discover`` probe and its outcome, the first stateless request).
- :data:`REQUESTS_ALLOWED` and :data:`NOTIFICATIONS_ALLOWED` map ``(state, sender)`` to the
  methods that sender may use in that state: a set of names, or :data:`ANY` for every method
  the negotiated version and capabilities allow.

Closing (the peer's EOF) and the error state are flags beside the lifecycle, not states in
it: a half-closed session keeps its lifecycle state, and answers may still go out.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import Final

from ._names import CANCELLED, INITIALIZE, INITIALIZED, LOG_MESSAGE, PING, PROGRESS

__all__ = [
    "ANY",
    "NOTIFICATIONS_ALLOWED",
    "REQUESTS_ALLOWED",
    "LIFECYCLE_METHODS",
    "TRANSITIONS",
    "Every",
    "Role",
    "State",
    "Trigger",
]


class Role(enum.Enum):
    """Which side of MCP a connection plays."""

    CLIENT = "client"
    SERVER = "server"

    @property
    def peer(self) -> Role:
        """The other role."""
        return Role.SERVER if self is Role.CLIENT else Role.CLIENT


class State(enum.Enum):
    """The lifecycle state of a session."""

    IDLE = "IDLE"
    """Nothing has happened yet (or a failed ``initialize`` / probe has been undone)."""
    PROBING = "PROBING"
    """A client that speaks both eras has sent ``server/discover`` and waits."""
    INITIALIZING = "INITIALIZING"
    """``initialize`` is in flight; only ``ping`` (and server logging) may pass."""
    INITIALIZED = "INITIALIZED"
    """The ``initialize`` result is out; the client owes ``notifications/initialized``.
    The client may send anything now; the server only pings and logs until it arrives."""
    OPERATING = "OPERATING"
    """Initialize era, handshake done: everything the capabilities allow."""
    STATELESS = "STATELESS"
    """2026-07-28 era: every request stands alone."""


class Trigger(enum.Enum):
    """The lifecycle messages that move the state."""

    INITIALIZE = "initialize request"
    INITIALIZE_RESULT = "initialize result"
    INITIALIZE_ERROR = "initialize error"
    INITIALIZED = "notifications/initialized"
    PROBE = "server/discover probe"
    PROBE_MODERN = "probe answered: stateless era"
    PROBE_LEGACY = "probe failed: initialize era"
    STATELESS_REQUEST = "stateless request"


class Every:
    """The type of :data:`ANY`: every method the negotiated version and the declared
    capabilities allow, and the lifecycle methods in :attr:`also` besides (``ANY`` alone
    never includes those). ``ANY | {"notifications/initialized"}`` adds one."""

    __slots__ = ("also",)

    def __init__(self, also: frozenset[str] = frozenset()) -> None:
        self.also: Final = also

    def __or__(self, names: frozenset[str]) -> Every:
        return Every(self.also | names)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Every) and other.also == self.also

    def __hash__(self) -> int:
        return hash(("Every", self.also))

    def __repr__(self) -> str:
        return f"ANY | {set(self.also)}" if self.also else "ANY"


#: Every method the version and the negotiated capabilities allow.
ANY: Final = Every()

Allowed = frozenset[str] | Every

TRANSITIONS: Final[Mapping[State, Mapping[Trigger, State]]] = {
    State.IDLE: {
        Trigger.INITIALIZE: State.INITIALIZING,
        Trigger.PROBE: State.PROBING,
        Trigger.STATELESS_REQUEST: State.STATELESS,
    },
    State.PROBING: {
        Trigger.PROBE_MODERN: State.STATELESS,
        Trigger.PROBE_LEGACY: State.IDLE,
    },
    State.INITIALIZING: {
        Trigger.INITIALIZE_RESULT: State.INITIALIZED,
        Trigger.INITIALIZE_ERROR: State.IDLE,
    },
    State.INITIALIZED: {
        Trigger.INITIALIZED: State.OPERATING,
    },
    State.OPERATING: {},
    State.STATELESS: {
        Trigger.STATELESS_REQUEST: State.STATELESS,
    },
}

_CANCEL_PROGRESS: Final = frozenset({CANCELLED, PROGRESS})
_PING: Final = frozenset({PING})
_NONE: Final[frozenset[str]] = frozenset()

REQUESTS_ALLOWED: Final[Mapping[tuple[State, Role], Allowed]] = {
    (State.IDLE, Role.CLIENT): frozenset({INITIALIZE, PING}),
    (State.IDLE, Role.SERVER): _PING,
    (State.PROBING, Role.CLIENT): _NONE,
    (State.PROBING, Role.SERVER): _PING,  # a legacy server may ping before it sees the probe
    (State.INITIALIZING, Role.CLIENT): _PING,
    (State.INITIALIZING, Role.SERVER): _PING,
    # The initialize window: once the server has answered initialize, the client's requests
    # are open ("The client SHOULD NOT send requests other than pings before the server has
    # responded to the initialize request", every initialize-era version, Basic >
    # Lifecycle > Initialization); only the server waits for notifications/initialized.
    (State.INITIALIZED, Role.CLIENT): ANY,
    # "The server SHOULD NOT send requests other than pings and logging before receiving
    # the initialized notification" (ibid.).
    (State.INITIALIZED, Role.SERVER): _PING,
    (State.OPERATING, Role.CLIENT): ANY,
    (State.OPERATING, Role.SERVER): ANY,
    (State.STATELESS, Role.CLIENT): ANY,
    (State.STATELESS, Role.SERVER): ANY,
}

NOTIFICATIONS_ALLOWED: Final[Mapping[tuple[State, Role], Allowed]] = {
    (State.IDLE, Role.CLIENT): _CANCEL_PROGRESS,
    (State.IDLE, Role.SERVER): _CANCEL_PROGRESS,
    # The pings of IDLE may still be in flight (and a legacy server's own, see above): their
    # progress and cancellation go on while the client probes, as in IDLE.
    (State.PROBING, Role.CLIENT): _CANCEL_PROGRESS,
    (State.PROBING, Role.SERVER): _CANCEL_PROGRESS,
    (State.INITIALIZING, Role.CLIENT): _CANCEL_PROGRESS,
    (State.INITIALIZING, Role.SERVER): _CANCEL_PROGRESS | {LOG_MESSAGE},
    (State.INITIALIZED, Role.CLIENT): ANY | frozenset({INITIALIZED}),
    # The text restricts only requests in the window: the server's notifications that its
    # capabilities allow (list changes, logging, ...) are open once its result is out.
    (State.INITIALIZED, Role.SERVER): ANY,
    (State.OPERATING, Role.CLIENT): ANY,
    (State.OPERATING, Role.SERVER): ANY,
    (State.STATELESS, Role.CLIENT): ANY,
    (State.STATELESS, Role.SERVER): ANY,
}

#: Methods that only the lifecycle table admits; ``ANY`` never includes them.
LIFECYCLE_METHODS: Final = frozenset({INITIALIZE, INITIALIZED})
