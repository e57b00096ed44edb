#!/usr/bin/env python3
"""The MCP conformance suite's client under test: ``client.py URL``.

The suite's client mode starts a scenario server and runs this program with the server's
URL as its argument and ``MCP_CONFORMANCE_SCENARIO`` (the scenario's name),
``MCP_CONFORMANCE_PROTOCOL_VERSION`` (the wire the scenario server speaks; the 0.1 suites
do not set it) and, for some scenarios, ``MCP_CONFORMANCE_CONTEXT`` (JSON test data) in the
environment. It connects with :meth:`mcp_sansio.asyncio.Client.connect_http`, does what the
scenario expects of a client, and exits 0; on any failure it prints the reason to stderr and
exits 1. It never takes more than :data:`DEADLINE` seconds.

An ``auth/*`` scenario gets an ``auth=`` (and the ``open_url=`` handler the suite's mock
authorization server needs) from :mod:`client_auth`: the code flow's ``OAuthClient``, one
of the extensions' grants, or DPoP around the code flow; it then lists the tools and calls
each.

The scenario decides which era the client speaks: ``2026-07-28`` when the suite says so or
the scenario exists only there, else the initialize era up to the suite's version.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Final

from mcp_sansio._cli import accept_defaults
from mcp_sansio._versions import VERSIONS, Era
from mcp_sansio.asyncio import Client
from mcp_sansio.session import McpError

#: The bound on one run, in seconds (the suite kills the client at 30).
DEADLINE: Final = 25.0
MODERN: Final = "2026-07-28"
#: Scenarios that exist only for 2026-07-28.
MODERN_SCENARIOS: Final = frozenset(
    {
        "request-metadata",
        "http-standard-headers",
        "http-custom-headers",
        "http-invalid-tool-headers",
        "sep-2322-client-request-state",
        "json-schema-ref-no-deref",
    }
)
LEGACY: Final = tuple(
    sorted((v for v, s in VERSIONS.items() if s.era is Era.INITIALIZE), reverse=True)
)

Scenario = Callable[[Client, Mapping[str, Any]], Awaitable[None]]


def versions_for(scenario: str, wire: str | None) -> list[str]:
    """The protocol versions the client offers for ``scenario`` on the suite's ``wire``."""
    if wire == MODERN or (wire is None and scenario in MODERN_SCENARIOS):
        return [MODERN]
    if wire in LEGACY:
        return [v for v in LEGACY if v <= wire]
    return list(LEGACY)


async def tool_names(client: Client) -> list[str]:
    """Every tool's name, through every page of ``tools/list``."""
    names: list[str] = []
    cursor: str | None = None
    while True:
        page = await client.list_tools(cursor)
        names += [tool["name"] for tool in page.get("tools", [])]
        cursor = page.get("nextCursor")
        if not cursor:
            return names


async def just_open(client: Client, context: Mapping[str, Any]) -> None:
    """``initialize``, ``request-metadata``, ``json-schema-ref-no-deref`` and the default:
    open, and list the tools if the server has any."""
    if "tools" in (client.server_capabilities or {}):
        await tool_names(client)


async def tools_call(client: Client, context: Mapping[str, Any]) -> None:
    """``tools_call``: ``add_numbers`` with a=5, b=3."""
    await tool_names(client)
    result = await client.call_tool("add_numbers", {"a": 5, "b": 3})
    print(json.dumps(result))


async def elicitation_defaults(client: Client, context: Mapping[str, Any]) -> None:
    """``elicitation-sep1034-client-defaults``: call the tool; the handler accepts the
    elicitation with every default filled in."""
    for name in await tool_names(client):
        print(json.dumps(await client.call_tool(name, {})))


async def sse_retry(client: Client, context: Mapping[str, Any]) -> None:
    """``sse-retry``: the server closes the call's stream after a priming event with
    ``retry: 500``; the transport resumes it with ``GET`` and ``Last-Event-ID``."""
    await tool_names(client)
    print(json.dumps(await client.call_tool("test_reconnection", {})))


async def standard_headers(client: Client, context: Mapping[str, Any]) -> None:
    """``http-standard-headers``: every tool, resource and prompt, so that each method's
    ``Mcp-Method`` and ``Mcp-Name`` are exercised."""
    for name in await tool_names(client):
        await client.call_tool(name, {})
    resources = await client.list_resources()
    for resource in resources.get("resources", []):
        await client.read_resource(resource["uri"])
    prompts = await client.list_prompts()
    for prompt in prompts.get("prompts", []):
        await client.get_prompt(prompt["name"])


async def custom_headers(client: Client, context: Mapping[str, Any]) -> None:
    """``http-custom-headers``: the calls the scenario's context lists, whose arguments the
    transport mirrors into ``Mcp-Param-*`` headers."""
    await tool_names(client)
    calls = context.get("toolCalls") or []
    if not calls:
        raise RuntimeError("MCP_CONFORMANCE_CONTEXT has no toolCalls")
    for call in calls:
        await client.call_tool(call["name"], call.get("arguments") or {})


async def invalid_tool_headers(client: Client, context: Mapping[str, Any]) -> None:
    """``http-invalid-tool-headers``: try every tool; the transport refuses those whose
    ``x-mcp-header`` annotations are invalid (they fail here, and are never sent)."""
    refused = []
    for name in await tool_names(client):
        try:
            await client.call_tool(name, {"region": "us-west1", "value": "x"})
        except McpError as exc:
            refused.append(name)
            print(f"refused {name}: {exc.message}", file=sys.stderr)
    if "valid_tool" in refused:
        raise RuntimeError("the valid tool was refused")


async def request_state(client: Client, context: Mapping[str, Any]) -> None:
    """``sep-2322-client-request-state``: each MRTR tool; the session answers the input
    requests (elicitations, accepted) and retries with the server's ``requestState``."""
    names = await tool_names(client)
    order = [
        "test_mrtr_echo_state",
        "test_mrtr_unrelated",
        "test_mrtr_no_state",
        "test_mrtr_no_result_type",
    ]
    for name in [n for n in order if n in names] + [n for n in names if n not in order]:
        print(json.dumps(await client.call_tool(name, {})))


async def schema_preservation(client: Client, context: Mapping[str, Any]) -> None:
    """``json-schema-2020-12-preservation``: echo the focal tool's input schema back,
    unchanged, through ``json_schema_echo``."""
    page = await client.list_tools()
    tools = {tool["name"]: tool for tool in page.get("tools", [])}
    schema = tools["json_schema_2020_12_tool"]["inputSchema"]
    await client.call_tool("json_schema_echo", {"schema": schema})


async def auth_scenario(client: Client, context: Mapping[str, Any]) -> None:
    """Every ``auth/*`` scenario: list the tools and call each (the mock MCP server has
    ``test-tool``), so that requests go with the token (and, in the scope scenarios, the
    call that needs more scope is made)."""
    for name in await tool_names(client):
        await client.call_tool(name, {})


SCENARIOS: Final[Mapping[str, Scenario]] = {
    "initialize": just_open,
    "tools_call": tools_call,
    "elicitation-sep1034-client-defaults": elicitation_defaults,
    "sse-retry": sse_retry,
    "request-metadata": just_open,
    "http-standard-headers": standard_headers,
    "http-custom-headers": custom_headers,
    "http-invalid-tool-headers": invalid_tool_headers,
    "sep-2322-client-request-state": request_state,
    "json-schema-2020-12-preservation": schema_preservation,
    "json-schema-ref-no-deref": just_open,
}


async def run(url: str, scenario: str, wire: str | None, context: Mapping[str, Any]) -> None:
    """Connect to ``url`` and play ``scenario`` (an ``auth/*`` one with the authorization
    :mod:`client_auth` sets up for it)."""
    play = SCENARIOS.get(scenario, just_open)
    auth: dict[str, Any] = {}
    if scenario.startswith("auth/"):
        from client_auth import auth_for, open_url

        auth = {"auth": auth_for(url, scenario, wire, context), "open_url": open_url}
        play = auth_scenario
    client = Client.connect_http(
        url,
        # The SDK server of this scenario sends its elicitation request on the standalone
        # GET stream (it is not tied to the call's stream), so open one.
        listen=scenario == "elicitation-sep1034-client-defaults",
        versions=versions_for(scenario, wire),
        handlers={"elicitation/create": accept_defaults},
        client_info={"name": "mcp-sansio-conformance-client", "version": "1.0.0"},
        timeout=20.0,
        **auth,
    )
    async with client:
        await play(client, context)


def main(argv: list[str]) -> int:
    """Run the scenario named in the environment against ``argv[1]``; the exit status."""
    if len(argv) != 2:
        print("usage: client.py URL (with MCP_CONFORMANCE_SCENARIO set)", file=sys.stderr)
        return 2
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "initialize")
    wire = os.environ.get("MCP_CONFORMANCE_PROTOCOL_VERSION") or None
    try:
        context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
        asyncio.run(asyncio.wait_for(run(argv[1], scenario, wire, context), DEADLINE))
    except Exception as exc:
        print(f"{scenario}: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
