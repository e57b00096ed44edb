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

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

from mcp_sansio._state import Role
from mcp_sansio._versions import VERSIONS
from mcp_sansio.testing._rule_model import (
    Binds,
    Citation,
    Level,
    Reply,
    Rule,
    Severity,
    keyword_level,
)
from mcp_sansio.testing._rule_parts import (
    RESPONSES_ANSWER_REQUESTS,
    RPC_REPLY,
    SOURCE_OF_TRUTH,
    make_rule,
    mcp,
    rpc,
    stateless,
)
from mcp_sansio.testing._rules_envelope import CATALOG as ENVELOPE
from mcp_sansio.testing._rules_flow import CATALOG as FLOW
from mcp_sansio.testing._rules_lifecycle import CATALOG as LIFECYCLE
from mcp_sansio.testing._rules_methods import CATALOG as METHODS

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

#: The catalog: one table, the families' rows in order.
_CATALOG: Final = (
    *ENVELOPE,
    *LIFECYCLE,
    *METHODS,
    *FLOW,
)

_ALL_CASES: Final = frozenset((v, r) for v in VERSIONS for r in Role)

#: The rule of anything else our Connection refuses in what the peer sent.
OTHER_RULE: Final = "peer.invalid-message"

#: The probe's own rules, beside the catalog's.
PROBE_RULES: Final[Mapping[str, Rule]] = MappingProxyType(
    {
        r.name: r
        for r in (
            make_rule(
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
                citations=(RPC_REPLY, *RESPONSES_ANSWER_REQUESTS),
            ),
            make_rule(
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
                    mcp(
                        ("2025-03-26",),
                        "Basic > Overview > Messages > Batching",
                        "MCP implementations MAY support sending JSON-RPC batches, but MUST "
                        "support receiving JSON-RPC batches.",
                    ),
                    rpc(
                        "6 Batch",
                        "A Response object SHOULD exist for each Request object, except that "
                        "there SHOULD NOT be any Response objects for notifications.",
                    ),
                    RPC_REPLY,
                ),
            ),
            make_rule(
                "stateless.discover",
                code=None,
                reply="result",
                level="MUST",
                where=stateless(Role.SERVER),
                summary="""2026-07-28: a well-formed ``server/discover`` is answered with its
                result (the versions, capabilities and identity), at the start and later on
                the same connection (after a malformed request too): the server MUST
                implement it.""",
                probed="""(the probe's own) ``server/discover`` first, and again after a
                request without ``_meta``: each must get a result""",
                citations=(
                    mcp(
                        ("2026-07-28",),
                        "Server > Discovery",
                        "`server/discover` lets a client query a server's supported protocol "
                        "versions, capabilities, and identity before sending any other requests. "
                        "Servers MUST implement it.",
                    ),
                    mcp(
                        ("2026-07-28",),
                        "Schema > DiscoverRequest",
                        "A request from the client asking the server to advertise its "
                        "supported protocol versions, capabilities, and other metadata. "
                        "Servers MUST implement `server/discover`.",
                    ),
                ),
            ),
            make_rule(
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
                citations=(SOURCE_OF_TRUTH,),
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
