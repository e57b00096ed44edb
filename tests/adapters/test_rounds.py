"""Our client against our server of the same runtime: the server asking the client
(``input_required`` rounds in 2026-07-28, requests in 2025-11-25, the same handlers and the
same answers), the bound on rounds, and 2026-07-28 ``subscriptions/listen`` (docs/policy.rst,
"Listen")."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

import pytest

from mcp_sansio.server import Server
from mcp_sansio.session import McpError

from ._peers import MODERN, VERSION, RawServer, Served, Wire
from ._runtimes import Runtime, async_runtimes, runtimes

ERAS = pytest.mark.parametrize("version", [VERSION, MODERN])
NAME_SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}}


def build_server(rt: Runtime) -> Server:
    server = Server("rounds", "1.0")

    async def ask(ctx: Any, arguments: Mapping[str, Any]) -> str:
        "Ask the user's name, then the client's roots."
        answer = await ctx.elicit("Your name?", NAME_SCHEMA)
        roots = await ctx.list_roots()
        uris = " ".join(root["uri"] for root in roots["roots"])
        return f"{answer['action']} {answer['content']['name']} {uris}"

    server.tool(name="ask")(rt.handler(ask))

    @server.tool()
    def touch(ctx: Any, arguments: Mapping[str, Any]) -> str:
        "Say that the tool list changed."
        ctx.list_changed("tools")
        return "touched"

    return server


def client_handlers(rt: Runtime, seen: list[Any]) -> dict[str, Any]:
    async def elicit(ctx: Any, params: Mapping[str, Any]) -> Any:
        seen.append(("elicit", params["message"]))
        return {"action": "accept", "content": {"name": "Ada"}}

    async def roots(ctx: Any, params: Mapping[str, Any]) -> Any:
        seen.append(("roots", dict(params)))
        return {"roots": [{"uri": "file:///a", "name": "a"}, {"uri": "file:///b", "name": "b"}]}

    return {"elicitation/create": rt.handler(elicit), "roots/list": rt.handler(roots)}


@runtimes()
@ERAS
def test_the_server_asks_the_client_in_either_era(rt: Runtime, version: str) -> None:
    """Two questions: two ``input_required`` rounds in 2026-07-28, two requests in
    2025-11-25; the same handlers run once each and the call gets the same result."""
    seen: list[Any] = []

    async def scenario() -> None:
        handlers = client_handlers(rt, seen)
        async with rt.client(served.path, versions=[version], handlers=handlers) as client:
            got = await client.call_tool("ask")
            assert got["content"] == [{"type": "text", "text": "accept Ada file:///a file:///b"}]
            assert not got.get("isError")

    with Served(rt.name, build_server(rt), versions=[version]) as served:
        rt.run(scenario)
    assert [what for what, _ in seen] == ["elicit", "roots"]
    assert seen[0] == ("elicit", "Your name?")


@runtimes()
def test_more_input_rounds_than_the_bound_fail_the_call(rt: Runtime) -> None:
    """``max_input_rounds=1`` and a tool that needs two: -32603 naming the bound, and the
    session goes on."""
    seen: list[Any] = []

    async def scenario() -> None:
        handlers = client_handlers(rt, seen)
        async with rt.client(
            served.path, versions=[MODERN], handlers=handlers, max_input_rounds=1
        ) as client:
            with pytest.raises(McpError, match="more than 1 input_required rounds") as info:
                await client.call_tool("ask")
            assert info.value.code == -32603
            assert (await client.call_tool("touch"))["content"][0]["text"] == "touched"

    with Served(rt.name, build_server(rt), versions=[MODERN]) as served:
        rt.run(scenario)
    assert [what for what, _ in seen] == ["elicit"]


@runtimes()
def test_listen_starts_the_stream_and_returns(rt: Runtime) -> None:
    """``listen(tools=True)`` returns the acknowledgement; the stream's list changes reach
    ``on_notification``; the calls go on meanwhile."""
    notes: list[Any] = []

    async def scenario() -> None:
        async with rt.client(
            served.path, versions=[MODERN], on_notification=notes.append
        ) as client:
            ack = await client.listen(tools=True, timeout=2)
            assert ack["notifications"] == {"toolsListChanged": True}, ack
            assert (await client.call_tool("touch"))["content"][0]["text"] == "touched"
            await client.until(
                lambda: any(n.method == "notifications/tools/list_changed" for n in notes)
            )

    with Served(rt.name, build_server(rt), versions=[MODERN]) as served:
        rt.run(scenario)
    methods = [note.method for note in notes]
    assert methods.count("notifications/tools/list_changed") == 1, methods


SUBSCRIPTION = "io.modelcontextprotocol/subscriptionId"


def _listen_script(listens: list[dict[str, Any]]) -> Any:
    """A 2026-07-28 server that acknowledges a listen stream, then sends a list change on it
    0.3 s later."""

    def script(wire: Wire) -> None:
        discover = wire.recv_method("server/discover")
        discovered = {
            "resultType": "complete",
            "supportedVersions": [MODERN],
            "capabilities": {"tools": {"listChanged": True}},
            "serverInfo": {"name": "raw-2026", "version": "1"},
            "ttlMs": 0,
            "cacheScope": "public",
        }
        wire.send({"jsonrpc": "2.0", "id": discover["id"], "result": discovered})
        listen = wire.recv_method("subscriptions/listen")
        listens.append(listen)
        meta = {SUBSCRIPTION: listen["id"]}
        acknowledged = {"notifications": {"toolsListChanged": True}, "_meta": meta}
        wire.send(
            {
                "jsonrpc": "2.0",
                "method": "notifications/subscriptions/acknowledged",
                "params": acknowledged,
            }
        )
        time.sleep(0.3)
        changed = {"_meta": meta}
        wire.send(
            {"jsonrpc": "2.0", "method": "notifications/tools/list_changed", "params": changed}
        )
        wire.wait_eof()

    return script


def _changed(notes: list[Any]) -> bool:
    return any(n.method == "notifications/tools/list_changed" for n in notes)


@async_runtimes()
def test_listen_updates_arrive_while_the_caller_makes_no_call(rt: Runtime) -> None:
    """The list change arrives while the caller waits without calling the client: it
    reaches ``on_notification``. (The blocking runtime's one documented difference,
    docs/blocking.rst: it has no reader thread, and the next test pins what it does.)"""
    listens: list[dict[str, Any]] = []
    notes: list[Any] = []

    async def scenario() -> None:
        async with rt.client(peer.path, versions=[MODERN], on_notification=notes.append) as c:
            ack = await c.listen(tools=True, timeout=2)
            assert ack["notifications"] == {"toolsListChanged": True}, ack
            await c.wait_without_calls(lambda: _changed(notes))

    with RawServer(_listen_script(listens)) as peer:
        rt.run(scenario)
    assert listens[0]["params"]["notifications"] == {"toolsListChanged": True}


def test_blocking_listen_updates_arrive_at_the_next_poll() -> None:
    """The blocking runtime's one documented difference (docs/blocking.rst): with no reader
    thread, the stream's notification waits until the client pumps, and ``poll()``
    delivers it."""
    from mcp_sansio import blocking

    listens: list[dict[str, Any]] = []
    notes: list[Any] = []
    with (
        RawServer(_listen_script(listens)) as peer,
        blocking.Client.connect_unix(
            peer.path, versions=[MODERN], on_notification=notes.append, timeout=5
        ) as client,
    ):
        client.listen(tools=True, timeout=2)
        time.sleep(0.6)  # the change was sent 0.3 s after the acknowledgement
        assert not _changed(notes)
        end = time.monotonic() + 3
        while not _changed(notes) and time.monotonic() < end:
            client.poll(0.1)
        assert _changed(notes)


@runtimes()
def test_a_client_handler_raising_in_an_input_round_fails_the_call_with_it(rt: Runtime) -> None:
    """(Added by D.) 2026-07-28: the client's handler answers an ``input_required`` round
    inside the caller's own call; when it raises, the call raises that exception (same
    object), as for ``on_progress``: the caller's code failed, not the server. The session
    goes on."""
    raised: list[Exception] = []

    async def failing(ctx: Any, params: Mapping[str, Any]) -> Any:
        raised.append(RuntimeError("handler detail"))
        raise raised[-1]

    async def scenario() -> None:
        handlers = client_handlers(rt, [])
        handlers["elicitation/create"] = rt.handler(failing)
        async with rt.client(served.path, versions=[MODERN], handlers=handlers) as client:
            with pytest.raises(RuntimeError, match="handler detail") as info:
                await client.call_tool("ask")
            assert info.value is raised[0]
            assert (await client.call_tool("touch"))["content"][0]["text"] == "touched"

    with Served(rt.name, build_server(rt), versions=[MODERN]) as served:
        rt.run(scenario)
