"""The probe: ``mcp-sansio probe``, and :func:`run_probe` for programs.

It tests an MCP server (we play the client) in three phases, and reports one row per rule.

1. **Versions.** ``server/discover`` (2026-07-28) and ``initialize`` for each version of
   the initialize era, each on a fresh peer: the versions the server *offers* are those it
   accepts (``supportedVersions``) or echoes.
2. **Checks.** Deterministic: for each offered era (its newest version, plus 2025-03-26
   for batches when offered), one fresh peer per check, each firing the canonical
   near-miss of one rule (:func:`~mcp_sansio.testing._machine.shot_builders`), plus the
   checks that need more than one message: the lifecycle before and around the handshake,
   an unsupported version in ``initialize``, cancelling ``initialize``, an oversized line,
   batches, progress, an ``input_required`` round trip, a ``subscriptions/listen`` stream.
   Everything the server sends is judged by our own :class:`~mcp_sansio.Connection`.
3. **Fuzz.** :class:`~mcp_sansio.testing.PeerMachine` for each offered era's newest
   version, ``examples`` examples each, seeded: the same seed gives the same messages and
   verdicts (as long as the server is deterministic and shrinking ends within its bound,
   :data:`SHRINK_SECONDS`; an exchange shows lines in the order they crossed the wire, so
   the server's may interleave differently with the probe's). A failure is shrunk by
   hypothesis to a short exchange.

The report: each rule of :data:`mcp_sansio.testing.RULES` (and the probe's own,
:data:`PROBE_RULES`) passes, fails or does not apply, and each failure comes with the
shortest exchange that shows it, as the bytes each side sent.

Where the probe calls tools: only for the progress check (a tool whose name says
``progress`` or ``long-running``, with no required argument) and the ``input_required``
check (a tool whose name says ``input_required``, 2026-07-28): a probe of a server whose
tools have side effects should keep that in mind. The fuzz phase never calls tools.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import json
import random
import re
import sys
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Final, TextIO

import attrs
import orjson
from hypothesis import HealthCheck, Phase, Verbosity, settings
from hypothesis import seed as hypothesis_seed
from hypothesis.stateful import run_state_machine_as_test

from mcp_sansio._errors import ErrorCode
from mcp_sansio._events import ErrorResponse, InputRequired, Response
from mcp_sansio._state import Role
from mcp_sansio._versions import ALL_VERSIONS, VERSIONS, Era, capability_met
from mcp_sansio.testing._machine import (
    DEFAULT_STARTUP,
    DEFAULT_TIMEOUT,
    Conversation,
    Demand,
    PeerMachine,
    PeerViolation,
    SessionRefused,
    Shot,
    WireLine,
    canonical,
    collapse,
    refusal,
    sampled_message,
    shot_builders,
)
from mcp_sansio.testing._rules import OTHER_RULE, PROBE_RULES, RULES, Rule, Severity
from mcp_sansio.testing._targets import StdioTarget, Target, TargetError

__all__ = [
    "DEFAULT_EXAMPLES",
    "DEFAULT_JOBS",
    "MAX_SHRINKS",
    "OVERSIZE",
    "PROBE_RULES",
    "SHRINK_SECONDS",
    "STEPS",
    "Outcome",
    "Report",
    "Row",
    "all_rules",
    "fuzz",
    "fuzz_phase",
    "probe_command",
    "run_probe",
]

#: Fuzz examples per probed version, unless told otherwise.
DEFAULT_EXAMPLES: Final = 20
#: Checks run at once (each on its own peer).
DEFAULT_JOBS: Final = 4
#: The size of the oversized line (4 MiB and 1 KiB: above the usual limit of 4 MiB).
OVERSIZE: Final = 4 * 1024 * 1024 + 1024
#: The bound on hypothesis's shrinking of the fuzz failures of one version, in seconds.
SHRINK_SECONDS: Final = 60
#: The bound on hypothesis's successful shrinks of one fuzz failure.
MAX_SHRINKS: Final = 200
#: Steps per fuzz example.
STEPS: Final = 8


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


def charge(r: Rule, part: str = "receiver", version: str | None = None) -> Severity:
    """What a finding against ``r`` counts as, the peer having played ``part``:

    - ``"receiver"`` (it answered the probe's message wrongly): :attr:`Rule.severity`, a
      ``"failure"`` for a MUST or MUST NOT of the receiver's, a ``"warning"`` for a SHOULD,
      SHOULD NOT or implied one, a ``"note"`` when the duty was the sender's (the probe
      broke it on purpose: the peer's reaction is its own choice);
    - ``"sender"`` (what it sent of its own breaks the rule):
      :meth:`Rule.sent_severity` for ``version``, from the sentences that forbid sending
      it (a warning where none does: the schema or JSON-RPC is broken, no sentence).

    A rule of ``level="ours"`` (the text is silent) is only ever a note."""
    if _as_sender(r, part):
        return r.sent_severity(version or r.versions[0])
    return r.severity


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
            cited = self.rule.sent_citations if self.part == "sender" else ()
            out["text"] = [
                {
                    "document": c.document,
                    "versions": list(c.versions),
                    "section": c.section,
                    "text": c.text,
                }
                for c in cited or self.rule.citations
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
            level = _level_charged(r)
            out.append(f"{label} {r.rule.name} ({level}; {versions}; {r.phase})")
            out.append(f"  rule: {r.rule.summary}")
            cited = r.rule.sent_citations if r.part == "sender" else ()
            for c in cited or r.rule.citations:
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


def _level_charged(r: Row) -> str:
    """The level that decided a finding: for what the peer sent of its own, that of the
    sentences forbidding the sending (see :func:`charge`), else the rule's."""
    if _as_sender(r.rule, r.part) and r.versions:
        return r.rule.sent_level(r.versions[0])
    return r.rule.level


def _why_not_failed(r: Row) -> str:
    """Why a finding is a warning or a note, not a failure."""
    if r.status == "warn":
        level = _level_charged(r)
        if _as_sender(r.rule, r.part):
            said = "no sentence forbids sending it" if level == "implied" else level
            return f"a warning: {said}, not MUST (fails under --strict)"
        return f"a warning: the text says {level}, not MUST (fails under --strict)"
    if r.rule.level == "ours":
        return "a note: the text is silent; this is what our Connection does"
    return (
        "a note: the duty is the sender's (the probe broke it on purpose); the answer is"
        " the peer's choice"
    )


# ---------------------------------------------------------------------- progress


class _Progress:
    """A progress bar on a stream (a line per phase when it is not a terminal)."""

    def __init__(self, stream: TextIO | None) -> None:
        self.stream = stream
        self.tty = bool(stream is not None and getattr(stream, "isatty", lambda: False)())
        self._lock = threading.Lock()
        self._label = ""
        self._total = 0
        self._done = 0

    def start(self, label: str, total: int) -> None:
        with self._lock:
            self._label, self._total, self._done = label, total, 0
        self._draw(force=True)

    def step(self, count: int = 1) -> None:
        with self._lock:
            self._done += count
        self._draw()

    def finish(self, text: str = "") -> None:
        if self.stream is None:
            return
        with self._lock:
            if self.tty:
                self.stream.write("\r\x1b[K")
            self.stream.write(f"{self._label}: {text or 'done'}\n")
            self.stream.flush()

    def _draw(self, force: bool = False) -> None:
        if self.stream is None or not (self.tty or force):
            return
        if not self.tty:
            return
        with self._lock:
            total = max(self._total, 1)
            done = min(self._done, total)
            filled = 30 * done // total
            bar = "#" * filled + "." * (30 - filled)
            extra = f" (+{self._done - total})" if self._done > total else ""
            self.stream.write(f"\r{self._label} [{bar}] {done}/{self._total}{extra}")
            self.stream.flush()


# ---------------------------------------------------------------------- the checks


class _Check:
    """One check's outcomes, and its conversations."""

    def __init__(self, probe: _Probe, version: str) -> None:
        self.probe = probe
        self.version = version
        self.outcomes: list[Outcome] = []

    @contextlib.contextmanager
    def talk(
        self,
        version: str | None = None,
        *,
        capabilities: Mapping[str, Any] | None = None,
        answer_version: str | None = None,
    ) -> Iterator[Conversation]:
        conv = Conversation(
            self.probe.target,
            version or self.version,
            timeout=self.probe.timeout,
            startup=self.probe.startup,
            capabilities=capabilities,
            legacy_versions=self.probe.legacy,
            peer=self.probe.peer,
            answer_version=answer_version,
            cancel=self.probe.stop,
        )
        try:
            yield conv
        finally:
            conv.close()
            for v in conv.violations:
                self.outcomes.append(
                    Outcome(v.rule, "fail", v.message, conv.version, v.exchange, part=v.part)
                )

    def passed(self, rule_name: str, detail: str) -> None:
        self.outcomes.append(Outcome(rule_name, "pass", detail, self.version))

    def failed(self, rule_name: str, detail: str, conv: Conversation) -> None:
        self.outcomes.append(Outcome(rule_name, "fail", detail, conv.version, tuple(conv.lines)))

    def not_applicable(self, rule_name: str, detail: str) -> None:
        self.outcomes.append(Outcome(rule_name, "n/a", detail, self.version))

    def fire(self, conv: Conversation, shot: Shot) -> bool:
        """Fire a shot; record its outcome. ``True`` when it passed. Where the rule accepts
        any error (the text names no code), the detail says which one came."""
        problem = conv.shoot(shot)
        if problem is None:
            due = shot.expect
            any_error = due.reply == "error" and not due.codes
            self.passed(shot.rule, f"{shot.why}: {conv.last_answer}" if any_error else shot.why)
            return True
        self.failed(shot.rule, f"{shot.why}: {problem}", conv)
        # (A malformed envelope is its own MUST: envelope.* says it, once.)
        request = any(rid is not None for rid in shot.expect.ids)
        request = request and not shot.rule.startswith("envelope.")
        if problem == "no answer" and shot.expect.reply != "none" and request:
            # Whatever the rule's own level, a request left unanswered breaks JSON-RPC's
            # MUST ("When a rpc call is made, the Server MUST reply with a Response").
            self.failed("response.missing", f"{shot.why}: the request got no answer", conv)
        return False


CheckFn = Callable[[_Check], None]


def _asked_order(asked: str) -> tuple[bool, int]:
    """``server/discover`` first, then ``initialize VERSION``, newest first."""
    version = asked.rsplit(" ", 1)[-1]
    return asked != "server/discover", ALL_VERSIONS.index(version) if version in VERSIONS else 0


class _Probe:
    peer = Role.SERVER
    """The role of the peer under test."""

    def __init__(
        self,
        target: Target,
        *,
        versions: Sequence[str],
        timeout: float,
        startup: float,
        jobs: int,
        progress: _Progress,
    ) -> None:
        self.target = target
        self.versions = tuple(versions)
        self.timeout = timeout
        self.startup = startup
        self.jobs = max(1, jobs)
        self.progress = progress
        self.legacy = tuple(v for v in self.versions if VERSIONS[v].era is Era.INITIALIZE)
        self.modern = tuple(v for v in self.versions if VERSIONS[v].era is Era.STATELESS)
        self.answers: dict[str, str] = {}
        self.offered: list[str] = []
        self.caps: dict[str, Mapping[str, Any]] = {}
        self.speaks_modern = False
        self.stop = threading.Event()
        """Set when the probe is interrupted: every conversation's waits end at once."""
        self.heard = False
        """Whether any fresh peer of the first phase has sent anything (or closed)."""
        self.gave_up = ""
        """Why the first phase was given up (no fresh peer answered at all), or ``""``."""
        self.trials: list[tuple[str, str, tuple[WireLine, ...]]] = []
        """The first phase's conversations that found no version: what was asked, why
        nothing came of it, the exchange."""
        self.unopened: list[str] = []
        """The conversations of later phases that could not be opened (TargetError)."""
        self._phases = 0

    # -------------------------------------------------------------- running checks

    def run(self, checks: Sequence[tuple[str, CheckFn]], label: str) -> list[Outcome]:
        """Run ``checks``, at most :attr:`jobs` at once; their outcomes, in order. A peer
        that cannot be opened (:class:`TargetError`) ends the probe in the first phase,
        and is noted in later ones. Interrupted, it ends every conversation in progress
        (they are shut down) before it re-raises."""
        self.progress.start(label, len(checks))
        results: list[list[Outcome]] = [[] for _ in checks]
        first = not self._phases
        self._phases += 1

        def one(index: int) -> None:
            version, fn = checks[index]
            check = _Check(self, version)
            try:
                if not self.stop.is_set():
                    fn(check)
            except TargetError as exc:
                if first:
                    raise
                self.unopened.append(f"{getattr(fn, '__name__', 'a check')}: {exc}")
            finally:
                results[index] = check.outcomes
                self.progress.step()

        serial = self.jobs == 1 or len(checks) == 1
        pool = None if serial else concurrent.futures.ThreadPoolExecutor(self.jobs)
        try:
            if pool is None:
                for i in range(len(checks)):
                    one(i)
            else:
                for future in [pool.submit(one, i) for i in range(len(checks))]:
                    future.result()
        except BaseException:
            self.stop.set()  # (before the pool waits for the conversations in progress)
            raise
        finally:
            if pool is not None:
                pool.shutdown(wait=True, cancel_futures=True)
        self.progress.finish(f"{len(checks)} conversations")
        return [o for found in results for o in found]

    # -------------------------------------------------------------- versions

    def versions_phase(self) -> list[Outcome]:
        checks: list[tuple[str, CheckFn]] = []
        # server/discover always: whether the server also speaks 2026-07-28 matters to
        # the checks of the initialize era even when that version is not probed.
        for version in self.modern or tuple(v for v in ALL_VERSIONS if v not in self.legacy)[:1]:
            checks.append((version, self._discover))
        for version in self.legacy:
            checks.append((version, self._initialize))
        outcomes = self.run(checks, "versions")
        offered = [v for v in self.versions if v in self.offered]
        self.offered = sorted(set(offered), reverse=True)
        return [attrs.evolve(o, phase="versions") for o in outcomes]

    def unusable(self) -> tuple[str, list[str], tuple[WireLine, ...]] | None:
        """After the first phase: ``None`` when the peer offers a version; else why it
        cannot be used, a note per kind of failure (what was asked: what happened), and
        the exchange of one conversation that shows it."""
        if self.offered:
            return None
        who = self.peer.value
        if self.gave_up:
            reason = f"the {who} {self.gave_up}"
        elif self.peer is Role.CLIENT:
            reason = f"the {who} did not open a session"
        else:
            reason = f"the {who} offers none of the versions probed"
        # In the order asked: server/discover, then initialize, newest version first.
        trials = sorted(self.trials, key=lambda t: _asked_order(t[0]))
        whys: dict[str, list[str]] = {}
        for asked, why, _ in trials:
            whys.setdefault(why, []).append(asked)
        if len(whys) == 1 and not self.gave_up:
            why = next(iter(whys))
            reason = why if why.startswith(reason) else f"{reason}: {why}"
        notes = [f"{', '.join(asked)}: {why}" for why, asked in whys.items()]
        # The exchange of the newest initialize asked, else of server/discover.
        shown = sorted(trials, key=lambda t: t[0] == "server/discover")
        return reason, notes, shown[0][2] if shown else ()

    def _first_answer(self, conv: Conversation, answer: Any) -> None:
        """Note what a fresh peer's first answer says about the whole probe: once one
        has said anything, later silences are their own; a first peer that says nothing
        within the startup bound ends the phase (the others are not waited for)."""
        if conv.heard:
            self.heard = True
        elif answer is None and not conv.cut and not self.heard:
            self.gave_up = (
                f"answered nothing within {max(self.timeout, self.startup):g} s of starting "
                "(the startup bound, --startup)"
            )

    def _trial(self, asked: str, conv: Conversation, answer: Any) -> tuple[str, str]:
        """What ``answer`` (to ``asked``, the first request of ``conv``) comes to: the text
        for :attr:`answers` and, when it offers nothing, why (kept in :attr:`trials`)."""
        if isinstance(answer, Response):
            if asked == "server/discover":
                supported = answer.result.get("supportedVersions")
                listed = supported if isinstance(supported, list) else []
                text = ", ".join(map(str, listed)) or "[]"
                return text, f"supportedVersions: {text}"
            text = str(answer.result.get("protocolVersion"))
            return text, f"it answered with version {text}"
        if conv.peer_lines and conv.echoes == conv.peer_lines:
            return "an echo", "it sends back what it is sent (an echo, not an MCP server)"
        if conv.cut:
            return "cut off", conv.cut
        if isinstance(answer, ErrorResponse):
            text, why = f"error {answer.code}", f"error {answer.code} {answer.message!r}"
        elif conv.channel.closed:
            # The last note is how the peer ended (an exit status), when the transport says.
            ended = next((ln.data.decode() for ln in reversed(conv.lines) if ln.side == "note"), "")
            text, why = "no answer", f"it closed without answering ({ended})"
        else:
            text, why = "no answer", conv.dead or "no answer"
        refused = [v for v in conv.violations if v.rule != "response.missing"]
        if refused:
            why += f"; what it sent was refused: {refused[0].message}"
        said = conv.channel.stderr.strip()[-300:]
        if said and answer is None:
            why += f"; its stderr ends: {said!r}"
        return text, why

    def _record_trial(self, asked: str, conv: Conversation, answer: Any, offered: bool) -> str:
        """:meth:`_trial`, kept when nothing was offered; the text for :attr:`answers`."""
        text, why = self._trial(asked, conv, answer)
        if not offered:
            self.trials.append((asked, why, tuple(conv.lines)))
        return text

    def _discover(self, check: _Check) -> None:
        if self.gave_up:
            self.answers["server/discover"] = "not asked"
            return
        offered = False
        with check.talk() as conv:
            answer = conv.request("server/discover")
            self._first_answer(conv, answer)
            if isinstance(answer, Response):
                supported = answer.result.get("supportedVersions")
                supported = supported if isinstance(supported, list) else []
                caps = answer.result.get("capabilities")
                if supported:
                    self.speaks_modern = True
                if check.version in supported:
                    offered = True
                    self.offered.append(check.version)
                    self.caps[check.version] = caps if isinstance(caps, dict) else {}
        self.answers["server/discover"] = self._record_trial(
            "server/discover", conv, answer, offered
        )

    def _initialize(self, check: _Check) -> None:
        version = check.version
        if self.gave_up:
            self.answers[version] = "not asked"
            return
        offered = False
        with check.talk() as conv:
            answer = conv.request("initialize", conv.initialize_params(version))
            self._first_answer(conv, answer)
            if isinstance(answer, Response):
                chosen = answer.result.get("protocolVersion")
                if chosen == version:
                    offered = True
                    self.offered.append(version)
                    caps = answer.result.get("capabilities")
                    self.caps[version] = caps if isinstance(caps, dict) else {}
                conv.notify("notifications/initialized")
                conv.barrier()
        self.answers[version] = self._record_trial(f"initialize {version}", conv, answer, offered)

    # -------------------------------------------------------------- the plan

    def plan(self) -> list[tuple[str, CheckFn]]:
        legacy = [v for v in self.offered if VERSIONS[v].era is Era.INITIALIZE]
        modern = [v for v in self.offered if VERSIONS[v].era is Era.STATELESS]
        checks: list[tuple[str, CheckFn]] = []
        main_versions = ([legacy[0]] if legacy else []) + ([modern[0]] if modern else [])
        for version in main_versions:
            for name, builder in shot_builders().items():
                rule_ = RULES.get(name)
                if rule_ is not None and not rule_.applies(version, Role.SERVER):
                    continue
                checks.append((version, _shot_check(name, builder)))
            checks.append((version, _oversized))
            checks.append((version, _progress))
        if legacy:
            first = legacy[0]
            checks.append((first, self._before_initialize))
            checks.append((first, _handshake))
            checks.append((first, _cancel_initialize))
            checks.append((first, self._initialize_version))
            if "2025-03-26" in legacy:
                checks.append(("2025-03-26", _batch_accepted))
                if first != "2025-03-26":  # else the shots above covered them
                    for name in ("envelope.empty-batch", "envelope.batch-mixed"):
                        checks.append(("2025-03-26", _shot_check(name, shot_builders()[name])))
        elif modern and self.legacy:
            checks.append((modern[0], self._initialize_stateless))
        if legacy and modern:
            checks.append((modern[0], _also_legacy))
        if modern:
            checks.append((modern[0], _input_required))
            checks.append((modern[0], _listen))
        return checks

    # -------------------------------------------------------------- checks needing the probe

    def _before_initialize(self, check: _Check) -> None:
        caps = self.caps.get(check.version, {})
        method = next(
            (m for m, gate in _LISTS if capability_met(caps, gate)), "completion/complete"
        )
        due = refusal("lifecycle.request-before-initialize", ())
        codes = due.codes
        if codes and self.speaks_modern:
            # A server of both eras may read it as a 2026-07-28 request without _meta
            # (over HTTP: without the standard headers).
            codes += (int(ErrorCode.INVALID_PARAMS),)
            if self.target.transport == "http":
                codes += (int(ErrorCode.HEADER_MISMATCH),)
        with check.talk() as conv:
            rid = conv.fresh_id()
            check.fire(
                conv,
                Shot(
                    "lifecycle.request-before-initialize",
                    orjson.dumps({"jsonrpc": "2.0", "id": rid, "method": method}),
                    Demand("error", codes, (rid,)),
                    f"{method} before initialize",
                ),
            )

    def _initialize_version(self, check: _Check) -> None:
        offered = [v for v in self.offered if VERSIONS[v].era is Era.INITIALIZE]
        with check.talk() as conv:
            rid = conv.fresh_id()
            params = conv.initialize_params("1999-01-01")

            def echoed(answer: Mapping[str, Any]) -> str | None:
                result = answer["result"]
                chosen = result.get("protocolVersion") if isinstance(result, dict) else None
                if chosen not in offered:
                    return (
                        f"the result names {chosen!r}, not a version the server offers "
                        f"({', '.join(offered)})"
                    )
                return None

            check.fire(
                conv,
                Shot(
                    "lifecycle.initialize-version",
                    orjson.dumps(
                        {"jsonrpc": "2.0", "id": rid, "method": "initialize", "params": params}
                    ),
                    Demand("result", (), (rid,), echoed),
                    "initialize asking for version 1999-01-01",
                ),
            )

    def _initialize_stateless(self, check: _Check) -> None:
        with check.talk() as conv:
            rid = conv.fresh_id()
            params = conv.initialize_params(self.legacy[0])
            check.fire(
                conv,
                Shot(
                    "lifecycle.initialize-stateless",
                    orjson.dumps(
                        {"jsonrpc": "2.0", "id": rid, "method": "initialize", "params": params}
                    ),
                    Demand("error", (), (rid,)),
                    f"initialize ({self.legacy[0]}) to a server of 2026-07-28 only",
                ),
            )


_LISTS: Final = (
    ("tools/list", ("tools",)),
    ("prompts/list", ("prompts",)),
    ("resources/list", ("resources",)),
)


def _shot_check(
    name: str,
    builder: Callable[[Conversation, Any], Shot | str],
    capabilities: Mapping[str, Any] | None = None,
) -> CheckFn:
    """The check that fires ``builder``'s canonical near miss in a fresh session (we
    declare ``capabilities``, or the default)."""

    def run(check: _Check) -> None:
        with check.talk(capabilities=capabilities) as conv:
            if not conv.open_session():
                check.not_applicable(name, "the session could not be opened")
                return
            conv.drain(0.0)
            shot = builder(conv, canonical)
            if isinstance(shot, str):
                check.not_applicable(name, shot)
                return
            check.fire(conv, shot)

    run.__name__ = f"check {name}"
    return run


def _also_legacy(check: _Check) -> None:
    check.not_applicable(
        "lifecycle.initialize-stateless", "the server speaks the initialize era too"
    )


def _handshake(check: _Check) -> None:
    """The initialize window, between the initialize result and notifications/initialized:
    a notification gets no reply, and a request (a list the server offers) is served: the
    client may send it once initialize is answered; only the server waits for
    notifications/initialized."""
    window = "lifecycle.request-in-initialize-window"
    with check.talk() as conv:
        answer = conv.request("initialize", conv.initialize_params(check.version))
        if not isinstance(answer, Response):
            check.not_applicable(window, "initialize failed")
            return
        caps = conv.mirror.server_capabilities or {}
        check.fire(
            conv,
            Shot(
                "lifecycle.notification-before-initialized",
                orjson.dumps({"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}),
                Demand("none"),
                "a notification before notifications/initialized",
            ),
        )
        method = next((m for m, gate in _LISTS if capability_met(caps, gate)), None)
        if method is None:
            check.not_applicable(window, "the server offers no list to ask for")
            return
        rid = conv.fresh_id()
        check.fire(
            conv,
            Shot(
                window,
                orjson.dumps({"jsonrpc": "2.0", "id": rid, "method": method}),
                Demand("result", (), (rid,)),
                f"{method} after the initialize result, before notifications/initialized",
            ),
        )


def _cancel_initialize(check: _Check) -> None:
    with check.talk() as conv:
        rid = conv.request("initialize", conv.initialize_params(check.version), wait=False)
        cancel = orjson.dumps(
            {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": rid}}
        )
        mark = conv.send_raw(cancel)
        # Not response.missing when none comes: the receiver of a cancel SHOULD "Not send a
        # response for the cancelled request" (the probe broke the client's MUST NOT).
        answer = conv.wait_answer(rid, blame=False)
        stray = conv.raw_answers(mark, ())
        if not isinstance(answer, Response):
            check.failed(
                "cancel.initialize",
                "initialize, then a cancel naming it: initialize was not answered with a result",
                conv,
            )
        elif stray:
            check.failed("cancel.initialize", "the cancel was answered", conv)
        else:
            check.passed("cancel.initialize", "initialize, then a cancel naming it")


def _oversized(check: _Check) -> None:
    with check.talk() as conv:
        if not conv.open_session():
            check.not_applicable("envelope.oversized-message", "the session could not be opened")
            return
        rid = conv.fresh_id()
        method = "server/discover" if conv.era is Era.STATELESS else "ping"
        params: dict[str, Any] = (
            {"_meta": conv.meta()} if conv.era is Era.STATELESS else {"_meta": {}}
        )
        message = {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}
        head = len(orjson.dumps(message))
        params["_meta"]["x-probe-padding"] = "a" * max(0, OVERSIZE - head - 20)
        # Our rule is -32600 (the framer's); a server with a larger limit answers normally.
        check.fire(
            conv,
            Shot(
                "envelope.oversized-message",
                orjson.dumps(message),
                Demand("answer", (int(ErrorCode.INVALID_REQUEST),), (rid, None)),
                f"a {OVERSIZE}-byte {method}",
            ),
        )


def _batch_accepted(check: _Check) -> None:
    with check.talk() as conv:
        if not conv.open_session() or conv.negotiated != "2025-03-26":
            check.not_applicable("envelope.batch-accepted", "no 2025-03-26 session")
            return
        ids = [conv.fresh_id(), conv.fresh_id()]
        batch = [{"jsonrpc": "2.0", "id": rid, "method": "ping"} for rid in ids]
        mark = conv.send_raw(orjson.dumps(batch), ids)
        conv._pump(lambda: len(conv.raw_answers(mark, ids)) >= 2, None)
        conv.barrier()
        got = conv.raw_answers(mark, ids)
        conv.forget_raw(ids)
        answered = {m.get("id") for m in got if "result" in m}
        if answered == set(ids) and len(got) == 2:
            check.passed("envelope.batch-accepted", "a batch of two pings")
        else:
            what = "; ".join(json.dumps(m)[:120] for m in got) or "nothing"
            check.failed(
                "envelope.batch-accepted", f"a batch of two pings: answered with {what}", conv
            )


_PROGRESS_TOOL: Final = re.compile(r"progress|long.?running", re.IGNORECASE)
_INPUT_TOOL: Final = re.compile(r"input.?required|mrtr", re.IGNORECASE)


def _tools(conv: Conversation, pattern: re.Pattern[str]) -> list[dict[str, Any]]:
    """The server's tools whose name matches and that need no argument."""
    answer = conv.request("tools/list")
    if not isinstance(answer, Response):
        return []
    tools = answer.result.get("tools")
    found = []
    for tool in tools if isinstance(tools, list) else []:
        if not isinstance(tool, dict) or not isinstance(tool.get("name"), str):
            continue
        schema = tool.get("inputSchema")
        required = schema.get("required") if isinstance(schema, dict) else None
        if pattern.search(tool["name"]) and not required:
            found.append(tool)
    return sorted(found, key=lambda t: str(t["name"]))


def _short_arguments(tool: Mapping[str, Any]) -> dict[str, Any]:
    """Small values for a long-running tool's duration and step count, when it has them."""
    schema = tool.get("inputSchema")
    props = schema.get("properties") if isinstance(schema, dict) else None
    arguments: dict[str, Any] = {}
    for name, spec in (props or {}).items():
        kind = spec.get("type") if isinstance(spec, dict) else None
        if kind in ("number", "integer"):
            if "duration" in name.lower():
                arguments[name] = 1
            elif "step" in name.lower():
                arguments[name] = 3
    return arguments


def _progress(check: _Check) -> None:
    with check.talk() as conv:
        if not conv.open_session():
            check.not_applicable("progress.not-increasing", "the session could not be opened")
            return
        caps = conv.server_capabilities or {}
        if not capability_met(caps, ("tools",)):
            check.not_applicable("progress.not-increasing", "the server has no tools")
            return
        tools = _tools(conv, _PROGRESS_TOOL)
        if not tools:
            check.not_applicable(
                "progress.not-increasing", "no tool named for progress without arguments"
            )
            return
        tool = tools[0]
        token = "probe-progress"
        params = {
            "name": tool["name"],
            "arguments": _short_arguments(tool),
            "_meta": {"progressToken": token},
        }
        before = len(conv.notifications)
        answer = conv.wait_answer(
            conv.request("tools/call", params, wait=False), max(conv.timeout, 15.0)
        )
        seen = [
            n
            for n in conv.notifications[before:]
            if n.method == "notifications/progress"
            and (n.params or {}).get("progressToken") == token
        ]
        if answer is None:
            return  # a response.missing violation is recorded
        if seen:
            check.passed(
                "progress.not-increasing", f"{len(seen)} progress notifications of {tool['name']}"
            )
            check.passed("progress.unknown-token", f"progress of {tool['name']} named our token")
        else:
            check.not_applicable("progress.not-increasing", f"{tool['name']} sent no progress")


def _accept_form(params: Mapping[str, Any]) -> dict[str, Any]:
    schema = params.get("requestedSchema")
    if params.get("mode") == "url" or not isinstance(schema, dict):
        return {"action": "accept"}
    content = {
        name: spec["default"]
        for name, spec in (schema.get("properties") or {}).items()
        if isinstance(spec, dict) and "default" in spec
    }
    for name in schema.get("required") or ():
        spec = (schema.get("properties") or {}).get(name) or {}
        kind = spec.get("type") if isinstance(spec, dict) else None
        if name not in content:
            content[name] = {"number": 1, "integer": 1, "boolean": True}.get(
                str(kind), spec.get("enum", ["probe"])[0] if isinstance(spec, dict) else "probe"
            )
    return {"action": "accept", "content": content}


def _input_responses(requests: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, request in requests.items():
        method = request.get("method") if isinstance(request, dict) else None
        params = request.get("params") if isinstance(request, dict) else None
        if method == "elicitation/create":
            out[key] = _accept_form(params if isinstance(params, dict) else {})
        elif method == "sampling/createMessage":
            out[key] = sampled_message()
        elif method == "roots/list":
            out[key] = {"roots": []}
    return out


_ALL_CLIENT_CAPS: Final[Mapping[str, Any]] = {
    "elicitation": {"form": {}, "url": {}},
    "sampling": {},
    "roots": {},
}


def _input_required(check: _Check) -> None:
    name = "input-required.retry"
    with check.talk(capabilities=_ALL_CLIENT_CAPS) as conv:
        if not conv.open_session():
            check.not_applicable(name, "the session could not be opened")
            return
        if not capability_met(conv.server_capabilities or {}, ("tools",)):
            check.not_applicable(name, "the server has no tools")
            return
        tools = _tools(conv, _INPUT_TOOL)
        if not tools:
            check.not_applicable(name, "no tool named for input_required without arguments")
            return
        tool = tools[0]
        answer = conv.request("tools/call", {"name": tool["name"], "arguments": {}})
        rounds = 0
        while isinstance(answer, InputRequired) and rounds < 5:
            rounds += 1
            responses = _input_responses(answer.input_requests)
            retry = conv.mirror.retry_request(answer, responses)
            answer = conv.request(retry.method, retry.params)
        if rounds:
            shown = f"{tool['name']}: {rounds} input_required answers"
            check.passed("input-required.invalid", f"{shown}, each well-formed")
            check.passed(
                "input-required.undeclared-capability", f"{shown}, within our capabilities"
            )
        if isinstance(answer, Response) and rounds:
            check.passed(name, f"{tool['name']}: {rounds} input_required rounds, then a result")
        elif isinstance(answer, ErrorResponse) and rounds:
            check.failed(
                name,
                f"{tool['name']}: the retry was refused (error {answer.code} {answer.message!r})",
                conv,
            )
        elif isinstance(answer, InputRequired):
            check.not_applicable(name, f"{tool['name']}: still input_required after 5 rounds")
        elif answer is not None:
            check.not_applicable(name, f"{tool['name']} answered without input_required")


def _listen(check: _Check) -> None:
    name = "subscriptions.listen-ack-first"
    with check.talk() as conv:
        if not conv.open_session():
            check.not_applicable(name, "the session could not be opened")
            return
        caps = conv.server_capabilities or {}
        flags = {
            flag: True
            for flag, gate in (
                ("toolsListChanged", ("tools", "listChanged")),
                ("promptsListChanged", ("prompts", "listChanged")),
                ("resourcesListChanged", ("resources", "listChanged")),
            )
            if capability_met(caps, gate)
        }
        before = len(conv.notifications)
        rid = conv.request("subscriptions/listen", {"notifications": flags}, wait=False)
        if rid is None:
            return

        def acked() -> bool:
            return any(
                n.method == "notifications/subscriptions/acknowledged"
                for n in conv.notifications[before:]
            ) or bool(conv.answers(rid))

        conv._pump(acked, None)
        got = list(conv.notifications[before:])
        answers = conv.answers(rid)
        if got and got[0].method == "notifications/subscriptions/acknowledged":
            check.passed(name, f"subscriptions/listen {json.dumps(flags)}: acknowledged first")
            check.passed("subscriptions.not-opted-in", "the acknowledgement granted what was asked")
        elif answers and isinstance(answers[0], ErrorResponse):
            check.not_applicable(name, f"subscriptions/listen refused (error {answers[0].code})")
            return
        elif not conv.violations:
            check.failed(
                name,
                "subscriptions/listen: no acknowledgement within "
                f"{conv.timeout:g} s" + (" (answered instead)" if answers else ""),
                conv,
            )
        if not conv.answers(rid):
            conv.cancel(rid)
        conv.barrier()


# ---------------------------------------------------------------------- fuzz


@contextlib.contextmanager
def _shrink_bound() -> Iterator[None]:
    """Bound hypothesis's shrinking (its engine's documented, monkeypatchable limits)."""
    from hypothesis.internal.conjecture import engine

    saved = (engine.MAX_SHRINKS, engine.MAX_SHRINKING_SECONDS)
    engine.MAX_SHRINKS, engine.MAX_SHRINKING_SECONDS = MAX_SHRINKS, SHRINK_SECONDS
    try:
        yield
    finally:
        engine.MAX_SHRINKS, engine.MAX_SHRINKING_SECONDS = saved


def _leaves(exc: BaseException) -> list[BaseException]:
    inner = getattr(exc, "exceptions", None)
    if isinstance(inner, (list, tuple)):
        return [leaf for e in inner for leaf in _leaves(e)]
    return [exc]


_FUZZ_LOCK: Final = threading.Lock()


def fuzz(
    target: Target,
    version: str,
    *,
    examples: int,
    seed_value: int,
    timeout: float,
    startup: float = DEFAULT_STARTUP,
    legacy_versions: Sequence[str] = (),
    peer_versions: Sequence[str] = (),
    rules: Sequence[str] | None = None,
    progress: _Progress | None = None,
    peer: Role = Role.SERVER,
) -> tuple[list[Outcome], list[str]]:
    """Run :class:`PeerMachine` for ``version`` (near-misses of ``rules`` only, when
    given) against peers of role ``peer``: the outcomes (one failure per rule broken,
    shrunk) and notes."""
    base = PeerMachine.against(
        target,
        version=version,
        timeout=timeout,
        startup=startup,
        legacy_versions=legacy_versions,
        peer_versions=peer_versions,
        rules=rules,
        peer=peer,
    )

    class Counted(base):  # type: ignore[valid-type, misc]
        def __init__(self) -> None:
            if progress is not None:
                progress.step()
            super().__init__()

    machine = hypothesis_seed(seed_value)(Counted)
    options = settings(
        max_examples=examples,
        stateful_step_count=STEPS,
        deadline=None,
        database=None,
        derandomize=False,
        phases=(Phase.generate, Phase.shrink),
        report_multiple_bugs=True,
        suppress_health_check=list(HealthCheck),
        verbosity=Verbosity.quiet,
        print_blob=False,
    )
    outcomes: list[Outcome] = []
    notes: list[str] = []
    with _FUZZ_LOCK, _shrink_bound():
        try:
            run_state_machine_as_test(machine, settings=options)
        except BaseException as exc:  # sorted below; interrupts re-raised
            if isinstance(exc, (KeyboardInterrupt, SystemExit)):
                raise
            for leaf in _leaves(exc):
                if isinstance(leaf, PeerViolation):
                    v = leaf.violation
                    outcomes.append(
                        Outcome(v.rule, "fail", v.message, version, v.exchange, "fuzz", v.part)
                    )
                elif isinstance(leaf, (SessionRefused, TargetError)):
                    notes.append(f"fuzz {version}: {leaf}")
                else:
                    notes.append(f"fuzz {version}: {type(leaf).__name__}: {leaf}")
    return outcomes, notes


def fuzz_phase(
    bar: _Progress, notes: list[str], *args: Any, examples: int, **options: Any
) -> list[Outcome]:
    """:func:`fuzz` (same arguments) with a progress bar of its own; its notes go to
    ``notes``; returns its outcomes."""
    bar.start(f"fuzz {args[1]}", examples)
    found, more = fuzz(*args, examples=examples, progress=bar, **options)
    notes += more
    rules_hit = sorted({o.rule for o in found})
    bar.finish("violations: " + ", ".join(rules_hit) if rules_hit else "no violation")
    return found


# ---------------------------------------------------------------------- the report


def _rows(
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
                    _SEVERITY_RANK[charge(r, o.part, o.version)],
                    len(o.exchange),
                    sum(x.size for x in o.exchange),
                ),
            )
            severity = charge(r, best.part, best.version)
            status = {"failure": "fail", "warning": "fail" if strict else "warn"}.get(
                severity, "note"
            )
            rows.append(Row(r, status, best.detail, versions, best.exchange, best.phase, best.part))
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


def _passive(
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


def run_probe(
    target: Target | None = None,
    *,
    versions: Sequence[str] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    startup: float = DEFAULT_STARTUP,
    examples: int = DEFAULT_EXAMPLES,
    seed: int | None = None,
    jobs: int = DEFAULT_JOBS,
    progress: TextIO | None = None,
    strict: bool = False,
) -> Report:
    """Probe the server ``target`` (default: the example server over stdio,
    ``python -m mcp_sansio serve``) and return the :class:`Report`.

    :param versions: the versions to probe (default all).
    :param timeout: seconds the server has for each answer.
    :param startup: seconds a fresh server has for its first answer, at least.
    :param examples: fuzz examples per version (0: no fuzz phase).
    :param seed: the fuzz phase's seed (default: a random one, given in the report).
    :param jobs: checks run at once.
    :param progress: where the progress bar goes (e.g. ``sys.stderr``), or nowhere.
    :param strict: count warnings (SHOULD, SHOULD NOT and implied rules) as failures.
    :raises TargetError: the target cannot be used at all.

    A server that offers none of the versions probed (it never answers, echoes what it is
    sent, writes what is not JSON-RPC, refuses every version, ...) gets no verdict: the
    report says why (:attr:`Report.unusable`). A server that answers nothing at all within
    ``max(timeout, startup)`` of its start is given up on once, not once per version.
    """
    if target is None:
        target = StdioTarget([sys.executable, "-m", "mcp_sansio", "serve"])
    chosen = tuple(versions or ALL_VERSIONS)
    seed_value = random.SystemRandom().randrange(2**32) if seed is None else seed
    bar = _Progress(progress)
    probe = _Probe(
        target, versions=chosen, timeout=timeout, startup=startup, jobs=jobs, progress=bar
    )
    outcomes = probe.versions_phase()
    conversations = len(chosen)
    notes: list[str] = []
    unusable = probe.unusable()
    if unusable is None:
        plan = probe.plan()
        conversations += len(plan)
        outcomes += probe.run(plan, "checks")
        legacy = [v for v in probe.offered if VERSIONS[v].era is Era.INITIALIZE]
        modern = [v for v in probe.offered if VERSIONS[v].era is Era.STATELESS]
        fuzzed = ([legacy[0]] if legacy else []) + ([modern[0]] if modern else [])
        # The fuzz phase looks for what the checks did not find: the near-misses of the
        # rules that already failed are not fired again (their failures are minimal).
        failed = {o.rule for o in outcomes if o.status == "fail"}
        rules = sorted((set(shot_builders()) | set(RULES)) - failed)
        for version in fuzzed if examples > 0 else ():
            outcomes += fuzz_phase(
                bar,
                notes,
                target,
                version,
                examples=examples,
                seed_value=seed_value,
                timeout=timeout,
                startup=startup,
                legacy_versions=probe.legacy,
                peer_versions=probe.offered,
                rules=rules,
            )
        _passive(outcomes, probe.offered, conversations)
        notes += _unopened(probe.unopened)
    else:
        # No verdict on a server that cannot be used: what it did is in the notes.
        outcomes = []
        notes += unusable[1]
    return Report(
        target=target.describe(),
        transport=target.transport,
        offered=tuple(probe.offered),
        answers=dict(sorted(probe.answers.items(), key=lambda kv: kv[0], reverse=True)),
        rows=_rows(outcomes, probe.offered, strict=strict),
        seed=seed_value,
        examples=examples if probe.offered else 0,
        notes=tuple(notes),
        unusable=None if unusable is None else unusable[0],
        evidence=() if unusable is None else unusable[2],
        strict=strict,
    )


def _unopened(failures: Sequence[str]) -> list[str]:
    """The note on the conversations that could not be opened after the first phase."""
    if not failures:
        return []
    return [f"{len(failures)} conversations could not be opened (the first, {failures[0]})"]


def probe_command(
    *,
    http: str | None,
    command: Sequence[str] | None,
    json_output: bool,
    examples: int,
    seed: int | None,
    timeout: float,
    startup: float = DEFAULT_STARTUP,
    versions: Sequence[str] | None,
    jobs: int,
    out: TextIO,
    err: TextIO,
    client: bool = False,
    strict: bool = False,
) -> int:
    """``mcp-sansio probe``: run the probe, print the report (JSON with ``json_output``).
    Returns the exit status: 0 when no rule failed (warnings and notes do not fail,
    warnings do under ``strict``), 1 when one did, 2 when the target
    cannot be used (it cannot be started or reached, or it offers no version: then the
    report says why), 130 when interrupted (the conversations in progress are shut down
    first; no report). With ``client``, ``command`` is a client to probe (see
    :func:`~mcp_sansio.testing.run_client_probe`)."""
    try:
        from mcp_sansio.testing._targets import ClientTarget, HttpTarget

        target: Target
        if client:
            from mcp_sansio.testing._client_probe import run_client_probe

            report = run_client_probe(
                ClientTarget(command or (), startup=startup),
                timeout=timeout,
                startup=startup,
                examples=examples,
                seed=seed,
                jobs=jobs,
                progress=err,
                strict=strict,
            )
        else:
            if http is not None:
                target = HttpTarget(http)
            elif command:
                target = StdioTarget(command)
            else:
                target = StdioTarget([sys.executable, "-m", "mcp_sansio", "serve"])
            report = run_probe(
                target,
                versions=versions,
                timeout=timeout,
                startup=startup,
                examples=examples,
                seed=seed,
                jobs=jobs,
                progress=err,
                strict=strict,
            )
    except TargetError as exc:
        err.write(f"mcp-sansio probe: {exc}\n")
        return 2
    except KeyboardInterrupt:
        err.write("\nmcp-sansio probe: interrupted\n")
        return 130
    if json_output:
        out.write(json.dumps(report.to_json(), indent=2, ensure_ascii=False) + "\n")
    else:
        out.write(report.render())
    if report.unusable is not None:
        err.write(f"mcp-sansio probe: unusable: {report.unusable}\n")
        return 2
    return 0 if report.ok else 1
