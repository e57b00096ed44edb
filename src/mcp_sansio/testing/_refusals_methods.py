"""The refusals of ids and answers, methods and capabilities, and params (see
:mod:`mcp_sansio.testing._refusals`).
"""

from __future__ import annotations

from typing import Final

from mcp_sansio.testing._refusal_model import Example, Refusal, cite, meta
from mcp_sansio.testing._refusal_parts import (
    CALL,
    INCLUDE_CONTEXT_2026,
    INVALID,
    LOGGING_DECLARED,
    NOT_FOUND,
    PARAMS,
    SAMPLING,
    SAMPLING_TOOLS_2026,
    SUBSCRIBE,
    TOKEN_TYPE,
    TOKEN_UNIQUE,
    TOOLS,
    TOOLS_DECLARED,
    WITH_TOKEN,
    C,
    M,
    S,
    input_sampling,
    note,
    request,
    result,
)
from mcp_sansio.testing._rule_parts import (
    NEGOTIATED_ONLY,
    RESPECT_VERSION,
    RESPONSE_ID,
    SOURCE_OF_TRUTH,
)

__all__ = ["METHODS"]

METHODS: Final[tuple[Refusal, ...]] = (
    # ------------------------------------------------------------------ ids and answers
    Refusal(
        "Ids and answers",
        "a request reusing an id it used before in the session (initialize era)",
        "-32600",
        cite("ids.duplicate-request-id", "previously used"),
        ("MUST NOT",),
        ("MUST",),
        (
            Example(
                "2025-11-25",
                S,
                request(5, "ping"),
                "reply",
                INVALID,
                lead=((C, {"id": 5, "method": "ping"}), (S, {"id": 5, "result": {}})),
            ),
            Example(
                "2024-11-05",
                C,
                request("x", "ping"),
                "reply",
                INVALID,
                lead=((S, {"id": "x", "method": "ping"}), (C, {"id": "x", "result": {}})),
            ),
        ),
    ),
    Refusal(
        "Ids and answers",
        "a request with the id of one of its requests in flight (both eras)",
        "-32600, id ``null`` (an answer under that id would be taken for the other's)",
        cite("ids.duplicate-request-id"),
        ("MUST NOT",),
        ("MUST",),
        (
            Example(
                "2025-11-25",
                S,
                request(5, "ping"),
                "reply",
                INVALID,
                None,
                lead=((C, {"id": 5, "method": "ping"}),),
            ),
            Example(
                M,
                S,
                request(5, "tools/list", {"_meta": meta()}),
                "reply",
                INVALID,
                None,
                server_capabilities=TOOLS,
                lead=((C, {"id": 5, "method": "tools/list"}),),
            ),
        ),
    ),
    Refusal(
        "Ids and answers",
        "a response whose id answers no request of ours in flight (the late answer to one we "
        "cancelled is dropped silently)",
        "dropped",
        (*cite("response.unknown-id", "Responses are sent"), *RESPONSE_ID),
        ("MUST",),
        ("MUST",),
        (
            Example("2025-11-25", C, {"jsonrpc": "2.0", "id": "nope", "result": {}}, "dropped"),
            Example(
                "2024-11-05",
                S,
                {"jsonrpc": "2.0", "id": 3, "error": {"code": -1, "message": "m"}},
                "dropped",
            ),
            Example(M, C, {"jsonrpc": "2.0", "id": "nope", "result": {}}, "dropped"),
            Example(
                "2025-11-25",
                C,
                {"jsonrpc": "2.0", "id": "1", "result": {}},
                "dropped",
                lead=((C, {"id": 1, "method": "ping"}),),
            ),
        ),
    ),
    # ------------------------------------------------------------------ methods and capabilities
    Refusal(
        "Methods and capabilities",
        "a request for a method the negotiated version does not have (or a notification's "
        "name); a notification likewise",
        "-32601; a notification dropped",
        (*cite("method.unknown", "-32601 |"), *RESPECT_VERSION),
        ("MUST", "SHOULD"),
        ("MUST",),
        (
            Example("2025-11-25", S, request(1, "no/such"), "reply", NOT_FOUND, 1),
            Example(
                "2024-11-05",
                C,
                request(
                    1,
                    "elicitation/create",
                    {"message": "m", "requestedSchema": {"type": "object", "properties": {}}},
                ),
                "reply",
                NOT_FOUND,
                1,
            ),
            Example("2025-06-18", S, note("notifications/no_such"), "dropped"),
        ),
        note="MUST from 2025-06-18, SHOULD before",
    ),
    Refusal(
        "Methods and capabilities",
        "a request only the other side sends (a server's ``tools/call``, a client's "
        "``sampling/createMessage``); a notification likewise",
        "-32601; a notification dropped",
        cite("method.wrong-direction", "-32601 |"),
        ("implied",),
        ("schema",),
        (
            Example(
                "2025-11-25", C, request(1, "tools/call", {"name": "t"}), "reply", NOT_FOUND, 1
            ),
            Example(
                "2025-11-25",
                S,
                request(1, "sampling/createMessage", {"messages": [], "maxTokens": 1}),
                "reply",
                NOT_FOUND,
                1,
                client_capabilities={"sampling": {}},
            ),
            Example("2024-11-05", S, note("notifications/tools/list_changed"), "dropped"),
        ),
        note="the schema lists who sends each method",
    ),
    Refusal(
        "Methods and capabilities",
        "2026-07-28: any request of the server's",
        "-32601",
        cite("stateless.server-request", "MUST NOT initiate"),
        ("MUST NOT",),
        ("MUST",),
        (
            Example(
                M,
                C,
                request(1, "roots/list"),
                "reply",
                NOT_FOUND,
                1,
                client_capabilities={"roots": {}},
            ),
        ),
    ),
    Refusal(
        "Methods and capabilities",
        "a request for a capability the receiver did not declare (``tools/call`` without "
        "``tools``, ``resources/subscribe`` without ``resources.subscribe``, ``roots/list`` "
        "without ``roots``, …), in every version",
        "-32601",
        (
            *cite("capability.undeclared-server-capability", "Servers SHOULD"),
            *cite("capability.undeclared-client-capability", "Clients SHOULD"),
            TOOLS_DECLARED,
            *NEGOTIATED_ONLY,
        ),
        ("SHOULD", "MUST"),
        ("receiver",),
        (
            Example(
                "2025-11-25", S, request(1, "tools/call", {"name": "t"}), "reply", NOT_FOUND, 1
            ),
            Example(
                "2025-06-18",
                S,
                request(1, "resources/subscribe", {"uri": "file:///a"}),
                "reply",
                NOT_FOUND,
                1,
                server_capabilities={"resources": {}},
            ),
            Example("2024-11-05", C, request(1, "roots/list"), "reply", NOT_FOUND, 1),
            Example(
                M,
                S,
                request(1, "tools/call", {"name": "t", "_meta": meta()}),
                "reply",
                NOT_FOUND,
                1,
            ),
        ),
        note="the receiver's own declaration and its SHOULD; the sender's MUST (SHOULD before "
        "2025-06-18) is to use only what was negotiated",
    ),
    Refusal(
        "Methods and capabilities",
        "a notification of a feature its sender did not declare (``notifications/message`` "
        "without ``logging``, ``notifications/tools/list_changed`` without ``tools``, …)",
        "dropped (unless named in ``accept_undeclared``)",
        (LOGGING_DECLARED, TOOLS_DECLARED),
        ("MUST",),
        ("MUST",),
        (
            Example(
                "2025-11-25",
                C,
                note("notifications/message", {"level": "info", "data": "x"}),
                "dropped",
            ),
            Example("2024-11-05", C, note("notifications/tools/list_changed"), "dropped"),
            Example("2025-03-26", S, note("notifications/roots/list_changed"), "dropped"),
        ),
        note="likewise prompts, resources, the client's roots",
    ),
    Refusal(
        "Methods and capabilities",
        "a notification of a sub-capability its sender did not declare (``listChanged``, "
        "``subscribe``), the feature declared",
        "2025-06-18 on: dropped (unless in ``accept_undeclared``); 2024-11-05 and 2025-03-26: "
        "accepted; under ``strict``: dropped",
        NEGOTIATED_ONLY,
        ("MUST", "SHOULD"),
        ("MUST", "strict"),
        (
            Example(
                "2025-11-25",
                C,
                note("notifications/tools/list_changed"),
                "dropped",
                server_capabilities=TOOLS,
            ),
            Example(
                "2025-06-18",
                S,
                note("notifications/roots/list_changed"),
                "dropped",
                client_capabilities={"roots": {}},
            ),
            Example(
                "2025-03-26",
                C,
                note("notifications/tools/list_changed"),
                "dropped",
                server_capabilities=TOOLS,
                strict_only=True,
            ),
            Example(
                "2024-11-05",
                S,
                note("notifications/roots/list_changed"),
                "dropped",
                client_capabilities={"roots": {}},
                strict_only=True,
            ),
        ),
        note="MUST from 2025-06-18; SHOULD in 2024-11-05 and 2025-03-26 (strict there)",
    ),
    # ------------------------------------------------------------------ params
    Refusal(
        "Params",
        "a request whose params lack what the schema requires or give it the wrong JSON type "
        "(``tools/call`` without ``name``, ``logging/setLevel`` with an unknown level, …)",
        "-32602",
        (*cite("params.invalid", "-32602 |", "Servers SHOULD"), SOURCE_OF_TRUTH),
        ("SHOULD",),
        ("receiver",),
        (
            Example(
                "2025-11-25",
                S,
                request(1, "tools/call", {}),
                "reply",
                PARAMS,
                1,
                server_capabilities=TOOLS,
            ),
            Example(
                "2024-11-05",
                S,
                request(1, "logging/setLevel", {"level": "loud"}),
                "reply",
                PARAMS,
                1,
                server_capabilities={"logging": {}},
            ),
            Example(
                "2025-06-18",
                S,
                request(1, "resources/read", {"uri": 5}),
                "reply",
                PARAMS,
                1,
                server_capabilities={"resources": {}},
            ),
            Example(
                M,
                S,
                request(1, "tools/call", {"_meta": meta()}),
                "reply",
                PARAMS,
                1,
                server_capabilities=TOOLS,
            ),
        ),
        note="the receiver's SHOULD; the schema is the source of truth",
    ),
    Refusal(
        "Params",
        "a request ``_meta`` that is not an object, or a ``progressToken`` that is not a "
        "string or an integer",
        "-32602",
        TOKEN_TYPE,
        ("MUST",),
        ("MUST",),
        (
            Example("2025-11-25", S, request(1, "ping", {"_meta": 5}), "reply", PARAMS, 1),
            Example(
                "2024-11-05",
                S,
                request(1, "ping", {"_meta": {"progressToken": 1.5}}),
                "reply",
                PARAMS,
                1,
            ),
            Example(
                M,
                S,
                request(1, "tools/list", {"_meta": {**meta(), "progressToken": 1.5}}),
                "reply",
                PARAMS,
                1,
                server_capabilities=TOOLS,
            ),
        ),
    ),
    Refusal(
        "Params",
        "a ``progressToken`` in use by another of its requests in flight",
        "-32600",
        TOKEN_UNIQUE,
        ("MUST",),
        ("MUST",),
        (
            Example(
                "2025-11-25",
                S,
                request(2, "ping", {"_meta": {"progressToken": "t"}}),
                "reply",
                INVALID,
                2,
                lead=(
                    (C, {"id": 1, "method": "ping", "params": {"_meta": {"progressToken": "t"}}}),
                ),
            ),
            Example(
                M,
                S,
                request(2, "tools/list", {"_meta": {**meta(), "progressToken": "t"}}),
                "reply",
                INVALID,
                2,
                server_capabilities=TOOLS,
                lead=WITH_TOKEN,
            ),
        ),
    ),
    Refusal(
        "Params",
        "2025-11-25: elicitation in a mode the client did not declare, or in an unknown mode",
        "-32602",
        cite("capability.undeclared-client-subcapability", "Clients MUST return"),
        ("MUST",),
        ("MUST",),
        (
            Example(
                "2025-11-25",
                C,
                request(
                    1,
                    "elicitation/create",
                    {
                        "mode": "url",
                        "message": "m",
                        "url": "https://example.com",
                        "elicitationId": "e",
                    },
                ),
                "reply",
                PARAMS,
                1,
                client_capabilities={"elicitation": {"form": {}}},
            ),
            Example(
                "2025-11-25",
                C,
                request(1, "elicitation/create", {"mode": "telepathy", "message": "m"}),
                "reply",
                PARAMS,
                1,
                client_capabilities={"elicitation": {"form": {}, "url": {}}},
            ),
        ),
    ),
    Refusal(
        "Params",
        "2025-11-25 on: sampling with ``tools`` or ``toolChoice`` without ``sampling.tools`` (in "
        "a request, or in a 2026 ``input_required`` result)",
        "-32602 (the text names no code); a result is an invalid response",
        (
            *cite("capability.undeclared-client-subcapability", "The client MUST return an error"),
            SAMPLING_TOOLS_2026,
        ),
        ("MUST",),
        ("MUST",),
        (
            Example(
                "2025-11-25",
                C,
                request(1, "sampling/createMessage", {**SAMPLING, "tools": []}),
                "reply",
                PARAMS,
                1,
                client_capabilities={"sampling": {}},
            ),
            Example(
                "2025-11-25",
                C,
                request(1, "sampling/createMessage", {**SAMPLING, "toolChoice": {"mode": "auto"}}),
                "reply",
                PARAMS,
                1,
                client_capabilities={"sampling": {}},
            ),
            Example(
                "2026-07-28",
                C,
                result("c", input_sampling(tools=[])),
                "dropped",
                client_capabilities={"sampling": {}},
                server_capabilities=TOOLS,
                lead=CALL,
            ),
        ),
    ),
    Refusal(
        "Params",
        '2025-11-25 on: sampling with ``includeContext`` other than ``"none"`` without '
        "``sampling.context`` (in a request, or in a 2026 ``input_required`` result)",
        "served; under ``strict``: -32602, a result an invalid response",
        (
            *cite("capability.undeclared-client-subcapability", "If not declared"),
            INCLUDE_CONTEXT_2026,
        ),
        ("SHOULD",),
        ("strict",),
        (
            Example(
                "2025-11-25",
                C,
                request(1, "sampling/createMessage", {**SAMPLING, "includeContext": "thisServer"}),
                "reply",
                PARAMS,
                1,
                client_capabilities={"sampling": {}},
                strict_only=True,
            ),
            Example(
                "2026-07-28",
                C,
                result("c", input_sampling(includeContext="allServers")),
                "dropped",
                client_capabilities={"sampling": {}},
                server_capabilities=TOOLS,
                lead=CALL,
                strict_only=True,
            ),
        ),
    ),
    Refusal(
        "Params",
        "``resources/subscribe`` past ``max_subscriptions`` or ``max_subscription_bytes``",
        "-32600",
        (),
        ("ours",),
        ("integrity",),
        (
            Example(
                "2025-11-25",
                S,
                request(2, "resources/subscribe", {"uri": "file:///b"}),
                "reply",
                INVALID,
                2,
                server_capabilities=SUBSCRIBE,
                config={"max_subscriptions": 1},
                lead=(
                    (C, {"id": 1, "method": "resources/subscribe", "params": {"uri": "file:///a"}}),
                    (S, {"id": 1, "result": {}}),
                ),
            ),
            Example(
                "2024-11-05",
                S,
                request(2, "resources/subscribe", {"uri": "file:///" + "b" * 300}),
                "reply",
                INVALID,
                2,
                server_capabilities=SUBSCRIBE,
                config={"max_subscription_bytes": 400},
                lead=(
                    (
                        C,
                        {
                            "id": 1,
                            "method": "resources/subscribe",
                            "params": {"uri": "file:///" + "a" * 300},
                        },
                    ),
                    (S, {"id": 1, "result": {}}),
                ),
            ),
        ),
        note="the text sets no limit",
    ),
    Refusal(
        "Params",
        "2026-07-28: ``subscriptions/listen`` with ``resourceSubscriptions`` not a list of strings",
        "-32602",
        (SOURCE_OF_TRUTH,),
        ("implied",),
        ("schema",),
        (
            Example(
                M,
                S,
                request(
                    "L",
                    "subscriptions/listen",
                    {"notifications": {"resourceSubscriptions": "file:///a"}, "_meta": meta()},
                ),
                "reply",
                PARAMS,
                "L",
                server_capabilities=SUBSCRIBE,
            ),
            Example(
                M,
                S,
                request(
                    "L",
                    "subscriptions/listen",
                    {"notifications": {"resourceSubscriptions": [1]}, "_meta": meta()},
                ),
                "reply",
                PARAMS,
                "L",
                server_capabilities=SUBSCRIBE,
            ),
        ),
        note="the schema's ``SubscriptionFilter``",
    ),
)
