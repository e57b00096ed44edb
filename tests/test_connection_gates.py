"""The gates (which methods the version and the capabilities allow) are computed once per
combination and shared, read-only, by the connections that agree on it."""

from __future__ import annotations

from typing import Any

from mcp_sansio import Connection, Request, Role, _gates


def stateless_server(capabilities: Any) -> Connection:
    conn = Connection(Role.SERVER, versions=["2026-07-28"], capabilities=capabilities)
    conn.receive_data(
        b'{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":'
        b'{"io.modelcontextprotocol/protocolVersion":"2026-07-28",'
        b'"io.modelcontextprotocol/clientCapabilities":{}}}}\n'
    )
    event = conn.next_event()
    assert isinstance(event, Request), event
    return conn


def test_connections_with_the_same_capabilities_share_the_table() -> None:
    first = stateless_server({"tools": {}})
    second = stateless_server({"tools": {}})
    assert first._s.gated is second._s.gated
    other = stateless_server({"tools": {}, "prompts": {}})
    assert other._s.gated is not first._s.gated
    assert other._s.gated != first._s.gated


def test_the_table_is_bounded() -> None:
    for n in range(_gates.GATES_MAX + 5):
        stateless_server({"tools": {}, "experimental": {str(n): {}}})
        assert len(_gates.GATES) <= _gates.GATES_MAX
