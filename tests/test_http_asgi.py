"""The ASGI application (:class:`mcp_sansio.asgi.McpAsgiApp`): driven in-process by a
small ASGI server written here (scope, ``receive``, ``send``; no network) through both
eras, disconnects, limits, the DNS-rebinding checks and lifespan; then once under uvicorn
over real HTTP.

Every test runs its coroutine under ``asyncio.run`` with a timeout (:func:`run`).
"""

from __future__ import annotations

import asyncio
import contextlib
import http.client
import importlib.util
import socket
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Awaitable, Callable, Iterator, Mapping, MutableMapping
from typing import Any, TypeVar

import orjson
import pytest

from mcp_sansio._sse import SseDecoder
from mcp_sansio.asgi import McpAsgiApp
from mcp_sansio.asyncio import Context
from mcp_sansio.example import build_server
from mcp_sansio.server import Server

T = TypeVar("T")
V2025 = "2025-11-25"
V2026 = "2026-07-28"
ACCEPT = "application/json, text/event-stream"
META = {
    "io.modelcontextprotocol/protocolVersion": V2026,
    "io.modelcontextprotocol/clientCapabilities": {},
}
Message = MutableMapping[str, Any]


def run(main: Callable[[], Awaitable[T]], timeout: float = 10.0) -> T:
    """Run ``main()`` in a fresh event loop, failing after ``timeout`` seconds."""

    async def bounded() -> T:
        return await asyncio.wait_for(main(), timeout)

    return asyncio.run(bounded())


# ---------------------------------------------------------------------- the ASGI driver


def http_scope(
    method: str,
    path: str = "/mcp",
    headers: Mapping[str, str] | None = None,
    *,
    query: bytes = b"",
    root_path: str = "",
) -> Message:
    """An ``http`` scope as an ASGI server makes it (with a loopback ``Host``)."""
    all_headers = {"host": "127.0.0.1:8000", **{k.lower(): v for k, v in (headers or {}).items()}}
    return {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": query,
        "root_path": root_path,
        "headers": [(k.encode("latin-1"), v.encode("latin-1")) for k, v in all_headers.items()],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
    }


class Call:
    """One ASGI call in flight: what the app receives is queued by the test, what it
    sends is collected."""

    def __init__(self, app: Any, scope: Message, messages: list[Message] | None = None) -> None:
        self.inbox: asyncio.Queue[Message] = asyncio.Queue()
        for message in messages or []:
            self.inbox.put_nowait(message)
        self.sent: list[Message] = []
        self.broken = False
        """Whether sending a body fails (the connection broke under the server)."""
        self._changed = asyncio.Event()
        self.task = asyncio.ensure_future(app(scope, self.receive, self.send))

    async def receive(self) -> Message:
        return await self.inbox.get()

    async def send(self, message: Message) -> None:
        self.sent.append(message)
        self._changed.set()
        if self.broken and message["type"] == "http.response.body":
            raise OSError("the connection broke")

    def disconnect(self) -> None:
        self.inbox.put_nowait({"type": "http.disconnect"})

    async def wait_until(self, check: Callable[[], bool]) -> None:
        while not check():
            self._changed.clear()
            await self._changed.wait()

    async def finished(self) -> Response:
        await self.task
        return self.response

    @property
    def response(self) -> Response:
        return Response(self.sent)


class Response:
    """The ``http.response.*`` messages of a call, checked against the ASGI rules."""

    def __init__(self, sent: list[Message]) -> None:
        assert sent, "nothing was sent"
        start, *bodies = sent
        assert start["type"] == "http.response.start"
        self.status: int = start["status"]
        self.headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in start["headers"]}
        self.complete = False
        chunks = []
        for message in bodies:
            assert message["type"] == "http.response.body"
            assert not self.complete, "a body after the last one"
            chunks.append(message["body"])
            self.complete = not message.get("more_body", False)
        self.parts = len(bodies)
        self.body = b"".join(chunks)

    def json(self) -> Any:
        assert self.headers["content-type"] == "application/json"
        assert self.headers["content-length"] == str(len(self.body))
        return orjson.loads(self.body)

    def events(self) -> list[Any]:
        assert self.headers["content-type"] == "text/event-stream"
        return SseDecoder().feed(self.body)

    def messages(self) -> list[Any]:
        return [orjson.loads(e.data) for e in self.events() if e.data]


def body_messages(body: bytes, chunk: int | None = None) -> list[Message]:
    """The ``http.request`` messages of a body, in chunks of ``chunk`` bytes."""
    if chunk is None:
        return [{"type": "http.request", "body": body, "more_body": False}]
    pieces = [body[i : i + chunk] for i in range(0, len(body), chunk)] or [b""]
    return [
        {"type": "http.request", "body": piece, "more_body": i < len(pieces) - 1}
        for i, piece in enumerate(pieces)
    ]


def post_call(
    app: Any, message: Any, headers: Mapping[str, str] | None = None, **scope: Any
) -> Call:
    body = orjson.dumps(message)
    all_headers = {"accept": ACCEPT, "content-type": "application/json", **(headers or {})}
    return Call(app, http_scope("POST", headers=all_headers, **scope), body_messages(body))


async def post(
    app: Any, message: Any, headers: Mapping[str, str] | None = None, **scope: Any
) -> Response:
    return await post_call(app, message, headers, **scope).finished()


def request(rid: int, method: str, params: Mapping[str, Any] | None = None) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "method": method, "params": dict(params or {})}


def stateless(rid: int, method: str, params: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """A 2026-07-28 request: its ``_meta`` and its standard headers."""
    return request(rid, method, {**(params or {}), "_meta": META})


def stateless_headers(method: str, name: str | None = None) -> dict[str, str]:
    headers = {"mcp-protocol-version": V2026, "mcp-method": method}
    if name is not None:
        headers["mcp-name"] = name
    return headers


async def initialize(app: McpAsgiApp) -> dict[str, str]:
    """Open an initialize-era session; returns the headers of its later requests."""
    params = {
        "protocolVersion": V2025,
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"},
    }
    response = await post(app, request(1, "initialize", params))
    assert response.status == 200
    answer = response.messages()[-1] if app.core.json_response is False else response.json()
    assert answer["result"]["protocolVersion"] == V2025
    headers = {"mcp-session-id": response.headers["mcp-session-id"], "mcp-protocol-version": V2025}
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert (await post(app, note, headers)).status == 202
    return headers


def waiting_server() -> tuple[Server, asyncio.Event, list[str]]:
    """A server whose ``wait`` tool waits until cancelled (or until the event is set)."""
    server = Server("waiting", "1.0")
    release = asyncio.Event()
    seen: list[str] = []

    @server.tool("wait", input_schema={"type": "object"})
    async def wait(ctx: Context, arguments: Mapping[str, Any]) -> str:
        seen.append("started")
        ctx.progress(1, 2)  # sent only when asked for
        try:
            await release.wait()
        except asyncio.CancelledError:
            seen.append("cancelled")
            raise
        seen.append("finished")
        return "released"

    return server, release, seen


async def until(check: Callable[[], bool], timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.005)


# ---------------------------------------------------------------------- the initialize era


def test_initialize_and_call_a_tool_with_json_answers() -> None:
    async def main() -> None:
        app = McpAsgiApp(build_server(), keepalive=None)
        headers = await initialize(app)
        response = await post(
            app, request(2, "tools/call", {"name": "echo", "arguments": {"message": "hi"}}), headers
        )
        assert response.status == 200
        assert response.headers["mcp-session-id"] == headers["mcp-session-id"]
        assert response.complete
        assert response.parts == 1
        assert response.json()["result"]["content"][0]["text"] == "Echo: hi"
        await app.aclose()

    run(main)


def test_progress_comes_as_an_event_stream() -> None:
    async def main() -> None:
        app = McpAsgiApp(build_server(), keepalive=None)
        headers = await initialize(app)
        params = {"name": "test_tool_with_progress", "arguments": {}, "_meta": {"progressToken": 7}}
        response = await post(app, request(2, "tools/call", params), headers)
        assert response.status == 200
        assert response.complete
        assert response.parts > 1
        assert "content-length" not in response.headers
        messages = response.messages()
        progress = [m["params"]["progress"] for m in messages if "method" in m]
        assert progress == [0, 50, 100]
        assert messages[-1]["id"] == 2
        assert messages[-1]["result"]["content"][0]["text"] == "7"
        await app.aclose()

    run(main)


def test_a_dropped_connection_does_not_cancel_in_the_initialize_era() -> None:
    async def main() -> None:
        server, release, seen = waiting_server()
        app = McpAsgiApp(server, keepalive=None, json_response=False)
        headers = await initialize(app)
        call = post_call(app, request(2, "tools/call", {"name": "wait", "arguments": {}}), headers)
        await until(lambda: seen == ["started"])
        call.disconnect()
        await call.task
        release.set()
        await until(lambda: seen == ["started", "finished"])
        await app.aclose()

    run(main)


def test_the_standalone_stream_gets_keep_alive_comments_without_lifespan() -> None:
    async def main() -> None:
        app = McpAsgiApp(build_server(), keepalive=0.02)
        headers = await initialize(app)  # the keep-alive task starts with a request
        scope = http_scope("GET", headers={**headers, "accept": "text/event-stream"})
        get = Call(app, scope, body_messages(b""))
        await get.wait_until(lambda: len(get.sent) > 1 and b": keep-alive" in get.response.body)
        assert get.response.status == 200
        assert not get.response.complete
        get.disconnect()
        await get.task
        await app.aclose()

    run(main)


def test_delete_ends_the_session() -> None:
    async def main() -> None:
        app = McpAsgiApp(build_server(), keepalive=None)
        headers = await initialize(app)
        deleted = await Call(
            app, http_scope("DELETE", headers=headers), body_messages(b"")
        ).finished()
        assert deleted.status == 200
        response = await post(app, request(2, "tools/list"), headers)
        assert response.status == 404

    run(main)


# ---------------------------------------------------------------------- 2026-07-28


def test_stateless_tools_list() -> None:
    async def main() -> None:
        app = McpAsgiApp(build_server(), keepalive=None)
        response = await post(app, stateless(1, "tools/list"), stateless_headers("tools/list"))
        assert response.status == 200
        assert "mcp-session-id" not in response.headers
        names = {tool["name"] for tool in response.json()["result"]["tools"]}
        assert {"echo", "test_tool_with_progress"} <= names

    run(main)


def test_a_stateless_request_with_a_wrong_header_is_refused() -> None:
    async def main() -> None:
        app = McpAsgiApp(build_server(), keepalive=None)
        response = await post(app, stateless(1, "tools/list"), stateless_headers("prompts/list"))
        assert response.status == 400
        assert response.json()["error"]["code"] == -32020

    run(main)


def test_a_disconnect_cancels_a_stateless_request() -> None:
    async def main() -> None:
        server, _, seen = waiting_server()
        app = McpAsgiApp(server, keepalive=None)
        message = stateless(1, "tools/call", {"name": "wait", "arguments": {}})
        call = post_call(app, message, stateless_headers("tools/call", "wait"))
        await until(lambda: seen == ["started"])
        assert not call.sent  # nothing to say yet
        call.disconnect()
        await call.task
        await until(lambda: seen == ["started", "cancelled"])
        assert app.core.all_sessions() == []

    run(main)


def test_a_send_that_fails_counts_as_a_disconnect() -> None:
    async def main() -> None:
        server, _, seen = waiting_server()
        app = McpAsgiApp(server, keepalive=None)
        params = {"name": "wait", "arguments": {}, "_meta": {**META, "progressToken": 1}}
        message = request(1, "tools/call", params)
        call = post_call(app, message, stateless_headers("tools/call", "wait"))
        call.broken = True
        await call.task
        assert [m["type"] for m in call.sent] == ["http.response.start", "http.response.body"]
        await until(lambda: seen == ["started", "cancelled"])

    run(main)


# ---------------------------------------------------------------------- limits and checks


def test_a_body_too_large_gets_413_without_being_read_whole() -> None:
    async def main() -> None:
        app = McpAsgiApp(build_server(), keepalive=None, max_body_size=100)
        body = orjson.dumps(request(1, "tools/list", {"pad": "x" * 1000}))
        headers = {"accept": ACCEPT, "content-type": "application/json"}
        call = Call(app, http_scope("POST", headers=headers), body_messages(body, chunk=64))
        await call.wait_until(lambda: any(not m.get("more_body", True) for m in call.sent))
        assert call.response.status == 413
        assert not call.inbox.empty()  # the rest of the body was never asked for
        call.disconnect()
        await call.task
        # Announced by Content-Length: refused before the body.
        long = {**headers, "content-length": str(len(body))}
        refused = await Call(app, http_scope("POST", headers=long), []).finished()
        assert refused.status == 413

    run(main)


def test_a_client_that_leaves_during_the_body_gets_nothing() -> None:
    async def main() -> None:
        app = McpAsgiApp(build_server(), keepalive=None)
        headers = {"accept": ACCEPT, "content-type": "application/json"}
        first = {"type": "http.request", "body": b'{"jsonrpc":', "more_body": True}
        call = Call(app, http_scope("POST", headers=headers), [first, {"type": "http.disconnect"}])
        await call.task
        assert call.sent == []

    run(main)


def test_dns_rebinding_protection() -> None:
    async def main() -> None:
        app = McpAsgiApp(build_server(), keepalive=None)
        message = stateless(1, "tools/list")
        headers = stateless_headers("tools/list")
        evil = await post(app, message, {**headers, "origin": "http://evil.example"})
        assert evil.status == 403
        foreign = await post(app, message, {**headers, "host": "mcp.example.com"})
        assert foreign.status == 421
        local = await post(app, message, {**headers, "origin": "http://localhost:3000"})
        assert local.status == 200

    run(main)


def test_a_deployment_names_its_host_and_origins() -> None:
    async def main() -> None:
        app = McpAsgiApp(
            build_server(),
            keepalive=None,
            allowed_hosts=["mcp.example.com"],
            allowed_origins=["app.example.com"],
        )
        message = stateless(1, "tools/list")
        headers = {**stateless_headers("tools/list"), "host": "mcp.example.com"}
        assert (await post(app, message, headers)).status == 200
        good = {**headers, "origin": "https://app.example.com"}
        assert (await post(app, message, good)).status == 200
        bad = {**headers, "origin": "https://mcp.example.com.evil"}
        assert (await post(app, message, bad)).status == 403
        local = {**stateless_headers("tools/list"), "host": "localhost"}
        assert (await post(app, message, local)).status == 421
        # None: the proxy in front checks.
        open_app = McpAsgiApp(build_server(), keepalive=None, allowed_hosts=None)
        assert (await post(open_app, message, headers)).status == 200

    run(main)


def test_paths_and_methods() -> None:
    async def main() -> None:
        app = McpAsgiApp(build_server(), keepalive=None)
        message = stateless(1, "tools/list")
        headers = stateless_headers("tools/list")
        assert (await post(app, message, headers, path="/other")).status == 404
        assert (await post(app, message, headers, query=b"x=1")).status == 200
        mounted = await post(app, message, headers, path="/api/mcp", root_path="/api")
        assert mounted.status == 200
        put = await Call(app, http_scope("PUT"), body_messages(b"")).finished()
        assert put.status == 405
        assert put.headers["allow"] == "GET, POST, DELETE"

    run(main)


# ---------------------------------------------------------------------- lifespan, other scopes


def test_lifespan_starts_the_keep_alive_and_ends_every_session() -> None:
    async def main() -> None:
        server, _, seen = waiting_server()
        app = McpAsgiApp(server, keepalive=30.0, json_response=False)
        life = Call(app, {"type": "lifespan", "asgi": {"version": "3.0"}})
        life.inbox.put_nowait({"type": "lifespan.startup"})
        await life.wait_until(lambda: len(life.sent) == 1)
        assert life.sent == [{"type": "lifespan.startup.complete"}]
        sessions: Any = app._sessions
        task = sessions._keepalive_task
        assert task is not None
        assert not task.done()

        headers = await initialize(app)
        call = post_call(app, request(2, "tools/call", {"name": "wait", "arguments": {}}), headers)
        await until(lambda: seen == ["started"])
        (hs,) = app.core.all_sessions()

        life.inbox.put_nowait({"type": "lifespan.shutdown"})
        await life.task
        assert life.sent[-1] == {"type": "lifespan.shutdown.complete"}
        assert task.done()
        assert hs.driver.dead
        assert seen == ["started", "cancelled"]
        call.disconnect()
        await call.task
        late = await post(app, request(3, "tools/list"), headers)
        assert late.status == 503

    run(main)


def test_lifespan_on_trio_starts_and_ends_the_sessions_home() -> None:
    """On trio the sessions' nursery is a system task from startup to shutdown."""
    trio = pytest.importorskip("trio")
    app = McpAsgiApp(build_server())
    sent: list[Message] = []
    inbox = [{"type": "lifespan.startup"}, {"type": "lifespan.shutdown"}]
    home: list[Any] = []

    async def receive() -> Message:
        if not inbox[1:]:  # between startup and shutdown
            home.append(getattr(app._sessions, "nursery", None))
        return inbox.pop(0)

    async def send(message: Message) -> None:
        sent.append(message)

    trio.run(app, {"type": "lifespan"}, receive, send)
    assert [m["type"] for m in sent] == ["lifespan.startup.complete", "lifespan.shutdown.complete"]
    assert home[0] is not None
    assert getattr(app._sessions, "nursery", "none") is None


def test_an_app_stays_on_the_library_it_started_on() -> None:
    trio = pytest.importorskip("trio")
    app = McpAsgiApp(build_server())
    run(lambda: app._start())
    with pytest.raises(RuntimeError, match="on asyncio, not trio"):
        trio.run(app._start)


def test_websockets_are_refused_and_other_scopes_raise() -> None:
    async def main() -> None:
        app = McpAsgiApp(build_server(), keepalive=None)
        ws = Call(app, {"type": "websocket", "path": "/mcp"}, [{"type": "websocket.connect"}])
        await ws.task
        assert ws.sent == [{"type": "websocket.close", "code": 1000}]
        with pytest.raises(ValueError, match="webtransport"):
            await app({"type": "webtransport"}, ws.receive, ws.send)

    run(main)


def test_the_app_needs_no_h11() -> None:
    code = textwrap.dedent(
        """
        import sys

        class NoH11:
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] == "h11":
                    raise ImportError("no h11 here")

        sys.meta_path.insert(0, NoH11())
        from mcp_sansio.example import build_server
        from mcp_sansio.asgi import McpAsgiApp

        McpAsgiApp(build_server())
        assert "h11" not in sys.modules
        """
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


# ---------------------------------------------------------------------- under uvicorn


@contextlib.contextmanager
def uvicorn_serving(app: Any) -> Iterator[int]:
    """Run ``app`` under uvicorn in a thread, on a free loopback port; yields the port."""
    uvicorn = pytest.importorskip("uvicorn")
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port: int = sock.getsockname()[1]
    config = uvicorn.Config(
        app, http="h11", ws="none", lifespan="on", log_level="warning", loop="asyncio"
    )
    served = uvicorn.Server(config)
    thread = threading.Thread(target=served.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 10
        while not served.started:
            assert thread.is_alive(), "uvicorn failed"
            assert time.monotonic() < deadline, "uvicorn did not start"
            time.sleep(0.01)
        yield port
    finally:
        served.should_exit = True
        thread.join(10)
        sock.close()
        assert not thread.is_alive(), "uvicorn did not stop"


def _post_over_http(
    port: int, message: Any, headers: Mapping[str, str]
) -> tuple[int, dict[str, str], bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        all_headers = {"Accept": ACCEPT, "Content-Type": "application/json", **headers}
        connection.request("POST", "/mcp", body=orjson.dumps(message), headers=all_headers)
        response = connection.getresponse()
        body = response.read()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, body
    finally:
        connection.close()


@pytest.mark.skipif(importlib.util.find_spec("uvicorn") is None, reason="needs uvicorn")
def test_a_tool_call_under_uvicorn() -> None:
    app = McpAsgiApp(build_server())
    with uvicorn_serving(app) as port:
        # 2026-07-28: one POST.
        message = stateless(1, "tools/call", {"name": "echo", "arguments": {"message": "hi"}})
        status, headers, body = _post_over_http(
            port, message, stateless_headers("tools/call", "echo")
        )
        assert status == 200
        assert orjson.loads(body)["result"]["content"][0]["text"] == "Echo: hi"

        # The initialize era: a session, then a tool with progress (an event stream).
        params = {
            "protocolVersion": V2025,
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        }
        status, headers, body = _post_over_http(port, request(1, "initialize", params), {})
        assert status == 200
        session = {"Mcp-Session-Id": headers["mcp-session-id"], "MCP-Protocol-Version": V2025}
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        assert _post_over_http(port, note, session)[0] == 202
        call = request(
            2,
            "tools/call",
            {"name": "test_tool_with_progress", "arguments": {}, "_meta": {"progressToken": "p"}},
        )
        status, headers, body = _post_over_http(port, call, session)
        assert status == 200
        assert headers["content-type"] == "text/event-stream"
        messages = [orjson.loads(e.data) for e in SseDecoder().feed(body) if e.data]
        assert [m["params"]["progress"] for m in messages[:-1]] == [0, 50, 100]
        assert messages[-1]["result"]["content"][0]["text"] == "p"
        (hs,) = app.core.all_sessions()
    assert hs.driver.dead  # lifespan shutdown ended the session
