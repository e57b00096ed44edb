"""Streamable HTTP on trio (:func:`mcp_sansio.trio.serve_http`): the example server over
real loopback sockets, in both eras, with a small h11 client written here. Every test is
bounded by ``trio.fail_after``."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from functools import partial
from typing import Any

import pytest

pytest.importorskip("trio")
pytest.importorskip("h11")

import h11
import orjson
import trio
import trio.testing

from mcp_sansio._sse import SseDecoder, SseEvent
from mcp_sansio.example import build_server
from mcp_sansio.server import Server
from mcp_sansio.trio import serve_http

ACCEPT = "application/json, text/event-stream"
V2025 = "2025-11-25"
V2026 = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": V2026,
    "io.modelcontextprotocol/clientCapabilities": {},
}
NOTHING = {"type": "object"}


def run(test: Callable[[], Awaitable[None]], limit: float = 10) -> None:
    async def bounded() -> None:
        with trio.fail_after(limit):
            await test()

    trio.run(bounded)


@asynccontextmanager
async def serving(server: Server | None = None, **options: Any) -> AsyncIterator[int]:
    """Serve ``server`` (default: the example) over HTTP on a free loopback port."""
    async with trio.open_nursery() as nursery:
        port: int = await nursery.start(partial(serve_http, server or build_server(), **options))
        yield port
        nursery.cancel_scope.cancel()


# ---------------------------------------------------------------------- the client


class Response:
    """A response head and what has been read of its body."""

    def __init__(self, head: h11.Response) -> None:
        self.status = head.status_code
        self.headers = {k.decode(): v.decode() for k, v in head.headers}
        self.body = b""

    def json(self) -> Any:
        assert self.headers["content-type"] == "application/json"
        return orjson.loads(self.body)


class Http:
    """A tiny HTTP/1.1 client on h11: one connection, one request at a time."""

    def __init__(self, stream: trio.SocketStream, port: int) -> None:
        self.stream = stream
        self.port = port
        self.conn = h11.Connection(h11.CLIENT)
        self.session_id: str | None = None
        self.version: str | None = None

    @classmethod
    async def open(cls, port: int) -> Http:
        return cls(await trio.open_tcp_stream("127.0.0.1", port), port)

    async def send(
        self, method: str = "POST", body: Any = None, headers: Mapping[str, str] | None = None
    ) -> None:
        await self.stream.send_all(self.encode(self.conn, method, body, headers))

    def encode(
        self,
        conn: h11.Connection,
        method: str = "POST",
        body: Any = None,
        headers: Mapping[str, str] | None = None,
    ) -> bytes:
        """A request's bytes, through ``conn``."""
        h = {"host": f"127.0.0.1:{self.port}", "accept": ACCEPT}
        if method == "POST":
            h["content-type"] = "application/json"
        if self.session_id is not None:
            h["mcp-session-id"] = self.session_id
        if self.version is not None:
            h["mcp-protocol-version"] = self.version
        h.update(headers or {})
        data = b"" if body is None else orjson.dumps(body)
        h["content-length"] = str(len(data))
        out = conn.send(h11.Request(method=method, target="/mcp", headers=list(h.items()))) or b""
        if data:
            out += conn.send(h11.Data(data=data)) or b""
        return out + (conn.send(h11.EndOfMessage()) or b"")

    async def _event(self) -> Any:
        while True:
            event = self.conn.next_event()
            if event is not h11.NEED_DATA:
                return event
            self.conn.receive_data(await self.stream.receive_some(65536))

    async def head(self) -> Response:
        event = await self._event()
        assert isinstance(event, h11.Response), event
        return Response(event)

    async def chunk(self) -> bytes | None:
        """The next piece of the body; ``None`` at its end."""
        event = await self._event()
        if isinstance(event, h11.EndOfMessage):
            self.conn.start_next_cycle()
            return None
        assert isinstance(event, h11.Data), event
        return bytes(event.data)

    async def events(self) -> AsyncIterator[SseEvent]:
        decoder = SseDecoder()
        while (chunk := await self.chunk()) is not None:
            for event in decoder.feed(chunk):
                yield event

    async def request(
        self, method: str = "POST", body: Any = None, headers: Mapping[str, str] | None = None
    ) -> Response:
        await self.send(method, body, headers)
        response = await self.head()
        while (chunk := await self.chunk()) is not None:
            response.body += chunk
        return response

    async def initialize(self) -> None:
        params = {"protocolVersion": V2025, "capabilities": {}, "clientInfo": {"name": "t"}}
        response = await self.request(body=rpc(0, "initialize", params))
        assert response.status == 200
        assert response.json()["result"]["protocolVersion"] == V2025
        self.session_id = response.headers["mcp-session-id"]
        self.version = V2025
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        assert (await self.request(body=note)).status == 202

    async def aclose(self) -> None:
        await self.stream.aclose()


def rpc(rid: Any, method: str, params: Mapping[str, Any] | None = None) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "method": method, "params": dict(params or {})}


def modern(rid: Any, method: str, **params: Any) -> tuple[dict[str, Any], dict[str, str]]:
    """A 2026-07-28 request and its standard headers."""
    headers = {"mcp-protocol-version": V2026, "mcp-method": method}
    if "name" in params:
        headers["mcp-name"] = params["name"]
    return rpc(rid, method, {"_meta": META, **params}), headers


# ---------------------------------------------------------------------- initialize era


def test_initialize_then_a_json_answer_on_a_kept_alive_connection() -> None:
    async def main() -> None:
        async with serving() as port:
            http = await Http.open(port)
            await http.initialize()
            body = rpc(1, "tools/call", {"name": "echo", "arguments": {"message": "hi"}})
            response = await http.request(body=body)
            assert response.status == 200
            assert response.headers["mcp-session-id"] == http.session_id
            answer = response.json()
            assert answer["id"] == 1
            assert answer["result"]["content"] == [{"type": "text", "text": "Echo: hi"}]
            await http.aclose()

    run(main)


def test_progress_comes_over_sse_with_priming_and_ids() -> None:
    async def main() -> None:
        async with serving() as port:
            http = await Http.open(port)
            await http.initialize()
            params = {"name": "test_tool_with_progress", "_meta": {"progressToken": "tok"}}
            await http.send(body=rpc(7, "tools/call", params))
            response = await http.head()
            assert response.status == 200
            assert response.headers["content-type"] == "text/event-stream"
            assert response.headers["mcp-session-id"] == http.session_id
            events = [e async for e in http.events()]
            priming, *rest = events
            assert priming.data == ""
            assert priming.retry == 1000
            ids = [e.id for e in events]
            assert all(ids)
            assert len(set(ids)) == len(ids)
            messages = [orjson.loads(e.data) for e in rest]
            progress = [m["params"]["progress"] for m in messages[:-1]]
            assert progress == [0, 50, 100]
            assert messages[-1]["id"] == 7
            assert messages[-1]["result"]["content"][0]["text"] == "tok"
            await http.aclose()

    run(main)


def test_a_closed_stream_is_resumed_with_last_event_id() -> None:
    async def main() -> None:
        server = build_server()
        gate = trio.Event()

        @server.tool("t_reconnect", input_schema=NOTHING)
        async def reconnect(ctx: Any, arguments: Mapping[str, Any]) -> str:
            ctx.progress(1, 2)
            ctx.close_stream()
            await gate.wait()
            ctx.progress(2, 2)
            return "after"

        async with serving(server) as port:
            http = await Http.open(port)
            await http.initialize()
            params = {"name": "t_reconnect", "_meta": {"progressToken": "tok"}}
            await http.send(body=rpc(1, "tools/call", params))
            assert (await http.head()).status == 200
            events = [e async for e in http.events()]  # ends with the stream's close
            assert [e.data == "" for e in events] == [True, False]
            assert orjson.loads(events[1].data)["params"]["progress"] == 1
            last = events[-1].id
            assert last is not None
            # Resumed on the same (kept-alive) connection, following the live stream.
            await http.send("GET", headers={"accept": "text/event-stream", "last-event-id": last})
            response = await http.head()
            assert response.status == 200
            assert response.headers["content-type"] == "text/event-stream"
            gate.set()
            messages = [orjson.loads(e.data) async for e in http.events()]
            assert messages[0]["params"]["progress"] == 2
            assert messages[-1]["id"] == 1
            assert messages[-1]["result"]["content"][0]["text"] == "after"
            await http.aclose()

    run(main)


def test_pipelined_requests_are_answered_in_order() -> None:
    async def main() -> None:
        async with serving() as port:
            http = await Http.open(port)
            await http.initialize()
            await http.send(body=rpc(1, "ping"))
            # The second request before reading the first answer (h11 will not pipeline:
            # the bytes come from another h11 connection).
            second = rpc(2, "tools/list")
            await http.stream.send_all(http.encode(h11.Connection(h11.CLIENT), body=second))
            for rid in (1, 2):
                if rid == 2:
                    http.encode(http.conn, body=second)  # our h11 side catches up
                response = await http.head()
                while (chunk := await http.chunk()) is not None:
                    response.body += chunk
                assert response.json()["id"] == rid
            await http.aclose()

    run(main)


def test_keepalive_comments_on_the_standalone_stream() -> None:
    async def main() -> None:
        async with serving(keepalive=0.02) as port:
            http = await Http.open(port)
            await http.initialize()
            await http.send("GET", headers={"accept": "text/event-stream"})
            assert (await http.head()).status == 200
            seen = b""
            while b": keep-alive" not in seen:
                chunk = await http.chunk()
                assert chunk is not None
                seen += chunk
            await http.aclose()

    run(main)


def test_delete_ends_the_session_and_its_handlers() -> None:
    async def main() -> None:
        server = build_server()
        started, cancelled = trio.Event(), trio.Event()

        @server.tool("t_wait", input_schema=NOTHING)
        async def wait(ctx: Any, arguments: Mapping[str, Any]) -> str:
            started.set()
            try:
                await trio.sleep_forever()
            finally:
                cancelled.set()

        async with serving(server) as port:
            http = await Http.open(port)
            await http.initialize()
            await http.send(body=rpc(1, "tools/call", {"name": "t_wait", "arguments": {}}))
            await started.wait()
            other = await Http.open(port)
            other.session_id, other.version = http.session_id, http.version
            assert (await other.request("DELETE")).status == 200
            await cancelled.wait()
            assert (await http.head()).status == 404  # the call's response ends too
            assert (await other.request(body=rpc(2, "ping"))).status == 404
            await http.aclose()
            await other.aclose()

    run(main)


def test_cancelling_the_server_ends_the_sessions_and_their_handlers() -> None:
    async def main() -> None:
        server = build_server()
        started, cancelled = trio.Event(), trio.Event()

        @server.tool("t_wait", input_schema=NOTHING)
        async def wait(ctx: Any, arguments: Mapping[str, Any]) -> str:
            started.set()
            try:
                await trio.sleep_forever()
            finally:
                cancelled.set()

        async with trio.open_nursery() as nursery:
            port = await nursery.start(partial(serve_http, server))
            http = await Http.open(port)
            await http.initialize()
            await http.send(body=rpc(1, "tools/call", {"name": "t_wait", "arguments": {}}))
            await started.wait()
            nursery.cancel_scope.cancel()
        assert cancelled.is_set()
        await http.aclose()

    run(main)


# ---------------------------------------------------------------------- 2026-07-28


def test_stateless_tools_list_with_the_standard_headers() -> None:
    async def main() -> None:
        async with serving() as port:
            http = await Http.open(port)
            body, headers = modern(1, "tools/list")
            response = await http.request(body=body, headers=headers)
            assert response.status == 200
            assert "mcp-session-id" not in response.headers
            names = {tool["name"] for tool in response.json()["result"]["tools"]}
            assert {"echo", "test_tool_with_progress"} <= names
            # A header that contradicts the body is refused.
            response = await http.request(body=body, headers={**headers, "mcp-method": "ping"})
            assert response.status == 400
            assert response.json()["error"]["code"] == -32020
            await http.aclose()

    run(main)


def test_a_client_leaving_mid_request_cancels_the_handler() -> None:
    async def main() -> None:
        server = build_server()
        started, cancelled = trio.Event(), trio.Event()

        @server.tool("t_wait", input_schema=NOTHING)
        async def wait(ctx: Any, arguments: Mapping[str, Any]) -> str:
            started.set()
            try:
                await trio.sleep_forever()
            except trio.Cancelled:
                cancelled.set()
                raise

        async with serving(server) as port:
            http = await Http.open(port)
            body, headers = modern(5, "tools/call", name="t_wait", arguments={})
            await http.send(body=body, headers=headers)
            await started.wait()
            await http.aclose()
            await cancelled.wait()
            # The server goes on serving.
            http = await Http.open(port)
            body, headers = modern(6, "tools/call", name="echo", arguments={"message": "x"})
            response = await http.request(body=body, headers=headers)
            assert response.json()["result"]["content"][0]["text"] == "Echo: x"
            await http.aclose()

    run(main)


def tasks() -> int:
    """How many tasks are running."""

    def walk(task: trio.lowlevel.Task) -> int:
        return 1 + sum(walk(t) for n in task.child_nurseries for t in n.child_tasks)

    root = trio.lowlevel.current_root_task()
    assert root is not None
    return walk(root)


def test_stateless_sessions_leave_no_task_behind() -> None:
    async def main() -> None:
        async with serving() as port:
            await trio.testing.wait_all_tasks_blocked()
            before = tasks()
            for rid in range(3):
                http = await Http.open(port)
                body, headers = modern(rid, "tools/call", name="echo", arguments={"message": ""})
                assert (await http.request(body=body, headers=headers)).status == 200
                body, headers = modern(rid, "tools/list")
                assert (await http.request(body=body, headers=headers)).status == 200
                await http.aclose()
            await trio.testing.wait_all_tasks_blocked()
            assert tasks() == before

    run(main)


# ---------------------------------------------------------------------- refusals


def test_a_foreign_origin_is_403() -> None:
    async def main() -> None:
        async with serving() as port:
            http = await Http.open(port)
            body, headers = modern(1, "tools/list")
            response = await http.request(
                body=body, headers={**headers, "origin": "http://evil.example"}
            )
            assert response.status == 403
            await http.aclose()

    run(main)


def test_a_malformed_request_gets_400_and_the_connection_closes() -> None:
    async def main() -> None:
        async with serving() as port:
            stream = await trio.open_tcp_stream("127.0.0.1", port)
            await stream.send_all(b"NOT HTTP AT ALL\r\n\r\n")
            received = b""
            while chunk := await stream.receive_some(65536):
                received += chunk
            assert received.startswith(b"HTTP/1.1 400 ")
            await stream.aclose()

    run(main)


def test_a_broken_body_after_a_refusal_closes_only_its_connection() -> None:
    async def main() -> None:
        async with serving(max_body_size=200) as port:
            stream = await trio.open_tcp_stream("127.0.0.1", port)
            head = (
                f"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1:{port}\r\naccept: {ACCEPT}\r\n"
                "content-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n"
            )
            # Too large (413), then not chunked encoding at all.
            chunk = b"%x\r\n%s\r\n" % (300, b" " * 300)
            await stream.send_all(head.encode() + chunk + b"ZZZ\r\n")
            while await stream.receive_some(65536):
                pass
            await stream.aclose()
            http = await Http.open(port)
            body, headers = modern(1, "tools/list")
            assert (await http.request(body=body, headers=headers)).status == 200
            await http.aclose()

    run(main)
