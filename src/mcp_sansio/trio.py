"""The trio adapter: an MCP client and server over stdio, TCP, Unix sockets or any trio stream,
and a server over Streamable HTTP (:func:`serve_http`).

All protocol work is done by ``mcp_sansio.session``; this module moves bytes, owns the
clock (``trio.current_time``) and runs handlers in tasks. One connection is a small
nursery: a reader task, a writer task (writes are buffered and go out in order, so the
synchronous :class:`Context` methods can write too), a timer task that sleeps until
the session's next deadline, and a watchdog that closes the connection as broken when the
peer stops reading (``write_timeout``). While more than ``max_write_buffer`` bytes wait to
be written, the reader reads nothing. Each handler runs in its own task and cancel scope;
the peer's ``notifications/cancelled`` cancels it.

A complete example: a server with one tool, and a client that starts it as a subprocess
(save it as ``demo.py`` and run ``python demo.py``)::

    import sys

    import trio

    from mcp_sansio.server import Server
    from mcp_sansio.trio import Client, serve_stdio

    server = Server("demo", "1.0")


    @server.tool(input_schema={"type": "object", "properties": {"text": {"type": "string"}}})
    async def shout(ctx, arguments):
        "Shout the text back, if the user agrees."
        answer = await ctx.elicit("Shout it?", {"type": "object", "properties": {}})
        if answer["action"] != "accept":
            return "(not shouted)"
        for step in range(3):
            ctx.progress(step + 1, 3)
            await ctx.sleep(0.01)
        return arguments["text"].upper()


    def confirm(ctx, params):
        return {"action": "accept", "content": {}}


    async def main():
        command = [sys.executable, __file__, "serve"]
        handlers = {"elicitation/create": confirm}
        async with Client.connect_stdio(command, handlers=handlers) as client:
            print("speaking", client.protocol_version, "to", client.server_info["name"])
            result = await client.call_tool("shout", {"text": "hello"}, on_progress=print)
            print(result["content"][0]["text"])


    if __name__ == "__main__":
        trio.run(serve_stdio, server) if sys.argv[1:] == ["serve"] else trio.run(main)

The same handler runs in both protocol eras: in the ``initialize`` era ``ctx.elicit`` sends
``elicitation/create`` to the client and waits for its answer; in 2026-07-28 it makes the
request end with ``input_required``, and the client runs its handler and retries by itself.

Sync handlers and callbacks run inline in the event loop (keep them quick); coroutine
functions run as tasks. Requires the ``trio`` extra (from a checkout: ``pip install '.[trio]'``).
"""

from __future__ import annotations

import contextlib
import inspect
import math
import os
import stat
import subprocess
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import IO, Any, NoReturn

import trio

from . import _backpressure, requests
from ._backpressure import stalled, write_options
from ._events import Notification, RequestId
from .server import Server
from .session import (
    DEFAULT,
    DEFAULT_MAX_TIMEOUT,
    Action,
    Call,
    CallFinished,
    CallProgress,
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
    "McpError",
    "RequestTimeout",
    "serve_http",
    "serve_stdio",
    "serve_stream",
    "serve_tcp",
    "serve_unix",
]

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
        self.open_error: McpError | None = None
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
                self._finished(call)
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
        """Carry out the session's actions."""
        for action in actions:
            cls = type(action)
            if cls is Send:
                self.write(action.data)  # type: ignore[attr-defined]
            elif cls is CallFinished:
                self._finished(action.call)  # type: ignore[attr-defined]
            elif cls is HandleJob:
                self._start(action.job)  # type: ignore[attr-defined]
            elif cls is CancelJob:
                action.job.task.cancel()  # type: ignore[attr-defined]
            elif cls is CallProgress:
                call = action.call  # type: ignore[attr-defined]
                callback = call.on_progress
                if isinstance(callback, _OnProgress) and callback.error and not call.done:
                    self.write(self.session.cancel(call, "on_progress failed"))
                    self._finished(call)
            elif cls is PeerNotification:
                self._notify(action.notification)  # type: ignore[attr-defined]
            elif cls is Opened or cls is Closed:
                self.opened.set()
        self.arm()

    def _finished(self, call: Call) -> None:
        waiter = call.waiter
        if waiter is not None:
            waiter.set()
        elif call.error is not None and not self.opened.is_set():
            self.open_error = call.error  # the opening call failed
            self.opened.set()

    def _notify(self, note: Notification) -> None:
        callback = self.on_notification
        if callback is None:
            return
        if inspect.iscoroutinefunction(callback):
            assert self._jobs is not None
            self._jobs.start_soon(callback, note)
        else:
            callback(note)

    # -------------------------------------------------------------- handlers and calls

    def _start(self, job: Job) -> None:
        job.task = trio.CancelScope()
        if job.call is not None:
            self._input_jobs.setdefault(job.call, set()).add(job)
        assert self._jobs is not None
        self._jobs.start_soon(self._handle, job, name=f"mcp {job.method} {job.id!r}")

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
        session = self.session
        self.write(session.finish(job, value, error, now=trio.current_time()))
        if isinstance(session, ClientSession):
            for call in session.take_finished():
                self._finished(call)
        self.arm()

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
        callback = call.on_progress
        if isinstance(callback, _OnProgress) and callback.error is not None:
            raise callback.error
        return call.outcome()


class _OnProgress:
    """A caller's ``on_progress``, for the session; what it raises is kept for the caller."""

    __slots__ = ("callback", "error")

    def __init__(self, callback: Callable[[Mapping[str, Any]], Any]) -> None:
        self.callback = callback
        self.error: Exception | None = None

    def __call__(self, params: Mapping[str, Any]) -> None:
        if self.error is None:
            try:
                self.callback(params)
            except Exception as exc:
                self.error = exc


class Context(ContextBase):
    """What a handler gets as its first argument: the request (:attr:`method`,
    :attr:`params`, :attr:`request_id`, :attr:`cancelled`) and ways to talk back.
    :meth:`progress`, :meth:`log`, :meth:`resource_updated` and :meth:`list_changed` are
    plain calls (they queue a message); the methods that wait are coroutines.

    In a server handler, :meth:`elicit`, :meth:`sample` and :meth:`list_roots` send a
    request to the client in the initialize era; in 2026-07-28 they make the request end
    with ``input_required``, and the handler runs again when the client retries with the
    answer (so code before the question may run more than once). Let every exception from
    them propagate (``mcp_sansio.session.NeedInput`` is how the second case works).
    """

    def __init__(self, session: SessionBase, job: Job, loop: _Loop) -> None:
        super().__init__(session, job, trio.current_time)
        self._loop = loop

    def _write(self, data: bytes) -> None:
        self._loop.write(data, self.job)

    async def _request(self, method: str, params: Mapping[str, Any]) -> dict[str, Any]:
        call, answer = self._ask(method, params)
        result: dict[str, Any]
        if call is None:
            await trio.lowlevel.checkpoint()
            result = answer
        else:
            result = await self._loop.wait(call)
        return result

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
        params = self.elicitation_params(message, requested_schema, url=url)
        return await self._request("elicitation/create", params)

    async def sample(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """Ask the client's model (``sampling/createMessage`` with these params); returns
        the client's result."""
        return await self._request("sampling/createMessage", params)

    async def list_roots(self) -> dict[str, Any]:
        """Ask for the client's roots (``roots/list``); returns its result
        (``{"roots": [{"uri", "name"?}, ...]}``)."""
        return await self._request("roots/list", {})

    async def sleep(self, seconds: float) -> None:
        """Sleep (``trio.sleep``), so that handlers need not import a runtime."""
        await trio.sleep(seconds)


# ---------------------------------------------------------------------- client


class Client(ClientView):
    """An MCP client on a trio stream, used as an async context manager::

        async with Client.connect_tcp("127.0.0.1", port) as client:
            tools = await client.list_tools()

    Entering opens the session (a ``server/discover`` probe with a fallback to
    ``initialize`` when the client speaks both eras, as by default); leaving closes it,
    after writing what is queued (within ``shutdown_timeout``), and closes the stream.
    Calls may run concurrently, each in its own task.

    :param stream: a connected ``trio.abc.Stream`` (for a pair of one-way streams, a
        ``trio.StapledStream``).
    :param on_notification: called with each :class:`~mcp_sansio.Notification` from the
        server (logs, list changes, resource updates); a coroutine function runs as a task.
        What a plain function raises tears the client down.
    :param shutdown_timeout: see :data:`DEFAULT_SHUTDOWN_TIMEOUT`.
    :param max_write_buffer: the bound, in bytes, on what waits to be written to the server
        (:data:`DEFAULT_MAX_WRITE_BUFFER`, 1 MiB): past it, the client stops reading the
        server's messages until it is down to half.
    :param write_timeout: when a chunk of what waits to be written (at most 64 KiB) is not
        taken by the server within this many seconds (:data:`DEFAULT_WRITE_TIMEOUT`, 30 s;
        ``None``: no limit), the connection is closed as broken: every call fails with
        ``mcp_sansio.session.ConnectionLost`` (``"the server stopped reading: N bytes
        unwritten for T s ..."``).
    :param session_options: the keywords of ``mcp_sansio.session.ClientSession``:
        ``versions=`` (the protocol versions to speak, newest first; default: all),
        ``handlers=`` (the server's requests this client answers, by method:
        ``"sampling/createMessage"``, ``"elicitation/create"``, ``"roots/list"``; each
        ``handler(context, params) -> result``, plain or ``async``; they also answer the
        ``input_required`` requests of 2026-07-28), ``timeout=`` (the default timeout of a
        request in seconds, ``mcp_sansio.session.DEFAULT_TIMEOUT``; ``None``: none),
        ``capabilities=``, ``client_info=``, ``probe_timeout=``, ``max_input_rounds=``,
        ``log_level=``, and the :class:`~mcp_sansio.Connection` keywords.
    """

    def __init__(
        self,
        stream: trio.abc.Stream,
        *,
        on_notification: Callable[[Notification], Any] | None = None,
        shutdown_timeout: float = DEFAULT_SHUTDOWN_TIMEOUT,
        **session_options: Any,
    ) -> None:
        self._max_write_buffer, self._write_timeout = write_options(session_options)
        self.session = ClientSession(**session_options)
        """The sans-IO session underneath."""
        self.process: trio.Process | None = None
        """The server's process, for :meth:`connect_stdio`."""
        self.shutdown_timeout = shutdown_timeout
        """See :data:`DEFAULT_SHUTDOWN_TIMEOUT`."""
        self._stream: trio.abc.Stream | None = stream
        self._on_notification = on_notification
        self._connect: Callable[[], Any] | None = None
        self._loop: _Loop | None = None
        self._nursery_cm: Any = None
        self._nursery: trio.Nursery | None = None
        self._closed = False
        self._stderr = bytearray()
        self._stderr_scope = trio.CancelScope(shield=True)
        self._stderr_done = trio.Event()
        # A stream with tasks of its own (Streamable HTTP: its exchanges) sets this: started
        # in the client's nursery before the loop, shielded like it, cancelled with it.
        self._stream_tasks: Callable[..., Awaitable[None]] | None = None
        self._stream_scope = trio.CancelScope(shield=True)

    # -------------------------------------------------------------- constructors

    @classmethod
    def _later(cls, connect: Callable[[Client], Any], options: dict[str, Any]) -> Client:
        client = cls(None, **options)  # type: ignore[arg-type]
        client._connect = lambda: connect(client)
        return client

    @classmethod
    def connect_stdio(
        cls,
        command: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        stderr: int | IO[Any] | None = None,
        **options: Any,
    ) -> Client:
        """A client for a server started as ``command``, speaking over its stdin and stdout.

        ``stderr``: ``None`` passes the server's stderr through; a file or a file descriptor
        receives it; ``subprocess.PIPE`` keeps its last 64 KiB in :attr:`stderr`.
        Leaving the client closes the server's stdin; the server gets ``shutdown_timeout``
        seconds to exit, then ``SIGTERM`` and as long again, then ``SIGKILL``. If it dies
        or closes its stdout, the calls in flight fail with
        ``mcp_sansio.session.ConnectionLost``. Other keywords: as for :class:`Client`.
        """

        async def connect(client: Client) -> trio.abc.Stream:
            process = await trio.lowlevel.open_process(
                list(command),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=stderr,
                env=env,
                cwd=cwd,
            )
            client.process = process
            assert process.stdin is not None
            assert process.stdout is not None
            return trio.StapledStream(process.stdin, process.stdout)

        return cls._later(connect, options)

    @classmethod
    def connect_tcp(cls, host: str, port: int, **options: Any) -> Client:
        """A client for the server listening on ``host``:``port``."""

        async def connect(client: Client) -> trio.abc.Stream:
            return await trio.open_tcp_stream(host, port)

        return cls._later(connect, options)

    @classmethod
    def connect_unix(cls, path: str | os.PathLike[str], **options: Any) -> Client:
        """A client for the server listening on the Unix socket at ``path``."""

        async def connect(client: Client) -> trio.abc.Stream:
            return await trio.open_unix_socket(path)

        return cls._later(connect, options)

    @classmethod
    def connect_server(
        cls,
        server: Server,
        *,
        server_options: Mapping[str, Any] | None = None,
        **options: Any,
    ) -> Client:
        """A client of ``server`` (a ``mcp_sansio.server.Server``), served by a task of the
        client's own over an in-memory stream (``trio.testing.memory_stream_pair``): no
        socket, no subprocess. The whole protocol runs as over a socket; for tests, and
        for embedding a server in the program that uses it. Leaving the client cancels
        the server's task.

        :param server_options: keywords of ``mcp_sansio.session.ServerSession`` for the
            server's side (``versions=``, ``timeout=``, …), as for :func:`serve_stream`.
        :param options: as for :class:`Client`.
        """

        async def connect(client: Client) -> trio.abc.Stream:
            import trio.testing

            here, there = trio.testing.memory_stream_pair()

            async def serve(*, task_status: trio.TaskStatus[None]) -> None:
                task_status.started()
                await serve_stream(server, there, **(server_options or {}))

            client._stream_tasks = serve
            return here

        return cls._later(connect, options)

    @classmethod
    def connect_http(
        cls, url: str, *, headers: Mapping[str, str] | None = None, **options: Any
    ) -> Client:
        """A client of a server's Streamable HTTP endpoint, e.g. ``"http://127.0.0.1:8000/mcp"``
        (``https://`` uses TLS, ``trio.open_ssl_over_tcp_stream``, with the system's default
        context, or ``ssl=``). Needs ``h11`` (the ``http`` extra).

        Each message is POSTed on a connection from a small keep-alive pool, in a task of
        its own (the client's calls run concurrently as ever); answers come as JSON or
        event streams, and HTTP failures reach the calls as
        ``mcp_sansio.session.McpError``. In the initialize era the session id and protocol
        version go with every request, and a ``DELETE`` ends the session on close.

        :param headers: extra headers sent with every request (``Authorization``…).
        :param options: the transport's keywords ``max_body_size=`` (bytes, default 64 MiB),
            ``max_reconnects=``, ``default_retry_ms=``, ``listen=`` (open the standalone GET
            stream; off by default), ``reopen=`` (start a new session when the server answers
            404 to the session id; on by default), ``expired_statuses=`` (the statuses that
            mean it expired: ``(404,)``; ``(404, 400)`` for servers that answer 400),
            ``max_idle=``, ``ssl=``, ``close_timeout=`` (see
            ``mcp_sansio.http._trio_client.HttpStream``); the others as for
            :class:`Client`.
        """
        try:
            from .http._trio_client import HTTP_OPTIONS, HttpStream, parse_url
        except ImportError as exc:  # pragma: no cover - h11 missing
            raise ImportError(
                "connect_http needs h11, the http extra: pip install 'mcp-sansio[http]'"
                " (from a checkout: pip install '.[http]')"
            ) from exc
        parse_url(url)  # a bad URL fails here, not when entering
        transport_options = {k: options.pop(k) for k in HTTP_OPTIONS if k in options}

        async def connect(client: Client) -> trio.abc.Stream:
            stream = HttpStream(url, headers=headers, **transport_options)
            client._stream_tasks = stream.run
            return stream

        return cls._later(connect, options)

    # -------------------------------------------------------------- lifetime

    async def __aenter__(self) -> Client:
        if self._loop is not None:
            raise RuntimeError("a Client can be entered only once")
        if self._connect is not None:
            self._stream = await self._connect()
        assert self._stream is not None
        self._loop = loop = _Loop(
            self.session,
            self._stream,
            self._on_notification,
            shield=True,
            max_write_buffer=self._max_write_buffer,
            write_timeout=self._write_timeout,
        )
        self._nursery_cm = trio.open_nursery()
        self._nursery = nursery = await self._nursery_cm.__aenter__()
        try:
            if self._stream_tasks is not None:
                await nursery.start(self._run_stream_tasks)
            await nursery.start(loop.run)
            process = self.process
            if process is not None and process.stderr is not None:
                nursery.start_soon(self._capture, process.stderr)
            else:
                self._stderr_done.set()
            loop.run_actions(self.session.open(trio.current_time()))
            await loop.opened.wait()
            if not self.session.is_open:
                raise loop.open_error or ConnectionLost("the server closed while opening")
        except BaseException as exc:
            await self.__aexit__(type(exc), exc, exc.__traceback__)
            raise
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        nursery_cm, self._nursery_cm = self._nursery_cm, None
        if nursery_cm is None:
            return
        self._closed = True
        loop = self._loop
        assert loop is not None
        assert self._nursery is not None
        assert self._stream is not None
        try:
            with trio.CancelScope(shield=True):
                await self._shutdown(loop)
        finally:
            loop.scope.cancel()
            self._stream_scope.cancel()
            self._stderr_scope.cancel()
            self._nursery.cancel_scope.cancel()
            try:
                # An error of our own tasks comes out here; the body's exception propagates.
                await nursery_cm.__aexit__(None, None, None)
            finally:
                with trio.CancelScope(shield=True):
                    await self._stream.aclose()
                    process = self.process
                    if process is not None:
                        if process.returncode is None:  # _shutdown was interrupted
                            process.kill()
                        await process.wait()
                        if process.stderr is not None:
                            await process.stderr.aclose()

    async def _shutdown(self, loop: _Loop) -> None:
        timeout = self.shutdown_timeout
        with trio.move_on_after(timeout):
            await loop.flush()
        process = self.process
        if process is None:
            return
        if isinstance(self._stream, trio.abc.HalfCloseableStream):
            with contextlib.suppress(*_GONE):
                await self._stream.send_eof()  # closes the server's stdin
        for stop in (None, process.terminate, process.kill):
            if stop is not None:
                stop()
            with trio.move_on_after(timeout if stop is not process.kill else math.inf):
                await process.wait()
            if process.returncode is not None:
                break
        # Take in the rest of the server's stdout (and captured stderr), up to their ends.
        with trio.move_on_after(timeout):
            await loop.reader_done.wait()
            await self._stderr_done.wait()

    async def _run_stream_tasks(self, *, task_status: trio.TaskStatus[None]) -> None:
        assert self._stream_tasks is not None
        with self._stream_scope:
            await self._stream_tasks(task_status=task_status)

    async def _capture(self, stderr: trio.abc.ReceiveStream) -> None:
        with self._stderr_scope:
            try:
                async for chunk in stderr:
                    self._stderr += chunk
                    del self._stderr[:-_STDERR_TAIL]
            except _GONE:
                pass
        self._stderr_done.set()

    # -------------------------------------------------------------- properties

    @property
    def stderr(self) -> bytes:
        """The end of the server's stderr (with ``stderr=subprocess.PIPE``)."""
        return bytes(self._stderr)

    @property
    def closed(self) -> bool:
        """Whether the connection is closed (by us or by the server), or broken."""
        loop = self._loop
        return (
            self._closed or self.session.closed or (loop is not None and loop.failure is not None)
        )

    # -------------------------------------------------------------- requests

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

        :param timeout: seconds before the request is cancelled and
            ``mcp_sansio.session.RequestTimeout`` raised (default: the client's
            ``timeout``; ``None``: wait forever).
        :param on_progress: called with the params of each ``notifications/progress`` for
            this request (``progress``, ``total``, ``message``); if it raises, the request
            is cancelled and the exception raised here.
        :param reset_on_progress: restart the timeout on each progress notification…
        :param max_timeout: …but never beyond this many seconds in all.

        Raises ``mcp_sansio.session.McpError`` for an error answer,
        ``mcp_sansio.session.RequestTimeout``,
        ``mcp_sansio.session.ConnectionLost``, and
        :class:`~mcp_sansio.LocalProtocolError` for a request the protocol forbids now. If
        the calling task is cancelled, the server is told (``notifications/cancelled``).
        """
        loop = self._loop
        if loop is None:
            raise RuntimeError("enter the Client (async with) before making requests")
        if self._closed:
            raise ConnectionLost("the client is closed")
        if loop.failure is not None:
            raise ConnectionLost(loop.failure)
        call, data = self.session.call(
            method,
            params,
            now=trio.current_time(),
            timeout=timeout,
            reset_on_progress=reset_on_progress,
            max_timeout=max_timeout,
            on_progress=None if on_progress is None else _OnProgress(on_progress),
        )
        loop.write(data)
        return await loop.wait(call)

    async def ping(self, **options: Any) -> dict[str, Any]:
        """``ping`` (initialize era). ``options`` (here and below): as for :meth:`request`."""
        result: dict[str, Any] = await self.request(*requests.ping(), **options)
        return result

    async def list_tools(self, cursor: str | None = None, **options: Any) -> dict[str, Any]:
        """``tools/list``: ``{"tools": [...], "nextCursor"?}``."""
        result: dict[str, Any] = await self.request(*requests.list_tools(cursor), **options)
        return result

    async def call_tool(
        self, name: str, arguments: Mapping[str, Any] | None = None, **options: Any
    ) -> dict[str, Any]:
        """``tools/call``: ``{"content": [...], "isError"?, "structuredContent"?}``."""
        req = requests.call_tool(name, arguments)
        result: dict[str, Any] = await self.request(*req, **options)
        return result

    async def list_resources(self, cursor: str | None = None, **options: Any) -> dict[str, Any]:
        """``resources/list``."""
        req = requests.list_resources(cursor)
        result: dict[str, Any] = await self.request(*req, **options)
        return result

    async def list_resource_templates(
        self, cursor: str | None = None, **options: Any
    ) -> dict[str, Any]:
        """``resources/templates/list``."""
        req = requests.list_resource_templates(cursor)
        result: dict[str, Any] = await self.request(*req, **options)
        return result

    async def read_resource(self, uri: str, **options: Any) -> dict[str, Any]:
        """``resources/read``: ``{"contents": [...]}``."""
        result: dict[str, Any] = await self.request(*requests.read_resource(uri), **options)
        return result

    async def subscribe(self, uri: str, **options: Any) -> dict[str, Any]:
        """``resources/subscribe`` (initialize era); updates reach ``on_notification``."""
        result: dict[str, Any] = await self.request(*requests.subscribe(uri), **options)
        return result

    async def unsubscribe(self, uri: str, **options: Any) -> dict[str, Any]:
        """``resources/unsubscribe`` (initialize era)."""
        result: dict[str, Any] = await self.request(*requests.unsubscribe(uri), **options)
        return result

    async def list_prompts(self, cursor: str | None = None, **options: Any) -> dict[str, Any]:
        """``prompts/list``."""
        result: dict[str, Any] = await self.request(*requests.list_prompts(cursor), **options)
        return result

    async def get_prompt(
        self, name: str, arguments: Mapping[str, str] | None = None, **options: Any
    ) -> dict[str, Any]:
        """``prompts/get``: ``{"messages": [...], "description"?}``."""
        req = requests.get_prompt(name, arguments)
        result: dict[str, Any] = await self.request(*req, **options)
        return result

    async def complete(
        self,
        ref: Mapping[str, Any],
        argument_name: str,
        value: str,
        context_arguments: Mapping[str, str] | None = None,
        **options: Any,
    ) -> dict[str, Any]:
        """``completion/complete``: ``{"completion": {"values": [...], ...}}``."""
        req = requests.complete(ref, argument_name, value, context_arguments)
        result: dict[str, Any] = await self.request(*req, **options)
        return result

    async def set_logging_level(self, level: str, **options: Any) -> dict[str, Any]:
        """Receive log messages at ``level`` and above: ``logging/setLevel`` in the
        initialize era; in 2026-07-28, the level goes with every later request."""
        req = self.session.logging_request(level)
        if req is None:
            return {}
        result: dict[str, Any] = await self.request(*req, **options)
        return result

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
        result: dict[str, Any] = await self.request(*req, **options)
        return result


# ---------------------------------------------------------------------- servers


async def serve_stream(server: Server, stream: trio.abc.Stream, **session_options: Any) -> None:
    """Serve one connection on ``stream`` for ``server`` (a
    ``mcp_sansio.server.Server``), then close it: until the client has closed its
    side and the handlers are done (their answers still go out). Each request's handler
    runs in its own task; the client's ``notifications/cancelled`` cancels it.
    ``session_options`` go to ``mcp_sansio.session.ServerSession`` (``versions=``,
    ``timeout=``, ``state_keys=``, …), but ``max_write_buffer=`` and ``write_timeout=``,
    as for :class:`Client` (a client that stops reading stops being read, then is
    disconnected)."""
    limit, timeout = write_options(session_options)
    loop = _Loop(
        ServerSession(server, **session_options),
        stream,
        max_write_buffer=limit,
        write_timeout=timeout,
    )
    try:
        await loop.run()
    finally:
        with trio.CancelScope(shield=True):
            await stream.aclose()


async def serve_stdio(server: Server, **session_options: Any) -> None:
    """Serve ``server`` on this process's stdin and stdout (Unix), until stdin ends and the
    handlers are done.

    Nothing else may write to stdout meanwhile (no ``print``); log to stderr. While
    serving, duplicates of the two file descriptors are in non-blocking mode (see
    ``trio.lowlevel.FdStream``), which other processes sharing them also see."""
    stream = trio.StapledStream(
        trio.lowlevel.FdStream(os.dup(1)), trio.lowlevel.FdStream(os.dup(0))
    )
    await serve_stream(server, stream, **session_options)


async def serve_tcp(
    server: Server,
    host: str = "127.0.0.1",
    port: int = 0,
    *,
    task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED,
    **session_options: Any,
) -> NoReturn:
    """Serve ``server`` on TCP ``host``:``port`` (``0``: a free port), a session per
    connection, until cancelled. ``port = await nursery.start(serve_tcp, server)`` returns
    the port once it is listening."""
    listeners = await trio.open_tcp_listeners(port, host=host)
    task_status.started(listeners[0].socket.getsockname()[1])
    await _serve(server, listeners, session_options)


async def serve_http(
    server: Server,
    host: str = "127.0.0.1",
    port: int = 0,
    *,
    task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED,
    **options: Any,
) -> NoReturn:
    """Serve ``server`` over Streamable HTTP on ``host``:``port`` (``0``: a free port), at
    ``http://host:port/mcp``, until cancelled; needs the ``http`` extra (h11).
    ``port = await nursery.start(serve_http, server)`` returns the port once it is
    listening. Cancelling it closes the connections and ends every session (their handlers
    are cancelled).

    :param options: ``path=`` (the endpoint, ``"/mcp"``), ``keepalive=`` (seconds between
        ``: keep-alive`` comments on open event streams; ``None``: none), the keywords of
        ``mcp_sansio.http.HttpServer`` (``allowed_hosts=``, ``allowed_origins=``,
        ``json_response=``, ``max_body_size=``, ``state_keys=``, …) and those of each
        ``mcp_sansio.session.ServerSession`` (``versions=``, …).
    """
    from .http._trio_server import serve_http as serve

    await serve(server, host, port, task_status=task_status, **options)


async def serve_unix(
    server: Server,
    path: str | os.PathLike[str],
    *,
    task_status: trio.TaskStatus[str] = trio.TASK_STATUS_IGNORED,
    **session_options: Any,
) -> NoReturn:
    """Serve ``server`` on a Unix socket at ``path`` (which must not exist), a session per
    connection, until cancelled; the socket file is removed then. ``await
    nursery.start(serve_unix, server, path)`` returns once it is listening."""
    sock = trio.socket.socket(trio.socket.AF_UNIX, trio.socket.SOCK_STREAM)
    try:
        await sock.bind(os.fspath(path))
        sock.listen()
    except BaseException:
        sock.close()
        raise
    try:
        task_status.started(os.fspath(path))
        await _serve(server, [trio.SocketListener(sock)], session_options)
    finally:
        sock.close()
        with contextlib.suppress(OSError):
            if stat.S_ISSOCK(os.stat(path).st_mode):
                os.unlink(path)


async def _serve(
    server: Server, listeners: list[trio.SocketListener], session_options: dict[str, Any]
) -> NoReturn:
    async def handle(stream: trio.SocketStream) -> None:
        await serve_stream(server, stream, **session_options)

    await trio.serve_listeners(handle, listeners)
