"""What the example server's handlers share: its names and media, the context they use,
and the small builders and readers of content, schemas and answers."""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping, Sequence
from typing import Any, Final, Protocol

from .._errors import ErrorCode
from ..server import ToolError
from ..session import AsyncContext, Job, McpError, SessionBase

__all__ = ["AUDIO_WAV", "IMAGE_PNG", "SERVER_NAME", "Context"]

#: ``serverInfo.name`` of the example server.
SERVER_NAME: Final = "mcp-sansio-example"

#: A 1x1 red PNG: the image of the image tools, prompt and binary resource.
#:
#: :meta hide-value:
IMAGE_PNG: Final = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
)
#: A WAV file with one silent sample: the audio of ``test_audio_content``.
#:
#: :meta hide-value:
AUDIO_WAV: Final = base64.b64decode("UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=")

_INSTRUCTIONS: Final = (
    "The example server of mcp-sansio: tools, resources, prompts and completion that exercise "
    "every feature of MCP. Try `echo`, `add` or `test_tool_with_progress`."
)


class Context(AsyncContext, Protocol):
    """What the example's handlers use of their context: :class:`~mcp_sansio.session.AsyncContext`
    and a few more members of :class:`~mcp_sansio.session.ContextBase` (the asyncio and trio
    contexts have them all)."""

    @property
    def session(self) -> SessionBase:
        """The session the request arrived on."""

    @property
    def job(self) -> Job:
        """The job being run (2026-07-28: its ``inputs`` are the answers the client has
        given so far)."""

    @property
    def protocol_version(self) -> str | None:
        """The protocol version of the session, or of this request in 2026-07-28."""

    def close_stream(self) -> None:
        """Over Streamable HTTP in the initialize era, end the response carrying this
        request now (the client resumes it); elsewhere, nothing."""


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def _image() -> dict[str, Any]:
    return {"type": "image", "data": base64.b64encode(IMAGE_PNG).decode(), "mimeType": "image/png"}


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _object(properties: Mapping[str, Any], required: Sequence[str] = ()) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": dict(properties)}
    if required:
        schema["required"] = list(required)
    return schema


_NO_ARGUMENTS: Final = _object({})

_STRING: Final = {"type": "string"}
_NAME: Final = {"name": _STRING}
_OK: Final = {"ok": {"type": "boolean"}}
_CONFIRM: Final = _object({"confirmed": {"type": "boolean", "description": "Confirm?"}})

#: Completion candidates for the arguments of ``test_prompt_with_arguments``.
_ARG_VALUES: Final = {
    "arg1": ("alpha", "apple", "apricot", "banana", "blueberry", "cherry"),
    "arg2": ("red", "green", "blue", "yellow"),
}

_WATCHED: Final = "test://watched-resource"


def _argument(arguments: Mapping[str, Any], name: str, kind: type | tuple[type, ...]) -> Any:
    """The argument ``name``, checked against ``kind``; a tool error when it is not there."""
    value = arguments.get(name)
    if isinstance(value, bool) or not isinstance(value, kind):
        raise ToolError(f"argument {name!r} is missing or of the wrong type")
    return value


def _prompt_argument(arguments: Mapping[str, Any], name: str) -> str:
    value = arguments.get(name)
    if not isinstance(value, str):
        raise McpError(ErrorCode.INVALID_PARAMS, f"missing required argument {name!r}")
    return value


def _field(answer: Mapping[str, Any], name: str, default: str) -> str:
    """Field ``name`` of an accepted elicitation's content (``default`` otherwise)."""
    content = answer.get("content") if answer.get("action") == "accept" else None
    value = content.get(name) if isinstance(content, Mapping) else None
    return value if isinstance(value, str) else default


def _sampled_text(answer: Mapping[str, Any]) -> str | None:
    """The text of a ``CreateMessageResult`` (its first block, 2025-11-25 allowing a list)."""
    content = answer.get("content")
    if isinstance(content, list):
        content = content[0] if content else None
    text = content.get("text") if isinstance(content, Mapping) else None
    return text if isinstance(text, str) else None


def _elicited(result: Mapping[str, Any]) -> str:
    """``action=…, content=…`` of an elicitation result, as the conformance fixture says it."""
    return f"action={result.get('action')}, content={_compact(result.get('content') or {})}"


def _confirmed(answer: Mapping[str, Any]) -> bool:
    """Whether an elicitation was accepted with ``ok: true``."""
    content = answer.get("content") if answer.get("action") == "accept" else None
    return isinstance(content, Mapping) and content.get("ok") is True


def _count_roots(answer: Mapping[str, Any]) -> int:
    """How many roots a ``ListRootsResult`` holds."""
    roots = answer.get("roots")
    return len(roots) if isinstance(roots, list) else 0
