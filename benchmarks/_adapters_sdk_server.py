"""The official SDK's side of the stdio benchmark: an ``MCPServer`` with one ``echo`` tool,
the same tool as the example server's, run over stdio (``python _adapters_sdk_server.py``)."""

from __future__ import annotations

from mcp.server import MCPServer

server = MCPServer("bench-echo")


@server.tool()
def echo(message: str) -> str:
    """Echo the message back."""
    return f"Echo: {message}"


if __name__ == "__main__":
    server.run()
