"""The refusals of progress, cancellation, logging and resources, and :data:`REFUSALS`, the
whole table in order (see :mod:`mcp_sansio.testing._refusals`).
"""

from __future__ import annotations

from typing import Final

from mcp_sansio.testing._refusal_model import Example, Refusal, cite
from mcp_sansio.testing._refusal_parts import (
    CALL,
    LOG_AT_OR_ABOVE,
    NO_LOG_WITHOUT_LEVEL,
    PING_WITH_TOKEN,
    SET_LEVEL_SHOULD,
    SUBSCRIBE,
    TOKEN_TYPE,
    TOOLS,
    WITH_TOKEN,
    C,
    M,
    S,
    note,
    progress,
)
from mcp_sansio.testing._refusals import ENVELOPE
from mcp_sansio.testing._refusals_2026 import MODERN
from mcp_sansio.testing._refusals_methods import METHODS
from mcp_sansio.testing._rule_parts import (
    LEGACY,
    SOURCE_OF_TRUTH,
)

__all__ = ["NOTIFICATIONS", "REFUSALS"]

NOTIFICATIONS: Final[tuple[Refusal, ...]] = (
    # ---------------------------------------- progress, cancellation, logging, resources
    Refusal(
        "Progress, cancellation, logging, resources",
        "progress without params, a token that is not a string or an integer, a ``progress`` "
        "or ``total`` that is not a number, a ``message`` that is not a string",
        "dropped",
        (*TOKEN_TYPE, SOURCE_OF_TRUTH),
        ("MUST", "implied"),
        ("MUST", "schema"),
        (
            Example(
                "2025-11-25",
                C,
                note("notifications/progress"),
                "dropped",
                lead=PING_WITH_TOKEN,
            ),
            Example(
                "2025-11-25",
                C,
                progress(1.5),
                "dropped",
                lead=(
                    (
                        C,
                        {"id": "t1", "method": "ping", "params": {"_meta": {"progressToken": "t"}}},
                    ),
                ),
            ),
            Example(
                "2025-06-18",
                C,
                progress("t", "1"),
                "dropped",
                lead=(
                    (
                        C,
                        {"id": "t1", "method": "ping", "params": {"_meta": {"progressToken": "t"}}},
                    ),
                ),
            ),
            Example(
                "2025-03-26",
                C,
                progress("t", 1, total="9"),
                "dropped",
                lead=(
                    (
                        C,
                        {"id": "t1", "method": "ping", "params": {"_meta": {"progressToken": "t"}}},
                    ),
                ),
            ),
            Example(
                M,
                C,
                progress("t", 1, message=5),
                "dropped",
                server_capabilities=TOOLS,
                lead=WITH_TOKEN,
            ),
        ),
        note="the schema's ``ProgressNotification``",
    ),
    Refusal(
        "Progress, cancellation, logging, resources",
        "2024-11-05: progress with ``message`` (a field from 2025-03-26 on)",
        "accepted; under ``strict``: dropped",
        (),
        ("ours",),
        ("strict",),
        (
            Example(
                "2024-11-05",
                C,
                progress("t", 1, message="half"),
                "dropped",
                strict_only=True,
                lead=(
                    (
                        C,
                        {"id": "t1", "method": "ping", "params": {"_meta": {"progressToken": "t"}}},
                    ),
                ),
            ),
        ),
        note="the 2024-11-05 schema does not forbid further properties: the text is silent",
    ),
    Refusal(
        "Progress, cancellation, logging, resources",
        "progress for a token no request of ours in flight carries (never sent, answered)",
        "dropped (silently when it crossed our cancel)",
        cite("progress.unknown-token"),
        ("MUST",),
        ("MUST",),
        (
            Example("2025-11-25", C, progress("zz"), "dropped"),
            Example(
                "2024-11-05",
                C,
                progress("t"),
                "dropped",
                lead=(
                    (
                        C,
                        {"id": "t1", "method": "ping", "params": {"_meta": {"progressToken": "t"}}},
                    ),
                    (S, {"id": "t1", "result": {}}),
                ),
            ),
            Example(M, C, progress("zz"), "dropped"),
        ),
    ),
    Refusal(
        "Progress, cancellation, logging, resources",
        "progress that does not increase",
        "dropped",
        cite("progress.not-increasing"),
        ("MUST",),
        ("MUST",),
        (
            Example(
                "2025-11-25",
                C,
                progress("t", 3),
                "dropped",
                lead=(
                    (
                        C,
                        {"id": "t1", "method": "ping", "params": {"_meta": {"progressToken": "t"}}},
                    ),
                    (
                        S,
                        {
                            "method": "notifications/progress",
                            "params": {"progressToken": "t", "progress": 5},
                        },
                    ),
                ),
            ),
            Example(
                "2025-03-26",
                S,
                progress("t", 5),
                "dropped",
                lead=(
                    (
                        S,
                        {"id": "t1", "method": "ping", "params": {"_meta": {"progressToken": "t"}}},
                    ),
                    (
                        C,
                        {
                            "method": "notifications/progress",
                            "params": {"progressToken": "t", "progress": 5},
                        },
                    ),
                ),
            ),
        ),
    ),
    Refusal(
        "Progress, cancellation, logging, resources",
        "2026-07-28: progress for a ``subscriptions/listen`` request",
        "dropped",
        cite("subscriptions.not-opted-in", "MUST NOT send notification types"),
        ("MUST NOT",),
        ("MUST",),
        (
            Example(
                M,
                C,
                progress("t"),
                "dropped",
                server_capabilities=TOOLS,
                lead=(
                    (
                        C,
                        {
                            "id": "L",
                            "method": "subscriptions/listen",
                            "params": {
                                "notifications": {"toolsListChanged": True},
                                "_meta": {"progressToken": "t"},
                            },
                        },
                    ),
                ),
            ),
        ),
    ),
    Refusal(
        "Progress, cancellation, logging, resources",
        "a cancellation naming no request of its in flight, a malformed one, one of ``initialize``",
        "ignored (no event)",
        (*cite("cancel.unknown-request", "Invalid cancellation"), *cite("cancel.initialize")),
        ("SHOULD", "MUST NOT"),
        ("receiver",),
        (
            Example(
                "2025-11-25", S, note("notifications/cancelled", {"requestId": "none"}), "ignored"
            ),
            Example(
                "2025-06-18", S, note("notifications/cancelled", {"requestId": None}), "ignored"
            ),
            Example(
                "2024-11-05",
                S,
                note("notifications/cancelled", {"requestId": 0}),
                "ignored",
                handshake=1,
            ),
            Example(M, S, note("notifications/cancelled", {"requestId": "none"}), "ignored"),
        ),
        note="the receiver's SHOULD",
    ),
    Refusal(
        "Progress, cancellation, logging, resources",
        "``notifications/message`` without a known ``level``",
        "dropped",
        (SOURCE_OF_TRUTH,),
        ("implied",),
        ("schema",),
        (
            Example(
                "2025-11-25",
                C,
                note("notifications/message", {"level": "loud", "data": "x"}),
                "dropped",
                server_capabilities={"logging": {}},
            ),
            Example(
                "2024-11-05",
                C,
                note("notifications/message", {"data": "x"}),
                "dropped",
                server_capabilities={"logging": {}},
            ),
        ),
        note="the schema's ``LoggingLevel``",
    ),
    Refusal(
        "Progress, cancellation, logging, resources",
        "a log message below the level ``logging/setLevel`` set",
        "accepted; under ``strict``: dropped",
        (SET_LEVEL_SHOULD,),
        ("implied",),
        ("strict",),
        tuple(
            Example(
                v,
                C,
                note("notifications/message", {"level": "debug", "data": "x"}),
                "dropped",
                server_capabilities={"logging": {}},
                strict_only=True,
                lead=(
                    (C, {"id": "lv", "method": "logging/setLevel", "params": {"level": "error"}}),
                    (S, {"id": "lv", "result": {}}),
                ),
            )
            for v in LEGACY
        ),
        note="lower case, in the schema's ``SetLevelRequest``; no sentence forbids a lower level",
    ),
    Refusal(
        "Progress, cancellation, logging, resources",
        "2026-07-28: a log message while no request of ours in flight set ``logLevel``",
        "dropped",
        (NO_LOG_WITHOUT_LEVEL,),
        ("MUST NOT",),
        ("MUST",),
        (
            Example(
                M,
                C,
                note("notifications/message", {"level": "error", "data": "x"}),
                "dropped",
                server_capabilities={"logging": {}},
            ),
            Example(
                M,
                C,
                note("notifications/message", {"level": "error", "data": "x"}),
                "dropped",
                server_capabilities={"logging": {}, **TOOLS},
                lead=CALL,
            ),
        ),
    ),
    Refusal(
        "Progress, cancellation, logging, resources",
        "2026-07-28: a log message below the lowest ``logLevel`` of our requests in flight",
        "accepted; under ``strict``: dropped",
        (LOG_AT_OR_ABOVE,),
        ("implied",),
        ("strict",),
        (
            Example(
                M,
                C,
                note("notifications/message", {"level": "debug", "data": "x"}),
                "dropped",
                server_capabilities={"logging": {}, **TOOLS},
                strict_only=True,
                lead=(
                    (
                        C,
                        {
                            "id": "c",
                            "method": "tools/call",
                            "params": {
                                "name": "t",
                                "_meta": {"io.modelcontextprotocol/logLevel": "error"},
                            },
                        },
                    ),
                ),
            ),
        ),
        note="a MAY at or above it, no MUST NOT below it",
    ),
    Refusal(
        "Progress, cancellation, logging, resources",
        "``notifications/resources/updated`` without a string ``uri``",
        "dropped",
        (SOURCE_OF_TRUTH,),
        ("implied",),
        ("schema",),
        (
            Example(
                "2025-11-25",
                C,
                note("notifications/resources/updated", {}),
                "dropped",
                server_capabilities=SUBSCRIBE,
            ),
            Example(
                "2024-11-05",
                C,
                note("notifications/resources/updated", {"uri": 5}),
                "dropped",
                server_capabilities=SUBSCRIBE,
            ),
        ),
        note="the schema's ``ResourceUpdatedNotification``",
    ),
    Refusal(
        "Progress, cancellation, logging, resources",
        "initialize era: ``notifications/resources/updated`` for a URI not subscribed to (nor "
        "under one)",
        "accepted; under ``strict``: dropped",
        cite("resources.updated-not-subscribed", "informing it"),
        ("implied",),
        ("strict",),
        tuple(
            Example(
                v,
                C,
                note("notifications/resources/updated", {"uri": "file:///z"}),
                "dropped",
                server_capabilities=SUBSCRIBE,
                strict_only=True,
            )
            for v in LEGACY
        ),
        note="lower case, in the schema's ``ResourceUpdatedNotification``",
    ),
)

#: Every refusal, in the order of the docs page.
REFUSALS: Final[tuple[Refusal, ...]] = (*ENVELOPE, *METHODS, *NOTIFICATIONS, *MODERN)
