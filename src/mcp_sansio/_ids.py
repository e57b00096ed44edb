"""Compact memory of the request ids a sender has used.

In the initialize era a sender must never reuse a request id within the session.
Remembering every id ever seen would grow without bound, so :class:`IdHistory` keeps:

- the contiguous run of integer ids ``[lo, below)`` as two integers (senders that count
  up, ``0, 1, 2, …``, which is nearly all of them, cost nothing more), and
- the most recent ``bound`` other ids (strings, and integers outside the run), in insertion
  order; when an id fills the gap at either end of the run, the run grows and absorbs it.

Past the bound, the oldest remembered id is forgotten: reusing *that* id is no longer
detected. Nothing else is lost, and memory stays within ``bound`` entries.
"""

from __future__ import annotations

from typing import Any

__all__ = ["IdHistory"]

_Id = int | str


class IdHistory:
    """The set of ids a sender has used, in bounded memory (see the module docstring)."""

    __slots__ = ("_below", "_bound", "_lo", "_recent")

    def __init__(self, bound: int) -> None:
        self._bound = bound
        self._lo = 0
        self._below = 0  # empty run: lo == below
        self._recent: dict[_Id, None] = {}

    def __deepcopy__(self, memo: dict[int, Any]) -> IdHistory:
        # Explicit, because a compiled build (mypyc) cannot rebuild the object without
        # calling __init__; a refused batch saves its connection's state with deepcopy.
        twin = IdHistory(self._bound)
        twin._lo = self._lo
        twin._below = self._below
        twin._recent = dict(self._recent)
        return twin

    def __contains__(self, request_id: _Id) -> bool:
        if type(request_id) is int and self._lo <= request_id < self._below:
            return True
        return request_id in self._recent

    def __len__(self) -> int:
        return (self._below - self._lo) + len(self._recent)

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
        if len(recent) > self._bound:
            del recent[next(iter(recent))]

    def _absorb(self) -> None:
        recent = self._recent
        below = self._below
        while below in recent:
            del recent[below]
            below += 1
        self._below = below
        lo = self._lo
        while lo - 1 in recent:
            lo -= 1
            del recent[lo]
        self._lo = lo
