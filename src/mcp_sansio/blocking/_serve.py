"""Blocking servers: serve_stream, serve_stdio, serve_tcp, serve_unix, Listener."""

from __future__ import annotations

import contextlib
import os
import selectors
import socket
import sys
import threading
from collections.abc import Callable
from types import TracebackType
from typing import Any

from .._backpressure import write_options
from ..server import Server
from ..session import (
    ServerSession,
)
from ._endpoint import _Endpoint
from ._streams import NotificationCallback, PipeStream, SocketStream, Stream

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
