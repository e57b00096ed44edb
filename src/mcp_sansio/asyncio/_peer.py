"""The asyncio session loop (one per peer) and the handlers' Context."""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import sys
from collections.abc import Awaitable, Callable, Coroutine, Iterable, Mapping
from typing import Any

from .._backpressure import stalled
from .._errors import ErrorCode
from .._events import Notification, RequestId
from ..session import (
    Action,
    AsyncContextBase,
    Call,
    ConnectionLost,
    Job,
    McpError,
    SessionBase,
    carry_out,
)
from ..session._policy import notify_application, notify_application_async
from ._streams import (
    _OPENING,
    _READ_SIZE,
    _WATCH_INTERVAL,
    DEFAULT_MAX_WRITE_BUFFER,
    DEFAULT_WRITE_TIMEOUT,
    _log,
    _MemoryPipe,
    _Reader,
    _Writer,
)


class _Peer:
    """The loop around one session: reads, carries out actions, keeps the timer, runs jobs.

    What the writer's transport cannot send at once waits in its buffer: past
    ``max_write_buffer`` bytes there, the peer stops reading (the reader's transport is
    paused, or the read loop waits) until it is down to half; when the peer takes none of
    it for ``write_timeout`` seconds, the connection is closed as broken (:meth:`_break`).
    """

    def __init__(
        self,
        session: SessionBase,
        reader: _Reader,
        writer: _Writer,
        on_notification: Callable[[Notification], Any] | None = None,
        *,
        max_write_buffer: int = DEFAULT_MAX_WRITE_BUFFER,
        write_timeout: float | None = DEFAULT_WRITE_TIMEOUT,
    ) -> None:
        self.session = session
        self.reader = reader
        self.writer = writer
        self.on_notification = on_notification
        self.loop = asyncio.get_running_loop()
        self.opened: asyncio.Future[Mapping[str, Any]] | None = None
        self.closed = asyncio.Event()
        self._timer: asyncio.TimerHandle | None = None
        self._timer_at: float | None = None
        self._tasks: dict[asyncio.Task[Any], Job | None] = {}
        self._read_task: asyncio.Task[None] | None = None
        self.dead = False
        self.failure: str | None = None
        """Why the connection broke, once it has (the message of the calls' error)."""
        self._write_failed = False
        self.route: Callable[[bytes, RequestId | None], None] | None = None
        # Backpressure: the writer's transport (None for in-memory pipes and files), the
        # bytes handed to it, and how many of them had gone out at the last look (when).
        self.max_write_buffer = max_write_buffer
        self.write_timeout = write_timeout
        transport = getattr(writer, "transport", None)
        if not callable(getattr(transport, "get_write_buffer_size", None)):
            transport = None  # not an asyncio transport (Streamable HTTP's)
        self._transport: asyncio.WriteTransport | None = transport
        self._written = 0
        self._sent = 0
        self._sent_at = 0.0
        self._watch: asyncio.TimerHandle | None = None
        self._paused = False
        self._room = asyncio.Event()  # set while reading is not paused
        self._room.set()

    def now(self) -> float:
        return self.loop.time()

    def start(self) -> None:
        reader = self.reader
        if type(reader) is _MemoryPipe:  # each write or received chunk is fed to us at once
            self._read_task = self.loop.create_task(reader.deliver_to(self.feed))
        else:
            self._read_task = self.loop.create_task(self._read_loop())

    # ------------------------------------------------------------------ bytes

    def write(self, data: bytes, job: Job | None = None) -> None:
        if data and self.route is not None:  # Streamable HTTP: onto the right stream
            self.route(data, None if job is None else job.id)
            return
        if data and not self._write_failed:
            writer = self.writer
            # A pipe or socket asyncio has closed (the peer went away) takes writes without
            # an error, dropping them with a warning each: stop writing at the first sign.
            closing = getattr(writer, "is_closing", None)
            if closing is not None and closing():
                self._write_failed = True
                return
            try:
                writer.write(data)
            except (RuntimeError, OSError):  # closing, or closed under us
                self._write_failed = True
                return
            transport = self._transport
            if transport is not None:
                self._written += len(data)
                size = transport.get_write_buffer_size()
                if size:  # the peer is not keeping up
                    if size > self.max_write_buffer and not self._paused:
                        self._pause()
                    if self._watch is None:
                        self._sent, self._sent_at = self._written - size, self.now()
                        self._watch = self.loop.call_later(_WATCH_INTERVAL, self._check_writes)

    def _check_writes(self) -> None:
        """Look at what still waits to be written: resume reading once it is down to half
        of the bound, break the connection if nothing went out for ``write_timeout``."""
        self._watch = None
        transport = self._transport
        if self.dead or transport is None:
            return
        size = transport.get_write_buffer_size()
        if not size:
            self._resume()
            return
        now = self.now()
        sent = self._written - size
        if sent != self._sent:
            self._sent, self._sent_at = sent, now
        if self._paused and size <= self.max_write_buffer // 2:
            self._resume()
        if self.write_timeout is not None and now - self._sent_at >= self.write_timeout:
            self._break(stalled(self.session, size, self.write_timeout))
            return
        self._watch = self.loop.call_later(_WATCH_INTERVAL, self._check_writes)

    def _pause(self) -> None:
        """Stop reading from the peer (until :meth:`_resume`)."""
        self._paused = True
        self._room.clear()
        source = getattr(self.reader, "source", None)
        if source is not None:
            source.pause_reading()

    def _resume(self) -> None:
        if self._paused:
            self._paused = False
            self._room.set()
            source = getattr(self.reader, "source", None)
            if source is not None:
                source.resume_reading()

    def _break(self, message: str) -> None:
        """The peer stopped reading: every call fails with ``message``, what waits to be
        written is dropped, and both directions are closed (a stdio server then sees its
        stdout closed; :meth:`Client.aclose` stops it as ever)."""
        self._die(message)
        self._write_failed = True
        if self._read_task is not None:
            self._read_task.cancel()
        source = getattr(self.reader, "source", None)
        if source is not None:
            source.close()
        if self._transport is not None:
            self._transport.abort()

    async def flush(self) -> None:
        """At the end, after ``writer.close()``: wait while what is buffered goes out, as
        long as the peer takes some of it within ``write_timeout``; else drop it."""
        transport = self._transport
        if transport is None:
            return
        last, since = -1, self.now()
        while size := transport.get_write_buffer_size():
            now = self.now()
            if size != last:
                last, since = size, now
            elif self.write_timeout is not None and now - since >= self.write_timeout:
                transport.abort()
                return
            await asyncio.sleep(_WATCH_INTERVAL)

    async def drain(self) -> None:
        try:
            await self.writer.drain()
        except (RuntimeError, OSError):
            self._write_failed = True

    async def _read_loop(self) -> None:
        read = self.reader.read
        while True:
            if self._paused:
                await self._room.wait()
            try:
                data = await read(_READ_SIZE)
            except OSError:
                data = b""
            self.feed(data)
            if not data or self.dead:
                return

    def feed(self, data: bytes) -> None:
        if self.dead or (self.session.closed and not data):
            return
        try:
            actions = self.session.receive_data(data, self.now())
        except Exception as exc:  # a callback of the application failed
            self.abort(exc)
            return
        self.run(actions)

    def abort(self, exc: BaseException) -> None:
        """The connection broke beyond repair: fail every call, cancel every job, stop."""
        if self.dead:
            return
        if not isinstance(exc, Exception) or type(exc).__module__.startswith("mcp_sansio"):
            _log.debug("connection aborted: %r", exc)
        else:
            _log.error("connection aborted by an unexpected error", exc_info=exc)
        self._die(f"the connection broke: {exc}")

    def _die(self, message: str) -> None:
        """Fail every call with ``ConnectionLost(message)``, cancel every job, stop."""
        if self.dead:
            return
        self.dead = True
        self.failure = message
        if self._watch is not None:
            self._watch.cancel()
            self._watch = None
        self._fail_opening(ConnectionLost(message))  # before Closed's own message
        carry_out(self.session.close(message), self)  # our calls fail, its jobs are cancelled
        for task in list(self._tasks):  # the callbacks' tasks too
            task.cancel()

    # ------------------------------------------------------------------ actions

    def run(self, actions: Iterable[Action]) -> None:
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
            if not waiter.done():
                waiter.set_result(None)
        elif call.error is not None and call.method in _OPENING:
            self._fail_opening(call.error)

    def start_job(self, job: Job) -> None:
        """Run a handler: a plain one now, a coroutine as a task."""
        self._start(job)

    def cancel_job(self, job: Job) -> None:
        """Cancel a handler's task."""
        task = job.task
        if task is not None:
            task.cancel()

    def deliver(self, notification: Notification) -> None:
        """Give a notification to ``on_notification`` (a coroutine it returns runs as a
        task); its errors are logged."""
        callback = self.on_notification
        if callback is not None:
            result = notify_application(callback, notification)
            if inspect.isawaitable(result):  # a coroutine function's: the same policy
                self._spawn(notify_application_async(lambda _: result, notification), None)

    def on_opened(self, result: Mapping[str, Any]) -> None:
        """The session is open: the opening returns ``result``."""
        if self.opened is not None and not self.opened.done():
            self.opened.set_result(result)

    def on_closed(self) -> None:
        """The peer is gone: an opening still waiting fails."""
        self._fail_opening(ConnectionLost("the server closed the connection"))
        self.closed.set()

    def _fail_opening(self, error: BaseException) -> None:
        if self.opened is not None and not self.opened.done():
            self.opened.set_exception(error)

    def callback(self, fn: Callable[[Any], Any], arg: Any) -> None:
        """Call an application callback; a coroutine it returns runs as a task. Its errors
        are logged, never allowed to break the connection."""
        try:
            result = fn(arg)
        except Exception:
            _log.exception("error in callback %r", fn)
            return
        if inspect.isawaitable(result):
            self._spawn(self._logged(result), None)

    @staticmethod
    async def _logged(awaitable: Awaitable[Any]) -> None:
        try:
            await awaitable
        except Exception:
            _log.exception("error in callback")

    def _spawn(self, coro: Coroutine[Any, Any, Any], job: Job | None) -> asyncio.Task[Any]:
        if sys.version_info >= (3, 12) and job is not None:
            # A handler's task starts at once (Python 3.12+), up to its first real wait: a
            # quick handler has answered before this returns, a turn of the loop earlier.
            task: asyncio.Task[Any] = asyncio.Task(coro, loop=self.loop, eager_start=True)
        else:
            task = self.loop.create_task(coro)
        self._tasks[task] = job
        task.add_done_callback(self._forget_task)
        return task

    def _forget_task(self, task: asyncio.Task[Any]) -> None:
        self._tasks.pop(task, None)

    # ------------------------------------------------------------------ time

    def arm(self) -> None:
        """Make sure the timer fires by the session's next deadline (it may fire early:
        a later deadline, or none, just re-arms it)."""
        deadline = self.session.next_deadline()
        if deadline is None or (self._timer_at is not None and self._timer_at <= deadline):
            return
        if self._timer is not None:
            self._timer.cancel()
        self._timer_at = deadline
        self._timer = self.loop.call_at(deadline, self._expire)

    def _expire(self) -> None:
        # The loop may run a timer up to its clock resolution early: never pass a ``now``
        # before the deadline we armed for.
        now = max(self.now(), self._timer_at or 0.0)
        self._timer = self._timer_at = None
        if not self.dead:
            self.run(self.session.expire(now))

    # ------------------------------------------------------------------ calls

    async def wait(self, call: Call, data: bytes) -> Any:
        """Write a call's bytes and wait for its outcome; if the caller is cancelled, the
        call is cancelled (``notifications/cancelled``)."""
        waiter: asyncio.Future[None] = self.loop.create_future()
        call.waiter = waiter
        self.write(data)
        self.arm()
        try:
            transport = self._transport
            if transport is not None and not call.done and transport.get_write_buffer_size():
                # The peer is slow: its drain may outlast the call (its answer, its timeout).
                drain = self.loop.create_task(self.drain())
                try:
                    await asyncio.wait((waiter, drain), return_when=asyncio.FIRST_COMPLETED)
                finally:
                    drain.cancel()
            else:
                await self.drain()
            if call.done:
                # Answered already, within a write (connect_server delivers bytes at once;
                # a request of a handler's Context was written before this wait): still
                # give the loop a turn, as a socket would, so that a caller's loop of calls
                # cannot starve the other tasks.
                await asyncio.sleep(0)
            else:
                await waiter
        except asyncio.CancelledError:
            if not call.done:
                self.write(self.session.cancel(call))
                for task, job in list(self._tasks.items()):
                    if job is not None and job.call is call:  # its input_required handlers
                        task.cancel()
            raise
        return call.outcome()

    # ------------------------------------------------------------------ jobs

    def _start(self, job: Job) -> None:
        ctx = Context(self, job)
        if job.is_async:
            job.task = self._spawn(self._run_job(job, ctx, None), job)
            return
        try:
            value = job.handler(ctx, *job.args)
        except Exception as exc:
            self._finish(job, None, exc)
            return
        if inspect.isawaitable(value):  # a plain function that returned an awaitable
            job.task = self._spawn(self._run_job(job, ctx, value), job)
        else:
            self._finish(job, value, None)

    async def _run_job(self, job: Job, ctx: Context, awaitable: Awaitable[Any] | None) -> None:
        try:
            value = await (job.handler(ctx, *job.args) if awaitable is None else awaitable)
        except asyncio.CancelledError:
            # Cancelled by the peer (nothing is sent), or by our shutdown (nothing can be).
            self._finish(job, None, McpError(ErrorCode.INTERNAL_ERROR, "the handler was cancelled"))
            raise
        except Exception as exc:
            self._finish(job, None, exc)
        else:
            self._finish(job, value, None)
        await self.drain()

    def _finish(self, job: Job, value: Any, error: BaseException | None) -> None:
        if self.dead:
            return
        self.run(self.session.complete(job, value, error, now=self.now()))

    # ------------------------------------------------------------------ the end

    async def wait_read(self, timeout: float | None) -> None:
        """Wait (at most ``timeout`` seconds) until the read loop has seen the end, or was
        stopped (a connection broken on ``write_timeout`` cancels it: that is no error of
        the caller's, so its ``CancelledError`` is not raised here)."""
        task = self._read_task
        if task is not None and not task.done():
            await asyncio.wait((task,), timeout=timeout)

    def end_reading(self) -> None:
        """Stop reading and tell the session the peer is gone."""
        if self._read_task is not None:
            self._read_task.cancel()
        self.feed(b"")

    async def wait_jobs(self) -> None:
        """Wait until every job and callback task is done."""
        while self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)

    async def stop(self) -> None:
        """Stop everything: the read loop, the timer, the jobs; fail what is in flight."""
        task = self._read_task
        if task is not None and not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self.feed(b"")  # the session fails our calls and cancels its jobs
        self.dead = True
        if self._watch is not None:
            self._watch.cancel()
            self._watch = None
        if self._timer is not None:
            self._timer.cancel()
            self._timer = self._timer_at = None
        for job_task in list(self._tasks):
            job_task.cancel()
        await self.wait_jobs()
        self.closed.set()


class Context(AsyncContextBase):
    """What a handler gets as its first argument: the request (:attr:`method`,
    :attr:`params`, :attr:`request_id`, :attr:`cancelled`) and ways to talk back. The
    methods that send (:meth:`progress`, :meth:`log`, :meth:`resource_updated`,
    :meth:`list_changed`) are plain; those that wait for the client are coroutines (see
    :class:`~mcp_sansio.session.AsyncContextBase`).
    """

    def __init__(self, peer: _Peer, job: Job) -> None:
        super().__init__(peer.session, job, peer.now)
        self._peer = peer

    def _write(self, data: bytes) -> None:
        self._peer.write(data, self.job)

    async def _wait(self, call: Call | None) -> Any:
        return None if call is None else await self._peer.wait(call, b"")

    async def sleep(self, seconds: float) -> None:
        """Sleep (``asyncio.sleep``), so that handlers need not import a runtime."""
        await asyncio.sleep(seconds)
