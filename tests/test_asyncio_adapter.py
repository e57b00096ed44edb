"""The asyncio adapter: a client and a server, over an in-memory pipe
(:meth:`Client.connect_server`), a socket pair, TCP, a Unix socket and stdio (a subprocess
running :func:`serve_stdio`), in both eras, with the failure paths.

Every test runs its coroutine under ``asyncio.run`` with a timeout (:func:`run`).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import io
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest

from mcp_sansio import Era, Notification
from mcp_sansio.asyncio import (
    Client,
    ConnectionLost,
    Context,
    McpError,
    RequestTimeout,
    serve_stream,
    serve_tcp,
    serve_unix,
)
from mcp_sansio.server import Server, ToolError

T = TypeVar("T")
TESTS = Path(__file__).resolve().parent

LEGACY = ["2025-11-25"]
MODERN = ["2026-07-28"]
ERAS = pytest.mark.parametrize(
    "versions", [None, LEGACY, MODERN], ids=["both", "2025-11-25", "2026-07-28"]
)
TWO_ERAS = pytest.mark.parametrize("versions", [LEGACY, MODERN], ids=["2025-11-25", "2026-07-28"])
TRANSPORTS = pytest.mark.parametrize("transport", ["memory", "socketpair", "tcp", "unix", "stdio"])
LOG_LEVEL = "io.modelcontextprotocol/logLevel"


def run(main: Callable[[], Awaitable[T]], timeout: float = 20.0) -> T:
    """Run ``main()`` in a fresh event loop, failing after ``timeout`` seconds."""

    async def bounded() -> T:
        return await asyncio.wait_for(main(), timeout)

    return asyncio.run(bounded())


def era_of(versions: list[str] | None) -> Era:
    return Era.INITIALIZE if versions == LEGACY else Era.STATELESS


# ---------------------------------------------------------------------- the server


class Probe:
    """What the server's handlers report to the test (in-process servers only)."""

    def __init__(self) -> None:
        self.started = asyncio.Event()
        self.cancelled = asyncio.Event()


def build_server(probe: Probe | None = None) -> Server:
    """The server under test (also run by the stdio subprocess, without a probe)."""
    server = Server("test-server", "1.0", instructions="Be brief.")
    text_arg = {"type": "object", "properties": {"text": {"type": "string"}}}

    @server.tool(input_schema=text_arg)
    def echo(ctx: Context, arguments: dict[str, Any]) -> str:
        "Echo the text back."
        return str(arguments["text"])

    @server.tool()
    async def echo_later(ctx: Context, arguments: dict[str, Any]) -> str:
        "Echo the value after a delay."
        await ctx.sleep(arguments["delay"])
        return str(arguments["value"])

    @server.tool()
    async def forever(ctx: Context, arguments: dict[str, Any]) -> str:
        "Never answer (until cancelled)."
        if probe is not None:
            probe.started.set()
        try:
            await ctx.sleep(3600)
        except asyncio.CancelledError:
            if probe is not None:
                probe.cancelled.set()
            raise
        return "never"

    @server.tool()
    async def steps(ctx: Context, arguments: dict[str, Any]) -> str:
        "Report progress for each step."
        count = arguments["count"]
        for i in range(count):
            await ctx.sleep(arguments.get("interval", 0))
            ctx.progress(i + 1, count, f"step {i + 1}")
        return "done"

    @server.tool()
    async def ask_name(ctx: Context, arguments: dict[str, Any]) -> str:
        "Ask the user's name."
        schema = {"type": "object", "properties": {"name": {"type": "string"}}}
        answer = await ctx.elicit("What is your name?", schema)
        if answer["action"] != "accept":
            return "no name"
        return f"hello {answer['content']['name']}"

    @server.tool()
    async def summarize(ctx: Context, arguments: dict[str, Any]) -> str:
        "Ask the client's model."
        result = await ctx.sample(
            {
                "messages": [{"role": "user", "content": {"type": "text", "text": "sum up"}}],
                "maxTokens": 20,
            }
        )
        return f"model said: {result['content']['text']}"

    @server.tool()
    async def roots(ctx: Context, arguments: dict[str, Any]) -> str:
        "List the client's roots."
        return " ".join(root["uri"] for root in (await ctx.list_roots())["roots"])

    @server.tool()
    def chatty(ctx: Context, arguments: dict[str, Any]) -> str:
        "Log at four levels."
        for level in ("debug", "info", "warning", "error"):
            ctx.log(level, f"a {level} message", "chatty")
        return "logged"

    @server.tool()
    def touch(ctx: Context, arguments: dict[str, Any]) -> str:
        "Say that a resource changed."
        ctx.resource_updated(arguments["uri"])
        return "touched"

    @server.tool()
    def broken(ctx: Context, arguments: dict[str, Any]) -> str:
        "Fail."
        raise ToolError("it broke")

    @server.tool()
    async def die(ctx: Context, arguments: dict[str, Any]) -> str:
        "Kill the server process, mid-request."
        await ctx.sleep(arguments.get("delay", 0))
        os._exit(3)

    @server.tool()
    def die_leaving_a_child(ctx: Context, arguments: dict[str, Any]) -> str:
        "Exit, leaving a child that holds stdout open (so the client sees no EOF)."
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
        Path(arguments["pidfile"]).write_text(str(child.pid))
        os._exit(4)

    @server.resource("test://static", mime_type="text/plain")
    def static(ctx: Context, uri: str) -> str:
        "A fixed text."
        return "static text"

    @server.resource_template("test://items/{id}")
    def item(ctx: Context, uri: str, variables: dict[str, str]) -> str:
        "One item."
        return f"item {variables['id']}"

    @server.prompt(arguments=[{"name": "topic", "required": True}])
    def greet(ctx: Context, arguments: dict[str, str]) -> list[dict[str, Any]]:
        "Greet a topic."
        text = f"Tell me about {arguments['topic']}."
        return [{"role": "user", "content": {"type": "text", "text": text}}]

    @server.completion
    def complete(
        ctx: Context, ref: dict[str, Any], argument: dict[str, Any], context: dict[str, Any]
    ) -> list[str]:
        return [v for v in ("apple", "apricot", "banana") if v.startswith(argument["value"])]

    return server


# The subprocess server: argv[1] is the JSON of the serve options, argv[2] a mode
# ("normal"; "linger": ignore stdin EOF; "stubborn": also ignore SIGTERM).
SERVER_SCRIPT = f"""
import asyncio, json, signal, sys, time
sys.path.insert(0, {str(TESTS)!r})
from test_asyncio_adapter import build_server
from mcp_sansio.asyncio import serve_stdio

options, mode = json.loads(sys.argv[1]), sys.argv[2]
if mode == "stubborn":
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
print("server starting", file=sys.stderr, flush=True)
asyncio.run(serve_stdio(build_server(), **options))
if mode != "normal":
    time.sleep(60)
"""


@contextlib.contextmanager
def server_command(options: dict[str, Any] | None = None, mode: str = "normal") -> Any:
    with tempfile.TemporaryDirectory(prefix="mcp") as folder:
        script = Path(folder, "server.py")
        script.write_text(SERVER_SCRIPT)
        yield [sys.executable, str(script), json.dumps(options or {}), mode]


# ---------------------------------------------------------------------- the client


class Seen:
    """What the client's handlers and callbacks saw."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, Any, str | None]] = []
        self.notes: list[Notification] = []

    def elicit(self, ctx: Context, params: dict[str, Any]) -> dict[str, Any]:
        self.asked.append((ctx.method, ctx.request_id, ctx.job.key))
        return {"action": "accept", "content": {"name": "Ada"}}

    async def sample(self, ctx: Context, params: dict[str, Any]) -> dict[str, Any]:
        self.asked.append((ctx.method, ctx.request_id, ctx.job.key))
        await asyncio.sleep(0)
        return {
            "role": "assistant",
            "content": {"type": "text", "text": "all good"},
            "model": "test-model",
        }

    def roots(self, ctx: Context, params: dict[str, Any]) -> dict[str, Any]:
        self.asked.append((ctx.method, ctx.request_id, ctx.job.key))
        return {"roots": [{"uri": "file:///a"}, {"uri": "file:///b"}]}

    def handlers(self) -> dict[str, Callable[..., Any]]:
        return {
            "elicitation/create": self.elicit,
            "sampling/createMessage": self.sample,
            "roots/list": self.roots,
        }

    def note(self, note: Notification) -> None:
        self.notes.append(note)

    def methods(self, method: str) -> list[dict[str, Any]]:
        return [dict(n.params or {}) for n in self.notes if n.method == method]


@contextlib.asynccontextmanager
async def connected(
    transport: str = "memory",
    versions: list[str] | None = None,
    *,
    probe: Probe | None = None,
    seen: Seen | None = None,
    server_options: dict[str, Any] | None = None,
    **options: Any,
) -> AsyncIterator[Client]:
    """A client connected to :func:`build_server` over ``transport``."""
    seen = seen or Seen()
    options = {
        "versions": versions,
        "handlers": seen.handlers(),
        "on_notification": seen.note,
        **options,
    }
    server = build_server(probe)
    server_options = server_options or {}
    if transport == "memory":
        async with Client.connect_server(
            server, server_options=server_options, **options
        ) as client:
            yield client
        assert client._server_task is not None
        assert client._server_task.done()
        assert not client._server_task.cancelled()  # it saw the end of its input and ended
    elif transport == "socketpair":
        a, b = socket.socketpair()
        reader, writer = await asyncio.open_connection(sock=b)
        serving = asyncio.create_task(serve_stream(server, reader, writer, **server_options))
        try:
            reader, writer = await asyncio.open_connection(sock=a)
            async with Client(reader, writer, **options) as client:
                yield client
        finally:
            await asyncio.wait_for(serving, 5)
    elif transport == "tcp":
        async with await serve_tcp(server, **server_options) as listener:
            assert isinstance(listener.port, int)
            async with Client.connect_tcp("127.0.0.1", listener.port, **options) as client:
                yield client
    elif transport == "unix":
        with tempfile.TemporaryDirectory(prefix="mcp") as folder:
            path = os.path.join(folder, "s")
            async with await serve_unix(server, path, **server_options) as listener:
                assert listener.address == path
                async with Client.connect_unix(path, **options) as client:
                    yield client
    else:
        with server_command(server_options) as command:
            async with Client.connect_stdio(command, stderr=io.BytesIO(), **options) as client:
                yield client


def text(result: dict[str, Any]) -> str:
    return str(result["content"][0]["text"])


# ---------------------------------------------------------------------- exchanges


@TRANSPORTS
@ERAS
def test_exchange(transport: str, versions: list[str] | None) -> None:
    """Every client method, and the server asking the client for input, per transport
    and era."""

    async def main() -> None:
        seen = Seen()
        async with connected(transport, versions, seen=seen) as client:
            era = era_of(versions)
            assert client.era is era
            assert client.protocol_version == (versions or MODERN)[0]
            assert client.server_info is not None
            assert client.server_info["name"] == "test-server"
            assert client.instructions == "Be brief."
            assert client.server_capabilities is not None
            assert "tools" in client.server_capabilities
            if era is Era.INITIALIZE:
                assert await client.ping() == {}
            tools = await client.list_tools()
            assert "echo" in {tool["name"] for tool in tools["tools"]}
            assert text(await client.call_tool("echo", {"text": "hi"})) == "hi"
            resources = await client.list_resources()
            assert [r["uri"] for r in resources["resources"]] == ["test://static"]
            templates = await client.list_resource_templates()
            assert templates["resourceTemplates"][0]["uriTemplate"] == "test://items/{id}"
            read = await client.read_resource("test://items/7")
            assert read["contents"][0]["text"] == "item 7"
            prompts = await client.list_prompts()
            assert [p["name"] for p in prompts["prompts"]] == ["greet"]
            prompt = await client.get_prompt("greet", {"topic": "owls"})
            assert prompt["messages"][0]["content"]["text"] == "Tell me about owls."
            done = await client.complete({"type": "ref/prompt", "name": "greet"}, "topic", "ap")
            assert done["completion"]["values"] == ["apple", "apricot"]
            # The server asks the client: the same handlers in both eras.
            assert text(await client.call_tool("ask_name")) == "hello Ada"
            assert text(await client.call_tool("summarize")) == "model said: all good"
            assert text(await client.call_tool("roots")) == "file:///a file:///b"
            result = await client.call_tool("broken")
            assert result["isError"] is True
            assert text(result) == "it broke"
            with pytest.raises(McpError) as caught:
                await client.call_tool("no such tool")
            assert caught.value.code == -32602
        assert client.closed
        methods = [method for method, _, _ in seen.asked]
        assert methods == ["elicitation/create", "sampling/createMessage", "roots/list"]
        for _, request_id, key in seen.asked:
            if era is Era.INITIALIZE:  # a server->client request
                assert request_id is not None
                assert key is None
            else:  # an input request of an input_required answer
                assert request_id is None
                assert key is not None

    run(main)


def test_both_eras_client_falls_back_to_initialize() -> None:
    async def main() -> None:
        async with connected(server_options={"versions": LEGACY}) as client:
            assert client.era is Era.INITIALIZE
            assert client.protocol_version == "2025-11-25"
            assert text(await client.call_tool("echo", {"text": "old"})) == "old"

    run(main)


@pytest.mark.parametrize("transport", ["memory", "stdio"])
@TWO_ERAS
def test_many_requests_in_flight(transport: str, versions: list[str]) -> None:
    async def main() -> None:
        async with connected(transport, versions) as client:
            count = 20
            started = time.monotonic()
            results = await asyncio.gather(
                *(
                    client.call_tool("echo_later", {"delay": (count - i) * 0.02, "value": i})
                    for i in range(count)
                )
            )
            assert [text(r) for r in results] == [str(i) for i in range(count)]
            # Sequentially this would take 4.2 s.
            assert time.monotonic() - started < 2.5

    run(main)


# ---------------------------------------------------------------------- time and cancel


@TWO_ERAS
def test_timeout_cancels_the_servers_handler(versions: list[str]) -> None:
    async def main() -> None:
        probe = Probe()
        async with connected("memory", versions, probe=probe) as client:
            started = time.monotonic()
            with pytest.raises(RequestTimeout):
                await client.call_tool("forever", timeout=0.2)
            assert 0.15 < time.monotonic() - started < 2
            await asyncio.wait_for(probe.cancelled.wait(), 5)
            assert client.session.calls == ()
            assert text(await client.call_tool("echo", {"text": "still here"})) == "still here"

    run(main)


@TWO_ERAS
def test_caller_cancellation_cancels_the_request(versions: list[str]) -> None:
    async def main() -> None:
        probe = Probe()
        async with connected("memory", versions, probe=probe) as client:
            task = asyncio.create_task(client.call_tool("forever"))
            await asyncio.wait_for(probe.started.wait(), 5)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            await asyncio.wait_for(probe.cancelled.wait(), 5)
            assert client.session.calls == ()
            assert text(await client.call_tool("echo", {"text": "on"})) == "on"

    run(main)


def test_cancellation_reaches_the_clients_handler() -> None:
    """The other way round: the client gives up on a tool that is asking it a question; the
    server's handler is cancelled, so its question is cancelled too, and the client's
    handler task with it (initialize era: the question is a server->client request)."""

    async def main() -> None:
        asked, cancelled = asyncio.Event(), asyncio.Event()

        async def elicit(ctx: Context, params: dict[str, Any]) -> dict[str, Any]:
            asked.set()
            try:
                await asyncio.sleep(3600)
            except asyncio.CancelledError:
                cancelled.set()
                raise
            return {"action": "decline"}

        handlers = {"elicitation/create": elicit}
        async with connected("memory", LEGACY, handlers=handlers) as client:
            task = asyncio.create_task(client.call_tool("ask_name"))
            await asyncio.wait_for(asked.wait(), 5)
            task.cancel()
            await asyncio.wait_for(cancelled.wait(), 5)
            with pytest.raises(asyncio.CancelledError):
                await task
            assert client.session.jobs == ()

    run(main)


@TWO_ERAS
def test_progress_callback(versions: list[str]) -> None:
    async def main() -> None:
        progress: list[tuple[float, float | None, str | None]] = []
        async_seen: list[float] = []

        def on_progress(params: Any) -> None:
            progress.append((params["progress"], params.get("total"), params.get("message")))

        async def on_progress_async(params: Any) -> None:
            async_seen.append(params["progress"])

        async with connected("memory", versions) as client:
            result = await client.call_tool("steps", {"count": 4}, on_progress=on_progress)
            assert text(result) == "done"
            assert progress == [(i, 4, f"step {i}") for i in range(1, 5)]
            await client.call_tool("steps", {"count": 3}, on_progress=on_progress_async)
            for _ in range(10):
                await asyncio.sleep(0)
            assert async_seen == [1, 2, 3]

    run(main)


@TWO_ERAS
def test_reset_on_progress_with_a_hard_maximum(versions: list[str]) -> None:
    async def main() -> None:
        slow = {"count": 8, "interval": 0.1}  # 0.8 s in all, progress every 0.1 s
        values: list[float] = []

        def on_progress(params: Any) -> None:
            values.append(params["progress"])

        async with connected("memory", versions) as client:
            with pytest.raises(RequestTimeout):
                await client.call_tool("steps", slow, timeout=0.3, on_progress=on_progress)
            result = await client.call_tool(
                "steps", slow, timeout=0.3, reset_on_progress=True, on_progress=on_progress
            )
            assert text(result) == "done"
            values.clear()
            started = time.monotonic()
            with pytest.raises(RequestTimeout):
                await client.call_tool(
                    "steps",
                    slow,
                    timeout=0.3,
                    reset_on_progress=True,
                    max_timeout=0.45,
                    on_progress=on_progress,
                )
            assert time.monotonic() - started < 0.75
            assert values == sorted(values)
            assert 1 <= len(values) < 8

    run(main)


def test_no_busy_timer_after_an_input_required_round() -> None:
    """After a 2026 call that went through input_required, its first deadline must not
    keep the timer firing (the session keeps the call under its first id)."""

    async def main() -> None:
        async with connected("memory", MODERN, timeout=0.2) as client:
            session = client.session
            expiries = 0
            expire = session.expire

            def counting(now: float) -> Any:
                nonlocal expiries
                expiries += 1
                return expire(now)

            session.expire = counting  # type: ignore[method-assign]
            assert text(await client.call_tool("ask_name")) == "hello Ada"
            await asyncio.sleep(0.6)
            assert expiries <= 2
            assert text(await client.call_tool("echo", {"text": "ok"})) == "ok"

    run(main)


# ---------------------------------------------------------------------- notifications


@TWO_ERAS
def test_logging_levels(versions: list[str]) -> None:
    async def main() -> None:
        seen = Seen()
        async with connected("memory", versions, seen=seen) as client:
            if versions == LEGACY:
                await client.call_tool("chatty")  # no level set: everything
                assert len(seen.methods("notifications/message")) == 4
                seen.notes.clear()
                await client.set_logging_level("warning")
                await client.call_tool("chatty")
            else:
                await client.call_tool("chatty")  # no logLevel on the request: nothing
                assert seen.methods("notifications/message") == []
                params = {"name": "chatty", "arguments": {}, "_meta": {LOG_LEVEL: "warning"}}
                await client.request("tools/call", params)
            logs = seen.methods("notifications/message")
            assert [(m["level"], m["data"], m["logger"]) for m in logs] == [
                ("warning", "a warning message", "chatty"),
                ("error", "a error message", "chatty"),
            ]

    run(main)


def test_subscribe_and_updates_initialize_era() -> None:
    async def main() -> None:
        seen = Seen()
        async with connected("memory", LEGACY, seen=seen) as client:
            await client.call_tool("touch", {"uri": "test://static"})
            assert seen.methods("notifications/resources/updated") == []
            await client.subscribe("test://static")
            await client.call_tool("touch", {"uri": "test://static"})
            assert seen.methods("notifications/resources/updated") == [{"uri": "test://static"}]
            await client.unsubscribe("test://static")
            await client.call_tool("touch", {"uri": "test://static"})
            assert len(seen.methods("notifications/resources/updated")) == 1

    run(main)


def test_listen_and_updates_2026() -> None:
    async def main() -> None:
        seen = Seen()
        acknowledged = asyncio.Event()

        def on_notification(note: Notification) -> None:
            seen.note(note)
            if note.method == "notifications/subscriptions/acknowledged":
                acknowledged.set()

        async with connected(
            "memory", MODERN, seen=seen, on_notification=on_notification
        ) as client:
            # listen() returns the acknowledgement; the stream goes on meanwhile.
            ack = await client.listen(resource_uris=["test://static"])
            assert ack["notifications"] == {"resourceSubscriptions": ["test://static"]}
            assert acknowledged.is_set()
            assert client.session.calls == ()
            await client.call_tool("touch", {"uri": "test://static"})
            await client.call_tool("touch", {"uri": "test://other"})
            updates = seen.methods("notifications/resources/updated")
            assert [u["uri"] for u in updates] == ["test://static"]
            await client.call_tool("touch", {"uri": "test://static"})  # still listening
            assert len(seen.methods("notifications/resources/updated")) == 2

    run(main)


# ---------------------------------------------------------------------- failures


@pytest.mark.parametrize("versions", [None, LEGACY], ids=["both", "2025-11-25"])
def test_server_crash_mid_request(versions: list[str] | None) -> None:
    async def main() -> None:
        async with connected("stdio", versions) as client:
            assert text(await client.call_tool("echo", {"text": "alive"})) == "alive"
            pending = asyncio.create_task(client.call_tool("forever"))
            with pytest.raises(ConnectionLost):
                await client.call_tool("die", {"delay": 0.1})
            with pytest.raises(ConnectionLost):
                await pending
            with pytest.raises(ConnectionLost):
                await client.call_tool("echo", {"text": "gone"})
            assert client.closed
        assert client.process is not None
        assert client.process.returncode == 3

    run(main)


def raw_lines(*messages: dict[str, Any] | bytes) -> bytes:
    return b"".join(m if isinstance(m, bytes) else json.dumps(m).encode() + b"\n" for m in messages)


RAW_INITIALIZE: dict[str, Any] = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"},
    },
}
RAW_INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def tool_call(request_id: int, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    params = {"name": name, "arguments": arguments}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


def test_server_dies_but_its_stdout_stays_open(tmp_path: Path) -> None:
    """EOF never comes (a child holds the pipe): the client notices the exit anyway."""
    pidfile = tmp_path / "child.pid"

    async def main() -> None:
        async with connected("stdio", LEGACY) as client:
            started = time.monotonic()
            with pytest.raises(ConnectionLost):
                await client.call_tool("die_leaving_a_child", {"pidfile": str(pidfile)})
            assert time.monotonic() - started < 5
        assert client.process is not None
        assert client.process.returncode == 4

    try:
        run(main)
    finally:
        with contextlib.suppress(FileNotFoundError, ProcessLookupError, ValueError):
            os.kill(int(pidfile.read_text()), signal.SIGKILL)


def test_garbage_to_the_server() -> None:
    async def main() -> None:
        a, b = socket.socketpair()
        reader, writer = await asyncio.open_connection(sock=b)
        serving = asyncio.create_task(serve_stream(build_server(), reader, writer))
        reader, writer = await asyncio.open_connection(sock=a)
        writer.write(b"this is not JSON\n")
        error = json.loads(await reader.readline())
        assert error["id"] is None
        assert error["error"]["code"] == -32700
        writer.write(raw_lines(RAW_INITIALIZE))
        answer = json.loads(await reader.readline())
        assert answer["id"] == 1
        assert answer["result"]["protocolVersion"] == "2025-11-25"
        writer.write(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n{oops\n')
        assert json.loads(await reader.readline())["error"]["code"] == -32700
        writer.write(b'{"jsonrpc": "2.0", "id": 2, "method": "ping"}\n')
        assert json.loads(await reader.readline()) == {"jsonrpc": "2.0", "id": 2, "result": {}}
        writer.close()
        await asyncio.wait_for(serving, 5)
        await writer.wait_closed()

    run(main)


class RawServer:
    """A scripted peer on a socket pair: records every line the client sends."""

    def __init__(self, answer: Callable[[RawServer, dict[str, Any]], Any]) -> None:
        self.answer = answer
        self.received: list[dict[str, Any]] = []
        self.writer: asyncio.StreamWriter | None = None

    async def start(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        a, b = socket.socketpair()
        reader, self.writer = await asyncio.open_connection(sock=b)
        self.task = asyncio.create_task(self._serve(reader))
        return await asyncio.open_connection(sock=a)

    async def _serve(self, reader: asyncio.StreamReader) -> None:
        while line := await reader.readline():
            message = json.loads(line)
            self.received.append(message)
            self.answer(self, message)

    def send(self, data: bytes) -> None:
        assert self.writer is not None
        self.writer.write(data)

    async def close(self) -> None:
        assert self.writer is not None
        self.writer.close()
        await asyncio.wait_for(self.task, 5)
        await self.writer.wait_closed()


def initialize_result(request_id: Any) -> bytes:
    result = {
        "protocolVersion": "2025-11-25",
        "capabilities": {"tools": {}},
        "serverInfo": {"name": "raw", "version": "0"},
    }
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "result": result}).encode() + b"\n"


def test_garbage_to_the_client() -> None:
    def answer(raw: RawServer, message: dict[str, Any]) -> None:
        if message.get("method") == "initialize":
            raw.send(b"\xff\xfe garbage\n" + initialize_result(message["id"]))
        elif message.get("method") == "ping":
            raw.send(b"[1, 2\n")  # more garbage, then the answer
            raw.send(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": {}}).encode())
            raw.send(b"\n")

    async def main() -> None:
        raw = RawServer(answer)
        async with Client(*await raw.start(), versions=LEGACY) as client:
            assert client.server_info == {"name": "raw", "version": "0"}
            assert await client.ping() == {}
        await raw.close()
        methods = [m.get("method") or m.get("error", {}).get("code") for m in raw.received]
        assert methods == ["initialize", -32700, "notifications/initialized", "ping", -32700]

    run(main)


def test_a_peer_that_never_answers() -> None:
    async def main() -> None:
        raw = RawServer(lambda raw, message: None)
        started = time.monotonic()
        with pytest.raises(RequestTimeout):
            await Client(*await raw.start(), probe_timeout=0.2, timeout=0.3).open()
        assert time.monotonic() - started < 2
        await raw.close()
        # The probe timed out; the client fell back to initialize, which timed out too.
        assert [m.get("method") for m in raw.received][:2] == ["server/discover", "initialize"]

    run(main)


def test_a_malformed_initialize_result() -> None:
    """The connection breaks (RemoteProtocolError): opening fails, nothing hangs."""

    def answer(raw: RawServer, message: dict[str, Any]) -> None:
        result = {"protocolVersion": "2025-11-25", "capabilities": {}}  # no serverInfo
        raw.send(raw_lines({"jsonrpc": "2.0", "id": message["id"], "result": result}))

    async def main() -> None:
        raw = RawServer(answer)
        client = Client(*await raw.start(), versions=LEGACY)
        with pytest.raises(ConnectionLost, match="serverInfo"):
            await client.open()
        await raw.close()
        with pytest.raises(ConnectionLost):  # closed: as after the peer's death
            await client.ping()

    run(main)


def test_a_peer_that_stops_answering() -> None:
    def answer(raw: RawServer, message: dict[str, Any]) -> None:
        if message.get("method") == "initialize":
            raw.send(initialize_result(message["id"]))

    async def main() -> None:
        raw = RawServer(answer)
        async with Client(*await raw.start(), versions=LEGACY, timeout=0.2) as client:
            with pytest.raises(RequestTimeout):
                await client.list_tools()
            with pytest.raises(RequestTimeout):
                await client.ping(timeout=0.1)
            with pytest.raises(asyncio.TimeoutError):  # the caller gives up first
                await asyncio.wait_for(client.ping(timeout=None), 0.1)
        await raw.close()
        cancelled = [m for m in raw.received if m.get("method") == "notifications/cancelled"]
        assert [m["params"]["requestId"] for m in cancelled] == [1, 2, 3]

    run(main)


def test_the_server_closes_the_connection() -> None:
    def answer(raw: RawServer, message: dict[str, Any]) -> None:
        if message.get("method") == "initialize":
            raw.send(initialize_result(message["id"]))
        elif message.get("method") == "tools/list":
            assert raw.writer is not None
            raw.writer.close()

    async def main() -> None:
        raw = RawServer(answer)
        async with Client(*await raw.start(), versions=LEGACY) as client:
            with pytest.raises(ConnectionLost):
                await client.list_tools()
            assert client.closed
        await raw.close()

    run(main)


# ---------------------------------------------------------------------- stdio


def test_stdio_shutdown_and_stderr() -> None:
    async def main() -> None:
        stderr = io.StringIO()
        with server_command() as command:
            async with Client.connect_stdio(command, versions=MODERN, stderr=stderr) as client:
                assert text(await client.call_tool("echo", {"text": "x"})) == "x"
        assert client.process is not None
        assert client.process.returncode == 0  # it exited on stdin EOF
        assert "server starting" in stderr.getvalue()

    run(main)


@pytest.mark.parametrize(
    ("mode", "returncode"), [("linger", -signal.SIGTERM), ("stubborn", -signal.SIGKILL)]
)
def test_stdio_shutdown_escalates(mode: str, returncode: int) -> None:
    async def main() -> None:
        with server_command(mode=mode) as command:
            client = Client.connect_stdio(
                command, versions=LEGACY, shutdown_timeout=0.3, stderr=subprocess.DEVNULL
            )
            async with client:
                assert await client.ping() == {}
                started = time.monotonic()
        assert time.monotonic() - started < 3
        assert client.process is not None
        assert client.process.returncode == returncode

    run(main)


def test_stdio_giving_up_on_a_server_that_never_answers() -> None:
    async def main() -> None:
        command = [sys.executable, "-c", "import time; time.sleep(30)"]
        client = Client.connect_stdio(command, shutdown_timeout=0.2)
        started = time.monotonic()
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(client.open(), 0.5)
        assert time.monotonic() - started < 3
        assert client.process is not None
        assert client.process.returncode == -signal.SIGTERM

    run(main)


def test_stdio_server_that_fails_to_start() -> None:
    async def main() -> None:
        command = [sys.executable, "-c", "import sys; sys.exit(2)"]
        with pytest.raises(ConnectionLost):
            await Client.connect_stdio(command).open()

    run(main)


def test_stdio_server_on_regular_files(tmp_path: Path) -> None:
    """stdin and stdout may be regular files (asyncio's pipe transports refuse them)."""
    requests = tmp_path / "in.jsonl"
    requests.write_bytes(
        raw_lines(
            RAW_INITIALIZE, RAW_INITIALIZED, b"garbage\n", tool_call(2, "echo", {"text": "x"})
        )
    )
    with server_command() as command, requests.open("rb") as stdin:  # stdout: a pipe
        done = subprocess.run(command, stdin=stdin, stdout=subprocess.PIPE, timeout=20)
    assert done.returncode == 0
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert [a["id"] for a in answers] == [1, None, 2]
    assert answers[1]["error"]["code"] == -32700
    out = tmp_path / "out.jsonl"
    with server_command() as command, requests.open("rb") as stdin, out.open("wb") as stdout:
        subprocess.run(command, stdin=stdin, stdout=stdout, stderr=subprocess.DEVNULL, timeout=20)
    assert out.read_bytes() == done.stdout


def test_stdio_server_answers_after_stdin_closes() -> None:
    """Half-closed is not closed: requests read before stdin's EOF are still answered."""
    messages = raw_lines(
        RAW_INITIALIZE, RAW_INITIALIZED, tool_call(2, "echo_later", {"delay": 0.1, "value": 1})
    )
    with server_command() as command:
        done = subprocess.run(
            command, input=messages, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=20
        )
    assert [json.loads(line)["id"] for line in done.stdout.splitlines()] == [1, 2]


# ---------------------------------------------------------------------- in-memory pipe


def test_memory_pipe() -> None:
    """One direction of connect_server's pipe: bytes in order, reads of at most ``n``,
    the end of the stream after ``close()``, no write after it, and a writer held back
    while more than the limit is unread."""
    from mcp_sansio.asyncio._streams import _PIPE_LIMIT, _MemoryPipe

    async def main() -> None:
        pipe = _MemoryPipe()
        pipe.write(b"abc")
        pipe.write(b"")
        pipe.write(bytearray(b"def"))
        assert await pipe.read(4) == b"abcd"
        assert await pipe.read() == b"ef"
        reading = asyncio.create_task(pipe.read())
        await asyncio.sleep(0)
        assert not reading.done()  # nothing to read: it waits
        pipe.write(b"g")
        assert await reading == b"g"

        pipe.write(b"x" * (_PIPE_LIMIT + 1))
        draining = asyncio.create_task(pipe.drain())
        await asyncio.sleep(0)
        assert not draining.done()  # more than the limit unread: the writer waits
        assert len(await pipe.read(_PIPE_LIMIT // 2)) == _PIPE_LIMIT // 2
        await asyncio.sleep(0)
        assert draining.done()  # below the limit again
        await pipe.drain()

        pipe.write(b"y")
        pipe.close()
        assert await pipe.read() == b"x" * (_PIPE_LIMIT // 2 + 1) + b"y"  # what was written stays
        assert await pipe.read() == b""
        with pytest.raises(RuntimeError):
            pipe.write(b"z")
        await pipe.drain()
        await pipe.wait_closed()

        waiting = _MemoryPipe()
        reading = asyncio.create_task(waiting.read())
        await asyncio.sleep(0)
        waiting.close()
        assert await reading == b""  # a reader waiting when the pipe closes gets the end

    run(main)


def test_memory_pipe_delivers_to_its_reader_at_once() -> None:
    """How a _Peer reads the pipe: what was written before is handed over first, then each
    write within the writer's call; close() hands over the end and ends the delivery;
    a cancelled delivery leaves later writes in the pipe."""
    from mcp_sansio.asyncio._streams import _MemoryPipe

    async def main() -> None:
        pipe = _MemoryPipe()
        got: list[bytes] = []
        pipe.write(b"early ")
        pipe.write(b"bytes")
        delivering = asyncio.create_task(pipe.deliver_to(got.append))
        await asyncio.sleep(0)
        assert got == [b"early bytes"]
        pipe.write(bytearray(b"now"))
        assert got[-1] == b"now"  # within write(): no turn of the loop
        await pipe.drain()  # nothing is ever held back
        pipe.close()
        await asyncio.wait_for(delivering, 1)
        assert got == [b"early bytes", b"now", b""]

        stopped = _MemoryPipe()
        seen: list[bytes] = []
        delivering = asyncio.create_task(stopped.deliver_to(seen.append))
        await asyncio.sleep(0)
        delivering.cancel()
        await asyncio.gather(delivering, return_exceptions=True)
        stopped.write(b"kept")
        assert seen == []
        assert await stopped.read() == b"kept"

    run(main)


def test_connect_server_answers_plain_handlers_without_starving_the_loop() -> None:
    """With a plain (not async) handler, connect_server's answer is there when the call's
    write returns; each call still gives the event loop a turn, as a socket would."""

    async def main() -> None:
        turns = 0

        async def count_turns() -> None:
            nonlocal turns
            while True:
                turns += 1
                await asyncio.sleep(0)

        async with Client.connect_server(build_server(), versions=LEGACY) as client:
            counting = asyncio.create_task(count_turns())
            await asyncio.sleep(0)
            before = turns
            for i in range(50):
                assert text(await client.call_tool("echo", {"text": str(i)})) == str(i)
            assert turns - before >= 50
            counting.cancel()
            await asyncio.gather(counting, return_exceptions=True)

    run(main)


@pytest.mark.parametrize("transport", ["memory", "tcp"])
def test_an_async_handler_runs_in_its_own_task(transport: str) -> None:
    """An async handler has a task of its own, from its first line (on Python 3.12+ that
    first step runs at once, in the callback that read the request): ``current_task()`` is
    it, a context variable it sets stays in it, and a quick one is answered on the spot."""
    marker: contextvars.ContextVar[str] = contextvars.ContextVar("marker", default="unset")
    seen: list[tuple[asyncio.Task[Any] | None, asyncio.Task[Any] | None]] = []

    async def main() -> None:
        server = Server("tasks", "1.0")

        @server.tool()
        async def where(ctx: Context, arguments: dict[str, Any]) -> str:
            "Report the task it runs in."
            marker.set("handler")
            first = asyncio.current_task()
            await asyncio.sleep(0)
            seen.append((first, asyncio.current_task()))
            return "ok"

        @server.tool()
        async def quick(ctx: Context, arguments: dict[str, Any]) -> str:
            "Answer without waiting for anything."
            marker.set("handler")
            return str(asyncio.current_task() is not None)

        async with contextlib.AsyncExitStack() as stack:
            if transport == "memory":
                client = await stack.enter_async_context(Client.connect_server(server))
            else:
                listener = await stack.enter_async_context(await serve_tcp(server))
                assert listener.port is not None
                client = await stack.enter_async_context(
                    Client.connect_tcp("127.0.0.1", listener.port)
                )
            mine = asyncio.current_task()
            for _ in range(3):
                assert text(await client.call_tool("where")) == "ok"
                assert text(await client.call_tool("quick")) == "True"
            assert marker.get() == "unset"
        assert len(seen) == 3
        for first, later in seen:
            assert first is not None
            assert first is later
            assert first is not mine
        assert len({first for first, _ in seen}) == 3

    run(main)


def test_connect_server_gives_up_on_a_server_that_does_not_finish() -> None:
    """Closing a connect_server client while a handler runs: the call fails, the server
    gets shutdown_timeout seconds to finish, then its task is cancelled (and its handler
    with it); nothing hangs."""

    async def main() -> None:
        probe = Probe()
        client = Client.connect_server(build_server(probe), versions=LEGACY)
        client.shutdown_timeout = 0.2
        async with client:
            call = asyncio.create_task(client.call_tool("forever"))
            await probe.started.wait()
            started = time.monotonic()
        assert time.monotonic() - started < 3
        with pytest.raises(ConnectionLost):
            await call
        assert client._server_task is not None
        assert client._server_task.cancelled()
        assert probe.cancelled.is_set()

    run(main)


# ---------------------------------------------------------------------- sockets


def test_one_listener_many_clients() -> None:
    async def main() -> None:
        listener = await serve_tcp(build_server())
        port = listener.port
        assert port is not None
        async with listener:
            clients = [Client.connect_tcp("127.0.0.1", port, versions=v) for v in (LEGACY, MODERN)]
            async with clients[0] as old, clients[1] as new:
                assert old.era is Era.INITIALIZE
                assert new.era is Era.STATELESS
                results = await asyncio.gather(
                    old.call_tool("echo_later", {"delay": 0.1, "value": "old"}),
                    new.call_tool("echo_later", {"delay": 0.05, "value": "new"}),
                )
                assert [text(r) for r in results] == ["old", "new"]
            # A connection still open when the listener closes is closed with it.
            client = Client.connect_tcp("127.0.0.1", port, versions=LEGACY)
            await client.open()
            pending = asyncio.create_task(client.call_tool("forever"))
            await asyncio.sleep(0.05)
        with pytest.raises(ConnectionLost):
            await pending
        await client.aclose()
        with pytest.raises(ConnectionRefusedError):
            await asyncio.open_connection("127.0.0.1", port)

    run(main)


@pytest.mark.parametrize("family", ["tcp", "unix"])
def test_a_listener_answers_after_the_client_half_closes(family: str) -> None:
    """The listener's protocol takes each chunk as it arrives; the client's end of input
    (a half-close) still lets the answers to what it sent go out, and then the connection
    ends."""

    async def main() -> None:
        with tempfile.TemporaryDirectory(prefix="mcp") as folder:
            path = os.path.join(folder, "s")
            listener = (
                await serve_tcp(build_server())
                if family == "tcp"
                else await serve_unix(build_server(), path)
            )
            async with listener:
                if family == "tcp":
                    assert listener.port is not None
                    reader, writer = await asyncio.open_connection("127.0.0.1", listener.port)
                else:
                    reader, writer = await asyncio.open_unix_connection(path)
                request = tool_call(2, "echo_later", {"delay": 0.1, "value": "late"})
                data = raw_lines(RAW_INITIALIZE, RAW_INITIALIZED, request)
                for i in range(0, len(data), 7):  # in small pieces, split anywhere
                    writer.write(data[i : i + 7])
                    await writer.drain()
                writer.write(b"not JSON\n")
                writer.write_eof()
                lines = [json.loads(line) async for line in reader]
                writer.close()
                await writer.wait_closed()
        assert [line.get("id", "?") for line in lines] == [1, None, 2]
        assert lines[1]["error"]["code"] == -32700
        assert text(lines[2]["result"]) == "late"

    run(main)


def test_the_module_docstring_example_runs(capsys: pytest.CaptureFixture[str]) -> None:
    import mcp_sansio.asyncio

    doc = mcp_sansio.asyncio.__doc__
    assert doc is not None
    example = textwrap.dedent(doc.split("::\n", 1)[1].split("\nEverything")[0])
    run(lambda: asyncio.to_thread(exec, example, {"__name__": "example"}))
    assert capsys.readouterr().out == "2026-07-28\nhi\n"


# ---------------------------------------------------------------------- application methods


def _vendor_server() -> Server:
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
    async def search(ctx: Context, params: dict[str, Any]) -> dict[str, Any]:
        "Search."
        ctx.notify("acme/indexed", {"count": 1})
        return {"hits": [params["q"]]}

    return server


@pytest.mark.parametrize("version", ["2025-11-25", "2026-07-28"])
def test_a_vendor_method_over_streamable_http(version: str) -> None:
    """Issue 18, item 5: the HTTP server's sessions get the Server's methods=, the HTTP
    client's connection the client's; the request and the handler's notification go
    through both, in either era."""
    pytest.importorskip("h11")
    from mcp_sansio.asyncio import serve_http

    server = _vendor_server()

    async def main() -> None:
        listener = await serve_http(server, port=0)
        notes: list[Notification] = []
        try:
            url = f"http://127.0.0.1:{listener.port}/mcp"
            async with Client.connect_http(
                url, versions=[version], methods=server.methods, on_notification=notes.append
            ) as client:
                got = await client.request("acme/search", {"q": "mcp"})
                assert got["hits"] == ["mcp"]
                for _ in range(100):
                    if notes:
                        break
                    await asyncio.sleep(0.02)
        finally:
            await listener.aclose()
        assert [(n.method, n.params) for n in notes] == [("acme/indexed", {"count": 1})]

    run(main)
