"""The catalog of named protocol rules, shared by the near-miss strategies, the probe and
its report; the one table of what each rule rests on in the specification.

Each :class:`Rule` names one thing a receiver must do when its peer breaks (or comes close
to breaking) the protocol: the JSON-RPC error code to answer with, or that it must not
answer at all, or that it must answer normally. Names are dotted, lower-case and stable
(``envelope.parse-error``, ``ids.duplicate-request-id``, …): reports, tests and the
strategies of :mod:`mcp_sansio.testing` refer to rules by name only.

Every rule cites the text it rests on (:attr:`Rule.citations`): the document (the MCP
specification or JSON-RPC 2.0), the MCP versions whose text has the sentence, the section,
and the sentence itself, quoted as the text has it (bold, links and line breaks removed).
:attr:`Rule.level` is the keyword of that sentence as it applies to the rule (``"MUST"``,
``"MUST NOT"``, ``"SHOULD"``, ``"SHOULD NOT"``), ``"implied"`` where the rule follows from
the schema or from JSON-RPC 2.0 rather than from a sentence that states it, or ``"ours"``
where the text is silent and the rule is what our :class:`~mcp_sansio.Connection` does.
:attr:`Rule.binds` says whose duty the sentence states, and :attr:`Rule.severity` what a
finding against the receiver counts as; :meth:`Rule.sent_severity` is the same for a
finding against the side that *sent* the offending message (the rules the probe also judges
on what the peer itself sends).

A code is given only where the text names it for the situation (JSON-RPC 2.0's table of
pre-defined errors, or the MCP text); where it names none, :attr:`Rule.code` is ``None``
and any JSON-RPC error is accepted. ``docs/make_rules.py`` writes the docs page of rules
from this table at every build.

Where a rule applies is computed from the version tables of :mod:`mcp_sansio._versions`
(which methods exist, who sends them, which capability gates them, whether batches exist),
never from version strings: :attr:`Rule.cases` lists the ``(version, receiver role)``
pairs, and :attr:`Rule.eras` and :attr:`Rule.roles` summarise them.
"""

from __future__ import annotations

import re
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
    "keyword_level",
    "rule",
    "rules_for",
]

#: What the receiver must send back: ``"error"`` (an error response), ``"none"`` (nothing:
#: the message is dropped or ignored), ``"result"`` (a normal answer: the message is
#: valid and must be processed), ``"answer"`` (exactly one answer, a result or an error),
#: ``"close"`` (the receiver gives up the session).
Reply = Literal["error", "none", "result", "answer", "close"]

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

#: The documents a citation may come from.
MCP: Final = "MCP"
JSONRPC: Final = "JSON-RPC 2.0"

_KEYWORD: Final = re.compile(r"\b(MUST NOT|MUST|SHOULD NOT|SHOULD)\b")
_STRENGTH: Final[Mapping[str, int]] = {"MUST": 2, "MUST NOT": 2, "SHOULD": 1, "SHOULD NOT": 1}


def keyword_level(text: str) -> Level:
    """The strongest requirement keyword of ``text`` (upper case, as RFC 2119 writes them):
    ``"MUST"`` / ``"MUST NOT"`` before ``"SHOULD"`` / ``"SHOULD NOT"``, the first of equals;
    ``"implied"`` when it has none."""
    found: Level = "implied"
    for match in _KEYWORD.finditer(text):
        word = match.group(1)
        if found == "implied" or _STRENGTH[word] > _STRENGTH[found]:
            found = word  # type: ignore[assignment]
    return found


def _severity(level: Level) -> Severity:
    if level == "ours":
        return "note"
    return "failure" if level in ("MUST", "MUST NOT") else "warning"


@attrs.frozen
class Citation:
    """Where a rule's text is: a document, its section, and the sentence itself."""

    document: str
    """``"MCP"`` (the Model Context Protocol specification) or ``"JSON-RPC 2.0"``."""
    versions: tuple[str, ...]
    """The MCP versions whose text has the sentence (newest first); ``()`` for JSON-RPC.
    Only the versions the rule applies to are listed, unless the sentence is one version's
    text about others (then its own versions)."""
    section: str
    """The section, as its headings read (``"Basic > Lifecycle > Initialization"``; for
    the schema, ``"Schema > "`` and the definition)."""
    text: str
    """The sentence, quoted as the text has it (bold, links and line breaks removed; table
    cells separated by ``|``; `` … `` where list items or words in between are left out)."""

    def covers(self, version: str) -> bool:
        """Whether the sentence is in the text of ``version`` (JSON-RPC 2.0: always)."""
        return self.document == JSONRPC or version in self.versions


@attrs.frozen
class Rule:
    """One named protocol rule, and where it applies."""

    name: str
    """The stable dotted name, e.g. ``"ids.duplicate-request-id"``."""
    summary: str
    """What the rule says, in one or two sentences."""
    code: int | None
    """The JSON-RPC error code the receiver must answer with; ``None`` where the rule
    wants no error reply (``reply`` is not ``"error"``) or where the text names no code
    (any JSON-RPC error is accepted, and the report says which was given)."""
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
    probed: str = ""
    """What the probe does to check the rule (*sent*: it judges what the peer itself sends)."""
    sent_citations: tuple[Citation, ...] = ()
    """For a rule whose sentences bind the receiver (``binds="receiver"``) and that the
    probe also judges on what the peer sends: the sentences that forbid sending the
    offending message (see :meth:`sent_level`)."""

    @property
    def severity(self) -> Severity:
        """What a finding against the receiver counts as: a ``"failure"`` for a MUST or
        MUST NOT of the receiver's, a ``"warning"`` for a SHOULD, SHOULD NOT or implied
        rule of the receiver's, a ``"note"`` when the duty is the sender's or the text is
        silent."""
        if self.binds == "sender" or self.level == "ours":
            return "note"
        return _severity(self.level)

    def sent_level(self, version: str) -> Level:
        """How strongly the text of ``version`` forbids *sending* the offending message:
        :attr:`level` when the cited sentences bind the sender; else the strongest keyword
        of the :attr:`sent_citations` that cover ``version`` (``"implied"`` when none does:
        the message breaks the schema or JSON-RPC, no sentence); ``"ours"`` stays
        ``"ours"``."""
        if self.level == "ours":
            return "ours"
        if self.binds == "sender":
            return self.level
        found: Level = "implied"
        for citation in self.sent_citations:
            if citation.covers(version):
                level = keyword_level(citation.text)
                if found == "implied" or (
                    level != "implied" and _STRENGTH[level] > _STRENGTH[found]
                ):
                    found = level
        return found

    def sent_severity(self, version: str) -> Severity:
        """What a finding counts as against the side that *sent* the offending message (the
        probe's checks of what the peer itself sends): a ``"failure"`` for a MUST or MUST
        NOT of :meth:`sent_level`, a ``"warning"`` for a SHOULD, SHOULD NOT or implied one,
        a ``"note"`` for ``"ours"``. (``response.missing`` judges the receiver of a request
        even when found passively: use :attr:`severity` for it.)"""
        return _severity(self.sent_level(version))

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


# ---------------------------------------------------------------------------- citations
# The sentences several rules rest on. Each lists every version whose text has it; a rule
# keeps only the versions it applies to (see _rule).

_V: Final = ("2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")


def _mcp(versions: tuple[str, ...], section: str, text: str) -> Citation:
    return Citation(MCP, versions, section, " ".join(text.split()))


def _rpc(section: str, text: str) -> Citation:
    return Citation(JSONRPC, (), section, " ".join(text.split()))


# JSON-RPC 2.0 (https://www.jsonrpc.org/specification).
_RPC_REPLY: Final = _rpc(
    "5 Response object",
    "When a rpc call is made, the Server MUST reply with a Response, except for in the case "
    "of Notifications.",
)
_RPC_ID: Final = _rpc(
    "5 Response object",
    "id: This member is REQUIRED. It MUST be the same as the value of the id member in the "
    "Request Object. If there was an error in detecting the id in the Request object (e.g. "
    "Parse error/Invalid Request), it MUST be Null.",
)
_RPC_ERROR: Final = _rpc(
    "5.1 Error object",
    "When a rpc call encounters an error, the Response Object MUST contain the error member "
    "with a value that is a Object with the following members: … code: A Number that "
    "indicates the error type that occurred.",
)
_RPC_PARSE: Final = _rpc(
    "5.1 Error object",
    "-32700 | Parse error | Invalid JSON was received by the server. An error occurred on the "
    "server while parsing the JSON text.",
)
_RPC_INVALID: Final = _rpc(
    "5.1 Error object", "-32600 | Invalid Request | The JSON sent is not a valid Request object."
)
_RPC_NOT_FOUND: Final = _rpc(
    "5.1 Error object",
    "-32601 | Method not found | The method does not exist / is not available.",
)
_RPC_PARAMS: Final = _rpc(
    "5.1 Error object", "-32602 | Invalid params | Invalid method parameter(s)."
)
_RPC_NOTIFICATION: Final = _rpc(
    "4.1 Notification",
    "The Server MUST NOT reply to a Notification, including those that are within a batch request.",
)
_RPC_CLIENT: Final = _rpc(
    "2 Conventions",
    "The Client is defined as the origin of Request objects and the handler of Response objects.",
)
_RPC_RESULT_OR_ERROR: Final = _rpc(
    "5 Response object",
    "Either the result member or error member MUST be included, but both members MUST NOT be "
    "included.",
)
_RPC_SAME_ID: Final = _rpc(
    "4 Request object",
    "The Server MUST reply with the same value in the Response object if included.",
)

# MCP: messages.
_ALL_JSONRPC: Final = (
    _mcp(
        ("2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"),
        "Basic > Overview > Messages",
        "All messages between MCP clients and servers MUST follow the JSON-RPC 2.0 specification.",
    ),
    _mcp(
        ("2024-11-05",),
        "Basic > Overview",
        "All messages between MCP clients and servers MUST follow the JSON-RPC 2.0 specification.",
    ),
    _mcp(
        ("2024-11-05",),
        "Basic > Messages",
        "All messages in MCP MUST follow the JSON-RPC 2.0 specification.",
    ),
)
_REQUEST_ID: Final = (
    _mcp(
        ("2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"),
        "Basic > Overview > Messages > Requests",
        "Requests MUST include a string or integer ID.",
    ),
    _mcp(
        ("2024-11-05",),
        "Basic > Messages > Requests",
        "Requests MUST include a string or integer ID.",
    ),
)
_NULL_ID: Final = (
    _mcp(
        ("2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"),
        "Basic > Overview > Messages > Requests",
        "Unlike base JSON-RPC, the ID MUST NOT be `null`.",
    ),
    _mcp(
        ("2024-11-05",),
        "Basic > Messages > Requests",
        "Unlike base JSON-RPC, the ID MUST NOT be `null`.",
    ),
)
_ERROR_ID: Final = _mcp(
    ("2026-07-28", "2025-11-25"),
    "Basic > Overview > Messages > Responses > Error Responses",
    "Error responses MUST include the same ID as the request they correspond to (except in "
    "error cases where the ID could not be read due a malformed request).",
)
_RESPONSE_ID: Final = (
    _mcp(
        ("2026-07-28", "2025-11-25"),
        "Basic > Overview > Messages > Responses > Result Responses",
        "Result responses MUST include the same ID as the request they correspond to.",
    ),
    _mcp(
        ("2025-06-18", "2025-03-26"),
        "Basic > Overview > Messages > Responses",
        "Responses MUST include the same ID as the request they correspond to.",
    ),
    _mcp(
        ("2024-11-05",),
        "Basic > Messages > Responses",
        "Responses MUST include the same ID as the request they correspond to.",
    ),
)
_RESPONSES_ANSWER_REQUESTS: Final = (
    _mcp(
        ("2026-07-28", "2025-11-25"),
        "Basic > Overview > Messages > Responses",
        "Responses are sent in reply to requests, containing either the result or error of "
        "the operation.",
    ),
    _mcp(
        ("2025-06-18", "2025-03-26"),
        "Basic > Overview > Messages > Responses",
        "Responses are sent in reply to requests, containing the result or error of the operation.",
    ),
    _mcp(
        ("2024-11-05",), "Basic > Messages > Responses", "Responses are sent in reply to requests."
    ),
)
_NO_RESPONSE: Final = (
    _mcp(
        ("2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"),
        "Basic > Overview > Messages > Notifications",
        "The receiver MUST NOT send a response.",
    ),
    _mcp(
        ("2024-11-05",),
        "Basic > Messages > Notifications",
        "Notifications are sent from the client to the server or vice versa. They do not "
        "expect a response.",
    ),
    _RPC_NOTIFICATION,
)
_SOURCE_OF_TRUTH: Final = _mcp(
    _V,
    "Basic > Overview > Schema",
    "This is the source of truth for all protocol messages and structures.",
)

# MCP: the lifecycle of the initialize era.
_LEGACY: Final = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
_INITIALIZATION: Final = "Basic > Lifecycle > Lifecycle Phases > Initialization"
_INIT_FIRST: Final = _mcp(
    _LEGACY,
    _INITIALIZATION,
    "The initialization phase MUST be the first interaction between client and server.",
)
_CLIENT_WAITS: Final = _mcp(
    _LEGACY,
    _INITIALIZATION,
    "The client SHOULD NOT send requests other than pings before the server has responded to "
    "the `initialize` request.",
)
_SERVER_WAITS: Final = _mcp(
    _LEGACY,
    _INITIALIZATION,
    "The server SHOULD NOT send requests other than pings and logging before receiving the "
    "`initialized` notification.",
)
_OPERATION: Final = "Basic > Lifecycle > Lifecycle Phases > Operation"
_RESPECT_VERSION: Final = (
    _mcp(
        ("2025-11-25", "2025-06-18"),
        _OPERATION,
        "Both parties MUST: … Respect the negotiated protocol version",
    ),
    _mcp(
        ("2025-03-26", "2024-11-05"),
        _OPERATION,
        "Both parties SHOULD: … Respect the negotiated protocol version",
    ),
)
_NEGOTIATED_ONLY: Final = (
    _mcp(
        ("2025-11-25", "2025-06-18"),
        _OPERATION,
        "Both parties MUST: … Only use capabilities that were successfully negotiated",
    ),
    _mcp(
        ("2025-03-26", "2024-11-05"),
        _OPERATION,
        "Both parties SHOULD: … Only use capabilities that were successfully negotiated",
    ),
)

# MCP 2026-07-28: _meta.
_META: Final = "Basic > Overview > General fields > `_meta`"
_META_REQUIRED: Final = (
    _mcp(
        ("2026-07-28",),
        _META,
        "Client requests carry the following `io.modelcontextprotocol/*` fields in `_meta`; "
        "fields marked as required MUST be included on every request.",
    ),
    _mcp(
        ("2026-07-28",),
        _META,
        "A request missing any required field is malformed; the server MUST reject it with "
        "JSON-RPC error code `-32602` (Invalid params).",
    ),
)
_METHOD_NOT_FOUND_2026: Final = _mcp(
    ("2026-07-28",),
    "Schema > MethodNotFoundError",
    "A JSON-RPC error indicating that the requested method does not exist or is not available.",
)
_GATED_2026: Final = _mcp(
    ("2026-07-28",),
    "Schema > MethodNotFoundError",
    "In MCP, a server returns this error when a client invokes a method the server does not "
    "implement — either a genuinely unknown method, or one gated behind a server capability "
    "the server did not advertise (e.g., calling `prompts/list` when the `prompts` "
    "capability was not advertised).",
)
_MRTR: Final = "Basic > Patterns > Multi Round-Trip Requests > Multi Round-Trip Requests"
_MRTR_SERVER: Final = _MRTR + " > Basic Workflow > Server Requirements (Basic Workflow)"
_MRTR_CLIENT: Final = _MRTR + " > Basic Workflow > Client Requirements (Basic Workflow)"


_INVALID: Final = int(ErrorCode.INVALID_REQUEST)
_NOT_FOUND: Final = int(ErrorCode.METHOD_NOT_FOUND)
_PARAMS: Final = int(ErrorCode.INVALID_PARAMS)


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


def _rule(
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


_CATALOG: Final = (
    # ------------------------------------------------------------------ envelope
    _rule(
        "envelope.parse-error",
        code=int(ErrorCode.PARSE_ERROR),
        reply="error",
        level="MUST",
        where=_always,
        summary="""A line that is not JSON (cut short, a trailing comma, single quotes, invalid
        UTF-8, …) is answered with -32700 and ``"id": null``: the reply JSON-RPC requires,
        with the code its table defines for invalid JSON.""",
        probed="""a line cut short, a trailing comma, single quotes, invalid UTF-8, a leading
        zero; *sent*: every line the peer writes""",
        citations=(
            _RPC_REPLY,
            _RPC_ID,
            _RPC_ERROR,
            _RPC_PARSE,
            _rpc(
                "7 Examples",
                """rpc call with invalid JSON: --> {"jsonrpc": "2.0", "method": "foobar,
                "params": "bar", "baz] <-- {"jsonrpc": "2.0", "error": {"code": -32700,
                "message": "Parse error"}, "id": null}""",
            ),
            _mcp(
                ("2026-07-28",),
                "Schema > ParseError",
                """A JSON-RPC error indicating that invalid JSON was received by the server.
                This error is returned when the server cannot parse the JSON text of a
                message.""",
            ),
            _ERROR_ID,
        ),
        sent=(
            *_ALL_JSONRPC,
            _mcp(
                _V,
                "Basic > Transports > stdio",
                "The server MUST NOT write anything to its `stdout` that is not a valid MCP "
                "message.",
            ),
            _mcp(
                _V,
                "Basic > Transports > stdio",
                "The client MUST NOT write anything to the server's `stdin` that is not a "
                "valid MCP message.",
            ),
        ),
    ),
    _rule(
        "envelope.invalid-request",
        code=_INVALID,
        reply="error",
        level="MUST",
        where=_always,
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
            _RPC_REPLY,
            _RPC_ID,
            _RPC_ERROR,
            _RPC_INVALID,
            _rpc(
                "4 Request object",
                "jsonrpc: A String specifying the version of the JSON-RPC protocol. MUST be "
                'exactly "2.0".',
            ),
            _rpc(
                "4 Request object",
                "method: A String containing the name of the method to be invoked.",
            ),
            _rpc(
                "4 Request object",
                "id: An identifier established by the Client that MUST contain a String, "
                "Number, or NULL value if included.",
            ),
            _rpc(
                "7 Examples",
                """rpc call with invalid Request object: --> {"jsonrpc": "2.0", "method": 1,
                "params": "bar"} <-- {"jsonrpc": "2.0", "error": {"code": -32600, "message":
                "Invalid Request"}, "id": null}""",
            ),
            *_REQUEST_ID,
            *_NULL_ID,
            _mcp(
                ("2026-07-28",),
                "Schema > InvalidRequestError",
                """A JSON-RPC error indicating that the request is not a valid request object.
                This error is returned when the message structure does not conform to the
                JSON-RPC 2.0 specification requirements for a request (e.g., missing required
                fields like `jsonrpc` or `method`, or using invalid types for these
                fields).""",
            ),
            _ERROR_ID,
        ),
        sent=(*_ALL_JSONRPC, *_REQUEST_ID, *_NULL_ID),
    ),
    _rule(
        "envelope.invalid-response",
        code=None,
        reply="none",
        level="implied",
        where=_always,
        summary="""A malformed response (both ``result`` and ``error``; a ``result`` that is
        not an object; an ``error`` without an integer ``code`` or a string ``message``; a
        result without a valid ``id``) is never answered: only requests are (a reply would
        be taken for an answer to one of the peer's own requests).""",
        probed="""a malformed response (result and error, a non-object result, no code, no
        id); *sent*: the peer's own responses""",
        citations=(_RPC_CLIENT, _RPC_REPLY, *_RESPONSES_ANSWER_REQUESTS),
        sent=(
            _RPC_RESULT_OR_ERROR,
            _mcp(
                ("2026-07-28", "2025-11-25"),
                "Basic > Overview > Messages > Responses > Result Responses",
                "Result responses MUST include a `result` field.",
            ),
            _mcp(
                ("2026-07-28", "2025-11-25"),
                "Basic > Overview > Messages > Responses > Error Responses",
                "Error responses MUST include an `error` field with a `code` and `message`.",
            ),
            _mcp(
                ("2025-06-18", "2025-03-26"),
                "Basic > Overview > Messages > Responses",
                "Either a `result` or an `error` MUST be set. A response MUST NOT set both.",
            ),
            _mcp(
                ("2025-06-18", "2025-03-26"),
                "Basic > Overview > Messages > Responses",
                "Results MAY follow any JSON object structure, while errors MUST include an "
                "error code and message at minimum.",
            ),
            _mcp(
                ("2024-11-05",),
                "Basic > Messages > Responses",
                "Either a `result` or an `error` MUST be set. A response MUST NOT set both.",
            ),
            *_RESPONSE_ID,
        ),
    ),
    _rule(
        "envelope.batch-not-allowed",
        code=_INVALID,
        reply="error",
        level="implied",
        where=_no_batches,
        summary="""In every version without JSON-RPC batches (all but 2025-03-26), a JSON array
        is not a message: -32600 with ``"id": null``, and none of its members is processed.
        No sentence says so: the schema's messages exclude arrays (2024-11-05 never had
        batches; 2025-06-18 removed them).""",
        probed="an array of pings where the version has no batches; none may be answered",
        citations=(
            _RPC_INVALID,
            _mcp(
                ("2025-06-18", "2024-11-05"),
                "Schema > JSONRPCMessage",
                "export type JSONRPCMessage = JSONRPCRequest | JSONRPCNotification | "
                "JSONRPCResponse | JSONRPCError;",
            ),
            _mcp(
                ("2026-07-28", "2025-11-25"),
                "Schema > JSONRPCMessage",
                "export type JSONRPCMessage = JSONRPCRequest | JSONRPCNotification | "
                "JSONRPCResponse;",
            ),
            _mcp(
                ("2025-06-18",),
                "Key Changes > Major changes",
                "Remove support for JSON-RPC batching",
            ),
            _mcp(
                ("2025-11-25", "2025-06-18"),
                "Basic > Transports > stdio",
                "Messages are individual JSON-RPC requests, notifications, or responses.",
            ),
            _mcp(
                ("2025-11-25", "2025-06-18"),
                "Basic > Transports > Streamable HTTP > Sending Messages to the Server",
                "The body of the POST request MUST be a single JSON-RPC _request_, "
                "_notification_, or _response_.",
            ),
            _mcp(
                ("2026-07-28",),
                "Basic > Transports > stdio",
                "Each message is a single JSON-RPC request, notification, or response.",
            ),
            _mcp(
                ("2026-07-28",),
                "Basic > Transports > Streamable HTTP > Sending Messages",
                "The body of the HTTP POST MUST be a single JSON-RPC _request_ or _notification_.",
            ),
        ),
        about_others=(
            _mcp(
                ("2025-03-26",),
                _INITIALIZATION,
                "This also permits backwards compatibility with prior protocol versions that "
                "do not explicitly support JSON-RPC batches.",
            ),
        ),
    ),
    _rule(
        "envelope.empty-batch",
        code=_INVALID,
        reply="error",
        level="MUST",
        where=_batches,
        summary="""In 2025-03-26, an empty array is answered with one -32600 error (not an
        array), ``"id": null``.""",
        probed="``[]`` in 2025-03-26",
        citations=(
            _rpc(
                "6 Batch",
                "If the batch rpc call itself fails to be recognized as an valid JSON or as an "
                "Array with at least one value, the response from the Server MUST be a single "
                "Response object.",
            ),
            _rpc(
                "7 Examples",
                """rpc call with an empty Array: --> [] <-- {"jsonrpc": "2.0", "error":
                {"code": -32600, "message": "Invalid Request"}, "id": null}""",
            ),
            _mcp(
                ("2025-03-26",),
                "Basic > Overview > Messages > Batching",
                "MCP implementations MAY support sending JSON-RPC batches, but MUST support "
                "receiving JSON-RPC batches.",
            ),
        ),
    ),
    _rule(
        "envelope.batch-mixed",
        code=_INVALID,
        reply="error",
        level="implied",
        where=_batches,
        summary="""In 2025-03-26, a batch holds requests and notifications, or responses, never
        both (the schema's ``JSONRPCBatchRequest`` / ``JSONRPCBatchResponse``): a mixed one
        is not a message, and gets -32600 with ``"id": null``. (JSON-RPC 2.0 alone would
        answer each member, -32600 for the one that is not a request: the schema, not a
        sentence, makes the whole batch invalid.)""",
        probed="a request and a response in one 2025-03-26 batch",
        citations=(
            _RPC_INVALID,
            _mcp(
                ("2025-03-26",),
                "Schema > JSONRPCBatchRequest",
                "export type JSONRPCBatchRequest = (JSONRPCRequest | JSONRPCNotification)[];",
            ),
            _mcp(
                ("2025-03-26",),
                "Schema > JSONRPCBatchResponse",
                "export type JSONRPCBatchResponse = (JSONRPCResponse | JSONRPCError)[];",
            ),
            _mcp(
                ("2025-03-26",),
                "Basic > Transports > stdio",
                "Messages may be JSON-RPC requests, notifications, responses—or a JSON-RPC "
                "batch containing one or more requests and/or notifications.",
            ),
            _mcp(
                ("2025-03-26",),
                "Basic > Transports > Streamable HTTP > Sending Messages to the Server",
                "The body of the POST request MUST be one of the following: … An array "
                "batching one or more _requests and/or notifications_ … An array batching one "
                "or more _responses_",
            ),
        ),
    ),
    _rule(
        "envelope.oversized-message",
        code=_INVALID,
        reply="error",
        level="ours",
        where=_receives_requests,
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
    _rule(
        "lifecycle.request-before-initialize",
        code=None,
        reply="error",
        level="MUST",
        where=_legacy(Role.SERVER),
        binds="sender",
        summary="""Initialize era: the initialization phase is the first interaction, and the
        client MUST begin it: a request other than ``ping`` before ``initialize`` breaks the
        client's duty, not the server's. A server may refuse it with any error (the text names
        no code; our Connection answers -32600) or serve it: a note, never charged to it.""",
        probed="a list request before ``initialize``; *sent*: the client's first request",
        citations=(
            _INIT_FIRST,
            _mcp(
                _LEGACY,
                _INITIALIZATION,
                "The client MUST initiate this phase by sending an `initialize` request "
                "containing:",
            ),
            _CLIENT_WAITS,
        ),
    ),
    _rule(
        "lifecycle.request-in-initialize-window",
        code=None,
        reply="result",
        level="implied",
        where=_legacy(Role.SERVER),
        summary="""Initialize era: once the server has answered ``initialize``, the client may
        send any request, before its ``notifications/initialized`` too: the text restricts
        the client's requests only until that answer (it is the server that waits for
        ``notifications/initialized``), so such a request is valid and served. No sentence
        grants it in so many words: it follows from where the SHOULD NOT ends.""",
        probed="""a list request between the ``initialize`` result and
        ``notifications/initialized``: it must be answered with a result""",
        citations=(_CLIENT_WAITS, _SERVER_WAITS),
    ),
    _rule(
        "lifecycle.server-request-before-initialized",
        code=None,
        reply="error",
        level="SHOULD NOT",
        where=_legacy(Role.CLIENT),
        binds="sender",
        summary="""Initialize era: the server does not send requests other than ``ping`` (and
        logging) before it has received ``notifications/initialized``. The duty is the
        server's; a client may refuse such a request (with an error of any code; our
        Connection does under ``strict``) or serve it (our Connection does by default, once the
        initialize result is out).""",
        probed="""*sent*: the server's requests before the probe's
        ``notifications/initialized``""",
        citations=(_SERVER_WAITS,),
    ),
    _rule(
        "lifecycle.notification-before-initialized",
        code=None,
        reply="none",
        level="MUST NOT",
        where=_legacy(Role.CLIENT, Role.SERVER),
        summary="""Initialize era: a notification sent before the handshake is over is never
        answered. The lifecycle's sentences restrict requests, not notifications: between
        the ``initialize`` result and ``notifications/initialized`` a notification the
        capabilities allow is valid; one the capabilities do not allow is dropped
        (``capability.undeclared-notification``); neither gets a reply.""",
        probed="""``notifications/roots/list_changed`` between the ``initialize`` result and
        ``notifications/initialized``: nothing may answer it""",
        citations=(*_NO_RESPONSE, _CLIENT_WAITS, _SERVER_WAITS),
    ),
    _rule(
        "lifecycle.second-initialize",
        code=None,
        reply="error",
        level="implied",
        where=_legacy(Role.SERVER),
        summary="""Initialize era: a session is initialized once; a second ``initialize`` (while
        the first is in flight or after it) is refused with an error (no sentence says so,
        nor names a code: it follows from the one initialization phase and the negotiated
        version being kept).""",
        probed="``initialize`` in an initialized session; *sent*: the client's requests",
        citations=(_INIT_FIRST, *_RESPECT_VERSION),
    ),
    _rule(
        "lifecycle.initialize-version",
        code=None,
        reply="result",
        level="MUST",
        where=_legacy(Role.SERVER),
        summary="""Initialize era: ``initialize`` asking for a version the server does not
        support is not an error: the server answers with a version it supports (it echoes
        the requested one only when it supports it).""",
        probed="""``initialize`` for ``1999-01-01``: the result must name a version the server
        offers""",
        citations=(
            _mcp(
                _LEGACY,
                _INITIALIZATION + " > Version Negotiation",
                "If the server supports the requested protocol version, it MUST respond with "
                "the same version. Otherwise, the server MUST respond with another protocol "
                "version it supports.",
            ),
            _mcp(
                _LEGACY,
                _INITIALIZATION,
                "The server MUST respond with its own capabilities and information:",
            ),
        ),
    ),
    _rule(
        "lifecycle.unsupported-version-result",
        code=None,
        reply="close",
        level="SHOULD",
        where=_legacy(Role.CLIENT),
        summary="""Initialize era: an ``initialize`` result naming a version the client does not
        speak ends the session: the client disconnects.""",
        probed="""(``--client``) ``initialize`` answered with ``1999-01-01``: the client must
        close""",
        citations=(
            _mcp(
                _LEGACY,
                _INITIALIZATION + " > Version Negotiation",
                "If the client does not support the version in the server's response, it "
                "SHOULD disconnect.",
            ),
        ),
    ),
    _rule(
        "lifecycle.initialize-stateless",
        code=None,
        reply="error",
        level="MUST",
        where=_stateless(Role.SERVER),
        summary="""A server that speaks only 2026-07-28 answers a legacy ``initialize`` with an
        error (the code is implementation-defined; it SHOULD name the versions it
        supports).""",
        probed="a legacy ``initialize`` to a server of 2026-07-28 only",
        citations=(
            _META_REQUIRED[1],
            _mcp(
                ("2026-07-28",),
                "Basic > Versioning and Compatibility > Backward Compatibility with "
                "Initialization-Based Versions > Compatibility Matrix",
                "Fails. stdio: the server rejects `initialize` with a JSON-RPC error; the "
                "exact code is implementation-defined (`initialize` is an unknown method and "
                "the request also lacks the required `_meta` fields).",
            ),
            _mcp(
                ("2026-07-28",),
                "Basic > Versioning and Compatibility > Backward Compatibility with "
                "Initialization-Based Versions",
                "A server that supports only modern versions SHOULD name the protocol versions "
                "it supports in any error it returns to an `initialize` request, on any "
                "transport: legacy clients have no fall-forward mechanism, and this message "
                "may be the only diagnostic they can surface to users.",
            ),
        ),
    ),
    # ------------------------------------------------------------------ ids
    _rule(
        "ids.duplicate-request-id",
        code=None,
        reply="error",
        level="MUST NOT",
        where=_receives_requests,
        binds="sender",
        summary="""A request id is never reused by the same sender: in the initialize era for
        the whole session, in 2026-07-28 while a request with that id is in flight. The duty
        is the sender's; our Connection refuses the reuse with an error (-32600, in
        2026-07-28 to ``"id": null`` so that it cannot be taken for the other request's
        answer), but the text names no reply.""",
        probed="""``ping`` reusing the id of an answered request (initialize era); *sent*: the
        client's ids""",
        citations=(
            _mcp(
                ("2025-11-25", "2025-06-18", "2025-03-26"),
                "Basic > Overview > Messages > Requests",
                "The request ID MUST NOT have been previously used by the requestor within the "
                "same session.",
            ),
            _mcp(
                ("2024-11-05",),
                "Basic > Messages > Requests",
                "The request ID MUST NOT have been previously used by the requestor within the "
                "same session.",
            ),
            _mcp(
                ("2026-07-28",),
                "Basic > Overview > Messages > Requests",
                "The request ID MUST NOT match the ID of any other request the sender has "
                "issued and not yet received a response for.",
            ),
        ),
    ),
    _rule(
        "ids.string-and-int-are-different",
        code=None,
        reply="result",
        level="implied",
        where=_receives_requests,
        summary="""``7`` and ``"7"`` are different ids: a request whose id equals another's only
        after conversion is a new request, answered normally under its own id (of its own
        JSON type).""",
        probed='``ping`` with id ``"0"`` after id ``0``',
        citations=(_RPC_ID, _RPC_SAME_ID, *_REQUEST_ID, *_RESPONSE_ID),
    ),
    _rule(
        "response.unknown-id",
        code=None,
        reply="none",
        level="implied",
        where=_always,
        summary="""A response whose id answers no request in flight (never sent, already
        answered, or the same digits of another JSON type) is dropped: no reply, no
        crash.""",
        probed="a response to a request never sent; *sent*: every answer of the peer",
        citations=(_RPC_CLIENT, _RPC_REPLY, *_RESPONSES_ANSWER_REQUESTS),
        sent=(_RPC_ID, *_RESPONSE_ID),
    ),
    # ------------------------------------------------------------------ capabilities
    _rule(
        "capability.undeclared-server-capability",
        code=_NOT_FOUND,
        reply="error",
        level="SHOULD",
        where=lambda spec, receiver: (
            receiver is Role.SERVER and _receives_gated_requests(spec, receiver)
        ),
        summary="""A client request for a feature the server did not declare (``tools/call``
        without ``tools``, ``resources/subscribe`` without ``resources.subscribe``, …) gets
        -32601 (JSON-RPC's "not available"; the text says SHOULD where it says it).""",
        probed="a request for a capability the server did not declare",
        citations=(
            _RPC_NOT_FOUND,
            _mcp(
                ("2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"),
                "Server > Utilities > Completion > Error Handling",
                "Servers SHOULD return standard JSON-RPC errors for common failure cases: … "
                "Method not found: `-32601` (Capability not supported)",
            ),
            _GATED_2026,
        ),
    ),
    _rule(
        "capability.undeclared-client-capability",
        code=_NOT_FOUND,
        reply="error",
        level="SHOULD",
        where=lambda spec, receiver: (
            receiver is Role.CLIENT and _receives_gated_requests(spec, receiver)
        ),
        summary="""Initialize era: a server request for a feature the client did not declare
        (``sampling/createMessage`` without ``sampling``, ``roots/list`` without ``roots``,
        ``elicitation/create`` without ``elicitation``, tasks without ``tasks``) gets -32601
        (a SHOULD, said of roots; sending it is a MUST NOT of the server's from 2025-06-18, a
        SHOULD NOT before).""",
        probed="*sent*: the server asks nothing the probe did not declare (it declares nothing)",
        citations=(
            _RPC_NOT_FOUND,
            _mcp(
                _LEGACY,
                "Client > Roots > Error Handling",
                "Clients SHOULD return standard JSON-RPC errors for common failure cases: … "
                "Client does not support roots: `-32601` (Method not found)",
            ),
        ),
        sent=_NEGOTIATED_ONLY,
    ),
    _rule(
        "capability.undeclared-client-subcapability",
        code=_PARAMS,
        reply="error",
        level="MUST",
        where=_subcapabilities,
        summary="""2025-11-25: elicitation in a mode the client did not declare
        (``elicitation.url`` / ``.form``) gets -32602; sampling with tools without
        ``sampling.tools`` gets an error (the text names no code for it). (Sampling with
        context without ``sampling.context`` is only a SHOULD NOT of the server's: a client
        may serve it.)""",
        probed="*sent*: elicitation modes and sampling features",
        citations=(
            _mcp(
                ("2025-11-25",),
                "Client > Elicitation > Error Handling",
                "Clients MUST return standard JSON-RPC errors for common failure cases: … "
                "Server sends an `elicitation/create` request with a mode not declared in "
                "client capabilities: `-32602` (Invalid params)",
            ),
            _mcp(
                ("2025-11-25",),
                "Schema > CreateMessageRequestParams",
                "The client MUST return an error if this field is provided but "
                "ClientCapabilities.sampling.tools is not declared.",
            ),
            _mcp(
                ("2025-11-25",),
                "Client > Elicitation > Capabilities",
                "Servers MUST NOT send elicitation requests with modes that are not supported "
                "by the client.",
            ),
            _mcp(
                ("2025-11-25",),
                "Client > Sampling > Tools in Sampling",
                "Servers MUST NOT send tool-enabled sampling requests to Clients that have not "
                "declared support for tool use via the `sampling.tools` capability.",
            ),
            _mcp(
                ("2025-11-25",),
                "Schema > ClientCapabilities",
                'If not declared, servers SHOULD only use `includeContext: "none"` (or omit it).',
            ),
        ),
    ),
    _rule(
        "capability.undeclared-notification",
        code=None,
        reply="none",
        level="MUST NOT",
        where=_receives_gated_notifications,
        summary="""A notification gated by a capability its sender did not declare
        (``notifications/tools/list_changed`` without ``tools.listChanged``,
        ``notifications/message`` without ``logging``, ``notifications/roots/list_changed``
        without ``roots.listChanged``) is never answered (our Connection drops it; in
        2024-11-05 and 2025-03-26, where only the sub-capability is missing, it takes it unless
        ``strict``). Sending it is a MUST NOT from 2025-06-18, a SHOULD NOT before.""",
        probed="``notifications/roots/list_changed`` undeclared; *sent*: the peer's notifications",
        citations=_NO_RESPONSE,
        sent=_NEGOTIATED_ONLY,
    ),
    # ------------------------------------------------------------------ methods and params
    _rule(
        "method.unknown",
        code=_NOT_FOUND,
        reply="error",
        level="MUST",
        where=_always,
        summary="""A request for a method the negotiated version does not have (an invented
        name, a method of another version, a notification's name) gets -32601.""",
        probed="an invented method name; *sent*: the methods of the peer's requests",
        citations=(
            _RPC_REPLY,
            _RPC_ERROR,
            _RPC_NOT_FOUND,
            _rpc(
                "7 Examples",
                """rpc call of non-existent method: --> {"jsonrpc": "2.0", "method": "foobar",
                "id": "1"} <-- {"jsonrpc": "2.0", "error": {"code": -32601, "message": "Method
                not found"}, "id": "1"}""",
            ),
            _METHOD_NOT_FOUND_2026,
            _GATED_2026,
        ),
        sent=_RESPECT_VERSION,
    ),
    _rule(
        "method.unknown-notification",
        code=None,
        reply="none",
        level="MUST NOT",
        where=_always,
        summary="""A notification the negotiated version does not have (an invented name, a
        request's name) is never answered: notifications never are (our Connection drops
        it).""",
        probed="an invented notification",
        citations=_NO_RESPONSE,
    ),
    _rule(
        "method.wrong-direction",
        code=_NOT_FOUND,
        reply="error",
        level="implied",
        where=_wrong_direction,
        summary="""A request only the other side may send (a server sending ``tools/call``, a
        client sending ``sampling/createMessage``) gets -32601: the method is not available
        to its sender (no sentence says so; the schema lists who sends each request).""",
        probed="a request only a server sends (``elicitation/create``, ``roots/list``, ...)",
        citations=(_RPC_NOT_FOUND, _METHOD_NOT_FOUND_2026),
    ),
    _rule(
        "params.invalid",
        code=_PARAMS,
        reply="error",
        level="SHOULD",
        where=_receives_requests,
        summary="""A request whose params lack a property the schema requires, or give it the
        wrong JSON type (``tools/call`` without ``name``, ``resources/read`` without ``uri``,
        ``initialize`` without ``capabilities``, ``logging/setLevel`` with a number, …) gets
        -32602 (the text says SHOULD where it names the code). (Unknown tools and prompts are
        -32602 too; judging those needs the server's own lists.)""",
        probed="""``logging/setLevel`` with a bad level, ``resources/subscribe`` without a
        string uri, ``tools/call`` without a name, ``subscriptions/listen`` with bad
        notifications; *sent*: the params of the client's requests""",
        citations=(
            _RPC_PARAMS,
            _mcp(
                _LEGACY,
                "Server > Utilities > Logging > Error Handling",
                "Servers SHOULD return standard JSON-RPC errors for common failure cases: … "
                "Invalid log level: `-32602` (Invalid params)",
            ),
            _mcp(
                _V,
                "Server > Prompts > Error Handling",
                "Servers SHOULD return standard JSON-RPC errors for common failure cases: … "
                "Missing required arguments: `-32602` (Invalid params)",
            ),
            _mcp(
                ("2026-07-28",),
                "Schema > InvalidParamsError",
                "A JSON-RPC error indicating that the method parameters are invalid or malformed.",
            ),
            _mcp(
                ("2025-11-25",),
                "Server > Tools > Error Handling",
                "Protocol Errors: Standard JSON-RPC errors for issues like: … Malformed "
                "requests (requests that fail to satisfy CallToolRequest schema)",
            ),
            _mcp(
                ("2026-07-28",),
                "Server > Tools > Error Handling",
                "Protocol Errors indicate issues with the request structure itself that models "
                "are less likely to be able to fix: … Malformed requests (requests that fail "
                "to satisfy CallToolRequest schema)",
            ),
        ),
        sent=(_SOURCE_OF_TRUTH,),
    ),
    # ------------------------------------------------------------------ progress, cancel
    _rule(
        "progress.not-increasing",
        code=None,
        reply="none",
        level="MUST",
        where=_progress,
        binds="sender",
        summary="""``progress`` MUST increase with each notification for a token: the duty of
        the side that sends progress. A value equal to or below the last one is never
        answered (our Connection drops it).""",
        probed="*sent*: the progress of a tool named for it",
        citations=(
            _mcp(
                ("2026-07-28",),
                "Basic > Patterns > Progress > Progress Flow",
                "The `progress` value MUST increase with each notification, even if the total "
                "is unknown.",
            ),
            _mcp(
                _LEGACY,
                "Basic > Utilities > Progress > Progress Flow",
                "The `progress` value MUST increase with each notification, even if the total "
                "is unknown.",
            ),
        ),
    ),
    _rule(
        "progress.unknown-token",
        code=None,
        reply="none",
        level="MUST",
        where=_progress,
        binds="sender",
        summary="""Progress may only name the token of a request of the receiver's in flight
        (not one never sent, nor one already answered): the duty of the side that sends it.
        Anything else is never answered (our Connection drops it).""",
        probed="progress for a token no request of the server carries; *sent*: the tokens it uses",
        citations=(
            _mcp(
                ("2026-07-28",),
                "Basic > Patterns > Progress > Behavior Requirements",
                "Progress notifications MUST only reference tokens that: … Were provided in an "
                "active request … Are associated with an in-progress operation",
            ),
            _mcp(
                _LEGACY,
                "Basic > Utilities > Progress > Behavior Requirements",
                "Progress notifications MUST only reference tokens that: … Were provided in an "
                "active request … Are associated with an in-progress operation",
            ),
            _mcp(
                ("2026-07-28",),
                "Basic > Patterns > Progress > Implementation Notes",
                "Progress notifications MUST stop after completion",
            ),
            _mcp(
                _LEGACY,
                "Basic > Utilities > Progress > Implementation Notes",
                "Progress notifications MUST stop after completion",
            ),
        ),
    ),
    _rule(
        "cancel.unknown-request",
        code=None,
        reply="none",
        level="MUST NOT",
        where=_cancel,
        summary="""``notifications/cancelled`` naming no request of its sender in flight (never
        sent, already answered, one of the receiver's own requests) or malformed is never
        answered (it is a notification) and SHOULD be ignored: nothing cancelled.""",
        probed="a cancel naming no request in flight (never sent, answered, malformed)",
        citations=(
            *_NO_RESPONSE,
            _mcp(
                ("2026-07-28",),
                "Basic > Patterns > Cancellation > Error Handling",
                "Invalid cancellation notifications SHOULD be ignored: … Unknown request IDs … "
                "Already completed requests … Malformed notifications",
            ),
            _mcp(
                _LEGACY,
                "Basic > Utilities > Cancellation > Error Handling",
                "Invalid cancellation notifications SHOULD be ignored: … Unknown request IDs … "
                "Already completed requests … Malformed notifications",
            ),
            _mcp(
                _LEGACY,
                "Basic > Utilities > Cancellation > Behavior Requirements",
                "Cancellation notifications MUST only reference requests that: … Were "
                "previously issued in the same direction … Are believed to still be "
                "in-progress",
            ),
        ),
    ),
    _rule(
        "cancel.initialize",
        code=None,
        reply="none",
        level="MUST NOT",
        where=_legacy(Role.SERVER),
        binds="sender",
        summary="""``initialize`` MUST NOT be cancelled: the client's duty. Our Connection
        ignores a cancel naming it and still answers the ``initialize``; a server may do the
        same or treat it as any cancel.""",
        probed="a cancel of ``initialize``: is ``initialize`` still answered",
        citations=(
            _mcp(
                _LEGACY,
                "Basic > Utilities > Cancellation > Behavior Requirements",
                "The `initialize` request MUST NOT be cancelled by clients",
            ),
        ),
    ),
    # ------------------------------------------------------------------ 2026-07-28
    _rule(
        "meta.missing",
        code=_PARAMS,
        reply="error",
        level="MUST",
        where=_stateless(Role.SERVER),
        summary="""2026-07-28: every request carries ``params._meta`` with
        ``io.modelcontextprotocol/protocolVersion`` (a string); without it: -32602.""",
        probed="no params, no ``_meta``, no version, a version that is not a string",
        citations=_META_REQUIRED,
    ),
    _rule(
        "meta.unsupported-version",
        code=int(ErrorCode.UNSUPPORTED_PROTOCOL_VERSION),
        reply="error",
        level="MUST",
        where=_stateless(Role.SERVER),
        summary="""2026-07-28: a request for a protocol version the server does not support gets
        -32022 with ``data.supported`` (the server's versions) and ``data.requested``.""",
        probed="an unknown version in ``_meta``; ``data.supported`` and ``data.requested`` checked",
        citations=(
            _mcp(
                ("2026-07-28",),
                "Basic > Versioning and Compatibility > Protocol Version Negotiation",
                "If the server does not implement the requested version (whether the version "
                "is unknown to the server, or is a known version the server has chosen not to "
                "support), it MUST respond with an `UnsupportedProtocolVersionError` listing "
                "the versions it does support:",
            ),
            _mcp(
                ("2026-07-28",),
                "Basic > Overview > Messages > Responses > Error Codes",
                "`-32022` | `UnsupportedProtocolVersion`",
            ),
        ),
    ),
    _rule(
        "meta.capabilities-missing",
        code=_PARAMS,
        reply="error",
        level="MUST",
        where=_stateless(Role.SERVER),
        summary="""2026-07-28: every request carries
        ``_meta["io.modelcontextprotocol/clientCapabilities"]`` (an object, ``{}`` for
        none); without it: -32602.""",
        probed="``_meta`` without ``clientCapabilities`` (or not an object)",
        citations=_META_REQUIRED,
    ),
    _rule(
        "stateless.server-request",
        code=None,
        reply="error",
        level="MUST NOT",
        where=_stateless(Role.CLIENT),
        binds="sender",
        summary="""2026-07-28: a server never sends requests (``ping``,
        ``sampling/createMessage``, ``roots/list`` and ``elicitation/create`` of older
        versions included): the server's duty. Our Connection, as a client, refuses one with
        an error (-32601); the text names no reply (it says clients do not send
        responses).""",
        probed="*sent*: a 2026-07-28 server sends no request",
        citations=(
            _mcp(
                ("2026-07-28",),
                "Basic > Patterns > Overview",
                "Servers MUST NOT initiate JSON-RPC requests, and clients do not send JSON-RPC "
                "responses.",
            ),
            _mcp(
                ("2026-07-28",),
                "Basic > Patterns > Multi Round-Trip Requests",
                "The previous pattern of server-initiated requests is no longer supported.",
            ),
        ),
    ),
    _rule(
        "input-required.retry",
        code=None,
        reply="result",
        level="implied",
        where=_input_required(Role.SERVER),
        summary="""2026-07-28: after an ``input_required`` answer, the client's retry (a new id,
        the same params, ``inputResponses`` under the server's keys and ``requestState``
        echoed) is a valid, independent request and is answered with a result (the final
        one, or another ``input_required``).""",
        probed="a tool named for it, its input requests answered and the request retried",
        citations=(
            _mcp(
                ("2026-07-28",),
                _MRTR,
                "Server determines it has sufficient information to complete the operation, "
                "and responds with the final result.",
            ),
            _mcp(
                ("2026-07-28",),
                _MRTR + " > Basic Workflow",
                "Note that the requests in each step are completely independent: the server "
                "processing the retry does not need any information beyond what is directly "
                "present in the retry request.",
            ),
            _mcp(
                ("2026-07-28",),
                _MRTR_CLIENT,
                "If an `InputRequiredResult` contains the `requestState` field, the client "
                "MUST echo back the exact value of that field when retrying the original "
                "request.",
            ),
            _mcp(
                ("2026-07-28",),
                _MRTR_CLIENT,
                "The JSON-RPC `id` MUST be different between the initial request and the "
                "retry, as they are independent requests.",
            ),
        ),
    ),
    _rule(
        "input-required.invalid",
        code=None,
        reply="none",
        level="MUST",
        where=_input_required(Role.CLIENT),
        binds="sender",
        summary="""2026-07-28: an ``input_required`` result for a method that cannot return one,
        with neither ``inputRequests`` nor ``requestState``, with a ``requestState`` that is
        not a string, or asking for an unknown kind of input, breaks the server's duties; the
        client takes it for a malformed response (never answered).""",
        probed="*sent*: the ``input_required`` results of that tool",
        citations=(
            _mcp(
                ("2026-07-28",),
                _MRTR_SERVER,
                "Servers MUST include at least one of `inputRequests` or `requestState` in "
                "every `InputRequiredResult` response.",
            ),
            _mcp(
                ("2026-07-28",),
                _MRTR + " > Supported Requests",
                "Servers MUST NOT send `InputRequiredResult` responses on any other client "
                "requests.",
            ),
            _mcp(
                ("2026-07-28",),
                _MRTR_SERVER,
                "`inputRequests` values are request objects that MUST be one of "
                "`ElicitRequest`, `CreateMessageRequest`, or `ListRootsRequest`",
            ),
            _mcp(
                ("2026-07-28",),
                "Basic > Overview > Messages > Responses > Result Responses > ResultType",
                "A `resultType` of any value unrecognized by the client MUST be considered "
                "invalid.",
            ),
        ),
    ),
    _rule(
        "input-required.undeclared-capability",
        code=None,
        reply="none",
        level="MUST NOT",
        where=_input_required(Role.CLIENT),
        binds="sender",
        summary="""2026-07-28: ``inputRequests`` may only ask for what the request's
        ``clientCapabilities`` declared (elicitation, sampling, roots): the server's duty. A
        result asking for more is taken for a malformed response (never answered).""",
        probed="*sent*: they ask only for what the request declared",
        citations=(
            _mcp(
                ("2026-07-28",),
                _MRTR_SERVER,
                "Servers MUST NOT send an `inputRequests` that the client has not declared "
                "support for in its capabilities.",
            ),
        ),
    ),
    _rule(
        "subscriptions.listen-ack-first",
        code=None,
        reply="none",
        level="MUST NOT",
        where=_listen,
        binds="sender",
        summary="""2026-07-28: nothing goes out on a ``subscriptions/listen`` stream before its
        ``notifications/subscriptions/acknowledged``: the server's duty. A stream
        notification before the acknowledgement is never answered (our Connection drops
        it).""",
        probed="*sent*: ``subscriptions/listen``, acknowledged before anything else",
        citations=(
            _mcp(
                ("2026-07-28",),
                "Basic > Patterns > Subscriptions > Acknowledgment",
                "The server MUST send `notifications/subscriptions/acknowledged` as the first "
                "message carrying the subscription's ID in `_meta` under "
                "`io.modelcontextprotocol/subscriptionId`, and MUST NOT send any notification "
                "on the subscription before it.",
            ),
        ),
    ),
    _rule(
        "subscriptions.not-opted-in",
        code=None,
        reply="none",
        level="MUST NOT",
        where=_listen,
        binds="sender",
        summary="""2026-07-28: a stream carries only the notifications the listen opted into and
        the acknowledgement granted, each naming its subscription: the server's duty. Any
        other (or naming no listen, or a resource not subscribed) is never answered (our
        Connection drops it).""",
        probed="*sent*: the acknowledgement grants only what was asked",
        citations=(
            _mcp(
                ("2026-07-28",),
                "Basic > Patterns > Subscriptions > Opening a Stream",
                "The server MUST NOT send notification types the client has not explicitly "
                "requested.",
            ),
            _mcp(
                ("2026-07-28",),
                _META,
                "On notifications delivered via a `subscriptions/listen` stream, the server "
                "MUST include `io.modelcontextprotocol/subscriptionId` in `_meta` so the "
                "client can correlate the notification with the originating subscription "
                "request.",
            ),
        ),
    ),
    _rule(
        "resources.updated-not-subscribed",
        code=None,
        reply="none",
        level="implied",
        where=_legacy_subscriptions,
        binds="sender",
        summary="""Initialize era: ``notifications/resources/updated`` only for a subscribed URI
        (or one under it): the server's duty, in a lower-case "should" of the schema. Any other
        is never answered (our Connection delivers it, or drops it under ``strict``).""",
        probed="*sent*: updates only for subscribed resources",
        citations=(
            _mcp(
                _LEGACY,
                "Schema > ResourceUpdatedNotification",
                "A notification from the server to the client, informing it that a resource "
                "has changed and may need to be read again. This should only be sent if the "
                "client previously sent a resources/subscribe request.",
            ),
            _mcp(
                ("2025-11-25",),
                "Schema > ResourceUpdatedNotificationParams",
                "The URI of the resource that has been updated. This might be a sub-resource "
                "of the one that the client actually subscribed to.",
            ),
            _mcp(
                ("2025-06-18", "2025-03-26", "2024-11-05"),
                "Schema > ResourceUpdatedNotification",
                "The URI of the resource that has been updated. This might be a sub-resource "
                "of the one that the client actually subscribed to.",
            ),
        ),
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
            _rule(
                "response.missing",
                code=None,
                reply="answer",
                level="MUST",
                where=_ALL_CASES,
                summary="""Every request gets exactly one answer (a result or an error), in time
                (the probe's --timeout) and before the peer exits; over HTTP, as a JSON body or
                an event stream. (The time limit is the probe's: the text asks for the answer,
                not its speed.)""",
                probed="(the probe's own) *sent*: every request answered in time, once",
                citations=(_RPC_REPLY, *_RESPONSES_ANSWER_REQUESTS),
            ),
            _rule(
                "envelope.batch-accepted",
                code=None,
                reply="result",
                level="MUST",
                where=frozenset(
                    (v, r) for v, spec in VERSIONS.items() if spec.batches for r in Role
                ),
                summary="""2025-03-26: a batch of requests MUST be accepted: each member is
                answered under its own id.""",
                probed="(the probe's own) a batch of two pings in 2025-03-26",
                citations=(
                    _mcp(
                        ("2025-03-26",),
                        "Basic > Overview > Messages > Batching",
                        "MCP implementations MAY support sending JSON-RPC batches, but MUST "
                        "support receiving JSON-RPC batches.",
                    ),
                    _rpc(
                        "6 Batch",
                        "A Response object SHOULD exist for each Request object, except that "
                        "there SHOULD NOT be any Response objects for notifications.",
                    ),
                    _RPC_REPLY,
                ),
            ),
            _rule(
                OTHER_RULE,
                code=None,
                reply="none",
                level="implied",
                where=_ALL_CASES,
                binds="sender",
                summary="""Anything else our Connection refuses in what the peer sent (a
                malformed initialize result, a log message below the level set under
                ``strict``, ...): the schema is the source of truth for every message.""",
                probed="(the probe's own) *sent*: anything else our Connection refuses",
                citations=(_SOURCE_OF_TRUTH,),
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
