"""The client's requests, by name: ``(method, params)`` for each client→server method.

The adapters' clients are thin wrappers around these (``await client.call_tool(...)`` is
``await client.request(*requests.call_tool(...))``), so the mapping from a call to its
params is written once, here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = [
    "call_tool",
    "complete",
    "get_prompt",
    "list_prompts",
    "list_resource_templates",
    "list_resources",
    "list_tools",
    "listen",
    "ping",
    "read_resource",
    "set_logging_level",
    "subscribe",
    "unsubscribe",
]

Req = tuple[str, dict[str, Any] | None]


def _paged(cursor: str | None) -> dict[str, Any] | None:
    return {"cursor": cursor} if cursor is not None else None


def ping() -> Req:
    """``ping`` (initialize era)."""
    return "ping", None


def list_tools(cursor: str | None = None) -> Req:
    """``tools/list``."""
    return "tools/list", _paged(cursor)


def call_tool(name: str, arguments: Mapping[str, Any] | None = None) -> Req:
    """``tools/call``."""
    return "tools/call", {"name": name, "arguments": dict(arguments or {})}


def list_resources(cursor: str | None = None) -> Req:
    """``resources/list``."""
    return "resources/list", _paged(cursor)


def list_resource_templates(cursor: str | None = None) -> Req:
    """``resources/templates/list``."""
    return "resources/templates/list", _paged(cursor)


def read_resource(uri: str) -> Req:
    """``resources/read``."""
    return "resources/read", {"uri": uri}


def subscribe(uri: str) -> Req:
    """``resources/subscribe`` (initialize era)."""
    return "resources/subscribe", {"uri": uri}


def unsubscribe(uri: str) -> Req:
    """``resources/unsubscribe`` (initialize era)."""
    return "resources/unsubscribe", {"uri": uri}


def list_prompts(cursor: str | None = None) -> Req:
    """``prompts/list``."""
    return "prompts/list", _paged(cursor)


def get_prompt(name: str, arguments: Mapping[str, str] | None = None) -> Req:
    """``prompts/get``."""
    params: dict[str, Any] = {"name": name}
    if arguments:
        params["arguments"] = dict(arguments)
    return "prompts/get", params


def complete(
    ref: Mapping[str, Any],
    argument_name: str,
    value: str,
    context_arguments: Mapping[str, str] | None = None,
) -> Req:
    """``completion/complete``; ``ref`` is ``{"type": "ref/prompt", "name": ...}`` or
    ``{"type": "ref/resource", "uri": ...}``."""
    params: dict[str, Any] = {"ref": dict(ref), "argument": {"name": argument_name, "value": value}}
    if context_arguments:
        params["context"] = {"arguments": dict(context_arguments)}
    return "completion/complete", params


def set_logging_level(level: str) -> Req:
    """``logging/setLevel`` (initialize era)."""
    return "logging/setLevel", {"level": level}


def listen(
    *,
    tools: bool = False,
    prompts: bool = False,
    resources: bool = False,
    resource_uris: Sequence[str] = (),
) -> Req:
    """``subscriptions/listen`` (2026-07-28): the notifications to receive."""
    wanted: dict[str, Any] = {}
    if tools:
        wanted["toolsListChanged"] = True
    if prompts:
        wanted["promptsListChanged"] = True
    if resources:
        wanted["resourcesListChanged"] = True
    if resource_uris:
        wanted["resourceSubscriptions"] = list(resource_uris)
    return "subscriptions/listen", {"notifications": wanted}
