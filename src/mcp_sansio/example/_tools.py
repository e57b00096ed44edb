"""The example server's tools: content of each kind, logging, progress, errors, sampling,
elicitation, roots, structured output, the Streamable HTTP fixtures of the conformance suite
and its 2026-07-28 fixtures that need no answers from the client under keys (those are in
:mod:`~mcp_sansio.example._asking`)."""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Any, Final

from ..server import Server, ToolError
from ._parts import (
    _CONFIRM,
    _NO_ARGUMENTS,
    _WATCHED,
    AUDIO_WAV,
    Context,
    _argument,
    _compact,
    _elicited,
    _image,
    _object,
    _sampled_text,
    _text,
)

__all__ = ["add_tools"]

_ELICIT_FORM: Final = _object(
    {"response": {"type": "string", "description": "User's response"}}, ["response"]
)

_ELICIT_DEFAULTS: Final = _object(
    {
        "name": {"type": "string", "description": "User name", "default": "John Doe"},
        "age": {"type": "integer", "description": "User age", "default": 30},
        "score": {"type": "number", "description": "User score", "default": 95.5},
        "status": {
            "type": "string",
            "description": "User status",
            "enum": ["active", "inactive", "pending"],
            "default": "active",
        },
        "verified": {"type": "boolean", "description": "Verification status", "default": True},
    }
)

_ELICIT_ENUMS: Final = _object(
    {
        "untitledSingle": {
            "type": "string",
            "description": "Select one option",
            "enum": ["option1", "option2", "option3"],
        },
        "titledSingle": {
            "type": "string",
            "description": "Select one option with titles",
            "oneOf": [
                {"const": "value1", "title": "First Option"},
                {"const": "value2", "title": "Second Option"},
                {"const": "value3", "title": "Third Option"},
            ],
        },
        "legacyEnum": {
            "type": "string",
            "description": "Select one option (legacy)",
            "enum": ["opt1", "opt2", "opt3"],
            "enumNames": ["Option One", "Option Two", "Option Three"],
        },
        "untitledMulti": {
            "type": "array",
            "description": "Select multiple options",
            "minItems": 1,
            "maxItems": 3,
            "items": {"type": "string", "enum": ["option1", "option2", "option3"]},
        },
        "titledMulti": {
            "type": "array",
            "description": "Select multiple options with titles",
            "minItems": 1,
            "maxItems": 3,
            "items": {
                "anyOf": [
                    {"const": "value1", "title": "First Choice"},
                    {"const": "value2", "title": "Second Choice"},
                    {"const": "value3", "title": "Third Choice"},
                ]
            },
        },
    }
)

#: The input schema of ``json_schema_2020_12_tool``: keywords of JSON Schema 2020-12 that a
#: server must pass through untouched (``$schema``, ``$defs`` with an ``$anchor``,
#: ``additionalProperties``, and since SEP-2106 ``allOf``/``anyOf`` and ``if``/``then``/``else``).
_JSON_SCHEMA_2020_12: Final = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "$anchor": "addressDef",
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        }
    },
    "properties": {
        "name": {"type": "string"},
        "address": {"$ref": "#/$defs/address"},
        "contactMethod": {"type": "string", "enum": ["phone", "email"]},
        "phone": {"type": "string"},
        "email": {"type": "string"},
    },
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
    "then": {"required": ["phone"]},
    "else": {"required": ["email"]},
    "additionalProperties": False,
}

_TEXT_STATS_OUTPUT: Final = _object(
    {
        "characters": {"type": "integer"},
        "words": {"type": "integer"},
        "lines": {"type": "integer"},
    },
    ["characters", "words", "lines"],
)


def add_tools(server: Server, watched: dict[str, Any]) -> None:
    """Register the tools on ``server``; ``update-resource`` changes ``watched`` (the state of
    ``test://watched-resource``)."""

    @server.tool(
        "echo",
        input_schema=_object({"message": {"type": "string"}}, ["message"]),
        annotations={"readOnlyHint": True},
    )
    async def echo(ctx: Context, arguments: Mapping[str, Any]) -> str:
        """Echo the message back."""
        return f"Echo: {_argument(arguments, 'message', str)}"

    add_schema = _object({"a": {"type": "number"}, "b": {"type": "number"}}, ["a", "b"])

    async def add(ctx: Context, arguments: Mapping[str, Any]) -> str:
        """Add two numbers."""
        a = _argument(arguments, "a", (int, float))
        b = _argument(arguments, "b", (int, float))
        return f"The sum of {a} and {b} is {a + b}"

    server.tool("add", input_schema=add_schema)(add)
    server.tool("add_numbers", input_schema=add_schema)(add)

    @server.tool("test_simple_text", input_schema=_NO_ARGUMENTS)
    async def simple_text(ctx: Context, arguments: Mapping[str, Any]) -> str:
        """Tests simple text content response."""
        return "This is a simple text response for testing."

    @server.tool("test_image_content", input_schema=_NO_ARGUMENTS)
    async def image_content(ctx: Context, arguments: Mapping[str, Any]) -> list[dict[str, Any]]:
        """Tests image content response."""
        return [_image()]

    @server.tool("test_audio_content", input_schema=_NO_ARGUMENTS)
    async def audio_content(ctx: Context, arguments: Mapping[str, Any]) -> list[dict[str, Any]]:
        """Tests audio content response."""
        data = base64.b64encode(AUDIO_WAV).decode()
        return [{"type": "audio", "data": data, "mimeType": "audio/wav"}]

    @server.tool("test_embedded_resource", input_schema=_NO_ARGUMENTS)
    async def embedded_resource(ctx: Context, arguments: Mapping[str, Any]) -> list[dict[str, Any]]:
        """Tests embedded resource content response."""
        resource = {
            "uri": "test://embedded-resource",
            "mimeType": "text/plain",
            "text": "This is an embedded resource content.",
        }
        return [{"type": "resource", "resource": resource}]

    @server.tool("test_multiple_content_types", input_schema=_NO_ARGUMENTS)
    async def multiple_content_types(
        ctx: Context, arguments: Mapping[str, Any]
    ) -> list[dict[str, Any]]:
        """Tests response with multiple content types (text, image, resource)."""
        resource = {
            "uri": "test://mixed-content-resource",
            "mimeType": "application/json",
            "text": _compact({"test": "data", "value": 123}),
        }
        return [
            _text("Multiple content types test:"),
            _image(),
            {"type": "resource", "resource": resource},
        ]

    @server.tool("test_tool_with_logging", input_schema=_NO_ARGUMENTS)
    async def tool_with_logging(ctx: Context, arguments: Mapping[str, Any]) -> str:
        """Tests tool that emits log messages during execution."""
        ctx.log("info", "Tool execution started")
        await ctx.sleep(0.05)
        ctx.log("info", "Tool processing data")
        await ctx.sleep(0.05)
        ctx.log("info", "Tool execution completed")
        return "Tool with logging executed successfully"

    @server.tool("test_tool_with_progress", input_schema=_NO_ARGUMENTS)
    async def tool_with_progress(ctx: Context, arguments: Mapping[str, Any]) -> str:
        """Tests tool that reports progress notifications (0, 50 and 100 of 100)."""
        for step in (0, 50, 100):
            if step:
                await ctx.sleep(0.05)
            ctx.progress(step, 100, f"Completed step {step} of 100")
        meta = ctx.params.get("_meta") or {}
        return str(meta.get("progressToken", 0))

    @server.tool(
        "long-running-operation",
        input_schema=_object(
            {
                "duration": {"type": "number", "default": 1, "maximum": 60, "minimum": 0},
                "steps": {"type": "integer", "default": 5, "maximum": 1000, "minimum": 1},
            }
        ),
    )
    async def long_running_operation(ctx: Context, arguments: Mapping[str, Any]) -> str:
        """Work for `duration` seconds (at most 60) in `steps` steps, reporting progress."""
        duration = min(max(float(arguments.get("duration", 1)), 0.0), 60.0)
        steps = min(max(int(arguments.get("steps", 5)), 1), 1000)
        for step in range(1, steps + 1):
            await ctx.sleep(duration / steps)
            ctx.progress(step, steps, f"step {step} of {steps}")
        return f"Long running operation completed: {steps} steps in {duration:g} s"

    @server.tool("test_error_handling", input_schema=_NO_ARGUMENTS)
    async def error_handling(ctx: Context, arguments: Mapping[str, Any]) -> None:
        """Tests error response handling (an `isError` result)."""
        raise ToolError("This tool intentionally returns an error for testing")

    @server.tool(
        "test_sampling",
        input_schema=_object(
            {"prompt": {"type": "string", "description": "The prompt to send to the LLM"}},
            ["prompt"],
        ),
    )
    async def sampling(ctx: Context, arguments: Mapping[str, Any]) -> str:
        """Tests server-initiated sampling (LLM completion request)."""
        prompt = _argument(arguments, "prompt", str)
        result = await ctx.sample(
            {
                "messages": [{"role": "user", "content": _text(prompt)}],
                "maxTokens": 100,
            }
        )
        text = _sampled_text(result) if isinstance(result, Mapping) else None
        return f"LLM response: {text or 'No response'}"

    @server.tool(
        "test_elicitation",
        input_schema=_object(
            {"message": {"type": "string", "description": "The message to show the user"}},
            ["message"],
        ),
    )
    async def elicitation(ctx: Context, arguments: Mapping[str, Any]) -> str:
        """Tests server-initiated elicitation (user input request)."""
        message = _argument(arguments, "message", str)
        result = await ctx.elicit(message, _ELICIT_FORM)
        return f"User response: {_elicited(result)}"

    @server.tool("test_elicitation_sep1034_defaults", input_schema=_NO_ARGUMENTS)
    async def elicitation_defaults(ctx: Context, arguments: Mapping[str, Any]) -> str:
        """Tests elicitation with default values for every primitive type (SEP-1034)."""
        result = await ctx.elicit(
            "Please review and update the form fields with defaults", _ELICIT_DEFAULTS
        )
        return f"Elicitation completed: {_elicited(result)}"

    @server.tool("test_elicitation_sep1330_enums", input_schema=_NO_ARGUMENTS)
    async def elicitation_enums(ctx: Context, arguments: Mapping[str, Any]) -> str:
        """Tests elicitation with the five enum schema variants (SEP-1330)."""
        result = await ctx.elicit("Please select options from the enum fields", _ELICIT_ENUMS)
        return f"Elicitation completed: {_elicited(result)}"

    @server.tool("json_schema_2020_12_tool", input_schema=_JSON_SCHEMA_2020_12)
    async def json_schema_tool(ctx: Context, arguments: Mapping[str, Any]) -> str:
        """Tool with JSON Schema 2020-12 features ($schema, $defs, additionalProperties)."""
        return f"JSON Schema 2020-12 tool called with: {_compact(dict(arguments))}"

    @server.tool("list-roots", input_schema=_NO_ARGUMENTS)
    async def list_roots(ctx: Context, arguments: Mapping[str, Any]) -> str:
        """List the client's roots (asks it with `roots/list`)."""
        roots = (await ctx.list_roots()).get("roots") or []
        if not roots:
            return "The client has no roots."
        lines = [f"- {r.get('name') or r.get('uri')}: {r.get('uri')}" for r in roots]
        return "The client's roots:\n" + "\n".join(lines)

    @server.tool(
        "update-resource",
        input_schema=_object({"content": {"type": "string"}}),
    )
    async def update_resource(ctx: Context, arguments: Mapping[str, Any]) -> str:
        """Change test://watched-resource (to `content`, or a new version) and notify its
        subscribers."""
        watched["version"] += 1
        content = arguments.get("content")
        watched["content"] = (
            content
            if isinstance(content, str)
            else f"Watched resource, version {watched['version']}"
        )
        ctx.resource_updated(_WATCHED)
        return f"Updated {_WATCHED} (version {watched['version']})"

    @server.tool(
        "text-stats",
        input_schema=_object({"text": {"type": "string"}}, ["text"]),
        output_schema=_TEXT_STATS_OUTPUT,
        annotations={"readOnlyHint": True},
    )
    async def text_stats(ctx: Context, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """Count the characters, words and lines of a text (structured output)."""
        text = _argument(arguments, "text", str)
        stats = {
            "characters": len(text),
            "words": len(text.split()),
            "lines": len(text.splitlines()),
        }
        return {"content": [_text(_compact(stats))], "structuredContent": stats}

    # ------------------------------------------------------------------ conformance: transports

    @server.tool("test_reconnection", input_schema=_NO_ARGUMENTS)
    async def reconnection(ctx: Context, arguments: Mapping[str, Any]) -> str:
        """Tests SSE stream disconnection and client reconnection (SEP-1699): over
        Streamable HTTP, the server closes the stream mid-call and sends the result after
        the client reconnects."""
        ctx.close_stream()
        await ctx.sleep(0.1)
        return (
            "Reconnection test completed successfully. If you received this, the client "
            "properly reconnected after stream closure."
        )

    @server.tool(
        "test_x_mcp_header",
        input_schema=_object(
            {
                "region": {
                    "type": "string",
                    "description": "A region, also sent as the Mcp-Param-Region header",
                    "x-mcp-header": "Region",
                }
            },
            ["region"],
        ),
    )
    async def x_mcp_header(ctx: Context, arguments: Mapping[str, Any]) -> str:
        """Tests the x-mcp-header annotation (SEP-2243): over Streamable HTTP in
        2026-07-28, `region` travels in the Mcp-Param-Region header too."""
        return f"Region: {_argument(arguments, 'region', str)}"

    # ------------------------------------------------------------------ conformance: 2026-07-28

    @server.tool("test_missing_capability", input_schema=_NO_ARGUMENTS)
    async def missing_capability(ctx: Context, arguments: Mapping[str, Any]) -> str:
        """Tests a tool that needs the client's sampling capability: without it, the call
        fails (-32021 in 2026-07-28)."""
        result = await ctx.sample(
            {"messages": [{"role": "user", "content": _text("Say hello")}], "maxTokens": 20}
        )
        text = _sampled_text(result) if isinstance(result, Mapping) else None
        return f"Success: {text or 'No response'}"

    @server.tool("test_logging_tool", input_schema=_NO_ARGUMENTS)
    async def logging_tool(ctx: Context, arguments: Mapping[str, Any]) -> str:
        """Diagnostic logging tool: logs one message, which a 2026-07-28 request only gets
        when its _meta has a logLevel."""
        ctx.log("info", "Diagnostic trace logging activated", "conformance")
        return "Logging evaluated"

    @server.tool("test_streaming_elicitation", input_schema=_NO_ARGUMENTS)
    async def streaming_elicitation(ctx: Context, arguments: Mapping[str, Any]) -> str:
        """Tests progress and elicitation on the response stream: a request to the client
        in the initialize era, an input_required result (never a request) in 2026-07-28."""
        ctx.progress(50, 100, "Waiting for the user")
        result = await ctx.elicit("Please confirm to continue", _CONFIRM)
        ctx.progress(100, 100, "Done")
        return f"Streaming complete: {_elicited(result)}"

    @server.tool("test_trigger_tool_change", input_schema=_NO_ARGUMENTS)
    async def trigger_tool_change(ctx: Context, arguments: Mapping[str, Any]) -> str:
        """Sends notifications/tools/list_changed (to 2026-07-28 listen streams that asked
        for it)."""
        ctx.list_changed("tools")
        return "Mutation triggered: the tool list changed"

    @server.tool("test_trigger_prompt_change", input_schema=_NO_ARGUMENTS)
    async def trigger_prompt_change(ctx: Context, arguments: Mapping[str, Any]) -> str:
        """Sends notifications/prompts/list_changed (to 2026-07-28 listen streams that
        asked for it)."""
        ctx.list_changed("prompts")
        return "Mutation triggered: the prompt list changed"
