"""The official Python SDK's client (``mcp==2.3.0``) against a stdio server, for the interop
tests: run with the interop venv's Python (``.interop/sdk-venv/bin/python``), never imported
by the tests themselves.

    sdk_client.py MODE -- COMMAND [ARG ...]

``MODE`` is the SDK's ``Client(mode=...)``: ``legacy``, ``auto`` or ``2026-07-28``. The
script opens one session to the server that ``COMMAND`` starts, goes through the example
server's features (tools, resources, prompts, completion, progress, logging, sampling,
elicitation, roots) and prints one JSON object on stdout: one key per step, each either the
step's result or ``{"error": "..."}`` so that a failing step does not hide the others.
"""

# mypy: ignore-errors
# (mypy runs in an environment without the SDK; this file only runs in the SDK's venv.)

from __future__ import annotations

import json
import sys
import traceback
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
from mcp import Client, StdioServerParameters, types

#: Bounds every step, and the whole session.
STEP_TIMEOUT = 20.0
SESSION_TIMEOUT = 90.0


def dump(value: Any) -> Any:
    """A pydantic model (or a list of them) as plain JSON data, by the wire names."""
    if isinstance(value, list):
        return [dump(v) for v in value]
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json", by_alias=True, exclude_none=True)
    return value


def texts(result: Any) -> list[str]:
    return [c.text for c in result.content if getattr(c, "type", None) == "text"]


async def sampling(context: Any, params: types.CreateMessageRequestParams) -> Any:
    prompt = params.messages[0].content
    text = getattr(prompt, "text", "?")
    return types.CreateMessageResult(
        role="assistant",
        content=types.TextContent(type="text", text=f"sampled: {text}"),
        model="interop-model",
        stop_reason="endTurn",
    )


async def elicitation(context: Any, params: types.ElicitRequestParams) -> Any:
    return types.ElicitResult(action="accept", content={"response": "from the SDK client"})


async def roots(context: Any) -> Any:
    return types.ListRootsResult(
        roots=[types.Root(uri="file:///tmp/interop-root", name="interop-root")]
    )


async def main(mode: str, command: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {"mode": mode}
    logs: list[Any] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logs.append(dump(params))

    async def step(name: str, action: Callable[[], Awaitable[Any]]) -> None:
        try:
            with anyio.fail_after(STEP_TIMEOUT):
                out[name] = await action()
        except Exception as exc:
            out[name] = {"error": f"{type(exc).__name__}: {exc}"}
            code = getattr(getattr(exc, "error", None), "code", None)
            if code is None:
                code = getattr(exc, "code", None)
            if code is not None:
                out[name]["code"] = code
            print(f"step {name} failed:", file=sys.stderr)
            traceback.print_exc(file=sys.stderr)

    params = StdioServerParameters(command=command[0], args=command[1:])
    client = Client(
        params,
        mode=mode,
        sampling_callback=sampling,
        elicitation_callback=elicitation,
        list_roots_callback=roots,
        logging_callback=on_log,
        # 2026-07-28: the opt-in to log messages rides every request's _meta.
        log_level=None if mode == "legacy" else "info",
        read_timeout_seconds=STEP_TIMEOUT,
    )
    async with client:
        out["protocol_version"] = client.protocol_version
        info = client.server_info
        out["server_name"] = info.name if info is not None else None

        async def list_tools() -> Any:
            return sorted(t.name for t in (await client.list_tools()).tools)

        async def call(name: str, arguments: dict[str, Any] | None = None) -> Any:
            result = await client.call_tool(name, arguments or {})
            return {"text": texts(result), "isError": bool(result.is_error)}

        async def read(uri: str) -> Any:
            return dump((await client.read_resource(uri)).contents)

        async def prompt() -> Any:
            result = await client.get_prompt(
                "test_prompt_with_arguments", {"arg1": "alpha", "arg2": "red"}
            )
            return dump(result.messages)

        async def complete() -> Any:
            result = await client.complete(
                types.PromptReference(type="ref/prompt", name="test_prompt_with_arguments"),
                {"name": "arg1", "value": "ap"},
            )
            return result.completion.values

        async def progress() -> Any:
            seen: list[Any] = []

            async def on_progress(value: float, total: float | None, message: str | None) -> None:
                seen.append([value, total, message])

            result = await client.call_tool(
                "test_tool_with_progress", {}, progress_callback=on_progress
            )
            return {"text": texts(result), "progress": seen}

        async def logging() -> Any:
            if mode == "legacy":
                await client.set_logging_level("info")
            result = await client.call_tool("test_tool_with_logging", {})
            # The notifications precede the result on the wire; give the callback a moment.
            with anyio.move_on_after(2.0):
                while len(logs) < 3:
                    await anyio.sleep(0.02)
            return {"text": texts(result), "logs": list(logs)}

        async def unknown_tool() -> Any:
            return await call("no-such-tool")

        await step("tools", list_tools)
        await step("echo", lambda: call("echo", {"message": "hello from the SDK"}))
        await step("add", lambda: call("add", {"a": 2, "b": 3.5}))
        await step("tool_error", lambda: call("test_error_handling"))
        await step("unknown_tool", unknown_tool)
        await step("resource", lambda: read("test://static-text"))
        await step("blob", lambda: read("test://static-binary"))
        await step("template", lambda: read("test://template/7/data"))
        await step("prompt", prompt)
        await step("completion", complete)
        await step("progress", progress)
        await step("logging", logging)
        await step("sampling", lambda: call("test_sampling", {"prompt": "a haiku"}))
        await step("elicitation", lambda: call("test_elicitation", {"message": "Your answer?"}))
        await step("roots", lambda: call("list-roots"))
    return out


def run() -> None:
    args = sys.argv[1:]
    if len(args) < 3 or args[1] != "--":
        sys.exit(__doc__)
    mode, command = args[0], args[2:]

    async def bounded() -> dict[str, Any]:
        with anyio.fail_after(SESSION_TIMEOUT):
            return await main(mode, command)

    result = anyio.run(bounded)
    json.dump(result, sys.stdout, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    run()
