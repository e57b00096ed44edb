"""The closed set of actions a session returns, and the small protocol a runtime implements
to carry them out.

A session never does I/O: :meth:`~mcp_sansio.session.SessionBase.receive_data`,
:meth:`~mcp_sansio.session.SessionBase.expire`, :meth:`~mcp_sansio.session.SessionBase.complete`
and :meth:`~mcp_sansio.session.ClientSession.open` return a list of :data:`Action`, and
every policy (callback errors, timeouts, cancellation, progress, ``input_required`` rounds,
listen streams, shutdown) has been decided by then. A runtime matches them exhaustively
(:func:`carry_out` does it for any :class:`Runtime`), and mypy checks that none is
forgotten.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, NoReturn, Protocol, TypeAlias, final

import attrs

from .._events import Notification
from ._calls import Call, Job

__all__ = [
    "Action",
    "CallFinished",
    "CancelJob",
    "Closed",
    "HandleJob",
    "Opened",
    "PeerNotification",
    "Runtime",
    "Send",
    "carry_out",
]


@final
@attrs.frozen
class Send:
    """Write these bytes to the peer."""

    data: bytes


@final
@attrs.frozen
class CallFinished:
    """A call of ours is over: wake its waiter (``call.result`` or ``call.error`` is set)."""

    call: Call


@final
@attrs.frozen
class HandleJob:
    """Run ``job.handler(context, *job.args)``, then pass what it returned (or raised) to
    :meth:`~mcp_sansio.session.SessionBase.complete`."""

    job: Job


@final
@attrs.frozen
class CancelJob:
    """The peer cancelled the request this job serves (or the session is shutting down):
    stop it; its answer will not be sent."""

    job: Job


@final
@attrs.frozen
class PeerNotification:
    """A notification from the peer for the application (logs, list changes, updates,
    application methods'): give it to ``on_notification``."""

    notification: Notification


@final
@attrs.frozen
class Opened:
    """The session is open: ``result`` is the ``initialize`` result (initialize era) or the
    ``server/discover`` result (stateless era; empty when the client did not discover)."""

    result: Mapping[str, Any]


@final
@attrs.frozen
class Closed:
    """The peer closed the connection, or it broke; calls still in flight have failed (each
    with its :class:`CallFinished` before this)."""


#: Everything a session asks of its runtime: one of these seven classes, no other.
Action: TypeAlias = Send | CallFinished | HandleJob | CancelJob | PeerNotification | Opened | Closed


class Runtime(Protocol):
    """What a runtime implements for :func:`carry_out`: the few things that need I/O or a
    task, and nothing that decides anything."""

    def write(self, data: bytes) -> None:
        """Write bytes to the peer (buffered, with backpressure)."""

    def start_job(self, job: Job) -> None:
        """Run a handler (a task, a thread, or now), then give its outcome to
        :meth:`~mcp_sansio.session.SessionBase.complete`."""

    def cancel_job(self, job: Job) -> None:
        """Stop a running handler (cancel its task; blocking: it sees ``ctx.cancelled``)."""

    def wake(self, call: Call) -> None:
        """Wake whoever waits for ``call`` (it is done)."""

    def deliver(self, notification: Notification) -> None:
        """Give a notification to the application's ``on_notification``."""

    def on_opened(self, result: Mapping[str, Any]) -> None:
        """The session is open."""

    def on_closed(self) -> None:
        """The connection is gone."""


def carry_out(actions: Iterable[Action], runtime: Runtime) -> None:
    """Carry out ``actions`` in order on ``runtime`` (an exhaustive match: the classes are
    final, so an exact type test is enough, and the cheapest on this hot path)."""
    for action in actions:
        if type(action) is Send:
            runtime.write(action.data)
        elif type(action) is CallFinished:
            runtime.wake(action.call)
        elif type(action) is HandleJob:
            runtime.start_job(action.job)
        elif type(action) is CancelJob:
            runtime.cancel_job(action.job)
        elif type(action) is PeerNotification:
            runtime.deliver(action.notification)
        elif type(action) is Opened:
            runtime.on_opened(action.result)
        elif type(action) is Closed:
            runtime.on_closed()
        else:
            _unreachable(action)


def _unreachable(action: NoReturn) -> NoReturn:
    """mypy proves this is never called: every member of :data:`Action` is matched above."""
    raise AssertionError(f"not an action: {action!r}")
