"""Bounds on what a peer can grow (issue 16, class 1) and per-message costs that do not
grow with what is remembered (class 2), beyond the id tables (tests/test_ids.py,
tests/test_connection_ids.py) and the subscriptions (tests/test_connection_subscriptions.py):
the bytes of the peer's requests in flight, and the check of a 2026 log message against the
log levels of the requests in flight."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from helpers import (
    META_LOG_LEVEL,
    ConnectionPair,
    CountingDict,
    expect_invalid,
    feed,
    modern_meta,
    stateless_pair,
)

from mcp_sansio import (
    Connection,
    ErrorCode,
    LocalProtocolError,
    Notification,
    Request,
    Response,
    Role,
)

INVALID = ErrorCode.INVALID_REQUEST
LEGACY_VERSION = "2025-11-25"


def _legacy(version: str = LEGACY_VERSION, **server: Any) -> ConnectionPair:
    pair = ConnectionPair(
        client={"capabilities": {}}, server={"capabilities": {"tools": {}}, **server}
    )
    pair.handshake(version)
    return pair


def _call(rid: Any, size: int = 0) -> dict[str, Any]:
    arguments = {"pad": "x" * size} if size else {}
    return {
        "jsonrpc": "2.0",
        "id": rid,
        "method": "tools/call",
        "params": {"name": "t", "arguments": arguments},
    }


# --------------------------------------------------------------- requests in flight, bytes


def test_the_bytes_of_requests_in_flight_are_bounded() -> None:
    """``max_in_flight_bytes``: a request that would take the peer's requests in flight past
    it is refused (-32600, to its id); answering one makes room. Before, only their number
    was bounded (4,096 requests of up to 4 MiB each: 16 GiB)."""
    pair = _legacy(max_in_flight_bytes=12_000)
    assert isinstance(feed(pair.server, _call(1, 5000)), Request)
    assert isinstance(feed(pair.server, _call(2, 5000)), Request)
    invalid = expect_invalid(feed(pair.server, _call(3, 5000)), INVALID, reply_id=3)
    assert invalid.message == "Invalid request: more than 12000 bytes of requests in flight"
    pair.server.send(invalid.reply)  # type: ignore[arg-type]
    pair.server.send(Response(id=1, result={"content": []}))
    assert isinstance(feed(pair.server, _call(4, 5000)), Request)


def test_requests_under_4_kib_are_not_counted() -> None:
    """Documented: a request under 4 KiB of JSON counts nothing (so the common request costs
    no arithmetic); ``max_in_flight`` bounds those, 16 MiB at the defaults."""
    pair = _legacy(max_in_flight_bytes=5000)
    assert isinstance(feed(pair.server, _call(1, 4500)), Request)
    for rid in range(2, 12):
        assert isinstance(feed(pair.server, _call(rid, 3000)), Request)
    expect_invalid(feed(pair.server, _call(12, 4500)), INVALID, reply_id=12)


def test_a_request_alone_is_always_accepted() -> None:
    """However large (up to ``max_message_size``), one request with nothing else counted in
    flight is accepted; a cancel frees its bytes too."""
    pair = _legacy(max_in_flight_bytes=100)
    assert isinstance(feed(pair.server, _call(1, 5000)), Request)
    expect_invalid(feed(pair.server, _call(2, 5000)), INVALID, reply_id=2)
    cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}
    assert isinstance(feed(pair.server, cancel), Notification)
    assert isinstance(feed(pair.server, _call(3, 5000)), Request)


def test_a_batch_counts_its_members_share() -> None:
    """2025-03-26 batches: each member counts its share of the batch's bytes."""
    pair = _legacy("2025-03-26", max_in_flight_bytes=12_000)
    batch = [_call(i, 5000) for i in range(1, 5)]  # about 5,050 bytes each: two fit
    pair.server.receive_data(orjson.dumps(batch) + b"\n")
    events = [pair.server.next_event() for _ in range(4)]
    assert [type(e) for e in events[:2]] == [Request, Request]
    expect_invalid(events[2], INVALID, reply_id=3)
    expect_invalid(events[3], INVALID, reply_id=4)


def test_max_in_flight_bytes_is_validated() -> None:
    with pytest.raises(ValueError, match="max_in_flight_bytes"):
        Connection(Role.SERVER, max_in_flight_bytes=0)


# ------------------------------------------------ 2026 log messages: the check is O(1)


def _stateless_calls(pair: ConnectionPair, n: int, level: str | None = "info") -> None:
    extra = {META_LOG_LEVEL: level} if level else None
    for i in range(n):
        msg = _call(f"r{i}")
        msg["params"]["_meta"] = modern_meta(extra=extra)
        assert isinstance(feed(pair.server, msg), Request)


def _log(level: str = "info") -> Notification:
    return Notification(method="notifications/message", params={"level": level, "data": "x"})


def test_a_log_message_is_checked_against_the_levels_in_flight() -> None:
    """The lowest logLevel of the requests in flight decides; listens and requests without
    one do not count; as they are answered, the bound moves."""
    pair = stateless_pair(server_capabilities={"tools": {}, "logging": {}})
    server = pair.server
    _stateless_calls(pair, 1, None)
    with pytest.raises(LocalProtocolError, match="no request set logLevel"):
        server.send(_log())
    msg = _call("w")
    msg["params"]["_meta"] = modern_meta(extra={META_LOG_LEVEL: "warning"})
    assert isinstance(feed(server, msg), Request)
    msg = _call("d")
    msg["params"]["_meta"] = modern_meta(extra={META_LOG_LEVEL: "debug"})
    assert isinstance(feed(server, msg), Request)
    assert server.send(_log("debug"))
    server.send(Response(id="d", result={"content": []}))
    with pytest.raises(LocalProtocolError, match="below the requested logLevel"):
        server.send(_log("info"))
    assert server.send(_log("error"))
    server.send(Response(id="w", result={"content": []}))
    with pytest.raises(LocalProtocolError, match="no request set logLevel"):
        server.send(_log("error"))


def test_the_client_checks_a_log_message_against_its_requests_levels() -> None:
    # Below the level: refused under strict=True only (no MUST NOT: "the server MAY send
    # notifications/message notifications at or above the requested level", 2026-07-28,
    # Server > Utilities > Logging; the default is in tests/test_connection_leniency.py).
    pair = stateless_pair(server_capabilities={"tools": {}, "logging": {}}, strict=True)
    client = pair.client
    raw = {"jsonrpc": "2.0", "method": "notifications/message"}
    client.send(
        Request(
            id="a", method="tools/call", params={"name": "t", "_meta": {META_LOG_LEVEL: "warning"}}
        )
    )
    expect_invalid(
        feed(client, {**raw, "params": {"level": "info", "data": 1}}), INVALID, reply=False
    )
    assert isinstance(feed(client, {**raw, "params": {"level": "error", "data": 1}}), Notification)
    client.receive_data(
        b'{"jsonrpc":"2.0","id":"a","result":{"resultType":"complete","content":[]}}\n'
    )
    assert isinstance(client.next_event(), Response)
    expect_invalid(
        feed(client, {**raw, "params": {"level": "error", "data": 1}}), INVALID, reply=False
    )


def test_a_log_message_does_not_walk_the_4000_requests_in_flight() -> None:
    """Issue 16, class 2: each log message walked every request in flight for its logLevel
    (O(max_in_flight) per message). Now the levels are counted as requests come and go.
    Counted, not timed: the table of requests in flight is swapped for one that counts the
    walks over it."""
    pair = stateless_pair(server_capabilities={"tools": {}, "logging": {}})
    _stateless_calls(pair, 4000)
    theirs = pair.server._s.theirs
    theirs.pending = CountingDict(theirs.pending)
    CountingDict.walks = 0
    for _ in range(20):
        assert pair.server.send(_log())
    assert CountingDict.walks == 0
    list(theirs.pending.values())  # the counter sees a walk
    assert CountingDict.walks == 1
