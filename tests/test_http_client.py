"""The Streamable HTTP client: the sans-IO transport (byte-level, no sockets), its h11 glue,
and the asyncio binding against a small HTTP server written here with asyncio and h11.

Every asyncio test runs under a time bound, on loopback only.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Sequence
from typing import Any, TypeVar

import h11
import orjson
import pytest

from mcp_sansio._sse import encode_event
from mcp_sansio.asyncio import Client, McpError
from mcp_sansio.asyncio._http_client import HttpStreams, parse_url
from mcp_sansio.http._client import (
    TRANSPORT_ERROR,
    AbortRequest,
    ClientAction,
    HttpClientTransport,
    HttpRequest,
    ToSession,
    TransportProblem,
)
from mcp_sansio.http._h11client import ConnectionPool, H11Exchange, host_header
from mcp_sansio.session import CallFinished, ClientSession, Opened, Send

T = TypeVar("T")

V2026 = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": V2026,
    "io.modelcontextprotocol/clientCapabilities": {},
}
JSON = [("Content-Type", "application/json")]
SSE = [("Content-Type", "text/event-stream")]


# ---------------------------------------------------------------------- helpers


def line(message: Any) -> bytes:
    return orjson.dumps(message) + b"\n"


def req(request_id: int | str, method: str, params: dict[str, Any] | None = None) -> bytes:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return line(message)


def modern(request_id: int | str, method: str, params: dict[str, Any] | None = None) -> bytes:
    return req(request_id, method, {**(params or {}), "_meta": META})


def result(request_id: Any, value: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "result": value or {}}


def only_request(actions: Sequence[ClientAction]) -> HttpRequest:
    requests = [a for a in actions if isinstance(a, HttpRequest)]
    assert len(requests) == 1, actions
    return requests[0]


def post(t: HttpClientTransport, data: bytes) -> HttpRequest:
    return only_request(t.send(data))


def hdrs(request: HttpRequest) -> dict[str, str]:
    out: dict[str, str] = {}
    for name, value in request.headers:
        assert name.lower() not in out, f"duplicate header {name}"
        out[name.lower()] = value
    return out


def lines(actions: Iterable[ClientAction]) -> list[dict[str, Any]]:
    """The messages the actions hand to the session, each checked to be one line."""
    out = []
    for action in actions:
        if isinstance(action, ToSession):
            assert action.data.endswith(b"\n")
            for raw in action.data[:-1].split(b"\n"):
                out.append(orjson.loads(raw))
    return out


def respond(
    t: HttpClientTransport,
    stream: int,
    status: int = 200,
    headers: Iterable[tuple[str, str]] = (),
    body: bytes | Iterable[bytes] = b"",
    *,
    end: bool = True,
) -> list[ClientAction]:
    """Feed a whole response (the body in the chunks given)."""
    actions = list(
        t.response_started(stream, status, [(n.encode(), v.encode()) for n, v in headers])
    )
    for chunk in [body] if isinstance(body, bytes) else body:
        actions += t.response_data(stream, chunk)
    if end:
        actions += t.response_ended(stream)
    return actions


def errors(actions: Iterable[ClientAction]) -> dict[Any, dict[str, Any]]:
    return {m["id"]: m["error"] for m in lines(actions) if "error" in m}


def open_legacy(
    t: HttpClientTransport, version: str = "2025-11-25", session_id: str | None = "s-1"
) -> None:
    """Run an initialize exchange through the transport."""
    request = post(t, req(0, "initialize", {"protocolVersion": version}))
    extra = [("Mcp-Session-Id", session_id)] if session_id else []
    answer = result(0, {"protocolVersion": version, "capabilities": {}, "serverInfo": {}})
    assert lines(respond(t, request.stream, 200, JSON + extra, orjson.dumps(answer))) == [answer]


# ---------------------------------------------------------------------- requests


def test_post_headers_and_body_of_a_2026_request() -> None:
    t = HttpClientTransport("/mcp?x=1", headers={"Authorization": "Bearer t"})
    data = modern(7, "server/discover")
    request = post(t, data)
    assert request.method == "POST"
    assert request.target == "/mcp?x=1"
    assert request.body == data[:-1]  # the session's line, as it was written
    assert request.delay == 0
    assert hdrs(request) == {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "authorization": "Bearer t",
        "mcp-protocol-version": V2026,
        "mcp-method": "server/discover",
    }


def test_initialize_era_headers_follow_the_initialize_result() -> None:
    t = HttpClientTransport()
    first = post(t, req(0, "initialize", {"protocolVersion": "2025-11-25"}))
    assert "mcp-session-id" not in hdrs(first)
    assert "mcp-protocol-version" not in hdrs(first)
    # The session id comes with the initialize response, and is used once its result passed.
    answer = result(0, {"protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": {}})
    actions = respond(t, first.stream, 200, [*JSON, ("mcp-session-id", "abc-1")], line(answer))
    assert lines(actions) == [answer]
    assert t.session_id == "abc-1"
    assert t.protocol_version == "2025-11-25"
    note = post(t, line({"jsonrpc": "2.0", "method": "notifications/initialized"}))
    assert hdrs(note)["mcp-session-id"] == "abc-1"
    assert hdrs(note)["mcp-protocol-version"] == "2025-11-25"
    assert "mcp-method" not in hdrs(note)  # a 2026 header
    assert respond(t, note.stream, 202) == []
    call = post(t, req(1, "tools/list"))
    assert hdrs(call)["mcp-session-id"] == "abc-1"


def test_what_follows_initialized_waits_for_its_answer() -> None:
    """On separate connections a later POST could overtake ``notifications/initialized``
    and reach the server first: the transport holds it until that POST is answered."""
    t = HttpClientTransport()
    open_legacy(t)
    initialized = post(t, line({"jsonrpc": "2.0", "method": "notifications/initialized"}))
    assert t.send(req(1, "tools/list")) == []
    assert t.send(req(2, "ping")) == []
    released = respond(t, initialized.stream, 202)
    sent = [a for a in released if isinstance(a, HttpRequest)]
    assert [orjson.loads(r.body)["id"] for r in sent] == [1, 2]
    assert hdrs(sent[0])["mcp-session-id"] == "s-1"
    assert only_request(t.send(req(3, "ping"))).body == req(3, "ping")[:-1]


def test_a_failed_initialized_post_releases_what_waits() -> None:
    t = HttpClientTransport()
    open_legacy(t)
    initialized = post(t, line({"jsonrpc": "2.0", "method": "notifications/initialized"}))
    assert t.send(req(1, "tools/list")) == []
    released = t.request_failed(initialized.stream, "connection reset")
    assert [orjson.loads(a.body)["id"] for a in released if isinstance(a, HttpRequest)] == [1]


def test_2025_03_26_sends_no_protocol_version_header() -> None:
    t = HttpClientTransport()
    open_legacy(t, "2025-03-26")
    request = post(t, req(1, "ping"))
    assert hdrs(request)["mcp-session-id"] == "s-1"
    assert "mcp-protocol-version" not in hdrs(request)


@pytest.mark.parametrize("bad", ["has space", "", "caf\u00e9", "tab\there"])
def test_a_session_id_that_is_not_visible_ascii_is_not_echoed(bad: str) -> None:
    t = HttpClientTransport()
    request = post(t, req(0, "initialize"))
    answer = result(0, {"protocolVersion": "2025-11-25"})
    t.response_started(
        request.stream, 200, [("Content-Type", "application/json"), ("Mcp-Session-Id", bad)]
    )
    t.response_data(request.stream, line(answer))
    t.response_ended(request.stream)
    assert t.session_id is None
    assert "mcp-session-id" not in hdrs(post(t, req(1, "ping")))


def test_a_session_id_on_another_response_is_ignored() -> None:
    t = HttpClientTransport()
    open_legacy(t, session_id=None)
    request = post(t, req(1, "ping"))
    respond(t, request.stream, 200, [*JSON, ("Mcp-Session-Id", "late")], line(result(1)))
    assert t.session_id is None
    assert "mcp-session-id" not in hdrs(post(t, req(2, "ping")))


def test_an_unknown_negotiated_version_goes_into_no_header() -> None:
    t = HttpClientTransport()
    request = post(t, req(0, "initialize"))
    answer = result(0, {"protocolVersion": "9999-01-01\r\nX-Evil: 1"})
    respond(t, request.stream, 200, JSON, line(answer))
    assert t.protocol_version is None
    assert "mcp-protocol-version" not in hdrs(post(t, req(1, "ping")))


def test_lines_split_and_joined_across_writes() -> None:
    t = HttpClientTransport()
    data = modern(1, "tools/list") + modern(2, "prompts/list") + modern(3, "resources/list")
    assert t.send(data[:10]) == []
    actions = t.send(data[10:-5])
    assert [hdrs(a)["mcp-method"] for a in actions if isinstance(a, HttpRequest)] == [
        "tools/list",
        "prompts/list",
    ]
    last = post(t, data[-5:])
    assert hdrs(last)["mcp-method"] == "resources/list"
    assert t.send(b"\n\n") == []


def test_bad_lines_from_the_session_are_reported_not_sent() -> None:
    t = HttpClientTransport()
    (problem,) = t.send(b"not json\n")
    assert isinstance(problem, TransportProblem)
    (problem,) = t.send(b"42\n")
    assert isinstance(problem, TransportProblem)
    assert t.open_streams == ()


@pytest.mark.parametrize(
    ("name", "value"), [("Bad Name", "x"), ("", "x"), ("X-Ok", "a\r\nb"), ("X-Ok", "\x00")]
)
def test_invalid_extra_headers_are_refused(name: str, value: str) -> None:
    with pytest.raises(ValueError, match="header"):
        HttpClientTransport(headers=[(name, value)])


# ---------------------------------------------------------------------- 2026 headers


CUSTOM_TOOL = {
    "name": "custom",
    "inputSchema": {
        "type": "object",
        "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "priority": {"type": "integer", "x-mcp-header": "Priority"},
            "verbose": {"type": "boolean", "x-mcp-header": "Verbose"},
            "text": {"type": "string", "x-mcp-header": "Text"},
            "padded": {"type": "string", "x-mcp-header": "Padded"},
            "query": {"type": "string"},
        },
    },
}
INVALID_TOOLS: list[dict[str, Any]] = [
    {"name": "empty", "inputSchema": {"properties": {"v": {"type": "string", "x-mcp-header": ""}}}},
    {
        "name": "object",
        "inputSchema": {"properties": {"v": {"type": "object", "x-mcp-header": "Data"}}},
    },
    {
        "name": "duplicate",
        "inputSchema": {
            "properties": {
                "a": {"type": "string", "x-mcp-header": "Same"},
                "b": {"type": "string", "x-mcp-header": "same"},
            }
        },
    },
    {
        "name": "colon",
        "inputSchema": {"properties": {"v": {"type": "string", "x-mcp-header": "A:B"}}},
    },
]


def learn(t: HttpClientTransport, tools: list[dict[str, Any]]) -> None:
    request = post(t, modern(1, "tools/list"))
    answer = result(
        1, {"tools": tools, "resultType": "complete", "ttlMs": 0, "cacheScope": "private"}
    )
    assert lines(respond(t, request.stream, 200, JSON, line(answer))) == [answer]


def test_tools_call_mirrors_annotated_arguments_into_headers() -> None:
    t = HttpClientTransport()
    learn(t, [CUSTOM_TOOL])
    assert t.tool_headers("custom") == {
        "region": "Region",
        "priority": "Priority",
        "verbose": "Verbose",
        "text": "Text",
        "padded": "Padded",
    }
    arguments = {
        "region": "us-west1",
        "priority": 42,
        "verbose": None,  # null: no header
        "text": "Hello, 世界",
        "padded": " x ",
        "query": "SELECT 1",  # not annotated: no header
    }
    request = post(t, modern(2, "tools/call", {"name": "custom", "arguments": arguments}))
    h = hdrs(request)
    assert h["mcp-method"] == "tools/call"
    assert h["mcp-name"] == "custom"
    assert h["mcp-param-region"] == "us-west1"
    assert h["mcp-param-priority"] == "42"
    assert "mcp-param-verbose" not in h
    assert "mcp-param-query" not in h
    for header, value in (("mcp-param-text", "Hello, 世界"), ("mcp-param-padded", " x ")):
        assert h[header].startswith("=?base64?")
        assert h[header].endswith("?=")
        assert base64.b64decode(h[header][9:-2]).decode() == value
    # A tool never listed gets the standard headers only.
    other = hdrs(
        post(t, modern(3, "tools/call", {"name": "unknown", "arguments": {"region": "x"}}))
    )
    assert other["mcp-name"] == "unknown"
    assert not [k for k in other if k.startswith("mcp-param-")]


def test_mcp_name_for_resources_and_prompts() -> None:
    t = HttpClientTransport()
    uri = "file:///path/to/file%20name.txt"
    assert hdrs(post(t, modern(1, "resources/read", {"uri": uri})))["mcp-name"] == uri
    assert hdrs(post(t, modern(2, "prompts/get", {"name": "my-prompt"})))["mcp-name"] == "my-prompt"


@pytest.mark.parametrize("tool", INVALID_TOOLS, ids=[t["name"] for t in INVALID_TOOLS])
def test_a_tool_with_invalid_annotations_is_refused_locally(tool: dict[str, Any]) -> None:
    t = HttpClientTransport()
    learn(t, [CUSTOM_TOOL, tool])
    assert t.tool_headers(tool["name"]) is None
    actions = t.send(modern(9, "tools/call", {"name": tool["name"], "arguments": {}}))
    assert not [a for a in actions if isinstance(a, HttpRequest)]  # never sent
    (error,) = errors(actions).values()
    assert error["code"] == -32602
    assert "x-mcp-header" in error["message"]
    assert list(errors(actions)) == [9]
    # The valid tool of the same list is still called.
    post(t, modern(10, "tools/call", {"name": "custom", "arguments": {"region": "eu"}}))


def test_invalid_annotations_do_not_stop_a_legacy_call() -> None:
    # x-mcp-header is a 2026-07-28 rule; the initialize era has no such headers.
    t = HttpClientTransport()
    open_legacy(t)
    request = post(t, req(1, "tools/list"))
    respond(t, request.stream, 200, JSON, line(result(1, {"tools": INVALID_TOOLS})))
    call = post(t, req(2, "tools/call", {"name": "empty", "arguments": {}}))
    assert "mcp-name" not in hdrs(call)


# ---------------------------------------------------------------------- answers


def test_json_answer_is_one_line_for_the_session() -> None:
    t = HttpClientTransport()
    request = post(t, modern(1, "tools/list"))
    answer = result(1, {"tools": [], "text": "two\nlines"})
    pretty = json.dumps(answer, indent=2).encode()  # a body spread over lines
    actions = respond(t, request.stream, 200, JSON, [pretty[:7], pretty[7:]])
    assert lines(actions) == [answer]
    assert t.open_streams == ()


def test_json_batch_answer_2025_03_26() -> None:
    t = HttpClientTransport()
    open_legacy(t, "2025-03-26")
    batch = [
        {"jsonrpc": "2.0", "id": 1, "method": "ping"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    ]
    request = post(t, line(batch))
    answers = [result(1), result(2, {"tools": []})]
    actions = respond(t, request.stream, 200, JSON, orjson.dumps(answers))
    (delivered,) = [a for a in actions if isinstance(a, ToSession)]
    assert orjson.loads(delivered.data) == answers
    assert not errors(actions)


def test_json_answer_to_a_notification_is_passed_on() -> None:
    # A 200 with a JSON body where 202 was expected: pass on what it holds.
    t = HttpClientTransport()
    request = post(t, line({"jsonrpc": "2.0", "method": "notifications/initialized"}))
    note = {"jsonrpc": "2.0", "method": "notifications/message", "params": {}}
    assert lines(respond(t, request.stream, 200, JSON, line(note))) == [note]


def test_sse_answer_fed_byte_by_byte() -> None:
    t = HttpClientTransport()
    request = post(t, modern(1, "tools/call", {"name": "x"}))
    progress = {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progress": 1}}
    answer = result(1, {"content": []})
    body = (
        encode_event(b"", id="e0", retry=100)  # the priming event: skipped
        + b": a comment\n\n"
        + encode_event(orjson.dumps(progress), id="e1")
        + encode_event(b'{"ignored": true}', event="other")  # not a message event
        + encode_event(json.dumps(answer, indent=1), id="e2")  # data over several lines
    )
    actions = respond(t, request.stream, 200, SSE, [body[i : i + 1] for i in range(len(body))])
    assert lines(actions) == [progress, answer]
    assert not [a for a in actions if isinstance(a, (HttpRequest, AbortRequest))]
    assert t.open_streams == ()


def test_responses_and_requests_of_the_server_on_a_stream() -> None:
    # Initialize era: the server asks something on the call's stream; the session's answer
    # is POSTed and gets 202.
    t = HttpClientTransport()
    open_legacy(t)
    call = post(t, req(1, "tools/call", {"name": "ask"}))
    ask = {"jsonrpc": "2.0", "id": 0, "method": "elicitation/create", "params": {}}
    t.response_started(call.stream, 200, SSE)
    assert lines(t.response_data(call.stream, encode_event(orjson.dumps(ask)))) == [ask]
    reply = post(t, line(result(0, {"action": "decline"})))
    assert hdrs(reply)["mcp-session-id"] == "s-1"
    assert respond(t, reply.stream, 202) == []
    answer = result(1, {"content": []})
    assert lines(t.response_data(call.stream, encode_event(orjson.dumps(answer)))) == [answer]
    assert t.response_ended(call.stream) == []


def test_parts_of_unknown_streams_are_ignored() -> None:
    t = HttpClientTransport()
    assert t.response_started(99, 200, JSON) == []
    assert t.response_data(99, b"{}") == []
    assert t.response_ended(99) == []
    assert t.request_failed(99, "gone") == []


# ---------------------------------------------------------------------- failures


def test_json_rpc_error_with_null_id_gets_the_request_id() -> None:
    # How a server/discover probe of a legacy server ends: the session falls back.
    t = HttpClientTransport()
    request = post(t, modern(3, "server/discover"))
    body = b'{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Bad Request"}}'
    actions = respond(t, request.stream, 400, JSON, body)
    assert lines(actions) == [
        {"jsonrpc": "2.0", "id": 3, "error": {"code": -32000, "message": "Bad Request"}}
    ]


def test_json_rpc_error_with_its_id_is_passed_unchanged() -> None:
    t = HttpClientTransport()
    request = post(t, modern(4, "tools/call", {"name": "x"}))
    error = {"jsonrpc": "2.0", "id": 4, "error": {"code": -32022, "message": "v", "data": {}}}
    assert lines(respond(t, request.stream, 400, JSON, orjson.dumps(error))) == [error]


def test_non_json_500() -> None:
    t = HttpClientTransport()
    request = post(t, modern(5, "tools/list"))
    actions = respond(t, request.stream, 500, [("Content-Type", "text/html")], b"<h1>oops</h1>")
    error = errors(actions)[5]
    assert error["code"] == TRANSPORT_ERROR
    assert "HTTP 500" in error["message"]
    assert error["data"] == {"status": 500}


def test_404_with_a_session_means_it_expired() -> None:
    t = HttpClientTransport(reopen=False)
    open_legacy(t, session_id="old")
    request = post(t, req(1, "tools/list"))
    error = errors(respond(t, request.stream, 404, body=b"Not Found"))[1]
    assert "session" in error["message"]
    assert "expired" in error["message"]
    assert "'old'" in error["message"]
    assert error["data"] == {"status": 404}


# ---------------------------------------------------------------------- expired sessions

INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
REOPEN_ID = "mcp-sansio-reopen"


def requests_of(actions: Iterable[ClientAction]) -> list[HttpRequest]:
    return [a for a in actions if isinstance(a, HttpRequest)]


def reopening(t: HttpClientTransport, stream: int) -> HttpRequest:
    """Answer ``stream`` with 404: the one action is the replayed initialize."""
    actions = respond(t, stream, 404, body=b"Not Found")
    assert len(actions) == 1
    return only_request(actions)


def reopened_as_new(t: HttpClientTransport, reopen: HttpRequest) -> HttpRequest:
    """Answer the replayed initialize with the session id ``new``: the one request that
    follows is ``notifications/initialized``."""
    actions = respond(t, reopen.stream, 200, [*JSON, ("Mcp-Session-Id", "new")], reopen_answer())
    (initialized,) = requests_of(actions)
    assert orjson.loads(initialized.body) == INITIALIZED
    return initialized


def reopen_answer(version: str = "2025-11-25") -> bytes:
    return orjson.dumps(result(REOPEN_ID, {"protocolVersion": version, "capabilities": {}}))


def test_an_expired_session_is_reopened_and_what_it_refused_sent_again() -> None:
    """404 to a POST with the session id: the transport replays initialize (its own id, no
    session id), then sends notifications/initialized and what was refused, and what the
    session wrote meanwhile, in the new session; the session sees only its answers."""
    t = HttpClientTransport()
    open_legacy(t, session_id="old")
    listing = post(t, req(1, "tools/list"))
    reopen = reopening(t, listing.stream)
    assert reopen.method == "POST"
    assert "mcp-session-id" not in hdrs(reopen)
    replayed = orjson.loads(reopen.body)
    assert replayed == {
        "jsonrpc": "2.0",
        "id": REOPEN_ID,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25"},
    }
    assert t.send(req(2, "ping")) == []  # written meanwhile: it waits
    actions = respond(t, reopen.stream, 200, [*JSON, ("Mcp-Session-Id", "new")], reopen_answer())
    assert lines(actions) == []  # the new initialize's answer is the transport's own
    problems = [a for a in actions if isinstance(a, TransportProblem)]
    assert len(problems) == 1
    assert "'old' expired" in problems[0].message
    assert "'new'" in problems[0].message
    (initialized,) = requests_of(actions)
    assert orjson.loads(initialized.body) == INITIALIZED
    assert hdrs(initialized)["mcp-session-id"] == "new"
    assert t.session_id == "new"
    assert t.reopened == 1
    again, ping = requests_of(respond(t, initialized.stream, 202))
    assert orjson.loads(again.body)["id"] == 1
    assert orjson.loads(ping.body)["id"] == 2
    for request in (again, ping):
        assert hdrs(request)["mcp-session-id"] == "new"
        assert hdrs(request)["mcp-protocol-version"] == "2025-11-25"
    answer = result(1, {"tools": []})
    assert lines(respond(t, again.stream, 200, JSON, orjson.dumps(answer))) == [answer]


def test_posts_expiring_together_reopen_once() -> None:
    t = HttpClientTransport()
    open_legacy(t, session_id="old")
    first = post(t, req(1, "tools/list"))
    second = post(t, req(2, "prompts/list"))
    reopen = reopening(t, first.stream)
    assert respond(t, second.stream, 404) == []  # it waits for the same reopening
    initialized = reopened_as_new(t, reopen)
    resent = requests_of(respond(t, initialized.stream, 202))
    assert sorted(orjson.loads(r.body)["id"] for r in resent) == [1, 2]
    assert t.reopened == 1


def test_a_post_of_the_old_session_refused_after_the_reopening_is_sent_again() -> None:
    t = HttpClientTransport()
    open_legacy(t, session_id="old")
    first = post(t, req(1, "tools/list"))
    slow = post(t, req(2, "prompts/list"))
    reopen = reopening(t, first.stream)
    initialized = reopened_as_new(t, reopen)
    requests_of(respond(t, initialized.stream, 202))
    (resent,) = requests_of(respond(t, slow.stream, 404))
    assert orjson.loads(resent.body)["id"] == 2
    assert hdrs(resent)["mcp-session-id"] == "new"
    assert t.reopened == 1


def test_a_reopened_session_that_refuses_again_is_not_reopened_twice() -> None:
    t = HttpClientTransport()
    open_legacy(t, session_id="old")
    listing = post(t, req(1, "tools/list"))
    reopen = reopening(t, listing.stream)
    initialized = reopened_as_new(t, reopen)
    (again,) = requests_of(respond(t, initialized.stream, 202))
    error = errors(respond(t, again.stream, 404))[1]
    assert "'new' has expired" in error["message"]
    assert t.reopened == 1
    # An answer in the new session: a later 404 may reopen again.
    ping = post(t, req(2, "ping"))
    respond(t, ping.stream, 200, JSON, orjson.dumps(result(2)))
    listing = post(t, req(3, "tools/list"))
    (reopen,) = requests_of(respond(t, listing.stream, 404))
    assert orjson.loads(reopen.body)["method"] == "initialize"


@pytest.mark.parametrize(
    ("status", "headers", "body", "why"),
    [
        (
            400,
            JSON,
            b'{"jsonrpc":"2.0","id":"mcp-sansio-reopen","error":{"code":-32600,"message":"no"}}',
            "refused (no)",
        ),
        (404, [], b"", "HTTP 404"),
        (200, JSON, reopen_answer("2025-06-18"), "negotiated '2025-06-18'"),
        (200, JSON, b'{"jsonrpc":"2.0","id":"other","result":{}}', "did not answer"),
    ],
    ids=["error", "404", "another-version", "no-answer"],
)
def test_a_failed_reopening_fails_what_waits(
    status: int, headers: list[tuple[str, str]], body: bytes, why: str
) -> None:
    t = HttpClientTransport()
    open_legacy(t, session_id="old")
    listing = post(t, req(1, "tools/list"))
    reopen = reopening(t, listing.stream)
    assert t.send(req(2, "ping")) == []
    assert t.send(line(INITIALIZED)) == []  # a notification: nothing to fail
    failed = errors(respond(t, reopen.stream, status, headers, body))
    assert sorted(failed) == [1, 2]
    for error in failed.values():
        assert error["code"] == TRANSPORT_ERROR
        assert "'old' expired (HTTP 404) and could not be reopened" in error["message"]
        assert why in error["message"]
        assert error["data"] == {"status": 404}
    assert t.reopened == 0


def test_a_reopening_broken_off_fails_what_waits() -> None:
    t = HttpClientTransport()
    open_legacy(t, session_id="old")
    listing = post(t, req(1, "tools/list"))
    reopen = reopening(t, listing.stream)
    error = errors(t.request_failed(reopen.stream, "connection refused"))[1]
    assert "could not be reopened" in error["message"]
    assert "connection refused" in error["message"]


def test_the_get_stream_of_an_expired_session_is_replaced() -> None:
    """With listen=True, the old session's GET stream is dropped when the session is
    reopened, and the new session opens its own."""
    t = HttpClientTransport(listen=True)
    open_legacy(t, session_id="old")
    initialized, listen = requests_of(t.send(line(INITIALIZED)))
    assert listen.method == "GET"
    respond(t, listen.stream, 200, SSE, end=False)
    respond(t, initialized.stream, 202)
    listing = post(t, req(1, "tools/list"))
    aborted, reopen = respond(t, listing.stream, 404)
    assert aborted == AbortRequest(listen.stream, "the session expired")
    assert isinstance(reopen, HttpRequest)
    actions = respond(t, reopen.stream, 200, [*JSON, ("Mcp-Session-Id", "new")], reopen_answer())
    initialized, listen = requests_of(actions)
    assert orjson.loads(initialized.body) == INITIALIZED
    assert (listen.method, hdrs(listen)["mcp-session-id"]) == ("GET", "new")
    respond(t, listen.stream, 200, SSE, end=False)
    (again,) = requests_of(respond(t, initialized.stream, 202))
    assert orjson.loads(again.body)["id"] == 1
    assert hdrs(again)["mcp-session-id"] == "new"


def test_a_404_to_a_notification_reopens_too() -> None:
    t = HttpClientTransport()
    open_legacy(t, session_id="old")
    cancel = {"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}
    note = post(t, line(cancel))
    reopen = reopening(t, note.stream)
    initialized = reopened_as_new(t, reopen)
    (resent,) = requests_of(respond(t, initialized.stream, 202))
    assert orjson.loads(resent.body) == cancel


def answered(t: HttpClientTransport, data: bytes, answer: dict[str, Any]) -> None:
    """POST the session's ``data`` and feed ``answer`` back: the session gets it."""
    request = post(t, data)
    assert lines(respond(t, request.stream, 200, JSON, orjson.dumps(answer))) == [answer]


def error_of(request_id: Any, message: str = "no") -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": -32602, "message": message}}


def problems(actions: Iterable[ClientAction]) -> list[str]:
    return [a.message for a in actions if isinstance(a, TransportProblem)]


def test_a_reopened_session_gets_its_subscriptions_and_logging_level_back() -> None:
    """What the server accepted (subscriptions not undone, the last logging level) is
    restored before anything else goes to the new session, each request answered before
    the next is sent; their answers are the transport's own."""
    t = HttpClientTransport()
    open_legacy(t, session_id="old")
    answered(t, req(1, "resources/subscribe", {"uri": "a://1"}), result(1))
    answered(t, req(2, "resources/subscribe", {"uri": "a://2"}), result(2))
    answered(t, req(3, "resources/subscribe", {"uri": "a://3"}), result(3))
    answered(t, req(4, "resources/unsubscribe", {"uri": "a://2"}), result(4))
    answered(t, req(5, "resources/subscribe", {"uri": "a://4"}), error_of(5))  # refused
    answered(t, req(6, "logging/setLevel", {"level": "debug"}), result(6))
    answered(t, req(7, "logging/setLevel", {"level": "warning"}), result(7))
    listing = post(t, req(8, "tools/list"))
    reopen = reopening(t, listing.stream)
    actions = respond(t, reopen.stream, 200, [*JSON, ("Mcp-Session-Id", "new")], reopen_answer())
    (problem,) = problems(actions)
    assert problem == (
        "the session 'old' expired (HTTP 404) and was reopened as 'new'; restoring the "
        "logging level 'warning', the subscription to 'a://1', the subscription to 'a://3'"
    )
    (initialized,) = requests_of(actions)
    sent: list[dict[str, Any]] = []
    stream = initialized.stream
    for status in (202, 200, 200, 200):
        body = orjson.dumps(result(sent[-1]["id"])) if sent else b""
        actions = respond(t, stream, status, JSON if body else [], body)
        assert lines(actions) == []  # the session sees none of it
        assert problems(actions) == []
        (request,) = requests_of(actions)  # one at a time
        assert hdrs(request)["mcp-session-id"] == "new"
        sent.append(orjson.loads(request.body))
        stream = request.stream
    assert [(m["id"], m["method"], m.get("params")) for m in sent] == [
        ("mcp-sansio-restore-1", "logging/setLevel", {"level": "warning"}),
        ("mcp-sansio-restore-2", "resources/subscribe", {"uri": "a://1"}),
        ("mcp-sansio-restore-3", "resources/subscribe", {"uri": "a://3"}),
        (8, "tools/list", None),
    ]
    answer = result(8, {"tools": []})
    assert lines(respond(t, stream, 200, JSON, orjson.dumps(answer))) == [answer]


def test_what_the_server_did_not_accept_is_not_restored() -> None:
    """A subscription whose request failed, or that the session cancelled, or whose answer
    never came, is not restored: nor is a 2026-07-28 request's (that era has no session)."""
    t = HttpClientTransport()
    open_legacy(t, session_id="old")
    failed = post(t, req(1, "resources/subscribe", {"uri": "a://failed"}))
    assert errors(respond(t, failed.stream, 500))[1]["code"] == TRANSPORT_ERROR
    post(t, req(2, "resources/subscribe", {"uri": "a://cancelled"}))
    cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 2}}
    t.send(line(cancel))
    answered(t, req(3, "logging/setLevel", {"level": "bad", "x": 1}), error_of(3))
    answered(t, modern(4, "logging/setLevel", {"level": "debug"}), result(4))
    answered(t, req(5, "resources/subscribe", {"uri": 5}), result(5))  # not a URI
    listing = post(t, req(6, "tools/list"))
    reopen = reopening(t, listing.stream)
    actions = respond(t, reopen.stream, 200, [*JSON, ("Mcp-Session-Id", "new")], reopen_answer())
    assert "restoring" not in problems(actions)[0]
    (initialized,) = requests_of(actions)
    (again,) = requests_of(respond(t, initialized.stream, 202))
    assert orjson.loads(again.body)["id"] == 6


@pytest.mark.parametrize("how", ["error", "error-with-null-id", "http-500", "broken"])
def test_a_restoration_that_fails_is_a_problem_not_an_answer(how: str) -> None:
    """The new session refuses a restoring request, or its POST fails: a TransportProblem
    says so, the session gets nothing for it, and what waited is sent."""
    t = HttpClientTransport()
    open_legacy(t, session_id="old")
    answered(t, req(1, "resources/subscribe", {"uri": "a://1"}), result(1))
    listing = post(t, req(2, "tools/list"))
    initialized = reopened_as_new(t, reopening(t, listing.stream))
    (restore,) = requests_of(respond(t, initialized.stream, 202))
    assert orjson.loads(restore.body)["id"] == "mcp-sansio-restore-1"
    if how == "error":
        body = orjson.dumps(error_of("mcp-sansio-restore-1", "no such resource"))
        actions = respond(t, restore.stream, 200, JSON, body)
        detail = "no such resource"
    elif how == "error-with-null-id":  # given to what the POST carried: not the session
        actions = respond(t, restore.stream, 400, JSON, NO_VALID_SESSION)
        detail = "No valid session ID provided"
    elif how == "http-500":
        actions = respond(t, restore.stream, 500)
        detail = "HTTP 500"
    else:
        actions = t.request_failed(restore.stream, "connection reset")
        detail = "connection reset"
    assert lines(actions) == []
    (problem,) = problems(actions)
    assert problem.startswith(
        "the reopened session 'new' did not restore the subscription to 'a://1': "
    )
    assert detail in problem
    (again,) = requests_of(actions)
    assert orjson.loads(again.body)["id"] == 2


def test_a_restoring_request_the_new_session_refuses_with_404_is_made_anew() -> None:
    """The new session expires too while restoring (after an answer in it): the session
    is reopened again, and restored again, with new requests; those of before that had not
    gone out yet are dropped."""
    t = HttpClientTransport()
    open_legacy(t, session_id="old")
    answered(t, req(1, "logging/setLevel", {"level": "error"}), result(1))
    answered(t, req(2, "resources/subscribe", {"uri": "a://1"}), result(2))
    answered(t, req(3, "resources/subscribe", {"uri": "a://2"}), result(3))
    listing = post(t, req(4, "tools/list"))
    initialized = reopened_as_new(t, reopening(t, listing.stream))
    (level,) = requests_of(respond(t, initialized.stream, 202))
    body = orjson.dumps(result("mcp-sansio-restore-1"))
    (subscribe,) = requests_of(respond(t, level.stream, 200, JSON, body))
    assert orjson.loads(subscribe.body)["id"] == "mcp-sansio-restore-2"
    # mcp-sansio-restore-3 waits for it; the new session expires instead of answering.
    (reopen,) = requests_of(respond(t, subscribe.stream, 404))
    assert orjson.loads(reopen.body)["method"] == "initialize"
    actions = respond(t, reopen.stream, 200, [*JSON, ("Mcp-Session-Id", "newer")], reopen_answer())
    assert problems(actions)[0].endswith(
        "restoring the logging level 'error', the subscription to 'a://1', "
        "the subscription to 'a://2'"
    )
    (initialized,) = requests_of(actions)
    stream = initialized.stream
    sent: list[Any] = []
    for status in (202, 200, 200, 200):
        body = orjson.dumps(result(sent[-1])) if sent else b""
        (request,) = requests_of(respond(t, stream, status, JSON if body else [], body))
        sent.append(orjson.loads(request.body)["id"])
        stream = request.stream
    assert sent == ["mcp-sansio-restore-4", "mcp-sansio-restore-5", "mcp-sansio-restore-6", 4]
    assert t.reopened == 2


def test_restoring_requests_take_no_id_of_the_session() -> None:
    t = HttpClientTransport()
    open_legacy(t, session_id="old")
    answered(t, req(1, "resources/subscribe", {"uri": "a://1"}), result(1))
    slow = post(t, req("mcp-sansio-restore-1", "tools/list"))
    respond(t, slow.stream, 200, SSE, end=False)  # its answer is still to come
    listing = post(t, req(2, "tools/list"))
    initialized = reopened_as_new(t, reopening(t, listing.stream))
    (restore,) = requests_of(respond(t, initialized.stream, 202))
    assert orjson.loads(restore.body)["id"] == "mcp-sansio-restore-1-"
    answer = result("mcp-sansio-restore-1", {"tools": []})
    event = encode_event(orjson.dumps(answer), id="1")
    assert lines(t.response_data(slow.stream, event)) == [answer]  # the session's own


def test_restoring_requests_waiting_when_a_reopening_fails_get_no_answer() -> None:
    """A reopening that fails answers the session's waiting requests, not the transport's
    own restoring requests (the session never sent them)."""
    t = HttpClientTransport()
    open_legacy(t, session_id="old")
    answered(t, req(1, "resources/subscribe", {"uri": "a://1"}), result(1))
    answered(t, req(2, "resources/subscribe", {"uri": "a://2"}), result(2))
    listing = post(t, req(3, "tools/list"))
    initialized = reopened_as_new(t, reopening(t, listing.stream))
    (first,) = requests_of(respond(t, initialized.stream, 202))
    body = orjson.dumps(result("mcp-sansio-restore-1"))
    (second,) = requests_of(respond(t, first.stream, 200, JSON, body))
    # The second restoring request expires the new session: reopened again, it waits...
    (reopen,) = requests_of(respond(t, second.stream, 404))
    # ...and the reopening fails: only the session's own request gets an error.
    failed = errors(respond(t, reopen.stream, 404))
    assert sorted(failed, key=str) == [3]


#: What servers built on the TypeScript SDK's examples answer to an unknown session id.
NO_VALID_SESSION = orjson.dumps(
    {
        "jsonrpc": "2.0",
        "error": {"code": -32000, "message": "Bad Request: No valid session ID provided"},
        "id": None,
    }
)


def test_a_400_to_the_session_id_is_an_error_by_default() -> None:
    t = HttpClientTransport()
    open_legacy(t, session_id="old")
    listing = post(t, req(1, "tools/list"))
    error = errors(respond(t, listing.stream, 400, JSON, NO_VALID_SESSION))[1]
    assert error["message"] == "Bad Request: No valid session ID provided"
    assert t.reopened == 0


def test_expired_statuses_reopen_on_400_too() -> None:
    """``expired_statuses=(404, 400)``: a 400 to a POST with the session id reopens the
    session (the messages name the status), as a 404 does; a 400 without one does not."""
    t = HttpClientTransport(expired_statuses=(404, 400))
    assert t.expired_statuses == {400, 404}
    open_legacy(t, session_id="old")
    listing = post(t, req(1, "tools/list"))
    (reopen,) = requests_of(respond(t, listing.stream, 400, JSON, NO_VALID_SESSION))
    assert orjson.loads(reopen.body)["method"] == "initialize"
    actions = respond(t, reopen.stream, 200, [*JSON, ("Mcp-Session-Id", "new")], reopen_answer())
    assert problems(actions)[0].startswith("the session 'old' expired (HTTP 400) and was reopened")
    (initialized,) = requests_of(actions)
    (again,) = requests_of(respond(t, initialized.stream, 202))
    assert orjson.loads(again.body)["id"] == 1
    # A failed reopening says 400 too.
    t = HttpClientTransport(expired_statuses=(404, 400))
    open_legacy(t, session_id="old")
    listing = post(t, req(2, "tools/list"))
    (reopen,) = requests_of(respond(t, listing.stream, 400, JSON, NO_VALID_SESSION))
    error = errors(respond(t, reopen.stream, 500))[2]
    assert "'old' expired (HTTP 400) and could not be reopened" in error["message"]
    assert error["data"] == {"status": 400}
    # Without a session id, a 400 is an answer.
    t = HttpClientTransport(expired_statuses=(404, 400))
    open_legacy(t, session_id=None)
    listing = post(t, req(3, "tools/list"))
    error = errors(respond(t, listing.stream, 400, JSON, NO_VALID_SESSION))[3]
    assert error["message"] == "Bad Request: No valid session ID provided"


@pytest.mark.parametrize("statuses", [(200,), (404, 302), (600,), ("404",)])
def test_expired_statuses_are_error_statuses(statuses: tuple[Any, ...]) -> None:
    with pytest.raises(ValueError, match="4xx or 5xx"):
        HttpClientTransport(expired_statuses=statuses)


def test_404_without_a_session() -> None:
    t = HttpClientTransport()
    request = post(t, modern(1, "tools/list"))
    error = errors(respond(t, request.stream, 404))[1]
    assert "HTTP 404" in error["message"]
    assert "expired" not in error["message"]


def test_405() -> None:
    t = HttpClientTransport()
    request = post(t, modern(1, "tools/list"))
    error = errors(respond(t, request.stream, 405, body=b"Method Not Allowed"))[1]
    assert "405" in error["message"]


def test_error_status_on_a_notification_is_a_problem_not_an_answer() -> None:
    t = HttpClientTransport()
    open_legacy(t)
    request = post(t, line({"jsonrpc": "2.0", "method": "notifications/initialized"}))
    (problem,) = respond(t, request.stream, 400, JSON, b'{"error": "no"}')
    assert isinstance(problem, TransportProblem)
    assert "400" in problem.message


def test_connection_refused() -> None:
    t = HttpClientTransport()
    request = post(t, modern(1, "tools/list"))
    actions = t.request_failed(request.stream, "cannot connect to 127.0.0.1:9: refused")
    error = errors(actions)[1]
    assert "refused" in error["message"]
    assert "data" not in error  # no HTTP status
    assert t.open_streams == ()


def test_connection_reset_after_the_head() -> None:
    t = HttpClientTransport()
    request = post(t, modern(1, "tools/list"))
    t.response_started(request.stream, 200, JSON)
    t.response_data(request.stream, b'{"jsonrpc":')
    error = errors(t.request_failed(request.stream, "connection reset"))[1]
    assert "HTTP 200" in error["message"]
    assert "connection reset" in error["message"]


@pytest.mark.parametrize("body", [b"not json", b"[]", b'"text"', line(result(99))])
def test_a_json_body_that_does_not_answer(body: bytes) -> None:
    t = HttpClientTransport()
    request = post(t, modern(1, "tools/list"))
    actions = respond(t, request.stream, 200, JSON, body)
    assert errors(actions)[1]["code"] == TRANSPORT_ERROR


def test_202_for_a_request() -> None:
    t = HttpClientTransport()
    request = post(t, modern(1, "tools/list"))
    error = errors(respond(t, request.stream, 202))[1]
    assert "HTTP 202" in error["message"]


def test_an_unexpected_content_type() -> None:
    t = HttpClientTransport()
    request = post(t, modern(1, "tools/list"))
    actions = respond(t, request.stream, 200, [("Content-Type", "text/plain")], b"hello")
    assert "HTTP 200" in errors(actions)[1]["message"]


def test_oversized_json_body_is_cut_off() -> None:
    t = HttpClientTransport(max_body_size=1000)
    request = post(t, modern(1, "tools/list"))
    t.response_started(request.stream, 200, JSON)
    assert t.response_data(request.stream, b" " * 600) == []
    actions = t.response_data(request.stream, b" " * 600)
    assert "larger than 1000 bytes" in errors(actions)[1]["message"]
    assert [a.stream for a in actions if isinstance(a, AbortRequest)] == [request.stream]
    assert t.open_streams == ()
    assert t.response_data(request.stream, b"more") == []  # nothing more is taken


def test_oversized_event_is_cut_off() -> None:
    t = HttpClientTransport(max_body_size=100)
    request = post(t, modern(1, "tools/list"))
    t.response_started(request.stream, 200, SSE)
    actions = t.response_data(request.stream, b"data: " + b"x" * 200)  # no end of line yet
    assert "larger than 100 bytes" in errors(actions)[1]["message"]
    assert any(isinstance(a, AbortRequest) for a in actions)


def test_oversized_error_body_is_not_read() -> None:
    t = HttpClientTransport(max_body_size=100)
    request = post(t, modern(1, "tools/list"))
    error = b'{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"' + b"x" * 200 + b'"}}'
    actions = respond(t, request.stream, 500, JSON, [error[:60], error[60:]])
    assert "oversized" in errors(actions)[1]["message"]


def test_sse_stream_cut_mid_event_without_an_event_id() -> None:
    t = HttpClientTransport()
    request = post(t, modern(1, "tools/call", {"name": "x"}))
    t.response_started(request.stream, 200, SSE)
    assert t.response_data(request.stream, b'data: {"jsonrpc":"2.0","id":1,"res') == []
    actions = t.response_ended(request.stream)
    error = errors(actions)[1]
    assert "ended the stream" in error["message"]
    assert "in the middle of an event" in error["message"]
    assert not [a for a in actions if isinstance(a, HttpRequest)]  # 2026: no resumption


def test_sse_stream_broken_mid_event() -> None:
    t = HttpClientTransport()
    request = post(t, modern(1, "tools/call", {"name": "x"}))
    t.response_started(request.stream, 200, SSE)
    t.response_data(request.stream, b"data: {")
    error = errors(t.request_failed(request.stream, "connection reset"))[1]
    assert "the stream broke (connection reset)" in error["message"]


def test_malformed_event_then_end() -> None:
    t = HttpClientTransport()
    request = post(t, modern(1, "tools/list"))
    actions = respond(t, request.stream, 200, SSE, encode_event(b"{not json"))
    assert "malformed" in errors(actions)[1]["message"]


def test_2026_stream_with_an_event_id_is_not_resumed() -> None:
    t = HttpClientTransport()
    request = post(t, modern(1, "tools/list"))
    actions = respond(t, request.stream, 200, SSE, encode_event(b"", id="p1"))
    assert list(errors(actions)) == [1]
    assert not [a for a in actions if isinstance(a, HttpRequest)]


# ---------------------------------------------------------------------- resumption


def test_resumption_with_last_event_id_after_retry() -> None:
    t = HttpClientTransport()
    open_legacy(t, session_id="sess")
    call = post(t, req(1, "tools/call", {"name": "slow"}))
    actions = respond(t, call.stream, 200, SSE, encode_event(b"", id="event-1", retry=500))
    resume = only_request(actions)
    assert not lines(actions)
    assert (resume.method, resume.target, resume.body, resume.delay) == ("GET", "/mcp", b"", 0.5)
    h = hdrs(resume)
    assert h["last-event-id"] == "event-1"
    assert h["accept"] == "text/event-stream"
    assert h["mcp-session-id"] == "sess"
    assert h["mcp-protocol-version"] == "2025-11-25"
    assert "content-type" not in h
    # The resumed stream: a priming event, then the answer; the stream stays open, and
    # the transport drops it once it owes nothing.
    t.response_started(resume.stream, 200, SSE)
    answer = result(1, {"content": []})
    body = encode_event(b"", id="event-2", retry=500) + encode_event(orjson.dumps(answer), id="e3")
    actions = t.response_data(resume.stream, body)
    assert lines(actions) == [answer]
    assert [a.stream for a in actions if isinstance(a, AbortRequest)] == [resume.stream]
    assert t.open_streams == ()


def test_resumption_keeps_going_and_is_bounded() -> None:
    t = HttpClientTransport(max_reconnects=3)
    open_legacy(t)
    call = post(t, req(1, "tools/call", {"name": "slow"}))
    # No retry given: the default delay.
    request = only_request(respond(t, call.stream, 200, SSE, encode_event(b"", id="a")))
    assert request.delay == 1.0
    seen = [hdrs(request)["last-event-id"]]
    for i in range(2):
        # A stream with no new id: the old one is used again; one with an id: that one.
        body = encode_event(b"", id=f"b{i}") if i else b""
        request = only_request(respond(t, request.stream, 200, SSE, body))
        seen.append(hdrs(request)["last-event-id"])
    assert seen == ["a", "a", "b1"]  # three resumptions
    actions = respond(t, request.stream, 200, SSE, b"")
    error = errors(actions)[1]
    assert "3 resumptions in a row brought nothing" in error["message"]
    assert not [a for a in actions if isinstance(a, HttpRequest)]


def test_progress_resets_the_resumption_bound() -> None:
    t = HttpClientTransport(max_reconnects=1)
    open_legacy(t)
    call = post(t, req(1, "tools/call", {"name": "slow"}))
    request = only_request(respond(t, call.stream, 200, SSE, encode_event(b"", id="a")))
    note = {"jsonrpc": "2.0", "method": "notifications/progress", "params": {}}
    for i in range(4):  # each stream brings a message: it may go on
        actions = respond(t, request.stream, 200, SSE, encode_event(orjson.dumps(note), id=f"n{i}"))
        assert lines(actions) == [note]
        request = only_request(actions)
    answer = result(1)
    actions = respond(t, request.stream, 200, SSE, encode_event(orjson.dumps(answer)))
    assert lines(actions) == [answer]


def test_a_resumed_stream_refused() -> None:
    t = HttpClientTransport()
    open_legacy(t)
    call = post(t, req(1, "tools/call", {"name": "slow"}))
    request = only_request(respond(t, call.stream, 200, SSE, encode_event(b"", id="a")))
    error = errors(respond(t, request.stream, 405))[1]
    assert "does not allow GET" in error["message"]


def test_a_broken_stream_with_an_event_id_is_resumed() -> None:
    t = HttpClientTransport()
    open_legacy(t)
    call = post(t, req(1, "tools/call", {"name": "slow"}))
    t.response_started(call.stream, 200, SSE)
    t.response_data(call.stream, encode_event(b"", id="x", retry=0) + b"data: {")
    resume = only_request(t.request_failed(call.stream, "connection reset"))
    assert hdrs(resume)["last-event-id"] == "x"
    assert resume.delay == 0


def test_an_event_id_unfit_for_a_header_is_not_sent_back() -> None:
    t = HttpClientTransport()
    open_legacy(t)
    call = post(t, req(1, "tools/call", {"name": "slow"}))
    actions = respond(t, call.stream, 200, SSE, encode_event(b"", id="caf\u00e9"))
    assert "before the answer" in errors(actions)[1]["message"]


def test_answer_on_another_stream_ends_the_wait() -> None:
    # The answer may come on a different stream (the listen stream, or a resumption).
    t = HttpClientTransport(listen=True)
    open_legacy(t)
    listen = post_listen(t)
    t.response_started(listen.stream, 200, SSE)
    call = post(t, req(1, "ping"))
    assert lines(t.response_data(listen.stream, encode_event(orjson.dumps(result(1))))) == [
        result(1)
    ]
    assert respond(t, call.stream, 200, SSE, b"") == []  # owes nothing more


# ---------------------------------------------------------------------- cancellation


def test_cancel_in_the_initialize_era_posts_and_drops_the_stream() -> None:
    t = HttpClientTransport()
    open_legacy(t)
    call = post(t, req(1, "tools/call", {"name": "slow"}))
    t.response_started(call.stream, 200, SSE)
    cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}
    actions = t.send(line(cancel))
    (notification,) = [a for a in actions if isinstance(a, HttpRequest)]
    assert notification.body == line(cancel)[:-1]
    assert hdrs(notification)["mcp-session-id"] == "s-1"
    assert [a.stream for a in actions if isinstance(a, AbortRequest)] == [call.stream]
    # A late answer to the cancelled request: nothing (its stream is gone).
    assert t.response_data(call.stream, encode_event(orjson.dumps(result(1)))) == []


def test_cancel_in_2026_closes_the_stream_only() -> None:
    t = HttpClientTransport()
    call = post(t, modern(1, "tools/call", {"name": "slow"}))
    cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}
    actions = t.send(line(cancel))
    assert actions == [AbortRequest(call.stream, "the request was cancelled")]
    assert t.open_streams == ()


def test_cancel_of_an_unknown_request_is_just_posted() -> None:
    t = HttpClientTransport()
    open_legacy(t)
    cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 42}}
    post(t, line(cancel))


def test_cancel_of_a_finished_2026_request_is_dropped() -> None:
    # The answer arrived just before the session gave up: nothing to close, nothing to send.
    t = HttpClientTransport()
    call = post(t, modern(1, "tools/call", {"name": "x"}))
    respond(t, call.stream, 200, JSON, line(result(1)))
    cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}
    assert t.send(line(cancel)) == []


def test_a_batch_with_listen_on() -> None:
    t = HttpClientTransport(listen=True)
    open_legacy(t, "2025-03-26")
    batch = [{"jsonrpc": "2.0", "method": "notifications/initialized"}]
    post(t, line(batch))  # a batch opens no listen stream (and does not trip on it)


# ---------------------------------------------------------------------- listen, close


def post_listen(t: HttpClientTransport) -> HttpRequest:
    """Send ``notifications/initialized`` (answered 202): the GET stream opens with it."""
    actions = t.send(line({"jsonrpc": "2.0", "method": "notifications/initialized"}))
    requests = [a for a in actions if isinstance(a, HttpRequest)]
    assert [r.method for r in requests] == ["POST", "GET"]
    assert respond(t, requests[0].stream, 202) == []
    return requests[1]


def test_with_listen_what_follows_initialized_waits_for_the_get_stream_too() -> None:
    t = HttpClientTransport(listen=True)
    open_legacy(t)
    actions = t.send(line({"jsonrpc": "2.0", "method": "notifications/initialized"}))
    initialized, listen = [a for a in actions if isinstance(a, HttpRequest)]
    assert t.send(req(1, "tools/call", {"name": "x"})) == []
    assert respond(t, initialized.stream, 202) == []  # the GET stream is not up yet
    released = t.response_started(listen.stream, 200, [(b"content-type", b"text/event-stream")])
    assert [orjson.loads(a.body)["id"] for a in released if isinstance(a, HttpRequest)] == [1]


def test_listen_stream_opens_after_initialized_and_reconnects() -> None:
    t = HttpClientTransport(listen=True, default_retry_ms=250)
    open_legacy(t)
    listen = post_listen(t)
    assert hdrs(listen)["accept"] == "text/event-stream"
    assert hdrs(listen)["mcp-session-id"] == "s-1"
    assert "last-event-id" not in hdrs(listen)
    ask = {"jsonrpc": "2.0", "id": 5, "method": "roots/list"}
    t.response_started(listen.stream, 200, SSE)
    assert lines(t.response_data(listen.stream, encode_event(orjson.dumps(ask), id="L1"))) == [ask]
    again = only_request(t.response_ended(listen.stream))
    assert (again.method, again.delay) == ("GET", 0.25)
    assert hdrs(again)["last-event-id"] == "L1"


def test_listen_stream_refused_with_405_is_quiet() -> None:
    t = HttpClientTransport(listen=True)
    open_legacy(t)
    listen = post_listen(t)
    assert respond(t, listen.stream, 405) == []
    assert t.open_streams == ()


def test_listen_stream_gives_up_after_empty_reconnections() -> None:
    t = HttpClientTransport(listen=True, max_reconnects=2)
    open_legacy(t)
    request = post_listen(t)
    for _ in range(2):
        request = only_request(respond(t, request.stream, 200, SSE, b""))
    (problem,) = respond(t, request.stream, 200, SSE, b"")
    assert isinstance(problem, TransportProblem)


def test_no_listen_stream_by_default() -> None:
    t = HttpClientTransport()
    open_legacy(t)
    only_request(t.send(line({"jsonrpc": "2.0", "method": "notifications/initialized"})))


def test_close_aborts_and_deletes_the_session() -> None:
    t = HttpClientTransport()
    open_legacy(t, session_id="sess")
    call = post(t, req(1, "tools/call", {"name": "slow"}))
    actions = t.close()
    assert actions[0] == AbortRequest(call.stream, "the client is closing")
    delete = only_request(actions)
    assert delete.method == "DELETE"
    assert hdrs(delete)["mcp-session-id"] == "sess"
    assert respond(t, delete.stream, 405) == []  # any answer is fine
    assert t.send(req(2, "ping")) == []
    assert t.close() == []


def test_close_without_a_session_sends_nothing() -> None:
    t = HttpClientTransport()
    post(t, modern(1, "tools/list"))
    actions = t.close()
    assert [type(a) for a in actions] == [AbortRequest]


# ---------------------------------------------------------------------- with a session


def for_session(actions: Iterable[ClientAction]) -> bytes:
    return b"".join(a.data for a in actions if isinstance(a, ToSession))


def drive(session: ClientSession, t: HttpClientTransport, actions: list[Any]) -> list[HttpRequest]:
    """Write the session's Sends into the transport; its requests."""
    data = b"".join(a.data for a in actions if isinstance(a, Send))
    return [a for a in t.send(data) if isinstance(a, HttpRequest)] if data else []


def test_session_probe_falls_back_on_a_legacy_server_and_calls() -> None:
    session = ClientSession()
    t = HttpClientTransport()
    (probe,) = drive(session, t, session.open(0.0))
    assert hdrs(probe)["mcp-method"] == "server/discover"
    # A legacy server rejects the 2026 version header with an id-less JSON-RPC error.
    body = b'{"jsonrpc":"2.0","error":{"code":-32000,"message":"Unsupported version"},"id":null}'
    actions = session.receive_data(for_session(respond(t, probe.stream, 400, JSON, body)), 0.1)
    (initialize,) = drive(session, t, actions)
    assert orjson.loads(initialize.body)["method"] == "initialize"
    answer = result(
        orjson.loads(initialize.body)["id"],
        {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}}, "serverInfo": {}},
    )
    delivered = respond(
        t,
        initialize.stream,
        200,
        [*SSE, ("Mcp-Session-Id", "z")],
        encode_event(orjson.dumps(answer)),
    )
    actions = session.receive_data(for_session(delivered), 0.2)
    assert any(isinstance(a, Opened) for a in actions)
    (initialized,) = drive(session, t, actions)
    assert hdrs(initialized)["mcp-session-id"] == "z"
    assert respond(t, initialized.stream, 202) == []
    call, data = session.call("tools/call", {"name": "echo", "arguments": {}}, now=0.3)
    (request,) = [a for a in t.send(data) if isinstance(a, HttpRequest)]
    error_actions = respond(t, request.stream, 503, body=b"busy")
    finished = session.receive_data(for_session(error_actions), 0.4)
    assert [a.call for a in finished if isinstance(a, CallFinished)] == [call]
    assert isinstance(call.error, McpError)
    assert "HTTP 503" in call.error.message


# ---------------------------------------------------------------------- h11 glue


def h11_response(*parts: h11.Event) -> bytes:
    conn = h11.Connection(h11.SERVER)
    conn.receive_data(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
    conn.next_event()
    conn.next_event()
    return b"".join(conn.send(p) or b"" for p in parts)


def test_h11_exchange_request_bytes() -> None:
    t = HttpClientTransport()
    request = post(t, modern(1, "tools/list"))
    exchange = H11Exchange(t, request, "example.org:8080")
    data = exchange.start()
    server = h11.Connection(h11.SERVER)
    server.receive_data(data)
    head = server.next_event()
    assert isinstance(head, h11.Request)
    assert head.method == b"POST"
    assert head.target == b"/mcp"
    got = dict(head.headers)
    assert got[b"host"] == b"example.org:8080"
    assert got[b"content-length"] == str(len(request.body)).encode()
    assert got[b"mcp-method"] == b"tools/list"
    body = server.next_event()
    assert isinstance(body, h11.Data)
    assert body.data == request.body
    assert isinstance(server.next_event(), h11.EndOfMessage)


def test_h11_exchange_chunked_sse_and_reuse() -> None:
    t = HttpClientTransport()
    request = post(t, modern(1, "tools/list"))
    exchange = H11Exchange(t, request, "x")
    exchange.start()
    answer = result(1)
    raw = h11_response(
        h11.Response(
            status_code=200,
            headers=[("Content-Type", "text/event-stream"), ("Transfer-Encoding", "chunked")],
        ),
        h11.Data(data=encode_event(b"", id="p")),
        h11.Data(data=encode_event(orjson.dumps(answer))),
        h11.EndOfMessage(),
    )
    actions: list[ClientAction] = []
    for i in range(0, len(raw), 7):
        actions += exchange.receive_data(raw[i : i + 7])
    assert lines(actions) == [answer]
    assert exchange.finished
    assert exchange.reusable
    conn = exchange.recycle()
    second = H11Exchange(t, post(t, modern(2, "ping")), "x", conn)
    assert second.reused
    assert second.start().startswith(b"POST /mcp HTTP/1.1\r\n")


def test_h11_exchange_connection_close_is_not_reused() -> None:
    t = HttpClientTransport()
    exchange = H11Exchange(t, post(t, modern(1, "ping")), "x")
    exchange.start()
    raw = h11_response(
        h11.Response(
            status_code=200,
            headers=[
                ("Content-Type", "application/json"),
                ("Connection", "close"),
                ("Content-Length", "36"),
            ],
        ),
        h11.Data(data=orjson.dumps(result(1)).ljust(36)),
        h11.EndOfMessage(),
    )
    assert lines(exchange.receive_data(raw)) == [result(1)]
    assert exchange.finished
    assert not exchange.reusable


def test_h11_exchange_malformed_response() -> None:
    t = HttpClientTransport()
    exchange = H11Exchange(t, post(t, modern(1, "ping")), "x")
    exchange.start()
    error = errors(exchange.receive_data(b"NOT HTTP AT ALL\r\n\r\n"))[1]
    assert "malformed HTTP response" in error["message"]
    assert exchange.finished
    assert not exchange.reusable


def test_h11_exchange_eof_mid_body() -> None:
    t = HttpClientTransport()
    exchange = H11Exchange(t, post(t, modern(1, "ping")), "x")
    exchange.start()
    head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"
    assert exchange.receive_data(head) == []
    error = errors(exchange.receive_data(b""))[1]
    assert error["data"] == {"status": 200}


def test_h11_exchange_stale_connection() -> None:
    t = HttpClientTransport()
    first = H11Exchange(t, post(t, modern(1, "ping")), "x")
    first.start()
    raw = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 36\r\n\r\n"
    first.receive_data(raw + orjson.dumps(result(1)).ljust(36))
    request = post(t, modern(2, "ping"))
    second = H11Exchange(t, request, "x", first.recycle())
    second.start()
    assert second.receive_data(b"") == []  # closed while idle: nothing for the session
    assert second.stale
    assert second.finished
    assert not second.reusable
    assert request.stream in t.open_streams  # still owed: the binding retries it


def test_connection_pool() -> None:
    pool: ConnectionPool[str] = ConnectionPool(max_idle=2)
    assert pool.get("k") is None
    assert pool.put("k", "a") is None
    assert pool.put("k", "b") is None
    assert pool.put("k", "c") == "a"  # the oldest goes
    assert len(pool) == 2
    assert pool.get("k") == "c"
    assert pool.drain() == ["b"]
    assert len(pool) == 0


def test_host_header_and_url() -> None:
    assert host_header("example.org", 80) == "example.org"
    assert host_header("example.org", 8080) == "example.org:8080"
    assert host_header("::1", 8000) == "[::1]:8000"
    endpoint = parse_url("http://[::1]:8000/a/b?c=d")
    assert (endpoint.host, endpoint.port, endpoint.target) == ("::1", 8000, "/a/b?c=d")
    assert parse_url("https://h").port == 443
    assert parse_url("http://h").target == "/"
    for bad in ("ftp://h/x", "http:///x"):
        with pytest.raises(ValueError, match="not an http"):
            parse_url(bad)
    with pytest.raises(ValueError, match="bad port"):
        parse_url("http://h:99999/")


# ---------------------------------------------------------------------- asyncio binding


def run(main: Callable[[], Awaitable[T]], timeout: float = 20.0) -> T:
    async def bounded() -> T:
        return await asyncio.wait_for(main(), timeout)

    return asyncio.run(bounded())


class Exchange:
    """A request the test server received."""

    def __init__(self, method: str, target: str, headers: dict[str, str], body: bytes) -> None:
        self.method = method
        self.target = target
        self.headers = headers
        self.body = body
        self.message: Any = orjson.loads(body) if body else None


Reply = tuple[int, list[tuple[str, str]], list[bytes | float], bool]
Handler = Callable[[Exchange], Awaitable[Reply]]


class MiniServer:
    """An HTTP/1.1 server on loopback, on h11: each request goes to ``handler``, which returns
    ``(status, headers, chunks, keep)``; a chunk that is a float is a pause (seconds), and
    ``keep=False`` cuts the connection without ending the response."""

    def __init__(self, handler: Handler) -> None:
        self.handler = handler
        self.seen: list[Exchange] = []
        self.connections = 0
        self.port = 0
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[MiniServer]:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        try:
            yield self
        finally:
            self._server.close()
            for task in self._tasks:
                task.cancel()
            await asyncio.gather(*self._tasks, return_exceptions=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        self.connections += 1
        conn = h11.Connection(h11.SERVER)
        try:
            while True:
                event = conn.next_event()
                if event is h11.NEED_DATA:
                    data = await reader.read(65536)
                    conn.receive_data(data)
                    if not data:
                        return
                    continue
                if isinstance(event, h11.ConnectionClosed) or event is h11.PAUSED:
                    return
                assert isinstance(event, h11.Request)
                body = b""
                while True:
                    part = conn.next_event()
                    if part is h11.NEED_DATA:
                        conn.receive_data(await reader.read(65536))
                    elif isinstance(part, h11.Data):
                        body += part.data
                    else:
                        break
                headers = {k.decode().lower(): v.decode() for k, v in event.headers}
                exchange = Exchange(event.method.decode(), event.target.decode(), headers, body)
                self.seen.append(exchange)
                status, reply_headers, chunks, keep = await self.handler(exchange)
                framed = [*reply_headers]
                if not any(k.lower() == "content-length" for k, _ in framed):
                    framed.append(("Transfer-Encoding", "chunked"))
                writer.write(conn.send(h11.Response(status_code=status, headers=framed)) or b"")
                for chunk in chunks:
                    if isinstance(chunk, float):
                        await writer.drain()
                        await asyncio.sleep(chunk)
                    else:
                        writer.write(conn.send(h11.Data(data=chunk)) or b"")
                if not keep:
                    writer.close()
                    return
                writer.write(conn.send(h11.EndOfMessage()) or b"")
                await writer.drain()
                if conn.our_state is not h11.DONE or conn.their_state is not h11.DONE:
                    writer.close()
                    return
                conn.start_next_cycle()
        except (ConnectionError, h11.ProtocolError, asyncio.CancelledError):
            pass
        finally:
            writer.close()
            self._tasks.discard(task)


def json_reply(message: Any, headers: Sequence[tuple[str, str]] = ()) -> Reply:
    body = orjson.dumps(message)
    return 200, [*JSON, ("Content-Length", str(len(body))), *headers], [body], True


TOOLS = {"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]}


async def mcp_handler(exchange: Exchange) -> Reply:
    """A small MCP server of both eras: JSON answers, a session id, 202 for the rest."""
    if exchange.method == "DELETE":
        return 200, [("Content-Length", "0")], [], True
    if exchange.method != "POST":
        return 405, [("Content-Length", "0")], [], True
    message = exchange.message
    method = message.get("method")
    if "id" not in message or method is None:
        return 202, [("Content-Length", "0")], [], True
    request_id = message["id"]
    modern_call = "_meta" in (message.get("params") or {})
    extra: dict[str, Any] = {"resultType": "complete"} if modern_call else {}
    value: dict[str, Any]
    if method == "initialize":
        value = {
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "t", "version": "1"},
        }
        return json_reply(result(request_id, value), [("Mcp-Session-Id", "sid-1")])
    if method == "server/discover":
        if exchange.headers.get("mcp-protocol-version") != V2026:
            raise AssertionError("no version header")
        value = {
            "supportedVersions": [V2026],
            "capabilities": {"tools": {}},
            "ttlMs": 0,
            "cacheScope": "private",
            **extra,
        }
        return json_reply(result(request_id, value))
    if method == "tools/list":
        return json_reply(
            result(
                request_id,
                {
                    **TOOLS,
                    **extra,
                    **({"ttlMs": 0, "cacheScope": "private"} if modern_call else {}),
                },
            )
        )
    if method == "tools/call":
        text = message["params"]["arguments"].get("text", "")
        answer = result(request_id, {"content": [{"type": "text", "text": text}], **extra})
        if text == "sse":  # answer on an event stream instead
            return (
                200,
                SSE,
                [encode_event(b"", id="1"), encode_event(orjson.dumps(answer), id="2")],
                True,
            )
        return json_reply(answer)
    return json_reply(result(request_id, extra))


@pytest.mark.parametrize(
    "versions", [["2025-11-25"], [V2026], None], ids=["legacy", "2026", "both"]
)
def test_asyncio_client_calls_over_keep_alive_connections(versions: list[str] | None) -> None:
    async def main() -> None:
        async with MiniServer(mcp_handler).running() as server:
            async with Client.connect_http(server.url, versions=versions) as client:
                tools = await client.list_tools()
                assert tools["tools"][0]["name"] == "echo"
                for i in range(20):
                    answer = await client.call_tool("echo", {"text": f"t{i}"})
                    assert answer["content"][0]["text"] == f"t{i}"
                answer = await client.call_tool("echo", {"text": "sse"})
                assert answer["content"][0]["text"] == "sse"
                # The sequential calls reused connections (the probe's may have closed).
                assert server.connections <= 3, server.connections
                many = await asyncio.gather(
                    *(client.call_tool("echo", {"text": str(i)}) for i in range(30))
                )
                assert [m["content"][0]["text"] for m in many] == [str(i) for i in range(30)]
            posts = [e for e in server.seen if e.method == "POST"]
            assert len(posts) >= 23
            if versions == ["2025-11-25"]:
                assert server.seen[-1].method == "DELETE"
                assert server.seen[-1].headers["mcp-session-id"] == "sid-1"
                assert all(e.headers.get("mcp-session-id") == "sid-1" for e in posts[1:])
            else:
                assert all("mcp-method" in e.headers for e in posts)
                assert not [e for e in server.seen if e.method == "DELETE"]

    run(main)


def test_asyncio_client_resumes_a_closed_stream() -> None:
    async def handler(exchange: Exchange) -> Reply:
        message = exchange.message
        if exchange.method == "GET":
            assert exchange.headers["last-event-id"] == "ev-1"
            opened_at.append(asyncio.get_running_loop().time())
            answer = result(pending["id"], {"content": [{"type": "text", "text": "resumed"}]})
            # Answer, then keep the stream open: the client drops it.
            return 200, SSE, [encode_event(orjson.dumps(answer), id="ev-2"), 5.0], True
        if message and message.get("method") == "tools/call":
            pending["id"] = message["id"]
            closed_at.append(asyncio.get_running_loop().time())
            return 200, SSE, [encode_event(b"", id="ev-1", retry=200)], True  # ends at once
        return await mcp_handler(exchange)

    pending: dict[str, Any] = {}
    closed_at: list[float] = []
    opened_at: list[float] = []

    async def main() -> None:
        async with (
            MiniServer(handler).running() as server,
            Client.connect_http(server.url, versions=["2025-11-25"]) as client,
        ):
            answer = await client.call_tool("echo", {"text": "x"})
            assert answer["content"][0]["text"] == "resumed"
            get = next(e for e in server.seen if e.method == "GET")
            assert get.headers["mcp-session-id"] == "sid-1"
            # The client waited the stream's retry (200 ms) before resuming.
            assert opened_at[0] - closed_at[0] >= 0.19

    run(main)


def test_asyncio_client_http_errors_become_mcp_errors() -> None:
    async def handler(exchange: Exchange) -> Reply:
        message = exchange.message
        if message and message.get("method") == "tools/call":
            text = message["params"]["arguments"]["text"]
            if text == "500":
                return 500, [("Content-Length", "4")], [b"oops"], True
            if text == "cut":
                return 200, SSE, [b'data: {"jsonrpc"'], False  # connection cut mid-event
            if text == "404":
                return 404, [("Content-Length", "0")], [], True
        return await mcp_handler(exchange)

    async def main() -> None:
        async with (
            MiniServer(handler).running() as server,
            Client.connect_http(server.url, versions=["2025-11-25"]) as client,
        ):
            with pytest.raises(McpError, match="HTTP 500") as info:
                await client.call_tool("echo", {"text": "500"})
            assert info.value.data == {"status": 500}
            with pytest.raises(McpError, match="stream broke"):
                await client.call_tool("echo", {"text": "cut"})
            with pytest.raises(McpError, match="expired"):
                await client.call_tool("echo", {"text": "404"})
            # The client goes on after failures.
            answer = await client.call_tool("echo", {"text": "fine"})
            assert answer["content"][0]["text"] == "fine"

    run(main)


def test_asyncio_client_cannot_connect() -> None:
    async def main() -> None:
        async with MiniServer(mcp_handler).running() as server:
            url = server.url
        # The server is gone: both the probe and the fallback fail to connect.
        with pytest.raises(McpError, match="cannot connect"):
            await Client.connect_http(url, timeout=5).open()

    run(main)


def test_asyncio_client_survives_the_server_closing_idle_connections() -> None:
    async def main() -> None:
        async with (
            MiniServer(mcp_handler).running() as server,
            Client.connect_http(server.url, versions=[V2026]) as client,
        ):
            await client.call_tool("echo", {"text": "a"})
            # Close the server's side of every idle connection, then call again.
            for task in list(server._tasks):
                task.cancel()
            await asyncio.sleep(0.05)
            answer = await client.call_tool("echo", {"text": "b"})
            assert answer["content"][0]["text"] == "b"

    run(main)


def test_asyncio_reader_returns_eof_after_close() -> None:
    async def main() -> None:
        streams = HttpStreams("http://127.0.0.1:9/mcp")
        reading = asyncio.ensure_future(streams.read(100))
        await asyncio.sleep(0)
        streams.close()
        assert await reading == b""
        await streams.wait_closed()
        streams.write(b"ignored\n")
        assert await streams.read() == b""

    run(main)


def test_asyncio_client_timeout_cancels_the_exchange() -> None:
    async def handler(exchange: Exchange) -> Reply:
        message = exchange.message
        if message and message.get("method") == "tools/call":
            return 200, SSE, [encode_event(b"", id="p"), 30.0], True  # never answers
        return await mcp_handler(exchange)

    async def main(versions: list[str]) -> None:
        async with (
            MiniServer(handler).running() as server,
            Client.connect_http(server.url, versions=versions) as client,
        ):
            streams = client._writer
            assert isinstance(streams, HttpStreams)
            with pytest.raises(McpError, match="timed out"):
                await client.call_tool("echo", {"text": "x"}, timeout=0.2)
            await asyncio.sleep(0.05)
            assert streams.transport.open_streams == ()
            assert not streams._tasks  # the exchange was stopped, its connection closed
            cancels = [
                e.message
                for e in server.seen
                if e.message and e.message.get("method") == "notifications/cancelled"
            ]
            # The initialize era posts the cancel; 2026-07-28 only closes the stream.
            assert len(cancels) == (1 if versions == ["2025-11-25"] else 0)

    run(lambda: main(["2025-11-25"]))
    run(lambda: main([V2026]))


def test_asyncio_reader_honours_n() -> None:
    async def main() -> None:
        streams = HttpStreams("https://example.invalid/mcp")
        assert streams._ssl is not None  # TLS for https
        streams._run([ToSession(b"abcdef\n")])
        assert await streams.read(4) == b"abcd"
        assert await streams.read() == b"ef\n"
        streams.close()
        await streams.wait_closed()

    run(main)


def test_transport_bounds_are_checked() -> None:
    with pytest.raises(ValueError, match="max_body_size"):
        HttpClientTransport(max_body_size=0)
    with pytest.raises(ValueError, match="negative"):
        HttpClientTransport(max_reconnects=-1)


def test_an_oversized_unfinished_line_from_the_session_is_dropped() -> None:
    t = HttpClientTransport(max_body_size=10)
    (problem,) = t.send(b"x" * 11)
    assert isinstance(problem, TransportProblem)
    post(t, modern(1, "ping"))  # nothing of the dropped bytes is left


@pytest.mark.parametrize("how", ["not-sse", "failed", "500", "oversized"], ids=lambda how: str(how))
def test_listen_stream_failures_are_problems(how: str) -> None:
    t = HttpClientTransport(listen=True, max_body_size=200)
    open_legacy(t)
    listen = post_listen(t)
    if how == "not-sse":
        actions = respond(t, listen.stream, 200, JSON, b"{}")
    elif how == "failed":
        actions = t.request_failed(listen.stream, "reset")
    elif how == "500":
        actions = respond(t, listen.stream, 500, body=b"no")
    else:
        t.response_started(listen.stream, 200, SSE)
        actions = t.response_data(listen.stream, b"data: " + b"x" * 300)
        assert [a.stream for a in actions if isinstance(a, AbortRequest)] == [listen.stream]
    problems = [a for a in actions if isinstance(a, TransportProblem)]
    assert len(problems) == 1
    assert "GET stream" in problems[0].message
    assert not lines(actions)
    assert listen.stream not in t.open_streams


def test_batch_answer_with_an_id_less_error() -> None:
    t = HttpClientTransport()
    open_legacy(t, "2025-03-26")
    request = post(t, line([{"jsonrpc": "2.0", "id": 1, "method": "ping"}]))
    error = {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "bad"}}
    actions = respond(t, request.stream, 200, JSON, orjson.dumps([error]))
    assert lines(actions) == [{**error, "id": 1}]


def test_an_id_less_error_where_nothing_is_owed_is_passed_on() -> None:
    t = HttpClientTransport()
    open_legacy(t)
    request = post(t, line({"jsonrpc": "2.0", "method": "notifications/initialized"}))
    error = {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "parse"}}
    assert lines(respond(t, request.stream, 200, SSE, encode_event(orjson.dumps(error)))) == [error]


def test_remembered_tools_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    from mcp_sansio.http import _client_tools

    monkeypatch.setattr(_client_tools, "_MAX_TOOLS", 3)
    t = HttpClientTransport()
    learn(t, [{"name": f"t{i}", "inputSchema": {}} for i in range(3)])
    assert t.tool_headers("t0") == {}
    learn(t, [INVALID_TOOLS[0]])  # past the bound: the old ones are forgotten
    assert t.tool_headers(INVALID_TOOLS[0]["name"]) is None
    assert len(t._tools.known) == 1


def test_h11_exchange_fail_after_the_end_is_nothing() -> None:
    t = HttpClientTransport()
    exchange = H11Exchange(t, post(t, modern(1, "ping")), "x")
    exchange.start()
    raw = b"HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n"
    assert errors(exchange.receive_data(raw))  # a 202 for a request: an error
    assert exchange.fail("late") == []
    assert exchange.receive_data(b"more") == []
