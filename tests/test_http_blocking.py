"""Streamable HTTP on the blocking adapter (``mcp_sansio.blocking.serve_http``): real
loopback sockets, the example server plus a few sync tools (the blocking adapter cannot
run the example's coroutine handlers), and a client written with :mod:`http.client`."""

from __future__ import annotations

import contextlib
import http.client
import queue
import socket
import threading
import time
from collections.abc import Iterator, Mapping
from typing import Any

import orjson
import pytest

from mcp_sansio._sse import SseDecoder
from mcp_sansio.blocking import Context, serve_http
from mcp_sansio.blocking._http_server import HttpListener
from mcp_sansio.example import build_server
from mcp_sansio.server import Server

LIMIT = 10.0  # seconds, for any one wait
ACCEPT = "application/json, text/event-stream"
LEGACY = "2025-11-25"
WATCHED = "test://watched-resource"
BLOCK = 0.5  # seconds that sync_block blocks its thread
V2026 = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": V2026,
    "io.modelcontextprotocol/clientCapabilities": {},
}


class Probe:
    """What the sync tools saw, for the tests to wait on."""

    def __init__(self) -> None:
        self.started = threading.Event()
        self.cancelled = threading.Event()
        self.lock = threading.Lock()
        self.active = 0
        self.most = 0


def make_server(probe: Probe) -> Server:
    server = build_server()
    nothing = {"type": "object"}

    @server.tool("sync_echo", input_schema={"type": "object", "properties": {"m": {}}})
    def sync_echo(ctx: Context, arguments: Mapping[str, Any]) -> str:
        "Echo ``m``."
        return str(arguments.get("m", ""))

    @server.tool("sync_progress", input_schema=nothing)
    def sync_progress(ctx: Context, arguments: Mapping[str, Any]) -> str:
        "Report progress twice."
        ctx.progress(1, 2)
        ctx.progress(2, 2)
        return "done"

    @server.tool("sync_wait", input_schema=nothing)
    def sync_wait(ctx: Context, arguments: Mapping[str, Any]) -> str:
        "Wait until cancelled (at most LIMIT seconds)."
        probe.started.set()
        ctx.sleep(LIMIT)
        if ctx.cancelled:
            probe.cancelled.set()
        return "waited"

    @server.tool("sync_reconnect", input_schema=nothing)
    def sync_reconnect(ctx: Context, arguments: Mapping[str, Any]) -> str:
        "End the HTTP response mid-call; go on meanwhile."
        ctx.progress(1, 2)
        ctx.close_stream()
        ctx.sleep(0.2)
        ctx.progress(2, 2)
        return "after"

    @server.tool("sync_ask", input_schema=nothing)
    def sync_ask(ctx: Context, arguments: Mapping[str, Any]) -> str:
        "Ask the user's name."
        answer = ctx.elicit("Your name?", {"type": "object", "properties": {"name": {}}})
        return f"Hello, {answer['content']['name']}!"

    @server.tool("sync_nap", input_schema=nothing)
    def sync_nap(ctx: Context, arguments: Mapping[str, Any]) -> str:
        "Wait a little, counting the handlers waiting at once."
        with probe.lock:
            probe.active += 1
            probe.most = max(probe.most, probe.active)
        ctx.sleep(0.5)
        with probe.lock:
            probe.active -= 1
        return f"nap {arguments.get('n')}"

    @server.tool("sync_block", input_schema=nothing)
    def sync_block(ctx: Context, arguments: Mapping[str, Any]) -> str:
        "Block the thread (not through the context), counting the handlers blocked at once."
        with probe.lock:
            probe.active += 1
            probe.most = max(probe.most, probe.active)
        time.sleep(BLOCK)
        with probe.lock:
            probe.active -= 1
        return "blocked"

    @server.tool("sync_touch", input_schema=nothing)
    def sync_touch(ctx: Context, arguments: Mapping[str, Any]) -> str:
        "Tell the subscribers of the watched resource that it changed."
        ctx.resource_updated(WATCHED)
        return "touched"

    @server.tool("sync_bad_broadcast", input_schema=nothing)
    def sync_bad_broadcast(ctx: Context, arguments: Mapping[str, Any]) -> str:
        "Broadcast what fails to build on every session but this one."

        def make(session: Any) -> bytes:
            if session is not ctx.session:
                raise RuntimeError("no notification for you")
            return b""

        assert ctx.session.broadcast is not None
        ctx.session.broadcast(make)
        return "sent"

    return server


@pytest.fixture
def probe() -> Probe:
    return Probe()


@contextlib.contextmanager
def serving(probe: Probe, **options: Any) -> Iterator[HttpListener]:
    """``serve_http`` in a thread; on the way out, stop it and check that every thread it
    started is gone."""
    before = set(threading.enumerate())
    ready: queue.Queue[HttpListener] = queue.Queue()
    thread = threading.Thread(
        target=serve_http, args=(make_server(probe),), kwargs={"ready": ready.put, **options}
    )
    thread.start()
    listener = ready.get(timeout=LIMIT)
    try:
        yield listener
    finally:
        listener.stop()
        thread.join(LIMIT)
        assert not thread.is_alive()
        end = time.monotonic() + LIMIT
        while set(threading.enumerate()) - before and time.monotonic() < end:
            time.sleep(0.01)
        assert set(threading.enumerate()) <= before


class Reply:
    def __init__(self, response: http.client.HTTPResponse, body: bytes) -> None:
        self.status = response.status
        self.headers = response.headers
        self.body = body

    def json(self) -> Any:
        assert self.headers["content-type"] == "application/json"
        return orjson.loads(self.body)

    def events(self) -> list[Any]:
        assert self.headers["content-type"] == "text/event-stream"
        return list(SseDecoder().feed(self.body))

    def messages(self) -> list[Any]:
        return [orjson.loads(e.data) for e in self.events() if e.data]


class Peer:
    """An HTTP client of the listener on one keep-alive connection."""

    def __init__(self, listener: HttpListener) -> None:
        self.conn = http.client.HTTPConnection("127.0.0.1", listener.port, timeout=LIMIT)
        self.session_id: str | None = None
        self.version: str | None = None

    def send(
        self, method: str = "POST", body: Any = None, headers: Mapping[str, str] | None = None
    ) -> http.client.HTTPResponse:
        h = {"accept": ACCEPT, "content-type": "application/json"}
        if self.session_id is not None:
            h["mcp-session-id"] = self.session_id
        if self.version is not None:
            h["mcp-protocol-version"] = self.version
        h.update(headers or {})
        data = None if body is None else orjson.dumps(body)
        self.conn.request(method, "/mcp", body=data, headers=h)
        return self.conn.getresponse()

    def fetch(
        self, method: str = "POST", body: Any = None, headers: Mapping[str, str] | None = None
    ) -> Reply:
        response = self.send(method, body, headers)
        return Reply(response, response.read())

    def initialize(self, capabilities: Mapping[str, Any] | None = None) -> Reply:
        params = {
            "protocolVersion": LEGACY,
            "capabilities": capabilities or {},
            "clientInfo": {"name": "t", "version": "1"},
        }
        reply = self.fetch(
            body={"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}
        )
        assert reply.status == 200, reply.body
        self.session_id = reply.headers["mcp-session-id"]
        self.version = LEGACY
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        assert self.fetch(body=note).status == 202
        return reply

    def call(self, rid: int, name: str, **params: Any) -> Reply:
        body = {
            "jsonrpc": "2.0",
            "id": rid,
            "method": "tools/call",
            "params": {"name": name, "arguments": {}, **params},
        }
        return self.fetch(body=body)

    def close(self) -> None:
        self.conn.close()


def next_message(response: http.client.HTTPResponse, decoder: SseDecoder) -> Any:
    """The next message of an open event stream."""
    while True:
        line = response.readline()
        assert line, "the stream ended"
        for event in decoder.feed(line):
            if event.data:
                return orjson.loads(event.data)


def modern(method: str, rid: int = 1, **params: Any) -> tuple[dict[str, Any], dict[str, str]]:
    body = {"jsonrpc": "2.0", "id": rid, "method": method, "params": {"_meta": META, **params}}
    headers = {"mcp-protocol-version": V2026, "mcp-method": method}
    if "name" in params:
        headers["mcp-name"] = params["name"]
    return body, headers


# ---------------------------------------------------------------------- the initialize era


def test_initialize_then_a_tool_call_answered_in_json(probe: Probe) -> None:
    with serving(probe) as listener:
        assert listener.url == f"http://127.0.0.1:{listener.port}/mcp"
        peer = Peer(listener)
        reply = peer.initialize()
        assert reply.json()["result"]["serverInfo"]["name"] == "mcp-sansio-example"
        assert len(peer.session_id or "") >= 32
        answer = peer.call(1, "sync_echo", arguments={"m": "hi"})
        assert answer.status == 200
        assert answer.headers["mcp-session-id"] == peer.session_id
        assert answer.json() == {
            "jsonrpc": "2.0",
            "id": 1,
            "result": {"content": [{"type": "text", "text": "hi"}]},
        }
        peer.close()


def test_progress_makes_an_sse_answer_with_a_priming_event_and_ids(probe: Probe) -> None:
    with serving(probe) as listener:
        peer = Peer(listener)
        peer.initialize()
        reply = peer.call(2, "sync_progress", _meta={"progressToken": "tok"})
        assert reply.status == 200
        events = reply.events()
        assert events[0].data == ""
        assert events[0].retry == 1000
        ids = [e.id for e in events]
        assert all(ids)
        assert len(set(ids)) == len(ids)
        messages = [orjson.loads(e.data) for e in events[1:]]
        assert [m.get("method") for m in messages] == [
            "notifications/progress",
            "notifications/progress",
            None,
        ]
        assert messages[-1]["result"]["content"][0]["text"] == "done"
        peer.close()


def test_a_closed_stream_resumes_with_last_event_id(probe: Probe) -> None:
    with serving(probe) as listener:
        peer = Peer(listener)
        peer.initialize()
        reply = peer.call(3, "sync_reconnect", _meta={"progressToken": "tok"})
        events = reply.events()
        assert [e.data == "" for e in events] == [True, False]  # priming, progress 1
        assert orjson.loads(events[1].data)["params"]["progress"] == 1
        other = Peer(listener)  # the reconnection, on a new connection
        other.session_id, other.version = peer.session_id, peer.version
        resumed = other.fetch(
            "GET", headers={"accept": "text/event-stream", "last-event-id": events[-1].id or ""}
        )
        assert resumed.status == 200
        messages = resumed.messages()
        assert messages[0]["params"]["progress"] == 2
        assert messages[-1]["id"] == 3
        assert messages[-1]["result"]["content"][0]["text"] == "after"
        peer.close()
        other.close()


def test_a_handler_asks_the_client_and_waits_for_its_answer(probe: Probe) -> None:
    with serving(probe) as listener:
        peer = Peer(listener)
        peer.initialize({"elicitation": {}})
        body = {
            "jsonrpc": "2.0",
            "id": 10,
            "method": "tools/call",
            "params": {"name": "sync_ask", "arguments": {}},
        }
        response = peer.send(body=body)
        assert response.headers["content-type"] == "text/event-stream"
        decoder = SseDecoder()
        question = None
        while question is None:
            for event in decoder.feed(response.readline()):
                if event.data:
                    question = orjson.loads(event.data)
        assert question["method"] == "elicitation/create"
        other = Peer(listener)  # the answer, on another connection
        other.session_id, other.version = peer.session_id, peer.version
        result = {"action": "accept", "content": {"name": "Ada"}}
        answer = {"jsonrpc": "2.0", "id": question["id"], "result": result}
        assert other.fetch(body=answer).status == 202
        rest = [orjson.loads(e.data) for e in decoder.feed(response.read()) if e.data]
        assert rest[-1]["id"] == 10
        assert rest[-1]["result"]["content"][0]["text"] == "Hello, Ada!"
        peer.close()
        other.close()


def test_delete_ends_the_session_and_its_open_stream(probe: Probe) -> None:
    with serving(probe) as listener:
        peer = Peer(listener)
        peer.initialize()
        stream = Peer(listener)
        stream.session_id, stream.version = peer.session_id, peer.version
        response = stream.send("GET", headers={"accept": "text/event-stream"})
        assert response.status == 200
        assert peer.fetch("DELETE").status == 200
        assert response.read().startswith(b"id: ")  # the priming event, then the end
        assert peer.call(4, "sync_echo").status == 404
        peer.close()
        stream.close()


def test_keepalive_comments_on_an_open_stream(probe: Probe) -> None:
    with serving(probe, keepalive=0.05) as listener:
        peer = Peer(listener)
        peer.initialize()
        response = peer.send("GET", headers={"accept": "text/event-stream"})
        lines = [response.readline() for _ in range(5)]  # the priming event, then…
        assert lines[-1] == b": keep-alive\n"
        peer.close()


# ---------------------------------------------------------------------- 2026-07-28


def test_stateless_tools_list_with_the_standard_headers(probe: Probe) -> None:
    with serving(probe) as listener:
        peer = Peer(listener)
        body, headers = modern("tools/list", 5)
        reply = peer.fetch(body=body, headers=headers)
        assert reply.status == 200
        assert "mcp-session-id" not in reply.headers
        names = {t["name"] for t in reply.json()["result"]["tools"]}
        assert {"echo", "sync_echo", "test_reconnection"} <= names
        body, headers = modern("tools/call", 6, name="sync_echo", arguments={"m": "x"})
        reply = peer.fetch(body=body, headers=headers)
        assert reply.json()["result"]["content"][0]["text"] == "x"
        headers["mcp-name"] = "other"
        mismatch = peer.fetch(body=body, headers=headers)
        assert mismatch.status == 400
        assert mismatch.json()["error"]["code"] == -32020
        peer.close()


def test_a_client_leaving_mid_request_cancels_it(probe: Probe) -> None:
    with serving(probe) as listener:
        peer = Peer(listener)
        body, headers = modern("tools/call", 7, name="sync_wait", arguments={})
        peer.conn.request(
            "POST",
            "/mcp",
            body=orjson.dumps(body),
            headers={"accept": ACCEPT, "content-type": "application/json", **headers},
        )
        assert probe.started.wait(LIMIT)
        peer.close()
        assert probe.cancelled.wait(LIMIT)
        after = Peer(listener)  # the server goes on
        body, headers = modern("tools/call", 8, name="sync_echo", arguments={"m": "y"})
        assert after.fetch(body=body, headers=headers).json()["result"]["content"][0]["text"] == "y"
        after.close()


@pytest.mark.parametrize("era", ["initialize", "stateless"])
def test_closing_the_listener_cancels_waiting_handlers(probe: Probe, era: str) -> None:
    with serving(probe) as listener:
        peer = Peer(listener)
        headers = {"accept": ACCEPT, "content-type": "application/json"}
        if era == "initialize":  # the session outlives the connection: close() ends it
            peer.initialize()
            headers["mcp-session-id"] = peer.session_id or ""
            body: dict[str, Any] = {
                "jsonrpc": "2.0",
                "id": 9,
                "method": "tools/call",
                "params": {"name": "sync_wait", "arguments": {}},
            }
        else:  # the connection's end cancels the request
            body, more = modern("tools/call", 9, name="sync_wait", arguments={})
            headers.update(more)
        peer.conn.request("POST", "/mcp", body=orjson.dumps(body), headers=headers)
        assert probe.started.wait(LIMIT)
        start = time.monotonic()
    assert time.monotonic() - start < LIMIT / 2  # the handler did not sleep it out
    assert probe.cancelled.is_set()
    peer.close()


# ---------------------------------------------------------------------- HTTP


def test_a_foreign_origin_is_403(probe: Probe) -> None:
    with serving(probe) as listener:
        peer = Peer(listener)
        body, headers = modern("tools/list")
        reply = peer.fetch(body=body, headers={**headers, "origin": "http://evil.example"})
        assert reply.status == 403
        assert "Origin" in reply.json()["error"]["message"]
        peer.close()


def test_connections_past_the_limit_get_503(probe: Probe) -> None:
    with serving(probe, max_connections=1) as listener:
        peer = Peer(listener)
        body, headers = modern("tools/list")
        assert peer.fetch(body=body, headers=headers).status == 200  # it holds the slot
        with socket.create_connection(("127.0.0.1", listener.port), timeout=LIMIT) as extra:
            assert extra.recv(100).startswith(b"HTTP/1.1 503 ")
        peer.close()


def test_several_clients_at_once(probe: Probe) -> None:
    results: list[str] = []
    failures: list[BaseException] = []

    def legacy(n: int) -> None:
        peer = Peer(listener)
        peer.initialize()
        reply = peer.call(n, "sync_nap", arguments={"n": n})
        results.append(reply.json()["result"]["content"][0]["text"])
        peer.close()

    def stateless(n: int) -> None:
        peer = Peer(listener)
        body, headers = modern("tools/call", n, name="sync_nap", arguments={"n": n})
        results.append(
            peer.fetch(body=body, headers=headers).json()["result"]["content"][0]["text"]
        )
        peer.close()

    def run(fn: Any, n: int) -> None:
        try:
            fn(n)
        except BaseException as exc:  # pragma: no cover - reported below
            failures.append(exc)

    with serving(probe) as listener:
        threads = [
            threading.Thread(target=run, args=(legacy if n % 2 else stateless, n)) for n in range(6)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(LIMIT)
    assert not failures
    assert sorted(results) == [f"nap {n}" for n in range(6)]
    assert probe.most >= 2  # the handlers waited at the same time


@pytest.mark.parametrize("era", ["initialize", "stateless"])
def test_handlers_of_different_sessions_run_in_parallel(probe: Probe, era: str) -> None:
    results: list[str] = []
    failures: list[BaseException] = []
    go = threading.Barrier(3, timeout=LIMIT)

    def call(peer: Peer, n: int) -> None:
        try:
            go.wait()
            if era == "initialize":
                reply = peer.call(n, "sync_block")
            else:
                body, headers = modern("tools/call", n, name="sync_block", arguments={})
                reply = peer.fetch(body=body, headers=headers)
            results.append(reply.json()["result"]["content"][0]["text"])
        except BaseException as exc:  # pragma: no cover - reported below
            failures.append(exc)

    with serving(probe) as listener:
        peers = [Peer(listener), Peer(listener)]
        for peer in peers:  # connected (and initialized) beforehand: only the calls are timed
            if era == "initialize":
                peer.initialize()
            else:
                body, headers = modern("tools/list")
                assert peer.fetch(body=body, headers=headers).status == 200
        threads = [threading.Thread(target=call, args=(p, n)) for n, p in enumerate(peers, 1)]
        for thread in threads:
            thread.start()
        go.wait()
        start = time.monotonic()
        for thread in threads:
            thread.join(LIMIT)
        elapsed = time.monotonic() - start
        assert not any(thread.is_alive() for thread in threads)
        for peer in peers:
            peer.close()
    assert not failures
    assert results == ["blocked", "blocked"]
    assert probe.most == 2  # both blocked at the same time
    assert elapsed < 1.8 * BLOCK  # one after the other would take 2 * BLOCK


def test_a_broadcast_reaches_a_listen_stream_of_another_session(probe: Probe) -> None:
    with serving(probe) as listener:
        listening = Peer(listener)
        body, headers = modern(
            "subscriptions/listen", 20, notifications={"resourceSubscriptions": [WATCHED]}
        )
        response = listening.send(body=body, headers=headers)
        assert response.status == 200
        decoder = SseDecoder()
        ack = next_message(response, decoder)
        assert ack["method"] == "notifications/subscriptions/acknowledged"
        toucher = Peer(listener)  # another 2026-07-28 POST: another session
        body, headers = modern("tools/call", 21, name="sync_touch", arguments={})
        reply = toucher.fetch(body=body, headers=headers)
        assert reply.json()["result"]["content"][0]["text"] == "touched"
        update = next_message(response, decoder)
        assert update["method"] == "notifications/resources/updated"
        assert update["params"]["uri"] == WATCHED
        assert update["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == 20
        toucher.close()
        listening.close()


def test_a_broadcast_reaches_a_session_busy_in_a_handler(probe: Probe) -> None:
    with serving(probe) as listener:
        peer = Peer(listener)
        peer.initialize()
        subscribe = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "resources/subscribe",
            "params": {"uri": WATCHED},
        }
        assert peer.fetch(body=subscribe).json()["result"] == {}
        stream = Peer(listener)  # the session's standalone stream
        stream.session_id, stream.version = peer.session_id, peer.version
        response = stream.send("GET", headers={"accept": "text/event-stream"})
        assert response.status == 200
        waiting = Peer(listener)  # a handler of the session waits in ctx.sleep
        waiting.session_id, waiting.version = peer.session_id, peer.version
        body = {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "sync_wait", "arguments": {}},
        }
        headers = {"accept": ACCEPT, "content-type": "application/json"}
        headers.update({"mcp-session-id": peer.session_id or "", "mcp-protocol-version": LEGACY})
        waiting.conn.request("POST", "/mcp", body=orjson.dumps(body), headers=headers)
        assert probe.started.wait(LIMIT)
        with listener.lock:  # the session has a thread: the broadcast goes through its inbox
            assert listener.core.sessions[peer.session_id or ""].driver.thread is not None
        toucher = Peer(listener)
        body, more = modern("tools/call", 3, name="sync_touch", arguments={})
        assert toucher.fetch(body=body, headers=more).status == 200
        update = next_message(response, SseDecoder())
        assert update == {
            "jsonrpc": "2.0",
            "method": "notifications/resources/updated",
            "params": {"uri": WATCHED},
        }
        assert not probe.cancelled.is_set()  # the handler waits on
        assert peer.fetch("DELETE").status == 200  # which ends it
        assert probe.cancelled.wait(LIMIT)
        assert response.read() == b""  # the stream ends
        for each in (peer, stream, waiting, toucher):
            each.close()


def test_a_broadcast_reaches_the_broadcasting_session_on_the_request_stream(
    probe: Probe,
) -> None:
    with serving(probe) as listener:
        peer = Peer(listener)
        peer.initialize()
        subscribe = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "resources/subscribe",
            "params": {"uri": WATCHED},
        }
        assert peer.fetch(body=subscribe).json()["result"] == {}
        messages = peer.call(2, "sync_touch").messages()  # built in the handler's thread
        assert [m.get("method") for m in messages] == ["notifications/resources/updated", None]
        assert messages[-1]["result"]["content"][0]["text"] == "touched"
        peer.close()


def test_a_broadcast_failing_on_another_session_is_logged_and_skipped(
    probe: Probe, caplog: pytest.LogCaptureFixture
) -> None:
    with serving(probe) as listener:
        idle = Peer(listener)  # an idle session, the broadcast's other target
        idle.initialize()
        hs = listener.core.sessions[idle.session_id or ""]
        end = time.monotonic() + LIMIT
        while True:  # done with notifications/initialized: its thread is gone
            with listener.lock:
                if hs.driver.thread is None:
                    break
            assert time.monotonic() < end
            time.sleep(0.005)
        peer = Peer(listener)
        body, headers = modern("tools/call", 1, name="sync_bad_broadcast", arguments={})
        with caplog.at_level("ERROR", logger="mcp_sansio.http"):
            reply = peer.fetch(body=body, headers=headers)
        assert reply.json()["result"]["content"][0]["text"] == "sent"
        assert "a broadcast failed" in caplog.text
        assert idle.call(2, "sync_echo", arguments={"m": "ok"}).json()["result"]["content"] == [
            {"type": "text", "text": "ok"}
        ]
        idle.close()
        peer.close()
