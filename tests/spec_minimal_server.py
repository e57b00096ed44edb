"""A minimal MCP server over stdio that does what the specification's text asks and nothing
more, written without mcp_sansio (raw JSON lines), for tests/test_probe_minimal.py.

It speaks the four initialize-era versions and declares one capability, ``tools``, with one
tool. What it does, each for a sentence of the text:

- every line that is not JSON gets -32700 with ``"id": null``, every JSON value that is not a
  request or notification -32600 (JSON-RPC 2.0, 5.1); notifications are never answered
  (JSON-RPC 2.0, 4.1); responses are dropped;
- ``initialize`` is answered with the version asked for when it speaks it, else its latest
  (MCP, Basic > Lifecycle > Version Negotiation); a second one is refused;
- before ``initialize``, a request other than ``ping`` is refused with -32002 (an error the
  text leaves to the server, as LSP does: the probe must take any error there);
- ``ping`` gets ``{}`` at any time (MCP, Basic > Utilities > Ping);
- requests are served from the moment ``initialize`` is answered (the client waits only for
  that answer; the server need not wait for ``notifications/initialized`` to serve);
- unknown methods get -32601; params the schema requires, missing or of the wrong type,
  -32602; an unknown tool -32602 (MCP, Server Features > Tools > Error Handling);
- 2025-03-26 alone has JSON-RPC batches: an array is answered with an array of the answers
  (an empty array, or one without requests, as JSON-RPC 2.0, 6 says); an empty array, or
  one mixing requests and responses (the schema's batch types do not), gets one -32600;
- a response, well formed or not, is never answered.

Nothing more: no logging, no progress, no subscriptions, no size limit of its own.

Flags make it break one rule each, for the tests of how levels drive the verdict:
``--answer-responses`` answers a malformed response with -32600 (an implied rule: a
warning), ``--parse-error-code N`` answers a line that is not JSON with error N instead of
-32700 (a MUST of JSON-RPC 2.0: a failure), ``--params-code N`` answers params the schema
refuses with error N instead of -32602 (for ``tools/call``, implied: a warning),
``--log-undeclared`` sends a ``notifications/message`` after each ``initialize`` answer
without declaring ``logging`` (a MUST of the logging page, in every version: a failure),
``--answer-twice METHOD`` answers each ``METHOD`` request twice (JSON-RPC's one Response
per call: a failure).
"""

from __future__ import annotations

import json
import sys
from typing import Any

VERSIONS = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"]
TOOL = {
    "name": "echo",
    "description": "Echoes its text.",
    "inputSchema": {
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "required": ["text"],
    },
}
state: dict[str, Any] = {"version": None}
ANSWER_RESPONSES = "--answer-responses" in sys.argv
PARSE_ERROR = (
    int(sys.argv[sys.argv.index("--parse-error-code") + 1])
    if "--parse-error-code" in sys.argv
    else -32700
)
PARAMS = (
    int(sys.argv[sys.argv.index("--params-code") + 1]) if "--params-code" in sys.argv else -32602
)
LOG_UNDECLARED = "--log-undeclared" in sys.argv
TWICE = sys.argv[sys.argv.index("--answer-twice") + 1] if "--answer-twice" in sys.argv else None


def error(rid: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": message}}


def result(rid: Any, value: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "result": value}


def is_id(value: Any) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def request(message: dict[str, Any]) -> dict[str, Any]:
    rid, method, params = message["id"], message["method"], message.get("params") or {}
    if method == "ping":
        return result(rid, {})
    if method == "initialize":
        if state["version"] is not None:
            return error(rid, -32600, "initialize was already answered")
        asked = params.get("protocolVersion")
        if (
            not isinstance(asked, str)
            or not isinstance(params.get("capabilities"), dict)
            or not isinstance(params.get("clientInfo"), dict)
        ):
            return error(rid, -32602, "initialize needs protocolVersion, capabilities, clientInfo")
        state["version"] = asked if asked in VERSIONS else VERSIONS[0]
        return result(
            rid,
            {
                "protocolVersion": state["version"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "spec-minimal", "version": "0"},
            },
        )
    if state["version"] is None:
        return error(rid, -32002, "the session is not initialized")
    if method == "tools/list":
        cursor = params.get("cursor")
        if cursor is not None and not isinstance(cursor, str):
            return error(rid, PARAMS, "cursor must be a string")
        return result(rid, {"tools": [TOOL]})
    if method == "tools/call":
        name, arguments = params.get("name"), params.get("arguments", {})
        if not isinstance(name, str) or not isinstance(arguments, dict):
            return error(rid, PARAMS, "tools/call needs a name and object arguments")
        if name != "echo":
            return error(rid, -32602, f"Unknown tool: {name}")
        text = arguments.get("text")
        return result(rid, {"content": [{"type": "text", "text": str(text)}], "isError": False})
    return error(rid, -32601, f"Method not found: {method}")


def answer(value: Any) -> Any:
    """The answer to one JSON value (None: no answer)."""
    if not isinstance(value, dict) or value.get("jsonrpc") != "2.0":
        return error(None, -32600, "not a JSON-RPC 2.0 message")
    if "method" not in value:
        if ("result" in value or "error" in value) and not ANSWER_RESPONSES:
            return None  # a response, well formed or not: never answered (we asked nothing)
        return error(None, -32600, "neither a request, a notification nor a response")
    if not isinstance(value["method"], str) or "result" in value or "error" in value:
        return error(value.get("id") if is_id(value.get("id")) else None, -32600, "invalid")
    if "params" in value and not isinstance(value["params"], dict):
        return error(value.get("id") if is_id(value.get("id")) else None, -32600, "bad params")
    if "id" not in value:
        return None  # a notification
    if not is_id(value["id"]):
        return error(None, -32600, "the id must be a string or an integer")
    return request(value)


def main() -> None:
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except ValueError:
            value = None
            out: Any = error(None, PARSE_ERROR, "Parse error")
        else:
            if isinstance(value, list) and state["version"] == "2025-03-26":
                responses = [v for v in value if isinstance(v, dict) and "method" not in v]
                if not value or (responses and len(responses) < len(value)):
                    # empty, or requests and responses mixed: not a batch of either kind
                    out = error(None, -32600, "not a batch of requests nor of responses")
                else:
                    out = [a for a in map(answer, value) if a is not None] or None
            else:
                out = answer(value)
        if out is not None:
            sys.stdout.write(json.dumps(out) + "\n")
            if TWICE is not None and isinstance(value, dict) and value.get("method") == TWICE:
                sys.stdout.write(json.dumps(out) + "\n")
            if LOG_UNDECLARED and isinstance(value, dict) and value.get("method") == "initialize":
                log = {"level": "info", "data": "undeclared"}
                message = {"jsonrpc": "2.0", "method": "notifications/message", "params": log}
                sys.stdout.write(json.dumps(message) + "\n")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
