"""The blocking adapter against real pipes and sockets (loopback only), both eras.

Run as a script (``python tests/test_blocking_adapter.py serve``), this file is the stdio
server of the tests: the same :func:`make_server` as the in-process ones.
"""

from __future__ import annotations

import contextlib
import os
import queue
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import orjson
import pytest

import mcp_sansio.blocking as blocking
from mcp_sansio import Era, LocalProtocolError, Notification
from mcp_sansio.blocking import (
    Client,
    Context,
    Listener,
    PipeStream,
    SocketStream,
    serve_stdio,
    serve_stream,
    serve_tcp,
    serve_unix,
)
from mcp_sansio.server import Server, ToolError
from mcp_sansio.session import ConnectionLost, McpError, RequestTimeout

HERE = Path(__file__).resolve()
VERSIONS = [["2025-11-25"], ["2026-07-28"], None]
VERSION_IDS = ["2025-11-25", "2026-07-28", "default"]
TRANSPORTS = ["socketpair", "tcp", "unix", "stdio"]
LIMIT = 30.0  # seconds, for any one test

#: What the in-process server's handlers saw (tests read it after a call).
EVENTS: list[tuple[str, Any]] = []


def make_server() -> Server:
    server = Server("blocking-test", "1.0", instructions="for the tests")

    @server.tool(input_schema={"type": "object", "properties": {"text": {"type": "string"}}})
    def echo(ctx: Context, arguments: Mapping[str, Any]) -> str:
        "Echo the text."
        return str(arguments.get("text", ""))

    @server.tool()
    def slow(ctx: Context, arguments: Mapping[str, Any]) -> str:
        ctx.sleep(float(arguments.get("seconds", 5)))
        EVENTS.append(("slow", ctx.cancelled))
        return "done"

    @server.tool()
    def steps(ctx: Context, arguments: Mapping[str, Any]) -> str:
        for i in range(1, 4):
            ctx.progress(i, 3, f"step {i}")
        return "stepped"

    @server.tool()
    def ask(ctx: Context, arguments: Mapping[str, Any]) -> str:
        "The same code asks the client in both eras."
        answer = ctx.elicit("Name?", {"type": "object", "properties": {"name": {"type": "string"}}})
        reply = ctx.sample(
            {
                "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
                "maxTokens": 10,
            }
        )
        roots = ctx.list_roots()
        return f"{answer['content']['name']}|{reply['content']['text']}|{roots['roots'][0]['uri']}"

    @server.tool()
    def chatty(ctx: Context, arguments: Mapping[str, Any]) -> str:
        for level in ("debug", "info", "warning", "error"):
            ctx.log(level, f"{level} message", "chatty")
        return "said"

    @server.tool()
    def touch(ctx: Context, arguments: Mapping[str, Any]) -> str:
        ctx.resource_updated(arguments["uri"])
        return "touched"

    @server.tool()
    def fail(ctx: Context, arguments: Mapping[str, Any]) -> str:
        raise ToolError("nope")

    @server.tool()
    def crash(ctx: Context, arguments: Mapping[str, Any]) -> str:  # pragma: no cover
        os._exit(3)  # only ever called in a subprocess

    @server.tool()
    def complain(ctx: Context, arguments: Mapping[str, Any]) -> str:
        print("a word on stderr", file=sys.stderr, flush=True)
        return "ok"

    @server.tool()
    async def awaiting(ctx: Context, arguments: Mapping[str, Any]) -> str:  # pragma: no cover
        return "never run by the blocking adapter"

    @server.resource("test://doc", mime_type="text/plain")
    def doc(ctx: Context, uri: str) -> str:
        return "the doc"

    @server.resource("test://odd")
    def odd(ctx: Context, uri: str) -> Any:
        return 5  # not a resource's contents

    @server.resource_template("test://item/{id}")
    def item(ctx: Context, uri: str, variables: Mapping[str, str]) -> str:
        return f"item {variables['id']}"

    @server.prompt(arguments=[{"name": "topic", "required": True}])
    def haiku(ctx: Context, arguments: Mapping[str, str]) -> list[dict[str, Any]]:
        text = f"a haiku about {arguments['topic']}"
        return [{"role": "user", "content": {"type": "text", "text": text}}]

    @server.completion
    def complete(ctx: Context, ref: Any, argument: Mapping[str, str], context: Any) -> list[str]:
        return [v for v in ("apple", "apricot", "banana") if v.startswith(argument["value"])]

    return server


def _elicit(ctx: Context, params: Mapping[str, Any]) -> dict[str, Any]:
    return {"action": "accept", "content": {"name": "Ada"}}


def _sample(ctx: Context, params: Mapping[str, Any]) -> dict[str, Any]:
    text = params["messages"][0]["content"]["text"]
    return {"role": "assistant", "content": {"type": "text", "text": f"{text}!"}, "model": "m"}


def _roots(ctx: Context, params: Mapping[str, Any]) -> dict[str, Any]:
    return {"roots": [{"uri": "file:///work", "name": "work"}]}


HANDLERS: dict[str, Callable[..., Any]] = {
    "elicitation/create": _elicit,
    "sampling/createMessage": _sample,
    "roots/list": _roots,
}


@pytest.fixture(autouse=True)
def _watchdog() -> Iterator[None]:
    """Every test is bounded in time: SIGALRM raises in the main thread."""

    def expired(signum: int, frame: Any) -> None:
        raise TimeoutError(f"the test took more than {LIMIT} s")

    old = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, LIMIT)
    EVENTS.clear()
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


class _Thread(threading.Thread):
    """A thread whose exception is re-raised by :meth:`finish`."""

    def __init__(self, target: Callable[[], Any]) -> None:
        super().__init__(daemon=True)
        self._fn = target
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            self._fn()
        except BaseException as exc:
            self.error = exc

    def finish(self, timeout: float = 10.0) -> None:
        self.join(timeout)
        assert not self.is_alive(), "the thread did not end"
        if self.error is not None:
            raise self.error


def _spawn(fn: Callable[[], Any]) -> _Thread:
    thread = _Thread(fn)
    thread.start()
    return thread


def _stdio_command(mode: str = "serve") -> list[str]:
    return [sys.executable, str(HERE), mode]


@contextlib.contextmanager
def connect(transport: str, versions: list[str] | None = None, **options: Any) -> Iterator[Client]:
    """A client connected to :func:`make_server` over ``transport``; everything is torn
    down (and checked to end) afterwards."""
    options.setdefault("handlers", HANDLERS)
    options.setdefault("timeout", 10.0)
    server = make_server()
    if transport == "socketpair":
        ours, theirs = socket.socketpair()
        thread = _spawn(lambda: serve_stream(server, SocketStream(theirs)))
        try:
            with Client(SocketStream(ours), versions=versions, **options) as client:
                yield client
        finally:
            ours.close()
            thread.finish()
    elif transport in ("tcp", "unix"):
        ready: queue.Queue[Listener] = queue.Queue()
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "mcp.sock")
            if transport == "tcp":
                thread = _spawn(lambda: serve_tcp(server, ready=ready.put))
            else:
                thread = _spawn(lambda: serve_unix(server, path, ready=ready.put))
            listener = ready.get(timeout=5)
            try:
                if transport == "tcp":
                    assert listener.address[0] == "127.0.0.1"
                    client = Client.connect_tcp(
                        "127.0.0.1", listener.port, versions=versions, **options
                    )
                else:
                    client = Client.connect_unix(path, versions=versions, **options)
                with client:
                    yield client
            finally:
                listener.stop()
                thread.finish()
            assert not os.path.exists(path)
    else:
        with Client.connect_stdio(_stdio_command(), versions=versions, **options) as client:
            yield client
        assert client.process is not None
        assert client.process.returncode == 0


# ---------------------------------------------------------------------- a raw peer


class RawPeer:
    """The other end of a socket, driven by hand: JSON lines in and out."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.sock.settimeout(5)
        self.buffer = b""

    def line(self) -> bytes:
        while b"\n" not in self.buffer:
            data = self.sock.recv(65536)
            if not data:
                raise EOFError
            self.buffer += data
        line, _, self.buffer = self.buffer.partition(b"\n")
        return line

    def recv(self) -> Any:
        return orjson.loads(self.line())

    def send(self, message: Mapping[str, Any]) -> None:
        self.sock.sendall(orjson.dumps({"jsonrpc": "2.0", **message}) + b"\n")

    def send_raw(self, data: bytes) -> None:
        self.sock.sendall(data)

    def handshake(self) -> None:
        """Play an initialize-era server's part of the handshake."""
        request = self.recv()
        assert request["method"] == "initialize"
        self.send(
            {
                "id": request["id"],
                "result": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {"tools": {"listChanged": True}, "logging": {}},
                    "serverInfo": {"name": "raw", "version": "0"},
                },
            }
        )
        assert self.recv()["method"] == "notifications/initialized"

    def discover(self) -> None:
        """Play a 2026-07-28 server's answer to the client's ``server/discover``."""
        request = self.recv()
        assert request["method"] == "server/discover"
        self.send(
            {
                "id": request["id"],
                "result": {
                    "supportedVersions": ["2026-07-28"],
                    "capabilities": {"tools": {"listChanged": True}},
                    "_meta": {
                        "io.modelcontextprotocol/serverInfo": {"name": "raw", "version": "0"}
                    },
                },
            }
        )

    def initialize(self) -> None:
        """Play an initialize-era client's part of the handshake."""
        self.send(
            {
                "id": "init",
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {"elicitation": {}},
                    "clientInfo": {"name": "raw", "version": "0"},
                },
            }
        )
        assert self.recv()["id"] == "init"
        self.send({"method": "notifications/initialized"})


@contextlib.contextmanager
def raw_server(script: Callable[[RawPeer], Any]) -> Iterator[socket.socket]:
    """A socket to a hand-driven server running ``script`` in a thread."""
    ours, theirs = socket.socketpair()

    def run() -> None:
        with theirs:
            script(RawPeer(theirs))

    thread = _spawn(run)
    try:
        yield ours
    finally:
        ours.close()
        thread.finish()


@contextlib.contextmanager
def raw_client() -> Iterator[RawPeer]:
    """A hand-driven client of :func:`make_server` served by :func:`serve_stream`."""
    ours, theirs = socket.socketpair()
    thread = _spawn(lambda: serve_stream(make_server(), SocketStream(theirs)))
    try:
        with ours:
            yield RawPeer(ours)
    finally:
        thread.finish()


# ---------------------------------------------------------------------- every transport, both eras


@pytest.mark.parametrize("versions", VERSIONS, ids=VERSION_IDS)
@pytest.mark.parametrize("transport", TRANSPORTS)
def test_round_trip(transport: str, versions: list[str] | None) -> None:
    with connect(transport, versions) as client:
        expected = versions[0] if versions else "2026-07-28"
        assert client.protocol_version == expected
        assert client.era is (Era.INITIALIZE if expected == "2025-11-25" else Era.STATELESS)
        assert client.server_info is not None
        assert client.server_info["name"] == "blocking-test"
        assert client.instructions == "for the tests"
        assert client.server_capabilities is not None
        assert "tools" in client.server_capabilities
        names = {tool["name"] for tool in client.list_tools()["tools"]}
        assert {"echo", "slow", "ask"} <= names
        for text in ("hello", "é" * 3000):  # one short, one spanning reads
            assert client.call_tool("echo", {"text": text})["content"][0]["text"] == text
        assert client.call_tool("fail")["isError"] is True
        with pytest.raises(McpError) as info:
            client.call_tool("nonexistent")
        assert info.value.code == -32602
        assert client.read_resource("test://doc")["contents"][0]["text"] == "the doc"
        assert client.read_resource("test://item/7")["contents"][0]["text"] == "item 7"
        assert client.list_resources()["resources"][0]["uri"] == "test://doc"
        assert client.list_resource_templates()["resourceTemplates"]
        assert client.list_prompts()["prompts"][0]["name"] == "haiku"
        messages = client.get_prompt("haiku", {"topic": "pipes"})["messages"]
        assert messages[0]["content"]["text"] == "a haiku about pipes"
        values = client.complete({"type": "ref/prompt", "name": "haiku"}, "topic", "ap")
        assert values["completion"]["values"] == ["apple", "apricot"]
        if client.era is Era.INITIALIZE:
            assert client.ping() == {}
        assert client.session.next_deadline() is None  # nothing left in flight


@pytest.mark.parametrize("versions", VERSIONS, ids=VERSION_IDS)
@pytest.mark.parametrize("transport", ["socketpair", "stdio"])
def test_elicitation_sampling_roots(transport: str, versions: list[str] | None) -> None:
    """The server's handler asks the client three times: server→client requests in the
    initialize era, input_required rounds in 2026; the client's handlers are the same."""
    with connect(transport, versions) as client:
        result = client.call_tool("ask")
        assert result["content"][0]["text"] == "Ada|hi!|file:///work"
        assert client.call_tool("ask")["content"][0]["text"] == "Ada|hi!|file:///work"
        # A finished call leaves no deadline behind (see _purge_finished).
        assert client.session.next_deadline() is None
        assert client.session.calls == ()


@pytest.mark.parametrize("versions", VERSIONS, ids=VERSION_IDS)
def test_missing_client_handler(versions: list[str] | None) -> None:
    with connect("socketpair", versions, handlers={"elicitation/create": _elicit}) as client:
        # No sampling handler: the client declared no sampling capability, and the tool's
        # request fails with the server's error (the handler did not catch it).
        with pytest.raises(McpError, match="sampling"):
            client.call_tool("ask")
        assert client.session.next_deadline() is None
        assert client.call_tool("echo", {"text": "fine"})["content"][0]["text"] == "fine"


@pytest.mark.parametrize("versions", VERSIONS, ids=VERSION_IDS)
def test_failing_client_handler(versions: list[str] | None) -> None:
    def broken(ctx: Context, params: Mapping[str, Any]) -> dict[str, Any]:
        raise RuntimeError("the user walked away")

    handlers = {**HANDLERS, "elicitation/create": broken}
    with connect("socketpair", versions, handlers=handlers) as client:
        # 2026: the handler runs inside our own call, which fails with its very exception
        # (docs/policy.rst); initialize era: the server's elicit() raises the client's error
        # (-32603), which the tool did not catch, so the tool's request fails with it.
        with pytest.raises((McpError, RuntimeError), match="walked away") as info:
            client.call_tool("ask")
        expected = McpError if client.era is Era.INITIALIZE else RuntimeError
        assert type(info.value) is expected
        assert client.session.next_deadline() is None
        assert client.call_tool("echo", {"text": "on"})["content"][0]["text"] == "on"


@pytest.mark.parametrize("versions", VERSIONS, ids=VERSION_IDS)
def test_progress(versions: list[str] | None) -> None:
    seen: list[Mapping[str, Any]] = []
    with connect("socketpair", versions) as client:
        result = client.call_tool("steps", on_progress=seen.append)
        assert result["content"][0]["text"] == "stepped"
        assert [p["progress"] for p in seen] == [1, 2, 3]
        assert seen[-1]["total"] == 3
        assert seen[-1]["message"] == "step 3"
        seen.clear()
        client.call_tool("steps")  # no callback, no token: no progress is sent
        assert seen == []


@pytest.mark.parametrize("versions", VERSIONS, ids=VERSION_IDS)
def test_logging_with_set_level(versions: list[str] | None) -> None:
    notes: list[Notification] = []
    with connect("socketpair", versions, on_notification=notes.append) as client:
        assert client.set_logging_level("warning") == {}
        client.call_tool("chatty")
        logs = [n.params for n in notes if n.method == "notifications/message"]
        assert [(p["level"], p["data"], p["logger"]) for p in logs] == [
            ("warning", "warning message", "chatty"),
            ("error", "error message", "chatty"),
        ]


@pytest.mark.parametrize("versions", VERSIONS, ids=VERSION_IDS)
def test_resource_subscription(versions: list[str] | None) -> None:
    notes: list[Notification] = []
    with connect("socketpair", versions, on_notification=notes.append) as client:
        if client.era is Era.INITIALIZE:
            assert client.subscribe("test://doc") == {}
        else:
            ack = client.listen(resource_uris=["test://doc"], tools=True)
            assert ack["notifications"] == {
                "toolsListChanged": True,
                "resourceSubscriptions": ["test://doc"],
            }
        client.call_tool("touch", {"uri": "test://other"})
        client.call_tool("touch", {"uri": "test://doc"})
        updates = [n.params["uri"] for n in notes if n.method == "notifications/resources/updated"]
        assert updates == ["test://doc"]
        if client.era is Era.INITIALIZE:
            client.unsubscribe("test://doc")
            client.call_tool("touch", {"uri": "test://doc"})
            assert len([n for n in notes if n.method == "notifications/resources/updated"]) == 1


def test_listen_without_acknowledgement() -> None:
    seen: list[Any] = []

    def script(peer: RawPeer) -> None:
        peer.discover()
        listen = peer.recv()
        seen.append(listen["method"])
        seen.append(peer.recv())  # its cancellation, after the client's timeout
        listen = peer.recv()
        peer.send({"id": listen["id"], "error": {"code": -32601, "message": "no streams"}})
        with contextlib.suppress(EOFError):
            peer.recv()

    with raw_server(script) as sock, Client(SocketStream(sock), versions=["2026-07-28"]) as client:
        with pytest.raises(RequestTimeout):
            client.listen(tools=True, timeout=0.2)
        with pytest.raises(McpError, match="no streams"):
            client.listen(tools=True)
    assert seen[0] == "subscriptions/listen"
    assert seen[1]["method"] == "notifications/cancelled"


def test_listen_refused_in_the_initialize_era() -> None:
    with (
        connect("socketpair", ["2025-11-25"]) as client,
        pytest.raises(LocalProtocolError, match="subscriptions/listen"),
    ):
        client.listen(tools=True)


# ---------------------------------------------------------------------- failure paths


@pytest.mark.parametrize("versions", VERSIONS, ids=VERSION_IDS)
def test_timeout_raises_and_cancels(versions: list[str] | None) -> None:
    with connect("socketpair", versions) as client:
        started = time.monotonic()
        with pytest.raises(RequestTimeout):
            client.call_tool("slow", {"seconds": 5}, timeout=0.2)
        assert time.monotonic() - started < 2
        # The server saw the cancellation (its sleep ended early) and dropped the answer;
        # the session goes on.
        assert client.call_tool("echo", {"text": "after"})["content"][0]["text"] == "after"
        assert EVENTS == [("slow", True)]


def test_progress_resets_the_timeout() -> None:
    with connect("socketpair", ["2025-11-25"]) as client:
        server_side: list[Any] = []

        def tick(params: Mapping[str, Any]) -> None:
            server_side.append(params["progress"])

        # Each progress restarts the 0.5 s timeout; steps reports three at once.
        result = client.call_tool("steps", timeout=0.5, reset_on_progress=True, on_progress=tick)
        assert result["content"][0]["text"] == "stepped"
        assert server_side == [1, 2, 3]


def test_keyboard_interrupt_cancels_the_call() -> None:
    main = threading.get_ident()
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(0.3, lambda: signal.pthread_kill(main, signal.SIGINT))
    try:
        with connect("socketpair", ["2025-11-25"]) as client:
            timer.start()
            with pytest.raises(KeyboardInterrupt):
                client.call_tool("slow", {"seconds": 5})
            assert client.call_tool("echo", {"text": "on"})["content"][0]["text"] == "on"
            assert EVENTS == [("slow", True)]
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, old)


def test_server_crash_mid_request_stdio() -> None:
    with Client.connect_stdio(_stdio_command(), versions=["2025-11-25"], timeout=20) as client:
        started = time.monotonic()
        with pytest.raises(ConnectionLost):
            client.call_tool("crash")
        assert time.monotonic() - started < 5  # no hang until the timeout
        with pytest.raises(ConnectionLost):
            client.call_tool("echo")
    assert client.process is not None
    assert client.process.returncode == 3


def test_server_closes_mid_request_socket() -> None:
    def script(peer: RawPeer) -> None:
        peer.handshake()
        assert peer.recv()["method"] == "tools/call"  # ... and hang up

    with raw_server(script) as sock, Client(SocketStream(sock), versions=["2025-11-25"]) as client:
        assert not client.closed
        with pytest.raises(ConnectionLost):
            client.call_tool("anything")
        assert client.closed
        assert client.poll(0.1) is False


def test_peer_that_never_answers_the_opening() -> None:
    seen: list[str] = []

    def script(peer: RawPeer) -> None:
        with contextlib.suppress(EOFError):
            while True:
                seen.append(peer.recv()["method"])

    with raw_server(script) as sock:
        started = time.monotonic()
        with pytest.raises(RequestTimeout):
            Client(SocketStream(sock), timeout=0.3, probe_timeout=0.2)
        assert time.monotonic() - started < 3
    # The probe timed out and fell back to initialize, which timed out (and, as the spec
    # says, an initialize request is never cancelled).
    assert seen == ["server/discover", "initialize"]


def test_peer_that_never_answers_a_call() -> None:
    seen: list[Any] = []

    def script(peer: RawPeer) -> None:
        peer.handshake()
        with contextlib.suppress(EOFError):
            while True:
                seen.append(peer.recv())

    with (
        raw_server(script) as sock,
        Client(SocketStream(sock), versions=["2025-11-25"]) as client,
        pytest.raises(RequestTimeout),
    ):
        client.call_tool("anything", timeout=0.2)
    assert [m["method"] for m in seen] == ["tools/call", "notifications/cancelled"]
    assert seen[1]["params"]["requestId"] == seen[0]["id"]


def test_interleaved_server_traffic_during_a_call() -> None:
    """Pings, requests, notifications, garbage and a late answer to a cancelled call, all
    while a call waits: each is handled, the call gets its answer."""
    replies: list[Any] = []

    def script(peer: RawPeer) -> None:
        peer.handshake()
        call = peer.recv()
        peer.send({"id": "p", "method": "ping"})
        replies.append(peer.recv())
        peer.send_raw(b"this is not json\n")
        replies.append(peer.recv())
        peer.send({"id": "r", "method": "roots/list"})
        replies.append(peer.recv())
        peer.send({"method": "notifications/tools/list_changed"})
        peer.send_raw(b'{"jsonrpc":"2.0","id":')  # an answer split across writes
        time.sleep(0.05)
        peer.send_raw(orjson.dumps(call["id"]) + b',"result":{"content":[]}}\n')
        peer.send({"method": "notifications/message", "params": {"level": "info", "data": 1}})

    notes: list[str] = []
    with (
        raw_server(script) as sock,
        Client(
            SocketStream(sock),
            versions=["2025-11-25"],
            handlers={"roots/list": _roots},
            on_notification=lambda n: notes.append(n.method),
        ) as client,
    ):
        assert client.call_tool("anything") == {"content": []}
        assert client.poll(2.0) is True  # the log message after the answer
    assert replies[0] == {"jsonrpc": "2.0", "id": "p", "result": {}}
    assert replies[1]["id"] is None
    assert replies[1]["error"]["code"] == -32700
    assert replies[2]["result"]["roots"][0]["uri"] == "file:///work"
    assert notes == ["notifications/tools/list_changed", "notifications/message"]


def test_garbage_to_a_server_gets_a_parse_error() -> None:
    with raw_client() as peer:
        peer.send_raw(b"garbage\n")
        reply = peer.recv()
        assert reply["id"] is None
        assert reply["error"]["code"] == -32700
        peer.initialize()  # and the session goes on
        peer.send({"id": 1, "method": "tools/call", "params": {"name": "echo", "arguments": {}}})
        assert peer.recv()["id"] == 1


def test_garbage_on_the_stdio_pipe() -> None:
    process = subprocess.Popen(
        _stdio_command(), stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0
    )
    assert process.stdin is not None
    assert process.stdout is not None
    try:
        process.stdin.write(b"{oops\n")
        assert orjson.loads(process.stdout.readline())["error"]["code"] == -32700
        process.stdin.write(
            b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":'
            b'"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}\n'
        )
        assert orjson.loads(process.stdout.readline())["result"]["serverInfo"]
    finally:
        process.stdin.close()
        assert process.wait(10) == 0
        process.stdout.close()


def test_a_malformed_opening_answer() -> None:
    def script(peer: RawPeer) -> None:
        request = peer.recv()
        peer.send({"id": request["id"], "result": {"protocolVersion": "2025-11-25"}})
        with contextlib.suppress(EOFError, OSError):
            peer.recv()

    with raw_server(script) as sock, pytest.raises(ConnectionLost, match="lacks capabilities"):
        Client(SocketStream(sock), versions=["2025-11-25"])


def test_server_queues_requests_while_a_handler_waits() -> None:
    """Initialize era: while ``ask`` waits for the elicitation, another request arrives;
    it is answered after ``ask``; a cancelled queued request is never run."""
    with raw_client() as peer:
        peer.initialize()
        peer.send({"id": 1, "method": "tools/call", "params": {"name": "ask", "arguments": {}}})
        elicitation = peer.recv()
        assert elicitation["method"] == "elicitation/create"
        peer.send({"id": 2, "method": "tools/call", "params": {"name": "echo", "arguments": {}}})
        peer.send({"id": 3, "method": "tools/call", "params": {"name": "slow", "arguments": {}}})
        peer.send({"method": "notifications/cancelled", "params": {"requestId": 3}})
        peer.send({"id": elicitation["id"], "result": {"action": "decline"}})
        answer = peer.recv()
        assert answer["id"] == 1  # ask went on to sample, which this client cannot do
        assert answer["error"]["code"] == -32601
        assert peer.recv()["id"] == 2
        peer.send({"id": 4, "method": "ping"})
        assert peer.recv() == {"jsonrpc": "2.0", "id": 4, "result": {}}
    assert EVENTS == []  # slow never ran


def test_a_cancelled_request_stops_waiting_for_the_client() -> None:
    """Initialize era: the client cancels ``ask`` while the server waits for its
    elicitation: the server cancels the elicitation and is free at once."""
    with raw_client() as peer:
        peer.initialize()
        peer.send({"id": 1, "method": "tools/call", "params": {"name": "ask", "arguments": {}}})
        elicitation = peer.recv()
        assert elicitation["method"] == "elicitation/create"
        peer.send({"method": "notifications/cancelled", "params": {"requestId": 1}})
        cancel = peer.recv()
        assert cancel["method"] == "notifications/cancelled"
        assert cancel["params"]["requestId"] == elicitation["id"]
        peer.send({"id": 2, "method": "ping"})
        assert peer.recv() == {"jsonrpc": "2.0", "id": 2, "result": {}}  # no answer to 1


def test_odd_handler_values_are_answered_with_errors() -> None:
    with connect("socketpair", ["2025-11-25"]) as client:
        with pytest.raises(McpError) as info:
            client.read_resource("test://odd")
        assert info.value.code == -32603
        # A coroutine handler cannot run here; it is an error (-32603), not a hang.
        with pytest.raises(McpError) as info:
            client.call_tool("awaiting")
        assert info.value.code == -32603
        assert "cannot await" in info.value.message


# ---------------------------------------------------------------------- stdio specifics


def test_stdio_stderr_captured_to_a_file() -> None:
    with tempfile.TemporaryFile() as log:
        with Client.connect_stdio(_stdio_command(), stderr=log) as client:
            client.call_tool("complain")
        log.seek(0)
        assert b"a word on stderr" in log.read()
    with pytest.raises(ValueError, match="PIPE"):
        Client.connect_stdio(_stdio_command(), stderr=subprocess.PIPE)


@pytest.mark.parametrize(
    ("mode", "returncode"),
    [("serve", 0), ("stubborn", -signal.SIGTERM), ("deaf", -signal.SIGKILL)],
)
def test_stdio_shutdown(mode: str, returncode: int) -> None:
    """Close stdin and wait; then SIGTERM and wait; then SIGKILL."""
    client = Client.connect_stdio(_stdio_command(mode), shutdown_timeout=1.0)
    assert client.call_tool("echo", {"text": "x"})["content"][0]["text"] == "x"
    started = time.monotonic()
    client.close()
    client.close()  # idempotent
    assert client.process is not None
    assert client.process.returncode == returncode
    assert time.monotonic() - started < 4
    with pytest.raises(ConnectionLost):
        client.ping()


def test_connect_to_nothing() -> None:
    with tempfile.TemporaryDirectory() as tmp, pytest.raises(FileNotFoundError):
        Client.connect_unix(os.path.join(tmp, "absent.sock"))


def test_stdio_server_that_exits_at_once() -> None:
    with pytest.raises(ConnectionLost):
        Client.connect_stdio([sys.executable, "-c", "pass"])


# ---------------------------------------------------------------------- servers


def test_tcp_serves_connections_at_once() -> None:
    ready: queue.Queue[Listener] = queue.Queue()
    thread = _spawn(lambda: serve_tcp(make_server(), ready=ready.put))
    listener = ready.get(timeout=5)
    try:
        with (
            Client.connect_tcp("127.0.0.1", listener.port, versions=["2025-11-25"]) as first,
            Client.connect_tcp("127.0.0.1", listener.port) as second,
        ):
            assert first.call_tool("echo", {"text": "1"})["content"][0]["text"] == "1"
            assert second.call_tool("echo", {"text": "2"})["content"][0]["text"] == "2"
            listener.stop()  # the open connections see their end
            with pytest.raises(ConnectionLost):
                first.call_tool("echo", {"text": "3"})
    finally:
        listener.stop()
        thread.finish()


def test_sequential_listener() -> None:
    with Listener.tcp(make_server(), threads=False) as listener:
        thread = _spawn(listener.serve_forever)
        try:
            for text in ("a", "b"):
                with Client.connect_tcp("127.0.0.1", listener.port) as client:
                    assert client.call_tool("echo", {"text": text})["content"][0]["text"] == text
        finally:
            listener.stop()
            thread.finish()


class Unwritable:
    """A :class:`~mcp_sansio.blocking.Stream` of our own, whose peer is gone."""

    def __init__(self) -> None:
        self.closed = False

    def read_some(self, timeout: float | None) -> bytes | None:
        time.sleep(0.01)
        return None

    def write(self, data: bytes) -> None:
        raise BrokenPipeError

    def close(self) -> None:
        self.closed = True


def test_a_failed_write_is_a_lost_connection() -> None:
    stream = Unwritable()
    started = time.monotonic()
    with pytest.raises(ConnectionLost):
        Client(stream, timeout=5)
    assert time.monotonic() - started < 1
    assert stream.closed


def test_pipe_stream_timeout_and_end() -> None:
    read_fd, write_fd = os.pipe()
    stream = PipeStream(read_fd, write_fd)
    try:
        assert stream.read_some(0.05) is None
        stream.write(b"abc")
        assert stream.read_some(1) == b"abc"
    finally:
        stream.close()
        stream.close()


def test_serve_stdio_in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """serve_stdio reads fd 0 and writes fd 1 of whatever sys.stdin/sys.stdout are."""
    to_server_r, to_server_w = os.pipe()
    from_server_r, from_server_w = os.pipe()
    with open(to_server_r, "rb") as stdin, open(from_server_w, "wb") as stdout:
        monkeypatch.setattr(sys, "stdin", stdin)
        monkeypatch.setattr(sys, "stdout", stdout)
        thread = _spawn(lambda: serve_stdio(make_server()))
        stream = PipeStream(from_server_r, to_server_w)
        with Client(stream, versions=["2026-07-28"]) as client:
            assert client.call_tool("echo", {"text": "fd"})["content"][0]["text"] == "fd"
        thread.finish()


def test_module_docstring_example_runs(capfd: pytest.CaptureFixture[str]) -> None:
    doc = blocking.__doc__
    assert doc is not None
    code = textwrap.dedent(doc[doc.index("::\n\n") + 4 : doc.index("\nThe same server code")])
    exec(compile(code, "blocking.__doc__", "exec"), {"__name__": "example"})
    assert "Hello, Ada!" in capfd.readouterr().out


def test_every_public_name_is_documented() -> None:
    for name in blocking.__all__:
        obj = getattr(blocking, name)
        if not callable(obj):
            continue  # DEFAULT_SHUTDOWN_TIMEOUT: its ``#:`` comment
        assert obj.__doc__, name
        for attr, member in vars(obj).items() if isinstance(obj, type) else ():
            if not attr.startswith("_") and callable(member):
                assert member.__doc__, f"{name}.{attr}"


# ---------------------------------------------------------------------- the stdio server


def _main(mode: str) -> None:  # pragma: no cover - runs in the subprocess
    if mode == "deaf":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    serve_stdio(make_server())
    if mode in ("stubborn", "deaf"):  # ignore stdin's end: stay until signalled
        while True:
            time.sleep(1)


if __name__ == "__main__":  # pragma: no cover
    _main(sys.argv[1] if len(sys.argv) > 1 else "serve")


# ---------------------------------------------------------------------- application methods


@pytest.mark.parametrize("version", ["2025-11-25", "2026-07-28"])
def test_a_vendor_method_over_streamable_http(version: str) -> None:
    """Issue 18, item 5, over the blocking HTTP server and client: the Server's methods=
    reach its sessions, the client's methods= its connection; the handler's notification
    reaches on_notification."""
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
    def search(ctx: Context, params: Mapping[str, Any]) -> dict[str, Any]:
        "Search."
        ctx.notify("acme/indexed", {"count": 1})
        return {"hits": [params["q"]]}

    ready: queue.Queue[Any] = queue.Queue()
    thread = _spawn(lambda: blocking.serve_http(server, ready=ready.put))
    listener = ready.get(timeout=5)
    notes: list[Notification] = []
    try:
        with Client.connect_http(
            listener.url, versions=[version], methods=specs, on_notification=notes.append
        ) as client:
            assert client.request("acme/search", {"q": "mcp"})["hits"] == ["mcp"]
            end = time.monotonic() + 2
            while not notes and time.monotonic() < end:
                client.poll(0.05)
    finally:
        listener.stop()
        thread.finish()
    assert [(n.method, n.params) for n in notes] == [("acme/indexed", {"count": 1})]
