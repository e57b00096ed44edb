"""RequestStateSeal: authenticated, expiring, bound request state (2026-07-28)."""

from __future__ import annotations

import math
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from mcp_sansio import RequestStateSeal, ValidationError
from mcp_sansio._request_state import MAX_SEALED_DEPTH, MAX_SEALED_LENGTH

KEY = b"k" * 32
PARAMS: dict[str, Any] = {"name": "book", "arguments": {"city": "Oslo"}}


def seal(data: Any = None, **kw: Any) -> str:
    args: dict[str, Any] = {"method": "tools/call", "params": PARAMS, "now": 1000.0}
    args.update(kw)
    return RequestStateSeal(KEY).seal({"step": 2} if data is None else data, **args)


def open_(token: object, seal_obj: RequestStateSeal | None = None, **kw: Any) -> Any:
    args: dict[str, Any] = {"method": "tools/call", "params": PARAMS, "now": 1001.0}
    args.update(kw)
    return (seal_obj or RequestStateSeal(KEY)).open(token, **args)


def test_round_trip_ignores_meta_and_retry_fields() -> None:
    token = seal()
    retry = {**PARAMS, "_meta": {"x": 1}, "inputResponses": {"a": {}}, "requestState": token}
    assert open_(token, params=retry) == {"step": 2}


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"method": "prompts/get"}, "another request"),
        ({"params": {"name": "book", "arguments": {"city": "Rome"}}}, "another request"),
        ({"params": {"name": "other", "arguments": {"city": "Oslo"}}}, "another request"),
        ({"now": 1000.0 + 601}, "expired"),
        ({"principal": "mallory"}, "another principal"),
    ],
)
def test_bound_and_expiring(change: dict[str, Any], reason: str) -> None:
    with pytest.raises(ValidationError, match=reason) as info:
        open_(seal(), **change)
    assert info.value.path == "/params/requestState"


def test_principal_binding() -> None:
    token = seal(principal="alice")
    assert open_(token, principal="alice") == {"step": 2}
    with pytest.raises(ValidationError):
        open_(token)


def test_key_rotation() -> None:
    old = seal()
    rotated = RequestStateSeal([b"n" * 32, KEY])
    assert open_(old, rotated) == {"step": 2}
    with pytest.raises(ValidationError, match="authentication"):
        open_(old, RequestStateSeal(b"n" * 32))


@pytest.mark.parametrize(
    "token", [None, 5, "", ".", "abc", "a.b.c", "é.é", "x" * 70000, seal() + "A", "A" + seal()]
)
def test_garbage_is_rejected(token: object) -> None:
    with pytest.raises(ValidationError):
        open_(token)


def test_bad_configuration() -> None:
    with pytest.raises(ValueError, match="32"):
        RequestStateSeal(b"short")
    with pytest.raises(ValueError, match="at least one"):
        RequestStateSeal([])
    with pytest.raises(ValueError, match="ttl"):
        RequestStateSeal(KEY, ttl=0)


@given(st.text(max_size=300))
def test_any_text_is_rejected_cleanly(token: str) -> None:
    with pytest.raises(ValidationError):
        open_(token)


@given(st.integers(min_value=0, max_value=400), st.integers(min_value=0, max_value=60))
def test_tampering_one_character_fails(position: int, shift: int) -> None:
    """Every character counts: before, a change in the spare bits of a part's last
    character decoded to the same bytes and opened."""
    token = seal()
    index = position % len(token)
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_."
    replacement = alphabet[(alphabet.index(token[index]) + 1 + shift) % len(alphabet)]
    tampered = token[:index] + replacement + token[index + 1 :]
    assert tampered != token
    with pytest.raises(ValidationError) as info:
        open_(tampered)
    assert info.value.path == "/params/requestState"


# ---------------------------------------------------------------------- what is issued opens

_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**64 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)
_METHODS = st.sampled_from(["tools/call", "prompts/get", "resources/read"])


def seal_or_refusal(sealer: RequestStateSeal, data: Any, **kw: Any) -> str | ValidationError:
    """What :meth:`RequestStateSeal.seal` returns, or the documented error it raised."""
    try:
        return sealer.seal(data, **kw)
    except ValidationError as exc:
        return exc


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=_JSON,
    params=st.dictionaries(st.text(), _JSON, max_size=4),
    method=_METHODS,
    principal=st.none() | st.text(max_size=8),
    max_length=st.integers(min_value=150, max_value=2000),
)
def test_what_seal_returns_open_accepts(
    data: Any, params: dict[str, Any], method: str, principal: str | None, max_length: int
) -> None:
    """Any JSON data and params: :meth:`seal` gives a state of at most ``max_length``
    characters that :meth:`open` accepts, or refuses at once with the documented error."""
    sealer = RequestStateSeal(KEY, max_length=max_length)
    kw: dict[str, Any] = {"method": method, "params": params, "principal": principal}
    token = seal_or_refusal(sealer, data, now=5.0, **kw)
    if isinstance(token, ValidationError):
        assert token.path == "/params/inputResponses"
        assert "too large" in token.reason
        return
    assert len(token) <= max_length
    assert sealer.open(token, now=5.0 + 600, **kw) == orjson.loads(orjson.dumps(data))


def test_the_length_bound_is_exact() -> None:
    """The length :meth:`seal` checks is the length it returns: a state exactly at the
    bound is issued and opens; one character more is refused when sealing."""
    size = len(seal(""))
    for extra in range(4):  # each length modulo 3 of the payload
        exact = RequestStateSeal(KEY, max_length=size + extra)
        for grow in range(4):
            token = seal_or_refusal(
                exact, "x" * grow, method="tools/call", params=PARAMS, now=1000.0
            )
            if isinstance(token, ValidationError):
                assert f"more than {size + extra}" in token.reason
                continue
            assert len(token) <= size + extra
            assert open_(token, exact) == "x" * grow


def test_the_default_holds_an_answer_of_one_and_a_half_megabytes() -> None:
    """Before, :meth:`open` refused any state over 65,536 characters, that is data of about
    48 KB, though :meth:`seal` issued them."""
    assert MAX_SEALED_LENGTH == 2 * 1024 * 1024
    answer = {"elicitation-0": {"action": "accept", "content": {"text": "é" * 780_000}}}
    token = seal(answer)
    assert 2_000_000 < len(token) <= MAX_SEALED_LENGTH
    assert open_(token) == answer
    with pytest.raises(ValidationError, match="more than 2097152") as info:
        seal({"text": "x" * 1_600_000})
    assert info.value.path == "/params/inputResponses"


def _alterations(token: str, index: int, char: str) -> list[str]:
    return [
        token[:index] + char + token[index + 1 :],  # one character replaced
        token[:index] + char + token[index:],  # one inserted
        token[:index] + token[index + 1 :],  # one removed
        token[:index],  # truncated
        token + char,  # extended
        char + token,
    ]


@settings(max_examples=300)
@given(
    data=_JSON,
    position=st.integers(min_value=0, max_value=10_000),
    char=st.sampled_from("=.+/-_ \n\tA0é\x00") | st.characters(),
)
def test_any_alteration_of_a_state_is_refused(data: Any, position: int, char: str) -> None:
    """A state opens only as the exact string issued: a character replaced, inserted or
    removed, the state truncated or extended, is refused with the documented error (before,
    padding, characters outside the alphabet and spare bits decoded to the same bytes)."""
    token = seal(data)
    index = position % len(token)
    for altered in _alterations(token, index, char):
        assume(altered != token)
        with pytest.raises(ValidationError) as info:
            open_(altered)
        assert info.value.path == "/params/requestState"


@pytest.mark.parametrize(
    "altered",
    [
        lambda t: t.replace(".", "==."),  # padding
        lambda t: t + "=",
        lambda t: t.replace(".", "\n."),  # a character outside the alphabet
        lambda t: t.replace("-", "+").replace("_", "/"),  # the other base64 alphabet
        lambda t: t[:10] + " " + t[10:],
    ],
)
def test_other_encodings_of_the_same_bytes_are_refused(altered: Any) -> None:
    token = seal({"x": "-_-_" * 40, "y": "\u00ff" * 20})
    other = altered(token)
    assert other != token
    with pytest.raises(ValidationError, match="not a sealed request state"):
        open_(other)


# ---------------------------------------------------------------------- nesting


def _nested(depth: int) -> Any:
    """``depth`` levels of objects and arrays (a scalar is 0 deep)."""
    value: Any = 0
    for level in range(depth):
        value = [value] if level % 2 else {"a": value}
    return value


def test_data_nested_to_the_bound_seals_and_opens() -> None:
    assert MAX_SEALED_DEPTH == 253
    data = _nested(MAX_SEALED_DEPTH)
    assert open_(seal(data)) == data
    with pytest.raises(ValidationError, match="253 levels") as info:
        seal(_nested(MAX_SEALED_DEPTH + 1))
    assert info.value.path == "/params/inputResponses"


def test_params_nested_to_the_bound_seal_and_open() -> None:
    """The params object counts as one level. Before, deeper params raised ``TypeError``
    from both :meth:`seal` and :meth:`open`."""
    params = {"arguments": _nested(MAX_SEALED_DEPTH - 1)}
    assert open_(seal(params=params), params=params) == {"step": 2}
    deeper = {"arguments": _nested(MAX_SEALED_DEPTH)}
    with pytest.raises(ValidationError, match="253 levels") as info:
        seal(params=deeper)
    assert info.value.path == "/params"
    with pytest.raises(ValidationError, match="another request") as info:
        open_(seal(), params=deeper)
    assert info.value.path == "/params/requestState"


@pytest.mark.parametrize("data", [{1: 2}, {"big": 2**64}, {"obj": object()}, math.inf])
def test_data_that_is_not_json_is_refused_or_written_as_json(data: Any) -> None:
    """What orjson cannot write is refused when sealing, with the documented error (it
    writes an infinity as ``null``)."""
    token = seal_or_refusal(
        RequestStateSeal(KEY), data, method="tools/call", params=PARAMS, now=1000.0
    )
    if isinstance(token, ValidationError):
        assert token.path == "/params/inputResponses"
        return
    assert open_(token) is None


def test_max_length_must_be_positive() -> None:
    with pytest.raises(ValueError, match="max_length"):
        RequestStateSeal(KEY, max_length=0)


# ---------------------------------------------------------------------- in a session


def test_a_session_without_state_clock_seals_and_opens_on_the_adapters_clock() -> None:
    """The default ``state_clock``: the ``now`` the adapter passes, to both the seal
    (:meth:`~mcp_sansio.session.ServerSession.finish`) and the open (``receive_data``)."""
    from mcp_sansio.server import Server
    from mcp_sansio.session import HandleJob, NeedInput, Send, ServerSession

    server = Server("s", "1")

    @server.tool("t", input_schema={"type": "object"})
    def tool(ctx: Any, arguments: Any) -> str:  # pragma: no cover - the test asks itself
        return ""

    session = ServerSession(server, versions=["2026-07-28"], state_ttl=60.0)
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
    }

    def request(rid: int, **extra: Any) -> bytes:
        params = {"name": "t", "arguments": {}, "_meta": meta, **extra}
        message = {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}
        return orjson.dumps(message) + b"\n"

    (action,) = session.receive_data(request(1), 100.0)
    assert isinstance(action, HandleJob)
    with pytest.raises(NeedInput) as need:
        session.ask(action.job, "elicitation/create", {"message": "?"}, 100.0)
    answer = orjson.loads(session.finish(action.job, error=need.value, now=100.0))
    state = answer["result"]["requestState"]
    (action,) = session.receive_data(request(2, requestState=state), 159.0)
    assert isinstance(action, HandleJob)
    session.finish(action.job, "done", now=159.0)
    (refused,) = session.receive_data(request(3, requestState=state), 161.0)
    assert isinstance(refused, Send)
    error = orjson.loads(refused.data)["error"]
    assert error["code"] == -32602
    assert "expired" in error["message"]
