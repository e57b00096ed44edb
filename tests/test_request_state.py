"""RequestStateSeal: authenticated, expiring, bound request state (2026-07-28)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcp_sansio import RequestStateSeal, ValidationError

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
    token = seal()
    index = position % len(token)
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_."
    replacement = alphabet[(alphabet.index(token[index]) + 1 + shift) % len(alphabet)]
    tampered = token[:index] + replacement + token[index + 1 :]
    if tampered == token:  # pragma: no cover - the shift always changes the character
        return
    try:
        result = open_(tampered)
    except ValidationError:
        return
    # Base64 padding bits can absorb a change in the last character of a part: then the
    # decoded bytes, and so the result, are the same as the original's.
    assert result == {"step": 2}
