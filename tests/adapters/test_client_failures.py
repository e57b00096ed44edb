"""A client of each runtime against a scripted raw server (docs/policy.rst, "Timeouts and
cancellation", "Peer death, garbage, big messages", "Shutdown"): timeouts and
``reset_on_progress``, the caller's cancellation, the server's death mid-call (EOF, a close,
a close mid-line, a process exit), garbage lines, the unreadable bound, an answer over
``max_message_size``, closing with a call in flight."""

from __future__ import annotations

import json
import re
import sys
import textwrap
import time
from collections.abc import Callable
from typing import Any

import pytest

from mcp_sansio.session import ConnectionLost, McpError, RequestTimeout

from ._peers import RawServer, Wire, result, text_result
from ._runtimes import Face, Runtime, async_runtimes, runtimes


def progress(token: Any, value: float) -> dict[str, Any]:
    params = {"progressToken": token, "progress": value}
    return {"jsonrpc": "2.0", "method": "notifications/progress", "params": params}


def rest(wire: Wire) -> list[dict[str, Any]]:
    """Answer pings until EOF; return the other messages."""
    others = []
    while (line := wire.line()) is not None:
        message = json.loads(line)
        if message.get("method") == "ping":
            wire.send(result(message, {}))
        else:
            others.append(message)
    return others


# ---------------------------------------------------------------------- timeouts


@runtimes()
def test_a_timeout_raises_request_timeout_and_cancels_at_the_peer(rt: Runtime) -> None:
    seen: list[dict[str, Any]] = []

    def script(wire: Wire) -> None:
        wire.accept_initialize()
        call = wire.recv_method("tools/call")
        seen.append(wire.recv_method("notifications/cancelled"))
        seen.append(call)
        wire.send(result(call, text_result("too late")))  # dropped
        assert rest(wire) == []

    async def scenario() -> float:
        async with rt.client(peer.path) as client:
            started = time.monotonic()
            with pytest.raises(RequestTimeout) as info:
                await client.call_tool("slow", timeout=0.3)
            elapsed = time.monotonic() - started
            assert info.value.code == -32001
            assert await client.ping() == {}  # the session goes on
            return elapsed

    with RawServer(script) as peer:
        elapsed = rt.run(scenario)
    assert 0.3 <= elapsed < 3, elapsed
    cancel, call = seen
    assert cancel["params"]["requestId"] == call["id"]


@runtimes()
def test_reset_on_progress_restarts_the_timeout(rt: Runtime) -> None:
    """Progress every 0.15 s for 0.9 s keeps a 0.6 s timeout from expiring."""

    def script(wire: Wire) -> None:
        wire.accept_initialize()
        call = wire.recv_method("tools/call")
        token = call["params"]["_meta"]["progressToken"]
        for step in range(6):
            time.sleep(0.15)
            wire.send(progress(token, step))
        wire.send(result(call, text_result("done")))
        assert rest(wire) == []

    steps: list[Any] = []

    async def scenario() -> float:
        async with rt.client(peer.path) as client:
            started = time.monotonic()
            got = await client.call_tool(
                "slow", timeout=0.6, reset_on_progress=True, on_progress=steps.append
            )
            assert got == text_result("done")
            return time.monotonic() - started

    with RawServer(script) as peer:
        elapsed = rt.run(scenario)
    assert elapsed >= 0.8, elapsed
    assert [p["progress"] for p in steps] == list(range(6))


@runtimes()
def test_reset_on_progress_stops_at_max_timeout(rt: Runtime) -> None:
    """Progress every 0.1 s for ever, a 0.3 s timeout reset by each, ``max_timeout=0.8``:
    RequestTimeout after 0.8 s, and the request is cancelled at the peer."""
    seen: list[dict[str, Any]] = []

    def script(wire: Wire) -> None:
        wire.accept_initialize()
        call = wire.recv_method("tools/call")
        token = call["params"]["_meta"]["progressToken"]
        step = 0
        while True:
            step += 1
            wire.send(progress(token, step))
            try:
                message = wire.recv(timeout=0.1)
            except AssertionError:
                continue
            seen.append(message)
            break
        assert rest(wire) == []

    async def scenario() -> float:
        async with rt.client(peer.path) as client:
            started = time.monotonic()
            with pytest.raises(RequestTimeout):
                await client.call_tool(
                    "slow",
                    timeout=0.3,
                    reset_on_progress=True,
                    max_timeout=0.8,
                    on_progress=lambda params: None,
                )
            return time.monotonic() - started

    with RawServer(script) as peer:
        elapsed = rt.run(scenario)
    assert 0.8 <= elapsed < 2.5, elapsed
    [cancel] = seen
    assert cancel["method"] == "notifications/cancelled", cancel
    assert cancel["params"]["requestId"] == 1


@runtimes()
def test_reset_on_progress_asks_for_progress_without_a_callback(rt: Runtime) -> None:
    """(Added by D.) ``reset_on_progress=True`` alone: the request carries a
    ``progressToken``, so the peer's progress can keep the call alive."""
    calls: list[dict[str, Any]] = []

    def script(wire: Wire) -> None:
        wire.accept_initialize()
        call = wire.recv_method("tools/call")
        calls.append(call)
        wire.send(result(call, text_result("done")))
        assert rest(wire) == []

    async def scenario() -> None:
        async with rt.client(peer.path) as client:
            got = await client.call_tool("slow", timeout=5, reset_on_progress=True)
            assert got == text_result("done")

    with RawServer(script) as peer:
        rt.run(scenario)
    [call] = calls
    assert "progressToken" in call["params"].get("_meta", {}), call


# ---------------------------------------------------------------------- the caller cancels


@async_runtimes()
def test_the_caller_cancelling_cancels_the_request_at_the_peer(rt: Runtime) -> None:
    """(The blocking runtime has no task to cancel: docs/policy.rst.)"""
    seen: list[dict[str, Any]] = []

    def script(wire: Wire) -> None:
        wire.accept_initialize()
        seen.append(wire.recv_method("tools/call"))
        seen.append(wire.recv_method("notifications/cancelled"))
        assert rest(wire) == []

    async def scenario() -> None:
        async with rt.client(peer.path) as client:
            assert await client.cancel_after(0.2, lambda: client.call_tool("slow"))
            assert await client.ping() == {}

    with RawServer(script) as peer:
        rt.run(scenario)
    call, cancel = seen
    assert cancel["params"]["requestId"] == call["id"]


# ---------------------------------------------------------------------- peer death


def _eof(wire: Wire) -> None:
    wire.shutdown_write()
    wire.wait_eof()


def _close_midline(wire: Wire) -> None:
    wire.send(b'{"jsonrpc":"2.0","id":1,"res')
    wire.close()


ENDINGS: dict[str, Callable[[Wire], Any]] = {
    "eof": _eof,
    "close": Wire.close,
    "close-midline": _close_midline,
}


async def _dies_mid_call(client: Face) -> None:
    started = time.monotonic()
    with pytest.raises(ConnectionLost) as info:
        await client.call_tool("slow")
    assert info.value.code == -32000
    assert time.monotonic() - started < 3
    started = time.monotonic()
    with pytest.raises(ConnectionLost):  # at once, later
        await client.call_tool("slow")
    assert time.monotonic() - started < 0.5
    assert client.closed


@runtimes()
@pytest.mark.parametrize("ending", sorted(ENDINGS))
def test_the_server_dying_mid_call_is_connection_lost(rt: Runtime, ending: str) -> None:
    def script(wire: Wire) -> None:
        wire.accept_initialize()
        wire.recv_method("tools/call")
        ENDINGS[ending](wire)

    async def scenario() -> None:
        async with rt.client(peer.path) as client:
            await _dies_mid_call(client)

    with RawServer(script) as peer:
        rt.run(scenario)


DYING_SERVER = textwrap.dedent(
    """
    import json, os, sys
    def read():
        return json.loads(sys.stdin.buffer.readline())
    def send(obj):
        sys.stdout.buffer.write(json.dumps(obj).encode() + b"\\n")
        sys.stdout.buffer.flush()
    init = read()
    send({"jsonrpc": "2.0", "id": init["id"], "result": {"protocolVersion": "2025-11-25",
          "capabilities": {"tools": {}}, "serverInfo": {"name": "dying", "version": "1"}}})
    read()
    read()
    os._exit(3)
    """
)


@runtimes()
def test_the_server_process_exiting_mid_call_is_connection_lost(rt: Runtime) -> None:
    async def scenario() -> Any:
        client = rt.module.Client.connect_stdio(
            [sys.executable, "-c", DYING_SERVER], versions=["2025-11-25"], timeout=10
        )
        if rt.is_async:
            async with client:
                await _dies_mid_call(Face(rt, client))
        else:
            with client:
                await _dies_mid_call(Face(rt, client))
        return client.process

    process = rt.run(scenario)
    assert process is not None
    assert process.returncode == 3


# ---------------------------------------------------------------------- garbage


@runtimes()
def test_garbage_lines_get_a_parse_error_and_the_session_goes_on(rt: Runtime) -> None:
    answers: list[dict[str, Any]] = []

    def script(wire: Wire) -> None:
        wire.accept_initialize()
        call = wire.recv_method("tools/call")
        wire.send(b"this is not JSON", b"{oops")
        answers.extend([wire.recv(), wire.recv()])
        wire.send(result(call, text_result("fine")))
        assert rest(wire) == []

    async def scenario() -> None:
        async with rt.client(peer.path) as client:
            assert await client.call_tool("echo") == text_result("fine")
            assert await client.ping() == {}

    with RawServer(script) as peer:
        rt.run(scenario)
    for answer in answers:
        assert answer["id"] is None
        assert answer["error"]["code"] == -32700


@runtimes()
def test_past_max_unreadable_the_connection_is_broken(rt: Runtime) -> None:
    answers: list[dict[str, Any]] = []

    def script(wire: Wire) -> None:
        wire.accept_initialize()
        wire.recv_method("tools/call")
        wire.send(*[f"garbage {i}".encode() for i in range(4)])
        answers.extend(wire.wait_eof())

    async def scenario() -> None:
        async with rt.client(peer.path, max_unreadable=4) as client:
            with pytest.raises(ConnectionLost, match="4 unreadable messages in a row"):
                await client.call_tool("echo")
            with pytest.raises(ConnectionLost):
                await client.ping()

    with RawServer(script) as peer:
        rt.run(scenario)
    assert len(answers) <= 4
    assert all(a["id"] is None and a["error"]["code"] == -32700 for a in answers), answers


# ---------------------------------------------------------------------- big messages


@runtimes()
def test_an_answer_over_max_message_size_fails_the_call_at_once(rt: Runtime) -> None:
    def script(wire: Wire) -> None:
        wire.accept_initialize()
        call = wire.recv_method("tools/call")
        wire.send(result(call, text_result("x" * 100_000)))
        call = wire.recv_method("tools/call")
        wire.send(result(call, text_result("small")))
        assert rest(wire) == []

    async def scenario() -> float:
        async with rt.client(peer.path, max_message_size=64 * 1024) as client:
            started = time.monotonic()
            with pytest.raises(McpError) as info:
                await client.call_tool("big", timeout=10)
            elapsed = time.monotonic() - started
            assert not isinstance(info.value, (RequestTimeout, ConnectionLost)), info.value
            assert info.value.code == -32600
            assert "max_message_size" in info.value.message
            assert "100" in info.value.message  # its size, 100,0xx bytes
            assert await client.call_tool("small") == text_result("small")
            return elapsed

    with RawServer(script) as peer:
        elapsed = rt.run(scenario)
    assert elapsed < 3, elapsed


# ---------------------------------------------------------------------- shutdown


@async_runtimes()
def test_closing_fails_the_calls_in_flight_with_connection_lost(rt: Runtime) -> None:
    """(A blocking client makes one call at a time: none is in flight when it closes.)"""

    def script(wire: Wire) -> None:
        wire.accept_initialize()
        wire.recv_method("tools/call")
        wire.wait_eof()

    async def scenario() -> None:
        outcome: list[Any] = []

        async def call(client: Face) -> None:
            try:
                outcome.append(await client.call_tool("slow"))
            except Exception as exc:
                outcome.append(exc)

        async with rt.background() as start, rt.client(peer.path) as client:
            start(lambda: call(client))
            await client.idle(0.2)
        [lost] = outcome
        assert isinstance(lost, ConnectionLost), lost
        assert lost.code == -32000

    with RawServer(script) as peer:
        rt.run(scenario)


@runtimes()
def test_a_call_on_a_closed_client_is_connection_lost(rt: Runtime) -> None:
    """(Added by D.) The client closed by its owner: a later call raises ConnectionLost at
    once, as after the peer's death, not another exception type."""

    def script(wire: Wire) -> None:
        wire.accept_initialize()
        assert rest(wire) == []

    async def scenario() -> None:
        async with rt.client(peer.path) as client:
            assert await client.ping() == {}
        started = time.monotonic()
        with pytest.raises(ConnectionLost) as info:
            await client.ping()
        assert info.value.code == -32000
        assert time.monotonic() - started < 0.5

    with RawServer(script) as peer:
        rt.run(scenario)


@async_runtimes()
def test_closing_cancels_the_clients_handlers(rt: Runtime) -> None:
    """A client handler of the server's request, running when the client closes, is
    cancelled (docs/policy.rst, "Shutdown"). (A blocking client's handler runs inside its call:
    the client cannot close meanwhile.)"""
    from .test_handlers import Probe, forever

    probe = Probe()

    def script(wire: Wire) -> None:
        wire.accept_initialize()
        wire.send({"jsonrpc": "2.0", "id": "r1", "method": "roots/list"})
        assert wire.wait_eof() == []

    async def scenario() -> None:
        handlers = {"roots/list": rt.handler(forever(probe))}
        async with rt.client(peer.path, handlers=handlers) as client:
            await client.until(probe.started.is_set)
        assert probe.cancelled.wait(2), "the handler was not cancelled"

    with RawServer(script) as peer:
        rt.run(scenario)


MALFORMED = {
    "result-not-object": (
        {"jsonrpc": "2.0", "id": 1, "result": "nope"},
        "'result' must be an object",
    ),
    "error-code-not-integer": (
        {"jsonrpc": "2.0", "id": 1, "error": {"code": "x", "message": "m"}},
        "'error.code' must be an integer",
    ),
}


@runtimes()
@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_a_malformed_answer_fails_its_call_at_once(rt: Runtime, case: str) -> None:
    """(Added by D.) An answer recognizable as the call's but malformed: the call fails at
    once with McpError(-32600) naming the defect; nothing is sent back; the session goes
    on."""
    line, defect = MALFORMED[case]

    def script(wire: Wire) -> None:
        wire.accept_initialize()
        wire.recv_method("tools/call")
        wire.send(line)
        assert rest(wire) == []

    async def scenario() -> None:
        async with rt.client(peer.path) as client:
            started = time.monotonic()
            with pytest.raises(McpError, match=re.escape(defect)) as info:
                await client.call_tool("x")
            assert info.value.code == -32600
            assert time.monotonic() - started < 3
            assert await client.ping() == {}

    with RawServer(script) as peer:
        rt.run(scenario)


@runtimes()
def test_a_stray_answer_is_dropped_and_the_call_gets_its_own(rt: Runtime) -> None:
    """(Added by D.) An answer to an id the client never used is dropped quietly (nothing
    sent back); the pending call gets its own answer."""

    def script(wire: Wire) -> None:
        wire.accept_initialize()
        call = wire.recv_method("tools/call")
        wire.send({"jsonrpc": "2.0", "id": 77, "result": {}}, result(call, text_result("own")))
        assert rest(wire) == []

    async def scenario() -> None:
        async with rt.client(peer.path) as client:
            assert await client.call_tool("x") == text_result("own")
            assert await client.ping() == {}

    with RawServer(script) as peer:
        rt.run(scenario)
