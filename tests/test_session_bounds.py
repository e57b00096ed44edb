"""Sessions and what a peer can grow (issue 16): the server's subscriptions (bounded by the
connection), its listen streams by URI (looked up, not scanned), and the client's calls
waiting for their input handlers (failed and forgotten when the connection closes)."""

from __future__ import annotations

import tracemalloc
from typing import Any

import orjson
from helpers import META_SUBSCRIPTION, CountingDict, modern_meta, sent

from mcp_sansio.server import Server
from mcp_sansio.session import (
    CallFinished,
    ClientSession,
    Closed,
    ConnectionLost,
    HandleJob,
    ServerSession,
)

LEGACY = "2025-11-25"
MODERN = "2026-07-28"


def _line(message: dict[str, Any]) -> bytes:
    return orjson.dumps(message) + b"\n"


def _server(**config: Any) -> ServerSession:
    server = Server(name="s", version="1")

    @server.resource("file:///r")
    def read() -> str:
        return "x"

    return ServerSession(server, **config)


def _opened(**config: Any) -> ServerSession:
    session = _server(**config)
    params = {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "c"}}
    session.receive_data(
        _line({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}), 0.0
    )
    session.receive_data(_line({"jsonrpc": "2.0", "method": "notifications/initialized"}), 0.0)
    return session


def _subscribe(session: ServerSession, rid: int, uri: str) -> dict[str, Any]:
    msg = {"jsonrpc": "2.0", "id": rid, "method": "resources/subscribe", "params": {"uri": uri}}
    (answer,) = sent(session.receive_data(_line(msg), 0.0))
    return answer


def test_a_server_session_refuses_subscriptions_past_the_bound() -> None:
    """The client gets -32600 to its id; the updates go to the URIs subscribed before."""
    session = _opened(max_subscriptions=2)
    assert _subscribe(session, 1, "file:///a") == {"jsonrpc": "2.0", "id": 1, "result": {}}
    assert _subscribe(session, 2, "file:///b")["result"] == {}
    refused = _subscribe(session, 3, "file:///c")
    assert refused["id"] == 3
    assert refused["error"]["code"] == -32600
    assert refused["error"]["message"] == "Invalid request: more than 2 subscriptions"
    assert session.resource_updated("file:///c") == b""
    assert orjson.loads(session.resource_updated("file:///a"))["params"] == {"uri": "file:///a"}


def test_400_subscriptions_to_1_mib_uris_cost_nothing() -> None:
    """Before, each was kept (by the connection and by the session): +400 MiB. Now a URI
    of 1 MiB is over ``max_subscription_bytes`` (1 MiB) by itself: each is refused."""
    session = _opened()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        answers = [
            _subscribe(session, i + 1, f"file:///{i:05d}" + "x" * (1 << 20)) for i in range(400)
        ]
        grown = tracemalloc.get_traced_memory()[0] - base
    finally:
        tracemalloc.stop()
    assert all(a["error"]["code"] == -32600 for a in answers)
    assert grown < 1 << 20, grown


# ------------------------------------------------------------------ 2026 listen streams


def _modern(n_listens: int, uri: str = "file:///r") -> ServerSession:
    session = _server(versions=[MODERN])
    for i in range(n_listens):
        params = {
            "notifications": {"resourceSubscriptions": [uri if i == 0 else f"file:///other{i}"]},
            "_meta": modern_meta(),
        }
        msg = {"jsonrpc": "2.0", "id": f"L{i}", "method": "subscriptions/listen", "params": params}
        (ack,) = sent(session.receive_data(_line(msg), 0.0))
        assert ack["method"] == "notifications/subscriptions/acknowledged", ack
    return session


def test_an_update_goes_to_the_streams_that_asked_for_its_uri() -> None:
    session = _modern(3)
    (update,) = [orjson.loads(line) for line in session.resource_updated("file:///r").splitlines()]
    assert update["params"] == {"uri": "file:///r", "_meta": {META_SUBSCRIPTION: "L0"}}
    assert session.resource_updated("file:///nobody") == b""
    cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "L0"}}
    session.receive_data(_line(cancel), 0.0)
    assert session.resource_updated("file:///r") == b""
    assert session.end_listen("L1")
    assert session.resource_updated("file:///other1") == b""
    assert session.resource_updated("file:///other2")


def test_an_update_does_not_walk_the_listen_streams() -> None:
    """Issue 16, class 2: resource_updated() walked every listen stream (O(streams) per
    update); now it looks the URI up. Counted, not timed: the session's table of listen
    streams is swapped for one that counts the walks over it."""
    session = _modern(4000)
    session._listens = CountingDict(session._listens)
    CountingDict.walks = 0
    for _ in range(20):
        (update,) = [orjson.loads(x) for x in session.resource_updated("file:///r").splitlines()]
        assert update["params"]["uri"] == "file:///r"
        assert session.resource_updated("file:///nobody") == b""
    assert CountingDict.walks == 0
    # the counter sees a walk: list_changed goes to every stream, so it walks them once
    session.list_changed("tools")
    assert CountingDict.walks == 1


# ------------------------------------------------- the client's calls waiting for input


def _input_call() -> tuple[ClientSession, Any, Any]:
    """A 2026 client with a call whose answer asked for input: its handler job is running."""
    session = ClientSession(versions=[MODERN], handlers={"roots/list": lambda ctx, p: {}})
    (discover,) = sent(session.open(0.0))
    result = {
        "resultType": "complete",
        "supportedVersions": [MODERN],
        "capabilities": {"tools": {}},
        "ttlMs": 0,
        "cacheScope": "public",
        "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "s", "version": "1"}},
    }
    session.receive_data(_line({"jsonrpc": "2.0", "id": discover["id"], "result": result}), 0.0)
    call, data = session.call("tools/call", {"name": "t"}, now=0.0)
    answer = {
        "resultType": "input_required",
        "inputRequests": {"k": {"method": "roots/list"}},
    }
    rid = orjson.loads(data)["id"]
    actions = session.receive_data(_line({"jsonrpc": "2.0", "id": rid, "result": answer}), 0.0)
    (job,) = [a.job for a in actions if isinstance(a, HandleJob)]
    return session, call, job


def test_a_call_waiting_for_its_input_handlers_fails_when_the_connection_closes() -> None:
    """Before, it was left waiting (it is in no deadline while its handlers run), its entry
    stayed, and the handler's finish() raised LocalProtocolError (the retry could not go
    out). Now the close fails it with ConnectionLost, and finish() has nothing to send."""
    session, call, job = _input_call()
    actions = session.receive_data(b"", 1.0)
    assert [type(a) for a in actions] == [CallFinished, Closed]
    first = actions[0]
    assert isinstance(first, CallFinished)  # the closed union narrows
    assert first.call is call
    assert isinstance(call.error, ConnectionLost)
    assert session.finish(job, {"roots": []}, now=2.0) == b""
    assert session._input == {}
