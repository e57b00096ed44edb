"""Server-Sent Events: the WHATWG "event stream" format, as used by Streamable HTTP.

:func:`encode_event` and :func:`encode_comment` build event blocks to send.
:class:`SseDecoder` parses a received stream incrementally: bytes may be fed split
anywhere (inside a UTF-8 character, between the ``\\r`` and ``\\n`` of a line ending), and
each complete event comes back as an :class:`SseEvent`.

Parsing follows the WHATWG HTML standard (section "Server-sent events", "Parsing an event
stream"): lines end with CRLF, LF or CR; a leading UTF-8 BOM is skipped; lines starting
with ``:`` are comments; a field is ``name:value`` (one space after the colon is dropped)
or a bare ``name`` with an empty value; a blank line dispatches the event being built,
unless it has no ``data`` field. Text is UTF-8, and invalid sequences become U+FFFD as in
the standard's decoding: the decoder never raises on what the peer sends.

Memory is bounded: an event whose field lines add up to more than ``max_event_size`` bytes
(counted as they arrive, so a line that never ends is caught too) is dropped, the rest of
its block up to the next blank line is skipped without being buffered, and
:attr:`SseDecoder.oversized` counts it. Decoding then goes on with the next event.
"""

from __future__ import annotations

import contextlib
from typing import Final

import attrs

__all__ = [
    "DEFAULT_MAX_EVENT_SIZE",
    "SseDecoder",
    "SseEvent",
    "encode_comment",
    "encode_event",
]

#: The default maximum size of one event, in bytes (4 MiB), the same as the stdio framing's
#: default message size: an event is one JSON-RPC message plus a few short fields.
DEFAULT_MAX_EVENT_SIZE: Final = 4 * 1024 * 1024

_BOM: Final = b"\xef\xbb\xbf"
_COLON: Final = 0x3A  # b":"[0]


@attrs.frozen(kw_only=True)
class SseEvent:
    """One dispatched event: a block of fields ended by a blank line, with a ``data`` field."""

    data: str
    """The values of the event's ``data`` lines joined with ``"\\n"`` (``""`` for one
    empty ``data:`` line)."""
    event: str = "message"
    """The event type: the last ``event`` field's value, ``"message"`` when there is none
    (or it is empty)."""
    id: str | None = None
    """The value of this event's ``id`` field (the last one, if several), ``None`` when the
    event had none. An ``id`` containing NUL is ignored, as the standard requires."""
    retry: int | None = None
    """The value of a valid ``retry`` field of this event (milliseconds), else ``None``."""


def _field(name: bytes, value: str) -> bytes:
    if "\r" in value or "\n" in value or "\0" in value:
        raise ValueError(f"an SSE {name.decode()} must not contain CR, LF or NUL: {value!r}")
    if not value:
        return name + b":\n"
    return b"%s: %s\n" % (name, value.encode("utf-8"))


def encode_event(
    data: bytes | str,
    *,
    id: str | None = None,
    event: str | None = None,
    retry: int | None = None,
) -> bytes:
    """Return one event block, ending with its blank line.

    The fields come in the order ``id``, ``event``, ``retry``, ``data``. Each line of
    ``data`` (split at ``\\n``, ``\\r\\n`` or ``\\r``) becomes one ``data:`` line, so the
    decoder gives back ``data`` with its line endings turned into ``\\n``; an empty
    ``data`` gives one empty ``data:`` line, which is still dispatched (MCP's priming event
    is ``encode_event(b"", id=...)``). ``str`` values are encoded as UTF-8; ``bytes`` data
    is sent as it is.

    Raises :exc:`ValueError` when ``id`` or ``event`` contains CR, LF or NUL, when
    ``retry`` is negative (or not an integer), and, as :exc:`UnicodeEncodeError`, when a
    string holds a lone surrogate, which UTF-8 cannot encode.
    """
    if isinstance(data, str):
        data = data.encode("utf-8")
    if id is None and event is None and retry is None and b"\n" not in data:
        if not data:
            return b"data:\n\n"
        if b"\r" not in data:  # the common case: one line of JSON
            return b"data: %s\n\n" % data
    parts: list[bytes] = []
    if id is not None:
        parts.append(_field(b"id", id))
    if event is not None:
        parts.append(_field(b"event", event))
    if retry is not None:
        if retry < 0:
            raise ValueError(f"an SSE retry must not be negative: {retry!r}")
        parts.append(f"retry: {retry:d}\n".encode("ascii"))
    if b"\r" in data:
        data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    for line in data.split(b"\n"):
        parts.append(b"data: %s\n" % line if line else b"data:\n")
    parts.append(b"\n")
    return b"".join(parts)


def encode_comment(text: str = "") -> bytes:
    """Return a comment block, ``": text\\n\\n"`` (``":\\n\\n"`` for no text): a keep-alive
    that the decoder ignores.

    Raises :exc:`ValueError` when ``text`` contains CR or LF.
    """
    if "\r" in text or "\n" in text:
        raise ValueError(f"an SSE comment must not contain CR or LF: {text!r}")
    if not text:
        return b":\n\n"
    return b": %s\n\n" % text.encode("utf-8")


class SseDecoder:
    """Parses an event stream incrementally, within a size bound.

    Call :meth:`feed` with each chunk received; it returns the events completed by that
    chunk. Call :meth:`close` at the end of the stream. Neither ever raises on what the
    peer sends. Between calls the decoder holds at most about ``max_event_size`` bytes: the
    event being built and the unfinished line, never the rest of an oversized event or of
    a comment line.

    ``max_event_size`` bounds the sum of the byte lengths of one event's field lines
    (names, colons and values; not line endings, not comments); a larger event is dropped
    whole and counted in :attr:`oversized`.
    """

    __slots__ = (
        "_block_id",
        "_block_retry",
        "_bom",
        "_closed",
        "_cr",
        "_data",
        "_event",
        "_last_event_id",
        "_max_size",
        "_mid_line",
        "_oversized",
        "_partial",
        "_retry",
        "_size",
        "_skip",
        "_truncated",
    )

    def __init__(self, max_event_size: int = DEFAULT_MAX_EVENT_SIZE) -> None:
        if max_event_size < 1:
            raise ValueError("max_event_size must be at least 1 byte")
        self._max_size = max_event_size
        self._last_event_id = ""
        self._retry: int | None = None
        self._truncated = False
        self._oversized = 0
        self._closed = False
        # The bytes at the start of the stream while they may still be a split BOM;
        # None once past the start.
        self._bom: bytes | None = b""
        # The last chunk ended with "\r": an "\n" opening the next one ends no line.
        self._cr = False
        # The start of a line that continues in a later chunk. For a comment line only its
        # ":" is kept, so that the rest of the line is known to be ignored.
        self._partial = bytearray()
        # True while the rest of an oversized event block is skipped; _mid_line tells
        # whether the line being skipped has bytes already (so a "\n" ends it and only a
        # second one is the blank line ending the block).
        self._skip = False
        self._mid_line = False
        # The event block being built: the byte count of its field lines, its data (the
        # first data value as bytes; a bytearray once a second one joins it), its event
        # type, id and retry fields.
        self._size = 0
        self._data: bytes | bytearray | None = None
        self._event: bytes | None = None
        self._block_id: bytes | None = None
        self._block_retry: int | None = None

    @property
    def max_event_size(self) -> int:
        """The largest event, in bytes of its field lines, that is delivered."""
        return self._max_size

    @property
    def last_event_id(self) -> str:
        """The last event ID: the value of the last ``id`` field, as of the last blank line.

        This is the standard's "last event ID string", what an ``EventSource`` sends as
        ``Last-Event-ID`` when it reconnects: ``""`` at first, set by the ``id`` field of
        each event block that is ended by its blank line (whether or not the block had
        ``data`` and was dispatched) and kept until another one sets it. An ``id`` in a
        block that the stream cut short, or that was dropped as oversized, does not count:
        that event was never delivered. An ``id`` containing NUL is ignored.
        """
        return self._last_event_id

    @property
    def retry(self) -> int | None:
        """The last valid ``retry`` value seen in the stream, in milliseconds (``None`` if
        none was). As in the standard it takes effect as soon as its line is parsed; a
        value that is not only ASCII digits is ignored, and so is one with more digits
        than :func:`int` accepts (see :func:`sys.get_int_max_str_digits`)."""
        return self._retry

    @property
    def truncated(self) -> bool:
        """Whether the stream ended, at :meth:`close`, in the middle of an event block (a
        field line seen but not the blank line ending the block) or in the middle of a
        line. ``False`` until :meth:`close` is called."""
        return self._truncated

    @property
    def oversized(self) -> int:
        """How many events were dropped for being larger than :attr:`max_event_size`."""
        return self._oversized

    def feed(self, data: bytes) -> list[SseEvent]:
        """Parse the next bytes of the stream; return the events they complete, in order.

        The bytes may end anywhere. Returns ``[]`` once :meth:`close` has been called.
        """
        if self._closed or not data:
            return []
        if type(data) is not bytes:  # a bytearray or memoryview the caller may reuse
            data = bytes(data)
        if self._bom is not None:  # the start of the stream: skip a BOM
            if self._bom:
                data = self._bom + data
            if len(data) < 3 and _BOM.startswith(data):
                self._bom = data
                return []
            self._bom = None
            if data.startswith(_BOM):
                data = data[3:]
        if self._cr:  # the "\n" of a "\r\n" split between chunks
            self._cr = False
            if data[:1] == b"\n":
                data = data[1:]
                if not data:
                    return []
        if 13 in data:  # b"\r" (an int is found by memchr, a bytes needle more slowly)
            self._cr = data[-1] == 13
            data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        if self._skip:  # drop the rest of an oversized block, up to its blank line
            if not self._mid_line and data[:1] == b"\n":
                end = 1
            else:
                end = data.find(b"\n\n")
                if end < 0:
                    self._mid_line = data[-1:] != b"\n"
                    return []
                end += 2
            self._skip = False
            data = data[end:]

        lines = data.split(b"\n")
        tail = lines.pop()  # the unfinished last line ("" when data ends with a newline)
        out: list[SseEvent] = []
        partial = self._partial
        if lines:
            if partial:
                lines[0] = bytes(partial) + lines[0]
                partial.clear()
            max_size = self._max_size
            size = self._size
            value: bytes | bytearray | None = self._data
            event = self._event
            block_id = self._block_id
            block_retry = self._block_retry
            skip = False
            for line in lines:
                if not line:  # a blank line: dispatch
                    if skip:
                        skip = False
                    elif size:
                        event_id = None
                        if block_id is not None:
                            event_id = self._last_event_id = block_id.decode("utf-8", "replace")
                        if value is not None:
                            out.append(
                                SseEvent(
                                    data=value.decode("utf-8", "replace"),
                                    event=event.decode("utf-8", "replace") if event else "message",
                                    id=event_id,
                                    retry=block_retry,
                                )
                            )
                        size = 0
                        value = event = block_id = block_retry = None
                    continue
                if skip:
                    continue
                # "name" alone (no colon) is the field name with an empty value.
                name, _, field = line.partition(b":")
                if not name:  # the line starts with ":": a comment
                    continue
                size += len(line)
                if size > max_size:
                    self._oversized += 1
                    skip = True
                    size = 0
                    value = event = block_id = block_retry = None
                    continue
                if field[:1] == b" ":
                    field = field[1:]
                if name == b"data":
                    if value is None:
                        value = field
                    else:
                        if type(value) is bytes:
                            value = bytearray(value)
                        value += b"\n"
                        value += field
                elif name == b"event":
                    event = field
                elif name == b"id":
                    if b"\0" not in field:
                        block_id = field
                elif name == b"retry" and field.isdigit():  # bytes.isdigit(): ASCII only
                    with contextlib.suppress(ValueError):  # more digits than int() takes
                        block_retry = self._retry = int(field)
            self._size = size
            self._data = value
            self._event = event
            self._block_id = block_id
            self._block_retry = block_retry
            if skip:
                self._skip = True
                self._mid_line = bool(tail)
                return out
        if tail:
            if (partial[0] if partial else tail[0]) == _COLON:  # a comment: keep only ":"
                if not partial:
                    partial.append(_COLON)
            elif len(partial) + len(tail) + self._size > self._max_size:
                self._oversized += 1
                partial.clear()
                self._skip = True
                self._mid_line = True
                self._size = 0
                self._data = self._event = self._block_id = self._block_retry = None
            else:
                partial += tail
        return out

    def close(self) -> list[SseEvent]:
        """End the stream; return ``[]``.

        An event block not ended by its blank line is discarded, as the standard requires
        (:attr:`truncated` then tells that it happened). Later calls to :meth:`feed` and
        :meth:`close` return ``[]``.
        """
        if not self._closed:
            self._closed = True
            self._truncated = bool(self._skip or self._partial or self._size or self._bom)
            self._partial = bytearray()
            self._skip = False
            self._size = 0
            self._data = self._event = self._block_id = self._block_retry = None
        return []
