"""What a session knows, in one object: the requests in flight, one record each (as h2 keeps
one state machine per stream), and the session's own facts.

- :class:`Pending` is one request in flight, ours or the peer's: its method, params,
  progress token and last progress, its size, and (2026-07-28) the capabilities and log
  level it carried and its listen stream.
- :class:`RequestTable` is one direction's requests: the records by id and by progress
  token, the id history, the memories of cancelled requests and owed errors (all bounded),
  the bytes and log levels counted.
- :class:`Session` is everything a message can change (the lifecycle state, the era's
  policy, the version, both sides' capabilities, subscriptions, the log level, both
  tables), with the constants the rules read. :meth:`Session.copy` is what a refused batch
  puts back: one copy.

Plain slotted classes, compiled with the rest of the core (mypyc).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any, Final

from ._checks import LOG_RANK
from ._config import Config
from ._events import RequestId
from ._ids import IdHistory, RecentIds, Subscriptions
from ._names import LISTEN, META_CAPABILITIES, META_LOG_LEVEL
from ._state import Role, State
from ._versions import EraPolicy, Kind, VersionSpec

__all__ = ["LOG_LEVELS", "Listen", "Pending", "RequestTable", "Session", "with_meta"]

#: How many log levels there are.
LOG_LEVELS: Final = len(LOG_RANK)


class Listen:
    """A ``subscriptions/listen`` stream in flight (2026-07-28)."""

    __slots__ = ("granted", "wanted")

    def __init__(self, wanted: Mapping[str, Any]) -> None:
        self.wanted = wanted
        self.granted: frozenset[str] | None = None  # None until acknowledged


class Pending:
    """One request in flight."""

    __slots__ = ("caps", "id", "listen", "method", "params", "progress", "rank", "size", "token")

    def __init__(self, rid: RequestId, method: str, params: Any, token: Any, size: int) -> None:
        self.id = rid
        self.method = method
        self.params = params
        self.token = token
        """Its progress token, or ``None``."""
        self.size = size
        """The bytes it counts against ``max_in_flight_bytes`` (0: not counted)."""
        self.progress: Any = None
        """The last progress value on its token, or ``None``."""
        self.caps: Mapping[str, Any] | None = None
        """2026-07-28: the client capabilities its ``_meta`` carried (the peer's requests)."""
        self.rank = -1
        """2026-07-28: the rank of the log level it asked for, counted in its table's
        ``ranks`` (-1: none; a listen's is never counted)."""
        self.listen: Listen | None = None
        """2026-07-28: its stream, for a ``subscriptions/listen`` request."""

    def copy(self) -> Pending:
        """A copy whose mutable parts (progress, the listen's grant) are its own."""
        new = Pending(self.id, self.method, self.params, self.token, self.size)
        new.progress = self.progress
        new.caps = self.caps
        new.rank = self.rank
        listen = self.listen
        if listen is not None:
            new.listen = Listen(listen.wanted)
            new.listen.granted = listen.granted
        return new


def with_meta(entry: Pending, meta: Mapping[str, Any]) -> Pending:
    """A 2026-07-28 request's record, with what its (checked) ``_meta`` and params carry: the
    client's capabilities, the log level it asks for (a listen's is not counted), and a
    listen's stream."""
    entry.caps = meta[META_CAPABILITIES]
    if entry.method == LISTEN:
        entry.listen = Listen(entry.params["notifications"])
    else:
        level = meta.get(META_LOG_LEVEL)
        if level is not None:
            entry.rank = LOG_RANK[level]
    return entry


class RequestTable:
    """One direction's requests in flight, and what is remembered of those that ended."""

    __slots__ = (
        "bytes",
        "cancelled",
        "cancelled_tokens",
        "ids",
        "owed",
        "pending",
        "ranks",
        "tokens",
    )

    def __init__(
        self, ids: IdHistory, cancelled: RecentIds, cancelled_tokens: RecentIds, owed: RecentIds
    ) -> None:
        self.pending: dict[RequestId, Pending] = {}
        """The requests in flight, by id, oldest first."""
        self.tokens: dict[Any, Pending] = {}
        """The same, by progress token (those that have one)."""
        self.ids = ids
        """Every id used in the session (initialize era: ids are never reused)."""
        self.cancelled = cancelled
        """Ours: cancelled requests whose late answer is dropped. Theirs: the peer's
        cancelled requests whose answer we may still write (``b""``)."""
        self.cancelled_tokens = cancelled_tokens
        """Ours: the progress tokens of our cancelled requests."""
        self.owed = owed
        """Theirs: errors owed to refused requests, id → how many."""
        self.bytes = 0
        """The sizes of the requests counted (the peer's, see ``Pending.size``)."""
        self.ranks = [0] * LOG_LEVELS
        """2026-07-28: how many requests in flight (not listens) ask for each log level."""

    def add(self, entry: Pending) -> None:
        """Record a request in flight."""
        self.pending[entry.id] = entry
        if entry.token is not None:
            self.tokens[entry.token] = entry
        if entry.size:
            self.bytes += entry.size
        if entry.rank >= 0:
            self.ranks[entry.rank] += 1

    def retire(self, rid: RequestId) -> Pending:
        """Forget the request ``rid`` (answered or cancelled); returns its record. (The hot
        paths do the same inline.)"""
        entry = self.pending.pop(rid)
        if entry.token is not None:
            del self.tokens[entry.token]
        if entry.size or entry.rank >= 0:
            self.release_counts(entry)
        return entry

    def release_counts(self, entry: Pending) -> None:
        """Uncount a retired request's bytes and log level."""
        if entry.size:
            self.bytes -= entry.size
        if entry.rank >= 0:
            self.ranks[entry.rank] -= 1

    def lowest_rank(self) -> int:
        """The lowest log level any request in flight asks for, or -1."""
        for rank, count in enumerate(self.ranks):
            if count:
                return rank
        return -1

    def forget_owed(self, rid: RequestId) -> None:
        """One error owed to ``rid`` went out."""
        owed = self.owed
        count = owed.get(rid)
        if count > 1:
            owed.put(rid, count - 1)
        else:
            owed.discard(rid)

    def remember_owed(self, rid: RequestId) -> None:
        """One more error is owed to ``rid``."""
        owed = self.owed
        owed.put(rid, owed.get(rid) + 1)

    def copy(self) -> RequestTable:
        """A copy that shares nothing mutable with this table."""
        new = RequestTable(
            copy.deepcopy(self.ids),
            copy.deepcopy(self.cancelled),
            copy.deepcopy(self.cancelled_tokens),
            copy.deepcopy(self.owed),
        )
        pending = {rid: entry.copy() for rid, entry in self.pending.items()}
        new.pending = pending
        # (the same records, in the order the tokens were taken: the order of the requests)
        new.tokens = {entry.token: entry for entry in pending.values() if entry.token is not None}
        new.bytes = self.bytes
        new.ranks = list(self.ranks)
        return new


class Session:
    """Everything a message can change, and the constants the rules read."""

    __slots__ = (
        "batches",
        "client_caps",
        "config",
        "gated",
        "known",
        "legacy",
        "log_level",
        "modern",
        "ours",
        "own_notes",
        "own_requests",
        "peer",
        "peer_notes",
        "peer_requests",
        "policy",
        "probe_id",
        "requested_version",
        "role",
        "server_caps",
        "spec",
        "specs",
        "state",
        "subscriptions",
        "theirs",
    )

    def __init__(self, config: Config, role: Role, policy: EraPolicy, state: State) -> None:
        # Constants (shared by copies).
        self.config = config
        self.role = role
        self.peer = role.peer
        self.legacy: tuple[str, ...] = ()
        """The configured versions of the initialize era, newest first."""
        self.modern: tuple[str, ...] = ()
        """The configured versions of the stateless era, newest first."""
        self.specs: Mapping[str, VersionSpec] = config.specs
        """The version tables, with the application's methods (``Config.methods``)."""
        self.known: frozenset[str] = frozenset()
        """Every method of the configured versions."""
        # What messages change.
        self.state = state
        self.policy = policy
        """What differs by era (``UNDECIDED`` until the era is chosen)."""
        self.spec: VersionSpec | None = None
        self.batches = False
        self.client_caps: Mapping[str, Any] | None = None
        self.server_caps: Mapping[str, Any] | None = None
        self.requested_version: str | None = None
        self.probe_id: RequestId | None = None
        self.subscriptions = Subscriptions()
        self.log_level: str | None = None
        memory = config.id_memory_bytes
        self.ours = RequestTable(
            IdHistory(config.id_memory, memory),
            RecentIds(config.cancelled_memory, memory),
            RecentIds(config.cancelled_memory, memory),
            RecentIds(1, memory),
        )
        """Our requests: the peer owes an answer."""
        self.theirs = RequestTable(
            IdHistory(config.id_memory, memory),
            RecentIds(config.max_in_flight, memory),
            RecentIds(1, memory),
            RecentIds(config.max_in_flight, memory),
        )
        """The peer's requests: we owe an answer."""
        # Derived from the above at each change of state (see _gates).
        self.gated: dict[tuple[Role, Kind], frozenset[str]] = {}
        self.own_requests: frozenset[str] = frozenset()
        self.own_notes: frozenset[str] = frozenset()
        self.peer_requests: frozenset[str] = frozenset()
        self.peer_notes: frozenset[str] = frozenset()

    def copy(self) -> Session:
        """A copy that shares nothing mutable with this one (immutable values are shared)."""
        new = Session(self.config, self.role, self.policy, self.state)
        new.legacy = self.legacy
        new.modern = self.modern
        new.specs = self.specs
        new.known = self.known
        new.spec = self.spec
        new.batches = self.batches
        new.client_caps = self.client_caps
        new.server_caps = self.server_caps
        new.requested_version = self.requested_version
        new.probe_id = self.probe_id
        new.subscriptions = copy.deepcopy(self.subscriptions)
        new.log_level = self.log_level
        new.ours = self.ours.copy()
        new.theirs = self.theirs.copy()
        new.gated = self.gated
        new.own_requests = self.own_requests
        new.own_notes = self.own_notes
        new.peer_requests = self.peer_requests
        new.peer_notes = self.peer_notes
        return new
