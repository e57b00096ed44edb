"""Our calls to the peer and the jobs for the peer's requests: what a session keeps of
each, with the deadlines (the runtime keeps its waiter or task in the slot given)."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Mapping
from typing import Any, Final, TypeGuard

from .._events import RequestId
from ._errors import DEFAULT_MAX_TIMEOUT


class Call:
    """One request of ours in flight, with its deadlines. Adapters keep their waiter (a
    future, an event) in ``waiter``."""

    __slots__ = (
        "deadline",
        "error",
        "hard_deadline",
        "id",
        "method",
        "on_progress",
        "params",
        "reset_on_progress",
        "result",
        "rounds",
        "timeout",
        "waiter",
    )

    def __init__(
        self,
        request_id: RequestId,
        method: str,
        params: dict[str, Any] | None,
        timeout: float | None,
        now: float,
        *,
        reset_on_progress: bool = False,
        max_timeout: float | None = DEFAULT_MAX_TIMEOUT,
        on_progress: Callable[[Mapping[str, Any]], Any] | None = None,
    ) -> None:
        self.id = request_id
        self.method = method
        self.params = params
        self.timeout = timeout
        self.hard_deadline = None if max_timeout is None else now + max_timeout
        self.deadline = None if timeout is None else now + timeout
        if self.hard_deadline is not None:
            self.deadline = min(self.deadline or self.hard_deadline, self.hard_deadline)
        self.reset_on_progress = reset_on_progress
        self.on_progress = on_progress
        self.rounds = 0
        self.result: Any = None
        self.error: BaseException | None = None
        """What the call failed with: an :class:`McpError`, or what the caller's own
        ``on_progress`` raised."""
        self.waiter: Any = None

    @property
    def done(self) -> bool:
        """Whether the call has a result or an error."""
        return self.result is not None or self.error is not None

    def outcome(self) -> Any:
        """The result, or raise the error."""
        if self.error is not None:
            raise self.error
        return self.result

    def __repr__(self) -> str:
        return f"<Call {self.method} id={self.id!r}{' done' if self.done else ''}>"


def _is_mapping(value: object) -> TypeGuard[Mapping[str, Any]]:
    """``isinstance(value, Mapping)``, with the common cases (a dict, ``None``) first: an
    ABC check costs more, and this runs for every request."""
    return type(value) is dict or (value is not None and isinstance(value, Mapping))


#: Whether a handler is a coroutine function: asked for every job, and a handler is
#: registered once (``inspect.iscoroutinefunction`` costs about 1 µs a time).
_is_coroutine_function: Final = functools.lru_cache(maxsize=256)(inspect.iscoroutinefunction)


class Job:
    """One piece of work for a handler: a request from the peer, or (2026 client) one
    input request of an ``input_required`` answer. Adapters keep their task in ``task``."""

    __slots__ = (
        "args",
        "asked",
        "call",
        "cancelled",
        "handler",
        "id",
        "inputs",
        "key",
        "meta",
        "method",
        "params",
        "task",
    )

    def __init__(
        self,
        request_id: RequestId | None,
        method: str,
        params: dict[str, Any],
        handler: Callable[..., Any],
        args: tuple[Any, ...],
        *,
        call: Call | None = None,
        key: str | None = None,
    ) -> None:
        self.id = request_id
        self.method = method
        self.params = params
        self.handler = handler
        self.args = args
        self.call = call
        self.key = key
        self.cancelled = False
        self.inputs: dict[str, Any] = {}
        self.asked = 0
        meta = params.get("_meta") if _is_mapping(params) else None
        self.meta: Mapping[str, Any] = meta if _is_mapping(meta) else {}
        self.task: Any = None

    @property
    def is_async(self) -> bool:
        """Whether the handler is a coroutine function (to be awaited)."""
        handler = self.handler
        try:
            return _is_coroutine_function(handler)
        except TypeError:  # an unhashable callable object
            return inspect.iscoroutinefunction(handler)

    def __repr__(self) -> str:
        return f"<Job {self.method} id={self.id!r}>"
