"""Callback errors, the same in every runtime (docs/policy.rst, "Callback errors"): a client's
``on_progress`` or ``on_notification`` that raises, a client handler of the server's
requests that raises, against a scripted raw server whose every line is exact."""

from __future__ import annotations

import json
import traceback
from collections.abc import Mapping
from typing import Any

import pytest

from mcp_sansio.session import McpError

from ._peers import RawServer, Wire, error_log, result, text_result
from ._runtimes import Runtime, async_runtimes, runtimes


def progress(token: Any, value: float) -> dict[str, Any]:
    params = {"progressToken": token, "progress": value, "total": 10}
    return {"jsonrpc": "2.0", "method": "notifications/progress", "params": params}


def collect(wire: Wire, count: int) -> list[dict[str, Any]]:
    """The next ``count`` messages, in whatever order they come."""
    return [wire.recv() for _ in range(count)]


def answer_pings_until_eof(wire: Wire) -> list[dict[str, Any]]:
    """Answer the client's pings until it closes; return every other message."""
    others = []
    while (line := wire.line()) is not None:
        message = json.loads(line)
        if message.get("method") == "ping":
            wire.send(result(message, {}))
        else:
            others.append(message)
    return others


# ---------------------------------------------------------------------- on_progress


@runtimes()
def test_on_progress_raising_fails_the_call_with_that_exception(rt: Runtime) -> None:
    """The drift case of the issue: the call raises the callback's own exception (same
    object, its traceback kept), the request is cancelled at the peer with a reason naming
    ``ValueError``, later progress and the answer are dropped, the session goes on."""
    cancels: list[dict[str, Any]] = []

    def script(wire: Wire) -> None:
        wire.accept_initialize()
        call = wire.recv_method("tools/call")
        token = call["params"]["_meta"]["progressToken"]
        wire.send(progress(token, 1))
        cancels.append(wire.recv_method("notifications/cancelled"))
        cancels.append(call)
        wire.send(progress(token, 2), result(call, text_result("late")))
        assert answer_pings_until_eof(wire) == []

    raised: list[ValueError] = []

    def on_progress(params: Mapping[str, Any]) -> None:
        raised.append(ValueError("the callback's own bug"))
        raise raised[-1]

    async def scenario() -> None:
        async with rt.client(peer.path) as client:
            with pytest.raises(ValueError, match="the callback's own bug") as info:
                await client.call_tool("slow", on_progress=on_progress, timeout=3)
            assert info.value is raised[0]
            frames = [frame.name for frame in traceback.extract_tb(info.value.__traceback__)]
            assert "on_progress" in frames
            assert await client.ping() == {}
            await client.idle(0.1)
            assert len(raised) == 1  # the later progress was dropped

    with RawServer(script) as peer:
        rt.run(scenario)
    cancel, call = cancels
    assert cancel["params"]["requestId"] == call["id"]
    assert "ValueError" in cancel["params"]["reason"]


# ---------------------------------------------------------------------- on_notification


@runtimes()
def test_on_notification_raising_is_logged_once_and_the_session_goes_on(rt: Runtime) -> None:
    """Logged once at ERROR, with the traceback, on an ``mcp_sansio`` logger; nothing is
    sent to the peer; the next call works."""

    def script(wire: Wire) -> None:
        wire.accept_initialize({"tools": {}, "logging": {}})
        wire.send(
            {
                "jsonrpc": "2.0",
                "method": "notifications/message",
                "params": {"level": "error", "data": "first"},
            }
        )
        # the next thing the client sends is its call: nothing about the failed callback
        call = wire.recv_method("tools/call")
        wire.send(result(call, text_result("still here")))
        assert answer_pings_until_eof(wire) == []

    seen: list[Any] = []

    def on_notification(note: Any) -> None:
        seen.append(note)
        raise RuntimeError("notification callback bug")

    async def scenario() -> None:
        async with rt.client(peer.path, on_notification=on_notification) as client:
            await client.until(lambda: bool(seen))
            got = await client.call_tool("echo")
            assert got["content"][0]["text"] == "still here"

    with error_log() as log, RawServer(script) as peer:
        rt.run(scenario)
    assert [note.method for note in seen] == ["notifications/message"]
    [record] = log.wait(1)
    assert record.name.startswith("mcp_sansio"), record.name
    assert record.exc_info is not None
    assert isinstance(record.exc_info[1], RuntimeError)
    assert str(record.exc_info[1]) == "notification callback bug"
    assert len(log.records) == 1


@async_runtimes()
def test_an_async_on_notification_raising_is_logged_once_too(rt: Runtime) -> None:
    """The coroutine-function form of ``on_notification`` (asyncio, trio): the same row."""

    def script(wire: Wire) -> None:
        wire.accept_initialize({"tools": {}, "logging": {}})
        params = {"level": "error", "data": "first"}
        wire.send({"jsonrpc": "2.0", "method": "notifications/message", "params": params})
        call = wire.recv_method("tools/call")
        wire.send(result(call, text_result("still here")))
        assert answer_pings_until_eof(wire) == []

    seen: list[Any] = []

    async def on_notification(note: Any) -> None:
        seen.append(note)
        raise RuntimeError("async notification callback bug")

    async def scenario() -> None:
        async with rt.client(peer.path, on_notification=on_notification) as client:
            await client.until(lambda: bool(seen))
            got = await client.call_tool("echo")
            assert got["content"][0]["text"] == "still here"

    with error_log() as log, RawServer(script) as peer:
        rt.run(scenario)
    [record] = log.wait(1)
    assert record.exc_info is not None
    assert str(record.exc_info[1]) == "async notification callback bug"
    assert len(log.records) == 1


# ---------------------------------------------------------------------- client handlers

ASKS: dict[str, dict[str, Any]] = {
    "sampling/createMessage": {
        "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
        "maxTokens": 5,
    },
    "elicitation/create": {
        "message": "Your name?",
        "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}},
    },
    "roots/list": {},
}
CAPABILITY = {
    "sampling/createMessage": "sampling",
    "elicitation/create": "elicitation",
    "roots/list": "roots",
}


def _ask_script(method: str, answers: list[dict[str, Any]]) -> Any:
    def script(wire: Wire) -> None:
        params = wire.accept_initialize()
        assert CAPABILITY[method] in params["capabilities"], params
        wire.send({"jsonrpc": "2.0", "id": "ask-1", "method": method, "params": ASKS[method]})
        for message in collect(wire, 2):  # the answer, and the client's next call
            if message.get("method") == "tools/call":
                wire.send(result(message, text_result("next")))
            else:
                answers.append(message)
        assert answer_pings_until_eof(wire) == []

    return script


@runtimes()
@pytest.mark.parametrize("method", sorted(ASKS))
def test_a_client_handler_raising_answers_internal_error(rt: Runtime, method: str) -> None:
    """The server gets -32603 to its request, without the traceback; the exception is
    logged at ERROR with it; the session goes on."""
    answers: list[dict[str, Any]] = []
    called: list[Mapping[str, Any]] = []

    async def failing(ctx: Any, params: Mapping[str, Any]) -> Any:
        called.append(params)
        raise RuntimeError("handler detail")

    async def scenario() -> None:
        handlers = {method: rt.handler(failing)}
        async with rt.client(peer.path, handlers=handlers) as client:
            await client.until(lambda: bool(called))
            got = await client.call_tool("echo")
            assert got["content"][0]["text"] == "next"

    with error_log() as log, RawServer(_ask_script(method, answers)) as peer:
        rt.run(scenario)
    assert called == [ASKS[method]]
    [answer] = answers
    assert answer["id"] == "ask-1"
    assert answer["error"]["code"] == -32603, answer
    assert "Traceback" not in answer["error"]["message"]
    assert ".py" not in answer["error"]["message"]
    records = log.wait(1, timeout=1)
    assert len(records) == 1, records
    assert records[0].exc_info is not None
    assert isinstance(records[0].exc_info[1], RuntimeError)


@runtimes()
@pytest.mark.parametrize("method", sorted(ASKS))
def test_a_client_handler_raising_mcp_error_sends_that_error(rt: Runtime, method: str) -> None:
    """``McpError(code, message, data)`` raised by the handler is the error the server gets,
    exactly; nothing is logged at ERROR."""
    answers: list[dict[str, Any]] = []
    called: list[Mapping[str, Any]] = []

    async def refusing(ctx: Any, params: Mapping[str, Any]) -> Any:
        called.append(params)
        raise McpError(-32050, "the user said no", {"why": "test"})

    async def scenario() -> None:
        handlers = {method: rt.handler(refusing)}
        async with rt.client(peer.path, handlers=handlers) as client:
            await client.until(lambda: bool(called))
            got = await client.call_tool("echo")
            assert got["content"][0]["text"] == "next"

    with error_log() as log, RawServer(_ask_script(method, answers)) as peer:
        rt.run(scenario)
    assert answers == [
        {
            "jsonrpc": "2.0",
            "id": "ask-1",
            "error": {"code": -32050, "message": "the user said no", "data": {"why": "test"}},
        }
    ]
    assert log.records == []


class Stop(BaseException):
    """A ``BaseException`` that is not an ``Exception`` (as ``KeyboardInterrupt``)."""


@runtimes()
def test_a_base_exception_from_on_progress_is_never_swallowed(rt: Runtime) -> None:
    """It comes out of the call (and of the runtime's run) as it is; the client closes."""

    def script(wire: Wire) -> None:
        wire.accept_initialize()
        call = wire.recv_method("tools/call")
        wire.send(progress(call["params"]["_meta"]["progressToken"], 1))
        wire.wait_eof()

    def on_progress(params: Mapping[str, Any]) -> None:
        raise Stop("stop now")

    async def scenario() -> None:
        async with rt.client(peer.path) as client:
            await client.call_tool("slow", on_progress=on_progress, timeout=3)

    with RawServer(script) as peer, pytest.raises(Stop, match="stop now"):
        rt.run(scenario)
