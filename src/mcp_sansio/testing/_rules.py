"""The catalog of named protocol rules, shared by the near-miss strategies, the probe and
its report.

Each :class:`Rule` names one thing a receiver must do when its peer breaks (or comes close
to breaking) the protocol: the JSON-RPC error code to answer with, or that it must not
answer at all, or that it must answer normally. Names are dotted, lower-case and stable
(``envelope.parse-error``, ``ids.duplicate-request-id``, …): reports, tests and the
strategies of :mod:`mcp_sansio.testing` refer to rules by name only.

Where a rule applies is computed from the version tables of :mod:`mcp_sansio._versions`
(which methods exist, who sends them, which capability gates them, whether batches exist),
never from version strings: :attr:`Rule.cases` lists the ``(version, receiver role)``
pairs, and :attr:`Rule.eras` and :attr:`Rule.roles` summarise them.

The codes are the ones the specification gives where it gives one, else the JSON-RPC 2.0
ones, else (``level="ours"``) what this library's :class:`~mcp_sansio.Connection` answers:
see the JSON-RPC 2.0 specification, 5.1 Error object; MCP 2026-07-28, Base Protocol >
Overview > Error Codes; and docs/connection.rst, "What is enforced, and what is not".
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Final, Literal

import attrs

from mcp_sansio._errors import ErrorCode
from mcp_sansio._state import Role
from mcp_sansio._versions import VERSIONS, Direction, Era, Kind, VersionSpec

__all__ = [
    "OTHER_RULE",
    "PROBE_RULES",
    "RULES",
    "Binds",
    "Citation",
    "Level",
    "Reply",
    "Rule",
    "Severity",
    "rule",
    "rules_for",
]

#: What the receiver must send back: ``"error"`` (an error response), ``"none"`` (nothing:
#: the message is dropped or ignored), ``"result"`` (a normal answer: the message is
#: valid and must be processed), ``"close"`` (the receiver gives up the session).
Reply = Literal["error", "none", "result", "close"]

#: How strongly the text states the rule: ``"MUST"`` / ``"MUST NOT"`` / ``"SHOULD"`` /
#: ``"SHOULD NOT"`` (the keyword of the sentence cited), ``"implied"`` (follows from the
#: schema or from JSON-RPC 2.0 without a sentence that states it), ``"ours"`` (the text is
#: silent; this is what our Connection does).
Level = Literal["MUST", "MUST NOT", "SHOULD", "SHOULD NOT", "implied", "ours"]

#: Whose duty the cited sentence states: the ``"receiver"``'s (the side judged: what it
#: answers is what the text asks of it), or the ``"sender"``'s (the probe breaks it on
#: purpose; how the receiver reacts is its own choice, reported but never charged to it).
Binds = Literal["receiver", "sender"]

#: What a finding of a rule counts as (see :attr:`Rule.severity`): ``"failure"`` (the
#: receiver broke a MUST or MUST NOT of its own), ``"warning"`` (a SHOULD, SHOULD NOT or
#: an implied rule; a failure only under ``--strict``), ``"note"`` (never charged: the
#: duty was the sender's, or the text is silent).
Severity = Literal["failure", "warning", "note"]


@attrs.frozen
class Citation:
    """Where a rule's text is: a document, its section, and the sentence itself."""

    document: str
    """``"MCP"`` (the Model Context Protocol specification) or ``"JSON-RPC 2.0"``."""
    versions: tuple[str, ...]
    """The MCP versions whose text has the sentence (newest first); ``()`` for JSON-RPC."""
    section: str
    """The section, as its headings read (``"Basic > Lifecycle > Initialization"``)."""
    text: str
    """The sentence, quoted as the text has it."""


@attrs.frozen
class Rule:
    """One named protocol rule, and where it applies."""

    name: str
    """The stable dotted name, e.g. ``"ids.duplicate-request-id"``."""
    summary: str
    """What the rule says, in one or two sentences."""
    code: int | None
    """The JSON-RPC error code the receiver must answer with; ``None`` where the rule
    wants no error reply (``reply`` is not ``"error"``) or leaves the code to the
    implementation."""
    reply: Reply
    """What the receiver must send back (see :data:`Reply`)."""
    level: Level
    """How strongly the specification states it (see :data:`Level`)."""
    cases: frozenset[tuple[str, Role]]
    """Every ``(protocol version, receiver role)`` the rule applies to; the receiver is
    the side that must enforce it."""
    binds: Binds = "receiver"
    """Whose duty the cited sentence states (see :data:`Binds`)."""
    citations: tuple[Citation, ...] = ()
    """The sentences the rule rests on (none for ``level="ours"``)."""

    @property
    def severity(self) -> Severity:
        """What a finding counts as: a ``"failure"`` for a MUST or MUST NOT of the
        receiver's, a ``"warning"`` for a SHOULD, SHOULD NOT or implied rule of the
        receiver's, a ``"note"`` when the duty is the sender's or the text is silent."""
        if self.binds == "sender" or self.level == "ours":
            return "note"
        if self.level in ("MUST", "MUST NOT"):
            return "failure"
        return "warning"

    @property
    def eras(self) -> frozenset[Era]:
        """The eras of the versions the rule applies to."""
        return frozenset(VERSIONS[version].era for version, _ in self.cases)

    @property
    def roles(self) -> frozenset[Role]:
        """The roles that must enforce the rule (the receivers of the offending message)."""
        return frozenset(role for _, role in self.cases)

    @property
    def versions(self) -> tuple[str, ...]:
        """The versions the rule applies to, newest first."""
        return tuple(sorted({version for version, _ in self.cases}, reverse=True))

    def applies(self, version: str, receiver: Role) -> bool:
        """Whether the rule applies when ``receiver`` speaks ``version``."""
        return (version, receiver) in self.cases


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


def _always(spec: VersionSpec, receiver: Role) -> bool:
    return True


def _legacy(*roles: Role) -> _Where:
    return lambda spec, receiver: spec.era is Era.INITIALIZE and receiver in roles


def _stateless(*roles: Role) -> _Where:
    return lambda spec, receiver: spec.era is Era.STATELESS and receiver in roles


def _batches(spec: VersionSpec, receiver: Role) -> bool:
    return spec.batches


def _no_batches(spec: VersionSpec, receiver: Role) -> bool:
    return not spec.batches


def _receives_requests(spec: VersionSpec, receiver: Role) -> bool:
    return _sends(spec, receiver.peer, Kind.REQUEST)


def _receives_gated_requests(spec: VersionSpec, receiver: Role) -> bool:
    return _sends(spec, receiver.peer, Kind.REQUEST, gated=True)


def _receives_gated_notifications(spec: VersionSpec, receiver: Role) -> bool:
    return _sends(spec, receiver.peer, Kind.NOTIFICATION, gated=True)


def _wrong_direction(spec: VersionSpec, receiver: Role) -> bool:
    """Requests only the receiver may send exist (the peer sending one is a mistake)."""
    return any(
        rule.kind is Kind.REQUEST and rule.direction is _SENDS[receiver]
        for rule in spec.methods.values()
    )


def _progress(spec: VersionSpec, receiver: Role) -> bool:
    """Progress flows to the receiver: the sender may send it, the receiver requests."""
    return _may_send(spec, receiver.peer, "notifications/progress") and _sends(
        spec, receiver, Kind.REQUEST
    )


def _cancel(spec: VersionSpec, receiver: Role) -> bool:
    return _may_send(spec, receiver.peer, "notifications/cancelled")


def _subcapabilities(spec: VersionSpec, receiver: Role) -> bool:
    return (
        receiver is Role.CLIENT
        and (spec.elicitation_modes or spec.sampling_tools)
        and (
            _may_send(spec, Role.SERVER, "elicitation/create")
            or _may_send(spec, Role.SERVER, "sampling/createMessage")
        )
    )


def _input_required(*roles: Role) -> _Where:
    return lambda spec, receiver: (
        receiver in roles and any(rule.input_required for rule in spec.methods.values())
    )


def _listen(spec: VersionSpec, receiver: Role) -> bool:
    return receiver is Role.CLIENT and "subscriptions/listen" in spec.methods


def _legacy_subscriptions(spec: VersionSpec, receiver: Role) -> bool:
    return receiver is Role.CLIENT and "resources/subscribe" in spec.methods


def _cases(
    where: _Where, roles: tuple[Role, ...] = (Role.CLIENT, Role.SERVER)
) -> frozenset[tuple[str, Role]]:
    return frozenset(
        (version, role) for version, spec in VERSIONS.items() for role in roles if where(spec, role)
    )


_INVALID: Final = int(ErrorCode.INVALID_REQUEST)
_NOT_FOUND: Final = int(ErrorCode.METHOD_NOT_FOUND)
_PARAMS: Final = int(ErrorCode.INVALID_PARAMS)


def _rule(
    name: str,
    code: int | None,
    reply: Reply,
    level: Level,
    where: _Where,
    summary: str,
) -> Rule:
    return Rule(
        name=name,
        summary=" ".join(summary.split()),
        code=code,
        reply=reply,
        level=level,
        cases=_cases(where),
    )


_CATALOG: Final = (
    # ------------------------------------------------------------------ envelope
    _rule(
        "envelope.parse-error",
        int(ErrorCode.PARSE_ERROR),
        "error",
        "MUST",
        _always,
        """A line that is not JSON (cut short, a trailing comma, single quotes, invalid
        UTF-8, …) is answered with -32700 and ``"id": null``.""",
    ),
    _rule(
        "envelope.invalid-request",
        _INVALID,
        "error",
        "MUST",
        _always,
        """JSON that is not a valid request or notification (``jsonrpc`` missing or not
        ``"2.0"``; an ``id`` that is null, a boolean, a fraction or a structure; a
        ``method`` that is not a string; ``params`` that are not an object; ``result`` or
        ``error`` on a request; not an object at all) is answered with -32600, addressed
        to the request's id when it could be read, else to null.""",
    ),
    _rule(
        "envelope.invalid-response",
        None,
        "none",
        "implied",
        _always,
        """A malformed response (both ``result`` and ``error``; a ``result`` that is not an
        object; an ``error`` without an integer ``code`` or a string ``message``; a result
        without a valid ``id``) is never answered: a reply would be taken for an answer
        to one of the peer's own requests.""",
    ),
    _rule(
        "envelope.batch-not-allowed",
        _INVALID,
        "error",
        "implied",
        _no_batches,
        """In every version without JSON-RPC batches (all but 2025-03-26), a JSON array
        is not a message: -32600 with ``"id": null``, and none of its members is
        processed.""",
    ),
    _rule(
        "envelope.empty-batch",
        _INVALID,
        "error",
        "MUST",
        _batches,
        """In 2025-03-26, an empty array is answered with one -32600 error (not an
        array), ``"id": null``.""",
    ),
    _rule(
        "envelope.batch-mixed",
        _INVALID,
        "error",
        "implied",
        _batches,
        """In 2025-03-26, a batch holds requests and notifications, or responses, never
        both (the schema's ``JSONRPCBatchRequest`` / ``JSONRPCBatchResponse``): a mixed one
        gets -32600 with ``"id": null``.""",
    ),
    _rule(
        "envelope.oversized-message",
        _INVALID,
        "error",
        "ours",
        _receives_requests,
        """A line longer than the receiver's maximum message size is dropped unread (the
        specification sets no limit; this is what our Connection does): a request whose id
        can be read from the line's two ends is answered with -32600 to that id, anything
        else not recognizable as a response with -32600 to ``"id": null``; a response is
        never answered, and ends the request it answers. Framing resumes at the next
        line.""",
    ),
    # ------------------------------------------------------------------ lifecycle
    _rule(
        "lifecycle.request-before-initialize",
        _INVALID,
        "error",
        "MUST",
        _legacy(Role.SERVER),
        """Initialize era: the first request MUST be ``initialize``; any other request but
        ``ping`` before it is refused with -32600.""",
    ),
    _rule(
        "lifecycle.request-before-initialized",
        _INVALID,
        "error",
        "SHOULD",
        _legacy(Role.CLIENT, Role.SERVER),
        """Initialize era: until the handshake is over (the client's
        ``notifications/initialized``), neither side sends requests other than ``ping``;
        one that does gets -32600.""",
    ),
    _rule(
        "lifecycle.notification-before-initialized",
        None,
        "none",
        "SHOULD",
        _legacy(Role.CLIENT, Role.SERVER),
        """Initialize era: before the handshake is over only ``notifications/cancelled``,
        ``notifications/progress`` (and the server's logging, and the client's
        ``notifications/initialized``) may be sent; any other notification is dropped,
        unanswered.""",
    ),
    _rule(
        "lifecycle.second-initialize",
        _INVALID,
        "error",
        "implied",
        _legacy(Role.SERVER),
        """Initialize era: a session is initialized once; a second ``initialize`` (while
        the first is in flight or after it) is refused with -32600.""",
    ),
    _rule(
        "lifecycle.initialize-version",
        None,
        "result",
        "MUST",
        _legacy(Role.SERVER),
        """Initialize era: ``initialize`` asking for a version the server does not support
        is not an error: the server answers with a version it supports (it echoes the
        requested one only when it supports it).""",
    ),
    _rule(
        "lifecycle.unsupported-version-result",
        None,
        "close",
        "SHOULD",
        _legacy(Role.CLIENT),
        """Initialize era: an ``initialize`` result naming a version the client does not
        speak ends the session: the client disconnects.""",
    ),
    _rule(
        "lifecycle.initialize-stateless",
        None,
        "error",
        "MUST",
        _stateless(Role.SERVER),
        """A server that speaks only 2026-07-28 answers a legacy ``initialize`` with an
        error (implementation-defined; it SHOULD name the versions it supports).""",
    ),
    # ------------------------------------------------------------------ ids
    _rule(
        "ids.duplicate-request-id",
        _INVALID,
        "error",
        "MUST",
        _receives_requests,
        """A request id is never reused by the same sender: in the initialize era for the
        whole session (the reuse is answered with -32600 under that id), in 2026-07-28
        while a request with that id is in flight (answered with -32600 and
        ``"id": null``, so that the answer cannot be taken for the other request's).""",
    ),
    _rule(
        "ids.string-and-int-are-different",
        None,
        "result",
        "implied",
        _receives_requests,
        """``7`` and ``"7"`` are different ids: a request whose id equals another's only
        after conversion is a new request, answered normally under its own id (of its own
        JSON type).""",
    ),
    _rule(
        "response.unknown-id",
        None,
        "none",
        "implied",
        _always,
        """A response whose id answers no request in flight (never sent, already answered,
        or the same digits of another JSON type) is dropped: no reply, no crash.""",
    ),
    # ------------------------------------------------------------------ capabilities
    _rule(
        "capability.undeclared-server-capability",
        _NOT_FOUND,
        "error",
        "MUST",
        lambda spec, receiver: receiver is Role.SERVER and _receives_gated_requests(spec, receiver),
        """A client request for a feature the server did not declare (``tools/call``
        without ``tools``, ``resources/subscribe`` without ``resources.subscribe``, …) gets
        -32601 (a SHOULD before 2025-06-18).""",
    ),
    _rule(
        "capability.undeclared-client-capability",
        _NOT_FOUND,
        "error",
        "MUST",
        lambda spec, receiver: receiver is Role.CLIENT and _receives_gated_requests(spec, receiver),
        """Initialize era: a server request for a feature the client did not declare
        (``sampling/createMessage`` without ``sampling``, ``roots/list`` without ``roots``,
        ``elicitation/create`` without ``elicitation``, tasks without ``tasks``) gets
        -32601.""",
    ),
    _rule(
        "capability.undeclared-client-subcapability",
        _PARAMS,
        "error",
        "MUST",
        _subcapabilities,
        """2025-11-25: elicitation in a mode the client did not declare
        (``elicitation.url`` / ``.form``), or sampling with tools or context without
        ``sampling.tools`` / ``sampling.context``, gets -32602.""",
    ),
    _rule(
        "capability.undeclared-notification",
        None,
        "none",
        "MUST",
        _receives_gated_notifications,
        """A notification gated by a capability its sender did not declare
        (``notifications/tools/list_changed`` without ``tools.listChanged``,
        ``notifications/message`` without ``logging``, ``notifications/roots/list_changed``
        without ``roots.listChanged``) is dropped, unanswered.""",
    ),
    # ------------------------------------------------------------------ methods and params
    _rule(
        "method.unknown",
        _NOT_FOUND,
        "error",
        "MUST",
        _always,
        """A request for a method the negotiated version does not have (an invented name,
        a method of another version, a notification's name) gets -32601.""",
    ),
    _rule(
        "method.unknown-notification",
        None,
        "none",
        "MUST",
        _always,
        """A notification the negotiated version does not have (an invented name, a
        request's name) is dropped: notifications are never answered.""",
    ),
    _rule(
        "method.wrong-direction",
        _NOT_FOUND,
        "error",
        "implied",
        _wrong_direction,
        """A request only the other side may send (a server sending ``tools/call``, a
        client sending ``sampling/createMessage``) gets -32601.""",
    ),
    _rule(
        "params.invalid",
        _PARAMS,
        "error",
        "MUST",
        _receives_requests,
        """A request whose params lack a property the schema requires, or give it the
        wrong JSON type (``tools/call`` without ``name``, ``resources/read`` without
        ``uri``, ``initialize`` without ``capabilities``, ``logging/setLevel`` with a
        number, …) gets -32602. (Unknown tools and prompts are -32602 too; judging those
        needs the server's own lists.)""",
    ),
    # ------------------------------------------------------------------ progress, cancel
    _rule(
        "progress.not-increasing",
        None,
        "none",
        "MUST",
        _progress,
        """``progress`` MUST increase with each notification for a token: a value equal
        to or below the last one is dropped, unanswered.""",
    ),
    _rule(
        "progress.unknown-token",
        None,
        "none",
        "MUST",
        _progress,
        """Progress may only name the token of a request of the receiver's in flight (not
        one never sent, nor one already answered): anything else is dropped,
        unanswered.""",
    ),
    _rule(
        "cancel.unknown-request",
        None,
        "none",
        "MUST",
        _cancel,
        """``notifications/cancelled`` naming no request of its sender in flight (never
        sent, already answered, one of the receiver's own requests) or malformed is
        ignored: no reply, nothing cancelled.""",
    ),
    _rule(
        "cancel.initialize",
        None,
        "none",
        "MUST",
        _legacy(Role.SERVER),
        """``initialize`` MUST NOT be cancelled: a cancel naming it is ignored, and the
        server still answers the ``initialize``.""",
    ),
    # ------------------------------------------------------------------ 2026-07-28
    _rule(
        "meta.missing",
        _PARAMS,
        "error",
        "MUST",
        _stateless(Role.SERVER),
        """2026-07-28: every request carries ``params._meta`` with
        ``io.modelcontextprotocol/protocolVersion`` (a string); without it: -32602.""",
    ),
    _rule(
        "meta.unsupported-version",
        int(ErrorCode.UNSUPPORTED_PROTOCOL_VERSION),
        "error",
        "MUST",
        _stateless(Role.SERVER),
        """2026-07-28: a request for a protocol version the server does not support gets
        -32022 with ``data.supported`` (the server's versions) and ``data.requested``.""",
    ),
    _rule(
        "meta.capabilities-missing",
        _PARAMS,
        "error",
        "MUST",
        _stateless(Role.SERVER),
        """2026-07-28: every request carries
        ``_meta["io.modelcontextprotocol/clientCapabilities"]`` (an object, ``{}`` for
        none); without it: -32602.""",
    ),
    _rule(
        "stateless.server-request",
        _NOT_FOUND,
        "error",
        "MUST",
        _stateless(Role.CLIENT),
        """2026-07-28: a server never sends requests (``ping``, ``sampling/createMessage``,
        ``roots/list`` and ``elicitation/create`` of older versions included); a client
        answers one with -32601.""",
    ),
    _rule(
        "input-required.retry",
        None,
        "result",
        "MUST",
        _input_required(Role.SERVER),
        """2026-07-28: after an ``input_required`` answer, the client's retry (a new id,
        the same params, ``inputResponses`` under the server's keys and ``requestState``
        echoed) is a valid request and is answered.""",
    ),
    _rule(
        "input-required.invalid",
        None,
        "none",
        "MUST",
        _input_required(Role.CLIENT),
        """2026-07-28: an ``input_required`` result for a method that cannot return one,
        with neither ``inputRequests`` nor ``requestState``, with a ``requestState`` that
        is not a string, or asking for an unknown kind of input, is a malformed response:
        dropped, unanswered.""",
    ),
    _rule(
        "input-required.undeclared-capability",
        None,
        "none",
        "MUST",
        _input_required(Role.CLIENT),
        """2026-07-28: ``inputRequests`` may only ask for what the request's
        ``clientCapabilities`` declared (elicitation, sampling, roots); a result asking
        for more is dropped, unanswered.""",
    ),
    _rule(
        "subscriptions.listen-ack-first",
        None,
        "none",
        "MUST",
        _listen,
        """2026-07-28: nothing goes out on a ``subscriptions/listen`` stream before its
        ``notifications/subscriptions/acknowledged``; a stream notification before the
        acknowledgement is dropped, unanswered.""",
    ),
    _rule(
        "subscriptions.not-opted-in",
        None,
        "none",
        "MUST",
        _listen,
        """2026-07-28: a stream notification the listen did not opt into and the
        acknowledgement did not grant (or naming no listen, or a resource not
        subscribed) is dropped, unanswered.""",
    ),
    _rule(
        "resources.updated-not-subscribed",
        None,
        "none",
        "implied",
        _legacy_subscriptions,
        """Initialize era: ``notifications/resources/updated`` only for a subscribed URI
        (or one under it); any other is dropped, unanswered.""",
    ),
)

_ALL_CASES: Final = frozenset((v, r) for v in VERSIONS for r in Role)

#: The rule of anything else our Connection refuses in what the peer sent.
OTHER_RULE: Final = "peer.invalid-message"

#: The probe's own rules, beside the catalog's.
PROBE_RULES: Final[Mapping[str, Rule]] = MappingProxyType(
    {
        r.name: r
        for r in (
            Rule(
                name="response.missing",
                summary="Every request gets exactly one answer, in time (the probe's --timeout) "
                "and before the peer exits; over HTTP, as a JSON body or an event stream.",
                code=None,
                reply="result",
                level="MUST",
                cases=_ALL_CASES,
            ),
            Rule(
                name="envelope.batch-accepted",
                summary="2025-03-26: a batch of requests MUST be accepted: each member is "
                "answered under its own id.",
                code=None,
                reply="result",
                level="MUST",
                cases=frozenset(
                    (v, r) for v, spec in VERSIONS.items() if spec.batches for r in Role
                ),
            ),
            Rule(
                name=OTHER_RULE,
                summary="Anything else our Connection refuses in what the peer sent (a malformed "
                "initialize result, a log message below the level set, ...).",
                code=None,
                reply="none",
                level="implied",
                cases=_ALL_CASES,
            ),
        )
    }
)

#: Every rule, by name, in catalog order.
RULES: Final[Mapping[str, Rule]] = MappingProxyType({r.name: r for r in _CATALOG})


def rule(name: str) -> Rule:
    """The rule called ``name``.

    :raises KeyError: no rule has that name (the message lists the known names).
    """
    try:
        return RULES[name]
    except KeyError:
        raise KeyError(f"unknown rule {name!r}; known rules: {', '.join(RULES)}") from None


def rules_for(version: str, receiver: Role) -> tuple[Rule, ...]:
    """The rules that apply when ``receiver`` speaks ``version``, in catalog order."""
    return tuple(r for r in RULES.values() if r.applies(version, receiver))
