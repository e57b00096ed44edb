"""What a peer grows in the Streamable HTTP server and client is bounded in bytes, and what
each message costs does not grow with what was remembered (issue 16, classes 1 and 2). Each
test says what it found before the fix, with the figure before and after.

Memory is measured with tracemalloc (what is still held after a flood) or by counting what
is kept. Time is not measured but counted: the tables a message could walk are swapped for
ones that count their walks, so a test fails if any walk happens, whatever the machine's
load. Only the header join is timed, as a ratio of best-of-N runs of sizes ten times apart
with a generous factor (linear gives about 10, quadratic about 100), which noise on a
shared machine does not move by that much.
"""

from __future__ import annotations

import gc
import tracemalloc
from collections import OrderedDict
from collections.abc import Callable, Iterator
from typing import Any

import orjson
import pytest
from helpers import CountingDict, initialize_request
from test_http_client import learn
from test_http_server import Client, build, modern

from mcp_sansio._connection import Connection
from mcp_sansio.http import HttpServer, ResponseHead, _client_tools
from mcp_sansio.http._client import HttpClientTransport
from mcp_sansio.http._headers import lower_headers
from mcp_sansio.http._server import (
    DEFAULT_REPLAY_BYTES,
    REPLAY_EVENT_COST,
    REPLAY_STREAM_COST,
    HttpSession,
)
from mcp_sansio.server import Server

MiB = 1024 * 1024
SSE = {"accept": "text/event-stream"}
INITIALIZE = initialize_request()


def grown(run: Callable[[], object]) -> float:
    """The memory (MiB) still held after ``run``, what it returns included."""
    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        kept = run()
        gc.collect()
        size = tracemalloc.get_traced_memory()[0] - base
    finally:
        tracemalloc.stop()
    del kept
    return size / MiB


def session(client: Client) -> HttpSession:
    assert client.session_id is not None
    return client.core.sessions[client.session_id]


# ---------------------------------------------------------------------- the tool cache


def test_tool_names_a_client_sends_are_not_cached() -> None:
    # Before: 400 refused tools/call with 256 KiB names unknown to the server left 400
    # entries and +100.0 MiB in HttpServer._param_headers; now none, +0.0 MiB.
    client = Client(versions=["2026-07-28"])

    def flood() -> None:
        for i in range(400):
            body, headers = modern("tools/call", rid=i, name=f"{i}" + "x" * 256 * 1024)
            assert client.send(body=body, headers=headers).json()["error"]["code"] == -32602

    assert grown(flood) < 8
    assert client.core._param_headers == {}


def test_the_cache_follows_the_registered_tools() -> None:
    client = Client(versions=["2026-07-28"])
    body, headers = modern("tools/call", name="later", arguments={"n": 1})
    assert client.send(body=body, headers=headers).json()["error"]["code"] == -32602  # unknown

    # A tool registered after a call named it has its headers checked (the old cache kept
    # the first answer for a name: no annotations).
    server: Server = client.core.server

    @server.tool(
        "later",
        input_schema={
            "type": "object",
            "properties": {"n": {"type": "integer", "x-mcp-header": "N"}},
        },
    )
    def later(ctx: Any, arguments: Any) -> str:
        return "ok"

    reply = client.send(body=body, headers=headers)
    assert reply.status == 400
    assert reply.json()["error"]["code"] == -32020
    assert client.send(body=body, headers={**headers, "mcp-param-n": "1"}).status == 200
    assert set(client.core._param_headers) == {"later"}


# ---------------------------------------------------------------------- the replay budget


def check_budget(hs: HttpSession) -> None:
    """The replay accounting adds up, within the budget."""
    total = 0
    for stream in hs.kept.values():
        assert stream.replay
        cost = REPLAY_STREAM_COST + sum(len(e) + REPLAY_EVENT_COST for _, e in stream.replay)
        assert stream.kept == cost
        assert len(stream.replay) <= hs.owner.replay_size
        total += cost
    assert hs.replay_bytes == total <= hs.owner.replay_bytes


def test_a_long_session_keeps_replay_bytes_of_events_not_every_stream() -> None:
    # Before: every POST answered over SSE left its stream and its events behind for the
    # life of the session (10,000 calls: 10,001 streams, +22.0 MiB, and 67.3 s, since
    # each message walked them all); now the streams that fit in replay_bytes (10,000
    # calls: 1,893 streams, +4.5 MiB at the default 4 MiB, 2.5 s).
    client = Client(json_response=False, replay_bytes=64 * 1024)
    client.initialize()
    for i in range(1, 2001):
        assert client.call(i, "echo", {"m": "x" * 100}).status == 200
    hs = session(client)
    check_budget(hs)
    assert len(hs.streams) <= 64 * 1024 // REPLAY_STREAM_COST  # was 2,001
    assert len(hs.kept) == len(hs.streams)  # only streams with events to replay
    # The newest stream still resumes from its start.
    newest = max(hs.streams.values(), key=lambda s: s.no)
    resumed = client.send("GET", headers={**SSE, "last-event-id": f"{newest.no}_0"})
    assert resumed.status == 200
    assert resumed.ended
    assert resumed.messages()[-1]["id"] == 2000
    # The oldest is gone: 400, as for an event that fell out of replay_size.
    assert client.send("GET", headers={**SSE, "last-event-id": "3_0"}).status == 400


def test_the_default_budget_holds_in_memory() -> None:
    client = Client(json_response=False)
    client.initialize()
    big = {"m": "x" * 60_000}

    def calls() -> None:
        for i in range(1, 301):  # 300 answers of 60 KB: 18 MB of events
            client.call(i, "echo", big)

    assert 4 * MiB == DEFAULT_REPLAY_BYTES
    assert grown(calls) < 4 + 2  # was +17.5 MiB, every stream kept; now +4.0 MiB
    check_budget(session(client))


def test_an_event_larger_than_the_budget_is_not_kept_nor_are_the_older_ones() -> None:
    client = Client(json_response=False, replay_bytes=4096)
    client.initialize()
    client.send(
        body={"jsonrpc": "2.0", "id": 9, "method": "logging/setLevel", "params": {"level": "debug"}}
    )
    client.call(1, "reconnect", _meta={"progressToken": "t"})  # progress, then cut off
    hs = session(client)
    stream = hs.by_request[1]
    assert len(stream.replay) == 2  # progress 1/2 after the cut, kept
    client.driver.finish("y" * 8000)  # an answer over the whole budget
    assert not stream.replay
    assert stream.no not in hs.kept
    check_budget(hs)
    # Resuming from before the answer would skip it: refused (400), never a gap.
    for seen in (0, 1):
        last = f"{stream.no}_{seen}"
        assert client.send("GET", headers={**SSE, "last-event-id": last}).status == 400


def test_the_standalone_stream_keeps_its_newest_events() -> None:
    client = Client(replay_bytes=8192)
    client.initialize()
    get = client.send("GET", headers=SSE)
    for i in range(200):  # 200 notifications with no request to go with: the GET stream
        note = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"n": i}}
        client.core.route(session(client), orjson.dumps(note))
    hs = session(client)
    check_budget(hs)
    assert hs.get_stream is not None
    assert hs.get_stream.replay
    assert hs.get_stream.replay[-1][0] == hs.get_stream.seq  # the newest kept
    assert get.pull().messages()[-1]["params"] == {"n": 199}
    oldest = hs.get_stream.replay[0][0]
    assert 1 < oldest < 200  # the oldest forgotten
    last = f"{hs.get_stream.no}_{oldest - 1}"
    assert len(client.send("GET", headers={**SSE, "last-event-id": last}).messages()) == (
        201 - oldest
    )


# ---------------------------------------------------------------------- cancelled requests


def test_a_cancelled_request_ends_its_stream() -> None:
    # Before: a request the client cancelled kept its stream open (the POST was never
    # answered), its entry in by_request, and its session busy, for good: 100 cancelled
    # calls left 100 open responses and 100 entries; now none.
    client = Client()
    client.initialize()
    replies = []
    for i in range(1, 101):
        replies.append(client.call(i, "slow"))
        cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled"}
        cancel["params"] = {"requestId": i, "reason": "enough"}  # type: ignore[assignment]
        assert client.send(body=cancel).status == 202
    hs = session(client)
    assert hs.by_request == {}
    assert hs.attached == 0
    for reply in replies:
        reply.pull()
        assert reply.ended
        assert reply.status == 200
        assert reply.messages() == []
    assert hs in client.core._idle  # evictable again


def test_a_cancel_the_session_ignores_changes_nothing() -> None:
    client = Client()
    client.initialize()
    reply = client.call(1, "slow")
    for rid in (2, [1], True, None):  # unknown, unhashable, boolean, missing
        note = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": rid}}
        assert client.send(body=note).status == 202
    hs = session(client)
    assert set(hs.by_request) == {1}
    client.driver.finish("late")
    assert reply.pull().json()["result"]["content"][0]["text"] == "late"


# ---------------------------------------------------------------------- bodies in flight


def test_a_request_in_flight_does_not_keep_its_body() -> None:
    # Before: each slow request's Exchange kept its body for as long as the request ran
    # (200 requests of 256 KiB: +100.8 MiB, the body twice); now once (+50.8 MiB).
    client = Client()
    client.initialize()

    def calls() -> list[Any]:
        replies = []
        for i in range(1, 201):
            body = {"jsonrpc": "2.0", "id": i, "method": "tools/call"}
            body["params"] = {"name": "slow", "arguments": {"pad": "x" * 256 * 1024}}
            replies.append(client.send(raw=bytes(bytearray(orjson.dumps(body)))))
        return replies

    assert grown(calls) < 70
    assert len(client.driver.kept) == 200


# ---------------------------------------------------------------------- hostile headers


@pytest.mark.parametrize("last", ["9" * 5000 + "_1", "1_" + "9" * 5000, "1_\xb2", "\xb2_1"])
def test_a_last_event_id_that_is_not_ours_is_400(last: str) -> None:
    # Before: 5,000 digits raised ValueError out of HttpServer.end (int() takes 4,300).
    client = Client()
    client.initialize()
    headers = [
        (b"host", b"127.0.0.1"),
        (b"accept", b"text/event-stream"),
        (b"mcp-session-id", client.session_id.encode()),  # type: ignore[union-attr]
        (b"last-event-id", last.encode("latin-1")),
    ]
    ex = client.core.begin("GET", "/mcp", headers)
    assert client.core.end(ex) == []
    head = ex.next_output()
    assert isinstance(head, ResponseHead)
    assert head.status == 400


@pytest.mark.parametrize(("length", "status"), [("9" * 5000, 413), ("0" * 5000 + "5", 400)])
def test_a_long_content_length_is_read_as_a_number(length: str, status: int) -> None:
    # Before: ValueError out of HttpServer.begin.
    client = Client()
    assert client.send(raw=b"{}", headers={"content-length": length}).status == status


def test_repeated_accept_headers_are_joined_once() -> None:
    # Before: each Accept header re-joined all the earlier ones (60,000: 0.22 s, 70 times
    # the cost of 6,000). The cost is timed by benchmarks/scaling.py, not here; this checks
    # the joined value.
    assert lower_headers([(b"Accept", b"a"), (b"x", b"1"), (b"accept", b"b")]) == {
        "x": "1",
        "accept": "a, b",
    }
    assert lower_headers([(b"accept", b"a/b")] * 60_000)["accept"] == ", ".join(["a/b"] * 60_000)


@pytest.mark.parametrize("name", [b"Authorization", b"DPoP"])
def test_repeated_authorization_and_dpop_headers_are_joined_once(name: bytes) -> None:
    # Before: the same re-join (60,000 Authorization fields: 6.3 s, 1,163 times the cost of
    # 6,000); timed by benchmarks/scaling.py. Joined, so that the checks refuse a repeat.
    key = name.decode().lower()
    assert lower_headers([(name, b"a"), (b"x", b"1"), (name, b"b")]) == {"x": "1", key: "a, b"}
    assert lower_headers([(name, b"t")] * 60_000)[key] == ", ".join(["t"] * 60_000)


# ---------------------------------------------------------------------- work per message


class CountingOrderedDict(OrderedDict[Any, Any]):
    walks = 0

    def __iter__(self) -> Iterator[Any]:
        CountingOrderedDict.walks += 1
        return super().__iter__()

    def values(self) -> Any:
        CountingOrderedDict.walks += 1
        return super().values()


def test_a_message_does_not_walk_the_streams_of_its_session() -> None:
    # Before: each message walked every stream the session kept (list(hs.streams.items())
    # in _reap): a request cost O(streams), and the streams grew without bound.
    client = Client(json_response=False)
    client.initialize()
    for i in range(1, 301):
        client.call(i, "progress", _meta={"progressToken": i})
    hs = session(client)
    assert len(hs.streams) == 301  # all kept, within the default budget (initialize too)
    hs.streams = CountingDict(hs.streams)
    CountingDict.walks = 0
    for i in range(301, 401):
        assert client.call(i, "progress", _meta={"progressToken": i}).status == 200
    client.send("GET", headers={**SSE, "last-event-id": "5_0"})
    assert CountingDict.walks == 0  # was 400: one walk per message


def test_a_post_does_not_copy_the_table_of_requests_in_flight(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Before: end_delivery built Connection.owed, a tuple of every request in flight (up
    # to max_in_flight), for each POST, and searched it: a POST cost 2 to 5 times more
    # with 4,000 slow requests in flight.
    client = Client()
    client.initialize()
    for i in range(1, 501):
        client.call(i, "slow")
    calls = 0
    owed = Connection.owed

    def counting(self: Connection) -> tuple[Any, ...]:
        nonlocal calls
        calls += 1
        return owed.fget(self)  # type: ignore[attr-defined, no-any-return]

    monkeypatch.setattr(Connection, "owed", property(counting))
    for i in range(501, 551):
        client.call(i, "slow")
        client.send(body={"jsonrpc": "2.0", "id": f"p{i}", "method": "ping"})
    assert calls == 0  # was 100


def test_an_initialize_does_not_walk_the_sessions() -> None:
    # Before: each initialize past max_sessions walked the sessions (and their streams)
    # for an idle one: with 1,024 sessions holding a GET stream, a refused initialize
    # cost 453 us; now 18 us.
    core = HttpServer(build(), max_sessions=50)
    clients = [Client(core) for _ in range(50)]
    for client in clients:
        client.initialize()
        client.send("GET", headers=SSE)
    core.sessions = CountingOrderedDict(core.sessions)
    CountingOrderedDict.walks = 0
    for _ in range(20):
        assert Client(core).send(body=INITIALIZE).status == 503
    assert CountingOrderedDict.walks == 0  # was 20
    assert len(core.sessions) == 50


def test_the_session_idle_the_longest_gives_way() -> None:
    core = HttpServer(build(), max_sessions=3)
    clients = [Client(core) for _ in range(3)]
    gets = []
    for client in clients:
        client.initialize()
        gets.append(client.send("GET", headers=SSE))
    # The newest session's stream closes first, then the oldest's: the newest has been
    # idle the longest.
    core.disconnected(gets[2].ex)
    core.disconnected(gets[0].ex)
    Client(core).initialize()
    assert clients[2].session_id not in core.sessions
    assert clients[0].session_id in core.sessions
    assert clients[1].session_id in core.sessions


def test_keepalive_visits_only_the_open_streams() -> None:
    client = Client(json_response=False)
    client.initialize()
    for i in range(1, 101):
        client.call(i, "echo")
    get = client.send("GET", headers=SSE)
    hs = session(client)
    hs.streams = CountingDict(hs.streams)
    CountingDict.walks = 0
    assert client.core.keepalive() == [get.ex]
    assert CountingDict.walks == 0
    assert list(client.core._open) == [hs.get_stream]


# ---------------------------------------------------------------------- the client


def annotated(name: str) -> dict[str, Any]:
    schema = {"type": "object", "properties": {"r": {"type": "string", "x-mcp-header": "R"}}}
    return {"name": name, "inputSchema": schema}


def test_the_client_remembers_annotated_tools_within_its_bytes() -> None:
    # Before: 16 pages of 256 annotated tools with 16 KiB names: 4,096 kept, +65.2 MiB
    # (the bound was 65,536 tools of any size); now 250 tools, +4.0 MiB.
    t = HttpClientTransport()

    def pages() -> None:
        for page in range(16):
            learn(t, [annotated(f"{page}_{i}_" + "n" * 16384) for i in range(256)])

    assert grown(pages) < 4 + 1.5
    assert t._tools.bytes <= _client_tools._MAX_TOOL_BYTES
    assert t.tool_headers(f"15_255_{'n' * 16384}") == {"r": "R"}  # the newest are kept
    assert t.tool_headers(f"0_0_{'n' * 16384}") == {}  # the first learned are forgotten


def test_the_client_does_not_remember_tools_without_annotations() -> None:
    t = HttpClientTransport()
    learn(t, [annotated("a"), {"name": "plain", "inputSchema": {"type": "object"}}])
    assert set(t._tools.known) == {"a"}
    learn(t, [{"name": "a", "inputSchema": {"type": "object"}}])  # lost its annotation
    assert t._tools.known == {}
    assert t._tools.bytes == 0
    assert t.tool_headers("a") == {}
