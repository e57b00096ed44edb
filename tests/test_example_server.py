"""The example server (:mod:`mcp_sansio.example`): every tool, resource, prompt and completion,
through an in-process pair — our client and the server on a socket pair (asyncio) or a memory
stream pair (trio) — in both eras: a client of 2025-11-25, and a client of both eras (which
ends up on 2026-07-28, where asking the client goes through ``input_required``).

Each test is one ``body(harness)`` run on the four combinations (the ``pair`` fixture), bounded
in time.
"""

from __future__ import annotations

import asyncio
import base64
import json
import socket
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import pytest
import trio
import trio.testing

from mcp_sansio import Era, ErrorCode, Notification
from mcp_sansio import asyncio as aio
from mcp_sansio import trio as tr
from mcp_sansio.example import AUDIO_WAV, IMAGE_PNG, SERVER_NAME, build_server
from mcp_sansio.session import McpError

LEGACY = ("2025-11-25",)
LOG_LEVEL = "io.modelcontextprotocol/logLevel"
WATCHED = "test://watched-resource"
LIMIT = 20.0

MRTR_TOOLS = (
    "elicitation",
    "sampling",
    "list_roots",
    "request_state",
    "multiple_inputs",
    "multi_round",
    "tampered_state",
    "capabilities",
)
CONFORMANCE_TOOLS = {
    "test_simple_text",
    "test_image_content",
    "test_audio_content",
    "test_embedded_resource",
    "test_multiple_content_types",
    "test_tool_with_logging",
    "test_error_handling",
    "test_tool_with_progress",
    "test_sampling",
    "test_elicitation",
    "test_elicitation_sep1034_defaults",
    "test_elicitation_sep1330_enums",
    "json_schema_2020_12_tool",
    "test_reconnection",
    "test_x_mcp_header",
    "test_missing_capability",
    "test_logging_tool",
    "test_streaming_elicitation",
    "test_trigger_tool_change",
    "test_trigger_prompt_change",
    *(f"test_input_required_result_{name}" for name in MRTR_TOOLS),
}
FRIENDLY_TOOLS = {
    "echo",
    "add",
    "add_numbers",
    "long-running-operation",
    "list-roots",
    "update-resource",
    "text-stats",
}
PROMPTS = {
    "test_simple_prompt",
    "test_prompt_with_arguments",
    "test_prompt_with_embedded_resource",
    "test_prompt_with_image",
    "test_input_required_result_prompt",
}


class Harness:
    """A client connected to a fresh example server, and what it saw: the server's
    notifications, the requests its handlers answered, the progress of its calls."""

    def __init__(self, runtime: str, sampling: bool, elicit: Mapping[str, Any] | None) -> None:
        self.runtime = runtime
        self.client: Any = None
        self.notes: list[Notification] = []
        self.asked: list[tuple[str, Mapping[str, Any], bool]] = []
        self.progress: list[Mapping[str, Any]] = []
        self.elicit_answer = elicit
        self.sample_content: Any = {"type": "text", "text": "Paris"}
        self.roots: list[dict[str, str]] = [
            {"uri": "file:///srv/project", "name": "project"},
            {"uri": "file:///tmp"},
        ]
        self.sleep: Callable[[float], Awaitable[None]] = asyncio.sleep
        self.spawn: Callable[[Callable[[], Awaitable[Any]]], None] = lambda fn: None
        self._sampling = sampling

    # The client's handlers of the server's requests (also for input_required rounds, where
    # the context has no request id).

    def _elicit(self, ctx: Any, params: Mapping[str, Any]) -> dict[str, Any]:
        self.asked.append(("elicitation/create", params, ctx.request_id is None))
        if self.elicit_answer is not None:
            return dict(self.elicit_answer)
        properties = params["requestedSchema"]["properties"]
        content = {name: spec.get("default", f"<{name}>") for name, spec in properties.items()}
        return {"action": "accept", "content": content}

    def _sample(self, ctx: Any, params: Mapping[str, Any]) -> dict[str, Any]:
        self.asked.append(("sampling/createMessage", params, ctx.request_id is None))
        return {
            "role": "assistant",
            "model": "test-model",
            "content": self.sample_content,
            "stopReason": "endTurn",
        }

    def _roots(self, ctx: Any, params: Mapping[str, Any]) -> dict[str, Any]:
        self.asked.append(("roots/list", params, ctx.request_id is None))
        return {"roots": list(self.roots)}

    def handlers(self) -> dict[str, Callable[..., Any]]:
        handlers: dict[str, Callable[..., Any]] = {
            "elicitation/create": self._elicit,
            "roots/list": self._roots,
        }
        if self._sampling:
            handlers["sampling/createMessage"] = self._sample
        return handlers

    # Helpers for the bodies.

    @property
    def stateless(self) -> bool:
        return self.client.era is Era.STATELESS

    def meta(self, level: str) -> dict[str, Any]:
        """``_meta`` that asks for log messages at ``level`` (2026-07-28 only)."""
        return {LOG_LEVEL: level} if self.stateless else {}

    async def tool(self, name: str, arguments: Mapping[str, Any] | None = None) -> Any:
        return await self.client.call_tool(name, arguments or {}, on_progress=self.progress.append)

    async def set_logging_level(self, level: str) -> None:
        if self.runtime == "trio" and self.stateless:
            # mcp_sansio.trio's set_logging_level sends logging/setLevel in 2026-07-28 too
            # (refused: not a method of that version); the session's level is what it sends.
            self.client.session.log_level = level
        else:
            await self.client.set_logging_level(level)

    async def until(self, predicate: Callable[[], bool]) -> None:
        while not predicate():
            await self.sleep(0.005)

    def messages(self) -> list[Any]:
        return [n.params["data"] for n in self.notes if n.method == "notifications/message"]

    def updated(self) -> list[str]:
        return [
            n.params["uri"] for n in self.notes if n.method == "notifications/resources/updated"
        ]


Body = Callable[[Harness], Awaitable[None]]
Runner = Callable[..., None]


def run_asyncio(
    body: Body,
    versions: tuple[str, ...] | None,
    *,
    sampling: bool = True,
    elicit: Mapping[str, Any] | None = None,
) -> None:
    harness = Harness("asyncio", sampling, elicit)

    async def main() -> None:
        one, other = socket.socketpair()
        server_reader, server_writer = await asyncio.open_connection(sock=one)
        serving = asyncio.create_task(
            aio.serve_stream(build_server(), server_reader, server_writer)
        )
        reader, writer = await asyncio.open_connection(sock=other)
        tasks: list[asyncio.Task[Any]] = []

        def spawn(fn: Callable[[], Awaitable[Any]]) -> None:
            async def go() -> Any:
                return await fn()

            tasks.append(asyncio.create_task(go()))

        harness.spawn = spawn
        async with aio.Client(
            reader,
            writer,
            versions=versions,
            handlers=harness.handlers(),
            on_notification=harness.notes.append,
        ) as client:
            harness.client = client
            await body(harness)
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
        await asyncio.wait_for(serving, 5)

    async def bounded() -> None:
        await asyncio.wait_for(main(), LIMIT)

    asyncio.run(bounded())


def run_trio(
    body: Body,
    versions: tuple[str, ...] | None,
    *,
    sampling: bool = True,
    elicit: Mapping[str, Any] | None = None,
) -> None:
    harness = Harness("trio", sampling, elicit)
    harness.sleep = trio.sleep

    async def main() -> None:
        with trio.fail_after(LIMIT):
            async with trio.open_nursery() as nursery:
                here, there = trio.testing.memory_stream_pair()
                nursery.start_soon(tr.serve_stream, build_server(), there)
                async with tr.Client(
                    here,
                    versions=versions,
                    handlers=harness.handlers(),
                    on_notification=harness.notes.append,
                ) as client:
                    harness.client = client
                    async with trio.open_nursery() as background:
                        harness.spawn = background.start_soon
                        await body(harness)
                        background.cancel_scope.cancel()

    trio.run(main)


@pytest.fixture(
    params=[
        ("asyncio", LEGACY),
        ("asyncio", None),
        ("trio", LEGACY),
        ("trio", None),
    ],
    ids=["asyncio-2025-11-25", "asyncio-both-eras", "trio-2025-11-25", "trio-both-eras"],
)
def pair(request: pytest.FixtureRequest) -> Runner:
    """Run ``body(harness)`` against a fresh example server, on one runtime, in one era."""
    runtime, versions = request.param
    runner = run_asyncio if runtime == "asyncio" else run_trio

    def run(body: Body, **options: Any) -> None:
        runner(body, versions, **options)

    return run


def text(result: Mapping[str, Any]) -> str:
    """The text of a result's only content block."""
    (block,) = result["content"]
    assert block["type"] == "text"
    return str(block["text"])


# ---------------------------------------------------------------------- the session


def test_the_session_opens_in_the_expected_era(pair: Runner) -> None:
    async def body(h: Harness) -> None:
        client = h.client
        assert client.server_info["name"] == SERVER_NAME
        assert client.instructions
        assert "example server" in client.instructions
        if client.era is Era.INITIALIZE:
            assert client.protocol_version == "2025-11-25"
        else:
            assert client.protocol_version == "2026-07-28"
        caps = client.server_capabilities
        assert caps["tools"] == {"listChanged": True}
        assert caps["resources"] == {"listChanged": True, "subscribe": True}
        assert set(caps) >= {"prompts", "completions", "logging"}

    pair(body)


def test_tools_list_has_every_tool_documented(pair: Runner) -> None:
    async def body(h: Harness) -> None:
        tools = {t["name"]: t for t in (await h.client.list_tools())["tools"]}
        assert set(tools) == CONFORMANCE_TOOLS | FRIENDLY_TOOLS
        for tool in tools.values():
            assert tool["description"], tool["name"]
            assert tool["inputSchema"]["type"] == "object"
        assert tools["echo"]["inputSchema"]["required"] == ["message"]
        assert tools["text-stats"]["outputSchema"]["required"] == ["characters", "words", "lines"]

    pair(body)


def test_every_tool_is_listed_once_per_server_instance() -> None:
    one, two = build_server(), build_server()
    assert one is not two
    assert list(one.tools) == list(two.tools)
    assert one.tools["add"].handler is one.tools["add_numbers"].handler


# ---------------------------------------------------------------------- plain tools


def test_echo(pair: Runner) -> None:
    async def body(h: Harness) -> None:
        assert text(await h.tool("echo", {"message": "hello"})) == "Echo: hello"

    pair(body)


@pytest.mark.parametrize("name", ["add", "add_numbers"])
def test_add(pair: Runner, name: str) -> None:
    async def body(h: Harness) -> None:
        assert text(await h.tool(name, {"a": 5, "b": 3})) == "The sum of 5 and 3 is 8"
        assert text(await h.tool(name, {"a": 0.5, "b": 2})) == "The sum of 0.5 and 2 is 2.5"

    pair(body)


@pytest.mark.parametrize(
    ("name", "arguments"),
    [
        ("add", {"a": 1}),
        ("add", {"a": True, "b": 1}),
        ("echo", {}),
        ("echo", {"message": 3}),
        ("text-stats", {}),
        ("test_sampling", {}),
        ("test_elicitation", {"message": None}),
    ],
)
def test_bad_arguments_are_a_tool_error(pair: Runner, name: str, arguments: Any) -> None:
    async def body(h: Harness) -> None:
        result = await h.tool(name, arguments)
        assert result["isError"] is True
        assert "missing or of the wrong type" in text(result)
        assert h.asked == []

    pair(body)


def test_simple_text(pair: Runner) -> None:
    async def body(h: Harness) -> None:
        result = await h.tool("test_simple_text")
        assert text(result) == "This is a simple text response for testing."
        assert "isError" not in result

    pair(body)


def test_image_and_audio_content(pair: Runner) -> None:
    async def body(h: Harness) -> None:
        (image,) = (await h.tool("test_image_content"))["content"]
        assert image["type"] == "image"
        assert image["mimeType"] == "image/png"
        assert base64.b64decode(image["data"]) == IMAGE_PNG
        assert IMAGE_PNG.startswith(b"\x89PNG")
        (audio,) = (await h.tool("test_audio_content"))["content"]
        assert audio["type"] == "audio"
        assert audio["mimeType"] == "audio/wav"
        assert base64.b64decode(audio["data"]) == AUDIO_WAV
        assert AUDIO_WAV.startswith(b"RIFF")

    pair(body)


def test_embedded_resource_and_multiple_content_types(pair: Runner) -> None:
    async def body(h: Harness) -> None:
        (block,) = (await h.tool("test_embedded_resource"))["content"]
        assert block == {
            "type": "resource",
            "resource": {
                "uri": "test://embedded-resource",
                "mimeType": "text/plain",
                "text": "This is an embedded resource content.",
            },
        }
        blocks = (await h.tool("test_multiple_content_types"))["content"]
        assert [b["type"] for b in blocks] == ["text", "image", "resource"]
        assert json.loads(blocks[2]["resource"]["text"]) == {"test": "data", "value": 123}

    pair(body)


def test_error_handling_is_an_is_error_result(pair: Runner) -> None:
    async def body(h: Harness) -> None:
        result = await h.tool("test_error_handling")
        assert result["isError"] is True
        assert text(result) == "This tool intentionally returns an error for testing"

    pair(body)


def test_structured_output(pair: Runner) -> None:
    async def body(h: Harness) -> None:
        result = await h.tool("text-stats", {"text": "one two\nthree"})
        stats = {"characters": 13, "words": 3, "lines": 2}
        assert result["structuredContent"] == stats
        assert json.loads(text(result)) == stats  # the same, as text, for older clients

    pair(body)


def test_json_schema_2020_12_tool_keeps_its_schema(pair: Runner) -> None:
    async def body(h: Harness) -> None:
        tools = {t["name"]: t for t in (await h.client.list_tools())["tools"]}
        schema = tools["json_schema_2020_12_tool"]["inputSchema"]
        assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
        assert "address" in schema["$defs"]
        assert schema["additionalProperties"] is False
        # SEP-2106: the rest of the 2020-12 vocabulary is passed through as well.
        assert schema["$defs"]["address"]["$anchor"] == "addressDef"
        assert schema["allOf"] == [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}]
        assert {"if", "then", "else"} <= set(schema)
        arguments = {"name": "Ada", "address": {"city": "London"}}
        result = await h.tool("json_schema_2020_12_tool", arguments)
        assert text(result) == (
            'JSON Schema 2020-12 tool called with: {"name":"Ada","address":{"city":"London"}}'
        )

    pair(body)


def test_unknown_tool_is_an_error(pair: Runner) -> None:
    async def body(h: Harness) -> None:
        with pytest.raises(McpError) as caught:
            await h.tool("no-such-tool")
        assert caught.value.code == ErrorCode.INVALID_PARAMS

    pair(body)


# ---------------------------------------------------------------------- progress and logging


def test_tool_with_progress(pair: Runner) -> None:
    async def body(h: Harness) -> None:
        result = await h.tool("test_tool_with_progress")
        assert [(p["progress"], p["total"]) for p in h.progress] == [
            (0, 100),
            (50, 100),
            (100, 100),
        ]
        assert h.progress[1]["message"] == "Completed step 50 of 100"
        assert text(result) == h.progress[0]["progressToken"]  # the tool returns its token

    pair(body)


def test_tool_with_progress_without_a_token(pair: Runner) -> None:
    async def body(h: Harness) -> None:
        assert text(await h.client.call_tool("test_tool_with_progress", {})) == "0"

    pair(body)


def test_long_running_operation(pair: Runner) -> None:
    async def body(h: Harness) -> None:
        result = await h.tool("long-running-operation", {"duration": 0.03, "steps": 3})
        assert text(result) == "Long running operation completed: 3 steps in 0.03 s"
        assert [(p["progress"], p["total"], p["message"]) for p in h.progress] == [
            (1, 3, "step 1 of 3"),
            (2, 3, "step 2 of 3"),
            (3, 3, "step 3 of 3"),
        ]
        # Out-of-range values are clamped (at most 60 s, at least one step).
        result = await h.tool("long-running-operation", {"duration": -5, "steps": 0})
        assert text(result) == "Long running operation completed: 1 steps in 0 s"

    pair(body)


def test_tool_with_logging(pair: Runner) -> None:
    async def body(h: Harness) -> None:
        params = {"name": "test_tool_with_logging", "arguments": {}, "_meta": h.meta("info")}
        result = await h.client.request("tools/call", params)
        assert text(result) == "Tool with logging executed successfully"
        assert h.messages() == [
            "Tool execution started",
            "Tool processing data",
            "Tool execution completed",
        ]
        levels = {n.params["level"] for n in h.notes if n.method == "notifications/message"}
        assert levels == {"info"}

    pair(body)


def test_log_level_filters_the_logging_tool(pair: Runner) -> None:
    async def body(h: Harness) -> None:
        # logging/setLevel in the initialize era; in 2026-07-28, the level in each request.
        await h.set_logging_level("warning")
        await h.tool("test_tool_with_logging")
        assert h.messages() == []
        await h.set_logging_level("info")
        await h.tool("test_tool_with_logging")
        assert len(h.messages()) == 3

    pair(body)


# ---------------------------------------------------------------------- asking the client


def test_sampling(pair: Runner) -> None:
    async def body(h: Harness) -> None:
        result = await h.tool("test_sampling", {"prompt": "Capital of France?"})
        assert text(result) == "LLM response: Paris"
        ((method, params, input_round),) = h.asked
        assert method == "sampling/createMessage"
        assert params["messages"][0]["content"]["text"] == "Capital of France?"
        assert params["maxTokens"] == 100
        assert input_round is h.stateless  # 2026: an input_required round, not a request

    pair(body)


def test_sampling_answers_of_other_shapes(pair: Runner) -> None:
    async def body(h: Harness) -> None:
        # 2025-11-25 allows a list of content blocks; a model may answer without text.
        h.sample_content = [{"type": "text", "text": "Rome"}, {"type": "text", "text": "!"}]
        assert text(await h.tool("test_sampling", {"prompt": "?"})) == "LLM response: Rome"
        h.sample_content = {"type": "image", "data": "", "mimeType": "image/png"}
        assert text(await h.tool("test_sampling", {"prompt": "?"})) == "LLM response: No response"

    pair(body)


def test_sampling_without_the_capability_is_an_error(pair: Runner) -> None:
    async def body(h: Harness) -> None:
        with pytest.raises(McpError) as caught:
            await h.tool("test_sampling", {"prompt": "hi"})
        expected = (
            ErrorCode.MISSING_REQUIRED_CLIENT_CAPABILITY
            if h.stateless
            else ErrorCode.METHOD_NOT_FOUND
        )
        assert caught.value.code == expected

    pair(body, sampling=False)


def test_elicitation(pair: Runner) -> None:
    async def body(h: Harness) -> None:
        result = await h.tool("test_elicitation", {"message": "Your name?"})
        assert text(result) == 'User response: action=accept, content={"response":"<response>"}'
        ((method, params, input_round),) = h.asked
        assert method == "elicitation/create"
        assert params["message"] == "Your name?"
        assert params["requestedSchema"]["required"] == ["response"]
        assert input_round is h.stateless

    pair(body)


def test_elicitation_declined(pair: Runner) -> None:
    async def body(h: Harness) -> None:
        result = await h.tool("test_elicitation", {"message": "Your name?"})
        assert text(result) == "User response: action=decline, content={}"

    pair(body, elicit={"action": "decline"})


def test_elicitation_with_a_default_for_every_primitive_type(pair: Runner) -> None:
    async def body(h: Harness) -> None:
        result = await h.tool("test_elicitation_sep1034_defaults")
        ((_, params, _),) = h.asked
        properties = params["requestedSchema"]["properties"]
        types = {spec["type"] for spec in properties.values()}
        assert types == {"string", "integer", "number", "boolean"}
        assert all("default" in spec for spec in properties.values())
        assert "enum" in properties["status"]
        content = {name: spec["default"] for name, spec in properties.items()}
        compact = json.dumps(content, separators=(",", ":"))
        assert text(result) == f"Elicitation completed: action=accept, content={compact}"

    pair(body)


def test_elicitation_with_the_five_enum_variants(pair: Runner) -> None:
    async def body(h: Harness) -> None:
        answer = {"untitledSingle": "option1", "titledMulti": ["value1", "value3"]}
        h.elicit_answer = {"action": "accept", "content": answer}
        result = await h.tool("test_elicitation_sep1330_enums")
        ((_, params, _),) = h.asked
        properties = params["requestedSchema"]["properties"]
        assert set(properties) == {
            "untitledSingle",
            "titledSingle",
            "legacyEnum",
            "untitledMulti",
            "titledMulti",
        }
        assert "oneOf" in properties["titledSingle"]
        assert "enumNames" in properties["legacyEnum"]
        assert "anyOf" in properties["titledMulti"]["items"]
        assert text(result).endswith(json.dumps(answer, separators=(",", ":")))

    pair(body)


def test_list_roots(pair: Runner) -> None:
    async def body(h: Harness) -> None:
        result = await h.tool("list-roots")
        assert text(result) == (
            "The client's roots:\n- project: file:///srv/project\n- file:///tmp: file:///tmp"
        )
        ((method, _, input_round),) = h.asked
        assert method == "roots/list"
        assert input_round is h.stateless

    pair(body)


def test_list_roots_when_there_are_none(pair: Runner) -> None:
    async def body(h: Harness) -> None:
        h.roots = []
        assert text(await h.tool("list-roots")) == "The client has no roots."

    pair(body)


# ---------------------------------------------------------------------- resources


def test_resources_are_listed(pair: Runner) -> None:
    async def body(h: Harness) -> None:
        resources = {r["uri"]: r for r in (await h.client.list_resources())["resources"]}
        assert set(resources) == {"test://static-text", "test://static-binary", WATCHED}
        assert resources["test://static-binary"]["mimeType"] == "image/png"
        assert all(r["description"] for r in resources.values())
        (template,) = (await h.client.list_resource_templates())["resourceTemplates"]
        assert template["uriTemplate"] == "test://template/{id}/data"
        assert template["mimeType"] == "application/json"

    pair(body)


def test_static_text_and_binary_resources(pair: Runner) -> None:
    async def body(h: Harness) -> None:
        (content,) = (await h.client.read_resource("test://static-text"))["contents"]
        assert content == {
            "uri": "test://static-text",
            "mimeType": "text/plain",
            "text": "This is the content of the static text resource.",
        }
        (content,) = (await h.client.read_resource("test://static-binary"))["contents"]
        assert content["mimeType"] == "image/png"
        assert base64.b64decode(content["blob"]) == IMAGE_PNG

    pair(body)


def test_resource_template(pair: Runner) -> None:
    async def body(h: Harness) -> None:
        uri = "test://template/42/data"
        (content,) = (await h.client.read_resource(uri))["contents"]
        assert content["uri"] == uri
        assert content["mimeType"] == "application/json"
        assert json.loads(content["text"]) == {
            "id": "42",
            "templateTest": True,
            "data": "Data for ID: 42",
        }

    pair(body)


def test_unknown_resource_is_an_error(pair: Runner) -> None:
    async def body(h: Harness) -> None:
        with pytest.raises(McpError) as caught:
            await h.client.read_resource("test://template/42/other")
        assert caught.value.data == {"uri": "test://template/42/other"}

    pair(body)


def test_update_resource_notifies_subscribers(pair: Runner) -> None:
    async def body(h: Harness) -> None:
        (before,) = (await h.client.read_resource(WATCHED))["contents"]
        assert before["text"] == "Watched resource content"
        if h.stateless:
            h.spawn(lambda: h.client.listen(resource_uris=[WATCHED]))
            await h.until(
                lambda: any(n.method == "notifications/subscriptions/acknowledged" for n in h.notes)
            )
        else:
            await h.client.subscribe(WATCHED)
        result = await h.tool("update-resource", {"content": "new content"})
        assert text(result) == f"Updated {WATCHED} (version 1)"
        await h.until(lambda: h.updated() == [WATCHED])
        (after,) = (await h.client.read_resource(WATCHED))["contents"]
        assert after["text"] == "new content"
        result = await h.tool("update-resource")
        (after,) = (await h.client.read_resource(WATCHED))["contents"]
        assert after["text"] == "Watched resource, version 2"

    pair(body)


def test_no_notification_without_a_subscription(pair: Runner) -> None:
    async def body(h: Harness) -> None:
        if not h.stateless:
            await h.client.subscribe(WATCHED)
            await h.client.unsubscribe(WATCHED)
        await h.tool("update-resource")
        await h.client.list_tools()  # one more round trip: a notification would be here
        assert h.updated() == []

    pair(body)


# ---------------------------------------------------------------------- prompts


def test_prompts_are_listed(pair: Runner) -> None:
    async def body(h: Harness) -> None:
        prompts = {p["name"]: p for p in (await h.client.list_prompts())["prompts"]}
        assert set(prompts) == PROMPTS
        assert [a["name"] for a in prompts["test_prompt_with_arguments"]["arguments"]] == [
            "arg1",
            "arg2",
        ]
        assert all(p["description"] for p in prompts.values())

    pair(body)


def test_simple_prompt(pair: Runner) -> None:
    async def body(h: Harness) -> None:
        (message,) = (await h.client.get_prompt("test_simple_prompt"))["messages"]
        assert message == {
            "role": "user",
            "content": {"type": "text", "text": "This is a simple prompt for testing."},
        }

    pair(body)


def test_prompt_with_arguments(pair: Runner) -> None:
    async def body(h: Harness) -> None:
        result = await h.client.get_prompt(
            "test_prompt_with_arguments", {"arg1": "one", "arg2": "two"}
        )
        (message,) = result["messages"]
        assert message["content"]["text"] == "Prompt with arguments: arg1='one', arg2='two'"
        with pytest.raises(McpError) as caught:
            await h.client.get_prompt("test_prompt_with_arguments", {"arg1": "one"})
        assert caught.value.code == ErrorCode.INVALID_PARAMS
        assert "arg2" in caught.value.message

    pair(body)


def test_prompt_with_embedded_resource_and_image(pair: Runner) -> None:
    async def body(h: Harness) -> None:
        result = await h.client.get_prompt(
            "test_prompt_with_embedded_resource", {"resourceUri": "test://static-text"}
        )
        first, second = result["messages"]
        assert first["content"]["type"] == "resource"
        assert first["content"]["resource"]["uri"] == "test://static-text"
        assert second["content"]["type"] == "text"
        result = await h.client.get_prompt("test_prompt_with_image")
        image, words = result["messages"]
        assert base64.b64decode(image["content"]["data"]) == IMAGE_PNG
        assert words["content"]["text"] == "Please analyze the image above."

    pair(body)


# ---------------------------------------------------------------------- completion


def test_completion_of_prompt_arguments_and_the_template(pair: Runner) -> None:
    async def body(h: Harness) -> None:
        prompt = {"type": "ref/prompt", "name": "test_prompt_with_arguments"}
        completion = (await h.client.complete(prompt, "arg1", "ap"))["completion"]
        assert completion == {"values": ["apple", "apricot"], "total": 2, "hasMore": False}
        completion = (await h.client.complete(prompt, "arg2", "", {"arg1": "apple"}))["completion"]
        assert completion["values"] == ["red", "green", "blue", "yellow"]
        template = {"type": "ref/resource", "uri": "test://template/{id}/data"}
        completion = (await h.client.complete(template, "id", "1"))["completion"]
        assert completion["values"] == ["1", "10"]
        other = {"type": "ref/prompt", "name": "test_simple_prompt"}
        assert (await h.client.complete(other, "x", ""))["completion"]["values"] == []
        assert (await h.client.complete(template, "other", ""))["completion"]["values"] == []

    pair(body)


# ---------------------------------------------------------------------- conformance: transports


def test_reconnection_tool_answers_on_a_stream_transport(pair: Runner) -> None:
    async def body(h: Harness) -> None:
        # Closing the stream is a Streamable HTTP matter (see test_example_fixture_http);
        # here it does nothing and the tool simply answers.
        result = await h.tool("test_reconnection")
        assert text(result).startswith("Reconnection test completed successfully.")

    pair(body)


def test_x_mcp_header_tool(pair: Runner) -> None:
    async def body(h: Harness) -> None:
        tools = {t["name"]: t for t in (await h.client.list_tools())["tools"]}
        schema = tools["test_x_mcp_header"]["inputSchema"]
        assert schema["properties"]["region"]["x-mcp-header"] == "Region"
        assert schema["properties"]["region"]["type"] == "string"
        assert text(await h.tool("test_x_mcp_header", {"region": "eu-west"})) == "Region: eu-west"
        assert (await h.tool("test_x_mcp_header"))["isError"] is True

    pair(body)


def test_the_first_listed_tool_accepts_empty_arguments(pair: Runner) -> None:
    async def body(h: Harness) -> None:
        # The 2026 header scenarios call the first tool of tools/list with {}: a result
        # (here an isError one), never a JSON-RPC error.
        first = (await h.client.list_tools())["tools"][0]["name"]
        result = await h.tool(first)
        assert "content" in result

    pair(body)


# ---------------------------------------------------------------------- conformance: 2026-07-28


def test_missing_capability_tool(pair: Runner) -> None:
    async def body(h: Harness) -> None:
        assert text(await h.tool("test_missing_capability")) == "Success: Paris"
        ((method, _, input_round),) = h.asked
        assert (method, input_round) == ("sampling/createMessage", h.stateless)

    pair(body)


def test_missing_capability_tool_without_sampling(pair: Runner) -> None:
    async def body(h: Harness) -> None:
        with pytest.raises(McpError) as caught:
            await h.tool("test_missing_capability")
        if h.stateless:
            assert caught.value.code == ErrorCode.MISSING_REQUIRED_CLIENT_CAPABILITY
            assert caught.value.data == {"requiredCapabilities": {"sampling": {}}}
        else:
            assert caught.value.code == ErrorCode.METHOD_NOT_FOUND
        assert h.asked == []

    pair(body, sampling=False)


def test_logging_tool(pair: Runner) -> None:
    async def body(h: Harness) -> None:
        await h.set_logging_level("warning")
        assert text(await h.tool("test_logging_tool")) == "Logging evaluated"
        await h.client.list_tools()
        assert h.messages() == []
        await h.set_logging_level("info")
        assert text(await h.tool("test_logging_tool")) == "Logging evaluated"
        assert h.messages() == ["Diagnostic trace logging activated"]
        (note,) = [n for n in h.notes if n.method == "notifications/message"]
        assert note.params["logger"] == "conformance"

    pair(body)


def test_streaming_elicitation(pair: Runner) -> None:
    async def body(h: Harness) -> None:
        h.elicit_answer = {"action": "accept", "content": {"confirmed": True}}
        result = await h.tool("test_streaming_elicitation")
        expected = 'Streaming complete: action=accept, content={"confirmed":true}'
        assert text(result) == expected
        ((method, params, input_round),) = h.asked
        assert (method, input_round) == ("elicitation/create", h.stateless)
        assert params["message"] == "Please confirm to continue"
        # Progress before the question and after the answer (in 2026-07-28 the first one is
        # sent again by the retry, which runs the handler again).
        assert [p["progress"] for p in h.progress][-2:] == [50, 100]

    pair(body)


@pytest.mark.parametrize("kind", ["tools", "prompts"])
def test_list_change_hooks(pair: Runner, kind: str) -> None:
    method = f"notifications/{kind}/list_changed"

    async def body(h: Harness) -> None:
        if h.stateless:  # list changes only go to a listen stream that asked for them
            h.spawn(lambda: h.client.listen(**{kind: True}))
            await h.until(
                lambda: any(n.method == "notifications/subscriptions/acknowledged" for n in h.notes)
            )
        result = await h.tool(f"test_trigger_{kind[:-1]}_change")
        assert text(result) == f"Mutation triggered: the {kind[:-1]} list changed"
        await h.until(lambda: any(n.method == method for n in h.notes))

    pair(body)


# Multi-round-trip requests: through our client, which answers input_required rounds (2026)
# or the server's requests (initialize era) with the same handlers.


def test_input_required_result_elicitation(pair: Runner) -> None:
    async def body(h: Harness) -> None:
        h.elicit_answer = {"action": "accept", "content": {"name": "Alice"}}
        result = await h.tool("test_input_required_result_elicitation")
        assert text(result) == "Hello, Alice!"
        ((method, params, input_round),) = h.asked
        assert (method, input_round) == ("elicitation/create", h.stateless)
        assert params["message"] == "What is your name?"
        assert params["requestedSchema"]["required"] == ["name"]
        h.elicit_answer = {"action": "decline"}
        result = await h.tool("test_input_required_result_elicitation")
        assert text(result) == "Hello, stranger!"

    pair(body)


def test_input_required_result_sampling_and_roots(pair: Runner) -> None:
    async def body(h: Harness) -> None:
        result = await h.tool("test_input_required_result_sampling")
        assert text(result) == "Sampling result: Paris"
        result = await h.tool("test_input_required_result_list_roots")
        assert text(result) == "Found 2 root(s)"
        asked = [(method, input_round) for method, _, input_round in h.asked]
        assert asked == [
            ("sampling/createMessage", h.stateless),
            ("roots/list", h.stateless),
        ]
        assert h.asked[0][1]["messages"][0]["content"]["text"] == ("What is the capital of France?")

    pair(body)


def test_input_required_result_request_state_and_tampered_state(pair: Runner) -> None:
    async def body(h: Harness) -> None:
        h.elicit_answer = {"action": "accept", "content": {"ok": True}}
        result = await h.tool("test_input_required_result_request_state")
        assert text(result) == "state-ok: requestState validated, confirmed=true"
        result = await h.tool("test_input_required_result_tampered_state")
        assert text(result) == "integrity-ok: state verified, confirmed=true"
        assert [params["message"] for _, params, _ in h.asked] == ["Please confirm"] * 2

    pair(body)


def test_input_required_result_multiple_inputs(pair: Runner) -> None:
    async def body(h: Harness) -> None:
        h.elicit_answer = {"action": "accept", "content": {"name": "Alice"}}
        result = await h.tool("test_input_required_result_multiple_inputs")
        assert text(result) == "Name: Alice; Greeting: Paris; Roots: 2"
        # In 2026-07-28 the three come in one round, and the client's handlers run
        # concurrently: their order is the scheduler's.
        assert sorted(method for method, _, _ in h.asked) == [
            "elicitation/create",
            "roots/list",
            "sampling/createMessage",
        ]

    pair(body)


def test_input_required_result_multi_round(pair: Runner) -> None:
    async def body(h: Harness) -> None:
        result = await h.tool("test_input_required_result_multi_round")
        assert text(result) == "Multi-round complete for <name> who likes <color>"
        messages = [params["message"] for _, params, _ in h.asked]
        assert messages == ["Step 1: What is your name?", "Step 2: What is your favorite color?"]

    pair(body)


def test_input_required_result_capabilities(pair: Runner) -> None:
    async def body(h: Harness) -> None:
        result = await h.tool("test_input_required_result_capabilities")
        assert text(result) == "capabilities-ok: received elicit_input,sample_input"

    pair(body)


def test_input_required_result_capabilities_asks_only_what_was_declared(pair: Runner) -> None:
    async def body(h: Harness) -> None:
        result = await h.tool("test_input_required_result_capabilities")
        assert text(result) == "capabilities-ok: received elicit_input"
        assert [method for method, _, _ in h.asked] == ["elicitation/create"]

    pair(body, sampling=False)


def test_input_required_result_prompt(pair: Runner) -> None:
    async def body(h: Harness) -> None:
        h.elicit_answer = {"action": "accept", "content": {"context": "testing"}}
        (message,) = (await h.client.get_prompt("test_input_required_result_prompt"))["messages"]
        assert message == {
            "role": "user",
            "content": {"type": "text", "text": "Prompt with context: testing"},
        }
        ((method, params, input_round),) = h.asked
        assert (method, input_round) == ("elicitation/create", h.stateless)
        assert params["message"] == "What context should the prompt use?"

    pair(body)


# ---------------------------------------------------------------------- 2026-07-28 on the wire
#
# The conformance suite checks the exact shape of input_required answers (the inputRequests
# keys, requestState) and of the retries' failures, which our client hides: these tests speak
# JSON lines to the example server by hand (asyncio; the session does the same on trio).

MRTR_CAPS: dict[str, Any] = {"elicitation": {}, "sampling": {}, "roots": {}}


def accepted(**content: Any) -> dict[str, Any]:
    return {"action": "accept", "content": content}


SAMPLED = {"role": "assistant", "model": "m", "content": {"type": "text", "text": "Paris"}}
ROOTS = {"roots": [{"uri": "file:///test/root", "name": "Test Root"}]}


class Wire:
    """A 2026-07-28 client by hand, on a socket pair with the example server."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.next_id = 0
        self.notes: list[dict[str, Any]] = []

    async def send(
        self,
        method: str,
        params: Mapping[str, Any],
        *,
        caps: Mapping[str, Any] = MRTR_CAPS,
        meta: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Send a request (with the ``_meta`` of 2026-07-28, plus ``meta``) and return its
        answer: the JSON-RPC message, ``result`` or ``error``."""
        self.next_id += 1
        meta = {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": dict(caps),
            **(meta or {}),
        }
        message = {
            "jsonrpc": "2.0",
            "id": self.next_id,
            "method": method,
            "params": {**params, "_meta": meta},
        }
        self.writer.write(json.dumps(message).encode() + b"\n")
        await self.writer.drain()
        while True:
            answer: dict[str, Any] = json.loads(await self.reader.readline())
            if answer.get("id") == self.next_id:
                return answer
            self.notes.append(answer)

    async def call(self, name: str, **params: Any) -> dict[str, Any]:
        """``tools/call`` of ``name`` with no arguments (and ``params``)."""
        caps = params.pop("caps", MRTR_CAPS)
        return await self.send("tools/call", {"name": name, "arguments": {}, **params}, caps=caps)


def run_wire(body: Callable[[Wire], Awaitable[None]]) -> None:
    async def main() -> None:
        one, other = socket.socketpair()
        server_reader, server_writer = await asyncio.open_connection(sock=one)
        serving = asyncio.create_task(
            aio.serve_stream(build_server(), server_reader, server_writer)
        )
        reader, writer = await asyncio.open_connection(sock=other)
        await body(Wire(reader, writer))
        writer.close()
        await asyncio.wait_for(serving, 5)

    asyncio.run(asyncio.wait_for(main(), LIMIT))


def input_required(answer: Mapping[str, Any]) -> dict[str, Any]:
    """The ``input_required`` result of an answer (it must be one)."""
    result: dict[str, Any] = answer["result"]
    assert result["resultType"] == "input_required"
    assert isinstance(result["requestState"], str)
    return result


def complete_text(answer: Mapping[str, Any]) -> str:
    result = answer["result"]
    assert result["resultType"] == "complete"
    return text(result)


def test_wire_elicitation_round_trip() -> None:
    async def body(w: Wire) -> None:
        first = input_required(await w.call("test_input_required_result_elicitation"))
        assert first["inputRequests"] == {
            "user_name": {
                "method": "elicitation/create",
                "params": {
                    "message": "What is your name?",
                    "requestedSchema": {
                        "type": "object",
                        "properties": {"name": {"type": "string"}},
                        "required": ["name"],
                    },
                },
            }
        }
        answer = await w.call(
            "test_input_required_result_elicitation",
            inputResponses={"user_name": accepted(name="Alice")},
            requestState=first["requestState"],
        )
        assert complete_text(answer) == "Hello, Alice!"
        # Without the requestState, and with keys it did not ask for: still complete.
        answer = await w.call(
            "test_input_required_result_elicitation",
            inputResponses={"user_name": accepted(name="Bob"), "unknown_extra_key": {"x": 1}},
        )
        assert complete_text(answer) == "Hello, Bob!"

    run_wire(body)


@pytest.mark.parametrize(
    ("responses", "rerequested"),
    [
        ({"wrong_key": accepted(data="wrong")}, True),  # what is missing is asked again
        (None, True),
        ({"user_name": 12345}, False),  # an answer that is no ElicitResult: -32602
        ({"user_name": {"content": {"name": "Eve"}}}, False),
    ],
)
def test_wire_bad_input_responses(responses: Any, rerequested: bool) -> None:
    async def body(w: Wire) -> None:
        answer = await w.call("test_input_required_result_elicitation", inputResponses=responses)
        if rerequested:
            assert list(input_required(answer)["inputRequests"]) == ["user_name"]
        else:
            assert answer["error"]["code"] == ErrorCode.INVALID_PARAMS
            assert "user_name" in answer["error"]["message"]

    run_wire(body)


@pytest.mark.parametrize(
    ("tool", "key", "method", "response", "expected"),
    [
        (
            "test_input_required_result_sampling",
            "capital_question",
            "sampling/createMessage",
            SAMPLED,
            "Sampling result: Paris",
        ),
        (
            "test_input_required_result_list_roots",
            "client_roots",
            "roots/list",
            ROOTS,
            "Found 1 root(s)",
        ),
        (
            "test_input_required_result_request_state",
            "confirm",
            "elicitation/create",
            accepted(ok=True),
            "state-ok: requestState validated, confirmed=true",
        ),
        (
            "test_input_required_result_tampered_state",
            "confirm",
            "elicitation/create",
            accepted(ok=True),
            "integrity-ok: state verified, confirmed=true",
        ),
    ],
)
def test_wire_single_input_tools(
    tool: str, key: str, method: str, response: Any, expected: str
) -> None:
    async def body(w: Wire) -> None:
        first = input_required(await w.call(tool))
        assert list(first["inputRequests"]) == [key]
        assert first["inputRequests"][key]["method"] == method
        retry = await w.call(
            tool, inputResponses={key: response}, requestState=first["requestState"]
        )
        assert complete_text(retry) == expected

    run_wire(body)


def test_wire_sampling_question() -> None:
    async def body(w: Wire) -> None:
        first = input_required(await w.call("test_input_required_result_sampling"))
        params = first["inputRequests"]["capital_question"]["params"]
        assert params == {
            "messages": [
                {
                    "role": "user",
                    "content": {"type": "text", "text": "What is the capital of France?"},
                }
            ],
            "maxTokens": 100,
        }
        first = input_required(await w.call("test_input_required_result_list_roots"))
        assert first["inputRequests"] == {"client_roots": {"method": "roots/list", "params": {}}}

    run_wire(body)


def test_wire_tampered_request_state_is_refused() -> None:
    async def body(w: Wire) -> None:
        tool = "test_input_required_result_tampered_state"
        first = input_required(await w.call(tool))
        for state in (
            first["requestState"] + "-TAMPERED",
            "not a state",
            first["requestState"][1:],
        ):
            answer = await w.call(
                tool, inputResponses={"confirm": accepted(ok=True)}, requestState=state
            )
            assert answer["error"]["code"] == ErrorCode.INVALID_PARAMS
        # A state sealed for another tool is refused too.
        other = input_required(await w.call("test_input_required_result_request_state"))
        answer = await w.call(
            tool, inputResponses={"confirm": accepted(ok=True)}, requestState=other["requestState"]
        )
        assert answer["error"]["code"] == ErrorCode.INVALID_PARAMS

    run_wire(body)


def test_wire_multi_round() -> None:
    async def body(w: Wire) -> None:
        tool = "test_input_required_result_multi_round"
        first = input_required(await w.call(tool))
        assert list(first["inputRequests"]) == ["step1"]
        second = input_required(
            await w.call(
                tool,
                inputResponses={"step1": accepted(name="Alice")},
                requestState=first["requestState"],
            )
        )
        assert list(second["inputRequests"]) == ["step2"]
        step2 = second["inputRequests"]["step2"]["params"]
        assert step2["message"] == "Step 2: What is your favorite color?"
        assert second["requestState"] != first["requestState"]
        # The last retry carries only step2: step1's answer is in the requestState.
        third = await w.call(
            tool,
            inputResponses={"step2": accepted(color="blue")},
            requestState=second["requestState"],
        )
        assert complete_text(third) == "Multi-round complete for Alice who likes blue"

    run_wire(body)


def test_wire_multiple_inputs() -> None:
    async def body(w: Wire) -> None:
        tool = "test_input_required_result_multiple_inputs"
        responses = {
            "user_name": accepted(name="Alice"),
            "greeting": SAMPLED,
            "client_roots": ROOTS,
        }
        # The session answers one input request per round (see the report on NeedInput):
        # the client answers what it is asked until the call completes.
        state: str | None = None
        given: dict[str, Any] = {}
        asked: list[str] = []
        for _ in range(4):
            params: dict[str, Any] = {"inputResponses": given}
            if state is not None:
                params["requestState"] = state
            answer = await w.call(tool, **params)
            if answer["result"]["resultType"] == "complete":
                break
            result = input_required(answer)
            state = result["requestState"]
            asked += list(result["inputRequests"])
            given = {key: responses[key] for key in result["inputRequests"]}
        assert complete_text(answer) == "Name: Alice; Greeting: Paris; Roots: 1"
        assert sorted(asked) == sorted(responses)

    run_wire(body)


def test_wire_capabilities() -> None:
    async def body(w: Wire) -> None:
        tool = "test_input_required_result_capabilities"
        first = input_required(await w.call(tool, caps={"sampling": {}}))
        assert {r["method"] for r in first["inputRequests"].values()} == {"sampling/createMessage"}
        assert list(first["inputRequests"]) == ["sample_input"]
        retry = await w.call(
            tool,
            caps={"sampling": {}},
            inputResponses={"sample_input": SAMPLED},
            requestState=first["requestState"],
        )
        assert complete_text(retry) == "capabilities-ok: received sample_input"
        answer = await w.call(tool, caps={"roots": {}})
        assert complete_text(answer) == "No supported capabilities declared"

    run_wire(body)


def test_wire_missing_capability() -> None:
    async def body(w: Wire) -> None:
        answer = await w.call("test_missing_capability", caps={})
        assert answer["error"]["code"] == ErrorCode.MISSING_REQUIRED_CLIENT_CAPABILITY
        assert answer["error"]["data"] == {"requiredCapabilities": {"sampling": {}}}
        # The same for the keyed asks of the input_required tools.
        answer = await w.call("test_input_required_result_list_roots", caps={"sampling": {}})
        assert answer["error"]["data"] == {"requiredCapabilities": {"roots": {}}}
        first = input_required(await w.call("test_missing_capability", caps={"sampling": {}}))
        assert [r["method"] for r in first["inputRequests"].values()] == ["sampling/createMessage"]

    run_wire(body)


def test_wire_prompt() -> None:
    async def body(w: Wire) -> None:
        name = "test_input_required_result_prompt"
        first = input_required(await w.send("prompts/get", {"name": name}))
        (key,) = first["inputRequests"]
        assert key == "user_context"
        assert first["inputRequests"][key]["method"] == "elicitation/create"
        retry = await w.send(
            "prompts/get",
            {
                "name": name,
                "inputResponses": {key: accepted(context="test context")},
                "requestState": first["requestState"],
            },
        )
        result = retry["result"]
        assert result["resultType"] == "complete"
        assert result["messages"][0]["content"]["text"] == "Prompt with context: test context"
        # Never on the list methods.
        for method in ("tools/list", "prompts/list"):
            assert (await w.send(method, {}))["result"]["resultType"] == "complete"

    run_wire(body)


def test_wire_streaming_elicitation_and_logging() -> None:
    async def body(w: Wire) -> None:
        first = input_required(await w.call("test_streaming_elicitation", caps={"elicitation": {}}))
        (request,) = first["inputRequests"].values()
        assert request["method"] == "elicitation/create"
        assert all("id" not in note for note in w.notes)  # no request to the client, ever
        assert complete_text(await w.call("test_logging_tool", caps={})) == "Logging evaluated"
        assert w.notes == []  # no logLevel in _meta: no log message
        meta = {"io.modelcontextprotocol/logLevel": "info"}
        await w.send("tools/call", {"name": "test_logging_tool", "arguments": {}}, meta=meta)
        (note,) = w.notes
        assert note["method"] == "notifications/message"
        assert note["params"]["data"] == "Diagnostic trace logging activated"

    run_wire(body)
