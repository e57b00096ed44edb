"""The sans-IO Streamable HTTP server (:class:`mcp_sansio.http.HttpServer`): every HTTP rule
of both eras, and hostile input, with no sockets. A small synchronous driver plays the
binding's part: it feeds :class:`Deliver` work to the sessions and runs their handlers."""

from __future__ import annotations

import base64
from collections.abc import Iterable, Mapping
from typing import Any

import orjson
import pytest
from helpers import initialize_request
from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_sansio._sse import SseDecoder
from mcp_sansio.http import (
    END,
    Deliver,
    Exchange,
    HttpServer,
    HttpSession,
    ResponseHead,
    Terminate,
    Wake,
    Work,
)
from mcp_sansio.server import Server
from mcp_sansio.session import CallFinished, ContextBase, HandleJob, Job, Send

ACCEPT = "application/json, text/event-stream"
V2026 = "2026-07-28"
_SSE = "text/event-stream"
META = {
    "io.modelcontextprotocol/protocolVersion": V2026,
    "io.modelcontextprotocol/clientCapabilities": {},
}


class Ctx(ContextBase):
    def __init__(self, driver: Driver, hs: HttpSession, job: Job) -> None:
        super().__init__(hs.session, job, lambda: driver.now)
        self._driver = driver
        self._hs = hs

    def _write(self, data: bytes) -> None:
        self._driver.core.route(self._hs, data, self.job.id)


def build() -> Server:
    server = Server("test", "1.0")
    server.logging = True
    nothing = {"type": "object"}

    @server.tool("echo", input_schema={"type": "object", "properties": {"m": {"type": "string"}}})
    def echo(ctx: Any, arguments: Mapping[str, Any]) -> str:
        return str(arguments.get("m", ""))

    @server.tool("progress", input_schema=nothing)
    def progress(ctx: Any, arguments: Mapping[str, Any]) -> str:
        ctx.progress(1, 2)
        ctx.log("info", "halfway")
        ctx.progress(2, 2)
        return "done"

    @server.tool("slow", input_schema=nothing)
    def slow(ctx: Any, arguments: Mapping[str, Any]) -> Any:
        return SLOW  # the driver keeps the job; the test finishes it

    @server.tool("reconnect", input_schema=nothing)
    def reconnect(ctx: Any, arguments: Mapping[str, Any]) -> Any:
        ctx.progress(1, 2)
        ctx.close_stream()
        ctx.progress(2, 2)
        return SLOW

    @server.tool(
        "region",
        input_schema={
            "type": "object",
            "properties": {
                "region": {"type": "string", "x-mcp-header": "Region"},
                "n": {"type": "integer", "x-mcp-header": "N"},
            },
        },
    )
    def region(ctx: Any, arguments: Mapping[str, Any]) -> str:
        return f"{arguments.get('region')}/{arguments.get('n')}"

    @server.tool("ask", input_schema=nothing)
    def ask(ctx: Any, arguments: Mapping[str, Any]) -> str:
        _, answer = ctx._ask("elicitation/create", ctx.elicitation_params("Name?"))
        return f"hello {answer['content']['name']}"

    @server.resource("test://r", name="r")
    def resource(ctx: Any, uri: str) -> str:
        return "text"

    @server.tool("touch", input_schema=nothing)
    def touch(ctx: Any, arguments: Mapping[str, Any]) -> str:
        ctx.resource_updated("test://r")
        return "ok"

    return server


SLOW = object()


class Driver:
    """The binding's part, synchronously."""

    def __init__(self, core: HttpServer) -> None:
        self.core = core
        self.now = 0.0
        self.kept: list[tuple[HttpSession, Job]] = []
        self.terminated: list[HttpSession] = []
        self.woken: list[Exchange] = []

    def run(self, work: Iterable[Work], ex: Exchange | None) -> None:
        for item in work:
            if isinstance(item, Deliver):
                self.feed(item.session, item.data, ex)
            elif isinstance(item, Terminate):
                self.terminated.append(item.session)
            elif isinstance(item, Wake):
                self.woken.extend(item.exchanges)

    def feed(self, hs: HttpSession, data: bytes, ex: Exchange | None) -> None:
        core = self.core
        hs.session.on_close_stream = lambda rid: core.close_stream(hs, rid)  # type: ignore[assignment]
        hs.session.broadcast = lambda make: core.broadcast(make)  # type: ignore[assignment]
        core.begin_delivery(hs, ex)
        self.act(hs, hs.session.receive_data(data, self.now))
        core.end_delivery(hs)

    def act(self, hs: HttpSession, actions: Iterable[Any]) -> None:
        for action in actions:
            if isinstance(action, Send):
                self.core.route(hs, action.data)
            elif isinstance(action, HandleJob):
                job = action.job
                try:
                    value = job.handler(Ctx(self, hs, job), *job.args)
                except Exception as exc:
                    self.core.route(hs, hs.session.finish(job, None, exc), job.id)
                    continue
                if value is SLOW:
                    self.kept.append((hs, job))
                else:
                    self.core.route(hs, hs.session.finish(job, value), job.id)
            else:
                assert isinstance(action, CallFinished) or action is not None

    def finish(self, value: Any = "late") -> list[Exchange]:
        hs, job = self.kept.pop(0)
        return self.core.route(hs, hs.session.finish(job, value), job.id)


class Reply:
    def __init__(self, ex: Exchange) -> None:
        self.ex = ex
        self.head: ResponseHead | None = None
        self.body = b""
        self.ended = False
        self.pull()

    def pull(self) -> Reply:
        while True:
            part = self.ex.next_output()
            if part is None:
                return self
            if isinstance(part, ResponseHead):
                assert self.head is None, "two heads"
                self.head = part
            elif part is END:
                self.ended = True
            else:
                assert isinstance(part, bytes)
                assert not self.ended, "data after the end"
                self.body += part

    @property
    def status(self) -> int:
        assert self.head is not None
        return self.head.status

    def header(self, name: str) -> str | None:
        assert self.head is not None
        return dict(self.head.headers).get(name)

    def json(self) -> Any:
        assert self.header("content-type") == "application/json"
        return orjson.loads(self.body)

    def events(self) -> list[Any]:
        decoder = SseDecoder()
        return list(decoder.feed(self.body))

    def messages(self) -> list[Any]:
        return [orjson.loads(e.data) for e in self.events() if e.data]


class Client:
    def __init__(self, core: HttpServer | None = None, **options: Any) -> None:
        self.core = core or HttpServer(build(), **options)
        self.driver = Driver(self.core)
        self.session_id: str | None = None
        self.version: str | None = None

    def send(
        self,
        method: str = "POST",
        body: Any = None,
        headers: Mapping[str, str | None] | None = None,
        *,
        raw: bytes | None = None,
        target: str = "/mcp",
        chunks: int = 1,
    ) -> Reply:
        h: dict[str, str | None] = {
            "host": "127.0.0.1:8000",
            "accept": ACCEPT,
            "content-type": "application/json",
        }
        if self.session_id is not None:
            h["mcp-session-id"] = self.session_id
        if self.version is not None:
            h["mcp-protocol-version"] = self.version
        h.update(headers or {})
        pairs = [(k.encode(), v.encode()) for k, v in h.items() if v is not None]
        ex = self.core.begin(method, target, pairs)
        data = raw if raw is not None else (b"" if body is None else orjson.dumps(body))
        if not ex.finished:
            size = max(1, len(data) // chunks)
            for i in range(0, len(data), size):
                if not ex.receive_body(data[i : i + size], self.core.max_body_size):
                    break
            self.driver.run(self.core.end(ex), ex)
        return Reply(ex)

    def initialize(self, version: str = "2025-11-25") -> Reply:
        reply = self.send(
            body={
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {
                    "protocolVersion": version,
                    "capabilities": {},
                    "clientInfo": {"name": "t", "version": "1"},
                },
            }
        )
        assert reply.status == 200, reply.body
        self.session_id = reply.header("mcp-session-id")
        assert (
            self.send(body={"jsonrpc": "2.0", "method": "notifications/initialized"}).status == 202
        )
        self.version = version
        return reply

    def call(self, rid: Any, name: str, arguments: Any = None, **extra: Any) -> Reply:
        params: dict[str, Any] = {"name": name, "arguments": arguments or {}}
        params.update(extra)
        return self.send(
            body={"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}
        )


def modern(method: str, rid: Any = 1, **params: Any) -> tuple[dict[str, Any], dict[str, str]]:
    body = {
        "jsonrpc": "2.0",
        "id": rid,
        "method": method,
        "params": {"_meta": dict(META), **params},
    }
    headers = {"mcp-protocol-version": V2026, "mcp-method": method}
    if "name" in params:
        headers["mcp-name"] = params["name"]
    if "uri" in params:
        headers["mcp-name"] = params["uri"]
    return body, headers


# ---------------------------------------------------------------------- the head alone


def test_a_foreign_path_is_404() -> None:
    reply = Client().send(body={}, target="/other")
    assert reply.status == 404
    assert reply.ended


def test_put_is_405_with_allow() -> None:
    reply = Client().send("PUT", {})
    assert reply.status == 405
    assert reply.header("allow") == "GET, POST, DELETE"


def test_a_stateless_only_server_allows_post_only() -> None:
    client = Client(versions=[V2026])
    reply = client.send("GET", headers={"mcp-session-id": "x"})
    assert reply.status == 405
    assert reply.header("allow") == "POST"


@pytest.mark.parametrize("host", ["evil.example", "evil.example:8000", "127.0.0.2:1", ""])
def test_a_foreign_host_is_refused(host: str) -> None:
    reply = Client().send(body={}, headers={"host": host})
    assert reply.status == 421
    assert "Host" in reply.json()["error"]["message"]


@pytest.mark.parametrize("host", ["localhost", "LOCALHOST:9", "127.0.0.1", "[::1]:8000"])
def test_loopback_hosts_pass(host: str) -> None:
    client = Client()
    reply = client.send(body={"jsonrpc": "2.0", "id": 1, "method": "ping"}, headers={"host": host})
    assert reply.status != 421


@pytest.mark.parametrize(
    "origin", ["http://evil.example", "null", "file://", "http://localhost.evil"]
)
def test_a_foreign_origin_is_403(origin: str) -> None:
    reply = Client().send(body={}, headers={"origin": origin})
    assert reply.status == 403


def test_a_loopback_origin_passes_and_the_checks_can_be_turned_off() -> None:
    client = Client()
    client.initialize()
    assert (
        client.send(
            body={"jsonrpc": "2.0", "id": 1, "method": "ping"},
            headers={"origin": "http://localhost:3000"},
        ).status
        == 200
    )
    open_client = Client(allowed_hosts=None, allowed_origins=None)
    reply = open_client.send(
        body=initialize_request(),
        headers={"host": "mcp.example.com", "origin": "https://app.example.com"},
    )
    assert reply.status == 200


def test_explicit_origins() -> None:
    client = Client(allowed_origins=["app.example.com"])
    assert client.send(body={}, headers={"origin": "https://app.example.com"}).status != 403
    assert client.send(body={}, headers={"origin": "http://localhost"}).status == 403


@pytest.mark.parametrize("accept", ["application/json", "text/event-stream", "text/html", None])
def test_post_must_accept_json_and_sse(accept: str | None) -> None:
    reply = Client().send(body={}, headers={"accept": accept})
    assert reply.status == 406


@pytest.mark.parametrize(
    "accept", ["*/*", "application/*, text/*", "text/event-stream;q=1, application/json;q=0.9"]
)
def test_wildcards_are_accepted(accept: str) -> None:
    assert Client().send(body={}, headers={"accept": accept}).status != 406


def test_content_type_must_be_json() -> None:
    assert Client().send(body={}, headers={"content-type": "text/plain"}).status == 415
    assert (
        Client()
        .send(
            body={"jsonrpc": "2.0", "id": 1, "method": "ping"},
            headers={"content-type": "application/json; charset=utf-8"},
        )
        .status
        != 415
    )


def test_an_announced_oversized_body_is_413_before_reading() -> None:
    client = Client(max_body_size=100)
    reply = client.send(raw=b"x" * 10, headers={"content-length": "101"})
    assert reply.status == 413
    assert reply.ended


def test_a_growing_oversized_body_is_413_and_not_kept() -> None:
    client = Client(max_body_size=100)
    reply = client.send(raw=b"[" + b" " * 200 + b"]", chunks=10)
    assert reply.status == 413
    assert reply.ex.body == b""


# ---------------------------------------------------------------------- bodies


def test_bad_json_is_a_parse_error() -> None:
    reply = Client().send(raw=b"{not json")
    assert reply.status == 400
    assert reply.json()["error"]["code"] == -32700
    assert reply.json()["id"] is None


@pytest.mark.parametrize("raw", [b"[]", b"3", b'"x"', b"[1, 2]", b"null"])
def test_a_body_that_is_no_message_is_400(raw: bytes) -> None:
    reply = Client().send(raw=raw)
    assert reply.status == 400
    assert reply.json()["error"]["code"] == -32600


def test_an_invalid_message_in_a_session_gets_its_json_rpc_answer() -> None:
    client = Client()
    client.initialize()
    reply = client.send(body={"jsonrpc": "2.0", "id": 5, "method": 7})
    assert reply.status == 200
    assert reply.json()["error"]["code"] == -32600


# ---------------------------------------------------------------------- the initialize era


def test_initialize_sets_an_unguessable_session_id() -> None:
    client = Client()
    reply = client.initialize()
    sid = reply.header("mcp-session-id")
    assert sid is not None
    assert len(sid) >= 32
    assert sid.isascii()
    assert sid.isprintable()
    assert reply.json()["result"]["protocolVersion"] == "2025-11-25"
    other = Client(client.core)
    assert other.initialize().header("mcp-session-id") != sid


def test_requests_get_json_when_the_answer_is_ready_first() -> None:
    client = Client()
    client.initialize()
    reply = client.call(1, "echo", {"m": "hi"})
    assert reply.status == 200
    assert reply.ended
    assert reply.header("content-length") == str(len(reply.body))
    assert reply.json()["result"]["content"][0]["text"] == "hi"


@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"])
def test_a_request_posted_before_initialized_is_served(version: str) -> None:
    """The initialize window over HTTP: the client may POST a request once initialize is
    answered, and the POST of notifications/initialized may come after it (MCP, Basic >
    Lifecycle: "The client SHOULD NOT send requests other than pings before the server has
    responded to the initialize request")."""
    client = Client()
    hello = {
        "protocolVersion": version,
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    }
    reply = client.send(body={"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": hello})
    assert reply.status == 200
    client.session_id = reply.header("mcp-session-id")
    client.version = version
    answer = client.call(1, "echo", {"m": "early"})
    assert answer.status == 200
    assert answer.json()["result"]["content"][0]["text"] == "early"
    note = client.send(body={"jsonrpc": "2.0", "method": "notifications/initialized"})
    assert note.status == 202
    assert client.call(2, "echo", {"m": "late"}).json()["result"]["content"][0]["text"] == "late"


def test_notifications_and_responses_get_202() -> None:
    client = Client()
    client.initialize()
    reply = client.send(body={"jsonrpc": "2.0", "method": "notifications/roots/list_changed"})
    assert reply.status == 202
    assert reply.body == b""
    assert reply.ended


def test_a_request_without_a_session_is_400() -> None:
    client = Client(versions=["2025-11-25"])
    reply = client.send(body={"jsonrpc": "2.0", "id": 3, "method": "tools/list"})
    assert reply.status == 400
    assert reply.json()["id"] == 3


def test_an_unknown_session_is_404() -> None:
    client = Client()
    client.session_id = "0" * 32
    reply = client.send(body={"jsonrpc": "2.0", "id": 1, "method": "ping"})
    assert reply.status == 404
    assert client.send("GET").status == 404
    assert client.send("DELETE").status == 404


def test_delete_ends_the_session() -> None:
    client = Client()
    client.initialize()
    sid = client.session_id
    reply = client.send("DELETE")
    assert reply.status == 200
    assert [hs.id for hs in client.driver.terminated] == [sid]
    assert client.send(body={"jsonrpc": "2.0", "id": 1, "method": "ping"}).status == 404


def test_get_and_delete_need_a_session() -> None:
    client = Client()
    assert client.send("GET").status == 405
    assert client.send("DELETE").status == 405


@pytest.mark.parametrize("version", ["2099-01-01", "junk", "2026-07-28"])
def test_a_bad_protocol_version_header_is_400(version: str) -> None:
    client = Client()
    client.initialize()
    reply = client.send(
        body={"jsonrpc": "2.0", "id": 1, "method": "ping"},
        headers={"mcp-protocol-version": version},
    )
    assert reply.status == 400


def test_another_supported_version_header_passes() -> None:
    client = Client()
    client.initialize("2025-06-18")
    reply = client.send(
        body={"jsonrpc": "2.0", "id": 1, "method": "ping"},
        headers={"mcp-protocol-version": "2025-03-26"},
    )
    assert reply.status == 200
    assert (
        client.send(
            body={"jsonrpc": "2.0", "id": 2, "method": "ping"},
            headers={"mcp-protocol-version": None},
        ).status
        == 200
    )


def test_progress_and_logs_make_an_sse_answer_with_ids_and_priming() -> None:
    client = Client()
    client.initialize()
    client.send(
        body={"jsonrpc": "2.0", "id": 9, "method": "logging/setLevel", "params": {"level": "debug"}}
    )
    reply = client.call(1, "progress", _meta={"progressToken": "tok"})
    assert reply.status == 200
    assert reply.ended
    assert reply.header("content-type") == "text/event-stream"
    assert reply.header("mcp-session-id") == client.session_id
    events = reply.events()
    assert events[0].data == ""
    assert events[0].retry == 1000
    assert events[0].id
    ids = [e.id for e in events]
    assert len(set(ids)) == len(ids)
    assert all(ids)
    messages = [orjson.loads(e.data) for e in events[1:]]
    assert [m.get("method") for m in messages] == [
        "notifications/progress",
        "notifications/message",
        "notifications/progress",
        None,
    ]
    assert messages[-1]["id"] == 1


def test_json_only_drops_what_comes_before_the_answer() -> None:
    client = Client(json_response=True)
    client.initialize()
    reply = client.call(1, "progress", _meta={"progressToken": "tok"})
    assert reply.header("content-type") == "application/json"
    assert reply.json()["id"] == 1


def test_sse_only() -> None:
    client = Client(json_response=False)
    client.initialize()
    reply = client.call(1, "echo", {"m": "x"})
    assert reply.header("content-type") == "text/event-stream"
    assert reply.messages()[-1]["result"]["content"][0]["text"] == "x"


def test_a_slow_answer_waits_then_comes() -> None:
    client = Client()
    client.initialize()
    reply = client.call(1, "slow")
    assert reply.head is None
    assert not reply.ended
    touched = client.driver.finish("late")
    assert touched == [reply.ex]
    reply.pull()
    assert reply.json()["result"]["content"][0]["text"] == "late"


def test_a_batch_gets_an_sse_answer_per_request() -> None:
    client = Client()
    client.initialize("2025-03-26")
    reply = client.send(
        body=[
            {"jsonrpc": "2.0", "id": 1, "method": "ping"},
            {"jsonrpc": "2.0", "method": "notifications/roots/list_changed"},
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": "echo", "arguments": {"m": "b"}},
            },
        ]
    )
    assert reply.status == 200
    assert reply.ended
    answers = {m["id"]: m for m in reply.messages()}
    assert set(answers) == {1, 2}


def test_the_standalone_stream_carries_unrelated_messages() -> None:
    client = Client()
    client.initialize()
    stream = client.send("GET", headers={"accept": "text/event-stream"})
    assert stream.status == 200
    assert not stream.ended
    assert stream.events()[0].data == ""  # priming
    assert client.send("GET", headers={"accept": "text/event-stream"}).status == 409
    hs = client.core.sessions[client.session_id]  # type: ignore[index]
    touched = client.core.route(hs, hs.session.list_changed("tools"))
    assert touched == [stream.ex]
    stream.pull()
    assert stream.messages()[-1]["method"] == "notifications/tools/list_changed"


def test_get_must_accept_sse() -> None:
    client = Client()
    client.initialize()
    assert client.send("GET", headers={"accept": "application/json"}).status == 406


def test_resumption_replays_what_the_dropped_stream_missed() -> None:
    client = Client()
    client.initialize()
    reply = client.call(1, "reconnect", _meta={"progressToken": "tok"})
    assert reply.ended
    assert reply.header("content-type") == "text/event-stream"
    events = reply.events()
    assert [e.data == "" for e in events] == [True, False]  # priming, then progress 1
    assert events[0].retry == 1000
    client.driver.finish("after")  # answered while the client is away
    resumed = client.send(
        "GET", headers={"accept": "text/event-stream", "last-event-id": events[-1].id}
    )
    assert resumed.status == 200
    assert resumed.ended
    messages = resumed.messages()
    assert messages[0]["params"]["progress"] == 2
    assert messages[-1]["id"] == 1
    # From the priming event: everything.
    again = client.send(
        "GET", headers={"accept": "text/event-stream", "last-event-id": events[0].id}
    )
    assert len(again.messages()) == 3


def test_resuming_a_live_stream_follows_it() -> None:
    client = Client()
    client.initialize()
    reply = client.call(1, "reconnect", _meta={"progressToken": "tok"})
    last = reply.events()[-1].id
    resumed = client.send("GET", headers={"accept": "text/event-stream", "last-event-id": last})
    assert not resumed.ended
    client.driver.finish("after")
    resumed.pull()
    assert resumed.ended
    assert resumed.messages()[-1]["id"] == 1


def test_a_second_resumption_takes_the_stream_over_and_wakes_the_first() -> None:
    client = Client()
    client.initialize()
    reply = client.call(1, "reconnect", _meta={"progressToken": "tok"})
    last = reply.events()[-1].id
    headers = {"accept": "text/event-stream", "last-event-id": last}
    first = client.send("GET", headers=headers)
    assert not first.ended
    second = client.send("GET", headers=headers)
    assert client.driver.woken == [first.ex]
    first.pull()
    assert first.ended
    assert not second.ended
    client.driver.finish("after")
    second.pull()
    assert second.messages()[-1]["id"] == 1


def test_delete_ends_the_other_responses_of_the_session() -> None:
    client = Client()
    client.initialize()
    pending = client.call(1, "slow")
    stream = client.send("GET", headers={"accept": "text/event-stream"})
    assert client.send("DELETE").status == 200
    assert set(client.driver.woken) == {pending.ex, stream.ex}
    assert pending.pull().status == 404
    assert stream.pull().ended
    hs = client.driver.terminated[0]
    assert hs.over


def test_a_stateless_session_is_over_once_answered() -> None:
    client = Client()
    body, headers = modern("tools/call", 5, name="slow", arguments={})
    client.send(body=body, headers=headers)
    ((hs, _),) = client.driver.kept
    assert not hs.over
    client.driver.finish()
    assert hs.over


@pytest.mark.parametrize("last", ["nonsense", "99_1", "1_99", "_", "1_", "-1_0"])
def test_an_unknown_last_event_id_is_400(last: str) -> None:
    client = Client()
    client.initialize()
    client.call(1, "reconnect", _meta={"progressToken": "tok"})
    reply = client.send("GET", headers={"accept": "text/event-stream", "last-event-id": last})
    assert reply.status == 400


def test_an_event_that_fell_out_of_the_replay_buffer_cannot_be_resumed() -> None:
    client = Client(replay_size=2)
    client.initialize()
    client.send(
        body={"jsonrpc": "2.0", "id": 9, "method": "logging/setLevel", "params": {"level": "debug"}}
    )
    reply = client.call(1, "progress", _meta={"progressToken": "tok"})
    events = reply.events()
    first = events[1].id
    assert (
        client.send("GET", headers={"accept": "text/event-stream", "last-event-id": first}).status
        == 400
    )
    assert (
        client.send(
            "GET", headers={"accept": "text/event-stream", "last-event-id": events[-2].id}
        ).status
        == 200
    )


def test_a_dropped_connection_is_not_a_cancel_in_the_initialize_era() -> None:
    client = Client()
    client.initialize()
    reply = client.call(1, "slow")
    assert client.core.disconnected(reply.ex) == []
    client.driver.finish("kept")
    hs = client.core.sessions[client.session_id]  # type: ignore[index]
    stream = next(iter(hs.streams.values()))
    assert b'"kept"' in stream.replay[-1][1]


def test_sessions_are_bounded() -> None:
    core = HttpServer(build(), max_sessions=2)
    first = Client(core)
    first.initialize()
    Client(core).initialize()
    third = Client(core)
    third.initialize()
    assert len(core.sessions) == 2
    assert first.session_id not in core.sessions
    assert [hs.id for hs in third.driver.terminated] == [first.session_id]


def test_keepalive_comments_go_on_open_streams_only() -> None:
    client = Client()
    client.initialize()
    stream = client.send("GET", headers={"accept": "text/event-stream"})
    client.call(1, "echo", {"m": "x"})
    assert client.core.keepalive() == [stream.ex]
    stream.pull()
    assert stream.body.endswith(b": keep-alive\n\n")


# ---------------------------------------------------------------------- 2026-07-28


def test_stateless_requests_get_json_without_a_session() -> None:
    client = Client()
    body, headers = modern("tools/list")
    reply = client.send(body=body, headers=headers)
    assert reply.status == 200
    assert reply.header("mcp-session-id") is None
    assert {t["name"] for t in reply.json()["result"]["tools"]} >= {"echo", "progress"}
    assert client.core.sessions == {}
    assert client.core.live == set()


def test_stateless_requests_are_each_their_own_session() -> None:
    client = Client()
    for _ in range(2):  # the same id twice: no duplicate-id error across POSTs
        body, headers = modern("tools/call", 1, name="echo", arguments={"m": "a"})
        assert client.send(body=body, headers=headers).json()["result"]["content"][0]["text"] == "a"


@pytest.mark.parametrize(
    ("method", "status", "code"),
    [
        ("initialize", 404, -32601),
        ("ping", 404, -32601),
        ("logging/setLevel", 404, -32601),
        ("resources/subscribe", 404, -32601),
        ("unknown/method", 404, -32601),
    ],
)
def test_removed_and_unknown_methods_are_404(method: str, status: int, code: int) -> None:
    body, headers = modern(method, 7)
    reply = Client().send(body=body, headers=headers)
    assert reply.status == status
    assert reply.json()["error"]["code"] == code
    assert reply.json()["id"] == 7


def test_an_unsupported_version_is_400_with_32022() -> None:
    body, headers = modern("server/discover", 3)
    body["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = "v999"
    headers["mcp-protocol-version"] = "v999"
    reply = Client().send(body=body, headers=headers)
    assert reply.status == 400
    error = reply.json()["error"]
    assert error["code"] == -32022
    assert error["data"]["requested"] == "v999"
    assert V2026 in error["data"]["supported"]


def test_missing_meta_is_400_with_32602() -> None:
    body, headers = modern("tools/list", 4)
    del body["params"]["_meta"]
    reply = Client().send(body=body, headers=headers)
    assert reply.status == 400
    assert reply.json()["error"]["code"] == -32602


@pytest.mark.parametrize(
    "change",
    [
        {"mcp-method": None},
        {"mcp-method": "prompts/list"},
        {"mcp-method": "TOOLS/CALL"},
        {"mcp-name": None},
        {"mcp-name": "other"},
        {"mcp-protocol-version": None},
        {"mcp-protocol-version": "2025-11-25"},
    ],
)
def test_header_mismatches_are_400_with_32020(change: dict[str, str | None]) -> None:
    body, headers = modern("tools/call", 8, name="echo", arguments={})
    headers.update(change)  # type: ignore[arg-type]
    reply = Client().send(body=body, headers=headers)
    assert reply.status == 400
    assert reply.json()["error"]["code"] == -32020
    assert reply.json()["id"] == 8


def test_headers_are_case_insensitive_by_name_and_trimmed() -> None:
    body, headers = modern("tools/call", 8, name="echo", arguments={})
    headers["mcp-name"] = "  echo  "
    headers = {k.upper(): v for k, v in headers.items()}
    assert Client().send(body=body, headers=headers).status == 200


def _b64(text: str) -> str:
    return "=?base64?" + base64.b64encode(text.encode()).decode() + "?="


@pytest.mark.parametrize(
    ("region_header", "ok"),
    [
        ("us-west1", True),
        (_b64("us-west1"), True),
        ("=?base64?SGVsbG8?=", False),  # bad padding
        ("=?base64?SGVs!!!bG8=?=", False),  # bad characters
        ("eu", False),
        (None, False),
    ],
)
def test_mcp_param_headers(region_header: str | None, ok: bool) -> None:
    body, headers = modern("tools/call", 2, name="region", arguments={"region": "us-west1", "n": 3})
    headers["mcp-param-n"] = "3"
    if region_header is not None:
        headers["Mcp-Param-Region"] = region_header
    reply = Client().send(body=body, headers=headers)
    assert (reply.status == 200) is ok
    if not ok:
        assert reply.json()["error"]["code"] == -32020


def test_an_mcp_param_header_without_its_argument_is_a_mismatch() -> None:
    body, headers = modern("tools/call", 2, name="region", arguments={})
    headers["mcp-param-region"] = "x"
    assert Client().send(body=body, headers=headers).status == 400


def test_no_batches_in_2026() -> None:
    body, headers = modern("tools/list")
    assert Client().send(body=[body], headers=headers).status == 400


def test_closing_the_stream_cancels_the_request() -> None:
    client = Client()
    body, headers = modern("tools/call", 5, name="slow", arguments={})
    reply = client.send(body=body, headers=headers)
    assert not reply.ended
    ((hs, job),) = client.driver.kept
    work = client.core.disconnected(reply.ex)
    assert [type(w) for w in work] == [Deliver]
    client.driver.run(work, None)
    assert job.cancelled
    assert hs.session.finish(job, "too late") == b""
    assert client.core.live == set()


def test_listen_streams_stay_open_and_get_broadcasts() -> None:
    client = Client()
    body, headers = modern(
        "subscriptions/listen", 11, notifications={"resourceSubscriptions": ["test://r"]}
    )
    listen = client.send(body=body, headers=headers)
    assert listen.status == 200
    assert not listen.ended
    assert listen.header("content-type") == "text/event-stream"
    ack = listen.messages()[0]
    assert ack["method"] == "notifications/subscriptions/acknowledged"
    assert ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == 11
    assert all(e.id is None for e in listen.events())  # no resumption in 2026
    body, headers = modern("tools/call", 12, name="touch", arguments={})
    assert client.send(body=body, headers=headers).status == 200
    listen.pull()
    update = listen.messages()[-1]
    assert update["method"] == "notifications/resources/updated"
    assert update["params"]["uri"] == "test://r"
    assert client.core.keepalive() == [listen.ex]
    work = client.core.disconnected(listen.ex)
    client.driver.run(work, None)
    assert client.core.live == set()


def test_a_stateless_notification_gets_202() -> None:
    body = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 3}}
    reply = Client().send(
        body=body, headers={"mcp-protocol-version": V2026, "mcp-method": "notifications/cancelled"}
    )
    assert reply.status == 202


# ---------------------------------------------------------------------- fuzz


_HEADER_NAMES = st.sampled_from(
    [
        "host",
        "origin",
        "accept",
        "content-type",
        "content-length",
        "mcp-session-id",
        "mcp-protocol-version",
        "mcp-method",
        "mcp-name",
        "mcp-param-region",
        "last-event-id",
        "x-other",
    ]
)
_HEADER_VALUES = st.one_of(
    st.sampled_from(
        [
            "127.0.0.1:1",
            ACCEPT,
            "application/json",
            "text/event-stream",
            V2026,
            "2025-11-25",
            "tools/call",
            "echo",
            "=?base64?ZWNobw==?=",
            "=?base64?!!?=",
            "1_1",
            "http://localhost",
            "999999999999999999999",
        ]
    ),
    st.text(st.characters(min_codepoint=32, max_codepoint=126), max_size=20),
)
_BODIES = st.one_of(
    st.binary(max_size=64),
    st.recursive(
        st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(max_size=8),
        lambda inner: (
            st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
        ),
        max_leaves=8,
    ).map(orjson.dumps),
    st.sampled_from(
        [
            orjson.dumps(modern("tools/call", 1, name="echo", arguments={"m": "x"})[0]),
            orjson.dumps(modern("tools/list", "a")[0]),
            b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25",'
            b'"capabilities":{},"clientInfo":{"name":"f","version":"1"}}}',
            b'{"jsonrpc":"2.0","method":"notifications/initialized"}',
            b'{"jsonrpc":"2.0","id":1,"result":{}}',
        ]
    ),
)


@settings(max_examples=300, deadline=None)
@given(
    requests=st.lists(
        st.tuples(
            st.sampled_from(["POST", "GET", "DELETE", "PUT", "post"]),
            st.sampled_from(["/mcp", "/mcp?x=1", "/", "*", "/mcp/../mcp"]),
            st.dictionaries(_HEADER_NAMES, _HEADER_VALUES, max_size=8),
            _BODIES,
            st.booleans(),
        ),
        min_size=1,
        max_size=6,
    )
)
def test_no_input_makes_the_server_raise(
    requests: list[tuple[str, str, dict[str, str], bytes, bool]],
) -> None:
    """Any sequence of requests gets an HTTP answer (or waits for a handler), and
    the core never raises."""
    core = HttpServer(build(), replay_size=4, max_sessions=3, max_body_size=4096)
    driver = Driver(core)
    for method, target, headers, body, drop in requests:
        ex = core.begin(method, target, [(k, v) for k, v in headers.items()])
        if not ex.finished and ex.receive_body(body, core.max_body_size):
            driver.run(core.end(ex), ex)
        reply = Reply(ex)
        if reply.head is not None:
            assert 200 <= reply.status < 600
        if drop and not reply.ended:
            driver.run(core.disconnected(ex), None)
        if (
            reply.ended
            and reply.head is not None
            and reply.header("content-type") == "application/json"
        ):
            assert isinstance(orjson.loads(reply.body), (dict, list))
    while driver.kept:
        driver.finish()
    core.keepalive()


def test_a_request_state_sealed_by_one_worker_opens_on_another() -> None:
    """Scaling out: two servers sharing ``state_keys`` (and the wall clock) serve the two
    rounds of one ``input_required`` exchange."""
    keys = b"k" * 32
    first, second = Client(state_keys=keys), Client(state_keys=keys)
    caps: dict[str, Any] = {"elicitation": {}}
    body, headers = modern("tools/call", 1, name="ask", arguments={})
    body["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] = caps
    answer = first.send(body=body, headers=headers).json()["result"]
    assert answer["resultType"] == "input_required"
    ((key, request),) = answer["inputRequests"].items()
    assert request["method"] == "elicitation/create"
    body["id"] = 2
    body["params"]["requestState"] = answer["requestState"]
    body["params"]["inputResponses"] = {key: {"action": "accept", "content": {"name": "Ada"}}}
    final = second.send(body=body, headers=headers).json()["result"]
    assert final["content"][0]["text"] == "hello Ada"
    stranger = Client(state_keys=b"x" * 32)
    refused = stranger.send(body=body, headers=headers)
    assert refused.json()["error"]["code"] == -32602


@pytest.mark.parametrize("bad_id", [None, True, 1.5])
def test_a_request_with_an_invalid_id_gets_its_error_not_202(bad_id: Any) -> None:
    client = Client()
    client.initialize()
    reply = client.send(body={"jsonrpc": "2.0", "id": bad_id, "method": "ping"})
    assert reply.status == 400
    assert reply.ended
    assert reply.json()["error"]["code"] == -32600


def test_a_refused_batch_gets_its_error_and_the_answer_ends() -> None:
    client = Client()
    client.initialize("2025-11-25")  # no batches in this version
    reply = client.send(
        body=[
            {"jsonrpc": "2.0", "id": 1, "method": "ping"},
            {"jsonrpc": "2.0", "id": 2, "method": "ping"},
        ]
    )
    assert reply.ended
    (error,) = reply.messages() if reply.header("content-type") == _SSE else [reply.json()]
    assert error["error"]["code"] == -32600
    hs = client.core.sessions[client.session_id]  # type: ignore[index]
    assert hs.by_request == {}


def test_an_id_already_in_flight_is_refused_and_the_first_answer_is_kept() -> None:
    client = Client()
    client.initialize()
    first = client.call(1, "slow")
    second = client.call(1, "echo", {"m": "x"})
    assert second.status == 400
    assert second.json()["error"]["code"] == -32600
    client.driver.finish("first")
    first.pull()
    assert first.json()["result"]["content"][0]["text"] == "first"


def test_a_batch_repeating_an_id_is_refused() -> None:
    client = Client()
    client.initialize("2025-03-26")
    ping = {"jsonrpc": "2.0", "id": 7, "method": "ping"}
    reply = client.send(body=[ping, ping])
    assert reply.status == 400


# ---------------------------------------------------------------------- layering


def test_the_sans_io_http_layer_imports_no_runtime_and_no_h11() -> None:
    # The sans-IO server and client (every module of mcp_sansio.http but the h11 glue and
    # the ASGI app) load neither an event loop nor a runtime package nor h11: a runtime
    # imports them, never the other way round.
    import subprocess
    import sys
    import textwrap

    code = textwrap.dedent(
        """
        import sys
        import mcp_sansio.http
        from mcp_sansio.http import (
            _admission, _client, _client_base, _client_follow_ups, _client_parts,
            _client_reopen, _client_tools, _headers, _server, _sessions,
        )
        loaded = [
            name for name in ("asyncio", "trio", "h11", "mcp_sansio.asyncio", "mcp_sansio.trio",
                              "mcp_sansio.blocking", "mcp_sansio.asgi")
            if name in sys.modules
        ]
        assert not loaded, loaded
        """
    )
    subprocess.run([sys.executable, "-bb", "-c", code], check=True, timeout=60)
