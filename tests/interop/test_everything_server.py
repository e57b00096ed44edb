"""Our clients (asyncio, trio, blocking) against the TypeScript SDK's everything server
(``@modelcontextprotocol/server-everything``, see ``peers.py``) over stdio.

The everything server speaks the initialize era only: a client that speaks both eras
probes with ``server/discover``, gets -32601 and falls back to ``initialize``. Right after
``notifications/initialized`` it sends ``notifications/tools/list_changed`` (it registers the
tools that depend on the client's capabilities), then, since our clients declare ``roots``,
a ``roots/list`` request with id 0. Its tools are read from its source in
``.interop/npm/node_modules/@modelcontextprotocol/server-everything/dist/tools/``.

Each test runs one exchange per style; the async styles share the coroutine (``styles.py``),
the blocking style has its own synchronous copy. Its ``get-env`` tool is never called.
"""

from __future__ import annotations

import logging
import os
import re
import subprocess
import time
from collections.abc import Mapping
from typing import IO, Any

import pytest

from mcp_sansio import Era, Notification
from mcp_sansio.session import McpError, RequestTimeout

from . import peers
from .conftest import Wire, free_port, serve_on_port, stop_process
from .styles import ALL_STYLES, ASYNC_STYLES, Runtime, adapter, texts, until_blocking

#: The bound of one exchange (a session with the server, start to end), in seconds.
EXCHANGE = 90.0
#: A request's timeout in these tests: far beyond what the server needs.
TIMEOUT = 30.0
#: The server's environment: nothing but PATH (it has a tool that prints its environment).
NODE_ENV = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}

ROOTS = [{"uri": "file:///tmp/interop-root", "name": "interop-root"}]
SUBSCRIBED = "demo://resource/dynamic/text/1"
SIMULATED_LOG = re.compile(r"level[- ]message", re.IGNORECASE)


class Peer:
    """Our client's side of the exchange: its handlers, and what reached them."""

    def __init__(self) -> None:
        self.notes: list[Notification] = []
        self.sampled: list[Mapping[str, Any]] = []
        self.elicited: list[Mapping[str, Any]] = []
        self.roots_asked: list[Any] = []

    def on_notification(self, note: Notification) -> None:
        self.notes.append(note)

    def sampling(self, ctx: Any, params: Mapping[str, Any]) -> dict[str, Any]:
        self.sampled.append(params)
        prompt = params["messages"][0]["content"]["text"]
        return {
            "role": "assistant",
            "content": {"type": "text", "text": f"sampled: {prompt}"},
            "model": "interop-model",
            "stopReason": "endTurn",
        }

    def elicitation(self, ctx: Any, params: Mapping[str, Any]) -> dict[str, Any]:
        self.elicited.append(params)
        return {
            "action": "accept",
            "content": {"name": "Ada Lovelace", "check": True, "integer": 7},
        }

    def roots(self, ctx: Any, params: Mapping[str, Any]) -> dict[str, Any]:
        self.roots_asked.append(ctx.request_id)
        return {"roots": ROOTS}

    def options(self, stderr: IO[bytes], **more: Any) -> dict[str, Any]:
        """The keywords of ``Client.connect_stdio`` for this peer."""
        return {
            "env": NODE_ENV,
            "stderr": stderr,
            "on_notification": self.on_notification,
            "handlers": {
                "sampling/createMessage": self.sampling,
                "elicitation/create": self.elicitation,
                "roots/list": self.roots,
            },
            "timeout": TIMEOUT,
            **more,
        }

    def logs(self) -> list[Mapping[str, Any]]:
        return [n.params or {} for n in self.notes if n.method == "notifications/message"]

    def updates(self) -> list[Mapping[str, Any]]:
        return [n.params or {} for n in self.notes if n.method == "notifications/resources/updated"]


@pytest.fixture(params=ALL_STYLES)
def style(request: pytest.FixtureRequest) -> str:
    name: str = request.param
    adapter(name)  # skip a style whose adapter has not landed
    return name


@pytest.fixture(params=ASYNC_STYLES)
def rt(request: pytest.FixtureRequest) -> Runtime:
    return Runtime(request.param)


def _facts(client: Any) -> dict[str, Any]:
    return {
        "version": client.protocol_version,
        "era": client.era,
        "info": dict(client.server_info or {}),
        "capabilities": dict(client.server_capabilities or {}),
        "instructions": client.instructions,
    }


# ---------------------------------------------------------------------- the handshake


def test_handshake_probe_falls_back_to_initialize(
    style: str, everything_command: list[str], wire: Wire, server_stderr: IO[bytes]
) -> None:
    """A dual-era client probes with ``server/discover``, gets -32601 and initializes
    (with the newest initialize-era version, which the server accepts)."""
    peer = Peer()
    # A long probe timeout: the fallback must come from the error, not from the timer.
    options = peer.options(server_stderr, probe_timeout=EXCHANGE)
    command = wire.wrap(everything_command)
    if style == "blocking":
        with adapter("blocking").Client.connect_stdio(command, **options) as client:
            facts = _facts(client)
            tools = client.list_tools()
    else:
        rt = Runtime(style)

        async def exchange() -> tuple[dict[str, Any], Any]:
            async with rt.Client.connect_stdio(command, **options) as client:
                return _facts(client), await client.list_tools()

        facts, tools = rt.run(exchange, EXCHANGE)

    assert facts["era"] is Era.INITIALIZE
    assert facts["version"] == "2025-11-25"
    assert facts["info"]["name"] == "mcp-servers/everything"
    caps = facts["capabilities"]
    assert caps["resources"]["subscribe"] is True
    assert "logging" in caps
    assert caps["tools"]["listChanged"] is True
    assert facts["instructions"]
    assert "echo" in {t["name"] for t in tools["tools"]}

    sent = [m for d, m in wire.messages() if d == ">"]
    assert sent[0]["method"] == "server/discover"
    probe_answer = wire.answer_to(sent[0]["id"])
    assert probe_answer["error"]["code"] == -32601
    assert sent[1]["method"] == "initialize"
    assert sent[1]["params"]["protocolVersion"] == "2025-11-25"
    assert set(sent[1]["params"]["capabilities"]) == {"sampling", "elicitation", "roots"}
    assert wire.answer_to(sent[1]["id"])["result"]["protocolVersion"] == "2025-11-25"
    assert sent[2] == {"jsonrpc": "2.0", "method": "notifications/initialized"}


@pytest.mark.interop_timeout(12)
def test_a_2026_only_client_is_refused(
    style: str, everything_command: list[str], server_stderr: IO[bytes]
) -> None:
    """A client that speaks only 2026-07-28 cannot talk to an initialize-era server: its
    ``server/discover`` gets -32601 and opening fails with that error (nothing hangs)."""
    options = Peer().options(server_stderr, versions=["2026-07-28"])
    if style == "blocking":
        with pytest.raises(McpError) as caught:
            adapter("blocking").Client.connect_stdio(everything_command, **options)
    else:
        rt = Runtime(style)

        async def exchange() -> None:
            async with rt.Client.connect_stdio(everything_command, **options):
                pass  # pragma: no cover - opening fails

        with pytest.raises(McpError) as caught:
            rt.run(exchange, 8.0)
    assert caught.value.code == -32601


@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"])
def test_each_initialize_era_version(
    version: str, everything_command: list[str], server_stderr: IO[bytes]
) -> None:
    """The server accepts each initialize-era version; tools and progress work in each
    (asyncio; the version rules are the core's, the same under every adapter)."""
    peer = Peer()
    rt = Runtime("asyncio")
    progress: list[Mapping[str, Any]] = []

    async def exchange() -> tuple[str, Any, Any]:
        async with rt.Client.connect_stdio(
            everything_command, **peer.options(server_stderr, versions=[version])
        ) as client:
            echo = await client.call_tool("echo", {"message": version})
            slow = await client.call_tool(
                "trigger-long-running-operation",
                {"duration": 0.2, "steps": 2},
                on_progress=progress.append,
            )
            return client.protocol_version, echo, slow

    negotiated, echo, slow = rt.run(exchange, EXCHANGE)
    assert negotiated == version
    assert texts(echo) == [f"Echo: {version}"]
    assert "Steps: 2" in texts(slow)[0]
    assert [p["progress"] for p in progress] == [1, 2]


# ---------------------------------------------------------------------- tools


def test_tools_list_and_echo(
    style: str, everything_command: list[str], server_stderr: IO[bytes]
) -> None:
    """``tools/list`` (including the tools it registers for our declared capabilities),
    ``echo``, ``get-sum``, and bad arguments (an ``isError`` result, not an error)."""
    peer = Peer()
    options = peer.options(server_stderr)
    if style == "blocking":
        with adapter("blocking").Client.connect_stdio(everything_command, **options) as client:
            tools = client.list_tools()
            echo = client.call_tool("echo", {"message": "hello, everything"})
            total = client.call_tool("get-sum", {"a": 2, "b": 40})
            bad = client.call_tool("echo", {"message": 42})
    else:
        rt = Runtime(style)

        async def exchange() -> tuple[Any, Any, Any, Any]:
            async with rt.Client.connect_stdio(everything_command, **options) as client:
                return (
                    await client.list_tools(),
                    await client.call_tool("echo", {"message": "hello, everything"}),
                    await client.call_tool("get-sum", {"a": 2, "b": 40}),
                    await client.call_tool("echo", {"message": 42}),
                )

        tools, echo, total, bad = rt.run(exchange, EXCHANGE)

    names = {t["name"] for t in tools["tools"]}
    assert {
        "echo",
        "get-sum",
        "trigger-long-running-operation",
        "toggle-simulated-logging",
        "toggle-subscriber-updates",
    } <= names
    # Registered after notifications/initialized, because our client declared the
    # capabilities they need.
    assert {"trigger-sampling-request", "trigger-elicitation-request", "get-roots-list"} <= names
    assert all(isinstance(t["inputSchema"], dict) for t in tools["tools"])
    assert echo == {"content": [{"type": "text", "text": "Echo: hello, everything"}]}
    assert "42" in texts(total)[0]
    assert bad.get("isError") is True


# ---------------------------------------------------------------------- progress


def test_progress(style: str, everything_command: list[str], server_stderr: IO[bytes]) -> None:
    """``trigger-long-running-operation`` reports progress on our token; with
    ``reset_on_progress`` a call outlives its timeout as long as progress keeps coming."""
    peer = Peer()
    options = peer.options(server_stderr)
    progress: list[Mapping[str, Any]] = []
    long_args = {"duration": 0.8, "steps": 4}
    # 2.4 s of work, a step each 0.6 s, under a 1.5 s timeout reset at each step.
    reset_args = {"duration": 2.4, "steps": 4}
    if style == "blocking":
        with adapter("blocking").Client.connect_stdio(everything_command, **options) as client:
            done = client.call_tool(
                "trigger-long-running-operation", long_args, on_progress=progress.append
            )
            reset = client.call_tool(
                "trigger-long-running-operation",
                reset_args,
                timeout=1.5,
                reset_on_progress=True,
                on_progress=lambda params: None,
            )
    else:
        rt = Runtime(style)

        async def exchange() -> tuple[Any, Any]:
            async with rt.Client.connect_stdio(everything_command, **options) as client:
                done = await client.call_tool(
                    "trigger-long-running-operation", long_args, on_progress=progress.append
                )
                reset = await client.call_tool(
                    "trigger-long-running-operation",
                    reset_args,
                    timeout=1.5,
                    reset_on_progress=True,
                    on_progress=lambda params: None,
                )
                return done, reset

        done, reset = rt.run(exchange, EXCHANGE)

    assert "Steps: 4" in texts(done)[0]
    assert [(p["progress"], p["total"]) for p in progress] == [(1, 4), (2, 4), (3, 4), (4, 4)]
    assert len({p["progressToken"] for p in progress}) == 1
    assert "Duration: 2.4 seconds" in texts(reset)[0]


def test_timeout_cancels_at_the_server(
    style: str, everything_command: list[str], wire: Wire, server_stderr: IO[bytes]
) -> None:
    """A call that times out sends ``notifications/cancelled``; the server's late progress
    for it is ignored, and the session goes on."""
    peer = Peer()
    options = peer.options(server_stderr)
    progress: list[Mapping[str, Any]] = []
    command = wire.wrap(everything_command)
    slow_args = {"duration": 2.0, "steps": 4}
    if style == "blocking":
        with adapter("blocking").Client.connect_stdio(command, **options) as client:
            with pytest.raises(RequestTimeout):
                client.call_tool(
                    "trigger-long-running-operation",
                    slow_args,
                    timeout=0.3,
                    on_progress=progress.append,
                )
            seen = len(progress)
            client.poll(1.2)  # the server's progress goes on for the cancelled request
            after = client.call_tool("echo", {"message": "still here"})
    else:
        rt = Runtime(style)

        async def exchange() -> tuple[int, Any]:
            async with rt.Client.connect_stdio(command, **options) as client:
                with pytest.raises(RequestTimeout):
                    await client.call_tool(
                        "trigger-long-running-operation",
                        slow_args,
                        timeout=0.3,
                        on_progress=progress.append,
                    )
                seen = len(progress)
                await rt.sleep(1.2)
                return seen, await client.call_tool("echo", {"message": "still here"})

        seen, after = rt.run(exchange, EXCHANGE)

    assert texts(after) == ["Echo: still here"]
    assert len(progress) == seen  # nothing reached the callback after the timeout
    (call,) = [
        m
        for m in wire.sent("tools/call")
        if m["params"]["name"] == "trigger-long-running-operation"
    ]
    (cancel,) = wire.sent("notifications/cancelled")
    assert cancel["params"]["requestId"] == call["id"]
    token = call["params"]["_meta"]["progressToken"]
    late = [
        m for m in wire.received("notifications/progress") if m["params"]["progressToken"] == token
    ]
    assert late, "the server sent no progress after the cancellation"


def test_caller_cancellation_and_concurrency(
    rt: Runtime, everything_command: list[str], wire: Wire, server_stderr: IO[bytes]
) -> None:
    """Async styles: many calls in flight at once, each answered to its caller; a caller
    that gives up sends ``notifications/cancelled``."""
    peer = Peer()
    command = wire.wrap(everything_command)
    progress: dict[int, list[Any]] = {1: [], 2: []}

    async def exchange() -> list[Any]:
        async with rt.Client.connect_stdio(command, **peer.options(server_stderr)) as client:

            def slow(n: int) -> Any:
                return lambda: client.call_tool(
                    "trigger-long-running-operation",
                    {"duration": 0.6 * n, "steps": 2},
                    on_progress=progress[n].append,
                )

            def echo(n: int) -> Any:
                return lambda: client.call_tool("echo", {"message": f"m{n}"})

            results = await rt.gather(slow(2), slow(1), *(echo(n) for n in range(6)))

            async def give_up() -> None:
                await client.call_tool(
                    "trigger-long-running-operation", {"duration": 5, "steps": 5}
                )

            await rt.gather(lambda: _cancel_after(rt, 0.3, give_up))
            results.append(await client.call_tool("echo", {"message": "after"}))
            return results

    results = rt.run(exchange, EXCHANGE)
    assert "Duration: 1.2 seconds" in texts(results[0])[0]
    assert "Duration: 0.6 seconds" in texts(results[1])[0]
    assert [texts(r) for r in results[2:8]] == [[f"Echo: m{n}"] for n in range(6)]
    assert texts(results[8]) == ["Echo: after"]
    assert [p["progress"] for p in progress[1]] == [1, 2]
    assert [p["progress"] for p in progress[2]] == [1, 2]
    (given_up,) = [
        m for m in wire.sent("tools/call") if m["params"].get("arguments", {}).get("duration") == 5
    ]
    (cancel,) = wire.sent("notifications/cancelled")
    assert cancel["params"]["requestId"] == given_up["id"]
    assert wire.answer_to(given_up["id"]) is None


async def _cancel_after(rt: Runtime, seconds: float, thunk: Any) -> None:
    """Run ``thunk()`` and cancel it after ``seconds`` (the caller gives up)."""
    if rt.name == "asyncio":
        import asyncio

        task = asyncio.ensure_future(thunk())
        await asyncio.sleep(seconds)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    else:
        import trio

        with trio.move_on_after(seconds) as scope:
            await thunk()
        assert scope.cancelled_caught


# ---------------------------------------------------------------------- requests to us


def test_sampling_request(
    style: str, everything_command: list[str], server_stderr: IO[bytes]
) -> None:
    """``trigger-sampling-request`` sends us ``sampling/createMessage``; our handler's
    answer comes back in the tool's result."""
    peer = Peer()
    options = peer.options(server_stderr)
    args = {"prompt": "a haiku", "maxTokens": 20}
    if style == "blocking":
        with adapter("blocking").Client.connect_stdio(everything_command, **options) as client:
            result = client.call_tool("trigger-sampling-request", args)
    else:
        rt = Runtime(style)

        async def exchange() -> Any:
            async with rt.Client.connect_stdio(everything_command, **options) as client:
                return await client.call_tool("trigger-sampling-request", args)

        result = rt.run(exchange, EXCHANGE)

    (asked,) = peer.sampled
    assert asked["maxTokens"] == 20
    assert asked["systemPrompt"] == "You are a helpful test server."
    prompt = "Resource trigger-sampling-request context: a haiku"
    assert asked["messages"] == [{"role": "user", "content": {"type": "text", "text": prompt}}]
    text = texts(result)[0]
    assert f'"text": "sampled: {prompt}"' in text
    assert '"model": "interop-model"' in text


def test_elicitation_request(
    style: str, everything_command: list[str], server_stderr: IO[bytes]
) -> None:
    """``trigger-elicitation-request`` sends us a form ``elicitation/create``; our
    handler accepts it, and the server reads the content back."""
    peer = Peer()
    options = peer.options(server_stderr)
    if style == "blocking":
        with adapter("blocking").Client.connect_stdio(everything_command, **options) as client:
            result = client.call_tool("trigger-elicitation-request", {})
    else:
        rt = Runtime(style)

        async def exchange() -> Any:
            async with rt.Client.connect_stdio(everything_command, **options) as client:
                return await client.call_tool("trigger-elicitation-request", {})

        result = rt.run(exchange, EXCHANGE)

    (asked,) = peer.elicited
    assert asked["requestedSchema"]["required"] == ["name"]
    assert "titledMultipleSelectEnum" in asked["requestedSchema"]["properties"]
    lines = "\n".join(texts(result))
    assert "User provided the requested information" in lines
    assert "- Name: Ada Lovelace" in lines
    assert "- Favorite Integer: 7" in lines


def test_roots_request_with_id_zero(
    style: str, everything_command: list[str], wire: Wire, server_stderr: IO[bytes]
) -> None:
    """The server asks our roots (``roots/list``, id 0) right after the handshake, logs
    how many it got, and lists them in ``get-roots-list``."""
    peer = Peer()
    options = peer.options(server_stderr)
    command = wire.wrap(everything_command)

    def got_roots() -> bool:
        return any("Roots updated" in str(log.get("data")) for log in peer.logs())

    if style == "blocking":
        with adapter("blocking").Client.connect_stdio(command, **options) as client:
            until_blocking(client, got_roots, 20.0, "roots/list and its log")
            listed = client.call_tool("get-roots-list", {})
    else:
        rt = Runtime(style)

        async def exchange() -> Any:
            async with rt.Client.connect_stdio(command, **options) as client:
                await rt.until(got_roots, 20.0, "roots/list and its log")
                return await client.call_tool("get-roots-list", {})

        listed = rt.run(exchange, EXCHANGE)

    assert peer.roots_asked == [0]
    (asked,) = wire.received("roots/list")
    assert asked["id"] == 0
    assert wire.answer_to(0, direction=">")["result"] == {"roots": ROOTS}
    (log,) = [log for log in peer.logs() if "Roots updated" in str(log.get("data"))]
    assert log["data"] == "Roots updated: 1 root(s) received from client"
    assert "file:///tmp/interop-root" in "\n".join(texts(listed))


# ---------------------------------------------------------------------- notifications


def test_logging(style: str, everything_command: list[str], server_stderr: IO[bytes]) -> None:
    """``logging/setLevel``, then ``toggle-simulated-logging``: log messages arrive as
    ``notifications/message`` (one at once, then one each 5 s)."""
    peer = Peer()
    options = peer.options(server_stderr)

    def simulated() -> list[Mapping[str, Any]]:
        return [log for log in peer.logs() if SIMULATED_LOG.search(str(log.get("data")))]

    if style == "blocking":
        with adapter("blocking").Client.connect_stdio(everything_command, **options) as client:
            level = client.set_logging_level("debug")
            started = client.call_tool("toggle-simulated-logging", {})
            until_blocking(client, lambda: bool(simulated()), 15.0, "simulated log message")
            stopped = client.call_tool("toggle-simulated-logging", {})
    else:
        rt = Runtime(style)

        async def exchange() -> tuple[Any, Any, Any]:
            async with rt.Client.connect_stdio(everything_command, **options) as client:
                level = await client.set_logging_level("debug")
                started = await client.call_tool("toggle-simulated-logging", {})
                await rt.until(lambda: bool(simulated()), 15.0, "simulated log message")
                return level, started, await client.call_tool("toggle-simulated-logging", {})

        level, started, stopped = rt.run(exchange, EXCHANGE)

    assert level == {}
    assert "Started simulated" in texts(started)[0]
    assert "Stopped simulated" in texts(stopped)[0]
    levels = {"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}
    for log in simulated():
        assert log["level"] in levels


def test_resource_subscription(
    style: str, everything_command: list[str], server_stderr: IO[bytes]
) -> None:
    """``resources/subscribe``, then ``toggle-subscriber-updates``: a
    ``notifications/resources/updated`` for the URI arrives (at once, then each 5 s)."""
    peer = Peer()
    options = peer.options(server_stderr)

    def updated() -> bool:
        return any(u.get("uri") == SUBSCRIBED for u in peer.updates())

    started_at = time.monotonic()
    if style == "blocking":
        with adapter("blocking").Client.connect_stdio(everything_command, **options) as client:
            read = client.read_resource(SUBSCRIBED)
            subscribed = client.subscribe(SUBSCRIBED)
            client.call_tool("toggle-subscriber-updates", {})
            until_blocking(client, updated, 12.0, "notifications/resources/updated")
            unsubscribed = client.unsubscribe(SUBSCRIBED)
            client.call_tool("toggle-subscriber-updates", {})
    else:
        rt = Runtime(style)

        async def exchange() -> tuple[Any, Any, Any]:
            async with rt.Client.connect_stdio(everything_command, **options) as client:
                read = await client.read_resource(SUBSCRIBED)
                subscribed = await client.subscribe(SUBSCRIBED)
                await client.call_tool("toggle-subscriber-updates", {})
                await rt.until(updated, 12.0, "notifications/resources/updated")
                unsubscribed = await client.unsubscribe(SUBSCRIBED)
                await client.call_tool("toggle-subscriber-updates", {})
                return read, subscribed, unsubscribed

        read, subscribed, unsubscribed = rt.run(exchange, EXCHANGE)

    assert read["contents"][0]["uri"] == SUBSCRIBED
    assert read["contents"][0]["text"].startswith("Resource 1:")
    assert subscribed == {}
    assert unsubscribed == {}
    assert peer.updates()[0] == {"uri": SUBSCRIBED}
    assert time.monotonic() - started_at < EXCHANGE


# ---------------------------------------------------------------------- a restarted HTTP server


def _serve_over_http(
    everything_command: list[str], port: int, stderr: IO[bytes]
) -> subprocess.Popen[bytes]:
    """The everything server in its Streamable HTTP mode on 127.0.0.1:``port``, once it
    accepts connections. It listens on every interface unless told otherwise, so it runs
    with the loopback preload (``loopback.cjs``, see ``peers.py``)."""
    node, entry, _ = everything_command
    env = {**NODE_ENV, "PORT": str(port), "NODE_OPTIONS": peers.loopback_node_options()}
    return serve_on_port([node, entry, "streamableHttp"], port, stderr, env=env, timeout=30)


def test_a_restarted_http_server_gets_the_subscription_and_logging_level_back(
    everything_command: list[str], server_stderr: IO[bytes], caplog: pytest.LogCaptureFixture
) -> None:
    """The everything server restarts behind our HTTP client, which had set the logging
    level and subscribed to a resource. It answers the old session id with HTTP 400 (not
    the 404 of the specification; hence ``expired_statuses``); the client opens a new
    session and restores both before sending the call again: the server's resource updates
    for the URI reach the new session, and the info log of its subscribe handler does not
    (the level came back first)."""
    from mcp_sansio.blocking import Client

    port = free_port()
    peer = Peer()
    caplog.set_level(logging.WARNING, logger="mcp_sansio.http")
    started_at = time.monotonic()
    server = _serve_over_http(everything_command, port, server_stderr)
    try:
        with Client.connect_http(
            f"http://127.0.0.1:{port}/mcp",
            versions=["2025-11-25"],
            listen=True,
            expired_statuses=(404, 400),
            timeout=TIMEOUT,
            on_notification=peer.on_notification,
        ) as client:
            assert client.set_logging_level("error") == {}
            assert client.subscribe(SUBSCRIBED) == {}
            stop_process(server)
            server = _serve_over_http(everything_command, port, server_stderr)
            peer.notes.clear()
            started = client.call_tool("toggle-subscriber-updates", {})
            assert texts(started)[0].startswith("Started simulated resource updated")
            assert client.stream.transport.reopened == 1  # type: ignore[attr-defined]
            until_blocking(
                client,
                lambda: any(u.get("uri") == SUBSCRIBED for u in peer.updates()),
                12.0,
                "notifications/resources/updated in the new session",
            )
    finally:
        stop_process(server)
    logs = [n.params or {} for n in peer.notes if n.method == "notifications/message"]
    assert not [log for log in logs if log.get("level") == "info"], logs
    problems = [r.getMessage() for r in caplog.records if r.name == "mcp_sansio.http"]
    assert any(
        "expired (HTTP 400) and was reopened" in p
        and f"restoring the logging level 'error', the subscription to '{SUBSCRIBED}'" in p
        for p in problems
    ), problems
    assert not any("did not restore" in p for p in problems), problems
    assert time.monotonic() - started_at < EXCHANGE
