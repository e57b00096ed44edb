"""Asking the client under keys, in both eras, and the example server's multi-round-trip
tools (SEP-2322, the conformance suite's ``test_input_required_result_*``).

In the initialize era a handler that asks sends the client a request and waits; where the
version's record says a server sends no requests
(:attr:`~mcp_sansio._versions.EraPolicy.server_requests`, 2026-07-28) the handler answers
``input_required`` under the keys the suite looks for, and runs again on the retry with the
answers in hand."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from .._errors import ErrorCode
from .._versions import VERSIONS
from ..server import Server
from ..session import McpError, NeedInput
from ._parts import (
    _NAME,
    _NO_ARGUMENTS,
    _OK,
    _STRING,
    Context,
    _confirmed,
    _count_roots,
    _field,
    _object,
    _sampled_text,
    _text,
)

__all__ = ["add_input_required_tools"]

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


def _asks_by_input_required(ctx: Context) -> bool:
    """Whether the request's version has the server ask by ``input_required`` results
    rather than by requests to the client (2026-07-28), from the version's record."""
    version = ctx.protocol_version
    spec = VERSIONS.get(version) if version is not None else None
    return spec is not None and not spec.policy.server_requests


def _caps_in_meta(ctx: Context) -> bool:
    """Whether each request carries the client's capabilities in its ``_meta``
    (2026-07-28), from the version's record."""
    version = ctx.protocol_version
    spec = VERSIONS.get(version) if version is not None else None
    return spec is not None and spec.policy.request_meta


def _client_capabilities(ctx: Context) -> Mapping[str, Any]:
    """The client's capabilities: those the request declares in its ``_meta``
    (2026-07-28), or those it declared at ``initialize``."""
    if _caps_in_meta(ctx):
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
    if not _asks_by_input_required(ctx):
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


def add_input_required_tools(server: Server) -> None:
    """Register the multi-round-trip tools on ``server``."""
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
