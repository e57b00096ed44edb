"""The bound on a Streamable HTTP client's follow-ups, sans-IO.

A POST that owes the session no answer (a response to the server's request, a
notification) is a *follow-up*. At most ``max_follow_ups`` are in flight at once; the
others wait in a queue bounded in bytes by ``max_write_buffer`` (each counts its line and
``_QUEUED_COST``). Past that bound reading is paused (until the queue is down to half): the
binding stops reading the server's streams, but the follow-ups' own, so that the server's
requests stop producing answers, as the stdio adapters do.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Container
from typing import Final

from ._client_parts import HttpRequest

__all__ = ["FollowUps"]

#: What a follow-up waiting its turn counts within ``max_write_buffer`` besides its line,
#: in bytes (its exchange, its request and their slots).
_QUEUED_COST: Final = 512


class FollowUps:
    """The follow-ups in flight (by stream) and those waiting their turn, in order, with
    the bytes they count; O(1) for each follow-up that comes and goes."""

    __slots__ = (
        "flying",
        "max_follow_ups",
        "max_write_buffer",
        "paused",
        "waiting",
        "waiting_bytes",
    )

    def __init__(self, max_follow_ups: int, max_write_buffer: int) -> None:
        self.max_follow_ups = max_follow_ups
        self.max_write_buffer = max_write_buffer
        self.flying: set[int] = set()
        self.waiting: deque[HttpRequest] = deque()
        self.waiting_bytes = 0
        self.paused = False  # the waiting ones are past max_write_buffer (until half)

    def offer(self, request: HttpRequest, *, now: bool = False) -> bool:
        """A follow-up to make: ``True`` when it goes at once (there is room in flight,
        or ``now``), ``False`` when it waits its turn."""
        if now or len(self.flying) < self.max_follow_ups:
            self.flying.add(request.stream)
            return True
        self.waiting.append(request)
        self.waiting_bytes += len(request.body) + _QUEUED_COST
        if self.waiting_bytes > self.max_write_buffer:
            self.paused = True
        return False

    def over(self, stream: int, alive: Container[int]) -> list[HttpRequest]:
        """The exchange ``stream`` is over: if it was a follow-up in flight, the next ones
        waiting whose stream is still ``alive`` (not aborted meanwhile) go."""
        if stream not in self.flying:
            return []
        self.flying.discard(stream)
        going: list[HttpRequest] = []
        waiting = self.waiting
        while waiting and len(self.flying) < self.max_follow_ups:
            request = waiting.popleft()
            self.waiting_bytes -= len(request.body) + _QUEUED_COST
            if request.stream in alive:
                self.flying.add(request.stream)
                going.append(request)
        if self.paused and self.waiting_bytes <= self.max_write_buffer // 2:
            self.paused = False
        return going

    def clear(self) -> None:
        """Forget them all (the transport is closing)."""
        self.flying.clear()
        self.waiting.clear()
        self.waiting_bytes = 0
        self.paused = False
