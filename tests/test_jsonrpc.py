"""The JSON-RPC 2.0 envelope: every rule, valid and invalid, and the encoder."""

from __future__ import annotations

import datetime
from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcp_sansio import (
    OMITTED,
    ErrorCode,
    ErrorResponse,
    InvalidMessage,
    Message,
    Notification,
    Request,
    Response,
)
from mcp_sansio._jsonrpc import (
    classify,
    decode,
    encode,
    encode_batch,
    invalid,
    message_to_dict,
    sniff,
)

PARSE = ErrorCode.PARSE_ERROR
INVALID = ErrorCode.INVALID_REQUEST
U64_MAX = 2**64 - 1
I64_MIN = -(2**63)


def line(obj: Any) -> bytes:
    return orjson.dumps(obj)


def one(data: bytes, *, allow_batch: bool = False) -> Message | InvalidMessage:
    result = decode(data, allow_batch=allow_batch)
    assert not isinstance(result, list)
    return result


def bad(data: bytes, *, allow_batch: bool = False) -> InvalidMessage:
    result = one(data, allow_batch=allow_batch)
    assert isinstance(result, InvalidMessage), result
    return result


def nested(depth: int) -> bytes:
    return b"[" * depth + b"]" * depth


# -- valid messages --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("obj", "expected"),
    [
        (
            {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
            Request(id=1, method="tools/list", params=None),
        ),
        (
            {"jsonrpc": "2.0", "id": "abc", "method": "tools/call", "params": {"name": "x"}},
            Request(id="abc", method="tools/call", params={"name": "x"}),
        ),
        ({"jsonrpc": "2.0", "id": 0, "method": "m"}, Request(id=0, method="m")),
        ({"jsonrpc": "2.0", "id": -5, "method": "m"}, Request(id=-5, method="m")),
        ({"jsonrpc": "2.0", "id": "", "method": "m"}, Request(id="", method="m")),
        ({"jsonrpc": "2.0", "id": U64_MAX, "method": "m"}, Request(id=U64_MAX, method="m")),
        ({"jsonrpc": "2.0", "id": I64_MIN, "method": "m"}, Request(id=I64_MIN, method="m")),
        (
            {"jsonrpc": "2.0", "id": 1, "method": "m", "params": {}},
            Request(id=1, method="m", params={}),
        ),
        (
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            Notification(method="notifications/initialized"),
        ),
        (
            {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progress": 1}},
            Notification(method="notifications/progress", params={"progress": 1}),
        ),
        ({"jsonrpc": "2.0", "id": 7, "result": {}}, Response(id=7, result={})),
        (
            {"jsonrpc": "2.0", "id": "r", "result": {"content": [{"type": "text"}]}},
            Response(id="r", result={"content": [{"type": "text"}]}),
        ),
        (
            {"jsonrpc": "2.0", "id": 3, "error": {"code": -32601, "message": "nope"}},
            ErrorResponse(id=3, code=-32601, message="nope"),
        ),
        (
            {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "bad"}},
            ErrorResponse(id=None, code=-32700, message="bad"),
        ),
        (
            # An error answer whose id is absent is read as an answer to null.
            {"jsonrpc": "2.0", "error": {"code": -32700, "message": "bad"}},
            ErrorResponse(id=None, code=-32700, message="bad"),
        ),
        (
            {"jsonrpc": "2.0", "id": 3, "error": {"code": 1, "message": "m", "data": None}},
            ErrorResponse(id=3, code=1, message="m", data=None),
        ),
        (
            {"jsonrpc": "2.0", "id": 3, "error": {"code": 1, "message": "m", "data": [1, "x"]}},
            ErrorResponse(id=3, code=1, message="m", data=[1, "x"]),
        ),
        (
            # Members JSON-RPC does not define are ignored, not an error.
            {"jsonrpc": "2.0", "id": 1, "method": "m", "extra": True},
            Request(id=1, method="m"),
        ),
        (
            # ... with params too (these skip the fast path, whose counts they break).
            {"jsonrpc": "2.0", "id": 1, "method": "m", "params": {"a": 1}, "extra": True},
            Request(id=1, method="m", params={"a": 1}),
        ),
        (
            {"jsonrpc": "2.0", "method": "n", "params": {"a": 1}, "extra": True},
            Notification(method="n", params={"a": 1}),
        ),
        (
            {"jsonrpc": "2.0", "id": 1, "result": {"a": 1}, "extra": True},
            Response(id=1, result={"a": 1}),
        ),
    ],
)
def test_valid(obj: dict[str, Any], expected: Message) -> None:
    assert one(line(obj)) == expected
    assert classify(obj, line(obj)) == expected


def test_whitespace_around_the_json_is_fine() -> None:
    assert one(b' \t{"jsonrpc": "2.0", "method": "m"}\r ') == Notification(method="m")


def test_error_data_absent_is_omitted_not_null() -> None:
    absent = one(line({"jsonrpc": "2.0", "id": 1, "error": {"code": 1, "message": "m"}}))
    null = one(
        line({"jsonrpc": "2.0", "id": 1, "error": {"code": 1, "message": "m", "data": None}})
    )
    assert isinstance(absent, ErrorResponse)
    assert isinstance(null, ErrorResponse)
    assert absent.data is OMITTED
    assert null.data is None
    assert absent != null


def test_string_and_integer_ids_are_distinct() -> None:
    as_str = one(b'{"jsonrpc":"2.0","id":"1","method":"m"}')
    as_int = one(b'{"jsonrpc":"2.0","id":1,"method":"m"}')
    assert isinstance(as_str, Request)
    assert isinstance(as_int, Request)
    assert as_str.id == "1"
    assert type(as_str.id) is str
    assert as_int.id == 1
    assert type(as_int.id) is int
    assert as_str != as_int


# -- parse errors (-32700) -------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "fragment"),
    [
        (b"{", ""),
        (b"not json", ""),
        (b'{"jsonrpc":"2.0",}', ""),
        (b"{'jsonrpc':'2.0'}", ""),
        (b'{"jsonrpc":"2.0","method":"m"} {}', ""),
        (b'{"jsonrpc":"2.0","method":"caf\xe9"}', "UTF-8"),  # Latin-1, not UTF-8
        (b'{"jsonrpc":"2.0","method":"\xff\xfe"}', "UTF-8"),
        (b'{"jsonrpc":"2.0","method":"\xed\xa0\x80"}', "UTF-8"),  # an encoded surrogate
        (b'{"jsonrpc":"2.0","method":"\\ud800"}', "surrogate"),  # a lone high surrogate
        (b'{"jsonrpc":"2.0","method":"\\udc00x"}', "surrogate"),  # a lone low surrogate
        (b'\xef\xbb\xbf{"jsonrpc":"2.0","method":"m"}', "BOM"),
        (b'{"jsonrpc":"2.0","id":NaN,"method":"m"}', ""),
        (b'{"jsonrpc":"2.0","id":Infinity,"method":"m"}', ""),
        (b'{"jsonrpc":"2.0","id":1e400,"method":"m"}', "infinity"),
        (nested(5000), "depth"),
        (b'{"jsonrpc":"2.0","method":"m","params":{"a":' + nested(2000) + b"}}", "depth"),
    ],
)
def test_parse_error(data: bytes, fragment: str) -> None:
    for allow_batch in (False, True):
        result = bad(data, allow_batch=allow_batch)
        assert result.code == PARSE
        assert result.message.startswith("Parse error: ")
        assert fragment.lower() in result.message.lower()
        # The id cannot be read: the reply goes to null.
        assert result.id is None
        assert result.reply == ErrorResponse(id=None, code=PARSE, message=result.message)
        assert result.raw == data[:1024]


def test_parse_error_raw_is_cut_to_1_kib() -> None:
    data = b"{" + b" " * 5000
    assert bad(data).raw == data[:1024]


def test_moderate_nesting_is_fine() -> None:
    data = b'{"jsonrpc":"2.0","method":"m","params":{"a":' + nested(200) + b"}}"
    assert isinstance(one(data), Notification)


# -- invalid requests and notifications (-32600, answered) -----------------------------


def req(**fields: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", **fields}


@pytest.mark.parametrize(
    ("obj", "fragment", "reply_id"),
    [
        # Not an object at all.
        (1, "must be an object, not an integer", None),
        ("x", "must be an object, not a string", None),
        (None, "must be an object, not null", None),
        (True, "must be an object, not a boolean", None),
        (1.5, "must be an object, not a number with a fraction", None),
        # "jsonrpc".
        ({"id": 1, "method": "m"}, "'jsonrpc' is missing", 1),
        ({"jsonrpc": "1.0", "id": 1, "method": "m"}, '\'jsonrpc\' must be "2.0", not "1.0"', 1),
        ({"jsonrpc": 2.0, "id": "a", "method": "m"}, "'jsonrpc' must be \"2.0\", not 2.0", "a"),
        ({"jsonrpc": None, "method": "m"}, "'jsonrpc' must be \"2.0\", not null", None),
        ({"jsonrpc": ["2.0"], "id": 2, "method": "m"}, "not an array", 2),
        ({}, "'jsonrpc' is missing", None),
        # "method".
        (req(id=5), "'method' is missing", 5),
        (req(), "'method' is missing", None),
        (req(id=5, method=5), "'method' must be a string, not an integer", 5),
        (req(id=5, method=None), "'method' must be a string, not null", 5),
        (req(method=["m"]), "'method' must be a string, not an array", None),
        # "id".
        (req(id=None, method="m"), "'id' must be a string or an integer, not null", None),
        (req(id=True, method="m"), "'id' must be a string or an integer, not a boolean", None),
        (req(id=False, method="m"), "not a boolean", None),
        (req(id=1.5, method="m"), "not a number with a fraction or exponent", None),
        (req(id=1.0, method="m"), "not a number with a fraction or exponent", None),
        (req(id=[1], method="m"), "not an array", None),
        (req(id={"a": 1}, method="m"), "not an object", None),
        # "params".
        (req(id=1, method="m", params=[1, 2]), "'params' must be an object, not an array", 1),
        (req(id=1, method="m", params=None), "'params' must be an object, not null", 1),
        (req(id="p", method="m", params="x"), "'params' must be an object, not a string", "p"),
        (req(method="m", params=3), "'params' must be an object, not an integer", None),
        # A request or notification that also looks like a response.
        (req(id=1, method="m", result={}), "cannot carry 'result' or 'error'", 1),
        (req(id=1, method="m", error={"code": 1, "message": "x"}), "cannot carry", 1),
        (req(method="m", result={}), "cannot carry", None),
    ],
)
def test_invalid_request(obj: Any, fragment: str, reply_id: int | str | None) -> None:
    result = bad(line(obj))
    assert result.code == INVALID
    assert result.message.startswith("Invalid request: ")
    assert fragment in result.message
    assert result.id == reply_id
    assert result.reply == ErrorResponse(id=reply_id, code=INVALID, message=result.message)
    assert result.raw == line(obj)
    assert classify(obj, b"raw") == invalid(
        INVALID, result.message, b"raw", reply=True, id=reply_id
    )


@pytest.mark.parametrize(
    "text",
    [
        b'{"jsonrpc":"2.0","id":18446744073709551616,"method":"m"}',  # 2**64
        b'{"jsonrpc":"2.0","id":-9223372036854775809,"method":"m"}',  # -2**63 - 1
        b'{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"m"}',
    ],
)
def test_id_beyond_64_bits_is_invalid(text: bytes) -> None:
    # The parser reads such integers as floats; they are not valid ids, and the message
    # says why rather than calling them fractions.
    result = bad(text)
    assert result.code == INVALID
    assert "64-bit" in result.message
    assert result.reply is not None
    assert result.reply.id is None


def test_invalid_jsonrpc_value_is_shown_cut_short() -> None:
    result = bad(line(req(jsonrpc="x" * 500, id=1, method="m")))
    assert len(result.message) < 120
    assert result.reply is not None
    assert result.reply.id == 1


def test_deeply_nested_jsonrpc_value_is_named_not_encoded() -> None:
    # Deeper than orjson will encode (255), within what it decodes (1024).
    data = b'{"jsonrpc":' + nested(300) + b',"id":1,"method":"m"}'
    result = bad(data)
    assert result.message == "Invalid request: 'jsonrpc' must be \"2.0\", not an array"
    data = b'{"jsonrpc":' + nested(300) + b',"id":1,"result":{}}'
    result = bad(data)
    assert result.message == "Invalid response: 'jsonrpc' must be \"2.0\", not an array"


# -- invalid responses (-32600, never answered) ----------------------------------------


@pytest.mark.parametrize(
    ("obj", "fragment", "read_id"),
    [
        ({"id": 1, "result": {}}, "'jsonrpc' is missing", 1),
        ({"jsonrpc": "2", "id": 1, "result": {}}, '\'jsonrpc\' must be "2.0", not "2"', 1),
        (
            {"jsonrpc": "2.0", "id": 1, "error": {"code": 1, "message": "m"}, "result": {}},
            "both",
            1,
        ),
        (req(result={}), "'id' is missing", None),
        (req(id=None, result={}), "'id' must be a string or an integer, not null", None),
        (req(id=True, result={}), "not a boolean", None),
        (req(id=2.5, result={}), "not a number with a fraction or exponent", None),
        (req(id=1, result=[]), "'result' must be an object, not an array", 1),
        (req(id=1, result=None), "'result' must be an object, not null", 1),
        (req(id="s", result="ok"), "'result' must be an object, not a string", "s"),
        (req(id=1, result=42), "'result' must be an object, not an integer", 1),
        (
            req(id=True, error={"code": 1, "message": "m"}),
            "an integer or null, not a boolean",
            None,
        ),
        (req(id=[1], error={"code": 1, "message": "m"}), "not an array", None),
        (req(id=1, error="boom"), "'error' must be an object, not a string", 1),
        (req(id=1, error=None), "'error' must be an object, not null", 1),
        (req(id=1, error={"message": "m"}), "'error.code' is missing", 1),
        (req(id=1, error={"code": "1", "message": "m"}), "'error.code' must be an integer", 1),
        (req(id=1, error={"code": 1.5, "message": "m"}), "not a number with a fraction", 1),
        (req(id=1, error={"code": True, "message": "m"}), "not a boolean", 1),
        (req(id=1, error={"code": None, "message": "m"}), "'error.code' must be an integer", 1),
        (req(id=1, error={"code": 1}), "'error.message' is missing", 1),
        (req(id=1, error={"code": 1, "message": 5}), "'error.message' must be a string", 1),
        (req(id=1, error={"code": 1, "message": None}), "not null", 1),
    ],
)
def test_invalid_response(obj: dict[str, Any], fragment: str, read_id: int | str | None) -> None:
    result = bad(line(obj))
    assert result.code == INVALID
    assert result.message.startswith("Invalid response: ")
    assert fragment in result.message
    assert result.reply is None  # the peer expects no answer to a response
    assert result.id == read_id


# -- batches ---------------------------------------------------------------------------


def test_batch_not_allowed() -> None:
    data = line([req(id=1, method="m"), req(method="n")])
    result = bad(data)
    assert result.code == INVALID
    assert "batches" in result.message
    assert result.reply == ErrorResponse(id=None, code=INVALID, message=result.message)


def test_empty_array_not_allowed_either() -> None:
    result = bad(b"[]")
    assert "batches" in result.message


def test_empty_batch() -> None:
    result = bad(b"[ ]", allow_batch=True)
    assert result.code == INVALID
    assert "empty batch" in result.message
    assert result.reply == ErrorResponse(id=None, code=INVALID, message=result.message)


def test_batch_members_in_order() -> None:
    members = [
        req(id=1, method="a"),
        req(method="b", params={"x": 1}),
        1,
        req(id="z", result={}),
        req(id=2, method=3),
        req(id=9, result=[]),
    ]
    result = decode(line(members), allow_batch=True)
    assert isinstance(result, list)
    assert len(result) == 6
    assert result[0] == Request(id=1, method="a")
    assert result[1] == Notification(method="b", params={"x": 1})
    assert isinstance(result[2], InvalidMessage)
    assert result[2].reply is not None
    assert result[2].reply.id is None
    assert result[2].raw == b"1"
    assert result[3] == Response(id="z", result={})
    assert isinstance(result[4], InvalidMessage)
    assert result[4].reply is not None
    assert result[4].reply.id == 2
    assert result[4].raw == line(members[4])
    assert isinstance(result[5], InvalidMessage)
    assert result[5].reply is None


def test_batch_of_one() -> None:
    assert decode(line([req(id=1, method="a")]), allow_batch=True) == [Request(id=1, method="a")]


def test_batch_member_too_deep_to_reencode() -> None:
    result = decode(b"[" + nested(300) + b"]", allow_batch=True)
    assert isinstance(result, list)
    assert len(result) == 1
    member = result[0]
    assert isinstance(member, InvalidMessage)
    assert member.message == "Invalid request: a JSON-RPC message must be an object, not an array"
    assert member.raw == b""


def test_nested_batch_is_not_a_batch() -> None:
    result = decode(b"[[]]", allow_batch=True)
    assert isinstance(result, list)
    assert isinstance(result[0], InvalidMessage)
    assert "not an array" in result[0].message


# -- invalid() -------------------------------------------------------------------------


def test_invalid_helper() -> None:
    with_reply = invalid(INVALID, "m", b"x" * 2000, reply=True, id="7")
    assert with_reply.reply == ErrorResponse(id="7", code=INVALID, message="m")
    assert with_reply.id == "7"
    assert with_reply.raw == b"x" * 1024
    without = invalid(PARSE, "m", b"", reply=False)
    assert without.reply is None
    assert without.id is None


# -- encoding --------------------------------------------------------------------------

MESSAGES: list[Message] = [
    Request(id=1, method="tools/call", params={"name": "echo", "arguments": {"text": "hi"}}),
    Request(id="r-1", method="ping"),
    Request(id=U64_MAX, method="m"),
    Request(id=I64_MIN, method="m", params={}),
    Notification(method="notifications/initialized"),
    Notification(method="notifications/progress", params={"progress": 0.5, "total": 1}),
    Response(id=1, result={}),
    Response(id="x", result={"content": [{"type": "text", "text": "line 1\nline 2\r\n"}]}),
    ErrorResponse(id=2, code=-32601, message="Method not found"),
    ErrorResponse(id=None, code=-32700, message="Parse error", data=None),
    ErrorResponse(id="e", code=-32602, message="bad", data={"field": "x"}),
    ErrorResponse(id="e", code=-32602, message="bad", data=OMITTED),
]


@pytest.mark.parametrize("message", MESSAGES)
def test_encode_one_compact_line(message: Message) -> None:
    data = encode(message)
    assert data.endswith(b"\n")
    assert data.count(b"\n") == 1
    assert b"\r" not in data
    # Compact: exactly orjson's output for the same dict, which has no spaces.
    assert data == orjson.dumps(message_to_dict(message)) + b"\n"
    assert orjson.loads(data)["jsonrpc"] == "2.0"


@pytest.mark.parametrize("message", MESSAGES)
def test_encode_round_trips_through_decode(message: Message) -> None:
    assert decode(encode(message)) == message
    assert decode(encode(message).rstrip(b"\n")) == message


def test_message_to_dict() -> None:
    assert message_to_dict(Request(id=1, method="m")) == {"jsonrpc": "2.0", "id": 1, "method": "m"}
    assert message_to_dict(Request(id=1, method="m", params={})) == {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "m",
        "params": {},
    }
    assert message_to_dict(Notification(method="n", params={"a": 1})) == {
        "jsonrpc": "2.0",
        "method": "n",
        "params": {"a": 1},
    }
    assert message_to_dict(Response(id="i", result={"k": None})) == {
        "jsonrpc": "2.0",
        "id": "i",
        "result": {"k": None},
    }


def test_error_data_omitted_vs_null_on_the_wire() -> None:
    absent = orjson.loads(encode(ErrorResponse(id=1, code=1, message="m")))
    null = orjson.loads(encode(ErrorResponse(id=1, code=1, message="m", data=None)))
    assert absent["error"] == {"code": 1, "message": "m"}
    assert null["error"] == {"code": 1, "message": "m", "data": None}


def test_error_response_to_null_id() -> None:
    assert orjson.loads(encode(ErrorResponse(id=None, code=1, message="m")))["id"] is None


def test_encode_batch() -> None:
    members: list[Message] = [Request(id=1, method="a"), Notification(method="b")]
    data = encode_batch(members)
    assert data.endswith(b"\n")
    assert data.count(b"\n") == 1
    assert data.startswith(b"[")
    assert decode(data, allow_batch=True) == members


@pytest.mark.parametrize(
    "message",
    [
        Request(id=2**64, method="m"),  # beyond 64 bits
        Response(id=1, result={1: "non-string key"}),
        Response(id=1, result={"x": object()}),
        Response(id=1, result={"x": b"bytes"}),
    ],
)
def test_encode_rejects_what_is_not_json(message: Message) -> None:
    with pytest.raises(TypeError):
        encode(message)
    with pytest.raises(TypeError):
        encode_batch([message])


# -- properties ------------------------------------------------------------------------

# JSON integers as the parser returns them and the encoder accepts them (64-bit).
json_ints = st.integers(min_value=I64_MIN, max_value=U64_MAX)
json_scalars = (
    st.none()
    | st.booleans()
    | json_ints
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20)
)
json_values = st.recursive(
    json_scalars,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=20,
)
ids = json_ints | st.text(max_size=10)
envelope_values = {
    "jsonrpc": st.just("2.0") | json_values,
    "id": ids | json_values,
    "method": st.sampled_from(["tools/call", "ping", "notifications/progress"]) | json_values,
    "params": st.dictionaries(st.text(max_size=8), json_values, max_size=3) | json_values,
    "result": st.dictionaries(st.text(max_size=8), json_values, max_size=3) | json_values,
    "error": st.fixed_dictionaries(
        {},
        optional={"code": json_ints | json_values, "message": st.text() | json_values},
    )
    | json_values,
}
envelopes = st.fixed_dictionaries(
    {},
    optional=envelope_values,
)


def check_decoded(result: Message | InvalidMessage, data: bytes) -> None:
    """What any single decoded item must satisfy."""
    if isinstance(result, InvalidMessage):
        assert result.code in (PARSE, INVALID)
        assert result.message.startswith(
            ("Parse error: ", "Invalid request: ", "Invalid response: ")
        )
        if result.reply is not None:
            assert result.reply.code == result.code
            assert result.reply.message == result.message
            assert result.reply.id is None or type(result.reply.id) in (int, str)
        else:
            assert result.message.startswith("Invalid response: ")
        assert len(result.raw) <= 1024
        return
    # A valid message re-encodes to one line that decodes to the same message.
    again = encode(result)
    assert again.count(b"\n") == 1
    assert decode(again) == result


@given(data=st.binary(max_size=200), allow_batch=st.booleans())
def test_fuzz_arbitrary_bytes_never_raise(data: bytes, allow_batch: bool) -> None:
    result = decode(data, allow_batch=allow_batch)
    for item in result if isinstance(result, list) else [result]:
        check_decoded(item, data)


@given(value=json_values, allow_batch=st.booleans())
def test_fuzz_arbitrary_json_never_raises(value: Any, allow_batch: bool) -> None:
    data = orjson.dumps(value)
    result = decode(data, allow_batch=allow_batch)
    for item in result if isinstance(result, list) else [result]:
        check_decoded(item, data)
        if isinstance(item, InvalidMessage):
            assert item.code == INVALID  # valid JSON is never a parse error


@given(obj=envelopes)
def test_fuzz_envelopes(obj: dict[str, Any]) -> None:
    data = orjson.dumps(obj)
    result = one(data)
    check_decoded(result, data)
    id_ok = type(obj.get("id")) in (int, str)
    if isinstance(result, InvalidMessage) and result.reply is not None and id_ok:
        # A request whose id could be read is answered under that id.
        assert result.reply.id == obj["id"]
    if isinstance(result, Request):
        assert result.id == obj["id"]
        assert type(result.id) is type(obj["id"])


@given(batch=st.lists(envelopes, max_size=5))
def test_fuzz_batches(batch: list[dict[str, Any]]) -> None:
    data = orjson.dumps(batch)
    result = decode(data, allow_batch=True)
    if not batch:
        assert isinstance(result, InvalidMessage)
        return
    assert isinstance(result, list)
    assert len(result) == len(batch)
    for item in result:
        check_decoded(item, data)


@given(
    method=st.text(),
    text=st.text(),
    rid=ids,
)
def test_fuzz_encode_is_one_line(method: str, text: str, rid: int | str) -> None:
    for message in (
        Request(id=rid, method=method, params={text: text}),
        Notification(method=method, params={"t": [text]}),
        Response(id=rid, result={"text": text}),
        ErrorResponse(id=rid, code=-1, message=text, data=text),
    ):
        data = encode(message)
        assert data.endswith(b"\n")
        assert data.count(b"\n") == 1
        assert decode(data) == message


def test_non_finite_numbers_are_no_json_at_any_depth() -> None:
    """NaN and the infinities raise TypeError wherever they are: in lists, tuples and typed
    objects too; a real null does not."""
    from mcp_sansio.types import v2025_11_25 as mcp

    for value in ([1, [2, float("nan")]], (1.0, float("-inf")), {"a": {"b": float("inf")}}):
        with pytest.raises(TypeError, match="NaN and Infinity"):
            encode(Response(id=1, result={"v": value}))
    typed = mcp.ProgressNotificationParams(progress_token="p", progress=float("nan"))
    with pytest.raises(TypeError, match="NaN and Infinity"):
        encode(Notification(method="notifications/progress", params=typed))
    assert encode(Response(id=1, result={"v": None, "w": [None, 1.5]})) == (
        b'{"jsonrpc":"2.0","id":1,"result":{"v":null,"w":[null,1.5]}}\n'
    )
    # What orjson writes natively (a datetime) is left to it.
    when = datetime.datetime(2026, 11, 29, tzinfo=datetime.timezone.utc)
    assert encode(Response(id=1, result={"when": when, "v": None})) == (
        b'{"jsonrpc":"2.0","id":1,"result":{"when":"2026-11-29T00:00:00+00:00","v":null}}\n'
    )


@pytest.mark.parametrize(
    "result",
    [
        {"text": "x" * 10_000, "v": float("nan")},  # large, few values: found by the walk
        {"v": [*range(2_000), float("inf")]},  # many values: the walk gives up, the scan finds
    ],
    ids=["few-values", "many-values"],
)
def test_large_messages_are_checked_too(result: dict[str, Any]) -> None:
    with pytest.raises(TypeError, match="NaN and Infinity"):
        encode(Response(id=1, result=result))


@pytest.mark.parametrize(
    "result",
    [{"text": "x" * 10_000, "v": None}, {"v": [*range(2_000), None]}, {"v": list(range(2_000))}],
    ids=["few-values-null", "many-values-null", "many-values"],
)
def test_large_messages_without_non_finite_numbers_pass(result: dict[str, Any]) -> None:
    assert orjson.loads(encode(Response(id=1, result=result)))["result"] == result


# ---------------------------------------------------------------------- sniff


_IDS = st.one_of(st.integers(-(2**63), 2**64 - 1), st.text(max_size=40))
_BIG = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-(2**63), 2**63 - 1), st.text(max_size=30)),
    lambda inner: st.one_of(
        st.lists(inner, max_size=6), st.dictionaries(st.text(max_size=8), inner, max_size=6)
    ),
    max_leaves=60,
)


def _ends(members: list[tuple[str, Any]], indent: bool) -> tuple[bytes, bytes]:
    option = orjson.OPT_INDENT_2 if indent else 0
    # orjson keeps a dict's order: the members are written in the order drawn.
    line = orjson.dumps(dict(members), option=option)
    return line[:1024], line[-1024:]


@given(
    rid=_IDS,
    big=_BIG,
    pad=st.integers(0, 3000),
    order=st.permutations(["jsonrpc", "id", "result"]),
    indent=st.booleans(),
    error=st.booleans(),
)
def test_sniff_reads_a_response_whose_id_is_before_or_after_its_result(
    rid: Any, big: Any, pad: int, order: list[str], indent: bool, error: bool
) -> None:
    value: Any = (
        {"code": -1, "message": "x" * pad, "data": big} if error else {"v": big, "p": "x" * pad}
    )
    members = {"jsonrpc": "2.0", "id": rid, "result": value}
    key = "error" if error else "result"
    head, tail = _ends([(key if k == "result" else k, members[k]) for k in order], indent)
    kind, got = sniff(head, tail)
    assert kind == "response"
    assert got == rid
    assert type(got) is type(rid)


@given(rid=_IDS, big=_BIG, pad=st.integers(0, 3000), id_first=st.booleans())
def test_sniff_reads_a_request(rid: Any, big: Any, pad: int, id_first: bool) -> None:
    params = {"name": "x" * pad, "arguments": big}
    order = (
        ["jsonrpc", "id", "method", "params"] if id_first else ["method", "params", "jsonrpc", "id"]
    )
    members = {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}
    assert sniff(*_ends([(k, members[k]) for k in order], False)) == ("request", rid)


@pytest.mark.parametrize(
    ("head", "tail"),
    [
        (b"", b""),
        (b"y" * 1024, b"y" * 1024),
        (b'{"jsonrpc":"2.0","method":"notifications/progress","params":{"x":"', b'"}}'),
        (b'{"id":1.5,"result":{', b"}}"),
        (b'{"id":true,"method":"ping","params":{', b"}}"),
        (b'{"id":18446744073709551616,"result":{', b"}}"),
        (b'["', b'"]'),
        (b'{"result":{"id":3,"x":"', b'"}}'),  # an id inside the result is not the message's
    ],
)
def test_sniff_does_not_guess(head: bytes, tail: bytes) -> None:
    kind, rid = sniff(head, tail)
    assert rid is None
    assert kind in (None, "response")


@given(head=st.binary(max_size=300), tail=st.binary(max_size=300))
def test_sniff_never_raises(head: bytes, tail: bytes) -> None:
    kind, rid = sniff(head, tail)
    assert kind in (None, "request", "response")
    assert rid is None or type(rid) in (int, str)
