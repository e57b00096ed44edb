"""The rules of progress, cancellation, request ``_meta``, the 2026-07-28 era,
``input_required`` rounds, subscriptions and resources: ``progress.*``, ``cancel.*``,
``meta.*``, ``stateless.*``, ``input-required.*``, ``subscriptions.*``, ``resources.*``.
"""

from __future__ import annotations

from typing import Final

from mcp_sansio._errors import ErrorCode
from mcp_sansio._state import Role
from mcp_sansio.testing._rule_parts import (
    LEGACY,
    META,
    META_REQUIRED,
    MRTR,
    MRTR_CLIENT,
    MRTR_SERVER,
    NO_RESPONSE,
    PARAMS,
    cancel,
    input_required,
    legacy,
    legacy_subscriptions,
    listen,
    make_rule,
    mcp,
    progress,
    stateless,
)

#: The rules of this family, in the catalog's order.
CATALOG: Final = (
    make_rule(
        "progress.not-increasing",
        code=None,
        reply="none",
        level="MUST",
        where=progress,
        binds="sender",
        summary="""``progress`` MUST increase with each notification for a token: the duty of
        the side that sends progress. A value equal to or below the last one is never
        answered (our Connection drops it).""",
        probed="*sent*: the progress of a tool named for it",
        citations=(
            mcp(
                ("2026-07-28",),
                "Basic > Patterns > Progress > Progress Flow",
                "The `progress` value MUST increase with each notification, even if the total "
                "is unknown.",
            ),
            mcp(
                LEGACY,
                "Basic > Utilities > Progress > Progress Flow",
                "The `progress` value MUST increase with each notification, even if the total "
                "is unknown.",
            ),
        ),
    ),
    make_rule(
        "progress.unknown-token",
        code=None,
        reply="none",
        level="MUST",
        where=progress,
        binds="sender",
        summary="""Progress may only name the token of a request of the receiver's in flight
        (not one never sent, nor one already answered): the duty of the side that sends it.
        Anything else is never answered (our Connection drops it).""",
        probed="progress for a token no request of the server carries; *sent*: the tokens it uses",
        citations=(
            mcp(
                ("2026-07-28",),
                "Basic > Patterns > Progress > Behavior Requirements",
                "Progress notifications MUST only reference tokens that: … Were provided in an "
                "active request … Are associated with an in-progress operation",
            ),
            mcp(
                LEGACY,
                "Basic > Utilities > Progress > Behavior Requirements",
                "Progress notifications MUST only reference tokens that: … Were provided in an "
                "active request … Are associated with an in-progress operation",
            ),
            mcp(
                ("2026-07-28",),
                "Basic > Patterns > Progress > Implementation Notes",
                "Progress notifications MUST stop after completion",
            ),
            mcp(
                LEGACY,
                "Basic > Utilities > Progress > Implementation Notes",
                "Progress notifications MUST stop after completion",
            ),
        ),
    ),
    make_rule(
        "cancel.unknown-request",
        code=None,
        reply="none",
        level="MUST NOT",
        where=cancel,
        summary="""``notifications/cancelled`` naming no request of its sender in flight (never
        sent, already answered, one of the receiver's own requests) or malformed is never
        answered (it is a notification) and SHOULD be ignored: nothing cancelled.""",
        probed="a cancel naming no request in flight (never sent, answered, malformed)",
        citations=(
            *NO_RESPONSE,
            mcp(
                ("2026-07-28",),
                "Basic > Patterns > Cancellation > Error Handling",
                "Invalid cancellation notifications SHOULD be ignored: … Unknown request IDs … "
                "Already completed requests … Malformed notifications",
            ),
            mcp(
                LEGACY,
                "Basic > Utilities > Cancellation > Error Handling",
                "Invalid cancellation notifications SHOULD be ignored: … Unknown request IDs … "
                "Already completed requests … Malformed notifications",
            ),
            mcp(
                LEGACY,
                "Basic > Utilities > Cancellation > Behavior Requirements",
                "Cancellation notifications MUST only reference requests that: … Were "
                "previously issued in the same direction … Are believed to still be "
                "in-progress",
            ),
        ),
    ),
    make_rule(
        "cancel.initialize",
        code=None,
        reply="none",
        level="MUST NOT",
        where=legacy(Role.SERVER),
        binds="sender",
        summary="""``initialize`` MUST NOT be cancelled: the client's duty. Our Connection
        ignores a cancel naming it and still answers the ``initialize``; a server may do the
        same or treat it as any cancel.""",
        probed="a cancel of ``initialize``: is ``initialize`` still answered",
        citations=(
            mcp(
                LEGACY,
                "Basic > Utilities > Cancellation > Behavior Requirements",
                "The `initialize` request MUST NOT be cancelled by clients",
            ),
        ),
    ),
    # ------------------------------------------------------------------ 2026-07-28
    make_rule(
        "meta.missing",
        code=PARAMS,
        reply="error",
        level="MUST",
        where=stateless(Role.SERVER),
        summary="""2026-07-28: every request carries ``params._meta`` with
        ``io.modelcontextprotocol/protocolVersion`` (a string); without it: -32602.""",
        probed="no params, no ``_meta``, no version, a version that is not a string",
        citations=META_REQUIRED,
    ),
    make_rule(
        "meta.unsupported-version",
        code=int(ErrorCode.UNSUPPORTED_PROTOCOL_VERSION),
        reply="error",
        level="MUST",
        where=stateless(Role.SERVER),
        summary="""2026-07-28: a request for a protocol version the server does not support gets
        -32022 with ``data.supported`` (the server's versions) and ``data.requested``.""",
        probed="an unknown version in ``_meta``; ``data.supported`` and ``data.requested`` checked",
        citations=(
            mcp(
                ("2026-07-28",),
                "Basic > Versioning and Compatibility > Protocol Version Negotiation",
                "If the server does not implement the requested version (whether the version "
                "is unknown to the server, or is a known version the server has chosen not to "
                "support), it MUST respond with an `UnsupportedProtocolVersionError` listing "
                "the versions it does support:",
            ),
            mcp(
                ("2026-07-28",),
                "Basic > Overview > Messages > Responses > Error Codes",
                "`-32022` | `UnsupportedProtocolVersion`",
            ),
        ),
    ),
    make_rule(
        "meta.capabilities-missing",
        code=PARAMS,
        reply="error",
        level="MUST",
        where=stateless(Role.SERVER),
        summary="""2026-07-28: every request carries
        ``_meta["io.modelcontextprotocol/clientCapabilities"]`` (an object, ``{}`` for
        none); without it: -32602.""",
        probed="``_meta`` without ``clientCapabilities`` (or not an object)",
        citations=META_REQUIRED,
    ),
    make_rule(
        "stateless.server-request",
        code=None,
        reply="error",
        level="MUST NOT",
        where=stateless(Role.CLIENT),
        binds="sender",
        summary="""2026-07-28: a server never sends requests (``ping``,
        ``sampling/createMessage``, ``roots/list`` and ``elicitation/create`` of older
        versions included): the server's duty. Our Connection, as a client, refuses one with
        an error (-32601); the text names no reply (it says clients do not send
        responses).""",
        probed="*sent*: a 2026-07-28 server sends no request",
        citations=(
            mcp(
                ("2026-07-28",),
                "Basic > Patterns > Overview",
                "Servers MUST NOT initiate JSON-RPC requests, and clients do not send JSON-RPC "
                "responses.",
            ),
            mcp(
                ("2026-07-28",),
                "Basic > Patterns > Multi Round-Trip Requests",
                "The previous pattern of server-initiated requests is no longer supported.",
            ),
        ),
    ),
    make_rule(
        "input-required.retry",
        code=None,
        reply="result",
        level="implied",
        where=input_required(Role.SERVER),
        summary="""2026-07-28: after an ``input_required`` answer, the client's retry (a new id,
        the same params, ``inputResponses`` under the server's keys and ``requestState``
        echoed) is a valid, independent request and is answered with a result (the final
        one, or another ``input_required``).""",
        probed="a tool named for it, its input requests answered and the request retried",
        citations=(
            mcp(
                ("2026-07-28",),
                MRTR,
                "Server determines it has sufficient information to complete the operation, "
                "and responds with the final result.",
            ),
            mcp(
                ("2026-07-28",),
                MRTR + " > Basic Workflow",
                "Note that the requests in each step are completely independent: the server "
                "processing the retry does not need any information beyond what is directly "
                "present in the retry request.",
            ),
            mcp(
                ("2026-07-28",),
                MRTR_CLIENT,
                "If an `InputRequiredResult` contains the `requestState` field, the client "
                "MUST echo back the exact value of that field when retrying the original "
                "request.",
            ),
            mcp(
                ("2026-07-28",),
                MRTR_CLIENT,
                "The JSON-RPC `id` MUST be different between the initial request and the "
                "retry, as they are independent requests.",
            ),
        ),
    ),
    make_rule(
        "input-required.invalid",
        code=None,
        reply="none",
        level="MUST",
        where=input_required(Role.CLIENT),
        binds="sender",
        summary="""2026-07-28: an ``input_required`` result for a method that cannot return one,
        with neither ``inputRequests`` nor ``requestState``, with a ``requestState`` that is
        not a string, or asking for an unknown kind of input, breaks the server's duties; the
        client takes it for a malformed response (never answered).""",
        probed="*sent*: the ``input_required`` results of that tool",
        citations=(
            mcp(
                ("2026-07-28",),
                MRTR_SERVER,
                "Servers MUST include at least one of `inputRequests` or `requestState` in "
                "every `InputRequiredResult` response.",
            ),
            mcp(
                ("2026-07-28",),
                MRTR + " > Supported Requests",
                "Servers MUST NOT send `InputRequiredResult` responses on any other client "
                "requests.",
            ),
            mcp(
                ("2026-07-28",),
                MRTR_SERVER,
                "`inputRequests` values are request objects that MUST be one of "
                "`ElicitRequest`, `CreateMessageRequest`, or `ListRootsRequest`",
            ),
            mcp(
                ("2026-07-28",),
                "Basic > Overview > Messages > Responses > Result Responses > ResultType",
                "A `resultType` of any value unrecognized by the client MUST be considered "
                "invalid.",
            ),
        ),
    ),
    make_rule(
        "input-required.undeclared-capability",
        code=None,
        reply="none",
        level="MUST NOT",
        where=input_required(Role.CLIENT),
        binds="sender",
        summary="""2026-07-28: ``inputRequests`` may only ask for what the request's
        ``clientCapabilities`` declared (elicitation, sampling, roots): the server's duty. A
        result asking for more is taken for a malformed response (never answered).""",
        probed="*sent*: they ask only for what the request declared",
        citations=(
            mcp(
                ("2026-07-28",),
                MRTR_SERVER,
                "Servers MUST NOT send an `inputRequests` that the client has not declared "
                "support for in its capabilities.",
            ),
        ),
    ),
    make_rule(
        "subscriptions.listen-ack-first",
        code=None,
        reply="none",
        level="MUST NOT",
        where=listen,
        binds="sender",
        summary="""2026-07-28: nothing goes out on a ``subscriptions/listen`` stream before its
        ``notifications/subscriptions/acknowledged``: the server's duty. A stream
        notification before the acknowledgement is never answered (our Connection drops
        it).""",
        probed="*sent*: ``subscriptions/listen``, acknowledged before anything else",
        citations=(
            mcp(
                ("2026-07-28",),
                "Basic > Patterns > Subscriptions > Acknowledgment",
                "The server MUST send `notifications/subscriptions/acknowledged` as the first "
                "message carrying the subscription's ID in `_meta` under "
                "`io.modelcontextprotocol/subscriptionId`, and MUST NOT send any notification "
                "on the subscription before it.",
            ),
        ),
    ),
    make_rule(
        "subscriptions.not-opted-in",
        code=None,
        reply="none",
        level="MUST NOT",
        where=listen,
        binds="sender",
        summary="""2026-07-28: a stream carries only the notifications the listen opted into and
        the acknowledgement granted, each naming its subscription: the server's duty. Any
        other (or naming no listen, or a resource not subscribed) is never answered (our
        Connection drops it).""",
        probed="*sent*: the acknowledgement grants only what was asked",
        citations=(
            mcp(
                ("2026-07-28",),
                "Basic > Patterns > Subscriptions > Opening a Stream",
                "The server MUST NOT send notification types the client has not explicitly "
                "requested.",
            ),
            mcp(
                ("2026-07-28",),
                META,
                "On notifications delivered via a `subscriptions/listen` stream, the server "
                "MUST include `io.modelcontextprotocol/subscriptionId` in `_meta` so the "
                "client can correlate the notification with the originating subscription "
                "request.",
            ),
        ),
    ),
    make_rule(
        "resources.updated-not-subscribed",
        code=None,
        reply="none",
        level="implied",
        where=legacy_subscriptions,
        binds="sender",
        summary="""Initialize era: ``notifications/resources/updated`` only for a subscribed URI
        (or one under it): the server's duty, in a lower-case "should" of the schema. Any other
        is never answered (our Connection delivers it, or drops it under ``strict``).""",
        probed="*sent*: updates only for subscribed resources",
        citations=(
            mcp(
                LEGACY,
                "Schema > ResourceUpdatedNotification",
                "A notification from the server to the client, informing it that a resource "
                "has changed and may need to be read again. This should only be sent if the "
                "client previously sent a resources/subscribe request.",
            ),
            mcp(
                ("2025-11-25",),
                "Schema > ResourceUpdatedNotificationParams",
                "The URI of the resource that has been updated. This might be a sub-resource "
                "of the one that the client actually subscribed to.",
            ),
            mcp(
                ("2025-06-18", "2025-03-26", "2024-11-05"),
                "Schema > ResourceUpdatedNotification",
                "The URI of the resource that has been updated. This might be a sub-resource "
                "of the one that the client actually subscribed to.",
            ),
        ),
    ),
)
