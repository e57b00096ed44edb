"""The table of every refusal of the peer's messages by the :class:`~mcp_sansio.Connection`:
what the peer sends, the answer, the sentences it rests on and their level, why it is
refused, and examples that show it on a real pair of Connections.

``tests/test_refusals.py`` runs every example (under the default :class:`~mcp_sansio.Config`
and under ``strict=True``), so the table cannot drift from the Connection;
``docs/make_refusals.py`` writes the docs page of refusals (docs/connection.rst, "Every
refusal of the peer's messages") from it. The sentences are the probe rules' citations
(:data:`~mcp_sansio.testing._rules.RULES`, by rule name, or the objects they are made of)
where the same sentence is meant, else quoted in :mod:`~mcp_sansio.testing._refusal_parts`.
This module has the rows of the envelope and the lifecycle; the rest are in
``_refusals_methods``, ``_refusals_late`` and ``_refusals_2026``, and
:data:`mcp_sansio.testing._refusals_late.REFUSALS` is the whole table in order.
"""

from __future__ import annotations

from typing import Final

from mcp_sansio.testing._refusal_model import Example, Refusal, cite, meta
from mcp_sansio.testing._refusal_parts import (
    ERRORS_CODE_MESSAGE,
    INITIALIZE_NOT_BATCHED,
    INITIALIZED_ONCE,
    INVALID,
    PARAMS,
    PARSE,
    TOOLS,
    C,
    M,
    S,
    init_request,
    note,
    request,
)
from mcp_sansio.testing._rule_parts import (
    ALL_JSONRPC,
    CLIENT_WAITS,
    INIT_FIRST,
    LEGACY,
    RPC_RESULT_OR_ERROR,
    SERVER_WAITS,
    SOURCE_OF_TRUTH,
)

__all__ = ["ENVELOPE"]

ENVELOPE: Final[tuple[Refusal, ...]] = (
    # ------------------------------------------------------------------ the envelope
    Refusal(
        "The envelope",
        "a line that is not JSON (also: the peer closes in the middle of one)",
        "-32700, id ``null`` (no reply after the close)",
        (*cite("envelope.parse-error", "MUST reply", "-32700 |"), *ALL_JSONRPC),
        ("MUST",),
        ("MUST",),
        (
            Example(
                "2025-11-25",
                S,
                b'{"jsonrpc": "2.0", "method": "foobar, "params": "bar"',
                "reply",
                PARSE,
                None,
            ),
            Example(M, S, b"[1, 2", "reply", PARSE, None),
            Example(
                "2024-11-05", C, b'{"jsonrpc": "2.0", "id": 1, "method"', "dropped", PARSE, eof=True
            ),
        ),
    ),
    Refusal(
        "The envelope",
        'not a valid request: ``jsonrpc`` missing or not ``"2.0"``, ``method`` not a string, '
        "an ``id`` that is ``null``, a boolean, a fraction or a structure, ``result`` or "
        "``error`` on a request, not an object; also a message with an id and neither ``method``, "
        "``result`` nor ``error`` (it is read as a request)",
        "-32600, to the id when it can be read, else ``null``",
        cite("envelope.invalid-request", "-32600 |", "jsonrpc:", "Requests MUST", "Unlike base"),
        ("MUST", "MUST NOT"),
        ("MUST",),
        (
            Example(
                "2025-11-25", S, {"jsonrpc": "1.0", "id": 1, "method": "ping"}, "reply", INVALID, 1
            ),
            Example("2025-06-18", S, {"id": "a", "method": "ping"}, "reply", INVALID, "a"),
            Example("2025-03-26", S, {"jsonrpc": "2.0", "id": 1, "method": 5}, "reply", INVALID, 1),
            Example(
                "2024-11-05",
                C,
                {"jsonrpc": "2.0", "id": None, "method": "ping"},
                "reply",
                INVALID,
                None,
            ),
            Example(
                "2025-11-25",
                S,
                {"jsonrpc": "2.0", "id": True, "method": "ping"},
                "reply",
                INVALID,
                None,
            ),
            Example(
                "2025-11-25",
                S,
                {"jsonrpc": "2.0", "id": 1.5, "method": "ping"},
                "reply",
                INVALID,
                None,
            ),
            Example(
                M, S, {"jsonrpc": "2.0", "id": [1], "method": "tools/list"}, "reply", INVALID, None
            ),
            Example("2025-11-25", S, {**request(2, "ping"), "result": {}}, "reply", INVALID, 2),
            Example("2025-11-25", S, 5, "reply", INVALID, None),
            Example(
                "2025-06-18",
                C,
                {"jsonrpc": "2.0", "id": "p"},
                "reply",
                INVALID,
                "p",
                lead=((C, {"id": "p", "method": "ping"}),),
            ),
        ),
    ),
    Refusal(
        "The envelope",
        "``params`` that are not an object (JSON-RPC allows an array)",
        "-32600",
        (SOURCE_OF_TRUTH,),
        ("implied",),
        ("schema",),
        (
            Example("2025-11-25", S, request(1, "ping", []), "reply", INVALID, 1),
            Example(
                M, S, request(1, "tools/list", [1]), "reply", INVALID, 1, server_capabilities=TOOLS
            ),
        ),
        note="the schema's params are objects of named members; the text names no code",
    ),
    Refusal(
        "The envelope",
        "a malformed response (no id, both ``result`` and ``error``, a "
        "``result`` that is not an object, an error without an integer ``code`` or a string "
        "``message``)",
        "dropped; it ends the request it answers",
        (RPC_RESULT_OR_ERROR, ERRORS_CODE_MESSAGE),
        ("MUST", "MUST NOT"),
        ("MUST",),
        (
            Example(
                "2025-11-25",
                C,
                {"jsonrpc": "2.0", "id": "p", "result": {}, "error": {"code": 1, "message": "x"}},
                "dropped",
                lead=((C, {"id": "p", "method": "ping"}),),
            ),
            Example(
                "2025-03-26",
                S,
                {"jsonrpc": "2.0", "id": "p", "result": 5},
                "dropped",
                lead=((S, {"id": "p", "method": "ping"}),),
            ),
            Example(
                "2025-06-18",
                C,
                {"jsonrpc": "2.0", "id": "p", "error": {"code": "x", "message": "m"}},
                "dropped",
                lead=((C, {"id": "p", "method": "ping"}),),
            ),
            Example(
                "2025-06-18",
                C,
                {"jsonrpc": "2.0", "result": {}},
                "dropped",
                lead=((C, {"id": "p", "method": "ping"}),),
            ),
        ),
    ),
    Refusal(
        "The envelope",
        "a JSON array, in every version but 2025-03-26",
        "-32600, id ``null``; no member is processed",
        cite("envelope.batch-not-allowed", "JSONRPCMessage", "Remove support"),
        ("implied",),
        ("schema",),
        (
            Example("2025-11-25", S, [request(1, "ping")], "reply", INVALID, None),
            Example("2024-11-05", C, [request(1, "ping")], "reply", INVALID, None),
            Example(
                M, S, [request(1, "tools/list")], "reply", INVALID, None, server_capabilities=TOOLS
            ),
        ),
        note="the schema's ``JSONRPCMessage`` is no array",
    ),
    Refusal(
        "The envelope",
        "2025-03-26: an empty batch; a batch mixing requests or notifications with responses",
        "one -32600, id ``null``",
        (
            *cite("envelope.empty-batch", "MUST support"),
            *cite("envelope.batch-mixed", "export type"),
        ),
        ("MUST", "implied"),
        ("MUST", "schema"),
        (
            Example("2025-03-26", S, [], "reply", INVALID, None),
            Example(
                "2025-03-26",
                S,
                [request(1, "ping"), {"jsonrpc": "2.0", "id": "p", "result": {}}],
                "reply",
                INVALID,
                None,
            ),
        ),
    ),
    Refusal(
        "The envelope",
        "2025-03-26: ``initialize`` in a batch",
        "-32600",
        (INITIALIZE_NOT_BATCHED,),
        ("MUST NOT",),
        ("MUST",),
        (Example("2025-03-26", S, [init_request("2025-03-26")], "reply", INVALID, handshake=0),),
    ),
    Refusal(
        "The envelope",
        "a line over ``max_message_size``",
        "-32600 to its id if it can be read, else ``null``; a response is dropped (and ends "
        "its request)",
        (),
        ("ours",),
        ("integrity",),
        (
            Example(
                "2025-11-25",
                S,
                request(7, "ping", {"_meta": {"x": "y" * 400}}),
                "reply",
                INVALID,
                7,
                config={"max_message_size": 300},
            ),
            Example(
                "2025-11-25",
                C,
                {"jsonrpc": "2.0", "id": "p", "result": {"x": "y" * 400}},
                "dropped",
                config={"max_message_size": 300},
                lead=((C, {"id": "p", "method": "ping"}),),
            ),
        ),
        note="the text sets no limit",
    ),
    Refusal(
        "The envelope",
        "a request while ``max_in_flight`` requests, or ``max_in_flight_bytes`` of them, wait "
        "for our answer",
        "-32600",
        (),
        ("ours",),
        ("integrity",),
        (
            Example(
                "2025-11-25",
                S,
                request(2, "ping"),
                "reply",
                INVALID,
                2,
                config={"max_in_flight": 1},
                lead=((C, {"id": 1, "method": "ping"}),),
            ),
            Example(
                M,
                S,
                request(2, "tools/list", {"_meta": meta()}),
                "reply",
                INVALID,
                2,
                server_capabilities=TOOLS,
                config={"max_in_flight": 1},
                lead=((C, {"id": 1, "method": "tools/list"}),),
            ),
            Example(
                "2025-06-18",
                S,
                request(2, "ping", {"_meta": {"pad": "x" * 5000}}),
                "reply",
                INVALID,
                2,
                config={"max_in_flight_bytes": 8000},
                lead=((C, {"id": 1, "method": "ping", "params": {"_meta": {"pad": "x" * 5000}}}),),
            ),
        ),
        note="the text sets no limit",
    ),
    # ------------------------------------------------------------------ the lifecycle
    Refusal(
        "The lifecycle (initialize era)",
        "a request other than ``initialize`` or ``ping`` before ``initialize`` (either side)",
        "-32600",
        (INIT_FIRST,),
        ("MUST",),
        ("MUST",),
        (
            Example(
                "2025-11-25",
                S,
                request(1, "tools/list"),
                "reply",
                INVALID,
                1,
                handshake=0,
                server_capabilities=TOOLS,
            ),
            Example(
                "2024-11-05",
                C,
                request(1, "roots/list"),
                "reply",
                INVALID,
                1,
                handshake=0,
                client_capabilities={"roots": {}},
            ),
        ),
    ),
    Refusal(
        "The lifecycle (initialize era)",
        "the client: a request other than ``ping`` while ``initialize`` is unanswered; the "
        "server: one before its ``initialize`` result",
        "-32600",
        (CLIENT_WAITS, SERVER_WAITS),
        ("SHOULD NOT",),
        ("integrity",),
        (
            Example(
                "2025-11-25",
                S,
                request(1, "tools/list"),
                "reply",
                INVALID,
                1,
                handshake=1,
                server_capabilities=TOOLS,
            ),
            Example(
                "2025-06-18",
                C,
                request(1, "roots/list"),
                "reply",
                INVALID,
                1,
                handshake=1,
                client_capabilities={"roots": {}},
            ),
        ),
        note="no version is agreed to check or serve them under",
    ),
    Refusal(
        "The lifecycle (initialize era)",
        "the server: a request other than ``ping`` after its ``initialize`` result, before "
        "``notifications/initialized``",
        "served; under ``strict``: -32600",
        (SERVER_WAITS,),
        ("SHOULD NOT",),
        ("strict",),
        tuple(
            Example(
                v,
                C,
                request("r", "roots/list"),
                "reply",
                INVALID,
                "r",
                handshake=2,
                client_capabilities={"roots": {}},
                strict_only=True,
            )
            for v in LEGACY
        ),
    ),
    Refusal(
        "The lifecycle (initialize era)",
        "a notification other than cancellation, progress (and the server's logging) before "
        "the ``initialize`` result",
        "dropped",
        (INIT_FIRST,),
        ("MUST",),
        ("MUST", "integrity"),
        (
            Example(
                "2025-11-25", S, note("notifications/roots/list_changed"), "dropped", handshake=0
            ),
            Example(
                "2025-03-26", C, note("notifications/tools/list_changed"), "dropped", handshake=1
            ),
            Example(
                "2024-11-05",
                S,
                note("notifications/roots/list_changed"),
                "dropped",
                handshake=1,
                client_capabilities={"roots": {"listChanged": True}},
            ),
        ),
        note="before ``initialize``; after it, no version or server capabilities are agreed to "
        "check it by",
    ),
    Refusal(
        "The lifecycle (initialize era)",
        "a second ``initialize``",
        "-32600",
        cite("lifecycle.second-initialize"),
        ("implied",),
        ("integrity",),
        (
            Example("2025-11-25", S, init_request("2025-11-25"), "reply", INVALID, 9),
            Example("2024-11-05", S, init_request("2024-11-05"), "reply", INVALID, 9, handshake=2),
        ),
        note="the one initialization phase",
    ),
    Refusal(
        "The lifecycle (initialize era)",
        "``notifications/initialized`` before the ``initialize`` result, or a second one",
        "dropped",
        (INITIALIZED_ONCE,),
        ("MUST",),
        ("integrity",),
        (
            Example("2025-11-25", S, note("notifications/initialized"), "dropped", handshake=1),
            Example("2025-06-18", S, note("notifications/initialized"), "dropped", handshake=0),
            Example("2024-11-05", S, note("notifications/initialized"), "dropped"),
        ),
        note="the lifecycle has that one step",
    ),
    Refusal(
        "The lifecycle (initialize era)",
        "``initialize`` params without ``protocolVersion`` (a string), ``capabilities`` or "
        "``clientInfo`` (objects)",
        "-32602",
        (SOURCE_OF_TRUTH,),
        ("implied",),
        ("schema",),
        (
            Example(
                "2025-11-25",
                S,
                init_request("2025-11-25", clientInfo=None),
                "reply",
                PARAMS,
                9,
                handshake=0,
            ),
            Example(
                "2025-06-18",
                S,
                init_request("2025-06-18", capabilities=None),
                "reply",
                PARAMS,
                9,
                handshake=0,
            ),
            Example(
                "2024-11-05",
                S,
                init_request("2024-11-05", protocolVersion=5),
                "reply",
                PARAMS,
                9,
                handshake=0,
            ),
            Example(
                "2025-03-26",
                S,
                init_request("2025-03-26", capabilities=[]),
                "reply",
                PARAMS,
                9,
                handshake=0,
            ),
        ),
        note="the schema's ``InitializeRequest``; the ``Connection`` reads them",
    ),
    Refusal(
        "The lifecycle (initialize era)",
        "an ``initialize`` result naming a version the client does not speak",
        ":class:`~mcp_sansio.RemoteProtocolError`",
        cite("lifecycle.unsupported-version-result"),
        ("SHOULD",),
        ("receiver",),
        (
            Example(
                "2025-11-25",
                C,
                {
                    "jsonrpc": "2.0",
                    "id": 0,
                    "result": {
                        "protocolVersion": "2024-11-05",
                        "capabilities": {},
                        "serverInfo": {"name": "s", "version": "1"},
                    },
                },
                "fatal",
                handshake=1,
            ),
        ),
        note="the receiver's SHOULD: there is no version to go on with",
    ),
    Refusal(
        "The lifecycle (initialize era)",
        "an ``initialize`` result without ``capabilities`` or ``serverInfo``",
        ":class:`~mcp_sansio.RemoteProtocolError`",
        cite("lifecycle.initialize-version", "own capabilities"),
        ("MUST",),
        ("MUST",),
        (
            Example(
                "2025-11-25",
                C,
                {
                    "jsonrpc": "2.0",
                    "id": 0,
                    "result": {
                        "protocolVersion": "2025-11-25",
                        "serverInfo": {"name": "s", "version": "1"},
                    },
                },
                "fatal",
                handshake=1,
            ),
            Example(
                "2024-11-05",
                C,
                {
                    "jsonrpc": "2.0",
                    "id": 0,
                    "result": {"protocolVersion": "2024-11-05", "capabilities": {}},
                },
                "fatal",
                handshake=1,
            ),
        ),
    ),
)
