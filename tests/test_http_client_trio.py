"""The trio binding of the Streamable HTTP client (``mcp_sansio.trio.Client.connect_http``)
against our own server (``mcp_sansio.trio.serve_http`` with the example server) over
loopback, in the same nursery, in both eras. Every test is bounded by ``trio.fail_after``.

In the initialize era, :func:`settle` waits, after opening, for the server's ``202`` to
``notifications/initialized``: the transport does not hold the next POST back until then,
so a call could otherwise reach the server first.
"""

from __future__ import annotations

import shutil
import ssl
import subprocess
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("trio")
pytest.importorskip("h11")

import h11
import orjson
import trio

from mcp_sansio.example import build_server
from mcp_sansio.http._client import HttpRequest
from mcp_sansio.trio import Client, Context, McpError, RequestTimeout, serve_http
from mcp_sansio.trio._http_client import HttpStream

V2025 = "2025-11-25"
V2026 = "2026-07-28"
ERAS = pytest.mark.parametrize("versions", [[V2025], None], ids=["initialize", "default"])
ACCEPT = "application/json, text/event-stream"
FORM = {"username": "ada", "email": "ada@example.org"}


def run(test: Callable[[], Awaitable[None]], limit: float = 20) -> None:
    async def bounded() -> None:
        with trio.fail_after(limit):
            await test()

    trio.run(bounded)


@asynccontextmanager
async def serving(**options: Any) -> AsyncIterator[str]:
    """The example server over HTTP on a free loopback port; yields its URL."""
    async with trio.open_nursery() as nursery:
        port = await nursery.start(partial(serve_http, build_server(), **options))
        yield f"http://127.0.0.1:{port}/mcp"
        nursery.cancel_scope.cancel()


def stream_of(client: Client) -> HttpStream:
    stream = client._stream
    assert isinstance(stream, HttpStream)
    return stream


async def settle(client: Client) -> None:
    """Wait until no exchange is open (``notifications/initialized`` answered)."""
    while stream_of(client).transport.open_streams:
        await trio.sleep(0.005)


@pytest.fixture
def made(monkeypatch: pytest.MonkeyPatch) -> list[HttpRequest]:
    """Every request the HTTP streams make, in order."""
    seen: list[HttpRequest] = []
    start = HttpStream._start

    def record(self: HttpStream, request: HttpRequest) -> None:
        seen.append(request)
        start(self, request)

    monkeypatch.setattr(HttpStream, "_start", record)
    return seen


def bodies(made: list[HttpRequest]) -> list[Any]:
    return [orjson.loads(r.body) for r in made if r.method == "POST"]


async def ping_status(url: str, session_id: str) -> int:
    """The status of a ``ping`` POSTed with ``session_id`` on a connection of its own."""
    port = int(url.split(":")[2].split("/")[0])
    body = orjson.dumps({"jsonrpc": "2.0", "id": "probe", "method": "ping"})
    headers = [
        ("Host", f"127.0.0.1:{port}"),
        ("Content-Type", "application/json"),
        ("Accept", ACCEPT),
        ("Mcp-Session-Id", session_id),
        ("MCP-Protocol-Version", V2025),
        ("Content-Length", str(len(body))),
    ]
    conn = h11.Connection(h11.CLIENT)
    async with await trio.open_tcp_stream("127.0.0.1", port) as stream:
        request = conn.send(h11.Request(method="POST", target="/mcp", headers=headers))
        await stream.send_all(
            request + conn.send(h11.Data(data=body)) + conn.send(h11.EndOfMessage())
        )
        while True:
            event = conn.next_event()
            if event is h11.NEED_DATA:
                conn.receive_data(await stream.receive_some(65536))
            elif isinstance(event, h11.Response):
                return event.status_code


# ---------------------------------------------------------------------- calls


@ERAS
def test_open_call_and_progress(versions: list[str] | None) -> None:
    async def main() -> None:
        async with serving() as url, Client.connect_http(url, versions=versions) as client:
            assert client.protocol_version == (V2025 if versions else V2026)
            assert (client.server_info or {}).get("name")
            if versions:
                await settle(client)
            tools = await client.list_tools()
            assert "echo" in {t["name"] for t in tools["tools"]}
            answer = await client.call_tool("echo", {"message": "hi"})
            assert answer["content"] == [{"type": "text", "text": "Echo: hi"}]
            progress: list[Mapping[str, Any]] = []
            await client.call_tool("test_tool_with_progress", on_progress=progress.append)
            assert [p["progress"] for p in progress] == [0, 50, 100]
            assert all(p["total"] == 100 for p in progress)

    run(main)


@ERAS
def test_many_calls_in_flight_on_pooled_connections(
    versions: list[str] | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    opened: list[int] = []
    open_connection = HttpStream._open

    async def counting(self: HttpStream) -> Any:
        opened.append(1)
        return await open_connection(self)

    monkeypatch.setattr(HttpStream, "_open", counting)

    async def main() -> None:
        async with serving() as url, Client.connect_http(url, versions=versions) as client:
            if versions:
                await settle(client)
            results: dict[int, str] = {}
            progress: dict[int, int] = {}

            async def call(i: int) -> None:
                if i % 4:
                    answer = await client.call_tool("echo", {"message": str(i)})
                else:  # a slow one, with progress, so that they overlap for sure
                    progress[i] = 0

                    def count(params: Mapping[str, Any], i: int = i) -> None:
                        progress[i] += 1

                    answer = await client.call_tool(
                        "long-running-operation",
                        {"duration": 0.3, "steps": 3},
                        on_progress=count,
                    )
                results[i] = answer["content"][0]["text"]

            async with trio.open_nursery() as nursery:
                for i in range(40):
                    nursery.start_soon(call, i)
            assert len(results) == 40
            assert all(results[i] == f"Echo: {i}" for i in range(40) if i % 4)
            assert progress == dict.fromkeys(range(0, 40, 4), 3)
            # One at a time, the calls reuse the kept-alive connections.
            stream = stream_of(client)
            assert 0 < len(stream._pool) <= stream._pool.max_idle
            before = len(opened)
            for i in range(10):
                await client.call_tool("echo", {"message": str(i)})
            assert len(opened) == before

    run(main)


@ERAS
def test_elicitation_is_answered(versions: list[str] | None, made: list[HttpRequest]) -> None:
    asked: list[Mapping[str, Any]] = []

    async def elicit(ctx: Context, params: Mapping[str, Any]) -> dict[str, Any]:
        asked.append(params)
        await trio.sleep(0.01)
        return {"action": "accept", "content": FORM}

    async def main() -> None:
        handlers = {"elicitation/create": elicit}
        async with (
            serving() as url,
            Client.connect_http(url, versions=versions, handlers=handlers) as client,
        ):
            if versions:
                await settle(client)
            answer = await client.call_tool("test_elicitation", {"message": "Who?"})
            text = answer["content"][0]["text"]
            assert text == f"User response: action=accept, content={orjson.dumps(FORM).decode()}"
        assert [a["message"] for a in asked] == ["Who?"]
        posts = bodies(made)
        calls = [p for p in posts if p.get("method") == "tools/call"]
        if versions:
            # The server asked on the call's event stream; the answer was POSTed back.
            assert len(calls) == 1
            assert any(p.get("result") == {"action": "accept", "content": FORM} for p in posts)
        else:
            # 2026-07-28: the call ended with input_required and was retried with the answer.
            assert len(calls) == 2
            assert "inputResponses" in calls[1]["params"]

    run(main)


def test_a_stream_cut_short_is_resumed_after_its_retry(made: list[HttpRequest]) -> None:
    async def main() -> None:
        async with (
            serving(retry=200) as url,
            Client.connect_http(url, versions=[V2025]) as client,
        ):
            await settle(client)
            start = trio.current_time()
            answer = await client.call_tool("test_reconnection")
            assert "reconnected" in answer["content"][0]["text"]
            assert trio.current_time() - start >= 0.19
        (get,) = [r for r in made if r.method == "GET"]
        assert get.delay == pytest.approx(0.2)
        assert "Last-Event-ID" in dict(get.headers)

    run(main)


@pytest.mark.parametrize("versions", [[V2025], [V2026]], ids=["initialize", "2026"])
def test_a_timed_out_call_drops_its_exchange(versions: list[str]) -> None:
    async def main() -> None:
        async with serving() as url, Client.connect_http(url, versions=versions) as client:
            if versions == [V2025]:
                await settle(client)
            with pytest.raises(RequestTimeout):
                await client.call_tool("long-running-operation", {"duration": 30}, timeout=0.3)
            stream = stream_of(client)
            while stream._scopes:  # the exchange was cancelled, its connection closed
                await trio.sleep(0.01)
            assert stream.transport.open_streams == ()
            answer = await client.call_tool("echo", {"message": "still here"})
            assert answer["content"][0]["text"] == "Echo: still here"

    run(main)


# ---------------------------------------------------------------------- failures, closing


@ERAS
def test_a_server_that_is_down(versions: list[str] | None) -> None:
    async def main() -> None:
        async with serving() as url:
            pass
        with pytest.raises(McpError, match="cannot connect"):
            async with Client.connect_http(url, versions=versions, timeout=5):
                pass  # pragma: no cover

    run(main, limit=10)


def test_a_server_that_goes_away_mid_session() -> None:
    async def main() -> None:
        server_scope = trio.CancelScope()

        async def serve(task_status: trio.TaskStatus[int]) -> None:
            with server_scope:
                await serve_http(build_server(), task_status=task_status)

        async with trio.open_nursery() as nursery:
            port = await nursery.start(serve)
            url = f"http://127.0.0.1:{port}/mcp"
            async with Client.connect_http(url, versions=[V2026], timeout=5) as client:
                await client.call_tool("echo", {"message": "a"})
                server_scope.cancel()  # the server stops (its connections close)
                await trio.sleep(0.05)
                with pytest.raises(McpError, match=r"cannot connect|closed|broke|failed"):
                    await client.call_tool("echo", {"message": "b"})

    run(main, limit=10)


@asynccontextmanager
async def server_in_scope(
    port: int = 0, **options: Any
) -> AsyncIterator[tuple[str, trio.CancelScope]]:
    """The example server in a cancel scope of its own; yields its URL and the scope."""
    scope = trio.CancelScope()

    async def serve(task_status: trio.TaskStatus[int]) -> None:
        with scope:
            await serve_http(build_server(), port=port, task_status=task_status, **options)

    async with trio.open_nursery() as nursery:
        bound = await nursery.start(serve)
        yield f"http://127.0.0.1:{bound}/mcp", scope
        scope.cancel()


def test_a_server_that_stops_during_a_call() -> None:
    async def main() -> None:
        async with (
            server_in_scope() as (url, scope),
            Client.connect_http(url, versions=[V2025], timeout=5) as client,
        ):
            await settle(client)

            async def stop() -> None:
                await trio.sleep(0.3)
                scope.cancel()

            async with trio.open_nursery() as nursery:
                nursery.start_soon(stop)
                with pytest.raises(McpError, match=r"closed|broke|failed"):
                    await client.call_tool("long-running-operation", {"duration": 5})

    run(main, limit=10)


def test_stale_kept_alive_connections_are_retried() -> None:
    async def main() -> None:
        async with server_in_scope() as (url, scope):
            client = Client.connect_http(url, versions=[V2026])
            async with client:
                await client.call_tool("echo", {"message": "before"})
                scope.cancel()  # the server goes, closing the kept-alive connections
                await trio.sleep(0.05)
                assert len(stream_of(client)._pool) > 0
                port = int(url.split(":")[2].split("/")[0])
                async with server_in_scope(port):  # and comes back on the same port
                    answer = await client.call_tool("echo", {"message": "after"})
                    assert answer["content"][0]["text"] == "Echo: after"

    run(main)


def test_a_delayed_resumption_is_dropped_with_its_call() -> None:
    async def main() -> None:
        async with (
            serving(retry=5000) as url,
            Client.connect_http(url, versions=[V2025]) as client,
        ):
            await settle(client)
            start = trio.current_time()
            with pytest.raises(RequestTimeout):
                await client.call_tool("test_reconnection", timeout=0.5)  # resumed after 5 s
            stream = stream_of(client)
            while stream._scopes:
                await trio.sleep(0.01)
            assert trio.current_time() - start < 3
            answer = await client.call_tool("echo", {"message": "on"})
            assert answer["content"][0]["text"] == "Echo: on"

    run(main)


def test_close_ends_the_session_with_delete(made: list[HttpRequest]) -> None:
    async def main() -> None:
        async with serving() as url:
            async with Client.connect_http(url, versions=[V2025]) as client:
                await settle(client)
                session_id = stream_of(client).transport.session_id
                assert session_id is not None
                assert await ping_status(url, session_id) == 200
            assert made[-1].method == "DELETE"
            assert dict(made[-1].headers)["Mcp-Session-Id"] == session_id
            assert await ping_status(url, session_id) == 404  # the server forgot it
            # 2026-07-28 has no session to end.
            made.clear()
            async with Client.connect_http(url, versions=[V2026]) as client:
                await client.call_tool("echo", {"message": "x"})
            assert "DELETE" not in {r.method for r in made}

    run(main)


def test_the_stream_on_its_own() -> None:
    async def main() -> None:
        async with serving() as url:
            stream = HttpStream(url)
            line = {"jsonrpc": "2.0", "id": 1, "method": "initialize"}
            line["params"] = {
                "protocolVersion": V2025,
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            }
            await stream.send_all(orjson.dumps(line) + b"\n")  # made once run() runs
            async with trio.open_nursery() as nursery:
                await nursery.start(stream.run)
                answer = orjson.loads(await stream.receive_some())
                assert answer["result"]["protocolVersion"] == V2025
                await stream.wait_send_all_might_not_block()
                await stream.aclose()  # ends run() too
            assert await stream.receive_some() == b""
            with pytest.raises(trio.ClosedResourceError):
                await stream.send_all(b"{}\n")
            await stream.aclose()  # idempotent

    run(main)


def test_a_bad_url_fails_at_once() -> None:
    with pytest.raises(ValueError, match="not an http"):
        Client.connect_http("ftp://example.org/mcp")


# ---------------------------------------------------------------------- https


def make_certificate(directory: Path) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1, and its key (with the openssl tool)."""
    cert, key = directory / "cert.pem", directory / "key.pem"
    command = "openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.1"
    extension = ["-addext", "subjectAltName=IP:127.0.0.1"]
    subprocess.run(
        [*command.split(), *extension, "-keyout", str(key), "-out", str(cert)],
        check=True,
        capture_output=True,
        timeout=60,
    )
    return cert, key


@pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl tool")
def test_https(tmp_path: Path) -> None:
    cert, key = make_certificate(tmp_path)
    server_context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_context.load_cert_chain(cert, key)
    client_context = ssl.create_default_context(cafile=str(cert))

    async def main() -> None:
        async with serving() as url, trio.open_nursery() as nursery:
            backend = int(url.split(":")[2].split("/")[0])

            async def pipe(source: trio.abc.Stream, sink: trio.abc.Stream) -> None:
                try:
                    async for chunk in source:
                        await sink.send_all(chunk)
                except (trio.BrokenResourceError, trio.ClosedResourceError):
                    pass
                finally:
                    await trio.aclose_forcefully(sink)

            async def proxy(tls: trio.SSLStream[trio.SocketStream]) -> None:
                plain = await trio.open_tcp_stream("127.0.0.1", backend)
                async with trio.open_nursery() as pipes:
                    pipes.start_soon(pipe, tls, plain)
                    pipes.start_soon(pipe, plain, tls)

            listeners = await nursery.start(
                partial(trio.serve_ssl_over_tcp, proxy, 0, server_context, host="127.0.0.1")
            )
            port = listeners[0].transport_listener.socket.getsockname()[1]
            secure = f"https://127.0.0.1:{port}/mcp"
            async with Client.connect_http(secure, ssl=client_context) as client:
                assert client.protocol_version == V2026
                answer = await client.call_tool("echo", {"message": "tls"})
                assert answer["content"][0]["text"] == "Echo: tls"
            # Without trusting the certificate, the connection is refused.
            with pytest.raises(McpError, match=r"certificate|SSL|failed"):
                async with Client.connect_http(secure, versions=[V2026], timeout=5):
                    pass  # pragma: no cover
            nursery.cancel_scope.cancel()

    run(main)
