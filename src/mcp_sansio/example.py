"""The example server bundled with mcp-sansio: every feature of MCP, small enough to read.

:func:`build_server` returns a :class:`~mcp_sansio.server.Server` whose handlers are
coroutine functions that talk to the client only through their context (``ctx.progress()``,
``ctx.log()``, ``ctx.resource_updated()``, ``await ctx.sleep()``, ``await ctx.elicit()``,
``await ctx.sample()``, ``await ctx.list_roots()``), so the same code runs on the asyncio and
the trio adapters, in both eras of the protocol: in the initialize era a handler that asks
the client sends it a request and waits; in 2026-07-28 the session answers
``input_required`` and runs the handler again on the retry, with the answer in hand.

The names are those of the MCP conformance suite's fixture (``test_simple_text``,
``test_tool_with_progress``, ``test://static-text``, ``test_prompt_with_arguments``, …), so
the server can stand in for it, plus a few friendly ones (``echo``, ``add``, …). That
includes the 2026-07-28 fixtures: the multi-round-trip tools ``test_input_required_result_*``
(which ask under the ``inputRequests`` keys the suite looks for), ``test_missing_capability``,
``test_logging_tool``, ``test_streaming_elicitation``, ``test_x_mcp_header`` and the list
mutation hooks, and ``test_reconnection``, which ends its Streamable HTTP response mid-call.
``python -m mcp_sansio serve`` runs it on stdio, on a socket, or over Streamable HTTP.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping, Sequence
from typing import Any, Final, Protocol

from ._errors import ErrorCode
from ._version import __version__
from ._versions import VERSIONS, Era
from .server import Server, ToolError
from .session import AsyncContext, Job, McpError, NeedInput, SessionBase

__all__ = [
    "AUDIO_WAV",
    "IMAGE_PNG",
    "SERVER_NAME",
    "Context",
    "build_server",
]

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

_STRING: Final = {"type": "string"}
_NAME: Final = {"name": _STRING}
_OK: Final = {"ok": {"type": "boolean"}}
_CONFIRM: Final = _object({"confirmed": {"type": "boolean", "description": "Confirm?"}})

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


# ---------------------------------------------------------------------- asking under keys

_META_CAPABILITIES: Final = "io.modelcontextprotocol/clientCapabilities"

#: The client capability each input request needs, and a key its answer always has.
_INPUT_METHODS: Final = {
    "elicitation/create": ("elicitation", "action"),
    "sampling/createMessage": ("sampling", "content"),
    "roots/list": ("roots", "roots"),
}


def _elicitation(message: str, properties: Mapping[str, Any]) -> dict[str, Any]:
    """An ``elicitation/create`` input request for a form whose fields are all required."""
    schema = _object(properties, list(properties))
    return {
        "method": "elicitation/create",
        "params": {"message": message, "requestedSchema": schema},
    }


def _sampling(text: str, max_tokens: int) -> dict[str, Any]:
    """A ``sampling/createMessage`` input request with one user message."""
    messages = [{"role": "user", "content": _text(text)}]
    return {
        "method": "sampling/createMessage",
        "params": {"messages": messages, "maxTokens": max_tokens},
    }


_ROOTS: Final = {"method": "roots/list", "params": {}}


def _stateless(ctx: Context) -> bool:
    """Whether the request is of 2026-07-28 (stateless; asking is ``input_required``)."""
    version = ctx.protocol_version
    return version is not None and VERSIONS[version].era is Era.STATELESS


def _client_capabilities(ctx: Context) -> Mapping[str, Any]:
    """The client's capabilities: those the request declares in its ``_meta``
    (2026-07-28), or those it declared at ``initialize``."""
    if _stateless(ctx):
        meta = ctx.params.get("_meta")
        caps = meta.get(_META_CAPABILITIES) if isinstance(meta, Mapping) else None
    else:
        caps = ctx.session.connection.client_capabilities
    return caps if isinstance(caps, Mapping) else {}


async def _ask(ctx: Context, requests: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """Ask the client for several things, each an input request ``{"method", "params"}``
    under a key of our choosing, and return the answers by key.

    In the initialize era they are requests to the client, one after the other. In
    2026-07-28 the handler answers ``input_required`` with these keys (the conformance
    suite looks for them) until the retry carries every answer, in its ``inputResponses``
    or, for the answers of earlier rounds, sealed in its ``requestState`` (the session
    gathers both into ``ctx.job.inputs``): the handler runs again on each retry. An input
    request the client has no capability for is an error (-32021); so is an answer that is
    not a result of its method.
    """
    if not _stateless(ctx):
        answers: dict[str, Any] = {}
        for key, request in requests.items():
            method, params = request["method"], request["params"]
            if method == "elicitation/create":
                answers[key] = await ctx.elicit(params["message"], params["requestedSchema"])
            elif method == "sampling/createMessage":
                answers[key] = await ctx.sample(params)
            else:
                answers[key] = await ctx.list_roots()
        return answers
    caps = _client_capabilities(ctx)
    inputs = ctx.job.inputs
    found: dict[str, Any] = {}
    missing: dict[str, Mapping[str, Any]] = {}
    for key, request in requests.items():
        capability, field = _INPUT_METHODS[request["method"]]
        if capability not in caps:
            raise McpError(
                ErrorCode.MISSING_REQUIRED_CLIENT_CAPABILITY,
                f"this needs the client capability {capability!r}",
                {"requiredCapabilities": {capability: {}}},
            )
        answer = inputs.get(key)
        if answer is None:
            missing[key] = request
        elif isinstance(answer, Mapping) and field in answer:
            found[key] = answer
        else:
            raise McpError(
                ErrorCode.INVALID_PARAMS,
                f"inputResponses[{key!r}] is not a result of {request['method']}",
            )
    if missing:
        key, *others = missing
        raise NeedInput(key, missing[key], {other: missing[other] for other in others})
    return found


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


def build_server() -> Server:
    """A new example server (its watched resource's state is its own)."""
    server = Server(
        SERVER_NAME,
        __version__,
        title="mcp-sansio example server",
        instructions=_INSTRUCTIONS,
    )
    watched: dict[str, Any] = {"content": "Watched resource content", "version": 0}

    # ------------------------------------------------------------------ tools

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

    # Multi-round-trip requests (SEP-2322): in 2026-07-28 each answers input_required with
    # the inputRequests keys of the suite; in the initialize era it asks the client.

    @server.tool("test_input_required_result_elicitation", input_schema=_NO_ARGUMENTS)
    async def irr_elicitation(ctx: Context, arguments: Mapping[str, Any]) -> str:
        """Asks the user's name (key `user_name`), then greets them."""
        answers = await _ask(ctx, {"user_name": _elicitation("What is your name?", _NAME)})
        return f"Hello, {_field(answers['user_name'], 'name', 'stranger')}!"

    @server.tool("test_input_required_result_sampling", input_schema=_NO_ARGUMENTS)
    async def irr_sampling(ctx: Context, arguments: Mapping[str, Any]) -> str:
        """Asks the client's model a question (key `capital_question`)."""
        question = _sampling("What is the capital of France?", 100)
        answers = await _ask(ctx, {"capital_question": question})
        return f"Sampling result: {_sampled_text(answers['capital_question']) or 'no response'}"

    @server.tool("test_input_required_result_list_roots", input_schema=_NO_ARGUMENTS)
    async def irr_list_roots(ctx: Context, arguments: Mapping[str, Any]) -> str:
        """Asks the client for its roots (key `client_roots`) and counts them."""
        answers = await _ask(ctx, {"client_roots": _ROOTS})
        return f"Found {_count_roots(answers['client_roots'])} root(s)"

    @server.tool("test_input_required_result_request_state", input_schema=_NO_ARGUMENTS)
    async def irr_request_state(ctx: Context, arguments: Mapping[str, Any]) -> str:
        """Asks for a confirmation (key `confirm`) with a requestState, which the retry
        must echo (the session checks its seal)."""
        answers = await _ask(ctx, {"confirm": _elicitation("Please confirm", _OK)})
        confirmed = _confirmed(answers["confirm"])
        return f"state-ok: requestState validated, confirmed={str(confirmed).lower()}"

    @server.tool("test_input_required_result_multiple_inputs", input_schema=_NO_ARGUMENTS)
    async def irr_multiple_inputs(ctx: Context, arguments: Mapping[str, Any]) -> str:
        """Asks for a name, a greeting from the model and the roots at once (keys
        `user_name`, `greeting`, `client_roots`)."""
        answers = await _ask(
            ctx,
            {
                "user_name": _elicitation("What is your name?", _NAME),
                "greeting": _sampling("Generate a greeting", 50),
                "client_roots": _ROOTS,
            },
        )
        name = _field(answers["user_name"], "name", "stranger")
        greeting = _sampled_text(answers["greeting"]) or "Hello there!"
        roots = _count_roots(answers["client_roots"])
        return f"Name: {name}; Greeting: {greeting}; Roots: {roots}"

    @server.tool("test_input_required_result_multi_round", input_schema=_NO_ARGUMENTS)
    async def irr_multi_round(ctx: Context, arguments: Mapping[str, Any]) -> str:
        """Asks two questions in two rounds (keys `step1`, then `step2`): the answer of
        the first comes back sealed in the second round's requestState."""
        first = await _ask(ctx, {"step1": _elicitation("Step 1: What is your name?", _NAME)})
        second = await _ask(
            ctx,
            {
                "step2": _elicitation(
                    "Step 2: What is your favorite color?", {"color": {"type": "string"}}
                )
            },
        )
        name = _field(first["step1"], "name", "friend")
        color = _field(second["step2"], "color", "no color")
        return f"Multi-round complete for {name} who likes {color}"

    @server.tool("test_input_required_result_tampered_state", input_schema=_NO_ARGUMENTS)
    async def irr_tampered_state(ctx: Context, arguments: Mapping[str, Any]) -> str:
        """Asks for a confirmation (key `confirm`); a retry whose requestState fails the
        session's integrity check is refused (-32602) before this runs again."""
        answers = await _ask(ctx, {"confirm": _elicitation("Please confirm", _OK)})
        confirmed = _confirmed(answers["confirm"])
        return f"integrity-ok: state verified, confirmed={str(confirmed).lower()}"

    @server.tool("test_input_required_result_capabilities", input_schema=_NO_ARGUMENTS)
    async def irr_capabilities(ctx: Context, arguments: Mapping[str, Any]) -> str:
        """Asks only for what the client declared: an elicitation (key `elicit_input`)
        and a sampling (key `sample_input`), each if the client can answer it."""
        caps = _client_capabilities(ctx)
        requests: dict[str, Mapping[str, Any]] = {}
        if "elicitation" in caps:
            requests["elicit_input"] = _elicitation("Elicitation input", {"value": _STRING})
        if "sampling" in caps:
            requests["sample_input"] = _sampling("Sample request", 50)
        if not requests:
            return "No supported capabilities declared"
        answers = await _ask(ctx, requests)
        return f"capabilities-ok: received {','.join(answers)}"

    # ------------------------------------------------------------------ resources

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

    # ------------------------------------------------------------------ prompts

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

    # ------------------------------------------------------------------ completion

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

    return server


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
