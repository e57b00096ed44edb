"""The blocking adapter: MCP clients and servers for plain, synchronous Python.

No event loop and no threads are needed for the protocol. A :class:`Client` call writes its
request and then *pumps* the connection (reads with a timeout up to the next deadline of
the session) until that call is over, doing everything that arrives on the way: the
server's requests (sampling, elicitation, roots, ping) are answered inline by your sync
handlers, 2026-07-28 ``input_required`` rounds run the same handlers and retry,
notifications go to ``on_notification``, timed-out requests are cancelled. A server runs
its handlers inline, one request at a time, on each connection.

A complete example, a server spawned over stdio and a client talking to it (POSIX)::

    import pathlib, sys, tempfile, textwrap

    from mcp_sansio.blocking import Client

    SERVER = textwrap.dedent('''
        from mcp_sansio.blocking import serve_stdio
        from mcp_sansio.server import Server

        server = Server("greeter", "1.0")

        @server.tool(input_schema={"type": "object"})
        def greet(ctx, arguments):
            "Ask the user's name, then greet them."
            ctx.progress(0.5, 1.0, "asking")
            answer = ctx.elicit("Your name?", {
                "type": "object", "properties": {"name": {"type": "string"}}})
            return f"Hello, {answer['content']['name']}!"

        serve_stdio(server)
    ''')

    def elicit(ctx, params):  # the user, played by a function
        return {"action": "accept", "content": {"name": "Ada"}}

    with tempfile.TemporaryDirectory() as tmp:
        script = pathlib.Path(tmp, "server.py")
        script.write_text(SERVER)
        with Client.connect_stdio([sys.executable, str(script)],
                                  handlers={"elicitation/create": elicit}) as client:
            print(client.server_info, client.protocol_version)
            print([t["name"] for t in client.list_tools()["tools"]])
            result = client.call_tool("greet", on_progress=print, timeout=10)
            print(result["content"][0]["text"])  # Hello, Ada!

The same server code answers a client of either era: in the initialize era
``ctx.elicit`` sends ``elicitation/create`` and waits for the answer; in 2026-07-28 it
answers ``input_required`` and finds the answer in the retry.

What to know:

- **One call at a time per client.** A client is not thread-safe; calls are sequential
  (the connection is pumped only while a call, :meth:`Client.poll` or a handler's
  :meth:`Context.sleep` waits). The server's traffic may interleave with a call freely.
- **Server handlers are sync and run inline.** A request that arrives while a handler
  waits (for the client's answer, or in :meth:`Context.sleep`) is queued and run after it.
  A client's cancellation cannot interrupt a running handler: :attr:`Context.cancelled`
  turns true (during :meth:`Context.elicit`, :meth:`Context.sleep`, …) and the session
  drops its answer.
- **Writes never block the reader** on pipes and sockets: what the peer does not take at
  once waits in a buffer and goes out while the connection is pumped. Past
  ``max_write_buffer`` bytes (1 MiB), nothing is read until it is down to half; when the
  peer takes none of it for ``write_timeout`` seconds (30 s), the connection is closed as
  broken (:class:`ConnectionLost`). A :class:`Stream` without ``write_some`` and
  ``wait_ready`` is written to blocking, as before. Deadlines are honoured while waiting.
- **POSIX only** for pipes: waiting with a timeout uses ``selectors`` on the pipe's file
  descriptor, which Windows does not support (sockets work everywhere).
"""

from __future__ import annotations

import contextlib
import os
import select
import selectors
import socket
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from types import TracebackType
from typing import IO, Any, ClassVar, Protocol

from . import _backpressure, requests
from ._backpressure import stalled, write_options
from ._errors import RemoteProtocolError
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
    ClientSession,
    ClientView,
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
    "PipeStream",
    "ProcessStream",
    "RequestTimeout",
    "SocketStream",
    "Stream",
    "serve_http",
    "serve_stdio",
    "serve_stream",
    "serve_tcp",
    "serve_unix",
]

#: How long closing a stdio client waits, in seconds, for the server to exit after its
#: stdin is closed, and again after ``SIGTERM``, before ``SIGKILL``.
DEFAULT_SHUTDOWN_TIMEOUT = 2.0

#: The bound, in bytes, on what waits to be written to one peer (1 MiB; the
#: ``max_write_buffer`` option): past it, the connection is only written to (nothing is
#: read, no handler runs) until it is down to half (see ``docs/errors.rst``, "Writing to
#: a peer that does not read").
DEFAULT_MAX_WRITE_BUFFER = _backpressure.DEFAULT_MAX_WRITE_BUFFER

#: How long, in seconds, what waits to be written may wait with the peer taking none of it
#: (the ``write_timeout`` option) before the connection is closed as broken.
DEFAULT_WRITE_TIMEOUT = _backpressure.DEFAULT_WRITE_TIMEOUT

_CHUNK = 65536
_clock = time.monotonic
# A write of at most this many bytes to a writable pipe does not block (POSIX).
_PIPE_BUF = getattr(select, "PIPE_BUF", 512)
_DONTWAIT = getattr(socket, "MSG_DONTWAIT", 0)

#: A request's timeout: seconds, ``None`` (no limit) or ``DEFAULT`` (the client's).
Timeout = float | None | DefaultType
#: ``on_notification`` callbacks take the peer's :class:`~mcp_sansio.Notification`.
NotificationCallback = Callable[[Notification], Any]


# ---------------------------------------------------------------------- streams


class Stream(Protocol):
    """A duplex byte stream, what the adapter needs of a pipe or a socket.

    A stream may also have ``write_some(data) -> int`` (write what it takes now, without
    blocking) and ``wait_ready(timeout, *, read, write) -> (readable, writable)``, as
    :class:`PipeStream` and :class:`SocketStream` do: the adapter then never blocks in a
    write, and bounds what waits to be written (``max_write_buffer``, ``write_timeout``).
    """

    def read_some(self, timeout: float | None) -> bytes | None:
        """Some bytes (any amount); ``b""`` once the peer closed; ``None`` when nothing
        arrived within ``timeout`` seconds (``None``: wait as long as it takes)."""
        ...

    def write(self, data: bytes) -> None:
        """Write all of ``data`` (blocking); raise :class:`OSError` when the peer is gone."""
        ...

    def close(self) -> None:
        """Release the stream (idempotent)."""
        ...


class _Waiting:
    """Waiting for a file descriptor to be readable, or the other to be writable (the same
    one for a socket), with a timeout."""

    def __init__(self, fileobj: int | socket.socket, write_obj: int | socket.socket) -> None:
        self._selector = selectors.DefaultSelector()
        self._selector.register(fileobj, selectors.EVENT_READ)
        self._read_obj = fileobj
        self._write_obj = write_obj
        # Made on first use: writable; readable or writable. None: the descriptor written
        # to cannot be waited for (a regular file), so writing to it never waits.
        self._selectors: dict[bool, selectors.BaseSelector | None] = {}

    def _readable(self, timeout: float | None) -> bool:
        if timeout is not None and timeout < 0:
            timeout = 0
        return bool(self._selector.select(timeout))

    def _writing(self, read: bool) -> selectors.BaseSelector | None:
        if read not in self._selectors:
            selector: selectors.BaseSelector | None = selectors.DefaultSelector()
            assert selector is not None
            try:
                if read and self._read_obj == self._write_obj:
                    selector.register(self._write_obj, selectors.EVENT_READ | selectors.EVENT_WRITE)
                else:
                    selector.register(self._write_obj, selectors.EVENT_WRITE)
                    if read:
                        selector.register(self._read_obj, selectors.EVENT_READ)
            except (OSError, ValueError):  # epoll refuses regular files: they never block
                selector.close()
                selector = None
            self._selectors[read] = selector
        return self._selectors[read]

    def wait_ready(
        self, timeout: float | None, *, read: bool = True, write: bool = True
    ) -> tuple[bool, bool]:
        """Wait at most ``timeout`` seconds (``None``: as long as it takes) until the stream
        can be read (if ``read``) or written to (if ``write``) without blocking; return
        ``(readable, writable)``."""
        if timeout is not None and timeout < 0:
            timeout = 0
        if not write:
            return self._readable(timeout), False
        selector = self._writing(read)
        if selector is None:
            return (self._readable(0) if read else False), True
        readable = writable = False
        for _, events in selector.select(timeout):
            readable = readable or bool(read and events & selectors.EVENT_READ)
            writable = writable or bool(events & selectors.EVENT_WRITE)
        return readable, writable

    def _close_selector(self) -> None:
        self._selector.close()
        for selector in self._selectors.values():
            if selector is not None:
                selector.close()


class PipeStream(_Waiting):
    """A :class:`Stream` over two file descriptors (pipes, a tty), read with ``os.read``
    after waiting in ``selectors`` (POSIX).

    :param read_fd: the descriptor to read from.
    :param write_fd: the descriptor to write to.
    :param close_fds: whether :meth:`close` closes both descriptors.
    """

    def __init__(self, read_fd: int, write_fd: int, *, close_fds: bool = True) -> None:
        super().__init__(read_fd, write_fd)
        self.read_fd = read_fd
        """The descriptor read from."""
        self.write_fd = write_fd
        """The descriptor written to."""
        self._close_fds = close_fds
        self._closed = False
        try:
            self._nonblocking = not os.get_blocking(write_fd)
        except OSError:
            self._nonblocking = False

    def read_some(self, timeout: float | None) -> bytes | None:
        """See :meth:`Stream.read_some`; a read error counts as the peer closing."""
        if not self._readable(timeout):
            return None
        try:
            return os.read(self.read_fd, _CHUNK)
        except OSError:
            return b""

    def write(self, data: bytes) -> None:
        """See :meth:`Stream.write`."""
        view = memoryview(data)
        while view:
            try:
                view = view[os.write(self.write_fd, view) :]
            except BlockingIOError:  # a descriptor in non-blocking mode
                self.wait_ready(None, read=False)

    def write_some(self, data: bytes | bytearray) -> int:
        """Write what the pipe takes now, without blocking; return how many bytes (0: none).
        Raise :class:`OSError` when the peer is gone. A descriptor in blocking mode (this
        process's stdout, shared with others) gets at most ``PIPE_BUF`` bytes at a time,
        once it is writable: that much never blocks."""
        fd = self.write_fd
        if self._nonblocking:
            try:
                return os.write(fd, data)
            except BlockingIOError:
                return 0
        if not self.wait_ready(0, read=False)[1]:
            return 0
        return os.write(fd, data if self._writing(False) is None else data[:_PIPE_BUF])

    def close(self) -> None:
        """Close the selector, and the descriptors if they are ours."""
        if self._closed:
            return
        self._closed = True
        self._close_selector()
        if self._close_fds:
            for fd in {self.read_fd, self.write_fd}:
                with contextlib.suppress(OSError):
                    os.close(fd)


class SocketStream(_Waiting):
    """A :class:`Stream` over a connected socket (TCP, Unix, ``socket.socketpair()``).

    :param sock: the socket, in blocking mode; the stream owns it.
    """

    def __init__(self, sock: socket.socket) -> None:
        sock.setblocking(True)
        super().__init__(sock, sock)
        self.socket = sock
        """The socket."""
        self._closed = False

    def read_some(self, timeout: float | None) -> bytes | None:
        """See :meth:`Stream.read_some`; a reset connection counts as the peer closing."""
        if not self._readable(timeout):
            return None
        try:
            return self.socket.recv(_CHUNK)
        except OSError:
            return b""

    def write(self, data: bytes) -> None:
        """See :meth:`Stream.write`."""
        self.socket.sendall(data)

    def write_some(self, data: bytes | bytearray) -> int:
        """Write what the socket takes now, without blocking; return how many bytes (0:
        none). Raise :class:`OSError` when the peer is gone."""
        if _DONTWAIT:
            try:
                return self.socket.send(data, _DONTWAIT)
            except BlockingIOError:
                return 0
        if not self.wait_ready(0, read=False)[1]:  # pragma: no cover - no MSG_DONTWAIT
            return 0
        return self.socket.send(data[:_PIPE_BUF])  # pragma: no cover

    def close(self) -> None:
        """Close the socket."""
        if self._closed:
            return
        self._closed = True
        self._close_selector()
        self.socket.close()


class ProcessStream(PipeStream):
    """A :class:`Stream` over a child process's stdout and stdin, whose :meth:`close` shuts
    the process down as the MCP specification says: close its stdin, wait, ``SIGTERM``,
    wait, ``SIGKILL``.

    :param process: the child, started with ``stdin=PIPE, stdout=PIPE``.
    :param shutdown_timeout: each of the two waits, in seconds.
    """

    def __init__(
        self,
        process: subprocess.Popen[bytes],
        *,
        shutdown_timeout: float = DEFAULT_SHUTDOWN_TIMEOUT,
    ) -> None:
        assert process.stdin is not None
        assert process.stdout is not None
        super().__init__(process.stdout.fileno(), process.stdin.fileno(), close_fds=False)
        os.set_blocking(self.write_fd, False)  # our end of its stdin: ours alone
        self._nonblocking = True
        self.process = process
        """The child process."""
        self.shutdown_timeout = shutdown_timeout
        """How long each step of the shutdown waits for the process to exit."""

    def close(self) -> None:
        """Shut the process down (see the class), then close the pipes."""
        if self._closed:
            return
        super().close()
        proc = self.process
        assert proc.stdin is not None
        assert proc.stdout is not None
        with contextlib.suppress(OSError):
            proc.stdin.close()
        try:
            proc.wait(self.shutdown_timeout)
        except subprocess.TimeoutExpired:
            proc.terminate()
            try:
                proc.wait(self.shutdown_timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        proc.stdout.close()


# ---------------------------------------------------------------------- the pump


class _Endpoint:
    """What a client and a server connection share: the loop around a session."""

    #: Whether a job that arrives while another runs is run at once (nested) or queued.
    _nested_jobs: ClassVar[bool] = True

    def __init__(
        self,
        session: SessionBase,
        stream: Stream,
        on_notification: NotificationCallback | None,
        *,
        max_write_buffer: int = DEFAULT_MAX_WRITE_BUFFER,
        write_timeout: float | None = DEFAULT_WRITE_TIMEOUT,
    ) -> None:
        self.session = session
        self.stream = stream
        self._on_notification = on_notification
        self._eof = False  # the end has been fed to the session: read no more
        self._write_failed = False
        # Backpressure, for a stream that can write without blocking (PipeStream,
        # SocketStream): what it has not taken yet, and since when it has taken none.
        self.max_write_buffer = max_write_buffer
        self.write_timeout = write_timeout
        self._write_some: Callable[[bytes | bytearray], int] | None = getattr(
            stream, "write_some", None
        )
        self._wait_ready: Callable[..., tuple[bool, bool]] | None = getattr(
            stream, "wait_ready", None
        )
        if self._wait_ready is None:
            self._write_some = None
        self._outbox = bytearray()
        self._stalled_at: float | None = None
        self._failure: ConnectionLost | None = None
        self._busy = False
        self._backlog: deque[Job] = deque()
        self._opened: Mapping[str, Any] = {}
        # Streamable HTTP: where the session's writes go instead of the stream (the bytes
        # and the id of the request whose handler wrote them).
        self.route: Callable[[bytes, RequestId | None], None] | None = None

    def _write(self, data: bytes, job: Job | None = None) -> None:
        if data and self.route is not None:  # Streamable HTTP: onto the right response
            self.route(data, None if job is None else job.id)
            return
        if data and not self._write_failed:
            if self._write_some is None:  # a stream that can only block
                try:
                    self.stream.write(data)
                except (OSError, ValueError):  # the peer is gone (ValueError: a closed file)
                    self._write_failed = True
                return
            outbox = self._outbox
            if not outbox:  # the usual case: the stream takes it all at once
                try:
                    n = self._write_some(data)
                except (OSError, ValueError):
                    self._write_failed = True
                    return
                if n == len(data):
                    return
                outbox += memoryview(data)[n:]
                self._flush()
            else:
                outbox += data
                self._flush()
            if len(outbox) > self.max_write_buffer:
                # Past the bound: nothing more is read (nor done) until it is down to half.
                self._drain(self.max_write_buffer // 2)

    def _flush(self) -> None:
        """Write what the stream takes now, without blocking."""
        outbox, write_some = self._outbox, self._write_some
        assert write_some is not None
        progressed = False
        try:
            while outbox:
                n = write_some(outbox)
                if not n:
                    break
                del outbox[:n]
                progressed = True
        except (OSError, ValueError):  # the peer is gone (ValueError: a closed file)
            self._write_failed = True
            outbox.clear()
        if not outbox:
            self._stalled_at = None
        elif progressed or self._stalled_at is None:
            self._stalled_at = _clock()

    def _write_deadline(self) -> float | None:
        """When the connection breaks if the peer takes none of what waits (or ``None``)."""
        if self._stalled_at is None or self.write_timeout is None:
            return None
        return self._stalled_at + self.write_timeout

    def _drain(self, low: int, until: float | None = None) -> None:
        """Write, without reading, until at most ``low`` bytes wait; past the write deadline
        the connection is broken, at ``until`` (when closing) what is left is dropped."""
        wait_ready = self._wait_ready
        assert wait_ready is not None
        while len(self._outbox) > low and not self._write_failed:
            deadline = self._write_deadline()
            end = deadline if until is None else until if deadline is None else min(deadline, until)
            now = _clock()
            if end is not None and now >= end:
                if end == deadline:
                    self._stall()
                else:
                    self._outbox.clear()
                return
            if wait_ready(None if end is None else end - now, read=False, write=True)[1]:
                self._flush()

    def _stall(self) -> None:
        """The peer stopped reading: the connection is closed as broken."""
        assert self.write_timeout is not None
        message = stalled(self.session, len(self._outbox), self.write_timeout)
        self._failure = ConnectionLost(message)
        self._eof = self._write_failed = True
        self._outbox.clear()
        self._stalled_at = None

    def _pump(self, until: float | None = None) -> bool:
        """Wait for the peer's bytes until the session's next deadline (or ``until``), then
        carry out what follows; meanwhile write what waits, as the stream takes it. Returns
        whether anything arrived (bytes or the end)."""
        if self._eof:
            return False
        session = self.session
        deadline = session.next_deadline()
        if until is not None:
            deadline = until if deadline is None else min(deadline, until)
        data: bytes | None = None
        if self._write_failed:
            data = b""
        elif self._outbox:
            assert self._wait_ready is not None
            stall = self._write_deadline()
            end = deadline if stall is None else stall if deadline is None else min(deadline, stall)
            now = _clock()
            readable, writable = self._wait_ready(None if end is None else end - now)
            if writable:
                self._flush()
            stall = self._write_deadline()
            if stall is not None and _clock() >= stall:
                self._stall()
                return True
            if readable:
                data = self.stream.read_some(0)
        else:
            now = _clock()
            data = self.stream.read_some(None if deadline is None else deadline - now)
        now = _clock()
        if data is not None:
            self._eof = not data
            try:
                actions = session.receive_data(data, now)
            except RemoteProtocolError as exc:
                # The peer broke the session beyond repair; nothing more can be read.
                self._eof = True
                self._failure = ConnectionLost(f"the peer broke the protocol: {exc}")
                return True
            self._carry_out(actions)
        self._carry_out(session.expire(now))
        return data is not None

    def _carry_out(self, actions: Iterable[Action]) -> None:
        for action in actions:
            kind = type(action)
            if kind is Send:
                self._write(action.data)  # type: ignore[attr-defined]
            elif kind is HandleJob:
                self._backlog.append(action.job)  # type: ignore[attr-defined]
            elif kind is PeerNotification:
                self._notified(action.notification)  # type: ignore[attr-defined]
            elif kind is Opened:
                self._opened = action.result  # type: ignore[attr-defined]
            # CallFinished, CallProgress: the waiters poll ``call.done`` (progress callbacks
            # already ran). CancelJob: the session has set ``job.cancelled``; a running sync
            # handler cannot be interrupted. Opened, Closed: seen through the session.
        if self._nested_jobs or not self._busy:
            while self._backlog:
                self._run_job(self._backlog.popleft())

    def _notified(self, note: Notification) -> None:
        if self._on_notification is not None:
            self._on_notification(note)

    def _run_job(self, job: Job) -> None:
        value: Any = None
        error: BaseException | None = None
        if not job.cancelled:
            busy, self._busy = self._busy, True
            try:
                if job.is_async:
                    error = TypeError(
                        f"{job.method}: the blocking adapter cannot await {job.handler}"
                    )
                else:
                    value = job.handler(Context(self, job), *job.args)
            except Exception as exc:
                error = exc
            finally:
                self._busy = busy
        now = _clock()
        self._write(self.session.finish(job, value, error, now=now))
        if isinstance(self.session, ClientSession):
            self.session.take_finished()  # their waiters poll ``call.done``

    def _wait(self, call: Call, job: Job | None = None) -> Any:
        """Pump until ``call`` is over; return its result or raise its error. If the wait is
        interrupted (KeyboardInterrupt, an exception from a callback), or the peer cancels
        ``job`` (the request whose handler made the call), the call is cancelled
        (``notifications/cancelled``) and the exception goes on."""
        try:
            while not call.done and not self._eof:
                if job is not None and job.cancelled:
                    self._write(self.session.cancel(call, "its request was cancelled"))
                    break
                self._pump()
        except BaseException:
            self._write(self.session.cancel(call, "the caller gave up"))
            raise
        if not call.done:  # the session broke (the peer's protocol error)
            raise self._failure or ConnectionLost()
        return call.outcome()


class Context(ContextBase):
    """What a handler gets first: the request (:attr:`params`, :attr:`request_id`,
    :attr:`cancelled`, …) and ways to talk back. :meth:`progress`, :meth:`log`,
    :meth:`resource_updated` and :meth:`list_changed` write at once; :meth:`elicit`,
    :meth:`sample` and :meth:`list_roots` block until the client answers, pumping the
    connection meanwhile (other requests wait their turn); if the client cancels this
    request meanwhile, the question is cancelled too and they raise
    :class:`McpError`. Only a server handler can ask the client.
    """

    def __init__(self, endpoint: _Endpoint, job: Job) -> None:
        super().__init__(endpoint.session, job, _clock)
        self._endpoint = endpoint

    def _write(self, data: bytes) -> None:
        self._endpoint._write(data, self.job)

    def _request(self, method: str, params: Mapping[str, Any]) -> dict[str, Any]:
        call, answer = self._ask(method, params)
        if call is None:
            return answer  # type: ignore[no-any-return]
        return self._endpoint._wait(call, self.job)  # type: ignore[no-any-return]

    def elicit(
        self,
        message: str,
        requested_schema: Mapping[str, Any] | None = None,
        *,
        url: str | None = None,
    ) -> dict[str, Any]:
        """Ask the user, through the client, for input matching ``requested_schema`` (or to
        visit ``url``); returns the ``ElicitResult`` (``{"action": ..., "content": ...}``)."""
        params = self.elicitation_params(message, requested_schema, url=url)
        return self._request("elicitation/create", params)

    def sample(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """Ask the client's model (``sampling/createMessage`` with ``params``); returns the
        ``CreateMessageResult``."""
        return self._request("sampling/createMessage", params)

    def list_roots(self) -> dict[str, Any]:
        """Ask the client for its roots; returns the ``ListRootsResult``."""
        return self._request("roots/list", {})

    def sleep(self, seconds: float) -> None:
        """Wait ``seconds``, handling the connection meanwhile (so a cancellation of this
        request is noticed: the wait ends early with :attr:`cancelled` true)."""
        end = _clock() + seconds
        endpoint = self._endpoint
        while not self.cancelled and _clock() < end:
            if endpoint._eof:
                time.sleep(max(0.0, end - _clock()))
                return
            endpoint._pump(until=end)


# ---------------------------------------------------------------------- client


class Client(_Endpoint, ClientView):
    """An MCP client over a :class:`Stream`; the session is open when the constructor
    returns (``server/discover`` or ``initialize``, with the fallback between eras). The
    client owns the stream: it closes it if opening fails, and in :meth:`close`.

    Use :meth:`connect_stdio`, :meth:`connect_tcp` or :meth:`connect_unix` for the usual
    transports; all are context managers. One call at a time (see the module docs).

    :param stream: the connection to the server.
    :param versions: the protocol versions to speak, newest first (default: all; both eras
        means a ``server/discover`` probe that falls back to ``initialize``).
    :param handlers: sync functions ``fn(context, params) -> result dict`` for the server's
        requests: ``"sampling/createMessage"``, ``"elicitation/create"``, ``"roots/list"``
        (in 2026-07-28 they answer ``input_required`` rounds too). They declare the
        client's capabilities, unless ``capabilities`` is given.
    :param capabilities: the client capabilities, as in the specification's JSON.
    :param client_info: ``clientInfo`` (``{"name", "version"}``).
    :param timeout: the default timeout of each request, in seconds (``None``: none);
        also the opening's.
    :param probe_timeout: how long the ``server/discover`` probe may take.
    :param max_input_rounds: the bound on ``input_required`` rounds of one call.
    :param on_notification: called with each notification from the server (logs, list
        changes, resource updates, …), while the client pumps the connection.
    :param max_write_buffer: the bound, in bytes, on what waits to be written to the server
        (:data:`DEFAULT_MAX_WRITE_BUFFER`, 1 MiB): past it, the client only writes (reads
        nothing) until it is down to half.
    :param write_timeout: when the server takes none of what waits to be written for this
        many seconds (:data:`DEFAULT_WRITE_TIMEOUT`, 30 s; ``None``: no limit), the
        connection is closed as broken: the call fails with :class:`ConnectionLost`
        (``"the server stopped reading: N bytes unwritten for T s ..."``).
    :param config: more :class:`~mcp_sansio.Connection` options (``max_message_size=``, …).
    """

    session: ClientSession
    """The sans-IO session underneath."""

    def __init__(
        self,
        stream: Stream,
        *,
        versions: Iterable[str] | None = None,
        handlers: Mapping[str, Callable[..., Any]] | None = None,
        capabilities: Mapping[str, Any] | None = None,
        client_info: Mapping[str, Any] | None = None,
        timeout: float | None = DEFAULT_TIMEOUT,
        probe_timeout: float = DEFAULT_PROBE_TIMEOUT,
        max_input_rounds: int = DEFAULT_MAX_INPUT_ROUNDS,
        on_notification: NotificationCallback | None = None,
        **config: Any,
    ) -> None:
        try:
            limit, write_timeout = write_options(config)
            session = ClientSession(
                versions=versions,
                handlers=handlers,
                capabilities=capabilities,
                client_info=client_info,
                timeout=timeout,
                probe_timeout=probe_timeout,
                max_input_rounds=max_input_rounds,
                **config,
            )
            super().__init__(
                session,
                stream,
                on_notification,
                max_write_buffer=limit,
                write_timeout=write_timeout,
            )
            self._closed = False
            self._acknowledged: dict[Any, dict[str, Any]] = {}
            self._open()
        except BaseException:
            stream.close()
            raise

    def _open(self) -> None:
        session = self.session
        self._carry_out(session.open(_clock()))
        opening = session.opening
        while not session.is_open:
            opening = session.opening or opening
            if session.opening is None or opening is None or opening.error is not None:
                break
            if self._eof:
                raise self._failure or ConnectionLost("the server closed while opening")
            self._pump()
        if not session.is_open:
            if opening is not None and opening.error is not None:
                raise opening.error
            raise self._failure or ConnectionLost("the session did not open")

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
        """Spawn the server ``command`` and talk to it over its stdin and stdout.

        :param env: the child's whole environment (default: ours).
        :param cwd: the child's working directory.
        :param stderr: where the child's stderr goes: ``None`` (default) passes it through
            to ours; a file (``tempfile.TemporaryFile()``, an open log) or a descriptor
            captures it; ``subprocess.DEVNULL`` drops it. ``subprocess.PIPE`` is refused:
            nothing would read it and the child would block once it fills.
        :param shutdown_timeout: each wait of the shutdown (see :class:`ProcessStream`).
        :param options: the keywords of :class:`Client`.
        """
        if stderr == subprocess.PIPE:
            raise ValueError("stderr=PIPE would block the server; pass a file instead")
        process = subprocess.Popen(
            list(command),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
            env=None if env is None else dict(env),
            cwd=cwd,
            bufsize=0,
        )
        return cls(ProcessStream(process, shutdown_timeout=shutdown_timeout), **options)

    @classmethod
    def connect_tcp(
        cls, host: str, port: int, *, connect_timeout: float | None = 10.0, **options: Any
    ) -> Client:
        """Connect to a server listening on TCP ``host``:``port``."""
        sock = socket.create_connection((host, port), timeout=connect_timeout)
        return cls(SocketStream(sock), **options)

    @classmethod
    def connect_unix(cls, path: str | os.PathLike[str], **options: Any) -> Client:
        """Connect to a server listening on the Unix socket ``path``."""
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.connect(os.fspath(path))
        except BaseException:
            sock.close()
            raise
        return cls(SocketStream(sock), **options)

    @classmethod
    def connect_http(
        cls, url: str, *, headers: Mapping[str, str] | None = None, **options: Any
    ) -> Client:
        """Connect to a server's Streamable HTTP endpoint, e.g.
        ``"http://127.0.0.1:8000/mcp"`` (``https://`` uses TLS with the system's default
        context, or ``ssl=``). Needs ``h11`` (the ``http`` extra).

        Each message is POSTed on a connection from a small keep-alive pool by a worker
        thread, at most ``max_workers`` at once (an answer that comes as an event stream
        holds its thread until it ends: see ``mcp_sansio.http._blocking_client``); the
        client itself still makes one call at a time, pumping what the responses carry.
        HTTP failures reach the calls as :class:`McpError`. In the initialize era the
        session id and protocol version go with every request, and a ``DELETE`` ends the
        session on :meth:`close`.

        :param headers: extra headers sent with every request (``Authorization``…).
        :param options: the transport's keywords ``max_body_size=`` (bytes, default 64 MiB),
            ``max_reconnects=``, ``default_retry_ms=``, ``listen=`` (open the standalone GET
            stream; off by default), ``reopen=`` (start a new session when the server answers
            404 to the session id; on by default), ``expired_statuses=`` (the statuses that
            mean it expired: ``(404,)``; ``(404, 400)`` for servers that answer 400),
            ``max_idle=``, ``ssl=``, ``close_timeout=``,
            ``max_workers=`` (default 8), ``connect_timeout=`` (seconds, default 10; see
            ``mcp_sansio.http._blocking_client.HttpStream``); the others as for
            :class:`Client`.
        """
        try:
            from .http._blocking_client import HTTP_OPTIONS, HttpStream
        except ImportError as exc:  # pragma: no cover - h11 missing
            raise ImportError(
                "connect_http needs h11, the http extra: pip install 'mcp-sansio[http]'"
                " (from a checkout: pip install '.[http]')"
            ) from exc
        transport_options = {k: options.pop(k) for k in HTTP_OPTIONS if k in options}
        return cls(HttpStream(url, headers=headers, **transport_options), **options)

    # ------------------------------------------------------------------ lifetime

    def close(self) -> None:
        """Close the connection (for a stdio server: its shutdown sequence), after writing
        what waits to be written (for at most the stream's ``shutdown_timeout``, 2 s by
        default). Idempotent."""
        if not self._closed:
            self._closed = True
            try:
                if self._outbox:
                    timeout = getattr(self.stream, "shutdown_timeout", DEFAULT_SHUTDOWN_TIMEOUT)
                    self._drain(0, until=_clock() + timeout)
            finally:
                self.stream.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    @property
    def closed(self) -> bool:
        """Whether the connection is closed (by us, or by the server)."""
        return self._closed or self._eof

    @property
    def process(self) -> subprocess.Popen[bytes] | None:
        """The server's process, for a client made by :meth:`connect_stdio`."""
        return self.stream.process if isinstance(self.stream, ProcessStream) else None

    # ------------------------------------------------------------------ what was negotiated

    # ------------------------------------------------------------------ calls

    def request(
        self,
        method: str,
        params: Mapping[str, Any] | None = None,
        *,
        timeout: Timeout = DEFAULT,
        reset_on_progress: bool = False,
        max_timeout: float | None = DEFAULT_MAX_TIMEOUT,
        on_progress: Callable[[Mapping[str, Any]], Any] | None = None,
    ) -> Any:
        """Send a request and return its result, handling the server's traffic until then.

        :param timeout: seconds before the request is cancelled and :class:`RequestTimeout`
            raised (default: the client's ``timeout``; ``None``: no limit).
        :param on_progress: called with the params of each progress notification.
        :param reset_on_progress: restart the timeout on each progress notification…
        :param max_timeout: …but never beyond this many seconds in all.
        :raises McpError: the server's error answer; :class:`RequestTimeout`;
            :class:`ConnectionLost` when the connection closed first. If the wait is
            interrupted (``KeyboardInterrupt``, an exception from a callback), the server
            is told (``notifications/cancelled``) and the exception goes on.
        """
        if self._closed:
            raise ConnectionLost("the client is closed")
        if self._failure is not None:
            raise self._failure
        call, data = self.session.call(
            method,
            params,
            now=_clock(),
            timeout=timeout,
            reset_on_progress=reset_on_progress,
            max_timeout=max_timeout,
            on_progress=on_progress,
        )
        self._write(data)
        return self._wait(call)

    def poll(self, timeout: float = 0.0) -> bool:
        """Handle what the server sent (notifications, requests), waiting up to ``timeout``
        seconds for something to arrive. Returns whether anything did; ``False`` as well
        once the connection is closed."""
        if self._closed:
            return False
        return self._pump(until=_clock() + timeout)

    def ping(self, **options: Any) -> dict[str, Any]:
        """``ping`` (initialize era). ``options`` (here and below): as for :meth:`request`."""
        return self.request(*requests.ping(), **options)  # type: ignore[no-any-return]

    def list_tools(self, cursor: str | None = None, **options: Any) -> dict[str, Any]:
        """``tools/list`` (one page; ``cursor`` for the next)."""
        return self.request(*requests.list_tools(cursor), **options)  # type: ignore[no-any-return]

    def call_tool(
        self, name: str, arguments: Mapping[str, Any] | None = None, **options: Any
    ) -> dict[str, Any]:
        """``tools/call``: the ``CallToolResult`` (a tool's own failure is a result with
        ``isError: true``, not an exception)."""
        req = requests.call_tool(name, arguments)
        return self.request(*req, **options)  # type: ignore[no-any-return]

    def list_resources(self, cursor: str | None = None, **options: Any) -> dict[str, Any]:
        """``resources/list``."""
        req = requests.list_resources(cursor)
        return self.request(*req, **options)  # type: ignore[no-any-return]

    def list_resource_templates(self, cursor: str | None = None, **options: Any) -> dict[str, Any]:
        """``resources/templates/list``."""
        req = requests.list_resource_templates(cursor)
        return self.request(*req, **options)  # type: ignore[no-any-return]

    def read_resource(self, uri: str, **options: Any) -> dict[str, Any]:
        """``resources/read``."""
        return self.request(*requests.read_resource(uri), **options)  # type: ignore[no-any-return]

    def subscribe(self, uri: str, **options: Any) -> dict[str, Any]:
        """``resources/subscribe`` (initialize era; in 2026-07-28 use :meth:`listen`)."""
        return self.request(*requests.subscribe(uri), **options)  # type: ignore[no-any-return]

    def unsubscribe(self, uri: str, **options: Any) -> dict[str, Any]:
        """``resources/unsubscribe`` (initialize era)."""
        return self.request(*requests.unsubscribe(uri), **options)  # type: ignore[no-any-return]

    def list_prompts(self, cursor: str | None = None, **options: Any) -> dict[str, Any]:
        """``prompts/list``."""
        req = requests.list_prompts(cursor)
        return self.request(*req, **options)  # type: ignore[no-any-return]

    def get_prompt(
        self, name: str, arguments: Mapping[str, str] | None = None, **options: Any
    ) -> dict[str, Any]:
        """``prompts/get``."""
        req = requests.get_prompt(name, arguments)
        return self.request(*req, **options)  # type: ignore[no-any-return]

    def complete(
        self,
        ref: Mapping[str, Any],
        argument_name: str,
        value: str,
        context_arguments: Mapping[str, str] | None = None,
        **options: Any,
    ) -> dict[str, Any]:
        """``completion/complete``; ``ref`` is ``{"type": "ref/prompt", "name": ...}`` or
        ``{"type": "ref/resource", "uri": ...}``."""
        req = requests.complete(ref, argument_name, value, context_arguments)
        return self.request(*req, **options)  # type: ignore[no-any-return]

    def set_logging_level(self, level: str, **options: Any) -> dict[str, Any]:
        """Receive log messages at ``level`` and above: ``logging/setLevel`` in the
        initialize era; in 2026-07-28, the level goes with every later request."""
        req = self.session.logging_request(level)
        return {} if req is None else self.request(*req, **options)

    def listen(
        self,
        *,
        tools: bool = False,
        prompts: bool = False,
        resources: bool = False,
        resource_uris: Sequence[str] = (),
        timeout: Timeout = DEFAULT,
    ) -> dict[str, Any]:
        """``subscriptions/listen`` (2026-07-28): open a notification stream and return the
        server's acknowledgement (``{"notifications": what was granted, ...}``) without
        waiting for the stream to end (unlike the async adapters). The stream's
        notifications go to ``on_notification`` whenever the client pumps (during calls,
        or :meth:`poll`); it lasts until the connection closes. ``timeout`` bounds the
        wait for the acknowledgement."""
        method, params = requests.listen(
            tools=tools, prompts=prompts, resources=resources, resource_uris=resource_uris
        )
        if self._closed:
            raise ConnectionLost("the client is closed")
        call, data = self.session.call(method, params, now=_clock(), timeout=None)
        self._write(data)
        limit = self.session.timeout if timeout is DEFAULT else timeout
        end = None if limit is None else _clock() + limit
        try:
            while call.id not in self._acknowledged:
                if call.done:
                    call.outcome()
                    raise ConnectionLost("the listen stream ended before its acknowledgement")
                if self._eof:
                    raise self._failure or ConnectionLost()
                if end is not None and _clock() >= end:
                    raise RequestTimeout(f"{method}: no acknowledgement after {limit} s")
                self._pump(until=end)
        except BaseException:
            self._write(self.session.cancel(call, "the caller gave up"))
            raise
        return self._acknowledged.pop(call.id)

    def _notified(self, note: Notification) -> None:
        if note.method == "notifications/subscriptions/acknowledged":
            params = note.params or {}
            listen_id = (params.get("_meta") or {}).get("io.modelcontextprotocol/subscriptionId")
            self._acknowledged[listen_id] = params
        super()._notified(note)


# ---------------------------------------------------------------------- server


class _ServerEndpoint(_Endpoint):
    _nested_jobs = False  # a request arriving while a handler waits is queued

    def run(self) -> None:
        # Until the end, or until the session closed (as broken, after max_unreadable
        # unreadable messages in a row): then the connection is let go, not read on.
        while not self._eof and not self.session.closed:
            self._pump()
        if self._outbox:  # the last answers, as long as the client takes them
            self._drain(0)


def serve_stream(
    server: Server,
    stream: Stream,
    *,
    on_notification: NotificationCallback | None = None,
    **session_options: Any,
) -> None:
    """Serve one connection until the client closes it; the stream is closed on return.

    :param server: the registry of tools, resources, prompts…
    :param stream: the connection.
    :param on_notification: called with each notification from the client (for example
        ``notifications/roots/list_changed``).
    :param session_options: the keywords of ``mcp_sansio.session.ServerSession``
        (``versions=``, ``timeout=`` for asking the client, ``state_keys=``, …), and
        ``max_write_buffer=`` and ``write_timeout=`` as for :class:`Client` (a client that
        stops reading stops being read, then is disconnected).
    """
    try:
        limit, timeout = write_options(session_options)
        _ServerEndpoint(
            ServerSession(server, **session_options),
            stream,
            on_notification,
            max_write_buffer=limit,
            write_timeout=timeout,
        ).run()
    finally:
        stream.close()


class _Quiet:
    """A stream whose close() is left to its owner."""

    def __init__(self, stream: Stream) -> None:
        self.read_some = stream.read_some
        self.write = stream.write
        for name in ("write_some", "wait_ready"):  # writing without blocking, if it can
            if hasattr(stream, name):
                setattr(self, name, getattr(stream, name))

    def close(self) -> None:
        pass


def serve_stdio(server: Server, **session_options: Any) -> None:
    """Serve this process's stdin and stdout until stdin closes (POSIX).

    Reads are unbuffered (``os.read`` on the descriptors), so nothing else may read stdin;
    anything else written to stdout corrupts the protocol: log to stderr. Takes the
    keywords of :func:`serve_stream`.
    """
    with contextlib.suppress(Exception):
        sys.stdout.flush()
    stream = PipeStream(sys.stdin.fileno(), sys.stdout.fileno(), close_fds=False)
    serve_stream(server, stream, **session_options)


class Listener:
    """A listening socket that serves each accepted connection with :func:`serve_stream`.

    :param server: the registry.
    :param sock: a bound, listening socket; the listener owns it.
    :param threads: one thread per connection (the default; handlers of different
        connections then run at once, so they must be thread-safe), or ``False``: one
        connection at a time, the next waits in the backlog.
    :param session_options: the keywords of :func:`serve_stream`.
    """

    def __init__(
        self, server: Server, sock: socket.socket, *, threads: bool = True, **session_options: Any
    ) -> None:
        self.server = server
        """The registry served."""
        self.socket = sock
        """The listening socket."""
        self.threads = threads
        """Whether each connection gets its own thread."""
        self._options = session_options
        self._wake_r, self._wake_w = socket.socketpair()
        self._stopping = False
        self._lock = threading.Lock()
        self._live: set[socket.socket] = set()
        self._workers: list[threading.Thread] = []
        self._unlink: str | None = None

    @classmethod
    def tcp(
        cls, server: Server, host: str = "127.0.0.1", port: int = 0, **options: Any
    ) -> Listener:
        """Listen on TCP ``host``:``port`` (port 0: any free port, see :attr:`port`)."""
        sock = socket.create_server((host, port))
        return cls(server, sock, **options)

    @classmethod
    def unix(cls, server: Server, path: str | os.PathLike[str], **options: Any) -> Listener:
        """Listen on the Unix socket ``path``, which must not exist (it is removed again
        on close)."""
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.bind(os.fspath(path))
            sock.listen()
        except BaseException:
            sock.close()
            raise
        listener = cls(server, sock, **options)
        listener._unlink = os.fspath(path)
        return listener

    @property
    def address(self) -> Any:
        """The bound address: ``(host, port)`` for TCP, the path for a Unix socket."""
        return self.socket.getsockname()

    @property
    def port(self) -> int:
        """The bound TCP port."""
        return int(self.address[1])

    def serve_forever(self) -> None:
        """Accept and serve connections until :meth:`stop`; then close everything."""
        with selectors.DefaultSelector() as selector:
            selector.register(self.socket, selectors.EVENT_READ)
            selector.register(self._wake_r, selectors.EVENT_READ)
            try:
                while not self._stopping:
                    for key, _ in selector.select():
                        if key.fileobj is self.socket and not self._stopping:
                            conn, _ = self.socket.accept()
                            self._start(conn)
            finally:
                self.close()

    def _start(self, conn: socket.socket) -> None:
        with self._lock:
            self._live.add(conn)
        if self.threads:
            worker = threading.Thread(target=self._serve, args=(conn,), daemon=True)
            self._workers = [w for w in self._workers if w.is_alive()]
            self._workers.append(worker)
            worker.start()
        else:
            self._serve(conn)

    def _serve(self, conn: socket.socket) -> None:
        stream = SocketStream(conn)
        try:
            self._handle(stream)
        finally:
            with self._lock:  # stop() never shuts down a closed socket
                self._live.discard(conn)
                stream.close()

    def _handle(self, stream: SocketStream) -> None:
        serve_stream(self.server, _Quiet(stream), **self._options)

    def stop(self) -> None:
        """Stop serving (from any thread, or a handler): no new connections; the open ones
        see their end. :meth:`serve_forever` returns once they are done."""
        self._stopping = True
        with contextlib.suppress(OSError):
            self._wake_w.send(b"x")
        with self._lock:
            for conn in self._live:
                with contextlib.suppress(OSError):
                    conn.shutdown(socket.SHUT_RDWR)

    def close(self, timeout: float = 5.0) -> None:
        """Stop, wait up to ``timeout`` seconds for the connections' threads, and close the
        listening socket. Idempotent."""
        self.stop()
        for worker in self._workers:
            if worker is not threading.current_thread():
                worker.join(timeout)
        self.socket.close()
        self._wake_r.close()
        self._wake_w.close()
        if self._unlink is not None:
            with contextlib.suppress(OSError):
                os.unlink(self._unlink)
            self._unlink = None

    def __enter__(self) -> Listener:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def serve_tcp(
    server: Server,
    host: str = "127.0.0.1",
    port: int = 0,
    *,
    ready: Callable[[Listener], Any] | None = None,
    threads: bool = True,
    **session_options: Any,
) -> None:
    """Serve on TCP until stopped. ``ready`` is called with the :class:`Listener` once it
    listens (its :attr:`~Listener.port`; its :meth:`~Listener.stop`). See :class:`Listener`
    for ``threads`` and :func:`serve_stream` for the other keywords."""
    with Listener.tcp(server, host, port, threads=threads, **session_options) as listener:
        if ready is not None:
            ready(listener)
        listener.serve_forever()


def serve_http(server: Server, host: str = "127.0.0.1", port: int = 0, **options: Any) -> None:
    """Serve ``server`` over Streamable HTTP (needs the ``http`` extra: h11) on TCP
    ``host``:``port``, at ``/mcp`` by default, until stopped; as :func:`serve_tcp`, ``ready=``
    is called with the listener (an ``HttpListener``: its ``url`` is the endpoint, its
    ``stop()`` ends the serving). A thread per connection and one per busy session: the
    handlers of different sessions (in 2026-07-28, of different requests) run at once, so
    they must be thread-safe; a session's own run one at a time. The options are those of
    ``mcp_sansio.http._blocking_server.serve_http`` (``path=``, ``keepalive=``,
    ``max_connections=``, ``allowed_origins=``, ``json_response=``, ``versions=``, …)."""
    from .http._blocking_server import serve_http as serve

    serve(server, host, port, **options)


def serve_unix(
    server: Server,
    path: str | os.PathLike[str],
    *,
    ready: Callable[[Listener], Any] | None = None,
    threads: bool = True,
    **session_options: Any,
) -> None:
    """Serve on the Unix socket ``path`` until stopped; as :func:`serve_tcp`."""
    with Listener.unix(server, path, threads=threads, **session_options) as listener:
        if ready is not None:
            ready(listener)
        listener.serve_forever()
