"""The rules of the JSON-RPC envelope: ``envelope.*``."""

from __future__ import annotations

from typing import Final

from mcp_sansio._errors import ErrorCode
from mcp_sansio.testing._rule_parts import (
    ALL_JSONRPC,
    ERROR_ID,
    INITIALIZATION,
    INVALID,
    NULL_ID,
    REQUEST_ID,
    RESPONSE_ID,
    RESPONSES_ANSWER_REQUESTS,
    RPC_CLIENT,
    RPC_ERROR,
    RPC_ID,
    RPC_INVALID,
    RPC_PARSE,
    RPC_REPLY,
    RPC_RESULT_OR_ERROR,
    V,
    always,
    batches,
    make_rule,
    mcp,
    no_batches,
    receives_requests,
    rpc,
)

#: The rules of this family, in the catalog's order.
CATALOG: Final = (
    # ------------------------------------------------------------------ envelope
    make_rule(
        "envelope.parse-error",
        code=int(ErrorCode.PARSE_ERROR),
        reply="error",
        level="MUST",
        where=always,
        summary="""A line that is not JSON (cut short, a trailing comma, single quotes, invalid
        UTF-8, …) is answered with -32700 and ``"id": null``: the reply JSON-RPC requires,
        with the code its table defines for invalid JSON.""",
        probed="""a line cut short, a trailing comma, single quotes, invalid UTF-8, a leading
        zero; *sent*: every line the peer writes""",
        citations=(
            RPC_REPLY,
            RPC_ID,
            RPC_ERROR,
            RPC_PARSE,
            rpc(
                "7 Examples",
                """rpc call with invalid JSON: --> {"jsonrpc": "2.0", "method": "foobar,
                "params": "bar", "baz] <-- {"jsonrpc": "2.0", "error": {"code": -32700,
                "message": "Parse error"}, "id": null}""",
            ),
            mcp(
                ("2026-07-28",),
                "Schema > ParseError",
                """A JSON-RPC error indicating that invalid JSON was received by the server.
                This error is returned when the server cannot parse the JSON text of a
                message.""",
            ),
            ERROR_ID,
        ),
        sent=(
            *ALL_JSONRPC,
            mcp(
                V,
                "Basic > Transports > stdio",
                "The server MUST NOT write anything to its `stdout` that is not a valid MCP "
                "message.",
            ),
            mcp(
                V,
                "Basic > Transports > stdio",
                "The client MUST NOT write anything to the server's `stdin` that is not a "
                "valid MCP message.",
            ),
        ),
    ),
    make_rule(
        "envelope.invalid-request",
        code=INVALID,
        reply="error",
        level="MUST",
        where=always,
        summary="""JSON that is not a valid request or notification (``jsonrpc`` missing or
        not ``"2.0"``; an ``id`` that is null, a boolean, a fraction or a structure; a
        ``method`` that is not a string; ``result`` or ``error`` on a request; not an object
        at all) is answered with -32600, addressed to the request's id when it could be
        read, else to null. (``params`` that are not an object: JSON-RPC 2.0 allows an
        array, MCP's schema does not, and no text names the code for it: any error is
        defensible there.)""",
        probed="""no ``jsonrpc``, ``"1.0"``, a numeric method, array params, a
        null/float/bool/object id, a bare JSON value; *sent*: the client's requests""",
        citations=(
            RPC_REPLY,
            RPC_ID,
            RPC_ERROR,
            RPC_INVALID,
            rpc(
                "4 Request object",
                "jsonrpc: A String specifying the version of the JSON-RPC protocol. MUST be "
                'exactly "2.0".',
            ),
            rpc(
                "4 Request object",
                "method: A String containing the name of the method to be invoked.",
            ),
            rpc(
                "4 Request object",
                "id: An identifier established by the Client that MUST contain a String, "
                "Number, or NULL value if included.",
            ),
            rpc(
                "7 Examples",
                """rpc call with invalid Request object: --> {"jsonrpc": "2.0", "method": 1,
                "params": "bar"} <-- {"jsonrpc": "2.0", "error": {"code": -32600, "message":
                "Invalid Request"}, "id": null}""",
            ),
            *REQUEST_ID,
            *NULL_ID,
            mcp(
                ("2026-07-28",),
                "Schema > InvalidRequestError",
                """A JSON-RPC error indicating that the request is not a valid request object.
                This error is returned when the message structure does not conform to the
                JSON-RPC 2.0 specification requirements for a request (e.g., missing required
                fields like `jsonrpc` or `method`, or using invalid types for these
                fields).""",
            ),
            ERROR_ID,
        ),
        sent=(*ALL_JSONRPC, *REQUEST_ID, *NULL_ID),
    ),
    make_rule(
        "envelope.invalid-response",
        code=None,
        reply="none",
        level="implied",
        where=always,
        summary="""A malformed response (both ``result`` and ``error``; a ``result`` that is
        not an object; an ``error`` without an integer ``code`` or a string ``message``; a
        result without a valid ``id``) is never answered: only requests are (a reply would
        be taken for an answer to one of the peer's own requests).""",
        probed="""a malformed response (result and error, a non-object result, no code, no
        id); *sent*: the peer's own responses""",
        citations=(RPC_CLIENT, RPC_REPLY, *RESPONSES_ANSWER_REQUESTS),
        sent=(
            RPC_RESULT_OR_ERROR,
            mcp(
                ("2026-07-28", "2025-11-25"),
                "Basic > Overview > Messages > Responses > Result Responses",
                "Result responses MUST include a `result` field.",
            ),
            mcp(
                ("2026-07-28", "2025-11-25"),
                "Basic > Overview > Messages > Responses > Error Responses",
                "Error responses MUST include an `error` field with a `code` and `message`.",
            ),
            mcp(
                ("2025-06-18", "2025-03-26"),
                "Basic > Overview > Messages > Responses",
                "Either a `result` or an `error` MUST be set. A response MUST NOT set both.",
            ),
            mcp(
                ("2025-06-18", "2025-03-26"),
                "Basic > Overview > Messages > Responses",
                "Results MAY follow any JSON object structure, while errors MUST include an "
                "error code and message at minimum.",
            ),
            mcp(
                ("2024-11-05",),
                "Basic > Messages > Responses",
                "Either a `result` or an `error` MUST be set. A response MUST NOT set both.",
            ),
            *RESPONSE_ID,
        ),
    ),
    make_rule(
        "envelope.batch-not-allowed",
        code=INVALID,
        reply="error",
        level="implied",
        where=no_batches,
        summary="""In every version without JSON-RPC batches (all but 2025-03-26), a JSON array
        is not a message: -32600 with ``"id": null``, and none of its members is processed.
        No sentence says so: the schema's messages exclude arrays (2024-11-05 never had
        batches; 2025-06-18 removed them).""",
        probed="an array of pings where the version has no batches; none may be answered",
        citations=(
            RPC_INVALID,
            mcp(
                ("2025-06-18", "2024-11-05"),
                "Schema > JSONRPCMessage",
                "export type JSONRPCMessage = JSONRPCRequest | JSONRPCNotification | "
                "JSONRPCResponse | JSONRPCError;",
            ),
            mcp(
                ("2026-07-28", "2025-11-25"),
                "Schema > JSONRPCMessage",
                "export type JSONRPCMessage = JSONRPCRequest | JSONRPCNotification | "
                "JSONRPCResponse;",
            ),
            mcp(
                ("2025-06-18",),
                "Key Changes > Major changes",
                "Remove support for JSON-RPC batching",
            ),
            mcp(
                ("2025-11-25", "2025-06-18"),
                "Basic > Transports > stdio",
                "Messages are individual JSON-RPC requests, notifications, or responses.",
            ),
            mcp(
                ("2025-11-25", "2025-06-18"),
                "Basic > Transports > Streamable HTTP > Sending Messages to the Server",
                "The body of the POST request MUST be a single JSON-RPC _request_, "
                "_notification_, or _response_.",
            ),
            mcp(
                ("2026-07-28",),
                "Basic > Transports > stdio",
                "Each message is a single JSON-RPC request, notification, or response.",
            ),
            mcp(
                ("2026-07-28",),
                "Basic > Transports > Streamable HTTP > Sending Messages",
                "The body of the HTTP POST MUST be a single JSON-RPC _request_ or _notification_.",
            ),
        ),
        about_others=(
            mcp(
                ("2025-03-26",),
                INITIALIZATION,
                "This also permits backwards compatibility with prior protocol versions that "
                "do not explicitly support JSON-RPC batches.",
            ),
        ),
    ),
    make_rule(
        "envelope.empty-batch",
        code=INVALID,
        reply="error",
        level="MUST",
        where=batches,
        summary="""In 2025-03-26, an empty array is answered with one -32600 error (not an
        array), ``"id": null``.""",
        probed="``[]`` in 2025-03-26",
        citations=(
            rpc(
                "6 Batch",
                "If the batch rpc call itself fails to be recognized as an valid JSON or as an "
                "Array with at least one value, the response from the Server MUST be a single "
                "Response object.",
            ),
            rpc(
                "7 Examples",
                """rpc call with an empty Array: --> [] <-- {"jsonrpc": "2.0", "error":
                {"code": -32600, "message": "Invalid Request"}, "id": null}""",
            ),
            mcp(
                ("2025-03-26",),
                "Basic > Overview > Messages > Batching",
                "MCP implementations MAY support sending JSON-RPC batches, but MUST support "
                "receiving JSON-RPC batches.",
            ),
        ),
    ),
    make_rule(
        "envelope.batch-mixed",
        code=INVALID,
        reply="error",
        level="implied",
        where=batches,
        summary="""In 2025-03-26, a batch holds requests and notifications, or responses, never
        both (the schema's ``JSONRPCBatchRequest`` / ``JSONRPCBatchResponse``): a mixed one
        is not a message, and gets -32600 with ``"id": null``. (JSON-RPC 2.0 alone would
        answer each member, -32600 for the one that is not a request: the schema, not a
        sentence, makes the whole batch invalid.)""",
        probed="a request and a response in one 2025-03-26 batch",
        citations=(
            RPC_INVALID,
            mcp(
                ("2025-03-26",),
                "Schema > JSONRPCBatchRequest",
                "export type JSONRPCBatchRequest = (JSONRPCRequest | JSONRPCNotification)[];",
            ),
            mcp(
                ("2025-03-26",),
                "Schema > JSONRPCBatchResponse",
                "export type JSONRPCBatchResponse = (JSONRPCResponse | JSONRPCError)[];",
            ),
            mcp(
                ("2025-03-26",),
                "Basic > Transports > stdio",
                "Messages may be JSON-RPC requests, notifications, responses—or a JSON-RPC "
                "batch containing one or more requests and/or notifications.",
            ),
            mcp(
                ("2025-03-26",),
                "Basic > Transports > Streamable HTTP > Sending Messages to the Server",
                "The body of the POST request MUST be one of the following: … An array "
                "batching one or more _requests and/or notifications_ … An array batching one "
                "or more _responses_",
            ),
        ),
    ),
    make_rule(
        "envelope.oversized-message",
        code=INVALID,
        reply="error",
        level="ours",
        where=receives_requests,
        summary="""A line longer than the receiver's maximum message size is dropped unread (the
        specification sets no limit; this is what our Connection does): a request whose id
        can be read from the line's two ends is answered with -32600 to that id, anything
        else not recognizable as a response with -32600 to ``"id": null``; a response is
        never answered, and ends the request it answers. Framing resumes at the next
        line.""",
        probed="a 4 MiB ``ping``; the server must answer it or refuse it, and go on",
        citations=(),
    ),
    # ------------------------------------------------------------------ lifecycle
)
