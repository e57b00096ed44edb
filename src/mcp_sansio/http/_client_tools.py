"""What a Streamable HTTP client learns of the server's tools, for 2026-07-28's
``Mcp-Param-*`` headers: the ``x-mcp-header`` annotations of each tool in the ``tools/list``
results that go by, bounded in tools and in bytes.
"""

from __future__ import annotations

from typing import Any, Final

from ._headers import header_params

__all__ = ["ToolHeaders"]

#: The most tools whose ``x-mcp-header`` annotations the transport remembers, and the
#: bytes they may take (each costs its name, its arguments and suffixes, and
#: ``_TOOL_COST``; 4 MiB): past either, the tools learned first are forgotten (a call to
#: one goes without its ``Mcp-Param-*`` headers, which the server refuses with -32020).
#: Only tools with annotations (valid or not) are remembered: the others need nothing.
_MAX_TOOLS: Final = 65536
_MAX_TOOL_BYTES: Final = 4 * 1024 * 1024
_TOOL_COST: Final = 384  # a dict entry, the name object and a small dict of suffixes


def _chars(text: str) -> int:
    """The bytes ``text`` may take in memory: 4 a character unless it is ASCII."""
    return len(text) if text.isascii() else 4 * len(text)


def _tool_cost(name: str, params: dict[str, str] | None) -> int:
    """What a remembered tool counts within ``_MAX_TOOL_BYTES``."""
    size = _TOOL_COST + _chars(name)
    if params:
        size += sum(_chars(argument) + len(suffix) for argument, suffix in params.items())
    return size


class ToolHeaders:
    """The ``{argument: header suffix}`` of each annotated tool (``None`` for invalid
    annotations), the tools learned first forgotten first past ``_MAX_TOOLS`` tools or
    ``_MAX_TOOL_BYTES`` bytes (O(1) amortized: each is forgotten once)."""

    __slots__ = ("bytes", "known")

    def __init__(self) -> None:
        self.known: dict[str, dict[str, str] | None] = {}  # first learned first
        self.bytes = 0  # what known counts within _MAX_TOOL_BYTES

    def get(self, name: str) -> dict[str, str] | None:
        """The annotations of tool ``name``: ``{}`` for one not seen or with none."""
        return self.known.get(name, {})

    def learn(self, result: dict[str, Any]) -> None:
        """Take the tools of a ``tools/list`` result."""
        tools = result.get("tools")
        if type(tools) is not list:
            return
        known = self.known
        for tool in tools:
            if type(tool) is dict and type(tool.get("name")) is str:
                name = tool["name"]
                if name in known:
                    self.bytes -= _tool_cost(name, known.pop(name))
                params = header_params(tool.get("inputSchema"))
                if params == {}:
                    continue  # nothing to mirror: nothing to remember
                known[name] = params
                self.bytes += _tool_cost(name, params)
                while len(known) > _MAX_TOOLS or self.bytes > _MAX_TOOL_BYTES:
                    first = next(iter(known))
                    self.bytes -= _tool_cost(first, known.pop(first))
