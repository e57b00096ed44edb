"""The trio session loop (one per peer) and the handlers' Context."""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import Callable, Mapping
from typing import Any

import trio

from .. import _backpressure
from .._backpressure import stalled
from .._events import Notification, RequestId
from ..session import (
    Action,
    AsyncContextBase,
    Call,
    ConnectionLost,
    Job,
    SessionBase,
    carry_out,
)
from ..session._policy import notify_application, notify_application_async

#: How long closing a client waits at each step, in seconds: for what is queued to be
#: written; then, for a stdio server, for it to exit after its stdin is closed, and again
#: after ``SIGTERM``, before ``SIGKILL``.
DEFAULT_SHUTDOWN_TIMEOUT = 2.0

#: The bound, in bytes, on what waits to be written to one peer (1 MiB; the
#: ``max_write_buffer`` option): past it, nothing more is read from that peer until it is
#: down to half (see ``docs/errors.rst``, "Writing to a peer that does not read").
DEFAULT_MAX_WRITE_BUFFER = _backpressure.DEFAULT_MAX_WRITE_BUFFER

#: How long, in seconds, a chunk of what waits to be written (at most 64 KiB) may take to
#: go out (the ``write_timeout`` option) before the connection is closed as broken.
DEFAULT_WRITE_TIMEOUT = _backpressure.DEFAULT_WRITE_TIMEOUT

# The most the writer hands the stream at once: the deadline is per chunk.
_CHUNK = 1 << 16
_STDERR_TAIL = 1 << 16
_GONE = (trio.BrokenResourceError, trio.ClosedResourceError, trio.BusyResourceError)


class _Loop:
    """One connection: a session, a stream, and the tasks that drive them."""

    def __init__(
        self,
        session: SessionBase,
        stream: trio.abc.Stream,
        on_notification: Callable[[Notification], Any] | None = None,
        *,
        shield: bool = False,
        max_write_buffer: int = DEFAULT_MAX_WRITE_BUFFER,
        write_timeout: float | None = DEFAULT_WRITE_TIMEOUT,
    ) -> None:
        self.session = session
        self.stream = stream
        self.on_notification = on_notification
        # A client's loop is shielded from its caller's cancellation: leaving the client's
        # `async with` cancels it, after writing what is queued (the cancellations too).
        self.scope = trio.CancelScope(shield=shield)
        self.opened = trio.Event()  # a client's opening is over (well or not)
        self.open_error: BaseException | None = None
        self.reader_done = trio.Event()
        self._out = bytearray()
        self._wake = trio.Event()  # the writer has something to do
        self._idle = trio.Event()  # the writer has nothing left to write
        self._broken = False  # the writer is gone (a write failed, or the end)
        # Backpressure: the reader waits for _room while more than max_write_buffer bytes
        # are queued or being sent; the watchdog cancels _write_scope when a chunk
        # (_sending bytes, handed to the stream at _send_at) is not taken in write_timeout.
        self.max_write_buffer = max_write_buffer
        self.write_timeout = write_timeout
        self.failure: str | None = None
        """Why the connection broke, once it has (the message of the calls' error)."""
        self._room = trio.Event()
        self._sending = 0
        self._send_at = 0.0
        self._poke = trio.Event()  # a send started while the watchdog was idle
        self._dog_idle = True
        self._write_scope = trio.CancelScope()
        self._jobs: trio.Nursery | None = None
        self._input_jobs: dict[Call, set[Job]] = {}  # 2026: a call's input handlers
        self._read_scope = trio.CancelScope()
        self._timer_scope = trio.CancelScope()
        # Streamable HTTP: where what the session writes goes instead of the stream.
        self.route: Callable[[bytes, RequestId | None], None] | None = None

    # -------------------------------------------------------------- the tasks

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Run the connection until the peer closes and the handlers are done."""
        with self.scope:
            async with trio.open_nursery() as tasks:
                tasks.start_soon(self._writer)
                tasks.start_soon(self._timer)
                tasks.start_soon(self._watchdog)
                async with trio.open_nursery() as jobs:
                    self._jobs = jobs
                    task_status.started()
                    await self._read()
                # The handlers are done (half-closed is not closed: they could answer).
                with trio.move_on_after(DEFAULT_SHUTDOWN_TIMEOUT):
                    await self.flush()
                tasks.cancel_scope.cancel()

    async def _read(self) -> None:
        with self._read_scope:
            try:
                while not self.session.closed:
                    while len(self._out) + self._sending > self.max_write_buffer:
                        self._room = trio.Event()  # the writer sets it at half the bound
                        await self._room.wait()
                    data = await self.stream.receive_some(_CHUNK)
                    self.feed(bytes(data))
            except _GONE:
                pass
        if self.failure is not None:  # broken: close both ways (a server sees its stdout go)
            with trio.CancelScope(shield=True), contextlib.suppress(*_GONE, OSError):
                await self.stream.aclose()
        self.feed(b"")
        self.reader_done.set()

    async def _writer(self) -> None:
        out = self._out
        with self._write_scope:  # cancelled by the watchdog: the peer stopped reading
            try:
                while True:
                    if not out:
                        self._idle.set()
                        await self._wake.wait()
                        self._wake = trio.Event()
                        continue
                    if len(out) <= _CHUNK:
                        data = bytes(out)
                        out.clear()
                    else:
                        data = bytes(out[:_CHUNK])
                        del out[:_CHUNK]
                    self._sending = len(data)
                    self._send_at = trio.current_time()
                    if self._dog_idle:
                        self._dog_idle = False
                        self._poke.set()
                    await self.stream.send_all(data)
                    self._sending = 0
                    if len(out) <= self.max_write_buffer // 2:
                        self._room.set()
            except _GONE:
                # The peer is gone for good: nothing the handlers produce can reach it.
                self.feed(b"")
                self._read_scope.cancel()
                for job in self.session.jobs:
                    job.task.cancel()
            finally:
                unwritten = len(out) + self._sending
                self._broken = True
                self._sending = 0
                out.clear()
                self._idle.set()
                self._room.set()
        if self._write_scope.cancelled_caught:
            assert self.write_timeout is not None
            self._break(stalled(self.session, unwritten, self.write_timeout))

    async def _watchdog(self) -> None:
        """Cancel the writer when a chunk it is sending has not gone in ``write_timeout``."""
        timeout = self.write_timeout
        if timeout is None:
            return
        while True:
            await self._poke.wait()
            self._poke = trio.Event()
            # Sleep until the deadline of the newest chunk (not woken by each send: the
            # writer pokes only an idle watchdog); idle again once nothing is being sent.
            while True:
                left = self._send_at + timeout - trio.current_time()
                if left > 0:
                    await trio.sleep(left)
                elif self._sending:
                    self._write_scope.cancel()
                    return
                else:
                    break
            self._dog_idle = True

    def _break(self, message: str) -> None:
        """The peer stopped reading: every call fails with ``ConnectionLost(message)``, the
        reader stops and the handlers are cancelled; the loop then ends (a client's
        ``async with`` closes the stream, and stops a stdio server, as ever)."""
        self.failure = message
        for call in self.session.calls:
            if not call.done:
                call.error = ConnectionLost(message)
                self.wake(call)
        if not self.opened.is_set():
            self.open_error = ConnectionLost(message)
            self.opened.set()
        self._read_scope.cancel()
        self._timer_scope.cancel()
        for job in self.session.jobs:
            job.task.cancel()

    async def _timer(self) -> None:
        while self.failure is None:
            with trio.CancelScope() as self._timer_scope:
                self.arm()
                await trio.sleep_forever()
            if self.failure is None:
                self.run_actions(self.session.expire(trio.current_time()))

    # -------------------------------------------------------------- writing, time, reading

    def write(self, data: bytes, job: Job | None = None) -> None:
        """Queue bytes for the writer task (in order; never interleaved); over Streamable
        HTTP, hand them to :attr:`route` with the id of ``job``, the request being served."""
        if data and self.route is not None:
            self.route(data, None if job is None else job.id)
            return
        if data and not self._broken:
            self._out += data
            self._wake.set()
            if self._idle.is_set():
                self._idle = trio.Event()

    async def flush(self) -> None:
        """Wait until everything queued has been written (or the writer is gone)."""
        while not self._idle.is_set():
            await self._idle.wait()

    def arm(self) -> None:
        """Make sure the timer fires by the session's next deadline. It is only ever moved
        earlier: a timer that fires early (the call it was set for is over, or its deadline
        moved on) finds nothing due and is armed again, and moving a cancel scope's
        deadline costs trio work on every message."""
        deadline = self.session.next_deadline()
        scope = self._timer_scope
        if deadline is not None and deadline < scope.deadline:
            scope.deadline = deadline

    def feed(self, data: bytes) -> None:
        """Pass bytes from the peer (``b""``: it closed) to the session and act on them
        (none once the connection broke)."""
        if self.failure is None:
            self.run_actions(self.session.receive_data(data, trio.current_time()))

    def run_actions(self, actions: list[Action]) -> None:
        """Carry out the session's actions, then arm the timer."""
        carry_out(actions, self)
        self.arm()

    # The runtime protocol (mcp_sansio.session.Runtime): what carry_out() calls; write()
    # is above.

    def wake(self, call: Call) -> None:
        """Wake the task waiting for ``call``; an opening call that failed fails the
        opening."""
        waiter = call.waiter
        if waiter is not None:
            waiter.set()
        elif call.error is not None and not self.opened.is_set():
            self.open_error = call.error  # the opening call failed
            self.opened.set()

    def deliver(self, notification: Notification) -> None:
        """Give a notification to ``on_notification`` (a coroutine function runs as a
        task); its errors are logged."""
        callback = self.on_notification
        if callback is None:
            return
        if inspect.iscoroutinefunction(callback):
            assert self._jobs is not None
            self._jobs.start_soon(notify_application_async, callback, notification)
        else:
            notify_application(callback, notification)

    def on_opened(self, result: Mapping[str, Any]) -> None:
        """The session is open."""
        self.opened.set()

    def on_closed(self) -> None:
        """The peer is gone (an opening still waiting fails: see :meth:`wake`)."""
        self.opened.set()

    def start_job(self, job: Job) -> None:
        """Run a handler in a task of its own, in its own cancel scope."""
        job.task = trio.CancelScope()
        if job.call is not None:
            self._input_jobs.setdefault(job.call, set()).add(job)
        assert self._jobs is not None
        self._jobs.start_soon(self._handle, job, name=f"mcp {job.method} {job.id!r}")

    def cancel_job(self, job: Job) -> None:
        """Cancel a handler's scope."""
        job.task.cancel()

    # -------------------------------------------------------------- handlers and calls

    async def _handle(self, job: Job) -> None:
        value: Any = None
        error: BaseException | None = None
        with job.task:
            try:
                value = job.handler(Context(self.session, job, self), *job.args)
                if inspect.isawaitable(value):
                    value = await value
            except Exception as exc:
                error = exc
        if job.call is not None:
            self._input_jobs.get(job.call, set()).discard(job)
        self.run_actions(self.session.complete(job, value, error, now=trio.current_time()))

    async def wait(self, call: Call) -> Any:
        """Wait for ``call``; if the caller is cancelled, cancel the request and re-raise."""
        if call.done:
            await trio.lowlevel.checkpoint()
        else:
            call.waiter = event = trio.Event()
            self.arm()
            try:
                await event.wait()
            except BaseException:
                # Queued, not awaited: nothing here can be interrupted, so no shield is needed.
                self.write(self.session.cancel(call))
                self.arm()
                raise
            finally:
                for job in self._input_jobs.pop(call, ()):
                    job.task.cancel()  # 2026: the call is over; its input handlers are moot
        return call.outcome()


class Context(AsyncContextBase):
    """What a handler gets as its first argument: the request (:attr:`method`,
    :attr:`params`, :attr:`request_id`, :attr:`cancelled`) and ways to talk back.
    :meth:`progress`, :meth:`log`, :meth:`resource_updated` and :meth:`list_changed` are
    plain calls (they queue a message); the methods that wait are coroutines (see
    :class:`~mcp_sansio.session.AsyncContextBase`).
    """

    def __init__(self, session: SessionBase, job: Job, loop: _Loop) -> None:
        super().__init__(session, job, trio.current_time)
        self._loop = loop

    def _write(self, data: bytes) -> None:
        self._loop.write(data, self.job)

    async def _wait(self, call: Call | None) -> Any:
        if call is None:
            await trio.lowlevel.checkpoint()
            return None
        return await self._loop.wait(call)

    async def sleep(self, seconds: float) -> None:
        """Sleep (``trio.sleep``), so that handlers need not import a runtime."""
        await trio.sleep(seconds)
