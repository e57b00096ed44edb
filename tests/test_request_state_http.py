"""``requestState`` through the HTTP server (2026-07-28 ``input_required`` rounds), in
process through :class:`~mcp_sansio.http.HttpServer`'s sans-IO API: the state expires on
the one clock that sealed it, any answer within the message bound survives a round, and
what cannot be sealed is answered with -32602."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import orjson
import pytest
from test_http_server import Client, modern

from mcp_sansio.http import HttpServer
from mcp_sansio.server import Server

CAPS: dict[str, Any] = {"elicitation": {}}
KEY = b"k" * 32


def build() -> Server:
    server = Server("state", "1.0")

    @server.tool("twice", input_schema={"type": "object"})
    def twice(ctx: Any, arguments: Mapping[str, Any]) -> str:
        _, first = ctx._ask("elicitation/create", ctx.elicitation_params("First?"))
        _, second = ctx._ask("elicitation/create", ctx.elicitation_params("Second?"))
        return f"{len(first['content']['text'])} {len(second['content']['text'])}"

    return server


class Clock:
    """The injected ``state_clock``: a wall clock the test moves."""

    def __init__(self) -> None:
        self.time = 1_700_000_000.0

    def __call__(self) -> float:
        return self.time


def call(client: Client, rid: int, arguments: Any = None, **extra: Any) -> dict[str, Any]:
    body, headers = modern("tools/call", rid, name="twice", arguments=arguments or {}, **extra)
    body["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] = CAPS
    # json, not orjson: orjson writes at most 254 levels, and a peer may send more.
    reply = client.send(raw=json.dumps(body).encode(), headers=headers)
    answer: dict[str, Any] = reply.json()
    assert answer["id"] == rid, "the request is answered"
    assert reply.status == (400 if "error" in answer else 200), reply.body
    return answer


def accept(text: str) -> dict[str, Any]:
    return {"action": "accept", "content": {"text": text}}


def rounds(client: Client, first: str, second: str) -> dict[str, Any]:
    """Call ``twice`` and answer both rounds; the last answer."""
    state = call(client, 1)["result"]
    assert state["resultType"] == "input_required"
    ((key, _),) = state["inputRequests"].items()
    answer = call(
        client, 2, requestState=state["requestState"], inputResponses={key: accept(first)}
    )
    if "error" in answer:
        return answer
    state = answer["result"]
    assert state["resultType"] == "input_required"
    ((key, _),) = state["inputRequests"].items()
    return call(client, 3, requestState=state["requestState"], inputResponses={key: accept(second)})


def test_a_state_sealed_through_the_http_server_expires_after_its_ttl() -> None:
    """One clock seals and opens: before, the state was sealed on ``state_clock`` (the wall
    clock) and checked against the binding's monotonic ``now``, and never expired."""
    clock = Clock()
    client = Client(HttpServer(build(), state_keys=KEY, state_clock=clock, state_ttl=60.0))
    state = call(client, 1)["result"]
    ((key, _),) = state["inputRequests"].items()
    retry = {"requestState": state["requestState"], "inputResponses": {key: accept("a")}}
    clock.time += 59.0
    assert call(client, 2, **retry)["result"]["resultType"] == "input_required"
    clock.time += 2.0
    error = call(client, 3, **retry)["error"]
    assert error["code"] == -32602
    assert "expired" in error["message"]


@pytest.mark.parametrize("size", [49_000, 100_000, 1_500_000])
def test_a_large_answer_survives_a_round(size: int) -> None:
    """Before, a state over 65,536 characters was sealed but refused on the retry: an
    answer of 48,929 characters or more failed the next round. Now the bound is half of
    ``max_message_size``: at the default 4 MiB, answers up to 1,572,640 characters."""
    client = Client(HttpServer(build(), state_keys=KEY))
    answer = rounds(client, "x" * size, "y")
    assert answer["result"]["content"][0]["text"] == f"{size} 1"


def test_an_answer_too_large_to_seal_is_answered_with_32602() -> None:
    """Past the bound (half of ``max_message_size``) the request gets -32602 at once."""
    client = Client(HttpServer(build(), state_keys=KEY, max_message_size=200_000))
    error = rounds(client, "x" * 90_000, "y")["error"]
    assert error["code"] == -32602
    assert "too large to carry into another round" in error["message"]
    assert "more than 100000" in error["message"]


def _nested(depth: int) -> Any:
    value: Any = "leaf"
    for _ in range(depth):
        value = [value]
    return value


def test_arguments_too_deep_to_seal_are_answered_with_32602() -> None:
    """Before, the seal raised ``TypeError`` out of ``finish`` and the request was never
    answered."""
    client = Client(HttpServer(build(), state_keys=KEY))
    error = call(client, 1, {"deep": _nested(300)})["error"]
    assert error["code"] == -32602
    assert "/params" in error["message"]
    assert "253 levels" in error["message"]


def test_a_state_retried_with_arguments_too_deep_is_refused_with_32602() -> None:
    """Before, opening the state raised ``TypeError`` and the request was never answered."""
    client = Client(HttpServer(build(), state_keys=KEY))
    state = call(client, 1)["result"]["requestState"]
    error = call(client, 2, {"deep": _nested(300)}, requestState=state)["error"]
    assert error["code"] == -32602
    assert "another request" in error["message"]


def test_answers_too_deep_to_seal_are_answered_with_32602() -> None:
    client = Client(HttpServer(build(), state_keys=KEY))
    state = call(client, 1)["result"]
    ((key, _),) = state["inputRequests"].items()
    deep = {"action": "accept", "content": {"text": "a"}, "more": _nested(260)}
    error = call(client, 2, requestState=state["requestState"], inputResponses={key: deep})
    assert error["error"]["code"] == -32602
    assert "/params/inputResponses" in error["error"]["message"]
    assert orjson.dumps(error)  # an ordinary answer
