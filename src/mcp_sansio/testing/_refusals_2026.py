"""The refusals of 2026-07-28 only (see :mod:`mcp_sansio.testing._refusals`)."""

from __future__ import annotations

from typing import Final

from mcp_sansio.testing._refusal_model import Example, Refusal, cite, meta
from mcp_sansio.testing._refusal_parts import (
    ACK_SUBSET,
    CALL,
    LOG_LEVEL_REJECT,
    PARAMS,
    SUBSCRIBE,
    TOOLS,
    C,
    M,
    S,
    ack,
    acked,
    listen,
    note,
    request,
    result,
)
from mcp_sansio.testing._rule_parts import (
    SOURCE_OF_TRUTH,
)

__all__ = ["MODERN"]

MODERN: Final[tuple[Refusal, ...]] = (
    # ------------------------------------------------------------------ 2026-07-28
    Refusal(
        "2026-07-28",
        "a legacy ``initialize`` to a server of 2026-07-28 only",
        "-32602, with ``data.supported``",
        cite("lifecycle.initialize-stateless", "MUST reject"),
        ("MUST",),
        ("MUST",),
        (
            Example(
                M,
                S,
                request(
                    0,
                    "initialize",
                    {
                        "protocolVersion": "2025-11-25",
                        "capabilities": {},
                        "clientInfo": {"name": "c", "version": "1"},
                    },
                ),
                "reply",
                PARAMS,
                0,
            ),
        ),
        note="the exact code is implementation-defined (Basic > Lifecycle)",
    ),
    Refusal(
        "2026-07-28",
        "a request without ``_meta``, or without a string ``protocolVersion`` or an object "
        "``clientCapabilities`` in it",
        "-32602",
        (*cite("meta.missing"),),
        ("MUST",),
        ("MUST",),
        (
            Example(M, S, request(1, "tools/list"), "reply", PARAMS, 1, server_capabilities=TOOLS),
            Example(
                M,
                S,
                request(
                    1,
                    "tools/list",
                    {"_meta": {**meta(), "io.modelcontextprotocol/protocolVersion": 5}},
                ),
                "reply",
                PARAMS,
                1,
                server_capabilities=TOOLS,
            ),
            Example(
                M,
                S,
                request(
                    1,
                    "tools/list",
                    {"_meta": {**meta(), "io.modelcontextprotocol/clientCapabilities": []}},
                ),
                "reply",
                PARAMS,
                1,
                server_capabilities=TOOLS,
            ),
        ),
    ),
    Refusal(
        "2026-07-28",
        "a request for a version the server does not support",
        "-32022, with ``data.supported`` and ``data.requested``",
        cite("meta.unsupported-version"),
        ("MUST",),
        ("MUST",),
        (
            Example(
                M,
                S,
                request(
                    1,
                    "tools/list",
                    {"_meta": {**meta(), "io.modelcontextprotocol/protocolVersion": "2099-01-01"}},
                ),
                "reply",
                -32022,
                1,
                server_capabilities=TOOLS,
            ),
        ),
    ),
    Refusal(
        "2026-07-28",
        "a ``clientInfo`` that is not an object",
        "-32602",
        (SOURCE_OF_TRUTH,),
        ("implied",),
        ("schema",),
        (
            Example(
                M,
                S,
                request(
                    1, "tools/list", {"_meta": {**meta(), "io.modelcontextprotocol/clientInfo": 5}}
                ),
                "reply",
                PARAMS,
                1,
                server_capabilities=TOOLS,
            ),
        ),
        note="the schema's ``Implementation``",
    ),
    Refusal(
        "2026-07-28",
        "a ``logLevel`` that is not a known level",
        "-32602",
        (LOG_LEVEL_REJECT,),
        ("SHOULD",),
        ("receiver",),
        (
            Example(
                M,
                S,
                request(1, "tools/list", {"_meta": meta(logLevel="loud")}),
                "reply",
                PARAMS,
                1,
                server_capabilities={"logging": {}, **TOOLS},
            ),
        ),
        note="the receiver's SHOULD",
    ),
    Refusal(
        "2026-07-28",
        "a stream notification without the ``subscriptionId`` of a listen of ours, before its "
        "acknowledgement, not opted into, or for a resource not on the stream",
        "dropped",
        (*cite("subscriptions.not-opted-in"), *cite("subscriptions.listen-ack-first")),
        ("MUST", "MUST NOT"),
        ("MUST",),
        (
            Example(
                M,
                C,
                note("notifications/tools/list_changed"),
                "dropped",
                server_capabilities={"tools": {"listChanged": True}},
                lead=acked({"toolsListChanged": True}),
            ),
            Example(
                M,
                C,
                note(
                    "notifications/tools/list_changed",
                    {"_meta": {"io.modelcontextprotocol/subscriptionId": "L"}},
                ),
                "dropped",
                server_capabilities={"tools": {"listChanged": True}},
                lead=(listen({"toolsListChanged": True}),),
            ),
            Example(
                M,
                C,
                note(
                    "notifications/prompts/list_changed",
                    {"_meta": {"io.modelcontextprotocol/subscriptionId": "L"}},
                ),
                "dropped",
                server_capabilities={
                    "tools": {"listChanged": True},
                    "prompts": {"listChanged": True},
                },
                lead=acked({"toolsListChanged": True}),
            ),
            Example(
                M,
                C,
                note(
                    "notifications/resources/updated",
                    {"uri": "file:///b", "_meta": {"io.modelcontextprotocol/subscriptionId": "L"}},
                ),
                "dropped",
                server_capabilities=SUBSCRIBE,
                lead=acked({"resourceSubscriptions": ["file:///a"]}),
            ),
        ),
    ),
    Refusal(
        "2026-07-28",
        "a second acknowledgement of a listen",
        "dropped",
        cite("subscriptions.listen-ack-first"),
        ("MUST",),
        ("MUST",),
        (
            Example(
                M,
                C,
                ack("L", {"toolsListChanged": True}),
                "dropped",
                server_capabilities={"tools": {"listChanged": True}},
                lead=acked({"toolsListChanged": True}),
            ),
        ),
        note="a second one is a type not requested (MUST NOT)",
    ),
    Refusal(
        "2026-07-28",
        "an acknowledgement granting what the listen did not ask for, or whose "
        "``notifications`` is not an object",
        "dropped",
        (ACK_SUBSET, SOURCE_OF_TRUTH),
        ("implied",),
        ("schema",),
        (
            Example(
                M,
                C,
                ack("L", {"resourceSubscriptions": ["file:///b"]}),
                "dropped",
                server_capabilities=SUBSCRIBE,
                lead=(listen({"resourceSubscriptions": ["file:///a"]}),),
            ),
            Example(
                M,
                C,
                ack("L", 5),
                "dropped",
                server_capabilities=SUBSCRIBE,
                lead=(listen({"resourceSubscriptions": ["file:///a"]}),),
            ),
        ),
    ),
    Refusal(
        "2026-07-28",
        "a result with an unknown ``resultType``",
        "an invalid response (dropped)",
        cite("input-required.invalid", "resultType"),
        ("MUST",),
        ("MUST",),
        (
            Example(
                M,
                C,
                result("c", {"resultType": "weird", "content": []}),
                "dropped",
                server_capabilities=TOOLS,
                lead=CALL,
            ),
        ),
    ),
    Refusal(
        "2026-07-28",
        "an ``input_required`` result for a method that cannot return one, with neither "
        "``inputRequests`` nor ``requestState``, a ``requestState`` that is not a string, an "
        "input request of an unknown method or for a capability the request did not declare",
        "an invalid response (dropped)",
        (
            *cite("input-required.invalid", "Servers MUST", "inputRequests` values"),
            *cite("input-required.undeclared-capability"),
        ),
        ("MUST", "MUST NOT"),
        ("MUST",),
        (
            Example(
                M,
                C,
                result("l", {"resultType": "input_required", "requestState": "s"}),
                "dropped",
                server_capabilities=TOOLS,
                lead=((C, {"id": "l", "method": "tools/list"}),),
            ),
            Example(
                M,
                C,
                result("c", {"resultType": "input_required"}),
                "dropped",
                server_capabilities=TOOLS,
                lead=CALL,
            ),
            Example(
                M,
                C,
                result("c", {"resultType": "input_required", "requestState": 5}),
                "dropped",
                server_capabilities=TOOLS,
                lead=CALL,
            ),
            Example(
                M,
                C,
                result(
                    "c",
                    {
                        "resultType": "input_required",
                        "inputRequests": {"a": {"method": "no/such", "params": {}}},
                    },
                ),
                "dropped",
                server_capabilities=TOOLS,
                lead=CALL,
            ),
            Example(
                M,
                C,
                result(
                    "c",
                    {
                        "resultType": "input_required",
                        "inputRequests": {"a": {"method": "roots/list", "params": {}}},
                    },
                ),
                "dropped",
                server_capabilities=TOOLS,
                lead=CALL,
            ),
        ),
    ),
    Refusal(
        "2026-07-28",
        "a ``server/discover`` result without ``supportedVersions`` or ``capabilities``, or "
        "naming no version the client speaks",
        ":class:`~mcp_sansio.RemoteProtocolError`",
        (SOURCE_OF_TRUTH,),
        ("implied",),
        ("integrity",),
        (
            Example(
                M,
                C,
                result("d", {"resultType": "complete", "capabilities": {}}),
                "fatal",
                handshake=0,
                receiver_versions=(M, "2025-11-25"),
                lead=((C, {"id": "d", "method": "server/discover"}),),
            ),
            Example(
                M,
                C,
                result(
                    "d",
                    {
                        "resultType": "complete",
                        "supportedVersions": ["2099-01-01"],
                        "capabilities": {},
                    },
                ),
                "fatal",
                handshake=0,
                receiver_versions=(M, "2025-11-25"),
                lead=((C, {"id": "d", "method": "server/discover"}),),
            ),
        ),
        note="the schema's ``DiscoverResult``; there is no version to go on with",
    ),
)
