"""The floor of the stdio benchmark: a tiny echo server, orjson over pipes, no MCP.

Reads one JSON-RPC request a line from stdin and writes the answer an MCP ``echo`` tool
would give (``{"content": [{"type": "text", "text": "Echo: …"}]}``) as one line to stdout,
until stdin closes. ``initialize`` (the startup probe) gets a minimal result.
"""

from __future__ import annotations

import sys

import orjson


def main() -> None:
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    loads, dumps = orjson.loads, orjson.dumps
    for line in stdin:
        request = loads(line)
        params = request.get("params") or {}
        if request.get("method") == "initialize":
            result = {"protocolVersion": params.get("protocolVersion"), "capabilities": {}}
        else:
            text = "Echo: " + params["arguments"]["message"]
            result = {"content": [{"type": "text", "text": text}]}
        stdout.write(dumps({"jsonrpc": "2.0", "id": request["id"], "result": result}) + b"\n")
        stdout.flush()


if __name__ == "__main__":
    main()
