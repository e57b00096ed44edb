"""Application methods (issue 18, item 5; "Must show": a vendor method round trip through
every runtime, with gating): ``acme/search``, a client-to-server request gated by the
server's ``experimental.acme`` capability, and ``acme/indexed``, a server-to-client
notification, declared with the core's ``MethodSpec`` and carried by each runtime.

The API: ``Server(methods=, experimental=)``, ``@server.method(name)``,
``ctx.notify(method, params)``, ``Client.connect_*(methods=)``, ``client.request``,
``client.notify``. The built-in counterpart (a gated or wrong-direction built-in call
refused before the wire) is checked alongside: the vendor methods are refused the same way."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from mcp_sansio import Direction, Kind, LocalProtocolError, MethodSpec
from mcp_sansio.server import Server

from ._peers import MODERN, VERSION, Served, raw_client
from ._runtimes import Face, Runtime, runtimes

ERAS = pytest.mark.parametrize("version", [VERSION, MODERN])


def specs() -> list[MethodSpec]:
    return [
        MethodSpec(
            "acme/search", Kind.REQUEST, Direction.CLIENT_TO_SERVER, gate=("experimental", "acme")
        ),
        MethodSpec(
            "acme/indexed",
            Kind.NOTIFICATION,
            Direction.SERVER_TO_CLIENT,
            gate=("experimental", "acme"),
        ),
    ]


def vendor_server(rt: Runtime, declared: bool) -> Server:
    experimental: dict[str, Any] = {"acme": {}} if declared else {}
    server = Server("acme", "1.0", methods=specs(), experimental=experimental)

    async def search(ctx: Any, params: Mapping[str, Any]) -> Any:
        "Search the index."
        ctx.notify("acme/indexed", {"count": 2})
        return {"hits": [params["q"], params["q"].upper()]}

    server.method("acme/search")(rt.handler(search))
    return server


async def notify(client: Face, method: str, params: Mapping[str, Any]) -> None:
    if client.runtime.is_async:
        await client.client.notify(method, params)
    else:
        client.client.notify(method, params)


@runtimes()
@ERAS
def test_a_vendor_request_and_notification_round_trip(rt: Runtime, version: str) -> None:
    notes: list[Any] = []

    async def scenario() -> None:
        async with rt.client(
            served.path, versions=[version], methods=specs(), on_notification=notes.append
        ) as client:
            got = await client.request("acme/search", {"q": "mcp"})
            assert got["hits"] == ["mcp", "MCP"]
            await client.until(lambda: any(n.method == "acme/indexed" for n in notes))

    with Served(rt.name, vendor_server(rt, declared=True), versions=[version]) as served:
        rt.run(scenario)
    [note] = [n for n in notes if n.method == "acme/indexed"]
    assert note.params == {"count": 2}


@runtimes()
def test_a_vendor_request_is_gated_by_the_servers_capability(rt: Runtime) -> None:
    """Not declared: the client refuses to send it (as for built-in methods), and a raw
    client that sends it anyway gets -32601 naming the capability."""

    async def scenario() -> None:
        async with rt.client(served.path, methods=specs()) as client:
            with pytest.raises(LocalProtocolError, match=r"experimental\.acme") as info:
                await client.request("acme/search", {"q": "mcp"})
            assert info.value.code == -32601
            assert await client.ping() == {}

    with Served(rt.name, vendor_server(rt, declared=False)) as served:
        rt.run(scenario)
        with raw_client(served.path) as wire:
            wire.initialize()
            wire.send({"jsonrpc": "2.0", "id": 1, "method": "acme/search", "params": {"q": "x"}})
            answer = wire.recv()
    assert answer["error"]["code"] == -32601, answer
    assert "experimental.acme" in answer["error"]["message"]


@runtimes()
def test_a_vendor_notification_sent_the_wrong_way_is_refused(rt: Runtime) -> None:
    """``acme/indexed`` goes from server to client: the client refuses to send it."""

    async def scenario() -> None:
        async with rt.client(served.path, methods=specs()) as client:
            with pytest.raises(LocalProtocolError, match="is not sent by the client"):
                await notify(client, "acme/indexed", {"count": 1})
            got = await client.request("acme/search", {"q": "ok"})
            assert got["hits"] == ["ok", "OK"]

    with Served(rt.name, vendor_server(rt, declared=True)) as served:
        rt.run(scenario)


# ---------------------------------------------------------------------- the built-in baseline

REFUSED = {
    "prompts/list": "needs the server capability 'prompts', which the server did not declare",
    "sampling/createMessage": "'sampling/createMessage' is not sent by the client",
    "notifications/tools/list_changed": "is not a request of protocol version 2025-11-25",
}


@runtimes()
@pytest.mark.parametrize("method", sorted(REFUSED))
def test_a_built_in_call_the_session_refuses_raises_at_once(rt: Runtime, method: str) -> None:
    """(Added by D.) Ungated capability, wrong direction, not a request: LocalProtocolError
    (-32601, the core's text) from ``request()``, and the session goes on."""
    server = Server("plain", "1.0")

    @server.tool()
    def echo(ctx: Any, arguments: Mapping[str, Any]) -> str:
        "Echo."
        return "echo"

    async def scenario() -> None:
        async with rt.client(served.path) as client:
            with pytest.raises(LocalProtocolError) as info:
                await client.request(method, {})
            assert info.value.code == -32601
            assert REFUSED[method] in str(info.value)
            assert await client.ping() == {}

    with Served(rt.name, server) as served:
        rt.run(scenario)
