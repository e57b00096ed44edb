"""The example server as the conformance suite's fixture, over Streamable HTTP: the
fixtures whose point is the transport (``test_reconnection`` ends its response mid-call,
``test_x_mcp_header`` has an argument mirrored in a header) and the 2026-07-28
multi-round-trip requests, whose ``requestState`` must survive from one HTTP request to the
next. The server runs in-process (``mcp_sansio.asyncio.serve_http``) on loopback; the
client is ``http.client``, in a thread, so that what goes over the wire is exactly what
the suite sends.
"""

from __future__ import annotations

import asyncio
import http.client
import json
from collections.abc import Awaitable, Callable, Mapping
from typing import Any
from urllib.parse import urlsplit

import pytest

from mcp_sansio import asyncio as aio
from mcp_sansio.example import build_server

pytest.importorskip("h11")

LIMIT = 20.0
MODERN = "2026-07-28"
LEGACY = "2025-11-25"
CAPS: dict[str, Any] = {"elicitation": {}, "sampling": {}, "roots": {}}


class Reply:
    """An HTTP response: status, headers (lower-case names), and the JSON-RPC messages of
    its body (one for a JSON body, the ``data`` of each event for an event stream)."""

    def __init__(self, status: int, headers: Mapping[str, str], events: list[dict[str, str]]):
        self.status = status
        self.headers = headers
        self.events = events
        self.messages = [json.loads(e["data"]) for e in events if e.get("data")]

    @property
    def answer(self) -> dict[str, Any]:
        """The message that answers the request (the last with an ``id``)."""
        answers = [m for m in self.messages if "id" in m and "method" not in m]
        return answers[-1]  # type: ignore[no-any-return]


def _events(response: http.client.HTTPResponse) -> list[dict[str, str]]:
    """Read an event stream to its end: each event's fields (``data`` lines joined)."""
    events: list[dict[str, str]] = []
    event: dict[str, str] = {}
    for raw in response:
        line = raw.decode().rstrip("\r\n")
        if not line:
            if event:
                events.append(event)
            event = {}
            continue
        if line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        event[name] = f"{event[name]}\n{value}" if name == "data" and name in event else value
    if event:
        events.append(event)
    return events


class Endpoint:
    """Blocking HTTP calls to the server's MCP endpoint (run them with :meth:`run`)."""

    def __init__(self, url: str) -> None:
        parts = urlsplit(url)
        self.host = parts.hostname or "127.0.0.1"
        self.port = parts.port or 80
        self.path = parts.path

    def exchange(self, method: str, headers: Mapping[str, str], body: Any = None) -> Reply:
        conn = http.client.HTTPConnection(self.host, self.port, timeout=LIMIT)
        try:
            data = None if body is None else json.dumps(body).encode()
            conn.request(method, self.path, body=data, headers=dict(headers))
            response = conn.getresponse()
            kind = response.getheader("content-type") or ""
            names = {k.lower(): v for k, v in response.getheaders()}
            if kind.startswith("text/event-stream"):
                return Reply(response.status, names, _events(response))
            text = response.read().decode()
            events = [{"data": text}] if text else []
            return Reply(response.status, names, events)
        finally:
            conn.close()

    def post(self, message: Mapping[str, Any], **headers: str) -> Reply:
        base = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
        return self.exchange("POST", {**base, **headers}, message)

    async def run(self, fn: Callable[..., Reply], *args: Any, **kwargs: Any) -> Reply:
        return await asyncio.to_thread(fn, *args, **kwargs)


def serve(body: Callable[[Endpoint], Awaitable[None]]) -> None:
    async def main() -> None:
        listener = await aio.serve_http(build_server(), "127.0.0.1", 0)
        try:
            await body(Endpoint(f"http://127.0.0.1:{listener.port}/mcp"))
        finally:
            listener.close()
            await listener.wait_closed()

    asyncio.run(asyncio.wait_for(main(), LIMIT))


# ---------------------------------------------------------------------- 2025-11-25


async def open_session(ep: Endpoint) -> dict[str, str]:
    """``initialize`` and ``notifications/initialized``: the headers of later requests."""
    init = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": LEGACY,
            "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"},
        },
    }
    reply = await ep.run(ep.post, init)
    assert reply.status == 200
    assert reply.answer["result"]["protocolVersion"] == LEGACY
    headers = {"Mcp-Session-Id": reply.headers["mcp-session-id"], "MCP-Protocol-Version": LEGACY}
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert (await ep.run(ep.post, note, **headers)).status == 202
    return headers


def test_reconnection_closes_the_stream_and_answers_on_the_resumed_one() -> None:
    async def body(ep: Endpoint) -> None:
        headers = await open_session(ep)
        call = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "test_reconnection", "arguments": {}},
        }
        reply = await ep.run(ep.post, call, **headers)
        assert reply.status == 200
        assert reply.headers["content-type"].startswith("text/event-stream")
        # The stream ends before the answer: a priming event (id, retry, no data) only.
        assert reply.messages == []
        last = reply.events[-1]
        assert last["id"]
        assert "retry" in reply.events[0]
        resumed = await ep.run(
            ep.exchange,
            "GET",
            {"Accept": "text/event-stream", "Last-Event-ID": last["id"], **headers},
        )
        assert resumed.status == 200
        answer = resumed.answer
        assert answer["id"] == 1
        assert answer["result"]["content"][0]["text"].startswith(
            "Reconnection test completed successfully."
        )

    serve(body)


# ---------------------------------------------------------------------- 2026-07-28


def modern(
    method: str, params: Mapping[str, Any], caps: Mapping[str, Any] = CAPS
) -> dict[str, Any]:
    meta = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": dict(caps),
    }
    return {"jsonrpc": "2.0", "id": 7, "method": method, "params": {**params, "_meta": meta}}


def modern_headers(method: str, name: str | None = None, **extra: str) -> dict[str, str]:
    headers = {"MCP-Protocol-Version": MODERN, "Mcp-Method": method, **extra}
    if name is not None:
        headers["Mcp-Name"] = name
    return headers


def call_tool(ep: Endpoint, name: str, caps: Mapping[str, Any] = CAPS, **params: Any) -> Reply:
    arguments = params.pop("arguments", {})
    message = modern("tools/call", {"name": name, "arguments": arguments, **params}, caps)
    return ep.post(message, **modern_headers("tools/call", name))


def test_x_mcp_header_is_checked_against_the_argument() -> None:
    async def body(ep: Endpoint) -> None:
        message = modern("tools/call", {"name": "test_x_mcp_header", "arguments": {"region": "eu"}})
        with_header = modern_headers(
            "tools/call", "test_x_mcp_header", **{"Mcp-Param-Region": "eu"}
        )
        reply = await ep.run(ep.post, message, **with_header)
        assert reply.status == 200
        assert reply.answer["result"]["content"][0]["text"] == "Region: eu"
        reply = await ep.run(ep.post, message, **modern_headers("tools/call", "test_x_mcp_header"))
        assert reply.status == 400
        assert reply.answer["error"]["code"] == -32020

    serve(body)


def test_multi_round_request_state_survives_across_requests() -> None:
    async def body(ep: Endpoint) -> None:
        tool = "test_input_required_result_multi_round"
        first = (await ep.run(call_tool, ep, tool)).answer["result"]
        assert first["resultType"] == "input_required"
        assert list(first["inputRequests"]) == ["step1"]
        step1 = {"step1": {"action": "accept", "content": {"name": "Alice"}}}
        second = await ep.run(
            call_tool, ep, tool, inputResponses=step1, requestState=first["requestState"]
        )
        result = second.answer["result"]
        assert list(result["inputRequests"]) == ["step2"]
        step2 = {"step2": {"action": "accept", "content": {"color": "blue"}}}
        third = await ep.run(
            call_tool, ep, tool, inputResponses=step2, requestState=result["requestState"]
        )
        done = third.answer["result"]
        assert done["resultType"] == "complete"
        assert done["content"][0]["text"] == "Multi-round complete for Alice who likes blue"
        tampered = await ep.run(
            call_tool,
            ep,
            tool,
            inputResponses=step2,
            requestState=result["requestState"] + "-TAMPERED",
        )
        assert tampered.answer["error"]["code"] == -32602

    serve(body)


def test_missing_capability_is_a_400() -> None:
    async def body(ep: Endpoint) -> None:
        reply = await ep.run(call_tool, ep, "test_missing_capability", caps={})
        assert reply.status == 400
        error = reply.answer["error"]
        assert error["code"] == -32021
        assert error["data"] == {"requiredCapabilities": {"sampling": {}}}

    serve(body)


def test_logging_tool_logs_only_with_a_log_level() -> None:
    async def body(ep: Endpoint) -> None:
        reply = await ep.run(call_tool, ep, "test_logging_tool", caps={})
        assert [m.get("method") for m in reply.messages] == [None]
        message = modern("tools/call", {"name": "test_logging_tool", "arguments": {}}, {})
        message["params"]["_meta"]["io.modelcontextprotocol/logLevel"] = "info"
        reply = await ep.run(ep.post, message, **modern_headers("tools/call", "test_logging_tool"))
        assert [m.get("method") for m in reply.messages] == ["notifications/message", None]

    serve(body)
