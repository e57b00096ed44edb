"""The example server's resources (static, binary, a template, one that changes),
prompts (one of them multi-round-trip) and argument completion."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..server import Server
from ._asking import _ask, _elicitation
from ._parts import (
    _ARG_VALUES,
    _STRING,
    _WATCHED,
    IMAGE_PNG,
    Context,
    _compact,
    _field,
    _image,
    _prompt_argument,
    _text,
)

__all__ = ["add_completion", "add_prompts", "add_resources"]


def add_resources(server: Server, watched: dict[str, Any]) -> None:
    """Register the resources on ``server``; ``test://watched-resource`` reads ``watched``."""

    @server.resource("test://static-text", name="static-text", mime_type="text/plain")
    async def static_text(ctx: Context, uri: str) -> str:
        """A static text resource for testing."""
        return "This is the content of the static text resource."

    @server.resource("test://static-binary", name="static-binary", mime_type="image/png")
    async def static_binary(ctx: Context, uri: str) -> bytes:
        """A static binary resource (image) for testing."""
        return IMAGE_PNG

    @server.resource_template(
        "test://template/{id}/data", name="template", mime_type="application/json"
    )
    async def template(
        ctx: Context, uri: str, variables: Mapping[str, str]
    ) -> list[dict[str, Any]]:
        """A resource template with parameter substitution."""
        ident = variables["id"]
        data = {"id": ident, "templateTest": True, "data": f"Data for ID: {ident}"}
        return [{"uri": uri, "mimeType": "application/json", "text": _compact(data)}]

    @server.resource(_WATCHED, name="watched-resource", mime_type="text/plain")
    async def watched_resource(ctx: Context, uri: str) -> str:
        """A resource that changes when the `update-resource` tool is called (subscribe to
        it)."""
        return str(watched["content"])


def add_prompts(server: Server) -> None:
    """Register the prompts on ``server``."""

    @server.prompt("test_simple_prompt")
    async def simple_prompt(ctx: Context, arguments: Mapping[str, Any]) -> list[dict[str, Any]]:
        """A simple prompt without arguments."""
        return [{"role": "user", "content": _text("This is a simple prompt for testing.")}]

    @server.prompt(
        "test_prompt_with_arguments",
        arguments=[
            {"name": "arg1", "description": "First test argument", "required": True},
            {"name": "arg2", "description": "Second test argument", "required": True},
        ],
    )
    async def prompt_with_arguments(
        ctx: Context, arguments: Mapping[str, Any]
    ) -> list[dict[str, Any]]:
        """A prompt with required arguments."""
        arg1 = _prompt_argument(arguments, "arg1")
        arg2 = _prompt_argument(arguments, "arg2")
        text = f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"
        return [{"role": "user", "content": _text(text)}]

    @server.prompt(
        "test_prompt_with_embedded_resource",
        arguments=[
            {"name": "resourceUri", "description": "URI of the resource to embed", "required": True}
        ],
    )
    async def prompt_with_embedded_resource(
        ctx: Context, arguments: Mapping[str, Any]
    ) -> list[dict[str, Any]]:
        """A prompt that includes an embedded resource."""
        uri = _prompt_argument(arguments, "resourceUri")
        resource = {
            "uri": uri,
            "mimeType": "text/plain",
            "text": "Embedded resource content for testing.",
        }
        return [
            {"role": "user", "content": {"type": "resource", "resource": resource}},
            {"role": "user", "content": _text("Please process the embedded resource above.")},
        ]

    @server.prompt("test_prompt_with_image")
    async def prompt_with_image(ctx: Context, arguments: Mapping[str, Any]) -> list[dict[str, Any]]:
        """A prompt that includes image content."""
        return [
            {"role": "user", "content": _image()},
            {"role": "user", "content": _text("Please analyze the image above.")},
        ]

    @server.prompt("test_input_required_result_prompt")
    async def input_required_prompt(
        ctx: Context, arguments: Mapping[str, Any]
    ) -> list[dict[str, Any]]:
        """A prompt that first asks the user for its context (key `user_context`): a
        multi-round-trip prompts/get in 2026-07-28."""
        question = _elicitation("What context should the prompt use?", {"context": _STRING})
        answers = await _ask(ctx, {"user_context": question})
        context = _field(answers["user_context"], "context", "none")
        return [{"role": "user", "content": _text(f"Prompt with context: {context}")}]


def add_completion(server: Server) -> None:
    """Register the completion handler on ``server``."""

    @server.completion
    async def complete(
        ctx: Context,
        ref: Mapping[str, Any],
        argument: Mapping[str, Any],
        context_arguments: Mapping[str, Any],
    ) -> list[str]:
        """Values for the arguments of ``test_prompt_with_arguments`` and the ``id`` of the
        template, that start with what was typed."""
        name = argument.get("name")
        typed = str(argument.get("value") or "")
        candidates: Sequence[str] = ()
        if ref.get("type") == "ref/prompt" and ref.get("name") == "test_prompt_with_arguments":
            candidates = _ARG_VALUES.get(str(name), ())
        elif ref.get("type") == "ref/resource" and ref.get("uri") == "test://template/{id}/data":
            candidates = [str(i) for i in range(1, 11)] if name == "id" else ()
        return [c for c in candidates if c.startswith(typed)]
