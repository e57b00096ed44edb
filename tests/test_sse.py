"""Server-Sent Events: the WHATWG event stream rules, any split of the bytes, a size bound."""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable
from typing import cast

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcp_sansio._sse import (
    DEFAULT_MAX_EVENT_SIZE,
    SseDecoder,
    SseEvent,
    encode_comment,
    encode_event,
)

BOM = b"\xef\xbb\xbf"


@attrs.frozen
class Result:
    """Everything a decoder tells about a whole stream."""

    events: list[SseEvent]
    last_event_id: str
    retry: int | None
    oversized: int
    truncated: bool


def decode(chunks: Iterable[bytes], max_size: int = DEFAULT_MAX_EVENT_SIZE) -> Result:
    """Feed each chunk, then close, as a transport does."""
    decoder = SseDecoder(max_size)
    events: list[SseEvent] = []
    for chunk in chunks:
        events.extend(decoder.feed(chunk))
    assert decoder.close() == []
    return Result(
        events, decoder.last_event_id, decoder.retry, decoder.oversized, decoder.truncated
    )


def feed_all(chunks: Iterable[bytes], max_size: int = DEFAULT_MAX_EVENT_SIZE) -> list[SseEvent]:
    return decode(chunks, max_size).events


def bytewise(data: bytes) -> list[bytes]:
    return [data[i : i + 1] for i in range(len(data))]


def split_at(data: bytes, cuts: Iterable[int]) -> list[bytes]:
    points = sorted({c % (len(data) + 1) for c in cuts})
    bounds = [0, *points, len(data)]
    return [data[a:b] for a, b in itertools.pairwise(bounds)]


def reference(stream: bytes, max_size: int = DEFAULT_MAX_EVENT_SIZE) -> Result:
    """A plain transcription of the WHATWG parsing rules, over the whole stream at once.

    The stream is decoded as a whole (UTF-8 with replacement, one leading BOM dropped), then
    split into lines. The size bound is the decoder's own rule (the byte lengths of a
    block's non-comment lines), counted from the same lines split from the raw bytes.
    """
    if stream.startswith(BOM):
        stream = stream[3:]
    text = stream.decode("utf-8", "replace")
    raw_lines = re.split(rb"\r\n|\r|\n", stream)
    text_lines = re.split(r"\r\n|\r|\n", text)
    assert len(raw_lines) == len(text_lines)
    last = raw_lines.pop()  # the unterminated last line, discarded at the end of the stream
    text_lines.pop()

    events: list[SseEvent] = []
    last_event_id = ""  # the "last event ID string"
    id_buffer = ""  # the "last event ID buffer"
    retry: int | None = None
    oversized = 0
    data = ""
    event_type = ""
    event_id: str | None = None
    event_retry: int | None = None
    size = 0
    skip = False
    for raw, line in zip(raw_lines, text_lines, strict=True):
        if not line:
            if skip:
                skip = False
            else:
                last_event_id = id_buffer
                if data:
                    events.append(
                        SseEvent(
                            data=data[:-1] if data.endswith("\n") else data,
                            event=event_type or "message",
                            id=event_id,
                            retry=event_retry,
                        )
                    )
            data = event_type = ""
            event_id = event_retry = None
            size = 0
            continue
        if skip or line.startswith(":"):
            continue
        size += len(raw)
        if size > max_size:
            oversized += 1
            skip = True
            id_buffer = last_event_id  # a dropped event's id does not count
            continue
        if ":" in line:
            name, value = line.split(":", 1)
            if value.startswith(" "):
                value = value[1:]
        else:
            name, value = line, ""
        if name == "event":
            event_type = value
        elif name == "data":
            data += value + "\n"
        elif name == "id":
            if "\0" not in value:
                id_buffer = event_id = value
        elif name == "retry" and value and all("0" <= c <= "9" for c in value):
            retry = event_retry = int(value)
    if last and not skip and not last.startswith(b":") and size + len(last) > max_size:
        oversized += 1
        skip = True
    truncated = bool(skip or size or last)
    return Result(events, last_event_id, retry, oversized, truncated)


# -- splitting and line endings ---------------------------------------------------------


STREAM = (
    BOM + b": a comment, then an event with a two-line data field\n"
    b"id: 1\r\n"
    b"event: update\r\n"
    b"data: caf\xc3\xa9\r\n"
    b"data:  \xe2\x82\xac\r\n"
    b"\r\n"
    b"id: \r"
    b"data\r"
    b"\r"
    b"retry: 250\n"
    b"data: {}\n\n"
)
STREAM_EVENTS = [
    SseEvent(data="caf\u00e9\n \u20ac", event="update", id="1"),
    SseEvent(data="", id=""),
    SseEvent(data="{}", retry=250),
]


def test_whole() -> None:
    assert decode([STREAM]) == Result(STREAM_EVENTS, "", 250, 0, False)


def test_byte_by_byte() -> None:
    # Cuts inside the BOM, inside "\r\n" and inside multi-byte UTF-8 characters.
    assert decode(bytewise(STREAM)) == Result(STREAM_EVENTS, "", 250, 0, False)


@given(cuts=st.lists(st.integers(min_value=0), max_size=40))
def test_random_chunks(cuts: list[int]) -> None:
    assert decode(split_at(STREAM, cuts)) == Result(STREAM_EVENTS, "", 250, 0, False)


def test_reference_agrees_on_the_sample_stream() -> None:
    assert reference(STREAM) == Result(STREAM_EVENTS, "", 250, 0, False)


@pytest.mark.parametrize("ending", [b"\n", b"\r\n", b"\r"])
def test_each_line_ending(ending: bytes) -> None:
    stream = ending.join([b"data: a", b"data: b", b"", b"data: c", b"", b""])
    assert feed_all([stream]) == [SseEvent(data="a\nb"), SseEvent(data="c")]
    assert feed_all(bytewise(stream)) == [SseEvent(data="a\nb"), SseEvent(data="c")]


def test_mixed_line_endings() -> None:
    stream = b"data: a\rdata: b\ndata: c\r\n\n\r\r\ndata: d\n\r"
    assert feed_all([stream]) == [SseEvent(data="a\nb\nc"), SseEvent(data="d")]


def test_cr_at_chunk_end_then_lf_is_one_line_ending() -> None:
    decoder = SseDecoder()
    assert decoder.feed(b"data: a\r") == []
    # Were this "\n" a line of its own, it would be a blank line and dispatch "a" alone.
    assert decoder.feed(b"\ndata: b\r") == []
    assert decoder.feed(b"\n") == []
    assert decoder.feed(b"\r") == [SseEvent(data="a\nb")]
    assert decoder.feed(b"\n") == []  # ends no line: nothing was pending
    assert decoder.feed(b"data: c\n\n") == [SseEvent(data="c")]


def test_cr_at_chunk_end_then_cr_is_a_blank_line() -> None:
    decoder = SseDecoder()
    assert decoder.feed(b"data: a\r") == []
    assert decoder.feed(b"\r") == [SseEvent(data="a")]


def test_cr_at_chunk_end_then_data() -> None:
    decoder = SseDecoder()
    assert decoder.feed(b"data: a\r") == []
    assert decoder.feed(b"data: b\r\r") == [SseEvent(data="a\nb")]


def test_lf_only_chunk_after_cr_leaves_no_pending_state() -> None:
    decoder = SseDecoder()
    decoder.feed(b"data: x\r\n\r")
    assert decoder.feed(b"\n") == []
    assert decoder.close() == []
    assert not decoder.truncated


def test_no_event_until_the_blank_line() -> None:
    decoder = SseDecoder()
    assert decoder.feed(b"data: a\n") == []
    assert decoder.feed(b"data: b\n") == []
    assert decoder.feed(b"\n") == [SseEvent(data="a\nb")]


def test_several_events_per_chunk_and_a_trailing_partial() -> None:
    decoder = SseDecoder()
    assert decoder.feed(b"data: 1\n\ndata: 2\n\ndata: 3") == [
        SseEvent(data="1"),
        SseEvent(data="2"),
    ]
    assert bytes(decoder._partial) == b"data: 3"
    assert decoder.feed(b"\n\n") == [SseEvent(data="3")]
    assert decoder._partial == b""


def test_empty_chunks_are_harmless() -> None:
    decoder = SseDecoder()
    assert decoder.feed(b"") == []
    assert decoder.feed(b"data: a\r") == []
    assert decoder.feed(b"") == []
    assert decoder.feed(b"\n") == []  # still the "\n" of the "\r\n"
    assert decoder.feed(b"\n") == [SseEvent(data="a")]


def test_bytes_like_chunks_are_accepted() -> None:
    buffer = bytearray(b"data: abc")
    decoder = SseDecoder()
    assert decoder.feed(cast(bytes, buffer)) == []
    buffer[:] = b"XXXXXXXXX"  # the decoder kept a copy, not the caller's buffer
    assert decoder.feed(cast(bytes, memoryview(b"\n\n"))) == [SseEvent(data="abc")]


# -- the byte order mark -----------------------------------------------------------------


def test_leading_bom_is_skipped() -> None:
    assert feed_all([BOM + b"data: x\n\n"]) == [SseEvent(data="x")]


@pytest.mark.parametrize("cut", [1, 2, 3])
def test_leading_bom_split_across_chunks(cut: int) -> None:
    stream = BOM + b"data: x\n\n"
    assert feed_all([stream[:cut], stream[cut:]]) == [SseEvent(data="x")]
    assert feed_all([stream[:1], stream[1:2], stream[2:3], stream[3:]]) == [SseEvent(data="x")]


def test_only_one_bom_is_skipped() -> None:
    # The second one is part of the first line's field name: "\ufeffdata", not "data".
    result = decode([BOM + BOM + b"data: x\n\n"])
    assert result == Result([], "", None, 0, False)


def test_bom_later_in_the_stream_is_not_skipped() -> None:
    assert feed_all([b"data: a\n\n", BOM + b"data: b\n\n", b"data: c\n\n"]) == [
        SseEvent(data="a"),
        SseEvent(data="c"),
    ]


def test_bom_prefix_that_is_not_a_bom() -> None:
    # b"\xef\xbb" held back as a possible BOM, then it is not one: an invalid sequence.
    assert feed_all([b"\xef\xbb", b"x\n", b"data: y\n\n"]) == [SseEvent(data="y")]
    assert feed_all([b"\xef", b"\xbb"]) == []
    assert feed_all([b"data: \xef", b"\xbb\xbf\n\n"]) == [SseEvent(data="\ufeff")]


def test_stream_of_only_a_bom_prefix_is_truncated() -> None:
    assert decode([b"\xef\xbb"]).truncated
    assert not decode([BOM]).truncated


# -- comments and fields -----------------------------------------------------------------


def test_comments_are_ignored() -> None:
    stream = b": keep-alive\n\n:\n\ndata: a\n: inside an event\ndata: b\n:x\n\n"
    assert decode([stream]) == Result([SseEvent(data="a\nb")], "", None, 0, False)


def test_comment_split_across_chunks_is_not_buffered() -> None:
    decoder = SseDecoder()
    assert decoder.feed(b"data: a\n: a long comm") == []
    assert decoder._partial == b":"
    assert decoder.feed(b"ent: with data: in it") == []
    assert decoder._partial == b":"
    assert decoder.feed(b"\n\n") == [SseEvent(data="a")]


def test_comment_started_in_a_later_chunk() -> None:
    decoder = SseDecoder()
    assert decoder.feed(b":") == []
    assert decoder.feed(b" ping") == []
    assert decoder._partial == b":"
    assert decoder.feed(b"\n\ndata: a\n\n") == [SseEvent(data="a")]


@pytest.mark.parametrize(
    ("line", "data"),
    [
        (b"data: x", "x"),
        (b"data:x", "x"),
        (b"data:  x", " x"),  # only one space is stripped
        (b"data:\tx", "\tx"),  # only a space
        (b"data: a:b: c", "a:b: c"),  # only the first colon splits
        (b"data: x ", "x "),
        (b"data:", ""),
        (b"data: ", ""),
        (b"data", ""),  # no colon: the whole line is the name, the value is empty
    ],
)
def test_data_field_forms(line: bytes, data: str) -> None:
    assert feed_all([line + b"\n\n"]) == [SseEvent(data=data)]


@pytest.mark.parametrize("line", [b"Data: x", b"data : x", b" data: x", b"datum: x", b"dat"])
def test_other_names_are_unknown_fields_and_ignored(line: bytes) -> None:
    assert decode([line + b"\n\n"]) == Result([], "", None, 0, False)


def test_unknown_fields_between_known_ones() -> None:
    stream = b"foo: bar\ndata: a\nbaz\nevent: e\nqux:\n\n"
    assert feed_all([stream]) == [SseEvent(data="a", event="e")]


def test_data_lines_are_joined_and_one_trailing_newline_is_stripped() -> None:
    assert feed_all([b"data: a\ndata:\n\n"]) == [SseEvent(data="a\n")]
    assert feed_all([b"data:\ndata:\n\n"]) == [SseEvent(data="\n")]
    assert feed_all([b"data:\ndata: a\n\n"]) == [SseEvent(data="\na")]
    assert feed_all([b"data: a\ndata: b\ndata: c\n\n"]) == [SseEvent(data="a\nb\nc")]


def test_event_type() -> None:
    stream = (
        b"data: 1\n\n"
        b"event: first\nevent: second\ndata: 2\n\n"
        b"event:\ndata: 3\n\n"  # empty: the default
        b"data: 4\n\n"  # the type does not carry over to the next event
        b"event: ignored\n\n"  # no data: no event, and the type is forgotten
        b"data: 5\n\n"
        b"event: caf\xc3\xa9\ndata: 6\n\n"
    )
    assert [(e.event, e.data) for e in feed_all([stream])] == [
        ("message", "1"),
        ("second", "2"),
        ("message", "3"),
        ("message", "4"),
        ("message", "5"),
        ("caf\u00e9", "6"),
    ]


# -- ids -----------------------------------------------------------------------------------


def test_id_of_each_event_and_the_last_event_id() -> None:
    decoder = SseDecoder()
    assert decoder.last_event_id == ""
    assert decoder.feed(b"id: 1\ndata: a\n\n") == [SseEvent(data="a", id="1")]
    assert decoder.last_event_id == "1"
    # An event without an id field: SseEvent.id is None, the last event ID stays.
    assert decoder.feed(b"data: b\n\n") == [SseEvent(data="b")]
    assert decoder.last_event_id == "1"
    assert decoder.feed(b"id: 2\nid: 3\ndata: c\n\n") == [SseEvent(data="c", id="3")]
    assert decoder.last_event_id == "3"


def test_empty_id_resets_the_last_event_id() -> None:
    decoder = SseDecoder()
    decoder.feed(b"id: 1\ndata: a\n\n")
    assert decoder.feed(b"id\ndata: b\n\n") == [SseEvent(data="b", id="")]
    assert decoder.last_event_id == ""


def test_id_with_nul_is_ignored() -> None:
    decoder = SseDecoder()
    decoder.feed(b"id: 1\ndata: a\n\n")
    assert decoder.feed(b"id: 2\x003\ndata: b\n\n") == [SseEvent(data="b")]
    assert decoder.last_event_id == "1"
    # Ignored, so an earlier id field of the same event still counts.
    assert decoder.feed(b"id: 4\nid: \x00\ndata: c\n\n") == [SseEvent(data="c", id="4")]
    assert decoder.last_event_id == "4"


def test_event_without_data_is_not_dispatched_but_its_id_is_kept() -> None:
    decoder = SseDecoder()
    assert decoder.feed(b"id: 7\n\n") == []
    assert decoder.last_event_id == "7"
    assert decoder.feed(b"id: 8\nevent: e\nretry: 10\n\n") == []
    assert decoder.last_event_id == "8"
    assert decoder.retry == 10
    assert decoder.feed(b"data: x\n\n") == [SseEvent(data="x")]
    assert decoder.last_event_id == "8"


def test_id_counts_at_the_blank_line() -> None:
    decoder = SseDecoder()
    decoder.feed(b"id: 1\ndata: a\n\nid: 2\ndata: b\n")
    assert decoder.last_event_id == "1"  # event 2 is not complete yet
    decoder.feed(b"\n")
    assert decoder.last_event_id == "2"


def test_priming_event_with_empty_data_is_dispatched() -> None:
    # MCP's Streamable HTTP priming event: an id and an empty data field.
    for stream in (b"id: X\ndata: \n\n", b"id: X\ndata:\n\n", b"id: X\ndata\n\n"):
        assert decode([stream]) == Result([SseEvent(data="", id="X")], "X", None, 0, False)
    assert encode_event(b"", id="X") == b"id: X\ndata:\n\n"
    assert feed_all([encode_event("", id="X")]) == [SseEvent(data="", id="X")]


# -- retry --------------------------------------------------------------------------------


def test_retry() -> None:
    decoder = SseDecoder()
    assert decoder.retry is None
    assert decoder.feed(b"retry: 1500\ndata: a\n\n") == [SseEvent(data="a", retry=1500)]
    assert decoder.retry == 1500
    # The decoder remembers it; the next event only carries its own.
    assert decoder.feed(b"data: b\n\n") == [SseEvent(data="b")]
    assert decoder.retry == 1500
    assert decoder.feed(b"retry: 0\n\n") == []
    assert decoder.retry == 0
    assert decoder.feed(b"retry:007\ndata: c\n\n") == [SseEvent(data="c", retry=7)]
    assert decoder.retry == 7


@pytest.mark.parametrize(
    "value",
    [
        b"",
        b" 5",  # two spaces after the colon: the value is " 5"
        b"5 ",
        b"-5",
        b"+5",
        b"1.5",
        b"1e3",
        b"12a",
        b"0x10",
        b"1_000",
        "\u0661\u0662".encode(),  # Arabic-Indic digits: digits, but not ASCII
        "\uff11".encode(),  # fullwidth 1
        b"\xff",
    ],
)
def test_invalid_retry_is_ignored(value: bytes) -> None:
    decoder = SseDecoder()
    decoder.feed(b"retry: 100\n\n")
    assert decoder.feed(b"retry: " + value + b"\ndata: x\n\n") == [SseEvent(data="x")]
    assert decoder.retry == 100


def test_retry_too_long_for_int_is_ignored() -> None:
    decoder = SseDecoder()
    decoder.feed(b"retry: 100\n\n")
    assert decoder.feed(b"retry: " + b"9" * 5000 + b"\ndata: x\n\n") == [SseEvent(data="x")]
    assert decoder.retry == 100
    big = int("9" * 400)
    assert decoder.feed(b"retry: %d\n\n" % big) == []
    assert decoder.retry == big


def test_retry_takes_effect_before_the_blank_line() -> None:
    # As in the standard: the reconnection time is set when its line is parsed.
    result = decode([b"retry: 3000\ndata: cut short"])
    assert result == Result([], "", 3000, 0, True)


def test_last_valid_retry_of_an_event_wins() -> None:
    stream = b"retry: 1\nretry: x\nretry: 2\nretry: y\ndata: a\n\n"
    assert decode([stream]) == Result([SseEvent(data="a", retry=2)], "", 2, 0, False)


# -- end of stream -------------------------------------------------------------------------


def test_clean_end() -> None:
    decoder = SseDecoder()
    assert decoder.feed(b"data: a\n\n") == [SseEvent(data="a")]
    assert not decoder.truncated
    assert decoder.close() == []
    assert not decoder.truncated


def test_stream_cut_mid_event_is_discarded() -> None:
    decoder = SseDecoder()
    assert decoder.feed(b"id: 1\ndata: a\n\nid: 2\ndata: b\n") == [SseEvent(data="a", id="1")]
    assert not decoder.truncated  # only known at close()
    assert decoder.close() == []
    assert decoder.truncated
    # The cut event's id does not count: resuming from "1" gets event 2 again.
    assert decoder.last_event_id == "1"


def test_stream_cut_mid_line_is_truncated() -> None:
    assert decode([b"data: a\n\nda"]) == Result([SseEvent(data="a")], "", None, 0, True)
    assert decode([b"data: a\n\n: a comm"]).truncated


def test_stream_cut_after_a_field_line_with_no_data_is_truncated() -> None:
    assert decode([b"event: e\n"]).truncated
    assert decode([b"unknown\n"]).truncated


@pytest.mark.parametrize("stream", [b"", b"\n", b"\n\n\n", b": ping\n", b": ping\n\n", b"\r"])
def test_no_fields_pending_is_not_truncated(stream: bytes) -> None:
    assert decode([stream]) == Result([], "", None, 0, False)


def test_feed_and_close_after_close() -> None:
    decoder = SseDecoder()
    decoder.feed(b"data: a")
    assert decoder.close() == []
    assert decoder.truncated
    assert decoder.feed(b"\n\ndata: b\n\n") == []
    assert decoder.close() == []
    assert decoder.truncated
    assert decoder._partial == b""


# -- the size bound ------------------------------------------------------------------------


def test_default_max_event_size() -> None:
    assert DEFAULT_MAX_EVENT_SIZE == 4 * 1024 * 1024
    assert SseDecoder().max_event_size == DEFAULT_MAX_EVENT_SIZE
    assert SseDecoder(10).max_event_size == 10


@pytest.mark.parametrize("bad", [0, -1])
def test_max_event_size_must_be_positive(bad: int) -> None:
    with pytest.raises(ValueError, match="max_event_size"):
        SseDecoder(bad)


def test_size_counts_field_lines_without_endings_or_comments() -> None:
    # 7 + 7 + 6 = 20 bytes of field lines; the comment and the line endings are free.
    stream = b"id: 123\r\ndata: a\r\n: a long comment line, not counted\r\ndata:b\r\n\r\n"
    assert decode([stream], 20) == Result([SseEvent(data="a\nb", id="123")], "123", None, 0, False)
    assert decode([stream], 19) == Result([], "", None, 1, False)
    assert decode(bytewise(stream), 20).events == [SseEvent(data="a\nb", id="123")]
    assert decode(bytewise(stream), 19) == Result([], "", None, 1, False)


def test_oversized_event_is_dropped_and_the_next_one_decoded() -> None:
    big = b"data: " + b"x" * 100 + b"\n"
    stream = b"data: a\n\n" + b"id: 1\nretry: 5\n" + big + b"data: more\nid: 2\n\n" + b"data: b\n\n"
    expected = Result([SseEvent(data="a"), SseEvent(data="b")], "", 5, 1, False)
    assert decode([stream], 50) == expected
    assert decode(bytewise(stream), 50) == expected
    # The dropped event's id is not the last event ID (its retry did take effect: it came
    # before the bound was crossed).


def test_oversized_by_many_lines() -> None:
    stream = b"data: x\n" * 100 + b"\ndata: y\n\n"
    assert decode([stream], 70) == Result([SseEvent(data="y")], "", None, 1, False)
    decoder = SseDecoder(70)
    for _ in range(100):
        decoder.feed(b"data: x\n")
        # Never more than the bound: 9 lines of 7 bytes make 63 bytes of "x\nx\n...".
        assert decoder._data is None or len(decoder._data) <= 70
    assert decoder.oversized == 1
    assert decoder.feed(b"\ndata: y\n\n") == [SseEvent(data="y")]


def test_two_oversized_events_in_a_row() -> None:
    stream = b"data: " + b"x" * 50 + b"\n\n" + b"data: " + b"y" * 50 + b"\n\ndata: z\n\n"
    expected = Result([SseEvent(data="z")], "", None, 2, False)
    assert decode([stream], 20) == expected
    assert decode(bytewise(stream), 20) == expected


@pytest.mark.parametrize(
    "chunks",
    [
        # The blank line ending the skipped block, cut every way between chunks.
        [b"data: " + b"x" * 40, b"x\n", b"\n", b"data: y\n\n"],
        [b"data: " + b"x" * 40, b"x\n\n", b"data: y\n\n"],
        [b"data: " + b"x" * 40, b"x", b"\n", b"\ndata: y\n\n"],
        [b"data: " + b"x" * 40, b"\r", b"\r", b"data: y\n\n"],
        [b"data: " + b"x" * 40, b"\r", b"\n", b"\r\n", b"data: y\n\n"],
        [b"data: " + b"x" * 40, b"\nmore\nlines", b"\n\ndata: y\n\n"],
        [b"data: " + b"x" * 40 + b"\n", b"more\n", b"\n", b"data: y\n\n"],
        [b"data: " + b"x" * 40 + b"\n", b"more", b"\n", b"\ndata: y\n\n"],
        [b"data: " + b"x" * 40 + b"\n", b"\ndata: y\n\n"],
        [b"data: a\n", b"data: " + b"x" * 30, b"\n\ndata: y", b"\n\n"],
        # Dropped at a complete line, with the next line of the block still unfinished: its
        # end is not the blank line.
        [b"data: " + b"x" * 40 + b"\nmore", b"\ndata: z\n\ndata: y\n\n"],
        [b"data: " + b"x" * 40 + b"\nmore", b"\n", b"data: z\n\ndata: y\n\n"],
    ],
)
def test_skipping_an_oversized_event_across_chunks(chunks: list[bytes]) -> None:
    result = decode(chunks, 20)
    assert result == Result([SseEvent(data="y")], "", None, 1, False)
    assert result == decode([b"".join(chunks)], 20)


def test_exactly_max_event_size_is_delivered() -> None:
    line = b"data: " + b"x" * 94  # 100 bytes
    assert feed_all([line + b"\n\n"], 100) == [SseEvent(data="x" * 94)]
    assert feed_all([line, b"\n\n"], 100) == [SseEvent(data="x" * 94)]
    assert feed_all([line + b"x\n\n"], 100) == []
    assert feed_all([line + b"x", b"\n\n"], 100) == []


@pytest.mark.parametrize("ending", [b"\n", b"\r\n", b"\r"], ids=["lf", "crlf", "cr"])
@pytest.mark.parametrize("extra", [0, 1])
def test_an_event_of_several_lines_at_max_event_size_and_one_byte_more(
    ending: bytes, extra: int
) -> None:
    # The documented bound: the field lines (names, colons, values), not their line endings
    # and not comments. Exactly max_event_size bytes are delivered, one more is dropped.
    lines = [b"event: message", b"id: 7", b": not counted", b"data: " + b"x" * 60, b"data: y"]
    limit = sum(len(line) for line in lines if not line.startswith(b":"))
    stream = ending.join(lines) + ending * 2 + b"data: next" + ending * 2
    result = decode([stream], limit - extra)
    if extra:
        assert result.events == [SseEvent(data="next")]
        assert result.oversized == 1
    else:
        assert result.events == [SseEvent(data="x" * 60 + "\ny", id="7"), SseEvent(data="next")]
        assert result.oversized == 0
    assert decode(bytewise(stream), limit - extra) == result


def test_unfinished_line_counts_with_the_lines_before_it() -> None:
    # 9 + 9 bytes: over the bound of 12 while the second line is still unfinished.
    decoder = SseDecoder(12)
    assert decoder.feed(b"data: abc\ndata: abc") == []
    assert decoder.oversized == 1
    assert decoder._partial == b""
    assert decoder._data is None
    assert decoder.feed(b"\n\ndata: y\n\n") == [SseEvent(data="y")]


def test_oversized_partial_line_at_the_end_of_the_stream() -> None:
    assert decode([b"data: a\n\n", b"data: " + b"x" * 100], 50) == Result(
        [SseEvent(data="a")], "", None, 1, True
    )


def test_endless_line_is_bounded() -> None:
    max_size = 1024
    decoder = SseDecoder(max_size)
    chunk = b"x" * 65536
    assert decoder.feed(b"data: ") == []
    for _ in range(100 * 1024 * 1024 // len(chunk)):  # 100 MiB
        assert decoder.feed(chunk) == []
        assert len(decoder._partial) <= max_size
        assert decoder._data is None
    assert decoder.oversized == 1
    assert decoder.feed(b"\n\ndata: next\n\n") == [SseEvent(data="next")]
    assert decoder.oversized == 1


def test_endless_line_bounded_when_the_bound_is_larger_than_a_chunk() -> None:
    max_size = 200_000
    decoder = SseDecoder(max_size)
    chunk = b"y" * 65536
    decoder.feed(b"data: a\nid: 1\ndata: ")
    sizes = []
    for _ in range(200):
        assert decoder.feed(chunk) == []
        sizes.append(len(decoder._partial))
        assert len(decoder._partial) + decoder._size <= max_size
    assert max(sizes) > 100_000  # it did buffer the line while it could still fit...
    assert sizes[-1] == 0  # ...and dropped it when it could not
    assert decoder.oversized == 1
    assert decoder.feed(b"\r\n\r\ndata: next\r\n\r\n") == [SseEvent(data="next")]
    assert decoder.last_event_id == ""


def test_endless_comment_line_is_not_buffered() -> None:
    decoder = SseDecoder(16)
    decoder.feed(b"data: a\n:")
    for _ in range(1000):
        assert decoder.feed(b"z" * 4096) == []
        assert decoder._partial == b":"
    assert decoder.oversized == 0  # a comment is not part of the event's size
    assert decoder.feed(b"\n\n") == [SseEvent(data="a")]


def test_endless_comment_lines_are_not_buffered() -> None:
    decoder = SseDecoder(16)
    decoder.feed(b"data: a\n")
    for _ in range(1000):
        assert decoder.feed(b": keep-alive, " + b"z" * 100 + b"\n") == []
    assert decoder.oversized == 0
    assert decoder.feed(b"\n") == [SseEvent(data="a")]


# -- UTF-8 -----------------------------------------------------------------------------------


def test_invalid_utf8_is_replaced() -> None:
    stream = b"event: \xff\ndata: a\xc3\ndata: \xe2\x82 \xed\xa0\x80\nid: \x80\n\n"
    assert feed_all([stream]) == [
        SseEvent(
            data="a\ufffd\n\ufffd \ufffd\ufffd\ufffd",
            event="\ufffd",
            id="\ufffd",
        )
    ]
    assert feed_all(bytewise(stream)) == feed_all([stream])


def test_utf8_split_inside_a_character() -> None:
    text = "h\u00e9 \u20ac \U0001f600"
    stream = b"data: " + text.encode() + b"\n\n"
    assert feed_all(bytewise(stream)) == [SseEvent(data=text)]


# -- encoding --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "wire"),
    [
        ({"data": '{"a":1}'}, b'data: {"a":1}\n\n'),
        ({"data": b'{"a":1}'}, b'data: {"a":1}\n\n'),
        ({"data": ""}, b"data:\n\n"),
        ({"data": b"", "id": "X"}, b"id: X\ndata:\n\n"),
        ({"data": "a\nb"}, b"data: a\ndata: b\n\n"),
        ({"data": "a\r\nb\rc\n"}, b"data: a\ndata: b\ndata: c\ndata:\n\n"),
        ({"data": "a\r"}, b"data: a\ndata:\n\n"),
        ({"data": " x"}, b"data:  x\n\n"),
        ({"data": "caf\u00e9"}, b"data: caf\xc3\xa9\n\n"),
        (
            {"data": "d", "retry": 5, "event": "e", "id": "1"},
            b"id: 1\nevent: e\nretry: 5\ndata: d\n\n",
        ),
        ({"data": "d", "event": ""}, b"event:\ndata: d\n\n"),
        ({"data": "d", "id": ""}, b"id:\ndata: d\n\n"),
        ({"data": "d", "retry": 0}, b"retry: 0\ndata: d\n\n"),
    ],
)
def test_encode_event(kwargs: dict[str, object], wire: bytes) -> None:
    assert encode_event(**kwargs) == wire  # type: ignore[arg-type]


@pytest.mark.parametrize("bad", ["a\nb", "a\rb", "a\r\n", "\n", "a\0b"])
def test_encode_event_rejects_bad_id_and_event(bad: str) -> None:
    with pytest.raises(ValueError, match="id"):
        encode_event("x", id=bad)
    with pytest.raises(ValueError, match="event"):
        encode_event("x", event=bad)


def test_encode_event_rejects_bad_retry() -> None:
    with pytest.raises(ValueError, match="retry"):
        encode_event("x", retry=-1)
    with pytest.raises(ValueError, match="format code"):
        encode_event("x", retry=1.5)  # type: ignore[arg-type]


def test_encode_event_rejects_lone_surrogates() -> None:
    with pytest.raises(UnicodeEncodeError):
        encode_event("\ud800")
    with pytest.raises(UnicodeEncodeError):
        encode_event("x", id="\ud800")


def test_encode_comment() -> None:
    assert encode_comment() == b":\n\n"
    assert encode_comment("keep-alive") == b": keep-alive\n\n"
    assert encode_comment("caf\u00e9 \0") == b": caf\xc3\xa9 \x00\n\n"
    for bad in ("a\nb", "a\rb"):
        with pytest.raises(ValueError, match="comment"):
            encode_comment(bad)
    assert decode([encode_comment("x"), encode_comment()]) == Result([], "", None, 0, False)


def test_sse_event_defaults_and_immutability() -> None:
    event = SseEvent(data="x")
    assert (event.data, event.event, event.id, event.retry) == ("x", "message", None, None)
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        event.data = "y"  # type: ignore[misc]
    with pytest.raises(TypeError):
        SseEvent("x")  # type: ignore[call-arg]


# -- properties ----------------------------------------------------------------------------

# Text without CR, LF or NUL: what an id or an event type may be.
field_text = st.text().filter(lambda s: not ({"\r", "\n", "\0"} & set(s)))
data_text = st.text(alphabet=st.characters(exclude_categories=["Cs"]) | st.sampled_from("\r\n"))


@st.composite
def sent_events(draw: st.DrawFn) -> tuple[bytes, SseEvent]:
    data = draw(data_text)
    event_id = draw(st.none() | field_text)
    event = draw(st.none() | field_text)
    retry = draw(st.none() | st.integers(min_value=0, max_value=2**64))
    payload: bytes | str = data.encode() if draw(st.booleans()) else data
    wire = encode_event(payload, id=event_id, event=event, retry=retry)
    expected = SseEvent(
        data=data.replace("\r\n", "\n").replace("\r", "\n"),
        event=event or "message",
        id=event_id,
        retry=retry,
    )
    return wire, expected


@given(
    sent=st.lists(sent_events(), max_size=8),
    comments=st.lists(st.sampled_from([b"", encode_comment(), encode_comment("ping")])),
    bom=st.booleans(),
    cuts=st.lists(st.integers(min_value=0), max_size=30),
)
def test_round_trip(
    sent: list[tuple[bytes, SseEvent]], comments: list[bytes], bom: bool, cuts: list[int]
) -> None:
    blocks = [wire for wire, _ in sent]
    for i, comment in enumerate(comments):
        blocks.insert(i % (len(blocks) + 1), comment)
    stream = (BOM if bom else b"") + b"".join(blocks)
    events = [event for _, event in sent]
    ids = [event.id for event in events if event.id is not None]
    retries = [event.retry for event in events if event.retry is not None]
    expected = Result(events, ids[-1] if ids else "", retries[-1] if retries else None, 0, False)
    assert decode([stream]) == expected
    assert decode(split_at(stream, cuts)) == expected
    assert reference(stream) == expected


@given(sent=st.lists(sent_events(), max_size=4))
def test_round_trip_byte_by_byte(sent: list[tuple[bytes, SseEvent]]) -> None:
    stream = b"".join(wire for wire, _ in sent)
    assert decode(bytewise(stream)).events == [event for _, event in sent]


# Streams made of the pieces that matter to the parser, so that most examples exercise it.
TOKENS = [
    b"data",
    b"event",
    b"id",
    b"retry",
    b"foo",
    b":",
    b": ",
    b" ",
    b"\n",
    b"\r",
    b"\r\n",
    b"\n\n",
    b"x",
    b"12",
    b"\x00",
    b"\xff",
    b"\xc3",
    b"\xa9",
    b"\xe2\x82\xac",
    BOM,
    b"\xef",
    b"data: 0123456789",
    b"0123456789abcdef",
]
token_streams = st.lists(st.sampled_from(TOKENS), max_size=60).map(b"".join)
# Mostly small bounds, so that many examples drop events.
max_sizes = st.sampled_from([*range(4, 41), DEFAULT_MAX_EVENT_SIZE])


@given(stream=token_streams, max_size=max_sizes, cuts=st.lists(st.integers(min_value=0)))
def test_matches_the_reference(stream: bytes, max_size: int, cuts: list[int]) -> None:
    expected = reference(stream, max_size)
    assert decode([stream], max_size) == expected
    assert decode(split_at(stream, cuts), max_size) == expected
    assert decode(bytewise(stream), max_size) == expected


@given(stream=st.binary(max_size=300), max_size=max_sizes, cuts=st.lists(st.integers()))
def test_arbitrary_bytes_never_raise_and_match_the_reference(
    stream: bytes, max_size: int, cuts: list[int]
) -> None:
    expected = reference(stream, max_size)
    assert decode([stream], max_size) == expected
    assert decode(split_at(stream, cuts), max_size) == expected


@given(chunks=st.lists(st.binary(max_size=50), max_size=20), max_size=max_sizes)
def test_buffered_bytes_stay_within_the_bound(chunks: list[bytes], max_size: int) -> None:
    decoder = SseDecoder(max_size)
    for chunk in chunks:
        decoder.feed(chunk)
        held = len(decoder._partial) + len(decoder._data or b"")
        held += len(decoder._event or b"") + len(decoder._block_id or b"")
        assert held <= max_size + 1  # the + 1: a ":" kept for a comment line
    decoder.close()
