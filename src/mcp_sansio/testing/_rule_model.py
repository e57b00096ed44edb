"""The model of the rule catalog: a :class:`Rule` and the :class:`Citation` of the sentence
that states it, the literal types of its fields, and the keyword of a sentence.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Final, Literal

import attrs

from mcp_sansio._state import Role
from mcp_sansio._versions import VERSIONS, Era

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
    cases: tuple[str, ...] = ()
    """The methods the sentence is about, where it is about some of a rule's messages only
    (``("notifications/message",)`` for the sentence on log messages); ``()`` for all of
    them. A case no probe message is (``"prompts/get arguments"``: the probe never breaks
    a prompt's arguments) keeps the sentence from deciding any finding's level."""

    def covers(self, version: str) -> bool:
        """Whether the sentence is in the text of ``version`` (JSON-RPC 2.0: always)."""
        return self.document == JSONRPC or version in self.versions

    def about(self, method: str | None) -> bool:
        """Whether the sentence is about a message of ``method`` (``None``: a finding whose
        method is not known, which only the sentences about every message decide)."""
        return not self.cases or method in self.cases


def _strongest(citations: tuple[Citation, ...], version: str, method: str | None) -> Level:
    """The strongest keyword of the ``citations`` in the text of ``version`` about a message
    of ``method``; ``"implied"`` when none has one."""
    found: Level = "implied"
    for citation in citations:
        if citation.covers(version) and citation.about(method):
            level = keyword_level(citation.text)
            if found == "implied" or (level != "implied" and _STRENGTH[level] > _STRENGTH[found]):
                found = level
    return found


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

    @property
    def scoped(self) -> bool:
        """Whether some sentence of the rule is about some of its messages only
        (:attr:`Citation.cases`): then the level of a finding depends on its method."""
        return any(c.cases for c in (*self.citations, *self.sent_citations))

    def level_for(self, version: str, method: str | None = None) -> Level:
        """How strongly the text of ``version`` states the rule for a message of ``method``
        (the receiver's duty): :attr:`level`, unless some cited sentence is about some
        methods only (:attr:`Citation.cases`); then the strongest keyword of the sentences
        in that text about ``method`` (``"implied"`` when none has one: ``params.invalid``
        for ``tools/call``, where no sentence says SHOULD). A method not known
        (``None``) gets :attr:`level`."""
        if self.level == "ours" or self.binds == "sender" or method is None:
            return self.level
        if not any(c.cases for c in self.citations):
            return self.level
        return _strongest(self.citations, version, method)

    def severity_for(self, version: str, method: str | None = None) -> Severity:
        """:attr:`severity`, by :meth:`level_for` (``version``, ``method``)."""
        if self.binds == "sender" or self.level == "ours":
            return "note"
        return _severity(self.level_for(version, method))

    def sent_level(self, version: str, method: str | None = None) -> Level:
        """How strongly the text of ``version`` forbids *sending* the offending message (of
        ``method``, when known): :attr:`level` when the cited sentences bind the sender;
        else the strongest keyword of the :attr:`sent_citations` that cover ``version``
        and are about ``method`` (:meth:`Citation.about`; a sentence about some methods
        only counts for those) (``"implied"`` when none does: the message breaks the
        schema or JSON-RPC, no sentence); ``"ours"`` stays ``"ours"``."""
        if self.level == "ours":
            return "ours"
        if self.binds == "sender":
            return self.level
        return _strongest(self.sent_citations, version, method)

    def sent_severity(self, version: str, method: str | None = None) -> Severity:
        """What a finding counts as against the side that *sent* the offending message (the
        probe's checks of what the peer itself sends): a ``"failure"`` for a MUST or MUST
        NOT of :meth:`sent_level`, a ``"warning"`` for a SHOULD, SHOULD NOT or implied one,
        a ``"note"`` for ``"ours"``. (``response.missing`` judges the receiver of a request
        even when found passively: use :attr:`severity` for it.)"""
        return _severity(self.sent_level(version, method))

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
