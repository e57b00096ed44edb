"""The example server bundled with mcp-sansio: every feature of MCP, small enough to read.

:func:`build_server` returns a :class:`~mcp_sansio.server.Server` whose handlers are
coroutine functions that talk to the client only through their context (``ctx.progress()``,
``ctx.log()``, ``ctx.resource_updated()``, ``await ctx.sleep()``, ``await ctx.elicit()``,
``await ctx.sample()``, ``await ctx.list_roots()``), so the same code runs on the asyncio and
the trio adapters, in both eras of the protocol: in the initialize era a handler that asks
the client sends it a request and waits; in 2026-07-28 the session answers
``input_required`` and runs the handler again on the retry, with the answer in hand.

The names are those of the MCP conformance suite's fixture (``test_simple_text``,
``test_tool_with_progress``, ``test://static-text``, ``test_prompt_with_arguments``, …), so
the server can stand in for it, plus a few friendly ones (``echo``, ``add``, …). That
includes the 2026-07-28 fixtures: the multi-round-trip tools ``test_input_required_result_*``
(which ask under the ``inputRequests`` keys the suite looks for), ``test_missing_capability``,
``test_logging_tool``, ``test_streaming_elicitation``, ``test_x_mcp_header`` and the list
mutation hooks, and ``test_reconnection``, which ends its Streamable HTTP response mid-call.
``python -m mcp_sansio serve`` runs it on stdio, on a socket, or over Streamable HTTP.

Its parts: the tools (``_tools``), asking the client under keys and the multi-round-trip
tools (``_asking``), the resources, prompts and completion (``_resources``), and what they
share (``_parts``).
"""

from __future__ import annotations

from typing import Any, Final

from .._version import __version__
from ..server import Server
from ._asking import add_input_required_tools
from ._parts import AUDIO_WAV, IMAGE_PNG, SERVER_NAME, Context
from ._resources import add_completion, add_prompts, add_resources
from ._tools import add_tools

__all__ = [
    "AUDIO_WAV",
    "IMAGE_PNG",
    "SERVER_NAME",
    "Context",
    "build_server",
]

_INSTRUCTIONS: Final = (
    "The example server of mcp-sansio: tools, resources, prompts and completion that exercise "
    "every feature of MCP. Try `echo`, `add` or `test_tool_with_progress`."
)


def build_server() -> Server:
    """A new example server (its watched resource's state is its own)."""
    server = Server(
        SERVER_NAME,
        __version__,
        title="mcp-sansio example server",
        instructions=_INSTRUCTIONS,
    )
    watched: dict[str, Any] = {"content": "Watched resource content", "version": 0}
    add_tools(server, watched)
    add_input_required_tools(server)
    add_resources(server, watched)
    add_prompts(server)
    add_completion(server)
    return server
