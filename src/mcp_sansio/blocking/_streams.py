"""Byte streams for the blocking runtime: pipes, sockets, processes."""

from __future__ import annotations

import contextlib
import os
import select
import selectors
import socket
import subprocess
import time
from collections.abc import Callable
from typing import Any, Protocol

from .. import _backpressure
from .._events import Notification
from ..session import (
    DefaultType,
)

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
