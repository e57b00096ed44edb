"""The representative messages the benchmarks measure, built deterministically.

Each :class:`Sample` is one JSON-RPC message as it would appear on the wire (one compact
line, as orjson writes it), plus what the typed layers need to know about it: whether it
is a request, a notification or a response, and which MCP method it belongs to (for a
response: the method of the request it answers).
"""

from __future__ import annotations

import base64
import random
from dataclasses import dataclass, field
from typing import Any, Final, Literal

import orjson

__all__ = ["PROTOCOL_VERSION", "SAMPLES", "Sample", "tool_call_request", "tool_call_result"]

#: The protocol version the typed layers structure for.
PROTOCOL_VERSION: Final = "2025-11-25"

Kind = Literal["request", "notification", "response"]


@dataclass(frozen=True)
class Sample:
    """One representative message."""

    key: str
    """Short identifier, used in JSON output."""
    label: str
    """Human-readable name, used in the table."""
    kind: Kind
    method: str
    """The MCP method (for a response: the method of the request it answers)."""
    message: dict[str, Any]
    """The whole JSON-RPC object."""
    small: bool = False
    """A "small message" in the sense of the targets."""
    line: bytes = field(init=False)
    """The wire form: compact JSON, as orjson writes it (no trailing newline)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "line", orjson.dumps(self.message))

    @property
    def payload(self) -> dict[str, Any]:
        """``params`` for a request or notification, ``result`` for a response."""
        body = self.message["result"] if self.kind == "response" else self.message["params"]
        assert isinstance(body, dict)
        return body


_WORDS_TEXT: Final = (
    "the protocol server client tool resource prompt message request response result "
    "content stream session capability version schema object string number array value "
    "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor"
)
_WORDS: Final = _WORDS_TEXT.split()


def _text(rng: random.Random, size: int) -> str:
    """Prose-like ASCII text of exactly ``size`` characters, with newlines and quotes."""
    parts: list[str] = []
    n = 0
    while n < size:
        word = rng.choice(_WORDS)
        r = rng.random()
        if r < 0.04:
            word += ".\n"
        elif r < 0.07:
            word = f'"{word}",'
        parts.append(word)
        n += len(word) + 1
    return " ".join(parts)[:size]


def tool_call_request(request_id: int = 7) -> dict[str, Any]:
    """A small ``tools/call`` request."""
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {
            "name": "get_weather",
            "arguments": {"city": "Paris", "units": "metric", "days": 3},
            "_meta": {"progressToken": f"tok-{request_id}"},
        },
    }


def tool_call_result(request_id: int = 7) -> dict[str, Any]:
    """Its result: one text content block of 200 bytes."""
    text = _text(random.Random(200), 200)
    assert len(text.encode()) == 200
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "result": {"content": [{"type": "text", "text": text}], "isError": False},
    }


def _tool(rng: random.Random, i: int) -> dict[str, Any]:
    verbs = ("get", "list", "create", "update", "delete", "search", "sync", "export")
    nouns = ("issue", "file", "calendar_event", "invoice", "ticket", "branch", "page", "user")
    verb, noun = verbs[i % len(verbs)], nouns[(i // len(verbs)) % len(nouns)]
    name = f"{verb}_{noun}_{i}"
    read_only = verb in ("get", "list", "search", "export")
    return {
        "name": name,
        "title": f"{verb.capitalize()} {noun.replace('_', ' ')} ({i})",
        "description": _text(rng, rng.randrange(80, 240)),
        "inputSchema": {
            "type": "object",
            "properties": {
                "id": {"type": "string", "description": f"The {noun} identifier"},
                "limit": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": 100,
                    "default": 20,
                    "description": "Maximum number of items to return",
                },
                "tags": {"type": "array", "items": {"type": "string"}},
                "verbose": {"type": "boolean", "default": False},
            },
            "required": ["id"],
        },
        "annotations": {
            "title": f"{verb.capitalize()} {noun}",
            "readOnlyHint": read_only,
            "destructiveHint": verb == "delete",
            "idempotentHint": read_only or verb == "update",
            "openWorldHint": i % 3 == 0,
        },
    }


def _tools_list(n: int) -> dict[str, Any]:
    rng = random.Random(50)
    return {"jsonrpc": "2.0", "id": 3, "result": {"tools": [_tool(rng, i) for i in range(n)]}}


def _read_text(size: int) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": 11,
        "result": {
            "contents": [
                {
                    "uri": "file:///project/docs/guide.md",
                    "mimeType": "text/markdown",
                    "text": _text(random.Random(64), size),
                }
            ]
        },
    }


def _read_blob(encoded_size: int) -> dict[str, Any]:
    raw = random.Random(1).randbytes(encoded_size // 4 * 3)
    blob = base64.b64encode(raw).decode("ascii")
    assert len(blob) == encoded_size
    return {
        "jsonrpc": "2.0",
        "id": 12,
        "result": {
            "contents": [
                {
                    "uri": "file:///project/assets/data.bin",
                    "mimeType": "application/octet-stream",
                    "blob": blob,
                }
            ]
        },
    }


def _progress() -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "method": "notifications/progress",
        "params": {"progressToken": "tok-7", "progress": 50, "total": 100, "message": "Halfway"},
    }


SAMPLES: Final[tuple[Sample, ...]] = (
    Sample(
        "call_request",
        "tools/call request",
        "request",
        "tools/call",
        tool_call_request(),
        small=True,
    ),
    Sample(
        "call_result",
        "tools/call result, 200 B text",
        "response",
        "tools/call",
        tool_call_result(),
        small=True,
    ),
    Sample(
        "tools_list_50", "tools/list result, 50 tools", "response", "tools/list", _tools_list(50)
    ),
    Sample(
        "read_text_64k",
        "resources/read, 64 KiB text",
        "response",
        "resources/read",
        _read_text(64 * 1024),
    ),
    Sample(
        "read_blob_1m",
        "resources/read, 1 MiB base64 blob",
        "response",
        "resources/read",
        _read_blob(1024 * 1024),
    ),
    Sample(
        "progress",
        "notifications/progress",
        "notification",
        "notifications/progress",
        _progress(),
        small=True,
    ),
)
