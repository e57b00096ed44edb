"""The probe's report: what each check found (:class:`Outcome`), one :class:`Row` per rule
with its verdict (:func:`charge` says how a broken rule counts), and the :class:`Report`
(text and JSON). Shared by the probe of a server and the probe of a client.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

import attrs

from mcp_sansio._state import Role
from mcp_sansio._versions import VERSIONS
from mcp_sansio.testing._rules import OTHER_RULE, PROBE_RULES, RULES, Citation, Rule, Severity
from mcp_sansio.testing._wire import (
    WireLine,
    collapse,
)


def all_rules() -> Mapping[str, Rule]:
    """Every rule the report has a row for: the catalog's, then the probe's own."""
    return {**RULES, **PROBE_RULES}


# ---------------------------------------------------------------------- outcomes


@attrs.frozen
class Outcome:
    """What one check found about one rule."""

    rule: str
    """The rule's name."""
    status: str
    """``"pass"``, ``"fail"`` or ``"n/a"``."""
    detail: str
    """What was tried and what happened (why it does not apply, for ``"n/a"``)."""
    version: str | None = None
    """The protocol version of the conversation."""
    exchange: tuple[WireLine, ...] = ()
    """A failure: the bytes each side sent."""
    phase: str = "checks"
    """``"versions"``, ``"checks"`` or ``"fuzz"``."""
    part: str = "receiver"
    """The peer's part in a failure: ``"receiver"`` (it answered the probe's message
    wrongly) or ``"sender"`` (what it sent of its own breaks the rule)."""
    method: str | None = None
    """The method of the message the finding is about, where the rule's level depends on
    it (:attr:`Rule.scoped`); ``None``: read from :attr:`detail` (``method_of``)."""


_TOKEN: Final = re.compile(r"[A-Za-z][\w/.-]*")


def method_of(o: Outcome, r: Rule) -> str | None:
    """The method a finding of ``r`` is about, for a rule whose level depends on it
    (:attr:`Rule.scoped`): :attr:`Outcome.method`, else the first method of the version's
    text named in the detail (a near miss's description starts with its method; our
    Connection names the method it refuses, quoted). ``None`` for any other rule, or
    when the detail names none."""
    if not r.scoped:
        return None
    if o.method is not None:
        return o.method
    spec = VERSIONS.get(o.version or "")
    methods = spec.methods if spec is not None else {}
    return next((t for t in _TOKEN.findall(o.detail) if t in methods), None)


def charge(
    r: Rule, part: str = "receiver", version: str | None = None, method: str | None = None
) -> Severity:
    """What a finding against ``r`` counts as, the peer having played ``part``:

    - ``"receiver"`` (it answered the probe's message wrongly): :attr:`Rule.severity`, a
      ``"failure"`` for a MUST or MUST NOT of the receiver's, a ``"warning"`` for a SHOULD,
      SHOULD NOT or implied one, a ``"note"`` when the duty was the sender's (the probe
      broke it on purpose: the peer's reaction is its own choice);
    - ``"sender"`` (what it sent of its own breaks the rule):
      :meth:`Rule.sent_severity` for ``version``, from the sentences that forbid sending
      it (a warning where none does: the schema or JSON-RPC is broken, no sentence).

    For a rule some of whose sentences are about some methods only (:attr:`Rule.scoped`),
    ``method`` (the finding's) picks the sentences that decide (:meth:`Rule.level_for`,
    :meth:`Rule.sent_level`). A rule of ``level="ours"`` (the text is silent) is only ever
    a note."""
    if _as_sender(r, part):
        return r.sent_severity(version or r.versions[0], method)
    return r.severity_for(version or r.versions[0], method)


def _as_sender(r: Rule, part: str) -> bool:
    """Whether a finding is judged on what the peer sent of its own (``response.missing``,
    found on what it did not send back, judges the receiver of a request)."""
    return part == "sender" and r.name != "response.missing"


_SEVERITY_RANK: Final[Mapping[str, int]] = {"failure": 0, "warning": 1, "note": 2}


@attrs.frozen
class Row:
    """One rule's line in the report."""

    rule: Rule
    """The rule."""
    status: str
    """The verdict: ``"pass"``; ``"fail"`` (a MUST or MUST NOT of the peer's broken, or,
    under ``strict``, any finding charged to it); ``"warn"`` (a SHOULD, SHOULD NOT or
    implied rule broken: a failure only under ``strict``); ``"note"`` (something the text
    does not charge to the peer: the duty was the probe's, or the text is silent); or
    ``"n/a"``."""
    detail: str
    """For a finding, what went wrong; else what was checked, or why it does not apply."""
    versions: tuple[str, ...] = ()
    """The versions the rule was checked in."""
    exchange: tuple[WireLine, ...] = ()
    """For a failure, the shortest exchange that shows it."""
    phase: str = ""
    """Where that finding was found (``"checks"``, ``"versions"`` or ``"fuzz"``)."""
    part: str = ""
    """The peer's part in the finding (``"receiver"`` or ``"sender"``; see
    :func:`charge`)."""
    method: str | None = None
    """The method of the finding's message, where the rule's level depends on it
    (``method_of``)."""
    version: str | None = None
    """The version of the finding shown (the first of :attr:`versions` when not given)."""

    @property
    def level(self) -> str:
        """The level that decided the finding (:func:`charge`): for what the peer sent of
        its own, that of the sentences forbidding the sending; else the rule's, for the
        finding's method (the rule's own level for a row with no finding)."""
        version = self.version or (self.versions[0] if self.versions else None)
        if not self.found or version is None:
            return self.rule.level
        if _as_sender(self.rule, self.part):
            return self.rule.sent_level(version, self.method)
        return self.rule.level_for(version, self.method)

    def cited(self) -> tuple[Citation, ...]:
        """The sentences a finding rests on: for what the peer sent, those forbidding the
        sending (when the rule has them), else the rule's; of those, the ones about the
        finding's method (:meth:`Citation.about`), when it is known."""
        sent = self.rule.sent_citations if self.part == "sender" else ()
        chosen = sent or self.rule.citations
        if self.method is None:
            return chosen
        return tuple(c for c in chosen if c.about(self.method))

    @property
    def found(self) -> bool:
        """Whether the peer did not do what the rule says (a failure, warning or note)."""
        return self.status in ("fail", "warn", "note")

    def to_json(self) -> dict[str, Any]:
        """The row as JSON."""
        out: dict[str, Any] = {
            "rule": self.rule.name,
            "level": self.rule.level,
            "binds": self.rule.binds,
            "status": self.status,
            "detail": self.detail,
            "versions": list(self.versions),
        }
        if self.found:
            out["phase"] = self.phase
            out["part"] = self.part
            out["level_charged"] = self.level
            if self.method is not None:
                out["method"] = self.method
            out["text"] = [
                {
                    "document": c.document,
                    "versions": list(c.versions),
                    "section": c.section,
                    "text": c.text,
                }
                for c in self.cited()
            ]
            out["exchange"] = [line.to_json() for line in collapse(self.exchange)]
        return out


@attrs.frozen
class Report:
    """The probe's findings."""

    target: str
    """What was probed."""
    transport: str
    """Its transport."""
    offered: tuple[str, ...]
    """The versions the server offers (of those probed), newest first."""
    answers: Mapping[str, str]
    """What the server answered to ``initialize`` for each version (its
    ``protocolVersion``, or ``"error"`` / ``"no answer"``), and to ``server/discover``."""
    rows: tuple[Row, ...]
    """One per rule."""
    seed: int
    """The fuzz phase's seed."""
    examples: int
    """Fuzz examples per version."""
    notes: tuple[str, ...] = ()
    """Anything else worth saying (a fuzz phase that could not run, ...)."""
    unusable: str | None = None
    """Why the peer cannot be used, a sentence naming it (``"the server offers none of the
    versions probed"``, ``"the server answered nothing within 15 s of starting"``, ...), or
    ``None`` when it can. An unusable peer gets no verdict: every row is *n/a*, and
    :attr:`notes` say what each conversation of the first phase saw."""
    evidence: tuple[WireLine, ...] = ()
    """For an unusable peer, the exchange of one of those conversations."""
    strict: bool = False
    """Whether warnings count as failures (``--strict``)."""

    @property
    def failures(self) -> tuple[Row, ...]:
        """The rows that failed (what makes the probe exit 1)."""
        return tuple(r for r in self.rows if r.status == "fail")

    @property
    def warnings(self) -> tuple[Row, ...]:
        """The rows that warn: SHOULD, SHOULD NOT and implied rules the peer broke."""
        return tuple(r for r in self.rows if r.status == "warn")

    @property
    def noted(self) -> tuple[Row, ...]:
        """The findings not charged to the peer."""
        return tuple(r for r in self.rows if r.status == "note")

    @property
    def ok(self) -> bool:
        """Whether the peer could be used and no rule failed."""
        return self.unusable is None and not self.failures

    def counts(self) -> dict[str, int]:
        """How many rows passed, failed, warned, were noted, did not apply."""
        out = {"pass": 0, "fail": 0, "warn": 0, "note": 0, "n/a": 0}
        for r in self.rows:
            out[r.status] += 1
        return out

    def to_json(self) -> dict[str, Any]:
        """The report as JSON (what ``--json`` prints)."""
        return {
            "target": self.target,
            "transport": self.transport,
            "offered": list(self.offered),
            "answers": dict(self.answers),
            "seed": self.seed,
            "examples": self.examples,
            "ok": self.ok,
            "strict": self.strict,
            "counts": self.counts(),
            "rules": [r.to_json() for r in self.rows],
            "notes": list(self.notes),
            "unusable": None
            if self.unusable is None
            else {
                "reason": self.unusable,
                "exchange": [line.to_json() for line in collapse(self.evidence)],
            },
        }

    def render(self) -> str:
        """The report as text."""
        out = [f"mcp-sansio probe: {self.target}"]
        out.append(
            "versions: "
            + (", ".join(f"{v} -> {a}" for v, a in self.answers.items()) or "no answer")
            + f"; offered: {', '.join(self.offered) or 'none'}"
        )
        if self.unusable is not None:
            out.extend(f"note: {n}" for n in self.notes)
            out.append("")
            out.append(f"Unusable: {self.unusable}.")
            out.append("No rule was checked.")
            if self.evidence:
                out.append("An exchange:")
                out.extend("    " + line.render() for line in collapse(self.evidence))
            return "\n".join(out) + "\n"
        out.append(f"fuzz: {self.examples} examples per version, seed {self.seed}")
        out.extend(f"note: {n}" for n in self.notes)
        out.append("")
        width = max(len(r.rule.name) for r in self.rows) + 2
        for r in self.rows:
            status = _LABELS[r.status]
            detail = r.detail if len(r.detail) <= 90 else r.detail[:87] + "..."
            out.append(f"{r.rule.name:<{width}}{status:<6}{detail}")
        counts = self.counts()
        out.append("")
        out.append(
            f"{counts['fail']} rules failed, {counts['pass']} passed, {counts['warn']} "
            f"warned, {counts['note']} noted, {counts['n/a']} not applicable"
            + (" (--strict: warnings fail)." if self.strict else ".")
        )
        for r in (*self.failures, *self.warnings, *self.noted):
            out.append("")
            versions = ", ".join(r.versions)
            label = _LABELS[r.status].upper()
            about = f"; {r.method}" if r.method is not None else ""
            out.append(f"{label} {r.rule.name} ({r.level}{about}; {versions}; {r.phase})")
            out.append(f"  rule: {r.rule.summary}")
            for c in r.cited():
                where = f"{c.document} {', '.join(c.versions)}".rstrip()
                out.append(f'  text ({where}, {c.section}): "{c.text}"')
            out.append(f"  found: {r.detail}")
            if r.status != "fail":
                out.append(f"  counts as: {_why_not_failed(r)}")
            out.extend("    " + line.render() for line in collapse(r.exchange))
        return "\n".join(out) + "\n"


_LABELS: Final[Mapping[str, str]] = {
    "pass": "pass",
    "fail": "FAIL",
    "warn": "warn",
    "note": "note",
    "n/a": "n/a",
}


def _why_not_failed(r: Row) -> str:
    """Why a finding is a warning or a note, not a failure."""
    if r.status == "warn":
        level = r.level
        if _as_sender(r.rule, r.part):
            said = "no sentence forbids sending it" if level == "implied" else level
            return f"a warning: {said}, not MUST (fails under --strict)"
        if level == "implied":
            said = "implied (no sentence about it has a keyword)"
            return f"a warning: {said}, not MUST (fails under --strict)"
        return f"a warning: the text says {level}, not MUST (fails under --strict)"
    if r.rule.level == "ours":
        return "a note: the text is silent; this is what our Connection does"
    return (
        "a note: the duty is the sender's (the probe broke it on purpose); the answer is"
        " the peer's choice"
    )


# ---------------------------------------------------------------------- the report


def report_rows(
    outcomes: Sequence[Outcome],
    probed: Sequence[str],
    peer: Role = Role.SERVER,
    strict: bool = False,
) -> tuple[Row, ...]:
    rules = all_rules()
    by_rule: dict[str, list[Outcome]] = {}
    for o in outcomes:
        by_rule.setdefault(o.rule, []).append(o)
    rows = []
    for name, r in rules.items():
        found = by_rule.get(name, [])
        fails = [o for o in found if o.status == "fail"]
        passes = [o for o in found if o.status == "pass"]
        decisive = fails or passes or found
        versions = tuple(sorted({o.version for o in decisive if o.version}, reverse=True))
        if fails:
            # The worst finding, and of those the shortest exchange that shows it.
            best = min(
                fails,
                key=lambda o: (
                    _SEVERITY_RANK[charge(r, o.part, o.version, method_of(o, r))],
                    len(o.exchange),
                    sum(x.size for x in o.exchange),
                ),
            )
            method = method_of(best, r)
            severity = charge(r, best.part, best.version, method)
            status = {"failure": "fail", "warning": "fail" if strict else "warn"}.get(
                severity, "note"
            )
            rows.append(
                Row(
                    r,
                    status,
                    best.detail,
                    versions,
                    best.exchange,
                    best.phase,
                    best.part,
                    method,
                    best.version,
                )
            )
        elif passes:
            rows.append(Row(r, "pass", passes[0].detail, versions))
        else:
            reason = next((o.detail for o in found if o.status == "n/a"), "")
            if not reason:
                reason = _why_not(r, probed, peer)
            rows.append(Row(r, "n/a", reason, versions))
    return tuple(rows)


# Rules judged on what the peer sends, by the peer's role: no complaint of our Connection
# in any conversation of a version they apply to is a pass.
_SENDER_RULES: Final[Mapping[Role, frozenset[str]]] = {
    Role.SERVER: frozenset(
        {
            "envelope.parse-error",
            "envelope.invalid-response",
            "response.unknown-id",
            "capability.undeclared-client-capability",
            "capability.undeclared-notification",
            "method.unknown",
            "stateless.server-request",
            "lifecycle.server-request-before-initialized",
            "resources.updated-not-subscribed",
            "response.missing",
            OTHER_RULE,
        }
    ),
    Role.CLIENT: frozenset(
        {
            "envelope.parse-error",
            "envelope.invalid-request",
            "envelope.invalid-response",
            "lifecycle.request-before-initialize",
            "lifecycle.second-initialize",
            "ids.duplicate-request-id",
            "response.unknown-id",
            "method.unknown",
            "params.invalid",
            "progress.not-increasing",
            "progress.unknown-token",
            "response.missing",
            OTHER_RULE,
        }
    ),
}


def passive_outcomes(
    outcomes: list[Outcome], probed: Sequence[str], conversations: int, peer: Role = Role.SERVER
) -> None:
    """The sender-side rules nothing was found against pass, for the versions probed."""
    failed = {o.rule for o in outcomes if o.status == "fail"}
    rules = all_rules()
    for name in sorted(_SENDER_RULES[peer]):
        r = rules.get(name)
        if r is None or name in failed:
            continue
        versions = [v for v in probed if r.applies(v, peer.peer)]
        if versions:
            outcomes.append(
                Outcome(
                    name,
                    "pass",
                    f"nothing the {peer.value} sent in {conversations} conversations broke it",
                    versions[0],
                )
            )


def _why_not(r: Rule, probed: Sequence[str], peer: Role = Role.SERVER) -> str:
    if not probed:
        return f"not checked: the {peer.value} cannot be used"
    if not any(r.applies(v, Role.SERVER) or r.applies(v, Role.CLIENT) for v in probed):
        return f"not a rule of {', '.join(probed)}"
    if not any(r.applies(v, peer) for v in probed):
        return f"a {peer.peer.value}'s rule; nothing the {peer.value} sent called for it"
    return "not exercised"


def unopened_notes(failures: Sequence[str]) -> list[str]:
    """The note on the conversations that could not be opened after the first phase."""
    if not failures:
        return []
    return [f"{len(failures)} conversations could not be opened (the first, {failures[0]})"]
