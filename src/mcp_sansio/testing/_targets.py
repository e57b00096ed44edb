"""Targets: the peers under test, spoken to in raw bytes.

A :class:`Target` opens a fresh peer for each conversation (:meth:`Target.open`): a new
process, a new HTTP session, a new in-process session, so that what one check does cannot
change what the next one sees. The peer comes back as a :class:`Channel`: bytes go out with
:meth:`Channel.send` exactly as given (nothing is checked or fixed on the way: the probe
sends invalid messages on purpose), and what the peer answers comes back, one message at a
time, from :meth:`Channel.receive`, which waits at most the time it is given, so a silent
peer is noticed, never waited on.

- :class:`StdioTarget` starts a command and speaks to it over its stdin and stdout, one
  message per line; stderr is kept (the first 64 KiB); closing is the specification's
  shutdown (close stdin, wait, ``SIGTERM``, wait, ``SIGKILL``, to the process group).
- :class:`HttpTarget` POSTs each message to a Streamable HTTP endpoint on a loopback
  address, with the headers of its era: the ``Mcp-Session-Id`` the server set and
  ``MCP-Protocol-Version`` after ``initialize``; the 2026-07-28 standard headers
  (``MCP-Protocol-Version``, ``Mcp-Method``, ``Mcp-Name``) for a message whose ``_meta``
  names that era. Answers arrive as JSON bodies or server-sent events; HTTP statuses come
  back as notes.
- :class:`ConnectionTarget` serves a :class:`~mcp_sansio.server.Server` (by default the
  example server, :func:`mcp_sansio.example.build_server`) in this process, with a
  :class:`~mcp_sansio.session.ServerSession` on the asyncio adapter over a socket pair.
- :class:`FunctionTarget` is the smallest peer: a function that takes each line sent and
  returns the lines to answer. Handy for planting a violation in a test, or for driving a
  bare :class:`~mcp_sansio.Connection` by hand.

Everything is bounded: the length of a line read (16 MiB), what one channel reads (10,000
messages, 32 MiB: then it stops reading, and says so with an :attr:`Incoming.overflow`
note), the stderr kept, the time each shutdown step waits. These are blocking tools built
on threads, for tests; they are not part of the sans-IO core.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import ipaddress
import os
import queue
import select
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, Protocol, runtime_checkable
from urllib.parse import urlsplit

import attrs
import orjson

if TYPE_CHECKING:
    from mcp_sansio.server import Server

__all__ = [
    "MAX_LINE",
    "MAX_MESSAGES",
    "MAX_RECEIVED",
    "MAX_STDERR",
    "Responder",
    "SHUTDOWN_TIMEOUT",
    "SERVER_PLACEHOLDER",
    "Channel",
    "ClientConnectionTarget",
    "ClientTarget",
    "ConnectionTarget",
    "FunctionTarget",
    "HttpTarget",
    "Incoming",
    "StdioTarget",
    "Target",
    "TargetError",
]

#: The longest line (message) read from a peer, in bytes; a longer one is dropped and noted.
MAX_LINE: Final = 16 * 1024 * 1024
#: How many messages one channel takes from its peer; then it stops reading (an
#: :attr:`Incoming.overflow` note says so).
MAX_MESSAGES: Final = 10_000
#: How many bytes one channel reads from its peer (stdio: everything read, line endings and
#: lines too long included; HTTP and in-process: the messages); then it stops reading (an
#: :attr:`Incoming.overflow` note says so).
MAX_RECEIVED: Final = 32 * 1024 * 1024
#: How much of a process's stderr is kept, in bytes (the rest is read and dropped).
MAX_STDERR: Final = 64 * 1024
#: Each wait of a process shutdown (after closing stdin, after ``SIGTERM``), in seconds.
SHUTDOWN_TIMEOUT: Final = 2.0

_CHUNK: Final = 65536
_CONNECT_TIMEOUT: Final = 5.0
#: How long a POST waits for the status line of the one before it, in seconds.
_HEAD_WAIT: Final = 10.0
#: The longest an HTTP response may stay open before it is cut (a listen stream is cut
#: earlier, by :meth:`Channel.abort`).
_MAX_STREAM_SECONDS: Final = 120.0
_VERSION_HEADER_VERSIONS: Final = frozenset({"2025-06-18", "2025-11-25"})
_META_VERSION: Final = "io.modelcontextprotocol/protocolVersion"


class TargetError(Exception):
    """The target cannot be used at all: the command cannot be started, the URL is not a
    loopback ``http://`` URL, nothing listens there."""


@attrs.frozen
class Incoming:
    """One thing that came back from the peer: a message, or a note from the transport."""

    data: bytes = b""
    """One message exactly as the peer sent it (without the line ending); empty for a
    note."""
    note: str = ""
    """What the transport saw besides messages: an HTTP status, a dropped line."""
    status: int | None = None
    """HTTP: the status of the response that carried it."""
    failed: bytes | None = None
    """HTTP: the body of a POST whose response ended without any JSON-RPC message (an
    error status with no JSON-RPC body, or a success with none): the probe counts it as
    the transport's answer to that message."""
    overflow: bool = False
    """A note that the channel stopped reading here: the peer sent more than
    ``MAX_MESSAGES`` messages or ``MAX_RECEIVED`` bytes. Nothing comes after it
    (not even the end of the peer's output)."""


class Channel:
    """One fresh peer, spoken to in raw bytes. Made by :meth:`Target.open`.

    Subclasses implement :meth:`send` and :meth:`close`; what the peer sends is put on an
    internal queue (by reader threads) and taken with :meth:`receive`.
    """

    transport: str = ""
    """``"stdio"``, ``"http"`` or ``"in-process"``."""

    opened: float
    """When the peer was started (``time.monotonic()``): a fresh peer's first answer is
    timed from here (a subclass that starts it before calling ``Channel.__init__`` sets
    it first)."""

    def __init__(self) -> None:
        if not hasattr(self, "opened"):
            self.opened = time.monotonic()
        self._queue: queue.Queue[Incoming | None] = queue.Queue()
        self._count = 0
        self._bytes = 0
        self._full = False
        self._eof = False
        self._lock = threading.Lock()

    def send(self, data: bytes) -> None:
        """Send one message (stdio: one line; the line ending is added when missing).
        Never blocks for long: a peer that does not read is noticed by its silence."""
        raise NotImplementedError

    def receive(self, timeout: float) -> Incoming | None:
        """The next thing the peer sent, waiting at most ``timeout`` seconds; ``None``
        when nothing came (see :attr:`closed` for whether anything ever will)."""
        try:
            item = self._queue.get(timeout=timeout) if timeout > 0 else self._queue.get_nowait()
        except queue.Empty:
            return None
        if item is None:
            self._eof = True
            return None
        return item

    @property
    def closed(self) -> bool:
        """Whether the peer has closed its side (its output ended) and everything it sent
        has been received."""
        return self._eof

    def settle(self, timeout: float) -> bool | None:
        """Wait until every exchange in flight is over (HTTP: each POST's response has
        ended), at most ``timeout`` seconds. ``True`` when they are, ``False`` when time
        ran out, ``None`` when the transport cannot tell (a stream of lines)."""
        return None

    def abort(self, message_id: Any) -> bool:
        """End the exchange that carries request ``message_id`` (HTTP: close its stream,
        which is how 2026-07-28 cancels over HTTP). ``False`` when the transport has no
        such thing (a stream of lines: cancel with ``notifications/cancelled``)."""
        return False

    @property
    def stderr(self) -> str:
        """What the peer wrote on stderr so far (a process; ``""`` otherwise)."""
        return ""

    def close(self) -> str:
        """Shut the peer down (idempotent); returns a note on how it ended (an exit
        status), or ``""``."""
        raise NotImplementedError

    def __enter__(self) -> Channel:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # ------------------------------------------------------------------ for subclasses

    def _push(self, item: Incoming, *, counted: bool = False) -> bool:
        """Queue what the peer sent; ``False`` once the channel's bounds are passed (then
        the caller stops reading). ``counted``: its bytes were counted already
        (:meth:`_read_bytes`)."""
        with self._lock:
            if self._full:
                return False
            self._count += 1
            if not counted:
                self._bytes += len(item.data)
            if self._count <= MAX_MESSAGES and self._bytes <= MAX_RECEIVED:
                self._queue.put(item)
                return True
        self._overflow(
            f"more than {MAX_MESSAGES} messages"
            if self._count > MAX_MESSAGES
            else f"more than {MAX_RECEIVED} bytes"
        )
        return False

    def _read_bytes(self, size: int) -> bool:
        """Count ``size`` bytes read from the peer; ``False`` once that passes
        ``MAX_RECEIVED`` (then the caller stops reading)."""
        with self._lock:
            if self._full:
                return False
            self._bytes += size
            if self._bytes <= MAX_RECEIVED:
                return True
        self._overflow(f"more than {MAX_RECEIVED} bytes")
        return False

    def _overflow(self, what: str) -> None:
        """Stop taking what the peer sends, and say so (once)."""
        with self._lock:
            if self._full:
                return
            self._full = True
        self._queue.put(
            Incoming(note=f"the peer sent {what}: the probe stopped reading", overflow=True)
        )

    def _push_eof(self) -> None:
        self._queue.put(None)


class _Lines:
    """Splits a byte stream into lines, within :data:`MAX_LINE`. ``push`` returns ``False``
    when the channel takes no more: :meth:`feed` then stops, and returns ``False``."""

    def __init__(self, push: Callable[[Incoming], bool]) -> None:
        self._push = push
        self._buffer = bytearray()
        self._skipping = False

    def feed(self, data: bytes) -> bool:
        start = 0
        while True:
            end = data.find(b"\n", start)
            if end < 0:
                break
            if not self._line(data[start:end]):
                return False
            start = end + 1
        rest = data[start:]
        if self._skipping:
            return True
        self._buffer += rest
        if len(self._buffer) > MAX_LINE:
            self._buffer.clear()
            self._skipping = True
            return self._push(Incoming(note=f"a line longer than {MAX_LINE} bytes: dropped"))
        return True

    def _line(self, tail: bytes) -> bool:
        if self._skipping:
            self._skipping = False
            return True
        if self._buffer:
            tail = bytes(self._buffer) + tail
            self._buffer.clear()
        line = tail.rstrip(b"\r")
        if line.strip():
            return self._push(Incoming(data=line))
        return True

    def end(self) -> None:
        if self._buffer and not self._skipping and bytes(self._buffer).strip():
            self._push(Incoming(data=bytes(self._buffer), note="(no line ending before EOF)"))
        self._buffer.clear()


class _StreamChannel(Channel):
    """A channel over a byte stream: a reader thread splits lines, a writer thread writes
    (so that :meth:`send` never blocks on a peer that does not read)."""

    def __init__(self, read: Callable[[], bytes], write: Callable[[bytes], None]) -> None:
        super().__init__()
        self._read = read
        self._write = write
        self._outbox: queue.Queue[bytes | None] = queue.Queue()
        self._broken = False
        self._reader = threading.Thread(target=self._read_loop, daemon=True)
        self._writer = threading.Thread(target=self._write_loop, daemon=True)

    def _start(self) -> None:
        self._reader.start()
        self._writer.start()

    def send(self, data: bytes) -> None:
        """See :meth:`Channel.send`."""
        if not data.endswith(b"\n"):
            data += b"\n"
        self._outbox.put(data)

    def _read_loop(self) -> None:
        lines = _Lines(functools.partial(self._push, counted=True))
        try:
            while True:
                try:
                    data = self._read()
                except OSError:
                    data = b""
                if not data:
                    break
                if not self._read_bytes(len(data)) or not lines.feed(data):
                    # Past the channel's bounds: stop reading (a peer that goes on writing
                    # blocks, until it is shut down). What it sent has no end to report.
                    return
            lines.end()
        except BaseException:
            self._push_eof()
            raise
        self._push_eof()

    def _write_loop(self) -> None:
        while True:
            data = self._outbox.get()
            if data is None:
                return
            if self._broken:
                continue
            try:
                self._write(data)
            except (OSError, ValueError):
                self._broken = True

    def _stop_writer(self) -> None:
        self._outbox.put(None)
        self._writer.join(SHUTDOWN_TIMEOUT)


@runtime_checkable
class Target(Protocol):
    """What the probe and :class:`~mcp_sansio.testing.PeerMachine` need of a peer under
    test: a fresh :class:`Channel` to it for each conversation. :class:`StdioTarget`,
    :class:`HttpTarget`, :class:`ConnectionTarget` and :class:`FunctionTarget` are targets;
    so is any object with these members."""

    transport: str
    """``"stdio"``, ``"http"`` or ``"in-process"``: the probe skips the checks that do
    not apply to a transport (2026-07-28 ``notifications/cancelled`` exists only on
    stdio)."""

    def describe(self) -> str:
        """A short description for reports."""
        ...

    def open(self) -> Channel:
        """A fresh peer. Raises :class:`TargetError` when there can be none."""
        ...


# ---------------------------------------------------------------------- stdio


class StdioTarget:
    """A command run as a subprocess for each peer, spoken to over stdin and stdout.

    :param command: the program and its arguments.
    :param env: the environment (default: this process's).
    :param cwd: the working directory (default: this process's).
    """

    transport = "stdio"

    def __init__(
        self,
        command: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
    ) -> None:
        if not command:
            raise TargetError("no command given")
        self.command: tuple[str, ...] = tuple(command)
        """The command line."""
        self.env = dict(env) if env is not None else None
        self.cwd = cwd

    def describe(self) -> str:
        """A short description for reports."""
        return "stdio: " + " ".join(self.command)

    def open(self) -> Channel:
        """Start the command: a fresh peer. Raises :class:`TargetError` when it cannot be
        started."""
        return _ProcessChannel(self.command, self.env, self.cwd)


class _ProcessChannel(_StreamChannel):
    """A process spoken to over its stdin and stdout (a server), or, with ``listener``, over
    the connection its relay makes to ``listener`` (a client, which starts its server: the
    relay)."""

    transport = "stdio"

    def __init__(
        self,
        command: Sequence[str],
        env: dict[str, str] | None,
        cwd: Any,
        listener: socket.socket | None = None,
        startup: float = 0.0,
    ) -> None:
        self.opened = time.monotonic()  # (a client's relay connects later: see _accept)
        try:
            process = subprocess.Popen(
                list(command),
                stdin=subprocess.PIPE if listener is None else subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE if listener is None else subprocess.STDOUT,
                env=env,
                cwd=cwd,
                bufsize=0,
                start_new_session=True,  # its own process group: the shutdown reaches children
            )
        except OSError as exc:
            raise TargetError(f"cannot start {' '.join(command)}: {exc}") from None
        assert process.stdout is not None
        self.process = process
        self._stderr = bytearray()
        self._ended = ""
        self._sock: socket.socket | None = None
        if listener is None:
            assert process.stdin is not None
            assert process.stderr is not None
            out, into = process.stdout.fileno(), process.stdin.fileno()
            kept = process.stderr.fileno()

            def read() -> bytes:
                return os.read(out, _CHUNK)

            def write(data: bytes) -> None:
                view = memoryview(data)
                while view:
                    view = view[os.write(into, view) :]

        else:
            # The client's stdout and stderr are kept as its "stderr"; its protocol bytes
            # come through the relay's connection.
            kept = process.stdout.fileno()
            self._stderr_thread = threading.Thread(target=self._drain, args=(kept,), daemon=True)
            self._stderr_thread.start()
            sock = self._accept(listener, startup)
            self._sock = sock
            read = functools.partial(sock.recv, _CHUNK)

            def write(data: bytes) -> None:
                sock.sendall(data)

        super().__init__(read, write)
        if listener is None:
            self._stderr_thread = threading.Thread(target=self._drain, args=(kept,), daemon=True)
            self._stderr_thread.start()
        self._start()

    def _accept(self, listener: socket.socket, startup: float) -> socket.socket:
        """The relay's connection, within ``startup`` seconds of the start."""
        deadline = time.monotonic() + startup
        while True:
            remaining = deadline - time.monotonic()
            ready, _, _ = select.select([listener], [], [], max(0.0, min(remaining, 0.1)))
            if ready:
                sock, _ = listener.accept()
                sock.setblocking(True)
                return sock
            if self.process.poll() is not None or remaining <= 0:
                why = (
                    f"exited ({self.process.returncode})"
                    if self.process.poll() is not None
                    else f"did not start its server within {startup:g} s"
                )
                self._signal(signal.SIGKILL)
                self.process.wait()
                self._stderr_thread.join(SHUTDOWN_TIMEOUT)
                assert self.process.stdout is not None
                self.process.stdout.close()
                tail = self.stderr.strip()[-2000:]
                raise TargetError(
                    f"the client {why} before connecting to the probe"
                    + (f"; it said:\n{tail}" if tail else "")
                )

    def _drain(self, fd: int) -> None:
        while True:
            try:
                data = os.read(fd, _CHUNK)
            except OSError:
                return
            if not data:
                return
            room = MAX_STDERR - len(self._stderr)
            if room > 0:
                self._stderr += data[:room]

    @property
    def stderr(self) -> str:
        """See :meth:`Channel.stderr`."""
        return self._stderr.decode("utf-8", "replace")

    def close(self) -> str:
        """Hang up (close the server's stdin; for a client, the relay's connection, so its
        server exits), wait, ``SIGTERM`` the process group, wait, ``SIGKILL`` it."""
        if self._ended:
            return self._ended
        proc = self.process
        self._stop_writer()
        with contextlib.suppress(OSError):
            if self._sock is not None:
                self._sock.shutdown(socket.SHUT_RDWR)
            elif proc.stdin is not None:
                proc.stdin.close()
        how = ""
        try:
            proc.wait(SHUTDOWN_TIMEOUT)
        except subprocess.TimeoutExpired:
            how = " after SIGTERM"
            self._signal(signal.SIGTERM)
            try:
                proc.wait(SHUTDOWN_TIMEOUT)
            except subprocess.TimeoutExpired:
                how = " after SIGKILL"
                self._signal(signal.SIGKILL)
                proc.wait()
        # Children that kept the pipes open would keep the readers waiting: end them too.
        self._signal(signal.SIGKILL)
        self._reader.join(SHUTDOWN_TIMEOUT)
        self._stderr_thread.join(SHUTDOWN_TIMEOUT)
        if self._sock is not None:
            self._sock.close()
        for pipe in (proc.stdout, proc.stderr):
            if pipe is not None:
                pipe.close()
        self._ended = f"exit status {proc.returncode}{how}"
        return self._ended

    def _signal(self, which: signal.Signals) -> None:
        with contextlib.suppress(OSError):
            os.killpg(self.process.pid, which)


#: What stands for the probe's server in a client's command line.
SERVER_PLACEHOLDER: Final = "{server}"


class ClientTarget(StdioTarget):
    """A client under test: a command run for each peer, which starts its server as a
    subprocess over stdio; the server it starts is the probe (through a relay,
    ``python -m mcp_sansio._relay``, that connects to a loopback port the probe listens on).

    :param command: the client's command line. An argument ``{server}`` is replaced by the
        server command (several arguments); without one, the server command is appended.
    :param env: the environment (default: this process's).
    :param cwd: the working directory (default: this process's).
    :param startup: seconds the client has to start its server.
    """

    def __init__(
        self,
        command: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        startup: float = 10.0,
    ) -> None:
        super().__init__(command, env=env, cwd=cwd)
        self.startup = startup
        """Seconds the client has to start its server."""

    def describe(self) -> str:
        """A short description for reports."""
        return "stdio client: " + " ".join(self.command)

    def argv(self, port: int) -> list[str]:
        """The command line for a probe listening on ``port``."""
        relay = [sys.executable, "-m", "mcp_sansio._relay", "127.0.0.1", str(port)]
        if SERVER_PLACEHOLDER not in self.command:
            return [*self.command, *relay]
        out: list[str] = []
        for arg in self.command:
            out.extend(relay if arg == SERVER_PLACEHOLDER else [arg])
        return out

    def open(self) -> Channel:
        """Start the client and take its server's connection. Raises :class:`TargetError`
        when it cannot be started or does not start its server in time."""
        with socket.create_server(("127.0.0.1", 0)) as listener:
            port = listener.getsockname()[1]
            return _ProcessChannel(self.argv(port), self.env, self.cwd, listener, self.startup)


# ---------------------------------------------------------------------- in-process


class ConnectionTarget:
    """A :class:`~mcp_sansio.server.Server` served in this process, a fresh
    :class:`~mcp_sansio.session.ServerSession` (asyncio adapter) for each peer, over a
    socket pair.

    :param server: the server, or a function that builds one for each peer; default
        :func:`mcp_sansio.example.build_server`.
    :param session_options: keywords of :class:`~mcp_sansio.session.ServerSession`
        (``versions=``, ``max_message_size=``, ...).
    """

    transport = "in-process"

    def __init__(
        self, server: Server | Callable[[], Server] | None = None, **session_options: Any
    ) -> None:
        self.server = server
        self.session_options = session_options

    def describe(self) -> str:
        """A short description for reports."""
        return "in-process: " + ("the example server" if self.server is None else "a server")

    def open(self) -> Channel:
        """Start a fresh session on a new socket pair."""
        from mcp_sansio.example import build_server
        from mcp_sansio.server import Server

        server = self.server
        if server is None:
            server = build_server()
        elif not isinstance(server, Server):
            server = server()
        return _SessionChannel(server, self.session_options)


class _InProcessChannel(_StreamChannel):
    """A channel over ``sock`` to a peer that runs in ``thread`` (started)."""

    transport = "in-process"

    def __init__(self, sock: socket.socket, thread: threading.Thread) -> None:
        self._socket = sock
        self._thread = thread
        self._closed = False

        def write(data: bytes) -> None:
            sock.sendall(data)

        super().__init__(functools.partial(sock.recv, _CHUNK), write)
        self._start()

    def close(self) -> str:
        """End our side; the peer sees EOF, finishes, and closes its side."""
        if self._closed:
            return ""
        self._closed = True
        self._stop_writer()
        with contextlib.suppress(OSError):
            self._socket.shutdown(socket.SHUT_WR)
        self._thread.join(SHUTDOWN_TIMEOUT)
        with contextlib.suppress(OSError):
            self._socket.shutdown(socket.SHUT_RDWR)
        self._reader.join(SHUTDOWN_TIMEOUT)
        self._socket.close()
        return ""


class _SessionChannel(_InProcessChannel):
    def __init__(self, server: Server, options: Mapping[str, Any]) -> None:
        mine, theirs = socket.socketpair()
        thread = threading.Thread(
            target=asyncio.run, args=(self._serve(server, theirs, options),), daemon=True
        )
        thread.start()
        super().__init__(mine, thread)

    @staticmethod
    async def _serve(server: Server, sock: socket.socket, options: Mapping[str, Any]) -> None:
        from mcp_sansio.asyncio import serve_stream

        try:
            reader, writer = await asyncio.open_connection(sock=sock)
        except OSError:  # pragma: no cover - a socket pair does not fail here
            sock.close()
            return
        with contextlib.suppress(Exception):
            await serve_stream(server, reader, writer, **options)


class ClientConnectionTarget:
    """A client under test in this process: our own asyncio
    :class:`~mcp_sansio.asyncio.Client`, a fresh one for each peer, connected over loopback
    TCP to the probe, which plays its server (what :class:`ConnectionTarget` is for a
    server). Once its session is open it runs ``script(client)``: by default one
    ``tools/list``, which the probe holds unanswered, so the client stays in the session
    until the probe hangs up.

    :param script: an async function of the open :class:`~mcp_sansio.asyncio.Client`.
    :param client_options: keywords of :class:`~mcp_sansio.asyncio.Client` (``versions=``,
        ``handlers=``, ``capabilities=``...); requests have no timeout unless given one.
    """

    transport = "in-process"

    def __init__(
        self, script: Callable[[Any], Awaitable[Any]] | None = None, **client_options: Any
    ) -> None:
        self.script = script
        self.client_options = {"timeout": None, **client_options}
        self.startup = 10.0
        """Seconds the client has to connect."""

    def describe(self) -> str:
        """A short description for reports."""
        return "in-process: the mcp-sansio asyncio client"

    def open(self) -> Channel:
        """Start a fresh client and take its connection. Raises :class:`TargetError` when
        it does not connect in time."""
        return _ClientChannel(self.script, self.client_options, self.startup)


async def _list_tools(client: Any) -> None:
    await client.list_tools()


class _ClientChannel(_InProcessChannel):
    def __init__(
        self,
        script: Callable[[Any], Awaitable[Any]] | None,
        options: Mapping[str, Any],
        startup: float,
    ) -> None:
        self.opened = time.monotonic()
        with socket.create_server(("127.0.0.1", 0)) as listener:
            port = listener.getsockname()[1]
            thread = threading.Thread(
                target=asyncio.run,
                args=(self._run(port, script or _list_tools, options),),
                daemon=True,
            )
            thread.start()
            listener.settimeout(startup)
            try:
                sock, _ = listener.accept()
            except OSError as exc:
                raise TargetError(f"the in-process client did not connect: {exc}") from None
        sock.settimeout(None)
        super().__init__(sock, thread)

    @staticmethod
    async def _run(
        port: int, script: Callable[[Any], Awaitable[Any]], options: Mapping[str, Any]
    ) -> None:
        from mcp_sansio.asyncio import Client

        # Whatever ends the client (the probe hanging up, a version it refuses) ends it.
        with contextlib.suppress(Exception):
            async with Client.connect_tcp("127.0.0.1", port, **options) as client:
                await script(client)


#: What a :class:`FunctionTarget`'s function returns for each line: the lines to answer
#: (each one message; a line ending is added when missing), or ``None`` for none.
Responder = Callable[[bytes], "Iterable[bytes] | None"]


class FunctionTarget:
    """The smallest peer: ``factory()`` makes a responder for each fresh peer, a function
    called with each line sent (without its line ending) that returns the lines to answer.

    A responder may also have a ``close()`` method, called when the peer is closed.
    """

    transport = "in-process"

    def __init__(self, factory: Callable[[], Responder], *, name: str = "a function") -> None:
        self.factory = factory
        self.name = name

    def describe(self) -> str:
        """A short description for reports."""
        return f"in-process: {self.name}"

    def open(self) -> Channel:
        """Make a fresh responder."""
        return _FunctionChannel(self.factory())


class _FunctionChannel(Channel):
    transport = "in-process"

    def __init__(self, responder: Responder) -> None:
        super().__init__()
        self._responder = responder
        self._closed = False

    def send(self, data: bytes) -> None:
        """Call the responder with each line of ``data``; queue what it answers."""
        if self._closed:
            return
        for line in data.split(b"\n"):
            if not line.strip():
                continue
            if self._full:
                return  # past the channel's bounds: the peer is not read any more
            answers = self._responder(line)
            for answer in answers or ():
                lines = _Lines(self._push)
                if not lines.feed(answer if answer.endswith(b"\n") else answer + b"\n"):
                    break

    def close(self) -> str:
        """Call the responder's ``close()``, if any."""
        if not self._closed:
            self._closed = True
            close = getattr(self._responder, "close", None)
            if callable(close):
                close()
            self._push_eof()
        return ""


# ---------------------------------------------------------------------- HTTP


def _loopback(host: str, port: int) -> list[tuple[Any, ...]]:
    """The addresses of ``host``, all loopback; raises :class:`TargetError` otherwise."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as exc:
        raise TargetError(f"cannot resolve {host!r}: {exc}") from None
    for info in infos:
        address = str(info[4][0])
        if not ipaddress.ip_address(address.split("%", 1)[0]).is_loopback:
            raise TargetError(
                f"{host!r} resolves to {address}, which is not a loopback address: "
                "the probe only talks to this machine"
            )
    return infos


class HttpTarget:
    """A Streamable HTTP endpoint on this machine: a fresh session (its own
    ``initialize``, or just its own requests in 2026-07-28) for each peer.

    :param url: ``http://HOST:PORT/PATH``, where HOST is a loopback address or a name
        that resolves only to loopback addresses. Raises :class:`TargetError` otherwise.
    """

    transport = "http"

    def __init__(self, url: str) -> None:
        parts = urlsplit(url)
        if parts.scheme != "http":
            raise TargetError(f"not an http:// URL: {url!r} (the probe does not do TLS)")
        if not parts.hostname:
            raise TargetError(f"no host in {url!r}")
        self.url = url
        """The endpoint."""
        self.host: str = parts.hostname
        try:
            self.port: int = parts.port or 80
        except ValueError:
            raise TargetError(f"bad port in {url!r}") from None
        self.path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        _loopback(self.host, self.port)

    def describe(self) -> str:
        """A short description for reports."""
        return f"http: {self.url}"

    def open(self) -> Channel:
        """A fresh client session (no request is made until the first :meth:`Channel.send`).
        Raises :class:`TargetError` when nothing listens there."""
        try:
            with socket.create_connection((self.host, self.port), timeout=_CONNECT_TIMEOUT):
                pass
        except OSError as exc:
            raise TargetError(f"cannot connect to {self.url}: {exc}") from None
        return _HttpChannel(self)


def _host_header(host: str, port: int) -> str:
    if ":" in host:
        host = f"[{host}]"
    return host if port == 80 else f"{host}:{port}"


class _HttpChannel(Channel):
    transport = "http"

    def __init__(self, target: HttpTarget) -> None:
        super().__init__()
        self._target = target
        self._session_id: str | None = None
        self._version: str | None = None  # initialize era, once negotiated
        self._modern: str | None = None  # the last 2026 version seen in a message's _meta
        self._exchanges: dict[int, tuple[threading.Thread, Any, list[socket.socket]]] = {}
        self._next = 0
        self._closed = False
        self._state_lock = threading.Lock()
        self._last_head: threading.Event | None = None

    # -------------------------------------------------------------- sending

    def _headers(self, body: bytes) -> tuple[list[tuple[str, str]], Any, bool]:
        """The era's headers for ``body``, the request id it carries, and whether it is
        an ``initialize`` request."""
        from mcp_sansio.http._headers import standard_headers

        try:
            message = orjson.loads(body)
        except orjson.JSONDecodeError:
            message = None
        headers: list[tuple[str, str]] = []
        rid = None
        initialize = False
        modern = False
        if isinstance(message, dict):
            rid = message.get("id")
            initialize = message.get("method") == "initialize"
            params = message.get("params")
            meta = params.get("_meta") if isinstance(params, dict) else None
            if isinstance(meta, dict) and isinstance(meta.get(_META_VERSION), str):
                modern = True
                self._modern = meta[_META_VERSION]
                headers.extend(standard_headers(message))
        if not modern and self._modern is not None and isinstance(message, dict):
            # A 2026-07-28 conversation's message without a version in _meta (a near-miss):
            # the headers are right, so that only the body is wrong.
            modern = True
            headers.append(("MCP-Protocol-Version", self._modern))
            headers.extend(h for h in standard_headers(message) if h[0] != "MCP-Protocol-Version")
        if not modern:
            if self._session_id is not None:
                headers.append(("Mcp-Session-Id", self._session_id))
            if self._version in _VERSION_HEADER_VERSIONS:
                headers.append(("MCP-Protocol-Version", self._version))
            elif self._version is None and self._modern is not None and message is None:
                headers.append(("MCP-Protocol-Version", self._modern))
        return headers, rid, initialize

    def send(self, data: bytes) -> None:
        """POST ``data`` (one message, its line ending dropped) in a thread of its own,
        once the server has begun to answer the previous POST (its status line): messages
        reach the server in the order they were sent, as on a stream of lines."""
        if self._closed:
            return
        if self._last_head is not None:
            self._last_head.wait(_HEAD_WAIT)
        body = data.rstrip(b"\r\n")
        headers, rid, initialize = self._headers(body)
        head = threading.Event()
        self._last_head = head
        with self._state_lock:
            key = self._next
            self._next += 1
            sockets: list[socket.socket] = []
            thread = threading.Thread(
                target=self._post, args=(body, headers, initialize, sockets, head), daemon=True
            )
            self._exchanges[key] = (thread, rid, sockets)
        thread.start()

    def _post(
        self,
        body: bytes,
        headers: list[tuple[str, str]],
        initialize: bool,
        sockets: list[socket.socket],
        head: threading.Event,
    ) -> None:
        try:
            self._exchange(body, headers, initialize, sockets, head)
        finally:
            head.set()

    def _exchange(
        self,
        body: bytes,
        headers: list[tuple[str, str]],
        initialize: bool,
        sockets: list[socket.socket],
        head: threading.Event,
    ) -> None:
        import h11

        from mcp_sansio._sse import SseDecoder

        target = self._target
        try:
            sock = socket.create_connection((target.host, target.port), timeout=_CONNECT_TIMEOUT)
        except OSError as exc:
            self._push(Incoming(note=f"cannot connect: {exc}", failed=body))
            return
        sockets.append(sock)
        messages = 0
        status = 0
        ctype = ""
        try:
            conn = h11.Connection(h11.CLIENT)
            request = h11.Request(
                method="POST",
                target=target.path,
                headers=[
                    ("Host", _host_header(target.host, target.port)),
                    ("User-Agent", "mcp-sansio-probe"),
                    ("Content-Type", "application/json"),
                    ("Accept", "application/json, text/event-stream"),
                    ("Content-Length", str(len(body))),
                    ("Connection", "close"),
                    *headers,
                ],
            )
            sock.sendall(conn.send(request))
            # (An answer before the whole body, a 413, is read like any other.)
            self._send_body(sock, conn, body)
            decoder: SseDecoder | None = None
            parts: list[bytes] = []
            size = 0
            deadline = time.monotonic() + _MAX_STREAM_SECONDS
            while True:
                event = conn.next_event()
                if event is h11.NEED_DATA:
                    if self._closed or time.monotonic() > deadline:
                        break
                    sock.settimeout(0.25)
                    try:
                        data = sock.recv(_CHUNK)
                    except TimeoutError:
                        continue
                    except OSError:
                        data = b""
                    conn.receive_data(data)
                    continue
                if isinstance(event, h11.Response):
                    status = event.status_code
                    fields = {k.decode().lower(): v.decode("latin-1") for k, v in event.headers}
                    ctype = fields.get("content-type", "")
                    session = fields.get("mcp-session-id")
                    if session and self._session_id is None:
                        self._session_id = session
                    head.set()
                    self._push(Incoming(note=f"HTTP {status} {ctype}".rstrip(), status=status))
                    if "text/event-stream" in ctype:
                        decoder = SseDecoder(MAX_LINE)
                elif isinstance(event, h11.Data):
                    if decoder is not None:
                        for sse in decoder.feed(bytes(event.data)):
                            messages += self._message(sse.data.encode(), status, initialize)
                    else:
                        size += len(event.data)
                        if size <= MAX_LINE:
                            parts.append(bytes(event.data))
                elif isinstance(event, (h11.EndOfMessage, h11.ConnectionClosed)):
                    break
                else:  # pragma: no cover - informational responses
                    continue
            if decoder is not None:
                for sse in decoder.close():
                    messages += self._message(sse.data.encode(), status, initialize)
            elif parts and (status < 400 or "json" in ctype):
                # (An error status with a body that is not JSON, "Request body too large" as
                # text, is the transport's answer, not a message of the server's.)
                messages += self._message(b"".join(parts), status, initialize)
        except (OSError, h11.ProtocolError) as exc:
            if not self._closed:
                self._push(Incoming(note=f"HTTP exchange failed: {exc}", status=status or None))
        finally:
            with contextlib.suppress(OSError):
                sock.close()
        if messages == 0 and not self._closed and status != 202 and status != 204:
            self._push(
                Incoming(
                    note=f"HTTP {status or 'exchange'} ended without a JSON-RPC message",
                    status=status or None,
                    failed=body,
                )
            )

    @staticmethod
    def _send_body(sock: socket.socket, conn: Any, body: bytes) -> bool:
        """Send the body in pieces, stopping when the server answers before the end (a
        413 for a body too large): ``False`` then."""
        import h11

        view = memoryview(body)
        while view:
            readable, _, _ = select.select([sock], [], [], 0)
            if readable:
                return False
            piece = bytes(view[:_CHUNK])
            try:
                sock.sendall(conn.send(h11.Data(data=piece)))
            except OSError:
                return False
            view = view[_CHUNK:]
        tail = conn.send(h11.EndOfMessage())
        if tail:
            sock.sendall(tail)
        return True

    def _message(self, data: bytes, status: int, initialize: bool) -> int:
        data = data.strip()
        if not data:
            return 0  # an SSE priming event
        if initialize and self._version is None:
            with contextlib.suppress(orjson.JSONDecodeError):
                value = orjson.loads(data)
                result = value.get("result") if isinstance(value, dict) else None
                if isinstance(result, dict) and isinstance(result.get("protocolVersion"), str):
                    self._version = result["protocolVersion"]
        self._push(Incoming(data=data, status=status))
        return 1

    # -------------------------------------------------------------- the rest

    def settle(self, timeout: float) -> bool:
        """Wait for every POST's response to end (aborted ones aside)."""
        deadline = time.monotonic() + timeout
        for thread, _, _ in list(self._exchanges.values()):
            thread.join(max(0.0, deadline - time.monotonic()))
            if thread.is_alive():
                return False
        return True

    def abort(self, message_id: Any) -> bool:
        """Close the connection of the POST that carried request ``message_id``."""
        found = False
        for thread, rid, sockets in list(self._exchanges.values()):
            if rid == message_id and type(rid) is type(message_id) and thread.is_alive():
                found = True
                for sock in sockets:
                    with contextlib.suppress(OSError):
                        sock.shutdown(socket.SHUT_RDWR)
        return found

    def close(self) -> str:
        """Cut every stream; end the session with ``DELETE`` when the server set one."""
        if self._closed:
            return ""
        self._closed = True
        for thread, _, sockets in list(self._exchanges.values()):
            for sock in sockets:
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
            thread.join(SHUTDOWN_TIMEOUT)
        if self._session_id is not None:
            self._delete()
        self._push_eof()
        return ""

    def _delete(self) -> None:
        import h11

        target = self._target
        headers = [
            ("Host", _host_header(target.host, target.port)),
            ("Mcp-Session-Id", self._session_id or ""),
            ("Connection", "close"),
        ]
        if self._version in _VERSION_HEADER_VERSIONS:
            headers.append(("MCP-Protocol-Version", self._version or ""))
        with contextlib.suppress(OSError, h11.ProtocolError):
            conn = h11.Connection(h11.CLIENT)
            with socket.create_connection(
                (target.host, target.port), timeout=SHUTDOWN_TIMEOUT
            ) as sock:
                request = h11.Request(method="DELETE", target=target.path, headers=headers)
                sock.sendall(conn.send(request) + conn.send(h11.EndOfMessage()))
                while True:
                    event = conn.next_event()
                    if event is h11.NEED_DATA:
                        data = sock.recv(_CHUNK)
                        conn.receive_data(data)
                        if not data:
                            return
                    elif isinstance(event, (h11.EndOfMessage, h11.ConnectionClosed)):
                        return
