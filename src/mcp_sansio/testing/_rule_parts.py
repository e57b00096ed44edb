"""The parts the rules are made of: where a rule applies (predicates on the version tables,
never version strings), the sentences cited (JSON-RPC 2.0 and the MCP text), and
:func:`make_rule`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

import attrs

from mcp_sansio._errors import ErrorCode
from mcp_sansio._state import Role
from mcp_sansio._versions import VERSIONS, Direction, Kind, VersionSpec
from mcp_sansio.testing._rule_model import JSONRPC, MCP, Binds, Citation, Level, Reply, Rule

# ---------------------------------------------------------------------------- predicates
# Each takes a version's table and the receiver's role; they read only the tables.

_Where = Callable[[VersionSpec, Role], bool]

_SENDS: Final = {Role.CLIENT: Direction.CLIENT_TO_SERVER, Role.SERVER: Direction.SERVER_TO_CLIENT}


def _sends(spec: VersionSpec, sender: Role, kind: Kind, *, gated: bool | None = None) -> bool:
    """Whether ``sender`` has a method of ``kind`` in ``spec`` (only gated ones, only
    ungated ones, or any)."""
    return any(
        rule.kind is kind
        and rule.direction in (Direction.BOTH, _SENDS[sender])
        and (gated is None or bool(rule.gate) is gated)
        for rule in spec.methods.values()
    )


def _may_send(spec: VersionSpec, sender: Role, method: str) -> bool:
    rule = spec.methods.get(method)
    return rule is not None and rule.direction in (Direction.BOTH, _SENDS[sender])


def always(spec: VersionSpec, receiver: Role) -> bool:
    return True


def legacy(*roles: Role) -> _Where:
    return lambda spec, receiver: spec.policy.handshake and receiver in roles


def stateless(*roles: Role) -> _Where:
    return lambda spec, receiver: not spec.policy.handshake and receiver in roles


def batches(spec: VersionSpec, receiver: Role) -> bool:
    return spec.batches


def no_batches(spec: VersionSpec, receiver: Role) -> bool:
    return not spec.batches


def receives_requests(spec: VersionSpec, receiver: Role) -> bool:
    return _sends(spec, receiver.peer, Kind.REQUEST)


def receives_gated_requests(spec: VersionSpec, receiver: Role) -> bool:
    return _sends(spec, receiver.peer, Kind.REQUEST, gated=True)


def receives_gated_notifications(spec: VersionSpec, receiver: Role) -> bool:
    return _sends(spec, receiver.peer, Kind.NOTIFICATION, gated=True)


def wrong_direction(spec: VersionSpec, receiver: Role) -> bool:
    """Requests only the receiver may send exist (the peer sending one is a mistake)."""
    return any(
        rule.kind is Kind.REQUEST and rule.direction is _SENDS[receiver]
        for rule in spec.methods.values()
    )


def progress(spec: VersionSpec, receiver: Role) -> bool:
    """Progress flows to the receiver: the sender may send it, the receiver requests."""
    return _may_send(spec, receiver.peer, "notifications/progress") and _sends(
        spec, receiver, Kind.REQUEST
    )


def cancel(spec: VersionSpec, receiver: Role) -> bool:
    return _may_send(spec, receiver.peer, "notifications/cancelled")


def subcapabilities(spec: VersionSpec, receiver: Role) -> bool:
    return (
        receiver is Role.CLIENT
        and (spec.elicitation_modes or spec.sampling_tools)
        and (
            _may_send(spec, Role.SERVER, "elicitation/create")
            or _may_send(spec, Role.SERVER, "sampling/createMessage")
        )
    )


def input_required(*roles: Role) -> _Where:
    return lambda spec, receiver: (
        receiver in roles and any(rule.input_required for rule in spec.methods.values())
    )


def listen(spec: VersionSpec, receiver: Role) -> bool:
    return receiver is Role.CLIENT and "subscriptions/listen" in spec.methods


def legacy_subscriptions(spec: VersionSpec, receiver: Role) -> bool:
    return receiver is Role.CLIENT and "resources/subscribe" in spec.methods


def _cases(
    where: _Where, roles: tuple[Role, ...] = (Role.CLIENT, Role.SERVER)
) -> frozenset[tuple[str, Role]]:
    return frozenset(
        (version, role) for version, spec in VERSIONS.items() for role in roles if where(spec, role)
    )


# ---------------------------------------------------------------------------- citations
# The sentences several rules rest on. Each lists every version whose text has it; a rule
# keeps only the versions it applies to (see make_rule).

V: Final = ("2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")


def mcp(
    versions: tuple[str, ...], section: str, text: str, *, cases: tuple[str, ...] = ()
) -> Citation:
    return Citation(MCP, versions, section, " ".join(text.split()), cases)


def rpc(section: str, text: str) -> Citation:
    return Citation(JSONRPC, (), section, " ".join(text.split()))


# JSON-RPC 2.0 (https://www.jsonrpc.org/specification).
RPC_REPLY: Final = rpc(
    "5 Response object",
    "When a rpc call is made, the Server MUST reply with a Response, except for in the case "
    "of Notifications.",
)
RPC_ONE_RESPONSE: Final = rpc(
    "5 Response object",
    "When a rpc call is made, the Server MUST reply with a Response, except for in the case "
    "of Notifications. The Response is expressed as a single JSON Object, with the following "
    "members:",
)
RPC_ID: Final = rpc(
    "5 Response object",
    "id: This member is REQUIRED. It MUST be the same as the value of the id member in the "
    "Request Object. If there was an error in detecting the id in the Request object (e.g. "
    "Parse error/Invalid Request), it MUST be Null.",
)
RPC_ERROR: Final = rpc(
    "5.1 Error object",
    "When a rpc call encounters an error, the Response Object MUST contain the error member "
    "with a value that is a Object with the following members: … code: A Number that "
    "indicates the error type that occurred.",
)
RPC_PARSE: Final = rpc(
    "5.1 Error object",
    "-32700 | Parse error | Invalid JSON was received by the server. An error occurred on the "
    "server while parsing the JSON text.",
)
RPC_INVALID: Final = rpc(
    "5.1 Error object", "-32600 | Invalid Request | The JSON sent is not a valid Request object."
)
RPC_NOT_FOUND: Final = rpc(
    "5.1 Error object",
    "-32601 | Method not found | The method does not exist / is not available.",
)
RPC_PARAMS: Final = rpc(
    "5.1 Error object", "-32602 | Invalid params | Invalid method parameter(s)."
)
_RPC_NOTIFICATION: Final = rpc(
    "4.1 Notification",
    "The Server MUST NOT reply to a Notification, including those that are within a batch request.",
)
RPC_CLIENT: Final = rpc(
    "2 Conventions",
    "The Client is defined as the origin of Request objects and the handler of Response objects.",
)
RPC_RESULT_OR_ERROR: Final = rpc(
    "5 Response object",
    "Either the result member or error member MUST be included, but both members MUST NOT be "
    "included.",
)
RPC_SAME_ID: Final = rpc(
    "4 Request object",
    "The Server MUST reply with the same value in the Response object if included.",
)

# MCP: messages.
ALL_JSONRPC: Final = (
    mcp(
        ("2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"),
        "Basic > Overview > Messages",
        "All messages between MCP clients and servers MUST follow the JSON-RPC 2.0 specification.",
    ),
    mcp(
        ("2024-11-05",),
        "Basic > Overview",
        "All messages between MCP clients and servers MUST follow the JSON-RPC 2.0 specification.",
    ),
    mcp(
        ("2024-11-05",),
        "Basic > Messages",
        "All messages in MCP MUST follow the JSON-RPC 2.0 specification.",
    ),
)
REQUEST_ID: Final = (
    mcp(
        ("2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"),
        "Basic > Overview > Messages > Requests",
        "Requests MUST include a string or integer ID.",
    ),
    mcp(
        ("2024-11-05",),
        "Basic > Messages > Requests",
        "Requests MUST include a string or integer ID.",
    ),
)
NULL_ID: Final = (
    mcp(
        ("2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"),
        "Basic > Overview > Messages > Requests",
        "Unlike base JSON-RPC, the ID MUST NOT be `null`.",
    ),
    mcp(
        ("2024-11-05",),
        "Basic > Messages > Requests",
        "Unlike base JSON-RPC, the ID MUST NOT be `null`.",
    ),
)
ERROR_ID: Final = mcp(
    ("2026-07-28", "2025-11-25"),
    "Basic > Overview > Messages > Responses > Error Responses",
    "Error responses MUST include the same ID as the request they correspond to (except in "
    "error cases where the ID could not be read due a malformed request).",
)
RESPONSE_ID: Final = (
    mcp(
        ("2026-07-28", "2025-11-25"),
        "Basic > Overview > Messages > Responses > Result Responses",
        "Result responses MUST include the same ID as the request they correspond to.",
    ),
    mcp(
        ("2025-06-18", "2025-03-26"),
        "Basic > Overview > Messages > Responses",
        "Responses MUST include the same ID as the request they correspond to.",
    ),
    mcp(
        ("2024-11-05",),
        "Basic > Messages > Responses",
        "Responses MUST include the same ID as the request they correspond to.",
    ),
)
RESPONSES_ANSWER_REQUESTS: Final = (
    mcp(
        ("2026-07-28", "2025-11-25"),
        "Basic > Overview > Messages > Responses",
        "Responses are sent in reply to requests, containing either the result or error of "
        "the operation.",
    ),
    mcp(
        ("2025-06-18", "2025-03-26"),
        "Basic > Overview > Messages > Responses",
        "Responses are sent in reply to requests, containing the result or error of the operation.",
    ),
    mcp(
        ("2024-11-05",), "Basic > Messages > Responses", "Responses are sent in reply to requests."
    ),
)
NO_RESPONSE: Final = (
    mcp(
        ("2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"),
        "Basic > Overview > Messages > Notifications",
        "The receiver MUST NOT send a response.",
    ),
    mcp(
        ("2024-11-05",),
        "Basic > Messages > Notifications",
        "Notifications are sent from the client to the server or vice versa. They do not "
        "expect a response.",
    ),
    _RPC_NOTIFICATION,
)
SOURCE_OF_TRUTH: Final = mcp(
    V,
    "Basic > Overview > Schema",
    "This is the source of truth for all protocol messages and structures.",
)

# MCP: the lifecycle of the initialize era.
LEGACY: Final = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
INITIALIZATION: Final = "Basic > Lifecycle > Lifecycle Phases > Initialization"
INIT_FIRST: Final = mcp(
    LEGACY,
    INITIALIZATION,
    "The initialization phase MUST be the first interaction between client and server.",
)
CLIENT_WAITS: Final = mcp(
    LEGACY,
    INITIALIZATION,
    "The client SHOULD NOT send requests other than pings before the server has responded to "
    "the `initialize` request.",
)
SERVER_WAITS: Final = mcp(
    LEGACY,
    INITIALIZATION,
    "The server SHOULD NOT send requests other than pings and logging before receiving the "
    "`initialized` notification.",
)
_OPERATION: Final = "Basic > Lifecycle > Lifecycle Phases > Operation"
RESPECT_VERSION: Final = (
    mcp(
        ("2025-11-25", "2025-06-18"),
        _OPERATION,
        "Both parties MUST: … Respect the negotiated protocol version",
    ),
    mcp(
        ("2025-03-26", "2024-11-05"),
        _OPERATION,
        "Both parties SHOULD: … Respect the negotiated protocol version",
    ),
)
NEGOTIATED_ONLY: Final = (
    mcp(
        ("2025-11-25", "2025-06-18"),
        _OPERATION,
        "Both parties MUST: … Only use capabilities that were successfully negotiated",
    ),
    mcp(
        ("2025-03-26", "2024-11-05"),
        _OPERATION,
        "Both parties SHOULD: … Only use capabilities that were successfully negotiated",
    ),
)

# MCP: cancellation's race (a cancel that arrives after the answer).
_LATE_CANCEL: Final = (
    "Due to network latency, cancellation notifications may arrive after request processing "
    "has completed, and potentially after a response has already been sent. Both parties "
    "MUST handle these race conditions gracefully:"
)
CANCEL_RACE: Final = (
    mcp(("2026-07-28",), "Basic > Patterns > Cancellation > Timing Considerations", _LATE_CANCEL),
    mcp(LEGACY, "Basic > Utilities > Cancellation > Timing Considerations", _LATE_CANCEL),
)
NO_ANSWER_AFTER_CANCEL: Final = (
    mcp(
        ("2026-07-28",),
        "Basic > Patterns > Cancellation > Behavior Requirements",
        "Servers receiving cancellation notifications SHOULD: … Not send a response for the "
        "cancelled request",
    ),
    mcp(
        LEGACY,
        "Basic > Utilities > Cancellation > Behavior Requirements",
        "Receivers of cancellation notifications SHOULD: … Not send a response for the "
        "cancelled request",
    ),
)
#: The one sentence on a capability a notification needs (log messages).
LOGGING_DECLARED: Final = mcp(
    V,
    "Server > Utilities > Logging > Capabilities",
    "Servers that emit log message notifications MUST declare the `logging` capability:",
    cases=("notifications/message",),
)

# MCP 2026-07-28: _meta.
META: Final = "Basic > Overview > General fields > `_meta`"
META_REQUIRED: Final = (
    mcp(
        ("2026-07-28",),
        META,
        "Client requests carry the following `io.modelcontextprotocol/*` fields in `_meta`; "
        "fields marked as required MUST be included on every request.",
    ),
    mcp(
        ("2026-07-28",),
        META,
        "A request missing any required field is malformed; the server MUST reject it with "
        "JSON-RPC error code `-32602` (Invalid params).",
    ),
)
METHOD_NOT_FOUND_2026: Final = mcp(
    ("2026-07-28",),
    "Schema > MethodNotFoundError",
    "A JSON-RPC error indicating that the requested method does not exist or is not available.",
)
GATED_2026: Final = mcp(
    ("2026-07-28",),
    "Schema > MethodNotFoundError",
    "In MCP, a server returns this error when a client invokes a method the server does not "
    "implement — either a genuinely unknown method, or one gated behind a server capability "
    "the server did not advertise (e.g., calling `prompts/list` when the `prompts` "
    "capability was not advertised).",
)
MRTR: Final = "Basic > Patterns > Multi Round-Trip Requests > Multi Round-Trip Requests"
MRTR_SERVER: Final = MRTR + " > Basic Workflow > Server Requirements (Basic Workflow)"
MRTR_CLIENT: Final = MRTR + " > Basic Workflow > Client Requirements (Basic Workflow)"


INVALID: Final = int(ErrorCode.INVALID_REQUEST)
NOT_FOUND: Final = int(ErrorCode.METHOD_NOT_FOUND)
PARAMS: Final = int(ErrorCode.INVALID_PARAMS)


def _trim(citations: tuple[Citation, ...], versions: frozenset[str]) -> tuple[Citation, ...]:
    """The citations with only the versions the rule applies to; a sentence of none of
    them is left out."""
    out = []
    for c in citations:
        if c.document != MCP:
            out.append(c)
            continue
        kept = tuple(v for v in c.versions if v in versions)
        if kept:
            out.append(attrs.evolve(c, versions=kept))
    return tuple(out)


def make_rule(
    name: str,
    *,
    code: int | None,
    reply: Reply,
    level: Level,
    where: _Where | frozenset[tuple[str, Role]],
    summary: str,
    probed: str,
    citations: tuple[Citation, ...],
    binds: Binds = "receiver",
    sent: tuple[Citation, ...] = (),
    about_others: tuple[Citation, ...] = (),
) -> Rule:
    """A rule; ``about_others`` are sentences of versions the rule does not apply to, about
    the versions it does (kept whole)."""
    cases = where if isinstance(where, frozenset) else _cases(where)
    versions = frozenset(version for version, _ in cases)
    return Rule(
        name=name,
        summary=" ".join(summary.split()),
        code=code,
        reply=reply,
        level=level,
        cases=cases,
        binds=binds,
        citations=_trim(citations, versions) + about_others,
        probed=" ".join(probed.split()),
        sent_citations=_trim(sent, versions),
    )
