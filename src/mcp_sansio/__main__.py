"""``python -m mcp_sansio``: a real exchange between a client and a server ``Connection``.

Both sides run in this process and talk through bytes only: every line printed is exactly
what one side's ``send()`` returned and the other side's ``receive_data()`` was fed. The
server side is a tiny application (one ``echo`` tool) written against the public API.
Adapters for stdio, sockets and HTTP, and a fuller example server, come later.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any, TextIO

from ._connection import Connection
from ._events import Event, InvalidMessage, Notification, Request, Response
from ._sentinels import NEED_DATA
from ._state import Role
from ._version import __version__

__all__ = ["main"]

_TOOLS = [
    {
        "name": "echo",
        "description": "Echo the message back.",
        "inputSchema": {
            "type": "object",
            "properties": {"message": {"type": "string"}},
            "required": ["message"],
        },
    }
]
_INFO = {"name": "mcp-sansio-demo", "version": __version__}


def _answer(server: Connection, request: Request) -> Event:
    """The demo server application: what to answer to one request."""
    method = request.method
    params: dict[str, Any] = request.params or {}
    if method == "initialize":
        return Response(
            id=request.id,
            result={
                "protocolVersion": params["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": _INFO,
            },
        )
    if method == "server/discover":
        return Response(id=request.id, result=server.discover_result())
    if method == "tools/list":
        return Response(id=request.id, result={"tools": _TOOLS})
    if method == "tools/call":
        text = str((params.get("arguments") or {}).get("message", ""))
        return Response(id=request.id, result={"content": [{"type": "text", "text": text}]})
    return Response(id=request.id, result={})


class _Wire:
    """Moves bytes between the two connections and prints them."""

    def __init__(self, client: Connection, server: Connection, out: TextIO) -> None:
        self.client, self.server, self.out = client, server, out

    def client_sends(self, event: Event) -> Event:
        """The client sends ``event``; the server application answers; returns the answer
        as the client sees it."""
        data = self.client.send(event)
        self.out.write(f"C->S {data.decode()}")
        self.server.receive_data(data)
        received = self.server.next_event()
        assert received is not NEED_DATA
        assert not isinstance(received, InvalidMessage)
        if not isinstance(received, Request):
            return received
        reply = self.server.send(_answer(self.server, received))
        self.out.write(f"S->C {reply.decode()}")
        self.client.receive_data(reply)
        answer = self.client.next_event()
        assert answer is not NEED_DATA
        return answer


def _initialize_era(out: TextIO) -> None:
    client = Connection(Role.CLIENT, versions=["2025-11-25"])
    server = Connection(Role.SERVER, capabilities={"tools": {}})
    wire = _Wire(client, server, out)
    wire.client_sends(
        Request(
            id=client.next_request_id(),
            method="initialize",
            params={
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "mcp-sansio-demo-client", "version": __version__},
            },
        )
    )
    wire.client_sends(Notification(method="notifications/initialized"))
    wire.client_sends(Request(id=client.next_request_id(), method="tools/list"))
    answer = wire.client_sends(
        Request(
            id=client.next_request_id(),
            method="tools/call",
            params={"name": "echo", "arguments": {"message": "hello over MCP"}},
        )
    )
    assert isinstance(answer, Response)
    out.write(f"-> negotiated {client.protocol_version}, state {client.state.value}\n")


def _stateless_era(out: TextIO) -> None:
    client = Connection(Role.CLIENT, capabilities={})
    server = Connection(Role.SERVER, capabilities={"tools": {}})
    wire = _Wire(client, server, out)
    wire.client_sends(Request(id=client.next_request_id(), method="server/discover"))
    out.write(f"-> probe answered: era {client.era and client.era.value}\n")
    wire.client_sends(
        Request(
            id=client.next_request_id(),
            method="tools/call",
            params={"name": "echo", "arguments": {"message": "hello, statelessly"}},
        )
    )
    out.write(f"-> version {client.protocol_version}, state {client.state.value}\n")


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    """Run the demonstration; returns the exit status."""
    parser = argparse.ArgumentParser(prog="mcp-sansio", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"mcp-sansio {__version__}")
    parser.parse_args(argv)
    stream = out or sys.stdout
    stream.write(f"mcp-sansio {__version__}: a client and a server Connection, bytes only\n")
    stream.write("\n== initialize era ==\n")
    _initialize_era(stream)
    stream.write("\n== stateless era (a dual-era client probes with server/discover) ==\n")
    _stateless_era(stream)
    return 0


if __name__ == "__main__":
    sys.exit(main())
