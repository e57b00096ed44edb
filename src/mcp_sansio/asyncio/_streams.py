"""Byte streams for the asyncio runtime: in-memory pipes, files, and the protocols that
feed the session loop."""

from __future__ import annotations

import asyncio
import collections
import logging
from collections.abc import Awaitable, Callable
from typing import IO, Protocol

from .. import _backpressure

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


def _wake(waiter: asyncio.Future[None] | None) -> None:
    if waiter is not None and not waiter.done():
        waiter.set_result(None)


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
