"""The asyncio adapter: an MCP client and server on asyncio streams.

All protocol work happens in the sessions of ``mcp_sansio.session``; this module moves
bytes, keeps one timer for the session's deadlines, and runs handlers as tasks. A complete
example, a server and a client in one process over TCP on 127.0.0.1::

    import asyncio

    from mcp_sansio.asyncio import Client, serve_tcp
    from mcp_sansio.server import Server

    server = Server("demo", "1.0")

    @server.tool(input_schema={"type": "object", "properties": {"text": {"type": "string"}}})
    async def echo(ctx, arguments):
        "Echo the text back, after asking the user to confirm."
        answer = await ctx.elicit("Send it?", {"type": "object", "properties": {}})
        return arguments["text"] if answer["action"] == "accept" else "(declined)"

    def confirm(ctx, params):
        return {"action": "accept", "content": {}}

    async def main():
        listener = await serve_tcp(server)                   # 127.0.0.1, a free port
        async with listener, Client.connect_tcp(
            "127.0.0.1", listener.port, handlers={"elicitation/create": confirm}
        ) as client:
            print(client.protocol_version)                   # 2026-07-28
            result = await client.call_tool("echo", {"text": "hi"})
            print(result["content"][0]["text"])              # hi

    asyncio.run(main())

Everything here is also available over a subprocess's stdin/stdout
(:meth:`Client.connect_stdio`, :func:`serve_stdio`), a Unix socket (:meth:`Client.connect_unix`,
:func:`serve_unix`), any pair of asyncio streams (:class:`Client`, :func:`serve_stream`), or
an in-memory pipe to a server in the same event loop (:meth:`Client.connect_server`).

Handlers (tools, prompts, resources, and the client's handlers of the server's requests) may
be plain functions or coroutine functions. Plain functions run on the event loop, in line,
before the next message is read: keep them quick. Coroutine functions run as tasks, many at
once (on Python 3.12+ a server handler's task starts eagerly, up to its first real wait); when
the peer cancels a request, its task is cancelled.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import inspect
import io
import logging
import os
import stat
import subprocess
import sys
from collections.abc import Awaitable, Callable, Coroutine, Iterable, Mapping, Sequence
from typing import IO, Any, Protocol

from . import _backpressure, requests
from ._backpressure import stalled, write_options
from ._errors import ErrorCode
from ._events import Notification, RequestId
from .server import Server
from .session import (
    DEFAULT,
    DEFAULT_MAX_INPUT_ROUNDS,
    DEFAULT_MAX_TIMEOUT,
    DEFAULT_PROBE_TIMEOUT,
    DEFAULT_TIMEOUT,
    Action,
    Call,
    CallFinished,
    CancelJob,
    ClientSession,
    ClientView,
    Closed,
    ConnectionLost,
    ContextBase,
    DefaultType,
    HandleJob,
    Job,
    McpError,
    Opened,
    PeerNotification,
    RequestTimeout,
    Send,
    ServerSession,
    SessionBase,
)

__all__ = [
    "DEFAULT_MAX_WRITE_BUFFER",
    "DEFAULT_SHUTDOWN_TIMEOUT",
    "DEFAULT_WRITE_TIMEOUT",
    "Client",
    "ConnectionLost",
    "Context",
    "Listener",
    "McpError",
    "RequestTimeout",
    "serve_stdio",
    "serve_stream",
    "serve_tcp",
    "serve_unix",
]

#: How long :meth:`Client.aclose` waits, in seconds, for a stdio server to exit after its
#: stdin is closed, and again after ``SIGTERM``, before ``SIGKILL``.
DEFAULT_SHUTDOWN_TIMEOUT = 2.0

#: The bound, in bytes, on what waits to be written to one peer (1 MiB; the
#: ``max_write_buffer`` option): past it, nothing more is read from that peer until it is
#: down to half (see ``docs/errors.rst``, "Writing to a peer that does not read").
DEFAULT_MAX_WRITE_BUFFER = _backpressure.DEFAULT_MAX_WRITE_BUFFER

#: How long, in seconds, what waits to be written may wait with the peer taking none of it
#: (the ``write_timeout`` option) before the connection is closed as broken.
DEFAULT_WRITE_TIMEOUT = _backpressure.DEFAULT_WRITE_TIMEOUT

_READ_SIZE = 1 << 16
#: Unread bytes past which a writer's ``drain()`` on an in-memory pipe waits (1 MiB).
_PIPE_LIMIT = 1 << 20
_OPENING = frozenset({"initialize", "server/discover"})
#: How often, in seconds, a peer whose writes wait in asyncio's buffer is looked at: to
#: resume reading once the buffer is down to half of ``max_write_buffer``, and to see
#: whether the peer took anything within ``write_timeout``.
_WATCH_INTERVAL = 0.05
_log = logging.getLogger(__name__)

Streams = tuple["_Reader", "_Writer"]


class _Reader(Protocol):
    async def read(self, n: int = -1) -> bytes: ...


class _Writer(Protocol):
    def write(self, data: bytes) -> None: ...
    async def drain(self) -> None: ...
    def close(self) -> None: ...
    async def wait_closed(self) -> None: ...


class _File:
    """A regular file as stdin or stdout of :func:`serve_stdio` (asyncio's pipe transports
    refuse regular files, whose reads and writes do not block for long anyway)."""

    def __init__(self, file: IO[bytes]) -> None:
        self._file = file

    async def read(self, n: int = -1) -> bytes:
        return self._file.read(n)

    def write(self, data: bytes) -> None:
        self._file.write(data)

    async def drain(self) -> None:
        pass

    def close(self) -> None:
        self._file.close()

    async def wait_closed(self) -> None:
        pass


class _MemoryPipe:
    """One direction of an in-memory byte stream: what one side writes, the other reads, in
    order; ``close()`` is the end of the stream. Both directions of
    :meth:`Client.connect_server`; and the incoming side of a pipe, a socket or a
    subprocess's stdout, which its protocol (:class:`_InboxProtocol`,
    :class:`_ProcessProtocol`) writes into with :meth:`push`.

    A :class:`_Peer` reads it with :meth:`deliver_to`: each write is then handed to the
    reading side's ``feed`` at once, within the writer's call (no read task to wake, no turn
    of the event loop), and ``close()`` hands it ``b""``. Its :attr:`source`, when a
    protocol writes into it, is the transport read from: the peer pauses that transport
    while too much waits to be written (backpressure). When it is read with :meth:`read`
    instead, :meth:`drain` waits while more than :data:`_PIPE_LIMIT` bytes are unread (or
    until the pipe is closed), so a writer that outruns its reader is held back, as by a
    socket.
    """

    def __init__(self) -> None:
        self._chunks: collections.deque[bytes] = collections.deque()
        self._size = 0
        self._closed = False
        self._readable: asyncio.Future[None] | None = None
        self._writable: asyncio.Future[None] | None = None
        self._deliver: Callable[[bytes], None] | None = None
        self.source: asyncio.ReadTransport | None = None

    async def deliver_to(self, feed: Callable[[bytes], None]) -> None:
        """Hand what was written so far, then every later write, to ``feed``; return once
        the pipe is closed (after ``feed(b"")``). Cancelling it stops the deliveries."""
        self._deliver = feed
        try:
            while True:
                if self._chunks:
                    data = b"".join(self._chunks)
                    self._chunks.clear()
                    self._size = 0
                    feed(data)
                if self._closed:
                    feed(b"")
                    return
                waiter = self._readable = asyncio.get_running_loop().create_future()
                try:
                    await waiter
                finally:
                    self._readable = None
        finally:
            self._deliver = None

    async def read(self, n: int = -1) -> bytes:
        chunks = self._chunks
        while not chunks:
            if self._closed:
                return b""
            waiter = self._readable = asyncio.get_running_loop().create_future()
            try:
                await waiter
            finally:
                self._readable = None
        data = chunks.popleft() if len(chunks) == 1 else b"".join(chunks)
        chunks.clear()
        if 0 < n < len(data):
            data, rest = data[:n], data[n:]
            chunks.append(rest)
        self._size = len(chunks[0]) if chunks else 0
        _wake(self._writable)
        return data

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if self._closed:
            raise RuntimeError("the in-memory pipe is closed")
        if data:
            if self._deliver is not None:  # (it leaves nothing in _chunks)
                self._deliver(bytes(data))
                return
            self._chunks.append(bytes(data))
            self._size += len(data)
            _wake(self._readable)

    async def drain(self) -> None:
        while self._size > _PIPE_LIMIT and not self._closed:
            waiter = self._writable = asyncio.get_running_loop().create_future()
            try:
                await waiter
            finally:
                self._writable = None

    def push(self, data: bytes) -> None:
        """What a protocol's callback received: written, unless the pipe is closed."""
        if not self._closed:
            self.write(data)

    def close(self) -> None:
        self._closed = True
        _wake(self._readable)
        _wake(self._writable)

    async def wait_closed(self) -> None:
        pass


class _InboxProtocol(asyncio.StreamReaderProtocol):
    """A pipe or a socket whose incoming bytes go into ``inbox``: a :class:`_Peer` reading
    that gets each chunk within this callback, with no read task to wake (a turn of the
    event loop fewer per message, for each side). Writing, its flow control and closing are
    asyncio's: a ``StreamWriter`` on this protocol.

    :param connected: for a listening socket, called with ``(inbox, writer)`` for each
        connection; the coroutine it returns runs as the connection's task.
    """

    def __init__(
        self,
        inbox: _MemoryPipe,
        connected: Callable[[_MemoryPipe, asyncio.StreamWriter], Awaitable[None]] | None = None,
    ) -> None:
        callback = None if connected is None else (lambda _, writer: connected(inbox, writer))
        # No StreamReader (asyncio allows None): the bytes go to the inbox instead.
        super().__init__(None, callback, loop=asyncio.get_running_loop())  # type: ignore[arg-type]
        self.inbox = inbox

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.inbox.source = transport  # type: ignore[assignment]
        super().connection_made(transport)

    def data_received(self, data: bytes) -> None:
        self.inbox.push(data)

    def eof_received(self) -> bool:
        self.inbox.close()
        return bool(super().eof_received())  # True: a socket stays open for our answers

    def connection_lost(self, exc: Exception | None) -> None:
        self.inbox.close()
        super().connection_lost(exc)


class _ProcessProtocol(asyncio.subprocess.SubprocessStreamProtocol):
    """A subprocess's pipes as ``asyncio.create_subprocess_exec`` makes them, but with its
    stdout going into ``inbox`` (as for :class:`_InboxProtocol`)."""

    def __init__(self, inbox: _MemoryPipe, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(limit=_READ_SIZE, loop=loop)
        self.inbox = inbox

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        stdout = transport.get_pipe_transport(1)  # type: ignore[attr-defined]
        self.inbox.source = stdout

    def pipe_data_received(self, fd: int, data: bytes | str) -> None:
        if fd == 1:
            self.inbox.push(data)  # type: ignore[arg-type]
        else:
            super().pipe_data_received(fd, data)

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        if fd == 1:
            self.inbox.close()
        super().pipe_connection_lost(fd, exc)


def _wake(waiter: asyncio.Future[None] | None) -> None:
    if waiter is not None and not waiter.done():
        waiter.set_result(None)


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
        for call in self.session.calls:
            if not call.done:
                call.error = ConnectionLost(message)
                self._wake(call)
        for task in list(self._tasks):
            task.cancel()
        self._fail_opening(ConnectionLost(message))
        self.closed.set()

    # ------------------------------------------------------------------ actions

    def run(self, actions: Iterable[Action]) -> None:
        for action in actions:
            cls = type(action)
            if cls is Send:
                self.write(action.data)  # type: ignore[attr-defined]
            elif cls is CallFinished:
                self._wake(action.call)  # type: ignore[attr-defined]
            elif cls is HandleJob:
                self._start(action.job)  # type: ignore[attr-defined]
            elif cls is CancelJob:
                task = action.job.task  # type: ignore[attr-defined]
                if task is not None:
                    task.cancel()
            elif cls is PeerNotification:
                if self.on_notification is not None:
                    self.callback(self.on_notification, action.notification)  # type: ignore[attr-defined]
            elif cls is Opened:
                if self.opened is not None and not self.opened.done():
                    self.opened.set_result(action.result)  # type: ignore[attr-defined]
            elif cls is Closed:
                self._fail_opening(ConnectionLost("the server closed the connection"))
                self.closed.set()
        self.arm()

    def _wake(self, call: Call) -> None:
        waiter = call.waiter
        if waiter is not None:
            if not waiter.done():
                waiter.set_result(None)
        elif call.error is not None and call.method in _OPENING:
            self._fail_opening(call.error)

    def _fail_opening(self, error: McpError) -> None:
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
        session = self.session
        self.write(session.finish(job, value, error, now=self.now()))
        if isinstance(session, ClientSession):
            for call in session.take_finished():
                self._wake(call)
        self.arm()

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


class Context(ContextBase):
    """What a handler gets as its first argument: the request (:attr:`method`,
    :attr:`params`, :attr:`request_id`, :attr:`cancelled`) and ways to talk back. The
    methods that send (:meth:`progress`, :meth:`log`, :meth:`resource_updated`,
    :meth:`list_changed`) are plain; those that wait for the client are coroutines.

    In a server handler, :meth:`elicit`, :meth:`sample` and :meth:`list_roots` send a
    request to the client in the initialize era; in 2026-07-28 they make the session answer
    ``input_required``, and the handler runs again when the client retries with the answer
    (so code before the question may run more than once). Let every exception from them
    propagate.
    """

    def __init__(self, peer: _Peer, job: Job) -> None:
        super().__init__(peer.session, job, peer.now)
        self._peer = peer

    def _write(self, data: bytes) -> None:
        self._peer.write(data, self.job)

    async def _request(self, method: str, params: Mapping[str, Any]) -> Any:
        call, answer = self._ask(method, params)
        if call is None:
            return answer
        return await self._peer.wait(call, b"")

    async def elicit(
        self,
        message: str,
        requested_schema: Mapping[str, Any] | None = None,
        *,
        url: str | None = None,
    ) -> dict[str, Any]:
        """Ask the user, through the client (``elicitation/create``): a form described by
        ``requested_schema``, or a ``url`` to visit. Returns the client's result
        (``{"action": "accept" | "decline" | "cancel", "content": {...}}``)."""
        result: dict[str, Any] = await self._request(
            "elicitation/create", self.elicitation_params(message, requested_schema, url=url)
        )
        return result

    async def sample(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """Ask the client's model (``sampling/createMessage`` with these params); returns
        the client's result."""
        result: dict[str, Any] = await self._request("sampling/createMessage", params)
        return result

    async def list_roots(self) -> dict[str, Any]:
        """Ask the client for its roots (``roots/list``); returns its ``ListRootsResult``."""
        result: dict[str, Any] = await self._request("roots/list", {})
        return result

    async def sleep(self, seconds: float) -> None:
        """Sleep (``asyncio.sleep``), so that handlers need not import a runtime."""
        await asyncio.sleep(seconds)


# ---------------------------------------------------------------------- client


class Client(ClientView):
    """An MCP client on a pair of asyncio streams, used as an async context manager::

        async with Client.connect_stdio(["python", "server.py"]) as client:
            tools = await client.list_tools()

    Entering opens the session (a ``server/discover`` probe with a fallback to
    ``initialize`` when the client speaks both eras, as by default); leaving closes it.
    Calls may run concurrently, each in its own task.

    :param reader: the stream to read the server's messages from.
    :param writer: the stream to write to.
    :param on_notification: called with each :class:`~mcp_sansio.Notification` from the
        server (logs, list changes, resource updates); may be a coroutine function.
    :param versions: the protocol versions to speak, newest first (default: all).
    :param handlers: the server's requests this client answers, by method
        (``"sampling/createMessage"``, ``"elicitation/create"``, ``"roots/list"``), each
        ``handler(context, params) -> result`` (plain or ``async``). They also answer the
        ``input_required`` requests of 2026-07-28.
    :param timeout: the default timeout of a request, in seconds (``None``: none).
    :param max_write_buffer: the bound, in bytes, on what waits to be written to the server
        (:data:`DEFAULT_MAX_WRITE_BUFFER`, 1 MiB): past it, the client stops reading the
        server's messages until it is down to half.
    :param write_timeout: when the server takes none of what waits to be written for this
        many seconds (:data:`DEFAULT_WRITE_TIMEOUT`, 30 s; ``None``: no limit), the
        connection is closed as broken: every call fails with :class:`ConnectionLost`
        (``"the server stopped reading: N bytes unwritten for T s ..."``).
    :param options: other keywords of ``mcp_sansio.session.ClientSession``
        (``capabilities=``, ``client_info=``, ``probe_timeout=``, ``max_input_rounds=``,
        ``max_message_size=``, …).
    """

    def __init__(
        self,
        reader: asyncio.StreamReader | None = None,
        writer: asyncio.StreamWriter | None = None,
        *,
        on_notification: Callable[[Notification], Any] | None = None,
        versions: Iterable[str] | None = None,
        handlers: Mapping[str, Callable[..., Any]] | None = None,
        capabilities: Mapping[str, Any] | None = None,
        client_info: Mapping[str, Any] | None = None,
        timeout: float | None = DEFAULT_TIMEOUT,
        probe_timeout: float = DEFAULT_PROBE_TIMEOUT,
        max_input_rounds: int = DEFAULT_MAX_INPUT_ROUNDS,
        **options: Any,
    ) -> None:
        self._max_write_buffer, self._write_timeout = write_options(options)
        self.session = ClientSession(
            versions=versions,
            handlers=handlers,
            capabilities=capabilities,
            client_info=client_info,
            timeout=timeout,
            probe_timeout=probe_timeout,
            max_input_rounds=max_input_rounds,
            **options,
        )
        """The sans-IO session underneath."""
        self.on_notification = on_notification
        """The callback for the server's notifications, or ``None``."""
        self.process: asyncio.subprocess.Process | None = None
        """The server's process, for :meth:`connect_stdio`."""
        self.shutdown_timeout = DEFAULT_SHUTDOWN_TIMEOUT
        """For a stdio server: how long to wait after closing its stdin, then after SIGTERM;
        for :meth:`connect_server`: how long the server's task has to finish."""
        self._reader: _Reader | None = reader
        self._writer: _Writer | None = writer
        self._connect: Callable[[], Awaitable[Streams]] | None = None
        self._peer: _Peer | None = None
        self._opened: Mapping[str, Any] | None = None
        self._background: list[asyncio.Task[None]] = []
        self._server_task: asyncio.Task[None] | None = None  # connect_server's
        self._closed = False

    # ------------------------------------------------------------------ constructors

    @classmethod
    def connect_stdio(
        cls,
        command: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        stderr: int | IO[Any] | None = None,
        shutdown_timeout: float = DEFAULT_SHUTDOWN_TIMEOUT,
        **options: Any,
    ) -> Client:
        """A client of a server started as a subprocess, talking over its stdin/stdout.

        :param command: the program and its arguments.
        :param env: its environment (default: this process's).
        :param cwd: its working directory.
        :param stderr: where its stderr goes: ``None`` (default) passes it through to ours;
            a file descriptor, ``subprocess.DEVNULL`` or a file with a ``fileno()``
            receives it; any other object with ``write()`` (``io.BytesIO``,
            ``io.StringIO``) gets a copy as it arrives.
        :param shutdown_timeout: on close, how long to wait for the server to exit after
            its stdin is closed, then after ``SIGTERM``, before ``SIGKILL``.
        :param options: as for :class:`Client`.
        """
        client = cls(**options)
        client.shutdown_timeout = shutdown_timeout

        async def connect() -> Streams:
            sink: Any = None
            target: Any = stderr
            if stderr is not None and not isinstance(stderr, int):
                try:
                    stderr.fileno()
                except (AttributeError, OSError, ValueError):
                    sink, target = stderr, subprocess.PIPE
            loop = asyncio.get_running_loop()
            inbox = _MemoryPipe()  # the server's stdout
            transport, protocol = await loop.subprocess_exec(
                lambda: _ProcessProtocol(inbox, loop),
                *command,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=target,
                env=dict(env) if env is not None else None,
                cwd=cwd,
            )
            process = asyncio.subprocess.Process(transport, protocol, loop)
            client.process = process
            if sink is not None:
                assert process.stderr is not None
                client._background.append(loop.create_task(_copy(process.stderr, sink)))
            assert process.stdin is not None
            return inbox, process.stdin

        client._connect = connect
        return client

    @classmethod
    def connect_tcp(cls, host: str, port: int, **options: Any) -> Client:
        """A client of a server listening on TCP ``host:port``; ``options`` as for
        :class:`Client`."""
        client = cls(**options)
        client._connect = lambda: _open_connection(host, port)
        return client

    @classmethod
    def connect_unix(cls, path: str | os.PathLike[str], **options: Any) -> Client:
        """A client of a server listening on the Unix socket ``path``; ``options`` as for
        :class:`Client`."""
        client = cls(**options)
        client._connect = lambda: _open_connection(path)
        return client

    @classmethod
    def connect_server(
        cls,
        server: Server,
        *,
        server_options: Mapping[str, Any] | None = None,
        **options: Any,
    ) -> Client:
        """A client of ``server`` (a ``mcp_sansio.server.Server``), served in this event
        loop over an in-memory pipe: no socket, no subprocess. The whole protocol runs as
        over a socket (the bytes, both sessions' checks); for tests, and for embedding a
        server in the program that uses it.

        The server runs as a task from :meth:`open` on; closing the client ends its input,
        and :meth:`aclose` waits up to :attr:`shutdown_timeout` seconds for it to finish
        (its handlers' answers still go out) before cancelling it.

        :param server_options: keywords of ``mcp_sansio.session.ServerSession`` for the
            server's side (``versions=``, ``timeout=``, …), as for :func:`serve_stream`.
        :param options: as for :class:`Client`.
        """
        client = cls(**options)

        async def connect() -> Streams:
            to_server, to_client = _MemoryPipe(), _MemoryPipe()
            client._server_task = asyncio.get_running_loop().create_task(
                _serve(server, to_server, to_client, server_options or {})
            )
            return to_client, to_server

        client._connect = connect
        return client

    @classmethod
    def connect_http(
        cls, url: str, *, headers: Mapping[str, str] | None = None, **options: Any
    ) -> Client:
        """A client of a server's Streamable HTTP endpoint, e.g. ``"http://127.0.0.1:8000/mcp"``
        (``https://`` uses TLS with the system's default context, or ``ssl=``). Needs
        ``h11`` (the ``http`` extra).

        Each message is POSTed on a connection from a small keep-alive pool; answers come
        as JSON or event streams, and HTTP failures reach the calls as :class:`McpError`.
        In the initialize era the session id and protocol version go with every request,
        and a ``DELETE`` ends the session on close.

        :param headers: extra headers sent with every request (``Authorization``…).
        :param options: the transport's keywords ``max_body_size=`` (bytes, default 64 MiB),
            ``max_reconnects=``, ``default_retry_ms=``, ``listen=`` (open the standalone GET
            stream; off by default), ``reopen=`` (start a new session when the server answers
            404 to the session id; on by default), ``expired_statuses=`` (the statuses that
            mean it expired: ``(404,)``; ``(404, 400)`` for servers that answer 400),
            ``max_idle=``, ``ssl=``, ``close_timeout=`` (see
            ``mcp_sansio.http._asyncio_client.HttpStreams``); the others as for
            :class:`Client`.
        """
        try:
            from .http._asyncio_client import HTTP_OPTIONS, HttpStreams, parse_url
        except ImportError as exc:  # pragma: no cover - h11 missing
            raise ImportError(
                "connect_http needs h11, the http extra: pip install 'mcp-sansio[http]'"
                " (from a checkout: pip install '.[http]')"
            ) from exc
        parse_url(url)  # a bad URL fails here, not at open()
        transport_options = {k: options.pop(k) for k in HTTP_OPTIONS if k in options}
        client = cls(**options)

        async def connect() -> Streams:
            streams = HttpStreams(url, headers=headers, **transport_options)
            return streams, streams

        client._connect = connect
        return client

    # ------------------------------------------------------------------ opening, closing

    async def open(self) -> Mapping[str, Any]:
        """Connect and open the session (what ``async with`` does); returns the
        ``initialize`` or ``server/discover`` result. Raises :class:`McpError` (such as
        :class:`RequestTimeout` or :class:`ConnectionLost`) when the server refuses or
        does not answer; the connection is then closed."""
        if self._peer is not None:
            raise RuntimeError("this client is already open")
        try:
            if self._connect is not None:
                self._reader, self._writer = await self._connect()
            if self._reader is None or self._writer is None:
                raise RuntimeError("a Client needs a reader and a writer, or a connect_*()")
            peer = self._peer = _Peer(
                self.session,
                self._reader,
                self._writer,
                self.on_notification,
                max_write_buffer=self._max_write_buffer,
                write_timeout=self._write_timeout,
            )
            peer.opened = peer.loop.create_future()
            peer.start()
            if self.process is not None:
                self._background.append(peer.loop.create_task(self._watch(self.process, peer)))
            peer.run(self.session.open(peer.now()))
            self._opened = await peer.opened
            return self._opened
        except BaseException:
            await self.aclose()
            raise

    async def _watch(self, process: asyncio.subprocess.Process, peer: _Peer) -> None:
        # When the server dies but something else holds its stdout open, EOF never comes.
        await _exited(process, None, poll=0.25)
        await peer.wait_read(1.0)
        peer.end_reading()

    async def aclose(self) -> None:
        """Close the session. A stdio server is shut down as the spec says: its stdin is
        closed, then (after :attr:`shutdown_timeout` seconds each) ``SIGTERM`` and
        ``SIGKILL``. Calls still in flight fail with :class:`ConnectionLost`."""
        if self._closed:
            return
        self._closed = True
        writer, peer, process = self._writer, self._peer, self.process
        if writer is not None:
            writer.close()
        if process is not None:
            await _stop_process(process, self.shutdown_timeout)
        if peer is not None:
            await peer.wait_read(self.shutdown_timeout if process is not None else 0.5)
            await peer.stop()
        served = self._server_task
        if served is not None:
            await asyncio.wait([served], timeout=self.shutdown_timeout)
            served.cancel()
            await asyncio.gather(served, return_exceptions=True)
        for task in self._background:
            task.cancel()
        await asyncio.gather(*self._background, return_exceptions=True)
        if process is not None:
            # Its pipes stay open while a child of the server holds them; asyncio offers no
            # public way to close them but the transport.
            transport = getattr(process, "_transport", None)
            if transport is not None:
                transport.close()
        if writer is not None:
            if peer is not None:
                await peer.flush()
            with contextlib.suppress(OSError, RuntimeError):
                await writer.wait_closed()

    async def __aenter__(self) -> Client:
        await self.open()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    # ------------------------------------------------------------------ state

    def _require(self) -> _Peer:
        if self._peer is None or self._closed:
            raise RuntimeError("the client is not open")
        return self._peer

    @property
    def closed(self) -> bool:
        """Whether the connection is closed (by us or by the server), or broken."""
        peer = self._peer
        return self._closed or self.session.closed or (peer is not None and peer.dead)

    # ------------------------------------------------------------------ calls

    async def request(
        self,
        method: str,
        params: Mapping[str, Any] | None = None,
        *,
        timeout: float | DefaultType | None = DEFAULT,
        reset_on_progress: bool = False,
        max_timeout: float | None = DEFAULT_MAX_TIMEOUT,
        on_progress: Callable[[Mapping[str, Any]], Any] | None = None,
    ) -> Any:
        """Send a request and return its result.

        :param timeout: seconds before the request is cancelled and :class:`RequestTimeout`
            raised (default: the client's ``timeout``, itself 60 s by default; ``None``:
            wait forever).
        :param on_progress: called with the params of each ``notifications/progress`` for
            this request (``progress``, ``total``, ``message``); may be a coroutine function.
        :param reset_on_progress: restart the timeout on each progress notification…
        :param max_timeout: …but never beyond this many seconds in all.

        Raises :class:`McpError` for an error answer, :class:`RequestTimeout`,
        :class:`ConnectionLost`. If the calling task is cancelled, the server is told
        (``notifications/cancelled``).
        """
        peer = self._require()
        if peer.dead:
            raise ConnectionLost(peer.failure or "the connection broke")
        callback = None
        if on_progress is not None:

            def callback(params: Mapping[str, Any]) -> None:
                peer.callback(on_progress, params)

        call, data = self.session.call(
            method,
            params,
            now=peer.now(),
            timeout=timeout,
            reset_on_progress=reset_on_progress,
            max_timeout=max_timeout,
            on_progress=callback,
        )
        return await peer.wait(call, data)

    async def ping(self, **options: Any) -> dict[str, Any]:
        """``ping`` (initialize era). ``options`` (here and below): as for :meth:`request`."""
        return await self.request(*requests.ping(), **options)  # type: ignore[no-any-return]

    async def list_tools(self, cursor: str | None = None, **options: Any) -> dict[str, Any]:
        """``tools/list``: ``{"tools": [...], "nextCursor"?}``."""
        return await self.request(*requests.list_tools(cursor), **options)  # type: ignore[no-any-return]

    async def call_tool(
        self, name: str, arguments: Mapping[str, Any] | None = None, **options: Any
    ) -> dict[str, Any]:
        """``tools/call``: ``{"content": [...], "isError"?, "structuredContent"?}``."""
        return await self.request(*requests.call_tool(name, arguments), **options)  # type: ignore[no-any-return]

    async def list_resources(self, cursor: str | None = None, **options: Any) -> dict[str, Any]:
        """``resources/list``."""
        return await self.request(*requests.list_resources(cursor), **options)  # type: ignore[no-any-return]

    async def list_resource_templates(
        self, cursor: str | None = None, **options: Any
    ) -> dict[str, Any]:
        """``resources/templates/list``."""
        return await self.request(*requests.list_resource_templates(cursor), **options)  # type: ignore[no-any-return]

    async def read_resource(self, uri: str, **options: Any) -> dict[str, Any]:
        """``resources/read``: ``{"contents": [...]}``."""
        return await self.request(*requests.read_resource(uri), **options)  # type: ignore[no-any-return]

    async def subscribe(self, uri: str, **options: Any) -> dict[str, Any]:
        """``resources/subscribe`` (initialize era); updates reach ``on_notification``."""
        return await self.request(*requests.subscribe(uri), **options)  # type: ignore[no-any-return]

    async def unsubscribe(self, uri: str, **options: Any) -> dict[str, Any]:
        """``resources/unsubscribe`` (initialize era)."""
        return await self.request(*requests.unsubscribe(uri), **options)  # type: ignore[no-any-return]

    async def list_prompts(self, cursor: str | None = None, **options: Any) -> dict[str, Any]:
        """``prompts/list``."""
        return await self.request(*requests.list_prompts(cursor), **options)  # type: ignore[no-any-return]

    async def get_prompt(
        self, name: str, arguments: Mapping[str, str] | None = None, **options: Any
    ) -> dict[str, Any]:
        """``prompts/get``: ``{"messages": [...], "description"?}``."""
        return await self.request(*requests.get_prompt(name, arguments), **options)  # type: ignore[no-any-return]

    async def complete(
        self,
        ref: Mapping[str, Any],
        argument_name: str,
        value: str,
        context_arguments: Mapping[str, str] | None = None,
        **options: Any,
    ) -> dict[str, Any]:
        """``completion/complete``: ``{"completion": {"values": [...], ...}}``."""
        return await self.request(  # type: ignore[no-any-return]
            *requests.complete(ref, argument_name, value, context_arguments), **options
        )

    async def set_logging_level(self, level: str, **options: Any) -> dict[str, Any]:
        """Receive log messages at ``level`` and above: ``logging/setLevel`` in the
        initialize era; in 2026-07-28, the level goes with every later request."""
        req = self.session.logging_request(level)
        return {} if req is None else await self.request(*req, **options)

    async def listen(
        self,
        *,
        tools: bool = False,
        prompts: bool = False,
        resources: bool = False,
        resource_uris: Sequence[str] = (),
        **options: Any,
    ) -> dict[str, Any]:
        """``subscriptions/listen`` (2026-07-28): a stream of notifications, which reach
        ``on_notification`` (first ``notifications/subscriptions/acknowledged``). It returns
        only when the server ends the stream, so run it in a task and cancel the task to
        stop listening. Its ``timeout`` defaults to ``None``."""
        options.setdefault("timeout", None)
        req = requests.listen(
            tools=tools, prompts=prompts, resources=resources, resource_uris=resource_uris
        )
        return await self.request(*req, **options)  # type: ignore[no-any-return]


async def _open_connection(
    host_or_path: str | os.PathLike[str], port: int | None = None
) -> Streams:
    """Connect to ``host:port`` over TCP, or to the Unix socket ``host_or_path`` when there
    is no port; the socket's bytes go into a :class:`_MemoryPipe`."""
    loop = asyncio.get_running_loop()
    inbox = _MemoryPipe()
    if port is None:
        transport, protocol = await loop.create_unix_connection(
            lambda: _InboxProtocol(inbox), os.fspath(host_or_path)
        )
    else:
        transport, protocol = await loop.create_connection(
            lambda: _InboxProtocol(inbox), str(host_or_path), port
        )
    return inbox, asyncio.StreamWriter(transport, protocol, None, loop)


async def _copy(source: asyncio.StreamReader, sink: Any) -> None:
    text = isinstance(sink, io.TextIOBase)
    while data := await source.read(_READ_SIZE):
        sink.write(data.decode(errors="replace") if text else data)


async def _stop_process(process: asyncio.subprocess.Process, timeout: float) -> None:
    """Wait for a process whose stdin was closed; then SIGTERM, wait; then SIGKILL."""
    for stop in (None, process.terminate, process.kill):
        if stop is not None:
            with contextlib.suppress(ProcessLookupError):
                stop()
        if await _exited(process, timeout if stop is not process.kill else None):
            return


async def _exited(
    process: asyncio.subprocess.Process, timeout: float | None, poll: float = 0.05
) -> bool:
    """Wait until ``process`` exits, at most ``timeout`` seconds; whether it did. (Its
    ``wait()`` also waits until its pipes close, which a child of it may delay forever.)"""
    loop = asyncio.get_running_loop()
    end = None if timeout is None else loop.time() + timeout
    waiting = loop.create_task(process.wait())
    try:
        while process.returncode is None:
            step = poll if end is None else min(poll, end - loop.time())
            if step <= 0:
                return False
            await asyncio.wait({waiting}, timeout=step)
        return True
    finally:
        waiting.cancel()


# ---------------------------------------------------------------------- server


async def serve_stream(
    server: Server,
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    **session_options: Any,
) -> None:
    """Serve ``server`` (a ``mcp_sansio.server.Server``) on one connection until the
    client closes it; then close ``writer``.

    :param session_options: keywords of ``mcp_sansio.session.ServerSession``
        (``versions=``, ``timeout=`` for requests to the client, ``state_keys=``,
        ``max_message_size=``, …), and ``max_write_buffer=`` and ``write_timeout=`` as for
        :class:`Client` (a client that stops reading stops being read, then is
        disconnected).
    """
    await _serve(server, reader, writer, session_options)


async def _serve(
    server: Server, reader: _Reader, writer: _Writer, session_options: Mapping[str, Any]
) -> None:
    options = dict(session_options)
    limit, timeout = write_options(options)
    peer = _Peer(
        ServerSession(server, **options),
        reader,
        writer,
        max_write_buffer=limit,
        write_timeout=timeout,
    )
    peer.start()
    try:
        await peer.closed.wait()
        await peer.wait_jobs()
    finally:
        await peer.stop()
        writer.close()
        await peer.flush()
        with contextlib.suppress(OSError, RuntimeError):
            await writer.wait_closed()


async def serve_stdio(server: Server, **session_options: Any) -> None:
    """Serve ``server`` on this process's stdin and stdout until stdin closes. Nothing else
    may write to stdout meanwhile (log to stderr). ``session_options`` as for
    :func:`serve_stream`."""
    loop = asyncio.get_running_loop()
    # Duplicates, so that closing them leaves sys.stdin and sys.stdout usable.
    stdin = os.fdopen(os.dup(sys.stdin.fileno()), "rb", buffering=0)
    stdout = os.fdopen(os.dup(sys.stdout.fileno()), "wb", buffering=0)
    reader: _Reader
    writer: _Writer
    closing: _File | asyncio.ReadTransport
    if stat.S_ISREG(os.fstat(stdin.fileno()).st_mode):
        reader = closing = _File(stdin)
    else:
        reader = inbox = _MemoryPipe()
        closing, _ = await loop.connect_read_pipe(lambda: _InboxProtocol(inbox), stdin)
    if stat.S_ISREG(os.fstat(stdout.fileno()).st_mode):
        writer = _File(stdout)
    else:
        transport, protocol = await loop.connect_write_pipe(
            asyncio.streams.FlowControlMixin, stdout
        )
        writer = asyncio.StreamWriter(transport, protocol, None, loop)
    try:
        await _serve(server, reader, writer, session_options)
    finally:
        closing.close()


class Listener:
    """A listening socket that serves an MCP server on each connection, returned by
    :func:`serve_tcp` and :func:`serve_unix`. An async context manager: leaving it closes
    the socket and the connections."""

    def __init__(self, server: Server, session_options: Mapping[str, Any]) -> None:
        self._server = server
        self._options = dict(session_options)
        self._connections: set[asyncio.Task[Any]] = set()
        self.sockets: tuple[Any, ...] = ()
        """The listening sockets."""
        self._listening: asyncio.Server | None = None
        self._unix_path: str | None = None
        self._closed = asyncio.Event()

    def _protocol(self) -> _InboxProtocol:
        """The protocol of one accepted connection."""
        return _InboxProtocol(_MemoryPipe(), self._serve)

    async def _serve(self, reader: _Reader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._connections.add(task)
        try:
            await self._handle(reader, writer)
        except asyncio.CancelledError:
            # close() cancelled us: end normally (asyncio's callback on this task would
            # otherwise log the cancellation as an error).
            pass
        finally:
            self._connections.discard(task)

    async def _handle(self, reader: _Reader, writer: asyncio.StreamWriter) -> None:
        await _serve(self._server, reader, writer, self._options)

    @property
    def port(self) -> int | None:
        """The TCP port listened on (``None`` for a Unix socket)."""
        for sock in self.sockets:
            address = sock.getsockname()
            if isinstance(address, tuple):
                return int(address[1])
        return None

    @property
    def address(self) -> Any:
        """The address listened on: ``(host, port)``, or the Unix socket's path."""
        return self.sockets[0].getsockname() if self.sockets else None

    async def serve_forever(self) -> None:
        """Wait until the listener is closed."""
        await self._closed.wait()

    def close(self) -> None:
        """Stop listening and close every connection (their handlers are cancelled); a
        Unix socket's file is removed."""
        self._closed.set()
        if self._listening is not None:
            self._listening.close()
        if self._unix_path is not None:
            with contextlib.suppress(OSError):
                os.unlink(self._unix_path)
            self._unix_path = None
        for task in self._connections:
            task.cancel()

    async def wait_closed(self) -> None:
        """Wait until the socket and every connection are closed."""
        if self._listening is not None:
            await self._listening.wait_closed()
        await asyncio.gather(*self._connections, return_exceptions=True)

    async def aclose(self) -> None:
        """:meth:`close`, then :meth:`wait_closed`."""
        self.close()
        await self.wait_closed()

    async def __aenter__(self) -> Listener:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


async def serve_tcp(
    server: Server, host: str = "127.0.0.1", port: int = 0, **session_options: Any
) -> Listener:
    """Listen on TCP ``host:port`` (default: loopback, a free port: see
    :attr:`Listener.port`) and serve ``server`` on each connection, one session each.
    ``session_options`` as for :func:`serve_stream`."""
    listener = Listener(server, session_options)
    listening = await asyncio.get_running_loop().create_server(listener._protocol, host, port)
    listener._listening = listening
    listener.sockets = tuple(listening.sockets)
    return listener


async def serve_http(
    server: Server, host: str = "127.0.0.1", port: int = 0, **options: Any
) -> Listener:
    """Serve ``server`` over Streamable HTTP (needs the ``http`` extra: h11) on
    ``host:port``, at ``/mcp`` by default; returns an ``HttpListener`` (its ``url`` is the
    endpoint). The options: ``path=`` (the endpoint, ``"/mcp"``), ``keepalive=`` (seconds
    between ``: keep-alive`` comments on open SSE streams), ``idle_timeout=`` (seconds a
    connection may keep us waiting for a request), and the keywords of
    :class:`~mcp_sansio.http.HttpServer` (``allowed_hosts=``, ``json_response=``,
    ``max_body_size=``, …) and of each :class:`~mcp_sansio.session.ServerSession`
    (``versions=``, …)."""
    from .http._asyncio_server import serve_http as serve

    return await serve(server, host, port, **options)


async def serve_unix(
    server: Server, path: str | os.PathLike[str], **session_options: Any
) -> Listener:
    """Listen on the Unix socket ``path`` and serve ``server`` on each connection.
    ``session_options`` as for :func:`serve_stream`."""
    listener = Listener(server, session_options)
    listening = await asyncio.get_running_loop().create_unix_server(listener._protocol, path)
    listener._listening = listening
    listener._unix_path = os.fspath(path)
    listener.sockets = tuple(listening.sockets)
    return listener
