"""Application methods (``Config.methods``, :class:`MethodSpec`): a vendor request or
notification added to the tables is enforced as the built-in methods are, in both
directions, in both eras: who may send it, its kind, its capability gate, the versions it
is in, and (2026-07-28) whether it may answer ``input_required``."""

from __future__ import annotations

from typing import Any

import pytest
from helpers import MODERN, ConnectionPair, feed, legacy_pair, modern_meta, stateless_pair

from mcp_sansio import (
    Config,
    Connection,
    Direction,
    ErrorCode,
    InputRequired,
    InvalidMessage,
    Kind,
    LocalProtocolError,
    MethodSpec,
    Notification,
    Request,
    Response,
    Role,
)

SEARCH = MethodSpec(
    "acme/search", Kind.REQUEST, Direction.CLIENT_TO_SERVER, gate=("experimental", "acme")
)
ASK = MethodSpec("acme/ask", "request", "server_to_client")
PING = MethodSpec("acme/heartbeat", "notification", "both")
DRAFT = MethodSpec(
    "acme/draft", "request", "client_to_server", input_required=True, versions=[MODERN]
)
METHODS = (SEARCH, ASK, PING, DRAFT)
ACME: dict[str, Any] = {"experimental": {"acme": {}}}


def test_a_spec_takes_strings_for_its_enums() -> None:
    assert ASK.kind is Kind.REQUEST
    assert ASK.direction is Direction.SERVER_TO_CLIENT
    assert DRAFT.versions == (MODERN,)
    assert Config(role=Role.CLIENT, methods=METHODS).methods == METHODS


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"method": "tools/call", "kind": "request", "direction": "client_to_server"}, ValueError),
        ({"method": "rpc.discover", "kind": "request", "direction": "both"}, ValueError),
        ({"method": "", "kind": "request", "direction": "both"}, ValueError),
        ({"method": "a/b", "kind": "answer", "direction": "both"}, ValueError),
        ({"method": "a/b", "kind": "request", "direction": "sideways"}, ValueError),
        ({"method": "a/b", "kind": "request", "direction": "both", "gate": "x"}, TypeError),
        (
            {"method": "a/b", "kind": "notification", "direction": "both", "input_required": True},
            ValueError,
        ),
        (
            {"method": "a/b", "kind": "request", "direction": "both", "versions": ["1999-01-01"]},
            ValueError,
        ),
    ],
)
def test_a_bad_spec_is_refused(kwargs: dict[str, Any], error: type[Exception]) -> None:
    with pytest.raises(error):
        MethodSpec(**kwargs)


def test_config_refuses_a_method_named_twice() -> None:
    with pytest.raises(ValueError, match="twice"):
        Config(role=Role.CLIENT, methods=[SEARCH, SEARCH])
    with pytest.raises(TypeError):
        Config(role=Role.CLIENT, methods=SEARCH)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        Config(role=Role.CLIENT, methods=["acme/search"])  # type: ignore[list-item]


def test_without_the_spec_the_method_is_not_found() -> None:
    pair = legacy_pair("2025-11-25", server_capabilities=ACME)
    with pytest.raises(LocalProtocolError) as info:
        pair.client.send(Request(id=5, method="acme/search"))
    assert info.value.code == ErrorCode.METHOD_NOT_FOUND


def _legacy(version: str = "2025-11-25", **server: Any) -> ConnectionPair:
    pair = ConnectionPair(
        methods=METHODS,
        server={"capabilities": server.get("capabilities", ACME)},
    )
    pair.handshake(version)
    return pair


@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"])
def test_a_vendor_request_round_trip_initialize_era(version: str) -> None:
    pair = _legacy(version)
    pair.roundtrip(Role.CLIENT, "acme/search", {"q": "x"}, {"hits": []})
    pair.roundtrip(Role.SERVER, "acme/ask", {"why": 1}, {"ok": True})
    pair.send(Role.CLIENT, Notification(method="acme/heartbeat"))
    pair.send(Role.SERVER, Notification(method="acme/heartbeat", params={"n": 1}))
    assert pair.client.outstanding == pair.server.owed == ()


def test_the_wrong_direction_is_refused_both_ways() -> None:
    pair = _legacy()
    with pytest.raises(LocalProtocolError, match="not sent by the server") as info:
        pair.server.send(Request(id=9, method="acme/search"))
    assert info.value.code == ErrorCode.METHOD_NOT_FOUND
    with pytest.raises(LocalProtocolError, match="not sent by the client"):
        pair.client.send(Request(id=9, method="acme/ask"))
    # Received the wrong way: refused with -32601 to its id.
    got = feed(pair.client, {"jsonrpc": "2.0", "id": 9, "method": "acme/search"})
    assert isinstance(got, InvalidMessage)
    assert got.code == ErrorCode.METHOD_NOT_FOUND
    assert got.reply is not None
    assert got.reply.id == 9
    got = feed(pair.server, {"jsonrpc": "2.0", "id": 9, "method": "acme/ask"})
    assert isinstance(got, InvalidMessage)
    assert got.code == ErrorCode.METHOD_NOT_FOUND


def test_the_gate_is_the_receivers_capability() -> None:
    pair = _legacy(capabilities={})
    with pytest.raises(LocalProtocolError, match=r"'experimental\.acme'") as info:
        pair.client.send(Request(id=5, method="acme/search"))
    assert info.value.code == ErrorCode.METHOD_NOT_FOUND
    got = feed(pair.server, {"jsonrpc": "2.0", "id": 5, "method": "acme/search"})
    assert isinstance(got, InvalidMessage)
    assert "did not declare" in got.message
    # ungated methods still pass
    pair.roundtrip(Role.SERVER, "acme/ask")


def test_the_kind_is_enforced() -> None:
    pair = _legacy()
    with pytest.raises(LocalProtocolError):
        pair.client.send(Notification(method="acme/search"))
    with pytest.raises(LocalProtocolError):
        pair.client.send(Request(id=3, method="acme/heartbeat"))
    got = feed(pair.server, {"jsonrpc": "2.0", "method": "acme/search"})
    assert isinstance(got, InvalidMessage)
    assert got.reply is None


def test_not_before_the_handshake() -> None:
    pair = ConnectionPair(methods=METHODS, versions=["2025-11-25"], server={"capabilities": ACME})
    with pytest.raises(LocalProtocolError, match="not allowed from the client in state IDLE"):
        pair.client.send(Request(id=1, method="acme/search"))


def test_a_method_outside_its_versions_is_not_found() -> None:
    pair = _legacy()
    with pytest.raises(LocalProtocolError, match="not a request of protocol version 2025-11-25"):
        pair.client.send(Request(id=1, method="acme/draft"))
    only_old = ConnectionPair(methods=METHODS, versions=["2025-11-25"])
    only_old.handshake("2025-11-25")
    with pytest.raises(LocalProtocolError, match="not part of protocol versions 2025-11-25"):
        only_old.client.send(Request(id=1, method="acme/draft"))


def _stateless() -> ConnectionPair:
    return stateless_pair(server_capabilities=ACME, methods=METHODS)


def test_a_vendor_request_round_trip_stateless_era() -> None:
    pair = _stateless()
    pair.roundtrip(Role.CLIENT, "acme/search", {"q": "x"}, {"hits": []})
    pair.roundtrip(Role.CLIENT, "acme/draft", {}, {})
    pair.send(Role.SERVER, Notification(method="acme/heartbeat"))
    assert pair.client.outstanding == pair.server.owed == ()


def test_stateless_gating_and_direction() -> None:
    pair = stateless_pair(server_capabilities={}, methods=METHODS)
    got = feed(
        pair.server,
        {"jsonrpc": "2.0", "id": 1, "method": "acme/search", "params": {"_meta": modern_meta()}},
    )
    assert isinstance(got, InvalidMessage)
    assert got.code == ErrorCode.METHOD_NOT_FOUND
    assert "experimental.acme" in got.message
    with pytest.raises(LocalProtocolError, match="never sends requests"):
        pair.server.send(Request(id=2, method="acme/ask"))


def test_input_required_only_where_declared() -> None:
    pair = _stateless()
    ask = {"resultType": "input_required", "requestState": "s1"}
    draft = pair.request(Role.CLIENT, "acme/draft", {})
    data = pair.server.send(Response(id=draft.id, result=ask))
    pair.client.receive_data(data)
    event = pair.client.next_event()
    assert isinstance(event, InputRequired), event
    search = pair.request(Role.CLIENT, "acme/search", {})
    with pytest.raises(LocalProtocolError, match="cannot answer input_required"):
        pair.server.send(Response(id=search.id, result=ask))
    feed_result = feed(pair.client, {"jsonrpc": "2.0", "id": search.id, "result": ask})
    assert isinstance(feed_result, InvalidMessage)
    assert "cannot answer input_required" in feed_result.message


def test_connections_with_other_methods_do_not_share_gates() -> None:
    plain = Connection(Role.SERVER, versions=[MODERN], capabilities=ACME)
    extended = Connection(Role.SERVER, versions=[MODERN], capabilities=ACME, methods=METHODS)
    for conn in (plain, extended):
        feed(
            conn,
            {"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"_meta": modern_meta()}},
        )
    assert plain._s.gated is not extended._s.gated
    assert extended.config.specs[MODERN].methods["acme/search"].gate == ("experimental", "acme")
    assert "acme/search" not in plain.config.specs[MODERN].methods
