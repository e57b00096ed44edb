"""The rules of capabilities, methods and params: ``capability.*``, ``method.*``, ``params.*``."""

from __future__ import annotations

from typing import Final

from mcp_sansio._state import Role
from mcp_sansio.testing._rule_parts import (
    GATED_2026,
    LEGACY,
    LOGGING_DECLARED,
    METHOD_NOT_FOUND_2026,
    NEGOTIATED_ONLY,
    NO_RESPONSE,
    NOT_FOUND,
    PARAMS,
    RESPECT_VERSION,
    RPC_ERROR,
    RPC_NOT_FOUND,
    RPC_PARAMS,
    RPC_REPLY,
    SOURCE_OF_TRUTH,
    V,
    always,
    make_rule,
    mcp,
    receives_gated_notifications,
    receives_gated_requests,
    receives_requests,
    rpc,
    subcapabilities,
    wrong_direction,
)

#: The rules of this family, in the catalog's order.
CATALOG: Final = (
    make_rule(
        "capability.undeclared-server-capability",
        code=NOT_FOUND,
        reply="error",
        level="SHOULD",
        where=lambda spec, receiver: (
            receiver is Role.SERVER and receives_gated_requests(spec, receiver)
        ),
        summary="""A client request for a feature the server did not declare (``tools/call``
        without ``tools``, ``resources/subscribe`` without ``resources.subscribe``, …) gets
        -32601 (JSON-RPC's "not available"; the text says SHOULD where it says it).""",
        probed="a request for a capability the server did not declare",
        citations=(
            RPC_NOT_FOUND,
            mcp(
                ("2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"),
                "Server > Utilities > Completion > Error Handling",
                "Servers SHOULD return standard JSON-RPC errors for common failure cases: … "
                "Method not found: `-32601` (Capability not supported)",
            ),
            GATED_2026,
        ),
    ),
    make_rule(
        "capability.undeclared-client-capability",
        code=NOT_FOUND,
        reply="error",
        level="SHOULD",
        where=lambda spec, receiver: (
            receiver is Role.CLIENT and receives_gated_requests(spec, receiver)
        ),
        summary="""Initialize era: a server request for a feature the client did not declare
        (``sampling/createMessage`` without ``sampling``, ``roots/list`` without ``roots``,
        ``elicitation/create`` without ``elicitation``, tasks without ``tasks``) gets -32601
        (a SHOULD, said of roots; sending it is a MUST NOT of the server's from 2025-06-18, a
        SHOULD NOT before).""",
        probed="*sent*: the server asks nothing the probe did not declare (it declares nothing)",
        citations=(
            RPC_NOT_FOUND,
            mcp(
                LEGACY,
                "Client > Roots > Error Handling",
                "Clients SHOULD return standard JSON-RPC errors for common failure cases: … "
                "Client does not support roots: `-32601` (Method not found)",
            ),
        ),
        sent=NEGOTIATED_ONLY,
    ),
    make_rule(
        "capability.undeclared-client-subcapability",
        code=PARAMS,
        reply="error",
        level="MUST",
        where=subcapabilities,
        summary="""2025-11-25: elicitation in a mode the client did not declare
        (``elicitation.url`` / ``.form``) gets -32602; sampling with tools without
        ``sampling.tools`` gets an error (the text names no code for it). (Sampling with
        context without ``sampling.context`` is only a SHOULD NOT of the server's: a client
        may serve it.)""",
        probed="*sent*: elicitation modes and sampling features",
        citations=(
            mcp(
                ("2025-11-25",),
                "Client > Elicitation > Error Handling",
                "Clients MUST return standard JSON-RPC errors for common failure cases: … "
                "Server sends an `elicitation/create` request with a mode not declared in "
                "client capabilities: `-32602` (Invalid params)",
            ),
            mcp(
                ("2025-11-25",),
                "Schema > CreateMessageRequestParams",
                "The client MUST return an error if this field is provided but "
                "ClientCapabilities.sampling.tools is not declared.",
            ),
            mcp(
                ("2025-11-25",),
                "Client > Elicitation > Capabilities",
                "Servers MUST NOT send elicitation requests with modes that are not supported "
                "by the client.",
            ),
            mcp(
                ("2025-11-25",),
                "Client > Sampling > Tools in Sampling",
                "Servers MUST NOT send tool-enabled sampling requests to Clients that have not "
                "declared support for tool use via the `sampling.tools` capability.",
            ),
            mcp(
                ("2025-11-25",),
                "Schema > ClientCapabilities",
                'If not declared, servers SHOULD only use `includeContext: "none"` (or omit it).',
            ),
        ),
    ),
    make_rule(
        "capability.undeclared-notification",
        code=None,
        reply="none",
        level="MUST NOT",
        where=receives_gated_notifications,
        summary="""A notification gated by a capability its sender did not declare
        (``notifications/tools/list_changed`` without ``tools.listChanged``,
        ``notifications/message`` without ``logging``, ``notifications/roots/list_changed``
        without ``roots.listChanged``) is never answered (our Connection drops it; in
        2024-11-05 and 2025-03-26, where only the sub-capability is missing, it takes it unless
        ``strict``). Sending it is a MUST NOT from 2025-06-18, a SHOULD NOT before; a log
        message without ``logging`` is a MUST in every version (its own sentence).""",
        probed="``notifications/roots/list_changed`` undeclared; *sent*: the peer's notifications",
        citations=NO_RESPONSE,
        sent=(*NEGOTIATED_ONLY, LOGGING_DECLARED),
    ),
    # ------------------------------------------------------------------ methods and params
    make_rule(
        "method.unknown",
        code=NOT_FOUND,
        reply="error",
        level="MUST",
        where=always,
        summary="""A request for a method the negotiated version does not have (an invented
        name, a method of another version, a notification's name) gets -32601.""",
        probed="an invented method name; *sent*: the methods of the peer's requests",
        citations=(
            RPC_REPLY,
            RPC_ERROR,
            RPC_NOT_FOUND,
            rpc(
                "7 Examples",
                """rpc call of non-existent method: --> {"jsonrpc": "2.0", "method": "foobar",
                "id": "1"} <-- {"jsonrpc": "2.0", "error": {"code": -32601, "message": "Method
                not found"}, "id": "1"}""",
            ),
            METHOD_NOT_FOUND_2026,
            GATED_2026,
        ),
        sent=RESPECT_VERSION,
    ),
    make_rule(
        "method.unknown-notification",
        code=None,
        reply="none",
        level="MUST NOT",
        where=always,
        summary="""A notification the negotiated version does not have (an invented name, a
        request's name) is never answered: notifications never are (our Connection drops
        it).""",
        probed="an invented notification",
        citations=NO_RESPONSE,
    ),
    make_rule(
        "method.wrong-direction",
        code=NOT_FOUND,
        reply="error",
        level="implied",
        where=wrong_direction,
        summary="""A request only the other side may send (a server sending ``tools/call``, a
        client sending ``sampling/createMessage``) gets -32601: the method is not available
        to its sender (no sentence says so; the schema lists who sends each request).""",
        probed="a request only a server sends (``elicitation/create``, ``roots/list``, ...)",
        citations=(RPC_NOT_FOUND, METHOD_NOT_FOUND_2026),
    ),
    make_rule(
        "params.invalid",
        code=PARAMS,
        reply="error",
        level="SHOULD",
        where=receives_requests,
        summary="""A request whose params lack a property the schema requires, or give it the
        wrong JSON type (``tools/call`` without ``name``, ``resources/read`` without ``uri``,
        ``initialize`` without ``capabilities``, ``logging/setLevel`` with a number, …) gets
        -32602. The text says SHOULD only for an invalid log level (``logging/setLevel``) and
        a prompt's missing arguments (which the probe never breaks: it does not know the
        prompts); for every other method the code is implied (JSON-RPC's table), and a
        finding's level says which. (Unknown tools and prompts are -32602 too; judging those
        needs the server's own lists.)""",
        probed="""``logging/setLevel`` with a bad level, ``resources/subscribe`` without a
        string uri, ``tools/call`` without a name, ``subscriptions/listen`` with bad
        notifications; *sent*: the params of the client's requests""",
        citations=(
            RPC_PARAMS,
            mcp(
                LEGACY,
                "Server > Utilities > Logging > Error Handling",
                "Servers SHOULD return standard JSON-RPC errors for common failure cases: … "
                "Invalid log level: `-32602` (Invalid params)",
                cases=("logging/setLevel",),
            ),
            mcp(
                V,
                "Server > Prompts > Error Handling",
                "Servers SHOULD return standard JSON-RPC errors for common failure cases: … "
                "Missing required arguments: `-32602` (Invalid params)",
                cases=("prompts/get arguments",),
            ),
            mcp(
                ("2026-07-28",),
                "Schema > InvalidParamsError",
                "A JSON-RPC error indicating that the method parameters are invalid or malformed.",
            ),
            mcp(
                ("2025-11-25",),
                "Server > Tools > Error Handling",
                "Protocol Errors: Standard JSON-RPC errors for issues like: … Malformed "
                "requests (requests that fail to satisfy CallToolRequest schema)",
            ),
            mcp(
                ("2026-07-28",),
                "Server > Tools > Error Handling",
                "Protocol Errors indicate issues with the request structure itself that models "
                "are less likely to be able to fix: … Malformed requests (requests that fail "
                "to satisfy CallToolRequest schema)",
            ),
        ),
        sent=(SOURCE_OF_TRUTH,),
    ),
    # ------------------------------------------------------------------ progress, cancel
)
