"""The ASGI application (:class:`mcp_sansio.asgi.McpAsgiApp`) under real ASGI servers on
each library it runs on: hypercorn's trio worker (the app's sessions on
``mcp_sansio.trio.HttpSessions``), hypercorn's asyncio worker and uvicorn (on
``mcp_sansio.asyncio.HttpSessions``). One full session over loopback each: initialize, a
tool call whose progress comes over SSE, the standalone GET stream, DELETE; then lifespan
shutdown. Every socket read is bounded (10 s), and so is every server's start and stop.
"""

from __future__ import annotations

import contextlib
import http.client
import importlib.util
import socket
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import orjson
import pytest
from test_http_asgi import ACCEPT, V2025, request, stateless, stateless_headers

from mcp_sansio._sse import SseDecoder
from mcp_sansio.asgi import McpAsgiApp
from mcp_sansio.example import build_server
from mcp_sansio.server import Server

LIMIT = 10.0  # seconds: every read, start and stop


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _wait_listening(port: int, alive: Callable[[], bool]) -> None:
    deadline = time.monotonic() + LIMIT
    while True:
        assert alive(), "the server thread ended"
        assert time.monotonic() < deadline, "the server did not start"
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 1):
            return
        time.sleep(0.01)


@contextlib.contextmanager
def _hypercorn_trio(app: Any) -> Iterator[int]:
    trio = pytest.importorskip("trio")
    pytest.importorskip("hypercorn")
    from hypercorn.config import Config
    from hypercorn.trio import serve

    port = _free_port()
    config = Config()
    config.bind = [f"127.0.0.1:{port}"]
    config.loglevel = "WARNING"
    box: dict[str, Any] = {}

    async def main() -> None:
        box["token"] = trio.lowlevel.current_trio_token()
        box["stop"] = stop = trio.Event()
        await serve(app, config, shutdown_trigger=stop.wait)

    thread = threading.Thread(target=trio.run, args=(main,), name="hypercorn-trio")
    thread.start()
    try:
        _wait_listening(port, thread.is_alive)
        yield port
    finally:
        if "token" in box:
            trio.from_thread.run_sync(box["stop"].set, trio_token=box["token"])
        thread.join(LIMIT)
        assert not thread.is_alive(), "hypercorn (trio) did not stop"


@contextlib.contextmanager
def _hypercorn_asyncio(app: Any) -> Iterator[int]:
    pytest.importorskip("hypercorn")
    import asyncio

    from hypercorn.asyncio import serve
    from hypercorn.config import Config

    port = _free_port()
    config = Config()
    config.bind = [f"127.0.0.1:{port}"]
    config.loglevel = "WARNING"
    box: dict[str, Any] = {}

    async def main() -> None:
        box["loop"] = asyncio.get_running_loop()
        box["stop"] = stop = asyncio.Event()
        await serve(app, config, shutdown_trigger=stop.wait)

    thread = threading.Thread(target=asyncio.run, args=(main(),), name="hypercorn-asyncio")
    thread.start()
    try:
        _wait_listening(port, thread.is_alive)
        yield port
    finally:
        if "loop" in box:
            box["loop"].call_soon_threadsafe(box["stop"].set)
        thread.join(LIMIT)
        assert not thread.is_alive(), "hypercorn (asyncio) did not stop"


@contextlib.contextmanager
def _uvicorn(app: Any) -> Iterator[int]:
    from test_http_asgi import uvicorn_serving

    with uvicorn_serving(app) as port:
        yield port


SERVERS: dict[str, Callable[[Any], contextlib.AbstractContextManager[int]]] = {
    "hypercorn-trio": _hypercorn_trio,
    "hypercorn-asyncio": _hypercorn_asyncio,
    "uvicorn": _uvicorn,
}


def _exchange(
    port: int, method: str, message: Any, headers: Mapping[str, str]
) -> tuple[int, dict[str, str], bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=LIMIT)
    try:
        all_headers = {"Accept": ACCEPT, "Content-Type": "application/json", **headers}
        body = None if message is None else orjson.dumps(message)
        connection.request(method, "/mcp", body=body, headers=all_headers)
        response = connection.getresponse()
        data = response.read()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, data
    finally:
        connection.close()


def _standalone_stream(port: int, headers: Mapping[str, str]) -> tuple[int, str, bytes]:
    """Open the GET stream, read until a keep-alive comment comes, and leave."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=LIMIT)
    try:
        connection.request("GET", "/mcp", headers={"Accept": "text/event-stream", **headers})
        response = connection.getresponse()
        seen = b""
        while response.status == 200 and b": keep-alive" not in seen:
            chunk = response.read1(4096)
            assert chunk, "the stream ended"
            seen += chunk
        return response.status, response.getheader("content-type") or "", seen
    finally:
        connection.close()


@pytest.mark.parametrize("name", list(SERVERS))
def test_a_full_session_under_a_real_asgi_server(name: str) -> None:
    if name == "uvicorn" and importlib.util.find_spec("uvicorn") is None:
        pytest.skip("needs uvicorn")
    app = McpAsgiApp(build_server(), keepalive=0.05)
    with SERVERS[name](app) as port:
        params = {
            "protocolVersion": V2025,
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        }
        status, headers, body = _exchange(port, "POST", request(1, "initialize", params), {})
        assert status == 200, body
        assert orjson.loads(body)["result"]["protocolVersion"] == V2025
        session = {"Mcp-Session-Id": headers["mcp-session-id"], "MCP-Protocol-Version": V2025}
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        assert _exchange(port, "POST", note, session)[0] == 202

        call = request(
            2,
            "tools/call",
            {"name": "test_tool_with_progress", "arguments": {}, "_meta": {"progressToken": "p"}},
        )
        status, headers, body = _exchange(port, "POST", call, session)
        assert status == 200
        assert headers["content-type"] == "text/event-stream"
        messages = [orjson.loads(e.data) for e in SseDecoder().feed(body) if e.data]
        assert [m["params"]["progress"] for m in messages[:-1]] == [0, 50, 100]
        assert messages[-1]["id"] == 2
        assert messages[-1]["result"]["content"][0]["text"] == "p"

        status, kind, seen = _standalone_stream(port, session)
        assert (status, kind) == (200, "text/event-stream")
        assert b": keep-alive" in seen
        (hs,) = app.core.all_sessions()
        assert app._library == name.rpartition("-")[2].replace("uvicorn", "asyncio")

        assert _exchange(port, "DELETE", None, session)[0] == 200
        assert _exchange(port, "POST", request(3, "tools/list"), session)[0] == 404
        assert app.core.all_sessions() == []
    assert hs.driver is None or _ended(hs.driver)


def _ended(driver: Any) -> bool:
    """The session's loop is over: asyncio's ``_Peer.dead``, trio's cancelled scope."""
    dead = getattr(driver, "dead", None)
    return bool(dead) if dead is not None else bool(driver.scope.cancel_called)


def test_without_lifespan_on_trio_the_first_request_opens_the_sessions() -> None:
    """``--lifespan off``-like: hypercorn sends lifespan events, an app that refuses the
    scope gets none, and the first request makes the sessions' home (a trio system task);
    the end of the run ends it."""
    trio = pytest.importorskip("trio")
    inner = McpAsgiApp(build_server(), keepalive=None)

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            raise RuntimeError("no lifespan here")
        await inner(scope, receive, send)

    with _hypercorn_trio(app) as port:
        params = {
            "protocolVersion": V2025,
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        }
        status, _, body = _exchange(port, "POST", request(1, "initialize", params), {})
        assert status == 200, body
        sessions: Any = inner._sessions
        assert sessions.nursery is not None
        assert len(inner.core.all_sessions()) == 1
    # the home ended with its trio run (system tasks are cancelled at the end of a run)
    assert sessions.nursery is None
    trio.run(inner.aclose)


def test_on_trio_a_client_that_leaves_cancels_its_stateless_request() -> None:
    """2026-07-28 under hypercorn's trio worker: the app's watcher (a task beside the
    response, ``mcp_sansio.trio.HttpSessions.beside``) sees ``http.disconnect`` and the
    handler is cancelled; the one-request session is gone."""
    trio = pytest.importorskip("trio")
    server = Server("waiting", "1.0")
    seen: list[str] = []

    @server.tool("wait", input_schema={"type": "object"})
    async def wait(ctx: Any, arguments: Mapping[str, Any]) -> str:
        seen.append("started")
        try:
            await trio.sleep_forever()
        except trio.Cancelled:
            seen.append("cancelled")
            raise
        raise AssertionError("unreachable")  # pragma: no cover

    app = McpAsgiApp(server, keepalive=None)
    with _hypercorn_trio(app) as port:
        body = orjson.dumps(stateless(1, "tools/call", {"name": "wait", "arguments": {}}))
        headers = {
            "Host": f"127.0.0.1:{port}",
            "Accept": ACCEPT,
            "Content-Type": "application/json",
            "Content-Length": str(len(body)),
            **stateless_headers("tools/call", "wait"),
        }
        head = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
        with socket.create_connection(("127.0.0.1", port), LIMIT) as sock:
            sock.sendall(f"POST /mcp HTTP/1.1\r\n{head}\r\n".encode("latin-1") + body)
            _until(lambda: seen == ["started"])
        _until(lambda: seen == ["started", "cancelled"])
        _until(lambda: app.core.all_sessions() == [])


def _until(check: Callable[[], bool]) -> None:
    deadline = time.monotonic() + LIMIT
    while not check():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.005)
