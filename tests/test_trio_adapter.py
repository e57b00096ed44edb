"""The trio adapter (:mod:`mcp_sansio.trio`): clients and servers over memory streams, TCP,
Unix sockets and stdio, in both eras, with every failure path.

Tests on memory streams run under trio's MockClock with autojump: time moves only when every
task is blocked, so timeouts are exact and instant. Tests on real sockets and processes use
the real clock. Every test is bounded by ``trio.fail_after``.

Run as a script (``python test_trio_adapter.py serve``), this module is the stdio server of
the tests: :func:`make_server` on stdin and stdout.
"""

from __future__ import annotations

import functools
import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from helpers import initialize_request

pytest.importorskip("trio")

import trio
import trio.testing

import mcp_sansio.trio as mcp_trio
from mcp_sansio import Era, Notification
from mcp_sansio.server import Server
from mcp_sansio.session import (
    AsyncContext,
    ConnectionLost,
    McpError,
    RequestTimeout,
)
from mcp_sansio.trio import Client, Context, serve_stdio, serve_stream, serve_tcp, serve_unix

ERAS = [None, ["2025-11-25"], ["2026-07-28"]]
ERA_IDS = ["default", "2025-11-25", "2026-07-28"]
LOG_LEVEL = "io.modelcontextprotocol/logLevel"
SUBSCRIPTION = "io.modelcontextprotocol/subscriptionId"


# ---------------------------------------------------------------------- the server


class State:
    """What the test server's handlers saw (shared with the test in one process)."""

    def __init__(self) -> None:
        self.started = trio.Event()
        self.cancelled = trio.Event()
        self.arrived = 0
        self.all_in = trio.Event()


def make_server(state: State) -> Server:
    """The server of these tests; its handlers are the same in both eras."""
    server = Server("trio-test", "1.0", instructions="be kind")
    text_schema = {"type": "object", "properties": {"text": {"type": "string"}}}

    @server.tool(input_schema=text_schema)
    def echo(ctx: Context, arguments: Mapping[str, Any]) -> str:
        "Echo the text."
        return str(arguments.get("text", ""))

    @server.tool()
    async def slow(ctx: Context, arguments: Mapping[str, Any]) -> str:
        "Sleep for a while (an hour by default)."
        state.started.set()
        finished = False
        try:
            await ctx.sleep(arguments.get("seconds", 3600))
            finished = True
        finally:
            if not finished:
                state.cancelled.set()
        return "slept"

    @server.tool()
    async def gather(ctx: Context, arguments: Mapping[str, Any]) -> str:
        "Return once ``n`` calls of this tool are running at the same time."
        state.arrived += 1
        if state.arrived >= arguments["n"]:
            state.all_in.set()
        await state.all_in.wait()
        return f"{arguments['i']} of {state.arrived}"

    @server.tool()
    async def ask(ctx: Context, arguments: Mapping[str, Any]) -> str:
        "Ask the client for a name, a sample and its roots."
        schema = {"type": "object", "properties": {"name": {"type": "string"}}}
        answer = await ctx.elicit("Your name?", schema)
        sampled = await ctx.sample(
            {
                "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
                "maxTokens": 10,
            }
        )
        roots = await ctx.list_roots()
        name = answer["content"]["name"]
        return f"{name}|{sampled['content']['text']}|{roots['roots'][0]['uri']}"

    @server.tool()
    async def progress(ctx: Context, arguments: Mapping[str, Any]) -> str:
        "Report ``n`` steps of progress, ``delay`` seconds apart."
        n = arguments.get("n", 3)
        for step in range(1, n + 1):
            await ctx.sleep(arguments.get("delay", 0))
            ctx.progress(step, n, f"step {step}")
        return "progressed"

    @server.tool()
    def log(ctx: Context, arguments: Mapping[str, Any]) -> str:
        "Log at three levels."
        for level in ("debug", "info", "warning"):
            ctx.log(level, {"said": level}, "tests")
        return "logged"

    @server.tool()
    def touch(ctx: Context, arguments: Mapping[str, Any]) -> str:
        "Say that a resource and the tool list changed."
        ctx.resource_updated(arguments["uri"])
        ctx.list_changed("tools")
        return "touched"

    @server.tool()
    def crash(ctx: Context, arguments: Mapping[str, Any]) -> str:
        "Die at once (only ever called on a server in a subprocess)."
        sys.stderr.write("crashing\n")
        sys.stderr.flush()
        os._exit(3)

    @server.resource("test://static", mime_type="text/plain")
    def static(ctx: Context, uri: str) -> str:
        "A fixed text."
        return "static text"

    @server.resource_template("test://items/{id}")
    def item(ctx: Context, uri: str, variables: Mapping[str, str]) -> str:
        "One item."
        return f"item {variables['id']}"

    @server.prompt(arguments=[{"name": "topic", "required": True}])
    def greet(ctx: Context, arguments: Mapping[str, str]) -> list[dict[str, Any]]:
        "A greeting."
        return [
            {"role": "user", "content": {"type": "text", "text": f"About {arguments['topic']}"}}
        ]

    @server.completion
    def complete(
        ctx: Context, ref: Mapping[str, Any], argument: Mapping[str, Any], context: Any
    ) -> list[str]:
        return [v for v in ("alpha", "alpine", "beta") if v.startswith(argument["value"])]

    return server


def conforms(ctx: Context) -> AsyncContext:
    """(For mypy: the trio Context is the handlers' AsyncContext.)"""
    return ctx


def elicit(ctx: Context, params: Mapping[str, Any]) -> dict[str, Any]:
    return {"action": "accept", "content": {"name": "Ada"}}


async def sample(ctx: Context, params: Mapping[str, Any]) -> dict[str, Any]:
    await trio.sleep(0)
    content = {"type": "text", "text": "sampled"}
    return {"role": "assistant", "content": content, "model": "test"}


def roots(ctx: Context, params: Mapping[str, Any]) -> dict[str, Any]:
    return {"roots": [{"uri": "file:///tmp", "name": "tmp"}]}


HANDLERS = {"elicitation/create": elicit, "sampling/createMessage": sample, "roots/list": roots}


# ---------------------------------------------------------------------- helpers


def run(test: Callable[[], Awaitable[None]], *, mock_clock: bool = True, limit: float = 20) -> None:
    """Run ``test`` under trio, bounded by ``limit`` seconds (virtual ones on the MockClock)."""

    async def bounded() -> None:
        with trio.fail_after(limit):
            await test()

    clock = trio.testing.MockClock(autojump_threshold=0) if mock_clock else None
    trio.run(bounded, clock=clock)


class Peer:
    """A hand-driven peer on a stream: reads and writes JSON lines."""

    def __init__(self, stream: trio.abc.Stream) -> None:
        self.stream = stream
        self.buffer = b""

    async def read(self) -> Any:
        """The next message, or ``None`` at EOF."""
        import orjson

        while b"\n" not in self.buffer:
            data = await self.stream.receive_some(65536)
            if not data:
                return None
            self.buffer += data
        line, self.buffer = self.buffer.split(b"\n", 1)
        return orjson.loads(line)

    async def write(self, message: Mapping[str, Any] | bytes) -> None:
        import orjson

        data = message if isinstance(message, bytes) else orjson.dumps(message) + b"\n"
        await self.stream.send_all(data)

    async def handshake(self) -> None:
        """Be an initialize-era server for a ``versions=["2025-11-25"]`` client."""
        request = await self.read()
        assert request["method"] == "initialize"
        result = {
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "peer", "version": "0"},
        }
        await self.write({"jsonrpc": "2.0", "id": request["id"], "result": result})
        assert (await self.read())["method"] == "notifications/initialized"


@asynccontextmanager
async def handshaken(stream: trio.abc.Stream, peer: Peer, **options: Any) -> AsyncIterator[Client]:
    """A ``versions=["2025-11-25"]`` client on ``stream``, opened by ``peer``."""
    async with trio.open_nursery() as nursery:
        done = trio.Event()

        async def handshake() -> None:
            await peer.handshake()
            done.set()

        nursery.start_soon(handshake)
        async with Client(stream, versions=["2025-11-25"], **options) as client:
            await done.wait()
            yield client


def text(result: Mapping[str, Any]) -> str:
    return str(result["content"][0]["text"])


# ---------------------------------------------------------------------- memory streams


@pytest.mark.parametrize("versions", ERAS, ids=ERA_IDS)
def test_every_method(versions: list[str] | None) -> None:
    async def test() -> None:
        state = State()
        here, there = trio.testing.memory_stream_pair()
        async with trio.open_nursery() as nursery:
            nursery.start_soon(serve_stream, make_server(state), there)
            async with Client(here, versions=versions) as client:
                modern = versions != ["2025-11-25"]
                assert client.era is (Era.STATELESS if modern else Era.INITIALIZE)
                assert client.protocol_version == ("2026-07-28" if modern else "2025-11-25")
                assert client.server_info == {"name": "trio-test", "version": "1.0"}
                assert client.instructions == "be kind"
                assert client.server_capabilities is not None
                assert "tools" in client.server_capabilities
                if not modern:
                    assert await client.ping() == {}
                tools = await client.list_tools()
                assert "echo" in [t["name"] for t in tools["tools"]]
                assert text(await client.call_tool("echo", {"text": "hi"})) == "hi"
                resources = await client.list_resources()
                assert resources["resources"][0]["uri"] == "test://static"
                templates = await client.list_resource_templates()
                assert templates["resourceTemplates"][0]["uriTemplate"] == "test://items/{id}"
                read = await client.read_resource("test://static")
                assert read["contents"][0]["text"] == "static text"
                read = await client.read_resource("test://items/7")
                assert read["contents"][0]["text"] == "item 7"
                prompts = await client.list_prompts()
                assert prompts["prompts"][0]["name"] == "greet"
                prompt = await client.get_prompt("greet", {"topic": "trio"})
                assert prompt["messages"][0]["content"]["text"] == "About trio"
                completion = await client.complete(
                    {"type": "ref/prompt", "name": "greet"}, "topic", "al"
                )
                assert completion["completion"]["values"] == ["alpha", "alpine"]
                with pytest.raises(McpError) as caught:
                    await client.call_tool("nope")
                assert caught.value.code == -32602
                result = await client.request("tools/call", {"name": "echo", "arguments": {}})
                assert text(result) == ""
            # The client closed its stream: the server is done with the connection.
        with pytest.raises(ConnectionLost):
            await client.list_tools()

    run(test)


@pytest.mark.parametrize("versions", ERAS, ids=ERA_IDS)
def test_connect_server(versions: list[str] | None) -> None:
    """Client.connect_server: the server runs in a task of the client's, over an in-memory
    stream; its own options go to its session; leaving the client ends it."""

    async def test() -> None:
        server = make_server(State())
        options = {"versions": versions} if versions else {}
        async with Client.connect_server(server, server_options=options) as client:
            assert client.protocol_version == (versions or ["2026-07-28"])[0]
            assert text(await client.call_tool("echo", {"text": "hi"})) == "hi"
        with pytest.raises(ConnectionLost):
            await client.list_tools()
        # The server's versions bound what the client can have.
        only = {"versions": ["2025-06-18"]}
        async with Client.connect_server(server, server_options=only) as client:
            assert client.protocol_version == "2025-06-18"
            assert text(await client.call_tool("echo", {"text": "again"})) == "again"

    run(test)


@pytest.mark.parametrize("versions", ERAS, ids=ERA_IDS)
def test_many_requests_in_flight(versions: list[str] | None) -> None:
    n = 25

    async def test() -> None:
        state = State()
        here, there = trio.testing.memory_stream_pair()
        results: list[str] = []
        async with trio.open_nursery() as nursery:
            nursery.start_soon(serve_stream, make_server(state), there)
            async with Client(here, versions=versions) as client:

                async def one(i: int) -> None:
                    results.append(text(await client.call_tool("gather", {"n": n, "i": i})))

                async with trio.open_nursery() as calls:
                    for i in range(n):
                        calls.start_soon(one, i)
        # Every handler was waiting for the last one: they all ran at once.
        assert sorted(results) == sorted(f"{i} of {n}" for i in range(n))

    run(test)


@pytest.mark.parametrize("versions", ERAS, ids=ERA_IDS)
def test_timeout_cancels_the_handler(versions: list[str] | None) -> None:
    async def test() -> None:
        state = State()
        here, there = trio.testing.memory_stream_pair()
        async with trio.open_nursery() as nursery:
            nursery.start_soon(serve_stream, make_server(state), there)
            async with Client(here, versions=versions) as client:
                before = trio.current_time()
                with pytest.raises(RequestTimeout):
                    await client.call_tool("slow", timeout=5)
                assert trio.current_time() - before == pytest.approx(5)
                await state.cancelled.wait()  # notifications/cancelled reached the handler
                # The session goes on.
                assert text(await client.call_tool("echo", {"text": "after"})) == "after"
                # The session's default timeout applies too.
                client.session.timeout = 3
                with pytest.raises(RequestTimeout):
                    await client.call_tool("slow")

    run(test)


def test_each_call_times_out_at_its_own_deadline() -> None:
    """The timer is only ever moved earlier: a shorter deadline after a longer one moves it,
    and once it fired for the shorter one it is armed again for the longer one."""

    async def test() -> None:
        state = State()
        here, there = trio.testing.memory_stream_pair()
        timed_out: list[tuple[str, float]] = []

        async def call(name: str, timeout: float) -> None:
            start = trio.current_time()
            with pytest.raises(RequestTimeout):
                await client.call_tool("slow", timeout=timeout)
            timed_out.append((name, trio.current_time() - start))

        async with trio.open_nursery() as nursery:
            nursery.start_soon(serve_stream, make_server(state), there)
            async with Client(here) as client, trio.open_nursery() as calls:
                calls.start_soon(call, "long", 100)
                await state.started.wait()
                calls.start_soon(call, "short", 5)
        assert [name for name, _ in timed_out] == ["short", "long"]
        assert timed_out[0][1] == pytest.approx(5)
        assert timed_out[1][1] == pytest.approx(100)

    run(test, limit=200)


@pytest.mark.parametrize("versions", ERAS, ids=ERA_IDS)
def test_caller_cancellation_cancels_the_request(versions: list[str] | None) -> None:
    async def test() -> None:
        state = State()
        here, there = trio.testing.memory_stream_pair()
        async with trio.open_nursery() as nursery:
            nursery.start_soon(serve_stream, make_server(state), there)
            async with Client(here, versions=versions) as client:
                async with trio.open_nursery() as calls:
                    calls.start_soon(client.call_tool, "slow")
                    await state.started.wait()
                    calls.cancel_scope.cancel()
                await state.cancelled.wait()
                assert client.session.calls == ()
                assert text(await client.call_tool("echo", {"text": "after"})) == "after"

    run(test)


def test_a_cancelled_request_is_announced_on_the_wire() -> None:
    async def test() -> None:
        here, there = trio.testing.memory_stream_pair()
        peer = Peer(there)
        async with handshaken(here, peer) as client:
            with trio.move_on_after(1):
                await client.call_tool("anything")
            request = await peer.read()
            assert request["method"] == "tools/call"
            cancel = await peer.read()
            assert cancel["method"] == "notifications/cancelled"
            assert cancel["params"]["requestId"] == request["id"]
            # A late answer is dropped, not mis-delivered.
            await peer.write({"jsonrpc": "2.0", "id": request["id"], "result": {"content": []}})
            results: list[Any] = []

            async def again() -> None:
                results.append(await client.call_tool("again"))

            async with trio.open_nursery() as nursery:
                nursery.start_soon(again)
                second = await peer.read()
                assert second["id"] != request["id"]
                fresh = {"content": [{"type": "text", "text": "fresh"}]}
                await peer.write({"jsonrpc": "2.0", "id": second["id"], "result": fresh})
            assert [text(r) for r in results] == ["fresh"]

    run(test)


@pytest.mark.parametrize("versions", ERAS, ids=ERA_IDS)
def test_progress(versions: list[str] | None) -> None:
    async def test() -> None:
        state = State()
        here, there = trio.testing.memory_stream_pair()
        async with trio.open_nursery() as nursery:
            nursery.start_soon(serve_stream, make_server(state), there)
            async with Client(here, versions=versions) as client:
                seen: list[Mapping[str, Any]] = []
                result = await client.call_tool("progress", {"n": 3}, on_progress=seen.append)
                assert text(result) == "progressed"
                assert [p["progress"] for p in seen] == [1, 2, 3]
                assert seen[0]["total"] == 3
                assert seen[0]["message"] == "step 1"
                # Progress every 2 s, 10 s in all: a 3 s timeout holds only with resets.
                slow = {"n": 5, "delay": 2}
                with pytest.raises(RequestTimeout):
                    await client.call_tool("progress", slow, timeout=3, on_progress=seen.append)
                result = await client.call_tool(
                    "progress", slow, timeout=3, on_progress=seen.append, reset_on_progress=True
                )
                assert text(result) == "progressed"
                # The hard maximum still applies.
                with pytest.raises(RequestTimeout):
                    await client.request(
                        "tools/call",
                        {"name": "progress", "arguments": slow},
                        timeout=3,
                        reset_on_progress=True,
                        max_timeout=5,
                        on_progress=seen.append,
                    )

    run(test)


def test_an_on_progress_that_raises_cancels_the_request() -> None:
    async def test() -> None:
        state = State()
        here, there = trio.testing.memory_stream_pair()

        def fail(params: Mapping[str, Any]) -> None:
            raise ValueError("no progress, thanks")

        async with trio.open_nursery() as nursery:
            nursery.start_soon(serve_stream, make_server(state), there)
            async with Client(here, versions=["2025-11-25"]) as client:
                with pytest.raises(ValueError, match="no progress"):
                    await client.call_tool("progress", {"n": 3, "delay": 1}, on_progress=fail)
                assert client.session.calls == ()
                assert text(await client.call_tool("echo", {"text": "on"})) == "on"

    run(test)


@pytest.mark.parametrize("versions", ERAS, ids=ERA_IDS)
def test_the_server_asks_the_client(versions: list[str] | None) -> None:
    async def test() -> None:
        state = State()
        here, there = trio.testing.memory_stream_pair()
        async with trio.open_nursery() as nursery:
            nursery.start_soon(serve_stream, make_server(state), there)
            async with Client(here, versions=versions, handlers=HANDLERS) as client:
                result = await client.call_tool("ask")
                assert text(result) == "Ada|sampled|file:///tmp"

    run(test)


def test_no_busy_timer_after_an_input_required_round() -> None:
    async def test() -> None:
        state = State()
        here, there = trio.testing.memory_stream_pair()
        async with trio.open_nursery() as nursery:
            nursery.start_soon(serve_stream, make_server(state), there)
            async with Client(here, versions=["2026-07-28"], handlers=HANDLERS) as client:
                expire = client.session.expire
                expiries: list[float] = []

                def counted(now: float) -> Any:
                    expiries.append(now)
                    if len(expiries) > 100:
                        raise AssertionError("the timer is spinning")
                    return expire(now)

                client.session.expire = counted  # type: ignore[method-assign]
                result = await client.call_tool("ask", timeout=10)
                assert text(result) == "Ada|sampled|file:///tmp"
                await trio.sleep(60)  # well past the call's deadline
                assert len(expiries) <= 1

    run(test, limit=100)


@pytest.mark.parametrize("versions", [["2025-11-25"], ["2026-07-28"]], ids=ERA_IDS[1:])
def test_giving_up_cancels_the_client_handler_too(versions: list[str]) -> None:
    # Initialize era: the server's handler is cancelled, so is its question to the client.
    # 2026: the question is the client's own input handler; the caller's cancel stops it.
    async def test() -> None:
        state = State()
        here, there = trio.testing.memory_stream_pair()
        asked = trio.Event()
        handler_cancelled = trio.Event()

        async def never_answer(ctx: Context, params: Mapping[str, Any]) -> dict[str, Any]:
            asked.set()
            try:
                await trio.sleep_forever()
            finally:
                handler_cancelled.set()

        handlers = {**HANDLERS, "elicitation/create": never_answer}
        async with trio.open_nursery() as nursery:
            nursery.start_soon(serve_stream, make_server(state), there)
            async with Client(here, versions=versions, handlers=handlers) as client:
                with trio.move_on_after(5):
                    await client.call_tool("ask")
                assert asked.is_set()
                await handler_cancelled.wait()
                assert text(await client.call_tool("echo", {"text": "on"})) == "on"

    run(test)


@pytest.mark.parametrize("versions", ERAS, ids=ERA_IDS)
def test_asking_a_client_without_the_capability_fails(versions: list[str] | None) -> None:
    async def test() -> None:
        state = State()
        here, there = trio.testing.memory_stream_pair()
        async with trio.open_nursery() as nursery:
            nursery.start_soon(serve_stream, make_server(state), there)
            async with Client(here, versions=versions) as client:
                with pytest.raises(McpError):
                    await client.call_tool("ask")

    run(test)


def test_a_failing_client_handler_answers_with_an_error() -> None:
    def refuse(ctx: Context, params: Mapping[str, Any]) -> dict[str, Any]:
        raise McpError(-1, "the user walked away")

    async def test(versions: list[str]) -> None:
        state = State()
        here, there = trio.testing.memory_stream_pair()
        async with trio.open_nursery() as nursery:
            nursery.start_soon(serve_stream, make_server(state), there)
            handlers = {**HANDLERS, "elicitation/create": refuse}
            async with Client(here, versions=versions, handlers=handlers) as client:
                with pytest.raises(McpError, match="walked away"):
                    await client.call_tool("ask")
                assert text(await client.call_tool("echo", {"text": "on"})) == "on"

    for versions in (["2025-11-25"], ["2026-07-28"]):
        run(lambda: test(versions))  # noqa: B023


@pytest.mark.parametrize("versions", ERAS, ids=ERA_IDS)
def test_logging(versions: list[str] | None) -> None:
    async def test() -> None:
        state = State()
        here, there = trio.testing.memory_stream_pair()
        notes: list[Notification] = []
        async with trio.open_nursery() as nursery:
            nursery.start_soon(serve_stream, make_server(state), there)
            options: dict[str, Any] = {"on_notification": notes.append, "log_level": "info"}
            async with Client(here, versions=versions, **options) as client:
                if client.era is Era.INITIALIZE:
                    await client.set_logging_level("info")
                assert text(await client.call_tool("log")) == "logged"
        logs = [n.params for n in notes if n.method == "notifications/message"]
        assert [(p or {})["level"] for p in logs] == ["info", "warning"]
        assert logs[0] == {"level": "info", "data": {"said": "info"}, "logger": "tests"}

    run(test)


def test_subscriptions_in_the_initialize_era() -> None:
    async def test() -> None:
        state = State()
        here, there = trio.testing.memory_stream_pair()
        notes: list[Notification] = []

        async def collect(note: Notification) -> None:  # an async callback runs as a task
            notes.append(note)

        async with trio.open_nursery() as nursery:
            nursery.start_soon(serve_stream, make_server(state), there)
            options: dict[str, Any] = {"versions": ["2025-11-25"], "on_notification": collect}
            async with Client(here, **options) as client:
                await client.subscribe("test://static")
                await client.call_tool("touch", {"uri": "test://static"})
                await client.call_tool("touch", {"uri": "test://other"})
                await client.unsubscribe("test://static")
                await client.call_tool("touch", {"uri": "test://static"})
                await trio.sleep(1)
        updated = [n.params for n in notes if n.method == "notifications/resources/updated"]
        assert updated == [{"uri": "test://static"}]
        changed = [n for n in notes if n.method == "notifications/tools/list_changed"]
        assert len(changed) == 3

    run(test)


def test_listen_in_2026() -> None:
    async def test() -> None:
        state = State()
        here, there = trio.testing.memory_stream_pair()
        notes: list[Notification] = []
        acknowledged = trio.Event()

        def collect(note: Notification) -> None:
            notes.append(note)
            if note.method == "notifications/subscriptions/acknowledged":
                acknowledged.set()

        async with trio.open_nursery() as nursery:
            nursery.start_soon(serve_stream, make_server(state), there)
            options: dict[str, Any] = {"versions": ["2026-07-28"], "on_notification": collect}
            async with Client(here, **options) as client, trio.open_nursery() as listening:
                listening.start_soon(
                    lambda: client.listen(tools=True, resource_uris=["test://static"])
                )
                await acknowledged.wait()
                await client.call_tool("touch", {"uri": "test://static"})
                await client.call_tool("touch", {"uri": "test://other"})
                await trio.sleep(1)
                listening.cancel_scope.cancel()  # stop listening
            assert client.session.calls == ()
        stream_notes = [n for n in notes if n.method != "notifications/subscriptions/acknowledged"]
        assert [n.method for n in stream_notes] == [
            "notifications/resources/updated",
            "notifications/tools/list_changed",
            "notifications/tools/list_changed",
        ]
        assert stream_notes[0].params is not None
        assert stream_notes[0].params["uri"] == "test://static"
        assert SUBSCRIPTION in stream_notes[0].params["_meta"]

    run(test)


# ---------------------------------------------------------------------- failure paths


def test_the_server_goes_away_mid_request() -> None:
    async def test() -> None:
        here, there = trio.testing.memory_stream_pair()
        peer = Peer(there)
        async with handshaken(here, peer) as client:
            async with trio.open_nursery() as nursery:
                outcomes: list[BaseException] = []

                async def call() -> None:
                    try:
                        await client.call_tool("anything", timeout=None)
                    except ConnectionLost as exc:
                        outcomes.append(exc)

                for _ in range(3):
                    nursery.start_soon(call)
                for _ in range(3):
                    assert (await peer.read())["method"] == "tools/call"
                await there.aclose()
            assert len(outcomes) == 3
            with pytest.raises(ConnectionLost):
                await client.list_tools()

    run(test)


def test_a_broken_pipe_fails_the_calls() -> None:
    async def test() -> None:
        client_send, server_receive = trio.testing.memory_stream_one_way_pair()
        server_send, client_receive = trio.testing.memory_stream_one_way_pair()
        peer = Peer(trio.StapledStream(server_send, server_receive))
        stream = trio.StapledStream(client_send, client_receive)
        async with handshaken(stream, peer) as client:
            await server_receive.aclose()  # writing to the server fails from now on
            with pytest.raises(ConnectionLost):
                await client.call_tool("anything", timeout=None)

    run(test)


INITIALIZE = initialize_request()


def test_a_client_gone_for_good_stops_the_handlers() -> None:
    async def test() -> None:
        client_send, server_receive = trio.testing.memory_stream_one_way_pair()
        server_send, client_receive = trio.testing.memory_stream_one_way_pair()
        peer = Peer(trio.StapledStream(client_send, client_receive))
        stream = trio.StapledStream(server_send, server_receive)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(serve_stream, make_server(State()), stream)
            await peer.write(INITIALIZE)
            await peer.read()
            await peer.write({"jsonrpc": "2.0", "method": "notifications/initialized"})
            params = {
                "name": "progress",
                "arguments": {"n": 1000, "delay": 1},
                "_meta": {"progressToken": 1},
            }
            await peer.write({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
            assert (await peer.read())["method"] == "notifications/progress"
            await client_receive.aclose()  # the client is gone: the next progress cannot go out
            await client_send.aclose()
            start = trio.current_time()
        # The handler was stopped at its next write, not after its 1000 steps.
        assert trio.current_time() - start <= 2

    run(test)


def test_garbage_to_the_server_gets_a_parse_error() -> None:
    async def test() -> None:
        state = State()
        here, there = trio.testing.memory_stream_pair()
        peer = Peer(here)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(serve_stream, make_server(state), there)
            await peer.write(b"this is not json\n")
            error = await peer.read()
            assert error["id"] is None
            assert error["error"]["code"] == -32700
            await peer.write(b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}\n')
            answer = await peer.read()  # a request before initialize: refused, but answered
            assert answer["id"] == 1
            await here.aclose()

    run(test)


def test_the_server_stops_reading_while_its_answers_pile_up() -> None:
    lines = 100  # more than one read's worth (64 KiB): a parse error to answer on each

    async def test() -> None:
        here, there = trio.testing.lockstep_stream_pair()  # no buffer: writes wait for reads
        sent = trio.Event()
        answers = 0
        async with trio.open_nursery() as nursery:
            nursery.start_soon(
                functools.partial(serve_stream, max_write_buffer=1000),
                make_server(State()),
                there,
            )

            async def flood() -> None:
                await here.send_all((b"x" * 1000 + b"\n") * lines)
                sent.set()

            nursery.start_soon(flood)
            await trio.sleep(10)
            assert not sent.is_set()  # we read no answer, so the server stopped reading
            while answers < lines:
                answers += (await here.receive_some(1 << 16)).count(b"\n")
            assert sent.is_set()
            await here.aclose()

    run(test)


def test_garbage_to_the_client_gets_a_parse_error() -> None:
    async def test() -> None:
        here, there = trio.testing.memory_stream_pair()
        peer = Peer(there)
        async with handshaken(here, peer) as client:
            await peer.write(b"\x00\xffgarbage\n")
            error = await peer.read()
            assert error["error"]["code"] == -32700
            async with trio.open_nursery() as nursery:
                nursery.start_soon(client.ping)
                request = await peer.read()
                await peer.write({"jsonrpc": "2.0", "id": request["id"], "result": {}})

    run(test)


def test_a_peer_that_never_answers() -> None:
    async def test() -> None:
        here, there = trio.testing.memory_stream_pair()
        peer = Peer(there)
        async with trio.open_nursery() as nursery:
            seen: list[Any] = []

            async def read_all() -> None:
                while (message := await peer.read()) is not None:
                    seen.append(message)

            nursery.start_soon(read_all)
            start = trio.current_time()
            with pytest.raises(RequestTimeout):
                async with Client(here, probe_timeout=2, timeout=7):
                    pass  # pragma: no cover
            # The probe timed out (2 s), then initialize did (7 s).
            assert trio.current_time() - start == pytest.approx(9)
        # initialize is never cancelled (the protocol forbids it); the probe is just dropped.
        assert [m.get("method") for m in seen] == ["server/discover", "initialize"]

    run(test)


def test_a_peer_that_stops_answering() -> None:
    async def test() -> None:
        here, there = trio.testing.memory_stream_pair()
        peer = Peer(there)
        async with handshaken(here, peer, timeout=4) as client:
            with pytest.raises(RequestTimeout):
                await client.call_tool("anything")
            request = await peer.read()
            cancel = await peer.read()
            assert cancel["method"] == "notifications/cancelled"
            assert cancel["params"] == {"requestId": request["id"], "reason": "timed out"}

    run(test)


def test_a_server_that_breaks_the_protocol() -> None:
    async def test() -> None:
        here, there = trio.testing.memory_stream_pair()
        peer = Peer(there)
        async with trio.open_nursery() as nursery:

            async def bad_server() -> None:
                request = await peer.read()
                result = {"protocolVersion": "2025-11-25"}  # no capabilities, no serverInfo
                await peer.write({"jsonrpc": "2.0", "id": request["id"], "result": result})

            nursery.start_soon(bad_server)
            with pytest.raises(ConnectionLost, match="lacks capabilities or serverInfo"):
                async with Client(here, versions=["2025-11-25"]):
                    pass  # pragma: no cover

    run(test)


def test_a_server_that_closes_before_answering() -> None:
    async def test() -> None:
        here, there = trio.testing.memory_stream_pair()
        await there.aclose()
        with pytest.raises(ConnectionLost):
            async with Client(here):
                pass  # pragma: no cover

    run(test)


def test_the_body_exception_comes_out_unwrapped() -> None:
    async def test() -> None:
        state = State()
        here, there = trio.testing.memory_stream_pair()
        async with trio.open_nursery() as nursery:
            nursery.start_soon(serve_stream, make_server(state), there)
            with pytest.raises(KeyError):
                async with Client(here):
                    raise KeyError("mine")
        with pytest.raises(RuntimeError):
            await Client(here).list_tools()
        client = Client(here)
        client._loop = object()  # type: ignore[assignment]
        with pytest.raises(RuntimeError):
            await client.__aenter__()

    run(test)


def test_an_outer_cancel_closes_the_client() -> None:
    async def test() -> None:
        state = State()
        here, there = trio.testing.memory_stream_pair()
        async with trio.open_nursery() as nursery:
            nursery.start_soon(serve_stream, make_server(state), there)
            with trio.move_on_after(5) as scope:
                async with Client(here) as client:
                    await client.call_tool("slow", timeout=None)
            assert scope.cancelled_caught
            await state.cancelled.wait()

    run(test)


def test_a_half_closed_client_still_gets_its_answers() -> None:
    async def test() -> None:
        state = State()
        client_send, server_receive = trio.testing.memory_stream_one_way_pair()
        server_send, client_receive = trio.testing.memory_stream_one_way_pair()
        peer = Peer(trio.StapledStream(client_send, client_receive))
        async with trio.open_nursery() as nursery:
            stream = trio.StapledStream(server_send, server_receive)
            nursery.start_soon(serve_stream, make_server(state), stream)
            await peer.write(INITIALIZE)
            await peer.read()
            await peer.write({"jsonrpc": "2.0", "method": "notifications/initialized"})
            call = {"name": "progress", "arguments": {"n": 1, "delay": 1}}
            await peer.write({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": call})
            await client_send.aclose()  # stdin EOF, with the call in progress
            answer = await peer.read()
            assert answer is not None
            assert answer["id"] == 1

    run(test)


def test_stateless_client_knows_capabilities() -> None:
    async def test() -> None:
        here, there = trio.testing.memory_stream_pair()
        async with trio.open_nursery() as nursery:
            nursery.start_soon(serve_stream, make_server(State()), there)
            async with Client(here, versions=["2026-07-28"]) as client:
                assert client.server_capabilities is not None

    run(test)


# ---------------------------------------------------------------------- sockets


@pytest.mark.parametrize("versions", ERAS, ids=ERA_IDS)
def test_tcp(versions: list[str] | None) -> None:
    async def test() -> None:
        state = State()
        async with trio.open_nursery() as nursery:
            port = await nursery.start(serve_tcp, make_server(state))
            async with (
                Client.connect_tcp("127.0.0.1", port, versions=versions, handlers=HANDLERS) as one,
                Client.connect_tcp("127.0.0.1", port, versions=versions) as two,
            ):
                assert text(await one.call_tool("echo", {"text": "one"})) == "one"
                assert text(await two.call_tool("echo", {"text": "two"})) == "two"
                assert text(await one.call_tool("ask")) == "Ada|sampled|file:///tmp"
            nursery.cancel_scope.cancel()

    run(test, mock_clock=False)


@pytest.mark.parametrize("versions", ERAS, ids=ERA_IDS)
def test_unix_socket(versions: list[str] | None, tmp_path: Path) -> None:
    path = tmp_path / "mcp.sock"

    async def test() -> None:
        state = State()
        async with trio.open_nursery() as nursery:
            assert await nursery.start(serve_unix, make_server(state), path) == str(path)
            async with Client.connect_unix(path, versions=versions) as client:
                assert text(await client.call_tool("echo", {"text": "unix"})) == "unix"
                with pytest.raises(RequestTimeout):
                    await client.call_tool("slow", timeout=0.05)
                with trio.fail_after(5):
                    await state.cancelled.wait()
            nursery.cancel_scope.cancel()
        assert not path.exists()

    run(test, mock_clock=False)


def test_unix_socket_path_taken(tmp_path: Path) -> None:
    path = tmp_path / "taken"
    path.write_text("")

    async def test() -> None:
        with pytest.raises(OSError, match="in use"):
            await serve_unix(make_server(State()), path)

    run(test, mock_clock=False)
    assert path.read_text() == ""


# ---------------------------------------------------------------------- stdio


SERVER = [sys.executable, __file__, "serve"]


@pytest.mark.parametrize("versions", ERAS, ids=ERA_IDS)
def test_stdio(versions: list[str] | None) -> None:
    async def test() -> None:
        notes: list[Notification] = []
        options: dict[str, Any] = {"versions": versions, "handlers": HANDLERS}
        async with Client.connect_stdio(
            SERVER, stderr=subprocess.PIPE, on_notification=notes.append, **options
        ) as client:
            assert client.server_info == {"name": "trio-test", "version": "1.0"}
            assert text(await client.call_tool("echo", {"text": "stdio"})) == "stdio"
            assert text(await client.call_tool("ask")) == "Ada|sampled|file:///tmp"
            seen: list[Mapping[str, Any]] = []
            await client.call_tool("progress", {"n": 2}, on_progress=seen.append)
            assert [p["progress"] for p in seen] == [1, 2]
            with pytest.raises(RequestTimeout):
                await client.call_tool("slow", timeout=0.05)
            params: dict[str, Any] = {"name": "log", "arguments": {}}
            if client.era is Era.INITIALIZE:
                await client.set_logging_level("warning")
            else:
                params["_meta"] = {LOG_LEVEL: "warning"}
            await client.request("tools/call", params)
            async with trio.open_nursery() as nursery:
                for i in range(5):
                    nursery.start_soon(client.call_tool, "gather", {"n": 5, "i": i})
        assert client.process is not None
        assert client.process.returncode == 0  # it exited when its stdin closed
        assert b"serving" in client.stderr
        assert [n.params for n in notes if n.method == "notifications/message"] == [
            {"level": "warning", "data": {"said": "warning"}, "logger": "tests"}
        ]

    run(test, mock_clock=False, limit=30)


def test_stdio_server_crash_mid_request() -> None:
    async def test() -> None:
        async with Client.connect_stdio(SERVER, stderr=subprocess.PIPE) as client:
            with pytest.raises(ConnectionLost):
                await client.call_tool("crash", timeout=None)
            with pytest.raises(ConnectionLost):
                await client.call_tool("echo")
        assert client.process is not None
        assert client.process.returncode == 3
        assert b"crashing" in client.stderr

    run(test, mock_clock=False)


def test_stdio_server_that_exits_at_once() -> None:
    async def test() -> None:
        with pytest.raises(ConnectionLost):
            async with Client.connect_stdio([sys.executable, "-c", "pass"]):
                pass  # pragma: no cover

    run(test, mock_clock=False)


STUBBORN = textwrap.dedent(
    """
    import json, signal, sys, time
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    request = json.loads(sys.stdin.readline())
    result = {"protocolVersion": "2025-11-25", "capabilities": {},
              "serverInfo": {"name": "stubborn", "version": "0"}}
    print(json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": result}), flush=True)
    sys.stdin.read()  # to EOF, then linger, ignoring SIGTERM
    time.sleep(60)
    """
)


def test_stdio_shutdown_escalates_to_kill() -> None:
    async def test() -> None:
        command = [sys.executable, "-c", STUBBORN]
        client = Client.connect_stdio(command, versions=["2025-11-25"], shutdown_timeout=0.3)
        start = trio.current_time()
        async with client:
            assert client.server_info == {"name": "stubborn", "version": "0"}
        assert client.process is not None
        assert client.process.returncode == -signal.SIGKILL
        assert trio.current_time() - start < 10

    run(test, mock_clock=False)


def test_the_module_example_runs(tmp_path: Path) -> None:
    doc = mcp_trio.__doc__
    assert doc is not None
    example = textwrap.dedent(doc[doc.index("    import sys") : doc.index("The same handler")])
    script = tmp_path / "demo.py"
    script.write_text(example)
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=60, check=True
    )
    lines = done.stdout.splitlines()
    assert lines[0] == "speaking 2026-07-28 to demo"
    assert lines[-1] == "HELLO"


def test_serve_stream_passes_the_session_options() -> None:
    async def test() -> None:
        here, there = trio.testing.memory_stream_pair()
        server = make_server(State())
        async with trio.open_nursery() as nursery:
            nursery.start_soon(lambda: serve_stream(server, there, versions=["2025-11-25"]))
            async with Client(here) as client:  # it probes, then falls back
                assert client.protocol_version == "2025-11-25"

    run(test)


def test_a_2026_client_and_an_initialize_only_server() -> None:
    async def test() -> None:
        here, there = trio.testing.memory_stream_pair()
        server = make_server(State())
        async with trio.open_nursery() as nursery:
            nursery.start_soon(lambda: serve_stream(server, there, versions=["2025-11-25"]))
            with pytest.raises(McpError):
                async with Client(here, versions=["2026-07-28"]):
                    pass  # pragma: no cover

    run(test, mock_clock=False, limit=2)


if __name__ == "__main__" and sys.argv[1:] == ["serve"]:

    async def _serve() -> None:
        sys.stderr.write("serving\n")
        sys.stderr.flush()
        await serve_stdio(make_server(State()))

    trio.run(_serve)


# ---------------------------------------------------------------------- application methods


@pytest.mark.parametrize("version", ["2025-11-25", "2026-07-28"])
def test_a_vendor_method_over_streamable_http(version: str) -> None:
    """Issue 18, item 5, over trio's HTTP server and client: the Server's methods= reach
    its sessions, the client's methods= its connection, in either era."""
    pytest.importorskip("h11")
    from mcp_sansio import Direction, Kind, MethodSpec

    specs = [
        MethodSpec(
            "acme/search", Kind.REQUEST, Direction.CLIENT_TO_SERVER, gate=("experimental", "acme")
        ),
        MethodSpec(
            "acme/indexed",
            Kind.NOTIFICATION,
            Direction.SERVER_TO_CLIENT,
            gate=("experimental", "acme"),
        ),
    ]
    server = Server("acme", "1.0", methods=specs, experimental={"acme": {}})

    @server.method("acme/search")
    async def search(ctx: Context, params: Mapping[str, Any]) -> dict[str, Any]:
        "Search."
        ctx.notify("acme/indexed", {"count": 1})
        return {"hits": [params["q"]]}

    notes: list[Notification] = []

    async def main() -> None:
        with trio.fail_after(20):
            async with trio.open_nursery() as nursery:
                port = await nursery.start(functools.partial(mcp_trio.serve_http, server))
                url = f"http://127.0.0.1:{port}/mcp"
                async with Client.connect_http(
                    url, versions=[version], methods=specs, on_notification=notes.append
                ) as client:
                    got = await client.request("acme/search", {"q": "mcp"})
                    assert got["hits"] == ["mcp"]
                    for _ in range(100):
                        if notes:
                            break
                        await trio.sleep(0.02)
                nursery.cancel_scope.cancel()

    trio.run(main)
    assert [(n.method, n.params) for n in notes] == [("acme/indexed", {"count": 1})]
