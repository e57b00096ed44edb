"""The peer's requests we handle, in each runtime: a server's tool and prompt handlers that
raise (docs/policy.rst, "Callback errors"), the peer cancelling a request we handle, both roles
(docs/policy.rst, "Timeouts and cancellation"), garbage to a server. The server is the runtime's
own ``serve_unix`` in a thread; the client is played by the test, line by line."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Mapping
from typing import Any

import pytest

from mcp_sansio.server import Server, ToolError
from mcp_sansio.session import McpError, RequestTimeout

from ._peers import MODERN, VERSION, RawServer, Served, Wire, error_log, raw_client, result
from ._runtimes import Body, Runtime, async_runtimes, runtimes


def call(request_id: Any, name: str, arguments: Mapping[str, Any] | None = None) -> Any:
    params = {"name": name, "arguments": dict(arguments or {})}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


def cancelled(request_id: Any) -> dict[str, Any]:
    params = {"requestId": request_id, "reason": "the user gave up"}
    return {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": params}


class Probe:
    """What a handler tells the test, across threads."""

    def __init__(self) -> None:
        self.started = threading.Event()
        self.cancelled = threading.Event()
        self.finished = threading.Event()


def forever(probe: Probe) -> Body:
    """A handler body that waits (bounded, 10 s) until cancelled: a cancelled task or
    scope in the async runtimes, ``ctx.cancelled`` in the blocking one."""

    async def wait_forever(ctx: Any, params: Mapping[str, Any]) -> Any:
        "Wait until cancelled."
        probe.started.set()
        try:
            end = time.monotonic() + 10
            while not ctx.cancelled and time.monotonic() < end:
                await ctx.sleep(0.05)
        except BaseException as exc:
            if not isinstance(exc, Exception):
                probe.cancelled.set()
            raise
        if ctx.cancelled:
            probe.cancelled.set()
        probe.finished.set()
        return "finished anyway"

    return wait_forever


def progress_then_forever(probe: Probe) -> Body:
    """Report progress once, then wait as :func:`forever`."""
    wait = forever(probe)

    async def progress_then_wait(ctx: Any, params: Mapping[str, Any]) -> Any:
        "Report progress, then wait until cancelled."
        ctx.progress(1, 10, "started")
        return await wait(ctx, params)

    return progress_then_wait


def slowly(probe: Probe) -> Body:
    """A handler body that works 0.3 s, then answers."""

    async def work_slowly(ctx: Any, params: Mapping[str, Any]) -> Any:
        "Work for 0.3 s."
        probe.started.set()
        await ctx.sleep(0.3)
        probe.finished.set()
        return "done"

    return work_slowly


def build_server(rt: Runtime, probe: Probe) -> Server:
    server = Server("contract", "1.0")

    @server.tool()
    def echo(ctx: Any, arguments: Mapping[str, Any]) -> str:
        "Echo the text."
        return str(arguments["text"])

    @server.tool()
    def crash(ctx: Any, arguments: Mapping[str, Any]) -> str:
        "Raise a plain exception."
        raise RuntimeError("internal detail")

    @server.tool()
    def invalid(ctx: Any, arguments: Mapping[str, Any]) -> str:
        "Raise a ToolError."
        raise ToolError("the input was wrong")

    @server.tool()
    def refuse(ctx: Any, arguments: Mapping[str, Any]) -> str:
        "Raise an McpError."
        raise McpError(-32050, "refused on purpose", {"why": "test"})

    @server.prompt()
    def broken(ctx: Any, arguments: Mapping[str, Any]) -> str:
        "A prompt that raises."
        raise RuntimeError("prompt detail")

    server.tool(name="forever")(rt.handler(forever(probe)))
    server.tool(name="slowly")(rt.handler(slowly(probe)))
    server.tool(name="progress")(rt.handler(progress_then_forever(probe)))
    return server


def ping(request_id: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": "ping"}


# ---------------------------------------------------------------------- handlers that raise


def _raising_handler(rt: Runtime, request: dict[str, Any]) -> None:
    """-32603 to the client, without the traceback; logged at ERROR with it; the session
    goes on."""
    with error_log() as log, Served(rt.name, build_server(rt, Probe())) as served:
        with raw_client(served.path) as wire:
            wire.initialize()
            wire.send(request)
            answer = wire.recv()
            wire.send(ping(2))
            assert wire.recv() == result(ping(2), {})
        records = log.wait(1, timeout=1)
    assert answer["id"] == 1
    assert "error" in answer, answer
    assert answer["error"]["code"] == -32603
    assert "Traceback" not in answer["error"]["message"]
    assert ".py" not in answer["error"]["message"]
    assert len(records) == 1, records
    assert records[0].exc_info is not None
    assert isinstance(records[0].exc_info[1], RuntimeError)


@runtimes()
def test_a_tool_handler_raising_answers_internal_error(rt: Runtime) -> None:
    _raising_handler(rt, call(1, "crash"))


@runtimes()
def test_a_prompt_handler_raising_answers_internal_error(rt: Runtime) -> None:
    request = {"jsonrpc": "2.0", "id": 1, "method": "prompts/get", "params": {"name": "broken"}}
    _raising_handler(rt, request)


@runtimes()
def test_a_tool_error_is_an_is_error_result(rt: Runtime) -> None:
    """``ToolError`` is the tool's own failure, for the model to read: an ``isError``
    result with its text, not a protocol error; nothing logged at ERROR."""
    with Served(rt.name, build_server(rt, Probe())) as served, raw_client(served.path) as wire:
        wire.initialize()
        wire.send(call(1, "invalid"))
        answer = wire.recv()
    content = [{"type": "text", "text": "the input was wrong"}]
    assert answer == {"jsonrpc": "2.0", "id": 1, "result": {"content": content, "isError": True}}


@runtimes()
def test_a_server_handler_raising_mcp_error_sends_that_error(rt: Runtime) -> None:
    with (
        error_log() as log,
        Served(rt.name, build_server(rt, Probe())) as served,
        raw_client(served.path) as wire,
    ):
        wire.initialize()
        wire.send(call(1, "refuse"))
        answer = wire.recv()
    error = {"code": -32050, "message": "refused on purpose", "data": {"why": "test"}}
    assert answer == {"jsonrpc": "2.0", "id": 1, "error": error}
    assert log.records == []


# ---------------------------------------------------------------------- the peer cancels


@runtimes()
@pytest.mark.parametrize("version", [VERSION, MODERN])
def test_a_timeout_cancels_the_handler_of_our_own_server(rt: Runtime, version: str) -> None:
    """Our client and our server of the same runtime: the call's RequestTimeout cancels the
    request at the server, whose handler's job is cancelled (in either era's way)."""
    probe = Probe()

    async def scenario() -> None:
        async with rt.client(served.path, versions=[version]) as client:
            with pytest.raises(RequestTimeout):
                await client.call_tool("forever", timeout=0.3)
            await client.until(probe.cancelled.is_set)
            got = await client.call_tool("echo", {"text": "after"})
            assert got["content"] == [{"type": "text", "text": "after"}]

    with Served(rt.name, build_server(rt, probe), versions=[version]) as served:
        rt.run(scenario)
    assert probe.started.is_set()
    assert probe.cancelled.is_set()


@async_runtimes()
@pytest.mark.parametrize("version", [VERSION, MODERN])
def test_the_caller_cancelling_cancels_our_own_servers_handler(rt: Runtime, version: str) -> None:
    probe = Probe()

    async def scenario() -> None:
        async with rt.client(served.path, versions=[version]) as client:
            assert await client.cancel_after(0.3, lambda: client.call_tool("forever"))
            await client.until(probe.cancelled.is_set)
            got = await client.call_tool("echo", {"text": "after"})
            assert got["content"] == [{"type": "text", "text": "after"}]

    with Served(rt.name, build_server(rt, probe), versions=[version]) as served:
        rt.run(scenario)
    assert probe.started.is_set()


@runtimes()
@pytest.mark.parametrize("version", [VERSION, MODERN])
def test_on_progress_raising_cancels_our_own_servers_handler(rt: Runtime, version: str) -> None:
    """The drift case end to end, in either era: the callback's exception comes out of the
    call, and the server's handler is cancelled."""
    probe = Probe()
    raised: list[Exception] = []

    def on_progress(params: Mapping[str, Any]) -> None:
        raised.append(ValueError("callback bug"))
        raise raised[-1]

    async def scenario() -> None:
        async with rt.client(served.path, versions=[version]) as client:
            with pytest.raises(ValueError, match="callback bug") as info:
                await client.call_tool("progress", on_progress=on_progress, timeout=5)
            assert info.value is raised[0]
            await client.until(probe.cancelled.is_set)
            got = await client.call_tool("echo", {"text": "after"})
            assert got["content"] == [{"type": "text", "text": "after"}]

    with Served(rt.name, build_server(rt, probe), versions=[version]) as served:
        rt.run(scenario)


@runtimes()
def test_the_client_cancelling_cancels_the_servers_handler(rt: Runtime) -> None:
    """The handler's job is cancelled and no answer is sent: the next line the client reads
    answers its later ping."""
    probe = Probe()
    with Served(rt.name, build_server(rt, probe)) as served, raw_client(served.path) as wire:
        wire.initialize()
        wire.send(call(1, "forever"))
        assert probe.started.wait(5)
        wire.send(cancelled(1))
        assert probe.cancelled.wait(5), "the handler was not cancelled"
        time.sleep(0.1)
        wire.send(ping(2))
        assert wire.recv() == result(ping(2), {})
        wire.quiet(0.2)


@runtimes()
def test_the_server_cancelling_cancels_the_clients_handler(rt: Runtime) -> None:
    probe = Probe()
    answers: list[dict[str, Any]] = []

    def script(wire: Wire) -> None:
        wire.accept_initialize()
        params = {
            "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
            "maxTokens": 5,
        }
        wire.send(
            {"jsonrpc": "2.0", "id": "s1", "method": "sampling/createMessage", "params": params}
        )
        assert probe.started.wait(5)
        wire.send(cancelled("s1"))
        assert probe.cancelled.wait(5), "the client's handler was not cancelled"
        # the client's next call comes; nothing for s1 before it
        message = wire.recv()
        assert message.get("method") == "tools/call", message
        wire.send(result(message, {"content": []}))
        answers.extend(wire.wait_eof())

    async def scenario() -> None:
        handlers = {"sampling/createMessage": rt.handler(forever(probe))}
        async with rt.client(peer.path, handlers=handlers) as client:
            await client.until(probe.cancelled.is_set)
            await client.idle(0.1)
            assert await client.call_tool("next") == {"content": []}

    with RawServer(script) as peer:
        rt.run(scenario)
    assert answers == []


# ---------------------------------------------------------------------- garbage


@runtimes()
def test_garbage_to_a_server_gets_a_parse_error_and_the_session_goes_on(rt: Runtime) -> None:
    with Served(rt.name, build_server(rt, Probe())) as served, raw_client(served.path) as wire:
        wire.send(b"this is not JSON")
        first = wire.recv()
        wire.initialize()
        wire.send(b"{oops", ping(5))
        second, pong = wire.recv(), wire.recv()
    for error in (first, second):
        assert error["id"] is None
        assert error["error"]["code"] == -32700
    assert pong == result(ping(5), {})


@runtimes()
def test_a_request_over_max_message_size_is_refused_to_its_id(rt: Runtime) -> None:
    """(Added by D.) -32600 to the request's id, naming the size and the option; the
    session goes on."""
    big = call(7, "echo", {"text": "x" * 100_000})
    server = build_server(rt, Probe())
    with (
        Served(rt.name, server, max_message_size=64 * 1024) as served,
        raw_client(served.path) as wire,
    ):
        wire.initialize()
        wire.send(big)
        answer = wire.recv()
        wire.send(ping(8))
        assert wire.recv() == result(ping(8), {})
    assert answer["id"] == 7, answer
    assert answer["error"]["code"] == -32600
    assert "max_message_size" in answer["error"]["message"]
    assert "100" in answer["error"]["message"]


# ---------------------------------------------------------------------- the client goes away


@runtimes()
def test_a_half_closed_client_still_gets_its_answer(rt: Runtime) -> None:
    """(Added by D.) EOF from the client (it shut its writing side) ends the reading, not
    the session's answers: the request in flight is answered."""
    with Served(rt.name, build_server(rt, Probe())) as served, raw_client(served.path) as wire:
        wire.initialize()
        wire.send(call(1, "echo", {"text": "bye"}))
        wire.shutdown_write()
        assert wire.wait_eof() == [
            {"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": "bye"}]}}
        ]


def _fd_count() -> int:
    return len(os.listdir("/proc/self/fd"))


def _settled_fd_count(at_most: int | None = None, timeout: float = 5.0) -> int:
    """The process's descriptor count once it stops changing (or is down to ``at_most``)."""
    end = time.monotonic() + timeout
    last = _fd_count()
    while time.monotonic() < end:
        time.sleep(0.05)
        now = _fd_count()
        if (at_most is not None and now <= at_most) or (at_most is None and now == last):
            return now
        last = now
    return _fd_count()


@runtimes()
def test_a_client_gone_mid_call_is_let_go_once_its_handler_ends(rt: Runtime) -> None:
    """(Added by D.) The client closes its socket while a handler works. The server cannot
    tell that from a half-close before it writes, so the handler runs to its end (as for
    a half-closed client); then its answer is dropped, nothing is logged at ERROR, and the
    connection's descriptors are let go while the server serves on."""
    probe = Probe()
    with error_log() as log, Served(rt.name, build_server(rt, probe)) as served:
        with raw_client(served.path) as warm:  # what the server makes once, made now
            warm.initialize()
        before = _settled_fd_count()
        with raw_client(served.path) as wire:
            wire.initialize()
            wire.send(call(1, "slowly"))
            assert probe.started.wait(5)
        assert probe.finished.wait(5), "the handler did not run to its end"
        after = _settled_fd_count(at_most=before)
        assert after <= before, f"{after - before} descriptors kept"
        with raw_client(served.path) as wire:  # and it serves on
            wire.initialize()
            wire.send(ping(3))
            assert wire.recv() == result(ping(3), {})
    assert log.records == []
