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

import functools
import queue
import threading
import time
from collections.abc import Callable
from typing import Any, Final, Protocol, runtime_checkable

import attrs

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

CHUNK: Final = 65536


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


class LineBuffer:
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


class StreamChannel(Channel):
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
        lines = LineBuffer(functools.partial(self._push, counted=True))
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
