"""Newline-delimited framing for stdio and sockets.

Each MCP message is one line of UTF-8 JSON ended by ``\\n`` (``\\r\\n`` is tolerated).
:class:`LineFramer` is incremental: bytes may arrive split anywhere, several lines per
chunk. Blank lines are skipped. A line longer than ``max_size`` bytes is never buffered
whole: once the buffer holds more than ``max_size`` bytes without a newline, they are
dropped, and so is the rest of that line up to its newline, keeping only its first and last
:data:`EDGE` bytes and its length; when the line ends, :data:`OVERSIZED` is reported once in
its place (:attr:`LineFramer.dropped` then tells its size and edges), and framing goes on
normally.
"""

from __future__ import annotations

import enum
from typing import Final, NamedTuple

__all__ = [
    "DEFAULT_CLIENT_MAX_MESSAGE_SIZE",
    "DEFAULT_MAX_MESSAGE_SIZE",
    "EDGE",
    "OVERSIZED",
    "Dropped",
    "LineFramer",
    "Oversized",
]

#: The default maximum size of one message, in bytes (4 MiB): a 1 MiB base64 blob and its
#: envelope fit comfortably; a peer that sends an endless line costs at most this much.
DEFAULT_MAX_MESSAGE_SIZE: Final = 4 * 1024 * 1024
#: A client's default (64 MiB): answers are as big as what the client asked for (the
#: reference filesystem server sends a file's text twice, so a 30 MiB text file fits).
DEFAULT_CLIENT_MAX_MESSAGE_SIZE: Final = 64 * 1024 * 1024


class Oversized(enum.Enum):
    """The type of :data:`OVERSIZED`."""

    OVERSIZED = "OVERSIZED"


#: Returned by :meth:`LineFramer.next_line` in place of a line that was too long.
OVERSIZED: Final = Oversized.OVERSIZED

#: How many bytes of each end of an oversized line are kept (:attr:`LineFramer.dropped`):
#: enough for a JSON-RPC envelope's members before and after a large ``result`` or
#: ``params``, so that the message can be told apart and its id read.
EDGE: Final = 1024


class Dropped(NamedTuple):
    """What is known of the last oversized line: its length in bytes (without the line
    ending) and its first and last :data:`EDGE` bytes (its first ``max_size + 1`` where
    that is less)."""

    size: int
    head: bytes
    tail: bytes


class LineFramer:
    """Splits a byte stream into lines, within a size bound.

    Feed bytes with :meth:`feed`, then call :meth:`next_line` until it returns ``None``.
    Drained that way after each chunk, the framer holds at most ``max_size + 1`` bytes
    between calls (the ``+ 1`` is room for the ``\\r`` of a ``\\r\\n``) and at most that plus
    one chunk within a call. The rest of an oversized line is dropped by :meth:`feed` itself,
    so it costs no memory even when several chunks are fed before the next drain; only its
    length and its two ends (:data:`EDGE` bytes each) are kept, for :attr:`dropped`.
    """

    __slots__ = ("_data", "_discarding", "_dropped", "_max_size", "_partial", "_pos")

    def __init__(self, max_size: int = DEFAULT_MAX_MESSAGE_SIZE) -> None:
        if max_size < 1:
            raise ValueError("max_size must be at least 1 byte")
        self._max_size = max_size
        # The chunk being split, and how far into it lines have been returned. Lines that
        # lie wholly inside one chunk (the common case) are sliced out of it directly.
        self._data = b""
        self._pos = 0
        # The start of a line that continues in a later chunk.
        self._partial = bytearray()
        # True while we drop the rest of an oversized line; what is known of it.
        self._discarding = False
        self._dropped = Dropped(0, b"", b"")

    @property
    def max_size(self) -> int:
        """The largest line, in bytes (without its line ending), that is delivered."""
        return self._max_size

    @property
    def dropped(self) -> Dropped:
        """The size and the two ends of the oversized line last reported as
        :data:`OVERSIZED` (or of the one being dropped now)."""
        return self._dropped

    @property
    def buffered(self) -> int:
        """How many bytes are buffered and not yet returned as a line."""
        return len(self._partial) + len(self._data) - self._pos

    def feed(self, data: bytes | bytearray | memoryview) -> None:
        """Add bytes from the peer; they may end anywhere, even inside a UTF-8 character.
        A bytearray or memoryview is copied (the caller may reuse it)."""
        if type(data) is not bytes:
            data = bytes(data)
        rest = len(self._data) - self._pos
        if rest:  # fed again before the last chunk was drained
            kept = self._data if self._pos == 0 else self._data[self._pos :]
            self._data = kept + data  # (slicing [0:] would copy in a compiled build)
        elif self._discarding:
            # Still inside an oversized line: drop it up to (not including) its newline,
            # which next_line() needs to see to end the discard; keep its length and tail.
            nl = data.find(b"\n")
            dropped = data[:nl] if nl >= 0 else data
            self._data = data[nl:] if nl >= 0 else b""
            size, head, tail = self._dropped
            self._dropped = Dropped(
                size + len(dropped), head, (tail + dropped[-EDGE - 1 :])[-EDGE - 1 :]
            )
        else:
            self._data = data
        self._pos = 0

    def next_line(self) -> bytes | Oversized | None:
        """Return the next complete line (without its line ending), :data:`OVERSIZED`, or
        ``None`` when no complete line is buffered."""
        data = self._data
        pos = self._pos
        while True:
            nl = data.find(b"\n", pos)
            if nl < 0:
                self._data = b""
                self._pos = 0
                if pos < len(data) and not self._discarding:
                    partial = self._partial
                    partial += data[pos:]
                    if len(partial) > self._max_size + 1:  # +1: room for a trailing "\r"
                        self._dropped = Dropped(
                            len(partial), bytes(partial[:EDGE]), bytes(partial[-EDGE - 1 :])
                        )
                        partial.clear()
                        self._discarding = True
                return None
            if self._partial:
                self._partial += data[pos:nl]
                line = bytes(self._partial)
                self._partial.clear()
            else:
                line = data[pos:nl]
            pos = self._pos = nl + 1
            if self._discarding:  # the end of the oversized line: its rest was dropped
                self._discarding = False
                size, head, tail = self._dropped
                if tail[-1:] == b"\r":  # (one byte more than EDGE is kept for this)
                    size, tail = size - 1, tail[:-1]
                self._dropped = Dropped(size, head, tail[-EDGE:])
                return OVERSIZED
            if line[-1:] == b"\r":
                line = line[:-1]
            if len(line) > self._max_size:
                self._dropped = Dropped(len(line), line[:EDGE], line[-EDGE:])
                return OVERSIZED
            if not line or line.isspace():
                continue
            return line

    def pending_partial(self) -> bool:
        """Whether bytes of an unfinished line are buffered (used to report a truncated
        last message when the peer closes)."""
        if self._discarding:
            return False
        return bool(self._partial.strip() or self._data[self._pos :].strip())
