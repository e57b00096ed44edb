"""Compact memory of the request ids a sender has used, and bounded tables of ids.

In the initialize era a sender must never reuse a request id within the session.
Remembering every id ever seen would grow without bound, so :class:`IdHistory` keeps:

- the contiguous run of integer ids ``[lo, below)`` as two integers (senders that count
  up, ``0, 1, 2, …``, which is nearly all of them, cost nothing more), and
- the most recent other ids (strings, and integers outside the run), in insertion order,
  at most ``bound`` of them and at most ``max_bytes`` of them in all (see ``id_cost()``:
  a long string id costs its length); when an id fills the gap at either end of the run,
  the run grows and absorbs it.

Past either bound, the oldest remembered ids are forgotten (the newest one is always
kept): reusing *those* ids is no longer detected. Nothing else is lost, and memory stays
within ``bound`` entries and ``max_bytes`` bytes of ids. Forgetting is O(1) per id: the
ids are kept in an :class:`~collections.OrderedDict`, whose oldest entry is found at once
(a plain ``dict`` walks past the slots its deletions left at its front, so a full table
made every new id cost time in proportion to the table).

:class:`RecentIds` is the same bounded, oldest-first table for ids (or progress tokens)
that carry a value, without the run; :class:`Subscriptions` is the table of subscribed
resource URIs, whose check of a URI costs nothing per subscription.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, Final

__all__ = ["DEFAULT_ID_MEMORY_BYTES", "IdHistory", "RecentIds", "Subscriptions", "id_cost"]

_Id = int | str

#: The default byte budget of each table of remembered ids (4 MiB): see ``id_cost()``.
DEFAULT_ID_MEMORY_BYTES: Final = 4 * 1024 * 1024


def id_cost(value: Any) -> int:
    """What remembering ``value`` (a request id or a progress token) costs against a byte
    budget: the bytes of a string's text (its length when it is ASCII, 4 per character
    otherwise, as CPython stores it at most), 8 for an integer."""
    if type(value) is str:
        return len(value) if value.isascii() else 4 * len(value)
    return 8


class IdHistory:
    """The set of ids a sender has used, in bounded memory (see the module docstring).

    :param bound: how many ids outside the run are remembered at most.
    :param max_bytes: how many bytes of such ids (``id_cost()``) are remembered at most
        (default ``DEFAULT_ID_MEMORY_BYTES``, 4 MiB); the newest id is kept whatever it costs.
    """

    __slots__ = ("_below", "_bound", "_bytes", "_lo", "_max_bytes", "_recent")

    def __init__(self, bound: int, max_bytes: int = DEFAULT_ID_MEMORY_BYTES) -> None:
        self._bound = bound
        self._max_bytes = max_bytes
        self._bytes = 0  # what the ids in _recent cost
        self._lo = 0
        self._below = 0  # empty run: lo == below
        self._recent: OrderedDict[_Id, None] = OrderedDict()

    def __deepcopy__(self, memo: dict[int, Any]) -> IdHistory:
        # Explicit, because a compiled build (mypyc) cannot rebuild the object without
        # calling __init__; a refused batch saves its connection's state with deepcopy.
        twin = IdHistory(self._bound, self._max_bytes)
        twin._bytes = self._bytes
        twin._lo = self._lo
        twin._below = self._below
        twin._recent = OrderedDict(self._recent)
        return twin

    def __contains__(self, request_id: _Id) -> bool:
        if type(request_id) is int and self._lo <= request_id < self._below:
            return True
        return request_id in self._recent

    def __len__(self) -> int:
        return (self._below - self._lo) + len(self._recent)

    @property
    def nbytes(self) -> int:
        """What the remembered ids outside the run cost (``id_cost()``), in bytes."""
        return self._bytes

    def add(self, request_id: _Id) -> None:
        """Remember ``request_id`` (which must not be in the history already)."""
        recent = self._recent
        if type(request_id) is int:
            below = self._below
            if request_id == below and self._lo != below:  # the common case: one more
                self._below = below + 1
                if recent:
                    self._absorb()
                return
            if self._lo == below:  # the run is empty: start it here
                self._lo = request_id
                self._below = request_id + 1
                if recent:
                    self._absorb()
                return
            if request_id == self._lo - 1:
                self._lo = request_id
                if recent:
                    self._absorb()
                return
        recent[request_id] = None
        self._bytes += id_cost(request_id)
        while len(recent) > 1 and (len(recent) > self._bound or self._bytes > self._max_bytes):
            self._bytes -= id_cost(recent.popitem(last=False)[0])

    def _absorb(self) -> None:
        recent = self._recent
        below = self._below
        while below in recent:
            del recent[below]
            self._bytes -= 8
            below += 1
        self._below = below
        lo = self._lo
        while lo - 1 in recent:
            lo -= 1
            del recent[lo]
            self._bytes -= 8
        self._lo = lo


class RecentIds:
    """Ids (or progress tokens), each with a value, oldest first, bounded in entries and
    in bytes: past ``bound`` entries or ``max_bytes`` bytes of keys (``id_cost()``), the
    oldest are forgotten (the newest is always kept). Every operation is O(1).

    :param bound: how many entries are kept at most.
    :param max_bytes: how many bytes of keys are kept at most.
    """

    __slots__ = ("_bound", "_bytes", "_max_bytes", "entries")

    def __init__(self, bound: int, max_bytes: int = DEFAULT_ID_MEMORY_BYTES) -> None:
        self._bound = bound
        self._max_bytes = max_bytes
        self._bytes = 0
        self.entries: OrderedDict[Any, int] = OrderedDict()
        """The entries, oldest first (read them only: ``key in table.entries`` is the fast
        test on a hot path, without a call of :meth:`__contains__`)."""

    def __deepcopy__(self, memo: dict[int, Any]) -> RecentIds:
        # Explicit, as for IdHistory (a compiled build cannot rebuild it otherwise).
        twin = RecentIds(self._bound, self._max_bytes)
        twin._bytes = self._bytes
        twin.entries = OrderedDict(self.entries)
        return twin

    def __contains__(self, key: Any) -> bool:
        return key in self.entries

    def __len__(self) -> int:
        return len(self.entries)

    @property
    def nbytes(self) -> int:
        """What the keys kept cost (``id_cost()``), in bytes."""
        return self._bytes

    def get(self, key: Any) -> int:
        """The value kept for ``key``, or 0."""
        return self.entries.get(key, 0)

    def put(self, key: Any, value: int = 1) -> None:
        """Keep ``value`` for ``key`` (a new key is the newest; a known one keeps its place);
        past the bounds the oldest entries are forgotten."""
        items = self.entries
        if key in items:
            items[key] = value
            return
        items[key] = value
        self._bytes += id_cost(key)
        while len(items) > 1 and (len(items) > self._bound or self._bytes > self._max_bytes):
            self._bytes -= id_cost(items.popitem(last=False)[0])

    def discard(self, key: Any) -> None:
        """Forget ``key`` if it is kept."""
        items = self.entries
        if key in items:
            del items[key]
            self._bytes -= id_cost(key)


class Subscriptions:
    """The resource URIs subscribed to (initialize era), and what they cover: a URI is
    covered by a subscription to itself, or to a URI it lies under (``file:///d`` and
    ``file:///d/`` both cover ``file:///d/x``).

    :meth:`covers` costs one lookup per ``/`` of the URI within the longest subscription,
    whatever the number of subscriptions (it was a scan over all of them). A server also
    counts, with :meth:`reserve` and :meth:`release`, the subscriptions its peer asked for
    and it has not answered yet, so that its bounds (``max_subscriptions`` and
    ``max_subscription_bytes``) hold however many requests arrive at once.
    """

    __slots__ = ("_bytes", "_longest", "_prefixes", "_reserved_bytes", "_uris", "reserved")

    def __init__(self) -> None:
        self._uris: set[str] = set()
        # uri.rstrip("/") of each subscription -> how many subscriptions have it
        self._prefixes: dict[str, int] = {}
        self._longest = 0  # the longest prefix's length (none is longer)
        self._bytes = 0  # id_cost() of the URIs
        self.reserved = 0
        """How many subscriptions are reserved (asked for, not answered yet)."""
        self._reserved_bytes = 0

    def __deepcopy__(self, memo: dict[int, Any]) -> Subscriptions:
        # Explicit, as for IdHistory (a compiled build cannot rebuild it otherwise).
        twin = Subscriptions()
        twin._uris = set(self._uris)
        twin._prefixes = dict(self._prefixes)
        twin._longest = self._longest
        twin._bytes = self._bytes
        twin.reserved = self.reserved
        twin._reserved_bytes = self._reserved_bytes
        return twin

    def __contains__(self, uri: str) -> bool:
        return uri in self._uris

    def __len__(self) -> int:
        return len(self._uris)

    @property
    def nbytes(self) -> int:
        """What the subscribed URIs cost (``id_cost()``), in bytes."""
        return self._bytes

    def full(self, uri: str, max_count: int, max_bytes: int) -> str | None:
        """Why a new subscription to ``uri`` would break the bounds, counting the reserved
        ones (``None`` when it would not; one to a URI already subscribed never does)."""
        if uri in self._uris:
            return None
        if len(self._uris) + self.reserved >= max_count:
            return f"more than {max_count} subscriptions"
        if self._bytes + self._reserved_bytes + id_cost(uri) > max_bytes:
            return f"subscribed URIs over {max_bytes} bytes"
        return None

    def reserve(self, uri: str) -> None:
        """Count a subscription to ``uri`` asked for and not answered yet."""
        self.reserved += 1
        self._reserved_bytes += id_cost(uri)

    def release(self, uri: str) -> None:
        """The reserved subscription to ``uri`` was answered (or cancelled)."""
        self.reserved -= 1
        self._reserved_bytes -= id_cost(uri)

    def add(self, uri: str) -> None:
        """Subscribe to ``uri`` (again: nothing changes)."""
        if uri in self._uris:
            return
        self._uris.add(uri)
        self._bytes += id_cost(uri)
        prefix = uri.rstrip("/")
        prefixes = self._prefixes
        prefixes[prefix] = prefixes.get(prefix, 0) + 1
        if len(prefix) > self._longest:
            self._longest = len(prefix)

    def discard(self, uri: str) -> None:
        """Unsubscribe from ``uri`` (when not subscribed: nothing changes)."""
        if uri not in self._uris:
            return
        self._uris.discard(uri)
        self._bytes -= id_cost(uri)
        prefix = uri.rstrip("/")
        prefixes = self._prefixes
        count = prefixes[prefix]
        if count > 1:
            prefixes[prefix] = count - 1
        else:
            del prefixes[prefix]
            if not prefixes:
                self._longest = 0

    def covers(self, uri: str) -> bool:
        """Whether ``uri`` is subscribed to, or lies under a URI subscribed to."""
        if uri in self._uris:
            return True
        prefixes = self._prefixes
        if not prefixes:
            return False
        # uri.startswith(p + "/") for a prefix p: p is uri[:i] where uri[i] is a "/".
        end = min(len(uri), self._longest + 1)
        i = uri.find("/", 0, end)
        while i >= 0:
            if uri[:i] in prefixes:
                return True
            i = uri.find("/", i + 1, end)
        return False
