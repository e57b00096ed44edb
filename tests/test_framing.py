"""Newline framing: any split gives the same lines, within a size bound."""

from __future__ import annotations

import itertools
from collections.abc import Iterable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcp_sansio import DEFAULT_MAX_MESSAGE_SIZE, ErrorCode, InvalidMessage
from mcp_sansio._framing import EDGE, OVERSIZED, Dropped, LineFramer, Oversized
from mcp_sansio._jsonrpc import decode

Item = bytes | Oversized


def drain(framer: LineFramer) -> list[Item]:
    out: list[Item] = []
    while (line := framer.next_line()) is not None:
        out.append(line)
    return out


def frame(chunks: Iterable[bytes], max_size: int = DEFAULT_MAX_MESSAGE_SIZE) -> list[Item]:
    """Feed each chunk and drain after each, as a connection does."""
    framer = LineFramer(max_size)
    out: list[Item] = []
    for chunk in chunks:
        framer.feed(chunk)
        out.extend(drain(framer))
    return out


def bytewise(data: bytes) -> list[bytes]:
    return [data[i : i + 1] for i in range(len(data))]


def split_at(data: bytes, cuts: Iterable[int]) -> list[bytes]:
    points = sorted({c % (len(data) + 1) for c in cuts})
    bounds = [0, *points, len(data)]
    return [data[a:b] for a, b in itertools.pairwise(bounds)]


STREAM = (
    b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}\n'
    b'{"jsonrpc":"2.0","method":"notifications/initialized"}\r\n'
    b"\n"
    b"   \r\n"
    b'{"jsonrpc":"2.0","id":"a","result":{"text":"caf\xc3\xa9 \xe2\x82\xac"}}\n'
)
STREAM_LINES = [
    b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}',
    b'{"jsonrpc":"2.0","method":"notifications/initialized"}',
    b'{"jsonrpc":"2.0","id":"a","result":{"text":"caf\xc3\xa9 \xe2\x82\xac"}}',
]


# -- splitting -------------------------------------------------------------------------


def test_whole() -> None:
    assert frame([STREAM]) == STREAM_LINES


def test_byte_by_byte() -> None:
    # Includes cuts inside "\r\n" and inside multi-byte UTF-8 characters.
    assert frame(bytewise(STREAM)) == STREAM_LINES


def test_several_messages_per_chunk_and_trailing_partial() -> None:
    framer = LineFramer()
    framer.feed(b'{"a":1}\n{"b":2}\n{"c"')
    assert drain(framer) == [b'{"a":1}', b'{"b":2}']
    assert framer.buffered == 4
    assert framer.pending_partial()
    framer.feed(b":3}\n")
    assert drain(framer) == [b'{"c":3}']
    assert framer.buffered == 0
    assert not framer.pending_partial()


def test_no_line_until_newline() -> None:
    framer = LineFramer()
    framer.feed(b'{"jsonrpc":"2.0"')
    assert framer.next_line() is None
    assert framer.next_line() is None  # asking again changes nothing
    framer.feed(b"}")
    assert framer.next_line() is None
    framer.feed(b"\n")
    assert framer.next_line() == b'{"jsonrpc":"2.0"}'
    assert framer.next_line() is None


def test_a_buffer_the_caller_reuses_is_copied() -> None:
    """A bytearray or memoryview may be overwritten by the caller's next read: what was
    fed must not change with it."""
    framer = LineFramer()
    buffer = bytearray(b'{"a":1}\n{"b"')
    framer.feed(buffer)
    buffer[:] = b"XXXXXXXXXXXXX"
    framer.feed(memoryview(bytearray(b":2}\n")))
    assert drain(framer) == [b'{"a":1}', b'{"b":2}']


@given(cuts=st.lists(st.integers(min_value=0), max_size=40))
def test_random_chunks_give_the_same_lines(cuts: list[int]) -> None:
    assert frame(split_at(STREAM, cuts)) == STREAM_LINES


@given(
    lines=st.lists(
        st.binary(max_size=30).map(lambda b: b.replace(b"\n", b"").replace(b"\r", b"")),
        max_size=10,
    ),
    crlf=st.lists(st.booleans(), min_size=10, max_size=10),
    cuts=st.lists(st.integers(min_value=0), max_size=30),
)
def test_random_lines_random_chunks(lines: list[bytes], crlf: list[bool], cuts: list[int]) -> None:
    data = b"".join(
        line + (b"\r\n" if cr else b"\n") for line, cr in zip(lines, crlf, strict=False)
    )
    expected = [line for line in lines if line.strip()]
    assert frame([data]) == expected
    assert frame(bytewise(data)) == expected
    assert frame(split_at(data, cuts)) == expected


# -- line endings and blank lines ------------------------------------------------------


def test_crlf() -> None:
    assert frame([b"a\r\nb\r\n"]) == [b"a", b"b"]
    assert frame([b"a\r", b"\nb\r", b"\n"]) == [b"a", b"b"]


def test_only_the_last_cr_is_part_of_the_line_ending() -> None:
    # "a\r\r\n": the line is "a\r" (a JSON parser reads "\r" as whitespace).
    assert frame([b"a\r\r\n"]) == [b"a\r"]
    # A "\r" that is not followed by "\n" is part of the line.
    assert frame([b"a\rb\n"]) == [b"a\rb"]


@pytest.mark.parametrize("blank", [b"\n", b"\r\n", b"  \n", b"\t \r\n", b"\n\n\n"])
def test_blank_lines_are_skipped(blank: bytes) -> None:
    assert frame([blank + b"x\n" + blank + b"y\n" + blank]) == [b"x", b"y"]


def test_only_blank_lines() -> None:
    framer = LineFramer()
    framer.feed(b"\n\r\n   \n")
    assert drain(framer) == []
    assert framer.buffered == 0


# -- size bound ------------------------------------------------------------------------


def test_default_max_size() -> None:
    assert LineFramer().max_size == DEFAULT_MAX_MESSAGE_SIZE == 4 * 1024 * 1024


@pytest.mark.parametrize("bad", [0, -1])
def test_max_size_must_be_positive(bad: int) -> None:
    with pytest.raises(ValueError, match="max_size"):
        LineFramer(bad)


@pytest.mark.parametrize("ending", [b"\n", b"\r\n"])
def test_exactly_max_size_is_accepted(ending: bytes) -> None:
    line = b"x" * 64
    assert frame([line + ending], max_size=64) == [line]
    assert frame(bytewise(line + ending), max_size=64) == [line]


@pytest.mark.parametrize("ending", [b"\n", b"\r\n"])
def test_one_byte_over_is_rejected(ending: bytes) -> None:
    line = b"x" * 65
    assert frame([line + ending + b"ok\n"], max_size=64) == [OVERSIZED, b"ok"]
    assert frame(bytewise(line + ending + b"ok\n"), max_size=64) == [OVERSIZED, b"ok"]


def test_oversized_line_in_one_chunk_with_neighbours() -> None:
    data = b"before\n" + b"y" * 1000 + b"\nafter\n"
    assert frame([data], max_size=100) == [b"before", OVERSIZED, b"after"]


@pytest.mark.parametrize("chunk_size", [1, 7, 64, 100, 101, 1000])
def test_oversized_line_across_many_chunks(chunk_size: int) -> None:
    max_size = 100
    data = b'{"ok":1}\n' + b"z" * 10_000 + b'\r\n{"ok":2}\n'
    framer = LineFramer(max_size)
    out: list[Item] = []
    for start in range(0, len(data), chunk_size):
        chunk = data[start : start + chunk_size]
        framer.feed(chunk)
        # Never the whole line: at most one line's worth plus the chunk just fed.
        assert framer.buffered <= max_size + 1 + len(chunk)
        out.extend(drain(framer))
        assert framer.buffered <= max_size + 1
    assert out == [b'{"ok":1}', OVERSIZED, b'{"ok":2}']


def test_oversized_line_fed_without_draining_is_dropped_by_feed() -> None:
    framer = LineFramer(10)
    framer.feed(b"a" * 50)
    assert framer.next_line() is None  # reported when it ends
    assert framer.buffered == 0
    for _ in range(100):  # the rest of the endless line: nothing is kept
        framer.feed(b"b" * 50)
    assert framer.buffered == 0
    assert not framer.pending_partial()
    framer.feed(b"b\nnext\n")
    assert drain(framer) == [OVERSIZED, b"next"]
    assert framer.dropped == Dropped(
        50 + 100 * 50 + 1, b"a" * 50, (b"a" * 50 + b"b" * 5001)[-EDGE:]
    )


def test_endless_line_reports_oversized_once_at_its_end() -> None:
    framer = LineFramer(16)
    seen: list[Item] = []
    for _ in range(1000):
        framer.feed(b"q" * 7)
        seen.extend(drain(framer))
        assert framer.buffered <= 16 + 1 + 7
    assert seen == []
    framer.feed(b"\n\nfine\n")
    assert drain(framer) == [OVERSIZED, b"fine"]
    assert framer.dropped.size == 7000


@pytest.mark.parametrize("chunk_size", [1, 3, 100, 5000, 100_000])
@pytest.mark.parametrize("ending", [b"\n", b"\r\n"])
def test_what_is_kept_of_an_oversized_line(chunk_size: int, ending: bytes) -> None:
    """Its exact length and its first and last EDGE bytes, however it was cut."""
    line = b'{"jsonrpc":"2.0","id":7,"result":{"text":"' + bytes(range(65, 91)) * 3000 + b'"}}'
    data = b"a\n" + line + ending + b"b\n"
    framer = LineFramer(3000)
    out: list[Item] = []
    for start in range(0, len(data), chunk_size):
        framer.feed(data[start : start + chunk_size])
        out.extend(drain(framer))
    assert out == [b"a", OVERSIZED, b"b"]
    assert framer.dropped == Dropped(len(line), line[:EDGE], line[-EDGE:])


def test_a_short_oversized_line_is_kept_whole_at_both_ends() -> None:
    framer = LineFramer(10)
    framer.feed(b"0123456789AB\n")
    assert drain(framer) == [OVERSIZED]
    assert framer.dropped == Dropped(12, b"0123456789AB", b"0123456789AB")


def test_two_oversized_lines_in_a_row() -> None:
    data = b"a" * 50 + b"\n" + b"b" * 50 + b"\nc\n"
    assert frame([data], max_size=10) == [OVERSIZED, OVERSIZED, b"c"]
    assert frame(bytewise(data), max_size=10) == [OVERSIZED, OVERSIZED, b"c"]


@given(
    sizes=st.lists(st.integers(min_value=0, max_value=40), min_size=1, max_size=8),
    cuts=st.lists(st.integers(min_value=0), max_size=30),
)
def test_size_bound_under_random_chunks(sizes: list[int], cuts: list[int]) -> None:
    max_size = 16
    lines = [bytes([0x61 + i % 26]) * n for i, n in enumerate(sizes)]
    data = b"".join(line + b"\n" for line in lines)
    expected: list[Item] = [OVERSIZED if len(line) > max_size else line for line in lines if line]
    framer = LineFramer(max_size)
    out: list[Item] = []
    for chunk in split_at(data, cuts):
        framer.feed(chunk)
        assert framer.buffered <= max_size + 1 + len(chunk)
        out.extend(drain(framer))
    assert out == expected
    assert framer.buffered == 0


# -- bytes, not text -------------------------------------------------------------------


def test_invalid_utf8_passes_through_framing() -> None:
    bad = b'{"jsonrpc":"2.0","method":"x\xff\xfe"}'
    assert frame([bad + b"\n"]) == [bad]
    # ...and decode() reports it as a parse error, replied to with a null id.
    result = decode(bad)
    assert isinstance(result, InvalidMessage)
    assert result.code == ErrorCode.PARSE_ERROR
    assert result.reply is not None
    assert result.reply.id is None


def test_utf8_split_inside_a_character() -> None:
    euro = "€".encode()  # three bytes
    data = b'"' + euro + b'"\n'
    assert frame([data[:2], data[2:3], data[3:]]) == [b'"' + euro + b'"']


def test_pending_partial_ignores_whitespace() -> None:
    framer = LineFramer()
    framer.feed(b"   ")
    assert not framer.pending_partial()
    framer.feed(b"{")
    assert framer.pending_partial()
